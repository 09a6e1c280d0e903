//! File systems made on small images are made like the ones on a disk. mke2fs takes its
//! usage type `small` below 512 MiB (1 KiB blocks, an inode per 4 KiB): `iolab matrix` with a
//! 256 MiB image compared an ext4 of 1 KiB blocks against xfs, not the ext4 of the user's
//! disk. Each file system is made on a loop device over an image in the test's own temp dir
//! and read back with its own tool (dumpe2fs -h, xfs_info, btrfs inspect-internal
//! dump-super), its layout compared with the one the tool gives a volume of 512 MiB or more.

mod common;
mod matrix_support;

use std::path::Path;
use std::process::Command;

use matrix_support::*;

const MIB: u64 = 1 << 20;

/// A fresh file system of `fs` made by iolab on a loop device over a `size`-byte image; `read`
/// gets the device and returns what the test compares.
fn made_on<T>(fs: &str, size: u64, read: impl FnOnce(&Path) -> T) -> T {
    let t = iolab::fs::types::lookup(fs).unwrap();
    let dir = tempfile::Builder::new()
        .prefix("small-fs-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let img = dir.path().join(format!("{fs}.img"));
    std::fs::File::create(&img).unwrap().set_len(size).unwrap();
    let lo = common::Loop::writable(&img);
    let dev = Path::new(&lo.0);
    iolab::fs::mkfs::format(t, None, &[], Some(size), dev).unwrap();
    read(dev)
}

fn tool_output(prog: &str, args: &[&str], dev: &Path) -> String {
    let out = Command::new(prog).args(args).arg(dev).output().unwrap();
    assert!(out.status.success(), "{prog} {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The value after `key` on the line that starts with it (`Block size:   4096`).
fn field(text: &str, key: &str) -> String {
    text.lines()
        .find_map(|l| l.strip_prefix(key))
        .unwrap_or_else(|| panic!("no {key} in:\n{text}"))
        .trim()
        .to_string()
}

/// `key=value` words of a tool's output, in order (xfs_info's `bsize=4096`).
fn words_with<'a>(text: &'a str, key: &str) -> Vec<&'a str> {
    text.split([' ', ',', '\n', '\t'])
        .filter_map(|w| w.strip_prefix(key))
        .collect()
}

/// ext2/3/4: block size, bytes per inode and inode size as dumpe2fs reads them.
fn ext_layout(dev: &Path, size: u64) -> (u64, u64, String) {
    let d = tool_output("dumpe2fs", &["-h"], dev);
    let block: u64 = field(&d, "Block size:").parse().unwrap();
    let inodes: u64 = field(&d, "Inode count:").parse().unwrap();
    (block, size / inodes, field(&d, "Inode size:"))
}

#[test]
fn ext_on_a_small_image_has_the_layout_of_a_disk() {
    let test = "ext_on_a_small_image_has_the_layout_of_a_disk";
    if !can_run(test) || !common::tool_or_skip(test, "mkfs.ext4", "e2fsprogs") {
        return;
    }
    for fs in ["ext2", "ext3", "ext4"] {
        // 512 MiB is where mke2fs leaves its `small` type: the layout of a disk up to 4 TiB.
        let disk = made_on(fs, 512 * MIB, |d| ext_layout(d, 512 * MIB));
        assert_eq!(disk.0, 4096, "{fs} at 512 MiB: {disk:?}");
        assert_eq!(disk.1, 16384, "{fs} at 512 MiB: {disk:?}");
        for size in [64 * MIB, 256 * MIB] {
            let small = made_on(fs, size, |d| ext_layout(d, size));
            assert_eq!(
                small,
                disk,
                "{fs} on {} MiB: (block size, bytes per inode, inode size)",
                size / MIB
            );
        }
    }
}

/// mkfs.xfs refuses less than 300 MiB (the matrix skips it there, naming the size); from
/// there on it makes what it makes on a disk: 4 KiB blocks, 512 B inodes, a 64 MiB log.
#[test]
fn xfs_at_its_smallest_has_the_layout_of_a_disk() {
    let test = "xfs_at_its_smallest_has_the_layout_of_a_disk";
    if !can_run(test)
        || !common::tool_or_skip(test, "mkfs.xfs", "xfsprogs")
        || !common::tool_or_skip(test, "xfs_info", "xfsprogs")
    {
        return;
    }
    let layout = |size| {
        made_on("xfs", size, |d| {
            let i = tool_output("xfs_info", &[], d);
            let log = i
                .lines()
                .find(|l| l.starts_with("log"))
                .unwrap()
                .to_string();
            (
                words_with(&i, "bsize=").join(" "),
                words_with(&i, "isize=").join(" "),
                words_with(&log, "blocks=").join(" "),
            )
        })
    };
    let small = layout(300 * MIB);
    assert_eq!(small, layout(4096 * MIB));
    assert_eq!(small.0, "4096 4096 4096", "data, naming and log blocks");
}

/// btrfs-progs 6.x makes no mixed block groups on a small volume (older ones did below
/// 1 GiB): the sector and node sizes and the features are those of a disk.
#[test]
fn btrfs_on_a_small_image_has_the_layout_of_a_disk() {
    let test = "btrfs_on_a_small_image_has_the_layout_of_a_disk";
    if !can_run(test)
        || !common::tool_or_skip(test, "mkfs.btrfs", "btrfs-progs")
        || !common::tool_or_skip(test, "btrfs", "btrfs-progs")
    {
        return;
    }
    let layout = |size| {
        made_on("btrfs", size, |d| {
            let s = tool_output("btrfs", &["inspect-internal", "dump-super"], d);
            let flags = s
                .lines()
                .skip_while(|l| !l.starts_with("incompat_flags"))
                .skip(1)
                .take_while(|l| l.starts_with(' ') || l.starts_with('\t'))
                .map(|l| l.trim().trim_matches(['(', ')', '|', ' ']).to_string())
                .collect::<Vec<_>>();
            (field(&s, "sectorsize"), field(&s, "nodesize"), flags)
        })
    };
    let small = layout(128 * MIB);
    assert!(
        !small.2.iter().any(|f| f.contains("MIXED_GROUPS")),
        "{small:?}"
    );
    assert_eq!(small, layout(2048 * MIB));
}

/// The matrix shows the option it gave (`mkfs_command`) and reads the 4 KiB block back; xfs,
/// which cannot be made that small, is a skipped row that names its minimum.
#[test]
fn the_matrix_makes_a_small_ext4_like_a_disk_and_says_how() {
    let test = "the_matrix_makes_a_small_ext4_like_a_disk_and_says_how";
    if !can_run(test) || !common::tool_or_skip(test, "mkfs.ext4", "e2fsprogs") {
        return;
    }
    let _g = EXCLUSIVE.read().unwrap();
    let area = Area::new();
    let args = area.args(&[
        "--fs",
        "ext4,xfs",
        "--image-size",
        "256M",
        "--repeat",
        "1",
        "--setup-only",
    ]);
    let (doc, _) = area.run_expecting(&args, 0);
    let ext4 = &doc.configurations[0];
    assert_eq!(ext4.status, "ok", "{ext4:?}");
    assert_eq!(ext4.cluster_bytes_actual, Some(4096), "{ext4:?}");
    let cmd = ext4.mkfs_command.as_deref().unwrap_or("");
    assert!(cmd.contains(" -T default "), "{cmd}");
    let xfs = &doc.configurations[1];
    assert_eq!(xfs.status, "skipped", "{xfs:?}");
    assert_eq!(
        xfs.reason.as_deref(),
        Some("xfs needs at least 300.0 MiB, the image is 256.0 MiB (--image-size 300MiB or more)")
    );
}

/// Every type's `min_size` is one its mkfs accepts: the matrix skips a smaller image with a
/// reason that names the size, and must not let through one that mkfs then refuses (128 MiB
/// to mkfs.nilfs2, which needs 4 KiB more: a failed row instead of a skipped one).
#[test]
fn every_type_can_be_made_at_its_smallest_size() {
    let test = "every_type_can_be_made_at_its_smallest_size";
    if !can_run(test) {
        return;
    }
    for t in iolab::fs::types::FS_TYPES {
        let Some(prog) = t.mkfs else { continue };
        // hfsprogs left Debian (no package in Debian 12, so none in CI): mkfs.hfsplus is
        // checked where it is installed, and said loudly where it is not, without failing a
        // strict run that could not install it.
        if prog == "mkfs.hfsplus" && !common::on_path(prog) {
            // Past the test harness's capture, like a skip's line.
            let line = format!("{test}: hfsplus not checked: mkfs.hfsplus is not installed\n");
            let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
            continue;
        }
        let package = common::scratch::package_of(prog).unwrap_or("its package");
        if !common::tool_or_skip(test, prog, package) {
            continue;
        }
        made_on(t.name, t.min_size, |_| ());
    }
}

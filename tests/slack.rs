//! `iolab slack` against real file systems: a deterministic tree is scanned, copied onto
//! scratch ext4 (1 KiB, 4 KiB, bigalloc 16 KiB, inline_data), xfs (1 KiB, 4 KiB), ntfs-3g
//! (1 KiB, 4 KiB), exFAT and FAT32, and the predicted allocation must match st_blocks and
//! the df delta within 2 %. Root only; skips loudly otherwise.

mod common;
#[path = "slack_support/mod.rs"]
mod support;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use common::scratch_or_skip;
use iolab::analysis::slack::rules::{FileAlloc, FsRules};
use iolab::analysis::slack::utf16_len;
use iolab::model::slack::UnitRow;
use support::slack_json;

/// Deterministic sizes and names: tiny (incl. empty and around the NTFS/ext4 inline
/// thresholds), small, medium and a few large files in 40 directories.
fn make_tree(root: &Path, files: usize) {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for d in 0..40 {
        std::fs::create_dir_all(root.join(format!("dir{d:02}"))).unwrap();
    }
    let data = vec![0x5Au8; 512 << 10];
    for i in 0..files {
        let r = next();
        let size = match r % 100 {
            0..=2 => 0,
            3..=24 => r as usize % 1000,
            25..=64 => 1000 + (r >> 8) as usize % 15_000,
            65..=94 => 16_000 + (r >> 8) as usize % 80_000,
            _ => 96_000 + (r >> 8) as usize % 300_000,
        };
        let name_len = 4 + (r >> 40) as usize % 36;
        let name: String = format!("f{i:05}{}", "n".repeat(name_len))
            .chars()
            .take(name_len.max(6))
            .collect();
        let path = root.join(format!("dir{:02}", i % 40)).join(name);
        std::fs::write(path, &data[..size]).unwrap();
    }
}

fn copy_tree(src: &Path, dst: &Path) {
    std::fs::create_dir(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &to);
        } else {
            std::fs::write(&to, std::fs::read(e.path()).unwrap()).unwrap();
        }
    }
}

/// (sum of st_blocks x 512 of regular files, the files' (size, name length, blocks)).
fn st_blocks(root: &Path, acc: &mut Vec<(u64, u64, u64)>) -> u64 {
    let mut sum = 0;
    for e in std::fs::read_dir(root).unwrap() {
        let e = e.unwrap();
        let md = std::fs::symlink_metadata(e.path()).unwrap();
        if md.is_dir() {
            sum += st_blocks(&e.path(), acc);
        } else {
            sum += md.blocks() * 512;
            acc.push((md.len(), utf16_len(&e.file_name()), md.blocks() * 512));
        }
    }
    sum
}

fn bytes_used(mnt: &Path) -> u64 {
    let st = nix::sys::statvfs::statvfs(mnt).unwrap();
    (st.blocks() - st.blocks_free()) as u64 * st.fragment_size() as u64
}

fn within(what: &str, predicted: u64, actual: u64, pct: f64) {
    let diff = (predicted as f64 - actual as f64) / actual as f64 * 100.0;
    eprintln!("  {what}: predicted {predicted}, actual {actual}, {diff:+.2} %");
    assert!(
        diff.abs() <= pct,
        "{what}: predicted {predicted} vs actual {actual} ({diff:+.2} %, limit {pct} %)"
    );
}

/// Scan a generated tree, copy it onto `fs_type` made with `mkfs`, compare at `unit`.
fn validate(test: &str, fs_type: &str, size: u64, mkfs: &[&str], rules_name: &str, unit: u64) {
    validate_with(test, fs_type, size, mkfs, rules_name, unit, true)
}

/// `cluster_st_blocks = false`: the driver reports ceil(size / 512) sectors whatever it
/// allocates (fusefat), so only the df delta can be compared.
fn validate_with(
    test: &str,
    fs_type: &str,
    size: u64,
    mkfs: &[&str],
    rules_name: &str,
    unit: u64,
    cluster_st_blocks: bool,
) {
    let Some(fs) = scratch_or_skip(test, fs_type, size, mkfs, "") else {
        return;
    };
    let src = tempfile::tempdir().unwrap();
    make_tree(src.path(), 1500);
    let r = slack_json(&[src.path().to_str().unwrap(), "--fs", rules_name]);
    let row: &UnitRow = r.units.iter().find(|u| u.unit_bytes == unit).unwrap();
    assert!(row.supported, "{rules_name} at {unit}: {:?}", row.note);

    let mnt = fs.path().to_path_buf();
    nix::unistd::sync();
    let before = bytes_used(&mnt);
    let dst: PathBuf = mnt.join("t");
    copy_tree(src.path(), &dst);
    nix::unistd::sync();
    let after = bytes_used(&mnt);

    let mut files = Vec::new();
    let reported = st_blocks(&dst, &mut files);
    assert_eq!(files.len() as u64, r.scan.files);
    // Resident files report ceil(size / 512) sectors while holding no cluster: add that
    // convention to the prediction, and check each file's side of the threshold.
    let rules = FsRules::parse(rules_name, None, None, None).unwrap();
    let mut resident_report = 0;
    for &(size, name_len, blocks) in &files {
        if !cluster_st_blocks {
            continue;
        }
        if rules.file(size, name_len, unit) == FileAlloc::Resident {
            resident_report += size.div_ceil(512) * 512;
            assert!(
                blocks < unit || unit <= 1024,
                "{size} B resident but {blocks} B"
            );
        } else if size > 0 {
            assert_eq!(
                blocks,
                size.div_ceil(unit) * unit,
                "{size} B, name {name_len}"
            );
        }
    }
    eprintln!(
        "{test}: {} files, {} dirs, unit {unit}, {} resident",
        r.scan.files, r.scan.dirs, row.resident_files
    );
    if cluster_st_blocks {
        within(
            "st_blocks of files",
            row.file_allocated_bytes + resident_report,
            reported,
            2.0,
        );
    }
    within(
        "df delta (files + dirs + metadata)",
        row.allocated_bytes + row.metadata_bytes,
        after - before,
        2.0,
    );
}

#[test]
fn ext4_1k_matches_prediction() {
    validate(
        "ext4_1k_matches_prediction",
        "ext4",
        256 << 20,
        &["-b", "1024"],
        "ext4",
        1024,
    );
}

#[test]
fn ext4_4k_matches_prediction() {
    validate(
        "ext4_4k_matches_prediction",
        "ext4",
        256 << 20,
        &["-b", "4096"],
        "ext4",
        4096,
    );
}

#[test]
fn ext4_bigalloc_matches_prediction() {
    validate(
        "ext4_bigalloc_matches_prediction",
        "ext4",
        256 << 20,
        &["-b", "4096", "-O", "bigalloc", "-C", "16384"],
        "ext4",
        16384,
    );
}

#[test]
fn xfs_1k_matches_prediction() {
    validate(
        "xfs_1k_matches_prediction",
        "xfs",
        320 << 20,
        &["-b", "size=1024"],
        "xfs",
        1024,
    );
}

#[test]
fn xfs_4k_matches_prediction() {
    validate(
        "xfs_4k_matches_prediction",
        "xfs",
        320 << 20,
        &["-b", "size=4096"],
        "xfs",
        4096,
    );
}

#[test]
fn ntfs_1k_matches_prediction() {
    validate(
        "ntfs_1k_matches_prediction",
        "ntfs",
        256 << 20,
        &["-c", "1024"],
        "ntfs-3g",
        1024,
    );
}

#[test]
fn ntfs_4k_matches_prediction() {
    validate(
        "ntfs_4k_matches_prediction",
        "ntfs",
        256 << 20,
        &["-c", "4096"],
        "ntfs-3g",
        4096,
    );
}

#[test]
fn ext4_inline_data_matches_prediction() {
    validate(
        "ext4_inline_data_matches_prediction",
        "ext4",
        256 << 20,
        &["-b", "4096", "-I", "256", "-O", "inline_data"],
        "ext4-inline",
        4096,
    );
}

#[test]
fn exfat_matches_prediction() {
    validate(
        "exfat_matches_prediction",
        "exfat",
        256 << 20,
        &["-c", "4096"],
        "exfat",
        4096,
    );
}

#[test]
fn fat32_matches_prediction() {
    validate_with(
        "fat32_matches_prediction",
        "fat32",
        512 << 20,
        &["-s", "8"],
        "fat32",
        4096,
        false,
    );
}

/// The "current" unit of a scan is the cluster, not statvfs's block size: fusefat says 1 KiB
/// for a FAT32 of 4 KiB clusters and ext4 bigalloc 4 KiB for 16 KiB clusters, and the scan
/// marked those as current and compared st_blocks with the prediction at them.
#[test]
fn the_current_unit_is_the_cluster_made() {
    let test = "the_current_unit_is_the_cluster_made";
    for (fs_type, mkfs, rules, unit) in [
        ("fat32", &["-s", "8"][..], "fat32", 4096),
        (
            "ext4",
            &["-O", "bigalloc", "-C", "16384"][..],
            "ext4",
            16384,
        ),
    ] {
        let Some(fs) = scratch_or_skip(test, fs_type, 512 << 20, mkfs, "") else {
            continue;
        };
        let dir = fs.path().join("d");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("f"), vec![1u8; 5000]).unwrap();
        let r = slack_json(&[dir.to_str().unwrap(), "--fs", rules]);
        assert_eq!(r.current_unit_bytes, Some(unit), "{fs_type}");
    }
}

/// A scan on a FUSE file system said `now on fuseblk` (ntfs-3g, mount.exfat-fuse) or
/// `fuse.fusefat`: it names the file system as the rest of iolab does (ntfs, exfat, vfat),
/// in the JSON and on the terminal.
#[test]
fn a_fuse_file_system_is_named_as_iolab_names_it() {
    let test = "a_fuse_file_system_is_named_as_iolab_names_it";
    for (fs_type, mkfs, rules, name) in [
        ("ntfs", &["-c", "4096"][..], "ntfs-3g", "ntfs"),
        ("exfat", &["-c", "4096"][..], "exfat", "exfat"),
        ("fat32", &["-s", "8"][..], "fat32", "vfat"),
    ] {
        let Some(fs) = scratch_or_skip(test, fs_type, 320 << 20, mkfs, "") else {
            continue;
        };
        let dir = fs.path().join("d");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("f"), vec![1u8; 5000]).unwrap();
        let r = slack_json(&[dir.to_str().unwrap(), "--fs", rules]);
        assert_eq!(r.current_fs.as_deref(), Some(name), "{fs_type}");
        let out = common::iolab(&["slack", dir.to_str().unwrap(), "--fs", rules, "--no-save"]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains(&format!("now on {name} (")), "{stdout}");
        assert!(!stdout.contains("fuse"), "{stdout}");
    }
}

/// fusefat's mount names no device ("fusefat"): its daemon's command line does. Without it
/// a FAT32 target had no device counters (no write amplification, no check of whether the
/// page cache absorbed the writes, and the matrix ranked it unchecked).
#[test]
fn a_fusefat_mount_has_its_loop_device() {
    let test = "a_fusefat_mount_has_its_loop_device";
    let Some(fs) = scratch_or_skip(test, "fat32", 320 << 20, &["-s", "8"], "") else {
        return;
    };
    let (name, _) = iolab::sysinfo::block_device_of(fs.path())
        .unwrap_or_else(|| panic!("no block device under {}", fs.path().display()));
    assert!(name.starts_with("loop"), "{name}");
    let out = common::iolab(&["info", fs.path().to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&format!("/dev/{name} (")), "{stdout}");
}

/// Large directories: the ext4 htree and the xfs leaf blocks split by name hash, so their
/// blocks are about ln 2 full, not three quarters (ext4) or packed (xfs leaves): the
/// prediction of these four directories was 9 % (ext4) and 8 % (xfs) low, now within 2 %.
/// Limit 5 % on the sum: a single directory's fill swings by up to about ±9 % with its
/// entry count (its leaves fill and split in waves), the sum of four averages that out.
fn large_directories_match(test: &str, fs_type: &str, mkfs: &[&str]) {
    let Some(fs) = scratch_or_skip(test, fs_type, 512 << 20, mkfs, "") else {
        return;
    };
    let src = tempfile::tempdir().unwrap();
    let dst = fs.path().join("t");
    for root in [src.path(), dst.as_path()] {
        for (name_len, n) in [(24, 3000), (24, 20_000), (8, 20_000), (60, 20_000)] {
            let dir = root.join(format!("e{name_len}-{n}"));
            std::fs::create_dir_all(&dir).unwrap();
            for i in 0..n {
                let name = format!("f{i:07}{}", "n".repeat(name_len - 8));
                std::fs::File::create(dir.join(name)).unwrap();
            }
        }
    }
    nix::unistd::sync();
    let r = slack_json(&[src.path().to_str().unwrap(), "--fs", fs_type]);
    let row: &UnitRow = r.units.iter().find(|u| u.unit_bytes == 4096).unwrap();
    let mut actual = std::fs::metadata(&dst).unwrap().blocks() * 512;
    for e in std::fs::read_dir(&dst).unwrap() {
        actual += e.unwrap().metadata().unwrap().blocks() * 512;
    }
    within(
        "directories' allocation",
        row.dir_allocated_bytes,
        actual,
        5.0,
    );
}

#[test]
fn ext4_large_directories_match_prediction() {
    large_directories_match(
        "ext4_large_directories_match_prediction",
        "ext4",
        &["-b", "4096", "-N", "100000"],
    );
}

#[test]
fn xfs_large_directories_match_prediction() {
    large_directories_match(
        "xfs_large_directories_match_prediction",
        "xfs",
        &["-b", "size=4096"],
    );
}

/// After a successful run that wrote its result into `out_dir`: that result, and a tree of
/// one 5,000-byte file for `slack --calibrate` to analyse.
fn calibration_inputs(out: &std::process::Output, out_dir: &Path) -> (PathBuf, tempfile::TempDir) {
    assert!(out.status.success(), "{}", common::stderr(out));
    let result = common::entries(out_dir)
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .expect("the result file");
    let tree = common::tempdir();
    std::fs::write(tree.path().join("a"), vec![1u8; 5000]).unwrap();
    (result, tree)
}

/// `slack --calibrate` on a real ntfs-3g result: a 1-byte file lives in its MFT record, so
/// the fit puts it at 0 bytes (resident), not at one cluster, and says so. The files
/// result names only `fuseblk`; its create phase's space prediction names the rules.
#[test]
fn calibration_on_ntfs3g_puts_resident_files_at_no_cluster() {
    let test = "calibration_on_ntfs3g_puts_resident_files_at_no_cluster";
    let Some(fs) = scratch_or_skip(test, "ntfs", 320 << 20, &["-c", "4096"], "") else {
        return;
    };
    let out_dir = common::tempdir();
    let out = common::iolab(&[
        "--no-history",
        "files",
        "-t",
        fs.path().to_str().unwrap(),
        "--sizes",
        "1,cluster,cluster+1",
        "--files-per-portion",
        "20",
        "--portions",
        "2",
        "--passes",
        "1",
        "--repeat",
        "1",
        "-o",
        out_dir.path().to_str().unwrap(),
    ]);
    let (result, tree) = calibration_inputs(&out, out_dir.path());
    let r = slack_json(&[
        tree.path().to_str().unwrap(),
        "--fs",
        "ntfs-3g",
        "--calibrate",
        result.to_str().unwrap(),
    ]);
    let c = r.cost_model.unit(4096).unwrap();
    let x: Vec<(u64, u64, bool)> = c
        .points
        .iter()
        .map(|p| (p.file_size_bytes, p.allocated_bytes, p.resident))
        .collect();
    assert_eq!(
        x,
        [(1, 0, true), (4096, 4096, false), (4097, 8192, false)],
        "{c:?}"
    );
    assert!(
        r.cost_model.note.contains(
            "allocated bytes by the ntfs-3g rules of the file system measured; resident files (kept in the inode, MFT record or metadata tree) take none: 1B at 4KiB"
        ),
        "{}",
        r.cost_model.note
    );
}

/// `slack --calibrate` on a real matrix of two file systems: the fit takes the points of
/// the file system analysed (`--fs`) only and names it, and refuses a file system the
/// matrix did not measure. Before, the points of both were fitted as one line per unit.
#[test]
fn calibration_from_a_matrix_of_two_file_systems_takes_the_one_analysed() {
    let test = "calibration_from_a_matrix_of_two_file_systems_takes_the_one_analysed";
    if !common::loop_or_skip(test) || !common::tool_or_skip(test, "mkfs.xfs", "xfsprogs") {
        return;
    }
    let images = common::tempdir();
    let out_dir = common::tempdir();
    let out = common::iolab(&[
        "--no-history",
        "matrix",
        "--fs",
        "ext4,xfs",
        "--cluster",
        "4K",
        "--workload",
        "files:sizes=1,4K,cluster+1:files-per-portion=20:portions=2:passes=1:repeat=1:phases=create",
        "--repeat",
        "1",
        "--image-size",
        "320M",
        "--image-dir",
        images.path().to_str().unwrap(),
        "-o",
        out_dir.path().to_str().unwrap(),
    ]);
    let (result, tree) = calibration_inputs(&out, out_dir.path());
    let (tree, result) = (common::s(tree.path()), common::s(&result));
    let r = slack_json(&[tree, "--fs", "xfs", "--calibrate", result]);
    let m = &r.cost_model;
    assert_eq!(m.points_fs.as_deref(), Some("xfs"), "{m:?}");
    let c = m.unit(4096).unwrap();
    let tests: Vec<&str> = c.points.iter().map(|p| p.test.as_str()).collect();
    assert_eq!(tests.len(), 3, "{tests:?}");
    assert!(tests.iter().all(|t| t.starts_with("xfs ")), "{tests:?}");
    assert!(
        m.note.ends_with(
            "; only the points of xfs (the file system analysed: --fs xfs; the result measured ext4, xfs)"
        ),
        "{}",
        m.note
    );
    let out = common::iolab(&[
        "--no-history",
        "slack",
        tree,
        "--fs",
        "btrfs",
        "--calibrate",
        result,
        "--no-save",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", common::stderr(&out));
    common::assert_usage(
        &out,
        "the result measured several file systems (ext4, xfs) and none of them is btrfs (--fs btrfs)",
    );
}

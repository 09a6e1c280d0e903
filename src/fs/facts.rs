//! Facts about a file system or block device that argument checks and size limits need:
//! free space, the share of it a rewritten file may take, read-only mounts, whether a
//! device is in use, its file-system signature, and whether `--allow-destroy` names a
//! target.

use std::path::Path;

/// Free bytes for an unprivileged writer on the file system of `dir`.
pub fn free_space(dir: &Path) -> Option<u64> {
    let s = nix::sys::statvfs::statvfs(dir).ok()?;
    // Some FUSE file systems (fusefat) report no block counts at all: unknown, not full.
    if s.blocks() == 0 {
        return None;
    }
    Some(s.blocks_available() as u64 * s.fragment_size() as u64)
}

/// Blocks a test file made in a directory leaves to what iolab creates beside it (the lock
/// file `.iolab.lock`) and to the file system's own bookkeeping of a large file (extent
/// blocks).
const BESIDE_TEST_FILE_BLOCKS: u64 = 16;

/// Free bytes a test file iolab makes in `dir` may take: the free space less
/// `BESIDE_TEST_FILE_BLOCKS` blocks. `--size` equal to the free space passed the check and
/// then failed with ENOSPC, the lock file having taken a block first.
pub fn free_for_test_file(dir: &Path) -> Option<u64> {
    let s = nix::sys::statvfs::statvfs(dir).ok()?;
    let block = (s.fragment_size() as u64).max(512);
    free_space(dir).map(|f| f.saturating_sub(BESIDE_TEST_FILE_BLOCKS * block))
}

/// How much of the free space a file that is later overwritten may take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverwriteRoom {
    /// Percent of the free space.
    pub percent: u64,
    /// Why less than the usual 90 % (said in the clamp message).
    pub why: Option<String>,
}

impl OverwriteRoom {
    /// `percent` of `free`.
    pub fn cap(&self, free: u64) -> u64 {
        (free as u128 * self.percent as u128 / 100) as u64
    }

    /// `90 % of the free space on DIR` (+ the reason when it is less).
    pub fn describe(&self, dir: &Path) -> String {
        let mut s = format!("{} % of the free space on {}", self.percent, dir.display());
        if let Some(w) = &self.why {
            s.push_str(": ");
            s.push_str(w);
        }
        s
    }
}

/// The share of the free space for a test file that will be overwritten, by file-system
/// type: 10 % is left to everyone else. A copy-on-write or log-structured file system
/// writes every overwrite to new space and frees the old blocks only later (btrfs at the
/// transaction commit, and an extent only when none of its blocks is referenced any more,
/// so a 4 KiB random overwrite can pin a whole 128 MiB extent; nilfs2/f2fs at cleaning):
/// a full rewrite of the file needs its size again, plus metadata (btrfs keeps it twice,
/// DUP, in chunks taken from the same unallocated space). So at most 45 % there: the file
/// and one full rewrite stay within the same 90 %.
pub fn overwrite_room_of(fs_type: Option<&str>) -> OverwriteRoom {
    let cow = fs_type.and_then(|t| match t {
        "bcachefs" | "zfs" => Some("copy-on-write"),
        t => crate::fs::types::lookup(t)
            .map(|f| f.design)
            .filter(|d| matches!(*d, "copy-on-write" | "log-structured")),
    });
    match (fs_type, cow) {
        (Some(t), Some(design)) => OverwriteRoom {
            percent: 45,
            why: Some(format!(
                "{t} is {design}, every overwrite needs new space before the old is freed, so the file and a full rewrite of it must fit"
            )),
        },
        _ => OverwriteRoom {
            percent: 90,
            why: None,
        },
    }
}

/// `overwrite_room_of` the file system holding `dir`.
pub fn overwrite_room(dir: &Path) -> OverwriteRoom {
    let m = crate::sysinfo::mounts::mount_of(dir);
    overwrite_room_of(m.as_ref().map(|m| m.fs_type.as_str()))
}

pub fn is_read_only_fs(dir: &Path) -> bool {
    nix::sys::statvfs::statvfs(dir)
        .map(|s| s.flags().contains(nix::sys::statvfs::FsFlags::ST_RDONLY))
        .unwrap_or(false)
}

/// Is `dev` (a block device) read-only (`blockdev --setro`, a loop device set up with
/// `losetup -r`, a write-protected card)? From sysfs `ro` of its major:minor.
pub fn device_is_read_only(dev: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(md) = std::fs::metadata(dev) else {
        return false;
    };
    let rdev = md.rdev();
    let ro = format!(
        "/sys/dev/block/{}:{}/ro",
        libc::major(rdev),
        libc::minor(rdev)
    );
    crate::sysinfo::read_trim(Path::new(&ro)).is_some_and(|v| v == "1")
}

/// Is `dev` (a block device) mounted, or holding a mounted partition or a device-mapper
/// user? Returns a description of the user when it is.
pub fn device_in_use(dev: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::metadata(dev).ok()?;
    let rdev = md.rdev();
    let majmin = format!("{}:{}", libc::major(rdev), libc::minor(rdev));
    if let Some(m) = crate::sysinfo::mounts::mounts_of_device(&majmin).first() {
        return Some(format!("mounted on {}", m.mount_point.display()));
    }
    let sys = std::fs::canonicalize(format!("/sys/dev/block/{majmin}")).ok()?;
    // Partitions of this disk that are mounted.
    if let Ok(rd) = std::fs::read_dir(&sys) {
        for e in rd.flatten() {
            if e.path().join("partition").exists()
                && let Some(dev) = crate::sysinfo::read_trim(&e.path().join("dev"))
                && let Some(m) = crate::sysinfo::mounts::mounts_of_device(&dev).first()
            {
                return Some(format!(
                    "its partition {} is mounted on {}",
                    e.file_name().to_string_lossy(),
                    m.mount_point.display()
                ));
            }
        }
    }
    if let Ok(rd) = std::fs::read_dir(sys.join("holders"))
        && let Some(h) = rd.flatten().next()
    {
        return Some(format!("held by {}", h.file_name().to_string_lossy()));
    }
    None
}

/// Size of a block device in bytes.
pub fn device_size(dev: &Path) -> Option<u64> {
    use std::io::Seek;
    std::fs::File::open(dev)
        .and_then(|mut f| f.seek(std::io::SeekFrom::End(0)))
        .ok()
}

/// Does `--allow-destroy` name exactly this target?
pub fn allow_destroy_matches(allow: Option<&Path>, target: &Path) -> bool {
    let Some(allow) = allow else { return false };
    match (std::fs::canonicalize(allow), std::fs::canonicalize(target)) {
        (Ok(a), Ok(t)) => a == t,
        _ => false,
    }
}

/// A file-system signature on a device (blkid), for the refusal message.
pub fn fs_signature(dev: &Path) -> Option<String> {
    let out = std::process::Command::new("blkid")
        .args(["-p", "-o", "value", "-s", "TYPE"])
        .arg(dev)
        .output()
        .ok()?;
    let s = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !s.is_empty()).then_some(s)
}

/// A `--target` directory iolab creates its work in: it exists, is a directory, is not on a
/// read-only file system and this user may create files in it. The usage error names the
/// target and what is wrong.
/// Why a path could not be used, in the words `run` uses: "does not exist" rather than
/// "No such file or directory (os error 2)"; other errors as the system says them.
pub fn io_why(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "does not exist".into(),
        _ => e.to_string(),
    }
}

pub fn check_work_dir(t: &Path) -> Result<(), crate::error::UsageError> {
    let fail = |why: String| {
        Err(crate::error::UsageError::new(format!(
            "--target {}: {why}",
            t.display()
        )))
    };
    match std::fs::metadata(t) {
        Err(e) => return fail(io_why(&e)),
        Ok(md) if !md.is_dir() => return fail("not a directory".into()),
        Ok(_) => {}
    }
    if is_read_only_fs(t) {
        return fail("the file system is mounted read-only".into());
    }
    let wx = nix::unistd::AccessFlags::W_OK | nix::unistd::AccessFlags::X_OK;
    if nix::unistd::access(t, wx).is_err() {
        return fail("not writable by this user".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `files` and `trace run` refuse as a work directory, each named.
    #[test]
    fn a_work_dir_must_be_an_existing_directory() {
        let dir = tempfile::tempdir().unwrap();
        assert!(check_work_dir(dir.path()).is_ok());
        let file = dir.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        let e = check_work_dir(&file).unwrap_err().to_string();
        assert_eq!(e, format!("--target {}: not a directory", file.display()));
        let gone = dir.path().join("gone");
        let e = check_work_dir(&gone).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("--target {}: ", gone.display())),
            "{e}"
        );
        assert_eq!(e, format!("--target {}: does not exist", gone.display()));
    }

    #[test]
    fn copy_on_write_file_systems_get_room_for_a_full_rewrite() {
        // Regression (issue #28): a 512 MiB btrfs ran out of space in the random writes of
        // a test file sized to 90 % of its free space.
        for t in ["btrfs", "nilfs2", "f2fs", "bcachefs"] {
            let r = overwrite_room_of(Some(t));
            assert_eq!(r.percent, 45, "{t}");
            assert!(r.why.as_deref().unwrap().contains("full rewrite"), "{t}");
            // The file plus one full rewrite stay within the usual 90 %.
            assert!(2 * r.cap(1000) <= 900);
        }
        for t in [
            Some("ext4"),
            Some("xfs"),
            Some("fuseblk"),
            Some("tmpfs"),
            None,
        ] {
            assert_eq!(overwrite_room_of(t).percent, 90, "{t:?}");
            assert!(overwrite_room_of(t).why.is_none());
        }
        let d = overwrite_room_of(Some("btrfs")).describe(Path::new("/mnt"));
        assert!(
            d.starts_with("45 % of the free space on /mnt: btrfs is copy-on-write"),
            "{d}"
        );
        assert_eq!(
            overwrite_room_of(Some("ext4")).describe(Path::new("/mnt")),
            "90 % of the free space on /mnt"
        );
        // Unknown free space (fusefat) stays "unlimited" without overflow.
        assert!(overwrite_room_of(None).cap(u64::MAX) > u64::MAX / 10 * 8);
    }
}

/// What a target path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    /// A directory: iolab creates (and removes) its own test file there.
    Directory,
    BlockDevice,
    /// An existing regular file (`--allow-destroy FILE`): overwritten, never deleted.
    RegularFile,
}

/// Classify a target path. Errors are user errors (the caller maps them to exit 2).
pub fn classify(path: &Path) -> Result<TargetKind, String> {
    let md = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!("target {} does not exist", path.display()),
        _ => format!("cannot access target {}: {e}", path.display()),
    })?;
    let ft = md.file_type();
    if ft.is_dir() {
        Ok(TargetKind::Directory)
    } else if std::os::unix::fs::FileTypeExt::is_block_device(&ft) {
        Ok(TargetKind::BlockDevice)
    } else if ft.is_file() {
        Ok(TargetKind::RegularFile)
    } else {
        Err(format!(
            "target {} is neither a directory, a block device nor a regular file",
            path.display()
        ))
    }
}

//! `/proc/self/mountinfo`: which mount holds a path, with its type and options.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountInfo {
    pub mount_point: PathBuf,
    pub fs_type: String,
    /// Per-mount and super-block options, comma-joined.
    pub options: String,
    /// What was mounted (`/dev/sda1`, `tmpfs`, ...).
    pub source: String,
    /// `major:minor` of the mounted device.
    pub dev: String,
}

/// Undo the octal escapes (`\040` for space) of mountinfo.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 4 <= b.len()
            && let Some(v) = std::str::from_utf8(&b[i + 1..i + 4])
                .ok()
                .and_then(|d| u8::from_str_radix(d, 8).ok())
        {
            out.push(v);
            i += 4;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Per-mount then super-block options, each once (`rw` is in both).
fn join_options(per_mount: &str, super_block: &str) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for o in per_mount.split(',').chain(super_block.split(',')) {
        if !o.is_empty() && !seen.contains(&o) {
            seen.push(o);
        }
    }
    seen.join(",")
}

/// Parse the whole mount table.
pub fn all_mounts() -> Vec<MountInfo> {
    let Ok(text) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return Vec::new();
    };
    text.lines().filter_map(parse_line).collect()
}

pub fn parse_line(line: &str) -> Option<MountInfo> {
    // id parent maj:min root mountpoint opts [optional...] - fstype source superopts
    let (left, right) = line.split_once(" - ")?;
    let l: Vec<&str> = left.split(' ').collect();
    let r: Vec<&str> = right.split(' ').collect();
    if l.len() < 6 || r.len() < 3 {
        return None;
    }
    Some(MountInfo {
        dev: l[2].to_string(),
        mount_point: PathBuf::from(unescape(l[4])),
        fs_type: r[0].to_string(),
        source: unescape(r[1]),
        options: join_options(l[5], r[2]),
    })
}

/// The mount holding `path`: the longest mount point that is a prefix of its canonical
/// path and has the same device number.
pub fn mount_of(path: &Path) -> Option<MountInfo> {
    let canon = std::fs::canonicalize(path).ok()?;
    let dev = std::fs::metadata(&canon).ok().map(|m| {
        let d = m.dev();
        format!("{}:{}", libc::major(d), libc::minor(d))
    });
    let mounts = all_mounts();
    let best = |same_dev: bool| {
        mounts
            .iter()
            .filter(|m| canon.starts_with(&m.mount_point))
            .filter(|m| !same_dev || Some(&m.dev) == dev.as_ref())
            .max_by_key(|m| m.mount_point.as_os_str().len())
            .cloned()
    };
    best(true).or_else(|| best(false))
}

/// Mounts whose source is this block device (by major:minor, or its source node: a btrfs
/// carries an anonymous major:minor), or that a multi-device btrfs it belongs to holds.
pub fn mounts_of_device(maj_min: &str) -> Vec<MountInfo> {
    let all = all_mounts();
    let direct = |mm: &str| -> Vec<MountInfo> {
        all.iter()
            .filter(|m| m.dev == mm || source_maj_min(&m.source).as_deref() == Some(mm))
            .cloned()
            .collect()
    };
    let found = direct(maj_min);
    if !found.is_empty() {
        return found;
    }
    // A device of a multi-device btrfs is mounted through whichever member mountinfo names.
    let Some(name) = std::fs::canonicalize(format!("/sys/dev/block/{maj_min}"))
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
    else {
        return Vec::new();
    };
    other_fs_members(&name)
        .iter()
        .filter_map(|m| super::read_trim(&Path::new("/sys/class/block").join(m).join("dev")))
        .map(|mm| direct(&mm))
        .find(|f| !f.is_empty())
        .unwrap_or_default()
}

/// `major:minor` of a mount's source when it is a block device node: a btrfs's mountinfo
/// line carries an anonymous `0:N`, so only its source names the device.
fn source_maj_min(source: &str) -> Option<String> {
    if !source.starts_with("/dev/") {
        return None;
    }
    let md = std::fs::metadata(source).ok()?;
    if !md.file_type().is_block_device() {
        return None;
    }
    let r = md.rdev();
    Some(format!("{}:{}", libc::major(r), libc::minor(r)))
}

/// The device the FUSE daemon `daemon` serves on `mount_point`: the argument before the
/// mount point on the command line of that program (`fusefat -o rw+ /dev/loop3 /mnt`).
pub fn fuse_daemon_device(daemon: &str, mount_point: &Path) -> Option<PathBuf> {
    let want = mount_point.as_os_str().as_encoded_bytes();
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        if !e
            .file_name()
            .as_encoded_bytes()
            .iter()
            .all(u8::is_ascii_digit)
        {
            continue;
        }
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<&[u8]> = cmd.split(|&b| b == 0).collect();
        let program = args[0].rsplit(|&b| b == b'/').next().unwrap_or_default();
        if program != daemon.as_bytes() {
            continue;
        }
        let Some(i) = args.iter().position(|a| {
            *a == want
                || std::fs::canonicalize(std::ffi::OsStr::from_bytes(a))
                    .is_ok_and(|c| c.as_os_str().as_encoded_bytes() == want)
        }) else {
            continue;
        };
        if i >= 2 && args[i - 1].starts_with(b"/dev/") {
            return Some(PathBuf::from(std::ffi::OsStr::from_bytes(args[i - 1])));
        }
    }
    None
}

/// The devices of the file system `device` holds, when it spans several (a multi-device
/// btrfs, listed in `/sys/fs/btrfs/<fsid>/devices/`): that device's counters see only its
/// share of the file system's I/O. Empty when it is on one device, as most are.
pub fn other_fs_members(device: &str) -> Vec<String> {
    other_fs_members_in(Path::new("/sys/fs/btrfs"), device)
}

fn other_fs_members_in(btrfs: &Path, device: &str) -> Vec<String> {
    let Ok(fss) = std::fs::read_dir(btrfs) else {
        return Vec::new();
    };
    for fs in fss.flatten() {
        let Ok(devs) = std::fs::read_dir(fs.path().join("devices")) else {
            continue;
        };
        let names: Vec<String> = devs
            .flatten()
            .map(|d| d.file_name().to_string_lossy().into_owned())
            .collect();
        if names.iter().any(|n| n == device) {
            let mut others: Vec<String> = names.into_iter().filter(|n| n != device).collect();
            others.sort();
            return others;
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_mountinfo_line() {
        let l =
            "36 35 98:0 / /mnt/my\\040disk rw,noatime master:1 - ext4 /dev/sda1 rw,errors=continue";
        let m = parse_line(l).unwrap();
        assert_eq!(m.mount_point, PathBuf::from("/mnt/my disk"));
        assert_eq!(m.fs_type, "ext4");
        assert_eq!(m.source, "/dev/sda1");
        assert_eq!(m.dev, "98:0");
        assert!(m.options.contains("noatime"));
        assert_eq!(m.options, "rw,noatime,errors=continue");
    }

    #[test]
    fn root_is_mounted() {
        let m = mount_of(Path::new("/")).unwrap();
        assert_eq!(m.mount_point, PathBuf::from("/"));
    }

    /// A two-device btrfs: each device's counters see half of the I/O.
    #[test]
    fn the_other_devices_of_a_multi_device_btrfs_are_found() {
        let d = tempfile::tempdir().unwrap();
        let fs = d
            .path()
            .join("4938dddd-ac19-436e-8d7b-d992c350691a/devices");
        std::fs::create_dir_all(fs.join("loop1")).unwrap();
        std::fs::create_dir_all(fs.join("loop2")).unwrap();
        std::fs::create_dir_all(d.path().join("features")).unwrap();
        let one = d
            .path()
            .join("5038dddd-0000-436e-8d7b-d992c350691a/devices");
        std::fs::create_dir_all(one.join("sda3")).unwrap();
        assert_eq!(other_fs_members_in(d.path(), "loop1"), ["loop2"]);
        assert_eq!(other_fs_members_in(d.path(), "loop2"), ["loop1"]);
        assert!(other_fs_members_in(d.path(), "sda3").is_empty());
        assert!(other_fs_members_in(d.path(), "vda").is_empty());
        assert!(other_fs_members_in(&d.path().join("none"), "loop1").is_empty());
    }
}

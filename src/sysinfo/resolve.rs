//! From a path or a device name to the chain of block devices under it: the mount and its
//! file system, then partition -> disk, loop -> the device holding its backing file (loops
//! over files on other loops are followed), dm/md -> their slaves. Also says why a path has
//! no block device (pseudo, memory, network file systems), so no device counters exist.

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use super::blockdev;
pub use super::mounts::other_fs_members;
use super::mounts::{self, MountInfo};
use crate::error::UsageError;
use crate::model::device::{BlockDeviceInfo, MountView, StorageInfo};

/// What kind of file system a mount is, as far as device counters are concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsClass {
    /// On a block device (ext4, xfs, btrfs, fuseblk, ...).
    Block,
    /// In RAM: tmpfs, ramfs, devtmpfs.
    Memory,
    /// A kernel interface: proc, sysfs, cgroup, debugfs, ...
    Pseudo,
    /// Over the network: nfs, cifs, 9p, sshfs, ...
    Network,
    /// A union of other file systems (overlay).
    Overlay,
    /// A FUSE file system without a block device.
    Fuse,
}

const PSEUDO: &[&str] = &[
    "proc",
    "sysfs",
    "cgroup",
    "cgroup2",
    "debugfs",
    "tracefs",
    "securityfs",
    "pstore",
    "bpf",
    "configfs",
    "devpts",
    "mqueue",
    "hugetlbfs",
    "fusectl",
    "binfmt_misc",
    "autofs",
    "efivarfs",
    "nsfs",
    "rpc_pipefs",
    "selinuxfs",
];
const MEMORY: &[&str] = &["tmpfs", "ramfs", "devtmpfs"];
const NETWORK: &[&str] = &[
    "nfs",
    "nfs4",
    "cifs",
    "smb3",
    "smbfs",
    "9p",
    "ceph",
    "glusterfs",
    "fuse.glusterfs",
    "fuse.sshfs",
    "fuse.s3fs",
    "fuse.rclone",
    "virtiofs",
    "afs",
    "lustre",
    "gpfs",
    "beegfs",
];

pub fn classify_fs(fs_type: &str) -> FsClass {
    if PSEUDO.contains(&fs_type) {
        FsClass::Pseudo
    } else if MEMORY.contains(&fs_type) {
        FsClass::Memory
    } else if NETWORK.contains(&fs_type) {
        FsClass::Network
    } else if fs_type == "overlay" {
        FsClass::Overlay
    } else if fs_type.starts_with("fuse") && fs_type != "fuseblk" {
        FsClass::Fuse
    } else {
        FsClass::Block
    }
}

/// What keeps a target's data in RAM, in words (`tmpfs keeps its data in RAM`, `zram0 is a
/// compressed RAM disk (zram)`), from the file system type and the block device under it;
/// `None` for storage. There is no drive there and no drive write cache: a slowdown while
/// writing is the machine's (memory reclaim, the CPUs' other work). A loop device over a
/// file in RAM is not judged (it may stand for a drive, as the test suite's emulator does).
pub fn memory_backing(fs_type: &str, block_device: Option<&str>) -> Option<String> {
    match block_device {
        None => (classify_fs(fs_type) == FsClass::Memory)
            .then(|| format!("{fs_type} keeps its data in RAM")),
        Some(d) if d.starts_with("zram") => Some(format!("{d} is a compressed RAM disk (zram)")),
        Some(d)
            if d.strip_prefix("ram")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())) =>
        {
            Some(format!("{d} is a RAM disk (brd)"))
        }
        Some(_) => None,
    }
}

/// Why the mount `m` has no block device under it, in one sentence.
fn reason_for(m: &MountInfo) -> String {
    format!(
        "{} at {} is {}: there is no block device, so no device counters exist",
        m.fs_type,
        m.mount_point.display(),
        fs_class_words(m)
    )
}

/// What kind of file system without a block device `m` is, in words.
fn fs_class_words(m: &MountInfo) -> &'static str {
    match classify_fs(&m.fs_type) {
        FsClass::Pseudo => "a pseudo file system (a kernel interface, not storage)",
        FsClass::Memory => "a RAM file system (its data lives in memory)",
        FsClass::Network => "a network file system (the storage is on another machine)",
        FsClass::Overlay => "an overlay whose layers could not be traced to a block device",
        FsClass::Fuse => "a FUSE file system without a block device",
        FsClass::Block => "a file system whose source is not a block device",
    }
}

/// Where an existing `file` lives when no block device holds it (a loop's image on a
/// tmpfs, on NFS): `tmpfs at /mnt/t, a RAM file system (...)`; `None` when a device holds
/// it or the file is gone.
pub fn deviceless_home(file: &Path) -> Option<String> {
    if std::fs::metadata(file).is_err() || device_of_path(file).is_some() {
        return None;
    }
    let m = mounts::mount_of(file)?;
    Some(format!(
        "{} at {}, {}",
        m.fs_type,
        m.mount_point.display(),
        fs_class_words(&m)
    ))
}

/// Why `path` has no block device (and so no device counters); `None` when it has one.
/// Workloads put this in a warning when `PhaseCounters::for_path` gives `None`.
pub fn no_device_reason(path: &Path) -> Option<String> {
    if device_of_path(path).is_some() {
        return None;
    }
    Some(match mounts::mount_of(path) {
        Some(m) => reason_for(&m),
        None => format!(
            "{}: no mount found, so no block device and no device counters",
            path.display()
        ),
    })
}

/// A run-wide warning for a workload whose target has no block device: its results carry no
/// device counters and no write amplification. The caller may set `test`.
pub fn no_device_warning(path: &Path) -> Option<crate::model::Warning> {
    no_device_reason(path).map(|r| crate::model::Warning {
        code: crate::model::WarningCode::NoDeviceCounters,
        message: r,
        test: None,
    })
}

/// The block device whose counters show a workload's writes under `path`: the device of
/// the path, or for an overlay the device of its upper (written) layer.
pub fn device_of_path(path: &Path) -> Option<(String, PathBuf)> {
    super::block_device_of(path).or_else(|| overlay_upper_device(path))
}

/// For an overlay mount: the block device holding its upper (written) layer.
fn overlay_upper_device(path: &Path) -> Option<(String, PathBuf)> {
    let m = mounts::mount_of(path)?;
    if m.fs_type != "overlay" {
        return None;
    }
    let upper = m
        .options
        .split(',')
        .find_map(|o| o.strip_prefix("upperdir="))?;
    super::block_device_of(Path::new(upper))
}

/// The block device holding loop device `name`'s backing file, if it is on one.
pub fn loop_backing_device(name: &str) -> Option<String> {
    let file = blockdev::loop_backing_file(name)?;
    let file = Path::new(&file);
    super::block_device_of(file)
        // A deleted file stays on its file system while the loop holds it: the directory
        // it was in is (almost always) on the same one.
        .or_else(|| {
            blockdev::loop_backing_deleted(name)
                .then(|| file.parent().and_then(super::block_device_of))
                .flatten()
        })
        .map(|(n, _)| n)
}

/// What the user asked `iolab info` about.
enum Query {
    Path(PathBuf),
    Device(String),
}

fn parse_query(p: &Path) -> Result<Query, UsageError> {
    // Named in messages by its text (a byte that is not UTF-8 as U+FFFD and its hex digits).
    let input = crate::os::text::os_text(p.as_os_str());
    if let Ok(md) = std::fs::metadata(p) {
        if md.file_type().is_block_device() {
            let (name, _) = super::block_device_of(p).ok_or_else(|| {
                UsageError(format!(
                    "{input}: a block device node with no device behind it"
                ))
            })?;
            return Ok(Query::Device(name));
        }
        // A deleted directory still answers stat while something (the shell's current
        // directory) holds it, but no mount is found for it: it showed "Path: ." and no
        // mount, as if that were all there is to say.
        if std::fs::canonicalize(p).is_err() {
            return Err(UsageError(format!(
                "{input}: it was deleted (no directory names it now); give a path that exists"
            )));
        }
        return Ok(Query::Path(p.to_path_buf()));
    }
    // A name that is not UTF-8 names no device.
    let Some(input) = p.to_str() else {
        return Err(UsageError(format!(
            "{input}: no such file, directory or block device"
        )));
    };
    let bare = input.strip_prefix("/dev/").unwrap_or(input);
    if blockdev::exists(bare) {
        return Ok(Query::Device(bare.to_string()));
    }
    // `/dev/sdz`, `/dev/mapper/x`, `/dev/disk/by-id/x` name devices; `/dev/shm/x` is a path
    // on a tmpfs (it was called "no such block device").
    let dev_name = input.strip_prefix("/dev/").is_some_and(|rest| {
        !rest.contains('/') || rest.starts_with("mapper/") || rest.starts_with("disk/")
    });
    if dev_name || !input.contains('/') && looks_like_device(input) {
        return Err(UsageError(format!(
            "no such block device: {input} (lsblk lists the devices of this machine)"
        )));
    }
    Err(UsageError(format!(
        "{input}: no such file, directory or block device"
    )))
}

/// `sdz`, `nvme9n1`, `loop99`, `vdq`, `mmcblk3`: names that can only mean a device.
fn looks_like_device(s: &str) -> bool {
    let prefixes = [
        "sd", "hd", "vd", "xvd", "nvme", "loop", "mmcblk", "dm-", "md", "zram",
    ];
    prefixes.iter().any(|p| s.starts_with(p)) && s.len() <= 12
}

/// Walk the chain under `name`, appending to `out` (top first).
fn push_chain(name: &str, relation: &str, under: Option<&str>, out: &mut Vec<BlockDeviceInfo>) {
    // Cycles cannot happen in sysfs, but a loop over a file on itself's parent chain can
    // repeat a device: list each once, and stop at a sane depth.
    if out.len() >= 16 || out.iter().any(|d| d.name == name) {
        return;
    }
    let Some(mut info) = blockdev::details(name) else {
        return;
    };
    info.relation = relation.into();
    info.under = under.map(str::to_string);
    let kind = info.kind.clone();
    let slaves = info.slaves.clone();
    out.push(info);
    if kind == "partition"
        && let Some(sys) = blockdev::sysfs_dir(name)
        && let Some(d) = super::queue_dir(&sys).file_name()
    {
        push_chain(&d.to_string_lossy(), "partition-of", Some(name), out);
    }
    if kind == "loop"
        && let Some(dev) = loop_backing_device(name)
    {
        push_chain(&dev, "backs-loop", Some(name), out);
    }
    for s in &slaves {
        push_chain(s, "slave-of", Some(name), out);
    }
}

/// The device chain under block device `name`, top first.
/// The other devices of a file system over several (a multi-device btrfs) follow, each with
/// its own chain: the file system's data and wear are spread over all of them.
pub fn device_chain(name: &str) -> Vec<BlockDeviceInfo> {
    let mut out = Vec::new();
    push_chain(name, "holds-path", None, &mut out);
    for member in other_fs_members(name) {
        push_chain(&member, "fs-member", Some(name), &mut out);
    }
    out
}

fn mount_view(m: &MountInfo) -> MountView {
    let named = crate::fs::detect::fs_name(m);
    MountView {
        mount_point: m.mount_point.display().to_string(),
        fs_type: m.fs_type.clone(),
        fs_name: (named != m.fs_type).then_some(named),
        source: m.source.clone(),
        options: m.options.clone(),
    }
}

/// Everything `iolab info` shows for `input` (a path, `/dev/X` or a bare device name),
/// except SMART (the caller adds it: it runs an external program). Bad input (nothing
/// there, an unknown device) is a `UsageError`.
/// A name that is not UTF-8 is recorded by its bytes (`os::text::path_text`).
pub fn storage_info(input: impl AsRef<Path>) -> Result<StorageInfo, UsageError> {
    let input = input.as_ref();
    let text = |p: &Path| crate::os::text::os_text(p.as_os_str());
    let mut info = StorageInfo {
        query: text(input),
        ..Default::default()
    };
    match parse_query(input)? {
        Query::Device(name) => {
            info.path = format!("/dev/{name}");
            info.kind = "device".into();
            let maj_min = blockdev::details(&name)
                .map(|d| d.maj_min)
                .unwrap_or_default();
            info.mount = mounts::mounts_of_device(&maj_min).first().map(mount_view);
            info.devices = device_chain(&name);
            if let Some(top) = info.devices.first_mut() {
                top.relation = "asked".into();
            }
        }
        Query::Path(p) => {
            info.path = text(&std::fs::canonicalize(&p).unwrap_or(p.clone()));
            let m = mounts::mount_of(&p);
            info.mount = m.as_ref().map(mount_view);
            let class = m.as_ref().map(|m| classify_fs(&m.fs_type));
            let dev = device_of_path(&p);
            info.kind = match (&dev, class) {
                (Some(_), Some(FsClass::Overlay)) => "overlay",
                (Some(_), _) | (None, Some(FsClass::Block) | None) => "block",
                (None, Some(FsClass::Memory)) => "memory",
                (None, Some(FsClass::Pseudo)) => "pseudo",
                (None, Some(FsClass::Network)) => "network",
                (None, Some(FsClass::Overlay)) => "overlay",
                (None, Some(FsClass::Fuse)) => "fuse",
            }
            .into();
            match dev {
                Some((name, _)) => info.devices = device_chain(&name),
                None => {
                    info.no_device_reason = Some(match &m {
                        Some(m) => reason_for(m),
                        None => format!("{}: no mount found", text(&p)),
                    })
                }
            }
        }
    }
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ram_backed_targets_are_named() {
        assert_eq!(
            memory_backing("tmpfs", None).as_deref(),
            Some("tmpfs keeps its data in RAM")
        );
        assert_eq!(
            memory_backing("ramfs", None).as_deref(),
            Some("ramfs keeps its data in RAM")
        );
        assert_eq!(
            memory_backing("ext4", Some("zram0")).as_deref(),
            Some("zram0 is a compressed RAM disk (zram)")
        );
        assert_eq!(
            memory_backing("xfs", Some("ram1")).as_deref(),
            Some("ram1 is a RAM disk (brd)")
        );
        for (fs, dev) in [
            ("ext4", Some("nvme0n1")),
            ("ext4", Some("loop3")),
            ("xfs", Some("rampart")),
            ("nfs4", None),
            ("", Some("sda")),
        ] {
            assert_eq!(memory_backing(fs, dev), None, "{fs} {dev:?}");
        }
    }

    #[test]
    fn classes() {
        assert_eq!(classify_fs("proc"), FsClass::Pseudo);
        assert_eq!(classify_fs("sysfs"), FsClass::Pseudo);
        assert_eq!(classify_fs("tmpfs"), FsClass::Memory);
        assert_eq!(classify_fs("nfs4"), FsClass::Network);
        assert_eq!(classify_fs("fuse.sshfs"), FsClass::Network);
        assert_eq!(classify_fs("fuseblk"), FsClass::Block);
        assert_eq!(classify_fs("ext4"), FsClass::Block);
        assert_eq!(classify_fs("overlay"), FsClass::Overlay);
    }

    #[test]
    fn proc_has_no_device() {
        let w = no_device_warning(Path::new("/proc/self")).unwrap();
        assert_eq!(w.code, crate::model::WarningCode::NoDeviceCounters);
        let r = no_device_reason(Path::new("/proc/self")).unwrap();
        assert!(r.contains("proc"), "{r}");
        assert!(r.contains("pseudo"), "{r}");
        assert!(r.contains("no device counters"), "{r}");
        let i = storage_info("/proc").unwrap();
        assert_eq!(i.kind, "pseudo");
        assert!(i.devices.is_empty());
    }

    #[test]
    fn unknown_devices_are_usage_errors() {
        let e = storage_info("/dev/sdzz-iolab").unwrap_err();
        assert!(e.0.contains("no such block device"), "{}", e.0);
        let e = storage_info("nvme9n9").unwrap_err();
        assert!(e.0.contains("no such block device"), "{}", e.0);
        let e = storage_info("./no/such/file/iolab").unwrap_err();
        assert!(e.0.contains("no such file"), "{}", e.0);
        let e = storage_info("/dev/shm/no-such-file-iolab").unwrap_err();
        assert!(e.0.contains("no such file, directory"), "{}", e.0);
        let e = storage_info("/dev/mapper/no-such-iolab").unwrap_err();
        assert!(e.0.contains("no such block device"), "{}", e.0);
    }
}

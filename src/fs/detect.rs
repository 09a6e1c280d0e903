//! Can this machine make and mount a file-system type? The mkfs tool, then the kernel driver
//! (`/proc/filesystems`, one `modprobe` attempt), else a FUSE helper with a usable
//! `/dev/fuse`. The answer is a mount method or the reason the type must be skipped.

use crate::fs::command;
use crate::fs::types::FsType;
use crate::os::is_root;

/// Does the running kernel know this file system (`/proc/filesystems`)?
pub fn kernel_has(fs_type: &str) -> bool {
    std::fs::read_to_string("/proc/filesystems")
        .map(|s| {
            s.lines()
                .any(|l| l.split_whitespace().last() == Some(fs_type))
        })
        .unwrap_or(false)
}

/// The file system of a mount as iolab names it (the type table's canonical name: `ntfs`,
/// `exfat`, `vfat`), where the kernel names only the FUSE mount: `fuseblk` (ntfs-3g,
/// mount.exfat-fuse on a block device) is named by the device's signature (blkid, else the
/// udev database, which needs no root); `fuse.fusefat`, `fuse.ntfs-3g`, `fuse.exfat` by
/// their helper. Any other type is returned as it is (`ext4`); so is `fuseblk` when its
/// device cannot be identified.
pub fn fs_name(m: &crate::sysinfo::mounts::MountInfo) -> String {
    let canonical = |t: &str| crate::fs::types::lookup(t).map(|f| f.name.to_string());
    let named = match m.fs_type.as_str() {
        "fuseblk" => crate::fs::facts::fs_signature(std::path::Path::new(&m.source))
            .or_else(|| udev_fs_type(&m.dev))
            .and_then(|sig| canonical(&sig)),
        "fuse.fusefat" => Some("vfat".to_string()),
        "fuse.ntfs-3g" | "fuse.lowntfs-3g" => Some("ntfs".to_string()),
        "fuse.exfat" | "fuse.exfat-fuse" => Some("exfat".to_string()),
        _ => None,
    };
    named.unwrap_or_else(|| m.fs_type.clone())
}

/// The file-system type udev's probe recorded for block device `major:minor`.
fn udev_fs_type(majmin: &str) -> Option<String> {
    let db = std::fs::read_to_string(format!("/run/udev/data/b{majmin}")).ok()?;
    db.lines()
        .find_map(|l| l.strip_prefix("E:ID_FS_TYPE="))
        .filter(|t| !t.is_empty())
        .map(str::to_string)
}

/// How a type will be mounted here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MountMethod {
    /// `mount -t <driver>`.
    Kernel(&'static str),
    /// `<helper> [-o opts] device dir`.
    Fuse(&'static str),
}

impl MountMethod {
    /// `kernel xfs`, `FUSE ntfs-3g` (for tables and results).
    pub fn describe(&self) -> String {
        match self {
            MountMethod::Kernel(d) => format!("kernel {d}"),
            MountMethod::Fuse(h) => format!("FUSE {h}"),
        }
    }
}

/// Is the kernel driver there, loading its module once if needed?
fn kernel_driver(driver: &str) -> bool {
    if kernel_has(driver) {
        return true;
    }
    // Ask once for the module: a modular driver is not listed until loaded.
    command::have("modprobe")
        && command::run("modprobe", ["-q", driver]).is_ok()
        && kernel_has(driver)
}

/// Can FUSE file systems be mounted (the device opens read-write)?
pub fn fuse_usable() -> Result<(), String> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/fuse")
        .map(|_| ())
        .map_err(|e| format!("/dev/fuse is not usable ({e})"))
}

/// The mount method for `t`, or why it cannot run here (the row's "skipped: <reason>").
pub fn availability(t: &FsType) -> Result<MountMethod, String> {
    if !is_root() {
        return Err("formatting and mounting need root".into());
    }
    // Both reasons when both are missing: installing the tool alone would only lead to the
    // next skip.
    match (t.mkfs.filter(|m| !command::have(m)), mount_method(t)) {
        (None, mount) => mount,
        (Some(mkfs), Ok(_)) => Err(format!("{mkfs} is not installed")),
        (Some(mkfs), Err(why)) => Err(format!("{mkfs} is not installed, and {why}")),
    }
}

/// How `t` would be mounted here (kernel driver first, then FUSE), or why it cannot be.
fn mount_method(t: &FsType) -> Result<MountMethod, String> {
    if let Some(driver) = t.kernel
        && kernel_driver(driver)
    {
        return Ok(MountMethod::Kernel(driver));
    }
    let no_driver = match t.kernel {
        Some(d) => {
            format!("no {d} driver in this kernel (not in /proc/filesystems, modprobe {d} failed)")
        }
        None => "no kernel driver".to_string(),
    };
    match t.fuse_helper {
        None => Err(no_driver),
        Some(h) if !command::have(h) => Err(format!(
            "{no_driver} and the FUSE helper {h} is not installed"
        )),
        Some(h) => match fuse_usable() {
            Ok(()) => Ok(MountMethod::Fuse(h)),
            Err(e) => Err(format!("{no_driver} and {e} for {h}")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_driver_and_missing_tool_give_reasons() {
        let t = FsType {
            name: "nosuchfs",
            mkfs: Some("mkfs.nosuchfs-iolab"),
            kernel: Some("nosuchfs"),
            ..*crate::fs::types::lookup("ext4").unwrap()
        };
        let reason = availability(&t).unwrap_err();
        assert!(
            reason.contains("not installed") || reason.contains("root"),
            "{reason}"
        );
        let t2 = FsType { mkfs: None, ..t };
        if is_root() {
            let reason = availability(&t2).unwrap_err();
            assert!(reason.contains("no nosuchfs driver"), "{reason}");
        }
    }

    #[test]
    fn describe_names_the_method() {
        assert_eq!(MountMethod::Kernel("xfs").describe(), "kernel xfs");
        assert_eq!(MountMethod::Fuse("ntfs-3g").describe(), "FUSE ntfs-3g");
    }
}

//! What the console shows of this machine: block devices (sysfs) and mounted file systems
//! (`/proc/self/mountinfo`, kernel interfaces left out), and `iolab info` of one of them with
//! health (SMART). Only a listed device or mount point can be asked about.

use std::path::Path;

use serde::Serialize;

use crate::model::device::{BlockDeviceInfo, StorageInfo};
use crate::sysinfo::resolve::{FsClass, classify_fs};

/// One mounted file system.
#[derive(Debug, Clone, Serialize)]
pub struct FsRow {
    pub mount_point: String,
    pub fs_type: String,
    pub source: String,
    pub options: String,
    /// `block`, `memory`, `network`, `fuse`, `overlay`.
    pub class: String,
    pub size_bytes: Option<u64>,
    pub free_bytes: Option<u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    pub hostname: String,
    pub devices: Vec<BlockDeviceInfo>,
    pub filesystems: Vec<FsRow>,
}

/// Every block device with a size (unattached loop devices have none), partitions too.
fn devices() -> Vec<BlockDeviceInfo> {
    crate::sysinfo::blockdev::list_dir(Path::new("/sys/class/block"))
        .iter()
        .filter_map(|n| crate::sysinfo::blockdev::details(n))
        .filter(|d| d.size_bytes > 0)
        .collect()
}

fn filesystems() -> Vec<FsRow> {
    // A mount point mounted over is listed once: the last mount there is the one visible.
    let mut mounts = crate::sysinfo::mounts::all_mounts();
    let mut seen = std::collections::HashSet::new();
    mounts.reverse();
    mounts.retain(|m| seen.insert(m.mount_point.clone()));
    mounts.reverse();
    mounts
        .into_iter()
        .filter_map(|m| {
            let class = match classify_fs(&m.fs_type) {
                FsClass::Pseudo => return None,
                FsClass::Block => "block",
                FsClass::Memory => "memory",
                FsClass::Network => "network",
                FsClass::Fuse => "fuse",
                FsClass::Overlay => "overlay",
            };
            let st = nix::sys::statvfs::statvfs(&m.mount_point).ok();
            Some(FsRow {
                mount_point: m.mount_point.display().to_string(),
                fs_type: m.fs_type,
                source: m.source,
                options: m.options,
                class: class.into(),
                size_bytes: st.as_ref().map(|s| s.blocks() * s.fragment_size()),
                free_bytes: st
                    .as_ref()
                    .map(|s| s.blocks_available() * s.fragment_size()),
            })
        })
        .collect()
}

pub fn machine() -> Machine {
    Machine {
        hostname: crate::sysinfo::capture_hostname(),
        devices: devices(),
        filesystems: filesystems(),
    }
}

/// `iolab info` of a listed device (`/dev/NAME`) or mount point, with SMART. Anything else
/// is refused: the console does not look at arbitrary paths.
pub fn info(path: &str) -> Result<StorageInfo, String> {
    let m = machine();
    let listed = m.devices.iter().any(|d| d.dev_path == path)
        || m.filesystems.iter().any(|f| f.mount_point == path);
    if !listed || !Path::new(path).is_absolute() {
        return Err(format!(
            "{path}: not a device or mount point of this machine's list"
        ));
    }
    let mut info = crate::sysinfo::resolve::storage_info(path).map_err(|e| e.to_string())?;
    info.smart = crate::sysinfo::smart::smart_for_chain(&info.devices);
    Ok(info)
}

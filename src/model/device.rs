//! What the block device saw (`/proc/diskstats` deltas over a phase), and what `iolab info`
//! reports about the storage under a path: the device chain, sysfs details and SMART.

use serde::{Deserialize, Serialize};

/// Counter deltas of one block device over one phase (sectors are 512 bytes in diskstats).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct DeviceCounters {
    /// Kernel name (`loop3`, `sda`).
    pub device: String,
    pub read_ios: u64,
    pub read_merges: u64,
    pub read_bytes: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_bytes: u64,
    pub discard_bytes: u64,
    pub flush_ios: u64,
    /// Milliseconds the device had I/O in flight (`io_ticks`).
    pub busy_ms: u64,
    /// Wall time of the phase the deltas cover.
    pub elapsed_ms: u64,
    /// For a loop device: the same deltas on the device holding its backing file (that
    /// device is usually shared, so other activity on the machine counts there too).
    pub backing: Option<Box<DeviceCounters>>,
}

/// `iolab info --json`: the storage under one path or device.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct StorageInfo {
    /// What the user asked about, as given.
    pub query: String,
    /// The canonical path (a file, a directory or a device node).
    pub path: String,
    /// The mount holding the path (absent for a device node that is not mounted).
    pub mount: Option<MountView>,
    /// `block` (a file system on a block device), `memory` (tmpfs, ramfs), `pseudo` (proc,
    /// sysfs, ...), `network` (nfs, cifs, ...), `fuse` (no block device), `overlay`, `device`
    /// (a block device node was asked).
    pub kind: String,
    /// Why there is no block device and so no device counters, when there is none.
    pub no_device_reason: Option<String>,
    /// The device chain, top first: the device holding the path, then what it sits on
    /// (partition -> disk, loop -> the device of its backing file, dm/md -> slaves).
    pub devices: Vec<BlockDeviceInfo>,
    /// SMART of the physical devices at the bottom of the chain (or why there is none).
    pub smart: Vec<SmartInfo>,
    /// How aged the layout is (`--layout`).
    pub layout: Option<super::layout::LayoutSummary>,
}

/// A mount as `/proc/self/mountinfo` shows it.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MountView {
    pub mount_point: String,
    pub fs_type: String,
    /// The file system in it when `fs_type` names only the FUSE mount (`fuseblk` of ntfs-3g
    /// or exfat-fuse: `ntfs`, `exfat`), from the device's signature.
    pub fs_name: Option<String>,
    pub source: String,
    pub options: String,
}

/// One block device of the chain, from sysfs.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct BlockDeviceInfo {
    /// Kernel name (`sda1`, `loop3`, `nvme0n1`, `dm-0`).
    pub name: String,
    /// `/dev/NAME`.
    pub dev_path: String,
    /// `major:minor`.
    pub maj_min: String,
    /// `disk`, `partition`, `loop`, `dm`, `md`, `zram`, `ram`.
    pub kind: String,
    /// How it relates to the entry named in `under`: `holds-path` (top, for a path),
    /// `asked` (top, when a device was asked), `partition-of`
    /// (the disk of a partition), `backs-loop` (holds a loop's backing file), `slave-of`
    /// (a dm/md member), `fs-member` (another device of the multi-device file system, a
    /// btrfs, that `under` holds).
    pub relation: String,
    /// The device above this one in the chain.
    pub under: Option<String>,
    pub size_bytes: u64,
    pub partition_number: Option<u32>,
    pub partition_start_bytes: Option<u64>,
    pub model: Option<String>,
    pub vendor: Option<String>,
    pub serial: Option<String>,
    pub firmware: Option<String>,
    /// `nvme`, `sata`, `usb`, `scsi`, `virtio`, `mmc`, `loop`, ... (from the sysfs path).
    pub transport: Option<String>,
    pub rotational: Option<bool>,
    pub read_only: Option<bool>,
    pub removable: Option<bool>,
    pub logical_block_size: Option<u32>,
    pub physical_block_size: Option<u32>,
    /// Request queue depth of the block layer (`queue/nr_requests`).
    pub nr_requests: Option<u32>,
    /// Largest request the block layer sends (`queue/max_sectors_kb`, in bytes): larger I/Os
    /// are split into requests of at most this size.
    pub max_request_bytes: Option<u64>,
    /// The hardware's own limit (`queue/max_hw_sectors_kb`): how far `max_sectors_kb` could
    /// be raised.
    pub max_hw_request_bytes: Option<u64>,
    /// Scatter-gather segments per request (`queue/max_segments`) and the largest segment
    /// (`queue/max_segment_size`): an I/O whose buffer spans more physically separate pieces
    /// is split too, whatever its size (a 1 MiB buffer on scattered 4 KiB pages is 256).
    pub max_segments: Option<u32>,
    pub max_segment_bytes: Option<u64>,
    /// The active I/O scheduler (`none`, `mq-deadline`, `bfq`, ...).
    pub scheduler: Option<String>,
    /// Largest discard (TRIM) request; 0 = no discard support.
    pub discard_max_bytes: Option<u64>,
    pub discard_granularity: Option<u64>,
    /// `write back` (volatile cache, flushes needed) or `write through`.
    pub write_cache: Option<String>,
    pub fua: Option<bool>,
    /// Negotiated link: `SATA 6.0 Gbps`, `PCIe 8.0 GT/s PCIe x4`, `USB 5000 Mbps`.
    pub link_speed: Option<String>,
    /// For a loop device: the file behind it, and whether the loop uses direct I/O on it.
    pub loop_backing_file: Option<String>,
    /// `true` when that file was deleted (the kernel's " (deleted)"): the loop still holds
    /// it, but no directory names it any more.
    pub loop_backing_deleted: Option<bool>,
    pub loop_direct_io: Option<bool>,
    pub loop_offset_bytes: Option<u64>,
    /// Device-mapper name (`dm/name`) or md RAID level (`md/level`).
    pub dm_name: Option<String>,
    pub md_level: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slaves: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub holders: Vec<String>,
    /// `/proc/diskstats` totals since boot: what every phase's counters are deltas of.
    pub read_since_boot_bytes: Option<u64>,
    pub written_since_boot_bytes: Option<u64>,
}

/// SMART / health of one physical device through `smartctl --json`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SmartInfo {
    /// Kernel name of the device asked.
    pub device: String,
    pub available: bool,
    /// Why SMART is not available (not installed, not root, loop device, no SMART, ...).
    pub reason: Option<String>,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub firmware: Option<String>,
    /// SMART overall self-assessment.
    pub health_passed: Option<bool>,
    pub temperature_c: Option<i64>,
    pub power_on_hours: Option<u64>,
    /// Percentage of the rated endurance used (NVMe `percentage_used`, ATA "Percentage Used
    /// Endurance Indicator"); may exceed 100.
    pub percentage_used: Option<u64>,
    /// Bytes written by the host over the device's life (NVMe data units x 512,000).
    pub data_written_bytes: Option<u64>,
    /// NVMe media and data integrity errors, or ATA reported uncorrectable errors.
    pub media_errors: Option<u64>,
    /// ATA reallocated sectors.
    pub reallocated_sectors: Option<u64>,
    /// Interface speed as smartctl reports it (`6.0 Gb/s`).
    pub interface_speed: Option<String>,
}

/// `iolab endurance --json`: the lifetime of an SSD at a daily write volume.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct EnduranceReport {
    /// Rated endurance (terabytes written), bytes.
    pub tbw_bytes: u64,
    /// What the application writes per day, bytes.
    pub daily_app_bytes: u64,
    /// Write amplification applied (1 unless measured or given).
    pub write_amplification: f64,
    /// Where the write amplification came from: `assumed`, `--wa`, or the result file.
    pub write_amplification_source: String,
    /// What the device writes per day: daily x write amplification.
    pub daily_device_bytes: f64,
    /// Percentage of the rated endurance already used, and where that came from.
    pub used_pct: f64,
    pub used_source: String,
    /// Rated endurance not used yet.
    pub remaining_bytes: f64,
    pub days: f64,
    /// Days / 365.25.
    pub years: f64,
    /// The day the rated TBW is reached (today + days), `YYYY-MM-DD`.
    pub end_date: Option<String>,
    /// The answer in one sentence.
    pub sentence: String,
    /// Per-test write amplification from `--from` (test name, WA).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_test: Vec<(String, f64)>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

//! One block device's details from sysfs: identity (model, vendor, serial, firmware), size,
//! queue settings (block sizes, nr_requests, scheduler, discard, write cache) and the link it
//! hangs on (SATA, PCIe, USB), found by walking up its sysfs device path.

use std::path::{Path, PathBuf};

use super::read_trim;
use crate::model::device::BlockDeviceInfo;

/// `/sys/class/block/NAME`, resolved to its real place under `/sys/devices`.
pub fn sysfs_dir(name: &str) -> Option<PathBuf> {
    std::fs::canonicalize(Path::new("/sys/class/block").join(name)).ok()
}

/// Does a block device of this kernel name exist?
pub fn exists(name: &str) -> bool {
    !name.is_empty() && !name.contains('/') && sysfs_dir(name).is_some()
}

fn num<T: std::str::FromStr>(p: &Path) -> Option<T> {
    read_trim(p)?.parse().ok()
}

/// A sysfs string that is really there (not empty, not all blanks).
fn text(p: &Path) -> Option<String> {
    read_trim(p).filter(|s| !s.is_empty())
}

/// `disk`, `partition`, `loop`, `dm`, `md`, `zram`, `ram`, `nbd`.
pub fn kind_of(name: &str, sys: &Path) -> &'static str {
    if sys.join("partition").exists() {
        "partition"
    } else if sys.join("dm").is_dir() {
        "dm"
    } else if sys.join("md").is_dir() {
        "md"
    } else if name.starts_with("loop") {
        "loop"
    } else if name.starts_with("zram") {
        "zram"
    } else if name.starts_with("ram") {
        "ram"
    } else if name.starts_with("nbd") {
        "nbd"
    } else {
        "disk"
    }
}

/// sysfs's name of the file behind loop device `name`, as the kernel writes it (with
/// " (deleted)" at the end once the file is gone).
fn loop_backing_text(name: &str) -> Option<String> {
    text(
        &Path::new("/sys/class/block")
            .join(name)
            .join("loop/backing_file"),
    )
}

/// The file behind loop device `name` (without the kernel's " (deleted)" suffix).
pub fn loop_backing_file(name: &str) -> Option<String> {
    let f = loop_backing_text(name)?;
    Some(f.trim_end_matches(" (deleted)").to_string())
}

/// Was the file behind loop device `name` deleted (sysfs ends its name with " (deleted)")?
pub fn loop_backing_deleted(name: &str) -> bool {
    loop_backing_text(name).is_some_and(|f| f.ends_with(" (deleted)"))
}

/// How the device is attached, from the components of its sysfs path.
fn transport_of(sys: &Path, kind: &str) -> Option<String> {
    let p = sys.to_string_lossy();
    let t = if matches!(kind, "loop" | "dm" | "md" | "zram" | "ram" | "nbd") {
        kind
    } else if p.contains("/nvme") {
        "nvme"
    } else if p.contains("/usb") {
        "usb"
    } else if p.split('/').any(is_ata_port) {
        "sata"
    } else if p.contains("/virtio") {
        "virtio"
    } else if p.contains("/mmc") {
        "mmc"
    } else if p.contains("/target") {
        "scsi"
    } else {
        return None;
    };
    Some(t.to_string())
}

fn is_ata_port(c: &str) -> bool {
    c.strip_prefix("ata")
        .is_some_and(|n| !n.is_empty() && n.chars().all(|ch| ch.is_ascii_digit()))
}

/// The negotiated link speed, where sysfs exposes it.
fn link_speed_of(sys: &Path, transport: Option<&str>) -> Option<String> {
    match transport? {
        "sata" => {
            let port = sys
                .to_string_lossy()
                .split('/')
                .find(|c| is_ata_port(c))?
                .trim_start_matches("ata")
                .to_string();
            let spd = text(Path::new(&format!(
                "/sys/class/ata_link/link{port}/sata_spd"
            )))?;
            Some(format!("SATA {spd}"))
        }
        "usb" => sys.ancestors().find_map(|a| {
            if !a.join("idVendor").exists() {
                return None;
            }
            let speed = text(&a.join("speed"))?;
            let version = text(&a.join("version")).map(|v| format!(" (USB {v})"));
            Some(format!("USB {speed} Mbps{}", version.unwrap_or_default()))
        }),
        t => sys.ancestors().find_map(pcie_link).or_else(|| {
            // NVMe multipath namespaces hang off a virtual subsystem; its controllers
            // (`device/nvme0`) lead to the PCIe function.
            if t != "nvme" {
                return None;
            }
            std::fs::read_dir(sys.join("device"))
                .ok()?
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("nvme"))
                .find_map(|e| pcie_link(&e.path().join("device")))
        }),
    }
}

/// `PCIe 8.0 GT/s PCIe x4` from a PCI device directory.
fn pcie_link(dir: &Path) -> Option<String> {
    let speed = text(&dir.join("current_link_speed"))?;
    Some(match text(&dir.join("current_link_width")) {
        Some(w) => format!("PCIe {speed} x{w}"),
        None => format!("PCIe {speed}"),
    })
}

/// World Wide Name: `wwid` (NVMe: `eui.…`, `nvme.…`) or `device/wwid` (SCSI/ATA: `naa.…`).
pub fn wwn_of(sys: &Path) -> Option<String> {
    text(&sys.join("wwid")).or_else(|| text(&sys.join("device/wwid")))
}

/// Serial number: `serial` (virtio, NVMe), `device/serial`, or SCSI VPD page 0x80.
pub fn serial_of(sys: &Path) -> Option<String> {
    text(&sys.join("serial"))
        .or_else(|| text(&sys.join("device/serial")))
        .or_else(|| {
            // VPD page 0x80: 4 header bytes, then the ASCII serial (root-readable only).
            let raw = std::fs::read(sys.join("device/vpd_pg80")).ok()?;
            let s = String::from_utf8_lossy(raw.get(4..)?).trim().to_string();
            (!s.is_empty()).then_some(s)
        })
}

/// Block device `name`'s link under `dir` (`/dev/disk`): `by-id/NAME` (not a `wwn-` one,
/// which repeats the WWN), else `by-path/NAME`; the first in name order. What names a disk
/// without a model or serial across reboots (udev makes them; none without udev).
pub fn disk_link(dir: &Path, name: &str) -> Option<String> {
    for (sub, skip) in [("by-id", "wwn-"), ("by-path", "\0")] {
        let mut links: Vec<String> = std::fs::read_dir(dir.join(sub))
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| {
                std::fs::read_link(e.path()).is_ok_and(|t| t.file_name().is_some_and(|f| f == name))
            })
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|l| !l.starts_with(skip))
            .collect();
        links.sort();
        if let Some(l) = links.into_iter().next() {
            return Some(format!("{sub}/{l}"));
        }
    }
    None
}

/// PCI vendor ids worth a name where sysfs gives only the number.
fn vendor_name(v: String) -> String {
    match v.as_str() {
        "0x1af4" => "0x1af4 (Red Hat virtio)".into(),
        "0x144d" => "0x144d (Samsung)".into(),
        "0x8086" => "0x8086 (Intel)".into(),
        _ => v,
    }
}

/// Everything sysfs says about block device `name`. `None` when there is no such device.
pub fn details(name: &str) -> Option<BlockDeviceInfo> {
    let sys = sysfs_dir(name)?;
    let kind = kind_of(name, &sys);
    // Queue settings live on the whole disk for a partition.
    let q = super::queue_dir(&sys).join("queue");
    let disk = super::queue_dir(&sys);
    let transport = transport_of(&sys, kind);
    let mut info = BlockDeviceInfo {
        name: name.to_string(),
        dev_path: format!("/dev/{name}"),
        maj_min: read_trim(&sys.join("dev")).unwrap_or_default(),
        kind: kind.into(),
        size_bytes: num::<u64>(&sys.join("size")).unwrap_or(0) * 512,
        read_only: read_trim(&sys.join("ro")).map(|v| v == "1"),
        removable: read_trim(&disk.join("removable")).map(|v| v == "1"),
        rotational: read_trim(&q.join("rotational")).map(|v| v == "1"),
        logical_block_size: num(&q.join("logical_block_size")),
        physical_block_size: num(&q.join("physical_block_size")),
        nr_requests: num(&q.join("nr_requests")),
        max_request_bytes: num::<u64>(&q.join("max_sectors_kb")).map(|k| k * 1024),
        max_hw_request_bytes: num::<u64>(&q.join("max_hw_sectors_kb")).map(|k| k * 1024),
        max_segments: num(&q.join("max_segments")),
        max_segment_bytes: num(&q.join("max_segment_size")),
        scheduler: read_trim(&q.join("scheduler")).and_then(|s| active_scheduler(&s)),
        discard_max_bytes: num(&q.join("discard_max_bytes")),
        discard_granularity: num(&q.join("discard_granularity")),
        write_cache: text(&q.join("write_cache")),
        fua: read_trim(&q.join("fua")).map(|v| v == "1"),
        link_speed: link_speed_of(&sys, transport.as_deref()),
        transport,
        slaves: list_dir(&sys.join("slaves")),
        holders: list_dir(&sys.join("holders")),
        dm_name: text(&sys.join("dm/name")),
        md_level: text(&sys.join("md/level")),
        ..Default::default()
    };
    if let Some(d) = super::procdiskstats::read(name) {
        info.read_since_boot_bytes = Some(d.read_sectors * 512);
        info.written_since_boot_bytes = Some(d.write_sectors * 512);
    }
    if kind == "partition" {
        info.partition_number = num(&sys.join("partition"));
        info.partition_start_bytes = num::<u64>(&sys.join("start")).map(|s| s * 512);
    } else {
        let dev = sys.join("device");
        info.model = text(&dev.join("model")).or_else(|| {
            (info.transport.as_deref() == Some("virtio")).then(|| "virtio-blk".to_string())
        });
        info.vendor = text(&dev.join("vendor")).map(vendor_name);
        info.serial = serial_of(&sys);
        info.firmware = text(&dev.join("firmware_rev")).or_else(|| text(&dev.join("rev")));
    }
    if kind == "loop" {
        info.loop_backing_file = loop_backing_file(name);
        info.loop_backing_deleted = loop_backing_deleted(name).then_some(true);
        info.loop_direct_io = read_trim(&sys.join("loop/dio")).map(|v| v == "1");
        info.loop_offset_bytes = num(&sys.join("loop/offset"));
    }
    Some(info)
}

/// `none [mq-deadline] kyber` -> `mq-deadline`; a lone `none` stays `none`.
pub fn active_scheduler(s: &str) -> Option<String> {
    if let (Some(a), Some(b)) = (s.find('['), s.find(']')) {
        return s.get(a + 1..b).map(str::to_string);
    }
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// The names in directory `p`, sorted (none when it cannot be read).
pub fn list_dir(p: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(p)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduler_in_brackets() {
        assert_eq!(
            active_scheduler("none [mq-deadline] kyber bfq").as_deref(),
            Some("mq-deadline")
        );
        assert_eq!(active_scheduler("none").as_deref(), Some("none"));
        assert_eq!(active_scheduler(""), None);
    }

    #[test]
    fn a_disk_is_named_by_its_id_link_else_its_path_link() {
        let d = tempfile::tempdir().unwrap();
        let link = |sub: &str, name: &str, to: &str| {
            std::fs::create_dir_all(d.path().join(sub)).unwrap();
            std::os::unix::fs::symlink(to, d.path().join(sub).join(name)).unwrap();
        };
        link("by-path", "pci-0000:00:05.0", "../../vdb");
        link("by-path", "pci-0000:00:04.0", "../../vda");
        assert_eq!(
            disk_link(d.path(), "vdb").as_deref(),
            Some("by-path/pci-0000:00:05.0")
        );
        link("by-id", "wwn-0x5000", "../../vdb");
        link("by-id", "virtio-S2", "../../vdb");
        link("by-id", "virtio-S2-part1", "../../vdb1");
        assert_eq!(
            disk_link(d.path(), "vdb").as_deref(),
            Some("by-id/virtio-S2")
        );
        assert_eq!(disk_link(d.path(), "vdc"), None);
        assert_eq!(disk_link(&d.path().join("none"), "vdb"), None);
    }

    #[test]
    fn ata_ports() {
        assert!(is_ata_port("ata3"));
        assert!(!is_ata_port("ata"));
        assert!(!is_ata_port("ata_port"));
    }

    #[test]
    fn transport_from_sysfs_path() {
        let t = |p: &str| transport_of(Path::new(p), "disk");
        assert_eq!(
            t("/sys/devices/pci0000:00/0000:00:17.0/ata3/host2/target2:0:0/2:0:0:0/block/sda")
                .as_deref(),
            Some("sata")
        );
        assert_eq!(
            t("/sys/devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1").as_deref(),
            Some("nvme")
        );
        assert_eq!(
            t("/sys/devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host4/target4:0:0/4:0:0:0/block/sdb")
                .as_deref(),
            Some("usb")
        );
        assert_eq!(
            t("/sys/devices/pci0000:00/0000:00:02.0/virtio1/block/vda").as_deref(),
            Some("virtio")
        );
    }

    #[test]
    fn unknown_device_has_no_details() {
        assert!(details("no-such-device-iolab").is_none());
        assert!(!exists("no-such-device-iolab"));
        assert!(!exists("../vda"));
    }
}

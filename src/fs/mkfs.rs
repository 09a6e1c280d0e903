//! Formatting a device from the type table, and reading the allocation unit that mkfs really
//! made (Belov's NTFS tests: a formatter silently made 1 KiB clusters when asked for 2 KiB).

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use crate::fs::command;
use crate::fs::types::{FsType, ReadBack};

/// The full mkfs command line for `t` with `unit` and the user's `extra` arguments
/// (`--mkfs-opts`, after iolab's own) on `device` of `size` bytes (program first).
pub fn mkfs_command(
    t: &FsType,
    unit: Option<u64>,
    extra: &[String],
    size: Option<u64>,
    device: &Path,
) -> Result<Vec<String>, String> {
    let Some(prog) = t.mkfs else {
        return Ok(Vec::new());
    };
    let mut argv = vec![prog.to_string()];
    argv.extend(t.mkfs_flags.iter().map(|s| s.to_string()));
    argv.extend(t.size_args(size).iter().map(|s| s.to_string()));
    argv.extend(t.unit_args(unit)?);
    argv.extend(extra.iter().cloned());
    argv.push(device.display().to_string());
    Ok(argv)
}

/// Run mkfs (no-op for types without one, e.g. tmpfs).
pub fn format(
    t: &FsType,
    unit: Option<u64>,
    extra: &[String],
    size: Option<u64>,
    device: &Path,
) -> Result<(), anyhow::Error> {
    let argv = mkfs_command(t, unit, extra, size, device).map_err(anyhow::Error::msg)?;
    if let Some((prog, args)) = argv.split_first() {
        command::run(prog, args)?;
    }
    Ok(())
}

fn read_at(device: &Path, offset: u64, len: usize) -> Result<Vec<u8>, String> {
    let mut f = std::fs::File::open(device).map_err(|e| format!("{}: {e}", device.display()))?;
    f.seek(SeekFrom::Start(offset))
        .map_err(|e| format!("{}: {e}", device.display()))?;
    let mut buf = vec![0u8; len];
    f.read_exact(&mut buf)
        .map_err(|e| format!("{}: {e}", device.display()))?;
    Ok(buf)
}

/// Parse "Key:   value" out of tool output.
fn field_after<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines()
        .find_map(|l| l.strip_prefix(key).map(|rest| rest.trim()))
}

fn dumpe2fs_unit(device: &Path) -> Result<u64, String> {
    let out =
        command::run("dumpe2fs", ["-h".as_ref(), device.as_os_str()]).map_err(|e| e.to_string())?;
    // With bigalloc the allocation unit is the cluster, not the block.
    let v = field_after(&out, "Cluster size:")
        .or_else(|| field_after(&out, "Block size:"))
        .ok_or("dumpe2fs printed no block size")?;
    v.parse().map_err(|_| format!("dumpe2fs block size '{v}'"))
}

fn xfs_info_unit(mount_point: &Path) -> Result<u64, String> {
    let out = command::run("xfs_info", [mount_point]).map_err(|e| e.to_string())?;
    let data = out
        .lines()
        .find(|l| l.trim_start().starts_with("data"))
        .ok_or("xfs_info printed no data section")?;
    parse_bsize(data).ok_or_else(|| format!("no bsize= in xfs_info line '{data}'"))
}

fn parse_bsize(line: &str) -> Option<u64> {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix("bsize="))
        .and_then(|v| v.parse().ok())
}

fn boot_sector_unit(rb: ReadBack, device: &Path) -> Result<u64, String> {
    let b = read_at(device, 0, 512)?;
    let bps = u16::from_le_bytes([b[11], b[12]]) as u64;
    match rb {
        ReadBack::FatBootSector => Ok(bps * b[13] as u64),
        ReadBack::ExfatBootSector => {
            let (bps_shift, spc_shift) = (b[108] as u32, b[109] as u32);
            if bps_shift > 12 || spc_shift > 25 {
                return Err(format!(
                    "exFAT boot sector has shifts {bps_shift}/{spc_shift}"
                ));
            }
            Ok((1u64 << bps_shift) << spc_shift)
        }
        ReadBack::NtfsBootSector => {
            let spc = b[13];
            Ok(if spc > 0x80 {
                bps << (256 - spc as u32)
            } else {
                bps * spc as u64
            })
        }
        _ => Err("not a boot-sector type".into()),
    }
}

/// The cluster of the FAT, exFAT or NTFS file system on `device`, told apart by its boot
/// sector (OEM name `NTFS    ` or `EXFAT   `, else a FAT boot signature and BPB); None for
/// anything else or an unreadable device. FUSE drivers do not report it: fusefat's statvfs
/// says 1 KiB whatever the cluster.
pub fn boot_sector_cluster(device: &Path) -> Option<u64> {
    let b = read_at(device, 0, 512).ok()?;
    let rb = match &b[3..11] {
        b"NTFS    " => ReadBack::NtfsBootSector,
        b"EXFAT   " => ReadBack::ExfatBootSector,
        _ if b[510] == 0x55
            && b[511] == 0xAA
            && (&b[82..87] == b"FAT32" || &b[54..57] == b"FAT") =>
        {
            ReadBack::FatBootSector
        }
        _ => return None,
    };
    boot_sector_unit(rb, device)
        .ok()
        .filter(|u| u.is_power_of_two() && *u >= 512)
}

/// The allocation unit the file system really has. Device-side methods run on `device`,
/// mount-side ones on `mount_point`.
pub fn read_unit(t: &FsType, device: Option<&Path>, mount_point: &Path) -> Result<u64, String> {
    let dev = || device.ok_or_else(|| format!("{} has no device to read", t.name));
    let unit = match t.read_back {
        ReadBack::Dumpe2fs => dumpe2fs_unit(dev()?)?,
        ReadBack::XfsInfo => xfs_info_unit(mount_point)?,
        ReadBack::Statvfs => nix::sys::statvfs::statvfs(mount_point)
            .map_err(|e| format!("statvfs {}: {e}", mount_point.display()))?
            .block_size() as u64,
        rb => boot_sector_unit(rb, dev()?)?,
    };
    if unit == 0 {
        return Err(format!("{} reports an allocation unit of 0", t.name));
    }
    Ok(unit)
}

/// Whether the file system on `device` really has a journal, where that can be read back
/// (ext2/3/4: `has_journal` among dumpe2fs's features; `--mkfs-opts '-O ^has_journal'`
/// makes an ext4 without one). None for the other types: their table entry says it.
pub fn read_journal(t: &FsType, device: Option<&Path>) -> Option<bool> {
    if t.read_back != ReadBack::Dumpe2fs {
        return None;
    }
    let out = command::run("dumpe2fs", ["-h".as_ref(), device?.as_os_str()]).ok()?;
    has_journal(&out)
}

fn has_journal(dumpe2fs: &str) -> Option<bool> {
    field_after(dumpe2fs, "Filesystem features:")
        .map(|f| f.split_whitespace().any(|w| w == "has_journal"))
}

/// A configuration is reported only with the unit it asked for (None = any default).
pub fn check_unit(asked: Option<u64>, made: u64) -> Result<(), String> {
    match asked {
        Some(a) if a != made => Err(format!(
            "asked for an allocation unit of {}, mkfs made {}: refused",
            crate::units::fmt_size_exact(a),
            crate::units::fmt_size_exact(made)
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_tool_output() {
        assert_eq!(
            parse_bsize("data     =                       bsize=4096   blocks=76800, imaxpct=25"),
            Some(4096)
        );
        let d = "Block count:              65536\nBlock size:               1024\n";
        assert_eq!(field_after(d, "Block size:"), Some("1024"));
        let f = "Filesystem features:      has_journal ext_attr resize_inode dir_index\n";
        assert_eq!(has_journal(f), Some(true));
        let f = "Filesystem features:      ext_attr resize_inode dir_index filetype extent\n";
        assert_eq!(has_journal(f), Some(false));
        assert_eq!(has_journal(d), None);
    }

    #[test]
    fn mkfs_command_comes_from_the_table() {
        let t = crate::fs::types::lookup("ntfs").unwrap();
        let argv = mkfs_command(t, Some(2048), &[], None, Path::new("/dev/loop9")).unwrap();
        assert_eq!(argv, ["mkfs.ntfs", "-F", "-Q", "-c", "2048", "/dev/loop9"]);
        let ext4 = crate::fs::types::lookup("ext4").unwrap();
        let argv = mkfs_command(ext4, Some(1024), &[], Some(256 << 20), Path::new("D")).unwrap();
        assert_eq!(
            argv.join(" "),
            "mkfs.ext4 -F -q -E lazy_itable_init=0,lazy_journal_init=0 -T default -b 1024 D"
        );
        let tmpfs = crate::fs::types::lookup("tmpfs").unwrap();
        assert!(
            mkfs_command(tmpfs, None, &[], None, Path::new("x"))
                .unwrap()
                .is_empty()
        );
    }

    /// A fresh ext2/3/4 has nothing left to write in the background: with mke2fs's lazy
    /// defaults, ext4lazyinit wrote 16 MiB of inode tables to a 1 GiB image during the
    /// matrix's first tests (a read test's device "wrote 16.0 MiB while the test wrote 0 B").
    #[test]
    fn ext_file_systems_are_made_without_lazy_init() {
        for name in ["ext2", "ext3", "ext4"] {
            let t = crate::fs::types::lookup(name).unwrap();
            for unit in [None, Some(1024), Some(65536).filter(|_| name == "ext4")] {
                let argv = mkfs_command(t, unit, &[], None, Path::new("/dev/loop9")).unwrap();
                assert!(
                    argv.windows(2)
                        .any(|w| w == ["-E", "lazy_itable_init=0,lazy_journal_init=0"]),
                    "{name} {unit:?}: {argv:?}"
                );
            }
        }
    }

    #[test]
    fn boot_sectors_decode() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bs");
        let mut b = vec![0u8; 512];
        b[11] = 0;
        b[12] = 2; // 512 bytes per sector
        b[13] = 8;
        b[108] = 9;
        b[109] = 3;
        std::fs::write(&p, &b).unwrap();
        assert_eq!(boot_sector_unit(ReadBack::FatBootSector, &p).unwrap(), 4096);
        assert_eq!(
            boot_sector_unit(ReadBack::ExfatBootSector, &p).unwrap(),
            4096
        );
        b[13] = 0xF7; // 2^9 sectors: 256 KiB
        std::fs::write(&p, &b).unwrap();
        assert_eq!(
            boot_sector_unit(ReadBack::NtfsBootSector, &p).unwrap(),
            512 << 9
        );
    }

    /// A formatter that makes another unit than asked (as Belov's did) is caught by the read-back.
    #[test]
    fn a_lying_formatter_is_refused() {
        use crate::fs::types::{FsType, UnitRule, lookup};
        assert!(check_unit(None, 4096).is_ok());
        assert!(check_unit(Some(4096), 4096).is_ok());
        let test = "a_lying_formatter_is_refused";
        if !crate::test_skip::root_or_skip(test, "loop devices")
            || !crate::test_skip::tool_or_skip(test, "mkfs.ext4", "e2fsprogs")
        {
            return;
        }
        const LIE: &[UnitRule] = &[UnitRule {
            min: 1024,
            max: 1024,
            args: &["-b", "4096"],
        }];
        let liar = FsType {
            unit_rules: LIE,
            ..*lookup("ext4").unwrap()
        };
        let dir = tempfile::tempdir().unwrap();
        let img = dir.path().join("liar.img");
        std::fs::File::create(&img)
            .unwrap()
            .set_len(32 << 20)
            .unwrap();
        let lo = crate::fs::loopdev::LoopDevice::attach(&img, false).unwrap();
        format(&liar, Some(1024), &[], None, &lo.device).unwrap();
        let made = read_unit(&liar, Some(&lo.device), dir.path()).unwrap();
        assert_eq!(made, 4096);
        let e = check_unit(Some(1024), made).unwrap_err();
        assert!(
            e.contains("asked for an allocation unit of 1KiB, mkfs made 4KiB"),
            "{e}"
        );
    }
}

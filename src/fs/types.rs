//! The file-system types iolab knows, as data: how each is made (mkfs program and flags), how
//! an allocation-unit size maps to mkfs options and which values are valid, how it is mounted
//! (kernel driver or FUSE helper), how the real unit is read back, and whether it journals.
//! Adding a file system is adding an entry here; the matrix has no per-type code paths.

/// How the allocation unit actually made is read back after mkfs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadBack {
    /// `dumpe2fs -h`: "Cluster size" with bigalloc, else "Block size".
    Dumpe2fs,
    /// `xfs_info` on the mount point: the data section's `bsize=`.
    XfsInfo,
    /// statvfs(2) `f_bsize` of the mounted file system.
    Statvfs,
    /// FAT boot sector: bytes per sector (offset 11) x sectors per cluster (offset 13).
    FatBootSector,
    /// exFAT boot sector: 2^BytesPerSectorShift (108) x 2^SectorsPerClusterShift (109).
    ExfatBootSector,
    /// NTFS boot sector (`ntfsinfo` reads the same fields): bytes per sector x sectors per
    /// cluster, where a value above 0x80 means 2^(256 - value).
    NtfsBootSector,
}

/// One way to ask mkfs for an allocation unit: for units in `min..=max` (powers of two), these
/// arguments, with `{bytes}` replaced by the unit in bytes and `{sectors}` by unit / 512.
#[derive(Debug, Clone, Copy)]
pub struct UnitRule {
    pub min: u64,
    pub max: u64,
    pub args: &'static [&'static str],
}

/// Arguments mkfs gets on a volume smaller than `below` bytes, where the tool would otherwise
/// lay the file system out unlike the one it makes on a disk: mke2fs takes the usage type
/// `small` below 512 MiB (1 KiB blocks and an inode per 4 KiB, where a disk gets 4 KiB blocks
/// and an inode per 16 KiB), so a 256 MiB image held another ext4 than the user's disk.
#[derive(Debug, Clone, Copy)]
pub struct SmallVolume {
    pub below: u64,
    pub args: &'static [&'static str],
}

/// One file-system type.
#[derive(Debug, Clone, Copy)]
pub struct FsType {
    /// Canonical name (`vfat`, `ntfs`): what the user types and what results say.
    pub name: &'static str,
    /// Other names accepted on the command line.
    pub aliases: &'static [&'static str],
    /// mkfs program; None for tmpfs (nothing to format).
    pub mkfs: Option<&'static str>,
    /// Flags always given to mkfs (non-interactive, quiet, forced over an old signature).
    pub mkfs_flags: &'static [&'static str],
    /// What makes a small volume like a disk (None: the tool lays out every size alike, or
    /// its size rule is the format's own, as FAT's and exFAT's cluster by volume size).
    pub small_volume: Option<SmallVolume>,
    /// How a unit maps to mkfs options; empty = the tool cannot choose (fixed unit).
    pub unit_rules: &'static [UnitRule],
    /// The unit when none is asked for, if mkfs does not decide it from the size.
    pub default_unit: Option<u64>,
    pub read_back: ReadBack,
    /// Kernel driver name (`/proc/filesystems`, `mount -t`), if there is one.
    pub kernel: Option<&'static str>,
    /// FUSE helper (`helper [-o opts] device dir`), used when the kernel lacks the driver.
    pub fuse_helper: Option<&'static str>,
    /// Options the FUSE helper always needs (fusefat mounts read-only without `rw+`).
    pub fuse_opts: &'static str,
    /// One word on the design: journal, copy-on-write, log-structured, none, RAM.
    pub design: &'static str,
    /// Smallest image mkfs accepts (bytes).
    pub min_size: u64,
    /// Fewest data clusters the on-disk format allows (0: no such limit). FAT32 has at least
    /// 65,525: with fewer the format is FAT16 by definition (Microsoft's FAT spec decides the
    /// type by the cluster count alone), yet `mkfs.vfat -F 32` makes such a volume with only a
    /// warning.
    pub min_clusters: u64,
}

const MIB: u64 = 1 << 20;

/// `UnitRule { min, max, args }`, short for the table.
const fn rule(min: u64, max: u64, args: &'static [&'static str]) -> UnitRule {
    UnitRule { min, max, args }
}

/// What an entry of `FS_TYPES` does not say: no aliases, no flags, a fixed 4 KiB unit read
/// back with statvfs, mounted by the kernel alone, no design of note, 8 MiB at the least.
const DEFAULTS: FsType = FsType {
    name: "",
    aliases: &[],
    mkfs: None,
    mkfs_flags: &[],
    small_volume: None,
    unit_rules: &[],
    default_unit: Some(4096),
    read_back: ReadBack::Statvfs,
    kernel: None,
    fuse_helper: None,
    fuse_opts: "",
    min_clusters: 0,
    design: "none",
    min_size: 8 * MIB,
};

/// mke2fs's block sizes (ext2, ext3, ext4).
const E2FS_BLOCKS: UnitRule = rule(1024, 4096, &["-b", "{bytes}"]);

/// What the ext family's entries share, being made by one tool (e2fsprogs' mke2fs, forced
/// and quiet, its block sizes) and read back with dumpe2fs. The inode tables and the journal
/// are written by mkfs itself: left lazy, the kernel's ext4lazyinit thread writes the inode
/// tables after the mount, in the background of the first tests (16 MiB on a 1 GiB image,
/// during a read test: a `device-extra-io` warning and a device shared with a stranger).
/// Below 512 MiB mke2fs would take the usage type `small` (mke2fs.conf: 1 KiB blocks, an
/// inode per 4 KiB); `-T default` keeps the layout it gives a disk of 512 MiB to 4 TiB, and
/// a `-T` or `-b` of the user's, given after it, still wins.
const E2FS: FsType = FsType {
    mkfs_flags: &["-F", "-q", "-E", "lazy_itable_init=0,lazy_journal_init=0"],
    small_volume: Some(SmallVolume {
        below: 512 * MIB,
        args: &["-T", "default"],
    }),
    unit_rules: &[E2FS_BLOCKS],
    read_back: ReadBack::Dumpe2fs,
    ..DEFAULTS
};

/// Every known type. Order = the order of `--study linux-fs` and of error messages.
pub const FS_TYPES: &[FsType] = &[
    FsType {
        name: "ext2",
        mkfs: Some("mkfs.ext2"),
        kernel: Some("ext2"),
        ..E2FS
    },
    FsType {
        name: "ext3",
        mkfs: Some("mkfs.ext3"),
        kernel: Some("ext3"),
        design: "journal",
        ..E2FS
    },
    FsType {
        name: "ext4",
        mkfs: Some("mkfs.ext4"),
        unit_rules: &[
            E2FS_BLOCKS,
            // Above the page-sized block: bigalloc clusters of 4 KiB blocks (mke2fs makes
            // them up to 64 MiB and the kernel mounts them; 2 MiB is `iolab slack`'s largest
            // unit, so every unit it predicts can be measured).
            rule(
                8192,
                2 * MIB,
                &["-b", "4096", "-O", "bigalloc", "-C", "{bytes}"],
            ),
        ],
        kernel: Some("ext4"),
        design: "journal",
        ..E2FS
    },
    FsType {
        name: "xfs",
        mkfs: Some("mkfs.xfs"),
        mkfs_flags: &["-f", "-q"],
        unit_rules: &[rule(1024, 65536, &["-b", "size={bytes}"])],
        read_back: ReadBack::XfsInfo,
        kernel: Some("xfs"),
        design: "journal",
        min_size: 300 * MIB,
        ..DEFAULTS
    },
    FsType {
        name: "btrfs",
        mkfs: Some("mkfs.btrfs"),
        mkfs_flags: &["-f", "-q"],
        unit_rules: &[rule(4096, 4096, &["-s", "{bytes}"])],
        kernel: Some("btrfs"),
        design: "copy-on-write",
        // mkfs.btrfs: "minimum size for each btrfs device is 114294784".
        min_size: 114_294_784,
        ..DEFAULTS
    },
    FsType {
        name: "f2fs",
        mkfs: Some("mkfs.f2fs"),
        mkfs_flags: &["-f", "-q"],
        kernel: Some("f2fs"),
        design: "log-structured",
        min_size: 64 * MIB,
        ..DEFAULTS
    },
    FsType {
        name: "jfs",
        mkfs: Some("mkfs.jfs"),
        mkfs_flags: &["-q"],
        kernel: Some("jfs"),
        design: "journal",
        min_size: 16 * MIB,
        ..DEFAULTS
    },
    FsType {
        name: "nilfs2",
        aliases: &["nilfs"],
        mkfs: Some("mkfs.nilfs2"),
        mkfs_flags: &["-f", "-q"],
        unit_rules: &[rule(1024, 4096, &["-b", "{bytes}"])],
        kernel: Some("nilfs2"),
        design: "log-structured",
        // mkfs.nilfs2 2.2.9 on 128 MiB: "device size=134217728 bytes, required
        // size=134221824 bytes" (16 segments of 8 MiB and a block): the next whole MiB.
        min_size: 129 * MIB,
        ..DEFAULTS
    },
    FsType {
        name: "reiserfs",
        mkfs: Some("mkfs.reiserfs"),
        mkfs_flags: &["-f", "-f", "-q"],
        unit_rules: &[rule(4096, 4096, &["-b", "{bytes}"])],
        kernel: Some("reiserfs"),
        design: "journal",
        min_size: 64 * MIB,
        ..DEFAULTS
    },
    FsType {
        name: "vfat",
        aliases: &["fat32", "fat"],
        mkfs: Some("mkfs.vfat"),
        mkfs_flags: &["-F", "32"],
        unit_rules: &[rule(512, 65536, &["-S", "512", "-s", "{sectors}"])],
        // mkfs.vfat picks the cluster from the volume size.
        default_unit: None,
        read_back: ReadBack::FatBootSector,
        kernel: Some("vfat"),
        fuse_helper: Some("fusefat"),
        fuse_opts: "rw+",
        min_size: 40 * MIB,
        min_clusters: 65_525,
        ..DEFAULTS
    },
    FsType {
        name: "exfat",
        mkfs: Some("mkfs.exfat"),
        unit_rules: &[rule(512, 32 * MIB, &["-c", "{bytes}"])],
        default_unit: None,
        read_back: ReadBack::ExfatBootSector,
        kernel: Some("exfat"),
        fuse_helper: Some("mount.exfat-fuse"),
        ..DEFAULTS
    },
    FsType {
        name: "ntfs",
        aliases: &["ntfs-3g", "ntfs3"],
        mkfs: Some("mkfs.ntfs"),
        mkfs_flags: &["-F", "-Q"],
        // NTFS clusters go to 2 MiB (Windows 10 1709+); mkfs.ntfs makes them and ntfs-3g
        // mounts them (ntfs-3g 2022.10.3: 128 KiB and 2 MiB read back by ntfsinfo).
        unit_rules: &[rule(512, 2 * MIB, &["-c", "{bytes}"])],
        read_back: ReadBack::NtfsBootSector,
        kernel: Some("ntfs3"),
        fuse_helper: Some("ntfs-3g"),
        design: "journal",
        ..DEFAULTS
    },
    FsType {
        name: "hfsplus",
        aliases: &["hfs+"],
        mkfs: Some("mkfs.hfsplus"),
        unit_rules: &[rule(512, 65536, &["-b", "{bytes}"])],
        kernel: Some("hfsplus"),
        ..DEFAULTS
    },
    FsType {
        name: "tmpfs",
        aliases: &["ram"],
        mkfs: None,
        kernel: Some("tmpfs"),
        design: "RAM",
        min_size: MIB,
        ..DEFAULTS
    },
];

/// Find a type by name or alias (case-insensitive).
pub fn lookup(name: &str) -> Option<&'static FsType> {
    let n = name.trim().to_ascii_lowercase();
    FS_TYPES
        .iter()
        .find(|t| t.name == n || t.aliases.contains(&n.as_str()))
}

/// `ext2, ext3, ...` for error messages.
pub fn known_names() -> String {
    FS_TYPES
        .iter()
        .map(|t| t.name)
        .collect::<Vec<_>>()
        .join(", ")
}

impl FsType {
    /// Whether metadata changes are journaled (copy-on-write and log-structured say no).
    pub fn journaling(&self) -> bool {
        self.design == "journal"
    }

    /// The units this type can be asked for (powers of two), smallest first. A fixed-unit
    /// type lists just its default.
    pub fn valid_units(&self) -> Vec<u64> {
        let mut v: Vec<u64> = Vec::new();
        for r in self.unit_rules {
            let mut u = r.min;
            while u <= r.max {
                v.push(u);
                u *= 2;
            }
        }
        if v.is_empty()
            && let Some(d) = self.default_unit
        {
            v.push(d);
        }
        v.sort_unstable();
        v.dedup();
        v
    }

    /// `1KiB, 2KiB, 4KiB` for error messages.
    pub fn valid_units_text(&self) -> String {
        self.valid_units()
            .iter()
            .map(|&u| crate::units::fmt_size_exact(u))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// mkfs arguments that give a volume of `size` bytes (None: not known) the layout the tool
    /// gives a disk.
    pub fn size_args(&self, size: Option<u64>) -> &'static [&'static str] {
        match (self.small_volume, size) {
            (Some(s), Some(size)) if size < s.below => s.args,
            _ => &[],
        }
    }

    /// mkfs arguments selecting `unit` (None: the tool's default); an error names the valid
    /// values.
    pub fn unit_args(&self, unit: Option<u64>) -> Result<Vec<String>, String> {
        let Some(unit) = unit else {
            return Ok(Vec::new());
        };
        if !self.valid_units().contains(&unit) {
            return Err(format!(
                "{} cannot use an allocation unit of {} (valid: {})",
                self.name,
                crate::units::fmt_size_exact(unit),
                self.valid_units_text()
            ));
        }
        let Some(rule) = self
            .unit_rules
            .iter()
            .find(|r| (r.min..=r.max).contains(&unit))
        else {
            // A fixed unit equal to the default: nothing to ask.
            return Ok(Vec::new());
        };
        Ok(rule
            .args
            .iter()
            .map(|a| {
                a.replace("{bytes}", &unit.to_string())
                    .replace("{sectors}", &(unit / 512).to_string())
            })
            .collect())
    }

    /// Data clusters of `unit` bytes on `size` bytes, as mkfs.vfat lays out a FAT32 (32
    /// reserved sectors rounded up to a whole cluster, two FATs of 4 bytes per cluster, each
    /// rounded up to a whole cluster).
    fn fat32_clusters(size: u64, unit: u64) -> u64 {
        let spc = (unit / 512).max(1);
        let align = |sectors: u64| sectors.div_ceil(spc) * spc;
        let data = (size / 512).saturating_sub(align(32));
        let first = (data * 512 + 16) / (spc * 512 + 8);
        let fat = align(((first + 2) * 4).div_ceil(512));
        data.saturating_sub(2 * fat) / spc
    }

    /// Can a file system of `unit` (None: the tool's choice) be made on `size` bytes? Err
    /// says why not (too few clusters for the format).
    pub fn unit_fits(&self, unit: Option<u64>, size: u64) -> Result<(), String> {
        let Some(unit) = unit.filter(|_| self.min_clusters > 0) else {
            return Ok(());
        };
        let clusters = Self::fat32_clusters(size, unit);
        if clusters >= self.min_clusters {
            return Ok(());
        }
        // The smallest size that holds enough clusters, rounded up to a whole MiB.
        let mut need = (self.min_clusters + 1) * unit;
        while Self::fat32_clusters(need, unit) < self.min_clusters {
            need += unit;
        }
        let need = need.div_ceil(MIB) * MIB;
        Err(format!(
            "{} clusters of {} need at least {} ({} clusters), the volume is {} ({} clusters: \
             {} would make an out-of-spec volume that other systems read as FAT16)",
            self.name,
            crate::units::fmt_size_exact(unit),
            crate::units::fmt_size_iec(need),
            crate::units::fmt_thousands(self.min_clusters as f64),
            crate::units::fmt_size_iec(size),
            crate::units::fmt_thousands(clusters as f64),
            self.mkfs.unwrap_or("mkfs"),
        ))
    }

    /// Several units to compare (for `--study cluster`).
    pub fn has_several_units(&self) -> bool {
        self.valid_units().len() > 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ext4_maps_small_units_to_block_size_and_large_to_bigalloc() {
        let t = lookup("ext4").unwrap();
        assert_eq!(t.unit_args(Some(1024)).unwrap(), ["-b", "1024"]);
        assert_eq!(
            t.unit_args(Some(16384)).unwrap(),
            ["-b", "4096", "-O", "bigalloc", "-C", "16384"]
        );
        let e = t.unit_args(Some(512)).unwrap_err();
        assert!(e.contains("valid: 1KiB, 2KiB, 4KiB, 8KiB"), "{e}");
    }

    /// `iolab slack` predicts ext4 bigalloc clusters and NTFS clusters up to 2 MiB, and
    /// mke2fs / mkfs.ntfs make them (ntfs-3g and the kernel mount them), but the matrix
    /// stopped at 64 KiB: `matrix --fs ntfs --cluster 128K` said "ntfs cannot use an
    /// allocation unit of 128KiB", so no prediction above 64 KiB could be measured.
    #[test]
    fn large_clusters_that_the_tools_make_are_valid() {
        let ext4 = lookup("ext4").unwrap();
        assert_eq!(
            ext4.unit_args(Some(2 * MIB)).unwrap(),
            ["-b", "4096", "-O", "bigalloc", "-C", "2097152"]
        );
        assert!(ext4.unit_args(Some(4 * MIB)).is_err());
        let ntfs = lookup("ntfs").unwrap();
        assert_eq!(ntfs.unit_args(Some(128 << 10)).unwrap(), ["-c", "131072"]);
        assert_eq!(ntfs.valid_units().last(), Some(&(2 * MIB)));
        for (name, rules) in [("ntfs", "ntfs-3g"), ("ext4", "ext4")] {
            let slack = crate::fs::alloc::FsRules::parse(rules, None, None, None).unwrap();
            for u in lookup(name).unwrap().valid_units() {
                assert!(slack.unit_support(u).is_ok(), "{name} {u}");
            }
        }
    }

    /// mke2fs's `small` usage type (below 512 MiB: 1 KiB blocks, an inode per 4 KiB) made
    /// the matrix's 256 MiB ext4 unlike the user's disk; `-T default` asks for a disk's layout
    /// there, and nothing changes from 512 MiB on, nor where the size is not known.
    #[test]
    fn small_ext_volumes_are_made_with_the_default_usage_type() {
        for name in ["ext2", "ext3", "ext4"] {
            let t = lookup(name).unwrap();
            for size in [8 * MIB, 64 * MIB, 256 * MIB, 512 * MIB - 1] {
                assert_eq!(t.size_args(Some(size)), ["-T", "default"], "{name} {size}");
            }
            for size in [Some(512 * MIB), Some(100 << 30), None] {
                assert!(t.size_args(size).is_empty(), "{name} {size:?}");
            }
        }
        // The others lay out a small volume as a disk (xfs, btrfs, f2fs, ntfs) or follow
        // their format's own cluster-by-size table (vfat, exfat): nothing to add.
        for t in FS_TYPES.iter().filter(|t| !t.name.starts_with("ext")) {
            assert!(t.size_args(Some(64 * MIB)).is_empty(), "{}", t.name);
        }
    }

    #[test]
    fn vfat_uses_sectors_per_cluster_and_aliases_resolve() {
        let t = lookup("FAT32").unwrap();
        assert_eq!(t.name, "vfat");
        assert_eq!(t.unit_args(Some(4096)).unwrap(), ["-S", "512", "-s", "8"]);
        assert_eq!(lookup("ntfs-3g").unwrap().name, "ntfs");
        assert!(lookup("zfs").is_none());
    }

    /// mkfs.vfat -F 32 -s 128 on 256 MiB made 4,093 clusters ("sectors/FAT 128", and its
    /// warning "Number of clusters for 32 bit FAT is less then suggested minimum"); 4 GiB
    /// holds 65,527 of 64 KiB, just enough.
    #[test]
    fn fat32_needs_65525_clusters() {
        assert_eq!(FsType::fat32_clusters(256 * MIB, 65536), 4093);
        assert_eq!(FsType::fat32_clusters(4096 * MIB, 65536), 65527);
        let t = lookup("vfat").unwrap();
        let e = t.unit_fits(Some(65536), 256 * MIB).unwrap_err();
        assert!(e.contains("need at least 4.0 GiB (65,525 clusters)"), "{e}");
        assert!(e.contains("the volume is 256.0 MiB (4,093 clusters"), "{e}");
        assert!(t.unit_fits(Some(65536), 4096 * MIB).is_ok());
        // mkfs.vfat -s 8 warns on 256 MiB (65,404 clusters), not on 257 MiB (65,658).
        assert_eq!(FsType::fat32_clusters(256 * MIB, 4096), 65404);
        assert_eq!(FsType::fat32_clusters(257 * MIB, 4096), 65658);
        assert!(t.unit_fits(Some(4096), 256 * MIB).is_err());
        assert!(t.unit_fits(Some(4096), 257 * MIB).is_ok());
        assert!(t.unit_fits(None, 64 * MIB).is_ok());
        assert!(
            lookup("exfat")
                .unwrap()
                .unit_fits(Some(65536), 64 * MIB)
                .is_ok()
        );
    }

    #[test]
    fn fixed_unit_types_accept_only_their_default() {
        let t = lookup("tmpfs").unwrap();
        assert_eq!(t.valid_units(), [4096]);
        assert!(t.unit_args(Some(4096)).unwrap().is_empty());
        assert!(t.unit_args(Some(8192)).is_err());
        assert!(!t.has_several_units());
        assert!(lookup("xfs").unwrap().has_several_units());
    }

    #[test]
    fn every_type_is_listed_once() {
        for t in FS_TYPES {
            assert_eq!(lookup(t.name).unwrap().name, t.name);
        }
        assert_eq!(FS_TYPES.len(), 14);
    }
}

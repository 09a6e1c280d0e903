//! Space with the files in place: Belov weighed speed against space, so the create phase
//! also records what `df` says the run's files take (used bytes after a syncfs, before and
//! after the create phase, before anything is deleted), next to what `iolab slack`'s
//! allocation rules predict for the same files at the same unit.

use std::os::fd::BorrowedFd;
use std::path::Path;

use crate::fs::alloc::{DirRec, FileAlloc, FsRules};
use crate::model::files::{FilesSpace, SpacePrediction};
use crate::workload::files::Layout;

/// Used bytes of the file system holding `fd`, as `df` counts them: (blocks - free blocks)
/// x fragment size. None when it reports no block counts (fusefat). No sync of its own:
/// the files test issues exactly the syncs `--sync` asks for (the default, `end`, has
/// synced the create phase already; ext4 and xfs count delayed allocations as used anyway).
pub fn used_bytes(fd: BorrowedFd<'_>) -> Option<u64> {
    let s = nix::sys::statvfs::fstatvfs(fd).ok()?;
    if s.blocks() == 0 {
        return None;
    }
    Some((s.blocks() as u64).saturating_sub(s.blocks_free() as u64) * s.fragment_size() as u64)
}

/// The slack rules of a mounted file-system type (`fuseblk` is resolved by the device's
/// signature: ntfs-3g or exfat-fuse). None where no rule set applies (tmpfs, nilfs2...).
pub fn rules_of(fs_type: &str, signature: Option<&str>) -> Option<FsRules> {
    let name = match (fs_type, signature) {
        ("ext2" | "ext3" | "ext4", _) => "ext4",
        ("xfs", _) => "xfs",
        ("btrfs", _) => "btrfs",
        ("ntfs3" | "ntfs", _) => "ntfs",
        ("fuseblk" | "fuse.ntfs-3g", Some("ntfs")) | ("fuse.ntfs-3g", None) => "ntfs-3g",
        ("vfat" | "msdos" | "fuse.fusefat", _) => "fat32",
        ("exfat" | "fuse.exfat", _) | ("fuseblk", Some("exfat")) => "exfat",
        _ => return None,
    };
    FsRules::parse(name, None, None, None).ok()
}

/// The rules for the file system holding `dir`, as it was made and mounted (ext4's
/// inline_data, inode sizes, btrfs's max_inline: `FsRules::as_mounted`).
pub fn rules_for(dir: &Path) -> Option<FsRules> {
    let m = crate::sysinfo::mounts::mount_of(dir)?;
    let source = Path::new(&m.source);
    let sig = if m.fs_type == "fuseblk" {
        crate::fs::facts::fs_signature(source)
    } else {
        None
    };
    Some(rules_of(&m.fs_type, sig.as_deref())?.as_mounted(source, &m.options))
}

/// What the create phase of one run makes: `files` files of `size` bytes named with
/// `name_len` digits, in the layout's directories under the run directory.
#[derive(Debug, Clone, Copy)]
pub struct FileSet {
    pub files: u64,
    pub size: u64,
    pub name_len: u64,
    pub layout: Layout,
    pub passes: u64,
    pub portions: u64,
}

impl FileSet {
    /// The `files` files of `size` bytes one run of `cfg` made.
    pub fn of(cfg: &super::config::FilesConfig, size: u64, files: u64) -> FileSet {
        FileSet {
            files,
            size,
            name_len: super::engine::Names::new(cfg.files_per_run(), 0)
                .as_str()
                .len() as u64,
            layout: cfg.layout,
            passes: cfg.passes,
            portions: cfg.portions,
        }
    }
}

/// What `set` can hold at most without df's figures (a distributed run's ranks create
/// files in the same space at the same time): by the data, the unit and `rules`.
pub fn held_by(set: &FileSet, unit: u64, rules: Option<&FsRules>) -> u64 {
    let predicted = rules.filter(|_| unit > 0).map(|r| predict(r, unit, set));
    held_bytes(set, unit, predicted.as_ref())
}

/// The most a run's files can hold on disk, for judging df's growth: their data, their data
/// rounded up to the allocation unit (a 1-byte file takes a 4 KiB block), or what the slack
/// rules predict (clusters, directories, inodes and MFT records), whichever is largest.
fn held_bytes(set: &FileSet, unit: u64, predicted: Option<&SpacePrediction>) -> u64 {
    let data = set.files.saturating_mul(set.size);
    let rounded = match unit {
        0 => data,
        u => set
            .files
            .saturating_mul(set.size.div_ceil(u).saturating_mul(u)),
    };
    data.max(rounded)
        .max(predicted.map_or(0, |p| p.total_bytes))
}

/// The space record of a create phase from df before (`before`) and with the files in place
/// (`with`), and what the files can hold at most (for the warning). df that grew by more
/// than they explain is another program's writing (`iolab copy`'s rule): the growth is left
/// out rather than reported as the files'.
pub fn record(
    before: u64,
    with: u64,
    set: &FileSet,
    unit: u64,
    predicted: Option<SpacePrediction>,
) -> (FilesSpace, u64) {
    let held = held_bytes(set, unit, predicted.as_ref());
    (record_held(before, with, held, predicted), held)
}

/// `record` of files that hold at most `held` (the files of all `--jobs` writers).
pub fn record_held(
    before: u64,
    with: u64,
    held: u64,
    predicted: Option<SpacePrediction>,
) -> FilesSpace {
    let delta = with as i64 - before as i64;
    let other_writers = crate::workload::df::grew_beyond(delta, held);
    FilesSpace {
        used_before_bytes: before,
        used_with_files_bytes: with,
        used_delta_bytes: (!other_writers).then_some(delta),
        other_writers,
        predicted,
    }
}

/// `iolab slack`'s prediction for a file set at `unit`: clusters of the files and of their
/// directories, plus the per-file metadata the rules count (an NTFS MFT record, an xfs
/// inode).
pub fn predict(rules: &FsRules, unit: u64, set: &FileSet) -> SpacePrediction {
    let (dirs, per_dir, dir_name_len) = match set.layout {
        Layout::Flat => (1, set.files, 1),
        Layout::PerPass => (set.passes, set.files / set.passes.max(1), 5),
        Layout::PerPortion => (
            set.passes * set.portions,
            set.files / (set.passes * set.portions).max(1),
            11,
        ),
    };
    let (per_file, resident) = match rules.file(set.size, set.name_len, unit) {
        FileAlloc::Clusters(b) => (b, false),
        FileAlloc::Resident => (0, true),
        FileAlloc::TooLarge => (0, false),
    };
    let leaf = DirRec {
        entries: per_dir,
        name_bytes: per_dir * set.name_len,
        name_units: per_dir * set.name_len,
    };
    // The run directory exists before the phase; what it gains is the leaf entries.
    let run_dir = DirRec {
        entries: dirs,
        name_bytes: dirs * dir_name_len,
        name_units: dirs * dir_name_len,
    };
    let dir_bytes = dirs * rules.dir(&leaf, unit)
        + rules
            .dir(&run_dir, unit)
            .saturating_sub(rules.dir(&DirRec::default(), unit));
    let file_bytes = set.files * per_file;
    let metadata = (set.files + dirs) * rules.metadata_per_inode();
    SpacePrediction {
        rules: rules.kind.to_string(),
        unit_bytes: unit,
        file_allocated_bytes: file_bytes,
        dir_allocated_bytes: dir_bytes,
        metadata_bytes: metadata,
        resident_files: if resident { set.files } else { 0 },
        total_bytes: file_bytes + dir_bytes + metadata,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(files: u64, size: u64) -> FileSet {
        FileSet {
            files,
            size,
            name_len: 6,
            layout: Layout::Flat,
            passes: 1,
            portions: 2,
        }
    }

    #[test]
    fn ntfs3g_small_files_are_resident_and_big_clusters_cost_space() {
        let r = rules_of("fuseblk", Some("ntfs")).unwrap();
        assert_eq!(r.kind.to_string(), "ntfs-3g");
        // 1 KiB-record MFT: a 512-byte file stays in its record: no cluster, one record.
        let p = predict(&r, 4096, &set(1000, 512));
        assert_eq!(p.file_allocated_bytes, 0);
        assert_eq!(p.resident_files, 1000);
        assert_eq!(p.metadata_bytes, 1001 * 1024);
        // 2 KiB files: one cluster each, 64 KiB clusters take 32x the space of 512 B.
        let small = predict(&r, 512, &set(1000, 2048));
        let big = predict(&r, 65536, &set(1000, 2048));
        assert_eq!(small.file_allocated_bytes, 1000 * 2048);
        assert_eq!(big.file_allocated_bytes, 1000 * 65536);
        assert!(big.total_bytes > 5 * small.total_bytes);
        assert_eq!(
            small.total_bytes,
            small.file_allocated_bytes + small.dir_allocated_bytes + small.metadata_bytes
        );
        // 1000 names do not fit the directory's MFT record: index blocks.
        assert!(small.dir_allocated_bytes >= 4096);
    }

    /// df around the create phase polluted by another program's writes (a shared file
    /// system): the growth is not reported as the files' (it was, and the matrix showed it).
    /// What the files explain, 1-byte files in 4 KiB blocks included, is not flagged.
    #[test]
    fn df_growth_beyond_the_files_is_left_out() {
        const MIB: u64 = 1 << 20;
        let g = 100 * MIB;
        // 100 files of 4 KiB, df grew by 500 MiB: someone else wrote.
        let (busy, held) = record(g, g + 500 * MIB, &set(100, 4096), 4096, None);
        assert!(busy.other_writers);
        assert_eq!(busy.used_delta_bytes, None);
        assert_eq!(held, 100 * 4096);
        // 10,000 1-byte files take a 4 KiB block each: 39 MiB are theirs.
        let (own, _) = record(g, g + 10_000 * 4096 + MIB, &set(10_000, 1), 4096, None);
        assert!(!own.other_writers);
        assert_eq!(own.used_delta_bytes, Some(10_000 * 4096 + MIB as i64));
        // A prediction larger than the data (xfs inodes of empty files) counts too.
        let r = rules_of("xfs", None).unwrap();
        let p = predict(&r, 4096, &set(200_000, 0));
        let grown = p.total_bytes + 10 * MIB;
        let (own, _) = record(g, g + grown, &set(200_000, 0), 4096, Some(p));
        assert!(!own.other_writers, "{own:?}");
        // df that shrank (another program deleted) is not another program's writing.
        let (down, _) = record(g, g - MIB, &set(100, 4096), 4096, None);
        assert_eq!(down.used_delta_bytes, Some(-(MIB as i64)));
    }

    #[test]
    fn mount_types_map_to_rules() {
        assert_eq!(rules_of("ext4", None).unwrap().kind.to_string(), "ext4");
        assert_eq!(rules_of("ntfs3", None).unwrap().kind.to_string(), "ntfs");
        assert_eq!(
            rules_of("fuseblk", Some("exfat")).unwrap().kind.to_string(),
            "exfat"
        );
        assert_eq!(
            rules_of("fuse.fusefat", None).unwrap().kind.to_string(),
            "fat32"
        );
        assert!(rules_of("tmpfs", None).is_none());
        assert!(rules_of("fuseblk", None).is_none());
    }
}

//! Cluster slack (Belov's question): for a set of files (a scanned tree or a list of sizes), how
//! many bytes each allocation unit from 512 B to 2 MiB would allocate under one file
//! system's rules, how much of it is slack, what writing it would cost, and which unit
//! is best for space, for time, and for both.

pub mod cost;
pub mod csv;
// The allocation rules are facts of the file systems (fs/alloc.rs); named here too.
pub use crate::fs::alloc as rules;
pub use crate::fs::alloc::DirRec;
pub mod scan;

use std::path::Path;

use crate::model::slack::{CostModel, Recommendation, ScanStats, SlackResult, UnitRow};
use crate::model::{ResultDoc, Warning, WarningCode};
use rules::{FileAlloc, FsRules};

/// One regular file: its size and the length of its name in UTF-16 code units, as NTFS
/// stores it (the resident threshold depends on it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FileRec {
    pub size: u64,
    pub name_len: u16,
}

/// Length of a name in UTF-16 code units (bytes for names that are not UTF-8).
pub fn utf16_len(name: &std::ffi::OsStr) -> u64 {
    let b = name.as_encoded_bytes();
    if b.is_ascii() {
        return b.len() as u64;
    }
    name.to_str()
        .map(|s| s.encode_utf16().count() as u64)
        .unwrap_or(b.len() as u64)
}

/// Everything the calculation needs about the files.
#[derive(Debug, Clone, Default)]
pub struct Inventory {
    pub files: Vec<FileRec>,
    /// Listed directories; `stats.dirs - dirs.len()` more could not be listed.
    pub dirs: Vec<DirRec>,
    pub stats: ScanStats,
}

/// The type of the file system holding a scanned tree, as iolab names it (`ntfs`, `exfat`,
/// `vfat` for a FUSE mount the kernel calls `fuseblk` or `fuse.fusefat`).
pub fn tree_fs(dir: &Path) -> Option<String> {
    crate::sysinfo::mounts::mount_of(dir).map(|m| crate::fs::detect::fs_name(&m))
}

/// Allocation units examined: 512 B ... 2 MiB, powers of two.
pub fn units() -> Vec<u64> {
    (9..=21).map(|s| 1u64 << s).collect()
}

/// The allocation of the whole inventory at one unit (cost fields left at zero).
pub fn unit_row(inv: &Inventory, rules: &FsRules, unit: u64) -> UnitRow {
    let mut row = UnitRow {
        unit_bytes: unit,
        supported: true,
        files: inv.files.len() as u64,
        data_bytes: inv.stats.data_bytes,
        ..Default::default()
    };
    match rules.unit_support(unit) {
        Ok(()) => row.note = rules.unit_note(unit),
        Err(why) => {
            row.supported = false;
            row.note = Some(why);
        }
    }
    let mut stored_data = 0u64;
    let mut below = 0u64;
    for f in &inv.files {
        if f.size < unit {
            below += 1;
        }
        match rules.file(f.size, f.name_len as u64, unit) {
            // Saturating: sparse files of up to 8 EiB each (a scan of tmpfs) can add up to
            // more than u64 holds.
            FileAlloc::Clusters(b) => {
                row.file_allocated_bytes = row.file_allocated_bytes.saturating_add(b);
                stored_data = stored_data.saturating_add(f.size);
            }
            FileAlloc::Resident => row.resident_files += 1,
            FileAlloc::TooLarge => row.too_large_files += 1,
        }
    }
    // Directories that could not be listed still take their smallest allocation.
    let unlisted = inv.stats.dirs.saturating_sub(inv.dirs.len() as u64);
    row.dir_allocated_bytes = inv.dirs.iter().map(|d| rules.dir(d, unit)).sum::<u64>()
        + unlisted * rules.dir(&DirRec::default(), unit);
    row.allocated_bytes = row
        .file_allocated_bytes
        .saturating_add(row.dir_allocated_bytes);
    row.slack_bytes = row.file_allocated_bytes.saturating_sub(stored_data);
    row.slack_pct = pct(row.slack_bytes, row.file_allocated_bytes);
    row.clusters = row.allocated_bytes / unit;
    row.files_below_unit_pct = pct(below, row.files);
    row.metadata_bytes = (row.files + inv.stats.dirs) * rules.metadata_per_inode();
    row
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// Fill each row's predicted write time and slack cost from the model.
pub fn apply_costs(rows: &mut [UnitRow], model: &CostModel) {
    for row in rows {
        if let Some(c) = model.unit(row.unit_bytes) {
            row.predicted_write_s =
                row.files as f64 * c.per_file_s + row.allocated_bytes as f64 * c.per_byte_s;
            row.slack_cost_s_per_byte = c.per_byte_s;
            row.slack_write_s = row.slack_bytes as f64 * c.per_byte_s;
        }
    }
}

fn recommendation(goal: &str, r: &UnitRow, rule: &str) -> Recommendation {
    Recommendation {
        goal: goal.into(),
        unit_bytes: r.unit_bytes,
        allocated_bytes: r.allocated_bytes,
        slack_bytes: r.slack_bytes,
        predicted_write_s: r.predicted_write_s,
        rule: rule.into(),
    }
}

/// The best supported unit for space, for write time, and for both (ties: smaller unit).
pub fn recommend(rows: &[UnitRow]) -> Vec<Recommendation> {
    let ok: Vec<&UnitRow> = rows.iter().filter(|r| r.supported).collect();
    if ok.is_empty() {
        return Vec::new();
    }
    let by = |key: &dyn Fn(&UnitRow) -> f64| -> &UnitRow {
        ok.iter()
            .copied()
            .min_by(|a, b| key(a).total_cmp(&key(b)))
            .unwrap()
    };
    let space = by(&|r| r.allocated_bytes as f64);
    let time = by(&|r| r.predicted_write_s);
    let min_space = (space.allocated_bytes as f64).max(1.0);
    let min_time = time.predicted_write_s.max(1e-12);
    let balanced = by(&|r| r.allocated_bytes as f64 / min_space + r.predicted_write_s / min_time);
    vec![
        recommendation("space", space, "fewest allocated bytes"),
        recommendation("time", time, "shortest predicted write time"),
        recommendation(
            "balanced",
            balanced,
            "smallest sum of space / best space + time / best time",
        ),
    ]
}

/// The whole calculation for one inventory: rows per unit, costs, recommendations.
pub fn compute(
    inv: &Inventory,
    rules: &FsRules,
    model: CostModel,
    source: &str,
    path: &Path,
) -> SlackResult {
    let mut rows: Vec<_> = units().iter().map(|&u| unit_row(inv, rules, u)).collect();
    apply_costs(&mut rows, &model);
    SlackResult {
        source: source.into(),
        path: crate::os::text::os_text(path.as_os_str()),
        fs: rules.kind.to_string(),
        rule_notes: rules.notes(),
        scan: inv.stats.clone(),
        current_fs: None,
        current_unit_bytes: None,
        recommendations: recommend(&rows),
        units: rows,
        cost_model: model,
    }
}

/// What the result says the user should know: unreadable entries, files too large for the
/// file system, no files, a cost model of defaults.
pub fn warnings(doc: &mut ResultDoc, r: &SlackResult) {
    let mut warn = |code: WarningCode, message: String| {
        doc.warn(Warning {
            code,
            message,
            test: None,
        })
    };
    if r.scan.unreadable > 0 {
        warn(
            WarningCode::UnreadableEntries,
            format!(
                "{} entries could not be read and were skipped, e.g. {}",
                r.scan.unreadable,
                r.scan.unreadable_examples.join("; ")
            ),
        );
    }
    if let Some(row) = r.units.iter().find(|u| u.too_large_files > 0) {
        warn(
            WarningCode::TooLargeForFs,
            format!(
                "{} files are larger than {} can store ({} B at most); they are left out of the allocation{}",
                row.too_large_files,
                r.fs,
                crate::analysis::slack::rules::FAT32_MAX_FILE,
                if r.scan.over_4gib_examples.is_empty() {
                    String::new()
                } else {
                    format!(", e.g. {}", r.scan.over_4gib_examples.join("; "))
                }
            ),
        );
    }
    if r.scan.files == 0 {
        warn(WarningCode::NoFiles, "no regular files found".into());
    }
    if r.cost_model.source == "defaults" {
        warn(WarningCode::CostDefaults, r.cost_model.note.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inv(sizes: &[u64]) -> Inventory {
        let mut i = Inventory {
            files: sizes
                .iter()
                .map(|&size| FileRec { size, name_len: 8 })
                .collect(),
            ..Default::default()
        };
        i.stats.files = sizes.len() as u64;
        i.stats.data_bytes = sizes.iter().sum();
        i
    }

    #[test]
    fn rows_count_slack_and_small_files() {
        let rules = FsRules::parse("plain", None, None, None).unwrap();
        let i = inv(&[0, 1, 4096, 5000]);
        let r = unit_row(&i, &rules, 4096);
        assert_eq!(r.file_allocated_bytes, 4096 * 4);
        assert_eq!(r.slack_bytes, 4096 * 4 - 9097);
        assert_eq!(r.clusters, 4);
        assert_eq!(r.files_below_unit_pct, 50.0);
        let r = unit_row(&i, &rules, 512);
        assert_eq!(r.file_allocated_bytes, 512 + 4096 + 5120);
    }

    #[test]
    fn sparse_files_past_u64_saturate_instead_of_panicking() {
        // Two 8 EiB sparse files (tmpfs allows them): the sums would overflow u64.
        let rules = FsRules::parse("plain", None, None, None).unwrap();
        let big = i64::MAX as u64;
        let mut i = inv(&[1]);
        i.files = vec![
            FileRec {
                size: big,
                name_len: 8
            };
            2
        ];
        let r = unit_row(&i, &rules, 512);
        assert_eq!(r.file_allocated_bytes, u64::MAX);
        assert_eq!(r.allocated_bytes, u64::MAX);
    }

    #[test]
    fn names_are_measured_in_utf16_units() {
        use std::ffi::OsStr;
        assert_eq!(utf16_len(OsStr::new("report.txt")), 10);
        assert_eq!(utf16_len(OsStr::new("отчёт.txt")), 9);
        assert_eq!(utf16_len(OsStr::new("😀")), 2);
    }

    #[test]
    fn resident_files_have_no_slack() {
        let rules = FsRules::parse("ntfs-3g", None, None, None).unwrap();
        let r = unit_row(&inv(&[100, 5000]), &rules, 4096);
        assert_eq!(r.resident_files, 1);
        assert_eq!(r.file_allocated_bytes, 8192);
        assert_eq!(r.slack_bytes, 8192 - 5000);
        assert_eq!(r.metadata_bytes, 2 * 1024);
    }

    #[test]
    fn recommendations_pick_space_time_and_balance() {
        let rules = FsRules::parse("plain", None, None, None).unwrap();
        let i = inv(&[1500; 100]);
        let mut rows: Vec<UnitRow> = units().iter().map(|&u| unit_row(&i, &rules, u)).collect();
        apply_costs(&mut rows, &cost::defaults(&units()));
        let rec = recommend(&rows);
        assert_eq!(rec[0].goal, "space");
        assert_eq!(rec[0].unit_bytes, 512);
        assert!(rec[1].predicted_write_s <= rec[0].predicted_write_s);
        assert_eq!(rec.len(), 3);
    }
}

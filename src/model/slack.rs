//! Result of the cluster-slack calculator (`iolab slack`): what was scanned, the allocation
//! per unit under one file system's rules, the cost model and the recommended units.
//! Documented in `docs/results-schema.md` (section slack).

use serde::{Deserialize, Serialize};

#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SlackResult {
    /// `dir` (a scanned tree) or `csv` (a list of sizes).
    pub source: String,
    /// The scanned directory or the CSV file.
    pub path: String,
    /// The allocation rules used (`plain`, `ext4`, `ext4-inline`, `xfs`, `btrfs`, `ntfs`,
    /// `ntfs-3g`, `fat32`, `exfat`).
    pub fs: String,
    /// Parameters and caveats of those rules, one sentence each.
    pub rule_notes: Vec<String>,
    pub scan: ScanStats,
    /// The file system the tree is on now and its block size (scans only).
    pub current_fs: Option<String>,
    pub current_unit_bytes: Option<u64>,
    /// One row per allocation unit, 512 B ... 2 MiB.
    pub units: Vec<UnitRow>,
    pub cost_model: CostModel,
    /// `space`, `time` and `balanced`, in that order.
    pub recommendations: Vec<Recommendation>,
}

/// What the scan (or the CSV) found.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ScanStats {
    /// Regular files, each hard-linked inode counted once.
    pub files: u64,
    /// Directories, the root included (0 for CSV input).
    pub dirs: u64,
    pub symlinks: u64,
    /// FIFOs, sockets, device nodes.
    pub other: u64,
    /// Extra names of an already counted inode (hard links), not counted again.
    pub hard_links_skipped: u64,
    /// Entries that could not be read or stat'ed (skipped, not fatal).
    pub unreadable: u64,
    /// Mount points not entered (`--one-file-system`).
    #[serde(default)]
    pub mount_points_skipped: u64,
    /// The first few of them, with the reason.
    pub unreadable_examples: Vec<String>,
    /// The first few files of 4 GiB or more (FAT32 cannot store them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub over_4gib_examples: Vec<String>,
    /// Sum of the file sizes.
    pub data_bytes: u64,
    pub largest_file_bytes: u64,
    /// Sum of st_blocks x 512 of the counted files where they are now (scans only): what
    /// the current file system really allocates, to hold against its row.
    pub files_disk_bytes: Option<u64>,
    /// Counted files that hold fewer bytes than their size where they are now (st_blocks ×
    /// 512 below st_size: holes, or compression), and the bytes they lack (Σ size − held):
    /// the rules count every byte as written, so `files_disk_bytes` is below their rows.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub sparse_files: u64,
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub sparse_bytes: u64,
    pub elapsed_s: f64,
    /// Entries (files + dirs + others) per second of scan.
    pub entries_per_s: f64,
}

/// Allocation of the whole tree at one allocation unit.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct UnitRow {
    pub unit_bytes: u64,
    /// False when the file system cannot use this unit (e.g. xfs blocks above 64 KiB).
    pub supported: bool,
    pub note: Option<String>,
    pub files: u64,
    pub data_bytes: u64,
    /// Files' clusters + directories' clusters, in bytes.
    pub allocated_bytes: u64,
    pub file_allocated_bytes: u64,
    pub dir_allocated_bytes: u64,
    /// Allocated but unused bytes of the files' clusters (file_allocated - data outside
    /// resident files).
    pub slack_bytes: u64,
    /// slack_bytes / file_allocated_bytes x 100.
    pub slack_pct: f64,
    /// Clusters of files and directories.
    pub clusters: u64,
    /// Share of files (zero-byte ones included) smaller than one unit, percent.
    pub files_below_unit_pct: f64,
    /// Files kept inside the inode / MFT record / metadata tree (no cluster at all).
    pub resident_files: u64,
    /// Files the file system cannot store (FAT32: 4 GiB - 1 B at most).
    pub too_large_files: u64,
    /// Per-file metadata outside the clusters counted above (MFT records, xfs inode chunks);
    /// it shows in `df` but not in st_blocks.
    pub metadata_bytes: u64,
    /// Predicted time to write the tree (cost model), seconds.
    pub predicted_write_s: f64,
    /// The cost model's per-byte cost at this unit (Belov's "speed of writing cluster
    /// emptiness"), seconds per byte.
    pub slack_cost_s_per_byte: f64,
    /// Predicted time spent on the slack bytes alone, seconds.
    pub slack_write_s: f64,
}

/// Predicted write time = files x per_file_s + allocated bytes x per_byte_s, per unit.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CostModel {
    /// `defaults` (built in, from Belov's NTFS cluster-size tests) or `calibrated`.
    pub source: String,
    pub note: String,
    pub calibration_file: Option<String>,
    /// Calibrated: the file system whose create-phase points were fitted (its rules' name,
    /// else its type); absent in results written before it and when none was recorded.
    pub points_fs: Option<String>,
    /// Files per portion used for Belov's figure (his tester: 10 000).
    pub portion_files: u64,
    pub per_unit: Vec<UnitCost>,
}

impl CostModel {
    /// The coefficients for an allocation unit of `unit_bytes`, if the model has them.
    pub fn unit(&self, unit_bytes: u64) -> Option<&UnitCost> {
        self.per_unit.iter().find(|c| c.unit_bytes == unit_bytes)
    }
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct UnitCost {
    pub unit_bytes: u64,
    pub per_file_s: f64,
    pub per_byte_s: f64,
    /// Seconds per byte per portion of `portion_files` files: Belov's unit (7.8e-6 on his SSD).
    pub per_byte_s_per_portion: f64,
    /// Where the coefficients come from: `fit`, `default`, or `nearest fit (4096 B)`.
    pub origin: String,
    /// Coefficient of determination of the fit (when fitted from 3+ points).
    pub r2: Option<f64>,
    /// Root mean square of the residuals, seconds per file.
    pub rmse_s: Option<f64>,
    /// Belov's direct estimate: (t(full unit) - t(1 B)) / (unit - 1) per portion, when the
    /// calibration measured both sizes at this unit. (Written as
    /// `seed_style_s_per_byte_per_portion` before; such result files still read.)
    #[serde(alias = "seed_style_s_per_byte_per_portion")]
    pub belov_s_per_byte_per_portion: Option<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub points: Vec<FitPoint>,
}

/// One measurement used by the fit.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct FitPoint {
    pub test: String,
    pub file_size_bytes: u64,
    /// The fit's x: the bytes of clusters a file of this size takes under the rules of the
    /// file system measured (0 when resident), or its size rounded up to whole units where
    /// no rules are known (the model's note says which).
    pub allocated_bytes: u64,
    /// Kept in the inode, MFT record or metadata tree: no cluster, so `allocated_bytes` is 0.
    /// Absent when false, and in results written before it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resident: bool,
    /// Measured seconds per file (1 / files_per_s, mean over runs).
    pub seconds_per_file: f64,
    pub predicted_s: f64,
    pub residual_s: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Recommendation {
    /// `space`, `time` or `balanced`.
    pub goal: String,
    pub unit_bytes: u64,
    pub allocated_bytes: u64,
    pub slack_bytes: u64,
    pub predicted_write_s: f64,
    /// How it was chosen, one sentence.
    pub rule: String,
}

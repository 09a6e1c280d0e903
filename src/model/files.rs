//! Result detail of the small-file tester (`iolab files`): what one (file size x phase) test
//! was, the per-portion series of each run, and the directory-scaling curve.

use serde::{Deserialize, Serialize};

/// Per-test detail (one file size x phase). The same values are also in `TestResult.params`
/// as strings (the cross-team contract); here they are typed.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct FilesTestDetail {
    /// What the user wrote: `1`, `cluster`, `cluster+1`, `4K`, ...
    pub size_token: String,
    pub file_size_bytes: u64,
    /// The target's allocation unit the tokens were resolved against.
    pub alloc_unit_bytes: u64,
    /// `create`, `stat`, `read`, `delete` or `big`.
    pub phase: String,
    /// `write`, `copy_file_range` or `sendfile`.
    pub method: String,
    /// `none`, `file`, `portion` or `end`.
    pub sync: String,
    /// `flat`, `per-portion` or `per-pass`.
    pub layout: String,
    pub files_per_portion: u64,
    pub portions: u64,
    pub passes: u64,
    /// Time per portion against the number of files already created (create phase).
    pub scaling: Option<DirScaling>,
}

/// Per-run detail: every portion timed on its own.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct FilesRunDetail {
    /// Monotonic nanoseconds of each portion, in order (pass-major), sync excluded.
    pub portion_ns: Vec<u64>,
    /// Time of the syncs issued for each portion (`--sync file`: the fsyncs inside it;
    /// `--sync portion`: the syncfs after it). Empty with `--sync none|end`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub portion_sync_ns: Vec<u64>,
    /// All sync time of this run (per-file fsyncs, per-portion or final syncfs).
    pub sync_ns: u64,
    /// fsync(2) calls issued (one per file with `--sync file`).
    pub fsync_calls: u64,
    /// syncfs(2) calls issued (one per portion with `--sync portion`, one with `--sync end`).
    pub syncfs_calls: u64,
    /// Files handled in this run (less than planned when it stopped early).
    pub files_done: u64,
    /// Mean seconds per portion (Belov's cell for this run).
    pub seconds_per_portion: f64,
    /// Portion-to-portion coefficient of variation (0.05 = 5 %).
    pub portion_cv: f64,
    /// Files per second including the sync time ("on the device" rather than "in the cache");
    /// absent when no sync ran (`--sync none`, or a run stopped before its sync).
    pub files_per_s_with_sync: Option<f64>,
    /// create phase: the space the run's files take with all of them in place.
    pub space: Option<FilesSpace>,
    /// How long the measuring thread waited for a CPU (runnable while other threads held
    /// every CPU: schedstat's `run_delay`), in percent of the phase. Absent where the kernel
    /// has no schedstat, and in results written before it.
    pub cpu_wait_pct: Option<f64>,
}

/// df around the create phase (used bytes after a syncfs; nothing deleted yet), and what
/// `iolab slack`'s rules predict for the same files at the file system's unit.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct FilesSpace {
    /// Used bytes before the first file of the run was created.
    pub used_before_bytes: u64,
    /// Used bytes with every file of the run in place.
    pub used_with_files_bytes: u64,
    /// The difference: the files' clusters, their directories and the file system's own
    /// metadata for them (inodes, MFT records, journal and tree blocks). Absent when df grew
    /// by more than the files can explain (`other_writers`).
    pub used_delta_bytes: Option<i64>,
    /// df grew by over twice what the run's files can hold (their data, rounded up to the
    /// unit, or the prediction, whichever is larger) plus 16 MiB: another program wrote to
    /// this file system, and `used_delta_bytes` is left out (the `other-writers` warning).
    /// Also when the device wrote more than that during the create phase (the run's
    /// `write_amplification` is then left out too).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub other_writers: bool,
    /// The prediction (absent where no rule set applies: tmpfs, nilfs2...).
    pub predicted: Option<SpacePrediction>,
}

/// `iolab slack`'s allocation rules applied to one run's file set.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SpacePrediction {
    /// Rule set: `ext4`, `xfs`, `btrfs`, `ntfs`, `ntfs-3g`, `fat32`, `exfat`.
    pub rules: String,
    /// Allocation unit the prediction is for.
    pub unit_bytes: u64,
    /// Clusters of the files (0 for files resident in an inode or MFT record).
    pub file_allocated_bytes: u64,
    /// Clusters of their directories.
    pub dir_allocated_bytes: u64,
    /// Per-file metadata the rules count (an NTFS MFT record, an xfs inode; 0 for ext4,
    /// whose inode tables mkfs made, and for FAT/exFAT).
    pub metadata_bytes: u64,
    /// Files whose data lives in their inode/MFT record/metadata tree (no cluster).
    pub resident_files: u64,
    /// file + dir + metadata bytes: what df should grow by.
    pub total_bytes: u64,
}

/// How the create rate changes as files accumulate.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct DirScaling {
    /// `one directory` (flat layout) or `the file system` (other layouts).
    pub scope: String,
    pub curve: Vec<ScalingPoint>,
    /// Where the rate drops, when it does (by 10 % or more).
    pub drop_after_files: Option<u64>,
    pub slowdown_pct: Option<f64>,
    /// One sentence: `slower by 23 % after 250,000 files in one directory`.
    pub message: String,
}

/// One portion position, averaged over the runs.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ScalingPoint {
    /// Files already present (in the directory or the run) when the portion started.
    pub files_before: u64,
    pub seconds_per_portion: f64,
    pub files_per_s: f64,
}

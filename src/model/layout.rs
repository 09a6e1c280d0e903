//! How aged a file system is: the layout of its files (FIEMAP extents, Smith & Seltzer's
//! layout score) and the fragmentation of its free space. Recorded by `iolab age`, shown by
//! `iolab info PATH`.

use serde::{Deserialize, Serialize};

/// The layout of the files under a path.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LayoutSummary {
    /// Regular files whose extents were read (empty files and files with only inline data
    /// count too; they have no blocks).
    pub files: u64,
    /// Files whose extents could not be read (no FIEMAP on this file system, a file that
    /// vanished during the scan, no permission).
    pub files_unreadable: u64,
    /// The scan stopped at its file limit: the figures describe the first `files` files in
    /// directory order, not all of them.
    pub truncated: bool,
    /// The unit of the score: the file system's block size.
    pub block_size_bytes: u64,
    /// Data blocks of the files read.
    pub blocks: u64,
    /// Smith & Seltzer's layout score: of all pairs of logically consecutive blocks of the
    /// same file, the share that is also physically consecutive. 1.0 = every file in one
    /// contiguous run. `None` when no file has two blocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout_score: Option<f64>,
    /// Physically contiguous pieces per file with data (extents that continue each other
    /// are one piece): mean and largest.
    pub pieces_per_file_mean: f64,
    pub pieces_per_file_max: u64,
    /// Files with data in more than one piece.
    pub fragmented_files: u64,
    /// Free-space fragmentation, where the file system's own tool can tell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free_space: Option<FreeSpace>,
    /// Why the free space is not reported (e.g. "btrfs has no free-extent histogram tool").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free_space_note: Option<String>,
}

/// Free-space fragmentation from `e2freefrag` (ext2/3/4) or `xfs_db -c "freesp -s"` (xfs).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct FreeSpace {
    /// The tool that measured it.
    pub source: String,
    pub free_bytes: u64,
    pub free_extents: u64,
    pub avg_free_extent_bytes: f64,
    /// The share of free space in free extents of at least 1 MiB (where a large file can
    /// still be written contiguously).
    pub share_in_1mib_extents: f64,
}

/// A layout score for people: `0.931` or `-` (no file with two blocks).
pub fn fmt_score(s: Option<f64>) -> String {
    s.map(|v| format!("{v:.3}")).unwrap_or_else(|| "-".into())
}

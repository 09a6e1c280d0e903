//! How aged a file system is: the layout of its files (FIEMAP extents, Smith & Seltzer's
//! layout score) and the fragmentation of its free space. Recorded by `iolab age`, shown by
//! `iolab info PATH`.

use serde::{Deserialize, Serialize};

/// The layout of the files under a path.
#[serde_with::skip_serializing_none]
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
    pub layout_score: Option<f64>,
    /// Physically contiguous pieces per file with data (extents that continue each other
    /// are one piece): mean and largest.
    pub pieces_per_file_mean: f64,
    pub pieces_per_file_max: u64,
    /// Files with data in more than one piece.
    pub fragmented_files: u64,
    /// Files mapped block by block with FIBMAP, where the file system has no FIEMAP (FUSE:
    /// ntfs-3g, exfat-fuse), as `filefrag` does.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub files_mapped_by_block: u64,
    /// Free-space fragmentation, where the file system's own tool can tell.
    pub free_space: Option<FreeSpace>,
    /// Why the free space is not reported (e.g. "btrfs has no free-extent histogram tool").
    pub free_space_note: Option<String>,
}

/// Free-space fragmentation from `e2freefrag` (ext2/3/4) or `xfs_spaceman`/`xfs_db` `freesp -s` (xfs).
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

/// A layout score for people: `0.931` or `-` (no file with two blocks). A score below 1 is
/// never shown as `1.000` (which reads "every file contiguous"): it gets the digits that tell
/// it from 1 (`0.9997`), up to six.
pub fn fmt_score(s: Option<f64>) -> String {
    let Some(v) = s else { return "-".into() };
    let mut out = format!("{v:.3}");
    if v < 1.0 {
        for digits in 4..=6 {
            if out.parse::<f64>().is_ok_and(|r| r < 1.0) {
                break;
            }
            out = format!("{v:.digits$}");
        }
        if out.parse::<f64>().is_ok_and(|r| r >= 1.0) {
            out = "0.999999".into();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::fmt_score;

    #[test]
    fn a_score_below_one_is_never_shown_as_one() {
        // 42 fragmented files among 141,724 blocks: 0.9997, which `{:.3}` showed as 1.000
        // beside "1.000 = every file contiguous" and "42 files in more than one piece".
        assert_eq!(fmt_score(Some(0.99970)), "0.9997");
        assert_eq!(fmt_score(Some(0.9999996)), "0.999999");
        assert_eq!(fmt_score(Some(1.0)), "1.000");
        assert_eq!(fmt_score(Some(0.9314)), "0.931");
        assert_eq!(fmt_score(None), "-");
    }
}

//! Result detail of data-set copies (`iolab copy`): what was copied (the data set, its file
//! count and size, the method) per test, and per run the two times of a phase (until the
//! last close, then the `syncfs` that made it durable), the space the file system used and
//! gave back, and the integrity check.

use serde::{Deserialize, Serialize};

/// What a copy test copied and how (the same for every run of the test).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CopyTestDetail {
    /// Data-set name (`media-mix`, `source-tree`, ...) or `source` for a user's `--source`.
    pub dataset: String,
    /// `write` (RAM -> target), `read` (target -> RAM), `copy` (target -> target),
    /// `delete` (the tree on the target), `ceiling` (RAM -> RAM).
    pub phase: String,
    /// `synthetic` (generated from `seed`) or the user's `--source` directory.
    pub source: String,
    pub seed: u64,
    pub scale: f64,
    /// Regular files in the data set.
    pub files: u64,
    /// Directories in the data set (not counting its root).
    pub dirs: u64,
    /// Sum of the files' sizes.
    pub data_bytes: u64,
    /// Largest file of the set.
    pub largest_file_bytes: u64,
    /// `rw`, `copy_file_range` or `sendfile` (the method asked for).
    pub method: String,
    /// Buffer of the `rw` method (and the chunk of the others).
    pub buffer_bytes: u64,
    /// Mode and times preserved (like `cp -p`).
    pub preserve: bool,
    /// Hash algorithm used by `--verify` (`xxh3-128`, `blake3`), when verifying.
    pub verify_hash: Option<String>,
    /// `cold` (caches dropped before the phase) or `warm` (could not drop: not root).
    pub cache: String,
}

/// One run of one phase.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CopyRunDetail {
    /// From the first open to the last close (or the last unlink for `delete`).
    pub close_ns: u64,
    /// The `syncfs` of the destination file system that followed.
    pub syncfs_ns: u64,
    /// data bytes / close time (what a user sees when `cp` returns). Absent, as the run's
    /// `bw_bytes_per_s`, for a data set of empty files (it was 0.0, read as a stalled
    /// device).
    pub close_bw_bytes_per_s: Option<f64>,
    /// data bytes / (close + syncfs): durable throughput (the headline `bw_bytes_per_s`);
    /// absent like it.
    pub durable_bw_bytes_per_s: Option<f64>,
    /// Files that fell back from `copy_file_range`/`sendfile` to read/write (EXDEV, EINVAL).
    #[serde(default, skip_serializing_if = "super::is_zero")]
    pub fallback_files: u64,
    /// df of the target file system around the phase (write and delete only).
    pub space: Option<SpaceAccounting>,
    /// Integrity of the destination (with `--verify`).
    pub verify: Option<VerifyResult>,
    /// copy phase: whether the file system copied the bytes or shared the source's extents.
    /// Absent for a data set of empty files (results written before said `unknown`).
    pub in_place: Option<InPlaceCopy>,
    /// The device wrote more during the phase than the phase explains (over twice the data
    /// set, or what the written files hold, plus 16 MiB): another program wrote to it. The
    /// run's `write_amplification` is left out and its `space` has `other_writers`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub device_other_writers: bool,
    /// How long the copying thread waited for a CPU (runnable while other threads held
    /// every CPU: schedstat's `run_delay`), in percent of the timed phase. Absent where the
    /// kernel has no schedstat, and in results written before it.
    pub cpu_wait_pct: Option<f64>,
}

/// How the file system made an in-place copy (target -> same target). Within one xfs or
/// btrfs, copy_file_range(2) clones extents (reflink) instead of writing data: such a copy
/// measures metadata, not data, and is not comparable with a copy that wrote the bytes.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct InPlaceCopy {
    /// `data` (the bytes were written again), `reflink` (the copies share the source's
    /// extents: no data written), `partial` (between 10 % and 90 % shared) or `unknown`.
    pub method: String,
    /// What decided `method`: `fiemap` (FIEMAP_EXTENT_SHARED on the copies), `method`
    /// (read/write or sendfile, which cannot share), `df` (used space grew by about the data
    /// set, or not), `device` (bytes the device wrote), `none`.
    pub basis: String,
    /// FIEMAP over the copied files: bytes mapped to extents (absent without FIEMAP: FUSE,
    /// tmpfs).
    pub fiemap_mapped_bytes: Option<u64>,
    /// Of those, bytes in extents shared with another file.
    pub fiemap_shared_bytes: Option<u64>,
    /// df used after the copy (and its syncfs) minus before.
    pub used_delta_bytes: Option<i64>,
    /// Bytes the device wrote during the copy and its syncfs (from /proc/diskstats).
    pub device_written_bytes: Option<u64>,
}

/// Used bytes of the target file system (statvfs: (blocks - bfree) x frsize), after syncfs.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SpaceAccounting {
    pub used_before_bytes: u64,
    pub used_after_bytes: u64,
    /// after - before (negative when the phase freed space).
    pub delta_bytes: i64,
    /// write: delta / data bytes (1.0 = no allocation overhead; 1.5 = 50 % more on disk).
    pub overhead_ratio: Option<f64>,
    /// delete: used after delete minus used before the write (0 = all space given back).
    pub not_returned_bytes: Option<i64>,
    /// delete: did the file system give the space back (within 1 % of the data set)?
    /// Absent when df cannot tell (`other_writers`).
    pub space_returned: Option<bool>,
    /// write: what the written files themselves hold (the sum of their st_blocks x 512,
    /// as `du`), beside df's delta, which also counts directories, metadata and journal.
    pub files_bytes: Option<u64>,
    /// df moved by more than the phase explains: during the write it grew by over twice
    /// what the files hold (plus 16 MiB), or during the delete it grew (plus 1 % of the
    /// data set or 1 MiB). Another program wrote to this file system; `overhead_ratio` and
    /// `space_returned` are then left out.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub other_writers: bool,
}

/// Result of hashing every file on both sides.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct VerifyResult {
    pub hash: String,
    pub files_checked: u64,
    /// Relative paths whose content differs, or that are missing or unexpected.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mismatches: Vec<String>,
    pub ok: bool,
}

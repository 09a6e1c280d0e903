//! Result detail of application traces (`iolab trace run` and `iolab trace replay`): what
//! each stream moved, per-operation latency, whether paced streams held their rate, and for
//! replays how the replay time compares with the recorded time.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::LatencyStats;

/// What was run: the workload (built-in name or file) and its shape.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TraceTestDetail {
    /// Built-in name, workload file path or trace file path.
    pub workload: String,
    /// `builtin`, `file` (a TOML workload) or `replay` (a recorded trace).
    pub source: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// `--scale` applied to sizes and durations (1 = as written).
    pub scale: f64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub streams: Vec<StreamSpec>,
    /// Replays: what the recording says, and which recorder made it.
    pub recording: Option<TraceSummary>,
    pub recorder: Option<String>,
}

/// One stream of a workload as it was run (after `--scale`).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct StreamSpec {
    pub name: String,
    pub copies: u32,
    pub files: u64,
    pub file_bytes_total: u64,
    /// Target rate in bytes/s for paced streams.
    pub rate_bytes_per_s: Option<f64>,
}

/// One run of a workload or replay.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TraceRunDetail {
    /// One entry per stream copy (thread).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub streams: Vec<StreamResult>,
    /// Per operation (`read`, `write`, `open`, `fsync`, ...): count, bytes, latency.
    pub ops: BTreeMap<String, OpResult>,
    /// Bytes written to create the file set before measuring (not counted in `bytes`).
    pub prefill_bytes: u64,
    pub replay: Option<ReplayDetail>,
    /// Replays: what the replay itself issued (the same summary as the recording's).
    pub summary: Option<TraceSummary>,
    /// The longest a thread issuing the calls (a stream copy's, a replayed thread's) waited
    /// for a CPU (runnable while other threads held every CPU: schedstat's `run_delay`), in
    /// percent of its run. Absent where the kernel has no schedstat, and in results written
    /// before it.
    pub cpu_wait_pct: Option<f64>,
}

/// What one stream copy did.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct StreamResult {
    pub name: String,
    /// 0-based copy index (`copies = 4` gives 0..3).
    pub copy: u32,
    pub ops: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub elapsed_ns: u64,
    pub bw_bytes_per_s: f64,
    /// Paced streams: the target rate, requests with a deadline, and those that missed it.
    pub rate_bytes_per_s: Option<f64>,
    pub deadlines: Option<u64>,
    pub missed_deadlines: Option<u64>,
    /// Paced streams: at most 1 % of requests missed their deadline.
    pub rate_held: Option<bool>,
}

/// One operation kind's totals.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct OpResult {
    pub count: u64,
    pub bytes: u64,
    pub lat_ns: LatencyStats,
}

/// A replay compared with its recording.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ReplayDetail {
    /// `asap` (as fast as possible) or `recorded` (calls issued at their recorded times).
    pub timing: String,
    /// From the first recorded call's start to the last one's end.
    pub recorded_ns: u64,
    pub replay_ns: u64,
    /// recorded / replay (above 1: the replay was faster than the recording).
    pub speedup: f64,
    /// Threads used (one per recorded pid/tid).
    pub threads: u32,
    pub calls: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Calls that failed in the replay (the recording only keeps calls that succeeded).
    pub errors: u64,
    pub first_error: Option<String>,
}

/// What a trace (a recording, or the I/O a replay issued) says about its I/O: shares,
/// request sizes, sequentiality, queue depth, inter-arrival times, working set, hot files
/// and fsyncs. Computed by `workload::trace::summary`; the definitions are in
/// docs/METHODOLOGY.md.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TraceSummary {
    /// First I/O start to last end (data calls and fsyncs).
    pub duration_ns: u64,
    pub read_calls: u64,
    pub write_calls: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Reads and writes submitted asynchronously (io_uring).
    pub async_calls: u64,
    /// Request sizes: one bucket per power of two (`size_bytes` is its lower bound).
    pub sizes: Vec<SizeBucket>,
    /// I/Os starting where the previous I/O on the same file ended (a file's first I/O:
    /// when it starts at offset 0).
    pub sequential_reads: u64,
    pub sequential_writes: u64,
    /// In-flight reads and writes (all threads and rings): per depth, the I/Os that saw it
    /// when they started (themselves included) and the time it lasted.
    pub depths: Vec<DepthBucket>,
    /// Mean in-flight count over the time at least one I/O was in flight.
    pub depth_mean: f64,
    pub depth_max: u32,
    /// The same mean over the asynchronous (io_uring) I/Os alone: the queue depth the
    /// program kept on its rings.
    pub async_depth_mean: Option<f64>,
    /// Gaps between consecutive I/O starts (all threads).
    pub interarrival_ns: GapStats,
    /// Distinct bytes touched (union of the ranges read or written, per file).
    pub working_set_bytes: u64,
    /// Files with at least one read or write.
    pub files: u64,
    /// The files that moved the most bytes (at most 10).
    pub hottest: Vec<HotFile>,
    /// fsync and fdatasync calls.
    pub fsyncs: u64,
    pub fsyncs_per_s: Option<f64>,
    pub write_bytes_per_fsync: Option<f64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SizeBucket {
    pub size_bytes: u64,
    pub reads: u64,
    pub writes: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct DepthBucket {
    pub depth: u32,
    pub ios: u64,
    pub time_ns: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct GapStats {
    pub count: u64,
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub max: u64,
    /// Log2 buckets: `lower_ns` 0 (same time stamp), 1, 2, 4, ... and the gaps in each.
    pub buckets: Vec<GapBucket>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct GapBucket {
    pub lower_ns: u64,
    pub count: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct HotFile {
    pub path: String,
    pub calls: u64,
    pub bytes: u64,
}

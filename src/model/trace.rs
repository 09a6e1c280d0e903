//! Result detail of application traces (`iolab trace run` and `iolab trace replay`): what
//! each stream moved, per-operation latency, whether paced streams held their rate, and for
//! replays how the replay time compares with the recorded time.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::LatencyStats;

/// What was run: the workload (built-in name or file) and its shape.
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
}

/// One stream of a workload as it was run (after `--scale`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct StreamSpec {
    pub name: String,
    pub copies: u32,
    pub files: u64,
    pub file_bytes_total: u64,
    /// Target rate in bytes/s for paced streams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_bytes_per_s: Option<f64>,
}

/// One run of a workload or replay.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TraceRunDetail {
    /// One entry per stream copy (thread).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub streams: Vec<StreamResult>,
    /// Per operation (`read`, `write`, `open`, `fsync`, ...): count, bytes, latency.
    pub ops: BTreeMap<String, OpResult>,
    /// Bytes written to create the file set before measuring (not counted in `bytes`).
    pub prefill_bytes: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayDetail>,
}

/// What one stream copy did.
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_bytes_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadlines: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missed_deadlines: Option<u64>,
    /// Paced streams: at most 1 % of requests missed their deadline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
}

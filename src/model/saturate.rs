//! Result detail of the saturation sweep (`iolab saturate`).

use serde::{Deserialize, Serialize};

/// One measured depth of the sweep (aggregated over targets when there are several).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CurvePoint {
    pub iodepth: u32,
    pub jobs: u32,
    pub iops: f64,
    pub bw_bytes_per_s: f64,
    pub lat_mean_ns: f64,
    pub lat_p99_ns: f64,
    pub lat_p999_ns: f64,
    /// Achieved average queue depth (Little's law).
    pub avg_queue_depth: f64,
    /// iolab's CPU use, percent of one core.
    pub cpu_pct: f64,
    /// True when the chosen latency statistic was within the limit.
    pub within_limit: bool,
}

/// The largest depth that held the latency limit.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Answer {
    pub iops: f64,
    pub iodepth: u32,
    /// `mean`, `p99` or `p99.9`.
    pub statistic: String,
    pub latency_ns: f64,
    pub limit_ns: f64,
    /// Depth after which IOPS stopped rising (the knee), if seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knee_iodepth: Option<u32>,
    /// IOPS fell while depth rose (thrashing).
    pub thrashed: bool,
}

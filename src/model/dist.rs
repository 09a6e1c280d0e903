//! Result detail of a distributed run (`src/dist`, cargo feature `mpi`): the common window of
//! the ranks, their clock-corrected starts and ends, and how far apart they were.

use serde::{Deserialize, Serialize};

/// On each aggregated run (`tests[].runs[]` of a distributed result): how the ranks' runs
/// lined up. Rates of that run are over the common window, from the earliest start to the
/// latest end (clock offsets corrected).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct DistRun {
    pub ranks: u32,
    /// Latest start minus earliest start of the measured windows.
    pub start_skew_ns: u64,
    /// Latest end minus earliest end.
    pub end_skew_ns: u64,
    /// The rank with the highest and the lowest IOPS of this run.
    pub fastest_rank: u32,
    pub slowest_rank: u32,
    /// Straggler spread: (fastest - slowest) / fastest IOPS, in percent.
    pub straggler_spread_pct: f64,
    /// Mean completion latency: the mean and the max over the ranks' own means.
    pub lat_mean_ns_host_mean: f64,
    pub lat_mean_ns_host_max: f64,
    /// Ranks stopped early because another rank reached its limit first (stonewall).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stonewalled_ranks: Vec<u32>,
    /// Each rank's measured window, ns relative to the earliest start, on rank 0's clock.
    pub windows: Vec<RankWindow>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct RankWindow {
    pub rank: u32,
    pub start_ns: i64,
    pub end_ns: i64,
}

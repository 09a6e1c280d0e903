//! Result detail of a sustained write (`iolab sustain`): the phases of one pass's
//! throughput series, the cliffs between them (the write cache filling up) and, for a pass
//! after idle time, how much of the cache came back. Computed by `stats::changepoint`.

use serde::{Deserialize, Serialize};

/// One pass of `iolab sustain` (the first, or one after `--recovery` idle time).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SustainDetail {
    /// `first`, or `recovery` for a pass after idle time.
    pub pass: String,
    /// Seconds the target was left idle before this pass (recovery passes).
    pub idle_before_s: Option<f64>,
    /// Length of one point of the series the phases were found in.
    pub interval_ms: u64,
    /// Bytes written in this pass (whole intervals of the series and the last, partial one).
    pub bytes_written: u64,
    /// Levels of throughput, in order (one phase when the speed never changed materially).
    pub phases: Vec<SustainPhase>,
    /// Every material drop between two phases; the first one's `fast_phase_bytes` is the
    /// write cache when the pass started with an empty cache.
    pub cliffs: Vec<SustainCliff>,
    /// Recovery passes: bytes written at the fast speed before the first cliff, in the fast
    /// phase (a slow start before it is not counted; 0 when the pass ran at the slow speed
    /// from the start).
    pub recovered_bytes: Option<f64>,
    /// `recovered_bytes` as a share of the first pass's cache (1 = all of it came back).
    pub recovered_share: Option<f64>,
    /// The phase (index into `phases`) whose speed is the pass's settled speed: the last
    /// one, or the one before the rises of fewer than 10 intervals each that ended the
    /// pass (a burst, not a level). Absent in results before it existed: the last phase then.
    pub settled_phase: Option<usize>,
    /// What keeps the target's data in RAM (`tmpfs keeps its data in RAM`), when it does:
    /// there is no drive and no drive write cache, and a cliff is the machine's (memory
    /// reclaim, other work on the CPUs). Absent for storage.
    pub memory_backed: Option<String>,
    /// The pass ended before any cliff while still at the fast speed: `recovered_bytes` is
    /// a lower bound.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub recovered_at_least: bool,
    /// Pauses of a steady speed that came back after them (2 to 4 intervals under half of
    /// it): no cliff, and no part of a phase's speed (their bytes are its). Absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pauses: Vec<SustainPause>,
}

/// A pause: intervals `[start_ms, end_ms)` of the series under half the steady speed before
/// them, after which the speed came back (a writer the machine did not schedule, a drive's
/// garbage collection or flush).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SustainPause {
    pub start_ms: u64,
    pub end_ms: u64,
    /// Mean speed over the pause's intervals.
    pub bw_bytes_per_s: f64,
    /// The steady speed before it (the median of its 4 intervals before), which came back.
    pub before_bw_bytes_per_s: f64,
    /// The share of the pause the pass's job thread spent waiting for a CPU (runnable while
    /// other threads held every CPU); absent where the kernel does not tell.
    pub cpu_wait_share: Option<f64>,
    /// The share of the pause in which some task of the machine waited for a CPU (PSI
    /// `some` of `/proc/pressure/cpu`: also the kernel's threads that do the I/O, such as a
    /// loop device's worker, while the job thread sleeps); absent where the kernel does not
    /// tell.
    pub cpu_pressure_share: Option<f64>,
}

/// One level of throughput: points `[start_ms, end_ms)` of the series.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SustainPhase {
    pub start_ms: u64,
    pub end_ms: u64,
    /// Bytes written in the phase's intervals.
    pub bytes: u64,
    /// Mean of the phase's per-interval throughput, over its settled intervals: the pass's
    /// first interval (start-up) and the intervals shared with a neighbouring phase (a mix
    /// of both speeds) are left out when at least two others remain, and so is a burst or
    /// dip of fewer than 5 intervals at the very start or end of the pass that the phase
    /// took in (a fast start of 3 or 4 that stands clear of the phase after it is a phase), or a rise of fewer than 10 that ended the pass too unevenly to be a phase
    /// of its own (their bytes are the phase's).
    pub mean_bw_bytes_per_s: f64,
    /// Sample standard deviation of the same intervals' throughput (the spread within the phase).
    pub stddev_bw_bytes_per_s: f64,
}

/// One material drop of throughput.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SustainCliff {
    /// When the drop happened, ms after the pass started (interpolated inside the interval).
    pub at_ms: f64,
    /// Bytes the pass had written when the drop happened.
    pub bytes_before: f64,
    /// Bytes written in the fast phase that ended with the drop: the cache size when the
    /// pass started with an empty cache.
    pub fast_phase_bytes: f64,
    /// Speeds on both sides, away from the interval of the drop (a mix of both).
    pub before_bw_bytes_per_s: f64,
    pub after_bw_bytes_per_s: f64,
    pub before_stddev_bw_bytes_per_s: f64,
    pub after_stddev_bw_bytes_per_s: f64,
}

//! Result detail of the saturation sweep (`iolab saturate`).

use serde::{Deserialize, Serialize};

/// One measured depth of the sweep (aggregated over targets when there are several).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CurvePoint {
    #[serde(flatten)]
    pub at: StepFigures,
    /// iolab's CPU use, percent of one core.
    pub cpu_pct: f64,
    /// True when the chosen latency statistic was within the limit.
    pub within_limit: bool,
    #[serde(flatten)]
    pub detail: CurvePointDetail,
}

/// The largest depth that held the latency limit.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Answer {
    pub iops: f64,
    pub iodepth: u32,
    /// `mean`, `p99` or `p99.9`.
    pub statistic: String,
    /// That statistic at the answer; none when no depth held the limit (`found` false):
    /// it was written as 0.0, which read like a measurement.
    pub latency_ns: Option<f64>,
    pub limit_ns: f64,
    /// Depth after which IOPS stopped rising (the knee), if seen.
    pub knee_iodepth: Option<u32>,
    /// IOPS fell while depth rose (thrashing).
    pub thrashed: bool,
    #[serde(flatten)]
    pub detail: AnswerDetail,
}

/// Latency statistics of one step (ns).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LatTriple {
    pub mean_ns: f64,
    pub p99_ns: f64,
    pub p999_ns: f64,
}

/// One independent stream of a step: one job group (randread or randwrite) on one target.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct StreamPoint {
    pub target: String,
    /// `randread` or `randwrite`.
    pub rw: String,
    #[serde(flatten)]
    pub at: StepFigures,
}

/// What a step (or one stream of it) ran at and achieved (serialized flat into its point).
/// A step in which no I/O completed has no latency and no achieved queue depth: they are 0
/// here and absent from the JSON (they were written, and shown, as 0 ns).
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
pub struct StepFigures {
    pub iodepth: u32,
    pub jobs: u32,
    pub iops: f64,
    pub bw_bytes_per_s: f64,
    #[serde(default)]
    pub lat_mean_ns: f64,
    #[serde(default)]
    pub lat_p99_ns: f64,
    #[serde(default)]
    pub lat_p999_ns: f64,
    /// Achieved average queue depth (Little's law).
    #[serde(default)]
    pub avg_queue_depth: f64,
}

impl StepFigures {
    /// Whether any I/O completed in the step; without one its latencies and queue depth are
    /// no figures (every request took longer than the step).
    pub fn completed_any(&self) -> bool {
        self.iops > 0.0
    }
}

impl Serialize for StepFigures {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[serde_with::skip_serializing_none]
        #[derive(Serialize)]
        struct Out {
            iodepth: u32,
            jobs: u32,
            iops: f64,
            bw_bytes_per_s: f64,
            lat_mean_ns: Option<f64>,
            lat_p99_ns: Option<f64>,
            lat_p999_ns: Option<f64>,
            avg_queue_depth: Option<f64>,
        }
        let some = |v: f64| self.completed_any().then_some(v);
        Out {
            iodepth: self.iodepth,
            jobs: self.jobs,
            iops: self.iops,
            bw_bytes_per_s: self.bw_bytes_per_s,
            lat_mean_ns: some(self.lat_mean_ns),
            lat_p99_ns: some(self.lat_p99_ns),
            lat_p999_ns: some(self.lat_p999_ns),
            avg_queue_depth: some(self.avg_queue_depth),
        }
        .serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A step in which no I/O completed wrote latencies of 0 ns; now they are absent, and a
    /// point with them reads back the same.
    #[test]
    fn a_step_without_completions_has_no_latency_in_the_json() {
        let empty = CurvePoint {
            at: StepFigures {
                iodepth: 4,
                jobs: 1,
                ..Default::default()
            },
            ..Default::default()
        };
        let v = serde_json::to_value(&empty).unwrap();
        for k in [
            "lat_mean_ns",
            "lat_p99_ns",
            "lat_p999_ns",
            "avg_queue_depth",
        ] {
            assert!(v.get(k).is_none(), "{k} in {v}");
        }
        assert_eq!(v["iops"], 0.0);
        let back: CurvePoint = serde_json::from_value(v).unwrap();
        assert_eq!(back, empty);
        let measured = CurvePoint {
            at: StepFigures {
                iodepth: 4,
                jobs: 1,
                iops: 100.0,
                lat_mean_ns: 4e7,
                lat_p99_ns: 5e7,
                lat_p999_ns: 6e7,
                avg_queue_depth: 4.0,
                ..Default::default()
            },
            ..Default::default()
        };
        let v = serde_json::to_value(&measured).unwrap();
        assert_eq!(v["lat_p99_ns"], 5e7);
        assert_eq!(serde_json::from_value::<CurvePoint>(v).unwrap(), measured);
    }
}

/// Additions to `CurvePoint` (serialized flat into it).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CurvePointDetail {
    /// `sweep` (the doubling steps) or `bisect` (refinement between good and bad).
    #[serde(default)]
    pub phase: String,
    /// Wall time of the step, ramp included.
    #[serde(default)]
    pub step_s: f64,
    /// With several streams (targets, or read + write): latency over all I/Os of all
    /// streams (the `mean` aggregate) ...
    pub lat_over_streams_mean: Option<LatTriple>,
    /// ... and the worst stream (the `max` aggregate).
    pub lat_over_streams_max: Option<LatTriple>,
    /// Every stream of the step when there is more than one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub streams: Vec<StreamPoint>,
    /// What each target's block device saw during the step (`/proc/diskstats` deltas).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<super::device::DeviceCounters>,
    /// Distributed saturate: I/Os in flight in total, `iodepth * jobs * targets * ranks`.
    pub total_iodepth: Option<u32>,
    /// The judged latency (the `--statistic`, aggregated) of this depth's first
    /// measurement, set aside because a job thread waited for a CPU in it (the step's
    /// `cpu-contention`): the depth was measured again at once, and this point is that
    /// second measurement. Absent when the first measurement was judged.
    pub set_aside_latency_ns: Option<f64>,
    /// True only: a job thread waited for a CPU in this second measurement too; the limit
    /// was judged on its latency nonetheless.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cpu_contended: bool,
    /// Distributed saturate: the step as a run. On a host's point that rank's own figures
    /// (its measured window, ops, latency histogram); on the totals the aggregate over the
    /// ranks (rates over the common window, the merged histogram, the ranks' windows and the
    /// straggler spread in `dist`).
    pub run: Option<super::RunResult>,
}

/// Additions to `Answer` (serialized flat into it).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct AnswerDetail {
    /// Jobs (threads) of the answer; the total outstanding I/Os are `iodepth * jobs`.
    #[serde(default)]
    pub jobs: u32,
    /// I/Os in flight in total at the answer: `iodepth * jobs * targets`.
    #[serde(default)]
    pub total_iodepth: u32,
    #[serde(default)]
    pub bw_bytes_per_s: f64,
    /// `mean` or `max` over the streams (targets and directions).
    #[serde(default)]
    pub aggregate: String,
    /// Some depth held the limit (false: even the smallest depth broke it; `iops` is 0).
    #[serde(default)]
    pub found: bool,
    /// The limit was crossed within `--max-depth` (false: the answer is only a lower bound).
    #[serde(default)]
    pub limit_crossed: bool,
    /// The smallest depth that broke the limit, if any.
    pub first_bad_iodepth: Option<u32>,
    /// The highest IOPS seen on the curve and where (regardless of latency).
    #[serde(default)]
    pub peak_iops: f64,
    #[serde(default)]
    pub peak_iodepth: u32,
    /// Distributed saturate: the ranks, each running `iodepth x jobs` per target on its own
    /// test file; `total_iodepth` counts them all.
    pub ranks: Option<u32>,
    /// The depths that decided the answer (its own, the first bad one) whose steps were
    /// judged on latency measured while a job thread waited for a CPU, in both measurements
    /// of them: the answer is uncertain and may belong at another depth.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contended_iodepths: Vec<u32>,
}

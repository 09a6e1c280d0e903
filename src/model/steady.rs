//! Steady state of a test: the rule, the value of every round and which window of rounds
//! met the rule (or that none did before the time limit). Computed by `stats::steady`;
//! documented in docs/results-schema.md ("The state of a device").

use serde::{Deserialize, Serialize};

/// How a test ran to steady state (`--steadystate`).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SteadyStateRecord {
    /// `snia` (SNIA PTS: 5 rounds, range ≤ 20 %, fit excursion ≤ 10 % of the mean) or the
    /// fio criterion as given (`iops:10%`, `bw_slope:1MB/s`).
    pub rule: String,
    /// The value judged per round: `iops` or `bw_bytes_per_s`.
    pub metric: String,
    /// Rounds in the measurement window.
    pub window_rounds: usize,
    /// Rounds ignored before the first window (fio's `ss_ramp`).
    pub ramp_rounds: usize,
    /// The time after which no new round starts.
    pub max_s: f64,
    /// Whether a window met the rule.
    pub reached: bool,
    /// The first window that met the rule, rounds counted from 0 (`None`: not reached).
    pub steady_first_round: Option<usize>,
    pub steady_last_round: Option<usize>,
    /// The metric of every round, in order.
    pub values: Vec<f64>,
    /// The last judged window (the steady one when reached): its mean, max − min and
    /// least-squares slope per round (in the metric's unit), and the rule's criterion
    /// (SNIA: ≤ 1 passes; fio: the deviation or slope, in percent of the mean for a `%`
    /// limit, else absolute).
    pub window_mean: Option<f64>,
    pub window_range: Option<f64>,
    pub window_slope: Option<f64>,
    pub criterion: Option<f64>,
    /// Seconds the rounds took, from the first round's start to the last one's end.
    pub elapsed_s: f64,
    /// `saturate`: the depth (I/Os in flight per job) the rounds ran at.
    pub iodepth: Option<u32>,
}

impl SteadyStateRecord {
    /// The rounds a summary should cover: the steady window, or the last window's worth of
    /// rounds when steady state was not reached (all rounds if there are fewer).
    pub fn summary_rounds(&self) -> std::ops::Range<usize> {
        let n = self.values.len();
        match (self.steady_first_round, self.steady_last_round) {
            (Some(a), Some(b)) if a <= b && b < n => a..b + 1,
            _ => n.saturating_sub(self.window_rounds)..n,
        }
    }

    /// One line for tables: `steady state (snia) reached in rounds 6-10 of 11` or
    /// `steady state (snia) not reached in 14 rounds (60 s limit)`.
    pub fn describe(&self) -> String {
        match (self.steady_first_round, self.steady_last_round) {
            (Some(a), Some(b)) if self.reached => format!(
                "steady state ({}) reached at round {b}: window rounds {a}-{b} of {} (counted from 0)",
                self.rule,
                self.values.len()
            ),
            _ => format!(
                "steady state ({}) not reached in {} rounds ({} limit){}",
                self.rule,
                self.values.len(),
                crate::units::fmt_secs(self.max_s),
                self.too_few_rounds()
            ),
        }
    }

    /// When fewer rounds fit in the time limit than a verdict needs (the window and the
    /// ramp), a clause that says so; else nothing.
    pub fn too_few_rounds(&self) -> String {
        let needed = self.window_rounds + self.ramp_rounds;
        if self.reached || self.values.len() >= needed {
            return String::new();
        }
        format!(": no verdict was possible, a window needs {needed} rounds")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_rounds_and_lines() {
        let mut r = SteadyStateRecord {
            rule: "snia".into(),
            window_rounds: 5,
            values: vec![1.0; 12],
            max_s: 60.0,
            ..Default::default()
        };
        assert_eq!(r.summary_rounds(), 7..12);
        assert!(
            r.describe()
                .contains("not reached in 12 rounds (1 min 00 s limit)")
        );
        // A limit under a second is not rounded to "1 s"; fewer rounds than the window
        // are said to allow no verdict.
        let short = SteadyStateRecord {
            values: vec![1.0; 4],
            max_s: 0.7,
            ..r.clone()
        };
        assert_eq!(
            short.describe(),
            "steady state (snia) not reached in 4 rounds (700 ms limit): no verdict was possible, a window needs 5 rounds"
        );
        r.values.truncate(3);
        assert_eq!(r.summary_rounds(), 0..3);
        r.values = vec![1.0; 12];
        r.reached = true;
        r.steady_first_round = Some(4);
        r.steady_last_round = Some(8);
        assert_eq!(r.summary_rounds(), 4..9);
        assert_eq!(
            r.describe(),
            "steady state (snia) reached at round 8: window rounds 4-8 of 12 (counted from 0)"
        );
        let j = serde_json::to_string(&r).unwrap();
        assert!(j.contains(r#""steady_first_round":4"#), "{j}");
        assert_eq!(serde_json::from_str::<SteadyStateRecord>(&j).unwrap(), r);
    }
}

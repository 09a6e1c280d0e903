//! Steady-state rounds (`--steadystate`): keep measuring rounds until the last window of
//! rounds meets a published rule (`stats::steady`: SNIA PTS or a fio `--steadystate`
//! criterion), or until the maximum time has passed; then say which round reached it.
//! A round is one run of a test (`iolab run`) or one step at a fixed depth (`iolab
//! saturate`). Pure bookkeeping: the command measures, this decides and records (here,
//! below the runner, so that the configs of every family can validate a setting).

use std::time::Duration;

use super::steady::{
    FioCriterion, Metric, SniaRule, SteadyDetector, SteadyRule, Verdict, rounds_for,
};
use crate::model::steady::SteadyStateRecord;
use crate::model::{RunResult, Warning, WarningCode};

/// The SNIA PTS's limit: a test that is not steady after 25 rounds is reported as such.
pub const PTS_MAX_ROUNDS: u32 = 25;

/// Rounds in a fio window when `--steadystate-duration` is not given (the PTS's window).
pub const DEFAULT_WINDOW_ROUNDS: usize = 5;

/// A validated `--steadystate` setting.
#[derive(Debug, Clone, PartialEq)]
pub struct SteadySpec {
    pub rule: SteadyRule,
    /// As the user wrote it (`snia`, `iops:10%`).
    pub label: String,
    pub window: usize,
    pub ramp: usize,
    /// No round starts after this time (from the first round's start).
    pub max: Duration,
}

impl SteadySpec {
    /// `--steadystate RULE` with `--steadystate-duration`, `--steadystate-ramp` and
    /// `--steadystate-max`, for rounds that measure `round` each and take about `round_wall`
    /// (warm-up and pauses included). Errors are one line, for a usage error.
    pub fn parse(
        rule: &str,
        duration: Option<Duration>,
        ramp: Option<Duration>,
        max: Option<Duration>,
        round: Duration,
        round_wall: Duration,
    ) -> Result<SteadySpec, String> {
        let label = rule.trim().to_string();
        let (rule, window, ramp_rounds) = if label.eq_ignore_ascii_case("snia") {
            if duration.is_some() {
                return Err("--steadystate-duration: the SNIA PTS window is 5 rounds; the duration is for fio criteria (iops:…, bw_slope:…)".into());
            }
            if ramp.is_some() {
                return Err("--steadystate-ramp: the SNIA PTS judges every round; the ramp is for fio criteria (iops:…, bw_slope:…)".into());
            }
            let r = SniaRule::default();
            (SteadyRule::Snia(r), r.window, 0)
        } else {
            let c: FioCriterion = label.parse().map_err(|e| {
                format!("--steadystate {label}: {e} (or snia for the SNIA PTS rule)")
            })?;
            let window = match duration {
                Some(d) if d.is_zero() => {
                    return Err(
                        "--steadystate-duration 0: give the window's length, e.g. 30s".into(),
                    );
                }
                Some(d) => rounds_for(d, round, 2),
                None => DEFAULT_WINDOW_ROUNDS,
            };
            let ramp = ramp.map(|r| rounds_for(r, round, 0)).unwrap_or(0);
            (SteadyRule::Fio(c), window, ramp)
        };
        let max = max.unwrap_or(round_wall * PTS_MAX_ROUNDS);
        let needed = round_wall * (window + ramp_rounds) as u32;
        if max < needed {
            return Err(format!(
                "--steadystate-max {}: shorter than the {} rounds of about {} a verdict needs ({}); give at least {}",
                crate::units::fmt_ns(max.as_nanos() as f64),
                window + ramp_rounds,
                crate::units::fmt_ns(round_wall.as_nanos() as f64),
                if ramp_rounds > 0 {
                    "window and ramp"
                } else {
                    "the window"
                },
                crate::units::fmt_ns(needed.as_nanos() as f64)
            ));
        }
        Ok(SteadySpec {
            rule,
            label,
            window,
            ramp: ramp_rounds,
            max,
        })
    }

    /// What a round is judged on: IOPS for SNIA (the PTS's rules are relative, and at one
    /// block size IOPS and bandwidth are proportional) and for `iops*`, bandwidth for `bw*`.
    pub fn metric(&self) -> Metric {
        match self.rule {
            SteadyRule::Snia(_) => Metric::Iops,
            SteadyRule::Fio(c) => c.metric,
        }
    }

    /// The round's value of a measured run.
    pub fn value_of(&self, r: &RunResult) -> f64 {
        match self.metric() {
            Metric::Iops => r.iops.unwrap_or(0.0),
            Metric::Bw => r.bw_bytes_per_s.unwrap_or(0.0),
        }
    }
}

/// The rounds of one test so far.
#[derive(Debug, Clone)]
pub struct SteadyRounds {
    spec: SteadySpec,
    detector: SteadyDetector,
    values: Vec<f64>,
}

impl SteadyRounds {
    pub fn new(spec: &SteadySpec) -> SteadyRounds {
        let detector = match spec.rule {
            SteadyRule::Snia(r) => SteadyDetector::snia(r),
            SteadyRule::Fio(c) => SteadyDetector::fio(c, spec.window, spec.ramp),
        };
        SteadyRounds {
            spec: spec.clone(),
            detector,
            values: Vec::new(),
        }
    }

    /// Another round? Not once steady; not when `elapsed` (since the first round started)
    /// has reached the maximum; always a first one.
    pub fn wants_more(&self, elapsed: Duration) -> bool {
        if self.steady() {
            return false;
        }
        self.values.is_empty() || elapsed < self.spec.max
    }

    /// Record a measured round.
    pub fn push_run(&mut self, r: &RunResult) -> Verdict {
        let v = self.spec.value_of(r);
        self.push(v)
    }

    /// Record a round's value.
    pub fn push(&mut self, value: f64) -> Verdict {
        self.values.push(value);
        self.detector.push(value)
    }

    pub fn steady(&self) -> bool {
        self.detector.steady_at().is_some()
    }

    pub fn rounds(&self) -> usize {
        self.values.len()
    }

    /// The record for the result, after `elapsed` of rounds.
    pub fn record(&self, elapsed: Duration) -> SteadyStateRecord {
        let mut rec = SteadyStateRecord {
            rule: self.spec.label.to_ascii_lowercase(),
            metric: match self.spec.metric() {
                Metric::Iops => "iops",
                Metric::Bw => "bw_bytes_per_s",
            }
            .into(),
            window_rounds: self.detector.window(),
            ramp_rounds: self.spec.ramp,
            max_s: self.spec.max.as_secs_f64(),
            values: self.values.clone(),
            elapsed_s: elapsed.as_secs_f64(),
            ..Default::default()
        };
        let check = match self.detector.verdict() {
            Verdict::Steady {
                first_round,
                last_round,
                check,
            } => {
                rec.reached = true;
                rec.steady_first_round = Some(first_round);
                rec.steady_last_round = Some(last_round);
                Some(check)
            }
            Verdict::NotSteady(c) => Some(c),
            Verdict::Collecting => None,
        };
        if let Some(c) = check {
            rec.window_mean = Some(c.mean);
            rec.window_range = Some(c.range);
            rec.window_slope = Some(c.slope);
            rec.criterion = c.criterion.is_finite().then_some(c.criterion);
        }
        rec
    }
}

/// The warning of a test that did not become steady.
pub fn not_reached_warning(rec: &SteadyStateRecord, test: &str) -> Option<Warning> {
    if rec.reached {
        return None;
    }
    Some(Warning {
        code: WarningCode::SteadyStateNotReached,
        message: format!(
            "steady state ({}) was not reached in {} rounds ({}, limit {}){}",
            rec.rule,
            rec.values.len(),
            crate::units::fmt_secs(rec.elapsed_s),
            crate::units::fmt_secs(rec.max_s),
            if rec.too_few_rounds().is_empty() {
                ": the drive was still changing, so its figures describe a moment, not the drive; precondition it (--precondition), or allow more time (--steadystate-max)".to_string()
            } else {
                format!(
                    "{} and only {} fit in the limit (a round takes longer than the time it measures: warm-up, setup); allow more time (--steadystate-max)",
                    rec.too_few_rounds(),
                    rec.values.len()
                )
            }
        ),
        test: Some(test.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    fn snia() -> SteadySpec {
        SteadySpec::parse("snia", None, None, None, S, S).unwrap()
    }

    /// Runs the round loop a command runs over a fake series, one second per round:
    /// the rounds measured and the record.
    fn drive(spec: &SteadySpec, series: impl Fn(usize) -> f64) -> SteadyStateRecord {
        let mut r = SteadyRounds::new(spec);
        let mut elapsed = Duration::ZERO;
        while r.wants_more(elapsed) {
            let i = r.rounds();
            r.push(series(i));
            elapsed += S;
        }
        r.record(elapsed)
    }

    /// A limit that rises in steps (100, 200, 300, 400 for three rounds each) and is flat
    /// (±1 %) from round 12 on: steady in the first window of five flat rounds, 12..=16.
    fn steps(i: usize) -> f64 {
        if i < 12 {
            100.0 * (1 + i / 3) as f64
        } else {
            500.0 * [1.0, 1.01, 0.99, 1.005, 0.995][i % 5]
        }
    }

    #[test]
    fn stepped_then_flat_is_steady_in_the_first_flat_window() {
        let rec = drive(&snia(), steps);
        assert!(rec.reached, "{rec:?}");
        assert_eq!(
            (rec.steady_first_round, rec.steady_last_round),
            (Some(12), Some(16))
        );
        // No round after the verdict.
        assert_eq!(rec.values.len(), 17);
        assert_eq!(rec.summary_rounds(), 12..17);
        assert!((rec.window_mean.unwrap() - 500.0).abs() < 5.0);
        assert!(rec.criterion.unwrap() <= 1.0);
        assert!(not_reached_warning(&rec, "t").is_none());
        // A fio criterion on the same series: bandwidth within 2 % of the mean.
        let fio = SteadySpec::parse("bw:2%", None, None, None, S, S).unwrap();
        let rec = drive(&fio, steps);
        assert_eq!(rec.steady_first_round, Some(12));
        assert_eq!(rec.metric, "bw_bytes_per_s");
    }

    #[test]
    fn a_drive_that_keeps_changing_ends_not_reached_at_the_limit() {
        // Alternating 100 / 150 every round: every window's range is 40 % of its mean.
        let spec =
            SteadySpec::parse("snia", None, None, Some(Duration::from_secs(12)), S, S).unwrap();
        let rec = drive(&spec, |i| if i % 2 == 0 { 100.0 } else { 150.0 });
        assert!(!rec.reached);
        assert_eq!(rec.values.len(), 12, "no round starts after the limit");
        assert_eq!(rec.steady_first_round, None);
        assert_eq!(rec.summary_rounds(), 7..12);
        assert!(rec.criterion.unwrap() > 1.0);
        let w = not_reached_warning(&rec, "SEQ1M").unwrap();
        assert_eq!(w.code, WarningCode::SteadyStateNotReached);
        assert!(
            w.message.contains("not reached in 12 rounds"),
            "{}",
            w.message
        );
        // Fewer rounds than the window fitted in the limit: the warning says no verdict was
        // possible, and gives a limit under a second as such, not rounded to "1 s".
        let short = SteadyStateRecord {
            values: vec![100.0; 4],
            elapsed_s: 0.82,
            max_s: 0.7,
            ..rec.clone()
        };
        let w = not_reached_warning(&short, "SEQ1M").unwrap();
        assert!(
            w.message.contains(
                "not reached in 4 rounds (820 ms, limit 700 ms): no verdict was possible, a window needs 5 rounds and only 4 fit in the limit"
            ),
            "{}",
            w.message
        );
        // The default limit is the PTS's 25 rounds.
        let rec = drive(&snia(), |i| 100.0 * 1.05f64.powi(i as i32));
        assert_eq!(rec.values.len(), 25);
        assert_eq!(rec.max_s, 25.0);
    }

    #[test]
    fn fio_window_and_ramp_in_rounds() {
        let spec = SteadySpec::parse(
            "iops_slope:1%",
            Some(Duration::from_secs(6)),
            Some(Duration::from_secs(4)),
            None,
            Duration::from_secs(2),
            Duration::from_millis(2500),
        )
        .unwrap();
        assert_eq!((spec.window, spec.ramp), (3, 2));
        assert_eq!(spec.max, Duration::from_millis(2500) * 25);
        // Flat from the start: judged only after the ramp, steady in rounds 2..=4.
        let rec = drive(&spec, |_| 1000.0);
        assert_eq!(
            (rec.steady_first_round, rec.steady_last_round),
            (Some(2), Some(4))
        );
        assert_eq!(rec.ramp_rounds, 2);
    }

    #[test]
    fn bad_combinations_are_one_line() {
        let e = |r: &str, d: Option<u64>, ramp: Option<u64>, max: Option<u64>| {
            SteadySpec::parse(
                r,
                d.map(Duration::from_secs),
                ramp.map(Duration::from_secs),
                max.map(Duration::from_secs),
                S,
                S,
            )
            .unwrap_err()
        };
        assert!(e("snia", Some(5), None, None).contains("SNIA PTS window is 5 rounds"));
        assert!(e("SNIA", None, Some(5), None).contains("judges every round"));
        assert!(e("lat:5%", None, None, None).contains("unknown steady-state criterion"));
        assert!(e("iops:5%", Some(0), None, None).contains("duration 0"));
        let m = e("snia", None, None, Some(3));
        assert!(m.contains("shorter than the 5 rounds"), "{m}");
        assert!(e("iops:5%", Some(4), Some(3), Some(6)).contains("window and ramp"));
        for m in [m, e("x", None, None, None)] {
            assert!(!m.contains('\n'), "{m}");
        }
    }
}

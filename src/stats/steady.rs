//! Steady state: has a drive stopped changing, so that what it does now is what it will
//! keep doing? Two published rules, fed one value per round (or per interval):
//!
//! - **SNIA PTS** (Solid State Storage Performance Test Specification, Enterprise and
//!   Client, "Steady State" definition): over a Measurement Window of 5 consecutive rounds,
//!   (1) max(y) − min(y) is no more than 20 % of the window's average, and (2) the
//!   excursion of the best linear (least-squares) fit across the window — fitted max minus
//!   fitted min, i.e. |slope| · (n − 1) — is within 10 % of the window's average.
//! - **fio `--steadystate`** (HOWTO `steadystate=str:float`, `ss_dur`, `ss_ramp`; logic in
//!   fio's steadystate.c), over a rolling window of `ss_dur`, after `ss_ramp`:
//!   `iops`/`bw`: every value within the limit of the window's mean (max |y − mean|);
//!   `iops_slope`/`bw_slope`: |least-squares slope per interval| below the limit. A limit
//!   ending in `%` is relative to the window's mean (`bw:2%`), else absolute (`iops:100`,
//!   `bw:5MB/s`, `bw_slope:1MiB/s`). fio stops when the criterion is strictly below the limit.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use thiserror::Error;

use crate::units::parse_size;

/// What a criterion is measured on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    Iops,
    /// Bytes per second.
    Bw,
}

/// How a fio criterion judges the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// Largest deviation of one value from the window's mean.
    Deviation,
    /// Least-squares slope per interval.
    Slope,
}

/// A limit: a fraction of the window's mean, or an absolute value in the metric's unit
/// (IOPS, or bytes per second).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Limit {
    /// Percent of the mean (`2%` is `Percent(2.0)`).
    Percent(f64),
    Absolute(f64),
}

/// One fio steady-state criterion, e.g. `bw_slope:0.5%`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FioCriterion {
    pub metric: Metric,
    pub check: Check,
    pub limit: Limit,
}

/// Why a criterion string was refused. One line each: these become CLI errors.
#[derive(Debug, Error, PartialEq)]
pub enum SteadyParseError {
    #[error(
        "'{0}' is not a steady-state criterion: write NAME:LIMIT, e.g. iops:2%, bw_slope:0.5%, bw:5MB/s"
    )]
    MissingLimit(String),
    #[error("unknown steady-state criterion '{0}' (choose iops, iops_slope, bw or bw_slope)")]
    UnknownName(String),
    #[error("'{0}' is not a percentage (examples: 2%, 0.5%)")]
    BadPercent(String),
    #[error("'{0}' is not an IOPS limit (examples: 100, 2.5, 10%)")]
    BadIops(String),
    #[error("'{0}' is not a bandwidth limit (examples: 5MB/s, 1MiB/s, 10%)")]
    BadBw(String),
    #[error("steady-state limit '{0}' must be greater than zero")]
    NotPositive(String),
}

impl FromStr for FioCriterion {
    type Err = SteadyParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let (name, limit) = s
            .split_once(':')
            .ok_or_else(|| SteadyParseError::MissingLimit(s.to_string()))?;
        let (name, limit) = (name.trim(), limit.trim());
        if limit.is_empty() {
            return Err(SteadyParseError::MissingLimit(s.to_string()));
        }
        let (metric, check) = match name.to_ascii_lowercase().as_str() {
            "iops" => (Metric::Iops, Check::Deviation),
            "iops_slope" => (Metric::Iops, Check::Slope),
            "bw" => (Metric::Bw, Check::Deviation),
            "bw_slope" => (Metric::Bw, Check::Slope),
            _ => return Err(SteadyParseError::UnknownName(name.to_string())),
        };
        // A finite number, or the error `bad` of the whole limit.
        let finite = |text: &str, bad: fn(String) -> SteadyParseError| {
            text.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| bad(limit.to_string()))
        };
        let value = if let Some(p) = limit.strip_suffix('%') {
            Limit::Percent(finite(p.trim(), SteadyParseError::BadPercent)?)
        } else {
            match metric {
                Metric::Iops => Limit::Absolute(finite(limit, SteadyParseError::BadIops)?),
                Metric::Bw => {
                    // A rate: a size per second (`/s` optional, as fio writes bw limits).
                    let size = limit.strip_suffix("/s").unwrap_or(limit);
                    let v =
                        parse_size(size).map_err(|_| SteadyParseError::BadBw(limit.to_string()))?;
                    Limit::Absolute(v as f64)
                }
            }
        };
        let positive = match value {
            Limit::Percent(v) | Limit::Absolute(v) => v > 0.0,
        };
        if !positive {
            return Err(SteadyParseError::NotPositive(limit.to_string()));
        }
        Ok(FioCriterion {
            metric,
            check,
            limit: value,
        })
    }
}

impl fmt::Display for FioCriterion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match (self.metric, self.check) {
            (Metric::Iops, Check::Deviation) => "iops",
            (Metric::Iops, Check::Slope) => "iops_slope",
            (Metric::Bw, Check::Deviation) => "bw",
            (Metric::Bw, Check::Slope) => "bw_slope",
        };
        match self.limit {
            Limit::Percent(p) => write!(f, "{name}:{p}%"),
            Limit::Absolute(v) if self.metric == Metric::Bw => write!(f, "{name}:{v}B/s"),
            Limit::Absolute(v) => write!(f, "{name}:{v}"),
        }
    }
}

/// clap value parser for `--steadystate`.
pub fn fio_criterion_arg(s: &str) -> Result<FioCriterion, String> {
    s.parse().map_err(|e: SteadyParseError| e.to_string())
}

/// How many rounds of `interval` make up `duration` (fio's `ss_dur` / `ss_ramp` turned
/// into a count of values): rounded up, at least `min`.
pub fn rounds_for(duration: Duration, interval: Duration, min: usize) -> usize {
    if interval.is_zero() {
        return min;
    }
    let r = (duration.as_secs_f64() / interval.as_secs_f64() - 1e-9).ceil();
    (r.max(0.0) as usize).max(min)
}

/// Mean and least-squares slope (per step of x = 0, 1, …) of a window.
pub fn mean_and_slope(ys: &[f64]) -> (f64, f64) {
    let n = ys.len() as f64;
    if ys.is_empty() {
        return (0.0, 0.0);
    }
    let mean = ys.iter().sum::<f64>() / n;
    if ys.len() < 2 {
        return (mean, 0.0);
    }
    let xm = (n - 1.0) / 2.0;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, y) in ys.iter().enumerate() {
        let dx = i as f64 - xm;
        sxy += dx * (y - mean);
        sxx += dx * dx;
    }
    (mean, sxy / sxx)
}

/// The SNIA PTS steady-state rule's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SniaRule {
    /// Rounds in the Measurement Window (5 in the PTS).
    pub window: usize,
    /// Largest allowed max − min, as a fraction of the window's average (0.20).
    pub max_range_fraction: f64,
    /// Largest allowed excursion of the linear fit across the window, as a fraction of
    /// the window's average (0.10).
    pub max_fit_excursion_fraction: f64,
}

impl Default for SniaRule {
    fn default() -> Self {
        SniaRule {
            window: 5,
            max_range_fraction: 0.20,
            max_fit_excursion_fraction: 0.10,
        }
    }
}

/// What a rule saw in one window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowCheck {
    pub mean: f64,
    /// max − min of the window.
    pub range: f64,
    /// Least-squares slope per round.
    pub slope: f64,
    /// The rule's criterion (SNIA: the larger of range/mean ÷ 0.20 and excursion/mean ÷
    /// 0.10, so ≤ 1 passes; fio: the deviation or |slope|, in percent of the mean for
    /// a `%` limit, else absolute).
    pub criterion: f64,
    pub steady: bool,
}

/// Largest minus smallest value of the window (0 for an empty one).
fn range_of(window: &[f64]) -> f64 {
    let (lo, hi) = window
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| {
            (a.min(*y), b.max(*y))
        });
    if window.is_empty() { 0.0 } else { hi - lo }
}

/// The SNIA PTS check of one Measurement Window (its values oldest first).
pub fn snia_check(window: &[f64], rule: &SniaRule) -> WindowCheck {
    let (mean, slope) = mean_and_slope(window);
    let range = range_of(window);
    let excursion = slope.abs() * (window.len().saturating_sub(1)) as f64;
    let steady = mean > 0.0
        && range <= rule.max_range_fraction * mean
        && excursion <= rule.max_fit_excursion_fraction * mean;
    let criterion = if mean > 0.0 {
        (range / mean / rule.max_range_fraction)
            .max(excursion / mean / rule.max_fit_excursion_fraction)
    } else {
        f64::INFINITY
    };
    WindowCheck {
        mean,
        range,
        slope,
        criterion,
        steady,
    }
}

/// fio's check of one window (values oldest first), as fio's steadystate.c computes it.
pub fn fio_check(window: &[f64], c: &FioCriterion) -> WindowCheck {
    let (mean, slope) = mean_and_slope(window);
    let range = range_of(window);
    let raw = match c.check {
        Check::Deviation => window.iter().map(|y| (y - mean).abs()).fold(0.0, f64::max),
        Check::Slope => slope.abs(),
    };
    let (criterion, limit) = match c.limit {
        Limit::Percent(p) if mean > 0.0 => (100.0 * raw / mean, p),
        Limit::Percent(p) => (f64::INFINITY, p),
        Limit::Absolute(v) => (raw, v),
    };
    WindowCheck {
        mean,
        range,
        slope,
        criterion,
        steady: criterion < limit,
    }
}

/// Which rule a [`SteadyDetector`] applies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SteadyRule {
    Snia(SniaRule),
    Fio(FioCriterion),
}

/// What the detector says after a value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    /// Still in the ramp, or the window is not full yet.
    Collecting,
    /// The last window is not steady.
    NotSteady(WindowCheck),
    /// Steady: the window `first_round..=last_round` (round numbers from 0, counting every
    /// value fed, ramp included) met the rule. Once steady, the verdict stays.
    Steady {
        first_round: usize,
        last_round: usize,
        check: WindowCheck,
    },
}

/// Feed one value per round; it tells when the series became steady. The command polls
/// it from its progress loop and may stop the measurement (fio does) or keep going.
#[derive(Debug, Clone)]
pub struct SteadyDetector {
    rule: SteadyRule,
    window: usize,
    ramp: usize,
    values: Vec<f64>,
    steady: Option<Verdict>,
    last: Option<WindowCheck>,
}

impl SteadyDetector {
    /// The SNIA PTS rule (window of `rule.window` rounds, no ramp: the PTS counts every round).
    pub fn snia(rule: SniaRule) -> SteadyDetector {
        SteadyDetector::new(SteadyRule::Snia(rule), rule.window, 0)
    }

    /// A fio criterion over a rolling window of `window_rounds` values, ignoring the first
    /// `ramp_rounds` (see [`rounds_for`] to turn `ss_dur`/`ss_ramp` into rounds).
    pub fn fio(
        criterion: FioCriterion,
        window_rounds: usize,
        ramp_rounds: usize,
    ) -> SteadyDetector {
        SteadyDetector::new(SteadyRule::Fio(criterion), window_rounds, ramp_rounds)
    }

    fn new(rule: SteadyRule, window: usize, ramp: usize) -> SteadyDetector {
        SteadyDetector {
            rule,
            // A slope needs two points; a one-value "window" would always look flat.
            window: window.max(2),
            ramp,
            values: Vec::new(),
            steady: None,
            last: None,
        }
    }

    pub fn rule(&self) -> SteadyRule {
        self.rule
    }

    pub fn window(&self) -> usize {
        self.window
    }

    /// Add the value of the next round and judge the window ending with it.
    pub fn push(&mut self, value: f64) -> Verdict {
        self.values.push(value);
        if let Some(v) = self.steady {
            return v;
        }
        let n = self.values.len();
        if n < self.ramp + self.window {
            return Verdict::Collecting;
        }
        let w = &self.values[n - self.window..];
        let check = match &self.rule {
            SteadyRule::Snia(r) => snia_check(w, r),
            SteadyRule::Fio(c) => fio_check(w, c),
        };
        self.last = Some(check);
        if check.steady {
            let v = Verdict::Steady {
                first_round: n - self.window,
                last_round: n - 1,
                check,
            };
            self.steady = Some(v);
            v
        } else {
            Verdict::NotSteady(check)
        }
    }

    /// The verdict so far (steady, or the last window's check, or still collecting).
    pub fn verdict(&self) -> Verdict {
        match (self.steady, self.last) {
            (Some(v), _) => v,
            (None, Some(c)) => Verdict::NotSteady(c),
            (None, None) => Verdict::Collecting,
        }
    }

    /// The round at which steady state was declared (the window's last round).
    pub fn steady_at(&self) -> Option<usize> {
        match self.steady {
            Some(Verdict::Steady { last_round, .. }) => Some(last_round),
            _ => None,
        }
    }

    /// Rounds fed so far.
    pub fn rounds(&self) -> usize {
        self.values.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rises in steps of 100 every two rounds, then flat at 600 (±1 %) from round 10 on.
    fn steps_then_flat() -> Vec<f64> {
        let mut v = vec![
            100.0, 100.0, 200.0, 200.0, 300.0, 300.0, 400.0, 400.0, 500.0, 500.0,
        ];
        v.extend([600.0, 606.0, 594.0, 603.0, 597.0, 600.0, 604.0, 596.0]);
        v
    }

    #[test]
    fn snia_declares_the_first_flat_window() {
        let mut d = SteadyDetector::snia(SniaRule::default());
        let mut first_steady = None;
        for (i, y) in steps_then_flat().into_iter().enumerate() {
            if let Verdict::Steady {
                first_round,
                last_round,
                ..
            } = d.push(y)
            {
                first_steady.get_or_insert((i, first_round, last_round));
            }
        }
        // Rounds 10..=14 are the first window of five flat rounds; the window 9..=13
        // (500, then 600s) passes the range rule (17 % ≤ 20 %) but its fit climbs 14 %.
        assert_eq!(first_steady, Some((14, 10, 14)));
        assert_eq!(d.steady_at(), Some(14));
        let s = steps_then_flat();
        let c = snia_check(&s[9..=13], &SniaRule::default());
        assert!(c.range <= 0.2 * c.mean && !c.steady, "{c:?}");
    }

    #[test]
    fn snia_numbers_by_hand() {
        // 100, 105, 110, 115, 120: mean 110, range 20 (18 % ≤ 20 %), slope 5/round,
        // fit excursion 20 (18 % > 10 %): not steady.
        let c = snia_check(&[100.0, 105.0, 110.0, 115.0, 120.0], &SniaRule::default());
        assert_eq!(c.mean, 110.0);
        assert_eq!(c.range, 20.0);
        assert!((c.slope - 5.0).abs() < 1e-12);
        assert!(!c.steady);
        // 100, 102, 101, 103, 102: range 3, slope 0.5 → excursion 2 (2 %): steady.
        let c = snia_check(&[100.0, 102.0, 101.0, 103.0, 102.0], &SniaRule::default());
        assert!(c.steady, "{c:?}");
        assert!(c.criterion <= 1.0);
        // Exactly on the limits passes ("no more than", "within").
        let c = snia_check(&[90.0, 110.0, 100.0, 110.0, 90.0], &SniaRule::default());
        assert_eq!(c.range, 20.0);
        assert!(c.steady, "{c:?}");
    }

    #[test]
    fn drifting_series_is_never_steady() {
        // 3 % more every round: each window's fit climbs 12 % of its mean.
        let series: Vec<f64> = (0..60).map(|i| 100.0 * 1.03f64.powi(i)).collect();
        let mut snia = SteadyDetector::snia(SniaRule::default());
        let mut fio = SteadyDetector::fio("bw_slope:2%".parse().unwrap(), 5, 0);
        for y in series {
            assert!(!matches!(snia.push(y), Verdict::Steady { .. }));
            assert!(!matches!(fio.push(y), Verdict::Steady { .. }));
        }
        assert_eq!(snia.steady_at(), None);
        assert!(matches!(snia.verdict(), Verdict::NotSteady(_)));
    }

    #[test]
    fn fio_deviation_and_slope_like_steadystate_c() {
        let c: FioCriterion = "iops:10%".parse().unwrap();
        // mean 100, max deviation 8 → 8 % < 10 %.
        let w = fio_check(&[92.0, 100.0, 108.0, 100.0], &c);
        assert!((w.criterion - 8.0).abs() < 1e-9);
        assert!(w.steady);
        // Strictly below: 10 % is not steady.
        assert!(!fio_check(&[90.0, 100.0, 110.0, 100.0], &c).steady);
        let c: FioCriterion = "iops:5".parse().unwrap();
        assert!(fio_check(&[97.0, 100.0, 103.0], &c).steady);
        assert!(!fio_check(&[94.0, 100.0, 106.0], &c).steady);
        let c: FioCriterion = "bw_slope:1MB/s".parse().unwrap();
        let w = fio_check(&[10e6, 10.5e6, 11e6], &c);
        assert!((w.slope - 0.5e6).abs() < 1e-3);
        assert!(w.steady);
        assert!(!fio_check(&[10e6, 12e6, 14e6], &c).steady);
    }

    #[test]
    fn fio_ramp_and_window() {
        // ss_dur 3 s, ss_ramp 2 s at 1-s rounds: nothing is judged before round 4.
        let c: FioCriterion = "bw:5%".parse().unwrap();
        let s = Duration::from_secs(1);
        let mut d = SteadyDetector::fio(
            c,
            rounds_for(Duration::from_secs(3), s, 2),
            rounds_for(Duration::from_secs(2), s, 0),
        );
        assert_eq!(d.window(), 3);
        let verdicts: Vec<Verdict> = [100.0, 100.0, 100.0, 100.0, 100.0]
            .into_iter()
            .map(|y| d.push(y))
            .collect();
        assert!(verdicts[..4].iter().all(|v| *v == Verdict::Collecting));
        assert!(matches!(
            verdicts[4],
            Verdict::Steady {
                first_round: 2,
                last_round: 4,
                ..
            }
        ));
        assert_eq!(d.rounds(), 5);
        assert_eq!(rounds_for(Duration::from_millis(2500), s, 0), 3);
        assert_eq!(
            rounds_for(Duration::from_secs(30), Duration::from_millis(500), 0),
            60
        );
        assert_eq!(rounds_for(Duration::ZERO, s, 2), 2);
    }

    #[test]
    fn parse_forms() {
        let p = |s: &str| s.parse::<FioCriterion>().unwrap();
        assert_eq!(
            p("iops:10%"),
            FioCriterion {
                metric: Metric::Iops,
                check: Check::Deviation,
                limit: Limit::Percent(10.0)
            }
        );
        assert_eq!(p("IOPS_SLOPE:0.1%").check, Check::Slope);
        assert_eq!(p("iops:10").limit, Limit::Absolute(10.0));
        assert_eq!(p("bw:5MB/s").limit, Limit::Absolute(5e6));
        assert_eq!(p("bw:5MiB").limit, Limit::Absolute(5.0 * 1048576.0));
        assert_eq!(p(" bw_slope : 2% ").limit, Limit::Percent(2.0));
        assert_eq!(p("bw_slope:1k/s").limit, Limit::Absolute(1024.0));
        for s in [
            "iops:10%",
            "iops_slope:0.5%",
            "bw:2%",
            "bw:1000B/s",
            "iops:7",
        ] {
            assert_eq!(p(&p(s).to_string()), p(s), "{s}");
        }
    }

    #[test]
    fn parse_errors_are_one_clear_line() {
        let cases = [
            ("iops", "write NAME:LIMIT"),
            ("iops:", "write NAME:LIMIT"),
            ("lat:10%", "unknown steady-state criterion 'lat'"),
            ("iops:x%", "'x%' is not a percentage"),
            ("iops:fast", "'fast' is not an IOPS limit"),
            ("bw:fast", "'fast' is not a bandwidth limit"),
            ("bw:-5MB/s", "not a bandwidth limit"),
            ("bw_slope:0%", "must be greater than zero"),
            ("iops:0", "must be greater than zero"),
            ("iops:inf", "not an IOPS limit"),
        ];
        for (input, want) in cases {
            let e = fio_criterion_arg(input).unwrap_err();
            assert!(e.contains(want), "{input}: {e}");
            assert!(!e.contains('\n'), "{input}: {e}");
        }
    }

    #[test]
    fn mean_and_slope_edges() {
        assert_eq!(mean_and_slope(&[]), (0.0, 0.0));
        assert_eq!(mean_and_slope(&[4.0]), (4.0, 0.0));
        let (m, s) = mean_and_slope(&[1.0, 3.0, 5.0]);
        assert_eq!((m, s), (3.0, 2.0));
        // A detector never judges a window of one value.
        let mut d = SteadyDetector::fio("iops:1%".parse().unwrap(), 1, 0);
        assert_eq!(d.push(5.0), Verdict::Collecting);
        assert!(matches!(d.push(5.0), Verdict::Steady { .. }));
        assert!(matches!(d.rule(), SteadyRule::Fio(_)));
        // A zero mean never counts as steady under a relative rule.
        assert!(!snia_check(&[0.0; 5], &SniaRule::default()).steady);
        assert!(!fio_check(&[0.0; 5], &"bw:5%".parse().unwrap()).steady);
    }
}

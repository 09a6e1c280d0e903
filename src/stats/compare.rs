//! Comparing two measured means: Welch's t-test (unequal variances, Welch–Satterthwaite
//! degrees of freedom), a one-run t-test for when one side has a single run (could that run
//! be one more run of the other side? its 95 % prediction interval), and the ratio of the
//! means with its propagated uncertainty (hyperfine's "relative speed").
//!
//! Works on summaries (n, mean, sample stddev, 95 % CI), so result files need not carry the
//! raw runs. Pure functions, no I/O.

use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::model::Summary;
use crate::stats::summary::t_critical_95;

/// Welch's t-test of `b` against `a`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Welch {
    /// (mean_b - mean_a) / standard error of the difference.
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// 95 % confidence interval of mean_b - mean_a.
    pub ci95_diff: (f64, f64),
}

/// Standard error of the mean.
fn sem(s: &Summary) -> f64 {
    if s.n == 0 {
        return f64::NAN;
    }
    s.stddev / (s.n as f64).sqrt()
}

/// Welch's t-test; `None` when a side has fewer than two runs (no variance estimate).
pub fn welch(a: &Summary, b: &Summary) -> Option<Welch> {
    if a.n < 2 || b.n < 2 {
        return None;
    }
    let (va, vb) = (sem(a).powi(2), sem(b).powi(2));
    let se = (va + vb).sqrt();
    let df = if se == 0.0 {
        (a.n + b.n - 2) as f64
    } else {
        (va + vb).powi(2) / (va * va / (a.n as f64 - 1.0) + vb * vb / (b.n as f64 - 1.0))
    };
    Some(t_test(b.mean - a.mean, se, df))
}

/// Student's t of `diff` with standard error `se` at `df` degrees of freedom: its
/// two-sided p-value and 95 % interval. A zero (or undefined) standard error, identical
/// runs, makes the difference exact: p is 1 for no difference, else 0.
fn t_test(diff: f64, se: f64, df: f64) -> Welch {
    if se == 0.0 || !se.is_finite() {
        let (t, p) = if diff == 0.0 {
            (0.0, 1.0)
        } else {
            (diff.signum() * f64::INFINITY, 0.0)
        };
        return Welch {
            t,
            df,
            p,
            ci95_diff: (diff, diff),
        };
    }
    let t = diff / se;
    let p = StudentsT::new(0.0, 1.0, df)
        .map(|d| 2.0 * (1.0 - d.cdf(t.abs())))
        .unwrap_or(f64::NAN);
    let half = t_critical_95(df) * se;
    Welch {
        t,
        df,
        p,
        ci95_diff: (diff - half, diff + half),
    }
}

/// One run against a sample of two or more: could `single` be one more run of `sample`?
/// Student's t of a new observation, t = (x - mean) / (s * sqrt(1 + 1/n)) with n - 1 degrees
/// of freedom (the run lies outside the sample's 95 % prediction interval exactly when
/// p < 0.05). Asking whether the run lies inside the sample's confidence interval *of the
/// mean* instead ignores the run's own spread: with 10 runs against 1 drawn from the same
/// device, that says "different" about half the time. The result is oriented as `b - a`
/// whichever side has the single run. `None` unless exactly one side has one run and the
/// other two or more.
pub fn one_run(a: &Summary, b: &Summary) -> Option<Welch> {
    let sample = match (a.n, b.n) {
        (1, n) if n >= 2 => b,
        (n, 1) if n >= 2 => a,
        _ => return None,
    };
    let se = sample.stddev * (1.0 + 1.0 / sample.n as f64).sqrt();
    Some(t_test(b.mean - a.mean, se, sample.n as f64 - 1.0))
}

/// How the significance of a difference was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Welch's t-test at 95 % (both sides have at least two runs).
    Welch,
    /// One side has a single run: Student's t of that run against the other side's runs
    /// (outside their 95 % prediction interval or not); see [`one_run`].
    OneRun,
    /// A single run on each side: nothing to test.
    None,
}

impl Method {
    pub fn describe(self) -> &'static str {
        match self {
            Method::Welch => "Welch t-test",
            Method::OneRun => "one-run t-test",
            Method::None => "1 run each",
        }
    }
}

/// Is the difference between `a` and `b` significant at 95 %, and by which method?
pub fn significant(a: &Summary, b: &Summary) -> (bool, Method, Option<Welch>) {
    if let Some(w) = welch(a, b) {
        return (w.p < 0.05, Method::Welch, Some(w));
    }
    if let Some(t) = one_run(a, b) {
        return (t.p < 0.05, Method::OneRun, Some(t));
    }
    (false, Method::None, None)
}

/// A ratio of two means with its 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Ratio {
    pub value: f64,
    /// Half-width of the 95 % interval: the larger of its two sides (it is symmetric for a
    /// change over the baseline, not once inverted). NaN when nothing could be tested (one
    /// run each); infinite when the interval is unbounded.
    pub pm: f64,
    /// The interval's bounds (NaN without a test; `high` infinite when unbounded).
    pub low: f64,
    pub high: f64,
}

impl Ratio {
    /// The interval reaches zero or below (or is unbounded): the ratio could be anything,
    /// so no interval is worth showing.
    pub fn too_wide(&self) -> bool {
        self.value > 0.0 && (self.low <= 0.0 || self.high == f64::INFINITY)
    }

    /// The interval lies clear of 1 (NaN bounds: no).
    pub fn excludes_one(&self) -> bool {
        self.low > 1.0 || self.high < 1.0
    }
}

/// `num / den` with the 95 % interval of the significance test that decided the verdict:
/// its interval of the difference of the means (`half` = half its width, Welch's or the
/// one-run test's) over `den`. That interval excludes 1 exactly when the test finds a
/// difference, so the change and the verdict never disagree. (An interval propagated from
/// both means' relative errors, as before, is narrower than the test's when `num` is the
/// smaller: "-67.1 ± 31.0 %" stood beside "no significant difference, p = 0.073".)
pub fn relative(num: f64, den: f64, half: f64) -> Ratio {
    let value = num / den;
    let pm = half / den.abs();
    Ratio {
        value,
        pm,
        low: value - pm,
        high: value + pm,
    }
}

/// The test's half-width of the difference of the means (NaN without a test).
pub fn half_width(test: Option<Welch>) -> f64 {
    test.map_or(f64::NAN, |w| (w.ci95_diff.1 - w.ci95_diff.0) / 2.0)
}

/// `1 / r` with the interval's bounds inverted exactly (so it excludes 1 exactly when `r`'s
/// does); an interval of `r` that reaches zero makes this one unbounded.
pub fn invert(r: Ratio) -> Ratio {
    let value = 1.0 / r.value;
    if r.low.is_nan() || r.high.is_nan() {
        return Ratio {
            value,
            pm: f64::NAN,
            low: f64::NAN,
            high: f64::NAN,
        };
    }
    if r.low <= 0.0 {
        return Ratio {
            value,
            pm: f64::INFINITY,
            low: if r.high > 0.0 { 1.0 / r.high } else { 0.0 },
            high: f64::INFINITY,
        };
    }
    let (low, high) = (1.0 / r.high, 1.0 / r.low);
    Ratio {
        value,
        pm: (high - value).max(value - low),
        low,
        high,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::summarize;

    // Student's sleep data (R: `t.test(extra ~ group, data = sleep)`):
    // t = -1.8608, df = 17.776, p-value = 0.07939, 95 % CI -3.3654832 .. 0.2054832.
    const SLEEP1: [f64; 10] = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0];
    const SLEEP2: [f64; 10] = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4];

    #[test]
    fn welch_matches_r_on_sleep_data() {
        let w = welch(&summarize(&SLEEP2), &summarize(&SLEEP1)).unwrap();
        assert!((w.t + 1.8608).abs() < 1e-4, "t = {}", w.t);
        assert!((w.df - 17.776).abs() < 1e-3, "df = {}", w.df);
        assert!((w.p - 0.07939).abs() < 1e-5, "p = {}", w.p);
        assert!((w.ci95_diff.0 + 3.3654832).abs() < 1e-5);
        assert!((w.ci95_diff.1 - 0.2054832).abs() < 1e-5);
    }

    #[test]
    fn identical_runs_are_exact() {
        let a = summarize(&[5.0, 5.0, 5.0]);
        let b = summarize(&[6.0, 6.0]);
        let w = welch(&a, &b).unwrap();
        assert_eq!(w.p, 0.0);
        assert!(welch(&a, &a).unwrap().p == 1.0);
    }

    #[test]
    fn one_run_is_tested_against_the_prediction_interval() {
        let many = summarize(&[100.0, 102.0, 98.0, 101.0]);
        let inside = summarize(&[100.5]);
        let outside = summarize(&[150.0]);
        assert!(!significant(&many, &inside).0);
        assert_eq!(significant(&many, &inside).1, Method::OneRun);
        assert!(significant(&many, &outside).0);
        assert_eq!(significant(&inside, &outside).1, Method::None);
        // The edge of the 95 % prediction interval is p = 0.05, whichever side has the run.
        let edge = t_critical_95(3.0) * many.stddev * (1.0 + 1.0 / 4.0f64).sqrt();
        for (f, sig) in [(1.001, true), (0.999, false)] {
            let run = summarize(&[many.mean - edge * f]);
            let (yes, m, t) = significant(&many, &run);
            assert_eq!((yes, m), (sig, Method::OneRun), "factor {f}");
            let t = t.unwrap();
            assert!((t.p - 0.05).abs() < 1e-3, "p = {}", t.p);
            assert!(t.t < 0.0 && t.df == 3.0);
            let (yes, _, back) = significant(&run, &many);
            assert_eq!(yes, sig);
            assert!(back.unwrap().t > 0.0, "oriented as b - a");
        }
    }

    #[test]
    fn one_run_inside_the_spread_is_not_a_difference() {
        // Ten runs of a noisy device (mean 100, sd about 5) and one more run at 104: outside
        // the 95 % interval of the ten runs' *mean* (± 3.6) but well inside the spread of single
        // runs (± 11.9). The run is not evidence of a change.
        let ten = summarize(&[
            95.0, 105.0, 100.0, 93.0, 107.0, 98.0, 102.0, 96.0, 104.0, 100.0,
        ]);
        let run = summarize(&[104.0]);
        assert!(run.mean > ten.ci95_high, "the old test would say faster");
        let (yes, m, t) = significant(&ten, &run);
        assert_eq!(m, Method::OneRun);
        assert!(!yes, "p = {}", t.unwrap().p);
        // Identical runs on the sample's side: any other value differs, the same one does not.
        let same = summarize(&[7.0, 7.0, 7.0]);
        assert!(significant(&same, &summarize(&[7.5])).0);
        assert!(!significant(&same, &summarize(&[7.0])).0);
    }

    /// The change's interval is the test's: it excludes 1 exactly when the test finds a
    /// difference, for Welch's test and the one-run test, in either direction and inverted.
    #[test]
    fn the_change_interval_agrees_with_the_verdict() {
        // A helper's pair of results: the propagated interval read -67.1 ± 31.0 % (clear of
        // zero) beside "no significant difference (Welch, p = 0.073)".
        let a = summarize(&[300.0, 150.0, 420.0]);
        let b = summarize(&[96.0, 100.0, 104.0]);
        let (sig, m, w) = significant(&a, &b);
        assert_eq!((sig, m), (false, Method::Welch));
        let c = relative(b.mean, a.mean, half_width(w));
        assert!(c.value + c.pm > 1.0, "{c:?} reaches no change");
        // Many pairs, both tests: the interval holds 1 exactly when the test finds nothing.
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut sample = |n: usize, mean: f64, sd: f64| {
            let v: Vec<f64> = (0..n).map(|_| mean + sd * (next() - 0.5) * 3.4).collect();
            summarize(&v)
        };
        let mut seen = [0usize; 2];
        for i in 0..4000 {
            let na = [1, 2, 3, 5, 10][i % 5];
            let nb = [2, 3, 1, 10, 4][(i / 5) % 5];
            let a = sample(na, 100.0, 10.0);
            let b = sample(nb, 100.0 * (0.5 + (i % 7) as f64 * 0.12), 15.0);
            let (sig, _, w) = significant(&a, &b);
            let c = relative(b.mean, a.mean, half_width(w));
            if w.is_none() {
                assert!(c.pm.is_nan() && !c.excludes_one() && !invert(c).excludes_one());
                continue;
            }
            let inv = invert(c);
            assert!(inv.low <= inv.value && inv.value <= inv.high, "{inv:?}");
            for r in [c, inv] {
                assert_eq!(
                    r.excludes_one(),
                    sig,
                    "pair {i}: {r:?} p = {:?}",
                    w.map(|w| w.p)
                );
            }
            seen[usize::from(sig)] += 1;
        }
        assert!(
            seen[0] > 300 && seen[1] > 300,
            "both kinds tested: {seen:?}"
        );
        assert!(relative(2.0, 1.0, half_width(None)).pm.is_nan());
        // An interval reaching zero: its inverse is unbounded, too wide either way.
        let r = relative(0.5, 1.0, 0.6);
        assert!(r.too_wide() && invert(r).too_wide() && invert(r).high.is_infinite());
        let r = invert(relative(0.5, 1.0, 0.1));
        assert!((r.low - 1.0 / 0.6).abs() < 1e-12 && (r.high - 2.5).abs() < 1e-12);
        assert!((r.pm - 0.5).abs() < 1e-12 && !r.too_wide());
    }
}

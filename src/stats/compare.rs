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
    let diff = b.mean - a.mean;
    let se = (va + vb).sqrt();
    if se == 0.0 {
        // Identical runs on both sides: the difference is exact.
        let p = if diff == 0.0 { 1.0 } else { 0.0 };
        let t = if diff == 0.0 {
            0.0
        } else {
            diff.signum() * f64::INFINITY
        };
        let df = (a.n + b.n - 2) as f64;
        return Some(Welch {
            t,
            df,
            p,
            ci95_diff: (diff, diff),
        });
    }
    let df = (va + vb).powi(2) / (va * va / (a.n as f64 - 1.0) + vb * vb / (b.n as f64 - 1.0));
    let t = diff / se;
    let p = StudentsT::new(0.0, 1.0, df)
        .map(|d| 2.0 * (1.0 - d.cdf(t.abs())))
        .unwrap_or(f64::NAN);
    let half = t_critical_95(df) * se;
    Some(Welch {
        t,
        df,
        p,
        ci95_diff: (diff - half, diff + half),
    })
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
    let diff = b.mean - a.mean;
    let df = sample.n as f64 - 1.0;
    let se = sample.stddev * (1.0 + 1.0 / sample.n as f64).sqrt();
    if se == 0.0 || !se.is_finite() {
        // Identical runs on the sample's side: nothing else to go by.
        let p = if diff == 0.0 { 1.0 } else { 0.0 };
        let t = if diff == 0.0 {
            0.0
        } else {
            diff.signum() * f64::INFINITY
        };
        return Some(Welch {
            t,
            df,
            p,
            ci95_diff: (diff, diff),
        });
    }
    let t = diff / se;
    let p = StudentsT::new(0.0, 1.0, df)
        .map(|d| 2.0 * (1.0 - d.cdf(t.abs())))
        .unwrap_or(f64::NAN);
    let half = t_critical_95(df) * se;
    Some(Welch {
        t,
        df,
        p,
        ci95_diff: (diff - half, diff + half),
    })
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

/// A ratio of two means with its 95 % half-width.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Ratio {
    pub value: f64,
    /// Half-width of the 95 % interval (NaN when neither side has a spread estimate).
    pub pm: f64,
}

/// `num.mean / den.mean` with its uncertainty propagated to first order from the standard
/// errors of both means (relative errors add in quadrature), scaled to 95 % with Student's
/// t at Satterthwaite's degrees of freedom of that sum. A side with one run is one draw from
/// the other side's spread (as [`one_run`] tests it): its standard error is the other side's
/// standard deviation, at that side's n - 1 degrees of freedom; with one run on both sides the
/// half-width is NaN.
pub fn ratio(num: &Summary, den: &Summary) -> Ratio {
    let value = num.mean / den.mean;
    let single = match (num.n, den.n) {
        (1, n) if n >= 2 => Some((num, den)),
        (n, 1) if n >= 2 => Some((den, num)),
        _ => None,
    };
    if let Some((run, sample)) = single
        && run.mean != 0.0
        && sample.mean != 0.0
    {
        let rel_run = sample.stddev / run.mean.abs();
        let rel_mean = sem(sample) / sample.mean.abs();
        let se_rel = (rel_run.powi(2) + rel_mean.powi(2)).sqrt();
        return Ratio {
            value,
            pm: t_critical_95(sample.n as f64 - 1.0) * value.abs() * se_rel,
        };
    }
    let rel = |s: &Summary| {
        if s.n >= 2 && s.mean != 0.0 {
            Some(sem(s) / s.mean.abs())
        } else {
            None
        }
    };
    let (rn, rd) = (rel(num), rel(den));
    if rn.is_none() && rd.is_none() {
        return Ratio {
            value,
            pm: f64::NAN,
        };
    }
    let (vn, vd) = (rn.unwrap_or(0.0).powi(2), rd.unwrap_or(0.0).powi(2));
    let se_rel = (vn + vd).sqrt();
    // Satterthwaite's degrees of freedom of the summed relative variances (a side with
    // one run adds no variance and no term).
    let term = |v: f64, n: u32| {
        if n >= 2 {
            v * v / (n as f64 - 1.0)
        } else {
            0.0
        }
    };
    let denom = term(vn, num.n) + term(vd, den.n);
    let df = if denom > 0.0 {
        ((vn + vd).powi(2) / denom).max(1.0)
    } else {
        (num.n.max(den.n) as f64 - 1.0).max(1.0)
    };
    Ratio {
        value,
        pm: t_critical_95(df) * value.abs() * se_rel,
    }
}

/// `1 / r` with its half-width (first order: σ(1/r) = σ(r) / r²).
pub fn invert(r: Ratio) -> Ratio {
    Ratio {
        value: 1.0 / r.value,
        pm: r.pm / (r.value * r.value),
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

    #[test]
    fn ratio_propagates_relative_errors() {
        let a = summarize(&[100.0, 110.0, 90.0]);
        let b = summarize(&[200.0, 220.0, 180.0]);
        let r = ratio(&b, &a);
        assert!((r.value - 2.0).abs() < 1e-12);
        // Both relative SEs are 10/sqrt(3)/100 = 0.05774; combined 0.08165; df = 4.
        let expect = 2.0 * 0.081_649_658 * t_critical_95(4.0);
        assert!((r.pm - expect).abs() < 1e-6, "{} vs {expect}", r.pm);
        let inv = invert(r);
        assert!((inv.value - 0.5).abs() < 1e-12);
        assert!((inv.pm - r.pm / 4.0).abs() < 1e-12);
        assert!(ratio(&summarize(&[1.0]), &summarize(&[2.0])).pm.is_nan());
    }

    #[test]
    fn ratio_with_one_run_carries_that_runs_spread() {
        // Three runs (sd 10) and one run: the run's standard error is that sd, the mean's
        // sd / sqrt(3); relative errors add in quadrature, at 2 df.
        let a = summarize(&[100.0, 110.0, 90.0]);
        let b = summarize(&[150.0]);
        let rel = ((10.0f64 / 150.0).powi(2) + (10.0f64 / 100.0).powi(2) / 3.0).sqrt();
        let expect = 1.5 * rel * t_critical_95(2.0);
        let r = ratio(&b, &a);
        assert!((r.value - 1.5).abs() < 1e-12);
        assert!((r.pm - expect).abs() < 1e-9, "{} vs {expect}", r.pm);
        let back = ratio(&a, &b);
        assert!((back.pm - back.value * rel * t_critical_95(2.0)).abs() < 1e-9);
        // Clearly apart and clearly alike: the interval and the verdict agree.
        for (x, sig) in [(200.0, true), (110.0, false)] {
            let b = summarize(&[x]);
            let r = ratio(&b, &a);
            assert_eq!(significant(&a, &b).0, sig, "{x}");
            assert_eq!(r.value - r.pm > 1.0, sig, "{x}: {} ± {}", r.value, r.pm);
        }
    }
}

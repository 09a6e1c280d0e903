//! Comparing two measured means: Welch's t-test (unequal variances, Welch–Satterthwaite
//! degrees of freedom), confidence-interval overlap for when one side has a single run, and
//! the ratio of the means with its propagated uncertainty (hyperfine's "relative speed").
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

/// Do the two 95 % confidence intervals overlap? A single run is an interval of width 0,
/// so one run against several asks whether the run falls inside the other's interval.
pub fn ci_overlap(a: &Summary, b: &Summary) -> bool {
    a.ci95_low <= b.ci95_high && b.ci95_low <= a.ci95_high
}

/// How the significance of a difference was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Welch's t-test at 95 % (both sides have at least two runs).
    Welch,
    /// 95 % confidence intervals overlap or not (one side has a single run).
    CiOverlap,
    /// A single run on each side: nothing to test.
    None,
}

impl Method {
    pub fn describe(self) -> &'static str {
        match self {
            Method::Welch => "Welch t-test",
            Method::CiOverlap => "CI overlap",
            Method::None => "1 run each",
        }
    }
}

/// Is the difference between `a` and `b` significant at 95 %, and by which method?
pub fn significant(a: &Summary, b: &Summary) -> (bool, Method, Option<Welch>) {
    if let Some(w) = welch(a, b) {
        return (w.p < 0.05, Method::Welch, Some(w));
    }
    if a.n >= 2 || b.n >= 2 {
        return (!ci_overlap(a, b), Method::CiOverlap, None);
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
/// t at Satterthwaite's degrees of freedom of that sum. A side with one run contributes no error
/// (it has no estimate); with one run on both sides the half-width is NaN.
pub fn ratio(num: &Summary, den: &Summary) -> Ratio {
    let value = num.mean / den.mean;
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
    fn overlap_fallback_with_one_run() {
        let many = summarize(&[100.0, 102.0, 98.0, 101.0]);
        let inside = summarize(&[100.5]);
        let outside = summarize(&[150.0]);
        assert!(!significant(&many, &inside).0);
        assert_eq!(significant(&many, &inside).1, Method::CiOverlap);
        assert!(significant(&many, &outside).0);
        assert_eq!(significant(&inside, &outside).1, Method::None);
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
}

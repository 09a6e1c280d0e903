//! Summaries of a metric over repeated runs.

use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::model::Summary;

/// Two-sided 95 % critical value of Student's t with `df` degrees of freedom.
pub fn t_critical_95(df: f64) -> f64 {
    if df < 1.0 {
        return f64::NAN;
    }
    StudentsT::new(0.0, 1.0, df)
        .map(|t| t.inverse_cdf(0.975))
        .unwrap_or(f64::NAN)
}

pub fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.iter().sum::<f64>() / v.len() as f64
}

/// Median of a sample (average of the two middle values for even n).
pub fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// Sample standard deviation (n - 1); 0 for fewer than two values.
pub fn stddev(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let m = mean(v);
    let ss: f64 = v.iter().map(|x| (x - m) * (x - m)).sum();
    (ss / (v.len() - 1) as f64).sqrt()
}

/// Indices of outliers by the modified Z-score (Iglewicz and Hoaglin):
/// M = 0.6745 (x - median) / MAD, outlier when |M| > 3.5. Needs at least 5 values: with 3
/// or 4 the MAD rests on one or two deviations and flags ordinary noise (three runs of
/// 258, 260 and 225 MB/s would call the third an outlier).
pub fn modified_z_outliers(v: &[f64]) -> Vec<u32> {
    if v.len() < 5 {
        return Vec::new();
    }
    let med = median(v);
    let deviations: Vec<f64> = v.iter().map(|x| (x - med).abs()).collect();
    let mad = median(&deviations);
    if mad == 0.0 {
        return Vec::new();
    }
    v.iter()
        .enumerate()
        .filter(|(_, x)| (0.6745 * (*x - med) / mad).abs() > 3.5)
        .map(|(i, _)| i as u32)
        .collect()
}

/// Mean, median, sample stddev, min, max, CV and the 95 % CI of the mean (Student's t).
/// With one value the interval collapses to the value (there is no spread to speak of;
/// callers warn about it).
pub fn summarize(v: &[f64]) -> Summary {
    let n = v.len();
    if n == 0 {
        return Summary::default();
    }
    let m = mean(v);
    let sd = stddev(v);
    let (lo, hi) = if n >= 2 {
        let half = t_critical_95((n - 1) as f64) * sd / (n as f64).sqrt();
        (m - half, m + half)
    } else {
        (m, m)
    };
    Summary {
        n: n as u32,
        mean: m,
        median: median(v),
        stddev: sd,
        min: v.iter().cloned().fold(f64::INFINITY, f64::min),
        max: v.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
        cv: if m != 0.0 { sd / m.abs() } else { 0.0 },
        ci95_low: lo,
        ci95_high: hi,
        outliers: modified_z_outliers(v),
    }
}

/// Half-width of the 95 % CI as a fraction of the mean (for `--repeat auto`).
pub fn ci_half_width_rel(s: &Summary) -> f64 {
    if s.n < 2 || s.mean == 0.0 {
        return f64::INFINITY;
    }
    (s.ci95_high - s.ci95_low) / 2.0 / s.mean.abs()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn t_values_match_tables() {
        // Standard t-table, two-sided 95 %.
        assert!(close(t_critical_95(1.0), 12.706, 1e-3));
        assert!(close(t_critical_95(2.0), 4.303, 1e-3));
        assert!(close(t_critical_95(9.0), 2.262, 1e-3));
        assert!(close(t_critical_95(29.0), 2.045, 1e-3));
    }

    #[test]
    fn textbook_interval() {
        // Belov's Table 2 cell: 3.299, 3.266, 3.247 (seconds per 10,000 files).
        let s = summarize(&[3.299, 3.266, 3.247]);
        assert!(close(s.mean, 3.2706667, 1e-6));
        assert!(close(s.median, 3.266, 1e-12));
        assert!(close(s.stddev, 0.026312, 1e-5));
        // half = 4.303 * 0.026312 / sqrt(3) = 0.06537
        assert!(close(s.ci95_high - s.mean, 0.06537, 1e-4));
        assert_eq!(s.n, 3);
        assert_eq!(s.min, 3.247);
        assert_eq!(s.max, 3.299);
    }

    #[test]
    fn single_value_has_no_spread() {
        let s = summarize(&[5.0]);
        assert_eq!(s.stddev, 0.0);
        assert_eq!(s.ci95_low, 5.0);
        assert!(ci_half_width_rel(&s).is_infinite());
    }

    #[test]
    fn mad_outliers() {
        let v = [10.0, 10.1, 9.9, 10.2, 9.8, 10.0, 25.0];
        assert_eq!(modified_z_outliers(&v), vec![6]);
        assert!(modified_z_outliers(&[1.0, 1.0, 1.0, 1.0]).is_empty());
        assert!(modified_z_outliers(&[258.0, 260.0, 225.0]).is_empty());
    }

    #[test]
    fn even_median() {
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
    }
}

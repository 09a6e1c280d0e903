//! Directory scaling: time per portion against the files already there, and where the
//! create rate drops (Belov: NTFS slowed by 23.7 % past 200-300 thousand files in one
//! folder).

use crate::model::files::{DirScaling, ScalingPoint};
use crate::stats::summary::median;

/// The smallest slowdown reported as a drop.
pub const DROP_THRESHOLD: f64 = 0.10;

/// Build the curve from each run's portion times (ns, pass-major order) averaged by
/// position, and find the split that separates a fast start from a slower rest.
pub fn analyse(runs: &[&[u64]], files_per_portion: u64, flat: bool) -> Option<DirScaling> {
    let len = runs.iter().map(|r| r.len()).max()?;
    if len == 0 || files_per_portion == 0 {
        return None;
    }
    let mut curve = Vec::with_capacity(len);
    for i in 0..len {
        let v: Vec<f64> = runs
            .iter()
            .filter_map(|r| r.get(i))
            .map(|&ns| ns as f64 / 1e9)
            .collect();
        let secs = v.iter().sum::<f64>() / v.len() as f64;
        curve.push(ScalingPoint {
            files_before: i as u64 * files_per_portion,
            seconds_per_portion: secs,
            files_per_s: if secs > 0.0 {
                files_per_portion as f64 / secs
            } else {
                0.0
            },
        });
    }
    let scope = if flat {
        "one directory"
    } else {
        "the file system"
    };
    let rates: Vec<f64> = curve.iter().map(|p| p.files_per_s).collect();
    let split = find_drop(&rates);
    let total = len as u64 * files_per_portion;
    let (drop_after_files, slowdown_pct, message) = match split {
        // `find_drop` needs four portions: "no slowdown of 10 % or more up to 1 files" was
        // said of a run that could not show one.
        None if curve.len() < 4 => (
            None,
            None,
            format!(
                "{} of {}: too few to look for a slowdown in {scope} (4 portions or more)",
                crate::units::count(curve.len() as u64, "portion", "portions"),
                crate::units::count(files_per_portion, "file", "files"),
            ),
        ),
        Some((k, drop)) => {
            let after = curve[k].files_before;
            (
                Some(after),
                Some(drop * 100.0),
                format!(
                    "slower by {:.0} % after {} files in {scope}",
                    drop * 100.0,
                    crate::units::fmt_thousands(after as f64)
                ),
            )
        }
        None => (
            None,
            None,
            format!(
                "no slowdown of {:.0} % or more up to {} files in {scope}",
                DROP_THRESHOLD * 100.0,
                crate::units::fmt_thousands(total as f64)
            ),
        ),
    };
    Some(DirScaling {
        scope: scope.into(),
        curve,
        drop_after_files,
        slowdown_pct,
        message,
    })
}

/// The change point: the split `k` (first portion of the second segment) that best cuts the
/// rates into two flat segments (least total absolute deviation from each segment's
/// median), reported when the second segment's median rate is at least the threshold below
/// the first's and well outside the first segment's scatter.
pub fn find_drop(rates: &[f64]) -> Option<(usize, f64)> {
    if rates.len() < 4 {
        return None;
    }
    let cost = |seg: &[f64]| {
        let m = median(seg);
        seg.iter().map(|x| (x - m).abs()).sum::<f64>()
    };
    let k = (2..=rates.len() - 2).min_by(|&a, &b| {
        let ca = cost(&rates[..a]) + cost(&rates[a..]);
        let cb = cost(&rates[..b]) + cost(&rates[b..]);
        ca.total_cmp(&cb)
    })?;
    let before = median(&rates[..k]);
    let after = median(&rates[k..]);
    if before <= 0.0 {
        return None;
    }
    let drop = 1.0 - after / before;
    // A drop must also stand out of the fast segment's own scatter (3 x its relative MAD),
    // so a noisy machine does not produce a "knee".
    let dev: Vec<f64> = rates[..k].iter().map(|x| (x - before).abs()).collect();
    let scatter = median(&dev) / before;
    (drop >= DROP_THRESHOLD && drop >= 3.0 * scatter).then_some((k, drop))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_knee() {
        // 10 fast portions, then 10 portions 25 % slower.
        let mut rates = vec![1000.0; 10];
        rates.extend(vec![750.0; 10]);
        let (k, drop) = find_drop(&rates).unwrap();
        assert_eq!(k, 10);
        assert!((drop - 0.25).abs() < 1e-9);
    }

    #[test]
    fn flat_rate_has_no_drop() {
        let rates = [1000.0, 990.0, 1010.0, 1005.0, 995.0, 1000.0];
        assert!(find_drop(&rates).is_none());
        // One slow portion (noise) is not a drop.
        let rates = [1000.0, 1000.0, 500.0, 1000.0, 1000.0, 1000.0];
        assert!(find_drop(&rates).is_none());
        // A scattered start hides a small step.
        let rates = [1000.0, 700.0, 1100.0, 750.0, 800.0, 820.0, 790.0, 810.0];
        assert!(find_drop(&rates).is_none());
    }

    #[test]
    fn message_names_the_point() {
        let a: Vec<u64> = (0..8)
            .map(|i| if i < 5 { 1_000_000_000 } else { 1_300_000_000 })
            .collect();
        let b = a.clone();
        let s = analyse(&[&a, &b], 50_000, true).unwrap();
        assert_eq!(s.drop_after_files, Some(250_000));
        assert!(
            s.message
                .starts_with("slower by 23 % after 250,000 files in one directory")
        );
        assert_eq!(s.curve.len(), 8);
    }

    /// One portion of one file said "no slowdown of 10 % or more up to 1 files in one
    /// directory": too few portions to look for one is said as that.
    #[test]
    fn too_few_portions_are_not_called_no_slowdown() {
        let one = [1_000u64];
        let s = analyse(&[&one], 1, true).unwrap();
        assert_eq!(
            s.message,
            "1 portion of 1 file: too few to look for a slowdown in one directory (4 portions or more)"
        );
        assert!(s.drop_after_files.is_none() && s.slowdown_pct.is_none());
        let four = [1_000u64; 4];
        let s = analyse(&[&four], 2, false).unwrap();
        assert!(
            s.message
                .starts_with("no slowdown of 10 % or more up to 8 files in the file system"),
            "{}",
            s.message
        );
    }
}

//! The report's charts, drawn from result data through `svg.rs`: throughput/IOPS bars with
//! 95 % CI error bars, latency percentile curves, per-interval time series and the
//! saturation curve. Each function returns one `<svg>` element, or `None` when the data to
//! draw is missing.

use crate::model::TestResult;
use crate::model::saturate::CurvePoint;
use crate::report::metrics::{Better, direction, fmt_value, label};
use crate::report::svg::{Axis, Bar, Mark, Scale, Series, bar_chart, line_chart};
use crate::stats::hist::LatencyHistogram;
use crate::stats::summary::median;
use crate::units::{fmt_ns, fmt_thousands};

/// Tick label of a metric (MB/s for bytes per second).
pub fn tick_fmt(metric: &str) -> Box<dyn Fn(f64) -> String> {
    if metric.contains("bytes_per_s") {
        Box::new(|v| format!("{}", v / 1e6))
    } else if metric.ends_with("_ns") {
        Box::new(fmt_ns)
    } else if metric.ends_with("iops") {
        Box::new(fmt_thousands)
    } else {
        Box::new(|v| format!("{v}"))
    }
}

/// One bar per test (labelled by `names`), the mean with its 95 % CI.
pub fn metric_bars(title: &str, metric: &str, tests: &[(String, &TestResult)]) -> Option<String> {
    let bars: Vec<Bar> = tests
        .iter()
        .filter_map(|(name, t)| {
            let s = t.summary.get(metric).filter(|s| s.n > 0)?;
            Some(Bar {
                label: name.clone(),
                value: s.mean,
                ci: (s.n >= 2).then_some((s.ci95_low, s.ci95_high)),
                text: fmt_value(metric, s.mean),
            })
        })
        .collect();
    if bars.is_empty() {
        return None;
    }
    let axis = format!(
        "{} (mean of the runs; error bar = 95 % CI; {} is better)",
        label(metric),
        if direction(metric) == Better::Higher {
            "higher"
        } else {
            "lower"
        }
    );
    Some(bar_chart(title, &axis, &bars, &*tick_fmt(metric)))
}

/// The latency percentile curve of a test over all its runs: the merged HDR histogram
/// when every run carries one (exact), otherwise the curve of the median run.
pub fn latency_points(t: &TestResult) -> Vec<(f64, f64)> {
    let merged = t
        .runs
        .iter()
        .try_fold(LatencyHistogram::new(), |mut acc, r| {
            let h = LatencyHistogram::from_base64(r.lat_hist.as_deref()?)?;
            acc += &h;
            Some(acc)
        });
    let curve: Vec<(f64, u64)> = match merged {
        Some(h) if !t.runs.is_empty() && !h.is_empty() => h.percentile_curve(),
        _ => {
            let with: Vec<_> = t
                .runs
                .iter()
                .filter(|r| !r.lat_percentiles_ns.is_empty())
                .collect();
            let iops: Vec<f64> = with.iter().map(|r| r.iops.unwrap_or(0.0)).collect();
            let m = median(&iops);
            with.iter()
                .min_by(|a, b| {
                    (a.iops.unwrap_or(0.0) - m)
                        .abs()
                        .total_cmp(&(b.iops.unwrap_or(0.0) - m).abs())
                })
                .map(|r| r.lat_percentiles_ns.clone())
                .unwrap_or_default()
        }
    };
    // 100 % is the maximum: infinitely many nines, so it stays in the tables, not the plot.
    curve
        .into_iter()
        .filter(|(p, _)| *p < 100.0)
        .map(|(p, ns)| (p, ns as f64))
        .collect()
}

/// Latency percentiles of several tests on one chart (log latency over a nines axis).
pub fn latency_curves(title: &str, tests: &[(String, &TestResult)]) -> Option<String> {
    let series: Vec<Series> = tests
        .iter()
        .map(|(name, t)| Series {
            name: name.clone(),
            points: latency_points(t),
            labels: Vec::new(),
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    if series.is_empty() {
        return None;
    }
    let pct = |p: f64| format!("{p}%");
    Some(line_chart(
        title,
        &Axis {
            label: "percentile (log scale of the tail: 90, 99, 99.9 …)",
            scale: Scale::Nines,
            fmt: &pct,
        },
        &Axis {
            label: "completion latency (log)",
            scale: Scale::Log,
            fmt: &fmt_ns,
        },
        &series,
        &[],
    ))
}

/// IOPS per interval over time, one line per run.
pub fn interval_series(title: &str, t: &TestResult) -> Option<String> {
    let series: Vec<Series> = t
        .runs
        .iter()
        .filter(|r| !r.intervals.is_empty())
        .map(|r| Series {
            name: format!("run {}", r.run),
            // An interval ending after the measured time is the drain of the last I/Os,
            // divided by a full interval: a false dip, so it is left out of the plot.
            points: r
                .intervals
                .iter()
                .filter(|p| r.elapsed_ns == 0 || p.t_ms as f64 <= r.elapsed_ns as f64 / 1e6 + 1.0)
                .map(|p| (p.t_ms as f64 / 1000.0, p.iops))
                .collect(),
            labels: Vec::new(),
        })
        .collect();
    if series.is_empty() {
        return None;
    }
    let secs = |v: f64| format!("{v}");
    Some(line_chart(
        title,
        &Axis {
            label: "time since the start of measurement (s)",
            scale: Scale::Linear,
            fmt: &secs,
        },
        &Axis {
            label: "IOPS",
            scale: Scale::Linear,
            fmt: &fmt_thousands,
        },
        &series,
        &[],
    ))
}

/// The points of a sweep ordered by outstanding I/Os (bisection steps are measured after
/// the doubling ones but belong between them).
pub fn by_depth(curve: &[CurvePoint]) -> Vec<&CurvePoint> {
    let mut v: Vec<&CurvePoint> = curve.iter().collect();
    v.sort_by_key(|p| (p.iodepth * p.jobs.max(1), p.iodepth));
    v
}

/// IOPS against latency over the depths of a saturation sweep, with the latency limit, the
/// answer and the knee.
pub fn saturation(title: &str, t: &TestResult) -> Option<String> {
    let curve = by_depth(t.curve.as_ref().filter(|c| !c.is_empty())?);
    let stat = t
        .answer
        .as_ref()
        .map(|a| a.statistic.as_str())
        .unwrap_or("p99");
    let pick = |p: &CurvePoint| match stat {
        "mean" => p.lat_mean_ns,
        "p99.9" => p.lat_p999_ns,
        _ => p.lat_p99_ns,
    };
    let mut series = vec![Series {
        name: format!("{stat} latency (labels: queue depth)"),
        points: curve.iter().map(|p| (p.iops, pick(p))).collect(),
        labels: curve
            .iter()
            .map(|p| {
                if p.jobs > 1 {
                    format!("{}×{}", p.iodepth, p.jobs)
                } else {
                    p.iodepth.to_string()
                }
            })
            .collect(),
    }];
    if stat != "mean" {
        series.push(Series {
            name: "mean latency".into(),
            points: curve.iter().map(|p| (p.iops, p.lat_mean_ns)).collect(),
            labels: Vec::new(),
        });
    }
    let mut marks = Vec::new();
    if let Some(a) = &t.answer {
        marks.push(Mark::HLine {
            y: a.limit_ns,
            label: format!("limit {stat} ≤ {}", fmt_ns(a.limit_ns)),
        });
        marks.push(Mark::Point {
            x: a.iops,
            y: a.latency_ns,
            label: format!("answer: QD{} {} IOPS", a.iodepth, fmt_thousands(a.iops)),
        });
        if let Some(k) = a.knee_iodepth
            && let Some(p) = curve.iter().find(|p| p.iodepth == k)
        {
            marks.push(Mark::Point {
                x: p.iops,
                y: pick(p),
                label: format!("knee: QD{k}"),
            });
        }
    }
    Some(line_chart(
        title,
        &Axis {
            label: "IOPS (each point one queue depth)",
            scale: Scale::Linear,
            fmt: &fmt_thousands,
        },
        &Axis {
            label: "latency (log)",
            scale: Scale::Log,
            fmt: &fmt_ns,
        },
        &series,
        &marks,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{IntervalPoint, RunResult};

    #[test]
    fn drain_interval_is_left_out() {
        let point = |t_ms, iops| IntervalPoint {
            t_ms,
            iops,
            ..Default::default()
        };
        let t = TestResult {
            runs: vec![RunResult {
                run: 1,
                elapsed_ns: 200_800_000,
                intervals: vec![point(100, 950.0), point(200, 1020.0), point(300, 10.0)],
                ..Default::default()
            }],
            ..Default::default()
        };
        let svg = interval_series("t", &t).unwrap();
        let line = svg.split("points=\"").nth(1).unwrap();
        let line = &line[..line.find('"').unwrap()];
        assert_eq!(line.split(' ').count(), 2, "{line}");
    }
}

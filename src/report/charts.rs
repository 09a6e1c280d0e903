//! The report's charts, drawn from result data through `svg.rs`: throughput/IOPS bars with
//! 95 % CI error bars, latency percentile curves, per-interval time series and the
//! saturation curve. Each function returns one `<svg>` element, or `None` when the data to
//! draw is missing.

use crate::model::saturate::CurvePoint;
use crate::model::{IntervalPoint, RunResult, TestResult};
use crate::report::metrics::{Better, direction, fmt_value};
use crate::report::svg::{Axis, Bar, MEASUREMENT_TIME, Mark, Scale, Series, bar_chart, line_chart};
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
    } else if metric.ends_with("_per_s") {
        // files/s and other rates: thousands separators, decimals below 100.
        Box::new(crate::units::fmt_rate)
    } else {
        Box::new(|v| format!("{v}"))
    }
}

/// One bar per test (labelled by `names`), the mean with its 95 % CI.
pub fn metric_bars(title: &str, metric: &str, tests: &[(String, &TestResult)]) -> Option<String> {
    let bars: Vec<Bar> = tests
        .iter()
        .filter_map(|(name, t)| {
            if !crate::report::metrics::shown(t, metric) {
                return None;
            }
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
    let family = tests.first().map(|(_, t)| t.family.as_str()).unwrap_or("");
    // A saturate sweep or a sustain pass is one run: no mean, no error bar to explain.
    let what = if bars.iter().all(|b| b.ci.is_none()) {
        "one run each"
    } else {
        "mean of the runs; error bar = 95 % CI"
    };
    let axis = format!(
        "{} ({what}; {} is better)",
        crate::report::metrics::label_for(family, metric),
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
    let curve: Vec<(f64, u64)> = match merged_curve(t, |r| r.lat_hist.as_deref()) {
        Some(curve) => curve,
        None => {
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
    plot_points(curve)
}

/// 100 % is the maximum: infinitely many nines, so it stays in the tables, not the plot.
fn plot_points(curve: Vec<(f64, u64)>) -> Vec<(f64, f64)> {
    curve
        .into_iter()
        .filter(|(p, _)| *p < 100.0)
        .map(|(p, ns)| (p, ns as f64))
        .collect()
}

/// A mixed test's reads or writes alone: the percentiles of that direction's histograms of
/// all runs merged (empty when a run lacks them, e.g. a file from before the split).
pub fn direction_points(
    t: &TestResult,
    part: fn(&crate::model::RunResult) -> Option<&crate::model::DirectionStats>,
) -> Vec<(f64, f64)> {
    merged_curve(t, |r| part(r)?.lat_hist.as_deref())
        .map(plot_points)
        .unwrap_or_default()
}

/// The percentile curve of the runs' histograms (`hist` of each, base64) merged: `None`
/// when a run lacks one, or there is no run or no latency.
fn merged_curve(
    t: &TestResult,
    hist: impl Fn(&RunResult) -> Option<&str>,
) -> Option<Vec<(f64, u64)>> {
    let merged = t
        .runs
        .iter()
        .try_fold(LatencyHistogram::new(), |mut acc, r| {
            acc += &LatencyHistogram::from_base64(hist(r)?)?;
            Some(acc)
        })?;
    (!t.runs.is_empty() && !merged.is_empty()).then(|| merged.percentile_curve())
}

/// Latency percentiles of several tests on one chart (log latency over a nines axis).
pub fn latency_curves(title: &str, tests: &[(String, &TestResult)]) -> Option<String> {
    let series: Vec<Series> = tests
        .iter()
        .flat_map(|(name, t)| {
            // A mixed test also gets its reads' and its writes' own curves.
            [
                (name.clone(), latency_points(t)),
                (
                    format!("{name}: reads"),
                    direction_points(t, |r| r.read.as_ref()),
                ),
                (
                    format!("{name}: writes"),
                    direction_points(t, |r| r.write.as_ref()),
                ),
            ]
        })
        .map(|(name, points)| Series {
            name,
            points,
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
            label: "latency, submit to completion (log)",
            scale: Scale::Log,
            fmt: &fmt_ns,
        },
        &series,
        &[],
    ))
}

/// The points of a run's series worth plotting: the whole intervals, and a last, partial
/// one of at least half an interval (a sliver's rate, a few I/Os over a fraction of a
/// millisecond, would be a spike of its own).
pub fn plotted(r: &RunResult) -> &[IntervalPoint] {
    let whole = r.whole_intervals().len();
    let (Some(ms), Some(last)) = (r.interval_ms, r.intervals.get(whole)) else {
        return &r.intervals[..whole];
    };
    let start = whole as u64 * ms;
    if last.t_ms.saturating_sub(start) * 2 >= ms {
        &r.intervals[..whole + 1]
    } else {
        &r.intervals[..whole]
    }
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
            points: plotted(r)
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
    Some(line_chart(
        title,
        &MEASUREMENT_TIME,
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
    v.sort_by_key(|p| (p.at.iodepth * p.at.jobs.max(1), p.at.iodepth));
    v
}

/// IOPS against latency over the depths of a saturation sweep, with the latency limit, the
/// answer and the knee.
pub fn saturation(title: &str, t: &TestResult) -> Option<String> {
    // A step in which no I/O completed has no latency to plot (it sat at 0 on a log axis).
    let curve: Vec<&CurvePoint> = by_depth(t.curve.as_ref()?)
        .into_iter()
        .filter(|p| p.at.completed_any())
        .collect();
    if curve.is_empty() {
        return None;
    }
    let stat = t
        .answer
        .as_ref()
        .map(|a| a.statistic.as_str())
        .unwrap_or("p99");
    let pick = |p: &CurvePoint| match stat {
        "mean" => p.at.lat_mean_ns,
        "p99.9" => p.at.lat_p999_ns,
        _ => p.at.lat_p99_ns,
    };
    let mut series = vec![Series {
        name: format!("{stat} latency (labels: queue depth)"),
        points: curve.iter().map(|p| (p.at.iops, pick(p))).collect(),
        // The curve table's depth (`saturate::depth_cell`): the jobs are in the sweep's name
        // (it read `8×4`).
        labels: curve.iter().map(|p| p.at.iodepth.to_string()).collect(),
    }];
    if stat != "mean" {
        series.push(Series {
            name: crate::report::metrics::MEAN_LATENCY.into(),
            points: curve
                .iter()
                .map(|p| (p.at.iops, p.at.lat_mean_ns))
                .collect(),
            labels: Vec::new(),
        });
    }
    let mut marks = Vec::new();
    if let Some(a) = &t.answer {
        marks.push(Mark::HLine {
            y: a.limit_ns,
            label: format!("limit {stat} ≤ {}", crate::units::fmt_ns_short(a.limit_ns)),
        });
        // No depth held the limit: no answer to mark (it was put at 0 IOPS, 0 ns).
        if let Some(lat) = a.latency_ns.filter(|_| a.detail.found) {
            marks.push(Mark::Point {
                x: a.iops,
                y: lat,
                // The answer's and the knee's words in the terminal and the report's text
                // (`saturate::answer_words`, `saturate::facts`): it said `answer: QD16 70,000
                // IOPS` and `knee: QD32`.
                label: format!(
                    "answer: {} IOPS at depth {}",
                    fmt_thousands(a.iops),
                    a.iodepth
                ),
            });
        }
        if let Some(k) = a.knee_iodepth
            && let Some(p) = curve.iter().find(|p| p.at.iodepth == k)
        {
            marks.push(Mark::Point {
                x: p.at.iops,
                y: pick(p),
                label: format!("knee at depth {k}"),
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

    /// A saturate sweep or a sustain pass is one run: the axis said "mean of the runs;
    /// error bar = 95 % CI" over bars without one; files/s ticks had no separators.
    #[test]
    fn single_runs_are_not_called_a_mean_and_rates_have_separators() {
        let one = |v: f64| TestResult {
            summary: [("files_per_s".to_string(), crate::stats::summarize(&[v]))].into(),
            ..Default::default()
        };
        let (a, b) = (one(12_000.0), one(30_000.0));
        let svg = metric_bars("t", "files_per_s", &[("a".into(), &a), ("b".into(), &b)]).unwrap();
        assert!(svg.contains("(one run each; higher is better)"), "{svg}");
        assert!(!svg.contains("mean of the runs"), "{svg}");
        assert!(
            svg.contains(">30,000<") || svg.contains(">25,000<") || svg.contains(">20,000<"),
            "{svg}"
        );
        let two = TestResult {
            summary: [(
                "files_per_s".to_string(),
                crate::stats::summarize(&[1.0, 2.0]),
            )]
            .into(),
            ..Default::default()
        };
        let svg = metric_bars("t", "files_per_s", &[("a".into(), &two)]).unwrap();
        assert!(
            svg.contains("mean of the runs; error bar = 95 % CI"),
            "{svg}"
        );
        assert_eq!(tick_fmt("files_per_s")(2.5), "2.50");
    }

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

    #[test]
    fn a_mixed_test_gets_its_reads_and_writes_curves() {
        let part = |ns: u64, n: u64| {
            let mut h = LatencyHistogram::new();
            for _ in 0..n {
                h.record(ns);
            }
            crate::runner::recorder::direction_stats(n, n * 4096, 1.0, &h)
        };
        let run = |i| {
            let mut all = LatencyHistogram::new();
            for _ in 0..70 {
                all.record(100_000);
            }
            for _ in 0..30 {
                all.record(900_000);
            }
            RunResult {
                run: i,
                lat_hist: Some(all.to_base64()),
                read: Some(part(100_000, 70)),
                write: Some(part(900_000, 30)),
                ..Default::default()
            }
        };
        let t = TestResult {
            runs: vec![run(1), run(2)],
            ..Default::default()
        };
        let reads = direction_points(&t, |r| r.read.as_ref());
        let writes = direction_points(&t, |r| r.write.as_ref());
        assert!(!reads.is_empty() && !writes.is_empty());
        let near = |v: f64, want: f64| (v - want).abs() <= want * 0.001;
        assert!(
            reads.iter().all(|&(_, ns)| near(ns, 100_000.0)),
            "{reads:?}"
        );
        assert!(
            writes.iter().all(|&(_, ns)| near(ns, 900_000.0)),
            "{writes:?}"
        );
        let svg = latency_curves("mixed", &[("RND4K mixed".into(), &t)]).unwrap();
        assert!(svg.contains("RND4K mixed: reads") && svg.contains("RND4K mixed: writes"));
        // Tests of one direction (or files without the split) get no extra curves.
        let plain = TestResult {
            runs: vec![RunResult {
                read: None,
                write: None,
                ..run(1)
            }],
            ..Default::default()
        };
        assert!(direction_points(&plain, |r| r.read.as_ref()).is_empty());
        let svg = latency_curves("plain", &[("RND4K read".into(), &plain)]).unwrap();
        assert!(!svg.contains(": reads"));
    }
}

//! The report's format-neutral blocks (headings, key/value lists, tables, charts,
//! warnings) and the per-test summary table, which `document.rs` and the matrix section
//! both build and `html.rs` and `markdown.rs` render.

use std::collections::BTreeMap;

use crate::model::{Summary, TestResult};
use crate::report::metrics::{
    fmt_mean_ci, fmt_value, label_for, metrics_of, primary_metric, table_figure,
};

/// A table: header, rows; columns from `first_numeric` on (up to `numeric_end`, if set)
/// are right-aligned.
#[derive(Debug, Clone, Default)]
pub struct TableBlock {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub first_numeric: usize,
    pub numeric_end: Option<usize>,
}

impl TableBlock {
    pub fn is_numeric(&self, col: usize) -> bool {
        col >= self.first_numeric && self.numeric_end.is_none_or(|end| col < end)
    }
}

#[derive(Debug, Clone)]
pub enum Block {
    Heading(u8, String),
    Para(String),
    /// Something the reader must not miss (an interrupted or failed run).
    Alert(String),
    KeyValues(Vec<(String, String)>),
    Table(TableBlock),
    /// Warnings as (code, text).
    Warnings(Vec<(String, String)>),
    /// One inline `<svg>` chart (HTML only) with its caption.
    Chart {
        svg: String,
        caption: String,
    },
}

/// Preferred column order of metrics in summary tables.
const METRIC_ORDER: [&str; 7] = [
    "bw_bytes_per_s",
    "iops",
    "files_per_s",
    "seconds_per_portion",
    "lat_mean_ns",
    "lat_p99_ns",
    "answer_iops",
];

/// A metric's cell in the summary table and the matrix's rankings: the figure the command's
/// own table gives (the median of the runs, a peak test's best run), then the mean ± 95 % in
/// brackets; the report gave the mean alone under the same "MB/s" as the terminal's median
/// (142.21 against 40.97 MB/s for one test of three runs). A files test's table gives the mean:
/// `mean ± 95 %`. The straggler spread is its median alone, the figure the terminal's
/// per-host table and the `straggler` warning give (over a saturate's steps, at different
/// depths, a mean and its interval mean nothing; the report said "8.4 % ± too wide" where
/// the terminal said "spread 7.6%").
pub fn summary_cell(t: &TestResult, metric: &str, s: &Summary) -> String {
    if metric == "straggler_spread_pct" && s.n >= 2 {
        return format!("{} (median)", fmt_value(metric, s.median));
    }
    let (figure, what) = table_figure(t, metric, s);
    if what == "mean" {
        fmt_mean_ci(metric, s)
    } else {
        figure_cell(metric, figure, s)
    }
}

/// `FIGURE (mean M ± CI)`: a figure of the runs other than their mean (the median, the best
/// run), then the mean ± 95 % in brackets; one run's figure alone.
pub fn figure_cell(metric: &str, figure: f64, s: &Summary) -> String {
    if s.n < 2 {
        fmt_mean_ci(metric, s)
    } else {
        format!(
            "{} (mean {})",
            fmt_value(metric, figure),
            fmt_mean_ci(metric, s)
        )
    }
}

/// One row per test: each metric's cell (`summary_cell`), the median of the headline metric,
/// its coefficient of variation, the number of runs and the outlier runs.
pub fn summary_table(tests: &[(String, &TestResult)]) -> TableBlock {
    let per_test: Vec<BTreeMap<String, Summary>> = tests
        .iter()
        .map(|(_, t)| metrics_of(t).into_iter().collect())
        .collect();
    let mut metrics: Vec<String> = METRIC_ORDER
        .iter()
        .filter(|m| per_test.iter().any(|ms| ms.contains_key(**m)))
        .map(|m| m.to_string())
        .collect();
    for ms in &per_test {
        for k in ms.keys() {
            if !metrics.contains(k) {
                metrics.push(k.clone());
            }
        }
    }
    let mut header = vec!["Test".to_string()];
    // A table of one family's tests (the report groups them so): its labels.
    let family = tests.first().map(|(_, t)| t.family.as_str()).unwrap_or("");
    let family = if tests.iter().all(|(_, t)| t.family == family) {
        family
    } else {
        ""
    };
    header.extend(metrics.iter().map(|m| label_for(family, m)));
    // The peak preset's headline is the best run (its console table shows that): a column
    // "median" left the report without the figure the table gave.
    let best = |t: &TestResult| t.headline.as_deref() == Some("max");
    let headline = if !tests.is_empty() && tests.iter().all(|(_, t)| best(t)) {
        "best run"
    } else if tests.iter().any(|(_, t)| best(t)) {
        "median (best run: peak)"
    } else {
        "median"
    };
    header.push(headline.to_string());
    header.extend(["CV", "runs", "outlier runs"].map(String::from));
    let rows = tests
        .iter()
        .zip(&per_test)
        .map(|((name, t), ms)| {
            let mut row = vec![name.clone()];
            for m in &metrics {
                row.push(
                    ms.get(m)
                        .map(|s| summary_cell(t, m, s))
                        .unwrap_or_else(|| "-".into()),
                );
            }
            let primary = primary_metric(t);
            let ps = primary.as_deref().and_then(|p| ms.get(p));
            row.push(match (primary.as_deref(), ps) {
                // The best of a rate (higher is better), as the peak preset's table shows.
                (Some(p), Some(s)) if best(t) => {
                    format!("{} {}", fmt_value(p, s.max), label_for(&t.family, p))
                }
                (Some(p), Some(s)) => {
                    format!("{} {}", fmt_value(p, s.median), label_for(&t.family, p))
                }
                _ => "-".into(),
            });
            row.push(match ps {
                Some(s) if s.n >= 2 => format!("{:.1} %", s.cv * 100.0),
                _ => "-".into(),
            });
            row.push(if let Some(ended) = t.ended_early() {
                format!("{} ({ended})", t.runs.len())
            } else if let Some(c) = t.curve.as_ref().filter(|_| t.runs.is_empty()) {
                format!("{} depths", c.len())
            } else {
                t.runs.len().to_string()
            });
            row.push(match ps {
                Some(s) if !s.outliers.is_empty() => t
                    .outlier_runs(s)
                    .iter()
                    .map(|r| r.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                _ => "-".into(),
            });
            row
        })
        .collect();
    TableBlock {
        header,
        rows,
        first_numeric: 1,
        numeric_end: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::summarize;

    /// A test of `family` with the given runs of each metric.
    fn test(name: &str, family: &str, metrics: &[(&str, &[f64])]) -> TestResult {
        let mut t = TestResult {
            name: name.into(),
            family: family.into(),
            ..Default::default()
        };
        for (m, runs) in metrics {
            t.summary.insert(m.to_string(), summarize(runs));
        }
        t
    }

    /// The test's cell in the summary table's column `name`, and its whole row.
    fn cell(t: &TestResult, name: &str) -> (String, Vec<String>) {
        let table = summary_table(&[(t.name.clone(), t)]);
        let col = table.header.iter().position(|h| h == name).unwrap();
        (table.rows[0][col].clone(), table.rows[0].clone())
    }

    /// A peak-preset result: the console table shows the best run, the report showed only
    /// the median.
    #[test]
    fn a_peak_result_shows_its_best_run() {
        let mut t = test(
            "SEQ1M Q8T1 read",
            "block",
            &[("iops", &[900.0, 1000.0, 1200.0])],
        );
        t.headline = Some("max".into());
        let (best, row) = cell(&t, "best run");
        assert!(best.starts_with("1,200"), "{row:?}");
        t.headline = None;
        let (median, row) = cell(&t, "median");
        assert!(median.starts_with("1,000"), "{row:?}");
    }

    /// Three runs of one test, 10,002 / 34,719 (mean) IOPS apart: the terminal's table gives
    /// the median (10,002) under "IOPS", the report gave the mean under the same label. Each
    /// cell now leads with the terminal's figure and brackets the mean; a files test's
    /// table gives the mean, and so does its cell.
    #[test]
    fn a_cell_gives_the_figure_of_the_command_s_table() {
        let runs = [9_000.0, 10_002.0, 85_155.0];
        let mut t = test(
            "RND4K Q1T1 read",
            "block",
            &[("iops", &runs), ("lat_mean_ns", &[11e3, 99.4e3, 125e3])],
        );
        let (iops, row) = cell(&t, "IOPS");
        assert!(iops.starts_with("10,002 (mean 34,719 "), "{row:?}");
        let (lat, row) = cell(&t, "mean latency");
        assert!(lat.starts_with("99.4 µs (mean 78.5 µs "), "{row:?}");
        // The peak preset's table: the best run's rate, the latency's median.
        t.headline = Some("max".into());
        let (iops, row) = cell(&t, "IOPS");
        assert!(iops.starts_with("85,155 (mean "), "{row:?}");
        let (lat, row) = cell(&t, "mean latency");
        assert!(lat.starts_with("99.4 µs (mean "), "{row:?}");
        let t = test("1 B create", "files", &[("files_per_s", &runs)]);
        let (files, row) = cell(&t, "files/s");
        assert!(files.starts_with("34,719 ± "), "{row:?}");
    }

    /// A distributed saturate's straggler spread over its steps: the report showed the mean
    /// of the steps' spreads with a 95 % interval ("8.4 % ± too wide") where the terminal
    /// and the warning give the median (7.6 %): it shows the median, and says so.
    #[test]
    fn the_straggler_spread_is_the_median_as_in_the_terminal() {
        let t = test(
            "randread",
            "saturate",
            &[
                ("iops", &[1000.0]),
                ("straggler_spread_pct", &[2.0, 7.6, 15.6]),
            ],
        );
        assert_eq!(cell(&t, "straggler spread").0, "7.6 % (median)");
    }
}

//! The terminal table of `iolab files`: Belov's Table 2 (seconds per N files, "mean (run1,
//! run2, run3)") plus files/s and MB/s per size and phase.

use comfy_table::{Cell, ContentArrangement};

use crate::model::{ResultDoc, TestResult};
use crate::report::metrics::{fmt_seconds, fmt_value, label};
use crate::report::table::{new_table, right};
use crate::units::{count, fmt_mb_per_s};

const PHASES: [&str; 5] = ["create", "stat", "read", "delete", "big"];

/// The create phase's sync time over a run (summary key), beside Belov's create cell.
const SYNC_SECONDS: &str = "sync_seconds";

fn param<'a>(t: &'a TestResult, k: &str) -> &'a str {
    t.params.get(k).map(String::as_str).unwrap_or("")
}

/// Belov's cell: "mean (run1, run2, run3)" of seconds per portion.
pub fn belov_cell(t: &TestResult) -> String {
    let runs: Vec<String> = t
        .runs
        .iter()
        .filter_map(|r| r.files.as_ref())
        .map(|d| fmt_seconds(d.seconds_per_portion))
        .collect();
    match t.summary.get("seconds_per_portion") {
        Some(s) if runs.len() > 1 => format!("{} ({})", fmt_seconds(s.mean), runs.join(", ")),
        Some(s) => fmt_seconds(s.mean),
        None => "-".into(),
    }
}

/// The size part of a test name (everything before the phase).
fn size_label(t: &TestResult) -> String {
    let phase = param(t, "phase");
    t.name
        .strip_suffix(phase)
        .map(|s| s.trim_end().to_string())
        .unwrap_or_else(|| t.name.clone())
}

/// Under the rates: how they and Belov's cells are averaged. The README's example showed
/// `1 B create 0.230 (0.061, 0.399)` seconds per 500 files next to `4,731 files/s`, where
/// 500 / 0.230 s is 2,174: both right, averaged differently, and nothing said so.
pub const RATES_NOTE: &str = "files/s and MB/s: mean of the runs' rates; seconds per portion: mean of the runs' times (runs far apart make 1 / mean time differ from the mean rate); portion CV: the largest spread of portions within one run.";

/// The terminal report of a files run.
pub fn render_files_table(doc: &ResultDoc) -> String {
    let tests: Vec<&TestResult> = doc.tests.iter().filter(|t| t.family == "files").collect();
    let mut out = String::new();
    if let Some(t) = tests.first() {
        out.push_str(&format!(
            "Seconds per {} (mean (run1, run2, ...)); {} x {}, method {}, sync {}, layout {}, allocation unit {} B\n",
            count(param(t, "files_per_portion").parse().unwrap_or(0), "file", "files"),
            count(param(t, "portions").parse().unwrap_or(0), "portion", "portions"),
            count(param(t, "passes").parse().unwrap_or(0), "pass", "passes"),
            param(t, "method"),
            param(t, "sync"),
            param(t, "layout"),
            param(t, "alloc_unit_bytes"),
        ));
    }
    let present: Vec<&str> = PHASES
        .iter()
        .copied()
        .filter(|ph| tests.iter().any(|t| param(t, "phase") == *ph))
        .collect();
    let mut rows: Vec<String> = Vec::new();
    for t in &tests {
        let l = size_label(t);
        if !rows.contains(&l) {
            rows.push(l);
        }
    }
    let mut cells = new_table(ContentArrangement::Disabled);
    let mut header = vec![Cell::new("size")];
    for ph in &present {
        header.push(Cell::new(*ph));
        if *ph == "create" {
            // The report's words (`metrics::label`): the terminal said `sync s`.
            header.push(Cell::new(label(SYNC_SECONDS)));
        }
    }
    cells.set_header(header);
    let mut rates = new_table(ContentArrangement::Disabled);
    rates.set_header(vec![
        "test",
        "files/s",
        "MB/s",
        "files/s with sync",
        "portion CV %",
    ]);
    for row in &rows {
        let mut r = vec![Cell::new(row)];
        for ph in &present {
            let t = tests
                .iter()
                .find(|t| &size_label(t) == row && param(t, "phase") == *ph);
            r.push(right(
                t.map(|t| belov_cell(t)).unwrap_or_else(|| "-".into()),
            ));
            if *ph == "create" {
                let s = t
                    .and_then(|t| t.summary.get(SYNC_SECONDS))
                    .map(|s| fmt_seconds(s.mean))
                    .unwrap_or_else(|| "-".into());
                r.push(right(s));
            }
        }
        cells.add_row(r);
    }
    for t in &tests {
        let mean = |k: &str| t.summary.get(k).map(|s| s.mean);
        let with_sync: Vec<f64> = t
            .runs
            .iter()
            .filter_map(|r| r.files.as_ref()?.files_per_s_with_sync)
            .collect();
        // A spread between portions needs two of them: `--portions 1` read "0.0".
        let cv: Vec<f64> = t
            .runs
            .iter()
            .filter_map(|r| r.files.as_ref())
            .filter(|d| d.portion_ns.len() >= 2)
            .map(|d| d.portion_cv * 100.0)
            .collect();
        rates.add_row(vec![
            Cell::new(&t.name),
            right(
                // The report's form (`fmt_value`): `631.8`, `0.28` (it said `632`, `0`).
                mean("files_per_s")
                    .map(|v| fmt_value("files_per_s", v))
                    .unwrap_or_else(|| "-".into()),
            ),
            right(
                mean("bw_bytes_per_s")
                    .map(fmt_mb_per_s)
                    .unwrap_or_else(|| "-".into()),
            ),
            right(if with_sync.is_empty() {
                "-".into()
            } else {
                fmt_value(
                    "files_per_s",
                    with_sync.iter().sum::<f64>() / with_sync.len() as f64,
                )
            }),
            right(if cv.is_empty() {
                "-".into()
            } else {
                format!("{:.1}", cv.iter().cloned().fold(0.0, f64::max))
            }),
        ]);
    }
    out.push_str(&format!("{cells}\n{rates}\n{RATES_NOTE}\n"));
    for t in &tests {
        if let Some(s) = t.files.as_ref().and_then(|d| d.scaling.as_ref()) {
            out.push_str(&format!("{}: {}\n", t.name, s.message));
        }
        if let Some(e) = &t.error {
            out.push_str(&format!("{}: stopped: {e}\n", t.name));
        }
    }
    out.push_str(&crate::report::table::render_warnings(doc));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Environment;

    /// The create phase's sync time was `sync s` in the terminal and `sync seconds` in the
    /// reports.
    #[test]
    fn the_sync_column_has_the_report_s_name() {
        let mut doc = ResultDoc::new("files", Vec::new(), Environment::default());
        let mut t = TestResult {
            name: "4KiB create".into(),
            family: "files".into(),
            ..Default::default()
        };
        t.params.insert("phase".into(), "create".into());
        t.summary.insert(
            SYNC_SECONDS.into(),
            crate::stats::summary::summarize(&[0.25]),
        );
        doc.tests.push(t);
        let out = render_files_table(&doc);
        assert_eq!(label(SYNC_SECONDS), "sync seconds");
        let header = out.lines().nth(2).unwrap_or_default();
        assert!(header.contains(" sync seconds "), "{out}");
        assert!(!out.contains("sync s "), "{out}");
        assert!(out.contains(" 0.250 "), "{out}");
    }
}

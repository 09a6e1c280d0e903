//! The matrix's terminal output: the configurations (how each was made, skipped or failed,
//! with the reason) and, per workload, a ranking across configurations: fastest first, the
//! spread between runs and the relative speed ("1.00 / 1.37× slower").

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table};

use super::merge::{WORKLOAD_PARAM, headline, higher_is_better};
use crate::model::matrix::ConfigurationResult;
use crate::model::{ResultDoc, TestResult};
use crate::stats::summary::median;
use crate::units::{fmt_mb_per_s, fmt_size_exact, fmt_thousands};

/// Per-test columns are shown up to this many tests; beyond, only the overall ranking.
const MAX_TEST_COLUMNS: usize = 4;

fn table(header: Vec<&str>) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header);
    t
}

fn fmt_value(metric: &str, v: f64) -> String {
    match metric {
        "iops" => format!("{} IOPS", fmt_thousands(v)),
        "bw_bytes_per_s" => format!("{} MB/s", fmt_mb_per_s(v)),
        "files_per_s" => format!("{} files/s", fmt_thousands(v)),
        _ => format!("{v:.3} {metric}"),
    }
}

fn ms(ns: &[u64]) -> String {
    if ns.is_empty() {
        return "-".into();
    }
    let v: Vec<f64> = ns.iter().map(|&n| n as f64 / 1e6).collect();
    format!("{:.0}", median(&v))
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").trim().to_string()
}

/// "1.00" for the fastest, "1.37× slower" for the others.
pub fn relative_text(ratio: f64) -> String {
    if ratio < 1.005 {
        "1.00".into()
    } else {
        format!("{ratio:.2}× slower")
    }
}

/// How each configuration was made: method, units asked and read back, set-up and teardown
/// times (medians over its runs), status and reason.
pub fn render_configurations(doc: &ResultDoc) -> String {
    let mut t = table(vec![
        "configuration",
        "mount",
        "unit asked",
        "unit made",
        "image ms",
        "mkfs ms",
        "mount ms",
        "umount+detach ms",
        "status",
    ]);
    let mut reasons = String::new();
    for c in &doc.configurations {
        let unit = |u: Option<u64>| u.map(fmt_size_exact).unwrap_or_else(|| "default".into());
        let td: Vec<u64> = c.runs.iter().map(|r| r.umount_ns + r.detach_ns).collect();
        t.add_row(vec![
            Cell::new(&c.label),
            Cell::new(c.mount_method.as_deref().unwrap_or("-")),
            Cell::new(unit(c.cluster_bytes)),
            Cell::new(
                c.cluster_bytes_actual
                    .map(fmt_size_exact)
                    .unwrap_or_else(|| "-".into()),
            ),
            Cell::new(ms(&c.runs.iter().map(|r| r.image_ns).collect::<Vec<_>>()))
                .set_alignment(CellAlignment::Right),
            Cell::new(ms(&c.runs.iter().map(|r| r.mkfs_ns).collect::<Vec<_>>()))
                .set_alignment(CellAlignment::Right),
            Cell::new(ms(&c.runs.iter().map(|r| r.mount_ns).collect::<Vec<_>>()))
                .set_alignment(CellAlignment::Right),
            Cell::new(ms(&td)).set_alignment(CellAlignment::Right),
            Cell::new(&c.status),
        ]);
        if let Some(r) = &c.reason {
            reasons.push_str(&format!("  {} {}: {}\n", c.label, c.status, first_line(r)));
        }
    }
    let mut out = format!("{t}\n");
    if !reasons.is_empty() {
        out.push_str(&reasons);
    }
    out
}

/// Tests of `workload` on configuration `c`.
fn tests_of<'c>(c: &'c ConfigurationResult, workload: &str) -> Vec<&'c TestResult> {
    c.tests
        .iter()
        .filter(|t| t.params.get(WORKLOAD_PARAM).map(String::as_str) == Some(workload))
        .collect()
}

/// The ranking table of one workload.
pub fn render_ranking(doc: &ResultDoc, workload: &str) -> String {
    // Test names in order of first appearance.
    let mut names: Vec<String> = Vec::new();
    for c in &doc.configurations {
        for t in tests_of(c, workload) {
            if !names.contains(&t.name) {
                names.push(t.name.clone());
            }
        }
    }
    // Best value per test.
    let best: Vec<Option<(String, f64)>> = names
        .iter()
        .map(|n| {
            let vals = doc.configurations.iter().filter_map(|c| {
                tests_of(c, workload)
                    .into_iter()
                    .find(|t| &t.name == n)
                    .and_then(headline)
            });
            vals.fold(None, |acc: Option<(String, f64)>, (k, v)| match acc {
                None => Some((k, v)),
                Some((bk, bv)) => {
                    let better = if higher_is_better(&k) { v > bv } else { v < bv };
                    Some(if better { (k, v) } else { (bk, bv) })
                }
            })
        })
        .collect();
    struct Row<'a> {
        c: &'a ConfigurationResult,
        score: f64,
        cells: Vec<String>,
        spread: Option<f64>,
    }
    let mut ranked: Vec<Row> = Vec::new();
    let mut unranked: Vec<(&ConfigurationResult, String)> = Vec::new();
    for c in &doc.configurations {
        let tests = tests_of(c, workload);
        let failed = c
            .workloads
            .iter()
            .find(|o| o.workload == workload)
            .and_then(|o| o.error.clone());
        if tests.is_empty() || failed.is_some() {
            let why = failed
                .or_else(|| c.reason.clone())
                .unwrap_or_else(|| "no result".into());
            unranked.push((c, format!("{}: {}", c.status, first_line(&why))));
            continue;
        }
        let mut logs = Vec::new();
        let mut cells = Vec::new();
        let mut spread: Option<f64> = None;
        for (n, b) in names.iter().zip(&best) {
            let t = tests.iter().find(|t| &t.name == n);
            match (t.and_then(|t| headline(t)), b) {
                (Some((k, v)), Some((_, bv))) => {
                    let ratio = if higher_is_better(&k) { bv / v } else { v / bv };
                    logs.push(ratio.ln());
                    cells.push(fmt_value(&k, v));
                    if let Some(s) = t.and_then(|t| t.summary.get(&k))
                        && s.n >= 2
                    {
                        spread = Some(spread.unwrap_or(0.0).max(s.cv));
                    }
                }
                _ => cells.push("-".into()),
            }
        }
        if logs.is_empty() {
            unranked.push((c, "no headline metric".into()));
            continue;
        }
        let score = (logs.iter().sum::<f64>() / logs.len() as f64).exp();
        ranked.push(Row {
            c,
            score,
            cells,
            spread,
        });
    }
    ranked.sort_by(|a, b| a.score.total_cmp(&b.score));
    // Relative to the fastest configuration (first row = 1.00).
    let top = ranked.first().map(|r| r.score).unwrap_or(1.0);
    for r in &mut ranked {
        r.score /= top;
    }
    let per_test = names.len() <= MAX_TEST_COLUMNS;
    let mut header: Vec<&str> = vec!["#", "configuration"];
    if per_test {
        header.extend(names.iter().map(String::as_str));
    }
    header.extend(["spread", "relative"]);
    let mut t = table(header);
    for (i, r) in ranked.iter().enumerate() {
        let mut row = vec![Cell::new(i + 1), Cell::new(&r.c.label)];
        if per_test {
            row.extend(
                r.cells
                    .iter()
                    .map(|c| Cell::new(c).set_alignment(CellAlignment::Right)),
            );
        }
        row.push(Cell::new(
            r.spread
                .map(|s| format!("±{:.1}%", s * 100.0))
                .unwrap_or_else(|| "-".into()),
        ));
        row.push(Cell::new(relative_text(r.score)));
        t.add_row(row);
    }
    for (c, why) in &unranked {
        let mut row = vec![Cell::new("-"), Cell::new(&c.label)];
        if per_test {
            row.extend(names.iter().map(|_| Cell::new("")));
        }
        row.extend([Cell::new(""), Cell::new(why)]);
        t.add_row(row);
    }
    let basis = if per_test || names.is_empty() {
        String::new()
    } else {
        format!(
            " (relative = geometric mean over its {} tests; per-test values in the result JSON)",
            names.len()
        )
    };
    format!("Ranking for {workload}{basis}\n{t}\n")
}

/// Belov's Table 1 layout for small-file workloads (contract: `params.phase`,
/// `params.size_token`, summary `seconds_per_portion`): one row per configuration, one
/// column per file size of the create phase (and the big file), seconds per portion.
pub fn render_table1(doc: &ResultDoc, workload: &str) -> Option<String> {
    let is_cell = |t: &TestResult| {
        matches!(
            t.params.get("phase").map(String::as_str),
            Some("create" | "big")
        ) && t.summary.contains_key("seconds_per_portion")
    };
    // Columns by size token: `cluster+1` is one column whatever the cluster.
    let head_of = |t: &TestResult| {
        let tok = t
            .params
            .get("size_token")
            .cloned()
            .unwrap_or_else(|| t.name.clone());
        if t.params.get("phase").map(String::as_str) == Some("big") {
            format!("big {tok}")
        } else {
            tok
        }
    };
    let mut cols: Vec<String> = Vec::new();
    let mut per_portion = None;
    for c in &doc.configurations {
        for t in tests_of(c, workload).into_iter().filter(|t| is_cell(t)) {
            let head = head_of(t);
            if !cols.contains(&head) {
                cols.push(head);
            }
            per_portion = per_portion.or_else(|| t.params.get("files_per_portion").cloned());
        }
    }
    if cols.is_empty() {
        return None;
    }
    let mut header = vec!["configuration"];
    header.extend(cols.iter().map(String::as_str));
    let mut t = table(header);
    for c in &doc.configurations {
        let tests = tests_of(c, workload);
        if tests.is_empty() {
            continue;
        }
        let mut row = vec![Cell::new(&c.label)];
        for col in &cols {
            let v = tests
                .iter()
                .find(|t| is_cell(t) && &head_of(t) == col)
                .and_then(|t| t.summary.get("seconds_per_portion"))
                .map(|s| format!("{:.3}", s.median))
                .unwrap_or_else(|| "-".into());
            row.push(Cell::new(v).set_alignment(CellAlignment::Right));
        }
        t.add_row(row);
    }
    Some(format!(
        "Seconds per portion of {} files (create; one column per file size, as in Belov's NTFS Table 1) for {workload}\n{t}\n",
        per_portion.unwrap_or_else(|| "N".into())
    ))
}

/// Everything printed at the end of `iolab matrix`.
pub fn render(doc: &ResultDoc, workloads: &[String]) -> String {
    let mut out = render_configurations(doc);
    for w in workloads {
        out.push('\n');
        out.push_str(&render_ranking(doc, w));
        if let Some(t1) = render_table1(doc, w) {
            out.push('\n');
            out.push_str(&t1);
        }
    }
    out.push_str(&crate::report::table::render_warnings(doc));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::RunResult;

    fn cfg(label: &str, iops: &[f64]) -> ConfigurationResult {
        let mut t = TestResult {
            name: "RND4K Q1T1 read".into(),
            family: "block".into(),
            runs: iops
                .iter()
                .map(|&v| RunResult {
                    iops: Some(v),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        t.params.insert(WORKLOAD_PARAM.into(), "run:x".into());
        crate::runner::repeat::summarize_test(&mut t);
        ConfigurationResult {
            label: label.into(),
            status: "ok".into(),
            tests: vec![t],
            ..Default::default()
        }
    }

    #[test]
    fn ranking_puts_the_fastest_first_with_relative_speed() {
        let mut doc = ResultDoc::new("matrix", vec![], Default::default());
        doc.configurations = vec![
            cfg("ext4", &[1000.0, 1000.0]),
            cfg("xfs", &[1370.0, 1370.0]),
            ConfigurationResult {
                label: "f2fs".into(),
                status: "skipped".into(),
                reason: Some("mkfs.f2fs is not installed".into()),
                ..Default::default()
            },
        ];
        let out = render_ranking(&doc, "run:x");
        let xfs = out.find("xfs").unwrap();
        let ext4 = out.find("ext4").unwrap();
        assert!(xfs < ext4, "{out}");
        assert!(out.contains("1.37× slower"), "{out}");
        assert!(out.contains("skipped: mkfs.f2fs is not installed"), "{out}");
        assert_eq!(relative_text(1.0), "1.00");
    }

    #[test]
    fn table1_has_one_column_per_size_token() {
        let mk = |label: &str, name: &str, tok: &str, secs: f64| {
            let mut t = TestResult {
                name: name.into(),
                family: "files".into(),
                ..Default::default()
            };
            t.params.insert(WORKLOAD_PARAM.into(), "files:x".into());
            t.params.insert("phase".into(), "create".into());
            t.params.insert("size_token".into(), tok.into());
            t.params.insert("files_per_portion".into(), "1000".into());
            t.summary.insert(
                "seconds_per_portion".into(),
                crate::stats::summary::summarize(&[secs]),
            );
            ConfigurationResult {
                label: label.into(),
                status: "ok".into(),
                tests: vec![t],
                ..Default::default()
            }
        };
        let mut doc = ResultDoc::new("matrix", vec![], Default::default());
        doc.configurations = vec![
            mk("ntfs 1KiB", "cluster+1 (1025 B) create", "cluster+1", 0.25),
            mk("ntfs 4KiB", "cluster+1 (4097 B) create", "cluster+1", 0.5),
        ];
        let out = render_table1(&doc, "files:x").unwrap();
        assert_eq!(out.matches("cluster+1").count(), 1, "{out}");
        assert!(out.contains("0.250") && out.contains("0.500"), "{out}");
        assert!(out.contains("portion of 1000 files"), "{out}");
        assert!(render_table1(&doc, "run:y").is_none());
    }
}

//! The matrix's terminal output: the configurations (how each was made, skipped or failed,
//! with the reason) and, per workload, a ranking across configurations: fastest first, the
//! spread between runs and the relative speed ("1.00 / 1.37× slower").

use comfy_table::{Cell, ContentArrangement, Table};

use crate::analysis::matrix::{
    WORKLOAD_PARAM, cache_absorbed, cache_unchecked, headline, higher_is_better,
};
use crate::model::matrix::ConfigurationResult;
use crate::model::{ResultDoc, TestResult};
use crate::os::text::terminal;
use crate::report::copy::space_cell;
use crate::report::files::belov_cell;
use crate::report::metrics::{fmt_seconds, table_figure};
use crate::report::table::right;
use crate::stats::summary::median;
use crate::units::{fmt_mb_per_s, fmt_size_exact, fmt_size_iec, fmt_thousands};

/// Per-test columns are shown up to this many tests; beyond, only the overall ranking.
const MAX_TEST_COLUMNS: usize = 4;

fn table(header: Vec<&str>) -> Table {
    let mut t = super::table::new_table(ContentArrangement::Disabled);
    t.set_header(header);
    t
}

/// A ranking cell: `t`'s headline `metric` with its unit. A trace's `iops` counts every
/// call it made (opens, stats, fsyncs, reads and writes), which `iolab trace run` calls
/// ops/s; the matrix's ranking of NASPT-style workloads said "IOPS".
fn fmt_value(t: &TestResult, metric: &str, v: f64) -> String {
    match metric {
        // NASPT gives each application test in MB/s: beside the ops/s, the same replay's
        // bytes over the same time (so it ranks as the ops/s do).
        "iops" if t.family == "trace" => {
            let mb = t
                .summary
                .get("bw_bytes_per_s")
                .map(|s| table_figure(t, "bw_bytes_per_s", s).0)
                .filter(|b| b.is_finite() && *b > 0.0);
            match mb {
                Some(b) => format!("{} ops/s · {} MB/s", fmt_thousands(v), fmt_mb_per_s(b)),
                None => format!("{} ops/s", fmt_thousands(v)),
            }
        }
        "iops" => format!("{} IOPS", fmt_thousands(v)),
        "bw_bytes_per_s" => format!("{} MB/s", fmt_mb_per_s(v)),
        "files_per_s" => format!("{} files/s", fmt_thousands(v)),
        _ => format!("{v:.3} {metric}"),
    }
}

/// The median of the runs' times of a set-up step in ms; `-` when no run timed it: a step
/// that never happened is 0 ns (no image on `--device`, no mkfs for tmpfs, a run that failed
/// before it), and a step that ran takes more than that.
fn ms(ns: &[u64]) -> String {
    let v: Vec<f64> = ns
        .iter()
        .filter(|&&n| n > 0)
        .map(|&n| n as f64 / 1e6)
        .collect();
    if v.is_empty() {
        return "-".into();
    }
    format!("{:.0}", median(&v))
}

/// A row's reason on one line: its first line and, when that ends in a colon before a
/// command's framed output (`  | ...`), the output's first line, which says what went wrong
/// (`mkfs.xfs: invalid option -- 'O'`); the whole output stays in the JSON.
pub fn first_line(s: &str) -> String {
    let mut lines = s.lines();
    let first = lines.next().unwrap_or("").trim().to_string();
    if !first.ends_with(':') {
        return first;
    }
    let said = lines
        .filter_map(|l| l.trim_start().strip_prefix('|'))
        .map(str::trim)
        .find(|l| !l.is_empty());
    match said {
        Some(l) => format!("{first} {l}"),
        None => first.trim_end_matches(':').to_string(),
    }
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
            label_cell(&c.label),
            Cell::new(c.mount_method.as_deref().unwrap_or("-")),
            Cell::new(unit(c.cluster_bytes)),
            Cell::new(
                c.cluster_bytes_actual
                    .map(fmt_size_exact)
                    .unwrap_or_else(|| "-".into()),
            ),
            right(ms(&c.runs.iter().map(|r| r.image_ns).collect::<Vec<_>>())),
            right(ms(&c.runs.iter().map(|r| r.mkfs_ns).collect::<Vec<_>>())),
            right(ms(&c.runs.iter().map(|r| r.mount_ns).collect::<Vec<_>>())),
            right(ms(&td)),
            Cell::new(&c.status),
        ]);
        if let Some(r) = &c.reason {
            reasons.push_str(&format!(
                "  {} {}: {}\n",
                terminal(&c.label),
                c.status,
                terminal(&first_line(r))
            ));
        }
    }
    let mut out = format!("{t}\n");
    if !reasons.is_empty() {
        out.push_str(&reasons);
    }
    out
}

/// When no configuration measured anything (every one skipped, or failed before its first
/// figure): the sentence that says so, with each configuration's reason.
pub fn nothing_measured(doc: &ResultDoc) -> Option<String> {
    let what = nothing_measured_what(doc)?;
    let cs = &doc.configurations;
    let reasons: Vec<String> = cs
        .iter()
        .map(|c| {
            let why = c.reason.as_deref().map(first_line).unwrap_or_default();
            match c.status.as_str() {
                "skipped" => format!("{}: {why}", c.label),
                s => format!("{} {s}: {why}", c.label),
            }
        })
        .collect();
    Some(format!(
        "nothing was measured: {what} ({})",
        reasons.join("; ")
    ))
}

/// What [`nothing_measured`] says happened, without the reasons.
fn nothing_measured_what(doc: &ResultDoc) -> Option<&'static str> {
    let cs = &doc.configurations;
    if cs.is_empty()
        || cs
            .iter()
            .any(|c| c.tests.iter().any(|t| !t.runs.is_empty()))
    {
        return None;
    }
    Some(if cs.iter().all(|c| c.status == "skipped") {
        if cs.len() == 1 {
            "its only configuration was skipped"
        } else {
            "every configuration was skipped"
        }
    } else {
        "no configuration ran a workload"
    })
}

/// What `iolab matrix` prints when nothing was measured (None when something was): the
/// configurations with their reasons, the warnings and the error, which points at the
/// reasons (they were printed under the table and again in the error line, whole mkfs
/// commands twice; stderr's error line keeps them).
pub fn render_nothing_measured(doc: &ResultDoc) -> Option<String> {
    let what = nothing_measured_what(doc)?;
    let mut out = render_configurations(doc);
    if doc.error == nothing_measured(doc) {
        out.push_str(&crate::report::table::render_warning_list(&doc.warnings));
        out.push_str(&format!(
            "error: nothing was measured: {what} (reasons above)\n"
        ));
    } else {
        out.push_str(&crate::report::table::render_warnings(doc));
    }
    Some(out)
}

/// Tests of `workload` on configuration `c`.
fn tests_of<'c>(c: &'c ConfigurationResult, workload: &str) -> Vec<&'c TestResult> {
    c.tests
        .iter()
        .filter(|t| t.params.get(WORKLOAD_PARAM).map(String::as_str) == Some(workload))
        .collect()
}

/// The phase of a data-set copy test (`write`, `read`, `copy`, `delete`, `ceiling`).
fn copy_phase(t: &TestResult) -> Option<&str> {
    (t.family == "copy")
        .then(|| t.params.get("phase").map(String::as_str))
        .flatten()
}

/// Whether a test takes part in the ranking. Data-set copies are ranked as the
/// twelve-file-system copy test ranked them: writing the set from RAM to the file system and
/// reading it back. The in-place copy is not: within one xfs or btrfs copy_file_range shares
/// extents (reflink) and writes no data, so it would rank metadata against data. Nor is the
/// delete (no data moves) or the RAM-to-RAM ceiling. They are shown apart.
fn is_ranked(t: &TestResult) -> bool {
    !matches!(copy_phase(t), Some("copy" | "delete" | "ceiling"))
}

/// The relative cell of a row not ranked: its status and why, the status said once
/// (`interrupted by SIGINT`, not `interrupted: interrupted by SIGINT`).
fn unranked_reason(status: &str, why: &str) -> String {
    let why = first_line(why);
    if why.starts_with(status) {
        why
    } else {
        format!("{status}: {why}")
    }
}

/// The ranking table of one workload.
pub fn render_ranking(doc: &ResultDoc, workload: &str) -> String {
    // Test names in order of first appearance.
    let mut names: Vec<String> = Vec::new();
    for c in &doc.configurations {
        for t in tests_of(c, workload).into_iter().filter(|t| is_ranked(t)) {
            if !names.contains(&t.name) {
                names.push(t.name.clone());
            }
        }
    }
    // Best value per test, over the configurations that are ranked (not those whose figures
    // the page cache absorbed).
    let best: Vec<Option<(String, f64)>> = names
        .iter()
        .map(|n| {
            let ranked = doc
                .configurations
                .iter()
                .filter(|c| !cache_absorbed(c, workload));
            let vals = ranked.filter_map(|c| {
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
    // Measured, but what they measured is the page cache: shown, not ranked.
    let mut apart: Vec<Row> = Vec::new();
    // Not ranked, with the figures of the tests they finished (a stopped or failed workload's
    // earlier tests), blank where none.
    let mut unranked: Vec<(&ConfigurationResult, String, Vec<String>)> = Vec::new();
    for c in &doc.configurations {
        let tests = tests_of(c, workload);
        let failed = c
            .workloads
            .iter()
            .find(|o| o.workload == workload)
            .and_then(|o| o.error.clone());
        if tests.is_empty() || failed.is_some() {
            // A configuration's own reason is under the configurations table already: a long
            // one (a file system not installed) was printed there and again in every ranking.
            let why = match (failed, &c.reason) {
                (Some(e), _) => unranked_reason(&c.status, &e),
                (None, Some(_)) => format!("{} (reason above)", c.status),
                (None, None) => unranked_reason(&c.status, "no result"),
            };
            let cells = names
                .iter()
                .map(|n| {
                    tests
                        .iter()
                        .find(|t| &t.name == n)
                        .and_then(|t| Some((t, headline(t)?)))
                        .map(|(t, (k, v))| fmt_value(t, &k, v))
                        .unwrap_or_default()
                })
                .collect();
            unranked.push((c, why, cells));
            continue;
        }
        let absorbed = cache_absorbed(c, workload);
        let mut logs = Vec::new();
        let mut cells = Vec::new();
        let mut spread: Option<f64> = None;
        for (n, b) in names.iter().zip(&best) {
            let t = tests.iter().find(|t| &t.name == n);
            let Some((t, (k, v))) = t.and_then(|t| Some((t, headline(t)?))) else {
                cells.push("-".into());
                continue;
            };
            cells.push(fmt_value(t, &k, v));
            if let Some(s) = t.summary.get(&k)
                && s.n >= 2
            {
                spread = Some(spread.unwrap_or(0.0).max(s.cv));
            }
            if let Some((_, bv)) = b {
                let ratio = if higher_is_better(&k) { bv / v } else { v / bv };
                logs.push(ratio.ln());
            }
        }
        if absorbed && cells.iter().any(|c| c != "-") {
            apart.push(Row {
                c,
                score: f64::NAN,
                cells,
                spread,
            });
            continue;
        }
        if logs.is_empty() {
            unranked.push((c, "no headline metric".into(), Vec::new()));
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
    let numbered = ranked
        .iter()
        .enumerate()
        .map(|(i, r)| ((i + 1).to_string(), r));
    for (rank, r) in numbered.chain(apart.iter().map(|r| ("-".to_string(), r))) {
        let mut row = vec![Cell::new(rank), label_cell(&r.c.label)];
        if per_test {
            row.extend(r.cells.iter().map(right));
        }
        row.push(Cell::new(
            r.spread
                .map(|s| format!("±{:.1}%", s * 100.0))
                .unwrap_or_else(|| "-".into()),
        ));
        row.push(Cell::new(if r.score.is_nan() {
            CACHE_ABSORBED_CELL.to_string()
        } else {
            relative_text(r.score)
        }));
        t.add_row(row);
    }
    for (c, why, cells) in &unranked {
        let mut row = vec![Cell::new("-"), label_cell(&c.label)];
        let mut why = why.clone();
        if per_test {
            row.extend(
                names
                    .iter()
                    .enumerate()
                    .map(|(i, _)| right(cells.get(i).map(String::as_str).unwrap_or(""))),
            );
        } else {
            // No per-test columns: the row would not show that some of its tests finished.
            // (Not "of N": a stop between tests leaves the rest unknown to the result, and "5
            // of 5" read as complete.)
            match cells.iter().filter(|c| !c.is_empty()).count() {
                0 => {}
                1 => why.push_str(" (1 test finished, kept in the result JSON)"),
                n => why.push_str(&format!(" ({n} tests finished, kept in the result JSON)")),
            }
        }
        row.extend([Cell::new(""), Cell::new(why)]);
        t.add_row(row);
    }
    let copies = doc.configurations.iter().any(|c| {
        tests_of(c, workload)
            .iter()
            .any(|t| copy_phase(t).is_some())
    });
    let basis = if copies {
        " (write = RAM to the file system, read = back to RAM, as in the twelve-file-system copy test)".to_string()
    } else if per_test || names.is_empty() {
        String::new()
    } else {
        format!(
            " (relative = geometric mean over its {} tests; per-test values in the result JSON)",
            names.len()
        )
    };
    let mut out = format!("Ranking for {workload}{basis}\n{t}\n");
    if !apart.is_empty() {
        let labels: Vec<&str> = apart.iter().map(|r| r.c.label.as_str()).collect();
        out.push_str(&cache_absorbed_note(&labels, !ranked.is_empty()));
    }
    let unchecked: Vec<&str> = ranked
        .iter()
        .filter(|r| cache_unchecked(doc, r.c))
        .map(|r| r.c.label.as_str())
        .collect();
    if let Some(n) = cache_unchecked_note(&unchecked) {
        out.push_str(&n);
    }
    out
}

/// The ranked configurations without device counters: whether the cache absorbed their
/// writes is not known.
pub fn cache_unchecked_note(labels: &[&str]) -> Option<String> {
    (!labels.is_empty()).then(|| {
        format!(
            "unchecked: {}: no device counters (see the no-device-counters warnings), so whether the page cache absorbed the writes cannot be told; ranked as measured.\n",
            labels.join(", ")
        )
    })
}

/// The relative-speed cell of a configuration whose figures the page cache absorbed.
pub const CACHE_ABSORBED_CELL: &str = "not ranked: cache-absorbed";

/// Why `labels` are listed below the ranking instead of in it.
pub fn cache_absorbed_note(labels: &[&str], others_ranked: bool) -> String {
    let (them, measure) = if labels.len() == 1 {
        (labels[0].to_string(), "its figures measure")
    } else {
        (labels.join(", "), "their figures measure")
    };
    let ranked = if others_ranked {
        "; the ranking compares only the configurations measured on the device"
    } else {
        ""
    };
    format!(
        "not ranked: {them}: the page cache took the writes (see the cache-absorbed warnings; a FUSE helper writes its device through the page cache although direct I/O was asked, and reads come back from that cache), so {measure} memory, not the file system on the device{ranked}.\n"
    )
}

/// A configuration x column grid of one workload's tests: the tests `is_cell` picks, in
/// the column `head_of` names (columns in the order first seen).
struct Grid<'a> {
    doc: &'a ResultDoc,
    workload: &'a str,
    is_cell: &'a dyn Fn(&TestResult) -> bool,
    head_of: &'a dyn Fn(&TestResult) -> String,
    cols: Vec<String>,
}

impl<'a> Grid<'a> {
    /// The grid, or `None` when no test is a cell.
    fn new(
        doc: &'a ResultDoc,
        workload: &'a str,
        is_cell: &'a dyn Fn(&TestResult) -> bool,
        head_of: &'a dyn Fn(&TestResult) -> String,
    ) -> Option<Grid<'a>> {
        let mut grid = Grid {
            doc,
            workload,
            is_cell,
            head_of,
            cols: Vec::new(),
        };
        let mut cols: Vec<String> = Vec::new();
        for t in grid.cells() {
            let head = head_of(t);
            if !cols.contains(&head) {
                cols.push(head);
            }
        }
        grid.cols = cols;
        (!grid.cols.is_empty()).then_some(grid)
    }

    /// Every cell's test, configuration by configuration.
    fn cells(&self) -> impl Iterator<Item = &'a TestResult> + '_ {
        self.doc
            .configurations
            .iter()
            .flat_map(|c| tests_of(c, self.workload))
            .filter(|t| (self.is_cell)(t))
    }

    /// The table headed `configuration` and the columns.
    fn table(&self) -> Table {
        let mut header = vec!["configuration"];
        header.extend(self.cols.iter().map(String::as_str));
        table(header)
    }

    /// A configuration's row: its label, then per column the `value` of its test there
    /// (`-` without one), right-aligned.
    fn row(
        &self,
        label: &str,
        tests: &[&TestResult],
        value: impl Fn(&TestResult) -> Option<String>,
    ) -> Vec<Cell> {
        let mut row = vec![label_cell(label)];
        for col in &self.cols {
            let v = tests
                .iter()
                .find(|t| (self.is_cell)(t) && &(self.head_of)(t) == col)
                .and_then(|t| value(t))
                .unwrap_or_else(|| "-".into());
            row.push(right(v));
        }
        row
    }
}

/// The phases of Belov's tables: the files made, and the big file.
const BELOV_PHASES: [&str; 2] = ["create", "big"];

/// Belov's tables for small-file workloads (contract: `params.phase`, `params.size_token`,
/// summary `seconds_per_portion`, runs' `files.seconds_per_portion`): one row per
/// configuration, one column per file size of the create phase (and the big file), a cell
/// per test from `value`; `None` when no test is a cell or `keep` refuses the grid.
fn belov_grid(
    doc: &ResultDoc,
    workload: &str,
    phases: &[&str],
    keep: impl Fn(&Grid) -> bool,
    value: impl Fn(&TestResult) -> Option<String>,
) -> Option<(Table, String)> {
    let is_cell = |t: &TestResult| {
        t.params
            .get("phase")
            .is_some_and(|p| phases.contains(&p.as_str()))
            && t.summary.contains_key("seconds_per_portion")
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
    let grid = Grid::new(doc, workload, &is_cell, &head_of).filter(|g| keep(g))?;
    let per_portion = grid
        .cells()
        .find_map(|t| t.params.get("files_per_portion").cloned())
        .unwrap_or_else(|| "N".into());
    let mut t = grid.table();
    for c in &doc.configurations {
        let tests = tests_of(c, workload);
        if !tests.is_empty() {
            t.add_row(grid.row(&c.label, &tests, &value));
        }
    }
    Some((t, per_portion))
}

/// Belov's Table 1: seconds per portion, the figure `iolab files`'s table gives (its mean:
/// the median here put one number beside another for the same test).
pub fn render_table1(doc: &ResultDoc, workload: &str) -> Option<String> {
    let (t, per_portion) = belov_grid(
        doc,
        workload,
        &BELOV_PHASES,
        |_| true,
        |t| {
            let s = t.summary.get("seconds_per_portion")?;
            Some(fmt_seconds(table_figure(t, "seconds_per_portion", s).0))
        },
    )?;
    Some(format!(
        "Seconds per portion of {per_portion} files (create; one column per file size, as in Belov's NTFS Table 1) for {workload}\n{t}\n"
    ))
}

/// Belov's Table 2, Table 1 with every run in brackets (`3.271 (3.299, 3.266, 3.247)`), as
/// `iolab files` prints its cells; only when some cell has more than one run (the
/// workload's repeats on every fresh file system). The matrix printed the means alone, so a
/// reader of his article could not see the spread his Table 2 shows.
pub fn render_table2(doc: &ResultDoc, workload: &str) -> Option<String> {
    let several = |g: &Grid| {
        g.cells().any(|t| {
            t.runs.iter().filter(|r| r.files.is_some()).count() > 1
                && t.summary
                    .get("seconds_per_portion")
                    .is_some_and(|s| s.n > 1)
        })
    };
    let (t, per_portion) = belov_grid(doc, workload, &BELOV_PHASES, several, |t| {
        Some(belov_cell(t))
    })?;
    Some(format!(
        "Table 1 with every run, mean (run1, run2, ...) in seconds per portion of {per_portion} files, as in Belov's Table 2\n{t}\n"
    ))
}

/// Belov's slowdown past N files in one folder: per configuration and file size, where the
/// create rate fell by 10 % or more as files accumulated (`iolab files`'s scaling line),
/// when the files went into one directory (`files:layout=flat`) or some cell slowed down.
/// The matrix kept these lines in the JSON only, so `--fs ntfs,ext4` with
/// `files:layout=flat` could not answer his question on the terminal.
pub fn render_scaling(doc: &ResultDoc, workload: &str) -> Option<String> {
    fn scaling(t: &TestResult) -> Option<&crate::model::files::DirScaling> {
        t.files.as_ref()?.scaling.as_ref()
    }
    // A cell needs four portions to show a slowdown: `--study cluster`'s two a size put
    // "too few portions" in every cell.
    let wanted = |g: &Grid| {
        g.cells().filter_map(scaling).any(|s| {
            s.curve.len() >= 4 && (s.scope == "one directory" || s.drop_after_files.is_some())
        })
    };
    let (t, _) = belov_grid(doc, workload, &["create"], wanted, |t| {
        let s = scaling(t)?;
        let total = s.curve.last().map(|p| {
            let per_portion = t.params.get("files_per_portion")?.parse::<u64>().ok()?;
            Some(p.files_before + per_portion)
        });
        Some(
            match (s.drop_after_files, s.slowdown_pct, total.flatten()) {
                (Some(after), Some(pct), _) => {
                    format!("slower by {pct:.0} % after {}", fmt_thousands(after as f64))
                }
                (None, _, Some(n)) if s.curve.len() >= 4 => {
                    format!("none up to {}", fmt_thousands(n as f64))
                }
                _ => "too few portions".into(),
            },
        )
    })?;
    let scope = doc
        .configurations
        .iter()
        .flat_map(|c| tests_of(c, workload))
        .find_map(scaling)
        .map_or("one directory", |s| s.scope.as_str());
    Some(format!(
        "Slowdown as files accumulate in {scope} (create; the rate falling by 10 % or more, as iolab files finds it; the curve is in the result JSON) for {workload}\n{t}\n"
    ))
}

/// Space next to time: per configuration and file size, how much df's used space grew with
/// the create phase's files in place (median over the runs), and what `iolab slack`'s rules
/// predict for the same files at the unit made.
pub fn render_space(doc: &ResultDoc, workload: &str) -> Option<String> {
    // (measured, predicted clusters of files and directories, predicted metadata)
    // (median growth, None when every run's was left out; predicted clusters and metadata)
    type Space = (Option<f64>, Option<(u64, u64)>);
    let space_of = |t: &TestResult| -> Option<Space> {
        let runs: Vec<&crate::model::files::FilesSpace> = t
            .runs
            .iter()
            .filter_map(|r| r.files.as_ref().and_then(|f| f.space.as_ref()))
            .collect();
        if runs.is_empty() {
            return None;
        }
        // Runs whose df another program's writes moved (`other_writers`) are left out.
        let deltas: Vec<f64> = runs
            .iter()
            .filter_map(|s| s.used_delta_bytes)
            .map(|d| d as f64)
            .collect();
        let predicted = runs.last().and_then(|s| s.predicted.as_ref()).map(|p| {
            (
                p.file_allocated_bytes + p.dir_allocated_bytes,
                p.metadata_bytes,
            )
        });
        Some(((!deltas.is_empty()).then(|| median(&deltas)), predicted))
    };
    let is_cell = |t: &TestResult| {
        t.family == "files"
            && t.params.get("phase").map(String::as_str) == Some("create")
            && space_of(t).is_some()
    };
    let head_of = |t: &TestResult| {
        t.params
            .get("size_token")
            .cloned()
            .unwrap_or_else(|| t.name.clone())
    };
    let grid = Grid::new(doc, workload, &is_cell, &head_of)?;
    let files = grid.cells().find_map(|t| {
        t.runs
            .last()
            .and_then(|r| r.files.as_ref())
            .map(|f| f.files_done)
    });
    let mut t = grid.table();
    let mib = |b: f64| format!("{:.2}", b / (1 << 20) as f64);
    for c in &doc.configurations {
        let tests = tests_of(c, workload);
        if !tests.iter().any(|t| is_cell(t)) {
            continue;
        }
        t.add_row(grid.row(&c.label, &tests, |t| {
            space_of(t).map(|(m, p)| {
                // Every run's df moved with other programs' writes: nothing to show.
                let m = m.map_or_else(|| "? (other writers)".to_string(), mib);
                match p {
                    Some((c, 0)) => format!("{m} / {}", mib(c as f64)),
                    Some((c, meta)) => {
                        format!("{m} / {}+{}", mib(c as f64), mib(meta as f64))
                    }
                    None => format!("{m} / -"),
                }
            })
        }));
    }
    Some(format!(
        "Space with the {} files of one run in place, MiB: measured (df used growth) / predicted by iolab slack's rules at the unit made (clusters of files and directories + per-file metadata: MFT records, xfs inodes), for {workload}\n{t}\nThe measured side includes what the rules do not model: journal and tree blocks (btrfs keeps small files inline in metadata, twice with DUP, and frees the previous size's space in the background), MFT growth in whole chunks (the MFT never shrinks: after the first size, NTFS reuses the freed records and grows by the clusters alone), directory index slack.\n",
        files.map(fmt_thousands_u).unwrap_or_else(|| "N".into())
    ))
}

fn fmt_thousands_u(v: u64) -> String {
    fmt_thousands(v as f64)
}

/// The data-set copy's unranked phases, one row per configuration: the in-place copy with
/// how the file system made it (data or reflink), and the delete in seconds and files/s.
pub fn render_copy_apart(doc: &ResultDoc, workload: &str) -> Option<String> {
    let phase_of = |c: &ConfigurationResult, ph: &str| -> Option<TestResult> {
        tests_of(c, workload)
            .into_iter()
            .find(|t| copy_phase(t) == Some(ph))
            .cloned()
    };
    // The twelve-file-system copy test's reference line (`copy:ceiling=true`): the same
    // copy within RAM. It was measured, left out of the ranking, and shown nowhere.
    let with_ceiling = doc
        .configurations
        .iter()
        .any(|c| phase_of(c, "ceiling").is_some());
    let mut header = vec![
        "configuration",
        "copy MB/s",
        "copy made by",
        "delete s",
        "delete files/s",
    ];
    if with_ceiling {
        header.push("RAM-to-RAM MB/s");
    }
    let mut t = table(header);
    let mut rows = 0;
    let (mut reflinked, mut partial) = (false, false);
    let mb_s = |v: f64| format!("{} MB/s", fmt_mb_per_s(v));
    for c in &doc.configurations {
        let (copy, delete) = (phase_of(c, "copy"), phase_of(c, "delete"));
        let ceiling = phase_of(c, "ceiling");
        if copy.is_none() && delete.is_none() && ceiling.is_none() {
            continue;
        }
        rows += 1;
        let med = |t: &Option<TestResult>, k: &str| {
            t.as_ref().and_then(|t| t.summary.get(k)).map(|s| s.median)
        };
        let made = copy
            .as_ref()
            .and_then(|t| t.runs.last())
            .and_then(|r| r.copy.as_ref())
            .and_then(|d| d.in_place.as_ref());
        reflinked |= made.is_some_and(|m| m.method == "reflink");
        partial |= made.is_some_and(|m| m.method == "partial");
        let mut row = vec![
            label_cell(&c.label),
            right(
                med(&copy, "bw_bytes_per_s")
                    .map(mb_s)
                    .unwrap_or_else(|| "-".into()),
            ),
            Cell::new(
                made.map(crate::workload::copy::sharing::label)
                    .unwrap_or_else(|| "-".into()),
            ),
            right(
                med(&delete, "elapsed_ns")
                    .or_else(|| {
                        let ns: Vec<f64> = delete
                            .as_ref()?
                            .runs
                            .iter()
                            .map(|r| r.elapsed_ns as f64)
                            .collect();
                        (!ns.is_empty()).then(|| median(&ns))
                    })
                    .map(|v| format!("{:.3}", v / 1e9))
                    .unwrap_or_else(|| "-".into()),
            ),
            right(
                med(&delete, "files_per_s")
                    .map(fmt_thousands)
                    .unwrap_or_else(|| "-".into()),
            ),
        ];
        if with_ceiling {
            row.push(right(
                med(&ceiling, "bw_bytes_per_s")
                    .map(mb_s)
                    .unwrap_or_else(|| "-".into()),
            ));
        }
        t.add_row(row);
    }
    if rows == 0 {
        return None;
    }
    let what = if with_ceiling {
        "In-place copy and delete, and the RAM-to-RAM ceiling (the same copy within RAM: the best any copy could do here),"
    } else {
        "In-place copy and delete"
    };
    let mut out = format!("{what} for {workload} (not ranked)\n{t}\n");
    // A partial copy wrote some of its data: "no data was written" was said of
    // `partial (57 % shared)` too.
    if reflinked {
        out.push_str(
            "reflink: the copies share the source's extents (copy_file_range within one xfs or btrfs, as cp does): no data was written, the MB/s measures metadata. copy:method=rw copies the bytes on every file system.\n",
        );
    }
    if partial {
        out.push_str(
            "partial: some of the copies share the source's extents (copy_file_range within one xfs or btrfs, as cp does; btrfs keeps small files inline, which it copies): only the rest was written, so the MB/s is partly metadata's. copy:method=rw copies the bytes on every file system.\n",
        );
    }
    Some(out)
}

/// Space next to time for data-set copies: per configuration, what df's used space grew by
/// with the set written (and its ratio to the data) and whether the delete gave it back, as
/// `iolab copy`'s On disk column. The matrix kept it in the JSON only, so a cluster-size
/// comparison could not show what NASPT's article saw (exFAT's large cluster made 1.2 GB of
/// files take 3 GB), nor Fedorchuk's nilfs2 keeping the space of deleted files.
pub fn render_copy_space(doc: &ResultDoc, workload: &str) -> Option<String> {
    let cell = |c: &ConfigurationResult, ph: &str| {
        let t = tests_of(c, workload)
            .into_iter()
            .find(|t| copy_phase(t) == Some(ph))?;
        let d = t.copy.as_ref()?;
        let s = t.runs.last()?.copy.as_ref()?.space.as_ref()?;
        Some((d.data_bytes, space_cell(d, s)))
    };
    let mut t = table(vec!["configuration", "data", "on disk", "after the delete"]);
    let mut rows = 0;
    for c in &doc.configurations {
        let (write, delete) = (cell(c, "write"), cell(c, "delete"));
        let Some((data, on_disk)) = write else {
            continue;
        };
        rows += 1;
        t.add_row(vec![
            label_cell(&c.label),
            right(fmt_size_iec(data)),
            right(on_disk),
            right(delete.map_or_else(|| "-".into(), |(_, s)| s)),
        ]);
    }
    (rows > 0).then(|| {
        format!(
            "Space for {workload}: df's used growth with the data set written (x the data), and after the delete\n{t}\n"
        )
    })
}

/// Everything printed at the end of `iolab matrix`: the tables of `workloads`, then `more`
/// (the fresh-vs-aged comparison of `--age`), then the warnings and how the matrix ended,
/// which stay the last lines (an interrupted matrix's line stood above the comparison).
/// A configuration's label in a table cell: typed by the user (mkfs and mount options),
/// so shown as `os::text::terminal` shows outside text.
fn label_cell(label: &str) -> Cell {
    Cell::new(terminal(label))
}

pub fn render(doc: &ResultDoc, workloads: &[String], more: &str) -> String {
    let mut out = render_configurations(doc);
    for w in workloads {
        out.push('\n');
        out.push_str(&render_ranking(doc, w));
        // The tables a workload's family has, each after an empty line.
        let sections: [fn(&ResultDoc, &str) -> Option<String>; 6] = [
            render_table1,
            render_table2,
            render_scaling,
            render_space,
            render_copy_apart,
            render_copy_space,
        ];
        for section in sections.iter().filter_map(|f| f(doc, w)) {
            out.push('\n');
            out.push_str(&section);
        }
    }
    if !more.is_empty() {
        out.push('\n');
        out.push_str(more);
    }
    out.push_str(&crate::report::table::render_warnings(doc));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::RunResult;
    use crate::report::matrix::matrix_of;

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
        crate::stats::repeat::summarize_test(&mut t);
        measured(label, vec![t])
    }

    /// A configuration that measured these tests.
    fn measured(label: &str, tests: Vec<TestResult>) -> ConfigurationResult {
        ConfigurationResult {
            label: label.into(),
            status: "ok".into(),
            tests,
            ..Default::default()
        }
    }

    #[test]
    fn ranking_puts_the_fastest_first_with_relative_speed() {
        let doc = matrix_of(vec![
            cfg("ext4", &[1000.0, 1000.0]),
            cfg("xfs", &[1370.0, 1370.0]),
            ConfigurationResult {
                label: "f2fs".into(),
                status: "skipped".into(),
                reason: Some("mkfs.f2fs is not installed".into()),
                ..Default::default()
            },
        ]);
        let out = render_ranking(&doc, "run:x");
        let xfs = out.find("xfs").unwrap();
        let ext4 = out.find("ext4").unwrap();
        assert!(xfs < ext4, "{out}");
        assert!(out.contains("1.37× slower"), "{out}");
        assert!(out.contains("skipped (reason above)"), "{out}");
        assert_eq!(relative_text(1.0), "1.00");
        // The reason once, under the configurations table; the rankings point at it (it was
        // printed there and again in the relative cell of every ranking).
        let all = render(&doc, &["run:x".into(), "files:y".into()], "");
        assert_eq!(
            all.matches("mkfs.f2fs is not installed").count(),
            1,
            "{all}"
        );
        assert!(
            all.contains("  f2fs skipped: mkfs.f2fs is not installed\n"),
            "{all}"
        );
        assert_eq!(all.matches("skipped (reason above)").count(), 2, "{all}");
        // A matrix with --age stopped by Ctrl-C: how it ended stays the last line, under the
        // fresh-vs-aged comparison (it stood above it).
        let mut doc = doc;
        doc.status = "interrupted".into();
        doc.error = Some("interrupted by SIGINT".into());
        let all = render(&doc, &["run:x".into()], "Fresh vs aged (...):\n");
        let aging = all.find("Fresh vs aged").unwrap();
        let ended = all.find("interrupted by SIGINT: a partial result").unwrap();
        assert!(aging < ended, "{all}");
        assert!(all.ends_with("(what was measured before it)\n"), "{all}");
    }

    /// A row stopped by Ctrl-C after some tests (or a workload that failed after some) is
    /// listed under the ranking with the figures it finished: the row showed blank cells
    /// although the JSON held its finished tests.
    #[test]
    fn an_interrupted_row_shows_its_finished_tests_unranked() {
        let mut ext4 = cfg("ext4", &[1234.0]);
        ext4.status = "interrupted".into();
        ext4.workloads.push(crate::model::matrix::WorkloadOutcome {
            workload: "run:x".into(),
            status: "interrupted".into(),
            error: Some("interrupted by SIGINT".into()),
            tests: vec!["RND4K Q1T1 read".into()],
            ..Default::default()
        });
        let doc = matrix_of(vec![cfg("xfs", &[1000.0, 1000.0]), ext4]);
        let out = render_ranking(&doc, "run:x");
        let row = out.lines().find(|l| l.contains("ext4")).unwrap();
        assert!(row.contains("1,234 IOPS"), "{out}");
        assert!(row.contains("interrupted by SIGINT"), "{row}");
        assert!(!row.contains("interrupted: interrupted"), "{row}");
        assert!(row.trim_start_matches(['│', ' ']).starts_with('-'), "{row}");
        let xfs = out.lines().find(|l| l.contains("xfs")).unwrap();
        assert!(xfs.contains("1.00"), "{xfs}");
    }

    /// Ctrl-C during the sixth test of `run`'s default preset: the ranking has no per-test
    /// columns (six tests), so the stopped row said only "interrupted: interrupted by
    /// SIGINT", nothing of the five tests it finished and the result file kept. (No "of 6":
    /// stopped between tests, only the finished ones are known, and it read "5 of 5".)
    #[test]
    fn an_interrupted_row_without_test_columns_says_what_it_kept() {
        let tests = |n: usize| -> Vec<TestResult> {
            (1..=n)
                .map(|i| {
                    let mut t = cfg("x", &[1000.0 * i as f64]).tests.remove(0);
                    t.name = format!("T{i}");
                    t
                })
                .collect()
        };
        let mut ext4 = measured("ext4", tests(5));
        ext4.status = "interrupted".into();
        ext4.workloads.push(crate::model::matrix::WorkloadOutcome {
            workload: "run:x".into(),
            status: "interrupted".into(),
            error: Some("interrupted by SIGINT".into()),
            ..Default::default()
        });
        let doc = matrix_of(vec![measured("xfs", tests(6)), ext4]);
        let out = render_ranking(&doc, "run:x");
        assert!(out.contains("geometric mean over its 6 tests"), "{out}");
        let row = out.lines().find(|l| l.contains("ext4")).unwrap();
        assert!(
            row.contains("interrupted by SIGINT (5 tests finished, kept in the result JSON)"),
            "{row}"
        );
        assert!(!row.contains("interrupted: interrupted"), "{row}");
    }

    /// A failed mkfs's row said "failed: mkfs failed: `mkfs.xfs -f -q -O ^has_journal
    /// /dev/loop9` failed (exit code 1):" and stopped at the colon, before the reason; the
    /// report's cell held all 30 lines of mkfs's usage text.
    #[test]
    fn a_reason_line_reaches_the_commands_first_words() {
        let why = "mkfs failed: `mkfs.xfs -O x /dev/loop9` failed (exit code 1):\n  | mkfs.xfs: invalid option -- 'O'\n  | unknown option -O \n  | Usage: mkfs.xfs";
        assert_eq!(
            first_line(why),
            "mkfs failed: `mkfs.xfs -O x /dev/loop9` failed (exit code 1): mkfs.xfs: invalid option -- 'O'"
        );
        assert_eq!(first_line("interrupted by SIGINT"), "interrupted by SIGINT");
        assert_eq!(
            first_line("failed (exit code 1):\n"),
            "failed (exit code 1)"
        );
    }

    /// A label holds what the user typed (`--mkfs-opts`, `--mount-opts`) and a reason what
    /// mkfs printed: an escape sequence in either cleared the screen from the matrix's
    /// tables. Shown escaped, in every table and the reason lines; the JSON keeps them.
    #[test]
    fn labels_and_reasons_are_shown_escaped() {
        let evil = "ext4 [-L a\u{1b}[2Jb\nFORGED]";
        let mut failed = cfg("xfs", &[]);
        failed.status = "failed".into();
        failed.reason = Some("mkfs failed:\n  | mkfs.xfs: bad \u{1b}[31mlabel".into());
        let doc = matrix_of(vec![cfg(evil, &[1000.0, 1000.0]), failed]);
        let all = render(&doc, &["run:x".into()], "");
        assert!(!all.contains('\u{1b}'), "{all}");
        assert!(!all.contains("\nFORGED"), "{all}");
        assert!(all.contains("a\\u{1b}[2Jb\\nFORGED"), "{all}");
        assert!(all.contains("mkfs.xfs: bad \\u{1b}[31mlabel"), "{all}");
        assert_eq!(doc.configurations[0].label, evil);
    }

    /// exfat through mount.exfat-fuse measured the page cache (1 GiB written, 16 MiB reached
    /// the loop device) and ranked first, ext4 "3.29× slower": a configuration whose writes
    /// the cache absorbed is listed after the ranking, unnumbered, with the reason.
    #[test]
    fn a_cache_absorbed_configuration_is_not_ranked() {
        let mut exfat = cfg("exfat", &[5000.0, 5000.0]);
        exfat.workloads.push(crate::model::matrix::WorkloadOutcome {
            workload: "run:x".into(),
            status: "ok".into(),
            tests: vec!["RND4K Q1T1 read".into()],
            cache_absorbed: vec!["RND4K Q1T1 read".into()],
            ..Default::default()
        });
        let mut doc = matrix_of(vec![
            exfat,
            cfg("ext4", &[1000.0, 1000.0]),
            cfg("xfs", &[500.0, 500.0]),
        ]);
        let out = render_ranking(&doc, "run:x");
        let line = |l: &str| out.lines().find(|x| x.contains(l)).unwrap().to_string();
        assert!(
            line("ext4").contains("│ 1 ") && line("ext4").contains("1.00"),
            "{out}"
        );
        assert!(
            line("xfs").contains("│ 2 ") && line("xfs").contains("2.00× slower"),
            "{out}"
        );
        assert!(line("exfat").contains("│ - "), "{out}");
        assert!(
            line("exfat").contains("not ranked: cache-absorbed"),
            "{out}"
        );
        assert!(line("exfat").contains("5,000 IOPS"), "{out}");
        assert!(
            out.find("xfs").unwrap() < out.find("┆ exfat").unwrap(),
            "listed after the ranked rows: {out}"
        );
        assert!(
            out.contains("not ranked: exfat: the page cache took the writes"),
            "{out}"
        );
        assert!(
            out.contains("compares only the configurations measured"),
            "{out}"
        );
        assert!(!out.contains("unchecked"), "{out}");
        // fusefat mounts no block device: xfs ranked as measured, with a note.
        doc.warnings.push(crate::model::Warning {
            code: crate::model::WarningCode::NoDeviceCounters,
            message: "no block device".into(),
            test: Some("xfs".into()),
        });
        let out = render_ranking(&doc, "run:x");
        assert!(out.contains("2.00× slower"), "{out}");
        assert!(out.contains("unchecked: xfs: no device counters"), "{out}");
        // Every configuration absorbed: none is ranked, none is "1.00".
        doc.configurations.retain(|c| c.label == "exfat");
        let mut vfat = doc.configurations[0].clone();
        vfat.label = "vfat".into();
        doc.configurations.push(vfat);
        let out = render_ranking(&doc, "run:x");
        assert!(!out.contains("1.00") && !out.contains("│ 1 "), "{out}");
        assert!(out.contains("not ranked: exfat, vfat:"), "{out}");
        assert!(!out.contains("compares only"), "{out}");
    }

    /// `--device` makes no image: its "image ms" is `-`, not `0` (nor is a step of a run that
    /// never got to it a 0 in the median).
    #[test]
    fn a_step_that_never_ran_is_a_dash() {
        let mut c = cfg("ext4", &[1000.0]);
        let run = |image_ns, mkfs_ns| crate::model::matrix::ConfigRun {
            run: 1,
            image_ns,
            mkfs_ns,
            mount_ns: 3_000_000,
            umount_ns: 4_000_000,
            ..Default::default()
        };
        c.runs = vec![run(0, 20_000_000), run(0, 0), run(0, 24_000_000)];
        let doc = matrix_of(vec![c]);
        let out = render_configurations(&doc);
        let row = out.lines().find(|l| l.contains("ext4")).unwrap();
        let cells: Vec<&str> = row.split('┆').map(str::trim).collect();
        // configuration, mount, unit asked, unit made, image, mkfs, mount, umount+detach
        assert_eq!(cells[4], "-", "{out}");
        assert_eq!(cells[5], "22", "median of the runs that made one: {out}");
        assert_eq!(cells[6], "3", "{out}");
    }

    /// Skipped and failed rows measure nothing: said once, with every reason; one measured
    /// configuration is enough for a ranking.
    #[test]
    fn nothing_measured_names_every_configuration_s_reason() {
        let row = |label: &str, status: &str, why: &str| ConfigurationResult {
            label: label.into(),
            status: status.into(),
            reason: Some(why.into()),
            ..Default::default()
        };
        let mut doc = matrix_of(vec![row("f2fs", "skipped", "mkfs.f2fs is not installed")]);
        assert_eq!(
            nothing_measured(&doc).unwrap(),
            "nothing was measured: its only configuration was skipped (f2fs: mkfs.f2fs is not installed)"
        );
        doc.configurations.push(row(
            "jfs",
            "failed",
            "mkfs failed: `mkfs.jfs` failed\n  | oops",
        ));
        assert_eq!(
            nothing_measured(&doc).unwrap(),
            "nothing was measured: no configuration ran a workload (f2fs: mkfs.f2fs is not installed; jfs failed: mkfs failed: `mkfs.jfs` failed)"
        );
        // Printed, each reason once: under the table, and the error line points at them.
        doc.error = nothing_measured(&doc);
        let shown = render_nothing_measured(&doc).unwrap();
        assert_eq!(
            shown.matches("mkfs.f2fs is not installed").count(),
            1,
            "{shown}"
        );
        assert!(
            shown.ends_with(
                "  jfs failed: mkfs failed: `mkfs.jfs` failed\n\
                 error: nothing was measured: no configuration ran a workload (reasons above)\n"
            ),
            "{shown}"
        );
        // Stopped before anything ran: said as every interrupted table says it (it read
        // "error: interrupted by SIGINT", an error line on stdout for a stop the user asked).
        doc.error = Some("interrupted by SIGINT".into());
        doc.status = "interrupted".into();
        let shown = render_nothing_measured(&doc).unwrap();
        assert!(
            shown.ends_with(
                "interrupted by SIGINT: a partial result (what was measured before it)\n"
            ),
            "{shown}"
        );
        assert!(!shown.contains("error:"), "{shown}");
        doc.configurations.push(cfg("ext4", &[1000.0]));
        assert_eq!(nothing_measured(&doc), None);
        assert_eq!(render_nothing_measured(&doc), None);
    }

    #[test]
    fn copies_rank_by_write_and_read_and_a_reflink_is_shown_apart() {
        let phase = |label: &str, ph: &str, mbs: f64, method: Option<&str>| {
            let mut t = TestResult {
                name: format!("media-mix {ph}"),
                family: "copy".into(),
                runs: vec![RunResult {
                    bw_bytes_per_s: Some(mbs * 1e6),
                    files_per_s: Some(100.0),
                    elapsed_ns: 2_000_000_000,
                    copy: method.map(|m| crate::model::copy::CopyRunDetail {
                        in_place: Some(crate::model::copy::InPlaceCopy {
                            method: m.into(),
                            basis: "fiemap".into(),
                            fiemap_mapped_bytes: Some(100),
                            fiemap_shared_bytes: Some(if m == "reflink" { 100 } else { 0 }),
                            ..Default::default()
                        }),
                        ..Default::default()
                    }),
                    ..Default::default()
                }],
                ..Default::default()
            };
            t.params.insert(WORKLOAD_PARAM.into(), "copy:x".into());
            t.params.insert("phase".into(), ph.into());
            t.config = Some(label.into());
            crate::stats::repeat::summarize_test(&mut t);
            t
        };
        let cfg = |label: &str, w: f64, copy: f64, method: &str| {
            measured(
                label,
                vec![
                    phase(label, "write", w, None),
                    phase(label, "read", w, None),
                    phase(label, "copy", copy, Some(method)),
                    phase(label, "delete", 500.0, None),
                ],
            )
        };
        let doc = matrix_of(vec![
            cfg("xfs", 100.0, 21_000.0, "reflink"),
            cfg("ext4", 200.0, 150.0, "data"),
        ]);
        let out = render_ranking(&doc, "copy:x");
        // The reflink's 21,000 MB/s does not lift xfs: ext4 wrote and read faster.
        assert!(
            out.find("ext4").unwrap() < out.find("xfs").unwrap(),
            "{out}"
        );
        assert!(out.contains("2.00× slower"), "{out}");
        assert!(
            !out.contains("media-mix copy") && !out.contains("delete"),
            "{out}"
        );
        assert!(out.contains("twelve-file-system copy test"), "{out}");
        let apart = render_copy_apart(&doc, "copy:x").unwrap();
        assert!(apart.contains("reflink (100 % shared)"), "{apart}");
        assert!(
            apart.contains("21000.00 MB/s") || apart.contains("21,000"),
            "{apart}"
        );
        assert!(apart.contains("2.000"), "delete seconds: {apart}");
        assert!(render_copy_apart(&doc, "run:y").is_none());
        // No ceiling measured: no column for it.
        assert!(!apart.contains("RAM-to-RAM"), "{apart}");

        // The twelve-file-system copy test's RAM-to-RAM ceiling (`copy:ceiling=true`) was
        // measured and shown nowhere; a partial copy read "no data was written".
        let mut btrfs = cfg("btrfs", 100.0, 300.0, "partial");
        btrfs.tests.push(phase("btrfs", "ceiling", 1409.84, None));
        let doc = matrix_of(vec![btrfs, cfg("ext4", 200.0, 150.0, "data")]);
        let apart = render_copy_apart(&doc, "copy:x").unwrap();
        assert!(apart.contains("RAM-to-RAM ceiling"), "{apart}");
        let row = apart.lines().find(|l| l.contains("btrfs")).unwrap();
        assert!(row.contains("1409.84 MB/s"), "{apart}");
        assert!(!apart.contains("no data was written"), "{apart}");
        assert!(apart.contains("partial: some of the copies"), "{apart}");
        let ranking = render_ranking(&doc, "copy:x");
        assert!(!ranking.contains("ceiling"), "{ranking}");
    }

    /// The space a data set took per configuration (the cluster size's cost NASPT's
    /// article saw on exFAT) was in the JSON only.
    #[test]
    fn a_copy_s_space_on_disk_is_a_table() {
        use crate::model::copy::{CopyRunDetail, CopyTestDetail, SpaceAccounting};
        let phase = |ph: &str, space: SpaceAccounting| {
            let mut t = TestResult {
                name: format!("office-docs {ph}"),
                family: "copy".into(),
                copy: Some(CopyTestDetail {
                    phase: ph.into(),
                    data_bytes: 26_100_000,
                    ..Default::default()
                }),
                runs: vec![RunResult {
                    bw_bytes_per_s: Some(1e8),
                    copy: Some(CopyRunDetail {
                        space: Some(space),
                        ..Default::default()
                    }),
                    ..Default::default()
                }],
                ..Default::default()
            };
            t.params.insert(WORKLOAD_PARAM.into(), "copy:x".into());
            t.params.insert("phase".into(), ph.into());
            crate::stats::repeat::summarize_test(&mut t);
            t
        };
        let written = SpaceAccounting {
            delta_bytes: 45_193_216,
            overhead_ratio: Some(1.733),
            ..Default::default()
        };
        let kept = SpaceAccounting {
            space_returned: Some(false),
            not_returned_bytes: Some(45_193_216),
            ..Default::default()
        };
        let doc = matrix_of(vec![measured(
            "exfat 128KiB",
            vec![phase("write", written), phase("delete", kept)],
        )]);
        let out = render(&doc, &["copy:x".into()], "");
        let row = out.lines().rfind(|l| l.contains("exfat 128KiB")).unwrap();
        assert!(row.contains("43.1 MiB (x1.733)"), "{out}");
        assert!(row.contains("43.1 MiB not freed"), "{out}");
        assert!(row.contains("24.9 MiB"), "{out}");
        assert!(render_copy_space(&doc, "run:y").is_none());
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
            measured(label, vec![t])
        };
        let doc = matrix_of(vec![
            mk("ntfs 1KiB", "cluster+1 (1025 B) create", "cluster+1", 0.25),
            mk("ntfs 4KiB", "cluster+1 (4097 B) create", "cluster+1", 0.5),
        ]);
        let out = render_table1(&doc, "files:x").unwrap();
        assert_eq!(out.matches("cluster+1").count(), 1, "{out}");
        assert!(out.contains("0.250") && out.contains("0.500"), "{out}");
        assert!(out.contains("portion of 1000 files"), "{out}");
        assert!(render_table1(&doc, "run:y").is_none());
        // One run per cell: Table 1 says it all.
        assert!(render_table2(&doc, "files:x").is_none());
    }

    /// A `1 B create` test of workload `files:x`, `per_portion` files a portion, whose
    /// seconds per portion summarize `secs`.
    fn files_create(per_portion: &str, secs: &[f64]) -> TestResult {
        let mut t = TestResult {
            name: "1 B create".into(),
            family: "files".into(),
            ..Default::default()
        };
        t.params.insert(WORKLOAD_PARAM.into(), "files:x".into());
        t.params.insert("phase".into(), "create".into());
        t.params.insert("size_token".into(), "1".into());
        t.params
            .insert("files_per_portion".into(), per_portion.into());
        t.summary.insert(
            "seconds_per_portion".into(),
            crate::stats::summary::summarize(secs),
        );
        t
    }

    /// NASPT-style traces are ranked by their calls per second, which `iolab trace run`
    /// calls ops/s: the ranking said "IOPS" of opens and stats.
    #[test]
    fn a_trace_s_calls_are_ops_not_iops() {
        let mut doc = matrix_of(vec![cfg("exfat", &[8359.0]), cfg("ntfs", &[6924.0])]);
        for c in &mut doc.configurations {
            for t in &mut c.tests {
                t.family = "trace".into();
            }
        }
        let w = doc.configurations[0].tests[0].params[WORKLOAD_PARAM].clone();
        let out = render_ranking(&doc, &w);
        assert!(out.contains("8,359 ops/s"), "{out}");
        assert!(!out.contains("IOPS"), "{out}");
        // With its MB/s beside, as NASPT gives an application test.
        for c in &mut doc.configurations {
            for t in &mut c.tests {
                let ops = t.summary["iops"].median;
                t.summary.insert(
                    "bw_bytes_per_s".into(),
                    crate::stats::summarize(&[ops * 6000.0]),
                );
            }
        }
        let out = render_ranking(&doc, &w);
        assert!(out.contains("8,359 ops/s · 50.15 MB/s"), "{out}");
        assert!(out.contains("6,924 ops/s · 41.54 MB/s"), "{out}");
    }

    /// Belov's slowdown past N files in one folder: the matrix kept `iolab files`'s scaling
    /// line in the JSON only.
    #[test]
    fn the_slowdown_in_one_directory_is_a_table() {
        use crate::model::files::{DirScaling, FilesTestDetail, ScalingPoint};
        let mk = |label: &str, drop: Option<u64>| {
            let mut t = files_create("2000", &[0.3]);
            let curve = (0..10)
                .map(|i| ScalingPoint {
                    files_before: i * 2000,
                    ..Default::default()
                })
                .collect();
            t.files = Some(FilesTestDetail {
                scaling: Some(DirScaling {
                    scope: "one directory".into(),
                    curve,
                    drop_after_files: drop,
                    slowdown_pct: drop.map(|_| 23.4),
                    message: String::new(),
                }),
                ..Default::default()
            });
            measured(label, vec![t])
        };
        let doc = matrix_of(vec![mk("ntfs", Some(10_000)), mk("ext4", None)]);
        let out = render(&doc, &["files:x".into()], "");
        assert!(out.contains("accumulate in one directory"), "{out}");
        assert!(out.contains("slower by 23 % after 10,000"), "{out}");
        assert!(out.contains("none up to 20,000"), "{out}");
        // Two portions a size cannot show a slowdown: no table of "too few portions".
        let mut doc = doc;
        for c in &mut doc.configurations {
            for t in &mut c.tests {
                if let Some(s) = t.files.as_mut().and_then(|d| d.scaling.as_mut()) {
                    s.curve.truncate(2);
                    s.drop_after_files = None;
                }
            }
        }
        assert!(render_scaling(&doc, "files:x").is_none());
    }

    /// Belov's Table 2: every run in brackets beside the mean, as `iolab files` prints it;
    /// the matrix printed only the means.
    #[test]
    fn table2_gives_every_run_of_a_cell() {
        let secs = [3.299, 3.266, 3.247];
        let mut t = files_create("10000", &secs);
        t.runs = secs
            .iter()
            .enumerate()
            .map(|(i, &s)| RunResult {
                run: i as u32 + 1,
                files: Some(crate::model::files::FilesRunDetail {
                    seconds_per_portion: s,
                    ..Default::default()
                }),
                ..Default::default()
            })
            .collect();
        let doc = matrix_of(vec![measured("ntfs 512B", vec![t])]);
        let out = render_table2(&doc, "files:x").unwrap();
        assert!(out.contains("3.271 (3.299, 3.266, 3.247)"), "{out}");
        assert!(out.contains("Belov's Table 2"), "{out}");
        let all = render(&doc, &["files:x".into()], "");
        let (t1, t2) = (all.find("Table 1").unwrap(), all.find("Table 2").unwrap());
        assert!(t1 < t2, "{all}");
    }
}

//! The report as a list of format-neutral blocks (headings, key/value lists, tables, charts,
//! warnings), built once from the result files and rendered by `html.rs` and `markdown.rs`,
//! so both formats always say the same thing.

use std::collections::BTreeMap;

use crate::model::{ResultDoc, TestResult};
use crate::report::blocks::{Block, TableBlock, summary_table};
use crate::report::load::Loaded;
use crate::report::metrics::{all_tests, config_of, display_name, label_for, test_name};
use crate::report::{age, charts, compare, matrix, saturate, slack, state, sustain, table, trace};
use crate::units::fmt_size_iec;

/// Build the whole report.
pub fn build(inputs: &[Loaded]) -> Vec<Block> {
    let mut out = vec![Block::Heading(1, "iolab report".into())];
    out.push(Block::Para(format!(
        "{} result file{}: {}. A test's row leads with the figure of its command's table, the median of the runs (a peak test's MB/s and IOPS: the best run), then in brackets the mean of the runs ± the half-width of its 95 % confidence interval (Student's t; \"± too wide\" when the interval reaches below zero, which a rate or a time cannot); a files test's table gives the mean, shown as mean ± that half-width, as are comparisons and a matrix's rankings; MB/s = 10^6 bytes/s.",
        inputs.len(),
        if inputs.len() == 1 { "" } else { "s" },
        inputs
            .iter()
            .map(|l| l.file_name())
            .collect::<Vec<_>>()
            .join(", ")
    )));
    comparison_blocks(inputs, &mut out);
    for l in inputs {
        doc_blocks(l, &mut out);
    }
    out
}

/// With several files of the same subcommand: each against the first of them, for the tests
/// they share (as `iolab compare` prints it).
fn comparison_blocks(inputs: &[Loaded], out: &mut Vec<Block>) {
    let mut commands: Vec<&str> = Vec::new();
    for l in inputs {
        if !commands.contains(&l.doc.command.as_str()) {
            commands.push(&l.doc.command);
        }
    }
    for command in commands {
        let group: Vec<Loaded> = inputs
            .iter()
            .filter(|l| l.doc.command == command)
            .cloned()
            .collect();
        if group.len() >= 2 {
            comparison_group(command, &group, out);
        }
    }
}

fn comparison_group(command: &str, inputs: &[Loaded], out: &mut Vec<Block>) {
    let c = compare::compare_lenient(inputs, false);
    if c.pairings.iter().all(|p| p.rows.is_empty()) {
        return;
    }
    out.push(Block::Heading(
        2,
        format!("Comparison of the {command} results"),
    ));
    out.push(Block::KeyValues(
        c.files
            .iter()
            .zip(inputs)
            .map(|(f, l)| {
                // The file system too, as the terminal's legend gives it: a comparison of
                // tmpfs against ext4 did not say so.
                (
                    f.label.clone(),
                    format!("{} {}", l.file_name(), f.describe()),
                )
            })
            .collect(),
    ));
    if !c.warnings.is_empty() {
        out.push(Block::Warnings(warning_pairs(table::warning_list_lines(
            &c.warnings,
        ))));
    }
    for p in c.pairings.iter().filter(|p| p.rows.is_empty()) {
        out.push(Block::Para(format!(
            "{} has no test in common with {} (tests are matched by configuration and name).",
            p.other, p.baseline
        )));
    }
    for p in c.pairings.iter().filter(|p| !p.rows.is_empty()) {
        out.push(Block::Heading(
            3,
            format!("{} against {} (baseline)", p.other, p.baseline),
        ));
        out.push(Block::Table(TableBlock {
            header: compare::table_header(p),
            rows: p.rows.iter().map(compare::table_row).collect(),
            first_numeric: 2,
            numeric_end: Some(5),
        }));
        if !p.warnings.is_empty() {
            out.push(Block::Warnings(warning_pairs(table::warning_list_lines(
                &p.warnings,
            ))));
        }
        for r in p.rows.iter().filter(|r| r.primary) {
            out.push(Block::Para(compare::sentence(p, r)));
        }
        // The terminal's lines: the report did not say which tests one side lacked.
        for line in compare::only_in(p) {
            out.push(Block::Para(line));
        }
    }
    out.push(Block::Para(compare::EXPLANATION.into()));
}

fn doc_blocks(l: &Loaded, out: &mut Vec<Block>) {
    let doc = &l.doc;
    out.push(Block::Heading(
        2,
        format!("{} — {}", doc.command, l.file_name()),
    ));
    if doc.status != "complete" {
        // "This run is failed" read oddly; a file whose status is still "running" was
        // written by an iolab that was killed (or still runs).
        let how = match doc.status.as_str() {
            "failed" => "This run failed".to_string(),
            "interrupted" => "This run was interrupted".to_string(),
            "killed" => "This run was killed before it finished".to_string(),
            "running" => {
                "This run had not finished when its result was last written (iolab was killed, or still runs)"
                    .to_string()
            }
            other => format!("This run ended {other}"),
        };
        out.push(Block::Alert(format!(
            "{how}{}: the results below are partial.",
            doc.error
                .as_deref()
                .map(|e| format!(" ({e})"))
                .unwrap_or_default()
        )));
    }
    out.push(Block::Heading(3, "Environment".into()));
    out.push(Block::KeyValues(environment(doc)));
    let warnings = warnings(doc);
    if !warnings.is_empty() {
        out.push(Block::Heading(3, "Warnings".into()));
        out.push(Block::Warnings(warnings));
    }
    if !doc.configurations.is_empty() {
        matrix::blocks(doc, out);
    } else {
        tests_blocks(&all_tests(doc), out);
    }
    age_blocks(doc, out);
    slack_blocks(doc, out);
    state_blocks(doc, out);
}

/// `iolab age`: what was written, the layout score as it went, the layout after.
fn age_blocks(doc: &ResultDoc, out: &mut Vec<Block>) {
    let Some((head, (header, rows), after, layout)) = age::age_parts(doc) else {
        return;
    };
    out.push(Block::Heading(3, "Aging".into()));
    out.push(Block::Para(format!("{head}.")));
    out.push(Block::Table(TableBlock {
        header,
        rows,
        first_numeric: 0,
        numeric_end: None,
    }));
    for line in after {
        out.push(Block::Para(line));
    }
    out.push(Block::KeyValues(layout));
}

/// `iolab slack`: the scan, one row per allocation unit, the cost model, the
/// recommendations.
fn slack_blocks(doc: &ResultDoc, out: &mut Vec<Block>) {
    let Some((before, (header, rows), after)) = slack::report_parts(doc) else {
        return;
    };
    out.push(Block::Heading(3, "Cluster slack".into()));
    for line in before {
        out.push(Block::Para(line));
    }
    out.push(Block::Table(TableBlock {
        header,
        rows,
        first_numeric: 1,
        numeric_end: Some(9),
    }));
    for line in after {
        out.push(Block::Para(line));
    }
}

/// The drive's state (`report::state`): the steady-state rounds and the temperature.
pub fn state_blocks(doc: &ResultDoc, out: &mut Vec<Block>) {
    if let Some((header, rows, charts)) = state::steady_table(doc) {
        out.push(Block::Heading(3, "Steady state".into()));
        out.push(Block::Para(state::steady_note(doc).into()));
        out.push(Block::Table(TableBlock {
            header,
            rows,
            first_numeric: 4,
            numeric_end: None,
        }));
        for (svg, caption) in charts {
            out.push(Block::Chart { svg, caption });
        }
    }
    if let Some((line, chart)) = state::heat(doc) {
        out.push(Block::Heading(3, "Drive temperature".into()));
        out.push(Block::Para(format!("{line}.")));
        if let Some(svg) = chart {
            out.push(Block::Chart { svg, caption: line });
        }
    }
}

fn environment(doc: &ResultDoc) -> Vec<(String, String)> {
    let e = &doc.environment;
    let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    // A matrix's environment is its work directory (images, mount points), not a file
    // system it measured: those are its configurations. Its table named them as a run's
    // target ("file system: ext4" of a matrix of xfs and btrfs).
    let key = |k: &str| -> String {
        if doc.configurations.is_empty() {
            k.into()
        } else if k == "target" {
            "work directory (not measured)".into()
        } else {
            format!("work directory's {k}")
        }
    };
    let mut kv = vec![
        (
            "tool".into(),
            format!("{} {}", doc.tool.name, doc.tool.version),
        ),
        ("command line".into(), doc.argv.join(" ")),
        (
            "started / finished".into(),
            format!(
                "{} / {}",
                doc.started_at,
                doc.finished_at.as_deref().unwrap_or("-")
            ),
        ),
        ("status".into(), doc.status.clone()),
        ("host".into(), e.hostname.clone()),
        ("OS / kernel".into(), format!("{} / {}", e.os, e.kernel)),
        (
            "CPU".into(),
            format!("{} ({} CPUs)", e.cpu_model, e.cpu_count),
        ),
        ("RAM".into(), fmt_size_iec(e.ram_bytes)),
        (key("target"), e.target_path.clone()),
        (
            key("file system"),
            if e.mount_point.is_empty() {
                // A device measured raw: no file system, no mount (this read " on ").
                e.fs_label().to_string()
            } else {
                format!("{} on {}", e.fs_label(), e.mount_point)
            },
        ),
        (key("mount options"), e.mount_options.clone()),
    ];
    // How full and whether aged (the report of a run on an aged file system did not say).
    if let Some(st) = &e.fs_state {
        kv.push((key("file system state"), st.describe()));
    }
    let mut device = opt(&e.block_device);
    if let Some(p) = &e.parent_device {
        device.push_str(&format!(" (on {p})"));
    }
    if let Some(m) = &e.device_model {
        device.push_str(&format!(", {m}"));
    }
    if let Some(r) = e.rotational {
        device.push_str(if r {
            ", rotational"
        } else {
            ", non-rotational"
        });
    }
    if let (Some(lb), Some(pb)) = (e.logical_block_size, e.physical_block_size) {
        device.push_str(&format!(", sectors {lb}/{pb} B"));
    }
    kv.push((key("device"), device));
    if let Some(b) = &e.loop_backing_file {
        kv.push((key("loop backing file"), b.clone()));
    }
    if let Some(u) = &e.io_uring {
        kv.push(("io_uring".into(), u.clone()));
    }
    kv
}

/// Warnings as (code, text) pairs, the text led by what a line is about: the lines the
/// terminal prints (a code's many findings folded into one line), so the report lists what
/// the terminal said; the JSON keeps every warning.
fn warning_pairs(lines: Vec<table::WarningLine>) -> Vec<(String, String)> {
    lines
        .into_iter()
        .map(|l| (l.text(), l.code))
        .map(|(text, code)| (code, text))
        .collect()
}

/// Every warning of a document: its own, failed tests, skipped/failed configurations.
pub fn warnings(doc: &ResultDoc) -> Vec<(String, String)> {
    let mut w = warning_pairs(table::warning_lines(doc));
    for t in all_tests(doc) {
        if let (Some(e), Some(ended)) = (&t.error, t.ended_early()) {
            w.push((
                format!("test-{ended}"),
                format!(
                    "{}: {e}",
                    display_name(config_of(doc, t).as_deref(), &test_name(doc, t))
                ),
            ));
        }
    }
    for c in &doc.configurations {
        if c.status != "ok" {
            let text = format!(
                "{} {}: {}",
                c.label,
                c.status,
                c.reason.as_deref().unwrap_or("no reason given")
            );
            let code = format!("config-{}", c.status);
            if !w
                .iter()
                .any(|(_, t)| t.contains(&c.label) && t.contains(&c.status))
            {
                w.push((code, text));
            }
        }
    }
    // The run's error, unless a test's entry above already says it (a failed verification
    // was listed twice, as `test-failed` and as `error`).
    if let Some(e) = &doc.error
        && !w
            .iter()
            .any(|(code, text)| code.starts_with("test-") && text.ends_with(e.as_str()))
    {
        w.push(("error".into(), e.clone()));
    }
    w
}

/// Tables and charts for a set of tests (one run, or one matrix configuration).
pub fn tests_blocks(tests: &[&TestResult], out: &mut Vec<Block>) {
    let mut families: BTreeMap<&str, Vec<&TestResult>> = BTreeMap::new();
    for t in tests {
        families.entry(t.family.as_str()).or_default().push(t);
    }
    for (family, ts) in families {
        if family == "age" {
            // No runs or rates: `age_blocks` shows what aging did.
            continue;
        }
        let named: Vec<(String, &TestResult)> = ts
            .iter()
            .map(|t| (display_name(t.config.as_deref(), &t.name), *t))
            .collect();
        out.push(Block::Heading(3, format!("{family} tests")));
        out.push(Block::Table(summary_table(&named)));
        let rates: Vec<&str> = ["bw_bytes_per_s", "iops", "files_per_s"]
            .into_iter()
            .filter(|m| ts.iter().any(|t| t.summary.contains_key(*m)))
            .collect();
        for m in rates {
            let what = label_for(family, m);
            if let Some(svg) = charts::metric_bars(&format!("{family}: {what}"), m, &named) {
                out.push(Block::Chart {
                    svg,
                    caption: format!("{what} per test, mean with 95 % CI error bars"),
                });
            }
        }
        if let Some(svg) = charts::latency_curves(&format!("{family}: latency percentiles"), &named)
        {
            out.push(Block::Chart {
                svg,
                caption: "Latency by percentile, submit to completion (fio's lat; all runs merged when histograms are present, else the median run)".into(),
            });
        }
        for (name, t) in &named {
            if t.sustain.is_some() {
                sustain_blocks(name, t, out);
                continue;
            }
            if let Some((header, rows)) = trace::op_table(t) {
                out.push(Block::Heading(
                    4,
                    format!("{name}: operations (the median run by MB/s)"),
                ));
                out.push(Block::Table(TableBlock {
                    header,
                    rows,
                    first_numeric: 1,
                    numeric_end: None,
                }));
            }
            for (title, s) in trace::test_summaries(t) {
                out.push(Block::Heading(4, format!("{name}: {title}")));
                out.push(Block::KeyValues(trace::key_figures(s)));
                for (svg, caption) in trace::charts(name, s) {
                    out.push(Block::Chart { svg, caption });
                }
            }
            if let Some(svg) = charts::interval_series(&format!("{name}: IOPS over time"), t) {
                out.push(Block::Chart {
                    svg,
                    caption: format!(
                        "{name}: IOPS per interval, one line per run (an interval ending after the measured time, the drain of the last I/Os, is left out)"
                    ),
                });
            }
            saturation_blocks(name, t, out);
        }
    }
}

/// One `iolab sustain` pass: what it found, its phases, the bandwidth chart with the cliffs.
fn sustain_blocks(name: &str, t: &TestResult, out: &mut Vec<Block>) {
    let Some(d) = &t.sustain else { return };
    out.push(Block::Heading(4, format!("{name}: sustained write")));
    for line in sustain::findings(name, d, t.ended_early() == Some("interrupted")) {
        out.push(Block::Para(line));
    }
    let (header, rows) = sustain::phase_table(d);
    // A pass shorter than one interval has no phases: its finding says so, and a table of
    // headers only would read as a broken report.
    if !rows.is_empty() {
        out.push(Block::Table(TableBlock {
            header,
            rows,
            first_numeric: 0,
            numeric_end: None,
        }));
        out.push(Block::Para(sustain::PHASE_LEGEND.into()));
    }
    if let Some(svg) = sustain::bandwidth_chart(&format!("{name}: MB/s over time"), t) {
        out.push(Block::Chart {
            svg,
            caption: format!(
                "{name}: write MB/s per {} ms interval; flat lines: the phases' means; dashed verticals: the cliffs (bytes written before each)",
                d.interval_ms
            ),
        });
    }
}

fn saturation_blocks(name: &str, t: &TestResult, out: &mut Vec<Block>) {
    let Some(curve) = t.curve.as_ref().filter(|c| !c.is_empty()) else {
        return;
    };
    out.push(Block::Heading(4, format!("{name}: saturation")));
    if let Some(a) = &t.answer {
        // The terminal's words (`saturate::answer_words`, `saturate::facts`): the report said
        // "No depth held the mean latency limit of 10 ms: even the smallest depth broke it",
        // "at queue depth" where the terminal said "at depth", "(limit 10 ms)" for "≤ 10 ms",
        // and "IOPS stopped rising after depth 8 (the knee)" for "knee at depth 8".
        let words = saturate::answer_words(a);
        if a.detail.found {
            out.push(Block::Para(format!("Answer: {words}.")));
        } else {
            out.push(Block::Alert(format!(
                "{}.",
                crate::units::capitalize(&words)
            )));
        }
        out.push(Block::Para(format!(
            "{}.",
            crate::units::capitalize(&saturate::facts(a, curve))
        )));
    }
    if let Some(svg) = charts::saturation(&format!("{name}: IOPS vs latency"), t) {
        out.push(Block::Chart {
            svg,
            caption: "Saturation curve: latency against IOPS as the queue depth rises, with the limit line, the answer and the knee".into(),
        });
    }
    // The terminal's table (`saturate::curve_table`).
    let (header, rows) = saturate::curve_cells(curve, saturate::answer_depth(t));
    let marked = rows.iter().any(|r| r[0].ends_with(" *"));
    out.push(Block::Table(TableBlock {
        header,
        rows,
        first_numeric: 1,
        numeric_end: None,
    }));
    if saturate::measured_again(curve) {
        out.push(Block::Para(format!(
            "In the limit column, {}.",
            saturate::AGAIN_NOTE
        )));
    }
    if marked {
        // Not at the start of the line, where Markdown takes `* ` for a list item.
        out.push(Block::Para(format!(
            "In the depth column, {}.",
            saturate::ANSWER_MARK
        )));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Environment;

    /// The blocks of a saturate sweep `randread`.
    fn sweep_blocks(t: &TestResult) -> Vec<Block> {
        let mut out = Vec::new();
        saturation_blocks("randread", t, &mut out);
        out
    }

    /// The report of a run on an aged file system says how full and aged it was (its
    /// environment table gave the file system type only).
    #[test]
    fn the_environment_gives_the_file_system_state() {
        let mut doc = ResultDoc::new("files", Vec::new(), Environment::default());
        assert!(
            !environment(&doc)
                .iter()
                .any(|(k, _)| k == "file system state")
        );
        doc.environment.fs_state = Some(crate::model::FsState {
            size_bytes: 1000,
            used_bytes: 801,
            aged_trees: vec!["/mnt/t/iolab-aged-3".into()],
        });
        let kv = environment(&doc);
        let row = kv.iter().find(|(k, _)| k == "file system state");
        assert_eq!(
            row.map(|(_, v)| v.as_str()),
            Some("80.1 % full, aged (iolab-aged-3)")
        );
    }

    /// A matrix's environment is its work directory, not what it measured: the keys say so
    /// (the table said "file system: ext4" of a matrix of xfs and btrfs).
    #[test]
    fn a_matrixs_environment_names_its_work_directory() {
        let mut doc = ResultDoc::new("matrix", Vec::new(), Environment::default());
        doc.configurations.push(Default::default());
        doc.environment.fs_state = Some(Default::default());
        let keys: Vec<String> = environment(&doc).into_iter().map(|(k, _)| k).collect();
        for k in [
            "work directory (not measured)",
            "work directory's file system",
            "work directory's mount options",
            "work directory's file system state",
            "work directory's device",
        ] {
            assert!(keys.iter().any(|x| x == k), "{k}: {keys:?}");
        }
        assert!(!keys.iter().any(|x| x == "file system"), "{keys:?}");
    }

    /// A sweep's step at `depth` (one job) with `iops`.
    fn step(depth: u32, iops: f64) -> crate::model::saturate::CurvePoint {
        let mut p = crate::model::saturate::CurvePoint::default();
        p.at.iodepth = depth;
        p.at.jobs = 1;
        p.at.iops = iops;
        p
    }

    /// The curve table of a sweep's blocks.
    fn curve_of(out: &[Block]) -> TableBlock {
        out.iter()
            .find_map(|b| match b {
                Block::Table(t) => Some(t.clone()),
                _ => None,
            })
            .expect("the curve")
    }

    /// The "Answer: …" paragraph of a sweep's blocks.
    fn answer_of(out: &[Block]) -> String {
        out.iter()
            .find_map(|b| match b {
                Block::Para(p) if p.starts_with("Answer:") => Some(p.clone()),
                _ => None,
            })
            .expect("an answer")
    }

    /// A two-rank sweep's answer read "1,990 IOPS at queue depth 10 with mean latency 9.76
    /// ms" in the report, where the terminal said "depth 10 on each of 2 ranks (20 in flight
    /// in total)": 10 in flight cannot give 1,990 IOPS at 9.76 ms.
    #[test]
    fn a_distributed_answer_says_its_depth_is_per_rank() {
        use crate::model::saturate::{Answer, AnswerDetail};
        let mut point = step(10, 1990.0);
        point.detail.total_iodepth = Some(20);
        let t = TestResult {
            name: "randread".into(),
            curve: Some(vec![point]),
            answer: Some(Answer {
                iops: 1990.0,
                iodepth: 10,
                statistic: "mean".into(),
                latency_ns: Some(9.76e6),
                limit_ns: 10e6,
                detail: AnswerDetail {
                    jobs: 1,
                    total_iodepth: 20,
                    ranks: Some(2),
                    found: true,
                    limit_crossed: true,
                    ..Default::default()
                },
                ..Default::default()
            }),
            ..Default::default()
        };
        let out = sweep_blocks(&t);
        let para = answer_of(&out);
        assert!(
            para.starts_with(
                "Answer: 1,990 IOPS at queue depth 10 on each of 2 ranks (20 in flight in total) with mean latency"
            ),
            "{para}"
        );
        let table = curve_of(&out);
        assert_eq!(table.header[0], "depth (total)");
        assert_eq!(table.rows[0][0], "10 (20) *");
    }

    /// The answer's latency read `18.0 µs` (limit `10.00 ms`) in the report where the
    /// terminal's answer line said `18 µs ≤ 10 ms`; the curve's headers and limit column
    /// said `mean lat`, `avg QD`, `in limit` `yes` where the terminal says `mean latency`,
    /// `avg QD`, `limit` `ok`.
    #[test]
    fn a_sweep_s_answer_and_curve_read_as_in_the_terminal() {
        use crate::model::saturate::{Answer, AnswerDetail};
        let mut point = step(4, 52_000.0);
        point.at.lat_mean_ns = 18_000.0;
        point.within_limit = true;
        let answer = Answer {
            iops: 52_000.0,
            iodepth: 4,
            statistic: "mean".into(),
            latency_ns: Some(18_000.0),
            limit_ns: 10e6,
            detail: AnswerDetail {
                jobs: 1,
                total_iodepth: 4,
                found: true,
                limit_crossed: true,
                ..Default::default()
            },
            ..Default::default()
        };
        let t = TestResult {
            name: "randread".into(),
            curve: Some(vec![point]),
            answer: Some(answer.clone()),
            ..Default::default()
        };
        let out = sweep_blocks(&t);
        let para = answer_of(&out);
        let line = saturate::answer_line("randread", &answer);
        assert!(line.contains("latency 18 µs ≤ 10 ms"), "{line}");
        assert_eq!(
            format!("randread: {}", &para["Answer: ".len()..]),
            format!("{line}.")
        );
        let table = curve_of(&out);
        let terminal = saturate::curve_table(&t);
        assert!(terminal.contains(" ok "), "{terminal}");
        for h in ["mean latency", "avg QD", "limit"] {
            assert!(
                table.header.iter().any(|x| x == h),
                "{h}: {:?}",
                table.header
            );
            assert!(terminal.contains(h), "{h}: {terminal}");
        }
        assert_eq!(table.rows[0].last().map(String::as_str), Some("ok"));
        // The chart's limit line too (`limit mean ≤ 10.00 ms`).
        let chart = out
            .iter()
            .find_map(|b| match b {
                Block::Chart { svg, .. } => Some(svg.clone()),
                _ => None,
            })
            .expect("the chart");
        assert!(chart.contains("limit mean ≤ 10 ms"), "{chart}");
    }

    /// The report and the terminal gave a sweep's findings in different words: "at queue
    /// depth 7" / "at depth 7", "IOPS stopped rising after depth 8 (the knee)" / "knee at
    /// depth 8", "IOPS fell while depth rose (thrashing)" / "THRASHED (IOPS fell two steps
    /// in a row)", and the curve's depth cell `7×1` / `7 *`. Now they read alike, and the
    /// report says what the mark means under the table.
    #[test]
    fn a_sweep_s_findings_and_depth_cells_read_as_in_the_terminal() {
        use crate::model::saturate::{Answer, AnswerDetail};
        let answer = Answer {
            iops: 700.0,
            iodepth: 7,
            statistic: "mean".into(),
            latency_ns: Some(25_000.0),
            limit_ns: 30_000.0,
            knee_iodepth: Some(8),
            thrashed: true,
            detail: AnswerDetail {
                jobs: 1,
                total_iodepth: 7,
                found: true,
                limit_crossed: true,
                first_bad_iodepth: Some(8),
                peak_iops: 900.0,
                peak_iodepth: 16,
                ..Default::default()
            },
        };
        let t = TestResult {
            name: "randread".into(),
            curve: Some(vec![step(7, 700.0), step(8, 900.0)]),
            answer: Some(answer.clone()),
            ..Default::default()
        };
        let out = sweep_blocks(&t);
        let paras: Vec<&str> = out
            .iter()
            .filter_map(|b| match b {
                Block::Para(p) => Some(p.as_str()),
                _ => None,
            })
            .collect();
        assert!(
            paras.contains(&"Answer: 700 IOPS at queue depth 7 with mean latency 25 µs ≤ 30 µs."),
            "{paras:?}"
        );
        let facts = "Knee at depth 8 (the first depth with 90 % of the peak IOPS); peak 900 IOPS at depth 16; limit broken from depth 8; thrashing (IOPS fell two steps in a row as the depth rose).";
        assert!(paras.contains(&facts), "{paras:?}");
        assert_eq!(
            format!("randread: {}", &paras[0]["Answer: ".len()..]),
            format!("{}.", saturate::answer_line("randread", &answer))
        );
        assert_eq!(
            facts.to_lowercase(),
            format!(
                "{}.",
                saturate::facts(&answer, t.curve.as_deref().unwrap_or_default())
            )
            .to_lowercase()
        );
        let terminal = saturate::curve_table(&t);
        let table = curve_of(&out);
        assert_eq!(table.header[0], "depth");
        let cells: Vec<&str> = table.rows.iter().map(|r| r[0].as_str()).collect();
        assert_eq!(cells, ["7 *", "8"]);
        assert!(terminal.contains("│   7 * ┆"), "{terminal}");
        assert!(
            paras.contains(&"In the depth column, * = answer."),
            "{paras:?}"
        );
    }

    /// The terminal folded a code's many warnings into one line naming the tests; the HTML
    /// and Markdown reports listed each (eight `no-spread` items saying one thing). Every
    /// view gives the terminal's lines; the JSON keeps every warning.
    #[test]
    fn the_reports_fold_warnings_as_the_terminal_does() {
        use crate::model::{Warning, WarningCode};
        let mut doc = ResultDoc::new("run", Vec::new(), Environment::default());
        for name in ["A", "B", "C", "D", "E"] {
            doc.tests.push(crate::model::TestResult {
                name: name.into(),
                family: "block".into(),
                ..Default::default()
            });
            doc.warn(Warning {
                code: WarningCode::NoSpread,
                test: Some(name.into()),
                message: "only one run: no spread; use --repeat 3".into(),
            });
        }
        let w = warnings(&doc);
        assert_eq!(
            w,
            [(
                "no-spread".to_string(),
                "5 tests (A, B, C, D, E): only one run: no spread; use --repeat 3".to_string()
            )]
        );
        let terminal = crate::report::table::render_warnings(&doc);
        assert_eq!(terminal, format!("warning [no-spread] {}\n", w[0].1));
        let loaded = crate::report::load::Loaded {
            path: "r.json".into(),
            doc,
        };
        let blocks = build(std::slice::from_ref(&loaded));
        let md = crate::report::markdown::render(&blocks);
        assert_eq!(md.matches("`no-spread`").count(), 1, "{md}");
        assert!(
            md.contains("- `no-spread` 5 tests (A, B, C, D, E): only one run"),
            "{md}"
        );
        let html = crate::report::html::render(&blocks);
        assert_eq!(html.matches("<code>no-spread</code>").count(), 1);
        assert_eq!(loaded.doc.warnings.len(), 5, "the JSON keeps each");
    }

    /// A failed run's error was listed twice (`test-failed` and `error`), and its alert
    /// read "This run is failed".
    #[test]
    fn a_failed_run_says_its_error_once() {
        let mut doc = ResultDoc::new("run", Vec::new(), Environment::default());
        let e = "data verification failed at offset 0";
        doc.status = "failed".into();
        doc.error = Some(e.into());
        doc.tests.push(crate::model::TestResult {
            name: "SEQ1M Q1T1 read".into(),
            family: "block".into(),
            error: Some(e.into()),
            ..Default::default()
        });
        let w = warnings(&doc);
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].0, "test-failed");
        let loaded = crate::report::load::Loaded {
            path: "r.json".into(),
            doc,
        };
        let mut out = Vec::new();
        doc_blocks(&loaded, &mut out);
        let alert = out
            .iter()
            .find_map(|b| match b {
                Block::Alert(a) => Some(a.clone()),
                _ => None,
            })
            .unwrap();
        assert!(alert.starts_with("This run failed ("), "{alert}");
    }

    /// A sweep in which no depth held the limit (here no I/O completed at all): under the
    /// alert the report said "Answer: 0 IOPS at queue depth 0 with mean latency 0 ns", and
    /// the curve's latencies read "0 ns".
    #[test]
    fn a_sweep_without_an_answer_gives_none() {
        use crate::model::saturate::{Answer, AnswerDetail, CurvePoint, StepFigures};
        let t = crate::model::TestResult {
            name: "randread".into(),
            family: "saturate".into(),
            curve: Some(vec![CurvePoint {
                at: StepFigures {
                    iodepth: 1,
                    jobs: 1,
                    ..Default::default()
                },
                ..Default::default()
            }]),
            answer: Some(Answer {
                statistic: "mean".into(),
                limit_ns: 10e6,
                detail: AnswerDetail {
                    found: false,
                    limit_crossed: true,
                    first_bad_iodepth: Some(1),
                    ..Default::default()
                },
                ..Default::default()
            }),
            ..Default::default()
        };
        let out = sweep_blocks(&t);
        let text = format!("{out:?}");
        assert!(
            text.contains("No depth holds mean latency ≤ 10 ms (it broke the limit from depth 1)."),
            "{text}"
        );
        assert!(!text.contains("Answer:"), "{text}");
        assert!(!text.contains("0 ns"), "{text}");
    }

    /// The terminal says what a sustain phase's spread is under its table ("standard
    /// deviation of the per-interval speed"); the report's table said nothing.
    #[test]
    fn a_sustain_phase_table_says_what_its_spread_is() {
        use crate::model::sustain::{SustainDetail, SustainPhase};
        let t = crate::model::TestResult {
            name: "first pass".into(),
            family: "sustain".into(),
            sustain: Some(SustainDetail {
                bytes_written: 64 << 20,
                interval_ms: 50,
                phases: vec![SustainPhase {
                    end_ms: 1000,
                    bytes: 64 << 20,
                    mean_bw_bytes_per_s: 64e6,
                    stddev_bw_bytes_per_s: 1e6,
                    ..Default::default()
                }],
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut out = Vec::new();
        sustain_blocks("first pass", &t, &mut out);
        let table = out
            .iter()
            .position(|b| matches!(b, Block::Table(_)))
            .expect("the phase table");
        assert!(
            matches!(&out[table + 1], Block::Para(p) if p.contains("spread = standard deviation of the per-interval speed")),
            "{out:?}"
        );
    }

    /// A sustain pass shorter than one interval: the report showed the phase table's header
    /// with no rows under it (the terminal already left it out).
    #[test]
    fn a_sustain_pass_without_phases_has_no_empty_table() {
        let t = crate::model::TestResult {
            name: "first pass".into(),
            family: "sustain".into(),
            sustain: Some(crate::model::sustain::SustainDetail {
                bytes_written: 32 << 20,
                interval_ms: 50,
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut out = Vec::new();
        sustain_blocks("first pass", &t, &mut out);
        assert!(
            !out.iter().any(|b| matches!(b, Block::Table(_))),
            "an empty phase table"
        );
        assert!(
            out.iter()
                .any(|b| matches!(b, Block::Para(p) if p.contains("less than one interval"))),
            "the finding says why"
        );
    }

    /// A result of a raw block device: the environment read `file system |  on  |`.
    #[test]
    fn a_raw_device_s_file_system_row() {
        let env = Environment {
            target_path: "/dev/loop3".into(),
            block_device: Some("loop3".into()),
            ..Default::default()
        };
        let rows = environment(&ResultDoc::new("run", Vec::new(), env));
        let fs = rows.iter().find(|(k, _)| k == "file system").unwrap();
        assert_eq!(fs.1, "block device");
    }
}

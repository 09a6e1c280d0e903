//! What `iolab saturate` prints (and a distributed one's rank 0): the plan with its time estimate (stderr, up front), then
//! per sweep the answer line, the knee, thrashing, and the curve table.

use comfy_table::{Cell, ContentArrangement};

use crate::model::saturate::{Answer, CurvePoint, LatTriple};
use crate::model::{ResultDoc, TestResult};
use crate::report::charts::by_depth;
use crate::report::metrics::{MEAN_LATENCY, fmt_value};
use crate::report::table::{new_table, right};
use crate::runner::sweep::Timing;
use crate::runner::target::TargetKind;
use crate::units::{fmt_ns, fmt_ns_short, fmt_secs, fmt_size_iec, fmt_thousands};
use crate::workload::saturate::config::SaturateConfig;

/// The notes and the plan with its estimated time, on stderr before anything runs (the
/// notes only with `--quiet`: the plan is a forecast for whoever watches).
pub fn show_plan(cfg: &SaturateConfig, quiet: bool) {
    for n in &cfg.notes {
        crate::eline!("iolab: {n}");
    }
    if !quiet {
        eprint!("{}", plan(cfg, crate::runner::sweep::estimate_seconds(cfg)));
    }
}

/// After a test size: a distributed saturate's sizes are each rank's own test file's.
fn per_rank(cfg: &SaturateConfig) -> &'static str {
    if cfg.ranks > 1 { " per rank" } else { "" }
}

/// The plan and the estimated time, before anything runs.
pub fn plan(cfg: &SaturateConfig, est: [f64; 3]) -> String {
    let mut out = format!(
        "iolab saturate: {} latency ≤ {} ({} over streams), {} blocks, depth up to {}, steps of {} + {} ramp\n",
        cfg.statistic.name(),
        // The answer's form (`answer_line`): it said `10.00 ms` above `≤ 10 ms`.
        fmt_ns_short(cfg.limit_ns),
        cfg.aggregate.name(),
        fmt_size_iec(cfg.bs),
        cfg.max_depth,
        fmt_secs(cfg.step.as_secs_f64()),
        fmt_secs(cfg.ramp.as_secs_f64()),
    );
    for t in &cfg.targets {
        let what = match t.kind {
            TargetKind::BlockDevice => "block device",
            TargetKind::Directory => "test file in a directory",
            TargetKind::RegularFile => "existing file",
        };
        let caches = if t.caches.is_empty() {
            "no cache detected".to_string()
        } else {
            t.caches
                .iter()
                .map(|c| {
                    format!(
                        "{} {}{}",
                        c.what,
                        if c.assumed { "~" } else { "" },
                        fmt_size_iec(c.bytes)
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.push_str(&format!(
            "  target {} ({what}): {} tested{}, {}, {}; {caches}\n",
            crate::os::text::terminal(&t.path.display().to_string()),
            fmt_size_iec(t.size),
            per_rank(cfg),
            if t.direct { "O_DIRECT" } else { "BUFFERED" },
            if t.may_write {
                "prefilled with random data first"
            } else {
                "read-only, not prefilled"
            },
        ));
    }
    if cfg.ranks > 1 {
        out.push_str(&format!(
            "  distributed: {} ranks, each on its own test file (subdirectory iolab-rank-N of the target); every step starts on all ranks together, IOPS add up over the common window and the limit applies to the merged latency of all ranks\n",
            cfg.ranks
        ));
    }
    let names: Vec<String> = cfg.sweeps.iter().map(|s| s.name(cfg.mix)).collect();
    out.push_str(&format!("  sweeps: {}\n", names.join(", ")));
    out.push_str(&format!(
        "  estimated time: {} if the limit holds up to depth {} (at least {}, at most {} when it is crossed and bisected){}\n",
        fmt_secs(est[1]),
        cfg.max_depth,
        fmt_secs(est[0]),
        fmt_secs(est[2]),
        match (
            cfg.targets.iter().any(|t| t.may_write),
            cfg.precondition && cfg.writes(),
        ) {
            (true, true) => ", plus the prefill and one preconditioning pass",
            (true, false) => ", plus the prefill",
            // A read-only target is not prefilled (the header's line above says so).
            (false, _) => "",
        }
    ));
    if let Some(s) = &cfg.steady {
        out.push_str(&format!(
            "  steady state ({}): before each sweep, steps at depth {} until a window of {} is steady, at most {} per sweep\n",
            s.label,
            cfg.steady_depth,
            s.window,
            fmt_secs(s.max.as_secs_f64())
        ));
    }
    out
}

/// The answer's depth as the terminal and the reports say it: `queue depth 12`, `queue
/// depth 12 x 4 jobs`, `queue depth 12 per target (24 in flight in total)`, `queue depth
/// 10 on each of 2 ranks (20 in flight in total)`. The terminal said `at depth 12`, the
/// reports `at queue depth 12`.
pub fn depth_phrase(a: &Answer) -> String {
    let mut depth = if a.detail.jobs > 1 {
        format!("queue depth {} x {} jobs", a.iodepth, a.detail.jobs)
    } else {
        format!("queue depth {}", a.iodepth)
    };
    let per_job = a.iodepth * a.detail.jobs.max(1);
    if let Some(ranks) = a.detail.ranks.filter(|&r| r > 1) {
        depth.push_str(&format!(
            " on each of {ranks} ranks ({} in flight in total)",
            a.detail.total_iodepth
        ));
    } else if a.detail.total_iodepth > per_job {
        depth.push_str(&format!(
            " per target ({} in flight in total)",
            a.detail.total_iodepth
        ));
    }
    depth
}

/// `randread: 41,200 IOPS at queue depth 12 with mean latency 9.6 ms ≤ 10 ms`.
pub fn answer_line(name: &str, a: &Answer) -> String {
    format!("{name}: {}", answer_words(a))
}

/// The answer without the sweep's name, the terminal's answer line and the reports'
/// "Answer: …" alike (the reports said "(limit 10 ms)" where the terminal said "≤ 10 ms",
/// and "No depth held the mean latency limit of 10 ms: even the smallest depth broke it"
/// where it said "no depth holds mean latency ≤ 10 ms (it broke the limit from depth 1)").
pub fn answer_words(a: &Answer) -> String {
    let depth = depth_phrase(a);
    if !a.detail.found {
        return format!(
            "no depth holds {} latency ≤ {} (it broke the limit from depth {}){}",
            a.statistic,
            fmt_ns_short(a.limit_ns),
            a.detail.first_bad_iodepth.unwrap_or(1),
            uncertain(a)
        );
    }
    let mut s = format!(
        "{} IOPS at {depth} with {} latency {} ≤ {}",
        fmt_thousands(a.iops),
        a.statistic,
        a.latency_ns.map_or_else(|| "-".into(), fmt_ns_short),
        fmt_ns_short(a.limit_ns)
    );
    if !a.detail.limit_crossed {
        s.push_str(" (limit never crossed up to --max-depth: a lower bound)");
    }
    s.push_str(&uncertain(a));
    s
}

/// The answer's doubt when a step that decided it was judged on latency measured while a
/// job thread waited for a CPU (both times the depth was measured): ` (uncertain: …)`.
fn uncertain(a: &Answer) -> String {
    let d = &a.detail.contended_iodepths;
    if d.is_empty() {
        return String::new();
    }
    let depths: Vec<String> = d.iter().map(u32::to_string).collect();
    format!(
        " (uncertain: a job thread waited for a CPU both times {} {} measured, so the latency judged there may be the machine's rather than the device's)",
        if d.len() == 1 { "depth" } else { "depths" },
        depths.join(" and ") + if d.len() == 1 { " was" } else { " were" }
    )
}

/// What the sweep saw besides the answer, the terminal's second line and the reports'
/// paragraph under the answer alike: `knee at depth 8 (the first depth with 90 % of the peak IOPS);
/// peak 41,900 IOPS at depth 16; limit broken from depth 13; no thrashing`. The reports
/// said "IOPS stopped rising after depth 8 (the knee)" (they may rise by a tenth yet) and
/// "IOPS fell while depth rose (thrashing)" where the terminal said "THRASHED (IOPS fell
/// two steps in a row)", and gave neither the peak nor where the limit broke.
///
/// `curve` is the sweep's steps: without a knee, whether IOPS were still rising at the
/// deepest step or had fallen there (it said "no knee (IOPS still rising)" of a sweep whose
/// last step was slower than the one before).
pub fn facts(a: &Answer, curve: &[CurvePoint]) -> String {
    let mut v = Vec::new();
    let share = crate::workload::saturate::KNEE_SHARE * 100.0;
    if a.detail.peak_iops > 0.0 {
        let deepest = curve.iter().max_by_key(|p| p.at.iodepth);
        match (a.knee_iodepth, deepest) {
            (Some(k), _) => v.push(format!(
                "knee at depth {k} (the first depth with {share:.0} % of the peak IOPS)"
            )),
            // The knee is placed only where a step twice as deep was measured; the peak
            // came before the deepest step, which was slower: IOPS were not still rising.
            (None, Some(last))
                if last.at.iodepth > a.detail.peak_iodepth && last.at.iops < a.detail.peak_iops =>
            {
                v.push(format!(
                    "no knee placed (IOPS fell after the peak, to {} at depth {}, the deepest step, but no step was twice as deep as the first with {share:.0} % of the peak)",
                    fmt_thousands(last.at.iops),
                    last.at.iodepth
                ))
            }
            (None, _) => v.push("no knee (IOPS still rising)".into()),
        }
        v.push(format!(
            "peak {} IOPS at depth {}",
            fmt_thousands(a.detail.peak_iops),
            a.detail.peak_iodepth
        ));
    } else {
        // It said "no knee (IOPS still rising); peak 0 IOPS at depth 2".
        v.push("no I/O completed at any depth (every request took longer than a step)".into());
    }
    if let Some(b) = a.detail.first_bad_iodepth {
        v.push(format!("limit broken from depth {b}"));
    }
    v.push(if a.thrashed {
        "thrashing (IOPS fell two steps in a row as the depth rose)".into()
    } else {
        "no thrashing".into()
    });
    v.join("; ")
}

/// A latency cell: `all / worst` where several streams ran (reads and writes, targets).
pub fn lat_cell(p: &CurvePoint, f: fn(&LatTriple) -> f64) -> String {
    if !p.at.completed_any() {
        // No I/O completed in the step: no latency to show (it read "0 ns").
        return "-".into();
    }
    match (
        &p.detail.lat_over_streams_mean,
        &p.detail.lat_over_streams_max,
    ) {
        // A stream that completed nothing is the worst, with no latency to show (the
        // worst of the others stood there as if it were the worst).
        (Some(m), Some(_)) if p.detail.streams.iter().any(|s| !s.at.completed_any()) => {
            format!("{} / -", fmt_ns(f(m)))
        }
        (Some(m), Some(x)) => format!("{} / {}", fmt_ns(f(m)), fmt_ns(f(x))),
        _ => fmt_ns(f(&LatTriple {
            mean_ns: p.at.lat_mean_ns,
            p99_ns: p.at.lat_p99_ns,
            p999_ns: p.at.lat_p999_ns,
        })),
    }
}

/// The achieved queue depth, `-` when no I/O completed (Little's law has nothing to count).
pub fn queue_cell(at: &crate::model::saturate::StepFigures) -> String {
    if at.completed_any() {
        format!("{:.1}", at.avg_queue_depth)
    } else {
        "-".into()
    }
}

/// What the mark on the answer's row of a curve means, where the curve is shown (the
/// terminal's method line, under the reports' table).
pub const ANSWER_MARK: &str = "* = answer";

/// The depth of the answer's row, when some depth held the limit.
pub fn answer_depth(t: &TestResult) -> Option<u32> {
    t.answer
        .as_ref()
        .filter(|a| a.detail.found)
        .map(|a| a.iodepth)
}

/// The curve's first column's header, terminal and reports alike: `depth`, or `depth
/// (total)` for a distributed sweep (each rank's depth, and all ranks' I/Os in flight).
pub fn depth_header(curve: &[CurvePoint]) -> &'static str {
    if curve.iter().any(|p| p.detail.total_iodepth.is_some()) {
        "depth (total)"
    } else {
        "depth"
    }
}

/// A curve's depth cell, terminal and reports alike: `8`, `10 (20)` in a distributed
/// sweep, ` *` after the answer's ([`ANSWER_MARK`]). The reports said `8×1` under
/// `QD×jobs` (the jobs are in the sweep's name) and marked no row.
pub fn depth_cell(p: &CurvePoint, answer_depth: Option<u32>) -> String {
    let mark = if Some(p.at.iodepth) == answer_depth {
        " *"
    } else {
        ""
    };
    match p.detail.total_iodepth {
        Some(t) => format!("{} ({t}){mark}", p.at.iodepth),
        None => format!("{}{mark}", p.at.iodepth),
    }
}

/// A curve's limit cell, terminal and reports alike: `ok` or `over`, `ok (again)` at a
/// depth measured again because a job thread waited for a CPU in its first measurement,
/// `ok?` when it waited in the second too ([`AGAIN_NOTE`]).
pub fn limit_cell(p: &CurvePoint) -> String {
    let verdict = if p.within_limit { "ok" } else { "over" };
    match (p.detail.cpu_contended, p.detail.set_aside_latency_ns) {
        (true, _) => format!("{verdict}?"),
        (false, Some(_)) => format!("{verdict} (again)"),
        (false, None) => verdict.into(),
    }
}

/// What the limit cell's marks mean, under a curve that has one.
pub const AGAIN_NOTE: &str = "(again) = a job thread waited for a CPU while the depth was first measured: that measurement was set aside and the depth measured again; ? = it waited in the second measurement too, and the limit was judged on that latency nonetheless";

/// Whether a curve has a limit cell [`AGAIN_NOTE`] explains.
pub fn measured_again(curve: &[CurvePoint]) -> bool {
    curve
        .iter()
        .any(|p| p.detail.set_aside_latency_ns.is_some() || p.detail.cpu_contended)
}

/// A curve's table, terminal and reports alike: the header, and a row a depth in order
/// ([`depth_cell`] marks the answer's, [`limit_cell`] is last). With several streams (the
/// mixed sweep's reads and writes, several targets) a latency is every stream's I/Os
/// together and the worst stream's.
pub fn curve_cells(
    curve: &[CurvePoint],
    answer_depth: Option<u32>,
) -> (Vec<String>, Vec<Vec<String>>) {
    let several = curve
        .iter()
        .any(|p| p.detail.lat_over_streams_max.is_some());
    let lat = |h: &str| {
        if several {
            format!("{h} (all / worst)")
        } else {
            h.to_string()
        }
    };
    let header = vec![
        depth_header(curve).to_string(),
        "IOPS".into(),
        "MB/s".into(),
        lat(MEAN_LATENCY),
        lat("p99"),
        lat("p99.9"),
        "avg QD".into(),
        "CPU".into(),
        "limit".into(),
    ];
    let rows = by_depth(curve)
        .into_iter()
        .map(|p| {
            vec![
                depth_cell(p, answer_depth),
                fmt_thousands(p.at.iops),
                fmt_value("bw_bytes_per_s", p.at.bw_bytes_per_s),
                lat_cell(p, |l| l.mean_ns),
                lat_cell(p, |l| l.p99_ns),
                lat_cell(p, |l| l.p999_ns),
                queue_cell(&p.at),
                format!("{:.0} %", p.cpu_pct),
                limit_cell(p),
            ]
        })
        .collect();
    (header, rows)
}

pub fn curve_table(t: &TestResult) -> String {
    let (header, rows) = curve_cells(t.curve.as_deref().unwrap_or_default(), answer_depth(t));
    let mut table = new_table(ContentArrangement::Disabled);
    table.set_header(header);
    for mut row in rows {
        let limit = row.pop().unwrap_or_default();
        let mut cells: Vec<Cell> = row.into_iter().map(right).collect();
        cells.push(Cell::new(limit));
        table.add_row(cells);
    }
    if measured_again(t.curve.as_deref().unwrap_or_default()) {
        return format!("{table}\n  {AGAIN_NOTE}\n");
    }
    format!("{table}\n")
}

/// Everything after the run: per sweep the answer, the facts and the curve; then the
/// method and warnings.
pub fn report(doc: &ResultDoc, cfg: &SaturateConfig) -> String {
    let mut out = String::new();
    for t in doc.tests.iter().filter(|t| t.family == "saturate") {
        match &t.answer {
            Some(a) => {
                out.push_str(&answer_line(&t.name, a));
                out.push('\n');
                out.push_str(&format!(
                    "  {}\n",
                    facts(a, t.curve.as_deref().unwrap_or_default())
                ));
            }
            None => out.push_str(&format!(
                "{}: {}; the curve measured so far:\n",
                t.name,
                t.error
                    .as_deref()
                    .unwrap_or(if doc.status == "interrupted" {
                        "interrupted"
                    } else {
                        "not finished"
                    })
            )),
        }
        if t.curve.as_ref().is_some_and(|c| !c.is_empty()) {
            out.push_str(&curve_table(t));
        }
        if let Some(g) = t.params.get("preconditioned")
            && t.params.get("sweep").map(String::as_str) != Some("randread")
        {
            out.push_str(if g == "true" {
                "  preconditioned: the target was written once more before this sweep\n"
            } else {
                "  not preconditioned (--precondition writes the target once more first)\n"
            });
        }
        out.push('\n');
    }
    let sizes: Vec<String> = cfg
        .targets
        .iter()
        .map(|t| {
            format!(
                "{} {}{}{}",
                crate::os::text::terminal(&t.path.display().to_string()),
                fmt_size_iec(t.size),
                per_rank(cfg),
                if t.size < t.recommended {
                    " (below 10x cache)"
                } else {
                    ""
                }
            )
        })
        .collect();
    out.push_str(&format!(
        "method: {}; prefill with random data, every block{}; sizes: {}; {ANSWER_MARK}; latency limit on {} ({} over streams)\n",
        if cfg.targets.iter().all(|t| t.direct) {
            "O_DIRECT"
        } else {
            "BUFFERED on some targets"
        },
        if cfg.targets.iter().all(|t| t.may_write) {
            ""
        } else {
            " (not on read-only targets)"
        },
        sizes.join(", "),
        cfg.statistic.name(),
        cfg.aggregate.name()
    ));
    out.push_str(&crate::report::table::render_steady_lines(
        doc,
        crate::report::table::SteadyFigures::SweepAfter,
    ));
    out.push_str(&crate::report::table::render_warnings(doc));
    out
}

/// The result on stdout (JSON, or the answers and curves and then `extra`), the time taken
/// and where the result file is on stderr.
pub fn print_result(
    doc: &ResultDoc,
    cfg: &SaturateConfig,
    timing: &Timing,
    path: Option<&std::path::Path>,
    extra: &str,
) -> anyhow::Result<()> {
    if cfg.out.json {
        crate::outln!("{}", serde_json::to_string_pretty(doc)?);
    } else {
        crate::out!("{}{extra}", report(doc, cfg));
    }
    let _ = std::io::Write::flush(&mut std::io::stdout());
    crate::eline!("{}", timing_line(timing, cfg));
    if let Some(p) = path {
        crate::eline!(
            "results: {}",
            crate::os::text::terminal(&p.display().to_string())
        );
    }
    Ok(())
}

/// The time taken against the estimate, one line for stderr. The steady-state rounds
/// (`--steadystate`) count with the prefill, not the sweeps: the line names them then.
pub fn timing_line(timing: &Timing, cfg: &SaturateConfig) -> String {
    let mut s = format!(
        "iolab: {} (estimated {}, at most {})",
        sweeps_took(timing.steps, timing.sweep_secs),
        fmt_secs(timing.est[1]),
        fmt_secs(timing.est[2]),
    );
    let setup = setup_words(
        cfg.targets.iter().any(|t| t.may_write),
        cfg.precondition && cfg.writes(),
        cfg.steady.is_some(),
    );
    if let Some(w) = setup {
        s.push_str(&format!(", {w} {}", fmt_secs(timing.fill_secs)));
    }
    s
}

/// The sweeps' time, or that no step finished: a stop during the prefill said "sweeps took 106 ms"
/// (the test file's removal) of sweeps that never started.
fn sweeps_took(steps: usize, secs: f64) -> String {
    if steps == 0 {
        "no sweep step finished".to_string()
    } else {
        format!("sweeps took {}", fmt_secs(secs))
    }
}

/// What ran besides the sweeps, for the timing line: it said "prefill and preconditioning
/// 230 ms" after a run without --precondition (and "prefill" on a read-only device, which is
/// not prefilled). `None` when nothing did.
fn setup_words(prefill: bool, precondition: bool, steady: bool) -> Option<String> {
    let parts: Vec<&str> = [
        (prefill, "prefill"),
        (precondition, "preconditioning"),
        (steady, "steady-state rounds"),
    ]
    .iter()
    .filter(|(on, _)| *on)
    .map(|(_, w)| *w)
    .collect();
    match parts.as_slice() {
        [] => None,
        [one] => Some(one.to_string()),
        [init @ .., last] => Some(format!("{} and {last}", init.join(", "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::saturate::AnswerDetail;

    fn answer(iops: f64, depth: u32, lat_ms: f64) -> Answer {
        Answer {
            iops,
            iodepth: depth,
            statistic: "mean".into(),
            latency_ns: Some(lat_ms * 1e6),
            limit_ns: 10e6,
            knee_iodepth: Some(8),
            thrashed: false,
            detail: AnswerDetail {
                jobs: 1,
                total_iodepth: depth,
                found: true,
                limit_crossed: true,
                first_bad_iodepth: Some(depth + 1),
                ..Default::default()
            },
        }
    }

    #[test]
    fn a_stalled_stream_has_no_worst_latency_to_show() {
        use crate::model::saturate::StreamPoint;
        let mut p = CurvePoint::default();
        p.at.iops = 600.0;
        p.at.lat_mean_ns = 24_000.0;
        let t = LatTriple {
            mean_ns: 24_000.0,
            ..Default::default()
        };
        p.detail.lat_over_streams_mean = Some(t.clone());
        p.detail.lat_over_streams_max = Some(t);
        let mut fast = StreamPoint::default();
        fast.at.iops = 600.0;
        p.detail.streams = vec![StreamPoint::default(), fast];
        assert_eq!(lat_cell(&p, |l| l.mean_ns), "24.0 µs / -");
    }

    /// A step in which no I/O completed has no latency and no queue depth to show: its
    /// cells read "-" (they read "0 ns" and "0.0"), and a sweep without a completion at any
    /// depth names no peak depth (it said "peak 0 IOPS at depth 2").
    #[test]
    fn a_step_without_completions_shows_no_figures() {
        let mut stalled = CurvePoint::default();
        stalled.at.iodepth = 1;
        stalled.at.jobs = 1;
        let mut measured = stalled.clone();
        measured.at.iodepth = 2;
        measured.at.iops = 500.0;
        measured.at.lat_mean_ns = 4e6;
        measured.at.lat_p99_ns = 5e6;
        measured.at.lat_p999_ns = 6e6;
        measured.at.avg_queue_depth = 2.0;
        let t = TestResult {
            curve: Some(vec![stalled, measured]),
            ..Default::default()
        };
        let table = curve_table(&t);
        let cells = |depth: &str| -> Vec<String> {
            let row = table
                .lines()
                .find(|l| l.split(['│', '┆']).nth(1).map(str::trim) == Some(depth))
                .unwrap_or_else(|| panic!("{table}"));
            row.split(['│', '┆'])
                .map(|c| c.trim().to_string())
                .collect()
        };
        // "", depth, IOPS, MB/s, mean, p99, p99.9, QD
        assert_eq!(cells("1")[4..8], ["-", "-", "-", "-"], "{table}");
        assert_eq!(cells("2")[4..8], ["4.00 ms", "5.00 ms", "6.00 ms", "2.0"]);
        assert!(!table.contains("0 ns"), "{table}");

        let mut none = answer(0.0, 0, 0.0);
        none.latency_ns = None;
        none.knee_iodepth = None;
        none.detail.found = false;
        let f = facts(&none, &[]);
        assert!(f.contains("no I/O completed at any depth"), "{f}");
        assert!(!f.contains("peak") && !f.contains("knee"), "{f}");
    }

    #[test]
    fn sweeps_stopped_before_their_first_step_are_not_timed() {
        assert_eq!(sweeps_took(0, 0.106), "no sweep step finished");
        assert_eq!(sweeps_took(9, 13.0), "sweeps took 13 s");
    }

    #[test]
    fn the_timing_line_names_only_what_ran_besides_the_sweeps() {
        assert_eq!(setup_words(true, false, false).as_deref(), Some("prefill"));
        assert_eq!(
            setup_words(true, true, false).as_deref(),
            Some("prefill and preconditioning")
        );
        assert_eq!(
            setup_words(true, true, true).as_deref(),
            Some("prefill, preconditioning and steady-state rounds")
        );
        assert_eq!(
            setup_words(false, false, true).as_deref(),
            Some("steady-state rounds")
        );
        assert_eq!(setup_words(false, false, false), None);
    }

    /// A depth measured again because a job thread waited for a CPU says so in its limit
    /// cell, and an answer decided by a step that waited both times says it is uncertain.
    #[test]
    fn a_step_measured_again_and_an_uncertain_answer_say_so() {
        let mut p = CurvePoint {
            within_limit: true,
            ..Default::default()
        };
        assert_eq!(limit_cell(&p), "ok");
        p.detail.set_aside_latency_ns = Some(30e6);
        assert_eq!(limit_cell(&p), "ok (again)");
        p.detail.cpu_contended = true;
        p.within_limit = false;
        assert_eq!(limit_cell(&p), "over?");
        let mut a = answer(1000.0, 21, 21.0);
        assert!(!answer_words(&a).contains("uncertain"));
        a.detail.contended_iodepths = vec![22];
        assert!(
            answer_words(&a).ends_with(
                " (uncertain: a job thread waited for a CPU both times depth 22 was measured, so the latency judged there may be the machine's rather than the device's)"
            ),
            "{}",
            answer_words(&a)
        );
        a.detail.contended_iodepths = vec![21, 22];
        assert!(answer_words(&a).contains("both times depths 21 and 22 were measured"));
    }

    #[test]
    fn answer_line_reads_like_the_issue() {
        assert_eq!(
            answer_line("randread", &answer(41_200.0, 12, 9.6)),
            "randread: 41,200 IOPS at queue depth 12 with mean latency 9.6 ms ≤ 10 ms"
        );
        let mut a = answer(82_000.0, 12, 9.6);
        a.detail.total_iodepth = 24;
        assert!(answer_line("randread", &a).contains("queue depth 12 per target (24 in flight"));
        a.detail.ranks = Some(2);
        assert!(
            answer_line("randread", &a).contains("queue depth 12 on each of 2 ranks (24 in flight"),
            "{}",
            answer_line("randread", &a)
        );
        a.detail.found = false;
        assert!(answer_line("randread", &a).starts_with("randread: no depth holds"));
    }

    /// The facts of a sweep of `max_depth` whose IOPS at each depth are `iops` (latency far
    /// under the limit), through the search that decides the knee and thrashing.
    fn facts_of_shape(max_depth: u32, iops: impl Fn(u32) -> f64) -> String {
        use crate::workload::saturate::{Observation, run_search};
        let (o, points) = run_search(1, max_depth, 10e6, |d| Observation {
            depth: d,
            iops: iops(d),
            latency_ns: 1e3,
        });
        let peak = o.peak.unwrap();
        let mut a = answer(peak.iops, peak.depth, 0.001);
        a.knee_iodepth = o.knee;
        a.thrashed = o.thrashed;
        a.detail.peak_iops = peak.iops;
        a.detail.peak_iodepth = peak.depth;
        a.detail.first_bad_iodepth = None;
        let curve: Vec<CurvePoint> = points
            .iter()
            .map(|p| {
                let mut c = CurvePoint::default();
                c.at.iodepth = p.depth;
                c.at.iops = p.iops;
                c
            })
            .collect();
        facts(&a, &curve)
    }

    /// The knee and thrashing sentences against shapes of IOPS over depth: a sweep whose
    /// IOPS fell at its deepest step (48, past a peak at 32, with no step at 64 to place the
    /// knee) said "no knee (IOPS still rising)".
    #[test]
    fn the_knee_sentences_fit_the_shape_of_the_curve() {
        // Rising to the end: no knee, and it says why.
        let f = facts_of_shape(64, |d| 1000.0 * d as f64);
        assert!(
            f.starts_with("no knee (IOPS still rising); peak 64,000 IOPS at depth 64"),
            "{f}"
        );
        assert!(f.ends_with("no thrashing"), "{f}");
        // Flat: the knee is the first depth.
        let f = facts_of_shape(64, |_| 5000.0);
        assert!(
            f.starts_with("knee at depth 1 (the first depth with 90 % of the peak IOPS)"),
            "{f}"
        );
        // Rising, then a plateau: the knee where it flattens.
        let f = facts_of_shape(64, |d| 1000.0 * d.min(8) as f64);
        assert!(f.starts_with("knee at depth 8 "), "{f}");
        // Falling at the last step, too close to the peak to place a knee.
        let f = facts_of_shape(48, |d| if d == 48 { 20_000.0 } else { 1000.0 * d as f64 });
        assert!(!f.contains("still rising"), "{f}");
        assert!(
            f.starts_with(
                "no knee placed (IOPS fell after the peak, to 20,000 at depth 48, the deepest step"
            ),
            "{f}"
        );
        assert!(f.contains("peak 32,000 IOPS at depth 32"), "{f}");
        // Falling two steps in a row: a knee before them, and thrashing.
        let f = facts_of_shape(64, |d| match d {
            16 => 7000.0,
            32 => 5000.0,
            64 => 3000.0,
            _ => 1000.0 * d as f64,
        });
        assert!(f.starts_with("knee at depth 8 "), "{f}");
        assert!(
            f.ends_with("thrashing (IOPS fell two steps in a row as the depth rose)"),
            "{f}"
        );
        // Noisy: up and down; a knee at the first depth near the peak, no thrashing.
        let f = facts_of_shape(32, |d| match d {
            1 => 1000.0,
            2 => 9500.0,
            4 => 6000.0,
            8 => 10_000.0,
            16 => 7000.0,
            _ => 9800.0,
        });
        assert!(f.starts_with("knee at depth 2 "), "{f}");
        assert!(f.contains("peak 10,000 IOPS at depth 8"), "{f}");
        assert!(f.ends_with("; no thrashing"), "{f}");
    }
}

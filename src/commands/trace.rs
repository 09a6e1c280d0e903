//! `iolab trace`: run an application workload, list the built-ins, record a program's file
//! I/O under strace, replay a recording. Results go to the result JSON (family `trace`) and
//! a compact text report: MB/s per stream and in total, per-operation latency percentiles,
//! whether paced streams held their rate, and replay time against recorded time.

use std::path::Path;

use anyhow::Result;

use super::family::{DirFamily, Family, Output, execute as execute_family};
use crate::cli::OutputArgs;
use crate::cli::trace::{
    TraceArgs, TraceCmd, TraceListArgs, TraceReplayArgs, TraceRunArgs, TraceSummaryArgs,
};
use crate::model::{ResultDoc, ResultSink, TestResult};
use crate::runner::RunContext;
use crate::units::{fmt_mb_per_s, fmt_ns, fmt_size_iec};
use crate::workload::trace::{builtins, measure, record, replay, validate};

impl crate::cli::Execute for TraceArgs {
    fn execute(&self, argv: Vec<String>) -> anyhow::Result<i32> {
        let args = self;
        match &args.cmd {
            TraceCmd::Run(a) => execute_family(TraceFamily::from_args(a)?, argv),
            TraceCmd::List(a) => list(a),
            TraceCmd::Record(a) => record::execute(
                &record::RecordSettings::from(a),
                &crate::report::trace::render_summary,
            ),
            TraceCmd::Replay(a) => execute_family(ReplayFamily::new(a)?, argv),
            TraceCmd::Summary(a) => summary(a),
        }
    }
}

/// `iolab trace summary FILE`: what a recording says.
fn summary(a: &TraceSummaryArgs) -> Result<i32> {
    let (h, calls) = crate::workload::trace::tracefile::read(&a.trace)?;
    let s = crate::workload::trace::summary::summarize(&calls);
    let truncated = crate::workload::trace::tracefile::truncation(&a.trace, &h, calls.len());
    if let Some(t) = &truncated {
        crate::eline!("iolab: warning: {t}; the summary covers only the calls it holds");
    }
    if a.json {
        crate::outln!("{}", serde_json::to_string_pretty(&s)?);
        return Ok(0);
    }
    let count = if truncated.is_some() {
        format!("{} (of {} recorded)", calls.len(), h.calls)
    } else {
        h.calls.to_string()
    };
    crate::outln!(
        "{}: {} calls of `{}`, recorded with {}{}",
        a.trace.display(),
        count,
        h.command.join(" "),
        h.recorder,
        if h.lost_events > 0 {
            format!(" ({} events lost)", h.lost_events)
        } else {
            String::new()
        }
    );
    if let Some(c) = &h.recorder_cost {
        crate::outln!("{}", record::cost_line(c));
    }
    crate::out!("{}", crate::report::trace::render_summary(&s));
    Ok(0)
}

fn list(a: &TraceListArgs) -> Result<i32> {
    for (name, text) in builtins::BUILTINS {
        let w = validate::parse(name, text)
            .map_err(|e| anyhow::anyhow!("built-in {name}: {}", e.reason))?;
        crate::outln!("{name:<20} {}", w.description);
        if a.verbose {
            crate::outln!("{text}");
        }
    }
    crate::outln!(
        "\nrun one: iolab trace run NAME --target DIR [--scale 0.01]; the format: docs/workloads.md"
    );
    Ok(0)
}

/// The text report of `run` and `replay`: every test, then the warnings.
fn render_doc(doc: &ResultDoc) -> String {
    let mut out = String::new();
    for t in &doc.tests {
        out.push_str(&render_test(t));
    }
    out.push_str(&crate::report::table::render_warnings(doc));
    out
}

/// `iolab trace run` as a family: the command line and the matrix's `trace:` workloads.
pub struct TraceFamily {
    plan: measure::Plan,
    out: OutputArgs,
}

impl Family for TraceFamily {
    const NAME: &'static str = "trace";

    fn output(&self) -> Output<'_> {
        Output {
            target: Some(&self.plan.target),
            ..Output::of(&self.out)
        }
    }

    fn measure(&mut self, ctx: &RunContext, doc: &mut ResultDoc, _sink: &ResultSink) -> Result<()> {
        let device = doc.environment.block_device.clone();
        let mut warnings = Vec::new();
        let (test, outcome) = measure::run_test(&self.plan, ctx, device.as_deref(), &mut warnings);
        for w in warnings {
            doc.warn(w);
        }
        doc.tests.push(test);
        outcome
    }

    fn render(&self, doc: &ResultDoc) -> String {
        render_doc(doc)
    }
}

/// `trace:name=NAME|FILE[:scale=F][:repeat=N]` for the matrix.
impl DirFamily for TraceFamily {
    type Args = TraceRunArgs;

    fn reference(
        params: &std::collections::BTreeMap<String, String>,
    ) -> Result<(TraceRunArgs, String), crate::error::UsageError> {
        crate::cli::reference::trace(params)
    }

    fn retarget(args: &mut TraceRunArgs, dir: &Path) {
        args.target = dir.to_path_buf();
        args.out.no_save = true;
    }

    fn from_args(a: &TraceRunArgs) -> Result<TraceFamily> {
        Ok(TraceFamily {
            plan: measure::Plan::from_args(a)?,
            out: a.out.clone(),
        })
    }
}

/// `iolab trace replay` as a family.
struct ReplayFamily<'a> {
    a: &'a TraceReplayArgs,
    settings: replay::ReplaySettings,
    replay: replay::Replay,
}

impl<'a> ReplayFamily<'a> {
    fn new(a: &'a TraceReplayArgs) -> Result<ReplayFamily<'a>> {
        let settings = replay::ReplaySettings::from_args(a)?;
        Ok(ReplayFamily {
            a,
            replay: replay::Replay::load(&settings)?,
            settings,
        })
    }
}

impl Family for ReplayFamily<'_> {
    const NAME: &'static str = "trace";

    fn output(&self) -> Output<'_> {
        Output {
            target: Some(&self.a.target),
            ..Output::of(&self.a.out)
        }
    }

    fn measure(&mut self, ctx: &RunContext, doc: &mut ResultDoc, _sink: &ResultSink) -> Result<()> {
        self.replay.measure(&self.settings, ctx, doc)
    }

    fn render(&self, doc: &ResultDoc) -> String {
        render_doc(doc)
    }
}

/// The run whose bandwidth is the median of the test's runs (the one shown in detail).
fn median_run(t: &TestResult) -> Option<&crate::model::RunResult> {
    let mut runs: Vec<_> = t.runs.iter().collect();
    runs.sort_by(|a, b| {
        a.bw_bytes_per_s
            .partial_cmp(&b.bw_bytes_per_s)
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    runs.get(runs.len() / 2).copied()
}

/// Text report of one trace test.
pub fn render_test(t: &TestResult) -> String {
    let mut s = String::new();
    let scale = t.trace.as_ref().map(|d| d.scale).unwrap_or(1.0);
    s.push_str(&format!(
        "{}  ({}",
        t.name,
        crate::units::count(t.runs.len() as u64, "run", "runs")
    ));
    if scale != 1.0 {
        s.push_str(&format!(", scale {scale}"));
    }
    s.push_str(")\n");
    if let (Some(bw), Some(ops)) = (t.summary.get("bw_bytes_per_s"), t.summary.get("iops")) {
        s.push_str(&format!(
            "  total: {} MB/s, {} ops/s (medians; MB/s min {}, max {}, CV {:.1} %)\n",
            fmt_mb_per_s(bw.median),
            crate::units::fmt_thousands(ops.median),
            fmt_mb_per_s(bw.min),
            fmt_mb_per_s(bw.max),
            bw.cv * 100.0
        ));
    }
    let Some(r) = median_run(t) else {
        return s;
    };
    let Some(d) = &r.trace else {
        return s;
    };
    if let Some(rp) = &d.replay {
        s.push_str(&format!(
            "  replay ({}): {} vs recorded {} (x{:.2}), {} calls on {} threads, {} read, {} written, {} errors\n",
            rp.timing,
            fmt_ns(rp.replay_ns as f64),
            fmt_ns(rp.recorded_ns as f64),
            rp.speedup,
            rp.calls,
            rp.threads,
            fmt_size_iec(rp.read_bytes),
            fmt_size_iec(rp.write_bytes),
            rp.errors
        ));
        if let Some(e) = &rp.first_error {
            s.push_str(&format!("  first replay error: {e}\n"));
        }
    }
    if !d.streams.is_empty() {
        s.push_str(&format!(
            "  {:<16} {:>4} {:>10} {:>10} {:>10} {:>10}  {}\n",
            "stream", "copy", "MB/s", "ops", "read", "written", "pacing"
        ));
        for st in &d.streams {
            let pacing = match (
                st.rate_bytes_per_s,
                st.deadlines,
                st.missed_deadlines,
                st.rate_held,
            ) {
                (Some(rate), Some(dl), Some(m), Some(h)) => format!(
                    "{} MB/s: {m} of {dl} late ({})",
                    fmt_mb_per_s(rate),
                    if h { "held" } else { "NOT held" }
                ),
                _ => "as fast as possible".into(),
            };
            s.push_str(&format!(
                "  {:<16} {:>4} {:>10} {:>10} {:>10} {:>10}  {pacing}\n",
                st.name,
                st.copy,
                fmt_mb_per_s(st.bw_bytes_per_s),
                st.ops,
                fmt_size_iec(st.read_bytes),
                fmt_size_iec(st.write_bytes)
            ));
        }
    }
    s.push_str(&format!(
        "  {:<10} {:>9} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
        "op", "count", "bytes", "p50", "p99", "p99.9", "max"
    ));
    for (name, o) in &d.ops {
        s.push_str(&format!(
            "  {:<10} {:>9} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
            name,
            o.count,
            fmt_size_iec(o.bytes),
            fmt_ns(o.lat_ns.p50 as f64),
            fmt_ns(o.lat_ns.p99 as f64),
            fmt_ns(o.lat_ns.p999 as f64),
            fmt_ns(o.lat_ns.max as f64)
        ));
    }
    if let Some(ns) = r.fsync_ns {
        s.push_str(&format!(
            "  final write-back (syncfs, in the total): {}\n",
            fmt_ns(ns as f64)
        ));
    }
    if let Some(rec) = t.trace.as_ref().and_then(|d| d.recording.as_ref()) {
        let by = t
            .trace
            .as_ref()
            .and_then(|d| d.recorder.as_deref())
            .unwrap_or("strace");
        s.push_str(&format!("  the recording (recorder: {by}):\n"));
        for line in crate::report::trace::render_summary(rec).lines().skip(1) {
            s.push_str(&format!("  {line}\n"));
        }
    }
    if let Some(sum) = &d.summary {
        s.push_str("  what this replay issued:\n");
        for line in crate::report::trace::render_summary(sum).lines().skip(1) {
            s.push_str(&format!("  {line}\n"));
        }
    }
    if let Some(dc) = &r.device {
        s.push_str(&format!(
            "  device {}: {} read, {} written\n",
            dc.device,
            fmt_size_iec(dc.read_bytes),
            fmt_size_iec(dc.write_bytes)
        ));
    }
    s
}

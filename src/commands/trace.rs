//! `iolab trace`: run an application workload, list the built-ins, record a program's file
//! I/O under strace, replay a recording. Results go to the result JSON (family `trace`) and
//! a compact text report: MB/s per stream and in total, per-operation latency percentiles,
//! whether paced streams held their rate, and replay time against recorded time.

use std::path::Path;

use anyhow::Result;

use super::family::{DirFamily, Family, Output, execute as execute_family};
use crate::cli::trace::{
    TraceArgs, TraceCmd, TraceListArgs, TraceReplayArgs, TraceRunArgs, TraceSummaryArgs,
};
use crate::model::{Delivery, ResultDoc, ResultSink};
use crate::runner::RunContext;
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
    // A built-in's name is a description of a workload, not a recording of one: it said
    // "office: cannot read: No such file or directory".
    if !a.trace.exists()
        && let Some(name) = a.trace.to_str()
        && crate::workload::trace::builtins::get(name).is_some()
    {
        return Err(crate::error::UsageError::new(format!(
            "{name} is a built-in workload (a description of its files and calls, not a recorded trace): `iolab trace run {name} DIR` runs it; a summary is of a file `iolab trace record` wrote"
        ))
        .into());
    }
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
        crate::os::text::terminal(&a.trace.display().to_string()),
        count,
        crate::os::text::terminal(&h.command.join(" ")),
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
    if a.json {
        let mut list = Vec::new();
        for (name, text) in builtins::BUILTINS {
            let w = validate::parse(name, text)
                .map_err(|e| anyhow::anyhow!("built-in {name}: {}", e.reason))?;
            let mut item = serde_json::json!({ "name": name, "description": w.description });
            if a.verbose {
                item["toml"] = serde_json::Value::from(*text);
            }
            list.push(item);
        }
        crate::outln!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(0);
    }
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

/// `iolab trace run` as a family: the command line and the matrix's `trace:` workloads.
pub struct TraceFamily {
    plan: measure::Plan,
    out: Delivery,
}

impl Family for TraceFamily {
    const NAME: &'static str = "trace";

    fn output(&self) -> Output<'_> {
        Output::on(&self.plan.target, &self.out)
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
        crate::report::trace::render_doc(doc)
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
            out: a.out.delivery(),
        })
    }
}

/// `iolab trace replay` as a family.
struct ReplayFamily<'a> {
    a: &'a TraceReplayArgs,
    settings: replay::ReplaySettings,
    replay: replay::Replay,
    out: Delivery,
}

impl<'a> ReplayFamily<'a> {
    fn new(a: &'a TraceReplayArgs) -> Result<ReplayFamily<'a>> {
        let settings = replay::ReplaySettings::from_args(a)?;
        Ok(ReplayFamily {
            a,
            replay: replay::Replay::load(&settings)?,
            out: a.out.delivery(),
            settings,
        })
    }
}

impl Family for ReplayFamily<'_> {
    const NAME: &'static str = "trace";

    fn output(&self) -> Output<'_> {
        Output::on(&self.a.target, &self.out)
    }

    fn measure(&mut self, ctx: &RunContext, doc: &mut ResultDoc, _sink: &ResultSink) -> Result<()> {
        self.replay.measure(&self.settings, ctx, doc)
    }

    fn render(&self, doc: &ResultDoc) -> String {
        crate::report::trace::render_doc(doc)
    }
}

//! Measuring a workload: validation of the target (room, writable) before anything is
//! created, then repeats of prepare -> run -> account, each in a fresh subdirectory that is
//! removed afterwards (also on error and Ctrl-C), into one `TestResult` of family `trace`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::fileset;
use super::format::Workload;
use super::runner::{self, OpAcc, StreamOutcome};
use crate::error::UsageError;
use crate::model::trace::{OpResult, StreamResult, StreamSpec, TraceRunDetail, TraceTestDetail};
use crate::model::{RunResult, TestResult, Warning, WarningCode};
use crate::os::context::RunContext;
use crate::os::cpu_wait::{Fewer, IDLE_ADVICE, Waiter};
use crate::os::progress::Progress;
use crate::stats::hist::LatencyHistogram;
use crate::stats::repeat::{RepeatMode, spread_warnings, summarize_test};
use crate::sysinfo::diskstats::{PhaseCounters, write_amplification};

/// A paced stream "held its rate" when at most this fraction of requests missed a deadline.
pub const HELD_MAX_MISSED: f64 = 0.01;

/// Everything needed to run a workload, validated.
#[derive(Debug, Clone)]
pub struct Plan {
    pub workload: Workload,
    pub label: String,
    pub source: &'static str,
    pub scale: f64,
    pub target: PathBuf,
    pub repeat: RepeatMode,
}

pub fn check_scale(scale: f64) -> Result<(), UsageError> {
    if !(scale.is_finite() && scale > 0.0 && scale <= 1000.0) {
        return Err(UsageError::new(format!(
            "--scale {scale}: must be above 0 and at most 1000"
        )));
    }
    Ok(())
}

/// Check that `dir` is a directory iolab may work in (`fs::facts::check_work_dir`) with `need`
/// bytes free (plus 5 %); `advice` ends the message (`use --scale to shrink` for a
/// workload; a replay has no --scale).
pub fn check_target(dir: &Path, need: u64, advice: &str) -> Result<(), UsageError> {
    crate::fs::facts::check_work_dir(dir)?;
    if let Some(free) = crate::fs::facts::free_space(dir) {
        let want = need.saturating_add(need / 20);
        if free < want {
            return Err(UsageError::new(format!(
                "--target {}: needs {} but only {} is free ({advice})",
                dir.display(),
                crate::units::fmt_size_iec(want),
                crate::units::fmt_size_iec(free)
            )));
        }
    }
    Ok(())
}

impl Plan {
    fn detail(&self) -> TraceTestDetail {
        let sets = fileset::layout(&self.workload, Path::new("/"), 0);
        TraceTestDetail {
            workload: self.label.clone(),
            source: self.source.into(),
            description: self.workload.description.clone(),
            scale: self.scale,
            streams: self
                .workload
                .streams
                .iter()
                .enumerate()
                .map(|(i, s)| StreamSpec {
                    name: s.name.clone(),
                    copies: s.copies,
                    files: s.files,
                    file_bytes_total: sets
                        .iter()
                        .find(|f| f.stream == i)
                        .map(|f| f.total_size())
                        .unwrap_or(0),
                    rate_bytes_per_s: s.rate,
                })
                .collect(),
            recording: None,
            recorder: None,
        }
    }
}

/// Per-operation totals and the merged histogram of all operations.
pub fn ops_detail(ops: &BTreeMap<String, OpAcc>) -> (BTreeMap<String, OpResult>, LatencyHistogram) {
    let mut all = LatencyHistogram::new();
    let mut out = BTreeMap::new();
    for (name, acc) in ops {
        all += &acc.hist;
        out.insert(
            name.clone(),
            OpResult {
                count: acc.count,
                bytes: acc.bytes,
                lat_ns: acc.hist.stats(),
            },
        );
    }
    (out, all)
}

/// The common fields of a run from its counts, time and latencies.
pub fn run_result(
    run: u32,
    elapsed_ns: u64,
    ops: u64,
    bytes: u64,
    all: &LatencyHistogram,
) -> RunResult {
    let secs = (elapsed_ns as f64 / 1e9).max(1e-9);
    RunResult {
        run,
        elapsed_ns,
        ops,
        bytes,
        iops: Some(ops as f64 / secs),
        bw_bytes_per_s: Some(bytes as f64 / secs),
        lat_ns: (!all.is_empty()).then(|| all.stats()),
        lat_percentiles_ns: all.percentile_curve(),
        lat_hist: (!all.is_empty()).then(|| all.to_base64()),
        ..Default::default()
    }
}

fn stream_result(w: &Workload, o: &StreamOutcome) -> StreamResult {
    let s = &w.streams[o.stream];
    let ops = o.ops.values().map(|a| a.count).sum();
    let secs = o.elapsed.as_secs_f64().max(1e-9);
    StreamResult {
        name: s.name.clone(),
        copy: o.copy,
        ops,
        read_bytes: o.read_bytes,
        write_bytes: o.write_bytes,
        elapsed_ns: o.elapsed.as_nanos() as u64,
        bw_bytes_per_s: (o.read_bytes + o.write_bytes) as f64 / secs,
        rate_bytes_per_s: s.rate,
        deadlines: s.rate.map(|_| o.deadlines),
        missed_deadlines: s.rate.map(|_| o.missed),
        rate_held: s
            .rate
            .map(|_| o.deadlines > 0 && (o.missed as f64) <= HELD_MAX_MISSED * o.deadlines as f64),
    }
}

fn one_run(plan: &Plan, ctx: &RunContext, device: Option<&str>, run: u32) -> Result<RunResult> {
    // Recorded so that the next start removes it if this process is killed.
    let root = crate::fs::registry::WorkDir::new(
        tempfile::Builder::new()
            .prefix("iolab-trace-")
            .tempdir_in(&plan.target)
            .with_context(|| format!("cannot create a directory in {}", plan.target.display()))?,
    );
    let seed = ctx.seed ^ run as u64;
    let mut sets = fileset::layout(&plan.workload, root.path(), seed);
    let prefill = fileset::prepare(&plan.workload, &mut sets, seed, &ctx.stop).map_err(|e| {
        match ctx.stop.check() {
            Err(i) => anyhow::Error::new(i),
            Ok(()) => anyhow::Error::new(e).context("cannot create the workload's files"),
        }
    })?;
    let phase = PhaseCounters::start(device);
    let (outcomes, elapsed, sync) =
        runner::run(&plan.workload, sets, root.path(), seed, &ctx.stop)?;
    let mut ops: BTreeMap<String, OpAcc> = BTreeMap::new();
    for o in &outcomes {
        for (name, acc) in &o.ops {
            let e = ops.entry(name.to_string()).or_default();
            e.count += acc.count;
            e.bytes += acc.bytes;
            e.hist += &acc.hist;
        }
    }
    let (op_results, all) = ops_detail(&ops);
    let n_ops = op_results.values().map(|o| o.count).sum();
    let written: u64 = outcomes.iter().map(|o| o.write_bytes).sum();
    let bytes = outcomes.iter().map(|o| o.read_bytes).sum::<u64>() + written;
    let mut r = run_result(run, elapsed.as_nanos() as u64, n_ops, bytes, &all);
    r.fsync_ns = sync.map(|d| d.as_nanos() as u64);
    if let Some(dc) = phase.and_then(|p| p.finish()) {
        r.write_amplification = write_amplification(&dc, written);
        r.device = Some(dc);
    }
    r.trace = Some(TraceRunDetail {
        streams: outcomes
            .iter()
            .map(|o| stream_result(&plan.workload, o))
            .collect(),
        ops: op_results,
        prefill_bytes: prefill,
        replay: None,
        summary: None,
        cpu_wait_pct: outcomes
            .iter()
            .filter_map(|o| o.cpu_wait_pct)
            .reduce(f64::max),
    });
    root.close().with_context(|| {
        format!(
            "cannot remove the workload's files under {}",
            plan.target.display()
        )
    })?;
    Ok(r)
}

/// Run `plan` with its repeats. The test keeps the runs measured before a failure; the
/// failure is returned beside it.
pub fn run_test(
    plan: &Plan,
    ctx: &RunContext,
    device: Option<&str>,
    warnings: &mut Vec<Warning>,
) -> (TestResult, Result<()>) {
    let mut test = TestResult {
        name: plan.label.clone(),
        family: "trace".into(),
        direction: Some(direction(&plan.workload).into()),
        params: BTreeMap::from([
            ("workload".to_string(), plan.label.clone()),
            ("source".to_string(), plan.source.to_string()),
            ("scale".to_string(), plan.scale.to_string()),
        ]),
        trace: Some(plan.detail()),
        ..Default::default()
    };
    let mut values = Vec::new();
    let mut failure = None;
    let mut run = 0u32;
    while plan.repeat.wants_more(&values) {
        run += 1;
        let p = Progress::start(
            ctx.progress,
            &format!("{} [{}/{}]", plan.label, run, plan.repeat.max_runs()),
        );
        match one_run(plan, ctx, device, run) {
            Ok(r) => {
                let bw = r.bw_bytes_per_s.unwrap_or(0.0);
                p.finish(&format!("{} MB/s", crate::units::fmt_mb_per_s(bw)));
                for s in r.trace.iter().flat_map(|t| &t.streams) {
                    if s.rate_held == Some(false) {
                        warnings.push(Warning {
                            code: WarningCode::RateMissed,
                            message: format!(
                                "stream {} copy {} missed {} of {} deadlines at {} MB/s: the rate was not held",
                                s.name,
                                s.copy,
                                s.missed_deadlines.unwrap_or(0),
                                s.deadlines.unwrap_or(0),
                                crate::units::fmt_mb_per_s(s.rate_bytes_per_s.unwrap_or(0.0))
                            ),
                            test: Some(plan.label.clone()),
                        });
                    }
                }
                values.push(bw);
                test.runs.push(r);
            }
            Err(e) => {
                p.finish(crate::error::stopped_or_failed(&e));
                failure = Some(e);
                break;
            }
        }
    }
    summarize_test(&mut test);
    warnings.extend(spread_warnings(&test, &plan.repeat));
    let copies = plan
        .workload
        .streams
        .iter()
        .map(|s| s.copies as usize)
        .sum();
    warnings.extend(contention_warning(
        &test,
        copies,
        ", or use a workload file whose streams have fewer copies",
    ));
    if let Some(e) = &failure {
        test.error = Some(format!("{e:#}"));
    }
    (test, failure.map_or(Ok(()), Err))
}

/// Warning `cpu-contention` of a trace test (run or replay) whose calls were issued by
/// `threads` threads, with the highest wait of its runs; `fewer` ends the advice when they
/// outnumber the CPUs (neither command has a --jobs: the threads are the workload's).
pub fn contention_warning(test: &TestResult, threads: usize, fewer: &str) -> Option<Warning> {
    let waiter = Waiter {
        who: "a thread issuing the calls",
        threads,
        fewer: Fewer::Cpus(fewer),
        effect: "every call's latency includes that wait and the MB/s may be below what the \
                 file system gives",
        advice: IDLE_ADVICE,
    };
    crate::workload::contention::warning(test, |r| r.trace.as_ref()?.cpu_wait_pct, &waiter)
}

fn direction(w: &Workload) -> &'static str {
    use super::format::Op;
    let ops: Vec<Op> = w.streams.iter().flat_map(|s| s.ops.ops()).collect();
    let reads = ops.contains(&Op::Read);
    let writes = ops.iter().any(|o| matches!(o, Op::Write | Op::Append));
    match (reads, writes) {
        (true, false) => "read",
        (false, true) => "write",
        _ => "mixed",
    }
}

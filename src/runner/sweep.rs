//! Executes `iolab saturate` (and every rank of a distributed one): the targets, the
//! prefill and optional preconditioning, then one search per sweep (randread, randwrite,
//! read+write; x jobs), each step through `runner::saturate`, the result document saved
//! after every step.

use std::collections::BTreeMap;
use std::time::Instant;

use anyhow::{Context, Result};

use super::block::{CPU_BOUND_PCT, LiveCounters, LiveSampler, StopNotice};
use super::progress::Progress;
use super::saturate::{self as step, StepResult, pick};
use super::target::{TargetKind, TestTarget};
use super::{RunContext, given};
use crate::model::saturate::{Answer, AnswerDetail, CurvePoint};
use crate::model::{
    Environment, ResultDoc, ResultSink, RunResult, TestResult, Warning, WarningCode,
};
use crate::os::cpu_wait;
use crate::units::{fmt_secs, fmt_size_iec, fmt_thousands};
use crate::workload::saturate::SweepKind;
use crate::workload::saturate::config::{SaturateConfig, SweepSpec};
use crate::workload::saturate::{Observation, Outcome, Phase, Search, step_bounds};

/// What a distributed `iolab saturate` does around each step of a sweep (`src/dist`, cargo
/// feature `mpi`). Like `RunHooks`, every method is called from the command's own thread,
/// between steps, never while one is measured. A plain saturate has no hooks.
pub trait SweepHooks {
    /// Before a step's I/O threads start: all ranks meet here, so they start together.
    fn before_step(&self) -> Result<()>;
    /// After a step (also a failed one): this rank's figures of it, if any.
    fn after_step(&self, total: Option<&RunResult>) -> Result<()>;
    /// The step the search judges, the same on every rank: rank 0 aggregates every rank's
    /// `step` (recording each rank's own point under `doc.hosts`) and sends it to all.
    /// `ti`: the sweep's test in `doc`.
    fn judge(
        &self,
        doc: &mut ResultDoc,
        ti: usize,
        sweep: &SweepSpec,
        step: &StepResult,
    ) -> Result<CurvePoint>;
    /// The next step as rank 0's search chose it (`local`: this rank's own choice); every
    /// rank takes the same.
    fn agree_next(&self, local: Option<(u32, Phase)>) -> Result<Option<(u32, Phase)>>;
    /// A step was added to the sweep `ti`'s curve and is about to be saved; not collective.
    /// Rank 0 brings the straggler summary and warnings up to date with it, so that every
    /// save holds them: the one a stop marks `interrupted` may be the last (mpirun kills the
    /// ranks a second after it forwards Ctrl-C, and ranks waiting for the I/Os in flight on
    /// a slow device can take longer).
    fn step_recorded(&self, doc: &mut ResultDoc, ti: usize);
    /// The step just judged is set aside (a rank's job thread waited for a CPU, which the
    /// judged point's `cpu_contended` said on every rank) and its depth is measured again:
    /// rank 0 takes the ranks' own points of it back out of `doc.hosts`. Not collective.
    fn step_set_aside(&self, doc: &mut ResultDoc, ti: usize);
    /// After a sweep's last step (rank 0: the straggler summary and warnings, with the
    /// figures at the answer).
    fn end_sweep(&self, doc: &mut ResultDoc, ti: usize) -> Result<()>;
}

/// The time the sweeps took against the estimate.
pub struct Timing {
    pub est: [f64; 3],
    pub sweep_secs: f64,
    pub fill_secs: f64,
    /// Steps measured in all the sweeps (none when a stop came during the prefill).
    pub steps: usize,
}

/// A new result document with the targets' warnings.
pub fn new_doc(cfg: &SaturateConfig, argv: Vec<String>, env: Environment) -> ResultDoc {
    let mut doc = ResultDoc::new("saturate", argv, env);
    start_warnings(cfg, &mut doc);
    doc
}

/// The targets' warnings, at the start of a document.
pub fn start_warnings(cfg: &SaturateConfig, doc: &mut ResultDoc) {
    for w in cfg.targets.iter().flat_map(|t| &t.warnings) {
        doc.warn(w.clone());
    }
    for t in &cfg.targets {
        if let Some(w) = crate::sysinfo::resolve::no_device_warning(&t.path) {
            doc.warn(w);
        }
    }
}

/// The prefill and every sweep into `doc`, saving after every step; with `hooks` around
/// every step (a distributed saturate). The caller shows the plan first
/// (`report::saturate::plan`).
pub fn saturate_with_hooks(
    cfg: &SaturateConfig,
    ctx: &RunContext,
    doc: &mut ResultDoc,
    sink: &ResultSink,
    hooks: Option<&dyn SweepHooks>,
) -> (Result<()>, Timing) {
    let est = estimate_seconds(cfg);
    let hi = est[2];
    let started = Instant::now();
    let mut fill_secs = 0.0;
    let outcome = run_all(cfg, ctx, doc, sink, &mut fill_secs, hooks);
    let sweep_secs = started.elapsed().as_secs_f64() - fill_secs;
    if outcome.is_ok() && sweep_secs > 1.2 * hi {
        doc.warn(Warning {
            code: WarningCode::OverEstimate,
            message: format!(
                "the sweeps took {}, more than 20 % over the estimate ({}): setup or draining the queues was slow",
                fmt_secs(sweep_secs),
                fmt_secs(hi)
            ),
            test: None,
        });
    }
    let steps = doc
        .tests
        .iter()
        .filter_map(|t| t.curve.as_ref())
        .map(Vec::len)
        .sum();
    let timing = Timing {
        est,
        sweep_secs,
        fill_secs,
        steps,
    };
    (outcome, timing)
}

/// Seconds the sweeps take: fewest, when the limit holds to --max-depth, and most (see
/// `step_bounds`). The prefill depends on the device and is timed separately.
pub fn estimate_seconds(cfg: &SaturateConfig) -> [f64; 3] {
    let per = step::step_seconds(cfg);
    // The fewest: the steps' ramp and measurement alone (setup and drain can be quick: an
    // allowance for them made "at least" longer than some sweeps took).
    let least = (cfg.ramp + cfg.step).as_secs_f64();
    cfg.sweeps.iter().fold([0.0; 3], |acc, s| {
        let start = s.start_depth();
        let (a, b, c) = step_bounds(start, cfg.max_depth.max(start));
        [
            acc[0] + a as f64 * least,
            acc[1] + b as f64 * per,
            acc[2] + c as f64 * per,
        ]
    })
}

/// Write every block of every writable target once (the fio latency method: never read what
/// was never written); `what` says which pass it is.
fn fill(
    cfg: &SaturateConfig,
    secs: &mut f64,
    targets: &mut [TestTarget],
    seed: u64,
    ctx: &RunContext,
    what: &str,
) -> Result<()> {
    for (t, _) in targets
        .iter_mut()
        .zip(&cfg.targets)
        .filter(|(_, plan)| plan.may_write)
    {
        let label = format!("{what} {}", t.path.display());
        let p = Progress::start(ctx.progress, &label);
        let t0 = Instant::now();
        let size = t.size;
        let mut cb = |f: f64| {
            p.set(
                f,
                &format!("{} written", fmt_size_iec((f * size as f64) as u64)),
            )
        };
        if let Err(e) = t.prefill(seed, &mut cb, &ctx.stop) {
            *secs += t0.elapsed().as_secs_f64();
            // Only a stop is "stopped": a failed write said so too ("done in 0.0 s: stopped").
            p.finish_failed(ctx.stop.check().is_err());
            ctx.stop.check()?;
            return Err(anyhow::Error::new(e).context(format!("{label} failed")));
        }
        let took = t0.elapsed().as_secs_f64();
        *secs += took;
        // The progress line already says "done in N s": the size and the speed only.
        p.finish(&format!(
            "{} ({} MB/s)",
            fmt_size_iec(size),
            crate::units::fmt_mb_per_s(size as f64 / took.max(1e-9))
        ));
    }
    Ok(())
}

fn open_targets(cfg: &SaturateConfig) -> Result<Vec<TestTarget>> {
    cfg.targets
        .iter()
        .map(|t| {
            match t.kind {
                TargetKind::Directory => TestTarget::create_in_dir(&t.path, t.size, cfg.keep),
                kind => TestTarget::open_existing(&t.path, kind, Some(t.size)),
            }
            .with_context(|| format!("cannot prepare {}", t.path.display()))
        })
        .collect()
}

fn run_all(
    cfg: &SaturateConfig,
    ctx: &RunContext,
    doc: &mut ResultDoc,
    sink: &ResultSink,
    fill_secs: &mut f64,
    hooks: Option<&dyn SweepHooks>,
) -> Result<()> {
    let mut targets = open_targets(cfg)?;
    let unfilled: Vec<String> = cfg
        .targets
        .iter()
        .filter(|p| !p.may_write)
        .map(|p| p.path.display().to_string())
        .collect();
    if !unfilled.is_empty() {
        doc.warn(Warning {
            code: WarningCode::NotPrefilled,
            message: format!(
                "{} not prefilled (no --allow-destroy): never-written or trimmed areas may read back without touching the media",
                unfilled.join(", ")
            ),
            test: None,
        });
    }
    fill(
        cfg,
        fill_secs,
        &mut targets,
        ctx.seed ^ cfg.seed,
        ctx,
        "prefill",
    )?;
    sink.save(doc)?;

    let mut preconditioned = false;
    for sweep in &cfg.sweeps {
        ctx.stop.check()?;
        if cfg.precondition && sweep.kind.writes() && !preconditioned {
            fill(
                cfg,
                fill_secs,
                &mut targets,
                cfg.seed ^ 0x00C0_FFEE,
                ctx,
                "precondition",
            )?;
            preconditioned = true;
        }
        let on = Sweep {
            cfg,
            sweep,
            targets: &targets,
            ctx,
            hooks,
        };
        *fill_secs += run_sweep(&on, doc, sink, preconditioned)?;
    }
    Ok(())
}

/// Method facts of one sweep, kept with the result (the fio latency method's honesty list).
fn method_params(
    cfg: &SaturateConfig,
    sweep: &SweepSpec,
    targets: &[TestTarget],
    preconditioned: bool,
) -> BTreeMap<String, String> {
    let mut p = BTreeMap::new();
    let join =
        |f: &dyn Fn(&TestTarget) -> String| targets.iter().map(f).collect::<Vec<_>>().join(",");
    if cfg.ranks > 1 {
        // Each rank's test file is in its own subdirectory of the shared target.
        p.insert("ranks".into(), cfg.ranks.to_string());
        let shared: Vec<String> = cfg
            .targets
            .iter()
            .map(|t| t.path.parent().unwrap_or(&t.path).display().to_string())
            .collect();
        p.insert("targets".into(), shared.join(","));
    } else {
        p.insert("targets".into(), join(&|t| t.path.display().to_string()));
    }
    p.insert("size_bytes".into(), join(&|t| t.size.to_string()));
    p.insert("prefilled".into(), join(&|t| t.prefilled.to_string()));
    p.insert("direct".into(), join(&|t| t.direct_ok.to_string()));
    p.insert(
        "preconditioned".into(),
        (preconditioned && sweep.kind.writes()).to_string(),
    );
    let caches: Vec<String> = cfg
        .targets
        .iter()
        .flat_map(|t| &t.caches)
        .map(|c| {
            format!(
                "{}={}{}",
                c.what,
                c.bytes,
                if c.assumed { " (assumed)" } else { "" }
            )
        })
        .collect();
    p.insert("caches".into(), caches.join("; "));
    p.insert(
        "recommended_size_bytes".into(),
        cfg.targets
            .iter()
            .map(|t| t.recommended.to_string())
            .collect::<Vec<_>>()
            .join(","),
    );
    p.insert("sweep".into(), sweep.kind.name().into());
    p.insert("jobs".into(), sweep.jobs.to_string());
    p.insert("bs_bytes".into(), cfg.bs.to_string());
    p.insert("max_depth".into(), cfg.max_depth.to_string());
    p.insert("limit_ns".into(), format!("{}", cfg.limit_ns));
    p.insert("statistic".into(), cfg.statistic.name().into());
    p.insert("aggregate".into(), cfg.aggregate.name().into());
    p.insert("step_duration_s".into(), cfg.step.as_secs_f64().to_string());
    p.insert("ramp_s".into(), cfg.ramp.as_secs_f64().to_string());
    p.insert("engine".into(), cfg.engine.name().into());
    if sweep.kind == SweepKind::Mixed {
        p.insert("mix_read_pct".into(), cfg.mix.to_string());
    }
    p
}

/// One sweep on this rank's targets.
struct Sweep<'a> {
    cfg: &'a SaturateConfig,
    sweep: &'a SweepSpec,
    targets: &'a [TestTarget],
    ctx: &'a RunContext,
    hooks: Option<&'a dyn SweepHooks>,
}

/// One sweep: its steady-state rounds (`--steadystate`), then the search. Returns the
/// seconds the steady-state rounds took (counted with the prefill, not the sweep's estimate).
fn run_sweep(
    on: &Sweep,
    doc: &mut ResultDoc,
    sink: &ResultSink,
    preconditioned: bool,
) -> Result<f64> {
    let Sweep {
        cfg,
        sweep,
        targets,
        ctx,
        hooks,
    } = *on;
    let name = sweep.name(cfg.mix);
    let groups = step::settings(cfg, sweep, &targets[0]);
    doc.tests.push(TestResult {
        name: name.clone(),
        family: "saturate".into(),
        config: (targets.len() > 1).then(|| format!("{} targets", targets.len())),
        direction: Some(
            match sweep.kind {
                SweepKind::Randread => "read",
                SweepKind::Randwrite => "write",
                SweepKind::Mixed => "mixed",
            }
            .into(),
        ),
        settings: groups.first().cloned(),
        groups: if groups.len() > 1 { groups } else { Vec::new() },
        params: method_params(cfg, sweep, targets, preconditioned),
        curve: Some(Vec::new()),
        ..Default::default()
    });
    let ti = doc.tests.len() - 1;
    let steady_secs = match &cfg.steady {
        Some(spec) if hooks.is_none() => steady_rounds(on, spec, doc, ti, sink)?,
        _ => 0.0,
    };
    let start = sweep.start_depth();
    let mut search = Search::new(start, cfg.max_depth.max(start), cfg.limit_ns);
    let mut index = 0u32;
    let mut next = search.next();
    // The judged latency of a step set aside for its CPU wait, until its depth is measured
    // again.
    let mut set_aside: Option<f64> = None;
    let mut steps = || -> Result<()> {
        loop {
            if let Some(h) = hooks {
                next = h.agree_next(next)?;
            }
            let Some((depth, phase)) = next else { break };
            index += 1;
            // A depth measured again says so (its first measurement's job thread waited for
            // a CPU).
            let again = if set_aside.is_some() { ", again" } else { "" };
            let label = format!(
                "{name} depth {depth} (step {index}, {}{again})",
                phase.name()
            );
            if let Some(h) = hooks {
                h.before_step()?;
            }
            let r = measure(cfg, sweep, depth, targets, ctx, index, &label);
            if let Some(h) = hooks {
                h.after_step(r.as_ref().ok().map(|s| &s.total))?;
            }
            let mut res = match r {
                Ok(r) => r,
                Err(e) => {
                    let interrupted = ctx.stop.is_set();
                    if !interrupted {
                        doc.tests[ti].error = Some(format!("depth {depth}: {e:#}"));
                    }
                    sink.save(doc)?;
                    return Err(e);
                }
            };
            note_step_warnings(on, &name, depth, &res, doc);
            res.point.detail.phase = phase.name().into();
            // A distributed step is judged on all ranks' I/Os together.
            let mut point = match hooks {
                Some(h) => h.judge(doc, ti, sweep, &res)?,
                None => res.point,
            };
            point.detail.phase = phase.name().into();
            if cfg.ranks > 1 {
                point.detail.total_iodepth = Some(total_depth(cfg, depth, sweep.jobs));
            }
            // A step in which no I/O completed has no latency (its 0 is no figure): every request
            // in flight took longer than the step, so it does not hold the limit. It was judged
            // as 0 ns: "0 IOPS at depth 4 with mean latency 0 ns <= 10 ms". So does a step with
            // the limit on the worst stream when one stream completed nothing.
            let obs = Observation {
                depth,
                iops: point.at.iops,
                latency_ns: step::judged_latency(&point, cfg.statistic, cfg.aggregate),
            };
            // A distributed step: contended when a job thread of any rank waited, as the
            // judged point says alike on every rank (each rank's own wait would split the
            // ranks' searches), so that all of them measure the depth again together.
            let contended = match hooks {
                Some(_) => point.detail.cpu_contended,
                None => waited_for_cpu(&res.total),
            };
            if !search.record_step(obs, contended) {
                // Set aside: the same depth is measured next (`search.next()`).
                if let Some(h) = hooks {
                    h.step_set_aside(doc, ti);
                }
                set_aside = Some(obs.latency_ns);
                next = search.next();
                continue;
            }
            point.detail.set_aside_latency_ns = set_aside.take();
            point.detail.cpu_contended = contended;
            point.within_limit = search.within(obs.latency_ns);
            if hooks.is_some() && ctx.progress != super::ProgressMode::Quiet {
                crate::eline!("{}", judged_line(&label, &point, cfg.ranks, cfg.statistic));
            }
            if let Some(c) = doc.tests[ti].curve.as_mut() {
                c.push(point);
            }
            if let Some(h) = hooks {
                h.step_recorded(doc, ti);
            }
            sink.save(doc)?;
            next = search.next();
        }
        Ok(())
    };
    // A stopped distributed sweep keeps the straggler findings of the steps it measured
    // (`step_recorded` added them to each save).
    steps()?;
    let outcome = search.outcome();
    let test = &mut doc.tests[ti];
    let curve = test.curve.clone().unwrap_or_default();
    let answer = answer_of(cfg, sweep, &outcome, &curve);
    test.summary
        .insert("iops".into(), crate::stats::summarize(&[answer.iops]));
    test.answer = Some(answer);
    if outcome.inconsistent {
        doc.warn(Warning {
            code: WarningCode::NoisyCurve,
            message: "a depth held the limit although a smaller depth broke it: the device (or the machine) is noisy; consider a longer --step-duration".into(),
            test: Some(name.clone()),
        });
    }
    if outcome.thrashed {
        doc.warn(Warning {
            code: WarningCode::Thrashing,
            message: "IOPS fell for two depth steps in a row: past the knee, more parallel requests only queue up".into(),
            test: Some(name.clone()),
        });
    }
    if let Some(h) = hooks {
        h.end_sweep(doc, ti)?;
    }
    sink.save(doc)?;
    Ok(steady_secs)
}

/// Steady state before a sweep: steps at `cfg.steady_depth` (rounds) until the last window
/// meets the rule or the maximum time has passed, recorded in the sweep's test. Returns the
/// seconds they took.
fn steady_rounds(
    on: &Sweep,
    spec: &crate::stats::steady_rounds::SteadySpec,
    doc: &mut ResultDoc,
    ti: usize,
    sink: &ResultSink,
) -> Result<f64> {
    let (cfg, sweep, targets, ctx) = (on.cfg, on.sweep, on.targets, on.ctx);
    let name = sweep.name(cfg.mix);
    let depth = cfg.steady_depth;
    let mut rounds = crate::stats::steady_rounds::SteadyRounds::new(spec);
    let t0 = Instant::now();
    while rounds.wants_more(t0.elapsed()) {
        ctx.stop.check()?;
        let n = rounds.rounds();
        let label = format!("{name} depth {depth} (steady-state round {n})");
        // Step indexes of the rounds stay clear of the sweep's own (1, 2, ...).
        let r = measure(cfg, sweep, depth, targets, ctx, 10_000 + n as u32, &label);
        let res = match r {
            Ok(r) => r,
            Err(e) => {
                let mut rec = rounds.record(t0.elapsed());
                rec.iodepth = Some(depth);
                doc.tests[ti].steady_state = Some(rec);
                sink.save(doc)?;
                return Err(e);
            }
        };
        note_step_warnings(on, &name, depth, &res, doc);
        rounds.push_run(&res.total);
        let mut rec = rounds.record(t0.elapsed());
        rec.iodepth = Some(depth);
        doc.tests[ti].steady_state = Some(rec);
        sink.save(doc)?;
    }
    if let Some(rec) = &doc.tests[ti].steady_state
        && let Some(w) = crate::stats::steady_rounds::not_reached_warning(rec, &name)
    {
        doc.warn(w);
    }
    Ok(t0.elapsed().as_secs_f64())
}

/// I/Os in flight in total at `depth`: on every target of every rank.
fn total_depth(cfg: &SaturateConfig, depth: u32, jobs: u32) -> u32 {
    depth * jobs * cfg.targets.len() as u32 * cfg.ranks.max(1)
}

/// The warnings of the step at `depth` of sweep `name`.
fn note_step_warnings(on: &Sweep, name: &str, depth: u32, res: &StepResult, doc: &mut ResultDoc) {
    let cfg = on.cfg;
    // The job threads of one step: the sweep's jobs on every target.
    let threads = on.sweep.jobs as usize * on.targets.len();
    for w in &res.warnings {
        if let Some(w) = step_warning(doc, name, depth, w) {
            doc.warn(w);
        }
    }
    if res.engines.iter().any(|e| e != cfg.engine.name()) {
        doc.warn(Warning {
            code: WarningCode::EngineFallback,
            message: format!(
                "the {} engine was not available for every job (ran: {}); depths above 1 were not really in flight",
                cfg.engine.name(),
                res.engines.join(", ")
            ),
            test: Some(name.to_string()),
        });
    }
    let busiest = res
        .total
        .cpu
        .as_ref()
        .map(|c| c.max_job_thread_pct)
        .unwrap_or(0.0);
    if busiest > CPU_BOUND_PCT && !given(doc, name, WarningCode::CpuBound) {
        doc.warn(Warning {
            code: WarningCode::CpuBound,
            message: format!(
                "from depth {depth} a job thread used {busiest:.0} % of a CPU: iolab may be the limit there; sweep --jobs too"
            ),
            test: Some(name.to_string()),
        });
    }
    if let Some(pct) = contention_pct(&res.total)
        && !given(doc, name, WarningCode::CpuContention)
    {
        doc.warn(Warning {
            code: WarningCode::CpuContention,
            message: cpu_wait::contention_message(
                &format!("from depth {depth} a job thread"),
                pct,
                threads,
            ),
            test: Some(name.to_string()),
        });
    }
}

/// The share of a step a job thread waited for a CPU, when over the `cpu-contention`
/// threshold: the step's latency may be the machine's rather than the device's.
fn contention_pct(total: &RunResult) -> Option<f64> {
    let waited = total.cpu.as_ref().and_then(|c| c.max_job_thread_wait_pct);
    waited.filter(|&p| p > cpu_wait::CPU_CONTENTION_PCT)
}

/// Did a job thread of the step wait for a CPU (its `cpu-contention`)?
pub fn waited_for_cpu(total: &RunResult) -> bool {
    contention_pct(total).is_some()
}

/// A step's warning as the sweep gives it. A cache-absorbed one holds at the depths after
/// it too: given once, from the first depth (a sweep on a FUSE file system gave one line
/// per step, each with its own figures and none naming its depth).
fn step_warning(doc: &ResultDoc, name: &str, depth: u32, w: &Warning) -> Option<Warning> {
    if w.code == WarningCode::CacheAbsorbed {
        return (!given(doc, name, WarningCode::CacheAbsorbed)).then(|| Warning {
            message: format!("from depth {depth}: {}", w.message),
            test: Some(name.to_string()),
            ..w.clone()
        });
    }
    Some(Warning {
        test: Some(name.to_string()),
        ..w.clone()
    })
}

/// One step with a progress bar that shows live IOPS.
fn measure(
    cfg: &SaturateConfig,
    sweep: &SweepSpec,
    depth: u32,
    targets: &[TestTarget],
    ctx: &RunContext,
    index: u32,
    label: &str,
) -> Result<StepResult> {
    let p = Progress::start(ctx.progress, label);
    let live = LiveCounters::default();
    let wanted = step::step_seconds(cfg);
    let r = std::thread::scope(|s| {
        let h = s.spawn(|| step::run_step(cfg, sweep, depth, targets, &ctx.stop, &live, index));
        let t0 = Instant::now();
        let mut last = (t0, 0u64);
        let mut sampler = LiveSampler::new(std::time::Duration::from_millis(500));
        let mut stopping = StopNotice::new();
        while !h.is_finished() {
            std::thread::sleep(std::time::Duration::from_millis(50));
            let ios = live.ios.load(std::sync::atomic::Ordering::Relaxed);
            let now = Instant::now();
            let rate = (ios - last.1) as f64 / (now - last.0).as_secs_f64().max(1e-3);
            last = (now, ios);
            let msg = stopping
                .check(&ctx.stop, &live, &p)
                .unwrap_or_else(|| format!("{} IOPS", fmt_thousands(rate)));
            p.set(t0.elapsed().as_secs_f64() / wanted, &msg);
            if let Some(pt) = sampler.sample(&live) {
                p.point(t0.elapsed().as_secs_f64() / wanted, &pt);
            }
        }
        h.join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the step thread panicked")))
    });
    match &r {
        // No I/O completed: no latency (it said "0 IOPS, mean 0 ns").
        Ok(s) if !s.point.at.completed_any() => p.finish("no I/O completed in the step"),
        Ok(s) => p.finish(&step_line(&s.point, cfg.ranks)),
        Err(_) => p.finish("stopped"),
    }
    r
}

/// What the progress says of a measured step. In a distributed sweep this is rank 0's own
/// step: it read "done in 2.6 s: 724 IOPS, mean 11.08 ms" under a 10 ms limit while the
/// totals that the search judged (1,985 IOPS, 8.01 ms) held it.
fn step_line(p: &CurvePoint, ranks: u32) -> String {
    format!(
        "{}{} IOPS, mean {}",
        if ranks > 1 { "on rank 0: " } else { "" },
        fmt_thousands(p.at.iops),
        crate::units::fmt_ns(p.at.lat_mean_ns)
    )
}

/// The progress line of a distributed step as judged: all ranks' totals and the verdict.
fn judged_line(
    label: &str,
    p: &CurvePoint,
    ranks: u32,
    statistic: crate::workload::saturate::Statistic,
) -> String {
    let lat = if p.at.completed_any() {
        format!(
            "{} {}",
            statistic.name(),
            crate::units::fmt_ns(pick(
                &crate::model::saturate::LatTriple {
                    mean_ns: p.at.lat_mean_ns,
                    p99_ns: p.at.lat_p99_ns,
                    p999_ns: p.at.lat_p999_ns,
                },
                statistic
            ))
        )
    } else {
        "no I/O completed".to_string()
    };
    format!(
        "iolab: {label}, all {ranks} ranks: {} IOPS, {lat}, {}",
        fmt_thousands(p.at.iops),
        if p.within_limit {
            "within the limit"
        } else {
            "over the limit"
        }
    )
}

/// The answer of a finished search, from the measured curve.
fn answer_of(cfg: &SaturateConfig, sweep: &SweepSpec, o: &Outcome, curve: &[CurvePoint]) -> Answer {
    let at = |d: u32| curve.iter().rev().find(|p| p.at.iodepth == d);
    let point = o.answer.and_then(|a| at(a.depth));
    // A step without a completed I/O is no peak ("peak_iodepth: 2" beside 0 IOPS).
    let peak = o.peak.and_then(|p| at(p.depth)).filter(|p| p.at.iops > 0.0);
    Answer {
        iops: point.map(|p| p.at.iops).unwrap_or(0.0),
        iodepth: point.map(|p| p.at.iodepth).unwrap_or(0),
        statistic: cfg.statistic.name().into(),
        latency_ns: point.and(o.answer).map(|a| a.latency_ns),
        limit_ns: cfg.limit_ns,
        knee_iodepth: o.knee,
        thrashed: o.thrashed,
        detail: AnswerDetail {
            jobs: sweep.jobs,
            total_iodepth: point
                .map(|p| total_depth(cfg, p.at.iodepth, p.at.jobs))
                .unwrap_or(0),
            bw_bytes_per_s: point.map(|p| p.at.bw_bytes_per_s).unwrap_or(0.0),
            aggregate: cfg.aggregate.name().into(),
            found: point.is_some(),
            limit_crossed: o.first_bad.is_some(),
            first_bad_iodepth: o.first_bad,
            peak_iops: peak.map(|p| p.at.iops).unwrap_or(0.0),
            peak_iodepth: peak.map(|p| p.at.iodepth).unwrap_or(0),
            ranks: (cfg.ranks > 1).then_some(cfg.ranks),
            contended_iodepths: o.contended.clone(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A distributed step's progress showed rank 0's own figures as the step's ("done in
    /// 2.6 s: 724 IOPS, mean 11.08 ms" under a 10 ms limit) while the totals the search
    /// judged held it: they are now said to be rank 0's, and the judged totals follow.
    #[test]
    fn a_distributed_step_says_whose_figures_it_shows() {
        let mut p = CurvePoint::default();
        p.at.iops = 724.0;
        p.at.lat_mean_ns = 11.08e6;
        assert_eq!(step_line(&p, 1), "724 IOPS, mean 11.08 ms");
        assert_eq!(step_line(&p, 2), "on rank 0: 724 IOPS, mean 11.08 ms");
        let mut all = CurvePoint::default();
        all.at.iops = 1985.0;
        all.at.lat_mean_ns = 8.01e6;
        all.at.lat_p99_ns = 103e6;
        all.within_limit = true;
        let statistic = crate::workload::saturate::Statistic::Mean;
        assert_eq!(
            judged_line("randread depth 8 (step 4, sweep)", &all, 2, statistic),
            "iolab: randread depth 8 (step 4, sweep), all 2 ranks: 1,985 IOPS, mean 8.01 ms, within the limit"
        );
        all.within_limit = false;
        let p99 = crate::workload::saturate::Statistic::P99;
        assert!(judged_line("d", &all, 2, p99).ends_with("p99 103.00 ms, over the limit"));
    }

    #[test]
    fn a_cache_absorbed_step_is_told_once_from_its_depth() {
        let mut doc = ResultDoc::new("saturate", Vec::new(), Default::default());
        let w = |m: &str| Warning {
            code: WarningCode::CacheAbsorbed,
            message: m.into(),
            test: None,
        };
        for (depth, m) in [(2, "wrote 8 MiB, saw 1 MiB"), (4, "wrote 9 MiB, saw 2 MiB")] {
            if let Some(w) = step_warning(&doc, "RND4K randwrite", depth, &w(m)) {
                doc.warn(w);
            }
        }
        assert_eq!(doc.warnings.len(), 1, "{:?}", doc.warnings);
        assert_eq!(
            doc.warnings[0].message,
            "from depth 2: wrote 8 MiB, saw 1 MiB"
        );
        // Another sweep gets its own; other codes pass as they are.
        assert!(step_warning(&doc, "other", 1, &w("x")).is_some());
        let mut noisy = w("y");
        noisy.code = WarningCode::Noisy;
        assert!(step_warning(&doc, "RND4K randwrite", 8, &noisy).is_some());
    }
}

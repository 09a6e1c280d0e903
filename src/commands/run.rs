//! `iolab run`: the quick disk test. Options -> target -> prefill -> tests x repeats ->
//! result file after every test -> table.

use std::path::Path;

use anyhow::{Context, Result};

use super::family::{DirFamily, Family, Output, execute as execute_family};
use crate::cli::run::RunArgs;
use crate::config::RunConfig;
use crate::model::{ResultDoc, ResultSink, TestResult, Warning, WarningCode};
use crate::runner::RunContext;
use crate::runner::block::{LiveCounters, LiveSampler, run_block_test, settings_of};
use crate::runner::progress::Progress;
use crate::runner::target::{TargetKind, TestTarget};
use crate::stats::repeat::{spread_warnings, summarize_test};
use crate::stats::steady_rounds::{SteadyRounds, not_reached_warning};
use crate::sysinfo::diskstats::{PhaseCounters, write_amplification};

pub fn execute(args: &RunArgs, argv: Vec<String>) -> Result<i32> {
    // Under mpirun/srun with several ranks: the distributed run (src/dist).
    #[cfg(feature = "mpi")]
    if crate::dist::launched().is_some_and(|l| l.size > 1) {
        if args.steady.steadystate.is_some() {
            return Err(crate::error::UsageError::new(
                "--steadystate is not available in a distributed run (each rank's drive reaches it on its own); run it on each host alone",
            )
            .into());
        }
        return crate::dist::run::execute(args, argv);
    }
    execute_family(RunFamily::from_args(args)?, argv)
}

/// `iolab run` as a family: the command line and the matrix's `run:` workloads.
pub struct RunFamily {
    cfg: RunConfig,
}

impl Family for RunFamily {
    const NAME: &'static str = "run";

    fn target(&self) -> Option<&Path> {
        Some(&self.cfg.target)
    }

    fn output(&self) -> Output<'_> {
        Output::to(self.cfg.json, self.cfg.output.as_deref())
    }

    fn measure(&mut self, ctx: &RunContext, doc: &mut ResultDoc, sink: &ResultSink) -> Result<()> {
        run_with(&self.cfg, ctx, doc, sink)
    }

    fn render(&self, doc: &ResultDoc) -> String {
        crate::report::table::render_block_table(doc)
    }
}

/// Run every test of `cfg` into `doc`, saving after each test. Used by `iolab run` and by
/// the matrix's `run:` workloads.
pub fn run_with(
    cfg: &RunConfig,
    ctx: &RunContext,
    doc: &mut ResultDoc,
    sink: &ResultSink,
) -> Result<()> {
    run_with_hooks(cfg, ctx, doc, sink, None)
}

/// `run_with`, with a distributed run's hooks around every measured run (see `RunHooks`).
pub fn run_with_hooks(
    cfg: &RunConfig,
    ctx: &RunContext,
    doc: &mut ResultDoc,
    sink: &ResultSink,
    hooks: Option<&dyn crate::runner::RunHooks>,
) -> Result<()> {
    if let Some(note) = &cfg.size_note {
        crate::eline!("iolab: {note}");
    }
    let mut target = match cfg.kind {
        TargetKind::Directory => TestTarget::create_in_dir(&cfg.target, cfg.size, cfg.keep)
            .with_context(|| format!("cannot create the test file in {}", cfg.target.display()))?,
        kind => TestTarget::open_existing(&cfg.target, kind, Some(cfg.size))
            .with_context(|| format!("cannot open {}", cfg.target.display()))?,
    };
    if cfg.verify {
        target.verify = Some(crate::engine::verify::Verifier::from_seed(cfg.seed));
    }
    let direct_requested = cfg.tests.iter().any(|t| t.groups.iter().any(|g| g.direct));
    if let Some(w) = target.direct_warning(direct_requested) {
        doc.warn(w);
    }
    let buffered = !direct_requested || !target.direct_ok;
    if buffered && target.size < 2 * doc.environment.ram_bytes {
        doc.warn(Warning {
            code: WarningCode::PageCache,
            message: format!(
                "buffered I/O on {} with a test size under 2x RAM ({}): the page cache, not the device, may decide the result; use --direct true or --size above {}",
                crate::units::fmt_size_iec(target.size),
                crate::units::fmt_size_iec(doc.environment.ram_bytes),
                crate::units::fmt_size_iec(2 * doc.environment.ram_bytes)
            ),
            test: None,
        });
    }
    let device = doc.environment.block_device.clone();
    if device.is_none()
        && let Some(w) = crate::sysinfo::resolve::no_device_warning(&cfg.target)
    {
        doc.warn(w);
    }

    // Prefill: every block written once, so reads never measure holes. `--precondition`
    // writes it all once more (the SNIA PTS's two sequential passes).
    if cfg.prefill {
        let passes: &[(&str, &str, u64)] = if cfg.precondition {
            &[
                ("prefill", "writing every block once", 0),
                (
                    "precondition",
                    "writing every block a second time",
                    0x00C0_FFEE,
                ),
            ]
        } else {
            &[("prefill", "writing every block once", 0)]
        };
        for &(label, what, salt) in passes {
            let p = Progress::start(ctx.progress, label);
            let mut cb = |f: f64| p.set(f, what);
            target
                .prefill(ctx.seed ^ salt, &mut cb, &ctx.stop)
                .map_err(|e| {
                    if e.kind() == std::io::ErrorKind::Interrupted {
                        anyhow::Error::new(ctx.stop.check().err().unwrap_or(
                            crate::error::Interrupted {
                                signal: libc::SIGINT,
                                signal_name: "SIGINT",
                            },
                        ))
                    } else {
                        anyhow::Error::new(e).context(format!("{label} failed"))
                    }
                })?;
            p.finish(&crate::units::fmt_size_iec(target.size));
        }
    } else if cfg.tests.iter().any(|t| t.reads()) {
        doc.warn(Warning {
            code: WarningCode::NotPrefilled,
            message: "the target was not prefilled (a device without --allow-destroy, or --prefill false): never-written or trimmed areas may read back without touching the media".into(),
            test: None,
        });
    }

    let qd1 = cfg.tests.iter().any(|t| {
        t.groups
            .iter()
            .all(|g| g.iodepth == 1 && g.engine != crate::engine::EngineKind::Null)
    });
    if qd1 && let Some(w) = crate::sysinfo::vcpu_halt_warning(&doc.environment) {
        doc.warn(w);
    }

    // A write cache a saved `iolab sustain` result found on this drive.
    let known_cache = cfg
        .output
        .as_deref()
        .and_then(|d| crate::runner::write_cache::known_cache(d, &doc.environment));

    // Runs so far, over all tests: `--pause` idles before every run but the first.
    let mut runs_started = 0u32;
    for spec in &cfg.tests {
        ctx.stop.check()?;
        let targets: Vec<&TestTarget> = spec.groups.iter().map(|_| &target).collect();
        let mut test = TestResult {
            name: spec.name.clone(),
            family: "block".into(),
            direction: Some(spec.groups[0].rw.direction().into()),
            settings: Some(settings_of(
                &spec.groups[0],
                &target,
                spec.groups[0].engine.name(),
            )),
            headline: Some(cfg.headline.into()),
            ..Default::default()
        };
        if let Some(s) = test.settings.as_mut()
            && !cfg.pause.is_zero()
        {
            s.pause_s = Some(cfg.pause.as_secs_f64());
        }
        if cfg.verify {
            test.params.insert("verify".into(), "true".into());
        }
        if cfg.precondition {
            test.params.insert("preconditioned".into(), "true".into());
        }
        // `--steadystate`: rounds until steady, instead of the repeats.
        let mut steady = cfg.steady.as_ref().map(SteadyRounds::new);
        let rounds_started = std::time::Instant::now();
        if spec.groups.len() > 1 {
            test.groups = spec
                .groups
                .iter()
                .map(|g| settings_of(g, &target, g.engine.name()))
                .collect();
        }
        let mut values = Vec::new();
        let mut run_index = 0u32;
        let mut failure = None;
        loop {
            let more = match &steady {
                Some(r) => r.wants_more(rounds_started.elapsed()),
                None => cfg.repeat.wants_more(&values),
            };
            let more = match hooks {
                Some(k) => k.agree_more(more)?,
                None => more,
            };
            if !more {
                break;
            }
            if runs_started > 0 && !cfg.pause.is_zero() {
                let label = format!("pause {} s (--pause)", cfg.pause.as_secs_f64());
                let p = Progress::start(ctx.progress, &label);
                ctx.stop.sleep(cfg.pause)?;
                p.finish("idle");
            }
            runs_started += 1;
            run_index += 1;
            let label = match &steady {
                Some(_) => format!("{} [round {}, until steady]", spec.name, run_index - 1),
                None => format!("{} [{}/{}]", spec.name, run_index, cfg.repeat.max_runs()),
            };
            let p = Progress::start(ctx.progress, &label);
            let live = LiveCounters::default();
            // A distributed run stops its workers through its own flag (stonewall), which
            // also carries the signals of `ctx.stop`.
            let wall = crate::os::signals::StopFlag::new();
            let stop = if hooks.is_some() { &wall } else { &ctx.stop };
            if let Some(k) = hooks {
                k.before_run(spec.groups[0].duration.is_none())?;
            }
            let phase = PhaseCounters::start(device.as_deref());
            let idle =
                crate::sysinfo::cpuidle::idle_entries().map(|n| (n, std::time::Instant::now()));
            let out = std::thread::scope(|s| {
                let h = s.spawn(|| run_block_test(spec, &targets, stop, Some(&live), run_index));
                let total = spec.groups[0]
                    .duration
                    .map(|d| (d + spec.groups[0].ramp).as_secs_f64());
                let t0 = std::time::Instant::now();
                let mut last_bytes = 0u64;
                let mut last_t = t0;
                let mut sampler = LiveSampler::new(std::time::Duration::from_millis(500));
                while !h.is_finished() {
                    if let Some(k) = hooks {
                        std::thread::sleep(k.poll_interval());
                        if let Some(sig) = ctx.stop.signal() {
                            wall.raise(sig);
                        }
                        if k.poll() {
                            wall.stonewall();
                        }
                        if last_t.elapsed() < std::time::Duration::from_millis(100) {
                            continue;
                        }
                    } else {
                        std::thread::sleep(std::time::Duration::from_millis(100));
                    }
                    let b = live.bytes.load(std::sync::atomic::Ordering::Relaxed);
                    let now = std::time::Instant::now();
                    let rate = (b - last_bytes) as f64 / (now - last_t).as_secs_f64().max(1e-3);
                    last_bytes = b;
                    last_t = now;
                    let frac = match (total, spec.groups[0].io_size) {
                        (Some(t), _) => t0.elapsed().as_secs_f64() / t,
                        (None, Some(per_job)) => {
                            let all: u64 =
                                spec.groups.iter().map(|g| per_job * g.jobs as u64).sum();
                            b as f64 / all.max(1) as f64
                        }
                        (None, None) => 0.0,
                    };
                    p.set(frac, &format!("{} MB/s", crate::units::fmt_mb_per_s(rate)));
                    if let Some(pt) = sampler.sample(&live) {
                        p.point(frac, &pt);
                    }
                }
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("the test thread panicked")))
            });
            // Idle-state entries and the wall time they were counted over, read as the run
            // ends (before a distributed run's ranks wait for each other).
            let idle = idle.and_then(|(before, t0)| {
                let after = crate::sysinfo::cpuidle::idle_entries()?;
                Some((after.saturating_sub(before), t0.elapsed().as_secs_f64()))
            });
            if let Some(k) = hooks {
                k.after_run(out.as_ref().ok().map(|o| &o.total))?;
            }
            match out {
                Ok(mut o) => {
                    if let (Some((entries, secs)), Some(iops)) = (idle, o.total.iops) {
                        o.total.idle_entries_per_io =
                            crate::sysinfo::cpuidle::per_io(entries, secs, iops);
                    }
                    if let Some(ph) = &phase
                        && let Some(dc) = ph.finish()
                    {
                        o.total.write_amplification = write_amplification(&dc, o.all_write_bytes);
                        if let Some(mut w) = crate::sysinfo::diskstats::cache_absorbed_warning(
                            &dc,
                            o.all_write_bytes,
                        ) {
                            w.test = Some(spec.name.clone());
                            doc.warn(w);
                        }
                        o.total.device = Some(dc);
                    }
                    let cpu_pct = o
                        .total
                        .cpu
                        .as_ref()
                        .map(|c| c.max_job_thread_pct)
                        .unwrap_or(0.0);
                    if o.total.huge_page_buffers == Some(false)
                        && target.direct_ok
                        && spec.groups.iter().any(|g| g.direct)
                    {
                        doc.warn(crate::sysinfo::hugepages::small_pages_warning(&spec.name));
                    }
                    if cpu_pct > crate::runner::block::CPU_BOUND_PCT {
                        doc.warn(Warning {
                            code: WarningCode::CpuBound,
                            message: format!(
                                "a job thread used {cpu_pct:.0} % of a CPU: iolab, not the device, may have been the limit; add --jobs or use --engine uring with a higher --iodepth"
                            ),
                            test: Some(spec.name.clone()),
                        });
                    }
                    for w in o.warnings {
                        doc.warn(w);
                    }
                    if let Some(engine) = o.engines.first()
                        && let Some(s) = test.settings.as_mut()
                    {
                        s.engine = engine.clone();
                    }
                    for (g, e) in test.groups.iter_mut().zip(&o.engines) {
                        g.engine = e.clone();
                    }
                    let headline = o.total.iops.unwrap_or(0.0);
                    p.finish(&format!(
                        "{} MB/s, {} IOPS",
                        crate::units::fmt_mb_per_s(o.total.bw_bytes_per_s.unwrap_or(0.0)),
                        crate::units::fmt_thousands(headline)
                    ));
                    values.push(headline);
                    if let Some(r) = steady.as_mut() {
                        r.push_run(&o.total);
                    }
                    test.runs.push(o.total);
                }
                Err(e) => {
                    p.finish("failed");
                    failure = Some(e);
                    break;
                }
            }
        }
        match &steady {
            Some(r) => {
                let rec = r.record(rounds_started.elapsed());
                // The summary (and its spread warnings) covers the steady window, or the
                // last window's worth of rounds when it was not reached: the rounds before
                // describe a drive that was still changing. Every round stays in `runs`.
                let mut judged = TestResult {
                    runs: test
                        .runs
                        .get(rec.summary_rounds())
                        .unwrap_or_default()
                        .to_vec(),
                    ..TestResult::default()
                };
                summarize_test(&mut judged);
                test.summary = judged.summary;
                judged.name = test.name.clone();
                judged.summary = test.summary.clone();
                if failure.is_none() {
                    for w in spread_warnings(&judged, &cfg.repeat)
                        .into_iter()
                        .filter(|w| w.code != WarningCode::NoSpread)
                    {
                        doc.warn(w);
                    }
                    if !ctx.stop.is_set()
                        && let Some(w) = not_reached_warning(&rec, &spec.name)
                    {
                        doc.warn(w);
                    }
                }
                test.steady_state = Some(rec);
            }
            None => {
                summarize_test(&mut test);
                for w in spread_warnings(&test, &cfg.repeat) {
                    doc.warn(w);
                }
            }
        }
        if let Some(e) = &failure {
            test.error = Some(format!("{e:#}"));
        }
        // Writes that may have gone into the drive's write cache.
        if let Some(w) = crate::runner::write_cache::cliff_warning(&test, &cfg.target) {
            doc.warn(w);
        } else if let Some(w) = known_cache
            .as_ref()
            .and_then(|k| crate::runner::write_cache::known_cache_warning(k, &test))
        {
            doc.warn(w);
        }
        doc.tests.push(test);
        sink.save(doc)?;
        if let (Some(k), Some(t)) = (hooks, doc.tests.last()) {
            k.after_test(t, &doc.warnings)?;
        }
        if let Some(e) = failure {
            return Err(e);
        }
    }
    Ok(())
}

/// `run:KEY=VALUE:...` for the matrix: any `iolab run` flag, e.g. `run:preset=real:duration=2s`.
impl DirFamily for RunFamily {
    type Args = RunArgs;

    fn reference(
        params: &std::collections::BTreeMap<String, String>,
    ) -> Result<(RunArgs, String), crate::error::UsageError> {
        if params.contains_key("target") || params.contains_key("output") {
            return Err(crate::error::UsageError::new(
                "workload run: target and output are set by the matrix",
            ));
        }
        let cmd = crate::config::reference::parse_family_args(
            &["run"],
            params,
            &["keep", "no-save", "json"],
        )?;
        let crate::cli::Command::Run(args) = cmd else {
            unreachable!("parsed as run")
        };
        Ok((args, super::family::reference_label("run", params)))
    }

    fn retarget(args: &mut RunArgs, dir: &Path) {
        args.target = dir.to_path_buf();
        args.out.no_save = true;
        args.keep = false;
    }

    fn from_args(args: &RunArgs) -> Result<RunFamily> {
        Ok(RunFamily {
            cfg: RunConfig::from_args(args)?,
        })
    }
}

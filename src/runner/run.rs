//! Executes `iolab run` (and the matrix's `run:` workloads, and every MPI rank of a
//! distributed run): the target, the prefill, then for every test its runs (repeats or
//! steady-state rounds) through `block::run_block_test`, each run watched for progress and,
//! in a distributed run, for the other ranks; the result document is saved after each test.

use std::path::PathBuf;

use anyhow::{Context, Result};

use super::block::{
    BlockRunOutput, LiveCounters, LiveSampler, StopNotice, run_block_test, settings_of,
};
use super::progress::Progress;
use super::target::{TargetKind, TestTarget};
use super::{RunContext, given};
use crate::model::device::DeviceCounters;
use crate::model::{ResultDoc, ResultSink, RunResult, TestResult, Warning, WarningCode};
use crate::os::cpu_wait;
use crate::stats::repeat::{RepeatMode, spread_warnings, summarize_test};
use crate::stats::steady_rounds::{SteadyRounds, SteadySpec, not_reached_warning};
use crate::workload::block::BlockTestSpec;
use crate::workload::presets::Preset;

/// Validated `iolab run` (checked by `cli::run`, `RunConfig::from_args`).
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub target: PathBuf,
    pub kind: TargetKind,
    /// Test file size / tested part of the device, a whole number of the largest block.
    pub size: u64,
    /// Said to the user when the size was clamped.
    pub size_note: Option<String>,
    /// The engine keeps one I/O in flight per job and the preset's deeper tests run at Q1:
    /// a warning of the result.
    pub depth_note: Option<String>,
    pub tests: Vec<BlockTestSpec>,
    pub repeat: RepeatMode,
    /// `median` or `max` (peak).
    pub headline: &'static str,
    pub preset: Option<Preset>,
    pub keep: bool,
    /// Writes (and the prefill) are allowed on this target.
    pub may_write: bool,
    /// `--json`, `--output`, `--no-save`, `--quiet`.
    pub out: crate::model::Delivery,
    /// `--verify`: seal writes, check reads.
    pub verify: bool,
    /// Write every block before measuring.
    pub prefill: bool,
    pub seed: u64,
    /// `--pause`: idle time before every run but the first.
    pub pause: std::time::Duration,
    /// `--steadystate`: runs (rounds) of each test until steady, in place of `repeat`.
    pub steady: Option<SteadySpec>,
    /// `--precondition`: a second sequential pass over the span after the prefill.
    pub precondition: bool,
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
    hooks: Option<&dyn super::RunHooks>,
) -> Result<()> {
    if let Some(note) = &cfg.size_note {
        crate::eline!("iolab: {note}");
    }
    if let Some(note) = &cfg.depth_note {
        doc.warn(Warning {
            code: WarningCode::Engine,
            message: note.clone(),
            test: None,
        });
    }
    let mut target = open_target(cfg, doc)?;
    if cfg.prefill {
        prefill(cfg, ctx, &mut target)?;
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
    let mut t = TestRunner {
        cfg,
        ctx,
        hooks,
        target: &target,
        device: doc.environment.block_device.clone(),
        // A write cache a saved `iolab sustain` result found on this drive.
        known_cache: cfg
            .out
            .dir
            .as_deref()
            .and_then(|d| super::write_cache::known_cache(d, &doc.environment)),
        runs_started: 0,
    };
    for spec in &cfg.tests {
        ctx.stop.check()?;
        let (test, failure) = t.test(spec, doc)?;
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

/// The test file (made in a directory) or the device or file named, and what the document
/// should say about it before anything runs.
fn open_target(cfg: &RunConfig, doc: &mut ResultDoc) -> Result<TestTarget> {
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
    let page_cache_warned = buffered && target.size < 2 * doc.environment.ram_bytes;
    if page_cache_warned {
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
    // saturate's rule (10x the caches in front of the target); the page cache is left to
    // the `page-cache` warning above when that one was given. A device cache whose size is
    // only assumed counts when the whole test fits in it: at 10x it would flag the default
    // 1 GiB test (CrystalDiskMark's size) on nearly every SSD, and a warning on every run is
    // one nobody reads.
    let mut caches = crate::sysinfo::caches::detect_caches(&cfg.target, !buffered);
    if page_cache_warned {
        caches.retain(|c| !c.is_page_cache());
    }
    crate::sysinfo::caches::keep_assumed_only_when_holding(&mut caches, target.size);
    if let Some(w) = crate::sysinfo::caches::small_test_warning(target.size, &cfg.target, &caches) {
        doc.warn(w);
    }
    if doc.environment.block_device.is_none()
        && let Some(w) = crate::sysinfo::resolve::no_device_warning(&cfg.target)
    {
        doc.warn(w);
    }
    Ok(target)
}

/// Every block written once, so reads never measure holes; `--precondition` writes it all
/// once more (the SNIA PTS's two sequential passes).
fn prefill(cfg: &RunConfig, ctx: &RunContext, target: &mut TestTarget) -> Result<()> {
    let once = ("prefill", "writing every block once", 0);
    let again = (
        "precondition",
        "writing every block a second time",
        0x00C0_FFEE,
    );
    let passes: &[(&str, &str, u64)] = if cfg.precondition {
        &[once, again]
    } else {
        &[once]
    };
    for &(label, what, salt) in passes {
        let p = Progress::start(ctx.progress, label);
        let mut cb = |f: f64| p.set(f, what);
        if let Err(e) = target.prefill(ctx.seed ^ salt, &mut cb, &ctx.stop) {
            let stopped = e.kind() == std::io::ErrorKind::Interrupted;
            // Its line ends too ("iolab: prefill ..." was left without an end); the error
            // is said once, as the command's.
            p.finish_failed(stopped);
            return Err(if stopped {
                anyhow::Error::new(ctx.stop.check().err().unwrap_or(crate::error::Interrupted {
                    signal: libc::SIGINT,
                    signal_name: "SIGINT",
                }))
            } else {
                anyhow::Error::new(e).context(format!("{label} failed"))
            });
        }
        p.finish(&crate::units::fmt_size_iec(target.size));
    }
    Ok(())
}

/// A run's output and the device's counters over it.
type Measured = (BlockRunOutput, Option<DeviceCounters>);

/// What stays the same over the tests of one `run_with_hooks`.
struct TestRunner<'a> {
    cfg: &'a RunConfig,
    ctx: &'a RunContext,
    hooks: Option<&'a dyn super::RunHooks>,
    target: &'a TestTarget,
    device: Option<String>,
    known_cache: Option<super::write_cache::KnownCache>,
    /// Runs so far, over all tests: `--pause` idles before every run but the first.
    runs_started: u32,
}

impl TestRunner<'_> {
    /// One test: its runs until the repeats (or the steady-state rounds) are done, then its
    /// summary and warnings. A failed run ends the test; its error comes back beside the
    /// test, which is saved with what it measured.
    fn test(
        &mut self,
        spec: &BlockTestSpec,
        doc: &mut ResultDoc,
    ) -> Result<(TestResult, Option<anyhow::Error>)> {
        let cfg = self.cfg;
        let mut test = self.new_test(spec);
        // `--steadystate`: rounds until steady, instead of the repeats.
        let mut steady = cfg.steady.as_ref().map(SteadyRounds::new);
        let rounds_started = std::time::Instant::now();
        let mut values = Vec::new();
        // Bytes each run wrote in its ramp, beside `test.runs`: a cache fills from the
        // test's first write, not from the window's.
        let mut ramp_written = Vec::new();
        let mut run_index = 0u32;
        let mut failure = None;
        loop {
            let more = match &steady {
                Some(r) => r.wants_more(rounds_started.elapsed()),
                None => cfg.repeat.wants_more(&values),
            };
            let more = match self.hooks {
                Some(k) => k.agree_more(more)?,
                None => more,
            };
            if !more {
                break;
            }
            if self.runs_started > 0 && !cfg.pause.is_zero() {
                let label = format!("pause {} s (--pause)", cfg.pause.as_secs_f64());
                let p = Progress::start(self.ctx.progress, &label);
                self.ctx.stop.sleep(cfg.pause)?;
                p.finish("idle");
            }
            self.runs_started += 1;
            run_index += 1;
            let label = match &steady {
                Some(_) => format!("{} [round {}, until steady]", spec.name, run_index - 1),
                None => format!("{} [{}/{}]", spec.name, run_index, cfg.repeat.max_runs()),
            };
            let p = Progress::start(self.ctx.progress, &label);
            match self.one_run(spec, run_index, &p)? {
                Ok(o) => {
                    ramp_written.push(o.0.all_write_bytes.saturating_sub(o.0.write_bytes));
                    let total = self.absorb(spec, o, &mut test, doc);
                    p.finish(&format!(
                        "{}{} MB/s, {} IOPS",
                        // Only rank 0 shows progress, its own figures: the ranks' totals
                        // come with the table.
                        if self.hooks.is_some() {
                            "on rank 0: "
                        } else {
                            ""
                        },
                        crate::units::fmt_mb_per_s(total.bw_bytes_per_s.unwrap_or(0.0)),
                        crate::units::fmt_thousands(total.iops.unwrap_or(0.0))
                    ));
                    values.push(total.iops.unwrap_or(0.0));
                    if let Some(r) = steady.as_mut() {
                        r.push_run(&total);
                    }
                    test.runs.push(total);
                }
                Err(e) => {
                    p.finish(crate::error::stopped_or_failed(&e));
                    failure = Some(e);
                    break;
                }
            }
        }
        match &steady {
            Some(r) => {
                let warn = failure.is_none();
                self.summarize_steady(r, rounds_started, &mut test, doc, warn)
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
        named_as_ran(spec, &mut test, &mut doc.warnings);
        // Writes that may have gone into the drive's write cache (RAM has none).
        let suspected = super::write_cache::may_have_write_cache(&doc.environment)
            .then(|| {
                super::write_cache::cliff_warning(&test, &ramp_written, &cfg.target).or_else(|| {
                    self.known_cache
                        .as_ref()
                        .and_then(|k| super::write_cache::known_cache_warning(k, &test))
                })
            })
            .flatten();
        if let Some(w) = suspected {
            doc.warn(w);
        }
        Ok((test, failure))
    }

    /// The test's result before its first run: name, settings, the flags that mark it.
    fn new_test(&self, spec: &BlockTestSpec) -> TestResult {
        let cfg = self.cfg;
        let g0 = &spec.groups[0];
        let mut test = TestResult {
            name: spec.name.clone(),
            family: "block".into(),
            direction: Some(g0.rw.direction().into()),
            settings: Some(settings_of(g0, self.target, g0.engine.name())),
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
        if spec.groups.len() > 1 {
            test.groups = spec
                .groups
                .iter()
                .map(|g| settings_of(g, self.target, g.engine.name()))
                .collect();
        }
        test
    }

    /// One measured run on its own thread, while this one shows progress and, in a
    /// distributed run, watches the other ranks. The outer `Result` is the ranks'
    /// messaging, the inner one the run's.
    fn one_run(
        &self,
        spec: &BlockTestSpec,
        run_index: u32,
        p: &Progress,
    ) -> Result<Result<Measured>> {
        let (ctx, hooks) = (self.ctx, self.hooks);
        let targets: Vec<&TestTarget> = spec.groups.iter().map(|_| self.target).collect();
        let live = LiveCounters::default();
        // A distributed run stops its workers through its own flag (stonewall), which
        // also carries the signals of `ctx.stop`.
        let wall = crate::os::signals::StopFlag::new();
        let stop = if hooks.is_some() { &wall } else { &ctx.stop };
        if let Some(k) = hooks {
            k.before_run(spec.groups[0].duration.is_none())?;
        }
        let devices = [self.device.as_deref()];
        let idle = crate::sysinfo::cpuidle::idle_entries().map(|n| (n, std::time::Instant::now()));
        let out = std::thread::scope(|s| {
            let h =
                s.spawn(|| run_block_test(spec, &targets, &devices, stop, Some(&live), run_index));
            let mut watch = Watch::new(spec);
            let mut stopping = StopNotice::new();
            while !h.is_finished() {
                if let Some(k) = hooks {
                    std::thread::sleep(k.poll_interval());
                    if let Some(sig) = ctx.stop.signal() {
                        wall.raise(sig);
                    }
                    if k.poll() {
                        wall.stonewall();
                    }
                    if watch.last_t.elapsed() < std::time::Duration::from_millis(100) {
                        continue;
                    }
                } else {
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                let stop_msg = stopping.check(&ctx.stop, &live, p);
                watch.show(spec, &live, p, stop_msg);
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
            let run = out.as_ref().ok().map(|o| &o.total);
            k.after_run(run, run.is_some_and(|r| cut_short(spec, r)))?;
        }
        Ok(out.map(|mut o| {
            if let (Some((entries, secs)), Some(iops)) = (idle, o.total.iops) {
                o.total.idle_entries_per_io = crate::sysinfo::cpuidle::per_io(entries, secs, iops);
            }
            // The device's writes against the jobs', over the same span (the whole run).
            let device = o.devices.first().cloned().flatten();
            o.total.write_amplification = o.write_amplification(0);
            (o, device)
        }))
    }

    /// A run's output into the test and the document: device counters, the warnings the
    /// run raised or that its figures call for, the engines as they ran. The run's total.
    fn absorb(
        &self,
        spec: &BlockTestSpec,
        (o, device): Measured,
        test: &mut TestResult,
        doc: &mut ResultDoc,
    ) -> RunResult {
        let mut total = o.total;
        // The null engine does no I/O: it is CPU-bound by design (it measures iolab itself),
        // and its device saw nothing because nothing was sent, not because a cache answered.
        let null = spec
            .groups
            .iter()
            .all(|g| g.engine == crate::engine::EngineKind::Null);
        if let Some(dc) = device {
            // Once per test, as a cache that served reads: the first run a cache absorbed.
            if !null
                && !given(doc, &spec.name, WarningCode::CacheAbsorbed)
                && let Some(mut w) =
                    crate::sysinfo::diskstats::cache_absorbed_warning(&dc, o.write_bytes)
            {
                w.test = Some(spec.name.clone());
                let direct = self.target.direct_ok && spec.groups.iter().any(|g| g.direct);
                if direct && doc.environment.fs_type.starts_with("fuse") {
                    w.message = fuse_direct_advice(&w.message);
                }
                doc.warn(w);
            }
            // Once per test, as the extra I/O below: the first run a cache answered.
            if !given(doc, &spec.name, WarningCode::CacheServed)
                && !null
                && let Some(mut w) =
                    crate::sysinfo::diskstats::cache_served_warning(&dc, o.read_bytes)
            {
                w.test = Some(spec.name.clone());
                doc.warn(w);
            }
            // Once per test: the first run whose device did clearly more than the test.
            if !given(doc, &spec.name, WarningCode::DeviceExtraIo)
                && let Some(mut w) =
                    crate::sysinfo::diskstats::extra_io_warning(&dc, o.read_bytes, o.write_bytes)
            {
                w.test = Some(spec.name.clone());
                doc.warn(w);
            }
            total.device = Some(dc);
        }
        if total.huge_page_buffers == Some(false)
            && self.target.direct_ok
            && spec.groups.iter().any(|g| g.direct)
        {
            doc.warn(crate::sysinfo::hugepages::small_pages_warning(&spec.name));
        }
        // Once per test, with the highest figure of its runs so far.
        let highest = |of: fn(&crate::model::CpuUsage) -> Option<f64>| {
            test.runs
                .iter()
                .chain(std::iter::once(&total))
                .filter_map(|r| of(r.cpu.as_ref()?))
                .reduce(f64::max)
        };
        let cpu_pct = highest(|c| Some(c.max_job_thread_pct)).unwrap_or(0.0);
        if cpu_pct > super::block::CPU_BOUND_PCT && !null {
            let sync = spec
                .groups
                .iter()
                .any(|g| g.engine == crate::engine::EngineKind::Sync);
            warn_replacing(
                doc,
                Warning {
                    code: WarningCode::CpuBound,
                    message: format!(
                        "a job thread used {cpu_pct:.0} % of a CPU: iolab, not the device, may have been the limit; {}",
                        cpu_bound_advice(sync, self.cfg.verify)
                    ),
                    test: Some(spec.name.clone()),
                },
            );
        }
        let waited = highest(|c| c.max_job_thread_wait_pct);
        if let Some(pct) = waited.filter(|&p| p > cpu_wait::CPU_CONTENTION_PCT) {
            let threads = spec.groups.iter().map(|g| g.jobs as usize).sum();
            warn_replacing(
                doc,
                Warning {
                    code: WarningCode::CpuContention,
                    message: cpu_wait::contention_message("a job thread", pct, threads),
                    test: Some(spec.name.clone()),
                },
            );
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
        total
    }

    /// `--steadystate`: the summary (and its spread warnings) covers the steady window, or
    /// the last window's worth of rounds when it was not reached: the rounds before
    /// describe a drive that was still changing. Every round stays in `runs`.
    fn summarize_steady(
        &self,
        r: &SteadyRounds,
        rounds_started: std::time::Instant,
        test: &mut TestResult,
        doc: &mut ResultDoc,
        warn: bool,
    ) {
        let rec = r.record(rounds_started.elapsed());
        let mut judged = TestResult {
            runs: test
                .runs
                .get(rec.summary_rounds())
                .unwrap_or_default()
                .to_vec(),
            // The advice depends on the kind of test (a block test's settings).
            settings: test.settings.clone(),
            ..TestResult::default()
        };
        summarize_test(&mut judged);
        test.summary = judged.summary;
        judged.name = test.name.clone();
        judged.summary = test.summary.clone();
        // Judged as a steady-state test: its advice, and its outliers named by run number.
        judged.runs = test.runs.clone();
        judged.steady_state = Some(rec.clone());
        if warn {
            for w in spread_warnings(&judged, &self.cfg.repeat)
                .into_iter()
                .filter(|w| w.code != WarningCode::NoSpread)
            {
                doc.warn(w);
            }
            if !self.ctx.stop.is_set()
                && let Some(w) = not_reached_warning(&rec, &test.name)
            {
                doc.warn(w);
            }
        }
        test.steady_state = Some(rec);
    }
}

/// The progress of one run: the share done (by time, or by amount with `--io-size`), the
/// current rate, and the live points for the web console.
struct Watch {
    total: Option<f64>,
    t0: std::time::Instant,
    last_bytes: u64,
    last_t: std::time::Instant,
    sampler: LiveSampler,
}

impl Watch {
    fn new(spec: &BlockTestSpec) -> Watch {
        let now = std::time::Instant::now();
        Watch {
            total: spec.groups[0]
                .duration
                .map(|d| (d + spec.groups[0].ramp).as_secs_f64()),
            t0: now,
            last_bytes: 0,
            last_t: now,
            sampler: LiveSampler::new(std::time::Duration::from_millis(500)),
        }
    }

    /// The progress: the rate, or `stopping` (what a stop waits for) once one was asked.
    fn show(
        &mut self,
        spec: &BlockTestSpec,
        live: &LiveCounters,
        p: &Progress,
        stopping: Option<String>,
    ) {
        let b = live.bytes.load(std::sync::atomic::Ordering::Relaxed);
        let now = std::time::Instant::now();
        let rate = (b - self.last_bytes) as f64 / (now - self.last_t).as_secs_f64().max(1e-3);
        self.last_bytes = b;
        self.last_t = now;
        let frac = match (self.total, spec.groups[0].io_size) {
            (Some(t), _) => self.t0.elapsed().as_secs_f64() / t,
            (None, Some(per_job)) => {
                let all: u64 = spec.groups.iter().map(|g| per_job * g.jobs as u64).sum();
                b as f64 / all.max(1) as f64
            }
            (None, None) => 0.0,
        };
        let msg = stopping.unwrap_or_else(|| format!("{} MB/s", crate::units::fmt_mb_per_s(rate)));
        p.set(frac, &msg);
        if let Some(pt) = self.sampler.sample(live) {
            p.point(frac, &pt);
        }
    }
}

/// Whether a run ended before its amount: a size-based run (`--io-size`) that transferred
/// less than every job's share, which in a distributed run only the stonewall does. A timed
/// run has no amount: never.
fn cut_short(spec: &BlockTestSpec, run: &RunResult) -> bool {
    spec.amount_bytes().is_some_and(|a| run.bytes < a)
}

/// What to do about a CPU-bound job thread, for the engine it ran on: "use --engine uring"
/// was advised to runs already on io_uring; `--verify`'s checksums are CPU work of their own.
/// Give `w`, replacing the warning of its code its test was given before (one warning per
/// test, with the figure of all its runs so far).
fn warn_replacing(doc: &mut ResultDoc, w: Warning) {
    doc.warnings
        .retain(|old| !(old.code == w.code && old.test == w.test));
    doc.warn(w);
}

fn cpu_bound_advice(sync: bool, verify: bool) -> String {
    let mut advice = if sync {
        "add --jobs or use --engine uring with a higher --iodepth".to_string()
    } else {
        "add --jobs (each job is one thread)".to_string()
    };
    if verify {
        advice.push_str("; --verify checksums every sector, which costs CPU");
    }
    advice
}

/// A test whose io_uring engine failed to set up (after the probe passed: a ring refused
/// for memory or descriptors) ran on the sync engine, one I/O in flight per job: it was
/// still named and saved `RND4K Q32T1` with iodepth 32. Its groups now say the depth that
/// ran and its name says both (`RND4K Q1T1 read (Q32 asked; io_uring failed, sync ran)`, a
/// name no other test of the run has); the engine warnings saying why follow the new name.
fn named_as_ran(spec: &BlockTestSpec, test: &mut TestResult, warnings: &mut [Warning]) {
    let mut asked = None;
    let mut all = true;
    for (g, ran) in spec.groups.iter().zip(test.groups.iter_mut()) {
        let fell = g.engine == crate::engine::EngineKind::Uring
            && g.iodepth > 1
            && ran.engine == crate::engine::EngineKind::Sync.name();
        if fell {
            ran.iodepth = 1;
            asked = Some(g.iodepth);
        } else {
            all = false;
        }
    }
    let Some(asked) = asked else {
        return;
    };
    if let Some(s) = test.settings.as_mut()
        && s.engine == crate::engine::EngineKind::Sync.name()
    {
        s.iodepth = 1;
    }
    let old = test.name.clone();
    let token = format!(" Q{asked}T");
    let mut name = if all {
        old.replacen(&token, " Q1T", 1)
    } else {
        old.clone()
    };
    let ran = if all {
        "sync ran"
    } else {
        "sync ran on some targets"
    };
    name.push_str(&format!(" (Q{asked} asked; io_uring failed, {ran})"));
    for w in warnings.iter_mut() {
        if w.test.as_deref() == Some(old.as_str()) {
            w.test = Some(name.clone());
        }
    }
    test.name = name;
}

/// The advice of a `cache-absorbed` warning on a FUSE file system that took O_DIRECT: the
/// test did use direct I/O, which reached only the FUSE daemon (ntfs-3g, exfat-fuse,
/// fusefat), and the daemon wrote to its device through the page cache; "use direct I/O"
/// sent the user to what had already run.
fn fuse_direct_advice(message: &str) -> String {
    const ADVICE: &str = "use direct I/O, fsync, or a size above 2x RAM";
    debug_assert!(message.ends_with(ADVICE), "{message}");
    let kept = message.strip_suffix(ADVICE).unwrap_or(message);
    format!(
        "{kept}the test ran with O_DIRECT, which on a FUSE file system reaches only its daemon, and the daemon wrote to the device through its own cache; use a size above 2x RAM or a file system that honours O_DIRECT"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The advice of `cache-absorbed` on a FUSE target that took O_DIRECT no longer says
    /// "use direct I/O" (it had been used); the figures before it stay.
    #[test]
    fn cache_absorbed_on_fuse_with_direct_io_does_not_advise_direct_io() {
        let dc = DeviceCounters {
            device: "loop2".into(),
            write_bytes: 16 << 20,
            ..Default::default()
        };
        let w = crate::sysinfo::diskstats::cache_absorbed_warning(&dc, 64 << 20).unwrap();
        let m = fuse_direct_advice(&w.message);
        assert!(!m.contains("use direct I/O"), "{m}");
        assert!(
            m.starts_with("the application wrote 64.0 MiB but loop2 saw only 16.0 MiB written (25 %): the page cache absorbed the writes")
                && m.contains("the test ran with O_DIRECT, which on a FUSE file system reaches only its daemon"),
            "{m}"
        );
    }

    /// A rank told to stop after it had done its whole `--io-size` (the other rank's notice
    /// came while it drained its last requests) was listed as stonewalled: `stonewalled 2/2`
    /// beside 5120 of 5120 I/Os in every run. Only a run short of its amount was stopped.
    #[test]
    fn only_a_run_short_of_its_amount_was_cut_short() {
        use crate::engine::EngineKind;
        use crate::model::RunResult;
        use crate::workload::block::{JobSpec, Rw};
        let job = |jobs, io_size| JobSpec {
            jobs,
            io_size,
            duration: None,
            ..JobSpec::random_direct(Rw::Randread, 4096, 4, EngineKind::Uring, 1)
        };
        // Two groups: 2 jobs x 20 MiB and 1 job x 10 KiB (rounded up to 3 blocks).
        let spec = BlockTestSpec {
            name: "t".into(),
            groups: vec![job(2, Some(20 << 20)), job(1, Some(10 << 10))],
        };
        let whole = 2 * (20 << 20) + 3 * 4096;
        assert_eq!(spec.amount_bytes(), Some(whole));
        let run = |bytes| RunResult {
            bytes,
            ..Default::default()
        };
        assert!(!super::cut_short(&spec, &run(whole)), "the whole amount");
        assert!(
            super::cut_short(&spec, &run(whole - 4096)),
            "one block short"
        );
        // A timed run has no amount: never cut short.
        let timed = BlockTestSpec::single(
            "t",
            JobSpec {
                duration: Some(std::time::Duration::from_secs(1)),
                ..job(1, None)
            },
        );
        assert_eq!(timed.amount_bytes(), None);
        assert!(!super::cut_short(&timed, &run(0)));
    }

    /// io_uring failing at engine set-up (after the probe) fell back to the sync engine but
    /// the test kept `Q32T1` and iodepth 32 in its name and JSON.
    #[test]
    fn a_late_fallback_to_sync_is_named_and_saved_as_it_ran() {
        use crate::engine::EngineKind;
        use crate::model::BlockSettings;
        use crate::workload::block::{JobSpec, Rw, cdm_label};
        let job = JobSpec::random_direct(Rw::Randread, 4096, 32, EngineKind::Uring, 1);
        let name = format!("{} read", cdm_label(Rw::Randread, 4096, 32, 1));
        let spec = BlockTestSpec::single(name.clone(), job);
        let ran = |engine: &str| BlockSettings {
            iodepth: 32,
            engine: engine.into(),
            ..BlockSettings::default()
        };
        let test_ran = |engine: &str| TestResult {
            name: name.clone(),
            settings: Some(ran(engine)),
            groups: vec![ran(engine)],
            ..TestResult::default()
        };
        let mut test = test_ran("sync");
        let mut warnings = vec![Warning {
            code: WarningCode::Engine,
            message: "io_uring unavailable (x); fell back to the sync engine".into(),
            test: Some(name.clone()),
        }];
        named_as_ran(&spec, &mut test, &mut warnings);
        assert_eq!(
            test.name,
            "RND4K Q1T1 read (Q32 asked; io_uring failed, sync ran)"
        );
        assert_eq!(test.groups[0].iodepth, 1);
        assert_eq!(test.settings.as_ref().unwrap().iodepth, 1);
        assert_eq!(warnings[0].test.as_deref(), Some(test.name.as_str()));
        // io_uring that ran keeps everything.
        let mut kept = test_ran("uring");
        named_as_ran(&spec, &mut kept, &mut warnings);
        assert_eq!(
            (kept.name.as_str(), kept.groups[0].iodepth),
            (name.as_str(), 32)
        );
    }

    /// The advice to a CPU-bound run on io_uring told it to use io_uring.
    #[test]
    fn cpu_bound_advice_fits_the_engine() {
        assert!(super::cpu_bound_advice(true, false).contains("--engine uring"));
        let uring = super::cpu_bound_advice(false, false);
        assert!(!uring.contains("--engine uring"), "{uring}");
        assert!(uring.contains("--jobs"));
        assert!(super::cpu_bound_advice(false, true).contains("--verify"));
    }
}

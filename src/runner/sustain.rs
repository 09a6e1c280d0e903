//! `iolab sustain`'s measurement: the first pass until the span is written (or `--time`),
//! each recovery pass after its idle time, the phases and cliffs of each
//! (`workload::sustain::analyze`), saved after every pass.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};

use crate::engine::EngineKind;
use crate::model::sustain::{SustainDetail, SustainPause};
use crate::model::{ResultDoc, ResultSink, RunResult, TestResult, Warning, WarningCode};
use crate::os::cpu_wait::{
    CPU_CONTENTION_PCT, Fewer, IDLE_ADVICE, WaitTrace, Waiter, load_context, message,
};
use crate::runner::RunContext;
use crate::runner::block::{LiveCounters, LiveSampler, StopNotice, run_block_test, settings_of};
use crate::runner::progress::Progress;
use crate::runner::target::{TargetKind, TestTarget};
use crate::stats::changepoint::SHORT_PHASE_POINTS;
use crate::stats::repeat::summarize_test;
use crate::units::{count, fmt_mb_per_s, fmt_size_iec};
use crate::workload::block::{BlockTestSpec, Rw, cdm_label};
use crate::workload::sustain::{
    PassPlan, Reference, SLOW_PHASE_POINTS, analyze, pass_job, pause_list, recovery_bytes,
    speeds_without_cliff, waited_for_cpu,
};

/// Validated `iolab sustain`.
#[derive(Debug, Clone)]
pub struct SustainConfig {
    pub target: PathBuf,
    pub kind: TargetKind,
    /// Bytes of the span (a whole number of blocks).
    pub size: u64,
    /// How the span was chosen, for the table (`50 % of 20.0 GiB free`).
    pub size_note: String,
    /// `--time`: the first pass stops here at the latest.
    pub time: Option<Duration>,
    pub rw: Rw,
    pub bs: u64,
    pub iodepth: u32,
    pub engine: EngineKind,
    pub interval: Duration,
    /// Idle times before the recovery passes, in order.
    pub recovery: Vec<Duration>,
    pub seed: u64,
    /// `--json`, `--output`, `--no-save`, `--quiet`.
    pub out: crate::model::Delivery,
}

/// `30s`, `2m`, `1h`, `1.5s`: an idle time as the user wrote it.
pub fn fmt_idle(d: Duration) -> String {
    let s = d.as_secs_f64();
    if d.subsec_nanos() != 0 {
        format!("{s}s")
    } else if d.as_secs().is_multiple_of(3600) {
        format!("{}h", d.as_secs() / 3600)
    } else if d.as_secs().is_multiple_of(60) {
        format!("{}m", d.as_secs() / 60)
    } else {
        format!("{}s", d.as_secs())
    }
}

pub fn sustain(
    cfg: &SustainConfig,
    ctx: &RunContext,
    doc: &mut ResultDoc,
    sink: &ResultSink,
) -> Result<()> {
    crate::eline!(
        "iolab: span {} ({}){}",
        fmt_size_iec(cfg.size),
        cfg.size_note,
        cfg.time
            .map(|t| format!(", at most {} for the first pass", fmt_idle(t)))
            .unwrap_or_default()
    );
    let target = match cfg.kind {
        TargetKind::Directory => TestTarget::create_in_dir(&cfg.target, cfg.size, false)
            .with_context(|| format!("cannot create the test file in {}", cfg.target.display()))?,
        kind => TestTarget::open_existing(&cfg.target, kind, Some(cfg.size))
            .with_context(|| format!("cannot open {}", cfg.target.display()))?,
    };
    if let Some(w) = target.direct_warning(true) {
        doc.warn(w);
    }
    let device = doc.environment.block_device.clone();
    let plan = PassPlan {
        rw: cfg.rw,
        bs: cfg.bs,
        iodepth: cfg.iodepth,
        engine: cfg.engine,
        interval: cfg.interval,
        bytes: target.size,
        time: cfg.time,
        seed: cfg.seed,
    };
    let first = run_pass(
        ctx,
        doc,
        &target,
        &plan,
        "first pass",
        device.as_deref(),
        None,
        None,
    );
    let first = match first {
        Ok(t) => t,
        Err(e) => {
            sink.save(doc)?;
            return Err(e);
        }
    };
    if let Err(interrupted) = ctx.stop.check() {
        doc.tests.push(first);
        sink.save(doc)?;
        return Err(interrupted.into());
    }
    let reference = first
        .sustain
        .as_ref()
        .and_then(|d| d.cliffs.first().cloned());
    pass_warnings(doc, &first, cfg);
    if reference.is_none() {
        let device = cfg.kind == TargetKind::BlockDevice;
        let message = no_cliff_message(&first, !cfg.recovery.is_empty(), device);
        doc.warn(Warning {
            code: WarningCode::NoCliff,
            message,
            test: None,
        });
    }
    doc.tests.push(first);
    sink.save(doc)?;
    let Some(cliff) = reference else {
        return Ok(());
    };
    for idle in &cfg.recovery {
        let label = format!("idle {} (--recovery)", fmt_idle(*idle));
        let p = Progress::start(ctx.progress, &label);
        ctx.stop.sleep(*idle)?;
        p.finish("idle");
        let again = PassPlan {
            bytes: recovery_bytes(&cliff, cfg.interval, target.size, cfg.bs),
            ..plan
        };
        let name = format!("after {} idle", fmt_idle(*idle));
        let r = run_pass(
            ctx,
            doc,
            &target,
            &again,
            &name,
            device.as_deref(),
            Some(*idle),
            Some(Reference::of(&cliff)),
        );
        match r {
            Ok(t) => {
                pass_warnings(doc, &t, cfg);
                doc.tests.push(t);
                sink.save(doc)?;
                ctx.stop.check()?;
            }
            Err(e) => {
                sink.save(doc)?;
                return Err(e);
            }
        }
    }
    Ok(())
}

/// The `no-cliff` warning of a first pass without a cliff: its speeds as the line under the
/// table gives them, what to do, and whether recovery passes were skipped. On a `device`
/// target, a whole device with --allow-destroy is what it measured already.
fn no_cliff_message(first: &TestResult, recovery: bool, device: bool) -> String {
    let written = first.sustain.as_ref().map_or(0, |d| d.bytes_written);
    let interval_ms = first.sustain.as_ref().map_or(0, |d| d.interval_ms);
    // The speeds the finding line under the table gives ("no cliff in … (X MB/s
    // throughout)": the phases', without the start-up interval), not a second figure.
    let phases = first.sustain.as_ref().map_or(0, |d| d.phases.len());
    // A rise that only ended the pass (a burst, not the settled phase) says nothing of how
    // the pass started: it did not start slower than the drive can write.
    let started_slow = first
        .sustain
        .as_ref()
        .is_some_and(|d| d.settled_phase.unwrap_or(phases.saturating_sub(1)) > 0);
    let speed = match first.sustain.as_ref().filter(|d| !d.phases.is_empty()) {
        Some(d) => speeds_without_cliff(d),
        None => format!(
            "{} MB/s",
            fmt_mb_per_s(
                first
                    .runs
                    .first()
                    .and_then(|r| r.bw_bytes_per_s)
                    .unwrap_or(0.0)
            )
        ),
    };
    let larger = if device {
        "--size or --span"
    } else {
        "--size, --span, or a whole device with --allow-destroy"
    };
    let more = format!("{}{larger}", longer_time_first(first).unwrap_or_default());
    let memory = first
        .sustain
        .as_ref()
        .and_then(|d| d.memory_backed.as_deref());
    let mut message = match memory {
        // RAM has no write cache to fill: "write more" would find none either.
        Some(what) => format!(
            "no cliff in {} written at {speed}: {what}, so there is no drive and no drive write cache to fill; the speed is the memory's and the CPUs'",
            fmt_size_iec(written),
        ),
        // The shortest fast start the phase search tells from a start-up burst.
        None => format!(
            "no cliff in {} written at {speed}: a write cache, if any, is larger than that; write more ({more}), or, for a cache that fills in fewer than {SHORT_PHASE_POINTS} intervals ({} at {interval_ms} ms: the start-up interval and two more, too few to tell from a start-up burst), use a shorter --interval",
            fmt_size_iec(written),
            crate::units::fmt_secs((interval_ms * SHORT_PHASE_POINTS as u64) as f64 / 1e3),
        ),
    };
    if phases > 1 && started_slow {
        message.push_str(if memory.is_some() {
            "; the pass sped up: the machine was busier at its start (other work on the CPUs, memory reclaim)"
        } else {
            "; the pass sped up, so it started slower than the drive can write (a cache still full from earlier writes, or the drive busy cleaning up): let it idle, then measure again"
        });
    }
    if recovery {
        message.push_str("; the recovery passes were skipped (no cache was filled to recover)");
    }
    message
}

/// `--time` ended the pass before its span: more span alone writes no more, so a longer
/// `--time` comes first.
fn longer_time_first(t: &TestResult) -> Option<String> {
    let written = t.sustain.as_ref().map_or(0, |d| d.bytes_written);
    let span = t.settings.as_ref().map_or(0, |s| s.size_bytes);
    (written < span).then(|| {
        format!(
            "a longer --time (it stopped the pass after {} of the {} span), then ",
            fmt_size_iec(written),
            fmt_size_iec(span)
        )
    })
}

/// A pass whose settled speed, past a cliff, was measured over a few intervals only: that
/// speed is uncertain. The settled phase is judged (not the last one: a short burst that
/// ended the pass is no part of the settled speed, and a warning about it said "7
/// intervals" for a slow phase of 72), named with the cliff before it.
fn pass_warnings(doc: &mut ResultDoc, t: &TestResult, cfg: &SustainConfig) {
    if let Some(message) = short_settled_phase(t, cfg.interval) {
        doc.warn(Warning {
            code: WarningCode::ShortSlowPhase,
            message,
            test: Some(t.name.clone()),
        });
    }
}

fn short_settled_phase(t: &TestResult, interval: Duration) -> Option<String> {
    let d = t.sustain.as_ref()?;
    let k = d.settled_phase.or(d.phases.len().checked_sub(1))?;
    let p = d.phases.get(k)?;
    // The cliff the settled phase came after (the last one that began before it ended).
    let c = d
        .cliffs
        .iter()
        .rev()
        .find(|c| c.at_ms < p.end_ms as f64)
        .or(d.cliffs.first())?;
    let points = (p.end_ms - p.start_ms) / d.interval_ms.max(1);
    // A pass the user stopped wrote what it had time to: "write more" told them to ask for
    // a size it never reached; letting it finish is what measures the slow phase.
    let advice = if t.ended_early() == Some("interrupted") {
        "the pass was interrupted: run it again and let it finish".to_string()
    } else {
        format!(
            "write more ({}--size, --span) or use a shorter --interval (now {} ms)",
            longer_time_first(t).unwrap_or_default(),
            interval.as_millis()
        )
    };
    (k >= 1 && points < SLOW_PHASE_POINTS / 2).then(|| {
        format!(
            "the speed past the cliff after {} written, {} MB/s, was measured over {points} intervals only: {advice}",
            fmt_size_iec(c.bytes_before as u64),
            fmt_mb_per_s(p.mean_bw_bytes_per_s),
        )
    })
}

/// One pass: the writes, the device's counters, the test with its phases and cliffs. A
/// failed pass is recorded in `doc` with its error (the caller saves it).
#[allow(clippy::too_many_arguments)]
fn run_pass(
    ctx: &RunContext,
    doc: &mut ResultDoc,
    target: &TestTarget,
    plan: &PassPlan,
    name: &str,
    device: Option<&str>,
    idle_before: Option<Duration>,
    reference: Option<Reference>,
) -> Result<TestResult> {
    let job = pass_job(plan);
    let spec = BlockTestSpec::single(
        format!(
            "{} {}",
            cdm_label(plan.rw, plan.bs, plan.iodepth, 1),
            plan.rw.name()
        ),
        job.clone(),
    );
    let mut test = TestResult {
        name: name.to_string(),
        family: "sustain".into(),
        direction: Some("write".into()),
        settings: Some(settings_of(&job, target, job.engine.name())),
        ..Default::default()
    };
    test.params.insert(
        "phase".into(),
        if idle_before.is_some() {
            "recovery"
        } else {
            "first"
        }
        .into(),
    );
    if let Some(s) = test.settings.as_mut() {
        s.size_bytes = target.size;
    }
    let label = format!("{name}: {} {}", spec.name, fmt_size_iec(plan.bytes));
    let p = Progress::start(ctx.progress, &label);
    let live = LiveCounters::default();
    // The pass stops through its own flag: a signal stonewalls it, so the series written up
    // to then comes back (run_block_test returns no figures for an interrupted run) and is
    // saved before the interrupt is reported.
    let wall = crate::os::signals::StopFlag::new();
    let out = std::thread::scope(|s| {
        let h = s.spawn(|| run_block_test(&spec, &[target], &[device], &wall, Some(&live), 1));
        let t0 = std::time::Instant::now();
        let (mut last_bytes, mut last_t) = (0u64, t0);
        let mut sampler = LiveSampler::new(Duration::from_millis(500));
        let mut stopping = StopNotice::new();
        // The job thread's wait for a CPU, every 50 ms: whether a pause was the machine's.
        let mut trace: Option<WaitTrace> = None;
        while !h.is_finished() {
            for _ in 0..4 {
                std::thread::sleep(Duration::from_millis(50));
                if ctx.stop.is_set() {
                    wall.stonewall();
                }
                if trace.is_none()
                    && let Some(&(tid, t0)) = live.job_thread.get()
                {
                    trace = Some(WaitTrace::of_thread(tid, t0));
                }
                if let Some(t) = trace.as_mut() {
                    t.sample();
                }
            }
            let b = live.bytes.load(std::sync::atomic::Ordering::Relaxed);
            let now = std::time::Instant::now();
            let rate = (b - last_bytes) as f64 / (now - last_t).as_secs_f64().max(1e-3);
            (last_bytes, last_t) = (b, now);
            let by_bytes = b as f64 / plan.bytes.max(1) as f64;
            let by_time = plan
                .time
                .map_or(0.0, |t| t0.elapsed().as_secs_f64() / t.as_secs_f64());
            let msg = stopping.check(&ctx.stop, &live, &p).unwrap_or_else(|| {
                format!("{} written, {} MB/s", fmt_size_iec(b), fmt_mb_per_s(rate))
            });
            p.set(by_bytes.max(by_time).min(1.0), &msg);
            if let Some(pt) = sampler.sample(&live) {
                p.point(by_bytes.max(by_time).min(1.0), &pt);
            }
        }
        let out = h
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the pass's thread panicked")));
        (out, trace)
    });
    let (out, trace) = out;
    let mut o = match out {
        Ok(o) => o,
        Err(e) => {
            p.finish(if ctx.stop.signal().is_some() {
                "interrupted"
            } else {
                "failed"
            });
            test.error = Some(format!("{e:#}"));
            doc.tests.push(test);
            return Err(e);
        }
    };
    o.total.write_amplification = o.write_amplification(0);
    o.total.device = o.devices.first().cloned().flatten();
    crate::runner::block::name_window_flag(&mut o.warnings, "--time");
    for w in o.warnings {
        doc.warn(w);
    }
    let wait_pct = o.total.cpu.as_ref().and_then(|c| c.max_job_thread_wait_pct);
    if let (Some(engine), Some(s)) = (o.engines.first(), test.settings.as_mut()) {
        s.engine = engine.clone();
    }
    if let Some(sig) = ctx.stop.signal() {
        test.error = Some(format!(
            "interrupted by {}: the pass's series up to then is kept",
            crate::os::signals::signal_name(sig)
        ));
    }
    let mut detail = analyze(
        if idle_before.is_some() {
            "recovery"
        } else {
            "first"
        },
        o.total.whole_intervals(),
        plan.interval,
        o.all_write_bytes,
        idle_before,
        reference,
    );
    for p in &mut detail.pauses {
        let ms = Duration::from_millis;
        let (from, to) = (ms(p.start_ms), ms(p.end_ms));
        p.cpu_wait_share = trace.as_ref().and_then(|t| t.share(from, to));
        p.cpu_pressure_share = trace.as_ref().and_then(|t| t.machine_share(from, to));
    }
    if let Some(message) = contention(wait_pct, &detail) {
        doc.warn(Warning {
            code: WarningCode::CpuContention,
            message,
            test: Some(name.to_string()),
        });
    }
    detail.memory_backed = super::write_cache::memory_backing(&doc.environment);
    // The pass's last, partial interval is no point of the phase search (every point is one
    // interval there), but it is the end of the span: the last phase runs to the end of the
    // pass and holds its bytes, so the phases add up to what was written.
    if let Some(last) = detail.phases.last_mut() {
        let in_series: u64 = o.total.whole_intervals().iter().map(|p| p.bytes).sum();
        last.bytes += detail.bytes_written.saturating_sub(in_series);
        last.end_ms = last.end_ms.max(o.total.elapsed_ns / 1_000_000);
    }
    if test.error.is_some() {
        p.finish("interrupted");
    } else {
        p.finish(&finish_line(&o.total, &detail));
    }
    test.runs.push(o.total);
    summarize_test(&mut test);
    test.sustain = Some(detail);
    Ok(test)
}

/// Warning `cpu-contention` of a pass: its job thread waited for a CPU over a tenth of the
/// pass (`wait_pct`, as `iolab run` warns of a job thread: the wait is in every interval),
/// or through pauses of its speed, which it then names: they were the machine's, not the
/// drive's (kept out of the speeds, no cliff there).
fn contention(wait_pct: Option<f64>, d: &SustainDetail) -> Option<String> {
    let base = wait_pct.filter(|&p| p > CPU_CONTENTION_PCT).map(|p| {
        message(
            &Waiter {
                who: "a job thread",
                threads: 1,
                // One job thread; sustain has no --jobs.
                fewer: Fewer::Cpus(""),
                // Sustain shows speeds per interval and phase, no latency or IOPS.
                effect: "every interval's speed includes that wait and may be below what \
                             the device writes",
                advice: IDLE_ADVICE,
            },
            p,
        )
    });
    let waited: Vec<&SustainPause> = d.pauses.iter().filter(|p| waited_for_cpu(p)).collect();
    if waited.is_empty() {
        return base;
    }
    let tail = format!(
        "{} of the speed ({}) came while the CPUs were held by other work (the job thread, or the kernel's threads doing its I/O, waited for one), not from the drive: no cliff was placed there, and {} no part of the speeds",
        count(waited.len() as u64, "pause", "pauses"),
        pause_list(&waited, d.interval_ms),
        if waited.len() == 1 {
            "it is"
        } else {
            "they are"
        },
    );
    Some(match base {
        Some(b) => format!("{b}; {tail}"),
        None => format!(
            "{tail}{}: {IDLE_ADVICE}",
            load_context()
                .map(|l| format!(" ({l} now)"))
                .unwrap_or_default()
        ),
    })
}

/// The progress line's end. Without a cliff its speed is the one phase's, as the table and
/// the line under it give it ("no cliff in … (X MB/s throughout)"), not the pass's average
/// beside it (it said 774.06 MB/s above a table of 737.77); with one, the pass's average,
/// named as such.
fn finish_line(r: &RunResult, d: &SustainDetail) -> String {
    let mut s = format!(
        "{} in {:.1} s",
        fmt_size_iec(d.bytes_written),
        r.elapsed_ns as f64 / 1e9
    );
    let average = r.bw_bytes_per_s.unwrap_or(0.0);
    match (d.cliffs.first(), d.phases.first()) {
        (Some(c), _) => s.push_str(&format!(
            ", {} MB/s on average, cliff after {}",
            fmt_mb_per_s(average),
            fmt_size_iec(c.fast_phase_bytes.max(0.0) as u64)
        )),
        (None, Some(_)) => s.push_str(&format!(", {}, no cliff", speeds_without_cliff(d))),
        (None, None) => s.push_str(&format!(
            ", {} MB/s on average, no cliff",
            fmt_mb_per_s(average)
        )),
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sustain::{SustainCliff, SustainPhase};

    /// A phase at `bw` bytes/s.
    fn phase(bw: f64) -> SustainPhase {
        SustainPhase {
            mean_bw_bytes_per_s: bw,
            ..Default::default()
        }
    }

    /// A test result of sustain's pass `d`.
    fn sustained(d: SustainDetail) -> TestResult {
        TestResult {
            sustain: Some(d),
            ..Default::default()
        }
    }

    /// A first pass that sped up (a throttle raised from 100 to 300 MB/s mid-pass; a drive
    /// still busy with earlier writes) said "no cliff in 1.2 GiB (99.92 MB/s throughout)",
    /// "written at 99.92 MB/s" and "99.92 MB/s, no cliff" under a table of 99.92, then
    /// 300.05 MB/s.
    #[test]
    fn a_pass_that_sped_up_is_not_said_to_run_at_its_first_speed() {
        let d = SustainDetail {
            bytes_written: 1200 << 20,
            phases: vec![phase(99.92e6), phase(300.05e6)],
            ..Default::default()
        };
        let r = RunResult {
            elapsed_ns: 6_700_000_000,
            bw_bytes_per_s: Some(179.0e6),
            ..Default::default()
        };
        assert_eq!(
            finish_line(&r, &d),
            "1.2 GiB in 6.7 s, 99.92 MB/s, then 300.05 MB/s, no cliff"
        );
        let m = no_cliff_message(&sustained(d), true, false);
        assert!(
            m.starts_with("no cliff in 1.2 GiB written at 99.92 MB/s, then 300.05 MB/s:"),
            "{m}"
        );
        assert!(m.contains("the pass sped up"), "{m}");
        assert!(m.contains("recovery passes were skipped"), "{m}");
        // Steady, then a burst of a few intervals as the pass ended (settled at the first
        // phase): it did not start slower than the drive can write.
        let burst = sustained(SustainDetail {
            bytes_written: 1200 << 20,
            phases: vec![phase(199.89e6), phase(420.0e6)],
            settled_phase: Some(0),
            ..Default::default()
        });
        let m = no_cliff_message(&burst, false, false);
        assert!(!m.contains("sped up"), "{m}");
        // One phase: one speed, and no word of speeding up.
        let one = sustained(SustainDetail {
            bytes_written: 1200 << 20,
            phases: vec![phase(199.89e6)],
            ..Default::default()
        });
        let m = no_cliff_message(&one, false, false);
        assert!(
            m.starts_with("no cliff in 1.2 GiB written at 199.89 MB/s:"),
            "{m}"
        );
        assert!(!m.contains("sped up") && !m.contains("skipped"), "{m}");
        assert!(m.contains("write more (--size, --span,"), "{m}");
        // A device target is the whole device already: no "--allow-destroy" to advise.
        let m = no_cliff_message(&one, false, true);
        assert!(m.contains("write more (--size or --span),"), "{m}");
        assert!(!m.contains("--allow-destroy"), "{m}");
        // The shortest cache it can find, in intervals and in time at this interval.
        let mut at_1s = one.clone();
        if let Some(d) = at_1s.sustain.as_mut() {
            d.interval_ms = 1000;
        }
        let m = no_cliff_message(&at_1s, false, false);
        assert!(
            m.ends_with("or, for a cache that fills in fewer than 3 intervals (3.0 s at 1000 ms: the start-up interval and two more, too few to tell from a start-up burst), use a shorter --interval"),
            "{m}"
        );
    }

    /// tmpfs: "a write cache, if any, is larger than that; write more" sent the user after
    /// a cache that RAM does not have.
    #[test]
    fn no_cliff_on_ram_names_no_write_cache() {
        let t = sustained(SustainDetail {
            bytes_written: 64 << 20,
            phases: vec![phase(2400.0e6)],
            memory_backed: Some("tmpfs keeps its data in RAM".into()),
            ..Default::default()
        });
        let m = no_cliff_message(&t, true, false);
        assert_eq!(
            m,
            "no cliff in 64.0 MiB written at 2400.00 MB/s: tmpfs keeps its data in RAM, so there is no drive and no drive write cache to fill; the speed is the memory's and the CPUs'; the recovery passes were skipped (no cache was filled to recover)"
        );
    }

    /// `--time 3s` stopped a pass after 580 MiB of a 913 MiB span: the warning said "write
    /// more (--size, --span, ...)", which --time would stop again.
    #[test]
    fn a_pass_stopped_by_time_asks_for_more_time() {
        let t = TestResult {
            settings: Some(crate::model::BlockSettings {
                size_bytes: 913 << 20,
                ..Default::default()
            }),
            ..sustained(SustainDetail {
                bytes_written: 580 << 20,
                phases: vec![phase(199.95e6)],
                ..Default::default()
            })
        };
        let m = no_cliff_message(&t, false, false);
        assert!(
            m.contains("write more (a longer --time (it stopped the pass after 580.0 MiB of the 913.0 MiB span)"),
            "{m}"
        );
    }

    /// tmpfs on a loaded machine: a cliff at 4.1 s into a slow phase of 72 intervals, a
    /// rise for 18, then 7 intervals of a burst as the pass ended. The warning said "the
    /// speed after the cliff … (177.21 MB/s) was measured over 7 intervals only": it
    /// counted the burst's phase. The settled phase is judged, with its own speed.
    #[test]
    fn short_slow_phase_judges_the_settled_phase() {
        let phase = |from: u64, to: u64, bw: f64| SustainPhase {
            start_ms: from,
            end_ms: to,
            mean_bw_bytes_per_s: bw,
            ..Default::default()
        };
        let cliff = SustainCliff {
            at_ms: 4100.0,
            bytes_before: 981.1 * (1 << 20) as f64,
            after_bw_bytes_per_s: 177.21e6,
            ..Default::default()
        };
        let mut d = SustainDetail {
            interval_ms: 100,
            phases: vec![
                phase(0, 3100, 186.21e6),
                phase(3100, 4100, 427.29e6),
                phase(4100, 11300, 177.21e6),
                phase(11300, 13100, 220.86e6),
                phase(13100, 13849, 505.06e6),
            ],
            cliffs: vec![cliff],
            settled_phase: Some(3),
            ..Default::default()
        };
        let t = |d: &SustainDetail| sustained(d.clone());
        let dt = Duration::from_millis(100);
        assert_eq!(short_settled_phase(&t(&d), dt), None);
        // The same pass ending 0.7 s after the cliff: its settled speed is uncertain.
        d.phases.truncate(2);
        d.phases.push(phase(4100, 4800, 177.21e6));
        d.settled_phase = Some(2);
        let m = short_settled_phase(&t(&d), dt).expect("a warning");
        assert!(
            m.starts_with("the speed past the cliff after 981.1 MiB written, 177.21 MB/s, was measured over 7 intervals only"),
            "{m}"
        );
        assert!(m.contains("write more (--size, --span)"), "{m}");
        // `--time` stopped it before its span: a longer --time first (more span alone
        // writes no more).
        let mut timed = t(&d);
        timed.sustain.as_mut().unwrap().bytes_written = 1 << 30;
        timed.settings = Some(crate::model::BlockSettings {
            size_bytes: 4 << 30,
            ..Default::default()
        });
        let m = short_settled_phase(&timed, dt).expect("a warning");
        assert!(
            m.contains("write more (a longer --time (it stopped the pass after 1.0 GiB of the 4.0 GiB span), then --size, --span)"),
            "{m}"
        );
        // Interrupted: no advice to write more, but to let it finish.
        let mut stopped = t(&d);
        stopped.error = Some("interrupted by SIGINT: the pass's series up to then is kept".into());
        let m = short_settled_phase(&stopped, dt).expect("a warning");
        assert!(
            m.ends_with("was measured over 7 intervals only: the pass was interrupted: run it again and let it finish"),
            "{m}"
        );
    }

    #[test]
    fn the_finish_line_gives_the_tables_speed() {
        let r = RunResult {
            elapsed_ns: 87_000_000,
            bw_bytes_per_s: Some(774.06e6),
            ..Default::default()
        };
        let mut d = SustainDetail {
            bytes_written: 64 << 20,
            phases: vec![phase(737.77e6)],
            ..Default::default()
        };
        assert_eq!(
            finish_line(&r, &d),
            "64.0 MiB in 0.1 s, 737.77 MB/s, no cliff"
        );
        d.cliffs.push(SustainCliff {
            fast_phase_bytes: (32 << 20) as f64,
            ..Default::default()
        });
        assert_eq!(
            finish_line(&r, &d),
            "64.0 MiB in 0.1 s, 774.06 MB/s on average, cliff after 32.0 MiB"
        );
    }

    /// `cpu-contention` of a pass: as `iolab run`'s over a tenth of the pass; naming the
    /// pauses the job thread spent waiting for a CPU (the machine's, kept out of the
    /// speeds), with or without that; nothing for a pause the drive made.
    #[test]
    fn contention_names_the_pauses_the_machine_made() {
        let pause = |wait: f64| crate::model::sustain::SustainPause {
            start_ms: 600,
            end_ms: 900,
            cpu_wait_share: Some(wait),
            ..Default::default()
        };
        let mut d = SustainDetail {
            interval_ms: 100,
            ..Default::default()
        };
        assert_eq!(contention(Some(5.0), &d), None);
        let m = contention(Some(30.0), &d).unwrap();
        assert!(
            m.starts_with("a job thread waited 30 % of the run for a CPU"),
            "{m}"
        );
        // Sustain shows speeds, no latency or IOPS.
        assert!(
            m.contains("every interval's speed includes that wait"),
            "{m}"
        );
        assert!(!m.contains("latency") && !m.contains("IOPS"), "{m}");
        d.pauses.push(pause(0.1));
        assert_eq!(contention(Some(5.0), &d), None);
        // The machine's pressure alone (a loop device's worker waited, the thread slept).
        d.pauses.push(crate::model::sustain::SustainPause {
            cpu_pressure_share: Some(0.9),
            ..pause(0.0)
        });
        let m = contention(Some(5.0), &d).unwrap();
        assert!(
            m.starts_with("1 pause of the speed (at 0.6 s for 0.3 s) came while the CPUs were held by other work (the job thread, or the kernel's threads doing its I/O, waited for one), not from the drive: no cliff was placed there, and it is no part of the speeds"),
            "{m}"
        );
        assert!(m.ends_with(IDLE_ADVICE), "{m}");
        let m = contention(Some(30.0), &d).unwrap();
        assert!(m.starts_with("a job thread waited 30 %"), "{m}");
        assert!(m.contains("; 1 pause of the speed (at 0.6 s"), "{m}");
    }
}

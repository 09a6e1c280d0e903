//! Executing one block test: job threads (one per job of every group) start together, ramp,
//! measure, and their recorders are merged into one `RunResult`.
//!
//! The hot loop is allocation-free: buffers are allocated once per job, offsets come from a
//! permutation, and the clock is read before and after each submit (start, submission
//! latency) and once per completion as it is processed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier, mpsc};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};

use crate::engine::buffer::both_huge;
use crate::engine::buffer::{DataGen, Pattern, splitmix};
use crate::engine::{Completion, IoEngine, Op, open_engine};
use crate::model::device::DeviceCounters;
use crate::model::{BlockSettings, CpuUsage, IntervalPoint, RunResult, Warning, WarningCode};
use crate::os::cpu_wait;
use crate::os::signals::StopFlag;
use crate::runner::cpu;
use crate::runner::recorder::{JobRecorder, direction_stats};
use crate::runner::target::TestTarget;
use crate::sysinfo::diskstats::{PhaseCounters, write_amplification};
use crate::workload::block::{BlockTestSpec, JobSpec, Region, Rw};
use crate::workload::offsets::OffsetGen;

/// A job thread is called CPU-bound above this share of its wall time.
pub const CPU_BOUND_PCT: f64 = 90.0;

/// What one run of a block test produced.
#[derive(Debug)]
pub struct BlockRunOutput {
    /// All groups merged.
    pub total: RunResult,
    /// One per group, in order.
    pub per_group: Vec<RunResult>,
    pub warnings: Vec<Warning>,
    /// The engine that really ran each group (after fallback).
    pub engines: Vec<String>,
    /// Bytes written over the whole run, ramp included.
    pub all_write_bytes: u64,
    /// Bytes written over the span `devices` cover: the measured window and the drain of
    /// the requests in flight at a timed run's deadline.
    pub write_bytes: u64,
    /// Bytes read over the same span.
    pub read_bytes: u64,
    /// The counters of each of the `devices` asked, over the measured window (`None` for a
    /// device without counters, or when no job got past its ramp).
    pub devices: Vec<Option<DeviceCounters>>,
    /// The same counters over the span of `all_write_bytes`: read before the first I/O was
    /// submitted and after the last was reaped (the final fsync included). See
    /// [`BlockRunOutput::write_amplification`].
    whole: Vec<Option<DeviceCounters>>,
}

impl BlockRunOutput {
    /// Device `i`'s bytes written over the bytes the jobs wrote, both counted from before
    /// the first I/O to after the last, ramp included: the same span on both sides. Over
    /// the measured window instead (`devices`), the counters were read by this thread when
    /// it woke after the ramp, a little after the jobs' count began: the writes completed in
    /// between were the jobs' and not the device's, and a direct write on a loop device read
    /// 0.99. `None` without counters, without a measured window, or without writes.
    pub fn write_amplification(&self, i: usize) -> Option<f64> {
        let dc = self.whole.get(i)?.as_ref()?;
        write_amplification(dc, self.all_write_bytes)
    }
}

/// A write failed with ENOSPC: `written` is what this run had written by then (ramp included).
#[derive(Debug, thiserror::Error)]
#[error("no space left on {} after {:.1} MB written in this run (write at offset {offset})", path.display(), *written as f64 / 1e6)]
pub struct NoSpace {
    pub path: std::path::PathBuf,
    pub offset: u64,
    pub written: u64,
}

/// Live counters for progress display.
#[derive(Debug, Default)]
pub struct LiveCounters {
    pub bytes: AtomicU64,
    pub ios: AtomicU64,
    /// Sum of the completion latencies of the I/Os counted in `ios` (ramp included).
    pub lat_ns: AtomicU64,
    /// Requests in flight, as the jobs last said: after their first fill, with every batch
    /// of `ios`, and at every completion once they are stopping (what a stop waits for).
    pub inflight: AtomicU64,
    /// The first job thread's id and when its series started (its I/O loop's start): for a
    /// caller that samples that thread's wait for a CPU over the series (`iolab sustain`'s
    /// one job, `os::cpu_wait::WaitTrace`). Set once, before the loop.
    pub job_thread: std::sync::OnceLock<(i32, Instant)>,
}

/// Rates of `LiveCounters` over fixed periods, for the live points of the JSON progress
/// stream (`runner::progress`): read on the display thread, never in the I/O loop.
#[derive(Debug)]
pub struct LiveSampler {
    period: Duration,
    last_t: Instant,
    last: (u64, u64, u64),
}

impl LiveSampler {
    pub fn new(period: Duration) -> LiveSampler {
        LiveSampler {
            period,
            last_t: Instant::now(),
            last: (0, 0, 0),
        }
    }

    /// The rates since the last point, once a period has passed (else `None`).
    pub fn sample(&mut self, live: &LiveCounters) -> Option<crate::runner::progress::LivePoint> {
        let now = Instant::now();
        let secs = (now - self.last_t).as_secs_f64();
        if now - self.last_t < self.period || secs <= 0.0 {
            return None;
        }
        let cur = (
            live.ios.load(Ordering::Relaxed),
            live.bytes.load(Ordering::Relaxed),
            live.lat_ns.load(Ordering::Relaxed),
        );
        let ios = cur.0.saturating_sub(self.last.0);
        let p = crate::runner::progress::LivePoint {
            iops: ios as f64 / secs,
            bw_bytes_per_s: cur.1.saturating_sub(self.last.1) as f64 / secs,
            lat_mean_ns: if ios == 0 {
                0.0
            } else {
                cur.2.saturating_sub(self.last.2) as f64 / ios as f64
            },
        };
        self.last = cur;
        self.last_t = now;
        Some(p)
    }
}

/// What a block test's progress says once a stop (Ctrl-C, SIGTERM, the console's Stop) was
/// asked. A request handed to the device cannot be called back (its buffer must stay until
/// it completes), so the stop waits for every one in flight: on a slow or throttled device
/// at a deep queue that takes seconds, which looked like a hang. Now a line says at once
/// that iolab is stopping and what it waits for, the progress counts the requests down, and
/// without a live bar (a log, the console) a line repeats it every `REPEAT`.
#[derive(Debug, Default)]
pub struct StopNotice {
    said: Option<Instant>,
}

impl StopNotice {
    const REPEAT: Duration = Duration::from_secs(5);

    pub fn new() -> StopNotice {
        StopNotice::default()
    }

    /// Once `stop` carries a signal: say so (once, then every `REPEAT` without a live bar)
    /// and return the progress message to show instead of the rates.
    pub fn check(
        &mut self,
        stop: &StopFlag,
        live: &LiveCounters,
        p: &crate::os::progress::Progress,
    ) -> Option<String> {
        let sig = stop.signal()?;
        let inflight = live.inflight.load(Ordering::Relaxed);
        match self.said {
            None => {
                p.note(&stop_line(sig, inflight));
                self.said = Some(Instant::now());
            }
            Some(t) if !p.is_live() && t.elapsed() >= Self::REPEAT && inflight > 0 => {
                p.note(&format!(
                    "iolab: still stopping: {} in flight",
                    requests(inflight)
                ));
                self.said = Some(Instant::now());
            }
            Some(_) => {}
        }
        Some(format!("stopping: {} in flight", requests(inflight)))
    }
}

fn requests(n: u64) -> String {
    if n == 1 {
        "1 I/O".to_string()
    } else {
        format!("{} I/Os", crate::units::fmt_thousands(n as f64))
    }
}

/// The line a stop prints at once: what it waits for, what comes after, and how to stop at
/// once (a second SIGINT or SIGTERM, a second or more later: `os::signals`).
fn stop_line(sig: i32, inflight: u64) -> String {
    let name = crate::os::signals::signal_name(sig);
    let mut line = format!("iolab: stopping ({name}): ");
    if inflight > 0 {
        line.push_str(&format!(
            "waiting for the {} in flight to complete (a request given to the device cannot be taken back; a slow or throttled device takes a while), then ",
            requests(inflight)
        ));
    }
    line.push_str("ending as interrupted (the results so far kept, what iolab created removed)");
    if let Some(hint) = crate::os::signals::at_once_hint(sig) {
        line.push_str(hint);
    }
    line
}

/// BlockSettings (result model) of one group.
pub fn settings_of(job: &JobSpec, target: &TestTarget, engine: &str) -> BlockSettings {
    BlockSettings {
        rw: job.rw.name().into(),
        bs_bytes: job.bs,
        iodepth: job.iodepth,
        jobs: job.jobs,
        direct: job.direct && target.direct_ok,
        engine: engine.into(),
        size_bytes: target.size,
        duration_s: job.duration.map(|d| d.as_secs_f64()).unwrap_or(0.0),
        ramp_s: job.ramp.as_secs_f64(),
        rwmix_read: job.rw.is_mixed().then_some(job.rwmix_read),
        region: match job.region {
            Region::Split => "split".into(),
            Region::Shared => "shared".into(),
        },
        pattern: job.pattern.name().into(),
        huge_pages: Some(job.huge_pages),
        io_size_bytes: job.io_size,
        pause_s: None,
    }
}

/// What one job thread produced; also the sum of one group's jobs.
struct JobOut {
    rec: JobRecorder,
    measured: Duration,
    engine: String,
    warnings: Vec<String>,
    huge_pages: Option<bool>,
}

/// Run one repeat of `spec`. `targets[i]` is the target of group `i`; `devices` are the
/// block devices (kernel names) whose `/proc/diskstats` counters the output gives over the
/// measured window (`BlockRunOutput::devices`, in the same order).
pub fn run_block_test(
    spec: &BlockTestSpec,
    targets: &[&TestTarget],
    devices: &[Option<&str>],
    stop: &StopFlag,
    live: Option<&LiveCounters>,
    run_index: u32,
) -> Result<BlockRunOutput> {
    assert_eq!(spec.groups.len(), targets.len());
    let interval_ms = shared_interval_ms(spec);
    // The heat watch judges throughput drops within this window only.
    let measuring = crate::os::activity::measuring();
    let ran = run_jobs(spec, targets, devices, stop, live, run_index);
    drop(measuring);
    let merged = merge_jobs(spec, ran.results, interval_ms, run_index)?;
    if let Some(sig) = stop.signal() {
        return Err(anyhow::Error::new(crate::error::Interrupted {
            signal: sig,
            signal_name: crate::os::signals::signal_name(sig),
        }));
    }
    let total = merged.total;
    let cpu_usage = CpuUsage {
        user_s: ran.proc_cpu.user.as_secs_f64(),
        sys_s: ran.proc_cpu.sys.as_secs_f64(),
        process_pct: 100.0 * ran.proc_cpu.total().as_secs_f64() / ran.wall.as_secs_f64().max(1e-9),
        max_job_thread_pct: total.rec.max_thread_cpu_pct,
        max_job_thread_wait_pct: total.rec.max_thread_wait_pct,
    };
    let mut total_rr = to_run_result(
        &total.rec,
        total.measured,
        interval_ms,
        run_index,
        Some(cpu_usage),
    );
    total_rr.huge_page_buffers = total.huge_pages;
    let mut warnings = merged.warnings;
    warnings.extend(few_ios_warning(spec, total.rec.ios, total.measured));
    Ok(BlockRunOutput {
        total: total_rr,
        per_group: merged.per_group,
        warnings,
        engines: merged.engines,
        all_write_bytes: total.rec.all_write_bytes,
        write_bytes: total.rec.write_bytes + total.rec.tail_write_bytes,
        read_bytes: total.rec.read_bytes + total.rec.tail_read_bytes,
        devices: ran.devices,
        whole: ran.whole,
    })
}

/// Below this many completions in a timed run's window, one more or less moves its rates by
/// over 5 % (the `noisy` threshold).
pub const FEW_IOS: u64 = 20;

/// The flag of a timed run's window in the `few-ios` advice: `iolab run`'s; the other
/// commands name their own with [`name_window_flag`].
const WINDOW_FLAG: &str = "--duration";

/// The `few-ios` warnings of `warnings` name `flag`, the command's own flag for the window
/// (saturate's `--step-duration`, sustain's `--time`): the advice named run's `--duration`
/// and saturate's flag together wherever it was given.
pub fn name_window_flag(warnings: &mut [Warning], flag: &str) {
    for w in warnings
        .iter_mut()
        .filter(|w| w.code == WarningCode::FewIos)
    {
        w.message = w.message.replace(WINDOW_FLAG, flag);
    }
}

/// A timed run whose window held fewer than `FEW_IOS` completions (none: the device took
/// longer than the run). Size-based runs count every I/O asked: never.
fn few_ios_warning(spec: &BlockTestSpec, ios: u64, measured: Duration) -> Option<Warning> {
    if ios >= FEW_IOS || spec.groups.iter().any(|g| g.duration.is_none()) {
        return None;
    }
    let window = crate::units::fmt_ns(measured.as_nanos() as f64);
    let message = if ios == 0 {
        format!(
            "no I/O completed within a run's {window} window (the device took longer than that for one): its IOPS and MB/s are 0, not measured, and its latency is only what the requests in flight had waited by the deadline, a lower bound; use a longer {WINDOW_FLAG}"
        )
    } else {
        format!(
            "fewer than {FEW_IOS} I/Os completed within a run's {window} window: one more or less moves its IOPS and MB/s by over 5 %; use a longer {WINDOW_FLAG}"
        )
    };
    Some(Warning {
        code: WarningCode::FewIos,
        message,
        test: Some(spec.name.clone()),
    })
}

/// The interval of the test's one series: every group counts in the same intervals.
fn shared_interval_ms(spec: &BlockTestSpec) -> u64 {
    let interval_ms = spec.groups[0].interval.as_millis().max(1) as u64;
    assert!(
        spec.groups
            .iter()
            .all(|g| g.interval == spec.groups[0].interval),
        "job groups of one test share the interval"
    );
    interval_ms
}

/// The job threads' outputs (per group, per job), with the wall and process CPU time they
/// took and the devices' counters over the measured window.
struct JobsRan {
    results: Vec<Vec<Result<JobOut>>>,
    wall: Duration,
    proc_cpu: cpu::CpuTimes,
    devices: Vec<Option<DeviceCounters>>,
    /// The counters from before the release to after the last job ended.
    whole: Vec<Option<DeviceCounters>>,
}

/// One thread per job of every group, released together once all have set up; a job that
/// fails stops the others.
///
/// The devices' counters cover the measured window, as the figures do: they are read when
/// the ramp is over (this thread reads, so no job waits for /proc; without a ramp, just
/// before the release; the jobs say through a channel when their window opened, or that
/// none will) and again once every job is done, its drain and final fsync included. Read
/// around the whole call instead, they took in the setup, the ramp and the caller's polling
/// (up to 100 ms): a 400 ms run with no ramp showed ~500 ms of device time, and dev MB/s
/// came out a fifth low. A second reading of the counters covers the jobs' whole span, from
/// before the release (no I/O submitted yet) to the same end: that of the bytes they wrote
/// in all, which write amplification divides by.
fn run_jobs(
    spec: &BlockTestSpec,
    targets: &[&TestTarget],
    devices: &[Option<&str>],
    stop: &StopFlag,
    live: Option<&LiveCounters>,
    run_index: u32,
) -> JobsRan {
    let nthreads: usize = spec.groups.iter().map(|g| g.jobs as usize).sum();
    let barrier = Arc::new(Barrier::new(nthreads + 1));
    let failed = StopFlag::new();
    let proc_before = cpu::process_times();
    let wall_start = Instant::now();
    // Resolved now (loop backing devices: sysfs), read again when the window opens.
    let mut phases: Vec<Option<PhaseCounters>> =
        devices.iter().map(|d| PhaseCounters::start(*d)).collect();
    let (measuring_tx, measuring_rx) = mpsc::channel::<()>();
    let mut whole = Vec::new();

    let results: Vec<Vec<Result<JobOut>>> = std::thread::scope(|s| {
        let mut handles = Vec::new();
        for (gi, (job, target)) in spec.groups.iter().zip(targets).enumerate() {
            let mut group_handles = Vec::new();
            for j in 0..job.jobs {
                let barrier = Arc::clone(&barrier);
                let failed = failed.clone();
                let target: &TestTarget = target;
                let seed = splitmix(
                    job.seed ^ ((gi as u64) << 32) ^ j as u64 ^ ((run_index as u64) << 48),
                );
                let measuring = measuring_tx.clone();
                group_handles.push(s.spawn(move || {
                    let sync = JobSync {
                        barrier: &barrier,
                        stop,
                        failed: &failed,
                        live,
                        measuring: &measuring,
                    };
                    let r = run_job(job, target, j, seed, sync);
                    if r.is_err() {
                        failed.raise(libc::SIGTERM);
                    }
                    r
                }));
            }
            handles.push(group_handles);
        }
        // Only the jobs hold senders now: when all have ended, `recv` fails.
        drop(measuring_tx);
        // Every span opens before the release, none when this thread gets to run again (on
        // a loaded machine, after the first megabytes went by): the whole one, and the
        // window of a job without a ramp, which measures from its first I/O.
        let from_start = spec.groups.iter().any(|g| g.ramp.is_zero());
        phases.iter_mut().flatten().for_each(PhaseCounters::restart);
        whole = phases.clone();
        // Release all jobs at once, after every one has opened its file and engine.
        barrier.wait();
        // The window opens when the ramp ends (the jobs' stopwatches start now), not when a
        // job sees its first completion after it: on a device completing a request every
        // 100 ms, that completion would be in iolab's count and already in the device's.
        let ramp_end =
            Instant::now() + spec.groups.iter().map(|g| g.ramp).min().unwrap_or_default();
        let wait = ramp_end.saturating_duration_since(Instant::now());
        // Disconnected: every job ended before its ramp did (stopped, failed): no window.
        if let Err(mpsc::RecvTimeoutError::Disconnected) = measuring_rx.recv_timeout(wait) {
            phases.clear();
        } else if !from_start {
            phases.iter_mut().flatten().for_each(PhaseCounters::restart);
        }
        handles
            .into_iter()
            .map(|g| {
                g.into_iter()
                    .map(|h| {
                        h.join()
                            .unwrap_or_else(|_| Err(anyhow!("a job thread panicked")))
                    })
                    .collect()
            })
            .collect()
    });

    // Without a measured window (`phases` cleared) neither span has counters.
    let finish = |counters: &[Option<PhaseCounters>]| -> Vec<Option<DeviceCounters>> {
        (0..devices.len())
            .map(|i| phases.get(i)?.as_ref().and(counters[i].as_ref())?.finish())
            .collect()
    };
    JobsRan {
        devices: finish(&phases),
        whole: finish(&whole),
        results,
        wall: wall_start.elapsed(),
        proc_cpu: cpu::process_times().since(&proc_before),
    }
}

/// The jobs' outputs merged: one result per group, and all groups together.
struct Merged {
    /// All groups (its `measured` the longest group's, its `engine` unused).
    total: JobOut,
    per_group: Vec<RunResult>,
    engines: Vec<String>,
    warnings: Vec<Warning>,
}

/// Merge every job's recorder into its group's and the groups into the total; the first
/// failed job (in order) fails the test.
fn merge_jobs(
    spec: &BlockTestSpec,
    results: Vec<Vec<Result<JobOut>>>,
    interval_ms: u64,
    run_index: u32,
) -> Result<Merged> {
    // Every job's writes count in "no space left ... after N MB" (the others stopped cleanly).
    let written: u64 = results
        .iter()
        .flatten()
        .map(|r| match r {
            Ok(o) => o.rec.all_write_bytes,
            Err(e) => e.downcast_ref::<NoSpace>().map_or(0, |n| n.written),
        })
        .sum();
    let mut m = Merged {
        total: JobOut::empty(),
        per_group: Vec::new(),
        engines: Vec::new(),
        warnings: Vec::new(),
    };
    for group in results {
        let g = merge_group(spec, group, written, &mut m.warnings)?;
        m.total.measured = m.total.measured.max(g.measured);
        m.total.rec += &g.rec;
        m.total.huge_pages = both_huge(m.total.huge_pages, g.huge_pages);
        let mut group_rr = to_run_result(&g.rec, g.measured, interval_ms, run_index, None);
        group_rr.huge_page_buffers = g.huge_pages;
        m.per_group.push(group_rr);
        m.engines.push(g.engine);
    }
    Ok(m)
}

/// One group's jobs summed (the longest measured window, the engine that ran); their
/// engine notes go into `warnings` once each.
fn merge_group(
    spec: &BlockTestSpec,
    group: Vec<Result<JobOut>>,
    written: u64,
    warnings: &mut Vec<Warning>,
) -> Result<JobOut> {
    let mut g = JobOut::empty();
    for r in group {
        let out = r.map_err(|e| match e.downcast::<NoSpace>() {
            Ok(n) => anyhow::Error::new(NoSpace { written, ..n }),
            Err(e) => e,
        })?;
        g.rec += &out.rec;
        g.measured = g.measured.max(out.measured);
        g.engine = out.engine;
        g.huge_pages = both_huge(g.huge_pages, out.huge_pages);
        for w in out.warnings {
            let w = Warning {
                code: WarningCode::Engine,
                message: w,
                test: Some(spec.name.clone()),
            };
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
    }
    Ok(g)
}

impl JobOut {
    fn empty() -> JobOut {
        JobOut {
            rec: JobRecorder::default(),
            measured: Duration::ZERO,
            engine: String::new(),
            warnings: Vec::new(),
            huge_pages: None,
        }
    }
}
fn to_run_result(
    rec: &JobRecorder,
    measured: Duration,
    interval_ms: u64,
    run: u32,
    cpu: Option<CpuUsage>,
) -> RunResult {
    let secs = measured.as_secs_f64().max(1e-9);
    RunResult {
        run,
        elapsed_ns: measured.as_nanos() as u64,
        ops: rec.ios,
        bytes: rec.bytes,
        iops: Some(rec.ios as f64 / secs),
        bw_bytes_per_s: Some(rec.bytes as f64 / secs),
        lat_ns: Some(rec.lat.stats()),
        slat_ns: (!rec.slat.is_empty()).then(|| rec.slat.stats()),
        lat_percentiles_ns: rec.lat.percentile_curve(),
        lat_hist: Some(rec.lat.to_base64()),
        intervals: window_series(rec.interval_points(interval_ms), interval_ms, measured),
        interval_ms: Some(interval_ms),
        avg_queue_depth: Some(rec.busy_ns as f64 / measured.as_nanos().max(1) as f64),
        cpu,
        fsync_ns: rec.fsync_ns,
        tail_ns: rec.tail_ns,
        read: rec
            .split
            .as_ref()
            .map(|s| direction_stats(s.read_ios, rec.read_bytes, secs, &s.read_lat)),
        write: rec
            .split
            .as_ref()
            .map(|s| direction_stats(s.write_ios, rec.write_bytes, secs, &s.write_lat)),
        ..Default::default()
    }
}

/// The series over the measured window: its whole intervals, then the part of one the
/// window ended in, with its rates over its own length, so that the series adds up to the
/// run. (Only whole intervals were kept: a size-based run, which ends anywhere, lost the
/// I/O of its last partial interval: 4 points holding 8,533 of a 465 ms run's 16,384 I/Os.)
/// Nothing after the window is in it: a timed run's drain after its deadline is not counted.
/// Every whole interval of the window is in it, also the last ones when nothing completed
/// in them (as the empty ones before them): a job thread the machine did not run for the
/// last 20 ms of a 200 ms run left 9 points of 20 ms, not 10, as if the run were shorter.
fn window_series(
    points: Vec<IntervalPoint>,
    interval_ms: u64,
    measured: Duration,
) -> Vec<IntervalPoint> {
    let window_ns = measured.as_nanos() as u64;
    let interval_ns = interval_ms * 1_000_000;
    let whole = (window_ns / interval_ns.max(1)) as usize;
    let mut points = points.into_iter();
    let mut out: Vec<IntervalPoint> = Vec::with_capacity(whole + 1);
    out.extend(points.by_ref().take(whole));
    out.extend((out.len()..whole).map(|i| IntervalPoint {
        t_ms: (i as u64 + 1) * interval_ms,
        ..Default::default()
    }));
    let len_ns = window_ns.saturating_sub(whole as u64 * interval_ns);
    if let Some(mut p) = points.next()
        && len_ns > 0
        && p.ios > 0
    {
        let secs = len_ns as f64 / 1e9;
        p.t_ms = window_ns.div_ceil(1_000_000);
        p.iops = p.ios as f64 / secs;
        p.bw_bytes_per_s = p.bytes as f64 / secs;
        out.push(p);
    }
    out
}

/// Region of job `j` of a group.
fn job_region(job: &JobSpec, target: &TestTarget, j: u32) -> (u64, u64) {
    match job.region {
        Region::Shared => (0, target.size),
        Region::Split => {
            let per = target.size / job.jobs as u64 / job.bs * job.bs;
            (per * j as u64, per.max(job.bs))
        }
    }
}

/// What a job thread shares with the others: the start line, the stop flags and the
/// progress counters.
#[derive(Clone, Copy)]
struct JobSync<'a> {
    barrier: &'a Barrier,
    stop: &'a StopFlag,
    /// Raised when another job failed.
    failed: &'a StopFlag,
    live: Option<&'a LiveCounters>,
    /// Told once, when this job's measured window opens (its ramp is over).
    measuring: &'a mpsc::Sender<()>,
}

/// One job thread: set up, start together with the others, run the I/O loop, account.
fn run_job(job: &JobSpec, target: &TestTarget, j: u32, seed: u64, sync: JobSync) -> Result<JobOut> {
    super::private_fd_table();
    let (ready, warnings) = prepare_job(job, target, j, seed, sync.barrier)?;
    // Calibrated (once per process) before the jobs start together.
    super::clock::shared();
    sync.barrier.wait();
    if let Some(live) = sync.live {
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() };
        let _ = live.job_thread.set((tid, Instant::now()));
    }
    let end = io_loop(job, target, ready, sync);
    finish_job(job, sync.stop, warnings, end)
}

/// Everything a job sets up before the start, so that its loop allocates nothing: the
/// engine (its buffers filled), where and what to write, the recorder and the slots.
struct ReadyJob {
    engine: Box<dyn IoEngine>,
    datagen: DataGen,
    offsets: OffsetGen,
    mix_state: u64,
    times: JobTimes,
    rec: JobRecorder,
    slots: Slots,
    sync_engine: bool,
}

/// The job's time line in stopwatch nanoseconds.
#[derive(Clone, Copy)]
struct JobTimes {
    /// Ramp and duration together (none: until `--io-size` is done).
    total_ns: Option<u64>,
    ramp_ns: u64,
    interval_ns: u64,
}

/// Per-slot records of the requests in flight, and room for the reaped completions.
struct Slots {
    free: Vec<usize>,
    start: Vec<u64>,
    op: Vec<Op>,
    off: Vec<u64>,
    done: Vec<Completion>,
}

/// Open the target, set up the engine and everything the loop needs (the engine notes are
/// the result's warnings).
fn prepare_job(
    job: &JobSpec,
    target: &TestTarget,
    j: u32,
    seed: u64,
    barrier: &Barrier,
) -> Result<(ReadyJob, Vec<String>)> {
    let (mut engine, warnings) = open_job_engine(job, target, barrier)?;
    let depth = engine.depth();
    let compressing = target.kind != crate::fs::facts::TargetKind::BlockDevice
        && crate::sysinfo::mounts::mount_of(&target.path)
            .is_some_and(|m| compresses(&m.fs_type, &m.options));
    let datagen = DataGen::new(written_pattern(job.pattern, compressing), seed ^ 0xDA7A);
    for slot in 0..depth {
        datagen.init(engine.buffer_mut(slot));
    }
    let (rstart, rlen) = job_region(job, target, j);
    // Data for (seq, offset) depends only on the job's sequence, not on the slot or engine.
    let offsets = OffsetGen::new(job.rw.is_random(), rstart, rlen, job.bs, seed);
    let ready = ReadyJob {
        sync_engine: engine.is_synchronous(),
        engine,
        datagen,
        offsets,
        mix_state: splitmix(seed ^ 0x004D_4958),
        times: JobTimes::of(job),
        rec: job_recorder(job),
        slots: Slots::new(depth),
    };
    Ok((ready, warnings))
}

/// The target opened and its engine set up, with the notes for the result. On failure the
/// job still meets the others at the start line, so that none waits for it.
fn open_job_engine(
    job: &JobSpec,
    target: &TestTarget,
    barrier: &Barrier,
) -> Result<(Box<dyn IoEngine>, Vec<String>)> {
    let set_up = target
        .open(job.direct, job.rw.writes())
        .map_err(|e| open_error(target, e))
        .and_then(|file| {
            open_engine(
                job.engine,
                file,
                job.iodepth as usize,
                job.bs as usize,
                job.huge_pages,
            )
            .context("cannot set up the I/O engine")
        });
    let (engine, fallback) = match set_up {
        Ok(e) => e,
        Err(e) => {
            barrier.wait();
            return Err(e);
        }
    };
    let mut warnings: Vec<String> = fallback.into_iter().collect();
    warnings.extend(engine.notes());
    if engine.depth() < job.iodepth as usize {
        warnings.push(format!(
            "the {} engine keeps one I/O in flight per job; iodepth {} ran as 1",
            engine.name(),
            job.iodepth
        ));
    }
    Ok((engine, warnings))
}

/// Why the test file did not open (gone, or replaced by a symlink, during the run).
fn open_error(target: &TestTarget, e: std::io::Error) -> anyhow::Error {
    if e.kind() == std::io::ErrorKind::NotFound {
        let why = target
            .vanished()
            .unwrap_or_else(|| "it or the target directory was removed during the run".into());
        anyhow!("the test file {} is gone: {why}", target.path.display())
    } else if e.raw_os_error() == Some(libc::ELOOP) && target.is_created_by_us() {
        anyhow!(
            "the test file {} was replaced by a symlink during the run; iolab does not follow it",
            target.path.display()
        )
    } else {
        anyhow!(e).context(format!("cannot open {}", target.path.display()))
    }
}

impl JobTimes {
    fn of(job: &JobSpec) -> JobTimes {
        JobTimes {
            total_ns: job.duration.map(|d| (job.ramp + d).as_nanos() as u64),
            ramp_ns: job.ramp.as_nanos() as u64,
            interval_ns: job.interval.as_millis().max(1) as u64 * 1_000_000,
        }
    }
}

/// A recorder with room for every interval of the job's series (per direction when it
/// mixes reads and writes).
fn job_recorder(job: &JobSpec) -> JobRecorder {
    let interval_ms = job.interval.as_millis().max(1) as u64;
    let interval_cap = job
        .duration
        .map(|d| (d.as_millis() as u64 / interval_ms + 2) as usize)
        .unwrap_or(64);
    let rec = JobRecorder::with_intervals(interval_cap);
    if job.rw.is_mixed() {
        rec.split_directions()
    } else {
        rec
    }
}

impl Slots {
    fn new(depth: usize) -> Slots {
        Slots {
            free: (0..depth).rev().collect(),
            start: vec![0u64; depth],
            op: vec![Op::Read; depth],
            off: vec![0u64; depth],
            done: Vec::with_capacity(depth),
        }
    }
}

/// How the I/O loop ended: the engine and recorder back, the measured window on the
/// stopwatch, the same span on `CLOCK_MONOTONIC`, the thread's CPU time and wait for a CPU
/// when measuring began (and its clock of that wait), and the first error.
struct LoopEnd {
    engine: Box<dyn IoEngine>,
    rec: JobRecorder,
    measure_start_ns: u64,
    measure_end_ns: u64,
    end_ns: u64,
    monotonic_ns: u64,
    cpu_start: cpu::CpuTimes,
    wait_clock: cpu_wait::RunQueueClock,
    wait_start: Option<Duration>,
    error: Option<anyhow::Error>,
}

/// The hot loop: keep every free slot busy, process one completion per pass, time and
/// record it, until the time, the `--io-size`, a stop or an error ends it (the requests in
/// flight are drained first; a timed run counts only the completions before its deadline).
/// Per I/O it allocates nothing and takes no lock.
fn io_loop(job: &JobSpec, target: &TestTarget, ready: ReadyJob, sync: JobSync) -> LoopEnd {
    let JobSync {
        stop,
        failed,
        live,
        measuring,
        ..
    } = sync;
    let ReadyJob {
        mut engine,
        datagen,
        mut offsets,
        mut mix_state,
        times,
        mut rec,
        slots,
        sync_engine,
    } = ready;
    let Slots {
        mut free,
        start: mut slot_start,
        op: mut slot_op,
        off: mut slot_off,
        mut done,
    } = slots;
    let bs = job.bs as usize;
    let io_size = job.io_size.unwrap_or(u64::MAX);
    // done[next_done..] are reaped completions not yet processed.
    let mut next_done = 0usize;
    let mut inflight = 0usize;
    let mut issued_bytes = 0u64;
    let mut seq = 0u64;
    let mut series = Series::new(times);
    let mut live = LiveBatch::new(live, job.bs, free.len());

    let stopwatch = super::clock::Stopwatch::start();
    let monotonic_start = Instant::now();
    let now_ns = || stopwatch.now_ns();
    let mut cpu_start = cpu::thread_times();
    let wait_clock = cpu_wait::RunQueueClock::open();
    let mut wait_start = wait_clock.waited();
    let mut finishing = false;
    // Whether the first fill was told to the live counters.
    let mut filled = false;
    let mut error: Option<anyhow::Error> = None;
    if series.measuring {
        // No ramp: the window opens now. (A closed channel only means no one listens.)
        let _ = measuring.send(());
    }

    loop {
        // Issue until the queue is full. Each request goes to the kernel on its own, as soon
        // as its slot is free (fio's default `iodepth_batch_submit=1`): the device is fed
        // without waiting for a batch, and each submit call also flushes the completions
        // that arrived meanwhile, so the thread sleeps less. On a loop device at QD32 this
        // gave 1.01x fio's IOPS against 0.96x for one submit per refill (20 paired rounds,
        // docs/PERFORMANCE.md).
        if !finishing {
            while let Some(slot) = free.pop() {
                if issued_bytes >= io_size {
                    free.push(slot);
                    break;
                }
                let off = offsets.next_offset();
                let op = next_op(job, &mut mix_state);
                if op == Op::Write {
                    write_data(
                        &mut engine.buffer_mut(slot)[..bs],
                        &datagen,
                        target,
                        seq,
                        off,
                    );
                }
                seq += 1;
                slot_op[slot] = op;
                slot_off[slot] = off;
                engine.queue(slot, op, off, bs);
                issued_bytes += job.bs;
                inflight += 1;
                // The request starts when the call that hands it to the kernel starts.
                let t_sub = now_ns();
                slot_start[slot] = t_sub;
                match engine.submit() {
                    // Completion queue full: the request stays queued and goes with the
                    // next wait; reap before issuing more.
                    Ok(0) => break,
                    Ok(_) => {
                        if series.measuring && !sync_engine {
                            rec.slat.record((now_ns() - t_sub).max(1));
                        }
                    }
                    Err(e) => {
                        error = Some(anyhow!(e).context("io_uring submit failed"));
                        break;
                    }
                }
            }
        }
        if !filled {
            filled = true;
            live.publish(inflight);
        }
        if error.is_some() {
            break;
        }
        if inflight == 0 {
            break;
        }
        // One completion per pass, then back to issuing: its slot is refilled at once, and
        // the completions still waiting behind it keep counting their latency meanwhile (as
        // fio, which reaps one completion and resubmits one). Reaping a whole batch first
        // and refilling it afterwards would leave the freed slots idle, outside every
        // request's latency, while the refill's submit calls run: at QD32 on a loop device
        // the device then saw ~25 requests on average, not 32.
        if next_done == done.len() {
            done.clear();
            next_done = 0;
            if let Err(e) = reap(&mut *engine, &mut done, inflight) {
                error = Some(e);
                break;
            }
        }
        let t = now_ns();
        let c = done[next_done];
        next_done += 1;
        'one: {
            inflight -= 1;
            free.push(c.slot);
            if c.result != bs as i64 {
                let (op, off, written) = (slot_op[c.slot], slot_off[c.slot], rec.all_write_bytes);
                error.get_or_insert_with(|| failed_io(target, op, off, bs, c.result, written));
                break 'one;
            }
            if slot_op[c.slot] == Op::Write {
                rec.all_write_bytes += job.bs;
            } else if let Some(v) = &target.verify
                && let Err(e) = v.check(&engine.buffer_mut(c.slot)[..bs], slot_off[c.slot])
            {
                error.get_or_insert_with(|| anyhow!("{e} on {}", target.path.display()));
                break 'one;
            }
            live.lat_ns += t.saturating_sub(slot_start[c.slot]);
            // The window opens at the end of the ramp itself, not at the first completion
            // after it, and this completion is the window's first.
            if !series.measuring && t >= times.ramp_ns {
                series.start(times.ramp_ns);
                rec.reset();
                cpu_start = cpu::thread_times();
                wait_start = wait_clock.waited();
                let _ = measuring.send(());
            }
            if series.measuring && times.total_ns.is_none_or(|total| t < total) {
                let lat = t.saturating_sub(slot_start[c.slot]).max(1);
                let interval = series.interval_at(t);
                rec.record(lat, job.bs, slot_op[c.slot] == Op::Write, interval);
                rec.add_in_flight(slot_start[c.slot], t, series.start_ns);
            } else if series.measuring {
                // In flight at the deadline: its time up to it is part of the window's depth
                // and, as the least it took, of the window's latency.
                let total = times.total_ns.unwrap_or(t);
                rec.add_in_flight(slot_start[c.slot], total, series.start_ns);
                // (One submitted after it, before a completion said so, is not the window's.)
                if slot_start[c.slot] < total {
                    let lat = total - slot_start[c.slot];
                    rec.record_in_flight_at_deadline(lat, slot_op[c.slot] == Op::Write);
                }
                // Drained after the deadline: the device counters still see it.
                if slot_op[c.slot] == Op::Write {
                    rec.tail_write_bytes += job.bs;
                } else {
                    rec.tail_read_bytes += job.bs;
                }
            }
        }
        if error.is_some() {
            finishing = true;
        }
        if let Some(total) = times.total_ns
            && t >= total
        {
            finishing = true;
        }
        if issued_bytes >= io_size {
            finishing = true;
        }
        if stop.is_set() || failed.is_set() {
            finishing = true;
        }
        live.count(inflight, finishing);
    }
    let end_ns = now_ns();
    LoopEnd {
        engine,
        rec,
        measure_start_ns: series.start_ns,
        // A timed run's window closes at its deadline: the requests still in flight then
        // are drained, but neither counted nor timed.
        measure_end_ns: times.total_ns.map_or(end_ns, |total| end_ns.min(total)),
        end_ns,
        monotonic_ns: monotonic_start.elapsed().as_nanos() as u64,
        cpu_start,
        wait_clock,
        wait_start,
        error,
    }
}

/// The measured series: whether the ramp is over, since when, and the current interval
/// with the time it ends (moved on by addition: no division per I/O).
struct Series {
    measuring: bool,
    start_ns: u64,
    interval: usize,
    interval_end_ns: u64,
    interval_ns: u64,
}

impl Series {
    fn new(times: JobTimes) -> Series {
        Series {
            measuring: times.ramp_ns == 0,
            start_ns: 0,
            interval: 0,
            interval_end_ns: times.interval_ns,
            interval_ns: times.interval_ns,
        }
    }

    /// The interval that holds `t` (a completion's time, never earlier than the last one).
    #[inline(always)]
    fn interval_at(&mut self, t: u64) -> usize {
        while t >= self.interval_end_ns {
            self.interval += 1;
            self.interval_end_ns += self.interval_ns;
        }
        self.interval
    }

    /// The ramp is over at `t`: measuring starts, the first interval ends one interval later.
    #[inline(always)]
    fn start(&mut self, t: u64) {
        self.measuring = true;
        self.start_ns = t;
        self.interval_end_ns = t + self.interval_ns;
    }
}

/// Completions not yet added to the live progress counters, which are shared with the
/// display thread: they are touched every 256 completions, when none is in flight, and at
/// every completion once the job is stopping (the display then counts down the requests
/// still in flight, which a stop has to wait for).
struct LiveBatch<'a> {
    live: Option<&'a LiveCounters>,
    bs: u64,
    ios: u64,
    lat_ns: u64,
    /// This job's share of `LiveCounters::inflight`.
    inflight: u64,
    /// The engine's slots: what is in flight once the loop has refilled them.
    depth: usize,
}

impl LiveBatch<'_> {
    fn new(live: Option<&LiveCounters>, bs: u64, depth: usize) -> LiveBatch<'_> {
        LiveBatch {
            live,
            bs,
            ios: 0,
            lat_ns: 0,
            inflight: 0,
            depth,
        }
    }

    /// One more completion (its latency already in `lat_ns` if it succeeded); `stopping`:
    /// the loop issues no more.
    #[inline(always)]
    fn count(&mut self, inflight: usize, stopping: bool) {
        self.ios += 1;
        if self.ios >= 256 || inflight == 0 || stopping {
            if let Some(l) = self.live {
                l.ios.fetch_add(self.ios, Ordering::Relaxed);
                l.bytes.fetch_add(self.ios * self.bs, Ordering::Relaxed);
                l.lat_ns.fetch_add(self.lat_ns, Ordering::Relaxed);
            }
            self.ios = 0;
            self.lat_ns = 0;
            // Counted between a completion and the refill: unless the loop is stopping, every
            // slot is in flight again at once (publishing `inflight` said 0 at depth 1, and a
            // stop read it as nothing to wait for).
            self.publish(if stopping { inflight } else { self.depth });
        }
    }

    /// Say how many requests this job has in flight.
    #[inline(always)]
    fn publish(&mut self, inflight: usize) {
        let n = inflight as u64;
        if let Some(l) = self.live
            && n != self.inflight
        {
            // Add first, then take off the old share: the sum never goes below zero.
            l.inflight.fetch_add(n, Ordering::Relaxed);
            l.inflight.fetch_sub(self.inflight, Ordering::Relaxed);
        }
        self.inflight = n;
    }
}

/// The direction of the next I/O: the job's, or drawn from its mix (`rwmix_read` percent
/// reads).
#[inline(always)]
fn next_op(job: &JobSpec, mix_state: &mut u64) -> Op {
    match job.rw {
        Rw::Read | Rw::Randread => Op::Read,
        Rw::Write | Rw::Randwrite => Op::Write,
        Rw::Randrw | Rw::Readwrite => {
            *mix_state = splitmix(*mix_state);
            if (*mix_state % 100) < job.rwmix_read as u64 {
                Op::Read
            } else {
                Op::Write
            }
        }
    }
}

/// What the job's writes hold. The default (`random`) fills every write under 1 MiB anew on a
/// file system that compresses, and elsewhere only stamps each write (random throughout, as
/// fio's default buffers): a compressing file system puts consecutive small writes in one
/// compression unit (btrfs compress-force=zstd kept 32 MiB of 256 MiB of stamped sequential
/// 8 KiB writes, all 256 MiB refilled), while refilling costs IOPS wherever the submitting
/// thread is busy and another core reads the buffers (a loop device, a VM's virtio disk):
/// 4 KiB sequential writes at QD32 on a loop device ran at 0.61x, random ones at 0.935x
/// (scripts/bench-pattern.sh, at 884e82c and the commit after it).
fn written_pattern(pattern: Pattern, compressing: bool) -> Pattern {
    match pattern {
        Pattern::Random if !compressing => Pattern::Stamped,
        p => p,
    }
}

/// Whether a file system of this type mounted with these options compresses what is written:
/// btrfs `compress`/`compress-force`, f2fs `compress_algorithm`, bcachefs `compression`,
/// ntfs-3g `compression`, and zfs (its `compression` property is not in the mount options;
/// lz4 is on by default in current OpenZFS).
pub fn compresses(fs_type: &str, options: &str) -> bool {
    fs_type == "zfs" || options.split(',').any(|o| o.starts_with("compress"))
}

/// The data of write number `seq` at `off`, sealed for `--verify`.
#[inline(always)]
fn write_data(buf: &mut [u8], datagen: &DataGen, target: &TestTarget, seq: u64, off: u64) {
    datagen.fill(buf, seq, off);
    if let Some(v) = &target.verify {
        v.seal(buf, off, seq);
    }
}

/// Wait for at least one completion into `done`; an engine that returns none with
/// requests in flight is an error.
#[inline(always)]
fn reap(engine: &mut dyn IoEngine, done: &mut Vec<Completion>, inflight: usize) -> Result<()> {
    if let Err(e) = engine.reap(1, done) {
        return Err(anyhow!(e).context("waiting for completions failed"));
    }
    if done.is_empty() {
        return Err(anyhow!(
            "the {} engine returned no completion with {inflight} requests in flight",
            engine.name()
        ));
    }
    Ok(())
}

/// The error of a request that did not move its `bs` bytes: for ENOSPC a `NoSpace` with
/// what this job had written (run_block_test puts the bytes written by all jobs into the
/// message), else what failed where.
fn failed_io(
    target: &TestTarget,
    op: Op,
    off: u64,
    bs: usize,
    result: i64,
    written: u64,
) -> anyhow::Error {
    // A device detached or shrunk under the run: said after what failed, and never taken
    // for a full file system (a detached loop device answers writes with ENOSPC).
    let vanished = target.vanished();
    // A write only partly placed on a file system with less than a block free: out of
    // space (the rest would fail with ENOSPC), as a btrfs overwrite that needs new room.
    if op == Op::Write
        && result >= 0
        && vanished.is_none()
        && crate::fs::facts::free_space(&target.path).is_some_and(|free| free < bs as u64)
    {
        return anyhow::Error::new(NoSpace {
            path: target.path.clone(),
            offset: off,
            written,
        });
    }
    let op = if op == Op::Read { "read" } else { "write" };
    let vanished = vanished.map(|why| format!("; {why}")).unwrap_or_default();
    if result >= 0 {
        return anyhow!(
            "short {op} at offset {off} on {}: {result} of {bs} bytes{vanished}",
            target.path.display()
        );
    }
    let err = std::io::Error::from_raw_os_error((-result) as i32);
    if err.raw_os_error() == Some(libc::ENOSPC) && vanished.is_empty() {
        return anyhow::Error::new(NoSpace {
            path: target.path.clone(),
            offset: off,
            written,
        });
    }
    anyhow!(
        "{op} of {bs} bytes at offset {off} on {} failed: {err}{vanished}",
        target.path.display()
    )
}

/// After the loop: the clock check, the measured window and the thread's CPU share, the
/// first error, and the fsync that ends a write run.
fn finish_job(
    job: &JobSpec,
    stop: &StopFlag,
    mut warnings: Vec<String>,
    end: LoopEnd,
) -> Result<JobOut> {
    let LoopEnd {
        mut engine,
        mut rec,
        measure_start_ns,
        measure_end_ns,
        end_ns,
        monotonic_ns,
        cpu_start,
        wait_clock,
        wait_start,
        error,
    } = end;
    warnings.extend(super::clock::drift_warning(end_ns, monotonic_ns));
    let measured = Duration::from_nanos(measure_end_ns.saturating_sub(measure_start_ns));
    rec.tail_ns = Some(end_ns.saturating_sub(measure_end_ns));
    // Over the span the thread's CPU time was counted: from the window's start to the end
    // of the drain. Divided by the window alone (which closes at the deadline), a drain
    // that took longer than a short window made one thread use "359 % of a CPU".
    let cpu_used = cpu::thread_times().since(&cpu_start);
    let counted = Duration::from_nanos(end_ns.saturating_sub(measure_start_ns));
    rec.max_thread_cpu_pct =
        100.0 * cpu_used.total().as_secs_f64() / counted.as_secs_f64().max(1e-9);
    rec.max_thread_wait_pct = wait_start
        .zip(wait_clock.waited())
        .map(|(a, b)| 100.0 * b.saturating_sub(a).as_secs_f64() / counted.as_secs_f64().max(1e-9));
    if let Some(e) = error {
        return Err(e);
    }
    if job.fsync_at_end && job.rw.writes() && !stop.is_set() {
        let t0 = Instant::now();
        engine
            .fsync()
            .context("fsync at the end of the write run failed")?;
        rec.fsync_ns = Some(t0.elapsed().as_nanos() as u64);
    }
    Ok(JobOut {
        rec,
        measured,
        engine: engine.name().to_string(),
        warnings,
        huge_pages: engine.huge_page_buffers(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a stop waits for, as the jobs publish it: every slot while the loop refills them
    /// (between a completion and its refill the count is one short: at depth 1 it said 0, and
    /// a stop on a slow device then claimed to wait for nothing), the exact count once the
    /// loop is stopping, summed over jobs.
    #[test]
    fn the_inflight_count_is_what_a_stop_waits_for() {
        let live = LiveCounters::default();
        let mut a = LiveBatch::new(Some(&live), 4096, 1);
        let mut b = LiveBatch::new(Some(&live), 4096, 8);
        a.publish(1);
        b.publish(8);
        assert_eq!(live.inflight.load(Ordering::Relaxed), 9);
        // Depth 1: every completion leaves none in flight until the refill.
        a.count(0, false);
        assert_eq!(live.inflight.load(Ordering::Relaxed), 9);
        // Stopping: the loop counts down what is left.
        b.count(5, true);
        assert_eq!(live.inflight.load(Ordering::Relaxed), 6);
        a.count(0, true);
        b.count(0, true);
        assert_eq!(live.inflight.load(Ordering::Relaxed), 0);
    }

    /// The default data is refilled on a compressing file system only; an explicit pattern
    /// is kept wherever it goes.
    #[test]
    fn the_default_data_is_refilled_where_the_file_system_compresses() {
        assert!(compresses(
            "btrfs",
            "rw,relatime,compress=zstd:3,space_cache=v2"
        ));
        assert!(compresses("btrfs", "rw,compress-force=lzo"));
        assert!(compresses("f2fs", "rw,compress_algorithm=lz4"));
        assert!(compresses("zfs", "rw,xattr,noacl"));
        assert!(!compresses("btrfs", "rw,relatime,ssd,space_cache=v2"));
        assert!(!compresses("ext4", "rw,relatime"));
        assert_eq!(written_pattern(Pattern::Random, true), Pattern::Random);
        assert_eq!(written_pattern(Pattern::Random, false), Pattern::Stamped);
        for compressing in [true, false] {
            for p in [Pattern::Stamped, Pattern::Zero, Pattern::Refill] {
                assert_eq!(written_pattern(p, compressing), p);
            }
        }
    }

    /// The window was printed with Rust's Debug format (`1.234567ms`, `300.012345ms`) in a
    /// warning every format shows; it is in the units every other figure uses.
    #[test]
    fn the_few_ios_window_is_in_our_units() {
        let spec = BlockTestSpec::single(
            "t",
            JobSpec {
                duration: Some(Duration::from_millis(1)),
                ..JobSpec::random_direct(Rw::Randread, 4096, 1, crate::engine::EngineKind::Sync, 1)
            },
        );
        let w = few_ios_warning(&spec, 3, Duration::from_nanos(1_234_567)).unwrap();
        assert!(w.message.contains("run's 1.23 ms window"), "{}", w.message);
        let w = few_ios_warning(&spec, 0, Duration::from_nanos(12_300)).unwrap();
        assert!(w.message.contains("run's 12.3 µs window"), "{}", w.message);
        // Each command names its own flag, and only it.
        assert!(
            w.message.ends_with("; use a longer --duration"),
            "{}",
            w.message
        );
        let mut ws = vec![w];
        name_window_flag(&mut ws, "--step-duration");
        assert!(
            ws[0].message.ends_with("; use a longer --step-duration"),
            "{}",
            ws[0].message
        );
    }

    /// A window's series holds every whole interval of it, also the last ones in which
    /// nothing completed (a job thread the machine did not run then): 10 points of 20 ms for
    /// a 200 ms run whose I/Os all completed in its first 180 ms, the empty ones at their own
    /// times; a partial interval after them still closes the series.
    #[test]
    fn the_series_keeps_the_empty_intervals_at_the_windows_end() {
        let mut rec = JobRecorder::with_intervals(12);
        for interval in [0, 3, 8] {
            rec.record(1000, 4096, false, interval);
        }
        let ms200 = Duration::from_millis(200);
        let pts = to_run_result(&rec, ms200, 20, 1, None).intervals;
        let t: Vec<u64> = pts.iter().map(|p| p.t_ms).collect();
        assert_eq!(t, (1..=10).map(|i| i * 20).collect::<Vec<_>>());
        let ios: Vec<u64> = pts.iter().map(|p| p.ios).collect();
        assert_eq!(ios, [1, 0, 0, 1, 0, 0, 0, 0, 1, 0]);
        assert_eq!(
            (pts[9].iops, pts[9].bw_bytes_per_s, pts[9].lat_mean_ns),
            (0.0, 0.0, 0.0)
        );

        rec.record(1000, 4096, false, 10);
        let pts = to_run_result(&rec, Duration::from_millis(205), 20, 1, None).intervals;
        assert_eq!(pts.len(), 11);
        assert_eq!((pts[10].t_ms, pts[10].ios), (205, 1));
        assert!((pts[10].iops - 200.0).abs() < 1e-9, "{}", pts[10].iops);
    }

    #[test]
    fn the_stop_line_says_what_it_waits_for() {
        let l = stop_line(libc::SIGINT, 1);
        assert!(
            l.starts_with("iolab: stopping (SIGINT): waiting for the 1 I/O in flight"),
            "{l}"
        );
        assert!(l.contains("Ctrl-C again"), "{l}");
        let l = stop_line(libc::SIGHUP, 0);
        assert!(!l.contains("waiting") && !l.contains("Ctrl-C again"), "{l}");
    }
}

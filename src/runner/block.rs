//! Executing one block test: job threads (one per job of every group) start together, ramp,
//! measure, and their recorders are merged into one `RunResult`.
//!
//! The hot loop is allocation-free: buffers are allocated once per job, offsets come from a
//! permutation, and the clock is read before and after each submit (start, submission
//! latency) and once per completion as it is processed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};

use crate::engine::buffer::both_huge;
use crate::engine::buffer::{DataGen, splitmix};
use crate::engine::{Completion, Op, open_engine};
use crate::model::{BlockSettings, CpuUsage, RunResult, Warning, WarningCode};
use crate::os::signals::StopFlag;
use crate::runner::cpu;
use crate::runner::recorder::{JobRecorder, direction_stats};
use crate::runner::target::TestTarget;
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
    /// Bytes written over the whole run, ramp included (for write amplification).
    pub all_write_bytes: u64,
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

struct JobOut {
    rec: JobRecorder,
    measured: Duration,
    engine: String,
    warnings: Vec<String>,
    huge_pages: Option<bool>,
}

/// Run one repeat of `spec`. `targets[i]` is the target of group `i`.
pub fn run_block_test(
    spec: &BlockTestSpec,
    targets: &[&TestTarget],
    stop: &StopFlag,
    live: Option<&LiveCounters>,
    run_index: u32,
) -> Result<BlockRunOutput> {
    assert_eq!(spec.groups.len(), targets.len());
    // One series for the whole test: every group counts in the same intervals.
    let interval_ms = spec.groups[0].interval.as_millis().max(1) as u64;
    assert!(
        spec.groups
            .iter()
            .all(|g| g.interval == spec.groups[0].interval),
        "job groups of one test share the interval"
    );
    let nthreads: usize = spec.groups.iter().map(|g| g.jobs as usize).sum();
    let barrier = Arc::new(Barrier::new(nthreads + 1));
    let failed = StopFlag::new();
    let proc_before = cpu::process_times();
    let wall_start = Instant::now();

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
                group_handles.push(s.spawn(move || {
                    let r = run_job(job, target, j, seed, &barrier, stop, &failed, live);
                    if r.is_err() {
                        failed.raise(libc::SIGTERM);
                    }
                    r
                }));
            }
            handles.push(group_handles);
        }
        // Release all jobs at once, after every one has opened its file and engine.
        barrier.wait();
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

    let wall = wall_start.elapsed();
    let proc_cpu = cpu::process_times().since(&proc_before);

    let mut warnings = Vec::new();
    let mut per_group = Vec::new();
    let mut engines = Vec::new();
    let mut total = JobRecorder::default();
    let mut total_huge = None;
    let mut measured_max = Duration::ZERO;
    // Every job's writes count in "no space left ... after N MB" (the others stopped cleanly).
    let written: u64 = results
        .iter()
        .flatten()
        .map(|r| match r {
            Ok(o) => o.rec.all_write_bytes,
            Err(e) => e.downcast_ref::<NoSpace>().map_or(0, |n| n.written),
        })
        .sum();
    for (gi, group) in results.into_iter().enumerate() {
        let mut grec = JobRecorder::default();
        let mut gmeasured = Duration::ZERO;
        let mut engine = String::new();
        let mut ghuge = None;
        for r in group {
            let out = r.map_err(|e| match e.downcast::<NoSpace>() {
                Ok(n) => anyhow::Error::new(NoSpace { written, ..n }),
                Err(e) => e,
            })?;
            grec += &out.rec;
            gmeasured = gmeasured.max(out.measured);
            engine = out.engine;
            ghuge = both_huge(ghuge, out.huge_pages);
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
        measured_max = measured_max.max(gmeasured);
        total += &grec;
        total_huge = both_huge(total_huge, ghuge);
        let mut group_rr = to_run_result(&grec, gmeasured, interval_ms, run_index, None);
        group_rr.huge_page_buffers = ghuge;
        per_group.push(group_rr);
        engines.push(engine);
        let _ = gi;
    }
    if let Some(sig) = stop.signal() {
        return Err(anyhow::Error::new(crate::error::Interrupted {
            signal: sig,
            signal_name: crate::os::signals::signal_name(sig),
        }));
    }
    let cpu_usage = CpuUsage {
        user_s: proc_cpu.user.as_secs_f64(),
        sys_s: proc_cpu.sys.as_secs_f64(),
        process_pct: 100.0 * proc_cpu.total().as_secs_f64() / wall.as_secs_f64().max(1e-9),
        max_job_thread_pct: total.max_thread_cpu_pct,
    };
    let mut total_rr = to_run_result(
        &total,
        measured_max,
        interval_ms,
        run_index,
        Some(cpu_usage),
    );
    total_rr.huge_page_buffers = total_huge;
    Ok(BlockRunOutput {
        total: total_rr,
        per_group,
        warnings,
        engines,
        all_write_bytes: total.all_write_bytes,
    })
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
        // Only whole intervals: the drain after the deadline would show as a false dip.
        intervals: rec
            .interval_points(interval_ms)
            .into_iter()
            .filter(|p| p.t_ms as u128 * 1_000_000 <= measured.as_nanos())
            .collect(),
        interval_ms: Some(interval_ms),
        avg_queue_depth: Some(rec.lat_sum_ns as f64 / measured.as_nanos().max(1) as f64),
        cpu,
        fsync_ns: rec.fsync_ns,
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

#[allow(clippy::too_many_arguments)]
fn run_job(
    job: &JobSpec,
    target: &TestTarget,
    j: u32,
    seed: u64,
    barrier: &Barrier,
    stop: &StopFlag,
    failed: &StopFlag,
    live: Option<&LiveCounters>,
) -> Result<JobOut> {
    super::private_fd_table();
    let opened = target.open(job.direct, job.rw.writes()).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            anyhow!(
                "the test file {} is gone: it or the target directory was removed during the run",
                target.path.display()
            )
        } else if e.raw_os_error() == Some(libc::ELOOP) && target.is_created_by_us() {
            anyhow!(
                "the test file {} was replaced by a symlink during the run; iolab does not follow it",
                target.path.display()
            )
        } else {
            anyhow!(e).context(format!("cannot open {}", target.path.display()))
        }
    });
    let (mut engine, fallback) = match opened {
        Ok(file) => match open_engine(
            job.engine,
            file,
            job.iodepth as usize,
            job.bs as usize,
            job.huge_pages,
        ) {
            Ok(e) => e,
            Err(e) => {
                barrier.wait();
                return Err(e).context("cannot set up the I/O engine");
            }
        },
        Err(e) => {
            barrier.wait();
            return Err(e);
        }
    };
    let mut warnings: Vec<String> = fallback.into_iter().collect();
    warnings.extend(engine.notes());
    let depth = engine.depth();
    if depth < job.iodepth as usize {
        warnings.push(format!(
            "the {} engine keeps one I/O in flight per job; iodepth {} ran as 1",
            engine.name(),
            job.iodepth
        ));
    }
    let bs = job.bs as usize;
    let datagen = DataGen::new(job.pattern, seed ^ 0xDA7A, bs);
    for slot in 0..depth {
        datagen.init(engine.buffer_mut(slot));
    }
    let (rstart, rlen) = job_region(job, target, j);
    // Data for (seq, offset) depends only on the job's sequence, not on the slot or engine.
    let mut offsets = OffsetGen::new(job.rw.is_random(), rstart, rlen, job.bs, seed);
    let mut mix_state = splitmix(seed ^ 0x004D_4958);

    let total_ns = job.duration.map(|d| (job.ramp + d).as_nanos() as u64);
    let ramp_ns = job.ramp.as_nanos() as u64;
    let interval_ms = job.interval.as_millis().max(1) as u64;
    let interval_ns = interval_ms * 1_000_000;
    let interval_cap = job
        .duration
        .map(|d| (d.as_millis() as u64 / interval_ms + 2) as usize)
        .unwrap_or(64);
    let mut rec = JobRecorder::with_intervals(interval_cap);
    if job.rw.is_mixed() {
        rec = rec.split_directions();
    }
    let io_size = job.io_size.unwrap_or(u64::MAX);

    let mut free: Vec<usize> = (0..depth).rev().collect();
    let mut slot_start = vec![0u64; depth];
    let mut slot_op = vec![Op::Read; depth];
    let mut slot_off = vec![0u64; depth];
    let mut done: Vec<Completion> = Vec::with_capacity(depth);
    // done[next_done..] are reaped completions not yet processed.
    let mut next_done = 0usize;
    let mut inflight = 0usize;
    let mut issued_bytes = 0u64;
    let mut seq = 0u64;
    let mut measuring = ramp_ns == 0;
    let sync_engine = engine.is_synchronous();

    // Calibrated (once per process) before the jobs start together.
    super::clock::shared();
    barrier.wait();
    let stopwatch = super::clock::Stopwatch::start();
    let monotonic_start = Instant::now();
    let now_ns = || stopwatch.now_ns();
    let mut measure_start_ns = 0u64;
    // The series' current interval and where it ends (no division per I/O).
    let mut interval = 0usize;
    let mut interval_end_ns = interval_ns;
    let mut cpu_start = cpu::thread_times();
    let mut t;
    let mut finishing = false;
    let mut error: Option<anyhow::Error> = None;
    let mut live_pending = 0u64;
    let mut live_lat_pending = 0u64;

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
                let op = match job.rw {
                    Rw::Read | Rw::Randread => Op::Read,
                    Rw::Write | Rw::Randwrite => Op::Write,
                    Rw::Randrw | Rw::Readwrite => {
                        mix_state = splitmix(mix_state);
                        if (mix_state % 100) < job.rwmix_read as u64 {
                            Op::Read
                        } else {
                            Op::Write
                        }
                    }
                };
                if op == Op::Write {
                    let buf = &mut engine.buffer_mut(slot)[..bs];
                    datagen.stamp(buf, seq, off);
                    if let Some(v) = &target.verify {
                        v.seal(buf, off, seq);
                    }
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
                        if measuring && !sync_engine {
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
            if let Err(e) = engine.reap(1, &mut done) {
                error = Some(anyhow!(e).context("waiting for completions failed"));
                break;
            }
            if done.is_empty() {
                error = Some(anyhow!(
                    "the {} engine returned no completion with {inflight} requests in flight",
                    engine.name()
                ));
                break;
            }
        }
        t = now_ns();
        let c = done[next_done];
        next_done += 1;
        'one: {
            inflight -= 1;
            free.push(c.slot);
            let want = bs as i64;
            if c.result != want {
                let op = if slot_op[c.slot] == Op::Read {
                    "read"
                } else {
                    "write"
                };
                let off = slot_off[c.slot];
                let msg = if c.result < 0 {
                    let err = std::io::Error::from_raw_os_error((-c.result) as i32);
                    if err.raw_os_error() == Some(libc::ENOSPC) {
                        // run_block_test puts the bytes written by all jobs into the message.
                        error.get_or_insert_with(|| {
                            anyhow::Error::new(NoSpace {
                                path: target.path.clone(),
                                offset: off,
                                written: rec.all_write_bytes,
                            })
                        });
                        break 'one;
                    } else {
                        format!(
                            "{op} of {bs} bytes at offset {off} on {} failed: {err}",
                            target.path.display()
                        )
                    }
                } else {
                    format!(
                        "short {op} at offset {off} on {}: {} of {bs} bytes",
                        target.path.display(),
                        c.result
                    )
                };
                error.get_or_insert_with(|| anyhow!(msg));
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
            live_lat_pending += t.saturating_sub(slot_start[c.slot]);
            if measuring {
                let lat = t.saturating_sub(slot_start[c.slot]).max(1);
                while t >= interval_end_ns {
                    interval += 1;
                    interval_end_ns += interval_ns;
                }
                rec.record(lat, job.bs, slot_op[c.slot] == Op::Write, interval);
            }
        }
        // Live progress counters are shared with the display thread: touch them rarely.
        live_pending += 1;
        if live_pending >= 256 || inflight == 0 {
            if let Some(l) = live {
                l.ios.fetch_add(live_pending, Ordering::Relaxed);
                l.bytes.fetch_add(live_pending * job.bs, Ordering::Relaxed);
                l.lat_ns.fetch_add(live_lat_pending, Ordering::Relaxed);
            }
            live_pending = 0;
            live_lat_pending = 0;
        }
        if error.is_some() {
            finishing = true;
        }
        if !measuring && t >= ramp_ns {
            measuring = true;
            measure_start_ns = t;
            interval_end_ns = t + interval_ns;
            rec.reset();
            cpu_start = cpu::thread_times();
        }
        if let Some(total) = total_ns
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
    }
    let end_ns = now_ns();
    warnings.extend(super::clock::drift_warning(
        end_ns,
        monotonic_start.elapsed().as_nanos() as u64,
    ));
    let measured = Duration::from_nanos(end_ns.saturating_sub(measure_start_ns));
    let cpu_used = cpu::thread_times().since(&cpu_start);
    rec.max_thread_cpu_pct =
        100.0 * cpu_used.total().as_secs_f64() / measured.as_secs_f64().max(1e-9);
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

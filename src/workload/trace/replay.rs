//! `iolab trace replay app.trace --target DIR`: recreate the files the program found, then
//! replay its calls with one thread per recorded thread, as fast as possible or at the
//! recorded times. Calls on the same path keep their recorded order across threads (a
//! reader never overtakes the writer it followed), so byte counts match the recording.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::fileset::{create_filled, settle};
use super::measure::{check_target, contention_warning, ops_detail, run_result};
use super::runner::{OpAcc, read_full_at};
use super::tracefile::{self, Call, CallOp, Header};
use crate::engine::buffer::{DataGen, Pattern};
use crate::model::trace::{ReplayDetail, TraceRunDetail, TraceTestDetail};
use crate::model::{ResultDoc, RunResult, TestResult, Warning, WarningCode};
use crate::os::context::RunContext;
use crate::os::cpu_wait::WaitSpan;
use crate::os::signals::StopFlag;
use crate::stats::repeat::{RepeatMode, spread_warnings, summarize_test};
use crate::sysinfo::diskstats::{PhaseCounters, write_amplification};

/// How a replay paces its calls (`--timing`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timing {
    /// Every thread issues its calls as fast as possible (order kept per file).
    Asap,
    /// Every call is issued at its recorded time since the start.
    Recorded,
}

impl Timing {
    pub fn name(self) -> &'static str {
        match self {
            Timing::Asap => "asap",
            Timing::Recorded => "recorded",
        }
    }
}

/// What to replay, where and how (`cli::trace` checks it from the command line).
#[derive(Debug, Clone)]
pub struct ReplaySettings {
    /// The trace file.
    pub trace: PathBuf,
    /// The directory the recorded files are made in.
    pub target: PathBuf,
    pub timing: Timing,
    /// Keep the replayed files.
    pub keep: bool,
    pub repeat: RepeatMode,
}

/// Bytes a replay needs: the fixtures plus the furthest extent written to each path.
pub fn bytes_needed(h: &Header, calls: &[Call]) -> u64 {
    let mut ext: HashMap<&str, u64> = HashMap::new();
    for c in calls.iter().filter(|c| c.op == CallOp::Write) {
        let e = ext.entry(&c.path).or_default();
        *e = (*e).max(c.off.unwrap_or(0) + c.len.unwrap_or(0));
    }
    h.files
        .iter()
        .map(|f| f.size)
        .chain(ext.values().copied())
        .fold(0u64, u64::saturating_add)
}

/// A recording read and checked for `iolab trace replay` (everything before the lock).
pub struct Replay {
    h: Header,
    calls: Vec<Call>,
    repeat: RepeatMode,
}

impl Replay {
    pub fn load(a: &ReplaySettings) -> Result<Replay> {
        let (h, calls) = tracefile::read(&a.trace)?;
        if calls.is_empty() {
            // It replayed nothing three times and reported "0.00 MB/s, 0 ops/s", exit 0.
            return Err(crate::error::UsageError::new(format!(
                "{}: no calls to replay ({} recorded; {} outside the recording's root {} were not kept): record the program again with --root where it works",
                a.trace.display(),
                h.calls,
                h.skipped_outside_root,
                h.root
            ))
            .into());
        }
        check_target(
            &a.target,
            bytes_needed(&h, &calls),
            "the recording's files and the furthest end of its writes",
        )?;
        Ok(Replay {
            h,
            calls,
            repeat: a.repeat,
        })
    }

    /// Every replay run into one test of `doc` (the family path saves it).
    pub fn measure(&self, a: &ReplaySettings, ctx: &RunContext, doc: &mut ResultDoc) -> Result<()> {
        let (h, calls, repeat) = (&self.h, &self.calls, &self.repeat);
        let device = doc.environment.block_device.clone();
        let label = format!("replay {}", a.trace.display());
        let mut test = TestResult {
            name: label.clone(),
            family: "trace".into(),
            direction: Some("mixed".into()),
            params: BTreeMap::from([
                ("trace".to_string(), a.trace.display().to_string()),
                ("timing".to_string(), a.timing.name().to_string()),
                ("command".to_string(), h.command.join(" ")),
            ]),
            trace: Some(TraceTestDetail {
                workload: a.trace.display().to_string(),
                source: "replay".into(),
                description: format!("recorded from: {}", h.command.join(" ")),
                scale: 1.0,
                streams: Vec::new(),
                recording: Some(super::summary::summarize(calls)),
                recorder: Some(h.recorder.clone()),
            }),
            ..Default::default()
        };
        let mut values = Vec::new();
        let mut outcome = Ok(());
        let mut run = 0;
        while repeat.wants_more(&values) {
            run += 1;
            match one_replay(h, calls, a, &ctx.stop, device.as_deref(), run) {
                Ok(r) => {
                    values.push(r.elapsed_ns as f64);
                    test.runs.push(r);
                }
                Err(e) => {
                    test.error = Some(format!("{e:#}"));
                    outcome = Err(e);
                    break;
                }
            }
        }
        summarize_test(&mut test);
        for w in spread_warnings(&test, repeat) {
            doc.warn(w);
        }
        let threads = calls.iter().map(|c| c.tid).collect::<HashSet<_>>().len();
        if let Some(w) =
            contention_warning(&test, threads, ", or record the program with fewer threads")
        {
            doc.warn(w);
        }
        if let Some(w) = strace_pace(h, a.timing) {
            doc.warn(Warning {
                test: Some(label.clone()),
                ..w
            });
        }
        if let Some(t) = tracefile::truncation(&a.trace, h, calls.len()) {
            doc.warn(Warning {
                code: WarningCode::TraceTruncated,
                message: format!(
                    "{t}; the replay issued only those, and its comparison with the recorded time (the whole recording's) does not hold; record the program again"
                ),
                test: Some(label),
            });
        }
        doc.tests.push(test);
        outcome
    }
}

/// `--timing recorded` of a strace recording: strace's own cost per call is in its time
/// stamps (the tracepoints recorder takes its out), so the recorded pace is the program's
/// slowed by strace. A shell script that ran 29 ms under the tracepoints took 65 ms under
/// strace, and its replay at "the recorded times" took 65 ms without a word.
fn strace_pace(h: &tracefile::Header, timing: Timing) -> Option<Warning> {
    (timing == Timing::Recorded && h.recorder == tracefile::RECORDER_STRACE).then(|| Warning {
        code: WarningCode::StracePace,
        message: "recorded with strace, whose own cost per call (ptrace stops, often several µs) is in the time stamps and is not taken out: --timing recorded replays the program as slowed by strace; record as root with the tracepoints recorder, which takes its cost out".into(),
        test: None,
    })
}

/// Per path, a counter of calls done on it. A call waits until every earlier call on its
/// own paths, and on each of their parent directories (`mkdir d` before `d/e`), ran; it
/// counts only for its own paths, so siblings in one directory still run in parallel.
struct Order {
    done: Vec<AtomicU64>,
    /// For each call: (path index, calls on that path that must be done first).
    waits: Vec<Vec<(usize, u64)>>,
    /// For each call: the paths it counts for.
    own: Vec<Vec<usize>>,
}

impl Order {
    fn new(calls: &[Call]) -> Order {
        let mut ids: HashMap<String, usize> = HashMap::new();
        let mut seen: Vec<u64> = Vec::new();
        let mut id_of = |p: &str, seen: &mut Vec<u64>| -> usize {
            let n = ids.len();
            let id = *ids.entry(p.to_string()).or_insert(n);
            if id == seen.len() {
                seen.push(0);
            }
            id
        };
        let mut waits = Vec::with_capacity(calls.len());
        let mut own = Vec::with_capacity(calls.len());
        for c in calls {
            let (mut w, mut o) = (Vec::new(), Vec::new());
            for p in std::iter::once(c.path.as_str()).chain(c.to.as_deref()) {
                let mut anc = Path::new(p).parent();
                while let Some(d) = anc.filter(|d| !d.as_os_str().is_empty()) {
                    let id = id_of(d.to_str().unwrap_or(""), &mut seen);
                    w.push((id, seen[id]));
                    anc = d.parent();
                }
                let id = id_of(p, &mut seen);
                w.push((id, seen[id]));
                seen[id] += 1;
                o.push(id);
            }
            waits.push(w);
            own.push(o);
        }
        Order {
            done: seen.iter().map(|_| AtomicU64::new(0)).collect(),
            waits,
            own,
        }
    }

    fn wait(&self, i: usize, stop: &StopFlag) {
        for &(id, k) in &self.waits[i] {
            let mut spins = 0u32;
            while self.done[id].load(Ordering::Acquire) < k && !stop.is_set() {
                spins += 1;
                if spins < 200 {
                    std::thread::yield_now();
                } else {
                    std::thread::sleep(Duration::from_micros(50));
                }
            }
        }
    }

    fn release(&self, i: usize) {
        for &id in &self.own[i] {
            self.done[id].fetch_add(1, Ordering::Release);
        }
    }
}

#[derive(Default)]
struct ThreadOut {
    /// What this thread issued (data calls and fsyncs), for the replay's own summary.
    log: Vec<Call>,
    ops: BTreeMap<String, OpAcc>,
    read_bytes: u64,
    write_bytes: u64,
    errors: u64,
    first_error: Option<String>,
    /// How long the thread waited for a CPU, % of its replay.
    cpu_wait_pct: Option<f64>,
}

fn one_replay(
    h: &Header,
    calls: &[Call],
    a: &ReplaySettings,
    stop: &StopFlag,
    device: Option<&str>,
    run: u32,
) -> Result<RunResult> {
    // Recorded so that the next start removes it if this process is killed.
    let root = crate::fs::registry::WorkDir::new(
        tempfile::Builder::new()
            .prefix("iolab-replay-")
            .tempdir_in(&a.target)
            .with_context(|| format!("cannot create a directory in {}", a.target.display()))?,
    );
    let dir = root.path();
    let data = DataGen::new(Pattern::Refill, 0x7265_706C_6179 ^ run as u64);
    let mut buf = vec![0u8; super::fileset::CHUNK];
    data.init(&mut buf);
    let mut seq = 0;
    for d in &h.dirs {
        std::fs::create_dir_all(dir.join(d)).with_context(|| format!("cannot create {d}"))?;
    }
    for f in &h.files {
        let p = dir.join(&f.path);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)?;
        }
        create_filled(&p, f.size, &data, &mut buf, &mut seq, stop)
            .with_context(|| format!("cannot create {}", f.path))?;
    }
    let fixtures: Vec<_> = h.files.iter().map(|f| dir.join(&f.path)).collect();
    settle(dir, fixtures.iter().map(|p| p.as_path())).context("cannot sync the recreated files")?;
    let order = Order::new(calls);
    let mut by_tid: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (i, c) in calls.iter().enumerate() {
        by_tid.entry(c.tid).or_default().push(i);
    }
    let wdata = DataGen::new(Pattern::Random, 0x0077_7269_7465);
    let depths = super::replay_async::ring_depths(calls);
    let phase = PhaseCounters::start(device);
    let start = Instant::now();
    let outs: Vec<ThreadOut> = std::thread::scope(|sc| {
        let hs: Vec<_> = by_tid
            .values()
            .map(|idx| {
                let (order, wdata, depths) = (&order, &wdata, &depths);
                sc.spawn(move || {
                    let ctx = ThreadCtx {
                        dir,
                        calls,
                        order,
                        wdata,
                        depths,
                        timing: a.timing,
                        start,
                        stop,
                    };
                    replay_thread(&ctx, idx)
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let elapsed = start.elapsed();
    stop.check()?;
    let mut ops: BTreeMap<String, OpAcc> = BTreeMap::new();
    let mut log = Vec::new();
    let cpu_wait_pct = outs.iter().filter_map(|o| o.cpu_wait_pct).reduce(f64::max);
    let mut detail = ReplayDetail {
        timing: a.timing.name().into(),
        recorded_ns: h.recorded_ns,
        replay_ns: elapsed.as_nanos() as u64,
        threads: by_tid.len() as u32,
        ..Default::default()
    };
    for o in outs {
        log.extend(o.log);
        for (k, v) in o.ops {
            let e = ops.entry(k).or_default();
            e.count += v.count;
            e.bytes += v.bytes;
            e.hist += &v.hist;
        }
        detail.read_bytes += o.read_bytes;
        detail.write_bytes += o.write_bytes;
        detail.errors += o.errors;
        if detail.first_error.is_none() {
            detail.first_error = o.first_error;
        }
    }
    detail.calls = ops.values().map(|o| o.count).sum();
    detail.speedup = h.recorded_ns as f64 / (detail.replay_ns.max(1)) as f64;
    let (op_results, all) = ops_detail(&ops);
    let mut r = run_result(
        run,
        detail.replay_ns,
        detail.calls,
        detail.read_bytes + detail.write_bytes,
        &all,
    );
    if let Some(dc) = phase.and_then(|p| p.finish()) {
        r.write_amplification = write_amplification(&dc, detail.write_bytes);
        r.device = Some(dc);
    }
    r.trace = Some(TraceRunDetail {
        streams: Vec::new(),
        ops: op_results,
        prefill_bytes: h.files.iter().map(|f| f.size).sum(),
        replay: Some(detail),
        summary: Some(super::summary::summarize(&log)),
        cpu_wait_pct,
    });
    if a.keep {
        let kept = root.keep();
        crate::eline!("replayed files kept in {}", kept.display());
    } else {
        root.close().context("cannot remove the replayed files")?;
    }
    Ok(r)
}

/// What every replay thread shares.
struct ThreadCtx<'a> {
    dir: &'a Path,
    calls: &'a [Call],
    order: &'a Order,
    wdata: &'a DataGen,
    /// Per recorded ring: the queue depth its calls are replayed at.
    depths: &'a HashMap<u32, usize>,
    timing: Timing,
    start: Instant,
    stop: &'a StopFlag,
}

impl ThreadOut {
    fn account(&mut self, c: &Call, lat: u64, r: io::Result<u64>) {
        let acc = self.ops.entry(c.op.name().to_string()).or_default();
        acc.count += 1;
        acc.hist.record(lat);
        match r {
            Ok(n) => {
                acc.bytes += n;
                match c.op {
                    CallOp::Read => self.read_bytes += n,
                    CallOp::Write => self.write_bytes += n,
                    _ => {}
                }
            }
            Err(e) => {
                self.errors += 1;
                if self.first_error.is_none() {
                    self.first_error = Some(format!("{} {}: {e}", c.op.name(), c.path));
                }
            }
        }
    }

    /// Keep a data call or fsync in the log (start since the replay began, latency, bytes).
    fn log(&mut self, c: &Call, t_ns: u64, lat: u64, bytes: Option<u64>) {
        if matches!(
            c.op,
            CallOp::Read | CallOp::Write | CallOp::Fsync | CallOp::Fdatasync
        ) {
            self.log.push(Call {
                t_ns,
                dur_ns: lat,
                len: if c.op == CallOp::Read || c.op == CallOp::Write {
                    bytes
                } else {
                    None
                },
                ..c.clone()
            });
        }
    }
}

fn replay_thread(x: &ThreadCtx, idx: &[usize]) -> ThreadOut {
    if x.timing == Timing::Recorded {
        // Sleeps to a call's time otherwise overshoot by the default 50 µs timer slack,
        // more than the gap between calls of a fast program.
        // SAFETY: PR_SET_TIMERSLACK takes an integer and affects only this thread.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
    }
    let waited = WaitSpan::start();
    let mut out = ThreadOut::default();
    let mut handles: HashMap<String, Vec<File>> = HashMap::new();
    let mut buf = vec![0u8; (wdata_len(x.calls, idx)).max(1)];
    x.wdata.init(&mut buf);
    let mut k = 0;
    while k < idx.len() {
        if x.stop.is_set() {
            break;
        }
        let i = idx[k];
        let c = &x.calls[i];
        if let Some(ring) = c
            .ring
            .filter(|_| matches!(c.op, CallOp::Read | CallOp::Write))
        {
            let end = super::replay_async::batch_end(x.calls, idx, k);
            async_batch(x, &idx[k..end], ring, &mut out);
            k = end;
            continue;
        }
        k += 1;
        if x.timing == Timing::Recorded {
            x.stop.sleep_until(x.start + Duration::from_nanos(c.t_ns));
        }
        x.order.wait(i, x.stop);
        let t = Instant::now();
        let r = exec(x.dir, c, &mut handles, &mut buf, x.wdata, i as u64);
        let lat = t.elapsed().as_nanos() as u64;
        x.order.release(i);
        let t_ns = t.duration_since(x.start).as_nanos() as u64;
        out.log(c, t_ns, lat, r.as_ref().ok().copied());
        out.account(c, lat, r);
    }
    out.cpu_wait_pct = waited.pct();
    out
}

/// Consecutive asynchronous calls of one ring and file, through the io_uring engine at
/// the ring's recorded depth. They wait for what came before the first of them on their
/// path, and count as done together at the end.
fn async_batch(x: &ThreadCtx, batch_idx: &[usize], ring: u32, out: &mut ThreadOut) {
    let batch: Vec<&Call> = batch_idx.iter().map(|&i| &x.calls[i]).collect();
    let depth = x.depths.get(&ring).copied().unwrap_or(1);
    x.order.wait(batch_idx[0], x.stop);
    let mut done = Vec::with_capacity(batch.len());
    let pace = super::replay_async::Pace {
        recorded: x.timing == Timing::Recorded,
        start: x.start,
        sleep_until: &|t| x.stop.sleep_until(t),
        stopped: &|| x.stop.is_set(),
    };
    let r = super::replay_async::run_batch(
        x.dir,
        &batch,
        depth,
        x.wdata,
        &pace,
        batch_idx[0] as u64,
        &mut |d| done.push(d),
    );
    for &i in batch_idx {
        x.order.release(i);
    }
    for d in done {
        let c = batch[d.pos];
        let lat = d.lat.as_nanos() as u64;
        let t_ns = d.submitted.duration_since(x.start).as_nanos() as u64;
        out.log(c, t_ns, lat, d.result.as_ref().ok().copied());
        out.account(c, lat, d.result);
    }
    if let Err(e) = r {
        out.errors += 1;
        if out.first_error.is_none() {
            out.first_error = Some(format!("io_uring replay of {}: {e}", batch[0].path));
        }
    }
}

fn wdata_len(calls: &[Call], idx: &[usize]) -> usize {
    idx.iter()
        .map(|&i| &calls[i])
        .filter(|c| matches!(c.op, CallOp::Read | CallOp::Write))
        .filter_map(|c| c.len)
        .max()
        .unwrap_or(0)
        .min(16 << 20) as usize
}

fn handle<'a>(
    dir: &Path,
    path: &str,
    handles: &'a mut HashMap<String, Vec<File>>,
) -> io::Result<&'a File> {
    let v = handles.entry(path.to_string()).or_default();
    if v.is_empty() {
        v.push(super::replay_async::open_replayed(&dir.join(path))?);
    }
    Ok(v.last().expect("one handle"))
}

/// Execute one recorded call; returns bytes moved.
fn exec(
    dir: &Path,
    c: &Call,
    handles: &mut HashMap<String, Vec<File>>,
    buf: &mut [u8],
    wdata: &DataGen,
    seq: u64,
) -> io::Result<u64> {
    let p = dir.join(&c.path);
    match c.op {
        CallOp::Open => {
            let flags = c.flags.as_deref().unwrap_or("");
            let has = |f: &str| flags.split(',').any(|x| x == f);
            let f = OpenOptions::new()
                .read(true)
                .write(true)
                .create(has("create"))
                .truncate(has("trunc"))
                // Never write through a symlink planted in the replay directory.
                .custom_flags(libc::O_NOFOLLOW)
                .open(&p)
                .or_else(|_| File::open(&p))?;
            handles.entry(c.path.clone()).or_default().push(f);
            Ok(0)
        }
        CallOp::Close => {
            if let Some(v) = handles.get_mut(&c.path) {
                v.pop();
            }
            Ok(0)
        }
        CallOp::Read | CallOp::Write => {
            let f = handle(dir, &c.path, handles)?;
            let (mut off, mut left) = (c.off.unwrap_or(0), c.len.unwrap_or(0));
            let mut done = 0;
            loop {
                let n = left.min(buf.len() as u64) as usize;
                let k = if c.op == CallOp::Read {
                    read_full_at(f, &mut buf[..n], off)? as u64
                } else {
                    wdata.fill(&mut buf[..n], seq, off);
                    f.write_all_at(&buf[..n], off)?;
                    n as u64
                };
                done += k;
                left -= k;
                off += k;
                if left == 0 || k == 0 {
                    return Ok(done);
                }
            }
        }
        CallOp::Fsync => handle(dir, &c.path, handles)?.sync_all().map(|_| 0),
        CallOp::Fdatasync => handle(dir, &c.path, handles)?.sync_data().map(|_| 0),
        CallOp::Stat => std::fs::metadata(&p).map(|_| 0),
        CallOp::Unlink => std::fs::remove_file(&p).map(|_| 0),
        CallOp::Rmdir => std::fs::remove_dir(&p).map(|_| 0),
        CallOp::Mkdir => std::fs::create_dir(&p).map(|_| 0),
        CallOp::Rename => {
            let to = c.to.as_deref().unwrap_or_default();
            std::fs::rename(&p, dir.join(to))?;
            if let Some(v) = handles.remove(&c.path) {
                handles.entry(to.to_string()).or_default().extend(v);
            }
            Ok(0)
        }
        CallOp::Truncate => handle(dir, &c.path, handles)?
            .set_len(c.len.unwrap_or(0))
            .map(|_| 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only a strace recording replayed at its recorded times is slowed by the recorder.
    #[test]
    fn strace_pace_is_said_for_recorded_timing_only() {
        let strace = tracefile::Header {
            recorder: tracefile::RECORDER_STRACE.into(),
            ..Default::default()
        };
        let w = strace_pace(&strace, Timing::Recorded).expect("a warning");
        assert_eq!(w.code, WarningCode::StracePace);
        assert!(
            w.message.starts_with("recorded with strace"),
            "{}",
            w.message
        );
        assert!(strace_pace(&strace, Timing::Asap).is_none());
        let tp = tracefile::Header {
            recorder: tracefile::RECORDER_TRACEPOINTS.into(),
            ..Default::default()
        };
        assert!(strace_pace(&tp, Timing::Recorded).is_none());
    }
}

//! Running a workload's streams on their prepared file sets (see `fileset`): one thread per
//! stream copy, all started together; each picks operations from its mix or sequence,
//! paces data operations to its rate, and accounts bytes, per-operation latency and missed
//! deadlines. Written data is synced once at the end, inside the measured time.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::fileset::{FileSet, Rng, syncfs};
use super::format::{Op, OpChoice, Stream, Workload};
use crate::engine::buffer::{DataGen, Pattern};
use crate::os::cpu_wait::WaitSpan;
use crate::os::signals::StopFlag;
use crate::stats::hist::LatencyHistogram;
use crate::units::fmt_size_iec;

/// Count, bytes and latency of one operation kind.
#[derive(Debug, Clone, Default)]
pub struct OpAcc {
    pub count: u64,
    pub bytes: u64,
    pub hist: LatencyHistogram,
}

/// What one stream copy did.
#[derive(Debug, Clone, Default)]
pub struct StreamOutcome {
    pub stream: usize,
    pub copy: u32,
    pub ops: BTreeMap<&'static str, OpAcc>,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub elapsed: Duration,
    /// When this copy started and ended its operations (the run's measured time spans
    /// from the first start to the last end; see `span`).
    pub started: Option<Instant>,
    pub ended: Option<Instant>,
    pub deadlines: u64,
    pub missed: u64,
    /// How long this copy's thread waited for a CPU, % of its run (read at its start and
    /// end; `None` without schedstat).
    pub cpu_wait_pct: Option<f64>,
}

/// The measured time of a run: from the first stream copy's start to the last one's end.
/// Taken from the workers' own clocks, not the coordinating thread's: that thread may be
/// woken from the start barrier milliseconds after the streams began (a run of 2.3 ms was
/// reported as 30 µs, and its MB/s 77 times too high).
fn span(out: &[StreamOutcome]) -> Duration {
    let first = out.iter().filter_map(|o| o.started).min();
    let last = out.iter().filter_map(|o| o.ended).max();
    match (first, last) {
        (Some(a), Some(b)) => b.saturating_duration_since(a),
        _ => Duration::ZERO,
    }
}

/// Run every stream copy at once; `Err` on the first I/O error (the others stop too), naming
/// the stream, the operation and the file.
pub fn run(
    w: &Workload,
    sets: Vec<FileSet>,
    root: &Path,
    seed: u64,
    stop: &StopFlag,
) -> anyhow::Result<(Vec<StreamOutcome>, Duration, Option<Duration>)> {
    let abort = AtomicBool::new(false);
    let barrier = Barrier::new(sets.len() + 1);
    let max_req = w
        .streams
        .iter()
        .map(|s| s.request_size.max())
        .max()
        .unwrap_or(4096);
    let max_req = max_req.min(64 << 20) as usize;
    let results = std::thread::scope(|sc| {
        let handles: Vec<_> = sets
            .into_iter()
            .map(|set| {
                let (abort, barrier) = (&abort, &barrier);
                let s = &w.streams[set.stream];
                sc.spawn(move || {
                    let mut wk = Worker::new(s, set, seed, max_req);
                    barrier.wait();
                    let r = wk.run(stop, abort);
                    if r.is_err() {
                        abort.store(true, Ordering::Relaxed);
                    }
                    r.map(|_| wk.out)
                })
            })
            .collect();
        barrier.wait();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a stream thread panicked")))
            })
            .collect::<Vec<_>>()
    });
    stop.check()?;
    let mut out = Vec::new();
    for r in results {
        out.push(r?);
    }
    let elapsed = span(&out);
    // Written data counts once it is on the device, as a copy is done only when it is: the
    // final write-back is part of the measured time (and reported on its own).
    let mut sync = None;
    if out.iter().any(|o| o.write_bytes > 0) {
        let t = Instant::now();
        syncfs(root).map_err(|e| {
            anyhow::Error::new(e).context(format!(
                "syncfs of the written files under {}",
                root.display()
            ))
        })?;
        sync = Some(t.elapsed());
    }
    Ok((out, elapsed + sync.unwrap_or_default(), sync))
}

struct Worker<'a> {
    s: &'a Stream,
    set: FileSet,
    rng: Rng,
    data: DataGen,
    buf: Vec<u8>,
    cur: usize,
    pos: u64,
    handle: Option<(usize, File)>,
    seq_index: usize,
    counter: u64,
    out: StreamOutcome,
}

impl<'a> Worker<'a> {
    fn new(s: &'a Stream, set: FileSet, seed: u64, max_req: usize) -> Worker<'a> {
        let key = seed ^ ((set.stream as u64) << 40) ^ ((set.copy as u64) << 20) ^ 0x5EED;
        let data = DataGen::new(Pattern::Random, key);
        let mut buf = vec![0u8; max_req];
        data.init(&mut buf);
        let out = StreamOutcome {
            stream: set.stream,
            copy: set.copy,
            ..Default::default()
        };
        Worker {
            s,
            set,
            rng: Rng::new(key),
            data,
            buf,
            cur: 0,
            pos: 0,
            handle: None,
            seq_index: 0,
            counter: 0,
            out,
        }
    }

    fn next_op(&mut self) -> Op {
        match &self.s.ops {
            OpChoice::Sequence(v) => {
                let op = v[self.seq_index % v.len()];
                self.seq_index += 1;
                op
            }
            OpChoice::Mix(v) => {
                let total: f64 = v.iter().map(|(_, w)| w).sum();
                let mut x = self.rng.unit() * total;
                for (op, w) in v {
                    if x < *w {
                        return *op;
                    }
                    x -= w;
                }
                v.last().map(|(o, _)| *o).unwrap_or(Op::Read)
            }
        }
    }

    fn run(&mut self, stop: &StopFlag, abort: &AtomicBool) -> anyhow::Result<()> {
        let waited = WaitSpan::start();
        let t0 = Instant::now();
        self.out.started = Some(t0);
        let mut moved = 0u64;
        let mut idle = 0u32;
        loop {
            if stop.is_set() || abort.load(Ordering::Relaxed) {
                break;
            }
            if self.s.duration.is_some_and(|d| t0.elapsed() >= d)
                || self.s.amount.is_some_and(|a| moved >= a)
            {
                break;
            }
            let op = self.next_op();
            let mut req = self
                .s
                .request_size
                .sample(self.rng.unit())
                .min(self.buf.len() as u64);
            if let Some(a) = self.s.amount {
                req = req.min(a - moved).max(1);
            }
            let due = match (self.s.rate, op.moves_data()) {
                (Some(rate), true) => {
                    let start = t0 + Duration::from_secs_f64(moved as f64 / rate);
                    stop.sleep_until(start);
                    Some(t0 + Duration::from_secs_f64((moved + req) as f64 / rate))
                }
                _ => None,
            };
            let started = Instant::now();
            let bytes = self.exec(op, req)?;
            let lat = started.elapsed();
            let end = Instant::now();
            if let Some(due) = due {
                self.out.deadlines += 1;
                if end > due {
                    self.out.missed += 1;
                }
            }
            let acc = self.out.ops.entry(op.name()).or_default();
            acc.count += 1;
            acc.bytes += bytes;
            acc.hist.record(lat.as_nanos() as u64);
            moved += bytes;
            // A stream that can no longer move data (all its files deleted) must not spin
            // forever waiting for its amount.
            idle = if op.moves_data() && bytes == 0 {
                idle + 1
            } else {
                0
            };
            if idle > 10_000 && self.s.duration.is_none() {
                break;
            }
            if !self.s.think_time.is_zero() {
                stop.sleep_until(Instant::now() + self.s.think_time);
            }
        }
        self.handle = None;
        let end = Instant::now();
        self.out.ended = Some(end);
        self.out.elapsed = end - t0;
        self.out.cpu_wait_pct = waited.pct();
        Ok(())
    }

    /// The error of `op` on `path` (bytes `range` = offset and length), naming the stream:
    /// "stream 'log' (copy 0): append of 64.0 KiB at offset 1048576 to DIR/f3: No space
    /// left on device" (it was the bare OS error). Built only on an error: nothing is
    /// formatted on the measured path.
    fn fail(&self, op: Op, path: &Path, range: Option<(u64, u64)>, e: io::Error) -> anyhow::Error {
        let what = match (op, range) {
            (Op::Read, Some((off, len))) => format!(
                "read of {} at offset {off} from {}",
                fmt_size_iec(len),
                path.display()
            ),
            (Op::Write | Op::Append, Some((off, len))) => format!(
                "{} of {} at offset {off} to {}",
                op.name(),
                fmt_size_iec(len),
                path.display()
            ),
            _ => format!("{} of {}", op.name(), path.display()),
        };
        anyhow::Error::new(e).context(format!(
            "stream '{}' (copy {}): {what}",
            self.s.name, self.set.copy
        ))
    }

    fn file(&mut self, i: usize) -> io::Result<&File> {
        if self.handle.as_ref().map(|(j, _)| *j) != Some(i) {
            self.handle = None;
            let slot = &mut self.set.slots[i];
            // A symlink planted in iolab's tree must not redirect its writes outside it.
            let f = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&slot.path)
                .map_err(|e| {
                    // The caller names the file.
                    if e.raw_os_error() == Some(libc::ELOOP) {
                        io::Error::new(
                            e.kind(),
                            "replaced by a symlink during the run; iolab does not follow it",
                        )
                    } else {
                        e
                    }
                })?;
            slot.present = true;
            self.handle = Some((i, f));
        }
        Ok(&self.handle.as_ref().expect("just opened").1)
    }

    fn random_present(&mut self) -> Option<usize> {
        let n = self.set.slots.len() as u64;
        let start = self.rng.below(n) as usize;
        (0..n as usize)
            .map(|k| (start + k) % n as usize)
            .find(|&i| self.set.slots[i].present)
    }

    fn aligned_below(&mut self, limit: u64, req: u64) -> u64 {
        let align = if req >= 4096 { 4096 } else { 1 };
        (self.rng.below(limit.max(1)) / align) * align
    }

    /// Execute one operation; returns the bytes it moved.
    fn exec(&mut self, op: Op, req: u64) -> anyhow::Result<u64> {
        let n = self.set.slots.len();
        match op {
            Op::Read => {
                let (i, off) = if self.rng.unit() < self.s.sequential {
                    let mut i = self.cur;
                    let mut k = 0;
                    while k < n && (self.pos >= self.set.slots[i].len || !self.set.slots[i].present)
                    {
                        i = (i + 1) % n;
                        self.pos = 0;
                        k += 1;
                    }
                    (i, self.pos)
                } else {
                    let Some(i) = self.random_present() else {
                        return Ok(0);
                    };
                    let len = self.set.slots[i].len;
                    (i, self.aligned_below(len, req))
                };
                if !self.set.slots[i].present || off >= self.set.slots[i].len {
                    return Ok(0);
                }
                let want = req.min(self.set.slots[i].len - off) as usize;
                let mut buf = std::mem::take(&mut self.buf);
                let r = self
                    .file(i)
                    .and_then(|f| read_full_at(f, &mut buf[..want], off));
                self.buf = buf;
                let got = r.map_err(|e| {
                    self.fail(op, &self.set.slots[i].path, Some((off, want as u64)), e)
                })? as u64;
                self.cur = i;
                self.pos = off + got;
                self.out.read_bytes += got;
                Ok(got)
            }
            Op::Write | Op::Append => {
                let (i, off, len) = if op == Op::Append {
                    (self.cur, self.set.slots[self.cur].len, req)
                } else if self.rng.unit() < self.s.sequential {
                    if self.pos >= self.set.slots[self.cur].size {
                        self.cur = (self.cur + 1) % n;
                        self.pos = 0;
                    }
                    let size = self.set.slots[self.cur].size;
                    (self.cur, self.pos, req.min(size - self.pos))
                } else {
                    let i = self.rng.below(n as u64) as usize;
                    let size = self.set.slots[i].size;
                    let off = self.aligned_below(size, req);
                    (i, off, req.min(size - off))
                };
                let len = len as usize;
                self.counter += 1;
                let mut buf = std::mem::take(&mut self.buf);
                self.data.fill(&mut buf[..len], self.counter, off);
                let r = self.file(i).and_then(|f| f.write_all_at(&buf[..len], off));
                self.buf = buf;
                r.map_err(|e| self.fail(op, &self.set.slots[i].path, Some((off, len as u64)), e))?;
                let slot = &mut self.set.slots[i];
                slot.len = slot.len.max(off + len as u64);
                self.cur = i;
                self.pos = off + len as u64;
                self.out.write_bytes += len as u64;
                Ok(len as u64)
            }
            Op::Fsync => {
                let i = self.cur;
                self.file(i)
                    .and_then(|f| f.sync_all())
                    .map_err(|e| self.fail(op, &self.set.slots[i].path, None, e))?;
                Ok(0)
            }
            Op::Stat => {
                let path = match self.random_present() {
                    Some(i) => &self.set.slots[i].path,
                    None => &self.set.dir,
                };
                std::fs::metadata(path).map_err(|e| self.fail(op, path, None, e))?;
                Ok(0)
            }
            Op::Open => {
                if let Some(i) = self.random_present() {
                    let path = &self.set.slots[i].path;
                    drop(File::open(path).map_err(|e| self.fail(op, path, None, e))?);
                }
                Ok(0)
            }
            Op::Unlink => {
                if let Some(i) = self.random_present() {
                    if self.handle.as_ref().is_some_and(|(j, _)| *j == i) {
                        self.handle = None;
                    }
                    let path = &self.set.slots[i].path;
                    std::fs::remove_file(path).map_err(|e| self.fail(op, path, None, e))?;
                    let slot = &mut self.set.slots[i];
                    slot.present = false;
                    slot.len = 0;
                }
                Ok(0)
            }
            Op::Rename => {
                if let Some(i) = self.random_present() {
                    self.counter += 1;
                    let from = self.set.slots[i].path.clone();
                    let to = from.with_file_name(format!("f{i}.r{}", self.counter));
                    std::fs::rename(&from, &to).map_err(|e| self.fail(op, &from, None, e))?;
                    self.set.slots[i].path = to;
                }
                Ok(0)
            }
            Op::Mkdir => {
                self.counter += 1;
                let dir = self.set.dir.join(format!("m{}", self.counter));
                std::fs::create_dir(&dir).map_err(|e| self.fail(op, &dir, None, e))?;
                Ok(0)
            }
        }
    }
}

/// pread until `buf` is full or end of file.
pub fn read_full_at(f: &File, buf: &mut [u8], off: u64) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match f.read_at(&mut buf[got..], off + got as u64) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(started: Instant, ran: Duration) -> StreamOutcome {
        StreamOutcome {
            started: Some(started),
            ended: Some(started + ran),
            elapsed: ran,
            ..Default::default()
        }
    }

    #[test]
    fn span_runs_from_the_first_start_to_the_last_end() {
        let t = Instant::now();
        let out = [
            outcome(t + Duration::from_millis(3), Duration::from_millis(10)),
            outcome(t, Duration::from_millis(2)),
        ];
        assert_eq!(span(&out), Duration::from_millis(13));
        assert_eq!(span(&[]), Duration::ZERO);
    }

    /// The run's measured time holds every stream's own time (it was taken by the
    /// coordinating thread, which can wake from the start barrier after the streams ran:
    /// a 2.3 ms run was reported as 30 µs).
    #[test]
    fn run_time_covers_every_stream() {
        let dir = tempfile::tempdir().unwrap();
        let text = r#"
[[stream]]
name = "a"
copies = 2
files = 2
file_size = "64KiB"
mix = { read = 1 }
request_size = "4KiB"
amount = "256KiB"
"#;
        let w = super::super::validate::parse("t", text).unwrap();
        let stop = StopFlag::new();
        for i in 0..20 {
            let root = dir.path().join(format!("r{i}"));
            std::fs::create_dir(&root).unwrap();
            let mut sets = super::super::fileset::layout(&w, &root, i);
            super::super::fileset::prepare(&w, &mut sets, i, &stop).unwrap();
            let (out, elapsed, _) = run(&w, sets, &root, i, &stop).unwrap();
            for o in &out {
                assert!(
                    elapsed >= o.elapsed,
                    "run {i}: the run took {elapsed:?} but a stream {:?}",
                    o.elapsed
                );
            }
        }
    }
}

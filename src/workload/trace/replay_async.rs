//! Replay of asynchronous calls (recorded from io_uring): a thread's consecutive reads and
//! writes of one ring on one file go through iolab's io_uring engine with as many in flight
//! as the recording had on that ring, instead of one after another.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::fs::OpenOptions;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use super::tracefile::{Call, CallOp};
use crate::engine::uring::UringEngine;
use crate::engine::{BufferPool, Completion, DataGen, IoEngine, Op};

/// Deepest queue the engine is given, whatever the recording says.
pub const MAX_DEPTH: usize = 1024;

/// Per ring: the most of its reads and writes in flight at once in the recording.
pub fn ring_depths(calls: &[Call]) -> HashMap<u32, usize> {
    let mut by_ring: HashMap<u32, Vec<&Call>> = HashMap::new();
    for c in calls
        .iter()
        .filter(|c| matches!(c.op, CallOp::Read | CallOp::Write))
    {
        if let Some(r) = c.ring {
            by_ring.entry(r).or_default().push(c);
        }
    }
    by_ring
        .into_iter()
        .map(|(r, mut v)| {
            v.sort_by_key(|c| c.t_ns);
            let mut ends = BinaryHeap::new();
            let mut max = 1;
            for c in v {
                while ends.peek().is_some_and(|Reverse(e)| *e <= c.t_ns) {
                    ends.pop();
                }
                ends.push(Reverse(c.t_ns + c.dur_ns));
                max = max.max(ends.len());
            }
            (r, max.min(MAX_DEPTH))
        })
        .collect()
}

/// The end (exclusive) of the asynchronous batch starting at `idx[from]`: following calls
/// of the same thread, ring and path that read or write.
pub fn batch_end(calls: &[Call], idx: &[usize], from: usize) -> usize {
    let first = &calls[idx[from]];
    let mut end = from + 1;
    while end < idx.len() {
        let c = &calls[idx[end]];
        if c.ring != first.ring
            || c.path != first.path
            || !matches!(c.op, CallOp::Read | CallOp::Write)
        {
            break;
        }
        end += 1;
    }
    end
}

/// One finished asynchronous call: its position in the batch, when it was submitted,
/// its latency and its result.
pub struct Done {
    pub pos: usize,
    pub submitted: Instant,
    pub lat: Duration,
    pub result: io::Result<u64>,
}

/// How a batch is paced and stopped (the replay's `--timing` and stop flag).
pub struct Pace<'a> {
    /// Submit each call at its recorded time since `start` (`--timing recorded`).
    pub recorded: bool,
    pub start: Instant,
    /// Sleeps until an instant, returning early when the run is stopped.
    pub sleep_until: &'a dyn Fn(Instant),
    pub stopped: &'a dyn Fn() -> bool,
}

/// A file of the replay opened for its reads and writes: read-write, not through a symlink,
/// else read-only (this batch's file, and the plain replay's handle of a file).
pub fn open_replayed(p: &Path) -> io::Result<std::fs::File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(p)
        .or_else(|_| std::fs::File::open(p))
}

/// Run `batch` (reads and writes of one file) with up to `depth` in flight.
pub fn run_batch(
    dir: &Path,
    batch: &[&Call],
    depth: usize,
    wdata: &DataGen,
    pace: &Pace,
    seq: u64,
    on_done: &mut dyn FnMut(Done),
) -> io::Result<()> {
    let file = open_replayed(&dir.join(&batch[0].path))?;
    let max_len = batch
        .iter()
        .filter_map(|c| c.len)
        .max()
        .unwrap_or(4096)
        .clamp(1, 16 << 20) as usize;
    let slot_len = max_len.div_ceil(4096) * 4096;
    let depth = depth.clamp(1, batch.len().max(1));
    let mut eng = UringEngine::new(file, BufferPool::new(depth, slot_len, false))?;
    let mut free: Vec<usize> = (0..depth).rev().collect();
    let mut inflight: HashMap<usize, (usize, Instant)> = HashMap::new();
    let mut comps: Vec<Completion> = Vec::new();
    let mut reap = |eng: &mut UringEngine,
                    free: &mut Vec<usize>,
                    inflight: &mut HashMap<usize, (usize, Instant)>|
     -> io::Result<()> {
        comps.clear();
        eng.reap(1, &mut comps)?;
        let now = Instant::now();
        for c in comps.drain(..) {
            if let Some((pos, t)) = inflight.remove(&c.slot) {
                on_done(Done {
                    pos,
                    submitted: t,
                    lat: now - t,
                    result: if c.result < 0 {
                        Err(io::Error::from_raw_os_error(-c.result as i32))
                    } else {
                        Ok(c.result as u64)
                    },
                });
            }
            free.push(c.slot);
        }
        Ok(())
    };
    for (pos, c) in batch.iter().enumerate() {
        if (pace.stopped)() {
            break;
        }
        if pace.recorded {
            (pace.sleep_until)(pace.start + Duration::from_nanos(c.t_ns));
        }
        while free.is_empty() {
            reap(&mut eng, &mut free, &mut inflight)?;
        }
        let slot = free.pop().expect("a free slot");
        let (off, len) = (
            c.off.unwrap_or(0),
            (c.len.unwrap_or(0) as usize).min(slot_len),
        );
        let op = if c.op == CallOp::Write {
            wdata.fill(&mut eng.buffer_mut(slot)[..len], seq + pos as u64, off);
            Op::Write
        } else {
            Op::Read
        };
        eng.queue(slot, op, off, len);
        inflight.insert(slot, (pos, Instant::now()));
        eng.submit()?;
    }
    while !inflight.is_empty() {
        reap(&mut eng, &mut free, &mut inflight)?;
    }
    Ok(())
}

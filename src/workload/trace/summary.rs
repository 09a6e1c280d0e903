//! What a trace says (`iolab trace summary`, and the section of every record and replay
//! report): read/write shares, request sizes, sequentiality, queue depth over time,
//! inter-arrival times, working set, hot files and fsyncs, from a list of calls. Pure; the
//! definitions are in docs/METHODOLOGY.md ("What a trace says").

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};

use super::tracefile::{Call, CallOp};
use crate::model::trace::{DepthBucket, GapBucket, GapStats, HotFile, SizeBucket, TraceSummary};

fn is_data(c: &Call) -> bool {
    matches!(c.op, CallOp::Read | CallOp::Write) && c.len.unwrap_or(0) > 0
}

/// Largest power of two <= n (n > 0).
fn pow2_floor(n: u64) -> u64 {
    1u64 << (63 - n.leading_zeros())
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[i.clamp(1, sorted.len()) - 1]
}

pub fn summarize(calls: &[Call]) -> TraceSummary {
    let mut s = TraceSummary::default();
    let mut io: Vec<&Call> = calls.iter().filter(|c| is_data(c)).collect();
    io.sort_by_key(|c| c.t_ns);
    let (mut first, mut last) = (u64::MAX, 0u64);
    for c in calls
        .iter()
        .filter(|c| is_data(c) || matches!(c.op, CallOp::Fsync | CallOp::Fdatasync))
    {
        first = first.min(c.t_ns);
        last = last.max(c.t_ns + c.dur_ns);
        if matches!(c.op, CallOp::Fsync | CallOp::Fdatasync) {
            s.fsyncs += 1;
        }
    }
    s.duration_ns = last.saturating_sub(first.min(last));

    let mut sizes: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
    let mut prev_end: HashMap<&str, u64> = HashMap::new();
    let mut ranges: HashMap<&str, Vec<(u64, u64)>> = HashMap::new();
    let mut hot: HashMap<&str, (u64, u64)> = HashMap::new();
    for c in &io {
        let (off, len) = (c.off.unwrap_or(0), c.len.unwrap_or(0));
        let write = c.op == CallOp::Write;
        let b = sizes.entry(pow2_floor(len)).or_default();
        if write {
            s.write_calls += 1;
            s.write_bytes += len;
            b.1 += 1;
        } else {
            s.read_calls += 1;
            s.read_bytes += len;
            b.0 += 1;
        }
        if c.ring.is_some() {
            s.async_calls += 1;
        }
        let seq = prev_end.get(c.path.as_str()).copied().unwrap_or(0) == off;
        if seq && write {
            s.sequential_writes += 1;
        } else if seq {
            s.sequential_reads += 1;
        }
        prev_end.insert(&c.path, off + len);
        ranges.entry(&c.path).or_default().push((off, off + len));
        let h = hot.entry(&c.path).or_default();
        h.0 += 1;
        h.1 += len;
    }
    s.sizes = sizes
        .into_iter()
        .map(|(size_bytes, (reads, writes))| SizeBucket {
            size_bytes,
            reads,
            writes,
        })
        .collect();
    s.files = ranges.len() as u64;
    for (_, mut r) in ranges {
        r.sort_unstable();
        let (mut cur_s, mut cur_e) = r[0];
        for &(a, b) in &r[1..] {
            if a > cur_e {
                s.working_set_bytes += cur_e - cur_s;
                (cur_s, cur_e) = (a, b);
            } else {
                cur_e = cur_e.max(b);
            }
        }
        s.working_set_bytes += cur_e - cur_s;
    }
    let mut hot: Vec<_> = hot.into_iter().collect();
    hot.sort_by(|a, b| b.1.1.cmp(&a.1.1).then(a.0.cmp(b.0)));
    s.hottest = hot
        .into_iter()
        .take(10)
        .map(|(p, (calls, bytes))| HotFile {
            path: p.to_string(),
            calls,
            bytes,
        })
        .collect();
    let requests = requests(&io);
    depth(&requests, &mut s);
    let async_io: Vec<&Call> = io.iter().copied().filter(|c| c.ring.is_some()).collect();
    if !async_io.is_empty() {
        let mut a = TraceSummary::default();
        depth(&async_io, &mut a);
        s.async_depth_mean = Some(a.depth_mean);
    }
    s.interarrival_ns = gaps(&requests);
    if s.fsyncs > 0 {
        if s.duration_ns > 0 {
            s.fsyncs_per_s = Some(s.fsyncs as f64 / (s.duration_ns as f64 / 1e9));
        }
        s.write_bytes_per_fsync = Some(s.write_bytes as f64 / s.fsyncs as f64);
    }
    s
}

/// The requests among the reads and writes (sorted by start): an in-kernel copy
/// (`copy_file_range`, `sendfile`) is recorded as a read of its source and a write of its
/// destination, one call of one thread with the same start and duration; it is one request,
/// once in flight (a single-threaded `cp` showed depth 2). A synchronous call's second half
/// is left out: a write of the same thread, start and duration right after its read (a
/// thread has one synchronous call in flight at a time; two reads within one tick of the
/// clock stay two).
fn requests<'a>(io: &[&'a Call]) -> Vec<&'a Call> {
    let mut last: HashMap<u32, (u64, u64, CallOp)> = HashMap::new();
    io.iter()
        .copied()
        .filter(|c| {
            if c.ring.is_some() {
                return true;
            }
            let prev = last.insert(c.tid, (c.t_ns, c.dur_ns, c.op));
            !(c.op == CallOp::Write && prev == Some((c.t_ns, c.dur_ns, CallOp::Read)))
        })
        .collect()
}

/// In-flight depth seen by each I/O at its start, and the time spent at each depth.
fn depth(io: &[&Call], s: &mut TraceSummary) {
    let mut per: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    let mut ends: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
    for c in io {
        while ends.peek().is_some_and(|Reverse(e)| *e <= c.t_ns) {
            ends.pop();
        }
        ends.push(Reverse(c.t_ns + c.dur_ns));
        per.entry(ends.len() as u32).or_default().0 += 1;
    }
    // Time at each depth: a sweep over starts (+1) and ends (-1), ends first at a tie.
    let mut edges: Vec<(u64, i32)> = io
        .iter()
        .filter(|c| c.dur_ns > 0)
        .flat_map(|c| [(c.t_ns, 1), (c.t_ns + c.dur_ns, -1)])
        .collect();
    edges.sort_unstable();
    let (mut cur, mut at, mut busy, mut weighted) = (0i64, 0u64, 0u64, 0u128);
    for (t, d) in edges {
        if cur > 0 {
            let dt = t - at;
            per.entry(cur as u32).or_default().1 += dt;
            busy += dt;
            weighted += dt as u128 * cur as u128;
        }
        cur += d as i64;
        at = t;
    }
    s.depth_max = per.keys().copied().max().unwrap_or(0);
    s.depth_mean = if busy > 0 {
        weighted as f64 / busy as f64
    } else {
        0.0
    };
    s.depths = per
        .into_iter()
        .map(|(depth, (ios, time_ns))| DepthBucket {
            depth,
            ios,
            time_ns,
        })
        .collect();
}

fn gaps(io: &[&Call]) -> GapStats {
    let mut g: Vec<u64> = io.windows(2).map(|w| w[1].t_ns - w[0].t_ns).collect();
    g.sort_unstable();
    let mut buckets: BTreeMap<u64, u64> = BTreeMap::new();
    for &x in &g {
        *buckets
            .entry(if x == 0 { 0 } else { pow2_floor(x) })
            .or_default() += 1;
    }
    GapStats {
        count: g.len() as u64,
        mean: if g.is_empty() {
            0.0
        } else {
            g.iter().sum::<u64>() as f64 / g.len() as f64
        },
        p50: percentile(&g, 50.0),
        p90: percentile(&g, 90.0),
        p99: percentile(&g, 99.0),
        max: g.last().copied().unwrap_or(0),
        buckets: buckets
            .into_iter()
            .map(|(lower_ns, count)| GapBucket { lower_ns, count })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(t_ns: u64, dur_ns: u64, op: CallOp, path: &str, off: u64, len: u64) -> Call {
        Call {
            t_ns,
            tid: 1,
            op,
            path: path.into(),
            to: None,
            off: Some(off),
            len: Some(len),
            flags: None,
            dur_ns,
            ring: None,
        }
    }

    /// 4 files written in one 64 KiB write each, then read in 4 KiB pieces in a fixed
    /// shuffled order: every figure known by hand.
    #[test]
    fn constructed_trace() {
        let mut calls = Vec::new();
        let mut t = 0;
        for f in 0..4 {
            calls.push(call(t, 10, CallOp::Write, &format!("f{f}"), 0, 65536));
            t += 100;
        }
        // Reads: file 0 pieces 0,1,2 in order (first not sequential: the write ended at
        // 65536), file 1 pieces 5,3, file 0 piece 3 (sequential: follows piece 2).
        for (f, k) in [(0, 0), (0, 1), (0, 2), (1, 5), (1, 3), (0, 3)] {
            calls.push(call(t, 10, CallOp::Read, &format!("f{f}"), k * 4096, 4096));
            t += 100;
        }
        calls.push(Call {
            op: CallOp::Fsync,
            off: None,
            len: None,
            ..call(t, 50, CallOp::Fsync, "f0", 0, 0)
        });
        let s = summarize(&calls);
        assert_eq!((s.write_calls, s.write_bytes), (4, 4 * 65536));
        assert_eq!((s.read_calls, s.read_bytes), (6, 6 * 4096));
        assert_eq!(
            s.sizes,
            vec![
                SizeBucket {
                    size_bytes: 4096,
                    reads: 6,
                    writes: 0
                },
                SizeBucket {
                    size_bytes: 65536,
                    reads: 0,
                    writes: 4
                }
            ]
        );
        assert_eq!(s.sequential_writes, 4);
        assert_eq!(s.sequential_reads, 3, "f0 pieces 1, 2 and 3");
        assert_eq!(s.working_set_bytes, 4 * 65536);
        assert_eq!(s.files, 4);
        assert_eq!(s.hottest[0].path, "f0");
        assert_eq!(s.hottest[0].bytes, 65536 + 4 * 4096);
        assert_eq!(s.fsyncs, 1);
        assert_eq!(s.duration_ns, 1000 + 50);
        assert_eq!(s.depth_max, 1);
        assert_eq!(s.depths[0].ios, 10);
        assert_eq!(s.depths[0].time_ns, 100);
        assert_eq!(s.interarrival_ns.count, 9);
        assert_eq!(s.interarrival_ns.p50, 100);
    }

    /// `cp` records each copy_file_range as a read of the source and a write of the
    /// destination: one thread, one call, counted once in flight (it said max 2) and once
    /// between arrivals (a gap of 0 each time); its bytes count on both sides.
    #[test]
    fn an_in_kernel_copy_is_one_request_in_flight() {
        let calls: Vec<_> = (0..4)
            .flat_map(|i| {
                [
                    call(i * 100, 50, CallOp::Read, "src", i * 65536, 65536),
                    call(i * 100, 50, CallOp::Write, "dst", i * 65536, 65536),
                ]
            })
            .collect();
        let s = summarize(&calls);
        assert_eq!(s.depth_max, 1);
        assert_eq!(s.depths.len(), 1);
        assert_eq!(s.depths[0].ios, 4);
        assert_eq!(s.depth_mean, 1.0);
        assert_eq!(s.interarrival_ns.count, 3);
        assert_eq!(s.interarrival_ns.p50, 100);
        assert_eq!((s.read_calls, s.read_bytes), (4, 4 * 65536));
        assert_eq!((s.write_calls, s.write_bytes), (4, 4 * 65536));
        // Two threads copying at once are two requests in flight.
        let two: Vec<_> = calls
            .iter()
            .cloned()
            .chain(calls.iter().map(|c| Call {
                tid: 2,
                ..c.clone()
            }))
            .collect();
        assert_eq!(summarize(&two).depth_max, 2);
    }

    #[test]
    fn queue_depth_of_overlapping_async_reads() {
        // 16 reads submitted 1 ns apart, each taking 1000 ns: the last sees depth 16.
        let calls: Vec<_> = (0..16)
            .map(|i| Call {
                ring: Some(0),
                ..call(i, 1000, CallOp::Read, "f", i * 4096, 4096)
            })
            .collect();
        let s = summarize(&calls);
        assert_eq!(s.depth_max, 16);
        assert_eq!(s.async_calls, 16);
        assert!(s.depth_mean > 15.0, "{}", s.depth_mean);
        assert_eq!(s.sequential_reads, 16);
    }
}

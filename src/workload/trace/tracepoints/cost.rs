//! The recorder's own cost, and taking it out of the time stamps.
//!
//! A traced call is slower than an untraced one by the recorder's work (two ftrace events,
//! and for a call with a path the BPF program that copies it). The gaps between a
//! program's calls then hold that work too, and a replay at the recorded times would keep
//! the recorder's pace instead of the program's. So `record` times the same calls on its
//! own thread before anything is traced and again once the thread is followed (the
//! fastest of several batches: a busy machine only ever makes a batch slower), and moves
//! every call earlier by the cost of the traced calls before it.

use std::collections::HashMap;
use std::time::Instant;

use super::super::strace_line::Line;
use crate::workload::trace::tracefile::RecorderCost;

/// Calls per timed batch, and batches per kind of call.
const CALLS: u32 = 200;
const BATCHES: u32 = 7;

/// Nanoseconds per call of the fastest batch: a one-byte `pread` of /dev/zero (no path)
/// and an `openat` of a path that cannot exist (a path the BPF program copies; it fails
/// with ENOTDIR without touching a file system).
pub fn time_calls() -> Option<(u64, u64)> {
    let zero = std::fs::File::open("/dev/zero").ok()?;
    let root = std::fs::File::open("/").ok()?;
    let mut buf = [0u8; 1];
    let mut best = (u64::MAX, u64::MAX);
    for _ in 0..BATCHES {
        let t = Instant::now();
        for _ in 0..CALLS {
            let _ = nix::sys::uio::pread(&zero, &mut buf, 0);
        }
        best.0 = best.0.min(t.elapsed().as_nanos() as u64 / u64::from(CALLS));
        let t = Instant::now();
        for _ in 0..CALLS {
            let _ = nix::fcntl::openat(
                &root,
                "dev/null/iolab-calibration",
                nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_CLOEXEC,
                nix::sys::stat::Mode::empty(),
            );
        }
        best.1 = best.1.min(t.elapsed().as_nanos() as u64 / u64::from(CALLS));
    }
    Some(best)
}

/// The cost per call from the untraced and the traced timings (`None` if either failed).
pub fn measure(untraced: Option<(u64, u64)>, traced: Option<(u64, u64)>) -> Option<RecorderCost> {
    let ((p0, o0), (p1, o1)) = (untraced?, traced?);
    Some(RecorderCost {
        call_ns: p1.saturating_sub(p0),
        path_call_ns: o1.saturating_sub(o0),
        removed_ns: 0,
    })
}

/// A line whose call names a path (a quoted, non-empty argument): its BPF copy cost more.
fn has_path(l: &Line) -> bool {
    l.args.iter().any(|a| a.len() > 2 && a.starts_with('"'))
}

/// Move every line earlier by the recorder's cost of the calls before it on its timeline:
/// a thread or process starts from the largest correction reached by then (it was started,
/// or waited for, on a timeline the recorder had slowed), and each of its own calls adds
/// its cost. A call's end moves by the correction reached at that moment on its thread
/// (for an io_uring request, the submissions made while it was in flight count; the
/// device's time does not shrink), and a thread's calls never go backwards nor start before
/// its previous system call returned. The order of the lines is kept (descriptor tracking
/// follows it); threads that ran side by side each lose only their own costs. Not counted, so the correction errs on the small side:
/// events the trace does not keep as lines (fork, chdir, most fcntl), and io_uring
/// requests (a few cheap events inside one `io_uring_enter`, against the device's time;
/// counting them at a system call's cost would move submissions against completions and
/// change the recorded queue depth). Returns the largest
/// correction applied.
pub(in crate::workload::trace) fn take_out(lines: &mut [Line], cost: &RecorderCost) -> u64 {
    let of = |l: &Line| {
        if l.ring.is_some() {
            0
        } else if has_path(l) {
            cost.path_call_ns
        } else {
            cost.call_ns
        }
    };
    // Per thread: where it started from, its lines' times, and the correction after each.
    struct Thread {
        base: u64,
        ts: Vec<u64>,
        after: Vec<u64>,
    }
    let mut threads: HashMap<u32, Thread> = HashMap::new();
    let mut most = 0u64;
    let mut index = Vec::with_capacity(lines.len());
    for l in lines.iter() {
        let t = threads.entry(l.pid).or_insert_with(|| Thread {
            base: most,
            ts: Vec::new(),
            after: Vec::new(),
        });
        let before = t.after.last().copied().unwrap_or(t.base);
        index.push(t.ts.len());
        t.ts.push(l.ts_ns);
        t.after.push(before + of(l));
        most = most.max(before + of(l));
    }
    let mut last_start: HashMap<u32, u64> = HashMap::new();
    let mut last_sync_end: HashMap<u32, u64> = HashMap::new();
    let mut removed = 0u64;
    for (l, k) in lines.iter_mut().zip(index) {
        let t = &threads[&l.pid];
        let before = if k == 0 { t.base } else { t.after[k - 1] };
        let end = l.ts_ns + l.dur_ns;
        // The correction at the end: this thread's calls started before it, not its own.
        let n = t.ts.partition_point(|&x| x < end);
        let at_end = if n == 0 { t.base } else { t.after[n - 1] } - if k < n { of(l) } else { 0 };
        let prev = last_start.entry(l.pid).or_insert(0);
        // Nor does a call start before the thread's previous system call returned: with
        // time stamps in whole microseconds the gap after a call can be shorter than the
        // cost taken out of the next start, and the two calls of one thread then overlapped
        // (a sequential program showed queue depth 2).
        let sync_end = last_sync_end.get(&l.pid).copied().unwrap_or(0);
        let start = l.ts_ns.saturating_sub(before).max(*prev).max(sync_end);
        *prev = start;
        removed = removed.max(l.ts_ns - start.min(l.ts_ns));
        l.dur_ns = end.saturating_sub(at_end).saturating_sub(start);
        l.ts_ns = start;
        if l.ring.is_none() {
            last_sync_end.insert(l.pid, start + l.dur_ns);
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(pid: u32, ts_ns: u64, path: Option<&str>) -> Line {
        Line {
            pid,
            ts_ns,
            name: if path.is_some() { "openat" } else { "read" }.into(),
            args: match path {
                Some(p) => vec!["AT_FDCWD</>".into(), format!("\"{p}\"")],
                None => vec!["3</r/a>".into()],
            },
            ret: 0,
            ret_path: None,
            dur_ns: 100,
            ring: None,
        }
    }

    const COST: RecorderCost = RecorderCost {
        call_ns: 1_000,
        path_call_ns: 3_000,
        removed_ns: 0,
    };

    #[test]
    fn one_thread_loses_the_cost_of_each_call_before() {
        let mut l = vec![
            line(1, 10_000, Some("/r/a")),
            line(1, 20_000, None),
            line(1, 30_000, None),
        ];
        assert_eq!(take_out(&mut l, &COST), 4_000);
        let ts: Vec<u64> = l.iter().map(|l| l.ts_ns).collect();
        assert_eq!(ts, vec![10_000, 17_000, 26_000]);
    }

    #[test]
    fn a_later_process_starts_from_the_correction_reached() {
        // `a && b`: b's first call comes after a's five calls, slowed by all of them.
        let mut l: Vec<Line> = (0..5)
            .map(|i| line(7, 1_000_000 + i * 10_000, None))
            .collect();
        l.push(line(8, 2_000_000, None));
        l.push(line(8, 2_010_000, None));
        take_out(&mut l, &COST);
        assert_eq!(l[5].ts_ns, 2_000_000 - 5_000);
        assert_eq!(l[6].ts_ns, 2_010_000 - 6_000);
    }

    #[test]
    fn threads_side_by_side_lose_their_own_costs_and_never_go_backwards() {
        let mut l = vec![
            line(1, 1_000, None),
            line(1, 2_000, None),
            line(1, 2_500, None),
            line(2, 3_100, None),
            line(1, 3_200, None),
            line(2, 9_000, None),
        ];
        take_out(&mut l, &COST);
        let got: Vec<(u32, u64)> = l.iter().map(|l| (l.pid, l.ts_ns)).collect();
        assert_eq!(
            got,
            vec![
                (1, 1_000),
                (1, 1_100), // 2_000 - 1_000, held at the end of the call before it
                (1, 1_100), // 2_500 - 2_000, held there too (the call before shrank to 0)
                (2, 100),   // started after thread 1's three calls: 3_100 - 3_000
                (1, 1_100), // 3_200 - 3_000
                (2, 5_000), // 9_000 - 3_000 - its own one call
            ]
        );
    }

    /// Time stamps in whole microseconds leave gaps shorter than the cost taken out: a
    /// thread's next call still starts no earlier than its previous one returned (a
    /// sequential `dd` showed queue depth 2 on 27 of its 64 writes).
    #[test]
    fn a_thread_never_overlaps_its_own_system_calls() {
        let call = |ts, dur, path: Option<&str>| Line {
            dur_ns: dur,
            ..line(1, ts, path)
        };
        // open 0..65 µs, close 66 µs (after a 1 µs gap < the 3 µs path cost), writes.
        let mut l = vec![
            call(0, 65_000, Some("/r/f")),
            call(66_000, 0, None),
            call(80_000, 3_000, None),
            call(83_500, 3_000, None),
        ];
        take_out(&mut l, &COST);
        for w in l.windows(2) {
            assert!(
                w[1].ts_ns >= w[0].ts_ns + w[0].dur_ns,
                "{} starts before {} + {} ended",
                w[1].ts_ns,
                w[0].ts_ns,
                w[0].dur_ns
            );
        }
    }

    #[test]
    fn an_async_request_ends_by_the_correction_reached_at_its_end() {
        // An io_uring read in flight while the thread makes a system call, and a second
        // read submitted as the first completes: the first's end moves with the system
        // call's cost like the second's start, so their recorded depth stays.
        let ring = |ts, dur| Line {
            dur_ns: dur,
            ring: Some(0),
            ..line(1, ts, None)
        };
        let mut l = vec![
            ring(10_000, 50_000),
            line(1, 20_000, None),
            ring(60_000, 50_000),
        ];
        take_out(&mut l, &COST);
        assert_eq!(
            (l[0].ts_ns, l[1].ts_ns, l[2].ts_ns),
            (10_000, 20_000, 59_000)
        );
        assert_eq!(l[0].ts_ns + l[0].dur_ns, 59_000);
        assert_eq!(l[2].dur_ns, 50_000);
    }

    #[test]
    fn a_zero_cost_changes_nothing() {
        let mut l = vec![line(1, 5, None), line(2, 9, Some("/x"))];
        let zero = RecorderCost::default();
        assert_eq!(take_out(&mut l, &zero), 0);
        assert_eq!((l[0].ts_ns, l[1].ts_ns), (5, 9));
    }

    #[test]
    fn the_cost_is_the_difference_of_the_timings() {
        let c = measure(Some((300, 900)), Some((1_200, 3_100))).unwrap();
        assert_eq!((c.call_ns, c.path_call_ns), (900, 2_200));
        // A traced batch that happened to be faster is no negative cost.
        let c = measure(Some((300, 900)), Some((250, 900))).unwrap();
        assert_eq!((c.call_ns, c.path_call_ns), (0, 0));
        assert!(measure(None, Some((1, 1))).is_none());
    }
}

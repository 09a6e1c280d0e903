//! A thread's wait for a CPU: time spent runnable while other threads held every CPU
//! (schedstat's `run_delay`). Every family that times work on a thread (block tests' job
//! threads, the small-file tester, copy, trace run and replay) adds that wait to what it
//! measures, and the thread's CPU time cannot show it; warning `cpu-contention` says so.
//! Read at a span's start and end only, never per operation.

use std::time::{Duration, Instant};

use crate::units::count;

/// The calling thread's clock of time spent runnable but not running: waiting on a run queue
/// for a CPU that other threads held (`run_delay`, the second field of
/// `/proc/thread-self/schedstat`, kernels with `CONFIG_SCHED_INFO`). A job thread waiting
/// for a CPU when its I/O completes adds that wait to every latency it measures; its CPU
/// time alone (`thread_times`) cannot show it, since the thread is not running then.
///
/// The file is opened once, by the thread itself (`/proc/thread-self` is the opener's), and
/// read at offset 0 at each mark: no allocation, one `pread`.
pub struct RunQueueClock {
    schedstat: Option<std::fs::File>,
}

impl RunQueueClock {
    /// The calling thread's clock; one that reads `None` where the kernel has no schedstat.
    pub fn open() -> RunQueueClock {
        RunQueueClock {
            schedstat: std::fs::File::open("/proc/thread-self/schedstat").ok(),
        }
    }

    /// The thread's total wait for a CPU so far.
    pub fn waited(&self) -> Option<Duration> {
        use std::os::unix::fs::FileExt;
        let mut buf = [0u8; 96];
        let n = self.schedstat.as_ref()?.read_at(&mut buf, 0).ok()?;
        parse_run_delay(&buf[..n])
    }
}

/// `run_delay` (ns) from a schedstat line: `<on-cpu ns> <run_delay ns> <timeslices>`.
fn parse_run_delay(line: &[u8]) -> Option<Duration> {
    let text = std::str::from_utf8(line).ok()?;
    let ns = text.split_ascii_whitespace().nth(1)?.parse::<u64>().ok()?;
    Some(Duration::from_nanos(ns))
}

/// Above this share of a job thread's span spent waiting for a CPU, warning `cpu-contention`
/// (each I/O's completion waited, on average, a tenth of the time for the thread to run).
pub const CPU_CONTENTION_PCT: f64 = 10.0;

/// The system's 1-minute load average and its online CPU count (all of them: the load is the
/// whole system's, whatever CPUs iolab may use), for a contention warning's context ("load
/// 8.6 on 2 CPUs").
pub fn load_context() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let load: f64 = text.split_ascii_whitespace().next()?.parse().ok()?;
    // SAFETY: sysconf reads a constant.
    let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    let cpus = usize::try_from(cpus).ok().filter(|&n| n > 0)?;
    Some(format!(
        "load {load:.1} on {}",
        count(cpus as u64, "CPU", "CPUs")
    ))
}

/// The thread or threads a `cpu-contention` warning is about, and what the family says of
/// them.
pub struct Waiter<'a> {
    /// Who waited, the message's start: "a job thread", "from depth 8 a job thread", "the
    /// measuring thread".
    pub who: &'a str,
    /// The test's threads measuring at once: more of them than CPUs wait for each other,
    /// which the message names (with "use at most N jobs in all").
    pub threads: usize,
    /// What the wait did to the figures: "every latency includes that wait and ...".
    pub effect: &'a str,
    /// What to do about other programs' load.
    pub advice: &'a str,
}

/// A block test's effect of the wait (run, saturate).
const BLOCK_EFFECT: &str =
    "every latency includes that wait and the IOPS may be below what the device gives";

/// The advice when other programs held the CPUs.
pub const IDLE_ADVICE: &str =
    "measure on an idle machine, or compare only with runs made under the same load";

/// Warning `cpu-contention`'s message for a job thread of a block test that waited `pct` %
/// of its run for a CPU, in a test of `threads` job threads; `whence` starts it ("a job
/// thread", "from depth 8 a job thread").
pub fn contention_message(whence: &str, pct: f64, threads: usize) -> String {
    message(
        &Waiter {
            who: whence,
            threads,
            effect: BLOCK_EFFECT,
            advice: IDLE_ADVICE,
        },
        pct,
    )
}

/// Warning `cpu-contention`'s message for `w`, which waited `pct` % of its run for a CPU.
/// More measuring threads than CPUs wait for each other, which the advice names.
pub fn message(w: &Waiter, pct: f64) -> String {
    let Waiter {
        who,
        threads,
        effect,
        advice,
    } = *w;
    // The CPUs this process may run on (its affinity), which its threads share.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let load = load_context()
        .map(|l| format!(" ({l} now)"))
        .unwrap_or_default();
    let (held, advice) = if threads > cpus {
        (
            format!(
                "iolab's other job threads ({threads} on {}) or other programs held",
                count(cpus as u64, "CPU", "CPUs")
            ),
            format!(
                "use at most {} in all, on an idle machine",
                count(cpus as u64, "job", "jobs")
            ),
        )
    } else {
        ("other programs held".to_string(), advice.to_string())
    };
    format!("{who} waited {pct:.0} % of the run for a CPU that {held}{load}: {effect}; {advice}")
}

/// A span of the calling thread's work (a phase, a copy, a replay) and its wait for a CPU
/// over it: the clock is opened and read when the span starts and read again by `pct`,
/// nothing in between.
pub struct WaitSpan {
    clock: RunQueueClock,
    waited: Option<Duration>,
    started: Instant,
}

impl WaitSpan {
    /// A span of the calling thread from now.
    pub fn start() -> WaitSpan {
        let clock = RunQueueClock::open();
        let waited = clock.waited();
        WaitSpan {
            clock,
            waited,
            started: Instant::now(),
        }
    }

    /// The share of the span so far that the thread waited for a CPU, in percent (`None`
    /// where the kernel has no schedstat).
    pub fn pct(&self) -> Option<f64> {
        let span = self.started.elapsed().as_secs_f64().max(1e-9);
        let waited = self.waited.zip(self.clock.waited())?;
        Some(100.0 * waited.1.saturating_sub(waited.0).as_secs_f64() / span)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_delay_is_the_second_field() {
        assert_eq!(
            parse_run_delay(b"1520003 3051341 17\n"),
            Some(Duration::from_nanos(3_051_341))
        );
        assert_eq!(parse_run_delay(b"12\n"), None);
        assert_eq!(parse_run_delay(b""), None);
    }

    /// The clock reads this thread's own counter, which only grows.
    #[test]
    fn this_threads_wait_is_read_and_grows() {
        let clock = RunQueueClock::open();
        if clock.schedstat.is_none() {
            crate::test_skip::skip(
                "this_threads_wait_is_read_and_grows",
                "no /proc/thread-self/schedstat (a kernel without CONFIG_SCHED_INFO)",
            );
            return;
        }
        let a = clock.waited().expect("schedstat reads");
        std::thread::yield_now();
        let b = clock.waited().expect("schedstat reads");
        assert!(b >= a, "{a:?} then {b:?}");
    }

    /// More job threads than CPUs wait for each other: the advice says so, not "other
    /// programs" alone.
    #[test]
    fn contention_names_iolabs_own_threads_when_they_outnumber_the_cpus() {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let own = contention_message("a job thread", 23.4, cpus + 1);
        assert!(
            own.starts_with("a job thread waited 23 % of the run"),
            "{own}"
        );
        let on = count(cpus as u64, "CPU", "CPUs");
        assert!(own.contains(&format!("({} on {on})", cpus + 1)), "{own}");
        let jobs = count(cpus as u64, "job", "jobs");
        assert!(own.contains(&format!("at most {jobs} in all")), "{own}");
        let other = contention_message("from depth 8 a job thread", 12.0, 1);
        assert!(other.contains("that other programs held"), "{other}");
        assert!(!other.contains("jobs in all"), "{other}");
    }
}

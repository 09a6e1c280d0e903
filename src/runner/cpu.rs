//! CPU time of the process and of single threads (getrusage), and a thread's wait for a
//! CPU (schedstat).

use std::time::Duration;

use crate::units::count;

#[derive(Debug, Clone, Copy, Default)]
pub struct CpuTimes {
    pub user: Duration,
    pub sys: Duration,
}

impl CpuTimes {
    pub fn total(&self) -> Duration {
        self.user + self.sys
    }
    pub fn since(&self, earlier: &CpuTimes) -> CpuTimes {
        CpuTimes {
            user: self.user.saturating_sub(earlier.user),
            sys: self.sys.saturating_sub(earlier.sys),
        }
    }
}

fn rusage(who: libc::c_int) -> CpuTimes {
    // SAFETY: getrusage writes into the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(who, &mut ru) };
    if rc != 0 {
        return CpuTimes::default();
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    CpuTimes {
        user: tv(ru.ru_utime),
        sys: tv(ru.ru_stime),
    }
}

/// All threads of this process.
pub fn process_times() -> CpuTimes {
    rusage(libc::RUSAGE_SELF)
}

/// The calling thread only: its total CPU time, from `CLOCK_THREAD_CPUTIME_ID` (counted as
/// `user`; `sys` stays zero). `getrusage(RUSAGE_THREAD)` leaves out the time since the
/// scheduler's last update (up to a tick, 4 ms at HZ=250), so over a short window (a
/// size-based run of a few I/Os) it reported one thread using 237 % or 451 % of a CPU.
pub fn thread_times() -> CpuTimes {
    // SAFETY: clock_gettime writes into the struct we pass.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return rusage(libc::RUSAGE_THREAD);
    }
    CpuTimes {
        user: Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32),
        sys: Duration::ZERO,
    }
}

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

/// Warning `cpu-contention`'s message for a job thread that waited `pct` % of its run for a
/// CPU, in a test of `threads` job threads; `whence` starts it ("a job thread", "from depth 8
/// a job thread"). More job threads than CPUs wait for each other, which the advice names.
pub fn contention_message(whence: &str, pct: f64, threads: usize) -> String {
    // The CPUs this process may run on (its affinity), which its job threads share.
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
        (
            "other programs held".to_string(),
            "measure on an idle machine, or compare only with runs made under the same load"
                .to_string(),
        )
    };
    format!(
        "{whence} waited {pct:.0} % of the run for a CPU that {held}{load}: every latency \
         includes that wait and the IOPS may be below what the device gives; {advice}"
    )
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

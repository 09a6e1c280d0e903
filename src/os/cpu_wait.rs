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
    /// which the message names (with `fewer`'s advice).
    pub threads: usize,
    /// What the command's user can do when those threads outnumber the CPUs.
    pub fewer: Fewer<'a>,
    /// What the wait did to the figures: "every latency includes that wait and ...".
    pub effect: &'a str,
    /// What to do about other programs' load.
    pub advice: &'a str,
}

/// What a command's user can do when its measuring threads outnumber the CPUs: a trace's
/// threads are its workload's or recording's, with no --jobs to lower (`trace run` and
/// `trace replay` were told "use at most 2 jobs in all").
#[derive(Clone, Copy)]
pub enum Fewer<'a> {
    /// The command's jobs (run, saturate, files, age): "use at most N jobs in all".
    Jobs,
    /// The threads are the workload's own: measure where there are as many CPUs; the text
    /// ends that advice (", or ..."), "" for none.
    Cpus(&'a str),
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
            fewer: Fewer::Jobs,
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
        fewer,
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
                "iolab's other {} ({threads} on {}) or other programs held",
                match fewer {
                    Fewer::Jobs => "job threads",
                    Fewer::Cpus(_) => "threads",
                },
                count(cpus as u64, "CPU", "CPUs")
            ),
            match fewer {
                Fewer::Jobs => format!(
                    "use at most {} in all, on an idle machine",
                    count(cpus as u64, "job", "jobs")
                ),
                Fewer::Cpus(or) => format!(
                    "measure on an idle machine with at least {}{or}",
                    count(threads as u64, "CPU", "CPUs")
                ),
            },
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

/// Another thread's wait for a CPU over time, sampled by the calling thread now and then
/// (never by the thread itself, so its own work is not touched), and the machine's: the
/// time some task waited for a CPU (`/proc/pressure/cpu`, PSI `some`), which also holds the
/// kernel's threads that do the thread's I/O (a loop device's worker) while the thread
/// itself sleeps. The share of any span that either waited is interpolated between samples.
pub struct WaitTrace {
    schedstat: Option<std::fs::File>,
    pressure: Option<std::fs::File>,
    origin: Instant,
    /// (time since `origin`, the thread's wait so far).
    thread: Vec<(Duration, Duration)>,
    /// (time since `origin`, the machine's `some` CPU pressure so far).
    machine: Vec<(Duration, Duration)>,
}

impl WaitTrace {
    /// The trace of thread `tid` of this process, its times counted from `origin`.
    pub fn of_thread(tid: i32, origin: Instant) -> WaitTrace {
        WaitTrace {
            schedstat: std::fs::File::open(format!("/proc/self/task/{tid}/schedstat")).ok(),
            pressure: std::fs::File::open("/proc/pressure/cpu").ok(),
            origin,
            thread: Vec::new(),
            machine: Vec::new(),
        }
    }

    /// Reads both waits now (nothing of the thread once it is gone, or without schedstat;
    /// nothing of the machine without PSI).
    pub fn sample(&mut self) {
        use std::os::unix::fs::FileExt;
        let t = self.origin.elapsed();
        let mut buf = [0u8; 160];
        let read = |f: &Option<std::fs::File>, buf: &mut [u8]| {
            let n = f.as_ref()?.read_at(buf, 0).ok()?;
            Some(n)
        };
        if let Some(w) = read(&self.schedstat, &mut buf).and_then(|n| parse_run_delay(&buf[..n])) {
            self.thread.push((t, w));
        }
        if let Some(w) = read(&self.pressure, &mut buf).and_then(|n| parse_some_total(&buf[..n])) {
            self.machine.push((t, w));
        }
    }

    /// The share (0 to 1) of `from..to` (since the origin) the thread waited for a CPU;
    /// `None` unless samples lie on both sides of the span.
    pub fn share(&self, from: Duration, to: Duration) -> Option<f64> {
        share_of(&self.thread, from, to)
    }

    /// The share (0 to 1) of `from..to` in which some task of the machine waited for a CPU.
    pub fn machine_share(&self, from: Duration, to: Duration) -> Option<f64> {
        share_of(&self.machine, from, to)
    }
}

/// The share of `from..to` a cumulative wait `samples` grew by, linear between samples.
fn share_of(samples: &[(Duration, Duration)], from: Duration, to: Duration) -> Option<f64> {
    let at = |t: Duration| -> Option<f64> {
        let k = samples.iter().position(|s| s.0 >= t)?;
        let (t1, w1) = samples[k];
        if k == 0 {
            return (t1 == t).then_some(w1.as_secs_f64());
        }
        let (t0, w0) = samples[k - 1];
        let f = (t - t0).as_secs_f64() / (t1 - t0).as_secs_f64().max(1e-12);
        Some(w0.as_secs_f64() + f * (w1.as_secs_f64() - w0.as_secs_f64()))
    };
    let span = to.checked_sub(from)?.as_secs_f64();
    let waited = at(to)? - at(from)?;
    (span > 0.0).then(|| (waited / span).clamp(0.0, 1.0))
}

/// `total` (µs) of the `some` line of `/proc/pressure/cpu`.
fn parse_some_total(text: &[u8]) -> Option<Duration> {
    let text = std::str::from_utf8(text).ok()?;
    let line = text.lines().find(|l| l.starts_with("some "))?;
    let us = line
        .split_ascii_whitespace()
        .find_map(|f| f.strip_prefix("total="))?
        .parse::<u64>()
        .ok()?;
    Some(Duration::from_micros(us))
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
        // A trace's threads are its workload's: no jobs to lower.
        let trace = message(
            &Waiter {
                who: "a thread issuing the calls",
                threads: cpus + 1,
                fewer: Fewer::Cpus(", or record the program with fewer threads"),
                effect: "every call's latency includes that wait",
                advice: IDLE_ADVICE,
            },
            23.4,
        );
        assert!(!trace.contains("jobs"), "{trace}");
        let need = count(cpus as u64 + 1, "CPU", "CPUs");
        assert!(
            trace.ends_with(&format!(
                "measure on an idle machine with at least {need}, or record the program with fewer threads"
            )),
            "{trace}"
        );
        let other = contention_message("from depth 8 a job thread", 12.0, 1);
        assert!(other.contains("that other programs held"), "{other}");
        assert!(!other.contains("jobs in all"), "{other}");
    }

    /// Samples every 50 ms of a thread that waited all of 0.3-0.5 s and none of the rest:
    /// a span of 0.3-0.5 s waited all of it, 0.1-0.3 s none, 0.2-0.4 s half; outside the
    /// samples, nothing is said.
    #[test]
    fn a_traced_span_shares_the_wait_between_samples() {
        let ms = Duration::from_millis;
        let samples: Vec<_> = (0..=14)
            .map(|k| {
                let t = 50 * k;
                (ms(t), ms(t.clamp(300, 500) - 300))
            })
            .collect();
        let trace = WaitTrace {
            schedstat: None,
            pressure: None,
            origin: Instant::now(),
            thread: samples.clone(),
            machine: samples[..4].to_vec(),
        };
        let near = |x: Option<f64>, want: f64| x.is_some_and(|x| (x - want).abs() < 1e-9);
        assert!(near(trace.share(ms(300), ms(500)), 1.0));
        assert!(near(trace.share(ms(100), ms(300)), 0.0));
        assert!(near(trace.share(ms(200), ms(400)), 0.5));
        assert!(near(trace.share(ms(325), ms(375)), 1.0));
        assert_eq!(trace.share(ms(600), ms(800)), None);
        assert_eq!(trace.machine_share(ms(50), ms(150)), Some(0.0));
        assert_eq!(trace.machine_share(ms(100), ms(300)), None);
        assert_eq!(
            parse_some_total(b"some avg10=9.97 avg60=44.25 avg300=74.23 total=16873184477\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"),
            Some(Duration::from_micros(16_873_184_477))
        );
    }
}

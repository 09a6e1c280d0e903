//! CPU time of the process and of single threads (getrusage). A thread's wait for a CPU
//! (schedstat) is `os::cpu_wait`, which the families that time work on threads of their own
//! share.

use std::time::Duration;

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

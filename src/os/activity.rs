//! What the process is measuring right now, for watchers on other threads: the drive's heat
//! (`sysinfo::heat`) judges a drop in the device's throughput only within one measured
//! block test, never across the idle time between passes or from one test to the next (a
//! change of workload or an idle drive is no thermal throttling). A process-wide counter,
//! here at the bottom so that the runner sets it and `sysinfo` reads it without importing
//! each other.

use std::sync::atomic::{AtomicU64, Ordering};

/// The measured block test now running (0: none).
static CURRENT: AtomicU64 = AtomicU64::new(0);
/// The last key handed out.
static LAST: AtomicU64 = AtomicU64::new(0);

/// One measured block test's window, from `measuring()` until it is dropped.
#[derive(Debug)]
pub struct Measuring {
    key: u64,
}

/// A new key for the block test starting now, current until the guard is dropped.
pub fn measuring() -> Measuring {
    let key = LAST.fetch_add(1, Ordering::Relaxed) + 1;
    CURRENT.store(key, Ordering::Relaxed);
    Measuring { key }
}

impl Drop for Measuring {
    fn drop(&mut self) {
        // Only its own key: a newer test's stays.
        let _ = CURRENT.compare_exchange(self.key, 0, Ordering::Relaxed, Ordering::Relaxed);
    }
}

/// The key of the block test being measured now, 0 between tests (and in a process that
/// measures no block test: files, copy, trace, age).
pub fn current() -> u64 {
    CURRENT.load(Ordering::Relaxed)
}

//! The job threads' clock. Every I/O is timed twice (submission, completion), so the clock's
//! own cost is part of iolab's per-I/O overhead: `clock_gettime` through the vDSO took about
//! half of it (≈ 35 ns a call on a KVM guest, `perf record` of the null engine). Where the CPU
//! has an invariant time-stamp counter, `quanta` reads it directly (`rdtsc`) and scales it to
//! nanoseconds with a factor calibrated once per process against `CLOCK_MONOTONIC`; elsewhere
//! it reads `CLOCK_MONOTONIC` itself.

use std::sync::OnceLock;

static CLOCK: OnceLock<quanta::Clock> = OnceLock::new();

/// The process's clock, calibrated on first use (call it before a measured window starts).
pub fn shared() -> &'static quanta::Clock {
    CLOCK.get_or_init(quanta::Clock::new)
}

/// Which source the clock reads: `TSC` (scaled counter ticks) or `CLOCK_MONOTONIC` (whose
/// raw readings already are nanoseconds).
pub fn source() -> &'static str {
    let c = shared();
    let r0 = c.raw();
    if c.delta_as_nanos(r0, r0 + 1_000_000_000) == 1_000_000_000 {
        "CLOCK_MONOTONIC"
    } else {
        "TSC"
    }
}

/// Nanoseconds since the moment it was started, on the shared clock.
#[derive(Debug, Clone, Copy)]
pub struct Stopwatch {
    clock: &'static quanta::Clock,
    origin: u64,
}

impl Stopwatch {
    pub fn start() -> Stopwatch {
        let clock = shared();
        Stopwatch {
            clock,
            origin: clock.raw(),
        }
    }

    /// Nanoseconds since `start` (never less than a reading taken before it on this thread).
    #[inline(always)]
    pub fn now_ns(&self) -> u64 {
        self.clock.delta_as_nanos(self.origin, self.clock.raw())
    }
}

/// A warning when the stopwatch and `CLOCK_MONOTONIC` disagree over one window by more than
/// 0.1 % (a mis-calibrated or unstable counter): rates and latencies are off by as much.
pub fn drift_warning(stopwatch_ns: u64, monotonic_ns: u64) -> Option<String> {
    if monotonic_ns < 100_000_000 {
        return None;
    }
    let off = (stopwatch_ns as f64 - monotonic_ns as f64) / monotonic_ns as f64;
    (off.abs() > 0.001).then(|| {
        format!(
            "the {} clock drifted {:+.2} % from CLOCK_MONOTONIC during the run: its rates and latencies are off by about as much",
            source(),
            off * 100.0
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drift_beyond_a_tenth_of_a_percent_is_said() {
        assert_eq!(drift_warning(1_000_500_000, 1_000_000_000), None);
        assert_eq!(
            drift_warning(50_000_000, 10_000_000),
            None,
            "too short to judge"
        );
        let w = drift_warning(1_010_000_000, 1_000_000_000).unwrap();
        assert!(w.contains("+1.00 %"), "{w}");
    }

    #[test]
    fn the_stopwatch_agrees_with_the_monotonic_clock() {
        use std::time::Instant;
        let sw = Stopwatch::start();
        // Each stopwatch read is bracketed by two reads of std's clock, so a preemption
        // between them (a loaded machine) widens the bracket instead of failing the test.
        let (a0, a, a1) = (Instant::now(), sw.now_ns(), Instant::now());
        std::thread::sleep(std::time::Duration::from_millis(50));
        let (b0, b, b1) = (Instant::now(), sw.now_ns(), Instant::now());
        assert!(b > a);
        let shortest = b0.duration_since(a1).as_nanos() as u64;
        let longest = b1.duration_since(a0).as_nanos() as u64;
        // Within 5 % of std's clock over 50 ms (calibration is far better; this only
        // catches a wrong scale, e.g. raw counter ticks taken for nanoseconds).
        let d = b - a;
        assert!(
            d >= shortest - shortest / 20 && d <= longest + longest / 20,
            "stopwatch {d} ns vs std's {shortest}..{longest} ns"
        );
        assert!(["TSC", "CLOCK_MONOTONIC"].contains(&source()));
    }
}

//! Interrupt handling: SIGINT, SIGTERM and SIGHUP set a flag that every worker checks; the
//! run stops, saves what it measured, cleans up, and exits 130/143/129. A second SIGINT or
//! SIGTERM exits at once (the state file lets the next start clean up).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::error::Interrupted;

/// Shared stop flag: 0 = keep going, otherwise the signal number that stopped us.
/// `STONEWALL` marks a distributed run's stonewall: stop, but not as an interrupt.
#[derive(Clone, Debug, Default)]
pub struct StopFlag {
    signal: Arc<AtomicUsize>,
}

impl StopFlag {
    pub fn new() -> StopFlag {
        StopFlag::default()
    }

    /// Install handlers for SIGINT, SIGTERM and SIGHUP that set this flag.
    pub fn install(&self) -> std::io::Result<()> {
        let again = Arc::new(AtomicBool::new(false));
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // Second signal: exit immediately with 128 + signal.
            signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, Arc::clone(&again))?;
            signal_hook::flag::register_usize(sig, Arc::clone(&self.signal), sig as usize)?;
        }
        signal_hook::flag::register(libc::SIGINT, Arc::clone(&again))?;
        signal_hook::flag::register(libc::SIGTERM, Arc::clone(&again))?;
        Ok(())
    }

    #[inline]
    pub fn is_set(&self) -> bool {
        self.signal.load(Ordering::Relaxed) != 0
    }

    /// Stop without a signal (an error in one worker stops the others).
    pub fn raise(&self, sig: i32) {
        self.signal.store(sig as usize, Ordering::Relaxed);
    }

    /// Stop the workers without an interrupt (a distributed run's stonewall: another rank
    /// reached its limit first). `signal()` stays `None`, so the run ends normally with what
    /// it measured; a signal raised afterwards still wins.
    pub fn stonewall(&self) {
        let _ = self
            .signal
            .compare_exchange(0, STONEWALL, Ordering::Relaxed, Ordering::Relaxed);
    }

    pub fn signal(&self) -> Option<i32> {
        match self.signal.load(Ordering::Relaxed) {
            0 | STONEWALL => None,
            s => Some(s as i32),
        }
    }

    /// The error to return when the flag is set.
    pub fn check(&self) -> Result<(), Interrupted> {
        match self.signal() {
            None => Ok(()),
            Some(sig) => Err(Interrupted {
                signal: sig,
                signal_name: signal_name(sig),
            }),
        }
    }

    /// Sleep until `t` in slices of at most 50 ms, returning early once the flag is set (a
    /// signal or a stonewall), so a stop request is honoured quickly.
    pub fn sleep_until(&self, t: Instant) {
        loop {
            let now = Instant::now();
            if now >= t || self.is_set() {
                return;
            }
            std::thread::sleep((t - now).min(Duration::from_millis(50)));
        }
    }

    /// Sleep for `d`: the interruption as soon as a signal is seen, Ok after the whole time
    /// (or when a stonewall cut it short).
    pub fn sleep(&self, d: Duration) -> Result<(), Interrupted> {
        self.sleep_until(Instant::now() + d);
        self.check()
    }
}

const STONEWALL: usize = usize::MAX;

/// The variable that asks a process to stop itself when its parent goes away: the parent's
/// pid (`iolab serve` sets it for the tests it starts).
pub const PARENT_ENV: &str = "IOLAB_STOP_WITH_PARENT";

/// When `PARENT_ENV` names our parent, watch it on a thread: once the parent is gone (we
/// were re-parented), send ourselves one SIGINT, the Ctrl-C path (the partial result is
/// saved, everything created is removed).
pub fn stop_when_parent_exits() {
    let Some(parent) = std::env::var(PARENT_ENV)
        .ok()
        .and_then(|v| v.parse::<i32>().ok())
    else {
        return;
    };
    let _ = std::thread::Builder::new()
        .name("parent-watch".into())
        .spawn(move || {
            loop {
                if nix::unistd::getppid().as_raw() != parent {
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::this(),
                        nix::sys::signal::Signal::SIGINT,
                    );
                    return;
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        });
}

pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleep_lasts_its_time_and_a_signal_cuts_it_short() {
        let f = StopFlag::new();
        let t = Instant::now();
        f.sleep(Duration::from_millis(120)).unwrap();
        assert!(t.elapsed() >= Duration::from_millis(120));
        f.stonewall();
        f.sleep(Duration::from_millis(10)).unwrap();
        f.raise(libc::SIGINT);
        let t = Instant::now();
        let e = f.sleep(Duration::from_secs(60)).unwrap_err();
        assert_eq!(e.signal, libc::SIGINT);
        assert!(t.elapsed() < Duration::from_secs(5));
    }
}

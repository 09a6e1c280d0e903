//! Executing workloads: targets, worker threads, phases (prefill, ramp, measure), repeats,
//! interrupts and progress.

pub mod age;
pub mod block;
pub mod clock;
pub mod cpu;
pub mod lock;
pub mod recorder;
pub mod run;
pub mod saturate;
pub mod sustain;
pub mod sweep;
pub mod target;
pub mod write_cache;

// Repeats are statistics; the stop flag, the progress display and the run context are facts
// of the process: they live in stats/ and os/;
// the old paths stay for the code that names them.
pub use crate::os::context::RunContext;
pub use crate::os::progress::{self, ProgressMode};
pub use crate::os::signals;
pub use crate::os::signals::StopFlag;
pub use crate::stats::repeat;

use crate::model::{ResultDoc, WarningCode};

/// Whether `doc` has a warning of `code` about the test (or sweep) `name` already: the
/// warnings given once per test.
pub fn given(doc: &ResultDoc, name: &str, code: WarningCode) -> bool {
    doc.warnings
        .iter()
        .any(|w| w.code == code && w.test.as_deref() == Some(name))
}

/// Give the calling thread its own file-descriptor table (`unshare(CLONE_FILES)`), a copy
/// of the process's. While several threads share one table, every syscall on a descriptor
/// takes and drops a reference to its file (two atomic operations per `pread`, per
/// `io_uring_enter`); a thread alone with its table borrows the file instead, as a
/// single-threaded tool (fio's job processes, fs_mark) does. Call it at the start of a
/// short-lived I/O thread, before it opens its files: descriptors it opens afterwards are its
/// own, and the copies it holds of the others are dropped when it exits. Best effort: a
/// refusal (seccomp) leaves the shared table, which works the same, a little slower.
pub fn private_fd_table() {
    let _ = nix::sched::unshare(nix::sched::CloneFlags::CLONE_FILES);
}

/// What a distributed run (`src/dist`, cargo feature `mpi`) does around the measured runs of
/// `iolab run`. Every method is called from the command's own thread, never from an I/O
/// thread, so messaging stays out of the measured hot path. A plain run has no hooks.
pub trait RunHooks {
    /// Before a run's I/O threads start: all ranks meet here, so they start together.
    /// `size_based`: the run ends after an amount of I/O (`--io-size`), not a duration.
    fn before_run(&self, size_based: bool) -> anyhow::Result<()>;
    /// How often `poll` wants to be called while a run is going.
    fn poll_interval(&self) -> std::time::Duration;
    /// While a run is going. True when this rank must stop now (stonewall: another rank
    /// reached its time or amount limit first).
    fn poll(&self) -> bool;
    /// After a run (also a failed one): this rank's result of the run, if any, and whether
    /// it ended before its amount (`cut_short`: a size-based run that a stonewall stopped;
    /// a rank that had done all its I/O when the other's notice came was not stopped).
    fn after_run(
        &self,
        run: Option<&crate::model::RunResult>,
        cut_short: bool,
    ) -> anyhow::Result<()>;
    /// Whether to do one more repeat, given what this rank's own figures say; every rank
    /// must get the same answer.
    fn agree_more(&self, local: bool) -> anyhow::Result<bool>;
    /// After each test, with this rank's result of it and its warnings so far.
    fn after_test(
        &self,
        test: &crate::model::TestResult,
        warnings: &[crate::model::Warning],
    ) -> anyhow::Result<()>;
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsRawFd;

    fn is_open(fd: i32) -> bool {
        // SAFETY: F_GETFD only reads the descriptor's flags.
        unsafe { libc::fcntl(fd, libc::F_GETFD) != -1 }
    }

    #[test]
    fn a_private_fd_table_keeps_the_threads_descriptors_to_itself() {
        let dir = tempfile::tempdir().unwrap();
        let shared = std::fs::File::create(dir.path().join("shared")).unwrap();
        let path = dir.path().join("private");
        let (private_fd, saw_shared) = std::thread::scope(|s| {
            s.spawn(|| {
                super::private_fd_table();
                let f = std::fs::File::create(&path).unwrap();
                // Moved far above the descriptors other tests of this process may be using
                // meanwhile, so the check below cannot meet one of theirs; left open (it is
                // closed with the thread's table).
                let (soft, _) =
                    nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
                        .unwrap();
                let floor = (soft.min(1 << 20) as i32 - 8).max(64);
                // SAFETY: F_DUPFD_CLOEXEC on a descriptor this thread owns.
                let high = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_DUPFD_CLOEXEC, floor) };
                assert!(
                    high >= floor,
                    "F_DUPFD failed: {}",
                    std::io::Error::last_os_error()
                );
                // A copy of the process's table: what was open before is there too.
                (high, is_open(shared.as_raw_fd()))
            })
            .join()
            .unwrap()
        });
        assert!(saw_shared, "the thread lost the descriptors opened before");
        assert!(
            !is_open(private_fd),
            "fd {private_fd}, opened by the thread after unsharing, is open in the process's table"
        );
    }
}

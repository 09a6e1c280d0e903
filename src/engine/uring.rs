//! The `uring` engine: io_uring through the `io-uring` crate.
//!
//! Registered buffers (READ_FIXED/WRITE_FIXED) and a registered file are used when the kernel
//! allows (registration can fail on RLIMIT_MEMLOCK); otherwise plain READ/WRITE on the fd,
//! noted in the result. The crate does not retry EINTR/EAGAIN/EBUSY: this loop does.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

use io_uring::{IoUring, opcode, squeue, types};

use super::{BufferPool, Completion, IoEngine, Op};

pub struct UringEngine {
    ring: IoUring,
    file: File,
    bufs: BufferPool,
    fixed_bufs: bool,
    fixed_file: bool,
    /// Entries pushed to the SQ since the last submit.
    unsubmitted: usize,
    notes: Vec<String>,
}

// Whether io_uring works here is a fact of the kernel (sysinfo::uring), asked again by
// every new engine.
pub use crate::sysinfo::uring::probe;

impl UringEngine {
    /// An engine with one slot per buffer of `bufs`.
    pub fn new(file: File, mut bufs: BufferPool) -> io::Result<UringEngine> {
        let depth = bufs.slots();
        probe().map_err(io::Error::other)?;
        let entries = (depth as u32).next_power_of_two().max(2);
        // One job thread creates, submits and reaps: tell the kernel (single issuer, task work
        // run only when we enter the kernel to wait) so completions cost no IPIs. Kernels
        // before 6.1 refuse these flags: fall back to a plain ring.
        let ring = match IoUring::builder()
            .setup_cqsize(entries * 2)
            .setup_coop_taskrun()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(entries)
        {
            Ok(r) => r,
            Err(_) => IoUring::builder()
                .setup_cqsize(entries * 2)
                .build(entries)?,
        };
        let mut notes = Vec::new();
        let iovecs = bufs.iovecs();
        // SAFETY: the buffers live as long as the ring (both owned by self; the ring is
        // dropped first because it is declared first... and unregistered on drop).
        let fixed_bufs = match unsafe { ring.submitter().register_buffers(&iovecs) } {
            Ok(()) => true,
            Err(e) => {
                let limit =
                    nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_MEMLOCK)
                        .ok()
                        .map(|(soft, _)| soft);
                notes.push(register_buffers_note(&e, bufs.mapped_bytes(), limit));
                false
            }
        };
        let fixed_file = match ring.submitter().register_files(&[file.as_raw_fd()]) {
            Ok(()) => true,
            Err(e) => {
                notes.push(format!("registered files unavailable ({e})"));
                false
            }
        };
        Ok(UringEngine {
            ring,
            file,
            bufs,
            fixed_bufs,
            fixed_file,
            unsubmitted: 0,
            notes,
        })
    }

    fn push(&mut self, entry: squeue::Entry) {
        loop {
            // SAFETY: the buffer referenced by the entry is one of self.bufs, which outlive
            // the ring; a slot is not reused until its completion has been reaped.
            let pushed = unsafe { self.ring.submission().push(&entry).is_ok() };
            if pushed {
                self.unsubmitted += 1;
                return;
            }
            // SQ full: flush it (cannot happen with entries >= depth, kept for safety).
            let _ = self.submit();
        }
    }
}

/// Why the buffers could not be registered. ENOMEM is almost always the locked-memory limit
/// (registered buffers are pinned and counted against `RLIMIT_MEMLOCK` without
/// CAP_IPC_LOCK): say the limit and what the buffers needed.
fn register_buffers_note(e: &io::Error, bytes: usize, limit: Option<u64>) -> String {
    let why = match (e.raw_os_error(), limit) {
        (Some(libc::ENOMEM), Some(l)) if l != libc::RLIM_INFINITY => format!(
            "{e}: the locked-memory limit (ulimit -l) is {}, and pinning the job's {} of \
             buffers on top of what the process has locked already exceeds it; raise it or \
             run as root for registered buffers",
            crate::units::fmt_size_exact(l),
            crate::units::fmt_size_exact(bytes as u64)
        ),
        _ => e.to_string(),
    };
    format!("registered buffers unavailable ({why}); using plain READ/WRITE")
}

/// `IORING_ENTER_GETEVENTS` of the kernel's uapi `<linux/io_uring.h>` (the crate keeps its
/// copy private).
const IORING_ENTER_GETEVENTS: u32 = 1;

fn retryable(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EINTR) | Some(libc::EAGAIN) | Some(libc::EBUSY)
    )
}

impl IoEngine for UringEngine {
    fn name(&self) -> &'static str {
        "uring"
    }

    fn buffers(&self) -> &BufferPool {
        &self.bufs
    }

    fn buffers_mut(&mut self) -> &mut BufferPool {
        &mut self.bufs
    }

    fn queue(&mut self, slot: usize, op: Op, offset: u64, len: usize) {
        let ptr = self.bufs.slot_ptr(slot);
        let len = len as u32;
        let entry = match (op, self.fixed_file, self.fixed_bufs) {
            (Op::Read, true, true) => {
                opcode::ReadFixed::new(types::Fixed(0), ptr, len, slot as u16)
                    .offset(offset)
                    .build()
            }
            (Op::Write, true, true) => {
                opcode::WriteFixed::new(types::Fixed(0), ptr, len, slot as u16)
                    .offset(offset)
                    .build()
            }
            (Op::Read, false, true) => {
                opcode::ReadFixed::new(types::Fd(self.file.as_raw_fd()), ptr, len, slot as u16)
                    .offset(offset)
                    .build()
            }
            (Op::Write, false, true) => {
                opcode::WriteFixed::new(types::Fd(self.file.as_raw_fd()), ptr, len, slot as u16)
                    .offset(offset)
                    .build()
            }
            (Op::Read, true, false) => opcode::Read::new(types::Fixed(0), ptr, len)
                .offset(offset)
                .build(),
            (Op::Write, true, false) => opcode::Write::new(types::Fixed(0), ptr, len)
                .offset(offset)
                .build(),
            (Op::Read, false, false) => {
                opcode::Read::new(types::Fd(self.file.as_raw_fd()), ptr, len)
                    .offset(offset)
                    .build()
            }
            (Op::Write, false, false) => {
                opcode::Write::new(types::Fd(self.file.as_raw_fd()), ptr, len)
                    .offset(offset)
                    .build()
            }
        };
        self.push(entry.user_data(slot as u64));
    }

    fn submit(&mut self) -> io::Result<usize> {
        if self.unsubmitted == 0 {
            return Ok(0);
        }
        loop {
            // GETEVENTS with no minimum: the kernel also runs the deferred completion work
            // that is pending, so finished requests reach the CQ without a separate wait
            // (as fio's io_uring engine submits). It never blocks.
            // SAFETY: no argument pointer is passed; the SQ entries were pushed by `queue`.
            let r = unsafe {
                self.ring.submitter().enter::<libc::sigset_t>(
                    self.unsubmitted as u32,
                    0,
                    IORING_ENTER_GETEVENTS,
                    None,
                )
            };
            match r {
                Ok(n) => {
                    self.unsubmitted = self.unsubmitted.saturating_sub(n);
                    return Ok(n);
                }
                // EBUSY: the completion queue is full; the caller reaps and calls again.
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => return Ok(0),
                Err(e) if retryable(&e) => continue,
                Err(e) => return Err(e),
            }
        }
    }

    fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        let mut got = 0usize;
        loop {
            {
                let cq = self.ring.completion();
                for cqe in cq {
                    out.push(Completion {
                        slot: cqe.user_data() as usize,
                        result: cqe.result() as i64,
                    });
                    got += 1;
                }
            }
            if got >= min {
                return Ok(());
            }
            match self.ring.submit_and_wait(min - got) {
                Ok(n) => self.unsubmitted = self.unsubmitted.saturating_sub(n),
                Err(e) if retryable(&e) => {}
                Err(e) => return Err(e),
            }
        }
    }

    fn fsync(&mut self) -> io::Result<()> {
        self.file.sync_all()
    }

    fn is_synchronous(&self) -> bool {
        false
    }

    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn register_failure_names_the_locked_memory_limit() {
        let enomem = std::io::Error::from_raw_os_error(libc::ENOMEM);
        let n = super::register_buffers_note(&enomem, 8 << 20, Some(8 << 20));
        assert!(n.contains("ulimit -l) is 8MiB"), "{n}");
        assert!(n.contains("job's 8MiB of buffers"), "{n}");
        assert!(n.ends_with("using plain READ/WRITE"), "{n}");
        // No limit, or another error: just the error.
        let n = super::register_buffers_note(&enomem, 8 << 20, Some(libc::RLIM_INFINITY));
        assert!(!n.contains("ulimit"), "{n}");
        let eperm = std::io::Error::from_raw_os_error(libc::EPERM);
        let n = super::register_buffers_note(&eperm, 8 << 20, Some(8 << 20));
        assert!(!n.contains("ulimit") && n.starts_with("registered buffers unavailable ("));
    }

    use super::*;
    use std::io::Write;

    /// A 16 KiB file whose block k is filled with byte k+1.
    fn file_with_blocks() -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        for k in 0..4u8 {
            f.write_all(&[k + 1; 4096]).unwrap();
        }
        f.flush().unwrap();
        f
    }

    fn engine(file: File, depth: usize) -> Option<UringEngine> {
        match UringEngine::new(file, BufferPool::new(depth, 4096, true)) {
            Ok(e) => Some(e),
            Err(e) => {
                crate::test_skip::skip(
                    "uring engine tests",
                    format_args!("io_uring unavailable here ({e})"),
                );
                None
            }
        }
    }

    #[test]
    fn reads_land_in_their_own_slots() {
        let f = file_with_blocks();
        let Some(mut e) = engine(File::open(f.path()).unwrap(), 3) else {
            return;
        };
        for (slot, block) in [(0, 3u64), (1, 0), (2, 2)] {
            e.queue(slot, Op::Read, block * 4096, 4096);
            assert_eq!(e.submit().unwrap(), 1);
        }
        let mut out = Vec::new();
        while out.len() < 3 {
            e.reap(1, &mut out).unwrap();
        }
        out.sort_by_key(|c| c.slot);
        let got: Vec<_> = out.iter().map(|c| (c.slot, c.result)).collect();
        assert_eq!(got, [(0, 4096), (1, 4096), (2, 4096)]);
        for (slot, byte) in [(0, 4u8), (1, 1), (2, 3)] {
            assert!(e.buffer_mut(slot).iter().all(|&b| b == byte), "slot {slot}");
        }
    }

    #[test]
    fn a_write_reaches_the_file_and_errors_come_back_negative() {
        let f = file_with_blocks();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(f.path())
            .unwrap();
        let Some(mut e) = engine(file, 1) else { return };
        e.buffer_mut(0).fill(0xAB);
        e.queue(0, Op::Write, 4096, 4096);
        e.submit().unwrap();
        let mut out = Vec::new();
        e.reap(1, &mut out).unwrap();
        assert_eq!((out[0].slot, out[0].result), (0, 4096));
        let data = std::fs::read(f.path()).unwrap();
        assert!(data[4096..8192].iter().all(|&b| b == 0xAB));
        assert!(data[..4096].iter().all(|&b| b == 1));

        // A read-only descriptor refuses writes: the completion carries -EBADF.
        let Some(mut ro) = engine(File::open(f.path()).unwrap(), 1) else {
            return;
        };
        ro.queue(0, Op::Write, 0, 4096);
        ro.submit().unwrap();
        out.clear();
        ro.reap(1, &mut out).unwrap();
        assert_eq!(out[0].result, -(libc::EBADF as i64));
    }
}

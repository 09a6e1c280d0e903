//! The `sync` engine: pread/pwrite, one I/O in flight. submit() performs the I/O.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use super::{BufferPool, Completion, IoEngine, Op};

pub struct SyncEngine {
    file: File,
    /// One slot: one I/O in flight.
    buf: BufferPool,
    pending: Option<(usize, Op, u64, usize)>,
    done: Option<Completion>,
}

impl SyncEngine {
    /// An engine on slot 0 of `buf`.
    pub fn new(file: File, buf: BufferPool) -> SyncEngine {
        SyncEngine {
            file,
            buf,
            pending: None,
            done: None,
        }
    }
}

impl IoEngine for SyncEngine {
    fn name(&self) -> &'static str {
        "sync"
    }

    fn buffers(&self) -> &BufferPool {
        &self.buf
    }

    fn buffers_mut(&mut self) -> &mut BufferPool {
        &mut self.buf
    }

    fn queue(&mut self, slot: usize, op: Op, offset: u64, len: usize) {
        debug_assert!(self.pending.is_none(), "sync engine holds one request");
        self.pending = Some((slot, op, offset, len));
    }

    fn submit(&mut self) -> io::Result<usize> {
        let Some((slot, op, offset, len)) = self.pending.take() else {
            return Ok(0);
        };
        let buf = &mut self.buf.slot_mut(0)[..len];
        // One syscall; EINTR is retried (the measured latency then includes the retry,
        // which is what the application would have seen).
        let result = loop {
            let r = match op {
                Op::Read => self.file.read_at(buf, offset),
                Op::Write => self.file.write_at(buf, offset),
            };
            match r {
                Ok(n) => break n as i64,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => break -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
            }
        };
        self.done = Some(Completion { slot, result });
        Ok(1)
    }

    fn reap(&mut self, _min: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        if let Some(c) = self.done.take() {
            out.push(c);
        }
        Ok(())
    }

    fn fsync(&mut self) -> io::Result<()> {
        self.file.sync_all()
    }

    fn is_synchronous(&self) -> bool {
        true
    }
}

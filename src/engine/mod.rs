//! How bytes move: one interface (queue -> submit -> reap, as fio's engines) so the same
//! workload loop drives every engine, and tests can compare their results byte for byte.
//!
//! An engine owns one file descriptor and `depth` aligned buffers ("slots"); the runner
//! picks a free slot, fills it (writes), queues it, submits, and reaps completions.

pub mod buffer;
pub mod null;
pub mod sync;
pub mod uring;
pub mod verify;

use std::fs::File;
use std::io;

pub use buffer::{AlignedBuf, BufferPool, DataGen, Pattern};

/// Which engine to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    /// pread/pwrite, one I/O in flight per job.
    Sync,
    /// io_uring: many I/Os in flight per job, registered buffers and files.
    Uring,
    /// No I/O at all: measures iolab's own overhead.
    Null,
}

impl EngineKind {
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Sync => "sync",
            EngineKind::Uring => "uring",
            EngineKind::Null => "null",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
}

/// One finished I/O.
#[derive(Debug, Clone, Copy)]
pub struct Completion {
    pub slot: usize,
    /// Bytes transferred, or a negative errno.
    pub result: i64,
}

/// The engine interface.
pub trait IoEngine: Send {
    fn name(&self) -> &'static str;
    /// The engine's buffers, one slot per I/O it can have in flight.
    fn buffers(&self) -> &BufferPool;
    fn buffers_mut(&mut self) -> &mut BufferPool;
    /// Slots (buffers) this engine has: the most I/Os it can have in flight.
    #[inline(always)]
    fn depth(&self) -> usize {
        self.buffers().slots()
    }
    #[inline(always)]
    fn buffer_mut(&mut self, slot: usize) -> &mut [u8] {
        self.buffers_mut().slot_mut(slot)
    }
    /// Add one request for the next `submit` (the runner submits after every request).
    fn queue(&mut self, slot: usize, op: Op, offset: u64, len: usize);
    /// Hand the queued requests to the kernel; returns how many went.
    fn submit(&mut self) -> io::Result<usize>;
    /// Wait until at least `min` completions are available, and append all available
    /// completions to `out`.
    fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> io::Result<()>;
    /// Make written data durable.
    fn fsync(&mut self) -> io::Result<()>;
    /// True when submit() performs the I/O itself (no separate submission latency).
    fn is_synchronous(&self) -> bool;
    /// Notes for the result (e.g. "registered buffers unavailable: ENOMEM").
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
    /// Whether the I/O buffers are on transparent huge pages (`BufferPool::huge_pages`).
    fn huge_page_buffers(&self) -> Option<bool> {
        self.buffers().huge_pages()
    }
}

/// Build an engine on an open file. `uring` falls back to `sync` when the kernel refuses
/// io_uring; the returned string says why (the caller turns it into a warning).
pub fn open_engine(
    kind: EngineKind,
    file: File,
    depth: usize,
    buf_len: usize,
    huge_pages: bool,
) -> io::Result<(Box<dyn IoEngine>, Option<String>)> {
    let pool = |slots| BufferPool::new(slots, buf_len, huge_pages);
    match kind {
        EngineKind::Sync => Ok((Box::new(sync::SyncEngine::new(file, pool(1))), None)),
        EngineKind::Null => Ok((Box::new(null::NullEngine::new(pool(depth.max(1)))), None)),
        EngineKind::Uring => match uring::UringEngine::new(file.try_clone()?, pool(depth)) {
            Ok(e) => Ok((Box::new(e), None)),
            Err(e) => Ok((
                Box::new(sync::SyncEngine::new(file, pool(1))),
                Some(format!(
                    "io_uring unavailable ({e}); fell back to the sync engine"
                )),
            )),
        },
    }
}

/// Is the kernel's io_uring usable here, with the opcodes we need?
pub fn probe_uring() -> Result<String, String> {
    uring::probe()
}

//! The `null` engine: accepts every request and completes it at once without I/O. Running a
//! workload on it measures iolab's own per-I/O cost (offset generation, data stamping,
//! clock reads, histogram recording).

use std::io;

use super::{BufferPool, Completion, IoEngine, Op};

pub struct NullEngine {
    bufs: BufferPool,
    queued: Vec<Completion>,
    done: Vec<Completion>,
}

impl NullEngine {
    /// An engine with one slot per buffer of `bufs`.
    pub fn new(bufs: BufferPool) -> NullEngine {
        let depth = bufs.slots();
        NullEngine {
            bufs,
            queued: Vec::with_capacity(depth),
            done: Vec::with_capacity(depth),
        }
    }
}

impl IoEngine for NullEngine {
    fn name(&self) -> &'static str {
        "null"
    }

    fn buffers(&self) -> &BufferPool {
        &self.bufs
    }

    fn buffers_mut(&mut self) -> &mut BufferPool {
        &mut self.bufs
    }

    fn queue(&mut self, slot: usize, _op: Op, _offset: u64, len: usize) {
        self.queued.push(Completion {
            slot,
            result: len as i64,
        });
    }

    fn submit(&mut self) -> io::Result<usize> {
        let n = self.queued.len();
        self.done.append(&mut self.queued);
        Ok(n)
    }

    fn reap(&mut self, _min: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        out.append(&mut self.done);
        Ok(())
    }

    fn fsync(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn is_synchronous(&self) -> bool {
        false
    }
}

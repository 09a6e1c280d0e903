//! Aligned I/O buffers and the data written into them.
//!
//! Data is random and incompressible by default, with no per-I/O refill: every buffer starts
//! as a copy of one random base block (generated once from the run's seed), and before each
//! write a 16-byte stamp derived from (job, sequence number, offset) is written at every
//! 512-byte boundary. So no two written blocks are identical (not even per 512-byte sector,
//! so deduplication cannot cheat), each 4 KiB page is random (compression cannot cheat), the
//! cost per I/O is a few stores per sector, and the bytes written depend only on the
//! workload, not on the engine or on which buffer slot carried them: the same workload on
//! `sync` and `uring` writes identical files.

use std::alloc::{Layout, alloc_zeroed, dealloc};

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Alignment of every I/O buffer: enough for O_DIRECT on any device we know (4 KiB pages,
/// 4 KiB logical blocks).
pub const BUF_ALIGN: usize = 4096;

/// Distance between data stamps.
pub const STAMP_EVERY: usize = 512;

/// A heap buffer aligned for O_DIRECT.
pub struct AlignedBuf {
    ptr: *mut u8,
    len: usize,
}

// The buffer is plain memory owned by one job thread at a time.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    pub fn new(len: usize) -> AlignedBuf {
        let len = len.max(1);
        let layout = Layout::from_size_align(len, BUF_ALIGN).expect("valid buffer layout");
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBuf { ptr, len }
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for len bytes for the life of self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees uniqueness.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        let layout = Layout::from_size_align(self.len, BUF_ALIGN).expect("valid layout");
        // SAFETY: allocated in new() with this layout.
        unsafe { dealloc(self.ptr, layout) }
    }
}

/// What goes into written blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// Random, incompressible, unique per block (default).
    Random,
    /// All zeros (compressible; what naive tools write).
    Zero,
}

impl Pattern {
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Random => "random",
            Pattern::Zero => "zero",
        }
    }
}

/// Generates the bytes of every write of one job.
#[derive(Clone)]
pub struct DataGen {
    pub pattern: Pattern,
    base: Vec<u8>,
    key: u64,
}

impl DataGen {
    /// `max_len` is the largest I/O size the job will issue.
    pub fn new(pattern: Pattern, seed: u64, max_len: usize) -> DataGen {
        let mut base = vec![0u8; max_len];
        if pattern == Pattern::Random {
            Xoshiro256PlusPlus::seed_from_u64(seed).fill_bytes(&mut base);
        }
        DataGen {
            pattern,
            base,
            key: splitmix(seed ^ 0x9E37_79B9_7F4A_7C15),
        }
    }

    /// Initialise a slot's buffer (once, before the hot loop).
    pub fn init(&self, buf: &mut [u8]) {
        let n = buf.len().min(self.base.len());
        buf[..n].copy_from_slice(&self.base[..n]);
    }

    /// Make `buf` the content of the write number `seq` at `offset` (cheap: one 16-byte
    /// store per 512 bytes). `buf` must have been `init`ed.
    #[inline]
    pub fn stamp(&self, buf: &mut [u8], seq: u64, offset: u64) {
        if self.pattern == Pattern::Zero {
            return;
        }
        let mut pos = 0usize;
        while pos + 16 <= buf.len() {
            let sector = offset.wrapping_add(pos as u64);
            let a = splitmix(seq ^ self.key);
            let b = splitmix(sector ^ a);
            buf[pos..pos + 8].copy_from_slice(&a.to_le_bytes());
            buf[pos + 8..pos + 16].copy_from_slice(&b.to_le_bytes());
            pos += STAMP_EVERY;
        }
    }
}

/// SplitMix64 finaliser: a fast, well-mixed 64-bit hash.
#[inline]
pub fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn aligned() {
        let b = AlignedBuf::new(8192);
        assert_eq!(b.as_slice().as_ptr() as usize % BUF_ALIGN, 0);
        assert_eq!(b.len(), 8192);
    }

    #[test]
    fn blocks_unique_and_deterministic() {
        let g = DataGen::new(Pattern::Random, 42, 4096);
        let mut seen = HashSet::new();
        for seq in 0..200u64 {
            let mut a = vec![0u8; 4096];
            g.init(&mut a);
            g.stamp(&mut a, seq, (seq % 7) * 4096);
            let mut b = vec![1u8; 4096];
            g.init(&mut b);
            g.stamp(&mut b, seq, (seq % 7) * 4096);
            assert_eq!(
                a, b,
                "same (seq, offset) gives the same bytes whatever the buffer"
            );
            for sector in a.chunks(512) {
                assert!(
                    seen.insert(sector.to_vec()),
                    "no two 512-byte sectors identical"
                );
            }
        }
    }

    #[test]
    fn random_data_is_incompressible_ish() {
        let g = DataGen::new(Pattern::Random, 1, 65536);
        let mut a = vec![0u8; 65536];
        g.init(&mut a);
        let mut counts = [0u32; 256];
        for &x in &a {
            counts[x as usize] += 1;
        }
        // Byte entropy close to 8 bits.
        let n = a.len() as f64;
        let h: f64 = counts
            .iter()
            .filter(|&&c| c > 0)
            .map(|&c| {
                let p = c as f64 / n;
                -p * p.log2()
            })
            .sum();
        assert!(h > 7.99, "entropy {h}");
    }
}

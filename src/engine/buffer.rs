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

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::sysinfo::hugepages;

/// Alignment of every I/O buffer: enough for O_DIRECT on any device we know (4 KiB pages,
/// 4 KiB logical blocks).
pub const BUF_ALIGN: usize = 4096;

/// Distance between data stamps.
pub const STAMP_EVERY: usize = 512;

/// The I/O buffers of one job: `slots` buffers of `slot_len` bytes, each aligned for
/// O_DIRECT, in one anonymous mapping.
///
/// When the mapping is at least half a transparent huge page (2 MiB on x86-64), it is
/// rounded up to whole huge pages, aligned to one, and asked to be backed by them
/// (`MADV_HUGEPAGE`). On 4 KiB pages a 1 MiB buffer is 256 scattered pages, and a device
/// that takes 128 segments per request (a loop device; many others) gets each 1 MiB direct
/// I/O as two requests — the tool's memory, not the workload, would decide the request size
/// the device sees (measured: 1 MiB reads and writes at QD8 on a loop device over /dev/shm,
/// two requests per I/O on 4 KiB pages, one on huge pages, about 10 % more IOPS; fio with
/// its default `malloc` buffers shows the split, and gains as much with huge pages). The pages are touched here, outside any measurement, and
/// `huge_pages()` says whether the kernel gave them.
pub struct BufferPool {
    base: *mut u8,
    map_len: usize,
    stride: usize,
    slot_len: usize,
    slots: usize,
    huge: Option<bool>,
}

// The buffers are plain memory owned by one job thread at a time.
unsafe impl Send for BufferPool {}

impl BufferPool {
    /// `huge_pages` false: ordinary pages, and `huge_pages()` says nothing (`--huge-pages
    /// false` asked for that; it is not a shortfall to warn about).
    pub fn new(slots: usize, slot_len: usize, huge_pages: bool) -> BufferPool {
        if huge_pages {
            BufferPool::with_thp(
                slots,
                slot_len,
                hugepages::thp_size(),
                hugepages::thp_usable(),
            )
        } else {
            BufferPool::with_thp(slots, slot_len, None, false)
        }
    }

    /// `new` with the kernel's THP facts given: the huge page size (`None`: no THP) and
    /// whether `MADV_HUGEPAGE` can give them.
    fn with_thp(
        slots: usize,
        slot_len: usize,
        thp_size: Option<usize>,
        thp_usable: bool,
    ) -> BufferPool {
        let slots = slots.max(1);
        let slot_len = slot_len.max(1);
        let stride = slot_len.next_multiple_of(BUF_ALIGN);
        let total = stride
            .checked_mul(slots)
            .expect("buffer pool size fits in memory");
        let wanted = thp_size.filter(|&h| total >= h / 2);
        let mapped = wanted
            .filter(|_| thp_usable)
            .and_then(|h| map_huge(total, h));
        let (base, map_len) = mapped.unwrap_or_else(|| (map_anon(total), total));
        // Fault every page in now (the mapping is zero-filled): not in the first I/Os.
        for off in (0..map_len).step_by(BUF_ALIGN) {
            // SAFETY: off < map_len, inside the mapping, which is writable.
            unsafe { base.add(off).write_volatile(0) };
        }
        let huge = wanted.map(|_| {
            mapped.is_some() && hugepages::mapping_is_huge(base as usize).unwrap_or(false)
        });
        BufferPool {
            base,
            map_len,
            stride,
            slot_len,
            slots,
            huge,
        }
    }

    pub fn slots(&self) -> usize {
        self.slots
    }

    pub fn slot_len(&self) -> usize {
        self.slot_len
    }

    pub fn slot_ptr(&mut self, slot: usize) -> *mut u8 {
        assert!(slot < self.slots, "slot {slot} of {}", self.slots);
        // SAFETY: slot < slots, so the offset is inside the mapping.
        unsafe { self.base.add(slot * self.stride) }
    }

    pub fn slot(&self, slot: usize) -> &[u8] {
        assert!(slot < self.slots, "slot {slot} of {}", self.slots);
        // SAFETY: the slot is inside the mapping, valid for the life of self.
        unsafe { std::slice::from_raw_parts(self.base.add(slot * self.stride), self.slot_len) }
    }

    pub fn slot_mut(&mut self, slot: usize) -> &mut [u8] {
        let len = self.slot_len;
        let ptr = self.slot_ptr(slot);
        // SAFETY: as in slot(), and &mut self makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(ptr, len) }
    }

    /// Bytes mapped for the pool (slots rounded up to pages, and to whole huge pages when
    /// they were asked for): what registering them pins.
    pub fn mapped_bytes(&self) -> usize {
        self.map_len
    }

    /// One iovec per slot (for registering the buffers with io_uring).
    pub fn iovecs(&mut self) -> Vec<libc::iovec> {
        (0..self.slots)
            .map(|i| libc::iovec {
                iov_base: self.slot_ptr(i) as *mut libc::c_void,
                iov_len: self.slot_len,
            })
            .collect()
    }

    /// `Some(true)` when the kernel backed the whole pool with transparent huge pages,
    /// `Some(false)` when the pool is large enough to want them and did not (all) get them
    /// (THP `never`, memory too fragmented), `None` when it is under half a huge page or the
    /// kernel has no THP.
    pub fn huge_pages(&self) -> Option<bool> {
        self.huge
    }
}

impl Drop for BufferPool {
    fn drop(&mut self) {
        // SAFETY: base..base+map_len is exactly what map_anon / map_huge left mapped.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.map_len) };
    }
}

/// Two jobs' (groups', ranks') `huge_page_buffers` together: true only when every pool that
/// asked for huge pages got them; absent when none asked.
pub fn both_huge(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x && y),
        (x, None) | (None, x) => x,
    }
}

/// An anonymous private read-write mapping of `len` bytes (page-aligned by construction).
fn map_anon(len: usize) -> *mut u8 {
    // SAFETY: a fresh anonymous mapping; no existing memory is touched.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        let layout = std::alloc::Layout::from_size_align(len, BUF_ALIGN).expect("valid layout");
        std::alloc::handle_alloc_error(layout);
    }
    p as *mut u8
}

/// `total` rounded up to whole huge pages of `huge` bytes, aligned to one, advised
/// `MADV_HUGEPAGE`; `None` when the kernel refuses (the caller maps plain pages).
fn map_huge(total: usize, huge: usize) -> Option<(*mut u8, usize)> {
    let len = total.next_multiple_of(huge);
    let raw = map_anon(len + huge) as usize;
    let start = raw.next_multiple_of(huge);
    // SAFETY: both ranges are parts of the mapping just made, not used by anything else.
    unsafe {
        if start > raw {
            libc::munmap(raw as *mut libc::c_void, start - raw);
        }
        let tail = start + len;
        let raw_end = raw + len + huge;
        if raw_end > tail {
            libc::munmap(tail as *mut libc::c_void, raw_end - tail);
        }
        if libc::madvise(start as *mut libc::c_void, len, libc::MADV_HUGEPAGE) != 0 {
            libc::munmap(start as *mut libc::c_void, len);
            return None;
        }
    }
    Some((start as *mut u8, len))
}

/// One buffer aligned for O_DIRECT (a pool of one slot).
pub struct AlignedBuf(BufferPool);

impl AlignedBuf {
    pub fn new(len: usize) -> AlignedBuf {
        AlignedBuf(BufferPool::new(1, len, true))
    }

    pub fn as_slice(&self) -> &[u8] {
        self.0.slot(0)
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        self.0.slot_mut(0)
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.0.slot_ptr(0)
    }

    pub fn len(&self) -> usize {
        self.0.slot_len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.slot_len() == 0
    }

    pub fn huge_pages(&self) -> Option<bool> {
        self.0.huge_pages()
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
        assert_eq!(b.huge_pages(), None, "8 KiB is not worth a huge page");
    }

    /// Every slot aligned, of the asked length, disjoint from the others, writable.
    fn check_slots(p: &mut BufferPool, slots: usize, len: usize) {
        assert_eq!((p.slots(), p.slot_len()), (slots, len));
        let mut starts = Vec::new();
        for i in 0..slots {
            let ptr = p.slot_ptr(i) as usize;
            assert_eq!(ptr % BUF_ALIGN, 0, "slot {i}");
            starts.push(ptr);
            p.slot_mut(i).fill(i as u8 + 1);
        }
        starts.sort();
        assert!(
            starts.windows(2).all(|w| w[1] - w[0] >= len),
            "slots overlap"
        );
        for i in 0..slots {
            assert!(p.slot(i).iter().all(|&b| b == i as u8 + 1), "slot {i}");
            assert_eq!(p.slot(i).len(), len);
        }
        let iov = p.iovecs();
        assert_eq!(iov.len(), slots);
        assert!(iov.iter().all(|v| v.iov_len == len));
    }

    #[test]
    fn pool_slots_are_aligned_disjoint_and_writable() {
        // Odd lengths are rounded up per slot, not packed.
        let mut p = BufferPool::with_thp(5, 3000, Some(2 << 20), true);
        check_slots(&mut p, 5, 3000);
        assert_eq!(
            p.huge_pages(),
            None,
            "15 KiB of buffers: no huge pages asked"
        );
    }

    #[test]
    fn pool_large_enough_asks_for_huge_pages() {
        // 8 x 1 MiB with the machine's own THP facts.
        let mut p = BufferPool::new(8, 1 << 20, true);
        check_slots(&mut p, 8, 1 << 20);
        match (hugepages::thp_size(), hugepages::thp_usable()) {
            (None, _) => assert_eq!(p.huge_pages(), None, "no THP in this kernel"),
            (Some(_), false) => assert_eq!(p.huge_pages(), Some(false), "THP never"),
            (Some(h), true) => {
                // Whether the kernel had free huge pages is its business; the mapping is
                // aligned and sized for them either way.
                assert!(p.huge_pages().is_some());
                assert_eq!(p.slot_ptr(0) as usize % h, 0, "aligned to a huge page");
                assert_eq!(p.map_len % h, 0, "whole huge pages");
            }
        }
        // Half a huge page is enough to ask; a single 1 MiB slot rounds up to one.
        let p = BufferPool::with_thp(1, 1 << 20, Some(2 << 20), true);
        assert!(p.huge_pages().is_some());
        assert_eq!(p.map_len, 2 << 20);
    }

    #[test]
    fn pool_without_usable_thp_says_so_and_still_works() {
        let mut p = BufferPool::with_thp(4, 1 << 20, Some(2 << 20), false);
        check_slots(&mut p, 4, 1 << 20);
        assert_eq!(p.huge_pages(), Some(false), "wanted, not given");
        assert_eq!(
            p.map_len,
            4 << 20,
            "no rounding when huge pages cannot come"
        );
        let p = BufferPool::with_thp(4, 1 << 20, None, false);
        assert_eq!(p.huge_pages(), None, "no THP in the kernel: nothing to say");
        let mut p = BufferPool::new(4, 1 << 20, false);
        check_slots(&mut p, 4, 1 << 20);
        assert_eq!(p.huge_pages(), None, "--huge-pages false: not a shortfall");
        assert_eq!(p.map_len, 4 << 20);
    }

    #[test]
    fn both_huge_is_true_only_when_every_asker_got_them() {
        assert_eq!(both_huge(None, None), None);
        assert_eq!(both_huge(Some(true), None), Some(true));
        assert_eq!(both_huge(None, Some(false)), Some(false));
        assert_eq!(both_huge(Some(true), Some(true)), Some(true));
        assert_eq!(both_huge(Some(true), Some(false)), Some(false));
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

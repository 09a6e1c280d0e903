//! Aligned I/O buffers and the data written into them.
//!
//! Data is random and incompressible by default, whatever window a compressor looks at:
//! every write smaller than `STAMP_ONLY_FROM` (1 MiB) is filled anew (the block runner asks
//! for it on a compressing file system only and stamps elsewhere,
//! `runner::block::written_pattern`), each 4 KiB page a piece
//! of a 1 MiB random pool (generated once from the run's seed) XORed with its own 64-bit key,
//! so no run of bytes repeats between writes; that costs one pass over the bytes, about as
//! much as a copy. Writes of 1 MiB and more are random throughout already (larger than the
//! compression unit of any file system or drive), so they are only stamped. Before each
//! write a 16-byte stamp derived from (job, sequence number, offset) goes at every 512-byte
//! boundary, so no two written sectors of a run are identical (deduplication cannot cheat).
//! The bytes written depend only on the workload, not on the engine or on which buffer slot
//! carried them: the same workload on `sync` and `uring` writes identical files.
//! `Pattern::Stamped` (fio's default buffers) only stamps: cheaper, but a compressor whose
//! window spans several writes finds them alike but for their stamps.

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
    /// Random and incompressible whatever a compressor's window (default): writes under
    /// `STAMP_ONLY_FROM` are filled anew, larger ones stamped.
    Random,
    /// Every write filled anew, whatever its size (the writes nobody times: prefill, file
    /// sets, data sets).
    Refill,
    /// The buffers' random content reused, each write only stamped (fio's default buffers):
    /// no per-write pass over the data, but between writes only the stamps differ.
    Stamped,
    /// All zeros (compressible; what naive tools write).
    Zero,
}

impl Pattern {
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Random => "random",
            Pattern::Refill => "refill",
            Pattern::Stamped => "stamped",
            Pattern::Zero => "zero",
        }
    }
}

/// `Pattern::Random` writes of this size and more are only stamped: each is random throughout
/// and larger than any compression unit we know of (btrfs 128 KiB, ZFS records 128 KiB by
/// default and 1 MiB at most unless raised, NTFS 64 KiB, a drive's block).
pub const STAMP_ONLY_FROM: usize = 1 << 20;

/// Bytes of random data that every written page is drawn from (one pool per generator).
const POOL_LEN: usize = 1 << 20;
/// Each page of a write is drawn from its own place in the pool, under its own key.
const FILL_PAGE: usize = 4096;

/// Generates the bytes of every write of one job.
#[derive(Clone)]
pub struct DataGen {
    pub pattern: Pattern,
    /// `POOL_LEN` random bytes as words (empty for `Pattern::Zero`).
    pool: Vec<u64>,
    key: u64,
}

impl DataGen {
    pub fn new(pattern: Pattern, seed: u64) -> DataGen {
        let mut pool = Vec::new();
        if pattern != Pattern::Zero {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            pool = (0..POOL_LEN / 8).map(|_| rng.next_u64()).collect();
        }
        DataGen {
            pattern,
            pool,
            key: splitmix(seed ^ 0x9E37_79B9_7F4A_7C15),
        }
    }

    /// Initialise a slot's buffer (once, before the hot loop): zeros for `Pattern::Zero`,
    /// random bytes otherwise (the pages of one buffer differ from each other).
    pub fn init(&self, buf: &mut [u8]) {
        match self.pattern {
            Pattern::Zero => buf.fill(0),
            _ => self.refill(buf, u64::MAX, 0),
        }
    }

    /// Make `buf` the content of the write number `seq` at `offset`; `buf` must have been
    /// `init`ed. Filled anew (`refill`) or only stamped, as the pattern says. Either way the
    /// bytes depend only on (seed, seq, offset) and the buffer's first content, not on the
    /// engine.
    #[inline]
    pub fn fill(&self, buf: &mut [u8], seq: u64, offset: u64) {
        match self.pattern {
            Pattern::Zero => {}
            Pattern::Random if buf.len() < STAMP_ONLY_FROM => self.refill(buf, seq, offset),
            Pattern::Random | Pattern::Stamped => self.stamp(buf, seq, offset),
            Pattern::Refill => self.refill(buf, seq, offset),
        }
    }

    /// Every 4 KiB page a piece of the random pool, chosen by (seq, offset), XORed with its
    /// own 64-bit key: one pass over the bytes, as fast as a copy (about 15 GB/s on one core
    /// here). Two pages share no run of bytes (their keys differ in every byte lane), so a
    /// compressor finds no repeat whatever its window. Then the stamps, which make every
    /// sector of a run unique by construction.
    fn refill(&self, buf: &mut [u8], seq: u64, offset: u64) {
        let a = splitmix(seq ^ self.key);
        let words = self.pool.len();
        for (i, page) in buf.chunks_mut(FILL_PAGE).enumerate() {
            let h = splitmix(a ^ offset.wrapping_add((i * FILL_PAGE) as u64));
            let start = (h >> 11) as usize % (words - FILL_PAGE / 8);
            xor_copy(page, &self.pool[start..start + FILL_PAGE / 8], splitmix(h));
        }
        self.stamp(buf, seq, offset);
    }

    #[inline]
    fn stamp(&self, buf: &mut [u8], seq: u64, offset: u64) {
        let a = splitmix(seq ^ self.key);
        let mut pos = 0usize;
        while pos + 16 <= buf.len() {
            let sector = offset.wrapping_add(pos as u64);
            // Both words differ from sector to sector (a word repeated in every sector of a
            // write would be 1.6 % of it for a compressor to find).
            let b = splitmix(sector ^ a);
            buf[pos..pos + 8].copy_from_slice(&b.to_le_bytes());
            buf[pos + 8..pos + 16].copy_from_slice(&splitmix(b).to_le_bytes());
            pos += STAMP_EVERY;
        }
    }
}

/// `dst` = the bytes of `src` (little-endian words) XOR `key`, for `dst.len()` bytes.
#[inline(always)]
fn xor_copy(dst: &mut [u8], src: &[u64], key: u64) {
    let whole = dst.len() / 8;
    let mut words = dst.chunks_exact_mut(8);
    for (d, s) in (&mut words).zip(src) {
        d.copy_from_slice(&(s ^ key).to_le_bytes());
    }
    let tail = words.into_remainder();
    if !tail.is_empty() {
        let last = (src[whole] ^ key).to_le_bytes();
        tail.copy_from_slice(&last[..tail.len()]);
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
        let g = DataGen::new(Pattern::Random, 42);
        let mut seen = HashSet::new();
        for seq in 0..200u64 {
            let mut a = vec![0u8; 4096];
            g.init(&mut a);
            g.fill(&mut a, seq, (seq % 7) * 4096);
            let mut b = vec![1u8; 4096];
            g.init(&mut b);
            g.fill(&mut b, seq, (seq % 7) * 4096);
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
        let g = DataGen::new(Pattern::Random, 1);
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

    /// The bytes of `n` sequential writes of `bs` bytes.
    fn stream(g: &DataGen, bs: usize, n: u64) -> Vec<u8> {
        let mut buf = vec![0u8; bs];
        g.init(&mut buf);
        let mut out = Vec::with_capacity(bs * n as usize);
        for seq in 0..n {
            g.fill(&mut buf, seq, seq * bs as u64);
            out.extend_from_slice(&buf);
        }
        out
    }

    fn deflated_share(data: &[u8]) -> f64 {
        use std::io::Write;
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(data).unwrap();
        z.finish().unwrap().len() as f64 / data.len() as f64
    }

    /// The default writes do not compress even for a stream compressor (zlib sees 32 KiB,
    /// four 8 KiB writes); `stamped` writes do, as docs/METHODOLOGY.md says. Writes of 1 MiB,
    /// only stamped, are random throughout.
    #[test]
    fn random_defeats_a_stream_compressor_and_stamped_does_not() {
        let random = deflated_share(&stream(&DataGen::new(Pattern::Random, 9), 8192, 512));
        assert!(
            random > 0.999,
            "random data deflated to {:.1} %",
            random * 100.0
        );
        let stamped = deflated_share(&stream(&DataGen::new(Pattern::Stamped, 9), 8192, 512));
        assert!(
            stamped < 0.1,
            "stamped data deflated to {:.1} %",
            stamped * 100.0
        );
        let big = deflated_share(&stream(&DataGen::new(Pattern::Random, 9), 1 << 20, 1));
        assert!(
            big > 0.999,
            "a 1 MiB write deflated to {:.1} %",
            big * 100.0
        );
    }

    /// At `STAMP_ONLY_FROM` the default pattern only stamps (no pass over the data): the
    /// bytes between the stamps stay what the buffer held.
    #[test]
    fn large_default_writes_are_only_stamped() {
        let g = DataGen::new(Pattern::Random, 4);
        // How many bytes of an initialised buffer of `len` bytes the next write changes.
        let changed_by_fill = |len: usize| {
            let mut buf = vec![0u8; len];
            g.init(&mut buf);
            let before = buf.clone();
            g.fill(&mut buf, 1, 0);
            before.iter().zip(&buf).filter(|(a, b)| a != b).count()
        };
        let changed = changed_by_fill(STAMP_ONLY_FROM);
        assert!(
            changed <= STAMP_ONLY_FROM / STAMP_EVERY * 16,
            "{changed} bytes changed"
        );
        let changed = changed_by_fill(4096);
        assert!(
            changed > 4000,
            "a 4 KiB write is filled anew: {changed} bytes changed"
        );
    }

    /// Eight times the pool's size written in 4 KiB pages: no aligned 8-byte word comes
    /// twice (the pool's pieces come back under other keys), so there is no repeat for a
    /// compressor of any window; 2^20 random words collide with odds of about 3e-8.
    #[test]
    fn refill_repeats_no_word_past_the_pool() {
        let data = stream(&DataGen::new(Pattern::Random, 3), 4096, 2048);
        let mut seen = HashSet::with_capacity(data.len() / 8);
        let dups = data
            .chunks_exact(8)
            .filter(|w| !seen.insert(u64::from_le_bytes((*w).try_into().unwrap())))
            .count();
        assert_eq!(dups, 0);
    }

    /// A refilled write does not depend on what its buffer held, and a short buffer (not a
    /// whole number of pages or words) is filled to its last byte.
    #[test]
    fn refill_is_deterministic_and_fills_every_byte() {
        let g = DataGen::new(Pattern::Refill, 5);
        for len in [4096usize, 4100, 13, 1 << 20] {
            let mut a = vec![0u8; len];
            let mut b = vec![0xFFu8; len];
            g.fill(&mut a, 7, 1 << 30);
            g.fill(&mut b, 7, 1 << 30);
            assert_eq!(a, b, "len {len}");
            let zeros = a.iter().rev().take_while(|&&x| x == 0).count();
            assert!(
                zeros < 4,
                "len {len}: the last {zeros} bytes were not filled"
            );
        }
    }
}

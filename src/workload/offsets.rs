//! Offset generators: sequential, and uniform random without bias.
//!
//! Random offsets are a pseudo-random *permutation* of the blocks of the region: every block
//! in range, none out of range, each block exactly once per pass. Regions up to
//! `TABLE_MAX_BLOCKS` blocks use a precomputed Fisher–Yates shuffle (one load per offset: the
//! hot loop stays cheaper than fio's); each later pass rotates it by a large odd step, which
//! keeps it a bijection. Larger regions use a keyed Feistel network with cycle walking (as in
//! format-preserving encryption): O(1) memory, a few multiplications per offset, a new key
//! per pass.

use crate::engine::buffer::splitmix;

/// A bijection on `0..n`.
#[derive(Debug, Clone)]
pub struct Permutation {
    n: u64,
    half_bits: u32,
    mask: u64,
    keys: [u64; 4],
}

impl Permutation {
    pub fn new(n: u64, seed: u64) -> Permutation {
        assert!(n > 0);
        // Smallest even bit count with 2^bits >= n, so the domain is at most 4n and cycle
        // walking takes < 4 steps on average.
        let bits = 64 - (n - 1).max(1).leading_zeros();
        let bits = bits.max(2).div_ceil(2) * 2;
        let half_bits = bits / 2;
        let mut k = seed;
        let mut keys = [0u64; 4];
        for key in keys.iter_mut() {
            k = splitmix(k);
            *key = k;
        }
        Permutation {
            n,
            half_bits,
            mask: (1u64 << half_bits) - 1,
            keys,
        }
    }

    #[inline]
    fn round(&self, x: u64) -> u64 {
        let mut l = x >> self.half_bits;
        let mut r = x & self.mask;
        for k in self.keys {
            let f = splitmix(r ^ k) & self.mask;
            let nl = r;
            r = l ^ f;
            l = nl;
        }
        (l << self.half_bits) | r
    }

    /// The image of `i` (< n).
    #[inline]
    pub fn apply(&self, i: u64) -> u64 {
        let mut x = self.round(i);
        while x >= self.n {
            x = self.round(x);
        }
        x
    }
}

/// Regions with at most this many blocks get a precomputed permutation (16 MiB of u32).
pub const TABLE_MAX_BLOCKS: u64 = 1 << 22;

/// A precomputed permutation of `0..n` (Fisher–Yates with a seeded xoshiro256++).
pub fn shuffled(n: u64, seed: u64) -> Vec<u32> {
    use rand::{RngExt, SeedableRng};
    assert!(n <= u32::MAX as u64 + 1);
    let mut v: Vec<u32> = (0..n as u32).collect();
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    for i in (1..v.len()).rev() {
        let j = rng.random_range(0..=i);
        v.swap(i, j);
    }
    v
}

/// How a job walks its region.
#[derive(Debug, Clone)]
pub enum OffsetGen {
    Sequential {
        start: u64,
        bs: u64,
        blocks: u64,
        next: u64,
    },
    Random {
        start: u64,
        bs: u64,
        blocks: u64,
        next: u64,
        pass: u64,
        seed: u64,
        perm: Permutation,
    },
    Table {
        start: u64,
        bs: u64,
        blocks: u64,
        next: usize,
        /// Rotation of the current pass (pass number x `step`, mod blocks).
        shift: u64,
        step: u64,
        table: Vec<u32>,
    },
}

impl OffsetGen {
    /// `region_start`/`region_len` in bytes; `region_len` is rounded down to whole blocks.
    pub fn new(random: bool, region_start: u64, region_len: u64, bs: u64, seed: u64) -> OffsetGen {
        let blocks = (region_len / bs).max(1);
        if random && blocks <= TABLE_MAX_BLOCKS {
            // A step near blocks / golden ratio, odd so consecutive passes differ well.
            let step = ((blocks as f64 * 0.618_033_988_75) as u64) | 1;
            OffsetGen::Table {
                start: region_start,
                bs,
                blocks,
                next: 0,
                shift: 0,
                step: step % blocks,
                table: shuffled(blocks, seed),
            }
        } else if random {
            OffsetGen::Random {
                start: region_start,
                bs,
                blocks,
                next: 0,
                pass: 0,
                seed,
                perm: Permutation::new(blocks, seed),
            }
        } else {
            OffsetGen::Sequential {
                start: region_start,
                bs,
                blocks,
                next: 0,
            }
        }
    }

    /// Next offset in bytes (wraps around at the end of the region; random gets a new key).
    #[inline]
    pub fn next_offset(&mut self) -> u64 {
        match self {
            OffsetGen::Sequential {
                start,
                bs,
                blocks,
                next,
            } => {
                let o = *start + *next * *bs;
                *next += 1;
                if *next == *blocks {
                    *next = 0;
                }
                o
            }
            OffsetGen::Random {
                start,
                bs,
                blocks,
                next,
                pass,
                seed,
                perm,
            } => {
                let o = *start + perm.apply(*next) * *bs;
                *next += 1;
                if *next == *blocks {
                    *next = 0;
                    *pass += 1;
                    *perm = Permutation::new(*blocks, splitmix(*seed ^ *pass));
                }
                o
            }
            OffsetGen::Table {
                start,
                bs,
                blocks,
                next,
                shift,
                step,
                table,
            } => {
                let mut b = table[*next] as u64 + *shift;
                if b >= *blocks {
                    b -= *blocks;
                }
                *next += 1;
                if *next == table.len() {
                    *next = 0;
                    *shift = (*shift + *step) % *blocks;
                }
                *start + b * *bs
            }
        }
    }

    pub fn blocks(&self) -> u64 {
        match self {
            OffsetGen::Sequential { blocks, .. }
            | OffsetGen::Random { blocks, .. }
            | OffsetGen::Table { blocks, .. } => *blocks,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_is_a_bijection() {
        for n in [1u64, 2, 3, 7, 100, 1000, 4097, 65536] {
            let p = Permutation::new(n, 12345);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let x = p.apply(i);
                assert!(x < n, "in range");
                assert!(!seen[x as usize], "each block once");
                seen[x as usize] = true;
            }
            assert!(seen.iter().all(|&s| s));
        }
    }

    #[test]
    fn random_covers_every_block_in_range_once_per_pass() {
        let bs = 4096;
        let mut g = OffsetGen::new(true, 8192, 1000 * bs, bs, 7);
        let mut counts = vec![0u32; 1000];
        for _ in 0..3000 {
            let o = g.next_offset();
            assert!(o >= 8192 && o < 8192 + 1000 * bs);
            assert_eq!(o % bs, 0);
            counts[((o - 8192) / bs) as usize] += 1;
        }
        assert!(counts.iter().all(|&c| c == 3));
    }

    #[test]
    fn random_has_no_bias() {
        // Over many short windows the first-half/second-half split is ~50 %, and the
        // sequence is not sequential.
        let n = 1 << 16;
        let mut g = OffsetGen::new(true, 0, n * 512, 512, 99);
        let first: Vec<u64> = (0..1000).map(|_| g.next_offset() / 512).collect();
        let low = first.iter().filter(|&&b| b < n / 2).count();
        assert!((400..600).contains(&low), "low half {low} of 1000");
        let ascending = first.windows(2).filter(|w| w[1] == w[0] + 1).count();
        assert!(ascending < 10);
        // Chi-square over 16 buckets of the whole pass is exactly flat (a permutation);
        // check the first quarter pass instead.
        let mut g = OffsetGen::new(true, 0, n * 512, 512, 5);
        let mut buckets = [0f64; 16];
        for _ in 0..n / 4 {
            buckets[(g.next_offset() / 512 * 16 / n) as usize] += 1.0;
        }
        let e = (n / 4) as f64 / 16.0;
        let chi2: f64 = buckets.iter().map(|o| (o - e) * (o - e) / e).sum();
        // 15 degrees of freedom, p = 0.001 critical value 37.7.
        assert!(chi2 < 37.7, "chi2 {chi2}");
    }

    #[test]
    fn feistel_path_covers_large_regions() {
        let n = TABLE_MAX_BLOCKS + 5;
        let mut g = OffsetGen::new(true, 0, n * 512, 512, 3);
        assert!(matches!(g, OffsetGen::Random { .. }));
        for _ in 0..10_000 {
            assert!(g.next_offset() < n * 512);
        }
    }

    #[test]
    fn table_passes_differ() {
        let mut g = OffsetGen::new(true, 0, 100 * 512, 512, 3);
        let a: Vec<u64> = (0..100).map(|_| g.next_offset()).collect();
        let b: Vec<u64> = (0..100).map(|_| g.next_offset()).collect();
        assert_ne!(a, b);
        let mut sb = b.clone();
        sb.sort();
        assert_eq!(sb, (0..100).map(|i| i * 512).collect::<Vec<_>>());
    }

    #[test]
    fn sequential_wraps() {
        let mut g = OffsetGen::new(false, 0, 3 * 4096, 4096, 0);
        let v: Vec<u64> = (0..4).map(|_| g.next_offset()).collect();
        assert_eq!(v, vec![0, 4096, 8192, 0]);
    }
}

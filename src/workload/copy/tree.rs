//! A data set as a tree of paths and sizes ([`Plan`]), and the seeded random draws its
//! generators share: the leaf under `dataset` (the synthetic classes, scanning, writing)
//! and `portage` (the source tree).

use std::path::PathBuf;

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::engine::buffer::splitmix;

/// One file of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEntry {
    /// Relative to the data-set root.
    pub rel: PathBuf,
    pub size: u64,
}

/// A data set as paths and sizes (synthetic, or scanned from a user's `--source`).
#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub name: String,
    /// Relative directories, parents before children.
    pub dirs: Vec<PathBuf>,
    pub files: Vec<FileEntry>,
    pub(super) dir_set: std::collections::HashSet<PathBuf>,
}

impl Plan {
    pub fn data_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }

    pub fn largest(&self) -> Option<&FileEntry> {
        self.files.iter().max_by_key(|f| f.size)
    }

    /// Bytes the set needs on a tmpfs (page-rounded files plus a page per directory).
    pub fn ram_bytes(&self) -> u64 {
        let page = 4096u64;
        self.files
            .iter()
            .map(|f| f.size.div_ceil(page) * page)
            .sum::<u64>()
            + (self.dirs.len() as u64 + 1) * page
    }

    pub(super) fn add_dir(&mut self, rel: PathBuf) {
        if rel.as_os_str().is_empty() || self.dir_set.contains(&rel) {
            return;
        }
        if let Some(p) = rel.parent() {
            self.add_dir(p.to_path_buf());
        }
        self.dir_set.insert(rel.clone());
        self.dirs.push(rel);
    }
}

pub(super) fn rng_for(name: &str, seed: u64) -> Xoshiro256PlusPlus {
    let h = name.bytes().fold(0xCBF2_9CE4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01B3)
    });
    Xoshiro256PlusPlus::seed_from_u64(splitmix(seed ^ h))
}

pub(super) fn unit(rng: &mut Xoshiro256PlusPlus) -> f64 {
    ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
}

pub(super) fn normal(rng: &mut Xoshiro256PlusPlus) -> f64 {
    // Box-Muller: enough quality for file-size spreads.
    let (u1, u2) = (unit(rng), unit(rng));
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// A log-normal size with the given mean.
pub(super) fn lognormal(rng: &mut Xoshiro256PlusPlus, mean: f64, sigma: f64) -> u64 {
    (mean * (sigma * normal(rng) - sigma * sigma / 2.0).exp()).round() as u64
}

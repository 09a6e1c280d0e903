//! Synthetic data sets as data: each is a list of file classes (how many files, how many
//! bytes in all, how spread their sizes are, where they go) or, for `source-tree`, a
//! portage-like directory tree. A plan is drawn from a seed (same seed, same paths, sizes
//! and bytes) and then generated into a RAM directory at memory speed.
//!
//! Sizes: each class's total is fixed (the source article's figure x scale) and split over
//! its files with log-normal weights, so totals are exact and sizes look like real collections.
//! Content: `DataGen` (one random 1 MiB base block, a unique stamp every 512 bytes keyed by
//! file index and offset): incompressible and never duplicated, generated at memcpy speed.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use rand_xoshiro::Xoshiro256PlusPlus;

use crate::engine::buffer::{DataGen, Pattern};
use crate::os::signals::StopFlag;

pub use super::tree::{FileEntry, Plan};
use super::tree::{normal, rng_for};

/// Chunk of generation writes (and size of the random base block).
const GEN_CHUNK: usize = 1 << 20;
/// mtime of generated files: 2009-07-01 UTC (the era of Fedorchuk's btrfs vs nilfs2
/// copies), plus one second per file, so `--preserve` has distinct times to carry over.
const GEN_MTIME_BASE: i64 = 1_246_406_400;

/// One kind of file in a flat data set: `(dir, per_dir, stem, ext, count, total_bytes,
/// sigma)` — the directory under the data-set root; files per subdirectory (`dir/NN/`, 0 =
/// all directly in `dir`); the file names' stem and extension; how many files; their bytes
/// in all; the log-normal sigma of their sizes (0 = all equal).
type Class = (&'static str, u64, &'static str, &'static str, u64, u64, f64);

/// Every built-in data set: name, one-line description.
pub const DATASETS: &[(&str, &str)] = &[
    (
        "media-mix",
        "twelve-file-system copy test: 100 MP3 (681 MB), 880 JPEG (269 MB), 4 MP4 (493 MB), 1 ISO (583 MB)",
    ),
    (
        "flac-album",
        "btrfs vs nilfs2 copies: 14 FLAC tracks (420 MB) + cover, cue sheet and rip log",
    ),
    ("cd-iso", "btrfs vs nilfs2 copies: one CD image, 700 MiB"),
    (
        "big-video",
        "btrfs vs nilfs2 copies: one large video file, 4 GiB (over FAT32's limit)",
    ),
    (
        "source-tree",
        "btrfs vs nilfs2 copies: portage-like tree, ~15,000 packages in 160 categories, ~90,000 small files",
    ),
    (
        "photo-album",
        "600 camera JPEGs (1.8 GB) in 6 event folders",
    ),
    (
        "office-docs",
        "2,000 documents: 1200 docx, 500 xlsx, 250 pdf, 50 pptx (261 MB)",
    ),
];

fn classes(name: &str) -> Option<&'static [Class]> {
    Some(match name {
        "media-mix" => &[
            ("music", 10, "track", "mp3", 100, 681_000_000, 0.3),
            ("photos", 100, "IMG_", "jpg", 880, 269_000_000, 0.35),
            ("video", 0, "clip", "mp4", 4, 493_000_000, 0.5),
            ("iso", 0, "disc", "iso", 1, 583_000_000, 0.0),
        ],
        "flac-album" => &[
            ("album", 0, "track", "flac", 14, 420_000_000, 0.3),
            ("album", 0, "cover", "jpg", 1, 600_000, 0.0),
            ("album", 0, "album", "cue", 1, 2_000, 0.0),
            ("album", 0, "rip", "log", 1, 5_000, 0.0),
        ],
        "cd-iso" => &[("iso", 0, "cd", "iso", 1, 700 << 20, 0.0)],
        "big-video" => &[("video", 0, "big-video", "mkv", 1, 4 << 30, 0.0)],
        "photo-album" => &[("photos", 100, "DSC_", "jpg", 600, 1_800_000_000, 0.3)],
        "office-docs" => &[
            ("documents", 50, "report", "docx", 1200, 36_000_000, 0.8),
            ("documents", 50, "sheet", "xlsx", 500, 25_000_000, 0.9),
            ("documents", 50, "paper", "pdf", 250, 100_000_000, 1.0),
            ("documents", 50, "slides", "pptx", 50, 100_000_000, 0.7),
        ],
        _ => return None,
    })
}

/// Bytes of a built-in data set at `scale` before drawing it (to refuse absurd scales
/// before allocating millions of entries). The source tree's figure is its mean.
pub fn nominal_bytes(name: &str, scale: f64) -> Option<f64> {
    if name == "source-tree" {
        return Some(254e6 * scale);
    }
    Some(
        classes(name)?
            .iter()
            .map(|&(.., total_bytes, _)| total_bytes as f64)
            .sum::<f64>()
            * scale,
    )
}

/// Is `name` a built-in data set?
pub fn is_known(name: &str) -> bool {
    DATASETS.iter().any(|(n, _)| *n == name)
}

/// The names, for error messages.
pub fn names() -> String {
    DATASETS
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Split `total` over `n` log-normal weights; the sum is exactly `total`.
fn split_total(rng: &mut Xoshiro256PlusPlus, total: u64, n: u64, sigma: f64) -> Vec<u64> {
    let w: Vec<f64> = (0..n).map(|_| (sigma * normal(rng)).exp()).collect();
    let sum: f64 = w.iter().sum();
    let mut sizes: Vec<u64> = w
        .iter()
        .map(|x| (total as f64 * x / sum).floor() as u64)
        .collect();
    let given: u64 = sizes.iter().sum();
    if let Some(last) = sizes.last_mut() {
        *last += total - given;
    }
    sizes
}

/// The plan of a built-in data set at `scale`. `None` for an unknown name.
pub fn plan(name: &str, seed: u64, scale: f64) -> Option<Plan> {
    if name == "source-tree" {
        return Some(super::portage::source_tree(seed, scale));
    }
    let mut rng = rng_for(name, seed);
    let mut p = Plan {
        name: name.into(),
        ..Default::default()
    };
    for &(dir, per_dir, stem, ext, count, total_bytes, sigma) in classes(name)? {
        let count = ((count as f64 * scale).round() as u64).max(1);
        let total = (total_bytes as f64 * scale).round() as u64;
        for (i, size) in split_total(&mut rng, total, count, sigma)
            .into_iter()
            .enumerate()
        {
            let i = i as u64;
            let sub = match i.checked_div(per_dir) {
                None => PathBuf::from(dir),
                Some(group) => Path::new(dir).join(format!("{group:02}")),
            };
            p.add_dir(sub.clone());
            let width = if count > 1000 { 5 } else { 4 };
            let file = if count == 1 {
                format!("{stem}.{ext}")
            } else {
                format!("{stem}{i:0width$}.{ext}")
            };
            p.files.push(FileEntry {
                rel: sub.join(file),
                size,
            });
        }
    }
    Some(p)
}

/// The plan of a user's tree: its directories and regular files (sorted, so runs compare).
/// Returns also how many other entries (symlinks, devices, sockets) were skipped.
pub fn scan(root: &Path) -> anyhow::Result<(Plan, u64)> {
    use anyhow::Context;
    let mut p = Plan {
        name: "source".into(),
        ..Default::default()
    };
    let mut skipped = 0;
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = root.join(&rel);
        let mut entries: Vec<_> = std::fs::read_dir(&dir)
            .with_context(|| format!("cannot list {}", dir.display()))?
            .collect::<Result<_, _>>()
            .with_context(|| format!("cannot list {}", dir.display()))?;
        entries.sort_by_key(|e| e.file_name());
        let mut subdirs = Vec::new();
        for e in entries {
            let md = e
                .metadata()
                .with_context(|| format!("cannot stat {}", e.path().display()))?;
            let r = rel.join(e.file_name());
            if md.is_dir() {
                p.add_dir(r.clone());
                subdirs.push(r);
            } else if md.is_file() {
                p.files.push(FileEntry {
                    rel: r,
                    size: md.len(),
                });
            } else {
                skipped += 1;
            }
        }
        stack.extend(subdirs.into_iter().rev());
    }
    Ok((p, skipped))
}

/// Write every file of `plan` under `root` (which must exist): directories 0755, files
/// 0644 with distinct mtimes. `progress(bytes_done)` is called now and then.
pub fn generate(
    plan: &Plan,
    root: &Path,
    seed: u64,
    stop: &StopFlag,
    progress: &mut dyn FnMut(u64),
) -> anyhow::Result<()> {
    use anyhow::Context;
    for d in &plan.dirs {
        std::fs::create_dir(root.join(d))
            .with_context(|| format!("cannot create {}", root.join(d).display()))?;
    }
    let gen_ = DataGen::new(Pattern::Refill, seed);
    let mut buf = vec![0u8; GEN_CHUNK];
    gen_.init(&mut buf);
    let mut done = 0u64;
    for (i, f) in plan.files.iter().enumerate() {
        stop.check()?;
        let path = root.join(&f.rel);
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .open(&path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        let mut off = 0u64;
        while off < f.size {
            let n = (f.size - off).min(GEN_CHUNK as u64) as usize;
            if n < GEN_CHUNK {
                // A short tail must not carry the previous file's stamps.
                gen_.init(&mut buf[..n]);
            }
            gen_.fill(&mut buf[..n], i as u64, off);
            file.write_all(&buf[..n])
                .with_context(|| format!("cannot write {}", path.display()))?;
            if n < GEN_CHUNK {
                gen_.init(&mut buf[..n]);
            }
            off += n as u64;
            done += n as u64;
            if done % (64 << 20) < n as u64 {
                progress(done);
            }
        }
        let t = nix::sys::time::TimeSpec::new(GEN_MTIME_BASE + i as i64, 0);
        nix::sys::stat::futimens(&file, &t, &t)
            .with_context(|| format!("cannot set the times of {}", path.display()))?;
    }
    progress(done);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_mix_matches_the_twelve_fs_copy_test() {
        let p = plan("media-mix", 1, 1.0).unwrap();
        let count = |ext: &'static str| {
            p.files
                .iter()
                .filter(move |f| f.rel.extension().unwrap() == ext)
        };
        assert_eq!(count("mp3").count(), 100);
        assert_eq!(count("jpg").count(), 880);
        assert_eq!(count("mp4").count(), 4);
        assert_eq!(count("iso").count(), 1);
        assert_eq!(count("mp3").map(|f| f.size).sum::<u64>(), 681_000_000);
        assert_eq!(count("jpg").map(|f| f.size).sum::<u64>(), 269_000_000);
        assert_eq!(p.data_bytes(), 2_026_000_000);
    }

    #[test]
    fn scaled_counts_and_totals() {
        let p = plan("media-mix", 1, 0.01).unwrap();
        assert_eq!(p.files.len(), 1 + 9 + 1 + 1);
        assert_eq!(p.data_bytes(), 20_260_000);
        let p = plan("big-video", 1, 0.001).unwrap();
        assert_eq!(p.files.len(), 1);
        assert_eq!(p.data_bytes(), 4_294_967); // 4 GiB / 1000, rounded
    }

    #[test]
    fn source_tree_shape() {
        let p = plan("source-tree", 7, 1.0).unwrap();
        let files = p.files.len();
        assert!((80_000..100_000).contains(&files), "{files} files");
        let bytes = p.data_bytes();
        assert!((220_000_000..290_000_000).contains(&bytes), "{bytes} bytes");
        let depth = p.files.iter().map(|f| f.rel.components().count()).max();
        assert_eq!(depth, Some(5));
        let mut seen = std::collections::HashSet::new();
        assert!(
            p.files.iter().all(|f| seen.insert(f.rel.clone())),
            "unique paths"
        );
    }

    #[test]
    fn same_seed_same_plan_other_seed_other_sizes() {
        for (name, _) in DATASETS {
            let a = plan(name, 5, 0.01).unwrap();
            let b = plan(name, 5, 0.01).unwrap();
            assert_eq!(a.files, b.files, "{name}");
            assert_eq!(a.dirs, b.dirs, "{name}");
        }
        let a = plan("photo-album", 5, 0.1).unwrap();
        let b = plan("photo-album", 6, 0.1).unwrap();
        assert_ne!(a.files, b.files);
    }

    #[test]
    fn dirs_come_before_their_children() {
        let p = plan("source-tree", 1, 0.01).unwrap();
        for (i, d) in p.dirs.iter().enumerate() {
            if let Some(parent) = d.parent().filter(|x| !x.as_os_str().is_empty()) {
                let pi = p.dirs.iter().position(|x| x == parent).unwrap();
                assert!(pi < i);
            }
        }
    }
}

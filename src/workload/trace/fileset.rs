//! A stream copy's file set: where its files go (directory tree of `dirs` leaves, `depth`
//! deep), how big each is (drawn from the size distribution, rescaled to `total_size`), and
//! writing the files that must exist before measuring.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use super::format::{Op, Workload};
use crate::engine::buffer::{DataGen, Pattern, splitmix};
use crate::os::signals::StopFlag;

/// A small, fast, seedable generator (the workload needs reproducible choices, not crypto).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(splitmix(seed))
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        splitmix(self.0)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in [0, n) (0 when n is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

#[derive(Debug, Clone)]
pub(super) struct Slot {
    pub(super) path: PathBuf,
    /// Intended size (the file set's shape).
    pub(super) size: u64,
    /// Current length.
    pub(super) len: u64,
    pub(super) present: bool,
}

/// The files of one stream copy.
#[derive(Debug, Clone)]
pub struct FileSet {
    pub stream: usize,
    pub copy: u32,
    pub dir: PathBuf,
    pub(super) slots: Vec<Slot>,
}

impl FileSet {
    pub fn total_size(&self) -> u64 {
        self.slots.iter().map(|s| s.size).sum()
    }
}

/// Where each stream copy's files go and how big they are (nothing is created yet).
pub fn layout(w: &Workload, root: &Path, seed: u64) -> Vec<FileSet> {
    let mut sets = Vec::new();
    for (si, s) in w.streams.iter().enumerate() {
        for copy in 0..s.copies {
            let mut rng = Rng::new(seed ^ ((si as u64) << 32) ^ copy as u64);
            let dir = root.join(format!("{}-{copy}", s.name));
            let mut sizes: Vec<u64> = (0..s.files)
                .map(|_| s.file_size.sample(rng.unit()))
                .collect();
            if let Some(total) = s.total_size {
                let sum: u64 = sizes.iter().sum::<u64>().max(1);
                let f = total as f64 / sum as f64;
                for v in &mut sizes {
                    *v = ((*v as f64 * f) as u64).max(1);
                }
                // Rounding leftovers go to the last file so the total is exact.
                let now: u64 = sizes.iter().sum();
                if let Some(last) = sizes.last_mut() {
                    *last = (*last + total).saturating_sub(now).max(1);
                }
            }
            // Each file's path and intended size.
            let files: Vec<(PathBuf, u64)> = if let Some((name, scale)) = &s.dataset {
                // An `iolab copy` data set: its own tree, names and sizes.
                let plan = crate::workload::copy::dataset::plan(name, seed ^ copy as u64, *scale)
                    .unwrap_or_default();
                plan.files
                    .iter()
                    .map(|f| (dir.join(&f.rel), f.size))
                    .collect()
            } else {
                let fanout = (s.dirs as f64).powf(1.0 / s.depth as f64).ceil().max(1.0) as u64;
                sizes
                    .into_iter()
                    .enumerate()
                    .map(|(i, size)| {
                        let mut leaf = i as u64 % s.dirs;
                        let mut p = dir.clone();
                        let mut parts = Vec::new();
                        for _ in 0..s.depth {
                            parts.push(format!("d{}", leaf % fanout));
                            leaf /= fanout;
                        }
                        for part in parts.iter().rev() {
                            p.push(part);
                        }
                        p.push(format!("f{i}"));
                        (p, size)
                    })
                    .collect()
            };
            let slots = files
                .into_iter()
                .map(|(path, size)| Slot {
                    path,
                    size,
                    len: 0,
                    present: false,
                })
                .collect();
            sets.push(FileSet {
                stream: si,
                copy,
                dir,
                slots,
            });
        }
    }
    sets
}

/// Bytes the run may need on the target: every file at full size, plus appended data.
pub fn bytes_needed(w: &Workload, sets: &[FileSet]) -> u64 {
    let files: u64 = sets.iter().map(|s| s.total_size()).sum();
    let appended: u64 = w
        .streams
        .iter()
        .filter(|s| s.ops.ops().contains(&Op::Append))
        .map(|s| {
            let by_rate = match (s.rate, s.duration) {
                (Some(r), Some(d)) => (r * d.as_secs_f64()) as u64,
                _ => u64::MAX,
            };
            s.amount
                .unwrap_or(u64::MAX)
                .min(by_rate)
                .saturating_mul(s.copies as u64)
        })
        .fold(0u64, |a, b| {
            a.saturating_add(if b == u64::MAX { 0 } else { b })
        });
    files + appended
}

pub const CHUNK: usize = 1 << 20;

/// Create directories, and write the files of streams whose file set must already exist.
/// Returns the bytes written. Unmeasured; the files are then dropped from the page cache.
pub fn prepare(w: &Workload, sets: &mut [FileSet], seed: u64, stop: &StopFlag) -> io::Result<u64> {
    let data = DataGen::new(Pattern::Refill, seed ^ 0x7472_6163_6500);
    let mut buf = vec![0u8; CHUNK];
    data.init(&mut buf);
    let mut written = 0u64;
    let mut seq = 0u64;
    for set in sets.iter_mut() {
        let in_dir =
            |d: &Path, e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", d.display()));
        std::fs::create_dir_all(&set.dir).map_err(|e| in_dir(&set.dir, e))?;
        let existing = w.streams[set.stream].existing;
        for slot in &mut set.slots {
            if let Some(parent) = slot.path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| in_dir(parent, e))?;
            }
            if !existing {
                continue;
            }
            create_filled(&slot.path, slot.size, &data, &mut buf, &mut seq, stop).map_err(|e| {
                if e.kind() == io::ErrorKind::Interrupted {
                    e
                } else {
                    io::Error::new(e.kind(), format!("{}: {e}", slot.path.display()))
                }
            })?;
            written += slot.size;
            slot.len = slot.size;
            slot.present = true;
        }
    }
    if let Some(first) = sets.first() {
        let dir = first.dir.parent().unwrap_or(&first.dir);
        settle(
            dir,
            sets.iter().flat_map(|s| {
                s.slots
                    .iter()
                    .filter(|x| x.present)
                    .map(|x| x.path.as_path())
            }),
        )?;
    }
    Ok(written)
}

/// Create `path` (it must not exist) with `size` bytes of incompressible data (not synced:
/// call [`settle`] once for all files).
pub fn create_filled(
    path: &Path,
    size: u64,
    data: &DataGen,
    buf: &mut [u8],
    seq: &mut u64,
    stop: &StopFlag,
) -> io::Result<()> {
    let f = OpenOptions::new().write(true).create_new(true).open(path)?;
    let mut off = 0;
    while off < size {
        if stop.is_set() {
            return Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted"));
        }
        let n = (size - off).min(buf.len() as u64) as usize;
        data.fill(&mut buf[..n], *seq, off);
        *seq += 1;
        f.write_all_at(&buf[..n], off)?;
        off += n as u64;
    }
    Ok(())
}

/// Write back everything under `dir` with one syncfs (one fsync per file costs seconds for
/// thousands of files), then drop `files` from the page cache so measured reads reach the
/// device.
pub fn settle<'a>(dir: &Path, files: impl Iterator<Item = &'a Path>) -> io::Result<()> {
    syncfs(dir)?;
    for p in files {
        if let Ok(f) = File::open(p) {
            unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        }
    }
    drop_fuse_device_cache(dir);
    Ok(())
}

/// A FUSE file system on a block device (ntfs-3g, mount.exfat-fuse, fusefat) writes the
/// device through the device's own page cache, which dropping the files' pages leaves
/// full: the measured reads came back from it, not the device (NASPT's `hd-playback-4x` on
/// exFAT read 59 MiB with "device loop1: 0 B read"). Write that cache back and drop it too.
/// Best effort: whoever may not open the device (not root) keeps the old behaviour.
fn drop_fuse_device_cache(dir: &Path) {
    let fuse = crate::sysinfo::mounts::mount_of(dir)
        .is_some_and(|m| m.fs_type == "fuseblk" || m.fs_type.starts_with("fuse."));
    let Some((name, _)) = fuse.then(|| crate::sysinfo::block_device_of(dir)).flatten() else {
        return;
    };
    if let Ok(dev) = File::open(Path::new("/dev").join(name)) {
        let _ = dev.sync_all();
        // SAFETY: plain syscall on an open descriptor.
        unsafe { libc::posix_fadvise(dev.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    }
}

/// Write back the whole file system holding `dir`.
pub fn syncfs(dir: &Path) -> io::Result<()> {
    let d = File::open(dir)?;
    // SAFETY: plain syscall on an open descriptor.
    if unsafe { libc::syncfs(d.as_raw_fd()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

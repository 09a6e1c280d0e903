//! The parallel tree scan: jwalk reads directories on all cores and each directory's
//! children are lstat'ed in the worker that read it, so the main thread only sees
//! directories. Symlinks are not followed; a hard-linked inode is counted once (dev+ino);
//! entries that cannot be read are counted and a few are kept as examples.

use std::collections::HashSet;
use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use nix::fcntl::{AtFlags, OFlag, open};
use nix::sys::stat::{Mode, fstatat};

use super::rules::FAT32_MAX_FILE;
use super::{DirRec, FileRec, Inventory, utf16_len};
use crate::os::signals::StopFlag;

/// How many unreadable paths are kept as examples.
const EXAMPLES: usize = 5;

#[derive(Default)]
struct Shared {
    files: Mutex<Vec<FileRec>>,
    dirs: Mutex<Vec<DirRec>>,
    linked: Mutex<HashSet<(u64, u64)>>,
    examples: Mutex<Vec<String>>,
    huge: Mutex<Vec<String>>,
    subdirs: AtomicU64,
    /// With `--one-file-system`: the root's device; mount points below are not entered.
    root_dev: Option<u64>,
    mounts_skipped: AtomicU64,
    disk_bytes: AtomicU64,
    sparse_files: AtomicU64,
    sparse_bytes: AtomicU64,
    symlinks: AtomicU64,
    other: AtomicU64,
    hard_links_skipped: AtomicU64,
    unreadable: AtomicU64,
}

impl Shared {
    fn unreadable(&self, what: String) {
        self.unreadable.fetch_add(1, Ordering::Relaxed);
        let mut ex = self.examples.lock().unwrap();
        if ex.len() < EXAMPLES {
            ex.push(what);
        }
    }

    /// Count a regular file once per inode.
    fn first_link(&self, st: &Stat) -> bool {
        if st.nlink <= 1 {
            return true;
        }
        let fresh = self.linked.lock().unwrap().insert((st.dev, st.ino));
        if !fresh {
            self.hard_links_skipped.fetch_add(1, Ordering::Relaxed);
        }
        fresh
    }
}

type Entry = jwalk::Result<jwalk::DirEntry<((), ())>>;

/// What the scan needs of an lstat.
struct Stat {
    size: u64,
    dev: u64,
    ino: u64,
    nlink: u64,
    /// st_blocks x 512: what the file holds on the file system being scanned.
    disk: u64,
}

/// lstat a child relative to its directory's descriptor (no path walk per file; a third
/// less system time on a million files), or by path when the directory cannot be opened.
fn stat_child(dir_fd: Option<&OwnedFd>, e: &jwalk::DirEntry<((), ())>) -> Result<Stat, String> {
    if let Some(fd) = dir_fd {
        return fstatat(fd, e.file_name(), AtFlags::AT_SYMLINK_NOFOLLOW)
            .map(|st| Stat {
                size: st.st_size as u64,
                dev: st.st_dev,
                ino: st.st_ino,
                nlink: st.st_nlink,
                disk: st.st_blocks as u64 * 512,
            })
            .map_err(|err| format!("{}: {}", e.path().display(), err.desc()));
    }
    e.metadata()
        .map(|md| Stat {
            size: md.len(),
            dev: md.dev(),
            ino: md.ino(),
            nlink: md.nlink(),
            disk: md.blocks() * 512,
        })
        .map_err(|err| format!("{}: {err}", e.path().display()))
}

/// Look at one directory's children in the worker thread that read them; keep only the
/// subdirectories in `children` so jwalk descends into them.
fn process_dir(shared: &Shared, dir: &Path, children: &mut Vec<Entry>) {
    let mut files = Vec::with_capacity(children.len());
    let dir_fd = open(
        dir,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .ok();
    let mut rec = DirRec::default();
    let mut other_fs = Vec::new();
    let mut disk = 0u64;
    for child in children.iter() {
        let e = match child {
            Ok(e) => e,
            Err(err) => {
                shared.unreadable(format!("{}: {err}", dir.display()));
                continue;
            }
        };
        rec.entries += 1;
        rec.name_bytes += e.file_name().len() as u64;
        let name_len = utf16_len(e.file_name());
        rec.name_units += name_len;
        let ft = e.file_type();
        if ft.is_symlink() || e.path_is_symlink() {
            shared.symlinks.fetch_add(1, Ordering::Relaxed);
        } else if ft.is_dir() {
            if let Some(dev) = shared.root_dev
                && stat_child(dir_fd.as_ref(), e).is_ok_and(|st| st.dev != dev)
            {
                shared.mounts_skipped.fetch_add(1, Ordering::Relaxed);
                other_fs.push(e.file_name().to_os_string());
                continue;
            }
            shared.subdirs.fetch_add(1, Ordering::Relaxed);
        } else if ft.is_file() {
            match stat_child(dir_fd.as_ref(), e) {
                Ok(st) if shared.first_link(&st) => {
                    disk += st.disk;
                    if st.disk < st.size {
                        shared.sparse_files.fetch_add(1, Ordering::Relaxed);
                        shared
                            .sparse_bytes
                            .fetch_add(st.size - st.disk, Ordering::Relaxed);
                    }
                    if st.size > FAT32_MAX_FILE {
                        let mut huge = shared.huge.lock().unwrap();
                        if huge.len() < EXAMPLES {
                            huge.push(crate::os::text::os_text(e.path().as_os_str()));
                        }
                    }
                    files.push(FileRec {
                        size: st.size,
                        name_len: name_len.min(u16::MAX as u64) as u16,
                    })
                }
                Ok(_) => {}
                Err(err) => shared.unreadable(err),
            }
        } else {
            shared.other.fetch_add(1, Ordering::Relaxed);
        }
    }
    children.retain(|c| {
        matches!(c, Ok(e) if e.file_type().is_dir() && !e.path_is_symlink()
            && !other_fs.iter().any(|n| n == e.file_name()))
    });
    shared.disk_bytes.fetch_add(disk, Ordering::Relaxed);
    shared.files.lock().unwrap().extend(files);
    shared.dirs.lock().unwrap().push(rec);
}

/// Scan `root` (a directory; the caller checked it exists). When `stop` is set (SIGINT)
/// the walk stops descending and returns what it counted so far. `one_fs`: do not enter
/// directories on another device (mount points), like `du -x`.
pub fn scan(root: &Path, stop: &StopFlag, one_fs: bool) -> Inventory {
    let started = Instant::now();
    let root_dev = if one_fs {
        std::fs::metadata(root).ok().map(|m| m.dev())
    } else {
        None
    };
    let shared = std::sync::Arc::new(Shared {
        root_dev,
        ..Default::default()
    });
    let worker = shared.clone();
    let worker_stop = stop.clone();
    let walk = jwalk::WalkDir::new(root)
        .follow_links(false)
        .skip_hidden(false)
        .sort(false)
        .process_read_dir(move |depth, dir, _state, children| {
            // `None` is jwalk's pseudo-parent holding just the root: not a directory of ours.
            if worker_stop.is_set() {
                children.clear();
            } else if depth.is_some() {
                process_dir(&worker, dir, children)
            }
        });
    let describe = |err: &jwalk::Error, fallback: &Path| {
        let path = crate::os::text::os_text(err.path().unwrap_or(fallback).as_os_str());
        let why = err
            .io_error()
            .map(|e| e.to_string())
            .unwrap_or_else(|| err.to_string());
        format!("{path}: {why}")
    };
    for entry in walk {
        if stop.is_set() {
            break;
        }
        // A directory that could not be listed is yielded with its error attached.
        match entry {
            Ok(e) => {
                if let Some(err) = e.read_children.as_ref().and_then(|rc| rc.error()) {
                    shared.unreadable(describe(err, &e.path()));
                }
            }
            Err(err) => shared.unreadable(describe(&err, root)),
        }
    }
    let mut inv = Inventory {
        files: std::mem::take(&mut *shared.files.lock().unwrap()),
        dirs: std::mem::take(&mut *shared.dirs.lock().unwrap()),
        ..Default::default()
    };
    let s = &mut inv.stats;
    s.files = inv.files.len() as u64;
    // The root is a directory of the tree too; unlistable ones still occupy a unit.
    s.dirs = 1 + shared.subdirs.load(Ordering::Relaxed);
    s.symlinks = shared.symlinks.load(Ordering::Relaxed);
    s.mount_points_skipped = shared.mounts_skipped.load(Ordering::Relaxed);
    s.files_disk_bytes = Some(shared.disk_bytes.load(Ordering::Relaxed));
    s.sparse_files = shared.sparse_files.load(Ordering::Relaxed);
    s.sparse_bytes = shared.sparse_bytes.load(Ordering::Relaxed);
    s.other = shared.other.load(Ordering::Relaxed);
    s.hard_links_skipped = shared.hard_links_skipped.load(Ordering::Relaxed);
    s.unreadable = shared.unreadable.load(Ordering::Relaxed);
    s.unreadable_examples = std::mem::take(&mut *shared.examples.lock().unwrap());
    s.over_4gib_examples = std::mem::take(&mut *shared.huge.lock().unwrap());
    s.data_bytes = inv.files.iter().fold(0u64, |t, f| t.saturating_add(f.size));
    s.largest_file_bytes = inv.files.iter().map(|f| f.size).max().unwrap_or(0);
    s.elapsed_s = started.elapsed().as_secs_f64();
    let entries = s.files + s.dirs + s.symlinks + s.other + s.hard_links_skipped;
    s.entries_per_s = entries as f64 / s.elapsed_s.max(1e-9);
    inv
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_files_dirs_links_once() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        std::fs::create_dir_all(r.join("a/b")).unwrap();
        std::fs::write(r.join("a/x"), vec![0u8; 5000]).unwrap();
        std::fs::write(r.join("a/b/y"), b"hi").unwrap();
        std::fs::write(r.join("empty"), b"").unwrap();
        std::fs::hard_link(r.join("a/x"), r.join("x-again")).unwrap();
        std::os::unix::fs::symlink(r.join("a"), r.join("loop")).unwrap();
        let inv = scan(r, &StopFlag::new(), true);
        assert_eq!(inv.stats.files, 3);
        assert_eq!(inv.stats.dirs, 3);
        assert_eq!(inv.stats.symlinks, 1);
        assert_eq!(inv.stats.hard_links_skipped, 1);
        assert_eq!(inv.stats.data_bytes, 5002);
        assert!(inv.stats.files_disk_bytes.is_some());
        assert_eq!(inv.stats.unreadable, 0);
        assert_eq!(inv.dirs.len(), 3);
        let root_entries: u64 = inv.dirs.iter().map(|d| d.entries).max().unwrap();
        assert_eq!(root_entries, 4);
        assert_eq!(inv.stats.sparse_files, 0, "no file has a hole");
    }

    /// A sparse file holds less than its size: counted, so that the header can say why the
    /// files hold far less than the rules predict (a 1 GiB sparse file read "files hold
    /// 16.0 KiB (st_blocks), 1.0 GiB predicted by these rules", as if the rules were wrong).
    #[test]
    fn sparse_files_are_counted() {
        let t = tempfile::tempdir().unwrap();
        let f = std::fs::File::create(t.path().join("sparse")).unwrap();
        f.set_len(64 << 20).unwrap();
        let held = f.metadata().unwrap().blocks() * 512;
        if held >= 64 << 20 {
            eprintln!("SKIP sparse_files_are_counted: this file system has no holes");
            return;
        }
        std::fs::write(t.path().join("full"), vec![1u8; 10_000]).unwrap();
        let inv = scan(t.path(), &StopFlag::new(), false);
        assert_eq!(inv.stats.sparse_files, 1);
        assert_eq!(inv.stats.sparse_bytes, (64 << 20) - held);
    }
}

//! The thing block workloads run on: iolab's own test file in a directory (created,
//! preallocated, prefilled, removed afterwards unless `--keep`), a block device, or a
//! regular file the user allowed iolab to overwrite.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::engine::buffer::{AlignedBuf, DataGen, Pattern};
use crate::model::{Warning, WarningCode};

// What kind of path a target is: a fact of the file system (fs/facts.rs), named here too.
pub use crate::fs::facts::{TargetKind, classify};

/// A prepared test file or device.
#[derive(Debug)]
pub struct TestTarget {
    pub path: PathBuf,
    pub kind: TargetKind,
    /// Usable bytes (a whole number of the largest block size).
    pub size: u64,
    /// O_DIRECT works on it.
    pub direct_ok: bool,
    pub logical_block_size: u32,
    /// The data currently in every block was written by iolab (no holes to read).
    pub prefilled: bool,
    /// `--verify`: sectors written to this target are sealed and reads are checked.
    pub verify: Option<crate::engine::verify::Verifier>,
    /// The file system (st_dev) of the test file iolab created, to tell an unmount from a
    /// removal when the file is gone.
    fs_dev: Option<u64>,
    created: bool,
    keep: bool,
}

impl TestTarget {
    /// Create iolab's own test file in `dir`, preallocated to `size` bytes.
    pub fn create_in_dir(dir: &Path, size: u64, keep: bool) -> io::Result<TestTarget> {
        let name = format!(
            "iolab-test-{}-{:08x}.dat",
            std::process::id(),
            crate::engine::buffer::splitmix(Instant::now().elapsed().as_nanos() as u64 ^ size)
                as u32
        );
        let path = dir.join(name);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)?;
        crate::fs::guard::register_created_file(&path);
        let mut t = TestTarget {
            path: path.clone(),
            kind: TargetKind::Directory,
            size,
            direct_ok: false,
            logical_block_size: 512,
            prefilled: false,
            verify: None,
            fs_dev: file
                .metadata()
                .ok()
                .map(|m| std::os::unix::fs::MetadataExt::dev(&m)),
            created: true,
            keep,
        };
        // Preallocate so the file system allocates extents once, not during measurement;
        // not on btrfs, where a file with preallocated extents is never compressed, not even
        // when rewritten (measured on Linux 6.18 with compress-force=zstd: 8 KiB writes of
        // one repeated block took 24 MiB for 256 MiB written, and all 64 MiB of a
        // preallocated file after two rewrites), so a `compress` mount would be measured as
        // if it had none. Copy-on-write allocates on every write there anyway; the prefill
        // sizes the file.
        if crate::sysinfo::mounts::mount_of(dir).is_some_and(|m| m.fs_type == "btrfs") {
            file.set_len(size)?;
        } else {
            preallocate(&file, size)?;
        }
        t.direct_ok = direct_supported(&path);
        t.logical_block_size = crate::sysinfo::logical_block_size_of(&path).unwrap_or(512);
        Ok(t)
    }

    /// An existing block device or regular file; nothing is created or deleted.
    pub fn open_existing(
        path: &Path,
        kind: TargetKind,
        size: Option<u64>,
    ) -> io::Result<TestTarget> {
        let dev_size = match kind {
            TargetKind::BlockDevice => block_device_size(path)?,
            _ => std::fs::metadata(path)?.len(),
        };
        let size = match (kind, size) {
            (TargetKind::BlockDevice, Some(s)) => s.min(dev_size),
            (TargetKind::BlockDevice, None) => dev_size,
            (_, Some(s)) => {
                if s > dev_size {
                    OpenOptions::new().write(true).open(path)?.set_len(s)?;
                }
                s
            }
            (_, None) => dev_size,
        };
        Ok(TestTarget {
            path: path.to_path_buf(),
            kind,
            size,
            direct_ok: direct_supported(path),
            logical_block_size: crate::sysinfo::logical_block_size_of(path).unwrap_or(512),
            prefilled: false,
            verify: None,
            fs_dev: None,
            created: false,
            keep: true,
        })
    }

    /// Open for a job: read+write, O_DIRECT when asked and supported.
    pub fn open(&self, direct: bool, write: bool) -> io::Result<File> {
        let mut o = OpenOptions::new();
        o.read(true).write(write);
        let mut flags = 0;
        if direct && self.direct_ok {
            flags |= libc::O_DIRECT;
        }
        if self.created {
            // A symlink planted in place of iolab's own file must not redirect its writes.
            flags |= libc::O_NOFOLLOW;
        }
        if self.kind != TargetKind::BlockDevice {
            // Reading the test file must not write its inode: under `relatime` the first read
            // after the prefill updates the access time (a metadata write inside a read
            // test), under `strictatime` every read does. O_NOATIME needs the file's owner
            // (or CAP_FOWNER): without it the file opens as usual.
            match o.custom_flags(flags | libc::O_NOATIME).open(&self.path) {
                Err(e) if e.raw_os_error() == Some(libc::EPERM) => {}
                r => return r,
            }
        }
        o.custom_flags(flags);
        o.open(&self.path)
    }

    /// Write every block once with random data (so reads never hit holes or trimmed
    /// areas), then fsync. `progress` gets the fraction done.
    pub fn prefill(
        &mut self,
        seed: u64,
        progress: &mut dyn FnMut(f64),
        stop: &crate::os::signals::StopFlag,
    ) -> io::Result<()> {
        const CHUNK: usize = 1 << 20;
        let file = self.open(true, true)?;
        let datagen = DataGen::new(Pattern::Refill, seed ^ 0x5052_4546_494C_4C00);
        let mut buf = AlignedBuf::new(CHUNK);
        datagen.init(buf.as_mut_slice());
        let mut off = 0u64;
        let mut seq = 0u64;
        let mut last = Instant::now();
        while off < self.size {
            if stop.is_set() {
                return Err(io::Error::new(
                    io::ErrorKind::Interrupted,
                    "interrupted during prefill",
                ));
            }
            let len = (self.size - off).min(CHUNK as u64) as usize;
            // The tail may not be aligned for O_DIRECT; sizes are rounded to blocks by the
            // caller so this only matters for odd user files.
            datagen.fill(&mut buf.as_mut_slice()[..len], seq, off);
            if let Some(v) = &self.verify {
                v.seal(&mut buf.as_mut_slice()[..len], off, seq);
            }
            write_all_at(&file, &buf.as_slice()[..len], off)?;
            off += len as u64;
            seq += 1;
            if last.elapsed().as_millis() >= 100 {
                progress(off as f64 / self.size as f64);
                last = Instant::now();
            }
        }
        file.sync_all()?;
        progress(1.0);
        self.prefilled = true;
        Ok(())
    }

    /// Warning when O_DIRECT was asked for but the file system refused it.
    pub fn direct_warning(&self, direct_requested: bool) -> Option<Warning> {
        (direct_requested && !self.direct_ok).then(|| Warning {
            code: WarningCode::DirectFallback,
            message: format!(
                "O_DIRECT is not supported on {} (tmpfs before Linux 6.6 and some FUSE file systems refuse it); fell back to buffered I/O, so the page cache is part of the result",
                self.path.display()
            ),
            test: None,
        })
    }

    pub fn is_created_by_us(&self) -> bool {
        self.created
    }

    /// Why the target failed, when that is something that happened to it during the run
    /// rather than to one request: the file system of iolab's test file unmounted (its
    /// directory now lies on another one), or a device detached or shrunk below the tested
    /// size (a loop device's `losetup -d`, a backing file truncated, a disk removed). For
    /// the error paths only.
    pub fn vanished(&self) -> Option<String> {
        use std::os::unix::fs::MetadataExt;
        if let Some(dev) = self.fs_dev {
            let dir = crate::os::dir_of(&self.path);
            let now = std::fs::metadata(dir).ok()?.dev();
            return (now != dev).then(|| {
                format!(
                    "the file system holding it was unmounted during the run ({} now lies on another file system)",
                    dir.display()
                )
            });
        }
        if self.kind != TargetKind::BlockDevice {
            return None;
        }
        let now = block_device_size(&self.path).unwrap_or(0);
        (now < self.size).then(|| {
            format!(
                "{} now holds {}, less than the {} tested: it was detached or shrank during the run (losetup -d, a backing file truncated, a disk removed)",
                self.path.display(),
                crate::units::fmt_size_iec(now),
                crate::units::fmt_size_iec(self.size)
            )
        })
    }
}

impl Drop for TestTarget {
    fn drop(&mut self) {
        if self.created {
            if !self.keep {
                if let Some(why) = self.vanished() {
                    // Out of reach: it stays on the unmounted file system, and no later
                    // start can find it by its path.
                    crate::eline!(
                        "iolab: could not remove the test file {} (nor the lock file .iolab.lock beside it): {why}; remove them once it is mounted there again",
                        crate::os::text::terminal(&self.path.display().to_string())
                    );
                }
                crate::fs::guard::remove_or_report(&self.path);
            } else {
                // Its name has a pid and a random part: say which file it is.
                crate::eline!(
                    "iolab: test file kept: {}",
                    crate::os::text::terminal(&self.path.display().to_string())
                );
            }
            // Kept files are the user's now: no cleanup may take them later.
            crate::fs::guard::unregister_created_file(&self.path);
        }
    }
}

fn write_all_at(file: &File, mut buf: &[u8], mut off: u64) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    while !buf.is_empty() {
        match file.write_at(buf, off) {
            Ok(0) => return Err(io::Error::new(io::ErrorKind::WriteZero, "wrote 0 bytes")),
            Ok(n) => {
                buf = &buf[n..];
                off += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Does opening with O_DIRECT work here? (tmpfs before Linux 6.6 says EINVAL.)
pub fn direct_supported(path: &Path) -> bool {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .is_ok()
}

/// Size of a block device in bytes (BLKGETSIZE64).
pub fn block_device_size(path: &Path) -> io::Result<u64> {
    let f = File::open(path)?;
    let mut size: u64 = 0;
    // BLKGETSIZE64 = _IOR(0x12, 114, size_t)
    const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
    // SAFETY: the ioctl writes a u64 into `size`.
    let rc = unsafe { libc::ioctl(f.as_raw_fd(), BLKGETSIZE64 as _, &mut size) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(size)
}

/// Reserve `size` bytes for `file` (fallocate), or only size it where the file system cannot.
fn preallocate(file: &File, size: u64) -> io::Result<()> {
    // SAFETY: plain syscall on an fd we own.
    let rc = unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, size as libc::off_t) };
    if rc != 0 {
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            // Some file systems (fusefat) refuse both fallocate and ftruncate with EPERM;
            // the prefill then writes the file out block by block, which sizes it.
            Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS) | Some(libc::EPERM) => {
                match file.set_len(size) {
                    Ok(()) => {}
                    Err(e2) if e2.raw_os_error() == Some(libc::EPERM) => {}
                    Err(e2) => return Err(e2),
                }
            }
            _ => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `flags:` line of /proc/self/fdinfo/FD (octal open flags).
    fn open_flags(f: &File) -> i32 {
        let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", f.as_raw_fd())).unwrap();
        let line = info.lines().find(|l| l.starts_with("flags:")).unwrap();
        i32::from_str_radix(line.trim_start_matches("flags:").trim(), 8).unwrap()
    }

    #[test]
    fn test_files_are_read_without_touching_their_access_time() {
        let dir = tempfile::tempdir().unwrap();
        let t = TestTarget::create_in_dir(dir.path(), 1 << 20, false).unwrap();
        for write in [false, true] {
            let f = t.open(false, write).unwrap();
            let flags = open_flags(&f);
            assert_ne!(
                flags & libc::O_NOATIME,
                0,
                "opened without O_NOATIME (flags {flags:o}, write {write})"
            );
            assert_eq!(
                flags & libc::O_ACCMODE,
                if write { libc::O_RDWR } else { libc::O_RDONLY }
            );
        }
    }
}

//! Copying and deleting a data-set tree the way GNU cp and rm do, without their extras: per
//! file open, fstat, create, move the bytes (read/write with one buffer, copy_file_range or
//! sendfile), optionally carry mode and times over (`cp -p`), close. No sparse detection
//! (every byte is written), no FICLONE, one thread. copy_file_range itself may clone extents
//! within one xfs or btrfs (the kernel tries remap_file_range first); `sharing.rs` detects
//! that. Errors name the file and, for the errors a user can act on (EFBIG, ENOSPC), say why.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use anyhow::{Context, Result};

use super::dataset::Plan;
use crate::engine::buffer::AlignedBuf;
use crate::os::signals::StopFlag;
use crate::workload::copy::CopyMethod;

/// Largest request of one copy_file_range/sendfile call (the kernel loops inside it).
const KERNEL_CHUNK: usize = 1 << 30;
/// FAT32's largest file: 4 GiB - 1 byte.
pub const FAT32_MAX_FILE: u64 = (4 << 30) - 1;

/// How a tree is copied.
#[derive(Debug, Clone, Copy)]
pub struct CopyOpts {
    pub method: CopyMethod,
    pub buffer: usize,
    pub preserve: bool,
}

/// What one tree copy did.
#[derive(Debug, Clone, Default)]
pub struct TreeStats {
    pub files: u64,
    pub bytes: u64,
    /// Files that fell back to read/write because the kernel refused the method.
    pub fallback_files: u64,
}

/// Reusable state of a copier (the buffer is allocated once per phase, outside timing).
pub struct Copier {
    opts: CopyOpts,
    buf: AlignedBuf,
    /// O_NOATIME is allowed (we own the files or are root); dropped after the first EPERM.
    noatime: bool,
}

impl Copier {
    pub fn new(opts: CopyOpts) -> Copier {
        Copier {
            opts,
            buf: AlignedBuf::new(opts.buffer),
            noatime: true,
        }
    }

    /// Copy every directory and file of `plan` from `src` to `dst` (created, must not
    /// exist). `progress(bytes_done)` is called after every file.
    pub fn copy_tree(
        &mut self,
        plan: &Plan,
        src: &Path,
        dst: &Path,
        stop: &StopFlag,
        progress: &mut dyn FnMut(u64),
    ) -> Result<TreeStats> {
        let mut b = std::fs::DirBuilder::new();
        b.mode(0o755);
        b.create(dst)
            .with_context(|| format!("cannot create {}", dst.display()))?;
        for d in &plan.dirs {
            let mode = std::fs::metadata(src.join(d))
                .map(|m| m.mode() & 0o7777)
                .unwrap_or(0o755);
            b.mode(mode);
            b.create(dst.join(d))
                .with_context(|| format!("cannot create {}", dst.join(d).display()))?;
        }
        let mut st = TreeStats::default();
        for f in &plan.files {
            stop.check()?;
            let fell_back = self.copy_file(&src.join(&f.rel), &dst.join(&f.rel))?;
            st.files += 1;
            st.bytes += f.size;
            st.fallback_files += fell_back as u64;
            // Progress now and then: a small-file tree must not pay for it per file.
            if st.files % 64 == 0 || f.size >= 1 << 20 {
                progress(st.bytes);
            }
        }
        if self.opts.preserve {
            // Like cp -p: directory times last, deepest first, after their contents.
            for d in plan.dirs.iter().rev() {
                copy_times(&src.join(d), &dst.join(d))?;
            }
            copy_times(src, dst)?;
        }
        Ok(st)
    }

    fn open_src(&mut self, path: &Path) -> std::io::Result<File> {
        if self.noatime {
            match std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOATIME)
                .open(path)
            {
                Err(e) if e.raw_os_error() == Some(libc::EPERM) => self.noatime = false,
                r => return r,
            }
        }
        File::open(path)
    }

    /// Copy one file; returns whether it fell back to read/write.
    fn copy_file(&mut self, src: &Path, dst: &Path) -> Result<bool> {
        let mut input = self
            .open_src(src)
            .with_context(|| format!("cannot open {}", src.display()))?;
        let md = input
            .metadata()
            .with_context(|| format!("cannot stat {}", src.display()))?;
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(md.mode() & 0o7777)
            .open(dst)
            .map_err(|e| named_error(e, dst, md.len(), "create"))?;
        let fell_back = match self.opts.method {
            CopyMethod::Rw => {
                self.rw(&mut input, &mut out, dst, md.len())?;
                false
            }
            CopyMethod::Auto => self.kernel_copy(
                CopyMethod::CopyFileRange,
                &mut input,
                &mut out,
                dst,
                md.len(),
            )?,
            m => self.kernel_copy(m, &mut input, &mut out, dst, md.len())?,
        };
        if self.opts.preserve {
            out.set_permissions(std::fs::Permissions::from_mode(md.mode() & 0o7777))
                .with_context(|| format!("cannot set the mode of {}", dst.display()))?;
            let at = nix::sys::time::TimeSpec::new(md.atime(), md.atime_nsec());
            let mt = nix::sys::time::TimeSpec::new(md.mtime(), md.mtime_nsec());
            nix::sys::stat::futimens(&out, &at, &mt)
                .with_context(|| format!("cannot set the times of {}", dst.display()))?;
        }
        // The close is part of the copy (NFS and FUSE report errors there).
        let fd = out.as_raw_fd();
        std::mem::forget(out);
        // SAFETY: fd is owned by the forgotten File and closed exactly once here.
        if unsafe { libc::close(fd) } != 0 {
            return Err(named_error(
                std::io::Error::last_os_error(),
                dst,
                md.len(),
                "close",
            ));
        }
        Ok(fell_back)
    }

    fn rw(&mut self, input: &mut File, out: &mut File, dst: &Path, size: u64) -> Result<()> {
        let buf = self.buf.as_mut_slice();
        loop {
            let n = match input.read(buf) {
                Ok(0) => return Ok(()),
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(anyhow::Error::new(e).context("read failed")),
            };
            out.write_all(&buf[..n])
                .map_err(|e| named_error(e, dst, size, "write"))?;
        }
    }

    /// copy_file_range or sendfile; falls back to rw if the first call is refused.
    fn kernel_copy(
        &mut self,
        method: CopyMethod,
        input: &mut File,
        out: &mut File,
        dst: &Path,
        size: u64,
    ) -> Result<bool> {
        let (i, o) = (input.as_raw_fd(), out.as_raw_fd());
        let mut first = true;
        loop {
            // SAFETY: valid fds; null offsets use and advance the file positions.
            let n = unsafe {
                match method {
                    CopyMethod::CopyFileRange => libc::copy_file_range(
                        i,
                        std::ptr::null_mut(),
                        o,
                        std::ptr::null_mut(),
                        KERNEL_CHUNK,
                        0,
                    ),
                    _ => libc::sendfile(o, i, std::ptr::null_mut(), KERNEL_CHUNK),
                }
            };
            if n == 0 {
                return Ok(false);
            }
            if n < 0 {
                let e = std::io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EINTR) => continue,
                    Some(libc::EXDEV | libc::EINVAL | libc::EOPNOTSUPP | libc::ENOSYS) if first => {
                        self.rw(input, out, dst, size)?;
                        return Ok(true);
                    }
                    _ => return Err(named_error(e, dst, size, method.name())),
                }
            }
            first = false;
        }
    }
}

/// Set `dst`'s exact mode (no umask) and access/modification times to `src`'s (cp -p).
fn copy_times(src: &Path, dst: &Path) -> Result<()> {
    let md = std::fs::metadata(src).with_context(|| format!("cannot stat {}", src.display()))?;
    std::fs::set_permissions(dst, std::fs::Permissions::from_mode(md.mode() & 0o7777))
        .with_context(|| format!("cannot set the mode of {}", dst.display()))?;
    let at = nix::sys::time::TimeSpec::new(md.atime(), md.atime_nsec());
    let mt = nix::sys::time::TimeSpec::new(md.mtime(), md.mtime_nsec());
    nix::sys::stat::utimensat(
        nix::fcntl::AT_FDCWD,
        dst,
        &at,
        &mt,
        nix::sys::stat::UtimensatFlags::FollowSymlink,
    )
    .with_context(|| format!("cannot set the times of {}", dst.display()))
}

/// An I/O error on `path` as one sentence, with the reason for the errors users can act on.
pub fn named_error(e: std::io::Error, path: &Path, size: u64, op: &str) -> anyhow::Error {
    let why = match e.raw_os_error() {
        Some(libc::EFBIG) => format!(
            "file too large for the target file system (EFBIG): {} is {} ({} bytes); FAT32 holds at most 4 GiB - 1 byte ({FAT32_MAX_FILE} bytes) per file",
            path.display(),
            crate::units::fmt_size_iec(size),
            size
        ),
        Some(libc::ENOSPC) => format!(
            "the target file system is full (ENOSPC) while writing {}",
            path.display()
        ),
        _ => format!("{op} of {} failed: {e}", path.display()),
    };
    anyhow::anyhow!(why)
}

/// Remove a tree (like rm -r); returns when the last unlink/rmdir returned.
pub fn delete_tree(root: &Path) -> Result<()> {
    std::fs::remove_dir_all(root).with_context(|| format!("cannot delete {}", root.display()))
}

/// syncfs(2) of the file system holding `path`.
pub fn syncfs(path: &Path) -> Result<()> {
    let f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    // SAFETY: valid fd.
    if unsafe { libc::syncfs(f.as_raw_fd()) } != 0 {
        return Err(anyhow::Error::new(std::io::Error::last_os_error())
            .context(format!("syncfs of {} failed", path.display())));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn efbig_names_the_file_and_the_limit() {
        let e = named_error(
            std::io::Error::from_raw_os_error(libc::EFBIG),
            Path::new("/mnt/video/big.mkv"),
            4 << 30,
            "write",
        );
        let s = e.to_string();
        assert!(s.contains("/mnt/video/big.mkv"), "{s}");
        assert!(s.contains("EFBIG") && s.contains("FAT32"), "{s}");
    }

    #[test]
    fn every_method_copies_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        let plan = super::super::dataset::plan("office-docs", 3, 0.01).unwrap();
        std::fs::create_dir(&src).unwrap();
        super::super::dataset::generate(&plan, &src, 3, &StopFlag::new(), &mut |_| {}).unwrap();
        for (i, m) in [
            CopyMethod::Rw,
            CopyMethod::CopyFileRange,
            CopyMethod::Sendfile,
        ]
        .into_iter()
        .enumerate()
        {
            let dst = dir.path().join(format!("dst{i}"));
            let opts = CopyOpts {
                method: m,
                buffer: 4096,
                preserve: true,
            };
            let st = Copier::new(opts)
                .copy_tree(&plan, &src, &dst, &StopFlag::new(), &mut |_| {})
                .unwrap();
            assert_eq!(st.files, plan.files.len() as u64);
            for f in &plan.files {
                let a = std::fs::read(src.join(&f.rel)).unwrap();
                let b = std::fs::read(dst.join(&f.rel)).unwrap();
                assert_eq!(a, b, "{m:?} {}", f.rel.display());
                let (ma, mb) = (
                    std::fs::metadata(src.join(&f.rel)).unwrap(),
                    std::fs::metadata(dst.join(&f.rel)).unwrap(),
                );
                assert_eq!(ma.mtime(), mb.mtime(), "--preserve keeps mtime");
            }
        }
    }
}

//! The hot loop of the small-file tester: one portion of files created, stat'ed, read back
//! or deleted with raw libc calls relative to an open directory, names kept in one
//! pre-built buffer (no allocation per file), the reference file in RAM.

use std::ffi::CStr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Instant;

use crate::os::signals::StopFlag;
use crate::workload::files::Method;

/// Why a portion stopped.
#[derive(Debug)]
pub enum PortionError {
    /// A signal asked to stop.
    Stopped,
    /// ENOSPC or EDQUOT: the file system (or quota) is full.
    NoSpace {
        op: &'static str,
        errno: i32,
    },
    Io {
        op: &'static str,
        errno: i32,
    },
    /// A file read back or stat'ed with the wrong size.
    Mismatch {
        expected: u64,
        found: u64,
    },
}

impl PortionError {
    fn from_errno(op: &'static str) -> PortionError {
        PortionError::from_io(op, &std::io::Error::last_os_error())
    }

    /// `op` failed with `e`: out of space (or quota), or another error.
    pub fn from_io(op: &'static str, e: &std::io::Error) -> PortionError {
        let errno = e.raw_os_error().unwrap_or(0);
        if errno == libc::ENOSPC || errno == libc::EDQUOT {
            PortionError::NoSpace { op, errno }
        } else {
            PortionError::Io { op, errno }
        }
    }

    /// One line naming the file by directory and name.
    pub fn describe(&self, where_: &str) -> String {
        let err = |e: i32| std::io::Error::from_raw_os_error(e);
        match self {
            PortionError::Stopped => "stopped".into(),
            PortionError::NoSpace { op, errno } => {
                format!(
                    "{op} of {where_} failed: {} (file system full)",
                    err(*errno)
                )
            }
            PortionError::Io { op, errno } => format!("{op} of {where_} failed: {}", err(*errno)),
            PortionError::Mismatch { expected, found } => {
                format!("{where_}: {found} bytes on disk, {expected} written")
            }
        }
    }
}

/// File names `00000000`, `00000001`, ... in a fixed-width NUL-terminated buffer that is
/// incremented in place.
pub struct Names {
    buf: [u8; 24],
    width: usize,
}

impl Names {
    /// Names wide enough for `total` files, starting at `first`.
    pub fn new(total: u64, first: u64) -> Names {
        let width = total.saturating_sub(1).max(1).to_string().len().max(6);
        let mut n = Names {
            buf: [0u8; 24],
            width,
        };
        n.seek(first);
        n
    }

    pub fn seek(&mut self, index: u64) {
        let s = format!("{index:0w$}", w = self.width);
        self.buf[..self.width].copy_from_slice(&s.as_bytes()[s.len() - self.width..]);
        self.buf[self.width] = 0;
    }

    #[inline]
    pub fn current(&self) -> &CStr {
        // SAFETY-free: the buffer always holds `width` digits and a NUL.
        CStr::from_bytes_until_nul(&self.buf).unwrap_or(c"0")
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.width]).unwrap_or("?")
    }

    /// Next name (odometer increment; wraps only past `width` digits, never reached).
    #[inline]
    pub fn advance(&mut self) {
        let mut i = self.width;
        while i > 0 {
            i -= 1;
            if self.buf[i] == b'9' {
                self.buf[i] = b'0';
            } else {
                self.buf[i] += 1;
                return;
            }
        }
    }
}

/// The reference file kept in RAM: its bytes, and for copy_file_range/sendfile a file
/// descriptor holding them (a memfd, or a file on the target).
pub struct Reference {
    pub data: Vec<u8>,
    pub fd: Option<OwnedFd>,
    pub method: Method,
}

impl Reference {
    /// `len` bytes of incompressible data; a memfd copy for the fd-based methods.
    pub fn new(method: Method, len: usize, seed: u64) -> std::io::Result<Reference> {
        use crate::engine::buffer::{DataGen, Pattern};
        let mut data = vec![0u8; len.max(1)];
        DataGen::new(Pattern::Random, seed).init(&mut data);
        let fd = match method {
            Method::Write => None,
            _ => {
                // SAFETY: memfd_create with a valid C string; the fd is owned from here on.
                let raw =
                    unsafe { libc::memfd_create(c"iolab-reference".as_ptr(), libc::MFD_CLOEXEC) };
                if raw < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // SAFETY: raw is a fresh, valid descriptor.
                let fd = unsafe { OwnedFd::from_raw_fd(raw) };
                write_all(fd.as_raw_fd(), &data).map_err(|_| std::io::Error::last_os_error())?;
                Some(fd)
            }
        };
        Ok(Reference { data, fd, method })
    }

    /// Replace the fd by a file `name` in `dirfd` (copy_file_range cannot cross file
    /// systems on this kernel). The file lives in the run's directory and goes with it.
    pub fn move_to_dir(&mut self, dirfd: RawFd, name: &CStr) -> std::io::Result<()> {
        // SAFETY: valid dirfd and C string.
        let raw = unsafe {
            libc::openat(
                dirfd,
                name.as_ptr(),
                libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC | libc::O_NOFOLLOW,
                0o600,
            )
        };
        if raw < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: fresh descriptor.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        write_all(fd.as_raw_fd(), &self.data).map_err(|_| std::io::Error::last_os_error())?;
        self.fd = Some(fd);
        Ok(())
    }
}

/// Try one copy_file_range(2) of a byte from `src` into a probe file `name` in `dirfd`
/// (removed again); `Err` when the kernel refuses this pair of file systems.
pub fn probe_copy_file_range(src: RawFd, dirfd: RawFd, name: &CStr) -> std::io::Result<()> {
    const CREATE: i32 =
        libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC | libc::O_NOFOLLOW;
    // SAFETY: valid dirfd and C string.
    let fd = unsafe { libc::openat(dirfd, name.as_ptr(), CREATE, 0o600) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fresh descriptor, owned (closed on drop).
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut off: libc::loff_t = 0;
    // SAFETY: valid fds, local offset.
    let n = unsafe {
        libc::copy_file_range(src, &mut off, owned.as_raw_fd(), std::ptr::null_mut(), 1, 0)
    };
    let r = if n == 1 {
        Ok(())
    } else if n < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Err(std::io::Error::other("copy_file_range copied nothing"))
    };
    drop(owned);
    // SAFETY: valid dirfd and C string.
    unsafe { libc::unlinkat(dirfd, name.as_ptr(), 0) };
    r
}

/// write(2) until done; Err on the first failing call (errno is left in place).
#[inline]
fn write_all(fd: RawFd, mut data: &[u8]) -> Result<(), ()> {
    while !data.is_empty() {
        // SAFETY: the slice is valid for its length.
        let n = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
        if n <= 0 {
            return Err(());
        }
        data = &data[n as usize..];
    }
    Ok(())
}

/// Copy `len` bytes of the reference into `dst` with the configured method.
#[inline]
fn fill(dst: RawFd, r: &Reference, len: usize) -> Result<(), &'static str> {
    match (r.method, r.fd.as_ref()) {
        (Method::CopyFileRange, Some(src)) => {
            let mut off: libc::loff_t = 0;
            while (off as usize) < len {
                // SAFETY: valid fds; off is a local the kernel advances.
                let n = unsafe {
                    libc::copy_file_range(
                        src.as_raw_fd(),
                        &mut off,
                        dst,
                        std::ptr::null_mut(),
                        len - off as usize,
                        0,
                    )
                };
                if n <= 0 {
                    return Err("copy_file_range");
                }
            }
            Ok(())
        }
        (Method::Sendfile, Some(src)) => {
            let mut off: libc::off_t = 0;
            while (off as usize) < len {
                // SAFETY: valid fds; off is a local the kernel advances.
                let n =
                    unsafe { libc::sendfile(dst, src.as_raw_fd(), &mut off, len - off as usize) };
                if n <= 0 {
                    return Err("sendfile");
                }
            }
            Ok(())
        }
        _ => write_all(dst, &r.data[..len]).map_err(|_| "write"),
    }
}

/// What one portion took.
#[derive(Debug, Default, Clone, Copy)]
pub struct PortionTiming {
    pub ns: u64,
    /// fsync time inside the portion (`--sync file`), already excluded from `ns`.
    pub sync_ns: u64,
    pub fsyncs: u64,
}

/// Which operation a portion does on each file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Create,
    Stat,
    Read,
    Delete,
}

/// Run `count` files of `op` in `dirfd`, names from `names` (advanced past them).
/// `size` is each file's size; `fsync_each` issues an fsync per created file (timed apart).
#[allow(clippy::too_many_arguments)]
pub fn portion(
    op: Op,
    dirfd: RawFd,
    names: &mut Names,
    count: u64,
    size: usize,
    reference: &Reference,
    readbuf: &mut [u8],
    fsync_each: bool,
    stop: &StopFlag,
) -> Result<PortionTiming, PortionError> {
    const CREATE: i32 =
        libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC | libc::O_NOFOLLOW;
    let mut t = PortionTiming::default();
    let start = Instant::now();
    for _ in 0..count {
        if stop.is_set() {
            return Err(PortionError::Stopped);
        }
        let name = names.current().as_ptr();
        match op {
            Op::Create => {
                // SAFETY: valid dirfd and NUL-terminated name.
                let fd = unsafe { libc::openat(dirfd, name, CREATE, 0o644) };
                if fd < 0 {
                    return Err(PortionError::from_errno("create"));
                }
                if size > 0
                    && let Err(what) = fill(fd, reference, size)
                {
                    let e = PortionError::from_errno(what);
                    // SAFETY: fd is ours.
                    unsafe { libc::close(fd) };
                    return Err(e);
                }
                if fsync_each {
                    let s = Instant::now();
                    // SAFETY: fd is ours.
                    let rc = unsafe { libc::fsync(fd) };
                    t.sync_ns += s.elapsed().as_nanos() as u64;
                    t.fsyncs += 1;
                    if rc != 0 {
                        let e = PortionError::from_errno("fsync");
                        // SAFETY: fd is ours.
                        unsafe { libc::close(fd) };
                        return Err(e);
                    }
                }
                // SAFETY: fd is ours. close can report delayed write errors (NFS, quota).
                if unsafe { libc::close(fd) } != 0 {
                    return Err(PortionError::from_errno("close"));
                }
            }
            Op::Stat => {
                // SAFETY: zeroed stat is a valid out-parameter.
                let mut st: libc::stat = unsafe { std::mem::zeroed() };
                // SAFETY: valid pointers.
                if unsafe { libc::fstatat(dirfd, name, &mut st, libc::AT_SYMLINK_NOFOLLOW) } != 0 {
                    return Err(PortionError::from_errno("stat"));
                }
                if st.st_size as u64 != size as u64 {
                    return Err(PortionError::Mismatch {
                        expected: size as u64,
                        found: st.st_size as u64,
                    });
                }
            }
            Op::Read => {
                let flags = libc::O_RDONLY | libc::O_CLOEXEC | libc::O_NOFOLLOW;
                // SAFETY: valid dirfd and name.
                let fd = unsafe { libc::openat(dirfd, name, flags) };
                if fd < 0 {
                    return Err(PortionError::from_errno("open"));
                }
                let mut total = 0usize;
                loop {
                    // SAFETY: readbuf is valid for its length.
                    let n = unsafe { libc::read(fd, readbuf.as_mut_ptr().cast(), readbuf.len()) };
                    if n < 0 {
                        let e = PortionError::from_errno("read");
                        // SAFETY: fd is ours.
                        unsafe { libc::close(fd) };
                        return Err(e);
                    }
                    if n == 0 {
                        break;
                    }
                    total += n as usize;
                }
                // SAFETY: fd is ours.
                unsafe { libc::close(fd) };
                if total != size {
                    return Err(PortionError::Mismatch {
                        expected: size as u64,
                        found: total as u64,
                    });
                }
            }
            Op::Delete => {
                // SAFETY: valid dirfd and name.
                if unsafe { libc::unlinkat(dirfd, name, 0) } != 0 {
                    return Err(PortionError::from_errno("unlink"));
                }
            }
        }
        names.advance();
    }
    t.ns = (start.elapsed().as_nanos() as u64).saturating_sub(t.sync_ns);
    Ok(t)
}

/// syncfs(2) on the file system of `fd`, timed.
pub fn syncfs_timed(fd: RawFd) -> Result<u64, PortionError> {
    let s = Instant::now();
    // SAFETY: valid fd.
    if unsafe { libc::syncfs(fd) } != 0 {
        return Err(PortionError::from_errno("syncfs"));
    }
    Ok(s.elapsed().as_nanos() as u64)
}

/// One big file of `len` bytes in 1 MiB sequential writes; returns (write ns, sync ns).
pub fn big_file(
    dirfd: RawFd,
    name: &CStr,
    len: u64,
    chunk: &[u8],
    fsync: bool,
    stop: &StopFlag,
) -> Result<(u64, u64), PortionError> {
    const CREATE: i32 =
        libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC | libc::O_NOFOLLOW;
    let start = Instant::now();
    // SAFETY: valid dirfd and name.
    let fd = unsafe { libc::openat(dirfd, name.as_ptr(), CREATE, 0o644) };
    if fd < 0 {
        return Err(PortionError::from_errno("create"));
    }
    // SAFETY: fd is fresh and ours from here on (closed on drop).
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut left = len;
    while left > 0 {
        if stop.is_set() {
            return Err(PortionError::Stopped);
        }
        let n = left.min(chunk.len() as u64) as usize;
        write_all(owned.as_raw_fd(), &chunk[..n]).map_err(|_| PortionError::from_errno("write"))?;
        left -= n as u64;
    }
    let write_ns = start.elapsed().as_nanos() as u64;
    let mut sync_ns = 0;
    if fsync {
        let s = Instant::now();
        // SAFETY: valid fd.
        if unsafe { libc::fsync(owned.as_raw_fd()) } != 0 {
            return Err(PortionError::from_errno("fsync"));
        }
        sync_ns = s.elapsed().as_nanos() as u64;
    }
    Ok((write_ns, sync_ns))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_count_in_place() {
        let mut n = Names::new(2_000_000, 999_998);
        assert_eq!(n.as_str(), "0999998");
        n.advance();
        assert_eq!(n.as_str(), "0999999");
        n.advance();
        assert_eq!(n.as_str(), "1000000");
        assert_eq!(n.current().to_bytes(), b"1000000");
        let small = Names::new(10, 3);
        assert_eq!(small.as_str(), "000003");
    }
}

//! One iolab run per target: a lock file (`.iolab.lock`, flock) in the target directory, or
//! in the system's run directory for a device/file target. A second run on the same target
//! refuses with a clear message instead of mixing its I/O into the first one's results.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use crate::error::UsageError;

/// Held for the whole run; released (and the file removed) on drop.
#[derive(Debug)]
pub struct TargetLock {
    path: PathBuf,
    _file: File,
}

/// Where the lock of `target` lives.
fn lock_path(target: &Path) -> PathBuf {
    if target.is_dir() {
        target.join(".iolab.lock")
    } else {
        // Devices and files: a lock named after the canonical path, outside the target.
        let canon = std::fs::canonicalize(target).unwrap_or_else(|_| target.to_path_buf());
        let name: String = canon
            .display()
            .to_string()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let dir = if Path::new("/run/lock").is_dir() {
            "/run/lock"
        } else {
            "/tmp"
        };
        Path::new(dir).join(format!("iolab{name}.lock"))
    }
}

impl TargetLock {
    pub fn acquire(target: &Path) -> Result<TargetLock, UsageError> {
        let path = lock_path(target);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| {
                // In the target itself: then iolab cannot make its files there either
                // (`--target /proc` said only "No such file or directory").
                let why = match target.is_dir() {
                    true => format!(
                        "{}: iolab cannot create files there (its lock file {}: {e}); give a directory on a writable file system",
                        target.display(),
                        path.display()
                    ),
                    false => format!("cannot create the lock file {}: {e}", path.display()),
                };
                UsageError::new(why)
            })?;
        // SAFETY: flock on an fd we own.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            return Err(UsageError::new(format!(
                "another iolab run is using {} ({}); wait for it or choose another target",
                target.display(),
                holder.trim()
            )));
        }
        let _ = file.set_len(0);
        let _ = file.rewind();
        let _ = write!(file, "pid {}", std::process::id());
        crate::fs::guard::register_created_file(&path);
        Ok(TargetLock { path, _file: file })
    }
}

/// Refuse `target` when another iolab run holds its lock, without taking it: for checks that
/// read the target's state before the lock is taken (how full it is), whose refusal would
/// otherwise blame the other run's files ("do not fit") instead of the other run.
pub fn refuse_if_in_use(target: &Path) -> Result<(), UsageError> {
    let Ok(mut file) = File::open(lock_path(target)) else {
        return Ok(());
    };
    // SAFETY: flock on an fd we own; a shared lock is refused while a run holds its
    // exclusive one, and released when `file` is closed.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) };
    if rc == 0 {
        return Ok(());
    }
    let mut holder = String::new();
    let _ = file.read_to_string(&mut holder);
    Err(UsageError::new(format!(
        "another iolab run is using {} ({}); wait for it or choose another target",
        target.display(),
        holder.trim()
    )))
}

impl Drop for TargetLock {
    fn drop(&mut self) {
        crate::fs::guard::remove_or_report(&self.path);
        crate::fs::guard::unregister_created_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_is_refused_and_released_on_drop() {
        let d = tempfile::tempdir().unwrap();
        let a = TargetLock::acquire(d.path()).unwrap();
        let e = TargetLock::acquire(d.path()).unwrap_err();
        assert!(e.to_string().contains("another iolab run"), "{e}");
        assert!(
            e.to_string()
                .contains(&format!("pid {}", std::process::id())),
            "{e}"
        );
        // Asked without taking it: refused while held, and the holder keeps it.
        let e = refuse_if_in_use(d.path()).unwrap_err();
        assert!(e.to_string().contains("another iolab run"), "{e}");
        assert!(TargetLock::acquire(d.path()).is_err());
        drop(a);
        assert!(!d.path().join(".iolab.lock").exists());
        assert!(refuse_if_in_use(d.path()).is_ok());
        let _b = TargetLock::acquire(d.path()).unwrap();
    }
}

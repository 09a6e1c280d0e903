//! Ownership of what iolab creates. Every created file is registered here so that cleanup
//! (on success, error, panic or signal) removes exactly those paths and nothing else.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

static CREATED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Remember a file iolab created (removed by `cleanup_all` if still there).
pub fn register_created_file(path: &Path) {
    if let Ok(mut v) = CREATED.lock() {
        v.push(path.to_path_buf());
    }
    // On disk too, for the next start after a SIGKILL.
    crate::fs::registry::record(path);
}

pub fn unregister_created_file(path: &Path) {
    if let Ok(mut v) = CREATED.lock() {
        v.retain(|p| p != path);
    }
    crate::fs::registry::forget(path);
}

/// Remove every registered file still present (used on the error and signal paths).
pub fn cleanup_all() -> Vec<PathBuf> {
    let paths: Vec<PathBuf> = CREATED
        .lock()
        .map(|mut v| std::mem::take(&mut *v))
        .unwrap_or_default();
    let mut removed = Vec::new();
    for p in paths {
        // Never follow a symlink planted in place of our file.
        if let Ok(md) = std::fs::symlink_metadata(&p)
            && md.file_type().is_file()
            && std::fs::remove_file(&p).is_ok()
        {
            crate::fs::registry::forget(&p);
            removed.push(p);
        }
    }
    removed
}

/// Remove a file iolab created; if it cannot (a file system turned read-only, a dead device),
/// say so on stderr, so nothing of iolab's is left behind silently. A file already gone is fine.
pub fn remove_or_report(path: &Path) {
    crate::fs::registry::report_unremoved(path, std::fs::remove_file(path));
}

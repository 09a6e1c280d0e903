//! `--device X --allow-destroy X`: the refusals that keep the matrix off anything in use.

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use crate::cli::checks::err;
use crate::error::UsageError;

/// Is `dev` (canonical) listed in /proc/swaps?
fn is_swap(dev: &Path) -> bool {
    std::fs::read_to_string("/proc/swaps")
        .map(|s| {
            s.lines().skip(1).any(|l| {
                l.split_whitespace()
                    .next()
                    .and_then(|p| std::fs::canonicalize(p).ok())
                    .is_some_and(|p| p == dev)
            })
        })
        .unwrap_or(false)
}

/// Check `--device` may be formatted: a block device, named identically by
/// `--allow-destroy`, not mounted, not holding a mounted file system or swap.
pub fn check_device(dev: &Path, allow: Option<&Path>) -> Result<PathBuf, UsageError> {
    let md = std::fs::metadata(dev).map_err(|e| err(format!("--device {}: {e}", dev.display())))?;
    if !md.file_type().is_block_device() {
        return Err(err(format!(
            "--device {}: not a block device (use --image-dir for image files)",
            dev.display()
        )));
    }
    let Some(allow) = allow else {
        return Err(err(format!(
            "--device {d} erases everything on it for every configuration: add --allow-destroy {d}",
            d = dev.display()
        )));
    };
    if !crate::fs::facts::allow_destroy_matches(Some(allow), dev) {
        return Err(err(format!(
            "--allow-destroy {} does not name --device {}; both must be the same device",
            allow.display(),
            dev.display()
        )));
    }
    let canon = std::fs::canonicalize(dev).map_err(|e| err(format!("{}: {e}", dev.display())))?;
    if let Some(user) = crate::fs::facts::device_in_use(&canon) {
        return Err(err(format!(
            "--device {} is in use ({user}); refusing to format it",
            dev.display()
        )));
    }
    if is_swap(&canon) {
        return Err(err(format!(
            "--device {} is active swap; refusing to format it",
            dev.display()
        )));
    }
    Ok(canon)
}

pub use crate::fs::facts::device_size;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_and_missing_confirmation_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("disk.img");
        std::fs::write(&f, b"x").unwrap();
        let e = check_device(&f, Some(&f)).unwrap_err().to_string();
        assert!(e.contains("not a block device"), "{e}");
        let e = check_device(Path::new("/nonexistent-iolab"), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("/nonexistent-iolab"), "{e}");
    }
}

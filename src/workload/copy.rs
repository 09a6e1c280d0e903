//! The `copy` workload family: `iolab copy` options checked into a `CopyConfig` (every bad
//! input is a `UsageError` before anything is created), and the `copy:...` workload the
//! matrix runs. The data sets live in `copy/dataset.rs`, the copy methods in
//! `copy/copier.rs`, integrity in `copy/verify.rs`, the phases in `copy/phases.rs`.

pub mod copier;
pub mod dataset;
pub mod phases;
mod portage;
mod results;
pub mod sharing;
pub mod tree;
pub mod verify;

use std::path::PathBuf;

use crate::error::UsageError;
use crate::stats::repeat::RepeatMode;
use copier::CopyOpts;
use dataset::Plan;

/// The phases, in the order they run.
pub const PHASES: [&str; 4] = ["write", "read", "copy", "delete"];

/// Which phases are measured (the write itself always happens: the others need the tree).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Phases {
    pub write: bool,
    pub read: bool,
    pub copy: bool,
    pub delete: bool,
}

impl Phases {
    pub fn parse(s: &str) -> Result<Phases, UsageError> {
        let mut p = Phases::default();
        let mut seen = std::collections::BTreeSet::new();
        for item in s.split(',').map(str::trim).filter(|x| !x.is_empty()) {
            if !seen.insert(item) {
                return Err(UsageError::new(format!(
                    "--phases: '{item}' is listed twice (each phase runs once per run)"
                )));
            }
            match item {
                "write" => p.write = true,
                "read" => p.read = true,
                "copy" => p.copy = true,
                "delete" => p.delete = true,
                other => {
                    return Err(UsageError::new(format!(
                        "--phases: unknown phase '{other}' (known: {})",
                        PHASES.join(", ")
                    )));
                }
            }
        }
        if p == Phases::default() {
            return Err(UsageError::new(format!(
                "--phases '{s}': name at least one of {}",
                PHASES.join(", ")
            )));
        }
        Ok(p)
    }
}

/// The options that do not depend on the target (checked early, also by the matrix).
#[derive(Debug, Clone)]
pub struct CopySettings {
    /// Data-set name, or `source` for a user's tree.
    pub dataset: String,
    /// The user's tree (canonical), read-only.
    pub source: Option<PathBuf>,
    pub seed: u64,
    pub scale: f64,
    pub phases: Phases,
    pub opts: CopyOpts,
    pub verify: Option<HashKind>,
    pub ceiling: bool,
    pub repeat: RepeatMode,
    pub ram_dir: PathBuf,
}

/// A validated `iolab copy`.
#[derive(Debug, Clone)]
pub struct CopyConfig {
    pub settings: CopySettings,
    /// Canonical target directory.
    pub target: PathBuf,
    pub plan: Plan,
    /// Entries of a `--source` that are neither files nor directories (symlinks, devices).
    pub skipped_entries: u64,
    /// `--json`, `--output`, `--no-save`, `--quiet`.
    pub out: crate::model::Delivery,
}

impl CopySettings {
    /// Does the run need a second RAM copy (the read-back or the ceiling)?
    pub fn needs_ram_back(&self) -> bool {
        self.phases.read || self.ceiling
    }
}

/// Is this (mount) file-system type FAT (whose files stop at 4 GiB - 1)?
pub fn is_fat(fs_type: &str) -> bool {
    matches!(fs_type, "vfat" | "msdos" | "fat" | "fuse.fusefat")
}

/// How file contents are moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyMethod {
    /// What GNU cp 9 does: copy_file_range(2), falling back to read/write with --buffer
    /// where the kernel refuses it (across file systems: EXDEV). Within one xfs or btrfs
    /// the kernel shares the extents (reflink) instead of copying: the copy phase says so.
    Auto,
    /// read(2) into a buffer, write(2) it out (what GNU cp does across file systems).
    Rw,
    /// copy_file_range(2): the kernel copies (falls back to rw where refused, e.g. EXDEV).
    CopyFileRange,
    /// sendfile(2) from the source file to the destination file.
    Sendfile,
}

impl CopyMethod {
    pub fn name(self) -> &'static str {
        match self {
            CopyMethod::Auto => "auto",
            CopyMethod::Rw => "rw",
            CopyMethod::CopyFileRange => "copy_file_range",
            CopyMethod::Sendfile => "sendfile",
        }
    }
}

/// Hash used by `--verify`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HashKind {
    /// XXH3 128-bit: fast, non-cryptographic.
    Xxh3,
    /// BLAKE3: cryptographic, still fast.
    Blake3,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_parse() {
        let p = Phases::parse("write, delete").unwrap();
        assert!(p.write && p.delete && !p.read && !p.copy);
        assert!(Phases::parse("write,move").unwrap_err().0.contains("move"));
        assert!(Phases::parse(",").is_err());
        // Accepted before, and it ran one write.
        let e = Phases::parse("write,write").unwrap_err().0;
        assert!(e.contains("'write' is listed twice"), "{e}");
    }

    #[test]
    fn fat_types() {
        assert!(is_fat("vfat") && is_fat("fuse.fusefat"));
        assert!(!is_fat("exfat") && !is_fat("fuseblk"));
    }
}

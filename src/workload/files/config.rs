//! A validated `iolab files`: what a run creates and how. Checked and resolved against the
//! target (allocation unit, free space, free inodes) in config/files.rs.

use std::path::PathBuf;

use crate::error::UsageError;
use crate::stats::repeat::RepeatMode;

use super::sizes::FileSize;
use super::{Layout, Method, SyncMode};

/// Which phases after create are timed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Phases {
    pub stat: bool,
    pub read: bool,
    pub delete: bool,
}

impl Phases {
    pub fn parse(list: &str) -> Result<Phases, UsageError> {
        let mut p = Phases::default();
        let mut create = false;
        let mut seen = std::collections::BTreeSet::new();
        for tok in list.split(',').map(str::trim) {
            if !seen.insert(tok) {
                return Err(UsageError::new(format!(
                    "--phases: '{tok}' is listed twice (each phase runs once per portion)"
                )));
            }
            match tok {
                "create" => create = true,
                "stat" => p.stat = true,
                "read" => p.read = true,
                "delete" => p.delete = true,
                other => {
                    return Err(UsageError::new(format!(
                        "--phases: unknown phase '{other}' (known: create, stat, read, delete)"
                    )));
                }
            }
        }
        if !create {
            return Err(UsageError::new(
                "--phases must include create (the other phases work on the created files)",
            ));
        }
        Ok(p)
    }
}

/// Everything a files run needs, validated.
#[derive(Debug, Clone)]
pub struct FilesConfig {
    pub target: PathBuf,
    pub sizes: Vec<FileSize>,
    pub alloc_unit: u64,
    pub files_per_portion: u64,
    pub portions: u64,
    pub passes: u64,
    pub repeat: RepeatMode,
    pub method: Method,
    pub sync: SyncMode,
    pub layout: Layout,
    pub phases: Phases,
    pub big: Option<u64>,
    pub cpu: Option<usize>,
    pub nice: bool,
    pub drop_caches: bool,
    pub keep_files: bool,
    /// Writers at once (`--jobs`), each in its own directory tree unless `shared_dir`.
    pub jobs: u32,
    /// `--shared-dir`: the writers create their files in the same directories (mdtest's
    /// shared-directory mode), each under its own file names.
    pub shared_dir: bool,
    /// Set by `--jobs` on each writer's own copy of a `--shared-dir` config: which writer
    /// this is, of how many. `target` is then the shared directory (opened, not created).
    pub writer: Option<Writer>,
    /// `--json`, `--output`, `--no-save`, `--quiet`.
    pub out: crate::model::Delivery,
}

/// One of the writers of a `--jobs N --shared-dir` run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Writer {
    pub index: u64,
    pub of: u64,
}

impl FilesConfig {
    /// Files created per run (per size).
    pub fn files_per_run(&self) -> u64 {
        self.files_per_portion * self.portions * self.passes
    }

    /// Directories created per run.
    pub fn dirs_per_run(&self) -> u64 {
        match self.layout {
            Layout::Flat => 1,
            Layout::PerPass => self.passes,
            Layout::PerPortion => self.passes * self.portions,
        }
    }

    /// Bytes one run of `size` occupies at least: whole allocation units per file, plus a
    /// directory block per 64 files. With --keep every run stays, so all add up.
    /// Saturating: a huge `--sizes` (up to 16 EiB) times the file count needs "more than
    /// there is", not an overflow.
    pub fn bytes_needed(&self) -> u64 {
        let unit = self.alloc_unit.max(1);
        let dir_bytes = (self.files_per_run() / 64 + self.dirs_per_run()).saturating_mul(unit);
        let per_size = |bytes: u64| {
            self.files_per_run()
                .saturating_mul(bytes.div_ceil(unit).saturating_mul(unit))
                .saturating_add(dir_bytes)
        };
        let runs = self.repeat.max_runs() as u64;
        let files = if self.keep_files {
            self.sizes.iter().fold(0u64, |t, s| {
                t.saturating_add(per_size(s.bytes).saturating_mul(runs))
            })
        } else {
            self.sizes
                .iter()
                .map(|s| per_size(s.bytes))
                .max()
                .unwrap_or(0)
        };
        files
            .saturating_mul(u64::from(self.jobs.max(1)))
            .max(self.big.unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_parse() {
        let p = Phases::parse("create,read").unwrap();
        assert!(p.read && !p.stat && !p.delete);
        assert!(Phases::parse("stat").is_err());
        assert!(Phases::parse("create,ls").is_err());
    }
}

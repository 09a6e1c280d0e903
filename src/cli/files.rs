//! `iolab files` arguments: the small-file tester (Belov's method).
//!
//! `iolab files` options checked and resolved against the target (allocation unit, free
//! space, free inodes) before anything is created: every refusal is a `UsageError`.

use crate::error::UsageError;
use crate::units::size_arg;
use crate::workload::files::config::{FilesConfig, Phases};
use crate::workload::files::sizes::{alloc_unit, parse_sizes};
pub use crate::workload::files::{FilesPreset, Layout, Method, SyncMode};
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Args)]
pub struct FilesArgs {
    /// Directory to test in. iolab works in its own subdirectory there and removes exactly
    /// what it created. Also taken as a word: `iolab files /mnt/test`.
    #[arg(long, short = 't', value_name = "DIR", default_value = ".")]
    pub target: PathBuf,

    /// The target as a word, the same as -t/--target.
    #[arg(value_name = "DIR", conflicts_with = "target")]
    pub target_pos: Option<PathBuf>,

    /// The allocation unit when the caller knows it better than statvfs (the matrix reads it
    /// back from the file system it made: fusefat reports 1 KiB blocks whatever the cluster).
    #[arg(skip)]
    pub alloc_unit: Option<u64>,

    /// Counts preset [default: quick]; --files-per-portion, --portions and --passes
    /// override it. Both presets run 3 times (--repeat).
    #[arg(long, value_enum)]
    pub preset: Option<FilesPreset>,

    /// Comma-separated file sizes: bytes (`0` = empty files, `1`), sizes (`512,1K,...,64K`)
    /// and tokens of the target's allocation unit (`cluster`, `cluster+1`, `2cluster`,
    /// `cluster-1`).
    #[arg(
        long,
        allow_hyphen_values = true,
        value_name = "LIST",
        default_value = "1,cluster,cluster+1,64K"
    )]
    pub sizes: String,

    /// Writers at once (threads), each in its own directory, as mdtest's unique-directory
    /// mode on one host: every phase starts on all of them together (a barrier) and stops
    /// when the first has done its portions (stonewall); totals over the common window and
    /// the spread between the writers are reported. The counts are per writer.
    #[arg(
        long,
        allow_negative_numbers = true,
        default_value_t = 1,
        value_name = "N"
    )]
    pub jobs: u32,

    /// With --jobs: all writers create their files in the same directories (mdtest's
    /// shared-directory mode; with --layout flat, one directory for everyone) instead of a
    /// directory tree each; every writer has its own file names.
    #[arg(long)]
    pub shared_dir: bool,

    /// Files per portion (each portion is timed on its own).
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub files_per_portion: Option<u64>,

    /// Portions per pass.
    #[arg(long, allow_negative_numbers = true, value_name = "P")]
    pub portions: Option<u64>,

    /// Passes per run.
    #[arg(long, allow_negative_numbers = true, value_name = "K")]
    pub passes: Option<u64>,

    #[command(flatten)]
    pub repeat: super::run::RepeatArgs,

    /// Copy method.
    #[arg(long, value_enum, default_value = "write")]
    pub method: Method,

    /// Add Belov's "one big file" column: one file of SIZE per run, written in 1 MiB
    /// sequential writes.
    #[arg(long, allow_hyphen_values = true, value_parser = size_arg, value_name = "SIZE")]
    pub big: Option<u64>,

    /// Durability: none, file (fsync each), portion (syncfs each), end (one syncfs).
    #[arg(long, value_enum, default_value = "end")]
    pub sync: SyncMode,

    /// Directory layout.
    #[arg(long, value_enum, default_value = "flat")]
    pub layout: Layout,

    /// Timed phases, comma-separated, of: create (always), stat, read, delete. They run in
    /// that order, whatever the order given.
    #[arg(long, value_name = "LIST", default_value = "create,stat,read,delete")]
    pub phases: String,

    /// Pin the measuring thread to CPU N (sched_setaffinity).
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub cpu: Option<usize>,

    /// Raise iolab's priority (nice -10) when permitted; a warning otherwise.
    #[arg(long)]
    pub nice: bool,

    /// Drop the page cache between phases (root only; a warning otherwise).
    #[arg(long)]
    pub drop_caches: bool,

    /// Keep the created files (their directory is printed at the end) instead of removing
    /// them; --phases must not hold delete. (Also --keep-files, its former name.)
    #[arg(long = "keep", alias = "keep-files")]
    pub keep_files: bool,

    /// Skip the free-space and free-inode estimate: run until the file system is full
    /// (ENOSPC then stops the run cleanly with the portions measured so far).
    #[arg(long)]
    pub no_room_check: bool,

    #[command(flatten)]
    pub out: super::OutputArgs,
}

/// The checks of `iolab files` that need no target: a matrix `files:` reference gets them
/// before anything is formatted (a bad one was a runtime failure after every mkfs).
pub fn check_without_target(a: &FilesArgs) -> Result<(), UsageError> {
    counts(a)?;
    crate::workload::files::sizes::check_sizes_syntax(&a.sizes)?;
    crate::cli::run::repeat_mode(&a.repeat).map_err(UsageError::new)?;
    check_options(a)?;
    Ok(())
}

/// Files per portion, portions and passes: each at least 1, at most 10^10 files a run.
pub fn counts(a: &FilesArgs) -> Result<(u64, u64, u64), UsageError> {
    let (n, p, k) = match a.preset.unwrap_or(FilesPreset::Quick) {
        FilesPreset::Quick => (500, 5, 2),
        FilesPreset::Full => (10_000, 20, 16),
    };
    let count = |v: Option<u64>, d: u64, flag: &str| -> Result<u64, UsageError> {
        match v.unwrap_or(d) {
            0 => Err(UsageError::new(format!("{flag} 0: at least 1 is needed"))),
            x => Ok(x),
        }
    };
    let files_per_portion = count(a.files_per_portion, n, "--files-per-portion")?;
    let portions = count(a.portions, p, "--portions")?;
    let passes = count(a.passes, k, "--passes")?;
    files_per_portion
        .checked_mul(portions)
        .and_then(|x| x.checked_mul(passes))
        .filter(|&x| x < 10_000_000_000)
        .ok_or_else(|| UsageError::new("too many files per run (at most 10^10)"))?;
    Ok((files_per_portion, portions, passes))
}

/// --big, --phases, --keep, --jobs and --shared-dir, checked together.
fn check_options(a: &FilesArgs) -> Result<Phases, UsageError> {
    if a.big == Some(0) {
        return Err(UsageError::new("--big 0: the big file needs a size"));
    }
    let phases = Phases::parse(&a.phases)?;
    if a.keep_files && phases.delete {
        return Err(UsageError::new(
            "--keep keeps the files, so --phases cannot hold delete (all four phases run by default): give --phases create,stat,read",
        ));
    }
    if a.jobs == 0 || a.jobs > 1024 {
        return Err(UsageError::new(format!(
            "--jobs {}: give 1 to 1024 writers",
            a.jobs
        )));
    }
    if a.jobs > 1 && (a.big.is_some() || a.keep_files) {
        return Err(UsageError::new(
            "--jobs runs the small-file phases only: leave out --big and --keep",
        ));
    }
    if a.shared_dir && a.jobs < 2 {
        return Err(UsageError::new(
            "--shared-dir puts several writers in the same directories: give --jobs 2 or more",
        ));
    }
    Ok(phases)
}

impl FilesConfig {
    pub fn from_args(a: &FilesArgs) -> Result<FilesConfig, UsageError> {
        let target = check_target(&a.target)?;
        let (files_per_portion, portions, passes) = counts(a)?;
        let repeat = crate::cli::run::repeat_mode(&a.repeat).map_err(UsageError::new)?;
        let unit = a
            .alloc_unit
            .or_else(|| alloc_unit(&target))
            .ok_or_else(|| {
                UsageError::new(format!(
                    "cannot read the allocation unit of {} (statvfs failed)",
                    target.display()
                ))
            })?;
        let sizes = parse_sizes(&a.sizes, unit)?;
        let phases = check_options(a)?;
        if let Some(c) = a.cpu {
            let n = std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1);
            let allowed = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0))
                .map(|s| s.is_set(c).unwrap_or(false))
                .unwrap_or(c < n);
            if !allowed {
                return Err(UsageError::new(format!(
                    "--cpu {c}: not a CPU this process may run on"
                )));
            }
        }
        let cfg = FilesConfig {
            target,
            sizes,
            alloc_unit: unit,
            files_per_portion,
            portions,
            passes,
            repeat,
            method: a.method,
            sync: a.sync,
            layout: a.layout,
            phases,
            big: a.big,
            cpu: a.cpu,
            nice: a.nice,
            drop_caches: a.drop_caches,
            keep_files: a.keep_files,
            jobs: a.jobs,
            shared_dir: a.shared_dir,
            writer: None,
            out: a.out.delivery(),
        };
        if !a.no_room_check {
            cfg.check_room()?;
        }
        Ok(cfg)
    }

    /// The room check of `ranks` ranks that each make these files in their own directory of
    /// the target (a distributed run: on a shared file system they all take from the same
    /// space, as `dist::session::per_rank_size` has it for a block test's files).
    #[cfg(feature = "mpi")]
    pub(crate) fn check_room_of_ranks(&self, ranks: u32) -> Result<(), UsageError> {
        let all = FilesConfig {
            jobs: self.jobs.max(1).saturating_mul(ranks.max(1)),
            ..self.clone()
        };
        all.check_room().map_err(|e| {
            UsageError::new(format!("{ranks} ranks, each making its own files: {}", e.0))
        })
    }

    fn check_room(&self) -> Result<(), UsageError> {
        let st = nix::sys::statvfs::statvfs(&self.target).map_err(|e| {
            UsageError::new(format!("{}: statvfs failed: {e}", self.target.display()))
        })?;
        let free = st.blocks_available() as u64 * st.fragment_size() as u64;
        let need = self.bytes_needed();
        if need > free {
            // Each writer (`--jobs`, or a distributed run's ranks) makes files_per_run files.
            let per_writer = crate::units::fmt_thousands(self.files_per_run() as f64);
            let files = match self.jobs.max(1) {
                1 => per_writer,
                n => format!("{n} x {per_writer}"),
            };
            return Err(UsageError::new(format!(
                "{}: not enough room: the largest run needs about {} ({files} files of up to {} in {} units), {} free; use fewer or smaller files (or --no-room-check to run until full)",
                self.target.display(),
                crate::units::fmt_size_iec(need),
                crate::units::fmt_size_exact(self.sizes.iter().map(|s| s.bytes).max().unwrap_or(0)),
                crate::units::fmt_size_exact(self.alloc_unit),
                crate::units::fmt_size_iec(free)
            )));
        }
        // Some file systems (btrfs, some FUSE) report no inode limit: nothing to check.
        let runs = if self.keep_files {
            self.sizes.len() as u64 * self.repeat.max_runs() as u64
        } else {
            1
        };
        let inodes =
            (self.files_per_run() + self.dirs_per_run() + 2) * runs * u64::from(self.jobs.max(1));
        if st.files() > 0 && inodes > st.files_available() as u64 {
            return Err(UsageError::new(format!(
                "{}: more files than free inodes: a run creates {} files and directories, {} inodes are free",
                self.target.display(),
                crate::units::fmt_thousands(inodes as f64),
                crate::units::fmt_thousands(st.files_available() as f64)
            )));
        }
        Ok(())
    }
}

/// The target must exist, be a directory, and be writable (checked with access(2), so
/// nothing is created to find out).
fn check_target(t: &Path) -> Result<PathBuf, UsageError> {
    super::checks::refuse_deleted_dir(t)?;
    crate::fs::facts::check_work_dir(t)?;
    std::fs::canonicalize(t).map_err(|e| {
        UsageError::new(format!(
            "--target {}: {}",
            t.display(),
            crate::fs::facts::io_why(&e)
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `iolab files --keep` said "--phases cannot hold delete" to a user who gave no
    /// --phases: the default holds it, and the refusal says what to give instead.
    #[test]
    fn keep_says_which_phases_to_give() {
        use clap::Parser;
        let cli = crate::cli::Cli::try_parse_from(["iolab", "files", "--keep"]).unwrap();
        let crate::cli::Command::Files(a) = cli.command else {
            panic!("not files");
        };
        let e = check_options(&a).unwrap_err().0;
        assert!(
            e.ends_with("(all four phases run by default): give --phases create,stat,read"),
            "{e}"
        );
    }
}

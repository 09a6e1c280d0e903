//! `iolab files` arguments: the small-file tester (Belov's method).

use std::path::PathBuf;

use clap::Args;

use crate::units::size_arg;

pub use crate::workload::files::{FilesPreset, Layout, Method, SyncMode};

#[derive(Debug, Clone, Args)]
pub struct FilesArgs {
    /// Directory to test in. iolab works in its own subdirectory there and removes exactly
    /// what it created.
    #[arg(long, short = 't', value_name = "DIR", default_value = ".")]
    pub target: PathBuf,

    /// Counts preset [default: quick]; --files-per-portion, --portions and --passes
    /// override it. Both presets run 3 times (--repeat).
    #[arg(long, value_enum)]
    pub preset: Option<FilesPreset>,

    /// Comma-separated file sizes: bytes (`0` = empty files, `1`), sizes (`512,1K,...,64K`)
    /// and tokens of the target's allocation unit (`cluster`, `cluster+1`, `2cluster`,
    /// `cluster-1`).
    #[arg(long, value_name = "LIST", default_value = "1,cluster,cluster+1,64K")]
    pub sizes: String,

    /// Writers at once (threads), each in its own directory, as mdtest's unique-directory
    /// mode on one host: every phase starts on all of them together (a barrier) and stops
    /// when the first has done its portions (stonewall); totals over the common window and
    /// the spread between the writers are reported. The counts are per writer.
    #[arg(long, default_value_t = 1, value_name = "N")]
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

    /// Timed phases, comma-separated, in this order: create (always), stat, read, delete.
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

    /// Keep the created files for inspection (debugging); --phases must not hold delete.
    /// The directory is printed at the end.
    #[arg(long)]
    pub keep_files: bool,

    /// Skip the free-space and free-inode estimate: run until the file system is full
    /// (ENOSPC then stops the run cleanly with the portions measured so far).
    #[arg(long)]
    pub no_room_check: bool,

    #[command(flatten)]
    pub out: super::OutputArgs,
}

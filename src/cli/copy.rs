//! `iolab copy` arguments: which data set, where, which phases, how to copy.

use std::path::PathBuf;

use clap::Args;

use crate::units::size_arg;

pub use crate::workload::copy::{CopyMethod, HashKind};

#[derive(Debug, Clone, Args)]
pub struct CopyArgs {
    /// Synthetic data set: media-mix, flac-album, cd-iso, big-video, source-tree,
    /// photo-album, office-docs (`--dataset list` prints them with their sizes).
    #[arg(
        long,
        short = 'd',
        value_name = "NAME",
        default_value = "media-mix",
        conflicts_with = "source"
    )]
    pub dataset: String,

    /// Directory on the file system under test (iolab creates and removes its own
    /// subdirectory there).
    #[arg(long, short = 't', value_name = "DIR", default_value = ".")]
    pub target: PathBuf,

    /// Shrink or grow the data set: file counts and total size scale by F (at least one
    /// file of each kind). Not with --source (your files are copied as they are).
    #[arg(
        long,
        conflicts_with = "source",
        allow_negative_numbers = true,
        value_name = "F",
        default_value_t = 1.0
    )]
    pub scale: f64,

    /// Copy your own files instead of a synthetic set (read-only: never modified; staged
    /// into RAM first).
    #[arg(long, value_name = "DIR")]
    pub source: Option<PathBuf>,

    /// RAM-backed directory (tmpfs) for the data set and the read-back copy
    /// [default: /dev/shm].
    #[arg(long, value_name = "DIR")]
    pub ram_dir: Option<PathBuf>,

    /// Phases, comma-separated, in this order: write, read, copy, delete.
    #[arg(long, value_name = "LIST", default_value = "write,read,copy,delete")]
    pub phases: String,

    /// How file contents are copied.
    #[arg(long, value_enum, default_value = "auto")]
    pub method: CopyMethod,

    /// Buffer of each read/write (rw, and auto where it falls back). The default is GNU
    /// cp's 128 KiB.
    #[arg(long, allow_hyphen_values = true, value_parser = size_arg, value_name = "SIZE", default_value = "128K")]
    pub buffer: u64,

    /// Preserve mode and access/modification times, like `cp -p`.
    #[arg(long)]
    pub preserve: bool,

    /// Hash every file on both sides after each phase; differing files fail the run.
    #[arg(long)]
    pub verify: bool,

    /// Hash for --verify.
    #[arg(long, value_enum, default_value = "xxh3", requires = "verify")]
    pub hash: HashKind,

    /// Also copy the data set RAM -> RAM with the same method: the best any copy could do
    /// on this machine (the reference line of the twelve-file-system copy test).
    #[arg(long)]
    pub ceiling: bool,

    #[command(flatten)]
    pub repeat: super::run::RepeatArgs,

    /// Seed of the synthetic data set (same seed, same files, same bytes). Not with --source.
    #[arg(long, default_value_t = 0x10_1AB, conflicts_with = "source")]
    pub seed: u64,

    /// Only generate the data set into this new directory and exit (to feed other tools
    /// the very same files: cp, rsync, fio).
    #[arg(
        long,
        value_name = "DIR",
        conflicts_with_all = ["source", "target", "phases", "verify", "ceiling", "preserve", "method"]
    )]
    pub generate: Option<PathBuf>,

    /// No progress output.
    #[arg(long, short = 'q')]
    pub quiet: bool,

    #[command(flatten)]
    pub out: super::OutputArgs,
}

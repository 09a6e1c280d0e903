//! `iolab copy` arguments: which data set, where, which phases, how to copy.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::units::size_arg;

/// How file contents are moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CopyMethod {
    /// What GNU cp 9 does: copy_file_range(2), falling back to read/write with --buffer
    /// where the kernel refuses it (across file systems: EXDEV). Within one xfs or btrfs
    /// the kernel shares the extents (reflink) instead of copying: the copy phase says so.
    Auto,
    /// read(2) into a buffer, write(2) it out (what GNU cp does across file systems).
    Rw,
    /// copy_file_range(2): the kernel copies (falls back to rw where refused, e.g. EXDEV).
    #[value(name = "copy_file_range", alias = "cfr")]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HashKind {
    /// XXH3 128-bit: fast, non-cryptographic.
    #[value(name = "xxh3")]
    Xxh3,
    /// BLAKE3: cryptographic, still fast.
    Blake3,
}

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
    /// file of each kind).
    #[arg(
        long,
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
    #[arg(long, value_enum, default_value = "xxh3")]
    pub hash: HashKind,

    /// Also copy the data set RAM -> RAM with the same method: the best any copy could do
    /// on this machine (the reference line of the twelve-file-system copy test).
    #[arg(long)]
    pub ceiling: bool,

    #[command(flatten)]
    pub repeat: super::run::RepeatArgs,

    /// Seed of the synthetic data set (same seed, same files, same bytes).
    #[arg(long, default_value_t = 0x10_1AB)]
    pub seed: u64,

    /// Only generate the data set into this new directory and exit (to feed other tools
    /// the very same files: cp, rsync, fio).
    #[arg(long, value_name = "DIR", conflicts_with = "source")]
    pub generate: Option<PathBuf>,

    /// No progress output.
    #[arg(long, short = 'q')]
    pub quiet: bool,

    #[command(flatten)]
    pub out: super::OutputArgs,
}

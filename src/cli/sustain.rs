//! `iolab sustain` arguments.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::engine::EngineKind;
use crate::units::{duration_arg, size_arg};

/// The order of a sustained write's blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SustainRw {
    /// Sequential, from the start of the span to its end (how a drive's cache size is usually quoted).
    Write,
    /// Every block of the span once, in a random order.
    Randwrite,
}

#[derive(Debug, Clone, Args)]
pub struct SustainArgs {
    /// What to write: a directory (iolab creates and removes its own file there), a block
    /// device (with --allow-destroy DEVICE; never a mounted one) or an existing file (with
    /// --allow-destroy FILE).
    #[arg(value_name = "PATH|DEVICE")]
    pub target: PathBuf,

    /// Bytes to write (the span): 64G, 100GB. Default: 50 % of the free space of a
    /// directory, the whole device, or the existing file.
    #[arg(long, allow_hyphen_values = true, value_parser = size_arg, value_name = "SIZE", conflicts_with = "span")]
    pub size: Option<u64>,

    /// The span as a share of the free space (directory) or of the device or file: `50%`.
    #[arg(long, allow_hyphen_values = true, value_parser = percent_arg, value_name = "PERCENT")]
    pub span: Option<u64>,

    /// Stop the first pass after this time even when the span is not written yet (10m, 90s).
    #[arg(long, allow_hyphen_values = true, value_parser = duration_arg, value_name = "DURATION")]
    pub time: Option<Duration>,

    /// After the first pass, idle for each of these times and write again, to see how much
    /// of the cache came back: `--recovery 30s,2m,10m`.
    #[arg(long, allow_hyphen_values = true, value_parser = duration_arg, value_delimiter = ',', value_name = "DURATION[,DURATION...]")]
    pub recovery: Vec<Duration>,

    /// Sequential (write) or random (randwrite) order of the blocks.
    #[arg(long, value_enum, default_value = "write")]
    pub rw: SustainRw,

    /// Block size of each write.
    #[arg(long, allow_hyphen_values = true, value_parser = size_arg, default_value = "1MiB", value_name = "SIZE")]
    pub bs: u64,

    /// Writes in flight (1..=1024).
    #[arg(
        long,
        allow_negative_numbers = true,
        value_name = "N",
        default_value_t = 8
    )]
    pub iodepth: u32,

    /// I/O engine (uring falls back to sync when io_uring is unavailable, with a warning).
    #[arg(long, value_enum, default_value = "uring")]
    pub engine: EngineKind,

    /// Length of one point of the throughput series the cliffs are found in (whole
    /// milliseconds): 1s for drives, shorter for small spans.
    #[arg(long, allow_hyphen_values = true, value_parser = duration_arg, default_value = "1s", value_name = "DURATION")]
    pub interval: Duration,

    /// Allow writing to this device or existing file (must name the target exactly).
    #[arg(long, value_name = "PATH")]
    pub allow_destroy: Option<PathBuf>,

    /// Seed of the data (same seed, same bytes).
    #[arg(long, default_value_t = 0x10_1AB)]
    pub seed: u64,

    #[command(flatten)]
    pub out: super::OutputArgs,
}

/// `50%` or `50` -> 50 (1..=100).
pub fn percent_arg(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let n = t.strip_suffix('%').unwrap_or(t).trim();
    let v: u64 = n
        .parse()
        .map_err(|_| format!("'{s}' is not a percentage (e.g. 50%)"))?;
    if !(1..=100).contains(&v) {
        return Err(format!("'{s}': a share from 1% to 100%"));
    }
    Ok(v)
}

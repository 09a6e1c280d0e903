//! `iolab saturate` arguments.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::units::{duration_arg, latency_arg, size_arg};

pub use crate::workload::saturate::{Aggregate, Statistic, SweepKind};

#[derive(Debug, Clone, Args)]
pub struct SaturateArgs {
    /// What to measure; repeat for several targets run at the same time (their IOPS and
    /// depths add up). A block device (whole device by default), a directory (iolab creates
    /// and removes its own test file there) or an existing file (with --allow-destroy FILE).
    #[arg(long, short = 't', value_name = "PATH|DEVICE", default_value = ".")]
    pub target: Vec<PathBuf>,

    /// Sweeps to run, comma-separated [default: randread,randwrite,mixed; randread only on
    /// a block device without --allow-destroy].
    #[arg(long, value_enum, value_delimiter = ',')]
    pub rw: Vec<SweepKind>,

    /// The latency limit, with its unit (10ms, 500us, 1s).
    #[arg(long, allow_hyphen_values = true, value_parser = latency_arg, default_value = "10ms", value_name = "DURATION")]
    pub latency_limit: Duration,

    /// The statistic the limit applies to (the table shows all three).
    #[arg(long, value_enum, default_value = "mean")]
    pub on: Statistic,

    /// With several streams (targets, or read + write): limit the worst one (max) or all
    /// I/Os together (mean).
    #[arg(long, value_enum, default_value = "max")]
    pub aggregate: Aggregate,

    /// Largest depth (I/Os in flight per job) the sweep tries, 1..=4096.
    #[arg(
        long,
        allow_negative_numbers = true,
        value_name = "N",
        default_value_t = 256
    )]
    pub max_depth: u32,

    /// Jobs (threads) per target, comma-separated to sweep each: `--jobs 1,4`.
    #[arg(
        long,
        allow_negative_numbers = true,
        value_name = "N[,N...]",
        value_delimiter = ',',
        default_value = "1"
    )]
    pub jobs: Vec<u32>,

    /// Read share of the depth in the mixed sweep, percent (1..=99; only where the mixed
    /// sweep runs) [default: 50].
    #[arg(long, allow_negative_numbers = true, value_name = "PERCENT")]
    pub mix: Option<u32>,

    /// Block size.
    #[arg(long, allow_hyphen_values = true, value_parser = size_arg, default_value = "4KiB", value_name = "SIZE")]
    pub bs: u64,

    /// Measured time of each step.
    #[arg(long, allow_hyphen_values = true, value_parser = duration_arg, default_value = "5s", value_name = "DURATION")]
    pub step_duration: Duration,

    /// Warm-up of each step before measuring (queues fill, caches settle).
    #[arg(long, allow_hyphen_values = true, value_parser = duration_arg, default_value = "1s", value_name = "DURATION")]
    pub ramp: Duration,

    /// Tested size. Default: the whole device; for a file, 10x the caches iolab can detect
    /// (at least 1 GiB, at most 90 % of the free space, 45 % on a copy-on-write file system).
    /// Less is allowed, with a warning.
    #[arg(long, allow_hyphen_values = true, value_parser = size_arg, value_name = "SIZE")]
    pub size: Option<u64>,

    /// Before write sweeps, write the whole target once more (SSD garbage collection in
    /// steady state); with the prefill, the span is written twice, as the SNIA PTS asks.
    #[arg(long)]
    pub precondition: bool,

    // Steady state before each sweep: rounds of --step-duration at depth
    // min(32, --max-depth) until steady.
    #[command(flatten)]
    pub steady: super::run::SteadyArgs,

    /// Run even where O_DIRECT is refused (the page cache then takes part; warned).
    #[arg(long)]
    pub allow_buffered: bool,

    /// Allow writing to this device or existing file (must name a target exactly; repeat
    /// for several).
    #[arg(long, value_name = "PATH")]
    pub allow_destroy: Vec<PathBuf>,

    /// Keep the test file afterwards (directory targets).
    #[arg(long)]
    pub keep: bool,

    /// Seed for offsets and data.
    #[arg(long, default_value_t = 0x5A7)]
    pub seed: u64,

    #[command(flatten)]
    pub out: super::OutputArgs,
}

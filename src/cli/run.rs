//! `iolab run` arguments.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::engine::{EngineKind, Pattern};
use crate::units::{duration_arg, size_arg};
use crate::workload::block::{Region, Rw};
use crate::workload::presets::Preset;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PatternArg {
    /// Random, incompressible, every block unique.
    Random,
    /// Zeros (compressible: flatters compressing or deduplicating storage).
    Zero,
}

impl From<PatternArg> for Pattern {
    fn from(p: PatternArg) -> Pattern {
        match p {
            PatternArg::Random => Pattern::Random,
            PatternArg::Zero => Pattern::Zero,
        }
    }
}

/// Repeats and their statistics (shared by measuring subcommands).
#[derive(Debug, Clone, Args)]
pub struct RepeatArgs {
    /// Runs per test: a number, or `auto` to add runs until the 95 % confidence interval
    /// of the mean is within --target-ci.
    #[arg(long, value_name = "N|auto", default_value = "3")]
    pub repeat: String,

    /// Upper bound of runs with `--repeat auto` (only with it) [default: 10].
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub max_repeat: Option<u32>,

    /// Wanted CI half-width, % of the mean, with `--repeat auto` (only with it)
    /// [default: 2.5].
    #[arg(long, allow_negative_numbers = true, value_name = "PERCENT")]
    pub target_ci: Option<f64>,
}

/// Running to steady state (shared by `run` and `saturate`).
#[derive(Debug, Clone, Default, Args)]
pub struct SteadyArgs {
    /// Keep measuring rounds until the last window of rounds is steady (run: a round is one
    /// run of each test, replacing --repeat; saturate: steps at one depth before each
    /// sweep), or until --steadystate-max. `snia`: the SNIA PTS rule (5 rounds, max − min
    /// within 20 % and the least-squares fit's excursion within 10 % of the window's mean);
    /// or a fio criterion: iops:10%, iops_slope:0.5%, bw:2%, bw_slope:1MB/s (a % limit is
    /// relative to the window's mean).
    #[arg(long, value_name = "snia|CRITERION")]
    pub steadystate: Option<String>,

    /// fio's ss_dur: the window of a fio criterion, turned into whole rounds [default: 5 rounds].
    #[arg(long, allow_hyphen_values = true, value_parser = duration_arg, value_name = "DURATION", requires = "steadystate")]
    pub steadystate_duration: Option<Duration>,

    /// fio's ss_ramp: time at the start whose rounds are not judged (fio criteria).
    #[arg(long, allow_hyphen_values = true, value_parser = duration_arg, value_name = "DURATION", requires = "steadystate")]
    pub steadystate_ramp: Option<Duration>,

    /// No new round starts after this time; the test then reports "not reached" [default:
    /// 25 rounds, the SNIA PTS's limit].
    #[arg(long, allow_hyphen_values = true, value_parser = duration_arg, value_name = "DURATION", requires = "steadystate")]
    pub steadystate_max: Option<Duration>,
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// What to measure: a directory (iolab creates and removes its own test file there), a
    /// block device, or an existing regular file (with --allow-destroy FILE).
    #[arg(long, short = 't', value_name = "PATH|DEVICE", default_value = ".")]
    pub target: PathBuf,

    /// Built-in suite [default: default]. Without --preset, --rw runs one custom test.
    #[arg(long, value_enum)]
    pub preset: Option<Preset>,

    /// Size of the test file (4k/4KiB/1M/1MiB/1G are powers of two; 1MB/1GB are powers of
    /// ten). Default 1 GiB, clamped to 90 % of the free space (45 % on a copy-on-write file
    /// system such as btrfs, where overwrites need new space). For a device: the part tested.
    #[arg(long, allow_hyphen_values = true, value_parser = size_arg, value_name = "SIZE")]
    pub size: Option<u64>,

    /// Measured time per test run (5s, 500ms, 1m).
    #[arg(long, allow_hyphen_values = true, value_parser = duration_arg, default_value = "5s", value_name = "DURATION")]
    pub duration: Duration,

    /// Warm-up time before each run's measurement starts (not counted).
    #[arg(long, allow_hyphen_values = true, value_parser = duration_arg, default_value = "500ms", value_name = "DURATION")]
    pub ramp: Duration,

    /// Idle time before every run but the first (CrystalDiskMark's "interval time", e.g. 5s):
    /// an SSD gets to finish its background work (SLC cache flush, garbage collection) and to
    /// cool down, so one test does not hand the next a slower device. Not counted anywhere.
    #[arg(long, allow_hyphen_values = true, value_parser = duration_arg, default_value = "0s", value_name = "DURATION")]
    pub pause: Duration,

    /// Resolution of each run's time series (IOPS, MB/s and mean latency per interval, in the
    /// result file and the report's "over time" charts): whole milliseconds, e.g. 10ms for
    /// short stalls, 1s for long runs.
    #[arg(long, allow_hyphen_values = true, value_parser = duration_arg, default_value = "100ms", value_name = "DURATION")]
    pub interval: Duration,

    /// Size-based instead of time-based: bytes to transfer per job and run.
    #[arg(long, allow_hyphen_values = true, value_parser = size_arg, value_name = "SIZE", conflicts_with = "duration")]
    pub io_size: Option<u64>,

    #[command(flatten)]
    pub repeat: RepeatArgs,

    #[command(flatten)]
    pub steady: SteadyArgs,

    /// Before measuring, write the whole tested span twice sequentially (the SNIA PTS's
    /// preconditioning: the prefill plus one more pass), so an SSD is measured in its used
    /// state, not fresh out of the box. Needs a writable target.
    #[arg(long)]
    pub precondition: bool,

    /// I/O engine (uring falls back to sync when io_uring is unavailable, with a warning).
    #[arg(long, value_enum, default_value = "uring")]
    pub engine: EngineKind,

    /// O_DIRECT (bypass the page cache). Falls back to buffered where refused (tmpfs).
    #[arg(long, value_name = "BOOL", default_value = "true", action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub direct: bool,

    /// Put I/O buffers of at least half a huge page (e.g. one 1 MiB buffer) on transparent
    /// huge pages (default), so that a large direct I/O reaches the device as one request
    /// instead of a list of scattered 4 KiB pages the device may split. `false` keeps them on
    /// ordinary pages, as fio's default `--iomem=malloc` does.
    #[arg(long, value_name = "BOOL", default_value = "true", action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub huge_pages: bool,

    /// A single custom test instead of a preset (the other flags below refine it), or,
    /// combined with --preset, restrict the preset to this direction (randrw: its random
    /// tests mixed; readwrite: its sequential tests mixed).
    #[arg(long, value_enum)]
    pub rw: Option<Rw>,

    /// CrystalDiskMark's "Read&Write&Mix": every preset test also runs mixed (--rwmix-read %
    /// reads; SEQ tests as one sequential stream, RND tests at random offsets), after the
    /// reads and the writes.
    #[arg(long, conflicts_with = "rw")]
    pub mix: bool,

    /// Block size of the custom test, or of every preset test when given.
    #[arg(long, allow_hyphen_values = true, value_parser = size_arg, value_name = "SIZE")]
    pub bs: Option<u64>,

    /// I/Os in flight per job (1..=1024).
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub iodepth: Option<u32>,

    /// Parallel jobs (threads).
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub jobs: Option<u32>,

    /// Percentage of reads of mixed tests (randrw, readwrite, --mix) [default: 70, as
    /// CrystalDiskMark's Mix]. Refused when no test of the run is mixed.
    #[arg(long, allow_negative_numbers = true, value_name = "PERCENT")]
    pub rwmix_read: Option<u32>,

    /// How jobs share the region: each its own slice (split) or all the whole (shared).
    #[arg(long, value_enum, default_value = "split")]
    pub region: Region,

    /// Data written.
    #[arg(long, value_enum, default_value = "random")]
    pub pattern: PatternArg,

    /// Seal every written 512-byte sector (offset, run id, sequence, xxh3 checksum) and check
    /// every read: a mismatch fails the run with the offset, what was expected and what was
    /// read. Costs CPU (see docs/PERFORMANCE.md).
    #[arg(long)]
    pub verify: bool,

    /// Write every block before measuring (default). `false` reuses the data already on a
    /// device or file (e.g. written earlier by `iolab run --verify` with the same --seed).
    #[arg(long, value_name = "BOOL", default_value = "true", action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub prefill: bool,

    /// Keep the test file afterwards (directory targets).
    #[arg(long)]
    pub keep: bool,

    /// Allow writing to this device or existing file (must name the target exactly).
    #[arg(long, value_name = "PATH")]
    pub allow_destroy: Option<PathBuf>,

    /// Seed for offsets and data (same seed, same bytes).
    #[arg(long, default_value_t = 0x10_1AB)]
    pub seed: u64,

    #[command(flatten)]
    pub out: super::OutputArgs,
}

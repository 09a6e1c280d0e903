//! `iolab run` arguments.
//!
//! `RunConfig::from_args` checks them: a bad value is a `UsageError` (exit 2) raised
//! before anything is created.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::checks::{
    DEFAULT_SIZE, FileRoom, MAX_BS, MAX_IODEPTH, MAX_JOBS, allow_destroy_of, check_dir_writable,
    check_interval, check_series, device_in_use, err, free_for_test_file, free_space,
    is_read_only_fs, overwrite_room, refuse_read_only_device,
};

use crate::engine::{EngineKind, Pattern};
use crate::error::UsageError;
use crate::runner::run::RunConfig;
use crate::runner::target::TargetKind;
use crate::stats::repeat::RepeatMode;
use crate::stats::steady_rounds::SteadySpec;
use crate::units::{duration_arg, size_arg};
use crate::workload::block::{BlockTestSpec, JobSpec, cdm_label};
use crate::workload::block::{Region, Rw};
use crate::workload::presets::Preset;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PatternArg {
    /// Random and incompressible: each write random throughout, every 512-byte sector unique;
    /// on a file system that compresses (btrfs compress=, f2fs, bcachefs, zfs) every write
    /// under 1 MiB is filled anew, so that no run of bytes repeats between writes (one pass
    /// over its bytes).
    Random,
    /// Random buffers reused, each write only stamped (fio's default buffers): no pass over
    /// the data, but a compressor whose window spans several writes (btrfs or ZFS
    /// compression of small sequential writes) finds them alike.
    Stamped,
    /// Zeros (compressible: flatters compressing or deduplicating storage).
    Zero,
}

impl From<PatternArg> for Pattern {
    fn from(p: PatternArg) -> Pattern {
        match p {
            PatternArg::Random => Pattern::Random,
            PatternArg::Stamped => Pattern::Stamped,
            PatternArg::Zero => Pattern::Zero,
        }
    }
}

/// Repeats and their statistics (shared by measuring subcommands).
#[derive(Debug, Clone, Args)]
pub struct RepeatArgs {
    /// Runs per test: a number, or `auto` to add runs until the 95 % confidence interval
    /// of the mean is within --target-ci [default: 3].
    // An Option, not `default_value`: `--steadystate` refuses a `--repeat` given, and
    // `--repeat 3` given looked like the default.
    #[arg(long, allow_hyphen_values = true, value_name = "N|auto")]
    pub repeat: Option<String>,

    /// Upper bound of runs with `--repeat auto` (only with it) [default: 10].
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub max_repeat: Option<u32>,

    /// Wanted CI half-width, % of the mean, with `--repeat auto` (only with it)
    /// [default: 2.5].
    #[arg(long, allow_negative_numbers = true, value_parser = crate::units::percent_f64_arg, value_name = "PERCENT")]
    pub target_ci: Option<f64>,
}

impl RepeatArgs {
    /// `--repeat` as given, or its default.
    pub fn count(&self) -> &str {
        self.repeat.as_deref().unwrap_or("3")
    }
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

impl SteadyArgs {
    /// `--steadystate` with its companions, for rounds that measure `measured` and take
    /// `round_wall` each (ramp and pause included); `None` without --steadystate.
    pub fn spec(
        &self,
        measured: Duration,
        round_wall: Duration,
    ) -> Result<Option<SteadySpec>, UsageError> {
        let Some(rule) = &self.steadystate else {
            return Ok(None);
        };
        SteadySpec::parse(
            rule,
            self.steadystate_duration,
            self.steadystate_ramp,
            self.steadystate_max,
            measured,
            round_wall,
        )
        .map(Some)
        .map_err(err)
    }
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// What to measure: a directory (iolab creates and removes its own test file there), a
    /// block device, or an existing regular file (with --allow-destroy FILE). Also taken as
    /// a word: `iolab run /mnt/ssd`.
    #[arg(long, short = 't', value_name = "PATH|DEVICE", default_value = ".")]
    pub target: PathBuf,

    /// The target as a word, the same as -t/--target.
    #[arg(value_name = "PATH|DEVICE", conflicts_with = "target")]
    pub target_pos: Option<PathBuf>,

    /// Built-in suite [default: default]. Without --preset, --rw runs one custom test.
    #[arg(long, value_enum)]
    pub preset: Option<Preset>,

    /// Size of the test file (4k/4KiB/1M/1MiB/1G are powers of two; 1MB/1GB are powers of
    /// ten, where fio's default reads 1MB as 1 MiB). Default 1 GiB, clamped to 90 % of the free space (45 % on a copy-on-write file
    /// system such as btrfs, where overwrites need new space). For a device: the part tested.
    /// Rounded down to whole blocks of the largest test (block size times jobs), with a note.
    #[arg(long, allow_hyphen_values = true, value_parser = size_arg, value_name = "SIZE")]
    pub size: Option<u64>,

    /// Measured time per test run (5s, 500ms, 1m): fio's runtime; every run is time-based
    /// (fio's time_based) unless --io-size.
    #[arg(long, allow_hyphen_values = true, value_parser = duration_arg, default_value = "5s", value_name = "DURATION")]
    pub duration: Duration,

    /// Warm-up time before each run's measurement starts (not counted; fio's ramp_time)
    /// [default: 500ms].
    /// A size-based run (--io-size) has none: a ramp other than 0 is refused there.
    #[arg(long, allow_hyphen_values = true, value_parser = duration_arg, value_name = "DURATION")]
    pub ramp: Option<Duration>,

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

    /// Size-based instead of time-based: bytes to transfer per job and run (fio's io_size).
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

    /// I/O engine, fio's ioengine: uring is fio's io_uring, sync its psync (uring falls back to
    /// sync when io_uring is unavailable, with a warning).
    #[arg(long, value_enum, default_value = "uring")]
    pub engine: EngineKind,

    /// O_DIRECT (bypass the page cache). Falls back to buffered where refused (tmpfs before
    /// Linux 6.6, some FUSE file systems), and says so.
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

    /// Block size of the custom test, or of every preset test when given [default: a
    /// custom test's 4KiB random, 1MiB sequential; a preset test's own (SEQ1M, RND4K)].
    #[arg(long, allow_hyphen_values = true, value_parser = size_arg, value_name = "SIZE")]
    pub bs: Option<u64>,

    /// I/Os in flight per job (1..=1024), of the custom test or of every preset test when
    /// given [default: 1 for a custom test; a preset test's own (Q8, Q32, Q1)].
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub iodepth: Option<u32>,

    /// Parallel jobs (threads; fio's numjobs), of the custom test or of every preset test when given
    /// [default: 1 for a custom test; a preset test's own (T1, T16)].
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub jobs: Option<u32>,

    /// Percentage of reads of mixed tests (randrw, readwrite, --mix; fio's rwmixread)
    /// [default: 70, as CrystalDiskMark's Mix; fio's is 50]. Refused when no test of the run
    /// is mixed.
    #[arg(long, allow_negative_numbers = true, value_parser = crate::units::percent_u32_arg, value_name = "PERCENT")]
    pub rwmix_read: Option<u32>,

    /// How jobs share the region: each its own slice (split) or all the whole (shared).
    #[arg(long, value_enum, default_value = "split")]
    pub region: Region,

    /// Data written.
    #[arg(long, value_enum, default_value = "random")]
    pub pattern: PatternArg,

    /// Seal every written 512-byte sector (offset, run id, sequence, xxh3 checksum) and check
    /// every read: a mismatch fails the run with the offset, what was expected and what was
    /// read. Costs CPU (see docs/PERFORMANCE.md). Not with several jobs writing one shared
    /// region (--region shared), whose concurrent writes to a block may mix.
    #[arg(long)]
    pub verify: bool,

    /// Write every block before measuring (default). `false` reuses the data already on a
    /// device or file (e.g. written earlier by `iolab run --verify` with the same --seed).
    #[arg(long, value_name = "BOOL", default_value = "true", action = clap::ArgAction::Set,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub prefill: bool,

    /// Keep the test file afterwards (directory targets; refused for a device or an
    /// existing file, which iolab never removes).
    #[arg(long)]
    pub keep: bool,

    /// Allow writing to this device or existing file (must name the target exactly).
    #[arg(long, value_name = "PATH")]
    pub allow_destroy: Option<PathBuf>,

    /// Seed for offsets and data (same seed, same bytes; the default is every command's).
    #[arg(long, allow_negative_numbers = true, default_value_t = crate::os::context::DEFAULT_SEED)]
    pub seed: u64,

    #[command(flatten)]
    pub out: super::OutputArgs,
}

impl RunConfig {
    pub fn from_args(a: &RunArgs) -> Result<RunConfig, UsageError> {
        let kind = super::checks::classify_target(&a.target)?;
        let repeat = repeat_mode(&a.repeat).map_err(err)?;
        super::checks::check_keep(a.keep, &[(&a.target, kind)])?;
        super::checks::check_allow_destroy_kind(a.allow_destroy.as_slice(), &[(&a.target, kind)])?;

        check_numbers(a)?;

        let steady = steady_spec(a)?;

        if a.verify && a.engine == crate::engine::EngineKind::Null {
            return Err(err(
                "--verify with --engine null: the null engine moves no data to verify",
            ));
        }
        if !a.prefill && kind == TargetKind::Directory {
            return Err(err(
                "--prefill false: iolab's new test file in a directory must be prefilled; give an existing file or device to reuse its data",
            ));
        }
        let (tests, depth_note) = tests_and_depth_note(a)?;
        check_buffers(&tests, crate::sysinfo::ram_bytes())?;
        check_io_size(&tests, a.io_size)?;
        check_verify_region(&tests, a.verify)?;
        if let Some(pct) = a.rwmix_read
            && !tests
                .iter()
                .any(|t| t.groups.iter().any(|g| g.rw.is_mixed()))
        {
            return Err(err(format!(
                "--rwmix-read {pct}: no test of this run mixes reads and writes; add --mix, or --rw randrw / readwrite"
            )));
        }
        let writes = tests.iter().any(|t| t.writes());
        if a.precondition && !a.prefill {
            return Err(err(
                "--precondition with --prefill false: preconditioning writes the whole span twice, the prefill being the first pass",
            ));
        }
        let max_bs = tests
            .iter()
            .flat_map(|t| t.groups.iter().map(|g| g.bs * g.jobs as u64))
            .max()
            .unwrap_or(4096);

        // What may be written.
        let allowed = allow_destroy_of(a.allow_destroy.as_deref(), &a.target)?;
        if a.verify && a.prefill && kind == TargetKind::BlockDevice && !allowed {
            return Err(err(format!(
                "--verify needs data iolab wrote: pass --allow-destroy {} (prefill), or --prefill false to check data an earlier --verify run wrote",
                a.target.display()
            )));
        }
        let may_write = may_write(a, kind, writes, allowed)?;

        // Size.
        let (size, size_note) = test_size(a, kind, max_bs)?;
        let rounded = a.size.and_then(|given| {
            super::checks::rounded_size_note(
                given,
                size,
                max_bs,
                "the largest block of one test times its jobs",
            )
        });
        let size_note = match (rounded, size_note) {
            (Some(r), Some(n)) => Some(format!("{r}; {n}")),
            (r, n) => r.or(n),
        };

        check_direct_alignment(&a.target, &tests)?;

        Ok(RunConfig {
            target: a.target.clone(),
            kind,
            size,
            size_note,
            depth_note,
            tests,
            repeat,
            headline: a.preset.unwrap_or(Preset::Default).headline(),
            preset: if a.rw.is_some() && a.preset.is_none() {
                None
            } else {
                Some(a.preset.unwrap_or(Preset::Default))
            },
            keep: a.keep,
            may_write,
            out: a.out.delivery(),
            verify: a.verify,
            prefill: a.prefill && may_write,
            seed: a.seed,
            pause: a.pause,
            steady,
            precondition: a.precondition,
        })
    }
}

/// The checks of `iolab run` that need no target: a matrix `run:` reference gets them
/// before anything is formatted (a bad one was a runtime failure after every mkfs).
pub fn check_without_target(a: &RunArgs) -> Result<(), UsageError> {
    repeat_mode(&a.repeat).map_err(err)?;
    check_numbers(a)?;
    steady_spec(a)?;
    let tests = build_tests(a)?;
    check_buffers(&tests, crate::sysinfo::ram_bytes())?;
    check_io_size(&tests, a.io_size)?;
    check_verify_region(&tests, a.verify)?;
    Ok(())
}

/// `--verify` with jobs writing the same blocks at once (`--region shared`): nothing orders
/// two jobs' concurrent writes and reads of one block, so a read can meet a sector half of
/// one write and half of another (buffered I/O, a loop device's page cache), and a write can
/// leave one on the medium; verification called that corruption ("the sector was
/// corrupted") on healthy storage, in 2 of 3 runs of a 4-job randrw on ext4.
fn check_verify_region(tests: &[BlockTestSpec], verify: bool) -> Result<(), UsageError> {
    if !verify {
        return Ok(());
    }
    let racing = |g: &JobSpec| g.jobs > 1 && g.region == Region::Shared && g.rw.writes();
    for t in tests {
        if let Some(g) = t.groups.iter().find(|g| racing(g)) {
            return Err(err(format!(
                "--verify with --region shared: in {}, {} jobs write the same blocks at once, and a block read or written by two jobs together can hold half of each write, which verification would report as corruption; use --region split (the default), --jobs 1, or read-only tests",
                t.name, g.jobs
            )));
        }
    }
    Ok(())
}

/// `--io-size` in whole blocks of every test: a job issues whole blocks until it has done
/// the size, so `--io-size 1k` with 4 KiB blocks moved 4 KiB and `6k` moved 8 KiB, while the
/// footer and the result said 1 KiB and 6 KiB.
fn check_io_size(tests: &[BlockTestSpec], io_size: Option<u64>) -> Result<(), UsageError> {
    let Some(io) = io_size else {
        return Ok(());
    };
    for t in tests {
        if let Some(g) = t.groups.iter().find(|g| !io.is_multiple_of(g.bs)) {
            return Err(err(format!(
                "--io-size {}: not a whole number of {} blocks ({}): give a multiple of the block size",
                crate::units::fmt_size_exact(io),
                crate::units::fmt_size_exact(g.bs),
                t.name
            )));
        }
    }
    Ok(())
}

/// Every test's I/O buffers (jobs x depth x block size; one per job on the sync engine)
/// against the machine's memory.
fn check_buffers(tests: &[BlockTestSpec], ram: u64) -> Result<(), UsageError> {
    for t in tests {
        let bytes: u128 = t
            .groups
            .iter()
            .map(|g| {
                let depth = match g.engine {
                    crate::engine::EngineKind::Sync => 1,
                    _ => g.iodepth,
                };
                u128::from(g.jobs) * u128::from(depth) * u128::from(g.bs)
            })
            .sum();
        let g = &t.groups[0];
        let what = format!(
            "{}: --bs {} x --iodepth {} x --jobs {}",
            t.name,
            crate::units::fmt_size_exact(g.bs),
            g.iodepth,
            g.jobs
        );
        super::checks::check_buffer_memory(&what, bytes, ram)?;
    }
    Ok(())
}

/// The numbers of `iolab run` on their own: block size, depth, jobs, mix, duration or size,
/// the series' interval.
fn check_numbers(a: &RunArgs) -> Result<(), UsageError> {
    if let Some(bs) = a.bs {
        if bs == 0 {
            return Err(err("--bs 0: the block size must be at least 512 bytes"));
        }
        if bs % 512 != 0 {
            return Err(err(format!(
                "--bs {bs}: must be a multiple of 512 bytes (a sector)"
            )));
        }
        if bs > MAX_BS {
            return Err(err(format!(
                "--bs {}: at most 64MiB",
                crate::units::fmt_size_exact(bs)
            )));
        }
    }
    if let Some(d) = a.iodepth
        && (d == 0 || d > MAX_IODEPTH)
    {
        return Err(err(format!(
            "--iodepth {d}: must be between 1 and {MAX_IODEPTH}"
        )));
    }
    if let Some(j) = a.jobs
        && (j == 0 || j > MAX_JOBS)
    {
        return Err(err(format!("--jobs {j}: must be between 1 and {MAX_JOBS}")));
    }
    if let Some(pct) = a.rwmix_read
        && pct > 100
    {
        return Err(err(format!("--rwmix-read {pct}: a percentage, 0..=100")));
    }
    if a.io_size.is_none() && a.duration.is_zero() {
        return Err(err(
            "--duration 0: give a positive duration, or --io-size for a size-based run",
        ));
    }
    if a.io_size == Some(0) {
        return Err(err("--io-size 0: give a positive size"));
    }
    // A size-based run measures every I/O it does: a warm-up would silently be dropped.
    if let (Some(_), Some(r)) = (a.io_size, a.ramp)
        && !r.is_zero()
    {
        return Err(err(format!(
            "--ramp {} with --io-size: a size-based run has no warm-up (every I/O of --io-size is measured); drop --ramp, or use --duration for a timed run with a warm-up",
            crate::units::fmt_ns(r.as_nanos() as f64)
        )));
    }
    check_interval(a.interval)?;
    if a.io_size.is_none() {
        check_series(a.interval, "--duration", a.duration, "points per run")?;
    }
    Ok(())
}

/// May the run write the target? A directory needs its own test file (writable, not
/// read-only); an existing file or a device only with `--allow-destroy` naming it, a
/// device in use never.
fn may_write(
    a: &RunArgs,
    kind: TargetKind,
    writes: bool,
    allowed: bool,
) -> Result<bool, UsageError> {
    Ok(match kind {
        TargetKind::Directory => {
            // Even read tests need iolab's own (prefilled) test file there.
            check_dir_writable(&a.target, "iolab needs to create its test file there")?;
            true
        }
        TargetKind::RegularFile => {
            refuse_writing_a_read_only_file(a, writes, allowed)?;
            if !allowed {
                // A read test can read the file as it is: say how (`--prefill false`).
                let as_is = if writes || a.precondition {
                    String::new()
                } else {
                    format!(
                        "; to read it as it is instead, add --prefill false to --allow-destroy {}",
                        a.target.display()
                    )
                };
                return Err(err(format!(
                    "{} is an existing file: iolab would overwrite it (prefill and writes); pass --allow-destroy {} to allow that, or give a directory{as_is}",
                    a.target.display(),
                    a.target.display()
                )));
            }
            true
        }
        TargetKind::BlockDevice => {
            if let Some(user) = device_in_use(&a.target)
                && (writes || allowed)
            {
                return Err(err(format!(
                    "{} is in use ({user}); refusing to write to it",
                    a.target.display()
                )));
            }
            if writes || a.precondition || allowed {
                refuse_read_only_device(
                    &a.target,
                    if writes {
                        "a write test"
                    } else {
                        "the prefill"
                    },
                    if writes {
                        "; --rw read/randread without --allow-destroy reads it as it is"
                    } else {
                        "; without --allow-destroy it is read as it is, not prefilled"
                    },
                )?;
            }
            if (writes || a.precondition) && !allowed {
                if !writes {
                    return Err(err(format!(
                        "--precondition writes the whole span of {} twice, destroying its data; pass --allow-destroy {} (exactly that name) to allow it",
                        a.target.display(),
                        a.target.display()
                    )));
                }
                return Err(err(format!(
                    "write tests on the block device {} destroy its data; pass --allow-destroy {} (exactly that name) to allow it, or --rw read/randread for a read-only test",
                    a.target.display(),
                    a.target.display()
                )));
            }
            allowed
        }
    })
}

/// An existing file on a read-only file system cannot take a write test, a prefill or
/// `--precondition`: refused before anything runs, with what can be done with it (read it
/// as it is). Without this, `--allow-destroy FILE` on a read-only mount claimed a result
/// file, failed with "prefill failed: Read-only file system (os error 30)" and exited 1.
fn refuse_writing_a_read_only_file(
    a: &RunArgs,
    writes: bool,
    allowed: bool,
) -> Result<(), UsageError> {
    if !is_read_only_fs(crate::os::dir_of(&a.target)) {
        return Ok(());
    }
    let f = a.target.display();
    let what = if writes {
        "a write test"
    } else if a.precondition {
        "--precondition"
    } else if allowed && !a.prefill {
        // Read tests of the file as it is: nothing is written.
        return Ok(());
    } else {
        "the prefill"
    };
    let reads = if writes { "--rw read/randread " } else { "" };
    Err(err(format!(
        "{f} is on a read-only file system: {what} needs to write it (mount it read-write); to read it as it is, pass {reads}--allow-destroy {f} --prefill false (nothing is written)"
    )))
}

/// The tested size: `--size`, or the default clamped to the room there is (a directory),
/// the device or the existing file; rounded down to whole `block`s (the largest block of
/// one job times the jobs); with the note said when it was clamped or a file grows. An
/// error names where a size too small for one block came from: `--size`, or the free
/// space when the user gave none.
fn test_size(
    a: &RunArgs,
    kind: TargetKind,
    block: u64,
) -> Result<(u64, Option<String>), UsageError> {
    use crate::units::fmt_size_iec;
    let too_small = |what: String| {
        err(format!(
            "{what}: smaller than one block per job ({})",
            fmt_size_iec(block)
        ))
    };
    let given = |s: u64| -> Result<u64, UsageError> {
        if s < block {
            return Err(too_small(format!("--size {}", fmt_size_iec(s))));
        }
        Ok(s / block * block)
    };
    Ok(match kind {
        TargetKind::Directory => {
            let free = free_space(&a.target).unwrap_or(u64::MAX);
            // A --size must leave room for the lock file beside it (the default takes 90 %
            // of the free space at most).
            let room = free_for_test_file(&a.target).unwrap_or(u64::MAX);
            match a.size {
                Some(s) if s > room => {
                    // Another run's test file may be what took the room: say that instead.
                    crate::runner::lock::refuse_if_in_use(&a.target)?;
                    return Err(err(format!(
                        "--size {}: only {} free on {} for the test file ({})",
                        fmt_size_iec(s),
                        fmt_size_iec(room),
                        a.target.display(),
                        super::checks::room_for_size(room)
                    )));
                }
                Some(s) => (given(s)?, None),
                None => {
                    let room = overwrite_room(&a.target);
                    let cap = room.cap(free);
                    if DEFAULT_SIZE <= cap {
                        (DEFAULT_SIZE / block * block, None)
                    } else if cap < block {
                        crate::runner::lock::refuse_if_in_use(&a.target)?;
                        return Err(err(format!(
                            "{} is nearly full: the test file may take {} ({}), less than one block per job ({}); free some space there, or use a smaller --bs or fewer --jobs",
                            a.target.display(),
                            fmt_size_iec(cap),
                            room.describe(&a.target),
                            fmt_size_iec(block)
                        )));
                    } else {
                        let size = cap / block * block;
                        let rounded = if size < cap {
                            format!(", rounded down to whole {} blocks", fmt_size_iec(block))
                        } else {
                            String::new()
                        };
                        let note = format!(
                            "test file size clamped to {} ({}{rounded})",
                            fmt_size_iec(size),
                            room.describe(&a.target)
                        );
                        (size, Some(note))
                    }
                }
            }
        }
        TargetKind::BlockDevice => {
            let dev = crate::runner::target::block_device_size(&a.target).map_err(|e| {
                err(format!(
                    "cannot read the size of {}: {e}",
                    a.target.display()
                ))
            })?;
            match a.size {
                Some(s) if s > dev => {
                    return Err(err(format!(
                        "--size {}: the device {} has only {}",
                        fmt_size_iec(s),
                        a.target.display(),
                        fmt_size_iec(dev)
                    )));
                }
                Some(s) => (given(s)?, None),
                None if dev < block => {
                    return Err(too_small(format!(
                        "the device {} holds {}",
                        a.target.display(),
                        fmt_size_iec(dev)
                    )));
                }
                None => (DEFAULT_SIZE.min(dev) / block * block, None),
            }
        }
        TargetKind::RegularFile => {
            let file = FileRoom::of(&a.target);
            let (size, what) = match a.size {
                Some(s) => (given(s)?, "--size"),
                None if file.len > 0 && file.len < block => {
                    return Err(too_small(format!(
                        "no --size given, and the file {} is {}",
                        a.target.display(),
                        fmt_size_iec(file.len)
                    )));
                }
                None if file.len > 0 => (file.len / block * block, "the file's length"),
                None => (DEFAULT_SIZE / block * block, "the default test size"),
            };
            if size > file.len && is_read_only_fs(crate::os::dir_of(&a.target)) {
                return Err(err(format!(
                    "{what} {}: the file {} holds {} and cannot grow on a read-only file system; give --size {}K at most",
                    fmt_size_iec(size),
                    a.target.display(),
                    fmt_size_iec(file.len),
                    file.len / 1024
                )));
            }
            (size, file.fit(&a.target, size, what)?)
        }
    })
}

/// O_DIRECT needs every block size to be a multiple of the device's logical block size.
fn check_direct_alignment(
    target: &std::path::Path,
    tests: &[BlockTestSpec],
) -> Result<(), UsageError> {
    // O_DIRECT alignment against the device's logical block size.
    if tests.iter().any(|t| t.groups.iter().any(|g| g.direct)) {
        let lbs = crate::sysinfo::logical_block_size_of(target).unwrap_or(512) as u64;
        for t in tests {
            for g in &t.groups {
                if g.bs % lbs != 0 {
                    return Err(err(format!(
                        "--bs {}: not a multiple of the device's logical block size ({lbs} bytes), which O_DIRECT requires",
                        g.bs
                    )));
                }
            }
        }
    }
    Ok(())
}

/// `--steadystate` and its companions, checked against the rest of `iolab run`: a round is
/// one run of a test (`--duration` measured, after `--ramp`, with `--pause` before it).
fn steady_spec(a: &RunArgs) -> Result<Option<SteadySpec>, UsageError> {
    if a.steady.steadystate.is_none() {
        return Ok(None);
    }
    if a.io_size.is_some() {
        return Err(err(
            "--steadystate with --io-size: steady-state rounds are runs of --duration; drop --io-size",
        ));
    }
    if let Some(given) = &a.repeat.repeat {
        return Err(err(format!(
            "--steadystate with --repeat {}: steady state decides how many runs each test gets (a round per run, until steady or --steadystate-max); drop --repeat",
            given.trim()
        )));
    }
    a.steady.spec(a.duration, a.duration + ramp(a) + a.pause)
}

/// Warm-up before each run's measurement when `--ramp` is not given.
pub const DEFAULT_RAMP: Duration = Duration::from_millis(500);

/// The warm-up of a timed run: `--ramp`, else [`DEFAULT_RAMP`].
fn ramp(a: &RunArgs) -> Duration {
    a.ramp.unwrap_or(DEFAULT_RAMP)
}

fn job(a: &RunArgs, rw: Rw, bs: u64, iodepth: u32, jobs: u32) -> JobSpec {
    JobSpec {
        rw,
        bs,
        iodepth,
        jobs,
        rwmix_read: rwmix_read(a),
        region: a.region,
        pattern: a.pattern.into(),
        direct: a.direct,
        huge_pages: a.huge_pages,
        engine: a.engine,
        duration: a.io_size.is_none().then_some(a.duration),
        ramp: if a.io_size.is_some() {
            std::time::Duration::ZERO
        } else {
            ramp(a)
        },
        io_size: a.io_size,
        seed: a.seed,
        fsync_at_end: true,
        interval: a.interval,
    }
}

/// Percentage of reads of mixed tests when `--rwmix-read` is not given (CrystalDiskMark's Mix).
pub const DEFAULT_RWMIX_READ: u32 = 70;

fn rwmix_read(a: &RunArgs) -> u32 {
    a.rwmix_read.unwrap_or(DEFAULT_RWMIX_READ)
}

/// `read`, `write`, or `mixed 70% read` after a test's CrystalDiskMark label.
fn direction_label(rw: Rw, rwmix_read: u32) -> String {
    if rw.is_mixed() {
        format!("mixed {rwmix_read}% read")
    } else {
        rw.direction().to_string()
    }
}

/// Why the tests will have one I/O in flight per job, if they will: the sync engine, asked
/// for or the fallback where io_uring is refused.
fn one_in_flight(a: &RunArgs) -> Option<String> {
    match a.engine {
        crate::engine::EngineKind::Sync => Some("the sync engine (pread/pwrite)".into()),
        crate::engine::EngineKind::Uring => crate::engine::probe_uring().err().map(|e| {
            format!("io_uring is unavailable here ({e}); the sync engine it falls back to")
        }),
        crate::engine::EngineKind::Null => None,
    }
}

/// The tests, each at the depth it will run at. The sync engine has one I/O in flight per
/// job: an `--iodepth` above 1 with `--engine sync` is refused, and a preset's deeper tests
/// run (and are named) at Q1, with the note that says so (they were shown and saved as
/// `RND4K Q32T1` with iodepth 32, and a warning under the table that it "ran as 1").
fn build_tests(a: &RunArgs) -> Result<Vec<BlockTestSpec>, UsageError> {
    Ok(tests_and_depth_note(a)?.0)
}

fn tests_and_depth_note(a: &RunArgs) -> Result<(Vec<BlockTestSpec>, Option<String>), UsageError> {
    let single = one_in_flight(a);
    if let (Some(why), Some(qd)) = (&single, a.iodepth)
        && qd > 1
    {
        if a.engine == crate::engine::EngineKind::Sync {
            return Err(err(format!(
                "--iodepth {qd} with --engine sync: the sync engine keeps one I/O in flight per job; use --jobs {qd} for {qd} in flight, or --engine uring"
            )));
        }
        return Err(err(format!(
            "--iodepth {qd}: {why} keeps one I/O in flight per job; use --jobs {qd} for {qd} in flight"
        )));
    }
    let depth = |qd: u32| if single.is_some() { 1 } else { qd };
    let mut deeper: Vec<String> = Vec::new();
    let tests = plan_tests(a, depth, &mut deeper)?;
    let note = single.filter(|_| !deeper.is_empty()).map(|why| {
        format!(
            "{why} keeps one I/O in flight per job: {} ran at queue depth 1 (named Q1; tests made alike by it ran once); --engine uring for deeper queues",
            deeper.join(", ")
        )
    });
    Ok((tests, note))
}

/// The tests of the preset (or the one custom test) at the depths `depth` gives; the labels
/// of preset tests it made shallower go into `deeper`.
fn plan_tests(
    a: &RunArgs,
    depth: impl Fn(u32) -> u32,
    deeper: &mut Vec<String>,
) -> Result<Vec<BlockTestSpec>, UsageError> {
    // A single custom test: --rw without --preset.
    if let (Some(rw), None) = (a.rw, a.preset) {
        let bs = a.bs.unwrap_or(if rw.is_random() { 4096 } else { 1 << 20 });
        let qd = depth(a.iodepth.unwrap_or(1));
        let jobs = a.jobs.unwrap_or(1);
        let name = format!(
            "{} {}",
            cdm_label(rw, bs, qd, jobs),
            direction_label(rw, rwmix_read(a))
        );
        return Ok(vec![BlockTestSpec::single(name, job(a, rw, bs, qd, jobs))]);
    }
    let preset = a.preset.unwrap_or(Preset::Default);
    let mut reads: Vec<BlockTestSpec> = Vec::new();
    let mut writes = Vec::new();
    let mut mixes = Vec::new();
    for t in preset.tests() {
        let bs = a.bs.unwrap_or(t.bs);
        let asked = a.iodepth.unwrap_or(t.iodepth);
        let qd = depth(asked);
        let jobs = a.jobs.unwrap_or(t.jobs);
        let (r, w, m) = if t.random {
            (Rw::Randread, Rw::Randwrite, Rw::Randrw)
        } else {
            (Rw::Read, Rw::Write, Rw::Readwrite)
        };
        let label = cdm_label(r, bs, qd, jobs);
        if qd != asked {
            let was = cdm_label(r, bs, asked, jobs);
            if !deeper.contains(&was) {
                deeper.push(was);
            }
        }
        for (rw, list) in [(r, &mut reads), (w, &mut writes), (m, &mut mixes)] {
            let wanted = match a.rw {
                Some(only) => only == rw,
                None => rw != m || a.mix,
            };
            // The name says all a test's own settings are: two preset tests that --bs,
            // --iodepth or --jobs made alike run once (--iodepth 4 ran SEQ1M Q4T1 twice).
            let name = format!("{label} {}", direction_label(rw, rwmix_read(a)));
            if wanted && !list.iter().any(|t| t.name == name) {
                list.push(BlockTestSpec::single(name, job(a, rw, bs, qd, jobs)));
            }
        }
    }
    // CrystalDiskMark's order: all reads, then all writes, then the mixed tests.
    let mut tests = reads;
    tests.extend(writes);
    tests.extend(mixes);
    if tests.is_empty() {
        return Err(err(format!(
            "--rw {} matches no test of the {} preset",
            a.rw.map(|r| r.name()).unwrap_or("?"),
            preset.name()
        )));
    }
    Ok(tests)
}

/// `--repeat` with `--max-repeat` and `--target-ci`, which apply to `--repeat auto` only: given
/// with a fixed count they would be ignored, so they are refused.
pub fn repeat_mode(a: &RepeatArgs) -> Result<RepeatMode, String> {
    use crate::stats::repeat::{DEFAULT_MAX_REPEAT, DEFAULT_TARGET_CI_PCT};
    if !a.count().trim().eq_ignore_ascii_case("auto") {
        let given = [
            ("--max-repeat", a.max_repeat.is_some()),
            ("--target-ci", a.target_ci.is_some()),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, g)| *g) {
            return Err(format!(
                "{flag} applies to --repeat auto (runs until the interval is tight), not to --repeat {}",
                a.count().trim()
            ));
        }
    }
    RepeatMode::parse(
        a.count(),
        a.max_repeat.unwrap_or(DEFAULT_MAX_REPEAT),
        a.target_ci.unwrap_or(DEFAULT_TARGET_CI_PCT),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrap {
        #[command(flatten)]
        run: RunArgs,
    }

    /// `--max-repeat` and `--target-ci` go with `--repeat auto` only; without them the
    /// defaults hold.
    #[test]
    fn repeat_options_for_auto_are_refused_with_a_fixed_count() {
        let mode = |args: &[&str]| {
            let w =
                Wrap::try_parse_from(std::iter::once("iolab").chain(args.iter().copied())).unwrap();
            repeat_mode(&w.run.repeat)
        };
        assert_eq!(mode(&[]), Ok(RepeatMode::Fixed(3)));
        assert_eq!(
            mode(&["--repeat", "auto"]),
            Ok(RepeatMode::Auto {
                max: 10,
                target_ci: 0.025
            })
        );
        assert_eq!(
            mode(&["--repeat", "auto", "--max-repeat", "20", "--target-ci", "1"]),
            Ok(RepeatMode::Auto {
                max: 20,
                target_ci: 0.01
            })
        );
        assert_eq!(
            mode(&["--target-ci", "1"]),
            Err("--target-ci applies to --repeat auto (runs until the interval is tight), not to --repeat 3".into())
        );
        assert!(mode(&["--repeat", "5", "--max-repeat", "20"]).is_err());
        assert_eq!(
            mode(&["--repeat", "auto", "--target-ci", "0"]),
            Err("--target-ci 0: must be above 0 and below 100 (percent)".into())
        );
    }

    fn tests_of(args: &[&str]) -> Vec<(String, Rw, u32)> {
        let w = Wrap::try_parse_from(std::iter::once("iolab").chain(args.iter().copied()))
            .unwrap_or_else(|e| panic!("{args:?}: {e}"));
        build_tests(&w.run)
            .unwrap_or_else(|e| panic!("{args:?}: {e}"))
            .into_iter()
            .map(|t| (t.name, t.groups[0].rw, t.groups[0].rwmix_read))
            .collect()
    }

    fn names(t: &[(String, Rw, u32)]) -> Vec<&str> {
        t.iter().map(|(n, _, _)| n.as_str()).collect()
    }

    /// The sync engine has one I/O in flight per job: the table and the JSON said
    /// `RND4K Q32T1` and iodepth 32 for a test that ran at 1 (a warning under the table
    /// said so). Now a preset's deeper tests are planned, named and recorded at Q1, with a
    /// note, and an explicit deeper `--iodepth` is refused.
    #[test]
    fn the_sync_engine_claims_no_depth_it_cannot_keep() {
        let parse = |args: &[&str]| {
            Wrap::try_parse_from(std::iter::once("iolab").chain(args.iter().copied())).unwrap()
        };
        let w = parse(&["--engine", "sync"]);
        let (tests, note) = tests_and_depth_note(&w.run).unwrap();
        let names: Vec<&str> = tests.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "SEQ1M Q1T1 read",
                "RND4K Q1T1 read",
                "SEQ1M Q1T1 write",
                "RND4K Q1T1 write"
            ]
        );
        assert!(tests.iter().all(|t| t.groups[0].iodepth == 1));
        let note = note.unwrap();
        assert!(
            note.contains("SEQ1M Q8T1, RND4K Q32T1 ran at queue depth 1"),
            "{note}"
        );
        let e = tests_and_depth_note(
            &parse(&["--engine", "sync", "--rw", "randread", "--iodepth", "32"]).run,
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("--iodepth 32 with --engine sync"), "{e}");
        assert!(e.contains("--jobs 32"), "{e}");
        // Depth 1 and many jobs are what the sync engine can do.
        let (t, note) = tests_and_depth_note(
            &parse(&["--engine", "sync", "--rw", "randread", "--jobs", "4"]).run,
        )
        .unwrap();
        assert_eq!(t[0].name, "RND4K Q1T4 read");
        assert!(note.is_none());
        // The null engine keeps any depth.
        let (t, _) = tests_and_depth_note(
            &parse(&["--engine", "null", "--rw", "randread", "--iodepth", "8"]).run,
        )
        .unwrap();
        assert_eq!(t[0].groups[0].iodepth, 8);
    }

    /// Flags that make two preset tests alike run the test once: `--preset default
    /// --iodepth 4` ran SEQ1M Q4T1 and RND4K Q4T1 twice each, under one name.
    #[test]
    fn preset_tests_made_alike_by_the_flags_run_once() {
        assert_eq!(
            names(&tests_of(&["--preset", "default", "--iodepth", "4"])),
            [
                "SEQ1M Q4T1 read",
                "RND4K Q4T1 read",
                "SEQ1M Q4T1 write",
                "RND4K Q4T1 write"
            ]
        );
        assert_eq!(
            names(&tests_of(&[
                "--preset",
                "nvme",
                "--iodepth",
                "32",
                "--jobs",
                "1",
                "--rw",
                "randread"
            ])),
            ["RND4K Q32T1 read"]
        );
        // Tests the flags leave apart all run.
        assert_eq!(
            names(&tests_of(&[
                "--preset", "nvme", "--bs", "4k", "--rw", "read"
            ])),
            ["SEQ4K Q8T1 read", "SEQ4K Q32T1 read"]
        );
    }

    #[test]
    fn mix_adds_every_preset_test_mixed_after_reads_and_writes() {
        let t = tests_of(&["--mix", "--preset", "real", "--rwmix-read", "65"]);
        assert_eq!(
            names(&t),
            [
                "SEQ1M Q1T1 read",
                "RND4K Q1T1 read",
                "SEQ1M Q1T1 write",
                "RND4K Q1T1 write",
                "SEQ1M Q1T1 mixed 65% read",
                "RND4K Q1T1 mixed 65% read",
            ]
        );
        assert_eq!((t[4].1, t[4].2), (Rw::Readwrite, 65));
        assert_eq!(t[5].1, Rw::Randrw);
        // The default preset: its eight tests, then four mixed ones.
        let t = tests_of(&["--mix"]);
        assert_eq!(t.len(), 12);
        assert!(t[..8].iter().all(|(_, rw, _)| !rw.is_mixed()));
        assert_eq!(t[8].0, "SEQ1M Q8T1 mixed 70% read");
        // Without --mix, no mixed test.
        assert!(tests_of(&[]).iter().all(|(_, rw, _)| !rw.is_mixed()));
    }

    #[test]
    fn a_mixed_rw_restricts_a_preset_to_its_mixed_tests_of_that_kind() {
        let seq = tests_of(&["--preset", "default", "--rw", "readwrite"]);
        assert_eq!(
            names(&seq),
            ["SEQ1M Q8T1 mixed 70% read", "SEQ1M Q1T1 mixed 70% read"]
        );
        let rnd = tests_of(&["--preset", "real", "--rw", "randrw"]);
        assert_eq!(names(&rnd), ["RND4K Q1T1 mixed 70% read"]);
        // fio's short name is accepted too; a custom sequential mixed test.
        let custom = tests_of(&["--rw", "rw", "--bs", "128k", "--iodepth", "4"]);
        assert_eq!(names(&custom), ["SEQ128K Q4T1 mixed 70% read"]);
        assert_eq!(custom[0].1, Rw::Readwrite);
        assert!(Wrap::try_parse_from(["iolab", "--mix", "--rw", "read"]).is_err());
    }
}

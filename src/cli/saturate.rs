//! `iolab saturate` arguments.
//!
//! `iolab saturate` options -> a validated plan (`workload::saturate::config`). Every check
//! happens here, before anything is created: a bad value is a `UsageError` (exit 2). Also
//! decides the worst-case size of each target from the caches iolab can detect (the fio
//! latency method: at least 10x the cache).

use crate::cli::checks::{FileRoom, MAX_BS, MAX_JOBS, err, refuse_read_only_device};
use crate::engine::EngineKind;
use crate::error::UsageError;
use crate::fs::facts::{
    allow_destroy_matches, device_in_use, free_for_test_file, free_space, fs_signature,
    is_read_only_fs,
};
use crate::model::{Warning, WarningCode};
use crate::runner::target::{TargetKind, block_device_size, direct_supported};
use crate::sysinfo::caches::{detect_caches, recommended_size, small_test_warning};
use crate::units::fmt_size_iec;
use crate::units::{duration_arg, latency_arg, size_arg};
use crate::workload::saturate::config::*;
pub use crate::workload::saturate::{Aggregate, Statistic, SweepKind};
use clap::Args;
use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Clone, Args)]
pub struct SaturateArgs {
    /// What to measure; repeat for several targets run at the same time (their IOPS and
    /// depths add up). A block device (whole device by default), a directory (iolab creates
    /// and removes its own test file there) or an existing file (with --allow-destroy FILE).
    /// Also taken as words: `iolab saturate /dev/sdb /dev/sdc`.
    #[arg(long, short = 't', value_name = "PATH|DEVICE", default_value = ".")]
    pub target: Vec<PathBuf>,

    /// The targets as words, the same as -t/--target.
    #[arg(value_name = "PATH|DEVICE", conflicts_with = "target")]
    pub target_pos: Vec<PathBuf>,

    /// Sweeps to run, comma-separated [default: randread,randwrite,mixed; randread only on
    /// a block device without --allow-destroy].
    #[arg(long, value_parser = super::values::SweepParser, value_delimiter = ',')]
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

    /// Jobs (threads; fio's numjobs) per target, comma-separated to sweep each: `--jobs 1,4`.
    #[arg(
        long,
        allow_negative_numbers = true,
        value_name = "N[,N...]",
        value_delimiter = ',',
        default_value = "1"
    )]
    pub jobs: Vec<u32>,

    /// Read share of the depth in the mixed sweep, percent (1..=99; only where the mixed
    /// sweep runs): a read and a write stream at once, not fio's rwmixread draw per I/O
    /// [default: 50].
    #[arg(long, allow_negative_numbers = true, value_parser = crate::units::percent_u32_arg, value_name = "PERCENT")]
    pub mix: Option<u32>,

    /// Block size.
    #[arg(long, allow_hyphen_values = true, value_parser = size_arg, default_value = "4KiB", value_name = "SIZE")]
    pub bs: u64,

    /// Measured time of each step (fio's runtime).
    #[arg(long, allow_hyphen_values = true, value_parser = duration_arg, default_value = "5s", value_name = "DURATION")]
    pub step_duration: Duration,

    /// Warm-up of each step before measuring (queues fill, caches settle; fio's ramp_time).
    #[arg(long, allow_hyphen_values = true, value_parser = duration_arg, default_value = "1s", value_name = "DURATION")]
    pub ramp: Duration,

    /// Tested size. Default: the whole device; for a file, 10x the caches iolab can detect
    /// (at least 1 GiB, at most 90 % of the free space, 45 % on a copy-on-write file system).
    /// Less is allowed, with a warning. Rounded down to whole --bs blocks, with a note.
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

    /// Keep the test file afterwards (directory targets; refused for a device or an
    /// existing file, which iolab never removes).
    #[arg(long)]
    pub keep: bool,

    /// Seed for offsets and data (same seed, same offsets and bytes; the default is every
    /// command's).
    #[arg(long, allow_negative_numbers = true, default_value_t = crate::os::context::DEFAULT_SEED)]
    pub seed: u64,

    #[command(flatten)]
    pub out: super::OutputArgs,
}

/// Depth (per job) of the steady-state rounds before a sweep, at most `--max-depth`.
pub const STEADY_DEPTH: u32 = 32;

/// `v` without repeats, in first-seen order.
fn unique<T: PartialEq + Copy>(v: &[T]) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for &x in v {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

impl SaturateConfig {
    pub fn from_args(a: &SaturateArgs) -> Result<SaturateConfig, UsageError> {
        check_values(a)?;
        // The steady-state rounds before a sweep (`--steadystate`): a round is one step,
        // `--step-duration` measured after `--ramp`.
        let steady = a.steady.spec(a.step_duration, a.step_duration + a.ramp)?;
        check_target_names(a)?;
        let kinds: Vec<TargetKind> = a
            .target
            .iter()
            .map(|t| super::checks::classify_target(t))
            .collect::<Result<_, _>>()?;
        let listed: Vec<(&Path, TargetKind)> = a
            .target
            .iter()
            .map(PathBuf::as_path)
            .zip(kinds.iter().copied())
            .collect();
        super::checks::check_keep(a.keep, &listed)?;
        super::checks::check_allow_destroy_kind(&a.allow_destroy, &listed)?;
        let mut notes = Vec::new();
        let kinds_wanted = sweep_kinds(a, &kinds, &mut notes);
        if a.mix.is_some() && !kinds_wanted.contains(&SweepKind::Mixed) {
            let names: Vec<&str> = kinds_wanted.iter().map(|k| k.name()).collect();
            return Err(err(format!(
                "--mix sets the read share of the mixed sweep, which does not run here (sweeps: {}); add --rw mixed",
                names.join(", ")
            )));
        }
        let writes = kinds_wanted.iter().any(|k| k.writes());
        if a.precondition && !writes {
            let names: Vec<&str> = kinds_wanted.iter().map(|k| k.name()).collect();
            return Err(err(format!(
                "--precondition writes the span once more before write sweeps, and none runs here (sweeps: {}); leave it out, or add a write sweep (--rw randwrite)",
                names.join(", ")
            )));
        }
        let jobs = unique(&a.jobs);
        let max_jobs = jobs.iter().copied().max().unwrap_or(1);
        let engine = pick_engine(&mut notes);
        let targets = plan_targets(a, &kinds, writes, max_jobs, &mut notes)?;
        let mut sweeps = Vec::new();
        for &j in &jobs {
            for &k in &kinds_wanted {
                sweeps.push(SweepSpec { kind: k, jobs: j });
            }
        }
        Ok(SaturateConfig {
            targets,
            sweeps,
            notes,
            bs: a.bs,
            max_depth: a.max_depth,
            limit_ns: a.latency_limit.as_nanos() as f64,
            statistic: a.on,
            aggregate: a.aggregate,
            mix: a.mix.unwrap_or(50),
            step: a.step_duration,
            ramp: a.ramp,
            precondition: a.precondition,
            engine,
            keep: a.keep,
            seed: a.seed,
            out: a.out.delivery(),
            ranks: 1,
            steady,
            steady_depth: STEADY_DEPTH.min(a.max_depth),
        })
    }
}

/// The numbers: latency limit, depth, jobs, mix, block size, step duration.
fn check_values(a: &SaturateArgs) -> Result<(), UsageError> {
    if a.latency_limit.is_zero() {
        return Err(err("--latency-limit 0: give a positive latency, e.g. 10ms"));
    }
    if a.max_depth == 0 || a.max_depth > MAX_DEPTH {
        return Err(err(format!(
            "--max-depth {}: must be between 1 and {MAX_DEPTH}",
            a.max_depth
        )));
    }
    if let Some(j) = a.jobs.iter().find(|&&j| j == 0 || j > MAX_JOBS) {
        return Err(err(format!("--jobs {j}: must be between 1 and {MAX_JOBS}")));
    }
    if let Some(mix) = a.mix
        && !(1..=99).contains(&mix)
    {
        return Err(err(format!(
            "--mix {mix}: the read share of the mixed sweep, 1..=99 percent"
        )));
    }
    if a.bs < 512 || !a.bs.is_multiple_of(512) || a.bs > MAX_BS {
        return Err(err(format!(
            "--bs {}: must be a multiple of 512 bytes from 512 bytes to 64MiB",
            crate::units::fmt_size_exact(a.bs)
        )));
    }
    if a.step_duration.is_zero() {
        return Err(err("--step-duration 0: give a positive duration"));
    }
    // The deepest step's buffers, on every target at once.
    let jobs = a.jobs.iter().copied().max().unwrap_or(1);
    let targets = a.target.len().max(1) as u128;
    super::checks::check_buffer_memory(
        &format!(
            "--bs {} x --max-depth {} x --jobs {jobs}{}",
            crate::units::fmt_size_exact(a.bs),
            a.max_depth,
            if targets > 1 {
                format!(" x {targets} targets")
            } else {
                String::new()
            }
        ),
        targets * u128::from(jobs) * u128::from(a.max_depth) * u128::from(a.bs),
        crate::sysinfo::ram_bytes(),
    )?;
    Ok(())
}

/// Each `--target` once, and each `--allow-destroy` naming one of them.
fn check_target_names(a: &SaturateArgs) -> Result<(), UsageError> {
    for (i, t) in a.target.iter().enumerate() {
        if a.target[..i]
            .iter()
            .any(|u| allow_destroy_matches(Some(u), t) || u == t)
        {
            return Err(err(format!("--target {} is given twice", t.display())));
        }
    }
    for ad in &a.allow_destroy {
        if !a.target.iter().any(|t| allow_destroy_matches(Some(ad), t)) {
            return Err(err(format!(
                "--allow-destroy {} does not name any --target exactly",
                ad.display()
            )));
        }
    }
    Ok(())
}

/// Whether `--allow-destroy` names `t`.
fn allowed(a: &SaturateArgs, t: &Path) -> bool {
    a.allow_destroy
        .iter()
        .any(|ad| allow_destroy_matches(Some(ad), t))
}

/// Which sweeps (once each): `--rw`, else all three, unless a device may not be written
/// (then randread only, and a note says why).
fn sweep_kinds(a: &SaturateArgs, kinds: &[TargetKind], notes: &mut Vec<String>) -> Vec<SweepKind> {
    let read_only_device = a
        .target
        .iter()
        .zip(kinds)
        .find(|(t, k)| **k == TargetKind::BlockDevice && !allowed(a, t));
    let mut kinds_wanted = a.rw.clone();
    if kinds_wanted.is_empty() {
        kinds_wanted = vec![SweepKind::Randread, SweepKind::Randwrite, SweepKind::Mixed];
        if let Some((t, _)) = read_only_device {
            kinds_wanted = vec![SweepKind::Randread];
            notes.push(format!(
                "randread only: write sweeps on {} need --allow-destroy {}",
                t.display(),
                t.display()
            ));
        }
    }
    unique(&kinds_wanted)
}

/// io_uring where the kernel offers it, else the sync engine (with a note).
fn pick_engine(notes: &mut Vec<String>) -> EngineKind {
    match crate::engine::probe_uring() {
        Ok(_) => EngineKind::Uring,
        Err(e) => {
            notes.push(format!(
                "io_uring unavailable ({e}): each I/O in flight becomes a thread of the sync engine"
            ));
            EngineKind::Sync
        }
    }
}

/// Each target checked (may it be written, does it take O_DIRECT) and sized; an existing
/// file that grows for its size gets a note.
fn plan_targets(
    a: &SaturateArgs,
    kinds: &[TargetKind],
    writes: bool,
    max_jobs: u32,
    notes: &mut Vec<String>,
) -> Result<Vec<TargetPlan>, UsageError> {
    let mut targets = Vec::new();
    for (path, &kind) in a.target.iter().zip(kinds) {
        let may_write = check_writable(path, kind, writes, allowed(a, path))?;
        // A device or file this user cannot open was said to refuse O_DIRECT (and
        // --allow-buffered advised, which then failed on the same permission).
        if kind != TargetKind::Directory {
            std::fs::OpenOptions::new()
                .read(true)
                .write(may_write)
                .open(path)
                .map_err(|e| err(format!("cannot open {}: {e}", path.display())))?;
        }
        let direct = probe_direct(path, kind);
        if !direct && !a.allow_buffered {
            return Err(err(format!(
                "{} refuses O_DIRECT, so the page cache would answer instead of the device; pass --allow-buffered to measure it anyway",
                path.display()
            )));
        }
        let plan = size_target(path, kind, may_write, direct, a, max_jobs, notes)?;
        targets.push(plan);
    }
    Ok(targets)
}

/// May iolab write `path`? Errors for anything it must not touch.
fn check_writable(
    path: &Path,
    kind: TargetKind,
    writes: bool,
    allowed: bool,
) -> Result<bool, UsageError> {
    let shown = path.display();
    match kind {
        TargetKind::Directory => {
            if is_read_only_fs(path)
                || nix::unistd::access(path, nix::unistd::AccessFlags::W_OK).is_err()
            {
                return Err(err(format!(
                    "{shown} is not writable; iolab needs to create (and prefill) its test file there"
                )));
            }
            Ok(true)
        }
        TargetKind::RegularFile if !allowed => Err(err(format!(
            "{shown} is an existing file that the prefill would overwrite; pass --allow-destroy {shown}, or give a directory"
        ))),
        TargetKind::RegularFile => Ok(true),
        TargetKind::BlockDevice => {
            if (writes || allowed)
                && let Some(user) = device_in_use(path)
            {
                return Err(err(format!(
                    "{shown} is in use ({user}); refusing to write to it"
                )));
            }
            if writes || allowed {
                refuse_read_only_device(
                    path,
                    if writes {
                        "a write sweep"
                    } else {
                        "the prefill"
                    },
                    if writes {
                        "; --rw randread without --allow-destroy reads it as it is"
                    } else {
                        "; without --allow-destroy it is read as it is, not prefilled"
                    },
                )?;
            }
            if writes && !allowed {
                let sig = fs_signature(path)
                    .map(|s| format!(" (it holds a {s} file system)"))
                    .unwrap_or_default();
                return Err(err(format!(
                    "write sweeps destroy the data on {shown}{sig}; pass --allow-destroy {shown}, or --rw randread"
                )));
            }
            Ok(allowed)
        }
    }
}

/// O_DIRECT on the target; for a directory, on a probe file removed at once.
fn probe_direct(path: &Path, kind: TargetKind) -> bool {
    match kind {
        TargetKind::Directory => tempfile::Builder::new()
            .prefix(".iolab-direct-probe-")
            .tempfile_in(path)
            .map(|f| direct_supported(f.path()))
            .unwrap_or(false),
        _ => direct_supported(path),
    }
}

fn size_target(
    path: &Path,
    kind: TargetKind,
    may_write: bool,
    direct: bool,
    a: &SaturateArgs,
    max_jobs: u32,
    notes: &mut Vec<String>,
) -> Result<TargetPlan, UsageError> {
    let shown = path.display();
    let caches = detect_caches(path, direct);
    let recommended = recommended_size(&caches);
    let mut warnings = Vec::new();
    let file = (kind == TargetKind::RegularFile).then(|| FileRoom::of(path));
    let size = match kind {
        TargetKind::BlockDevice => {
            let dev = block_device_size(path)
                .map_err(|e| err(format!("cannot read the size of {shown}: {e}")))?;
            match size_within(a.size, dev, |s, d| {
                format!("--size {s}: {shown} has only {d}")
            })? {
                Some(s) => {
                    if s < dev {
                        warnings.push(small_warning(
                            format!(
                                "--size {} tests part of {shown} ({}): the worst case is the whole device",
                                fmt_size_iec(s),
                                fmt_size_iec(dev)
                            ),
                        ));
                    }
                    s
                }
                None => dev,
            }
        }
        TargetKind::Directory => {
            let free = free_space(path).unwrap_or(u64::MAX);
            // A --size must leave room for the lock file beside it (the default takes 90 %
            // of the free space at most).
            let room = free_for_test_file(path).unwrap_or(u64::MAX);
            // Another run's test file may be what took the room: say that instead.
            if a.size.is_some_and(|s| s > room) {
                crate::runner::lock::refuse_if_in_use(path)?;
            }
            match size_within(a.size, room, |s, f| {
                format!(
                    "--size {s}: only {f} free on {shown} for the test file ({})",
                    crate::cli::checks::room_for_size(room)
                )
            })? {
                Some(s) => s,
                None => recommended
                    .max(MIN_DEFAULT_FILE)
                    .min(crate::cli::checks::overwrite_room(path).cap(free)),
            }
        }
        TargetKind::RegularFile => match (a.size, file.map_or(0, |f| f.len)) {
            (Some(s), _) => s,
            (None, len) if len > 0 => len,
            (None, _) => recommended.max(MIN_DEFAULT_FILE),
        },
    };
    let whole = size / a.bs * a.bs;
    if let Some(given) = a.size {
        notes.extend(super::checks::rounded_size_note(given, whole, a.bs, "--bs"));
    }
    let size = whole;
    // Refused before anything is written when the prefill would fill the file system.
    if let Some(file) = file {
        let what = match a.size {
            Some(_) => "--size",
            None if file.len > 0 => "the file's length",
            None => "the default size (10x the caches, at least 1 GiB)",
        };
        notes.extend(file.fit(path, size, what)?);
    }
    let need = a.max_depth as u64 * a.bs * max_jobs as u64;
    if size < need {
        // What can make room: a directory's default size is what its free space allows
        // ("give more --size" was the advice on a full file system, where a --size is
        // refused), a device's is all of it.
        let advice = match (kind, a.size) {
            (TargetKind::Directory, None) => {
                "the file system there is nearly full: free some space, or lower --max-depth or --jobs"
            }
            (TargetKind::BlockDevice, None) => "lower --max-depth or --jobs, or use a smaller --bs",
            _ => "lower --max-depth or give more --size",
        };
        return Err(err(format!(
            "{shown}: {} is too small for one {} block per I/O in flight ({} x {} job(s) = {} needed); {advice}",
            fmt_size_iec(size),
            fmt_size_iec(a.bs),
            a.max_depth,
            max_jobs,
            fmt_size_iec(need)
        )));
    }
    warnings.extend(small_test_warning(size, path, &caches));
    if !direct {
        warnings.push(Warning {
            code: WarningCode::Buffered,
            message: format!(
                "{shown} refused O_DIRECT; running buffered (--allow-buffered): the page cache takes part in every latency"
            ),
            test: None,
        });
    }
    Ok(TargetPlan {
        path: path.to_path_buf(),
        kind,
        size,
        may_write,
        direct,
        caches,
        recommended,
        warnings,
    })
}

/// `--size` if it fits in `limit` bytes; else the usage error `says` (given both sizes,
/// formatted).
fn size_within(
    size: Option<u64>,
    limit: u64,
    says: impl FnOnce(String, String) -> String,
) -> Result<Option<u64>, UsageError> {
    match size {
        Some(s) if s > limit => Err(err(says(fmt_size_iec(s), fmt_size_iec(limit)))),
        s => Ok(s),
    }
}

fn small_warning(message: String) -> Warning {
    Warning {
        code: WarningCode::SmallTestSize,
        message,
        test: None,
    }
}

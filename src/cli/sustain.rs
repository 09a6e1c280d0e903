//! `iolab sustain` arguments.
//!
//! Validated `iolab sustain`: every value and the target checked before anything is
//! created (a bad one is a `UsageError`, exit 2, and nothing is written).

use crate::cli::checks::{
    FileRoom, MAX_BS, MAX_IODEPTH, allow_destroy_of, check_dir_writable, check_interval,
    check_series, device_in_use, err, free_for_test_file, free_space, refuse_read_only_device,
};
use crate::engine::EngineKind;
use crate::error::UsageError;
use crate::runner::target::{TargetKind, block_device_size};
use crate::units::fmt_size_iec;
use crate::units::{duration_arg, size_arg};
use crate::workload::block::Rw;
use clap::Args;

use crate::runner::sustain::SustainConfig;
use std::path::{Path, PathBuf};
use std::time::Duration;

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
    /// --allow-destroy FILE). Also taken as -t/--target, as the other commands take it.
    #[arg(
        value_name = "PATH|DEVICE",
        required_unless_present = "target_flag",
        conflicts_with = "target_flag"
    )]
    pub target_pos: Option<PathBuf>,

    /// The target, as an option (the same as PATH|DEVICE).
    #[arg(short = 't', long = "target", value_name = "PATH|DEVICE")]
    pub target_flag: Option<PathBuf>,

    /// Bytes to write (the span): 64G, 100GB. Default: 50 % of the free space of a
    /// directory (22 % on a copy-on-write file system such as btrfs), the whole device, or
    /// the existing file. Rounded down to whole --bs blocks (the "span" line says so).
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
    #[arg(long, value_parser = super::values::WritingEngine, default_value = "uring")]
    pub engine: EngineKind,

    /// Length of one point of the throughput series the cliffs are found in (whole
    /// milliseconds): 1s for drives, shorter for small spans.
    #[arg(long, allow_hyphen_values = true, value_parser = duration_arg, default_value = "1s", value_name = "DURATION")]
    pub interval: Duration,

    /// Allow writing to this device or existing file (must name the target exactly).
    #[arg(long, value_name = "PATH")]
    pub allow_destroy: Option<PathBuf>,

    /// Seed of the data (same seed, same bytes; the default is every command's).
    #[arg(long, allow_negative_numbers = true, default_value_t = crate::os::context::DEFAULT_SEED)]
    pub seed: u64,

    #[command(flatten)]
    pub out: super::OutputArgs,
}

/// `50%` or `50` -> 50 (1..=100).
pub fn percent_arg(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let n = t.strip_suffix('%').unwrap_or(t).trim();
    let v: u64 = n.parse().map_err(|_| {
        if crate::units::parse_size(t).is_ok() {
            format!("'{s}' is a size, not a percentage (e.g. 50%): give a size with --size {t}")
        } else {
            format!("'{s}' is not a percentage (e.g. 50%)")
        }
    })?;
    if !(1..=100).contains(&v) {
        return Err(format!("'{s}': a share from 1% to 100%"));
    }
    Ok(v)
}

/// At most this many recovery passes.
pub const MAX_RECOVERY_PASSES: usize = 10;

/// Default span of a directory: this share of its free space (less on a copy-on-write file
/// system, where the recovery passes' overwrites need new space: half of its overwrite room).
pub const DEFAULT_DIR_SPAN_PCT: u64 = 50;

impl SustainArgs {
    /// The target, given as PATH|DEVICE or as -t/--target (clap asks for one of them).
    pub fn target(&self) -> &Path {
        self.target_pos
            .as_deref()
            .or(self.target_flag.as_deref())
            .unwrap_or(Path::new("."))
    }
}

impl SustainConfig {
    pub fn from_args(a: &SustainArgs) -> Result<SustainConfig, UsageError> {
        let kind = super::checks::classify_target(a.target())?;
        super::checks::check_allow_destroy_kind(a.allow_destroy.as_slice(), &[(a.target(), kind)])?;
        check_io(a)?;
        check_timing(a)?;
        check_recovery(a)?;
        // What may be written.
        let allowed = allow_destroy_of(a.allow_destroy.as_deref(), a.target())?;
        let (size, size_note) = match kind {
            TargetKind::Directory => dir_span(a)?,
            TargetKind::BlockDevice => device_span(a, allowed)?,
            TargetKind::RegularFile => file_span(a, allowed)?,
        };
        let asked = size;
        let size = whole_blocks(a, size, &size_note)?;
        // `--size 100GB` is not whole 1 MiB blocks: the span line says what was cut.
        let size_note = match a.size {
            Some(_) if size < asked => format!(
                "{size_note} {} bytes, rounded down to whole {} blocks (--bs)",
                crate::units::fmt_thousands(asked as f64),
                fmt_size_iec(a.bs)
            ),
            _ => size_note,
        };
        Ok(SustainConfig {
            target: a.target().to_path_buf(),
            kind,
            size,
            size_note,
            time: a.time,
            rw: match a.rw {
                SustainRw::Write => Rw::Write,
                SustainRw::Randwrite => Rw::Randwrite,
            },
            bs: a.bs,
            iodepth: a.iodepth,
            engine: a.engine,
            interval: a.interval,
            recovery: a.recovery.clone(),
            seed: a.seed,
            out: a.out.delivery(),
        })
    }
}

/// `--bs`, `--iodepth` and `--engine`: a block of whole sectors up to 64MiB, a depth in
/// range, an engine that writes.
fn check_io(a: &SustainArgs) -> Result<(), UsageError> {
    if a.bs == 0 || !a.bs.is_multiple_of(512) {
        return Err(err(format!(
            "--bs {}: must be a positive multiple of 512 bytes (a sector)",
            a.bs
        )));
    }
    if a.bs > MAX_BS {
        return Err(err(format!(
            "--bs {}: at most 64MiB",
            crate::units::fmt_size_exact(a.bs)
        )));
    }
    if a.iodepth == 0 || a.iodepth > MAX_IODEPTH {
        return Err(err(format!(
            "--iodepth {}: must be between 1 and {MAX_IODEPTH}",
            a.iodepth
        )));
    }
    if a.engine == EngineKind::Null {
        return Err(err(
            "--engine null: the null engine writes nothing, so there is no cache to fill; use uring or sync",
        ));
    }
    Ok(())
}

/// `--interval` and `--time`: whole milliseconds, a positive limit, a series that fits in it.
fn check_timing(a: &SustainArgs) -> Result<(), UsageError> {
    check_interval(a.interval)?;
    if let Some(t) = a.time {
        if t.is_zero() {
            return Err(err("--time 0: give a positive time limit (e.g. 10m)"));
        }
        check_series(a.interval, "--time", t, "points")?;
    }
    Ok(())
}

/// `--recovery`: at most `MAX_RECOVERY_PASSES` idle times, each above zero.
fn check_recovery(a: &SustainArgs) -> Result<(), UsageError> {
    if a.recovery.len() > MAX_RECOVERY_PASSES {
        return Err(err(format!(
            "--recovery: {} idle times, at most {MAX_RECOVERY_PASSES}",
            a.recovery.len()
        )));
    }
    if a.recovery.iter().any(|d| d.is_zero()) {
        return Err(err(
            "--recovery 0s: a recovery pass right after the first finds nothing to recover; give idle times above zero (e.g. 30s,2m,10m)",
        ));
    }
    Ok(())
}

fn pct_of(total: u64, pct: u64) -> u64 {
    (total as u128 * pct as u128 / 100) as u64
}

/// The span in a directory (writable, on a writable file system): `--size` within its free
/// space, or `--span` percent of that (by default `DEFAULT_DIR_SPAN_PCT`, less on a
/// copy-on-write file system).
fn dir_span(a: &SustainArgs) -> Result<(u64, String), UsageError> {
    check_dir_writable(a.target(), "iolab needs to write its file there")?;
    let free = free_space(a.target());
    // A --size must leave room for the lock file beside it (a default span is a share of
    // the free space).
    let room = free_for_test_file(a.target());
    Ok(match (a.size, a.span, free) {
        (Some(s), _, Some(_)) if room.is_some_and(|f| s > f) => {
            // Another run's test file may be what took the room: say that instead.
            crate::runner::lock::refuse_if_in_use(a.target())?;
            let f = room.unwrap_or_default();
            return Err(err(format!(
                "--size {}: larger than the free space on {} for the test file ({}; {})",
                fmt_size_iec(s),
                a.target().display(),
                fmt_size_iec(f),
                super::checks::room_for_size(f)
            )));
        }
        (Some(s), _, _) => (s, "--size".to_string()),
        (None, pct, Some(f)) => {
            // On a copy-on-write file system a recovery pass rewrites part of
            // the span into new space: the default leaves room for it.
            let room = crate::fs::facts::overwrite_room(a.target());
            let pct = pct.unwrap_or(if room.why.is_some() {
                (room.percent / 2).max(1)
            } else {
                DEFAULT_DIR_SPAN_PCT
            });
            (
                pct_of(f, pct),
                format!("{pct} % of the {} free", fmt_size_iec(f)),
            )
        }
        (None, _, None) => {
            return Err(err(format!(
                "the free space on {} is unknown: give the span with --size",
                a.target().display()
            )));
        }
    })
}

/// The span on a block device (not in use, named by `--allow-destroy`).
fn device_span(a: &SustainArgs, allowed: bool) -> Result<(u64, String), UsageError> {
    if let Some(user) = device_in_use(a.target()) {
        return Err(err(format!(
            "{} is in use ({user}); refusing a sustained write to it (unmount it, or give a directory on it)",
            a.target().display()
        )));
    }
    refuse_read_only_device(a.target(), "a sustained write", "")?;
    if !allowed {
        return Err(err(format!(
            "a sustained write to the block device {} destroys its data; pass --allow-destroy {} (exactly that name) to allow it",
            a.target().display(),
            a.target().display()
        )));
    }
    let dev = block_device_size(a.target()).map_err(|e| {
        err(format!(
            "cannot read the size of {}: {e}",
            a.target().display()
        ))
    })?;
    let larger = format!(
        "the device {} ({})",
        a.target().display(),
        fmt_size_iec(dev)
    );
    span_within(a, dev, dev, "device", larger)
}

/// The span in an existing file (named by `--allow-destroy`), which may grow into the free
/// space beside it.
fn file_span(a: &SustainArgs, allowed: bool) -> Result<(u64, String), UsageError> {
    if !allowed {
        return Err(err(format!(
            "{} is an existing file: iolab would overwrite it; pass --allow-destroy {} to allow that, or give a directory",
            a.target().display(),
            a.target().display()
        )));
    }
    // Refused before anything is created: it claimed a result file and failed at the open,
    // exit 1 with "Read-only file system (os error 30)".
    if crate::fs::facts::is_read_only_fs(crate::os::dir_of(a.target())) {
        return Err(err(format!(
            "{} is on a read-only file system: a sustained write needs to write it (mount it read-write)",
            a.target().display()
        )));
    }
    let file = FileRoom::of(a.target());
    // `fit` refuses a span beyond the file's room (and says when the file grows): the one
    // check of run, saturate and sustain.
    let (size, note) = span_within(a, file.len, u64::MAX, "file", String::new())?;
    Ok(match file.fit(a.target(), size, &note)? {
        Some(grows) => (size, format!("{note}; {grows}")),
        None => (size, note),
    })
}

/// The span in a `whole` of bytes (the `noun`): `--size` up to `room` (else "larger than"
/// `larger`), `--span` percent of the whole, or all of it; with the note that says which.
fn span_within(
    a: &SustainArgs,
    whole: u64,
    room: u64,
    noun: &str,
    larger: String,
) -> Result<(u64, String), UsageError> {
    Ok(match (a.size, a.span) {
        (Some(s), _) if s > room => {
            return Err(err(format!(
                "--size {}: larger than {larger}",
                fmt_size_iec(s)
            )));
        }
        (Some(s), _) => (s, "--size".to_string()),
        (None, Some(p)) => (pct_of(whole, p), format!("{p} % of the {noun}")),
        (None, None) => (whole, format!("the whole {noun}")),
    })
}

/// The span in whole blocks: at least one, and `--bs` a multiple of the logical block size
/// (O_DIRECT).
fn whole_blocks(a: &SustainArgs, size: u64, size_note: &str) -> Result<u64, UsageError> {
    if size < a.bs {
        return Err(err(format!(
            "the span ({}, {size_note}) is smaller than one block (--bs {})",
            fmt_size_iec(size),
            fmt_size_iec(a.bs)
        )));
    }
    let size = size / a.bs * a.bs;
    let lbs = crate::sysinfo::logical_block_size_of(a.target()).unwrap_or(512) as u64;
    if !a.bs.is_multiple_of(lbs) {
        return Err(err(format!(
            "--bs {}: not a multiple of the device's logical block size ({lbs} bytes), which O_DIRECT requires",
            a.bs
        )));
    }
    Ok(size)
}

#[cfg(test)]
mod tests {
    use super::percent_arg;

    #[test]
    fn a_span_is_a_share_and_a_size_is_pointed_to_size() {
        assert_eq!(percent_arg("50%"), Ok(50));
        assert_eq!(percent_arg(" 100 "), Ok(100));
        assert!(percent_arg("0%").unwrap_err().contains("from 1% to 100%"));
        assert!(percent_arg("101").unwrap_err().contains("from 1% to 100%"));
        let e = percent_arg("2GiB").unwrap_err();
        assert!(e.contains("is a size") && e.contains("--size 2GiB"), "{e}");
        let e = percent_arg("half").unwrap_err();
        assert_eq!(e, "'half' is not a percentage (e.g. 50%)");
    }
}

//! Validated `iolab sustain`: every value and the target checked before anything is
//! created (a bad one is a `UsageError`, exit 2, and nothing is written).

use std::path::PathBuf;
use std::time::Duration;

use crate::cli::sustain::{SustainArgs, SustainRw};
use crate::config::{
    MAX_BS, MAX_IODEPTH, allow_destroy_matches, device_in_use, free_space, is_read_only_fs,
};
use crate::engine::EngineKind;
use crate::error::UsageError;
use crate::runner::target::{TargetKind, block_device_size, classify};
use crate::units::{fmt_ns, fmt_size_iec};
use crate::workload::block::{MAX_INTERVALS, Rw};

/// At most this many recovery passes.
pub const MAX_RECOVERY_PASSES: usize = 10;

/// Default span of a directory: this share of its free space (less on a copy-on-write file
/// system, where the recovery passes' overwrites need new space: half of its overwrite room).
pub const DEFAULT_DIR_SPAN_PCT: u64 = 50;

/// Validated `iolab sustain`.
#[derive(Debug, Clone)]
pub struct SustainConfig {
    pub target: PathBuf,
    pub kind: TargetKind,
    /// Bytes of the span (a whole number of blocks).
    pub size: u64,
    /// How the span was chosen, for the table (`50 % of 20.0 GiB free`).
    pub size_note: String,
    /// `--time`: the first pass stops here at the latest.
    pub time: Option<Duration>,
    pub rw: Rw,
    pub bs: u64,
    pub iodepth: u32,
    pub engine: EngineKind,
    pub interval: Duration,
    /// Idle times before the recovery passes, in order.
    pub recovery: Vec<Duration>,
    pub seed: u64,
    pub output: Option<PathBuf>,
    pub json: bool,
}

fn err(msg: impl Into<String>) -> UsageError {
    UsageError::new(msg)
}

impl SustainConfig {
    pub fn from_args(a: &SustainArgs) -> Result<SustainConfig, UsageError> {
        let kind = classify(&a.target).map_err(err)?;
        if a.bs == 0 || !a.bs.is_multiple_of(512) {
            return Err(err(format!(
                "--bs {}: must be a positive multiple of 512 bytes (a sector)",
                a.bs
            )));
        }
        if a.bs > MAX_BS {
            return Err(err(format!("--bs {}: at most 64MiB", a.bs)));
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
        let interval_ns = a.interval.as_nanos();
        let interval = fmt_ns(interval_ns as f64);
        if interval_ns == 0 || !interval_ns.is_multiple_of(1_000_000) {
            return Err(err(format!(
                "--interval {interval}: give whole milliseconds, at least 1ms (e.g. 100ms, 1s)"
            )));
        }
        if let Some(t) = a.time {
            if t.is_zero() {
                return Err(err("--time 0: give a positive time limit (e.g. 10m)"));
            }
            if a.interval > t {
                return Err(err(format!(
                    "--interval {interval} is longer than --time {}: no interval of the series would be complete",
                    fmt_ns(t.as_nanos() as f64)
                )));
            }
            let n = t.as_nanos() / interval_ns;
            if n > MAX_INTERVALS as u128 {
                return Err(err(format!(
                    "--interval {interval} over --time {} makes {n} points (at most {MAX_INTERVALS}): use a longer --interval",
                    fmt_ns(t.as_nanos() as f64)
                )));
            }
        }
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
        // What may be written.
        let allowed = allow_destroy_matches(a.allow_destroy.as_deref(), &a.target);
        if let Some(ad) = &a.allow_destroy
            && !allowed
        {
            return Err(err(format!(
                "--allow-destroy {} does not name the target {} exactly",
                ad.display(),
                a.target.display()
            )));
        }
        let pct_of = |total: u64, pct: u64| (total as u128 * pct as u128 / 100) as u64;
        let (size, size_note) = match kind {
            TargetKind::Directory => {
                if is_read_only_fs(&a.target) {
                    return Err(err(format!(
                        "{} is on a read-only file system; iolab needs to write its file there",
                        a.target.display()
                    )));
                }
                if nix::unistd::access(&a.target, nix::unistd::AccessFlags::W_OK).is_err() {
                    return Err(err(format!("{} is not writable", a.target.display())));
                }
                let free = free_space(&a.target);
                match (a.size, a.span, free) {
                    (Some(s), _, Some(f)) if s > f => {
                        return Err(err(format!(
                            "--size {}: larger than the free space on {} ({})",
                            fmt_size_iec(s),
                            a.target.display(),
                            fmt_size_iec(f)
                        )));
                    }
                    (Some(s), _, _) => (s, "--size".to_string()),
                    (None, pct, Some(f)) => {
                        // On a copy-on-write file system a recovery pass rewrites part of
                        // the span into new space: the default leaves room for it.
                        let room = crate::fs::facts::overwrite_room(&a.target);
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
                            a.target.display()
                        )));
                    }
                }
            }
            TargetKind::BlockDevice => {
                if let Some(user) = device_in_use(&a.target) {
                    return Err(err(format!(
                        "{} is in use ({user}); refusing a sustained write to it (unmount it, or give a directory on it)",
                        a.target.display()
                    )));
                }
                if !allowed {
                    return Err(err(format!(
                        "a sustained write to the block device {} destroys its data; pass --allow-destroy {} (exactly that name) to allow it",
                        a.target.display(),
                        a.target.display()
                    )));
                }
                let dev = block_device_size(&a.target).map_err(|e| {
                    err(format!(
                        "cannot read the size of {}: {e}",
                        a.target.display()
                    ))
                })?;
                match (a.size, a.span) {
                    (Some(s), _) if s > dev => {
                        return Err(err(format!(
                            "--size {}: larger than the device {} ({})",
                            fmt_size_iec(s),
                            a.target.display(),
                            fmt_size_iec(dev)
                        )));
                    }
                    (Some(s), _) => (s, "--size".to_string()),
                    (None, Some(p)) => (pct_of(dev, p), format!("{p} % of the device")),
                    (None, None) => (dev, "the whole device".to_string()),
                }
            }
            TargetKind::RegularFile => {
                if !allowed {
                    return Err(err(format!(
                        "{} is an existing file: iolab would overwrite it; pass --allow-destroy {} to allow that, or give a directory",
                        a.target.display(),
                        a.target.display()
                    )));
                }
                let len = std::fs::metadata(&a.target).map(|m| m.len()).unwrap_or(0);
                let dir = a
                    .target
                    .parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .unwrap_or(std::path::Path::new("."));
                let room = len.saturating_add(free_space(dir).unwrap_or(u64::MAX));
                match (a.size, a.span) {
                    (Some(s), _) if s > room => {
                        return Err(err(format!(
                            "--size {}: larger than the file {} and the free space beside it ({})",
                            fmt_size_iec(s),
                            a.target.display(),
                            fmt_size_iec(room)
                        )));
                    }
                    (Some(s), _) => (s, "--size".to_string()),
                    (None, Some(p)) => (pct_of(len, p), format!("{p} % of the file")),
                    (None, None) => (len, "the whole file".to_string()),
                }
            }
        };
        if size < a.bs {
            return Err(err(format!(
                "the span ({}, {size_note}) is smaller than one block (--bs {})",
                fmt_size_iec(size),
                fmt_size_iec(a.bs)
            )));
        }
        let size = size / a.bs * a.bs;
        let lbs = crate::sysinfo::logical_block_size_of(&a.target).unwrap_or(512) as u64;
        if !a.bs.is_multiple_of(lbs) {
            return Err(err(format!(
                "--bs {}: not a multiple of the device's logical block size ({lbs} bytes), which O_DIRECT requires",
                a.bs
            )));
        }
        Ok(SustainConfig {
            target: a.target.clone(),
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
            output: (!a.out.no_save).then(|| a.out.output.clone()),
            json: a.out.json,
        })
    }
}

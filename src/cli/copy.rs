//! `iolab copy` arguments: which data set, where, which phases, how to copy.
//!
//! `iolab copy` options checked into a `CopySettings`/`CopyConfig` (workload/copy.rs):
//! every bad input is a `UsageError` before anything is created.

use crate::cli::checks::err;
use crate::error::UsageError;
use crate::fs::facts::io_why;
use crate::model::Delivery;
use crate::units::fmt_size_iec;
use crate::units::size_arg;
use crate::workload::copy::copier::{CopyOpts, FAT32_MAX_FILE};
use crate::workload::copy::{CopyConfig, CopySettings, Phases, dataset, is_fat};
pub use crate::workload::copy::{CopyMethod, HashKind};
use clap::Args;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

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
    /// subdirectory there). Also taken as a word: `iolab copy /mnt/test`.
    #[arg(long, short = 't', value_name = "DIR", default_value = ".")]
    pub target: PathBuf,

    /// The target as a word, the same as -t/--target.
    #[arg(value_name = "DIR", conflicts_with = "target")]
    pub target_pos: Option<PathBuf>,

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

    /// Phases, comma-separated, each once; they always run in this order: write, read, copy,
    /// delete (`delete,write` runs write first). Read, copy and delete need the data set on
    /// the target: without `write` it is still written (and deleted after), untimed.
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

    /// Seed of the synthetic data set (same seed, same files, same bytes; the default is
    /// every command's). Not with --source.
    #[arg(
        long,
        allow_negative_numbers = true,
        default_value_t = crate::os::context::DEFAULT_SEED,
        conflicts_with = "source"
    )]
    pub seed: u64,

    /// Only generate the data set into this new directory and exit (to feed other tools
    /// the very same files: cp, rsync, fio).
    #[arg(
        long,
        value_name = "DIR",
        conflicts_with_all = ["source", "target", "target_pos", "phases", "verify", "ceiling", "preserve", "method"]
    )]
    pub generate: Option<PathBuf>,

    #[command(flatten)]
    pub out: super::OutputArgs,
}

impl CopySettings {
    pub fn from_args(a: &CopyArgs) -> Result<CopySettings, UsageError> {
        if a.source.is_none() && !dataset::is_known(&a.dataset) {
            return Err(err(format!(
                "unknown data set '{}' (known: {})",
                a.dataset,
                dataset::names()
            )));
        }
        if !(a.scale.is_finite() && a.scale > 0.0) {
            return Err(err(format!(
                "--scale {}: must be a finite number above 0",
                a.scale
            )));
        }
        if !(512..=1 << 30).contains(&a.buffer) {
            return Err(err(format!(
                "--buffer {}: must be between 512 bytes and 1 GiB",
                crate::units::fmt_size_exact(a.buffer)
            )));
        }
        let repeat = crate::cli::run::repeat_mode(&a.repeat).map_err(err)?;
        let source = match &a.source {
            None => None,
            Some(s) => {
                let md = std::fs::metadata(s)
                    .map_err(|e| err(format!("--source {}: {}", s.display(), io_why(&e))))?;
                if !md.is_dir() {
                    return Err(err(format!("--source {}: not a directory", s.display())));
                }
                Some(
                    std::fs::canonicalize(s)
                        .map_err(|e| err(format!("--source {}: {}", s.display(), io_why(&e))))?,
                )
            }
        };
        let ram_dir = a
            .ram_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from("/dev/shm"));
        Ok(CopySettings {
            dataset: if source.is_some() {
                "source".into()
            } else {
                a.dataset.clone()
            },
            source,
            seed: a.seed,
            scale: a.scale,
            phases: Phases::parse(&a.phases)?,
            opts: CopyOpts {
                method: a.method,
                buffer: a.buffer as usize,
                preserve: a.preserve,
            },
            verify: a.verify.then_some(a.hash),
            ceiling: a.ceiling,
            repeat,
            ram_dir,
        })
    }
}

/// The RAM dir cannot hold the data set (and its read-back copy): say how much is needed.
fn ram_refusal(s: &CopySettings, free: u64, set: u64) -> UsageError {
    let back = s.needs_ram_back();
    err(format!(
        "the RAM dir {} has {} free, but the data set needs {} ({}{}); use --scale, fewer phases or another --ram-dir",
        s.ram_dir.display(),
        fmt_size_iec(free),
        fmt_size_iec(if back { set.saturating_mul(2) } else { set }),
        fmt_size_iec(set),
        if back { " plus its read-back copy" } else { "" }
    ))
}

fn writable_dir(d: &Path, what: &str) -> Result<PathBuf, UsageError> {
    super::checks::refuse_deleted_dir(d)?;
    let md =
        std::fs::metadata(d).map_err(|e| err(format!("{what} {}: {}", d.display(), io_why(&e))))?;
    if !md.is_dir() {
        return Err(err(format!("{what} {}: not a directory", d.display())));
    }
    if crate::fs::facts::is_read_only_fs(d) {
        return Err(err(format!(
            "{what} {}: read-only file system",
            d.display()
        )));
    }
    if nix::unistd::access(d, nix::unistd::AccessFlags::W_OK).is_err() {
        return Err(err(format!("{what} {}: not writable", d.display())));
    }
    std::fs::canonicalize(d).map_err(|e| err(format!("{what} {}: {}", d.display(), io_why(&e))))
}

/// access(2) passes for root on /proc and /sys, where nothing can be made: try it (a
/// directory made and removed at once), so that `--ram-dir /proc` is refused here, not after
/// the result file was claimed, as 'cannot create a work directory … at path …'. Not for the
/// target, which may be a user's source tree checked after it (its mtime would change), and
/// whose lock file says the same.
fn can_create_in(d: &Path, what: &str) -> Result<(), UsageError> {
    let probe = d.join(format!(".iolab-probe-{}", std::process::id()));
    match std::fs::create_dir(&probe) {
        Ok(()) => {
            let _ = std::fs::remove_dir(&probe);
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => {
            return Err(err(format!(
                "{what} {}: iolab cannot create files there ({e}); give a directory on a writable file system",
                d.display()
            )));
        }
    }
    Ok(())
}

impl CopyConfig {
    pub fn from_args(a: &CopyArgs) -> Result<CopyConfig, UsageError> {
        let s = CopySettings::from_args(a)?;
        let mut c = CopyConfig::for_target(s, &a.target)?;
        c.out = a.out.delivery();
        Ok(c)
    }

    /// Check the target, the source and the RAM dir, and draw the plan.
    pub fn for_target(s: CopySettings, target: &Path) -> Result<CopyConfig, UsageError> {
        let target = writable_dir(target, "--target")?;
        let mut skipped = 0;
        let plan = match &s.source {
            Some(src) => {
                if target.starts_with(src) {
                    return Err(err(format!(
                        "--source {} contains the target {}: iolab would write into your source; pick a target outside it",
                        src.display(),
                        target.display()
                    )));
                }
                if src.starts_with(&target) {
                    return Err(err(format!(
                        "--source {} is inside the target {}: pick a target on another directory tree",
                        src.display(),
                        target.display()
                    )));
                }
                let (p, sk) = dataset::scan(src).map_err(|e| err(format!("--source: {e:#}")))?;
                if p.files.is_empty() {
                    return Err(err(format!("--source {}: no files to copy", src.display())));
                }
                skipped = sk;
                p
            }
            None => {
                let ram_free = crate::fs::facts::free_space(&s.ram_dir).unwrap_or(u64::MAX) as f64;
                let set = dataset::nominal_bytes(&s.dataset, s.scale).unwrap_or(0.0);
                let copies = if s.needs_ram_back() { 2.0 } else { 1.0 };
                if set * copies > ram_free {
                    return Err(ram_refusal(&s, ram_free as u64, set as u64));
                }
                dataset::plan(&s.dataset, s.seed, s.scale)
            }
            .ok_or_else(|| err(format!("unknown data set '{}'", s.dataset)))?,
        };
        let fs_type = crate::sysinfo::mounts::mount_of(&target)
            .map(|m| m.fs_type)
            .unwrap_or_default();
        if is_fat(&fs_type)
            && let Some(big) = plan.files.iter().find(|f| f.size > FAT32_MAX_FILE)
        {
            return Err(err(format!(
                "{}: {} is {} ({} bytes), but the target {} is FAT32 ({fs_type}), which holds at most 4 GiB - 1 byte ({FAT32_MAX_FILE} bytes) per file: writing it would fail with EFBIG (file too large); {}",
                plan.name,
                big.rel.display(),
                fmt_size_iec(big.size),
                big.size,
                target.display(),
                if s.source.is_some() {
                    "leave that file out of --source or use another file system".to_string()
                } else {
                    format!(
                        "use --scale below {:.3} or another file system",
                        // Rounded down, so the suggestion really fits.
                        (s.scale * FAT32_MAX_FILE as f64 / big.size as f64 * 1000.0).floor()
                            / 1000.0
                    )
                }
            )));
        }
        let ram = writable_dir(&s.ram_dir, "--ram-dir")?;
        can_create_in(&ram, "--ram-dir")?;
        let set = plan.ram_bytes();
        let copies_on_target = if s.phases.copy { 2 } else { 1 };
        let need_target = set * copies_on_target;
        let need_ram = set * if s.needs_ram_back() { 2 } else { 1 };
        let same_fs = |a: &Path, b: &Path| match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(x), Ok(y)) => x.dev() == y.dev(),
            _ => false,
        };
        let free_target = crate::fs::facts::free_space(&target).unwrap_or(u64::MAX);
        let free_ram = crate::fs::facts::free_space(&ram).unwrap_or(u64::MAX);
        if same_fs(&target, &ram) && need_target + need_ram > free_ram {
            return Err(err(format!(
                "{} holds both the RAM copy and the target: needs {} ({} data set x {}), only {} free; use --scale or another --ram-dir",
                ram.display(),
                fmt_size_iec(need_target + need_ram),
                fmt_size_iec(set),
                (need_target + need_ram) / set.max(1),
                fmt_size_iec(free_ram)
            )));
        }
        if need_ram > free_ram {
            return Err(ram_refusal(&s, free_ram, set));
        }
        if need_target > free_target {
            return Err(err(format!(
                "the target {} has {} free, but the data set needs about {}{}; use --scale or a bigger file system",
                target.display(),
                fmt_size_iec(free_target),
                fmt_size_iec(need_target),
                if s.phases.copy {
                    " (the written tree and its copy)"
                } else {
                    ""
                }
            )));
        }
        Ok(CopyConfig {
            settings: CopySettings { ram_dir: ram, ..s },
            target,
            plan,
            skipped_entries: skipped,
            out: Delivery::default(),
        })
    }
}

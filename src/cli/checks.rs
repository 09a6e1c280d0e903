//! Checks the families' `from_args` share: limits, `--interval` series, `--allow-destroy`,
//! writable directories, an existing file's room. A bad value is a
//! `UsageError` (exit 2) raised before anything is created.

use std::path::Path;
use std::time::Duration;

use crate::error::UsageError;
use crate::units::fmt_ns;

/// Default size of the test file.
pub const DEFAULT_SIZE: u64 = 1 << 30;
pub const MAX_IODEPTH: u32 = 1024;
pub const MAX_JOBS: u32 = 256;
pub const MAX_BS: u64 = 64 << 20;

// File-system facts the checks use (free space, read-only, in use, signatures) live in
// fs::facts; re-exported here for the callers that validate arguments.
pub use crate::fs::facts::{
    OverwriteRoom, allow_destroy_matches, device_in_use, device_is_read_only, free_for_test_file,
    free_space, fs_signature, is_read_only_fs, overwrite_room, overwrite_room_of,
};

/// A refusal of the command line (exit 2): the one shorthand every command's checks use.
pub fn err(msg: impl Into<String>) -> UsageError {
    UsageError::new(msg)
}

/// A directory that was deleted while something still holds it (the shell's current
/// directory, `iolab run` typed in it): it answers stat, but no path names it, and what
/// came after mistook it for something else ("iolab cannot create files there …; give a
/// directory on a writable file system", `saturate`: "refuses O_DIRECT … pass
/// --allow-buffered"). Said as `iolab info` says it; anything else passes to the checks
/// after it.
pub(crate) fn refuse_deleted_dir(dir: &Path) -> Result<(), UsageError> {
    let deleted = std::fs::metadata(dir).is_ok_and(|m| m.is_dir())
        && std::fs::canonicalize(dir).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound);
    if deleted {
        return Err(err(format!(
            "{}: it was deleted (no directory names it now); give a path that exists",
            dir.display()
        )));
    }
    Ok(())
}

/// What a target is (`fs::facts::classify`), a deleted directory refused as such.
pub(crate) fn classify_target(path: &Path) -> Result<crate::fs::facts::TargetKind, UsageError> {
    let kind = crate::fs::facts::classify(path).map_err(err)?;
    refuse_deleted_dir(path)?;
    Ok(kind)
}

/// `--keep` keeps the test file iolab creates in a directory target: refused when no target
/// is a directory (a device or an existing file is never removed, so it kept nothing, and
/// said nothing about it).
pub(crate) fn check_keep(
    keep: bool,
    targets: &[(&Path, crate::fs::facts::TargetKind)],
) -> Result<(), UsageError> {
    use crate::fs::facts::TargetKind;
    if !keep || targets.iter().any(|(_, k)| *k == TargetKind::Directory) {
        return Ok(());
    }
    let what: Vec<String> = targets
        .iter()
        .map(|(p, k)| {
            let kind = if *k == TargetKind::BlockDevice {
                "a block device"
            } else {
                "an existing file"
            };
            format!("{} is {kind}", p.display())
        })
        .collect();
    Err(err(format!(
        "--keep keeps the test file iolab creates in a directory target; {}, which iolab never removes: there is nothing to keep",
        what.join(", ")
    )))
}

/// `--allow-destroy` lets iolab overwrite a block device or an existing file: naming a
/// directory target, where iolab creates its own test file and removes it, it allowed
/// nothing and was taken without a word (as `--keep` on a device was).
pub(crate) fn check_allow_destroy_kind(
    allow_destroy: &[std::path::PathBuf],
    targets: &[(&Path, crate::fs::facts::TargetKind)],
) -> Result<(), UsageError> {
    use crate::fs::facts::TargetKind;
    for ad in allow_destroy {
        if targets
            .iter()
            .any(|(t, k)| *k == TargetKind::Directory && allow_destroy_matches(Some(ad), t))
        {
            return Err(err(format!(
                "--allow-destroy {}: it is a directory, in which iolab creates its own test file and removes it, destroying nothing: leave --allow-destroy out (it is for a block device or an existing file)",
                ad.display()
            )));
        }
    }
    Ok(())
}

/// `--interval` in whole milliseconds, at least 1ms.
pub(crate) fn check_interval(interval: Duration) -> Result<(), UsageError> {
    let ns = interval.as_nanos();
    if ns == 0 || !ns.is_multiple_of(1_000_000) {
        return Err(err(format!(
            "--interval {}: give whole milliseconds, at least 1ms (e.g. 100ms, 1s)",
            fmt_ns(ns as f64)
        )));
    }
    Ok(())
}

/// The series of a checked `--interval` over `span` (the option `flag`): one whole interval
/// at least, `MAX_INTERVALS` points at most (`points` says what they are counted in).
pub(crate) fn check_series(
    interval: Duration,
    flag: &str,
    span: Duration,
    points: &str,
) -> Result<(), UsageError> {
    let (shown, span_shown) = (
        fmt_ns(interval.as_nanos() as f64),
        fmt_ns(span.as_nanos() as f64),
    );
    if interval > span {
        return Err(err(format!(
            "--interval {shown} is longer than {flag} {span_shown}: no interval of the series would be complete"
        )));
    }
    let n = span.as_nanos() / interval.as_nanos();
    let max = crate::workload::block::MAX_INTERVALS;
    if n > max as u128 {
        return Err(err(format!(
            "--interval {shown} over {flag} {span_shown} makes {n} {points} (at most {max}): use a longer --interval"
        )));
    }
    Ok(())
}

/// Whether `--allow-destroy` (if given) names `target`: naming anything else is an error.
pub(crate) fn allow_destroy_of(
    allow_destroy: Option<&Path>,
    target: &Path,
) -> Result<bool, UsageError> {
    let allowed = allow_destroy_matches(allow_destroy, target);
    if let Some(ad) = allow_destroy
        && !allowed
    {
        return Err(err(format!(
            "--allow-destroy {} does not name the target {} exactly",
            ad.display(),
            target.display()
        )));
    }
    Ok(allowed)
}

/// A read-only block device (`blockdev --setro`, `losetup -r`, a write-protected card)
/// cannot take `what` (a prefill, write tests): refused before anything runs, with how to
/// make it writable and, in `otherwise`, what can still be done with it. Without this check
/// `iolab run` and `iolab saturate` took it, failed on their first write with "Operation not
/// permitted (os error 1)" and exited 1 after an empty table.
pub(crate) fn refuse_read_only_device(
    dev: &Path,
    what: &str,
    otherwise: &str,
) -> Result<(), UsageError> {
    if !device_is_read_only(dev) {
        return Ok(());
    }
    let d = dev.display();
    Err(err(format!(
        "{d} is a read-only device; {what} needs a writable one (blockdev --setrw {d}, or a loop device set up without -r){otherwise}"
    )))
}

/// The room a test file has, said so it can be typed back: `--size 20380K at most` (a
/// refusal said "only 19.9 MiB free", and `--size 19.9M` is not a whole number of
/// bytes).
pub(crate) fn room_for_size(free: u64) -> String {
    format!("--size {}K at most", free / 1024)
}

/// A directory iolab writes its file into: not on a read-only file system (`needs` says
/// why that matters), writable.
pub(crate) fn check_dir_writable(dir: &Path, needs: &str) -> Result<(), UsageError> {
    if is_read_only_fs(dir) {
        return Err(err(format!(
            "{} is on a read-only file system; {needs}",
            dir.display()
        )));
    }
    if nix::unistd::access(dir, nix::unistd::AccessFlags::W_OK).is_err() {
        return Err(err(format!("{} is not writable", dir.display())));
    }
    Ok(())
}

/// An existing file as a target (`--allow-destroy FILE`): how long it is, and how much it
/// can hold before the file system is full: the blocks it has plus the free space beside
/// it. `run`, `saturate` and `sustain` check their size against it before anything is
/// written: the prefill writes every block of the tested size, and a file that may not grow
/// that far would fill the file system and end in ENOSPC, the file left grown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileRoom {
    /// The file's length in bytes.
    pub len: u64,
    /// Bytes the file can hold: its allocated blocks (a sparse file's holes need new
    /// space) plus the free space on its file system.
    pub room: u64,
}

impl FileRoom {
    /// The room of the existing file `file`.
    pub fn of(file: &Path) -> FileRoom {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(file).ok();
        let len = meta.as_ref().map_or(0, |m| m.len());
        let allocated = meta.as_ref().map_or(0, |m| m.blocks().saturating_mul(512));
        let dir = crate::os::dir_of(file);
        FileRoom {
            len,
            room: allocated.saturating_add(free_space(dir).unwrap_or(u64::MAX)),
        }
    }

    /// `the file FILE and the free space beside it (ROOM)`.
    pub fn describe(&self, file: &Path) -> String {
        format!(
            "the file {} and the free space beside it ({})",
            file.display(),
            crate::units::fmt_size_iec(self.room)
        )
    }

    /// May the file be tested over `size` bytes (`what`: where that size came from,
    /// `--size` or a default)? An error when it does not fit; else, when the file has to
    /// grow for it, the note that says so (the file keeps its new length).
    pub fn fit(&self, file: &Path, size: u64, what: &str) -> Result<Option<String>, UsageError> {
        use crate::units::fmt_size_iec;
        if size > self.room {
            let hint = if what == "--size" {
                "give a smaller --size"
            } else {
                "give a --size that fits"
            };
            return Err(err(format!(
                "{what} {}: larger than {}; writing that much would fill the file system; {hint}, or free some space",
                fmt_size_iec(size),
                self.describe(file)
            )));
        }
        Ok((size > self.len).then(|| {
            format!(
                "{} grows from {} to {} ({what}) and keeps that length after the test",
                file.display(),
                fmt_size_iec(self.len),
                fmt_size_iec(size)
            )
        }))
    }
}

/// The note when `--size` was cut to whole blocks (`run --size 10000001` tested 9,998,336
/// bytes and said nothing); `block` is what the size must be a multiple of, `why` says
/// what makes it that.
pub(crate) fn rounded_size_note(given: u64, size: u64, block: u64, why: &str) -> Option<String> {
    use crate::units::{fmt_size_iec, fmt_thousands};
    (size < given).then(|| {
        format!(
            "--size {} bytes rounded down to {} bytes ({}): a whole number of {} blocks ({why})",
            fmt_thousands(given as f64),
            fmt_thousands(size as f64),
            fmt_size_iec(size),
            fmt_size_iec(block)
        )
    })
}

/// The I/O buffers of a test are mapped and touched before it runs: per job, one buffer of
/// the block size per I/O in flight. More than half of the machine's memory was an abort
/// (`--bs 64M --iodepth 1024`: "memory allocation of 68721573888 bytes failed", exit 134,
/// the test file and lock left behind) or, below the kernel's refusal, the OOM killer.
/// `what` names the flags that made `bytes`; `ram` is MemTotal (0: unknown, no check).
pub(crate) fn check_buffer_memory(what: &str, bytes: u128, ram: u64) -> Result<(), UsageError> {
    if ram == 0 || bytes <= u128::from(ram / 2) {
        return Ok(());
    }
    let shown = u64::try_from(bytes).unwrap_or(u64::MAX);
    Err(err(format!(
        "{what} = {} of I/O buffers, more than half of this machine's memory ({}); lower them",
        crate::units::fmt_size_iec(shown),
        crate::units::fmt_size_iec(ram)
    )))
}

#[cfg(test)]
mod buffer_memory_tests {
    use super::*;

    #[test]
    fn buffers_beyond_half_the_memory_are_refused() {
        let gib = 1u64 << 30;
        let what = "--bs 64MiB x --iodepth 1024 x --jobs 1";
        let e = check_buffer_memory(what, 1024 * (64u128 << 20), 24 * gib).unwrap_err();
        assert_eq!(
            e.0,
            "--bs 64MiB x --iodepth 1024 x --jobs 1 = 64.0 GiB of I/O buffers, more than half of this machine's memory (24.0 GiB); lower them"
        );
        assert!(check_buffer_memory(what, u128::from(12 * gib), 24 * gib).is_ok());
        assert!(check_buffer_memory(what, u128::MAX, 0).is_ok());
    }

    #[test]
    fn a_size_cut_to_whole_blocks_is_said() {
        let note = super::rounded_size_note(10_000_001, 9_998_336, 4096, "--bs").unwrap();
        assert_eq!(
            note,
            "--size 10,000,001 bytes rounded down to 9,998,336 bytes (9.5 MiB): a whole number of 4.0 KiB blocks (--bs)"
        );
        assert_eq!(
            super::rounded_size_note(1 << 20, 1 << 20, 4096, "--bs"),
            None
        );
    }
}

#[cfg(test)]
mod keep_tests {
    use super::*;

    /// `--keep` on a device was accepted and did nothing, without a word.
    #[test]
    fn keep_needs_a_directory_target() {
        use crate::fs::facts::TargetKind::*;
        let dev = Path::new("/dev/sdz");
        let e = check_keep(true, &[(dev, BlockDevice)])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--keep") && e.contains("/dev/sdz is a block device"),
            "{e}"
        );
        let e = check_keep(true, &[(Path::new("f.img"), RegularFile)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("f.img is an existing file"), "{e}");
        assert!(check_keep(false, &[(dev, BlockDevice)]).is_ok());
        assert!(check_keep(true, &[(dev, BlockDevice), (Path::new("/mnt"), Directory)]).is_ok());
    }

    /// `--allow-destroy DIR` with a directory target was taken and meant nothing; run,
    /// sustain and saturate now refuse it (exit 2) with what it is for.
    #[test]
    fn allow_destroy_of_a_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_str().unwrap();
        let parse = |args: &[&str]| {
            let mut argv = vec!["iolab"];
            argv.extend_from_slice(args);
            crate::cli::try_parse_from(argv).unwrap().command
        };
        let why = |r: Result<(), UsageError>| r.unwrap_err().to_string();
        let refusals = [
            match parse(&["run", d, "--allow-destroy", d, "--size", "1M"]) {
                crate::cli::Command::Run(a) => {
                    why(crate::runner::run::RunConfig::from_args(&a).map(drop))
                }
                _ => unreachable!(),
            },
            match parse(&["sustain", d, "--allow-destroy", d, "--size", "8M"]) {
                crate::cli::Command::Sustain(a) => {
                    why(crate::runner::sustain::SustainConfig::from_args(&a).map(drop))
                }
                _ => unreachable!(),
            },
            match parse(&["saturate", d, "--allow-destroy", d, "--size", "8M"]) {
                crate::cli::Command::Saturate(a) => {
                    why(crate::workload::saturate::config::SaturateConfig::from_args(&a).map(drop))
                }
                _ => unreachable!(),
            },
        ];
        for e in refusals {
            assert!(
                e.starts_with(&format!("--allow-destroy {d}: it is a directory"))
                    && e.contains("leave --allow-destroy out"),
                "{e}"
            );
        }
        // A device named by it is still allowed (nothing here checks more than the kind).
        let dev = Path::new("/dev/sdz");
        use crate::fs::facts::TargetKind::*;
        assert!(check_allow_destroy_kind(&[dev.into()], &[(dev, BlockDevice)]).is_ok());
    }
}

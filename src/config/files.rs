//! `iolab files` options checked and resolved against the target (allocation unit, free
//! space, free inodes) before anything is created: every refusal is a `UsageError`.

use std::path::{Path, PathBuf};

use crate::cli::files::FilesArgs;
use crate::error::UsageError;
use crate::workload::files::FilesPreset;
use crate::workload::files::config::{FilesConfig, Phases};
use crate::workload::files::sizes::{alloc_unit, parse_sizes};

impl FilesConfig {
    pub fn from_args(a: &FilesArgs) -> Result<FilesConfig, UsageError> {
        let target = check_target(&a.target)?;
        let (n, p, k) = match a.preset.unwrap_or(FilesPreset::Quick) {
            FilesPreset::Quick => (500, 5, 2),
            FilesPreset::Full => (10_000, 20, 16),
        };
        let count = |v: Option<u64>, d: u64, flag: &str| -> Result<u64, UsageError> {
            match v.unwrap_or(d) {
                0 => Err(UsageError::new(format!("{flag} 0: at least 1 is needed"))),
                x => Ok(x),
            }
        };
        let files_per_portion = count(a.files_per_portion, n, "--files-per-portion")?;
        let portions = count(a.portions, p, "--portions")?;
        let passes = count(a.passes, k, "--passes")?;
        files_per_portion
            .checked_mul(portions)
            .and_then(|x| x.checked_mul(passes))
            .filter(|&x| x < 10_000_000_000)
            .ok_or_else(|| UsageError::new("too many files per run (at most 10^10)"))?;
        let repeat = crate::config::repeat_mode(&a.repeat).map_err(UsageError::new)?;
        let unit = alloc_unit(&target).ok_or_else(|| {
            UsageError::new(format!(
                "cannot read the allocation unit of {} (statvfs failed)",
                target.display()
            ))
        })?;
        let sizes = parse_sizes(&a.sizes, unit)?;
        if a.big == Some(0) {
            return Err(UsageError::new("--big 0: the big file needs a size"));
        }
        let phases = Phases::parse(&a.phases)?;
        if a.keep_files && phases.delete {
            return Err(UsageError::new(
                "--keep-files keeps the files, so --phases cannot hold delete",
            ));
        }
        if let Some(c) = a.cpu {
            let n = std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1);
            let allowed = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0))
                .map(|s| s.is_set(c).unwrap_or(false))
                .unwrap_or(c < n);
            if !allowed {
                return Err(UsageError::new(format!(
                    "--cpu {c}: not a CPU this process may run on"
                )));
            }
        }
        if a.jobs == 0 || a.jobs > 1024 {
            return Err(UsageError::new(format!(
                "--jobs {}: give 1 to 1024 writers",
                a.jobs
            )));
        }
        if a.jobs > 1 && (a.big.is_some() || a.keep_files) {
            return Err(UsageError::new(
                "--jobs runs the small-file phases only: leave out --big and --keep-files",
            ));
        }
        if a.shared_dir && a.jobs < 2 {
            return Err(UsageError::new(
                "--shared-dir puts several writers in the same directories: give --jobs 2 or more",
            ));
        }
        let cfg = FilesConfig {
            target,
            sizes,
            alloc_unit: unit,
            files_per_portion,
            portions,
            passes,
            repeat,
            method: a.method,
            sync: a.sync,
            layout: a.layout,
            phases,
            big: a.big,
            cpu: a.cpu,
            nice: a.nice,
            drop_caches: a.drop_caches,
            keep_files: a.keep_files,
            jobs: a.jobs,
            shared_dir: a.shared_dir,
            writer: None,
            output: a.out.dir().map(Path::to_path_buf),
            json: a.out.json,
        };
        if !a.no_room_check {
            cfg.check_room()?;
        }
        Ok(cfg)
    }

    fn check_room(&self) -> Result<(), UsageError> {
        let st = nix::sys::statvfs::statvfs(&self.target).map_err(|e| {
            UsageError::new(format!("{}: statvfs failed: {e}", self.target.display()))
        })?;
        let free = st.blocks_available() as u64 * st.fragment_size() as u64;
        let need = self.bytes_needed();
        if need > free {
            return Err(UsageError::new(format!(
                "{}: not enough room: the largest run needs about {} ({} files of up to {} in {} units), {} free; use fewer or smaller files (or --no-room-check to run until full)",
                self.target.display(),
                crate::units::fmt_size_iec(need),
                crate::units::fmt_thousands(self.files_per_run() as f64),
                crate::units::fmt_size_exact(self.sizes.iter().map(|s| s.bytes).max().unwrap_or(0)),
                crate::units::fmt_size_exact(self.alloc_unit),
                crate::units::fmt_size_iec(free)
            )));
        }
        // Some file systems (btrfs, some FUSE) report no inode limit: nothing to check.
        let runs = if self.keep_files {
            self.sizes.len() as u64 * self.repeat.max_runs() as u64
        } else {
            1
        };
        let inodes =
            (self.files_per_run() + self.dirs_per_run() + 2) * runs * u64::from(self.jobs.max(1));
        if st.files() > 0 && inodes > st.files_available() as u64 {
            return Err(UsageError::new(format!(
                "{}: more files than free inodes: a run creates {} files and directories, {} inodes are free",
                self.target.display(),
                crate::units::fmt_thousands(inodes as f64),
                crate::units::fmt_thousands(st.files_available() as f64)
            )));
        }
        Ok(())
    }
}

/// The target must exist, be a directory, and be writable (checked with access(2), so
/// nothing is created to find out).
fn check_target(t: &Path) -> Result<PathBuf, UsageError> {
    let md = std::fs::metadata(t)
        .map_err(|e| UsageError::new(format!("--target {}: {e}", t.display())))?;
    if !md.is_dir() {
        return Err(UsageError::new(format!(
            "--target {}: not a directory",
            t.display()
        )));
    }
    if crate::fs::facts::is_read_only_fs(t) {
        return Err(UsageError::new(format!(
            "--target {}: the file system is mounted read-only",
            t.display()
        )));
    }
    if nix::unistd::access(
        t,
        nix::unistd::AccessFlags::W_OK | nix::unistd::AccessFlags::X_OK,
    )
    .is_err()
    {
        return Err(UsageError::new(format!(
            "--target {}: not writable by this user",
            t.display()
        )));
    }
    std::fs::canonicalize(t).map_err(|e| UsageError::new(format!("--target {}: {e}", t.display())))
}

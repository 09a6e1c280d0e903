//! `iolab files`: options -> result sink -> the small-file runs (saved after every run) ->
//! Belov's Table 2 (seconds per N files, "mean (run1, run2, run3)") plus files/s and MB/s.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::family::{DirFamily, Family, FileMaking, Output, execute as execute_family};
use crate::cli::files::FilesArgs;
use crate::model::{ResultDoc, ResultSink};
use crate::runner::RunContext;
use crate::workload::files::config::FilesConfig;
use crate::workload::files::run::run_with;

impl crate::cli::Execute for FilesArgs {
    fn execute(&self, argv: Vec<String>) -> anyhow::Result<i32> {
        let args = self;
        #[cfg(feature = "mpi")]
        if crate::dist::launched().is_some_and(|l| l.size > 1) {
            return crate::dist::files::execute(args, argv);
        }
        execute_family(FilesFamily::from_args(args)?, argv)
    }

    fn check(&self) -> Result<(), String> {
        super::family::check(crate::workload::files::config::FilesConfig::from_args(self))
    }
}

/// `iolab files` as a family: the command line and the matrix's `files:` workloads.
pub struct FilesFamily {
    cfg: FilesConfig,
    /// Where `--keep` left the files.
    kept: Option<PathBuf>,
}

impl Family for FilesFamily {
    const NAME: &'static str = "files";

    fn output(&self) -> Output<'_> {
        Output::on(&self.cfg.target, &self.cfg.out)
    }

    fn start(&mut self, doc: &mut ResultDoc) {
        for s in self.cfg.sizes.iter().filter(|s| !s.same_as.is_empty()) {
            doc.warn(crate::model::Warning {
                code: crate::model::WarningCode::SizesMerged,
                message: format!(
                    "--sizes: {} came to {} on this file system, as '{}': measured once, as {}",
                    s.same_as
                        .iter()
                        .map(|t| format!("'{t}'"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    crate::units::fmt_size_exact(s.bytes),
                    s.token,
                    s.label()
                ),
                test: None,
            });
        }
    }

    fn measure(&mut self, ctx: &RunContext, doc: &mut ResultDoc, sink: &ResultSink) -> Result<()> {
        if self.cfg.jobs > 1 {
            return super::files_jobs::measure(&self.cfg, ctx, doc, sink);
        }
        self.kept = run_with(&self.cfg, ctx, doc, sink)?;
        Ok(())
    }

    fn render(&self, doc: &ResultDoc) -> String {
        crate::report::files::render_files_table(doc) + &super::files_jobs::render_jobs(doc)
    }

    fn afterword(&self, _doc: &ResultDoc) -> Vec<String> {
        self.kept
            .iter()
            .map(|k| format!("files kept in {}", k.display()))
            .collect()
    }
}

/// `files:KEY=VALUE:...` for the matrix: any `iolab files` flag, e.g.
/// `files:sizes=1,4K:files-per-portion=1000`.
impl DirFamily for FilesFamily {
    type Args = FilesArgs;

    fn check_reference(args: &FilesArgs) -> Result<(), crate::error::UsageError> {
        crate::cli::files::check_without_target(args)
    }

    fn retarget(args: &mut FilesArgs, dir: &Path) {
        args.target = dir.to_path_buf();
        args.out.no_save = true;
        args.keep_files = false;
    }

    fn set_unit(args: &mut FilesArgs, unit: u64) {
        args.alloc_unit = Some(unit);
    }

    fn from_args(args: &FilesArgs) -> Result<FilesFamily> {
        Ok(FilesFamily {
            cfg: FilesConfig::from_args(args)?,
            kept: None,
        })
    }

    /// Every size is made in directories of its own each run: one for all the run's files
    /// (`--layout flat`), one per pass or one per portion; each writer of `--jobs` has its
    /// own, unless `--shared-dir` puts all writers' files in the same ones.
    fn file_making(args: &FilesArgs) -> Option<FileMaking> {
        use crate::cli::files::Layout;
        let (per_portion, portions, passes) = crate::cli::files::counts(args).ok()?;
        let runs = crate::cli::run::repeat_mode(&args.repeat).ok()?.min_runs();
        let sizes = args
            .sizes
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .count() as u64;
        let (dirs, per_dir) = match args.layout {
            Layout::Flat => (1, per_portion * portions * passes),
            Layout::PerPass => (passes, per_portion * portions),
            Layout::PerPortion => (passes * portions, per_portion),
        };
        let writers = u64::from(args.jobs.max(1));
        let (dirs, per_dir) = if args.shared_dir {
            (dirs, per_dir * writers)
        } else {
            (dirs * writers, per_dir)
        };
        Some(FileMaking {
            directories: dirs * sizes,
            files_per_directory: per_dir,
            writers,
            runs: u64::from(runs),
        })
    }
}

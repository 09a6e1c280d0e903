//! One path for every measuring subcommand. A family (`run`, `files`, `copy`, `trace run`,
//! `trace replay`, `saturate`, `matrix`, `slack`) says what it locks, where its result goes,
//! how it measures into the result document and how that renders; `execute` owns the rest:
//! the locks, the run context and its signal handlers, the result file, the document, its
//! final status, saving, recording in the history (`crate::history::record_run`), and the
//! JSON or the table with the "results: PATH" line, and the drive's temperature during the
//! measurement (`sysinfo::heat`), for every family.
//!
//! A family that can run on any directory (`DirFamily`) also runs in `iolab matrix`: `resolve`
//! turns a workload reference (`files:sizes=1,4K`) into the family's own arguments, parsed
//! by its clap definitions, and the matrix measures it through the same `measure`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::os::text::{terminal, terminal_lines};

use crate::error::UsageError;
use crate::model::{Delivery, ResultDoc, ResultSink, TestResult, Warning};
use crate::runner::{ProgressMode, RunContext};

/// What a family measures, where its result goes and how it runs.
pub struct Output<'a> {
    /// The one directory, file or device the run measures, when there is one: it is locked
    /// and its environment recorded unless `locks` / `environment_path` say otherwise.
    pub target: Option<&'a Path>,
    /// JSON or table, the result directory, quiet.
    pub delivery: &'a Delivery,
    /// The run context's seed, for a family with its own `--seed` (else the default).
    pub seed: Option<u64>,
}

impl<'a> Output<'a> {
    /// As the validated config's `--json`, `--output`, `--no-save` and `--quiet` say, with
    /// the default seed.
    pub fn to(delivery: &'a Delivery) -> Output<'a> {
        Output {
            target: None,
            delivery,
            seed: None,
        }
    }

    /// The same on `target`.
    pub fn on(target: &'a Path, delivery: &'a Delivery) -> Output<'a> {
        Output {
            target: Some(target),
            ..Output::to(delivery)
        }
    }
}

/// `Execute::check` of a family: its validation, with nothing created, as the message the
/// command line would print.
pub fn check<T, E: std::fmt::Display>(validated: Result<T, E>) -> Result<(), String> {
    validated.map(drop).map_err(|e| e.to_string())
}

/// A measuring subcommand, as `execute` runs it.
pub trait Family {
    /// The subcommand: the document's `command` and the result file's name prefix.
    const NAME: &'static str;
    /// The table is printed also after a failure or an interrupt (slack prints none then).
    /// `--json` prints the document whatever happened: its `status` and `error` say it.
    const OUTPUT_ON_ERROR: bool = true;

    /// The target, JSON or table, the result directory, quiet, seed.
    fn output(&self) -> Output<'_>;
    /// Paths held with a `TargetLock` for the whole run (one iolab per target). A family
    /// without a single target must say which (or that none need it).
    fn locks(&self) -> Vec<&Path> {
        self.output().target.into_iter().collect()
    }
    /// Work after the signal handlers are in and before the result file is claimed (the
    /// matrix: its work directory, state file and mount-option probe).
    fn prepare(&mut self, _ctx: &RunContext) -> Result<()> {
        Ok(())
    }
    /// The path whose environment (file system, device, mount) the document records.
    fn environment_path(&self) -> PathBuf {
        self.output()
            .target
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
    }
    /// Warnings (and stderr notes) at the start of the document.
    fn start(&mut self, _doc: &mut ResultDoc) {}
    /// Measure into `doc`, saving it through `sink` after every test.
    fn measure(&mut self, ctx: &RunContext, doc: &mut ResultDoc, sink: &ResultSink) -> Result<()>;
    /// The text output (the table).
    fn render(&self, doc: &ResultDoc) -> String;
    /// Lines on stderr after the output, before "results: PATH".
    fn notes(&self, _doc: &ResultDoc) -> Vec<String> {
        Vec::new()
    }
    /// Lines on stderr after "results: PATH" (e.g. "files kept in DIR").
    fn afterword(&self, _doc: &ResultDoc) -> Vec<String> {
        Vec::new()
    }
    /// The exit code of a run that ended without an error.
    fn exit_code(&self, _doc: &ResultDoc) -> i32 {
        0
    }
}

/// Whether this process is one rank of several under mpirun/srun, so `command` runs
/// distributed (src/dist); refuses `--steadystate` there (each rank's drive would reach it
/// on its own).
#[cfg(feature = "mpi")]
pub fn distributed(command: &str, steady: &crate::cli::run::SteadyArgs) -> Result<bool> {
    if crate::dist::launched().is_none_or(|l| l.size <= 1) {
        return Ok(false);
    }
    if steady.steadystate.is_some() {
        return Err(UsageError::new(format!(
            "--steadystate is not available in a distributed {command} (each rank's drive reaches it on its own); run it on each host alone"
        ))
        .into());
    }
    Ok(true)
}

/// Run a family: catch signals, lock, claim the result file, measure, record the final
/// status (complete, interrupted, failed), save, print JSON or the table.
pub fn execute<F: Family>(mut family: F, argv: Vec<String>) -> Result<i32> {
    debug_assert!(
        crate::cli::MEASURING_COMMANDS.contains(&F::NAME),
        "add {} to MEASURING_COMMANDS",
        F::NAME
    );
    let out = family.output();
    let (json, dir, quiet) = (
        out.delivery.json,
        out.delivery.dir.clone(),
        out.delivery.quiet,
    );
    let mut ctx = RunContext::new(ProgressMode::detect(quiet));
    if let Some(seed) = out.seed {
        ctx.seed = seed;
    }
    // Signals first: a Ctrl-C from here on is caught and everything below is cleaned up
    // (before, one between taking the lock and installing the handlers left the lock file).
    ctx.stop
        .install()
        .context("cannot install signal handlers")?;
    let _locks = family
        .locks()
        .into_iter()
        .map(crate::runner::lock::TargetLock::acquire)
        .collect::<Result<Vec<_>, _>>()?;
    family.prepare(&ctx)?;
    let sink = ResultSink::create(dir.as_deref(), F::NAME)?;
    if let Some(p) = &sink.claimed_empty {
        crate::fs::registry::record_empty_result(p);
    }
    let env = crate::sysinfo::capture_environment(&family.environment_path());
    let mut doc = ResultDoc::new(F::NAME, argv, env);
    if let Some(p) = &sink.path {
        // A kill from here on: the next start marks the file `killed`, not left `running`.
        crate::fs::registry::record_result(p, &doc);
    }
    // Paths as text (lossy): `json!` panics on a path that is not UTF-8.
    let result_path = sink.path.as_ref().map(|p| p.display().to_string());
    if crate::runner::progress::json_stream_on() {
        crate::runner::progress::emit(
            "start",
            serde_json::json!({ "command": F::NAME, "pid": std::process::id(), "result_path": result_path }),
        );
    }
    family.start(&mut doc);
    // The drive's heat, watched on a thread for the whole measurement (nothing where no
    // sensor can be read).
    let heat = crate::sysinfo::heat::HeatWatch::start(&doc.environment, Path::new("/"));
    let outcome = family.measure(&ctx, &mut doc, &sink);
    if let Some(h) = heat {
        let (record, warning) = h.finish();
        doc.thermal = record;
        if let Some(w) = warning {
            doc.warn(w);
        }
    }
    doc.finish(&outcome);
    let saved = sink.save(&doc);
    if saved.is_ok() {
        crate::fs::registry::result_saved(sink.path.as_deref());
    }
    if saved.is_err() {
        // The result file could not be written: the history may keep the only copy.
        crate::history::record_run(&doc, None);
    }
    if crate::runner::progress::json_stream_on() {
        crate::runner::progress::emit(
            "result",
            serde_json::json!({
                "command": F::NAME,
                "status": doc.status,
                "path": result_path,
                "error": doc.error,
            }),
        );
    }
    saved?;
    if outcome.is_ok() || F::OUTPUT_ON_ERROR || json {
        if json {
            crate::outln!("{}", serde_json::to_string_pretty(&doc)?);
        } else {
            // Every table cell that shows outside text escapes it; this is the guard behind
            // them: no escape sequence in a family's output reaches the terminal.
            crate::out!("{}", terminal_lines(&family.render(&doc)));
        }
        crate::flush_stdout();
        if let Some(line) = aged_note(F::NAME, &doc) {
            crate::eline!("{}", terminal(&line));
        }
        for line in family.notes(&doc) {
            crate::eline!("{}", terminal(&line));
        }
        if let Some(line) = doc
            .thermal
            .as_ref()
            .and_then(crate::sysinfo::heat::describe)
        {
            crate::eline!("iolab: {line}");
        }
        // On stderr, also after JSON (stdout holds the document only), for every family:
        // only saturate's said where its file went.
        if let Some(p) = &sink.path {
            crate::eline!("results: {}", terminal(&p.display().to_string()));
        }
        // -q keeps the result, warnings, errors and "results:" only: `age -q` said where the
        // aged tree stays (its table's first line names it already).
        if !quiet {
            for line in family.afterword(&doc) {
                crate::eline!("{}", terminal(&line));
            }
        }
    }
    // The history, once the output is out (its SMART snapshot or a busy database never
    // delays the table); never fails: a problem is one warning line.
    crate::history::record_run(&doc, sink.path.as_deref());
    if let Err(e) = &outcome
        && let Some(i) = crate::error::interrupted(e)
    {
        // Say what was kept: the tests finished, or only the interruption when none had
        // (an age stopped midway said "partial results saved" of a file with no test), or
        // nothing with --no-save.
        let measured = holds_measurement(&doc);
        let kept = match &sink.path {
            Some(_) if measured => "partial results saved".to_string(),
            Some(p) => format!(
                "no test had finished: nothing measured to save ({} records the interruption only)",
                p.display()
            ),
            None => "nothing saved (--no-save)".to_string(),
        };
        crate::eline!("iolab: interrupted by {}; {kept}", i.signal_name);
        return Err(crate::error::Reported {
            message: format!("interrupted by {}", i.signal_name),
            code: crate::error::exit_code_for(e),
        }
        .into());
    }
    outcome?;
    Ok(family.exit_code(&doc))
}

/// Whether an interrupted document holds anything measured: a test with a finished run or
/// none stopped (`age`'s one test comes only at its end; a test stopped before its first run
/// finished has an error and no run), a matrix configuration's, or slack's partial scan.
fn holds_measurement(doc: &ResultDoc) -> bool {
    let holds = |t: &TestResult| t.error.is_none() || !t.runs.is_empty();
    doc.tests.iter().any(holds)
        || doc.configurations.iter().any(|c| c.tests.iter().any(holds))
        || doc.slack.is_some()
}

/// A family that runs on any directory, so the matrix can run it on every file system it
/// mounts (a workload reference `FAMILY:KEY=VALUE...`).
pub trait DirFamily: Family + Sized {
    /// The subcommand's parsed arguments.
    type Args: Clone + Send + Sync + clap::Args + clap::FromArgMatches + 'static;

    /// Reference parameters (keys are flag names) -> the subcommand's arguments, parsed with
    /// its own clap definitions (`cli::reference::parse_args`) and checked as far as
    /// possible before the matrix formats anything, and the label of the tables. By
    /// default: any flag of `iolab NAME` but the target and the result directory, labelled
    /// `NAME:KEY=VALUE...`.
    fn reference(params: &BTreeMap<String, String>) -> Result<(Self::Args, String), UsageError> {
        use crate::cli::reference::{label, matrix_sets_target, parse_args};
        matrix_sets_target(Self::NAME, params)?;
        let args = parse_args(Self::NAME, &[], params)?;
        Self::check_reference(&args)?;
        Ok((args, label(Self::NAME, params)))
    }
    /// The subcommand's checks that need no target, run on a parsed reference (by the
    /// default `reference`) so that a bad value is refused before the matrix formats
    /// anything: `run:duration=0s` is exit 2 up front, not a failure on every file system.
    fn check_reference(_args: &Self::Args) -> Result<(), UsageError> {
        Ok(())
    }
    /// Point the arguments at `dir`, with no result file of their own and nothing kept.
    fn retarget(args: &mut Self::Args, dir: &Path);
    /// The allocation unit the matrix read back from the file system it made, for a family
    /// whose sizes depend on it (`files`: `cluster+1` and the space predicted). By default
    /// ignored.
    fn set_unit(_args: &mut Self::Args, _unit: u64) {}
    /// The validated family (every check of the subcommand).
    fn from_args(args: &Self::Args) -> Result<Self>;
    /// The files the workload makes, directory by directory, where that is what it does
    /// (`files`): the matrix says before it starts how long a file system that makes files
    /// slowly (fusefat) will take. By default none.
    fn file_making(_args: &Self::Args) -> Option<FileMaking> {
        None
    }
}

/// The files a workload makes on each file system, directory by directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileMaking {
    /// Directories filled in one run, by all writers together.
    pub directories: u64,
    /// Files made in each of them.
    pub files_per_directory: u64,
    /// Writers filling directories side by side (their time may overlap).
    pub writers: u64,
    /// Runs of the workload on each file system, at the least.
    pub runs: u64,
}

impl FileMaking {
    /// The least seconds fusefat takes to make these files on one file system.
    pub fn fusefat_seconds(&self) -> f64 {
        crate::fs::fusefat::fill_seconds(self.files_per_directory)
            * self.directories as f64
            * self.runs as f64
            / self.writers.max(1) as f64
    }
}

/// What a workload produced on one target directory.
#[derive(Debug, Default)]
pub struct WorkloadOutput {
    pub tests: Vec<TestResult>,
    pub warnings: Vec<Warning>,
    /// The stop (Ctrl-C, SIGTERM) that ended the workload after `tests`, which finished
    /// before it and are kept, as the family's own command keeps them.
    pub stopped: Option<anyhow::Error>,
}

/// A workload the matrix runs on each file system (any `DirFamily`, see `resolve`).
pub trait DirWorkload: Send + Sync {
    /// Short label for tables: `run:preset=real`, `files:sizes=4K`, `copy:media-mix`.
    fn label(&self) -> String;
    /// Run once on `dir` (a fresh, empty file system's mount point or a subdirectory).
    fn run_on(&self, dir: &Path, ctx: &RunContext) -> Result<WorkloadOutput>;
    /// The files it makes, directory by directory, where that is what it does.
    fn file_making(&self) -> Option<FileMaking> {
        None
    }
    /// `run_on` on a file system whose allocation unit is known (read back after mkfs).
    fn run_on_unit(
        &self,
        dir: &Path,
        _unit: Option<u64>,
        ctx: &RunContext,
    ) -> Result<WorkloadOutput> {
        self.run_on(dir, ctx)
    }
}

/// Said under a result measured on a file system `iolab age` aged (a run on one recorded
/// nothing of it, and read as on a fresh file system); not under the aging itself.
fn aged_note(command: &str, doc: &ResultDoc) -> Option<String> {
    let s = doc.environment.fs_state.as_ref()?;
    (command != "age" && !s.aged_trees.is_empty()).then(|| {
        format!(
            "iolab: the target's file system was {} by `iolab age`: this result describes an aged file system (environment.fs_state)",
            s.describe()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// "partial results saved" was said of documents with nothing measured in them.
    #[test]
    fn only_a_document_with_a_measurement_holds_one() {
        let mut doc = ResultDoc::new("age", Vec::new(), crate::model::Environment::default());
        assert!(!holds_measurement(&doc), "age stopped midway: no test");
        doc.tests.push(TestResult {
            error: Some("interrupted by SIGINT".into()),
            ..TestResult::default()
        });
        assert!(!holds_measurement(&doc), "a test stopped in its first run");
        doc.tests[0].runs.push(crate::model::RunResult::default());
        assert!(holds_measurement(&doc), "one run finished");
        let mut slack = ResultDoc::new("slack", Vec::new(), crate::model::Environment::default());
        slack.slack = Some(Default::default());
        assert!(holds_measurement(&slack), "a stopped scan's counts");
    }
}

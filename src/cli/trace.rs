//! `iolab trace` arguments: run a workload (built-in or TOML file), list the built-ins,
//! record a program's file I/O with strace, replay a recording.
//!
//! `iolab trace run` (and the matrix's `trace:` workloads), `record` and `replay`: the
//! command line to checked settings; for run, the plan — the workload loaded and scaled, the repeats, the target's room — before anything
//! is created. The plan itself lives with the code that runs it (workload/trace/measure.rs).

use super::run::RepeatArgs;
use crate::error::UsageError;
use crate::workload::trace::measure::{self, Plan};
use crate::workload::trace::record::RecordSettings;
pub use crate::workload::trace::record::Recorder;
use crate::workload::trace::replay::ReplaySettings;
pub use crate::workload::trace::replay::Timing;
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
pub struct TraceArgs {
    #[command(subcommand)]
    pub cmd: TraceCmd,
}

#[derive(Debug, Clone, Subcommand)]
pub enum TraceCmd {
    /// Run an application workload (a built-in name or a TOML workload file) on a directory.
    Run(TraceRunArgs),
    /// List the built-in workloads.
    List(TraceListArgs),
    /// Record a program's file I/O (kernel tracepoints, or strace) as a trace file.
    Record(TraceRecordArgs),
    /// Replay a recorded trace on a directory.
    Replay(TraceReplayArgs),
    /// What a trace file says: shares, sizes, sequentiality, queue depth, working set.
    Summary(TraceSummaryArgs),
}

#[derive(Debug, Clone, Args)]
pub struct TraceSummaryArgs {
    /// Trace file written by `iolab trace record`.
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,

    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Args)]
pub struct TraceRunArgs {
    /// Built-in workload name (see `iolab trace list`) or path to a TOML workload file.
    #[arg(value_name = "NAME|FILE")]
    pub workload: String,

    /// Directory to run in (iolab creates and removes its own subdirectory there). Also
    /// taken as a word after the workload: `iolab trace run office /mnt/test`.
    #[arg(long, short = 't', value_name = "DIR", default_value = ".")]
    pub target: PathBuf,

    /// The target as a word, the same as -t/--target.
    #[arg(value_name = "DIR", conflicts_with = "target")]
    pub target_pos: Option<PathBuf>,

    /// Multiply file sizes, amounts and durations (0.01 for a quick try; 2 for a bigger set).
    #[arg(
        long,
        allow_negative_numbers = true,
        value_name = "F",
        default_value_t = 1.0
    )]
    pub scale: f64,

    #[command(flatten)]
    pub repeat: RepeatArgs,

    #[command(flatten)]
    pub out: super::OutputArgs,
}

#[derive(Debug, Clone, Args)]
pub struct TraceListArgs {
    /// Print the built-ins' full TOML text too.
    #[arg(long)]
    pub verbose: bool,

    /// Print the list as JSON (name, description; with --verbose the TOML text too), as
    /// `iolab copy --dataset list --json` and `iolab age --list-profiles --json` do.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Args)]
pub struct TraceRecordArgs {
    /// Trace file to write (JSON lines; see docs/workloads.md); an existing directory gets
    /// `iolab.trace` inside it.
    #[arg(long = "output", short = 'o', value_name = "FILE")]
    pub output: PathBuf,

    /// Only calls on paths under this directory are kept, stored relative to it
    /// [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,

    /// Which recorder to use.
    #[arg(long, value_enum, default_value = "auto")]
    pub recorder: Recorder,

    /// Keep the time stamps as recorded. By default the tracepoints recorder measures its
    /// own cost per call (about a microsecond) and takes it out, so that a replay with
    /// `--timing recorded` keeps the program's pace, not the recorder's.
    #[arg(long)]
    pub raw_times: bool,

    /// The program and its arguments (after `--`). iolab exits with the program's exit
    /// status (128 + N when signal N ended it), as strace and time do; the trace is written
    /// either way.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMMAND"
    )]
    pub command: Vec<String>,
}

#[derive(Debug, Clone, Args)]
pub struct TraceReplayArgs {
    /// Trace file written by `iolab trace record`.
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,

    /// Directory to replay in (iolab creates its own subdirectory there). Also taken as a
    /// word after the trace: `iolab trace replay app.trace /mnt/test`.
    #[arg(long, short = 't', value_name = "DIR", default_value = ".")]
    pub target: PathBuf,

    /// The target as a word, the same as -t/--target.
    #[arg(value_name = "DIR", conflicts_with = "target")]
    pub target_pos: Option<PathBuf>,

    /// As fast as possible, or at the recorded times.
    #[arg(long, value_enum, default_value = "asap")]
    pub timing: Timing,

    /// Keep the replayed files (the subdirectory is printed) instead of removing them.
    #[arg(long)]
    pub keep: bool,

    #[command(flatten)]
    pub repeat: RepeatArgs,

    #[command(flatten)]
    pub out: super::OutputArgs,
}

impl Plan {
    pub fn from_args(a: &TraceRunArgs) -> Result<Plan, UsageError> {
        measure::check_scale(a.scale)?;
        let loaded = crate::workload::trace::load(&a.workload)?;
        let repeat = crate::cli::run::repeat_mode(&a.repeat).map_err(UsageError::new)?;
        let workload = loaded.workload.scaled(a.scale);
        let sets = crate::workload::trace::fileset::layout(&workload, &a.target, 0);
        super::checks::refuse_deleted_dir(&a.target)?;
        measure::check_target(
            &a.target,
            crate::workload::trace::fileset::bytes_needed(&workload, &sets),
            "use --scale to shrink",
        )?;
        Ok(Plan {
            label: loaded.workload.name.clone(),
            workload,
            source: loaded.source,
            scale: a.scale,
            target: a.target.clone(),
            repeat,
        })
    }
}

impl From<&TraceRecordArgs> for RecordSettings {
    fn from(a: &TraceRecordArgs) -> RecordSettings {
        // The command, root and output are checked by `record::execute` (a missing program
        // is exit 2 there, once the recorder is chosen).
        RecordSettings {
            command: a.command.clone(),
            root: a.root.clone(),
            output: match a.output.is_dir() {
                true => a.output.join("iolab.trace"),
                false => a.output.clone(),
            },
            recorder: a.recorder,
            raw_times: a.raw_times,
        }
    }
}

impl ReplaySettings {
    pub fn from_args(a: &TraceReplayArgs) -> Result<ReplaySettings, UsageError> {
        super::checks::refuse_deleted_dir(&a.target)?;
        let repeat = crate::cli::run::repeat_mode(&a.repeat).map_err(UsageError::new)?;
        Ok(ReplaySettings {
            trace: a.trace.clone(),
            target: a.target.clone(),
            timing: a.timing,
            keep: a.keep,
            repeat,
        })
    }
}

//! Command-line definitions (clap derive) only: one subcommand per workload family. Values
//! are checked and turned into runtime configs in `config.rs` and the command modules.

pub mod compare;
pub mod copy;
pub mod files;
pub mod info;
pub mod matrix;
pub mod report;
pub mod run;
pub mod saturate;
pub mod slack;
pub mod trace;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// A storage and file-system benchmark lab: disk speed with latency percentiles, real file
/// systems formatted and compared, small-file floods, data-set copies and application traces.
#[derive(Debug, Parser)]
#[command(name = "iolab", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Quick disk test (CrystalDiskMark-like) of the file system under a directory, a file
    /// or a block device, with latency percentiles and the spread between repeats.
    Run(run::RunArgs),
    /// How many parallel requests the storage serves before latency breaks a limit.
    Saturate(saturate::SaturateArgs),
    /// Small-file tester: portions x passes of copies of a reference file (seed 000).
    Files(files::FilesArgs),
    /// Data-set copies (media mix, ISO, source tree) to and from the target, and deletion.
    Copy(copy::CopyArgs),
    /// Application workloads as data: NASPT-like built-ins, record and replay.
    Trace(trace::TraceArgs),
    /// Format, mount and compare real file systems, cluster sizes and mount options.
    Matrix(matrix::MatrixArgs),
    /// Cluster slack and the optimal allocation unit for a tree of files.
    Slack(slack::SlackArgs),
    /// What is under a path: mount, file system, block device, health.
    Info(info::InfoArgs),
    /// SSD lifetime from its rated TBW and a daily write volume.
    Endurance(info::EnduranceArgs),
    /// Turn result files into HTML, Markdown or CSV.
    Report(report::ReportArgs),
    /// Compare result files test by test, with significance.
    Compare(compare::CompareArgs),
    /// Print shell completions.
    Completions(report::CompletionsArgs),
    /// Print the man page (roff).
    Man,
}

/// Where and how results are written (shared by every measuring subcommand).
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Directory for the result JSON (one file per invocation, rewritten after every test).
    #[arg(long, value_name = "DIR", default_value = "iolab-results")]
    pub output: PathBuf,

    /// Do not write a result file.
    #[arg(long)]
    pub no_save: bool,

    /// Print the result model (JSON) to stdout instead of the table.
    #[arg(long)]
    pub json: bool,
}

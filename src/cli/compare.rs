//! `iolab compare` arguments.

use std::path::PathBuf;

use clap::Args;

/// Tests are matched by (configuration, name). For each, the change in % with its 95 %
/// uncertainty, a verdict (faster / slower / no significant difference: Welch's t-test at
/// 95 %, or a one-run t-test when a side has one run) and the relative speed.
#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// Two or more result files (or directories of them); the first is the baseline.
    #[arg(required = true, num_args = 1..)]
    pub results: Vec<PathBuf>,

    /// Print the comparison as JSON.
    #[arg(long)]
    pub json: bool,

    /// Compare every metric the tests share (default: the headline metric and latency).
    #[arg(long)]
    pub all_metrics: bool,
}

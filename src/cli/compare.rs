//! `iolab compare` arguments.

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// Two or more result files; the first is the baseline.
    #[arg(required = true, num_args = 2..)]
    pub results: Vec<PathBuf>,

    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

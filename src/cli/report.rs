//! `iolab report` and `iolab completions` arguments.

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// Result files or directories of them.
    #[arg(required = true)]
    pub results: Vec<PathBuf>,

    /// Output file: .html, .md or .csv.
    #[arg(short = 'o', long)]
    pub output: PathBuf,
}

#[derive(Debug, Clone, Args)]
pub struct CompletionsArgs {
    /// Shell.
    pub shell: clap_complete::Shell,
}

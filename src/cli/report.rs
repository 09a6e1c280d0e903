//! `iolab report` and `iolab completions` arguments.

use std::path::PathBuf;

use clap::Args;

/// The format follows the output's extension: `.html` (one self-contained file: tables,
/// inline SVG charts, warnings), `.md` (Markdown tables) or `.csv` (one row per test × run).
/// Every input is checked first; nothing is written when one is bad.
#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// Result files, or directories of them (their `*.json`).
    #[arg(required = true)]
    pub results: Vec<PathBuf>,

    /// Output file: report.html, report.md or results.csv.
    #[arg(short = 'o', long)]
    pub output: PathBuf,
}

#[derive(Debug, Clone, Args)]
pub struct CompletionsArgs {
    /// Shell.
    pub shell: clap_complete::Shell,
}

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

    /// Output file: report.html, report.md or results.csv (the format follows the
    /// extension); an existing directory gets report.html inside it.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: PathBuf,
}

impl ReportArgs {
    /// The file to write: `--output`, or `report.html` in it when it is a directory.
    pub fn output_file(&self) -> PathBuf {
        match self.output.is_dir() {
            true => self.output.join("report.html"),
            false => self.output.clone(),
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct ManArgs {
    /// The subcommand whose page to print (`run`, `trace record`); none: iolab's own page,
    /// whose SUBCOMMANDS section names the others (iolab-run(1), ...).
    #[arg(value_name = "SUBCOMMAND")]
    pub command: Vec<String>,

    /// Write every page (iolab.1, iolab-run.1, iolab-trace-record.1, ...) into DIR instead
    /// (made if missing), e.g. `iolab man --dir /usr/local/share/man/man1`.
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    pub dir: Option<std::path::PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct CompletionsArgs {
    /// Shell.
    pub shell: clap_complete::Shell,
}

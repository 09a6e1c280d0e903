//! `iolab history` arguments, and the `--history` / `--no-history` flags of the commands
//! that record in the history or read it.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

/// Where results are recorded: flags of the commands that record (every measuring command,
/// through `OutputArgs`), of `iolab serve` and of `iolab history` (global within its
/// subcommands), and before any subcommand (`iolab --no-history slack`, as the console
/// starts its tests). `iolab info --help` listed them, and `iolab info --no-history` was
/// accepted, though neither records nor reads a result.
#[derive(Debug, Clone, Default, Args)]
pub struct HistoryFlags {
    /// The history database [default: $IOLAB_HISTORY, else
    /// $XDG_DATA_HOME/iolab/history.sqlite, else ~/.local/share/iolab/history.sqlite].
    /// Every measuring command records its result there; `iolab history` reads it.
    #[arg(long, global = true, value_name = "PATH", display_order = 1000)]
    pub history: Option<PathBuf>,

    /// Do not record this run's result in the history (also: IOLAB_NO_HISTORY=1, unless
    /// --history names one).
    #[arg(long, global = true, display_order = 1001)]
    pub no_history: bool,
}

impl HistoryFlags {
    /// Were any of the flags given?
    pub fn given(&self) -> bool {
        self.history.is_some() || self.no_history
    }

    /// These flags, else `outer`'s (given before the subcommand).
    pub fn or(&self, outer: &HistoryFlags) -> HistoryFlags {
        HistoryFlags {
            history: self.history.clone().or_else(|| outer.history.clone()),
            no_history: self.no_history || outer.no_history,
        }
    }
}

/// Every result you measured, kept: list, show, export, import, and a test's figure on one
/// device over time. With no subcommand: the newest results (`list`). The list's flags
/// given before a subcommand are moved after it by `cli::try_parse_from` (`iolab history
/// --json devices` is `iolab history devices --json`), or refused when it has no such flag.
#[derive(Debug, Clone, Args)]
pub struct HistoryArgs {
    #[command(subcommand)]
    pub command: Option<HistoryCmd>,

    #[command(flatten)]
    pub history: HistoryFlags,

    #[command(flatten)]
    pub list: ListArgs,
}

#[derive(Debug, Clone, Subcommand)]
pub enum HistoryCmd {
    /// The recorded results, newest first (the default).
    List(ListArgs),
    /// One result: its figures, device, health snapshot (or its whole document with --json).
    Show(ShowArgs),
    /// The results that pass the filters, as JSON (whole documents) or CSV (one row per
    /// test and metric).
    Export(ExportArgs),
    /// Add result files (or directories of them) to the history; a run already there is
    /// not added twice, an unreadable file is named and skipped.
    Import(ImportArgs),
    /// One test's figure on one device over time, each point with its 95 % interval, and
    /// the points where it changed significantly (Welch's t-test, as `iolab compare`).
    Trend(TrendArgs),
    /// One device's health over time: the SMART snapshots taken after its runs
    /// (temperature, endurance used, data written, media errors), and what got worse.
    Health(HealthArgs),
    /// The devices in the history with their number of results.
    Devices(DevicesArgs),
    /// Remove results from the history by number (a broken or mistaken run that should not
    /// count in trends), their figures and health snapshots with them; all or none. The
    /// result files stay where they are, and `import` adds one back.
    Forget(ForgetArgs),
}

#[derive(Debug, Clone, Args)]
pub struct ForgetArgs {
    /// The results' numbers (the first column of `iolab history`).
    #[arg(required = true, value_name = "ID")]
    pub ids: Vec<i64>,
}

/// Which results (every filter narrows).
#[derive(Debug, Clone, Default, Args)]
pub struct FilterArgs {
    /// Part of the device's identity (model, serial, WWN) or its kernel name (`sda`).
    #[arg(long)]
    pub device: Option<String>,

    /// Only this subcommand's results (`run`, `files`, `matrix`, ...).
    #[arg(long)]
    pub command: Option<String>,

    /// Only results started since: a date (2026-01-31), an RFC 3339 time or an age
    /// (30m, 12h, 7d, 2w, 1h30m: a duration as every command takes it, or weeks).
    #[arg(long, value_name = "WHEN", value_parser = since_arg)]
    pub since: Option<String>,
}

/// clap value parser for `--since`: checked as the command line is read, so a bad value is
/// the one usage line (a note about a missing history came first), kept as typed (the "no
/// result matches" line shows it so; the time is worked out at the query).
fn since_arg(s: &str) -> Result<String, String> {
    crate::history::parse_since(s, chrono::Utc::now())
        .map(|_| s.to_string())
        .map_err(|_| crate::history::NOT_A_SINCE.to_string())
}

#[derive(Debug, Clone, Default, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub filter: FilterArgs,

    /// At most this many results, the newest (0: all).
    #[arg(long, default_value_t = 50)]
    pub limit: usize,

    /// The entries as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Args)]
pub struct ShowArgs {
    /// The result's number (the first column of `iolab history`).
    pub id: i64,

    /// The whole result document (as the run's result file).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// A JSON array: every result's entry and whole document.
    Json,
    /// One row per result, test and metric (mean, 95 % interval, and the figure the
    /// command's table gives: value, value_of; the run's options).
    Csv,
}

#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub filter: FilterArgs,

    /// The export's format [default: from -o's extension (.csv, .json), else json].
    #[arg(long, value_enum)]
    pub format: Option<ExportFormat>,

    /// Write to this file instead of stdout; an existing directory gets
    /// iolab-history.json (or .csv) inside it.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

impl ExportArgs {
    /// `--format`, else what `-o`'s extension says (`-o history.csv` wrote JSON into it),
    /// else JSON; a `--format` the extension contradicts is refused, and so is a file whose
    /// extension names a format the export cannot write without `--format` (`-o x.pdf` was
    /// given JSON). A file without an extension, or an existing directory, is JSON.
    pub fn format(&self) -> Result<ExportFormat, crate::error::UsageError> {
        let ext = self
            .output
            .as_deref()
            .filter(|p| !p.is_dir())
            .and_then(|p| Some(p.extension()?.to_string_lossy().to_ascii_lowercase()));
        let by_name = match ext.as_deref() {
            None => None,
            Some("csv") => Some(ExportFormat::Csv),
            Some("json") => Some(ExportFormat::Json),
            Some(other) if self.format.is_none() => {
                return Err(crate::error::UsageError::new(format!(
                    "-o {}: history export cannot write .{other}; it writes json or csv: use a name ending in .json or .csv, or give --format json|csv",
                    self.output
                        .as_deref()
                        .unwrap_or(std::path::Path::new(""))
                        .display(),
                )));
            }
            Some(_) => None,
        };
        match (self.format, by_name) {
            (Some(f), Some(n)) if f != n => Err(crate::error::UsageError::new(format!(
                "--format {} with -o {}: the file's extension says {}; give one that agrees",
                f.to_possible_value()
                    .map_or("?".into(), |v| v.get_name().to_string()),
                self.output
                    .as_deref()
                    .unwrap_or(std::path::Path::new(""))
                    .display(),
                n.to_possible_value()
                    .map_or("?".into(), |v| v.get_name().to_string()),
            ))),
            (Some(f), _) => Ok(f),
            (None, n) => Ok(n.unwrap_or(ExportFormat::Json)),
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct ImportArgs {
    /// Result files, or directories of them (their `*.json`, e.g. iolab-results/).
    #[arg(required = true)]
    pub results: Vec<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct TrendArgs {
    /// The device: part of its identity (model, serial, WWN) or its kernel name; must name
    /// one device (`iolab history devices` lists them).
    #[arg(long)]
    pub device: String,

    /// The test (its name or a part naming one test) [default: the device's most run test].
    #[arg(long)]
    pub test: Option<String>,

    /// The metric (`iops`, `bw_bytes_per_s`, `lat_mean_ns`, ...) [default: the test's
    /// headline metric].
    #[arg(long)]
    pub metric: Option<String>,

    /// The trend as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Args)]
pub struct DevicesArgs {
    /// As JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Args)]
pub struct HealthArgs {
    /// The device: part of its identity (model, serial, WWN) or its kernel name; must name
    /// one device.
    #[arg(long)]
    pub device: String,

    /// As JSON.
    #[arg(long)]
    pub json: bool,
}

/// The command a `--command` filter names, whatever its case (`Run`): one of the measuring
/// commands, or one the history holds (a result imported from another iolab version).
/// `Err` with every name it could have been: a misspelt command would only match nothing.
/// The command line and the console's History filter both check with this.
pub fn command_named(
    h: &crate::history::History,
    c: &str,
) -> anyhow::Result<Result<String, Vec<String>>> {
    let held = h.commands()?;
    let mut known: Vec<String> = super::MEASURING_COMMANDS
        .iter()
        .map(|k| k.to_string())
        .collect();
    known.extend(
        held.into_iter()
            .filter(|k| !super::MEASURING_COMMANDS.contains(&k.as_str())),
    );
    Ok(
        match known.iter().find(|k| k.eq_ignore_ascii_case(c.trim())) {
            Some(k) => Ok(k.clone()),
            None => Err(known),
        },
    )
}

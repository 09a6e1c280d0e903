//! The result history: every measuring command's result document kept in one SQLite
//! database (WAL, so several iolab processes and the console server write at once), with
//! indexed fields to list, filter and follow a device's figures over time.
//!
//! # The API (as built; the console `iolab serve` and `iolab history` use it)
//!
//! ```text
//! pub struct History { .. }   // Send + Sync (one connection behind a mutex); cheap to open
//! impl History {
//!     pub fn default_path() -> PathBuf;    // $IOLAB_HISTORY, else $XDG_DATA_HOME/iolab/history.sqlite,
//!                                          // else ~/.local/share/iolab/history.sqlite
//!     pub fn open(path: &Path) -> anyhow::Result<History>;
//!         // creates and migrates; a newer schema, a damaged file or another program's
//!         // database is refused with a UsageError (exit 2) and left untouched
//!     pub fn in_memory(name: &str) -> anyhow::Result<History>;   // empty, nothing on disk
//!     pub fn path(&self) -> &Path;
//!     pub fn record(&self, doc: &ResultDoc, source: Option<&Path>) -> anyhow::Result<i64>;
//!     pub fn record_with(&self, doc: &ResultDoc, source: Option<&Path>,
//!                        health: Option<&SmartInfo>) -> anyhow::Result<Recorded>;
//!         // the row id; the same run (start, host, command, argv, target, device) recorded
//!         // again is not duplicated: its first row's id comes back (Recorded::Existing), and
//!         // a row still `running` (imported mid-run) takes the finished document (Updated)
//!     pub fn list(&self, filter: &Filter) -> anyhow::Result<Vec<Entry>>;   // newest first
//!     pub fn count(&self, filter: &Filter) -> anyhow::Result<usize>;       // without limit
//!     pub fn get(&self, id: i64) -> anyhow::Result<Option<ResultDoc>>;
//!     pub fn entry(&self, id: i64) -> anyhow::Result<Option<Entry>>;
//!     pub fn health(&self, id: i64) -> anyhow::Result<Option<SmartInfo>>;
//!     pub fn figures(&self, id: i64) -> anyhow::Result<Vec<Figure>>;
//!     pub fn figures_matching(&self, filter: &Filter) -> anyhow::Result<Vec<(Entry, Figure)>>;
//!     pub fn devices(&self) -> anyhow::Result<Vec<(String, usize)>>;     // device, results
//!     pub fn commands(&self) -> anyhow::Result<Vec<String>>;              // the commands held
//!     pub fn tests(&self, device: &str) -> anyhow::Result<Vec<(String, usize)>>;
//!     pub fn resolve_device(&self, part: &str) -> anyhow::Result<String>; // one device or UsageError
//!     pub fn health_history(&self, device: &str) -> anyhow::Result<Vec<HealthPoint>>;
//!         // device exactly as stored; HealthPoint { id, started_at, smart: SmartInfo }
//!     pub fn trend(&self, q: &TrendQuery) -> anyhow::Result<Trend>;
//!     pub fn integrity_check(&self) -> anyhow::Result<String>;           // "ok"
//! }
//! #[derive(Default, Clone, Debug, Deserialize)]
//! pub struct Filter { device, command, since: Option<String>, limit: Option<usize> }
//!     // device: part of the device identity (model, serial, WWN) or its kernel name, link
//!     // (`by-id/…`) or loop device's file
//!     // (case-insensitive); since: 2026-01-31, an RFC 3339 time, or an age (7d, 12h, 2w)
//! #[derive(Clone, Debug, Serialize)]
//! pub struct Entry { id, started_at, command, status, host, device, filesystem: Option,
//!                    headline, source: Option, options: Option (`--preset real --size 1G`) }
//! #[derive(Clone, Debug, Default, Deserialize)]
//! pub struct TrendQuery { device: String, test: Option<String>, metric: Option<String> }
//!     // test: None = the device's test with the most results (ties: the first in the newest
//!     // result's table); metric: None = its headline
//! #[derive(Clone, Debug, Serialize)]
//! pub struct Trend { device, test, metric, command, metric_label,
//!                    value_of (`median`, `mean` or `best run`), higher_is_better: bool,
//!                    points: Vec<TrendPoint> }
//! #[derive(Clone, Debug, Serialize)]
//! pub struct TrendPoint { id, started_at, status: Option (not `complete`),
//!                         value (the figure the run's table gives: Trend's value_of), n,
//!                         ci_low, ci_high: Option<f64>, significant_change: bool,
//!                         change_pct: Option<f64> (against the previous point),
//!                         level_change_pct, p_value: Option<f64> (on a marked point) }
//!
//! pub struct HistoryOptions { pub path: Option<PathBuf> }  // None = --no-history
//! impl HistoryOptions { fn from_flags(Option<PathBuf>, bool); fn current() }
//!     // IOLAB_NO_HISTORY=1 (not empty, not 0) acts as --no-history unless --history PATH
//!     // is given (the test suite sets it)
//! pub fn configure(history: Option<PathBuf>, no_history: bool); // the global flags (app.rs)
//! pub fn named_path() -> PathBuf;          // --history PATH, else default_path()
//! pub fn record_best_effort(doc: &ResultDoc, source: Option<&Path>, opts: &HistoryOptions)
//!     -> Option<i64>;
//!     // never fails: a problem is one "iolab: warning: …" line on stderr
//! pub fn record_best_effort_with(doc, source, health: Option<&SmartInfo>, opts) -> Option<i64>;
//! pub fn record_run(doc: &ResultDoc, source: Option<&Path>) -> Option<i64>;
//!     // the commands' hook: the process's options plus the SMART snapshot (health.rs)
//! ```
//!
//! A change in `trend` is a change point of the series (`stats::changepoint`, PELT) that
//! passes the significance test of `iolab compare` (Welch's t-test at 95 %) between the
//! results before and after it and is material (at least 5 % and three times the noise
//! between results): `stats::shift`.
//!
//! The database: `schema.rs` (tables, migrations by `PRAGMA user_version`, the refusals),
//! `extract.rs` (what is indexed from a document: device identity, figures, headline, run
//! key), `store.rs` (the queries), `since.rs` (`--since`), `trend.rs`, `health.rs` (the
//! SMART snapshot of `record_run`).

mod extract;
pub mod health;
mod schema;
mod since;
mod store;
mod trend;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use serde::{Deserialize, Serialize};

use crate::model::ResultDoc;
use crate::model::device::SmartInfo;

pub use extract::{device_identity, figures_of, headline, options_of};
pub use schema::SCHEMA_VERSION;
pub use since::{NOT_A_SINCE, parse_since};

/// The history database: one SQLite connection (behind a mutex, so `History` is `Send` and
/// `Sync`), in WAL mode with a busy timeout.
pub struct History {
    conn: Mutex<rusqlite::Connection>,
    path: PathBuf,
}

/// Which results `list` returns (every field narrows; `None` takes all).
#[derive(Default, Clone, Debug, Deserialize)]
pub struct Filter {
    /// Part of the device identity (model, serial, WWN, a loop's file), any case; or exactly
    /// the kernel name, serial, WWN, `/dev/disk` link or loop device's file.
    pub device: Option<String>,
    /// The subcommand (`run`, `files`, ...), exactly.
    pub command: Option<String>,
    /// `2026-01-31`, an RFC 3339 time, or an age (`7d`, `12h`, `2w`, `30m`).
    pub since: Option<String>,
    /// At most this many (the newest).
    pub limit: Option<usize>,
}

/// One recorded result, as listed.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Entry {
    pub id: i64,
    /// RFC 3339 UTC (milliseconds).
    pub started_at: String,
    pub command: String,
    /// `complete`, `interrupted`, `killed`, `failed` (or `running` for a file imported mid-run).
    pub status: String,
    pub host: String,
    /// The device's identity: `MODEL (serial S)`, `MODEL (WWN W)`, else `MODEL (sda on
    /// HOST)` / `sda on HOST`, else `FSTYPE at MOUNT on HOST` for a file system without a
    /// block device (`extract::device_identity`).
    pub device: String,
    pub filesystem: Option<String>,
    /// The first tests' headline figures, one line.
    pub headline: String,
    /// The result file it was recorded from or written to.
    pub source: Option<String>,
    /// The options that tell two runs of one command apart, as typed (`--preset real
    /// --size 1G`); absent when the command line had none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub options: Option<String>,
}

/// One test's figure of one result (every metric of every test is kept).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Figure {
    /// `name` or `name [configuration]` (as `iolab compare` matches tests).
    pub test: String,
    pub metric: String,
    /// The test's headline metric.
    pub primary: bool,
    pub n: u32,
    /// The figure its command's table gives (`report::metrics::table_figure`): the median
    /// of the runs, a files test's mean, a peak test's best run (its rates).
    pub value: f64,
    /// Which figure `value` is: `median`, `mean` or `best run`.
    pub value_of: String,
    pub mean: f64,
    pub median: f64,
    pub stddev: f64,
    pub ci95_low: f64,
    pub ci95_high: f64,
}

/// What `trend` follows.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct TrendQuery {
    /// One device: part of its identity or its kernel name (must match one device).
    pub device: String,
    /// The test (exact, or a part naming one test); `None`: the device's most run test
    /// (of those run as often, the first in the newest result's table, `History::tests`).
    pub test: Option<String>,
    /// The metric (`iops`, `bw_bytes_per_s`, ...); `None`: the test's headline metric.
    pub metric: Option<String>,
}

/// A test's figure over time on one device.
#[derive(Clone, Debug, Serialize)]
pub struct Trend {
    pub device: String,
    pub test: String,
    pub metric: String,
    /// The command of the newest result (`run`, `trace`, ...).
    pub command: String,
    /// The metric as the command's own table names it (`IOPS`, a trace's `ops/s`).
    pub metric_label: String,
    /// Which figure of a run's repeats the points' values are, as the newest result's
    /// table gives it: `median`, `mean` (files) or `best run` (a peak test's rates).
    pub value_of: String,
    pub higher_is_better: bool,
    pub points: Vec<TrendPoint>,
}

/// One result in a trend.
#[derive(Clone, Debug, Serialize)]
pub struct TrendPoint {
    pub id: i64,
    pub started_at: String,
    /// The result's status when it is not `complete` (`failed`, `interrupted`): the run
    /// stopped early, and this figure is what it had measured of the test by then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// The figure the run's own table gives (`Trend::value_of`: the median of its
    /// repeats, a files test's mean, a peak test's best run).
    pub value: f64,
    /// Repeats behind the value.
    pub n: u32,
    /// The 95 % confidence interval of the mean over the repeats (two repeats or more).
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// The figure changed here for good: the points from here on differ significantly from
    /// those before (Welch's t-test between the groups, see `stats::shift`).
    pub significant_change: bool,
    /// (value / previous point's value - 1) in percent; `None` for the first point.
    pub change_pct: Option<f64>,
    /// On a marked point: (mean of the new level / mean of the level before - 1) in percent,
    /// the levels made of the results' means over their repeats (what Welch tests).
    pub level_change_pct: Option<f64>,
    /// On a marked point: Welch's p-value between the two levels.
    pub p_value: Option<f64>,
}

/// A SMART snapshot kept with one result (`health_history`).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct HealthPoint {
    pub id: i64,
    pub started_at: String,
    pub smart: SmartInfo,
}

/// What `record_with` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recorded {
    /// A new row.
    New(i64),
    /// The same run was already there (recorded by the command, or imported before).
    Existing(i64),
    /// The same run was there as `running` (a file imported mid-run): the finished
    /// document replaced it.
    Updated(i64),
}

impl Recorded {
    pub fn id(self) -> i64 {
        match self {
            Recorded::New(id) | Recorded::Existing(id) | Recorded::Updated(id) => id,
        }
    }
}

impl History {
    /// `$IOLAB_HISTORY`, else `$XDG_DATA_HOME/iolab/history.sqlite`, else
    /// `~/.local/share/iolab/history.sqlite` (the home from `$HOME`, else from the password
    /// database; `./.iolab-history.sqlite` when there is none).
    pub fn default_path() -> PathBuf {
        if let Some(p) = std::env::var_os("IOLAB_HISTORY").filter(|p| !p.is_empty()) {
            return PathBuf::from(p);
        }
        let data = std::env::var_os("XDG_DATA_HOME")
            .map(PathBuf::from)
            // The XDG spec: a relative value is invalid and ignored.
            .filter(|p| p.is_absolute())
            .or_else(|| {
                std::env::var_os("HOME")
                    .filter(|h| !h.is_empty())
                    .map(PathBuf::from)
                    // No HOME (a service, `env -i`): the account's home from the password
                    // database.
                    .or_else(|| {
                        nix::unistd::User::from_uid(nix::unistd::getuid())
                            .ok()
                            .flatten()
                            .map(|u| u.dir)
                    })
                    .map(|h| h.join(".local/share"))
            });
        match data {
            Some(d) => d.join("iolab").join("history.sqlite"),
            None => PathBuf::from(".iolab-history.sqlite"),
        }
    }

    /// Where this history is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Where the process records its results: `--history PATH` / `IOLAB_HISTORY`, or nowhere
/// (`--no-history`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryOptions {
    /// `None`: do not record.
    pub path: Option<PathBuf>,
}

impl Default for HistoryOptions {
    fn default() -> Self {
        HistoryOptions {
            path: Some(History::default_path()),
        }
    }
}

impl HistoryOptions {
    /// From the global flags: `--no-history` records nothing; else `--history PATH` (a flag
    /// wins over the environment); else `IOLAB_NO_HISTORY` (set, not `0`) records nothing;
    /// else `default_path()`.
    pub fn from_flags(history: Option<PathBuf>, no_history: bool) -> Self {
        let path = match history {
            _ if no_history => None,
            Some(p) => Some(p),
            None if no_history_env() => None,
            None => Some(History::default_path()),
        };
        HistoryOptions { path }
    }

    /// The options `configure` set for this process, else those of no flags.
    pub fn current() -> Self {
        PROCESS_OPTIONS
            .get()
            .map(|(o, _)| o.clone())
            .unwrap_or_else(|| HistoryOptions::from_flags(None, false))
    }
}

/// `IOLAB_NO_HISTORY` set to anything but empty or `0` (every integration test process sets
/// it, see `tests/common`).
fn no_history_env() -> bool {
    std::env::var_os("IOLAB_NO_HISTORY").is_some_and(|v| !v.is_empty() && v != "0")
}

/// The process's recording options and the history it names (for `iolab history`, which
/// reads it whatever `--no-history` says about recording).
static PROCESS_OPTIONS: OnceLock<(HistoryOptions, PathBuf)> = OnceLock::new();

/// Set this process's history from the global flags once (app.rs); later calls are ignored.
pub fn configure(history: Option<PathBuf>, no_history: bool) {
    let named = history.clone().unwrap_or_else(History::default_path);
    let _ = PROCESS_OPTIONS.set((HistoryOptions::from_flags(history, no_history), named));
}

/// The history `--history` names, else `default_path()` (what `iolab history` reads).
pub fn named_path() -> PathBuf {
    PROCESS_OPTIONS
        .get()
        .map(|(_, p)| p.clone())
        .unwrap_or_else(History::default_path)
}

/// Record a final result document, never failing: any problem (an unwritable directory, a
/// newer or damaged database, a lock held too long) is one warning line on stderr, and the
/// measurement and its result file are untouched. Returns the row id when recorded.
pub fn record_best_effort(
    doc: &ResultDoc,
    source: Option<&Path>,
    opts: &HistoryOptions,
) -> Option<i64> {
    record_best_effort_with(doc, source, None, opts)
}

/// What every measuring command calls once its document is final and saved (`family::execute`,
/// a distributed run's rank 0): with the process's options (`configure`), the device's SMART
/// snapshot (`health::snapshot`, when readable) and the result file as the source. Never fails.
pub fn record_run(doc: &ResultDoc, source: Option<&Path>) -> Option<i64> {
    let opts = HistoryOptions::current();
    opts.path.as_ref()?;
    let health = health::snapshot(&doc.environment);
    record_best_effort_with(doc, source, health.as_ref(), &opts)
}

/// `record_best_effort` with the device's SMART snapshot taken after the run.
pub fn record_best_effort_with(
    doc: &ResultDoc,
    source: Option<&Path>,
    health: Option<&SmartInfo>,
    opts: &HistoryOptions,
) -> Option<i64> {
    let path = opts.path.as_deref()?;
    let r = History::open(path).and_then(|h| h.record_with(doc, source, health));
    match r {
        Ok(r) => Some(r.id()),
        Err(e) => {
            crate::eline!(
                "iolab: warning: the result was not recorded in the history ({e:#}); {}",
                match source {
                    Some(p) => format!("the measurement is kept in {}", p.display()),
                    // --no-save, or a result file that could not be written.
                    None => "no result file keeps this measurement either".to_string(),
                }
            );
            None
        }
    }
}

#[cfg(test)]
mod tests;

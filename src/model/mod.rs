//! The versioned result model: everything a run produced, the single source of truth for
//! every report. `docs/results-schema.md` documents every field. Field names carry their
//! units (`lat_ns`, `bw_bytes_per_s`, `size_bytes`).
//!
//! Family-specific parts live in submodules (one per workload family) and hang off the
//! common structs as optional fields, so a reader that knows only the core still works.

pub mod age;
pub mod copy;
pub mod device;
pub mod dist;
pub mod files;
pub mod layout;
pub mod matrix;
pub mod saturate;
pub mod slack;
pub mod steady;
pub mod sustain;
pub mod thermal;
pub mod trace;
pub mod warning;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use warning::WarningCode;

/// Bumped on any incompatible change. Readers refuse newer versions with a clear message.
pub const SCHEMA_VERSION: u32 = 1;

/// `skip_serializing_if` of a count a result leaves out while it is zero.
pub fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One result file: one invocation of one iolab subcommand.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ResultDoc {
    pub schema_version: u32,
    pub tool: ToolInfo,
    /// The subcommand that produced it: `run`, `files`, `matrix`, `saturate`, `copy`, `trace`.
    pub command: String,
    pub argv: Vec<String>,
    /// RFC 3339 UTC.
    pub started_at: String,
    pub finished_at: Option<String>,
    /// `complete`, `running` (written mid-run), `interrupted` or `failed`.
    pub status: String,
    pub error: Option<String>,
    pub environment: Environment,
    pub tests: Vec<TestResult>,
    pub warnings: Vec<Warning>,
    /// Matrix configurations (file system x cluster x mount options), when `command = matrix`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub configurations: Vec<matrix::ConfigurationResult>,
    /// `iolab slack` output.
    pub slack: Option<slack::SlackResult>,
    /// Per-host rows of a distributed run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostResult>,
    /// The drive's temperature during the run, where a sensor could be read.
    pub thermal: Option<thermal::ThermalRecord>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
}

impl Default for ToolInfo {
    fn default() -> Self {
        ToolInfo {
            name: "iolab".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// Where and on what the run happened.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Environment {
    pub hostname: String,
    pub kernel: String,
    pub os: String,
    pub cpu_model: String,
    pub cpu_count: u32,
    pub ram_bytes: u64,
    pub target_path: String,
    pub fs_type: String,
    pub mount_point: String,
    pub mount_options: String,
    /// Kernel name of the block device under the target (`sda1`, `loop3`, `nvme0n1`), if any.
    pub block_device: Option<String>,
    /// The whole disk when `block_device` is a partition.
    pub parent_device: Option<String>,
    pub device_model: Option<String>,
    /// The disk's serial number and World Wide Name where sysfs gives them (the device's
    /// identity in `iolab history`). Absent in results before they existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_serial: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_wwn: Option<String>,
    pub logical_block_size: Option<u32>,
    pub physical_block_size: Option<u32>,
    pub rotational: Option<bool>,
    /// For a loop device: the file behind it.
    pub loop_backing_file: Option<String>,
    /// For a loop device: the inode and size of the file behind it when the command started
    /// (the history keys a loop by its file: `loop3` names another image tomorrow). Absent
    /// in results before they existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loop_backing_inode: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loop_backing_size_bytes: Option<u64>,
    /// The whole disk's size and sysfs `device/vendor` (`0x1af4` for virtio), and its
    /// `/dev/disk` link (`by-id/virtio-S`, else `by-path/pci-0000:00:05.0`): what tells
    /// apart two disks without a model in the history. Absent in results before they existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_size_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_vendor: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_link: Option<String>,
    /// io_uring availability as probed at start.
    pub io_uring: Option<String>,
    /// cpuidle driver and governor (`/sys/devices/system/cpu/cpuidle/`): how idle CPUs
    /// sleep, which decides the wake-up cost inside every low-queue-depth latency.
    pub cpuidle_driver: Option<String>,
    pub cpuidle_governor: Option<String>,
    /// KVM guests with the `haltpoll` driver: how long an idle vCPU polls before it halts
    /// (0 = halts at once; every wake-up then goes through the host).
    pub guest_halt_poll_ns: Option<u64>,
    /// The kernel's transparent huge page policy (`always`, `madvise`, `never`): whether
    /// large I/O buffers can be on huge pages (each run's `huge_page_buffers` says if they were).
    pub transparent_hugepage: Option<String>,
    /// The file system under a directory target when the command started: how full it was
    /// and the trees `iolab age` left on it (a result on an aged file system says so, and
    /// `compare` shows it beside each file). Absent for a device target and in results
    /// before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs_state: Option<FsState>,
}

/// How used a target's file system was when a command started (`Environment.fs_state`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct FsState {
    /// statvfs: blocks x fragment size, and what is not free (as `df` counts used).
    pub size_bytes: u64,
    pub used_bytes: u64,
    /// The aged trees (`iolab-aged-SEED`) at the mount point and in the target directory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aged_trees: Vec<String>,
}

impl FsState {
    /// `80.1 % full` or `80.1 % full, aged (iolab-aged-3)`.
    pub fn describe(&self) -> String {
        let full = format!(
            "{:.1} % full",
            self.used_bytes as f64 * 100.0 / self.size_bytes.max(1) as f64
        );
        if self.aged_trees.is_empty() {
            return full;
        }
        let names: Vec<&str> = self
            .aged_trees
            .iter()
            .map(|t| t.rsplit('/').next().unwrap_or(t))
            .collect();
        format!("{full}, aged ({})", names.join(", "))
    }
}

impl Environment {
    /// The file system for a reader: `ext4`; `block device` for a device measured raw (no
    /// file system on the way); `?` when nothing was recorded.
    pub fn fs_label(&self) -> &str {
        if !self.fs_type.is_empty() {
            &self.fs_type
        } else if self.block_device.is_some() {
            "block device"
        } else {
            "?"
        }
    }
}

/// A warning: a stable machine code and a sentence that says what to do.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct Warning {
    pub code: WarningCode,
    pub message: String,
    /// The test it applies to; `None` for the whole run.
    pub test: Option<String>,
}

/// Settings of a block test (one group when there are several: see `groups`).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct BlockSettings {
    /// read | write | randread | randwrite | randrw | readwrite
    pub rw: String,
    pub bs_bytes: u64,
    pub iodepth: u32,
    pub jobs: u32,
    pub direct: bool,
    /// The engine that really ran (after any fallback).
    pub engine: String,
    /// Bytes of the test region (the file or device part being exercised).
    pub size_bytes: u64,
    /// Measured seconds per run (0 when size-based).
    pub duration_s: f64,
    pub ramp_s: f64,
    /// Percentage of reads of a mixed test (randrw, readwrite).
    pub rwmix_read: Option<u32>,
    /// `split` (each job has its own region) or `shared` (all jobs cover the whole region).
    pub region: String,
    /// `random` (incompressible) or `zero`.
    pub pattern: String,
    /// `--huge-pages`: whether large I/O buffers asked for transparent huge pages (each run's
    /// `huge_page_buffers` says whether they got them). Absent in results before it existed.
    pub huge_pages: Option<bool>,
    /// Bytes per job for size-based runs.
    pub io_size_bytes: Option<u64>,
    /// `iolab run --pause`: idle seconds before every run but the command's first.
    pub pause_s: Option<f64>,
}

/// One test (e.g. `SEQ1M Q8T1 read`), its repeats and their summary.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TestResult {
    pub name: String,
    /// Workload family: block | files | copy | trace | saturate | sustain.
    pub family: String,
    /// Matrix configuration label (`ext4 4KiB noatime`), or the target for multi-target runs.
    pub config: Option<String>,
    /// `read` or `write` (or `mixed`) for the table's direction column.
    pub direction: Option<String>,
    pub settings: Option<BlockSettings>,
    /// Independent job groups running at the same time (e.g. saturate's read + write groups).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<BlockSettings>,
    /// Free-form settings of non-block families (size, phase, method, ...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, String>,
    pub runs: Vec<RunResult>,
    /// Per metric (`iops`, `bw_bytes_per_s`, `files_per_s`, ...) over the runs.
    pub summary: BTreeMap<String, Summary>,
    /// Which run statistic the table shows: `median` (default) or `max` (peak preset).
    pub headline: Option<String>,
    pub curve: Option<Vec<saturate::CurvePoint>>,
    pub answer: Option<saturate::Answer>,
    pub files: Option<files::FilesTestDetail>,
    pub copy: Option<copy::CopyTestDetail>,
    pub trace: Option<trace::TraceTestDetail>,
    pub age: Option<age::AgeTestDetail>,
    /// `iolab sustain`: one pass's phases, cliffs and recovered cache.
    pub sustain: Option<sustain::SustainDetail>,
    /// `--steadystate`: the rule, every round's value and the window that met it.
    pub steady_state: Option<steady::SteadyStateRecord>,
    /// Set when the test failed; the runs measured before the failure are kept.
    pub error: Option<String>,
}

impl TestResult {
    /// The runs the summary covers: all of them, or under `--steadystate` the window's.
    pub fn summarized_runs(&self) -> &[RunResult] {
        match &self.steady_state {
            Some(rec) => self.runs.get(rec.summary_rounds()).unwrap_or_default(),
            None => &self.runs,
        }
    }

    /// The run numbers (`RunResult::run`, from 1) of a summary's outliers: its indices count
    /// the runs it summarizes, which under `--steadystate` are the window's, not all of them
    /// (the window's 2nd run was called "run 2" when it was run 3).
    pub fn outlier_runs(&self, s: &Summary) -> Vec<u32> {
        let judged = self.summarized_runs();
        s.outliers
            .iter()
            .map(|&i| match judged.get(i as usize) {
                Some(r) if judged.len() == s.n as usize && r.run > 0 => r.run,
                _ => i + 1,
            })
            .collect()
    }

    /// How the test ended when it did not complete: "interrupted" when a signal stopped it
    /// (its error is `interrupted by SIG…`), else "failed"; None for a complete test.
    pub fn ended_early(&self) -> Option<&'static str> {
        let e = self.error.as_deref()?;
        Some(if e == "interrupted" || e.contains("interrupted by SIG") {
            "interrupted"
        } else {
            "failed"
        })
    }
}

/// Latency statistics in nanoseconds (from an HDR histogram, 3 significant digits).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LatencyStats {
    pub min: u64,
    pub mean: f64,
    pub stddev: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p999: u64,
    pub p9999: u64,
    pub max: u64,
    pub count: u64,
}

/// One point of a per-interval time series.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct IntervalPoint {
    /// End of the interval, ms since the start of measurement (the last one of a window
    /// that is not a whole number of intervals ends with the window, rounded up to the ms:
    /// its rates are over its own length).
    pub t_ms: u64,
    pub ios: u64,
    pub bytes: u64,
    pub iops: f64,
    pub bw_bytes_per_s: f64,
    pub lat_mean_ns: f64,
}

/// CPU time used by iolab during a run.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CpuUsage {
    pub user_s: f64,
    pub sys_s: f64,
    /// (user + sys) / wall time, over all of iolab's threads (100 = one core busy).
    pub process_pct: f64,
    /// The busiest job thread's (user + sys) / wall time in percent.
    pub max_job_thread_pct: f64,
    /// The longest a job thread waited for a CPU (runnable while other programs' threads held
    /// every CPU: schedstat's `run_delay`), in percent of the span its CPU time was counted
    /// over. Absent where the kernel has no schedstat, and in results written before it.
    pub max_job_thread_wait_pct: Option<f64>,
}

/// One repeat of a test.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct RunResult {
    pub run: u32,
    pub elapsed_ns: u64,
    pub ops: u64,
    pub bytes: u64,
    pub iops: Option<f64>,
    pub bw_bytes_per_s: Option<f64>,
    pub files_per_s: Option<f64>,
    /// Completion latency: from the submitting call to the reaped completion (fio's `lat`).
    pub lat_ns: Option<LatencyStats>,
    /// Submission latency (io_uring: queueing until the submit call returned).
    pub slat_ns: Option<LatencyStats>,
    /// Latency percentile curve: (percentile, ns) pairs for plots.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lat_percentiles_ns: Vec<(f64, u64)>,
    /// The merged latency histogram, HDR V2 deflate-free serialization, base64.
    pub lat_hist: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<IntervalPoint>,
    pub interval_ms: Option<u64>,
    /// Average number of I/Os in flight (Little's law: sum of latencies / wall time).
    pub avg_queue_depth: Option<f64>,
    pub cpu: Option<CpuUsage>,
    /// Entries of all CPUs into non-polling idle states (vCPU halts, C-states) during the
    /// run, per I/O at the run's rate: wake-ups that may sit inside the I/Os' latency.
    pub idle_entries_per_io: Option<f64>,
    /// Whether the jobs' I/O buffers were on transparent huge pages: `true` when every job
    /// whose buffers asked for them (at least half a huge page of buffers: e.g. one 1 MiB
    /// buffer) got them, `false` when some did not (THP off, memory fragmented: a large direct
    /// I/O may then reach the device as several requests), absent when none asked.
    pub huge_page_buffers: Option<bool>,
    /// Time of the fsync that ended a write run.
    pub fsync_ns: Option<u64>,
    /// Time from the end of the measured window to the end of the I/O (a timed run's drain
    /// of the requests in flight at its deadline, neither counted nor timed); before any
    /// `fsync_ns`. For lining up ranks' windows (`dist`); not in the result file.
    #[serde(skip)]
    pub tail_ns: Option<u64>,
    /// Mixed (`randrw`, `readwrite`) runs: the reads alone (the fields above cover both directions).
    pub read: Option<DirectionStats>,
    /// Mixed runs: the writes alone.
    pub write: Option<DirectionStats>,
    /// What the block device saw during this run (`/proc/diskstats` deltas).
    pub device: Option<device::DeviceCounters>,
    /// Bytes the device wrote / bytes the application wrote.
    pub write_amplification: Option<f64>,
    /// Family-specific detail of this run (files: per-portion series, ...).
    pub files: Option<files::FilesRunDetail>,
    pub copy: Option<copy::CopyRunDetail>,
    pub trace: Option<trace::TraceRunDetail>,
    /// Distributed runs (`hosts[]` set): how the ranks' windows lined up.
    pub dist: Option<dist::DistRun>,
}

impl RunResult {
    /// The series' whole intervals: all but a last, partial one (a window that is not a
    /// whole number of intervals: a size-based run's end), which ends the series so that it
    /// adds up to the run, but is shorter than the others. Analyses that take every point as
    /// one interval use these.
    pub fn whole_intervals(&self) -> &[IntervalPoint] {
        let Some(ms) = self.interval_ms.filter(|&ms| ms > 0) else {
            return &self.intervals;
        };
        let n = self
            .intervals
            .iter()
            .enumerate()
            .take_while(|(i, p)| p.t_ms == (*i as u64 + 1) * ms)
            .count();
        &self.intervals[..n]
    }
}

/// One direction of a mixed run: its share of the I/Os and its own completion latency
/// (reads and writes of one device rarely wait alike).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct DirectionStats {
    pub ops: u64,
    pub bytes: u64,
    pub iops: f64,
    pub bw_bytes_per_s: f64,
    pub lat_ns: LatencyStats,
    /// This direction's latency histogram (as `RunResult.lat_hist`), so that runs of
    /// several processes merge exactly.
    pub lat_hist: Option<String>,
}

/// Statistics of one metric over the runs of a test (see `stats::summarize`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    pub n: u32,
    pub mean: f64,
    pub median: f64,
    pub stddev: f64,
    pub min: f64,
    pub max: f64,
    /// Coefficient of variation, stddev / mean (0.05 = 5 %).
    pub cv: f64,
    pub ci95_low: f64,
    pub ci95_high: f64,
    /// Indices (0-based) of runs flagged as outliers by the modified Z-score (> 3.5).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outliers: Vec<u32>,
}

/// One rank/host of a distributed run.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct HostResult {
    pub rank: u32,
    pub hostname: String,
    pub tests: Vec<TestResult>,
    pub clock_offset_ns: Option<i64>,
}

impl ResultDoc {
    pub fn new(command: &str, argv: Vec<String>, environment: Environment) -> Self {
        ResultDoc {
            schema_version: SCHEMA_VERSION,
            tool: ToolInfo::default(),
            command: command.to_string(),
            argv,
            started_at: now_rfc3339(),
            finished_at: None,
            status: "running".into(),
            error: None,
            environment,
            tests: Vec::new(),
            warnings: Vec::new(),
            configurations: Vec::new(),
            slack: None,
            hosts: Vec::new(),
            thermal: None,
        }
    }

    /// Record how the run ended: `finished_at`, the status (`complete`, `interrupted` when
    /// the error chain holds `crate::error::Interrupted`, else `failed`) and the error text.
    pub fn finish(&mut self, outcome: &anyhow::Result<()>) {
        self.finished_at = Some(now_rfc3339());
        match outcome {
            Ok(()) => self.status = "complete".into(),
            Err(e) => {
                self.status = crate::error::stopped_or_failed(e).into();
                self.error = Some(format!("{e:#}"));
            }
        }
    }

    /// Add a warning once (same code, message and test are not repeated).
    pub fn warn(&mut self, w: Warning) {
        if !self.warnings.contains(&w) {
            self.warnings.push(w);
        }
    }

    /// Read a result file, with a message naming the file and what is wrong.
    pub fn read(path: &Path) -> Result<ResultDoc, crate::error::UsageError> {
        use crate::error::UsageError;
        let text = std::fs::read_to_string(path)
            .map_err(|e| UsageError(format!("{}: cannot read: {e}", path.display())))?;
        if text.trim().is_empty() {
            return Err(UsageError(format!(
                "{}: empty file, not an iolab result",
                path.display()
            )));
        }
        let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            if e.is_eof() {
                UsageError(format!("{}: truncated JSON ({e})", path.display()))
            } else {
                UsageError(format!("{}: not valid JSON ({e})", path.display()))
            }
        })?;
        ResultDoc::from_value(value, &path.display().to_string())
    }

    /// A result document from parsed JSON (`what` names it in errors: a path, or a path
    /// and an index for the documents of a `history export`).
    pub fn from_value(
        value: serde_json::Value,
        what: &str,
    ) -> Result<ResultDoc, crate::error::UsageError> {
        use crate::error::UsageError;
        let obj = value.as_object().ok_or_else(|| {
            UsageError(format!("{}: not an iolab result (not a JSON object)", what))
        })?;
        let is_iolab = obj
            .get("tool")
            .and_then(|t| t.get("name"))
            .and_then(|n| n.as_str())
            == Some("iolab");
        let version = obj.get("schema_version");
        if !is_iolab || version.is_none() {
            return Err(UsageError(format!(
                "{}: not an iolab result (no tool.name = \"iolab\" and schema_version)",
                what
            )));
        }
        // A schema_version of 0 (or a string) was read as if it were this one, by report,
        // compare, history import and endurance --from alike: every iolab wrote 1 or later.
        let version = match version.and_then(|v| v.as_u64()) {
            Some(v) if v >= 1 => v,
            _ => {
                return Err(UsageError(format!(
                    "{}: schema_version {} is not one iolab writes (a whole number from 1; this iolab understands up to {SCHEMA_VERSION})",
                    what,
                    version.map(|v| v.to_string()).unwrap_or_default()
                )));
            }
        };
        if version > SCHEMA_VERSION as u64 {
            return Err(UsageError(format!(
                "{}: schema version {version} is newer than this iolab understands ({SCHEMA_VERSION}); upgrade iolab",
                what
            )));
        }
        serde_json::from_value(value)
            .map_err(|e| UsageError(format!("{}: not a valid iolab result: {e}", what)))
    }

    /// Write atomically (temp file + rename) so a crash never leaves half a file. The
    /// temporary copy has a fixed name beside `path` (`temp_path`), so that an exit at once
    /// (a second Ctrl-C) can remove it.
    pub fn write_atomic(&self, path: &Path) -> std::io::Result<()> {
        self.write_replacing(path, true)
    }

    /// `write_atomic`, with the fsync before the rename only when `durable`: a write racing
    /// a SIGKILL (the interrupt mark) cannot wait for the disk, and a rename after a full
    /// write is what other processes see at once.
    fn write_replacing(&self, path: &Path, durable: bool) -> std::io::Result<()> {
        let tmp_path = temp_path(path);
        let written = (|| {
            // Readable by all, as reports and the history: a result written by `sudo iolab
            // run` must be readable by `iolab compare` as its user.
            use std::os::unix::fs::OpenOptionsExt;
            let mut tmp = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o644)
                .open(&tmp_path)?;
            use std::os::unix::fs::PermissionsExt;
            tmp.set_permissions(std::fs::Permissions::from_mode(0o644))?;
            let mut w = std::io::BufWriter::new(&mut tmp);
            serde_json::to_writer_pretty(&mut w, self)?;
            w.write_all(b"\n")?;
            w.flush()?;
            drop(w);
            if durable {
                tmp.sync_all()?;
            }
            std::fs::rename(&tmp_path, path)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp_path);
        }
        written
    }
}

/// The temporary copy `ResultDoc::write_atomic` writes before renaming it to `path`: hidden,
/// beside it (`.NAME.tmp`).
pub fn temp_path(path: &Path) -> PathBuf {
    let mut name = std::ffi::OsString::from(".");
    name.push(path.file_name().unwrap_or_default());
    name.push(".tmp");
    path.with_file_name(name)
}

/// How a measuring command delivers its result, as `--json`, `--output`, `--no-save` and
/// `--quiet` say: part of every validated config, so that one path (`commands::family`)
/// saves and prints the result of every command alike.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Delivery {
    /// The document on stdout instead of the table.
    pub json: bool,
    /// The result directory (or `.json` file); `None` with `--no-save`.
    pub dir: Option<PathBuf>,
    /// No progress lines on stderr.
    pub quiet: bool,
}

/// Where a run writes its result JSON: created before the run starts (fail fast on a bad
/// path) and rewritten after every test (a crash loses nothing).
pub struct ResultSink {
    pub path: Option<PathBuf>,
    /// The result file this sink created empty (not a `--output FILE.json` that existed):
    /// the caller records it with `fs::registry::record_empty_result`, so that the next
    /// start's recovery removes it if a SIGKILL came before its first save (a save renames
    /// a new inode over it, which recovery then leaves alone).
    pub claimed_empty: Option<PathBuf>,
    /// Set by `InterruptMarker::mark` when a signal stopped the run: every later save of a
    /// document still `running` says `interrupted` instead.
    interrupted: std::sync::Arc<std::sync::Mutex<SinkState>>,
}

/// What the sink and its interrupt marker share: the interrupt, once one came, and the last
/// document saved (the marker rewrites it without reading and parsing the file: under a
/// heavy load that took longer than mpirun waits before its SIGKILL).
#[derive(Default)]
struct SinkState {
    interrupted: Option<crate::error::Interrupted>,
    last: Option<ResultDoc>,
}

/// Below this much free space a result directory is refused: a result file is tens of
/// kilobytes (a run with its time series: about 30 KiB) and each save writes a temporary
/// copy beside it. A larger document (a matrix) may still find less room than it needs.
const MIN_RESULT_ROOM: u64 = 256 << 10;

/// Why `dir`'s file system cannot take a result file (less than `MIN_RESULT_ROOM` free, or
/// no inode left), or `None`. A file system that reports no counts (some FUSE ones) is not
/// judged.
fn no_room_for_results(dir: &Path) -> Option<String> {
    let s = nix::sys::statvfs::statvfs(dir).ok()?;
    if s.blocks() == 0 {
        return None;
    }
    let free = s.blocks_available() as u64 * s.fragment_size() as u64;
    if free < MIN_RESULT_ROOM {
        return Some(format!("only {} free", crate::units::fmt_size_iec(free)));
    }
    if s.files() > 0 && s.files_available() == 0 {
        return Some("no inode free".to_string());
    }
    None
}

impl ResultSink {
    /// No result file (`--no-save`, the other ranks of a distributed run, the matrix's
    /// throw-away documents).
    pub fn none() -> ResultSink {
        ResultSink::at(None)
    }

    /// Write to `path` (already claimed).
    pub fn at(path: Option<PathBuf>) -> ResultSink {
        ResultSink {
            path,
            claimed_empty: None,
            interrupted: Default::default(),
        }
    }

    /// `dir = None` disables writing (`--output -`). A `dir` ending in `.json` that is not
    /// a directory is the result file itself (`--output result.json` made a directory of
    /// that name); an existing one is replaced when the first result is saved.
    pub fn create(dir: Option<&Path>, command: &str) -> anyhow::Result<ResultSink> {
        let Some(dir) = dir else {
            return Ok(ResultSink::none());
        };
        let is_json = dir
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"));
        if is_json && !dir.is_dir() {
            return Self::create_file(dir);
        }
        if dir.exists() && !dir.is_dir() {
            return Err(crate::usage!(
                "--output {}: is a file, not a directory (results are written into a directory, one file per run; or to a file whose name ends in .json)",
                dir.display()
            ));
        }
        std::fs::create_dir_all(dir).map_err(|e| {
            // A relative default (`iolab-results`) in a current directory this user may not
            // write (`cd /`) named neither where nor what to do instead.
            let whole = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
            let shown = if whole == dir {
                dir.display().to_string()
            } else {
                format!("{} ({})", dir.display(), whole.display())
            };
            crate::usage!(
                "cannot create the output directory {shown}: {e}; give --output DIR, or --no-save"
            )
        })?;
        let stamp = chrono::Utc::now().format("%Y%m%d-%H%M%S");
        let mut path = dir.join(format!("{command}-{stamp}.json"));
        let mut n = 1;
        while path.exists() {
            n += 1;
            path = dir.join(format!("{command}-{stamp}-{n}.json"));
        }
        // A full file system took the name, measured, and failed at the first save (exit 1,
        // the measurement lost, an empty result file left).
        if let Some(why) = no_room_for_results(dir) {
            return Err(crate::usage!(
                "--output {}: {why}: the result file (rewritten after every test, through a temporary copy) would not fit; free some space there or give another --output",
                dir.display()
            ));
        }
        // Claim the name now so a bad directory fails before any measuring.
        let claimed = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| {
                crate::usage!(
                    "cannot write results to {}: {e}; give --output DIR, or --no-save",
                    path.display()
                )
            })?;
        Ok(ResultSink::claimed(path, &claimed))
    }

    /// `--output FILE.json`: the result goes to that file (its directory made if missing).
    fn create_file(file: &Path) -> anyhow::Result<ResultSink> {
        let parent = crate::os::dir_of(file);
        std::fs::create_dir_all(parent).map_err(|e| {
            crate::usage!(
                "--output {}: cannot create the directory {}: {e}; give another --output, or --no-save",
                file.display(),
                parent.display()
            )
        })?;
        if let Some(why) = no_room_for_results(parent) {
            return Err(crate::usage!(
                "--output {}: {why}: the result file (rewritten after every test, through a temporary copy) would not fit; free some space there or give another --output",
                file.display()
            ));
        }
        // Claim the name now so a bad path fails before any measuring; an existing file is
        // only checked here (not emptied before there is a result to replace it with).
        let opened = match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(file)
        {
            Ok(f) => return Ok(ResultSink::claimed(file.to_path_buf(), &f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => std::fs::OpenOptions::new()
                .write(true)
                .truncate(false)
                .open(file),
            Err(e) => Err(e),
        };
        opened.map_err(|e| {
            crate::usage!(
                "cannot write results to {}: {e}; give another --output, or --no-save",
                file.display()
            )
        })?;
        crate::os::signals::RESULT_FILE.existing(file, &temp_path(file));
        Ok(ResultSink::at(Some(file.to_path_buf())))
    }

    /// A sink on `path`, just created empty (`file`): until its first save, a stop at once
    /// (a second Ctrl-C) removes it rather than leave an empty file among the results.
    fn claimed(path: PathBuf, file: &std::fs::File) -> ResultSink {
        use std::os::unix::fs::MetadataExt;
        if let Ok(md) = file.metadata() {
            crate::os::signals::RESULT_FILE.claimed(&path, &temp_path(&path), md.ino());
        }
        // A SIGKILL cannot be caught: the next start's recovery removes it while still empty
        // (the caller records it: the registry is a layer above).
        ResultSink {
            claimed_empty: Some(path.clone()),
            ..ResultSink::at(Some(path))
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SinkState> {
        self.interrupted.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn save(&self, doc: &ResultDoc) -> anyhow::Result<()> {
        let Some(p) = &self.path else {
            return Ok(());
        };
        // One writer at a time (the marker's thread also writes).
        let mut st = self.lock();
        let write = |d: &ResultDoc| {
            d.write_atomic(p)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", p.display()))
        };
        let r = match st.interrupted.as_ref() {
            Some(i) if doc.status == "running" => write(&interrupted_copy(doc, i)),
            _ => write(doc),
        };
        if r.is_ok() {
            crate::os::signals::RESULT_FILE.saved();
        }
        st.last = Some(doc.clone());
        r
    }

    /// A handle another thread can use to say, the moment a signal arrives, that the run was
    /// interrupted (see `InterruptMarker`).
    pub fn interrupt_marker(&self) -> InterruptMarker {
        InterruptMarker {
            path: self.path.clone(),
            interrupted: self.interrupted.clone(),
        }
    }
}

/// `doc` as `ResultDoc::finish` records an interrupt.
fn interrupted_copy(doc: &ResultDoc, i: &crate::error::Interrupted) -> ResultDoc {
    let mut d = doc.clone();
    d.finish(&Err(anyhow::Error::new(crate::error::Interrupted {
        signal: i.signal,
        signal_name: i.signal_name,
    })));
    d
}

/// Marks a run's result file `interrupted` from outside the measuring thread. A distributed
/// run needs it: mpirun forwards Ctrl-C to every rank and kills them one second later,
/// while rank 0 may still be waiting for the others to agree to stop; the file said
/// `running` then. Marking rewrites the last saved document at once; the full document saved
/// later (if there is time) replaces it.
pub struct InterruptMarker {
    path: Option<PathBuf>,
    interrupted: std::sync::Arc<std::sync::Mutex<SinkState>>,
}

impl InterruptMarker {
    pub fn mark(&self, signal: i32, signal_name: &'static str) {
        let mut st = self.interrupted.lock().unwrap_or_else(|e| e.into_inner());
        if st.interrupted.is_some() {
            return;
        }
        let i = crate::error::Interrupted {
            signal,
            signal_name,
        };
        if let Some(p) = &self.path
            && let Some(doc) = &st.last
            && doc.status == "running"
        {
            // mpirun kills the ranks a second after it forwards the signal, or sooner (its
            // wait is cut short when a rank ends): no fsync here.
            let _ = interrupted_copy(doc, &i).write_replacing(p, false);
        }
        st.interrupted = Some(i);
    }
}

pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A schema_version of 0 or a string was read as the current one by report, compare,
    /// history import and endurance --from (all read through `from_value`); refused now,
    /// naming the file. Missing, it is not an iolab result; newer, an upgrade is asked for.
    #[test]
    fn a_schema_version_iolab_never_wrote_is_refused_naming_the_file() {
        let doc = |v: serde_json::Value| {
            let mut d = serde_json::to_value(ResultDoc::new("run", Vec::new(), Default::default()))
                .unwrap();
            d["tool"]["name"] = "iolab".into();
            match v {
                serde_json::Value::Null => {
                    d.as_object_mut().unwrap().remove("schema_version");
                }
                v => d["schema_version"] = v,
            }
            ResultDoc::from_value(d, "x.json")
        };
        assert!(doc(SCHEMA_VERSION.into()).is_ok());
        for (v, shown) in [
            (serde_json::json!(0), "0"),
            (serde_json::json!("1"), "\"1\""),
        ] {
            let e = doc(v).unwrap_err().0;
            assert_eq!(
                e,
                format!(
                    "x.json: schema_version {shown} is not one iolab writes (a whole number from 1; this iolab understands up to {SCHEMA_VERSION})"
                )
            );
        }
        let e = doc(serde_json::Value::Null).unwrap_err().0;
        assert!(e.starts_with("x.json: not an iolab result"), "{e}");
        let e = doc((SCHEMA_VERSION + 1).into()).unwrap_err().0;
        assert!(e.contains("newer than this iolab understands"), "{e}");
    }

    /// A result read back (from its file, from the history) holds the very figures it was
    /// written with: serde_json's default float parser was off by one in the last digit
    /// for some values, so a result exported from the history differed from its file.
    #[test]
    fn figures_survive_a_round_trip_through_json_exactly() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = (x >> 11) as f64 / (1u64 << 53) as f64 * 1e7;
            let back: f64 = serde_json::from_str(&serde_json::to_string(&v).unwrap()).unwrap();
            assert_eq!(back.to_bits(), v.to_bits(), "{v:?} came back as {back:?}");
        }
    }

    /// `--output FILE`: named as a file (it said "cannot create the output directory
    /// FILE: File exists").
    #[test]
    fn an_output_that_is_a_file_is_named_as_one() {
        let f = tempfile::NamedTempFile::new().unwrap();
        let e = ResultSink::create(Some(f.path()), "run").err().unwrap();
        let text = e.to_string();
        assert!(text.contains("is a file, not a directory"), "{text}");
        assert!(e.downcast_ref::<crate::error::UsageError>().is_some());
    }

    /// `--output result.json` made a directory named result.json with run-DATE.json inside;
    /// it is the result file now, its directory made, an existing one left whole until the
    /// first save replaces it.
    #[test]
    fn an_output_ending_in_json_is_the_result_file() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("new").join("Result.JSON");
        let sink = ResultSink::create(Some(&file), "run").unwrap();
        assert!(file.is_file(), "{file:?}");
        let mut doc = ResultDoc::new("run", vec!["iolab".into()], Environment::default());
        doc.status = "complete".into();
        sink.save(&doc).unwrap();
        assert_eq!(ResultDoc::read(&file).unwrap().command, "run");
        // Readable by the user's other accounts (it was 0600, the temp file's mode).
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o644, "{mode:o}");
        let old = d.path().join("old.json");
        std::fs::write(&old, "kept").unwrap();
        ResultSink::create(Some(&old), "run").unwrap();
        assert_eq!(std::fs::read_to_string(&old).unwrap(), "kept");
        // A directory named *.json stays a directory of results.
        let dir = d.path().join("runs.json");
        std::fs::create_dir(&dir).unwrap();
        ResultSink::create(Some(&dir), "run").unwrap();
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    }

    #[test]
    fn a_test_stopped_by_a_signal_ended_interrupted_not_failed() {
        let mut t = TestResult::default();
        assert_eq!(t.ended_early(), None);
        for (error, ended) in [
            ("interrupted by SIGINT", "interrupted"),
            ("RND4K Q1T1 read: interrupted by SIGTERM", "interrupted"),
            ("interrupted", "interrupted"),
            (
                "pwrite at offset 0 failed: No space left on device",
                "failed",
            ),
        ] {
            t.error = Some(error.into());
            assert_eq!(t.ended_early(), Some(ended), "{error}");
        }
    }

    /// A signal marks the saved file at once; later saves of the still-running document keep
    /// saying so; the finished document replaces it.
    #[test]
    fn an_interrupt_marks_the_saved_file_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let sink = ResultSink::create(Some(dir.path()), "run").unwrap();
        let path = sink.path.clone().unwrap();
        let mut doc = ResultDoc::new("run", vec!["iolab".into()], Environment::default());
        sink.save(&doc).unwrap();
        assert_eq!(ResultDoc::read(&path).unwrap().status, "running");

        sink.interrupt_marker().mark(libc::SIGINT, "SIGINT");
        let on_disk = ResultDoc::read(&path).unwrap();
        assert_eq!(on_disk.status, "interrupted");
        assert_eq!(on_disk.error.as_deref(), Some("interrupted by SIGINT"));
        assert!(on_disk.finished_at.is_some());

        doc.tests.push(TestResult::default());
        sink.save(&doc).unwrap();
        let on_disk = ResultDoc::read(&path).unwrap();
        assert_eq!(
            (on_disk.status.as_str(), on_disk.tests.len()),
            ("interrupted", 1)
        );

        doc.finish(&Ok(()));
        sink.save(&doc).unwrap();
        assert_eq!(ResultDoc::read(&path).unwrap().status, "complete");
        // A finished file is never marked afterwards.
        sink.interrupt_marker().mark(libc::SIGTERM, "SIGTERM");
        assert_eq!(ResultDoc::read(&path).unwrap().status, "complete");
    }
}

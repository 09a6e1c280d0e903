//! Progress display: a bar per test on a terminal (indicatif), plain lines otherwise.
//! Respects NO_COLOR. Always on stderr, so `--json` output on stdout stays clean.
//!
//! Beside the display, a machine-readable stream (the hidden `--progress-json PATH`, which
//! `iolab serve` gives the runs it starts): one JSON object per line for every task's start,
//! progress and end, every live point (IOPS, bytes/s, mean latency) and the saved result.
//! The line format is documented in docs/GUIDE.md (`serve`); readers skip unknown events.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use serde::Serialize;

/// Where the JSON progress lines go, when `--progress-json` asked for them.
static JSON_STREAM: OnceLock<JsonStream> = OnceLock::new();

struct JsonStream {
    file: Mutex<std::fs::File>,
    started: Instant,
}

/// Open the JSON progress stream (`--progress-json PATH`): appended to, created if missing
/// (a regular file, a FIFO or `/dev/fd/N` alike). Call once, before the command runs.
pub fn open_json_stream(path: &Path) -> std::io::Result<()> {
    let file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)?;
    let _ = JSON_STREAM.set(JsonStream {
        file: Mutex::new(file),
        started: Instant::now(),
    });
    Ok(())
}

/// Is a JSON progress stream open?
pub fn json_stream_on() -> bool {
    JSON_STREAM.get().is_some()
}

/// Write one event to the JSON progress stream (nothing when none is open). `event` names
/// it; the fields of `body` (an object) follow, with `t_ms` since the stream was opened.
/// A line is written whole in one call, so lines of several threads do not interleave.
pub fn emit(event: &str, body: impl Serialize) {
    let Some(s) = JSON_STREAM.get() else { return };
    let mut v = serde_json::to_value(body).unwrap_or(serde_json::Value::Null);
    let mut obj = serde_json::Map::new();
    obj.insert("event".into(), event.into());
    obj.insert(
        "t_ms".into(),
        (s.started.elapsed().as_millis() as u64).into(),
    );
    if let Some(m) = v.as_object_mut() {
        obj.append(m);
    }
    let mut line = serde_json::Value::Object(obj).to_string();
    line.push('\n');
    if let Ok(mut f) = s.file.lock() {
        // A reader that went away must not stop the run.
        let _ = f.write_all(line.as_bytes());
    }
}

/// One live point of a running block test: the rates over the last sampling period.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct LivePoint {
    pub iops: f64,
    pub bw_bytes_per_s: f64,
    /// Mean completion latency over the period (0 when nothing completed).
    pub lat_mean_ns: f64,
}

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressMode {
    Bar,
    Lines,
    Quiet,
}

impl ProgressMode {
    pub fn detect(quiet: bool) -> ProgressMode {
        if quiet {
            ProgressMode::Quiet
        } else if std::io::stderr().is_terminal() {
            ProgressMode::Bar
        } else {
            ProgressMode::Lines
        }
    }
}

pub fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// One task's progress (a test run, a prefill).
pub struct Progress {
    mode: ProgressMode,
    bar: Option<ProgressBar>,
    label: String,
    /// The label as the terminal shows it (a prefill's label names the test file, whose
    /// directory may carry an escape sequence): `os::text::terminal`.
    shown: String,
    started: Instant,
    /// When the last `progress` event went to the JSON stream (ms since `started`).
    last_json_ms: AtomicU64,
}

impl Progress {
    pub fn start(mode: ProgressMode, label: &str) -> Progress {
        let shown = crate::os::text::terminal(label).into_owned();
        let bar = (mode == ProgressMode::Bar).then(|| {
            let b = ProgressBar::with_draw_target(Some(1000), ProgressDrawTarget::stderr());
            let tpl = if no_color() {
                "{prefix:24} [{bar:30}] {percent:>3}% {msg}"
            } else {
                "{prefix:24.bold} [{bar:30.cyan/blue}] {percent:>3}% {msg}"
            };
            b.set_style(
                ProgressStyle::with_template(tpl)
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            b.set_prefix(shown.clone());
            b
        });
        if mode == ProgressMode::Lines {
            crate::eline!("iolab: {shown} ...");
        }
        emit("task_start", serde_json::json!({ "label": label }));
        Progress {
            mode,
            bar,
            label: label.to_string(),
            shown,
            started: Instant::now(),
            last_json_ms: AtomicU64::new(0),
        }
    }

    pub fn set(&self, fraction: f64, msg: &str) {
        if let Some(b) = &self.bar {
            b.set_position((fraction.clamp(0.0, 1.0) * 1000.0) as u64);
            b.set_message(msg.to_string());
        }
        if json_stream_on() {
            // At most four lines a second: the display may be set far more often.
            let now = self.started.elapsed().as_millis() as u64;
            let last = self.last_json_ms.load(Ordering::Relaxed);
            if now == 0 || now >= last + 250 {
                self.last_json_ms.store(now, Ordering::Relaxed);
                emit(
                    "progress",
                    serde_json::json!({
                        "label": self.label,
                        "fraction": fraction.clamp(0.0, 1.0),
                        "message": msg,
                    }),
                );
            }
        }
    }

    /// A live point of this task (rates over the last period) for the JSON stream.
    pub fn point(&self, fraction: f64, p: &LivePoint) {
        if !json_stream_on() {
            return;
        }
        emit(
            "point",
            serde_json::json!({
                "label": self.label,
                "fraction": fraction.clamp(0.0, 1.0),
                "elapsed_ms": self.started.elapsed().as_millis() as u64,
                "iops": p.iops,
                "bw_bytes_per_s": p.bw_bytes_per_s,
                "lat_mean_ns": p.lat_mean_ns,
            }),
        );
    }

    /// A line for the user in the middle of the task (above the bar on a terminal), also
    /// in quiet mode, and as a `note` event on the JSON stream.
    pub fn note(&self, line: &str) {
        emit(
            "note",
            serde_json::json!({ "label": self.label, "message": line }),
        );
        let line = crate::os::text::terminal(line);
        match &self.bar {
            Some(b) => b.println(line),
            None => crate::eline!("{line}"),
        }
    }

    /// Whether the task's message is drawn live (a bar on a terminal), so that lines
    /// repeating it are not needed.
    pub fn is_live(&self) -> bool {
        self.bar.is_some()
    }

    /// End a task that did not complete: "stopped" after a stop, else "failed". The error
    /// itself is the command's final one, said once: a failed prefill's line said it too.
    pub fn finish_failed(self, stopped: bool) {
        self.finish(if stopped { "stopped" } else { "failed" });
    }

    pub fn finish(self, msg: &str) {
        emit(
            "task_end",
            serde_json::json!({
                "label": self.label,
                "message": msg,
                "elapsed_ms": self.started.elapsed().as_millis() as u64,
            }),
        );
        match self.mode {
            ProgressMode::Bar => {
                if let Some(b) = self.bar {
                    b.finish_and_clear();
                }
            }
            ProgressMode::Lines => crate::eline!(
                "iolab: {} done in {:.1} s: {}",
                self.shown,
                self.started.elapsed().as_secs_f64(),
                crate::os::text::terminal(msg)
            ),
            ProgressMode::Quiet => {}
        }
    }
}

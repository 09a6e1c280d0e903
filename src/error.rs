//! Error types per area, and the process exit codes.
//!
//! Library code returns these typed errors; `app.rs` wraps them in `anyhow` and `main.rs`
//! maps them to an exit code: bad input (anything the user can fix by changing the command
//! line) is exit 2 and nothing is created; a failure while running is exit 1.

use std::path::PathBuf;

use thiserror::Error;

/// Process exit codes (documented in the README, "How to read a result").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    Success = 0,
    /// The run started but failed (I/O error, ENOSPC, a failed verification).
    Failure = 1,
    /// Bad input: nothing was run, nothing was created.
    Usage = 2,
    /// Stopped by SIGINT (128 + 2).
    Interrupted = 130,
    /// Stopped by SIGHUP (128 + 1).
    HangUp = 129,
    /// Stopped by SIGTERM (128 + 15).
    Terminated = 143,
}

/// The user asked for something that cannot be done: exit code 2, nothing created.
#[derive(Debug, Error)]
#[error("{0}")]
pub struct UsageError(pub String);

impl UsageError {
    pub fn new(msg: impl Into<String>) -> Self {
        UsageError(msg.into())
    }
}

/// Shorthand: `return Err(usage!("--bs {} is not a power of two", bs))`.
#[macro_export]
macro_rules! usage {
    ($($arg:tt)*) => { anyhow::Error::new($crate::error::UsageError(format!($($arg)*))) };
}

/// An error already printed where it happened (a rank of a distributed run says why it
/// stops before the ranks part): `main` exits with `code` and prints nothing more.
#[derive(Debug, Error)]
#[error("{message}")]
pub struct Reported {
    pub message: String,
    pub code: ExitCode,
}

/// The run was stopped by a signal (what it measured is saved where a result file was asked
/// for: `family::execute` says which).
#[derive(Debug, Error)]
#[error("interrupted by {signal_name}")]
pub struct Interrupted {
    pub signal: i32,
    pub signal_name: &'static str,
}

/// I/O engine failures.
#[derive(Debug, Error)]
pub enum EngineError {
    #[error("io_uring is not available here: {0}")]
    UringUnavailable(String),
    #[error("{op} at offset {offset} on {path} failed: {source}")]
    Io {
        op: &'static str,
        offset: u64,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("short {op} at offset {offset}: {done} of {want} bytes")]
    Short {
        op: &'static str,
        offset: u64,
        done: usize,
        want: usize,
    },
}

/// A failed external program (mkfs, mount, losetup, smartctl, ...), with its stderr framed.
#[derive(Debug, Error)]
#[error("`{command}` failed ({status}):\n{}", frame(stderr))]
pub struct CommandError {
    pub command: String,
    pub status: String,
    pub stderr: String,
}

fn frame(text: &str) -> String {
    let body: Vec<String> = text
        .trim_end()
        .lines()
        .map(|l| format!("  | {l}"))
        .collect();
    if body.is_empty() {
        "  | (no output)".to_string()
    } else {
        body.join("\n")
    }
}

/// `text` on one line: a failed program's framed output (`  | ...` lines) joined with
/// spaces, for a usage error, which is one line.
pub fn one_line(text: &str) -> String {
    text.lines()
        .map(|l| {
            let l = l.trim();
            l.strip_prefix('|').unwrap_or(l).trim()
        })
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The signal that stopped a run, when the error chain holds one.
pub fn interrupted(err: &anyhow::Error) -> Option<&Interrupted> {
    err.chain().find_map(|c| c.downcast_ref::<Interrupted>())
}

/// How a test ended on `err`: "interrupted" (a signal stopped it) or "failed".
pub fn stopped_or_failed(err: &anyhow::Error) -> &'static str {
    if interrupted(err).is_some() {
        "interrupted"
    } else {
        "failed"
    }
}

/// Map an error chain to an exit code.
pub fn exit_code_for(err: &anyhow::Error) -> ExitCode {
    for cause in err.chain() {
        if let Some(r) = cause.downcast_ref::<Reported>() {
            return r.code;
        }
        if cause.downcast_ref::<UsageError>().is_some() {
            return ExitCode::Usage;
        }
        if let Some(i) = cause.downcast_ref::<Interrupted>() {
            return match i.signal {
                libc::SIGTERM => ExitCode::Terminated,
                libc::SIGHUP => ExitCode::HangUp,
                _ => ExitCode::Interrupted,
            };
        }
    }
    ExitCode::Failure
}

//! The recorded-trace file: JSON lines. Line 1 is a [`Header`] (command, root, timing,
//! the files and directories that must exist before replay); every further line is one
//! [`Call`] with its thread, time, path relative to the root, offset and length.
//! Documented in docs/workloads.md. Reading validates every line and reports `FILE:LINE`.

use std::io::Write;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::UsageError;

pub const FORMAT: &str = "iolab-trace";
/// 2: `recorder`, `clock_resolution_ns` and `lost_events` in the header, `ring` on calls
/// (asynchronous I/O through io_uring), later the optional `recorder_cost`. Version 1
/// files read as `recorder: "strace"`.
pub const VERSION: u32 = 2;

/// A path's bytes as the trace file's text (`os::text::path_text`): a lossy conversion
/// would give two such names the same text, and the replay would make one file of the
/// program's two. Both recorders name files this way.
pub use crate::os::text::path_text;

/// Which recorder made a trace.
pub const RECORDER_STRACE: &str = "strace";
pub const RECORDER_TRACEPOINTS: &str = "tracepoints";

fn strace_recorder() -> String {
    RECORDER_STRACE.into()
}

/// The tracepoints recorder's own cost, measured on this machine just before the program
/// ran (the same calls timed with the thread followed and not followed), and what was taken
/// out of the time stamps for it: without `--raw-times`, every call starts earlier by the
/// cost of the traced calls before it in its process tree, so that `--timing recorded`
/// replays the program's pace rather than the recorder's.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct RecorderCost {
    /// Added to a call without a path (its two ftrace events), ns.
    pub call_ns: u64,
    /// Added to a call with a path (the events and the BPF copy of the path), ns.
    pub path_call_ns: u64,
    /// Taken out of the time stamps: how much earlier the last call starts than recorded
    /// (0 with `--raw-times`).
    pub removed_ns: u64,
}

/// A file that existed before the recording started and that the program used.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Fixture {
    pub path: String,
    pub size: u64,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Header {
    pub format: String,
    pub version: u32,
    /// `tracepoints` (kernel tracepoints, kernel time stamps) or `strace` (ptrace, the
    /// fallback; its time stamps include strace's own stops).
    #[serde(default = "strace_recorder")]
    pub recorder: String,
    /// Resolution of `t_ns`/`dur_ns` (tracepoints: 1000, the trace text's microseconds;
    /// strace: 1000 for `-ttt -T`).
    pub clock_resolution_ns: Option<u64>,
    /// Kernel events the recorder lost (its buffer overran); non-zero means the trace
    /// misses calls.
    #[serde(default, skip_serializing_if = "crate::model::is_zero")]
    pub lost_events: u64,
    /// The tracepoints recorder's measured cost per call and what was taken out of the
    /// time stamps for it (absent: strace, or an older trace; the times are as recorded).
    pub recorder_cost: Option<RecorderCost>,
    pub command: Vec<String>,
    /// The recording root (absolute, as recorded); paths below are relative to it.
    pub root: String,
    pub recorded_at: String,
    /// From the first kept call's start to the last one's end (with the recorder's cost taken
    /// out when `recorder_cost.removed_ns` > 0).
    pub recorded_ns: u64,
    /// The traced command's whole run time (strace overhead included).
    pub wall_ns: u64,
    pub exit_code: Option<i32>,
    pub calls: u64,
    pub threads: u32,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Calls on paths outside the root (libraries, /dev/null, ...), not kept.
    pub skipped_outside_root: u64,
    /// Calls that failed when recorded (ENOENT probes, ...), not kept.
    pub skipped_failed: u64,
    pub files: Vec<Fixture>,
    pub dirs: Vec<String>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "lowercase")]
pub enum CallOp {
    Open,
    Close,
    Read,
    Write,
    Fsync,
    Fdatasync,
    Stat,
    Unlink,
    Rmdir,
    Rename,
    Mkdir,
    Truncate,
}

impl CallOp {
    pub fn name(self) -> &'static str {
        match self {
            CallOp::Open => "open",
            CallOp::Close => "close",
            CallOp::Read => "read",
            CallOp::Write => "write",
            CallOp::Fsync => "fsync",
            CallOp::Fdatasync => "fdatasync",
            CallOp::Stat => "stat",
            CallOp::Unlink => "unlink",
            CallOp::Rmdir => "rmdir",
            CallOp::Rename => "rename",
            CallOp::Mkdir => "mkdir",
            CallOp::Truncate => "truncate",
        }
    }
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Call {
    /// Start time, ns since the first kept call.
    pub t_ns: u64,
    /// Recorded thread (or process) id; replay uses one thread per id.
    pub tid: u32,
    pub op: CallOp,
    pub path: String,
    /// Rename target.
    pub to: Option<String>,
    pub off: Option<u64>,
    /// Bytes transferred (read/write) or new length (truncate).
    pub len: Option<u64>,
    /// Open flags: comma-separated subset of `write`, `create`, `trunc`, `append`, `excl`.
    pub flags: Option<String>,
    pub dur_ns: u64,
    /// Asynchronous I/O: the io_uring it went through (numbered in order of first use per
    /// recording). `t_ns` is its submission, `dur_ns` the time to its completion; replay
    /// issues such calls through iolab's io_uring engine at the ring's recorded depth.
    pub ring: Option<u32>,
}

/// Where a trace will be written, claimed before the program runs: a temporary file beside
/// the output (so a place that cannot take the trace — read-only, no permission, full of
/// inodes — is refused before anything runs, not after the recording), renamed over the
/// output once the trace is complete (never a half-written trace). Removed on drop when the
/// trace is not written.
pub struct Claim {
    file: Option<std::fs::File>,
    tmp: PathBuf,
    path: PathBuf,
}

impl Claim {
    /// Create the temporary file beside `path` (`.NAME.PID-N.tmp`), 0666 less the umask
    /// as `File::create` makes it.
    pub fn new(path: &Path) -> std::io::Result<Claim> {
        use std::os::unix::fs::OpenOptionsExt;
        let dir = crate::os::dir_of(path);
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut n = 0;
        loop {
            let tmp = dir.join(format!(".{name}.{}-{n}.tmp", std::process::id()));
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o666)
                .open(&tmp)
            {
                Ok(f) => {
                    // Known to the registry: after a second Ctrl-C (exit at once) or a
                    // SIGKILL the next iolab start removes it.
                    crate::fs::guard::register_created_file(&tmp);
                    return Ok(Claim {
                        file: Some(f),
                        tmp,
                        path: path.to_path_buf(),
                    });
                }
                // A left-over of a killed recording with the same process id.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100 => n += 1,
                Err(e) => return Err(e),
            }
        }
    }

    /// Write header + calls and rename the file to the output. True when it replaced a file
    /// that was there.
    pub fn write(mut self, h: &Header, calls: &[Call]) -> anyhow::Result<bool> {
        let file = self.file.take().expect("written once");
        let mut f = std::io::BufWriter::new(file);
        writeln!(f, "{}", serde_json::to_string(h)?)?;
        for c in calls {
            writeln!(f, "{}", serde_json::to_string(c)?)?;
        }
        f.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        let replaced = std::fs::symlink_metadata(&self.path).is_ok();
        std::fs::rename(&self.tmp, &self.path)?;
        crate::fs::guard::unregister_created_file(&self.tmp);
        self.tmp = PathBuf::new();
        Ok(replaced)
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if !self.tmp.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.tmp);
            crate::fs::guard::unregister_created_file(&self.tmp);
        }
    }
}

/// When a trace file holds fewer calls than its header records (`calls`, written with the
/// trace): the file was cut short (a copy interrupted, lines deleted), and whatever is
/// computed from it covers only part of the recording. The message says how much.
pub fn truncation(shown: &Path, h: &Header, held: usize) -> Option<String> {
    let held = held as u64;
    (held < h.calls).then(|| {
        format!(
            "{} holds {held} of the {} calls its header records: the file was cut short",
            shown.display(),
            h.calls
        )
    })
}

/// A relative path that stays inside the root (no `..`, not absolute, not empty).
pub fn safe_relative(p: &str) -> bool {
    let path = Path::new(p);
    !p.is_empty()
        && path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// The largest file offset (and size) Linux takes: `loff_t` is signed. Calls beyond it
/// cannot be replayed, and their `off + len` overflowed the replay's and the summary's
/// arithmetic (a panic).
pub const MAX_OFFSET: u64 = i64::MAX as u64;

/// The latest a call may start or last, in ns (100 years): the sums of time stamps and
/// durations stay far from overflowing (`t_ns + dur_ns` panicked the summary and replay).
pub const MAX_TIME_NS: u64 = 100 * 365 * 86_400 * 1_000_000_000;

/// Read and validate a trace file.
pub fn read(path: &Path) -> Result<(Header, Vec<Call>), UsageError> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| UsageError::new(format!("{shown}: cannot read: {e}")))?;
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (_, first) = lines
        .next()
        .ok_or_else(|| UsageError::new(format!("{shown}: empty trace file")))?;
    // The format and version first: a newer version's header may not parse as this one's
    // (it said "missing field `command`" instead of "newer than this iolab reads").
    let not_header = |e: serde_json::Error| {
        UsageError::new(format!("{shown}:1: not an iolab trace header ({e})"))
    };
    let v: serde_json::Value = serde_json::from_str(first).map_err(not_header)?;
    let format = v.get("format").and_then(|f| f.as_str()).unwrap_or("");
    if format != FORMAT {
        return Err(UsageError::new(format!(
            "{shown}:1: format '{format}' is not {FORMAT}"
        )));
    }
    if let Some(version) = v.get("version").and_then(|x| x.as_u64())
        && version > u64::from(VERSION)
    {
        return Err(UsageError::new(format!(
            "{shown}:1: trace version {version} is newer than this iolab reads ({VERSION})"
        )));
    }
    let h: Header = serde_json::from_value(v).map_err(not_header)?;
    if let Some(f) = h.files.iter().find(|f| f.size > MAX_OFFSET) {
        return Err(UsageError::new(format!(
            "{shown}:1: file '{}' of {} bytes is beyond the largest file Linux has ({MAX_OFFSET} bytes)",
            f.path, f.size
        )));
    }
    for p in h.files.iter().map(|f| &f.path).chain(&h.dirs) {
        if !safe_relative(p) {
            return Err(UsageError::new(format!(
                "{shown}:1: path '{p}' leaves the replay directory"
            )));
        }
    }
    // Every line is written whole with its newline: a last line without one that stops
    // inside a call is where a copy was cut short.
    let unterminated = (!text.ends_with('\n')).then(|| text.lines().count().saturating_sub(1));
    let mut calls = Vec::new();
    for (i, line) in lines {
        let n = i + 1;
        let c: Call = match serde_json::from_str(line) {
            Ok(c) => c,
            // The calls before it stand, and `truncation` names the shortfall against the
            // header's count (a cut mid-line was "EOF while parsing an object", exit 2,
            // where a cut between lines was a warning).
            Err(e) if e.is_eof() && Some(i) == unterminated => break,
            Err(e) => return Err(UsageError::new(format!("{shown}:{n}: {e}"))),
        };
        let bad = |why: &str| UsageError::new(format!("{shown}:{n}: {} call: {why}", c.op.name()));
        if !safe_relative(&c.path) || c.to.as_deref().is_some_and(|t| !safe_relative(t)) {
            return Err(bad("path leaves the replay directory"));
        }
        if c.t_ns > MAX_TIME_NS || c.dur_ns > MAX_TIME_NS {
            return Err(bad(&format!(
                "t_ns {} or dur_ns {} is beyond 100 years",
                c.t_ns, c.dur_ns
            )));
        }
        match c.op {
            CallOp::Read | CallOp::Write if c.off.is_none() || c.len.is_none() => {
                return Err(bad("needs off and len"));
            }
            CallOp::Read | CallOp::Write
                if c.off.unwrap_or(0).saturating_add(c.len.unwrap_or(0)) > MAX_OFFSET =>
            {
                return Err(bad(&format!(
                    "off {} + len {} ends beyond the largest file Linux has ({MAX_OFFSET} bytes)",
                    c.off.unwrap_or(0),
                    c.len.unwrap_or(0)
                )));
            }
            CallOp::Truncate if c.len.is_none() => return Err(bad("needs len")),
            CallOp::Truncate if c.len.unwrap_or(0) > MAX_OFFSET => {
                return Err(bad(&format!(
                    "len {} is beyond the largest file Linux has ({MAX_OFFSET} bytes)",
                    c.len.unwrap_or(0)
                )));
            }
            CallOp::Rename if c.to.is_none() => return Err(bad("needs to")),
            _ => {}
        }
        calls.push(c);
    }
    Ok((h, calls))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: a header of a newer trace version without today's fields was "not an
    /// iolab trace header (missing field `command`)"; it is named as newer.
    #[test]
    fn a_newer_version_is_named_before_its_fields_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("n.trace");
        std::fs::write(&p, "{\"format\":\"iolab-trace\",\"version\":99}\n").unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(
            e.ends_with("n.trace:1: trace version 99 is newer than this iolab reads (2)"),
            "{e}"
        );
        std::fs::write(&p, "{\"format\":\"other\",\"version\":1}\n").unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(
            e.ends_with("n.trace:1: format 'other' is not iolab-trace"),
            "{e}"
        );
    }

    /// A copy cut inside its last line reads as cut short (the calls before it, and the
    /// truncation against the header), as one cut between lines does; it was refused with
    /// "EOF while parsing an object". An incomplete line that is not the file's end, or
    /// one that ends with its newline, is still an error.
    #[test]
    fn a_file_cut_inside_its_last_line_is_cut_short() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.trace");
        let head = serde_json::to_string(&Header {
            format: FORMAT.into(),
            version: VERSION,
            calls: 2,
            ..Default::default()
        })
        .unwrap();
        let call = r#"{"t_ns":0,"tid":1,"op":"stat","path":"a","dur_ns":10}"#;
        let cut = &call[..20];
        std::fs::write(&p, format!("{head}\n{call}\n{cut}")).unwrap();
        let (h, calls) = read(&p).unwrap();
        assert_eq!(calls.len(), 1);
        assert!(truncation(&p, &h, calls.len()).is_some());
        std::fs::write(&p, format!("{head}\n{cut}\n")).unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(e.contains("c.trace:2: EOF while parsing"), "{e}");
        std::fs::write(&p, format!("{head}\n{cut}\n{call}")).unwrap();
        assert!(read(&p).is_err(), "a broken line in the middle");
    }

    #[test]
    fn fewer_calls_than_the_header_records_is_a_truncation() {
        let h = Header {
            calls: 8,
            ..Default::default()
        };
        let p = Path::new("p.trace");
        assert_eq!(
            truncation(p, &h, 2).as_deref(),
            Some("p.trace holds 2 of the 8 calls its header records: the file was cut short")
        );
        assert_eq!(truncation(p, &h, 8), None);
        assert_eq!(
            truncation(p, &h, 9),
            None,
            "only fewer calls is a truncation"
        );
    }
}

//! `iolab trace record -o app.trace -- COMMAND ARGS...`: run the command under the
//! tracepoints recorder (`tracepoints/`: kernel events, no ptrace stops, io_uring seen) or,
//! where that cannot run (not root, no tracefs/BTF), under strace (following forks and
//! threads, with timestamps, durations and fd paths); write a trace file whose paths are
//! relative to `--root` and that names its recorder.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result};

use super::tracefile::{self, Header};
use crate::error::UsageError;

/// Which recorder `iolab trace record` uses (`--recorder`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorder {
    /// Tracepoints when available (root, tracefs, BTF), else strace with a note.
    Auto,
    /// Kernel tracepoints (syscalls, io_uring) and tiny BPF programs.
    Tracepoints,
    /// strace (ptrace): works without root, sees no io_uring I/O.
    Strace,
}

/// What to record and where to (`cli::trace` checks it from the command line).
#[derive(Debug, Clone)]
pub struct RecordSettings {
    /// The program and its arguments.
    pub command: Vec<String>,
    /// Calls under this directory are kept (default: the current one).
    pub root: Option<PathBuf>,
    /// The trace file to write.
    pub output: PathBuf,
    pub recorder: Recorder,
    /// `--raw-times`: leave the recorder's cost in the time stamps.
    pub raw_times: bool,
}

/// The system calls recorded: files, descriptors and process creation (to follow fds).
pub const SYSCALLS: &str = "open,openat,openat2,creat,close,read,readv,pread64,preadv,preadv2,\
write,writev,pwrite64,pwritev,pwritev2,lseek,dup,dup2,dup3,fcntl,fsync,fdatasync,stat,lstat,\
fstat,newfstatat,statx,unlink,unlinkat,rmdir,mkdir,mkdirat,rename,renameat,renameat2,\
truncate,ftruncate,copy_file_range,sendfile,clone,clone3,fork,vfork,io_uring_setup,io_setup";

/// Everything checked before the command runs: strace present, command found, root and
/// output directory usable.
fn validate(a: &RecordSettings, strace: bool) -> Result<PathBuf, UsageError> {
    if strace && !crate::fs::command::have("strace") {
        return Err(UsageError::new(
            "strace is not installed; install it with: apt-get install strace",
        ));
    }
    let prog = &a.command[0];
    let found = if prog.contains('/') {
        Path::new(prog).is_file()
    } else {
        std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).any(|d| d.join(prog).is_file()))
            .unwrap_or(false)
    };
    if !found {
        return Err(UsageError::new(format!(
            "command '{prog}' not found (not a file, not on PATH)"
        )));
    }
    let root = a.root.clone().unwrap_or_else(|| PathBuf::from("."));
    let root = root
        .canonicalize()
        .map_err(|e| UsageError::new(format!("--root {}: {e}", root.display())))?;
    if !root.is_dir() {
        return Err(UsageError::new(format!(
            "--root {}: not a directory",
            root.display()
        )));
    }
    let parent = crate::os::dir_of(&a.output);
    if !parent.is_dir() {
        return Err(UsageError::new(format!(
            "-o {}: directory {} does not exist",
            a.output.display(),
            parent.display()
        )));
    }
    if a.output.is_dir() {
        return Err(UsageError::new(format!(
            "-o {}: is a directory",
            a.output.display()
        )));
    }
    // The trace is renamed over the output: never over a device, a pipe or a socket.
    if let Ok(md) = std::fs::symlink_metadata(&a.output)
        && !(md.is_file() || md.is_symlink())
    {
        return Err(UsageError::new(format!(
            "-o {}: exists and is not a regular file",
            a.output.display()
        )));
    }
    Ok(root)
}

/// Claim the output before the program runs: a place that cannot take the trace is a usage
/// error with nothing run (the recording used to be lost after the program had run).
fn claim(a: &RecordSettings) -> Result<tracefile::Claim, UsageError> {
    tracefile::Claim::new(&a.output).map_err(|e| {
        let dir = crate::os::dir_of(&a.output);
        UsageError::new(format!(
            "-o {}: cannot create a file in {}: {e}; nothing was run",
            a.output.display(),
            dir.display()
        ))
    })
}

/// Which recorder runs: `--recorder auto` takes the tracepoints where they can run.
fn choose(a: &RecordSettings) -> Result<bool, UsageError> {
    match (a.recorder, super::tracepoints::unavailable()) {
        (Recorder::Strace, _) => Ok(false),
        (_, None) => Ok(true),
        (Recorder::Tracepoints, Some(why)) => Err(UsageError::new(format!(
            "--recorder tracepoints cannot run here: {why}"
        ))),
        (Recorder::Auto, Some(why)) => {
            crate::eline!(
                "iolab: note: recording with strace ({why}; the low-overhead tracepoints recorder needs root, tracefs and BTF)"
            );
            Ok(false)
        }
    }
}

/// Renders the trace summary printed after recording (the report layer's, passed down).
pub type RenderSummary<'a> = &'a dyn Fn(&crate::model::trace::TraceSummary) -> String;

pub fn execute(a: &RecordSettings, render: RenderSummary) -> Result<i32> {
    let root = validate(a, false)?;
    let tracepoints = choose(a)?;
    if !tracepoints {
        validate(a, true)?;
    }
    let mut out = Some(claim(a)?);
    // Ctrl-C reaches the traced program (same process group); iolab itself keeps going
    // so the trace of what ran until then is still written. A signal to iolab alone is
    // passed on to the program (`os::signals::wait_passing_on`).
    let stop = crate::os::signals::StopFlag::new();
    stop.install().context("cannot install signal handlers")?;
    if tracepoints {
        match super::tracepoints::record(&a.command, &root, a.raw_times, &stop) {
            Ok(r) => {
                let out = out.take().expect("claimed above");
                let code = finish(a, out, &root, r, tracefile::RECORDER_TRACEPOINTS, render)?;
                stop.check()?;
                return Ok(code);
            }
            Err(e) if a.recorder == Recorder::Auto && crate::fs::command::have("strace") => {
                crate::eline!(
                    "iolab: note: the tracepoints recorder failed ({e:#}); recording with strace"
                );
            }
            Err(e) => return Err(e),
        }
    }
    let log_dir =
        tempfile::tempdir().context("cannot create a temporary directory for the strace log")?;
    let log = log_dir.path().join("strace.log");
    let t0 = Instant::now();
    // Not fs::command::run: the traced program keeps the user's terminal (stdin, stdout,
    // stderr), like running it without iolab.
    let mut strace = Command::new("strace")
        .args(["-f", "-ttt", "-T", "-y", "-qq", "-s", "0", "-e"])
        .arg(format!("trace={SYSCALLS}"))
        .arg("-o")
        .arg(&log)
        .arg("--")
        .args(&a.command)
        .spawn()
        .context("cannot start strace")?;
    // The program is strace's child: a stop iolab alone received goes to it, not to strace
    // (which would detach and leave it running untraced).
    let status =
        crate::os::signals::wait_passing_on(&mut strace, &stop, &crate::os::signals::children_of)
            .context("cannot wait for strace")?;
    let wall_ns = t0.elapsed().as_nanos() as u64;
    let text = std::fs::read_to_string(&log).context("strace wrote no log")?;
    if text.trim().is_empty() && !status.success() {
        anyhow::bail!("strace failed ({status}) before the command ran");
    }
    let parsed = super::strace::parse(&text, &root);
    let r = super::tracepoints::Recorded {
        parsed,
        status,
        wall_ns,
        lost_events: 0,
        notes: Vec::new(),
        cost: None,
    };
    let out = out.take().expect("claimed above");
    let code = finish(a, out, &root, r, tracefile::RECORDER_STRACE, render)?;
    stop.check()?;
    Ok(code)
}

/// Write the trace, print what was recorded and its summary.
fn finish(
    a: &RecordSettings,
    out: tracefile::Claim,
    root: &Path,
    r: super::tracepoints::Recorded,
    recorder: &str,
    render: RenderSummary,
) -> Result<i32> {
    let (p, status, wall_ns) = (r.parsed, r.status, r.wall_ns);
    let unseen = async_unseen(recorder, &p);
    let header = Header {
        format: tracefile::FORMAT.into(),
        version: tracefile::VERSION,
        recorder: recorder.into(),
        clock_resolution_ns: Some(1000),
        lost_events: r.lost_events,
        recorder_cost: r.cost,
        command: a.command.clone(),
        root: root.display().to_string(),
        recorded_at: crate::model::now_rfc3339(),
        recorded_ns: p.recorded_ns,
        wall_ns,
        exit_code: status.code(),
        calls: p.calls.len() as u64,
        threads: p.threads,
        read_bytes: sum(&p.calls, tracefile::CallOp::Read),
        write_bytes: sum(&p.calls, tracefile::CallOp::Write),
        skipped_outside_root: p.skipped_outside_root,
        skipped_failed: p.skipped_failed,
        files: p.files,
        dirs: p.dirs,
    };
    let replaced = out
        .write(&header, &p.calls)
        .with_context(|| format!("cannot write {}", a.output.display()))?;
    for n in &r.notes {
        crate::eline!("iolab: note: {n}");
    }
    if header.calls == 0 && header.skipped_outside_root > 0 {
        // "0 calls ... (9 calls outside the root ...)" was the only hint.
        crate::eline!(
            "iolab: warning: no call under the root {} was kept ({} outside it): the program worked elsewhere; give --root DIR where it reads and writes",
            header.root,
            header.skipped_outside_root
        );
    }
    if let Some(w) = unseen {
        crate::eline!("iolab: warning: {w}");
    }
    if header.lost_events > 0 {
        crate::eline!(
            "iolab: warning: the kernel lost {} trace events (buffer overrun); the trace misses calls",
            header.lost_events
        );
    }
    let summary = super::summary::summarize(&p.calls);
    crate::eline!("{}", render(&summary));
    crate::eline!(
        "recorded with {recorder}: {} on {} under {} ({} read, {} written; {} calls outside the root and {} failed calls not kept) -> {}",
        crate::units::count(header.calls, "call", "calls"),
        crate::units::count(header.threads as u64, "thread", "threads"),
        crate::os::text::terminal(&header.root),
        crate::units::fmt_size_iec(header.read_bytes),
        crate::units::fmt_size_iec(header.write_bytes),
        header.skipped_outside_root,
        header.skipped_failed,
        crate::os::text::terminal(&a.output.display().to_string())
    );
    if replaced {
        crate::eline!(
            "iolab: note: {} existed and was replaced",
            crate::os::text::terminal(&a.output.display().to_string())
        );
    }
    if let Some(c) = header.recorder_cost {
        crate::eline!("{}", cost_line(&c));
    }
    if !status.success() {
        crate::eline!(
            "iolab: warning: the command exited with {status}; the trace holds what it did"
        );
    }
    Ok(program_exit_code(status))
}

/// iolab's exit code after recording a program: the program's own, as strace and time give
/// it (a script sees a failing program fail; it exited 0), 128 + N when signal N ended it
/// (as a shell says).
fn program_exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1)
}

/// The warning when the recording lacks I/O the program submitted asynchronously: strace
/// sees no io_uring I/O, and neither recorder sees Linux AIO's (a fio random-read job
/// through io_uring under strace, or through libaio under either, was recorded as "reads
/// 0 calls" without a word).
fn async_unseen(recorder: &str, p: &super::strace::Parsed) -> Option<String> {
    let strace = recorder == tracefile::RECORDER_STRACE;
    let rings = if strace { p.uring_setups } else { 0 };
    let what = match (rings, p.aio_setups) {
        (0, 0) => return None,
        (r, 0) => crate::units::count(r, "io_uring instance", "io_uring instances"),
        (0, a) => crate::units::count(a, "Linux AIO context", "Linux AIO contexts"),
        (r, a) => format!(
            "{} and {}",
            crate::units::count(r, "io_uring instance", "io_uring instances"),
            crate::units::count(a, "Linux AIO context", "Linux AIO contexts")
        ),
    };
    let advice = if rings > 0 {
        "; record as root with --recorder tracepoints, which follows io_uring (not Linux AIO)"
    } else {
        " (no recorder follows Linux AIO's io_submit)"
    };
    Some(format!(
        "the program set up {what}: {recorder} cannot see the reads and writes submitted through them, so this trace lacks them{advice}"
    ))
}

/// What the recorder cost per call and what was taken out of the time stamps for it.
pub fn cost_line(c: &tracefile::RecorderCost) -> String {
    let per = format!(
        "the recorder's own cost, measured just before recording: {:.2} µs per call, {:.2} µs with a path",
        c.call_ns as f64 / 1e3,
        c.path_call_ns as f64 / 1e3
    );
    if c.removed_ns > 0 {
        format!(
            "{per}; taken out of the time stamps ({:.1} ms in all; --raw-times keeps them)",
            c.removed_ns as f64 / 1e6
        )
    } else {
        format!("{per}; the time stamps keep it")
    }
}

pub fn sum(calls: &[tracefile::Call], op: tracefile::CallOp) -> u64 {
    calls
        .iter()
        .filter(|c| c.op == op)
        .filter_map(|c| c.len)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::trace::strace::Parsed;

    /// What each recorder cannot see is said; what it sees is not.
    #[test]
    fn unseen_async_io_is_said_by_recorder() {
        let ring = Parsed {
            uring_setups: 1,
            ..Default::default()
        };
        let w = async_unseen(tracefile::RECORDER_STRACE, &ring).unwrap();
        assert!(
            w.starts_with("the program set up 1 io_uring instance: strace cannot see")
                && w.ends_with("--recorder tracepoints, which follows io_uring (not Linux AIO)"),
            "{w}"
        );
        assert!(async_unseen(tracefile::RECORDER_TRACEPOINTS, &ring).is_none());
        let aio = Parsed {
            aio_setups: 2,
            ..Default::default()
        };
        let w = async_unseen(tracefile::RECORDER_TRACEPOINTS, &aio).unwrap();
        assert!(
            w.starts_with("the program set up 2 Linux AIO contexts: tracepoints cannot see")
                && w.ends_with("(no recorder follows Linux AIO's io_submit)"),
            "{w}"
        );
        assert!(async_unseen(tracefile::RECORDER_STRACE, &Parsed::default()).is_none());
    }
}

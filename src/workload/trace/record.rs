//! `iolab trace record -o app.trace -- COMMAND ARGS...`: run the command under strace
//! (following forks and threads, with timestamps, durations and fd paths), parse the log
//! and write a trace file whose paths are relative to `--root`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result};

use super::tracefile::{self, Header};
use crate::cli::trace::TraceRecordArgs;
use crate::error::UsageError;

/// The system calls recorded: files, descriptors and process creation (to follow fds).
pub const SYSCALLS: &str = "open,openat,openat2,creat,close,read,readv,pread64,preadv,preadv2,\
write,writev,pwrite64,pwritev,pwritev2,lseek,dup,dup2,dup3,fcntl,fsync,fdatasync,stat,lstat,\
fstat,newfstatat,statx,unlink,unlinkat,rmdir,mkdir,mkdirat,rename,renameat,renameat2,\
truncate,ftruncate,copy_file_range,sendfile,clone,clone3,fork,vfork";

/// Everything checked before the command runs: strace present, command found, root and
/// output directory usable.
fn validate(a: &TraceRecordArgs) -> Result<PathBuf, UsageError> {
    if !crate::fs::command::have("strace") {
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
    let parent = a
        .output
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
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
    Ok(root)
}

pub fn execute(a: &TraceRecordArgs) -> Result<i32> {
    let root = validate(a)?;
    let log_dir =
        tempfile::tempdir().context("cannot create a temporary directory for the strace log")?;
    let log = log_dir.path().join("strace.log");
    // Ctrl-C reaches the traced program (same process group); iolab itself keeps going
    // so the trace of what ran until then is still written.
    let stop = crate::os::signals::StopFlag::new();
    stop.install().context("cannot install signal handlers")?;
    let t0 = Instant::now();
    // Not fs::command::run: the traced program keeps the user's terminal (stdin, stdout,
    // stderr), like running it without iolab.
    let status = Command::new("strace")
        .args(["-f", "-ttt", "-T", "-y", "-qq", "-s", "0", "-e"])
        .arg(format!("trace={SYSCALLS}"))
        .arg("-o")
        .arg(&log)
        .arg("--")
        .args(&a.command)
        .status()
        .context("cannot start strace")?;
    let wall_ns = t0.elapsed().as_nanos() as u64;
    let text = std::fs::read_to_string(&log).context("strace wrote no log")?;
    if text.trim().is_empty() && !status.success() {
        anyhow::bail!("strace failed ({status}) before the command ran");
    }
    let p = super::strace::parse(&text, &root);
    let header = Header {
        format: tracefile::FORMAT.into(),
        version: tracefile::VERSION,
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
    tracefile::write(&a.output, &header, &p.calls)
        .with_context(|| format!("cannot write {}", a.output.display()))?;
    crate::eline!(
        "recorded {} calls on {} threads under {} ({} read, {} written; {} calls outside the root and {} failed calls not kept) -> {}",
        header.calls,
        header.threads,
        header.root,
        crate::units::fmt_size_iec(header.read_bytes),
        crate::units::fmt_size_iec(header.write_bytes),
        header.skipped_outside_root,
        header.skipped_failed,
        a.output.display()
    );
    stop.check()?;
    if !status.success() {
        crate::eline!(
            "iolab: warning: the command exited with {status}; the trace holds what it did"
        );
    }
    Ok(0)
}

pub fn sum(calls: &[tracefile::Call], op: tracefile::CallOp) -> u64 {
    calls
        .iter()
        .filter(|c| c.op == op)
        .filter_map(|c| c.len)
        .sum()
}

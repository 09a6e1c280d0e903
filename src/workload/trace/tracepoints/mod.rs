//! The low-overhead recorder: kernel tracepoints (`syscalls`, `io_uring`) in a private ftrace
//! instance that follows the traced process tree, kernel time stamps, no ptrace stops. The
//! paths behind user pointers and io_uring file offsets come from tiny BPF programs
//! (`bpf.rs`); the events become strace-shaped lines (`events.rs`) that the strace parser
//! turns into calls, so both recorders share descriptors, offsets and fixtures.

pub mod bpf;
pub mod events;
pub mod ftrace;

use std::ffi::CString;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::strace::{Parsed, parse_lines};

/// Per-CPU buffer of the instance and of the BPF rings.
const BUFFER_KB: u64 = 16 << 10;
const BPF_RING_PAGES: usize = 256;

/// What the recording gave besides the calls.
pub struct Recorded {
    pub parsed: Parsed,
    pub status: ExitStatus,
    pub wall_ns: u64,
    pub lost_events: u64,
    pub notes: Vec<String>,
}

fn event_dir(event: &str) -> std::path::PathBuf {
    Path::new(ftrace::TRACEFS).join("events").join(event)
}

/// Why this recorder cannot run here (`None`: it can).
pub fn unavailable() -> Option<String> {
    if !crate::os::is_root() {
        return Some("not root".into());
    }
    if !Path::new(ftrace::TRACEFS).join("instances").is_dir() {
        return Some(format!("tracefs is not mounted at {}", ftrace::TRACEFS));
    }
    for e in [
        "syscalls/sys_enter_openat",
        "io_uring/io_uring_submit_req",
        "io_uring/io_uring_file_get",
    ] {
        if !event_dir(e).is_dir() {
            return Some(format!("the kernel has no tracepoint {e}"));
        }
    }
    if !Path::new("/sys/kernel/btf/vmlinux").exists() {
        return Some("the kernel has no BTF (/sys/kernel/btf/vmlinux)".into());
    }
    None
}

/// Offset of `field` in a tracepoint's record (from its `format` file).
fn field_offset(event: &str, field: &str) -> Option<u16> {
    let text = std::fs::read_to_string(event_dir(event).join("format")).ok()?;
    text.lines().find_map(|l| {
        let decl = l.trim().strip_prefix("field:")?;
        let (decl, rest) = decl.split_once(';')?;
        let name = decl.rsplit([' ', '*']).next()?;
        (name == field).then_some(())?;
        rest.trim()
            .strip_prefix("offset:")?
            .split(';')
            .next()?
            .parse()
            .ok()
    })
}

fn tracepoint_id(event: &str) -> Option<u64> {
    std::fs::read_to_string(event_dir(event).join("id"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Run `command` in `cwd` under the tracepoints and return its calls under `root`.
pub fn record(command: &[String], root: &Path) -> Result<Recorded> {
    let inst = ftrace::Instance::create(BUFFER_KB).context("cannot create an ftrace instance")?;
    let mut fetch = bpf::Fetcher::new(BPF_RING_PAGES).context("cannot set up BPF output")?;
    for (i, (name, strings)) in events::SYSCALLS.iter().enumerate() {
        let (enter, exit) = (
            format!("syscalls/sys_enter_{name}"),
            format!("syscalls/sys_exit_{name}"),
        );
        // Calls this architecture does not have (open, fork, ... on arm64) are skipped.
        if !event_dir(&enter).is_dir() {
            continue;
        }
        if !strings.is_empty() {
            let offs: Vec<u16> = strings
                .iter()
                .filter_map(|f| field_offset(&enter, f))
                .collect();
            let id = tracepoint_id(&enter).context("tracepoint without an id")?;
            let f = bpf::Fetch::UserStrings(offs[0], offs.get(1).copied());
            fetch
                .attach(id, f, i as u32)
                .with_context(|| format!("cannot attach a BPF program to {enter}"))?;
        }
        inst.enable(&enter)?;
        inst.enable(&exit)?;
    }
    let submit = "io_uring/io_uring_submit_req";
    let req = field_offset(submit, "req").context("io_uring_submit_req has no req field")?;
    // The request's first member is the command data, whose `struct io_rw` starts with a
    // `struct kiocb` {ki_filp, ki_pos}: ki_pos (the prepared offset) is 8 bytes in.
    fetch
        .attach(
            tracepoint_id(submit).context("tracepoint without an id")?,
            bpf::Fetch::KernelU64 { field: req, add: 8 },
            events::TAG_URING_SUBMIT,
        )
        .context("cannot attach a BPF program to io_uring_submit_req")?;
    for e in [
        submit,
        "io_uring/io_uring_file_get",
        "io_uring/io_uring_complete",
    ] {
        inst.enable(e)?;
    }
    let cwd = std::env::current_dir().context("no current directory")?;
    let pid_file = CString::new(inst.pid_file().into_os_string().into_encoded_bytes())
        .context("tracefs path")?;

    // The reader drains the trace text and the BPF rings while the program runs.
    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let done = done.clone();
        std::thread::spawn(move || {
            let (mut inst, mut fetch) = (inst, fetch);
            let (mut text, mut recs) = (Vec::new(), Vec::new());
            loop {
                let finished = done.load(Ordering::Acquire);
                if finished {
                    inst.stop();
                    fetch.detach();
                }
                let n = inst.read_available(&mut text).unwrap_or(0);
                let before = recs.len();
                fetch.drain(&mut recs);
                if finished && n == 0 && recs.len() == before {
                    break;
                }
                if n == 0 && recs.len() == before {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            let lost = inst.lost_events() + fetch.lost;
            (text, recs, lost)
        })
    };
    let t0 = Instant::now();
    let mut cmd = Command::new(&command[0]);
    cmd.args(&command[1..]);
    // SAFETY: between fork and exec the child only calls async-signal-safe functions
    // (getpid, open, write, close) on memory prepared before the fork.
    unsafe {
        cmd.pre_exec(move || {
            let mut digits = [0u8; 12];
            let mut n = libc::getpid() as u32;
            let mut i = digits.len();
            loop {
                i -= 1;
                digits[i] = b'0' + (n % 10) as u8;
                n /= 10;
                if n == 0 {
                    break;
                }
            }
            let fd = libc::open(pid_file.as_ptr(), libc::O_WRONLY | libc::O_TRUNC);
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let w = libc::write(
                fd,
                digits[i..].as_ptr() as *const libc::c_void,
                digits.len() - i,
            );
            libc::close(fd);
            if w < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let spawned = cmd.spawn();
    let status = spawned.and_then(|mut c| c.wait());
    let wall_ns = t0.elapsed().as_nanos() as u64;
    done.store(true, Ordering::Release);
    let (text, recs, lost) = reader
        .join()
        .map_err(|_| anyhow::anyhow!("the trace reader panicked"))?;
    let status = status.with_context(|| format!("cannot run {}", command[0]))?;
    let text = String::from_utf8_lossy(&text);
    let mut conv = events::Converter::new(&cwd.to_string_lossy(), recs);
    for e in text.lines().filter_map(events::parse) {
        conv.feed(e);
    }
    let conv = conv.finish();
    let mut notes = Vec::new();
    if conv.uring_unplaced > 0 {
        notes.push(format!(
            "{} io_uring reads/writes on an unknown file were not kept (registered files are not followed)",
            conv.uring_unplaced
        ));
    }
    if conv.missing_strings > 0 {
        notes.push(format!(
            "{} path calls without their path (the BPF record was lost)",
            conv.missing_strings
        ));
    }
    // Lines came in completion order; a trace is in start order (one thread's calls keep
    // their order either way: a thread has one system call at a time).
    let mut lines = conv.lines;
    lines.sort_by_key(|l| l.ts_ns);
    let parsed = parse_lines(lines.into_iter(), root);
    Ok(Recorded {
        parsed,
        status,
        wall_ns,
        lost_events: lost,
        notes,
    })
}

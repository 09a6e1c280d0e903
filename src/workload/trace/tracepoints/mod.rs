//! The low-overhead recorder: kernel tracepoints (`syscalls`, `io_uring`) in a private ftrace
//! instance that follows the traced process tree, kernel time stamps, no ptrace stops. The
//! paths behind user pointers and io_uring file offsets come from tiny BPF programs
//! (`bpf.rs`); the events become strace-shaped lines (`events.rs`) that the strace parser
//! turns into calls, so both recorders share descriptors, offsets and fixtures.

pub mod bpf;
pub mod cost;
pub mod events;
pub mod ftrace;

use std::path::Path;
use std::process::{Command, ExitStatus};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::strace::{Parsed, parse_lines};
use super::tracefile::RecorderCost;

/// Per-CPU buffer of the instance: 16 MiB (about 100,000 events; the reader empties it
/// every 20 ms), less on machines with many CPUs so that the total stays near 512 MiB.
fn buffer_kb() -> u64 {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    ((512 << 10) / cpus).clamp(1 << 10, 16 << 10)
}

/// Pages of each CPU's BPF output ring (4 MiB: it also receives other processes' records).
const BPF_RING_PAGES: usize = 1024;

/// What the recording gave besides the calls.
pub struct Recorded {
    pub parsed: Parsed,
    pub status: ExitStatus,
    pub wall_ns: u64,
    /// The traced processes' events the ftrace buffer lost: calls missing from the trace.
    pub lost_events: u64,
    pub notes: Vec<String>,
    /// The recorder's measured cost (tracepoints only) and what was taken out for it.
    pub cost: Option<RecorderCost>,
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
        return Some(format!(
            "tracefs is not mounted at {0} (as root: mount -t tracefs nodev {0})",
            ftrace::TRACEFS
        ));
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

/// Records the kernel could not write. The ftrace instance only takes the traced
/// processes' events (its pid filter), so its losses are calls missing from the trace. The
/// BPF rings take every process's path and offset records (the programs run machine-wide),
/// so their losses are told by what the trace lacks (`bpf_loss_notes`), not as lost calls.
#[derive(Debug, Default)]
struct Lost {
    ftrace: u64,
    bpf: u64,
}

/// Notes on the BPF records lost: what this trace lacks because of them (path calls not
/// kept, io_uring I/O without its offset); a loss that touched none of its calls is other
/// processes' and says nothing of this trace.
fn bpf_loss_notes(bpf_lost: u64, missing_strings: u64, missing_offsets: u64) -> Vec<String> {
    let mut notes = Vec::new();
    if missing_strings > 0 {
        notes.push(format!(
            "{} without a path, not kept (the BPF record was lost)",
            crate::units::count(missing_strings, "path call", "path calls")
        ));
    }
    if missing_offsets > 0 {
        notes.push(format!(
            "{} without an offset, kept at offset 0 (the BPF record was lost)",
            crate::units::count(
                missing_offsets,
                "io_uring read/write",
                "io_uring reads/writes"
            )
        ));
    }
    if (missing_strings > 0 || missing_offsets > 0) && bpf_lost > 0 {
        notes.push(format!(
            "the kernel lost {} machine-wide (the rings also take other processes' calls)",
            crate::units::count(bpf_lost, "BPF record", "BPF records")
        ));
    }
    notes
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

/// Run `command` in `cwd` under the tracepoints and return its calls under `root`; with
/// `raw_times` the time stamps keep the recorder's own cost (see [`cost`]).
pub fn record(
    command: &[String],
    root: &Path,
    raw_times: bool,
    stop: &crate::os::signals::StopFlag,
) -> Result<Recorded> {
    // The calls' speed with nothing traced (before any event or BPF program is on).
    let untraced = cost::time_calls();
    let kb = buffer_kb();
    let inst = ftrace::Instance::create(kb).context("cannot create an ftrace instance")?;
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

    // The reader drains the BPF rings (a copy) every 20 ms while the program runs, but the
    // trace text only when a CPU's buffer is half full: the kernel formats each event as it
    // is read, CPU time the program would compete for. The rest is read after it exits.
    let done = Arc::new(AtomicBool::new(false));
    let (hand_over, take) = std::sync::mpsc::channel::<(ftrace::Instance, bpf::Fetcher)>();
    let reader = {
        let done = done.clone();
        std::thread::spawn(move || {
            let Ok((mut inst, mut fetch)) = take.recv() else {
                return (Vec::new(), Vec::new(), Lost::default());
            };
            let (mut text, mut recs) = (Vec::new(), Vec::new());
            loop {
                let finished = done.load(Ordering::Acquire);
                if finished {
                    inst.stop();
                    fetch.detach();
                }
                let n = if finished || inst.fill(kb) > 0.5 {
                    inst.read_available(&mut text).unwrap_or(0)
                } else {
                    0
                };
                let before = recs.len();
                fetch.drain(&mut recs);
                if finished && n == 0 && recs.len() == before {
                    break;
                }
                if !finished {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            (
                text,
                recs,
                Lost {
                    ftrace: inst.lost_events(),
                    bpf: fetch.lost,
                },
            )
        })
    };
    // The pid filter holds this thread, started after the reader exists (so the reader's
    // own reads of the trace are not traced): the child it forks joins through
    // `event-fork` from its first instruction; iolab's own events are dropped below by
    // process id. (Writing the child's pid from the child would unregister and register
    // the filter's probes, an RCU grace period the program would pay.)
    inst.start(nix::unistd::gettid().as_raw())
        .context("cannot start the ftrace instance")?;
    // The same calls now that this thread is traced (its events are dropped below).
    let measured = cost::measure(untraced, cost::time_calls());
    let t0 = Instant::now();
    hand_over
        .send((inst, fetch))
        .map_err(|_| anyhow::anyhow!("the trace reader ended early"))?;
    let mut cmd = Command::new(&command[0]);
    cmd.args(&command[1..]);
    let spawned = cmd.spawn();
    let status = spawned
        .and_then(|mut c| crate::os::signals::wait_passing_on(&mut c, stop, &|pid| vec![pid]));
    let wall_ns = t0.elapsed().as_nanos() as u64;
    done.store(true, Ordering::Release);
    let (text, recs, lost) = reader
        .join()
        .map_err(|_| anyhow::anyhow!("the trace reader panicked"))?;
    let status = status.with_context(|| format!("cannot run {}", command[0]))?;
    let text = String::from_utf8_lossy(&text);
    let cwd = crate::workload::trace::tracefile::path_text(cwd.as_os_str().as_encoded_bytes());
    let mut conv = events::Converter::new(&cwd, recs);
    let me = std::process::id();
    for e in text.lines().filter_map(events::parse) {
        if e.tgid != me {
            conv.feed(e);
        }
    }
    let conv = conv.finish();
    let mut notes = Vec::new();
    if conv.uring_unplaced > 0 {
        notes.push(format!(
            "{} io_uring reads/writes on an unknown file were not kept (registered files are not followed)",
            conv.uring_unplaced
        ));
    }
    notes.extend(bpf_loss_notes(
        lost.bpf,
        conv.missing_strings,
        conv.missing_offsets,
    ));
    // Lines came in completion order; a trace is in start order (one thread's calls keep
    // their order either way: a thread has one system call at a time).
    let mut lines = conv.lines;
    lines.sort_by_key(|l| l.ts_ns);
    let cost = measured.map(|mut c| {
        if !raw_times {
            c.removed_ns = cost::take_out(&mut lines, &c);
        }
        c
    });
    let parsed = parse_lines(lines.into_iter(), root);
    Ok(Recorded {
        parsed,
        status,
        wall_ns,
        lost_events: lost.ftrace,
        notes,
        cost,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The BPF rings take every process's records, so a loss there was counted as this
    /// trace's lost calls ("the trace misses calls") when none of its calls lacked anything.
    #[test]
    fn bpf_losses_are_told_by_what_the_trace_lacks() {
        assert!(
            bpf_loss_notes(120, 0, 0).is_empty(),
            "other processes' loss"
        );
        let n = bpf_loss_notes(120, 1, 3);
        assert_eq!(
            n,
            [
                "1 path call without a path, not kept (the BPF record was lost)",
                "3 io_uring reads/writes without an offset, kept at offset 0 (the BPF record was lost)",
                "the kernel lost 120 BPF records machine-wide (the rings also take other processes' calls)",
            ]
        );
    }
}

//! A private ftrace instance (`/sys/kernel/tracing/instances/iolab-PID`): its own ring
//! buffer, clock (`mono`, the clock BPF's `ktime` reads), event list and pid filter
//! (`set_event_pid` with `event-fork`, so the traced program's children and threads are
//! followed from their first instruction). Other tracing users are not disturbed; the
//! instance is removed on drop.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

pub const TRACEFS: &str = "/sys/kernel/tracing";

pub struct Instance {
    dir: PathBuf,
    pipe: Option<File>,
}

fn write(path: &Path, value: &str) -> io::Result<()> {
    std::fs::write(path, value)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}

impl Instance {
    /// Create the instance with `buffer_kb` KiB of ring buffer per CPU; nothing is traced
    /// until events are enabled.
    pub fn create(buffer_kb: u64) -> io::Result<Instance> {
        let instances = Path::new(TRACEFS).join("instances");
        remove_stale(&instances);
        let dir = instances.join(format!("iolab-{}", std::process::id()));
        if dir.exists() {
            // Left by a killed iolab with the same pid: reuse would mix old events in.
            let _ = std::fs::remove_dir(&dir);
        }
        std::fs::create_dir(&dir)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?;
        let mut inst = Instance { dir, pipe: None };
        write(&inst.dir.join("tracing_on"), "0")?;
        write(&inst.dir.join("trace_clock"), "mono")?;
        write(&inst.dir.join("buffer_size_kb"), &buffer_kb.to_string())?;
        write(&inst.dir.join("options/event-fork"), "1")?;
        write(&inst.dir.join("options/record-tgid"), "1")?;
        // Real pointers, so io_uring requests are the same value in every event.
        let _ = write(&inst.dir.join("options/hash-ptr"), "0");
        inst.pipe = Some(
            OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(inst.dir.join("trace_pipe"))?,
        );
        Ok(inst)
    }

    /// Start recording the thread `tid` and whatever it forks from now on (`event-fork`).
    /// Threads created before this call (the reader) are not followed.
    pub fn start(&self, tid: i32) -> io::Result<()> {
        write(&self.dir.join("set_event_pid"), &tid.to_string())?;
        write(&self.dir.join("tracing_on"), "1")
    }

    /// Enable `group/event`.
    pub fn enable(&self, event: &str) -> io::Result<()> {
        write(&self.dir.join("events").join(event).join("enable"), "1")
    }

    /// Append what the trace pipe holds now; returns bytes read (0: nothing waiting).
    pub fn read_available(&mut self, out: &mut Vec<u8>) -> io::Result<usize> {
        let Some(pipe) = self.pipe.as_mut() else {
            return Ok(0);
        };
        let mut buf = vec![0u8; 1 << 20];
        let mut total = 0;
        loop {
            match pipe.read(&mut buf) {
                Ok(0) => return Ok(total),
                Ok(n) => {
                    out.extend_from_slice(&buf[..n]);
                    total += n;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(total),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Stop recording (the buffer stays readable).
    pub fn stop(&self) {
        let _ = write(&self.dir.join("tracing_on"), "0");
    }

    /// The text of every CPU's `per_cpu/cpuN/stats` of the instance (None without
    /// `per_cpu`; a CPU whose file does not read is left out).
    fn cpu_stats(&self) -> Option<impl Iterator<Item = String>> {
        let cpus = std::fs::read_dir(self.dir.join("per_cpu")).ok()?;
        Some(
            cpus.flatten()
                .filter_map(|c| std::fs::read_to_string(c.path().join("stats")).ok()),
        )
    }

    /// The fullest CPU buffer's share of `buffer_kb` holding unread events.
    pub fn fill(&self, buffer_kb: u64) -> f64 {
        let Some(stats) = self.cpu_stats() else {
            return 1.0;
        };
        stats
            .filter_map(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("bytes:"))
                    .and_then(|v| v.trim().parse::<u64>().ok())
            })
            .map(|b| b as f64 / (buffer_kb * 1024) as f64)
            .fold(0.0, f64::max)
    }

    /// Events the ring buffer overwrote or dropped, over all CPUs.
    pub fn lost_events(&self) -> u64 {
        let Some(stats) = self.cpu_stats() else {
            return 0;
        };
        stats
            .map(|s| {
                s.lines()
                    .filter_map(|l| {
                        let (k, v) = l.split_once(':')?;
                        matches!(k.trim(), "overrun" | "dropped events")
                            .then(|| v.trim().parse::<u64>().ok())
                            .flatten()
                    })
                    .sum::<u64>()
            })
            .sum()
    }
}

/// Instances of iolab processes that no longer exist (killed before their drop ran): each
/// holds a ring buffer per CPU until removed.
fn remove_stale(instances: &Path) {
    let Ok(entries) = std::fs::read_dir(instances) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("iolab-"))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new("/proc").join(pid.to_string()).exists() {
            let _ = write(&e.path().join("tracing_on"), "0");
            let _ = write(&e.path().join("events/enable"), "0");
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.stop();
        let _ = write(&self.dir.join("events/enable"), "0");
        // An instance with an open file is busy: close the pipe first.
        self.pipe = None;
        let _ = std::fs::remove_dir(&self.dir);
    }
}

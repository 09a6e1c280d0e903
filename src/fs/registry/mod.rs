//! The one registry of what iolab created, and the one recovery after a killed iolab.
//!
//! Every iolab process records what it creates before it exists, in one directory
//! (`/run/iolab` as root, a per-user temp directory otherwise; `$IOLAB_STATE_DIR` overrides
//! it, which tests use to keep to themselves), under its pid and start time:
//! - `files.rs`: test files, lock files and work trees, by path, device and inode
//!   (`owned-<pid>.json`);
//! - `devices.rs`: the matrix's images, loop devices, mounts and mount points (a state file
//!   beside the images, `iolab-matrix.state`, pointed to by `matrix-<pid>.ptr`).
//!
//! At every start, `report_stale_cleanup` finds the records of processes that are gone (a
//! reused pid has another start time), claims each (of two starts at once, one cleans), tears
//! down what they list — mounts, loops and images first (an image may back a loop, a mount
//! may hold a test file), then files and trees — checking each item is still iolab's, and
//! says what it did.

mod devices;
mod files;

use std::path::{Path, PathBuf};

use serde::Serialize;

pub use devices::{LoopRecord, MatrixState, MountRecord, StateFile, clean};
pub use files::{
    WorkDir, forget, prune_at_exit, record, record_empty_result, record_result, release_tree,
    report_unremoved, result_saved,
};

/// Where the records are kept.
pub fn registry_dir() -> PathBuf {
    // Tests point it at a directory of their own, so no concurrent iolab start cleans for them.
    if let Some(d) = std::env::var_os("IOLAB_STATE_DIR") {
        return PathBuf::from(d);
    }
    if crate::os::is_root() {
        PathBuf::from("/run/iolab")
    } else {
        std::env::temp_dir().join(format!("iolab-{}", nix::unistd::geteuid().as_raw()))
    }
}

/// Start time of process `pid` (clock ticks since boot, field 22 of /proc/PID/stat).
pub fn start_ticks(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Field 22; the command name (field 2) may hold spaces, so count after the last ')'.
    let rest = &s[s.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Is the process that wrote a record still running (a reused pid has another start time)?
pub fn alive(pid: u32, ticks: u64) -> bool {
    start_ticks(pid) == Some(ticks)
}

/// Write `value` as JSON to `path` atomically (a temp file in the same directory, renamed).
fn write_json(path: &Path, value: &impl Serialize, pretty: bool) -> std::io::Result<()> {
    let dir = crate::os::dir_of(path);
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    if pretty {
        serde_json::to_writer_pretty(&mut tmp, value)?;
    } else {
        serde_json::to_writer(&mut tmp, value)?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// A record of a dead process, renamed so that no other iolab start cleans it too; removed
/// when dropped.
struct Claimed(PathBuf);

impl Claimed {
    /// Claim the record at `path` (`None`: another start claimed it first).
    fn take(path: &Path) -> Option<Claimed> {
        let name = path.file_name()?.to_string_lossy().into_owned();
        let claimed = path.with_file_name(format!("{name}.claimed-{}", std::process::id()));
        std::fs::rename(path, &claimed).ok()?;
        Some(Claimed(claimed))
    }
}

impl Drop for Claimed {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The two kinds of record, in the order recovery handles them.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Devices,
    Files,
}

impl Kind {
    fn of(name: &str) -> Option<Kind> {
        if name.ends_with(".ptr") && name.starts_with(devices::POINTER_PREFIX) {
            Some(Kind::Devices)
        } else if name.ends_with(".json") && name.starts_with(files::MANIFEST_PREFIX) {
            Some(Kind::Files)
        } else {
            None
        }
    }
}

/// Clean up after iolab processes that are gone. Returns one message per cleaned record
/// (empty when there was nothing to do).
pub fn recover_stale() -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(registry_dir()) else {
        return Vec::new();
    };
    let mut records: Vec<(Kind, PathBuf)> = rd
        .flatten()
        .filter_map(|e| Some((Kind::of(&e.file_name().to_string_lossy())?, e.path())))
        .collect();
    // Devices of every dead process before any files (a mount may hold a test file).
    records.sort();
    records
        .iter()
        .filter_map(|(kind, path)| match kind {
            Kind::Devices => devices::recover(path),
            Kind::Files => files::recover(path),
        })
        .collect()
}

/// At startup (main.rs): clean up after killed iolab processes and say what was cleaned.
pub fn report_stale_cleanup() {
    for m in recover_stale() {
        crate::eline!("iolab: {m}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_process_is_alive_and_start_ticks_parse() {
        let pid = std::process::id();
        let t = start_ticks(pid).expect("own stat");
        assert!(alive(pid, t));
        assert!(!alive(pid, t + 1));
    }

    #[test]
    fn records_are_told_apart_by_name_and_devices_go_first() {
        assert!(Kind::of("matrix-12.ptr") == Some(Kind::Devices));
        assert!(Kind::of("owned-12.json") == Some(Kind::Files));
        assert!(Kind::of("owned-12.json.claimed-3").is_none());
        assert!(Kind::of("matrix-12.ptr.claimed-3").is_none());
        assert!(Kind::of("notes.txt").is_none());
        assert!(Kind::Devices < Kind::Files);
    }

    #[test]
    fn a_claim_is_taken_once_and_removed_when_dropped() {
        let d = tempfile::tempdir().unwrap();
        let rec = d.path().join("owned-1.json");
        std::fs::write(&rec, b"{}").unwrap();
        let c = Claimed::take(&rec).expect("first claim");
        assert!(!rec.exists() && c.0.exists());
        assert!(Claimed::take(&rec).is_none(), "nothing left to claim");
        let p = c.0.clone();
        drop(c);
        assert!(!p.exists());
    }
}

//! The registry's files: the manifest of what this process created (test files, lock files, work trees), kept on
//! disk so that a SIGKILLed iolab is cleaned up by the next start.
//!
//! Each entry records the path (as bytes: paths need not be UTF-8) with the device and inode
//! the object had when iolab created it. Recovery removes an entry only if the object at that
//! path is still that very inode and of the recorded kind (never a symlink planted in its
//! place); directories are removed with `remove_dir_all`, which never follows symlinks.
//! The manifest lives in the registry directory (`super::registry_dir`) as `owned-<pid>.json`.

use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::{Claimed, alive, registry_dir, start_ticks, write_json};

/// The start of a manifest's name in the registry: `owned-<pid>.json`.
pub(super) const MANIFEST_PREFIX: &str = "owned-";

#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct Entry {
    /// The path's bytes.
    path: Vec<u8>,
    dev: u64,
    ino: u64,
    dir: bool,
    /// A result file created empty and not saved in yet: recovery removes it only while it
    /// is still empty (a SIGKILL in the first test left an empty `run-….json`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    empty_result: bool,
    /// The result document this process writes at this path (`record_result`): a start
    /// after a kill marks it `killed` while it still says `running`. Never removed.
    result: Option<ResultOf>,
}

/// Which document at a result path is this process's own: its command and start time (each
/// save renames a new inode over the path, so the inode cannot tell).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct ResultOf {
    command: String,
    started_at: String,
}

impl Entry {
    /// What iolab created at `path` (made absolute), as it is now; `None` when it is gone.
    fn of(path: &Path, empty_result: bool) -> Option<Entry> {
        let md = std::fs::symlink_metadata(path).ok()?;
        let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        Some(Entry {
            path: abs.as_os_str().as_bytes().to_vec(),
            dev: md.dev(),
            ino: md.ino(),
            dir: md.is_dir(),
            empty_result,
            result: None,
        })
    }

    fn path(&self) -> PathBuf {
        PathBuf::from(std::ffi::OsString::from_vec(self.path.clone()))
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Manifest {
    pid: u32,
    /// Start time of the process (clock ticks since boot): a reused pid is not "alive".
    start_ticks: u64,
    entries: Vec<Entry>,
}

static MANIFEST: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

fn manifest_path(pid: u32) -> PathBuf {
    registry_dir().join(format!("{MANIFEST_PREFIX}{pid}.json"))
}

fn save(entries: &[Entry]) {
    let pid = std::process::id();
    let path = manifest_path(pid);
    if entries.is_empty() {
        let _ = std::fs::remove_file(&path);
        return;
    }
    let m = Manifest {
        pid,
        start_ticks: start_ticks(pid).unwrap_or(0),
        entries: entries.to_vec(),
    };
    if let Err(e) = write_json(&path, &m, false) {
        // Not fatal: only recovery after a SIGKILL depends on it.
        crate::eline!(
            "iolab: cannot record what it created in {}: {e}",
            path.display()
        );
    }
}

/// Record a file or directory iolab has just created (call right after creating it).
pub fn record(path: &Path) {
    record_entry(path, false);
}

/// Record the result file iolab has just created empty (`ResultSink::claimed_empty`): a start
/// after a kill removes it if it is still that empty file (a save renames a new inode over
/// it, which recovery leaves alone). The final save forgets it (`result_saved`, from
/// `family::execute` and a distributed run's rank 0): `prune_at_exit`'s inode check alone
/// kept it when the new inode reused the old one's number.
pub fn record_empty_result(path: &Path) {
    record_entry(path, true);
}

fn record_entry(path: &Path, empty_result: bool) {
    let Some(e) = Entry::of(path, empty_result) else {
        return;
    };
    if let Ok(mut v) = MANIFEST.lock() {
        v.push(e);
        save(&v);
    }
}

/// The result file at `path` will hold `doc` (`family::execute`, once the document exists):
/// if this process is killed, the next start marks the file `killed` while it still holds
/// this document at `running` (`iolab report`, `compare` and the history showed a killed
/// run as still running). Added to the entry of `record_empty_result` if there is one.
pub fn record_result(path: &Path, doc: &crate::model::ResultDoc) {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let key = abs.as_os_str().as_bytes();
    let of = ResultOf {
        command: doc.command.clone(),
        started_at: doc.started_at.clone(),
    };
    if let Ok(mut v) = MANIFEST.lock() {
        match v.iter_mut().find(|e| e.path == key) {
            Some(e) => e.result = Some(of),
            None => {
                let Some(mut e) = Entry::of(path, false) else {
                    return;
                };
                e.result = Some(of);
                v.push(e);
            }
        }
        save(&v);
    }
}

/// The result file recorded by `record_empty_result` or `record_result` has been saved in
/// for the last time: the user's now, no longer recovery's. `prune_at_exit` cannot tell: a save renames a new inode over the
/// empty file, and the next save's new inode often takes the freed number back (ext4), so
/// after an `iolab run` of one test (two saves) the final file had the recorded inode, its
/// entry outlived the process and the next start said "cleaned up after an iolab process
/// that was killed (pid N): left run-....json alone" of a run that had ended normally.
pub fn result_saved(result: Option<&Path>) {
    if let Some(p) = result {
        forget(p);
    }
}

/// Forget a path iolab removed (or handed over to the user, e.g. `--keep`).
pub fn forget(path: &Path) {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let key = abs.as_os_str().as_bytes();
    if let Ok(mut v) = MANIFEST.lock() {
        let n = v.len();
        v.retain(|e| e.path != key);
        if v.len() != n {
            save(&v);
        }
    }
}

/// At a normal exit (main.rs): drop the entries already removed (work dirs that went with
/// their guard), so the manifest only outlives the process for what is really left.
pub fn prune_at_exit() {
    if let Ok(mut v) = MANIFEST.lock() {
        let n = v.len();
        v.retain(left_behind);
        if v.len() != n || v.is_empty() {
            save(&v);
        }
    }
}

/// Is the entry still something this process left for a later cleanup? Gone or replaced by
/// another inode: no. (A result file saved in was forgotten by `result_saved` already.)
fn left_behind(e: &Entry) -> bool {
    std::fs::symlink_metadata(e.path()).is_ok_and(|md| md.dev() == e.dev && md.ino() == e.ino)
}

/// The end of a tree iolab created and recorded: removed (a failure said on stderr) unless
/// `keep`, and forgotten either way. Forgotten only after the removal: a process killed while
/// removing a large tree leaves the rest to the next start's cleanup.
pub fn release_tree(path: &Path, keep: bool) {
    if !keep
        && let Err(e) = std::fs::remove_dir_all(path)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        crate::eline!("iolab: cleanup of {} failed: {e}", path.display());
    }
    forget(path);
}

/// A work directory iolab created (a `TempDir`): recorded for cleanup after a kill, removed on
/// drop, and a failure to remove it (a read-only file system, entries someone added during the
/// cleanup) is said on stderr instead of being silent.
pub struct WorkDir(Option<tempfile::TempDir>);

impl WorkDir {
    pub fn new(dir: tempfile::TempDir) -> WorkDir {
        record(dir.path());
        WorkDir(Some(dir))
    }

    pub fn path(&self) -> &Path {
        self.0.as_ref().expect("present until consumed").path()
    }

    /// Remove it now, returning the error to the caller.
    pub fn close(mut self) -> std::io::Result<()> {
        let dir = self.0.take().expect("present until consumed");
        forget(dir.path());
        dir.close()
    }

    /// Hand it to the user (`--keep`): never removed, not even after a kill.
    pub fn keep(mut self) -> PathBuf {
        let dir = self.0.take().expect("present until consumed");
        forget(dir.path());
        dir.keep()
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let Some(dir) = self.0.take() else {
            return;
        };
        forget(dir.path());
        report_unremoved(dir.path(), std::fs::remove_dir_all(dir.path()));
    }
}

/// What iolab created at `path` and could not remove (`removed`: how its removal went), said
/// on stderr, so that nothing of iolab's is left behind silently. A path already gone is
/// fine.
pub fn report_unremoved(path: &Path, removed: std::io::Result<()>) {
    if let Err(e) = removed
        && e.kind() != std::io::ErrorKind::NotFound
    {
        crate::eline!(
            "iolab: could not remove {}: {e}; remove it by hand",
            path.display()
        );
    }
}

/// Mark the result file at `p` `killed` if it still holds the dead process's own document
/// (`of`, on the recorded file system) at `running`: what was said, or `None`.
fn mark_killed(p: &Path, dev: u64, of: &ResultOf, pid: u32) -> Option<String> {
    let md = std::fs::symlink_metadata(p).ok()?;
    if md.dev() != dev {
        return None;
    }
    let mut doc = crate::model::ResultDoc::read(p).ok()?;
    if doc.status != "running" || doc.command != of.command || doc.started_at != of.started_at {
        return None;
    }
    doc.status = "killed".into();
    // The process ended some time after its last save, unknown when; the last save (the
    // file's modification time) is the latest moment it is known to have run, and closer to
    // its end than this start, which may come days later. Absent, the result read as running.
    let saved = md
        .modified()
        .map_or_else(|_| chrono::Utc::now(), chrono::DateTime::from);
    doc.finished_at = Some(saved.to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
    doc.error = Some(format!(
        "iolab (pid {pid}) ended without finishing (SIGKILL, the OOM killer or a crash); \
         the tests it had finished are kept"
    ));
    Some(match doc.write_atomic(p) {
        Ok(()) => format!("marked {} as killed", p.display()),
        Err(err) => format!("could not mark {} as killed: {err}", p.display()),
    })
}

/// What recovery did with the temporary copy of a save (`.NAME.tmp` beside the result).
enum TempCopy {
    /// Written whole and the dead process's own document: renamed over the result file.
    Taken,
    /// Cut short, or not its document: removed, and said.
    Removed(String),
}

/// A process killed in a save, after its temporary copy was written and before the rename,
/// left the result file one save behind (or empty, claimed, at the first save) and the copy
/// beside it. The copy, when it reads whole as the dead process's own document, is the
/// newest result: it is put in place. Any other copy at that name is iolab's, cut short: it
/// is removed.
fn take_temp_copy(p: &Path, dev: u64, of: &ResultOf) -> Option<TempCopy> {
    let tmp = crate::model::temp_path(p);
    let md = std::fs::symlink_metadata(&tmp).ok()?;
    if md.dev() != dev || !md.file_type().is_file() {
        return None;
    }
    let whole = crate::model::ResultDoc::read(&tmp)
        .is_ok_and(|d| d.command == of.command && d.started_at == of.started_at);
    if whole && std::fs::rename(&tmp, p).is_ok() {
        return Some(TempCopy::Taken);
    }
    Some(TempCopy::Removed(match std::fs::remove_file(&tmp) {
        Ok(()) => format!("removed {} (a save cut short)", tmp.display()),
        Err(err) => format!("could not remove {}: {err}", tmp.display()),
    }))
}

/// Remove one entry if the object there is still the one iolab created; a result file that
/// was saved in is marked `killed` instead, never removed.
fn remove_entry(e: &Entry, pid: u32) -> Option<String> {
    let p = e.path();
    if let Some(of) = &e.result {
        let copy = take_temp_copy(&p, e.dev, of);
        if let Some(said) = mark_killed(&p, e.dev, of, pid) {
            return Some(match copy {
                Some(TempCopy::Taken) => {
                    format!("{said} (its last save, found whole in the temporary copy)")
                }
                Some(TempCopy::Removed(removed)) => format!("{said}; {removed}"),
                None => said,
            });
        }
        if let Some(TempCopy::Removed(said)) = copy {
            return Some(said);
        }
        // Saved in (whatever inode number it has now): the user's, never removed.
        let saved_in = std::fs::symlink_metadata(&p).is_ok_and(|md| md.len() != 0);
        if !e.empty_result || saved_in {
            return None;
        }
    }
    let md = std::fs::symlink_metadata(&p).ok()?;
    let same = md.dev() == e.dev && md.ino() == e.ino;
    if e.empty_result && !(same && md.file_type().is_file()) {
        // Saved over (a save renames a new inode onto it): a result, nothing to say.
        return None;
    }
    let kind_ok = if e.dir {
        md.file_type().is_dir()
    } else {
        md.file_type().is_file()
    };
    if !same || !kind_ok {
        return Some(format!(
            "left {} alone (no longer the one iolab created)",
            p.display()
        ));
    }
    if e.empty_result {
        // Never saved in: no test had finished. Anything in it now is not iolab's to drop.
        if md.len() != 0 {
            return Some(format!(
                "left {} alone (a result file that is no longer empty)",
                p.display()
            ));
        }
        return Some(match std::fs::remove_file(&p) {
            Ok(()) => format!(
                "removed the empty result file {} (no test had finished)",
                p.display()
            ),
            Err(err) => format!(
                "could not remove the empty result file {}: {err}",
                p.display()
            ),
        });
    }
    // A lock file a live run has reopened (same inode) and holds is not stale.
    if !e.dir
        && let Ok(f) = std::fs::File::open(&p)
    {
        use std::os::fd::AsRawFd;
        // SAFETY: flock on an fd we own; released when `f` is closed.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            return Some(format!("left {} alone (in use)", p.display()));
        }
    }
    let r = if e.dir {
        std::fs::remove_dir_all(&p)
    } else {
        std::fs::remove_file(&p)
    };
    Some(match r {
        Ok(()) => format!("removed {}", p.display()),
        Err(err) => format!("could not remove {}: {err}", p.display()),
    })
}

/// Clean up after the process whose manifest is at `path`, if it is gone: the message
/// saying what was removed, or `None` (alive, claimed by another start, nothing left).
pub(super) fn recover(path: &Path) -> Option<String> {
    let m = serde_json::from_slice::<Manifest>(&std::fs::read(path).ok()?).ok()?;
    if m.pid == std::process::id() || alive(m.pid, m.start_ticks) {
        return None;
    }
    let _claim = Claimed::take(path)?;
    // Newest first: a test file inside a work tree goes before the tree.
    let done: Vec<String> = m
        .entries
        .iter()
        .rev()
        .filter_map(|e| remove_entry(e, m.pid))
        .collect();
    (!done.is_empty()).then(|| {
        format!(
            "cleaned up after an iolab process that was killed (pid {}): {}",
            m.pid,
            done.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_held_by_a_live_run_is_left_alone() {
        let d = tempfile::tempdir().unwrap();
        let lock = crate::runner::lock::TargetLock::acquire(d.path()).unwrap();
        let p = d.path().join(".iolab.lock");
        let e = Entry::of(&p, false).unwrap();
        let done = remove_entry(&e, 1).unwrap();
        assert!(done.contains("in use") && p.exists(), "{done}");
        drop(lock);
    }

    /// A result file claimed empty and never saved in (a SIGKILL in the first test) is
    /// removed by the next start's recovery, and said; one with anything in it is left.
    #[test]
    fn an_empty_never_saved_result_file_is_removed_and_a_written_one_left() {
        let d = tempfile::tempdir().unwrap();
        let entry = |p: &Path| Entry::of(p, true).unwrap();
        let empty = d.path().join("run-1.json");
        std::fs::write(&empty, b"").unwrap();
        let done = remove_entry(&entry(&empty), 1).unwrap();
        assert!(!empty.exists(), "{done}");
        assert!(done.contains("removed the empty result file"), "{done}");
        let written = d.path().join("run-2.json");
        std::fs::write(&written, b"").unwrap();
        let e = entry(&written);
        std::fs::write(&written, b"{}").unwrap();
        let done = remove_entry(&e, 1).unwrap();
        assert!(written.exists() && done.contains("left"), "{done}");
        // The manifest of older iolab versions (no `empty_result`) still reads.
        let old: Entry =
            serde_json::from_str(r#"{"path":[47],"dev":1,"ino":2,"dir":false}"#).unwrap();
        assert!(!old.empty_result);
    }

    /// A SIGKILL between a save's temporary copy and its rename left the result file one
    /// save behind (here: empty, claimed, at the first save) and the copy beside it, hidden:
    /// the next start removed the empty file as "no test had finished" and left the copy.
    /// Recovery now puts the copy in place and marks it; a copy cut short is removed.
    #[test]
    fn a_save_killed_before_its_rename_is_recovered_from_its_temporary_copy() {
        use crate::model::{ResultDoc, temp_path};
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("run-1.json");
        std::fs::write(&path, b"").unwrap();
        let mut e = Entry::of(&path, true).unwrap();
        let mut doc = ResultDoc::new("run", vec!["iolab".into()], Default::default());
        doc.started_at = "2026-11-27T11:00:00.000Z".into();
        doc.tests.push(Default::default());
        e.result = Some(ResultOf {
            command: "run".into(),
            started_at: doc.started_at.clone(),
        });
        let tmp = temp_path(&path);
        let text = serde_json::to_string_pretty(&doc).unwrap();
        std::fs::write(&tmp, &text).unwrap();
        let said = remove_entry(&e, 9).unwrap();
        assert_eq!(
            said,
            format!(
                "marked {} as killed (its last save, found whole in the temporary copy)",
                path.display()
            )
        );
        assert!(!tmp.exists());
        let marked = ResultDoc::read(&path).unwrap();
        assert_eq!((marked.status.as_str(), marked.tests.len()), ("killed", 1));
        // A copy cut short: the saved result stays as it was, the copy goes.
        std::fs::write(&tmp, &text[..text.len() / 2]).unwrap();
        let said = remove_entry(&e, 9).unwrap_or_default();
        assert!(!tmp.exists(), "{said}");
        assert!(said.contains("a save cut short"), "{said}");
        assert_eq!(ResultDoc::read(&path).unwrap().status, "killed");
        // Beside a saved result still `running`: both are said.
        doc.write_atomic(&path).unwrap();
        std::fs::write(&tmp, &text[..text.len() / 2]).unwrap();
        let said = remove_entry(&e, 9).unwrap();
        assert!(!tmp.exists(), "{said}");
        assert!(
            said.starts_with(&format!("marked {} as killed; removed ", path.display()))
                && said.ends_with("(a save cut short)"),
            "{said}"
        );
    }

    /// A SIGKILL after the first save left the result file `running` for good, and `iolab
    /// report`, `compare` and the history showed it as still running. Recovery marks the dead
    /// process's own document `killed` (kept, with its tests), and touches no other document
    /// at that path: another run's, or one that ended.
    #[test]
    fn a_killed_runs_own_result_is_marked_killed_and_no_other_document() {
        use crate::model::ResultDoc;
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("run-1.json");
        let mut doc = ResultDoc::new("run", vec!["iolab".into()], Default::default());
        doc.started_at = "2026-11-26T16:00:00.000Z".into();
        doc.tests.push(Default::default());
        doc.write_atomic(&path).unwrap();
        let mut e = Entry::of(&path, true).unwrap();
        e.result = Some(ResultOf {
            command: "run".into(),
            started_at: doc.started_at.clone(),
        });
        // Saved again (a new inode): still that process's document.
        doc.write_atomic(&path).unwrap();
        let saved_at = std::fs::metadata(&path).unwrap().modified().unwrap();
        let said = remove_entry(&e, 77).unwrap();
        assert_eq!(said, format!("marked {} as killed", path.display()));
        let marked = ResultDoc::read(&path).unwrap();
        assert_eq!(marked.status, "killed");
        // Finished at the last save: its file's modification time before the marking.
        let saved: chrono::DateTime<chrono::Utc> = saved_at.into();
        assert_eq!(
            marked.finished_at.as_deref(),
            Some(
                saved
                    .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
                    .as_str()
            )
        );
        assert_eq!(marked.tests.len(), 1, "the saved tests are kept");
        assert!(marked.error.unwrap().contains("pid 77"));
        // Marked once: a second pass leaves it.
        assert!(remove_entry(&e, 77).is_none() && path.exists());
        // Another run's document at that path, or this one finished: not touched, not removed.
        for (started, status) in [
            ("2026-11-26T17:00:00.000Z", "running"),
            (doc.started_at.as_str(), "complete"),
        ] {
            let mut other = doc.clone();
            other.started_at = started.into();
            other.status = status.into();
            other.write_atomic(&path).unwrap();
            assert!(remove_entry(&e, 77).is_none());
            assert_eq!(ResultDoc::read(&path).unwrap(), other);
        }
        // A result file given with --output that existed (not claimed empty): never removed.
        let mut kept = e.clone();
        kept.empty_result = false;
        assert!(remove_entry(&kept, 77).is_none() && path.exists());
    }

    #[test]
    fn recovery_removes_only_the_inodes_it_created() {
        let d = tempfile::tempdir().unwrap();
        let ours = d.path().join("iolab-test.dat");
        std::fs::write(&ours, b"x").unwrap();
        let tree = d.path().join("tree");
        std::fs::create_dir_all(tree.join("sub")).unwrap();
        let replaced = d.path().join("replaced");
        std::fs::write(&replaced, b"old").unwrap();
        let entry = |p: &Path| Entry::of(p, false).unwrap();
        let entries = [entry(&ours), entry(&tree), entry(&replaced)];
        // Someone else's file now sits where iolab's was: a new inode.
        std::fs::remove_file(&replaced).unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), &replaced).unwrap();
        let done: Vec<String> = entries.iter().filter_map(|e| remove_entry(e, 1)).collect();
        assert!(!ours.exists() && !tree.exists());
        assert!(replaced.symlink_metadata().is_ok() && outside.path().exists());
        assert!(done[2].contains("left"), "{done:?}");
    }
}

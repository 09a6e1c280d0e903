//! Running the phases of `iolab copy`: the data set is generated (or staged) once into a
//! RAM directory, then every repeat writes it to the target, reads it back into RAM, copies
//! it on the target and deletes it, each phase timed until the last close and separately
//! for the `syncfs` that follows, with caches dropped before each phase, df around write and
//! delete, device counters and, with `--verify`, every file hashed on both sides.
//!
//! Everything created lives in two temp directories (one in the RAM dir, one in the
//! target) owned by guards: removed on success, error and Ctrl-C alike.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};

use super::CopyConfig;
use super::copier::{Copier, delete_tree, syncfs};
use super::dataset::generate;
use super::results::{Phase, new_test, summarize_copy_test};
use super::sharing::{Evidence, classify, tree_sharing};
use super::verify::{TreeHashes, compare, failure, hash_tree};
use crate::fs::registry::WorkDir;
use crate::model::copy::{CopyRunDetail, InPlaceCopy, SpaceAccounting, VerifyResult};
use crate::model::device::DeviceCounters;
use crate::model::{ResultDoc, ResultSink, RunResult, Warning, WarningCode};
use crate::os::context::RunContext;
use crate::os::cpu_wait::{Fewer, IDLE_ADVICE, WaitSpan, Waiter};
use crate::os::progress::Progress;
use crate::stats::repeat::spread_warnings;
use crate::sysinfo::diskstats::{PhaseCounters, write_amplification};
use crate::units::{fmt_mb_per_s, fmt_size_iec};
use crate::workload::copy::CopyMethod;

/// Environment variable honoured only by debug builds (the test binary): after the write
/// phase, flip one byte of this relative path on the target, behind iolab's back, so the
/// tests can show that `--verify` catches it. Release builds ignore it.
pub const CORRUPT_ENV: &str = "IOLAB_TEST_CORRUPT_AFTER_WRITE";

/// Used bytes of the file system holding `p` (what df shows as used).
fn used_bytes(p: &Path) -> Option<u64> {
    let s = nix::sys::statvfs::statvfs(p).ok()?;
    Some((s.blocks() as u64).saturating_sub(s.blocks_free() as u64) * s.fragment_size() as u64)
}

/// How long the delete's df waits for space the file system frees in the background.
const FREE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// df after the delete (and its syncfs), untimed. xfs frees a deleted file's blocks in the
/// background (inode inactivation), after syncfs: df right then still counted the whole
/// data set, so the table said "19.4 MiB not freed" for space that came back a moment
/// later. Poll until used space is back within `slack` (and 1 MiB) of `base`, at most
/// `FREE_WAIT`; space still held then (nilfs2's checkpoints) is reported as not freed.
fn used_after_delete(target: &Path, base: u64, slack: u64) -> Option<u64> {
    let t0 = Instant::now();
    loop {
        let used = used_bytes(target)?;
        if used <= base + slack.max(1 << 20) || t0.elapsed() >= FREE_WAIT {
            return Some(used);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// What the files hold on disk: the sum of their st_blocks x 512 (as `du`); `None` when one
/// cannot be read.
fn files_bytes<'p>(root: &Path, rels: impl Iterator<Item = &'p Path>) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    rels.map(|r| {
        std::fs::symlink_metadata(root.join(r))
            .ok()
            .map(|m| m.blocks() * 512)
    })
    .sum()
}

/// The space figures of a write or a delete from df before and after (`used`), df before
/// this repeat's write (`base`, for the delete) and, for the write, what the written files
/// hold (`files`). A df that moved by more than the phase explains (another program wrote
/// to the file system: a 19 MiB data set's delete read "486.5 MiB not freed" while a build
/// ran beside it) is said (`other_writers`) and not judged.
fn judge_space(
    ph: Phase,
    data: u64,
    used: Option<(u64, u64)>,
    base: Option<u64>,
    files: Option<u64>,
) -> Option<SpaceAccounting> {
    let (b, a) = used?;
    let delta = a as i64 - b as i64;
    let mut s = SpaceAccounting {
        used_before_bytes: b,
        used_after_bytes: a,
        delta_bytes: delta,
        ..Default::default()
    };
    match ph {
        Phase::Write => {
            s.files_bytes = files;
            let held = files.unwrap_or(0).max(data);
            s.other_writers = crate::workload::df::grew_beyond(delta, held);
            if !s.other_writers && data > 0 {
                s.overhead_ratio = Some(delta as f64 / data as f64);
            }
        }
        Phase::Delete => {
            let left = a as i64 - base.unwrap_or(b) as i64;
            let slack = (data / 100).max(1 << 20) as i64;
            s.not_returned_bytes = Some(left);
            // A delete frees space: df that grew meanwhile is another program's writing.
            s.other_writers = delta > slack;
            if !s.other_writers {
                s.space_returned = Some(left <= slack);
            }
        }
        _ => return None,
    }
    Some(s)
}

/// A delete that left df above where it was before the write (`space_returned` false) while
/// the device wrote at least about that much (within 1 MiB): a delete writes metadata only,
/// so those writes are another program's, and the space they took cannot be told from the
/// data set's. A busy shared disk read "19.2 MiB not freed" for space others had used during
/// the delete; nilfs2's checkpoints hold the space with next to no device writes.
fn kept_space_may_be_others(s: &SpaceAccounting, device_written: Option<u64>) -> bool {
    let kept = s.not_returned_bytes.unwrap_or(0).max(0) as u64;
    s.space_returned == Some(false)
        && device_written.is_some_and(|w| w.saturating_add(1 << 20) >= kept)
}

/// `other-writers` for a run whose df or device moved by more than its phase explains
/// (said once per test).
fn warn_other_writers(doc: &mut ResultDoc, test: &str, r: &RunResult) {
    let Some(c) = r.copy.as_ref() else {
        return;
    };
    if c.device_other_writers {
        let written = r.device.as_ref().map_or(0, |d| d.write_bytes);
        crate::workload::df::warn_other_writers_because(
            doc,
            test,
            &format!(
                "the device wrote {} in run {}, more than a phase on a {} data set explains",
                fmt_size_iec(written),
                r.run,
                fmt_size_iec(r.bytes)
            ),
            "its write amplification and space figures are not the copy's alone (left out)",
        );
        return;
    }
    let Some(s) = r
        .copy
        .as_ref()
        .and_then(|c| c.space.as_ref())
        .filter(|s| s.other_writers)
    else {
        return;
    };
    if s.files_bytes.is_none() && s.delta_bytes <= 0 {
        // A delete whose df fell, but not back: `kept_space_may_be_others`.
        crate::workload::df::warn_other_writers_because(
            doc,
            test,
            &format!(
                "the device wrote {} during run {}'s delete, which writes metadata only, and df stayed {} above where it was before the write",
                fmt_size_iec(r.device.as_ref().map_or(0, |d| d.write_bytes)),
                r.run,
                fmt_size_iec(s.not_returned_bytes.unwrap_or(0).max(0) as u64)
            ),
            "how much of the data set's space came back cannot be told (the table says ?)",
        );
        return;
    }
    let during = match s.files_bytes {
        Some(f) => format!("while the written files hold {}", fmt_size_iec(f)),
        None => "during a delete".to_string(),
    };
    crate::workload::df::warn_other_writers(doc, test, r.run, s.delta_bytes, &during, "the copy's");
}

/// Write back dirty pages and drop the page cache, dentries and inodes (root only).
fn drop_caches() -> bool {
    nix::unistd::sync();
    std::fs::write("/proc/sys/vm/drop_caches", "3").is_ok()
}

/// One phase's timings.
struct Timed {
    close_ns: u64,
    syncfs_ns: u64,
    fallback_files: u64,
}

impl Timed {
    /// End the timed part begun at `t0`, then time the `syncfs` of the file system of `fs`.
    fn then_sync(t0: Instant, fs: &Path, fallback_files: u64) -> Result<Timed> {
        let close_ns = t0.elapsed().as_nanos() as u64;
        let t1 = Instant::now();
        syncfs(fs)?;
        Ok(Timed {
            close_ns,
            syncfs_ns: t1.elapsed().as_nanos() as u64,
            fallback_files,
        })
    }
}

/// Both work dirs: recorded for cleanup after a kill, removed on drop (a failure is said).
struct Workspace {
    ram: WorkDir,
    target: WorkDir,
    /// How the removal on a stop or an error is said.
    progress: crate::os::progress::ProgressMode,
}

/// Left on a stop or an error (a run that completes removes both itself): the trees are
/// removed here, and said, since tens of thousands of files on a busy disk take seconds (a
/// Ctrl-C in the read phase of `source-tree --scale 0.2` was followed by 11-20 s of silence,
/// inviting the second Ctrl-C that leaves them behind).
impl Drop for Workspace {
    fn drop(&mut self) {
        let left: Vec<&Path> = [self.ram.path(), self.target.path()]
            .into_iter()
            .filter(|p| p.exists())
            .collect();
        if left.is_empty() {
            return;
        }
        let p = Progress::start(self.progress, "removing the copy's work directories");
        for d in left {
            if let Err(e) = std::fs::remove_dir_all(d)
                && e.kind() != std::io::ErrorKind::NotFound
            {
                p.note(&format!("iolab: could not remove {}: {e}", d.display()));
            }
        }
        p.finish("removed");
    }
}

impl Workspace {
    fn src(&self) -> PathBuf {
        self.ram.path().join("set")
    }
    fn back(&self) -> PathBuf {
        self.ram.path().join("back")
    }
    fn written(&self) -> PathBuf {
        self.target.path().join("write")
    }
    fn copied(&self) -> PathBuf {
        self.target.path().join("copy")
    }
}

/// Run every selected phase of `cfg` for every repeat into `doc`, saving after each phase.
pub fn run_copy(
    cfg: &CopyConfig,
    ctx: &RunContext,
    doc: &mut ResultDoc,
    sink: &ResultSink,
) -> Result<()> {
    let s = &cfg.settings;
    let plan = &cfg.plan;
    let tmp = |dir: &Path| {
        let t = tempfile::Builder::new()
            .prefix("iolab-copy-")
            .tempdir_in(dir)
            .with_context(|| format!("cannot create a work directory in {}", dir.display()))?;
        anyhow::Ok(WorkDir::new(t))
    };
    let ws = Workspace {
        ram: tmp(&s.ram_dir)?,
        target: tmp(&cfg.target)?,
        progress: ctx.progress,
    };
    let can_drop = setup_warnings(cfg, doc);

    // The data set, once, in RAM.
    let expected = stage(cfg, ctx, &ws)?;

    let selected = selected_phases(s);
    let first_test = doc.tests.len();
    for ph in &selected {
        doc.tests.push(new_test(cfg, *ph, can_drop));
    }
    let index = |ph: Phase| first_test + selected.iter().position(|x| *x == ph).unwrap_or(0);
    let device = doc.environment.block_device.clone();
    let mut runner = PhaseRunner {
        cfg,
        ctx,
        ws: &ws,
        expected: expected.as_ref(),
        device,
        can_drop,
        used_before_write: None,
    };

    let mut values = Vec::new();
    let mut run = 0u32;
    while s.repeat.wants_more(&values) {
        run += 1;
        let mut headline = None;
        for ph in [
            Phase::Ceiling,
            Phase::Write,
            Phase::Read,
            Phase::Copy,
            Phase::Delete,
        ] {
            let measured = selected.contains(&ph);
            if !measured && !matches!(ph, Phase::Write | Phase::Delete) {
                continue;
            }
            let label = format!(
                "{} {} [{run}/{}]",
                plan.name,
                ph.name(),
                s.repeat.max_runs()
            );
            let outcome = runner.run_phase(ph, run, &label, measured);
            match outcome {
                Ok(None) => {}
                Ok(Some((r, verdict))) => {
                    headline.get_or_insert(r.bw_bytes_per_s.or(r.files_per_s).unwrap_or(0.0));
                    let name = doc.tests[index(ph)].name.clone();
                    warn_other_writers(doc, &name, &r);
                    let t = &mut doc.tests[index(ph)];
                    t.runs.push(r);
                    summarize_copy_test(t);
                    warn_contention(doc, index(ph));
                    sink.save(doc)?;
                    if let Some(e) = verdict {
                        doc.tests[index(ph)].error = Some(format!("{e:#}"));
                        sink.save(doc)?;
                        return Err(e);
                    }
                }
                Err(e) => {
                    if measured {
                        doc.tests[index(ph)].error = Some(format!("{e:#}"));
                        sink.save(doc)?;
                    }
                    return Err(e);
                }
            }
        }
        values.push(headline.unwrap_or(0.0));
    }
    for i in first_test..doc.tests.len() {
        for w in spread_warnings(&doc.tests[i], &s.repeat) {
            doc.warn(w);
        }
    }
    // Explicit removal so a failure to clean up is reported (the guards would be silent).
    std::fs::remove_dir_all(ws.ram.path()).context("cannot remove the RAM copy")?;
    std::fs::remove_dir_all(ws.target.path())
        .context("cannot remove the work directory on the target")?;
    Ok(())
}

/// Warning `cpu-contention` of test `test`, once, with the highest wait of its runs so far.
fn warn_contention(doc: &mut ResultDoc, test: usize) {
    let waiter = Waiter {
        who: "the copying thread",
        threads: 1,
        // One thread, never more than the CPUs; copy has no --jobs.
        fewer: Fewer::Cpus(""),
        effect: "the phase's time includes that wait and its rate may be below what the file \
                 system gives",
        advice: IDLE_ADVICE,
    };
    crate::workload::contention::warn(doc, test, |r| r.copy.as_ref()?.cpu_wait_pct, &waiter);
}

/// The warnings known before anything is copied: entries of `--source` left out, a page
/// cache that cannot be dropped (not root), a RAM dir that is not RAM. Whether caches can be
/// dropped.
fn setup_warnings(cfg: &CopyConfig, doc: &mut ResultDoc) -> bool {
    let s = &cfg.settings;
    if cfg.skipped_entries > 0 {
        doc.warn(Warning {
        code: WarningCode::SourceSkipped,
        message: format!(
            "{} entries of --source are neither files nor directories (symlinks, devices, sockets) and were not copied",
            cfg.skipped_entries
        ),
        test: None,
    });
    }
    let can_drop = drop_caches();
    if !can_drop {
        doc.warn(Warning {
        code: WarningCode::CacheWarm,
        message: "not root: the page cache could not be dropped between phases, so the read and copy phases may be served from RAM (their results are labelled warm); run as root for cold-cache numbers".into(),
        test: None,
    });
    }
    let ram_fs = crate::sysinfo::mounts::mount_of(&s.ram_dir).map(|m| m.fs_type);
    if !matches!(ram_fs.as_deref(), Some("tmpfs" | "ramfs")) {
        doc.warn(Warning {
        code: WarningCode::RamDirNotRam,
        message: format!(
            "the RAM dir {} is on {}, not tmpfs: the source side of the write phase is not free and may limit the result; give a tmpfs with --ram-dir",
            s.ram_dir.display(),
            ram_fs.as_deref().unwrap_or("an unknown file system")
        ),
        test: None,
    });
    }
    can_drop
}

/// The data set into the RAM dir (generated, or copied from `--source`), and its hashes with
/// `--verify` (checked against the source's).
fn stage(cfg: &CopyConfig, ctx: &RunContext, ws: &Workspace) -> Result<Option<TreeHashes>> {
    let (s, plan) = (&cfg.settings, &cfg.plan);
    let p = Progress::start(ctx.progress, &format!("{} into RAM", plan.name));
    let total = plan.data_bytes().max(1);
    let mut cb = |done: u64| p.set(done as f64 / total as f64, &fmt_size_iec(done));
    match &s.source {
        None => {
            std::fs::create_dir(ws.src())?;
            generate(plan, &ws.src(), s.seed, &ctx.stop, &mut cb)?;
        }
        Some(src) => {
            let mut c = Copier::new(s.opts);
            c.copy_tree(plan, src, &ws.src(), &ctx.stop, &mut cb)?;
        }
    }
    p.finish(&format!(
        "{}, {}",
        crate::units::count(plan.files.len() as u64, "file", "files"),
        fmt_size_iec(plan.data_bytes())
    ));
    Ok(match s.verify {
        None => None,
        Some(kind) => {
            let h = hash_tree(&ws.src(), kind, &ctx.stop)?;
            if let Some(src) = &s.source {
                let v = compare(&hash_tree(src, kind, &ctx.stop)?, &h, kind);
                if !v.ok {
                    return Err(failure("staging", &ws.src(), &v));
                }
            }
            Some(h)
        }
    })
}

/// The measured phases, in the order they run.
fn selected_phases(s: &super::CopySettings) -> Vec<Phase> {
    let mut selected = Vec::new();
    if s.ceiling {
        selected.push(Phase::Ceiling);
    }
    for (on, ph) in [
        (s.phases.write, Phase::Write),
        (s.phases.read, Phase::Read),
        (s.phases.copy, Phase::Copy),
        (s.phases.delete, Phase::Delete),
    ] {
        if on {
            selected.push(ph);
        }
    }
    selected
}

struct PhaseRunner<'a> {
    cfg: &'a CopyConfig,
    ctx: &'a RunContext,
    ws: &'a Workspace,
    expected: Option<&'a TreeHashes>,
    device: Option<String>,
    can_drop: bool,
    /// df used before this repeat's write: what the delete should come back to.
    used_before_write: Option<u64>,
}

/// A measured run and, when verification failed, the error that must fail the run (after
/// the run was recorded).
type PhaseOutcome = Option<(RunResult, Option<anyhow::Error>)>;

/// What timing one phase saw around it: the device counters and df before and after.
struct PhaseMeasure {
    timed: Timed,
    /// The copying thread's wait for a CPU over the timed part, % of it.
    cpu_wait_pct: Option<f64>,
    device: Option<DeviceCounters>,
    used_before: Option<u64>,
    used_after: Option<u64>,
}

impl Phase {
    /// Where the phase reads and writes (the delete removes `from`).
    fn paths(self, ws: &Workspace) -> (PathBuf, PathBuf) {
        match self {
            Phase::Ceiling => (ws.src(), ws.back()),
            Phase::Write => (ws.src(), ws.written()),
            Phase::Read => (ws.written(), ws.back()),
            Phase::Copy => (ws.written(), ws.copied()),
            Phase::Delete => (ws.written(), ws.written()),
        }
    }
}

impl PhaseRunner<'_> {
    /// Run one phase (measured or, for the write and delete the others need, as plain setup).
    fn run_phase(
        &mut self,
        ph: Phase,
        run: u32,
        label: &str,
        measured: bool,
    ) -> Result<PhaseOutcome> {
        self.ctx.stop.check()?;
        if self.can_drop {
            drop_caches();
        }
        let (from, to) = ph.paths(self.ws);
        let m = self.measure(ph, label, &from, &to, measured)?;
        // Integrity, outside the timing.
        let verify = self.verify_tree(ph, &to)?;
        // How the copy was made (data or shared extents), read before it is deleted. A data
        // set of empty files has no bytes to copy or share: none (it said `unknown`).
        let in_place = (ph == Phase::Copy && measured && self.cfg.plan.data_bytes() > 0)
            .then(|| self.how_copied(&to, &m));
        // Trees only this phase needed go now, untimed (the RAM read-back, the copy).
        if matches!(ph, Phase::Ceiling | Phase::Read | Phase::Copy) {
            delete_tree(&to)?;
            if ph == Phase::Copy {
                syncfs(self.ws.target.path())?;
            }
        }
        let verdict = match &verify {
            Some(v) if !v.ok => Some(failure(ph.name(), &to, v)),
            _ => None,
        };
        if !measured {
            return verdict.map_or(Ok(None), Err);
        }
        let mut space = self.space(ph, &m, &to);
        let data = self.cfg.plan.data_bytes();
        let held = space.as_ref().and_then(|s| s.files_bytes).unwrap_or(0);
        let device_others = m.device.as_ref().is_some_and(|d| {
            crate::workload::df::device_wrote_beyond(d.write_bytes, data.max(held))
        });
        if device_others && let Some(s) = space.as_mut() {
            // df is no more the phase's alone than the device's counters are (a writer that
            // deletes what it writes leaves df where it was).
            s.other_writers = true;
            s.overhead_ratio = None;
            s.space_returned = None;
        }
        let written = m.device.as_ref().map(|d| d.write_bytes);
        if let Some(s) = space.as_mut()
            && ph == Phase::Delete
            && kept_space_may_be_others(s, written)
        {
            s.other_writers = true;
            s.space_returned = None;
        }
        let r = self.run_result(ph, run, m, space, verify, in_place, device_others);
        Ok(Some((r, verdict)))
    }

    /// The timed part with what is read around it (device counters, df), the progress line
    /// and, after the write, what the delete should come back to. A phase run only because
    /// another needs it (`measured` false) ends its line without a rate or timings.
    fn measure(
        &mut self,
        ph: Phase,
        label: &str,
        from: &Path,
        to: &Path,
        measured: bool,
    ) -> Result<PhaseMeasure> {
        let ws = self.ws;
        let counters = if ph == Phase::Ceiling {
            None
        } else {
            PhaseCounters::start(self.device.as_deref())
        };
        let used_before = used_bytes(ws.target.path());
        let p = Progress::start(self.ctx.progress, label);
        let waited = WaitSpan::start();
        let timed = if ph == Phase::Delete {
            delete_timed(from, ws.target.path())?
        } else {
            self.copy_timed(from, to, label, &p)?
        };
        let cpu_wait_pct = waited.pct();
        let device = counters.and_then(|c| c.finish());
        let used_after = match (ph, self.used_before_write) {
            (Phase::Delete, Some(base)) => {
                let slack = self.cfg.plan.data_bytes() / 100;
                used_after_delete(ws.target.path(), base, slack)
            }
            _ => used_bytes(ws.target.path()),
        };
        if ph == Phase::Write {
            self.used_before_write = used_before;
            corrupt_for_tests(to);
        }
        p.finish(&self.summary(ph, &timed, measured));
        Ok(PhaseMeasure {
            timed,
            cpu_wait_pct,
            device,
            used_before,
            used_after,
        })
    }

    /// Copy the data set `from` -> `to`, timed until the last close, then its `syncfs`; a
    /// failure says how far it got (ENOSPC: "after N MB").
    fn copy_timed(&self, from: &Path, to: &Path, label: &str, p: &Progress) -> Result<Timed> {
        let plan = &self.cfg.plan;
        let total = plan.data_bytes().max(1) as f64;
        // How far the phase got, for the message if it fails.
        let copied = std::cell::Cell::new(0u64);
        let mut cb = |done: u64| {
            copied.set(done);
            p.set(done as f64 / total, &fmt_size_iec(done))
        };
        let mut copier = Copier::new(self.cfg.settings.opts);
        let t0 = Instant::now();
        let st = copier
            .copy_tree(plan, from, to, &self.ctx.stop, &mut cb)
            .map_err(|e| {
                if crate::error::interrupted(&e).is_some() {
                    return e;
                }
                let done = copied.get();
                e.context(format!(
                    "{label}: stopped after {} ({:.1} MB) of {}",
                    fmt_size_iec(done),
                    done as f64 / 1e6,
                    fmt_size_iec(plan.data_bytes())
                ))
            })?;
        Timed::then_sync(t0, to, st.fallback_files)
    }

    /// The progress line's last words: the rate (files/s for the delete, which moves no
    /// data) and the two timings; for a phase that is not measured, what it was for
    /// (`--phases delete` printed "write ... 212.4 MB/s" for a write nobody asked to time).
    fn summary(&self, ph: Phase, timed: &Timed, measured: bool) -> String {
        let plan = &self.cfg.plan;
        if !measured {
            return unmeasured_summary(ph, plan.files.len(), plan.data_bytes());
        }
        let total_ns = (timed.close_ns + timed.syncfs_ns).max(1);
        let rate = if ph == Phase::Delete || plan.data_bytes() == 0 {
            format!(
                "{} files/s",
                crate::units::fmt_thousands(plan.files.len() as f64 * 1e9 / total_ns as f64)
            )
        } else {
            format!(
                "{} MB/s",
                fmt_mb_per_s(plan.data_bytes() as f64 * 1e9 / total_ns as f64)
            )
        };
        // The first figure is the whole phase up to its last close (or unlink), not the time
        // spent closing: `close 1.587 s` read as if closing had taken 1.6 s.
        let last = if ph == Phase::Delete {
            "unlink"
        } else {
            "close"
        };
        format!(
            "{rate}, {:.3} s to the last {last} + syncfs {:.3} s",
            timed.close_ns as f64 / 1e9,
            timed.syncfs_ns as f64 / 1e9
        )
    }

    /// With `--verify`, the tree the phase wrote hashed and compared with the data set's.
    fn verify_tree(&self, ph: Phase, to: &Path) -> Result<Option<VerifyResult>> {
        Ok(match (self.cfg.settings.verify, self.expected) {
            (Some(kind), Some(exp)) if ph != Phase::Delete => {
                let actual = hash_tree(to, kind, &self.ctx.stop)?;
                Some(compare(exp, &actual, kind))
            }
            _ => None,
        })
    }

    /// How the copy at `to` was made: data moved, or extents shared (reflink, in-place).
    fn how_copied(&self, to: &Path, m: &PhaseMeasure) -> InPlaceCopy {
        let (s, plan) = (&self.cfg.settings, &self.cfg.plan);
        let files = plan.files.len() as u64;
        let by_hand = matches!(s.opts.method, CopyMethod::Rw | CopyMethod::Sendfile)
            || (m.timed.fallback_files > 0 && m.timed.fallback_files == files);
        classify(&Evidence {
            data_bytes: plan.data_bytes(),
            fiemap: tree_sharing(to, plan.files.iter().map(|f| f.rel.as_path())),
            bytes_moved_by_hand: by_hand,
            used_delta_bytes: m
                .used_before
                .zip(m.used_after)
                .map(|(b, a)| a as i64 - b as i64),
            device_written_bytes: m.device.as_ref().map(|d| d.write_bytes),
        })
    }

    /// df around the write (its overhead), and around the delete (whether the space came
    /// back to what it was before this repeat's write); `to` is the tree the phase wrote.
    fn space(&self, ph: Phase, m: &PhaseMeasure, to: &Path) -> Option<SpaceAccounting> {
        let plan = &self.cfg.plan;
        let files = (ph == Phase::Write)
            .then(|| files_bytes(to, plan.files.iter().map(|f| f.rel.as_path())))
            .flatten();
        judge_space(
            ph,
            plan.data_bytes(),
            m.used_before.zip(m.used_after),
            self.used_before_write,
            files,
        )
    }

    /// The measured run: rates over close + syncfs, device counters and write
    /// amplification (none when the device wrote more than the phase explains:
    /// `device_others`), and the copy details.
    #[allow(clippy::too_many_arguments)]
    fn run_result(
        &self,
        ph: Phase,
        run: u32,
        m: PhaseMeasure,
        space: Option<SpaceAccounting>,
        verify: Option<VerifyResult>,
        in_place: Option<InPlaceCopy>,
        device_others: bool,
    ) -> RunResult {
        let plan = &self.cfg.plan;
        let data = plan.data_bytes();
        let files = plan.files.len() as u64;
        let timed = m.timed;
        let total_ns = (timed.close_ns + timed.syncfs_ns).max(1);
        let app_written = if matches!(ph, Phase::Write | Phase::Copy) {
            data
        } else {
            0
        };
        let secs = total_ns as f64 / 1e9;
        // A data set of empty files moves no data: no MB/s ("0.00" read as a stalled
        // device), files/s stands.
        let rate = |ns: u64| (data > 0).then(|| data as f64 * 1e9 / ns.max(1) as f64);
        RunResult {
            run,
            elapsed_ns: total_ns,
            ops: files,
            bytes: data,
            bw_bytes_per_s: rate(total_ns),
            files_per_s: Some(files as f64 / secs),
            fsync_ns: Some(timed.syncfs_ns),
            write_amplification: m
                .device
                .as_ref()
                .filter(|_| !device_others)
                .and_then(|d| write_amplification(d, app_written)),
            device: m.device,
            copy: Some(CopyRunDetail {
                close_ns: timed.close_ns,
                syncfs_ns: timed.syncfs_ns,
                close_bw_bytes_per_s: rate(timed.close_ns),
                durable_bw_bytes_per_s: rate(total_ns),
                fallback_files: timed.fallback_files,
                space,
                verify,
                in_place,
                device_other_writers: device_others,
                cpu_wait_pct: m.cpu_wait_pct,
            }),
            ..Default::default()
        }
    }
}

/// The progress line of a phase run only because another needs it (the write a read, copy
/// or delete works on; the delete that empties the target again): what it did, no rate.
fn unmeasured_summary(ph: Phase, files: usize, data: u64) -> String {
    let what = if ph == Phase::Delete {
        "removed"
    } else {
        "written"
    };
    format!(
        "{}, {} {what} (not measured: not in --phases)",
        crate::units::count(files as u64, "file", "files"),
        fmt_size_iec(data)
    )
}

/// Delete the tree at `from`, timed until the last unlink, then `syncfs` of `target`.
fn delete_timed(from: &Path, target: &Path) -> Result<Timed> {
    let t0 = Instant::now();
    delete_tree(from)?;
    Timed::then_sync(t0, target, 0)
}

/// The test hook behind `CORRUPT_ENV` (debug builds only).
fn corrupt_for_tests(root: &Path) {
    #[cfg(debug_assertions)]
    if let Some(rel) = std::env::var_os(CORRUPT_ENV) {
        use std::os::unix::fs::FileExt;
        let path = root.join(rel);
        if let Ok(f) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
        {
            let mut b = [0u8; 1];
            if f.read_at(&mut b, 0).is_ok() {
                let _ = f.write_at(&[b[0] ^ 0xFF], 0);
            }
        }
    }
    #[cfg(not(debug_assertions))]
    let _ = root;
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    /// df over a write and a delete: the overhead and whether the space came back, unless
    /// df moved by more than the phase explains (another program wrote there), which is
    /// said and not judged.
    #[test]
    fn df_that_another_program_moved_is_said_not_judged() {
        let data = 19 * MIB;
        let w = |after: u64| {
            judge_space(
                Phase::Write,
                data,
                Some((1000 * MIB, after)),
                None,
                Some(33 * MIB),
            )
            .unwrap()
        };
        let ok = w(1033 * MIB);
        assert!(!ok.other_writers);
        assert!((ok.overhead_ratio.unwrap() - 33.0 / 19.0).abs() < 1e-9);
        assert_eq!(ok.files_bytes, Some(33 * MIB));
        // Twice what the files hold plus 16 MiB is the most a write explains.
        assert!(!w((1000 + 2 * 33 + 16) * MIB).other_writers);
        let busy = w(1600 * MIB);
        assert!(busy.other_writers && busy.overhead_ratio.is_none());

        let d = |after: u64| {
            judge_space(
                Phase::Delete,
                data,
                Some((1033 * MIB, after)),
                Some(1000 * MIB),
                None,
            )
            .unwrap()
        };
        assert_eq!(d(1000 * MIB).space_returned, Some(true));
        // Space held after the delete (nilfs2's checkpoints): not given back.
        let held = d(1033 * MIB);
        assert_eq!(held.space_returned, Some(false));
        assert_eq!(held.not_returned_bytes, Some(33 * MIB as i64));
        // df grew during a delete: someone else wrote; "486.5 MiB not freed" was wrong.
        let busy = d(1486 * MIB);
        assert!(busy.other_writers && busy.space_returned.is_none());
        assert!(judge_space(Phase::Read, data, Some((0, 0)), None, None).is_none());
    }

    /// A delete on a busy shared disk: another program wrote (and took space) while the
    /// data set was deleted, so df did not come back; the device's writes during the delete
    /// make the figure not the delete's own ("?"), where nilfs2's held checkpoints stay.
    #[test]
    fn space_another_writer_took_during_a_delete_is_not_called_not_freed() {
        let data = 19 * MIB;
        // df before the write 1000 MiB, before the delete 1019.2; the delete freed 19.2 MiB
        // while another program wrote 19.2 MiB: df ends at 1019.2 ("19.2 MiB not freed").
        let kept = 1000 * MIB + 19 * MIB + MIB / 5;
        let s = judge_space(
            Phase::Delete,
            data,
            Some((kept, kept)),
            Some(1000 * MIB),
            None,
        )
        .unwrap();
        assert_eq!(s.space_returned, Some(false), "df alone cannot tell");
        let others = 19 * MIB + MIB / 5 + 300 * 1024;
        assert!(kept_space_may_be_others(&s, Some(others)));
        // The delete's own metadata writes, or no counters: the figure stands.
        assert!(!kept_space_may_be_others(&s, Some(512 * 1024)));
        assert!(!kept_space_may_be_others(&s, None));
        // Space that came back is never in doubt.
        let freed = judge_space(
            Phase::Delete,
            data,
            Some((kept, 1000 * MIB)),
            Some(1000 * MIB),
            None,
        )
        .unwrap();
        assert!(!kept_space_may_be_others(&freed, Some(others)));
    }

    /// A phase that runs only for another's sake shows no speed.
    #[test]
    fn an_unmeasured_phase_says_what_it_did_without_a_rate() {
        let w = unmeasured_summary(Phase::Write, 1200, 19 * MIB);
        assert_eq!(
            w,
            "1,200 files, 19.0 MiB written (not measured: not in --phases)"
        );
        assert!(!w.contains("MB/s") && !w.contains("syncfs"), "{w}");
        let d = unmeasured_summary(Phase::Delete, 3, 5);
        assert!(d.starts_with("3 files, 5 B removed"), "{d}");
        // One file is one (a cd-iso said "1 files").
        let one = unmeasured_summary(Phase::Write, 1, 5);
        assert!(one.starts_with("1 file, 5 B written"), "{one}");
    }
}

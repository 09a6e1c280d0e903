//! One `iolab files` session: noise controls, the run's own directory, then for every file
//! size `repeat` runs of create (portions x passes) -> sync -> stat -> read -> delete, each
//! phase a `TestResult`, the result file saved after every run, and cleanup of exactly the
//! run's directory tree (also on error and on a signal).

use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result};

use crate::model::files::FilesRunDetail;
use crate::model::{ResultDoc, ResultSink, RunResult, TestResult, Warning, WarningCode};
use crate::os::context::RunContext;
use crate::os::cpu_wait::WaitSpan;
use crate::os::progress::Progress;
use crate::stats::repeat::spread_warnings;
use crate::sysinfo::diskstats::PhaseCounters;
use crate::units::fmt_size_iec;
use crate::workload::files::{Layout, Method, SyncMode};

use super::config::FilesConfig;
use super::engine::{Names, Op, PortionError, Reference, portion, syncfs_timed};
use super::result::{new_test, op_name, run_result, summarize_files_test, warn_contention};
use super::sizes::FileSize;

/// Portion-to-portion spread above which a run is called noisy (Belov's 5 %).
pub const PORTION_CV_LIMIT: f64 = 0.05;

/// The run's top directory in the target: removed with everything under it on drop,
/// unless the files are kept on purpose.
pub struct RunRoot {
    pub path: PathBuf,
    pub fd: OwnedFd,
    pub keep: bool,
    /// Created by this run (false: a `--shared-dir` writer's directory, whose owner
    /// removes it).
    owned: bool,
    /// How a removal that has files left to remove (a stop, an error) is said.
    progress: crate::os::progress::ProgressMode,
}

impl RunRoot {
    /// The directory all `--shared-dir` writers work in, made by their command.
    fn open_shared(target: &Path) -> Result<RunRoot> {
        let fd = open_dir_at(libc::AT_FDCWD, &cstr(target.as_os_str().as_encoded_bytes()))
            .with_context(|| format!("cannot open {}", target.display()))?;
        Ok(RunRoot {
            path: target.to_path_buf(),
            fd,
            keep: true,
            owned: false,
            progress: crate::os::progress::ProgressMode::Quiet,
        })
    }

    fn create(target: &Path, keep: bool) -> Result<RunRoot> {
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let path = target.join(format!(".iolab-files-{}-{stamp:x}", std::process::id()));
        std::fs::create_dir(&path).with_context(|| format!("cannot create {}", path.display()))?;
        // Recorded so that the next start removes it if this process is killed.
        crate::fs::registry::record(&path);
        let fd = open_dir_at(libc::AT_FDCWD, &cstr(path.as_os_str().as_encoded_bytes()))
            .with_context(|| format!("cannot open {}", path.display()))?;
        Ok(RunRoot {
            path,
            fd,
            keep,
            owned: true,
            progress: crate::os::progress::ProgressMode::Quiet,
        })
    }
}

impl Drop for RunRoot {
    fn drop(&mut self) {
        // Kept or removed, it is no longer iolab's to clean up after a kill.
        if self.owned {
            // Files left in it (a stop or an error mid-run): their removal takes seconds on
            // a busy disk (50,000 files: 26 s of silence after a Ctrl-C, inviting the second
            // one that leaves them behind), so it is said.
            let left =
                !self.keep && std::fs::read_dir(&self.path).is_ok_and(|mut d| d.next().is_some());
            let p = left.then(|| {
                Progress::start(self.progress, "removing the files test's work directory")
            });
            crate::fs::registry::release_tree(&self.path, self.keep);
            if let Some(p) = p {
                p.finish("removed");
            }
        }
    }
}

/// mkdir that, for a `--shared-dir` writer, accepts a directory another writer made first.
fn mkdir_shared(dirfd: RawFd, name: &CString, shared: bool) -> std::io::Result<()> {
    match mkdir_at(dirfd, name) {
        Err(e) if shared && e.raw_os_error() == Some(libc::EEXIST) => Ok(()),
        r => r,
    }
}

fn cstr(b: &[u8]) -> CString {
    CString::new(b).unwrap_or_else(|_| CString::from(c"?"))
}

fn open_dir_at(dirfd: RawFd, name: &CString) -> std::io::Result<OwnedFd> {
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: valid dirfd and C string.
    let fd = unsafe { libc::openat(dirfd, name.as_ptr(), flags) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fresh descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn mkdir_at(dirfd: RawFd, name: &CString) -> std::io::Result<()> {
    // SAFETY: valid dirfd and C string.
    if unsafe { libc::mkdirat(dirfd, name.as_ptr(), 0o755) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The directory (relative to the run directory) that holds portion `q` of pass `p`.
fn dir_name(layout: Layout, p: u64, q: u64) -> String {
    match layout {
        Layout::Flat => "d".into(),
        Layout::PerPass => format!("p{p:04}"),
        Layout::PerPortion => format!("p{p:04}-q{q:04}"),
    }
}

/// What one phase of one run measured (complete or up to an error).
#[derive(Debug, Default)]
struct PhaseRun {
    detail: FilesRunDetail,
    /// Why the phase stopped early, and at which directory or file.
    error: Option<(PortionError, String)>,
    /// A distributed run's stonewall stopped it before its last portion.
    stonewalled: bool,
    /// Wall clock (ns since the epoch) before the first portion and after the last one
    /// (before a final `--sync end`): a distributed run's window of this rank.
    start_wall_ns: i64,
    end_wall_ns: i64,
}

/// What a distributed `iolab files` puts around every phase: every rank runs the same plan in
/// its own directory, each phase starts on all ranks together, and stops on all of them
/// (stonewall) when the first rank has done its portions. Every call is made from the
/// command's thread; the phase itself then runs on a thread of its own, which never calls
/// into the hooks.
pub trait FilesHooks {
    /// Before each phase of each run: all ranks meet here, so they start together.
    fn before_phase(&self) -> Result<()>;
    /// How often `poll` wants to be called while a phase runs.
    fn poll_interval(&self) -> std::time::Duration;
    /// While a phase runs: true when this rank must stop after the portion it is in
    /// (another rank finished the phase first).
    fn poll(&self) -> bool;
    /// After each phase (also an empty one): this rank's result of it, when its portions
    /// started and ended (wall clock, ns since the epoch: syncs between portions included, a
    /// final `--sync end` not), and whether the stonewall stopped it early.
    fn after_phase(&self, run: &RunResult, window: (i64, i64), stonewalled: bool) -> Result<()>;
    /// Whether to do one more repeat, given this rank's own figures; every rank must get the
    /// same answer.
    fn agree_more(&self, local: bool) -> Result<bool>;
    /// After every run of one size: this rank's tests of that size (one per phase) and its
    /// warnings so far.
    fn after_size(&self, tests: &[TestResult], warnings: &[Warning]) -> Result<()>;
    /// After the last phase of each run, before its directory is removed: `--shared-dir`
    /// writers meet here, so that the one that removes the shared run directory does not
    /// pull it from under another still in its last portion.
    fn after_run(&self) -> Result<()> {
        Ok(())
    }
}

fn wall_clock_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

impl PhaseRun {
    fn stopped(mut self, e: PortionError, at: String) -> PhaseRun {
        self.error = Some((e, at));
        self
    }
}

/// Everything fixed for the runs of one size.
struct SizeRun<'a> {
    cfg: &'a FilesConfig,
    ctx: &'a RunContext,
    size: &'a FileSize,
    reference: &'a Reference,
    readbuf: &'a mut Vec<u8>,
}

/// One phase of one run, as `SizeRun::phase` carries it out.
#[derive(Clone, Copy)]
struct Phase<'p> {
    op: Op,
    /// The run's directory.
    run_fd: RawFd,
    /// The portions to do: all of them for create; those the create phase made for the others.
    limit: u64,
    /// A distributed run's stonewall, looked at before each portion (a portion is the unit
    /// every figure is made of, so a rank stops at the end of the one it is in).
    wall: Option<&'p AtomicBool>,
    /// Told the share of the portions done after each one.
    progress: &'p (dyn Fn(f64) + Sync),
}

impl SizeRun<'_> {
    /// Run the phase; `Err` carries the partial measurements. The measuring thread's wait
    /// for a CPU is read before and after, not per portion.
    fn phase(&mut self, phase: &Phase) -> PhaseRun {
        let waited = WaitSpan::start();
        let mut out = self.portions(phase);
        out.detail.cpu_wait_pct = waited.pct();
        out
    }

    /// `phase`'s portions and syncs.
    fn portions(&mut self, phase: &Phase) -> PhaseRun {
        let Phase {
            op,
            run_fd,
            limit,
            wall,
            progress,
        } = *phase;
        let cfg = self.cfg;
        let n = cfg.files_per_portion;
        let mut out = PhaseRun::default();
        let d = &mut out.detail;
        // A --shared-dir writer names its files from its own range: writer i of n has
        // files_per_run * i .. files_per_run * (i + 1), in the same directories as the others.
        let (writer, writers) = cfg.writer.map(|w| (w.index, w.of)).unwrap_or((0, 1));
        let shared = cfg.writer.is_some();
        let own_first = writer * cfg.files_per_run();
        let mut names = Names::new(cfg.files_per_run() * writers, own_first);
        let mut cur: Option<(String, OwnedFd)> = None;
        let total_portions = limit;
        let fsync_each = op == Op::Create && cfg.sync == SyncMode::File;
        out.start_wall_ns = wall_clock_ns();
        'portions: for p in 0..cfg.passes {
            for q in 0..cfg.portions {
                if p * cfg.portions + q >= limit {
                    break 'portions;
                }
                if wall.is_some_and(|w| w.load(Ordering::Relaxed)) {
                    out.stonewalled = true;
                    break 'portions;
                }
                let dname = dir_name(cfg.layout, p, q);
                if cur.as_ref().map(|(nm, _)| nm != &dname).unwrap_or(true) {
                    let c = cstr(dname.as_bytes());
                    if op == Op::Create
                        && let Err(e) = mkdir_shared(run_fd, &c, shared)
                    {
                        let pe = PortionError::from_io("mkdir", &e);
                        return out.stopped(pe, dname);
                    }
                    match open_dir_at(run_fd, &c) {
                        Ok(fd) => cur = Some((dname.clone(), fd)),
                        Err(e) => return out.stopped(PortionError::from_io("open", &e), dname),
                    }
                }
                let dirfd = cur.as_ref().map(|(_, f)| f.as_raw_fd()).unwrap_or(-1);
                let first = own_first + (p * cfg.portions + q) * n;
                names.seek(first);
                let r = portion(
                    op,
                    dirfd,
                    &mut names,
                    n,
                    self.size.bytes as usize,
                    self.reference,
                    self.readbuf,
                    fsync_each,
                    &self.ctx.stop,
                );
                let mut t = match r {
                    Ok(t) => t,
                    Err(e) => {
                        let at = format!("{dname}/{}", names.as_str());
                        return out.stopped(e, at);
                    }
                };
                d.fsync_calls += t.fsyncs;
                d.sync_ns += t.sync_ns;
                if fsync_each {
                    d.portion_sync_ns.push(t.sync_ns);
                }
                if op == Op::Create && cfg.sync == SyncMode::Portion {
                    match syncfs_timed(dirfd) {
                        Ok(ns) => {
                            d.syncfs_calls += 1;
                            d.sync_ns += ns;
                            d.portion_sync_ns.push(ns);
                        }
                        Err(e) => return out.stopped(e, dname),
                    }
                }
                let last_of_dir = match cfg.layout {
                    Layout::Flat => p + 1 == cfg.passes && q + 1 == cfg.portions,
                    Layout::PerPass => q + 1 == cfg.portions,
                    Layout::PerPortion => true,
                };
                if op == Op::Delete && last_of_dir {
                    // Removing the emptied directory is part of deleting the tree.
                    cur = None;
                    let s = std::time::Instant::now();
                    let c = cstr(dname.as_bytes());
                    // SAFETY: valid dirfd and C string.
                    if unsafe { libc::unlinkat(run_fd, c.as_ptr(), libc::AT_REMOVEDIR) } != 0 {
                        let e = std::io::Error::last_os_error();
                        // A shared directory is removed by the last writer to empty it.
                        let others = matches!(
                            e.raw_os_error(),
                            Some(libc::ENOTEMPTY | libc::EEXIST | libc::ENOENT)
                        );
                        if !(shared && others) {
                            return out.stopped(PortionError::from_io("rmdir", &e), dname);
                        }
                    }
                    t.ns += s.elapsed().as_nanos() as u64;
                }
                d.portion_ns.push(t.ns);
                d.files_done += n;
                progress(d.portion_ns.len() as f64 / total_portions as f64);
            }
        }
        out.end_wall_ns = wall_clock_ns();
        if op == Op::Create && cfg.sync == SyncMode::End {
            let fd = cur.as_ref().map(|(_, f)| f.as_raw_fd()).unwrap_or(run_fd);
            match syncfs_timed(fd) {
                Ok(ns) => {
                    d.syncfs_calls += 1;
                    d.sync_ns += ns;
                }
                Err(e) => return out.stopped(e, "syncfs".into()),
            }
        }
        out
    }
}

/// Apply --cpu and --nice; warnings for what could not be done.
fn noise_controls(cfg: &FilesConfig, doc: &mut ResultDoc) -> Result<()> {
    if let Some(c) = cfg.cpu {
        let mut set = nix::sched::CpuSet::new();
        set.set(c).map_err(|e| crate::usage!("--cpu {c}: {e}"))?;
        nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set)
            .map_err(|e| crate::usage!("--cpu {c}: sched_setaffinity failed: {e}"))?;
    }
    if cfg.nice {
        // SAFETY: plain syscall on this process.
        let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, -10) };
        if rc != 0 {
            doc.warn(Warning {
                code: WarningCode::NiceDenied,
                message: format!(
                    "--nice: could not raise the priority ({}); run as root or with CAP_SYS_NICE",
                    std::io::Error::last_os_error()
                ),
                test: None,
            });
        }
    }
    if cfg.drop_caches && !crate::os::is_root() {
        doc.warn(Warning {
            code: WarningCode::DropCachesDenied,
            message: "--drop-caches needs root: the page cache was not dropped between phases, so stat and read may be served from memory".into(),
            test: None,
        });
    }
    Ok(())
}

fn drop_caches(cfg: &FilesConfig) {
    if cfg.drop_caches && crate::os::is_root() {
        // SAFETY: sync(2) has no preconditions.
        unsafe { libc::sync() };
        let _ = std::fs::write("/proc/sys/vm/drop_caches", "3");
    }
}

/// copy_file_range cannot copy from a memfd to most file systems (EXDEV since Linux 5.19):
/// probe once and, when refused, keep the reference on the target instead.
fn prepare_reference(cfg: &FilesConfig, root: &RunRoot, doc: &mut ResultDoc) -> Result<Reference> {
    let max = cfg.sizes.iter().map(|s| s.bytes).max().unwrap_or(1) as usize;
    let mut r =
        Reference::new(cfg.method, max, 0x5EED_F11E).context("cannot make the reference file")?;
    if cfg.method == Method::CopyFileRange
        && let Some(src) = r.fd.as_ref()
    {
        // Each --shared-dir writer has its own probe and reference in the shared directory.
        let own = |name: &str| match cfg.writer {
            Some(w) => cstr(format!("{name}-{}", w.index).as_bytes()),
            None => cstr(name.as_bytes()),
        };
        let fd = super::engine::probe_copy_file_range(
            src.as_raw_fd(),
            root.fd.as_raw_fd(),
            &own(".probe"),
        );
        if let Err(e) = fd {
            r.move_to_dir(root.fd.as_raw_fd(), &own(".reference"))
                .context("cannot write the reference file on the target")?;
            doc.warn(Warning {
                code: WarningCode::ReferenceOnTarget,
                message: format!(
                    "copy_file_range from memory to this file system failed ({e}); the reference file was put on the target (its page cache keeps it in RAM); on btrfs/xfs this may share extents (reflink) instead of writing data"
                ),
                test: None,
            });
        }
    }
    Ok(r)
}

/// Run every size and phase of `cfg` into `doc`, saving after every run. Returns the kept
/// directory with --keep.
pub fn run_with(
    cfg: &FilesConfig,
    ctx: &RunContext,
    doc: &mut ResultDoc,
    sink: &ResultSink,
) -> Result<Option<PathBuf>> {
    run_with_hooks(cfg, ctx, doc, sink, None)
}

/// `run_with`, with a distributed run's hooks around every phase and after every size.
pub fn run_with_hooks(
    cfg: &FilesConfig,
    ctx: &RunContext,
    doc: &mut ResultDoc,
    sink: &ResultSink,
    hooks: Option<&dyn FilesHooks>,
) -> Result<Option<PathBuf>> {
    noise_controls(cfg, doc)?;
    let mut root = match cfg.writer {
        Some(_) => RunRoot::open_shared(&cfg.target)?,
        None => RunRoot::create(&cfg.target, cfg.keep_files)?,
    };
    root.progress = ctx.progress;
    let reference = prepare_reference(cfg, &root, doc)?;
    let max = cfg.sizes.iter().map(|s| s.bytes).max().unwrap_or(0) as usize;
    let mut readbuf = vec![0u8; (max + 1).max(64 << 10)];
    let device = doc.environment.block_device.clone();
    // The unit df counts in: the one the size tokens were resolved against.
    let space_rules = super::space::rules_for(&cfg.target);
    let mut ops = vec![Op::Create];
    if cfg.phases.stat {
        ops.push(Op::Stat);
    }
    if cfg.phases.read {
        ops.push(Op::Read);
    }
    if cfg.phases.delete {
        ops.push(Op::Delete);
    }
    for (si, size) in cfg.sizes.iter().enumerate() {
        ctx.stop.check()?;
        let base = doc.tests.len();
        for op in &ops {
            let name = format!("{} {}", size.label(), op_name(*op));
            doc.tests.push(new_test(cfg, size, op_name(*op), name));
        }
        let mut sr = SizeRun {
            cfg,
            ctx,
            size,
            reference: &reference,
            readbuf: &mut readbuf,
        };
        let mut values = Vec::new();
        let mut run = 0u32;
        loop {
            let more = cfg.repeat.wants_more(&values);
            let more = match hooks {
                Some(k) => k.agree_more(more)?,
                None => more,
            };
            if !more {
                break;
            }
            run += 1;
            let label = format!("{} [{}/{}]", size.label(), run, cfg.repeat.max_runs());
            let p = Progress::start(ctx.progress, &label);
            let run_name = cstr(format!("s{si:02}-r{run:03}").as_bytes());
            mkdir_shared(root.fd.as_raw_fd(), &run_name, cfg.writer.is_some()).with_context(
                || format!("cannot create a run directory in {}", root.path.display()),
            )?;
            let run_fd = open_dir_at(root.fd.as_raw_fd(), &run_name)?;
            let nops = ops.len() as f64;
            // The portions the create phase made; the other phases work on those.
            let mut made = cfg.passes * cfg.portions;
            for (k, op) in ops.iter().enumerate() {
                if k > 0 {
                    drop_caches(cfg);
                }
                if let Some(h) = hooks {
                    h.before_phase()?;
                }
                // df before the first file (outside the timing); not in a distributed run,
                // whose ranks create files in the same space at the same time.
                let used_before = (*op == Op::Create && hooks.is_none())
                    .then(|| super::space::used_bytes(run_fd.as_fd()))
                    .flatten();
                // df grew by more than the files explain: (growth, what they hold).
                let mut polluted = None;
                // What the run's files can hold, for judging the device's written bytes.
                let mut held_by_files = None;
                let ph = PhaseCounters::start(device.as_deref());
                let prog = |f: f64| p.set((k as f64 + f) / nops, op_name(*op));
                let phase = Phase {
                    op: *op,
                    run_fd: run_fd.as_raw_fd(),
                    limit: made,
                    wall: None,
                    progress: &prog,
                };
                let PhaseRun {
                    detail: mut d,
                    error: err,
                    stonewalled,
                    start_wall_ns,
                    end_wall_ns,
                } = match hooks {
                    None => sr.phase(&phase),
                    Some(h) => {
                        // The phase runs on its own thread; this one watches for the other
                        // ranks (no MPI call from the thread doing the I/O).
                        let wall = AtomicBool::new(false);
                        let phase = Phase {
                            wall: Some(&wall),
                            ..phase
                        };
                        let sr = &mut sr;
                        std::thread::scope(|s| {
                            let t = s.spawn(|| sr.phase(&phase));
                            while !t.is_finished() {
                                std::thread::sleep(h.poll_interval());
                                if h.poll() {
                                    wall.store(true, Ordering::Relaxed);
                                }
                            }
                            t.join()
                                .map_err(|_| anyhow::anyhow!("the files thread panicked"))
                        })?
                    }
                };
                if *op == Op::Create {
                    made = d.portion_ns.len() as u64;
                    // With every file in place (nothing deleted yet), outside the timing.
                    if let (Some(before), Some(with)) =
                        (used_before, super::space::used_bytes(run_fd.as_fd()))
                    {
                        let set = super::space::FileSet::of(cfg, size.bytes, d.files_done);
                        let predicted = space_rules
                            .as_ref()
                            .filter(|_| cfg.alloc_unit > 0)
                            .map(|r| super::space::predict(r, cfg.alloc_unit, &set));
                        let (rec, held) =
                            super::space::record(before, with, &set, cfg.alloc_unit, predicted);
                        if rec.other_writers {
                            polluted = Some((with as i64 - before as i64, held));
                        }
                        held_by_files = Some(held);
                        d.space = Some(rec);
                    }
                }
                let mut rr = run_result(run, *op, size.bytes, d, ph.as_ref());
                let device_others =
                    held_by_files.and_then(|held| super::result::judge_device(&mut rr, held));
                if let Some(h) = hooks {
                    h.after_phase(&rr, (start_wall_ns, end_wall_ns), stonewalled)?;
                }
                if *op == Op::Create {
                    values.push(rr.files_per_s.unwrap_or(0.0));
                }
                if let (Some(written), Some(held)) = (device_others, held_by_files) {
                    let name = doc.tests[base + k].name.clone();
                    crate::workload::df::warn_other_writers_because(
                        doc,
                        &name,
                        &format!(
                            "the device wrote {} in run {run} while the run's files hold at most {}",
                            fmt_size_iec(written),
                            fmt_size_iec(held)
                        ),
                        "its write amplification and space figures are not the files' alone (left out)",
                    );
                } else if let Some((delta, held)) = polluted {
                    let name = doc.tests[base + k].name.clone();
                    let during =
                        format!("while the run's files hold at most {}", fmt_size_iec(held));
                    crate::workload::df::warn_other_writers(
                        doc,
                        &name,
                        run,
                        delta,
                        &during,
                        "the files'",
                    );
                }
                let t = &mut doc.tests[base + k];
                if rr.ops > 0 || err.is_none() {
                    t.runs.push(rr);
                }
                summarize_files_test(t);
                if let Some((e, at)) = err {
                    p.finish("stopped");
                    if matches!(e, PortionError::Stopped) {
                        doc.tests[base + k].error = Some("interrupted".into());
                        sink.save(doc)?;
                        ctx.stop.check()?;
                    }
                    let msg = e.describe(&format!("{}/{}", root.path.display(), at));
                    doc.tests[base + k].error = Some(msg.clone());
                    sink.save(doc)?;
                    let what = if matches!(e, PortionError::NoSpace { .. }) {
                        "no room left"
                    } else {
                        "I/O error"
                    };
                    anyhow::bail!(
                        "{what} in {} phase of {}, run {run}: {msg}{}",
                        op_name(*op),
                        size.label(),
                        if sink.path.is_some() {
                            "; the portions measured so far are saved"
                        } else {
                            ""
                        }
                    );
                }
            }
            drop(run_fd);
            if let Some(h) = hooks {
                h.after_run()?;
            }
            // A shared run directory is removed by the first writer, once all are done.
            if !cfg.keep_files && cfg.writer.is_none_or(|w| w.index == 0) {
                let dir = root.path.join(run_name.to_string_lossy().as_ref());
                std::fs::remove_dir_all(&dir)
                    .with_context(|| format!("cannot remove {}", dir.display()))?;
            }
            p.finish(&format!(
                "{} files/s",
                crate::units::fmt_thousands(*values.last().unwrap_or(&0.0))
            ));
            for k in 0..ops.len() {
                summarize_files_test(&mut doc.tests[base + k]);
                warn_contention(cfg, doc, base + k);
            }
            sink.save(doc)?;
        }
        finish_size(cfg, doc, base);
        sink.save(doc)?;
        if let Some(h) = hooks {
            h.after_size(&doc.tests[base..], &doc.warnings)?;
        }
    }
    if let Some(big) = cfg.big.filter(|_| hooks.is_none()) {
        super::big::run_big(cfg, ctx, doc, sink, (root.fd.as_fd(), &root.path), big)?;
    }
    Ok(cfg.keep_files.then(|| root.path.clone()))
}

/// After all runs of a size: the scaling curve of the create test and spread warnings.
fn finish_size(cfg: &FilesConfig, doc: &mut ResultDoc, base: usize) {
    let t = &mut doc.tests[base];
    let series: Vec<&[u64]> = t
        .runs
        .iter()
        .filter_map(|r| r.files.as_ref().map(|d| d.portion_ns.as_slice()))
        .collect();
    let scaling =
        super::scaling::analyse(&series, cfg.files_per_portion, cfg.layout == Layout::Flat);
    if let Some(d) = t.files.as_mut() {
        d.scaling = scaling;
    }
    let mut warns: Vec<Warning> = portion_spread_warning(t).into_iter().collect();
    warns.extend(spread_warnings(&doc.tests[base], &cfg.repeat));
    for w in warns {
        doc.warn(w);
    }
}

/// The `portion-spread` warning of a create test: the largest coefficient of variation of
/// the portions within one of its runs, over the limit. The matrix gives it once per test
/// over all its runs (it gave one per run, each with that run's figure).
pub fn portion_spread_warning(t: &TestResult) -> Option<Warning> {
    let worst = t
        .runs
        .iter()
        .filter_map(|r| r.files.as_ref())
        .filter(|d| d.portion_ns.len() > 1)
        .map(|d| d.portion_cv)
        .fold(None::<f64>, |m, cv| Some(m.map_or(cv, |m| m.max(cv))))?;
    if worst <= PORTION_CV_LIMIT {
        return None;
    }
    let knee = t
        .files
        .as_ref()
        .and_then(|d| d.scaling.as_ref())
        .is_some_and(|s| s.drop_after_files.is_some());
    Some(Warning {
        code: WarningCode::PortionSpread,
        message: format!(
            "portions of one run differ by up to {:.1} % (coefficient of variation over {:.0} %){}: something else used the CPU or the device; pin with --cpu, stop other programs, or use more files per portion",
            worst * 100.0,
            PORTION_CV_LIMIT * 100.0,
            if knee {
                ", partly the slowdown as files accumulate"
            } else {
                ""
            }
        ),
        test: Some(t.name.clone()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::files::FilesRunDetail;

    /// A matrix with a files workload run twice gave two portion-spread warnings for one
    /// test ("… 112.0 %" and "… 12.8 %"), one per run; the test's warning takes the worst
    /// run, once.
    #[test]
    fn the_portion_spread_warning_takes_the_worst_run() {
        let run = |cv: f64| RunResult {
            files: Some(FilesRunDetail {
                portion_ns: vec![1, 2, 3],
                portion_cv: cv,
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut t = TestResult {
            name: "1 B create".into(),
            runs: vec![run(0.128), run(1.12), run(0.01)],
            ..Default::default()
        };
        let w = portion_spread_warning(&t).unwrap();
        assert_eq!(w.code, WarningCode::PortionSpread);
        assert!(w.message.contains("up to 112.0 %"), "{}", w.message);
        t.runs = vec![run(0.02), run(0.05)];
        assert!(portion_spread_warning(&t).is_none(), "at the limit");
    }
}

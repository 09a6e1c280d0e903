//! Executes an aging profile (`workload::age`): below the target fullness it creates files
//! (sizes drawn from the profile, spread over a fixed directory tree); at it, it deletes a
//! random file and lets the next creates fill the hole, or grows a file (appends). It writes
//! the profile's churn in total, syncs the file system every 1/1000 of it (at least 1 MiB) so that allocation
//! happens as it would in use, and scores the layout every tenth (FIEMAP). Deterministic for
//! a seed: the same files, sizes and order of operations.
//!
//! The aged tree is `TARGET/iolab-aged-SEED`; it is recorded in the registry while aging
//! (a killed run's tree is removed by the next start), removed when aging is interrupted or
//! fails, and handed to the user when it completes.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::model::age::{AgePoint, AgeTestDetail};
use crate::model::layout::LayoutSummary;
use crate::model::{Warning, WarningCode};
use crate::os::cpu_wait::{Fewer, IDLE_ADVICE, RunQueueClock, WaitSpan, Waiter};
use crate::runner::RunContext;
use crate::runner::progress::Progress;
use crate::workload::age::{AgeConfig, fs_usage};

/// Files whose layout is scored on the way (the final score reads them all).
const PROGRESS_SCAN_LIMIT: u64 = 20_000;
/// Files the final score reads at most.
const FINAL_SCAN_LIMIT: u64 = 2_000_000;
/// Write size.
const CHUNK: usize = 1 << 20;

/// The aged tree while aging: removed on drop unless handed over.
struct AgedDir {
    path: PathBuf,
    keep: bool,
}

impl AgedDir {
    fn create(path: &Path) -> Result<AgedDir> {
        std::fs::create_dir(path).with_context(|| format!("cannot create {}", path.display()))?;
        crate::fs::registry::record(path);
        Ok(AgedDir {
            path: path.to_path_buf(),
            keep: false,
        })
    }
}

impl Drop for AgedDir {
    fn drop(&mut self) {
        crate::fs::registry::release_tree(&self.path, self.keep);
    }
}

/// A live file of the aged tree.
struct AgedFile {
    id: u64,
    dir: u32,
    size: u64,
}

/// The directories of the tree, breadth first: `dirs[i]` is a path relative to the root.
fn tree_dirs(count: u64, depth: u32, fanout: u32) -> Vec<PathBuf> {
    let mut dirs = vec![PathBuf::new()];
    let mut level_start = 0;
    let mut level = 0;
    while (dirs.len() as u64) < count && level < depth {
        let level_end = dirs.len();
        for parent in level_start..level_end {
            for k in 0..fanout {
                if dirs.len() as u64 >= count {
                    break;
                }
                let p = dirs[parent].join(format!("d{k:02}"));
                dirs.push(p);
            }
        }
        level_start = level_end;
        level += 1;
    }
    dirs
}

fn file_name(id: u64) -> String {
    format!("f{id:09}")
}

/// One file operation of the plan: write `len` bytes at the end of file `id` (created if it
/// is new: a new file and an append are the same call), or delete it.
#[derive(Clone, Copy, Debug)]
enum FileOp {
    Write { dir: u32, id: u64, len: u64 },
    Delete { dir: u32, id: u64 },
}

impl FileOp {
    fn dir(&self) -> u32 {
        match *self {
            FileOp::Write { dir, .. } | FileOp::Delete { dir, .. } => dir,
        }
    }
}

/// What the writers need to carry out operations: the tree's directories (open, so that
/// a file is opened relative to its directory's descriptor, with no walk down the tree's
/// path for every file, as the small-file tester does) and the data.
struct Tree<'a> {
    root: &'a Path,
    dirs: &'a [PathBuf],
    fds: &'a [std::fs::File],
    data: &'a [u8],
}

impl Tree<'_> {
    fn path(&self, dir: u32, id: u64) -> PathBuf {
        self.root.join(&self.dirs[dir as usize]).join(file_name(id))
    }

    fn apply(&self, op: FileOp) -> Result<()> {
        use nix::fcntl::OFlag;
        match op {
            FileOp::Write { dir, id, len } => nix::fcntl::openat(
                &self.fds[dir as usize],
                file_name(id).as_str(),
                OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_APPEND | OFlag::O_CLOEXEC,
                nix::sys::stat::Mode::from_bits_truncate(0o644),
            )
            .map_err(std::io::Error::from)
            .and_then(|fd| write_bytes(&mut std::fs::File::from(fd), self.data, len))
            .with_context(|| format!("cannot write {}", self.path(dir, id).display())),
            FileOp::Delete { dir, id } => nix::unistd::unlinkat(
                &self.fds[dir as usize],
                file_name(id).as_str(),
                nix::unistd::UnlinkatFlags::NoRemoveDir,
            )
            .with_context(|| format!("cannot delete {}", self.path(dir, id).display())),
        }
    }
}

/// Operations waiting for a writer thread, at most.
const QUEUE: usize = 256;

enum Msg {
    /// An operation, and the fence it waits for first: writer `w` must have carried out
    /// `fence[w]` operations (the deletes this write's room comes from).
    Op(FileOp, Option<Box<[u64]>>),
    /// Answer once every operation sent before has been carried out.
    Flush(std::sync::mpsc::SyncSender<()>),
}

/// Where the plan's operations go: done at once (one writer), or handed to the writer
/// thread that owns the file's directory (`--jobs N`: directory `d` belongs to writer
/// `d mod N`, so every file's operations stay in order on one thread, while the plan —
/// which files, which sizes, in which order per directory — depends only on `--seed`).
enum Writers<'t, 'a> {
    Inline(&'t Tree<'a>),
    Threads(Dispatch<'t>),
}

/// The plan's side of the writer threads. The plan counts the room a file system has as if
/// its operations ran one after the other; a write that another writer carried out before
/// the deletes that made room for it would briefly hold more files and bytes than the
/// count (ENOSPC on a full file system, seen with a file system of few inodes). So a write
/// waits for every delete sent before it to any other writer: a fence, sent only when a
/// writer has not yet passed the latest deletes.
///
/// Every wait of the plan's (a full queue, a flush) also watches the writers' failure flag
/// and the stop flag: a writer that stopped with an error, or a Ctrl-C, ends the wait (a
/// writer that died with a flush still queued once left the plan waiting for its answer
/// forever, deaf to Ctrl-C).
struct Dispatch<'d> {
    txs: Vec<std::sync::mpsc::SyncSender<Msg>>,
    done: &'d Done,
    stop: crate::os::signals::StopFlag,
    /// Operations sent to each writer.
    sent: Vec<u64>,
    /// Per writer: its operation count just after the last delete sent to it.
    last_delete: Vec<u64>,
    /// Per writer: the fence last sent with a write to it.
    fenced: Vec<Vec<u64>>,
}

/// How long the plan waits for a writer before it looks at the failure and stop flags again.
const POLL: std::time::Duration = std::time::Duration::from_millis(50);

impl<'d> Dispatch<'d> {
    fn new(
        txs: Vec<std::sync::mpsc::SyncSender<Msg>>,
        done: &'d Done,
        stop: crate::os::signals::StopFlag,
    ) -> Dispatch<'d> {
        let n = txs.len();
        Dispatch {
            txs,
            done,
            stop,
            sent: vec![0; n],
            last_delete: vec![0; n],
            fenced: vec![vec![0; n]; n],
        }
    }

    /// An error when a writer has failed (its own error is reported once the threads are
    /// joined) or the run is being stopped.
    fn check(&self) -> Result<()> {
        if self.done.failed() {
            return Err(WriterGone.into());
        }
        self.stop.check()?;
        Ok(())
    }

    fn send(&mut self, op: FileOp) -> Result<()> {
        self.check()?;
        let w = op.dir() as usize % self.txs.len();
        let fence = match op {
            FileOp::Delete { .. } => None,
            FileOp::Write { .. } => {
                let behind =
                    (0..self.txs.len()).any(|u| u != w && self.last_delete[u] > self.fenced[w][u]);
                behind.then(|| {
                    let mut f = self.last_delete.clone();
                    f[w] = 0; // its own deletes come before it in its queue
                    self.fenced[w].clone_from(&f);
                    f.into_boxed_slice()
                })
            }
        };
        let mut msg = Msg::Op(op, fence);
        loop {
            match self.txs[w].try_send(msg) {
                Ok(()) => break,
                Err(std::sync::mpsc::TrySendError::Disconnected(_)) => {
                    return Err(WriterGone.into());
                }
                Err(std::sync::mpsc::TrySendError::Full(m)) => {
                    // The queue is full: wait for a writer to carry something out.
                    msg = m;
                    self.done.wait_for_progress(POLL);
                    self.check()?;
                }
            }
        }
        self.sent[w] += 1;
        if matches!(op, FileOp::Delete { .. }) {
            self.last_delete[w] = self.sent[w];
        }
        Ok(())
    }

    /// Wait until every operation sent so far is done (before the layout is read).
    fn flush(&self) -> Result<()> {
        let (done_tx, done_rx) = std::sync::mpsc::sync_channel(self.txs.len());
        for tx in &self.txs {
            tx.send(Msg::Flush(done_tx.clone()))
                .map_err(|_| WriterGone)?;
        }
        // Only the writers hold a way to answer: one that stops without answering (its queue
        // is dropped with the flush in it) disconnects the channel once the others answered.
        drop(done_tx);
        let mut answered = 0;
        while answered < self.txs.len() {
            match done_rx.recv_timeout(POLL) {
                Ok(()) => answered += 1,
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(WriterGone.into());
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => self.check()?,
            }
        }
        Ok(())
    }
}

/// A writer thread stopped (its error is reported once the threads are joined).
#[derive(Debug)]
struct WriterGone;

impl std::fmt::Display for WriterGone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an aging writer stopped")
    }
}

impl std::error::Error for WriterGone {}

impl Writers<'_, '_> {
    fn send(&mut self, op: FileOp) -> Result<()> {
        match self {
            Writers::Inline(tree) => tree.apply(op),
            Writers::Threads(d) => d.send(op),
        }
    }

    /// Wait until every operation sent so far is done (before the layout is read).
    fn flush(&self) -> Result<()> {
        match self {
            Writers::Inline(_) => Ok(()),
            Writers::Threads(d) => d.flush(),
        }
    }
}

/// How far each writer thread has got, for the fences; and whether the writers are to quit.
struct Done {
    count: Vec<std::sync::atomic::AtomicU64>,
    /// A writer failed: the others quit, the plan stops.
    failed: std::sync::atomic::AtomicBool,
    /// The plan stopped (an error or an interrupt): the writers leave what is queued.
    abandoned: std::sync::atomic::AtomicBool,
    lock: std::sync::Mutex<()>,
    cv: std::sync::Condvar,
}

impl Done {
    fn new(n: usize) -> Done {
        Done {
            count: (0..n).map(|_| 0.into()).collect(),
            failed: false.into(),
            abandoned: false.into(),
            lock: std::sync::Mutex::new(()),
            cv: std::sync::Condvar::new(),
        }
    }

    fn notify(&self) {
        // Taken so that a waiter between its check and its wait does not miss this.
        drop(self.lock.lock());
        self.cv.notify_all();
    }

    fn advance(&self, w: usize) {
        self.count[w].fetch_add(1, std::sync::atomic::Ordering::Release);
        self.notify();
    }

    fn fail(&self) {
        self.failed
            .store(true, std::sync::atomic::Ordering::Release);
        self.notify();
    }

    fn failed(&self) -> bool {
        self.failed.load(std::sync::atomic::Ordering::Acquire)
    }

    fn abandon(&self) {
        self.abandoned
            .store(true, std::sync::atomic::Ordering::Release);
        self.notify();
    }

    /// Should a writer leave the rest of its queue (another failed, or the plan stopped)?
    fn quitting(&self) -> bool {
        self.failed() || self.abandoned.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Wait until some writer carries out an operation (or fails), `limit` at most.
    fn wait_for_progress(&self, limit: std::time::Duration) {
        if let Ok(g) = self.lock.lock() {
            let _ = self.cv.wait_timeout(g, limit);
        }
    }

    /// Wait until writer `w` has done `fence[w]` operations, for every `w`.
    fn wait(&self, fence: &[u64]) -> Result<()> {
        use std::sync::atomic::Ordering;
        let ready = || {
            fence
                .iter()
                .zip(&self.count)
                .all(|(&f, c)| c.load(Ordering::Acquire) >= f)
        };
        let mut g = self.lock.lock().map_err(|_| WriterGone)?;
        loop {
            if ready() {
                return Ok(());
            }
            if self.quitting() {
                return Err(WriterGone.into());
            }
            g = self.cv.wait_timeout(g, POLL).map_err(|_| WriterGone)?.0;
        }
    }
}

/// Writer thread `me`: carries out its directories' operations in the order they come,
/// each after its fence. It leaves the rest of its queue when another writer failed or the
/// plan stopped (the tree is removed anyway).
fn writer(tree: &Tree, done: &Done, me: usize, rx: std::sync::mpsc::Receiver<Msg>) -> Result<()> {
    for m in rx {
        if done.quitting() {
            return Err(WriterGone.into());
        }
        match m {
            Msg::Op(op, fence) => {
                let r = match &fence {
                    Some(f) => done.wait(f).and_then(|()| tree.apply(op)),
                    None => tree.apply(op),
                };
                if let Err(e) = r {
                    if e.downcast_ref::<WriterGone>().is_none() {
                        done.fail();
                    }
                    return Err(e);
                }
                done.advance(me);
            }
            Msg::Flush(reply) => {
                let _ = reply.send(());
            }
        }
    }
    Ok(())
}

/// Write `len` bytes of `data` (repeated) to `file`, from its current end.
fn write_bytes(file: &mut std::fs::File, data: &[u8], mut len: u64) -> std::io::Result<()> {
    while len > 0 {
        let n = len.min(data.len() as u64) as usize;
        file.write_all(&data[..n])?;
        len -= n as u64;
    }
    Ok(())
}

/// Age the file system: the detail of the test and the aged tree (kept).
pub fn age(cfg: &AgeConfig, ctx: &RunContext) -> Result<(AgeTestDetail, PathBuf)> {
    let layout_before = crate::fs::layout::scan(&cfg.target, PROGRESS_SCAN_LIMIT)
        .with_context(|| format!("cannot read the layout of {}", cfg.target.display()))?;
    let mut root = AgedDir::create(&cfg.dir)?;
    let dirs = tree_dirs(
        cfg.dir_count(),
        cfg.profile.tree.depth,
        cfg.profile.tree.dirs_per_dir,
    );
    for d in dirs.iter().skip(1) {
        let p = cfg.dir.join(d);
        std::fs::create_dir(&p).with_context(|| format!("cannot create {}", p.display()))?;
    }
    let dir_fds = dirs
        .iter()
        .map(|d| {
            let p = cfg.dir.join(d);
            std::fs::File::open(&p).with_context(|| format!("cannot open {}", p.display()))
        })
        .collect::<Result<Vec<_>>>()?;

    let mut rng = Xoshiro256PlusPlus::seed_from_u64(cfg.seed);
    // The data: incompressible, the same for a seed.
    let mut data = vec![0u8; CHUNK];
    rng.fill(&mut data[..]);
    let tree = Tree {
        root: &cfg.dir,
        dirs: &dirs,
        fds: &dir_fds,
        data: &data,
    };
    let jobs = (cfg.jobs.max(1) as usize).min(dirs.len());
    let mut d = if jobs == 1 {
        // The plan's thread writes: its wait over the aging (plan() reads it).
        plan(
            cfg,
            ctx,
            rng,
            &mut Writers::Inline(&tree),
            dirs.len(),
            layout_before,
        )
        .map_err(|e| out_of_space(e, cfg))?
        .0
    } else {
        let done = Done::new(jobs);
        std::thread::scope(|s| {
            let mut txs = Vec::new();
            let mut handles = Vec::new();
            for me in 0..jobs {
                let (tx, rx) = std::sync::mpsc::sync_channel(QUEUE);
                let (tree, done) = (&tree, &done);
                handles.push(s.spawn(move || {
                    // Read at the thread's start and end only: idle on its queue (the
                    // layout scoring, the final scan) it is not runnable, so not waiting.
                    let clock = RunQueueClock::open();
                    let before = clock.waited();
                    let r = writer(tree, done, me, rx);
                    let waited = before.zip(clock.waited()).map(|(a, b)| b.saturating_sub(a));
                    (r, waited)
                }));
                txs.push(tx);
            }
            let mut writers = Writers::Threads(Dispatch::new(txs, &done, ctx.stop.clone()));
            let planned = plan(cfg, ctx, rng, &mut writers, dirs.len(), layout_before);
            if planned.is_err() {
                done.abandon();
            }
            drop(writers);
            // A writer's own error says what failed (the others and the plan then only
            // say that one stopped).
            let mut failed: Option<anyhow::Error> = None;
            let mut longest_wait: Option<std::time::Duration> = None;
            for h in handles {
                let (r, waited) = h
                    .join()
                    .unwrap_or_else(|_| (Err(anyhow::anyhow!("an aging writer panicked")), None));
                longest_wait = longest_wait.max(waited);
                if let Err(e) = r {
                    let gone = e.downcast_ref::<WriterGone>().is_some();
                    match &failed {
                        Some(f) if gone || f.downcast_ref::<WriterGone>().is_none() => {}
                        _ => failed = Some(e),
                    }
                }
            }
            match (planned, failed) {
                (Ok((mut d, aging_s)), None) => {
                    // Over the aging proper: the writers wait for nothing while the layout
                    // is scored.
                    d.cpu_wait_pct =
                        longest_wait.map(|w| 100.0 * w.as_secs_f64() / aging_s.max(1e-9));
                    Ok(d)
                }
                (Err(e), Some(w)) if e.downcast_ref::<WriterGone>().is_some() => Err(w),
                (Err(e), _) => Err(e),
                (Ok(_), Some(w)) => Err(w),
            }
        })
        .map_err(|e| out_of_space(e, cfg))?
    };
    d.jobs = jobs as u32;
    root.keep = true;
    Ok((d, cfg.dir.clone()))
}

/// A write that found the file system full (ENOSPC) says why and what to do: `--fill 99%`
/// on a 448 MiB xfs that `iolab age` had accepted ended with "cannot write …: No space left
/// on device" only. The plan counts the files' blocks; the file system's own metadata
/// (inodes, directories, extent trees, xfs's preallocation) takes room beside them.
fn out_of_space(e: anyhow::Error, cfg: &AgeConfig) -> anyhow::Error {
    let full = e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.raw_os_error() == Some(libc::ENOSPC))
            || c.downcast_ref::<nix::errno::Errno>() == Some(&nix::errno::Errno::ENOSPC)
    });
    if !full {
        return e;
    }
    let lower = ((cfg.fill * 100.0).floor() - 2.0).max(1.0);
    e.context(format!(
        "the file system filled up before aging to {:.0} % full: its own metadata (inodes, directories, extent maps, preallocation) takes room beside the files aging counts; give a lower --fill ({lower:.0}% or less) or a larger file system",
        cfg.fill * 100.0
    ))
}

/// The aging plan: decides every operation (from the random generator of `--seed` and its
/// own count of what is there) and hands it to the writers; syncs, scores and reports on the
/// way. The detail and the seconds of aging (the settling and layout scoring left out). With one writer
/// (inline) the detail has the plan's thread's wait for a CPU.
fn plan(
    cfg: &AgeConfig,
    ctx: &RunContext,
    mut rng: Xoshiro256PlusPlus,
    writers: &mut Writers,
    dirs: usize,
    layout_before: LayoutSummary,
) -> Result<(AgeTestDetail, f64)> {
    let churn = cfg.churn_bytes().max(1);
    let budget = (cfg.fill * cfg.fs_size as f64) as u64;
    // Often enough that files written at different times get their blocks at different
    // times (delayed allocation would otherwise place a whole batch together).
    let sync_every = (churn / 1000).clamp(1 << 20, 64 << 20);
    let mut since_sync = 0u64;
    let mut files: Vec<AgedFile> = Vec::new();
    let mut next_id = 0u64;
    let mut d = AgeTestDetail {
        profile: cfg.profile.name.clone(),
        seed: cfg.seed,
        fill_target: cfg.fill,
        churn_target: cfg.churn,
        fs_size_bytes: cfg.fs_size,
        dir: cfg.dir.display().to_string(),
        layout_before,
        ..Default::default()
    };
    let progress = Progress::start(ctx.progress, &format!("age ({})", cfg.profile.name));
    let t0 = Instant::now();
    // Time that is not aging, so not in its speed: the wait for the used space to settle
    // before the first write (100 ms at least; the rate of a 0.2 s aging of xfs counted it
    // and read half what it was) and the layout scoring on the way.
    let mut aside = std::time::Duration::ZERO;
    // Fullness by our own count (what was there, plus our files in whole blocks), not the
    // file system's: its count moves with delayed allocation and metadata, and decisions
    // taken on it would differ from run to run. The same seed makes the same files.
    let block = crate::fs::layout::block_size(&cfg.target)?.max(1);
    let on_disk = |len: u64| len.div_ceil(block) * block;
    // What was there, to the nearest 1 % of the file system: a fresh btrfs counts a few
    // hundred KiB more or less from one mkfs to the next (background metadata work), and
    // a budget that moved with them gave the same seed another file set.
    let mut used = crate::workload::age::planned_used(settled_usage(&cfg.target)?, cfg.fs_size);
    aside += t0.elapsed();
    // The thread that writes inline: its wait for a CPU over the aging, scoring included
    // (read here and once the last write is done).
    let waited = matches!(writers, Writers::Inline(_)).then(WaitSpan::start);
    // Files by the same count: the inodes free now (the tree is made), less a margin for
    // the file system's own; a file system of small files runs out of inodes before space
    // (ext4 gives one per 16 KiB). `None` where there is no fixed number (btrfs, xfs grow).
    let inode_room = free_inodes(&cfg.target)?.map(|n| n - n / 50);
    let mut next_point = churn / 10;
    let mut pending: Option<u64> = None;
    while d.bytes_written < churn {
        ctx.stop.check()?;
        // The next write: a new file that is waiting for room, an append to a live file (a
        // log, a mailbox: a size drawn from the profile, at most the file's own size) or a
        // new file.
        let grow = pending.is_none()
            && !files.is_empty()
            && rng.random::<f64>() < cfg.profile.append_share;
        let (pick, len) = if let Some(len) = pending.take() {
            (None, len)
        } else if grow {
            let i = rng.random_range(0..files.len());
            let len = cfg.profile.draw_size(&mut rng).min(files[i].size.max(4096));
            (Some(i), len)
        } else {
            (None, cfg.profile.draw_size(&mut rng))
        };
        let need = match pick {
            Some(i) => on_disk(files[i].size + len) - on_disk(files[i].size),
            None => on_disk(len),
        };
        let no_inode = pick.is_none() && inode_room.is_some_and(|r| files.len() as u64 >= r);
        if (used + need > budget || no_inode) && !files.is_empty() {
            // At the fullness: random files go until a new file fits (it waits, so the sizes
            // created keep the profile's distribution); an append that does not fit is
            // dropped.
            if pick.is_none() {
                pending = Some(len);
            }
            let i = rng.random_range(0..files.len());
            let f = files.swap_remove(i);
            writers.send(FileOp::Delete {
                dir: f.dir,
                id: f.id,
            })?;
            used = used.saturating_sub(on_disk(f.size));
            d.files_deleted += 1;
            continue;
        }
        let at = match pick {
            Some(i) => {
                files[i].size += len;
                d.files_grown += 1;
                i
            }
            None => {
                files.push(AgedFile {
                    id: next_id,
                    dir: rng.random_range(0..dirs) as u32,
                    size: len,
                });
                next_id += 1;
                d.files_created += 1;
                files.len() - 1
            }
        };
        let f = &files[at];
        writers.send(FileOp::Write {
            dir: f.dir,
            id: f.id,
            len,
        })?;
        d.bytes_written += len;
        used += need;
        since_sync += len;
        if since_sync >= sync_every {
            // Not waiting for the writers: what is written by now goes to the device now.
            syncfs(&cfg.dir)?;
            since_sync = 0;
        }
        if d.bytes_written >= next_point {
            next_point = next_tenth(next_point, d.bytes_written, churn / 10);
            // The writers catch up first: that is aging (with up to QUEUE operations
            // queued per writer, a small file system was mostly written in these waits,
            // and its rate read 973,949 files a second).
            writers.flush()?;
            let t_score = Instant::now();
            let point = point_now(cfg, &files, &d)?;
            aside += t_score.elapsed();
            progress.set(
                d.bytes_written as f64 / churn as f64,
                &format!(
                    "{:.1} % full, {} files, layout {}",
                    point.fullness * 100.0,
                    point.files,
                    crate::model::layout::fmt_score(point.layout_score)
                ),
            );
            d.progress.push(point);
        }
    }
    writers.flush()?;
    syncfs(&cfg.dir)?;
    d.cpu_wait_pct = waited.and_then(|w| w.pct());
    trim_prealloc(&cfg.target);
    d.elapsed_s = t0.elapsed().as_secs_f64();
    let aging_s = (d.elapsed_s - aside.as_secs_f64()).max(1e-9);
    d.file_ops_per_s = (d.files_created + d.files_deleted) as f64 / aging_s;
    d.files_left = files.len() as u64;
    let (total, used) = fs_usage(&cfg.target)?;
    d.fullness = used as f64 / total.max(1) as f64;
    d.layout_after = crate::fs::layout::scan(&cfg.dir, FINAL_SCAN_LIMIT)
        .with_context(|| format!("cannot read the layout of {}", cfg.dir.display()))?;
    progress.finish(&format!(
        "aged: {:.1} % full, layout {}",
        d.fullness * 100.0,
        crate::model::layout::fmt_score(d.layout_after.layout_score)
    ));
    Ok((d, aging_s))
}

/// What the user is told when aging ended off the fullness asked: `inodes-short` when the
/// inodes ran out first (the plan then deletes to stay within them), `fill-not-reached` when
/// the churn was all written before the fullness (no file was deleted: filled once, not
/// aged; it printed "22.3 % full" after `--fill 80% --churn 0.2` and nothing more), or
/// `fill-not-reached` too when the profile's files (up to `largest` bytes) are coarse
/// against the file system, or when the file system held the files in less than the plan
/// counted; `fill-exceeded` when it ended 2 points or more above it. `None` when it got
/// there.
pub fn fill_warning(target: &Path, d: &AgeTestDetail, largest: u64) -> Option<Warning> {
    let st = nix::sys::statvfs::statvfs(target).ok();
    if let Some(st) = st {
        let (files, free) = (st.files(), st.files_available());
        if files > 0 && free <= files / 25 && d.fullness + 0.05 < d.fill_target {
            return Some(Warning {
                code: WarningCode::InodesShort,
                message: format!(
                    "the file system ran out of inodes at {:.1} % full ({} of {} inodes in use, {} files aged): it holds fewer files than the profile's {:.0} % asks; make it with more inodes (mkfs.ext4 -i) or age with larger files",
                    100.0 * d.fullness,
                    files - free,
                    files,
                    d.files_left,
                    100.0 * d.fill_target
                ),
                test: None,
            });
        }
    }
    let fs_type = crate::sysinfo::mounts::mount_of(target).map(|m| m.fs_type);
    churn_short(d)
        .or_else(|| coarse_files(d, largest))
        .or_else(|| counted_off(d, fs_type.as_deref()))
}

/// Aging that ended 2 points or more off the fullness asked though the plan got there by its
/// own count (whole blocks per file): the file system took more or less room for the files.
/// `fill-exceeded` above it: its own metadata for each file is not counted (59.4 % for 40 %
/// asked on a 256 MiB btrfs with files of 1-2 KiB, 82.8 % for 80 % with files of 4-256 KiB
/// on 512 MiB). `fill-not-reached` below it, after a run that aged (it deleted) with files
/// small against the file system: btrfs keeps files of up to 2 KiB inline in its metadata
/// (55.0 % for 80 % on a 512 MiB btrfs with files of 1 B to 8 KiB). Both said nothing.
/// `fs_type` as /proc/mounts names it.
fn counted_off(d: &AgeTestDetail, fs_type: Option<&str>) -> Option<Warning> {
    let btrfs = fs_type == Some("btrfs");
    let (code, side, room, how, hint) = if d.fs_size_bytes == 0 {
        return None;
    } else if d.fullness >= d.fill_target + 0.02 {
        let how = if btrfs {
            "btrfs's own metadata for each file, its inode and extent items stored twice, is not counted, and btrfs counts its metadata as used by the chunk"
        } else {
            "the file system's own metadata for each file is not counted"
        };
        (
            WarningCode::FillExceeded,
            "above",
            "more",
            how,
            "give a lower --fill",
        )
    } else if d.files_deleted > 0 && d.fullness + 0.02 <= d.fill_target {
        let (how, hint) = if btrfs {
            (
                "btrfs keeps files of up to 2 KiB inline in its metadata, and counts that metadata as used by the chunk",
                "use a profile with fewer files of 2 KiB or less",
            )
        } else {
            (
                "small files kept inline in metadata, compression or shared blocks take less",
                "use a profile with fewer small files",
            )
        };
        (WarningCode::FillNotReached, "short of", "less", how, hint)
    } else {
        return None;
    };
    Some(Warning {
        code,
        message: format!(
            "aging ended at {:.1} % full, {side} the {:.0} % asked: the file system took {room} room for the profile's files than aging counts for them (whole blocks of {} each; {how}), and aging keeps to its own count so that a seed makes the same files; for a fullness nearer the one asked, {hint}",
            100.0 * d.fullness,
            100.0 * d.fill_target,
            crate::units::fmt_size_iec(d.layout_after.block_size_bytes.max(1)),
        ),
        test: None,
    })
}

/// Warning `cpu-contention` of aging test `test` when a writer (the plan's own thread with one
/// writer) waited over a tenth of the aging for a CPU: the rate it gives includes that wait.
pub fn contention_warning(d: &AgeTestDetail, test: &str) -> Option<Warning> {
    let waiter = Waiter {
        who: if d.jobs > 1 {
            "an aging writer thread"
        } else {
            "the aging thread"
        },
        fewer: Fewer::Jobs,
        threads: d.jobs.max(1) as usize,
        effect: "the aging's rate (files created+deleted per second) includes that wait and may \
                 be below what the file system gives",
        advice: IDLE_ADVICE,
    };
    crate::workload::contention::warning_of(test, d.cpu_wait_pct, &waiter)
}

/// `fill-not-reached` of a run that aged (it deleted) yet ended 2 points or more short, with
/// files of 2 % of the file system or more: the fullness moves in steps of a file (it ended
/// at 92.2 % for 97 % asked on a 54 MiB ext4 with files up to 8 MiB, and said nothing).
fn coarse_files(d: &AgeTestDetail, largest: u64) -> Option<Warning> {
    let size = d.fs_size_bytes as f64;
    let share = largest as f64 / size;
    if d.files_deleted == 0 || d.fullness + 0.02 > d.fill_target || size == 0.0 || share < 0.02 {
        return None;
    }
    Some(Warning {
        code: WarningCode::FillNotReached,
        message: format!(
            "aging ended at {:.1} % full, short of the {:.0} % asked: the profile's files are large against this file system (up to {}, {:.1} % of it), so its fullness moves in steps about that size; use a larger file system or a profile with smaller files for a closer fullness",
            100.0 * d.fullness,
            100.0 * d.fill_target,
            crate::units::fmt_size_iec(largest),
            100.0 * share
        ),
        test: None,
    })
}

/// `fill-not-reached`: the plan deletes only at the fullness (or out of inodes), so a run
/// without a delete never got there.
fn churn_short(d: &AgeTestDetail) -> Option<Warning> {
    if d.files_deleted > 0 || d.fullness >= d.fill_target || d.fs_size_bytes == 0 {
        return None;
    }
    let size = d.fs_size_bytes as f64;
    let written = d.bytes_written as f64 / size;
    // What was written, plus what was still missing to the fullness: the least churn that
    // gets there (in tenths, rounded up; aging proper is what is written after it).
    let needed = ((written + (d.fill_target - d.fullness)) * 10.0).ceil() / 10.0;
    Some(Warning {
        code: WarningCode::FillNotReached,
        message: format!(
            "aging ended at {:.1} % full, short of the {:.0} % asked: the churn ({} written, {:.2}x the file system) ran out before the fullness was reached, so no file was deleted and the file system was filled once, not aged; give a churn above {needed:.1} (--churn; the matrix's --age-churn) to reach it and age past it",
            100.0 * d.fullness,
            100.0 * d.fill_target,
            crate::units::fmt_size_iec(d.bytes_written),
            written
        ),
        test: None,
    })
}

/// The next tenth of the churn to score the layout at, past `written`: one large file
/// that crosses several tenths gives one point, not one for each of the writes after it
/// (rows with the same bytes written, one file apart).
fn next_tenth(next: u64, written: u64, step: u64) -> u64 {
    let step = step.max(1);
    if written < next {
        return next;
    }
    next + ((written - next) / step + 1) * step
}

fn point_now(cfg: &AgeConfig, files: &[AgedFile], d: &AgeTestDetail) -> Result<AgePoint> {
    syncfs(&cfg.dir)?;
    trim_prealloc(&cfg.target);
    let (total, used) = fs_usage(&cfg.target)?;
    // No FIEMAP here (FUSE): no score on the way; the final layout maps block by block.
    let layout_score = match crate::fs::layout::scan_quick(&cfg.dir, PROGRESS_SCAN_LIMIT) {
        Ok(l) => l.layout_score,
        Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => None,
        Err(e) => return Err(e.into()),
    };
    Ok(AgePoint {
        bytes_written: d.bytes_written,
        fullness: used as f64 / total.max(1) as f64,
        files: files.len() as u64,
        layout_score,
    })
}

/// The fullness read is the files' own: xfs's speculative preallocation past the end of
/// files that grew is given back first (it read 88.5 % full after aging to 80 %). A failed
/// trim (no xfs_spaceman) leaves the reading as it is.
fn trim_prealloc(target: &Path) {
    if let Some(m) = crate::sysinfo::mounts::mount_of(target) {
        let _ = crate::fs::layout::trim_speculative_prealloc(&m.fs_type, &m.mount_point);
    }
}

/// The used bytes once the file system has stopped freeing: what deleted files held is free
/// only once committed, and btrfs's cleaner gives it back in the background for a while
/// after (two equal readings 100 ms apart, 3 s at most). The budget of a seed's run, and so
/// its files, start from this number.
fn settled_usage(target: &Path) -> Result<u64> {
    syncfs(target)?;
    let mut used = fs_usage(target)?.1;
    for _ in 0..30 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        syncfs(target)?;
        let now = fs_usage(target)?.1;
        if now == used {
            break;
        }
        used = now;
    }
    Ok(used)
}

/// Inodes free for a new file, where the file system has a fixed number of them.
fn free_inodes(target: &Path) -> Result<Option<u64>> {
    let st = nix::sys::statvfs::statvfs(target)
        .with_context(|| format!("statvfs {}", target.display()))?;
    Ok((st.files() > 0).then_some(st.files_available() as u64))
}

/// syncfs(2) on the file system holding `dir`: allocation happens now, and statvfs counts it.
pub fn syncfs(dir: &Path) -> Result<()> {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(dir).with_context(|| format!("cannot open {}", dir.display()))?;
    // SAFETY: a valid descriptor, open for the call.
    if unsafe { libc::syncfs(f.as_raw_fd()) } != 0 {
        return Err(std::io::Error::last_os_error())
            .with_context(|| format!("syncfs {}", dir.display()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `w` is a `fill-not-reached` warning whose message holds every one of `parts`.
    fn assert_fill_not_reached(w: Option<Warning>, parts: &[&str]) {
        let w = w.expect("a warning");
        assert_eq!(w.code, WarningCode::FillNotReached);
        assert!(parts.iter().all(|p| w.message.contains(p)), "{}", w.message);
    }

    /// A churn that ends before the fullness is said, with what was reached and the churn
    /// that gets there; a run that deleted (it reached the fullness) is not.
    #[test]
    fn a_churn_that_ends_before_the_fullness_is_said() {
        let d = AgeTestDetail {
            fill_target: 0.8,
            fs_size_bytes: 100 << 20,
            bytes_written: 20 << 20,
            fullness: 0.223,
            files_created: 300,
            ..Default::default()
        };
        assert_fill_not_reached(
            churn_short(&d),
            &["22.3 % full, short of the 80 % asked", "above 0.8 (--churn"],
        );
        let reached = AgeTestDetail {
            files_deleted: 5,
            fullness: 0.8,
            ..d.clone()
        };
        assert!(churn_short(&reached).is_none());
        let over = AgeTestDetail {
            fullness: 0.81,
            ..d
        };
        assert!(churn_short(&over).is_none());
    }

    /// A run that aged but ended short with files large against the file system says why
    /// (92.2 % for 97 % on 54 MiB with 8 MiB files said nothing); small files or a close
    /// fullness say nothing.
    #[test]
    fn coarse_files_that_end_short_are_said() {
        let d = AgeTestDetail {
            fill_target: 0.97,
            fs_size_bytes: 54 << 20,
            fullness: 0.922,
            files_deleted: 12,
            ..Default::default()
        };
        assert_fill_not_reached(
            coarse_files(&d, 8 << 20),
            &[
                "92.2 % full, short of the 97 % asked",
                "up to 8.0 MiB, 14.8 % of it",
            ],
        );
        assert!(coarse_files(&d, 256 << 10).is_none(), "small files");
        let close = AgeTestDetail {
            fullness: 0.955,
            ..d.clone()
        };
        assert!(coarse_files(&close, 8 << 20).is_none());
        let filled_once = AgeTestDetail {
            files_deleted: 0,
            ..d
        };
        assert!(
            coarse_files(&filled_once, 8 << 20).is_none(),
            "churn_short's"
        );
    }

    /// An aging to `fill` of a `mib` MiB file system of 4 KiB blocks that ended at
    /// `fullness` after `deleted` deletes.
    fn aged_in_blocks(fill: f64, mib: u64, fullness: f64, deleted: u64) -> AgeTestDetail {
        let mut d = AgeTestDetail {
            fill_target: fill,
            fs_size_bytes: mib << 20,
            fullness,
            files_deleted: deleted,
            ..Default::default()
        };
        d.layout_after.block_size_bytes = 4096;
        d
    }

    /// A run that aged with small files yet ended short says that the file system took less
    /// than the plan counted (55.0 % for 80 % on a 512 MiB btrfs with files of 1 B to 8 KiB
    /// said nothing); a close fullness says nothing.
    #[test]
    fn small_files_the_file_system_holds_in_less_than_counted_are_said() {
        let d = aged_in_blocks(0.8, 512, 0.5501, 497_892);
        assert!(coarse_files(&d, 8 << 10).is_none(), "small files");
        assert_fill_not_reached(
            counted_off(&d, Some("btrfs")),
            &[
                "55.0 % full, short of the 80 % asked",
                "whole blocks of 4.0 KiB each; btrfs keeps files of up to 2 KiB inline",
                "nearer the one asked, use a profile with fewer files of 2 KiB or less",
            ],
        );
        assert_fill_not_reached(
            counted_off(&d, Some("ext4")),
            &["compression", "use a profile with fewer small files"],
        );
        for fullness in [0.785, 0.8, 0.815] {
            let near = AgeTestDetail {
                fullness,
                ..d.clone()
            };
            assert!(counted_off(&near, Some("btrfs")).is_none(), "{fullness}");
        }
        let filled_once = AgeTestDetail {
            files_deleted: 0,
            ..d
        };
        assert!(counted_off(&filled_once, None).is_none(), "churn_short's");
    }

    /// An aging that ends 2 points or more above the fullness asked says so (59.4 % for 40 %
    /// on a 256 MiB btrfs with files of 1-2 KiB said nothing); closer says nothing.
    #[test]
    fn a_fullness_above_the_one_asked_is_said() {
        let d = aged_in_blocks(0.4, 256, 0.5935, 47_734);
        let w = counted_off(&d, Some("btrfs")).expect("a warning");
        assert_eq!(w.code, WarningCode::FillExceeded);
        for part in [
            "59.4 % full, above the 40 % asked",
            "whole blocks of 4.0 KiB each; btrfs's own metadata",
            "give a lower --fill",
        ] {
            assert!(w.message.contains(part), "{}", w.message);
        }
        for fullness in [0.419, 0.4, 0.385] {
            let near = AgeTestDetail {
                fullness,
                ..d.clone()
            };
            assert!(counted_off(&near, Some("btrfs")).is_none(), "{fullness}");
        }
    }

    /// A write that crosses several tenths of the churn gives one layout point: the
    /// table had rows with the same bytes written, one file apart.
    #[test]
    fn one_point_however_many_tenths_a_write_crosses() {
        // Tenths of 100: a write to 37 from the point at 10 skips 20 and 30.
        assert_eq!(next_tenth(10, 37, 10), 40);
        assert_eq!(next_tenth(10, 10, 10), 20);
        assert_eq!(next_tenth(10, 19, 10), 20);
        assert_eq!(next_tenth(40, 12, 10), 40);
        assert_eq!(next_tenth(0, 5, 0), 6);
    }

    #[test]
    fn the_tree_is_breadth_first_and_bounded() {
        let t = tree_dirs(7, 3, 2);
        assert_eq!(t.len(), 7);
        assert_eq!(t[0], PathBuf::new());
        assert_eq!(t[1], PathBuf::from("d00"));
        assert_eq!(t[3], PathBuf::from("d00/d00"));
        // Depth bounds the count.
        assert_eq!(tree_dirs(1000, 2, 2).len(), 1 + 2 + 4);
        assert_eq!(tree_dirs(1, 5, 5).len(), 1);
    }

    /// Runs `f` on a thread and gives its result, or panics after `limit`: a hang detector
    /// for the waits below (they answer within a few POLLs when right; `limit` is generous
    /// so that a loaded machine does not fail them).
    fn within<T: Send + 'static>(limit: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        rx.recv_timeout(std::time::Duration::from_secs(limit))
            .expect("the wait hung")
    }

    /// Two writers' queues, the receivers handed to `w0` and `w1`; then `f` on the plan's side.
    fn with_writers<T>(
        queue: usize,
        stop: crate::os::signals::StopFlag,
        w0: impl FnOnce(std::sync::mpsc::Receiver<Msg>) + Send,
        w1: impl FnOnce(std::sync::mpsc::Receiver<Msg>) + Send,
        f: impl FnOnce(&mut Dispatch, &Done) -> T,
    ) -> T {
        let done = Done::new(2);
        let (tx0, rx0) = std::sync::mpsc::sync_channel(queue);
        let (tx1, rx1) = std::sync::mpsc::sync_channel(queue);
        std::thread::scope(|s| {
            s.spawn(move || w0(rx0));
            s.spawn(move || w1(rx1));
            let mut d = Dispatch::new(vec![tx0, tx1], &done, stop);
            let r = f(&mut d, &done);
            done.abandon();
            drop(d);
            r
        })
    }

    fn answer_flushes(rx: std::sync::mpsc::Receiver<Msg>) {
        for m in rx {
            if let Msg::Flush(reply) = m {
                let _ = reply.send(());
            }
        }
    }

    /// Regression: a writer that stopped (ENOSPC) with a flush still in its queue left the
    /// plan waiting for the answer forever (`iolab age --fill 100%` on a small tmpfs hung).
    #[test]
    fn a_flush_ends_when_a_writer_dies_with_it_queued() {
        let r = within(120, || {
            with_writers(
                4,
                crate::os::signals::StopFlag::new(),
                answer_flushes,
                |rx| drop(rx.recv()), // dies: the flush is dropped unanswered
                |d, _| d.flush().map_err(|e| e.to_string()),
            )
        });
        assert_eq!(r.unwrap_err(), "an aging writer stopped");
    }

    /// A flush that a live writer does not answer yet gives way to a Ctrl-C.
    #[test]
    fn a_flush_honours_the_stop_flag() {
        let stop = crate::os::signals::StopFlag::new();
        let raiser = stop.clone();
        let (quit_tx, quit_rx) = std::sync::mpsc::channel::<()>();
        let r = within(120, move || {
            with_writers(
                4,
                stop,
                answer_flushes,
                move |rx| {
                    let _held = rx.recv(); // busy: holds the flush until the test ends
                    let _ = quit_rx.recv();
                },
                |d, _| {
                    raiser.raise(libc::SIGINT);
                    let r = d.flush();
                    drop(quit_tx);
                    r
                },
            )
        });
        let e = r.unwrap_err();
        assert!(
            e.downcast_ref::<crate::error::Interrupted>().is_some(),
            "{e:#}"
        );
    }

    /// A plan blocked on a full queue stops when another writer fails.
    #[test]
    fn a_full_queue_gives_way_to_a_failed_writer() {
        let (quit_tx, quit_rx) = std::sync::mpsc::channel::<()>();
        let r = within(120, move || {
            with_writers(
                1,
                crate::os::signals::StopFlag::new(),
                move |_rx| {
                    let _ = quit_rx.recv(); // stuck: reads nothing
                },
                |_rx| {},
                |d, done| {
                    let op = FileOp::Delete { dir: 0, id: 0 };
                    d.send(op).unwrap(); // fills writer 0's queue
                    std::thread::scope(|s| {
                        s.spawn(|| {
                            std::thread::sleep(POLL * 2);
                            done.fail();
                        });
                        let r = d.send(op).map_err(|e| e.to_string());
                        drop(quit_tx);
                        r
                    })
                },
            )
        });
        assert_eq!(r.unwrap_err(), "an aging writer stopped");
    }
}

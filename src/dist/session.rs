//! What every distributed subcommand (`run`, `saturate`) does around its measuring: MPI
//! started without busy polling, each rank's own subdirectory `iolab-rank-N` of every shared
//! target (locked), the result file on rank 0 only, every rank agreeing to start (or nothing
//! is created), an abort of the whole job on a rank's error, and the final wait.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use crate::dist::hooks::wait_for_all;
use crate::model::{ResultDoc, ResultSink};
use crate::runner::lock::TargetLock;
use crate::runner::target::{TargetKind, classify};
use crate::runner::{ProgressMode, RunContext};

/// Open MPI's "yield when idle" (no busy polling), set before `MPI_Init` unless the user
/// chose.
pub const YIELD_VAR: &str = "OMPI_MCA_mpi_yield_when_idle";

/// How long the ranks wait for each other at the end.
const FINAL_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// A rank's own subdirectory of a target; removed on drop if this run created it and it is
/// empty (a `--keep` test file keeps it).
pub struct RankDir {
    pub path: PathBuf,
    created: bool,
}

impl Drop for RankDir {
    fn drop(&mut self) {
        if self.created {
            let _ = std::fs::remove_dir(&self.path);
            crate::fs::registry::forget(&self.path);
        }
    }
}

/// A rank's place in the shared targets: its subdirectory of each, locked. Fields drop in
/// order: the locks (files in the directories) before the directories.
pub struct RankSpace {
    _locks: Vec<TargetLock>,
    /// Rank 0 also locks the targets themselves, against a plain iolab run there meanwhile.
    _target_locks: Vec<TargetLock>,
    pub dirs: Vec<RankDir>,
}

impl RankSpace {
    /// Lock (rank 0) every target, create and lock this rank's subdirectory of each.
    pub fn claim(targets: &[PathBuf], rank: u32) -> Result<RankSpace> {
        for t in targets {
            if classify(t).ok() != Some(TargetKind::Directory) {
                return Err(crate::usage!(
                    "a distributed run needs a directory on the shared storage as --target (each rank works in its own subdirectory iolab-rank-N); {} is not one",
                    t.display()
                ));
            }
        }
        let mut space = RankSpace {
            _locks: Vec::new(),
            _target_locks: Vec::new(),
            dirs: Vec::new(),
        };
        for t in targets {
            if rank == 0 {
                space._target_locks.push(TargetLock::acquire(t)?);
            }
            let path = t.join(format!("iolab-rank-{rank}"));
            let created = match std::fs::create_dir(&path) {
                Ok(()) => {
                    // Removed by the next start if this rank is killed (mpirun's SIGKILL).
                    crate::fs::registry::record(&path);
                    true
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && path.is_dir() => false,
                Err(e) => {
                    return Err(crate::usage!("cannot create {}: {e}", path.display()));
                }
            };
            space.dirs.push(RankDir { path, created });
            let dir = &space.dirs[space.dirs.len() - 1].path;
            space._locks.push(TargetLock::acquire(dir)?);
        }
        Ok(space)
    }

    pub fn paths(&self) -> Vec<PathBuf> {
        self.dirs.iter().map(|d| d.path.clone()).collect()
    }
}

/// The test file size of each rank: `wanted`, unless the ranks together would take more than
/// 90 % of the free space, 45 % on a copy-on-write file system (on a shared file system they
/// all take from the same space; see `cli::checks::overwrite_room_of`).
pub fn per_rank_size(target: &Path, ranks: u32, rank: u32, wanted: u64) -> Result<u64> {
    let free = crate::fs::facts::free_space(target).unwrap_or(u64::MAX);
    let room = crate::fs::facts::overwrite_room(target);
    let cap = (room.cap(free) / ranks.max(1) as u64) & !((1u64 << 20) - 1);
    if cap == 0 {
        return Err(crate::usage!(
            "not enough free space on {} for {ranks} ranks' test files",
            target.display()
        ));
    }
    if cap < wanted {
        if rank == 0 {
            crate::eline!(
                "iolab: test file size per rank clamped to {} ({ranks} ranks share {})",
                crate::units::fmt_size_iec(cap),
                room.describe(target)
            );
        }
        return Ok(cap);
    }
    Ok(wanted)
}

/// An explicit `--size` on every rank: the ranks' test files take it each from the shared
/// target's free space. Each rank checked only its own, so 2 x 150 MiB on 213 MiB free
/// passed and the last file to be made ran out of space mid-way ("cannot prepare ...: No
/// space left on device", a failed result, exit 1), where one process is refused up front
/// (exit 2, nothing created). Checked before any rank creates its file.
pub fn check_shared_size(target: &Path, ranks: u32, size: u64) -> Result<()> {
    let Some(room) = crate::fs::facts::free_for_test_file(target) else {
        return Ok(());
    };
    match shared_size_refusal(target, ranks, size, room) {
        Some(msg) => Err(crate::usage!("{msg}")),
        None => Ok(()),
    }
}

/// Why `ranks` test files of `size` do not fit in `room` bytes of `target`, if they don't.
fn shared_size_refusal(target: &Path, ranks: u32, size: u64, room: u64) -> Option<String> {
    let ranks = ranks.max(1);
    let each = room / ranks as u64;
    (size > each).then(|| {
        format!(
            "--size {} on each of {ranks} ranks: only {} free on {} for their test files together (--size {}K at most)",
            crate::units::fmt_size_iec(size),
            crate::units::fmt_size_iec(room),
            target.display(),
            each / 1024
        )
    })
}

/// What a rank prepared before any measuring: its config (on its own subdirectories), its
/// place in the targets, and the result file (rank 0; nowhere on the others).
pub struct Prepared<C> {
    pub cfg: C,
    pub sink: ResultSink,
    pub space: RankSpace,
}

impl<C> Prepared<C> {
    /// The result file on rank 0; no file on the others.
    pub fn new(
        cfg: C,
        space: RankSpace,
        rank: u32,
        output: Option<&Path>,
        command: &str,
    ) -> Result<Self> {
        let sink = if rank == 0 {
            let sink = ResultSink::create(output, command)?;
            if let Some(p) = &sink.claimed_empty {
                crate::fs::registry::record_empty_result(p);
            }
            sink
        } else {
            ResultSink::none()
        };
        Ok(Prepared { cfg, sink, space })
    }

    /// Rank 0: `doc` is the result its file will hold (as `family::execute` records it), so
    /// a start after a kill marks the file `killed` rather than leave it `running`.
    pub fn will_hold(&self, doc: ResultDoc) -> ResultDoc {
        if let Some(p) = &self.sink.path {
            crate::fs::registry::record_result(p, &doc);
        }
        doc
    }
}

/// A rank once every rank agreed to start ([`Session::begin`]).
pub struct Started<C> {
    pub p: Prepared<C>,
    pub ctx: RunContext,
    /// Rank 0 marks the result file `interrupted` on a signal while this lives: keep it
    /// until the end.
    pub _watch: InterruptWatch,
    /// This rank's environment (its own subdirectory as the target).
    pub env: crate::model::Environment,
    pub hostname: String,
    /// Every rank's clock against rank 0's, measured at the start.
    pub offsets: Vec<crate::dist::ClockOffset>,
}

impl<C> Started<C> {
    /// The environment a job's document gives: this rank's, with the shared target the user
    /// named instead of the rank's own subdirectory.
    pub fn shared_env(&self, target: &Path) -> crate::model::Environment {
        let mut env = self.env.clone();
        env.target_path = target.display().to_string();
        env
    }

    /// Rank 0's document of the whole job, as its result file will hold it
    /// ([`Prepared::will_hold`]).
    pub fn job_doc(&self, command: &str, argv: Vec<String>, target: &Path) -> ResultDoc {
        self.p
            .will_hold(ResultDoc::new(command, argv, self.shared_env(target)))
    }
}

/// This process as one rank of the job.
pub struct Session {
    universe: mpi::environment::Universe,
    pub world: SimpleCommunicator,
    pub rank: u32,
    pub size: u32,
}

fn is_interrupt(e: &anyhow::Error) -> bool {
    crate::error::interrupted(e).is_some()
}

/// Rank 0's output at the end: the document as JSON, or its table and the per-host table,
/// then where the result file is.
pub fn print_tables(
    doc: &ResultDoc,
    json: bool,
    sink: &ResultSink,
    tables: [fn(&ResultDoc) -> String; 2],
) -> Result<()> {
    if json {
        crate::outln!("{}", serde_json::to_string_pretty(doc)?);
    } else {
        for table in tables {
            crate::out!("{}", table(doc));
        }
        std::io::Write::flush(&mut std::io::stdout())?;
        if let Some(path) = &sink.path {
            crate::eline!(
                "results: {}",
                crate::os::text::terminal(&path.display().to_string())
            );
        }
    }
    Ok(())
}

impl Session {
    pub fn start() -> Result<Session> {
        // Open MPI busy-polls while it waits unless told otherwise; iolab's ranks must leave
        // the CPU to the I/O threads (theirs and those of ranks on the same host). A user's
        // own setting wins.
        if std::env::var_os(YIELD_VAR).is_none() {
            // SAFETY: no other thread exists yet (MPI is not initialized, nothing was spawned).
            unsafe { std::env::set_var(YIELD_VAR, "1") };
        }
        // FUNNELED: only this thread calls MPI; the I/O threads never do.
        let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled)
            .ok_or_else(|| anyhow!("MPI was already initialized"))?;
        let world = universe.world();
        Ok(Session {
            rank: world.rank() as u32,
            size: world.size() as u32,
            world,
            universe,
        })
    }

    /// Collective: true on every rank when `ok` is true on every rank.
    fn all_ok(&self, ok: bool) -> bool {
        let mut all = vec![0u8; self.size as usize];
        self.world.all_gather_into(&(ok as u8), &mut all[..]);
        all.iter().all(|&b| b == 1)
    }

    /// Collective: go on only if every rank prepared; otherwise every rank stops here and
    /// rank 0 gives back the result file name it claimed (nothing was measured).
    pub fn agree_to_start<C>(&self, prepared: Result<Prepared<C>>) -> Result<Prepared<C>> {
        if self.all_ok(prepared.is_ok()) {
            return prepared;
        }
        if let Ok(Prepared { sink, .. }) = &prepared
            && let Some(p) = &sink.path
        {
            let _ = std::fs::remove_file(p);
        }
        let err = match prepared {
            Err(e) => e.context(format!("rank {}", self.rank)),
            Ok(_) => crate::usage!(
                "another rank could not start (its message is above); nothing was measured"
            ),
        };
        // Every rank says why it stops before any rank ends: mpirun kills the rest of the job
        // as soon as one rank exits with an error, which would cut off a slower rank's line.
        let code = crate::error::exit_code_for(&err);
        crate::eline!("iolab: error: {err:#}");
        self.world.barrier();
        Err(anyhow::Error::new(crate::error::Reported {
            message: format!("{err:#}"),
            code,
        }))
    }

    /// Collective: every rank agrees to start ([`Session::agree_to_start`]), then takes its
    /// run context, its environment and the ranks' clock offsets: what every distributed
    /// command has before it measures.
    pub fn begin<C>(&self, prepared: Result<Prepared<C>>, quiet: bool) -> Result<Started<C>> {
        let p = self.agree_to_start(prepared)?;
        let (ctx, watch) = self.context(&p.sink, quiet)?;
        let env = crate::sysinfo::capture_environment(&p.space.dirs[0].path);
        let hostname = env.hostname.clone();
        let offsets = crate::dist::clock::measure_offsets(&self.world);
        Ok(Started {
            p,
            ctx,
            _watch: watch,
            env,
            hostname,
            offsets,
        })
    }

    /// The rank's run context: progress on rank 0 only (none with `--quiet`), signals
    /// caught (mpirun forwards Ctrl-C to every rank); on rank 0, a watcher that marks the
    /// result file `interrupted` the moment a signal arrives (keep it until the end).
    fn context(&self, sink: &ResultSink, quiet: bool) -> Result<(RunContext, InterruptWatch)> {
        let ctx = RunContext::new(if self.rank == 0 {
            ProgressMode::detect(quiet)
        } else {
            ProgressMode::Quiet
        });
        ctx.stop
            .install()
            .context("cannot install signal handlers")?;
        let watch = InterruptWatch::start(&ctx.stop, sink);
        Ok((ctx, watch))
    }

    /// After the measuring: on a rank's error (not an interrupt) the whole job stops; rank 0
    /// saves and `print`s its document; then every rank lets go of its place in the targets
    /// and the ranks end together.
    pub fn end<C>(
        self,
        outcome: Result<()>,
        doc: Option<ResultDoc>,
        prepared: Prepared<C>,
        hostname: &str,
        print: impl FnOnce(&ResultDoc, &Prepared<C>) -> Result<()>,
    ) -> Result<i32> {
        let rank = self.rank;
        if let Err(e) = &outcome
            && !is_interrupt(e)
        {
            // The other ranks wait for this one at the next barrier: stop them all.
            crate::eline!("iolab: rank {rank} ({hostname}): error: {e:#}");
            if let Some(mut d) = doc {
                d.finish(&outcome);
                let _ = prepared.sink.save(&d);
            }
            crate::fs::guard::cleanup_all();
            drop(prepared);
            self.world.abort(1);
        }
        if let Some(mut d) = doc {
            d.finish(&outcome);
            let saved = prepared.sink.save(&d);
            if saved.is_ok() {
                crate::fs::registry::result_saved(prepared.sink.path.as_deref());
            }
            let source = prepared.sink.path.as_deref().filter(|_| saved.is_ok());
            let printed = saved.and_then(|_| print(&d, &prepared));
            // Rank 0 records the job's document in the history, after its output (a
            // warning at worst; the only copy when the result file could not be written).
            crate::history::record_run(&d, source);
            printed?;
        }
        drop(prepared);
        // Everyone ends here, also after an interrupt (mpirun forwards SIGINT/SIGTERM to
        // every rank). A rank that was interrupted elsewhere (waiting at another barrier)
        // never comes: then leave without MPI_Finalize, which would wait for it, and let
        // mpirun end the job.
        if !wait_for_all(&self.world, None, Some(FINAL_WAIT))? {
            crate::eline!(
                "iolab: rank {rank}: the other ranks did not end together; leaving MPI without finalizing"
            );
            std::mem::forget(self.universe);
        }
        outcome.map(|_| 0)
    }
}

/// Watches the stop flag and marks the result file `interrupted` as soon as a signal is
/// seen, before the ranks meet to agree to stop: mpirun kills every rank one second after it
/// forwards Ctrl-C, and meeting may take longer on a loaded machine (the file said `running`
/// then). Stops with its owner.
pub struct InterruptWatch {
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl InterruptWatch {
    fn start(stop: &crate::os::signals::StopFlag, sink: &ResultSink) -> InterruptWatch {
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        if sink.path.is_none() {
            return InterruptWatch { done, thread: None };
        }
        let (stop, marker, flag) = (stop.clone(), sink.interrupt_marker(), done.clone());
        let thread = std::thread::spawn(move || {
            while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                if let Some(sig) = stop.signal() {
                    marker.mark(sig, crate::os::signals::signal_name(sig));
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        });
        InterruptWatch {
            done,
            thread: Some(thread),
        }
    }
}

impl Drop for InterruptWatch {
    fn drop(&mut self) {
        self.done.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two ranks asking 150 MiB each of 213 MiB free: refused up front (it failed mid-way
    /// with ENOSPC on the last rank to make its file); 100 MiB each fits.
    #[test]
    fn an_explicit_size_is_checked_for_all_ranks_together() {
        let t = Path::new("/mnt/bench");
        let room = 213 << 20;
        let msg = shared_size_refusal(t, 2, 150 << 20, room).expect("refused");
        assert_eq!(
            msg,
            "--size 150.0 MiB on each of 2 ranks: only 213.0 MiB free on /mnt/bench for their test files together (--size 109056K at most)"
        );
        assert_eq!(shared_size_refusal(t, 2, 100 << 20, room), None);
        // One rank: the usual single-process rule.
        assert_eq!(shared_size_refusal(t, 1, 200 << 20, room), None);
        assert!(shared_size_refusal(t, 1, 214 << 20, room).is_some());
    }
}

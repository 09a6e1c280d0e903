//! `iolab run` under mpirun/srun: every rank runs the same tests in its own subdirectory
//! (`iolab-rank-N`) of the shared target, with `DistHooks` keeping the ranks in step; rank 0
//! writes the one result file and prints the totals and the per-host table.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use crate::cli::run::RunArgs;
use crate::commands::run::{finish_doc, run_with_hooks};
use crate::config::RunConfig;
use crate::dist::hooks::{Collector, DistHooks, wait_for_all};
use crate::model::{ResultDoc, ResultSink};
use crate::runner::target::{TargetKind, classify};
use crate::runner::{ProgressMode, RunContext};

/// Open MPI's "yield when idle" (no busy polling), set before `MPI_Init` unless the user
/// chose.
pub const YIELD_VAR: &str = "OMPI_MCA_mpi_yield_when_idle";

/// How long the ranks wait for each other at the end.
const FINAL_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// A rank's own subdirectory of the target; removed on drop if this run created it and it
/// is empty (a `--keep` test file keeps it).
struct RankDir {
    path: PathBuf,
    created: bool,
}

impl Drop for RankDir {
    fn drop(&mut self) {
        if self.created {
            let _ = std::fs::remove_dir(&self.path);
        }
    }
}

/// What a rank prepared before any measuring. Fields drop in order: the lock (a file in the
/// directory) before the directory.
struct Setup {
    cfg: RunConfig,
    _lock: crate::runner::lock::TargetLock,
    /// Rank 0 also locks the target itself, against a plain `iolab run` there meanwhile.
    _target_lock: Option<crate::runner::lock::TargetLock>,
    sink: ResultSink,
    dir: RankDir,
}

/// The default test file size of each rank: iolab's default, but the ranks together leave
/// 10 % of the free space (on a shared file system they all take from the same space).
fn default_size(target: &Path, ranks: u32, rank: u32) -> Result<u64> {
    let free = crate::config::free_space(target).unwrap_or(u64::MAX);
    let cap = (free / 10 * 9 / ranks.max(1) as u64) & !((1u64 << 20) - 1);
    if cap == 0 {
        return Err(crate::usage!(
            "not enough free space on {} for {ranks} ranks' test files",
            target.display()
        ));
    }
    if cap < crate::config::DEFAULT_SIZE {
        if rank == 0 {
            eprintln!(
                "iolab: test file size per rank clamped to {} ({ranks} ranks share 90 % of the free space on {})",
                crate::units::fmt_size_iec(cap),
                target.display()
            );
        }
        return Ok(cap);
    }
    Ok(crate::config::DEFAULT_SIZE)
}

fn setup(args: &RunArgs, rank: u32, ranks: u32) -> Result<Setup> {
    // Every flag is checked on the target as given before anything is created.
    RunConfig::from_args(args)?;
    if classify(&args.target).ok() != Some(TargetKind::Directory) {
        return Err(crate::usage!(
            "a distributed run needs a directory on the shared storage as --target (each rank works in its own subdirectory iolab-rank-N); {} is not one",
            args.target.display()
        ));
    }
    let target_lock = if rank == 0 {
        Some(crate::runner::lock::TargetLock::acquire(&args.target)?)
    } else {
        None
    };
    let path = args.target.join(format!("iolab-rank-{rank}"));
    let created = match std::fs::create_dir(&path) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && path.is_dir() => false,
        Err(e) => {
            return Err(crate::usage!("cannot create {}: {e}", path.display()));
        }
    };
    let dir = RankDir { path, created };
    let mut rank_args = args.clone();
    rank_args.target = dir.path.clone();
    if args.size.is_none() {
        rank_args.size = Some(default_size(&args.target, ranks, rank)?);
    }
    let cfg = RunConfig::from_args(&rank_args)?;
    let lock = crate::runner::lock::TargetLock::acquire(&dir.path)?;
    let sink = if rank == 0 {
        ResultSink::create(cfg.output.as_deref(), "run")?
    } else {
        ResultSink { path: None }
    };
    Ok(Setup {
        cfg,
        _lock: lock,
        _target_lock: target_lock,
        sink,
        dir,
    })
}

/// Collective: true on every rank when `ok` is true on every rank.
fn all_ok(world: &SimpleCommunicator, ok: bool) -> bool {
    let mut all = vec![0u8; world.size() as usize];
    world.all_gather_into(&(ok as u8), &mut all[..]);
    all.iter().all(|&b| b == 1)
}

fn is_interrupt(e: &anyhow::Error) -> bool {
    e.chain()
        .any(|c| c.downcast_ref::<crate::error::Interrupted>().is_some())
}

pub fn execute(args: &RunArgs, argv: Vec<String>) -> Result<i32> {
    // Open MPI busy-polls while it waits unless told otherwise; iolab's ranks must leave the
    // CPU to the I/O threads (theirs and those of ranks on the same host). A user's own
    // setting wins.
    if std::env::var_os(YIELD_VAR).is_none() {
        // SAFETY: no other thread exists yet (MPI is not initialized, nothing was spawned).
        unsafe { std::env::set_var(YIELD_VAR, "1") };
    }
    // FUNNELED: only this thread calls MPI; the I/O threads never do.
    let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled)
        .ok_or_else(|| anyhow!("MPI was already initialized"))?;
    let world = universe.world();
    let rank = world.rank() as u32;

    let prepared = setup(args, rank, world.size() as u32);
    if !all_ok(&world, prepared.is_ok()) {
        // Give back the result file name rank 0 claimed: nothing was measured.
        if let Ok(Setup {
            sink: ResultSink { path: Some(p) },
            ..
        }) = &prepared
        {
            let _ = std::fs::remove_file(p);
        }
        return match prepared {
            Err(e) => Err(e.context(format!("rank {rank}"))),
            Ok(_) => Err(crate::usage!(
                "another rank could not start (its message is above); nothing was measured"
            )),
        };
    }
    let s = prepared?;
    let ctx = RunContext::new(if rank == 0 {
        ProgressMode::detect(false)
    } else {
        ProgressMode::Quiet
    });
    ctx.stop
        .install()
        .context("cannot install signal handlers")?;
    let env = crate::sysinfo::capture_environment(&s.dir.path);
    let hostname = env.hostname.clone();
    let offsets = crate::dist::clock::measure_offsets(&world);
    let collector = (rank == 0).then(|| {
        let mut env = env.clone();
        env.target_path = args.target.display().to_string();
        Collector {
            doc: ResultDoc::new("run", argv.clone(), env).into(),
            sink: &s.sink,
            offsets: offsets.into(),
        }
    });
    let hooks = DistHooks::new(&world, hostname.clone(), ctx.stop.clone(), collector);
    let mut local = ResultDoc::new("run", argv, env);
    let no_sink = ResultSink { path: None };
    let outcome = run_with_hooks(&s.cfg, &ctx, &mut local, &no_sink, Some(&hooks));
    let doc = hooks.into_doc();

    if let Err(e) = &outcome
        && !is_interrupt(e)
    {
        // The other ranks wait for this one at the next barrier: stop them all.
        eprintln!("iolab: rank {rank} ({hostname}): error: {e:#}");
        if let Some(mut d) = doc {
            finish_doc(&mut d, &outcome);
            let _ = s.sink.save(&d);
        }
        crate::fs::guard::cleanup_all();
        drop(s);
        world.abort(1);
    }
    if let Some(mut d) = doc {
        finish_doc(&mut d, &outcome);
        s.sink.save(&d)?;
        print_result(&d, s.cfg.json, s.sink.path.as_deref())?;
    }
    drop(s);
    // Everyone ends here, also after an interrupt (mpirun forwards SIGINT/SIGTERM to every
    // rank). A rank that was interrupted elsewhere (waiting at another barrier) never comes:
    // then leave without MPI_Finalize, which would wait for it, and let mpirun end the job.
    if !wait_for_all(&world, None, Some(FINAL_WAIT))? {
        eprintln!(
            "iolab: rank {rank}: the other ranks did not end together; leaving MPI without finalizing"
        );
        std::mem::forget(universe);
    }
    outcome.map(|_| 0)
}

fn print_result(doc: &ResultDoc, json: bool, path: Option<&Path>) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(doc)?);
    } else {
        print!("{}", crate::report::table::render_block_table(doc));
        print!("{}", crate::dist::table::render_hosts_table(doc));
        std::io::Write::flush(&mut std::io::stdout())?;
        if let Some(p) = path {
            eprintln!("results: {}", p.display());
        }
    }
    Ok(())
}

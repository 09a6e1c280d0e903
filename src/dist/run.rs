//! `iolab run` under mpirun/srun: every rank runs the same tests in its own subdirectory
//! (`iolab-rank-N`) of the shared target, with `DistHooks` keeping the ranks in step; rank 0
//! writes the one result file and prints the totals and the per-host table.

use anyhow::Result;

use crate::cli::run::RunArgs;
use crate::dist::hooks::{Collector, DistHooks};
use crate::dist::session::{
    Prepared, RankSpace, Session, check_shared_size, per_rank_size, print_tables,
};
use crate::model::{ResultDoc, ResultSink};
use crate::report::dist::render_hosts_table;
use crate::report::table::render_block_table;
use crate::runner::run::RunConfig;
use crate::runner::run::run_with_hooks;

fn setup(args: &RunArgs, rank: u32, ranks: u32) -> Result<Prepared<RunConfig>> {
    // Every flag is checked on the target as given before anything is created.
    RunConfig::from_args(args)?;
    if let Some(size) = args.size {
        check_shared_size(&args.target, ranks, size)?;
    }
    let space = RankSpace::claim(std::slice::from_ref(&args.target), rank)?;
    let mut rank_args = args.clone();
    rank_args.target = space.dirs[0].path.clone();
    if args.size.is_none() {
        rank_args.size = Some(per_rank_size(
            &args.target,
            ranks,
            rank,
            crate::cli::checks::DEFAULT_SIZE,
        )?);
    }
    let cfg = RunConfig::from_args(&rank_args)?;
    let output = cfg.out.dir.clone();
    Prepared::new(cfg, space, rank, output.as_deref(), "run")
}

pub fn execute(args: &RunArgs, argv: Vec<String>) -> Result<i32> {
    let session = Session::start()?;
    let rank = session.rank;
    let s = session.begin(setup(args, rank, session.size), args.out.quiet)?;
    let collector = (rank == 0).then(|| Collector {
        doc: s.job_doc("run", argv.clone(), &args.target).into(),
        sink: &s.p.sink,
        offsets: s.offsets.clone().into(),
    });
    let hooks = DistHooks::new(
        &session.world,
        s.hostname.clone(),
        s.ctx.stop.clone(),
        collector,
    );
    let mut local = ResultDoc::new("run", argv, s.env.clone());
    let no_sink = ResultSink::none();
    let outcome = run_with_hooks(&s.p.cfg, &s.ctx, &mut local, &no_sink, Some(&hooks));
    let doc = hooks.into_doc();
    session.end(outcome, doc, s.p, &s.hostname, |d, p| {
        print_tables(
            d,
            p.cfg.out.json,
            &p.sink,
            [render_block_table, render_hosts_table],
        )
    })
}

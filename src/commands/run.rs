//! `iolab run`: the quick disk test. Options -> target -> prefill -> tests x repeats ->
//! result file after every test -> table.

use std::path::Path;

use anyhow::Result;

use super::family::{DirFamily, Family, Output, execute as execute_family};
use crate::cli::run::RunArgs;
use crate::model::{ResultDoc, ResultSink};
use crate::runner::RunContext;
use crate::runner::run::RunConfig;
use crate::runner::run::run_with;

impl crate::cli::Execute for RunArgs {
    fn execute(&self, argv: Vec<String>) -> anyhow::Result<i32> {
        let args = self;
        // Under mpirun/srun with several ranks: the distributed run (src/dist).
        #[cfg(feature = "mpi")]
        if super::family::distributed("run", &args.steady)? {
            return crate::dist::run::execute(args, argv);
        }
        execute_family(RunFamily::from_args(args)?, argv)
    }

    fn check(&self) -> Result<(), String> {
        super::family::check(crate::runner::run::RunConfig::from_args(self))
    }
}

/// `iolab run` as a family: the command line and the matrix's `run:` workloads.
pub struct RunFamily {
    cfg: RunConfig,
}

impl Family for RunFamily {
    const NAME: &'static str = "run";

    fn output(&self) -> Output<'_> {
        Output::on(&self.cfg.target, &self.cfg.out)
    }

    fn measure(&mut self, ctx: &RunContext, doc: &mut ResultDoc, sink: &ResultSink) -> Result<()> {
        run_with(&self.cfg, ctx, doc, sink)
    }

    fn render(&self, doc: &ResultDoc) -> String {
        crate::report::table::render_block_table(doc)
    }
}

/// `run:KEY=VALUE:...` for the matrix: any `iolab run` flag, e.g. `run:preset=real:duration=2s`.
impl DirFamily for RunFamily {
    type Args = RunArgs;

    fn check_reference(args: &RunArgs) -> Result<(), crate::error::UsageError> {
        crate::cli::run::check_without_target(args)
    }

    fn retarget(args: &mut RunArgs, dir: &Path) {
        args.target = dir.to_path_buf();
        args.out.no_save = true;
        args.keep = false;
    }

    fn from_args(args: &RunArgs) -> Result<RunFamily> {
        Ok(RunFamily {
            cfg: RunConfig::from_args(args)?,
        })
    }
}

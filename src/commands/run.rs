//! `iolab run`: the quick disk test. Options -> target -> prefill -> tests x repeats ->
//! result file after every test -> table.

use std::path::Path;

use anyhow::Result;

use super::family::{DirFamily, Family, Output, execute as execute_family};
use crate::cli::run::RunArgs;
use crate::config::RunConfig;
use crate::model::{ResultDoc, ResultSink};
use crate::runner::RunContext;
use crate::runner::run::run_with;

pub fn execute(args: &RunArgs, argv: Vec<String>) -> Result<i32> {
    // Under mpirun/srun with several ranks: the distributed run (src/dist).
    #[cfg(feature = "mpi")]
    if crate::dist::launched().is_some_and(|l| l.size > 1) {
        if args.steady.steadystate.is_some() {
            return Err(crate::error::UsageError::new(
                "--steadystate is not available in a distributed run (each rank's drive reaches it on its own); run it on each host alone",
            )
            .into());
        }
        return crate::dist::run::execute(args, argv);
    }
    execute_family(RunFamily::from_args(args)?, argv)
}

/// `iolab run` as a family: the command line and the matrix's `run:` workloads.
pub struct RunFamily {
    cfg: RunConfig,
}

impl Family for RunFamily {
    const NAME: &'static str = "run";

    fn target(&self) -> Option<&Path> {
        Some(&self.cfg.target)
    }

    fn output(&self) -> Output<'_> {
        Output::to(self.cfg.json, self.cfg.output.as_deref())
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

    fn reference(
        params: &std::collections::BTreeMap<String, String>,
    ) -> Result<(RunArgs, String), crate::error::UsageError> {
        if params.contains_key("target") || params.contains_key("output") {
            return Err(crate::error::UsageError::new(
                "workload run: target and output are set by the matrix",
            ));
        }
        let cmd = crate::config::reference::parse_family_args(
            &["run"],
            params,
            &["keep", "no-save", "json"],
        )?;
        let crate::cli::Command::Run(args) = cmd else {
            unreachable!("parsed as run")
        };
        Ok((args, super::family::reference_label("run", params)))
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

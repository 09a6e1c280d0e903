//! `iolab saturate`: options -> targets -> prefill (and optional preconditioning) -> one
//! search per sweep (randread, randwrite, read+write; x jobs) -> result file after every
//! step -> answer lines and curve tables. Ctrl-C saves and prints the curve measured so far.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::family::{Family, Output, execute as execute_family};
use crate::cli::saturate::SaturateArgs;
use crate::model::{ResultDoc, ResultSink};
use crate::report;
use crate::runner::RunContext;
use crate::runner::sweep::{Timing, saturate_with_hooks, start_warnings};
use crate::workload::saturate::config::SaturateConfig;

impl crate::cli::Execute for SaturateArgs {
    fn execute(&self, argv: Vec<String>) -> anyhow::Result<i32> {
        let args = self;
        // Under mpirun/srun with several ranks: the distributed saturate (src/dist).
        #[cfg(feature = "mpi")]
        if super::family::distributed("saturate", &args.steady)? {
            return crate::dist::saturate::execute(args, argv);
        }
        let cfg = SaturateConfig::from_args(args)?;
        execute_family(SaturateFamily { cfg, timing: None }, argv)
    }

    fn check(&self) -> Result<(), String> {
        super::family::check(SaturateConfig::from_args(self))
    }
}

/// `iolab saturate` as a family.
struct SaturateFamily {
    cfg: SaturateConfig,
    /// The time the sweeps took, once measured.
    timing: Option<Timing>,
}

impl Family for SaturateFamily {
    const NAME: &'static str = "saturate";

    // One iolab run per target at a time (another would mix its I/O into this curve).
    fn locks(&self) -> Vec<&Path> {
        self.cfg.targets.iter().map(|t| t.path.as_path()).collect()
    }

    fn output(&self) -> Output<'_> {
        Output::to(&self.cfg.out)
    }

    fn environment_path(&self) -> PathBuf {
        self.cfg.targets[0].path.clone()
    }

    fn start(&mut self, doc: &mut ResultDoc) {
        start_warnings(&self.cfg, doc);
    }

    fn measure(&mut self, ctx: &RunContext, doc: &mut ResultDoc, sink: &ResultSink) -> Result<()> {
        report::saturate::show_plan(&self.cfg, self.cfg.out.quiet);
        let (outcome, timing) = saturate_with_hooks(&self.cfg, ctx, doc, sink, None);
        self.timing = Some(timing);
        outcome
    }

    fn render(&self, doc: &ResultDoc) -> String {
        report::saturate::report(doc, &self.cfg)
    }

    fn notes(&self, _doc: &ResultDoc) -> Vec<String> {
        self.timing
            .iter()
            .map(|t| report::saturate::timing_line(t, &self.cfg))
            .collect()
    }
}

//! `iolab sustain`: options -> target -> the first pass (O_DIRECT writes across the span,
//! the per-interval series kept) -> phases and cliffs -> for each `--recovery` time: idle,
//! then write again -> result file after every pass -> table. The passes run in
//! `runner::sustain`; the table is `report::sustain`.

use anyhow::Result;

use super::family::{Family, Output, execute as execute_family};
use crate::cli::sustain::SustainArgs;
use crate::model::{ResultDoc, ResultSink};
use crate::runner::RunContext;
use crate::runner::sustain::SustainConfig;

impl crate::cli::Execute for SustainArgs {
    fn execute(&self, argv: Vec<String>) -> anyhow::Result<i32> {
        let args = self;
        let cfg = SustainConfig::from_args(args)?;
        execute_family(SustainFamily { cfg }, argv)
    }

    fn check(&self) -> Result<(), String> {
        super::family::check(SustainConfig::from_args(self))
    }
}

/// `iolab sustain` as a family.
struct SustainFamily {
    cfg: SustainConfig,
}

impl Family for SustainFamily {
    const NAME: &'static str = "sustain";

    fn output(&self) -> Output<'_> {
        Output::on(&self.cfg.target, &self.cfg.out)
    }

    fn start(&mut self, doc: &mut ResultDoc) {
        if doc.environment.block_device.is_none()
            && let Some(w) = crate::sysinfo::resolve::no_device_warning(&self.cfg.target)
        {
            doc.warn(w);
        }
    }

    fn measure(&mut self, ctx: &RunContext, doc: &mut ResultDoc, sink: &ResultSink) -> Result<()> {
        crate::runner::sustain::sustain(&self.cfg, ctx, doc, sink)
    }

    fn render(&self, doc: &ResultDoc) -> String {
        crate::report::sustain::render_table(doc)
    }
}

//! The matrix's workloads: a family that runs on any directory (`family::DirFamily`) from
//! its reference (`files:sizes=1,4K`), measured on each file system through the family's
//! own `measure`. `commands::resolve` names the families.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Result;

use super::family::{DirFamily, DirWorkload, FileMaking, WorkloadOutput};
use crate::error::UsageError;
use crate::model::{ResultDoc, ResultSink};
use crate::runner::RunContext;

/// A family's arguments from a reference, run through the family's own `measure`.
struct OnDir<F: DirFamily> {
    args: F::Args,
    label: String,
}

impl<F: DirFamily> DirWorkload for OnDir<F> {
    fn label(&self) -> String {
        self.label.clone()
    }

    /// The family retargeted to `dir`, measured into a throw-away document whose tests and
    /// warnings the matrix keeps.
    fn run_on(&self, dir: &Path, ctx: &RunContext) -> Result<WorkloadOutput> {
        self.run_on_unit(dir, None, ctx)
    }

    fn file_making(&self) -> Option<FileMaking> {
        F::file_making(&self.args)
    }

    fn run_on_unit(
        &self,
        dir: &Path,
        unit: Option<u64>,
        ctx: &RunContext,
    ) -> Result<WorkloadOutput> {
        let mut args = self.args.clone();
        F::retarget(&mut args, dir);
        if let Some(u) = unit {
            F::set_unit(&mut args, u);
        }
        let mut family = F::from_args(&args)?;
        let env = crate::sysinfo::capture_environment(dir);
        let mut doc = ResultDoc::new(F::NAME, Vec::new(), env);
        family.start(&mut doc);
        let stopped = match family.measure(ctx, &mut doc, &ResultSink::none()) {
            Ok(()) => None,
            // The tests finished before a stop are measured: kept, not thrown away with the
            // throw-away document (a matrix stopped in its fourth test said "no test had
            // finished" of three finished ones).
            Err(e) if crate::error::interrupted(&e).is_some() => Some(e),
            Err(e) => return Err(e),
        };
        Ok(WorkloadOutput {
            tests: doc.tests,
            warnings: doc.warnings,
            stopped,
        })
    }
}

pub fn on_dir<F: DirFamily + 'static>(
    params: &BTreeMap<String, String>,
) -> Result<Box<dyn DirWorkload>, UsageError> {
    let (args, label) = F::reference(params)?;
    Ok(Box::new(OnDir::<F> { args, label }))
}

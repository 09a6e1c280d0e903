//! The matrix's workload references by family name: `run:`, `files:`, `copy:`, `trace:`
//! resolved to the family that measures them (`family::DirFamily`), run on a directory
//! through the family's own `measure`. A new family that runs in the matrix adds one line
//! to [`resolve`].

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Result;

use super::family::{DirFamily, DirWorkload, WorkloadOutput};
use crate::error::UsageError;
use crate::model::{ResultDoc, ResultSink};
use crate::runner::RunContext;
use crate::workload::WorkloadRef;

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
        let mut args = self.args.clone();
        F::retarget(&mut args, dir);
        let mut family = F::from_args(&args)?;
        let env = crate::sysinfo::capture_environment(dir);
        let mut doc = ResultDoc::new(F::NAME, Vec::new(), env);
        family.start(&mut doc);
        let r = family.measure(ctx, &mut doc, &ResultSink::none());
        r.map(|_| WorkloadOutput {
            tests: doc.tests,
            warnings: doc.warnings,
        })
    }
}

fn on_dir<F: DirFamily + 'static>(
    params: &BTreeMap<String, String>,
) -> Result<Box<dyn DirWorkload>, UsageError> {
    let (args, label) = F::reference(params)?;
    Ok(Box::new(OnDir::<F> { args, label }))
}

/// Build the workload a reference names. A new family adds one line here.
pub fn resolve(r: &WorkloadRef) -> Result<Box<dyn DirWorkload>, UsageError> {
    match r.family.as_str() {
        "run" => on_dir::<super::run::RunFamily>(&r.params),
        "files" => on_dir::<super::files::FilesFamily>(&r.params),
        "copy" => on_dir::<super::copy::CopyFamily>(&r.params),
        "trace" => on_dir::<super::trace::TraceFamily>(&r.params),
        other => Err(UsageError::new(format!(
            "unknown workload family '{other}' (known: run, files, copy, trace)"
        ))),
    }
}

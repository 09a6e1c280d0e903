//! A workload of the matrix: a reference (`files:sizes=1,4K`) resolved, before anything is
//! made, to the family that will run it on every configuration.

use crate::commands::family::DirWorkload;
use crate::commands::resolve;
use crate::error::UsageError;
use crate::workload::WorkloadRef;

pub struct WorkloadPlan {
    pub label: String,
    pub workload: Box<dyn DirWorkload>,
}

/// Resolve `s`; a bad reference or an unknown family is a usage error naming it.
pub fn resolve_ref(s: &str) -> Result<WorkloadPlan, UsageError> {
    let r = WorkloadRef::parse(s)?;
    let w = resolve(&r).map_err(|e| UsageError::new(format!("--workload {s}: {e}")))?;
    Ok(WorkloadPlan {
        label: w.label(),
        workload: w,
    })
}

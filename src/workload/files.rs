//! The `files` workload family.

use std::collections::BTreeMap;

use crate::error::UsageError;
use crate::workload::DirWorkload;

/// Build a `files:...` workload for the matrix from `KEY=VALUE` parameters.
pub fn dir_workload(
    _params: &BTreeMap<String, String>,
) -> Result<Box<dyn DirWorkload>, UsageError> {
    Err(UsageError::new(
        "the files workload family is not built yet",
    ))
}

//! The `files` workload family: Belov's small-file tester (NTFS cluster sizes). Copies of a
//! reference file kept in RAM are written in portions x passes, each portion timed on its own, then
//! stat'ed, read back and deleted; sizes may be given relative to the allocation unit.
//! `parse_reference` lets the matrix run it on every file system it formats.

pub mod big;
pub mod config;
pub mod engine;
pub mod result;
pub mod run;
pub mod scaling;
pub mod sizes;
pub mod space;

use std::collections::BTreeMap;

use crate::error::UsageError;

/// Flags of `iolab files` that take no value (a reference gives them as `KEY=true`).
const BARE_FLAGS: &[&str] = &[
    "nice",
    "drop-caches",
    "keep-files",
    "no-room-check",
    "no-save",
    "json",
];

/// Parse a `files:KEY=VALUE:...` matrix reference (any `iolab files` flag, e.g.
/// `files:sizes=1,4K:files-per-portion=1000`) into `iolab files` arguments and its label.
pub fn parse_reference(
    params: &BTreeMap<String, String>,
) -> Result<(crate::cli::files::FilesArgs, String), UsageError> {
    for k in ["target", "output", "keep-files"] {
        if params.contains_key(k) {
            return Err(UsageError::new(format!(
                "workload files: {k} is set by the matrix"
            )));
        }
    }
    let cmd = crate::workload::parse_family_args(&["files"], params, BARE_FLAGS)?;
    let crate::cli::Command::Files(args) = cmd else {
        unreachable!("parsed as files")
    };
    let mut label = "files".to_string();
    for (k, v) in params {
        label.push_str(&format!(":{k}={v}"));
    }
    Ok((args, label))
}

#[cfg(test)]
mod tests {
    #[test]
    fn matrix_reference_parses() {
        let r =
            crate::workload::WorkloadRef::parse("files:sizes=1,4K:files-per-portion=1000").unwrap();
        let (_, label) = super::parse_reference(&r.params).unwrap();
        assert!(label.starts_with("files:"));
        let bad = crate::workload::WorkloadRef::parse("files:target=/tmp").unwrap();
        assert!(super::parse_reference(&bad.params).is_err());
        let bad = crate::workload::WorkloadRef::parse("files:portions=x").unwrap();
        assert!(super::parse_reference(&bad.params).is_err());
    }
}

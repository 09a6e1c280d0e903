//! The `files` workload family: Belov's small-file tester (NTFS cluster sizes). Copies of a
//! reference file kept in RAM are written in portions x passes, each portion timed on its own, then
//! stat'ed, read back and deleted; sizes may be given relative to the allocation unit.
//! `dir_workload` lets the matrix run it on every file system it formats.

pub mod big;
pub mod config;
pub mod engine;
pub mod result;
pub mod run;
pub mod scaling;
pub mod sizes;
pub mod space;

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::UsageError;
use crate::runner::RunContext;
use crate::workload::{DirWorkload, WorkloadOutput};

/// Flags of `iolab files` that take no value (a reference gives them as `KEY=true`).
const BARE_FLAGS: &[&str] = &[
    "nice",
    "drop-caches",
    "keep-files",
    "no-room-check",
    "no-save",
    "json",
];

/// `files:KEY=VALUE:...` for the matrix: any `iolab files` flag, e.g.
/// `files:sizes=1,4K:files-per-portion=1000`.
struct FilesWorkload {
    args: crate::cli::files::FilesArgs,
    label: String,
}

/// Build a `files:...` workload for the matrix from `KEY=VALUE` parameters.
pub fn dir_workload(params: &BTreeMap<String, String>) -> Result<Box<dyn DirWorkload>, UsageError> {
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
    Ok(Box::new(FilesWorkload { args, label }))
}

impl DirWorkload for FilesWorkload {
    fn label(&self) -> String {
        self.label.clone()
    }

    fn run_on(&self, dir: &Path, ctx: &RunContext) -> anyhow::Result<WorkloadOutput> {
        let mut args = self.args.clone();
        args.target = dir.to_path_buf();
        args.out.no_save = true;
        args.keep_files = false;
        let cfg = config::FilesConfig::from_args(&args)?;
        WorkloadOutput::collect("files", dir, |doc, sink| {
            run::run_with(&cfg, ctx, doc, sink).map(|_| ())
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn matrix_reference_parses() {
        let r =
            crate::workload::WorkloadRef::parse("files:sizes=1,4K:files-per-portion=1000").unwrap();
        let w = crate::workload::resolve(&r).unwrap();
        assert!(w.label().starts_with("files:"));
        let bad = crate::workload::WorkloadRef::parse("files:target=/tmp").unwrap();
        assert!(crate::workload::resolve(&bad).is_err());
        let bad = crate::workload::WorkloadRef::parse("files:portions=x").unwrap();
        assert!(crate::workload::resolve(&bad).is_err());
    }
}

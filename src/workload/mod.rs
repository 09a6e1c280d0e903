//! What to do, as data: block workloads, presets, and the workload reference that lets the
//! matrix run any family (block presets, small files, copies, traces) on a mounted target.

pub mod block;
pub mod offsets;
pub mod presets;

use std::path::Path;

use crate::model::{TestResult, Warning};

/// What a workload family produced on one target directory.
#[derive(Debug, Default)]
pub struct WorkloadOutput {
    pub tests: Vec<TestResult>,
    pub warnings: Vec<Warning>,
}

/// A workload that can run on any directory (used by `iolab matrix`). Each family
/// implements it next to its own code; the matrix does not know the families.
pub trait DirWorkload: Send + Sync {
    /// Short label for tables: `run:default`, `files:4K`, `copy:media-mix`.
    fn label(&self) -> String;
    /// Run once on `dir` (a fresh, empty file system's mount point or a subdirectory).
    fn run_on(&self, dir: &Path, ctx: &crate::runner::RunContext)
    -> anyhow::Result<WorkloadOutput>;
}

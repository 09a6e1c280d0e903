//! A validated `iolab saturate`: the targets with their sizes and caches, the sweeps and
//! the search's settings. Built and checked from the command line in config/saturate.rs.

use std::path::PathBuf;
use std::time::Duration;

use crate::engine::EngineKind;
use crate::fs::facts::TargetKind;
use crate::model::Warning;
use crate::stats::steady_rounds::SteadySpec;
use crate::workload::saturate::{Aggregate, Statistic, SweepKind};

pub const MAX_DEPTH: u32 = 4096;
/// Smallest default test file for a directory target.
pub const MIN_DEFAULT_FILE: u64 = 1 << 30;
/// The caches in front of a target and the worst-case sizing rule (10x them) live with the
/// other facts of the machine; `iolab run` warns by the same rule.
pub use crate::sysinfo::caches::{ASSUMED_WRITE_CACHE, CACHE_FACTOR, Cache};

/// One validated target.
#[derive(Debug, Clone)]
pub struct TargetPlan {
    pub path: PathBuf,
    pub kind: TargetKind,
    /// Tested bytes, a whole number of blocks.
    pub size: u64,
    /// Prefill, preconditioning and write sweeps are allowed.
    pub may_write: bool,
    /// O_DIRECT works (otherwise --allow-buffered was given).
    pub direct: bool,
    pub caches: Vec<Cache>,
    /// 10x the caches: the size below which the caches may decide the result.
    pub recommended: u64,
    pub warnings: Vec<Warning>,
}

/// One sweep: a kind with a number of jobs per target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SweepSpec {
    pub kind: SweepKind,
    pub jobs: u32,
}

impl SweepSpec {
    pub fn name(&self, mix: u32) -> String {
        let base = match self.kind {
            SweepKind::Mixed => format!("read+write {mix}/{}", 100 - mix),
            k => k.name().to_string(),
        };
        if self.jobs > 1 {
            format!("{base} x{} jobs", self.jobs)
        } else {
            base
        }
    }

    /// The mixed sweep needs one I/O in flight per direction at least.
    pub fn start_depth(&self) -> u32 {
        if self.kind == SweepKind::Mixed { 2 } else { 1 }
    }
}

/// Validated `iolab saturate`.
#[derive(Debug, Clone)]
pub struct SaturateConfig {
    pub targets: Vec<TargetPlan>,
    pub sweeps: Vec<SweepSpec>,
    /// Said once at the start (e.g. write sweeps left out on a read-only device).
    pub notes: Vec<String>,
    pub bs: u64,
    pub max_depth: u32,
    pub limit_ns: f64,
    pub statistic: Statistic,
    pub aggregate: Aggregate,
    pub mix: u32,
    pub step: Duration,
    pub ramp: Duration,
    pub precondition: bool,
    /// `uring`, or `sync` where io_uring is unavailable (depth then becomes threads).
    pub engine: EngineKind,
    pub keep: bool,
    pub seed: u64,
    /// `--json`, `--output`, `--no-save`, `--quiet`.
    pub out: crate::model::Delivery,
    /// Ranks of a distributed saturate (1 otherwise): each runs every step on its own test
    /// file at the same time, so the depths in flight add up.
    pub ranks: u32,
    /// `--steadystate`: before each sweep, rounds of one step at `steady_depth` until steady.
    pub steady: Option<SteadySpec>,
    /// The depth of the steady-state rounds: min(32, --max-depth) (the SNIA PTS
    /// preconditions at 32 outstanding I/Os).
    pub steady_depth: u32,
}

impl SaturateConfig {
    pub fn writes(&self) -> bool {
        self.sweeps.iter().any(|s| s.kind.writes())
    }
}

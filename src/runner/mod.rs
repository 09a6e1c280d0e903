//! Executing workloads: targets, worker threads, phases (prefill, ramp, measure), repeats,
//! interrupts and progress.

pub mod block;
pub mod clock;
pub mod cpu;
pub mod lock;
pub mod ownership;
pub mod progress;
pub mod recorder;
pub mod repeat;
pub mod signals;
pub mod target;

pub use progress::ProgressMode;
pub use signals::StopFlag;

/// What every workload run needs from its caller.
#[derive(Debug, Clone)]
pub struct RunContext {
    pub stop: StopFlag,
    pub progress: ProgressMode,
    pub seed: u64,
}

impl RunContext {
    pub fn new(progress: ProgressMode) -> RunContext {
        RunContext {
            stop: StopFlag::new(),
            progress,
            seed: 0x10_1AB,
        }
    }
}

/// What a distributed run (`src/dist`, cargo feature `mpi`) does around the measured runs of
/// `iolab run`. Every method is called from the command's own thread, never from an I/O
/// thread, so messaging stays out of the measured hot path. A plain run has no hooks.
pub trait RunHooks {
    /// Before a run's I/O threads start: all ranks meet here, so they start together.
    /// `size_based`: the run ends after an amount of I/O (`--io-size`), not a duration.
    fn before_run(&self, size_based: bool) -> anyhow::Result<()>;
    /// How often `poll` wants to be called while a run is going.
    fn poll_interval(&self) -> std::time::Duration;
    /// While a run is going. True when this rank must stop now (stonewall: another rank
    /// reached its time or amount limit first).
    fn poll(&self) -> bool;
    /// After a run (also a failed one): this rank's result of the run, if any.
    fn after_run(&self, run: Option<&crate::model::RunResult>) -> anyhow::Result<()>;
    /// Whether to do one more repeat, given what this rank's own figures say; every rank
    /// must get the same answer.
    fn agree_more(&self, local: bool) -> anyhow::Result<bool>;
    /// After each test, with this rank's result of it and its warnings so far.
    fn after_test(
        &self,
        test: &crate::model::TestResult,
        warnings: &[crate::model::Warning],
    ) -> anyhow::Result<()>;
}

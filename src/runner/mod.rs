//! Executing workloads: targets, worker threads, phases (prefill, ramp, measure), repeats,
//! interrupts and progress.

pub mod block;
pub mod cpu;
pub mod lock;
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

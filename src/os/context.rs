//! What every measuring code gets from its caller: the stop flag (signals), how progress is
//! shown, and the run's seed. Here at the bottom so that workloads, runners and commands
//! can all take it without importing one another.

use super::progress::ProgressMode;
use super::signals::StopFlag;

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

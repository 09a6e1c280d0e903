//! What every measuring code gets from its caller: the stop flag (signals), how progress is
//! shown, and the run's seed. Here at the bottom so that workloads, runners and commands
//! can all take it without importing one another.

use super::progress::ProgressMode;
use super::signals::StopFlag;

/// The seed of offsets and data when none is given: the same in every command that has a
/// `--seed` (run, saturate, sustain, copy) and in those that have none (files, trace), so
/// that one command's default bytes are another's. `iolab age` keeps its own default (1),
/// which names the aged tree it leaves (`iolab-aged-1`).
pub const DEFAULT_SEED: u64 = 0x10_1AB;

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
            seed: DEFAULT_SEED,
        }
    }
}

//! `iolab trace run` (and the matrix's `trace:` workloads), `record` and `replay`: the
//! command line to checked settings; for run, the plan — the workload loaded and scaled, the repeats, the target's room — before anything
//! is created. The plan itself lives with the code that runs it (workload/trace/measure.rs).

use crate::cli::trace::{TraceRecordArgs, TraceReplayArgs, TraceRunArgs};
use crate::error::UsageError;
use crate::workload::trace::measure::{self, Plan};
use crate::workload::trace::record::RecordSettings;
use crate::workload::trace::replay::ReplaySettings;

impl Plan {
    pub fn from_args(a: &TraceRunArgs) -> Result<Plan, UsageError> {
        measure::check_scale(a.scale)?;
        let loaded = crate::workload::trace::load(&a.workload)?;
        let repeat = crate::config::repeat_mode(&a.repeat).map_err(UsageError::new)?;
        let workload = loaded.workload.scaled(a.scale);
        let sets = crate::workload::trace::fileset::layout(&workload, &a.target, 0);
        measure::check_target(
            &a.target,
            crate::workload::trace::fileset::bytes_needed(&workload, &sets),
        )?;
        Ok(Plan {
            label: loaded.workload.name.clone(),
            workload,
            source: loaded.source,
            scale: a.scale,
            target: a.target.clone(),
            repeat,
        })
    }
}

impl From<&TraceRecordArgs> for RecordSettings {
    fn from(a: &TraceRecordArgs) -> RecordSettings {
        // The command, root and output are checked by `record::execute` (a missing program
        // is exit 2 there, once the recorder is chosen).
        RecordSettings {
            command: a.command.clone(),
            root: a.root.clone(),
            output: a.output.clone(),
            recorder: a.recorder,
            raw_times: a.raw_times,
        }
    }
}

impl ReplaySettings {
    pub fn from_args(a: &TraceReplayArgs) -> Result<ReplaySettings, UsageError> {
        let repeat = crate::config::repeat_mode(&a.repeat).map_err(UsageError::new)?;
        Ok(ReplaySettings {
            trace: a.trace.clone(),
            target: a.target.clone(),
            timing: a.timing,
            keep: a.keep,
            repeat,
        })
    }
}

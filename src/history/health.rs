//! The device's health at the end of a run, kept with its result: SMART through
//! `sysinfo::smart` (root and smartctl needed; a sleeping disk is not woken), only when it
//! could be read.

use crate::model::Environment;
use crate::model::device::SmartInfo;
use crate::sysinfo::{resolve, smart};

/// SMART of the physical disk under the run's target, when it can be read; `None` for a
/// loop device, a RAM disk, a missing smartctl, no root, or a disk that refused.
pub fn snapshot(env: &Environment) -> Option<SmartInfo> {
    let name = env.block_device.as_deref()?;
    let chain = resolve::device_chain(name);
    smart::smart_for_chain(&chain)
        .into_iter()
        .find(|s| s.available)
}

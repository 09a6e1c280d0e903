//! What the block device saw: `/proc/diskstats` deltas over a phase.

use serde::{Deserialize, Serialize};

/// Counter deltas of one block device over one phase (sectors are 512 bytes in diskstats).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct DeviceCounters {
    /// Kernel name (`loop3`, `sda`).
    pub device: String,
    pub read_ios: u64,
    pub read_merges: u64,
    pub read_bytes: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_bytes: u64,
    pub discard_bytes: u64,
    pub flush_ios: u64,
    /// Milliseconds the device had I/O in flight (`io_ticks`).
    pub busy_ms: u64,
    /// Wall time of the phase the deltas cover.
    pub elapsed_ms: u64,
}

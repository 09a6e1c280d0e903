//! Result detail of the saturation sweep (`iolab saturate`).

use serde::{Deserialize, Serialize};

/// One measured depth of the sweep.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CurvePoint {
    pub iodepth: u32,
}

/// The largest depth that held the latency limit.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Answer {
    pub iops: f64,
    pub iodepth: u32,
}

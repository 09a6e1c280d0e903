//! Result detail of application traces (`iolab trace`).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TraceTestDetail {}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TraceRunDetail {}

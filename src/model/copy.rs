//! Result detail of data-set copies (`iolab copy`).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CopyTestDetail {}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CopyRunDetail {}

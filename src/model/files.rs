//! Result detail of the small-file tester (`iolab files`).

use serde::{Deserialize, Serialize};

/// Per-test detail (one file size x phase).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct FilesTestDetail {}

/// Per-run detail (the per-portion series).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct FilesRunDetail {}

//! Result of the cluster-slack calculator (`iolab slack`).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SlackResult {}

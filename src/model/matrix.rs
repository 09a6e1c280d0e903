//! Result of the file-system matrix (`iolab matrix`): one entry per configuration.

use serde::{Deserialize, Serialize};

/// One file system x allocation unit x mount options configuration.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ConfigurationResult {
    pub label: String,
}

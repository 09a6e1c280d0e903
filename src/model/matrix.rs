//! Result of the file-system matrix (`iolab matrix`): one entry per configuration.

use serde::{Deserialize, Serialize};

use super::TestResult;

/// One file system x allocation unit x mount options configuration.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ConfigurationResult {
    /// `ext4 4KiB noatime`
    pub label: String,
    pub fs_type: String,
    /// Allocation unit asked for (None = the file system's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_bytes: Option<u64>,
    /// Allocation unit read back from the formatted file system.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_bytes_actual: Option<u64>,
    pub mount_options: String,
    /// `ok`, `skipped` or `failed`.
    pub status: String,
    /// Why it was skipped or how it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Tests of every workload on this configuration (each test's `config` = `label`).
    pub tests: Vec<TestResult>,
}

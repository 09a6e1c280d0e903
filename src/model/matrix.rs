//! Result of the file-system matrix (`iolab matrix`): one entry per configuration, with how
//! each fresh file system was made (timings, unit read back) and the space before and after
//! every workload.

use serde::{Deserialize, Serialize};

use super::TestResult;

/// Key in `TestResult.params` naming the workload that produced a matrix test (its label;
/// `aged_label`'s for a run on the aged file system).
pub const WORKLOAD_PARAM: &str = "matrix_workload";

/// What `--age` appends to a workload's label for its runs on the aged file system.
const AGED_SUFFIX: &str = " (aged)";

/// The label of a workload's runs on the aged file system (`matrix --age`):
/// `files:sizes=4K (aged)`. Tests carry it as their workload (`matrix_workload`); the
/// reports name such a test so too where its fresh run has the same name (`4KiB create
/// (aged)`, `report::metrics::test_name`).
pub fn aged_label(label: &str) -> String {
    format!("{label}{AGED_SUFFIX}")
}

/// The workload whose aged run `label` is (`files:sizes=4K` for `files:sizes=4K (aged)`),
/// `None` for a fresh run's label. Results of every version carry the suffix.
pub fn aged_run_of(label: &str) -> Option<&str> {
    label.strip_suffix(AGED_SUFFIX)
}

/// One file system x allocation unit x mount options configuration.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ConfigurationResult {
    /// `ext4 4KiB noatime`
    pub label: String,
    pub fs_type: String,
    /// Allocation unit asked for (None = the file system's default).
    pub cluster_bytes: Option<u64>,
    /// Allocation unit read back from the formatted file system.
    pub cluster_bytes_actual: Option<u64>,
    pub mount_options: String,
    /// The options the mount really has, as /proc/self/mountinfo shows them (per-mount and
    /// super-block options) on the first fresh file system: what applied, defaults and the
    /// kernel's additions included (`compress=zstd` shows as `compress=zstd:3`, `nodatacow`
    /// adds `nodatasum`). Absent in results written before it, and for rows never mounted.
    pub mount_options_shown: Option<String>,
    /// `ok`, `skipped`, `failed`, or `interrupted` (the configuration a stop came in).
    pub status: String,
    /// Why it was skipped or how it failed.
    pub reason: Option<String>,
    /// Tests of every workload on this configuration (each test's `config` = `label`).
    pub tests: Vec<TestResult>,
    /// `kernel xfs`, `FUSE ntfs-3g`.
    pub mount_method: Option<String>,
    /// The mkfs command line (device shown as `DEVICE`).
    pub mkfs_command: Option<String>,
    /// Whether the type journals its metadata, and its design (journal, copy-on-write, ...).
    #[serde(default)]
    pub journaling: bool,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub design: String,
    /// Size of the image or device formatted (bytes).
    pub size_bytes: Option<u64>,
    /// One entry per run: every run had its own freshly made file system.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<ConfigRun>,
    /// Each workload on this configuration and how it ended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workloads: Vec<WorkloadOutcome>,
}

/// One fresh file system of a configuration.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ConfigRun {
    /// 1-based.
    pub run: u32,
    pub cluster_bytes_actual: Option<u64>,
    /// Image file + loop device set-up.
    pub image_ns: u64,
    pub mkfs_ns: u64,
    pub mount_ns: u64,
    pub umount_ns: u64,
    pub detach_ns: u64,
    /// `df` of the file system before and after each workload.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub space: Vec<SpaceRecord>,
    /// `--age`: what aging did to this run's file system between the fresh and the aged
    /// workloads.
    pub age: Option<super::age::AgeTestDetail>,
    pub error: Option<String>,
}

/// Space around one workload on one fresh file system.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SpaceRecord {
    pub workload: String,
    pub before: DfSample,
    pub after: DfSample,
}

/// statvfs of a mounted file system, as `df` shows it.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct DfSample {
    pub total_bytes: u64,
    pub used_bytes: u64,
    /// Available to an unprivileged user.
    pub free_bytes: u64,
}

/// How one workload did on one configuration.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct WorkloadOutcome {
    /// The workload's label (`run:preset=real:duration=1s`).
    pub workload: String,
    /// `ok`, `failed`, or `interrupted` (stopped by a signal).
    pub status: String,
    pub error: Option<String>,
    /// Names of its tests in `ConfigurationResult.tests`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tests: Vec<String>,
    /// Its tests whose writes the page cache absorbed on this configuration (a
    /// `cache-absorbed` warning in some run: the device saw less than half of what they
    /// wrote). Non-empty: the workload's figures here measure memory (a FUSE helper writes
    /// the loop device through the page cache although direct I/O was asked), so the
    /// ranking lists the configuration apart instead of ranking it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cache_absorbed: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_aged_label_names_its_fresh_workload() {
        let w = "files:sizes=4K";
        assert_eq!(aged_label(w), "files:sizes=4K (aged)");
        assert_eq!(aged_run_of(&aged_label(w)), Some(w));
        assert_eq!(aged_run_of(w), None);
    }
}

//! What `iolab age` did to a file system: the profile, how much it wrote and deleted, how
//! fast, and the layout before, during and after.

use serde::{Deserialize, Serialize};

use super::layout::LayoutSummary;

/// The detail of an `age` test.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct AgeTestDetail {
    /// Built-in profile name or the profile file's path.
    pub profile: String,
    pub seed: u64,
    /// Target fullness (0..1) and churn (bytes written / file-system size).
    pub fill_target: f64,
    pub churn_target: f64,
    pub fs_size_bytes: u64,
    /// Where the aged files are.
    pub dir: String,
    pub bytes_written: u64,
    pub files_created: u64,
    pub files_deleted: u64,
    pub files_grown: u64,
    /// Files and fullness at the end.
    pub files_left: u64,
    pub fullness: f64,
    pub elapsed_s: f64,
    /// Writer threads that carried out the plan (`--jobs`; the plan itself, and so the file
    /// set, depends only on `--seed`, whatever the number).
    #[serde(default)]
    pub jobs: u32,
    /// Files created plus files deleted per second of aging (the aging speed; the wait for
    /// the used space to settle before it and the layout scoring every tenth of the way are
    /// not counted, `elapsed_s` has them).
    pub file_ops_per_s: f64,
    /// The longest a writer (the plan's own thread with one writer) spent runnable but
    /// waiting for a CPU (schedstat's run_delay, read at the aging's start and end), % of
    /// the aging: that wait is in `file_ops_per_s`. Absent where the kernel has no
    /// schedstat, and in results written before it.
    pub cpu_wait_pct: Option<f64>,
    /// The layout of the file system before aging (its existing files) and of the aged
    /// tree after it.
    pub layout_before: LayoutSummary,
    pub layout_after: LayoutSummary,
    /// The way there: one point every tenth of the churn.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub progress: Vec<AgePoint>,
}

impl AgeTestDetail {
    /// `51.1 % full (80 % asked)`: the fullness reached beside the one asked (a churn too
    /// small to get there printed "22.3 % full" after `--fill 80%`; a warning says why).
    pub fn fullness_text(&self) -> String {
        let asked = if self.fill_target > 0.0 {
            format!(" ({:.0} % asked)", self.fill_target * 100.0)
        } else {
            String::new()
        };
        format!("{:.1} % full{asked}", self.fullness * 100.0)
    }
}

/// One point on the way.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct AgePoint {
    pub bytes_written: u64,
    pub fullness: f64,
    pub files: u64,
    pub layout_score: Option<f64>,
}

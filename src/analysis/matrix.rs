//! Tests of one configuration gathered over its runs (each on a fresh file system): runs are
//! appended and renumbered, summaries recomputed over all of them; the headline metric a
//! ranking uses.

use std::collections::BTreeMap;

use crate::model::matrix::ConfigurationResult;
use crate::model::{Summary, TestResult};
use crate::report::metrics::table_figure;
use crate::stats::summary::summarize;

pub use crate::model::matrix::WORKLOAD_PARAM;

/// Per-test summaries as each run's workload reported them (for family-specific keys the
/// matrix cannot recompute from `RunResult`).
#[derive(Default)]
pub struct Gathered {
    per_run: BTreeMap<(String, String), Vec<BTreeMap<String, Summary>>>,
}

impl Gathered {
    /// Add the tests `workload` produced on one fresh file system; returns their names.
    pub fn add(
        &mut self,
        cfg: &mut ConfigurationResult,
        workload: &str,
        tests: Vec<TestResult>,
    ) -> Vec<String> {
        let mut names = Vec::new();
        for mut t in tests {
            t.config = Some(cfg.label.clone());
            t.params
                .insert(WORKLOAD_PARAM.to_string(), workload.to_string());
            names.push(t.name.clone());
            self.per_run
                .entry((workload.to_string(), t.name.clone()))
                .or_default()
                .push(t.summary.clone());
            match cfg.tests.iter_mut().find(|x| {
                x.name == t.name
                    && x.params.get(WORKLOAD_PARAM).map(String::as_str) == Some(workload)
            }) {
                Some(existing) => {
                    for mut r in t.runs {
                        r.run = existing.runs.len() as u32 + 1;
                        existing.runs.push(r);
                    }
                    if existing.error.is_none() {
                        existing.error = t.error;
                    }
                }
                None => cfg.tests.push(t),
            }
        }
        names
    }

    /// Summaries over every run: generic metrics from the runs themselves; family-specific
    /// keys (e.g. `seconds_per_portion`) over the per-run means when there were several runs.
    pub fn finish(&self, cfg: &mut ConfigurationResult) {
        for t in &mut cfg.tests {
            let wl = t.params.get(WORKLOAD_PARAM).cloned().unwrap_or_default();
            let Some(parts) = self.per_run.get(&(wl, t.name.clone())) else {
                continue;
            };
            if parts.len() < 2 {
                continue;
            }
            crate::stats::repeat::summarize_test(t);
            let keys: Vec<String> = parts.iter().flat_map(|m| m.keys().cloned()).collect();
            for k in keys {
                if t.summary.contains_key(&k) {
                    continue;
                }
                let means: Vec<f64> = parts
                    .iter()
                    .filter_map(|m| m.get(&k))
                    .map(|s| s.mean)
                    .collect();
                t.summary.insert(k, summarize(&means));
            }
        }
    }
}

/// Did the page cache absorb the writes of `workload` on configuration `c` (a
/// `cache-absorbed` warning for any of its tests, in any run)? Then none of the workload's
/// figures there measure the file system on the device: a FUSE helper (ntfs-3g,
/// mount.exfat-fuse, fusefat) writes the loop device through the page cache although the
/// test asked for direct I/O, and reads then come back from that cache too. Such a
/// configuration is shown apart from the ranking, never ranked above one that was measured.
pub fn cache_absorbed(c: &ConfigurationResult, workload: &str) -> bool {
    c.workloads
        .iter()
        .any(|o| o.workload == workload && !o.cache_absorbed.is_empty())
}

/// `cache_absorbed` for the workload that produced test `t` of configuration `c`.
pub fn test_cache_absorbed(c: &ConfigurationResult, t: &TestResult) -> bool {
    t.params
        .get(WORKLOAD_PARAM)
        .is_some_and(|w| cache_absorbed(c, w))
}

/// Had configuration `c` no device counters (a `no-device-counters` warning on it: fusefat
/// mounts no block device)? Then whether the page cache absorbed its writes cannot be
/// checked: it is ranked, with a note saying so.
pub fn cache_unchecked(doc: &crate::model::ResultDoc, c: &ConfigurationResult) -> bool {
    let prefix = format!("{}: ", c.label);
    doc.warnings.iter().any(|w| {
        w.code == crate::model::WarningCode::NoDeviceCounters
            && w.test
                .as_deref()
                .is_some_and(|t| t == c.label || t.starts_with(&prefix))
    })
}

/// Is a higher value of `metric` better (contract: `*_per_s`, `iops` up; `*_ns`, `*_s` down)?
pub fn higher_is_better(metric: &str) -> bool {
    metric == "iops" || metric.ends_with("_per_s")
}

/// The metric a test is ranked by and its headline value: the figure its command's own
/// table gives (`report::metrics::table_figure`: the median of the runs, a files test's
/// mean, a peak test's best run), so a test reads the same in the matrix as in its command.
pub fn headline(t: &TestResult) -> Option<(String, f64)> {
    // Small files are counted in files/s (as Belov); copies and block tests in their rate:
    // sequential block tests in MB/s, as `iolab run` and the report show them (the ratio
    // between two configurations is the same in IOPS at one block size).
    let sequential = t
        .settings
        .as_ref()
        .is_some_and(|s| s.rw == "read" || s.rw == "write");
    let preferred = if t.family == "files" {
        ["files_per_s", "iops", "bw_bytes_per_s"]
    } else if sequential {
        ["bw_bytes_per_s", "iops", "files_per_s"]
    } else {
        ["iops", "bw_bytes_per_s", "files_per_s"]
    };
    let key = preferred
        .iter()
        .map(|k| k.to_string())
        .find(|k| t.summary.contains_key(k))
        .or_else(|| t.summary.keys().find(|k| k.ends_with("_per_s")).cloned())
        .or_else(|| t.summary.keys().next().cloned())?;
    let v = table_figure(t, &key, t.summary.get(&key)?).0;
    (v.is_finite() && v > 0.0).then_some((key, v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::RunResult;

    fn test_with(name: &str, iops: &[f64]) -> TestResult {
        let mut t = TestResult {
            name: name.into(),
            family: "block".into(),
            runs: iops
                .iter()
                .enumerate()
                .map(|(i, &v)| RunResult {
                    run: i as u32 + 1,
                    iops: Some(v),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        crate::stats::repeat::summarize_test(&mut t);
        t.summary
            .insert("seconds_per_portion".into(), summarize(&[iops[0] / 100.0]));
        t
    }

    #[test]
    fn runs_of_fresh_file_systems_are_appended_and_summarised() {
        let mut cfg = ConfigurationResult {
            label: "ext4".into(),
            ..Default::default()
        };
        let mut g = Gathered::default();
        g.add(&mut cfg, "run:x", vec![test_with("RND4K", &[100.0])]);
        g.add(&mut cfg, "run:x", vec![test_with("RND4K", &[300.0])]);
        g.finish(&mut cfg);
        assert_eq!(cfg.tests.len(), 1);
        let t = &cfg.tests[0];
        assert_eq!(t.config.as_deref(), Some("ext4"));
        assert_eq!(t.runs.iter().map(|r| r.run).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(t.summary["iops"].n, 2);
        assert_eq!(t.summary["iops"].mean, 200.0);
        assert_eq!(t.summary["seconds_per_portion"].mean, 2.0);
        assert_eq!(headline(t).unwrap(), ("iops".to_string(), 200.0));
        assert!(higher_is_better("files_per_s") && !higher_is_better("seconds_per_portion"));
    }

    /// A sequential block test is headlined in MB/s as `iolab run` shows it (the matrix
    /// ranking showed "SEQ1M Q1T1 read  977 IOPS"); a random one in IOPS.
    #[test]
    fn sequential_tests_are_headlined_by_bandwidth() {
        let mut t = test_with("SEQ1M Q1T1 read", &[100.0]);
        t.summary
            .insert("bw_bytes_per_s".into(), summarize(&[100.0 * 1048576.0]));
        t.settings = Some(crate::model::BlockSettings {
            rw: "read".into(),
            ..Default::default()
        });
        assert_eq!(headline(&t).unwrap().0, "bw_bytes_per_s");
        t.settings.as_mut().unwrap().rw = "randread".into();
        assert_eq!(headline(&t).unwrap().0, "iops");
    }
}

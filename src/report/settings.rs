//! What a result file recorded about how one test was measured, flattened to
//! `setting -> value`, and where two such records differ: `iolab compare` matches tests by
//! name, and a name (`4KiB create`, `RND4K Q1T1 read [ext4]`) does not say that both were
//! measured alike (`--files-per-portion 50` against `10`; ext4 made with 4 KiB blocks on one
//! image and 1 KiB on a smaller one).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::model::{ResultDoc, TestResult};
use crate::units::fmt_size_exact;

/// Parameters that say where a test ran or what the target is, not how it was measured:
/// two devices compared differ in them by design.
const NOT_SETTINGS: &[&str] = &["targets", "caches", "recommended_size_bytes"];

/// Fields of a matrix configuration that its label (file system, unit asked, mount options)
/// does not already fix.
const CONFIGURATION_FIELDS: &[&str] = &[
    "cluster_bytes_actual",
    "size_bytes",
    "mount_method",
    "mkfs_command",
];

/// One setting recorded differently for a matched test (the values as the files hold them;
/// `not recorded` when one file has no value).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SettingDiff {
    pub setting: String,
    pub baseline: String,
    pub other: String,
}

impl SettingDiff {
    /// `files_per_portion 50 vs 10`, sizes in binary units (`size_bytes 256MiB vs 1GiB`,
    /// `configuration.cluster_bytes_actual 4KiB vs 1KiB`).
    pub fn describe(&self) -> String {
        // Sizes in binary units, times in their unit (`limit_ns 1 ns vs 10.00 ms`, not
        // `1 vs 10000000`).
        let shown = |v: &str| match v.parse::<u64>() {
            Ok(n) if self.setting.contains("_bytes") => fmt_size_exact(n),
            _ if self.setting.ends_with("_ns") => v
                .parse::<f64>()
                .map(crate::units::fmt_ns)
                .unwrap_or_else(|_| v.to_string()),
            _ => v.to_string(),
        };
        format!(
            "{} {} vs {}",
            self.setting,
            shown(&self.baseline),
            shown(&self.other)
        )
    }
}

fn text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn add_object(out: &mut BTreeMap<String, String>, prefix: &str, v: serde_json::Value) {
    if let serde_json::Value::Object(m) = v {
        for (k, v) in m {
            if !v.is_null() {
                out.insert(format!("{prefix}{k}"), text(&v));
            }
        }
    }
}

/// The settings `doc` recorded for test `t` of configuration `config` (`""` outside a
/// matrix): its block settings (`rw`, `iodepth`, `size_bytes`, ...), each job group's
/// (`groups[1].rw`), its parameters (`files_per_portion`, `matrix_workload`, ...; a name
/// the block settings already use gets `params.`) and, in a matrix, how its file system was
/// made (`configuration.cluster_bytes_actual`, `configuration.size_bytes`, ...).
pub fn recorded(doc: &ResultDoc, config: &str, t: &TestResult) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Some(s) = &t.settings {
        add_object(&mut out, "", serde_json::to_value(s).unwrap_or_default());
    }
    for (i, g) in t.groups.iter().enumerate() {
        let v = serde_json::to_value(g).unwrap_or_default();
        add_object(&mut out, &format!("groups[{i}]."), v);
    }
    for (k, v) in t
        .params
        .iter()
        .filter(|(k, _)| !NOT_SETTINGS.contains(&k.as_str()))
    {
        let key = match out.get(k) {
            // The same value under both names (saturate records size_bytes in its settings
            // and its params) was listed twice in a difference.
            Some(same) if same == v => continue,
            Some(_) => format!("params.{k}"),
            None => k.clone(),
        };
        out.insert(key, v.clone());
    }
    if let Some(c) = doc
        .configurations
        .iter()
        .find(|c| !config.is_empty() && c.label == config)
        && let serde_json::Value::Object(m) = serde_json::to_value(c).unwrap_or_default()
    {
        for f in CONFIGURATION_FIELDS {
            if let Some(v) = m.get(*f).filter(|v| !v.is_null()) {
                out.insert(format!("configuration.{f}"), text(v));
            }
        }
    }
    out
}

/// Every setting whose value differs between the two records, in name order.
pub fn differences(
    baseline: &BTreeMap<String, String>,
    other: &BTreeMap<String, String>,
) -> Vec<SettingDiff> {
    let none = "not recorded".to_string();
    let mut keys: Vec<&String> = baseline.keys().chain(other.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter_map(|k| {
            let (a, b) = (baseline.get(k), other.get(k));
            (a != b).then(|| SettingDiff {
                setting: k.clone(),
                baseline: a.unwrap_or(&none).clone(),
                other: b.unwrap_or(&none).clone(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::BlockSettings;
    use crate::model::matrix::ConfigurationResult;

    fn files_test(per_portion: &str) -> TestResult {
        let mut t = TestResult {
            name: "4KiB create".into(),
            family: "files".into(),
            ..Default::default()
        };
        for (k, v) in [
            ("files_per_portion", per_portion),
            ("portions", "5"),
            ("targets", "/mnt/a"),
        ] {
            t.params.insert(k.into(), v.into());
        }
        t
    }

    #[test]
    fn parameters_differ_by_name_and_targets_do_not_count() {
        let doc = ResultDoc::new("files", vec![], Default::default());
        let a = recorded(&doc, "", &files_test("50"));
        let mut tb = files_test("10");
        tb.params.insert("targets".into(), "/mnt/b".into());
        let b = recorded(&doc, "", &tb);
        let d = differences(&a, &b);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].describe(), "files_per_portion 50 vs 10");
        assert!(differences(&a, &a).is_empty());
    }

    /// saturate records size_bytes in its settings and its params: a difference was listed
    /// twice, and its latency limit in bare nanoseconds (`limit_ns 1 vs 10000000`).
    #[test]
    fn a_setting_is_listed_once_and_times_have_units() {
        let sat = |size: u64, limit: &str| {
            let mut t = TestResult {
                name: "randread".into(),
                family: "saturate".into(),
                settings: Some(BlockSettings {
                    size_bytes: size,
                    ..Default::default()
                }),
                ..Default::default()
            };
            t.params.insert("size_bytes".into(), size.to_string());
            t.params.insert("limit_ns".into(), limit.into());
            t
        };
        let doc = ResultDoc::new("saturate", vec![], Default::default());
        let a = recorded(&doc, "", &sat(16 << 20, "1"));
        let b = recorded(&doc, "", &sat(128 << 20, "10000000"));
        let d: Vec<String> = differences(&a, &b).iter().map(|d| d.describe()).collect();
        assert_eq!(
            d,
            ["limit_ns 1 ns vs 10.00 ms", "size_bytes 16MiB vs 128MiB"]
        );
    }

    #[test]
    fn block_settings_groups_and_the_matrix_s_file_system_are_settings() {
        let block = |iodepth: u32, pause: Option<f64>| TestResult {
            name: "RND4K Q1T1 read".into(),
            config: Some("ext4".into()),
            settings: Some(BlockSettings {
                rw: "randread".into(),
                iodepth,
                pause_s: pause,
                ..Default::default()
            }),
            groups: vec![BlockSettings {
                rw: "randwrite".into(),
                ..Default::default()
            }],
            ..Default::default()
        };
        let doc = |unit: u64, size: u64| {
            let mut d = ResultDoc::new("matrix", vec![], Default::default());
            d.configurations.push(ConfigurationResult {
                label: "ext4".into(),
                cluster_bytes_actual: Some(unit),
                size_bytes: Some(size),
                ..Default::default()
            });
            d
        };
        let (da, db) = (doc(4096, 1 << 30), doc(1024, 256 << 20));
        let a = recorded(&da, "ext4", &block(1, None));
        assert_eq!(a["rw"], "randread");
        assert_eq!(a["groups[0].rw"], "randwrite");
        let b = recorded(&db, "ext4", &block(8, Some(2.0)));
        let d: Vec<String> = differences(&a, &b).iter().map(|d| d.describe()).collect();
        assert_eq!(
            d,
            [
                "configuration.cluster_bytes_actual 4KiB vs 1KiB",
                "configuration.size_bytes 1GiB vs 256MiB",
                "iodepth 1 vs 8",
                "pause_s not recorded vs 2.0",
            ]
        );
    }
}

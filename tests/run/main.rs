//! `iolab run` end to end: the real binary on temp dirs (and, as root, loop devices), every
//! engine, the JSON against the documented schema, engine equivalence, bad input. One test
//! binary; a module per capability.

#[path = "../common/mod.rs"]
mod common;

mod accuracy;
mod data;
mod devices;
mod fio_habits;
mod input;
mod mixed;
mod output;
mod series;
mod signals;

pub use std::path::{Path, PathBuf};
pub use std::process::{Command, Output};

pub use common::*;
pub use serde_json::Value;

/// The `key` string of every element of a JSON array (test names, warning codes).
fn strings<'a>(array: &'a Value, key: &str) -> Vec<&'a str> {
    array
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v[key].as_str().unwrap())
        .collect()
}

/// A short run measured by size, not time: 2 MiB of I/O per run (512 I/Os of 4 KiB), so
/// its counts do not depend on how fast the shared disk is today.
const QUICK: &[&str] = &[
    "--io-size",
    "2M",
    "--ramp",
    "0",
    "--size",
    "8M",
    "--json",
    "--no-save",
];

/// Every field docs/results-schema.md promises for a block run.
fn check_schema(doc: &Value) {
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["tool"]["name"], "iolab");
    assert!(doc["tool"]["version"].is_string());
    assert!(doc["argv"].as_array().unwrap().len() > 1);
    assert_eq!(doc["command"], "run");
    assert_eq!(doc["status"], "complete");
    let env = &doc["environment"];
    for k in [
        "kernel",
        "cpu_model",
        "cpu_count",
        "ram_bytes",
        "target_path",
        "fs_type",
        "mount_options",
    ] {
        assert!(!env[k].is_null(), "environment.{k} missing");
    }
    for k in [
        "block_device",
        "logical_block_size",
        "physical_block_size",
        "rotational",
        "cpuidle_driver",
        "cpuidle_governor",
        "guest_halt_poll_ns",
        "transparent_hugepage",
    ] {
        assert!(env.get(k).is_some(), "environment.{k} missing");
    }
    // The vCPU warning comes exactly when the machine halts idle vCPUs at once and a test
    // runs at queue depth 1.
    let halts = env["guest_halt_poll_ns"].as_u64() == Some(0);
    let qd1 = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["settings"]["iodepth"] == 1 && t["settings"]["engine"] != "null");
    let warned = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["code"] == "vcpu-halt");
    assert_eq!(warned, halts && qd1, "vcpu-halt warning");
    assert!(doc["warnings"].is_array());
    let tests = doc["tests"].as_array().unwrap();
    assert!(!tests.is_empty());
    for t in tests {
        assert!(t["name"].is_string());
        let s = &t["settings"];
        for k in [
            "rw",
            "bs_bytes",
            "iodepth",
            "jobs",
            "direct",
            "engine",
            "size_bytes",
            "duration_s",
        ] {
            assert!(!s[k].is_null(), "settings.{k} missing");
        }
        let runs = t["runs"].as_array().unwrap();
        assert!(!runs.is_empty());
        for r in runs {
            assert!(r["iops"].as_f64().unwrap() > 0.0);
            assert!(r["bw_bytes_per_s"].as_f64().unwrap() > 0.0);
            for k in ["mean", "p50", "p90", "p99", "p999", "max"] {
                assert!(!r["lat_ns"][k].is_null(), "lat_ns.{k} missing");
            }
            let l = &r["lat_ns"];
            assert!(l["p50"].as_u64() <= l["p99"].as_u64());
            assert!(l["p99"].as_u64() <= l["max"].as_u64());
            // The series lists whole intervals only: a size-based run shorter than one has
            // none, and the field is left out when empty.
            assert!(
                r.get("intervals")
                    .is_none_or(|v| !v.as_array().unwrap().is_empty())
            );
            assert!(r["avg_queue_depth"].as_f64().unwrap() > 0.0);
            assert!(r["cpu"]["process_pct"].as_f64().is_some());
            // Idle-state entries per I/O exactly where the kernel counts them.
            let entries = r.get("idle_entries_per_io").and_then(|v| v.as_f64());
            assert_eq!(
                entries.is_some(),
                iolab::sysinfo::cpuidle::idle_entries().is_some(),
                "idle_entries_per_io present iff cpuidle counters exist"
            );
            assert!(entries.is_none_or(|e| e >= 0.0 && e.is_finite()));
            // Huge-page buffers asked for exactly when a job's buffers make half a huge page.
            let s = &t["settings"];
            let pool = s["bs_bytes"].as_u64().unwrap()
                * if s["engine"] == "sync" {
                    1
                } else {
                    s["iodepth"].as_u64().unwrap()
                };
            let asked = s["huge_pages"] != false
                && iolab::sysinfo::hugepages::thp_size()
                    .is_some_and(|h| pool.next_multiple_of(4096) >= h as u64 / 2);
            assert_eq!(
                r.get("huge_page_buffers").is_some(),
                asked,
                "huge_page_buffers present iff asked for ({pool} bytes of buffers)"
            );
        }
        for m in ["iops", "bw_bytes_per_s"] {
            for k in [
                "mean",
                "median",
                "stddev",
                "min",
                "max",
                "ci95_low",
                "ci95_high",
            ] {
                assert!(
                    t["summary"][m][k].as_f64().is_some(),
                    "summary.{m}.{k} missing"
                );
            }
        }
    }
}

/// Bad input: exit 2, one clear error line, nothing created in the working dir or target.
fn expect_usage_error(cwd: &Path, args: &[&str], needle: &str) {
    let before = entries(cwd);
    let out = iolab_in(cwd, args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "args {args:?}: expected exit 2, got {}: {stderr}",
        out.status
    );
    assert!(
        stderr.to_lowercase().contains(&needle.to_lowercase()),
        "args {args:?}: stderr lacks '{needle}': {stderr}"
    );
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "args {args:?}: the error should be one line: {stderr}"
    );
    assert!(
        stderr.starts_with("iolab: error: "),
        "args {args:?}: {stderr}"
    );
    assert_eq!(entries(cwd), before, "args {args:?} left something behind");
}

/// A sparse image file of `len` bytes in `dir`, for a loop device.
fn sparse_image(dir: &Path, name: &str, len: u64) -> std::path::PathBuf {
    let img = dir.join(name);
    std::fs::File::create(&img).unwrap().set_len(len).unwrap();
    img
}

/// Detaches a loop device the test attached itself, while it is still bound to the test's
/// image (`common::detach_if_bound_to`).
struct Detach(String, std::path::PathBuf);

impl Drop for Detach {
    fn drop(&mut self) {
        common::detach_if_bound_to(&self.0, &self.1);
    }
}

fn scopeguard(dev: String, image: &Path) -> Detach {
    Detach(dev, std::fs::canonicalize(image).unwrap())
}

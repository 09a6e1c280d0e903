//! The in-place copy of `copy:` workloads on real file systems made by the matrix: within one
//! xfs or btrfs copy_file_range shares extents (reflink), which the result must label and the
//! ranking must leave out (issue #28, item 4). Sizes and labels only, never speed.

mod common;
mod matrix_support;

use iolab::model::ResultDoc;
use matrix_support::*;
use serde_json::Value;

/// File systems this machine can make; a missing one is skipped loudly (a failure when
/// strict).
fn available(test: &str, names: &[&'static str]) -> Vec<&'static str> {
    names
        .iter()
        .copied()
        .filter(
            |n| match iolab::fs::detect::availability(iolab::fs::types::lookup(n).unwrap()) {
                Ok(_) => true,
                Err(why) => {
                    common::skip(test, format_args!("{n} unavailable: {why}"));
                    false
                }
            },
        )
        .collect()
}

fn in_place(doc: &ResultDoc, label: &str) -> Value {
    let c = doc
        .configurations
        .iter()
        .find(|c| c.label == label)
        .unwrap_or_else(|| panic!("no configuration {label}"));
    let t = c
        .tests
        .iter()
        .find(|t| t.params.get("phase").map(String::as_str) == Some("copy"))
        .unwrap_or_else(|| panic!("{label}: no copy test"));
    let r = serde_json::to_value(t.runs.last().unwrap()).unwrap();
    r["copy"]["in_place"].clone()
}

#[test]
fn a_reflinked_copy_is_labelled_and_not_ranked() {
    let test = "a_reflinked_copy_is_labelled_and_not_ranked";
    if !can_run(test) {
        return;
    }
    let fs = available(test, &["ext4", "xfs", "btrfs"]);
    if !fs.iter().any(|f| *f == "xfs" || *f == "btrfs") {
        return;
    }
    let list = fs.join(",");
    let area = Area::new();
    let args = area.args(&[
        "--fs",
        &list,
        "--image-size",
        "320M",
        "--repeat",
        "1",
        "--workload",
        "copy:dataset=media-mix:scale=0.01:repeat=1",
    ]);
    let (doc, stdout) = area.run_zero(&args);
    // One fresh file system each: the warning does not claim that no spread can be given
    // at all (a workload's own repeat= fills the spread column).
    assert!(
        stdout.contains("no spread between fresh file systems can be given"),
        "{stdout}"
    );

    for f in &fs {
        let ip = in_place(&doc, f);
        let data = doc
            .configurations
            .iter()
            .find(|c| c.label == *f)
            .and_then(|c| c.tests.first())
            .and_then(|t| t.copy.as_ref())
            .map(|d| d.data_bytes)
            .unwrap();
        let delta = ip["used_delta_bytes"].as_i64().unwrap();
        let mapped = ip["fiemap_mapped_bytes"].as_u64().unwrap();
        let shared = ip["fiemap_shared_bytes"].as_u64().unwrap();
        assert_eq!(ip["basis"], "fiemap", "{f}: {ip}");
        // Every byte of the set is mapped (no inline data at this scale: the smallest file
        // of media-mix is a JPEG of tens of KB).
        assert!(mapped >= data, "{f}: {ip}, data {data}");
        if *f == "ext4" {
            assert_eq!(ip["method"], "data", "{f}: {ip}");
            assert_eq!(shared, 0, "{f}: {ip}");
            // df cross-check: the copy took at least the data set's size again.
            assert!(delta as u64 >= data, "{f}: {ip}");
        } else {
            assert_eq!(ip["method"], "reflink", "{f}: {ip}");
            assert_eq!(shared, mapped, "{f}: {ip}");
            // df cross-check: a reflink adds metadata only (under 10 % of the data).
            assert!(delta < (data / 10) as i64, "{f}: {ip}, data {data}");
            if let Some(w) = ip["device_written_bytes"].as_u64() {
                assert!(w < data / 10, "{f}: {ip}");
            }
        }
    }

    // The ranking is write and read (RAM to the file system and back); the in-place copy
    // and the delete are shown apart, with how the copy was made.
    let ranking = stdout
        .split("Ranking for copy:")
        .nth(1)
        .and_then(|s| s.split("In-place copy and delete").next())
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        ranking.contains("media-mix write") && ranking.contains("media-mix read"),
        "{ranking}"
    );
    assert!(
        !ranking.contains("media-mix copy") && !ranking.contains("media-mix delete"),
        "{ranking}"
    );
    let apart = stdout
        .split("In-place copy and delete")
        .nth(1)
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(apart.contains("reflink (100 % shared)"), "{apart}");
    assert!(
        apart.contains("delete s") && apart.contains("delete files/s"),
        "{apart}"
    );
    assert!(apart.contains("copy:method=rw copies the bytes"), "{apart}");
}

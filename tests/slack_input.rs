//! `iolab slack` input handling: bad input is exit 2 with a clear line and nothing created;
//! CSV sizes, the FAT32 limit, unreadable entries (counted, not fatal) and the calibration
//! fit from a files-family result.

mod common;
#[path = "slack_support/mod.rs"]
mod support;

use std::process::Command;

use common::{assert_usage, iolab};
use iolab::model::{ResultDoc, Summary, TestResult};
use support::{doc_of, slack_json};

#[test]
fn nonexistent_dir_is_exit_2_and_creates_nothing() {
    let t = tempfile::tempdir().unwrap();
    let out_dir = t.path().join("results");
    let missing = t.path().join("no-such-dir");
    let out = iolab(&[
        "slack",
        missing.to_str().unwrap(),
        "--output",
        out_dir.to_str().unwrap(),
    ]);
    assert_usage(&out, "no-such-dir");
    assert!(!out_dir.exists(), "nothing may be created on bad input");
    let out = iolab(&["slack", t.path().to_str().unwrap(), "--fs", "zfs"]);
    assert_usage(&out, "zfs");
}

#[test]
fn malformed_csv_names_the_line() {
    let t = tempfile::tempdir().unwrap();
    let csv = t.path().join("sizes.csv");
    std::fs::write(&csv, "name,size\na,10\nb,ten\n").unwrap();
    let out = iolab(&["slack", "--no-save", "--sizes-from", csv.to_str().unwrap()]);
    assert_usage(&out, "line 3");
    std::fs::write(&csv, "1\n4096\n4097\n0\n").unwrap();
    let r = slack_json(&["--sizes-from", csv.to_str().unwrap()]);
    let row = r.units.iter().find(|u| u.unit_bytes == 4096).unwrap();
    assert_eq!(row.allocated_bytes, 4 * 4096);
    assert_eq!(row.slack_bytes, 4 * 4096 - 8194);
    assert_eq!(row.files_below_unit_pct, 50.0);
    assert_eq!(r.recommendations.len(), 3);

    // FAT32 cannot store a 5 GiB file: counted, warned, left out, not fatal.
    std::fs::write(&csv, "size\n5G\n100\n").unwrap();
    let out = iolab(&[
        "slack",
        "--no-save",
        "--json",
        "--fs",
        "fat32",
        "--sizes-from",
        csv.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let doc = doc_of(&out);
    assert!(doc.warnings.iter().any(|w| w.code == "too-large-for-fs"));
    let row = &doc.slack.unwrap().units[3];
    assert_eq!(
        (
            row.unit_bytes,
            row.too_large_files,
            row.file_allocated_bytes
        ),
        (4096, 1, 4096)
    );
}

/// A files-family result whose create phase follows spf = a + b x allocated exactly.
fn calibration_doc(sizes: &[u64], unit: u64, a: f64, b: f64) -> ResultDoc {
    let mut doc = ResultDoc::new("files", vec![], Default::default());
    for &size in sizes {
        let mut t = TestResult {
            name: format!("{size} B create"),
            family: "files".into(),
            ..Default::default()
        };
        for (k, v) in [
            ("file_size_bytes", size.to_string()),
            ("alloc_unit_bytes", unit.to_string()),
            ("phase", "create".into()),
        ] {
            t.params.insert(k.into(), v);
        }
        let spf = a + b * (size.div_ceil(unit) * unit) as f64;
        let s = Summary {
            n: 3,
            mean: 1.0 / spf,
            ..Default::default()
        };
        t.summary.insert("files_per_s".into(), s);
        doc.tests.push(t);
    }
    doc.status = "complete".into();
    doc
}

#[test]
fn calibration_fit_and_missing_measurements() {
    let t = tempfile::tempdir().unwrap();
    let tree = t.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    std::fs::write(tree.join("a"), vec![1u8; 10_000]).unwrap();
    let good = t.path().join("files.json");
    let doc = calibration_doc(&[1, 4096, 4097, 65536], 4096, 2e-4, 5e-9);
    std::fs::write(&good, serde_json::to_vec(&doc).unwrap()).unwrap();
    let r = slack_json(&[
        tree.to_str().unwrap(),
        "--calibrate",
        good.to_str().unwrap(),
    ]);
    assert_eq!(r.cost_model.source, "calibrated");
    let c = r.cost_model.unit(4096).unwrap();
    assert!((c.per_byte_s - 5e-9).abs() < 1e-12, "{}", c.per_byte_s);
    assert!((c.per_byte_s_per_portion - 5e-5).abs() < 1e-8);
    assert!(c.r2.unwrap() > 0.9999);
    let row = r.units.iter().find(|u| u.unit_bytes == 4096).unwrap();
    assert!((row.slack_cost_s_per_byte - 5e-9).abs() < 1e-12);
    let want = 2e-4 + 5e-9 * row.allocated_bytes as f64;
    assert!((row.predicted_write_s - want).abs() < 1e-9);

    let bad = t.path().join("one-size.json");
    let doc = calibration_doc(&[1, 4096], 4096, 2e-4, 5e-9);
    std::fs::write(&bad, serde_json::to_vec(&doc).unwrap()).unwrap();
    let out = iolab(&[
        "slack",
        "--no-save",
        tree.to_str().unwrap(),
        "--calibrate",
        bad.to_str().unwrap(),
    ]);
    assert_usage(&out, "at least two file sizes");
    let junk = t.path().join("junk.json");
    std::fs::write(&junk, "{\"hello\": 1}").unwrap();
    let out = iolab(&[
        "slack",
        "--no-save",
        tree.to_str().unwrap(),
        "--calibrate",
        junk.to_str().unwrap(),
    ]);
    assert_usage(&out, "not an iolab result");
}

#[test]
fn fat32_names_files_it_cannot_store() {
    let t = tempfile::tempdir().unwrap();
    let f = std::fs::File::create(t.path().join("big.iso")).unwrap();
    f.set_len(5 << 30).unwrap(); // sparse: costs nothing
    std::fs::write(t.path().join("small"), b"x").unwrap();
    let out = iolab(&[
        "slack",
        "--no-save",
        "--fs",
        "fat32",
        t.path().to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("too-large-for-fs") && text.contains("big.iso"),
        "{text}"
    );
}

/// Unreadable directories are counted and reported, not fatal. Root reads everything, so
/// as root the scan runs as `nobody`.
#[test]
fn unreadable_entries_are_counted_not_fatal() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let t = tempfile::tempdir().unwrap();
    let root = t.path().join("tree");
    std::fs::create_dir_all(root.join("open")).unwrap();
    std::fs::create_dir_all(root.join("locked/inner")).unwrap();
    std::fs::write(root.join("open/a"), b"hello").unwrap();
    std::fs::write(root.join("locked/secret"), b"x").unwrap();
    for p in [t.path(), &root, &root.join("open")] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::set_permissions(root.join("open/a"), std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(root.join("locked"), std::fs::Permissions::from_mode(0o000)).unwrap();
    // As root, the scan runs as nobody, from a copy of the binary that nobody can reach
    // (the checkout may sit under a 0700 directory such as a `mktemp -d`).
    let nobodys = common::binary_for_nobody();
    let mut cmd = if nix::unistd::geteuid().is_root() {
        let mut c = Command::new(&nobodys.path);
        c.uid(65534).gid(65534);
        c
    } else {
        common::bin()
    };
    cmd.args(["slack", "--json", "--no-save", root.to_str().unwrap()]);
    let out = cmd.output().unwrap();
    std::fs::set_permissions(root.join("locked"), std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = doc_of(&out);
    let r = doc.slack.unwrap();
    assert_eq!(r.scan.unreadable, 1);
    assert!(
        r.scan.unreadable_examples[0].contains("locked"),
        "{:?}",
        r.scan.unreadable_examples
    );
    assert_eq!(r.scan.files, 1);
    assert_eq!(r.scan.dirs, 3);
    assert!(doc.warnings.iter().any(|w| w.code == "unreadable-entries"));
}

#[test]
fn result_is_saved_under_output() {
    let t = tempfile::tempdir().unwrap();
    let tree = t.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    std::fs::write(tree.join("a"), vec![7u8; 3000]).unwrap();
    let out_dir = t.path().join("results");
    let out = iolab(&[
        "slack",
        tree.to_str().unwrap(),
        "--output",
        out_dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("best for space"), "{text}");
    let files: Vec<_> = std::fs::read_dir(&out_dir).unwrap().flatten().collect();
    assert_eq!(files.len(), 1);
    let doc = ResultDoc::read(&files[0].path()).unwrap();
    assert_eq!(doc.command, "slack");
    assert_eq!(doc.status, "complete");
    let r = doc.slack.unwrap();
    assert_eq!((r.scan.files, r.scan.dirs, r.scan.data_bytes), (1, 1, 3000));
    assert_eq!(r.units.len(), 13);
    assert_eq!(r.units[0].unit_bytes, 512);
    assert_eq!(r.units[12].unit_bytes, 2 << 20);
}

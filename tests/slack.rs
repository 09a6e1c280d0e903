//! `iolab slack` against real file systems: a deterministic tree is scanned, copied onto
//! scratch ext4 (1 KiB, 4 KiB, bigalloc 16 KiB), xfs (1 KiB, 4 KiB) and ntfs-3g (1 KiB,
//! 4 KiB), and the predicted allocation must match st_blocks and the df delta within 2 %.
//! Also the bad-input paths (exit 2) and the calibration fit. Root-only parts skip loudly.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use iolab::analysis::slack::rules::{FileAlloc, FsRules};
use iolab::fs::scratch::scratch_or_skip;
use iolab::model::slack::{SlackResult, UnitRow};
use iolab::model::{ResultDoc, Summary, TestResult};

fn iolab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(args)
        .output()
        .expect("run iolab")
}

fn slack_json(args: &[&str]) -> SlackResult {
    let mut all = vec!["slack", "--json", "--no-save"];
    all.extend_from_slice(args);
    let out = iolab(&all);
    assert!(
        out.status.success(),
        "iolab {all:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: ResultDoc = serde_json::from_slice(&out.stdout).expect("result JSON");
    doc.slack.expect("slack section")
}

/// Deterministic sizes and names: tiny (incl. empty and around the NTFS/ext4 inline
/// thresholds), small, medium and a few large files in 40 directories.
fn make_tree(root: &Path, files: usize) {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for d in 0..40 {
        std::fs::create_dir_all(root.join(format!("dir{d:02}"))).unwrap();
    }
    let data = vec![0x5Au8; 512 << 10];
    for i in 0..files {
        let r = next();
        let size = match r % 100 {
            0..=2 => 0,
            3..=24 => r as usize % 1000,
            25..=64 => 1000 + (r >> 8) as usize % 15_000,
            65..=94 => 16_000 + (r >> 8) as usize % 80_000,
            _ => 96_000 + (r >> 8) as usize % 300_000,
        };
        let name_len = 4 + (r >> 40) as usize % 36;
        let name: String = format!("f{i:05}{}", "n".repeat(name_len))
            .chars()
            .take(name_len.max(6))
            .collect();
        let path = root.join(format!("dir{:02}", i % 40)).join(name);
        std::fs::write(path, &data[..size]).unwrap();
    }
}

fn copy_tree(src: &Path, dst: &Path) {
    std::fs::create_dir(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &to);
        } else {
            std::fs::write(&to, std::fs::read(e.path()).unwrap()).unwrap();
        }
    }
}

/// (sum of st_blocks x 512 of regular files, the files' (size, name length, blocks)).
fn st_blocks(root: &Path, acc: &mut Vec<(u64, u64, u64)>) -> u64 {
    let mut sum = 0;
    for e in std::fs::read_dir(root).unwrap() {
        let e = e.unwrap();
        let md = std::fs::symlink_metadata(e.path()).unwrap();
        if md.is_dir() {
            sum += st_blocks(&e.path(), acc);
        } else {
            sum += md.blocks() * 512;
            acc.push((md.len(), e.file_name().len() as u64, md.blocks() * 512));
        }
    }
    sum
}

fn bytes_used(mnt: &Path) -> u64 {
    let st = nix::sys::statvfs::statvfs(mnt).unwrap();
    (st.blocks() - st.blocks_free()) as u64 * st.fragment_size() as u64
}

fn within(what: &str, predicted: u64, actual: u64, pct: f64) {
    let diff = (predicted as f64 - actual as f64) / actual as f64 * 100.0;
    eprintln!("  {what}: predicted {predicted}, actual {actual}, {diff:+.2} %");
    assert!(
        diff.abs() <= pct,
        "{what}: predicted {predicted} vs actual {actual} ({diff:+.2} %, limit {pct} %)"
    );
}

/// Scan a generated tree, copy it onto `fs_type` made with `mkfs`, compare at `unit`.
fn validate(test: &str, fs_type: &str, size: u64, mkfs: &[&str], rules_name: &str, unit: u64) {
    validate_with(test, fs_type, size, mkfs, rules_name, unit, true)
}

/// `cluster_st_blocks = false`: the driver reports ceil(size / 512) sectors whatever it
/// allocates (fusefat), so only the df delta can be compared.
fn validate_with(
    test: &str,
    fs_type: &str,
    size: u64,
    mkfs: &[&str],
    rules_name: &str,
    unit: u64,
    cluster_st_blocks: bool,
) {
    let Some(fs) = scratch_or_skip(test, fs_type, size, mkfs, "") else {
        return;
    };
    let src = tempfile::tempdir().unwrap();
    make_tree(src.path(), 1500);
    let r = slack_json(&[src.path().to_str().unwrap(), "--fs", rules_name]);
    let row: &UnitRow = r.units.iter().find(|u| u.unit_bytes == unit).unwrap();
    assert!(row.supported, "{rules_name} at {unit}: {:?}", row.note);

    let mnt = fs.path().to_path_buf();
    nix::unistd::sync();
    let before = bytes_used(&mnt);
    let dst: PathBuf = mnt.join("t");
    copy_tree(src.path(), &dst);
    nix::unistd::sync();
    let after = bytes_used(&mnt);

    let mut files = Vec::new();
    let reported = st_blocks(&dst, &mut files);
    assert_eq!(files.len() as u64, r.scan.files);
    // Resident files report ceil(size / 512) sectors while holding no cluster: add that
    // convention to the prediction, and check each file's side of the threshold.
    let rules = FsRules::parse(rules_name, None, None, None).unwrap();
    let mut resident_report = 0;
    for &(size, name_len, blocks) in &files {
        if !cluster_st_blocks {
            continue;
        }
        if rules.file(size, name_len, unit) == FileAlloc::Resident {
            resident_report += size.div_ceil(512) * 512;
            assert!(
                blocks < unit || unit <= 1024,
                "{size} B resident but {blocks} B"
            );
        } else if size > 0 {
            assert_eq!(
                blocks,
                size.div_ceil(unit) * unit,
                "{size} B, name {name_len}"
            );
        }
    }
    eprintln!(
        "{test}: {} files, {} dirs, unit {unit}, {} resident",
        r.scan.files, r.scan.dirs, row.resident_files
    );
    if cluster_st_blocks {
        within(
            "st_blocks of files",
            row.file_allocated_bytes + resident_report,
            reported,
            2.0,
        );
    }
    within(
        "df delta (files + dirs + metadata)",
        row.allocated_bytes + row.metadata_bytes,
        after - before,
        2.0,
    );
}

#[test]
fn ext4_1k_matches_prediction() {
    validate(
        "ext4_1k_matches_prediction",
        "ext4",
        256 << 20,
        &["-b", "1024"],
        "ext4",
        1024,
    );
}

#[test]
fn ext4_4k_matches_prediction() {
    validate(
        "ext4_4k_matches_prediction",
        "ext4",
        256 << 20,
        &["-b", "4096"],
        "ext4",
        4096,
    );
}

#[test]
fn ext4_bigalloc_matches_prediction() {
    validate(
        "ext4_bigalloc_matches_prediction",
        "ext4",
        256 << 20,
        &["-b", "4096", "-O", "bigalloc", "-C", "16384"],
        "ext4",
        16384,
    );
}

#[test]
fn xfs_1k_matches_prediction() {
    validate(
        "xfs_1k_matches_prediction",
        "xfs",
        320 << 20,
        &["-b", "size=1024"],
        "xfs",
        1024,
    );
}

#[test]
fn xfs_4k_matches_prediction() {
    validate(
        "xfs_4k_matches_prediction",
        "xfs",
        320 << 20,
        &["-b", "size=4096"],
        "xfs",
        4096,
    );
}

#[test]
fn ntfs_1k_matches_prediction() {
    validate(
        "ntfs_1k_matches_prediction",
        "ntfs",
        256 << 20,
        &["-c", "1024"],
        "ntfs-3g",
        1024,
    );
}

#[test]
fn ntfs_4k_matches_prediction() {
    validate(
        "ntfs_4k_matches_prediction",
        "ntfs",
        256 << 20,
        &["-c", "4096"],
        "ntfs-3g",
        4096,
    );
}

#[test]
fn ext4_inline_data_matches_prediction() {
    validate(
        "ext4_inline_data_matches_prediction",
        "ext4",
        256 << 20,
        &["-b", "4096", "-I", "256", "-O", "inline_data"],
        "ext4-inline",
        4096,
    );
}

#[test]
fn exfat_matches_prediction() {
    validate(
        "exfat_matches_prediction",
        "exfat",
        256 << 20,
        &["-c", "4096"],
        "exfat",
        4096,
    );
}

#[test]
fn fat32_matches_prediction() {
    validate_with(
        "fat32_matches_prediction",
        "fat32",
        512 << 20,
        &["-s", "8"],
        "fat32",
        4096,
        false,
    );
}

fn assert_usage(out: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert!(err.contains(needle), "{needle:?} not in: {err}");
}

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
    let doc: ResultDoc = serde_json::from_slice(&out.stdout).unwrap();
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
    let c = r
        .cost_model
        .per_unit
        .iter()
        .find(|c| c.unit_bytes == 4096)
        .unwrap();
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
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_iolab"));
    cmd.args(["slack", "--json", "--no-save", root.to_str().unwrap()]);
    if nix::unistd::geteuid().is_root() {
        cmd.uid(65534).gid(65534);
    }
    let out = cmd.output().unwrap();
    std::fs::set_permissions(root.join("locked"), std::fs::Permissions::from_mode(0o755)).unwrap();
    if !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("ermission") {
        eprintln!(
            "SKIPPED unreadable_entries_are_counted_not_fatal: nobody cannot run the binary: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: ResultDoc = serde_json::from_slice(&out.stdout).unwrap();
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

//! `iolab files` end to end with the real binary: exact files on disk, cleanup (a file that
//! was there survives, symlinks are not followed), bad input (exit 2, nothing created),
//! ENOSPC mid-run (exit 1, partial results saved), the sync syscalls, Ctrl-C.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{bin as iolab, iolab as run, json, names as listing, scratch_or_skip, tool_or_skip};

/// Small, fast counts shared by most tests.
const SMALL: &[&str] = &[
    "--files-per-portion",
    "7",
    "--portions",
    "3",
    "--passes",
    "2",
];

fn files_args<'a>(target: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec!["files", "--target", target];
    v.extend_from_slice(SMALL);
    v.extend_from_slice(extra);
    v
}

fn run_dir_of(target: &Path) -> PathBuf {
    let d: Vec<PathBuf> = std::fs::read_dir(target)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(".iolab-files-")
        })
        .collect();
    assert_eq!(d.len(), 1, "one kept run directory: {d:?}");
    d[0].clone()
}

/// Every regular file under `dir` with its size (no symlinks followed).
fn walk(dir: &Path, out: &mut Vec<(PathBuf, u64)>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let md = std::fs::symlink_metadata(e.path()).unwrap();
        if md.is_dir() {
            walk(&e.path(), out);
        } else {
            out.push((e.path(), md.len()));
        }
    }
}

#[test]
fn created_files_are_exact_on_disk() {
    for (method, layout) in [
        ("write", "per-portion"),
        ("sendfile", "flat"),
        ("copy_file_range", "per-pass"),
    ] {
        let t = tempfile::tempdir().unwrap();
        let target = t.path().to_str().unwrap();
        let out = run(&files_args(
            target,
            &[
                "--sizes",
                "0,1,cluster+1,4K",
                "--phases",
                "create,stat,read",
                "--keep-files",
                "--repeat",
                "1",
                "--method",
                method,
                "--layout",
                layout,
                "--no-save",
                "--json",
            ],
        ));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc = json(&out);
        let tests = doc["tests"].as_array().unwrap();
        let unit: u64 = tests[0]["params"]["alloc_unit_bytes"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!(unit >= 512);
        assert_eq!(tests.len(), 12, "4 sizes x create, stat, read");
        assert_eq!(
            tests[6]["name"],
            format!("cluster+1 ({} B) create", unit + 1)
        );
        for t in tests {
            assert_eq!(t["family"], "files");
            assert_eq!(t["runs"][0]["ops"], 42);
            assert_eq!(
                t["runs"][0]["files"]["portion_ns"]
                    .as_array()
                    .unwrap()
                    .len(),
                6
            );
            assert!(
                t["summary"]["seconds_per_portion"]["mean"]
                    .as_f64()
                    .unwrap()
                    > 0.0
            );
        }
        let root = run_dir_of(t.path());
        let mut files = Vec::new();
        walk(&root, &mut files);
        files.retain(|(p, _)| !p.file_name().unwrap().to_string_lossy().starts_with('.'));
        for (i, want) in [0u64, 1, unit + 1, 4096].iter().enumerate() {
            let prefix = root.join(format!("s{i:02}-r001"));
            let mine: Vec<&(PathBuf, u64)> = files
                .iter()
                .filter(|(p, _)| p.starts_with(&prefix))
                .collect();
            assert_eq!(mine.len(), 42, "{method}: files of size {want}");
            assert!(
                mine.iter().all(|(_, len)| len == want),
                "{method}: sizes of {want}"
            );
        }
        // Every file is a copy of the same reference.
        let big: Vec<&(PathBuf, u64)> = files.iter().filter(|(_, l)| *l == 4096).collect();
        let a = std::fs::read(&big[0].0).unwrap();
        assert!(
            big.iter().all(|(p, _)| std::fs::read(p).unwrap() == a),
            "{method}"
        );
        assert!(a.iter().any(|&b| b != 0), "reference data is not zeros");
        std::fs::remove_dir_all(root).unwrap();
    }
}

#[test]
fn cleanup_leaves_the_target_as_it_was() {
    let t = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("precious"), b"keep me").unwrap();
    std::fs::write(t.path().join("pre-existing"), b"was here").unwrap();
    std::os::unix::fs::symlink(outside.path(), t.path().join("link")).unwrap();
    let before = listing(t.path());
    let target = t.path().to_str().unwrap();
    for phases in ["create,stat,read,delete", "create,read"] {
        let out = run(&files_args(
            target,
            &[
                "--sizes",
                "1,cluster",
                "--phases",
                phases,
                "--repeat",
                "2",
                "--big",
                "1M",
                "--no-save",
            ],
        ));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let table = String::from_utf8_lossy(&out.stdout);
        assert!(
            table.contains("1 B") && table.contains("1MiB big"),
            "{table}"
        );
        assert_eq!(listing(t.path()), before, "{phases}");
    }
    assert_eq!(
        std::fs::read(t.path().join("pre-existing")).unwrap(),
        b"was here"
    );
    assert_eq!(listing(outside.path()), vec!["precious".to_string()]);
}

#[test]
fn result_file_holds_table2_data_and_scaling() {
    let t = tempfile::tempdir().unwrap();
    let o = tempfile::tempdir().unwrap();
    let out_dir = o.path().join("results");
    let out = run(&files_args(
        t.path().to_str().unwrap(),
        &[
            "--sizes",
            "512",
            "--repeat",
            "3",
            "--output",
            out_dir.to_str().unwrap(),
        ],
    ));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    // Belov's cell: mean (run1, run2, run3).
    let re = regex::Regex::new(r"\d+\.\d{3,} \(\d+\.\d{3,}, \d+\.\d{3,}, \d+\.\d{3,}\)").unwrap();
    assert!(re.is_match(&table), "{table}");
    assert!(table.contains("files in one directory"), "{table}");
    // The rates and Belov's seconds are averaged differently, and the table says how.
    assert!(
        table.contains("files/s and MB/s: mean of the runs' rates; seconds per portion: mean of the runs' times"),
        "{table}"
    );
    let file = std::fs::read_dir(&out_dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let doc = iolab::model::ResultDoc::read(&file).unwrap();
    assert_eq!(doc.command, "files");
    assert_eq!(doc.status, "complete");
    let create = &doc.tests[0];
    assert_eq!(create.name, "512 B create");
    for k in ["files_per_s", "bw_bytes_per_s", "seconds_per_portion"] {
        assert_eq!(create.summary[k].n, 3, "{k}");
    }
    let scaling = create.files.as_ref().unwrap().scaling.as_ref().unwrap();
    assert_eq!(scaling.curve.len(), 6);
    assert_eq!(scaling.curve[5].files_before, 35);
    assert_eq!(create.params["phase"], "create");
    assert_eq!(create.params["size_token"], "512");
    assert_eq!(create.params["file_size_bytes"], "512");
}

#[test]
fn bad_input_is_exit_2_and_creates_nothing() {
    let t = tempfile::tempdir().unwrap();
    let o = tempfile::tempdir().unwrap();
    let out_dir = o.path().join("never");
    let target = t.path().to_str().unwrap();
    std::fs::write(t.path().join("a-file"), b"x").unwrap();
    let file_target = t.path().join("a-file");
    let missing = t.path().join("missing");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--target", missing.to_str().unwrap()],
            "does not exist",
        ),
        (
            vec!["--target", file_target.to_str().unwrap()],
            "not a directory",
        ),
        (vec!["--target", target, "--sizes", "1,4Q"], "--sizes"),
        (vec!["--target", target, "--sizes", "clusterx"], "--sizes"),
        (
            vec!["--target", target, "--files-per-portion", "0"],
            "--files-per-portion 0",
        ),
        (vec!["--target", target, "--portions", "0"], "--portions 0"),
        (vec!["--target", target, "--passes", "0"], "--passes 0"),
        (vec!["--target", target, "--repeat", "0"], "--repeat 0"),
        // Negative values reach the flags' own checks, not "unexpected argument '-1'".
        (vec!["--target", target, "--repeat", "-1"], "--repeat '-1'"),
        (vec!["--target", target, "--sizes", "-1"], "--sizes: '-1'"),
        (
            vec!["--target", target, "--jobs", "-3"],
            "invalid value '-3' for '--jobs",
        ),
        (vec!["--target", target, "--phases", "stat"], "create"),
        (
            vec!["--target", target, "--phases", "create,create"],
            "'create' is listed twice",
        ),
        (vec!["--target", target, "--keep"], "--keep keeps the files"),
        // Measured one size and said nothing.
        (
            vec!["--target", target, "--sizes", "1,1"],
            "--sizes: '1' is listed twice",
        ),
        (
            vec!["--target", target, "--sizes", "4K,4096"],
            "'4096' is 4096 B, as '4K' before it",
        ),
        (vec!["--target", target, "--cpu", "100000"], "--cpu"),
        (
            vec![
                "--target",
                target,
                "--files-per-portion",
                "10000000",
                "--portions",
                "100",
            ],
            "room",
        ),
        // A size near 16 EiB times the file count: "not enough room", not an overflow panic.
        (
            vec!["--target", target, "--sizes", "18446744073709551615"],
            "not enough room",
        ),
    ];
    for (args, msg) in cases {
        let mut v = vec!["files"];
        v.extend(args.iter().copied());
        v.extend(["--output", out_dir.to_str().unwrap()]);
        let out = run(&v);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{v:?}: {err}");
        assert!(err.contains(msg), "{v:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert_eq!(listing(t.path()), vec!["a-file".to_string()], "{v:?}");
        assert!(!out_dir.exists(), "{v:?} created the output directory");
    }
}

/// `iolab files` on `target` with one file in one portion, one pass, one run, nothing saved.
fn one_file(target: &str) -> Vec<&str> {
    vec![
        "files",
        "--target",
        target,
        "--files-per-portion",
        "1",
        "--portions",
        "1",
        "--passes",
        "1",
        "--repeat",
        "1",
        "--no-save",
    ]
}

/// One empty file in one portion: no MB/s for no data ("0.00"), no spread of one portion
/// ("0.0"), no "no slowdown up to 1 files".
#[test]
fn one_empty_file_in_one_portion_is_said_as_it_is() {
    let t = tempfile::tempdir().unwrap();
    let target = t.path().to_str().unwrap();
    let mut args = one_file(target);
    args.extend(["--sizes", "0"]);
    let o = run(&args);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let create = out
        .lines()
        .find(|l| l.contains(" 0 B create "))
        .unwrap_or_else(|| panic!("{out}"));
    let cells: Vec<&str> = create.split(['│', '┆']).map(str::trim).collect();
    // test, files/s, MB/s, files/s with sync, portion CV %
    assert_eq!((cells[3], cells[5]), ("-", "-"), "{create}");
    assert!(!out.contains("up to 1 files"), "{out}");
    assert!(
        out.contains("1 portion of 1 file: too few to look for a slowdown"),
        "{out}"
    );
    args.push("--json");
    let doc = json(&run(&args));
    let runs = &doc["tests"][0]["runs"][0];
    assert!(runs["bw_bytes_per_s"].is_null(), "{runs}");
    assert_eq!(runs["files_per_s"].as_f64().map(|v| v > 0.0), Some(true));
}

/// A unit token that comes to a listed size is measured once and said (`--sizes 1,1` was
/// one size and no word; a plain size listed twice is now refused).
#[test]
fn sizes_met_through_the_unit_are_measured_once_and_said() {
    let t = tempfile::tempdir().unwrap();
    let target = t.path().to_str().unwrap();
    // `cluster+0` is `cluster` on every file system.
    let mut args = one_file(target);
    args.extend(["--sizes", "1,cluster,cluster+0", "--json"]);
    let doc = json(&run(&args));
    let creates = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["name"].as_str().unwrap().ends_with(" create"))
        .count();
    assert_eq!(creates, 2, "{}", doc["tests"]);
    let merged: Vec<&str> = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["code"] == "sizes-merged")
        .map(|w| w["message"].as_str().unwrap())
        .collect();
    assert_eq!(merged.len(), 1, "{}", doc["warnings"]);
    assert!(
        merged[0].starts_with("--sizes: 'cluster+0' came to ")
            && merged[0]
                .contains(" on this file system, as 'cluster': measured once, as cluster ("),
        "{}",
        merged[0]
    );
}

#[test]
fn no_room_and_no_inodes_refused_before_start() {
    let Some(fs) = scratch_or_skip(
        "no_room_and_no_inodes_refused_before_start",
        "tmpfs",
        4 << 20,
        &[],
        "nr_inodes=200",
    ) else {
        return;
    };
    let target = fs.path().to_str().unwrap();
    let small = |size: &'static str| {
        run(&[
            "files",
            "--target",
            target,
            "--sizes",
            size,
            "--files-per-portion",
            "100",
            "--portions",
            "3",
            "--passes",
            "1",
            "--no-save",
        ])
    };
    let out = small("64K");
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("not enough room"));
    let out = small("0");
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("free inodes"));
    assert!(listing(fs.path()).is_empty());
}

#[test]
fn enospc_mid_run_stops_cleans_and_saves_partial_results() {
    let Some(fs) = scratch_or_skip(
        "enospc_mid_run_stops_cleans_and_saves_partial_results",
        "ext4",
        16 << 20,
        &["-b", "4096", "-m", "0"],
        "",
    ) else {
        return;
    };
    let before = listing(fs.path());
    let o = tempfile::tempdir().unwrap();
    let target = fs.path().to_str().unwrap();
    let out = run(&[
        "files",
        "--target",
        target,
        "--sizes",
        "64K",
        "--files-per-portion",
        "20",
        "--portions",
        "40",
        "--passes",
        "1",
        "--repeat",
        "1",
        "--no-room-check",
        "--output",
        o.path().to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("no room left"), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert_eq!(listing(fs.path()), before, "cleaned up");
    let file = std::fs::read_dir(o.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let doc = iolab::model::ResultDoc::read(&file).unwrap();
    assert_eq!(doc.status, "failed");
    let create = &doc.tests[0];
    assert!(
        create
            .error
            .as_deref()
            .unwrap()
            .contains("file system full")
    );
    let portions = &create.runs[0].files.as_ref().unwrap().portion_ns;
    assert!(
        !portions.is_empty() && portions.len() < 40,
        "{} portions",
        portions.len()
    );
    assert_eq!(create.runs[0].ops, portions.len() as u64 * 20);
}

/// Count syscalls with `strace -f -c`; `None` when strace is missing.
fn strace_counts(args: &[&str]) -> Option<(u64, u64, serde_json::Value)> {
    if !tool_or_skip("sync_modes_issue_their_syscalls", "strace", "strace") {
        return None;
    }
    let log = tempfile::NamedTempFile::new().unwrap();
    let out = Command::new("strace")
        .args(["-f", "-c", "-e", "trace=fsync,syncfs", "-o"])
        .arg(log.path())
        .arg(env!("CARGO_BIN_EXE_iolab"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(log.path()).unwrap();
    let count = |name: &str| -> u64 {
        text.lines()
            .filter(|l| l.split_whitespace().last() == Some(name))
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                f.get(3).and_then(|c| c.parse::<u64>().ok())
            })
            .sum()
    };
    Some((count("fsync"), count("syncfs"), json(&out)))
}

#[test]
fn sync_modes_issue_their_syscalls() {
    let t = tempfile::tempdir().unwrap();
    let target = t.path().to_str().unwrap();
    // 7 x 3 x 2 = 42 files per run, 6 portions per run, 2 runs.
    for (mode, fsyncs, syncfs) in [
        ("none", 0, 0),
        ("file", 84, 0),
        ("portion", 0, 12),
        ("end", 0, 2),
    ] {
        let args = files_args(
            target,
            &[
                "--sizes",
                "1",
                "--sync",
                mode,
                "--repeat",
                "2",
                "--phases",
                "create",
                "--no-save",
                "--json",
            ],
        );
        let Some((f, s, doc)) = strace_counts(&args) else {
            return;
        };
        assert_eq!((f, s), (fsyncs, syncfs), "--sync {mode} (strace)");
        let runs = doc["tests"][0]["runs"].as_array().unwrap();
        let sum = |k: &str| {
            runs.iter()
                .map(|r| r["files"][k].as_u64().unwrap())
                .sum::<u64>()
        };
        assert_eq!(
            (sum("fsync_calls"), sum("syncfs_calls")),
            (fsyncs, syncfs),
            "--sync {mode} (JSON)"
        );
        if mode != "none" {
            assert!(
                runs.iter().all(|r| r["fsync_ns"].as_u64().unwrap() > 0),
                "{mode}: sync time reported"
            );
        }
        // A rate "with sync" only where a sync ran.
        assert!(
            runs.iter()
                .all(|r| r["files"]["files_per_s_with_sync"].is_null() == (mode == "none")),
            "--sync {mode}: files_per_s_with_sync"
        );
    }
    assert!(listing(t.path()).is_empty());
}

#[test]
fn ctrl_c_stops_and_cleans_up() {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("pre-existing"), b"x").unwrap();
    let child = iolab()
        .args([
            "files",
            "--target",
            t.path().to_str().unwrap(),
            "--sizes",
            "0",
            "--files-per-portion",
            "2000000",
            "--portions",
            "1",
            "--passes",
            "1",
            "--no-room-check",
            "--no-save",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the run directory exists (the run has started), then interrupt. Two million
    // files take far longer than the wait; the limit only bounds a run that never starts.
    // Until the work directory holds the run's directory: then its removal has work to do.
    for _ in 0..4800 {
        if std::fs::read_dir(t.path()).unwrap().flatten().any(|e| {
            e.file_name() != "pre-existing"
                && std::fs::read_dir(e.path()).is_ok_and(|mut d| d.next().is_some())
        }) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    // The removal of what the stopped run made is said (it took 26 s in silence).
    assert!(
        err.contains("iolab: removing the files test's work directory ..."),
        "{err}"
    );
    assert_eq!(listing(t.path()), vec!["pre-existing".to_string()]);
}

#[test]
fn matrix_reference_runs_on_a_directory() {
    let r = iolab::workload::WorkloadRef::parse(
        "files:sizes=1,4K:files-per-portion=5:portions=2:passes=1:repeat=1",
    )
    .unwrap();
    let w = iolab::commands::resolve(&r).unwrap();
    let t = tempfile::tempdir().unwrap();
    let ctx = iolab::runner::RunContext::new(iolab::runner::ProgressMode::Quiet);
    let out = w.run_on(t.path(), &ctx).unwrap();
    assert_eq!(out.tests.len(), 8);
    assert!(
        out.tests
            .iter()
            .all(|t| t.family == "files" && t.runs[0].ops == 10)
    );
    assert!(listing(t.path()).is_empty());
}

/// The matrix hands the files workload the unit it read back after mkfs: fusefat reports
/// 1 KiB statvfs blocks whatever the cluster, so on a 4 KiB-cluster FAT32 `cluster+1` was
/// 1025 B and the space prediction used 1 KiB clusters.
#[test]
fn matrix_unit_read_back_overrides_statvfs() {
    let r = iolab::workload::WorkloadRef::parse(
        "files:sizes=cluster+1:files-per-portion=3:portions=1:passes=1:repeat=1",
    )
    .unwrap();
    let w = iolab::commands::resolve(&r).unwrap();
    let t = tempfile::tempdir().unwrap();
    let ctx = iolab::runner::RunContext::new(iolab::runner::ProgressMode::Quiet);
    let out = w.run_on_unit(t.path(), Some(32768), &ctx).unwrap();
    let create = out
        .tests
        .iter()
        .find(|t| t.params.get("phase").map(String::as_str) == Some("create"))
        .unwrap();
    assert_eq!(
        create.params["file_size_bytes"], "32769",
        "{:?}",
        create.name
    );
    assert_eq!(create.params["alloc_unit_bytes"], "32768");
    assert!(listing(t.path()).is_empty());
}

#[test]
fn bigalloc_cluster_is_the_allocation_unit() {
    let Some(fs) = scratch_or_skip(
        "bigalloc_cluster_is_the_allocation_unit",
        "ext4",
        64 << 20,
        &["-b", "4096", "-O", "bigalloc", "-C", "65536"],
        "",
    ) else {
        return;
    };
    let out = run(&[
        "files",
        "--target",
        fs.path().to_str().unwrap(),
        "--sizes",
        "cluster+1",
        "--files-per-portion",
        "3",
        "--portions",
        "2",
        "--passes",
        "1",
        "--repeat",
        "1",
        "--phases",
        "create,stat",
        "--no-save",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = json(&out);
    assert_eq!(doc["tests"][0]["params"]["alloc_unit_bytes"], "65536");
    assert_eq!(doc["tests"][0]["params"]["file_size_bytes"], "65537");
    assert_eq!(
        doc["tests"][1]["runs"][0]["ops"], 6,
        "stat verified 6 files of 65537 B"
    );
}

#[test]
fn read_only_target_is_refused() {
    let Some(fs) = scratch_or_skip("read_only_target_is_refused", "tmpfs", 4 << 20, &[], "ro")
    else {
        return;
    };
    let out = run(&[
        "files",
        "--target",
        fs.path().to_str().unwrap(),
        "--no-save",
    ]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("read-only"));
}

/// `iolab files` with two writers on `dir`: `per_portion` files x `portions`, one pass, one
/// size of 1 byte, `repeat` runs, not saved; `extra` flags before them.
fn two_writers(
    dir: &std::path::Path,
    extra: &[&str],
    per_portion: &str,
    portions: &str,
    repeat: &str,
) -> std::process::Output {
    let mut args = vec!["files", "-t", common::s(dir), "--jobs", "2"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&[
        "--sizes",
        "1",
        "--files-per-portion",
        per_portion,
        "--portions",
        portions,
        "--passes",
        "1",
        "--repeat",
        repeat,
        "--no-save",
    ]);
    common::iolab(&args)
}

#[test]
fn jobs_run_writers_together_and_add_them_up() {
    let test = "jobs_run_writers_together_and_add_them_up";
    let Some(d) = common::ram_tempdir_or_skip(test) else {
        return;
    };
    let out = two_writers(d.path(), &["--json"], "500", "4", "2");
    let doc = common::json_ok(&out);
    let tests = doc["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 4, "create, stat, read, delete");
    let created: Vec<u64> = tests[0]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["ops"].as_u64().unwrap())
        .collect();
    for t in tests {
        assert_eq!(t["params"]["jobs"], "2");
        let runs = t["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2, "{}", t["name"]);
        for (i, r) in runs.iter().enumerate() {
            let dist = &r["dist"];
            assert_eq!(dist["ranks"], 2);
            assert_eq!(dist["windows"].as_array().unwrap().len(), 2);
            // Whole portions. Create: at least the first writer's 2,000 files (it finished),
            // at most both writers' 4,000 (the stonewall stops the other after its
            // portion). The later phases work on the files each writer made, and stop when
            // the first writer is through its own.
            let ops = r["ops"].as_u64().unwrap();
            let range = if t["name"] == "1 B create" {
                2000..=4000
            } else {
                500..=created[i]
            };
            assert!(range.contains(&ops), "{}: {ops} files", t["name"]);
            assert_eq!(ops % 500, 0, "whole portions");
            assert!(r["files_per_s"].as_f64().unwrap() > 0.0);
        }
    }
    assert!(common::entries(d.path()).is_empty(), "nothing left");
    let text = common::stdout(&two_writers(d.path(), &[], "100", "2", "1"));
    assert!(
        text.contains("2 writers each in its own directory, spread between them"),
        "{text}"
    );
    common::assert_usage(
        &common::iolab(&["files", "-t", common::s(d.path()), "--jobs", "0"]),
        "--jobs 0",
    );
    common::assert_usage(
        &common::iolab(&[
            "files",
            "-t",
            common::s(d.path()),
            "--jobs",
            "2",
            "--big",
            "1M",
        ]),
        "--big",
    );
}

/// `--jobs` had no device check and no device figures: the writers' counters (each sees all
/// of them) were dropped with their own runs, so a program writing beside them went
/// unnoticed. On a device the writers' create total carries the device's counters and the
/// group's write amplification (its written bytes over all the writers' files), and df's
/// growth around all their files, the checks a single writer gets (ext4 on a loop device
/// this test made; nothing else writes to it).
/// The room check counts every writer's files and says so.
#[test]
fn jobs_on_a_device_carry_its_counters_and_the_room_of_all_writers() {
    let test = "jobs_on_a_device_carry_its_counters_and_the_room_of_all_writers";
    let Some(fs) = scratch_or_skip(
        test,
        "ext4",
        64 << 20,
        &["-E", "lazy_itable_init=0,lazy_journal_init=0"],
        "",
    ) else {
        return;
    };
    let out = two_writers(
        fs.path(),
        &["--json", "--phases", "create"],
        "500",
        "4",
        "1",
    );
    let doc = common::json_ok(&out);
    let run = &doc["tests"][0]["runs"][0];
    let written = run["device"]["write_bytes"].as_f64();
    let written = written.unwrap_or_else(|| panic!("no device counters in {run}"));
    let bytes = run["bytes"].as_f64().unwrap();
    assert!(bytes >= 2000.0, "{run}");
    let wa = run["write_amplification"].as_f64();
    let wa = wa.unwrap_or_else(|| panic!("no write amplification in {run}"));
    assert!(
        (wa - written / bytes).abs() < 1e-6 * wa,
        "{wa} vs {written} / {bytes}"
    );
    // df around all the writers' files: they take at least their data.
    let space = &run["files"]["space"];
    let grew = space["used_delta_bytes"].as_f64();
    let grew = grew.unwrap_or_else(|| panic!("no df growth in {run}"));
    assert!(grew >= bytes && space["other_writers"] != true, "{space}");
    let warnings = doc["warnings"].as_array().unwrap();
    assert!(
        !warnings.iter().any(|w| w["code"] == "other-writers"),
        "{warnings:?}"
    );
    assert!(
        common::entries(fs.path())
            .iter()
            .all(|p| p.ends_with("lost+found"))
    );
    // 4 writers' 500 files of 4 KiB do not fit where one's do.
    let Some(small) = scratch_or_skip(test, "tmpfs", 4 << 20, &[], "") else {
        return;
    };
    let args = |jobs: &'static str| {
        let mut a = vec!["files", "-t", common::s(small.path()), "--jobs", jobs];
        a.extend([
            "--sizes",
            "4K",
            "--files-per-portion",
            "250",
            "--portions",
            "2",
        ]);
        a.extend(["--passes", "1", "--repeat", "1", "--no-save"]);
        common::iolab(&a)
    };
    common::assert_usage(&args("4"), "(4 x 500 files of up to 4KiB in 4KiB units)");
    assert!(common::entries(small.path()).is_empty(), "nothing created");
    let one = args("1");
    assert!(one.status.success(), "{}", common::stderr(&one));
}

/// N of a directory-scaling line "no slowdown of 10 % or more up to N files in …".
fn up_to_files(line: &str) -> Option<u64> {
    line.split_once("up to ")
        .and_then(|(_, r)| r.split_once(" files"))
        .and_then(|(n, _)| n.replace(',', "").parse().ok())
}

#[test]
fn shared_dir_writers_share_the_directories() {
    let test = "shared_dir_writers_share_the_directories";
    let Some(d) = common::ram_tempdir_or_skip(test) else {
        return;
    };
    // Every layout: flat (one directory for both writers) and per-portion (directories
    // made and removed by whichever writer comes first and last).
    for layout in ["flat", "per-portion"] {
        let flags = ["--shared-dir", "--layout", layout, "--json"];
        let out = two_writers(d.path(), &flags, "300", "3", "2");
        let doc = common::json_ok(&out);
        let tests = doc["tests"].as_array().unwrap();
        assert_eq!(tests.len(), 4, "create, stat, read, delete");
        for t in tests {
            assert_eq!(t["params"]["jobs"], "2");
            assert_eq!(t["params"]["job_dirs"], "shared");
            for r in t["runs"].as_array().unwrap() {
                assert_eq!(r["dist"]["ranks"], 2);
                let ops = r["ops"].as_u64().unwrap();
                // Whole portions, at least the first writer's 900, at most both writers'.
                assert!((300..=1800).contains(&ops), "{layout} {}: {ops}", t["name"]);
                assert_eq!(ops % 300, 0);
            }
        }
        let created = tests[0]["runs"][0]["ops"].as_u64().unwrap();
        assert!(created >= 900, "{layout}: {created} created");
        assert!(
            common::entries(d.path()).is_empty(),
            "{layout}: nothing left"
        );
    }
    let text = common::stdout(&two_writers(d.path(), &["--shared-dir"], "100", "2", "1"));
    assert!(
        text.contains("2 writers in shared directories, spread"),
        "{text}"
    );
    // The directory-scaling line counts both writers' files in the one directory they
    // share (400), not the first writer's 200; with its own directory each, its own 200.
    let shared = ["--shared-dir", "--layout", "flat"];
    // Four portions: fewer are too few to look for a slowdown (and say so).
    let text = common::stdout(&two_writers(d.path(), &shared, "50", "4", "1"));
    // Whole portions of both writers: 400 when neither was stopped by the stonewall (the
    // first to finish stops the other: on a busy machine one may start late and finish
    // fewer portions, down to the first writer's 200).
    let line = text
        .lines()
        .find(|l| l.contains("files in one directory"))
        .unwrap_or_else(|| panic!("no directory-scaling line: {text}"));
    assert!(line.ends_with("(all 2 writers' files)"), "{text}");
    // A busy machine may show a slowdown instead ("slower by N % after M files"): the
    // count is then where it began, not the total.
    if let Some(files) = up_to_files(line) {
        let stonewalled = !text
            .lines()
            .find(|l| l.starts_with("1 B create: 2 writers"))
            .unwrap_or("")
            .contains(" 0 writer-phases stopped by the stonewall");
        if stonewalled {
            assert!((200..=400).contains(&files) && files % 100 == 0, "{text}");
        } else {
            assert_eq!(files, 400, "{text}");
        }
    }
    let text = common::stdout(&two_writers(
        d.path(),
        &["--layout", "flat"],
        "50",
        "4",
        "1",
    ));
    let line = text
        .lines()
        .find(|l| l.contains("files in one directory"))
        .unwrap_or_else(|| panic!("no directory-scaling line: {text}"));
    assert!(!line.contains("writers' files"), "{text}");
    if let Some(files) = up_to_files(line) {
        assert_eq!(files, 200, "{text}");
    }
    common::assert_usage(
        &common::iolab(&["files", "-t", common::s(d.path()), "--shared-dir"]),
        "--shared-dir",
    );
    assert!(common::entries(d.path()).is_empty(), "nothing created");
}

/// The measuring thread that shares its CPU with a busy program waits for it, and every
/// portion's time includes the wait: `cpu-contention` says so for the phase's test, with the
/// figure in `files.cpu_wait_pct` (iolab and a spinning thread pinned to one CPU; 6,000
/// one-byte files on tmpfs). Only its presence is asserted.
#[test]
fn a_measuring_thread_sharing_its_cpu_with_a_busy_program_is_warned_of() {
    let test = "a_measuring_thread_sharing_its_cpu_with_a_busy_program_is_warned_of";
    let Some(t) = common::ram_tempdir_or_skip(test) else {
        return;
    };
    let mut cmd = iolab();
    cmd.args([
        "files",
        "--target",
        t.path().to_str().unwrap(),
        "--sizes",
        "1",
        "--files-per-portion",
        "1000",
        "--portions",
        "6",
        "--passes",
        "1",
        "--phases",
        "create",
        "--repeat",
        "1",
        "--no-save",
        "--json",
    ]);
    let at = Some("/runs/0/files/cpu_wait_pct");
    let who = "the measuring thread";
    let Some(msg) = common::contention_beside_a_spinner(test, &mut cmd, at, who) else {
        return;
    };
    assert!(msg.contains("pinning with --cpu does not help"), "{msg}");
}

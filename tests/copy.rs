//! `iolab copy` end to end: deterministic data sets, every phase on a temp dir, `--verify`
//! catching a file changed behind iolab's back, a user's `--source` left untouched, bad
//! input refused before anything is written, FAT32's 4 GiB limit named, cleanup on Ctrl-C.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::{json, names as entries, s, scratch_or_skip, stderr, tool_or_skip};

use iolab::cli::copy::HashKind;
use iolab::runner::StopFlag;
use iolab::workload::copy::dataset::{generate, plan};
use iolab::workload::copy::verify::hash_tree;

/// `iolab copy ARGS`.
fn copy(args: &[&str]) -> Output {
    let mut all = vec!["copy"];
    all.extend_from_slice(args);
    common::iolab(&all)
}

#[test]
fn datasets_are_deterministic_with_documented_counts() {
    let d = tempfile::tempdir().unwrap();
    let stop = StopFlag::new();
    let mut hashes = Vec::new();
    for (i, seed) in [(0, 9u64), (1, 9), (2, 10)] {
        let p = plan("media-mix", seed, 0.002).unwrap();
        // The media mix, scaled: 100 MP3, 880 JPEG, 4 MP4, 1 ISO -> at least one of each.
        assert_eq!(p.files.len(), 1 + 2 + 1 + 1);
        assert_eq!(p.data_bytes(), 1_362_000 + 538_000 + 986_000 + 1_166_000);
        let root = d.path().join(format!("g{i}"));
        std::fs::create_dir(&root).unwrap();
        generate(&p, &root, seed, &stop, &mut |_| {}).unwrap();
        let h = hash_tree(&root, HashKind::Blake3, &stop).unwrap();
        assert_eq!(h.len(), p.files.len());
        for f in &p.files {
            assert_eq!(std::fs::metadata(root.join(&f.rel)).unwrap().len(), f.size);
        }
        hashes.push(h);
    }
    assert_eq!(hashes[0], hashes[1], "same seed, same bytes");
    assert_ne!(hashes[0], hashes[2], "another seed, other bytes");
    // Distinct content per file (no two files alike: dedup cannot cheat).
    let distinct: std::collections::HashSet<_> = hashes[0].values().collect();
    assert_eq!(distinct.len(), hashes[0].len());

    let tree = plan("source-tree", 1, 0.01).unwrap();
    let files = tree.files.len();
    assert!(
        (800..1_000).contains(&files),
        "source-tree at 0.01: {files} files"
    );
    assert!(tree.dirs.len() > 100, "{} dirs", tree.dirs.len());
    for name in [
        "flac-album",
        "cd-iso",
        "big-video",
        "photo-album",
        "office-docs",
    ] {
        let p = plan(name, 1, 0.001).unwrap();
        assert!(!p.files.is_empty(), "{name}");
    }
    assert_eq!(plan("cd-iso", 1, 1.0).unwrap().data_bytes(), 700 << 20);
    assert_eq!(plan("big-video", 1, 1.0).unwrap().data_bytes(), 4 << 30);
}

#[test]
fn every_phase_runs_verifies_and_cleans_up() {
    let target = tempfile::tempdir().unwrap();
    let ram = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = copy(&[
        "--dataset",
        "source-tree",
        "--scale",
        "0.004",
        "-t",
        s(target.path()),
        "--ram-dir",
        s(ram.path()),
        "--repeat",
        "2",
        "--verify",
        "--ceiling",
        "--preserve",
        "--method",
        "copy_file_range",
        "--output",
        s(out.path()),
        "--json",
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = json(&o);
    assert_eq!(doc["status"], "complete");
    let tests = doc["tests"].as_array().unwrap();
    let phases: Vec<&str> = tests
        .iter()
        .map(|t| t["copy"]["phase"].as_str().unwrap())
        .collect();
    assert_eq!(phases, ["ceiling", "write", "read", "copy", "delete"]);
    for t in tests {
        assert_eq!(t["family"], "copy");
        assert_eq!(t["runs"].as_array().unwrap().len(), 2, "{}", t["name"]);
        assert_eq!(t["summary"]["bw_bytes_per_s"]["n"], 2);
        assert!(t["summary"]["syncfs_ns"]["n"] == 2);
        for r in t["runs"].as_array().unwrap() {
            assert!(r["elapsed_ns"].as_u64().unwrap() > 0);
            assert!(r["files_per_s"].as_f64().unwrap() > 0.0);
            let c = &r["copy"];
            assert_eq!(
                r["elapsed_ns"].as_u64().unwrap(),
                c["close_ns"].as_u64().unwrap() + c["syncfs_ns"].as_u64().unwrap()
            );
            if t["copy"]["phase"] != "delete" {
                assert_eq!(c["verify"]["ok"], true, "{}", t["name"]);
            }
        }
    }
    // The target is a temp dir on a file system other programs write to (other tests, other
    // builds): df may honestly say so (`other_writers`) instead of a figure.
    let write = &tests[1]["runs"][0]["copy"]["space"];
    assert!(
        write["overhead_ratio"].as_f64().is_some() || write["other_writers"] == true,
        "{write}"
    );
    let delete = &tests[4]["runs"][0]["copy"]["space"];
    assert!(
        delete["space_returned"].is_boolean() || delete["other_writers"] == true,
        "{delete}"
    );
    // The result file was written and everything created is gone.
    assert_eq!(entries(out.path()).len(), 1);
    assert!(
        entries(target.path()).is_empty(),
        "{:?}",
        entries(target.path())
    );
    assert!(entries(ram.path()).is_empty(), "{:?}", entries(ram.path()));
}

#[test]
fn verify_catches_a_file_changed_behind_our_back() {
    let target = tempfile::tempdir().unwrap();
    let ram = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    // Debug builds only: flip a byte of this file on the target after the write phase.
    let o = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args([
            "copy",
            "--dataset",
            "media-mix",
            "--scale",
            "0.002",
            "--repeat",
            "1",
        ])
        .args([
            "--phases",
            "write,read",
            "--verify",
            "--hash",
            "blake3",
            "-q",
        ])
        .args(["-t", s(target.path()), "--ram-dir", s(ram.path())])
        .args(["--output", s(out.path())])
        .env("IOLAB_TEST_CORRUPT_AFTER_WRITE", "photos/00/IMG_0001.jpg")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("verification failed after the write phase")
            && err.contains("photos/00/IMG_0001.jpg (content differs)"),
        "{err}"
    );
    let file = std::fs::read_dir(out.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(file.path()).unwrap()).unwrap();
    assert_eq!(doc["status"], "failed");
    let v = &doc["tests"][0]["runs"][0]["copy"]["verify"];
    assert_eq!(v["ok"], false);
    assert_eq!(
        v["mismatches"][0],
        "photos/00/IMG_0001.jpg (content differs)"
    );
    assert!(entries(target.path()).is_empty());
    assert!(entries(ram.path()).is_empty());
}

type Snapshot = BTreeMap<PathBuf, (String, i64, i64, i64, u32)>;

/// Content hash, atime, mtime, ctime and mode of every entry under `root`. Files are read
/// with O_NOATIME so the snapshot itself changes nothing; directory atimes are left out
/// (listing a directory updates them under relatime, as any `ls` would).
fn snapshot(root: &Path) -> Snapshot {
    use std::os::unix::fs::OpenOptionsExt;
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let md = std::fs::symlink_metadata(e.path()).unwrap();
            let mut atime = md.atime();
            let mut hash = String::new();
            if md.is_dir() {
                stack.push(e.path());
                atime = 0;
            } else if md.is_file() {
                let mut f = std::fs::OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_NOATIME)
                    .open(e.path())
                    .unwrap();
                let mut h = blake3::Hasher::new();
                std::io::copy(&mut f, &mut h).unwrap();
                hash = h.finalize().to_hex().to_string();
            }
            out.insert(e.path(), (hash, atime, md.mtime(), md.ctime(), md.mode()));
        }
    }
    out
}

#[test]
fn user_source_is_never_modified() {
    let src = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(src.path().join("a/b")).unwrap();
    std::fs::write(src.path().join("a/b/one.txt"), b"hello").unwrap();
    std::fs::write(src.path().join("a/two.bin"), vec![7u8; 300_000]).unwrap();
    std::fs::write(src.path().join("empty"), b"").unwrap();
    std::os::unix::fs::symlink("a/two.bin", src.path().join("link")).unwrap();
    // Old times, so an atime update would show.
    let old = nix::sys::time::TimeSpec::new(1_000_000_000, 0);
    for f in ["a/b/one.txt", "a/two.bin", "empty"] {
        nix::sys::stat::utimensat(
            nix::fcntl::AT_FDCWD,
            &src.path().join(f),
            &old,
            &old,
            nix::sys::stat::UtimensatFlags::FollowSymlink,
        )
        .unwrap();
    }
    let before = snapshot(src.path());
    let target = tempfile::tempdir().unwrap();
    let ram = tempfile::tempdir().unwrap();
    let o = copy(&[
        "--source",
        s(src.path()),
        "-t",
        s(target.path()),
        "--ram-dir",
        s(ram.path()),
        "--repeat",
        "1",
        "--verify",
        "--preserve",
        "--ceiling",
        "--method",
        "sendfile",
        "--no-save",
        "--json",
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = json(&o);
    assert_eq!(doc["tests"][0]["copy"]["dataset"], "source");
    assert_eq!(doc["tests"][0]["copy"]["files"], 3);
    assert!(
        doc["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == "source-skipped"),
        "the symlink is reported"
    );
    assert_eq!(snapshot(src.path()), before, "source untouched");
    assert!(entries(target.path()).is_empty());

    // The source as the target, or around it, or inside it: refused, nothing written.
    let inner = src.path().join("a");
    for t in [src.path(), inner.as_path()] {
        let o = copy(&["--source", s(src.path()), "-t", s(t), "--no-save"]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("contains the target"), "{}", stderr(&o));
    }
    let o = copy(&["--source", s(&inner), "-t", s(src.path()), "--no-save"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("is inside the target"),
        "{}",
        stderr(&o)
    );
    let o = copy(&["--source", "/nonexistent/iolab-src", "-t", s(target.path())]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--source /nonexistent/iolab-src"));
    assert_eq!(snapshot(src.path()), before, "source untouched");
}

#[test]
fn bad_input_is_refused_before_anything_is_written() {
    let target = tempfile::tempdir().unwrap();
    let out = target.path().join("results");
    let cases: &[(&[&str], &str)] = &[
        (
            &["--dataset", "mp3s"],
            "unknown data set 'mp3s' (known: media-mix",
        ),
        (
            &["--scale", "0"],
            "--scale 0: must be a finite number above 0",
        ),
        (&["--scale=-2"], "--scale -2"),
        (
            &["--scale", "inf"],
            "--scale inf: must be a finite number above 0",
        ),
        (&["--phases", "write,move"], "unknown phase 'move'"),
        (&["--buffer", "1"], "--buffer 1B"),
        // The size as a size, not 10737418240.
        (&["--buffer", "10G"], "--buffer 10GiB: must be between"),
        (
            &["--seed", "-1"],
            "'-1' for '--seed <SEED>': not a whole number of 0 or more",
        ),
        (
            &[
                "--dataset",
                "media-mix",
                "--scale",
                "100000",
                "--phases",
                "write",
            ],
            "but the data set needs",
        ),
        // A scale past u64 bytes (twice the set, with its read-back copy) is refused,
        // not a panic on `2 * set`.
        (&["--scale", "1e300"], "but the data set needs"),
        // Options that would be ignored are refused instead.
        (
            &["--hash", "blake3"],
            "required arguments were not provided: --verify",
        ),
        (
            &["--source", "/tmp", "--scale", "0.5"],
            "'--source <DIR>' cannot be used with '--scale <F>'",
        ),
        (&["--source", "/tmp", "--seed", "7"], "cannot be used with"),
        (
            &["--generate", "/tmp/iolab-never", "--verify"],
            "cannot be used with",
        ),
        // Writable for root by access(2), yet nothing can be made there: refused here (it
        // failed after the result file was claimed, exit 1, 'at path "/proc/iolab-copy-…"').
        (
            &["--ram-dir", "/proc"],
            // As root: 'iolab cannot create files there (…)'; otherwise 'not writable'.
            "--ram-dir /proc: ",
        ),
    ];
    for (args, want) in cases {
        let mut a = args.to_vec();
        a.extend(["-t", s(target.path()), "--output", s(&out)]);
        let o = copy(&a);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "one line: {}", stderr(&o));
    }
    assert!(entries(target.path()).is_empty(), "nothing created");
}

#[test]
fn target_without_room_is_refused() {
    let Some(fs) = scratch_or_skip("target_without_room_is_refused", "tmpfs", 4 << 20, &[], "")
    else {
        return;
    };
    let o = copy(&[
        "--dataset",
        "cd-iso",
        "--scale",
        "0.01",
        "-t",
        s(fs.path()),
        "--no-save",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("free, but the data set needs"), "{err}");
    assert!(entries(fs.path()).is_empty());
    // A RAM dir without room says how much is needed.
    let t = tempfile::tempdir().unwrap();
    let o2 = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args([
            "copy",
            "--dataset",
            "cd-iso",
            "--scale",
            "0.01",
            "--no-save",
        ])
        .args(["-t", s(t.path()), "--ram-dir", s(fs.path())])
        .output()
        .unwrap();
    assert_eq!(o2.status.code(), Some(2), "{}", stderr(&o2));
    assert!(stderr(&o2).contains("the RAM dir"), "{}", stderr(&o2));
    assert!(
        stderr(&o2).contains("plus its read-back copy"),
        "{}",
        stderr(&o2)
    );
}

#[test]
fn fat32_four_gib_limit_is_named() {
    let Some(fs) = scratch_or_skip("fat32_four_gib_limit_is_named", "fat32", 64 << 20, &[], "")
    else {
        return;
    };
    let o = copy(&["--dataset", "big-video", "-t", s(fs.path()), "--no-save"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("video/big-video.mkv is 4.0 GiB (4294967296 bytes)")
            && err.contains("FAT32")
            && err.contains("EFBIG")
            && err.contains("--scale below 0.999"),
        "{err}"
    );
    // A user's tree with a (sparse, free) 5 GiB file is refused the same way.
    let src = tempfile::tempdir().unwrap();
    let f = std::fs::File::create(src.path().join("huge.img")).unwrap();
    f.set_len(5 << 30).unwrap();
    let o = copy(&["--source", s(src.path()), "-t", s(fs.path()), "--no-save"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("huge.img is 5.0 GiB"), "{}", stderr(&o));
    assert!(entries(fs.path()).is_empty(), "nothing written");
}

#[test]
fn ctrl_c_removes_everything_created() {
    let target = tempfile::tempdir().unwrap();
    let ram = tempfile::tempdir().unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args([
            "copy",
            "--dataset",
            "source-tree",
            "--scale",
            "0.2",
            "--repeat",
            "3",
        ])
        .args([
            "-t",
            s(target.path()),
            "--ram-dir",
            s(ram.path()),
            "--no-save",
        ])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the run has created its work directories, then interrupt.
    let t0 = std::time::Instant::now();
    while entries(target.path()).is_empty() && t0.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("interrupted by SIGINT"),
        "{}",
        stderr(&o)
    );
    // The removal of thousands of files after the stop is said, not seconds of silence.
    assert!(
        stderr(&o).contains("iolab: removing the copy's work directories ..."),
        "{}",
        stderr(&o)
    );
    assert!(
        entries(target.path()).is_empty(),
        "{:?}",
        entries(target.path())
    );
    assert!(entries(ram.path()).is_empty(), "{:?}", entries(ram.path()));
}

#[test]
fn matrix_workload_reference_runs_on_a_directory() {
    let r = iolab::workload::WorkloadRef::parse(
        "copy:dataset=media-mix:scale=0.002:repeat=1:verify=true:quiet=true",
    )
    .unwrap();
    let w = iolab::commands::resolve(&r).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ctx = iolab::runner::RunContext::new(iolab::runner::ProgressMode::Quiet);
    let out = w.run_on(dir.path(), &ctx).unwrap();
    let names: Vec<&str> = out.tests.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names.len(), 4, "{names:?}");
    assert!(names[0].starts_with("media-mix write"), "{names:?}");
    for t in &out.tests {
        assert_eq!(t.runs.len(), 1);
        let c = t.copy.as_ref().unwrap();
        assert_eq!(c.files, 5);
    }
    assert!(entries(dir.path()).is_empty());
}

/// What `--generate` made, in words: `cd-iso` is one file in one directory (it said "1
/// files, 1 directories").
#[test]
fn generate_says_what_it_made_in_words() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("set");
    let o = copy(&[
        "--dataset",
        "cd-iso",
        "--scale",
        "0.001",
        "--generate",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(said.starts_with("cd-iso: 1 file, 1 directory, "), "{said}");
    // And a run's progress line of the set it made in RAM.
    let t = tempfile::tempdir().unwrap();
    let o = copy(&[
        "--dataset",
        "cd-iso",
        "--scale",
        "0.001",
        "--repeat",
        "1",
        "--phases",
        "write",
        "-t",
        s(t.path()),
        "--no-save",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains(": 1 file, "), "{}", stderr(&o));
    assert!(!stderr(&o).contains("1 files"), "{}", stderr(&o));
}

#[test]
fn generate_writes_the_same_bytes_as_the_library() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("set");
    let generate_into = |dir: &std::path::Path, extra: &[&str]| {
        let mut a = vec![
            "--dataset",
            "office-docs",
            "--scale",
            "0.005",
            "--seed",
            "42",
        ];
        a.extend(["--generate", s(dir)]);
        a.extend(extra);
        copy(&a)
    };
    let o = generate_into(&out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lib = d.path().join("lib");
    std::fs::create_dir(&lib).unwrap();
    let p = plan("office-docs", 42, 0.005).unwrap();
    generate(&p, &lib, 42, &StopFlag::new(), &mut |_| {}).unwrap();
    let stop = StopFlag::new();
    assert_eq!(
        hash_tree(&out, HashKind::Xxh3, &stop).unwrap(),
        hash_tree(&lib, HashKind::Xxh3, &stop).unwrap()
    );
    // An existing directory is refused.
    let o = copy(&["--dataset", "office-docs", "--generate", s(&out)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("already exists"), "{}", stderr(&o));
    // --json: what was made, as data.
    let json = d.path().join("json");
    let o = generate_into(&json, &["--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["dataset"], "office-docs");
    assert_eq!(v["files"], p.files.len());
    assert_eq!(v["bytes"], p.data_bytes());
    assert_eq!(v["path"], s(&json));
    // And the list of data sets.
    let o = copy(&["--dataset", "list", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"office-docs"), "{names:?}");
}

#[test]
fn unprivileged_run_labels_read_and_copy_warm() {
    use std::os::unix::fs::PermissionsExt;
    let test = "unprivileged_run_labels_read_and_copy_warm";
    let target = tempfile::tempdir().unwrap();
    let ram = tempfile::tempdir().unwrap();
    for d in [target.path(), ram.path()] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    let args = [
        "copy",
        "--dataset",
        "office-docs",
        "--scale",
        "0.005",
        "--repeat",
        "1",
        "--no-save",
        "--json",
        "-q",
        "-t",
        s(target.path()),
        "--ram-dir",
        s(ram.path()),
    ];
    let o = if iolab::os::is_root() {
        // As root, drop to nobody: caches cannot be dropped there. The binary is copied where
        // nobody can reach it (the checkout may be under a 0700 directory).
        if !tool_or_skip(test, "setpriv", "util-linux") {
            return;
        }
        let bin = common::binary_for_nobody();
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&bin.path)
            .args(args)
            .output()
            .unwrap()
    } else {
        common::iolab(&args)
    };
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = json(&o);
    let names: Vec<&str> = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "office-docs write",
            "office-docs read (warm)",
            "office-docs copy (warm)",
            "office-docs delete"
        ]
    );
    assert_eq!(doc["tests"][1]["copy"]["cache"], "warm");
    assert!(
        doc["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == "cache-warm")
    );
    assert!(entries(target.path()).is_empty());
}

#[test]
fn space_accounting_on_a_dedicated_ext4() {
    let Some(fs) = scratch_or_skip(
        "space_accounting_on_a_dedicated_ext4",
        "ext4",
        64 << 20,
        &["-b", "4096"],
        "noatime",
    ) else {
        return;
    };
    let ram = tempfile::tempdir().unwrap();
    let doc = write_then_delete(
        "source-tree",
        "0.003",
        &["--repeat", "1"],
        fs.path(),
        ram.path(),
    );
    let write = &doc["tests"][0]["runs"][0];
    // Small files on 4 KiB blocks: more on disk than the data's size.
    let ratio = write["copy"]["space"]["overhead_ratio"].as_f64().unwrap();
    assert!(ratio > 1.0, "overhead ratio {ratio}");
    assert!(
        write["device"]["write_bytes"].as_u64().unwrap() > 0,
        "{write}"
    );
    assert!(write["write_amplification"].as_f64().is_some());
    let delete = &doc["tests"][1]["runs"][0]["copy"]["space"];
    assert_eq!(delete["space_returned"], true, "{delete}");
    assert!(delete["delta_bytes"].as_i64().unwrap() < 0, "{delete}");
    assert!(entries(fs.path()).iter().all(|e| e == "lost+found"));
}

/// xfs frees a deleted file's blocks in the background, after the delete's syncfs: df read
/// at once still counted the data set, and the table said "19.4 MiB not freed" for space
/// that came back a moment later. The delete's df now waits for it (a little).
#[test]
fn space_freed_in_the_background_counts_as_freed_on_xfs() {
    let Some(fs) = scratch_or_skip(
        "space_freed_in_the_background_counts_as_freed_on_xfs",
        "xfs",
        300 << 20,
        &[],
        "",
    ) else {
        return;
    };
    let ram = tempfile::tempdir().unwrap();
    let extra = ["--method", "rw", "--repeat", "2"];
    let doc = write_then_delete("media-mix", "0.01", &extra, fs.path(), ram.path());
    for r in doc["tests"][1]["runs"].as_array().unwrap() {
        let space = &r["copy"]["space"];
        assert_eq!(space["space_returned"], true, "{space}");
    }
    assert!(entries(fs.path()).is_empty(), "{:?}", entries(fs.path()));
}

/// `iolab copy` of `dataset` at `scale`, its write and delete phases only, onto `target` from
/// `ram`, quiet, as JSON (asserting that it succeeded).
fn write_then_delete(
    dataset: &str,
    scale: &str,
    extra: &[&str],
    target: &std::path::Path,
    ram: &std::path::Path,
) -> serde_json::Value {
    let mut a = vec![
        "--dataset",
        dataset,
        "--scale",
        scale,
        "--phases",
        "write,delete",
    ];
    a.extend(extra);
    a.extend([
        "-t",
        s(target),
        "--ram-dir",
        s(ram),
        "--no-save",
        "--json",
        "-q",
    ]);
    let o = copy(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    json(&o)
}

/// The first timing is the phase up to its last close (or unlink), not the time spent closing:
/// `close 1.587 s + syncfs 0.000 s` read as if closing had taken 1.6 s. The progress line and
/// the table's header say `to the last close`.
#[test]
fn the_time_to_the_last_close_is_not_called_close() {
    let target = tempfile::tempdir().unwrap();
    let o = copy(&[
        "--dataset",
        "source-tree",
        "--scale",
        "0.002",
        "-t",
        s(target.path()),
        "--no-save",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(!err.contains(", close "), "{err}");
    assert!(err.contains(" s to the last close + syncfs "), "{err}");
    assert!(err.contains(" s to the last unlink + syncfs "), "{err}");
    let out = String::from_utf8_lossy(&o.stdout);
    // The times carry their unit, as in the report (`18.98 ms`): no `s` in the header.
    assert!(
        out.contains("┆ To close ") && !out.contains("To close s"),
        "{out}"
    );
    assert!(!out.contains("┆ Close s"), "{out}");
}

/// `--phases delete` printed "write [1/1] done: 212.4 MB/s, 0.046 s to the last close" for
/// a write nobody asked to time: the phase that only sets up the delete says what it did,
/// with no speed, and is in neither the table nor the JSON.
#[test]
fn a_phase_not_asked_for_shows_no_speed() {
    let target = tempfile::tempdir().unwrap();
    let ram = tempfile::tempdir().unwrap();
    let args = [
        "--dataset",
        "media-mix",
        "--scale",
        "0.002",
        "--phases",
        "delete",
        "--repeat",
        "1",
        "-t",
        s(target.path()),
        "--ram-dir",
        s(ram.path()),
        "--no-save",
    ];
    let o = copy(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let write = err
        .lines()
        .find(|l| l.contains("media-mix write [1/1] done"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        write.ends_with("written (not measured: not in --phases)"),
        "{write}"
    );
    assert!(
        !write.contains("MB/s") && !write.contains("syncfs"),
        "{write}"
    );
    let delete = err
        .lines()
        .find(|l| l.contains("media-mix delete [1/1] done"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(delete.contains(" files/s, "), "{delete}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains("media-mix write"), "{out}");
    let mut j = args.to_vec();
    j.push("--json");
    let doc = json(&copy(&j));
    let names: Vec<_> = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["media-mix delete"]);
    assert!(entries(target.path()).is_empty());
}

/// A `--source` of one empty file: every phase runs (exit 0) and says files/s, never a
/// "0.00 MB/s" for data that does not exist, nor how its copy was made (there was nothing
/// to copy); a `--source` that is the target is refused
/// (exit 2) with nothing written.
#[test]
fn one_empty_file_and_the_source_as_target() {
    let src = tempfile::tempdir().unwrap();
    std::fs::write(src.path().join("empty"), b"").unwrap();
    let target = tempfile::tempdir().unwrap();
    let ram = tempfile::tempdir().unwrap();
    let mut args = vec![
        "--source",
        s(src.path()),
        "--repeat",
        "1",
        "-t",
        s(target.path()),
        "--ram-dir",
        s(ram.path()),
        "--no-save",
    ];
    let o = copy(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(!err.contains("MB/s"), "{err}");
    assert!(err.contains("source write [1/1] done"), "{err}");
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let row = out
        .lines()
        .find(|l| l.contains(" source write "))
        .unwrap_or_else(|| panic!("{out}"));
    let cells: Vec<&str> = row.split(['│', '┆']).map(str::trim).collect();
    // "", Test, Files, Data, Runs, To close, syncfs, MB/s
    assert_eq!((cells[2], cells[3], cells[7]), ("1", "0 B", "-"), "{row}");
    args.push("--json");
    let doc = json(&copy(&args));
    for t in doc["tests"].as_array().unwrap() {
        let r = &t["runs"][0];
        assert!(r["bw_bytes_per_s"].is_null(), "{}: {r}", t["name"]);
        // No bytes to copy or share: no `in_place` (it said `method: unknown`), and no rates
        // of the copy's own (they said 0.0 beside a null `bw_bytes_per_s`).
        for k in ["in_place", "close_bw_bytes_per_s", "durable_bw_bytes_per_s"] {
            assert!(r["copy"].get(k).is_none(), "{}: {k} in {r}", t["name"]);
        }
        assert!(
            r["files_per_s"].as_f64().unwrap() > 0.0,
            "{}: {r}",
            t["name"]
        );
    }
    assert!(entries(target.path()).is_empty());

    let o = copy(&["--source", s(src.path()), "-t", s(src.path()), "--no-save"]);
    common::assert_usage(&o, "contains the target");
    assert_eq!(entries(src.path()), ["empty"]);
}

/// The copying thread that shares its CPU with a busy program waits for it: `cpu-contention`
/// for the phase's test, with the figure in `copy.cpu_wait_pct` (iolab and a spinning thread
/// pinned to one CPU; a small data set written from tmpfs to tmpfs). Only its presence is
/// asserted.
#[test]
fn a_copying_thread_sharing_its_cpu_with_a_busy_program_is_warned_of() {
    let test = "a_copying_thread_sharing_its_cpu_with_a_busy_program_is_warned_of";
    let (Some(target), Some(ram)) = (
        common::ram_tempdir_or_skip(test),
        common::ram_tempdir_or_skip(test),
    ) else {
        return;
    };
    let mut cmd = common::bin();
    cmd.args([
        "copy",
        "--dataset",
        "source-tree",
        "--scale",
        "0.01",
        "--phases",
        "write",
        "--repeat",
        "1",
        "-t",
        s(target.path()),
        "--ram-dir",
        s(ram.path()),
        "--no-save",
        "--json",
    ]);
    let at = Some("/runs/0/copy/cpu_wait_pct");
    common::contention_beside_a_spinner(test, &mut cmd, at, "the copying thread");
}

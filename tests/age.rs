//! `iolab age` and `iolab info --layout`: a fresh file system with one large file scores
//! (almost) 1.0, aging lowers the score, the same seed gives the same files and score, and
//! bad input is refused before anything is created. Scratch file systems on loop devices
//! over images in RAM (`/dev/shm`): counts and layouts, never speeds, are asserted.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{assert_usage, iolab, json_ok, ram_scratch_or_skip, s};

const GIB: u64 = 1 << 30;

/// The layout `iolab info --layout --json` reports for `path`.
fn layout(path: &Path) -> serde_json::Value {
    let v = json_ok(&iolab(&[
        "info",
        s(path),
        "--layout",
        "--no-smart",
        "--json",
    ]));
    v["layout"].clone()
}

/// Every file of the aged tree with its size, relative to the tree.
fn file_set(root: &Path) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let Ok(md) = e.metadata() else {
                continue;
            };
            if md.is_dir() {
                stack.push(e.path());
            } else {
                let rel = e.path().strip_prefix(root).unwrap().display().to_string();
                out.insert(rel, md.len());
            }
        }
    }
    out
}

/// Age a fresh `fs_type` scratch file system with `profile`, churn 1.5x, seed 1, by `jobs`
/// writers: the age detail, the set of files, and the fresh file system's one-big-file
/// score.
fn fresh_then_aged(
    test: &str,
    fs_type: &str,
    jobs: &str,
) -> Option<(serde_json::Value, BTreeMap<String, u64>, f64)> {
    // One large file written sequentially on a fresh file system (another one: space a
    // deleted file held comes back late on btrfs, and aging counts from what is used).
    let fresh_score = {
        let fs = ram_scratch_or_skip(test, fs_type, GIB, &[], "")?;
        let big = fs.path().join("big");
        std::fs::write(&big, vec![0x5au8; 256 << 20]).unwrap();
        layout(fs.path())["layout_score"].as_f64().unwrap()
    };
    let fs = ram_scratch_or_skip(test, fs_type, GIB, &[], "")?;
    let out = iolab(&[
        "age",
        s(fs.path()),
        "--profile",
        "source-tree",
        "--churn",
        "1.5",
        "--seed",
        "1",
        "--jobs",
        jobs,
        "--no-save",
        "--json",
    ]);
    let doc = json_ok(&out);
    let detail = doc["tests"][0]["age"].clone();
    assert_eq!(
        detail["jobs"].as_u64(),
        jobs.parse::<u64>().ok(),
        "writers recorded"
    );
    let aged_dir = fs.path().join("iolab-aged-1");
    assert!(aged_dir.is_dir(), "the aged tree stays");
    let files = file_set(&aged_dir);
    eprintln!(
        "{test}: fresh one-file score {fresh_score:.5}; aged score {}, pieces/file {}, fullness {}, {} files, {:.0} file ops/s; fs {} B, written {} B, created {}, deleted {}, before {}",
        detail["layout_after"]["layout_score"],
        detail["layout_after"]["pieces_per_file_mean"],
        detail["fullness"],
        files.len(),
        detail["file_ops_per_s"].as_f64().unwrap(),
        detail["fs_size_bytes"],
        detail["bytes_written"],
        detail["files_created"],
        detail["files_deleted"],
        detail["layout_before"]["files"]
    );
    Some((detail, files, fresh_score))
}

fn ages_and_is_reproducible(test: &str, fs_type: &str) {
    let Some((a, files_a, fresh)) = fresh_then_aged(test, fs_type, "2") else {
        return;
    };
    assert!(fresh >= 0.99, "a fresh file system's one big file: {fresh}");
    let score_a = a["layout_after"]["layout_score"].as_f64().unwrap();
    assert!(
        score_a < fresh,
        "aging lowers the layout score: {score_a} vs fresh {fresh}"
    );
    assert!(a["layout_after"]["fragmented_files"].as_u64().unwrap() > 0);
    let fullness = a["fullness"].as_f64().unwrap();
    assert!(
        (0.70..=0.85).contains(&fullness),
        "aged to about 80 %: {fullness}"
    );
    assert!(a["files_created"].as_u64().unwrap() > 1000);
    assert!(a["files_deleted"].as_u64().unwrap() > 0);
    assert!(a["progress"].as_array().unwrap().len() >= 9);

    // The same seed on another fresh file system, with one writer instead of two (the plan
    // is the seed's, the writers only carry it out): the same files, a score within 0.02.
    let Some((b, files_b, _)) = fresh_then_aged(test, fs_type, "1") else {
        return;
    };
    let differ: Vec<_> = files_a
        .iter()
        .filter(|(k, v)| files_b.get(*k) != Some(v))
        .take(5)
        .collect();
    assert!(
        files_a.len() == files_b.len() && differ.is_empty(),
        "the same seed gives the same file set: {} vs {} files, first differences {differ:?}",
        files_a.len(),
        files_b.len()
    );
    let score_b = b["layout_after"]["layout_score"].as_f64().unwrap();
    assert!(
        (score_a - score_b).abs() <= 0.02,
        "reproducible score: {score_a} vs {score_b}"
    );
}

#[test]
fn ext4_ages_and_the_seed_reproduces_it() {
    ages_and_is_reproducible("ext4_ages_and_the_seed_reproduces_it", "ext4");
}

#[test]
fn btrfs_ages_and_the_seed_reproduces_it() {
    ages_and_is_reproducible("btrfs_ages_and_the_seed_reproduces_it", "btrfs");
}

#[test]
fn bad_input_is_refused_before_anything_is_created() {
    let test = "bad_input_is_refused_before_anything_is_created";
    let Some(fs) = ram_scratch_or_skip(test, "ext4", 256 << 20, &[], "") else {
        return;
    };
    let t = s(fs.path());
    let before = common::names(fs.path());
    assert_usage(
        &iolab(&["age", t, "--fill", "120%", "--no-save"]),
        "--fill '120%' is out of range: give a percentage above 0 % and at most 100 % (e.g. 80%) or a fraction above 0 and at most 1 (e.g. 0.8)",
    );
    assert_usage(
        &iolab(&["age", t, "--fill", "80", "--no-save"]),
        "for a percentage write 80%",
    );
    // The target as -t/--target, as the other commands take it.
    assert_usage(
        &iolab(&["age", "-t", t, "--fill", "120%", "--no-save"]),
        "--fill '120%' is out of range",
    );
    assert_usage(
        &iolab(&["age", t, "--fill", "0", "--no-save"]),
        "'0' is out of range",
    );
    assert_usage(
        &iolab(&["age", t, "--profile", "nosuch", "--no-save"]),
        "desktop, media, source-tree",
    );
    // 256 MiB media files on a 256 MiB file system.
    assert_usage(
        &iolab(&["age", t, "--profile", "media", "--no-save"]),
        "do not fit",
    );
    assert_usage(&iolab(&["age", t, "--churn", "0", "--no-save"]), "--churn");
    // Negative values reach the flags' own checks, not "unexpected argument '-1'".
    assert_usage(
        &iolab(&["age", t, "--churn", "-1", "--no-save"]),
        "--churn -1",
    );
    assert_usage(
        &iolab(&["age", t, "--fill", "-5%", "--no-save"]),
        "--fill '-5%'",
    );
    assert_usage(
        &iolab(&["age", t, "--jobs", "-1", "--no-save"]),
        "invalid value '-1' for '--jobs",
    );
    assert_usage(&iolab(&["age", t, "--jobs", "0", "--no-save"]), "--jobs 0");
    let bad = common::tempdir();
    let profile = bad.path().join("p.toml");
    std::fs::write(&profile, "description = 'x'\nfill = '80%'\n").unwrap();
    assert_usage(
        &iolab(&["age", t, "--profile", s(&profile), "--no-save"]),
        "p.toml",
    );
    // A directory inside the file system is not the file system.
    let sub = fs.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    assert_usage(&iolab(&["age", s(&sub), "--no-save"]), "--allow-shared");
    std::fs::remove_dir(&sub).unwrap();
    assert_eq!(common::names(fs.path()), before, "nothing created");
}

/// A read-only file system is refused as such, before any question of room: a 16 MiB one
/// was told that the desktop profile's 64 MiB files "do not fit" and to use a larger file
/// system.
#[test]
fn a_read_only_target_is_refused_as_read_only() {
    let test = "a_read_only_target_is_refused_as_read_only";
    let Some(fs) = ram_scratch_or_skip(test, "tmpfs", 16 << 20, &[], "ro") else {
        return;
    };
    let o = iolab(&["age", s(fs.path()), "--no-save"]);
    assert_usage(&o, "is on a read-only file system; aging creates");
    assert!(
        !common::stderr(&o).contains("fit"),
        "{}",
        common::stderr(&o)
    );
}

/// A target another iolab run holds is refused as such before its fullness is judged: a
/// second aging of a file system the first was filling was told the profile's files "do
/// not fit" and to use a larger file system.
#[test]
fn a_target_in_use_is_refused_as_in_use() {
    use std::os::fd::AsRawFd;
    let test = "a_target_in_use_is_refused_as_in_use";
    let Some(fs) = ram_scratch_or_skip(test, "tmpfs", 16 << 20, &[], "") else {
        return;
    };
    // The lock as a running iolab holds it (`runner::lock`), taken by this test.
    let lock = fs.path().join(".iolab.lock");
    std::fs::write(&lock, "pid 4242").unwrap();
    let held = std::fs::File::open(&lock).unwrap();
    // SAFETY: flock on an fd this test owns.
    assert_eq!(
        unsafe { libc::flock(held.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
        0
    );
    let o = iolab(&["age", s(fs.path()), "--no-save"]);
    assert_usage(&o, "another iolab run is using");
    assert!(
        common::stderr(&o).contains("pid 4242"),
        "{}",
        common::stderr(&o)
    );
    assert!(
        !common::stderr(&o).contains("fit"),
        "{}",
        common::stderr(&o)
    );
    drop(held);
}

/// A file system of small files runs out of inodes before space (here 1,024 inodes for
/// 64 MiB): aging keeps its file count within them, ends without ENOSPC, and says that it
/// stopped short of the fullness.
#[test]
fn aging_stays_within_the_inodes_and_says_so() {
    let test = "aging_stays_within_the_inodes_and_says_so";
    let Some(fs) = ram_scratch_or_skip(test, "ext4", 64 << 20, &["-N", "1024"], "") else {
        return;
    };
    let dir = common::tempdir();
    let profile = dir.path().join("small.toml");
    std::fs::write(
        &profile,
        "description = '4 KiB files'\nfill = '80%'\nchurn = 1.0\nappend_share = 0.0\n\
         [tree]\ndepth = 1\ndirs_per_dir = 4\nfiles_per_dir = 200\n\
         [[sizes]]\nfrom = '4K'\nto = '4K'\nweight = 1\n",
    )
    .unwrap();
    // One writer, then three: the writers must not run a create before the deletes that
    // made room for it (two writers once did, and hit ENOSPC on these inodes).
    for jobs in ["1", "3"] {
        let out = iolab(&[
            "age",
            s(fs.path()),
            "--profile",
            s(&profile),
            "--jobs",
            jobs,
            "--no-save",
            "--json",
            "-q",
        ]);
        let doc = json_ok(&out);
        let a = &doc["tests"][0]["age"];
        assert!(a["files_deleted"].as_u64().unwrap() > 0, "{a}");
        assert!(a["fullness"].as_f64().unwrap() < 0.5, "{a}");
        assert!(
            doc["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|w| w["code"] == "inodes-short"),
            "{}",
            doc["warnings"]
        );
        std::fs::remove_dir_all(fs.path().join("iolab-aged-1")).unwrap();
    }
}

/// A file system of `fs_type` and `size` in RAM for `test` (or a loud skip), a directory
/// beside it, and `small_files_profile` in that directory.
fn small_aging(
    test: &str,
    fs_type: &str,
    size: u64,
) -> Option<(common::ScratchFs, tempfile::TempDir, std::path::PathBuf)> {
    let fs = ram_scratch_or_skip(test, fs_type, size, &[], "")?;
    let dir = common::tempdir();
    let profile = small_files_profile(dir.path());
    Some((fs, dir, profile))
}

/// A profile file in `dir` of 200 files of 4–64 KiB in four directories, to 80 % full with
/// a churn of 1.0: small enough to age a tmpfs of a few tens of MiB in a fraction of a second.
fn small_files_profile(dir: &Path) -> std::path::PathBuf {
    let profile = dir.join("small.toml");
    std::fs::write(
        &profile,
        "description = 'small files'\nfill = '80%'\nchurn = 1.0\nappend_share = 0.0\n\
         [tree]\ndepth = 1\ndirs_per_dir = 4\nfiles_per_dir = 50\n\
         [[sizes]]\nfrom = '4K'\nto = '64K'\nweight = 1\n",
    )
    .unwrap();
    profile
}

/// The same command run again meets its own aged tree: it is refused as such, before any
/// question of room (the 97 % the first one made was told that the profile's files "do not
/// fit" and to use a larger file system).
#[test]
fn aging_again_with_the_same_seed_names_the_tree_there() {
    let test = "aging_again_with_the_same_seed_names_the_tree_there";
    let Some((fs, _dir, profile)) = small_aging(test, "tmpfs", 32 << 20) else {
        return;
    };
    let args = [
        "age",
        s(fs.path()),
        "--profile",
        s(&profile),
        "--fill",
        "97%",
        "--no-save",
        "-q",
    ];
    let first = iolab(&args);
    assert!(first.status.success(), "{}", common::stderr(&first));
    let before = file_set(&fs.path().join("iolab-aged-1"));
    let again = iolab(&args);
    assert_usage(
        &again,
        "iolab-aged-1 exists already (an earlier aging with seed 1)",
    );
    assert!(
        !common::stderr(&again).contains("fit"),
        "{}",
        common::stderr(&again)
    );
    assert_eq!(
        file_set(&fs.path().join("iolab-aged-1")),
        before,
        "left as it was"
    );
}

/// `-q` keeps the result, warnings, errors and the `results:` line only (as the GUIDE says of
/// every command): `age -q` still said "the aged tree stays in …" on stderr. Without -q it
/// is said.
#[test]
fn quiet_aging_says_nothing_but_the_result() {
    let test = "quiet_aging_says_nothing_but_the_result";
    let Some((fs, dir, profile)) = small_aging(test, "tmpfs", 32 << 20) else {
        return;
    };
    let out = dir.path().join("age.json");
    // The second aging adds to what the first left: fill counts the whole file system.
    let age = |seed: &str, fill: &str, quiet: &[&str]| {
        let args = [
            "age",
            s(fs.path()),
            "--profile",
            s(&profile),
            "--fill",
            fill,
            "--seed",
            seed,
            "-o",
            s(&out),
        ];
        let o = iolab(&[&args[..], quiet].concat());
        assert!(o.status.success(), "{}", common::stderr(&o));
        common::stderr(&o)
    };
    let quiet = age("1", "40%", &["-q"]);
    let lines: Vec<&str> = quiet
        .lines()
        .filter(|l| !l.starts_with("warning") && !l.starts_with("iolab: cleaned up"))
        .collect();
    assert_eq!(lines, [format!("results: {}", out.display())], "{quiet}");
    let told = age("2", "80%", &[]);
    assert!(told.contains("the aged tree stays in"), "{told}");
}

/// A result measured on an aged file system says so: `iolab files` on one recorded
/// nothing of the aging (its environment held the file system type only), and `compare` of
/// it against a run on the fresh file system read as two alike file systems.
#[test]
fn a_result_on_an_aged_file_system_says_so_and_compare_tells_it_from_a_fresh_one() {
    let test = "a_result_on_an_aged_file_system_says_so_and_compare_tells_it_from_a_fresh_one";
    let Some((fs, dir, profile)) = small_aging(test, "tmpfs", 32 << 20) else {
        return;
    };
    let files = |out: &Path| {
        iolab(&[
            "files",
            s(fs.path()),
            "--sizes",
            "4K",
            "--files-per-portion",
            "20",
            "--portions",
            "1",
            "--passes",
            "1",
            "--repeat",
            "1",
            "-o",
            s(out),
            "-q",
        ])
    };
    let fresh = dir.path().join("fresh.json");
    let o = files(&fresh);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(
        !common::stderr(&o).contains("aged"),
        "{}",
        common::stderr(&o)
    );
    let o = iolab(&[
        "age",
        s(fs.path()),
        "--profile",
        s(&profile),
        "--no-save",
        "-q",
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let aged = dir.path().join("aged.json");
    let o = files(&aged);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let note = common::stderr(&o);
    assert!(
        note.contains("% full, aged (iolab-aged-1) by `iolab age`"),
        "{note}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&aged).unwrap()).unwrap();
    let st = &doc["environment"]["fs_state"];
    let tree = std::fs::canonicalize(fs.path().join("iolab-aged-1")).unwrap();
    assert_eq!(st["aged_trees"], serde_json::json!([s(&tree)]), "{st}");
    let full = st["used_bytes"].as_f64().unwrap() / st["size_bytes"].as_f64().unwrap();
    assert!(full > 0.7, "aged to 80 %: {st}");
    let fresh_doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&fresh).unwrap()).unwrap();
    assert!(fresh_doc["environment"]["fs_state"]["aged_trees"].is_null());
    let c = json_ok(&iolab(&["compare", s(&fresh), s(&aged), "--json"]));
    assert!(
        c["files"][1]["fs_state"]
            .as_str()
            .is_some_and(|d| d.ends_with("% full, aged (iolab-aged-1)")),
        "{}",
        c["files"]
    );
    let w = &c["pairings"][0]["warnings"];
    assert!(
        w.as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == "aging-differs"
                && w["message"]
                    .as_str()
                    .unwrap()
                    .contains("not aged, B on one")),
        "{w}"
    );
}

/// A FUSE file system has no FIEMAP: aging ntfs-3g scored no file at all ("not readable:
/// 3014 files", layout `-`) while `filefrag` listed every file's extents (through FIBMAP).
/// The final layout maps them block by block, as filefrag does, and says so.
#[test]
fn aging_a_fuse_file_system_scores_its_layout_block_by_block() {
    let test = "aging_a_fuse_file_system_scores_its_layout_block_by_block";
    let Some((fs, _dir, profile)) = small_aging(test, "ntfs", 64 << 20) else {
        return;
    };
    let doc = json_ok(&iolab(&[
        "age",
        s(fs.path()),
        "--profile",
        s(&profile),
        "--no-save",
        "--json",
        "-q",
    ]));
    let l = &doc["tests"][0]["age"]["layout_after"];
    let files = doc["tests"][0]["age"]["files_left"].as_u64().unwrap();
    assert!(files > 0, "{l}");
    assert_eq!(l["files"].as_u64(), Some(files), "{l}");
    assert_eq!(l["files_mapped_by_block"].as_u64(), Some(files), "{l}");
    assert_eq!(l["files_unreadable"].as_u64(), Some(0), "{l}");
    assert!(l["layout_score"].as_f64().is_some_and(|v| v > 0.5), "{l}");
    let text = common::stdout(&iolab(&[
        "info",
        s(&fs.path().join("iolab-aged-1")),
        "--layout",
        "--no-smart",
    ]));
    assert!(
        text.contains("with FIBMAP, block by block, as filefrag does"),
        "{text}"
    );
}

/// A churn smaller than the fullness asked ends before it: aging said "22.3 % full" after
/// `--fill 80% --churn 0.2`, exit 0, and nothing more. It must say that the fullness was not
/// reached, how full it got, and the churn that gets there (the JSON has the warning; the
/// table's line has the fullness asked beside the one reached).
#[test]
fn a_churn_that_ends_before_the_fullness_is_said() {
    let test = "a_churn_that_ends_before_the_fullness_is_said";
    let Some((fs, _dir, profile)) = small_aging(test, "tmpfs", 32 << 20) else {
        return;
    };
    let args = [
        "age",
        s(fs.path()),
        "--profile",
        s(&profile),
        "--fill",
        "80%",
        "--churn",
        "0.2",
        "--no-save",
    ];
    let out = iolab(&args);
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    let text = common::stdout(&out);
    assert!(text.contains("% full (80 % asked)"), "{text}");
    assert!(
        text.contains("warning [fill-not-reached]: aging ended at")
            && text.contains("short of the 80 % asked"),
        "{text}"
    );
    std::fs::remove_dir_all(fs.path().join("iolab-aged-1")).unwrap();
    let doc = json_ok(&iolab(&[&args[..], &["--json", "-q"]].concat()));
    let a = &doc["tests"][0]["age"];
    assert_eq!(a["files_deleted"], 0, "{a}");
    assert!(a["fullness"].as_f64().unwrap() < 0.3, "{a}");
    let w: Vec<_> = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["code"] == "fill-not-reached")
        .collect();
    assert_eq!(w.len(), 1, "{}", doc["warnings"]);
    std::fs::remove_dir_all(fs.path().join("iolab-aged-1")).unwrap();
}

/// The aging thread that shares its CPU with a busy program waits for it, and the aging's
/// rate (`file_ops_per_s`, in the files line) includes the wait: `cpu-contention` says so,
/// with the figure in `age.cpu_wait_pct` (iolab and a spinning thread pinned to one CPU, so
/// one writer: the plan's own thread). Only its presence is asserted.
#[test]
fn an_aging_thread_sharing_its_cpu_with_a_busy_program_is_warned_of() {
    let test = "an_aging_thread_sharing_its_cpu_with_a_busy_program_is_warned_of";
    let Some((fs, _dir, profile)) = small_aging(test, "tmpfs", 32 << 20) else {
        return;
    };
    let mut cmd = common::bin();
    cmd.args([
        "age",
        s(fs.path()),
        "--profile",
        s(&profile),
        "--churn",
        "4",
        "--no-save",
        "--json",
    ]);
    let at = Some("/age/cpu_wait_pct");
    common::contention_beside_a_spinner(test, &mut cmd, at, "the aging thread");
}

#[test]
fn the_profiles_are_listed() {
    let out = iolab(&["age", "--list-profiles"]);
    assert!(out.status.success());
    let text = common::stdout(&out);
    for p in ["desktop", "media", "source-tree"] {
        assert!(text.contains(p), "{text}");
    }
}

/// The help's pointer to the layout score later names the flag that shows it: plain
/// `iolab info TARGET` prints no layout.
#[test]
fn help_points_to_info_layout() {
    let out = iolab(&["age", "--help"]);
    let text = common::stdout(&out);
    assert!(text.contains("`iolab info TARGET --layout`"), "{text}");
}

#[test]
fn matrix_measures_fresh_and_aged_and_leaves_nothing() {
    let test = "matrix_measures_fresh_and_aged_and_leaves_nothing";
    if !common::loop_or_skip(test) {
        return;
    }
    let Some(base) = common::ram_tempdir_or_skip(test) else {
        return;
    };
    if !common::tool_or_skip(test, "mkfs.ext4", "e2fsprogs")
        || !common::tool_or_skip(test, "mkfs.btrfs", "btrfs-progs")
    {
        return;
    }
    let out = iolab(&[
        "matrix",
        "--fs",
        "ext4,btrfs",
        "--image-dir",
        s(base.path()),
        "--image-size",
        "512M",
        "--workload",
        "copy:dataset=office-docs:scale=0.1:phases=write,read,delete",
        "--age",
        "source-tree",
        "--age-churn",
        "0.5",
        "--age-fill",
        "60%",
        "--output",
        s(&base.path().join("results")),
    ]);
    let text = common::stdout(&out);
    assert!(out.status.success(), "{}\n{}", text, common::stderr(&out));
    assert!(text.contains("Fresh vs aged"), "{text}");
    let results = common::entries(&base.path().join("results"));
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&results[0]).unwrap()).unwrap();
    for c in doc["configurations"].as_array().unwrap() {
        let label = c["label"].as_str().unwrap();
        assert_eq!(c["status"], "ok", "{label}: {}", c["reason"]);
        // A churn of 0.5 ends before 60 % full: each configuration says so (the aged rows
        // passed for an aged file system without a word).
        assert!(
            doc["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|w| { w["code"] == "fill-not-reached" && w["test"].as_str() == Some(label) }),
            "{label}: {}",
            doc["warnings"]
        );
        let age = &c["runs"][0]["age"];
        assert!(
            age["layout_after"]["layout_score"].as_f64().is_some(),
            "{label}: {age}"
        );
        let workloads: Vec<&str> = c["tests"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["params"]["matrix_workload"].as_str())
            .collect();
        assert!(
            workloads.iter().any(|w| w.ends_with("(aged)"))
                && workloads.iter().any(|w| !w.ends_with("(aged)")),
            "{label}: fresh and aged tests: {workloads:?}"
        );
    }
    // Only the result file is left.
    assert_eq!(common::names(base.path()), vec!["results".to_string()]);
}

#[test]
fn an_interrupted_aging_removes_what_it_wrote() {
    let test = "an_interrupted_aging_removes_what_it_wrote";
    let Some(fs) = ram_scratch_or_skip(test, "ext4", 512 << 20, &[], "") else {
        return;
    };
    let before = common::names(fs.path());
    let child = common::bin()
        .args([
            "age",
            s(fs.path()),
            "--profile",
            "source-tree",
            "--churn",
            "1000",
            "--no-save",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let aged = fs.path().join("iolab-aged-1");
    // Files are being written (the tree exists and holds more than its directories).
    assert!(
        common::wait_until(std::time::Duration::from_secs(120), || {
            file_set(&aged).len() > 100
        }),
        "aging did not start writing within 120 s"
    );
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", common::stderr(&out));
    // It printed "no aging result".
    assert_eq!(
        common::stdout(&out),
        "aging was interrupted: the files it wrote are removed, nothing aged is kept\n"
    );
    assert!(!aged.exists(), "the partly aged tree is removed");
    assert_eq!(common::names(fs.path()), before);
}

/// Regression: aging a small tmpfs to 100 % with two writers hung for good about one time in
/// two (a writer stopped on ENOSPC with the plan's flush still in its queue, and the plan
/// waited for its answer forever, deaf to the first Ctrl-C). It must end with the writer's
/// error, exit 1, and leave nothing behind. Whether the ENOSPC lands on a queued flush
/// depends on the threads' timing, so six seeds are run (each a fraction of a second); the
/// 120 s limit is only a hang detector, far above what a run takes on a loaded machine.
#[test]
fn filling_up_with_two_writers_ends_with_the_error() {
    let test = "filling_up_with_two_writers_ends_with_the_error";
    let Some((fs, _dir, profile)) = small_aging(test, "tmpfs", 48 << 20) else {
        return;
    };
    let before = common::names(fs.path());
    for seed in 1..=6 {
        let seed = seed.to_string();
        let mut child = common::bin()
            .args(["age", s(fs.path()), "--profile", s(&profile)])
            .args(["--fill", "100%", "--jobs", "2", "--seed", &seed])
            .args(["--no-save", "-q"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let ended = common::wait_until(std::time::Duration::from_secs(120), || {
            child.try_wait().unwrap().is_some()
        });
        if !ended {
            let _ = child.kill();
            let _ = child.wait();
            panic!("seed {seed}: aging a full file system with two writers hung (>120 s)");
        }
        let out = child.wait_with_output().unwrap();
        let err = common::stderr(&out);
        assert_eq!(out.status.code(), Some(1), "seed {seed}: {err}");
        assert!(
            err.contains("No space left on device") && err.contains("cannot write"),
            "seed {seed}: the writer's own error: {err}"
        );
        // What happened and what to do, not ENOSPC alone.
        assert!(
            err.contains("the file system filled up before aging to 100 % full")
                && err.contains("give a lower --fill (98% or less)"),
            "seed {seed}: {err}"
        );
        assert_eq!(common::names(fs.path()), before, "seed {seed}: all removed");
    }
}

/// The free space under the layout after aging is that of the mounted file system: on xfs
/// `xfs_db` read the device's allocation groups as last written, which lag the log, and
/// reported 235.8 MiB free on a 300 MiB xfs aged to 98 % (df: 3.9 MiB).
#[test]
fn the_free_space_after_aging_xfs_is_the_file_systems() {
    let test = "the_free_space_after_aging_xfs_is_the_file_systems";
    if !common::tool_or_skip(test, "xfs_spaceman", "xfsprogs") {
        return;
    }
    let Some(fs) = ram_scratch_or_skip(test, "xfs", 300 << 20, &[], "") else {
        return;
    };
    let out = iolab(&[
        "age",
        s(fs.path()),
        "--profile",
        "source-tree",
        "--fill",
        "90%",
        "--churn",
        "1",
        "--no-save",
        "--json",
        "-q",
    ]);
    let doc = json_ok(&out);
    let after = &doc["tests"][0]["age"]["layout_after"];
    let reported = after["free_space"]["free_bytes"].as_f64().unwrap();
    let st = nix::sys::statvfs::statvfs(fs.path()).unwrap();
    let free = st.blocks_free() as f64 * st.fragment_size() as f64;
    // Within a tenth of the file system (xfs keeps a little outside the free-space btrees).
    assert!(
        (reported - free).abs() < 30e6,
        "reported {reported} B free, statvfs {free} B: {after}"
    );
    std::fs::remove_dir_all(fs.path().join("iolab-aged-1")).unwrap();
}

/// xfs preallocates past the end of files that grow and keeps it after close for minutes:
/// aging a 1 GiB xfs to 80 % read 88.5 % full (and 91 % on the way), 97 MB of which
/// `xfs_spaceman -c 'prealloc -s'` gave back at once. The fullness read is now the files'
/// own. The plan decides on its own count of whole blocks, so the end sits at the fullness
/// asked within a few points whatever the machine; 5 points of margin (the last deletes
/// may leave it a little under).
#[test]
fn aging_xfs_reads_the_fullness_without_its_preallocation() {
    let test = "aging_xfs_reads_the_fullness_without_its_preallocation";
    if !common::tool_or_skip(test, "xfs_spaceman", "xfsprogs") {
        return;
    }
    let Some(fs) = ram_scratch_or_skip(test, "xfs", 1 << 30, &[], "") else {
        return;
    };
    let out = iolab(&[
        "age",
        s(fs.path()),
        "--churn",
        "1.2",
        "--no-save",
        "--json",
        "-q",
    ]);
    let doc = json_ok(&out);
    let age = &doc["tests"][0]["age"];
    let full = age["fullness"].as_f64().unwrap();
    assert!((0.75..=0.82).contains(&full), "ended {full} full: {age}");
    for p in age["progress"].as_array().unwrap() {
        let f = p["fullness"].as_f64().unwrap();
        assert!(f <= 0.82, "{f} full on the way: {p}");
    }
    std::fs::remove_dir_all(fs.path().join("iolab-aged-1")).unwrap();
}

/// A full fill on xfs is refused before anything is written, with the highest fullness that
/// fits: `--fill 100%` on a fresh 1 GiB xfs was accepted, wrote 900 MiB and failed with no
/// space (exit 1): the room check counted the files' blocks, not the inodes and directories
/// xfs makes for them, nor the plan's rounding of the used space. What it names is taken
/// (1.5x churn: the plan ages past the fullness, deleting to make room).
#[test]
fn a_full_fill_on_xfs_is_refused_with_the_highest_that_fits() {
    let test = "a_full_fill_on_xfs_is_refused_with_the_highest_that_fits";
    let Some(fs) = ram_scratch_or_skip(test, "xfs", 1 << 30, &[], "") else {
        return;
    };
    let age = |fill: &str| {
        iolab(&[
            "age",
            s(fs.path()),
            "--fill",
            fill,
            "--churn",
            "1.5",
            "--no-save",
            "-q",
        ])
    };
    let before = common::names(fs.path());
    let out = age("100%");
    let err = common::stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("room for 99 % at most") && err.contains("(inodes, directories)"),
        "{err}"
    );
    assert_eq!(common::names(fs.path()), before, "nothing written");
    let out = age("99%");
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    std::fs::remove_dir_all(fs.path().join("iolab-aged-1")).unwrap();
}

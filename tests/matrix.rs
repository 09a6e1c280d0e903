//! `iolab matrix` end to end on real file systems over loop devices: allocation units read
//! back at two sizes per type, tiny workloads, a fresh file system per run, an allowed
//! device, files outside iolab's directory untouched, bad input refused before anything is
//! made. Needs root and loop devices; skips loudly otherwise.

mod common;
mod matrix_support;

use std::path::Path;

use iolab::model::ResultDoc;
use matrix_support::*;

/// Every configuration formatted with the asked unit, read back equal, workload run.
fn check_units(doc: &ResultDoc, expect_fs: &[&str]) {
    assert_eq!(doc.command, "matrix");
    for c in &doc.configurations {
        if c.status == "skipped" {
            panic!("{} skipped here: {:?}", c.label, c.reason);
        }
        assert!(expect_fs.contains(&c.fs_type.as_str()), "{}", c.fs_type);
        let actual = c.cluster_bytes_actual.expect("unit read back");
        if let Some(asked) = c.cluster_bytes {
            assert_eq!(actual, asked, "{}: unit made differs", c.label);
        }
        assert_eq!(c.runs.len(), 1, "{}", c.label);
        assert!(c.runs[0].mkfs_ns > 0 || c.fs_type == "tmpfs", "{}", c.label);
        assert!(!c.runs[0].space.is_empty(), "{}: df recorded", c.label);
        match c.status.as_str() {
            "ok" => {
                assert!(!c.tests.is_empty(), "{}: tests", c.label);
                assert!(
                    c.tests
                        .iter()
                        .all(|t| t.config.as_deref() == Some(c.label.as_str()))
                );
                assert!(c.tests.iter().all(|t| !t.runs.is_empty()));
            }
            // A workload that cannot run on this file system keeps its error in the row.
            _ => {
                let why = c.reason.clone().unwrap_or_default();
                assert!(why.contains("run:"), "{}: {why}", c.label);
                eprintln!("NOTE {}: workload failed there: {why}", c.label);
            }
        }
    }
}

/// A mount option the kernel refuses is a usage error on one line (mount's stderr came
/// framed on three more lines), and the probe's image and loop device are gone.
#[test]
fn a_rejected_mount_option_is_one_line() {
    if !can_run("a_rejected_mount_option_is_one_line") {
        return;
    }
    let stderr = rejected_option("ext4", &[]);
    assert!(stderr.contains("exit code 32"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
}

/// `matrix --fs FS --mount-opts iolab_no_such_option EXTRA`: refused up front (exit 2),
/// naming the option and the file system, with nothing left behind; its stderr.
fn rejected_option(fs: &str, extra: &[&str]) -> String {
    let area = Area::new();
    let mut args = vec!["--fs", fs, "--mount-opts", "iolab_no_such_option"];
    args.extend_from_slice(extra);
    let out = bin().args(area.args(&args)).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "--mount-opts 'iolab_no_such_option' is rejected by {fs}"
        )),
        "{stderr}"
    );
    area.assert_clean();
    stderr
}

/// fusefat given an option FUSE does not know prints `fuse: unknown option` and exits 0
/// with nothing mounted: that is a rejected option too, not a "vfat" row whose files went
/// to the mount-point directory on the image dir's own file system.
#[test]
fn a_fuse_helper_that_mounts_nothing_is_a_rejected_option() {
    let test = "a_fuse_helper_that_mounts_nothing_is_a_rejected_option";
    if !can_run(test) || !common::tool_or_skip(test, "fusefat", "fusefat") {
        return;
    }
    let stderr = rejected_option(
        "vfat",
        &["--image-size", "256M", "--workload", TINY, "--repeat", "1"],
    );
    assert!(stderr.contains("nothing is mounted on"), "{stderr}");
}

/// The tiny workload run once on FAT32 through fusefat, on a 260 MiB image (the smallest
/// that holds 4 KiB clusters), with `extra`; the result. `None`: `test` skipped (said).
fn fat32_run(test: &str, extra: &[&str]) -> Option<iolab::model::ResultDoc> {
    if !can_run(test) || !common::tool_or_skip(test, "fusefat", "fusefat") {
        return None;
    }
    let area = Area::new();
    let mut args = vec![
        "--fs",
        "fat32",
        "--image-size",
        "260M",
        "--workload",
        TINY,
        "--repeat",
        "1",
    ];
    args.extend(extra);
    Some(run_ok(&area, &args))
}

/// A FAT32 needs 65,525 clusters: 64 KiB clusters on a 260 MiB image (4,157 clusters) are a
/// skipped row with the size they need, not an out-of-spec volume mkfs.vfat makes with a
/// warning and the matrix measured as "vfat 64KiB"; 4 KiB clusters (66,170) run.
#[test]
fn a_fat32_with_too_few_clusters_is_skipped() {
    let Some(doc) = fat32_run(
        "a_fat32_with_too_few_clusters_is_skipped",
        &["--cluster", "4K,64K"],
    ) else {
        return;
    };
    let [small, big] = &doc.configurations[..] else {
        panic!("two rows: {:?}", doc.configurations);
    };
    assert_eq!(small.status, "ok", "{:?}", small.reason);
    assert_eq!(big.status, "skipped");
    let why = big.reason.as_deref().unwrap_or_default();
    assert!(
        why.contains("vfat clusters of 64KiB need at least 4.0 GiB (65,525 clusters)"),
        "{why}"
    );
    assert!(big.runs.is_empty());
}

/// `matrix ARGS --setup-only` (exit 0, nothing left behind) and its
/// `mount-options-unchecked` warnings; `None` (skipped loudly) when its first row could not
/// be made here.
fn unchecked_options(test: &str, args: &[&str]) -> Option<Vec<iolab::model::Warning>> {
    let area = Area::new();
    let mut all = args.to_vec();
    all.push("--setup-only");
    let (doc, _) = area.run_expecting(&area.args(&all), 0);
    if doc.configurations[0].status == "skipped" {
        common::skip(test, doc.configurations[0].reason.as_deref().unwrap_or(""));
        return None;
    }
    Some(
        doc.warnings
            .into_iter()
            .filter(|w| w.code.as_str() == "mount-options-unchecked")
            .collect(),
    )
}

/// mount.exfat-fuse mounts `-o noatime,iolab_no_such_option` without an error and shows
/// neither (it mounts relatime): the row says so (`mount-options-unchecked`), once for its
/// two runs; a kernel mount's options are judged by the kernel and get no such warning.
#[test]
fn options_a_fuse_helper_dropped_are_named() {
    let test = "options_a_fuse_helper_dropped_are_named";
    if !can_run(test) || !common::tool_or_skip(test, "mount.exfat-fuse", "exfat-fuse") {
        return;
    }
    let Some(w) = unchecked_options(
        test,
        &[
            "--fs",
            "exfat,ext4",
            "--mount-opts",
            "noatime",
            "--image-size",
            "128M",
            "--repeat",
            "2",
        ],
    ) else {
        return;
    };
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].test.as_deref(), Some("exfat noatime"));
    assert!(
        w[0].message.contains("do not show noatime"),
        "{}",
        w[0].message
    );
}

#[test]
fn kernel_file_systems_at_two_units_each() {
    if !can_run("kernel_file_systems_at_two_units_each") {
        return;
    }
    let area = Area::new();
    let doc = run_ok(
        &area,
        &[
            "--fs",
            "ext2,ext3,ext4,xfs",
            "--cluster",
            "1K,4K",
            "--image-size",
            "320M",
            "--workload",
            TINY,
            "--repeat",
            "1",
        ],
    );
    assert_eq!(doc.configurations.len(), 8);
    check_units(&doc, &["ext2", "ext3", "ext4", "xfs"]);
    assert!(doc.configurations.iter().all(|c| c.status == "ok"));
}

#[test]
fn fuse_file_systems_at_two_units_each() {
    if !can_run("fuse_file_systems_at_two_units_each") {
        return;
    }
    let area = Area::new();
    let doc = run_ok(
        &area,
        &[
            "--fs",
            "ntfs,exfat,fat32",
            "--cluster",
            "1K,4K",
            // FAT32 of 4 KiB clusters needs 257 MiB (65,525 clusters).
            "--image-size",
            "260M",
            "--workload",
            TINY,
            "--repeat",
            "1",
        ],
    );
    let ran: Vec<&str> = doc
        .configurations
        .iter()
        .filter(|c| c.status != "skipped")
        .map(|c| c.fs_type.as_str())
        .collect();
    for c in doc.configurations.iter().filter(|c| c.status == "skipped") {
        common::skip(
            &format!("fuse_file_systems_at_two_units_each ({})", c.label),
            c.reason.as_deref().unwrap_or("skipped by iolab"),
        );
    }
    if ran.is_empty() {
        return;
    }
    let doc = ResultDoc {
        configurations: doc
            .configurations
            .into_iter()
            .filter(|c| c.status != "skipped")
            .collect(),
        ..doc
    };
    check_units(&doc, &["ntfs", "exfat", "vfat"]);
}

/// A matrix of one file system this machine cannot make (any, without root) is refused
/// before anything is created: exit 2 with the reason, no work directory, no result file.
/// (It printed a table of skipped rows, saved a result with status `failed` and exited 1.)
#[test]
fn a_matrix_where_every_configuration_would_be_skipped_is_refused() {
    let test = "a_matrix_where_every_configuration_would_be_skipped_is_refused";
    let Some(fs) = iolab::fs::types::FS_TYPES
        .iter()
        .find(|t| iolab::fs::detect::availability(t).is_err())
    else {
        common::skip(test, "this machine can make every file system iolab knows");
        return;
    };
    let why = iolab::fs::detect::availability(fs).unwrap_err();
    let area = Area::new();
    let _g = EXCLUSIVE.read().unwrap();
    let args = area.args(&["--fs", fs.name, "--repeat", "1", "--image-size", "256M"]);
    let out = bin().args(&args).output().unwrap();
    let said = if iolab::os::is_root() {
        format!(
            "nothing can be measured here: every configuration would be skipped ({}: {why})",
            fs.name
        )
    } else {
        "that needs root".to_string()
    };
    common::assert_usage(&out, &said);
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(!area.out.exists(), "no result directory");
    assert!(area.work_dir().is_none(), "no work directory");
    area.assert_clean();
}

/// An image smaller than a file system needs says how to fix it: the row read only "xfs
/// needs at least 300.0 MiB, the image is 256.0 MiB", not the flag that gives it room.
#[test]
fn an_image_too_small_for_a_file_system_names_the_size_to_give() {
    let test = "an_image_too_small_for_a_file_system_names_the_size_to_give";
    if !iolab::os::is_root() {
        common::skip(
            test,
            "needs root (the matrix refuses before planning without it)",
        );
        return;
    }
    let xfs = iolab::fs::types::lookup("xfs").unwrap();
    if let Err(why) = iolab::fs::detect::availability(xfs) {
        common::skip(test, format!("xfs cannot be made here: {why}"));
        return;
    }
    let area = Area::new();
    let _g = EXCLUSIVE.read().unwrap();
    let args = area.args(&["--fs", "xfs", "--repeat", "1", "--image-size", "256M"]);
    let out = bin().args(&args).output().unwrap();
    common::assert_usage(
        &out,
        "xfs: xfs needs at least 300.0 MiB, the image is 256.0 MiB (--image-size 300MiB or more)",
    );
    assert!(!area.out.exists(), "no result directory");
    area.assert_clean();
}

/// Without root every configuration needs what this user may not do: said up front, exit 2.
#[test]
fn without_root_the_matrix_says_it_needs_root() {
    let test = "without_root_the_matrix_says_it_needs_root";
    let dir = common::tempdir();
    let place = dir.path().join("work");
    std::fs::create_dir(&place).unwrap();
    let results = place.join("results");
    let args = [
        "matrix",
        "--fs",
        "ext4,tmpfs",
        "--image-dir",
        common::s(&place),
        "--output",
        common::s(&results),
    ];
    let out = if iolab::os::is_root() {
        use std::os::unix::fs::PermissionsExt;
        if !common::tool_or_skip(test, "setpriv", "util-linux") {
            return;
        }
        for d in [dir.path(), place.as_path()] {
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o777)).unwrap();
        }
        let bin = common::binary_for_nobody();
        std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&bin.path)
            .args(args)
            .env("IOLAB_NO_HISTORY", "1")
            .output()
            .unwrap()
    } else {
        iolab(&args)
    };
    common::assert_usage(
        &out,
        "iolab matrix formats and mounts file systems (loop devices, mkfs, mount): that needs root (running as uid ",
    );
    assert_eq!(
        common::names(&place),
        Vec::<String>::new(),
        "nothing created"
    );
}

#[test]
fn btrfs_bigalloc_and_tmpfs() {
    if !can_run("btrfs_bigalloc_and_tmpfs") {
        return;
    }
    let area = Area::new();
    // btrfs and tmpfs take one unit here (the page size): the default and 4K must agree;
    // ext4 bigalloc clusters are the second ext4 unit above the block size.
    let doc = run_ok(
        &area,
        &[
            "--fs",
            "btrfs,tmpfs",
            "--cluster",
            "default,4K",
            "--image-size",
            "200M",
            "--workload",
            TINY,
            "--repeat",
            "2",
            "--mount-opts",
            "noatime",
        ],
    );
    check_runs_of_two(&doc);
    let doc = run_ok(
        area_fresh_out(&area),
        &[
            "--fs",
            "ext4",
            "--cluster",
            "16K",
            "--image-size",
            "256M",
            "--workload",
            TINY,
            "--repeat",
            "1",
        ],
    );
    assert_eq!(doc.configurations[0].cluster_bytes_actual, Some(16384));
    assert_eq!(doc.configurations[0].status, "ok");
}

/// The spread over a configuration's fresh file systems is judged once its last run is in:
/// `--repeat auto` that stops at its maximum says the interval was not reached. (The check
/// once ran before the last run was counted, so the matrix never gave a spread warning.)
#[test]
fn the_spread_over_a_configurations_runs_is_judged() {
    if !can_run("the_spread_over_a_configurations_runs_is_judged") {
        return;
    }
    let area = Area::new();
    let doc = run_ok(
        &area,
        &[
            "--fs",
            "tmpfs",
            "--workload",
            TINY,
            "--repeat",
            "auto",
            "--max-repeat",
            "2",
            "--target-ci",
            "0.0001",
        ],
    );
    assert_eq!(doc.configurations[0].runs.len(), 2);
    assert!(
        doc.warnings
            .iter()
            .any(|w| w.code == iolab::model::WarningCode::CiNotReached),
        "{:#?}",
        doc.warnings
    );
}

/// `--age`: a warning of the aged runs carried the fresh runs' name (`tmpfs`, `ext4: 4KiB
/// create`), so a reader could not tell which run it was about, and one that read the same
/// (tmpfs has no device counters, fresh or aged) was kept once. Now `tmpfs: aged`, as the
/// tables call the aged runs; two workloads of one family name theirs.
#[test]
fn warnings_of_the_aged_runs_say_aged() {
    if !can_run("warnings_of_the_aged_runs_say_aged") {
        return;
    }
    let area = Area::new();
    let other = "run:preset=real:duration=200ms:ramp=0:size=4M:repeat=1";
    let doc = run_ok(
        &area,
        &[
            "--fs",
            "tmpfs",
            "--image-size",
            "256M",
            "--workload",
            TINY,
            "--workload",
            other,
            "--repeat",
            "1",
            "--age",
            "source-tree",
            "--age-fill",
            "30%",
            "--age-churn",
            "0.2",
        ],
    );
    let named: Vec<&str> = doc
        .warnings
        .iter()
        .filter(|w| w.code == iolab::model::WarningCode::NoDeviceCounters)
        .filter_map(|w| w.test.as_deref())
        .collect();
    let labels: Vec<&str> = doc.configurations[0]
        .workloads
        .iter()
        .map(|o| o.workload.as_str())
        .filter(|w| !w.ends_with("(aged)"))
        .collect();
    assert_eq!(labels.len(), 2, "{labels:?}");
    for l in labels {
        for want in [format!("tmpfs: {l}"), format!("tmpfs: aged: {l}")] {
            assert!(named.contains(&want.as_str()), "{want}: {named:?}");
        }
    }
    // Every test's runs are in the CSV report, each test named apart: the CSV kept one test
    // per (configuration, name) and dropped the other workload's and every aged one.
    let tests: Vec<_> = doc.configurations[0].tests.iter().collect();
    let names: std::collections::BTreeSet<String> = tests
        .iter()
        .map(|t| iolab::report::metrics::test_name(&doc, t))
        .collect();
    assert_eq!(names.len(), tests.len(), "{names:?}");
    let csv = area.base.join("r.csv");
    let out = bin()
        .args(["report", common::s(&area.out), "-o", common::s(&csv)])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let runs: usize = tests.iter().map(|t| t.runs.len()).sum();
    assert_eq!(text.lines().count(), 1 + runs, "{text}");
}

fn area_fresh_out(a: &Area) -> &Area {
    let _ = std::fs::remove_dir_all(&a.out);
    a
}

fn check_runs_of_two(doc: &ResultDoc) {
    assert_eq!(doc.configurations.len(), 4);
    for c in &doc.configurations {
        assert_eq!(c.status, "ok", "{}: {:?}", c.label, c.reason);
        assert_eq!(c.cluster_bytes_actual, Some(4096));
        assert_eq!(c.mount_options, "noatime");
        // A fresh file system per run: two mkfs (tmpfs: two mounts) per configuration.
        assert_eq!(c.runs.len(), 2, "{}", c.label);
        let t = &c.tests[0];
        assert_eq!(t.runs.iter().map(|r| r.run).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(t.summary["iops"].n, 2);
    }
}

#[test]
fn an_allowed_device_is_formatted_for_every_run() {
    if !can_run("an_allowed_device_is_formatted_for_every_run") {
        return;
    }
    let _g = EXCLUSIVE.read().unwrap();
    let area = Area::new();
    // A loop device of the test's own (never a real disk), not mounted.
    let img = area.base.parent().unwrap().join("device.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(128 << 20)
        .unwrap();
    let lo = iolab::fs::loopdev::LoopDevice::attach(&img, false).unwrap();
    let dev = lo.device.display().to_string();
    let out = bin()
        .args([
            "matrix",
            "--fs",
            "ext4,exfat",
            "--cluster",
            "4K",
            "--device",
            &dev,
        ])
        .args([
            "--allow-destroy",
            &dev,
            "--workload",
            TINY,
            "--repeat",
            "2",
            "--no-save",
            "--json",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let doc: ResultDoc = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc.configurations.len(), 2);
    for c in &doc.configurations {
        assert_eq!(c.status, "ok", "{}: {:?}", c.label, c.reason);
        assert_eq!(c.cluster_bytes_actual, Some(4096));
        assert_eq!(c.runs.len(), 2);
        assert_eq!(c.size_bytes, Some(128 << 20));
        // No image was made (its time was a few µs: "0" in the "image ms" column).
        assert!(c.runs.iter().all(|r| r.image_ns == 0), "{:?}", c.runs);
        assert!(c.runs.iter().all(|r| r.mkfs_ns > 0), "{:?}", c.runs);
    }
    // Torn down: the device is no longer mounted, and is still attached (ours to detach).
    assert!(iolab::cli::checks::device_in_use(&lo.device).is_none());
    assert!(Path::new(&format!("/sys/block/{}/loop/backing_file", lo.name())).exists());
    drop(lo);
    area.assert_clean();
}

#[test]
fn bad_input_is_refused_before_anything_is_made() {
    let area = Area::new();
    let cases: &[(&[&str], &str)] = &[
        (&["--fs", "ext4,zfs"], "unknown file system 'zfs'"),
        (&["--fs", "xfs", "--cluster", "512"], "valid: 1KiB"),
        (&["--fs", "btrfs", "--cluster", "64K"], "valid: 4KiB"),
        (&["--fs", "ext4", "--cluster", "3000"], "power of two"),
        (
            &["--fs", "ext4", "--workload", "nosuch:x=1"],
            "unknown workload family",
        ),
        (
            &["--fs", "ext4", "--workload", "run:bogus=1"],
            "workload run",
        ),
        // Checked like `iolab run` before any mkfs (it was a runtime failure afterwards).
        (
            &["--fs", "ext4", "--workload", "run:duration=0s"],
            "--duration 0",
        ),
        (&["--fs", "ext4", "--workload", "run:bs=1000"], "--bs 1000"),
        (
            &["--fs", "ext4", "--workload", "files:portions=0"],
            "--portions 0",
        ),
        (
            &["--fs", "ext4", "--mount-opts", "no atime"],
            "without spaces",
        ),
        // A scope is only useful for a file system measured: it names the --fs list.
        (
            &["--fs", "ext4,xfs", "--mount-opts", "btrfs:compress=zstd"],
            "btrfs is not one of the file systems measured (--fs ext4,xfs)",
        ),
        (
            &["--fs", "ext4", "--full"],
            "--full is only for --study cluster",
        ),
        (&["--fs", "ext4", "--repeat", "0"], "--repeat 0"),
        (&["--fs", "ext4", "--image-size", "1M"], "at least 16MiB"),
        // A size list that no allocation unit can make sense of: refused before any mkfs
        // (it failed every configuration's row after formatting it).
        (
            &["--fs", "ext4", "--workload", "files:sizes=1,abc"],
            "--sizes: 'abc' does not parse",
        ),
        (
            &["--fs", "ext4", "--workload", "files:sizes=cluster*2"],
            "has text after 'cluster'",
        ),
        // Negative values reach the flag's own check (clap said "unexpected argument").
        (&["--fs", "ext4", "--cluster", "-4K"], "--cluster -4K"),
        (
            &["--fs", "ext4", "--age", "desktop", "--age-churn", "-1"],
            "--age-churn -1",
        ),
        (
            &["--fs", "ext4", "--age", "desktop", "--age-fill", "-5%"],
            "--age-fill '-5%'",
        ),
        (
            &["--fs", "ext4", "--workload", "files:jobs=-1"],
            "invalid value '-1' for '--jobs",
        ),
    ];
    for (extra, want) in cases {
        let args = area.args(extra);
        let out = bin().args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains(want), "{extra:?}: {stderr}");
        assert!(area.work_dir().is_none(), "{extra:?} created a work dir");
    }
    let out = iolab(&[
        "matrix",
        "--fs",
        "ext4",
        "--image-dir",
        "/nonexistent-iolab-dir",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let f = area.base.join("precious.txt");
    let f = f.to_str().unwrap();
    for (extra, want) in [
        (
            vec!["--device", f, "--allow-destroy", f],
            "not a block device",
        ),
        (
            vec!["--device", "/dev/null", "--allow-destroy", "/dev/null"],
            "not a block device",
        ),
    ] {
        let mut a = vec!["matrix", "--fs", "ext4"];
        a.extend(extra);
        let out = iolab(&a);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(want), "{stderr}");
    }
    assert_eq!(
        std::fs::read(area.base.join("precious.txt")).unwrap(),
        SENTINEL
    );
}

#[test]
fn a_device_in_use_or_misnamed_is_refused() {
    if !can_run("a_device_in_use_or_misnamed_is_refused") {
        return;
    }
    // The disk holding / is in use; and a loop device we own needs the same name twice.
    let root = iolab::sysinfo::mounts::mount_of(Path::new("/")).unwrap();
    if root.source.starts_with("/dev/") {
        let out = iolab(&[
            "matrix",
            "--fs",
            "ext4",
            "--device",
            &root.source,
            "--allow-destroy",
            &root.source,
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("in use"), "{stderr}");
    }
    let Some(fs) = common::scratch_or_skip(
        "a_device_in_use_or_misnamed_is_refused",
        "ext4",
        32 << 20,
        &[],
        "",
    ) else {
        return;
    };
    let dev = fs.loop_dev.as_ref().unwrap().device.display().to_string();
    let out = iolab(&[
        "matrix",
        "--fs",
        "ext4",
        "--device",
        &dev,
        "--allow-destroy",
        "/dev/loop-other",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not name"));
    let out = iolab(&[
        "matrix",
        "--fs",
        "ext4",
        "--device",
        &dev,
        "--allow-destroy",
        &dev,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("in use") && stderr.contains("mounted"),
        "{stderr}"
    );
}

#[test]
fn cluster_study_reproduces_table_1_layout() {
    if !can_run("cluster_study_reproduces_table_1_layout") {
        return;
    }
    let area = Area::new();
    let doc = run_ok(
        &area,
        &[
            "--study",
            "cluster",
            "--fs",
            "ext4",
            "--cluster",
            "1K,4K",
            "--image-size",
            "256M",
            "--repeat",
            "1",
        ],
    );
    assert_eq!(doc.configurations.len(), 2);
    for c in &doc.configurations {
        assert_eq!(c.status, "ok", "{}: {:?}", c.label, c.reason);
        assert_eq!(c.cluster_bytes_actual, c.cluster_bytes);
        let tokens: Vec<&str> = c
            .tests
            .iter()
            .filter(|t| t.params.get("phase").map(String::as_str) == Some("create"))
            .filter_map(|t| t.params.get("size_token").map(String::as_str))
            .collect();
        for want in ["1", "cluster+1", "512", "64K"] {
            assert!(tokens.contains(&want), "{}: {tokens:?}", c.label);
        }
        assert!(
            c.tests
                .iter()
                .any(|t| t.params.get("phase").map(String::as_str) == Some("big"))
        );
    }
}

/// mount.exfat-fuse writes the loop device through the page cache although the test asked
/// for direct I/O: 64 MiB written over an 8 MiB file reach the device as about 8 MiB. exfat
/// then ranked first and ext4 "N× slower"; now exfat is listed after the ranking, not
/// ranked, with the reason, and the JSON names the absorbed test. Size-based (io-size), so
/// no speed enters: the device sees at most the file and its metadata, far below half of
/// what was written.
#[test]
fn a_configuration_whose_writes_the_cache_absorbed_is_not_ranked() {
    let test = "a_configuration_whose_writes_the_cache_absorbed_is_not_ranked";
    if !can_run(test) || !common::tool_or_skip(test, "mount.exfat-fuse", "exfat-fuse") {
        return;
    }
    let _g = EXCLUSIVE.read().unwrap();
    let area = Area::new();
    let args = area.args(&[
        "--fs",
        "ext4,exfat",
        "--image-size",
        "128M",
        "--workload",
        "run:rw=write:bs=1M:size=8M:io-size=64M:ramp=0:repeat=1",
        "--repeat",
        "1",
    ]);
    let out = bin().args(&args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    area.assert_clean();
    let doc = area.result();
    let exfat = &doc.configurations[1];
    if exfat.status == "skipped" {
        return common::skip(test, exfat.reason.as_deref().unwrap_or(""));
    }
    assert_eq!(exfat.workloads[0].cache_absorbed, ["SEQ1M Q1T1 write"]);
    assert!(doc.configurations[0].workloads[0].cache_absorbed.is_empty());
    let line = |l: &str| {
        stdout
            .lines()
            .find(|x| x.contains(&format!("┆ {l} ")))
            .unwrap_or_else(|| panic!("no {l} row: {stdout}"))
            .to_string()
    };
    assert!(line("ext4").contains("1.00"), "{stdout}");
    assert!(
        line("exfat").contains("not ranked: cache-absorbed"),
        "{stdout}"
    );
    assert!(!stdout.contains("slower"), "{stdout}");
    assert!(
        stdout.contains("not ranked: exfat: the page cache took the writes"),
        "{stdout}"
    );
}

/// ntfs-3g never shows its own options in /proc/self/mountinfo: `big_writes` and
/// `windows_names` got a `mount-options-unchecked` warning on every mount. Now only the
/// option it does not know is named.
#[test]
fn options_ntfs_3g_takes_without_showing_them_are_not_named() {
    let test = "options_ntfs_3g_takes_without_showing_them_are_not_named";
    if !can_run(test) || !common::tool_or_skip(test, "ntfs-3g", "ntfs-3g") {
        return;
    }
    let Some(w) = unchecked_options(
        test,
        &[
            "--fs",
            "ntfs",
            "--mount-opts",
            "big_writes,windows_names;big_writes,iolab_no_such_option",
            "--image-size",
            "64M",
            "--repeat",
            "1",
        ],
    ) else {
        return;
    };
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(
        w[0].test.as_deref(),
        Some("ntfs big_writes,iolab_no_such_option")
    );
    assert!(
        w[0].message.contains("do not show iolab_no_such_option"),
        "{}",
        w[0].message
    );
}

/// `--study cluster --fs fat32` through fusefat would run for hours (fusefat looks through
/// the whole directory for every new name; 2,000 files in each of 10 directories a run)
/// without a word: the estimate is said before the first file system is made. The run is
/// stopped as soon as it is said.
#[test]
fn a_cluster_study_through_fusefat_is_estimated_up_front() {
    let test = "a_cluster_study_through_fusefat_is_estimated_up_front";
    if !can_run(test) || !common::tool_or_skip(test, "fusefat", "fusefat") {
        return;
    }
    let _g = EXCLUSIVE.read().unwrap();
    let area = Area::new();
    let args = area.args(&[
        "--study",
        "cluster",
        "--fs",
        "fat32",
        "--cluster",
        "4K",
        "--image-size",
        "260M",
        "--repeat",
        "1",
    ]);
    let mut child = bin()
        .args(&args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut said = None;
    for line in std::io::BufRead::lines(std::io::BufReader::new(stderr)) {
        let line = line.unwrap();
        if line.contains("through fusefat") {
            said = Some(line);
            break;
        }
        if line.contains("[1/1] ...") {
            break;
        }
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let _ = child.wait();
    area.assert_clean();
    let said = said.expect("the estimate before the first file system");
    assert!(
        said.contains("(2,000 files in each of 10 directories a run)")
            && said.contains("at least 67 minutes per configuration over 1 run(s)"),
        "{said}"
    );
}

/// `--age` on FAT32 through fusefat aged nothing: fusefat's statvfs gives 0 blocks, so
/// aging's fullness target was 0 bytes; it wrote one file of 9 bytes and the workloads
/// after it were shown as the aged file system's. The matrix now says so before it starts
/// (a `matrix-note`) and the configuration ends failed with that reason, no aged runs.
#[test]
fn age_on_fusefat_is_refused_not_faked() {
    let Some(doc) = fat32_run(
        "age_on_fusefat_is_refused_not_faked",
        &["--age", "source-tree"],
    ) else {
        return;
    };
    let note = doc
        .warnings
        .iter()
        .find(|w| {
            w.message
                .starts_with("--age source-tree on FAT32 through fusefat")
        })
        .unwrap_or_else(|| panic!("no note: {:?}", doc.warnings));
    assert!(note.message.contains("reports no size"), "{}", note.message);
    let [c] = &doc.configurations[..] else {
        panic!("one row: {:?}", doc.configurations);
    };
    assert_eq!(c.status, "failed", "{:?}", c.reason);
    let why = c.reason.as_deref().unwrap_or_default();
    assert!(
        why.starts_with("aging: the file system reports no size"),
        "{why}"
    );
    assert!(c.runs.iter().all(|r| r.age.is_none()), "{:?}", c.runs);
    assert!(
        !c.tests.iter().any(|t| t
            .params
            .get("matrix_workload")
            .is_some_and(|w| w.ends_with("(aged)"))),
        "aged tests: {:?}",
        c.tests.iter().map(|t| &t.name).collect::<Vec<_>>()
    );
}

/// `--mkfs-opts` sets are a dimension of the matrix like `--mount-opts`: ext4 without a
/// journal next to ext4 with one (there was no way to give mkfs an option). What was made
/// is read back: dumpe2fs's features decide `journaling`, not the type's table.
#[test]
fn mkfs_option_sets_are_configurations_and_are_read_back() {
    let test = "mkfs_option_sets_are_configurations_and_are_read_back";
    if !can_run(test) {
        return;
    }
    let _g = EXCLUSIVE.read().unwrap();
    let area = Area::new();
    let args = area.args(&[
        "--fs",
        "ext4",
        "--mkfs-opts",
        "-O ^has_journal;default",
        "--mount-opts",
        "noatime",
        "--image-size",
        "64M",
        "--repeat",
        "1",
        "--setup-only",
    ]);
    let (doc, _) = area.run_expecting(&args, 0);
    let labels: Vec<&str> = doc
        .configurations
        .iter()
        .map(|c| c.label.as_str())
        .collect();
    assert_eq!(labels, ["ext4 [-O ^has_journal] noatime", "ext4 noatime"]);
    let (nj, j) = (&doc.configurations[0], &doc.configurations[1]);
    assert_eq!((nj.status.as_str(), j.status.as_str()), ("ok", "ok"));
    assert!(
        nj.mkfs_command
            .as_deref()
            .unwrap_or("")
            .ends_with("-O ^has_journal DEVICE"),
        "{:?}",
        nj.mkfs_command
    );
    assert!(!nj.journaling && nj.design == "none", "{nj:?}");
    assert!(j.journaling && j.design == "journal", "{j:?}");
}

/// What the mount really applied is in the row, as /proc/self/mountinfo shows it: `noatime`
/// asked shows as `noatime`, the default set shows the kernel's `relatime`.
#[test]
fn a_row_records_the_options_its_mount_really_had() {
    let test = "a_row_records_the_options_its_mount_really_had";
    if !can_run(test) {
        return;
    }
    let _g = EXCLUSIVE.read().unwrap();
    let area = Area::new();
    let args = area.args(&[
        "--fs",
        "ext4",
        "--mount-opts",
        "noatime;default",
        "--image-size",
        "64M",
        "--repeat",
        "1",
        "--setup-only",
    ]);
    let (doc, _) = area.run_expecting(&args, 0);
    let shown: Vec<Vec<String>> = doc
        .configurations
        .iter()
        .map(|c| {
            c.mount_options_shown
                .as_deref()
                .unwrap_or_else(|| panic!("{}: no mount_options_shown", c.label))
                .split(',')
                .map(String::from)
                .collect()
        })
        .collect();
    assert!(shown[0].iter().any(|o| o == "noatime"), "{shown:?}");
    assert!(shown[1].iter().any(|o| o == "relatime"), "{shown:?}");
    assert!(!shown[1].iter().any(|o| o == "noatime"), "{shown:?}");
}

/// A workload too big for the image fails in its row, in the terms the user typed: it said
/// "--size 200.0 MiB: only ... free ... (--size ...K at most)", flags the matrix has not.
#[test]
fn a_workloads_error_is_said_in_reference_keys() {
    let test = "a_workloads_error_is_said_in_reference_keys";
    if !can_run(test) {
        return;
    }
    let _g = EXCLUSIVE.read().unwrap();
    let area = Area::new();
    let args = area.args(&[
        "--fs",
        "ext4",
        "--image-size",
        "64M",
        "--repeat",
        "1",
        "--workload",
        "run:preset=real:duration=200ms:ramp=0:size=200M:repeat=1",
    ]);
    let (doc, _) = area.run_expecting(&args, 1);
    let why = doc.configurations[0].reason.clone().unwrap_or_default();
    assert!(why.contains("run:size=200.0 MiB"), "{why}");
    assert!(
        why.contains("(run:size=") && !why.contains("--size"),
        "{why}"
    );
}

/// Options per file system: `btrfs:compress=zstd` would fail the ext4 row's mount and
/// `ext4:-O ^has_journal` btrfs's mkfs; scoped, each applies only to its own rows (every set
/// applied to every --fs, so ext4 with noatime against btrfs with zstd could not be asked).
#[test]
fn options_scoped_to_a_file_system_apply_to_its_rows_only() {
    let test = "options_scoped_to_a_file_system_apply_to_its_rows_only";
    if !can_run(test) {
        return;
    }
    let _g = EXCLUSIVE.read().unwrap();
    let area = Area::new();
    let args = area.args(&[
        "--fs",
        "ext4,btrfs",
        "--mount-opts",
        "noatime;btrfs:compress=zstd",
        "--mkfs-opts",
        "ext4:-O ^has_journal",
        "--image-size",
        "128M",
        "--repeat",
        "1",
        "--setup-only",
    ]);
    let (doc, _) = area.run_expecting(&args, 0);
    let labels: Vec<&str> = doc
        .configurations
        .iter()
        .map(|c| c.label.as_str())
        .collect();
    assert_eq!(
        labels,
        ["ext4 [-O ^has_journal] noatime", "btrfs compress=zstd"]
    );
    let (e, b) = (&doc.configurations[0], &doc.configurations[1]);
    assert_eq!(
        (e.status.as_str(), b.status.as_str()),
        ("ok", "ok"),
        "{doc:?}"
    );
    assert_eq!(
        (e.mount_options.as_str(), b.mount_options.as_str()),
        ("noatime", "compress=zstd")
    );
    let shown = |c: &iolab::model::matrix::ConfigurationResult| -> Vec<String> {
        c.mount_options_shown
            .as_deref()
            .unwrap_or_else(|| panic!("{}: no mount_options_shown", c.label))
            .split(',')
            .map(String::from)
            .collect()
    };
    let (es, bs) = (shown(e), shown(b));
    assert!(es.iter().any(|o| o == "noatime"), "{es:?}");
    assert!(!es.iter().any(|o| o.starts_with("compress")), "{es:?}");
    assert!(bs.iter().any(|o| o.starts_with("compress=zstd")), "{bs:?}");
    assert!(!bs.iter().any(|o| o == "noatime"), "{bs:?}");
    let mkfs =
        |c: &iolab::model::matrix::ConfigurationResult| c.mkfs_command.clone().unwrap_or_default();
    assert!(mkfs(e).ends_with("-O ^has_journal DEVICE"), "{}", mkfs(e));
    assert!(!mkfs(b).contains("has_journal"), "{}", mkfs(b));
    assert!(!e.journaling, "{e:?}");
}

/// The figure a files test reads in `iolab files` (the mean of its runs' files/s) is the
/// one the matrix's ranking, its report and the history give it; the matrix ranked and
/// printed the median, so one test read two numbers. Two files workloads that share a size
/// (`4K`) each get their own heat map in the report (the first one's test filled the one
/// map's cell, the other's was dropped without a word).
#[test]
fn files_tests_read_the_mean_everywhere_and_each_workload_has_its_heat_map() {
    if !can_run("files_tests_read_the_mean_everywhere_and_each_workload_has_its_heat_map") {
        return;
    }
    let area = Area::new();
    let a = "files:sizes=4K:files-per-portion=100:portions=2:repeat=3";
    let b = "files:sizes=4K,64K:phases=create:files-per-portion=100:portions=2:repeat=3";
    let db = area.base.parent().unwrap().join("history.db");
    let args = area.args(&[
        "--fs",
        "ext4",
        "--image-size",
        "256M",
        "--repeat",
        "1",
        "--workload",
        a,
        "--workload",
        b,
    ]);
    let out = {
        let _g = EXCLUSIVE.read().unwrap();
        common::with_history(&mut bin(), &db)
            .args(&args)
            .output()
            .unwrap()
    };
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    area.assert_clean();
    let doc = area.result();
    let tests = &doc.configurations[0].tests;
    // (workload, test) -> the mean of its runs' files/s, as `iolab files` prints it.
    let mean = |w: &str, name: &str| {
        let t = tests
            .iter()
            .find(|t| t.name == name && t.params["matrix_workload"].as_str() == w)
            .unwrap_or_else(|| panic!("{w}: {name}: {tests:#?}"));
        let s = &t.summary["files_per_s"];
        assert_eq!(s.n, 3, "{name}");
        iolab::report::metrics::fmt_value("files_per_s", s.mean)
    };
    // The workloads as the terminal names them (their keys in order): a's, then b's.
    let label = |create_only: bool| {
        doc.configurations[0]
            .workloads
            .iter()
            .map(|o| o.workload.as_str())
            .find(|l| l.contains("phases=create") == create_only)
            .unwrap()
    };
    let labels = [label(false), label(true)];
    // Each workload's ranking: its row of ext4 holds the means, in its tests' order.
    for (label, names) in [
        (
            labels[0],
            &["4KiB create", "4KiB stat", "4KiB read", "4KiB delete"][..],
        ),
        (labels[1], &["4KiB create", "64KiB create"][..]),
    ] {
        let ranking = stdout
            .split(&format!("Ranking for {label}\n"))
            .nth(1)
            .unwrap_or_else(|| panic!("{label}: {stdout}"));
        let row = ranking.lines().find(|l| l.contains(" ext4 ")).unwrap();
        let cells: Vec<&str> = row
            .split('┆')
            .map(|c| c.trim().trim_end_matches(" files/s"))
            .collect();
        let want: Vec<String> = names.iter().map(|n| mean(label, n)).collect();
        assert_eq!(cells[2..2 + names.len()], want[..], "{ranking}");
    }
    // The history gives the same figure (a test whose name only the second workload has).
    let show = common::with_history(&mut bin(), &db)
        .args(["history", "show", "1"])
        .output()
        .unwrap();
    let show = String::from_utf8_lossy(&show.stdout).into_owned();
    let row = show
        .lines()
        .find(|l| l.contains("64KiB create [ext4]") && l.contains("files/s *"))
        .unwrap_or_else(|| panic!("{show}"));
    assert!(
        row.contains(&format!(" {} ± ", mean(labels[1], "64KiB create"))),
        "{row}"
    );
    // The report: one create-phase heat map per workload, each titled by it, its cells the
    // means.
    let md = area.out.join("report.md");
    let report = bin()
        .args(["report", "-o"])
        .arg(&md)
        .arg(&area.out)
        .output()
        .unwrap();
    assert!(report.status.success(), "{report:?}");
    let md = std::fs::read_to_string(md).unwrap();
    for (i, l) in labels.iter().enumerate() {
        let head = format!("### {l}: files create: files/s by configuration × file size\n");
        let map = md
            .split(&head)
            .nth(1)
            .unwrap_or_else(|| panic!("{head}: {md}"));
        let row = map.lines().find(|r| r.starts_with("| ext4 |")).unwrap();
        let mut want = format!("| ext4 | {} |", mean(l, "4KiB create"));
        if i == 1 {
            want = format!("{want} {} |", mean(l, "64KiB create"));
        }
        assert_eq!(row, want, "{map}");
    }
}

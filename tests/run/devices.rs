//! Block devices (loop devices over images the test made): protection of mounted and
//! formatted devices, the logical block size, large direct I/Os reaching the device whole.

use super::*;

/// A read-only device (`losetup -r`) with --allow-destroy: exit 2 before anything runs,
/// naming the cause. It was taken, its prefill failed with "Operation not permitted (os
/// error 1)" after an empty table, exit 1. Without --allow-destroy a read test still runs.
#[test]
fn a_read_only_device_is_refused_for_writes_and_the_prefill() {
    let test = "a_read_only_device_is_refused_for_writes_and_the_prefill";
    if !loop_or_skip(test) {
        return;
    }
    let work = tempdir();
    let image = work.path().join("ro.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(8 << 20)
        .unwrap();
    let lo = ReadOnlyLoop::attach(&image);
    let dev = lo.0.as_str();
    let cwd = tempdir();
    for (rw, says) in [
        ("randread", "the prefill needs a writable one"),
        ("write", "a write test needs a writable one"),
    ] {
        expect_usage_error(
            cwd.path(),
            &["run", "--target", dev, "--allow-destroy", dev, "--rw", rw],
            says,
        );
    }
    let r = iolab_in(
        cwd.path(),
        &[
            "run",
            "--target",
            dev,
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--duration",
            "100ms",
            "--ramp",
            "0s",
            "--repeat",
            "1",
            "--no-save",
        ],
    );
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
}

#[test]
fn block_devices_are_protected() {
    if !loop_or_skip("block_devices_are_protected") {
        return;
    }
    let work = tempdir();
    // A mounted device is refused for writes even with --allow-destroy.
    let Some(mounted) = scratch_or_skip("block_devices_are_protected", "ext4", 32 << 20, &[], "")
    else {
        return;
    };
    let dev = mounted
        .loop_dev
        .as_ref()
        .unwrap()
        .device
        .display()
        .to_string();
    expect_usage_error(
        work.path(),
        &[
            "run",
            "--target",
            &dev,
            "--rw",
            "write",
            "--allow-destroy",
            &dev,
        ],
        "in use",
    );
    expect_usage_error(
        work.path(),
        &["run", "--target", &dev, "--rw", "write"],
        "in use",
    );

    // An unmounted device holding a file system: writes need --allow-destroy naming it.
    let img = sparse_image(work.path(), "dev.img", 16 << 20);
    let lo = iolab::fs::loopdev::LoopDevice::attach(&img, false).unwrap();
    iolab::fs::command::run("mkfs.ext4", ["-q", "-F", lo.device.to_str().unwrap()]).unwrap();
    let ldev = lo.device.display().to_string();
    let cwd = tempdir();
    expect_usage_error(
        cwd.path(),
        &["run", "--target", &ldev, "--rw", "randwrite"],
        "--allow-destroy",
    );
    expect_usage_error(cwd.path(), &["run", "--target", &ldev], "--allow-destroy");
    // Reads without --allow-destroy run, unprefilled, and say so.
    let out = iolab_in(
        cwd.path(),
        &[
            "run",
            "--target",
            &ldev,
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--size",
            "8M",
            "--repeat",
            "1",
            "--duration",
            "100ms",
            "--ramp",
            "0",
            "--json",
            "--no-save",
        ],
    );
    let doc = json_ok(&out);
    let codes: Vec<&str> = strings(&doc["warnings"], "code");
    assert!(codes.contains(&"not-prefilled"), "{codes:?}");
    assert_eq!(doc["environment"]["block_device"], lo.name());
    // With --allow-destroy: a write test runs and the device counters see its bytes.
    let out = iolab_in(
        cwd.path(),
        &[
            "run",
            "--target",
            &ldev,
            "--allow-destroy",
            &ldev,
            "--rw",
            "write",
            "--bs",
            "1M",
            "--size",
            "8M",
            "--io-size",
            "8M",
            "--repeat",
            "1",
            "--json",
            "--no-save",
        ],
    );
    let doc = json_ok(&out);
    let run = &doc["tests"][0]["runs"][0];
    assert_eq!(run["bytes"], 8 << 20);
    let dev_written = run["device"]["write_bytes"].as_u64().unwrap();
    assert!(dev_written >= 8 << 20, "device saw {dev_written} bytes");
    drop(lo);
}

#[test]
fn direct_io_needs_blocks_of_the_logical_block_size() {
    if !loop_or_skip("direct_io_needs_blocks_of_the_logical_block_size") {
        return;
    }
    let work = tempdir();
    let img = sparse_image(work.path(), "4k.img", 16 << 20);
    let out = iolab::fs::command::run(
        "losetup",
        [
            "--find",
            "--show",
            "--sector-size",
            "4096",
            img.to_str().unwrap(),
        ],
    )
    .unwrap();
    let dev = out.trim().to_string();
    let detach = scopeguard(dev.clone(), &img);
    let cwd = tempdir();
    expect_usage_error(
        cwd.path(),
        &[
            "run",
            "--target",
            &dev,
            "--allow-destroy",
            &dev,
            "--rw",
            "randwrite",
            "--bs",
            "2k",
        ],
        "logical block size",
    );
    drop(detach);
}

/// A 1 MiB direct I/O reaches a loop device as one request: the I/O buffers are on huge
/// pages, so the 256 pages of a buffer are a few physically contiguous segments, not 256
/// scattered ones that the device's `max_segments` (128 on a loop device) splits in two.
#[test]
fn large_direct_ios_reach_the_device_whole() {
    let test = "large_direct_ios_reach_the_device_whole";
    if !loop_or_skip(test) {
        return;
    }
    let Some(huge) =
        iolab::sysinfo::hugepages::thp_size().filter(|_| iolab::sysinfo::hugepages::thp_usable())
    else {
        skip(
            test,
            format_args!(
                "transparent huge pages are off ({:?}) or absent in this kernel",
                iolab::sysinfo::hugepages::thp_mode()
            ),
        );
        return;
    };
    let work = tempdir();
    let img = sparse_image(work.path(), "whole.img", 48 << 20);
    let lo = iolab::fs::loopdev::LoopDevice::attach(&img, false).unwrap();
    let dev = lo.device.display().to_string();
    let queue = std::path::Path::new("/sys/block")
        .join(lo.name())
        .join("queue");
    let limit_kb: u64 = std::fs::read_to_string(queue.join("max_sectors_kb"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // Requests per 1 MiB I/O the device's size limit alone forces (1 with the usual 1280 KiB).
    let per_io = 1024u64.div_ceil(limit_kb);
    let cwd = tempdir();
    // 64 I/Os of 1 MiB on the device.
    let run_1m = |engine: &str, rw: &str, qd: &str, extra: &[&str]| {
        let args = [
            "run",
            "--target",
            &dev,
            "--allow-destroy",
            &dev,
            "--engine",
            engine,
            "--rw",
            rw,
            "--bs",
            "1M",
            "--iodepth",
            qd,
            "--size",
            "32M",
            "--io-size",
            "64M",
            "--ramp",
            "0",
            "--repeat",
            "1",
            "--json",
            "--no-save",
        ];
        json_ok(&iolab_in(cwd.path(), &[&args[..], extra].concat()))
    };
    for (engine, rw, qd) in [
        ("uring", "read", "8"),
        ("uring", "write", "4"),
        ("sync", "read", "1"),
    ] {
        let doc = run_1m(engine, rw, qd, &[]);
        let run = &doc["tests"][0]["runs"][0];
        assert_eq!(doc["tests"][0]["settings"]["engine"], engine);
        assert_eq!(
            run["huge_page_buffers"], true,
            "{engine} {rw}: {huge}-byte huge pages are usable here, the buffers should have them"
        );
        let ops = run["ops"].as_u64().unwrap();
        assert_eq!(ops, 64, "{engine} {rw}");
        // The fsync that ends a write run is one more write request (diskstats counts the
        // flush among the writes too).
        let flushes = if rw == "write" {
            run["device"]["flush_ios"].as_u64().unwrap()
        } else {
            0
        };
        let ios = run["device"][format!("{rw}_ios")].as_u64().unwrap() - flushes;
        assert!(
            ios >= 1 && ios <= ops * per_io,
            "{engine} {rw}: {ops} I/Os of 1 MiB reached the device as {ios} requests \
             (max_sectors_kb {limit_kb}: at most {} expected)",
            ops * per_io
        );
    }
    // --huge-pages false: ordinary pages, nothing to warn about, and the device gets at
    // least one request per I/O (two on this loop device unless the kernel happened to hand
    // out physically contiguous pages).
    let doc = run_1m("uring", "read", "8", &["--huge-pages", "false"]);
    let test = &doc["tests"][0];
    assert_eq!(test["settings"]["huge_pages"], false);
    let run = &test["runs"][0];
    assert!(run.get("huge_page_buffers").is_none(), "{run}");
    assert!(!strings(&doc["warnings"], "code").contains(&"small-pages"));
    let ios = run["device"]["read_ios"].as_u64().unwrap();
    assert!(ios >= 64, "64 reads of 1 MiB, {ios} device requests");
    eprintln!("--huge-pages false: 64 reads of 1 MiB reached the device as {ios} requests");
    drop(lo);
}

/// Regression (QA): `run` never warned about a test file smaller than the caches, which
/// README promises; `saturate` did (`small-test-size`). Now the same rule (10x the caches
/// iolab sees) and the same code warn for `run`. A loop device without direct I/O has the
/// host's page cache behind it (RAM), so 8 MiB is always under 10x it, whatever the machine.
#[test]
fn a_test_size_under_ten_times_the_caches_is_warned_about() {
    let test = "a_test_size_under_ten_times_the_caches_is_warned_about";
    if !loop_or_skip(test) {
        return;
    }
    let work = tempdir();
    let img = sparse_image(work.path(), "dev.img", 16 << 20);
    let lo = iolab::fs::loopdev::LoopDevice::attach(&img, false).unwrap();
    let ldev = lo.device.display().to_string();
    let out = iolab_in(
        work.path(),
        &[
            "run",
            "--target",
            &ldev,
            "--rw",
            "randread",
            "--engine",
            "null",
            "--size",
            "8M",
            "--repeat",
            "1",
            "--duration",
            "100ms",
            "--ramp",
            "0",
            "--json",
            "--no-save",
        ],
    );
    let doc = json_ok(&out);
    let small: Vec<&Value> = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["code"] == "small-test-size")
        .collect();
    assert_eq!(small.len(), 1, "{}", doc["warnings"]);
    let msg = small[0]["message"].as_str().unwrap();
    assert!(
        msg.starts_with(&format!(
            "8.0 MiB tested on {ldev} is less than 10x its caches"
        )) && msg.contains(&format!("host page cache behind {}", lo.name())),
        "{msg}"
    );
}

/// Regression (QA): the device's counters were read around the whole run — setup, ramp and
/// the progress loop's polling (up to 100 ms) — so `device.elapsed_ms` was ~500 against a
/// 400 ms run and dev MB/s came out low. They now cover the measured window. The null
/// engine makes this independent of the disk's speed; a 1 s ramp before a 100 ms run puts
/// the old window at least 1 s past the run's, and the bound allowed here (the run's
/// elapsed time + 500 ms, for a thread woken late on a loaded machine) is half that.
#[test]
fn device_counters_cover_the_measured_window() {
    let test = "device_counters_cover_the_measured_window";
    let d = tempdir();
    let out = iolab_in(
        d.path(),
        &[
            "run",
            "--rw",
            "randread",
            "--engine",
            "null",
            "--size",
            "8M",
            "--duration",
            "100ms",
            "--ramp",
            "1s",
            "--repeat",
            "2",
            "--json",
            "--no-save",
        ],
    );
    let doc = json_ok(&out);
    if doc["environment"]["block_device"].is_null() {
        skip(
            test,
            "the build directory has no block device (no device counters)",
        );
        return;
    }
    for r in doc["tests"][0]["runs"].as_array().unwrap() {
        let run_ms = r["elapsed_ns"].as_u64().unwrap() / 1_000_000;
        let dev_ms = r["device"]["elapsed_ms"].as_u64().unwrap();
        assert!(
            dev_ms + 100 >= run_ms && dev_ms <= run_ms + 500,
            "device window {dev_ms} ms against a measured window of {run_ms} ms"
        );
    }
}

/// On a FUSE file system (exfat-fuse) the daemon reads its device through the page cache,
/// even when the test asked for O_DIRECT: a read test showed 137 MB/s with `dev MB/s` 0.00
/// and no word. The warning says a cache answered the reads.
#[test]
fn reads_a_fuse_daemon_s_cache_answered_are_warned_about() {
    const TEST: &str = "reads_a_fuse_daemon_s_cache_answered_are_warned_about";
    let Some(fs) = scratch_or_skip(TEST, "exfat", 128 << 20, &[], "") else {
        return;
    };
    let mp = fs.mount_point.display().to_string();
    let out = iolab(&[
        "run",
        "--target",
        &mp,
        "--rw",
        "read",
        "--bs",
        "1M",
        "--size",
        "16M",
        "--io-size",
        "64M",
        "--ramp",
        "0",
        "--repeat",
        "2",
        "--json",
        "--no-save",
    ]);
    let doc = json_ok(&out);
    let msg = once_per_test(&doc, "cache-served", "SEQ1M Q1T1 read");
    assert!(
        msg.starts_with("the application read 64.0 MiB but "),
        "{msg}"
    );
    // The device's view agrees: it read (next to) nothing of the 64 MiB of each run.
    let run = &doc["tests"][0]["runs"][0];
    assert!(
        run["device"]["read_bytes"].as_u64().unwrap() < 32 << 20,
        "{:#}",
        run["device"]
    );
}

/// Buffered writes the page cache kept (a 4 MiB file on an ext4 overwritten for 300 ms a
/// run, far more than 8 MiB on any machine: the device writes the file once, at the run's
/// end) are warned about once per test, as reads a cache served: with `--repeat 3` the
/// warning stood three times, the same test and advice with each run's figures.
#[test]
fn writes_the_page_cache_absorbed_are_warned_about_once_per_test() {
    const TEST: &str = "writes_the_page_cache_absorbed_are_warned_about_once_per_test";
    let Some(fs) = scratch_or_skip(TEST, "ext4", 128 << 20, &[], "") else {
        return;
    };
    let mp = fs.mount_point.display().to_string();
    let out = iolab(&[
        "run",
        "--target",
        &mp,
        "--rw",
        "write",
        "--bs",
        "1M",
        "--direct",
        "false",
        "--size",
        "4M",
        "--duration",
        "300ms",
        "--ramp",
        "0",
        "--repeat",
        "3",
        "--json",
        "--no-save",
    ]);
    let doc = json_ok(&out);
    let msg = once_per_test(&doc, "cache-absorbed", "SEQ1M Q1T1 write");
    assert!(msg.starts_with("the application wrote "), "{msg}");
}

/// The message of the one warning `code` in `doc`, which must be about `test` (a run's
/// repeats give it once, not once a run).
fn once_per_test<'a>(doc: &'a Value, code: &str, test: &str) -> &'a str {
    let given: Vec<&Value> = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["code"] == code)
        .collect();
    assert_eq!(given.len(), 1, "once per test: {:#}", doc["warnings"]);
    assert_eq!(given[0]["test"], test);
    given[0]["message"].as_str().unwrap()
}

/// A btrfs over two devices (raid0) spreads its I/O over both: the counters of the one
/// device in the mount table showed half the reads and a WA of 0.50, and the run was warned
/// about as a cache (cache-absorbed). Now they are the sum over both.
#[test]
fn a_two_device_btrfs_is_counted_over_both_devices() {
    const TEST: &str = "a_two_device_btrfs_is_counted_over_both_devices";
    if !loop_or_skip(TEST) || !tool_or_skip(TEST, "mkfs.btrfs", "btrfs-progs") {
        return;
    }
    let work = tempdir();
    let a = iolab::fs::loopdev::LoopDevice::attach(
        &sparse_image(work.path(), "a.img", 256 << 20),
        false,
    )
    .unwrap();
    let b = iolab::fs::loopdev::LoopDevice::attach(
        &sparse_image(work.path(), "b.img", 256 << 20),
        false,
    )
    .unwrap();
    let (da, db) = (
        a.device.display().to_string(),
        b.device.display().to_string(),
    );
    if let Err(e) = iolab::fs::command::run(
        "mkfs.btrfs",
        ["-q", "-f", "-d", "raid0", "-m", "raid1", &da, &db],
    ) {
        skip(
            TEST,
            format_args!("mkfs.btrfs over two devices failed: {e}"),
        );
        return;
    }
    let mnt = tempdir();
    let mp = mnt.path().display().to_string();
    if let Err(e) = iolab::fs::command::run("mount", ["-t", "btrfs", &da, &mp]) {
        skip(TEST, format_args!("btrfs cannot be mounted here: {e}"));
        return;
    }
    // Unmounted before the loop devices are detached (declared after them), retrying while
    // busy: a single failed umount left the file system mounted and both loops held.
    struct Unmount(String, String);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let dir = std::path::Path::new(&self.0);
            if let Err(e) = iolab::fs::mount::umount_ours(dir, &self.1) {
                eprintln!("could not unmount {}: {e}", self.0);
            }
        }
    }
    let _mounted = Unmount(mp.clone(), da.clone());
    // 16 MiB of direct 1 MiB writes: raid0 puts half on each device.
    let out = iolab(&[
        "run",
        "--target",
        &mp,
        "--rw",
        "write",
        "--bs",
        "1M",
        "--size",
        "32M",
        "--io-size",
        "16M",
        "--ramp",
        "0",
        "--repeat",
        "1",
        "--json",
        "--no-save",
    ]);
    let doc = json_ok(&out);
    let run = &doc["tests"][0]["runs"][0];
    let name = run["device"]["device"].as_str().unwrap();
    let (na, nb) = (
        da.trim_start_matches("/dev/").to_string(),
        db.trim_start_matches("/dev/").to_string(),
    );
    assert!(
        name == format!("{na}+{nb}") || name == format!("{nb}+{na}"),
        "{name}"
    );
    // Both devices together wrote at least what the test wrote (the metadata is raid1, so a
    // little more); one alone wrote about half.
    let wa = run["write_amplification"].as_f64().unwrap();
    assert!((0.95..2.0).contains(&wa), "WA {wa}: {:#}", run["device"]);
    let codes: Vec<&str> = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["code"].as_str().unwrap())
        .collect();
    assert!(!codes.contains(&"cache-absorbed"), "{:#}", doc["warnings"]);
}

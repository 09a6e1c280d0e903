//! `iolab sustain` end to end: bad input refused before anything is written (no root), and,
//! on the write-cache emulator (tests/support_write_cache: a loop device in /dev/shm behind
//! a cgroup-v1 blkio throttle whose limit drops after X bytes and comes back after idle
//! time T), the cache size against the emulator's own switch point and the speeds against
//! the limits it was given. One run of each scenario here (the suite must stay short);
//! the 5-of-5 / 10-of-10 acceptance repetitions are `scripts/sustain-accuracy.sh`, which
//! runs the `#[ignore]`d tests below (results in docs/RELIABILITY.md).

mod common;
mod support_write_cache;

use std::time::Duration;

use serde_json::Value;
use support_write_cache::{SpeedModel, Switch, WriteCacheDevice, lead};

const MIB: u64 = 1 << 20;
const MB: f64 = 1e6;

/// One emulated drive at a time: two writers sharing the machine's two cores would each
/// fall below their limit, and the tests measure the limits.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

fn emulator_or_skip(test: &str) -> bool {
    if !common::root_or_skip(test, "loop device and blkio cgroup") {
        return false;
    }
    if let Some(why) = support_write_cache::unavailable() {
        common::skip(test, why);
        return false;
    }
    common::tool_or_skip(test, "losetup", "mount")
}

// ---------------------------------------------------------------- bad input (no root)

/// Exit 2 with `needle` on one line of stderr, and nothing written: no result directory,
/// no test file in the target directory.
fn refused(args: &[&str], needle: &str) {
    let work = common::tempdir();
    let out_dir = work.path().join("results");
    let mut all: Vec<&str> = vec!["sustain"];
    all.extend(args);
    all.extend(["--output", common::s(&out_dir)]);
    let o = common::iolab_in(work.path(), &all);
    common::assert_usage(&o, needle);
    let err = common::stderr(&o);
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(
        !out_dir.exists(),
        "a result directory was created: {args:?}"
    );
    assert!(common::stdout(&o).is_empty(), "{}", common::stdout(&o));
}

#[test]
fn a_span_larger_than_the_free_space_is_refused() {
    let dir = common::tempdir();
    refused(
        &[common::s(dir.path()), "--size", "1000TiB"],
        "larger than the free space",
    );
    assert!(common::entries(dir.path()).is_empty(), "a file was created");
}

#[test]
fn the_target_is_taken_as_t_too() {
    // `-t/--target` as every other command takes it; the positional and the option at once
    // is a usage error.
    let dir = common::tempdir();
    refused(
        &["-t", common::s(dir.path()), "--size", "1000TiB"],
        "larger than the free space",
    );
    refused(
        &[common::s(dir.path()), "--target", common::s(dir.path())],
        "cannot be used with",
    );
    assert!(common::entries(dir.path()).is_empty(), "a file was created");
}

/// A sparse image file of `bytes` in a fresh temp dir (the dir keeps it alive).
fn blank_image(bytes: u64) -> (tempfile::TempDir, std::path::PathBuf) {
    let work = common::tempdir();
    let img = work.path().join("dev.img");
    std::fs::File::create(&img).unwrap().set_len(bytes).unwrap();
    (work, img)
}

#[test]
fn a_span_larger_than_the_device_is_refused() {
    let test = "a_span_larger_than_the_device_is_refused";
    if !common::loop_or_skip(test) {
        return;
    }
    let (_work, img) = blank_image(16 * MIB);
    let mut lo = iolab::fs::loopdev::LoopDevice::attach(&img, false).unwrap();
    let dev = lo.device.display().to_string();
    refused(
        &[&dev, "--size", "32MiB", "--allow-destroy", &dev],
        "larger than the device",
    );
    // And without --allow-destroy, nothing is written either.
    refused(&[&dev, "--size", "8MiB"], "--allow-destroy");
    let data = std::fs::read(&img).unwrap();
    lo.detach().unwrap();
    assert!(data.iter().all(|&b| b == 0), "the device was written");
}

#[test]
fn a_read_only_device_is_refused() {
    // A loop device set up with `losetup -r`: refused before anything is written (it was
    // taken, its first write failed with EPERM and the error came twice, exit 1).
    let test = "a_read_only_device_is_refused";
    if !common::loop_or_skip(test) {
        return;
    }
    let (_work, img) = blank_image(16 * MIB);
    let lo = common::ReadOnlyLoop::attach(&img);
    refused(&[&lo.0, "--allow-destroy", &lo.0], "read-only device");
}

#[test]
fn a_mounted_device_is_refused() {
    let test = "a_mounted_device_is_refused";
    if !common::loop_or_skip(test) {
        return;
    }
    let Some(mounted) = common::scratch_or_skip(test, "ext4", 32 << 20, &[], "") else {
        return;
    };
    let dev = mounted
        .loop_dev
        .as_ref()
        .unwrap()
        .device
        .display()
        .to_string();
    refused(&[&dev, "--allow-destroy", &dev], "in use");
}

#[test]
fn recovery_without_a_sustained_write_is_refused() {
    let dir = common::tempdir();
    // A recovery pass right after the first has nothing to recover.
    refused(
        &[
            common::s(dir.path()),
            "--size",
            "8MiB",
            "--recovery",
            "30s,0s",
        ],
        "--recovery 0s",
    );
    // A recovery time outside `iolab sustain` is not an option anywhere else.
    let o = common::iolab_in(dir.path(), &["run", "--recovery", "30s"]);
    common::assert_usage(&o, "unexpected argument '--recovery'");
    // Other values checked before anything is created.
    refused(&[common::s(dir.path()), "--span", "150%"], "1% to 100%");
    refused(
        &[
            common::s(dir.path()),
            "--size",
            "8MiB",
            "--interval",
            "1500us",
        ],
        "whole milliseconds",
    );
    refused(
        &[common::s(dir.path()), "--size", "8MiB", "--time", "0s"],
        "--time 0",
    );
    refused(
        &[common::s(dir.path()), "--size", "8MiB", "--engine", "null"],
        "null engine",
    );
    assert!(common::entries(dir.path()).is_empty(), "a file was created");
}

#[test]
fn a_small_directory_pass_reports_one_phase_and_no_cliff() {
    // No root: a file in a directory, too small for any cache; the result file and the
    // report carry the sustain detail, and the test file is gone afterwards.
    let dir = common::tempdir();
    let res = dir.path().join("res");
    let target = dir.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let o = common::iolab(&[
        "sustain",
        common::s(&target),
        "--size",
        "32MiB",
        // 1 ms: the machine's disk wrote these 32 MiB in 16 ms one day and 250 ms another;
        // at 20 ms intervals the fast day had no whole interval and no series.
        "--interval",
        "1ms",
        "--recovery",
        "1s",
        "--output",
        common::s(&res),
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let out = common::stdout(&o);
    assert!(out.contains("first pass"), "{out}");
    assert!(common::entries(&target).is_empty(), "test file left behind");
    let files = common::entries(&res);
    assert_eq!(files.len(), 1);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    assert_eq!(doc["command"], "sustain");
    assert_eq!(doc["status"], "complete");
    let t = &doc["tests"][0];
    assert_eq!(t["family"], "sustain");
    assert_eq!(t["sustain"]["pass"], "first");
    assert_eq!(t["sustain"]["bytes_written"], 32 * MIB);
    assert!(!t["runs"][0]["intervals"].as_array().unwrap().is_empty());
    // The phases add up to what was written: the last holds the pass's partial interval.
    let phases = t["sustain"]["phases"].as_array().unwrap();
    let in_phases: u64 = phases.iter().map(|p| p["bytes"].as_u64().unwrap()).sum();
    assert_eq!(in_phases, 32 * MIB, "{phases:?}");
    // Without a cliff the recovery pass is skipped, and a warning says so.
    let tests = doc["tests"].as_array().unwrap();
    if t["sustain"]["cliffs"].as_array().unwrap().is_empty() {
        assert_eq!(tests.len(), 1);
        let w = doc["warnings"].as_array().unwrap();
        assert!(
            w.iter()
                .any(|w| w["code"] == "no-cliff"
                    && w["message"].as_str().unwrap().contains("skipped")),
            "{w:?}"
        );
        // The warning and the finding line give the same speed, not two different ones.
        if let Some(line) = out
            .lines()
            .find(|l| l.starts_with("first pass: no cliff in"))
        {
            let speed = line
                .split_once('(')
                .and_then(|(_, r)| r.split_once(" MB/s"))
                .map(|(v, _)| v.to_string())
                .unwrap_or_else(|| panic!("{line}"));
            let warning = w.iter().find(|w| w["code"] == "no-cliff").unwrap();
            let message = warning["message"].as_str().unwrap();
            assert!(
                message.contains(&format!("written at {speed} MB/s")),
                "{line}\n{message}"
            );
        }
    }
    let html = dir.path().join("r.html");
    let r = common::iolab(&["report", common::s(&files[0]), "-o", common::s(&html)]);
    assert!(r.status.success(), "{}", common::stderr(&r));
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(html.contains("sustained write"), "no sustain section");
    assert!(html.contains("MB/s over time"), "no bandwidth chart");
}

#[test]
fn ctrl_c_saves_the_pass_as_interrupted_and_removes_the_file() {
    // Slow on purpose (4 KiB random writes one at a time over 1 GiB): the signal comes
    // while the first pass runs.
    let dir = common::tempdir();
    let res = dir.path().join("res");
    let target = dir.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let child = common::bin()
        .args([
            "sustain",
            common::s(&target),
            "--size",
            "1GiB",
            "--rw",
            "randwrite",
            "--bs",
            "4KiB",
            "--iodepth",
            "1",
            "--interval",
            "100ms",
            "--output",
            common::s(&res),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The test file exists once the pass has started.
    assert!(
        common::wait_until(Duration::from_secs(60), || !common::entries(&target)
            .is_empty()),
        "the pass never started"
    );
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: kill on the child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", common::stderr(&o));
    assert!(common::entries(&target).is_empty(), "test file left behind");
    let files = common::entries(&res);
    assert_eq!(files.len(), 1);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    assert_eq!(doc["status"], "interrupted", "{doc}");
    let t = &doc["tests"][0];
    assert_eq!(t["name"], "first pass");
    // The series written before the signal is kept.
    assert!(
        t["sustain"]["bytes_written"].as_u64().unwrap() > 0,
        "{}",
        t["sustain"]
    );
    assert!(
        t["error"]
            .as_str()
            .unwrap()
            .contains("interrupted by SIGINT"),
        "{}",
        t["error"]
    );
}

/// tmpfs has no drive and no write cache: the pass's detail says what keeps the data in
/// RAM, and neither the table's lines nor the warnings speak of a write cache (on a loaded
/// machine a 3 GiB pass here was said to have a "write cache 398.1 MiB").
#[test]
fn a_ram_target_is_not_said_to_have_a_write_cache() {
    let test = "a_ram_target_is_not_said_to_have_a_write_cache";
    let Some(dir) = common::ram_tempdir_or_skip(test) else {
        return;
    };
    let o = common::iolab(&[
        "sustain",
        common::s(dir.path()),
        "--size",
        "64MiB",
        "--interval",
        "1ms",
        "--json",
        "--no-save",
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let doc = common::json(&o);
    let t = &doc["tests"][0];
    assert_eq!(
        t["sustain"]["memory_backed"], "tmpfs keeps its data in RAM",
        "{}",
        t["sustain"]
    );
    let warnings = doc["warnings"].to_string();
    assert!(!warnings.contains("write cache, if any"), "{warnings}");
    // The same through the table of the saved result.
    let work = common::tempdir();
    let file = work.path().join("r.json");
    std::fs::write(&file, serde_json::to_string(&doc).unwrap()).unwrap();
    let md_file = work.path().join("r.md");
    let r = common::iolab(&["report", common::s(&file), "-o", common::s(&md_file)]);
    assert!(r.status.success(), "{}", common::stderr(&r));
    let md = std::fs::read_to_string(&md_file).unwrap();
    // Either finding line: "no cliff in … (… throughout)" or "fast phase …: … until the
    // drop", never "write cache N: … until the cliff".
    assert!(!md.contains(": write cache "), "{md}");
    assert!(!md.contains("a write cache, if any"), "{md}");
    assert!(md.contains("first pass: "), "{md}");
}

/// A loop device over an image on tmpfs is the same RAM as a tmpfs target (it was taken
/// for a drive: "a write cache, if any, is larger than that; write more (… or a whole device
/// with --allow-destroy)" of the device it had been given with --allow-destroy).
#[test]
fn a_loop_device_over_tmpfs_is_ram_too() {
    let test = "a_loop_device_over_tmpfs_is_ram_too";
    if !common::loop_or_skip(test) {
        return;
    }
    let Some(dir) = common::ram_tempdir_or_skip(test) else {
        return;
    };
    let img = dir.path().join("dev.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(64 * MIB)
        .unwrap();
    let mut lo = iolab::fs::loopdev::LoopDevice::attach(&img, false).unwrap();
    let dev = lo.device.display().to_string();
    let o = common::iolab(&[
        "sustain",
        &dev,
        "--allow-destroy",
        &dev,
        "--size",
        "32MiB",
        "--interval",
        "1ms",
        "--json",
        "--no-save",
    ]);
    lo.detach().unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    let doc = common::json(&o);
    let t = &doc["tests"][0];
    let name = dev.trim_start_matches("/dev/");
    assert_eq!(
        t["sustain"]["memory_backed"],
        format!("{name} is a loop device over a file on tmpfs, which keeps its data in RAM"),
        "{}",
        t["sustain"]
    );
    let warnings = doc["warnings"].to_string();
    assert!(!warnings.contains("write cache, if any"), "{warnings}");
    assert!(!warnings.contains("--allow-destroy"), "{warnings}");
}

// ---------------------------------------------------------------- the emulator

/// `iolab sustain DEV --json …` inside the emulator's cgroup.
fn sustain_on(dev: &WriteCacheDevice, size: &str, extra: &[&str]) -> Value {
    let d = dev.device.display().to_string();
    let o = dev
        .command_in_cgroup(env!("CARGO_BIN_EXE_iolab"))
        .env("NO_COLOR", "1")
        .args([
            "sustain",
            &d,
            "--allow-destroy",
            &d,
            "--size",
            size,
            "--interval",
            "100ms",
            "--json",
            "--no-save",
        ])
        .args(extra)
        .output()
        .expect("run iolab");
    assert!(
        o.status.success(),
        "iolab sustain failed: {}\n{}",
        o.status,
        common::stderr(&o)
    );
    common::json(&o)
}

fn within(got: f64, want: f64, frac: f64) -> bool {
    (got / want - 1.0).abs() <= frac
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The MB/s series of a pass, for failure messages.
fn series(t: &Value) -> Vec<f64> {
    t["runs"][0]["intervals"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|p| (f(&p["bw_bytes_per_s"]) / MB).round())
                .collect()
        })
        .unwrap_or_default()
}

/// One measured cache scenario: what iolab found and what the emulator did.
#[derive(Debug)]
struct CacheRun {
    cache: f64,
    truth: f64,
    fast: f64,
    slow: f64,
    cliffs: usize,
}

/// Did the machine stall the writer before the cliff? An interval (after the first, and
/// wholly before the one the cliff falls in) below 80 % of the fast limit: the writer was
/// not scheduled, and afterwards the throttle lets it catch up above the limit with the
/// credit it saved — past the emulator's switch, so the switch is no longer where the
/// device slowed down (seen under load: 304, 493, 304, 336, 388, 514 MB/s at 400 MB/s, and
/// the device took 27 MiB more than its switch point before it slowed).
fn stalled_before_cliff(t: &Value, fast: u64) -> bool {
    t["sustain"]["cliffs"][0]["at_ms"]
        .as_f64()
        .is_some_and(|at_ms| stalled_before(t, fast, at_ms))
}

/// An interval after the first, wholly before `at_ms`, below 80 % of the fast limit.
fn stalled_before(t: &Value, fast: u64, at_ms: f64) -> bool {
    let interval_ms = f(&t["sustain"]["interval_ms"]);
    t["runs"][0]["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .filter(|p| f(&p["t_ms"]) <= at_ms - interval_ms)
        .any(|p| f(&p["bw_bytes_per_s"]) < 0.8 * fast as f64)
}

/// An emulated drive with a cache of `cache_mib` at `fast` then `slow` bytes/s, written
/// with `iolab sustain` over the cache and `slow_secs` seconds of slow writes. Measured
/// again on a fresh emulator (at most 3 times, said on stderr as RETRY) when the machine
/// stalled the writer before the cliff: the emulator's switch is then no ground truth.
fn cache_scenario(cache_mib: u64, fast: u64, slow: u64, slow_secs: f64) -> CacheRun {
    for attempt in 1..=3 {
        let (run, stalled) = cache_attempt(cache_mib, fast, slow, slow_secs);
        if !stalled || attempt == 3 {
            return run;
        }
        eprintln!(
            "RETRY: the machine stalled the writer before the cliff (attempt {attempt}): {run:?}"
        );
    }
    unreachable!()
}

fn cache_attempt(cache_mib: u64, fast: u64, slow: u64, slow_secs: f64) -> (CacheRun, bool) {
    let span = cache_mib * MIB + (slow as f64 * slow_secs) as u64;
    let span = span.div_ceil(MIB) * MIB;
    let dev = WriteCacheDevice::start(
        span + 64 * MIB,
        SpeedModel::Cache {
            fast_bytes_per_s: fast,
            slow_bytes_per_s: slow,
            cache_bytes: cache_mib * MIB,
            recovery: Duration::from_secs(3600),
        },
    )
    .expect("emulator");
    let doc = sustain_on(&dev, &format!("{}MiB", span / MIB), &[]);
    let t = &doc["tests"][0];
    let sw = dev.switches();
    assert!(!sw.is_empty(), "the emulator never switched: {sw:?}");
    // The device's real drop: the switch plus the lead the controller takes on purpose.
    let truth = (sw[0].device_bytes + lead(fast)) as f64;
    let cliffs = t["sustain"]["cliffs"].as_array().unwrap();
    eprintln!(
        "series MB/s {:?}\n  cliffs {cliffs:?}\n  switches {sw:?}",
        series(t)
    );
    let Some(c) = cliffs.first() else {
        // No cliff: was the writer stalled before the emulator's switch (241, 52, 63, 52,
        // 94 MB/s at 400 under a load of 7 on 2 cores hid a 160 MiB cache)? Measured again.
        let stalled = stalled_before(t, fast, sw[0].at.as_secs_f64() * 1e3);
        assert!(stalled, "no cliff found");
        let run = CacheRun {
            cache: 0.0,
            truth,
            fast: 0.0,
            slow: 0.0,
            cliffs: 0,
        };
        return (run, true);
    };
    let run = CacheRun {
        cache: f(&c["fast_phase_bytes"]),
        truth,
        fast: f(&c["before_bw_bytes_per_s"]),
        slow: f(&c["after_bw_bytes_per_s"]),
        cliffs: cliffs.len(),
    };
    // Stalled before the emulator's switch, not only before the cliff found: a stall can
    // itself be taken for the cliff (398 MB/s for five intervals, then 0, 0, 0 under a load
    // of 5 on 2 cores, then 482 and 325 catching up before the switch: the cliff was put at
    // the stall, 27 % short); the device was fast all that time, so the machine stalled it.
    // (By bytes: the emulator switches at a byte count, and its clock started before the
    // run's.)
    (
        run,
        stalled_before_cliff(t, fast) || stalled_before_bytes(t, fast, sw[0].device_bytes),
    )
}

/// An interval after the first below 80 % of the fast limit, followed by at least one
/// interval's worth of fast writing before the first `bytes` of the pass were written (the
/// stall of the throttle's debt right after the switch, at the switch's byte count, is the
/// device's).
fn stalled_before_bytes(t: &Value, fast: u64, bytes: u64) -> bool {
    let interval_s = f(&t["sustain"]["interval_ms"]) / 1e3;
    let bytes = bytes as f64 - fast as f64 * interval_s;
    let mut written = 0.0;
    t["runs"][0]["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let bw = f(&p["bw_bytes_per_s"]);
            written += bw * interval_s;
            (bw, written)
        })
        .skip(1)
        .take_while(|&(_, end)| end < bytes)
        .any(|(bw, _)| bw < 0.8 * fast as f64)
}

/// The acceptance bounds: cache ±`cache_tolerance` of the emulator's switch (5 %
/// in the acceptance runs), speeds ±10 % of the limits (the limits are ceilings the writer
/// reaches on this machine; the emulator's own test shows the device holds them within a
/// few %).
fn check_cache(r: &CacheRun, fast: u64, slow: u64, cache_tolerance: f64) {
    check_cache_fast_over(r, fast, slow, cache_tolerance, 0.10)
}

/// `check_cache` whose fast speed may read up to `fast_over` above its limit (and 10 %
/// under it).
fn check_cache_fast_over(r: &CacheRun, fast: u64, slow: u64, cache_tolerance: f64, fast_over: f64) {
    eprintln!(
        "ACCURACY cache {:.1} MiB (device switched at {:.1} MiB, {:+.2} %), fast {:.1} MB/s (set {}), slow {:.1} MB/s (set {})",
        r.cache / MIB as f64,
        r.truth / MIB as f64,
        100.0 * (r.cache / r.truth - 1.0),
        r.fast / MB,
        fast as f64 / MB,
        r.slow / MB,
        slow as f64 / MB
    );
    assert_eq!(r.cliffs, 1, "{r:?}");
    assert!(within(r.cache, r.truth, cache_tolerance), "cache: {r:?}");
    let fast = fast as f64;
    assert!(
        r.fast >= 0.9 * fast && r.fast <= (1.0 + fast_over) * fast,
        "fast: {r:?}"
    );
    assert!(within(r.slow, slow as f64, 0.10), "slow: {r:?}");
}

/// A plain throttle: no cliff.
fn plain_scenario(limit: u64, mib: u64) {
    let dev = WriteCacheDevice::start((mib + 16) * MIB, SpeedModel::Plain { bytes_per_s: limit })
        .expect("emulator");
    let doc = sustain_on(&dev, &format!("{mib}MiB"), &[]);
    let t = &doc["tests"][0];
    let cliffs = t["sustain"]["cliffs"].as_array().unwrap();
    // The pass's settled speed (its headline): the settled phase's.
    let k = t["sustain"]["settled_phase"]
        .as_u64()
        .expect("settled_phase") as usize;
    let settled = f(&t["sustain"]["phases"][k]["mean_bw_bytes_per_s"]);
    eprintln!(
        "ACCURACY plain {:.1} MB/s settled (set {}), {} phases, {} cliffs",
        settled / MB,
        limit as f64 / MB,
        t["sustain"]["phases"].as_array().unwrap().len(),
        cliffs.len()
    );
    assert!(
        cliffs.is_empty(),
        "a cliff on a plain throttle: {cliffs:?}\n{:?}",
        series(t)
    );
    // The throttle is a ceiling the writer reaches: settled within 5 % below it, and not
    // above it by more than the throttle's own slicing (2 %).
    let ratio = settled / limit as f64;
    assert!(
        (0.95..=1.02).contains(&ratio),
        "settled {:.1} MB/s on a {} MB/s throttle\n{:?}",
        settled / MB,
        limit as f64 / MB,
        series(t)
    );
    assert!(
        doc["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == "no-cliff"),
        "{}",
        doc["warnings"]
    );
}

#[test]
fn the_cache_of_an_emulated_drive_is_found() {
    let test = "the_cache_of_an_emulated_drive_is_found";
    if !emulator_or_skip(test) {
        return;
    }
    let _serial = serial();
    // Smaller than the acceptance scenario (scripts/sustain-accuracy.sh) to keep the suite
    // short: 256 MiB at 400 MB/s (0.7 s), then 3 s at 100 MB/s.
    let (fast, slow) = (400_000_000, 100_000_000);
    // ±8 % here: this cache fills in 0.67 s, six 100-ms intervals, and the drop is placed
    // inside one interval of 40 MB (15 % of the cache) from the speeds around it; on this
    // machine the runs spread −4 … +4 %. The issue's ±5 % holds at 512 MiB and 1 GiB
    // (scripts/sustain-accuracy.sh, docs/RELIABILITY.md).
    check_cache(&cache_scenario(256, fast, slow, 3.0), fast, slow, 0.08);
}

/// A small cache, 160 MiB at 400 MB/s: full in 0.42 s, four 100-ms intervals (the first
/// of them the throttle's first slice at up to twice the limit), fewer than the 5 a phase
/// needs elsewhere. It was not found ("no cliff … for a cache that fills in fewer than 5
/// intervals, use a shorter --interval"); a fast start of 3 intervals is now a phase when
/// each interval past the first stands clear of the speed after it.
#[test]
fn a_small_cache_of_an_emulated_drive_is_found() {
    let test = "a_small_cache_of_an_emulated_drive_is_found";
    if !emulator_or_skip(test) {
        return;
    }
    let _serial = serial();
    let (fast, slow) = (400_000_000, 100_000_000);
    // ±10 %: the drop is placed inside one interval of 40 MB, a quarter of this cache.
    // 8 s past it: the throttle's debt after the switch stalls the writer for two or three
    // intervals, which in a series of 35 (3 s past the cache) or 56 (5 s) can be more than
    // the 5 % of stalls that sends the search to sums of intervals, where no short phase is
    // kept; a real pass writes far past its cache.
    // The fast speed may read up to 25 % over its limit: the throttle's first slice (up to
    // twice the limit) is one of the phase's four intervals. Mostly it reads within 10 %;
    // CI at load 8 read 440 MB/s of 400 (series 797, 398, 482, then 100 MB/s), the cache
    // within 1 %.
    check_cache_fast_over(
        &cache_scenario(160, fast, slow, 8.0),
        fast,
        slow,
        0.10,
        0.25,
    );
}

/// A drive that starts slow (100 MB/s for its first 80 MB: waking up, or still busy), then
/// writes 160 MB at 400 MB/s into its cache, then 100 MB/s: the cache is the fast phase
/// (its bytes and its speed), and the slow start is a phase of its own before it.
#[test]
fn a_slow_start_is_no_part_of_the_cache() {
    let test = "a_slow_start_is_no_part_of_the_cache";
    if !emulator_or_skip(test) {
        return;
    }
    let _serial = serial();
    let (fast, slow) = (400_000_000u64, 100_000_000u64);
    // Measured again on a fresh emulator (at most 4 times, said on stderr as RETRY) when
    // the machine stalled the writer (see `slow_start_stalled`).
    let mut attempt = 1;
    let (doc, sw) = loop {
        let dev = WriteCacheDevice::start_by_bytes(
            1100 * MIB,
            vec![(0, slow), (80_000_000, fast), (240_000_000, slow)],
        )
        .expect("emulator");
        // 8 s past the cache (see a_small_cache_of_an_emulated_drive_is_found).
        let doc = sustain_on(&dev, "1040MB", &[]);
        let sw = dev.switches();
        if attempt == 4 || !slow_start_stalled(&doc["tests"][0], fast, slow, &sw) {
            break (doc, sw);
        }
        eprintln!(
            "RETRY: the machine stalled the writer (attempt {attempt}): {:?}",
            series(&doc["tests"][0])
        );
        attempt += 1;
    };
    let t = &doc["tests"][0];
    let d = &t["sustain"];
    // The device's real changes: each switch plus the lead the controller takes.
    let truth = match sw.as_slice() {
        [up, down, ..] => {
            (down.device_bytes + lead(fast)) as f64 - (up.device_bytes + lead(slow)) as f64
        }
        _ => panic!("the emulator did not switch twice: {sw:?}"),
    };
    let cliffs = d["cliffs"].as_array().unwrap();
    let cache = cliffs.first().map_or(0.0, |c| f(&c["fast_phase_bytes"]));
    let start = f(&d["phases"][0]["mean_bw_bytes_per_s"]);
    eprintln!(
        "ACCURACY slow start {:.1} MB/s (set {}), cache {:.1} MB (device {:.1} MB, {:+.2} %)\n  {d}\n  {sw:?}\n  {:?}",
        start / MB,
        slow as f64 / MB,
        cache / MB,
        truth / MB,
        100.0 * (cache / truth - 1.0),
        series(t)
    );
    assert_eq!(cliffs.len(), 1, "{d}");
    // The writer's own start-up is in the slow start (31, 63, 84, 189, 126 MB/s on a
    // loaded machine): slower than the cache, not held to the limit.
    assert!(start < 0.5 * fast as f64, "{d}");
    // ±10 %, and up to one interval of the slow start over: the rise is placed to the
    // interval, not inside it. The interval the device sped up in reads all-fast (the
    // throttle's first slice after the raise passes a slice's bytes at once: 419, 482 MB/s
    // at 400), so its slow part, up to 10 MB, counts as cache. Every run has it: the slow
    // start read 69.2 MB (7 intervals) where the device sped up at 77.6-79.7 MB, +5 to +6 %
    // of this cache before the drop's own error (-9 to +1 % at a load of 12), which
    // with it came to -0.9, +7.5 and +8.2 % of the ±10 %.
    let rise = slow as f64 * f(&d["interval_ms"]) / 1e3;
    assert!(
        cache >= 0.9 * truth && cache <= 1.1 * truth + rise,
        "cache {:.1} MB, device {:.1} MB (+{:.1} MB for the rise's interval)\n{d}",
        cache / MB,
        truth / MB,
        rise / MB
    );
    assert!(
        within(f(&cliffs[0]["before_bw_bytes_per_s"]), fast as f64, 0.10),
        "{d}"
    );
}

/// Did the machine stall the writer of the slow-start scenario, so that its series no
/// longer shows the device? Either an interval (after the first) below 80 % of the device's
/// speed while it was wholly before the device's rise or wholly inside its cache (a quarter
/// interval clear of the switch to the slow speed: the writer reaps up to its 8 MiB in
/// flight after the device wrote them) (at a load
/// of 14 on two cores: 0, 0, 0 in the slow start, then 409, 126, 94, 556 MB/s for a cache
/// of 400), or stalls (under a tenth of the slow speed) in more than 5 % of the intervals:
/// the search then works on sums of intervals, where no phase shorter than 5 intervals is
/// kept (`stats::changepoint::phases`), and this cache fills in 4 (17 stalls in 98
/// intervals: the pass had no cliff).
fn slow_start_stalled(t: &Value, fast: u64, slow: u64, sw: &[Switch]) -> bool {
    let [up, down, ..] = sw else {
        return false;
    };
    let interval_s = f(&t["sustain"]["interval_ms"]) / 1e3;
    let points: Vec<f64> = t["runs"][0]["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| f(&p["bw_bytes_per_s"]))
        .collect();
    let (rise, drop) = (up.device_bytes as f64, down.device_bytes as f64);
    let mut written = 0.0;
    let slow_or_cache_stalled = points.iter().enumerate().any(|(i, &bw)| {
        let (from, to) = (written, written + bw * interval_s);
        written = to;
        let limit = if to <= rise {
            slow
        } else if from >= rise + fast as f64 * interval_s
            && to <= drop - fast as f64 * interval_s / 4.0
        {
            fast
        } else {
            return false;
        };
        i > 0 && bw < 0.8 * limit as f64
    });
    // Counted as the search counts them: a stall the next interval makes up is none.
    let stalls = (0..points.len())
        .filter(|&i| {
            let pair = points
                .get(i + 1)
                .map_or(0.0, |next| (points[i] + next) / 2.0);
            points[i] < 0.1 * slow as f64 && !within(pair, slow as f64, 0.2)
        })
        .count();
    slow_or_cache_stalled || stalls as f64 > 0.05 * points.len() as f64
}

#[test]
fn a_plain_throttle_has_no_cliff() {
    let test = "a_plain_throttle_has_no_cliff";
    if !emulator_or_skip(test) {
        return;
    }
    let _serial = serial();
    plain_scenario(200_000_000, 512);
}

/// A drive that speeds up again just as the pass ends (tmpfs whose memory reclaim let go,
/// a drive that freed some cache): 400 MB/s for the first 400 MB, 100 MB/s for the next
/// 400 MB, then 400 MB/s for the last 120 MB (about 3 intervals). The burst's bytes are the
/// pass's, but the speed the pass settled at is the slow one: counted in, the burst lifted
/// it by about a quarter.
#[test]
fn a_burst_as_the_pass_ends_does_not_lift_the_settled_speed() {
    let test = "a_burst_as_the_pass_ends_does_not_lift_the_settled_speed";
    if !emulator_or_skip(test) {
        return;
    }
    let _serial = serial();
    let (fast, slow) = (400_000_000u64, 100_000_000u64);
    for attempt in 1..=3 {
        let dev = WriteCacheDevice::start_by_bytes(
            1024 * MIB,
            vec![(0, fast), (400_000_000, slow), (800_000_000, fast)],
        )
        .expect("emulator");
        // 400 MB + 400 MB + 120 MB.
        let doc = sustain_on(&dev, "920MB", &[]);
        let t = &doc["tests"][0];
        let d = &t["sustain"];
        let k = d["settled_phase"].as_u64().expect("settled_phase") as usize;
        let settled = f(&d["phases"][k]["mean_bw_bytes_per_s"]);
        eprintln!(
            "ACCURACY end burst: settled {:.1} MB/s (set {}), phases {}\n{:?}",
            settled / MB,
            slow as f64 / MB,
            d["phases"],
            series(t)
        );
        // A loaded machine stalls the writer (CI beside two builds: ticks of 0 MB/s in the
        // 100 MB/s phase, settled 83 MB/s): the emulator's speeds are then no ground truth.
        if (stalled_before_cliff(t, fast) || starved_slow_phase(t, slow)) && attempt < 3 {
            eprintln!("RETRY: the machine starved the writer (attempt {attempt})");
            continue;
        }
        assert_eq!(d["cliffs"].as_array().unwrap().len(), 1, "{d}");
        // ±10 %: the acceptance bound of the speeds (the limit is a ceiling the writer
        // reaches on a loaded machine); the burst counted in gave +20 to +30 %.
        assert!(
            within(settled, slow as f64, 0.10),
            "settled {:.1} MB/s\n{d}\n{:?}",
            settled / MB,
            series(t)
        );
        return;
    }
}

/// SLOW (about a minute, once; at most three times when the machine starves the writer):
/// with T = 20 s, a pass after 5 s idle finds the cache still full (slow from the start),
/// one after 30 s more finds it again.
#[test]
fn the_cache_comes_back_after_idle_time_but_not_before() {
    let test = "the_cache_comes_back_after_idle_time_but_not_before";
    if !emulator_or_skip(test) {
        return;
    }
    let _serial = serial();
    let (fast, slow) = (400_000_000u64, 100_000_000u64);
    for attempt in 1..=3 {
        let (doc, switches) = recovery_attempt(fast, slow);
        let tests = doc["tests"].as_array().unwrap();
        for t in tests {
            eprintln!("{}: {:?}\n  {}", t["name"], series(t), t["sustain"]);
        }
        eprintln!("switches {switches}");
        assert_eq!(tests.len(), 3, "first pass and two recovery passes");
        // A loaded machine (CI under load saw 31 and 0 MB/s ticks in a 100 MB/s phase, and a
        // second "cliff" made of them) stalls dd: the emulator's speeds are then no ground
        // truth for the passes that must find exactly one cliff. Measure again.
        let starved = [&tests[0], &tests[2]]
            .iter()
            .any(|t| stalled_before_cliff(t, fast) || starved_slow_phase(t, slow));
        if starved && attempt < 3 {
            eprintln!("RETRY: the machine starved the writer (attempt {attempt})");
            continue;
        }
        check_recovery(tests);
        return;
    }
}

/// A tick after the first cliff below half the slow speed: the writer, not the device, was
/// slow.
fn starved_slow_phase(t: &Value, slow: u64) -> bool {
    let Some(at_ms) = t["sustain"]["cliffs"][0]["at_ms"].as_f64() else {
        return false;
    };
    let interval_ms = f(&t["sustain"]["interval_ms"]);
    let points = t["runs"][0]["intervals"].as_array().unwrap();
    // The last tick may be a partial interval at the end of the span.
    points[..points.len().saturating_sub(1)]
        .iter()
        .filter(|p| f(&p["t_ms"]) > at_ms + interval_ms)
        .any(|p| f(&p["bw_bytes_per_s"]) < 0.5 * slow as f64)
}

/// One first pass and two recovery passes on a fresh emulator with T = 20 s; the document
/// and the emulator's switches.
fn recovery_attempt(fast: u64, slow: u64) -> (Value, String) {
    // 256 MiB: the fast phase lasts 6-7 intervals of 100 ms (a phase needs 5).
    let cache = 256 * MIB;
    let dev = WriteCacheDevice::start(
        768 * MIB,
        SpeedModel::Cache {
            fast_bytes_per_s: fast,
            slow_bytes_per_s: slow,
            cache_bytes: cache,
            recovery: Duration::from_secs(20),
        },
    )
    .expect("emulator");
    let doc = sustain_on(&dev, "512MiB", &["--recovery", "5s,30s"]);
    (doc, format!("{:?}", dev.switches()))
}

fn check_recovery(tests: &[Value]) {
    let first = &tests[0]["sustain"];
    assert_eq!(first["cliffs"].as_array().unwrap().len(), 1, "{first}");
    let after5 = &tests[1]["sustain"];
    assert_eq!(tests[1]["name"], "after 5s idle");
    assert_eq!(after5["pass"], "recovery");
    assert!(
        f(&after5["recovered_share"]) < 0.1,
        "after 5 s the cache must not be back: {after5}"
    );
    let after30 = &tests[2]["sustain"];
    assert_eq!(tests[2]["name"], "after 30s idle");
    let share = f(&after30["recovered_share"]);
    assert!(
        (0.9..=1.1).contains(&share),
        "after 30 s the cache must be back: {share} {after30}"
    );
    assert_eq!(after30["cliffs"].as_array().unwrap().len(), 1, "{after30}");
}

// ------------------------------------------- acceptance repetitions (scripts/sustain-accuracy.sh)

#[test]
#[ignore = "acceptance repetitions: scripts/sustain-accuracy.sh"]
fn acceptance_1gib_cache_400_then_100() {
    if !emulator_or_skip("acceptance_1gib_cache_400_then_100") {
        return;
    }
    let _serial = serial();
    let (fast, slow) = (400_000_000, 100_000_000);
    check_cache(&cache_scenario(1024, fast, slow, 5.0), fast, slow, 0.05);
}

#[test]
#[ignore = "acceptance repetitions: scripts/sustain-accuracy.sh"]
fn acceptance_512mib_cache_400_then_200() {
    if !emulator_or_skip("acceptance_512mib_cache_400_then_200") {
        return;
    }
    let _serial = serial();
    let (fast, slow) = (400_000_000, 200_000_000);
    check_cache(&cache_scenario(512, fast, slow, 5.0), fast, slow, 0.05);
}

#[test]
#[ignore = "acceptance repetitions: scripts/sustain-accuracy.sh"]
fn acceptance_plain_throttle() {
    if !emulator_or_skip("acceptance_plain_throttle") {
        return;
    }
    let _serial = serial();
    plain_scenario(400_000_000, 1536);
}

/// The file check `run` and `saturate` share: a span beyond the file plus the free space
/// beside it is refused before anything is written.
#[test]
fn a_file_span_beyond_the_file_and_its_free_space_is_refused() {
    let test = "a_file_span_beyond_the_file_and_its_free_space_is_refused";
    let Some(fs) = common::scratch_or_skip(test, "tmpfs", 20 << 20, &[], "") else {
        return;
    };
    let f = fs.path().join("f");
    std::fs::write(&f, vec![7u8; 15 << 20]).unwrap();
    let fp = common::s(&f);
    refused(
        &[fp, "--allow-destroy", fp, "--size", "64MiB"],
        "--size 64.0 MiB: larger than the file",
    );
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 15 << 20, "f grew");
}

/// Regression (QA): `--size 100GB` is not whole 1 MiB blocks; the span was cut and the
/// "span" line said "(--size)" only. A tiny pass with no recovery: no disk speed involved.
#[test]
fn a_size_cut_to_whole_blocks_is_said() {
    let dir = common::tempdir();
    let target = dir.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let o = common::iolab(&[
        "sustain",
        common::s(&target),
        "--size",
        "4000000",
        "--bs",
        "1M",
        "--no-save",
        "--json",
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let doc: Value = serde_json::from_str(&common::stdout(&o)).unwrap();
    assert_eq!(doc["tests"][0]["sustain"]["bytes_written"], 3 * MIB);
    assert!(
        common::stderr(&o).contains(
            "span 3.0 MiB (--size 4,000,000 bytes, rounded down to whole 1.0 MiB blocks (--bs))"
        ),
        "{}",
        common::stderr(&o)
    );
}

/// A pass's job thread that shares its CPU with a busy program waits for it, as `iolab
/// run`'s does: `cpu-contention` for the pass's test (iolab and a spinning thread pinned to
/// one CPU; 64 MiB written to tmpfs). Only its presence is asserted.
#[test]
fn a_pass_sharing_its_cpu_with_a_busy_program_is_warned_of() {
    let test = "a_pass_sharing_its_cpu_with_a_busy_program_is_warned_of";
    let Some(dir) = common::ram_tempdir_or_skip(test) else {
        return;
    };
    let mut cmd = common::bin();
    cmd.args([
        "sustain",
        common::s(dir.path()),
        "--size",
        "64MiB",
        "--interval",
        "1ms",
        "--json",
        "--no-save",
    ]);
    common::contention_beside_a_spinner(test, &mut cmd, None, "a job thread");
}

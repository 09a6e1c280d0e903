//! `iolab info` and `iolab endurance` end to end, and the device counters every workload
//! records: a file on an ext4 loop device resolved down to the disk under the image, loop
//! counters against a direct-I/O write test, the write amplification of small buffered
//! files on ext4, the endurance table of the "how to check disk speed" article, and bad input (exit 2).

use std::io::Write;
use std::path::Path;

use iolab::model::device::DeviceCounters;
use iolab::model::{Environment, ResultDoc, RunResult, TestResult};
use iolab::sysinfo::diskstats::{PhaseCounters, cache_absorbed_warning, write_amplification};
use serde_json::Value;

mod common;
use common::{iolab, json_ok as json_of, loop_or_skip, scratch_or_skip, tempdir};

#[test]
fn file_on_ext4_loop_resolves_to_the_loop_and_its_backing_file() {
    let test = "file_on_ext4_loop_resolves_to_the_loop_and_its_backing_file";
    let Some(fs) = scratch_or_skip(test, "ext4", 32 << 20, &[], "noatime") else {
        return;
    };
    let file = fs.path().join("hello.txt");
    std::fs::write(&file, b"hello").unwrap();
    let lo = fs.loop_dev.as_ref().unwrap();
    let image = std::fs::canonicalize(&lo.image).unwrap();

    let v = json_of(&iolab(&["info", file.to_str().unwrap(), "--json"]));
    assert_eq!(v["kind"], "block");
    assert_eq!(v["mount"]["fs_type"], "ext4");
    assert!(v["mount"]["options"].as_str().unwrap().contains("noatime"));
    let devs = v["devices"].as_array().unwrap();
    assert_eq!(devs[0]["name"], lo.name().as_str());
    assert_eq!(devs[0]["kind"], "loop");
    assert_eq!(devs[0]["relation"], "holds-path");
    assert_eq!(devs[0]["loop_backing_file"], image.to_str().unwrap());
    assert_eq!(devs[0]["size_bytes"], 32u64 << 20);
    assert!(devs[0]["logical_block_size"].as_u64().unwrap() >= 512);
    assert!(devs[0]["written_since_boot_bytes"].as_u64().is_some());
    // The request limits, as sysfs has them (what splits a large I/O).
    let queue = Path::new("/sys/block").join(lo.name()).join("queue");
    let sys = |f: &str| -> u64 {
        std::fs::read_to_string(queue.join(f))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    assert_eq!(devs[0]["max_request_bytes"], sys("max_sectors_kb") * 1024);
    assert_eq!(
        devs[0]["max_hw_request_bytes"],
        sys("max_hw_sectors_kb") * 1024
    );
    assert_eq!(devs[0]["max_segments"], sys("max_segments"));
    assert_eq!(devs[0]["max_segment_bytes"], sys("max_segment_size"));
    // Below the loop: the device holding the image file (when it is on one).
    if let Some((under, _)) = iolab::sysinfo::block_device_of(&image) {
        let next = devs
            .iter()
            .find(|d| d["relation"] == "backs-loop")
            .expect("the image's device is listed");
        assert_eq!(next["under"], lo.name().as_str());
        // The image's own device, or (for a partition) the first entry of its chain.
        assert_eq!(next["name"], under.as_str());
    }
    // SMART: a loop device has none of its own; every entry says why or what.
    for s in v["smart"].as_array().unwrap() {
        assert!(s["available"].as_bool().unwrap() || s["reason"].is_string());
    }

    // The same chain when asked by device name, and the human table.
    let v = json_of(&iolab(&["info", &lo.name(), "--json", "--no-smart"]));
    assert_eq!(v["kind"], "device");
    assert_eq!(v["devices"][0]["relation"], "asked");
    assert_eq!(v["mount"]["mount_point"], fs.path().to_str().unwrap());
    let out = iolab(&["info", &lo.name(), "--no-smart"]);
    assert!(out.status.success());
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains(&lo.name()), "{table}");
    assert!(table.contains("Backing file"), "{table}");
    let limit = iolab::units::fmt_size_exact(sys("max_sectors_kb") * 1024);
    assert!(
        table
            .lines()
            .any(|l| l.contains("Largest request") && l.contains(&limit)),
        "{table}"
    );
    assert!(table.contains(image.to_str().unwrap()), "{table}");
    assert!(table.contains("ext4"), "{table}");
}

/// Detaches a loop device this test attached, even when an assertion fails.
struct Image {
    _dir: tempfile::TempDir,
    lo: iolab::fs::loopdev::LoopDevice,
}

fn loop_over_image(test: &str, size: u64) -> Option<Image> {
    if !loop_or_skip(test) {
        return None;
    }
    let dir = tempdir();
    let img = dir.path().join("dev.img");
    std::fs::File::create(&img).unwrap().set_len(size).unwrap();
    let lo = iolab::fs::loopdev::LoopDevice::attach(&img, false).unwrap();
    Some(Image { _dir: dir, lo })
}

/// Unmounts a mount this test made, even when an assertion fails (before the loops detach).
struct Mounted(std::path::PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// A btrfs over two loop devices: `info` on it listed only the device `mountinfo` names
/// (the first), as if the file system, its data and its wear were on one device.
#[test]
fn a_two_device_btrfs_lists_both_devices() {
    let test = "a_two_device_btrfs_lists_both_devices";
    if !common::tool_or_skip(test, "mkfs.btrfs", "btrfs-progs") {
        return;
    }
    let (Some(a), Some(b)) = (
        loop_over_image(test, 200 << 20),
        loop_over_image(test, 200 << 20),
    ) else {
        return;
    };
    let (da, db) = (a.lo.device.clone(), b.lo.device.clone());
    let mk = std::process::Command::new("mkfs.btrfs")
        .args(["-q", "-f"])
        .arg(&da)
        .arg(&db)
        .output()
        .unwrap();
    assert!(mk.status.success(), "mkfs.btrfs: {mk:?}");
    let mnt = tempdir();
    let ok = std::process::Command::new("mount")
        .arg(&da)
        .arg(mnt.path())
        .status()
        .unwrap();
    assert!(ok.success(), "mount {}", da.display());
    let _m = Mounted(mnt.path().to_path_buf());
    let v = json_of(&iolab(&[
        "info",
        mnt.path().to_str().unwrap(),
        "--json",
        "--no-smart",
    ]));
    let devs = v["devices"].as_array().unwrap();
    let names: Vec<&str> = devs.iter().map(|d| d["name"].as_str().unwrap()).collect();
    let (na, nb) = (a.lo.name(), b.lo.name());
    let top = devs[0]["name"].as_str().unwrap().to_string();
    assert!(top == na || top == nb, "top {top}, loops {na} {nb}");
    let other = if top == na { &nb } else { &na };
    let member = devs
        .iter()
        .find(|d| d["name"] == other.as_str())
        .unwrap_or_else(|| panic!("{other} missing from {names:?}"));
    assert_eq!(member["relation"], "fs-member");
    assert_eq!(member["under"], top.as_str());
    let table = iolab(&["info", mnt.path().to_str().unwrap(), "--no-smart"]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains(&format!("holds the file system with {top}")),
        "{text}"
    );
    // Both devices are in use: a btrfs's mountinfo line carries an anonymous 0:N, so neither
    // was found mounted, and `run --allow-destroy` would have written over a mounted btrfs.
    for d in [&da, &db] {
        let user = iolab::fs::facts::device_in_use(d);
        assert!(
            user.as_deref().is_some_and(|u| u.starts_with("mounted on")),
            "{}: {user:?}",
            d.display()
        );
    }
    // The other device, asked by name, is in use: it said "Mounted: no".
    let v = json_of(&iolab(&["info", other.as_str(), "--json", "--no-smart"]));
    assert_eq!(v["mount"]["fs_type"], "btrfs", "{v}");
    assert_eq!(
        v["mount"]["mount_point"],
        std::fs::canonicalize(mnt.path()).unwrap().to_str().unwrap()
    );
}

/// `iolab run` of 1 MiB direct writes, one run, on the device `dev` (a loop the test made),
/// with `extra`; its JSON.
fn direct_writes_on(dev: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "run",
        "--target",
        dev,
        "--allow-destroy",
        dev,
        "--rw",
        "write",
        "--bs",
        "1M",
        "--direct",
        "true",
        "--repeat",
        "1",
        "--json",
        "--no-save",
    ];
    args.extend(extra);
    json_of(&iolab(&args))
}

#[test]
fn loop_counters_match_a_direct_write_test_within_one_percent() {
    let test = "loop_counters_match_a_direct_write_test_within_one_percent";
    let Some(img) = loop_over_image(test, 40 << 20) else {
        return;
    };
    let dev = img.lo.device.display().to_string();
    let v = direct_writes_on(&dev, &["--io-size", "32M"]);
    let run = &v["tests"][0]["runs"][0];
    let app = run["bytes"].as_u64().unwrap();
    assert_eq!(app, 32 << 20, "the test wrote --io-size");
    let dc: DeviceCounters = serde_json::from_value(run["device"].clone()).unwrap();
    assert_eq!(dc.device, img.lo.name());
    let diff = (dc.write_bytes as f64 - app as f64).abs() / app as f64;
    eprintln!(
        "{test}: app {app} B, {} wrote {} B in {} I/Os",
        dc.device, dc.write_bytes, dc.write_ios
    );
    assert!(
        diff <= 0.01,
        "device wrote {} vs app {app} ({:.2} % apart)",
        dc.write_bytes,
        diff * 100.0
    );
    assert!(dc.write_ios >= 32, "{dc:?}");
    let wa = run["write_amplification"].as_f64().unwrap();
    assert!((0.99..=1.01).contains(&wa), "WA {wa}");
    assert!(cache_absorbed_warning(&dc, app).is_none());
    // The image file's device was watched too (its figures are shared with the machine).
    if iolab::sysinfo::block_device_of(&img.lo.image).is_some() {
        assert!(dc.backing.is_some(), "{dc:?}");
    }
}

/// A timed write with a ramp: the device counters of its write amplification were read when
/// iolab's main thread woke after the ramp, a little after the jobs' byte count began (1 MiB
/// QD8 direct writes on a loop device read 0.9979, 0.9979, 1.0000, 0.9983, 0.9996), and
/// endurance floored what that gap left below 1. Both are now counted over the same span.
#[test]
fn a_timed_direct_write_with_a_ramp_amplifies_nothing() {
    let test = "a_timed_direct_write_with_a_ramp_amplifies_nothing";
    let Some(img) = loop_over_image(test, 64 << 20) else {
        return;
    };
    let dev = img.lo.device.display().to_string();
    let v = direct_writes_on(
        &dev,
        &["--iodepth", "8", "--duration", "1s", "--ramp", "500ms"],
    );
    let wa = v["tests"][0]["runs"][0]["write_amplification"]
        .as_f64()
        .unwrap();
    eprintln!("{test}: WA {wa}");
    assert!((wa - 1.0).abs() < 1e-4, "WA {wa}");
}

#[test]
fn buffered_small_files_on_ext4_amplify_writes() {
    let test = "buffered_small_files_on_ext4_amplify_writes";
    let Some(fs) = scratch_or_skip(test, "ext4", 64 << 20, &["-b", "4096"], "") else {
        return;
    };
    let dir = fs.path().join("small");
    std::fs::create_dir(&dir).unwrap();
    let ph = PhaseCounters::for_path(&dir).expect("ext4 on a loop device has counters");
    assert_eq!(ph.device(), fs.loop_dev.as_ref().unwrap().name());
    let payload = [0x5au8; 1000];
    let files = 1500u64;
    for i in 0..files {
        let mut f = std::fs::File::create(dir.join(format!("f{i:05}"))).unwrap();
        f.write_all(&payload).unwrap();
    }
    // Push the page cache and the journal to the device before reading the counters.
    let d = std::fs::File::open(&dir).unwrap();
    nix::unistd::syncfs(&d).unwrap();
    let dc = ph.finish().unwrap();
    let app = files * payload.len() as u64;
    let wa = write_amplification(&dc, app).unwrap();
    eprintln!(
        "{test}: {files} files of 1000 B: app {app} B, device {} B, WA {wa:.2}",
        dc.write_bytes
    );
    // Each 1000-byte file takes a whole 4 KiB block (WA >= 4.1 from data alone), plus
    // inodes, the directory and the journal.
    assert!(wa > 2.0, "WA {wa}");
    assert!(cache_absorbed_warning(&dc, app).is_none());
}

#[test]
fn phase_counters_by_path_and_none_without_a_device() {
    assert!(PhaseCounters::for_path(Path::new("/proc/self")).is_none());
    let reason = iolab::sysinfo::resolve::no_device_reason(Path::new("/proc")).unwrap();
    assert!(reason.contains("pseudo"), "{reason}");
    let dir = tempdir();
    if let Some(ph) = PhaseCounters::for_path(dir.path()) {
        let dc = ph.finish().unwrap();
        assert_eq!(dc.device, ph.device());
    }
}

fn years(v: &Value) -> String {
    format!("{:.2}", v["years"].as_f64().unwrap())
}

#[test]
fn endurance_matches_the_tbw_lifetime_table() {
    // The "how to check disk speed" article: 240 GB drives rated 80,000 GB at 20 and 30 GB/day; a 120 GB drive rated
    // 40,000 GB at 9 GB/day; and the 80,000 GB drive at 9 GB/day.
    for (tbw, daily, days, yrs) in [
        ("80000GB", "20GB", 4000.0, "10.95"),
        ("80TB", "30GB", 2666.67, "7.30"),
        ("40000GB", "9GB", 4444.44, "12.17"),
        ("80TB", "9GB", 8888.89, "24.34"),
    ] {
        let v = json_of(&iolab(&[
            "endurance",
            "--tbw",
            tbw,
            "--daily",
            daily,
            "--json",
        ]));
        assert!(
            (v["days"].as_f64().unwrap() - days).abs() < 0.01,
            "{tbw} at {daily}: {v}"
        );
        assert_eq!(years(&v), yrs, "{tbw} at {daily}");
        assert_eq!(v["write_amplification"], 1.0);
    }
    let out = iolab(&["endurance", "--tbw", "80TB", "--daily", "20GB"]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(table.contains("10.95"), "{table}");
    assert!(table.contains("4000.0"), "{table}");
    assert!(table.contains("80 TB"), "{table}");
}

fn write_result_with_wa(dir: &Path) -> std::path::PathBuf {
    let mut doc = ResultDoc::new("run", Vec::new(), Environment::default());
    let run = |device_bytes: u64, app_bytes: u64| RunResult {
        run: 1,
        bytes: app_bytes,
        device: Some(DeviceCounters {
            device: "loop9".into(),
            write_bytes: device_bytes,
            ..Default::default()
        }),
        write_amplification: Some(device_bytes as f64 / app_bytes as f64),
        ..Default::default()
    };
    doc.tests.push(TestResult {
        name: "small files create".into(),
        family: "files".into(),
        runs: vec![run(200_000_000, 100_000_000)],
        ..Default::default()
    });
    doc.tests.push(TestResult {
        name: "SEQ1M Q8T1 write".into(),
        family: "block".into(),
        runs: vec![run(110_000_000, 100_000_000)],
        ..Default::default()
    });
    doc.tests.push(TestResult {
        name: "SEQ1M Q8T1 read".into(),
        family: "block".into(),
        runs: vec![RunResult::default()],
        ..Default::default()
    });
    let p = dir.join("result.json");
    std::fs::write(&p, serde_json::to_string(&doc).unwrap()).unwrap();
    p
}

/// A result measured here on a device that is gone now: the lifetime assumed 0 % used
/// without a word, as if SMART had said the drive was new.
#[test]
fn endurance_from_a_result_whose_device_is_gone_says_so() {
    let dir = tempdir();
    let p = write_result_with_wa(dir.path());
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    doc["environment"]["hostname"] = Value::from(iolab::sysinfo::capture_hostname());
    doc["environment"]["block_device"] = Value::from("nvme97n1");
    std::fs::write(&p, doc.to_string()).unwrap();
    let v = json_of(&iolab(&[
        "endurance",
        "--tbw",
        "80TB",
        "--daily",
        "20GB",
        "--from",
        p.to_str().unwrap(),
        "--json",
    ]));
    assert_eq!(v["used_source"], "none");
    let notes = v["notes"].to_string();
    assert!(notes.contains("nvme97n1"), "{notes}");
    assert!(notes.contains("assuming 0 % used"), "{notes}");
}

#[test]
fn endurance_from_a_result_uses_its_write_amplification() {
    let dir = tempdir();
    let p = write_result_with_wa(dir.path());
    let ps = p.to_str().unwrap();
    // `iolab endurance --tbw 80TB --daily 20GB --from RESULT` and `extra`.
    let endurance = |extra: &[&str]| {
        let mut args = vec![
            "endurance",
            "--tbw",
            "80TB",
            "--daily",
            "20GB",
            "--from",
            ps,
        ];
        args.extend_from_slice(extra);
        iolab(&args)
    };
    // (200 + 110) MB device / 200 MB app = 1.55: 31 GB/day, 80 TB in 7.07 years.
    let v = json_of(&endurance(&["--json"]));
    assert!((v["write_amplification"].as_f64().unwrap() - 1.55).abs() < 1e-9);
    let s = v["sentence"].as_str().unwrap();
    assert!(s.contains("the device writes 31 GB/day"), "{s}");
    assert!(s.contains("reaches its rated 80 TB in 7.07 years"), "{s}");
    assert_eq!(v["per_test"].as_array().unwrap().len(), 2);
    // One test only.
    let v = json_of(&endurance(&[
        "--test",
        "small files create",
        "--used",
        "50",
        "--json",
    ]));
    assert!((v["write_amplification"].as_f64().unwrap() - 2.0).abs() < 1e-9);
    assert!((v["days"].as_f64().unwrap() - 1000.0).abs() < 1e-6, "{v}");
    // The table says it in words.
    let out = endurance(&[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("SEQ1M Q8T1 write"), "{text}");
    assert!(text.contains("writes 31 GB/day"), "{text}");
    // A misspelt --test is told which tests could be named.
    let out = endurance(&["--test", "small files creat"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("tests with one: small files create, SEQ1M Q8T1 write"),
        "{err}"
    );
}

#[test]
fn endurance_from_smart_says_why_when_it_cannot() {
    // A disk without SMART here (virtual, or not root): the answer still comes, with a note.
    let v = json_of(&iolab(&[
        "endurance",
        "--tbw",
        "80TB",
        "--daily",
        "20GB",
        "--device",
        env!("CARGO_MANIFEST_DIR"),
        "--json",
    ]));
    if v["used_source"] == "none" {
        let notes = v["notes"].to_string();
        assert!(notes.contains("not available"), "{notes}");
    } else {
        assert!(v["used_source"].as_str().unwrap().starts_with("SMART"));
    }
}

/// `iolab endurance --tbw 80TB --daily 20GB ARGS` is refused with `needle`.
fn endurance_refused(args: &[&str], needle: &str) {
    let all: Vec<&str> = ["endurance", "--tbw", "80TB", "--daily", "20GB"]
        .iter()
        .chain(args)
        .copied()
        .collect();
    expect_usage_error(&all, needle);
}

fn expect_usage_error(args: &[&str], needle: &str) {
    let out = iolab(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
    assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
}

/// A saturate result (its randwrite sweep had device counters) was refused as if it had
/// no write test: "it needs a write test with device counters". It keeps no write
/// amplification at all, and the refusal says so and what to pass instead.
#[test]
fn endurance_from_a_saturate_result_says_it_has_no_write_amplification() {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/saturate.json");
    let args = [
        "endurance",
        "--tbw",
        "80TB",
        "--daily",
        "20GB",
        "--from",
        fixture,
    ];
    expect_usage_error(
        &args,
        "an iolab saturate result records no write amplification",
    );
    expect_usage_error(&args, "iolab run, files, copy, trace or sustain");
}

/// `--device /nonexist` said "/nonexist: no such file, directory or block device" without
/// the flag; worded as the other commands' missing targets.
#[test]
fn endurance_of_a_missing_device_names_the_flag() {
    endurance_refused(
        &["--device", "/nonexist"],
        "--device /nonexist: does not exist",
    );
}

/// A slack result was told it needed "a write test with device counters" (tmpfs has none),
/// and a directory "cannot read: Is a directory (os error 21)".
#[test]
fn endurance_from_a_slack_result_or_a_directory_says_what_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let tree = dir.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    std::fs::write(tree.join("a"), b"abc").unwrap();
    let out = iolab(&["--no-history", "slack", tree.to_str().unwrap(), "-o", d]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let slack = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .unwrap();
    let endurance = |from: &str| {
        [
            "endurance",
            "--tbw",
            "80TB",
            "--daily",
            "20GB",
            "--from",
            from,
        ]
        .map(String::from)
    };
    let args = endurance(slack.to_str().unwrap());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    expect_usage_error(
        &args,
        "an iolab slack result records no write amplification (it predicts allocation from file sizes and writes nothing)",
    );
    let args = endurance(d);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    expect_usage_error(
        &args,
        &format!("--from {d}: is a directory; give one result file"),
    );
}

/// Endurance amounts are SI as on data sheets: `600T` is `600TB`, binary only as `TiB`.
#[test]
fn endurance_sizes_are_si_whatever_the_spelling() {
    let table = |tbw: &str, daily: &str| {
        let o = iolab(&["endurance", "--tbw", tbw, "--daily", daily, "--json"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        (v["tbw_bytes"].as_u64(), v["daily_app_bytes"].as_u64())
    };
    let si = table("600TB", "20GB");
    assert_eq!(si.0, Some(600_000_000_000_000), "{si:?}");
    assert_eq!(table("600T", "20G"), si);
    assert_eq!(table("0.6PB", "20000MB"), si);
    assert_eq!(table("600TiB", "20GB").0, Some(600 << 40));
}

#[test]
fn bad_input_is_refused_with_exit_2() {
    let e = |tbw: &str, daily: &str, needle: &str| {
        expect_usage_error(&["endurance", "--tbw", tbw, "--daily", daily], needle)
    };
    e("0TB", "20GB", "more than zero");
    e("80TB", "0GB", "more than zero");
    // 80 bytes of TBW is never meant: a unit is required.
    e("80", "20GB", "--tbw 80: give a unit");
    e("80TB", "20", "--daily 20: give a unit");
    e("-80TB", "20GB", "negative");
    e("80TB", "-5GB", "negative");
    endurance_refused(&["--used", "-1"], "--used");
    e("lots", "20GB", "not a size");
    e("80TB", "20 gigs", "not a size");
    // The refusal gives this command's units, not the generic examples (`4096` and `4k`
    // are refused or mean 10^3 here).
    let out = iolab(&["endurance", "--tbw", "80TB", "--daily", "20Gb"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--daily 20Gb: not a size (e.g. --daily 20GB; SI:"),
        "{err}"
    );
    assert!(!err.contains("4096"), "{err}");
    endurance_refused(&["--used", "150"], "--used");
    endurance_refused(&["--wa", "0"], "--wa");
    let dir = tempdir();
    let not_iolab = dir.path().join("x.json");
    std::fs::write(&not_iolab, "{\"a\": 1}").unwrap();
    let x = not_iolab.to_str().unwrap();
    endurance_refused(&["--from", x], "not an iolab result");
    let no_wa = dir.path().join("empty.json");
    let doc = ResultDoc::new("run", Vec::new(), Environment::default());
    std::fs::write(&no_wa, serde_json::to_string(&doc).unwrap()).unwrap();
    endurance_refused(&["--from", no_wa.to_str().unwrap()], "write amplification");
    endurance_refused(&["--device", "/proc"], "no device counters");
    expect_usage_error(&["info", "/dev/sdzz9"], "no such block device");
    expect_usage_error(&["info", "nvme9n9"], "no such block device");
    expect_usage_error(&["info", "/no/such/path/iolab"], "no such file");
}

#[test]
fn pseudo_file_systems_say_what_they_are() {
    let v = json_of(&iolab(&["info", "/proc", "--json"]));
    assert_eq!(v["kind"], "pseudo");
    assert_eq!(v["mount"]["fs_type"], "proc");
    assert!(v["devices"].as_array().unwrap().is_empty());
    let r = v["no_device_reason"].as_str().unwrap();
    assert!(r.contains("pseudo file system"), "{r}");
    assert!(r.contains("no device counters"), "{r}");
    if let Some(fs) = scratch_or_skip(
        "pseudo_file_systems_say_what_they_are (tmpfs)",
        "tmpfs",
        8 << 20,
        &[],
        "",
    ) {
        let v = json_of(&iolab(&["info", fs.path().to_str().unwrap(), "--json"]));
        assert_eq!(v["kind"], "memory");
        assert!(PhaseCounters::for_path(fs.path()).is_none());
        let w = iolab::sysinfo::resolve::no_device_warning(fs.path()).unwrap();
        assert_eq!(w.code, "no-device-counters");
        assert!(w.message.contains("RAM file system"), "{}", w.message);
    }
    let out = iolab(&["info", "/sys"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("sysfs"), "{text}");
    assert!(text.contains("no device counters"), "{text}");
}

/// A loop device over an image on a tmpfs: its SMART line sent the user to "the disk under
/// that file", which does not exist (the file is in RAM).
#[test]
fn a_loop_over_a_file_in_ram_says_no_disk_holds_it() {
    let test = "a_loop_over_a_file_in_ram_says_no_disk_holds_it";
    if !loop_or_skip(test) {
        return;
    }
    let Some(fs) = scratch_or_skip(test, "tmpfs", 40 << 20, &[], "") else {
        return;
    };
    let img = fs.path().join("ram.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(16 << 20)
        .unwrap();
    let lo = iolab::fs::loopdev::LoopDevice::attach(&img, false).unwrap();
    let v = json_of(&iolab(&["info", lo.device.to_str().unwrap(), "--json"]));
    let devs = v["devices"].as_array().unwrap();
    assert_eq!(devs.len(), 1, "nothing is under a file in RAM: {devs:?}");
    let smart = v["smart"].as_array().unwrap();
    assert_eq!(smart.len(), 1);
    assert_eq!(smart[0]["available"], false);
    let r = smart[0]["reason"].as_str().unwrap();
    assert!(r.contains("RAM file system"), "{r}");
    assert!(r.contains("no disk holds it"), "{r}");
    assert!(!r.contains("disk under that file"), "{r}");
    drop(lo);
}

/// An exFAT mounted through exfat-fuse: mountinfo says only `fuseblk` (as for ntfs-3g), and
/// so did the table, which left the user to guess which file system was measured.
#[test]
fn a_fuseblk_mount_names_its_file_system() {
    let test = "a_fuseblk_mount_names_its_file_system";
    if !common::tool_or_skip(test, "mkfs.exfat", "exfatprogs")
        || !common::tool_or_skip(test, "mount.exfat-fuse", "exfat-fuse")
    {
        return;
    }
    let Some(img) = loop_over_image(test, 64 << 20) else {
        return;
    };
    let mk = std::process::Command::new("mkfs.exfat")
        .arg(&img.lo.device)
        .output()
        .unwrap();
    assert!(mk.status.success(), "mkfs.exfat: {mk:?}");
    let mnt = tempdir();
    let ok = std::process::Command::new("mount.exfat-fuse")
        .arg(&img.lo.device)
        .arg(mnt.path())
        .status()
        .unwrap();
    assert!(ok.success(), "mount.exfat-fuse");
    let _m = Mounted(mnt.path().to_path_buf());
    let p = mnt.path().to_str().unwrap();
    let v = json_of(&iolab(&["info", p, "--json", "--no-smart"]));
    assert_eq!(v["mount"]["fs_type"], "fuseblk", "{v}");
    assert_eq!(v["mount"]["fs_name"], "exfat", "{v}");
    let text = String::from_utf8_lossy(&iolab(&["info", p, "--no-smart"]).stdout).to_string();
    assert!(text.contains("exfat (through FUSE: fuseblk)"), "{text}");
}

/// A loop device whose image was deleted: the table showed the file's old path as if it
/// were there, and the chain stopped at the loop (the file could not be followed to its
/// disk).
#[test]
fn a_loop_over_a_deleted_file_says_so_and_finds_its_disk() {
    let test = "a_loop_over_a_deleted_file_says_so_and_finds_its_disk";
    let Some(img) = loop_over_image(test, 8 << 20) else {
        return;
    };
    let disk = iolab::sysinfo::block_device_of(img._dir.path()).map(|(n, _)| n);
    std::fs::remove_file(&img.lo.image).unwrap();
    let dev = img.lo.device.to_str().unwrap();
    let v = json_of(&iolab(&["info", dev, "--json", "--no-smart"]));
    let devs = v["devices"].as_array().unwrap();
    assert_eq!(devs[0]["loop_backing_deleted"], true, "{v}");
    // The disk under the temp dir (none when it is a tmpfs) is still found.
    if let Some(disk) = disk {
        let below = devs.iter().find(|d| d["relation"] == "backs-loop");
        assert_eq!(
            below.map(|d| d["name"].clone()),
            Some(Value::from(disk)),
            "{v}"
        );
    }
    let text = String::from_utf8_lossy(&iolab(&["info", dev, "--no-smart"]).stdout).to_string();
    assert!(text.contains("(deleted"), "{text}");
}

/// `iolab info` in a directory deleted under the shell: it printed "Path: ." with no mount
/// and exit 0; it is bad input, said as such.
#[test]
fn a_deleted_current_directory_is_refused() {
    let dir = tempdir();
    let gone = dir.path().join("gone");
    std::fs::create_dir(&gone).unwrap();
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(r#"cd "$1" && rmdir "$1" && exec "$2" info --no-smart"#)
        .arg("sh")
        .arg(&gone)
        .arg(env!("CARGO_BIN_EXE_iolab"))
        .env("IOLAB_NO_HISTORY", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("deleted"), "{err}");
}

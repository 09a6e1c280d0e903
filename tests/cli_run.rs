//! `iolab run` end to end: the real binary on temp dirs (and, as root, loop devices), every
//! engine, the JSON against the documented schema, engine equivalence, bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn iolab(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_iolab"))
        .current_dir(cwd)
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run iolab")
}

/// A sparse image file of `len` bytes in `dir`, for a loop device.
fn sparse_image(dir: &Path, name: &str, len: u64) -> std::path::PathBuf {
    let img = dir.join(name);
    std::fs::File::create(&img).unwrap().set_len(len).unwrap();
    img
}

fn tempdir() -> tempfile::TempDir {
    // On the file system of the build dir, where O_DIRECT works (unlike tmpfs /tmp).
    tempfile::Builder::new()
        .prefix("iolab-test-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd.map(|e| e.unwrap().path()).collect();
    v.sort();
    v
}

/// The `key` string of every element of a JSON array (test names, warning codes).
fn strings<'a>(array: &'a Value, key: &str) -> Vec<&'a str> {
    array
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v[key].as_str().unwrap())
        .collect()
}

fn json_of(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "iolab failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is the JSON result")
}

const QUICK: &[&str] = &[
    "--duration",
    "200ms",
    "--ramp",
    "0",
    "--size",
    "8M",
    "--json",
    "--no-save",
];

/// Every field docs/results-schema.md promises for a block run.
fn check_schema(doc: &Value) {
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["tool"]["name"], "iolab");
    assert!(doc["tool"]["version"].is_string());
    assert!(doc["argv"].as_array().unwrap().len() > 1);
    assert_eq!(doc["command"], "run");
    assert_eq!(doc["status"], "complete");
    let env = &doc["environment"];
    for k in [
        "kernel",
        "cpu_model",
        "cpu_count",
        "ram_bytes",
        "target_path",
        "fs_type",
        "mount_options",
    ] {
        assert!(!env[k].is_null(), "environment.{k} missing");
    }
    for k in [
        "block_device",
        "logical_block_size",
        "physical_block_size",
        "rotational",
        "cpuidle_driver",
        "cpuidle_governor",
        "guest_halt_poll_ns",
        "transparent_hugepage",
    ] {
        assert!(env.get(k).is_some(), "environment.{k} missing");
    }
    // The vCPU warning comes exactly when the machine halts idle vCPUs at once and a test
    // runs at queue depth 1.
    let halts = env["guest_halt_poll_ns"].as_u64() == Some(0);
    let qd1 = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["settings"]["iodepth"] == 1 && t["settings"]["engine"] != "null");
    let warned = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["code"] == "vcpu-halt");
    assert_eq!(warned, halts && qd1, "vcpu-halt warning");
    assert!(doc["warnings"].is_array());
    let tests = doc["tests"].as_array().unwrap();
    assert!(!tests.is_empty());
    for t in tests {
        assert!(t["name"].is_string());
        let s = &t["settings"];
        for k in [
            "rw",
            "bs_bytes",
            "iodepth",
            "jobs",
            "direct",
            "engine",
            "size_bytes",
            "duration_s",
        ] {
            assert!(!s[k].is_null(), "settings.{k} missing");
        }
        let runs = t["runs"].as_array().unwrap();
        assert!(!runs.is_empty());
        for r in runs {
            assert!(r["iops"].as_f64().unwrap() > 0.0);
            assert!(r["bw_bytes_per_s"].as_f64().unwrap() > 0.0);
            for k in ["mean", "p50", "p90", "p99", "p999", "max"] {
                assert!(!r["lat_ns"][k].is_null(), "lat_ns.{k} missing");
            }
            let l = &r["lat_ns"];
            assert!(l["p50"].as_u64() <= l["p99"].as_u64());
            assert!(l["p99"].as_u64() <= l["max"].as_u64());
            assert!(r["intervals"].is_array());
            assert!(r["avg_queue_depth"].as_f64().unwrap() > 0.0);
            assert!(r["cpu"]["process_pct"].as_f64().is_some());
            // Idle-state entries per I/O exactly where the kernel counts them.
            let entries = r.get("idle_entries_per_io").and_then(|v| v.as_f64());
            assert_eq!(
                entries.is_some(),
                iolab::sysinfo::cpuidle::idle_entries().is_some(),
                "idle_entries_per_io present iff cpuidle counters exist"
            );
            assert!(entries.is_none_or(|e| e >= 0.0 && e.is_finite()));
            // Huge-page buffers asked for exactly when a job's buffers make half a huge page.
            let s = &t["settings"];
            let pool = s["bs_bytes"].as_u64().unwrap()
                * if s["engine"] == "sync" {
                    1
                } else {
                    s["iodepth"].as_u64().unwrap()
                };
            let asked = s["huge_pages"] != false
                && iolab::sysinfo::hugepages::thp_size()
                    .is_some_and(|h| pool.next_multiple_of(4096) >= h as u64 / 2);
            assert_eq!(
                r.get("huge_page_buffers").is_some(),
                asked,
                "huge_page_buffers present iff asked for ({pool} bytes of buffers)"
            );
        }
        for m in ["iops", "bw_bytes_per_s"] {
            for k in [
                "mean",
                "median",
                "stddev",
                "min",
                "max",
                "ci95_low",
                "ci95_high",
            ] {
                assert!(
                    t["summary"][m][k].as_f64().is_some(),
                    "summary.{m}.{k} missing"
                );
            }
        }
    }
}

#[test]
fn every_engine_runs_and_matches_the_schema() {
    for engine in ["sync", "uring", "null"] {
        let d = tempdir();
        let mut args = vec![
            "run",
            "--engine",
            engine,
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--iodepth",
            "4",
            "--repeat",
            "2",
        ];
        args.extend_from_slice(QUICK);
        let out = iolab(d.path(), &args);
        let doc = json_of(&out);
        check_schema(&doc);
        let t = &doc["tests"][0];
        assert_eq!(t["name"], "RND4K Q4T1 read");
        assert_eq!(t["runs"].as_array().unwrap().len(), 2);
        let engine_ran = t["settings"]["engine"].as_str().unwrap();
        if engine == "uring" && engine_ran == "sync" {
            eprintln!("NOTE: io_uring unavailable here, uring fell back to sync");
        } else {
            assert_eq!(engine_ran, engine);
        }
        // The test file is gone; nothing else was written (--no-save).
        assert!(
            entries(d.path()).is_empty(),
            "left behind: {:?}",
            entries(d.path())
        );
    }
}

#[test]
fn default_preset_runs_every_test_in_order() {
    let d = tempdir();
    let out = iolab(
        d.path(),
        &[
            "run",
            "--duration",
            "100ms",
            "--ramp",
            "0",
            "--size",
            "8M",
            "--repeat",
            "1",
            "--json",
            "--no-save",
        ],
    );
    let doc = json_of(&out);
    check_schema(&doc);
    let names: Vec<&str> = strings(&doc["tests"], "name");
    assert_eq!(
        names,
        [
            "SEQ1M Q8T1 read",
            "SEQ1M Q1T1 read",
            "RND4K Q32T1 read",
            "RND4K Q1T1 read",
            "SEQ1M Q8T1 write",
            "SEQ1M Q1T1 write",
            "RND4K Q32T1 write",
            "RND4K Q1T1 write"
        ]
    );
    let codes: Vec<&str> = strings(&doc["warnings"], "code");
    assert!(
        codes.contains(&"no-spread"),
        "one repeat must be warned about: {codes:?}"
    );
    // Write runs end with a timed fsync.
    assert!(doc["tests"][4]["runs"][0]["fsync_ns"].as_u64().is_some());
}

#[test]
fn table_output_and_result_file() {
    let d = tempdir();
    let out = iolab(
        d.path(),
        &[
            "run",
            "--preset",
            "real",
            "--duration",
            "100ms",
            "--ramp",
            "0",
            "--size",
            "8M",
            "--repeat",
            "2",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "SEQ1M Q1T1 read",
        "RND4K Q1T1 write",
        "MB/s",
        "IOPS",
        "p99.9",
        "MB/s = 10^6 bytes/s",
    ] {
        assert!(table.contains(needle), "table lacks {needle}:\n{table}");
    }
    let results: Vec<PathBuf> = entries(&d.path().join("iolab-results"));
    assert_eq!(results.len(), 1);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&results[0]).unwrap()).unwrap();
    check_schema(&doc);
    assert_eq!(doc["tests"].as_array().unwrap().len(), 4);
}

/// A mixed test reports its reads and its writes apart (JSON `runs[].read`/`write`, their
/// summaries, the table's two rows under the test), adding up to the whole; tests of one
/// direction have no such parts.
#[test]
fn mixed_tests_report_reads_and_writes_apart() {
    for (engine, rw, label) in [
        ("sync", "randrw", "RND4K Q4T1 mixed 70% read"),
        ("uring", "randrw", "RND4K Q4T1 mixed 70% read"),
        ("null", "randrw", "RND4K Q4T1 mixed 70% read"),
        ("uring", "readwrite", "SEQ4K Q4T1 mixed 70% read"),
    ] {
        let d = tempdir();
        let out = iolab(
            d.path(),
            &[
                "run",
                "--engine",
                engine,
                "--rw",
                rw,
                "--rwmix-read",
                "70",
                "--bs",
                "4k",
                "--iodepth",
                "4",
                "--repeat",
                "2",
                "--duration",
                "200ms",
                "--ramp",
                "0",
                "--size",
                "8M",
            ],
        );
        assert!(
            out.status.success(),
            "{engine}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let table = String::from_utf8_lossy(&out.stdout);
        let lines: Vec<&str> = table.lines().collect();
        let row = lines
            .iter()
            .position(|l| l.contains(label))
            .unwrap_or_else(|| panic!("{engine}: no mixed row:\n{table}"));
        assert!(
            lines[row + 1].contains("\u{21b3} reads"),
            "{engine}:\n{table}"
        );
        assert!(
            lines[row + 2].contains("\u{21b3} writes"),
            "{engine}:\n{table}"
        );
        assert!(table.contains("its reads and its writes alone"), "{table}");

        let results = entries(&d.path().join("iolab-results"));
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(&results[0]).unwrap()).unwrap();
        let t = &doc["tests"][0];
        assert_eq!(t["settings"]["rw"], rw);
        assert_eq!(t["settings"]["rwmix_read"], 70);
        assert_eq!(t["direction"], "mixed");
        for r in t["runs"].as_array().unwrap() {
            let (rd, wr) = (&r["read"], &r["write"]);
            let ops = r["ops"].as_u64().unwrap();
            let (rops, wops) = (rd["ops"].as_u64().unwrap(), wr["ops"].as_u64().unwrap());
            assert_eq!(rops + wops, ops, "{engine}: parts add up to the run");
            assert_eq!(
                rd["bytes"].as_u64().unwrap() + wr["bytes"].as_u64().unwrap(),
                r["bytes"].as_u64().unwrap()
            );
            assert_eq!(rd["bytes"].as_u64().unwrap(), rops * 4096);
            assert!(ops > 500, "{engine}: too few I/Os to judge the mix: {ops}");
            let share = rops as f64 / ops as f64;
            assert!((0.6..0.8).contains(&share), "{engine}: read share {share}");
            let iops = r["iops"].as_f64().unwrap();
            let parts = rd["iops"].as_f64().unwrap() + wr["iops"].as_f64().unwrap();
            assert!((parts - iops).abs() <= iops * 1e-9, "{parts} vs {iops}");
            assert_eq!(rd["lat_ns"]["count"].as_u64(), Some(rops));
            assert_eq!(wr["lat_ns"]["count"].as_u64(), Some(wops));
            // The whole's extremes are the extremes of its parts.
            let max = |v: &Value| v["lat_ns"]["max"].as_u64().unwrap();
            assert_eq!(max(r), max(rd).max(max(wr)));
        }
        for k in [
            "read_iops",
            "write_iops",
            "read_lat_mean_ns",
            "write_bw_bytes_per_s",
        ] {
            assert_eq!(t["summary"][k]["n"], 2, "{engine}: summary.{k}");
        }
    }

    // One direction only: no parts, no extra rows; 100 % reads: no writes row.
    let d = tempdir();
    let mut args = vec!["run", "--rw", "randread", "--bs", "4k", "--repeat", "1"];
    args.extend_from_slice(QUICK);
    let doc = json_of(&iolab(d.path(), &args));
    assert!(doc["tests"][0]["runs"][0].get("read").is_none());
    assert!(doc["tests"][0]["summary"].get("read_iops").is_none());
    let out = iolab(
        d.path(),
        &[
            "run",
            "--rw",
            "randrw",
            "--rwmix-read",
            "100",
            "--bs",
            "4k",
            "--repeat",
            "1",
            "--duration",
            "100ms",
            "--ramp",
            "0",
            "--size",
            "8M",
            "--no-save",
        ],
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        table.contains("\u{21b3} reads") && !table.contains("\u{21b3} writes"),
        "{table}"
    );
}

/// `--interval`: the time series' resolution; whole intervals only, each point `interval_ms`
/// apart, their I/Os within the run's; the default is 100 ms.
#[test]
fn interval_sets_the_series_resolution() {
    let d = tempdir();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "--rw", "randread", "--bs", "4k", "--repeat", "1"];
        args.extend_from_slice(extra);
        args.extend_from_slice(QUICK);
        json_of(&iolab(d.path(), &args))
    };
    for (extra, ms, points) in [
        (&["--interval", "20ms"][..], 20, 10),
        (&[][..], 100, 2),
        (&["--interval", "200ms"][..], 200, 1),
    ] {
        let doc = run(extra);
        let r = &doc["tests"][0]["runs"][0];
        assert_eq!(r["interval_ms"], ms, "{extra:?}");
        let pts = r["intervals"].as_array().unwrap();
        assert_eq!(pts.len(), points, "{extra:?}: whole intervals of 200 ms");
        for (i, p) in pts.iter().enumerate() {
            assert_eq!(p["t_ms"].as_u64(), Some((i as u64 + 1) * ms), "{extra:?}");
            let rate = p["ios"].as_f64().unwrap() * 1000.0 / ms as f64;
            assert!(
                (p["iops"].as_f64().unwrap() - rate).abs() < 1e-6,
                "{extra:?}"
            );
        }
        let in_points: u64 = pts.iter().map(|p| p["ios"].as_u64().unwrap()).sum();
        assert!(in_points > 0 && in_points <= r["ops"].as_u64().unwrap());
    }
}

/// `--pause`: idle time before every run but the first, over all tests; recorded in every
/// test's settings and said in the table's footer; without it, no pause and no field.
#[test]
fn pause_idles_between_runs_and_is_recorded() {
    let d = tempdir();
    let args = |pause: &'static str| {
        let mut a = vec!["run", "--engine", "null", "--preset", "real"];
        a.extend_from_slice(&["--repeat", "2", "--duration", "100ms", "--ramp", "0"]);
        a.extend_from_slice(&["--size", "8M", "--no-save", "--pause", pause]);
        a
    };
    // The real preset: SEQ1M Q1T1 and RND4K Q1T1, read and write, 2 runs each, so 7 pauses
    // of 0.2 s: the command cannot end sooner than 1.4 s (a lower bound only).
    let t = std::time::Instant::now();
    let out = iolab(d.path(), &args("200ms"));
    let took = t.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        took >= std::time::Duration::from_millis(1400),
        "7 pauses of 0.2 s, yet the command took {took:?}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("pause 0.2 s (--pause) done").count(),
        7,
        "a pause before every run but the first:\n{stderr}"
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("0.2 s idle before each run after the first"),
        "{table}"
    );

    let mut json_args = args("200ms");
    json_args.push("--json");
    let doc = json_of(&iolab(d.path(), &json_args));
    check_schema(&doc);
    let tests = doc["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 4);
    for t in tests {
        assert_eq!(t["settings"]["pause_s"], 0.2);
    }
    let mut none = args("0");
    none.push("--json");
    let doc = json_of(&iolab(d.path(), &none));
    assert!(doc["tests"][0]["settings"].get("pause_s").is_none());
}

/// Find iolab's kept test file in `dir`.
fn test_file(dir: &Path) -> PathBuf {
    entries(dir)
        .into_iter()
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("iolab-test-")
        })
        .expect("kept test file")
}

#[test]
fn sync_and_uring_write_identical_files() {
    let mut contents = Vec::new();
    for (engine, qd) in [("sync", "1"), ("uring", "16"), ("uring", "3")] {
        let d = tempdir();
        let out = iolab(
            d.path(),
            &[
                "run",
                "--engine",
                engine,
                "--iodepth",
                qd,
                "--rw",
                "randwrite",
                "--bs",
                "4k",
                "--size",
                "4M",
                "--io-size",
                "4M",
                "--repeat",
                "1",
                "--keep",
                "--json",
                "--no-save",
            ],
        );
        let doc = json_of(&out);
        // Size-based: every block exactly once.
        assert_eq!(doc["tests"][0]["runs"][0]["ops"], 1024);
        contents.push(std::fs::read(test_file(d.path())).unwrap());
    }
    assert_eq!(contents[0].len(), 4 << 20);
    assert!(
        contents[0] == contents[1],
        "sync and uring QD16 wrote different bytes"
    );
    assert!(
        contents[0] == contents[2],
        "sync and uring QD3 wrote different bytes"
    );
    // Incompressible and unique: no two 4 KiB blocks are equal.
    let mut blocks: Vec<&[u8]> = contents[0].chunks(4096).collect();
    blocks.sort();
    blocks.dedup();
    assert_eq!(blocks.len(), 1024);
}

#[test]
fn zero_pattern_writes_zeros() {
    let d = tempdir();
    let out = iolab(
        d.path(),
        &[
            "run",
            "--rw",
            "write",
            "--bs",
            "64k",
            "--size",
            "1M",
            "--io-size",
            "1M",
            "--pattern",
            "zero",
            "--repeat",
            "1",
            "--keep",
            "--json",
            "--no-save",
        ],
    );
    let doc = json_of(&out);
    assert_eq!(doc["tests"][0]["settings"]["pattern"], "zero");
    let data = std::fs::read(test_file(d.path())).unwrap();
    assert!(data.iter().all(|&b| b == 0));
}

/// Bad input: exit 2, one clear error line, nothing created in the working dir or target.
fn expect_usage_error(cwd: &Path, args: &[&str], needle: &str) {
    let before = entries(cwd);
    let out = iolab(cwd, args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "args {args:?}: expected exit 2, got {}: {stderr}",
        out.status
    );
    assert!(
        stderr.to_lowercase().contains(&needle.to_lowercase()),
        "args {args:?}: stderr lacks '{needle}': {stderr}"
    );
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "args {args:?}: the error should be one line: {stderr}"
    );
    assert!(
        stderr.starts_with("iolab: error: "),
        "args {args:?}: {stderr}"
    );
    assert_eq!(entries(cwd), before, "args {args:?} left something behind");
}

#[test]
fn bad_input_is_refused_with_exit_2() {
    let d = tempdir();
    let p = d.path();
    let cases: &[(&[&str], &str)] = &[
        (&["run", "--preset", "turbo"], "invalid value 'turbo'"),
        (&["run", "--engine", "libaio"], "invalid value 'libaio'"),
        (&["run", "--bs", "0"], "--bs 0"),
        (&["run", "--bs", "1000"], "multiple of 512"),
        (&["run", "--bs", "4x"], "not a size"),
        (&["run", "--size=-4k"], "negative"),
        (&["run", "--size", "1k"], "smaller than one block"),
        (&["run", "--size", "900T"], "free"),
        (&["run", "--duration=-1s"], "negative"),
        (&["run", "--duration", "-1s"], "negative"),
        (&["run", "--size", "-4k"], "negative"),
        (&["run", "--iodepth", "-1"], "--iodepth"),
        (
            &["run", "--durration", "5"],
            "similar argument exists: '--duration'",
        ),
        (&["run", "--duration", "soon"], "not a duration"),
        (&["run", "--pause", "-1s"], "negative"),
        (&["run", "--pause", "a while"], "not a duration"),
        (&["run", "--interval", "0"], "whole milliseconds"),
        (&["run", "--interval", "1500us"], "whole milliseconds"),
        (&["run", "--interval=-1s"], "negative"),
        (
            &["run", "--interval", "1s", "--duration", "500ms"],
            "longer than --duration",
        ),
        (
            &["run", "--interval", "1ms", "--duration", "2m"],
            "120000 points per run",
        ),
        (&["run", "--duration", "0"], "--duration 0"),
        (&["run", "--iodepth", "0"], "--iodepth 0"),
        (&["run", "--iodepth", "1025"], "--iodepth 1025"),
        (&["run", "--jobs", "0"], "--jobs 0"),
        (&["run", "--repeat", "0"], "--repeat 0"),
        (&["run", "--repeat", "lots"], "--repeat 'lots'"),
        (&["run", "--rwmix-read", "101"], "--rwmix-read 101"),
        (
            &["run", "--rw", "randread", "--rwmix-read", "50"],
            "no test of this run mixes reads and writes",
        ),
        (&["run", "--rwmix-read", "50"], "add --mix"),
        (
            &["run", "--target", "/nonexistent/iolab/dir"],
            "does not exist",
        ),
    ];
    for (args, needle) in cases {
        expect_usage_error(p, args, needle);
    }
    // An existing file is only overwritten with --allow-destroy naming it.
    std::fs::write(p.join("precious.dat"), b"keep me").unwrap();
    expect_usage_error(p, &["run", "--target", "precious.dat"], "--allow-destroy");
    expect_usage_error(
        p,
        &[
            "run",
            "--target",
            "precious.dat",
            "--allow-destroy",
            "other.dat",
        ],
        "does not name",
    );
    assert_eq!(std::fs::read(p.join("precious.dat")).unwrap(), b"keep me");
}

#[test]
fn existing_file_with_allow_destroy_is_used_and_kept() {
    let d = tempdir();
    let f = d.path().join("scratch.dat");
    std::fs::write(&f, vec![1u8; 1 << 20]).unwrap();
    let fs = f.display().to_string();
    let out = iolab(
        d.path(),
        &[
            "run",
            "--target",
            &fs,
            "--allow-destroy",
            &fs,
            "--rw",
            "randread",
            "--bs",
            "4k",
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
    let doc = json_of(&out);
    assert_eq!(doc["tests"][0]["settings"]["size_bytes"], 1 << 20);
    assert!(f.exists(), "a user's file is never deleted");
}

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

#[test]
fn read_only_file_system_is_refused() {
    let Some(fs) = iolab::fs::scratch::scratch_or_skip(
        "read_only_file_system_is_refused",
        "tmpfs",
        8 << 20,
        &[],
        "ro",
    ) else {
        return;
    };
    let t = fs.path().display().to_string();
    let cwd = tempdir();
    expect_usage_error(cwd.path(), &["run", "--target", &t], "read-only");
}

#[test]
fn block_devices_are_protected() {
    if !is_root() {
        eprintln!("SKIPPED block_devices_are_protected: needs root for loop devices");
        return;
    }
    let work = tempdir();
    // A mounted device is refused for writes even with --allow-destroy.
    let Some(mounted) = iolab::fs::scratch::scratch_or_skip(
        "block_devices_are_protected",
        "ext4",
        32 << 20,
        &[],
        "",
    ) else {
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
    let out = iolab(
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
    let doc = json_of(&out);
    let codes: Vec<&str> = strings(&doc["warnings"], "code");
    assert!(codes.contains(&"not-prefilled"), "{codes:?}");
    assert_eq!(doc["environment"]["block_device"], lo.name());
    // With --allow-destroy: a write test runs and the device counters see its bytes.
    let out = iolab(
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
    let doc = json_of(&out);
    let run = &doc["tests"][0]["runs"][0];
    assert_eq!(run["bytes"], 8 << 20);
    let dev_written = run["device"]["write_bytes"].as_u64().unwrap();
    assert!(dev_written >= 8 << 20, "device saw {dev_written} bytes");
    drop(lo);
}

#[test]
fn direct_io_needs_blocks_of_the_logical_block_size() {
    if !is_root() {
        eprintln!(
            "SKIPPED direct_io_needs_blocks_of_the_logical_block_size: needs root for loop devices"
        );
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
    let detach = scopeguard(dev.clone());
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

#[test]
fn huge_pages_false_is_recorded_and_shown() {
    let d = tempdir();
    let args = [
        "run",
        "--rw",
        "read",
        "--bs",
        "1M",
        "--iodepth",
        "4",
        "--size",
        "16M",
        "--duration",
        "100ms",
        "--ramp",
        "0",
        "--repeat",
        "1",
        "--no-save",
    ];
    let out = iolab(d.path(), &[&args[..], &["--huge-pages", "false"]].concat());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("buffers on ordinary pages (--huge-pages false)"),
        "{table}"
    );
    // The default says nothing in the footer, and records the setting in the JSON.
    let out = iolab(d.path(), &[&args[..], &["--json"]].concat());
    let doc = json_of(&out);
    assert_eq!(doc["tests"][0]["settings"]["huge_pages"], true);
    let out = iolab(d.path(), &args);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("--huge-pages"));
    expect_usage_error(d.path(), &["run", "--huge-pages", "maybe"], "--huge-pages");
}

/// A 1 MiB direct I/O reaches a loop device as one request: the I/O buffers are on huge
/// pages, so the 256 pages of a buffer are a few physically contiguous segments, not 256
/// scattered ones that the device's `max_segments` (128 on a loop device) splits in two.
#[test]
fn large_direct_ios_reach_the_device_whole() {
    if !is_root() {
        eprintln!("SKIPPED large_direct_ios_reach_the_device_whole: needs root for loop devices");
        return;
    }
    let Some(huge) =
        iolab::sysinfo::hugepages::thp_size().filter(|_| iolab::sysinfo::hugepages::thp_usable())
    else {
        eprintln!(
            "SKIPPED large_direct_ios_reach_the_device_whole: transparent huge pages are off \
             ({:?}) or absent in this kernel",
            iolab::sysinfo::hugepages::thp_mode()
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
        json_of(&iolab(cwd.path(), &[&args[..], extra].concat()))
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

struct Detach(String);
impl Drop for Detach {
    fn drop(&mut self) {
        let _ = iolab::fs::command::run("losetup", ["-d", &self.0]);
    }
}
fn scopeguard(dev: String) -> Detach {
    Detach(dev)
}

/// Interrupt a running `iolab run` with `sig` after its first test was saved.
fn interrupt_after_first_test(sig: nix::sys::signal::Signal) -> (Output, tempfile::TempDir) {
    let d = tempdir();
    let child = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .current_dir(d.path())
        .args([
            "run",
            "--preset",
            "real",
            "--duration",
            "1s",
            "--ramp",
            "0",
            "--size",
            "8M",
            "--repeat",
            "1",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let results = d.path().join("iolab-results");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let done = entries(&results)
            .first()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .and_then(|s| serde_json::from_str::<Value>(&s).ok())
            .is_some_and(|v| !v["tests"].as_array().unwrap().is_empty());
        if done || std::time::Instant::now() > deadline {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), sig).unwrap();
    (child.wait_with_output().unwrap(), d)
}

#[test]
fn signals_save_partial_results_and_clean_up() {
    use nix::sys::signal::Signal;
    for (sig, code) in [
        (Signal::SIGINT, 130),
        (Signal::SIGTERM, 143),
        (Signal::SIGHUP, 129),
    ] {
        let (out, d) = interrupt_after_first_test(sig);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{sig}: {stderr}");
        assert!(stderr.contains(sig.as_str()), "{sig}: {stderr}");
        let results = d.path().join("iolab-results");
        let files = entries(&results);
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
        assert_eq!(doc["status"], "interrupted");
        assert!(
            !doc["tests"].as_array().unwrap().is_empty(),
            "the finished test was kept"
        );
        // Only the results dir remains: the test file and the lock were removed.
        assert_eq!(entries(d.path()), vec![results], "{sig}");
    }
}

#[test]
fn a_second_run_on_the_same_target_is_refused() {
    let d = tempdir();
    let child = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .current_dir(d.path())
        .args([
            "run",
            "--preset",
            "real",
            "--duration",
            "2s",
            "--ramp",
            "0",
            "--size",
            "8M",
            "--repeat",
            "1",
            "--no-save",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let lock = d.path().join(".iolab.lock");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !lock.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let out = iolab(
        d.path(),
        &[
            "run",
            "--preset",
            "real",
            "--duration",
            "100ms",
            "--no-save",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("another iolab run"), "{stderr}");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let _ = child.wait_with_output();
    assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));
}

#[test]
fn odd_path_names_work() {
    use std::os::unix::ffi::OsStrExt;
    let d = tempdir();
    let odd = d
        .path()
        .join(std::ffi::OsStr::from_bytes(b"with space\nnewline \xff\xfe"));
    std::fs::create_dir(&odd).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .current_dir(d.path())
        .arg("run")
        .arg("--target")
        .arg(&odd)
        .args([
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--size",
            "4M",
            "--duration",
            "100ms",
            "--ramp",
            "0",
            "--repeat",
            "1",
            "--json",
            "--no-save",
        ])
        .output()
        .unwrap();
    let doc = json_of(&out);
    assert!(
        doc["environment"]["target_path"]
            .as_str()
            .unwrap()
            .contains("with space")
    );
    assert!(entries(&odd).is_empty());
}

#[test]
fn verify_passes_on_honest_storage() {
    for (engine, rw) in [
        ("sync", "randrw"),
        ("uring", "randrw"),
        ("uring", "readwrite"),
    ] {
        let d = tempdir();
        let out = iolab(
            d.path(),
            &[
                "run",
                "--verify",
                "--engine",
                engine,
                "--rw",
                rw,
                "--bs",
                "4k",
                "--iodepth",
                "8",
                "--repeat",
                "1",
                "--duration",
                "200ms",
                "--ramp",
                "0",
                "--size",
                "4M",
                "--json",
                "--no-save",
            ],
        );
        let doc = json_of(&out);
        assert_eq!(doc["tests"][0]["params"]["verify"], "true");
        assert!(doc["tests"][0]["runs"][0]["ops"].as_u64().unwrap() > 0);
    }
}

#[test]
fn verify_finds_corruption_behind_iolabs_back() {
    let d = tempdir();
    let f = d.path().join("data.bin");
    std::fs::write(&f, vec![0u8; 1 << 20]).unwrap();
    let fs = f.display().to_string();
    // Write the whole file once, sealed.
    let out = iolab(
        d.path(),
        &[
            "run",
            "--target",
            &fs,
            "--allow-destroy",
            &fs,
            "--verify",
            "--rw",
            "write",
            "--bs",
            "64k",
            "--io-size",
            "1M",
            "--repeat",
            "1",
            "--json",
            "--no-save",
        ],
    );
    json_of(&out);
    // Reading it back with the same seed verifies...
    let read_args = [
        "run",
        "--target",
        &fs,
        "--allow-destroy",
        &fs,
        "--verify",
        "--prefill",
        "false",
        "--rw",
        "read",
        "--bs",
        "4k",
        "--io-size",
        "1M",
        "--repeat",
        "1",
        "--json",
        "--no-save",
    ];
    json_of(&iolab(d.path(), &read_args));
    // ...until one bit flips.
    let mut data = std::fs::read(&f).unwrap();
    data[5000] ^= 0x10;
    std::fs::write(&f, &data).unwrap();
    let out = iolab(d.path(), &read_args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("data verification failed at offset 4608"),
        "{stderr}"
    );
    assert!(stderr.contains("corrupted"), "{stderr}");
}

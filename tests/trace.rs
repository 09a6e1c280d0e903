//! `iolab trace`: built-ins run, workload files are validated with line and column, a small
//! program is recorded under strace and replayed with the same calls and bytes, bad input
//! exits 2 leaving nothing behind, and the matrix can run a trace workload.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

mod common;
use common::{iolab, iolab_in, json, stderr, tool_or_skip};

fn is_empty_dir(d: &Path) -> bool {
    std::fs::read_dir(d).unwrap().next().is_none()
}

#[test]
fn every_builtin_parses_and_runs_briefly() {
    let names = iolab::workload::trace::builtins::names();
    assert!(names.len() >= 12);
    let list = iolab(&["trace", "list"]);
    assert!(list.status.success());
    let listed = String::from_utf8_lossy(&list.stdout).into_owned();
    let target = tempfile::tempdir().unwrap();
    let t = target.path().to_str().unwrap();
    for name in names {
        assert!(listed.contains(name), "{name} not listed");
        let o = iolab(&[
            "trace",
            "run",
            name,
            "--target",
            t,
            "--scale",
            "0.002",
            "--repeat",
            "1",
            "--no-save",
            "--json",
        ]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let doc = json(&o);
        assert_eq!(doc["status"], "complete", "{name}");
        let test = &doc["tests"][0];
        assert_eq!(test["family"], "trace");
        let run = &test["runs"][0];
        assert!(run["bytes"].as_u64().unwrap() > 0, "{name} moved no data");
        let streams = run["trace"]["streams"].as_array().unwrap();
        let copies: u64 = test["trace"]["streams"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["copies"].as_u64().unwrap())
            .sum();
        assert_eq!(
            streams.len() as u64,
            copies,
            "{name}: one result per stream copy"
        );
        assert!(
            run["trace"]["ops"]
                .as_object()
                .unwrap()
                .values()
                .all(|o| o["lat_ns"]["count"].as_u64().unwrap() == o["count"].as_u64().unwrap())
        );
        assert!(is_empty_dir(target.path()), "{name} left files behind");
    }
}

#[test]
fn stream_counts_and_pacing_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("w.toml");
    std::fs::write(
        &file,
        r#"
[[stream]]
name = "video"
copies = 2
files = 1
file_size = "1MiB"
mix = { read = 1 }
request_size = "64KiB"
rate = "20MB/s"
amount = "512KiB"

[[stream]]
name = "writer"
files = 3
file_size = "128KiB"
existing = false
sequence = ["write", "write", "fsync"]
request_size = "32KiB"
amount = "384KiB"
"#,
    )
    .unwrap();
    let target = tempfile::tempdir().unwrap();
    let o = iolab(&[
        "trace",
        "run",
        file.to_str().unwrap(),
        "--target",
        target.path().to_str().unwrap(),
        "--repeat",
        "1",
        "--no-save",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = json(&o);
    let run = &doc["tests"][0]["runs"][0];
    let streams = run["trace"]["streams"].as_array().unwrap();
    assert_eq!(streams.len(), 3);
    for s in streams.iter().filter(|s| s["name"] == "video") {
        assert_eq!(s["read_bytes"], 512 * 1024);
        assert_eq!(s["deadlines"], 8, "one deadline per 64 KiB request");
        assert!(s["missed_deadlines"].as_u64().unwrap() <= 8);
        assert!(s["rate_held"].is_boolean());
    }
    let w = streams.iter().find(|s| s["name"] == "writer").unwrap();
    assert_eq!(w["write_bytes"], 384 * 1024);
    assert_eq!(run["trace"]["ops"]["write"]["count"], 12);
    assert_eq!(
        run["trace"]["ops"]["fsync"]["count"], 5,
        "write write fsync x4, stopped after the 12th write"
    );
    assert_eq!(run["bytes"], 2 * 512 * 1024 + 384 * 1024);
    assert!(is_empty_dir(target.path()));
}

#[test]
fn validation_errors_carry_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let cases = [
        ("[[stream]\nname = \"a\"\n", "bad.toml:1:"),
        (
            "[[stream]]\nname = \"a\"\nfile_size = \"1M\"\nmix = { read = 1 }\nsequential = 1.5\namount = \"1M\"\n",
            "bad.toml:5:14: sequential = 1.5 is out of range",
        ),
        (
            "[[stream]]\nname = \"a\"\nfile_size = \"1M\"\nmix = { read = 1, fly = 2 }\namount = \"1M\"\n",
            "bad.toml:4:25: unknown operation 'fly'",
        ),
        (
            "[[stream]]\nname = \"a\"\nfile_size = \"-3\"\nmix = { read = 1 }\namount = \"1M\"\n",
            "bad.toml:3:13: file_size",
        ),
        (
            "[[stream]]\nname = \"a\"\nfile_size = \"1M\"\nmix = { read = 1 }\n",
            "bad.toml:1:1: stream 'a' needs duration",
        ),
        (
            "[[stream]]\nname = \"a\"\ndataset = \"mp3-pile\"\nmix = { read = 1 }\namount = \"1M\"\n",
            "bad.toml:3:11: unknown data set 'mp3-pile'",
        ),
        (
            "[[stream]]\nname = \"a\"\ndataset = \"office-docs\"\nfiles = 3\nmix = { read = 1 }\namount = \"1M\"\n",
            "bad.toml:4:9: files cannot be combined with dataset",
        ),
    ];
    for (text, want) in cases {
        let f = dir.path().join("bad.toml");
        std::fs::write(&f, text).unwrap();
        let o = iolab(&[
            "trace",
            "run",
            f.to_str().unwrap(),
            "--target",
            target.path().to_str().unwrap(),
            "--no-save",
        ]);
        assert_eq!(o.status.code(), Some(2), "{text}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(want),
            "want '{want}' in: {}",
            stderr(&o)
        );
        assert!(is_empty_dir(target.path()));
    }
}

#[test]
fn bad_input_exits_2_and_creates_nothing() {
    let target = tempfile::tempdir().unwrap();
    let t = target.path().to_str().unwrap();
    let out = target.path().join("results");
    let o = iolab(&[
        "trace",
        "run",
        "no-such-workload",
        "--target",
        t,
        "--output",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown built-in workload 'no-such-workload'"));
    assert!(
        stderr(&o).contains("hd-playback-4x"),
        "lists the built-ins: {}",
        stderr(&o)
    );
    let o = iolab(&["trace", "run", "office", "--target", t, "--scale", "0"]);
    assert_eq!(o.status.code(), Some(2));
    let o = iolab_in(
        target.path(),
        &["trace", "record", "-o", "x.trace", "--", "/no/such/program"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not found") || stderr(&o).contains("strace is not installed"));
    // A replay needing far more room than there is.
    let trace = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        trace.path(),
        "{\"format\":\"iolab-trace\",\"version\":1,\"command\":[\"x\"],\"root\":\"/r\",\"recorded_at\":\"\",\"recorded_ns\":1,\"wall_ns\":1,\"calls\":1,\"threads\":1,\"read_bytes\":1,\"write_bytes\":0,\"skipped_outside_root\":0,\"skipped_failed\":0,\"files\":[{\"path\":\"huge\",\"size\":1000000000000000}],\"dirs\":[]}\n{\"t_ns\":0,\"tid\":1,\"op\":\"read\",\"path\":\"huge\",\"off\":0,\"len\":1,\"dur_ns\":1}\n",
    )
    .unwrap();
    let o = iolab(&[
        "trace",
        "replay",
        trace.path().to_str().unwrap(),
        "--target",
        t,
        "--output",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("free"), "{}", stderr(&o));
    // A trace whose path escapes the replay directory.
    std::fs::write(
        trace.path(),
        "{\"format\":\"iolab-trace\",\"version\":1,\"command\":[\"x\"],\"root\":\"/r\",\"recorded_at\":\"\",\"recorded_ns\":1,\"wall_ns\":1,\"calls\":1,\"threads\":1,\"read_bytes\":0,\"write_bytes\":0,\"skipped_outside_root\":0,\"skipped_failed\":0,\"files\":[],\"dirs\":[]}\n{\"t_ns\":0,\"tid\":1,\"op\":\"stat\",\"path\":\"../etc/passwd\",\"dur_ns\":1}\n",
    )
    .unwrap();
    let o = iolab(&[
        "trace",
        "replay",
        trace.path().to_str().unwrap(),
        "--target",
        t,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains(":2:"), "names the line: {}", stderr(&o));
    assert!(is_empty_dir(target.path()), "nothing left behind");
}

/// Per-op counts and read/write bytes of a trace file's calls.
fn trace_totals(path: &Path) -> (BTreeMap<String, u64>, u64, u64) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut ops = BTreeMap::new();
    let (mut r, mut w) = (0, 0);
    for line in text.lines().skip(1) {
        let c: Value = serde_json::from_str(line).unwrap();
        *ops.entry(c["op"].as_str().unwrap().to_string())
            .or_insert(0) += 1;
        match c["op"].as_str().unwrap() {
            "read" => r += c["len"].as_u64().unwrap(),
            "write" => w += c["len"].as_u64().unwrap(),
            _ => {}
        }
    }
    (ops, r, w)
}

#[test]
fn record_a_program_then_replay_it() {
    let test = "record_a_program_then_replay_it";
    if !tool_or_skip(test, "strace", "strace") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let script = "printf aaa > a; printf bbbb > b; printf cc > c; cat a > /dev/null; mkdir d; cat a b >> d/e; mv c d/c; rm b";
    let o = iolab_in(
        work.path(),
        &[
            "trace",
            "record",
            "-o",
            "app.trace",
            "--",
            "sh",
            "-c",
            script,
        ],
    );
    if !o.status.success() && stderr(&o).to_lowercase().contains("ptrace") {
        common::skip(
            test,
            format_args!("ptrace not permitted here: {}", stderr(&o)),
        );
        return;
    }
    assert!(o.status.success(), "{}", stderr(&o));
    let tf = work.path().join("app.trace");
    let text = std::fs::read_to_string(&tf).unwrap();
    let calls: Vec<Value> = text
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let writes: Vec<(String, u64, u64)> = calls
        .iter()
        .filter(|c| c["op"] == "write")
        .map(|c| {
            (
                c["path"].as_str().unwrap().to_string(),
                c["off"].as_u64().unwrap(),
                c["len"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        writes,
        vec![
            ("a".into(), 0, 3),
            ("b".into(), 0, 4),
            ("c".into(), 0, 2),
            ("d/e".into(), 0, 3),
            ("d/e".into(), 3, 4),
        ],
        "{text}"
    );
    let reads: Vec<(String, u64)> = calls
        .iter()
        .filter(|c| c["op"] == "read" && c["len"].as_u64().unwrap() > 0)
        .map(|c| {
            (
                c["path"].as_str().unwrap().to_string(),
                c["len"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        reads,
        vec![("a".into(), 3), ("a".into(), 3), ("b".into(), 4)],
        "{text}"
    );
    assert!(calls.iter().any(|c| c["op"] == "mkdir" && c["path"] == "d"));
    assert!(
        calls
            .iter()
            .any(|c| c["op"] == "rename" && c["path"] == "c" && c["to"] == "d/c")
    );
    assert!(
        calls
            .iter()
            .any(|c| c["op"] == "unlink" && c["path"] == "b")
    );
    assert!(
        calls
            .iter()
            .all(|c| !c["path"].as_str().unwrap().starts_with('/')),
        "only calls under the root, relative to it"
    );
    assert!(
        !calls.iter().any(|c| c["path"] == "app.trace"),
        "not iolab's own output"
    );
    let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert!(
        header["threads"].as_u64().unwrap() >= 2,
        "the shell and its children"
    );

    let (ops, rbytes, wbytes) = trace_totals(&tf);
    for timing in ["asap", "recorded"] {
        let target = tempfile::tempdir().unwrap();
        let o = iolab(&[
            "trace",
            "replay",
            tf.to_str().unwrap(),
            "--target",
            target.path().to_str().unwrap(),
            "--timing",
            timing,
            "--keep",
            "--repeat",
            "1",
            "--no-save",
            "--json",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let doc = json(&o);
        let run = &doc["tests"][0]["runs"][0];
        let rp = &run["trace"]["replay"];
        assert_eq!(rp["errors"], 0, "{rp}");
        assert_eq!(rp["read_bytes"], rbytes);
        assert_eq!(rp["write_bytes"], wbytes);
        assert_eq!(rp["calls"].as_u64().unwrap(), ops.values().sum::<u64>());
        for (op, n) in &ops {
            assert_eq!(
                run["trace"]["ops"][op]["count"].as_u64().unwrap(),
                *n,
                "{op}"
            );
        }
        assert!(rp["recorded_ns"].as_u64().unwrap() > 0 && rp["replay_ns"].as_u64().unwrap() > 0);
        let kept: Vec<_> = std::fs::read_dir(target.path())
            .unwrap()
            .flatten()
            .collect();
        assert_eq!(kept.len(), 1);
        let root = kept[0].path();
        assert_eq!(std::fs::read(root.join("a")).unwrap().len(), 3);
        assert_eq!(std::fs::read(root.join("d/e")).unwrap().len(), 7);
        assert_eq!(std::fs::read(root.join("d/c")).unwrap().len(), 2);
        assert!(!root.join("b").exists() && !root.join("c").exists());
    }
}

#[test]
fn matrix_reference_runs_a_trace_workload() {
    let r =
        iolab::workload::WorkloadRef::parse("trace:name=photo-album:scale=0.002:repeat=1").unwrap();
    let w = iolab::commands::family::resolve(&r).unwrap_or_else(|e| panic!("{e}"));
    assert!(w.label().contains("photo-album"));
    let dir = tempfile::tempdir().unwrap();
    let ctx = iolab::runner::RunContext::new(iolab::runner::ProgressMode::detect(true));
    let out = w.run_on(dir.path(), &ctx).unwrap();
    assert_eq!(out.tests.len(), 1);
    assert_eq!(out.tests[0].family, "trace");
    assert_eq!(out.tests[0].runs.len(), 1);
    assert!(is_empty_dir(dir.path()));
    let bad = iolab::workload::WorkloadRef::parse("trace:name=nope").unwrap();
    assert!(iolab::commands::family::resolve(&bad).is_err());
}

#[test]
fn interrupt_stops_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("long.toml");
    std::fs::write(
        &file,
        "[[stream]]\nname = \"slow\"\nfiles = 4\nfile_size = \"64KiB\"\nmix = { stat = 1 }\nthink_time = \"10ms\"\nduration = \"60s\"\n",
    )
    .unwrap();
    let target = tempfile::tempdir().unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args([
            "trace",
            "run",
            file.to_str().unwrap(),
            "--target",
            target.path().to_str().unwrap(),
            "--repeat",
            "1",
            "--no-save",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the run has created its directory, then interrupt it (the workload lasts
    // 60 s; the limit only bounds a run that never starts).
    for _ in 0..2400 {
        if !is_empty_dir(target.path()) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(is_empty_dir(target.path()), "files removed after Ctrl-C");
}

#[test]
fn a_stream_can_use_an_iolab_copy_data_set() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("docs.toml");
    std::fs::write(
        &file,
        r#"
description = "open office documents of the office-docs data set"
[[stream]]
name = "docs"
dataset = "office-docs"
dataset_scale = 0.005
existing = true
mix = { read = 1 }
request_size = "64KiB"
sequential = 1.0
amount = "256KiB"
"#,
    )
    .unwrap();
    let target = tempfile::tempdir().unwrap();
    let o = iolab(&[
        "trace",
        "run",
        file.to_str().unwrap(),
        "--target",
        target.path().to_str().unwrap(),
        "--repeat",
        "1",
        "--json",
        "--no-save",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let expect = iolab::workload::copy::dataset::plan("office-docs", 0, 0.005)
        .unwrap()
        .files
        .len();
    assert!(expect > 1);
    let text = serde_json::to_string(&doc["tests"][0]).unwrap();
    assert!(
        text.contains(&format!("\"files\":{expect}")),
        "file count {expect} in {text}"
    );
    let run = &doc["tests"][0]["runs"][0];
    assert!(run["bytes"].as_u64().unwrap() > 0, "{run}");
    assert!(is_empty_dir(target.path()), "left files behind");
}

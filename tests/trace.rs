//! `iolab trace`: built-ins run, workload files are validated with line and column, a small
//! program is recorded under strace and replayed with the same calls and bytes, bad input
//! exits 2 leaving nothing behind, and the matrix can run a trace workload.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

mod common;
use common::{assert_usage, iolab, iolab_in, json, stderr, tool_or_skip};

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
    // A directory given as the workload is named as one, not "does not exist".
    let o = iolab(&["trace", "run", t, "--target", t]);
    assert_usage(&o, "is a directory, not a workload file");
    // A built-in's name given to `summary` is named as one, not "cannot read: No such file".
    let o = iolab_in(target.path(), &["trace", "summary", "office"]);
    assert_usage(&o, "office is a built-in workload");
    assert!(
        stderr(&o).contains("iolab trace run office DIR"),
        "{}",
        stderr(&o)
    );
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

/// `trace replay TRACE --target TARGET --repeat 1 --no-save --json EXTRA...`.
fn replay_once(trace: &Path, target: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "trace",
        "replay",
        trace.to_str().unwrap(),
        "--target",
        target.to_str().unwrap(),
        "--repeat",
        "1",
        "--no-save",
        "--json",
    ];
    args.extend(extra);
    iolab(&args)
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
    if tool_or_skip(test, "strace", "strace") {
        record_then_replay(test, "strace");
    }
}

/// The same small program recorded by the tracepoints recorder gives the same calls.
#[test]
fn record_a_program_with_tracepoints_then_replay_it() {
    let test = "record_a_program_with_tracepoints_then_replay_it";
    if tracepoints_or_skip(test) {
        record_then_replay(test, "tracepoints");
    }
}

#[test]
fn raw_times_keep_the_recorders_cost_in_the_time_stamps() {
    let Some((work, o)) = record_tracepoints_fresh(
        "raw_times_keep_the_recorders_cost_in_the_time_stamps",
        &[
            "--raw-times",
            "-o",
            "app.trace",
            "--",
            "sh",
            "-c",
            "printf aaa > a; cat a > /dev/null",
        ],
    ) else {
        return;
    };
    recorded_saying(&o, "the time stamps keep it");
    let header = header_of(&work.path().join("app.trace"));
    assert_eq!(header["recorder_cost"]["removed_ns"], 0, "{header}");
    assert!(header["recorder_cost"]["call_ns"].is_u64(), "{header}");
}

/// `iolab trace record --recorder tracepoints ARGS...` in `dir`.
fn record_tracepoints(dir: &Path, args: &[&str]) -> std::process::Output {
    let mut argv = vec!["trace", "record", "--recorder", "tracepoints"];
    argv.extend_from_slice(args);
    iolab_in(dir, &argv)
}

/// `record_tracepoints` in a new temporary directory, or `None` (skipped loudly) where the
/// tracepoints recorder cannot run.
fn record_tracepoints_fresh(
    test: &str,
    args: &[&str],
) -> Option<(tempfile::TempDir, std::process::Output)> {
    if !tracepoints_or_skip(test) {
        return None;
    }
    let work = tempfile::tempdir().unwrap();
    let o = record_tracepoints(work.path(), args);
    Some((work, o))
}

/// `trace record` succeeded and said `what` on stderr.
fn recorded_saying(o: &std::process::Output, what: &str) {
    assert!(o.status.success(), "{}", stderr(o));
    assert!(stderr(o).contains(what), "{}", stderr(o));
}

/// A trace file's header line.
fn header_of(trace: &Path) -> Value {
    let text = std::fs::read_to_string(trace).unwrap();
    serde_json::from_str(text.lines().next().unwrap()).unwrap()
}

/// `trace record --recorder RECORDER -o app.trace -- sh -c SCRIPT` in `dir`; `None` (a
/// loud skip) where ptrace is not permitted.
fn record_script(
    test: &str,
    dir: &Path,
    recorder: &str,
    script: &str,
) -> Option<std::process::Output> {
    record(
        test,
        dir,
        recorder,
        &["-o", "app.trace"],
        &["sh", "-c", script],
    )
}

/// `trace record --recorder RECORDER OPTIONS... -- PROGRAM...` in `dir`; `None` (a loud
/// skip) where ptrace is not permitted.
fn record(
    test: &str,
    dir: &Path,
    recorder: &str,
    options: &[&str],
    program: &[&str],
) -> Option<std::process::Output> {
    let mut args = vec!["trace", "record", "--recorder", recorder];
    args.extend(options);
    args.push("--");
    args.extend(program);
    let o = iolab_in(dir, &args);
    (!ptrace_denied(test, &o)).then_some(o)
}

/// The recording failed because ptrace is not permitted here: a loud skip.
fn ptrace_denied(test: &str, o: &std::process::Output) -> bool {
    let denied = !o.status.success() && stderr(o).to_lowercase().contains("ptrace");
    if denied {
        common::skip(
            test,
            format_args!("ptrace not permitted here: {}", stderr(o)),
        );
    }
    denied
}

fn record_then_replay(test: &str, recorder: &str) {
    let work = tempfile::tempdir().unwrap();
    let script = "printf aaa > a; printf bbbb > b; printf cc > c; cat a > /dev/null; mkdir d; cat a b >> d/e; mv c d/c; rm b";
    let Some(o) = record_script(test, work.path(), recorder, script) else {
        return;
    };
    assert!(o.status.success(), "{}", stderr(&o));
    let record_stderr = stderr(&o);
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
        "{text}\n{record_stderr}"
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
    assert_eq!(header["recorder"], recorder);
    assert!(
        header["threads"].as_u64().unwrap() >= 2,
        "the shell and its children"
    );
    if recorder == "tracepoints" {
        // Its cost per call, measured before the program ran, and what was taken out of
        // the time stamps for it (the values depend on the machine; their presence and
        // the order of the calls do not).
        let c = &header["recorder_cost"];
        for k in ["call_ns", "path_call_ns", "removed_ns"] {
            assert!(c[k].is_u64(), "{k} in {header}");
        }
        assert!(
            record_stderr.contains("the recorder's own cost, measured just before recording"),
            "{record_stderr}"
        );
        // Each thread's calls keep their order in time (across threads the correction
        // differs, so only the file's order is global).
        let mut last: BTreeMap<u64, u64> = BTreeMap::new();
        for c in &calls {
            let (tid, t) = (c["tid"].as_u64().unwrap(), c["t_ns"].as_u64().unwrap());
            let before = last.insert(tid, t).unwrap_or(0);
            assert!(before <= t, "thread {tid}: {before} then {t}\n{text}");
        }
    } else {
        assert!(header.get("recorder_cost").is_none(), "{header}");
    }

    let (ops, rbytes, wbytes) = trace_totals(&tf);
    for timing in ["asap", "recorded"] {
        let target = tempfile::tempdir().unwrap();
        let o = replay_once(&tf, target.path(), &["--timing", timing, "--keep"]);
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
    let w = iolab::commands::resolve(&r).unwrap_or_else(|e| panic!("{e}"));
    assert!(w.label().contains("photo-album"));
    let dir = tempfile::tempdir().unwrap();
    let ctx = iolab::runner::RunContext::new(iolab::runner::ProgressMode::detect(true));
    let out = w.run_on(dir.path(), &ctx).unwrap();
    assert_eq!(out.tests.len(), 1);
    assert_eq!(out.tests[0].family, "trace");
    assert_eq!(out.tests[0].runs.len(), 1);
    assert!(is_empty_dir(dir.path()));
    let bad = iolab::workload::WorkloadRef::parse("trace:name=nope").unwrap();
    assert!(iolab::commands::resolve(&bad).is_err());
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

// ---- Issue #30: the tracepoints recorder, io_uring replay at depth, `trace summary`. ----

/// Can the tracepoints recorder run here? If not, skip `test` naming why.
fn tracepoints_or_skip(test: &str) -> bool {
    if !common::root_or_skip(test, "the tracepoints recorder (tracefs, BPF)") {
        return false;
    }
    match iolab::workload::trace::tracepoints::unavailable() {
        None => true,
        Some(why) => {
            common::skip(
                test,
                format_args!("tracepoints recorder unavailable: {why}"),
            );
            false
        }
    }
}

fn summary_json(trace: &Path) -> Value {
    let o = iolab(&["trace", "summary", trace.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// strace cannot see io_uring's reads and writes: a fio random-read job through io_uring
/// was recorded as "reads 0 calls" (only the layout's writes) and nothing said so. The
/// recording must warn that the trace lacks that I/O and name the recorder that has it.
#[test]
fn strace_says_it_cannot_see_io_uring() {
    let test = "strace_says_it_cannot_see_io_uring";
    if !tool_or_skip(test, "strace", "strace") || !tool_or_skip(test, "fio", "fio") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let dir = format!("--directory={}", work.path().display());
    let fio = [
        "fio",
        "--name=ring",
        &dir,
        "--ioengine=io_uring",
        "--rw=randread",
        "--iodepth=4",
        "--bs=4k",
        "--size=1M",
        "--output=/dev/null",
    ];
    let Some(o) = record(test, work.path(), "strace", &["-o", "fio.trace"], &fio) else {
        return;
    };
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("iolab: warning: the program set up 1 io_uring instance: strace cannot see")
            && err.contains("this trace lacks them; record as root with --recorder tracepoints"),
        "{err}"
    );
    // A program without io_uring gets no such warning.
    let o = iolab_in(
        work.path(),
        &[
            "trace",
            "record",
            "--recorder",
            "strace",
            "-o",
            "sh.trace",
            "--",
            "sh",
            "-c",
            "echo x > f",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("io_uring"), "{}", stderr(&o));
}

/// A strace recording's time stamps hold strace's own cost (a script of 29 ms under the
/// tracepoints took 65 ms under strace): a replay at the recorded times keeps that slower
/// pace and says so (`strace-pace`); an as-fast-as-possible replay does not.
#[test]
fn a_strace_trace_replayed_at_its_times_says_strace_slowed_it() {
    let test = "a_strace_trace_replayed_at_its_times_says_strace_slowed_it";
    if !tool_or_skip(test, "strace", "strace") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let Some(o) = record_script(test, work.path(), "strace", "printf aaa > a; cat a > b") else {
        return;
    };
    assert!(o.status.success(), "{}", stderr(&o));
    let target = tempfile::tempdir().unwrap();
    let tf = work.path().join("app.trace");
    let codes = |timing: &str| -> Vec<String> {
        let o = replay_once(&tf, target.path(), &["--timing", timing, "-q"]);
        assert!(o.status.success(), "{}", stderr(&o));
        json(&o)["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["code"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(codes("recorded").contains(&"strace-pace".to_string()));
    assert!(!codes("asap").contains(&"strace-pace".to_string()));
}

/// A program that worked outside `--root` leaves a trace of no calls: the recording said
/// only "0 calls ... (N calls outside the root ...)", and its replay measured nothing three
/// times ("0.00 MB/s, 0 ops/s", exit 0). The recording warns, the replay is refused.
#[test]
fn a_recording_with_no_call_under_its_root_is_said_and_not_replayed() {
    let test = "a_recording_with_no_call_under_its_root_is_said_and_not_replayed";
    if !tool_or_skip(test, "strace", "strace") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir(work.path().join("root")).unwrap();
    let Some(o) = record(
        test,
        work.path(),
        "strace",
        &["--root", "root", "-o", "empty.trace"],
        &["sh", "-c", "echo x > elsewhere"],
    ) else {
        return;
    };
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("iolab: warning: no call under the root")
            && stderr(&o).contains("give --root DIR"),
        "{}",
        stderr(&o)
    );
    let target = tempfile::tempdir().unwrap();
    let o = iolab(&[
        "trace",
        "replay",
        work.path().join("empty.trace").to_str().unwrap(),
        "--target",
        target.path().to_str().unwrap(),
        "--no-save",
    ]);
    assert_usage(&o, "empty.trace: no calls to replay (0 recorded;");
    assert_eq!(std::fs::read_dir(target.path()).unwrap().count(), 0);
}

/// A recorded program that fails: iolab exited 0 (only a warning said so), so `iolab trace
/// record -- make test && deploy` went on. Now iolab exits with the program's status, as
/// strace and time do (128 + N after signal N), the warning stays, and the trace is written.
#[test]
fn recording_a_failing_program_exits_with_its_status() {
    let test = "recording_a_failing_program_exits_with_its_status";
    if !tool_or_skip(test, "strace", "strace") {
        return;
    }
    for (script, code, said) in [
        (
            "echo x > f; exit 3",
            3,
            "the command exited with exit status: 3",
        ),
        (
            "echo x > f; kill -TERM $$",
            143,
            "the command exited with signal: 15",
        ),
        ("echo x > f", 0, ""),
    ] {
        let work = tempfile::tempdir().unwrap();
        let Some(o) = record_script(test, work.path(), "strace", script) else {
            return;
        };
        assert_eq!(o.status.code(), Some(code), "{script}: {}", stderr(&o));
        assert!(stderr(&o).contains(said), "{script}: {}", stderr(&o));
        assert_eq!(header_of(&work.path().join("app.trace"))["write_bytes"], 2);
    }
}

/// Linux AIO is followed by neither recorder: fio's libaio random reads were recorded with
/// the tracepoints as "reads 0 calls" and nothing said so. The recording must warn.
#[test]
fn tracepoints_say_they_cannot_see_linux_aio() {
    let test = "tracepoints_say_they_cannot_see_linux_aio";
    if !tool_or_skip(test, "fio", "fio") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let directory = format!("--directory={}", dir.path().display());
    let Some((_work, o)) = record_tracepoints_fresh(
        test,
        &[
            "-o",
            "aio.trace",
            "--",
            "fio",
            "--name=aio",
            &directory,
            "--ioengine=libaio",
            "--rw=randread",
            "--iodepth=4",
            "--bs=4k",
            "--size=1M",
            "--output=/dev/null",
        ],
    ) else {
        return;
    };
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(
            "iolab: warning: the program set up 1 Linux AIO context: tracepoints cannot see"
        ) && err.contains("(no recorder follows Linux AIO's io_submit)"),
        "{err}"
    );
}

/// fio with io_uring at depth 16 on a tmpfs (so the machine's disk speed does not matter):
/// the recording holds its asynchronous 4 KiB reads with their offsets, and the replay
/// issues them through io_uring with 16 in flight, not one after another.
#[test]
fn fio_io_uring_recorded_and_replayed_at_depth_16() {
    let test = "fio_io_uring_recorded_and_replayed_at_depth_16";
    if !tracepoints_or_skip(test) || !tool_or_skip(test, "fio", "fio") {
        return;
    }
    let Some(work) = common::ram_tempdir_or_skip(test) else {
        return;
    };
    let Some(target) = common::ram_tempdir_or_skip(test) else {
        return;
    };
    let dir = format!("--directory={}", work.path().display());
    let o = record_tracepoints(
        work.path(),
        &[
            "-o",
            "fio.trace",
            "--",
            "fio",
            "--name=qd16",
            &dir,
            "--ioengine=io_uring",
            "--rw=randread",
            "--iodepth=16",
            "--bs=4k",
            "--size=64M",
            "--runtime=2",
            "--output=/dev/null",
        ],
    );
    recorded_saying(&o, "recorded with tracepoints");
    let tf = work.path().join("fio.trace");
    let head = header_of(&tf);
    assert_eq!(head["recorder"], "tracepoints");
    assert_eq!(head["version"], 2);
    let s = summary_json(&tf);
    // fio lays the file out with 4 KiB writes, then reads it at random: every request of
    // both phases is 4 KiB, and the reads went through the ring.
    let sizes = s["sizes"].as_array().unwrap();
    assert_eq!(sizes.len(), 1, "{sizes:?}");
    assert_eq!(sizes[0]["size_bytes"], 4096);
    let reads = s["read_calls"].as_u64().unwrap();
    assert!(reads >= 1000, "{reads} reads");
    assert_eq!(
        s["async_calls"].as_u64().unwrap(),
        reads,
        "all reads via io_uring"
    );
    assert!(
        s["sequential_reads"].as_u64().unwrap() * 10 < reads,
        "random offsets were recorded: {s}"
    );
    assert_eq!(s["depth_max"], 16, "{s}");
    let o = replay_once(&tf, target.path(), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = json(&o);
    let run = &doc["tests"][0]["runs"][0]["trace"];
    assert_eq!(run["replay"]["errors"], 0, "{run}");
    let r = &run["summary"];
    assert_eq!(r["async_calls"].as_u64().unwrap(), reads);
    assert_eq!(r["depth_max"], 16, "{r}");
    // The engine refills a slot as soon as its completion is reaped, so the ring spends
    // nearly all its time with 16 reads in flight; 8 leaves a wide margin for a loaded
    // machine and still fails a serialised replay (depth 1).
    let depth = r["async_depth_mean"].as_f64().unwrap();
    assert!(depth >= 8.0, "replayed async depth {depth}: {r}");
    assert_eq!(doc["tests"][0]["trace"]["recorder"], "tracepoints");
}

/// A program with known behaviour: 100 files of 64 KiB written with one write each, then
/// read in 4 KiB pieces (`pread`) in a fixed shuffled order. Sizes, sequentiality and
/// working set are known exactly; both recorders must say the same.
#[test]
fn summary_of_a_known_program_is_exact() {
    let test = "summary_of_a_known_program_is_exact";
    if !tool_or_skip(test, "python3", "python3") {
        return;
    }
    let mut recorders = Vec::new();
    if tool_or_skip(test, "strace", "strace") {
        recorders.push("strace");
    }
    if tracepoints_or_skip(test) {
        recorders.push("tracepoints");
    }
    // The shuffled pieces (a fixed LCG, so the expected figures are known here).
    let mut pieces: Vec<(u32, u32)> = (0..100)
        .flat_map(|f| (0..16).map(move |k| (f, k)))
        .collect();
    let mut x: u64 = 12345;
    for i in (1..pieces.len()).rev() {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        pieces.swap(i, ((x >> 33) % (i as u64 + 1)) as usize);
    }
    let list: Vec<String> = pieces.iter().map(|(f, k)| format!("({f},{k})")).collect();
    let script = format!(
        "import os\n\
         for i in range(100):\n    \
             fd = os.open('f%d' % i, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)\n    \
             os.write(fd, bytes(65536))\n    \
             os.close(fd)\n\
         fds = [os.open('f%d' % i, os.O_RDONLY) for i in range(100)]\n\
         for f, k in [{}]:\n    \
             os.pread(fds[f], 4096, k * 4096)\n",
        list.join(",")
    );
    // The script lives outside the recorded root (its own reads are not the program's I/O).
    let prog_dir = common::tempdir();
    let prog = prog_dir.path().join("prog.py");
    std::fs::write(&prog, &script).unwrap();
    // Sequential: a file's first I/O at offset 0 (the writes), or starting where the
    // previous I/O on the file ended (the 64 KiB write ends past every piece).
    let mut prev_end = vec![65536u64; 100];
    let mut seq_reads = 0;
    for (f, k) in &pieces {
        let off = *k as u64 * 4096;
        if prev_end[*f as usize] == off {
            seq_reads += 1;
        }
        prev_end[*f as usize] = off + 4096;
    }
    for recorder in recorders {
        let work = common::tempdir();
        let o = iolab_in(
            work.path(),
            &[
                "trace",
                "record",
                "--recorder",
                recorder,
                "-o",
                "p.trace",
                "--",
                "python3",
                prog.to_str().unwrap(),
            ],
        );
        assert!(o.status.success(), "{recorder}: {}", stderr(&o));
        let s = summary_json(&work.path().join("p.trace"));
        assert_eq!(s["write_calls"], 100, "{recorder}: {s}");
        assert_eq!(s["write_bytes"], 100 * 65536, "{recorder}");
        assert_eq!(s["read_calls"], 1600, "{recorder}: {s}");
        assert_eq!(s["read_bytes"], 1600 * 4096, "{recorder}");
        assert_eq!(
            s["sizes"],
            serde_json::json!([
                {"size_bytes": 4096, "reads": 1600, "writes": 0},
                {"size_bytes": 65536, "reads": 0, "writes": 100}
            ]),
            "{recorder}"
        );
        assert_eq!(s["sequential_writes"], 100, "{recorder}");
        assert_eq!(s["sequential_reads"], seq_reads, "{recorder}");
        assert_eq!(s["working_set_bytes"], 100 * 65536, "{recorder}");
        assert_eq!(s["files"], 100, "{recorder}");
        assert_eq!(s["fsyncs"], 0, "{recorder}");
        assert_eq!(s["hottest"][0]["bytes"], 65536 * 2, "{recorder}");
        // The same section in the text output of `trace summary`.
        let o = iolab(&[
            "trace",
            "summary",
            work.path().join("p.trace").to_str().unwrap(),
        ]);
        assert!(o.status.success());
        let text = common::stdout(&o);
        assert!(
            text.contains(&format!("recorded with {recorder}")),
            "{text}"
        );
        assert!(
            text.contains("working set    6.2 MiB in 100 files (6553600 bytes)"),
            "{text}"
        );
    }
}

/// Without root the tracepoints cannot run: strace records, with a one-line note; asking
/// for the tracepoints explicitly is a usage error; no command is a usage error too.
#[test]
fn without_root_strace_records_with_a_note() {
    let test = "without_root_strace_records_with_a_note";
    let o = iolab(&["trace", "record", "-o", "x.trace"]);
    assert_eq!(o.status.code(), Some(2), "no command: {}", stderr(&o));
    if !tool_or_skip(test, "strace", "strace") {
        return;
    }
    // In the system's temp directory, not under target/: nobody must reach it, and a clone
    // may sit under a 0700 directory (CI under load clones into a `mktemp -d`).
    let work = tempfile::Builder::new()
        .prefix("iolab-test-")
        .tempdir_in(std::env::temp_dir())
        .unwrap();
    std::fs::set_permissions(
        work.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let run = |args: &[&str]| {
        if iolab::os::is_root() {
            let bin = common::binary_for_nobody();
            Command::new("setpriv")
                .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(&bin.path)
                .args(args)
                .current_dir(work.path())
                .output()
                .unwrap()
        } else {
            iolab_in(work.path(), args)
        }
    };
    if iolab::os::is_root() && !tool_or_skip(test, "setpriv", "util-linux") {
        return;
    }
    let o = run(&[
        "trace",
        "record",
        "-o",
        "a.trace",
        "--",
        "sh",
        "-c",
        "echo x > f",
    ]);
    if ptrace_denied(test, &o) {
        return;
    }
    assert!(o.status.success(), "{}", stderr(&o));
    let notes: Vec<_> = stderr(&o)
        .lines()
        .filter(|l| l.contains("recording with strace"))
        .map(String::from)
        .collect();
    assert_eq!(notes.len(), 1, "{}", stderr(&o));
    assert!(notes[0].contains("not root"), "{}", notes[0]);
    let text = std::fs::read_to_string(work.path().join("a.trace")).unwrap();
    assert!(
        text.lines()
            .next()
            .unwrap()
            .contains("\"recorder\":\"strace\"")
    );
    let o = run(&[
        "trace",
        "record",
        "--recorder",
        "tracepoints",
        "-o",
        "b.trace",
        "--",
        "true",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not root"), "{}", stderr(&o));
}

/// Regression: the shell saves stdout (`fcntl(1, F_DUPFD, 10)`), points it at `f` for
/// `echo hi > f`, and restores it (`dup2(10, 1)`); the tracepoints recorder kept fd 1's
/// name `f` after the restore and stored the second echo (10 bytes to stdout) as a write to
/// `f` ("13 B written"). Exactly the 3 bytes of `hi\n` go to `f`.
#[test]
fn a_restored_stdout_is_not_the_redirected_file() {
    let Some((work, o)) = record_tracepoints_fresh(
        "a_restored_stdout_is_not_the_redirected_file",
        &[
            "-o",
            "p.trace",
            "--",
            "sh",
            "-c",
            "echo hi > f; echo to-stdout",
        ],
    ) else {
        return;
    };
    recorded_saying(&o, "(0 B read, 3 B written;");
    let tf = work.path().join("p.trace");
    let (ops, read, written) = trace_totals(&tf);
    assert_eq!((read, written), (0, 3), "{ops:?}");
    assert_eq!(ops.get("write"), Some(&1), "{ops:?}");
    assert_eq!(header_of(&tf)["write_bytes"], 3);
    assert_eq!(std::fs::read(work.path().join("f")).unwrap(), b"hi\n");
}

/// Regression: `-o` on a read-only place ran the program first and then failed to write the
/// trace (exit 1, the recording lost). The output is claimed before the program runs: exit
/// 2 and nothing run. An output that is a device is refused too (the trace is renamed over
/// the output).
#[test]
fn an_output_that_cannot_be_written_is_refused_before_the_program_runs() {
    let test = "an_output_that_cannot_be_written_is_refused_before_the_program_runs";
    let work = tempfile::tempdir().unwrap();
    // Recording a program that leaves `ran` behind if it runs.
    let record_to = |out: &str| {
        iolab_in(
            work.path(),
            &[
                "trace",
                "record",
                "-o",
                out,
                "--",
                "sh",
                "-c",
                "echo ran > ran",
            ],
        )
    };
    let o = record_to("/dev/null");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("-o /dev/null: exists and is not a regular file"),
        "{}",
        stderr(&o)
    );
    assert!(!work.path().join("ran").exists(), "nothing ran");
    // A read-only file system of its own (a tmpfs mounted `ro` in a temp dir; root).
    let Some(ro) = common::scratch_or_skip(test, "tmpfs", 1 << 20, &[], "ro") else {
        return;
    };
    let out = ro.path().join("x.trace");
    let o = record_to(out.to_str().unwrap());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "-o {}: cannot create a file in {}: Read-only file system (os error 30); nothing was run",
            out.display(),
            ro.path().display()
        )),
        "{}",
        stderr(&o)
    );
    assert!(!work.path().join("ran").exists(), "nothing ran");
    assert!(is_empty_dir(ro.path()));
}

/// `-o` onto an existing trace replaces it and says so; no temporary file is left beside it.
#[test]
fn an_existing_trace_is_replaced_with_a_note() {
    let args = ["-o", "p.trace", "--", "sh", "-c", "echo x > f"];
    let Some((work, o)) =
        record_tracepoints_fresh("an_existing_trace_is_replaced_with_a_note", &args)
    else {
        return;
    };
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("replaced"), "{}", stderr(&o));
    let o = record_tracepoints(work.path(), &args);
    recorded_saying(&o, "iolab: note: p.trace existed and was replaced");
    let mut names: Vec<_> = std::fs::read_dir(work.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["f", "p.trace"]);
}

/// A trace file whose header records `recorded` calls, holding the first `held` of them (a
/// write and a read of `f`, alternating, 1 ms apart).
fn trace_file(dir: &Path, recorded: u64, held: u64) -> std::path::PathBuf {
    let mut text = format!(
        "{{\"format\":\"iolab-trace\",\"version\":2,\"recorder\":\"strace\",\"command\":[\"app\"],\"root\":\"/r\",\"recorded_at\":\"\",\"recorded_ns\":{},\"wall_ns\":1,\"calls\":{recorded},\"threads\":1,\"read_bytes\":0,\"write_bytes\":0,\"skipped_outside_root\":0,\"skipped_failed\":0,\"files\":[],\"dirs\":[]}}\n",
        recorded * 1_000_000
    );
    for i in 0..held {
        let op = if i % 2 == 0 { "write" } else { "read" };
        text.push_str(&format!(
            "{{\"t_ns\":{},\"tid\":1,\"op\":\"{op}\",\"path\":\"f\",\"off\":0,\"len\":4096,\"dur_ns\":1000}}\n",
            i * 1_000_000
        ));
    }
    let path = dir.join(format!("t{recorded}-{held}.trace"));
    std::fs::write(&path, text).unwrap();
    path
}

/// Regression: a trace cut to its header and 2 calls still said "8 calls" in `summary`,
/// and `replay` compared its time with the whole recording's, without a word. Both warn
/// (the replay in its JSON warnings too); a whole trace gets no warning.
#[test]
fn a_truncated_trace_is_detected() {
    let work = tempfile::tempdir().unwrap();
    let cut = trace_file(work.path(), 8, 2);
    let whole = trace_file(work.path(), 2, 2);
    let o = iolab(&["trace", "summary", cut.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let warning = format!(
        "iolab: warning: {} holds 2 of the 8 calls its header records: the file was cut short; the summary covers only the calls it holds",
        cut.display()
    );
    assert!(stderr(&o).contains(&warning), "{}", stderr(&o));
    assert!(
        common::stdout(&o).starts_with(&format!(
            "{}: 2 (of 8 recorded) calls of `app`",
            cut.display()
        )),
        "{}",
        common::stdout(&o)
    );
    let o = iolab(&["trace", "summary", cut.to_str().unwrap(), "--json"]);
    assert!(stderr(&o).contains(&warning), "--json warns on stderr too");
    let o = iolab(&["trace", "summary", whole.to_str().unwrap()]);
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    assert!(common::stdout(&o).contains(": 2 calls of `app`"));

    let replay = |trace: &Path| {
        let target = tempfile::tempdir().unwrap();
        let o = replay_once(trace, target.path(), &[]);
        let doc = json(&o);
        assert!(o.status.success(), "{}", stderr(&o));
        doc["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|w| w["code"] == "trace-truncated")
            .cloned()
            .collect::<Vec<_>>()
    };
    let w = replay(&cut);
    assert_eq!(w.len(), 1, "{w:?}");
    let m = w[0]["message"].as_str().unwrap();
    assert!(
        m.starts_with(&format!(
            "{} holds 2 of the 8 calls its header records",
            cut.display()
        )) && m.contains("comparison with the recorded time"),
        "{m}"
    );
    assert!(replay(&whole).is_empty());
}

/// Regression: a workload that filled its file system failed with the bare "No space left
/// on device (os error 28)". The error names the stream, the operation and the file. An
/// 8 MiB tmpfs (mounted in a temp dir; root) and a stream that appends until its duration
/// (not counted in the room check: it has no amount), which fills it long before that.
#[test]
fn out_of_space_names_the_stream_op_and_file() {
    let test = "out_of_space_names_the_stream_op_and_file";
    let Some(fs) = common::scratch_or_skip(test, "tmpfs", 8 << 20, &[], "") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let w = work.path().join("grow.toml");
    std::fs::write(
        &w,
        "description = \"appends until full\"\n[[stream]]\nname = \"logger\"\nfiles = 1\n\
         file_size = { min = \"64KiB\", max = \"64KiB\" }\nmix = { append = 1 }\n\
         request_size = { min = \"64KiB\", max = \"64KiB\" }\nduration = \"1h\"\n",
    )
    .unwrap();
    let o = iolab(&[
        "trace",
        "run",
        w.to_str().unwrap(),
        "--target",
        fs.path().to_str().unwrap(),
        "--repeat",
        "1",
        "--no-save",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    let line = err
        .lines()
        .find(|l| l.starts_with("iolab: error:"))
        .unwrap_or_else(|| panic!("{err}"));
    let prefix = "iolab: error: stream 'logger' (copy 0): append of 64.0 KiB at offset ";
    assert!(line.starts_with(prefix), "{line}");
    assert!(
        line.contains(&format!(" to {}/iolab-trace-", fs.path().display()))
            && line.ends_with("/logger-0/d0/f0: No space left on device (os error 28)"),
        "{line}"
    );
    assert!(is_empty_dir(fs.path()), "the work directory is removed");
}

/// Names as they are on disk, whichever recorder: UTF-8 as text (strace escapes it as
/// octal), bytes that are not UTF-8 each as U+FFFD and two hex digits, so two such names
/// stay two files; under a root whose own name is not ASCII.
fn record_odd_names(test: &str, recorder: &str) {
    let base = tempfile::tempdir().unwrap();
    let work = base.path().join("rü");
    std::fs::create_dir(&work).unwrap();
    let script =
        r#"printf x > "$(printf 'a\377')"; printf yy > "$(printf 'a\376')"; printf zzz > ü"#;
    let Some(o) = record_script(test, &work, recorder, script) else {
        return;
    };
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(work.join("app.trace")).unwrap();
    let writes: std::collections::BTreeSet<(String, u64)> = text
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|c| c["op"] == "write")
        .map(|c| {
            (
                c["path"].as_str().unwrap().to_string(),
                c["len"].as_u64().unwrap(),
            )
        })
        .collect();
    let want: std::collections::BTreeSet<(String, u64)> = [
        ("a\u{FFFD}FF".to_string(), 1),
        ("a\u{FFFD}FE".to_string(), 2),
        ("ü".to_string(), 3),
    ]
    .into_iter()
    .collect();
    assert_eq!(writes, want, "{recorder}: {text}");
}

#[test]
fn strace_records_names_as_they_are_on_disk() {
    let test = "strace_records_names_as_they_are_on_disk";
    if tool_or_skip(test, "strace", "strace") {
        record_odd_names(test, "strace");
    }
}

#[test]
fn tracepoints_record_names_as_they_are_on_disk() {
    let test = "tracepoints_record_names_as_they_are_on_disk";
    if tracepoints_or_skip(test) {
        record_odd_names(test, "tracepoints");
    }
}

/// Regression: a trace call whose `off + len` passes 2^64 (a corrupt or hand-made file)
/// panicked `replay` and `summary` ("attempt to add with overflow"); one far beyond the
/// largest file asked for "95.5 TiB ... (use --scale to shrink)", a flag replay does not
/// have. Both are refused in one line naming the call; a large but possible trace's room
/// error does not mention --scale.
#[test]
fn offsets_beyond_any_file_are_refused_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let header = std::fs::read_to_string(trace_file(dir.path(), 1, 0)).unwrap();
    let call = |off: u64, len: u64| {
        format!(
            "{header}{{\"t_ns\":0,\"tid\":1,\"op\":\"write\",\"path\":\"f\",\"off\":{off},\"len\":{len},\"dur_ns\":1}}\n"
        )
    };
    let bad = dir.path().join("bad.trace");
    for (off, len) in [(u64::MAX, 10), (i64::MAX as u64, 1)] {
        std::fs::write(&bad, call(off, len)).unwrap();
        let b = bad.to_str().unwrap();
        for args in [
            vec!["trace", "summary", b],
            vec![
                "trace",
                "replay",
                b,
                "-t",
                target.to_str().unwrap(),
                "--no-save",
                "--no-history",
            ],
        ] {
            let o = iolab(&args);
            assert_usage(&o, "bad.trace:2: write call: off ");
            assert!(
                stderr(&o).contains("beyond the largest file"),
                "{}",
                stderr(&o)
            );
            assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        }
    }
    // Time stamps whose sum passes 2^64 panicked the same way.
    std::fs::write(
        &bad,
        format!(
            "{header}{{\"t_ns\":5000,\"tid\":1,\"op\":\"write\",\"path\":\"f\",\"off\":0,\"len\":1,\"dur_ns\":{}}}\n",
            u64::MAX
        ),
    )
    .unwrap();
    let o = iolab(&["trace", "summary", bad.to_str().unwrap()]);
    assert_usage(
        &o,
        "bad.trace:2: write call: t_ns 5000 or dur_ns 18446744073709551615 is beyond 100 years",
    );
    // Possible, but far more than the target holds.
    std::fs::write(&bad, call(1 << 60, 4096)).unwrap();
    let o = iolab(&[
        "trace",
        "replay",
        bad.to_str().unwrap(),
        "-t",
        target.to_str().unwrap(),
        "--no-save",
        "--no-history",
    ]);
    assert_usage(
        &o,
        "is free (the recording's files and the furthest end of its writes)",
    );
    assert!(!stderr(&o).contains("--scale"), "{}", stderr(&o));
    assert!(is_empty_dir(&target));
}

/// A stop signal sent to iolab alone (`kill PID`, not the terminal's Ctrl-C to the whole
/// process group) is passed on to the traced program, which ran to its end before (a loop
/// of 30 s here; without the pass-on this test takes those 30 s and fails).
#[test]
fn a_signal_to_iolab_alone_reaches_the_traced_program() {
    let test = "a_signal_to_iolab_alone_reaches_the_traced_program";
    let mut recorders = Vec::new();
    if tool_or_skip(test, "strace", "strace") {
        recorders.push("strace");
    }
    if tracepoints_or_skip(test) {
        recorders.push("tracepoints");
    }
    for recorder in recorders {
        let work = tempfile::tempdir().unwrap();
        let child = common::bin()
            .current_dir(work.path())
            .args([
                "trace",
                "record",
                "--recorder",
                recorder,
                "-o",
                "app.trace",
                "--",
            ])
            .args([
                "sh",
                "-c",
                "for i in $(seq 300); do echo x > f; sleep 0.1; done",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Recording has begun once the program wrote its file.
        assert!(
            common::wait_until(std::time::Duration::from_secs(60), || work
                .path()
                .join("f")
                .exists()),
            "{recorder}: the program never ran"
        );
        let sent = std::time::Instant::now();
        // SAFETY: kill(2) on the child we spawned.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGTERM);
        }
        let o = child.wait_with_output().unwrap();
        let took = sent.elapsed();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(143), "{recorder}: {err}");
        // The program ends about 1 s after the signal; 20 s of margin for a loaded machine,
        // still well short of the loop's 30 s.
        assert!(took.as_secs() < 20, "{recorder}: took {took:?}: {err}");
        assert!(
            err.contains("the command exited with signal: 15"),
            "{recorder}: {err}"
        );
        assert!(work.path().join("app.trace").exists(), "{recorder}: {err}");
    }
}

/// `trace record -o DIR` was refused ("is a directory"); as `report -o DIR` and `history
/// export -o DIR`, the default name goes inside it. strace: no root needed (a loud skip
/// where ptrace is not permitted).
#[test]
fn record_into_a_directory_writes_iolab_trace_there() {
    let test = "record_into_a_directory_writes_iolab_trace_there";
    if !tool_or_skip(test, "strace", "strace") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let o_dir = out.path().to_str().unwrap();
    let Some(o) = record(
        test,
        work.path(),
        "strace",
        &["-o", o_dir],
        &["sh", "-c", "printf aaa > a"],
    ) else {
        return;
    };
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(common::names(out.path()), ["iolab.trace"]);
    assert_eq!(
        header_of(&out.path().join("iolab.trace"))["format"],
        "iolab-trace"
    );
}

/// A stream's thread that shares its CPU with a busy program waits for it, and every call's
/// latency includes the wait: `cpu-contention` for the test, with the figure in
/// `trace.cpu_wait_pct` (iolab and a spinning thread pinned to one CPU; 32 MiB read in 4 KiB
/// calls on tmpfs). Only its presence is asserted.
#[test]
fn a_stream_thread_sharing_its_cpu_with_a_busy_program_is_warned_of() {
    let test = "a_stream_thread_sharing_its_cpu_with_a_busy_program_is_warned_of";
    let Some(target) = common::ram_tempdir_or_skip(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("w.toml");
    std::fs::write(
        &file,
        r#"
[[stream]]
name = "reader"
files = 1
file_size = "1MiB"
mix = { read = 1 }
request_size = "4KiB"
amount = "32MiB"
"#,
    )
    .unwrap();
    let mut cmd = common::bin();
    cmd.args([
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
    let at = Some("/runs/0/trace/cpu_wait_pct");
    common::contention_beside_a_spinner(test, &mut cmd, at, "a thread issuing the calls");
}

/// A replayed thread that shares its CPU with a busy program waits for it: `cpu-contention`
/// for the replay's test, with the figure in `trace.cpu_wait_pct` (iolab and a spinning
/// thread pinned to one CPU; a written trace of 20,000 4 KiB reads of a 1 MiB fixture,
/// replayed as fast as it goes on tmpfs). Only its presence is asserted.
#[test]
fn a_replayed_thread_sharing_its_cpu_with_a_busy_program_is_warned_of() {
    let test = "a_replayed_thread_sharing_its_cpu_with_a_busy_program_is_warned_of";
    let Some(target) = common::ram_tempdir_or_skip(test) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let tf = dir.path().join("reads.trace");
    let calls = 20_000u64;
    let header = serde_json::json!({
        "format": "iolab-trace",
        "version": 2,
        "recorder": "tracepoints",
        "command": ["reader"],
        "root": "/r",
        "recorded_at": "2026-01-01T00:00:00Z",
        "recorded_ns": calls * 1000,
        "wall_ns": calls * 1000,
        "calls": calls,
        "threads": 1,
        "read_bytes": calls * 4096,
        "write_bytes": 0,
        "skipped_outside_root": 0,
        "skipped_failed": 0,
        "files": [{"path": "f", "size": 1 << 20}],
        "dirs": [],
    });
    let mut text = format!("{header}\n");
    for i in 0..calls {
        let call = serde_json::json!({
            "t_ns": i * 1000, "tid": 1, "op": "read", "path": "f",
            "off": (i % 256) * 4096, "len": 4096, "dur_ns": 500,
        });
        text.push_str(&format!("{call}\n"));
    }
    std::fs::write(&tf, text).unwrap();
    let mut cmd = common::bin();
    cmd.args([
        "trace",
        "replay",
        tf.to_str().unwrap(),
        "--target",
        target.path().to_str().unwrap(),
        "--timing",
        "asap",
        "--repeat",
        "1",
        "--no-save",
        "--json",
    ]);
    let at = Some("/runs/0/trace/cpu_wait_pct");
    common::contention_beside_a_spinner(test, &mut cmd, at, "a thread issuing the calls");
}

/// NASPT's playback on exFAT: through a FUSE helper (mount.exfat-fuse here; ntfs-3g and
/// fusefat alike) the files the run prepared stayed in the loop device's page cache, which
/// dropping the files' own pages leaves full, so the measured reads never reached the
/// device ("device loop1: 0 B read" for 59 MiB played back, at twice the device's MB/s).
/// The device's cache is written back and dropped as well now. (A kernel with its own
/// exfat driver mounts it without FUSE; the reads reach the device there too.)
#[test]
fn a_playback_on_a_fuse_file_system_reads_the_device() {
    let test = "a_playback_on_a_fuse_file_system_reads_the_device";
    let Some(fs) = common::scratch_or_skip(test, "exfat", 256 << 20, &[], "") else {
        return;
    };
    let o = iolab(&[
        "trace",
        "run",
        "hd-playback",
        "--target",
        fs.path().to_str().unwrap(),
        "--scale",
        "0.02",
        "--repeat",
        "1",
        "--no-save",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = json(&o);
    let run = &doc["tests"][0]["runs"][0];
    let read = run["bytes"].as_u64().unwrap();
    let device = run["device"]["read_bytes"].as_u64().unwrap_or(0);
    assert!(read > 0, "{run}");
    assert!(
        device >= read / 2,
        "the device read {device} B of the {read} B played back: {}",
        run["device"]
    );
}

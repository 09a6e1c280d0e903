//! Storage that fights back, as a sysadmin meets it: a read-only mount holding the file to
//! test, a file system unmounted (lazily) under a running test, a loop device detached
//! under a device run. Each on a file system or loop device the test makes itself (as
//! root; skipped loudly otherwise). The faults `tests/reliability.rs` covers (ENOSPC, a
//! file system turning read-only, the target removed) are not repeated here. And text that
//! fights back: names and result files carrying escape sequences, line breaks, markup and
//! bytes that are not UTF-8, in every output that shows them.

use std::process::Command;

mod common;
mod reliability_support;
use common::{s, scratch_or_skip, stderr, tempdir};
use reliability_support::*;

/// One test at a time: a loop device detached under a run stays bound until the run lets it
/// go, and another test's scratch file system set up meanwhile failed once (of four runs).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// `iolab run` on an existing file of a read-only mount: what writes is refused before
/// anything is created, naming the read-only file system and how to read the file as it
/// is; reading it as it is works. Before, `--allow-destroy FILE` claimed a result file,
/// failed with "prefill failed: Read-only file system (os error 30)" and exited 1.
#[test]
fn an_existing_file_on_a_read_only_mount_is_read_as_it_is_or_refused_up_front() {
    let test = "an_existing_file_on_a_read_only_mount_is_read_as_it_is_or_refused_up_front";
    let _one = one_at_a_time();
    let Some(fs) = scratch_or_skip(test, "ext4", 64 << 20, &[], "") else {
        return;
    };
    let file = fs.path().join("data.bin");
    std::fs::write(&file, vec![0x5au8; 8 << 20]).unwrap();
    let remount = |opt: &str| {
        let st = Command::new("mount")
            .args(["-o", &format!("remount,{opt}"), s(fs.path())])
            .status()
            .unwrap();
        assert!(st.success());
    };
    remount("ro");
    let d = tempdir();
    let out = d.path().join("out");
    let f = s(&file);
    let run = |extra: &[&str]| {
        let mut args = vec!["run", f, "--duration", "1s", "--repeat", "1", "-o", s(&out)];
        args.extend_from_slice(extra);
        common::iolab_in(d.path(), &args)
    };
    for (extra, what) in [
        (
            vec!["--allow-destroy", f, "--rw", "randread"],
            "the prefill",
        ),
        (
            vec!["--allow-destroy", f, "--rw", "randwrite"],
            "a write test",
        ),
        (vec!["--rw", "randread"], "the prefill"),
    ] {
        let o = run(&extra);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        assert!(
            err.contains(&format!(
                "{f} is on a read-only file system: {what} needs to write it"
            )) && err.contains(&format!("--allow-destroy {f} --prefill false")),
            "{extra:?}: {err}"
        );
        assert!(!out.exists(), "{extra:?}: nothing is created: {err}");
    }
    // The file cannot grow to a --size past its end there.
    let o = run(&[
        "--allow-destroy",
        f,
        "--prefill",
        "false",
        "--rw",
        "randread",
        "--size",
        "16M",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cannot grow on a read-only file system") && err.contains("--size 8192K"),
        "{err}"
    );
    // `iolab sustain` only writes: refused up front too.
    let o = common::iolab_in(
        d.path(),
        &[
            "sustain",
            f,
            "--allow-destroy",
            f,
            "--size",
            "4M",
            "-o",
            s(&out),
        ],
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "{f} is on a read-only file system: a sustained write needs to write it"
        )),
        "{err}"
    );
    assert!(!out.exists(), "nothing is created: {err}");
    // Read as it is: measured, nothing written.
    let o = run(&[
        "--allow-destroy",
        f,
        "--prefill",
        "false",
        "--rw",
        "randread",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc = result_doc(&out).expect("result file saved");
    assert_eq!(doc.status, "complete");
    assert_eq!(std::fs::read(&file).unwrap(), vec![0x5au8; 8 << 20]);
    remount("rw");
}

/// A file system unmounted lazily (`umount -l`) under a run: the next test's open says so,
/// rather than that the target was removed, and iolab says its test file and lock stay on
/// that file system (no later start can find them by their path).
#[test]
fn a_file_system_unmounted_under_a_run_is_named_and_what_stays_on_it_said() {
    let test = "a_file_system_unmounted_under_a_run_is_named_and_what_stays_on_it_said";
    let _one = one_at_a_time();
    let Some(fs) = scratch_or_skip(test, "ext4", 64 << 20, &[], "") else {
        return;
    };
    let d = tempdir();
    let out = d.path().join("out");
    let child = real_run_after_first_test(s(fs.path()), &[], "8M", &out, d.path());
    let st = Command::new("umount")
        .args(["-l", s(fs.path())])
        .status()
        .unwrap();
    assert!(st.success());
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    // Mounted again (as before, for the teardown), to look at what stayed on it.
    let dev = fs.loop_dev.as_ref().unwrap().device.clone();
    let st = Command::new("mount")
        .arg(&dev)
        .arg(fs.path())
        .status()
        .unwrap();
    assert!(st.success());
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("is gone: the file system holding it was unmounted during the run"),
        "{err}"
    );
    assert!(
        err.contains("remove them once it is mounted there again"),
        "{err}"
    );
    let doc = result_doc(&out).expect("result file saved");
    assert_eq!(doc.status, "failed");
    let left = iolab_leftovers(fs.path());
    assert!(!left.is_empty(), "the test file stayed on it, as said");
    for p in left {
        let _ = std::fs::remove_file(p);
    }
}

/// A loop device detached (`losetup -d`) under a device run: the failed read names the
/// device and says it was detached or shrank (it said only "short read … 0 of 4096 bytes").
#[test]
fn a_loop_device_detached_under_a_run_is_named() {
    let test = "a_loop_device_detached_under_a_run_is_named";
    let _one = one_at_a_time();
    if !common::loop_or_skip(test) {
        return;
    }
    let d = tempdir();
    let run = loop_under_a_run(d.path());
    let (dev, out) = (run.dev.as_str(), run.out.as_path());
    // Busy: the kernel detaches it when the run closes it, before the next test opens it.
    let st = Command::new("losetup").args(["-d", dev]).status().unwrap();
    assert!(st.success());
    let o = run.child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("{dev} now holds"))
            && err.contains("it was detached or shrank during the run"),
        "{err}"
    );
    let doc = result_doc(out).expect("result file saved");
    assert_eq!(doc.status, "failed");
    drop(run.lo);
    assert!(run.image.exists());
}

/// A directory name that clears the screen, forges a line and carries markup.
const HOSTILE: &str = "a\u{1b}[2Jb\nFORGED line|x,\"y\"<script>&";

/// No byte of an escape sequence or other control character but the line breaks iolab
/// writes itself, and no line that the outside text started.
fn assert_terminal_safe(what: &str, text: &str) {
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "{what}: a control character reached the terminal: {text:?}"
    );
    for line in text.lines() {
        let body = line.trim_start_matches(|c: char| !c.is_alphanumeric() && c != '#');
        assert!(
            !body.starts_with("FORGED") && !body.starts_with("# forged"),
            "{what}: a name forged the line {line:?} in {text}"
        );
    }
}

fn out_and_err(o: &std::process::Output) -> String {
    format!("{}{}", common::stdout(o), stderr(o))
}

/// `iolab run`, `saturate`, `info` and an error naming a directory whose name holds an
/// escape sequence, a line break and markup: the terminal gets `\u{1b}` and `\n`, never the
/// bytes (the name cleared the screen and printed a line of its own in the table's header,
/// its warnings, the `results:` line, saturate's plan and prefill lines, and the error).
#[test]
fn a_hostile_directory_name_reaches_the_terminal_escaped() {
    let d = tempdir();
    let dir = d.path().join(HOSTILE);
    std::fs::create_dir(&dir).unwrap();
    let out = dir.join("out");
    // One small read test on the directory, with `extra` flags.
    let run = |extra: &[&str]| {
        let args = ["run", s(&dir), "--size", "8M", "--duration", "1s"];
        let more = ["--repeat", "1", "--rw", "randread"];
        common::iolab_in(d.path(), &[&args[..], &more[..], extra].concat())
    };
    let o = run(&["-o", s(&out)]);
    let text = out_and_err(&o);
    assert!(o.status.success(), "{text}");
    assert_terminal_safe("run", &text);
    assert!(
        text.contains("a\\u{1b}[2Jb\\nFORGED line|x,\"y\"<script>&"),
        "the name is shown as what it is: {text}"
    );
    // The run worked on the directory of that very name, and took its file away.
    assert_eq!(common::names(&dir), vec!["out".to_string()]);
    // A line no table builds ("test file kept: PATH") goes through stderr's one sink.
    let o = run(&["--keep", "--no-save"]);
    let text = out_and_err(&o);
    assert!(
        o.status.success() && text.contains("test file kept"),
        "{text}"
    );
    assert_terminal_safe("run --keep", &text);
    for f in common::names(&dir)
        .iter()
        .filter(|n| n.starts_with("iolab-test"))
    {
        std::fs::remove_file(dir.join(f)).unwrap();
    }
    // saturate names its test file in its prefill's progress lines, its plan and sizes.
    let o = common::iolab_in(
        d.path(),
        &[
            "saturate",
            s(&dir),
            "--size",
            "8M",
            "--step-duration",
            "1s",
            "--max-depth",
            "1",
            "--no-save",
        ],
    );
    assert!(o.status.success(), "{}", out_and_err(&o));
    assert_terminal_safe("saturate", &out_and_err(&o));
    let o = common::iolab(&["info", s(&dir), "--layout", "--no-smart"]);
    assert!(o.status.success(), "{}", out_and_err(&o));
    assert_terminal_safe("info", &out_and_err(&o));
    let o = common::iolab(&[
        "report",
        s(&dir.join("none.json")),
        "-o",
        s(&d.path().join("r.html")),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_terminal_safe("an error", &out_and_err(&o));
}

/// A result file hand-edited to carry hostile text in its host name, target, test name, a
/// warning and its start time (and stored under a hostile name): `compare`, `history` and
/// `report` in every format keep it on its line and out of the markup, and do not panic.
#[test]
fn hostile_text_in_a_result_file_stays_text_in_every_view() {
    let d = tempdir();
    let dir = d.path().join(HOSTILE);
    std::fs::create_dir(&dir).unwrap();
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/run-a.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    let test = "T\u{1b}[2J\n# forged <img src=x onerror=alert(1)>|`x` [y](javascript:alert(1))";
    doc["environment"]["hostname"] = "h\u{1b}]0;pwned\u{7}\nFORGED host".into();
    doc["environment"]["target_path"] = dir.to_str().unwrap().into();
    doc["tests"][0]["name"] = test.into();
    doc["warnings"][0]["message"] = format!("about {}", dir.display()).into();
    doc["warnings"][1]["test"] = test.into();
    // A character of two bytes across byte 16 of the start time: `history` panicked.
    doc["started_at"] = "2026-01-31T12:3\u{e9}:56.789Z".into();
    let a = dir.join("a\u{1b}[31m.json");
    std::fs::write(&a, serde_json::to_string(&doc).unwrap()).unwrap();
    doc["environment"]["hostname"] = "other".into();
    let b = dir.join("b.json");
    std::fs::write(&b, serde_json::to_string(&doc).unwrap()).unwrap();

    let o = common::iolab(&["compare", s(&a), s(&b)]);
    assert!(o.status.success(), "{}", out_and_err(&o));
    assert_terminal_safe("compare", &out_and_err(&o));

    let db = d.path().join("history.sqlite");
    let o = common::with_history(&mut common::bin(), &db)
        .args(["history", "import", s(&a)])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", out_and_err(&o));
    for args in [vec!["history"], vec!["history", "show", "1"]] {
        let o = common::with_history(&mut common::bin(), &db)
            .args(&args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{args:?}: {}", out_and_err(&o));
        assert_terminal_safe(&format!("{args:?}"), &out_and_err(&o));
    }

    let md = d.path().join("r.md");
    let o = common::iolab(&["report", s(&a), "-o", s(&md)]);
    assert!(o.status.success(), "{}", out_and_err(&o));
    assert_terminal_safe("report", &out_and_err(&o));
    let md = std::fs::read_to_string(&md).unwrap();
    for line in md.lines() {
        assert!(
            !line.starts_with("FORGED") && !line.starts_with("# forged"),
            "a name forged the Markdown line {line:?}"
        );
    }
    assert!(
        !md.contains("<script")
            && !md.contains("<img")
            && !md.replace("\\](", "").contains("](javascript")
            && !md.contains('\u{1b}'),
        "raw HTML or a link from a name in the Markdown: {md}"
    );
    let html = d.path().join("r.html");
    let o = common::iolab(&["report", s(&a), "-o", s(&html)]);
    assert!(o.status.success(), "{}", out_and_err(&o));
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(
        !html.contains("<script") && !html.contains("<img"),
        "{html}"
    );
}

/// `slack` over a tree and `trace summary` / `trace replay` of a trace whose file, command
/// and recorded paths carry an escape sequence and a line break: shown escaped (slack's
/// header, the summary's first line and its hottest files, the replayed test's name gave
/// the bytes); the replay creates its files in its directory and removes them.
#[test]
fn hostile_names_in_a_tree_and_a_trace_reach_the_terminal_escaped() {
    let d = tempdir();
    let dir = d.path().join(HOSTILE);
    let tree = dir.join("tree");
    std::fs::create_dir_all(tree.join("sub\u{1b}[31m\nFORGED")).unwrap();
    std::fs::write(tree.join("f\u{1b}[2J"), [1u8; 5000]).unwrap();
    let o = common::iolab(&["slack", s(&tree), "--no-save"]);
    assert!(o.status.success(), "{}", out_and_err(&o));
    assert_terminal_safe("slack", &out_and_err(&o));

    let name = "d\\u001b[2J\\nFORGED";
    let trace = dir.join("t\u{1b}[2J.trace");
    let header = r#"{"format":"iolab-trace","version":2,"recorder":"strace","command":["x\u001b[2J"],"root":"/r\u001b[2J","recorded_at":"2026-11-27T12:44:49.965Z","recorded_ns":30,"wall_ns":40,"exit_code":0,"skipped_outside_root":0,"skipped_failed":0,"calls":3,"threads":1,"read_bytes":5000,"write_bytes":0,"#;
    let text = format!(
        "{header}\"files\":[{{\"path\":\"{name}\",\"size\":5000}}],\"dirs\":[]}}\n\
         {{\"t_ns\":0,\"tid\":1,\"op\":\"open\",\"path\":\"{name}\",\"flags\":\"\",\"dur_ns\":5000}}\n\
         {{\"t_ns\":10,\"tid\":1,\"op\":\"read\",\"path\":\"{name}\",\"off\":0,\"len\":5000,\"dur_ns\":18000}}\n\
         {{\"t_ns\":20,\"tid\":1,\"op\":\"close\",\"path\":\"{name}\",\"dur_ns\":1000}}\n"
    );
    std::fs::write(&trace, text).unwrap();
    let o = common::iolab(&["trace", "summary", s(&trace)]);
    assert!(o.status.success(), "{}", out_and_err(&o));
    assert_terminal_safe("trace summary", &out_and_err(&o));
    let replay = d.path().join("replay");
    std::fs::create_dir(&replay).unwrap();
    let o = common::iolab(&["trace", "replay", s(&trace), s(&replay), "--no-save"]);
    assert!(o.status.success(), "{}", out_and_err(&o));
    assert_terminal_safe("trace replay", &out_and_err(&o));
    assert!(common::names(&replay).is_empty());
}

/// `iolab run` on a directory whose name is not UTF-8 (bytes 0xff 0xfe): it measures in
/// that very directory (and removes its file from it), and the result says what the name
/// was: each such byte as U+FFFD and its hex (a lossy conversion gave `n\u{FFFD}\u{FFFD}q`,
/// the name of no directory, in the target and the command line).
#[test]
fn a_name_that_is_not_utf8_is_measured_as_it_is_and_recorded_by_its_bytes() {
    use std::os::unix::ffi::OsStrExt;
    let d = tempdir();
    let dir = d.path().join(std::ffi::OsStr::from_bytes(b"n\xff\xfeq"));
    std::fs::create_dir(&dir).unwrap();
    let o = common::bin()
        .current_dir(d.path())
        .arg("run")
        .arg(&dir)
        .args([
            "--size",
            "8M",
            "--duration",
            "1s",
            "--repeat",
            "1",
            "--rw",
            "randread",
        ])
        .arg("--json")
        .output()
        .unwrap();
    let doc = common::json_ok(&o);
    let shown = |base: &std::path::Path| format!("{}/n\u{FFFD}FF\u{FFFD}FEq", s(base));
    let real = std::fs::canonicalize(d.path()).unwrap();
    assert_eq!(doc["environment"]["target_path"], shown(&real).as_str());
    assert_eq!(doc["argv"][2], shown(d.path()).as_str());
    assert!(
        std::fs::read_dir(&dir).unwrap().next().is_none(),
        "its test file is gone"
    );
    // slack and copy record the tree they read the same way.
    std::fs::write(dir.join("f"), b"x").unwrap();
    let o = common::bin()
        .arg("slack")
        .arg(&dir)
        .args(["--json", "--no-save"])
        .output()
        .unwrap();
    let doc = common::json_ok(&o);
    assert_eq!(doc["slack"]["path"], shown(d.path()).as_str());
    let target = d.path().join("copy");
    std::fs::create_dir(&target).unwrap();
    let o = common::bin()
        .arg("copy")
        .arg(&target)
        .arg("--source")
        .arg(&dir)
        .args(["--repeat", "1", "--json", "--no-save"])
        .output()
        .unwrap();
    let doc = common::json_ok(&o);
    assert_eq!(doc["tests"][0]["copy"]["source"], shown(&real).as_str());
    // info takes the name too (clap refused it: "invalid UTF-8 was detected"), its table
    // and JSON naming it the same way; a missing one is named so in its error.
    let o = common::bin()
        .arg("info")
        .arg(&dir)
        .args(["--no-smart", "--json"])
        .output()
        .unwrap();
    let info = common::json_ok(&o);
    assert_eq!(info["query"], shown(d.path()).as_str());
    assert_eq!(info["path"], shown(&real).as_str());
    let o = common::bin()
        .arg("info")
        .arg(&dir)
        .arg("--no-smart")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", out_and_err(&o));
    assert!(
        common::stdout(&o).contains("n\u{FFFD}FF\u{FFFD}FEq"),
        "{}",
        out_and_err(&o)
    );
    let gone = d.path().join(std::ffi::OsStr::from_bytes(b"gone\xff"));
    let o = common::bin().arg("info").arg(&gone).output().unwrap();
    common::assert_usage(
        &o,
        "gone\u{FFFD}FF: no such file, directory or block device",
    );
}

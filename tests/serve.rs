//! `iolab serve` over plain HTTP: every route refuses a request without the token (401) or
//! with a wrong one (403), a foreign Host or Origin is refused, a destructive test without
//! the typed name is refused with the command line's words, a busy port is one line and
//! exit 2; and the runner's JSON progress stream the console reads.
//! The browser test is tests/serve_browser.rs.

mod common;
mod serve_support;

use std::time::Duration;

use serve_support::Console;

/// Every route of src/serve/routes.rs, with its methods, read from the source (so a route
/// added later is tried too), plus an unknown path (the fallback).
fn routes() -> Vec<(String, Vec<&'static str>)> {
    let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/serve/routes.rs"))
        .unwrap();
    let mut v = Vec::new();
    for line in src.lines() {
        let Some(rest) = line.trim().strip_prefix(".route(\"") else {
            continue;
        };
        let path = rest.split('"').next().unwrap();
        let mut methods = Vec::new();
        if rest.contains("get(") {
            methods.push("GET");
        }
        if rest.contains("post(") {
            methods.push("POST");
        }
        assert!(!methods.is_empty(), "no method read from {line:?}");
        let path = path.replace("{id}", "run-1").replace("{format}", "json");
        v.push((path, methods));
    }
    assert!(v.len() >= 12, "too few routes read: {v:?}");
    v.push(("/no-such-page".into(), vec!["GET", "POST"]));
    v
}

#[test]
fn every_route_needs_the_token_and_the_console_s_own_host_and_origin() {
    let console = Console::start(&[]);
    let routes = routes();
    for (path, methods) in &routes {
        for m in methods.iter().chain(["HEAD"].iter()) {
            let (code, _, body) = console.request(m, path, &[], "{}");
            assert_eq!(code, 401, "{m} {path} without a token: {body}");
            let (code, _, _) = console.request(m, &format!("{path}?token=wrong"), &[], "{}");
            assert_eq!(code, 403, "{m} {path} with a wrong token in the query");
            for h in [
                (
                    "Cookie",
                    format!(
                        "iolab_token_{}=nope",
                        console.host.rsplit(':').next().unwrap()
                    ),
                ),
                ("Authorization", "Bearer nope".to_string()),
            ] {
                let (code, _, _) = console.request(m, path, &[(h.0, &h.1)], "{}");
                assert_eq!(code, 403, "{m} {path} with a wrong token in {}", h.0);
            }
        }
    }
    let auth = format!("Bearer {}", console.token);
    // With the token: a read works, a foreign Host (DNS rebinding) does not.
    let (code, _, _) = console.request("GET", "/api/runs", &[("Authorization", &auth)], "");
    assert_eq!(code, 200);
    let (code, _, _) = console.request(
        "GET",
        "/api/runs",
        &[("Authorization", &auth), ("Host", "attacker.example:80")],
        "",
    );
    assert_eq!(code, 403, "a foreign Host name");
    // A change needs the console's own Origin (or Referer).
    let stop = "/api/runs/run-1/stop";
    let (code, _, _) = console.request("POST", stop, &[("Authorization", &auth)], "");
    assert_eq!(code, 403, "a change without Origin");
    let (code, _, _) = console.request(
        "POST",
        stop,
        &[
            ("Authorization", &auth),
            ("Origin", "http://attacker.example"),
        ],
        "",
    );
    assert_eq!(code, 403, "a change from another origin");
    let (code, _, _) = console.request(
        "POST",
        stop,
        &[("Authorization", &auth), ("Origin", &console.base)],
        "",
    );
    assert_eq!(
        code, 404,
        "a change from the console's page reaches the route"
    );
    // The token in the query sets the cookie and leaves the address bar.
    let (code, head, _) = console.request("GET", &format!("/?token={}", console.token), &[], "");
    assert_eq!(code, 303, "{head}");
    let cookie = head
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: "))
        .unwrap_or_else(|| panic!("no cookie: {head}"));
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let pair = cookie.split(';').next().unwrap();
    let (code, _, body) = console.request("GET", "/", &[("Cookie", pair)], "");
    assert_eq!(code, 200);
    assert!(body.contains("/static/app.js"), "{body}");
}

/// The form's commands and choices come from the binary: `files --preset` offers what
/// `iolab files` takes (the page once hard-coded `belov`, which it refuses), and the page's
/// script holds no list of its own.
#[test]
fn the_form_offers_the_command_line_s_own_choices() {
    let console = Console::start(&[]);
    let (code, body) = console.authed("GET", "/api/form", "");
    assert_eq!(code, 200, "{body}");
    let spec: serde_json::Value = serde_json::from_str(&body).unwrap();
    let choices = |c: &str, o: &str| {
        spec.as_array()
            .unwrap()
            .iter()
            .find(|x| x["command"] == c)
            .and_then(|x| {
                x["options"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|y| y["name"] == o)
            })
            .map(|y| y["choices"].clone())
            .unwrap_or_else(|| panic!("{c} --{o} not in the form: {body}"))
    };
    assert_eq!(
        choices("files", "preset"),
        serde_json::json!(["quick", "full"])
    );
    assert_eq!(
        choices("run", "preset"),
        serde_json::json!(["default", "nvme", "real", "peak"])
    );
    let (code, js) = console.authed("GET", "/static/app.js", "");
    assert_eq!(code, 200);
    assert!(
        js.contains("/api/form"),
        "the page reads the form from the server"
    );
    assert!(
        !js.contains("belov") && !js.contains("\"quick\""),
        "a list of the page's own"
    );
    // Compare takes the lower (older) of the two checked rows as the baseline, as the
    // guide says; the hint said "the first checked".
    assert!(js.contains("(the older one is the baseline)"));
    // The history's command filter takes the measuring commands, as `history --command` does.
    let (code, body) = console.authed("GET", "/api/history?command=bogus", "");
    assert_eq!(code, 400, "{body}");
    assert!(body.contains("not a measuring command (run, "), "{body}");
    let (code, body) = console.authed("GET", "/api/history?command=sustain", "");
    assert_eq!(code, 200, "{body}");
    // A bad `since` names the filter, not the command line's flag (it said "--since").
    let (code, body) = console.authed("GET", "/api/history?since=yesterday", "");
    assert_eq!(code, 400, "{body}");
    let err: serde_json::Value = serde_json::from_str(&body).unwrap();
    let err = err["error"].as_str().unwrap();
    assert!(err.starts_with("since \"yesterday\": not a date"), "{err}");
    let (code, body) = console.authed("GET", "/api/history?since=7d", "");
    assert_eq!(code, 200, "{body}");
}

#[test]
fn a_destructive_test_needs_the_target_s_name_typed_exactly() {
    let console = Console::start(&[]);
    // An existing file: the command line would overwrite it only with --allow-destroy.
    let file = console.dir.path().join("precious.bin");
    std::fs::write(&file, vec![7u8; 1 << 20]).unwrap();
    let f = file.display().to_string();
    let form = |confirm: &str| {
        serde_json::json!({
            "command": "run",
            "target": f,
            "options": {"duration": "1s", "repeat": "1", "rw": "read", "bs": "4K", "size": "1M"},
            "confirm": confirm,
        })
        .to_string()
    };
    let (code, body) = console.authed("POST", "/api/runs", &form(""));
    assert_eq!(code, 400, "{body}");
    assert!(
        body.contains("is an existing file: iolab would overwrite it")
            && body.contains("--allow-destroy"),
        "{body}"
    );
    let (code, body) = console.authed("POST", "/api/runs", &form(&format!("{f}x")));
    assert_eq!(code, 400, "{body}");
    assert!(body.contains("is not the target"), "{body}");
    // Another spelling of the same file is not the name typed exactly either.
    let other = format!("{}/./precious.bin", console.dir.path().display());
    let (code, body) = console.authed("POST", "/api/runs", &form(&other));
    assert_eq!(code, 400, "{body}");
    assert_eq!(
        std::fs::read(&file).unwrap(),
        vec![7u8; 1 << 20],
        "the file was touched"
    );
    // Options beyond the form's, relative targets: refused before anything runs.
    let bad = serde_json::json!({"command": "run", "target": f, "options": {"output": "/etc"}});
    let (code, body) = console.authed("POST", "/api/runs", &bad.to_string());
    assert_eq!(code, 400, "{body}");
    let rel = serde_json::json!({"command": "run", "target": "precious.bin"});
    let (code, body) = console.authed("POST", "/api/runs", &rel.to_string());
    assert_eq!(code, 400, "{body}");
    let (code, body) = console.authed("GET", "/api/runs", "");
    assert_eq!((code, body.as_str()), (200, "[]"), "nothing started");
}

#[test]
fn a_busy_port_is_one_line_and_exit_2() {
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port().to_string();
    let dir = common::tempdir();
    let out = common::bin()
        .current_dir(dir.path())
        .args(["serve", "--port", &port])
        .output()
        .unwrap();
    let err = common::stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "cannot listen on 127.0.0.1:{port}: the port is in use"
        )),
        "{err}"
    );
    // Beyond loopback without --token: refused before listening.
    let out = common::bin()
        .current_dir(dir.path())
        .args(["serve", "--bind", "0.0.0.0", "--port", "0"])
        .output()
        .unwrap();
    common::assert_usage(&out, "needs --token");
    assert_eq!(common::stderr(&out).lines().count(), 1);
    // A token the printed URL cannot carry as it is (it answered 403): refused.
    for bad in ["abcdef+ghi&jkl%mnop#q;x", "0123456789abcdef\u{e9}", "short"] {
        let out = common::bin()
            .current_dir(dir.path())
            .args(["serve", "--port", "0", "--token", bad])
            .output()
            .unwrap();
        common::assert_usage(&out, "--token: give at least 16 letters, digits or - . _ ~");
        assert_eq!(common::stderr(&out).lines().count(), 1);
    }
}

/// `iolab serve > FILE` on a full disk served on with its address and token unseen, until
/// killed: it stops at once and says why, exit 1.
#[test]
fn a_console_whose_address_cannot_be_written_does_not_serve() {
    let dir = common::tempdir();
    let out = common::bin()
        .current_dir(dir.path())
        .args(["serve", "--port", "0"])
        .stdout(std::fs::File::create("/dev/full").unwrap())
        .output()
        .unwrap();
    let err = common::stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("could not be written to stdout, so nobody could open the console")
            && err.contains("cannot write to stdout: No space left on device"),
        "{err}"
    );
}

/// An address no interface has (TEST-NET-1, RFC 5737): the refusal alone, not first the
/// warning that the console is listening there.
#[test]
fn an_address_of_no_interface_is_refused_without_claiming_to_listen() {
    let dir = common::tempdir();
    let out = common::bin()
        .current_dir(dir.path())
        .args(["serve", "--bind", "192.0.2.1", "--port", "0"])
        .args(["--token", "0123456789abcdefghij"])
        .output()
        .unwrap();
    common::assert_usage(
        &out,
        "cannot listen on 192.0.2.1:0: no interface of this machine has that address",
    );
    let err = common::stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!err.contains("listening on"), "{err}");
    // Beyond loopback on an address it has: the warning comes once it listens.
    let console = Console::start(&["--bind", "0.0.0.0", "--token", "0123456789abcdefghij"]);
    let (code, _) = console.authed("GET", "/api/runs", "");
    assert_eq!(code, 200);
    assert!(
        console.stderr().contains("warning: listening on 0.0.0.0"),
        "{}",
        console.stderr()
    );
}

#[test]
fn the_progress_stream_has_tasks_live_points_and_the_result() {
    let dir = common::tempdir();
    let stream = dir.path().join("progress.jsonl");
    let out = common::bin()
        .current_dir(dir.path())
        .arg("--progress-json")
        .arg(&stream)
        .args([
            "run",
            "--rw",
            "randread",
            "--bs",
            "4K",
            "--size",
            "4M",
            "--repeat",
            "1",
            // Long enough for two 500 ms points on any machine.
            "--duration",
            "2s",
            "--ramp",
            "0s",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::stderr(&out));
    let events: Vec<serde_json::Value> = std::fs::read_to_string(&stream)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.first(), Some(&"start"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"result"), "{kinds:?}");
    assert!(
        kinds.contains(&"task_start") && kinds.contains(&"task_end"),
        "{kinds:?}"
    );
    let points: Vec<_> = events.iter().filter(|e| e["event"] == "point").collect();
    assert!(points.len() >= 2, "{kinds:?}");
    for p in &points {
        assert!(p["iops"].as_f64().unwrap() > 0.0, "{p}");
        assert!(p["bw_bytes_per_s"].as_f64().unwrap() > 0.0, "{p}");
        assert!(p["lat_mean_ns"].as_f64().unwrap() > 0.0, "{p}");
    }
    let last = events.last().unwrap();
    assert_eq!(last["status"], "complete");
    // Relative to the command's working directory, as its "results:" line.
    assert!(
        dir.path().join(last["path"].as_str().unwrap()).is_file(),
        "{last}"
    );
}

/// `iolab serve` with `IOLAB_HISTORY` at `db`: exit 2 and one line naming the file.
fn refused_history(db: &std::path::Path, needle: &str) {
    let dir = common::tempdir();
    let out = common::with_history(&mut common::bin(), db)
        .current_dir(dir.path())
        .args(["serve", "--port", "0"])
        .output()
        .unwrap();
    let err = common::stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&db.display().to_string()) && err.contains(needle),
        "{err}"
    );
    assert!(
        common::stdout(&out).is_empty(),
        "no URL: {}",
        common::stdout(&out)
    );
    // Nothing created: the default result directory stayed behind, empty.
    assert!(
        !dir.path().join("iolab-results").exists(),
        "a refused serve made iolab-results"
    );
}

#[test]
fn a_corrupt_or_newer_history_is_one_line_and_exit_2() {
    let dir = common::tempdir();
    // Not a database at all.
    let junk = dir.path().join("junk.sqlite");
    std::fs::write(&junk, vec![0x5au8; 64 << 10]).unwrap();
    refused_history(&junk, "history");
    assert_eq!(
        std::fs::read(&junk).unwrap(),
        vec![0x5au8; 64 << 10],
        "left as it was"
    );
    // A history written by a newer iolab.
    let newer = dir.path().join("newer.sqlite");
    drop(iolab::history::History::open(&newer).unwrap());
    {
        let c = rusqlite::Connection::open(&newer).unwrap();
        c.pragma_update(None, "user_version", iolab::history::SCHEMA_VERSION + 1)
            .unwrap();
    }
    refused_history(&newer, "newer than this iolab understands");
}

/// The form of a 4K random-read run far longer than any test waits (it ends by a stop), on a
/// new directory `target` of the console's.
fn long_run_form(console: &Console) -> (std::path::PathBuf, String) {
    let target = console.dir.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let form = serde_json::json!({
        "command": "run",
        "target": target.display().to_string(),
        "options": {"rw": "randread", "bs": "4K", "size": "4M", "duration": "10m",
                    "ramp": "0s", "repeat": "1"},
    })
    .to_string();
    (target, form)
}

/// The long run started from `console`'s form: its first test, `run-1`.
fn start_long_run(console: &Console) {
    let (_, form) = long_run_form(console);
    let (code, body) = console.authed("POST", "/api/runs", &form);
    assert_eq!(code, 200, "{body}");
}

/// `run-1` as the console gives it, with all its events.
fn run_1(console: &Console) -> serde_json::Value {
    let (_, body) = console.authed("GET", "/api/runs/run-1?since=0", "");
    serde_json::from_str(&body).unwrap()
}

/// Stop `run-1` from the console, as its Stop button does; how it ended.
fn stop_run_1(console: &Console) -> serde_json::Value {
    let (code, body) = console.authed("POST", "/api/runs/run-1/stop", "");
    assert_eq!(code, 200, "{body}");
    let mut last = serde_json::Value::Null;
    let ended = common::wait_until(Duration::from_secs(120), || {
        last = run_1(console);
        !matches!(last["status"].as_str(), Some("running" | "stopping"))
    });
    assert!(ended, "still running 120 s after Stop: {last}");
    last
}

#[test]
fn one_test_per_target_and_the_server_s_ctrl_c_stops_its_tests_cleanly() {
    let mut console = Console::start(&[]);
    let (target, form) = long_run_form(&console);
    let (code, body) = console.authed("POST", "/api/runs", &form);
    assert_eq!(code, 200, "{body}");
    let (code, body) = console.authed("POST", "/api/runs", &form);
    assert_eq!(code, 409, "{body}");
    assert!(
        body.contains("another test (run-1, run) is running on"),
        "{body}"
    );
    // A run from elsewhere (here: this test holding the target's lock) is refused too.
    let other = console.dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let held = iolab::runner::lock::TargetLock::acquire(&other).unwrap();
    let other_form = form.replace(&target.display().to_string(), &other.display().to_string());
    let (code, body) = console.authed("POST", "/api/runs", &other_form);
    assert_eq!(code, 409, "{body}");
    assert!(body.contains("another iolab run is using"), "{body}");
    drop(held);
    // A target where no lock can be made is refused (400), not "busy" (it was 409, with
    // "cannot create the lock file /proc/.iolab.lock").
    let proc_form = form.replace(&target.display().to_string(), "/proc");
    let (code, body) = console.authed("POST", "/api/runs", &proc_form);
    assert_eq!(code, 400, "{body}");
    assert!(
        body.contains("/proc: iolab cannot create files there"),
        "{body}"
    );
    // Wait for the first live point (the run is measuring), then read its pid.
    let mut pid = 0;
    let live = common::wait_until(Duration::from_secs(120), || {
        let (_, body) = console.authed("GET", "/api/runs/run-1?since=0", "");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        let events = v["events"].as_array().unwrap();
        if let Some(p) = events.iter().find_map(|e| e["pid"].as_i64()) {
            pid = p;
        }
        events.iter().any(|e| e["event"] == "point")
    });
    assert!(live, "no live point in 120 s; stderr: {}", console.stderr());
    assert_eq!(console.stop(), Some(0), "{}", console.stderr());
    let err = console.stderr();
    assert!(err.contains("stopping run-1 (run on"), "{err}");
    // The child is gone, its partial result saved as interrupted and recorded, its lock and
    // test file removed.
    let gone = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), None).is_err();
    assert!(gone, "the test's process {pid} outlived the server");
    let results = common::entries(&console.dir.path().join("results"));
    assert_eq!(results.len(), 1, "{results:?}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&results[0]).unwrap()).unwrap();
    assert_eq!(doc["status"], "interrupted");
    let h = iolab::history::History::open(&console.dir.path().join("history.db")).unwrap();
    let list = h.list(&Default::default()).unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].status, "interrupted");
    assert_eq!(
        common::names(&target),
        Vec::<String>::new(),
        "left in the target"
    );
}

/// The console's Stop is one SIGINT and it has no second: the test's stop line said "Ctrl-C
/// again, a second or more from now, exits at once without cleanup", which no button of the
/// console does. A test the console started says how it stops, without that hint.
#[test]
fn a_console_stop_offers_no_second_ctrl_c() {
    let console = Console::start(&[]);
    start_long_run(&console);
    let live = common::wait_until(Duration::from_secs(120), || {
        run_1(&console)["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["event"] == "point")
    });
    assert!(live, "no live point in 120 s; stderr: {}", console.stderr());
    let v = stop_run_1(&console);
    assert_eq!(v["status"], "interrupted", "{v}");
    let err = v["stderr"].as_str().unwrap();
    assert!(err.contains("iolab: stopping (SIGINT): "), "{err}");
    assert!(!err.contains("Ctrl-C again"), "{err}");
}

/// A running test's stderr reaches its view line by line as the test writes it (the page
/// showed notes, warnings and a stop's message only once the test had ended: its stderr was
/// read whole at the end). The test measures for 10 minutes, so the line of its measuring
/// task is seen while it runs; when it ends, the view's stderr holds each line once.
#[test]
fn a_running_test_s_stderr_comes_as_it_is_written() {
    let console = Console::start(&[]);
    start_long_run(&console);
    // The measuring task's line (`iolab: LABEL ...`), the task its last `task_start` names.
    let mut line = String::new();
    let mut last = serde_json::Value::Null;
    let seen = common::wait_until(Duration::from_secs(120), || {
        last = run_1(&console);
        let Some(label) = last["events"]
            .as_array()
            .unwrap()
            .iter()
            .rev()
            .find(|e| e["event"] == "task_start" && e["label"] != "prefill")
            .and_then(|e| e["label"].as_str())
        else {
            return false;
        };
        line = format!("iolab: {label} ...\n");
        last["stderr"].as_str().unwrap().contains(&line)
    });
    assert!(seen, "no line of the measuring task in 120 s: {last}");
    assert_eq!(last["status"], "running", "{last}");
    let v = stop_run_1(&console);
    let err = v["stderr"].as_str().unwrap();
    assert_eq!(err.matches(&line).count(), 1, "{err}");
    assert_eq!(
        err.matches("iolab: stopping (SIGINT): ").count(),
        1,
        "{err}"
    );
}

/// SIGTERM and SIGHUP (the terminal or SSH session closing) stop the server as Ctrl-C does:
/// SIGHUP killed it outright (no "stopped", its tests left to notice their parent gone, its
/// work directory left in $TMPDIR), while every other command stops cleanly on it.
#[test]
fn sigterm_and_sighup_stop_the_server_as_ctrl_c_does() {
    for sig in [
        nix::sys::signal::Signal::SIGTERM,
        nix::sys::signal::Signal::SIGHUP,
    ] {
        let mut console = Console::start(&[]);
        // Serving: a request answers before the signal.
        let (code, _) = console.authed("GET", "/api/runs", "");
        assert_eq!(code, 200, "{sig}");
        assert_eq!(
            console.stop_with(sig),
            Some(0),
            "{sig}: {}",
            console.stderr()
        );
        assert!(
            console.stderr().contains("iolab serve: stopped"),
            "{sig}: {}",
            console.stderr()
        );
    }
}

#[test]
fn a_killed_server_s_tests_stop_through_the_ctrl_c_path() {
    let mut console = Console::start(&[]);
    let (target, form) = long_run_form(&console);
    let (code, body) = console.authed("POST", "/api/runs", &form);
    assert_eq!(code, 200, "{body}");
    let mut pid = 0;
    let live = common::wait_until(Duration::from_secs(120), || {
        let (_, body) = console.authed("GET", "/api/runs/run-1?since=0", "");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        let events = v["events"].as_array().unwrap();
        if let Some(p) = events.iter().find_map(|e| e["pid"].as_i64()) {
            pid = p;
        }
        events.iter().any(|e| e["event"] == "point")
    });
    assert!(live, "no live point in 120 s; stderr: {}", console.stderr());
    // The server's work directory (the test's progress file): a killed server cannot remove
    // it, so this test does, afterwards.
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    let args: Vec<String> = cmdline
        .split(|b| *b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let progress = args
        .iter()
        .position(|a| a == "--progress-json")
        .map(|i| std::path::PathBuf::from(&args[i + 1]))
        .unwrap_or_else(|| panic!("no --progress-json in {args:?}"));
    let work = progress.parent().unwrap().to_path_buf();
    // SIGKILL: the server cannot stop its test; the test sees its parent gone and stops itself
    // with one SIGINT.
    console.child.kill().unwrap();
    console.child.wait().unwrap();
    let results = console.dir.path().join("results");
    let ended = common::wait_until(Duration::from_secs(120), || {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), None).is_err()
    });
    let _ = std::fs::remove_dir_all(&work);
    assert!(ended, "the test {pid} outlived its killed server");
    let files = common::entries(&results);
    assert_eq!(files.len(), 1, "{files:?}");
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{}: {e}: {text:?}", files[0].display()));
    assert_eq!(doc["status"], "interrupted");
    assert_eq!(
        common::names(&target),
        Vec::<String>::new(),
        "left in the target"
    );
}

#[test]
fn files_saturate_and_sustain_start_from_the_form_and_complete() {
    let console = Console::start(&[]);
    let forms = [
        (
            "files",
            serde_json::json!({"sizes": "1,4K", "files-per-portion": "20", "portions": "2",
                               "passes": "1", "repeat": "1"}),
        ),
        (
            "saturate",
            serde_json::json!({"rw": "randread", "step-duration": "200ms", "ramp": "0s",
                               "size": "8M", "max-depth": "2"}),
        ),
        ("sustain", serde_json::json!({"size": "16M", "bs": "1M"})),
    ];
    for (command, options) in forms {
        let target = console.dir.path().join(command);
        std::fs::create_dir(&target).unwrap();
        let form = serde_json::json!({
            "command": command,
            "target": target.display().to_string(),
            "options": options,
        });
        let (code, body) = console.authed("POST", "/api/runs", &form.to_string());
        assert_eq!(code, 200, "{command}: {body}");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        let id = v["id"].as_str().unwrap().to_string();
        let mut last = serde_json::Value::Null;
        let done = common::wait_until(Duration::from_secs(300), || {
            let (_, body) = console.authed("GET", &format!("/api/runs/{id}"), "");
            last = serde_json::from_str(&body).unwrap();
            last["status"] != "running"
        });
        assert!(done, "{command} did not end in 300 s: {last}");
        assert_eq!(last["status"], "complete", "{command}: {last}");
        assert!(
            last["history"].as_str().unwrap_or("").starts_with("h-"),
            "{last}"
        );
        // Its result downloads by id in every format.
        for f in ["html", "md", "csv", "json"] {
            let (code, body) = console.authed("GET", &format!("/api/results/{id}/report/{f}"), "");
            assert_eq!(code, 200, "{command} {f}: {body}");
            assert!(!body.is_empty());
        }
    }
}

/// Regression: the stream's `start` and `result` events were built with `json!` from the
/// result path, which panicked on a path that is not UTF-8 (with or without the stream).
#[test]
fn the_progress_stream_takes_a_result_directory_that_is_not_utf8() {
    use std::os::unix::ffi::OsStrExt;
    let dir = common::tempdir();
    let odd = dir
        .path()
        .join(std::ffi::OsStr::from_bytes(b"res-\xff-dir"));
    let stream = dir.path().join("progress.jsonl");
    let out = common::bin()
        .current_dir(dir.path())
        .arg("--progress-json")
        .arg(&stream)
        .args([
            "run",
            "--rw",
            "randread",
            "--bs",
            "4K",
            "--size",
            "1M",
            "--repeat",
            "1",
            "--duration",
            "100ms",
            "--ramp",
            "0s",
            "--output",
        ])
        .arg(&odd)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::stderr(&out));
    let text = std::fs::read_to_string(&stream).unwrap();
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["event"], "result");
    assert!(
        last["path"].as_str().unwrap().contains("res-\u{fffd}-dir"),
        "{last}"
    );
}

/// Without a history the History page lists the console's own runs, with the headline
/// figures and the device as the history gives them (it showed the first test's bare name
/// and the kernel name).
#[test]
fn without_a_history_the_own_runs_have_their_headline_figures() {
    let console = Console::start(&["--no-history"]);
    let target = console.dir.path().join("files");
    std::fs::create_dir(&target).unwrap();
    let form = serde_json::json!({
        "command": "files",
        "target": target.display().to_string(),
        "options": {"sizes": "1", "files-per-portion": "10", "portions": "1",
                    "passes": "1", "repeat": "1"},
    });
    let (code, body) = console.authed("POST", "/api/runs", &form.to_string());
    assert_eq!(code, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let id = v["id"].as_str().unwrap().to_string();
    let done = common::wait_until(Duration::from_secs(120), || {
        let (_, body) = console.authed("GET", &format!("/api/runs/{id}"), "");
        !body.contains("\"status\":\"running\"")
    });
    assert!(done, "{id} did not end");
    let (code, body) = console.authed("GET", "/api/history", "");
    assert_eq!(code, 200, "{body}");
    let list: serde_json::Value = serde_json::from_str(&body).unwrap();
    let headline = list[0]["headline"].as_str().unwrap();
    assert!(headline.contains("files/s"), "{body}");
    // The filters read the own runs as `iolab history` reads the history: part of the
    // device (it compared the device whole: nothing matched), any case of the command (it
    // refused `FILES`), `limit=0` for all (it listed none).
    let device = list[0]["device"].as_str().unwrap();
    let part = device
        .split_whitespace()
        .next()
        .unwrap()
        .to_ascii_uppercase();
    for q in [
        format!("device={}", part.replace(' ', "%20")),
        "command=FILES".to_string(),
        "limit=0".to_string(),
    ] {
        let (code, body) = console.authed("GET", &format!("/api/history?{q}"), "");
        assert_eq!(code, 200, "{q}: {body}");
        let l: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            l.as_array().unwrap().len(),
            1,
            "{q} (device {device}): {body}"
        );
        assert_eq!(l[0]["id"], serde_json::json!(id), "{q}: {body}");
    }
    let (code, body) = console.authed("GET", "/api/history?command=fils", "");
    assert_eq!(code, 400, "{body}");
    assert!(body.contains("not a measuring command"), "{body}");
    // Its result file deleted: not found, not a server error (it was 500).
    let file = list[0]["source"].as_str().unwrap().to_string();
    std::fs::remove_file(&file).unwrap();
    let (code, body) = console.authed("GET", &format!("/api/results/{id}/report/md"), "");
    assert_eq!(code, 404, "{body}");
    assert!(body.contains("is gone"), "{body}");
}

/// The History page's filters give what `iolab history` gives for the same values: `limit`
/// 0 is every result (the page listed none), the command in any case (`RUN` was refused,
/// the command line takes it since `--command Run` was fixed there).
#[test]
fn the_history_filters_read_as_the_command_line_s() {
    let dir = tempfile::Builder::new()
        .prefix("iolab-serve-filters-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let history = dir.path().join("history.db");
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for f in ["run-a.json", "run-b.json", "files.json"] {
        let mut cmd = common::bin();
        let out = common::with_history(&mut cmd, &history)
            .args(["history", "import", common::s(&fixtures.join(f))])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", common::stderr(&out));
    }
    let ids = |args: &[&str]| -> Vec<String> {
        let mut cmd = common::bin();
        let out = common::with_history(&mut cmd, &history)
            .args(["history", "--json"])
            .args(args)
            .output()
            .unwrap();
        let v = common::json_ok(&out);
        v.as_array()
            .unwrap()
            .iter()
            .map(|e| format!("h-{}", e["id"]))
            .collect()
    };
    let console = Console::start_in(dir, &[], Some(&history));
    for (q, args) in [
        ("limit=0", &["--limit", "0"][..]),
        ("limit=1", &["--limit", "1"][..]),
        ("command=RUN", &["--command", "RUN"][..]),
        (
            "command=Files&limit=0",
            &["--command", "Files", "--limit", "0"][..],
        ),
    ] {
        let (code, body) = console.authed("GET", &format!("/api/history?{q}"), "");
        assert_eq!(code, 200, "{q}: {body}");
        let l: serde_json::Value = serde_json::from_str(&body).unwrap();
        let got: Vec<String> = l
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].as_str().unwrap().to_string())
            .collect();
        let want = ids(args);
        assert!(!want.is_empty(), "{args:?}");
        assert_eq!(got, want, "{q} against iolab history {args:?}");
    }
    // One entry by its id, whatever the other filters (the run page links to it: it
    // linked to the whole list), older than the limit too; a bad id is refused.
    let all = ids(&["--limit", "0"]);
    let oldest = all.last().unwrap();
    for q in [
        format!("id={oldest}"),
        format!("id={oldest}&limit=1&command=bogus"),
    ] {
        let (code, body) = console.authed("GET", &format!("/api/history?{q}"), "");
        assert_eq!(code, 200, "{q}: {body}");
        let l: serde_json::Value = serde_json::from_str(&body).unwrap();
        let got: Vec<&str> = l
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].as_str().unwrap())
            .collect();
        assert_eq!(got, [oldest.as_str()], "{q}");
    }
    let (code, body) = console.authed("GET", "/api/history?id=h-999999", "");
    assert_eq!((code, body.as_str()), (200, "[]"));
    let (code, body) = console.authed("GET", "/api/history?id=7", "");
    assert_eq!(code, 400, "{body}");
    assert!(
        body.contains("id '7': give a history entry's id (h-N)"),
        "{body}"
    );
    let (_, js) = console.authed("GET", "/static/app.js", "");
    assert!(
        js.contains("href: \"#/history?id=\" + encodeURIComponent(v.history)"),
        "the run page links to its history entry"
    );
}

/// A history entry's downloads are `iolab report` of the result file it was recorded from,
/// byte for byte (they named it "history-1.json", a file that never existed), and the
/// comparison names the files as `iolab compare` does.
#[test]
fn a_history_entry_s_downloads_are_iolab_report_of_its_file() {
    let dir = tempfile::Builder::new()
        .prefix("iolab-serve-downloads-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let history = dir.path().join("history.db");
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let a = dir.path().join("run-a.json");
    let b = dir.path().join("run-b.json");
    std::fs::copy(fixtures.join("run-a.json"), &a).unwrap();
    std::fs::copy(fixtures.join("run-b.json"), &b).unwrap();
    for f in [&a, &b] {
        let mut cmd = common::bin();
        let out = common::with_history(&mut cmd, &history)
            .args(["history", "import", common::s(f)])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", common::stderr(&out));
    }
    let reports = dir.path().join("reports");
    std::fs::create_dir(&reports).unwrap();
    let console = Console::start_in(dir, &[], Some(&history));
    for ext in ["html", "md", "csv"] {
        let want = reports.join(format!("report.{ext}"));
        let out = common::iolab(&["report", common::s(&a), "-o", common::s(&want)]);
        assert!(out.status.success(), "{}", common::stderr(&out));
        let want = std::fs::read_to_string(&want).unwrap();
        let (code, got) = console.authed("GET", &format!("/api/results/h-1/report/{ext}"), "");
        assert_eq!(code, 200, "{got}");
        assert!(!got.contains("history-1"), "{ext}: {got}");
        assert_eq!(got, want, "{ext}: the download differs from iolab report's");
    }
    let (code, body) = console.authed("GET", "/api/compare?a=h-1&b=h-2", "");
    assert_eq!(code, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let text = v["text"].as_str().unwrap();
    assert!(
        text.contains(&format!("A = {}", a.display())),
        "the comparison names its files: {text}"
    );
}

/// The compare cells are `iolab compare`'s table, cell for cell, a matrix's too: each
/// side's mean with its ± and run count, the verdict with its test, and a configuration's
/// test named `NAME [CONFIG]` (the page named it "CONFIG NAME", and gave the mean alone).
#[test]
fn compare_cells_are_iolab_compare_s_table() {
    let dir = tempfile::Builder::new()
        .prefix("iolab-serve-compare-cells-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let history = dir.path().join("history.db");
    let matrix =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/matrix.json");
    let mut cmd = common::bin();
    let out = common::with_history(&mut cmd, &history)
        .args(["history", "import", common::s(&matrix)])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::stderr(&out));
    let want = serve_support::compare_table(&matrix, &matrix);
    let console = Console::start_in(dir, &[], Some(&history));
    let (code, body) = console.authed("GET", "/api/compare?a=h-1&b=h-1", "");
    assert_eq!(code, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let got: Vec<Vec<String>> = v["cells"][0]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            ["test", "metric", "baseline", "other", "change", "verdict"]
                .iter()
                .map(|k| {
                    c[k].as_str()
                        .unwrap_or_else(|| panic!("{k} in {c}"))
                        .to_string()
                })
                .collect()
        })
        .collect();
    assert_eq!(
        got[0],
        [
            "1 create [ext4 1KiB noatime]",
            "files/s",
            "15,999 ± 795 (n=3)",
            "15,999 ± 795 (n=3)",
            "+0.0 % ± 4.5 %",
            "no significant difference (Welch, p = 1.000)"
        ]
    );
    assert_eq!(got, want);
}

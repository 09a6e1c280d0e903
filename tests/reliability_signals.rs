//! Signals during every long-running subcommand (SIGINT, SIGTERM, SIGHUP: partial results
//! saved, everything created removed, exit 130/143/129) and SIGKILL (the next start removes
//! the leftovers and says what it removed).

use std::process::Stdio;

mod common;
mod reliability_support;
use reliability_support::*;

#[path = "matrix_support/mod.rs"]
mod matrix_support;

/// A saturate run on `work` that is still stepping when the signal comes.
fn slow_saturate(work: &std::path::Path) -> Vec<&str> {
    vec![
        "saturate",
        "--target",
        s(work),
        "--rw",
        "randread",
        "--size",
        "8M",
        "--max-depth",
        "64",
        "--latency-limit",
        "1h",
        // Time-based steps: once the first is saved at least two more (a second; only three
        // falling steps can end the sweep) are left, and the signal follows within the 20 ms
        // poll, however slow the machine.
        "--step-duration",
        "500ms",
        "--ramp",
        "0",
    ]
}

#[test]
fn signals_during_saturate() {
    for sig in SIGNALS {
        let d = tempdir();
        let work = d.path().join("work");
        std::fs::create_dir(&work).unwrap();
        signal_mid_run(
            &slow_saturate(&work),
            &work,
            &d.path().join("out"),
            sig,
            true,
        );
    }
}

#[test]
fn signals_during_trace_run() {
    for sig in SIGNALS {
        let d = tempdir();
        let work = d.path().join("work");
        std::fs::create_dir(&work).unwrap();
        let wl = d.path().join("slow.toml");
        std::fs::write(&wl, SLOW_TRACE).unwrap();
        signal_mid_run(
            &[
                "trace",
                "run",
                s(&wl),
                "--target",
                s(&work),
                "--repeat",
                "1",
            ],
            &work,
            &d.path().join("out"),
            sig,
            false,
        );
    }
}

/// `timeout -s INT` signals the program and then its process group: two signals at once are
/// one stop (saved, cleaned up, 130), not the "second Ctrl-C" that exits at once.
#[test]
fn a_stop_delivered_twice_at_once_is_one_stop() {
    for sig in [
        nix::sys::signal::Signal::SIGINT,
        nix::sys::signal::Signal::SIGTERM,
    ] {
        let d = tempdir();
        let work = d.path().join("work");
        std::fs::create_dir(&work).unwrap();
        signal_mid_run_times(
            &slow_saturate(&work),
            &work,
            &d.path().join("out"),
            sig,
            true,
            2,
        );
    }
}

/// Start a 60 s random-read run on `work` with its own state directory `registry` (no other
/// iolab start may clean up before the test's) and `out`, SIGKILL it once its manifest
/// records `paths` paths; whether it did within `PATIENCE`.
fn killed_once_recorded(
    registry: &std::path::Path,
    work: &std::path::Path,
    out: &[&str],
    paths: usize,
) -> bool {
    let mut child = bin()
        .env("IOLAB_STATE_DIR", registry)
        .env("IOLAB_NO_HISTORY", "1")
        .args([
            "run",
            "--target",
            s(work),
            "--rw",
            "randread",
            "--size",
            "8M",
        ])
        .args(["--duration", "60s", "--ramp", "0", "--repeat", "1"])
        .args(out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let manifest = registry.join(format!("owned-{}.json", child.id()));
    let recorded = wait_until(PATIENCE, || {
        std::fs::read_to_string(&manifest).is_ok_and(|m| m.matches("\"path\"").count() >= paths)
    });
    child.kill().unwrap();
    child.wait().unwrap();
    recorded
}

#[test]
fn after_sigkill_the_next_start_removes_the_leftovers_and_says_so() {
    let d = tempdir();
    let work = d.path().join("work");
    std::fs::create_dir(&work).unwrap();
    // A registry of our own: no concurrent iolab start may clean up before ours does.
    let registry = d.path().join("registry");
    // The test file is recorded once it exists; wait for both it and the lock.
    let recorded = killed_once_recorded(&registry, &work, &["--no-save"], 2);
    assert!(
        recorded,
        "no test file and lock recorded within {PATIENCE:?}"
    );
    let left = entries(&work);
    assert_eq!(
        left.len(),
        2,
        "test file and lock survive a SIGKILL: {left:?}"
    );
    let o = bin()
        .env("IOLAB_STATE_DIR", &registry)
        .args(["run", "--target", s(&d.path().join("missing"))])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("cleaned up after an iolab process that was killed"),
        "{err}"
    );
    for p in &left {
        assert!(err.contains(&format!("removed {}", p.display())), "{err}");
    }
    assert!(entries(&work).is_empty(), "{:?}", entries(&work));
    assert!(entries(&registry).is_empty(), "{:?}", entries(&registry));
}

#[test]
fn signals_during_files() {
    for sig in SIGNALS {
        let (d, work) = work_dir();
        let args = long_files_run(&work);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        signal_mid_run(&args, &work, &d.path().join("out"), sig, false);
    }
}

#[test]
fn sigkill_during_files_saturate_and_trace_is_cleaned_by_the_next_start() {
    let (_d, work) = work_dir();
    let args = long_files_run(&work);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    sigkill_then_next_start_cleans(&[&args[..], &["--no-save"]].concat(), &work);

    let (_d, work) = work_dir();
    sigkill_then_next_start_cleans(
        &[
            "saturate",
            "--target",
            s(&work),
            "--rw",
            "randread",
            "--size",
            "8M",
            "--latency-limit",
            "1h",
            "--step-duration",
            "5s",
            "--no-save",
        ],
        &work,
    );

    let (d, work) = work_dir();
    let wl = d.path().join("slow.toml");
    std::fs::write(&wl, SLOW_TRACE).unwrap();
    sigkill_then_next_start_cleans(
        &["trace", "run", s(&wl), "--target", s(&work), "--no-save"],
        &work,
    );
}

#[test]
fn signals_during_copy() {
    for sig in SIGNALS {
        let (d, work) = work_dir();
        let ram = d.path().join("ram");
        std::fs::create_dir(&ram).unwrap();
        let args = long_copy_run(&work, &ram);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        signal_mid_run(&args, &work, &d.path().join("out"), sig, false);
        assert!(entries(&ram).is_empty(), "{sig}: {:?}", entries(&ram));
    }
}

#[test]
fn sigkill_during_copy_is_cleaned_by_the_next_start() {
    let (d, work) = work_dir();
    let ram = d.path().join("ram");
    std::fs::create_dir(&ram).unwrap();
    let args = long_copy_run(&work, &ram);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    sigkill_then_next_start_cleans(&[&args[..], &["--no-save"]].concat(), &work);
    assert!(entries(&ram).is_empty(), "{:?}", entries(&ram));
}

#[test]
fn sighup_tears_the_matrix_down() {
    use matrix_support::{Area, can_run, start_long};
    if !can_run("sighup_tears_the_matrix_down") {
        return;
    }
    let area = Area::new();
    let (child, _) = start_long(&area);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGHUP,
    )
    .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(129), "{}", stderr(&o));
    area.assert_clean();
    let doc = area.result();
    assert_eq!(doc.status, "interrupted");
    let why = doc.configurations[0].reason.clone().unwrap_or_default();
    assert!(why.contains("SIGHUP"), "{why}");
}

/// A second Ctrl-C a second or more after the first exits at once: it says so (the prompt
/// came back without a word), and what the run had claimed (here `trace record`'s hidden
/// temporary trace beside `-o`, which no registry knew) is removed by the next start. The
/// recorded program ignores SIGINT (iolab passes a signal it alone received on to it after a
/// second), so the first stop waits for it: the moment a second signal is the only way out.
#[test]
fn a_second_signal_later_exits_at_once_says_so_and_the_next_start_cleans_up() {
    let test = "a_second_signal_later_exits_at_once_says_so_and_the_next_start_cleans_up";
    if !common::tool_or_skip(test, "strace", "strace") {
        return;
    }
    let d = tempdir();
    let registry = d.path().join("registry");
    let out_dir = d.path().join("traces");
    std::fs::create_dir(&out_dir).unwrap();
    let trace = out_dir.join("t.trace");
    let err_file = d.path().join("stderr");
    let mut child = bin()
        .env("IOLAB_STATE_DIR", &registry)
        .args(["trace", "record", "--recorder", "strace", "-o", s(&trace)])
        .args(["--", "sh", "-c", "trap '' INT; sleep 20"])
        .stdout(Stdio::null())
        // A file, not a pipe: the orphaned program keeps a pipe open until it ends.
        .stderr(std::fs::File::create(&err_file).unwrap())
        .spawn()
        .unwrap();
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let manifest = registry.join(format!("owned-{}.json", child.id()));
    let claimed = wait_until(PATIENCE, || {
        manifest_paths(&manifest)
            .iter()
            .any(|p| p.extension().is_some_and(|e| e == "tmp"))
    });
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let t0 = std::time::Instant::now();
    let status = child.wait().unwrap();
    let said = std::fs::read_to_string(&err_file).unwrap();
    assert!(
        claimed,
        "the temporary trace was not recorded in the registry"
    );
    assert_eq!(status.code(), Some(130), "{said}");
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(10),
        "waited for the program after a second signal"
    );
    assert!(
        said.contains("iolab: stopped at once (a second signal)"),
        "{said}"
    );
    let left = entries(&out_dir);
    assert_eq!(left.len(), 1, "the claimed temporary trace: {left:?}");
    let next = bin()
        .env("IOLAB_STATE_DIR", &registry)
        .args(["run", "--target", s(&d.path().join("missing"))])
        .output()
        .unwrap();
    let err = stderr(&next);
    assert!(
        err.contains(&format!("removed {}", left[0].display())),
        "{err}"
    );
    assert!(entries(&out_dir).is_empty(), "{:?}", entries(&out_dir));
    // The orphaned `sleep 20` (strace's child) is the user's program: left to end by itself.
}

/// A SIGKILL in the first test (nothing saved yet) left an empty `run-….json` among the
/// results for good; the next start removes that empty, never-saved file and says so.
#[test]
fn after_sigkill_in_the_first_test_the_next_start_removes_the_empty_result_file() {
    let d = tempdir();
    let work = d.path().join("work");
    let out = d.path().join("out");
    std::fs::create_dir(&work).unwrap();
    std::fs::create_dir(&out).unwrap();
    let registry = d.path().join("registry");
    // The result file, the test file and the lock recorded: the first test is under way.
    let recorded = killed_once_recorded(&registry, &work, &["--output", s(&out)], 3);
    assert!(recorded, "nothing recorded within {PATIENCE:?}");
    let results = entries(&out);
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(std::fs::metadata(&results[0]).unwrap().len(), 0);
    let o = bin()
        .env("IOLAB_STATE_DIR", &registry)
        .args(["run", "--target", s(&d.path().join("missing"))])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "removed the empty result file {} (no test had finished)",
            results[0].display()
        )),
        "{err}"
    );
    assert!(entries(&out).is_empty(), "{:?}", entries(&out));
    assert!(entries(&work).is_empty(), "{:?}", entries(&work));
}

/// A SIGKILL after the first test was saved left the result file at `"status": "running"`
/// for good: `iolab compare` and `report` showed it as still running. The next start marks
/// it `killed` in the same line that names what it cleaned, and keeps its tests.
#[test]
fn after_sigkill_mid_run_the_next_start_marks_the_result_killed() {
    let d = tempdir();
    let work = d.path().join("work");
    let out = d.path().join("r.json");
    std::fs::create_dir(&work).unwrap();
    let registry = d.path().join("registry");
    // The preset's tests of 200 ms each: killed once the first one is in the file.
    let mut child = bin()
        .env("IOLAB_STATE_DIR", &registry)
        .env("IOLAB_NO_HISTORY", "1")
        .args(["run", "--target", s(&work), "--size", "8M"])
        .args(["--duration", "200ms", "--ramp", "0", "--repeat", "1"])
        .args(["-q", "--output", s(&out)])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let saved = wait_until(PATIENCE, || {
        std::fs::read_to_string(&out).is_ok_and(|t| t.contains("\"runs\""))
    });
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(saved, "no test saved within {PATIENCE:?}");
    let before: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    if before["status"] != "running" {
        // The whole preset finished before the kill (a very fast machine): nothing to mark.
        eprintln!("SKIP: the run ended before the kill ({})", before["status"]);
        return;
    }
    let o = bin()
        .env("IOLAB_STATE_DIR", &registry)
        .args(["run", "--target", s(&d.path().join("missing"))])
        .output()
        .unwrap();
    let err = stderr(&o);
    let line = err
        .lines()
        .find(|l| l.contains("cleaned up after an iolab process that was killed"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        line.contains(&format!("marked {} as killed", out.display())),
        "{err}"
    );
    let after: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(after["status"], "killed");
    assert_eq!(after["tests"], before["tests"], "the saved tests are kept");
    let o = bin().args(["compare", s(&out), s(&out)]).output().unwrap();
    let text = format!("{}{}", common::stdout(&o), stderr(&o));
    assert!(
        text.contains("is a run killed before it finished"),
        "{text}"
    );
    assert!(!text.contains("still running"), "{text}");
    assert!(entries(&work).is_empty(), "{:?}", entries(&work));
}

//! Interruption and locking: SIGINT/SIGTERM/SIGHUP keep the finished tests and remove the
//! rest; a second run on the same target is refused.

use super::*;

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
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let results = d.path().join("iolab-results");
    // Generous: it costs nothing when the first test is saved after a second or two.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
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
        assert!(
            stderr.contains(&format!(
                "iolab: interrupted by {sig}; partial results saved"
            )),
            "{sig}: {stderr}"
        );
        // The table on stdout ends by saying it was interrupted, with no "error:" line (it
        // ended "error: interrupted by SIGINT", an error line in a table piped to a file):
        // stderr's line above says it.
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.ends_with(&format!(
                "interrupted by {sig}: a partial result (what was measured before it)\n"
            )),
            "{sig}: {stdout}"
        );
        assert!(!stdout.contains("error:"), "{sig}: {stdout}");
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

/// Ctrl-C in the first test: the line said "partial results saved" of a file that holds
/// no measurement (the stopped test has no finished run; `iolab age` stopped midway had no
/// test at all). It now says nothing measured was saved and what the file holds.
#[test]
fn a_stop_in_the_first_test_says_nothing_measured_was_saved() {
    let d = tempdir();
    let child = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .current_dir(d.path())
        .args([
            "run",
            "--rw",
            "read",
            "--duration",
            "60s",
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
    // The test file is made once the run has begun (after the result file is claimed).
    let started = wait_until(std::time::Duration::from_secs(120), || {
        test_file_in(d.path()).is_some()
    });
    assert!(started, "the run never made its test file");
    std::thread::sleep(std::time::Duration::from_millis(500));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains(
            "iolab: interrupted by SIGINT; no test had finished: nothing measured to save ("
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("partial results saved"), "{stderr}");
    let files = entries(&d.path().join("iolab-results"));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    assert_eq!(doc["status"], "interrupted");
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
            // Long: it is interrupted once the second run was refused; the length only keeps
            // it holding the lock on a machine many times slower than expected.
            "--duration",
            "60s",
            "--ramp",
            "0",
            "--size",
            "8M",
            "--repeat",
            "1",
            "--no-save",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The lock is taken before the signal handlers are in place; the test file is made
    // after. Waiting for the test file means the SIGINT below meets a run that can clean up.
    let lock = d.path().join(".iolab.lock");
    let running = || lock.exists() && test_file_in(d.path()).is_some();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !running() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(
        running(),
        "the first run took its lock and made its file within 120 s"
    );
    let out = iolab_in(
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
    let first = child.wait_with_output().unwrap();
    assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));
    // With --no-save nothing is kept, and it says so; a stopped test is not "failed".
    let (stdout, stderr) = (
        String::from_utf8_lossy(&first.stdout),
        String::from_utf8_lossy(&first.stderr),
    );
    assert_eq!(first.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("iolab: interrupted by SIGINT; nothing saved (--no-save)"),
        "{stderr}"
    );
    assert!(!stderr.contains("partial results saved"), "{stderr}");
    assert!(!stdout.contains("(failed)"), "{stdout}");
}

/// Wait (up to 60 s) until the stderr file `err` of a [`deep_queue_run`] says its test has
/// started, then a second more, so that its queue is full.
fn deep_queue_started(err: &std::path::Path) {
    let read = || std::fs::read_to_string(err).unwrap_or_default();
    let started = wait_until(std::time::Duration::from_secs(60), || {
        read().contains("RND4K Q64T1 read [1/1] ...")
    });
    assert!(started, "{}", read());
    std::thread::sleep(std::time::Duration::from_secs(1));
}

/// `iolab run` of 4 KiB random reads 64 deep for up to 60 s on `dev`, one run, no ramp (a
/// queue that takes seconds to drain on a device capped at 20 IOPS), then `out`.
fn deep_queue_run<'a>(dev: &'a str, out: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "--target",
        dev,
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--iodepth",
        "64",
        "--duration",
        "60s",
        "--ramp",
        "0",
        "--repeat",
        "1",
    ];
    args.extend_from_slice(out);
    args
}

/// Ctrl-C during a deep queue on a slow device: iolab must wait for the requests in flight
/// (the device cannot take them back), which at 64 in flight on a device capped at 20 IOPS
/// takes about 3 s, enforced by the kernel's throttle whatever the machine. It used to wait
/// without a word, so the user thought it hung; now a line says at once that it is stopping
/// and what it waits for, before the process ends.
#[test]
fn a_stop_says_at_once_what_it_waits_for() {
    use std::io::BufRead;
    let test = "a_stop_says_at_once_what_it_waits_for";
    let Some((cg, lo, _dir)) = super::accuracy::capped_loop(test, "read_iops_device", 20) else {
        return;
    };
    let dev = lo.device.to_str().unwrap();
    let mut child = cg
        .command(&deep_queue_run(dev, &["--no-save"]))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let mut seen = Vec::new();
    // The test has started (its progress line), then a second to fill the queue.
    while let Ok(l) = rx.recv_timeout(std::time::Duration::from_secs(60)) {
        let started = l.contains("RND4K Q64T1 read [1/1] ...");
        seen.push(l);
        if started {
            break;
        }
    }
    std::thread::sleep(std::time::Duration::from_secs(1));
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    // The notice comes while the requests drain: the process has not ended yet.
    let mut notice = None;
    while let Ok(l) = rx.recv_timeout(std::time::Duration::from_secs(30)) {
        let is_notice = l.starts_with("iolab: stopping (SIGINT): waiting for the ");
        let running = child.try_wait().unwrap().is_none();
        seen.push(l.clone());
        if is_notice {
            notice = Some((l, running));
            break;
        }
    }
    let status = child.wait().unwrap();
    reader.join().unwrap();
    seen.extend(rx.try_iter());
    let all = seen.join("\n");
    let (line, running) = notice.unwrap_or_else(|| panic!("no stop notice:\n{all}"));
    assert!(running, "the notice came only after the end:\n{all}");
    // 64 in flight at most (some may have completed as it was read).
    let n: u64 = line["iolab: stopping (SIGINT): waiting for the ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap_or_else(|_| panic!("{line}"));
    assert!((1..=64).contains(&n), "{line}");
    assert!(line.contains("Ctrl-C again"), "{line}");
    assert_eq!(status.code(), Some(130), "{all}");
    assert!(all.contains("iolab: interrupted by SIGINT"), "{all}");
}

/// A double Ctrl-C in a run's first test (64 requests draining at 20 IOPS, about 3 s by the
/// kernel's throttle, so the second signal a second and a half later is a second stop): the
/// result file claimed at the start stayed behind empty (0 bytes) and the line said it kept
/// its last save. Now nothing is left in the result directory and the line says nothing was
/// saved. An existing `--output FILE.json` was not mentioned at all: it keeps what it held,
/// and the line says so.
#[test]
fn a_second_signal_in_the_first_test_leaves_no_empty_result_file() {
    let test = "a_second_signal_in_the_first_test_leaves_no_empty_result_file";
    let Some((cg, lo, dir)) = super::accuracy::capped_loop(test, "read_iops_device", 20) else {
        return;
    };
    let dev = lo.device.to_str().unwrap();
    let err = dir.path().join("stderr");
    // The second stop of a run writing to `output`: its exit code and stderr.
    let stopped_twice = |output: &std::path::Path| {
        let mut child = cg
            .command(&deep_queue_run(dev, &["--output", s(output)]))
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .unwrap();
        let read = || std::fs::read_to_string(&err).unwrap_or_default();
        deep_queue_started(&err);
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1500));
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
        let status = child.wait().unwrap();
        let all = read();
        assert_eq!(status.code(), Some(130), "{all}");
        assert!(all.contains("stopped at once (a second signal)"), "{all}");
        all
    };

    let results = dir.path().join("results");
    let all = stopped_twice(&results);
    assert!(
        all.contains("nothing saved (no test had finished): the empty result file"),
        "{all}"
    );
    assert_eq!(entries(&results), Vec::<std::path::PathBuf>::new(), "{all}");

    let existing = dir.path().join("kept.json");
    std::fs::write(&existing, "{\"earlier\": true}\n").unwrap();
    let all = stopped_twice(&existing);
    assert!(
        all.contains(&format!(
            "nothing saved (no test had finished): {} still holds what it held before this run",
            existing.display()
        )),
        "{all}"
    );
    assert_eq!(
        std::fs::read_to_string(&existing).unwrap(),
        "{\"earlier\": true}\n"
    );
    assert!(
        !model_temp(&existing).exists(),
        "the save's temporary copy is removed"
    );
}

/// The hidden temporary copy a save writes beside `path` (model::temp_path).
fn model_temp(path: &std::path::Path) -> std::path::PathBuf {
    path.with_file_name(format!(
        ".{}.tmp",
        path.file_name().unwrap().to_str().unwrap()
    ))
}

/// `iolab serve` stops its tests with SIGINT and waits a minute; a test still draining its
/// I/Os then (a deep queue on a slow device) saw its parent gone and sent itself a second
/// SIGINT, which ends a run at once, without cleanup. Here the parent is a shell, killed
/// while the test drains 64 requests at 20 IOPS (about 3 s, the kernel's throttle): the
/// test must finish its stop as the first signal asked.
#[test]
fn a_test_stopping_when_its_parent_goes_finishes_its_stop() {
    let test = "a_test_stopping_when_its_parent_goes_finishes_its_stop";
    let Some((cg, lo, dir)) = super::accuracy::capped_loop(test, "read_iops_device", 20) else {
        return;
    };
    let dev = lo.device.to_str().unwrap();
    let (err, pidfile) = (dir.path().join("stderr"), dir.path().join("pid"));
    // The shell moves into the cgroup, starts iolab as its child watching it, and waits.
    let mut parent = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "echo $$ > {procs}; IOLAB_STOP_WITH_PARENT=$$ \"$0\" \"$@\" 2> {err} & echo $! > {pid}; wait",
            procs = cg.procs().display(),
            err = err.display(),
            pid = pidfile.display()
        ))
        .arg(env!("CARGO_BIN_EXE_iolab"))
        .args([
            "run", "--target", dev, "--rw", "randread", "--bs", "4k", "--iodepth", "64",
            "--duration", "60s", "--ramp", "0", "--repeat", "1", "--no-save",
        ])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let read = || std::fs::read_to_string(&err).unwrap_or_default();
    deep_queue_started(&err);
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let pid = nix::unistd::Pid::from_raw(pid);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    // The parent goes a second and a half later, while the 64 requests still drain.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    parent.kill().unwrap();
    parent.wait().unwrap();
    let gone = wait_until(std::time::Duration::from_secs(60), || {
        !std::path::Path::new(&format!("/proc/{pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.contains(") Z "))
    });
    let all = read();
    assert!(gone, "still running: {all}");
    assert!(!all.contains("stopped at once"), "{all}");
    assert!(all.contains("iolab: interrupted by SIGINT"), "{all}");
}

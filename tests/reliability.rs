//! Faults injected under a running iolab (as root, on loop devices and scratch file systems it
//! made itself): no space left, the file system turning read-only, the target directory
//! removed, a device returning read errors, signals during every long-running subcommand.
//! Each must end with exit 1 (or 128+signal), a clear message, the results measured so far
//! saved, and nothing of iolab's left behind where removal is possible.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use iolab::fs::scratch::{is_root, scratch_or_skip};

#[path = "matrix_support/mod.rs"]
mod matrix_support;
use iolab::model::ResultDoc;

const BIN: &str = env!("CARGO_BIN_EXE_iolab");

fn tempdir() -> tempfile::TempDir {
    // The build dir's file system, where O_DIRECT works (unlike a tmpfs /tmp).
    tempfile::Builder::new()
        .prefix("iolab-rel-")
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

/// Entries of `dir` that iolab made (its test files, locks, trees), for "nothing left" checks.
fn iolab_leftovers(dir: &Path) -> Vec<PathBuf> {
    entries(dir)
        .into_iter()
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy().to_string();
            n.contains("iolab")
        })
        .collect()
}

fn spawn(args: &[&str], cwd: &Path) -> Child {
    Command::new(BIN)
        .current_dir(cwd)
        .args(args)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start iolab")
}

/// The one result document in `out`, if it is there and readable.
fn result_doc(out: &Path) -> Option<ResultDoc> {
    entries(out)
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .find_map(|p| ResultDoc::read(p).ok())
}

/// Wait until the result file in `out` holds at least `n` tests (or the child exited).
fn wait_for_tests(child: &mut Child, out: &Path, n: usize) -> bool {
    let deadline = Instant::now() + Duration::from_secs(90);
    while Instant::now() < deadline {
        if result_doc(out).is_some_and(|d| d.tests.len() >= n) {
            return true;
        }
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn stderr_of(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn enospc_mid_run_stops_with_the_amount_written_and_keeps_results() {
    // btrfs copies on write: overwriting the preallocated, prefilled test file needs new
    // space, so a nearly full btrfs runs out in the middle of the write test.
    let Some(fs) = scratch_or_skip(
        "enospc_mid_run_stops_with_the_amount_written_and_keeps_results",
        "btrfs",
        128 << 20,
        &["--mixed"],
        "",
    ) else {
        return;
    };
    let d = tempdir();
    let out = d.path().join("out");
    let child = spawn(
        &[
            "run",
            "--target",
            s(fs.path()),
            "--preset",
            "real",
            "--size",
            "100M",
            "--io-size",
            "64M",
            "--ramp",
            "0",
            "--repeat",
            "1",
            "--output",
            s(&out),
        ],
        d.path(),
    );
    let o = child.wait_with_output().unwrap();
    let err = stderr_of(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("no space left on"), "{err}");
    assert!(err.contains("MB written"), "{err}");
    let doc = result_doc(&out).expect("result file saved");
    assert_eq!(doc.status, "failed");
    assert!(doc.error.as_deref().unwrap().contains("no space left"));
    // The two read tests before the write test were measured and kept.
    let measured: Vec<_> = doc.tests.iter().filter(|t| !t.runs.is_empty()).collect();
    assert!(measured.len() >= 2, "{:?}", doc.tests);
    assert!(doc.tests.last().unwrap().error.is_some());
    assert!(
        iolab_leftovers(fs.path()).is_empty(),
        "{:?}",
        entries(fs.path())
    );
}

#[test]
fn file_system_turning_read_only_mid_run() {
    let Some(fs) = scratch_or_skip(
        "file_system_turning_read_only_mid_run",
        "ext4",
        64 << 20,
        &[],
        "errors=remount-ro",
    ) else {
        return;
    };
    let dev = fs.loop_dev.as_ref().unwrap().name();
    let trigger = PathBuf::from(format!("/sys/fs/ext4/{dev}/trigger_fs_error"));
    if !trigger.exists() {
        eprintln!(
            "SKIPPED file_system_turning_read_only_mid_run: no {}",
            trigger.display()
        );
        return;
    }
    let d = tempdir();
    let out = d.path().join("out");
    let mut child = spawn(
        &[
            "run",
            "--target",
            s(fs.path()),
            "--preset",
            "real",
            "--size",
            "16M",
            "--duration",
            "1s",
            "--ramp",
            "0",
            "--repeat",
            "1",
            "--output",
            s(&out),
        ],
        d.path(),
    );
    assert!(wait_for_tests(&mut child, &out, 1), "first test not saved");
    // ext4 with errors=remount-ro turns read-only on an error, as on a failing disk.
    std::fs::write(&trigger, "iolab reliability test").unwrap();
    let o = child.wait_with_output().unwrap();
    let err = stderr_of(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("Read-only file system"), "{err}");
    let doc = result_doc(&out).expect("result file saved");
    assert_eq!(doc.status, "failed");
    assert!(!doc.tests[0].runs.is_empty(), "the first test was kept");
    // Its test file cannot be removed from a read-only file system: iolab says so.
    assert!(err.contains("could not remove"), "{err}");
    assert!(err.contains("iolab-test-"), "{err}");
}

#[test]
fn target_directory_removed_mid_run() {
    let d = tempdir();
    let work = d.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let out = d.path().join("out");
    let mut child = spawn(
        &[
            "run",
            "--target",
            s(&work),
            "--preset",
            "real",
            "--size",
            "8M",
            "--duration",
            "1s",
            "--ramp",
            "0",
            "--repeat",
            "1",
            "--output",
            s(&out),
        ],
        d.path(),
    );
    assert!(wait_for_tests(&mut child, &out, 1), "first test not saved");
    std::fs::remove_dir_all(&work).unwrap();
    let o = child.wait_with_output().unwrap();
    let err = stderr_of(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("is gone") && err.contains("removed during the run"),
        "{err}"
    );
    let doc = result_doc(&out).expect("result file saved");
    assert_eq!(doc.status, "failed");
    assert!(!doc.tests[0].runs.is_empty());
    assert!(
        !work.exists(),
        "iolab does not recreate what the user removed"
    );
}

#[test]
fn read_errors_from_a_device_whose_backing_file_shrank() {
    if !is_root() {
        eprintln!("SKIPPED read_errors_from_a_device_whose_backing_file_shrank: needs root");
        return;
    }
    let d = tempdir();
    let image = d.path().join("disk.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let lo = iolab::fs::loopdev::LoopDevice::attach(&image, false).unwrap();
    let dev = lo.device.display().to_string();
    let out = d.path().join("out");
    let mut child = spawn(
        &[
            "run",
            "--target",
            &dev,
            "--allow-destroy",
            &dev,
            "--preset",
            "real",
            "--size",
            "32M",
            "--duration",
            "1s",
            "--ramp",
            "0",
            "--repeat",
            "1",
            "--output",
            s(&out),
        ],
        d.path(),
    );
    assert!(wait_for_tests(&mut child, &out, 1), "first test not saved");
    // The loop driver fails reads past the end of its (now shorter) backing file.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&image)
        .unwrap()
        .set_len(1 << 20)
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let err = stderr_of(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("Input/output error") || err.contains("short read"),
        "{err}"
    );
    assert!(err.contains(&dev), "the message names the device: {err}");
    let doc = result_doc(&out).expect("result file saved");
    assert_eq!(doc.status, "failed");
    assert!(!doc.tests[0].runs.is_empty(), "the first test was kept");
    drop(lo);
}

/// Start `args` (with `--output out`), wait until a test was saved (`saves_each_test`) or
/// iolab's work tree appeared in `work`, send `sig`; check the exit code, the saved partial
/// result, and that `work` holds nothing of iolab's.
fn signal_mid_run(
    args: &[&str],
    work: &Path,
    out: &Path,
    sig: nix::sys::signal::Signal,
    saves_each_test: bool,
) {
    let mut full: Vec<&str> = args.to_vec();
    full.extend(["--output", s(out)]);
    let mut child = spawn(&full, work.parent().unwrap());
    let saved = if saves_each_test {
        wait_for_tests(&mut child, out, 1)
    } else {
        let deadline = Instant::now() + Duration::from_secs(60);
        while iolab_leftovers(work).is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        // Into the measured part, past the setup.
        std::thread::sleep(Duration::from_millis(500));
        !iolab_leftovers(work).is_empty()
    };
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), sig).unwrap();
    let o = child.wait_with_output().unwrap();
    let err = stderr_of(&o);
    assert!(saved, "{args:?}: nothing saved before {sig}: {err}");
    let code = match sig {
        nix::sys::signal::Signal::SIGTERM => 143,
        nix::sys::signal::Signal::SIGHUP => 129,
        _ => 130,
    };
    assert_eq!(o.status.code(), Some(code), "{args:?} {sig}: {err}");
    assert!(err.contains(sig.as_str()), "{err}");
    let doc = result_doc(out).expect("result file saved");
    assert_eq!(doc.status, "interrupted", "{args:?} {sig}");
    assert!(!saves_each_test || !doc.tests.is_empty());
    assert!(
        iolab_leftovers(work).is_empty(),
        "{args:?} {sig}: left {:?}",
        entries(work)
    );
}

const SIGNALS: [nix::sys::signal::Signal; 3] = [
    nix::sys::signal::Signal::SIGINT,
    nix::sys::signal::Signal::SIGTERM,
    nix::sys::signal::Signal::SIGHUP,
];

#[test]
fn signals_during_saturate() {
    for sig in SIGNALS {
        let d = tempdir();
        let work = d.path().join("work");
        std::fs::create_dir(&work).unwrap();
        signal_mid_run(
            &[
                "saturate",
                "--target",
                s(&work),
                "--rw",
                "randread",
                "--size",
                "8M",
                "--max-depth",
                "64",
                "--latency-limit",
                "1h",
                "--step-duration",
                "300ms",
                "--ramp",
                "0",
            ],
            &work,
            &d.path().join("out"),
            sig,
            true,
        );
    }
}

/// A trace workload that runs for a minute unless stopped.
const SLOW_TRACE: &str = "[[stream]]\nname = \"slow\"\nfiles = 4\nfile_size = \"64KiB\"\nmix = { stat = 1 }\nthink_time = \"10ms\"\nduration = \"60s\"\n";

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

#[test]
fn after_sigkill_the_next_start_removes_the_leftovers_and_says_so() {
    let d = tempdir();
    let work = d.path().join("work");
    std::fs::create_dir(&work).unwrap();
    // A registry of our own: no concurrent iolab start may clean up before ours does.
    let registry = d.path().join("registry");
    let mut child = Command::new(BIN)
        .env("IOLAB_STATE_DIR", &registry)
        .args([
            "run",
            "--target",
            s(&work),
            "--rw",
            "randread",
            "--size",
            "8M",
        ])
        .args([
            "--duration",
            "60s",
            "--ramp",
            "0",
            "--repeat",
            "1",
            "--no-save",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let manifest = registry.join(format!("owned-{}.json", child.id()));
    let deadline = Instant::now() + Duration::from_secs(60);
    // The test file is recorded once it exists; wait for both it and the lock.
    while Instant::now() < deadline
        && !std::fs::read_to_string(&manifest).is_ok_and(|m| m.matches("\"path\"").count() >= 2)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let left = entries(&work);
    assert_eq!(
        left.len(),
        2,
        "test file and lock survive a SIGKILL: {left:?}"
    );
    let o = Command::new(BIN)
        .env("IOLAB_STATE_DIR", &registry)
        .args(["run", "--target", s(&d.path().join("missing"))])
        .output()
        .unwrap();
    let err = stderr_of(&o);
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

/// SIGKILL `args` once iolab's work tree is in `work` (and in its manifest); the next start
/// must remove everything iolab had created there and name it.
fn sigkill_then_next_start_cleans(args: &[&str], work: &Path) {
    let d = work.parent().unwrap();
    let registry = d.join("registry");
    let mut child = Command::new(BIN)
        .current_dir(d)
        .env("IOLAB_STATE_DIR", &registry)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let manifest = registry.join(format!("owned-{}.json", child.id()));
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline
        && !(iolab_leftovers(work).len() >= 2
            && std::fs::read_to_string(&manifest).is_ok_and(|m| m.matches("\"path\"").count() >= 2))
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();
    let left = iolab_leftovers(work);
    assert!(!left.is_empty(), "{args:?}: nothing left after SIGKILL");
    let o = Command::new(BIN)
        .env("IOLAB_STATE_DIR", &registry)
        .args(["run", "--target", s(&d.join("missing"))])
        .output()
        .unwrap();
    let err = stderr_of(&o);
    assert!(
        err.contains("cleaned up after an iolab process that was killed"),
        "{args:?}: {err}"
    );
    for p in &left {
        assert!(err.contains(&format!("removed {}", p.display())), "{err}");
    }
    assert!(iolab_leftovers(work).is_empty(), "{:?}", entries(work));
}

/// `iolab files` creating empty files for a long time in `work`.
fn long_files_run(work: &Path) -> Vec<String> {
    [
        "files",
        "--target",
        s(work),
        "--sizes",
        "0",
        "--files-per-portion",
        "2000000",
        "--portions",
        "1",
        "--passes",
        "1",
        "--repeat",
        "1",
        "--no-room-check",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect()
}

fn work_dir() -> (tempfile::TempDir, PathBuf) {
    let d = tempdir();
    let work = d.path().join("work");
    std::fs::create_dir(&work).unwrap();
    (d, work)
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
fn a_symlink_planted_in_the_files_work_dir_cannot_make_it_delete_outside() {
    let (d, work) = work_dir();
    let outside = d.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("sentinel"), b"keep me").unwrap();
    let args = long_files_run(&work);
    let child = spawn(
        &[
            &args.iter().map(String::as_str).collect::<Vec<_>>()[..],
            &["--no-save"],
        ]
        .concat(),
        d.path(),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    let root = loop {
        let r = entries(&work)
            .into_iter()
            .find(|p| p.is_dir() && p.file_name().unwrap().to_string_lossy().contains("iolab"));
        if let Some(r) = r {
            break r;
        }
        assert!(Instant::now() < deadline, "no work dir appeared");
        std::thread::sleep(Duration::from_millis(10));
    };
    std::thread::sleep(Duration::from_millis(200));
    // A link to the outside directory inside iolab's tree, and one inside each of its subdirs.
    std::os::unix::fs::symlink(&outside, root.join("planted")).unwrap();
    for sub in entries(&root)
        .into_iter()
        .filter(|p| p.is_dir() && !p.is_symlink())
    {
        let _ = std::os::unix::fs::symlink(&outside, sub.join("planted"));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr_of(&o));
    assert!(std::fs::read(outside.join("sentinel")).unwrap() == b"keep me");
    assert!(iolab_leftovers(&work).is_empty(), "{:?}", entries(&work));
}

/// A directory whose name has a space, a newline and bytes that are not UTF-8.
fn odd_dir(parent: &Path) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    let p = parent.join(std::ffi::OsStr::from_bytes(b"odd name\nline \xff\xfe"));
    std::fs::create_dir(&p).unwrap();
    p
}

#[test]
fn odd_path_names_work_for_files_and_trace() {
    let d = tempdir();
    let odd = odd_dir(d.path());
    let out = odd.join("results");
    let o = Command::new(BIN)
        .arg("files")
        .arg("--target")
        .arg(&odd)
        .args(["--sizes", "1,cluster+1", "--files-per-portion", "20"])
        .args(["--portions", "2", "--passes", "1", "--repeat", "1"])
        .arg("--output")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr_of(&o));
    assert_eq!(entries(&odd), vec![out.clone()], "only the results remain");
    assert!(result_doc(&out).is_some_and(|d| d.status == "complete" && !d.tests.is_empty()));

    let wl = d.path().join("w.toml");
    std::fs::write(
        &wl,
        "[[stream]]\nname = \"s\"\nfiles = 3\nfile_size = \"4K\"\nmix = { read = 1 }\nexisting = true\nduration = \"200ms\"\n",
    )
    .unwrap();
    let o = Command::new(BIN)
        .args(["trace", "run"])
        .arg(&wl)
        .arg("--target")
        .arg(&odd)
        .args(["--repeat", "1", "--no-save"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr_of(&o));
    assert_eq!(entries(&odd), vec![out]);
    // A workload file name that is not UTF-8 is refused by the command line parser, clearly.
    let bad = odd.join("w.toml");
    std::fs::copy(&wl, &bad).unwrap();
    let o = Command::new(BIN)
        .args(["trace", "run"])
        .arg(&bad)
        .arg("--target")
        .arg(d.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr_of(&o));
    assert!(stderr_of(&o).contains("invalid UTF-8"), "{}", stderr_of(&o));
}

/// `iolab copy` of a generated tree, repeated long enough to be interrupted.
fn long_copy_run(work: &Path, ram: &Path) -> Vec<String> {
    copy_run(work, ram, "0.2")
}

fn copy_run(work: &Path, ram: &Path, scale: &str) -> Vec<String> {
    [
        "copy",
        "--dataset",
        "source-tree",
        "--scale",
        scale,
        "--repeat",
        "20",
        "-t",
        s(work),
        "--ram-dir",
        s(ram),
        "-q",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect()
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
fn a_second_copy_or_run_on_the_same_target_is_refused() {
    let (d, work) = work_dir();
    let ram = d.path().join("ram");
    std::fs::create_dir(&ram).unwrap();
    let args = long_copy_run(&work, &ram);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let child = spawn(&[&args[..], &["--no-save"]].concat(), d.path());
    let deadline = Instant::now() + Duration::from_secs(60);
    while !work.join(".iolab.lock").exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let o = Command::new(BIN)
        .args(&args)
        .arg("--no-save")
        .output()
        .unwrap();
    let err = stderr_of(&o);
    // The lock is per target, whatever the subcommand.
    let o2 = Command::new(BIN)
        .args([
            "run",
            "--target",
            s(&work),
            "--duration",
            "100ms",
            "--no-save",
        ])
        .output()
        .unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let _ = child.wait_with_output();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("another iolab run"), "{err}");
    assert_eq!(o2.status.code(), Some(2), "{}", stderr_of(&o2));
    assert!(stderr_of(&o2).contains("another iolab run"));
    assert!(iolab_leftovers(&work).is_empty(), "{:?}", entries(&work));
}

#[test]
fn a_symlink_planted_in_the_copy_work_dir_cannot_make_it_delete_outside() {
    let (d, work) = work_dir();
    let ram = d.path().join("ram");
    std::fs::create_dir(&ram).unwrap();
    let outside = d.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("sentinel"), b"keep me").unwrap();
    let args = long_copy_run(&work, &ram);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let child = spawn(&[&args[..], &["--no-save"]].concat(), d.path());
    let deadline = Instant::now() + Duration::from_secs(60);
    let root = loop {
        let r = entries(&work)
            .into_iter()
            .find(|p| p.is_dir() && p.file_name().unwrap().to_string_lossy().contains("iolab"));
        if let Some(r) = r {
            break r;
        }
        assert!(Instant::now() < deadline, "no work dir appeared");
        std::thread::sleep(Duration::from_millis(10));
    };
    std::thread::sleep(Duration::from_millis(300));
    std::os::unix::fs::symlink(&outside, root.join("planted")).unwrap();
    for sub in entries(&root)
        .into_iter()
        .filter(|p| p.is_dir() && !p.is_symlink())
    {
        let _ = std::os::unix::fs::symlink(&outside, sub.join("planted"));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr_of(&o));
    assert!(std::fs::read(outside.join("sentinel")).unwrap() == b"keep me");
    assert!(iolab_leftovers(&work).is_empty(), "{:?}", entries(&work));
}

#[test]
fn odd_path_names_work_for_copy() {
    let d = tempdir();
    let odd = odd_dir(d.path());
    let ram_parent = d.path().join("ram");
    std::fs::create_dir(&ram_parent).unwrap();
    let ram = odd_dir(&ram_parent);
    let out = odd.join("results");
    let o = Command::new(BIN)
        .args([
            "copy",
            "--dataset",
            "source-tree",
            "--scale",
            "0.05",
            "--repeat",
            "1",
        ])
        .arg("-t")
        .arg(&odd)
        .arg("--ram-dir")
        .arg(&ram)
        .arg("--output")
        .arg(&out)
        .arg("-q")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr_of(&o));
    assert_eq!(entries(&odd), vec![out.clone()], "only the results remain");
    assert!(entries(&ram).is_empty());
    assert!(result_doc(&out).is_some_and(|d| d.status == "complete"));
}

#[test]
fn enospc_mid_copy_stops_cleans_and_keeps_what_is_not_iolabs() {
    let Some(fs) = scratch_or_skip(
        "enospc_mid_copy_stops_cleans_and_keeps_what_is_not_iolabs",
        "ext4",
        96 << 20,
        &["-m", "0"],
        "",
    ) else {
        return;
    };
    let d = tempdir();
    let ram = d.path().join("ram");
    std::fs::create_dir(&ram).unwrap();
    let out = d.path().join("out");
    // About 26 MiB, twice of which fits in the 96 MiB file system.
    let args = copy_run(fs.path(), &ram, "0.05");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = spawn(&[&args[..], &["--output", s(&out)]].concat(), d.path());
    let deadline = Instant::now() + Duration::from_secs(60);
    while !entries(fs.path()).iter().any(|p| {
        p.is_dir()
            && p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("iolab-copy-")
    }) {
        assert!(Instant::now() < deadline, "no work dir appeared");
        assert!(child.try_wait().unwrap().is_none(), "copy ended early");
        std::thread::sleep(Duration::from_millis(10));
    }
    // Another program fills the disk while iolab copies, and takes any space freed later.
    let filler = fs.path().join("someone-elses-file");
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let filling = {
        let (filler, done) = (filler.clone(), done.clone());
        std::thread::spawn(move || {
            use std::io::Write;
            let mut f = std::fs::File::create(&filler).unwrap();
            let chunk = vec![0x5au8; 64 << 10];
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                if f.write_all(&chunk).is_err() {
                    let _ = f.sync_all();
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
        })
    };
    let o = child.wait_with_output().unwrap();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    filling.join().unwrap();
    let err = stderr_of(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("full (ENOSPC)") || err.contains("No space left"),
        "{err}"
    );
    assert!(
        err.contains("stopped after") && err.contains(" MB) of "),
        "{err}"
    );
    let doc = result_doc(&out).expect("result file saved");
    assert_eq!(doc.status, "failed");
    assert!(
        filler.exists(),
        "a file iolab did not create is never deleted"
    );
    assert!(
        iolab_leftovers(fs.path()).is_empty(),
        "{:?}",
        entries(fs.path())
    );
    assert!(entries(&ram).is_empty(), "{:?}", entries(&ram));
}

#[test]
fn a_test_file_replaced_by_a_symlink_is_not_followed() {
    let (d, work) = work_dir();
    let sentinel = d.path().join("precious");
    std::fs::write(&sentinel, b"keep me").unwrap();
    let out = d.path().join("out");
    let mut child = spawn(
        &[
            "run",
            "--target",
            s(&work),
            "--preset",
            "real",
            "--size",
            "8M",
            "--duration",
            "1s",
            "--ramp",
            "0",
            "--repeat",
            "1",
            "--output",
            s(&out),
        ],
        d.path(),
    );
    assert!(wait_for_tests(&mut child, &out, 1), "first test not saved");
    let test_file = entries(&work)
        .into_iter()
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("iolab-test-")
        })
        .expect("the test file");
    std::fs::remove_file(&test_file).unwrap();
    std::os::unix::fs::symlink(&sentinel, &test_file).unwrap();
    let o = child.wait_with_output().unwrap();
    let err = stderr_of(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("replaced by a symlink"), "{err}");
    assert_eq!(
        std::fs::read(&sentinel).unwrap(),
        b"keep me",
        "never written through the link"
    );
    assert!(
        test_file.symlink_metadata().is_err(),
        "iolab's name is removed, not the link's target"
    );
}

#[test]
fn trace_files_replaced_by_symlinks_are_not_written_through() {
    let (d, work) = work_dir();
    let sentinel = d.path().join("precious");
    std::fs::write(&sentinel, b"keep me").unwrap();
    let wl = d.path().join("rw.toml");
    std::fs::write(
        &wl,
        "[[stream]]\nname = \"rw\"\nfiles = 4\nfile_size = \"64KiB\"\nmix = { read = 1, write = 1 }\nexisting = true\nthink_time = \"5ms\"\nduration = \"60s\"\n",
    )
    .unwrap();
    let child = spawn(
        &[
            "trace",
            "run",
            s(&wl),
            "--target",
            s(&work),
            "--repeat",
            "1",
            "--no-save",
        ],
        d.path(),
    );
    // Once the workload's files exist, swap every one for a link to the sentinel.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut swapped = 0;
    while swapped == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        let mut stack: Vec<PathBuf> = iolab_leftovers(&work)
            .into_iter()
            .filter(|p| p.is_dir())
            .collect();
        let mut files = Vec::new();
        while let Some(dir) = stack.pop() {
            for p in entries(&dir) {
                let ft = p.symlink_metadata().unwrap().file_type();
                if ft.is_dir() {
                    stack.push(p);
                } else if ft.is_file() {
                    files.push(p);
                }
            }
        }
        if files.len() < 4 {
            continue;
        }
        for f in files {
            // iolab may recreate a name between the two calls: then that one stays a file.
            if std::fs::remove_file(&f).is_ok() && std::os::unix::fs::symlink(&sentinel, &f).is_ok()
            {
                swapped += 1;
            }
        }
    }
    assert!(swapped > 0, "no workload file appeared");
    // It fails on the next open of a swapped file; stop it in any case after a while.
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let (exited, wait) = std::sync::mpsc::channel::<()>();
    let stopper = std::thread::spawn(move || {
        if wait.recv_timeout(Duration::from_secs(20)).is_err() {
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT);
        }
    });
    let o = child.wait_with_output().unwrap();
    let _ = exited.send(());
    let _ = stopper.join();
    let err = stderr_of(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("replaced by a symlink"), "{err}");
    assert!(
        std::fs::read(&sentinel).unwrap() == b"keep me",
        "never written through a link"
    );
    // If iolab was already cleaning up while links were being planted, what it could not
    // remove is named.
    for p in iolab_leftovers(&work) {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        assert!(
            err.contains("could not remove") && err.contains(&name),
            "{err}"
        );
    }
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
    assert_eq!(o.status.code(), Some(129), "{}", stderr_of(&o));
    area.assert_clean();
    let doc = area.result();
    assert_eq!(doc.status, "interrupted");
    let why = doc.configurations[0].reason.clone().unwrap_or_default();
    assert!(why.contains("SIGHUP"), "{why}");
}

/// Start `args` on a scratch ext4 mounted `errors=remount-ro`, force a file-system error once
/// iolab's work dir exists, and check it stops with exit 1 naming the read-only file system.
fn read_only_mid_run(test: &str, args: impl Fn(&Path, &Path) -> Vec<String>) {
    let Some(fs) = scratch_or_skip(test, "ext4", 128 << 20, &[], "errors=remount-ro") else {
        return;
    };
    let dev = fs.loop_dev.as_ref().unwrap().name();
    let trigger = PathBuf::from(format!("/sys/fs/ext4/{dev}/trigger_fs_error"));
    if !trigger.exists() {
        eprintln!("SKIPPED {test}: no {}", trigger.display());
        return;
    }
    let d = tempdir();
    let args = args(fs.path(), d.path());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = spawn(&args, d.path());
    let deadline = Instant::now() + Duration::from_secs(60);
    while !entries(fs.path())
        .iter()
        .any(|p| p.is_dir() && p.file_name().unwrap().to_string_lossy().contains("iolab"))
    {
        assert!(Instant::now() < deadline, "no work dir appeared");
        assert!(child.try_wait().unwrap().is_none(), "{test}: ended early");
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(300));
    std::fs::write(&trigger, "iolab reliability test").unwrap();
    let o = child.wait_with_output().unwrap();
    let err = stderr_of(&o);
    assert_eq!(o.status.code(), Some(1), "{test}: {err}");
    assert!(err.contains("Read-only file system"), "{test}: {err}");
    // What cannot be removed from a read-only file system is named, never left silently.
    for p in iolab_leftovers(fs.path()) {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        assert!(err.contains(&name), "{test}: {name} left silently: {err}");
    }
    let doc = result_doc(&d.path().join("out")).expect("result file saved");
    assert_eq!(doc.status, "failed");
}

#[test]
fn file_system_turning_read_only_during_files_and_copy() {
    read_only_mid_run("file_system_turning_read_only_during_files", |t, d| {
        let mut a = long_files_run(t);
        a.extend(["--output".into(), s(&d.join("out")).into()]);
        a
    });
    read_only_mid_run("file_system_turning_read_only_during_copy", |t, d| {
        let ram = d.join("ram");
        std::fs::create_dir(&ram).unwrap();
        let mut a = copy_run(t, &ram, "0.05");
        a.extend(["--output".into(), s(&d.join("out")).into()]);
        a
    });
}

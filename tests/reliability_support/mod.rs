//! Shared helpers of the reliability tests: running the binary, waiting for saved results,
//! signalling mid-run, SIGKILL then "the next start", the long runs that get interrupted.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use iolab::model::ResultDoc;

pub use crate::common::{bin, entries, s, stderr, tempdir, wait_until};

/// How long to wait for a child to reach a state (a file saved, a work dir made): generous,
/// it costs nothing when things are fast, and a loaded CI machine is never this slow.
pub const PATIENCE: Duration = Duration::from_secs(120);

/// Entries of `dir` that iolab made (its test files, locks, trees), for "nothing left" checks.
pub fn iolab_leftovers(dir: &Path) -> Vec<PathBuf> {
    entries(dir)
        .into_iter()
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy().to_string();
            n.contains("iolab")
        })
        .collect()
}

pub fn spawn(args: &[&str], cwd: &Path) -> Child {
    bin()
        .current_dir(cwd)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start iolab")
}

/// The one result document in `out`, if it is there and readable.
pub fn result_doc(out: &Path) -> Option<ResultDoc> {
    entries(out)
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .find_map(|p| ResultDoc::read(p).ok())
}

/// Wait until the result file in `out` holds at least `n` tests (or the child exited, or
/// `PATIENCE` passed); whether it does.
pub fn wait_for_tests(child: &mut Child, out: &Path, n: usize) -> bool {
    let saved = || result_doc(out).is_some_and(|d| d.tests.len() >= n);
    wait_until(PATIENCE, || saved() || child.try_wait().unwrap().is_some());
    saved()
}

/// Does iolab's work tree in `work` hold anything yet (its files, past the setup)?
pub fn work_tree_has_content(work: &Path) -> bool {
    iolab_leftovers(work)
        .iter()
        .any(|p| p.is_dir() && !entries(p).is_empty())
}

/// Start `args` (with `--output out`), wait until a test was saved (`saves_each_test`) or
/// iolab's work tree appeared in `work`, send `sig`; check the exit code, the saved partial
/// result, and that `work` holds nothing of iolab's.
pub fn signal_mid_run(
    args: &[&str],
    work: &Path,
    out: &Path,
    sig: nix::sys::signal::Signal,
    saves_each_test: bool,
) {
    signal_mid_run_times(args, work, out, sig, saves_each_test, 1)
}

/// `signal_mid_run` with the signal sent `times` times in a row, as `timeout -s INT` does
/// (to the program, then to its process group): still one stop.
pub fn signal_mid_run_times(
    args: &[&str],
    work: &Path,
    out: &Path,
    sig: nix::sys::signal::Signal,
    saves_each_test: bool,
    times: usize,
) {
    let mut full: Vec<&str> = args.to_vec();
    full.extend(["--output", s(out)]);
    let mut child = spawn(&full, work.parent().unwrap());
    let saved = if saves_each_test {
        wait_for_tests(&mut child, out, 1)
    } else {
        // Into the run, past the setup: iolab's work tree holds its files (the signal would
        // be handled as well earlier, but this is the case the test is about).
        wait_until(PATIENCE, || work_tree_has_content(work))
    };
    for _ in 0..times {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), sig).unwrap();
    }
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
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

pub const SIGNALS: [nix::sys::signal::Signal; 3] = [
    nix::sys::signal::Signal::SIGINT,
    nix::sys::signal::Signal::SIGTERM,
    nix::sys::signal::Signal::SIGHUP,
];

/// A trace workload that runs for a minute unless stopped.
pub const SLOW_TRACE: &str = "[[stream]]\nname = \"slow\"\nfiles = 4\nfile_size = \"64KiB\"\nmix = { stat = 1 }\nthink_time = \"10ms\"\nduration = \"60s\"\n";

/// SIGKILL `args` once iolab's work tree is in `work` (and in its manifest); the next start
/// must remove everything iolab had created there and name it.
pub fn sigkill_then_next_start_cleans(args: &[&str], work: &Path) {
    let d = work.parent().unwrap();
    let registry = d.join("registry");
    let mut child = bin()
        .current_dir(d)
        .env("IOLAB_STATE_DIR", &registry)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let manifest = registry.join(format!("owned-{}.json", child.id()));
    // Killed once its work tree is there and every top-level piece of it is in the manifest
    // (no sleep: the state is what counts). Each is created, then recorded: killed in
    // between, a piece would be left unnamed (a 300 ms sleep used to hide that window, seen
    // once under load for the copy's work dir). Nothing new appears at the top level later.
    let ready = wait_until(PATIENCE, || {
        let left = iolab_leftovers(work);
        let recorded = manifest_paths(&manifest);
        left.len() >= 2 && left.iter().all(|p| recorded.contains(p))
    });
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(ready, "{args:?}: no work tree recorded within {PATIENCE:?}");
    let left = iolab_leftovers(work);
    assert!(!left.is_empty(), "{args:?}: nothing left after SIGKILL");
    let o = bin()
        .env("IOLAB_STATE_DIR", &registry)
        .args(["run", "--target", s(&d.join("missing"))])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(
        err.contains("cleaned up after an iolab process that was killed"),
        "{args:?}: {err}"
    );
    for p in &left {
        assert!(err.contains(&format!("removed {}", p.display())), "{err}");
    }
    assert!(iolab_leftovers(work).is_empty(), "{:?}", entries(work));
}

/// The paths an iolab manifest (`owned-PID.json`) records (bytes, as it stores them); none
/// while it is missing or half written.
pub fn manifest_paths(manifest: &Path) -> Vec<PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    let Ok(v) = std::fs::read(manifest)
        .map_err(|_| ())
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).map_err(|_| ()))
    else {
        return Vec::new();
    };
    v["entries"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let bytes: Vec<u8> = e["path"]
                .as_array()?
                .iter()
                .map(|b| b.as_u64().map(|b| b as u8))
                .collect::<Option<_>>()?;
            Some(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
        })
        .collect()
}

/// `iolab files` creating empty files for a long time in `work`.
pub fn long_files_run(work: &Path) -> Vec<String> {
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

pub fn work_dir() -> (tempfile::TempDir, PathBuf) {
    let d = tempdir();
    let work = d.path().join("work");
    std::fs::create_dir(&work).unwrap();
    (d, work)
}

/// A directory whose name has a space, a newline and bytes that are not UTF-8.
pub fn odd_dir(parent: &Path) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    let p = parent.join(std::ffi::OsStr::from_bytes(b"odd name\nline \xff\xfe"));
    std::fs::create_dir(&p).unwrap();
    p
}

/// `iolab copy` of a generated tree, repeated long enough to be interrupted.
pub fn long_copy_run(work: &Path, ram: &Path) -> Vec<String> {
    copy_run(work, ram, "0.2")
}

pub fn copy_run(work: &Path, ram: &Path, scale: &str) -> Vec<String> {
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

/// Start `args` on a scratch ext4 mounted `errors=remount-ro`, force a file-system error once
/// iolab's work dir exists, and check it stops with exit 1 naming the read-only file system.
pub fn read_only_mid_run(test: &str, args: impl Fn(&Path, &Path) -> Vec<String>) {
    let Some(fs) =
        crate::common::scratch_or_skip(test, "ext4", 128 << 20, &[], "errors=remount-ro")
    else {
        return;
    };
    let Some(trigger) = fs_error_trigger_or_skip(test, &fs) else {
        return;
    };
    let d = tempdir();
    let args = args(fs.path(), d.path());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = spawn(&args, d.path());
    // Strike once iolab's work tree holds files (the run is under way; both runs here go on
    // far longer than any machine takes to notice). No sleep: the state is what counts.
    let mut ended = false;
    let under_way = wait_until(PATIENCE, || {
        ended = child.try_wait().unwrap().is_some();
        ended || work_tree_has_content(fs.path())
    });
    assert!(
        under_way && !ended,
        "{test}: no work tree (ended early: {ended})"
    );
    std::fs::write(&trigger, "iolab reliability test").unwrap();
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
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

/// ext4's error trigger of a scratch file system (`/sys/fs/ext4/DEV/trigger_fs_error`), or
/// skip `test` when the kernel has none.
pub fn fs_error_trigger_or_skip(test: &str, fs: &crate::common::ScratchFs) -> Option<PathBuf> {
    let dev = fs.loop_dev.as_ref().unwrap().name();
    let trigger = PathBuf::from(format!("/sys/fs/ext4/{dev}/trigger_fs_error"));
    if trigger.exists() {
        Some(trigger)
    } else {
        crate::common::skip(test, format_args!("no {}", trigger.display()));
        None
    }
}

/// Start `iolab run --preset real` (1 s per test) on `target` with `extra` flags and wait
/// until its first test is saved under `out`: the moment the fault tests strike. Time-based,
/// four tests of 1 s: three seconds of run are left then, and the fault follows within
/// milliseconds, so it always lands mid-run however slow the machine.
pub fn real_run_after_first_test(
    target: &str,
    extra: &[&str],
    size: &str,
    out: &Path,
    cwd: &Path,
) -> Child {
    let mut args = vec!["run", "--target", target];
    args.extend_from_slice(extra);
    args.extend_from_slice(&[
        "--preset",
        "real",
        "--size",
        size,
        "--duration",
        "1s",
        "--ramp",
        "0",
        "--repeat",
        "1",
        "--output",
    ]);
    args.push(s(out));
    let mut child = spawn(&args, cwd);
    assert!(wait_for_tests(&mut child, out, 1), "first test not saved");
    child
}

/// A loop device over a 64 MiB image in `dir`, under `iolab run --preset real` past its first
/// test ([`real_run_after_first_test`], the result at `out`): the moment the device's fault
/// tests strike.
pub struct LoopUnderRun {
    pub lo: iolab::fs::loopdev::LoopDevice,
    pub dev: String,
    pub image: PathBuf,
    pub out: PathBuf,
    pub child: Child,
}

pub fn loop_under_a_run(dir: &Path) -> LoopUnderRun {
    let image = dir.join("disk.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let lo = iolab::fs::loopdev::LoopDevice::attach(&image, false).unwrap();
    let dev = lo.device.display().to_string();
    let out = dir.join("out");
    let child = real_run_after_first_test(&dev, &["--allow-destroy", &dev], "32M", &out, dir);
    LoopUnderRun {
        lo,
        dev,
        image,
        out,
        child,
    }
}

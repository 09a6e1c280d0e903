//! `iolab matrix` stopped: SIGINT and SIGTERM tear everything down; after SIGKILL the next
//! iolab start cleans up and says so; mount options the kernel rejects leave nothing behind.
//! Needs root and loop devices; skips loudly otherwise.

mod common;
mod matrix_support;

use matrix_support::*;

fn stop_tears_everything_down(test: &str, sig: nix::sys::signal::Signal, code: i32) {
    if !can_run(test) {
        return;
    }
    let _g = EXCLUSIVE.read().unwrap();
    let area = Area::new();
    let (child, _) = start_long(&area);
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), sig).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    area.assert_clean();
    let doc = area.result();
    assert_eq!(doc.status, "interrupted");
    // Interrupted, not failed: nothing went wrong on the file system (it said "failed").
    assert_eq!(doc.configurations[0].status, "interrupted");
    let why = doc.configurations[0].reason.clone().unwrap_or_default();
    assert!(why.contains(sig.as_str()), "{why}");
    // The stopped workload and the configuration's progress line say so, not "ok".
    let w = &doc.configurations[0].workloads[0];
    assert_eq!(w.status, "interrupted", "{w:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("ext4 [1/3] done in") && !err.contains("s: ok"),
        "{err}"
    );
}

#[test]
fn sigint_tears_everything_down() {
    stop_tears_everything_down(
        "sigint_tears_everything_down",
        nix::sys::signal::Signal::SIGINT,
        130,
    );
}

#[test]
fn sigterm_tears_everything_down() {
    stop_tears_everything_down(
        "sigterm_tears_everything_down",
        nix::sys::signal::Signal::SIGTERM,
        143,
    );
}

#[test]
fn sigkill_leftovers_are_cleaned_by_the_next_start() {
    if !can_run("sigkill_leftovers_are_cleaned_by_the_next_start") {
        return;
    }
    let _g = EXCLUSIVE.write().unwrap();
    let area = Area::new();
    let (mut child, work) = start_long(&area);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        iolab::sysinfo::mounts::all_mounts()
            .iter()
            .any(|m| m.mount_point.starts_with(&work)),
        "a killed run leaves its mount (nothing to clean otherwise)"
    );
    assert!(work.join("iolab-matrix.state").exists());
    // Any next start cleans up, even one with bad input.
    let out = iolab(&["matrix", "--fs", "nosuchfs"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cleaned up after an interrupted matrix run"),
        "{stderr}"
    );
    assert!(
        stderr.contains("unmounted") && stderr.contains("detached"),
        "{stderr}"
    );
    area.assert_clean();
}

#[test]
fn mount_options_the_kernel_rejects_are_usage_errors() {
    if !can_run("mount_options_the_kernel_rejects_are_usage_errors") {
        return;
    }
    let _g = EXCLUSIVE.read().unwrap();
    let area = Area::new();
    let args = area.args(&[
        "--fs",
        "ext4",
        "--image-size",
        "64M",
        "--mount-opts",
        "nosuchoption_iolab",
    ]);
    let out = bin().args(&args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("nosuchoption_iolab") && stderr.contains("rejected"),
        "{stderr}"
    );
    // The kernel's reason, not only mount(8)'s "dmesg(1) may have more information".
    assert!(
        stderr.contains("kernel: ext4: Unknown parameter 'nosuchoption_iolab'"),
        "{stderr}"
    );
    area.assert_clean();
}

/// Ctrl-C in a workload's later test keeps the tests that finished before it: the matrix
/// threw the workload's whole document away, so after three finished tests of four it said
/// "no test had finished: nothing measured to save" and the row held no test.
#[test]
fn sigint_keeps_the_tests_finished_before_it() {
    use std::io::BufRead;
    if !can_run("sigint_keeps_the_tests_finished_before_it") {
        return;
    }
    let _g = EXCLUSIVE.read().unwrap();
    let area = Area::new();
    // Four tests of 5 s each: the signal goes out when the first says it is done, so at
    // least one has finished and, however slow the machine, 15 s of tests are still ahead.
    let args = area.args(&[
        "--fs",
        "ext4",
        "--image-size",
        "128M",
        "--workload",
        "run:preset=real:duration=5s:ramp=0:size=8M:repeat=1",
        "--repeat",
        "1",
    ]);
    let mut child = bin()
        .args(&args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let mut said = String::new();
    for l in lines.by_ref() {
        let l = l.unwrap();
        said.push_str(&l);
        said.push('\n');
        if l.contains("Q1T1 read [1/1] done in") {
            break;
        }
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    for l in lines {
        said.push_str(&l.unwrap());
        said.push('\n');
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{said}");
    area.assert_clean();
    assert!(said.contains("partial results saved"), "{said}");
    assert!(!said.contains("no test had finished"), "{said}");
    let doc = area.result();
    assert_eq!(doc.status, "interrupted");
    let c = &doc.configurations[0];
    assert_eq!(c.status, "interrupted");
    // The finished tests with their runs; the test the signal stopped, when it had begun,
    // is there as `iolab run` keeps it: with its error and no run.
    let finished = c.tests.iter().filter(|t| !t.runs.is_empty()).count();
    assert!(
        (1..4).contains(&finished),
        "{:?}",
        c.tests.iter().map(|t| &t.name).collect::<Vec<_>>()
    );
    assert!(
        c.tests
            .iter()
            .all(|t| !t.runs.is_empty() || t.error.is_some()),
        "{:?}",
        c.tests
            .iter()
            .map(|t| (&t.name, t.runs.len(), &t.error))
            .collect::<Vec<_>>()
    );
    // Not ranked against complete rows: the workload says it was stopped.
    let w = &c.workloads[0];
    assert_eq!(w.status, "interrupted", "{w:?}");
    assert!(w.error.as_deref().unwrap_or("").contains("SIGINT"), "{w:?}");
}

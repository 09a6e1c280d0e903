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
    area.assert_clean();
}

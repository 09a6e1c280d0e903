//! Storage that fights back, as a sysadmin meets it: a read-only mount holding the file to
//! test, a file system unmounted (lazily) under a running test, a loop device detached
//! under a device run. Each on a file system or loop device the test makes itself (as
//! root; skipped loudly otherwise). The faults `tests/reliability.rs` covers (ENOSPC, a
//! file system turning read-only, the target removed) are not repeated here.

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

//! Faults injected under a running iolab (as root, on loop devices and scratch file systems it
//! made itself): no space left, the file system turning read-only, the target directory
//! removed, a device returning read errors. Each must end with exit 1, a clear message, the
//! results measured so far saved, and nothing of iolab's left behind where removal is possible
//! (and what cannot be removed named). Signals: `reliability_signals.rs`; ownership and
//! symlinks: `reliability_ownership.rs`.

use std::io::Write;
use std::time::Duration;

mod common;
mod reliability_support;
use common::scratch_or_skip;
use reliability_support::*;

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
    let (err, doc) = run_until_full(
        fs.path(),
        &["--size", "100M", "--io-size", "64M", "--repeat", "1"],
    );
    assert!(err.contains("MB written"), "{err}");
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
fn short_write_on_a_full_btrfs_is_reported_as_no_space() {
    // Without --mixed, an O_DIRECT 1 MiB overwrite on a btrfs whose data space runs out is
    // placed in part (a short write, no errno): it said "short write ... 987136 of 1048576
    // bytes", which hid that the file system was full.
    let Some(fs) = scratch_or_skip(
        "short_write_on_a_full_btrfs_is_reported_as_no_space",
        "btrfs",
        300 << 20,
        &[],
        "",
    ) else {
        return;
    };
    // Aged first (many small files): on a fresh btrfs the same run gets ENOSPC instead.
    let aged = common::bin()
        .args([
            "age",
            s(fs.path()),
            "--profile",
            "source-tree",
            "--fill",
            "50%",
            "--churn",
            "0.3",
            "--jobs",
            "1",
            "--no-save",
            "--no-history",
        ])
        .output()
        .unwrap();
    assert_eq!(aged.status.code(), Some(0), "{}", stderr(&aged));
    // Filled to under one block free (not by a timed run, whose reach depends on the
    // machine's speed): the file to overwrite, then a filler written until the file system
    // refuses more and cut back by half a block. A 1 MiB O_DIRECT overwrite then needs new
    // room that is not all there.
    let file = fs.path().join("overwrite.dat");
    write_synced(&file, 8 << 20);
    fill_then_free(&fs.path().join("filler.dat"), 512 << 10);
    let left = nix::sys::statvfs::statvfs(fs.path()).unwrap();
    let left = left.blocks_available() * left.fragment_size();
    assert!(
        left > 0 && left < 1 << 20,
        "{left} bytes free after the filler: not under one 1 MiB block"
    );
    let d = tempdir();
    let out = d.path().join("out");
    let o = common::bin()
        .args([
            "run",
            "--target",
            s(&file),
            "--allow-destroy",
            s(&file),
            "--prefill",
            "false",
            "--rw",
            "write",
            "--bs",
            "1M",
            "--io-size",
            "8M",
            "--repeat",
            "1",
            "--ramp",
            "0",
            "--no-history",
            "--output",
            s(&out),
        ])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("no space left on"), "{err}");
    assert!(!err.contains("short write"), "{err}");
    assert_eq!(
        result_doc(&out).expect("result file saved").status,
        "failed"
    );
}

/// `len` bytes of non-zero data at `path`, on the device before it returns.
fn write_synced(path: &std::path::Path, len: u64) {
    let mut f = std::fs::File::create(path).unwrap();
    let chunk = vec![0x5a_u8; 1 << 20];
    let mut left = len;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        f.write_all(&chunk[..n]).unwrap();
        left -= n as u64;
    }
    f.sync_all().unwrap();
}

/// Writes `path` until the file system is full (1 MiB, then 4 KiB pieces until ENOSPC),
/// then cuts `free` bytes off its end, on the device before it returns.
fn fill_then_free(path: &std::path::Path, free: u64) {
    let mut f = std::fs::File::create(path).unwrap();
    for piece in [1 << 20, 4 << 10] {
        let chunk = vec![0x5a_u8; piece];
        loop {
            match f.write_all(&chunk) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
                Err(e) => panic!("filling {}: {e}", path.display()),
            }
        }
        // Delayed allocation can refuse at the flush instead: start over on what was kept.
        let _ = f.sync_all();
    }
    let len = f.metadata().unwrap().len();
    f.set_len(len.saturating_sub(free)).unwrap();
    f.sync_all().unwrap();
    nix::unistd::sync();
}

/// `iolab run --preset real` on `target` (with `extra`, no ramp) that must stop because the
/// file system filled: exit 1, "no space left on", the result saved as failed. Its stderr and
/// result.
fn run_until_full(target: &std::path::Path, extra: &[&str]) -> (String, iolab::model::ResultDoc) {
    let d = tempdir();
    let out = d.path().join("out");
    let mut args = vec![
        "run",
        "--target",
        s(target),
        "--preset",
        "real",
        "--ramp",
        "0",
    ];
    args.extend(extra);
    args.extend(["--output", s(&out)]);
    let o = spawn(&args, d.path()).wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("no space left on"), "{err}");
    let doc = result_doc(&out).expect("result file saved");
    assert_eq!(doc.status, "failed");
    (err, doc)
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
    let Some(trigger) = fs_error_trigger_or_skip("file_system_turning_read_only_mid_run", &fs)
    else {
        return;
    };
    let d = tempdir();
    let out = d.path().join("out");
    let child = real_run_after_first_test(s(fs.path()), &[], "16M", &out, d.path());
    // ext4 with errors=remount-ro turns read-only on an error, as on a failing disk.
    std::fs::write(&trigger, "iolab reliability test").unwrap();
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
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
    let child = real_run_after_first_test(s(&work), &[], "8M", &out, d.path());
    std::fs::remove_dir_all(&work).unwrap();
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
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
    if !common::loop_or_skip("read_errors_from_a_device_whose_backing_file_shrank") {
        return;
    }
    let d = tempdir();
    let run = loop_under_a_run(d.path());
    let (dev, out) = (run.dev.as_str(), run.out.as_path());
    // The loop driver fails reads past the end of its (now shorter) backing file.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&run.image)
        .unwrap()
        .set_len(1 << 20)
        .unwrap();
    let o = run.child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("Input/output error") || err.contains("short read"),
        "{err}"
    );
    assert!(err.contains(dev), "the message names the device: {err}");
    let doc = result_doc(out).expect("result file saved");
    assert_eq!(doc.status, "failed");
    assert!(!doc.tests[0].runs.is_empty(), "the first test was kept");
    drop(run.lo);
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
    let mut ended = false;
    let started = wait_until(PATIENCE, || {
        ended = child.try_wait().unwrap().is_some();
        ended
            || entries(fs.path()).iter().any(|p| {
                p.is_dir()
                    && p.file_name()
                        .unwrap()
                        .to_string_lossy()
                        .starts_with("iolab-copy-")
            })
    });
    assert!(
        started && !ended,
        "no work dir appeared (copy ended early: {ended})"
    );
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
    let err = stderr(&o);
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

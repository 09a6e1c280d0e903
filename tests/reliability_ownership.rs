//! Ownership: iolab deletes and writes only what it created. Symlinks planted in its work dirs
//! or in place of its files during a run are never followed; one run per target whatever the
//! subcommand; odd path names (spaces, newlines, non-UTF-8 bytes).

use std::path::{Path, PathBuf};

use std::time::{Duration, Instant};

mod common;
mod reliability_support;
use reliability_support::*;

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
    plant_links_then_interrupt(child, &work, &outside);
}

#[test]
fn odd_path_names_work_for_files_and_trace() {
    let d = tempdir();
    let odd = odd_dir(d.path());
    let out = odd.join("results");
    let o = bin()
        .arg("files")
        .arg("--target")
        .arg(&odd)
        .args(["--sizes", "1,cluster+1", "--files-per-portion", "20"])
        .args(["--portions", "2", "--passes", "1", "--repeat", "1"])
        .arg("--output")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(entries(&odd), vec![out.clone()], "only the results remain");
    assert!(result_doc(&out).is_some_and(|d| d.status == "complete" && !d.tests.is_empty()));

    let wl = d.path().join("w.toml");
    std::fs::write(
        &wl,
        "[[stream]]\nname = \"s\"\nfiles = 3\nfile_size = \"4K\"\nmix = { read = 1 }\nexisting = true\nduration = \"200ms\"\n",
    )
    .unwrap();
    let o = bin()
        .args(["trace", "run"])
        .arg(&wl)
        .arg("--target")
        .arg(&odd)
        .args(["--repeat", "1", "--no-save"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(entries(&odd), vec![out]);
    // A workload file name that is not UTF-8 is refused by the command line parser, clearly.
    let bad = odd.join("w.toml");
    std::fs::copy(&wl, &bad).unwrap();
    let o = bin()
        .args(["trace", "run"])
        .arg(&bad)
        .arg("--target")
        .arg(d.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("invalid UTF-8"), "{}", stderr(&o));
}

#[test]
fn a_second_copy_or_run_on_the_same_target_is_refused() {
    let (d, work) = work_dir();
    let ram = d.path().join("ram");
    std::fs::create_dir(&ram).unwrap();
    let args = long_copy_run(&work, &ram);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let child = spawn(&[&args[..], &["--no-save"]].concat(), d.path());
    // The first copy (20 rounds of a 0.2-scale tree: many seconds) holds the lock while the
    // two others start; a slower machine only holds it longer.
    assert!(
        wait_until(PATIENCE, || work.join(".iolab.lock").exists()),
        "the first copy took no lock"
    );
    let o = bin().args(&args).arg("--no-save").output().unwrap();
    let err = stderr(&o);
    // The lock is per target, whatever the subcommand.
    let o2 = bin()
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
    assert_eq!(o2.status.code(), Some(2), "{}", stderr(&o2));
    assert!(stderr(&o2).contains("another iolab run"));
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
    plant_links_then_interrupt(child, &work, &outside);
}

#[test]
fn odd_path_names_work_for_copy() {
    let d = tempdir();
    let odd = odd_dir(d.path());
    let ram_parent = d.path().join("ram");
    std::fs::create_dir(&ram_parent).unwrap();
    let ram = odd_dir(&ram_parent);
    let out = odd.join("results");
    let o = bin()
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
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(entries(&odd), vec![out.clone()], "only the results remain");
    assert!(entries(&ram).is_empty());
    assert!(result_doc(&out).is_some_and(|d| d.status == "complete"));
}

/// Replace `file` by a symlink to `to` atomically: the link is made under another name in
/// the same directory and renamed over the file, so the name never goes missing.
fn swap_for_link(to: &Path, file: &Path) -> std::io::Result<()> {
    let mut tmp = file.as_os_str().to_owned();
    tmp.push(".swap");
    let tmp = PathBuf::from(tmp);
    std::os::unix::fs::symlink(to, &tmp)?;
    std::fs::rename(&tmp, file).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[test]
fn a_test_file_replaced_by_a_symlink_is_not_followed() {
    let (d, work) = work_dir();
    let sentinel = d.path().join("precious");
    std::fs::write(&sentinel, b"keep me").unwrap();
    let out = d.path().join("out");
    let child = real_run_after_first_test(s(&work), &[], "8M", &out, d.path());
    let test_file = entries(&work)
        .into_iter()
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("iolab-test-")
        })
        .expect("the test file");
    // Swapped in one step (a link made beside it, renamed over it): a remove then a symlink
    // left a moment without the name, and a loaded machine let iolab's next test fall into
    // it ("the test file is gone", seen in a loaded CI run).
    swap_for_link(&sentinel, &test_file).unwrap();
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
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
    let deadline = Instant::now() + PATIENCE;
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
            if swap_for_link(&sentinel, &f).is_ok() {
                swapped += 1;
            }
        }
    }
    assert!(swapped > 0, "no workload file appeared");
    // It fails on the next open of a swapped file (one every 5 ms of think time); stop it in
    // any case after a minute, thousands of times that, so only a hang gets there.
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let (exited, wait) = std::sync::mpsc::channel::<()>();
    let stopper = std::thread::spawn(move || {
        if wait.recv_timeout(Duration::from_secs(60)).is_err() {
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT);
        }
    });
    let o = child.wait_with_output().unwrap();
    let _ = exited.send(());
    let _ = stopper.join();
    let err = stderr(&o);
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
fn kept_files_are_the_users_and_no_later_start_removes_them() {
    let (d, work) = work_dir();
    let registry = d.path().join("registry");
    let o = bin()
        .env("IOLAB_STATE_DIR", &registry)
        .args([
            "run",
            "--target",
            s(&work),
            "--rw",
            "randread",
            "--size",
            "4M",
        ])
        .args([
            "--duration",
            "100ms",
            "--ramp",
            "0",
            "--repeat",
            "1",
            "--keep",
        ])
        .arg("--no-save")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let kept = entries(&work);
    assert_eq!(kept.len(), 1, "the kept test file only: {kept:?}");
    assert!(entries(&registry).is_empty(), "nothing left to clean up");
    let o = bin()
        .env("IOLAB_STATE_DIR", &registry)
        .args(["run", "--target", s(&d.path().join("missing"))])
        .output()
        .unwrap();
    assert!(!stderr(&o).contains("cleaned up"), "{}", stderr(&o));
    assert_eq!(entries(&work), kept);
}

/// A run that saved its result and ended with exit 0 left the record of the result file it
/// had claimed empty whenever the last save's new inode reused the number of the claimed
/// one (5 runs of 6 on this VM's ext4), and the next iolab said "cleaned up after an iolab
/// process that was killed … left r.json alone". The final save forgets it. (Several runs:
/// the inode numbers are the file system's choice, not iolab's.)
#[test]
fn a_saved_result_leaves_nothing_for_the_next_start() {
    let (d, work) = work_dir();
    let registry = d.path().join("registry");
    for i in 0..4 {
        let result = d.path().join(format!("r{i}.json"));
        let o = bin()
            .env("IOLAB_STATE_DIR", &registry)
            .args([
                "run",
                "--target",
                s(&work),
                "--engine",
                "null",
                "--size",
                "1M",
            ])
            .args([
                "--duration",
                "100ms",
                "--repeat",
                "3",
                "-q",
                "-o",
                s(&result),
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(result.exists());
        assert!(
            entries(&registry).is_empty(),
            "run {i}: {:?}",
            entries(&registry)
        );
        let o = bin()
            .env("IOLAB_STATE_DIR", &registry)
            .args(["info", s(&work)])
            .output()
            .unwrap();
        assert!(!stderr(&o).contains("cleaned up"), "{}", stderr(&o));
    }
}

/// Wait for iolab's work dir under `work`, plant links to `outside` in it and in its
/// subdirectories after `settle`, interrupt the run, and check that cleanup removed iolab's
/// tree without following the links.
fn plant_links_then_interrupt(
    child: std::process::Child,
    work: &std::path::Path,
    outside: &std::path::Path,
) {
    // Once iolab's work dir holds its first entries (the run is under way; no sleep: the
    // state is what counts). Both runs go on far longer than any machine takes to get here.
    let mut root = None;
    let found = wait_until(PATIENCE, || {
        root = entries(work)
            .into_iter()
            .find(|p| p.is_dir() && p.file_name().unwrap().to_string_lossy().contains("iolab"))
            .filter(|r| !entries(r).is_empty());
        root.is_some()
    });
    assert!(found, "no work dir with content appeared");
    let root = root.unwrap();
    std::os::unix::fs::symlink(outside, root.join("planted")).unwrap();
    for sub in entries(&root)
        .into_iter()
        .filter(|p| p.is_dir() && !p.is_symlink())
    {
        let _ = std::os::unix::fs::symlink(outside, sub.join("planted"));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(std::fs::read(outside.join("sentinel")).unwrap() == b"keep me");
    assert!(iolab_leftovers(work).is_empty(), "{:?}", entries(work));
}

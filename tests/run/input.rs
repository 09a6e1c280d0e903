//! Bad input and unsafe targets: exit 2 with one line and nothing created; a user's file is
//! used only with `--allow-destroy` naming it and never deleted; read-only and odd paths.

use super::*;

#[test]
fn bad_input_is_refused_with_exit_2() {
    let d = tempdir();
    let p = d.path();
    let cases: &[(&[&str], &str)] = &[
        (&["run", "--preset", "turbo"], "invalid value 'turbo'"),
        (&["run", "--engine", "libaio"], "invalid value 'libaio'"),
        (&["run", "--bs", "0"], "--bs 0"),
        (&["run", "--bs", "1000"], "multiple of 512"),
        (&["run", "--bs", "4x"], "not a size"),
        // The value as a size, not 1073741824.
        (&["run", "--bs", "1G"], "--bs 1GiB: at most 64MiB"),
        (&["run", "--size=-4k"], "negative"),
        (&["run", "--size", "1k"], "smaller than one block"),
        (&["run", "--size", "900T"], "free"),
        (&["run", "--duration=-1s"], "negative"),
        (&["run", "--duration", "-1s"], "negative"),
        (&["run", "--size", "-4k"], "negative"),
        (&["run", "--iodepth", "-1"], "--iodepth"),
        (
            &["run", "--durration", "5"],
            "similar argument exists: '--duration'",
        ),
        (&["run", "--duration", "soon"], "not a duration"),
        (&["run", "--pause", "-1s"], "negative"),
        (&["run", "--pause", "a while"], "not a duration"),
        (&["run", "--interval", "0"], "whole milliseconds"),
        (&["run", "--interval", "1500us"], "whole milliseconds"),
        (&["run", "--interval=-1s"], "negative"),
        (
            &["run", "--interval", "1s", "--duration", "500ms"],
            "longer than --duration",
        ),
        (
            &["run", "--interval", "1ms", "--duration", "2m"],
            "120000 points per run",
        ),
        (&["run", "--duration", "0"], "--duration 0"),
        (&["run", "--iodepth", "0"], "--iodepth 0"),
        (&["run", "--iodepth", "1025"], "--iodepth 1025"),
        (&["run", "--jobs", "0"], "--jobs 0"),
        (&["run", "--repeat", "0"], "--repeat 0"),
        (&["run", "--repeat", "lots"], "--repeat 'lots'"),
        (&["run", "--rwmix-read", "101"], "--rwmix-read 101"),
        (
            &["run", "--rw", "randread", "--rwmix-read", "50"],
            "no test of this run mixes reads and writes",
        ),
        (&["run", "--rwmix-read", "50"], "add --mix"),
        (
            &["run", "--target", "/nonexistent/iolab/dir"],
            "does not exist",
        ),
        // 16 TiB of I/O buffers: was an allocation abort (exit 134) after the prefill, the
        // test file and the lock left behind.
        (
            &[
                "run",
                "--rw",
                "read",
                "--bs",
                "64M",
                "--iodepth",
                "1024",
                "--jobs",
                "256",
            ],
            "of I/O buffers, more than half of this machine's memory",
        ),
        (&["run", "--rwmix-read", "x%"], "not a whole percentage"),
        // Whole blocks: 1k with 4 KiB blocks moved 4 KiB and said 1 KiB.
        (
            &["run", "--rw", "randread", "--io-size", "1k"],
            "--io-size 1KiB: not a whole number of 4KiB blocks (RND4K Q1T1 read)",
        ),
        (
            &["run", "--io-size", "1536K"],
            "--io-size 1536KiB: not a whole number of 1MiB blocks (SEQ1M Q8T1 read)",
        ),
        // Jobs writing the same blocks at once: a torn sector was reported as corruption.
        (
            &[
                "run", "--rw", "randrw", "--region", "shared", "--jobs", "2", "--verify",
            ],
            "--verify with --region shared: in RND4K Q1T2 mixed 70% read, 2 jobs write the same blocks at once",
        ),
        // A size-based run has no warm-up: the ramp was silently dropped (ramp_s 0).
        (
            &["run", "--io-size", "1M", "--ramp", "1s"],
            "--ramp 1.00 s with --io-size: a size-based run has no warm-up",
        ),
    ];
    for (args, needle) in cases {
        expect_usage_error(p, args, needle);
    }
    // An existing file is only overwritten with --allow-destroy naming it.
    std::fs::write(p.join("precious.dat"), b"keep me").unwrap();
    expect_usage_error(p, &["run", "--target", "precious.dat"], "--allow-destroy");
    expect_usage_error(
        p,
        &[
            "run",
            "--target",
            "precious.dat",
            "--allow-destroy",
            "other.dat",
        ],
        "does not name",
    );
    assert_eq!(std::fs::read(p.join("precious.dat")).unwrap(), b"keep me");
}

#[test]
fn existing_file_with_allow_destroy_is_used_and_kept() {
    let d = tempdir();
    let f = d.path().join("scratch.dat");
    std::fs::write(&f, vec![1u8; 1 << 20]).unwrap();
    let fs = f.display().to_string();
    let out = iolab_in(
        d.path(),
        &[
            "run",
            "--target",
            &fs,
            "--allow-destroy",
            &fs,
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--repeat",
            "1",
            "--duration",
            "100ms",
            "--ramp",
            "0",
            "--json",
            "--no-save",
        ],
    );
    let doc = json_ok(&out);
    assert_eq!(doc["tests"][0]["settings"]["size_bytes"], 1 << 20);
    assert!(f.exists(), "a user's file is never deleted");
}

/// `--keep` keeps the test file iolab creates in a directory; on a file or a device, which
/// iolab never removes, it was accepted and did nothing, without a word. Now refused (exit 2,
/// nothing written), by `run` and `saturate` alike.
#[test]
fn keep_on_a_target_iolab_never_removes_is_refused() {
    let d = tempdir();
    let f = d.path().join("scratch.dat");
    std::fs::write(&f, vec![1u8; 1 << 20]).unwrap();
    let fs = f.display().to_string();
    for cmd in ["run", "saturate"] {
        let out = iolab_in(
            d.path(),
            &[
                cmd,
                "--target",
                &fs,
                "--allow-destroy",
                &fs,
                "--keep",
                "--no-save",
            ],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {err}");
        assert!(
            err.contains(&format!("--keep keeps the test file iolab creates in a directory target; {fs} is an existing file")),
            "{cmd}: {err}"
        );
        assert_eq!(
            std::fs::read(&f).unwrap(),
            vec![1u8; 1 << 20],
            "{cmd} wrote"
        );
    }
}

#[test]
fn read_only_file_system_is_refused() {
    let Some(fs) = scratch_or_skip(
        "read_only_file_system_is_refused",
        "tmpfs",
        8 << 20,
        &[],
        "ro",
    ) else {
        return;
    };
    let t = fs.path().display().to_string();
    let cwd = tempdir();
    expect_usage_error(cwd.path(), &["run", "--target", &t], "read-only");
}

#[test]
fn odd_path_names_work() {
    use std::os::unix::ffi::OsStrExt;
    let d = tempdir();
    let odd = d
        .path()
        .join(std::ffi::OsStr::from_bytes(b"with space\nnewline \xff\xfe"));
    std::fs::create_dir(&odd).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .current_dir(d.path())
        .arg("run")
        .arg("--target")
        .arg(&odd)
        .args([
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--size",
            "4M",
            "--duration",
            "100ms",
            "--ramp",
            "0",
            "--repeat",
            "1",
            "--json",
            "--no-save",
        ])
        .output()
        .unwrap();
    let doc = json_ok(&out);
    assert!(
        doc["environment"]["target_path"]
            .as_str()
            .unwrap()
            .contains("with space")
    );
    assert!(entries(&odd).is_empty());
}

/// Regression (QA): an existing file with `--allow-destroy` and a `--size` larger than the
/// file plus the free space beside it used to grow until ENOSPC ("prefill failed"), leaving
/// the file grown and the file system full. Now refused up front, nothing written; an
/// empty file's default size (1 GiB) is refused the same way, naming the default.
#[test]
fn a_file_target_that_cannot_grow_to_its_size_is_refused_before_writing() {
    let test = "a_file_target_that_cannot_grow_to_its_size_is_refused_before_writing";
    let Some(fs) = scratch_or_skip(test, "tmpfs", 20 << 20, &[], "") else {
        return;
    };
    let f = fs.path().join("f");
    std::fs::write(&f, vec![7u8; 15 << 20]).unwrap();
    let empty = fs.path().join("empty");
    std::fs::write(&empty, b"").unwrap();
    let free_before = iolab::fs::facts::free_space(fs.path()).unwrap();
    let cwd = tempdir();
    let fp = f.display().to_string();
    expect_usage_error(
        cwd.path(),
        &[
            "run",
            "-t",
            &fp,
            "--allow-destroy",
            &fp,
            "--size",
            "64M",
            "--rw",
            "randread",
        ],
        "--size 64.0 MiB: larger than the file",
    );
    let ep = empty.display().to_string();
    expect_usage_error(
        cwd.path(),
        &["run", "-t", &ep, "--allow-destroy", &ep, "--rw", "randread"],
        "the default test size 1.0 GiB: larger than the file",
    );
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 15 << 20, "f grew");
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0, "empty grew");
    assert_eq!(iolab::fs::facts::free_space(fs.path()), Some(free_before));
    assert!(
        std::fs::read(&f).unwrap().iter().all(|&b| b == 7),
        "f was written"
    );
}

/// A file target that has to grow for `--size` grows with a note that says so (it keeps
/// its new length: iolab never truncates a user's file).
#[test]
fn a_file_target_that_grows_says_so() {
    let d = tempdir();
    let f = d.path().join("grow.dat");
    std::fs::write(&f, vec![1u8; 4 << 20]).unwrap();
    let fp = f.display().to_string();
    let out = iolab_in(
        d.path(),
        &[
            "run",
            "-t",
            &fp,
            "--allow-destroy",
            &fp,
            "--size",
            "8M",
            "--rw",
            "randread",
            "--engine",
            "null",
            "--duration",
            "100ms",
            "--ramp",
            "0",
            "--json",
            "--no-save",
        ],
    );
    let doc = json_ok(&out);
    assert_eq!(doc["tests"][0]["settings"]["size_bytes"], 8 << 20);
    assert!(
        stderr(&out).contains("grows from 4.0 MiB to 8.0 MiB (--size)"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 8 << 20);
}

/// Regression (QA): on a nearly full file system without `--size`, the error blamed
/// `--size 921.6 KiB`, a flag the user did not give; and the clamp note said 921.6 KiB while
/// the footer said 920.0 KiB (the size rounded down to whole blocks). The error now names
/// the free space, and the note the size tested, rounding said.
#[test]
fn a_nearly_full_file_system_is_blamed_and_the_clamp_note_says_the_size_tested() {
    let test = "a_nearly_full_file_system_is_blamed_and_the_clamp_note_says_the_size_tested";
    let Some(fs) = scratch_or_skip(test, "tmpfs", 8 << 20, &[], "") else {
        return;
    };
    // Leave 1 MiB + 12 KiB free: 90 % of it is 937.8 KiB, not whole 4 KiB blocks.
    let free = iolab::fs::facts::free_space(fs.path()).unwrap();
    std::fs::write(
        fs.path().join("fill"),
        vec![0u8; (free - (1036 << 10)) as usize],
    )
    .unwrap();
    assert_eq!(iolab::fs::facts::free_space(fs.path()), Some(1036 << 10));
    let t = fs.path().display().to_string();
    let cwd = tempdir();
    let out = iolab_in(cwd.path(), &["run", "-t", &t, "--no-save"]);
    assert_usage(&out, "is nearly full: the test file may take 932.4 KiB");
    assert!(!stderr(&out).contains("--size 9"), "{}", stderr(&out));
    assert!(stderr(&out).contains("one block per job (1.0 MiB)"));

    let out = iolab_in(
        cwd.path(),
        &[
            "run",
            "-t",
            &t,
            "--rw",
            "randwrite",
            "--engine",
            "null",
            "--duration",
            "100ms",
            "--ramp",
            "0",
            "--no-save",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let (err, table) = (stderr(&out), stdout(&out));
    assert!(
        err.contains("test file size clamped to 932.0 KiB (90 % of the free space on")
            && err.contains("rounded down to whole 4.0 KiB blocks)"),
        "{err}"
    );
    assert!(table.contains("test size 932.0 KiB"), "{table}");
}

/// Regression (QA): `--size` equal to the free space passed the check and then failed with
/// ENOSPC (exit 1) creating the test file, the lock file beside it having taken a block;
/// and the refusal of a larger one said "only 19.9 MiB free", which `--size 19.9M` does not
/// take. The refusal now leaves the lock file its room and gives a size that can be typed
/// back, which then runs.
#[test]
fn a_size_of_all_the_free_space_is_refused_with_one_that_fits() {
    let test = "a_size_of_all_the_free_space_is_refused_with_one_that_fits";
    let Some(fs) = scratch_or_skip(test, "tmpfs", 8 << 20, &[], "") else {
        return;
    };
    let t = fs.path().display().to_string();
    let cwd = tempdir();
    let run = |size: &str| {
        iolab_in(
            cwd.path(),
            &[
                "run",
                "-t",
                &t,
                "--size",
                size,
                "--rw",
                "randwrite",
                "--bs",
                "4k",
                "--engine",
                "sync",
                "--duration",
                "100ms",
                "--ramp",
                "0",
                "--repeat",
                "1",
                "--no-save",
            ],
        )
    };
    let out = run("8M");
    assert_usage(&out, "free on");
    let err = stderr(&out);
    let at_most = err
        .split("--size ")
        .nth(2)
        .and_then(|rest| rest.split(" at most").next())
        .unwrap_or_else(|| panic!("no size to type back in: {err}"))
        .to_string();
    assert!(at_most.ends_with('K'), "{err}");
    let out = run(&at_most);
    assert!(out.status.success(), "--size {at_most}: {}", stderr(&out));
    assert!(
        common::names(fs.path()).is_empty(),
        "{:?}",
        common::names(fs.path())
    );
}

/// A --size that does not fit while another iolab run holds the target names that run: its
/// test file may be what took the room ("only 7.9 MiB free" blamed the size).
#[test]
fn a_size_that_does_not_fit_beside_another_run_names_the_run() {
    use std::os::fd::AsRawFd;
    let test = "a_size_that_does_not_fit_beside_another_run_names_the_run";
    let Some(fs) = scratch_or_skip(test, "tmpfs", 8 << 20, &[], "") else {
        return;
    };
    // The lock as a running iolab holds it (`runner::lock`), taken by this test.
    let lock = fs.path().join(".iolab.lock");
    std::fs::write(&lock, "pid 4242").unwrap();
    let held = std::fs::File::open(&lock).unwrap();
    // SAFETY: flock on an fd this test owns.
    assert_eq!(
        unsafe { libc::flock(held.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
        0
    );
    let t = fs.path().display().to_string();
    for cmd in [
        vec!["run", "-t", &t, "--size", "16M", "--no-save"],
        vec!["saturate", "-t", &t, "--size", "16M", "--no-save"],
        vec!["sustain", &t, "--size", "16M", "--no-save"],
    ] {
        let out = iolab(&cmd);
        assert_usage(&out, "another iolab run is using");
        assert!(
            stderr(&out).contains("pid 4242"),
            "{cmd:?}: {}",
            stderr(&out)
        );
    }
    drop(held);
}

/// Regression (QA): `--size 10000001` tested 9,998,336 bytes (whole 4 KiB blocks) and the
/// footer's "test size 9.5 MiB" hid the cut; the note says what was asked and what is
/// tested. The null engine: no disk speed involved.
#[test]
fn a_size_cut_to_whole_blocks_is_said() {
    let d = tempdir();
    let out = iolab(&[
        "run",
        s(d.path()),
        "--size",
        "10000001",
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--engine",
        "null",
        "--duration",
        "100ms",
        "--ramp",
        "0",
        "--json",
        "--no-save",
    ]);
    let doc = json_ok(&out);
    assert_eq!(doc["tests"][0]["settings"]["size_bytes"], 9_998_336);
    assert!(
        stderr(&out).contains(
            "--size 10,000,001 bytes rounded down to 9,998,336 bytes (9.5 MiB): a whole number of 4.0 KiB blocks"
        ),
        "{}",
        stderr(&out)
    );
    // A size of whole blocks says nothing.
    let out = iolab(&[
        "run",
        s(d.path()),
        "--size",
        "8M",
        "--rw",
        "randread",
        "--engine",
        "null",
        "--duration",
        "100ms",
        "--ramp",
        "0",
        "--json",
        "--no-save",
    ]);
    json_ok(&out);
    assert!(!stderr(&out).contains("rounded down"), "{}", stderr(&out));
}

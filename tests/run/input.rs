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

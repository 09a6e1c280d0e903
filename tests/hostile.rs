//! Storage that fights back, as a sysadmin meets it: a read-only mount holding the file to
//! test. Each on a file system or loop device the test makes itself (as
//! root; skipped loudly otherwise). The faults `tests/reliability.rs` covers (ENOSPC, a
//! file system turning read-only, the target removed) are not repeated here.

use std::process::Command;

mod common;
mod reliability_support;
use common::{s, scratch_or_skip, stderr, tempdir};
use reliability_support::*;

/// `iolab run` on an existing file of a read-only mount: what writes is refused before
/// anything is created, naming the read-only file system and how to read the file as it
/// is; reading it as it is works. Before, `--allow-destroy FILE` claimed a result file,
/// failed with "prefill failed: Read-only file system (os error 30)" and exited 1.
#[test]
fn an_existing_file_on_a_read_only_mount_is_read_as_it_is_or_refused_up_front() {
    let test = "an_existing_file_on_a_read_only_mount_is_read_as_it_is_or_refused_up_front";
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

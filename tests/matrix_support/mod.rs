//! Shared helpers of the matrix integration tests: running the binary, a test's own image
//! dir with files of "the user's" that must survive, leftover checks, a long run to stop.
#![allow(dead_code, unused_imports)]

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::RwLock;
use std::time::{Duration, Instant};

use iolab::model::ResultDoc;

/// The SIGKILL test must be the only iolab running from its test binary while it waits for "the
/// next start" (any start cleans up after a dead run).
pub static EXCLUSIVE: RwLock<()> = RwLock::new(());

pub const TINY: &str = "run:preset=real:duration=200ms:ramp=0:size=8M:repeat=1";
pub const SENTINEL: &[u8] = b"not iolab's";

pub use crate::common::{bin, iolab};

/// Can `test` format loop devices here (root, loop devices, losetup)? Else it skips (loudly;
/// a failure under `IOLAB_TEST_STRICT=1`). Other test files use this too: keep the signature.
pub fn can_run(test: &str) -> bool {
    crate::common::loop_or_skip(test)
}

/// A test's image dir with a file of the user's in it (and a look-alike image name).
pub struct Area {
    _tmp: tempfile::TempDir,
    pub base: PathBuf,
    pub out: PathBuf,
}

impl Area {
    pub fn new() -> Area {
        // Under the target dir: a real disk file system, not a tmpfs /tmp.
        let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        let tmp = tempfile::Builder::new()
            .prefix("matrix-test-")
            .tempdir_in(root)
            .unwrap();
        let base = tmp.path().join("images");
        std::fs::create_dir(&base).unwrap();
        std::fs::write(base.join("precious.txt"), SENTINEL).unwrap();
        std::fs::write(base.join("c1-r1.img"), SENTINEL).unwrap();
        std::fs::write(tmp.path().join("outside.txt"), SENTINEL).unwrap();
        let out = tmp.path().join("results");
        Area {
            base,
            out,
            _tmp: tmp,
        }
    }

    pub fn args<'a>(&'a self, extra: &[&'a str]) -> Vec<String> {
        let mut v: Vec<String> = vec![
            "matrix".into(),
            "--image-dir".into(),
            self.base.display().to_string(),
            "--output".into(),
            self.out.display().to_string(),
        ];
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    }

    /// Everything iolab made under the image dir is gone, and the user's files are intact.
    pub fn assert_clean(&self) {
        let base = std::fs::canonicalize(&self.base).unwrap();
        let b = base.display().to_string();
        let mounts: Vec<_> = iolab::sysinfo::mounts::all_mounts()
            .into_iter()
            .filter(|m| m.mount_point.starts_with(&base))
            .collect();
        assert!(mounts.is_empty(), "mounts left: {mounts:?}");
        let loops: Vec<String> = std::fs::read_dir("/sys/block")
            .unwrap()
            .flatten()
            .filter_map(|e| std::fs::read_to_string(e.path().join("loop/backing_file")).ok())
            .filter(|f| f.starts_with(&b))
            .collect();
        assert!(loops.is_empty(), "loop devices left: {loops:?}");
        let mut names: Vec<String> = std::fs::read_dir(&base)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["c1-r1.img", "precious.txt"],
            "left in the image dir"
        );
        for f in [base.join("precious.txt"), base.join("c1-r1.img")] {
            assert_eq!(
                std::fs::read(&f).unwrap(),
                SENTINEL,
                "{} touched",
                f.display()
            );
        }
        let outside = base.parent().unwrap().join("outside.txt");
        assert_eq!(std::fs::read(outside).unwrap(), SENTINEL);
    }

    /// `iolab ARGS` (from `args`), checked to exit with `code` and to leave nothing mounted
    /// or attached; its result and stderr.
    pub fn run_expecting(&self, args: &[String], code: i32) -> (ResultDoc, String) {
        let out = crate::common::bin().args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(code), "{stderr}");
        self.assert_clean();
        (self.result(), stderr)
    }

    /// `iolab ARGS` (from `args`) beside other matrix tests (`EXCLUSIVE` read), checked to
    /// exit 0 and to leave nothing mounted or attached; its result and stdout.
    pub fn run_zero(&self, args: &[String]) -> (ResultDoc, String) {
        let out = {
            let _g = EXCLUSIVE.read().unwrap();
            crate::common::bin().args(args).output().unwrap()
        };
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
        self.assert_clean();
        (self.result(), stdout)
    }

    pub fn result(&self) -> ResultDoc {
        let f = std::fs::read_dir(&self.out)
            .unwrap()
            .flatten()
            .find(|e| e.file_name().to_string_lossy().ends_with(".json"))
            .expect("a result file");
        ResultDoc::read(&f.path()).unwrap()
    }

    /// The work dir iolab made (while a run is alive).
    pub fn work_dir(&self) -> Option<PathBuf> {
        std::fs::read_dir(&self.base)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("iolab-matrix-")
            })
    }
}

pub fn run_ok(area: &Area, extra: &[&str]) -> ResultDoc {
    let _g = EXCLUSIVE.read().unwrap();
    let args = area.args(extra);
    let out = bin().args(&args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        matches!(out.status.code(), Some(0) | Some(1)),
        "iolab {args:?}: {:?}\n{stderr}",
        out.status
    );
    assert!(stdout.contains("Ranking for"), "{stdout}");
    area.assert_clean();
    area.result()
}

/// Start a long matrix and wait until it has a file system mounted (the caller waits for it).
#[allow(clippy::zombie_processes)]
pub fn start_long(area: &Area) -> (std::process::Child, PathBuf) {
    let args = area.args(&[
        "--fs",
        "ext4",
        "--image-size",
        "128M",
        "--workload",
        "run:preset=real:duration=20s:ramp=0:size=8M:repeat=1",
        "--repeat",
        "3",
    ]);
    let mut child = bin()
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until a file system is mounted and the workload's test file is in it (the run is
    // writing; no sleep: the state is what counts). 20 s a test, three runs: whoever stops it
    // finds it mid-run however slow the machine. 120 s to get there is generous and costs
    // nothing when it is quick.
    let t0 = Instant::now();
    loop {
        if let Some(w) = area.work_dir() {
            let canon = std::fs::canonicalize(&w).unwrap_or(w.clone());
            let writing = iolab::sysinfo::mounts::all_mounts()
                .iter()
                .filter(|m| m.mount_point.starts_with(&canon))
                .any(|m| {
                    crate::common::names(&m.mount_point)
                        .iter()
                        .any(|n| n.starts_with("iolab-"))
                });
            if writing {
                return (child, canon);
            }
        }
        if t0.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("matrix never started a workload on a mounted file system");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

//! What every integration test binary shares: the binary under test, temp dirs, reading its
//! output, scratch file systems, and the one way to skip (`skip.rs`: loud, and a failure
//! under `IOLAB_TEST_STRICT=1`). Each test file says `mod common;` and uses a subset.
#![allow(dead_code, unused_imports)]

pub mod scratch;
#[path = "skip.rs"]
mod skip_rule;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub use scratch::{ScratchFs, scratch_or_skip};
pub use skip_rule::{on_path, root_or_skip, skip, strict, tool_or_skip};

/// No test records into the user's result history (~/.local/share/iolab/history.sqlite):
/// every test binary that includes this module sets `IOLAB_NO_HISTORY=1` (and, should a test
/// turn that off without naming a database, an `IOLAB_HISTORY` inside the target directory)
/// before `main`, through an ELF constructor as the `ctor` crate makes one. So every process
/// a test starts inherits it: `bin()`, a `Command::new(env!("CARGO_BIN_EXE_iolab"))`, mpirun
/// and its ranks, setpriv, strace. (A `.cargo/config.toml` `[env]` would do the same for the
/// tests, but also for `cargo run`, and the README's first command would record nothing.)
/// `with_history` gives a test its own database.
#[used]
#[unsafe(link_section = ".init_array")]
static NO_HISTORY_FOR_TESTS: extern "C" fn() = no_history_for_tests;

extern "C" fn no_history_for_tests() {
    // SAFETY: runs before main, when the process has no other thread.
    unsafe {
        std::env::set_var("IOLAB_NO_HISTORY", "1");
        std::env::set_var(
            "IOLAB_HISTORY",
            concat!(env!("CARGO_TARGET_TMPDIR"), "/test-history/history.sqlite"),
        );
    }
}

/// The binary under test, with colour off (tests read plain text) and no result history
/// (see `NO_HISTORY_FOR_TESTS`). `with_history` gives a test its own history instead.
pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_iolab"));
    c.env("NO_COLOR", "1").env("IOLAB_NO_HISTORY", "1");
    c
}

/// `cmd` recording into (and `iolab history` reading) the history at `db`.
pub fn with_history<'a>(cmd: &'a mut Command, db: &Path) -> &'a mut Command {
    cmd.env_remove("IOLAB_NO_HISTORY").env("IOLAB_HISTORY", db)
}

/// Run `iolab ARGS` in the test's working directory.
pub fn iolab(args: &[&str]) -> Output {
    bin().args(args).output().expect("run iolab")
}

/// Run `iolab ARGS` in `cwd`.
pub fn iolab_in(cwd: &Path, args: &[&str]) -> Output {
    bin()
        .current_dir(cwd)
        .args(args)
        .output()
        .expect("run iolab")
}

/// A temp dir on the build dir's file system (a block device where O_DIRECT works, unlike a
/// tmpfs /tmp).
pub fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("iolab-test-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
}

/// The paths in `dir` (one level, sorted); none when it does not exist.
pub fn entries(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd.map(|e| e.unwrap().path()).collect();
    v.sort();
    v
}

/// The test file a run made in `dir` (`iolab-test-*`), if there is one yet.
#[allow(dead_code)]
pub fn test_file_in(dir: &Path) -> Option<PathBuf> {
    entries(dir).into_iter().find(|p| {
        p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("iolab-test-"))
    })
}

/// The names in `dir` (one level, sorted); none when it does not exist.
pub fn names(dir: &Path) -> Vec<String> {
    entries(dir)
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect()
}

pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// stdout as JSON; the panic shows both streams.
pub fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}; exit {}): {}\nstderr: {}",
            o.status,
            stdout(o),
            stderr(o)
        )
    })
}

/// A successful run's stdout as JSON.
pub fn json_ok(o: &Output) -> serde_json::Value {
    assert!(
        o.status.success(),
        "iolab failed: {}\n{}",
        o.status,
        stderr(o)
    );
    json(o)
}

/// A usage error: exit 2 and `needle` in stderr.
pub fn assert_usage(o: &Output, needle: &str) {
    assert_eq!(o.status.code(), Some(2), "stderr: {}", stderr(o));
    assert!(
        stderr(o).contains(needle),
        "want {needle:?} in: {}",
        stderr(o)
    );
}

/// Can this test attach loop devices? Root, `/dev/loop-control` and `losetup`; else skip.
pub fn loop_or_skip(test: &str) -> bool {
    if !root_or_skip(test, "loop devices") {
        return false;
    }
    if !Path::new("/dev/loop-control").exists() {
        skip(
            test,
            "no loop devices here (/dev/loop-control; modprobe loop)",
        );
        return false;
    }
    tool_or_skip(test, "losetup", "mount")
}

/// A loop device over `image` (an image file of the test's own), detached on drop while it
/// is still bound to that image; the caller has checked `loop_or_skip`.
pub struct Loop(pub String, PathBuf);

/// `Loop::attach` gives a read-only one (`losetup --read-only`).
pub type ReadOnlyLoop = Loop;

impl Loop {
    /// A read-only loop device.
    pub fn attach(image: &Path) -> Loop {
        Loop::attach_with(image, &["--read-only"])
    }

    /// A writable loop device.
    #[allow(dead_code)]
    pub fn writable(image: &Path) -> Loop {
        Loop::attach_with(image, &[])
    }

    fn attach_with(image: &Path, flags: &[&str]) -> Loop {
        let out = Command::new("losetup")
            .args(["--find", "--show"])
            .args(flags)
            .arg(image)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        Loop(
            String::from_utf8_lossy(&out.stdout).trim().to_string(),
            std::fs::canonicalize(image).unwrap(),
        )
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        detach_if_bound_to(&self.0, &self.1);
    }
}

/// `losetup -d DEV`, only while DEV is still bound to `image` (its canonical path, taken
/// when it was attached). A `losetup -d` under a busy device only marks it: the kernel lets it
/// go at the last close, and the number can then be another process's loop device at once,
/// which a second `losetup -d` by name would take from it (a test binary running beside
/// another one saw its new loop device emptied under mkfs: "can't get size of data
/// subvolume").
pub fn detach_if_bound_to(dev: &str, image: &Path) {
    let name = dev.trim_start_matches("/dev/");
    let backing =
        std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")).unwrap_or_default();
    let backing = backing.trim_end_matches('\n');
    let ours = image.display().to_string();
    if backing == ours || backing == format!("{ours} (deleted)") {
        let _ = Command::new("losetup").args(["-d", dev]).status();
    }
}

/// A copy of the binary that user `nobody` can execute, for tests that drop privileges: the
/// checkout may sit under a directory only its owner may enter (a `mktemp -d` is 0700), where
/// the built binary is out of `nobody`'s reach. Hard-linked when it can be, else copied.
pub struct NobodysBinary {
    _dir: tempfile::TempDir,
    pub path: PathBuf,
}

pub fn binary_for_nobody() -> NobodysBinary {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::Builder::new()
        .prefix("iolab-bin-")
        .tempdir_in(std::env::temp_dir())
        .unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = dir.path().join("iolab");
    let src = env!("CARGO_BIN_EXE_iolab");
    if std::fs::hard_link(src, &path).is_err() {
        std::fs::copy(src, &path).unwrap();
    }
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    NobodysBinary { _dir: dir, path }
}

// ---- Added on i26-tests-heavy (tmpfs targets, polling); kept at the end to ease merging. ----

/// A tmpfs any test may use without root (`/dev/shm`), for targets and loop images whose
/// speed must not be the shared disk's (CI runs beside a `dd oflag=direct` load). `None` when
/// `/dev/shm` is missing or not a tmpfs.
pub fn ram_base() -> Option<PathBuf> {
    let p = PathBuf::from("/dev/shm");
    let st = nix::sys::statfs::statfs(&p).ok()?;
    (st.filesystem_type() == nix::sys::statfs::TMPFS_MAGIC).then_some(p)
}

/// A temp dir on a tmpfs (`ram_base`), or skip `test` (loudly; a failure when strict).
pub fn ram_tempdir_or_skip(test: &str) -> Option<tempfile::TempDir> {
    let Some(base) = ram_base() else {
        skip(test, "no tmpfs at /dev/shm");
        return None;
    };
    Some(
        tempfile::Builder::new()
            .prefix("iolab-test-")
            .tempdir_in(base)
            .unwrap(),
    )
}

/// `scratch_or_skip` with its image (and mount point) on a tmpfs: the loop device then
/// serves I/O at memory speed, so a blkio throttle on it, not the machine's disk, is what
/// limits a capped process.
pub fn ram_scratch_or_skip(
    test: &str,
    fs_type: &str,
    size: u64,
    mkfs_args: &[&str],
    mount_opts: &str,
) -> Option<ScratchFs> {
    use scratch::ScratchError;
    let Some(base) = ram_base() else {
        skip(test, "no tmpfs at /dev/shm (for the scratch image)");
        return None;
    };
    match ScratchFs::new(fs_type, size, mkfs_args, mount_opts, Some(&base)) {
        Ok(s) => Some(s),
        Err(
            e @ (ScratchError::NotRoot(_)
            | ScratchError::MissingTool(_)
            | ScratchError::Unavailable(_)),
        ) => {
            skip(
                test,
                format_args!("{fs_type} scratch file system unavailable: {e}"),
            );
            None
        }
        Err(e) => panic!("{test}: could not make a scratch {fs_type}: {e}"),
    }
}

/// Poll `cond` every 20 ms until it holds (true) or `limit` has passed (false). For waiting
/// on a child: give a generous limit, it costs nothing when things are fast.
pub fn wait_until(limit: std::time::Duration, mut cond: impl FnMut() -> bool) -> bool {
    let t0 = std::time::Instant::now();
    loop {
        if cond() {
            return true;
        }
        if t0.elapsed() > limit {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// `cmd`'s output, the child pinned to one CPU beside a thread of this test spinning on the
/// same CPU: the two take turns, so every thread the child measures on waits about half of
/// its time for a CPU (a loaded machine only adds to that), against warning
/// `cpu-contention`'s 10 %. `None` (skipped loudly as `test`) where the kernel has no
/// schedstat. Only the warning's presence can be asserted: a shared machine has no idle CPU
/// to promise its absence.
pub fn output_beside_a_spinner(test: &str, cmd: &mut Command) -> Option<Output> {
    use std::os::unix::process::CommandExt;
    use std::sync::atomic::{AtomicBool, Ordering};
    if !Path::new("/proc/thread-self/schedstat").exists() {
        skip(
            test,
            "no /proc/thread-self/schedstat (a kernel without CONFIG_SCHED_INFO)",
        );
        return None;
    }
    let allowed = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).unwrap();
    let cpu = (0..nix::sched::CpuSet::count())
        .rev()
        .find(|&c| allowed.is_set(c).unwrap_or(false))
        .unwrap();
    let mut one = nix::sched::CpuSet::new();
    one.set(cpu).unwrap();
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let spinner = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &one).unwrap();
            while !stop.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        })
    };
    // SAFETY: sched_setaffinity is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &one)
                .map_err(std::io::Error::from)
        });
    }
    let out = cmd.output().expect("run iolab");
    stop.store(true, Ordering::Relaxed);
    spinner.join().unwrap();
    Some(out)
}

/// `cmd` run beside a spinning thread (`output_beside_a_spinner`), checked: it succeeded,
/// its first test's figure at `waited` (a JSON pointer into the test, e.g.
/// `/runs/0/files/cpu_wait_pct`; `None` for a family that records none) is over 20 %, and
/// the test has a `cpu-contention` warning that starts with `who` ("the measuring thread
/// waited "). Its message, or `None` where skipped (loudly, as `test`).
pub fn contention_beside_a_spinner(
    test: &str,
    cmd: &mut Command,
    waited: Option<&str>,
    who: &str,
) -> Option<String> {
    let out = output_beside_a_spinner(test, cmd)?;
    let doc = json_ok(&out);
    let t = &doc["tests"][0];
    if let Some(at) = waited {
        let pct = t.pointer(at).and_then(|v| v.as_f64());
        let pct = pct.unwrap_or_else(|| panic!("no {at} in {t}"));
        assert!(pct > 20.0, "{who} waited only {pct} % ({at})");
    }
    let w = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == "cpu-contention" && w["test"] == t["name"])
        .unwrap_or_else(|| panic!("no cpu-contention of {} in {}", t["name"], doc["warnings"]));
    let msg = w["message"].as_str().unwrap().to_string();
    assert!(
        msg.starts_with(&format!("{who} waited ")) && msg.contains(" % of the run for a CPU that "),
        "{msg}"
    );
    Some(msg)
}

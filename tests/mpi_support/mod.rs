//! What the distributed-run tests share: launching a real `mpirun`, reading rank 0's result,
//! and a blkio v1 read or write cap for a throttled rank.
#![allow(dead_code)]

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use iolab::model::{ResultDoc, RunResult};
use iolab::stats::hist::LatencyHistogram;
pub const IOLAB: &str = env!("CARGO_BIN_EXE_iolab");

/// Guard against a hung launch (never a performance assertion).
pub const HANG_LIMIT: Duration = Duration::from_secs(120);

pub fn mpirun_or_skip(test: &str) -> bool {
    crate::common::tool_or_skip(test, "mpirun", "openmpi-bin")
}

/// The target of a two-rank test that needs no throttle: a temp dir on a tmpfs, so the ranks'
/// I/O never waits for the machine's shared disk (CI runs beside a `dd oflag=direct` load).
pub fn ram_target_or_skip(test: &str) -> Option<tempfile::TempDir> {
    if !mpirun_or_skip(test) {
        return None;
    }
    crate::common::ram_tempdir_or_skip(test)
}

/// `mpirun` as the README says: root allowed, 2 cores oversubscribed, no busy polling.
pub fn mpirun(args: &[&str]) -> Output {
    mpirun_in(Path::new("."), args)
}

pub fn mpirun_in(cwd: &Path, args: &[&str]) -> Output {
    let mut all = vec!["mpirun", "--oversubscribe"];
    all.extend(args);
    run_in(cwd, &all)
}

/// A command that starts mpirun itself (e.g. inside a namespace).
pub fn mpirun_like(argv: &[&str]) -> Output {
    run_in(Path::new("."), argv)
}

/// A session directory of mpirun's own (Open MPI's `orte_tmpdir_base`), removed when
/// dropped. Without it every mpirun on the machine makes `/tmp/ompi.HOST.UID` when it is
/// missing, and two starting at the same moment (the parallel tests of one file, or another
/// checkout's tests) race: the loser fails with "mkdir ... File exists" (seen in a run
/// beside a loaded CI run).
pub fn ompi_tmpdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("iolab-ompi-")
        .tempdir()
        .expect("a temporary directory for mpirun")
}

pub fn run_in(cwd: &Path, argv: &[&str]) -> Output {
    let args = argv;
    let session = ompi_tmpdir();
    let mut cmd = Command::new(argv[0]);
    cmd.current_dir(cwd)
        .args(&argv[1..])
        .env("OMPI_MCA_orte_tmpdir_base", session.path())
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_mpi_yield_when_idle", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("start mpirun");
    let t0 = Instant::now();
    while child.try_wait().expect("wait for mpirun").is_none() {
        if t0.elapsed() > HANG_LIMIT {
            let _ = child.kill();
            panic!("{args:?} hung for {HANG_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("mpirun output");
    eprintln!(
        "--- {args:?}\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub fn the_result(dir: &Path) -> ResultDoc {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    assert_eq!(files.len(), 1, "one result file (rank 0's): {files:?}");
    ResultDoc::read(&files[0]).unwrap()
}

pub fn hist(r: &RunResult) -> LatencyHistogram {
    LatencyHistogram::from_base64(r.lat_hist.as_deref().expect("lat_hist")).expect("valid")
}

pub struct ReadCap {
    pub dir: PathBuf,
}

impl ReadCap {
    /// A cgroup whose members read at most `iops` I/Os per second from `dev`.
    pub fn new(dev: &Path, iops: u32) -> std::io::Result<ReadCap> {
        ReadCap::knob(dev, "blkio.throttle.read_iops_device", iops)
    }

    /// A cgroup whose members are held to `iops` by the blkio `knob` on `dev`.
    pub fn knob(dev: &Path, knob: &str, iops: u32) -> std::io::Result<ReadCap> {
        let rdev = std::fs::metadata(dev)?.rdev();
        let (maj, min) = (libc::major(rdev), libc::minor(rdev));
        // One per cap: the tests of one binary run at once (two capped tests in
        // mpi_saturate collided on a name made of the pid alone: "File exists").
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let dir = PathBuf::from(format!(
            "/sys/fs/cgroup/blkio/iolab-mpi-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::create_dir(&dir)?;
        let cap = ReadCap { dir };
        std::fs::write(cap.dir.join(knob), format!("{maj}:{min} {iops}"))?;
        Ok(cap)
    }
}

impl Drop for ReadCap {
    /// A cgroup with a process in it cannot go (EBUSY): a rank mpirun killed can still be
    /// ending as a test ends (a failed one most of all), which left `iolab-mpi-test-*`
    /// behind. Try again for up to 10 s.
    fn drop(&mut self) {
        let t0 = Instant::now();
        while std::fs::remove_dir(&self.dir).is_err()
            && self.dir.exists()
            && t0.elapsed() < Duration::from_secs(10)
        {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// A complete two-rank result of `command`: rank 0 and 1 in `hosts[]`, rank 0's clock the
/// reference, rank 1's offset measured.
pub fn check_two_rank_doc(doc: &ResultDoc, command: &str) {
    assert_eq!(doc.status, "complete");
    assert_eq!(doc.command, command);
    assert_eq!(
        doc.hosts.iter().map(|h| h.rank).collect::<Vec<_>>(),
        vec![0, 1]
    );
    assert_eq!(doc.hosts[0].clock_offset_ns, Some(0));
    assert!(doc.hosts[1].clock_offset_ns.is_some());
}

/// What a throttled-rank test needs: mpirun, a blkio v1 controller, an ext4 scratch file
/// system of 64 MiB on a loop device of its own, and a cgroup capping that device with
/// `knob` (`read_iops_device` or `write_iops_device`) at `iops`. `None` (after saying why)
/// when the machine cannot.
///
/// With `image_in_ram` the image lives on a tmpfs, so even fsyncs are memory copies: the
/// unthrottled rank works at memory speed (thousands of I/Os per second even on a loaded
/// machine) and the cap, a rate the kernel enforces, is the only thing that makes the other
/// rank slow. The tests' margins rest on that gap. Without it the image is in the system's
/// temp dir, where reads are page-cache hits (the image is written just before) but writes
/// reach the machine's disk. (A time-based capped read sweep, `mpi_saturate`, needs the
/// latter: over a tmpfs image the uncapped rank's reads were held up behind the capped
/// rank's, to a few hundred IOPS, for reasons not yet understood.)
pub fn throttled_scratch(
    test: &str,
    knob: &str,
    iops: u32,
    image_in_ram: bool,
) -> Option<(crate::common::ScratchFs, ReadCap)> {
    if !mpirun_or_skip(test) {
        return None;
    }
    if !Path::new("/sys/fs/cgroup/blkio")
        .join(format!("blkio.throttle.{knob}"))
        .exists()
    {
        crate::common::skip(
            test,
            "no cgroup-v1 blkio throttling at /sys/fs/cgroup/blkio",
        );
        return None;
    }
    let fs = if image_in_ram {
        crate::common::ram_scratch_or_skip(test, "ext4", 64 << 20, &[], "")?
    } else {
        crate::common::scratch_or_skip(test, "ext4", 64 << 20, &[], "")?
    };
    let dev = fs.loop_dev.as_ref().expect("a loop device").device.clone();
    match ReadCap::knob(&dev, &format!("blkio.throttle.{knob}"), iops) {
        Ok(cap) => Some((fs, cap)),
        Err(e) => {
            crate::common::skip(test, format_args!("cannot make a blkio cgroup: {e}"));
            None
        }
    }
}

/// One histogram fed with every recorded value of `runs`' histograms (value by value, not
/// through the merge under test).
pub fn fed_with(runs: &[&RunResult]) -> LatencyHistogram {
    let mut single = LatencyHistogram::new();
    for r in runs {
        for v in hist(r).h.iter_recorded() {
            single
                .h
                .record_n(v.value_iterated_to(), v.count_at_value())
                .unwrap();
        }
    }
    single
}

/// Relative float equality for figures that went through JSON (and sums in another order).
pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

/// `mpirun` with `args` for rank 0 and, when `capped` is given, rank 1 started inside that
/// cgroup (it writes its pid into `cgroup.procs`, then becomes the same command): MPMD.
pub fn mpirun_with_rank1_in(capped: Option<&Path>, args: &[&str]) -> Output {
    let Some(procs) = capped else {
        let mut argv = vec!["-np", "2"];
        argv.extend(args);
        return mpirun(&argv);
    };
    mpirun(&rank1_in_argv(procs.to_str().unwrap(), args))
}

/// mpirun's MPMD arguments: rank 0 runs `args`; rank 1 writes its pid into `procs` (a
/// cgroup's `cgroup.procs`), then becomes the same command.
pub fn rank1_in_argv<'a>(procs: &'a str, args: &[&'a str]) -> Vec<&'a str> {
    let mut argv = vec!["-np", "1"];
    argv.extend(args);
    argv.extend([
        ":",
        "-np",
        "1",
        "sh",
        "-c",
        "echo $$ > \"$0\" && exec \"$@\"",
        procs,
    ]);
    argv.extend(args);
    argv
}

/// `mpirun --oversubscribe ARGS` started in the background (the caller waits or kills it),
/// with its session directory (keep it until mpirun has ended).
pub fn spawn_mpirun(args: &[&str]) -> (std::process::Child, tempfile::TempDir) {
    let session = ompi_tmpdir();
    let child = Command::new("mpirun")
        .arg("--oversubscribe")
        .args(args)
        .env("OMPI_MCA_orte_tmpdir_base", session.path())
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_mpi_yield_when_idle", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mpirun");
    (child, session)
}

/// Ctrl-C on a spawned mpirun (it forwards the signal to every rank); its output once it
/// ended (at most `HANG_LIMIT` later).
pub fn interrupt_and_wait(mut child: std::process::Child) -> Output {
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    );
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > HANG_LIMIT {
            let _ = child.kill();
            panic!("mpirun did not end after SIGINT");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let res = child.wait_with_output().unwrap();
    eprintln!(
        "{}\n{}",
        String::from_utf8_lossy(&res.stdout),
        String::from_utf8_lossy(&res.stderr)
    );
    res
}

/// Wait (at most `HANG_LIMIT`) until `done` holds for the result file in `dir`.
pub fn wait_for_result(dir: &Path, done: impl Fn(&ResultDoc) -> bool) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < HANG_LIMIT {
        // The result file only: its temporary copy (`.run-….json.tmp`) can be read whole
        // just before the rename, and a rank killed then leaves the file as it was (under
        // load the test then found it empty: "a test was saved" had been the copy's).
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if e.path().extension().is_some_and(|x| x == "json")
                && let Ok(doc) = ResultDoc::read(&e.path())
                && done(&doc)
            {
                return true;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// After an interrupted mpirun: every rank removed its files, or — when mpirun's SIGKILL, one
/// second after the SIGTERM it forwards (`odls_base_sigkill_timeout`), caught a rank still
/// removing them on a loaded machine — the next iolab start removes the rest and says so,
/// as the README promises. Either way nothing stays. (A rank can also still be finishing its
/// cleanup as mpirun returns: its leftovers are not a dead process's yet, so this waits for
/// them to go, starting iolab again every half second, for up to 60 s: a rank's removal
/// takes well under a second here, and the generous limit costs nothing when it is quick.)
pub fn assert_cleaned_up_or_recovered(target: &Path) {
    let left = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(target)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect()
    };
    let before = left();
    if before.is_empty() {
        return;
    }
    eprintln!(
        "a rank had not finished its cleanup when mpirun ended ({before:?}); the next start must remove it"
    );
    let mut said = String::new();
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(60) {
        let out = Command::new(IOLAB)
            .args(["info", target.to_str().unwrap(), "--no-smart"])
            .output()
            .expect("run iolab");
        said.push_str(&String::from_utf8_lossy(&out.stderr));
        if left().is_empty() {
            eprintln!("removed; iolab said: {said}");
            return;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    panic!(
        "left in the target: {:?} (at first {before:?}); iolab starts meanwhile said: {said}",
        left()
    );
}

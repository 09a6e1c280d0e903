//! Figures against ground truth: a loop device over an image in /dev/shm (it serves I/O at
//! memory speed) capped by a cgroup-v1 blkio throttle of our own, which the kernel enforces
//! whatever the machine. iolab runs inside the cgroup; what it reports must be the cap.

use super::*;

use iolab::fs::loopdev::LoopDevice;

const BLKIO: &str = "/sys/fs/cgroup/blkio";

/// A blkio cgroup of ours, removed on drop (after its processes are gone).
pub(super) struct Cgroup(PathBuf);

impl Cgroup {
    fn create(name: &str) -> Cgroup {
        let p = Path::new(BLKIO).join(name);
        std::fs::create_dir(&p).expect("create blkio cgroup");
        Cgroup(p)
    }

    fn set(&self, file: &str, value: &str) {
        std::fs::write(self.0.join(file), value)
            .unwrap_or_else(|e| panic!("write {value} to {file}: {e}"));
    }

    /// `iolab args` run inside this cgroup.
    fn iolab(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// Its `cgroup.procs`: a process that writes its pid there moves into the cgroup.
    pub(super) fn procs(&self) -> PathBuf {
        self.0.join("cgroup.procs")
    }

    /// The command that starts `iolab args` inside this cgroup.
    pub(super) fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new("sh");
        c.env("NO_COLOR", "1")
            .env("IOLAB_NO_HISTORY", "1")
            .arg("-c")
            .arg(format!(
                "echo $$ > {} && exec \"$0\" \"$@\"",
                self.0.join("cgroup.procs").display()
            ))
            .arg(env!("CARGO_BIN_EXE_iolab"))
            .args(args);
        c
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        for _ in 0..50 {
            if std::fs::remove_dir(&self.0).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        eprintln!("could not remove cgroup {}", self.0.display());
    }
}

/// The tests judging a rate against its cap take turns: run at once on a 2-core machine at
/// load 11 they starved each other's loop workers (9.44 MB/s under a cap of 10, 15.93
/// under 20).
static RATE_TESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A loop device over a 64 MiB image in RAM and a cgroup setting `knob` (e.g.
/// `read_iops_device`) to `value` on it; `None` (skipped loudly) without root, loop devices,
/// /dev/shm or blkio throttling. Drop order: the cgroup, then the device, then the image.
pub(super) fn capped_loop(
    test: &str,
    knob: &str,
    value: u64,
) -> Option<(Cgroup, LoopDevice, tempfile::TempDir)> {
    if !loop_or_skip(test) {
        return None;
    }
    if !Path::new(BLKIO)
        .join(format!("blkio.throttle.{knob}"))
        .exists()
    {
        skip(
            test,
            format_args!("no cgroup-v1 blkio throttling at {BLKIO}"),
        );
        return None;
    }
    let dir = ram_tempdir_or_skip(test)?;
    let image = sparse_image(dir.path(), "capped.img", 64 << 20);
    let lo = LoopDevice::attach(&image, false).expect("attach loop device");
    let rdev = std::os::unix::fs::MetadataExt::rdev(&std::fs::metadata(&lo.device).unwrap());
    let majmin = format!("{}:{}", libc::major(rdev), libc::minor(rdev));
    let cg = Cgroup::create(&format!(
        "iolab-test-accuracy-{}-{}",
        std::process::id(),
        lo.name()
    ));
    cg.set(
        &format!("blkio.throttle.{knob}"),
        &format!("{majmin} {value}"),
    );
    Some((cg, lo, dir))
}

/// A timed run's window is its duration, not the drain after it: at depth 32 under a cap of
/// C IOPS, the run reports C (and depth 32, latency 32 / C by Little's law). Counting the 31
/// requests drained after the deadline, which the throttle's burst credit let through at
/// once, reported C + 31 / duration (511 IOPS for a cap of 500 over 3 s) and a mean queue
/// depth above the 32 in flight.
#[test]
fn a_capped_device_reports_its_cap_at_depth() {
    let _one_at_a_time = RATE_TESTS.lock().unwrap_or_else(|e| e.into_inner());
    let test = "a_capped_device_reports_its_cap_at_depth";
    const C: f64 = 200.0;
    const DEPTH: f64 = 32.0;
    let Some((cg, lo, _dir)) = capped_loop(test, "read_iops_device", C as u64) else {
        return;
    };
    let dev = lo.device.to_str().unwrap();
    let r = cg.iolab(&[
        "run",
        "--target",
        dev,
        "--allow-destroy",
        dev,
        "--prefill",
        "false",
        "--size",
        "16M",
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--iodepth",
        "32",
        "--duration",
        "2s",
        "--ramp",
        "500ms",
        "--repeat",
        "1",
        "--json",
        "--no-save",
    ]);
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    let doc = json(&r);
    let run = &doc["tests"][0]["runs"][0];
    let iops = run["iops"].as_f64().unwrap();
    let bw = run["bw_bytes_per_s"].as_f64().unwrap();
    let qd = run["avg_queue_depth"].as_f64().unwrap();
    let lat_ms = run["lat_ns"]["mean"].as_f64().unwrap() / 1e6;
    eprintln!(
        "{test}: {iops:.1} IOPS, QD {qd:.2}, mean {lat_ms:.2} ms, {} ops",
        run["ops"]
    );
    // The kernel holds the rate to the cap (the old count was 7.7 % over here); 2 % leaves
    // a loaded machine 8 requests of slack at the window's edges.
    assert!((iops - C).abs() <= 0.02 * C, "{iops} IOPS, cap {C}");
    assert!(
        (bw - iops * 4096.0).abs() < 1e-6 * bw,
        "{bw} B/s for {iops} IOPS of 4 KiB"
    );
    // No more than 32 requests are ever in flight.
    assert!(
        (DEPTH * 0.9..=DEPTH * 1.01).contains(&qd),
        "mean queue depth {qd}"
    );
    // Little's law: latency = depth / rate (160 ms) for the completed requests; the 32 in
    // flight at the deadline count their time up to it, somewhere between none and all of
    // their latency (it read 154.0 ms of 400 completions and 432 latencies). 2 % either way
    // for the throttle's edges.
    let want_ms = 1000.0 * DEPTH / C;
    let (ops, count) = (
        run["ops"].as_f64().unwrap(),
        run["lat_ns"]["count"].as_f64().unwrap(),
    );
    assert!(
        (0.98 * want_ms * ops / count..=1.02 * want_ms).contains(&lat_ms),
        "mean latency {lat_ms} ms, depth / cap = {want_ms} ms, {ops} ops, {count} latencies"
    );
}

/// The same for bandwidth, and write amplification beside it: 1 MiB writes at depth 8 under
/// a cap of 10 MB/s report 10 MB/s, and the device wrote what iolab wrote (WA 1.00 on a raw
/// device). The device counters cover the window and the drain after it: leaving the
/// drained writes out of iolab's side gave WA 1.16 (SEQ1M Q8T1 at 20 MB/s), and opening the
/// device's window at the first completion after the ramp, which iolab's window counts but
/// the device had already counted, WA 0.96.
///
/// It failed once under heavy load: WA 0.963 (26 of 27 MiB), 9.96 MB/s, in one of two runs
/// of this binary at --test-threads=2 beside three CPU-bound loops (load ~16). The device's
/// counters were read by `run_jobs`' own thread when it woke at the ramp's end; woken later
/// than the next 1 MiB completion, that write was in iolab's count and not in the device's.
/// Write amplification is now counted over one span on both sides (from before the first
/// I/O to after the last, `BlockRunOutput::write_amplification`).
#[test]
fn a_bandwidth_cap_is_reported_with_its_write_amplification() {
    let _one_at_a_time = RATE_TESTS.lock().unwrap_or_else(|e| e.into_inner());
    let test = "a_bandwidth_cap_is_reported_with_its_write_amplification";
    const CAP: f64 = 10e6;
    let Some((cg, lo, _dir)) = capped_loop(test, "write_bps_device", CAP as u64) else {
        return;
    };
    let dev = lo.device.to_str().unwrap();
    let r = cg.iolab(&[
        "run",
        "--target",
        dev,
        "--allow-destroy",
        dev,
        "--prefill",
        "false",
        "--size",
        "32M",
        "--rw",
        "write",
        "--bs",
        "1M",
        "--iodepth",
        "8",
        "--duration",
        "2s",
        "--ramp",
        "500ms",
        "--repeat",
        "1",
        "--json",
        "--no-save",
    ]);
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    let doc = json(&r);
    let run = &doc["tests"][0]["runs"][0];
    let bw = run["bw_bytes_per_s"].as_f64().unwrap();
    let iops = run["iops"].as_f64().unwrap();
    let wa = run["write_amplification"].as_f64().unwrap();
    eprintln!(
        "{test}: {:.2} MB/s, WA {wa:.3}, {} ops",
        bw / 1e6,
        run["ops"]
    );
    // 20 MB in the window are 19 whole 1 MiB writes: 19 or 20 of them is 9.96 or 10.5 MB/s.
    assert!(
        (0.95 * CAP..=1.06 * CAP).contains(&bw),
        "{bw} B/s, cap {CAP}"
    );
    assert!(
        (bw - iops * 1048576.0).abs() < 1e-6 * bw,
        "{bw} B/s for {iops} IOPS of 1 MiB"
    );
    // The device wrote the window, the drain and nothing else (a raw device: no metadata).
    assert!((0.97..=1.03).contains(&wa), "write amplification {wa}");
}

/// A window too short for the device: at 1 IOPS no read completes within 300 ms, and the run
/// says so instead of printing 0 IOPS and a latency of 0 ns as if measured; at 40 IOPS a
/// dozen completions are coarse figures, and it says that too.
#[test]
fn a_window_with_few_or_no_completions_is_warned_about() {
    let test = "a_window_with_few_or_no_completions_is_warned_about";
    let Some((cg, lo, _dir)) = capped_loop(test, "read_iops_device", 1) else {
        return;
    };
    let dev = lo.device.to_str().unwrap();
    let run = |cg: &Cgroup| -> Value {
        let r = cg.iolab(&[
            "run",
            "--target",
            dev,
            "--prefill",
            "false",
            "--size",
            "16M",
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--iodepth",
            "1",
            "--duration",
            "300ms",
            "--ramp",
            "0s",
            "--repeat",
            "1",
            "--json",
            "--no-save",
        ]);
        assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
        json(&r)
    };
    let few = |doc: &Value| -> Vec<String> {
        doc["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|w| w["code"] == "few-ios")
            .map(|w| w["message"].as_str().unwrap().to_string())
            .collect()
    };
    let doc = run(&cg);
    assert_eq!(doc["tests"][0]["runs"][0]["ops"], 0, "{doc}");
    let w = few(&doc);
    assert!(
        w.len() == 1 && w[0].contains("no I/O completed within a run's 300.0"),
        "{w:?}"
    );

    let rdev = std::os::unix::fs::MetadataExt::rdev(&std::fs::metadata(&lo.device).unwrap());
    let majmin = format!("{}:{}", libc::major(rdev), libc::minor(rdev));
    cg.set("blkio.throttle.read_iops_device", &format!("{majmin} 40"));
    let doc = run(&cg);
    let ops = doc["tests"][0]["runs"][0]["ops"].as_u64().unwrap();
    let w = few(&doc);
    assert!((1..20).contains(&ops), "{ops} ops at 40 IOPS in 300 ms");
    assert!(w.len() == 1 && w[0].contains("fewer than 20 I/Os"), "{w:?}");
}

/// Several jobs of the sync engine (one I/O in flight each) against a bandwidth cap: 4 jobs
/// of 64 KiB sequential reads under 20 MB/s report 20 MB/s, a mean queue depth of 4 and,
/// by Little's law, a mean latency of 4 x 64 KiB / 20 MB/s = 13.1 ms. (The capped tests
/// above are io_uring at depth; every job here waits its turn at the same throttle.) Alone,
/// every run read 19.99 MB/s at 13.1 ms, also beside three CPU-bound loops; beside the
/// other tests of this binary a run once read 18.09 MB/s at 14.43 ms (the loop device over
/// tmpfs slowed with them), and the median of three once failed at load ~13.
/// The loop device's kernel worker needs a CPU: a loaded machine serves less than the cap,
/// and iolab rightly reports what it served (18.09 MB/s at 14.43 ms is 4 x 64 KiB / 18.09
/// MB/s by Little's law). Load only slows a run, so the cap is judged from both sides:
/// no run above it, the best run at it; the latency on each run's own rate.
#[test]
fn sync_jobs_under_a_bandwidth_cap_share_it() {
    let _one_at_a_time = RATE_TESTS.lock().unwrap_or_else(|e| e.into_inner());
    let test = "sync_jobs_under_a_bandwidth_cap_share_it";
    const CAP: f64 = 20e6;
    const JOBS: f64 = 4.0;
    const BS: f64 = 65536.0;
    let Some((cg, lo, _dir)) = capped_loop(test, "read_bps_device", CAP as u64) else {
        return;
    };
    let dev = lo.device.to_str().unwrap();
    let r = cg.iolab(&[
        "run",
        "--target",
        dev,
        "--size",
        "32M",
        "--rw",
        "read",
        "--bs",
        "64k",
        "--jobs",
        "4",
        "--engine",
        "sync",
        "--duration",
        "2s",
        "--ramp",
        "500ms",
        "--repeat",
        "3",
        "--json",
        "--no-save",
    ]);
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    let doc = json(&r);
    let t = &doc["tests"][0];
    assert_eq!(t["name"], "SEQ64K Q1T4 read", "{t}");
    let runs = t["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    let bws: Vec<f64> = runs
        .iter()
        .map(|r| r["bw_bytes_per_s"].as_f64().unwrap())
        .collect();
    let mut qds: Vec<f64> = runs
        .iter()
        .map(|r| r["avg_queue_depth"].as_f64().unwrap())
        .collect();
    // Each run's mean latency over the one Little's law gives at its own rate.
    let mut lat_ratios: Vec<f64> = runs
        .iter()
        .zip(&bws)
        .map(|(r, bw)| r["lat_ns"]["mean"].as_f64().unwrap() / 1e9 / (JOBS * BS / bw))
        .collect();
    eprintln!(
        "{test}: {:?} MB/s, QD {qds:.2?}, mean latency / (jobs x bs / bw) {lat_ratios:.3?}",
        bws.iter()
            .map(|b| (b / 1e4).round() / 100.0)
            .collect::<Vec<_>>()
    );
    // 40 MB in a run's window are 610 reads of 64 KiB: the throttle's 100 ms slices at the
    // window's edges move a few of them, well within 5 %. No run reads more than the cap
    // (a drain or a burst counted in the window would); the best, the one the machine
    // slowed least, reads the cap: an iolab that under-reported would do so in every run.
    let best = bws.iter().copied().fold(0.0, f64::max);
    assert!(
        bws.iter().all(|bw| *bw <= 1.05 * CAP) && best >= 0.95 * CAP,
        "{bws:?} B/s, cap {CAP}"
    );
    // Four jobs, each with its one read always in flight (or being resubmitted: the
    // microseconds between a completion and the next read).
    qds.sort_by(f64::total_cmp);
    let qd = qds[1];
    assert!(
        (JOBS * 0.9..=JOBS * 1.01).contains(&qd),
        "mean queue depth {qd}"
    );
    // Every job waits its turn behind the others: a read takes jobs x bs / bw. (Above it by
    // up to 4 % here: the reads in flight when the ramp ends count their whole latency.)
    lat_ratios.sort_by(f64::total_cmp);
    let lat_ratio = lat_ratios[1];
    assert!(
        (lat_ratio - 1.0).abs() <= 0.08,
        "mean latency {lat_ratio} x jobs x bs / bw"
    );
}

/// Little's law holds on a run's figures: with no ramp, every request's time in flight in
/// the window is in the queue depth and in the latency (a request still in flight at the
/// deadline up to it), so `lat_ns.count` x `lat_ns.mean` / window is `avg_queue_depth`
/// (within 1 %: the HDR histogram's mean), and IOPS x mean latency is it times `ops` /
/// `lat_ns.count`, at most `jobs` x `iodepth` requests apart. (The latency left the requests
/// in flight at the deadline out: 4 sync jobs of 64 KiB under 20 MB/s once read 8.00 MB/s at
/// 13.48 ms and depth 4.00, which Little's law says is 19 MB/s; a short window shows it most.)
pub(super) fn assert_littles_law(run: &Value, in_flight: f64) {
    let ops = run["ops"].as_f64().unwrap();
    let iops = run["iops"].as_f64().unwrap();
    let qd = run["avg_queue_depth"].as_f64().unwrap();
    let count = run["lat_ns"]["count"].as_f64().unwrap();
    let mean_s = run["lat_ns"]["mean"].as_f64().unwrap() / 1e9;
    let window_s = run["elapsed_ns"].as_f64().unwrap() / 1e9;
    assert!(
        (ops..=ops + in_flight).contains(&count),
        "{count} latencies for {ops} completions and at most {in_flight} in flight"
    );
    let time_in_flight = count * mean_s / window_s;
    assert!(
        (time_in_flight - qd).abs() <= 0.01 * qd,
        "latencies add up to depth {time_in_flight}, the window's depth is {qd}"
    );
    let little = iops * mean_s;
    let low = qd * ops / count;
    assert!(
        // (The bound is met exactly when every request in flight was cut at the deadline:
        // a rounding error then failed it, 3.893668 against 3.893668.)
        (little - low).abs() <= 0.01 * qd && low >= qd * (1.0 - in_flight / count) - 1e-9 * qd,
        "IOPS {iops} x mean {mean_s} s = {little}, depth {qd} ({ops} ops, {count} latencies)"
    );
}

/// The case above on a short window: 4 sync jobs of 64 KiB reads under 20 MB/s for 300 ms
/// (the throttle's 100 ms slices make a request wait a slice's length at the deadline).
#[test]
fn figures_of_a_short_capped_window_obey_littles_law() {
    let _one_at_a_time = RATE_TESTS.lock().unwrap_or_else(|e| e.into_inner());
    let test = "figures_of_a_short_capped_window_obey_littles_law";
    let Some((cg, lo, _dir)) = capped_loop(test, "read_bps_device", 20_000_000) else {
        return;
    };
    let dev = lo.device.to_str().unwrap();
    let r = cg.iolab(&[
        "run",
        "--target",
        dev,
        "--size",
        "32M",
        "--rw",
        "read",
        "--bs",
        "64k",
        "--jobs",
        "4",
        "--engine",
        "sync",
        "--duration",
        "300ms",
        "--ramp",
        "0s",
        "--repeat",
        "5",
        "--json",
        "--no-save",
    ]);
    assert_eq!(r.status.code(), Some(0), "{}", stderr(&r));
    let doc = json(&r);
    for run in doc["tests"][0]["runs"].as_array().unwrap() {
        eprintln!(
            "{test}: {:.2} MB/s, QD {:.2}, mean {:.2} ms, max {:.2} ms, {} ops, {} latencies",
            run["bw_bytes_per_s"].as_f64().unwrap() / 1e6,
            run["avg_queue_depth"].as_f64().unwrap(),
            run["lat_ns"]["mean"].as_f64().unwrap() / 1e6,
            run["lat_ns"]["max"].as_f64().unwrap() / 1e6,
            run["ops"],
            run["lat_ns"]["count"]
        );
        assert_littles_law(run, 4.0);
    }
}

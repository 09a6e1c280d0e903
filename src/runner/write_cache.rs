//! Could a write test's figure be the drive's write cache? Two signs, each a
//! `write-cache-suspected` warning that says what to run instead (`iolab sustain`):
//!
//! - the test's own write series shows a cliff (`stats::changepoint::cliffs`, held for at
//!   least 5 intervals) to below 60 % of the speed before, which does not come back before
//!   the end of the run (every later phase stays below that): the
//!   cache filled while the test wrote, so its figure mixes the cache and the drive;
//! - a saved `iolab sustain` result in the result directory, for the same device, found a
//!   cache larger than everything the test wrote: the whole test may have gone into it.
//!
//! The saved result is read as plain JSON (`tests[].sustain.cliffs[0].bytes_before` of a
//! pass that started with an empty cache, i.e. not a `recovery` pass), so the lookup keeps
//! working as that result grows; anything unreadable is skipped without a word.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::model::{Environment, TestResult, Warning, WarningCode};
use crate::stats::changepoint::{CliffOptions, cliffs, phases};
use crate::units::{fmt_mb_per_s, fmt_size_iec};

/// A cache cliff is deep (SLC caches fall to a half or a tenth of their speed); a drop
/// to less than this share of the speed before counts. Shallower sustained drops are left
/// to the noise warnings: a busy machine can slow a writer by a fifth for seconds.
pub const DEEP_DROP: f64 = 0.6;

/// Can the target have a write cache at all? Not when its data lives in RAM (tmpfs,
/// ramfs, zram, brd, a loop over a file in RAM: `memory_backing`): a write speed that falls
/// there and stays low is the machine (memory reclaim, other work on the CPUs), and "the
/// drive's write cache probably filled ... run iolab sustain" would send the user after a
/// cache that does not exist.
pub fn may_have_write_cache(env: &Environment) -> bool {
    memory_backing(env).is_none()
}

/// What keeps the target's data in RAM, in words (`sysinfo::resolve::memory_backing`, or a
/// loop device over a file in RAM); `None` for storage.
pub fn memory_backing(env: &Environment) -> Option<String> {
    crate::sysinfo::resolve::memory_backing(&env.fs_type, env.block_device.as_deref())
        .or_else(|| loop_in_ram(env))
}

/// A loop device over a file in RAM (tmpfs, ramfs): the same RAM as a tmpfs target
/// (sustain and run's write-cache warning took it for a drive). Not when this process's cgroup throttles its writes: then
/// it stands for a drive, as the test suite's write-cache emulator does.
fn loop_in_ram(env: &Environment) -> Option<String> {
    let name = env.block_device.as_deref()?;
    let file = env.loop_backing_file.as_deref()?;
    let home = crate::sysinfo::mounts::mount_of(Path::new(file))?;
    crate::sysinfo::resolve::memory_backing(&home.fs_type, None)?;
    let dev = std::fs::read_to_string(Path::new("/sys/class/block").join(name).join("dev")).ok()?;
    if write_throttled(dev.trim()) {
        return None;
    }
    Some(format!(
        "{name} is a loop device over a file on {}, which keeps its data in RAM",
        home.fs_type
    ))
}

/// Whether this process's cgroup (v1 blkio or v2 io) limits writes to device `maj_min`.
fn write_throttled(maj_min: &str) -> bool {
    let Ok(groups) = std::fs::read_to_string("/proc/self/cgroup") else {
        return false;
    };
    groups.lines().any(|line| {
        let mut f = line.splitn(3, ':');
        let (Some(_), Some(ctrl), Some(path)) = (f.next(), f.next(), f.next()) else {
            return false;
        };
        let path = path.trim_start_matches('/');
        let (file, limited): (_, fn(&str) -> bool) = if ctrl.split(',').any(|c| c == "blkio") {
            (
                Path::new("/sys/fs/cgroup/blkio")
                    .join(path)
                    .join("blkio.throttle.write_bps_device"),
                |rest| rest.trim() != "0",
            )
        } else if ctrl.is_empty() {
            (
                Path::new("/sys/fs/cgroup").join(path).join("io.max"),
                |rest| {
                    rest.split_whitespace()
                        .any(|k| k.starts_with('w') && !k.ends_with("=max"))
                },
            )
        } else {
            return false;
        };
        std::fs::read_to_string(file).is_ok_and(|t| {
            t.lines().any(|l| {
                l.split_once(' ')
                    .is_some_and(|(d, rest)| d == maj_min && limited(rest))
            })
        })
    })
}

/// The first cliff of a run's write series that lasts to the end of the run, as a warning.
/// `ramp_written[i]`: the bytes `test.runs[i]` wrote in its ramp, before the series starts.
/// The cliff is told from the run's start, ramp included: the cache filled from the first
/// write (a 512 MiB cache behind a 0.5 s ramp at 400 MB/s read "after 327.6 MiB (0.9 s)").
pub fn cliff_warning(test: &TestResult, ramp_written: &[u64], target: &Path) -> Option<Warning> {
    if test.direction.as_deref() != Some("write") {
        return None;
    }
    let ramp_s = test.settings.as_ref().map_or(0.0, |s| s.ramp_s);
    for (i, r) in test.runs.iter().enumerate() {
        let interval = Duration::from_millis(r.interval_ms.unwrap_or(0));
        // Whole intervals only: a last, partial one is shorter than the rest.
        let whole = r.whole_intervals();
        if interval.is_zero() || whole.len() < 10 {
            continue;
        }
        let series: Vec<f64> = whole.iter().map(|p| p.bw_bytes_per_s).collect();
        // The speed never came back: every phase from the drop to the end of the run stays
        // under DEEP_DROP of the speed before it (a stall as the cache fills can make a
        // short phase of its own before the slow level).
        let later = phases(&series, &CliffOptions::default());
        let Some(c) = cliffs(&series, interval, None).into_iter().find(|c| {
            let limit = DEEP_DROP * c.before_bytes_per_s;
            c.after_bytes_per_s < limit
                && later
                    .iter()
                    .filter(|p| p.end > c.index)
                    .all(|p| p.start < c.index || p.mean < limit)
        }) else {
            continue;
        };
        return Some(Warning {
            code: WarningCode::WriteCacheSuspected,
            message: format!(
                "run {}: the write speed fell from {} to {} MB/s after {} ({:.1} s into the run, its ramp included) and stayed there: the drive's write cache probably filled, so this figure mixes the cache and the drive; run `iolab sustain {}` to measure the cache size and the speed past it",
                r.run,
                fmt_mb_per_s(c.before_bytes_per_s),
                fmt_mb_per_s(c.after_bytes_per_s),
                fmt_size_iec(c.bytes_before as u64 + ramp_written.get(i).copied().unwrap_or(0)),
                c.at.as_secs_f64() + ramp_s,
                target.display()
            ),
            test: Some(test.name.clone()),
        });
    }
    None
}

/// A write cache a saved `iolab sustain` result found.
#[derive(Debug, Clone, PartialEq)]
pub struct KnownCache {
    pub bytes: u64,
    pub file: PathBuf,
}

/// The same drive? The kernel name must match, and so must the model, the serial number, the
/// World Wide Name and a loop device's backing file where both record one (a kernel name is
/// reused: a `loop3` over another image, or `sda` after swapping disks, is another drive).
fn same_device(a: &Environment, b: &Value) -> bool {
    let Some(dev) = a.block_device.as_deref() else {
        return false;
    };
    let env = &b["environment"];
    if env["block_device"].as_str() != Some(dev) {
        return false;
    }
    [
        (&a.device_model, "device_model"),
        (&a.device_serial, "device_serial"),
        (&a.device_wwn, "device_wwn"),
        (&a.loop_backing_file, "loop_backing_file"),
    ]
    .into_iter()
    .all(|(ours, key)| match (ours.as_deref(), env[key].as_str()) {
        (Some(x), Some(y)) => x == y,
        _ => true,
    })
}

/// The cache size a sustain result records: in a test's `sustain` detail of a pass that
/// started with an empty cache (not `recovery`), its first cliff's `bytes_before`; the
/// smallest over such tests. A top-level or per-test `cache_bytes` is read too.
fn cache_bytes(v: &Value) -> Option<u64> {
    let positive = |x: &Value| x.as_f64().filter(|n| *n >= 1.0).map(|n| n as u64);
    let mut best: Option<u64> = positive(&v["cache_bytes"]);
    for t in v["tests"].as_array().into_iter().flatten() {
        let d = &t["sustain"];
        let from_cliff = (d["pass"].as_str() != Some("recovery"))
            .then(|| positive(&d["cliffs"][0]["bytes_before"]))
            .flatten();
        for n in [from_cliff, positive(&t["cache_bytes"])]
            .into_iter()
            .flatten()
        {
            best = Some(best.map_or(n, |b| b.min(n)));
        }
    }
    best
}

/// The newest `sustain-*.json` in `dir` for the drive of `env` that found a cache.
pub fn known_cache(dir: &Path, env: &Environment) -> Option<KnownCache> {
    env.block_device.as_ref()?;
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter(|e| {
            let n = e.file_name();
            let n = n.to_string_lossy();
            n.starts_with("sustain-") && n.ends_with(".json")
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    files.sort();
    for (_, file) in files.into_iter().rev() {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        if v["command"].as_str() != Some("sustain") || !same_device(env, &v) {
            continue;
        }
        if let Some(bytes) = cache_bytes(&v) {
            return Some(KnownCache { bytes, file });
        }
    }
    None
}

/// The warning when everything a write test wrote fits in a known cache.
pub fn known_cache_warning(known: &KnownCache, test: &TestResult) -> Option<Warning> {
    if !matches!(test.direction.as_deref(), Some("write" | "mixed")) {
        return None;
    }
    let written: u64 = test
        .runs
        .iter()
        .map(|r| r.write.as_ref().map_or(r.bytes, |w| w.bytes))
        .sum();
    if written == 0 || written >= known.bytes {
        return None;
    }
    Some(Warning {
        code: WarningCode::WriteCacheSuspected,
        message: format!(
            "the test wrote {} in all, less than the {} write cache `iolab sustain` found on this drive ({}): its figure is probably the cache's; the sustained speed past it is in that result",
            fmt_size_iec(written),
            fmt_size_iec(known.bytes),
            known.file.display()
        ),
        test: Some(test.name.clone()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{IntervalPoint, RunResult};

    /// A loop device over an image on tmpfs keeps its data in RAM: no write cache there
    /// (run and sustain took it for a drive).
    #[test]
    fn a_loop_over_a_tmpfs_file_is_ram() {
        let test = "a_loop_over_a_tmpfs_file_is_ram";
        if !crate::test_skip::root_or_skip(test, "a loop device") {
            return;
        }
        let shm = Path::new("/dev/shm");
        if crate::sysinfo::mounts::mount_of(shm).is_none_or(|m| m.fs_type != "tmpfs") {
            crate::test_skip::skip(test, "/dev/shm is not a tmpfs");
            return;
        }
        let dir = tempfile::Builder::new()
            .prefix("iolab-test-")
            .tempdir_in(shm)
            .unwrap();
        let img = dir.path().join("dev.img");
        std::fs::File::create(&img)
            .unwrap()
            .set_len(8 << 20)
            .unwrap();
        let lo = match crate::fs::loopdev::LoopDevice::attach(&img, false) {
            Ok(lo) => lo,
            Err(e) => {
                crate::test_skip::skip(test, format!("losetup: {e}"));
                return;
            }
        };
        let env = crate::sysinfo::capture_environment(&lo.device);
        let name = lo.device.file_name().unwrap().to_string_lossy().to_string();
        assert_eq!(
            memory_backing(&env).as_deref(),
            Some(
                format!(
                    "{name} is a loop device over a file on tmpfs, which keeps its data in RAM"
                )
                .as_str()
            ),
            "{env:?}"
        );
        assert!(!may_have_write_cache(&env));
        drop(lo);
    }

    fn run_with(series: &[f64], bytes: u64) -> RunResult {
        RunResult {
            run: 1,
            bytes,
            interval_ms: Some(100),
            intervals: series
                .iter()
                .enumerate()
                .map(|(i, &bw)| IntervalPoint {
                    t_ms: 100 * (i as u64 + 1),
                    bw_bytes_per_s: bw,
                    bytes: (bw / 10.0) as u64,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    fn test_of(direction: &str, runs: Vec<RunResult>) -> TestResult {
        TestResult {
            name: "SEQ1M Q8T1 write".into(),
            direction: Some(direction.into()),
            runs,
            ..Default::default()
        }
    }

    /// 400 MB/s for 2 s, then 100 MB/s to the end (±1 %).
    fn cliff_series() -> Vec<f64> {
        (0..50)
            .map(|i| {
                let base = if i < 20 { 400e6 } else { 100e6 };
                base * (1.0 + 0.01 * ((i * 7 % 5) as f64 - 2.0))
            })
            .collect()
    }

    #[test]
    fn a_cliff_to_the_end_warns_and_names_sustain() {
        let t = test_of("write", vec![run_with(&cliff_series(), 1 << 30)]);
        let w = cliff_warning(&t, &[], Path::new("/mnt/ssd")).expect("warning");
        assert_eq!(w.code, WarningCode::WriteCacheSuspected);
        assert!(
            w.message.contains("iolab sustain /mnt/ssd"),
            "{}",
            w.message
        );
        assert!(
            w.message.contains("to 100.07 MB/s after 762.9 MiB"),
            "{}",
            w.message
        );
        // Not for reads; not for a flat series; not for a dip that recovers.
        assert!(cliff_warning(&test_of("read", t.runs.clone()), &[], Path::new("/")).is_none());
        let write_warns = |series: &[f64]| {
            cliff_warning(
                &test_of("write", vec![run_with(series, 1)]),
                &[],
                Path::new("/"),
            )
            .is_some()
        };
        let flat: Vec<f64> = (0..50).map(|i| 300e6 + (i % 3) as f64 * 1e6).collect();
        assert!(!write_warns(&flat));
        let mut dip = cliff_series();
        for x in dip.iter_mut().skip(35) {
            *x = 400e6;
        }
        assert!(!write_warns(&dip));
    }

    /// Regression (QA): the cache fills from the run's first write, its ramp's included.
    /// A 512 MiB cache at 400 MB/s behind a 0.5 s ramp on a throttled loop device read
    /// "fell ... after 327.6 MiB (0.9 s)", the window's share only.
    #[test]
    fn the_cliff_is_told_from_the_start_of_the_run_ramp_included() {
        let mut t = test_of("write", vec![run_with(&cliff_series(), 1 << 30)]);
        t.settings = Some(crate::model::BlockSettings {
            ramp_s: 0.5,
            ..Default::default()
        });
        let w = cliff_warning(&t, &[], Path::new("/dev/loop0")).expect("warning");
        assert!(
            w.message.contains("after 762.9 MiB (2.5 s into the run"),
            "{}",
            w.message
        );
        let w = cliff_warning(&t, &[200_000_000], Path::new("/dev/loop0")).expect("warning");
        assert!(
            w.message
                .contains("after 953.7 MiB (2.5 s into the run, its ramp included)"),
            "{}",
            w.message
        );
    }

    #[test]
    fn ram_has_no_write_cache_to_suspect() {
        let env = |fs: &str, dev: Option<&str>| Environment {
            fs_type: fs.into(),
            block_device: dev.map(str::to_string),
            ..Default::default()
        };
        assert!(!may_have_write_cache(&env("tmpfs", None)));
        assert!(!may_have_write_cache(&env("ext4", Some("zram0"))));
        assert!(may_have_write_cache(&env("ext4", Some("nvme0n1"))));
        assert!(may_have_write_cache(&env("xfs", Some("loop3"))));
    }

    #[test]
    fn a_stall_at_the_drop_then_slow_to_the_end_warns() {
        // Seen on the emulated cache (tests/device_state.rs), MB/s per 100 ms: 40, a stall of
        // two intervals as the throttle switched, then 10 with a dip every 5th interval. The
        // stall is a short phase of its own; the speed never comes back.
        let seen: [u64; 60] = [
            39, 39, 39, 41, 39, 39, 39, 41, 39, 39, 39, 41, 39, 0, 0, 5, 10, 7, 10, 10, 10, 10, 7,
            10, 10, 10, 10, 7, 10, 10, 10, 10, 10, 7, 10, 10, 10, 10, 7, 10, 10, 10, 10, 10, 7, 10,
            10, 10, 10, 7, 10, 10, 10, 10, 7, 10, 10, 10, 10, 10,
        ];
        let s: Vec<f64> = seen.iter().map(|&x| x as f64 * 1e6).collect();
        let t = test_of("write", vec![run_with(&s, 1 << 28)]);
        assert!(cliff_warning(&t, &[], Path::new("/dev/loop0")).is_some());
    }

    #[test]
    fn a_saved_sustain_result_of_the_same_drive() {
        let dir = tempfile::tempdir().unwrap();
        let env = Environment {
            block_device: Some("nvme0n1".into()),
            device_model: Some("Samsung 980".into()),
            ..Default::default()
        };
        let write = |name: &str, v: Value| {
            std::fs::write(dir.path().join(name), serde_json::to_string(&v).unwrap()).unwrap()
        };
        let write_sustain = |name: &str, environment: Value, tests: Value| {
            write(
                name,
                serde_json::json!({
                    "command": "sustain",
                    "environment": environment,
                    "tests": tests
                }),
            )
        };
        write_sustain(
            "sustain-1.json",
            serde_json::json!({"block_device": "sda", "device_model": "x"}),
            serde_json::json!([{"sustain": {"pass": "first", "cliffs": [{"bytes_before": 5.0e9}]}}]),
        );
        assert_eq!(known_cache(dir.path(), &env), None, "another drive");
        write_sustain(
            "sustain-2.json",
            serde_json::json!({"block_device": "nvme0n1", "device_model": "Samsung 980"}),
            serde_json::json!([
                {"sustain": {"pass": "first", "cliffs": [
                    {"bytes_before": 20.0e9, "fast_phase_bytes": 20.0e9},
                    {"bytes_before": 26.0e9, "fast_phase_bytes": 6.0e9}
                ]}},
                {"sustain": {"pass": "recovery", "cliffs": [{"bytes_before": 2.0e9}]}}
            ]),
        );
        write("sustain-3.json", Value::String("not a result".into()));
        write("run-1.json", serde_json::json!({"command": "run"}));
        let k = known_cache(dir.path(), &env).expect("found");
        assert_eq!(k.bytes, 20_000_000_000);
        assert!(k.file.ends_with("sustain-2.json"));
        // The same kernel name over another loop image is another device.
        let loop_env = |image: &str| Environment {
            block_device: Some("loop3".into()),
            loop_backing_file: Some(image.into()),
            ..Default::default()
        };
        write_sustain(
            "sustain-4.json",
            serde_json::json!({"block_device": "loop3", "loop_backing_file": "/a.img"}),
            serde_json::json!([{"sustain": {"pass": "first", "cliffs": [{"bytes_before": 1.0e9}]}}]),
        );
        assert_eq!(known_cache(dir.path(), &loop_env("/b.img")), None);
        assert_eq!(
            known_cache(dir.path(), &loop_env("/a.img")).map(|k| k.bytes),
            Some(1_000_000_000)
        );
        // 3 runs of 1 GiB fit in 20 GB: warned; 30 GiB do not.
        let t = test_of("write", vec![run_with(&[1.0], 1 << 30); 3]);
        let w = known_cache_warning(&k, &t).expect("warning");
        assert!(w.message.contains("wrote 3.0 GiB"), "{}", w.message);
        let big = test_of("write", vec![run_with(&[1.0], 10 << 30); 3]);
        assert!(known_cache_warning(&k, &big).is_none());
        assert!(known_cache_warning(&k, &test_of("read", t.runs.clone())).is_none());
        // No device, or no directory: nothing.
        assert_eq!(known_cache(dir.path(), &Environment::default()), None);
        assert_eq!(known_cache(Path::new("/nonexistent-iolab"), &env), None);
    }
}

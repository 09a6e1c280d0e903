//! Watching a drive's heat during a whole command: a background thread reads the
//! temperature (hwmon, or smartctl every few seconds) and the device's bytes moved
//! (/proc/diskstats) at one cadence, so the temperature series and the device's throughput
//! line up; at the end it gives the `ThermalRecord` and, when a throughput drop came while
//! the drive was hot or its throttle counters moved, the `thermal-throttling` warning
//! (`thermal::thermal_warning`). Where no sensor can be read (loop devices, RAM disks,
//! virtual disks, no smartctl) nothing is recorded and nothing is said.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::thermal::{TemperatureSource, ThermalSampler, smartctl_thermal, thermal_warning};
use crate::model::thermal::{ThermalRecord, ThrottleCounters};
use crate::model::{Environment, Warning};

/// Readings from hwmon (a small file: cheap).
pub const HWMON_INTERVAL: Duration = Duration::from_secs(1);
/// Readings through smartctl (a command that talks to the drive: tens of milliseconds).
pub const SMARTCTL_INTERVAL: Duration = Duration::from_secs(5);

/// The drive whose heat matters for a target: the whole disk under it. None for devices
/// that have no sensor of their own (loop, RAM disks, device-mapper and md stacks: their
/// disks are below, and a run on them is not worth a guess).
pub fn drive_of(env: &Environment) -> Option<String> {
    let name = env
        .parent_device
        .clone()
        .or_else(|| env.block_device.clone())?;
    const NO_SENSOR: &[&str] = &["loop", "ram", "zram", "dm-", "md", "nbd", "sr", "fd"];
    (!NO_SENSOR.iter().any(|p| name.starts_with(p))).then_some(name)
}

/// The sampling core, driven by ticks (the thread below, or a test with its own clock).
#[derive(Debug)]
pub struct HeatMonitor {
    sampler: ThermalSampler,
    interval: Duration,
    started: Instant,
    /// Device bytes (read + written) at each tick; `None` where unreadable.
    bytes: Vec<Option<u64>>,
    /// The measured block test at each tick (`os::activity`; 0: none).
    keys: Vec<u64>,
    counters_before: Option<ThrottleCounters>,
}

impl HeatMonitor {
    /// A monitor of `device` through `source`, ticking every `interval` from `started`.
    pub fn new(
        device: &str,
        source: TemperatureSource,
        interval: Duration,
        started: Instant,
        counters_before: Option<ThrottleCounters>,
    ) -> HeatMonitor {
        let mut sampler = ThermalSampler::new(device, source, interval);
        // The sampler counts its `t_ms` from its creation; the ticks' clock is `started`.
        sampler.restart_at(started);
        HeatMonitor {
            sampler,
            interval,
            started,
            bytes: Vec::new(),
            keys: Vec::new(),
            counters_before,
        }
    }

    /// One tick at `now`: a temperature reading (when one is due), the device's
    /// cumulative bytes and the measured block test running then (`os::activity::current`).
    pub fn tick(&mut self, now: Instant, device_bytes: Option<u64>, test: u64) {
        self.sampler.poll(now);
        self.bytes.push(device_bytes);
        self.keys.push(test);
    }

    /// The stretches of the throughput series to search for drops, as `(first point,
    /// points)`: each measured block test's window apart (a point is a test's when the
    /// ticks on both sides of it saw that test; the idle time between passes, a prefill,
    /// the step from one test to the next belong to none). A command that measured no
    /// block test (files, copy, trace, age) is one stretch.
    fn stretches(&self, bw: &[f64]) -> Vec<(usize, usize)> {
        let key = |i: usize| match (self.keys.get(i), self.keys.get(i + 1)) {
            (Some(a), Some(b)) if a == b => *a,
            _ => 0,
        };
        if (0..bw.len()).all(|i| key(i) == 0) {
            return if self.keys.iter().all(|k| *k == 0) {
                vec![(0, bw.len())]
            } else {
                Vec::new()
            };
        }
        let mut out: Vec<(usize, usize)> = Vec::new();
        for i in 0..bw.len() {
            let k = key(i);
            if k == 0 {
                continue;
            }
            match out.last_mut() {
                Some((first, end)) if *end == i && key(*first) == k => *end = i + 1,
                _ => out.push((i, i + 1)),
            }
        }
        out
    }

    /// The device's throughput per tick interval (bytes/s), from the cumulative counts.
    fn throughput(&self) -> Vec<f64> {
        let secs = self.interval.as_secs_f64();
        self.bytes
            .windows(2)
            .map(|w| match (w[0], w[1]) {
                (Some(a), Some(b)) => b.saturating_sub(a) as f64 / secs,
                _ => 0.0,
            })
            .collect()
    }

    /// The record (None when not one reading succeeded) and the warning, if any.
    pub fn finish(
        self,
        counters_after: Option<ThrottleCounters>,
    ) -> (Option<ThermalRecord>, Option<Warning>) {
        let bw = self.throughput();
        let stretches: Vec<(usize, &[f64])> = self
            .stretches(&bw)
            .into_iter()
            .map(|(a, b)| (a, &bw[a..b]))
            .collect();
        let interval = self.interval;
        let _ = self.started;
        let before = self.counters_before;
        let rec = self.sampler.finish(before, counters_after);
        if rec.series.is_empty() {
            return (None, None);
        }
        let w = thermal_warning(
            &stretches,
            interval,
            &rec.series,
            &rec.limits,
            rec.counters_before.as_ref(),
            rec.counters_after.as_ref(),
        );
        (Some(rec), w)
    }
}

/// The throttle counters, when smartctl can read them (NVMe and SATA); None otherwise.
fn counters(device: &str) -> Option<ThrottleCounters> {
    if !crate::fs::command::have("smartctl") {
        return None;
    }
    let s = smartctl_thermal(device, &format!("/dev/{device}")).ok()?;
    // A drive that answered: a temperature or some counter.
    (s.celsius.is_some() || s.counters != ThrottleCounters::default()).then_some(s.counters)
}

/// A running watch; `finish` stops it.
pub struct HeatWatch {
    stop: mpsc::Sender<()>,
    handle: JoinHandle<(Option<ThermalRecord>, Option<Warning>)>,
}

impl HeatWatch {
    /// Watch the drive under `env` (see `drive_of`) on a background thread; `root` is `/`
    /// (a fake sysfs in tests). None when the target has no drive worth asking.
    pub fn start(env: &Environment, root: &Path) -> Option<HeatWatch> {
        let device = drive_of(env)?;
        HeatWatch::start_on(device, root.to_path_buf(), None)
    }

    /// Watch `device`; `interval` overrides the source's default cadence.
    pub fn start_on(
        device: String,
        root: PathBuf,
        interval: Option<Duration>,
    ) -> Option<HeatWatch> {
        let (tx, rx) = mpsc::channel::<()>();
        let handle = std::thread::Builder::new()
            .name("iolab-heat".into())
            .spawn(move || watch(&device, &root, interval, &rx))
            .ok()?;
        Some(HeatWatch { stop: tx, handle })
    }

    /// Stop the thread (it takes the last counters) and return what it found.
    pub fn finish(self) -> (Option<ThermalRecord>, Option<Warning>) {
        let _ = self.stop.send(());
        self.handle.join().unwrap_or((None, None))
    }
}

fn watch(
    device: &str,
    root: &Path,
    interval: Option<Duration>,
    stop: &mpsc::Receiver<()>,
) -> (Option<ThermalRecord>, Option<Warning>) {
    let Some(source) = TemperatureSource::find(root, device) else {
        return (None, None);
    };
    // One look first: a drive that does not answer (a virtual disk, a USB bridge smartctl
    // cannot pass through) is left alone for the rest of the run.
    match source.snapshot(device) {
        Ok(s) if s.celsius.is_some() => {}
        _ => return (None, None),
    }
    let interval = interval.unwrap_or(match source {
        TemperatureSource::Hwmon(_) => HWMON_INTERVAL,
        TemperatureSource::Smartctl(_) => SMARTCTL_INTERVAL,
    });
    let on_root = root == Path::new("/");
    let before = if on_root { counters(device) } else { None };
    let read_bytes =
        || super::procdiskstats::read(device).map(|d| (d.read_sectors + d.write_sectors) * 512);
    let t0 = Instant::now();
    let mut m = HeatMonitor::new(device, source, interval, t0, before);
    let mut k = 0u32;
    loop {
        m.tick(Instant::now(), read_bytes(), crate::os::activity::current());
        k += 1;
        let next = t0 + interval * k;
        let wait = next.saturating_duration_since(Instant::now());
        match stop.recv_timeout(wait) {
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            _ => break,
        }
    }
    let after = if on_root && before.is_some() {
        counters(device)
    } else {
        None
    };
    m.finish(after)
}

/// One line for the end of a command: `drive nvme0n1: 41-63 °C during the run (12
/// readings, hwmon; warning limit 84 °C)`.
pub fn describe(rec: &ThermalRecord) -> Option<String> {
    let lo = rec.series.iter().map(|s| s.celsius).reduce(f64::min)?;
    let hi = rec.max_celsius?;
    let mut s = format!(
        "drive {}: {lo:.0}-{hi:.0} °C during the run ({} readings, {}",
        rec.device,
        rec.series.len(),
        rec.source
    );
    if let Some(w) = rec.limits.warning_celsius {
        s.push_str(&format!("; warning limit {w:.0} °C"));
    }
    s.push(')');
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::WarningCode;

    /// A fake sysfs with an NVMe drive's hwmon (warning limit 70 °C).
    fn fake(root: &Path, milli: u32) -> PathBuf {
        let d = root.join("sys/block/nvme0n1/device/hwmon1");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("temp1_input"), milli.to_string()).unwrap();
        std::fs::write(d.join("temp1_max"), "70000\n").unwrap();
        d
    }

    /// A monitor of the fake drive at `milli` m°C (`counters_before` as given) ticking once
    /// a second: the temporary root (keep it while the monitor reads), the hwmon directory,
    /// the start and the monitor.
    fn monitor(
        milli: u32,
        counters_before: Option<ThrottleCounters>,
    ) -> (tempfile::TempDir, PathBuf, Instant, HeatMonitor) {
        let t = tempfile::tempdir().unwrap();
        let d = fake(t.path(), milli);
        let src = TemperatureSource::find(t.path(), "nvme0n1").unwrap();
        assert_eq!(src, TemperatureSource::Hwmon(d.clone()));
        let t0 = Instant::now();
        let m = HeatMonitor::new("nvme0n1", src, Duration::from_secs(1), t0, counters_before);
        (t, d, t0, m)
    }

    /// Ticks a monitor once a second over a fake run: 1 GB/s while the drive warms up
    /// from 50 °C by 1 °C a second; from 30 s, hot, at `hot` °C, the device moves `slow`;
    /// at second `i` the measured block test `test(i)` runs (0: none).
    fn episode_of(
        hot: u32,
        slow: f64,
        test: impl Fn(u32) -> u64,
    ) -> (Option<ThermalRecord>, Option<Warning>) {
        let (_t, d, t0, mut m) = monitor(50_000, None);
        let mut bytes = 0u64;
        for i in 0..60u32 {
            let c = if i < 30 { 50_000 + 1000 * i } else { hot };
            std::fs::write(d.join("temp1_input"), c.to_string()).unwrap();
            let rate = if i < 30 { 1e9 } else { slow };
            m.tick(t0 + Duration::from_secs(i as u64), Some(bytes), test(i));
            bytes += (rate * (1.0 + 0.01 * ((i * 7 % 5) as f64 - 2.0))) as u64;
        }
        m.finish(None)
    }

    /// [`episode_of`] within one measured block test.
    fn episode(hot: u32, slow: f64) -> (Option<ThermalRecord>, Option<Warning>) {
        episode_of(hot, slow, |_| 1)
    }

    /// A hot drive whose throughput fell because the work changed, not the drive: `iolab
    /// sustain --recovery 30s` left it idle after its first pass (1 GB/s, then nothing),
    /// or `iolab run` went from a sequential test to a 4K one. Both read as "throughput
    /// fell from 1000 to 0 MB/s ... likely thermal throttling" (the device's throughput of
    /// the whole command was searched for drops).
    #[test]
    fn a_drop_between_tests_or_into_idle_time_is_not_heat() {
        // The first pass, then idle time (no test measured).
        let (rec, w) = episode_of(75_000, 0.0, |i| if i < 30 { 1 } else { 0 });
        assert!(rec.is_some());
        assert!(w.is_none(), "{w:?}");
        // (Judged as one series, as before, that idle time was "thermal throttling".)
        let (_, w) = episode_of(75_000, 0.0, |_| 0);
        assert!(w.is_some_and(|w| w.message.contains("to 0 MB/s")));
        // One test, then another at 40 % of its speed.
        let (_, w) = episode_of(75_000, 0.4e9, |i| if i < 30 { 1 } else { 2 });
        assert!(w.is_none(), "{w:?}");
        // The same drop within one test (above: hot_drive_with_a_drop_warns), or in a
        // command that measures no block test (files, copy, trace: the whole series), is.
        let (_, w) = episode_of(75_000, 0.4e9, |_| 0);
        assert!(w.is_some());
        // A test's window that the drop cuts in two stretches of one test: still found
        // within the test (the ticks around a test's end belong to no stretch).
        let (_, w) = episode_of(75_000, 0.4e9, |i| if i < 59 { 3 } else { 0 });
        assert!(w.is_some());
    }

    /// One short measured test on a drive hot throughout (75 °C, warning limit 70): `fast`
    /// readings at 1 GB/s, then `slow` at `slow_rate`, one reading a second; the ticks
    /// before and after belong to no test.
    fn short_test(fast: u32, slow: u32, slow_rate: f64) -> Option<Warning> {
        let (_t, _d, t0, mut m) = monitor(75_000, None);
        let mut bytes = 0u64;
        let n = fast + slow;
        for i in 0..n + 2 {
            // Ticks 1..=n+1 see the test: point i (tick i to i+1) is the test's for
            // 1 <= i <= n, the first `fast` of them fast.
            let test = u64::from((1..=n + 1).contains(&i));
            m.tick(t0 + Duration::from_secs(i as u64), Some(bytes), test);
            let rate = if i <= fast { 1e9 } else { slow_rate };
            bytes += (rate * (1.0 + 0.01 * ((i * 7 % 5) as f64 - 2.0))) as u64;
        }
        m.finish(None).1
    }

    /// What a short test can tell: a drop needs 5 readings before it and 5 after (a phase
    /// is 5 points; fewer is a blip), so within a test of fewer than 10 readings only the
    /// throttle counters can say the drive throttled. A test of 10 or more readings with a
    /// drop while hot warns; a short one neither warns without a drop nor invents one from
    /// a slow first or last reading.
    #[test]
    fn a_short_test_warns_only_about_what_it_can_see() {
        // 5 + 5 readings: the drop is seen.
        let w = short_test(5, 5, 0.4e9);
        assert!(w.is_some(), "5 + 5");
        let m = w.unwrap().message;
        assert!(m.contains("to 400 MB/s at 6.0 s"), "{m}");
        // 4 + 4, or 6 + 3: too short a phase on one side to tell a drop from a blip.
        assert!(short_test(4, 4, 0.4e9).is_none());
        assert!(short_test(6, 3, 0.4e9).is_none());
        // Steady and hot, short or long: nothing.
        for n in [3, 6, 9, 12] {
            assert!(short_test(n, 0, 0.0).is_none(), "{n} readings");
        }
        // A last reading at half speed (the test ending inside it), hot: no drop.
        assert!(short_test(8, 1, 0.5e9).is_none());
    }

    #[test]
    fn hot_drive_with_a_drop_warns() {
        let (rec, w) = episode(75_000, 0.4e9);
        let rec = rec.unwrap();
        assert_eq!(rec.series.len(), 60);
        assert_eq!(rec.max_celsius, Some(79.0));
        assert_eq!(rec.limits.warning_celsius, Some(70.0));
        assert_eq!(rec.series[10].t_ms, 10_000);
        let w = w.expect("a warning");
        assert_eq!(w.code, WarningCode::ThermalThrottling);
        assert!(w.message.contains("warning limit 70"), "{}", w.message);
        assert!(
            describe(&rec)
                .unwrap()
                .starts_with("drive nvme0n1: 50-79 °C")
        );
    }

    #[test]
    fn cool_drive_or_no_drop_says_nothing() {
        // The same drop at 50 °C (under the limit): not heat.
        let (_t, _, t0, mut m) = monitor(50_000, None);
        for i in 0..60u64 {
            let rate = if i < 30 { 1e9 as u64 } else { 4e8 as u64 };
            m.tick(t0 + Duration::from_secs(i), Some(i * rate), 0);
        }
        let (rec, w) = m.finish(None);
        assert!(rec.is_some() && w.is_none());
        // Hot but steady: no drop, no warning.
        let (rec, w) = episode(75_000, 1e9);
        assert!(rec.is_some());
        assert!(w.is_none(), "{w:?}");
    }

    #[test]
    fn moved_counters_warn() {
        let before = ThrottleCounters {
            thermal_mgmt_1_transitions: Some(3),
            ..Default::default()
        };
        let (_t, _, t0, mut m) = monitor(40_000, Some(before));
        m.tick(t0, Some(0), 0);
        let after = ThrottleCounters {
            thermal_mgmt_1_transitions: Some(5),
            ..Default::default()
        };
        let (_, w) = m.finish(Some(after));
        assert!(w.unwrap().message.contains("thermal_mgmt_1_transitions +2"));
    }

    #[test]
    fn no_sensor_no_record() {
        let env = |dev: &str| Environment {
            block_device: Some(dev.into()),
            ..Default::default()
        };
        assert_eq!(drive_of(&env("loop3")), None);
        assert_eq!(drive_of(&env("dm-0")), None);
        assert_eq!(drive_of(&env("nvme0n1")), Some("nvme0n1".into()));
        let part = Environment {
            block_device: Some("sda1".into()),
            parent_device: Some("sda".into()),
            ..Default::default()
        };
        assert_eq!(drive_of(&part), Some("sda".into()));
        assert_eq!(drive_of(&Environment::default()), None);
        // A drive without hwmon on a fake root: the thread finds nothing to read (or
        // smartctl, if installed, cannot open a device that does not exist) and returns
        // nothing, quickly.
        let t = tempfile::tempdir().unwrap();
        let watch = |drive: &str| {
            HeatWatch::start_on(
                drive.into(),
                t.path().to_path_buf(),
                Some(Duration::from_millis(10)),
            )
            .unwrap()
        };
        assert_eq!(watch("nvme9n9").finish(), (None, None));
        // The real thread on a fake hwmon: a few readings, then stopped.
        fake(t.path(), 45_000);
        let w = watch("nvme0n1");
        std::thread::sleep(Duration::from_millis(50));
        let (rec, w) = w.finish();
        let rec = rec.unwrap();
        assert!(!rec.series.is_empty());
        assert_eq!(rec.max_celsius, Some(45.0));
        assert!(w.is_none());
    }
}

//! A drive's temperature, its declared limits and its throttle counters, from smartctl's
//! JSON or from the kernel's hwmon, and a sampler the command polls during a run.
//!
//! smartctl JSON keys (smartmontools src/nvmeprint.cpp, src/ataprint.cpp):
//! - NVMe: `temperature.current`, `nvme_smart_health_information_log.temperature`,
//!   `…temperature_sensors[]`, `nvme_composite_temperature_threshold.{warning,critical}`
//!   (WCTEMP/CCTEMP, smartctl ≥ 7.3, also as `temperature.op_limit_max` /
//!   `critical_limit_max`), `…warning_temp_time` and `…critical_comp_time` (minutes),
//!   and since smartmontools issue #583 `thermal_mgmt_temperature_{1,2}_{transition_count,total_time}`.
//! - SATA: `temperature.current`, ATA attribute 194 (Temperature_Celsius) or 190
//!   (Airflow_Temperature_Cel), whose low byte is the current value; SCT status (`-x`):
//!   `ata_sct_status.temperature.{current,lifetime_max,op_limit_max,over_limit_count}`.
//!
//! hwmon (Linux drivers/nvme/host/hwmon.c, drivers/hwmon/drivetemp.c): `temp1_input` in
//! millidegrees Celsius (the NVMe composite temperature), `temp1_max` (the over-temperature
//! threshold, WCTEMP unless changed) and `temp1_crit` (CCTEMP). Found under the block
//! device's `device/hwmon*` (NVMe: the controller) or `device/hwmon/hwmon*` (drivetemp),
//! or `/sys/class/nvme/nvmeN/hwmon*`. Reading hwmon costs no command and no root, so the
//! sampler prefers it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::fs::command;
use crate::model::thermal::{
    TemperatureSample, ThermalLimits, ThermalRecord, ThermalSnapshot, ThrottleCounters,
};
use crate::model::{Warning, WarningCode};
use crate::stats::changepoint;

fn get<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(k))
}

fn num(v: &Value, path: &[&str]) -> Option<f64> {
    get(v, path)?.as_f64()
}

fn int(v: &Value, path: &[&str]) -> Option<u64> {
    get(v, path)?.as_u64()
}

/// The current temperature of ATA attribute `id` (194 or 190): the raw value's low byte
/// (the higher bytes hold min/max on many drives, e.g. raw 184685101085 = "29 (Min/Max 23/43)").
fn ata_temperature(v: &Value, id: u64) -> Option<f64> {
    let raw = super::smart::ata_attr_row(v, id)?.get("raw")?;
    let leading = raw
        .get("string")
        .and_then(Value::as_str)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse::<f64>().ok());
    leading.or_else(|| raw.get("value")?.as_u64().map(|r| (r & 0xff) as f64))
}

/// Heat from smartctl's JSON (`smartctl --json -x`; `-a` lacks the SATA SCT status).
pub fn parse_smartctl_thermal(device: &str, v: &Value) -> ThermalSnapshot {
    let log = &["nvme_smart_health_information_log"];
    let nv = |k: &str| int(v, &[log[0], k]);
    let celsius = num(v, &["temperature", "current"])
        .or_else(|| num(v, &[log[0], "temperature"]))
        .or_else(|| num(v, &["ata_sct_status", "temperature", "current"]))
        .or_else(|| ata_temperature(v, 194))
        .or_else(|| ata_temperature(v, 190));
    let sensors_celsius = get(v, &[log[0], "temperature_sensors"])
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default();
    let limits = ThermalLimits {
        warning_celsius: num(v, &["nvme_composite_temperature_threshold", "warning"])
            .or_else(|| num(v, &["ata_sct_status", "temperature", "op_limit_max"]))
            .or_else(|| num(v, &["temperature", "op_limit_max"])),
        critical_celsius: num(v, &["nvme_composite_temperature_threshold", "critical"])
            .or_else(|| num(v, &["temperature", "critical_limit_max"])),
    };
    let counters = ThrottleCounters {
        warning_temp_minutes: nv("warning_temp_time"),
        critical_temp_minutes: nv("critical_comp_time"),
        thermal_mgmt_1_transitions: nv("thermal_mgmt_temperature_1_transition_count"),
        thermal_mgmt_1_s: nv("thermal_mgmt_temperature_1_total_time"),
        thermal_mgmt_2_transitions: nv("thermal_mgmt_temperature_2_transition_count"),
        thermal_mgmt_2_s: nv("thermal_mgmt_temperature_2_total_time"),
        sct_over_limit_count: int(v, &["ata_sct_status", "temperature", "over_limit_count"]),
    };
    ThermalSnapshot {
        device: device.to_string(),
        source: "smartctl".into(),
        celsius,
        sensors_celsius,
        limits,
        counters,
        lifetime_max_celsius: num(v, &["ata_sct_status", "temperature", "lifetime_max"])
            .or_else(|| num(v, &["temperature", "lifetime_max"])),
    }
}

/// Ask smartctl (`--json -x -n standby`, as sysinfo::smart does: its exit status is a bit
/// mask and the JSON is the answer either way). `dev_path` is `/dev/nvme0n1`, `/dev/sda`.
pub fn smartctl_thermal(device: &str, dev_path: &str) -> Result<ThermalSnapshot, String> {
    if !command::have("smartctl") {
        return Err("smartctl is not installed (Debian: apt-get install smartmontools)".into());
    }
    let out = match command::run("smartctl", ["--json", "-x", "-n", "standby", dev_path]) {
        Ok(o) => o,
        Err(e) if e.stderr.trim_start().starts_with('{') => e.stderr,
        Err(e) => return Err(format!("smartctl failed: {}", e.status)),
    };
    let v: Value =
        serde_json::from_str(&out).map_err(|e| format!("smartctl gave no JSON ({e})"))?;
    Ok(parse_smartctl_thermal(device, &v))
}

/// The hwmon directory of block device `name` under `root` (`/` on a live system, a fake
/// tree in tests): `sys/block/NAME/device/hwmon*`, `…/device/hwmon/hwmon*`, or for
/// `nvmeXnY` `sys/class/nvme/nvmeX/hwmon*`. The first one with a `temp1_input`.
pub fn hwmon_dir(root: &Path, name: &str) -> Option<PathBuf> {
    let dev = root.join("sys/block").join(name).join("device");
    let mut places = vec![dev.clone(), dev.join("hwmon")];
    if let Some(ctrl) = nvme_controller(name) {
        places.push(root.join("sys/class/nvme").join(ctrl));
    }
    for place in places {
        let Ok(rd) = std::fs::read_dir(&place) else {
            continue;
        };
        let mut dirs: Vec<PathBuf> = rd
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with("hwmon"))
            .map(|e| e.path())
            .filter(|p| p.join("temp1_input").exists())
            .collect();
        dirs.sort();
        if let Some(d) = dirs.into_iter().next() {
            return Some(d);
        }
    }
    None
}

/// `nvme0n1` -> `nvme0` (also `nvme0c0n1`, `nvme0n1p2`); None for other names.
fn nvme_controller(name: &str) -> Option<String> {
    let rest = name.strip_prefix("nvme")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    (!digits.is_empty()).then(|| format!("nvme{digits}"))
}

fn millideg(p: &Path) -> Option<f64> {
    let s = std::fs::read_to_string(p).ok()?;
    s.trim().parse::<i64>().ok().map(|m| m as f64 / 1000.0)
}

/// One hwmon reading: temperature and the limits the driver exposes.
pub fn read_hwmon(device: &str, dir: &Path) -> Option<ThermalSnapshot> {
    let celsius = millideg(&dir.join("temp1_input"))?;
    // Further NVMe sensors are temp2_input… (the composite is temp1).
    let sensors_celsius = (2..=9)
        .map_while(|i| millideg(&dir.join(format!("temp{i}_input"))))
        .collect();
    Some(ThermalSnapshot {
        device: device.to_string(),
        source: "hwmon".into(),
        celsius: Some(celsius),
        sensors_celsius,
        limits: ThermalLimits {
            warning_celsius: millideg(&dir.join("temp1_max")),
            critical_celsius: millideg(&dir.join("temp1_crit")),
        },
        counters: ThrottleCounters::default(),
        lifetime_max_celsius: millideg(&dir.join("temp1_highest")),
    })
}

/// Where a sampler reads the temperature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemperatureSource {
    /// A hwmon directory (cheap: one small file per reading).
    Hwmon(PathBuf),
    /// smartctl on a device path (a command per reading: poll it every few seconds, not
    /// every 100 ms).
    Smartctl(String),
}

impl TemperatureSource {
    /// The best source for block device `name`: hwmon under `root` if the kernel exposes
    /// one, else smartctl on `/dev/NAME` if it is installed.
    pub fn find(root: &Path, name: &str) -> Option<TemperatureSource> {
        if let Some(d) = hwmon_dir(root, name) {
            return Some(TemperatureSource::Hwmon(d));
        }
        command::have("smartctl").then(|| TemperatureSource::Smartctl(format!("/dev/{name}")))
    }

    pub fn name(&self) -> &'static str {
        match self {
            TemperatureSource::Hwmon(_) => "hwmon",
            TemperatureSource::Smartctl(_) => "smartctl",
        }
    }

    /// One reading of the whole snapshot.
    pub fn snapshot(&self, device: &str) -> Result<ThermalSnapshot, String> {
        match self {
            TemperatureSource::Hwmon(d) => read_hwmon(device, d)
                .ok_or_else(|| format!("no temperature in {}", d.join("temp1_input").display())),
            TemperatureSource::Smartctl(p) => smartctl_thermal(device, p),
        }
    }
}

/// Polled from a command's progress loop: takes a reading when `interval` has passed since
/// the last one and keeps the series `(t_ms, celsius)` from its start.
#[derive(Debug)]
pub struct ThermalSampler {
    device: String,
    source: TemperatureSource,
    interval: Duration,
    started: Instant,
    last: Option<Instant>,
    limits: ThermalLimits,
    series: Vec<TemperatureSample>,
    errors: usize,
    last_error: Option<String>,
}

impl ThermalSampler {
    pub fn new(device: &str, source: TemperatureSource, interval: Duration) -> ThermalSampler {
        ThermalSampler {
            device: device.to_string(),
            source,
            interval,
            started: Instant::now(),
            last: None,
            limits: ThermalLimits::default(),
            series: Vec::new(),
            errors: 0,
            last_error: None,
        }
    }

    /// Count `t_ms` from `started` (a caller with its own clock) instead of the creation.
    pub fn restart_at(&mut self, started: Instant) {
        self.started = started;
    }

    /// Take a reading if one is due at `now`; returns it when one was taken.
    pub fn poll(&mut self, now: Instant) -> Option<f64> {
        if let Some(last) = self.last
            && now.saturating_duration_since(last) < self.interval
        {
            return None;
        }
        self.last = Some(now);
        match self.source.snapshot(&self.device) {
            Ok(s) => {
                if s.limits.warning_celsius.is_some() || s.limits.critical_celsius.is_some() {
                    self.limits = s.limits;
                }
                let c = s.celsius?;
                self.series.push(TemperatureSample {
                    t_ms: now.saturating_duration_since(self.started).as_millis() as u64,
                    celsius: c,
                });
                Some(c)
            }
            Err(e) => {
                self.errors += 1;
                self.last_error = Some(e);
                None
            }
        }
    }

    pub fn series(&self) -> &[TemperatureSample] {
        &self.series
    }

    /// Readings that failed, and the last reason.
    pub fn errors(&self) -> (usize, Option<&str>) {
        (self.errors, self.last_error.as_deref())
    }

    /// The record of the run (counters come from smartctl snapshots the command takes
    /// before and after).
    pub fn finish(
        self,
        counters_before: Option<ThrottleCounters>,
        counters_after: Option<ThrottleCounters>,
    ) -> ThermalRecord {
        let max_celsius = self.series.iter().map(|s| s.celsius).reduce(f64::max);
        ThermalRecord {
            device: self.device,
            source: self.source.name().into(),
            limits: self.limits,
            counters_before,
            counters_after,
            series: self.series,
            max_celsius,
        }
    }
}

/// Did heat slow the run? A warning when the drive's throttle counters moved between
/// `before` and `after`, or when a material throughput drop (see
/// [`changepoint::cliffs`]) happened while the drive was at or above its warning limit.
/// The drops are searched within each stretch apart: `(first, bw)`, `bw` one value per
/// `interval` from point `first` of the whole series, the same start as `temps`' `t_ms`
/// (a measured block test's window: a drop from one test to the next, or to the idle time
/// between them, is a change of work, not heat).
pub fn thermal_warning(
    stretches: &[(usize, &[f64])],
    interval: Duration,
    temps: &[TemperatureSample],
    limits: &ThermalLimits,
    before: Option<&ThrottleCounters>,
    after: Option<&ThrottleCounters>,
) -> Option<Warning> {
    let moved = match (before, after) {
        (Some(b), Some(a)) => a.increases_since(b),
        _ => Vec::new(),
    };
    if !moved.is_empty() {
        let what: Vec<String> = moved.iter().map(|(n, d)| format!("{n} +{d}")).collect();
        return Some(Warning {
            code: WarningCode::ThermalThrottling,
            message: format!(
                "the drive reports thermal throttling during the run ({}): its speed was \
                 limited by heat; cool it (airflow, heatsink) or pause between tests, and \
                 compare runs only at similar temperatures",
                what.join(", ")
            ),
            test: None,
        });
    }
    let warn_at = limits.warning_celsius?;
    // The temperature around a moment: the hottest reading within two intervals of it
    // (the sampler may poll more slowly than the throughput intervals).
    let hot_near = |t_ms: f64| -> Option<f64> {
        let reach = 2.0 * interval.as_secs_f64() * 1000.0;
        temps
            .iter()
            .filter(|s| (s.t_ms as f64 - t_ms).abs() <= reach)
            .map(|s| s.celsius)
            .reduce(f64::max)
    };
    let cliffs = stretches.iter().flat_map(|(first, bw)| {
        let start_ms = *first as f64 * interval.as_secs_f64() * 1000.0;
        changepoint::cliffs(bw, interval, None)
            .into_iter()
            .map(move |c| (start_ms, c))
    });
    for (start_ms, c) in cliffs {
        let t_ms = start_ms + c.at.as_secs_f64() * 1000.0;
        if let Some(hot) = hot_near(t_ms).filter(|h| *h >= warn_at) {
            return Some(Warning {
                code: WarningCode::ThermalThrottling,
                message: format!(
                    "throughput fell from {:.0} to {:.0} MB/s at {:.1} s while the drive was \
                     at {hot:.0} °C (warning limit {warn_at:.0} °C): likely thermal \
                     throttling; cool the drive or pause between tests before trusting the \
                     slower phase",
                    c.before_bytes_per_s / 1e6,
                    c.after_bytes_per_s / 1e6,
                    t_ms / 1000.0
                ),
                test: None,
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One stretch from point 0 at 1-s intervals.
    fn over(
        bw: &[f64],
        temps: &[TemperatureSample],
        limits: &ThermalLimits,
        before: Option<&ThrottleCounters>,
        after: Option<&ThrottleCounters>,
    ) -> Option<Warning> {
        thermal_warning(
            &[(0, bw)],
            Duration::from_secs(1),
            temps,
            limits,
            before,
            after,
        )
    }

    fn fixture(name: &str) -> Value {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/smartctl")
            .join(name);
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
    }

    #[test]
    fn nvme_fixture() {
        let s = parse_smartctl_thermal("nvme0n1", &fixture("nvme-samsung-970-evo-plus.json"));
        assert_eq!(s.source, "smartctl");
        assert_eq!(s.celsius, Some(35.0));
        assert_eq!(s.sensors_celsius, vec![35.0, 39.0]);
        assert_eq!(s.counters.warning_temp_minutes, Some(0));
        assert_eq!(s.counters.critical_temp_minutes, Some(0));
        // smartctl 7.3 printed no WCTEMP/CCTEMP for this drive.
        assert_eq!(s.limits, ThermalLimits::default());
    }

    #[test]
    fn sata_fixtures() {
        let s = parse_smartctl_thermal("sda", &fixture("sata-samsung-mz7l3480.json"));
        assert_eq!(s.celsius, Some(29.0));
        let s = parse_smartctl_thermal("sda", &fixture("sata-sct-scrutiny-ata-full.json"));
        assert_eq!(s.celsius, Some(36.0));
        assert_eq!(s.limits.warning_celsius, Some(70.0));
        assert_eq!(s.counters.sct_over_limit_count, Some(0));
        assert_eq!(s.lifetime_max_celsius, Some(57.0));
    }

    #[test]
    fn ata_attribute_low_byte_when_only_the_table_is_there() {
        let mut v = fixture("sata-samsung-mz7l3480.json");
        v.as_object_mut().unwrap().remove("temperature");
        // The raw value packs min/max above the low byte: 184685101085 & 0xff = 29.
        let t = v["ata_smart_attributes"]["table"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|a| a["id"] == 194)
            .unwrap();
        t["raw"].as_object_mut().unwrap().remove("string");
        assert_eq!(parse_smartctl_thermal("sda", &v).celsius, Some(29.0));
    }

    #[test]
    fn nvme_thresholds_and_thermal_management_counters() {
        // The keys smartctl writes (nvmeprint.cpp), with values of a drive that throttled.
        let v: Value = serde_json::from_str(
            r#"{"nvme_composite_temperature_threshold":{"warning":84,"critical":88},
                "temperature":{"op_limit_max":84,"critical_limit_max":88,"current":86},
                "nvme_smart_health_information_log":{"temperature":86,"warning_temp_time":12,
                  "critical_comp_time":0,"temperature_sensors":[86,71],
                  "thermal_mgmt_temperature_1_transition_count":5,
                  "thermal_mgmt_temperature_1_total_time":311,
                  "thermal_mgmt_temperature_2_transition_count":0,
                  "thermal_mgmt_temperature_2_total_time":0}}"#,
        )
        .unwrap();
        let s = parse_smartctl_thermal("nvme0n1", &v);
        assert_eq!(s.celsius, Some(86.0));
        assert_eq!(s.limits.warning_celsius, Some(84.0));
        assert_eq!(s.limits.critical_celsius, Some(88.0));
        assert_eq!(s.counters.warning_temp_minutes, Some(12));
        assert_eq!(s.counters.thermal_mgmt_1_transitions, Some(5));
        assert_eq!(s.counters.thermal_mgmt_1_s, Some(311));
        assert_eq!(s.counters.thermal_mgmt_2_s, Some(0));
    }

    /// A fake sysfs: `sys/block/nvme0n1/device/hwmon3` as the NVMe driver makes it.
    fn fake_hwmon(root: &Path, celsius_milli: &str) -> PathBuf {
        let d = root.join("sys/block/nvme0n1/device/hwmon3");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("temp1_input"), celsius_milli).unwrap();
        std::fs::write(d.join("temp1_max"), "84850\n").unwrap();
        std::fs::write(d.join("temp1_crit"), "87850\n").unwrap();
        std::fs::write(d.join("temp2_input"), "39850\n").unwrap();
        d
    }

    #[test]
    fn hwmon_fake_tree() {
        let t = tempfile::tempdir().unwrap();
        let d = fake_hwmon(t.path(), "41850\n");
        assert_eq!(hwmon_dir(t.path(), "nvme0n1"), Some(d.clone()));
        let s = read_hwmon("nvme0n1", &d).unwrap();
        assert_eq!(s.celsius, Some(41.85));
        assert_eq!(s.sensors_celsius, vec![39.85]);
        assert_eq!(s.limits.warning_celsius, Some(84.85));
        assert_eq!(s.limits.critical_celsius, Some(87.85));
        assert_eq!(
            TemperatureSource::find(t.path(), "nvme0n1"),
            Some(TemperatureSource::Hwmon(d))
        );
        // The class path of the controller, and drivetemp's device/hwmon/hwmonN.
        let c = t.path().join("sys/class/nvme/nvme1/hwmon0");
        std::fs::create_dir_all(&c).unwrap();
        std::fs::write(c.join("temp1_input"), "30000").unwrap();
        assert_eq!(hwmon_dir(t.path(), "nvme1n1"), Some(c));
        let s = t.path().join("sys/block/sda/device/hwmon/hwmon7");
        std::fs::create_dir_all(&s).unwrap();
        std::fs::write(s.join("temp1_input"), "33000").unwrap();
        assert_eq!(hwmon_dir(t.path(), "sda"), Some(s));
        assert_eq!(hwmon_dir(t.path(), "sdb"), None);
        assert_eq!(nvme_controller("nvme12c3n1"), Some("nvme12".into()));
        assert_eq!(nvme_controller("nvmex"), None);
    }

    #[test]
    fn sampler_polls_at_its_interval() {
        let t = tempfile::tempdir().unwrap();
        let d = fake_hwmon(t.path(), "40000");
        let mut s = ThermalSampler::new(
            "nvme0n1",
            TemperatureSource::Hwmon(d.clone()),
            Duration::from_secs(1),
        );
        let t0 = Instant::now();
        assert_eq!(s.poll(t0), Some(40.0));
        std::fs::write(d.join("temp1_input"), "45000").unwrap();
        assert_eq!(s.poll(t0 + Duration::from_millis(500)), None);
        assert_eq!(s.poll(t0 + Duration::from_millis(1000)), Some(45.0));
        assert_eq!(s.series().len(), 2);
        std::fs::remove_file(d.join("temp1_input")).unwrap();
        assert_eq!(s.poll(t0 + Duration::from_secs(3)), None);
        assert_eq!(s.errors().0, 1);
        assert!(s.errors().1.unwrap().contains("temp1_input"));
        let r = s.finish(None, None);
        assert_eq!(r.source, "hwmon");
        assert_eq!(r.max_celsius, Some(45.0));
        assert_eq!(r.limits.warning_celsius, Some(84.85));
        assert_eq!(
            TemperatureSource::Smartctl("/dev/sda".into()).name(),
            "smartctl"
        );
    }

    /// A run that heats up: 2 GB/s while the drive warms from 60 °C, throttled to 0.9 GB/s
    /// once it passes its 84 °C warning limit at 30 s.
    fn throttling_episode() -> (Vec<f64>, Vec<TemperatureSample>) {
        let bw: Vec<f64> = (0..60)
            .map(|i| if i < 30 { 2.0e9 } else { 0.9e9 } * (1.0 + 0.01 * ((i * 7 % 5) as f64 - 2.0)))
            .collect();
        let temps: Vec<TemperatureSample> = (0..60)
            .map(|i| TemperatureSample {
                t_ms: i * 1000,
                celsius: (60.0 + i as f64 * 0.85).min(86.0),
            })
            .collect();
        (bw, temps)
    }

    #[test]
    fn throttling_episode_warns() {
        let (bw, temps) = throttling_episode();
        let limits = ThermalLimits {
            warning_celsius: Some(84.0),
            critical_celsius: Some(88.0),
        };
        let w = over(&bw, &temps, &limits, None, None).expect("a warning");
        assert_eq!(w.code, "thermal-throttling");
        // The speeds are the phases' means (the series is noisy around 2000 and 900 MB/s).
        let speeds: Vec<f64> = w
            .message
            .split("from ")
            .nth(1)
            .and_then(|r| r.split(" MB/s").next())
            .map(|r| r.split(" to ").map(|x| x.parse().unwrap()).collect())
            .unwrap_or_default();
        assert!(
            speeds.len() == 2
                && (speeds[0] - 2000.0).abs() < 20.0
                && (speeds[1] - 900.0).abs() < 9.0
                && w.message.contains("at 30.0 s"),
            "{}",
            w.message
        );
        assert!(w.message.contains("84 °C"), "{}", w.message);
        // The same drop on a cool drive is a cache cliff, not heat.
        let cool: Vec<TemperatureSample> = temps
            .iter()
            .map(|s| TemperatureSample {
                celsius: 45.0,
                ..*s
            })
            .collect();
        assert!(over(&bw, &cool, &limits, None, None).is_none());
        // No limit known: no temperature rule.
        assert!(over(&bw, &temps, &ThermalLimits::default(), None, None).is_none());
    }

    #[test]
    fn moved_counters_warn_even_without_a_drop() {
        let flat = vec![1e9; 30];
        let before = ThrottleCounters {
            thermal_mgmt_1_transitions: Some(4),
            ..Default::default()
        };
        let after = ThrottleCounters {
            thermal_mgmt_1_transitions: Some(6),
            ..Default::default()
        };
        let w = over(
            &flat,
            &[],
            &ThermalLimits::default(),
            Some(&before),
            Some(&after),
        )
        .unwrap();
        assert!(
            w.message.contains("thermal_mgmt_1_transitions +2"),
            "{}",
            w.message
        );
        assert!(
            over(
                &flat,
                &[],
                &ThermalLimits::default(),
                Some(&before),
                Some(&before)
            )
            .is_none()
        );
    }
}

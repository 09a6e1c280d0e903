//! SMART health through `smartctl --json -a -n standby`: temperature, power-on hours, endurance used,
//! data written, media errors. When SMART cannot be read, say why (smartctl missing, not
//! root, a virtual device, the device refused).

use serde_json::Value;

use crate::fs::command;
use crate::model::device::{BlockDeviceInfo, SmartInfo};

/// NVMe "data units" are thousands of 512-byte units (NVMe base spec, SMART log page).
const NVME_DATA_UNIT_BYTES: u64 = 512_000;

fn unavailable(device: &str, reason: impl Into<String>) -> SmartInfo {
    SmartInfo {
        device: device.to_string(),
        available: false,
        reason: Some(reason.into()),
        ..Default::default()
    }
}

/// Why a device of this kind has no SMART of its own, if it has none.
fn virtual_reason(dev: &BlockDeviceInfo) -> Option<String> {
    let why = match dev.kind.as_str() {
        "loop" => match dev.loop_backing_file.as_deref().and_then(|f| {
            super::resolve::deviceless_home(std::path::Path::new(f)).map(|home| (f, home))
        }) {
            // No disk holds the file (tmpfs, NFS): there is no SMART anywhere under it.
            Some((f, home)) => format!(
                "{} is a loop device over {f}, a file on {home}: no disk holds it, so there is no SMART",
                dev.name
            ),
            None => format!(
                "{} is a loop device: a file backs it{}, so SMART belongs to the disk under that file",
                dev.name,
                dev.loop_backing_file
                    .as_deref()
                    .map(|f| format!(" ({f})"))
                    .unwrap_or_default()
            ),
        },
        "dm" | "md" => format!(
            "{} is a {} device: SMART belongs to its member disks",
            dev.name, dev.kind
        ),
        "zram" | "ram" => format!("{} is a RAM disk: no SMART", dev.name),
        "nbd" => format!("{} is a network block device: no SMART", dev.name),
        "partition" => format!("{} is a partition: SMART belongs to its disk", dev.name),
        _ => return None,
    };
    Some(why)
}

/// SMART of `dev`, or why it is not available.
pub fn smart_of(dev: &BlockDeviceInfo) -> SmartInfo {
    if let Some(why) = virtual_reason(dev) {
        return unavailable(&dev.name, why);
    }
    if !command::have("smartctl") {
        return unavailable(
            &dev.name,
            "smartctl is not installed (Debian: apt-get install smartmontools)",
        );
    }
    if !crate::os::is_root() {
        return unavailable(&dev.name, "smartctl needs root to open the device");
    }
    // smartctl's exit status is a bit mask (bit 2 = a SMART command failed, bit 3 = the
    // disk is failing, ...): JSON on stdout is the answer either way. The command runner
    // hands stdout over in the error when stderr is empty.
    // `-n standby`: never spin up a sleeping disk just to describe it.
    let args = ["--json", "-a", "-n", "standby", dev.dev_path.as_str()];
    let out = match command::run("smartctl", args) {
        Ok(o) => o,
        Err(e) if e.stderr.trim_start().starts_with('{') => e.stderr,
        Err(e) => return unavailable(&dev.name, format!("smartctl failed: {}", e.status)),
    };
    match serde_json::from_str::<Value>(&out) {
        Ok(v) => parse_smartctl(&dev.name, &v),
        Err(e) => unavailable(&dev.name, format!("smartctl gave no JSON ({e})")),
    }
}

/// SMART for a device chain: every physical disk in it; when there is none (a loop over a
/// file on tmpfs, a RAM disk), the reason for the bottom device.
pub fn smart_for_chain(chain: &[BlockDeviceInfo]) -> Vec<SmartInfo> {
    let disks: Vec<SmartInfo> = chain
        .iter()
        .filter(|d| d.kind == "disk")
        .map(smart_of)
        .collect();
    if !disks.is_empty() {
        return disks;
    }
    chain.last().map(smart_of).into_iter().collect()
}

fn u(v: &Value, path: &[&str]) -> Option<u64> {
    path.iter().try_fold(v, |v, k| v.get(k))?.as_u64()
}

fn s(v: &Value, path: &[&str]) -> Option<String> {
    path.iter()
        .try_fold(v, |v, k| v.get(k))?
        .as_str()
        .map(|x| x.trim().to_string())
}

/// The row of ATA attribute `id` in smartctl's JSON (`ata_smart_attributes.table`).
pub(super) fn ata_attr_row(v: &Value, id: u64) -> Option<&Value> {
    v.get("ata_smart_attributes")?
        .get("table")?
        .as_array()?
        .iter()
        .find(|a| a.get("id").and_then(Value::as_u64) == Some(id))
}

/// Raw value of ATA attribute `id`.
fn ata_attr(v: &Value, id: u64) -> Option<u64> {
    ata_attr_row(v, id)?.get("raw")?.get("value")?.as_u64()
}

/// ATA device statistics (GP log 0x04): a value by its name.
fn ata_statistic(v: &Value, name: &str) -> Option<u64> {
    v.get("ata_device_statistics")?
        .get("pages")?
        .as_array()?
        .iter()
        .filter_map(|p| p.get("table")?.as_array())
        .flatten()
        .find(|e| e.get("name").and_then(Value::as_str) == Some(name))?
        .get("value")?
        .as_u64()
}

/// Turn smartctl's JSON into `SmartInfo` (NVMe health log, ATA attributes and device
/// statistics, SCSI where the fields are common).
pub fn parse_smartctl(device: &str, v: &Value) -> SmartInfo {
    let nvme = v.get("nvme_smart_health_information_log");
    let has_data = nvme.is_some()
        || v.get("ata_smart_attributes").is_some()
        || v.get("smart_status").is_some()
        || v.get("temperature").is_some();
    if !has_data {
        let msg = v
            .get("smartctl")
            .and_then(|c| c.get("messages"))
            .and_then(Value::as_array)
            .map(|m| {
                m.iter()
                    .filter_map(|x| x.get("string").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("; ")
            })
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| "no SMART data in the answer".into());
        return unavailable(
            device,
            format!("smartctl: {msg} (virtual and USB-bridged disks often pass no SMART through)"),
        );
    }
    let nv = |k: &str| nvme.and_then(|n| n.get(k)).and_then(Value::as_u64);
    SmartInfo {
        device: device.to_string(),
        available: true,
        reason: None,
        model: s(v, &["model_name"]),
        serial: s(v, &["serial_number"]),
        firmware: s(v, &["firmware_version"]),
        health_passed: v
            .get("smart_status")
            .and_then(|x| x.get("passed"))
            .and_then(Value::as_bool),
        temperature_c: v
            .get("temperature")
            .and_then(|t| t.get("current"))
            .and_then(Value::as_i64),
        power_on_hours: u(v, &["power_on_time", "hours"]).or_else(|| nv("power_on_hours")),
        percentage_used: nv("percentage_used")
            .or_else(|| ata_statistic(v, "Percentage Used Endurance Indicator")),
        data_written_bytes: nv("data_units_written")
            .map(|d| d.saturating_mul(NVME_DATA_UNIT_BYTES))
            .or_else(|| {
                // Logical sectors: 4096 B on a 4Kn drive (smartctl says which), not always 512.
                let sector = u(v, &["logical_block_size"]).unwrap_or(512);
                ata_statistic(v, "Logical Sectors Written").map(|s| s.saturating_mul(sector))
            }),
        media_errors: nv("media_errors").or_else(|| ata_attr(v, 187)),
        reallocated_sectors: ata_attr(v, 5),
        interface_speed: s(v, &["interface_speed", "current", "string"]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvme_health_log() {
        let v: Value = serde_json::from_str(
            r#"{"model_name":"Samsung SSD 970 EVO Plus 1TB","serial_number":"S4EWNX0R1","firmware_version":"2B2QEXM7",
               "smart_status":{"passed":true},"temperature":{"current":38},"power_on_time":{"hours":5120},
               "nvme_smart_health_information_log":{"critical_warning":0,"temperature":38,"percentage_used":3,
               "data_units_read":1000,"data_units_written":61035156,"power_on_hours":5120,"media_errors":0}}"#,
        )
        .unwrap();
        let s = parse_smartctl("nvme0n1", &v);
        assert!(s.available);
        assert_eq!(s.temperature_c, Some(38));
        assert_eq!(s.power_on_hours, Some(5120));
        assert_eq!(s.percentage_used, Some(3));
        assert_eq!(s.data_written_bytes, Some(61_035_156 * 512_000));
        assert_eq!(s.media_errors, Some(0));
        assert_eq!(s.health_passed, Some(true));
    }

    #[test]
    fn ata_attributes_and_statistics() {
        let v: Value = serde_json::from_str(
            r#"{"model_name":"KINGSTON SA400S37240G","smart_status":{"passed":true},
               "temperature":{"current":31},"power_on_time":{"hours":900},
               "interface_speed":{"max":{"string":"6.0 Gb/s"},"current":{"string":"6.0 Gb/s"}},
               "ata_smart_attributes":{"table":[{"id":5,"raw":{"value":2}},{"id":187,"raw":{"value":1}}]},
               "ata_device_statistics":{"pages":[{"number":1,"table":[{"name":"Logical Sectors Written","value":1000}]},
                 {"number":7,"table":[{"name":"Percentage Used Endurance Indicator","value":12}]}]}}"#,
        )
        .unwrap();
        let s = parse_smartctl("sda", &v);
        assert_eq!(s.percentage_used, Some(12));
        assert_eq!(s.data_written_bytes, Some(512_000));
        assert_eq!(s.reallocated_sectors, Some(2));
        assert_eq!(s.media_errors, Some(1));
        assert_eq!(s.interface_speed.as_deref(), Some("6.0 Gb/s"));
        // A 4Kn drive counts 4096-byte logical sectors: ×512 gave an eighth of its writes.
        let mut v4k = v.clone();
        v4k["logical_block_size"] = Value::from(4096);
        assert_eq!(
            parse_smartctl("sda", &v4k).data_written_bytes,
            Some(4_096_000)
        );
    }

    #[test]
    fn no_smart_gives_smartctls_reason() {
        let v: Value = serde_json::from_str(
            r#"{"smartctl":{"messages":[{"string":"/dev/vda: Unable to detect device type","severity":"error"}],"exit_status":1}}"#,
        )
        .unwrap();
        let s = parse_smartctl("vda", &v);
        assert!(!s.available);
        assert!(
            s.reason
                .as_deref()
                .unwrap()
                .contains("Unable to detect device type"),
            "{:?}",
            s.reason
        );
    }

    #[test]
    fn loop_devices_have_no_smart() {
        let d = BlockDeviceInfo {
            name: "loop7".into(),
            kind: "loop".into(),
            loop_backing_file: Some("/tmp/x.img".into()),
            ..Default::default()
        };
        let s = smart_of(&d);
        assert!(!s.available);
        assert!(s.reason.unwrap().contains("loop device"));
    }
}

//! A drive's heat during a run: its temperature over time, the limits it declares and its
//! own throttle counters before and after. Documented in docs/results-schema.md ("The state of a device").

use serde::{Deserialize, Serialize};

/// One temperature reading, `t_ms` after the run started.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct TemperatureSample {
    pub t_ms: u64,
    pub celsius: f64,
}

/// The limits a drive declares.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct ThermalLimits {
    /// NVMe WCTEMP (warning composite temperature threshold), SCT "Specified Max
    /// Operating Temperature" on SATA, hwmon `temp1_max`.
    pub warning_celsius: Option<f64>,
    /// NVMe CCTEMP (critical composite temperature threshold), hwmon `temp1_crit`.
    pub critical_celsius: Option<f64>,
}

/// The drive's own counters of time spent hot and throttling (cumulative over its life;
/// a run compares them before and after).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct ThrottleCounters {
    /// NVMe "Warning Composite Temperature Time": minutes at or above WCTEMP.
    pub warning_temp_minutes: Option<u64>,
    /// NVMe "Critical Composite Temperature Time": minutes at or above CCTEMP.
    pub critical_temp_minutes: Option<u64>,
    /// NVMe host-controlled thermal management: times the drive entered light (TMT1) and
    /// heavy (TMT2) throttling, and seconds spent there.
    pub thermal_mgmt_1_transitions: Option<u64>,
    pub thermal_mgmt_1_s: Option<u64>,
    pub thermal_mgmt_2_transitions: Option<u64>,
    pub thermal_mgmt_2_s: Option<u64>,
    /// SATA SCT status: times the drive went above its operating limit.
    pub sct_over_limit_count: Option<u64>,
}

impl ThrottleCounters {
    /// Which counters grew from `before` to `self`, by how much (name, increase).
    pub fn increases_since(&self, before: &ThrottleCounters) -> Vec<(&'static str, u64)> {
        let pairs = [
            (
                "warning_temp_minutes",
                before.warning_temp_minutes,
                self.warning_temp_minutes,
            ),
            (
                "critical_temp_minutes",
                before.critical_temp_minutes,
                self.critical_temp_minutes,
            ),
            (
                "thermal_mgmt_1_transitions",
                before.thermal_mgmt_1_transitions,
                self.thermal_mgmt_1_transitions,
            ),
            (
                "thermal_mgmt_1_s",
                before.thermal_mgmt_1_s,
                self.thermal_mgmt_1_s,
            ),
            (
                "thermal_mgmt_2_transitions",
                before.thermal_mgmt_2_transitions,
                self.thermal_mgmt_2_transitions,
            ),
            (
                "thermal_mgmt_2_s",
                before.thermal_mgmt_2_s,
                self.thermal_mgmt_2_s,
            ),
            (
                "sct_over_limit_count",
                before.sct_over_limit_count,
                self.sct_over_limit_count,
            ),
        ];
        pairs
            .into_iter()
            .filter_map(|(name, b, a)| match (b, a) {
                (Some(b), Some(a)) if a > b => Some((name, a - b)),
                _ => None,
            })
            .collect()
    }
}

/// What one look at a drive's heat found (smartctl or hwmon).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ThermalSnapshot {
    /// Kernel name (`nvme0n1`, `sda`).
    pub device: String,
    /// `smartctl` or `hwmon`.
    pub source: String,
    pub celsius: Option<f64>,
    /// Further sensors (NVMe temperature sensors 1-8), when the drive has them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sensors_celsius: Vec<f64>,
    #[serde(default)]
    pub limits: ThermalLimits,
    #[serde(default)]
    pub counters: ThrottleCounters,
    /// The hottest the drive has been in its life (SATA SCT), for context.
    pub lifetime_max_celsius: Option<f64>,
}

/// The heat record of one run.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ThermalRecord {
    pub device: String,
    pub source: String,
    pub limits: ThermalLimits,
    pub counters_before: Option<ThrottleCounters>,
    pub counters_after: Option<ThrottleCounters>,
    pub series: Vec<TemperatureSample>,
    pub max_celsius: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn increases_name_what_moved() {
        let before = ThrottleCounters {
            warning_temp_minutes: Some(3),
            thermal_mgmt_1_transitions: Some(10),
            sct_over_limit_count: None,
            ..Default::default()
        };
        let after = ThrottleCounters {
            warning_temp_minutes: Some(5),
            thermal_mgmt_1_transitions: Some(10),
            sct_over_limit_count: Some(4),
            ..Default::default()
        };
        assert_eq!(
            after.increases_since(&before),
            vec![("warning_temp_minutes", 2)]
        );
        assert!(before.increases_since(&after).is_empty());
    }

    #[test]
    fn json_names_carry_units() {
        let r = ThermalRecord {
            device: "nvme0n1".into(),
            source: "hwmon".into(),
            limits: ThermalLimits {
                warning_celsius: Some(84.0),
                critical_celsius: None,
            },
            series: vec![TemperatureSample {
                t_ms: 100,
                celsius: 41.5,
            }],
            max_celsius: Some(41.5),
            ..Default::default()
        };
        let j = serde_json::to_string(&r).unwrap();
        assert!(
            j.contains(r#""series":[{"t_ms":100,"celsius":41.5}]"#),
            "{j}"
        );
        assert!(j.contains(r#""warning_celsius":84.0"#), "{j}");
        assert!(!j.contains("critical_celsius"), "{j}");
        let back: ThermalRecord = serde_json::from_str(&j).unwrap();
        assert_eq!(back, r);
    }
}

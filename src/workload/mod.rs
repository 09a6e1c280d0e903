//! What to do, as data: block workloads, presets, and the workload reference that lets the
//! matrix run any family (block presets, small files, copies, traces) on a mounted target
//! (`commands::resolve` names the families).

pub mod age;
pub mod block;
pub mod contention;
pub mod df;
pub mod offsets;
pub mod presets;
pub mod saturate;
pub mod sustain;

pub mod copy;
pub mod files;
pub mod trace;

use std::collections::BTreeMap;

use crate::error::UsageError;

/// A parsed workload reference: `FAMILY[:KEY=VALUE[:KEY=VALUE...]]`, e.g.
/// `run:preset=real:duration=2s`, `files:sizes=1,4K,cluster+1:files-per-portion=1000`,
/// `copy:dataset=media-mix:scale=0.01`, `trace:name=office:scale=0.1`.
/// Values may contain commas; keys are the family's CLI flag names without `--`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadRef {
    pub family: String,
    pub params: BTreeMap<String, String>,
}

impl WorkloadRef {
    pub fn parse(s: &str) -> Result<WorkloadRef, UsageError> {
        let mut parts = s.split(':');
        let family = parts.next().unwrap_or("").trim().to_string();
        if family.is_empty() {
            return Err(UsageError::new(format!(
                "workload '{s}': empty family (expected run, files, copy or trace)"
            )));
        }
        let mut params = BTreeMap::new();
        for p in parts {
            let (k, v) = p.split_once('=').ok_or_else(|| {
                UsageError::new(format!("workload '{s}': '{p}' is not KEY=VALUE"))
            })?;
            params.insert(k.trim().to_string(), v.trim().to_string());
        }
        Ok(WorkloadRef { family, params })
    }
}

//! The shape of copy results: one `TestResult` per phase with its params and
//! `CopyTestDetail`, and the summaries over its runs (the common ones plus the two times).

use super::CopyConfig;
use crate::model::copy::CopyTestDetail;
use crate::model::{RunResult, TestResult};
use crate::stats::repeat::summarize_test;

/// The measured phases; `Ceiling` is RAM -> RAM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    Ceiling,
    Write,
    Read,
    Copy,
    Delete,
}

impl Phase {
    pub(super) fn name(self) -> &'static str {
        match self {
            Phase::Ceiling => "ceiling",
            Phase::Write => "write",
            Phase::Read => "read",
            Phase::Copy => "copy",
            Phase::Delete => "delete",
        }
    }
}

pub(super) fn new_test(cfg: &CopyConfig, ph: Phase, cold: bool) -> TestResult {
    let s = &cfg.settings;
    let plan = &cfg.plan;
    let warm = !cold && matches!(ph, Phase::Read | Phase::Copy);
    let name = format!(
        "{} {}{}",
        plan.name,
        ph.name(),
        if warm { " (warm)" } else { "" }
    );
    let detail = CopyTestDetail {
        dataset: s.dataset.clone(),
        phase: ph.name().into(),
        source: match &s.source {
            Some(p) => crate::os::text::os_text(p.as_os_str()),
            None => "synthetic".into(),
        },
        seed: s.seed,
        scale: s.scale,
        files: plan.files.len() as u64,
        dirs: plan.dirs.len() as u64,
        data_bytes: plan.data_bytes(),
        largest_file_bytes: plan.largest().map(|f| f.size).unwrap_or(0),
        method: s.opts.method.name().into(),
        buffer_bytes: s.opts.buffer as u64,
        preserve: s.opts.preserve,
        verify_hash: s.verify.map(|k| super::verify::hash_name(k).to_string()),
        cache: if cold { "cold" } else { "warm" }.into(),
    };
    let mut params = std::collections::BTreeMap::new();
    params.insert("dataset".into(), s.dataset.clone());
    params.insert("phase".into(), ph.name().into());
    params.insert("method".into(), detail.method.clone());
    params.insert("buffer_bytes".into(), detail.buffer_bytes.to_string());
    params.insert("files".into(), detail.files.to_string());
    params.insert("data_bytes".into(), detail.data_bytes.to_string());
    params.insert("scale".into(), s.scale.to_string());
    params.insert("cache".into(), detail.cache.clone());
    TestResult {
        name,
        family: "copy".into(),
        direction: Some(
            match ph {
                Phase::Read => "read",
                Phase::Delete => "delete",
                _ => "write",
            }
            .into(),
        ),
        params,
        copy: Some(detail),
        ..Default::default()
    }
}

/// Summaries of a copy test: the common ones plus the two times.
pub(super) fn summarize_copy_test(t: &mut TestResult) {
    summarize_test(t);
    let series =
        |f: fn(&RunResult) -> Option<f64>| -> Vec<f64> { t.runs.iter().filter_map(f).collect() };
    let extra = [
        ("elapsed_ns", series(|r| Some(r.elapsed_ns as f64))),
        (
            "close_ns",
            series(|r| r.copy.as_ref().map(|c| c.close_ns as f64)),
        ),
        (
            "syncfs_ns",
            series(|r| r.copy.as_ref().map(|c| c.syncfs_ns as f64)),
        ),
    ];
    for (k, v) in extra {
        if !v.is_empty() {
            t.summary.insert(k.into(), crate::stats::summarize(&v));
        }
    }
}

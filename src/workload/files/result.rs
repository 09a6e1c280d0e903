//! Turning measured portions into the result model: run results, the contract's test
//! params, and the files-specific summaries (Belov's seconds per portion, sync time).

use crate::model::files::{FilesRunDetail, FilesTestDetail};
use crate::model::{RunResult, TestResult};
use crate::stats::repeat::summarize_test;
use crate::stats::summary::summarize;
use crate::sysinfo::diskstats::{PhaseCounters, write_amplification};
use crate::workload::files::{Layout, Method, SyncMode};

use super::config::FilesConfig;
use super::engine::Op;
use super::sizes::FileSize;

/// Turn a phase's detail into a run result.
pub fn run_result(
    run: u32,
    op: Op,
    size: u64,
    mut d: FilesRunDetail,
    dev: Option<&PhaseCounters>,
) -> RunResult {
    let elapsed: u64 = d.portion_ns.iter().sum();
    let secs = elapsed as f64 / 1e9;
    let bytes = if matches!(op, Op::Create | Op::Read) {
        d.files_done * size
    } else {
        0
    };
    let portion_s: Vec<f64> = d.portion_ns.iter().map(|&ns| ns as f64 / 1e9).collect();
    if !portion_s.is_empty() {
        let s = summarize(&portion_s);
        d.seconds_per_portion = s.mean;
        d.portion_cv = if s.cv.is_finite() { s.cv } else { 0.0 };
    }
    // Only where a sync ran (not with --sync none, nor a run stopped before its sync).
    let with_sync = elapsed + d.sync_ns;
    if op == Op::Create && with_sync > 0 && d.fsync_calls + d.syncfs_calls > 0 {
        d.files_per_s_with_sync = Some(d.files_done as f64 / (with_sync as f64 / 1e9));
    }
    let mut r = RunResult {
        run,
        elapsed_ns: elapsed,
        ops: d.files_done,
        bytes,
        files_per_s: (secs > 0.0).then(|| d.files_done as f64 / secs),
        // Empty files (`--sizes 0`) move no data: no MB/s ("0.00" read as a stalled device).
        bw_bytes_per_s: (secs > 0.0 && bytes > 0 && matches!(op, Op::Create | Op::Read))
            .then(|| bytes as f64 / secs),
        fsync_ns: (op == Op::Create && d.sync_ns > 0).then_some(d.sync_ns),
        ..Default::default()
    };
    if let Some(dc) = dev.and_then(|p| p.finish()) {
        if op == Op::Create {
            r.write_amplification = write_amplification(&dc, bytes);
        }
        r.device = Some(dc);
    }
    r.files = Some(d);
    r
}

pub fn op_name(op: Op) -> &'static str {
    match op {
        Op::Create => "create",
        Op::Stat => "stat",
        Op::Read => "read",
        Op::Delete => "delete",
    }
}

fn method_name(m: Method) -> &'static str {
    match m {
        Method::Write => "write",
        Method::CopyFileRange => "copy_file_range",
        Method::Sendfile => "sendfile",
    }
}

fn sync_name(s: SyncMode) -> &'static str {
    match s {
        SyncMode::None => "none",
        SyncMode::File => "file",
        SyncMode::Portion => "portion",
        SyncMode::End => "end",
    }
}

fn layout_name(l: Layout) -> &'static str {
    match l {
        Layout::Flat => "flat",
        Layout::PerPass => "per-pass",
        Layout::PerPortion => "per-portion",
    }
}

/// A new test for `size` and `phase` with the contract's params.
pub fn new_test(cfg: &FilesConfig, size: &FileSize, phase: &str, name: String) -> TestResult {
    let detail = FilesTestDetail {
        size_token: size.token.clone(),
        file_size_bytes: size.bytes,
        alloc_unit_bytes: cfg.alloc_unit,
        phase: phase.into(),
        method: method_name(cfg.method).into(),
        sync: sync_name(cfg.sync).into(),
        layout: layout_name(cfg.layout).into(),
        files_per_portion: cfg.files_per_portion,
        portions: cfg.portions,
        passes: cfg.passes,
        scaling: None,
    };
    let mut params = std::collections::BTreeMap::new();
    for (k, v) in [
        ("file_size_bytes", size.bytes.to_string()),
        ("size_token", size.token.clone()),
        ("phase", phase.into()),
        ("files_per_portion", cfg.files_per_portion.to_string()),
        ("portions", cfg.portions.to_string()),
        ("passes", cfg.passes.to_string()),
        ("method", detail.method.clone()),
        ("sync", detail.sync.clone()),
        ("layout", detail.layout.clone()),
        ("alloc_unit_bytes", cfg.alloc_unit.to_string()),
    ] {
        params.insert(k.to_string(), v);
    }
    TestResult {
        name,
        family: "files".into(),
        direction: Some(
            if phase == "read" || phase == "stat" {
                "read"
            } else {
                "write"
            }
            .into(),
        ),
        params,
        files: Some(detail),
        ..Default::default()
    }
}

/// Summaries of a files test: the core ones plus Belov's cell and the sync time.
pub fn summarize_files_test(t: &mut TestResult) {
    summarize_test(t);
    let spp: Vec<f64> = t
        .runs
        .iter()
        .filter_map(|r| r.files.as_ref())
        // Portions were measured (a distributed total has the figure without the series).
        .filter(|d| d.seconds_per_portion > 0.0)
        .map(|d| d.seconds_per_portion)
        .collect();
    if !spp.is_empty() {
        t.summary
            .insert("seconds_per_portion".into(), summarize(&spp));
    }
    let sync: Vec<f64> = t
        .runs
        .iter()
        .filter_map(|r| r.fsync_ns)
        .map(|ns| ns as f64 / 1e9)
        .collect();
    if !sync.is_empty() {
        t.summary.insert("sync_seconds".into(), summarize(&sync));
    }
}

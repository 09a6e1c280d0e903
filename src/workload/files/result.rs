//! Turning measured portions into the result model: run results, the contract's test
//! params, and the files-specific summaries (Belov's seconds per portion, sync time).

use crate::model::files::{FilesRunDetail, FilesTestDetail};
use crate::model::{ResultDoc, RunResult, TestResult};
use crate::os::cpu_wait::{Fewer, IDLE_ADVICE, Waiter};
use crate::stats::repeat::summarize_test;
use crate::stats::summary::summarize;
use crate::sysinfo::diskstats::{PhaseCounters, write_amplification};
use crate::units::fmt_size_iec;
use crate::workload::files::{Layout, Method, SyncMode};

use super::config::FilesConfig;
use super::engine::Op;
use super::sizes::FileSize;

/// A create run whose device wrote more than its files can hold explains (`held`, as df's
/// growth is judged): another program wrote to the device, so the run's write
/// amplification is left out and its space record says `other_writers` (df alone missed a
/// writer that deletes as much as it writes). The bytes the device wrote, when so.
pub fn judge_device(rr: &mut RunResult, held: u64) -> Option<u64> {
    let written = rr.device.as_ref()?.write_bytes;
    if !crate::workload::df::device_wrote_beyond(written, held) {
        return None;
    }
    rr.write_amplification = None;
    if let Some(s) = rr.files.as_mut().and_then(|f| f.space.as_mut()) {
        s.other_writers = true;
        s.used_delta_bytes = None;
    }
    Some(written)
}

/// Writers that made their files on one block device at once (the ranks of one host, the
/// `--jobs` threads), as the device check names them.
pub struct SharedDevice<'a> {
    /// The device: "/dev/loop7 on node1", "the device".
    pub device: &'a str,
    /// One of the writers: "rank", "writer".
    pub writer: &'a str,
}

/// The device check of one create run of writers on one device (`runs`, one each, of test
/// `test`): each one's counters see all their writes, so all are judged against what all
/// their files hold (`held(files)`: what `files` files hold at most) by `judge_device`'s
/// rule. Beyond that, another program wrote to the device: `other-writers`, and their
/// write amplification is left out. Otherwise each carries the group's (its device bytes
/// over all their files' bytes): its own bytes alone made it about N times too high.
/// What all their files hold at most, and whether another program wrote to the device.
pub fn judge_shared_device(
    doc: &mut ResultDoc,
    test: &str,
    on: &SharedDevice,
    runs: &mut [&mut RunResult],
    held: impl Fn(u64) -> u64,
) -> (u64, bool) {
    let Some(run) = runs.first().map(|r| r.run) else {
        return (0, false);
    };
    let held: u64 = runs.iter().map(|r| held(r.ops)).sum();
    let mut wrote = None;
    for r in runs.iter_mut() {
        wrote = wrote.max(judge_device(r, held));
    }
    if let Some(written) = wrote {
        crate::workload::df::warn_other_writers_because(
            doc,
            test,
            &format!(
                "{} wrote {} in run {run} while the files of its {} {}(s) hold at most {}",
                on.device,
                fmt_size_iec(written),
                runs.len(),
                on.writer,
                fmt_size_iec(held)
            ),
            &format!(
                "the write amplification of those {}s is not the files' alone (left out)",
                on.writer
            ),
        );
    } else if runs.len() > 1 {
        let bytes: u64 = runs.iter().map(|r| r.bytes).sum();
        for r in runs.iter_mut() {
            if r.write_amplification.is_some()
                && let Some(d) = &r.device
            {
                r.write_amplification = write_amplification(d, bytes);
            }
        }
    }
    (held, wrote.is_some())
}

/// Run 1 of a create phase of 5,000 files of 4 KiB (20.48 MB) whose device wrote `written`
/// bytes, with its own write amplification: what the device checks' tests judge.
#[cfg(test)]
pub(crate) fn created_beside(written: u64) -> RunResult {
    RunResult {
        run: 1,
        ops: 5000,
        bytes: 5000 * 4096,
        write_amplification: Some(written as f64 / 20.48e6),
        device: Some(crate::model::device::DeviceCounters {
            write_bytes: written,
            ..Default::default()
        }),
        files: Some(FilesRunDetail {
            files_done: 5000,
            ..Default::default()
        }),
        ..Default::default()
    }
}

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

/// Warning `cpu-contention` of test `test` (a phase of one size, or the big file), once,
/// with the highest wait of its runs so far.
pub fn warn_contention(cfg: &FilesConfig, doc: &mut ResultDoc, test: usize) {
    let advice = format!(
        "{IDLE_ADVICE}; pinning with --cpu does not help when other programs use that CPU too"
    );
    let waiter = Waiter {
        who: "the measuring thread",
        // `--jobs` writers wait for each other's CPUs too (each writer's own config has
        // jobs 1, and with `--shared-dir` the writers' count).
        fewer: Fewer::Jobs,
        threads: cfg.writer.map_or(u64::from(cfg.jobs.max(1)), |w| w.of) as usize,
        effect: "every portion's time includes that wait and the files/s may be below what \
                 the file system gives",
        advice: &advice,
    };
    crate::workload::contention::warn(doc, test, |r| r.files.as_ref()?.cpu_wait_pct, &waiter);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::device::DeviceCounters;
    use crate::model::files::FilesSpace;

    /// A create run on a shared device: 1,000 files of 1 byte hold at most 3.9 MiB; the
    /// device wrote 57 MiB (a build beside it) and the write amplification was that over
    /// 1,000 bytes. df, which a writer that deletes what it writes leaves alone, said nothing.
    #[test]
    fn a_device_that_wrote_more_than_the_files_explain_has_other_writers() {
        let run = |written: u64| RunResult {
            write_amplification: Some(written as f64 / 1000.0),
            device: Some(DeviceCounters {
                write_bytes: written,
                ..Default::default()
            }),
            files: Some(FilesRunDetail {
                space: Some(FilesSpace {
                    used_before_bytes: 1 << 30,
                    used_with_files_bytes: (1 << 30) + (4 << 20),
                    used_delta_bytes: Some(4 << 20),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        };
        let held = 1000 * 4096;
        let mut ours = run(6 << 20);
        assert_eq!(judge_device(&mut ours, held), None);
        assert!(ours.write_amplification.is_some());
        let mut busy = run(57 << 20);
        assert_eq!(judge_device(&mut busy, held), Some(57 << 20));
        assert_eq!(busy.write_amplification, None);
        let space = busy.files.unwrap().space.unwrap();
        assert!(space.other_writers && space.used_delta_bytes.is_none());
        // No device counters (tmpfs): nothing to judge.
        let mut none = RunResult::default();
        assert_eq!(judge_device(&mut none, held), None);
    }
}

//! Belov's "one big file" column (`--big SIZE`): per run one file written in 1 MiB
//! sequential writes, synced per `--sync`, then removed.

use std::os::fd::AsRawFd;

use anyhow::Result;

use crate::model::files::FilesRunDetail;
use crate::model::{ResultDoc, ResultSink, RunResult};
use crate::os::context::RunContext;
use crate::os::cpu_wait::WaitSpan;
use crate::os::progress::Progress;
use crate::sysinfo::diskstats::{PhaseCounters, write_amplification};
use crate::workload::files::SyncMode;

use super::config::FilesConfig;
use super::engine::{PortionError, big_file, syncfs_timed};
use super::result::{new_test, summarize_files_test, warn_contention};
use super::sizes::FileSize;

const CHUNK: usize = 1 << 20;

/// The `--big` test: one large file written in the run's directory (`root`: its descriptor
/// and path), then read and deleted, as one more `TestResult`.
pub fn run_big(
    cfg: &FilesConfig,
    ctx: &RunContext,
    doc: &mut ResultDoc,
    sink: &ResultSink,
    root: (std::os::fd::BorrowedFd<'_>, &std::path::Path),
    big: u64,
) -> Result<()> {
    let (root_fd, root_path) = root;
    let size = FileSize {
        token: crate::units::fmt_size_exact(big),
        bytes: big,
        same_as: Vec::new(),
    };
    let mut test = new_test(cfg, &size, "big", format!("{} big", size.label()));
    for k in ["files_per_portion", "portions", "passes"] {
        test.params.insert(k.into(), "1".into());
    }
    if let Some(d) = test.files.as_mut() {
        (d.files_per_portion, d.portions, d.passes) = (1, 1, 1);
    }
    let idx = doc.tests.len();
    doc.tests.push(test);
    let mut chunk = vec![0u8; CHUNK];
    crate::engine::buffer::DataGen::new(crate::engine::buffer::Pattern::Random, 0xB16)
        .init(&mut chunk);
    let device = doc.environment.block_device.clone();
    let mut values = Vec::new();
    let mut run = 0u32;
    while cfg.repeat.wants_more(&values) {
        run += 1;
        let p = Progress::start(ctx.progress, &format!("{} big [{run}]", size.label()));
        let name = std::ffi::CString::new(format!("big-{run:03}")).unwrap_or_default();
        let ph = PhaseCounters::start(device.as_deref());
        let fsync = cfg.sync == SyncMode::File || cfg.sync == SyncMode::Portion;
        let waited = WaitSpan::start();
        let r = big_file(root_fd.as_raw_fd(), &name, big, &chunk, fsync, &ctx.stop).and_then(
            |(w, s)| match cfg.sync {
                SyncMode::End => Ok((w, s + syncfs_timed(root_fd.as_raw_fd())?, 0, 1)),
                _ => Ok((w, s, u64::from(fsync), 0)),
            },
        );
        if !cfg.keep_files {
            // SAFETY: valid dirfd and C string.
            unsafe { libc::unlinkat(root_fd.as_raw_fd(), name.as_ptr(), 0) };
        }
        let (write_ns, sync_ns, fsyncs, syncfs) = match r {
            Ok(v) => v,
            Err(e) => {
                p.finish("stopped");
                doc.tests[idx].error =
                    Some(e.describe(&root_path.join("big").display().to_string()));
                sink.save(doc)?;
                if matches!(e, PortionError::Stopped) {
                    ctx.stop.check()?;
                }
                anyhow::bail!(
                    "big file of {}: {}{}",
                    size.label(),
                    e.describe("the big file"),
                    if sink.path.is_some() {
                        "; the runs measured so far are saved"
                    } else {
                        ""
                    }
                );
            }
        };
        let cpu_wait_pct = waited.pct();
        let secs = write_ns as f64 / 1e9;
        let mut rr = RunResult {
            run,
            elapsed_ns: write_ns,
            ops: 1,
            bytes: big,
            files_per_s: Some(1.0 / secs.max(1e-9)),
            bw_bytes_per_s: Some(big as f64 / secs.max(1e-9)),
            fsync_ns: (sync_ns > 0).then_some(sync_ns),
            files: Some(FilesRunDetail {
                portion_ns: vec![write_ns],
                sync_ns,
                fsync_calls: fsyncs,
                syncfs_calls: syncfs,
                files_done: 1,
                seconds_per_portion: secs,
                files_per_s_with_sync: (fsyncs + syncfs > 0)
                    .then(|| 1.0 / ((write_ns + sync_ns) as f64 / 1e9).max(1e-9)),
                cpu_wait_pct,
                ..Default::default()
            }),
            ..Default::default()
        };
        if let Some(dc) = ph.and_then(|p| p.finish()) {
            rr.write_amplification = write_amplification(&dc, big);
            rr.device = Some(dc);
        }
        p.finish(&format!(
            "{} MB/s",
            crate::units::fmt_mb_per_s(big as f64 / secs.max(1e-9))
        ));
        values.push(rr.bw_bytes_per_s.unwrap_or(0.0));
        doc.tests[idx].runs.push(rr);
        summarize_files_test(&mut doc.tests[idx]);
        warn_contention(cfg, doc, idx);
        sink.save(doc)?;
    }
    Ok(())
}

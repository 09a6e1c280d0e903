//! One step of a saturation sweep: the same depth on every target at the same time (one
//! job group per direction and target, through the block runner), aggregated the way
//! the fio latency method ("measure disk performance properly") prescribes: IOPS and queue
//! depths add up, latency is the mean over all I/Os or the worst stream.

use std::time::Duration;

use anyhow::Result;

use super::block::{LiveCounters, run_block_test, settings_of};
use super::target::TestTarget;
use crate::engine::EngineKind;
use crate::model::saturate::{CurvePoint, CurvePointDetail, LatTriple, StepFigures, StreamPoint};
use crate::model::{BlockSettings, RunResult, Warning};
use crate::os::signals::StopFlag;
use crate::stats::hist::LatencyHistogram;
use crate::workload::block::{BlockTestSpec, JobSpec, Rw};
use crate::workload::saturate::{Aggregate, Statistic, SweepKind};

use crate::workload::saturate::config::{SaturateConfig, SweepSpec};

/// Read and write depths of the mixed sweep at total depth `depth` (each at least 1).
pub fn split_depth(depth: u32, mix: u32) -> (u32, u32) {
    let reads = ((depth as f64 * mix as f64 / 100.0).round() as u32).clamp(1, depth - 1);
    (reads, depth - reads)
}

/// The job groups of one target at `depth` (in-flight I/Os per job, summed over the two
/// directions of the mixed sweep).
fn groups(cfg: &SaturateConfig, sweep: &SweepSpec, depth: u32) -> Vec<JobSpec> {
    let dirs: Vec<(Rw, u32)> = match sweep.kind {
        SweepKind::Randread => vec![(Rw::Randread, depth)],
        SweepKind::Randwrite => vec![(Rw::Randwrite, depth)],
        SweepKind::Mixed => {
            let (r, w) = split_depth(depth.max(2), cfg.mix);
            vec![(Rw::Randread, r), (Rw::Randwrite, w)]
        }
    };
    dirs.into_iter()
        .map(|(rw, d)| {
            // Without io_uring every in-flight I/O needs its own thread.
            let (iodepth, jobs) = if cfg.engine == EngineKind::Sync {
                (1, d * sweep.jobs)
            } else {
                (d, sweep.jobs)
            };
            JobSpec {
                jobs,
                duration: Some(cfg.step),
                ramp: cfg.ramp,
                // No fsync at the end: flushing is not part of any request's latency and would
                // lengthen steps.
                ..JobSpec::random_direct(
                    rw,
                    cfg.bs,
                    iodepth,
                    cfg.engine,
                    cfg.seed ^ ((depth as u64) << 20),
                )
            }
        })
        .collect()
}

/// The runner spec of one step, and the target index of each group.
pub fn step_spec(
    cfg: &SaturateConfig,
    sweep: &SweepSpec,
    depth: u32,
) -> (BlockTestSpec, Vec<usize>) {
    let mut spec = BlockTestSpec {
        name: format!("{} depth {depth}", sweep.name(cfg.mix)),
        groups: Vec::new(),
    };
    let mut owner = Vec::new();
    for ti in 0..cfg.targets.len() {
        for g in groups(cfg, sweep, depth) {
            spec.groups.push(g);
            owner.push(ti);
        }
    }
    (spec, owner)
}

/// Block settings of the step's groups on the first target (recorded once per sweep).
pub fn settings(
    cfg: &SaturateConfig,
    sweep: &SweepSpec,
    target: &TestTarget,
) -> Vec<BlockSettings> {
    groups(cfg, sweep, sweep.start_depth())
        .iter()
        .map(|g| {
            let mut s = settings_of(g, target, cfg.engine.name());
            s.iodepth = 0; // swept
            s
        })
        .collect()
}

/// A measured step.
#[derive(Debug)]
pub struct StepResult {
    pub point: CurvePoint,
    pub total: RunResult,
    /// One per job group of `step_spec`, in order.
    pub per_group: Vec<RunResult>,
    pub warnings: Vec<Warning>,
    pub engines: Vec<String>,
}

fn triple(r: &RunResult) -> LatTriple {
    let l = r.lat_ns.clone().unwrap_or_default();
    LatTriple {
        mean_ns: l.mean,
        p99_ns: l.p99 as f64,
        p999_ns: l.p999 as f64,
    }
}

/// The statistic the limit is about.
pub fn pick(t: &LatTriple, s: Statistic) -> f64 {
    match s {
        Statistic::Mean => t.mean_ns,
        Statistic::P99 => t.p99_ns,
        Statistic::P999 => t.p999_ns,
    }
}

/// Run one step on all targets at once and aggregate it.
#[allow(clippy::too_many_arguments)]
pub fn run_step(
    cfg: &SaturateConfig,
    sweep: &SweepSpec,
    depth: u32,
    targets: &[TestTarget],
    stop: &StopFlag,
    live: &LiveCounters,
    index: u32,
) -> Result<StepResult> {
    let (spec, owner) = step_spec(cfg, sweep, depth);
    let refs: Vec<&TestTarget> = owner.iter().map(|&i| &targets[i]).collect();
    // Each target's device, its counters over the step's measured window.
    let names: Vec<Option<String>> = targets
        .iter()
        .map(|t| Some(crate::sysinfo::resolve::device_of_path(&t.path)?.0))
        .collect();
    let names: Vec<Option<&str>> = names.iter().map(|n| n.as_deref()).collect();
    let t0 = std::time::Instant::now();
    let mut out = run_block_test(&spec, &refs, &names, stop, Some(live), index)?;
    crate::runner::block::name_window_flag(&mut out.warnings, "--step-duration");
    let step_s = t0.elapsed().as_secs_f64();
    let mut devices = Vec::new();
    for (ti, dc) in std::mem::take(&mut out.devices).into_iter().enumerate() {
        let Some(dc) = dc else { continue };
        // What this target's write groups wrote, against what reached its device.
        let written: u64 = spec
            .groups
            .iter()
            .zip(&out.per_group)
            .zip(&owner)
            .filter(|((g, _), o)| **o == ti && g.rw.writes())
            .map(|((_, r), _)| r.bytes)
            .sum();
        if let Some(mut w) = crate::sysinfo::diskstats::cache_absorbed_warning(&dc, written) {
            w.test = Some(sweep.name(cfg.mix));
            out.warnings.push(w);
        }
        devices.push(dc);
    }
    let names: Vec<String> = owner
        .iter()
        .map(|&i| targets[i].path.display().to_string())
        .collect();
    let rule = Rule {
        aggregate: cfg.aggregate,
        statistic: cfg.statistic,
        limit_ns: cfg.limit_ns,
    };
    let mut point = aggregate(&rule, &spec, &names, &out.per_group, &out.total);
    point.at.iodepth = depth;
    point.at.jobs = sweep.jobs;
    point.cpu_pct = out.total.cpu.as_ref().map(|c| c.process_pct).unwrap_or(0.0);
    point.detail.step_s = step_s;
    point.detail.devices = devices;
    Ok(StepResult {
        point,
        total: out.total,
        per_group: out.per_group,
        warnings: out.warnings,
        engines: out.engines,
    })
}

/// How a step's latency is judged.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub aggregate: Aggregate,
    pub statistic: Statistic,
    pub limit_ns: f64,
}

/// Combine the streams (groups) of a step into one curve point (`iodepth`, `jobs` and the
/// run details are the caller's). `names[i]` is the target of group `i`.
pub fn aggregate(
    rule: &Rule,
    spec: &BlockTestSpec,
    names: &[String],
    per_group: &[RunResult],
    total: &RunResult,
) -> CurvePoint {
    let mut streams = Vec::new();
    let mut all = LatencyHistogram::new();
    for ((g, r), name) in spec.groups.iter().zip(per_group).zip(names) {
        if let Some(h) = r
            .lat_hist
            .as_deref()
            .and_then(LatencyHistogram::from_base64)
        {
            all += &h;
        }
        let t = triple(r);
        streams.push(StreamPoint {
            target: name.clone(),
            rw: g.rw.name().into(),
            at: StepFigures {
                iodepth: g.iodepth,
                jobs: g.jobs,
                iops: r.iops.unwrap_or(0.0),
                bw_bytes_per_s: r.bw_bytes_per_s.unwrap_or(0.0),
                lat_mean_ns: t.mean_ns,
                lat_p99_ns: t.p99_ns,
                lat_p999_ns: t.p999_ns,
                avg_queue_depth: r.avg_queue_depth.unwrap_or(0.0),
            },
        });
    }
    let merged = if all.is_empty() {
        triple(total)
    } else {
        let s = all.stats();
        LatTriple {
            mean_ns: s.mean,
            p99_ns: s.p99 as f64,
            p999_ns: s.p999 as f64,
        }
    };
    let worst = LatTriple {
        mean_ns: streams.iter().map(|s| s.at.lat_mean_ns).fold(0.0, f64::max),
        p99_ns: streams.iter().map(|s| s.at.lat_p99_ns).fold(0.0, f64::max),
        p999_ns: streams.iter().map(|s| s.at.lat_p999_ns).fold(0.0, f64::max),
    };
    let chosen = match rule.aggregate {
        Aggregate::Mean => merged.clone(),
        Aggregate::Max => worst.clone(),
    };
    let several = streams.len() > 1;
    let mut point = CurvePoint {
        at: StepFigures {
            iodepth: 0,
            jobs: 0,
            iops: streams.iter().map(|s| s.at.iops).sum(),
            bw_bytes_per_s: streams.iter().map(|s| s.at.bw_bytes_per_s).sum(),
            lat_mean_ns: chosen.mean_ns,
            lat_p99_ns: chosen.p99_ns,
            lat_p999_ns: chosen.p999_ns,
            avg_queue_depth: streams.iter().map(|s| s.at.avg_queue_depth).sum(),
        },
        cpu_pct: 0.0,
        within_limit: false,
        detail: CurvePointDetail {
            phase: String::new(),
            step_s: 0.0,
            lat_over_streams_mean: several.then_some(merged),
            lat_over_streams_max: several.then_some(worst),
            streams: if several { streams } else { Vec::new() },
            devices: Vec::new(),
            total_iodepth: None,
            run: None,
            set_aside_latency_ns: None,
            cpu_contended: false,
        },
    };
    point.within_limit = judged_latency(&point, rule.statistic, rule.aggregate) <= rule.limit_ns;
    point
}

/// The latency the search judges a step by: the chosen statistic of the point, or infinity
/// (the limit is broken) when no I/O completed in the step, or, with the limit on the worst
/// stream, in one of its streams: that stream's requests all took longer than the step. Two
/// targets, one of them stalled for a whole step, were judged by the other alone ("616,990
/// IOPS at depth 8 with mean latency 23.9 µs", the stalled target's figures absent).
pub fn judged_latency(p: &CurvePoint, statistic: Statistic, aggregate: Aggregate) -> f64 {
    let stalled = p.detail.streams.iter().any(|s| !s.at.completed_any());
    if !p.at.completed_any() || (aggregate == Aggregate::Max && stalled) {
        return f64::INFINITY;
    }
    let t = LatTriple {
        mean_ns: p.at.lat_mean_ns,
        p99_ns: p.at.lat_p99_ns,
        p999_ns: p.at.lat_p999_ns,
    };
    pick(&t, statistic)
}

/// Seconds one step takes at most (ramp + measurement + setup and drain).
pub fn step_seconds(cfg: &SaturateConfig) -> f64 {
    (cfg.ramp + cfg.step + Duration::from_millis(200)).as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A group's run: `n` I/Os of `lat_ms` each over one second.
    fn run(n: u64, lat_ms: f64) -> RunResult {
        let mut h = LatencyHistogram::new();
        for _ in 0..n {
            h.record((lat_ms * 1e6) as u64);
        }
        RunResult {
            iops: Some(n as f64),
            bw_bytes_per_s: Some(n as f64 * 4096.0),
            lat_ns: Some(h.stats()),
            lat_hist: Some(h.to_base64()),
            avg_queue_depth: Some(n as f64 * lat_ms / 1000.0),
            ..Default::default()
        }
    }

    /// The point of a step over two streams, one group each (random 4 KiB I/O at `depth`):
    /// `(name, rw, what it measured)`, judged on the mean latency against `limit_ms`.
    fn two_streams(
        streams: [(&str, Rw, RunResult); 2],
        depth: u32,
        agg: Aggregate,
        limit_ms: f64,
    ) -> CurvePoint {
        let spec = BlockTestSpec {
            name: "t".into(),
            groups: streams
                .iter()
                .map(|(_, rw, _)| JobSpec::random_direct(*rw, 4096, depth, EngineKind::Uring, 1))
                .collect(),
        };
        let names: Vec<String> = streams.iter().map(|(n, _, _)| n.to_string()).collect();
        let per: Vec<RunResult> = streams.into_iter().map(|(_, _, r)| r).collect();
        let rule = Rule {
            aggregate: agg,
            statistic: Statistic::Mean,
            limit_ns: limit_ms * 1e6,
        };
        aggregate(&rule, &spec, &names, &per, &RunResult::default())
    }

    #[test]
    fn iops_and_depths_add_up_latency_is_mean_or_worst() {
        // Reads: 300 I/Os at 1 ms; writes: 100 at 5 ms.
        let point = |agg| {
            let streams = [
                ("a", Rw::Randread, run(300, 1.0)),
                ("b", Rw::Randwrite, run(100, 5.0)),
            ];
            two_streams(streams, 4, agg, 4.0)
        };
        let p = point(Aggregate::Max);
        assert_eq!(p.at.iops, 400.0);
        assert!((p.at.avg_queue_depth - 0.8).abs() < 1e-9);
        assert_eq!(p.detail.streams.len(), 2);
        let all = p.detail.lat_over_streams_mean.clone().unwrap();
        let worst = p.detail.lat_over_streams_max.clone().unwrap();
        // Over all I/Os: (300 x 1 + 100 x 5) / 400 = 2 ms; worst stream: 5 ms.
        assert!((all.mean_ns / 1e6 - 2.0).abs() < 0.01, "{}", all.mean_ns);
        assert!((worst.mean_ns / 1e6 - 5.0).abs() < 0.01);
        assert_eq!(p.at.lat_mean_ns, worst.mean_ns);
        assert!(!p.within_limit, "the 5 ms writes break a 4 ms limit");
        let p = point(Aggregate::Mean);
        assert_eq!(p.at.lat_mean_ns, all.mean_ns);
        assert!(p.within_limit, "2 ms over all I/Os holds 4 ms");
    }

    /// One target stalled for the whole step (no I/O completed there) while the other ran
    /// at memory speed: the worst stream's latency is not the other's 24 µs. The step broke
    /// a limit on the worst stream; over all I/Os the completed ones are what there is.
    #[test]
    fn a_stream_that_completed_nothing_breaks_a_limit_on_the_worst() {
        let point = |agg| {
            let streams = [
                ("slow", Rw::Randread, RunResult::default()),
                ("fast", Rw::Randread, run(600, 0.024)),
            ];
            two_streams(streams, 8, agg, 10.0)
        };
        let p = point(Aggregate::Max);
        assert_eq!(p.at.iops, 600.0);
        assert!(!p.within_limit, "{p:?}");
        assert_eq!(
            judged_latency(&p, Statistic::Mean, Aggregate::Max),
            f64::INFINITY
        );
        let p = point(Aggregate::Mean);
        assert!(p.within_limit, "{p:?}");
        assert!(judged_latency(&p, Statistic::Mean, Aggregate::Mean) < 1e6);
        // No I/O at all: over the limit whatever the aggregate.
        let none = CurvePoint::default();
        assert_eq!(
            judged_latency(&none, Statistic::P99, Aggregate::Mean),
            f64::INFINITY
        );
    }

    #[test]
    fn mixed_depth_splits_by_share_and_keeps_both_directions() {
        assert_eq!(split_depth(2, 50), (1, 1));
        assert_eq!(split_depth(10, 70), (7, 3));
        assert_eq!(split_depth(2, 99), (1, 1));
        assert_eq!(split_depth(100, 99), (99, 1));
        assert_eq!(split_depth(3, 1), (1, 2));
    }
}

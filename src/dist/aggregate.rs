//! Rank 0's arithmetic: one run of every rank -> the run's totals. Counts add up; rates are
//! over the common window (earliest start to latest end, clocks corrected); queue depths
//! add up; latency histograms are merged exactly (HDR `+=`), never averaged percentiles.
//! Pure functions: no MPI here, so the plain build tests them.

use crate::dist::ClockOffset;
use crate::model::dist::{DistRun, RankWindow};
use crate::model::files::FilesRunDetail;
use crate::model::{
    CpuUsage, DirectionStats, IntervalPoint, RunResult, Summary, TestResult, Warning, WarningCode,
};

/// A straggler spread above this (median over runs) is a warning.
const STRAGGLER_WARN_PCT: f64 = 25.0;

/// Ranks starting further apart than this share of the window (median over runs) is a
/// warning.
const START_SKEW_WARN_PCT: f64 = 5.0;
use crate::stats::hist::LatencyHistogram;

/// One rank's result of one run, with its measured window on rank 0's clock (ns).
#[derive(Debug, Clone)]
pub struct RankRun<'a> {
    pub rank: u32,
    pub run: &'a RunResult,
    pub start_ns: i64,
    pub end_ns: i64,
    /// Stopped early by another rank's finish.
    pub stonewalled: bool,
}

/// The totals of one run over all ranks (`ranks` not empty, every run with a `lat_hist`).
pub fn aggregate_run(ranks: &[RankRun]) -> Result<RunResult, String> {
    let first = ranks.first().ok_or("no rank results to aggregate")?;
    let (t0, window_ns, secs) = window(ranks);

    let mut hist = LatencyHistogram::new();
    for r in ranks {
        let b64 =
            r.run.lat_hist.as_deref().ok_or_else(|| {
                format!("rank {} sent a run without its latency histogram", r.rank)
            })?;
        let h = LatencyHistogram::from_base64(b64)
            .ok_or_else(|| format!("rank {} sent an unreadable latency histogram", r.rank))?;
        hist += &h;
    }
    let ops: u64 = ranks.iter().map(|r| r.run.ops).sum();
    let bytes: u64 = ranks.iter().map(|r| r.run.bytes).sum();
    let qd: Option<f64> = ranks.iter().map(|r| r.run.avg_queue_depth).sum();

    let lat_means: Vec<f64> = ranks
        .iter()
        .map(|r| r.run.lat_ns.as_ref().map(|l| l.mean).unwrap_or(0.0))
        .collect();
    let dist = dist_of(ranks, |r| r.run.iops.unwrap_or(0.0), Some(&lat_means));
    let cpus: Vec<&CpuUsage> = ranks.iter().filter_map(|r| r.run.cpu.as_ref()).collect();
    let cpu = (!cpus.is_empty()).then(|| CpuUsage {
        user_s: cpus.iter().map(|c| c.user_s).sum(),
        sys_s: cpus.iter().map(|c| c.sys_s).sum(),
        process_pct: cpus.iter().map(|c| c.process_pct).sum(),
        max_job_thread_pct: cpus
            .iter()
            .map(|c| c.max_job_thread_pct)
            .fold(0.0, f64::max),
        max_job_thread_wait_pct: cpus
            .iter()
            .filter_map(|c| c.max_job_thread_wait_pct)
            .reduce(f64::max),
    });
    let read = merge_direction(ranks, secs, |r| r.read.as_ref())?;
    let write = merge_direction(ranks, secs, |r| r.write.as_ref())?;
    Ok(RunResult {
        run: first.run.run,
        elapsed_ns: window_ns,
        ops,
        bytes,
        iops: Some(ops as f64 / secs),
        bw_bytes_per_s: Some(bytes as f64 / secs),
        lat_ns: Some(hist.stats()),
        lat_percentiles_ns: hist.percentile_curve(),
        lat_hist: Some(hist.to_base64()),
        intervals: sum_intervals(ranks, t0),
        interval_ms: first.run.interval_ms,
        avg_queue_depth: qd,
        cpu,
        fsync_ns: ranks.iter().filter_map(|r| r.run.fsync_ns).max(),
        huge_page_buffers: ranks
            .iter()
            .map(|r| r.run.huge_page_buffers)
            .fold(None, crate::engine::buffer::both_huge),
        dist: Some(dist),
        read,
        write,
        ..Default::default()
    })
}

/// The ranks' common window on rank 0's clock: the earliest start and the latest end.
fn bounds(ranks: &[RankRun]) -> (i64, i64) {
    (
        ranks.iter().map(|r| r.start_ns).min().unwrap_or(0),
        ranks.iter().map(|r| r.end_ns).max().unwrap_or(0),
    )
}

/// The common window's start, and its length in ns (at least 1) and in seconds: what the
/// rates of the totals are over.
fn window(ranks: &[RankRun]) -> (i64, u64, f64) {
    let (t0, t_end) = bounds(ranks);
    let window_ns = (t_end - t0).max(1) as u64;
    (t0, window_ns, window_ns as f64 / 1e9)
}

/// One direction of mixed runs over all ranks (`None` unless every rank has it), its
/// latency from the merged histograms, its rate over the common window.
fn merge_direction(
    ranks: &[RankRun],
    secs: f64,
    part: impl Fn(&RunResult) -> Option<&DirectionStats>,
) -> Result<Option<DirectionStats>, String> {
    let parts: Vec<(u32, &DirectionStats)> = ranks
        .iter()
        .filter_map(|r| part(r.run).map(|d| (r.rank, d)))
        .collect();
    if parts.is_empty() || parts.len() < ranks.len() {
        return Ok(None);
    }
    let mut hist = LatencyHistogram::new();
    for (rank, d) in &parts {
        let h = d
            .lat_hist
            .as_deref()
            .and_then(LatencyHistogram::from_base64)
            .ok_or_else(|| {
                format!("rank {rank} sent a mixed run without a readable per-direction histogram")
            })?;
        hist += &h;
    }
    Ok(Some(crate::runner::recorder::direction_stats(
        parts.iter().map(|(_, d)| d.ops).sum(),
        parts.iter().map(|(_, d)| d.bytes).sum(),
        secs,
        &hist,
    )))
}

/// How the ranks' runs lined up: windows on the common clock, skews, the fastest and the
/// slowest rank by `rate`, and the mean latency over hosts (`lat_means`, one per rank, when
/// the runs time their I/Os).
fn dist_of(
    ranks: &[RankRun],
    rate: impl Fn(&RankRun) -> f64,
    lat_means: Option<&[f64]>,
) -> DistRun {
    let (t0, t_end) = bounds(ranks);
    let fastest = ranks
        .iter()
        .max_by(|a, b| rate(a).total_cmp(&rate(b)))
        .map_or(0, |r| r.rank);
    let slowest = ranks
        .iter()
        .min_by(|a, b| rate(a).total_cmp(&rate(b)))
        .map_or(0, |r| r.rank);
    let (hi, lo) = (
        ranks.iter().map(&rate).fold(f64::MIN, f64::max),
        ranks.iter().map(&rate).fold(f64::MAX, f64::min),
    );
    let spread = if hi > 0.0 {
        100.0 * (hi - lo) / hi
    } else {
        0.0
    };
    let lat = lat_means.unwrap_or(&[]);
    DistRun {
        ranks: ranks.len() as u32,
        start_skew_ns: (ranks.iter().map(|r| r.start_ns).max().unwrap_or(0) - t0) as u64,
        end_skew_ns: (t_end - ranks.iter().map(|r| r.end_ns).min().unwrap_or(t_end)) as u64,
        fastest_rank: fastest,
        slowest_rank: slowest,
        straggler_spread_pct: spread,
        lat_mean_ns_host_mean: if lat.is_empty() {
            0.0
        } else {
            lat.iter().sum::<f64>() / lat.len() as f64
        },
        lat_mean_ns_host_max: lat.iter().cloned().fold(0.0, f64::max),
        stonewalled_ranks: ranks
            .iter()
            .filter(|r| r.stonewalled)
            .map(|r| r.rank)
            .collect(),
        windows: ranks
            .iter()
            .map(|r| RankWindow {
                rank: r.rank,
                start_ns: r.start_ns - t0,
                end_ns: r.end_ns - t0,
            })
            .collect(),
    }
}

/// The totals of one phase run of `iolab files` over all ranks: files and bytes add up, the
/// rates are over the common window (earliest start to latest end of the ranks' wall-clock
/// spans of their portions, so syncs between portions are in it), Belov's seconds per
/// portion is that of all ranks together (`files_per_portion` files in the window's share),
/// and the straggler is the rank with the fewest files per second of its own span. Each
/// rank's own portion series stays in its `hosts[]` row (the aggregate has none: portions of
/// different ranks overlap).
pub fn aggregate_files_run(ranks: &[RankRun], files_per_portion: u64) -> Result<RunResult, String> {
    let first = ranks.first().ok_or("no rank results to aggregate")?;
    let (_, window_ns, secs) = window(ranks);
    let details: Vec<&FilesRunDetail> = ranks
        .iter()
        .map(|r| {
            r.run
                .files
                .as_ref()
                .ok_or_else(|| format!("rank {} sent a run without its files detail", r.rank))
        })
        .collect::<Result<_, _>>()?;
    let files: u64 = details.iter().map(|d| d.files_done).sum();
    let bytes: u64 = ranks.iter().map(|r| r.run.bytes).sum();
    let sync_ns = details.iter().map(|d| d.sync_ns).max().unwrap_or(0);
    // A final sync (--sync end) is after the window; per-portion syncs are inside it.
    let final_sync_ns = details
        .iter()
        .filter(|d| d.portion_sync_ns.is_empty())
        .map(|d| d.sync_ns)
        .max()
        .unwrap_or(0);
    let files_per_s = files as f64 / secs;
    let has_bytes = ranks.iter().any(|r| r.run.bw_bytes_per_s.is_some());
    let is_create = ranks.iter().any(|r| r.run.fsync_ns.is_some())
        || details.iter().any(|d| d.files_per_s_with_sync.is_some());
    let detail = FilesRunDetail {
        portion_ns: Vec::new(),
        portion_sync_ns: Vec::new(),
        sync_ns,
        fsync_calls: details.iter().map(|d| d.fsync_calls).sum(),
        syncfs_calls: details.iter().map(|d| d.syncfs_calls).sum(),
        files_done: files,
        seconds_per_portion: if files > 0 {
            files_per_portion as f64 / files_per_s
        } else {
            0.0
        },
        portion_cv: details.iter().map(|d| d.portion_cv).fold(0.0, f64::max),
        files_per_s_with_sync: is_create
            .then(|| files as f64 / ((window_ns + final_sync_ns) as f64 / 1e9)),
        // Ranks share the space they would measure: no per-rank df.
        space: None,
        // The longest any rank's (or writer's) measuring thread waited.
        cpu_wait_pct: details
            .iter()
            .filter_map(|d| d.cpu_wait_pct)
            .reduce(f64::max),
    };
    Ok(RunResult {
        run: first.run.run,
        elapsed_ns: window_ns,
        ops: files,
        bytes,
        files_per_s: Some(files_per_s),
        bw_bytes_per_s: has_bytes.then(|| bytes as f64 / secs),
        fsync_ns: ranks.iter().filter_map(|r| r.run.fsync_ns).max(),
        dist: Some(dist_of(ranks, span_rate, None)),
        files: Some(detail),
        ..Default::default()
    })
}

/// Files per second of a rank's own span.
fn span_rate(r: &RankRun) -> f64 {
    let ns = (r.end_ns - r.start_ns).max(1) as f64;
    r.run.ops as f64 / (ns / 1e9)
}

/// Interval series added up on the common clock: each rank's series starts at its own
/// measured start, so it is shifted by its start's distance from the earliest start, in
/// whole intervals (the remainder, under one interval, is in `dist.start_skew_ns`).
fn sum_intervals(ranks: &[RankRun], t0: i64) -> Vec<IntervalPoint> {
    let interval_ns = ranks
        .iter()
        .find_map(|r| r.run.interval_ms)
        .unwrap_or(100)
        .max(1) as i64
        * 1_000_000;
    let shift = |r: &RankRun| ((r.start_ns - t0 + interval_ns / 2) / interval_ns).max(0) as usize;
    let n = ranks
        .iter()
        .map(|r| r.run.intervals.len() + shift(r))
        .max()
        .unwrap_or(0);
    (0..n)
        .map(|i| {
            let pts: Vec<&IntervalPoint> = ranks
                .iter()
                .filter_map(|r| i.checked_sub(shift(r)).and_then(|k| r.run.intervals.get(k)))
                .collect();
            let ios: u64 = pts.iter().map(|p| p.ios).sum();
            let lat_weighted: f64 = pts.iter().map(|p| p.lat_mean_ns * p.ios as f64).sum();
            IntervalPoint {
                t_ms: (i as u64 + 1) * (interval_ns / 1_000_000) as u64,
                ios,
                bytes: pts.iter().map(|p| p.bytes).sum(),
                iops: pts.iter().map(|p| p.iops).sum(),
                bw_bytes_per_s: pts.iter().map(|p| p.bw_bytes_per_s).sum(),
                lat_mean_ns: if ios > 0 {
                    lat_weighted / ios as f64
                } else {
                    0.0
                },
            }
        })
        .collect()
}

/// Summaries a distributed test adds to the usual ones: the straggler spread and the worst
/// host's mean latency over the runs.
pub fn add_dist_summaries(test: &mut TestResult) {
    let runs: Vec<&RunResult> = test.runs.iter().collect();
    test.summary.extend(dist_summaries(&runs));
}

/// The straggler spread and the worst host's mean latency over aggregated runs (or a
/// distributed saturate's steps).
pub fn dist_summaries(runs: &[&RunResult]) -> Vec<(String, Summary)> {
    let pick = |f: fn(&DistRun) -> f64| -> Vec<f64> {
        runs.iter().filter_map(|r| r.dist.as_ref().map(f)).collect()
    };
    [
        ("straggler_spread_pct", pick(|d| d.straggler_spread_pct)),
        ("lat_mean_ns_host_max", pick(|d| d.lat_mean_ns_host_max)),
    ]
    .into_iter()
    // Runs that time no single I/O (`iolab files`) have no latency to take the worst of.
    .filter(|(k, v)| !v.is_empty() && (*k != "lat_mean_ns_host_max" || v.iter().any(|&x| x > 0.0)))
    .map(|(k, v)| (k.to_string(), crate::stats::summarize(&v)))
    .collect()
}

/// The straggler, start-skew and clock warnings of one aggregated test (`hosts`: rank and
/// host name; `offsets`: index = rank).
pub fn dist_warnings(
    total: &TestResult,
    hosts: &[(u32, &str)],
    offsets: &[ClockOffset],
) -> Vec<Warning> {
    let runs: Vec<&RunResult> = total.runs.iter().collect();
    dist_warnings_of(
        &total.name,
        &runs,
        &total.summary,
        hosts,
        offsets,
        Measured::Runs,
    )
}

/// What the aggregated runs of a test are, as the warnings name them: the runs of `run` and
/// `files`, or the depth steps of a `saturate` sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measured {
    Runs,
    Steps,
}

impl Measured {
    fn one(self) -> &'static str {
        match self {
            Measured::Runs => "run",
            Measured::Steps => "step",
        }
    }
    fn many(self) -> &'static str {
        match self {
            Measured::Runs => "runs",
            Measured::Steps => "steps",
        }
    }
}

/// The summaries and warnings of a distributed saturate sweep's steps (those measured so far
/// when it was stopped): the straggler spread, median over the steps; the worst host's mean
/// latency at the answer's step only (the steps run at different depths: a figure over them
/// all would mix latencies of different loads), none without an answer.
pub fn sweep_dist_findings(
    test: &TestResult,
    hosts: &[(u32, &str)],
    offsets: &[ClockOffset],
) -> (Vec<(String, Summary)>, Vec<Warning>) {
    let curve = test.curve.as_deref().unwrap_or_default();
    let runs: Vec<&RunResult> = curve.iter().filter_map(|p| p.detail.run.as_ref()).collect();
    let mut summaries: Vec<(String, Summary)> = dist_summaries(&runs)
        .into_iter()
        .filter(|(k, _)| k != "lat_mean_ns_host_max")
        .collect();
    let at_answer = test
        .answer
        .as_ref()
        .filter(|a| a.detail.found)
        .and_then(|a| curve.iter().rev().find(|p| p.at.iodepth == a.iodepth))
        .and_then(|p| p.detail.run.as_ref()?.dist.as_ref())
        .map(|d| d.lat_mean_ns_host_max)
        .filter(|&x| x > 0.0);
    if let Some(x) = at_answer {
        summaries.push(("lat_mean_ns_host_max".into(), crate::stats::summarize(&[x])));
    }
    let mut summary = test.summary.clone();
    summary.extend(summaries.iter().cloned());
    let warnings = dist_warnings_of(&test.name, &runs, &summary, hosts, offsets, Measured::Steps);
    (summaries, warnings)
}

/// `dist_warnings` of the aggregated `runs` of the test `name`, with its `summary`
/// (`dist_summaries` in it).
pub fn dist_warnings_of(
    name: &str,
    runs: &[&RunResult],
    summary: &std::collections::BTreeMap<String, Summary>,
    hosts: &[(u32, &str)],
    offsets: &[ClockOffset],
    measured: Measured,
) -> Vec<Warning> {
    let (one, many) = (measured.one(), measured.many());
    let mut out = Vec::new();
    let host = |r: u32| {
        hosts
            .iter()
            .find(|(k, _)| *k == r)
            .map(|(_, h)| *h)
            .unwrap_or("?")
    };
    if let Some(s) = summary.get("straggler_spread_pct")
        && s.median > STRAGGLER_WARN_PCT
    {
        let dists: Vec<&DistRun> = runs.iter().filter_map(|r| r.dist.as_ref()).collect();
        // The figure is a median over runs (steps); the ranks named must be those of every
        // run, not of the last one only (which may be the one run where the other rank lagged).
        let same = dists.windows(2).all(|w| {
            (w[0].slowest_rank, w[0].fastest_rank) == (w[1].slowest_rank, w[1].fastest_rank)
        });
        let who = match dists.first() {
            Some(d) if same => format!(
                "rank {} ({}) ran {:.1} % below rank {} ({})",
                d.slowest_rank,
                host(d.slowest_rank),
                s.median,
                d.fastest_rank,
                host(d.fastest_rank)
            ),
            _ => {
                let mut slowest: Vec<(u32, usize)> = Vec::new();
                for d in &dists {
                    match slowest.iter_mut().find(|(r, _)| *r == d.slowest_rank) {
                        Some((_, n)) => *n += 1,
                        None => slowest.push((d.slowest_rank, 1)),
                    }
                }
                slowest.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
                let list: Vec<String> = slowest
                    .iter()
                    .map(|(r, n)| {
                        format!(
                            "rank {r} ({}) in {}",
                            host(*r),
                            crate::units::count(*n as u64, one, many)
                        )
                    })
                    .collect();
                // No ": " before the advice: the terminal shortens a repeated warning code to
                // the text before the first one ("... below the fastest (slowest").
                format!(
                    "the slowest rank ran {:.1} % below the fastest (the slowest was {})",
                    s.median,
                    list.join(", ")
                )
            }
        };
        out.push(Warning {
            code: WarningCode::Straggler,
            message: format!(
                "{who} (median over {many}): the totals are those of uneven clients; check that host's network, mount options and load"
            ),
            test: Some(name.to_string()),
        });
    }
    let skews: Vec<f64> = runs
        .iter()
        .filter_map(|r| {
            let d = r.dist.as_ref()?;
            Some(100.0 * d.start_skew_ns as f64 / r.elapsed_ns.max(1) as f64)
        })
        .collect();
    if !skews.is_empty() && crate::stats::summary::median(&skews) > START_SKEW_WARN_PCT {
        let advice = match measured {
            Measured::Runs => "use longer runs (--duration; more files per portion for files)",
            Measured::Steps => "use longer steps (--step-duration)",
        };
        out.push(Warning {
            code: WarningCode::StartSkew,
            message: format!(
                "the ranks started their measured windows {:.1} % of the window apart (median over {many}): the common window includes time when not every rank was running, so the totals are low; {advice}",
                crate::stats::summary::median(&skews)
            ),
            test: Some(name.to_string()),
        });
    }
    let shortest = runs.iter().map(|r| r.elapsed_ns).min().unwrap_or(0);
    if let Some((rank, o)) = offsets
        .iter()
        .enumerate()
        .max_by_key(|(_, o)| o.offset_ns.unsigned_abs())
        && shortest > 0
        && o.offset_ns.unsigned_abs() as f64 > 0.01 * shortest as f64
    {
        out.push(Warning {
            code: WarningCode::ClockOffset,
            message: format!(
                "rank {rank}'s clock is {} off rank 0's (ping-pong estimate, good to ±{}), more than 1 % of a {} {one}: the windows were corrected by the estimate; synchronize the clocks (chrony/NTP) so the figures do not depend on it",
                crate::units::fmt_ns(o.offset_ns.unsigned_abs() as f64),
                crate::units::fmt_ns(o.rtt_ns as f64 / 2.0),
                crate::units::fmt_ns(shortest as f64)
            ),
            test: Some(name.to_string()),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank_run(lats: &[u64], elapsed_ns: u64, qd: f64) -> RunResult {
        let mut h = LatencyHistogram::new();
        for &l in lats {
            h.record(l);
        }
        let secs = elapsed_ns as f64 / 1e9;
        RunResult {
            run: 1,
            elapsed_ns,
            ops: lats.len() as u64,
            bytes: lats.len() as u64 * 4096,
            iops: Some(lats.len() as f64 / secs),
            bw_bytes_per_s: Some(lats.len() as f64 * 4096.0 / secs),
            lat_ns: Some(h.stats()),
            lat_hist: Some(h.to_base64()),
            avg_queue_depth: Some(qd),
            ..Default::default()
        }
    }

    #[test]
    fn totals_add_up_and_percentiles_come_from_the_merged_histogram() {
        let a_lats: Vec<u64> = (1..=1000).map(|i| i * 1000).collect();
        let b_lats: Vec<u64> = (1..=500).map(|i| i * 7919).collect();
        let a = rank_run(&a_lats, 1_000_000_000, 2.0);
        let b = rank_run(&b_lats, 900_000_000, 1.5);
        let ranks = [
            RankRun {
                rank: 0,
                run: &a,
                start_ns: 1_000,
                end_ns: 1_000_001_000,
                stonewalled: false,
            },
            RankRun {
                rank: 1,
                run: &b,
                start_ns: 50_000_000,
                end_ns: 950_000_000,
                stonewalled: true,
            },
        ];
        let t = aggregate_run(&ranks).unwrap();
        assert_eq!(t.ops, 1500);
        assert_eq!(t.bytes, 1500 * 4096);
        assert_eq!(t.elapsed_ns, 1_000_000_000);
        assert_eq!(t.iops, Some(1500.0));
        assert_eq!(t.avg_queue_depth, Some(3.5));
        let mut one = LatencyHistogram::new();
        for &l in a_lats.iter().chain(&b_lats) {
            one.record(l);
        }
        assert_eq!(t.lat_ns, Some(one.stats()));
        assert_eq!(t.lat_percentiles_ns, one.percentile_curve());
        let d = t.dist.unwrap();
        assert_eq!((d.fastest_rank, d.slowest_rank), (0, 1));
        let b_iops = b.iops.unwrap();
        assert!((d.straggler_spread_pct - 100.0 * (1000.0 - b_iops) / 1000.0).abs() < 1e-9);
        assert_eq!(d.start_skew_ns, 49_999_000);
        assert_eq!(d.end_skew_ns, 50_001_000);
        assert_eq!(d.stonewalled_ranks, vec![1]);
        assert_eq!(d.windows[1].start_ns, 49_999_000);
        let means = [a.lat_ns.unwrap().mean, b.lat_ns.unwrap().mean];
        assert_eq!(d.lat_mean_ns_host_max, means[0].max(means[1]));
        assert_eq!(d.lat_mean_ns_host_mean, (means[0] + means[1]) / 2.0);
    }

    fn direction(lats: &[u64], secs: f64) -> DirectionStats {
        let mut h = LatencyHistogram::new();
        for &l in lats {
            h.record(l);
        }
        crate::runner::recorder::direction_stats(
            lats.len() as u64,
            lats.len() as u64 * 4096,
            secs,
            &h,
        )
    }

    #[test]
    fn mixed_runs_merge_each_direction_from_its_histograms() {
        let (ar, aw): (Vec<u64>, Vec<u64>) = (
            (1..=70).map(|i| i * 1000).collect(),
            (1..=30).map(|i| i * 9000).collect(),
        );
        let (br, bw): (Vec<u64>, Vec<u64>) = (
            (1..=7).map(|i| i * 500).collect(),
            (1..=3).map(|i| i * 50_000).collect(),
        );
        let mut a = rank_run(&[ar.clone(), aw.clone()].concat(), 1_000_000_000, 4.0);
        a.read = Some(direction(&ar, 1.0));
        a.write = Some(direction(&aw, 1.0));
        let mut b = rank_run(&[br.clone(), bw.clone()].concat(), 1_000_000_000, 4.0);
        b.read = Some(direction(&br, 1.0));
        b.write = Some(direction(&bw, 1.0));
        fn rank(rank: u32, run: &RunResult) -> RankRun<'_> {
            RankRun {
                rank,
                run,
                start_ns: 0,
                end_ns: 2_000_000_000,
                stonewalled: false,
            }
        }
        let t = aggregate_run(&[rank(0, &a), rank(1, &b)]).unwrap();
        let (r, w) = (t.read.unwrap(), t.write.unwrap());
        assert_eq!((r.ops, w.ops), (77, 33));
        assert_eq!(r.ops + w.ops, t.ops);
        assert_eq!(r.iops, 77.0 / 2.0, "over the common window");
        assert_eq!(w.lat_ns, direction(&[aw, bw].concat(), 1.0).lat_ns);
        assert_eq!(r.lat_ns.count, 77);

        // A rank without the split (an older iolab): no direction totals rather than wrong ones.
        let mut c = b.clone();
        c.read = None;
        c.write = None;
        let t = aggregate_run(&[rank(0, &a), rank(1, &c)]).unwrap();
        assert!(t.read.is_none() && t.write.is_none());
        // A split without its histogram cannot be merged: an error, as for the whole run.
        c.read = Some(DirectionStats {
            lat_hist: None,
            ..direction(&br, 1.0)
        });
        c.write = b.write.clone();
        assert!(aggregate_run(&[rank(0, &a), rank(1, &c)]).is_err());
    }

    #[test]
    fn a_run_without_histogram_is_an_error() {
        let mut a = rank_run(&[1000], 1_000_000, 1.0);
        a.lat_hist = None;
        let r = [RankRun {
            rank: 3,
            run: &a,
            start_ns: 0,
            end_ns: 1,
            stonewalled: false,
        }];
        assert!(aggregate_run(&r).unwrap_err().contains("rank 3"));
    }

    /// A test of these distributed runs, with its summaries over them.
    fn summarized(runs: Vec<RunResult>) -> TestResult {
        let mut t = TestResult {
            name: "T".into(),
            runs,
            ..Default::default()
        };
        add_dist_summaries(&mut t);
        t
    }

    fn total_with(spread: f64, start_skew_ns: u64, elapsed_ns: u64) -> TestResult {
        summarized(vec![RunResult {
            elapsed_ns,
            dist: Some(DistRun {
                ranks: 2,
                start_skew_ns,
                fastest_rank: 0,
                slowest_rank: 1,
                straggler_spread_pct: spread,
                ..Default::default()
            }),
            ..Default::default()
        }])
    }

    fn codes(w: &[Warning]) -> Vec<&WarningCode> {
        w.iter().map(|w| &w.code).collect()
    }

    #[test]
    fn even_ranks_in_step_with_close_clocks_give_no_warning() {
        let t = total_with(10.0, 1_000_000, 1_000_000_000);
        let offsets = [ClockOffset::default(); 2];
        assert!(dist_warnings(&t, &[(0, "a"), (1, "b")], &offsets).is_empty());
    }

    #[test]
    fn stragglers_skew_and_clock_offsets_are_warned() {
        let t = total_with(60.0, 100_000_000, 1_000_000_000);
        let offsets = [
            ClockOffset::default(),
            ClockOffset {
                offset_ns: -20_000_000,
                rtt_ns: 100_000,
            },
        ];
        let w = dist_warnings(&t, &[(0, "fast"), (1, "slow")], &offsets);
        assert_eq!(
            codes(&w),
            [
                &WarningCode::Straggler,
                &WarningCode::StartSkew,
                &WarningCode::ClockOffset
            ]
        );
        assert!(
            w[0].message
                .contains("rank 1 (slow) ran 60.0 % below rank 0 (fast)")
        );
        assert!(w[1].message.contains("10.0 %"), "{}", w[1].message);
        assert!(
            w[2].message.contains("rank 1's clock is 20.0"),
            "{}",
            w[2].message
        );
        // 1 % of a 1 s run is 10 ms: 9 ms is fine.
        let offsets = [
            ClockOffset::default(),
            ClockOffset {
                offset_ns: 9_000_000,
                rtt_ns: 100_000,
            },
        ];
        let t = total_with(0.0, 0, 1_000_000_000);
        assert!(dist_warnings(&t, &[(0, "a"), (1, "b")], &offsets).is_empty());
    }

    /// The straggler warning's figure is the median over runs: it names the slowest rank of
    /// every run, not the last run's (two runs where rank 1 lagged by 52 % and rank 0 by 5 %
    /// once printed "rank 0 ran 28.6 % below rank 1", while the per-host table showed rank 0
    /// the faster).
    #[test]
    fn a_straggler_that_changes_between_runs_is_not_pinned_on_the_last_runs_rank() {
        let run = |slowest_rank: u32, spread: f64| RunResult {
            elapsed_ns: 1_000_000_000,
            dist: Some(DistRun {
                ranks: 2,
                fastest_rank: 1 - slowest_rank,
                slowest_rank,
                straggler_spread_pct: spread,
                ..Default::default()
            }),
            ..Default::default()
        };
        let t = summarized(vec![run(1, 51.8), run(0, 5.4)]);
        let offsets = [ClockOffset::default(); 2];
        let w = dist_warnings(&t, &[(0, "a"), (1, "b")], &offsets);
        assert_eq!(codes(&w), [&WarningCode::Straggler]);
        let m = &w[0].message;
        assert!(!m.contains("rank 0 (a) ran"), "{m}");
        assert!(
            m.contains(
                "the slowest rank ran 28.6 % below the fastest (the slowest was rank 0 (a) in 1 run, rank 1 (b) in 1 run) (median over runs)"
            ),
            "{m}"
        );
        // A repeat of the code is shortened to the finding before the first ": ", which must
        // keep the ranks (it read "... below the fastest (slowest").
        let mut again = w[0].clone();
        again.message.push_str(" (again)");
        let twice = [w[0].clone(), again];
        let shown = crate::report::table::render_warning_list(&twice);
        let second = shown.lines().nth(1).unwrap();
        assert!(
            second.ends_with("in 1 run, rank 1 (b) in 1 run) (median over runs)"),
            "{second}"
        );
        // Every run with the same straggler: it is named.
        let t = summarized(vec![run(1, 51.8), run(1, 40.0)]);
        let w = dist_warnings(&t, &[(0, "a"), (1, "b")], &offsets);
        assert!(
            w[0].message
                .contains("rank 1 (b) ran 45.9 % below rank 0 (a) (median over runs)"),
            "{}",
            w[0].message
        );
    }

    /// A saturate sweep's steps at depths 1, 2, 4 (answer at 2), rank 1 the straggler in
    /// the first two, rank 0 in the last; the worst host's mean latency grows with depth.
    fn sweep_of(answer: Option<u32>) -> TestResult {
        use crate::model::saturate::{Answer, AnswerDetail, CurvePoint};
        let step = |depth: u32, slowest: u32, host_max_ms: f64| {
            let mut p = CurvePoint::default();
            p.at.iodepth = depth;
            p.detail.run = Some(RunResult {
                elapsed_ns: 1_000_000_000,
                dist: Some(DistRun {
                    ranks: 2,
                    fastest_rank: 1 - slowest,
                    slowest_rank: slowest,
                    straggler_spread_pct: 76.0,
                    lat_mean_ns_host_max: host_max_ms * 1e6,
                    ..Default::default()
                }),
                ..Default::default()
            });
            p
        };
        TestResult {
            name: "randread".into(),
            curve: Some(vec![step(1, 1, 1.0), step(2, 1, 2.0), step(4, 0, 30.0)]),
            answer: answer.map(|d| Answer {
                iodepth: d,
                detail: AnswerDetail {
                    found: true,
                    ..Default::default()
                },
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    /// The straggler warning of a distributed saturate said "median over runs" and "rank 1
    /// (b) in 2 runs" where the command measures depth steps: it now says steps.
    #[test]
    fn a_sweeps_straggler_warning_counts_steps() {
        let offsets = [ClockOffset::default(); 2];
        let (_, w) = sweep_dist_findings(&sweep_of(Some(2)), &[(0, "a"), (1, "b")], &offsets);
        assert_eq!(codes(&w), [&WarningCode::Straggler]);
        assert!(
            w[0].message
                .contains("rank 1 (b) in 2 steps, rank 0 (a) in 1 step) (median over steps)"),
            "{}",
            w[0].message
        );
        assert!(!w[0].message.contains("run"), "{}", w[0].message);
    }

    /// `lat_mean_ns_host_max` of a distributed saturate was the mean over steps at depths 1,
    /// 2 and 4 (11 ms here), a figure of no load that was run: it is the answer's step's own
    /// (2 ms), and absent without an answer (a sweep stopped, or no depth held the limit).
    #[test]
    fn a_sweeps_worst_host_latency_is_that_of_the_answer() {
        let offsets = [ClockOffset::default(); 2];
        let hosts = [(0, "a"), (1, "b")];
        let (s, _) = sweep_dist_findings(&sweep_of(Some(2)), &hosts, &offsets);
        let get = |s: &[(String, Summary)], k: &str| s.iter().find(|(n, _)| n == k).cloned();
        let host_max = get(&s, "lat_mean_ns_host_max").unwrap().1;
        assert_eq!((host_max.n, host_max.median), (1, 2e6));
        assert_eq!(get(&s, "straggler_spread_pct").unwrap().1.n, 3);
        let (s, w) = sweep_dist_findings(&sweep_of(None), &hosts, &offsets);
        assert!(get(&s, "lat_mean_ns_host_max").is_none(), "{s:?}");
        // The steps measured so far still give the spread and its warning.
        assert!(get(&s, "straggler_spread_pct").is_some());
        assert_eq!(codes(&w), [&WarningCode::Straggler]);
    }

    #[test]
    fn interval_series_line_up_on_the_common_clock() {
        let pt = |t_ms: u64, ios: u64| IntervalPoint {
            t_ms,
            ios,
            bytes: ios * 4096,
            iops: ios as f64 * 10.0,
            bw_bytes_per_s: ios as f64 * 40960.0,
            lat_mean_ns: 1000.0,
        };
        let mut a = rank_run(&[1000], 300_000_000, 1.0);
        a.interval_ms = Some(100);
        a.intervals = vec![pt(100, 1), pt(200, 2), pt(300, 3)];
        let mut b = a.clone();
        b.intervals = vec![pt(100, 10), pt(200, 20)];
        // b started 120 ms after a: one interval later (rounded).
        let ranks = [
            RankRun {
                rank: 0,
                run: &a,
                start_ns: 0,
                end_ns: 300_000_000,
                stonewalled: false,
            },
            RankRun {
                rank: 1,
                run: &b,
                start_ns: 120_000_000,
                end_ns: 320_000_000,
                stonewalled: false,
            },
        ];
        let s = sum_intervals(&ranks, 0);
        let ios: Vec<u64> = s.iter().map(|p| p.ios).collect();
        assert_eq!(ios, vec![1, 12, 23]);
        assert_eq!(
            s.iter().map(|p| p.t_ms).collect::<Vec<_>>(),
            vec![100, 200, 300]
        );
    }

    fn files_run(files: u64, portions: usize, portion_ns: u64, sync: Option<u64>) -> RunResult {
        let elapsed = portion_ns * portions as u64;
        let d = FilesRunDetail {
            portion_ns: vec![portion_ns; portions],
            files_done: files,
            sync_ns: sync.unwrap_or(0),
            syncfs_calls: sync.is_some() as u64,
            seconds_per_portion: portion_ns as f64 / 1e9,
            portion_cv: 0.01 * portions as f64,
            files_per_s_with_sync: sync.map(|s| files as f64 / ((elapsed + s) as f64 / 1e9)),
            ..Default::default()
        };
        RunResult {
            run: 1,
            elapsed_ns: elapsed,
            ops: files,
            bytes: files * 4096,
            files_per_s: Some(files as f64 / (elapsed as f64 / 1e9)),
            bw_bytes_per_s: Some(files as f64 * 4096.0 / (elapsed as f64 / 1e9)),
            fsync_ns: sync,
            files: Some(d),
            ..Default::default()
        }
    }

    #[test]
    fn files_totals_add_up_over_the_common_window() {
        // Rank 0: 6 portions of 100 files, 0.1 s each; rank 1 stonewalled after 2 portions
        // of 0.25 s. Rank 1 started 0.05 s later; the window is 0.05 s to 0.6 s.
        let a = files_run(600, 6, 100_000_000, Some(20_000_000));
        let b = files_run(200, 2, 250_000_000, Some(50_000_000));
        let ranks = [
            RankRun {
                rank: 0,
                run: &a,
                start_ns: 50_000_000,
                end_ns: 650_000_000,
                stonewalled: false,
            },
            RankRun {
                rank: 1,
                run: &b,
                start_ns: 100_000_000,
                end_ns: 600_000_000,
                stonewalled: true,
            },
        ];
        let t = aggregate_files_run(&ranks, 100).unwrap();
        assert_eq!(t.ops, 800);
        assert_eq!(t.bytes, 800 * 4096);
        assert_eq!(t.elapsed_ns, 600_000_000);
        let fps = 800.0 / 0.6;
        assert!((t.files_per_s.unwrap() - fps).abs() < 1e-9);
        assert!((t.bw_bytes_per_s.unwrap() - fps * 4096.0).abs() < 1e-6);
        let d = t.files.as_ref().unwrap();
        assert_eq!(d.files_done, 800);
        assert!(d.portion_ns.is_empty(), "no made-up series for the total");
        // All ranks together: 100 files every 0.075 s.
        assert!((d.seconds_per_portion - 100.0 / fps).abs() < 1e-12);
        assert!(
            (d.portion_cv - 0.06).abs() < 1e-12,
            "the worst rank's spread"
        );
        // The final syncs come after the window: the slowest one counts.
        let with_sync = 800.0 / 0.65;
        assert!((d.files_per_s_with_sync.unwrap() - with_sync).abs() < 1e-9);
        assert_eq!((d.sync_ns, d.syncfs_calls), (50_000_000, 2));
        let dist = t.dist.clone().unwrap();
        assert_eq!(dist.stonewalled_ranks, vec![1]);
        // Rank 1: 200 files in its 0.5 s span against rank 0's 600 in 0.6 s.
        assert_eq!((dist.fastest_rank, dist.slowest_rank), (0, 1));
        assert!((dist.straggler_spread_pct - 60.0).abs() < 1e-9);
        assert_eq!(dist.start_skew_ns, 50_000_000);
        assert_eq!(dist.end_skew_ns, 50_000_000);
        assert_eq!(dist.lat_mean_ns_host_max, 0.0);
        // No latency to summarize for files.
        let summaries = dist_summaries(&[&t]);
        assert!(summaries.iter().all(|(k, _)| k != "lat_mean_ns_host_max"));
        // A run without its files detail is an error, not a zero.
        let plain = RunResult::default();
        let bad = [RankRun {
            rank: 3,
            run: &plain,
            start_ns: 0,
            end_ns: 1,
            stonewalled: false,
        }];
        assert!(
            aggregate_files_run(&bad, 100)
                .unwrap_err()
                .contains("rank 3")
        );
    }
}

//! Distributed `iolab saturate` under a real `mpirun` (cargo feature `mpi`): two ranks on this
//! machine sweep the same depths, every aggregated step adds up the ranks' steps over the
//! common window and merges their latency histograms exactly, and the search judges the
//! aggregate (a throttled rank is reported, not followed). Tests skip loudly without mpirun
//! (or, for the throttled rank, without root and blkio).
#![cfg(feature = "mpi")]

use std::path::Path;

use iolab::model::saturate::CurvePoint;
use iolab::model::{ResultDoc, RunResult};

mod common;
mod mpi_support;
use mpi_support::*;

fn run_of(p: &CurvePoint) -> &RunResult {
    p.detail
        .run
        .as_ref()
        .expect("a distributed step carries its run")
}

fn depths(curve: &[CurvePoint]) -> Vec<u32> {
    curve.iter().map(|p| p.at.iodepth).collect()
}

/// Every aggregated step of every sweep against the two ranks' own steps (`limit_ns`: the
/// limit on the mean latency).
fn check_steps_add_up(doc: &ResultDoc, limit_ns: f64) {
    for (ti, total) in doc.tests.iter().enumerate() {
        let curve = total.curve.as_ref().expect("curve");
        assert!(!curve.is_empty(), "{}: no step", total.name);
        let hosts: Vec<&Vec<CurvePoint>> = doc
            .hosts
            .iter()
            .map(|h| h.tests[ti].curve.as_ref().expect("host curve"))
            .collect();
        // Both ranks took the steps the aggregate's search chose, in the same order.
        for h in &hosts {
            assert_eq!(depths(h), depths(curve), "{}", total.name);
        }
        for (j, agg) in curve.iter().enumerate() {
            let per: Vec<&CurvePoint> = hosts.iter().map(|h| &h[j]).collect();
            let runs: Vec<&RunResult> = per.iter().map(|p| run_of(p)).collect();
            let run = run_of(agg);
            assert!(runs.iter().all(|r| r.ops > 0), "both ranks did I/O");
            // Counts add up; the rate is over the common window (earliest start to latest
            // end), so it is the ranks' sum of I/Os in that window.
            assert_eq!(run.ops, runs.iter().map(|r| r.ops).sum::<u64>());
            assert_eq!(run.bytes, runs.iter().map(|r| r.bytes).sum::<u64>());
            let d = run.dist.as_ref().expect("dist detail");
            let start = d.windows.iter().map(|w| w.start_ns).min().unwrap();
            let end = d.windows.iter().map(|w| w.end_ns).max().unwrap();
            assert_eq!(start, 0);
            assert_eq!(run.elapsed_ns as i64, end - start);
            let window_s = run.elapsed_ns as f64 / 1e9;
            assert!(close(agg.at.iops, run.ops as f64 / window_s), "{agg:?}");
            assert!(close(agg.at.bw_bytes_per_s, run.bytes as f64 / window_s));
            let sum_iops: f64 = per.iter().map(|p| p.at.iops).sum();
            assert!(agg.at.iops <= sum_iops * (1.0 + 1e-9));
            // Depths add up: set (per rank x 2 ranks) and achieved.
            assert_eq!(agg.detail.total_iodepth, Some(agg.at.iodepth * 2));
            let qd: f64 = per.iter().map(|p| p.at.avg_queue_depth).sum();
            assert!(
                close(agg.at.avg_queue_depth, qd),
                "{} vs {qd}",
                agg.at.avg_queue_depth
            );
            // One histogram fed with both ranks' samples gives the same percentiles.
            let single = fed_with(&runs);
            // Completions, and the requests cut at the step's deadline (up to it).
            assert!(single.len() >= run.ops);
            let (got, want) = (run.lat_ns.clone().unwrap(), single.stats());
            assert_eq!(
                (got.min, got.p50, got.p99, got.p999, got.max, got.count),
                (
                    want.min, want.p50, want.p99, want.p999, want.max, want.count
                )
            );
            assert!(close(got.mean, want.mean));
            assert_eq!(run.lat_percentiles_ns, single.percentile_curve());
            // The point the search judged: all I/Os of all ranks together (one stream), or
            // per stream with the merged figures beside it (reads + writes).
            let merged = match &agg.detail.lat_over_streams_mean {
                Some(m) => (m.mean_ns, m.p99_ns, m.p999_ns),
                None => (agg.at.lat_mean_ns, agg.at.lat_p99_ns, agg.at.lat_p999_ns),
            };
            assert!(close(merged.0, want.mean));
            assert_eq!((merged.1, merged.2), (want.p99 as f64, want.p999 as f64));
            assert_eq!(agg.within_limit, agg.at.lat_mean_ns <= limit_ns);
        }
        // The answer comes from the aggregated curve.
        let a = total.answer.as_ref().expect("answer");
        let at = curve
            .iter()
            .rev()
            .find(|p| p.at.iodepth == a.iodepth)
            .unwrap();
        assert_eq!(a.iops, at.at.iops);
        assert_eq!(a.detail.total_iodepth, a.iodepth * 2);
        assert_eq!(a.detail.ranks, Some(2));
        assert!(total.summary.contains_key("straggler_spread_pct"));
        assert_eq!(total.params.get("ranks").map(String::as_str), Some("2"));
    }
}

#[test]
fn two_ranks_sweep_the_same_steps_and_add_up_exactly() {
    let test = "two_ranks_sweep_the_same_steps_and_add_up_exactly";
    // On a tmpfs: a 200 ms step is thousands of reads per rank at a mean latency of
    // microseconds, so every step has I/O on both ranks and the 1 s limit holds at every
    // depth with a margin of thousands, on any machine.
    let Some(target) = ram_target_or_skip(test) else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let res = mpirun_with_rank1_in(
        None,
        &[
            IOLAB,
            "saturate",
            "-t",
            target.path().to_str().unwrap(),
            "--rw",
            "randread,mixed",
            "--size",
            "8M",
            "--max-depth",
            "4",
            "--step-duration",
            "200ms",
            "--ramp",
            "0",
            "--latency-limit",
            "1s",
            "--output",
            out.path().to_str().unwrap(),
        ],
    );
    assert!(res.status.success(), "mpirun failed");
    let stdout = String::from_utf8_lossy(&res.stdout);
    assert!(stdout.contains("Per host (2 ranks)"), "{stdout}");
    assert!(stdout.contains("on each of 2 ranks"), "{stdout}");
    assert!(stdout.contains("depth (total)"), "{stdout}");
    let doc = the_result(out.path());
    check_two_rank_doc(&doc, "saturate");
    // A host's curve holds one point a judged depth, as the aggregate: a step set aside for
    // a job thread's CPU wait (on any rank; likely here, two ranks on few shared cores) was
    // measured again on every rank, and its first points left out.
    for (ti, t) in doc.tests.iter().enumerate() {
        let judged = t.curve.as_ref().map_or(0, Vec::len);
        for h in &doc.hosts {
            let own = h.tests[ti].curve.as_ref().map_or(0, Vec::len);
            assert_eq!(own, judged, "rank {} in {}", h.rank, t.name);
        }
    }
    // Each rank worked in its own subdirectory and removed it.
    for (h, dir) in doc.hosts.iter().zip(["iolab-rank-0", "iolab-rank-1"]) {
        let want = target.path().join(dir);
        let targets = &h.tests[0].params["targets"];
        assert_eq!(Path::new(targets), want.as_path());
    }
    let left: Vec<_> = std::fs::read_dir(target.path())
        .unwrap()
        .flatten()
        .collect();
    assert!(left.is_empty(), "left in the target: {left:?}");
    assert_eq!(doc.tests.len(), 2, "randread and mixed");
    assert_eq!(
        doc.tests[0].params["targets"],
        target.path().display().to_string()
    );
    // The limit of 1 s holds at every depth: each sweep doubles up to --max-depth.
    assert_eq!(depths(doc.tests[0].curve.as_ref().unwrap()), vec![1, 2, 4]);
    assert_eq!(depths(doc.tests[1].curve.as_ref().unwrap()), vec![2, 4]);
    check_steps_add_up(&doc, 1e9);
}

#[test]
fn a_throttled_rank_is_reported_and_the_aggregate_decides() {
    let test = "a_throttled_rank_is_reported_and_the_aggregate_decides";
    // Rank 1 reads at most 20 I/Os per second (the kernel's cap): 50 ms a read at depth 1,
    // 200 ms at depth 4, however fast the machine. Rank 0's reads are page-cache hits behind
    // the loop device (the image was just written; reads put nothing on the machine's disk):
    // thousands per 300 ms step at well under a millisecond (35,000 IOPS here). Rank 1's
    // latencies add up to at most depth x step (about 1.2 s at depth 4), so the merged mean
    // stays under 20 ms as long as rank 0 does some 60 reads at a few ms each: a margin of
    // tens, enough for a loaded machine three times slower.
    let Some((fs, cap)) = throttled_scratch(test, "read_iops_device", 20, false) else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let res = mpirun_with_rank1_in(
        Some(&cap.dir.join("cgroup.procs")),
        &[
            IOLAB,
            "saturate",
            "-t",
            fs.path().to_str().unwrap(),
            "--rw",
            "randread",
            "--size",
            "8M",
            "--max-depth",
            "4",
            "--step-duration",
            "300ms",
            "--ramp",
            "0",
            "--latency-limit",
            "20ms",
            "--on",
            "mean",
            "--output",
            out.path().to_str().unwrap(),
        ],
    );
    assert!(res.status.success(), "mpirun failed");
    let doc = the_result(out.path());
    assert_eq!(doc.status, "complete");
    let total = &doc.tests[0];
    let curve = total.curve.as_ref().unwrap();
    let own: Vec<&Vec<CurvePoint>> = doc
        .hosts
        .iter()
        .map(|h| h.tests[0].curve.as_ref().unwrap())
        .collect();
    // Rank 1 alone broke the limit (its own mean over 20 ms at depth 4), yet both ranks went
    // on to the same next steps: the merged latency of all I/Os, dominated by rank 0's fast
    // reads, decided.
    assert_eq!(depths(curve), vec![1, 2, 4]);
    assert_eq!(depths(own[1]), depths(curve));
    let last = own[1].last().unwrap();
    assert!(
        !last.within_limit && last.at.lat_mean_ns > 20e6,
        "rank 1 is throttled: {last:?}"
    );
    assert!(curve.iter().all(|p| p.within_limit), "{curve:?}");
    let a = total.answer.as_ref().unwrap();
    assert!(a.detail.found && !a.detail.limit_crossed);
    assert_eq!((a.iodepth, a.detail.total_iodepth), (4, 8));
    // The straggler is found and reported.
    for (p, slow) in curve.iter().zip(own[1]) {
        let d = run_of(p).dist.as_ref().unwrap();
        assert_eq!((d.fastest_rank, d.slowest_rank), (0, 1));
        assert!(d.straggler_spread_pct > 50.0, "{}", d.straggler_spread_pct);
        let slow_mean = run_of(slow).lat_ns.as_ref().unwrap().mean;
        assert!(close(d.lat_mean_ns_host_max, slow_mean));
    }
    // Brought up to date after every step, the finding is said once (not once a step).
    let stragglers: Vec<_> = doc
        .warnings
        .iter()
        .filter(|w| w.code == "straggler")
        .collect();
    assert!(
        stragglers.len() == 1 && stragglers[0].message.contains("rank 1"),
        "{:?}",
        doc.warnings
    );
    let stdout = String::from_utf8_lossy(&res.stdout);
    let rank1_row = stdout
        .lines()
        .find(|l| l.contains("randread") && l.contains("┆    1 ┆"))
        .unwrap_or_else(|| panic!("rank 1's row: {stdout}"));
    assert!(
        rank1_row.contains("ok") && !rank1_row.contains("3/3 ok"),
        "{rank1_row}"
    );
    check_steps_add_up(&doc, 20e6);
    drop(cap);
}

#[test]
fn ctrl_c_on_mpirun_saves_the_aggregated_curve_so_far_and_cleans_up() {
    let test = "ctrl_c_on_mpirun_saves_the_aggregated_curve_so_far_and_cleans_up";
    let Some(target) = ram_target_or_skip(test) else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    // Steps of 3 s up to depth 64 under a 1 s limit: seven steps, interrupted after two.
    // Time-based steps: at least one more full step (3 s, even if the IOPS fell twice and
    // ended the sweep after the third step; under CPU load they may) remains when the second
    // is saved. The interrupt follows within the 50 ms poll, and mpirun forwards it within
    // the 3 s even on a loaded machine (1-s steps were sometimes over before it did).
    let (child, _session) = spawn_mpirun(&[
        "-np",
        "2",
        IOLAB,
        "saturate",
        "-t",
        target.path().to_str().unwrap(),
        "--rw",
        "randread",
        "--size",
        "8M",
        "--max-depth",
        "64",
        "--step-duration",
        "3s",
        "--ramp",
        "0",
        "--latency-limit",
        "1s",
        "--output",
        out.path().to_str().unwrap(),
    ]);
    let two_steps = wait_for_result(out.path(), |d| {
        d.tests
            .first()
            .and_then(|t| t.curve.as_ref())
            .is_some_and(|c| c.len() >= 2)
    });
    let res = interrupt_and_wait(child);
    assert!(two_steps, "two steps were saved before the interrupt");
    assert!(!res.status.success());
    let doc = the_result(out.path());
    assert_eq!(doc.status, "interrupted");
    let curve = doc.tests[0].curve.as_ref().unwrap();
    assert!(curve.len() >= 2 && curve.len() < 7, "{}", curve.len());
    for h in &doc.hosts {
        assert_eq!(depths(h.tests[0].curve.as_ref().unwrap()), depths(curve));
    }
    assert_cleaned_up_or_recovered(target.path());
}

/// A distributed saturate stopped by Ctrl-C showed no straggler warning and no spread, even
/// with one rank 76 % below the other in every step measured: the straggler findings came
/// only at the end of a finished sweep. The steps measured before the stop now get them.
#[test]
fn an_interrupted_sweep_still_reports_its_straggler() {
    let test = "an_interrupted_sweep_still_reports_its_straggler";
    // Rank 1 reads at most 20 I/Os per second (the kernel's cap); rank 0's are page-cache
    // hits behind the loop device, thousands per step (see the throttled test above): the
    // spread is far above the 25 % that warns however slow the machine. The limit of 10 s
    // holds at every depth, so the sweep goes on doubling to 64 (2-s steps: at least 10 s
    // more when the second step is saved) until the interrupt.
    let Some((fs, cap)) = throttled_scratch(test, "read_iops_device", 20, false) else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let args = [
        IOLAB,
        "saturate",
        "-t",
        fs.path().to_str().unwrap(),
        "--rw",
        "randread",
        "--size",
        "8M",
        "--max-depth",
        "64",
        "--step-duration",
        "2s",
        "--ramp",
        "0",
        "--latency-limit",
        "10s",
        "--on",
        "mean",
        "--output",
        out.path().to_str().unwrap(),
    ];
    let procs = cap.dir.join("cgroup.procs");
    let argv = rank1_in_argv(procs.to_str().unwrap(), &args);
    let (child, _session) = spawn_mpirun(&argv);
    let two_steps = wait_for_result(out.path(), |d| {
        d.tests
            .first()
            .and_then(|t| t.curve.as_ref())
            .is_some_and(|c| c.len() >= 2)
    });
    let res = interrupt_and_wait(child);
    assert!(two_steps, "two steps were saved before the interrupt");
    assert!(!res.status.success());
    let doc = the_result(out.path());
    let listed: Vec<_> = std::fs::read_dir(out.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        doc.status,
        "interrupted",
        "error: {:?}; files: {listed:?}; steps saved: {:?}",
        doc.error,
        doc.tests
            .first()
            .and_then(|t| t.curve.as_ref())
            .map(Vec::len)
    );
    let t = &doc.tests[0];
    let spread = t
        .summary
        .get("straggler_spread_pct")
        .unwrap_or_else(|| panic!("no spread in {:?}", t.summary));
    assert!(spread.median > 50.0, "{spread:?}");
    assert_eq!(spread.n as usize, t.curve.as_ref().unwrap().len());
    // No answer: no worst host's latency "at the answer".
    assert!(!t.summary.contains_key("lat_mean_ns_host_max"));
    let stragglers: Vec<_> = doc
        .warnings
        .iter()
        .filter(|w| w.code == "straggler")
        .collect();
    let [w] = stragglers[..] else {
        panic!("one straggler warning: {:?}", doc.warnings)
    };
    assert!(
        w.message.contains("rank 1") && w.message.contains("(median over steps)"),
        "{}",
        w.message
    );
    let stderr = String::from_utf8_lossy(&res.stderr);
    let stdout = String::from_utf8_lossy(&res.stdout);
    // The plan names the shared target (not rank 0's own subdirectory) and says that the
    // size is each rank's: it read "target /mnt/iolab-rank-0 (...): 8.0 MiB tested".
    let shared = fs.path().display().to_string();
    assert!(
        stderr.contains(&format!(
            "  target {shared} (test file in a directory): 8.0 MiB tested per rank,"
        )),
        "{stderr}"
    );
    // The report comes after the ranks met to stop, which mpirun's SIGKILL (a second after
    // it forwards the signal) can cut short when a rank still waits for I/Os in flight on a
    // loaded machine: the file above holds the findings either way (saved after each
    // step); the report is checked when it came.
    if stdout.trim().is_empty() {
        eprintln!(
            "NOTE {test}: mpirun killed rank 0 before its report (the I/Os in flight took over a second to complete): the shown warning and report were not checked this time"
        );
        drop(cap);
        drop(fs);
        return;
    }
    assert!(
        stdout.contains("median over steps") || stderr.contains("median over steps"),
        "the warning is shown"
    );
    // The report says that the size is each rank's ("sizes: /mnt 8.0 MiB" before).
    assert!(
        stdout.contains(&format!("sizes: {shared} 8.0 MiB per rank")),
        "{stdout}"
    );
    drop(cap);
    drop(fs);
}

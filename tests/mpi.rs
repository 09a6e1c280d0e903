//! Distributed `iolab run` under a real `mpirun` (cargo feature `mpi`): two ranks on this
//! machine add up, merge their latency histograms exactly, and stop together (stonewall).
//! Tests skip loudly without mpirun (or, for the throttled rank, without root and blkio).
#![cfg(feature = "mpi")]

use std::path::PathBuf;
use std::process::Command;

use iolab::model::RunResult;
use iolab::stats::hist::LatencyHistogram;

mod common;
mod mpi_support;
use mpi_support::*;

#[test]
fn two_ranks_add_up_and_merge_latency_exactly() {
    // Time-based on purpose (the kind of run that stops by itself, without a stonewall), on a
    // tmpfs: a rank does thousands of 4 KiB reads in 200 ms there, even on a loaded machine
    // three times slower, and all this needs of the amount is at least one per rank.
    let Some(target) = ram_target_or_skip("two_ranks_add_up_and_merge_latency_exactly") else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let t = target.path().to_str().unwrap();
    let o = out.path().to_str().unwrap();
    let res = mpirun(&[
        "-np",
        "2",
        IOLAB,
        "run",
        "-t",
        t,
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--iodepth",
        "2",
        "--duration",
        "200ms",
        "--ramp",
        "0",
        "--repeat",
        "2",
        "--size",
        "8M",
        "--output",
        o,
    ]);
    assert!(res.status.success(), "mpirun failed");
    let stdout = String::from_utf8_lossy(&res.stdout);
    assert!(stdout.contains("Per host (2 ranks)"), "{stdout}");
    let doc = the_result(out.path());
    check_two_rank_doc(&doc, "run");
    // Each rank worked in its own subdirectory and removed it.
    let left: Vec<_> = std::fs::read_dir(target.path())
        .unwrap()
        .flatten()
        .collect();
    assert!(left.is_empty(), "left in the target: {left:?}");

    assert_eq!(doc.tests.len(), 1);
    let total = &doc.tests[0];
    assert_eq!(total.params.get("ranks").map(String::as_str), Some("2"));
    assert_eq!(total.runs.len(), 2);
    for (j, run) in total.runs.iter().enumerate() {
        let per: Vec<&RunResult> = doc.hosts.iter().map(|h| &h.tests[0].runs[j]).collect();
        assert!(per.iter().all(|r| r.ops > 0), "both ranks did I/O");
        assert_eq!(run.ops, per.iter().map(|r| r.ops).sum::<u64>());
        assert_eq!(run.bytes, per.iter().map(|r| r.bytes).sum::<u64>());
        // Floats went through JSON (serde_json parses floats to within an ulp or so): `close`
        // compares them relatively, to 1e-9.
        let qd: f64 = per.iter().map(|r| r.avg_queue_depth.unwrap()).sum();
        assert!(close(run.avg_queue_depth.unwrap(), qd));
        // Rates over the common window, from the earliest start to the latest end.
        let d = run.dist.as_ref().expect("dist detail");
        let start = d.windows.iter().map(|w| w.start_ns).min().unwrap();
        let end = d.windows.iter().map(|w| w.end_ns).max().unwrap();
        assert_eq!(start, 0);
        assert_eq!(run.elapsed_ns as i64, end - start);
        assert!(close(
            run.iops.unwrap(),
            run.ops as f64 / (run.elapsed_ns as f64 / 1e9)
        ));
        let sum_iops: f64 = per.iter().map(|r| r.iops.unwrap()).sum();
        assert!(run.iops.unwrap() <= sum_iops * (1.0 + 1e-9));
        // One histogram fed with both ranks' samples gives the same percentiles.
        let mut single = LatencyHistogram::new();
        for r in &per {
            for v in hist(r).h.iter_recorded() {
                single
                    .h
                    .record_n(v.value_iterated_to(), v.count_at_value())
                    .unwrap();
            }
        }
        // Both ranks' latencies: their completions, and the requests cut at the deadline
        // (counted up to it).
        assert_eq!(single.len(), run.lat_ns.as_ref().unwrap().count);
        assert!(single.len() >= run.ops);
        let (got, want) = (run.lat_ns.clone().unwrap(), single.stats());
        assert_eq!(
            (
                got.min, got.p50, got.p90, got.p99, got.p999, got.p9999, got.max, got.count
            ),
            (
                want.min, want.p50, want.p90, want.p99, want.p999, want.p9999, want.max, want.count
            )
        );
        assert!(close(got.mean, want.mean) && close(got.stddev, want.stddev));
        assert_eq!(run.lat_percentiles_ns, single.percentile_curve());
        let means: Vec<f64> = per
            .iter()
            .map(|r| r.lat_ns.as_ref().unwrap().mean)
            .collect();
        assert!(close(d.lat_mean_ns_host_max, means[0].max(means[1])));
        assert_eq!(d.ranks, 2);
        let (f, s) = (d.fastest_rank as usize, d.slowest_rank as usize);
        assert!(per[f].iops.unwrap() >= per[s].iops.unwrap());
    }
    assert!(total.summary.contains_key("straggler_spread_pct"));
}

/// A mixed run over two ranks: each direction's totals are the ranks' sums, its latency
/// the merge of the ranks' per-direction histograms, and the table splits it.
#[test]
fn two_ranks_mixed_keep_reads_and_writes_apart() {
    // As above: 200 ms on a tmpfs are thousands of I/Os per rank, so both directions of a
    // 60/40 mix have some on each rank whatever the machine's speed.
    let Some(target) = ram_target_or_skip("two_ranks_mixed_keep_reads_and_writes_apart") else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let res = mpirun(&[
        "-np",
        "2",
        IOLAB,
        "run",
        "-t",
        target.path().to_str().unwrap(),
        "--rw",
        "randrw",
        "--rwmix-read",
        "60",
        "--bs",
        "4k",
        "--iodepth",
        "2",
        "--duration",
        "200ms",
        "--ramp",
        "0",
        "--repeat",
        "1",
        "--size",
        "8M",
        "--output",
        out.path().to_str().unwrap(),
    ]);
    assert!(res.status.success(), "mpirun failed");
    let stdout = String::from_utf8_lossy(&res.stdout);
    assert!(
        stdout.contains("\u{21b3} reads") && stdout.contains("\u{21b3} writes"),
        "{stdout}"
    );
    let doc = the_result(out.path());
    let run = &doc.tests[0].runs[0];
    let per: Vec<&RunResult> = doc.hosts.iter().map(|h| &h.tests[0].runs[0]).collect();
    assert_eq!(per.len(), 2);
    for (dir, part) in [
        (
            "read",
            (|r: &RunResult| r.read.clone()) as fn(&RunResult) -> _,
        ),
        ("write", |r: &RunResult| r.write.clone()),
    ] {
        let total = part(run).unwrap_or_else(|| panic!("no {dir} total"));
        let ranks: Vec<_> = per.iter().map(|r| part(r).unwrap()).collect();
        assert!(ranks.iter().all(|d| d.ops > 0), "{dir}: both ranks did I/O");
        assert_eq!(total.ops, ranks.iter().map(|d| d.ops).sum::<u64>(), "{dir}");
        assert_eq!(
            total.lat_ns.count,
            ranks.iter().map(|d| d.lat_ns.count).sum::<u64>(),
            "{dir}"
        );
        assert!(total.lat_ns.count >= total.ops, "{dir}");
        let max = ranks.iter().map(|d| d.lat_ns.max).max().unwrap();
        let min = ranks.iter().map(|d| d.lat_ns.min).min().unwrap();
        assert_eq!((total.lat_ns.min, total.lat_ns.max), (min, max), "{dir}");
    }
    assert_eq!(
        run.read.as_ref().unwrap().ops + run.write.as_ref().unwrap().ops,
        run.ops
    );
    assert!(doc.tests[0].summary.contains_key("write_iops"));
}

/// `--quiet` silences rank 0's progress in a distributed run too (it printed its progress
/// lines whatever the flag: the distributed path made its own progress mode).
#[test]
fn quiet_silences_a_distributed_run() {
    let Some(target) = ram_target_or_skip("quiet_silences_a_distributed_run") else {
        return;
    };
    let t = target.path().to_str().unwrap();
    let args = |quiet: bool| {
        let mut a = vec![
            "-np",
            "2",
            IOLAB,
            "run",
            "-t",
            t,
            "--rw",
            "randread",
            "--bs",
            "4k",
            "--io-size",
            "64k",
            "--ramp",
            "0",
            "--repeat",
            "1",
            "--size",
            "8M",
            "--no-save",
        ];
        if quiet {
            a.push("--quiet");
        }
        a
    };
    let progress = |err: &str| {
        err.lines()
            .filter(|l| l.ends_with(" ...") || l.contains(" done in "))
            .count()
    };
    let loud = mpirun(&args(false));
    assert!(
        loud.status.success(),
        "{}",
        String::from_utf8_lossy(&loud.stderr)
    );
    assert!(progress(&String::from_utf8_lossy(&loud.stderr)) > 0);
    let quiet = mpirun(&args(true));
    let err = String::from_utf8_lossy(&quiet.stderr);
    assert!(quiet.status.success(), "{err}");
    assert_eq!(progress(&err), 0, "{err}");
    assert!(!quiet.stdout.is_empty());
}

#[test]
fn a_subcommand_that_is_not_distributed_refuses_clearly() {
    if !mpirun_or_skip("a_subcommand_that_is_not_distributed_refuses_clearly") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Refused before anything is created (the working directory stays empty).
    let res = mpirun_in(dir.path(), &["-np", "2", IOLAB, "copy", "--no-save"]);
    assert!(!res.status.success());
    let err = String::from_utf8_lossy(&res.stderr);
    assert!(err.contains("only `iolab run`"), "{err}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn a_rank_that_cannot_start_stops_every_rank_before_anything_is_created() {
    if !mpirun_or_skip("a_rank_that_cannot_start_stops_every_rank_before_anything_is_created") {
        return;
    }
    let target = tempfile::tempdir().unwrap();
    let blocker = tempfile::NamedTempFile::new().unwrap();
    // Rank 0 cannot create its result directory (a file is in the way); rank 1 could start.
    let bad_output = blocker.path().join("out");
    let res = mpirun(&[
        "-np",
        "2",
        IOLAB,
        "run",
        "-t",
        target.path().to_str().unwrap(),
        "--duration",
        "200ms",
        "--size",
        "8M",
        "--output",
        bad_output.to_str().unwrap(),
    ]);
    assert!(!res.status.success());
    let err = String::from_utf8_lossy(&res.stderr);
    assert!(err.contains("cannot create the output directory"), "{err}");
    assert!(err.contains("another rank could not start"), "{err}");
    let left: Vec<_> = std::fs::read_dir(target.path())
        .unwrap()
        .flatten()
        .collect();
    assert!(left.is_empty(), "left in the target: {left:?}");
}

#[test]
fn a_throttled_rank_is_stonewalled_and_reported() {
    let test = "a_throttled_rank_is_stonewalled_and_reported";
    let Some((fs, cap)) = throttled_scratch(test, "read_iops_device", 50, true) else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let procs = cap.dir.join("cgroup.procs");
    // 512 reads per rank: rank 0 does them in a moment (the scratch image is on a tmpfs:
    // memory speed, well under a second even on a loaded machine three times slower); rank 1,
    // capped by the kernel at 50 IOPS whatever the machine, would need over 10 s alone, so it
    // is stopped by rank 0's finish and rank 0 never is.
    let args = [
        IOLAB,
        "run",
        "-t",
        fs.path().to_str().unwrap(),
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--iodepth",
        "1",
        "--io-size",
        "2M",
        "--ramp",
        "0",
        "--repeat",
        "1",
        "--size",
        "8M",
        "--direct",
        "true",
        "--output",
        out.path().to_str().unwrap(),
    ];
    let res = mpirun_with_rank1_in(Some(&procs), &args);
    assert!(res.status.success(), "mpirun failed");
    let doc = the_result(out.path());
    let total = &doc.tests[0].runs[0];
    let r0 = &doc.hosts[0].tests[0].runs[0];
    let r1 = &doc.hosts[1].tests[0].runs[0];
    assert_eq!(r0.ops, 512, "rank 0 did its whole amount");
    assert!(r1.ops < 512, "rank 1 stopped early: {} of 512", r1.ops);
    let d = total.dist.as_ref().unwrap();
    assert_eq!(d.stonewalled_ranks, vec![1]);
    assert_eq!(d.slowest_rank, 1);
    assert!(
        d.straggler_spread_pct > 50.0,
        "spread {} %: rank 0 {} ops in {} ns, rank 1 {} ops in {} ns, windows {:?}",
        d.straggler_spread_pct,
        r0.ops,
        r0.elapsed_ns,
        r1.ops,
        r1.elapsed_ns,
        d.windows
    );
    assert!(doc.warnings.iter().any(|w| w.code == "straggler"));
    let stdout = String::from_utf8_lossy(&res.stdout);
    assert!(
        stdout.contains("1/1"),
        "the table shows the stonewalled run: {stdout}"
    );
    drop(cap);
}

/// Two network namespaces joined by a veth pair: two "hosts" (10.250.77.1 and .2) that only
/// reach each other over TCP. Removed on drop (the veth goes with them).
struct TwoHosts {
    ns: [String; 2],
    dir: tempfile::TempDir,
}

const HOST_IPS: [&str; 2] = ["10.250.77.1", "10.250.77.2"];

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("ip: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {args:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

impl TwoHosts {
    fn new() -> Result<TwoHosts, String> {
        let id = std::process::id();
        let hosts = TwoHosts {
            ns: [format!("iolab-mpi-a{id}"), format!("iolab-mpi-b{id}")],
            dir: tempfile::tempdir().map_err(|e| e.to_string())?,
        };
        let veth = [format!("iva{id}"), format!("ivb{id}")];
        for ns in &hosts.ns {
            ip(&["netns", "add", ns])?;
        }
        ip(&[
            "link", "add", &veth[0], "type", "veth", "peer", "name", &veth[1],
        ])?;
        for i in 0..2 {
            let (ns, v) = (&hosts.ns[i], &veth[i]);
            ip(&["link", "set", v, "netns", ns])?;
            ip(&[
                "-n",
                ns,
                "addr",
                "add",
                &format!("{}/24", HOST_IPS[i]),
                "dev",
                v,
            ])?;
            ip(&["-n", ns, "link", "set", v, "up"])?;
            ip(&["-n", ns, "link", "set", "lo", "up"])?;
        }
        // mpirun's remote shell: `agent HOST COMMAND...` runs COMMAND in HOST's namespace,
        // under its own host name.
        let agent = format!(
            "#!/bin/sh\nhost=$1; shift\ncase \"$host\" in\n  {}) ns={}; hn=hostA;;\n  {}) ns={}; hn=hostB;;\n  *) echo \"unknown host $host\" >&2; exit 1;;\nesac\nexec unshare --uts ip netns exec $ns sh -c \"hostname $hn; $*\"\n",
            HOST_IPS[0], hosts.ns[0], HOST_IPS[1], hosts.ns[1]
        );
        let path = hosts.agent();
        std::fs::write(&path, agent).map_err(|e| e.to_string())?;
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .map_err(|e| e.to_string())?;
        Ok(hosts)
    }

    fn agent(&self) -> PathBuf {
        self.dir.path().join("agent")
    }
}

impl Drop for TwoHosts {
    fn drop(&mut self) {
        for ns in &self.ns {
            let _ = ip(&["netns", "del", ns]);
        }
    }
}

#[test]
fn two_hosts_in_network_namespaces_over_tcp() {
    let test = "two_hosts_in_network_namespaces_over_tcp";
    if !mpirun_or_skip(test)
        || !common::root_or_skip(test, "network namespaces")
        || !common::tool_or_skip(test, "ip", "iproute2")
        || !common::tool_or_skip(test, "unshare", "util-linux")
    {
        return;
    }
    let hosts = match TwoHosts::new() {
        Ok(h) => h,
        Err(e) => {
            common::skip(
                test,
                format_args!("cannot make network namespaces here: {e}"),
            );
            return;
        }
    };
    // A tmpfs target (visible in both namespaces): 200 ms there are thousands of reads.
    let Some(target) = common::ram_tempdir_or_skip(test) else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    // mpirun runs on "hostA" (inside the first namespace) and starts rank 1 on "hostB"
    // through the agent; the ranks talk over TCP only (no shared-memory transport).
    let script = format!(
        "hostname hostA; exec ip netns exec {} mpirun --oversubscribe --mca plm_rsh_agent {} --host {},{} --mca btl tcp,self -np 2 {IOLAB} run -t {} --rw randread --bs 4k --iodepth 2 --duration 200ms --ramp 0 --repeat 1 --size 8M --output {}",
        hosts.ns[0],
        hosts.agent().display(),
        HOST_IPS[0],
        HOST_IPS[1],
        target.path().display(),
        out.path().display()
    );
    let res = mpirun_like(&["unshare", "--uts", "sh", "-c", &script]);
    assert!(res.status.success(), "the two-host run failed");
    let doc = the_result(out.path());
    assert_eq!(doc.status, "complete");
    let names: Vec<&str> = doc.hosts.iter().map(|h| h.hostname.as_str()).collect();
    assert_eq!(names, vec!["hostA", "hostB"]);
    let total = &doc.tests[0].runs[0];
    let sum: u64 = doc.hosts.iter().map(|h| h.tests[0].runs[0].ops).sum();
    assert!(sum > 0);
    assert_eq!(total.ops, sum);
    drop(hosts);
}

/// The pid of the rank `rank` of a job whose ranks have `marker` in their environment.
fn rank_pid(rank: u32, marker: &str) -> Option<i32> {
    let want = format!("OMPI_COMM_WORLD_RANK={rank}");
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: i32 = e.file_name().to_str()?.parse().ok()?;
        let env = std::fs::read(e.path().join("environ")).ok()?;
        let vars: Vec<&[u8]> = env.split(|b| *b == 0).collect();
        (vars.contains(&want.as_bytes()) && vars.contains(&marker.as_bytes())).then_some(pid)
    })
}

/// `kill -9` of rank 0 left the result file at `running` for good (a single-host run is
/// marked `killed` by the next start; a distributed one's file was not recorded): the next
/// start now marks it, keeping the tests saved, and removes rank 0's leftovers.
#[test]
fn a_distributed_run_killed_with_sigkill_is_marked_by_the_next_start() {
    let test = "a_distributed_run_killed_with_sigkill_is_marked_by_the_next_start";
    let Some(target) = ram_target_or_skip(test) else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    // Finds this job's ranks among the processes (any variable not iolab's would do).
    let mark = format!("IOLAB_TEST_JOB={}", out.path().display());
    // The preset's tests of 300 ms each: rank 0 is killed once the first is in the file.
    let (mut child, _session) = spawn_mpirun(&[
        "-np",
        "2",
        "-x",
        &mark,
        "-x",
        "IOLAB_NO_HISTORY=1",
        IOLAB,
        "run",
        "-t",
        target.path().to_str().unwrap(),
        "--duration",
        "300ms",
        "--ramp",
        "0",
        "--repeat",
        "1",
        "--size",
        "8M",
        "-q",
        "--output",
        out.path().to_str().unwrap(),
    ]);
    let saved = wait_for_result(out.path(), |d| d.tests.iter().any(|t| !t.runs.is_empty()));
    let rank0 = rank_pid(0, &mark);
    if let Some(pid) = rank0 {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    let t0 = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > HANG_LIMIT {
            let _ = child.kill();
            panic!("mpirun did not end after rank 0 was killed");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(saved, "a test was saved");
    assert!(rank0.is_some(), "rank 0 found");
    let before = the_result(out.path());
    if before.status != "running" {
        eprintln!(
            "NOTE {test}: the run ended before the kill ({}): nothing to mark",
            before.status
        );
        return;
    }
    // The next start (its target does not exist: it only recovers): rank 0's file is
    // marked; rank 1, killed by mpirun, may still be ending (its leftovers wait for that).
    let o = Command::new(IOLAB)
        .args(["run", "--target"])
        .arg(target.path().join("missing"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    let marked = format!("marked {} as killed", out_file(out.path()).display());
    assert!(err.contains(&marked), "{err}");
    let after = the_result(out.path());
    assert_eq!(after.status, "killed", "{err}");
    assert_eq!(
        after.tests.len(),
        before.tests.len(),
        "the saved tests are kept"
    );
    assert_cleaned_up_or_recovered(target.path());
}

/// The one result file in `dir`.
fn out_file(dir: &std::path::Path) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .expect("a result file")
}

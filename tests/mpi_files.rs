//! Distributed `iolab files` under a real `mpirun` (cargo feature `mpi`), mdtest-style: two
//! ranks on this machine run the same plan in their own subdirectories, every phase's total
//! adds up the ranks' files over the common window, and a rank whose writes are throttled is
//! stonewalled (it stops after the portion it is in when the other rank is done) and
//! reported; Ctrl-C on mpirun keeps the sizes done and every rank cleans up. Tests skip
//! loudly without mpirun (or, for the throttled rank, without root and blkio).
#![cfg(feature = "mpi")]

use iolab::model::{ResultDoc, RunResult, TestResult};

mod common;
mod mpi_support;
use mpi_support::*;

fn files_done(r: &RunResult) -> u64 {
    r.files.as_ref().expect("files detail").files_done
}

fn phase(t: &TestResult) -> &str {
    &t.params["phase"]
}

/// Every aggregated run of every test against the ranks' own runs.
fn check_totals_add_up(doc: &ResultDoc, files_per_portion: u64) {
    for (ti, total) in doc.tests.iter().enumerate() {
        let own: Vec<&TestResult> = doc.hosts.iter().map(|h| &h.tests[ti]).collect();
        for t in &own {
            assert_eq!(t.name, total.name);
            assert_eq!(t.runs.len(), total.runs.len(), "{}", total.name);
        }
        assert_eq!(total.params["ranks"], "2");
        for (j, run) in total.runs.iter().enumerate() {
            let per: Vec<&RunResult> = own.iter().map(|t| &t.runs[j]).collect();
            // Files and bytes add up.
            assert_eq!(run.ops, per.iter().map(|r| r.ops).sum::<u64>());
            assert_eq!(
                files_done(run),
                per.iter().map(|r| files_done(r)).sum::<u64>()
            );
            assert_eq!(run.bytes, per.iter().map(|r| r.bytes).sum::<u64>());
            // Rates are over the common window: earliest start to latest end.
            let d = run.dist.as_ref().expect("dist detail");
            assert_eq!(d.ranks, 2);
            let start = d.windows.iter().map(|w| w.start_ns).min().unwrap();
            let end = d.windows.iter().map(|w| w.end_ns).max().unwrap();
            assert_eq!(start, 0);
            assert_eq!(run.elapsed_ns as i64, end - start);
            // Each rank's window is the wall-clock span of its portions: at least their
            // measured time (the wall clock may be slewed by 500 ppm at most).
            for w in &d.windows {
                let mine = per[w.rank as usize];
                assert!((w.end_ns - w.start_ns) as f64 >= mine.elapsed_ns as f64 * 0.999);
            }
            let span_rate = |k: usize| {
                let w = d.windows.iter().find(|w| w.rank as usize == k).unwrap();
                per[k].ops as f64 / (w.end_ns - w.start_ns).max(1) as f64
            };
            let window_s = run.elapsed_ns as f64 / 1e9;
            let fps = run.files_per_s.unwrap();
            assert!(close(fps, run.ops as f64 / window_s), "{run:?}");
            // Belov's cell of the total: the time all ranks together took per portion.
            let spp = run.files.as_ref().unwrap().seconds_per_portion;
            if run.ops > 0 {
                assert!(close(spp, files_per_portion as f64 / fps), "{spp}");
            }
            let sum_fps: f64 = per.iter().map(|r| r.files_per_s.unwrap_or(0.0)).sum();
            assert!(fps <= sum_fps * (1.0 + 1e-9), "{fps} > {sum_fps}");
            // The straggler is the rank with the fewest files per second of its own span.
            let (f, s) = (d.fastest_rank as usize, d.slowest_rank as usize);
            assert!(span_rate(f) >= span_rate(s));
            // A stonewalled rank stopped at a portion boundary.
            for &r in &d.stonewalled_ranks {
                assert_eq!(files_done(per[r as usize]) % files_per_portion, 0);
            }
        }
        assert!(total.summary.contains_key("straggler_spread_pct"));
        assert!(total.summary.contains_key("files_per_s"));
    }
    // The later phases of a run work on the files that rank's create phase made.
    for h in &doc.hosts {
        let creates: Vec<&TestResult> = h.tests.iter().filter(|t| phase(t) == "create").collect();
        for t in h.tests.iter().filter(|t| phase(t) != "create") {
            let size = &t.params["size_token"];
            let c = creates
                .iter()
                .find(|c| &c.params["size_token"] == size)
                .unwrap();
            for (r, cr) in t.runs.iter().zip(&c.runs) {
                assert!(files_done(r) <= files_done(cr), "{}", t.name);
            }
        }
    }
}

#[test]
fn two_ranks_run_the_same_plan_and_add_up_exactly() {
    let test = "two_ranks_run_the_same_plan_and_add_up_exactly";
    // Fixed file counts, so nothing here depends on speed; a tmpfs keeps the shared disk's
    // load out of it anyway.
    let Some(target) = ram_target_or_skip(test) else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let res = mpirun(&[
        "-np",
        "2",
        IOLAB,
        "files",
        "-t",
        target.path().to_str().unwrap(),
        "--sizes",
        "0,4K",
        "--files-per-portion",
        "100",
        "--portions",
        "3",
        "--passes",
        "2",
        "--repeat",
        "2",
        "--output",
        out.path().to_str().unwrap(),
    ]);
    assert!(res.status.success(), "mpirun failed");
    let stdout = String::from_utf8_lossy(&res.stdout);
    assert!(stdout.contains("Per host (2 ranks)"), "{stdout}");
    assert!(stdout.contains("Seconds per 100 files"), "{stdout}");
    let doc = the_result(out.path());
    check_two_rank_doc(&doc, "files");
    assert_eq!(
        doc.environment.target_path,
        target.path().display().to_string()
    );
    let names: Vec<&str> = doc.tests.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "0 B create",
            "0 B stat",
            "0 B read",
            "0 B delete",
            "4KiB create",
            "4KiB stat",
            "4KiB read",
            "4KiB delete"
        ]
    );
    for (ti, t) in doc.tests.iter().enumerate() {
        assert_eq!(t.runs.len(), 2, "{}", t.name);
        // The create phase of the same size: phases come in fours.
        let create = &doc.tests[ti - ti % 4];
        for (j, r) in t.runs.iter().enumerate() {
            let d = r.dist.as_ref().unwrap();
            let cut = d.stonewalled_ranks.len() as u64;
            if phase(t) == "create" {
                // 2 ranks x 600 files, less only what a stonewall cut.
                assert!(files_done(r) <= 1200 && files_done(r) >= 1200 - cut * 600);
                if cut == 0 {
                    assert_eq!(files_done(r), 1200);
                }
            } else if cut == 0 {
                // Not cut: every file each rank created in this run.
                assert_eq!(files_done(r), files_done(&create.runs[j]), "{}", t.name);
            }
        }
    }
    check_totals_add_up(&doc, 100);
    // 4 KiB files: bytes = files x 4096 on create and read.
    let c = &doc.tests[4];
    assert_eq!(c.runs[0].bytes, files_done(&c.runs[0]) * 4096);
    // Each rank worked in its own subdirectory, and everything is gone.
    let left: Vec<_> = std::fs::read_dir(target.path())
        .unwrap()
        .flatten()
        .collect();
    assert!(left.is_empty(), "left in the target: {left:?}");
}

#[test]
fn a_throttled_rank_is_stonewalled_and_reported() {
    let test = "a_throttled_rank_is_stonewalled_and_reported";
    // Rank 1 writes at most 10 I/Os per second (the kernel's cap, whatever the machine): with
    // an fsync per file, 10 files of 4 KiB take it a second or more, all 60 six seconds or
    // more. Rank 0 works on a tmpfs-backed loop device (an fsync there is a memory copy) and
    // does its 60 files in a fraction of a second, well under a second even on a loaded
    // machine three times slower: it always finishes first, by a wide margin.
    let Some((fs, cap)) = throttled_scratch(test, "write_iops_device", 10, true) else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let res = mpirun_with_rank1_in(
        Some(&cap.dir.join("cgroup.procs")),
        &[
            IOLAB,
            "files",
            "-t",
            fs.path().to_str().unwrap(),
            "--sizes",
            "4K",
            "--files-per-portion",
            "10",
            "--portions",
            "6",
            "--passes",
            "1",
            "--repeat",
            "1",
            "--sync",
            "file",
            "--output",
            out.path().to_str().unwrap(),
        ],
    );
    assert!(res.status.success(), "mpirun failed");
    let doc = the_result(out.path());
    assert_eq!(doc.status, "complete");
    let create = &doc.tests[0];
    assert_eq!(create.name, "4KiB create");
    let run = &create.runs[0];
    let d = run.dist.as_ref().unwrap();
    // Rank 0 did all its files; rank 1 was stopped early, after a whole portion.
    let own: Vec<&RunResult> = doc.hosts.iter().map(|h| &h.tests[0].runs[0]).collect();
    assert_eq!(files_done(own[0]), 60);
    assert!(files_done(own[1]) < 60, "{:?}", own[1].files);
    assert_eq!(files_done(own[1]) % 10, 0);
    assert_eq!(d.stonewalled_ranks, vec![1]);
    assert_eq!((d.fastest_rank, d.slowest_rank), (0, 1));
    assert!(d.straggler_spread_pct > 50.0, "{}", d.straggler_spread_pct);
    // The phase ended on time: rank 1 stopped within the portion it was in when rank 0
    // finished (its slowest portion, plus slack for the notice), not after the portions it
    // had left (a second or more each at 10 writes per second). The notice is polled every
    // 2 ms; 2 s of slack is a thousand times that, so a machine three times slower passes.
    let w = |r: u32| d.windows.iter().find(|w| w.rank == r).unwrap();
    let detail1 = own[1].files.as_ref().unwrap();
    let slowest_portion = detail1
        .portion_ns
        .iter()
        .zip(&detail1.portion_sync_ns)
        .map(|(p, s)| (p + s) as i64)
        .max()
        .unwrap();
    assert!(
        w(1).end_ns - w(0).end_ns <= slowest_portion + 2_000_000_000,
        "rank 1 ended {} ns after rank 0; its slowest portion took {slowest_portion} ns",
        w(1).end_ns - w(0).end_ns
    );
    // Its fsyncs are what held it up, and they are in the common window.
    let span = (w(1).end_ns - w(1).start_ns) as f64;
    assert!(span >= own[1].fsync_ns.unwrap() as f64 * 0.999);
    assert!(
        doc.warnings
            .iter()
            .any(|w| w.code == "straggler" && w.message.contains("rank 1")),
        "{:?}",
        doc.warnings
    );
    let stdout = String::from_utf8_lossy(&res.stdout);
    let rank1_row = stdout
        .lines()
        .find(|l| l.contains("4KiB create") && l.contains("┆    1 ┆"))
        .unwrap_or_else(|| panic!("rank 1's row: {stdout}"));
    assert!(rank1_row.contains("1/1"), "{rank1_row}");
    check_totals_add_up(&doc, 10);
    drop(cap);
}

#[test]
fn ctrl_c_on_mpirun_saves_the_sizes_done_and_cleans_up() {
    let test = "ctrl_c_on_mpirun_saves_the_sizes_done_and_cleans_up";
    let Some(target) = ram_target_or_skip(test) else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    // Twelve sizes of 2,500 files per rank each, every size repeated 40 times: interrupted
    // once the first size is saved, with eleven sizes of 40 runs each still to go. A whole
    // run of one size takes a few tens of milliseconds on a tmpfs, so the rest is hundreds of
    // such runs (seconds even on a fast machine, more on a slow one): the interrupt always
    // lands mid-run, however long mpirun takes to forward it. (Small trees: mpirun kills a
    // rank one second after its SIGTERM, and a rank still removing many files then leaves
    // them to the next start's cleanup; the repeats add no files at once.)
    let (child, _session) = spawn_mpirun(&[
        "-np",
        "2",
        IOLAB,
        "files",
        "-t",
        target.path().to_str().unwrap(),
        "--sizes",
        "0,1,2,3,4,5,6,7,8,9,10,11",
        "--files-per-portion",
        "500",
        "--portions",
        "5",
        "--passes",
        "1",
        "--repeat",
        "40",
        "--output",
        out.path().to_str().unwrap(),
    ]);
    let one_size = wait_for_result(out.path(), |d| d.tests.len() >= 4);
    let res = interrupt_and_wait(child);
    assert!(one_size, "the first size was saved before the interrupt");
    assert!(!res.status.success());
    let doc = the_result(out.path());
    assert_eq!(doc.status, "interrupted");
    // Whole sizes only (4 phases each), fewer than planned; every rank's tests alongside.
    let n = doc.tests.len();
    assert!((4..48).contains(&n) && n.is_multiple_of(4), "{n} tests");
    for h in &doc.hosts {
        assert_eq!(h.tests.len(), n);
    }
    check_totals_add_up(&doc, 500);
    assert_cleaned_up_or_recovered(target.path());
}

/// Each rank checked the room for its own files only, so two ranks whose files together do
/// not fit started and ran out of space mid-run (ENOSPC, a failed result, exit 1), where
/// one process is refused up front. Now the ranks' files are counted together: refused
/// (exit 2) before anything is created, while one process's files still pass.
#[test]
fn ranks_whose_files_do_not_fit_together_are_refused_before_measuring() {
    let test = "ranks_whose_files_do_not_fit_together_are_refused_before_measuring";
    if !mpirun_or_skip(test) {
        return;
    }
    // 600 files of 4 KiB (2.4 MiB with their directories) per rank on 4 MiB: one fits, two
    // do not.
    let Some(fs) = common::ram_scratch_or_skip(test, "tmpfs", 4 << 20, &[], "") else {
        return;
    };
    let target = fs.path().to_str().unwrap();
    let args = [
        "files",
        "-t",
        target,
        "--sizes",
        "4K",
        "--files-per-portion",
        "100",
        "--portions",
        "3",
        "--passes",
        "2",
        "--repeat",
        "1",
        "--no-save",
    ];
    let res = mpirun(&[&["-np", "2", IOLAB][..], &args].concat());
    let err = String::from_utf8_lossy(&res.stderr);
    assert_eq!(res.status.code(), Some(2), "{err}");
    assert!(
        err.contains("2 ranks, each making its own files:") && err.contains("not enough room"),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(fs.path()).unwrap().flatten().collect();
    assert!(left.is_empty(), "left in the target: {left:?}");
    let one = std::process::Command::new(IOLAB)
        .args(args)
        .output()
        .unwrap();
    assert!(
        one.status.success(),
        "{}",
        String::from_utf8_lossy(&one.stderr)
    );
}

/// Each rank's `cpu-contention` warning was passed on as it came ("on rank 1 (host), the
/// measuring thread waited …" beside rank 0's own), and the totals, which carry the longest
/// wait, had none of their own: the result now gives it once per test, over the totals, as
/// one host's `iolab files` does (both ranks and a spinning thread on one CPU).
#[test]
fn the_ranks_cpu_contention_is_given_once_over_the_totals() {
    let test = "the_ranks_cpu_contention_is_given_once_over_the_totals";
    let Some(t) = ram_target_or_skip(test) else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let session = ompi_tmpdir();
    let mut cmd = std::process::Command::new("mpirun");
    cmd.args([
        "--oversubscribe",
        "--bind-to",
        "none",
        "-np",
        "2",
        IOLAB,
        "files",
    ])
    .args([
        "-t",
        common::s(t.path()),
        "--sizes",
        "1",
        "--phases",
        "create",
    ])
    .args([
        "--files-per-portion",
        "1000",
        "--portions",
        "6",
        "--passes",
        "1",
    ])
    .args(["--repeat", "1", "--output", common::s(out.path())])
    .env("OMPI_MCA_orte_tmpdir_base", session.path())
    .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
    .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    .env("OMPI_MCA_mpi_yield_when_idle", "1")
    .env("OMPI_MCA_rmaps_base_oversubscribe", "1");
    let Some(res) = common::output_beside_a_spinner(test, &mut cmd) else {
        return;
    };
    assert!(
        res.status.success(),
        "{}",
        String::from_utf8_lossy(&res.stderr)
    );
    let doc = the_result(out.path());
    let total = &doc.tests[0];
    let wait = |r: &RunResult| r.files.as_ref().and_then(|f| f.cpu_wait_pct);
    let longest = doc
        .hosts
        .iter()
        .filter_map(|h| wait(&h.tests[0].runs[0]))
        .reduce(f64::max)
        .expect("the ranks' waits");
    assert_eq!(wait(&total.runs[0]), Some(longest));
    assert!(longest > 20.0, "the ranks waited only {longest} %");
    let warned: Vec<&str> = doc
        .warnings
        .iter()
        .filter(|w| w.code == iolab::model::WarningCode::CpuContention)
        .map(|w| w.message.as_str())
        .collect();
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(
        warned[0].starts_with(&format!(
            "the measuring thread waited {longest:.0} % of the run"
        )),
        "{}",
        warned[0]
    );
    assert_eq!(
        doc.warnings
            .iter()
            .find(|w| w.code == iolab::model::WarningCode::CpuContention)
            .and_then(|w| w.test.as_deref()),
        Some(total.name.as_str())
    );
}

/// `--jobs 2` under mpirun was taken and ignored (one writer per rank), with the room check
/// asking for twice the space: refused, as `--shared-dir` is, before anything is created.
#[test]
fn jobs_under_mpirun_are_refused() {
    let test = "jobs_under_mpirun_are_refused";
    let Some(t) = ram_target_or_skip(test) else {
        return;
    };
    let target = common::s(t.path());
    let res = mpirun(&[
        "-np",
        "2",
        IOLAB,
        "files",
        "-t",
        target,
        "--jobs",
        "2",
        "--no-save",
    ]);
    let err = String::from_utf8_lossy(&res.stderr);
    assert_eq!(res.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "--jobs 2 is for writers on one host: under mpirun/srun every rank is one writer"
        ),
        "{err}"
    );
    assert!(common::entries(t.path()).is_empty(), "nothing created");
}

//! `iolab files --jobs N`: N writers (threads) on one host, each with its own directory, as
//! mdtest's unique-directory mode (or, with `--shared-dir`, all in the same directories, each
//! under its own file names, as mdtest's shared mode) — the single-host counterpart of the MPI mode (src/dist):
//! every writer runs the same plan through the same code (`run_with_hooks`), every phase
//! starts on all of them together (a barrier), the first to finish its portions raises the
//! stonewall and the others stop after the portion they are in; the totals of each phase
//! are added up over the common window (`dist::aggregate`, as for ranks), and the spread
//! between the writers (fastest, slowest, straggler spread) is kept in each run's `dist`.

use std::os::fd::{AsFd, BorrowedFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, anyhow};

use crate::dist::aggregate::{RankRun, add_dist_summaries, aggregate_files_run};
use crate::fs::alloc::FsRules;
use crate::model::{ResultDoc, ResultSink, RunResult, TestResult, Warning};
use crate::runner::RunContext;
use crate::workload::df::warn_other_writers;
use crate::workload::files::Layout;
use crate::workload::files::config::{FilesConfig, Writer};
use crate::workload::files::result::{
    SharedDevice, judge_shared_device, summarize_files_test, warn_contention,
};
use crate::workload::files::run::{FilesHooks, run_with_hooks};
use crate::workload::files::scaling::analyse;
use crate::workload::files::space::{FileSet, held_by, record_held};

/// A barrier that a failing writer can break, so that the others do not wait for it
/// forever: `wait` then fails.
struct Barrier {
    n: usize,
    /// (arrived in this generation, generation, broken)
    state: Mutex<(usize, u64, bool)>,
    cv: Condvar,
}

impl Barrier {
    fn new(n: usize) -> Barrier {
        Barrier {
            n,
            state: Mutex::new((0, 0, false)),
            cv: Condvar::new(),
        }
    }

    fn wait(&self) -> Result<()> {
        let broken = || anyhow!("another writer failed");
        let mut st = self.state.lock().map_err(|_| broken())?;
        if st.2 {
            return Err(broken());
        }
        st.0 += 1;
        if st.0 == self.n {
            st.0 = 0;
            st.1 += 1;
            self.cv.notify_all();
            return Ok(());
        }
        let generation = st.1;
        while st.1 == generation && !st.2 {
            st = self.cv.wait(st).map_err(|_| broken())?;
        }
        if st.1 == generation {
            Err(broken())
        } else {
            Ok(())
        }
    }

    fn break_it(&self) {
        if let Ok(mut st) = self.state.lock() {
            st.2 = true;
        }
        self.cv.notify_all();
    }
}

/// One phase of one writer: its result, its window (wall clock ns), stopped by the
/// stonewall.
type PhaseRecord = (RunResult, (i64, i64), bool);

/// df's used bytes of the target before the writers' create phase of a run and with all
/// their files in place (`None`: no block counts, e.g. fusefat).
type DfReading = (Option<u64>, Option<u64>);

/// One writer's view of the others.
struct JobHooks<'a> {
    barrier: &'a Barrier,
    /// The phase (1-based count of phases begun) whose stonewall is up.
    wall: &'a AtomicU64,
    /// Phases this writer has begun.
    phase: AtomicU64,
    /// `agree_more`: writer 0's answer, read by all.
    vote: &'a Mutex<bool>,
    first: bool,
    /// `--shared-dir`: the writers meet after each run.
    shared: bool,
    /// This writer's phases: result, window, stonewalled.
    phases: Mutex<Vec<PhaseRecord>>,
    /// Phases per run (create first).
    nops: u64,
    /// Writer 0: the target, whose df it reads around every create phase of all the
    /// writers (before any starts, after all are done), as one writer reads it around its own.
    target: Option<BorrowedFd<'a>>,
    /// The readings, one per create phase.
    df: &'a Mutex<Vec<DfReading>>,
}

impl JobHooks<'_> {
    fn used(&self) -> Option<u64> {
        self.target
            .and_then(crate::workload::files::space::used_bytes)
    }
}

impl FilesHooks for JobHooks<'_> {
    fn before_phase(&self) -> Result<()> {
        // The barrier lets nobody start before writer 0 has read df (outside the timing).
        if self.first && self.phase.load(Ordering::SeqCst).is_multiple_of(self.nops) {
            let before = self.used();
            let mut df = self.df.lock().map_err(|_| anyhow!("a writer panicked"))?;
            df.push((before, None));
        }
        self.barrier.wait()?;
        self.phase.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    fn poll_interval(&self) -> Duration {
        Duration::from_millis(2)
    }

    fn poll(&self) -> bool {
        self.wall.load(Ordering::SeqCst) == self.phase.load(Ordering::SeqCst)
    }

    fn after_phase(&self, run: &RunResult, window: (i64, i64), stonewalled: bool) -> Result<()> {
        if !stonewalled {
            // Done with its portions: the others stop after the one they are in.
            self.wall
                .fetch_max(self.phase.load(Ordering::SeqCst), Ordering::SeqCst);
        }
        self.phases
            .lock()
            .map_err(|_| anyhow!("a writer panicked"))?
            .push((run.clone(), window, stonewalled));
        // A create phase: df once every writer's files are in place.
        if (self.phase.load(Ordering::SeqCst) - 1).is_multiple_of(self.nops) {
            self.barrier.wait()?;
            if self.first {
                let with = self.used();
                let mut df = self.df.lock().map_err(|_| anyhow!("a writer panicked"))?;
                if let Some(last) = df.last_mut() {
                    last.1 = with;
                }
            }
        }
        Ok(())
    }

    fn agree_more(&self, local: bool) -> Result<bool> {
        // Writer 0 decides (its own figures), everyone follows: the same plan on all.
        if self.first {
            *self.vote.lock().map_err(|_| anyhow!("a writer panicked"))? = local;
        }
        self.barrier.wait()?;
        let v = *self.vote.lock().map_err(|_| anyhow!("a writer panicked"))?;
        self.barrier.wait()?;
        Ok(v)
    }

    fn after_size(&self, _tests: &[TestResult], _warnings: &[Warning]) -> Result<()> {
        Ok(())
    }

    fn after_run(&self) -> Result<()> {
        // --shared-dir: writer 0 removes the shared run directory once all are past it.
        if self.shared {
            self.barrier.wait()?;
        }
        Ok(())
    }
}

/// Run the plan on `cfg.jobs` writers and put the totals into `doc`.
pub fn measure(
    cfg: &FilesConfig,
    ctx: &RunContext,
    doc: &mut ResultDoc,
    sink: &ResultSink,
) -> Result<()> {
    let n = cfg.jobs as usize;
    // One directory per writer, inside a work directory of this run.
    let work = crate::fs::registry::WorkDir::new(
        tempfile::Builder::new()
            .prefix(".iolab-files-jobs-")
            .tempdir_in(&cfg.target)
            .with_context(|| {
                format!("cannot create a work directory in {}", cfg.target.display())
            })?,
    );
    // With --shared-dir one directory for all, each writer on its own file names.
    let shared: PathBuf = work.path().join("shared");
    if cfg.shared_dir {
        std::fs::create_dir(&shared)
            .with_context(|| format!("cannot create {}", shared.display()))?;
    }
    let mut cfgs = Vec::new();
    for j in 0..n {
        let (dir, writer) = if cfg.shared_dir {
            let w = Writer {
                index: j as u64,
                of: n as u64,
            };
            (shared.clone(), Some(w))
        } else {
            let dir: PathBuf = work.path().join(format!("job-{j:03}"));
            std::fs::create_dir(&dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            (dir, None)
        };
        cfgs.push(FilesConfig {
            target: dir,
            jobs: 1,
            writer,
            out: crate::model::Delivery::default(),
            ..cfg.clone()
        });
    }
    let barrier = Barrier::new(n);
    let wall = AtomicU64::new(0);
    let vote = Mutex::new(false);
    let target = std::fs::File::open(&cfg.target).ok();
    let df = Mutex::new(Vec::new());
    let hooks: Vec<JobHooks> = (0..n)
        .map(|j| JobHooks {
            barrier: &barrier,
            wall: &wall,
            phase: AtomicU64::new(0),
            vote: &vote,
            first: j == 0,
            shared: cfg.shared_dir,
            phases: Mutex::new(Vec::new()),
            nops: phases_per_run(cfg) as u64,
            target: target.as_ref().filter(|_| j == 0).map(|f| f.as_fd()),
            df: &df,
        })
        .collect();
    let mut docs: Vec<ResultDoc> = (0..n)
        .map(|_| ResultDoc {
            tests: Vec::new(),
            warnings: Vec::new(),
            ..doc.clone()
        })
        .collect();
    let outcomes: Vec<Result<()>> = std::thread::scope(|s| {
        let handles: Vec<_> = docs
            .iter_mut()
            .zip(&cfgs)
            .zip(&hooks)
            .map(|((d, c), h)| {
                let barrier = &barrier;
                s.spawn(move || {
                    let r =
                        run_with_hooks(c, ctx, d, &ResultSink::none(), Some(h as &dyn FilesHooks))
                            .map(|_| ());
                    if r.is_err() {
                        barrier.break_it();
                    }
                    r
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow!("a writer panicked")))
            })
            .collect()
    });
    // A writer that failed broke the barrier, so all have ended here; its own error is the
    // one to report (the others only say that another writer failed), an interrupt first.
    let errors: Vec<anyhow::Error> = outcomes.into_iter().filter_map(Result::err).collect();
    let pick = errors
        .iter()
        .position(|e| crate::error::interrupted(e).is_some())
        .or_else(|| {
            errors
                .iter()
                .position(|e| !e.to_string().contains("another writer failed"))
        });
    if let Some(e) = errors.into_iter().nth(pick.unwrap_or(0)) {
        return Err(e);
    }
    let mut phases: Vec<Vec<PhaseRecord>> = hooks
        .into_iter()
        .map(|h| h.phases.into_inner().unwrap_or_default())
        .collect();
    let df = df.into_inner().unwrap_or_default();
    let tests = totals(cfg, &docs, &mut phases, &df, doc);
    doc.tests = tests.map_err(|e| anyhow!("adding up the writers: {e}"))?;
    for w in &docs[0].warnings {
        doc.warn(w.clone());
    }
    // Over all writers (writer 0's own warning gave only its thread's wait).
    for t in 0..doc.tests.len() {
        warn_contention(cfg, doc, t);
    }
    sink.save(doc)?;
    work.close().with_context(|| {
        format!(
            "cannot remove the writers' directories in {}",
            cfg.target.display()
        )
    })?;
    Ok(())
}

/// Phases per run: create, then those of stat, read and delete asked for.
fn phases_per_run(cfg: &FilesConfig) -> usize {
    1 + usize::from(cfg.phases.stat) + usize::from(cfg.phases.read) + usize::from(cfg.phases.delete)
}

/// The writers' tests added up: every writer ran the same tests, runs and phases; each
/// writer's phases are in the order they ran (per size: run by run, phase by phase). The
/// device check of each create run is made over all the writers (they share the device,
/// as the ranks of one host do), and its space record from `df` (one reading per create
/// run), with their `other-writers` warnings into `doc`.
fn totals(
    cfg: &FilesConfig,
    docs: &[ResultDoc],
    phases: &mut [Vec<PhaseRecord>],
    df: &[DfReading],
    doc: &mut ResultDoc,
) -> Result<Vec<TestResult>, String> {
    // What the writers' files hold at most, by the rules of the target's file system.
    let rules = crate::workload::files::space::rules_for(&cfg.target);
    let tests0 = &docs[0].tests;
    let nops = phases_per_run(cfg);
    let mut out = Vec::new();
    let mut seq = 0usize;
    let mut creates = df.iter();
    for base in (0..tests0.len()).step_by(nops) {
        let runs = tests0[base].runs.len();
        let mut group: Vec<TestResult> = tests0[base..base + nops]
            .iter()
            .map(|t| TestResult {
                runs: Vec::new(),
                ..t.clone()
            })
            .collect();
        // The directory-scaling curve is that of the writer with the most create portions
        // (the first of those): a writer the stonewall stopped early (on a busy machine,
        // one that started late) has a shorter curve, or none, and writer 0's was taken.
        let longest = longest_create(docs, base);
        if let Some(d) = group[0].files.as_mut() {
            d.scaling = longest.files.as_ref().and_then(|f| f.scaling.clone());
        }
        let size = group[0].files.as_ref().map_or(0, |f| f.file_size_bytes);
        for _ in 0..runs {
            for (k, g) in group.iter_mut().enumerate() {
                let judged = (k == 0)
                    .then(|| judge_create(cfg, rules.as_ref(), doc, &g.name, size, phases, seq));
                let ranks: Vec<RankRun> = phases
                    .iter()
                    .enumerate()
                    .map(|(j, p)| {
                        let (run, (start_ns, end_ns), stonewalled) = p
                            .get(seq)
                            .ok_or_else(|| format!("writer {j} has no phase {}", seq + 1))?;
                        Ok(RankRun {
                            rank: j as u32,
                            run,
                            start_ns: *start_ns,
                            end_ns: *end_ns,
                            stonewalled: *stonewalled,
                        })
                    })
                    .collect::<Result<_, String>>()?;
                let mut total = aggregate_files_run(&ranks, cfg.files_per_portion)?;
                // Every writer's counters saw all the writers' I/O, each over its own
                // phase: the total has those of the writer measured longest, and with them
                // its (the group's) write amplification.
                if let Some(r) = ranks
                    .iter()
                    .map(|r| r.run)
                    .filter(|r| r.device.is_some())
                    .max_by_key(|r| r.device.as_ref().map(|d| d.elapsed_ms))
                {
                    total.device = r.device.clone();
                    total.write_amplification = r.write_amplification;
                }
                total.run = g.runs.len() as u32 + 1;
                // One df reading per create run, none for the other phases.
                if let Some(judged) = judged
                    && let Some(&(Some(before), Some(with))) = creates.next()
                {
                    space_of_create(doc, &g.name, &mut total, (before, with), judged);
                }
                g.runs.push(total);
                seq += 1;
            }
        }
        // The create test's directory-scaling curve is that writer's portions; where the
        // other writers' files are in the same scope (shared directories, or the file
        // system of a per-portion or per-pass layout), count theirs too: the writers start
        // together and go at about the same pace, so at writer 0's portion i about
        // jobs x i portions' files are there (not i, as a single writer's curve said).
        if cfg.jobs > 1 && (cfg.shared_dir || cfg.layout != Layout::Flat) {
            let series: Vec<&[u64]> = longest
                .runs
                .iter()
                .filter_map(|r| r.files.as_ref().map(|d| d.portion_ns.as_slice()))
                .collect();
            let scaling = analyse(
                &series,
                cfg.files_per_portion * u64::from(cfg.jobs),
                cfg.layout == Layout::Flat,
            )
            .map(|mut s| {
                s.message
                    .push_str(&format!(" (all {} writers' files)", cfg.jobs));
                s
            });
            if let Some(d) = group[0].files.as_mut() {
                d.scaling = scaling;
            }
        }
        for mut g in group {
            g.params.insert("jobs".into(), cfg.jobs.to_string());
            let dirs = if cfg.shared_dir { "shared" } else { "own" };
            g.params.insert("job_dirs".into(), dirs.into());
            summarize_files_test(&mut g);
            add_dist_summaries(&mut g);
            out.push(g);
        }
    }
    Ok(out)
}

/// The space record of a create total from df `before` and `with` all the writers' files,
/// judged as one writer's run is (`space::record`): df that grew by more than all their
/// files hold (`judged.0`) is `other-writers`; a device that wrote more (`judged.1`, warned
/// by `judge_create`) leaves the growth out too.
fn space_of_create(
    doc: &mut ResultDoc,
    test: &str,
    total: &mut RunResult,
    (before, with): (u64, u64),
    (held, device_others): (u64, bool),
) {
    let mut space = record_held(before, with, held, None);
    if device_others {
        space.other_writers = true;
        space.used_delta_bytes = None;
    } else if space.other_writers {
        let during = format!(
            "while the files of its {} writer(s) hold at most {}",
            total.dist.as_ref().map_or(0, |d| d.ranks),
            crate::units::fmt_size_iec(held)
        );
        let delta = with as i64 - before as i64;
        warn_other_writers(doc, test, total.run, delta, &during, "the files'");
    }
    if let Some(f) = total.files.as_mut() {
        f.space = Some(space);
    }
}

/// The device check of the create run at `seq` of every writer's phases (`size`-byte
/// files), as a distributed run's ranks on one device are checked: what all their files
/// hold at most, and whether another program wrote to the device.
fn judge_create(
    cfg: &FilesConfig,
    rules: Option<&FsRules>,
    doc: &mut ResultDoc,
    test: &str,
    size: u64,
    phases: &mut [Vec<PhaseRecord>],
    seq: usize,
) -> (u64, bool) {
    let mut runs: Vec<&mut RunResult> = phases
        .iter_mut()
        .filter_map(|p| p.get_mut(seq).map(|(run, _, _)| run))
        .collect();
    let on = SharedDevice {
        device: "the device",
        writer: "writer",
    };
    judge_shared_device(doc, test, &on, &mut runs, |files| {
        held_by(&FileSet::of(cfg, size, files), cfg.alloc_unit, rules)
    })
}

/// The create test at `base` of the writer that completed the most portions in it (the
/// first such writer).
fn longest_create(docs: &[ResultDoc], base: usize) -> &TestResult {
    let portions = |t: &TestResult| -> usize {
        t.runs
            .iter()
            .filter_map(|r| r.files.as_ref())
            .map(|f| f.portion_ns.len())
            .sum()
    };
    let mut best = &docs[0].tests[base];
    for d in &docs[1..] {
        if let Some(t) = d.tests.get(base)
            && portions(t) > portions(best)
        {
            best = t;
        }
    }
    best
}

/// Under the table of a `--jobs` run: per test, the writers' spread (the median run's).
pub fn render_jobs(doc: &ResultDoc) -> String {
    let mut out = String::new();
    for t in &doc.tests {
        let Some(jobs) = t.params.get("jobs") else {
            continue;
        };
        let dists: Vec<_> = t.runs.iter().filter_map(|r| r.dist.as_ref()).collect();
        if dists.is_empty() {
            continue;
        }
        let mut spreads: Vec<f64> = dists.iter().map(|d| d.straggler_spread_pct).collect();
        spreads.sort_by(f64::total_cmp);
        let stonewalled: usize = dists.iter().map(|d| d.stonewalled_ranks.len()).sum();
        let dirs = match t.params.get("job_dirs").map(String::as_str) {
            Some("shared") => "in shared directories",
            _ => "each in its own directory",
        };
        out.push_str(&format!(
            "{}: {jobs} writers {dirs}, spread between them {:.1} % (median of {} runs; fastest writer {}, slowest {} in the last), {} writer-phases stopped by the stonewall\n",
            t.name,
            spreads[spreads.len() / 2],
            spreads.len(),
            dists[dists.len() - 1].fastest_rank,
            dists[dists.len() - 1].slowest_rank,
            stonewalled
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::files::{FilesRunDetail, FilesTestDetail};
    use crate::model::{Environment, RunResult};

    fn writer(portions: usize, scaling: &str) -> ResultDoc {
        let mut d = ResultDoc::new("files", Vec::new(), Environment::default());
        d.tests.push(TestResult {
            files: Some(FilesTestDetail {
                scaling: crate::workload::files::scaling::analyse(
                    &[&vec![1_000_000; portions]],
                    100,
                    true,
                )
                .map(|mut s| {
                    s.message = scaling.into();
                    s
                }),
                ..Default::default()
            }),
            runs: vec![RunResult {
                files: Some(FilesRunDetail {
                    portion_ns: vec![1_000_000; portions],
                    ..Default::default()
                }),
                ..Default::default()
            }],
            ..Default::default()
        });
        d
    }

    /// `--jobs` create runs had no device check and no device figures at all: the writers'
    /// counters (each sees all of them) were dropped with their runs. Now they are judged
    /// together as the ranks on one device are: 2 writers' 20 MB of files explain 70 MiB
    /// written, and the total carries the device and the group's write amplification;
    /// 150 MiB is another program's (`other-writers`, no write amplification).
    #[test]
    fn the_writers_are_judged_together_and_the_total_carries_the_device() {
        let dir = tempfile::tempdir().unwrap();
        let argv = ["iolab", "files", "-t", dir.path().to_str().unwrap()];
        let cli = crate::cli::try_parse_from(argv.into_iter().chain([
            "--sizes",
            "4K",
            "--phases",
            "create",
            "--jobs",
            "2",
            "--files-per-portion",
            "1000",
            "--portions",
            "5",
            "--passes",
            "1",
        ]))
        .unwrap();
        let crate::cli::Command::Files(args) = cli.command else {
            unreachable!()
        };
        let cfg = FilesConfig::from_args(&args).unwrap();
        let writer = |written: u64, elapsed_ms: u64| -> (ResultDoc, Vec<PhaseRecord>) {
            let mut run = crate::workload::files::result::created_beside(written);
            if let Some(d) = run.device.as_mut() {
                d.elapsed_ms = elapsed_ms;
            }
            let mut d = ResultDoc::new("files", Vec::new(), Environment::default());
            let mut t = crate::workload::files::result::new_test(
                &cfg,
                &cfg.sizes[0],
                "create",
                "4KiB create".into(),
            );
            t.runs.push(run.clone());
            d.tests.push(t);
            (d, vec![(run, (0, 1_000_000_000), false)])
        };
        let add_up = |w: [(u64, u64); 2], df: &[DfReading]| {
            let (d0, p0) = writer(w[0].0, w[0].1);
            let (d1, p1) = writer(w[1].0, w[1].1);
            let mut doc = ResultDoc::new("files", Vec::new(), Environment::default());
            let tests = totals(&cfg, &[d0, d1], &mut [p0, p1], df, &mut doc).unwrap();
            (tests[0].runs[0].clone(), doc.warnings)
        };
        let (total, warnings) = add_up([(69 << 20, 900), (70 << 20, 1000)], &[]);
        assert!(warnings.is_empty(), "{warnings:?}");
        let dev = total.device.expect("the device's counters");
        assert_eq!((dev.write_bytes, dev.elapsed_ms), (70 << 20, 1000));
        let wa = total.write_amplification.expect("write amplification");
        assert!((wa - (70 << 20) as f64 / 40.96e6).abs() < 1e-9, "{wa}");
        let (total, warnings) = add_up([(150 << 20, 1000), (150 << 20, 1000)], &[]);
        assert_eq!(total.write_amplification, None);
        assert!(total.device.is_some());
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let w = &warnings[0];
        assert_eq!(w.code, crate::model::WarningCode::OtherWriters);
        assert_eq!(w.test.as_deref(), Some("4KiB create"));
        assert!(
            w.message.starts_with(
                "the device wrote 150.0 MiB in run 1 while the files of its 2 writer(s) hold at most "
            ) && w.message.contains(
                "so the write amplification of those writers is not the files' alone (left out)"
            ),
            "{}",
            w.message
        );
        // df around the writers' create phase: their 40 MB of files in place, 42 MiB more
        // used, is theirs (the space record); 150 MiB more is another program's.
        let gib = 1u64 << 30;
        let clean = [(Some(gib), Some(gib + (42 << 20)))];
        let (total, warnings) = add_up([(70 << 20, 1000), (70 << 20, 1000)], &clean);
        assert!(warnings.is_empty(), "{warnings:?}");
        let space = total.files.unwrap().space.expect("the space record");
        assert_eq!(space.used_delta_bytes, Some(42 << 20));
        assert!(!space.other_writers);
        let busy = [(Some(gib), Some(gib + (150 << 20)))];
        let (total, warnings) = add_up([(70 << 20, 1000), (70 << 20, 1000)], &busy);
        let space = total.files.unwrap().space.expect("the space record");
        assert!(space.other_writers && space.used_delta_bytes.is_none());
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].message.starts_with(
                "df's used space grew by 150.0 MiB in run 1 while the files of its 2 writer(s) hold at most "
            ),
            "{}",
            warnings[0].message
        );
        // The device's other writer leaves the df growth out too, with its own warning.
        let (total, warnings) = add_up([(150 << 20, 1000), (150 << 20, 1000)], &clean);
        let space = total.files.unwrap().space.expect("the space record");
        assert!(space.other_writers && space.used_delta_bytes.is_none());
        assert!(
            warnings[0].message.starts_with("the device wrote"),
            "{warnings:?}"
        );
    }

    /// On a busy machine writer 0 may start late and be stopped by the stonewall before
    /// its first portion: the test then had no directory-scaling line at all, though
    /// writer 1 wrote every portion.
    #[test]
    fn the_scaling_curve_is_the_writer_s_with_the_most_portions() {
        let docs = [writer(0, "w0"), writer(2, "w1"), writer(2, "w2")];
        let t = longest_create(&docs, 0);
        assert_eq!(
            t.files.as_ref().unwrap().scaling.as_ref().unwrap().message,
            "w1"
        );
        let docs = [writer(2, "w0"), writer(2, "w1")];
        let t = longest_create(&docs, 0);
        assert_eq!(
            t.files.as_ref().unwrap().scaling.as_ref().unwrap().message,
            "w0"
        );
    }
}

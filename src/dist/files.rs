//! `iolab files` under mpirun/srun (mdtest-style): every rank runs the same plan (sizes x
//! runs x phases) in its own subdirectory (`iolab-rank-N`) of the shared directory. Each
//! phase starts on all ranks together (a barrier) and stops on all of them when the first
//! rank has done its portions (stonewall: the others stop after the portion they are in, and
//! the later phases of the run work on the files each rank made). After every size rank 0
//! gathers the ranks' tests and adds them up over the common window of each phase (files and
//! bytes summed, rates from the earliest start to the latest end, clocks corrected); it
//! writes the one result (totals in `tests[]`, each rank's own tests in `hosts[]`).

use std::cell::RefCell;
use std::time::Duration;

use anyhow::{Result, anyhow};
use serde::{Deserialize, Serialize};

use crate::cli::files::FilesArgs;
use crate::dist::ClockOffset;
use crate::dist::aggregate::{RankRun, add_dist_summaries, aggregate_files_run, dist_warnings};
use crate::dist::clock::measure_offsets;
use crate::dist::hooks::{DistHooks, LocalWindow, from_rank, host_rows};
use crate::dist::session::{Prepared, RankSpace, Session, print_tables};
use crate::error::Interrupted;
use crate::model::{ResultDoc, ResultSink, RunResult, TestResult, Warning};
use crate::report::dist::render_files_hosts;
use crate::report::files::render_files_table;
use crate::runner::RunHooks;
use crate::stats::repeat::spread_warnings;
use crate::workload::files::config::FilesConfig;
use crate::workload::files::result::summarize_files_test;
use crate::workload::files::run::{FilesHooks, run_with_hooks};

fn setup(args: &FilesArgs, rank: u32) -> Result<Prepared<FilesConfig>> {
    // Every flag is checked on the target as given before anything is created.
    let shared = FilesConfig::from_args(args)?;
    if shared.big.is_some() {
        return Err(crate::usage!(
            "--big does not run distributed yet: leave it out under mpirun/srun (the small-file phases do run on every rank)"
        ));
    }
    if shared.shared_dir {
        return Err(crate::usage!(
            "--shared-dir is for --jobs on one host: under mpirun/srun every rank works in its own directory"
        ));
    }
    let space = RankSpace::claim(std::slice::from_ref(&args.target), rank)?;
    let mut rank_args = args.clone();
    rank_args.target = space.dirs[0].path.clone();
    let cfg = FilesConfig::from_args(&rank_args)?;
    let output = cfg.out.dir.clone();
    Prepared::new(cfg, space, rank, output.as_deref(), "files")
}

/// What a rank sends rank 0 after every size.
#[derive(Debug, Serialize, Deserialize)]
struct RankSize {
    rank: u32,
    hostname: String,
    /// One per phase, in the order they ran.
    tests: Vec<TestResult>,
    /// One per phase of each run, run-major: run j's phase k is `j * tests.len() + k`.
    windows: Vec<LocalWindow>,
    /// Everything this rank has warned about so far.
    warnings: Vec<Warning>,
}

struct FilesDist<'a> {
    base: DistHooks<'a>,
    files_per_portion: u64,
    repeat: crate::stats::repeat::RepeatMode,
    /// Rank 0: the one result document and where it goes.
    doc: Option<RefCell<ResultDoc>>,
    sink: &'a ResultSink,
    /// Rank 0: every rank's clock minus rank 0's (index = rank), as last estimated.
    offsets: RefCell<Vec<ClockOffset>>,
}

impl FilesDist<'_> {
    /// Rank 0: the tests of one size from every rank -> the totals, the host rows, the
    /// warnings; saved.
    fn collect(&self, doc: &mut ResultDoc, all: Vec<RankSize>, used: &[ClockOffset]) -> Result<()> {
        let nphases = all[0].tests.len();
        if let Some(m) = all.iter().find(|m| m.tests.len() != nphases) {
            return Err(anyhow!(
                "rank {} ran {} phases where rank 0 ran {nphases}: the ranks are out of step",
                m.rank,
                m.tests.len()
            ));
        }
        let mut totals = Vec::new();
        for k in 0..nphases {
            let base = &all[0].tests[k];
            let mut total = TestResult {
                name: base.name.clone(),
                family: base.family.clone(),
                config: base.config.clone(),
                params: base.params.clone(),
                files: base.files.clone().map(|mut f| {
                    // The scaling curve is each rank's own (in hosts[]).
                    f.scaling = None;
                    f
                }),
                ..Default::default()
            };
            total.params.insert("ranks".into(), all.len().to_string());
            let nruns = all.iter().map(|m| m.tests[k].runs.len()).min().unwrap_or(0);
            for j in 0..nruns {
                let ranks: Vec<RankRun> =
                    all.iter()
                        .map(|m| {
                            let off = used.get(m.rank as usize).map_or(0, |o| o.offset_ns);
                            let w =
                                m.windows.get(j * nphases + k).copied().ok_or_else(|| {
                                    anyhow!("rank {} sent too few windows", m.rank)
                                })?;
                            Ok(RankRun {
                                rank: m.rank,
                                run: &m.tests[k].runs[j],
                                start_ns: w.start_ns - off,
                                end_ns: w.end_ns - off,
                                stonewalled: w.stonewalled,
                            })
                        })
                        .collect::<Result<_>>()?;
                total.runs.push(
                    aggregate_files_run(&ranks, self.files_per_portion).map_err(|e| anyhow!(e))?,
                );
            }
            total.error = all.iter().find_map(|m| {
                m.tests[k]
                    .error
                    .as_ref()
                    .map(|e| format!("rank {} ({}): {e}", m.rank, m.hostname))
            });
            summarize_files_test(&mut total);
            add_dist_summaries(&mut total);
            totals.push(total);
        }
        let names: Vec<(u32, &str)> = all.iter().map(|m| (m.rank, m.hostname.as_str())).collect();
        let mut warnings = Vec::new();
        for m in &all {
            for w in &m.warnings {
                let w = if m.rank == 0 {
                    w.clone()
                } else if all[0].warnings.contains(w) {
                    continue;
                } else {
                    from_rank(m.rank, &m.hostname, w.clone())
                };
                if !doc.warnings.contains(&w) && !warnings.contains(&w) {
                    warnings.push(w);
                }
            }
        }
        for t in &totals {
            warnings.extend(dist_warnings(t, &names, used));
            // The repeat honesty of the totals (the ranks' own are among theirs).
            if t.params.get("phase").is_some_and(|p| p == "create") {
                warnings.extend(
                    spread_warnings(t, &self.repeat)
                        .into_iter()
                        .map(|w| Warning {
                            message: format!("all ranks together, {}", w.message),
                            ..w
                        }),
                );
            }
        }
        for w in warnings {
            doc.warn(w);
        }
        host_rows(doc, all.iter().map(|m| (m.rank, m.hostname.as_str())));
        for (h, m) in doc.hosts.iter_mut().zip(all) {
            h.tests.extend(m.tests);
        }
        doc.tests.extend(totals);
        Ok(())
    }
}

impl FilesDist<'_> {
    /// Rank 0 saves an interrupt at once, before the ranks remove their file trees: mpirun
    /// follows the SIGTERM it forwards with SIGKILL a second later (Open MPI's
    /// `odls_base_sigkill_timeout`), which removing many files can outlast.
    fn saving_interrupt(&self, r: Result<()>) -> Result<()> {
        if let (Err(e), Some(doc)) = (&r, &self.doc)
            && let Some(i) = e.downcast_ref::<Interrupted>()
        {
            let mut d = doc.borrow().clone();
            let again = Interrupted {
                signal: i.signal,
                signal_name: i.signal_name,
            };
            d.finish(&Err(again.into()));
            let _ = self.sink.save(&d);
        }
        r
    }
}

impl FilesHooks for FilesDist<'_> {
    fn before_phase(&self) -> Result<()> {
        // Phases end after an amount of files: the first rank done stops the others.
        self.saving_interrupt(self.base.before_run(true))
    }

    fn poll_interval(&self) -> Duration {
        self.base.poll_interval()
    }

    fn poll(&self) -> bool {
        self.base.poll()
    }

    fn after_phase(&self, _run: &RunResult, window: (i64, i64), stonewalled: bool) -> Result<()> {
        // The window is the wall-clock span of the rank's portions: with --sync file or
        // portion it includes the syncs between them (what the rank really spent), so a rank
        // held up by its device is the straggler it is.
        self.base.finish_window(Some(LocalWindow {
            start_ns: window.0,
            end_ns: window.1,
            stonewalled,
        }))?;
        // A signal at the very end of a phase may stop one rank's phase and miss another's.
        self.saving_interrupt(self.base.agree_on_interrupt())
    }

    fn agree_more(&self, local: bool) -> Result<bool> {
        self.base.agree_more(local)
    }

    fn after_size(&self, tests: &[TestResult], warnings: &[Warning]) -> Result<()> {
        // Clocks drift: estimate again after each size (collective), and correct its
        // windows with the mean of the estimates before and after it.
        let latest = measure_offsets(self.base.world());
        let msg = RankSize {
            rank: self.base.rank(),
            hostname: self.base.hostname().to_string(),
            tests: tests.to_vec(),
            windows: self.base.take_windows(),
            warnings: warnings.to_vec(),
        };
        let (Some(all), Some(doc)) = (self.base.gather(msg)?, &self.doc) else {
            return Ok(());
        };
        let used = ClockOffset::across_window(&self.offsets, &latest);
        let mut doc = doc.borrow_mut();
        self.collect(&mut doc, all, &used)?;
        for h in &mut doc.hosts {
            h.clock_offset_ns = latest.get(h.rank as usize).map(|o| o.offset_ns);
        }
        self.sink.save(&doc)
    }
}

pub fn execute(args: &FilesArgs, argv: Vec<String>) -> Result<i32> {
    let session = Session::start()?;
    let rank = session.rank;
    let p = session.agree_to_start(setup(args, rank))?;
    let (ctx, _watch) = session.context(&p.sink, args.out.quiet)?;
    let env = crate::sysinfo::capture_environment(&p.space.dirs[0].path);
    let hostname = env.hostname.clone();
    let offsets = measure_offsets(&session.world);
    let doc = (rank == 0).then(|| {
        let mut env = env.clone();
        env.target_path = args.target.display().to_string();
        RefCell::new(p.will_hold(ResultDoc::new("files", argv.clone(), env)))
    });
    let hooks = FilesDist {
        base: DistHooks::new(&session.world, hostname.clone(), ctx.stop.clone(), None),
        files_per_portion: p.cfg.files_per_portion,
        repeat: p.cfg.repeat,
        doc,
        sink: &p.sink,
        offsets: offsets.into(),
    };
    let mut local = ResultDoc::new("files", argv, env);
    let no_sink = ResultSink::none();
    let outcome = run_with_hooks(&p.cfg, &ctx, &mut local, &no_sink, Some(&hooks));
    if let Ok(Some(kept)) = &outcome {
        crate::eline!("rank {rank}: files kept in {}", kept.display());
    }
    let doc = hooks.doc.map(RefCell::into_inner);
    let outcome = outcome.map(|_| ());
    session.end(outcome, doc, p, &hostname, |d, p| {
        print_tables(
            d,
            p.cfg.out.json,
            &p.sink,
            [render_files_table, render_files_hosts],
        )
    })
}

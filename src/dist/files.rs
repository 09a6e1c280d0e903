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
use crate::fs::alloc::FsRules;
use crate::model::{ResultDoc, ResultSink, RunResult, TestResult, Warning, WarningCode};
use crate::report::dist::render_files_hosts;
use crate::report::files::render_files_table;
use crate::runner::RunHooks;
use crate::stats::repeat::spread_warnings;
use crate::workload::files::config::FilesConfig;
use crate::workload::files::result::{
    SharedDevice, judge_shared_device, summarize_files_test, warn_contention,
};
use crate::workload::files::run::{FilesHooks, run_with_hooks};
use crate::workload::files::space::{FileSet, held_by};

fn setup(args: &FilesArgs, rank: u32, ranks: u32) -> Result<Prepared<FilesConfig>> {
    // Every flag is checked on the target as given before anything is created; the room
    // for all ranks' files (one rank's passed where two ran out of space mid-run).
    let mut unchecked = args.clone();
    unchecked.no_room_check = true;
    let shared = FilesConfig::from_args(&unchecked)?;
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
    if shared.jobs > 1 {
        return Err(crate::usage!(
            "--jobs {} is for writers on one host: under mpirun/srun every rank is one writer (start more ranks instead)",
            shared.jobs
        ));
    }
    if !args.no_room_check {
        shared.check_room_of_ranks(ranks)?;
    }
    let space = RankSpace::claim(std::slice::from_ref(&args.target), rank)?;
    let mut rank_args = unchecked;
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
    /// The block device under this rank's directory, whose written bytes its runs hold.
    device: Option<String>,
}

struct FilesDist<'a> {
    base: DistHooks<'a>,
    cfg: &'a FilesConfig,
    /// Rank 0: the slack rules of the shared directory's file system (what files hold).
    rules: Option<FsRules>,
    /// This rank's block device (`environment.block_device`).
    device: Option<String>,
    /// Rank 0: the one result document and where it goes.
    doc: Option<RefCell<ResultDoc>>,
    sink: &'a ResultSink,
    /// Rank 0: every rank's clock minus rank 0's (index = rank), as last estimated.
    offsets: RefCell<Vec<ClockOffset>>,
}

/// Rank 0: the device check of a single-host create run, per device: the ranks on one
/// host over one block device wrote to it together, so they are judged together
/// (`judge_shared_device`). `held(files, size)`: what `files` files of `size` bytes hold at
/// most.
fn judge_devices(doc: &mut ResultDoc, all: &mut [RankSize], held: impl Fn(u64, u64) -> u64) {
    let Some(k) = all[0]
        .tests
        .iter()
        .position(|t| t.params.get("phase").is_some_and(|p| p == "create"))
    else {
        return;
    };
    let size = all[0].tests[k]
        .params
        .get("file_size_bytes")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut groups: Vec<(&str, &str, Vec<usize>)> = Vec::new();
    for (i, m) in all.iter().enumerate() {
        let Some(dev) = m.device.as_deref() else {
            continue;
        };
        match groups.iter_mut().find(|g| g.0 == m.hostname && g.1 == dev) {
            Some(g) => g.2.push(i),
            None => groups.push((&m.hostname, dev, vec![i])),
        }
    }
    let groups: Vec<(String, Vec<usize>)> = groups
        .into_iter()
        .map(|(h, d, v)| (format!("{d} on {h}"), v))
        .collect();
    let name = all[0].tests[k].name.clone();
    for (device, members) in groups {
        let nruns = members.iter().map(|&i| all[i].tests[k].runs.len()).min();
        for j in 0..nruns.unwrap_or(0) {
            let mut runs: Vec<&mut RunResult> = all
                .iter_mut()
                .enumerate()
                .filter(|(i, _)| members.contains(i))
                .map(|(_, m)| &mut m.tests[k].runs[j])
                .collect();
            let on = SharedDevice {
                device: &device,
                writer: "rank",
            };
            judge_shared_device(doc, &name, &on, &mut runs, |files| held(files, size));
        }
    }
}

impl FilesDist<'_> {
    /// Rank 0: the tests of one size from every rank -> the totals, the host rows, the
    /// warnings; saved.
    fn collect(
        &self,
        doc: &mut ResultDoc,
        mut all: Vec<RankSize>,
        used: &[ClockOffset],
    ) -> Result<()> {
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
                            let w =
                                m.windows.get(j * nphases + k).copied().ok_or_else(|| {
                                    anyhow!("rank {} sent too few windows", m.rank)
                                })?;
                            Ok(w.rank_run(m.rank, &m.tests[k].runs[j], used))
                        })
                        .collect::<Result<_>>()?;
                total.runs.push(
                    aggregate_files_run(&ranks, self.cfg.files_per_portion)
                        .map_err(|e| anyhow!(e))?,
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
            // `cpu-contention` is given over the totals below, once per test.
            for w in m
                .warnings
                .iter()
                .filter(|w| w.code != WarningCode::CpuContention)
            {
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
                warnings.extend(spread_warnings(t, &self.cfg.repeat).into_iter().map(|w| {
                    Warning {
                        message: format!("all ranks together, {}", w.message),
                        ..w
                    }
                }));
            }
        }
        for w in warnings {
            doc.warn(w);
        }
        judge_devices(doc, &mut all, |files, size| {
            let set = FileSet::of(self.cfg, size, files);
            held_by(&set, self.cfg.alloc_unit, self.rules.as_ref())
        });
        host_rows(doc, all.iter().map(|m| (m.rank, m.hostname.as_str())));
        for (h, m) in doc.hosts.iter_mut().zip(all) {
            h.tests.extend(m.tests);
        }
        // The longest wait of any rank's measuring thread (the totals carry it), once.
        let first = doc.tests.len();
        doc.tests.extend(totals);
        for t in first..doc.tests.len() {
            warn_contention(self.cfg, doc, t);
        }
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
            device: self.device.clone(),
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
    let s = session.begin(setup(args, rank, session.size), args.out.quiet)?;
    let doc = (rank == 0).then(|| RefCell::new(s.job_doc("files", argv.clone(), &args.target)));
    let hooks = FilesDist {
        base: DistHooks::new(&session.world, s.hostname.clone(), s.ctx.stop.clone(), None),
        cfg: &s.p.cfg,
        rules: (rank == 0)
            .then(|| crate::workload::files::space::rules_for(&s.p.cfg.target))
            .flatten(),
        device: s.env.block_device.clone(),
        doc,
        sink: &s.p.sink,
        offsets: s.offsets.clone().into(),
    };
    let mut local = ResultDoc::new("files", argv, s.env.clone());
    let no_sink = ResultSink::none();
    let outcome = run_with_hooks(&s.p.cfg, &s.ctx, &mut local, &no_sink, Some(&hooks));
    if let Ok(Some(kept)) = &outcome {
        crate::eline!("rank {rank}: files kept in {}", kept.display());
    }
    let doc = hooks.doc.map(RefCell::into_inner);
    let outcome = outcome.map(|_| ());
    session.end(outcome, doc, s.p, &s.hostname, |d, p| {
        print_tables(
            d,
            p.cfg.out.json,
            &p.sink,
            [render_files_table, render_files_hosts],
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A distributed create run had no device check: a build writing beside the ranks read
    /// as their write amplification. The ranks on one host over one device are judged
    /// together (each one's counters see all of them): two ranks' 20 MB of files explain
    /// 70 MiB written (one rank's alone would not), 150 MiB is another program's.
    #[test]
    fn the_ranks_on_one_device_are_judged_together_for_other_writers() {
        let rank = |rank: u32, host: &str, written: u64| {
            let run = crate::workload::files::result::created_beside(written);
            let mut test = TestResult {
                name: "4KiB create".into(),
                runs: vec![run],
                ..Default::default()
            };
            test.params.insert("phase".into(), "create".into());
            test.params.insert("file_size_bytes".into(), "4096".into());
            RankSize {
                rank,
                hostname: host.into(),
                tests: vec![test],
                windows: Vec::new(),
                warnings: Vec::new(),
                device: Some("/dev/loop7".into()),
            }
        };
        let held = |files: u64, size: u64| files * size;
        let wa = |all: &[RankSize]| -> Vec<bool> {
            all.iter()
                .map(|m| m.tests[0].runs[0].write_amplification.is_some())
                .collect()
        };
        let new_doc = || ResultDoc::new("files", Vec::new(), Default::default());
        let mut doc = new_doc();
        let mut shared = [rank(0, "a", 70 << 20), rank(1, "a", 70 << 20)];
        judge_devices(&mut doc, &mut shared, held);
        assert_eq!(wa(&shared), [true, true]);
        // Each saw both ranks' writes: the group's WA, not 70 MiB over one rank's 20 MB.
        for m in &shared {
            let got = m.tests[0].runs[0].write_amplification.unwrap();
            assert!((got - (70 << 20) as f64 / 40.96e6).abs() < 1e-9, "{got}");
        }
        assert!(doc.warnings.is_empty(), "{:?}", doc.warnings);
        let mut busy = [rank(0, "a", 150 << 20), rank(1, "a", 150 << 20)];
        judge_devices(&mut doc, &mut busy, held);
        assert_eq!(wa(&busy), [false, false]);
        let w = &doc.warnings[0];
        assert_eq!(w.code, crate::model::WarningCode::OtherWriters);
        assert_eq!(w.test.as_deref(), Some("4KiB create"));
        assert!(
            w.message
                .starts_with("/dev/loop7 on a wrote 150.0 MiB in run 1 while the files of its 2 rank(s) hold at most 39.1 MiB"),
            "{}",
            w.message
        );
        // Another host's device of the same name is its own: 70 MiB for one rank's files.
        let mut apart = [rank(0, "a", 30 << 20), rank(1, "b", 70 << 20)];
        judge_devices(&mut new_doc(), &mut apart, held);
        assert_eq!(wa(&apart), [true, false]);
        let alone = apart[0].tests[0].runs[0].write_amplification.unwrap();
        assert!(
            (alone - (30 << 20) as f64 / 20.48e6).abs() < 1e-9,
            "{alone}"
        );
    }
}

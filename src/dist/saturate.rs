//! `iolab saturate` under mpirun/srun: every rank sweeps its own test file in its own
//! subdirectory (`iolab-rank-N`) of each shared target. Every step starts on all ranks
//! together (a barrier, from the command thread); after it, rank 0 gathers the ranks' steps,
//! aggregates them (`dist::sweep`: counts over the common window, merged histograms, depths
//! added), and sends the aggregate to all, so every rank's search judges the same point; the
//! next depth is rank 0's choice, sent to all. Rank 0 writes the one result (the aggregated
//! curves and answers, and each rank's own curves under `hosts[]`) and prints it.

use std::cell::RefCell;

use anyhow::{Result, anyhow};
use serde::{Deserialize, Serialize};

use crate::cli::saturate::SaturateArgs;
use crate::dist::ClockOffset;
use crate::dist::aggregate::sweep_dist_findings;
use crate::dist::clock::measure_offsets;
use crate::dist::hooks::{DistHooks, LocalWindow, from_rank, host_rows};
use crate::dist::session::{Prepared, RankSpace, Session, check_shared_size, per_rank_size};
use crate::dist::sweep::{RankStep, aggregate_step};
use crate::model::saturate::CurvePoint;
use crate::model::{ResultDoc, RunResult, TestResult, Warning};
use crate::report::saturate::print_result;
use crate::runner::RunHooks;
use crate::runner::saturate::{Rule, StepResult, step_spec};
use crate::runner::sweep::{SweepHooks, new_doc, saturate_with_hooks};
use crate::workload::saturate::Phase;
use crate::workload::saturate::config::{SaturateConfig, SweepSpec};

fn setup(args: &SaturateArgs, rank: u32, ranks: u32) -> Result<Prepared<SaturateConfig>> {
    // Every flag is checked on the targets as given before anything is created.
    let shared = SaturateConfig::from_args(args)?;
    if let Some(size) = args.size {
        for t in &shared.targets {
            check_shared_size(&t.path, ranks, size)?;
        }
    }
    let space = RankSpace::claim(&args.target, rank)?;
    let mut rank_args = args.clone();
    rank_args.target = space.paths();
    // Only devices and existing files need it, and a distributed saturate takes neither.
    rank_args.allow_destroy.clear();
    if args.size.is_none() {
        let mut size = u64::MAX;
        for t in &shared.targets {
            size = size.min(per_rank_size(&t.path, ranks, rank, t.size)?);
        }
        rank_args.size = Some(size);
    }
    let mut cfg = SaturateConfig::from_args(&rank_args)?;
    cfg.ranks = ranks;
    let output = cfg.out.dir.clone();
    Prepared::new(cfg, space, rank, output.as_deref(), "saturate")
}

/// What a rank sends rank 0 after each step.
#[derive(Debug, Serialize, Deserialize)]
struct RankStepMsg {
    rank: u32,
    hostname: String,
    point: CurvePoint,
    total: RunResult,
    per_group: Vec<RunResult>,
    window: LocalWindow,
    /// Everything this rank has warned about so far.
    warnings: Vec<Warning>,
}

/// The hooks of a distributed saturate: `DistHooks` keeps the ranks in step (barrier before
/// each step, the stonewall exchange and the measured window after it); the rest is the
/// saturate's own gathering and deciding.
struct SweepDist<'a> {
    base: DistHooks<'a>,
    cfg: &'a SaturateConfig,
    /// The shared targets, as the aggregated streams name them.
    shared: Vec<String>,
    /// Rank 0: every rank's clock minus rank 0's (index = rank), as last estimated.
    offsets: RefCell<Vec<ClockOffset>>,
    /// Rank 0: the straggler findings last added, replaced by those of more steps.
    findings: RefCell<Findings>,
}

/// The straggler summary keys and warnings `add_findings` added to a sweep's test.
#[derive(Default)]
struct Findings {
    ti: usize,
    keys: Vec<String>,
    warnings: Vec<Warning>,
}

impl SweepDist<'_> {
    /// Rank 0: every rank's step -> the aggregated point; each rank's own point (with its
    /// step as a run) is recorded under `doc.hosts`, its new warnings in `doc.warnings`.
    fn collect(
        &self,
        doc: &mut ResultDoc,
        ti: usize,
        sweep: &SweepSpec,
        all: Vec<RankStepMsg>,
    ) -> Result<CurvePoint> {
        let offsets = self.offsets.borrow();
        let depth = all[0].point.at.iodepth;
        if let Some(m) = all.iter().find(|m| m.point.at.iodepth != depth) {
            return Err(anyhow!(
                "rank {} measured depth {} where rank 0 measured {depth}: the ranks are out of step",
                m.rank,
                m.point.at.iodepth
            ));
        }
        let (spec, owner) = step_spec(self.cfg, sweep, depth);
        let names: Vec<String> = owner.iter().map(|&i| self.shared[i].clone()).collect();
        let rule = Rule {
            aggregate: self.cfg.aggregate,
            statistic: self.cfg.statistic,
            limit_ns: self.cfg.limit_ns,
        };
        let ranks: Vec<RankStep> = all
            .iter()
            .map(|m| {
                let w = m.window.on_rank0_clock(m.rank, &offsets);
                RankStep {
                    rank: m.rank,
                    point: &m.point,
                    total: &m.total,
                    per_group: &m.per_group,
                    start_ns: w.start_ns,
                    end_ns: w.end_ns,
                    stonewalled: w.stonewalled,
                }
            })
            .collect();
        let mut point = aggregate_step(&rule, &spec, &names, &ranks).map_err(|e| anyhow!(e))?;
        // Sent to every rank with the point: all of them set the step aside alike.
        point.detail.cpu_contended = any_rank_waited(&all);

        host_rows(doc, all.iter().map(|m| (m.rank, m.hostname.as_str())));
        for h in doc.hosts.iter_mut().filter(|h| h.clock_offset_ns.is_none()) {
            h.clock_offset_ns = offsets.get(h.rank as usize).map(|o| o.offset_ns);
        }
        let mut warnings = Vec::new();
        for (h, m) in doc.hosts.iter_mut().zip(all) {
            while h.tests.len() <= ti {
                let header = host_test(&doc.tests[h.tests.len()], &self.shared, h.rank);
                h.tests.push(header);
            }
            let mut own = m.point;
            own.detail.run = Some(m.total);
            if let Some(c) = h.tests[ti].curve.as_mut() {
                c.push(own);
            }
            if m.rank != 0 {
                // What every rank says alike (e.g. about the shared curve) is said once.
                for w in m.warnings.into_iter().filter(|w| !doc.warnings.contains(w)) {
                    warnings.push(from_rank(m.rank, &m.hostname, w));
                }
            }
        }
        for w in warnings {
            doc.warn(w);
        }
        Ok(point)
    }
}

/// Did a job thread of any rank wait for a CPU in the step (its `cpu-contention`)? Then the
/// aggregate is not judged on it: the depth is measured again on every rank.
fn any_rank_waited(all: &[RankStepMsg]) -> bool {
    all.iter()
        .any(|m| crate::runner::sweep::waited_for_cpu(&m.total))
}

/// Rank 0: the ranks' own points of the step just set aside, out of their curves (the last
/// point of each host's curve of sweep `ti`), as the aggregate curve never held it.
fn drop_set_aside_points(doc: &mut ResultDoc, ti: usize) {
    for h in &mut doc.hosts {
        if let Some(c) = h.tests.get_mut(ti).and_then(|t| t.curve.as_mut()) {
            c.pop();
        }
    }
}

/// A rank's own copy of a sweep's test: the same settings, its own test files, its own
/// curve (no answer: the search judged the aggregate).
fn host_test(total: &TestResult, shared: &[String], rank: u32) -> TestResult {
    let mut params = total.params.clone();
    let dirs: Vec<String> = shared
        .iter()
        .map(|t| {
            std::path::Path::new(t)
                .join(format!("iolab-rank-{rank}"))
                .display()
                .to_string()
        })
        .collect();
    params.insert("targets".into(), dirs.join(","));
    TestResult {
        name: total.name.clone(),
        family: total.family.clone(),
        config: total.config.clone(),
        direction: total.direction.clone(),
        settings: total.settings.clone(),
        groups: total.groups.clone(),
        params,
        curve: Some(Vec::new()),
        ..Default::default()
    }
}

impl SweepHooks for SweepDist<'_> {
    fn before_step(&self) -> Result<()> {
        // Steps are time-based: started together, they end together by themselves.
        self.base.before_run(false)
    }

    fn after_step(&self, total: Option<&RunResult>) -> Result<()> {
        // Time-based: no stonewall.
        self.base.after_run(total, false)?;
        // A signal at the very end of a step may stop one rank's step and miss another's:
        // then no rank goes on to the gathering, which would wait for the stopped one.
        self.base.agree_on_interrupt()
    }

    fn judge(
        &self,
        doc: &mut ResultDoc,
        ti: usize,
        sweep: &SweepSpec,
        step: &StepResult,
    ) -> Result<CurvePoint> {
        let window = self
            .base
            .take_windows()
            .pop()
            .ok_or_else(|| anyhow!("the step has no measured window"))?;
        let msg = RankStepMsg {
            rank: self.base.rank(),
            hostname: self.base.hostname().to_string(),
            point: step.point.clone(),
            total: step.total.clone(),
            per_group: step.per_group.clone(),
            window,
            warnings: doc.warnings.clone(),
        };
        let point = match self.base.gather(msg)? {
            Some(all) => Some(self.collect(doc, ti, sweep, all)?),
            None => None,
        };
        self.base.broadcast(point.as_ref())
    }

    fn agree_next(&self, local: Option<(u32, Phase)>) -> Result<Option<(u32, Phase)>> {
        self.base.broadcast(Some(&local))
    }

    fn step_recorded(&self, doc: &mut ResultDoc, ti: usize) {
        if self.base.rank() == 0 {
            add_findings(doc, ti, &self.offsets.borrow(), &self.findings);
        }
    }

    fn step_set_aside(&self, doc: &mut ResultDoc, ti: usize) {
        if self.base.rank() == 0 {
            drop_set_aside_points(doc, ti);
        }
    }

    fn end_sweep(&self, doc: &mut ResultDoc, ti: usize) -> Result<()> {
        // Clocks drift: estimate again after each sweep (collective).
        let latest = measure_offsets(self.base.world());
        if self.base.rank() != 0 {
            return Ok(());
        }
        let used = self.offsets.replace(latest.clone());
        add_findings(doc, ti, &used, &self.findings);
        for h in &mut doc.hosts {
            h.clock_offset_ns = latest.get(h.rank as usize).map(|o| o.offset_ns);
        }
        Ok(())
    }
}

/// Rank 0: the straggler summary and warnings of the sweep `ti`'s steps so far, its windows
/// corrected by `offsets`, in place of those of fewer steps (`last`: what the call before
/// added to this sweep).
fn add_findings(doc: &mut ResultDoc, ti: usize, offsets: &[ClockOffset], last: &RefCell<Findings>) {
    let mut last = last.borrow_mut();
    if last.ti == ti {
        for k in &last.keys {
            doc.tests[ti].summary.remove(k);
        }
        doc.warnings.retain(|w| !last.warnings.contains(w));
    }
    let hosts: Vec<(u32, &str)> = doc
        .hosts
        .iter()
        .map(|h| (h.rank, h.hostname.as_str()))
        .collect();
    let (summaries, warnings) = sweep_dist_findings(&doc.tests[ti], &hosts, offsets);
    let keys = summaries.iter().map(|(k, _)| k.clone()).collect();
    doc.tests[ti].summary.extend(summaries);
    // Only those not said already (by a rank, say) are this call's to take back.
    let new: Vec<Warning> = warnings
        .into_iter()
        .filter(|w| !doc.warnings.contains(w))
        .collect();
    for w in &new {
        doc.warn(w.clone());
    }
    *last = Findings {
        ti,
        keys,
        warnings: new,
    };
}

pub fn execute(args: &SaturateArgs, argv: Vec<String>) -> Result<i32> {
    let session = Session::start()?;
    let rank = session.rank;
    let s = session.begin(setup(args, rank, session.size), args.out.quiet)?;
    let env = if rank == 0 {
        s.shared_env(&args.target[0])
    } else {
        s.env.clone()
    };
    let mut doc = new_doc(&s.p.cfg, argv, env);
    if rank == 0 {
        doc = s.p.will_hold(doc);
    }
    let hooks = SweepDist {
        base: DistHooks::new(&session.world, s.hostname.clone(), s.ctx.stop.clone(), None),
        cfg: &s.p.cfg,
        shared: args
            .target
            .iter()
            .map(|t| t.display().to_string())
            .collect(),
        offsets: s.offsets.clone().into(),
        findings: RefCell::default(),
    };
    // The plan and the report name the shared targets, not rank 0's own subdirectories.
    let mut shown = s.p.cfg.clone();
    for (t, shared) in shown.targets.iter_mut().zip(&args.target) {
        t.path = shared.clone();
    }
    if rank == 0 {
        crate::report::saturate::show_plan(&shown, args.out.quiet);
    }
    let (outcome, timing) =
        saturate_with_hooks(&s.p.cfg, &s.ctx, &mut doc, &s.p.sink, Some(&hooks));
    drop(hooks);
    session.end(
        outcome,
        (rank == 0).then_some(doc),
        s.p,
        &s.hostname,
        |d, p| {
            let hosts = crate::report::dist::render_saturate_hosts(d);
            print_result(d, &shown, &timing, p.sink.path.as_deref(), &hosts)
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CpuUsage, HostResult};

    fn msg(rank: u32, waited_pct: Option<f64>) -> RankStepMsg {
        RankStepMsg {
            rank,
            hostname: format!("h{rank}"),
            point: CurvePoint::default(),
            total: RunResult {
                cpu: Some(CpuUsage {
                    max_job_thread_wait_pct: waited_pct,
                    ..Default::default()
                }),
                ..Default::default()
            },
            per_group: Vec::new(),
            window: LocalWindow {
                start_ns: 0,
                end_ns: 1,
                stonewalled: false,
            },
            warnings: Vec::new(),
        }
    }

    /// The step is set aside when any rank's job thread waited (over the 10 % of
    /// `cpu-contention`), so that every rank, judging rank 0's point, measures it again;
    /// before, a distributed sweep judged every step as it came.
    #[test]
    fn a_step_is_contended_when_any_rank_waited() {
        assert!(!any_rank_waited(&[msg(0, Some(2.0)), msg(1, None)]));
        assert!(any_rank_waited(&[msg(0, Some(2.0)), msg(1, Some(35.0))]));
    }

    /// The ranks' own points of a set-aside step leave their curves, in the sweep's test
    /// only: a host's curve keeps one point a judged depth, as the aggregate curve.
    #[test]
    fn a_set_aside_step_leaves_the_hosts_curves() {
        let curve = |n: u32| TestResult {
            curve: Some(
                (1..=n)
                    .map(|d| {
                        let mut p = CurvePoint::default();
                        p.at.iodepth = d;
                        p
                    })
                    .collect(),
            ),
            ..Default::default()
        };
        let host = |rank: u32| HostResult {
            rank,
            tests: vec![curve(4), curve(3)],
            ..Default::default()
        };
        let mut doc = ResultDoc::new("saturate", vec!["iolab".into()], Default::default());
        doc.hosts = vec![host(0), host(1)];
        drop_set_aside_points(&mut doc, 1);
        for h in &doc.hosts {
            let depths = |ti: usize| -> Vec<u32> {
                h.tests[ti]
                    .curve
                    .as_ref()
                    .unwrap()
                    .iter()
                    .map(|p| p.at.iodepth)
                    .collect()
            };
            assert_eq!(depths(0), [1, 2, 3, 4]);
            assert_eq!(depths(1), [1, 2]);
        }
        // A rank whose copy of the test is not there yet: nothing to take back.
        drop_set_aside_points(&mut doc, 5);
    }
}

//! The hooks a distributed `iolab run` puts around every measured run (`RunHooks`): a
//! barrier before each run, the stonewall while it runs, the ranks' windows after it, and
//! after each test the gathering of every rank's result on rank 0, which aggregates and saves.
//!
//! Every MPI call here is made by the command's own thread: the I/O threads never touch MPI
//! (Open MPI is initialized `MPI_THREAD_FUNNELED`).

use std::cell::RefCell;

use anyhow::{Result, anyhow};
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::dist::ClockOffset;
use crate::dist::aggregate::{RankRun, add_dist_summaries, aggregate_run, dist_warnings};
use crate::dist::clock::{measure_offsets, now_ns};
use crate::model::{HostResult, ResultDoc, ResultSink, RunResult, TestResult, Warning};
use crate::stats::repeat::summarize_test;

/// "My run is over": each rank sends one to every other rank per run.
const TAG_FINISHED: i32 = 0x1c20;
/// A rank's result of one test (or step), JSON, to rank 0.
const TAG_GATHER: i32 = 0x1c21;

/// How often the command thread looks for another rank's "finished" during a size-based run
/// (the stonewall reacts within this plus the message latency).
const POLL: std::time::Duration = std::time::Duration::from_millis(2);

/// One rank's measured window of one run, on its own clock.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct LocalWindow {
    pub start_ns: i64,
    pub end_ns: i64,
    pub stonewalled: bool,
}

impl LocalWindow {
    /// This window of rank `rank` on rank 0's clock: less the rank's offset in `offsets`
    /// (index = rank; as measured without one).
    pub fn on_rank0_clock(self, rank: u32, offsets: &[ClockOffset]) -> LocalWindow {
        let off = offsets.get(rank as usize).map_or(0, |o| o.offset_ns);
        LocalWindow {
            start_ns: self.start_ns - off,
            end_ns: self.end_ns - off,
            stonewalled: self.stonewalled,
        }
    }

    /// Rank `rank`'s `run` over this window, on rank 0's clock (`on_rank0_clock`).
    pub fn rank_run<'a>(
        self,
        rank: u32,
        run: &'a RunResult,
        offsets: &[ClockOffset],
    ) -> RankRun<'a> {
        let w = self.on_rank0_clock(rank, offsets);
        RankRun {
            rank,
            run,
            start_ns: w.start_ns,
            end_ns: w.end_ns,
            stonewalled: w.stonewalled,
        }
    }
}

/// What a rank sends rank 0 after each test.
#[derive(Debug, Serialize, Deserialize)]
struct RankTest {
    rank: u32,
    hostname: String,
    test: TestResult,
    /// One per run of `test.runs`, in order.
    windows: Vec<LocalWindow>,
    warnings: Vec<Warning>,
}

#[derive(Debug, Default)]
struct State {
    size_based: bool,
    stonewalled: bool,
    windows: Vec<LocalWindow>,
}

/// Rank 0's side: the one result document and where it goes.
pub struct Collector<'a> {
    pub doc: RefCell<ResultDoc>,
    pub sink: &'a ResultSink,
    /// Every rank's clock minus rank 0's (index = rank), as last estimated.
    pub offsets: RefCell<Vec<ClockOffset>>,
}

pub struct DistHooks<'a> {
    world: &'a SimpleCommunicator,
    rank: u32,
    size: u32,
    hostname: String,
    /// The command's stop flag (signals), so waiting for the other ranks can be interrupted.
    stop: crate::os::signals::StopFlag,
    state: RefCell<State>,
    /// Rank 0 only.
    collector: Option<Collector<'a>>,
}

impl<'a> DistHooks<'a> {
    pub fn new(
        world: &'a SimpleCommunicator,
        hostname: String,
        stop: crate::os::signals::StopFlag,
        collector: Option<Collector<'a>>,
    ) -> Self {
        DistHooks {
            world,
            rank: world.rank() as u32,
            size: world.size() as u32,
            hostname,
            stop,
            state: RefCell::default(),
            collector,
        }
    }

    pub fn into_doc(self) -> Option<ResultDoc> {
        self.collector.map(|c| c.doc.into_inner())
    }

    pub fn world(&self) -> &SimpleCommunicator {
        self.world
    }

    pub fn rank(&self) -> u32 {
        self.rank
    }

    pub fn hostname(&self) -> &str {
        &self.hostname
    }

    /// Collective: an interrupt any rank has seen is every rank's (an error on all), so
    /// the ranks never part ways (one going on, one leaving).
    pub fn agree_on_interrupt(&self) -> Result<()> {
        let mine = self.stop.signal().unwrap_or(0);
        let mut any = 0i32;
        self.world
            .all_reduce_into(&mine, &mut any, SystemOperation::max());
        if any == 0 {
            return Ok(());
        }
        Err(crate::error::Interrupted {
            signal: any,
            signal_name: crate::os::signals::signal_name(any),
        }
        .into())
    }

    /// After a run: tell the other ranks this one is over, take their notices, and record
    /// this rank's measured `window` (none for a failed run).
    pub fn finish_window(&self, window: Option<LocalWindow>) -> Result<()> {
        // Tell every rank this one is over (the stonewall of a size-based run), then take
        // everyone's notice, so no message of this run is left for the next one.
        for k in (0..self.size).filter(|&k| k != self.rank) {
            self.world
                .process_at_rank(k as i32)
                .send_with_tag(&1u8, TAG_FINISHED);
        }
        // Waiting here overlaps other ranks' measured runs: probe and sleep rather than a
        // blocking receive, which Open MPI would spin on (stealing a core from a rank that
        // shares this host).
        let mut got = 1;
        while got < self.size {
            match self
                .world
                .any_process()
                .immediate_probe_with_tag(TAG_FINISHED)
            {
                Some(st) => {
                    let (_, _) = self
                        .world
                        .process_at_rank(st.source_rank())
                        .receive_with_tag::<u8>(TAG_FINISHED);
                    got += 1;
                }
                None => std::thread::sleep(POLL),
            }
        }
        if let Some(w) = window {
            self.state.borrow_mut().windows.push(w);
        }
        Ok(())
    }

    /// The windows of the runs since the last call, in order.
    pub fn take_windows(&self) -> Vec<LocalWindow> {
        std::mem::take(&mut self.state.borrow_mut().windows)
    }

    /// Collective: every rank's `msg` on rank 0 (in rank order), `None` on the others.
    pub fn gather<T: Serialize + DeserializeOwned>(&self, msg: T) -> Result<Option<Vec<T>>> {
        if self.rank != 0 {
            let bytes = serde_json::to_vec(&msg)?;
            self.world
                .process_at_rank(0)
                .send_with_tag(&bytes[..], TAG_GATHER);
            return Ok(None);
        }
        let mut all = vec![msg];
        for k in 1..self.size {
            let (bytes, _) = self
                .world
                .process_at_rank(k as i32)
                .receive_vec_with_tag::<u8>(TAG_GATHER);
            all.push(serde_json::from_slice(&bytes)?);
        }
        Ok(Some(all))
    }

    /// Collective: rank 0's `value` on every rank (the others pass `None`).
    pub fn broadcast<T: Serialize + DeserializeOwned>(&self, value: Option<&T>) -> Result<T> {
        let root = self.world.process_at_rank(0);
        let mut bytes = match value {
            Some(v) if self.rank == 0 => serde_json::to_vec(v)?,
            _ => Vec::new(),
        };
        let mut len = bytes.len() as u64;
        root.broadcast_into(&mut len);
        bytes.resize(len as usize, 0);
        root.broadcast_into(&mut bytes[..]);
        Ok(serde_json::from_slice(&bytes)?)
    }

    /// Rank 0: one test of every rank -> the test's totals, host rows, warnings; saved.
    /// `offsets`: the clock offsets for this test's windows; `latest`: the newest estimate.
    fn collect(
        &self,
        c: &Collector,
        all: Vec<RankTest>,
        offsets: &[ClockOffset],
        latest: &[ClockOffset],
    ) -> Result<()> {
        let mut doc = c.doc.borrow_mut();
        let base = &all[0].test;
        let mut total = TestResult {
            name: base.name.clone(),
            family: base.family.clone(),
            config: base.config.clone(),
            direction: base.direction.clone(),
            settings: base.settings.clone(),
            groups: base.groups.clone(),
            params: base.params.clone(),
            headline: base.headline.clone(),
            ..Default::default()
        };
        total.params.insert("ranks".into(), self.size.to_string());
        let nruns = all
            .iter()
            .map(|m| m.test.runs.len().min(m.windows.len()))
            .min()
            .unwrap_or(0);
        for j in 0..nruns {
            let ranks: Vec<RankRun> = all
                .iter()
                .map(|m| m.windows[j].rank_run(m.rank, &m.test.runs[j], offsets))
                .collect();
            total
                .runs
                .push(aggregate_run(&ranks).map_err(|e| anyhow!(e))?);
        }
        total.error = all.iter().find_map(|m| {
            m.test
                .error
                .as_ref()
                .map(|e| format!("rank {} ({}): {e}", m.rank, m.hostname))
        });
        summarize_test(&mut total);
        add_dist_summaries(&mut total);

        for m in &all {
            for w in &m.warnings {
                if m.rank == 0 {
                    doc.warn(w.clone());
                } else if !all[0].warnings.contains(w) {
                    doc.warn(from_rank(m.rank, &m.hostname, w.clone()));
                }
            }
        }
        let names: Vec<(u32, &str)> = all.iter().map(|m| (m.rank, m.hostname.as_str())).collect();
        for w in dist_warnings(&total, &names, offsets) {
            doc.warn(w);
        }
        host_rows(&mut doc, all.iter().map(|m| (m.rank, m.hostname.as_str())));
        for (h, m) in doc.hosts.iter_mut().zip(all) {
            h.tests.push(m.test);
            h.clock_offset_ns = latest.get(h.rank as usize).map(|o| o.offset_ns);
        }
        doc.tests.push(total);
        c.sink.save(&doc)
    }
}

/// Rank 0: the `hosts[]` rows (rank, host name) of a distributed result, made once.
pub fn host_rows<'a>(doc: &mut ResultDoc, ranks: impl Iterator<Item = (u32, &'a str)>) {
    if doc.hosts.is_empty() {
        doc.hosts = ranks
            .map(|(rank, hostname)| HostResult {
                rank,
                hostname: hostname.to_string(),
                tests: Vec::new(),
                clock_offset_ns: None,
            })
            .collect();
    }
}

/// Another rank's warning, as rank 0 reports it. (No ": " in the prefix: the terminal
/// shortens a repeated warning code to the text before the first one.)
pub fn from_rank(rank: u32, hostname: &str, w: Warning) -> Warning {
    Warning {
        message: format!("on rank {rank} ({hostname}), {}", w.message),
        ..w
    }
}

/// How long a rank that was interrupted while waiting for the others still waits for them:
/// mpirun sends the signal to every rank, so they all come and agree to stop (`before_run`);
/// a rank that does not come within this is stuck elsewhere, and the barrier is abandoned.
const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// A barrier that neither spins (it probes and sleeps: a rank waiting for a slower one's
/// prefill leaves the CPU to it) nor outlives an interrupt (`stop`, after `STOP_GRACE`) or a
/// `timeout`. True when every rank arrived (also after an interrupt: the caller decides);
/// an interrupt nobody else came to is an error. An abandoned barrier is left pending: the
/// caller leaves MPI without finalizing.
pub fn wait_for_all(
    world: &SimpleCommunicator,
    stop: Option<&crate::os::signals::StopFlag>,
    timeout: Option<std::time::Duration>,
) -> Result<bool> {
    let t0 = std::time::Instant::now();
    let mut stopped_at: Option<std::time::Instant> = None;
    let mut req = world.immediate_barrier();
    loop {
        match req.test() {
            Ok(_) => return Ok(true),
            Err(r) => req = r,
        }
        if let Some(Err(e)) = stop.map(|s| s.check())
            && stopped_at
                .get_or_insert_with(std::time::Instant::now)
                .elapsed()
                > STOP_GRACE
        {
            std::mem::forget(req);
            return Err(e.into());
        }
        if timeout.is_some_and(|t| t0.elapsed() > t) {
            std::mem::forget(req);
            return Ok(false);
        }
        std::thread::sleep(POLL);
    }
}

impl crate::runner::RunHooks for DistHooks<'_> {
    fn before_run(&self, size_based: bool) -> Result<()> {
        {
            let mut st = self.state.borrow_mut();
            st.size_based = size_based;
            st.stonewalled = false;
        }
        wait_for_all(self.world, Some(&self.stop), None)?;
        // Everyone is here: a blocking collective now releases the ranks within the
        // network's latency, not the 2 ms of the sleeping wait above. It also makes an
        // interrupt everyone's: one rank may have seen the barrier complete while another
        // already saw the signal, and they must not part ways (one measuring, one leaving).
        self.agree_on_interrupt()
    }

    fn poll_interval(&self) -> std::time::Duration {
        POLL
    }

    fn poll(&self) -> bool {
        let mut st = self.state.borrow_mut();
        // Time-based runs stop together by themselves: same start (barrier), same duration.
        if !st.size_based || st.stonewalled {
            return st.stonewalled;
        }
        if self
            .world
            .any_process()
            .immediate_probe_with_tag(TAG_FINISHED)
            .is_some()
        {
            st.stonewalled = true;
        }
        st.stonewalled
    }

    fn after_run(&self, run: Option<&RunResult>, cut_short: bool) -> Result<()> {
        let end = now_ns();
        let window = run.map(|r| {
            // The measured window ends before the drain of the requests in flight at a timed
            // run's deadline and the final fsync of a write run.
            let end_ns = end - (r.fsync_ns.unwrap_or(0) + r.tail_ns.unwrap_or(0)) as i64;
            LocalWindow {
                start_ns: end_ns - r.elapsed_ns as i64,
                end_ns,
                // Told to stop is not stopped: the other rank's notice can come while this
                // one drains its last requests, or between the end of its I/O and the poll
                // (it was listed as stonewalled with its whole --io-size done).
                stonewalled: self.state.borrow().stonewalled && cut_short,
            }
        });
        self.finish_window(window)
    }
    fn agree_more(&self, local: bool) -> Result<bool> {
        // One more run while any rank still wants one (e.g. --repeat auto).
        let mut all = vec![0u8; self.size as usize];
        self.world.all_gather_into(&(local as u8), &mut all[..]);
        Ok(all.iter().any(|&b| b != 0))
    }

    fn after_test(&self, test: &TestResult, warnings: &[Warning]) -> Result<()> {
        // Clocks drift: estimate again after each test, and correct the test's windows with
        // the mean of the estimates before and after it.
        let latest = measure_offsets(self.world);
        let msg = RankTest {
            rank: self.rank,
            hostname: self.hostname.clone(),
            test: test.clone(),
            windows: self.take_windows(),
            warnings: warnings.to_vec(),
        };
        let all = self.gather(msg)?;
        let (Some(c), Some(all)) = (&self.collector, all) else {
            return Ok(());
        };
        let used = ClockOffset::across_window(&c.offsets, &latest);
        self.collect(c, all, &used, &latest)
    }
}

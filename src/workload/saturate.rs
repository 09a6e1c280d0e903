//! The saturation search of `iolab saturate`, as pure logic: which depth to measure next,
//! when the device thrashes, where the knee is and which depth is the answer. It knows
//! nothing about I/O, so the unit tests drive it with synthetic latency-vs-depth curves.
//!
//! The search: double the depth (1, 2, 4, ... up to the maximum) until the latency limit is
//! crossed, measure one step more (to show the curve past the limit), or stop early when
//! IOPS fall two steps in a row (thrashing); then bisect between the last depth that held
//! the limit and the first that broke it, so the answer is the largest depth that holds it.

pub mod config;

/// What one measured step gave the search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Observation {
    pub depth: u32,
    pub iops: f64,
    /// The statistic the limit applies to (after aggregation over streams), ns.
    pub latency_ns: f64,
}

/// Which part of the search a step belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Phase {
    Sweep,
    Bisect,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Sweep => "sweep",
            Phase::Bisect => "bisect",
        }
    }
}

/// IOPS must drop by more than this fraction to count as falling (plateaus are noisy).
pub const FALL_TOLERANCE: f64 = 0.05;

/// The knee is the smallest depth reaching this share of the peak IOPS.
pub const KNEE_SHARE: f64 = 0.9;

/// The doubling depths `start, 2*start, 4*start, ...`, ending with `max` itself.
pub fn sweep_depths(start: u32, max: u32) -> Vec<u32> {
    let mut v = Vec::new();
    let mut d = start.max(1);
    while d < max {
        v.push(d);
        d = d.saturating_mul(2);
    }
    if max >= start.max(1) {
        v.push(max);
    }
    v
}

fn ceil_log2(n: u32) -> u32 {
    if n <= 1 {
        0
    } else {
        32 - (n - 1).leading_zeros()
    }
}

/// Steps a search takes: fewest (depth 1 already breaks the limit), when the limit holds
/// up to the maximum (every doubling), and most (crossed late, then bisected).
pub fn step_bounds(start: u32, max: u32) -> (u32, u32, u32) {
    let d = sweep_depths(start, max);
    let n = d.len() as u32;
    let bisect = d
        .windows(2)
        .map(|w| ceil_log2(w[1] - w[0]))
        .max()
        .unwrap_or(0);
    (n.min(2), n, n + bisect)
}

/// What the search concluded.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The largest depth that held the limit, as measured; `None` when none did.
    pub answer: Option<Observation>,
    /// The smallest depth seen breaking the limit.
    pub first_bad: Option<u32>,
    pub thrashed: bool,
    pub knee: Option<u32>,
    /// The highest IOPS of the curve.
    pub peak: Option<Observation>,
    /// Some depth held the limit although a smaller one broke it (noise or a cache).
    pub inconsistent: bool,
    /// The depths that decided the answer (the answer's, the first bad one) whose step was
    /// judged on latency measured while a job thread waited for a CPU, both times it was
    /// measured: the answer may belong at another depth.
    pub contended: Vec<u32>,
}

/// The search state machine: ask `next()`, measure that depth, `record()` it, repeat.
#[derive(Debug, Clone)]
pub struct Search {
    limit_ns: f64,
    sweep: Vec<u32>,
    sweep_idx: usize,
    sweep_done: bool,
    points: Vec<Observation>,
    first_bad: Option<u32>,
    thrashed: bool,
    /// Bisection bounds: largest good depth, smallest bad depth.
    lo: Option<u32>,
    hi: Option<u32>,
    /// A step set aside because its job thread waited for a CPU: measured again next.
    again: Option<(u32, Phase)>,
    /// The depths measured again (each at most once).
    measured_again: Vec<u32>,
    /// The depths judged although their job thread waited for a CPU both times.
    contended: Vec<u32>,
}

impl Search {
    pub fn new(start: u32, max_depth: u32, limit_ns: f64) -> Search {
        Search {
            limit_ns,
            sweep: sweep_depths(start, max_depth),
            sweep_idx: 0,
            sweep_done: false,
            points: Vec::new(),
            first_bad: None,
            thrashed: false,
            lo: None,
            hi: None,
            again: None,
            measured_again: Vec::new(),
            contended: Vec::new(),
        }
    }

    pub fn within(&self, latency_ns: f64) -> bool {
        latency_ns.is_finite() && latency_ns <= self.limit_ns
    }

    /// The next depth to measure, or `None` when the search is over.
    pub fn next(&self) -> Option<(u32, Phase)> {
        if self.again.is_some() {
            return self.again;
        }
        if !self.sweep_done {
            return self.sweep.get(self.sweep_idx).map(|&d| (d, Phase::Sweep));
        }
        match (self.lo, self.hi) {
            (Some(lo), Some(hi)) if hi > lo + 1 => Some((lo + (hi - lo) / 2, Phase::Bisect)),
            _ => None,
        }
    }

    /// Record the measurement of the step `next()` gave, whose job thread waited for a CPU
    /// (`contended`: the step's `cpu-contention`) or not. A contended step's latency may be
    /// the machine's rather than the device's, and one judged on it can put the answer at
    /// the wrong depth (depth 2 at 18.8 ms against a 22 ms limit under load): the first
    /// contended measurement of a depth is set aside and the depth measured again at once
    /// (`next()`); the second is judged whatever it shows, and remembered when it waited
    /// too ([`Outcome::contended`]). Returns whether this measurement was judged.
    pub fn record_step(&mut self, obs: Observation, contended: bool) -> bool {
        self.again = None;
        if contended {
            if !self.measured_again.contains(&obs.depth) {
                let phase = self.next().map_or(Phase::Sweep, |(_, p)| p);
                self.again = Some((obs.depth, phase));
                self.measured_again.push(obs.depth);
                return false;
            }
            self.contended.push(obs.depth);
        }
        self.record(obs);
        true
    }

    /// Record the measurement of the depth `next()` gave (a step without contention).
    pub fn record(&mut self, obs: Observation) {
        let good = self.within(obs.latency_ns);
        self.points.push(obs);
        if self.sweep_done {
            if good {
                self.lo = Some(obs.depth);
            } else {
                self.hi = Some(obs.depth);
            }
            return;
        }
        self.sweep_idx += 1;
        let was_bad = self.first_bad.is_some();
        if !good && !was_bad {
            self.first_bad = Some(obs.depth);
        } else if good && was_bad {
            // Back under the limit one step later: the crossing was noise, keep sweeping.
            self.first_bad = None;
        }
        if self.falling_twice() {
            self.thrashed = true;
        }
        let crossed_twice = was_bad && !good;
        if crossed_twice || self.thrashed || self.sweep_idx >= self.sweep.len() {
            self.end_sweep();
        }
    }

    /// The last three sweep steps each fell by more than the tolerance.
    fn falling_twice(&self) -> bool {
        let n = self.points.len();
        if n < 3 {
            return false;
        }
        let p = &self.points[n - 3..];
        let falls = |a: f64, b: f64| b < a * (1.0 - FALL_TOLERANCE);
        falls(p[0].iops, p[1].iops) && falls(p[1].iops, p[2].iops)
    }

    fn end_sweep(&mut self) {
        self.sweep_done = true;
        self.hi = self.first_bad;
        self.lo = self
            .points
            .iter()
            .filter(|p| self.within(p.latency_ns) && self.first_bad.is_none_or(|b| p.depth < b))
            .map(|p| p.depth)
            .max();
    }

    pub fn points(&self) -> &[Observation] {
        &self.points
    }

    pub fn outcome(&self) -> Outcome {
        let answer = self
            .lo
            .or_else(|| {
                // Still sweeping (interrupted): the largest good depth so far.
                self.points
                    .iter()
                    .filter(|p| self.within(p.latency_ns))
                    .map(|p| p.depth)
                    .max()
            })
            .and_then(|d| self.points.iter().rev().find(|p| p.depth == d).copied());
        let first_bad = match (self.hi, self.first_bad) {
            (Some(h), _) => Some(h),
            (None, b) => b,
        };
        let deciding = [answer.map(|a| a.depth), first_bad];
        let mut contended: Vec<u32> = deciding
            .into_iter()
            .flatten()
            .filter(|d| self.contended.contains(d))
            .collect();
        contended.dedup();
        Outcome {
            contended,
            answer,
            first_bad,
            thrashed: self.thrashed,
            knee: knee(&self.points),
            inconsistent: self.points.iter().any(|bad| {
                !self.within(bad.latency_ns)
                    && self
                        .points
                        .iter()
                        .any(|p| p.depth > bad.depth && self.within(p.latency_ns))
            }),
            peak: self
                .points
                .iter()
                .copied()
                .max_by(|a, b| a.iops.total_cmp(&b.iops)),
        }
    }
}

/// The knee: the smallest depth reaching `KNEE_SHARE` of the peak IOPS, when the curve was
/// measured at least one doubling beyond it (otherwise IOPS may still be rising).
pub fn knee(points: &[Observation]) -> Option<u32> {
    let peak = points.iter().map(|p| p.iops).fold(0.0, f64::max);
    if peak <= 0.0 {
        return None;
    }
    let max_depth = points.iter().map(|p| p.depth).max()?;
    points
        .iter()
        .filter(|p| p.iops >= KNEE_SHARE * peak)
        .map(|p| p.depth)
        .min()
        .filter(|&k| max_depth >= 2 * k)
}

/// Run a whole search against a measuring function (for tests and simulations).
pub fn run_search(
    start: u32,
    max_depth: u32,
    limit_ns: f64,
    mut measure: impl FnMut(u32) -> Observation,
) -> (Outcome, Vec<Observation>) {
    let mut s = Search::new(start, max_depth, limit_ns);
    while let Some((d, _)) = s.next() {
        s.record(measure(d));
    }
    (s.outcome(), s.points().to_vec())
}

/// One sweep kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SweepKind {
    /// Random reads (of --bs, default 4 KiB).
    Randread,
    /// Random writes.
    Randwrite,
    /// Independent reads and writes at the same time: two job groups, not randrw (whose
    /// reads and writes depend on each other). --mix sets the read share of the depth.
    Mixed,
}

impl SweepKind {
    pub fn name(self) -> &'static str {
        match self {
            SweepKind::Randread => "randread",
            SweepKind::Randwrite => "randwrite",
            SweepKind::Mixed => "mixed",
        }
    }
    pub fn writes(self) -> bool {
        self != SweepKind::Randread
    }
    pub fn reads(self) -> bool {
        self != SweepKind::Randwrite
    }
}

/// Which latency statistic the limit applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Statistic {
    Mean,
    P99,
    P999,
}

impl Statistic {
    pub fn name(self) -> &'static str {
        match self {
            Statistic::Mean => "mean",
            Statistic::P99 => "p99",
            Statistic::P999 => "p99.9",
        }
    }
}

/// How latency is combined over streams (targets, and reads vs writes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregate {
    /// Over all I/Os of all streams together.
    Mean,
    /// The worst stream.
    Max,
}

impl Aggregate {
    pub fn name(self) -> &'static str {
        match self {
            Aggregate::Mean => "mean",
            Aggregate::Max => "max",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: f64 = 1e6;

    /// A throttled device: at most `c` IOPS, `s` ns service time; latency = depth / IOPS.
    fn queue(c: f64, s: f64) -> impl Fn(u32) -> Observation {
        move |d| {
            let iops = (d as f64 * 1e9 / s).min(c);
            Observation {
                depth: d,
                iops,
                latency_ns: d as f64 * 1e9 / iops,
            }
        }
    }

    /// Deterministic noise in [-amp, amp] (a linear congruential generator).
    fn noisy(f: impl Fn(u32) -> Observation, amp: f64) -> impl FnMut(u32) -> Observation {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        move |d| {
            let mut r = || {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                ((x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) * amp
            };
            let o = f(d);
            Observation {
                depth: d,
                iops: o.iops * (1.0 + r()),
                latency_ns: o.latency_ns * (1.0 + r()),
            }
        }
    }

    #[test]
    fn doubling_depths_end_at_the_maximum() {
        assert_eq!(sweep_depths(1, 256).len(), 9);
        assert_eq!(sweep_depths(1, 100), vec![1, 2, 4, 8, 16, 32, 64, 100]);
        assert_eq!(sweep_depths(2, 8), vec![2, 4, 8]);
        assert_eq!(sweep_depths(1, 1), vec![1]);
        assert_eq!(step_bounds(1, 256), (2, 9, 9 + 7));
        assert_eq!(step_bounds(1, 1), (1, 1, 1));
    }

    #[test]
    fn finds_the_largest_depth_under_the_limit() {
        // 1000 IOPS cap, 1 ms service: latency 1 ms up to depth 1, then depth ms.
        // Limit 10 ms -> depth 10 exactly (10 ms), 11 breaks it.
        let (o, pts) = run_search(1, 256, 10.0 * MS, queue(1000.0, 1.0 * MS));
        let a = o.answer.unwrap();
        assert_eq!(a.depth, 10);
        assert!((a.iops - 1000.0).abs() < 1e-6);
        assert_eq!(o.first_bad, Some(11));
        assert!(!o.thrashed);
        // Sweep 1..16, one step past the limit (32), then bisection 8..16: 12, 10, 11.
        let depths: Vec<u32> = pts.iter().map(|p| p.depth).collect();
        assert_eq!(depths, vec![1, 2, 4, 8, 16, 32, 12, 10, 11]);
        assert_eq!(o.knee, Some(1));
    }

    #[test]
    fn answer_matches_capacity_times_limit_for_many_limits() {
        for (c, limit_ms) in [
            (250.0, 22.0),
            (5000.0, 3.0),
            (40_000.0, 1.0),
            (300.0, 100.0),
        ] {
            let (o, _) = run_search(1, 4096, limit_ms * MS, queue(c, 100_000.0));
            let want = (c * limit_ms / 1000.0).floor() as u32;
            assert_eq!(o.answer.unwrap().depth, want, "C={c} L={limit_ms}");
        }
    }

    #[test]
    fn limit_never_reached_answers_the_maximum() {
        let (o, pts) = run_search(1, 64, 1e12, queue(1e6, 50_000.0));
        assert_eq!(o.answer.unwrap().depth, 64);
        assert_eq!(o.first_bad, None);
        assert_eq!(pts.len(), 7);
    }

    #[test]
    fn even_depth_one_too_slow_gives_no_answer() {
        let (o, pts) = run_search(1, 256, 0.5 * MS, queue(1000.0, 1.0 * MS));
        assert_eq!(o.answer, None);
        assert_eq!(o.first_bad, Some(1));
        // Depth 1 broke it; one more step, then stop (nothing to bisect below 1).
        assert_eq!(pts.len(), 2);
    }

    #[test]
    fn detects_thrashing() {
        // IOPS rise to depth 8, then fall by a third per doubling; latency stays low, so
        // only the falling IOPS stop the sweep.
        let f = |d: u32| {
            let iops = if d <= 8 {
                1000.0 * d as f64
            } else {
                8000.0 * (2.0f64 / 3.0).powi((d / 8).ilog2() as i32)
            };
            Observation {
                depth: d,
                iops,
                latency_ns: 1.0 * MS,
            }
        };
        let (o, pts) = run_search(1, 1024, 1e9, f);
        assert!(o.thrashed);
        assert_eq!(pts.last().unwrap().depth, 32, "stops after two falls");
        assert_eq!(o.peak.unwrap().depth, 8);
        assert_eq!(o.knee, Some(8));
    }

    #[test]
    fn plateau_with_noise_is_not_thrashing_and_answer_is_within_one_step() {
        for amp in [0.01, 0.02, 0.05] {
            let (o, _) = run_search(1, 1024, 20.0 * MS, noisy(queue(500.0, 100_000.0), amp));
            // ±2 % noise can never drop IOPS by the 5 % tolerance; ±5 % rarely does.
            if amp <= 0.02 {
                assert!(!o.thrashed, "noise {amp} mistaken for thrashing");
            }
            // True answer 10 (10 / 500 = 20 ms); noise may move it by one.
            let d = o.answer.unwrap().depth;
            assert!((9..=11).contains(&d), "noise {amp}: depth {d}");
        }
    }

    #[test]
    fn a_single_noisy_crossing_does_not_end_the_sweep() {
        // Latency spikes at depth 4 only; the true crossing is at depth 11.
        let f = queue(1000.0, 1.0 * MS);
        let (o, pts) = run_search(1, 256, 10.0 * MS, |d| {
            let mut obs = f(d);
            if d == 4 {
                obs.latency_ns = 50.0 * MS;
            }
            obs
        });
        assert_eq!(o.answer.unwrap().depth, 10);
        assert_eq!(o.first_bad, Some(11));
        assert!(o.inconsistent);
        let depths: Vec<u32> = pts.iter().map(|p| p.depth).collect();
        assert_eq!(depths, vec![1, 2, 4, 8, 16, 32, 12, 10, 11]);
    }

    #[test]
    fn knee_needs_a_doubling_beyond_it() {
        let pts: Vec<Observation> = [(1, 100.0), (2, 200.0), (4, 400.0)]
            .iter()
            .map(|&(d, i)| Observation {
                depth: d,
                iops: i,
                latency_ns: 1.0,
            })
            .collect();
        assert_eq!(knee(&pts), None, "still rising: no knee");
        let mut more = pts.clone();
        more.push(Observation {
            depth: 8,
            iops: 410.0,
            latency_ns: 1.0,
        });
        assert_eq!(knee(&more), Some(4));
    }

    /// Under load a step's latency may be the machine's (its `cpu-contention`): depth 16
    /// read 36 ms against a 22 ms limit while its job thread waited for a CPU, and judged so
    /// it put the answer at 15 instead of 22. It is set aside and measured again at once,
    /// in the same phase; the second measurement is judged whatever it shows, and the
    /// outcome names it when it waited too and decided the answer.
    #[test]
    fn a_step_that_waited_for_a_cpu_is_measured_again_before_it_is_judged() {
        let f = queue(1000.0, 1.0 * MS);
        // `waits(depth, n)`: whether the n-th measurement (from 0) of `depth` waited, which
        // adds 20 ms to its latency.
        let run = |waits: &dyn Fn(u32, usize) -> bool, tell: bool| {
            let mut s = Search::new(1, 256, 22.0 * MS);
            let mut steps: Vec<(u32, Phase, bool)> = Vec::new();
            while let Some((d, phase)) = s.next() {
                let waited = waits(d, steps.iter().filter(|st| st.0 == d).count());
                let mut obs = f(d);
                if waited {
                    obs.latency_ns += 20.0 * MS;
                }
                let judged = if tell {
                    s.record_step(obs, waited)
                } else {
                    s.record(obs);
                    true
                };
                steps.push((d, phase, judged));
            }
            (s.outcome(), s.points().to_vec(), steps)
        };
        let (clean, clean_points, _) = run(&|_, _| false, true);
        assert_eq!(clean.answer.unwrap().depth, 22);
        assert_eq!(clean.first_bad, Some(23));
        // Judged on the contended latency, the answer moved to 15.
        let (o, _, _) = run(&|d, n| d == 16 && n == 0, false);
        assert_eq!(o.answer.unwrap().depth, 15);
        // Measured again: the same search as without the wait, one step longer.
        let (o, points, steps) = run(&|d, n| d == 16 && n == 0, true);
        assert_eq!((o.clone(), points), (clean.clone(), clean_points));
        assert_eq!(
            steps[4..6],
            [(16, Phase::Sweep, false), (16, Phase::Sweep, true)]
        );
        assert!(o.contended.is_empty());
        // In the bisection too, in its own phase.
        let (o, _, steps) = run(&|d, n| d == 20 && n == 0, true);
        assert_eq!(o, clean);
        let at = steps.iter().position(|s| s.0 == 20).unwrap();
        assert_eq!(
            steps[at..at + 2],
            [(20, Phase::Bisect, false), (20, Phase::Bisect, true)]
        );
        // Waiting both times at the first bad depth: judged, and named as uncertain.
        let (o, _, steps) = run(&|d, _| d == 22, true);
        assert_eq!(o.answer.unwrap().depth, 21);
        assert_eq!(o.first_bad, Some(22));
        assert_eq!(o.contended, vec![22]);
        assert_eq!(
            steps.iter().filter(|s| s.0 == 22).count(),
            2,
            "once again only"
        );
        // Waiting both times where it decided nothing (depth 1 still held the limit).
        let (o, _, _) = run(&|d, _| d == 1, true);
        assert_eq!(o.answer.unwrap().depth, 22);
        assert!(o.contended.is_empty());
    }

    #[test]
    fn interrupted_search_reports_the_best_so_far() {
        let mut s = Search::new(1, 256, 10.0 * MS);
        let f = queue(1000.0, 1.0 * MS);
        for _ in 0..3 {
            let (d, p) = s.next().unwrap();
            assert_eq!(p, Phase::Sweep);
            s.record(f(d));
        }
        assert_eq!(s.outcome().answer.unwrap().depth, 4);
    }
}

//! Change points in a per-interval throughput series: where a drive's speed changes level
//! (the write cache filling up, a recovery after idle time, thermal throttling).
//!
//! Method: PELT (Pruned Exact Linear Time), Killick, Fearnhead & Eckley, "Optimal detection
//! of changepoints with a linear computational cost", JASA 107(500):1590-1598, 2012. It
//! finds the segmentation that minimises `sum(cost(segment)) + β · (number of changes)`
//! exactly, pruning candidates that can never be optimal again, so it stays near O(n).
//!
//! Cost: a change in the mean of normal data with a common variance σ², i.e. the
//! within-segment sum of squares divided by σ² (−2 log-likelihood up to a constant),
//! applied by default to the logarithm of the throughput: a drive's spread scales with its
//! speed (3 % of 500 MB/s is not 3 % of 80 MB/s), so on a linear scale one common σ would
//! split the fast phase into noise-sized pieces; in logs the noise is one size and a
//! level change is a ratio, which is what a cliff is.
//! σ is estimated robustly from the median absolute deviation of the first differences
//! (a step changes one difference only, so the steps themselves do not inflate σ; the
//! difference of two independent errors has variance 2σ²). Penalty β = k · ln n: k = 2 is
//! the BIC/SIC for independent normal errors; throughput samples are neither normal nor
//! independent (throttle slices, queue effects), so the default is k = 4, which keeps a
//! flat noisy series free of change points (tested over many seeds) while a real step of a
//! few σ over a handful of points still pays for itself many times over.
//!
//! On top, [`phases`] drops what a reader would not call a phase (shorter than
//! `min_phase_points`, or not materially different from its neighbour) and [`cliffs`]
//! reports each material drop: bytes written before it (the cache size), speed before
//! and after.

use std::time::Duration;

/// Settings of the change-point search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangepointOptions {
    /// k in the penalty β = k · ln n (in units of σ²).
    pub penalty_factor: f64,
    /// Shortest segment PELT may return (points).
    pub min_segment_len: usize,
    /// Search on ln(throughput) (multiplicative noise, see the module doc); the segments'
    /// means and spreads are always of the values themselves.
    pub log_scale: bool,
}

impl Default for ChangepointOptions {
    fn default() -> Self {
        ChangepointOptions {
            penalty_factor: 4.0,
            min_segment_len: 2,
            log_scale: true,
        }
    }
}

/// A run of points with one level: `start..end` (end exclusive) into the series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    pub start: usize,
    pub end: usize,
    pub mean: f64,
    /// Sample standard deviation of the points in the segment (0 for one point): the
    /// spread within the phase.
    pub stddev: f64,
    /// The points `level_start..level_end` the level (`mean`, `stddev`) is taken over:
    /// the whole segment, except in a phase of [`phases`] that took in a blip (fewer than
    /// `min_phase_points`) at the very start or end of the series. Such a blip has no
    /// phase before or after it to tell it from: a burst as the pass ends (tmpfs whose
    /// reclaim let go, a throttle's saved credit) or a slow start is not the level the
    /// phase beside it ran at, though its bytes are that phase's.
    pub level_start: usize,
    pub level_end: usize,
}

impl Segment {
    fn of(series: &[f64], start: usize, end: usize) -> Segment {
        Segment::with_level(series, start, end, start, end)
    }

    /// A segment `start..end` whose level is that of `level_start..level_end` (inside it).
    fn with_level(
        series: &[f64],
        start: usize,
        end: usize,
        level_start: usize,
        level_end: usize,
    ) -> Segment {
        let (mean, stddev) = mean_and_sd(&series[level_start..level_end]);
        Segment {
            start,
            end,
            mean,
            stddev,
            level_start,
            level_end,
        }
    }

    /// `a` and `b` (its right neighbour) as one segment, each keeping its level's edge.
    fn join(series: &[f64], a: &Segment, b: &Segment) -> Segment {
        Segment::with_level(series, a.start, b.end, a.level_start, b.level_end)
    }

    pub fn len(&self) -> usize {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

/// Mean and sample standard deviation of the finite values of `xs` (a NaN marks a point
/// left out: a [`pauses`] interval); (0, 0) without any, a spread of 0 with one.
pub fn mean_and_sd(xs: &[f64]) -> (f64, f64) {
    let (n, sum) = xs
        .iter()
        .filter(|x| x.is_finite())
        .fold((0usize, 0.0), |(n, s), x| (n + 1, s + x));
    if n == 0 {
        return (0.0, 0.0);
    }
    let mean = sum / n as f64;
    let sd = if n > 1 {
        let ss: f64 = xs
            .iter()
            .filter(|x| x.is_finite())
            .map(|x| (x - mean).powi(2))
            .sum();
        (ss / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    (mean, sd)
}

/// Robust noise level: MAD of the first differences, scaled to a normal σ (1.4826 · MAD
/// estimates σ of a normal sample; a difference of two errors has σ·√2).
pub fn noise_sigma(series: &[f64]) -> f64 {
    if series.len() < 3 {
        return 0.0;
    }
    let diffs: Vec<f64> = series.windows(2).map(|w| w[1] - w[0]).collect();
    let med = median(&diffs);
    let dev: Vec<f64> = diffs.iter().map(|d| (d - med).abs()).collect();
    1.4826 * median(&dev) / std::f64::consts::SQRT_2
}

fn median(xs: &[f64]) -> f64 {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

/// The optimal segmentation of `series` under a normal mean-change cost (PELT). One
/// segment for a series without change (or shorter than two minimum segments); none for
/// an empty one. Non-finite values are not allowed in a throughput series and are read
/// as 0.
pub fn segments(series: &[f64], opts: &ChangepointOptions) -> Vec<Segment> {
    let n = series.len();
    if n == 0 {
        return Vec::new();
    }
    let series: Vec<f64> = series
        .iter()
        .map(|x| if x.is_finite() { *x } else { 0.0 })
        .collect();
    let m = opts.min_segment_len.max(1);
    if n < 2 * m {
        return vec![Segment::of(&series, 0, n)];
    }
    let work: Vec<f64> = if opts.log_scale {
        // A floor keeps stalls (0 B/s) finite: a thousandth of the typical level.
        let mut pos: Vec<f64> = series.iter().copied().filter(|x| *x > 0.0).collect();
        let floor = if pos.is_empty() {
            1.0
        } else {
            pos.sort_by(f64::total_cmp);
            1e-3 * pos[pos.len() / 2]
        };
        series.iter().map(|x| x.max(floor).ln()).collect()
    } else {
        series.clone()
    };
    let mean = work.iter().sum::<f64>() / n as f64;
    let mut sigma = noise_sigma(&work);
    if sigma <= 0.0 {
        // A noiseless (or quantised) series: any level change is real. A scale a million
        // times below the range makes every step decisive while the squared sums stay
        // far from cancellation.
        let (lo, hi) = work
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
                (a.min(*x), b.max(*x))
            });
        if hi <= lo {
            return vec![Segment::of(&series, 0, n)];
        }
        sigma = 1e-6 * (hi - lo);
    }
    // Standardised prefix sums (centred, so the squares stay small: no cancellation).
    let (s1, s2) = prefix_sums(work.iter().map(|x| (x - mean) / sigma));
    let cost = |s: usize, t: usize| -> f64 {
        let len = (t - s) as f64;
        let a = s1[t] - s1[s];
        (s2[t] - s2[s] - a * a / len).max(0.0)
    };
    let beta = opts.penalty_factor * (n as f64).ln();
    let mut f = vec![f64::INFINITY; n + 1];
    let mut last = vec![0usize; n + 1];
    f[0] = -beta;
    let mut candidates: Vec<usize> = vec![0];
    for t in m..=n {
        // A segment may end at t - m once F there is known (and it is reachable).
        if t >= 2 * m && f[t - m].is_finite() {
            candidates.push(t - m);
        }
        let mut best = f64::INFINITY;
        let mut arg = 0;
        for &tau in &candidates {
            let v = f[tau] + cost(tau, t) + beta;
            if v < best {
                best = v;
                arg = tau;
            }
        }
        f[t] = best;
        last[t] = arg;
        // PELT pruning (K = 0 holds for this cost: splitting never raises the SSE).
        candidates.retain(|&tau| f[tau] + cost(tau, t) <= best);
    }
    let mut bounds = vec![n];
    let mut t = n;
    while t > 0 {
        t = last[t];
        bounds.push(t);
    }
    bounds.reverse();
    bounds
        .windows(2)
        .map(|w| Segment::of(&series, w[0], w[1]))
        .collect()
}

/// Settings of [`phases`] and [`cliffs`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CliffOptions {
    /// A level change is material when the lower mean is below this fraction of the
    /// higher one (0.8: a drop of more than 20 %). Neighbours closer than that are one phase.
    pub material_ratio: f64,
    /// A phase shorter than this (points) is a blip, not a phase: it is folded into the
    /// neighbour with the nearer mean (a short spike or dip is never a cliff).
    pub min_phase_points: usize,
    /// Points at the start of the series left out of the speeds before and after a cliff
    /// (their bytes still count): a start-up transient such as the queue filling or a
    /// throttle's first slice granted at once would otherwise pull the first phase's speed.
    pub lead_in_points: usize,
    /// A level change is also only a phase boundary when the two means stand apart by this
    /// many standard errors (Welch's t, |m₁ − m₂| / √(s₁²/n₁ + s₂²/n₂)). A throttle that
    /// grants its budget in slices writes 0, 2x, 0, 2x, … per interval; a stretch that starts
    /// and ends on a stall has a mean well below its neighbour's (3 stalls in 5 points:
    /// −40 %) though the device never changed. Such a gap is within one or two standard
    /// errors; a real cliff (400 → 100 MB/s over five points even with that jitter) stands
    /// apart by more than five.
    pub min_t: f64,
    /// Let a fast phase at the start of the series be shorter than `min_phase_points`, down
    /// to [`SHORT_PHASE_POINTS`], when its points stand clear of the phase after it (see
    /// [`short_fast_start`]): a small write cache fills in a few intervals. Off by default
    /// (`iolab run`'s write-cache and heat checks keep their rule); `iolab sustain` sets it.
    pub short_fast_start: bool,
    /// Find [`pauses`] and leave them out of the search and of the phases' speeds: a few
    /// intervals at a fraction of a steady speed that comes back after them (a writer the
    /// machine did not schedule, a drive's garbage collection) are no level change, and
    /// their place is no cliff. Off by default (`iolab run`'s checks keep their rule);
    /// `iolab sustain` sets it and reports them.
    pub pauses: bool,
    pub changepoint: ChangepointOptions,
}

impl Default for CliffOptions {
    fn default() -> Self {
        CliffOptions {
            material_ratio: 0.8,
            min_phase_points: 5,
            lead_in_points: 0,
            min_t: 3.0,
            short_fast_start: false,
            pauses: false,
            changepoint: ChangepointOptions::default(),
        }
    }
}

/// The phases a reader would name: PELT's segments with blips folded away and
/// immaterial changes merged. Means and spreads are recomputed over the merged points.
/// With `opts.pauses`, the search runs on the series with each pause at the speed before
/// it and the phases' levels leave the pauses' points out.
pub fn phases(series: &[f64], opts: &CliffOptions) -> Vec<Segment> {
    let mut data: Vec<f64> = series
        .iter()
        .map(|x| if x.is_finite() { *x } else { 0.0 })
        .collect();
    let mut searched = data.clone();
    if opts.pauses {
        for p in pauses(&data, opts) {
            searched[p.start..p.catch_up_end].fill(p.level);
            data[p.start..p.catch_up_end].fill(f64::NAN);
        }
        smooth_made_up_stalls(&mut searched, opts.material_ratio);
    }
    let stalls = stall_factor(&searched, opts.changepoint.min_segment_len);
    let mut segs: Vec<Segment> = match stalls {
        1 => segments(&searched, &opts.changepoint),
        k => coarse_segments(&searched, k, &opts.changepoint),
    }
    .iter()
    .map(|s| Segment::of(&data, s.start, s.end))
    .collect();
    // How far off a piece at an end of the series must be to be of another level: a
    // material change, or twice that when stalls are frequent (a few points may then hold
    // a catch-up whose stall is on the other side of the boundary: up to twice the level).
    let edge_limit = if stalls == 1 {
        opts.material_ratio
    } else {
        opts.material_ratio / 2.0
    };
    // A short fast phase at the start is a small cache, not a blip (never among stalls:
    // their catch-ups are short and fast too).
    let short_ok = |segs: &[Segment], i: usize| {
        opts.short_fast_start && stalls == 1 && short_fast_start(&data, segs, i, opts)
    };
    // Fold short segments, shortest first, into the neighbour with the nearer mean.
    while segs.len() > 1 {
        let Some((i, _)) = segs
            .iter()
            .enumerate()
            .filter(|(i, s)| s.len() < opts.min_phase_points && !short_ok(&segs, *i))
            .min_by_key(|(_, s)| s.len())
        else {
            break;
        };
        let into_left = if i == 0 {
            false
        } else if i == segs.len() - 1 {
            true
        } else {
            (segs[i - 1].mean - segs[i].mean).abs() <= (segs[i + 1].mean - segs[i].mean).abs()
        };
        let (a, b) = if into_left { (i - 1, i) } else { (i, i + 1) };
        let mut joined = Segment::join(&data, &segs[a], &segs[b]);
        // A blip at an end of the series is no part of the level of the phase it joins
        // (nothing after an end burst says it was one: without this, four intervals of a
        // burst as a pass ended lifted its settled speed by a third), as long as the phase
        // keeps a phase's worth of points of its own.
        // Only a blip of another level (one that would be a phase of its own if it lasted):
        // a piece of the same level that the search cut off is the phase's.
        let (first, last) = (i == 0, i == segs.len() - 1);
        let other = level_ratio(segs[a].mean, segs[b].mean) < edge_limit;
        // A short fast start keeps its level with fewer points of its own.
        let room = if short_ok(&segs, b) {
            SHORT_PHASE_POINTS
        } else {
            opts.min_phase_points
        };
        let keep = |lo: usize, hi: usize| other && hi - lo >= room;
        if first && keep(segs[b].level_start, joined.level_end) {
            joined = Segment::with_level(
                &data,
                joined.start,
                joined.end,
                segs[b].level_start,
                joined.level_end,
            );
        } else if last && keep(joined.level_start, segs[a].level_end) {
            joined = Segment::with_level(
                &data,
                joined.start,
                joined.end,
                joined.level_start,
                segs[a].level_end,
            );
        }
        segs[a] = joined;
        segs.remove(b);
    }
    // Merge neighbours whose change is immaterial or within the noise, the closest pair
    // first, until every change is both material and clear.
    loop {
        let closest = segs
            .windows(2)
            .enumerate()
            .filter(|(_, w)| {
                // A short phase left standing is a short fast start: its points were each
                // held to a stricter test than Welch's t over so few.
                let short = w[0].len().min(w[1].len()) < opts.min_phase_points;
                level_ratio(w[0].mean, w[1].mean) >= opts.material_ratio
                    || (!short && welch_t(&data, &w[0], &w[1], opts.lead_in_points) < opts.min_t)
            })
            .map(|(i, w)| (i, level_ratio(w[0].mean, w[1].mean)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let Some((i, _)) = closest else { break };
        let (a, b) = (&segs[i], &segs[i + 1]);
        let mut joined = Segment::join(&data, a, b);
        // A rise that ended the series, too short (under two phases' worth of points) and
        // too noisy to stand apart as a phase, is still of another level: no part of the
        // level of the phase it joins (a throttle raised as a pass ended, then the backing
        // file's writeback: 147, 241, 241, 367, 126, 42, 147, 304, 640, 739 MB/s after 39
        // intervals near 100 lifted the phase to 128.73).
        let rise_at_end = i + 2 == segs.len()
            && b.len() < 2 * opts.min_phase_points
            && b.mean > a.mean
            && level_ratio(a.mean, b.mean) < edge_limit
            && a.level_end - a.level_start >= opts.min_phase_points;
        if rise_at_end {
            joined =
                Segment::with_level(&data, joined.start, joined.end, a.level_start, a.level_end);
        }
        segs[i] = joined;
        segs.remove(i + 1);
    }
    segs
}

/// A pause in a steady speed: points `start..end` (end exclusive) at under half the speed
/// of the steady points before them, after which the speed came back. A writer the machine
/// did not schedule (other programs on every CPU) writes next to nothing, then catches up;
/// a drive may pause for its garbage collection or a flush. Either way the device did not
/// change its level there: it is no cliff, and its intervals are no part of the phase's
/// speed (their bytes are).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pause {
    pub start: usize,
    pub end: usize,
    /// The speed before it: the median of the steady points before it.
    pub level: f64,
    /// Its own mean speed.
    pub mean: f64,
    /// The end of the catch-up after it (`end` without one): the points right after it
    /// above the speed before it by more than a material change, making up no more than
    /// the pause lost (a throttle's saved credit spent at once). Neither they nor the pause
    /// are the device's speed.
    pub catch_up_end: usize,
}

/// The steady points a pause must follow: each within a material change of their median.
const PAUSE_STEADY_POINTS: usize = 4;
/// A pause's points are each under this share of the speed before it.
const PAUSE_DEPTH: f64 = 0.5;
/// The fewest points of a pause: a single low point followed by twice the speed is how a
/// throttle grants its budget in slices (0, 199, 0, 199 MB/s at 100), the device's pattern.
const PAUSE_MIN_POINTS: usize = 2;

/// The pauses of `series` (see [`Pause`]): from [`PAUSE_MIN_POINTS`] up to fewer than
/// `min_phase_points` points (longer, a slower stretch is a phase of its own), each under
/// half of the median of the [`PAUSE_STEADY_POINTS`] steady points before them (past the
/// lead-in), followed by a point back at that speed (within a material change) or catching
/// up above it (by no more than the pause lost).
/// A drop that does not come back is no pause: 398 MB/s, then 0, 0, 63, 105 is a cliff (a
/// throttle's debt or a drive flushing as its cache filled).
pub fn pauses(series: &[f64], opts: &CliffOptions) -> Vec<Pause> {
    let x = |i: usize| {
        let v = series[i];
        if v.is_finite() { v } else { 0.0 }
    };
    let mut out = Vec::new();
    let mut i = opts.lead_in_points + PAUSE_STEADY_POINTS;
    while i < series.len() {
        let before: Vec<f64> = (i - PAUSE_STEADY_POINTS..i).map(x).collect();
        let level = median(&before);
        let steady = level > 0.0
            && before
                .iter()
                .all(|b| level_ratio(*b, level) >= opts.material_ratio);
        if !steady || x(i) >= PAUSE_DEPTH * level {
            i += 1;
            continue;
        }
        let mut end = i;
        while end < series.len() && end - i < opts.min_phase_points && x(end) < PAUSE_DEPTH * level
        {
            end += 1;
        }
        // The catch-up: points above the speed by more than a material change, as long as
        // they make up no more than the pause lost (a stall, then a rise to a faster level,
        // is no pause: the faster level is no catch-up).
        let lost: f64 = (i..end).map(|k| level - x(k)).sum();
        let mut catch_up_end = end;
        let mut made_up = 0.0;
        while catch_up_end < series.len()
            && catch_up_end - end < opts.min_phase_points
            && x(catch_up_end) * opts.material_ratio > level
            && made_up + x(catch_up_end) - level <= lost
        {
            made_up += x(catch_up_end) - level;
            catch_up_end += 1;
        }
        // Back at the speed before it, or catching up.
        let back = catch_up_end > end
            || (end < series.len() && level_ratio(x(end), level) >= opts.material_ratio);
        if (PAUSE_MIN_POINTS..opts.min_phase_points).contains(&(end - i)) && back {
            let mean = (i..end).map(x).sum::<f64>() / (end - i) as f64;
            out.push(Pause {
                start: i,
                end,
                level,
                mean,
                catch_up_end,
            });
            i = catch_up_end;
            continue;
        }
        // Not a pause from here (a new, slower level, or no way back): a later point may
        // still start one (the slow phase after a cliff stalled 4 intervals in).
        i += 1;
    }
    out
}

/// The points of `series` in a pause (with `opts.pauses`; none without).
fn paused_points(series: &[f64], opts: &CliffOptions) -> Vec<bool> {
    let mut out = vec![false; series.len()];
    if opts.pauses {
        for p in pauses(series, opts) {
            out[p.start..p.catch_up_end].fill(true);
        }
    }
    out
}

/// The fewest points of a fast phase at the start of a series ([`short_fast_start`]),
/// where any other phase needs `min_phase_points`: the start-up interval (`lead_in_points`)
/// and two more, each clear of the phase after it.
pub const SHORT_PHASE_POINTS: usize = 3;
/// How far above the slower phase beside it each point of a short fast start must be, in
/// that phase's robust standard deviations (1.4826 · MAD), besides a material change.
const SHORT_PHASE_SIGMAS: f64 = 4.0;

/// Is `segs[i]` a fast phase at the start of the series shorter than a phase (a small write
/// cache, or a cache that came back only in part), not a blip? It starts the series, or
/// follows a slower start (`segs[0]` of fewer than two phases' worth of points: a drive
/// waking up or still busy); it has at least
/// [`SHORT_PHASE_POINTS`], the phase after it at least `min_phase_points`; and its points
/// past the start-up (`lead_in_points`) — at least two, the last one aside (it may hold the
/// drop) — are each above the phase after it (and a slower start of a phase's length before
/// it) by a material change and by [`SHORT_PHASE_SIGMAS`] of its spread. Stricter than
/// Welch's t over a phase's worth of points: each point must stand out, not their mean, so
/// a noisy start (two points 4 σ high in a row) is no phase.
fn short_fast_start(data: &[f64], segs: &[Segment], i: usize, opts: &CliffOptions) -> bool {
    // The phase after it: the first segment of a phase's length (blips between, such as
    // the stall of a throttle's debt right after the drop, are folded before it is judged:
    // 797, 398, 398, 0, 0, 0, 168, 94, 105 MB/s lost its cache to a tie with the stall).
    let Some(s) = segs.get(i) else {
        return false;
    };
    let Some(next) = segs[i + 1..]
        .iter()
        .find(|x| x.len() >= opts.min_phase_points)
    else {
        return false;
    };
    // A slow start is shorter than two phases: after a longer slow stretch a short fast
    // one is a spike, by its shape (20 intervals at 100 MB/s, 3 at 400, then 100 again).
    let after_slow_start =
        i == 1 && segs[0].mean < s.mean && segs[0].len() < 2 * opts.min_phase_points;
    if !(i == 0 || after_slow_start)
        || !(SHORT_PHASE_POINTS..opts.min_phase_points).contains(&s.len())
    {
        return false;
    }
    let lo = s.level_start.max(opts.lead_in_points.min(s.level_end));
    let xs = &data[lo..s.level_end];
    let clear_of = |o: &Segment| {
        let ys = &data[o.level_start..o.level_end];
        let m = median(ys);
        let dev: Vec<f64> = ys.iter().map(|y| (y - m).abs()).collect();
        let spread = 1.4826 * median(&dev);
        let above = |x: &f64| *x * opts.material_ratio > m && *x > m + SHORT_PHASE_SIGMAS * spread;
        let n = xs.len();
        n >= 2 && xs[..n - 1].iter().all(above) && xs.iter().filter(|x| above(x)).count() >= 2
    };
    // A slow start shorter than a phase is folded into this one (out of its level).
    clear_of(next) && (i == 0 || segs[0].len() < opts.min_phase_points || clear_of(&segs[0]))
}

/// A point is a stall when it is below this fraction of the series' median speed.
const STALL_FRACTION: f64 = 0.1;
/// Stalls in more than this share of the points make the search work on sums of points.
const STALL_SHARE: f64 = 0.05;
/// The most points added up into one.
const MAX_FACTOR: usize = 8;

/// How many neighbouring points to add up before searching for change points: 1 unless
/// stalls (whole intervals with next to nothing written) are frequent. A writer that is not
/// scheduled, a throttle that grants its budget in slices, or a drive's garbage collection
/// writes 0, then catches up; on the logarithm of the speed each stall is the largest
/// change in the series, the noise estimate is made of them and a cache cliff between two
/// such stretches is not found at all. Summed over k intervals the stalls and their
/// catch-ups cancel: k is the smallest that leaves stalls in at most 5 % of the points
/// (at most 8, and never so large that fewer than two segments' worth of points remain).
fn stall_factor(data: &[f64], min_segment_len: usize) -> usize {
    let stall_share = |k: usize| -> f64 {
        let sums = coarse(data, k);
        let mut pos: Vec<f64> = sums.iter().copied().filter(|x| *x > 0.0).collect();
        if pos.is_empty() {
            return 0.0;
        }
        pos.sort_by(f64::total_cmp);
        let floor = STALL_FRACTION * pos[pos.len() / 2];
        sums.iter().filter(|x| **x < floor).count() as f64 / sums.len() as f64
    };
    let room = |k: usize| data.len() / k >= 4 * min_segment_len.max(1);
    if stall_share(1) <= STALL_SHARE {
        return 1;
    }
    (2..=MAX_FACTOR)
        .take_while(|k| room(*k))
        .find(|k| stall_share(*k) <= STALL_SHARE)
        .unwrap_or(1)
}

/// Replace each stall (under [`STALL_FRACTION`] of the median speed) that the next point
/// makes up, the two at the series' median speed within a material change, by their mean.
/// A writer the machine did not schedule for one interval and that caught up in the next,
/// or a throttle granting its budget in slices (0, 199 MB/s at 100), did not change speed
/// there; counted as stalls, a few such pairs in a long slow phase (5 in 95 intervals under
/// a load of 12 on two cores) sent the whole search to sums of intervals, where a small
/// cache of 4 intervals at the start is lost: the pass had no cliff. A stall not made up
/// (the throttle's debt after a cliff, 398, 0, 0, 157) stays a stall.
fn smooth_made_up_stalls(xs: &mut [f64], material_ratio: f64) {
    let mut pos: Vec<f64> = xs.iter().copied().filter(|x| *x > 0.0).collect();
    if pos.is_empty() {
        return;
    }
    pos.sort_by(f64::total_cmp);
    let median = pos[pos.len() / 2];
    let mut i = 0;
    while i + 1 < xs.len() {
        let pair = (xs[i] + xs[i + 1]) / 2.0;
        if xs[i] < STALL_FRACTION * median && level_ratio(pair, median) >= material_ratio {
            xs[i] = pair;
            xs[i + 1] = pair;
            i += 2;
        } else {
            i += 1;
        }
    }
}

/// Prefix sums of `xs` and of their squares: `[i]` sums the first `i` values.
fn prefix_sums(xs: impl ExactSizeIterator<Item = f64>) -> (Vec<f64>, Vec<f64>) {
    let mut s1 = vec![0.0; xs.len() + 1];
    let mut s2 = vec![0.0; xs.len() + 1];
    for (i, x) in xs.enumerate() {
        s1[i + 1] = s1[i] + x;
        s2[i + 1] = s2[i] + x * x;
    }
    (s1, s2)
}

/// Means of consecutive runs of `k` points (the last run may be shorter).
fn coarse(data: &[f64], k: usize) -> Vec<f64> {
    data.chunks(k)
        .map(|c| c.iter().sum::<f64>() / c.len() as f64)
        .collect()
}

/// [`segments`] of the series summed over `k` points, mapped back to the points: each
/// boundary is then moved, within `k` points either way, to where it splits its two
/// neighbouring segments with the least squared error, so a drop is placed to the point.
fn coarse_segments(data: &[f64], k: usize, opts: &ChangepointOptions) -> Vec<Segment> {
    let n = data.len();
    let coarse_segs = segments(&coarse(data, k), opts);
    let mut bounds: Vec<usize> = coarse_segs.iter().map(|s| (s.start * k).min(n)).collect();
    bounds.push(n);
    let (s1, s2) = prefix_sums(data.iter().copied());
    let sse = |a: usize, b: usize| -> f64 {
        let len = (b - a) as f64;
        let sum = s1[b] - s1[a];
        s2[b] - s2[a] - sum * sum / len
    };
    for i in 1..bounds.len() - 1 {
        let (lo, hi) = (bounds[i - 1], bounds[i + 1]);
        let from = bounds[i].saturating_sub(k).max(lo + 1);
        let to = (bounds[i] + k).min(hi - 1);
        if let Some(best) = (from..=to)
            .min_by(|a, b| (sse(lo, *a) + sse(*a, hi)).total_cmp(&(sse(lo, *b) + sse(*b, hi))))
        {
            bounds[i] = best;
        }
    }
    bounds
        .windows(2)
        .filter(|w| w[1] > w[0])
        .map(|w| Segment::of(data, w[0], w[1]))
        .collect()
}

/// Welch's t of two segments' means, |m₁ − m₂| / √(s₁²/n₁ + s₂²/n₂) (∞ when neither has
/// any spread), over their points past the series' first `lead_in` (a start-up burst
/// would inflate the first phase's spread; a segment made only of lead-in keeps them).
fn welch_t(data: &[f64], a: &Segment, b: &Segment, lead_in: usize) -> f64 {
    let stats = |s: &Segment| {
        let lo = if lead_in > s.level_start && lead_in < s.level_end {
            lead_in
        } else {
            s.level_start
        };
        let x = &data[lo..s.level_end];
        let n = x.iter().filter(|v| v.is_finite()).count().max(1) as f64;
        let (m, sd) = mean_and_sd(x);
        (m, sd * sd / n)
    };
    let ((ma, va), (mb, vb)) = (stats(a), stats(b));
    let d = (ma - mb).abs();
    if va + vb > 0.0 {
        d / (va + vb).sqrt()
    } else if d > 0.0 {
        f64::INFINITY
    } else {
        0.0
    }
}

/// min/max of two levels (1 = equal); 1 when both are zero.
fn level_ratio(a: f64, b: f64) -> f64 {
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    if hi <= 0.0 { 1.0 } else { (lo / hi).max(0.0) }
}

/// The points `lo..hi` of the phase `start..end` its speed is taken over: without the
/// series' first `lead_in` points (start-up) and without the points it shares with a
/// neighbouring phase (its first after a change, its last before one: a mix of both
/// speeds), as long as two points are left; else without the lead-in only (a short fast
/// start, 797, 398, 398 MB/s with the throttle's first slice, was quoted at 531: its shared
/// point is the likelier to be at its speed); else the whole phase. The phase table and
/// the cliffs both use it, so a cliff's speeds are its two phases' speeds.
pub fn settled_range(
    start: usize,
    end: usize,
    lead_in: usize,
    after_change: bool,
    before_change: bool,
) -> (usize, usize) {
    let mut lo = start.max(lead_in.min(end));
    if after_change {
        lo = lo.max(start + 1);
    }
    let hi = if before_change {
        end.saturating_sub(1)
    } else {
        end
    };
    let past_lead_in = start.max(lead_in.min(end));
    if hi >= lo + 2 {
        (lo, hi)
    } else if end >= past_lead_in + 2 {
        (past_lead_in, end)
    } else {
        (start, end)
    }
}

/// One material drop in throughput.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cliff {
    /// First point of the slower phase.
    pub index: usize,
    /// When the drop happened, from the start of the series, interpolated inside the two
    /// intervals around the boundary from the two phases' speeds.
    pub at: Duration,
    /// Bytes written from the start of the series to the drop.
    pub bytes_before: f64,
    /// Bytes written in the fast phase that ended with the drop: the cache size when the
    /// series starts with an empty cache, or the cache refilled after a recovery.
    pub fast_phase_bytes: f64,
    /// Speeds of the two phases over their settled points ([`settled_range`]: the
    /// intervals where a drop happened are a mix of both speeds and would pull each mean
    /// toward the other); spreads are over the whole phases.
    pub before_bytes_per_s: f64,
    pub before_stddev_bytes_per_s: f64,
    pub after_bytes_per_s: f64,
    pub after_stddev_bytes_per_s: f64,
    /// How long the slower phase lasted (points).
    pub after_points: usize,
}

/// Every material drop in `series_bytes_per_s` (one throughput value per `interval`).
/// `bytes_per_point`, when given, is what was really written in each interval (exact
/// counters beat `rate × interval` when intervals jitter); it must be as long as the series.
pub fn cliffs(
    series_bytes_per_s: &[f64],
    interval: Duration,
    bytes_per_point: Option<&[u64]>,
) -> Vec<Cliff> {
    cliffs_with(
        series_bytes_per_s,
        interval,
        bytes_per_point,
        &CliffOptions::default(),
    )
}

/// [`cliffs`] with explicit options.
pub fn cliffs_with(
    series_bytes_per_s: &[f64],
    interval: Duration,
    bytes_per_point: Option<&[u64]>,
    opts: &CliffOptions,
) -> Vec<Cliff> {
    let dt = interval.as_secs_f64();
    let bytes: Vec<f64> = match bytes_per_point {
        Some(b) if b.len() == series_bytes_per_s.len() => b.iter().map(|&x| x as f64).collect(),
        _ => series_bytes_per_s.iter().map(|r| r.max(0.0) * dt).collect(),
    };
    let ph = phases(series_bytes_per_s, opts);
    let paused = paused_points(series_bytes_per_s, opts);
    let mut out = Vec::new();
    for (i, w) in ph.windows(2).enumerate() {
        let (fast, slow) = (w[0], w[1]);
        if slow.mean >= opts.material_ratio * fast.mean || fast.mean <= 0.0 {
            continue;
        }
        let b = slow.start;
        // Speeds away from both of each phase's boundaries (a boundary point may be mixed:
        // the first point of a fast phase between two cliffs is partly the slow phase
        // before it) and past the lead-in: the phase's settled points.
        let inner = |s: &Segment, after_change: bool, before_change: bool| -> f64 {
            let (lo, hi) = settled_range(
                s.level_start,
                s.level_end,
                opts.lead_in_points,
                after_change,
                before_change,
            );
            // Without the pauses' points (a pause is no part of the speed).
            let (n, sum) = (lo..hi)
                .filter(|k| !paused[*k])
                .fold((0usize, 0.0), |(n, s), k| (n + 1, s + bytes[k]));
            sum / (n.max(1) as f64 * dt)
        };
        let h = inner(&fast, i > 0, true);
        let l = inner(&slow, true, i + 2 < ph.len());
        // The two intervals around the boundary: H for τ seconds, then L. Each interval's
        // share at H is its own (0 to 1): a stall after the drop (0 B in the second: a
        // throttle's debt, a drive pausing to flush its cache) took a fast interval before
        // it for a mix (160 MiB at 400 MB/s, then 0, 0, 63, 105 MB/s: 14 % short), and a
        // wholly fast one counts all its bytes (a catch-up above H is still before the drop).
        let mut tau = 0.0;
        let mut bytes_before: f64 = bytes[..b - 1].iter().sum();
        for &x in &bytes[b - 1..=b] {
            let share = if h > l {
                ((x - l * dt) / ((h - l) * dt)).max(0.0)
            } else {
                0.5
            };
            if share >= 1.0 {
                (tau, bytes_before) = (tau + dt, bytes_before + x);
            } else {
                (tau, bytes_before) = (tau + share * dt, bytes_before + share * h * dt);
            }
        }
        let fast_start: f64 = bytes[..fast.start].iter().sum();
        out.push(Cliff {
            index: b,
            at: Duration::from_secs_f64((b - 1) as f64 * dt + tau),
            bytes_before,
            fast_phase_bytes: bytes_before - fast_start,
            before_bytes_per_s: h,
            before_stddev_bytes_per_s: fast.stddev,
            after_bytes_per_s: l,
            after_stddev_bytes_per_s: slow.stddev,
            after_points: slow.len(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// Is `x` within a fraction `tol` of `want`?
    fn within(x: f64, want: f64, tol: f64) -> bool {
        (x / want - 1.0).abs() < tol
    }

    /// Normal noise by Box-Muller (no extra crate).
    fn noisy(levels: &[(usize, f64)], rel_sigma: f64, seed: u64) -> Vec<f64> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut out = Vec::new();
        for &(n, level) in levels {
            for _ in 0..n {
                let u1: f64 = rand::RngExt::random::<f64>(&mut rng).max(1e-12);
                let u2: f64 = rand::RngExt::random::<f64>(&mut rng);
                let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
                out.push(level * (1.0 + rel_sigma * z));
            }
        }
        out
    }

    const MB: f64 = 1e6;

    /// A series written in MB/s, in bytes/s.
    fn mb_per_s(xs: &[f64]) -> Vec<f64> {
        xs.iter().map(|x| x * MB).collect()
    }

    #[test]
    fn one_step_is_found_where_it_is() {
        for seed in 0..20 {
            let s = noisy(&[(60, 400.0 * MB), (140, 100.0 * MB)], 0.03, seed);
            let segs = segments(&s, &ChangepointOptions::default());
            assert_eq!(segs.len(), 2, "seed {seed}: {segs:?}");
            assert_eq!(segs[0].start, 0);
            assert!((59..=61).contains(&segs[1].start), "seed {seed}: {segs:?}");
            assert_eq!(segs[1].end, 200);
            assert!(within(segs[0].mean, 400.0 * MB, 0.02));
            assert!(within(segs[1].mean, 100.0 * MB, 0.02));
            assert!(within(segs[1].stddev, 3.0 * MB, 0.3), "{segs:?}");
        }
    }

    #[test]
    fn flat_noisy_series_has_no_change_point() {
        for seed in 0..200 {
            let s = noisy(&[(300, 250.0 * MB)], 0.05, seed);
            let segs = segments(&s, &ChangepointOptions::default());
            assert_eq!(segs.len(), 1, "seed {seed}: {segs:?}");
            assert!(cliffs(&s, Duration::from_millis(100), None).is_empty());
        }
    }

    /// Between two cliffs the speed rose again: the interval where it rose is a mix of
    /// both speeds, whichever phase it falls in. It is no part of the fast phase's speed
    /// before the second cliff (it pulled 8000 MB/s down to 7455), nor of the slow phase's
    /// after the first (its last interval counted: 445.64 under a phase of 449.39).
    #[test]
    fn a_phase_between_two_cliffs_is_measured_away_from_both_boundaries() {
        for (mixed, bw) in [(33, 2400.0 * MB), (32, 1200.0 * MB)] {
            let mut s = noisy(
                &[
                    (24, 6400.0 * MB),
                    (9, 450.0 * MB),
                    (11, 8000.0 * MB),
                    (40, 460.0 * MB),
                ],
                0.01,
                3,
            );
            s[24] = 500.0 * MB;
            s[mixed] = bw;
            s[44] = 6500.0 * MB;
            let c = cliffs(&s, Duration::from_millis(10), None);
            assert_eq!(c.len(), 2, "{mixed}: {c:?}");
            let near = |x: f64, want: f64| within(x, want * MB, 0.02);
            assert!(near(c[0].after_bytes_per_s, 450.0), "{mixed}: {c:?}");
            assert!(near(c[1].before_bytes_per_s, 8000.0), "{mixed}: {c:?}");
        }
    }

    #[test]
    fn two_steps_are_two_changes() {
        let s = noisy(
            &[(50, 500.0 * MB), (50, 200.0 * MB), (80, 80.0 * MB)],
            0.03,
            7,
        );
        let segs = segments(&s, &ChangepointOptions::default());
        let starts: Vec<usize> = segs.iter().map(|x| x.start).collect();
        assert_eq!(starts, vec![0, 50, 100], "{segs:?}");
        let c = cliffs(&s, Duration::from_secs(1), None);
        assert_eq!(c.len(), 2, "{c:?}");
        assert_eq!(c[0].index, 50);
        assert_eq!(c[1].index, 100);
        // 50 s at 500 MB/s, then 50 s at 200 MB/s.
        assert!(within(c[0].bytes_before, 25_000.0 * MB, 0.02), "{c:?}");
        assert!(within(c[1].bytes_before, 35_000.0 * MB, 0.02), "{c:?}");
        assert!(within(c[1].fast_phase_bytes, 10_000.0 * MB, 0.03), "{c:?}");
    }

    #[test]
    fn short_spike_is_not_a_cliff() {
        // A 2-point dip to a quarter of the speed in a long flat run: PELT may see it,
        // the phase rule must not call it a cliff.
        let s = noisy(
            &[(80, 400.0 * MB), (2, 100.0 * MB), (80, 400.0 * MB)],
            0.03,
            3,
        );
        assert!(cliffs(&s, Duration::from_millis(100), None).is_empty());
        let p = phases(&s, &CliffOptions::default());
        assert_eq!(p.len(), 1, "{p:?}");
    }

    /// A burst of fewer than 5 intervals as the series ends (tmpfs whose memory reclaim let
    /// go, a throttle's saved credit) is folded into the last phase: its bytes are that
    /// phase's, its speed is not. Counted in, four intervals at 1000 MB/s lifted a slow
    /// phase of 100 MB/s to 181; and after a short slow phase they hid the cliff itself.
    #[test]
    fn an_end_burst_lifts_neither_the_last_phase_nor_hides_a_cliff() {
        let dt = Duration::from_millis(100);
        let near = |x: f64, want: f64| within(x, want * MB, 0.03);
        for seed in 0..50 {
            for (slow_points, burst) in [(40, 1000.0), (15, 2000.0)] {
                let s = noisy(
                    &[(30, 400.0 * MB), (slow_points, 100.0 * MB), (4, burst * MB)],
                    0.03,
                    seed,
                );
                let p = phases(&s, &CliffOptions::default());
                assert_eq!(p.len(), 2, "seed {seed}: {p:?}");
                let last = p[1];
                assert_eq!(last.end, s.len(), "the burst's points are the phase's");
                assert_eq!(last.level_end, s.len() - 4, "seed {seed}: {p:?}");
                assert!(near(last.mean, 100.0), "seed {seed}: {p:?}");
                let c = cliffs(&s, dt, None);
                assert_eq!(c.len(), 1, "seed {seed}: {c:?}");
                assert!(near(c[0].after_bytes_per_s, 100.0), "seed {seed}: {c:?}");
                assert!(near(c[0].before_bytes_per_s, 400.0), "seed {seed}: {c:?}");
            }
        }
    }

    /// A slow start of fewer than 5 intervals (the queue filling, a drive waking up) is
    /// no part of the level of the phase it is folded into; a plain steady device and a
    /// noisy one keep all their points and their own mean.
    #[test]
    fn a_short_slow_start_and_a_steady_device_keep_their_level() {
        let near = |x: f64, want: f64, tol: f64| within(x, want * MB, tol);
        for seed in 0..50 {
            let s = noisy(&[(4, 50.0 * MB), (60, 400.0 * MB)], 0.03, seed);
            let p = phases(&s, &CliffOptions::default());
            assert_eq!(p.len(), 1, "seed {seed}: {p:?}");
            assert_eq!((p[0].start, p[0].end), (0, 64));
            assert_eq!(p[0].level_start, 4, "seed {seed}: {p:?}");
            assert!(near(p[0].mean, 400.0, 0.02), "seed {seed}: {p:?}");
            // Steady, with 1 % and with 8 % noise: one phase over every point.
            for rel in [0.01, 0.08] {
                let s = noisy(&[(80, 250.0 * MB)], rel, seed);
                let p = phases(&s, &CliffOptions::default());
                assert_eq!(p.len(), 1, "seed {seed}: {p:?}");
                assert_eq!((p[0].level_start, p[0].level_end), (0, 80));
                let all = s.iter().sum::<f64>() / s.len() as f64;
                assert!(within(p[0].mean, all, 1e-12), "seed {seed}: {p:?}");
                assert!(near(p[0].mean, 250.0, 0.03), "seed {seed}: {p:?}");
            }
        }
        // A series too short to leave the phase 5 points of its own keeps them all.
        let s = mb_per_s(&[100.0, 100.0, 100.0, 400.0, 410.0, 400.0, 390.0]);
        let p = phases(&s, &CliffOptions::default());
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!((p[0].level_start, p[0].level_end), (0, 7), "{p:?}");
    }

    /// A small write cache at the start of a pass (the start-up interval at twice the
    /// speed, k intervals at 400 MB/s, one shared with the drop, then 100 MB/s): asked for,
    /// a fast start of 3 or 4 intervals is a phase and its cliff is found, the cache within
    /// 6 % of what was written before the drop; not asked for (`iolab run`'s checks), it is
    /// a blip as before. A flat series with the same start-up burst stays without a cliff
    /// at 3 % and 8 % noise either way, and a short spike later on is still no phase.
    #[test]
    fn a_short_fast_start_is_a_phase_when_asked() {
        let dt = Duration::from_millis(100);
        let sustain = CliffOptions {
            lead_in_points: 1,
            short_fast_start: true,
            ..CliffOptions::default()
        };
        let run = CliffOptions {
            short_fast_start: false,
            ..sustain
        };
        for seed in 0..50 {
            for k in 2..=4 {
                let mut s = noisy(
                    &[(k, 400.0 * MB), (1, 250.0 * MB), (40, 100.0 * MB)],
                    0.03,
                    seed,
                );
                s[0] = 797.0 * MB;
                // Before the drop: the burst, k - 1 at 400, half the shared interval.
                let truth = (797.0 + 400.0 * (k - 1) as f64 + 200.0) * MB * 0.1;
                let c = cliffs_with(&s, dt, None, &sustain);
                assert_eq!(c.len(), 1, "seed {seed}, k {k}: {c:?}");
                assert!(
                    within(c[0].fast_phase_bytes, truth, 0.06),
                    "seed {seed}, k {k}: {c:?}"
                );
                assert!(within(c[0].after_bytes_per_s, 100.0 * MB, 0.03), "{c:?}");
                if k > 2 {
                    assert!(within(c[0].before_bytes_per_s, 400.0 * MB, 0.1), "{c:?}");
                }
                if k == 3 {
                    assert!(cliffs_with(&s, dt, None, &run).is_empty(), "seed {seed}");
                }
            }
            // The throttle's first slice, then two intervals at the limit, then a stall
            // (seen on the emulator): the speed is the two's, not 531 MB/s with the slice.
            let mut s = noisy(&[(3, 398.0 * MB), (40, 100.0 * MB)], 0.0, seed);
            s[0] = 797.0 * MB;
            s[3] = 0.0;
            s[4] = 63.0 * MB;
            // And with a stall of three intervals, as long as the cache (seen too), in a
            // series long enough for three stalls to be under 5 % of its points.
            let mut three = s.clone();
            three.extend(vec![100.0 * MB; 40]);
            three[4] = 0.0;
            three[5] = 0.0;
            three[6] = 168.0 * MB;
            let c = cliffs_with(&three, dt, None, &sustain);
            assert_eq!(c.len(), 1, "{c:?}");
            assert!(within(c[0].fast_phase_bytes, 159.3 * MB, 1e-9), "{c:?}");
            let c = cliffs_with(&s, dt, None, &sustain);
            assert_eq!(c.len(), 1, "{c:?}");
            assert!(within(c[0].before_bytes_per_s, 398.0 * MB, 1e-9), "{c:?}");
            assert!(within(c[0].fast_phase_bytes, 159.3 * MB, 1e-9), "{c:?}");
            // The start-up interval and one more at the fast speed: too short to tell.
            let mut s = noisy(
                &[(1, 400.0 * MB), (1, 250.0 * MB), (40, 100.0 * MB)],
                0.03,
                seed,
            );
            s[0] = 797.0 * MB;
            assert!(
                cliffs_with(&s, dt, None, &sustain).is_empty(),
                "seed {seed}"
            );
            for rel in [0.03, 0.08] {
                let mut flat = noisy(&[(60, 400.0 * MB)], rel, seed);
                flat[0] = 797.0 * MB;
                assert!(
                    cliffs_with(&flat, dt, None, &sustain).is_empty(),
                    "seed {seed}"
                );
            }
            let spike = noisy(
                &[(20, 100.0 * MB), (3, 400.0 * MB), (40, 100.0 * MB)],
                0.03,
                seed,
            );
            assert!(
                cliffs_with(&spike, dt, None, &sustain).is_empty(),
                "seed {seed}"
            );
        }
    }

    /// A slow start, a fast phase of 3 intervals, then the slow speed: the fast phase is a
    /// phase of its own (folded into the slow start, the two were one "cache" at half the
    /// speed), its cliff the cache.
    #[test]
    fn a_short_fast_phase_after_a_slow_start_is_the_cache() {
        let opts = CliffOptions {
            lead_in_points: 1,
            short_fast_start: true,
            ..CliffOptions::default()
        };
        for seed in 0..50 {
            for start in [100.0, 200.0] {
                let s = noisy(
                    &[(8, start * MB), (3, 400.0 * MB), (30, 100.0 * MB)],
                    0.03,
                    seed,
                );
                let p = phases(&s, &opts);
                let at: Vec<usize> = p.iter().map(|x| x.start).collect();
                assert_eq!(at, [0, 8, 11], "seed {seed}: {p:?}");
                let c = cliffs_with(&s, Duration::from_millis(100), None, &opts);
                assert_eq!(c.len(), 1, "seed {seed}: {c:?}");
                assert!(within(c[0].fast_phase_bytes, 120.0 * MB, 0.06), "{c:?}");
            }
        }
    }

    #[test]
    fn small_drop_is_not_material() {
        // 10 % lower: a real change for PELT, not a cliff.
        let s = noisy(&[(100, 400.0 * MB), (100, 360.0 * MB)], 0.01, 5);
        assert_eq!(segments(&s, &ChangepointOptions::default()).len(), 2);
        assert!(cliffs(&s, Duration::from_millis(100), None).is_empty());
    }

    #[test]
    fn cliff_reports_cache_size_from_the_mixed_interval() {
        // 256 MiB at 400 MB/s (0.671 s), then 100 MB/s; 100 ms intervals, no noise: the
        // boundary interval is mixed and the interpolation must recover the exact size.
        let dt = 0.1;
        let cache = 256.0 * 1024.0 * 1024.0;
        let t_switch = cache / (400.0 * MB);
        let series: Vec<f64> = (0..40)
            .map(|i| {
                let (a, b) = (i as f64 * dt, (i + 1) as f64 * dt);
                let fast = (t_switch.min(b) - a).clamp(0.0, dt);
                (fast * 400.0 * MB + (dt - fast) * 100.0 * MB) / dt
            })
            .collect();
        let c = cliffs(&series, Duration::from_millis(100), None);
        assert_eq!(c.len(), 1, "{c:?}");
        assert!(within(c[0].bytes_before, cache, 0.01), "{c:?}");
        assert!((c[0].at.as_secs_f64() - t_switch).abs() < 0.01, "{c:?}");
        assert!(within(c[0].after_bytes_per_s, 100.0 * MB, 0.01));
    }

    #[test]
    fn a_lead_in_burst_is_left_out_of_the_speed() {
        // A first interval at twice the speed (a throttle's first slice at once).
        let mut s = vec![400.0 * MB; 10];
        s[0] = 800.0 * MB;
        s.extend(vec![100.0 * MB; 20]);
        let dt = Duration::from_millis(100);
        // Without a lead-in the burst and the point after it (the shortest segment the
        // search makes) are a blip of another level at the start of the series: no part
        // of the level either.
        let c = cliffs(&s, dt, None);
        assert!(within(c[0].before_bytes_per_s, 400.0 * MB, 1e-9), "{c:?}");
        let opts = CliffOptions {
            lead_in_points: 1,
            ..CliffOptions::default()
        };
        let c = cliffs_with(&s, dt, None, &opts);
        assert!(within(c[0].before_bytes_per_s, 400.0 * MB, 1e-9), "{c:?}");
        // The bytes of the lead-in still count before the cliff.
        assert!((c[0].bytes_before - 4400.0 * MB * 0.1).abs() < 1.0, "{c:?}");
    }

    #[test]
    fn exact_bytes_per_point_are_used() {
        let s = vec![
            100.0, 100.0, 100.0, 100.0, 100.0, 10.0, 10.0, 10.0, 10.0, 10.0,
        ];
        // The counters say twice what rate × interval says (e.g. a 2-s interval).
        let bytes: Vec<u64> = s.iter().map(|x| (*x * 2.0) as u64).collect();
        let c = cliffs(&s, Duration::from_secs(1), Some(&bytes));
        assert_eq!(c.len(), 1);
        assert!((c[0].bytes_before - 1000.0).abs() < 1e-6, "{c:?}");
        let c = cliffs(&s, Duration::from_secs(1), None);
        assert!((c[0].bytes_before - 500.0).abs() < 1e-6, "{c:?}");
    }

    #[test]
    fn recovery_then_second_cliff_reports_the_refilled_cache() {
        let s = noisy(
            &[
                (30, 400.0 * MB),
                (30, 100.0 * MB),
                (20, 400.0 * MB),
                (30, 100.0 * MB),
            ],
            0.02,
            11,
        );
        let c = cliffs(&s, Duration::from_secs(1), None);
        assert_eq!(c.len(), 2, "{c:?}");
        assert!(within(c[1].fast_phase_bytes, 8_000.0 * MB, 0.05), "{c:?}");
    }

    #[test]
    fn edge_cases() {
        let o = ChangepointOptions::default();
        assert!(segments(&[], &o).is_empty());
        assert_eq!(segments(&[5.0], &o).len(), 1);
        assert_eq!(segments(&[5.0; 50], &o).len(), 1);
        let step: Vec<f64> = [vec![5.0; 10], vec![1.0; 10]].concat();
        assert_eq!(segments(&step, &o).len(), 2);
        assert_eq!(noise_sigma(&[1.0, 2.0]), 0.0);
        assert!(cliffs(&[], Duration::from_secs(1), None).is_empty());
        let z = segments(&[f64::NAN, 1.0, 1.0, 1.0], &o);
        assert!(z.iter().all(|s| s.mean.is_finite()));
    }

    /// A series seen in CI (MB/s per 100 ms): a 400 MB/s cache, then a 100 MB/s throttle
    /// that grants its budget in slices (0, 199, 0, 199, … between steady stretches). The
    /// stretches that start and end on a stall have a mean 30 % low but are within the
    /// noise: one cliff, not three.
    #[test]
    fn a_sliced_throttle_after_the_cliff_is_one_phase() {
        let s = mb_per_s(&[
            797.0, 398.0, 398.0, 398.0, 398.0, 472.0, 105.0, 0.0, 199.0, 0.0, 199.0, 0.0, 199.0,
            94.0, 105.0, 94.0, 105.0, 94.0, 105.0, 105.0, 0.0, 199.0, 0.0, 199.0, 0.0, 199.0, 94.0,
            105.0, 94.0, 105.0, 94.0, 105.0, 105.0, 0.0,
        ]);
        let c = cliffs(&s, Duration::from_millis(100), None);
        assert_eq!(c.len(), 1, "{c:?}");
        assert!((6..=7).contains(&c[0].index), "{c:?}");
        let after = c[0].after_bytes_per_s / MB;
        assert!((90.0..110.0).contains(&after), "{c:?}");
    }

    /// A clean 512 MiB cache at 400 then 200 MB/s, with the throttle's first slice let
    /// through at once (797): the first phase is the whole cache, not the points after the
    /// burst (a trial of comparing phases without their boundary points split it there).
    #[test]
    fn a_start_up_burst_does_not_split_the_fast_phase() {
        let mut s = vec![797.0, 398.0, 398.0, 398.0, 398.0, 409.0];
        s.extend([398.0; 6]);
        s.push(304.0);
        s.extend([199.0; 40]);
        let s = mb_per_s(&s);
        let opts = CliffOptions {
            lead_in_points: 1,
            ..CliffOptions::default()
        };
        let c = cliffs_with(&s, Duration::from_millis(100), None, &opts);
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].index, 13, "{c:?}");
        assert!(c[0].fast_phase_bytes > 500.0 * MB, "{c:?}");
    }

    /// A cache cliff on a loaded machine: the writer missed whole intervals in the fast
    /// phase (0, then twice the speed) and the slow phase comes in slices. The search on
    /// single points sees only the stalls; on sums of two the cliff is found, at the drop.
    #[test]
    fn stalls_in_both_phases_do_not_hide_the_cliff() {
        let s = mb_per_s(&[
            797.0, 398.0, 0.0, 796.0, 398.0, 398.0, 398.0, 105.0, 0.0, 199.0, 0.0, 199.0, 94.0,
            105.0, 94.0, 105.0, 0.0, 199.0, 0.0, 199.0, 0.0, 199.0, 105.0, 94.0, 105.0,
        ]);
        let c = cliffs(&s, Duration::from_millis(100), None);
        assert_eq!(c.len(), 1, "{c:?}");
        assert!((7..=8).contains(&c[0].index), "{c:?}");
        let written: f64 = s[..7].iter().sum::<f64>() * 0.1;
        assert!(
            within(c[0].bytes_before, written, 0.05),
            "{c:?} against {written}"
        );
    }

    /// A burst as the pass ended on the write-cache emulator, with whole-interval stalls
    /// after the cliff (so the search ran on sums of two): the burst (482, 398, 398) was
    /// counted into the slow phase, 120.46 MB/s on a 100 MB/s throttle.
    #[test]
    fn an_end_burst_after_stalls_is_left_out_of_the_level() {
        let s = mb_per_s(&[
            398.0, 398.0, 398.0, 398.0, 398.0, 398.0, 409.0, 398.0, 398.0, 398.0, 0.0, 0.0, 94.0,
            105.0, 94.0, 105.0, 94.0, 105.0, 94.0, 105.0, 94.0, 105.0, 94.0, 105.0, 105.0, 94.0,
            105.0, 94.0, 105.0, 0.0, 199.0, 94.0, 105.0, 94.0, 105.0, 94.0, 105.0, 105.0, 94.0,
            105.0, 94.0, 105.0, 94.0, 105.0, 94.0, 105.0, 94.0, 105.0, 94.0, 105.0, 105.0, 482.0,
            398.0, 398.0,
        ]);
        assert!(stall_factor(&s, 2) > 1);
        let p = phases(&s, &CliffOptions::default());
        assert_eq!(p.len(), 2, "{p:?}");
        assert_eq!(p[1].end, s.len());
        assert!(within(p[1].mean, 100.0 * MB, 0.05), "{p:?}");
    }

    /// Seen on a throttled loop device over a file on disk: 400 MB/s, then 100 MB/s, then
    /// the throttle raised as the pass ended and the backing file's writeback in the way.
    /// The last 10 intervals are a rise too noisy to stand apart as a phase; merged into
    /// the slow phase they lifted its speed to 128.73 MB/s (±73.8 %).
    #[test]
    fn a_noisy_rise_as_the_series_ends_is_left_out_of_the_level() {
        let s = mb_per_s(&[
            398.0, 398.0, 398.0, 398.0, 398.0, 398.0, 409.0, 398.0, 398.0, 398.0, 398.0, 346.0,
            105.0, 94.0, 105.0, 94.0, 105.0, 94.0, 105.0, 94.0, 105.0, 94.0, 94.0, 105.0, 105.0,
            105.0, 94.0, 94.0, 105.0, 105.0, 94.0, 105.0, 94.0, 105.0, 94.0, 105.0, 94.0, 105.0,
            105.0, 94.0, 105.0, 94.0, 105.0, 94.0, 105.0, 94.0, 105.0, 94.0, 105.0, 94.0, 105.0,
            147.0, 241.0, 241.0, 367.0, 126.0, 42.0, 147.0, 304.0, 640.0, 739.0,
        ]);
        let p = phases(&s, &CliffOptions::default());
        let last = p.last().unwrap();
        assert_eq!(last.end, s.len(), "{p:?}");
        assert!(within(last.mean, 100.0 * MB, 0.05), "{p:?}");
        // A drop that ends the series the same way is no rise: it stays in (a slower
        // end is the drive's, and a clear one is a cliff).
        let mut d = s.clone();
        for x in d.iter_mut().skip(51) {
            *x = 100.0 * MB * 100.0 * MB / *x;
        }
        let p = phases(&d, &CliffOptions::default());
        assert_eq!(p.last().unwrap().level_end, d.len(), "{p:?}");
    }

    /// Stalls in a share of the points over many seeds: a flat series stays one phase and
    /// a 4:1 step stays one cliff at the step, whatever the stalls' places.
    #[test]
    fn scattered_stalls_keep_flat_flat_and_a_step_one_cliff() {
        use rand::SeedableRng;
        for seed in 0..200u64 {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            let mut stall = |xs: &mut Vec<f64>| {
                // A stall moves one interval's bytes into the next one, which catches up
                // (a stall of several intervals is a real dip: 5 or more make a phase).
                let mut i = 0;
                while i + 1 < xs.len() {
                    if rand::RngExt::random::<f64>(&mut rng) < 0.15 {
                        xs[i + 1] += xs[i];
                        xs[i] = 0.0;
                        i += 1;
                    }
                    i += 1;
                }
            };
            let mut flat = noisy(&[(60, 300.0 * MB)], 0.03, seed);
            stall(&mut flat);
            let mut step = noisy(&[(30, 400.0 * MB), (40, 100.0 * MB)], 0.03, seed);
            stall(&mut step);
            // `iolab sustain`'s options find pauses: the same holds.
            for opts in [CliffOptions::default(), sustain_options()] {
                let dt = Duration::from_millis(100);
                assert!(
                    cliffs_with(&flat, dt, None, &opts).is_empty(),
                    "seed {seed}: {flat:?}"
                );
                let c = cliffs_with(&step, dt, None, &opts);
                assert_eq!(c.len(), 1, "seed {seed}: {c:?} {step:?}");
                assert!((28..=32).contains(&c[0].index), "seed {seed}: {c:?}");
            }
        }
    }

    /// The options `iolab sustain` searches with (`workload::sustain`).
    fn sustain_options() -> CliffOptions {
        CliffOptions {
            lead_in_points: 1,
            short_fast_start: true,
            pauses: true,
            ..CliffOptions::default()
        }
    }

    /// The 400 MB/s cache of the write-cache emulator under two spinning programs on its two
    /// cores: 398 MB/s for five intervals, then the writer not scheduled for three (0, 0,
    /// 0), then catching up (482, 325: the throttle's saved credit) or, as a drive does,
    /// back at its speed, before the cache filled. The cliff was put at the stall, its
    /// cache 279 MB of about 420. The stall is a pause: the cliff is where the speed fell
    /// and stayed, and the fast speed leaves the three stalled intervals out.
    #[test]
    fn a_stalled_writer_is_a_pause_not_the_cliff() {
        let dt = Duration::from_millis(100);
        let slow: Vec<f64> = (0..40)
            .map(|i| if i % 2 == 0 { 94.0 } else { 105.0 })
            .collect();
        for after_stall in [&[482.0, 325.0, 398.0][..], &[398.0, 398.0, 398.0], &[700.0]] {
            let mut s = vec![797.0, 398.0, 398.0, 398.0, 398.0, 398.0, 0.0, 0.0, 0.0];
            s.extend(after_stall);
            let drop = s.len();
            s.push(250.0);
            s.extend(&slow);
            let s = mb_per_s(&s);
            let p = pauses(&s, &sustain_options());
            assert_eq!(p.len(), 1, "{after_stall:?}: {p:?}");
            assert_eq!((p[0].start, p[0].end), (6, 9), "{p:?}");
            assert!(within(p[0].level, 398.0 * MB, 0.01), "{p:?}");
            let c = cliffs_with(&s, dt, None, &sustain_options());
            assert_eq!(c.len(), 1, "{after_stall:?}: {c:?}");
            assert!(
                (drop..=drop + 1).contains(&c[0].index),
                "{after_stall:?}: {c:?}"
            );
            // Written before the drop: every interval before it, and half the mixed one.
            let written = s[..drop].iter().sum::<f64>() * 0.1 + 0.5 * 39.8 * MB;
            assert!(
                within(c[0].fast_phase_bytes, written, 0.05),
                "{after_stall:?}: {c:?} against {written}"
            );
            assert!(
                within(c[0].before_bytes_per_s, 398.0 * MB, 0.02),
                "{after_stall:?}: {c:?}"
            );
            assert!(
                within(c[0].after_bytes_per_s, 100.0 * MB, 0.05),
                "{after_stall:?}: {c:?}"
            );
        }
    }

    /// A drive that pauses for a few intervals in the middle of a steady pass (its garbage
    /// collection) and comes back: one phase at its speed, and the pause found (folded as a
    /// blip it was seen nowhere). A throttle's slices (single zeros, then twice the speed)
    /// and a drop that does not come back (a cliff with a flush after it) are no pauses.
    #[test]
    fn a_pause_in_a_steady_pass_is_found_and_kept_out_of_the_speed() {
        let dt = Duration::from_millis(100);
        let mut s = vec![400.0; 30];
        s[15..18].copy_from_slice(&[60.0, 20.0, 40.0]);
        let s = mb_per_s(&s);
        let p = pauses(&s, &sustain_options());
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!((p[0].start, p[0].end), (15, 18), "{p:?}");
        assert!(within(p[0].mean, 40.0 * MB, 0.01), "{p:?}");
        let ph = phases(&s, &sustain_options());
        assert_eq!(ph.len(), 1, "{ph:?}");
        assert!(within(ph[0].mean, 400.0 * MB, 1e-9), "{ph:?}");
        assert!(cliffs_with(&s, dt, None, &sustain_options()).is_empty());
        // Without the option (`iolab run`'s checks), as before: the pause is in the mean.
        assert!(phases(&s, &CliffOptions::default())[0].mean < 370.0 * MB);
        let sliced = mb_per_s(&[
            105.0, 94.0, 105.0, 105.0, 0.0, 199.0, 0.0, 199.0, 0.0, 199.0, 94.0, 105.0, 94.0, 105.0,
        ]);
        assert!(pauses(&sliced, &sustain_options()).is_empty());
        // A stall 4 intervals into the slow phase after a cliff (seen on the emulator under
        // bursts of real-time spinners): the drop itself is no pause, the stall is.
        let mut after = vec![400.0; 10];
        after.extend([100.0, 100.0, 100.0, 100.0, 0.0, 0.0, 0.0, 180.0]);
        after.extend([100.0; 20]);
        let p = pauses(&mb_per_s(&after), &sustain_options());
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(
            (p[0].start, p[0].end, p[0].catch_up_end),
            (14, 17, 18),
            "{p:?}"
        );
        // A slow start, a stall, then the cache: the rise is no catch-up, and the stall no
        // pause (the cache would have been taken for its catch-up and lost).
        let mut rise = vec![94.0, 105.0, 94.0, 105.0, 94.0, 105.0, 94.0, 0.0, 0.0];
        rise.extend([409.0, 398.0, 398.0, 409.0]);
        rise.extend([100.0; 30]);
        let rise = mb_per_s(&rise);
        assert!(pauses(&rise, &sustain_options()).is_empty());
        let c = cliffs_with(&rise, dt, None, &sustain_options());
        assert_eq!(c.len(), 1, "{c:?}");
        assert!(within(c[0].before_bytes_per_s, 400.0 * MB, 0.03), "{c:?}");
        let flush = mb_per_s(&[
            797.0, 398.0, 398.0, 398.0, 398.0, 398.0, 0.0, 0.0, 63.0, 105.0, 94.0, 105.0,
        ]);
        assert!(pauses(&flush, &sustain_options()).is_empty());
    }

    /// A small cache after a slow start (7 intervals at 100 MB/s, 4 at 400, the throttle's
    /// debt 0, 0, then 100 MB/s) in a pass the machine stalled: single intervals at 0 that
    /// the next one made up (0, 199) came to over 5 % of the series with the debt, and the
    /// search on sums of intervals lost the cache (one phase at 111 MB/s, no cliff). Seen
    /// under a load of 12 on two cores; the series as sustain recorded it.
    #[test]
    fn stalls_made_up_at_once_do_not_hide_a_small_cache() {
        let s = mb_per_s(&SERIES);
        let opts = CliffOptions {
            lead_in_points: 1,
            short_fast_start: true,
            pauses: true,
            ..CliffOptions::default()
        };
        let p = phases(&s, &opts);
        assert_eq!(p.len(), 3, "{p:?}");
        assert_eq!((p[1].start, p[1].end), (7, 11), "{p:?}");
        let c = cliffs_with(&s, Duration::from_millis(100), None, &opts);
        assert_eq!(c.len(), 1, "{c:?}");
        assert!(within(c[0].fast_phase_bytes, 160.0 * MB, 0.05), "{c:?}");
    }

    const SERIES: [f64; 95] = [
        94.0, 105.0, 94.0, 105.0, 94.0, 105.0, 94.0, 409.0, 398.0, 398.0, 409.0, 0.0, 0.0, 157.0,
        94.0, 105.0, 94.0, 105.0, 105.0, 94.0, 105.0, 94.0, 105.0, 94.0, 105.0, 94.0, 84.0, 115.0,
        105.0, 94.0, 105.0, 105.0, 94.0, 105.0, 94.0, 105.0, 94.0, 105.0, 94.0, 105.0, 94.0, 105.0,
        94.0, 105.0, 105.0, 94.0, 105.0, 94.0, 105.0, 94.0, 105.0, 94.0, 105.0, 94.0, 105.0, 94.0,
        105.0, 94.0, 105.0, 105.0, 94.0, 0.0, 199.0, 105.0, 94.0, 0.0, 199.0, 0.0, 199.0, 105.0,
        94.0, 84.0, 126.0, 84.0, 115.0, 0.0, 168.0, 126.0, 105.0, 94.0, 105.0, 94.0, 105.0, 94.0,
        105.0, 105.0, 94.0, 105.0, 94.0, 105.0, 94.0, 105.0, 94.0, 0.0, 33.0,
    ];
}

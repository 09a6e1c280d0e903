//! Per-job recorders: HDR histograms, counters and the interval series. Each worker thread
//! owns one; they merge with `+=` after the run.

use crate::model::{DirectionStats, IntervalPoint};
use crate::stats::hist::LatencyHistogram;

#[derive(Debug, Clone, Copy, Default)]
pub struct IntervalBucket {
    pub ios: u64,
    pub bytes: u64,
    pub lat_sum_ns: u128,
}

/// Mixed jobs: each direction's own count and latency histogram.
#[derive(Debug, Clone, Default)]
pub struct DirectionSplit {
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_lat: LatencyHistogram,
    pub write_lat: LatencyHistogram,
}

impl std::ops::AddAssign<&DirectionSplit> for DirectionSplit {
    fn add_assign(&mut self, o: &DirectionSplit) {
        self.read_ios += o.read_ios;
        self.write_ios += o.write_ios;
        self.read_lat += &o.read_lat;
        self.write_lat += &o.write_lat;
    }
}

/// One direction's part of a mixed run: its rates over `secs` and its latency histogram.
pub fn direction_stats(ops: u64, bytes: u64, secs: f64, lat: &LatencyHistogram) -> DirectionStats {
    DirectionStats {
        ops,
        bytes,
        iops: ops as f64 / secs,
        bw_bytes_per_s: bytes as f64 / secs,
        lat_ns: lat.stats(),
        lat_hist: Some(lat.to_base64()),
    }
}

#[derive(Debug, Clone, Default)]
pub struct JobRecorder {
    pub lat: LatencyHistogram,
    pub slat: LatencyHistogram,
    pub ios: u64,
    pub bytes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub lat_sum_ns: u128,
    /// The part of each request's time in flight that falls in the measured window, added
    /// up (also for the requests drained after a timed run's deadline): the window's average
    /// queue depth times its length. The latencies' sum is not: a request submitted before
    /// the window opened counts its whole latency there, which read "QD 21.0" at depth 20.
    pub busy_ns: u128,
    /// Requests still in flight at a timed run's deadline: in the latency (up to the
    /// deadline), not in `ios` or `bytes`.
    pub at_deadline: u64,
    pub intervals: Vec<IntervalBucket>,
    /// Job threads' CPU use in percent of their wall time (max over merged jobs).
    pub max_thread_cpu_pct: f64,
    /// Job threads' wait for a CPU (runnable, not running) in percent of the same span (max
    /// over merged jobs; `None` without schedstat).
    pub max_thread_wait_pct: Option<f64>,
    pub fsync_ns: Option<u64>,
    /// Time from the end of the measured window to the end of the I/O loop (the drain).
    pub tail_ns: Option<u64>,
    /// Bytes read and written by the requests drained after a timed run's deadline: not in
    /// the figures, but in what the device saw over the window `devices` cover.
    pub tail_read_bytes: u64,
    pub tail_write_bytes: u64,
    /// Bytes written including the ramp (kept across `reset`): the application's side of
    /// write amplification, whose device side covers the whole run.
    pub all_write_bytes: u64,
    /// Per-direction counts and latencies, kept for mixed jobs only (`split_directions`).
    pub split: Option<Box<DirectionSplit>>,
}

impl JobRecorder {
    pub fn with_intervals(n: usize) -> JobRecorder {
        JobRecorder {
            intervals: Vec::with_capacity(n),
            ..Default::default()
        }
    }

    /// Also keep reads and writes apart (mixed workloads).
    pub fn split_directions(mut self) -> JobRecorder {
        self.split = Some(Box::default());
        self
    }

    #[inline]
    pub fn record(&mut self, lat_ns: u64, bytes: u64, is_write: bool, interval: usize) {
        self.lat.record(lat_ns);
        self.ios += 1;
        self.bytes += bytes;
        if is_write {
            self.write_bytes += bytes;
        } else {
            self.read_bytes += bytes;
        }
        self.lat_sum_ns += lat_ns as u128;
        if let Some(s) = &mut self.split {
            if is_write {
                s.write_ios += 1;
                s.write_lat.record(lat_ns);
            } else {
                s.read_ios += 1;
                s.read_lat.record(lat_ns);
            }
        }
        if interval >= self.intervals.len() {
            self.intervals
                .resize(interval + 1, IntervalBucket::default());
        }
        let b = &mut self.intervals[interval];
        b.ios += 1;
        b.bytes += bytes;
        b.lat_sum_ns += lat_ns as u128;
    }

    /// A request still in flight at a timed run's deadline: it took at least `lat_ns` (from
    /// its submission to the deadline), which the latency counts as a completion's would,
    /// not the operations or bytes (it moved nothing within the window). Left out, a stall
    /// at the deadline was hidden: 4 sync jobs under a 20 MB/s cap read 8.00 MB/s at a mean
    /// 13.48 ms and depth 4.00, which Little's law says is 19 MB/s.
    #[inline]
    pub fn record_in_flight_at_deadline(&mut self, lat_ns: u64, is_write: bool) {
        self.lat.record(lat_ns);
        self.at_deadline += 1;
        if let Some(s) = &mut self.split {
            if is_write {
                s.write_lat.record(lat_ns);
            } else {
                s.read_lat.record(lat_ns);
            }
        }
    }

    /// A request in flight from `submit_ns` until `until_ns` (its completion, or the deadline
    /// of a timed run it was still in flight at): its part in the window opened at
    /// `window_ns` adds to the window's queue depth.
    #[inline(always)]
    pub fn add_in_flight(&mut self, submit_ns: u64, until_ns: u64, window_ns: u64) {
        self.busy_ns += until_ns.saturating_sub(submit_ns.max(window_ns)) as u128;
    }

    /// Forget the ramp's measurements (keeps `all_write_bytes` and the direction split).
    pub fn reset(&mut self) {
        let cap = self.intervals.capacity();
        let all = self.all_write_bytes;
        let split = self.split.take().map(|_| Box::default());
        *self = JobRecorder::with_intervals(cap);
        self.all_write_bytes = all;
        self.split = split;
    }

    pub fn interval_points(&self, interval_ms: u64) -> Vec<IntervalPoint> {
        let secs = interval_ms as f64 / 1000.0;
        self.intervals
            .iter()
            .enumerate()
            .map(|(i, b)| IntervalPoint {
                t_ms: (i as u64 + 1) * interval_ms,
                ios: b.ios,
                bytes: b.bytes,
                iops: b.ios as f64 / secs,
                bw_bytes_per_s: b.bytes as f64 / secs,
                lat_mean_ns: if b.ios > 0 {
                    b.lat_sum_ns as f64 / b.ios as f64
                } else {
                    0.0
                },
            })
            .collect()
    }
}

impl std::ops::AddAssign<&JobRecorder> for JobRecorder {
    fn add_assign(&mut self, o: &JobRecorder) {
        self.lat += &o.lat;
        self.slat += &o.slat;
        self.ios += o.ios;
        self.bytes += o.bytes;
        self.read_bytes += o.read_bytes;
        self.write_bytes += o.write_bytes;
        self.tail_read_bytes += o.tail_read_bytes;
        self.tail_write_bytes += o.tail_write_bytes;
        self.lat_sum_ns += o.lat_sum_ns;
        self.busy_ns += o.busy_ns;
        self.at_deadline += o.at_deadline;
        if o.intervals.len() > self.intervals.len() {
            self.intervals
                .resize(o.intervals.len(), IntervalBucket::default());
        }
        for (a, b) in self.intervals.iter_mut().zip(&o.intervals) {
            a.ios += b.ios;
            a.bytes += b.bytes;
            a.lat_sum_ns += b.lat_sum_ns;
        }
        self.all_write_bytes += o.all_write_bytes;
        if let Some(os) = &o.split {
            **self.split.get_or_insert_with(Box::default) += os;
        }
        self.max_thread_cpu_pct = self.max_thread_cpu_pct.max(o.max_thread_cpu_pct);
        self.max_thread_wait_pct = match (self.max_thread_wait_pct, o.max_thread_wait_pct) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        // Option's order puts None below every value: the larger one, or the one there is.
        self.fsync_ns = self.fsync_ns.max(o.fsync_ns);
        self.tail_ns = self.tail_ns.max(o.tail_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_adds_counts_and_intervals() {
        let mut a = JobRecorder::default();
        let mut b = JobRecorder::default();
        a.record(1000, 4096, false, 0);
        b.record(3000, 4096, true, 0);
        b.record(2000, 4096, true, 2);
        a += &b;
        assert_eq!(a.ios, 3);
        assert_eq!(a.bytes, 3 * 4096);
        assert_eq!(a.write_bytes, 2 * 4096);
        assert_eq!(a.intervals.len(), 3);
        assert_eq!(a.intervals[0].ios, 2);
        assert_eq!(a.lat.len(), 3);
        let pts = a.interval_points(100);
        assert_eq!(pts[0].iops, 20.0);
        assert_eq!(pts[0].lat_mean_ns, 2000.0);
        assert!(a.split.is_none(), "only mixed jobs keep directions apart");
        // The slowest job's fsync and drain; one job's alone where only it has one.
        a.fsync_ns = Some(5);
        b.fsync_ns = Some(7);
        b.tail_ns = Some(3);
        a += &b;
        assert_eq!((a.fsync_ns, a.tail_ns), (Some(7), Some(3)));
        a += &JobRecorder::default();
        assert_eq!((a.fsync_ns, a.tail_ns), (Some(7), Some(3)));
    }

    #[test]
    fn split_keeps_directions_apart_through_reset_and_merge() {
        let mut a = JobRecorder::with_intervals(4).split_directions();
        a.record(9_000, 4096, true, 0);
        a.reset();
        assert!(a.split.as_ref().is_some_and(|s| s.write_ios == 0));
        a.record(1_000, 4096, false, 0);
        a.record(5_000, 4096, true, 0);
        let mut b = JobRecorder::default().split_directions();
        b.record(2_000, 4096, false, 1);
        let mut total = JobRecorder::default();
        total += &a;
        total += &b;
        let s = total.split.expect("merged split");
        assert_eq!((s.read_ios, s.write_ios), (2, 1));
        assert_eq!(s.read_lat.len() + s.write_lat.len(), total.lat.len());
        assert_eq!(s.write_lat.stats().max, total.lat.stats().max);
        assert!(s.read_lat.stats().max < 2_100);
    }

    /// Little's law over a window: the latencies counted add up to the requests' time in
    /// flight in it (no ramp), also with a request stalled across the deadline. Left out of
    /// the latency, the two stalled requests' 180 ms of the 200 ms window were in the depth
    /// only: depth 2.0 against IOPS x mean latency = 10 x 10 ms = 0.1.
    #[test]
    fn a_request_in_flight_at_the_deadline_counts_in_the_latency() {
        let ms = 1_000_000u64;
        let mut r = JobRecorder::default();
        // Window 0..200 ms, two slots: one completes three 10 ms reads and stalls from 20 ms
        // to after the deadline; the other one stalls from 20 ms on too.
        for i in 0..2 {
            r.record(10 * ms, 4096, false, 0);
            r.add_in_flight(i * 10 * ms, (i + 1) * 10 * ms, 0);
        }
        for _ in 0..2 {
            r.add_in_flight(20 * ms, 200 * ms, 0);
            r.record_in_flight_at_deadline(180 * ms, false);
        }
        assert_eq!((r.ios, r.bytes, r.at_deadline), (2, 8192, 2));
        let st = r.lat.stats();
        assert_eq!(st.count, 4);
        assert!(st.max >= 179 * ms, "the stall shows: max {}", st.max);
        let depth = r.busy_ns as f64 / (200 * ms) as f64;
        let little = st.count as f64 * st.mean / (200 * ms) as f64;
        assert!((little - depth).abs() < 0.01 * depth, "{little} vs {depth}");
        let mut merged = JobRecorder::default().split_directions();
        merged += &r;
        assert_eq!(merged.at_deadline, 2);
    }

    /// The saturate curve read "QD 21.0" at depth 20: each completion in the window added
    /// its whole latency, also the part before the window opened (a request submitted during
    /// the ramp), so the sum of latencies over the window was no queue depth. Only the time
    /// in the window counts now, and that of a request still in flight at the deadline.
    #[test]
    fn only_the_time_in_the_window_makes_the_queue_depth() {
        let mut r = JobRecorder::default();
        // Window from 100 to 200: one slot busy all along with two requests (submitted at
        // 40, done at 150; then 150 to the deadline, drained after it), one slot with a
        // request from 120 to 170.
        r.add_in_flight(40, 150, 100);
        r.add_in_flight(150, 200, 100);
        r.add_in_flight(120, 170, 100);
        assert_eq!(r.busy_ns, 100 + 50);
        // 1.5 requests in flight on average over the 100 ns window; the sum of the counted
        // latencies (110 + 50, the drained request left out) said 1.6.
        assert_eq!(r.busy_ns as f64 / 100.0, 1.5);
        let mut merged = JobRecorder::default();
        merged += &r;
        merged += &r;
        assert_eq!(merged.busy_ns, 300);
    }
}

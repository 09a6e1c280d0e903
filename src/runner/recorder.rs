//! Per-job recorders: HDR histograms, counters and the interval series. Each worker thread
//! owns one; they merge with `+=` after the run.

use crate::model::IntervalPoint;
use crate::stats::hist::LatencyHistogram;

#[derive(Debug, Clone, Copy, Default)]
pub struct IntervalBucket {
    pub ios: u64,
    pub bytes: u64,
    pub lat_sum_ns: u128,
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
    pub intervals: Vec<IntervalBucket>,
    /// Job threads' CPU use in percent of their wall time (max over merged jobs).
    pub max_thread_cpu_pct: f64,
    pub fsync_ns: Option<u64>,
    /// Bytes written including the ramp (kept across `reset`): the application's side of
    /// write amplification, whose device side covers the whole run.
    pub all_write_bytes: u64,
}

impl JobRecorder {
    pub fn with_intervals(n: usize) -> JobRecorder {
        JobRecorder {
            intervals: Vec::with_capacity(n),
            ..Default::default()
        }
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
        if interval >= self.intervals.len() {
            self.intervals
                .resize(interval + 1, IntervalBucket::default());
        }
        let b = &mut self.intervals[interval];
        b.ios += 1;
        b.bytes += bytes;
        b.lat_sum_ns += lat_ns as u128;
    }

    /// Forget the ramp's measurements (keeps `all_write_bytes`).
    pub fn reset(&mut self) {
        let cap = self.intervals.capacity();
        let all = self.all_write_bytes;
        *self = JobRecorder::with_intervals(cap);
        self.all_write_bytes = all;
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
        self.lat_sum_ns += o.lat_sum_ns;
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
        self.max_thread_cpu_pct = self.max_thread_cpu_pct.max(o.max_thread_cpu_pct);
        self.fsync_ns = match (self.fsync_ns, o.fsync_ns) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
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
    }
}

//! Latency histograms: HDR histograms with 3 significant digits, merged with `+=`.

use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};

use crate::model::LatencyStats;

/// Highest trackable latency: 1 hour in ns (anything slower is clamped and still counted).
const MAX_NS: u64 = 3_600_000_000_000;

/// A latency recorder (ns). Recording is allocation-free.
#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    pub h: Histogram<u64>,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    pub fn new() -> Self {
        LatencyHistogram {
            h: Histogram::new_with_bounds(1, MAX_NS, 3).expect("valid HDR bounds"),
        }
    }

    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.h.saturating_record(ns.clamp(1, MAX_NS));
    }

    pub fn len(&self) -> u64 {
        self.h.len()
    }

    pub fn is_empty(&self) -> bool {
        self.h.is_empty()
    }

    pub fn reset(&mut self) {
        self.h.reset();
    }

    pub fn stats(&self) -> LatencyStats {
        if self.h.is_empty() {
            return LatencyStats::default();
        }
        LatencyStats {
            min: self.h.min(),
            mean: self.h.mean(),
            stddev: self.h.stdev(),
            p50: self.h.value_at_quantile(0.50),
            p90: self.h.value_at_quantile(0.90),
            p99: self.h.value_at_quantile(0.99),
            p999: self.h.value_at_quantile(0.999),
            p9999: self.h.value_at_quantile(0.9999),
            max: self.h.max(),
            count: self.h.len(),
        }
    }

    /// (percentile, ns) points for a percentile plot, log-spaced towards the tail.
    pub fn percentile_curve(&self) -> Vec<(f64, u64)> {
        if self.h.is_empty() {
            return Vec::new();
        }
        const P: [f64; 17] = [
            1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9,
            99.99, 100.0,
        ];
        P.iter()
            .map(|p| (*p, self.h.value_at_quantile(p / 100.0)))
            .collect()
    }

    /// HDR V2 serialization, base64 (lossless; merge across runs and hosts is exact).
    pub fn to_base64(&self) -> String {
        let mut buf = Vec::new();
        V2Serializer::new()
            .serialize(&self.h, &mut buf)
            .expect("serializing to memory cannot fail");
        base64_encode(&buf)
    }

    pub fn from_base64(s: &str) -> Option<Self> {
        let bytes = base64_decode(s)?;
        let h: Histogram<u64> = Deserializer::new()
            .deserialize(&mut std::io::Cursor::new(bytes))
            .ok()?;
        Some(LatencyHistogram { h })
    }
}

impl std::ops::AddAssign<&LatencyHistogram> for LatencyHistogram {
    fn add_assign(&mut self, other: &LatencyHistogram) {
        self.h.add(&other.h).expect("histograms share bounds");
    }
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn base64_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = ((b[0] as u32) << 16) | ((b[1] as u32) << 8) | b[2] as u32;
        out.push(B64[(n >> 18) as usize & 63] as char);
        out.push(B64[(n >> 12) as usize & 63] as char);
        out.push(if chunk.len() > 1 {
            B64[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        out.push(if chunk.len() > 2 {
            B64[n as usize & 63] as char
        } else {
            '='
        });
    }
    out
}

fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let val = |c: u8| B64.iter().position(|&x| x == c).map(|p| p as u32);
    let bytes: Vec<u8> = s.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    for q in bytes.chunks(4) {
        let mut n = 0u32;
        let mut pad = 0;
        for &c in q {
            n <<= 6;
            if c == b'=' {
                pad += 1;
            } else {
                n |= val(c)?;
            }
        }
        out.push((n >> 16) as u8);
        if pad < 2 {
            out.push((n >> 8) as u8);
        }
        if pad < 1 {
            out.push(n as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_equals_single_histogram() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        let mut all = LatencyHistogram::new();
        for i in 1..10_000u64 {
            let v = i * 37 % 100_000 + 1000;
            if i % 2 == 0 {
                a.record(v)
            } else {
                b.record(v)
            }
            all.record(v);
        }
        a += &b;
        assert_eq!(a.stats(), all.stats());
    }

    #[test]
    fn base64_roundtrip() {
        let mut a = LatencyHistogram::new();
        for v in [1_000u64, 2_000, 5_000_000, 77] {
            a.record(v);
        }
        let s = a.to_base64();
        let b = LatencyHistogram::from_base64(&s).unwrap();
        assert_eq!(a.stats(), b.stats());
        assert_eq!(
            base64_decode(&base64_encode(b"hello!?")).unwrap(),
            b"hello!?"
        );
    }

    #[test]
    fn three_significant_digits() {
        let mut a = LatencyHistogram::new();
        a.record(123_456);
        let p = a.stats().p50 as f64;
        assert!((p - 123_456.0).abs() / 123_456.0 < 0.001);
    }
}

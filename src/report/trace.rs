//! `iolab trace run` and `replay`'s text report (`render_doc`), and the trace summary section
//! (`iolab trace summary`, `trace record`, `trace replay`): a
//! terminal block and, for HTML/Markdown reports, key figures plus bar charts of request
//! sizes, queue depth and inter-arrival times. Reads only the model.

use crate::model::trace::TraceSummary;
use crate::model::{LatencyStats, ResultDoc, TestResult};
use crate::report::svg::{Bar, bar_chart};
use crate::units::{fmt_mb_per_s, fmt_ns, fmt_size_iec};

fn pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".into()
    } else {
        format!("{:.1} %", part as f64 * 100.0 / whole as f64)
    }
}

/// Depth buckets 1, 2, 3-4, 5-8, ...: (label, ios, time_ns).
fn depth_groups(s: &TraceSummary) -> Vec<(String, u64, u64)> {
    let mut out: Vec<(String, u64, u64)> = Vec::new();
    let mut hi = 1u32;
    let mut lo = 1u32;
    while lo <= s.depth_max.max(1) {
        let (ios, t) = s
            .depths
            .iter()
            .filter(|d| d.depth >= lo && d.depth <= hi)
            .fold((0, 0), |a, d| (a.0 + d.ios, a.1 + d.time_ns));
        let label = if lo == hi {
            lo.to_string()
        } else {
            format!("{lo}-{hi}")
        };
        out.push((label, ios, t));
        lo = hi + 1;
        hi *= 2;
    }
    out
}

/// `n unit` for a power of two (exact: 512 B, 4 KiB, 1 MiB).
fn pow2_size(n: u64) -> String {
    let mut v = n;
    for unit in ["B", "KiB", "MiB", "GiB", "TiB", "PiB"] {
        if v < 1024 {
            return format!("{v} {unit}");
        }
        v /= 1024;
    }
    format!("{v} EiB")
}

/// The label of the request-size bucket whose lower bound is `lo` (a power of two): the
/// sizes from `lo` up to, not including, `2 lo`, as `2-4 B`, `4-8 KiB` or `512 B-1 KiB`.
/// (The bucket was once labelled with its lower bound alone: 3-byte requests showed as "2 B".)
pub fn size_bucket_label(lo: u64) -> String {
    let (a, b) = (pow2_size(lo), pow2_size(lo.saturating_mul(2)));
    match (a.split_once(' '), b.split_once(' ')) {
        (Some((na, ua)), Some((nb, ub))) if ua == ub => format!("{na}-{nb} {ua}"),
        _ => format!("{a}-{b}"),
    }
}

/// Key figures as (name, value) pairs (terminal and report).
pub fn key_figures(s: &TraceSummary) -> Vec<(String, String)> {
    let calls = s.read_calls + s.write_calls;
    let bytes = s.read_bytes + s.write_bytes;
    // Shares of the reads and writes only: the trace's other calls (open, stat, close, ...)
    // are not counted here (a share "of calls" said 33.3 % for 1 read among 12 calls).
    let share = |n: u64, b: u64| {
        format!(
            "{n} {} ({} of reads and writes), {} ({} of bytes)",
            if n == 1 { "call" } else { "calls" },
            pct(n, calls),
            fmt_size_iec(b),
            pct(b, bytes)
        )
    };
    let mut v = vec![
        ("reads".into(), share(s.read_calls, s.read_bytes)),
        ("writes".into(), share(s.write_calls, s.write_bytes)),
        (
            "sequential".into(),
            format!(
                "reads {}, writes {} (starting where the previous I/O on the file ended)",
                pct(s.sequential_reads, s.read_calls),
                pct(s.sequential_writes, s.write_calls)
            ),
        ),
        (
            "queue depth".into(),
            if calls == 0 {
                "- (no reads or writes)".into()
            } else {
                format!(
                    "mean {:.1} while busy, max {} ({} of the I/Os asynchronous{})",
                    s.depth_mean,
                    s.depth_max,
                    pct(s.async_calls, calls),
                    s.async_depth_mean
                        .map(|m| format!(", their mean depth {m:.1}"))
                        .unwrap_or_default()
                )
            },
        ),
        (
            "inter-arrival".into(),
            if s.interarrival_ns.count == 0 {
                // No gap to measure (fewer than two I/Os): not "0 ns".
                "- (fewer than two I/Os)".into()
            } else {
                format!(
                    "p50 {}, p90 {}, p99 {}, max {}",
                    fmt_ns(s.interarrival_ns.p50 as f64),
                    fmt_ns(s.interarrival_ns.p90 as f64),
                    fmt_ns(s.interarrival_ns.p99 as f64),
                    fmt_ns(s.interarrival_ns.max as f64)
                )
            },
        ),
        (
            "working set".into(),
            format!(
                "{} in {} ({} bytes)",
                fmt_size_iec(s.working_set_bytes),
                count_of(s.files, "file"),
                s.working_set_bytes
            ),
        ),
    ];
    let fsync = match (s.fsyncs_per_s, s.write_bytes_per_fsync) {
        (Some(r), Some(b)) => format!(
            "{} ({r:.1}/s, {} written per fsync)",
            s.fsyncs,
            fmt_size_iec(b as u64)
        ),
        _ => s.fsyncs.to_string(),
    };
    v.push(("fsyncs".into(), fsync));
    v
}

/// "1 call", "2 calls".
fn count_of(n: u64, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// The I/Os in flight when each I/O started, terminal and report alike: the report's chart
/// said `queue depth`, the name of the key figure beside it (mean while busy, max), where the
/// terminal said `depth at issue`.
const DEPTH_AT_ISSUE: &str = "depth at issue";

/// The terminal block.
pub fn render_summary(s: &TraceSummary) -> String {
    let mut out = String::from("trace summary\n");
    for (k, v) in key_figures(s) {
        out.push_str(&format!("  {k:<14} {v}\n"));
    }
    out.push_str("  request sizes (a-b: from a up to, not including, b):");
    if s.sizes.is_empty() {
        out.push_str("  -");
    }
    for b in &s.sizes {
        out.push_str(&format!(
            "  {}: {} r / {} w",
            size_bucket_label(b.size_bytes),
            b.reads,
            b.writes
        ));
    }
    out.push_str(&format!("\n  {DEPTH_AT_ISSUE} (I/Os):"));
    if s.depths.iter().all(|d| d.ios == 0) {
        out.push_str("  -");
    }
    for (label, ios, _) in depth_groups(s) {
        if ios > 0 {
            out.push_str(&format!("  {label}: {ios}"));
        }
    }
    out.push('\n');
    if !s.hottest.is_empty() {
        out.push_str("  hottest files:");
        for h in s.hottest.iter().take(5) {
            out.push_str(&format!(
                "  {} ({}, {})",
                crate::os::text::terminal(&h.path),
                fmt_size_iec(h.bytes),
                count_of(h.calls, "call")
            ));
        }
        out.push('\n');
    }
    out
}

/// The three histograms as inline SVG with their captions (HTML reports).
pub fn charts(name: &str, s: &TraceSummary) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let count = |v: f64| format!("{v:.0}");
    // A histogram with at least one bar, under the test's name.
    let mut chart = |title: &str, counted: &str, bars: Vec<Bar>, caption: &str| {
        if !bars.is_empty() {
            out.push((
                bar_chart(&format!("{name}: {title}"), counted, &bars, &count),
                caption.to_string(),
            ));
        }
    };
    let sizes: Vec<Bar> = s
        .sizes
        .iter()
        .map(|b| Bar {
            label: size_bucket_label(b.size_bytes),
            value: (b.reads + b.writes) as f64,
            ci: None,
            text: format!("{} r / {} w", b.reads, b.writes),
        })
        .collect();
    chart(
        "request sizes",
        "I/Os",
        sizes,
        "Reads and writes per request size (power-of-two buckets: a-b holds the sizes from a up to, not including, b)",
    );
    let depth: Vec<Bar> = depth_groups(s)
        .into_iter()
        .filter(|g| g.1 > 0)
        .map(|(label, ios, t)| Bar {
            label: format!("depth {label}"),
            value: ios as f64,
            ci: None,
            text: format!("{ios} I/Os, {}", fmt_ns(t as f64)),
        })
        .collect();
    chart(
        DEPTH_AT_ISSUE,
        "I/Os",
        depth,
        "In-flight reads and writes seen by each I/O when it started (itself included), and the time spent at that depth",
    );
    let gaps: Vec<Bar> = s
        .interarrival_ns
        .buckets
        .iter()
        .map(|b| Bar {
            label: if b.lower_ns == 0 {
                "same tick".into()
            } else {
                format!(">= {}", fmt_ns(b.lower_ns as f64))
            },
            value: b.count as f64,
            ci: None,
            text: b.count.to_string(),
        })
        .collect();
    chart(
        "inter-arrival times",
        "gaps",
        gaps,
        "Time between consecutive I/O starts (all threads), power-of-two buckets",
    );
    out
}

/// A trace test's summaries: the recording's and the replay's (the first run that has one).
pub fn test_summaries(t: &TestResult) -> Vec<(&'static str, &TraceSummary)> {
    let mut v = Vec::new();
    if let Some(s) = t.trace.as_ref().and_then(|d| d.recording.as_ref()) {
        v.push(("what the recording says", s));
    }
    if let Some(s) = t
        .runs
        .iter()
        .find_map(|r| r.trace.as_ref().and_then(|d| d.summary.as_ref()))
    {
        v.push(("what the replay issued", s));
    }
    v
}

/// The text report of `run` and `replay`: every test, then the warnings.
pub fn render_doc(doc: &ResultDoc) -> String {
    let mut out = String::new();
    for t in &doc.tests {
        out.push_str(&render_test(t));
    }
    out.push_str(&crate::report::table::render_warnings(doc));
    out
}

/// The run whose bandwidth is the median of the test's runs (the one shown in detail).
fn median_run(t: &TestResult) -> Option<&crate::model::RunResult> {
    let mut runs: Vec<_> = t.runs.iter().collect();
    runs.sort_by(|a, b| {
        a.bw_bytes_per_s
            .partial_cmp(&b.bw_bytes_per_s)
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    runs.get(runs.len() / 2).copied()
}

/// Which run the lines under the total are: with two runs of 464.66 and 1127.63 MB/s the
/// total said 796.15 MB/s (their median) and the one stream's row 1130.79, unexplained.
fn run_shown(t: &TestResult, r: &crate::model::RunResult) -> String {
    let bw = fmt_mb_per_s(r.bw_bytes_per_s.unwrap_or(0.0));
    if t.runs.len().is_multiple_of(2) {
        format!(
            "  below: the median run by MB/s, the faster of the middle two ({bw} MB/s; the total is the median between them)\n"
        )
    } else {
        format!("  below: the median run by MB/s ({bw} MB/s)\n")
    }
}

/// The columns of a trace test's per-operation table, in the terminal and the reports.
const OP_HEADER: [&str; 7] = ["op", "count", "bytes", "p50", "p99", "p99.9", "max"];

/// An operation's latency cells under [`OP_HEADER`]: p50, p99, p99.9 and max.
fn op_latencies(l: &LatencyStats) -> [String; 4] {
    [l.p50, l.p99, l.p999, l.max].map(|ns| fmt_ns(ns as f64))
}

/// The report's per-operation table of a trace test (its median run by MB/s, the one the
/// terminal shows): count, bytes and latency percentiles per operation.
pub fn op_table(t: &TestResult) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let d = median_run(t)?.trace.as_ref()?;
    if d.ops.is_empty() {
        return None;
    }
    let header = OP_HEADER.map(String::from).to_vec();
    let rows = d
        .ops
        .iter()
        .map(|(name, o)| {
            vec![
                name.clone(),
                crate::units::fmt_thousands(o.count as f64),
                fmt_size_iec(o.bytes),
            ]
            .into_iter()
            .chain(op_latencies(&o.lat_ns))
            .collect()
        })
        .collect();
    Some((header, rows))
}

/// Text report of one trace test.
pub fn render_test(t: &TestResult) -> String {
    let mut s = String::new();
    let scale = t.trace.as_ref().map(|d| d.scale).unwrap_or(1.0);
    s.push_str(&format!(
        "{}  ({}",
        crate::os::text::terminal(&t.name),
        crate::units::count(t.runs.len() as u64, "run", "runs")
    ));
    if scale != 1.0 {
        s.push_str(&format!(", scale {scale}"));
    }
    s.push_str(")\n");
    if let (Some(bw), Some(ops)) = (t.summary.get("bw_bytes_per_s"), t.summary.get("iops")) {
        s.push_str(&format!(
            "  total: {} MB/s, {} ops/s (medians; MB/s min {}, max {}, CV {:.1} %)\n",
            fmt_mb_per_s(bw.median),
            crate::units::fmt_thousands(ops.median),
            fmt_mb_per_s(bw.min),
            fmt_mb_per_s(bw.max),
            bw.cv * 100.0
        ));
    }
    let Some(r) = median_run(t) else {
        return s;
    };
    let Some(d) = &r.trace else {
        return s;
    };
    if t.runs.len() > 1 {
        s.push_str(&run_shown(t, r));
    }
    if let Some(rp) = &d.replay {
        s.push_str(&format!(
            "  replay ({}): {} vs recorded {} (x{:.2}), {} on {}, {} read, {} written, {}\n",
            rp.timing,
            fmt_ns(rp.replay_ns as f64),
            fmt_ns(rp.recorded_ns as f64),
            rp.speedup,
            crate::units::count(rp.calls, "call", "calls"),
            crate::units::count(rp.threads as u64, "thread", "threads"),
            fmt_size_iec(rp.read_bytes),
            fmt_size_iec(rp.write_bytes),
            crate::units::count(rp.errors, "error", "errors")
        ));
        if let Some(e) = &rp.first_error {
            s.push_str(&format!("  first replay error: {e}\n"));
        }
    }
    if !d.streams.is_empty() {
        s.push_str(&format!(
            "  {:<16} {:>4} {:>10} {:>10} {:>10} {:>10}  {}\n",
            "stream", "copy", "MB/s", "ops", "read", "written", "pacing"
        ));
        for st in &d.streams {
            let pacing = match (
                st.rate_bytes_per_s,
                st.deadlines,
                st.missed_deadlines,
                st.rate_held,
            ) {
                (Some(rate), Some(dl), Some(m), Some(h)) => format!(
                    "{} MB/s: {m} of {dl} late ({})",
                    fmt_mb_per_s(rate),
                    if h { "held" } else { "NOT held" }
                ),
                _ => "as fast as possible".into(),
            };
            s.push_str(&format!(
                "  {:<16} {:>4} {:>10} {:>10} {:>10} {:>10}  {pacing}\n",
                st.name,
                st.copy,
                fmt_mb_per_s(st.bw_bytes_per_s),
                st.ops,
                fmt_size_iec(st.read_bytes),
                fmt_size_iec(st.write_bytes)
            ));
        }
    }
    let [op, count, bytes, p50, p99, p999, max] = OP_HEADER;
    s.push_str(&format!(
        "  {op:<10} {count:>9} {bytes:>10} {p50:>10} {p99:>10} {p999:>10} {max:>10}\n"
    ));
    for (name, o) in &d.ops {
        let [p50, p99, p999, max] = op_latencies(&o.lat_ns);
        s.push_str(&format!(
            "  {:<10} {:>9} {:>10} {p50:>10} {p99:>10} {p999:>10} {max:>10}\n",
            name,
            o.count,
            fmt_size_iec(o.bytes),
        ));
    }
    if let Some(ns) = r.fsync_ns {
        s.push_str(&format!(
            "  final write-back (syncfs, in the total): {}\n",
            fmt_ns(ns as f64)
        ));
    }
    if let Some(rec) = t.trace.as_ref().and_then(|d| d.recording.as_ref()) {
        let by = t
            .trace
            .as_ref()
            .and_then(|d| d.recorder.as_deref())
            .unwrap_or("strace");
        s.push_str(&format!("  the recording (recorder: {by}):\n"));
        for line in crate::report::trace::render_summary(rec).lines().skip(1) {
            s.push_str(&format!("  {line}\n"));
        }
    }
    if let Some(sum) = &d.summary {
        s.push_str("  what this replay issued:\n");
        for line in crate::report::trace::render_summary(sum).lines().skip(1) {
            s.push_str(&format!("  {line}\n"));
        }
    }
    if let Some(dc) = &r.device {
        s.push_str(&format!(
            "  device {}: {} read, {} written\n",
            dc.device,
            fmt_size_iec(dc.read_bytes),
            fmt_size_iec(dc.write_bytes)
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::trace::summary::summarize;
    use crate::workload::trace::tracefile::{Call, CallOp};

    fn call(t_ns: u64, op: CallOp, len: Option<u64>) -> Call {
        Call {
            t_ns,
            tid: 1,
            op,
            path: "f".into(),
            to: None,
            off: len.map(|_| 0),
            len,
            flags: None,
            dur_ns: 1000,
            ring: None,
        }
    }

    #[test]
    fn size_buckets_are_labelled_as_ranges() {
        for (bytes, want) in [
            (1, "1-2 B"),
            (2, "2-4 B"),
            (512, "512 B-1 KiB"),
            (4096, "4-8 KiB"),
            (1 << 20, "1-2 MiB"),
        ] {
            assert_eq!(size_bucket_label(bytes), want, "{bytes}");
        }
    }

    /// Regression: 1 read and 2 writes among 12 calls said "33.3 % of calls" (the share is
    /// of the reads and writes), and 3-byte requests were labelled "2 B".
    #[test]
    fn shares_and_sizes_say_what_they_count() {
        let mut calls: Vec<Call> = (0..9).map(|i| call(i * 10, CallOp::Stat, None)).collect();
        calls.push(call(100, CallOp::Read, Some(3)));
        calls.push(call(200, CallOp::Write, Some(3)));
        calls.push(call(300, CallOp::Write, Some(10)));
        let s = summarize(&calls);
        assert_eq!(s.sizes[0].size_bytes, 2, "the JSON keeps the lower bound");
        let text = render_summary(&s);
        assert!(
            text.contains(
                "reads          1 call (33.3 % of reads and writes), 3 B (18.8 % of bytes)"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "request sizes (a-b: from a up to, not including, b):  2-4 B: 1 r / 1 w  8-16 B: 0 r / 1 w\n"
            ),
            "{text}"
        );
    }

    /// With several runs the lines under the total say which run they are: two runs of
    /// 464.66 and 1127.63 MB/s gave "total: 796.15 MB/s" and a stream row of 1130.79 MB/s
    /// with nothing to tell them apart.
    #[test]
    fn the_run_shown_in_detail_is_named() {
        use crate::model::RunResult;
        use crate::model::trace::TraceRunDetail;
        let run = |n: u32, bw: f64| RunResult {
            run: n,
            bw_bytes_per_s: Some(bw),
            trace: Some(TraceRunDetail::default()),
            ..Default::default()
        };
        let mut t = TestResult {
            name: "dir-copy-to".into(),
            runs: vec![run(1, 1127.63e6), run(2, 464.66e6)],
            ..Default::default()
        };
        let text = render_test(&t);
        assert!(
            text.contains(
                "  below: the median run by MB/s, the faster of the middle two (1127.63 MB/s;"
            ),
            "{text}"
        );
        t.runs.push(run(3, 800e6));
        let text = render_test(&t);
        assert!(
            text.contains("  below: the median run by MB/s (800.00 MB/s)\n"),
            "{text}"
        );
        t.runs.truncate(1);
        assert!(!render_test(&t).contains("below:"));
    }

    /// The HTML report's histograms: each under the test's name with its caption, none for
    /// a trace without reads and writes.
    #[test]
    fn the_charts_are_named_and_captioned() {
        let calls: Vec<Call> = (0..4)
            .map(|i| call(i * 1000, CallOp::Read, Some(4096)))
            .collect();
        let charts = charts("t", &summarize(&calls));
        let got: Vec<(bool, &str)> = charts
            .iter()
            .map(|(svg, caption)| (svg.contains("<title>t: "), &caption[..12]))
            .collect();
        assert_eq!(
            got,
            [
                (true, "Reads and wr"),
                (true, "In-flight re"),
                (true, "Time between")
            ]
        );
        assert!(super::charts("t", &summarize(&[])).is_empty());
    }

    /// Regression: one file with one call read "in 1 files" and "(4.0 KiB, 1 calls)".
    #[test]
    fn one_file_one_call_is_singular() {
        let text = render_summary(&summarize(&[call(0, CallOp::Read, Some(4096))]));
        assert!(text.contains("4.0 KiB in 1 file (4096 bytes)"), "{text}");
        assert!(text.contains("f (4.0 KiB, 1 call)\n"), "{text}");
    }

    /// The depths at issue were `depth at issue` in the terminal and a chart `queue depth`
    /// in the report, the name of another figure (the mean while busy).
    #[test]
    fn the_depth_at_issue_has_one_name() {
        let s = summarize(&[
            call(0, CallOp::Read, Some(4096)),
            call(1_000, CallOp::Read, Some(4096)),
        ]);
        assert!(render_summary(&s).contains("depth at issue (I/Os):  1: 2"));
        let charts = charts("t", &s);
        assert!(
            charts
                .iter()
                .any(|(svg, _)| svg.contains("t: depth at issue")),
            "{charts:?}"
        );
        assert!(!charts.iter().any(|(svg, _)| svg.contains("t: queue depth")));
    }

    /// Regression: a trace without reads and writes printed "inter-arrival p50 0 ns".
    #[test]
    fn an_empty_trace_shows_dashes() {
        let text = render_summary(&summarize(&[]));
        assert!(
            text.contains("inter-arrival  - (fewer than two I/Os)\n"),
            "{text}"
        );
        assert!(
            text.contains("queue depth    - (no reads or writes)\n"),
            "{text}"
        );
        assert!(text.contains("b):  -\n"), "{text}");
        assert!(text.contains("depth at issue (I/Os):  -\n"), "{text}");
        assert!(!text.contains("0 ns"), "{text}");
        // One I/O: no gap either.
        let one = summarize(&[call(0, CallOp::Read, Some(4096))]);
        assert!(render_summary(&one).contains("inter-arrival  - ("));
    }
}

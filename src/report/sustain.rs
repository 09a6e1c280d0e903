//! `iolab sustain` in every format: the terminal table (phases of each pass, the cache,
//! the recovery lines), the report's blocks and the bandwidth chart with the cliffs marked.

use comfy_table::{Cell, ContentArrangement};

use crate::model::sustain::{SustainDetail, SustainPause, SustainPhase};
use crate::model::{ResultDoc, TestResult};
use crate::report::svg::{Axis, Mark, Scale, Series, line_chart};
use crate::report::table::{new_table, right};
use crate::units::{fmt_mb_per_s, fmt_size_iec};
use crate::workload::sustain::{pause_list, secs, speeds_without_cliff, waited_for_cpu};

/// `1.0 GiB (1.07 GB)`.
fn size(bytes: f64) -> String {
    format!(
        "{} ({:.2} GB)",
        fmt_size_iec(bytes.max(0.0) as u64),
        bytes / 1e9
    )
}

/// The cells of one phase: from, to, written, MB/s, spread (± stddev and CV).
fn phase_cells(p: &SustainPhase, interval_ms: u64) -> [String; 5] {
    let cv = if p.mean_bw_bytes_per_s > 0.0 {
        100.0 * p.stddev_bw_bytes_per_s / p.mean_bw_bytes_per_s
    } else {
        0.0
    };
    [
        secs(p.start_ms as f64, interval_ms),
        secs(p.end_ms as f64, interval_ms),
        fmt_size_iec(p.bytes),
        fmt_mb_per_s(p.mean_bw_bytes_per_s),
        // One interval has no spread: its 0 would read as a perfectly steady phase. The last
        // phase runs on to the end of the pass (its partial interval is no point of the
        // series): whole intervals only.
        if p.end_ms.saturating_sub(p.start_ms) / interval_ms.max(1) < 2 {
            "- (one interval)".to_string()
        } else {
            format!("±{} ({cv:.1} %)", fmt_mb_per_s(p.stddev_bw_bytes_per_s))
        },
    ]
}

const PHASE_HEADER: [&str; 7] = [
    "Pass",
    "Phase",
    "From",
    "To",
    "Written",
    "MB/s",
    "Spread (± MB/s)",
];

/// Under a phase table, terminal and report alike (the report's table had none: its
/// `Spread (± MB/s)` was not said to be a standard deviation).
pub const PHASE_LEGEND: &str = "MB/s = 10^6 bytes/s; spread = standard deviation of the per-interval speed within the phase (and its share of the mean).";

/// What a pass found, in sentences: its cliffs (the cache) or their absence, and for a
/// recovery pass how much of the cache came back.
/// `interrupted`: the user stopped the pass (it wrote what it had time to).
pub fn findings(name: &str, d: &SustainDetail, interrupted: bool) -> Vec<String> {
    let mut out = findings_of_pass(name, d, interrupted);
    out.extend(slow_start_note(name, d));
    out.extend(settled_note(name, d));
    out.extend(pause_note(name, d));
    out
}

/// The pauses of a pass's speed (`SustainDetail::pauses`): when, how slow, and whose they
/// were. Folded into a phase as blips, a drive's pause (garbage collection, a flush) was
/// seen nowhere; and a writer stalled by other programs was taken for the cliff.
fn pause_note(name: &str, d: &SustainDetail) -> Option<String> {
    if d.pauses.is_empty() {
        return None;
    }
    let all: Vec<&SustainPause> = d.pauses.iter().collect();
    let slowest = all
        .iter()
        .map(|p| p.bw_bytes_per_s)
        .fold(f64::INFINITY, f64::min);
    let machine = all.iter().filter(|p| waited_for_cpu(p)).count();
    let known = all.iter().any(|p| p.cpu_wait_share.is_some());
    let device = if d.memory_backed.is_some() {
        "the machine's (memory reclaim)"
    } else {
        "the drive's (garbage collection, a flush)"
    };
    let whose = if machine == all.len() {
        "the CPUs were held by other work then (the job thread, or the kernel's threads doing its I/O, waited for one): the machine's, not the drive's".to_string()
    } else if machine > 0 {
        format!(
            "in {machine} the CPUs were held by other work (the machine's); the others are {device}"
        )
    } else if known {
        format!("nothing was kept from a CPU then: {device}")
    } else {
        format!("{device}, or the machine's (this kernel does not tell the wait for a CPU)")
    };
    Some(format!(
        "{name}: the speed paused ({}: down to {} MB/s), then came back: {whose}; no cliff, and no part of a phase's speed (the bytes are)",
        pause_list(&all, d.interval_ms),
        fmt_mb_per_s(slowest),
    ))
}

/// When a pass with a cliff started slower than the phase after it, what its first phase
/// is: a slow start, no part of the write cache (the cache is the fast phase the cliff
/// ended, and its size that phase's bytes).
fn slow_start_note(name: &str, d: &SustainDetail) -> Option<String> {
    let (first, next) = (d.phases.first()?, d.phases.get(1)?);
    let rose = first.mean_bw_bytes_per_s < next.mean_bw_bytes_per_s;
    (rose && !d.cliffs.is_empty()).then(|| {
        let (what, why) = match d.memory_backed {
            Some(_) => ("the fast phase", "the machine busier at its start"),
            None => (
                "the write cache",
                "a drive waking up, or still busy with earlier writes",
            ),
        };
        format!(
            "{name}: phase 1 is a slow start ({} MB/s for {}, {}; {why}), no part of {what}",
            fmt_mb_per_s(first.mean_bw_bytes_per_s),
            secs((first.end_ms - first.start_ms) as f64, d.interval_ms),
            fmt_size_iec(first.bytes),
        )
    })
}

/// When a short rise ended the pass, the speed it settled at and why the last row is not it.
fn settled_note(name: &str, d: &SustainDetail) -> Option<String> {
    let k = d.settled_phase?;
    let last = d.phases.len().checked_sub(1)?;
    let p = d.phases.get(k)?;
    (k < last).then(|| {
        let rows = if k + 1 == last {
            format!("phase {}", last + 1)
        } else {
            format!("phases {}-{}", k + 2, last + 1)
        };
        format!(
            "{name}: settled at {} MB/s (phase {}); {rows} rose as the pass ended, {}for fewer than {} intervals: a burst, not a level it settled at",
            fmt_mb_per_s(p.mean_bw_bytes_per_s),
            k + 1,
            if k + 1 == last { "" } else { "each " },
            crate::workload::sustain::SETTLED_MIN_POINTS,
        )
    })
}

fn findings_of_pass(name: &str, d: &SustainDetail, interrupted: bool) -> Vec<String> {
    let mut out = Vec::new();
    if d.pass == "recovery" {
        let share = d
            .recovered_share
            .map(|s| format!("{:.0} %", 100.0 * s))
            .unwrap_or_else(|| "-".into());
        let bytes = d.recovered_bytes.unwrap_or(0.0);
        // RAM has no cache to come back: the first pass's fast phase is what is compared.
        let (cache, first, cliff) = if d.memory_backed.is_some() {
            ("fast phase", "first pass's fast phase", "drop")
        } else {
            ("cache", "first cache", "cliff")
        };
        out.push(if d.recovered_at_least {
            format!(
                "{name}: still at the fast speed when the pass ended: at least {} ({share} of the {first}) came back",
                size(bytes)
            )
        } else if bytes <= 0.0 {
            format!("{name}: slow from the start: the {cache} had not come back (0 % of the {first})")
        } else {
            format!(
                "{name}: {} at the fast speed before the {cliff}: {share} of the {first} came back",
                size(bytes)
            )
        });
        return out;
    }
    match d.cliffs.first() {
        None => match d.phases.len() {
            1 => out.push(format!(
                "{name}: no cliff in {} ({} throughout)",
                fmt_size_iec(d.bytes_written),
                speeds_without_cliff(d)
            )),
            // It sped up: "at the first phase's speed throughout" it was not.
            _ if !d.phases.is_empty() => out.push(format!(
                "{name}: no cliff in {} ({}: it sped up and never dropped)",
                fmt_size_iec(d.bytes_written),
                speeds_without_cliff(d)
            )),
            // Stopped before one interval: it needs no more bytes asked, only to run on.
            _ if interrupted => out.push(format!(
                "{name}: interrupted after {} written, less than one interval ({} ms): no speed series; run it again and let the pass finish",
                fmt_size_iec(d.bytes_written),
                d.interval_ms
            )),
            // Too short for one point of the series: nothing to find a cliff in.
            _ => out.push(format!(
                "{name}: {} written in less than one interval ({} ms): no speed series; write more (--size) or use a shorter --interval",
                fmt_size_iec(d.bytes_written),
                d.interval_ms
            )),
        },
        // RAM has no write cache: the same figures, named for what they are.
        Some(c) => {
            let pct = 100.0 * c.after_bw_bytes_per_s / c.before_bw_bytes_per_s.max(1e-9);
            // RAM has no write cache: its drop is the machine's, not a cache filling up.
            let (first, word) = match d.memory_backed.as_deref() {
                Some(ram) => (
                    format!(
                        "{name}: fast phase {}: {} MB/s until the drop at {}, then {} MB/s ({pct:.0} % of the fast speed); no write cache: {ram}, so the drop is the machine's (memory reclaim, other work on the CPUs), not a drive's cache filling up",
                        size(c.fast_phase_bytes),
                        fmt_mb_per_s(c.before_bw_bytes_per_s),
                        secs(c.at_ms, d.interval_ms),
                        fmt_mb_per_s(c.after_bw_bytes_per_s),
                    ),
                    "drop",
                ),
                None => (
                    format!(
                        "{name}: write cache {}: {} MB/s until the cliff at {}, then {} MB/s ({pct:.0} % of the cache speed)",
                        size(c.fast_phase_bytes),
                        fmt_mb_per_s(c.before_bw_bytes_per_s),
                        secs(c.at_ms, d.interval_ms),
                        fmt_mb_per_s(c.after_bw_bytes_per_s),
                    ),
                    "cliff",
                ),
            };
            out.push(first);
            for (i, c) in d.cliffs.iter().enumerate().skip(1) {
                out.push(format!(
                    "{name}: {word} {} after {} written, at {}: {} MB/s -> {} MB/s",
                    i + 1,
                    size(c.bytes_before),
                    secs(c.at_ms, d.interval_ms),
                    fmt_mb_per_s(c.before_bw_bytes_per_s),
                    fmt_mb_per_s(c.after_bw_bytes_per_s)
                ));
            }
        }
    }
    out
}

fn sustain_tests(doc: &ResultDoc) -> Vec<(&TestResult, &SustainDetail)> {
    doc.tests
        .iter()
        .filter_map(|t| t.sustain.as_ref().map(|d| (t, d)))
        .collect()
}

/// The terminal output of `iolab sustain`.
pub fn render_table(doc: &ResultDoc) -> String {
    let mut out = String::new();
    let tests = sustain_tests(doc);
    if let Some((t, d)) = tests.first() {
        let s = t.settings.as_ref();
        out.push_str(&format!(
            "iolab {} sustain on {}: {} {}, O_DIRECT {}, span {}, {} ms intervals\n",
            doc.tool.version,
            crate::os::text::terminal(&doc.environment.target_path),
            s.map(|s| s.rw.as_str()).unwrap_or("write"),
            s.map(|s| format!(
                "{} Q{}",
                crate::units::fmt_size_exact(s.bs_bytes),
                s.iodepth
            ))
            .unwrap_or_default(),
            if s.is_some_and(|s| s.direct) {
                "on"
            } else {
                "off"
            },
            s.map(|s| fmt_size_iec(s.size_bytes)).unwrap_or_default(),
            d.interval_ms
        ));
        let mut table = new_table(ContentArrangement::Disabled);
        table.set_header(PHASE_HEADER);
        for (t, d) in &tests {
            for (i, p) in d.phases.iter().enumerate() {
                let mut row = vec![
                    Cell::new(if i == 0 { t.name.as_str() } else { "" }),
                    right(i + 1),
                ];
                row.extend(phase_cells(p, d.interval_ms).into_iter().map(right));
                table.add_row(row);
            }
        }
        // A pass too short for one interval has no phase: no table of headers only (the
        // finding line says why), nor its legend.
        let any_phase = tests.iter().any(|(_, d)| !d.phases.is_empty());
        if any_phase {
            out.push_str(&table.to_string());
            out.push('\n');
        }
        for (t, d) in &tests {
            for line in findings(&t.name, d, t.ended_early() == Some("interrupted")) {
                out.push_str(&line);
                out.push('\n');
            }
        }
        if any_phase {
            out.push_str(PHASE_LEGEND);
            out.push('\n');
        }
    }
    out.push_str(&crate::report::table::render_warnings(doc));
    out
}

/// The report's phase table of one pass: header and rows (phase, from, to, written, MB/s,
/// spread).
pub fn phase_table(d: &SustainDetail) -> (Vec<String>, Vec<Vec<String>>) {
    let header = PHASE_HEADER[1..].iter().map(|s| s.to_string()).collect();
    let rows = d
        .phases
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut row = vec![(i + 1).to_string()];
            row.extend(phase_cells(p, d.interval_ms));
            row
        })
        .collect();
    (header, rows)
}

/// MB/s per interval over time, each phase's mean as a level, the cliffs marked.
pub fn bandwidth_chart(title: &str, t: &TestResult) -> Option<String> {
    let d = t.sustain.as_ref()?;
    let run = t.runs.first()?;
    if run.intervals.is_empty() {
        return None;
    }
    let mut series = vec![Series {
        name: "MB/s per interval".into(),
        points: super::charts::plotted(run)
            .iter()
            .map(|p| (p.t_ms as f64 / 1e3, p.bw_bytes_per_s / 1e6))
            .collect(),
        labels: Vec::new(),
    }];
    for (i, p) in d.phases.iter().enumerate() {
        series.push(Series {
            name: format!(
                "phase {}: {} MB/s",
                i + 1,
                fmt_mb_per_s(p.mean_bw_bytes_per_s)
            ),
            points: vec![
                (p.start_ms as f64 / 1e3, p.mean_bw_bytes_per_s / 1e6),
                (p.end_ms as f64 / 1e3, p.mean_bw_bytes_per_s / 1e6),
            ],
            labels: Vec::new(),
        });
    }
    let marks: Vec<Mark> = d
        .cliffs
        .iter()
        .map(|c| Mark::VLine {
            x: c.at_ms / 1e3,
            label: format!(
                "cliff after {}",
                fmt_size_iec(c.bytes_before.max(0.0) as u64)
            ),
        })
        .collect();
    let fmt_s = |v: f64| format!("{v}");
    let fmt_mb = |v: f64| format!("{v}");
    Some(line_chart(
        title,
        &Axis {
            label: "time since the pass started (s)",
            scale: Scale::Linear,
            fmt: &fmt_s,
        },
        &Axis {
            label: "MB/s",
            scale: Scale::Linear,
            fmt: &fmt_mb,
        },
        &series,
        &marks,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::IntervalPoint;
    use crate::model::sustain::SustainCliff;

    /// A phase of `bw` bytes/s from `from` to `to` ms.
    fn phase(from: u64, to: u64, bw: f64) -> SustainPhase {
        SustainPhase {
            start_ms: from,
            end_ms: to,
            mean_bw_bytes_per_s: bw,
            ..Default::default()
        }
    }

    /// A first pass at 100-ms intervals: its phases, its one cliff, its settled phase.
    fn first_pass(phases: Vec<SustainPhase>, cliff: SustainCliff, settled: usize) -> SustainDetail {
        SustainDetail {
            pass: "first".into(),
            interval_ms: 100,
            phases,
            cliffs: vec![cliff],
            settled_phase: Some(settled),
            ..Default::default()
        }
    }

    /// The table of a sustain document of this one pass.
    fn table_of(pass: TestResult) -> String {
        let mut doc = ResultDoc::new("sustain", Vec::new(), Default::default());
        doc.tests.push(pass);
        render_table(&doc)
    }

    /// A pass that started slow, rose, then fell: phase 1 is named a slow start, no part
    /// of the cache (the cache line is the fast phase's); without a cliff, the pass only
    /// sped up (the no-cliff line says so) and no note is added.
    #[test]
    fn a_slow_start_is_named_as_one() {
        let mut d = first_pass(
            vec![
                phase(0, 800, 98.82e6),
                phase(800, 1100, 397.0e6),
                phase(1100, 4100, 99.0e6),
            ],
            SustainCliff {
                fast_phase_bytes: (114 << 20) as f64,
                before_bw_bytes_per_s: 397.0e6,
                after_bw_bytes_per_s: 99.0e6,
                at_ms: 1100.0,
                ..Default::default()
            },
            2,
        );
        d.phases[0].bytes = 79 << 20;
        let lines = findings("first pass", &d, false);
        assert_eq!(
            lines,
            [
                "first pass: write cache 114.0 MiB (0.12 GB): 397.00 MB/s until the cliff at 1.1 s, then 99.00 MB/s (25 % of the cache speed)",
                "first pass: phase 1 is a slow start (98.82 MB/s for 0.8 s, 79.0 MiB; a drive waking up, or still busy with earlier writes), no part of the write cache",
            ]
        );
        d.cliffs.clear();
        assert!(
            findings("first pass", &d, false)
                .iter()
                .all(|l| !l.contains("slow start"))
        );
    }

    /// A burst that ended the pass is a phase of the table, but not the settled speed: the
    /// line under the table says which phase is, and why the last row is not.
    #[test]
    fn a_burst_that_ended_the_pass_is_said_not_to_be_the_level() {
        let mut d = first_pass(
            vec![
                phase(0, 3000, 6405.85e6),
                phase(3000, 9000, 461.0e6),
                phase(9000, 9700, 2000.0e6),
            ],
            SustainCliff {
                fast_phase_bytes: 19e9,
                before_bw_bytes_per_s: 6405.85e6,
                after_bw_bytes_per_s: 461.0e6,
                at_ms: 3000.0,
                ..Default::default()
            },
            1,
        );
        let lines = findings("first pass", &d, false);
        assert_eq!(
            lines.last().unwrap(),
            "first pass: settled at 461.00 MB/s (phase 2); phase 3 rose as the pass ended, for fewer than 10 intervals: a burst, not a level it settled at",
            "{lines:?}"
        );
        // Settled at the last phase: nothing more to say.
        d.settled_phase = Some(2);
        assert!(
            findings("first pass", &d, false)
                .iter()
                .all(|l| !l.contains("settled"))
        );
    }

    /// tmpfs under memory pressure: "write cache 398.1 MiB (0.42 GB): 427.29 MB/s until the
    /// cliff" claimed a drive's cache that RAM does not have. Same figures, named for what
    /// they are; a drive keeps its "write cache".
    #[test]
    fn a_drop_on_ram_is_not_called_a_write_cache() {
        let mut d = SustainDetail {
            pass: "first".into(),
            interval_ms: 100,
            phases: vec![SustainPhase::default(), SustainPhase::default()],
            cliffs: vec![SustainCliff {
                fast_phase_bytes: 398.1 * (1 << 20) as f64,
                before_bw_bytes_per_s: 427.29e6,
                after_bw_bytes_per_s: 177.21e6,
                at_ms: 4100.0,
                ..Default::default()
            }],
            memory_backed: Some("tmpfs keeps its data in RAM".into()),
            ..Default::default()
        };
        let lines = findings("first pass", &d, false);
        assert_eq!(
            lines[0],
            "first pass: fast phase 398.1 MiB (0.42 GB): 427.29 MB/s until the drop at 4.1 s, then 177.21 MB/s (41 % of the fast speed); no write cache: tmpfs keeps its data in RAM, so the drop is the machine's (memory reclaim, other work on the CPUs), not a drive's cache filling up"
        );
        d.memory_backed = None;
        assert!(
            findings("first pass", &d, false)[0].starts_with("first pass: write cache 398.1 MiB"),
            "{:?}",
            findings("first pass", &d, false)
        );
    }

    /// A pass shorter than one interval showed a table of headers only.
    #[test]
    fn a_pass_without_phases_has_no_empty_table() {
        let text = table_of(TestResult {
            name: "first pass".into(),
            sustain: Some(SustainDetail {
                bytes_written: 512 << 10,
                interval_ms: 10,
                ..Default::default()
            }),
            ..Default::default()
        });
        assert!(!text.contains("Spread"), "{text}");
        assert!(text.contains("written in less than one interval"), "{text}");
        assert!(text.contains("write more (--size)"), "{text}");
    }

    /// A pass stopped with Ctrl-C before one interval advised "write more (--size)": it had
    /// not written what it was asked; what measures it is a pass left to finish.
    #[test]
    fn an_interrupted_pass_is_not_told_to_write_more() {
        let text = table_of(TestResult {
            name: "first pass".into(),
            error: Some("interrupted by SIGINT: the pass's series up to then is kept".into()),
            sustain: Some(SustainDetail {
                bytes_written: 512 << 10,
                interval_ms: 10,
                ..Default::default()
            }),
            ..Default::default()
        });
        assert!(!text.contains("write more"), "{text}");
        assert!(
            text.contains("first pass: interrupted after 512.0 KiB written, less than one interval (10 ms): no speed series; run it again and let the pass finish"),
            "{text}"
        );
    }

    /// A phase of one 10-ms interval (a 32 MiB pass at 2 GB/s) showed `±0.00 (0.0 %)`: a
    /// spread it cannot have, read as a perfectly steady phase.
    #[test]
    fn a_phase_of_one_interval_has_no_spread() {
        let p = SustainPhase {
            start_ms: 0,
            end_ms: 10,
            bytes: 16 << 20,
            mean_bw_bytes_per_s: 1.6777216e9,
            stddev_bw_bytes_per_s: 0.0,
        };
        assert_eq!(phase_cells(&p, 10)[4], "- (one interval)");
        // One point and the pass's partial last interval (64 MiB at 20-ms intervals ended
        // at 30 ms): still one interval, not "±0.00 (0.0 %)".
        let partial = SustainPhase { end_ms: 30, ..p };
        assert_eq!(phase_cells(&partial, 20)[4], "- (one interval)");
        let two = SustainPhase {
            end_ms: 20,
            stddev_bw_bytes_per_s: 1e7,
            ..p
        };
        assert_eq!(phase_cells(&two, 10)[4], "±10.00 (0.6 %)");
    }

    fn pass() -> TestResult {
        let intervals = (1..=10)
            .map(|k| IntervalPoint {
                t_ms: k * 100,
                bytes: if k <= 5 { 40_000_000 } else { 10_000_000 },
                bw_bytes_per_s: if k <= 5 { 4e8 } else { 1e8 },
                ..Default::default()
            })
            .collect();
        TestResult {
            name: "first pass".into(),
            family: "sustain".into(),
            runs: vec![crate::model::RunResult {
                intervals,
                ..Default::default()
            }],
            sustain: Some(SustainDetail {
                pass: "first".into(),
                interval_ms: 100,
                bytes_written: 250_000_000,
                phases: vec![
                    SustainPhase {
                        start_ms: 0,
                        end_ms: 500,
                        bytes: 200_000_000,
                        mean_bw_bytes_per_s: 4e8,
                        stddev_bw_bytes_per_s: 4e6,
                    },
                    SustainPhase {
                        start_ms: 500,
                        end_ms: 1000,
                        bytes: 50_000_000,
                        mean_bw_bytes_per_s: 1e8,
                        stddev_bw_bytes_per_s: 1e6,
                    },
                ],
                cliffs: vec![SustainCliff {
                    at_ms: 500.0,
                    bytes_before: 2e8,
                    fast_phase_bytes: 2e8,
                    before_bw_bytes_per_s: 4e8,
                    after_bw_bytes_per_s: 1e8,
                    ..Default::default()
                }],
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn the_table_names_the_cache_and_the_speeds() {
        let s = table_of(pass());
        assert!(s.contains("write cache 190.7 MiB (0.20 GB)"), "{s}");
        assert!(
            s.contains("400.00 MB/s until the cliff at 0.5 s, then 100.00 MB/s (25 %"),
            "{s}"
        );
        assert!(s.contains("±4.00 (1.0 %)"), "{s}");
    }

    #[test]
    fn times_follow_the_interval() {
        // At 10-ms intervals a phase of 80 ms from 0.25 s is not `0.3 s` to `0.3 s`.
        let mut t = pass();
        let d = t.sustain.as_mut().unwrap();
        d.interval_ms = 10;
        d.phases[0].end_ms = 250;
        d.phases[1].start_ms = 250;
        d.phases[1].end_ms = 330;
        d.cliffs[0].at_ms = 250.0;
        let s = table_of(t);
        assert!(s.contains("0.25 s ┆ 0.33 s"), "{s}");
        assert!(s.contains("until the cliff at 0.25 s"), "{s}");
    }

    /// A first pass that sped up (100 then 300 MB/s, no drop) was "no cliff in 1.2 GiB
    /// (99.92 MB/s throughout)" under a table of both phases.
    #[test]
    fn a_pass_that_sped_up_is_not_at_one_speed_throughout() {
        let mut t = pass();
        let d = t.sustain.as_mut().unwrap();
        d.cliffs.clear();
        d.bytes_written = 1200 << 20;
        d.phases[0].mean_bw_bytes_per_s = 99.92e6;
        d.phases[1].mean_bw_bytes_per_s = 300.05e6;
        let lines = findings("first pass", d, false);
        assert_eq!(
            lines,
            [
                "first pass: no cliff in 1.2 GiB (99.92 MB/s, then 300.05 MB/s: it sped up and never dropped)"
            ]
        );
        d.phases.truncate(1);
        assert_eq!(
            findings("first pass", d, false),
            ["first pass: no cliff in 1.2 GiB (99.92 MB/s throughout)"]
        );
    }

    #[test]
    fn the_chart_marks_the_cliff() {
        let svg = bandwidth_chart("t", &pass()).unwrap();
        assert!(svg.contains("cliff after 190.7 MiB"), "{svg}");
        assert!(svg.contains("phase 2: 100.00 MB/s"));
    }

    /// A pass with pauses of its speed says when, how slow and whose they were: the
    /// machine's when the job thread waited for a CPU through them, the drive's when it did
    /// not, either when the kernel does not tell. Without pauses, no line.
    #[test]
    fn pauses_are_named_with_whose_they_were() {
        let pause = |from: u64, to: u64, wait: Option<f64>| SustainPause {
            start_ms: from,
            end_ms: to,
            bw_bytes_per_s: 0.0,
            before_bw_bytes_per_s: 398e6,
            cpu_wait_share: wait,
            cpu_pressure_share: None,
        };
        let mut d = SustainDetail {
            pass: "first".into(),
            interval_ms: 100,
            phases: vec![phase(0, 3000, 398e6)],
            ..Default::default()
        };
        assert_eq!(pause_note("first pass", &d), None);
        d.pauses = vec![pause(600, 900, Some(0.92)), pause(2100, 2300, Some(0.7))];
        let n = pause_note("first pass", &d).expect("a note");
        assert_eq!(
            n,
            "first pass: the speed paused (at 0.6 s for 0.3 s, at 2.1 s for 0.2 s: down to 0.00 MB/s), then came back: the CPUs were held by other work then (the job thread, or the kernel's threads doing its I/O, waited for one): the machine's, not the drive's; no cliff, and no part of a phase's speed (the bytes are)"
        );
        d.pauses[1].cpu_wait_share = Some(0.02);
        let n = pause_note("first pass", &d).unwrap();
        assert!(
            n.contains("in 1 the CPUs were held by other work (the machine's); the others are the drive's (garbage collection, a flush)"),
            "{n}"
        );
        d.pauses = vec![pause(600, 900, Some(0.0))];
        let n = pause_note("first pass", &d).unwrap();
        assert!(
            n.contains("nothing was kept from a CPU then: the drive's"),
            "{n}"
        );
        d.pauses = vec![pause(600, 900, None); 5];
        let n = pause_note("first pass", &d).unwrap();
        assert!(n.contains("for 0.3 s, 2 more: down"), "{n}");
        assert!(n.contains("this kernel does not tell"), "{n}");
        // In the table's findings too.
        let t = TestResult {
            name: "first pass".into(),
            sustain: Some(d),
            ..Default::default()
        };
        assert!(table_of(t).contains("first pass: the speed paused ("));
    }
}

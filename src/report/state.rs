//! The state of the drive in the report (HTML and Markdown; `document` makes the blocks):
//! the steady-state rounds of every test that ran to steady state (a table, and in HTML
//! the value of every round with the window marked) and the drive's temperature during the
//! run (a line, and in HTML the series with the warning limit).

use crate::model::ResultDoc;
use crate::model::steady::SteadyStateRecord;
use crate::report::metrics::display_name;
use crate::report::svg::{Axis, MEASUREMENT_TIME, Mark, Scale, Series, line_chart};
use crate::units::{fmt_mb_per_s, fmt_thousands};

fn fmt_metric(s: &SteadyStateRecord, v: f64) -> String {
    if s.metric == "iops" {
        format!("{} IOPS", fmt_thousands(v))
    } else {
        format!("{} MB/s", fmt_mb_per_s(v))
    }
}

/// What the report says before the steady-state table.
pub const STEADY_NOTE: &str = "Rounds were measured until the last window of rounds met the rule (SNIA PTS: 5 rounds, max − min within 20 % and the least-squares fit's excursion within 10 % of the window's mean; or a fio --steadystate criterion) or the time limit passed. Rounds count from 0; the test's figures are over the window.";

/// [`STEADY_NOTE`] for `iolab saturate`, whose rounds come before each sweep: its figures
/// are the sweep's, measured after the rounds, not the window's.
pub const SATURATE_STEADY_NOTE: &str = "Before each sweep, steps at one depth were measured until the last window of rounds met the rule (SNIA PTS: 5 rounds, max − min within 20 % and the least-squares fit's excursion within 10 % of the window's mean; or a fio --steadystate criterion) or the time limit passed. Rounds count from 0; the sweep's figures were measured after the rounds, not over the window.";

/// The note before a result's steady-state table.
pub fn steady_note(doc: &ResultDoc) -> &'static str {
    if doc.command == "saturate" {
        SATURATE_STEADY_NOTE
    } else {
        STEADY_NOTE
    }
}

/// The steady-state table: header and one row per test that ran to steady state, and each
/// such test's chart with its caption. None when no test did.
#[allow(clippy::type_complexity)]
pub fn steady_table(
    doc: &ResultDoc,
) -> Option<(Vec<String>, Vec<Vec<String>>, Vec<(String, String)>)> {
    let tests: Vec<_> = doc
        .tests
        .iter()
        .filter_map(|t| t.steady_state.as_ref().map(|s| (t, s)))
        .collect();
    if tests.is_empty() {
        return None;
    }
    let header = [
        "Test",
        "rule",
        "steady",
        "window",
        "rounds",
        "window mean",
        "time (s)",
    ]
    .map(String::from)
    .to_vec();
    let rows = tests
        .iter()
        .map(|(t, s)| {
            vec![
                display_name(t.config.as_deref(), &t.name),
                s.rule.clone(),
                match s.steady_last_round {
                    Some(r) if s.reached => format!("at round {r}"),
                    _ => "not reached".into(),
                },
                match (s.steady_first_round, s.steady_last_round) {
                    (Some(a), Some(b)) => format!("{a}-{b}"),
                    _ => format!("{} rounds", s.window_rounds),
                },
                s.values.len().to_string(),
                s.window_mean
                    .map(|m| fmt_metric(s, m))
                    .unwrap_or_else(|| "-".into()),
                format!("{:.1}", s.elapsed_s),
            ]
        })
        .collect();
    let charts = tests
        .iter()
        .filter_map(|(t, s)| {
            let name = display_name(t.config.as_deref(), &t.name);
            let svg = rounds_chart(&name, s)?;
            Some((svg, format!("{name}: {}", s.describe())))
        })
        .collect();
    Some((header, rows, charts))
}

/// Every round's value, with the steady window's ends and mean marked.
fn rounds_chart(name: &str, s: &SteadyStateRecord) -> Option<String> {
    if s.values.len() < 2 {
        return None;
    }
    let series = vec![Series {
        name: s.metric.clone(),
        points: s
            .values
            .iter()
            .enumerate()
            .map(|(i, &v)| (i as f64, v))
            .collect(),
        labels: Vec::new(),
    }];
    let mut marks = Vec::new();
    if let (Some(a), Some(b), true) = (s.steady_first_round, s.steady_last_round, s.reached) {
        for (r, what) in [(a, "window starts"), (b, "steady")] {
            if let Some(&v) = s.values.get(r) {
                marks.push(Mark::Point {
                    x: r as f64,
                    y: v,
                    label: format!("{what} (round {r})"),
                });
            }
        }
        if let Some(m) = s.window_mean {
            marks.push(Mark::HLine {
                y: m,
                label: format!("window mean {}", fmt_metric(s, m)),
            });
        }
    }
    let round = |v: f64| format!("{v}");
    let iops = s.metric == "iops";
    let value = move |v: f64| {
        if iops {
            fmt_thousands(v)
        } else {
            fmt_mb_per_s(v)
        }
    };
    Some(line_chart(
        &format!("{name}: rounds to steady state ({})", s.rule),
        &Axis {
            label: "round",
            scale: Scale::Linear,
            fmt: &round,
        },
        &Axis {
            label: if iops { "IOPS" } else { "MB/s" },
            scale: Scale::Linear,
            fmt: &value,
        },
        &series,
        &marks,
    ))
}

/// The temperature line and, with two readings or more, its chart (None without a record).
pub fn heat(doc: &ResultDoc) -> Option<(String, Option<String>)> {
    let rec = doc.thermal.as_ref()?;
    let line = crate::sysinfo::heat::describe(rec)?;
    if rec.series.len() < 2 {
        return Some((line, None));
    }
    let series = vec![Series {
        name: rec.device.clone(),
        points: rec
            .series
            .iter()
            .map(|p| (p.t_ms as f64 / 1000.0, p.celsius))
            .collect(),
        labels: Vec::new(),
    }];
    let marks: Vec<Mark> = rec
        .limits
        .warning_celsius
        .map(|w| Mark::HLine {
            y: w,
            label: format!("warning limit {w:.0} °C"),
        })
        .into_iter()
        .collect();
    let deg = |v: f64| format!("{v:.0}");
    let svg = line_chart(
        &format!("{}: temperature during the run", rec.device),
        &MEASUREMENT_TIME,
        &Axis {
            label: "°C",
            scale: Scale::Linear,
            fmt: &deg,
        },
        &series,
        &marks,
    );
    Some((line, Some(svg)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::thermal::{TemperatureSample, ThermalLimits, ThermalRecord};
    use crate::model::{Environment, TestResult};
    use crate::report::blocks::Block;

    #[test]
    fn steady_table_and_heat_line() {
        let mut doc = ResultDoc::new("run", Vec::new(), Environment::default());
        let mut out = Vec::new();
        crate::report::document::state_blocks(&doc, &mut out);
        assert!(out.is_empty());
        doc.tests.push(TestResult {
            name: "SEQ1M Q1T1 write".into(),
            steady_state: Some(SteadyStateRecord {
                rule: "snia".into(),
                metric: "iops".into(),
                window_rounds: 5,
                reached: true,
                steady_first_round: Some(3),
                steady_last_round: Some(7),
                values: vec![100.0, 200.0, 300.0, 400.0, 401.0, 399.0, 400.0, 402.0],
                window_mean: Some(400.4),
                elapsed_s: 8.2,
                ..Default::default()
            }),
            ..Default::default()
        });
        doc.thermal = Some(ThermalRecord {
            device: "nvme0n1".into(),
            source: "hwmon".into(),
            limits: ThermalLimits {
                warning_celsius: Some(84.0),
                critical_celsius: None,
            },
            series: (0..5)
                .map(|i| TemperatureSample {
                    t_ms: i * 1000,
                    celsius: 40.0 + i as f64,
                })
                .collect(),
            max_celsius: Some(44.0),
            ..Default::default()
        });
        crate::report::document::state_blocks(&doc, &mut out);
        let Block::Table(t) = &out[2] else {
            panic!("{:?}", out[2])
        };
        assert_eq!(t.rows[0][2], "at round 7");
        assert_eq!(t.rows[0][3], "3-7");
        assert_eq!(t.rows[0][5], "400 IOPS");
        assert!(matches!(&out[3], Block::Chart { svg, .. } if svg.contains("steady (round 7)")));
        assert!(out.iter().any(|b| matches!(b, Block::Para(p)
            if p == "drive nvme0n1: 40-44 °C during the run (5 readings, hwmon; warning limit 84 °C).")));
        assert!(
            matches!(out.last(), Some(Block::Chart { svg, .. }) if svg.contains("warning limit 84"))
        );
        // Markdown carries the table and the line, not the charts.
        let md = crate::report::markdown::render(&out);
        assert!(md.contains("at round 7"), "{md}");
        assert!(md.contains("40-44 °C"), "{md}");
        assert!(
            md.contains("the test's figures are over the window"),
            "{md}"
        );
        // A saturation result's rounds come before its sweep: the report said "the test's
        // figures are over the window" above a sweep measured after them.
        doc.command = "saturate".into();
        let mut out = Vec::new();
        crate::report::document::state_blocks(&doc, &mut out);
        let md = crate::report::markdown::render(&out);
        assert!(!md.contains("figures are over the window"), "{md}");
        assert!(
            md.contains("the sweep's figures were measured after the rounds"),
            "{md}"
        );
    }
}

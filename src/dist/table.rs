//! The terminal's per-host table of a distributed run: each rank's own figures next to the
//! totals, the straggler spread and the clock offsets. Pure: result document in, text out.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table};

use crate::model::{ResultDoc, TestResult};
use crate::stats::summary::median;
use crate::units::{fmt_mb_per_s, fmt_ns, fmt_thousands};

fn med(t: &TestResult, metric: &str) -> String {
    t.summary
        .get(metric)
        .map(|s| s.median)
        .map(|v| {
            if metric == "iops" {
                fmt_thousands(v)
            } else {
                fmt_mb_per_s(v)
            }
        })
        .unwrap_or_else(|| "-".into())
}

fn lat(t: &TestResult, f: fn(&crate::model::LatencyStats) -> f64) -> String {
    let v: Vec<f64> = t
        .runs
        .iter()
        .filter_map(|r| r.lat_ns.as_ref().map(f))
        .collect();
    if v.is_empty() {
        "-".into()
    } else {
        fmt_ns(median(&v))
    }
}

/// One block per test: a row per rank, then the totals; empty for a plain run.
pub fn render_hosts_table(doc: &ResultDoc) -> String {
    if doc.hosts.is_empty() {
        return String::new();
    }
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(vec![
            "Test",
            "rank",
            "host",
            "MB/s",
            "IOPS",
            "avg lat",
            "p99",
            "stonewalled",
        ]);
    for (ti, total) in doc.tests.iter().enumerate() {
        for h in &doc.hosts {
            let Some(t) = h.tests.get(ti) else { continue };
            let stonewalled = total
                .runs
                .iter()
                .filter(|r| {
                    r.dist
                        .as_ref()
                        .is_some_and(|d| d.stonewalled_ranks.contains(&h.rank))
                })
                .count();
            table.add_row(vec![
                Cell::new(&total.name),
                Cell::new(h.rank),
                Cell::new(&h.hostname),
                Cell::new(med(t, "bw_bytes_per_s")),
                Cell::new(med(t, "iops")),
                Cell::new(lat(t, |l| l.mean)),
                Cell::new(lat(t, |l| l.p99 as f64)),
                Cell::new(format!("{stonewalled}/{}", t.runs.len())),
            ]);
        }
        let spread = total
            .summary
            .get("straggler_spread_pct")
            .map(|s| format!("spread {:.1}%", s.median))
            .unwrap_or_default();
        table.add_row(vec![
            Cell::new(&total.name),
            Cell::new("all"),
            Cell::new(spread),
            Cell::new(med(total, "bw_bytes_per_s")),
            Cell::new(med(total, "iops")),
            Cell::new(lat(total, |l| l.mean)),
            Cell::new(lat(total, |l| l.p99 as f64)),
            Cell::new(""),
        ]);
    }
    for i in [1, 3, 4, 5, 6, 7] {
        if let Some(c) = table.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    let mut out = format!("Per host ({} ranks):\n", doc.hosts.len());
    out.push_str(&table.to_string());
    out.push('\n');
    out.push_str(
        "Per rank: medians over its runs. all: totals (IOPS and MB/s over the common window from the earliest start to the latest end; latency from the merged histograms). spread: (fastest - slowest) / fastest rank IOPS, median over runs. stonewalled: runs this rank was stopped early because another rank reached its limit first.\n",
    );
    let offsets: Vec<String> = doc
        .hosts
        .iter()
        .filter_map(|h| {
            h.clock_offset_ns.map(|o| {
                format!(
                    "rank {} {}{}",
                    h.rank,
                    if o < 0 { "-" } else { "+" },
                    fmt_ns(o.unsigned_abs() as f64)
                )
            })
        })
        .collect();
    if !offsets.is_empty() {
        out.push_str(&format!(
            "clock offsets vs rank 0 (ping-pong estimate, corrected): {}\n",
            offsets.join(", ")
        ));
    }
    out
}

//! The terminal's per-host table of a distributed run: each rank's own figures next to the
//! totals, the straggler spread and the clock offsets. Pure: result document in, text out.

use comfy_table::{Cell, ContentArrangement, Table};

use crate::model::saturate::CurvePoint;
use crate::model::{ResultDoc, TestResult};
use crate::report::metrics::MEAN_LATENCY;
use crate::report::table::{align_right, lat_median};
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
    lat_median(t, f).map(fmt_ns).unwrap_or_else(|| "-".into())
}

/// One block per test: a row per rank, then the totals; empty for a plain run.
pub fn render_hosts_table(doc: &ResultDoc) -> String {
    per_rank_table(
        doc,
        ["MB/s", "IOPS", MEAN_LATENCY, "p99"],
        |t| {
            [
                med(t, "bw_bytes_per_s"),
                med(t, "iops"),
                lat(t, |l| l.mean),
                lat(t, |l| l.p99 as f64),
            ]
        },
        "Per rank: medians over its runs. all: totals (IOPS and MB/s over the common window from the earliest start to the latest end; latency from the merged histograms). spread: (fastest - slowest) / fastest rank IOPS, median over runs. stonewalled: runs this rank was stopped early because another rank reached its limit first.\n",
    )
}

/// A distributed `iolab files`: one block per test (size x phase), a row per rank, then the
/// totals; empty for a plain run.
pub fn render_files_hosts(doc: &ResultDoc) -> String {
    let mean = |t: &TestResult, k: &str, f: fn(f64) -> String| {
        t.summary
            .get(k)
            .map(|s| f(s.mean))
            .unwrap_or_else(|| "-".into())
    };
    let files = |t: &TestResult| {
        let n: Vec<String> = t
            .runs
            .iter()
            .map(|r| r.files.as_ref().map_or(r.ops, |d| d.files_done).to_string())
            .collect();
        n.join(", ")
    };
    per_rank_table(
        doc,
        ["files/s", "MB/s", "s/portion", "files"],
        |t| {
            [
                mean(t, "files_per_s", fmt_thousands),
                mean(t, "bw_bytes_per_s", fmt_mb_per_s),
                mean(
                    t,
                    "seconds_per_portion",
                    crate::report::metrics::fmt_seconds,
                ),
                files(t),
            ]
        },
        "Per rank: means over its runs; files: files done in each run. all: totals (files/s and MB/s over the common window of each phase, from the earliest start to the latest end; s/portion: the time all ranks together took per portion's worth of files). spread: (fastest - slowest) / fastest rank files/s, median over runs. stonewalled: runs in which this rank stopped early (after the portion it was in) because another rank had done its portions.\n",
    )
}

/// The per-host table of a run or files: one block per test, a row per rank with its four
/// `figures` (over its own runs) and how many of its runs were stonewalled, then the totals'
/// row with the straggler spread; empty for a plain run.
fn per_rank_table(
    doc: &ResultDoc,
    headers: [&str; 4],
    figures: impl Fn(&TestResult) -> [String; 4],
    legend: &str,
) -> String {
    if doc.hosts.is_empty() {
        return String::new();
    }
    let mut header = vec!["Test", "rank", "host"];
    header.extend(headers);
    header.push("stonewalled");
    let mut table = hosts_table(&header);
    let row = |first: [Cell; 3], t: &TestResult, last: String| {
        let mut row = Vec::from(first);
        row.extend(figures(t).map(Cell::new));
        row.push(Cell::new(last));
        row
    };
    for (ti, total) in doc.tests.iter().enumerate() {
        for h in &doc.hosts {
            let Some(t) = h.tests.get(ti) else { continue };
            let stonewalled = stonewalled_runs(total, h.rank);
            table.add_row(row(
                [
                    Cell::new(&total.name),
                    Cell::new(h.rank),
                    Cell::new(crate::os::text::terminal(&h.hostname)),
                ],
                t,
                format!("{stonewalled}/{}", t.runs.len()),
            ));
        }
        table.add_row(row(
            [
                Cell::new(&total.name),
                Cell::new("all"),
                Cell::new(spread(total)),
            ],
            total,
            String::new(),
        ));
    }
    finish_hosts(doc, table, &[1, 3, 4, 5, 6, 7], legend)
}

/// How many of the total's runs stopped `rank` early (stonewall).
fn stonewalled_runs(total: &TestResult, rank: u32) -> usize {
    total
        .runs
        .iter()
        .filter(|r| {
            r.dist
                .as_ref()
                .is_some_and(|d| d.stonewalled_ranks.contains(&rank))
        })
        .count()
}

/// The per-host table's text: right-aligned numeric `columns`, the `legend`, the clock offsets.
fn finish_hosts(doc: &ResultDoc, mut table: Table, columns: &[usize], legend: &str) -> String {
    align_right(&mut table, columns.iter().copied());
    format!(
        "Per host ({} ranks):\n{table}\n{legend}{}",
        doc.hosts.len(),
        clock_offsets(doc)
    )
}

fn hosts_table(header: &[&str]) -> Table {
    let mut table = super::table::new_table(ContentArrangement::Disabled);
    table.set_header(header.to_vec());
    table
}

/// `spread 12.3%`: the straggler spread, median over the runs (or steps).
fn spread(total: &TestResult) -> String {
    total
        .summary
        .get("straggler_spread_pct")
        .map(|s| format!("spread {:.1}%", s.median))
        .unwrap_or_default()
}

/// The line with every rank's clock offset, if any was measured.
fn clock_offsets(doc: &ResultDoc) -> String {
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
    if offsets.is_empty() {
        return String::new();
    }
    format!(
        "clock offsets vs rank 0 (ping-pong estimate, corrected): {}\n",
        offsets.join(", ")
    )
}

/// The point of `curve` at `depth` (the last one measured there).
fn at(curve: Option<&Vec<CurvePoint>>, depth: u32) -> Option<&CurvePoint> {
    curve?.iter().rev().find(|p| p.at.iodepth == depth)
}

/// A distributed saturate's per-host table: per sweep, each rank's own figures at the
/// answer's depth (or the last depth measured), how many steps held the limit by that
/// rank's own latency, then the totals; empty for a plain saturate.
pub fn render_saturate_hosts(doc: &ResultDoc) -> String {
    if doc.hosts.is_empty() {
        return String::new();
    }
    let mut table = hosts_table(&[
        "Sweep",
        "rank",
        "host",
        "depth",
        "IOPS",
        "MB/s",
        "mean",
        "p99",
        "own limit",
    ]);
    for (ti, total) in doc.tests.iter().enumerate() {
        let Some(depth) = total
            .answer
            .as_ref()
            .filter(|a| a.detail.found)
            .map(|a| a.iodepth)
            .or_else(|| total.curve.as_ref()?.last().map(|p| p.at.iodepth))
        else {
            continue;
        };
        let row = |rank: String, host: String, p: &CurvePoint, own: String| {
            let lat = |ns: f64| {
                if p.at.completed_any() {
                    fmt_ns(ns)
                } else {
                    "-".to_string()
                }
            };
            vec![
                Cell::new(&total.name),
                Cell::new(rank),
                Cell::new(host),
                Cell::new(match p.detail.total_iodepth {
                    Some(t) => format!("{} ({t})", p.at.iodepth),
                    None => p.at.iodepth.to_string(),
                }),
                Cell::new(fmt_thousands(p.at.iops)),
                Cell::new(fmt_mb_per_s(p.at.bw_bytes_per_s)),
                // A host that completed no I/O at this depth has no latency (it read "0 ns").
                Cell::new(lat(p.at.lat_mean_ns)),
                Cell::new(lat(p.at.lat_p99_ns)),
                Cell::new(own),
            ]
        };
        let steps: Vec<&CurvePoint> = total.curve.iter().flatten().collect();
        for h in &doc.hosts {
            let curve = h.tests.get(ti).and_then(|t| t.curve.as_ref());
            let Some(p) = at(curve, depth) else { continue };
            let mine: Vec<&CurvePoint> = curve.into_iter().flatten().collect();
            let held = mine.iter().filter(|p| p.within_limit).count();
            table.add_row(row(
                h.rank.to_string(),
                crate::os::text::terminal(&h.hostname).into_owned(),
                p,
                format!("{held}/{} ok", mine.len()),
            ));
        }
        if let Some(p) = at(total.curve.as_ref(), depth) {
            let held = steps.iter().filter(|p| p.within_limit).count();
            table.add_row(row(
                "all".into(),
                spread(total),
                p,
                format!("{held}/{} ok", steps.len()),
            ));
        }
    }
    finish_hosts(
        doc,
        table,
        &[1, 3, 4, 5, 6, 7],
        "Per rank: its own figures at the answer's depth (the last depth measured when there is no answer); depth (total): per job and rank (in flight on all ranks). own limit: steps that held the limit by that rank's own latency; the sweep judged the totals (all), whose latency is from the merged histograms. spread: (fastest - slowest) / fastest rank IOPS, median over the steps. Steps are timed: every rank runs each for the whole --step-duration (no stonewall).\n",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::HostResult;

    /// The per-host table of a distributed saturate had a `stonewalled` column that could
    /// only read `0/3`: its steps are timed, every rank runs each for the whole step, and no
    /// rank is ever stopped early. The column is gone; the legend says the steps are timed.
    /// A step at `depth` with `iops` (1 ms mean latency, 2 ms p99).
    fn point(depth: u32, iops: f64) -> CurvePoint {
        let mut p = CurvePoint::default();
        p.at.iodepth = depth;
        p.at.iops = iops;
        p.at.lat_mean_ns = 1e6;
        p.at.lat_p99_ns = 2e6;
        p.within_limit = true;
        p
    }

    /// A two-rank saturate whose rank `r` ran `curves[r]`, the total being rank 0's.
    fn two_ranks(curves: [Vec<CurvePoint>; 2]) -> ResultDoc {
        let test = |curve: &Vec<CurvePoint>| TestResult {
            name: "randread".into(),
            curve: Some(curve.clone()),
            ..Default::default()
        };
        let mut doc = ResultDoc::new("saturate", vec![], Default::default());
        doc.tests.push(test(&curves[0]));
        doc.hosts = (0..2)
            .map(|rank| HostResult {
                rank,
                hostname: format!("h{rank}"),
                tests: vec![test(&curves[rank as usize])],
                ..Default::default()
            })
            .collect();
        doc
    }

    #[test]
    fn a_saturate_host_table_has_no_stonewall_column() {
        let curve = vec![point(1, 1000.0), point(2, 1000.0)];
        let out = render_saturate_hosts(&two_ranks([curve.clone(), curve]));
        assert!(out.contains("own limit"), "{out}");
        assert!(out.contains("2/2 ok"), "{out}");
        assert!(!out.contains("stonewalled"), "{out}");
        assert!(!out.contains("0/2"), "{out}");
    }

    /// A rank that completed no I/O at a depth has no latency there: "-", not "0 ns".
    #[test]
    fn a_host_with_no_completed_io_shows_no_latency() {
        let mut idle = point(1, 0.0);
        idle.at.lat_mean_ns = 0.0;
        idle.at.lat_p99_ns = 0.0;
        let out = render_saturate_hosts(&two_ranks([vec![point(1, 1000.0)], vec![idle]]));
        assert!(!out.contains("0 ns"), "{out}");
        let h1 = out.lines().find(|l| l.contains("h1")).expect("a row of h1");
        assert!(h1.contains(" - "), "{out}");
        assert!(out.contains("1.00 ms"), "{out}");
    }
}

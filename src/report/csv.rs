//! CSV export: one row per test × run (a saturation sweep: one row per depth; a matrix
//! configuration or workload that measured nothing: one row with its reason), raw values
//! in base units (bytes, nanoseconds, seconds), for spreadsheets and scripts. The columns
//! are documented in docs/GUIDE.md (`iolab report` section) and listed in `COLUMNS`.

use crate::analysis::matrix::{WORKLOAD_PARAM, test_cache_absorbed};
use crate::model::matrix::ConfigurationResult;
use crate::model::{ResultDoc, RunResult, TestResult};
use crate::report::load::Loaded;
use crate::report::metrics::{
    all_tests, config_of, primary_metric, seconds_per_portion, settled_bw, test_name,
};

/// Column names, in order.
pub const COLUMNS: [&str; 47] = [
    "source_file",
    "command",
    "hostname",
    "started_at",
    "config",
    "test",
    "family",
    "direction",
    "rw",
    "bs_bytes",
    "iodepth",
    "jobs",
    "file_size_bytes",
    "phase",
    "run",
    "elapsed_s",
    "ops",
    "bytes",
    "iops",
    "bw_bytes_per_s",
    "files_per_s",
    "seconds_per_portion",
    "lat_mean_ns",
    "lat_p50_ns",
    "lat_p99_ns",
    "lat_p999_ns",
    "lat_max_ns",
    "avg_queue_depth",
    "cpu_pct",
    "write_amplification",
    "outlier",
    "error",
    "read_iops",
    "read_lat_mean_ns",
    "read_lat_p99_ns",
    "write_iops",
    "write_lat_mean_ns",
    "write_lat_p99_ns",
    "cache_bytes",
    "cache_bw_bytes_per_s",
    "after_cliff_bw_bytes_per_s",
    "recovered_share",
    "status",
    // Appended after `status` so that readers of the older columns by position still work.
    "config_status",
    "config_reason",
    "cache_absorbed",
    // The figure every other place heads a sustain pass with (its settled phase's speed),
    // appended after `cache_absorbed` so that readers by position still work.
    "settled_bw_bytes_per_s",
];

/// Quote a field when it holds a separator, a quote or a line break (RFC 4180).
pub(crate) fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn num(v: Option<f64>) -> String {
    v.filter(|v| v.is_finite())
        .map(|v| v.to_string())
        .unwrap_or_default()
}

pub fn render(inputs: &[Loaded]) -> String {
    let mut out = COLUMNS.join(",");
    out.push('\n');
    for l in inputs {
        let doc = &l.doc;
        // The columns every row of this file starts with.
        let file_cols = [
            l.file_name(),
            doc.command.clone(),
            doc.environment.hostname.clone(),
            doc.started_at.clone(),
        ];
        for t in all_tests(doc) {
            let mut test_cols = file_cols.to_vec();
            test_cols.extend([
                config_of(doc, t).unwrap_or_default(),
                test_name(doc, t),
                t.family.clone(),
                t.direction.clone().unwrap_or_default(),
            ]);
            let s = t.settings.as_ref();
            // Independent job groups at once (saturate's mixed sweep): every group's pattern,
            // not only the first's (`settings` is the first group).
            let rw = if t.groups.len() > 1 {
                t.groups
                    .iter()
                    .map(|g| g.rw.as_str())
                    .collect::<Vec<_>>()
                    .join("+")
            } else {
                s.map(|s| s.rw.clone()).unwrap_or_default()
            };
            test_cols.push(rw);
            test_cols.push(s.map(|s| s.bs_bytes.to_string()).unwrap_or_default());
            let (iodepth, jobs) = (
                s.map(|s| s.iodepth.to_string()).unwrap_or_default(),
                s.map(|s| s.jobs.to_string()).unwrap_or_default(),
            );
            let config_cols = config_cols(doc, t);
            let file_size = t.params.get("file_size_bytes").cloned().unwrap_or_default();
            let phase = t.params.get("phase").cloned().unwrap_or_default();
            for r in &t.runs {
                let mut row = test_cols.clone();
                row.extend([
                    iodepth.clone(),
                    jobs.clone(),
                    file_size.clone(),
                    phase.clone(),
                ]);
                row.extend(run_cols(t, r));
                row.push(doc.status.clone());
                row.extend(config_cols.clone());
                row.push(num(settled_bw(t)));
                push_row(&mut out, &row);
            }
            for p in t.curve.iter().flatten() {
                let mut row = test_cols.clone();
                row.extend([
                    p.at.iodepth.to_string(),
                    p.at.jobs.to_string(),
                    file_size.clone(),
                    phase.clone(),
                ]);
                row.extend([String::new(), String::new(), String::new(), String::new()]);
                row.extend([num(Some(p.at.iops)), num(Some(p.at.bw_bytes_per_s))]);
                row.extend([String::new(), String::new()]);
                // A step in which no I/O completed has no latency or queue depth.
                let some = |v: f64| p.at.completed_any().then_some(v);
                row.extend([num(some(p.at.lat_mean_ns)), String::new()]);
                row.extend([
                    num(some(p.at.lat_p99_ns)),
                    num(some(p.at.lat_p999_ns)),
                    String::new(),
                ]);
                row.extend([num(some(p.at.avg_queue_depth)), num(Some(p.cpu_pct))]);
                row.extend([String::new(), String::new(), String::new()]);
                row.extend(std::iter::repeat_n(String::new(), 6));
                row.extend(sustain_cols(t));
                row.push(doc.status.clone());
                row.extend(config_cols.clone());
                row.push(num(settled_bw(t)));
                push_row(&mut out, &row);
            }
        }
        // What a matrix's terminal lists unranked with its reason and no figure: a
        // configuration that measured nothing (skipped: its mkfs is missing, the image too
        // small; or failed before its first test), a workload that failed before its first
        // test on one that measured others. One row each, no figures; the CSV left them out.
        for (c, status, reason) in unmeasured(doc) {
            let mut row = file_cols.to_vec();
            row.push(c.label.clone());
            row.resize(COLUMNS.len() - 5, String::new());
            row.extend([
                doc.status.clone(),
                status,
                reason,
                String::new(),
                String::new(),
            ]);
            push_row(&mut out, &row);
        }
    }
    out
}

/// The rows of `render` without figures: (configuration, status, reason).
fn unmeasured(doc: &ResultDoc) -> Vec<(&ConfigurationResult, String, String)> {
    let mut out = Vec::new();
    for c in &doc.configurations {
        if c.tests.is_empty() {
            out.push((c, c.status.clone(), c.reason.clone().unwrap_or_default()));
            continue;
        }
        for w in c
            .workloads
            .iter()
            .filter(|w| w.status != "ok" && w.tests.is_empty())
        {
            let why = w.error.as_deref().unwrap_or("no result");
            out.push((c, w.status.clone(), format!("{}: {why}", w.workload)));
        }
    }
    out
}

/// A matrix test's configuration: its status, the reason (its workload's error there, else
/// the configuration's), and whether the page cache absorbed its workload's writes there
/// (`yes`: the terminal lists it apart, "not ranked: cache-absorbed"). Empty outside a
/// matrix.
fn config_cols(doc: &ResultDoc, t: &TestResult) -> [String; 3] {
    let label = config_of(doc, t);
    let Some(c) = doc
        .configurations
        .iter()
        .find(|c| Some(&c.label) == label.as_ref())
    else {
        return Default::default();
    };
    let failed = t.params.get(WORKLOAD_PARAM).and_then(|w| {
        c.workloads
            .iter()
            .find(|o| &o.workload == w)
            .and_then(|o| o.error.clone())
    });
    [
        c.status.clone(),
        failed.or_else(|| c.reason.clone()).unwrap_or_default(),
        if test_cache_absorbed(c, t) { "yes" } else { "" }.into(),
    ]
}

fn run_cols(t: &TestResult, r: &RunResult) -> Vec<String> {
    let lat = r.lat_ns.as_ref();
    let outlier = primary_metric(t)
        .and_then(|m| t.summary.get(&m))
        .map(|s| t.outlier_runs(s).contains(&r.run))
        .unwrap_or(false);
    let mut cols = vec![
        r.run.to_string(),
        num(Some(r.elapsed_ns as f64 / 1e9)),
        r.ops.to_string(),
        r.bytes.to_string(),
        num(r.iops),
        num(r.bw_bytes_per_s),
        num(r.files_per_s),
        num(r.files_per_s.and_then(|f| seconds_per_portion(t, f))),
        num(lat.map(|l| l.mean)),
        num(lat.map(|l| l.p50 as f64)),
        num(lat.map(|l| l.p99 as f64)),
        num(lat.map(|l| l.p999 as f64)),
        num(lat.map(|l| l.max as f64)),
        num(r.avg_queue_depth),
        num(r.cpu.as_ref().map(|c| c.process_pct)),
        num(r.write_amplification),
        if outlier { "yes".into() } else { String::new() },
        t.error.clone().unwrap_or_default(),
    ];
    // Mixed runs: each direction alone (empty for single-direction tests).
    for d in [r.read.as_ref(), r.write.as_ref()] {
        cols.extend([
            num(d.map(|d| d.iops)),
            num(d.map(|d| d.lat_ns.mean)),
            num(d.map(|d| d.lat_ns.p99 as f64)),
        ]);
    }
    cols.extend(sustain_cols(t));
    cols
}

/// `iolab sustain` passes: the first cliff's fast phase (the cache), the speeds on both
/// sides, and for a recovery pass the share of the first cache that came back.
fn sustain_cols(t: &TestResult) -> [String; 4] {
    let d = t.sustain.as_ref();
    let c = d.and_then(|d| d.cliffs.first());
    [
        num(c.map(|c| c.fast_phase_bytes)),
        num(c.map(|c| c.before_bw_bytes_per_s)),
        num(c.map(|c| c.after_bw_bytes_per_s)),
        num(d.and_then(|d| d.recovered_share)),
    ]
}

fn push_row(out: &mut String, row: &[String]) {
    debug_assert_eq!(row.len(), COLUMNS.len());
    out.push_str(&row.iter().map(|f| field(f)).collect::<Vec<_>>().join(","));
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use crate::model::sustain::{SustainCliff, SustainDetail, SustainPhase};
    use crate::model::{Environment, ResultDoc, RunResult, TestResult};
    use crate::report::load::Loaded;

    /// A sustain pass's headline, its settled MB/s, is in the CSV as in the report (the
    /// CSV had the first cliff's speeds only: nothing of a pass without a cliff, and the
    /// first of two cliffs' slow phase where the report said the last).
    #[test]
    fn a_sustain_pass_s_settled_speed_is_a_column() {
        let mut doc = ResultDoc::new("sustain", Vec::new(), Environment::default());
        let phase = |mb: f64| SustainPhase {
            mean_bw_bytes_per_s: mb * 1e6,
            ..Default::default()
        };
        let cliff = |before: f64, after: f64| SustainCliff {
            before_bw_bytes_per_s: before * 1e6,
            after_bw_bytes_per_s: after * 1e6,
            ..Default::default()
        };
        doc.tests.push(TestResult {
            name: "first pass".into(),
            family: "sustain".into(),
            runs: vec![RunResult {
                run: 1,
                bw_bytes_per_s: Some(900e6),
                ..Default::default()
            }],
            sustain: Some(SustainDetail {
                pass: "first".into(),
                phases: vec![phase(3000.0), phase(1200.0), phase(400.0)],
                cliffs: vec![cliff(3000.0, 1200.0), cliff(1200.0, 400.0)],
                ..Default::default()
            }),
            ..Default::default()
        });
        let loaded = Loaded {
            path: "sustain.json".into(),
            doc,
        };
        let csv = super::render(std::slice::from_ref(&loaded));
        let mut lines = csv.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let row: Vec<&str> = lines.next().unwrap().split(',').collect();
        let col = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
        assert_eq!(col("settled_bw_bytes_per_s"), "400000000");
        assert_eq!(col("after_cliff_bw_bytes_per_s"), "1200000000");
        // The report heads the pass with that figure.
        let md = crate::report::markdown::render(&crate::report::document::build(
            std::slice::from_ref(&loaded),
        ));
        assert!(md.contains("400.00 settled MB/s"), "{md}");
    }
}

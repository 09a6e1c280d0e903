//! Matrix sections of the report: the configurations, rankings of the configurations per
//! test (bars, best first), and the cluster-size × file-size heat maps of the small-file
//! tests, then each configuration's own table.

use std::collections::{BTreeMap, BTreeSet};

use crate::analysis::matrix::{WORKLOAD_PARAM, cache_unchecked, test_cache_absorbed};
use crate::model::matrix::aged_run_of;
use crate::model::{ResultDoc, Summary, TestResult};
use crate::report::blocks::{Block, TableBlock, summary_cell, summary_table};
use crate::report::charts::{latency_curves, tick_fmt};
use crate::report::heatmap::heat_map;
use crate::report::matrix_table::{
    CACHE_ABSORBED_CELL, cache_absorbed_note, cache_unchecked_note, first_line,
};
use crate::report::metrics::{Better, direction, fmt_value, label, primary_metric, table_figure};
use crate::report::svg::{Bar, bar_chart};
use crate::units::{fmt_size_exact, parse_size};

pub fn blocks(doc: &ResultDoc, out: &mut Vec<Block>) {
    out.push(Block::Heading(3, "Configurations".into()));
    out.push(Block::Table(configurations_table(doc)));
    rankings(doc, out);
    heat_maps(doc, out);
    let shared = shared_names(doc);
    for c in doc.configurations.iter().filter(|c| !c.tests.is_empty()) {
        out.push(Block::Heading(3, format!("Configuration {}", c.label)));
        let named: Vec<(String, &TestResult)> = c
            .tests
            .iter()
            .map(|t| (shown_name(t, &shared), t))
            .collect();
        out.push(Block::Table(summary_table(&named)));
    }
}

/// Test names that tests of more than one workload carry: the fresh and the aged runs of
/// `--age` (`files:sizes=4K` and `files:sizes=4K (aged)`), two workloads of one family.
fn shared_names(doc: &ResultDoc) -> BTreeSet<&str> {
    let mut workloads: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for t in doc.configurations.iter().flat_map(|c| &c.tests) {
        let w = t.params.get(WORKLOAD_PARAM).map_or("", String::as_str);
        workloads.entry(&t.name).or_default().insert(w);
    }
    workloads
        .into_iter()
        .filter(|(_, w)| w.len() > 1)
        .map(|(n, _)| n)
        .collect()
}

/// A test's name in the report: with its workload's label (as the terminal's "Ranking for
/// WORKLOAD" gives it) when another workload's tests have the same name. The fresh and the
/// aged `4KiB create` were ranked as one test, each configuration twice under one label.
fn shown_name(t: &TestResult, shared: &BTreeSet<&str>) -> String {
    match t.params.get(WORKLOAD_PARAM) {
        Some(w) if shared.contains(t.name.as_str()) => format!("{w}: {}", t.name),
        _ => t.name.clone(),
    }
}

fn cluster(v: Option<u64>) -> String {
    v.map(fmt_size_exact).unwrap_or_else(|| "default".into())
}

/// The unit read back: "-" when none was (a skipped row made no file system; it is not the
/// tool's "default").
fn cluster_made(v: Option<u64>) -> String {
    v.map(fmt_size_exact).unwrap_or_else(|| "-".into())
}

/// The mount-option set as `--mount-opts` names it: none is `default`.
fn mount_options(o: &str) -> String {
    if o.is_empty() {
        "default".into()
    } else {
        o.to_string()
    }
}

fn configurations_table(doc: &ResultDoc) -> TableBlock {
    TableBlock {
        header: [
            "Configuration",
            "FS",
            "cluster asked",
            "cluster actual",
            "mount options",
            "mounted with",
            "status",
            "reason",
            "tests",
        ]
        .map(String::from)
        .to_vec(),
        rows: doc
            .configurations
            .iter()
            .map(|c| {
                vec![
                    c.label.clone(),
                    c.fs_type.clone(),
                    cluster(c.cluster_bytes),
                    cluster_made(c.cluster_bytes_actual),
                    mount_options(&c.mount_options),
                    // What applied, as the kernel shows it (`compress=zstd:3`).
                    c.mount_options_shown.clone().unwrap_or_else(|| "-".into()),
                    c.status.clone(),
                    // One line, as in the terminal (the full text is in the JSON).
                    c.reason
                        .as_deref()
                        .map(first_line)
                        .unwrap_or_else(|| "-".into()),
                    c.tests.len().to_string(),
                ]
            })
            .collect(),
        first_numeric: 8,
        numeric_end: None,
    }
}

/// For every test run on two or more configurations: the configurations ranked by the
/// test's headline metric, best first, with the gap to the best. Ranked and compared by the
/// figure the terminal's ranking uses (`table_figure`, as the test's own command's table:
/// the median of the runs, a files test's mean, a peak test's best run), the mean ± 95 % in
/// brackets when the figure is another: by the mean, `--repeat 3` could order the report
/// otherwise than the terminal, and its "vs best" disagreed with "relative".
fn rankings(doc: &ResultDoc, out: &mut Vec<Block>) {
    // (configuration, test, whether the page cache absorbed its workload's writes there)
    let shared = shared_names(doc);
    let mut by_name: BTreeMap<String, Vec<(&str, &TestResult, bool)>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for c in &doc.configurations {
        for t in &c.tests {
            let name = shown_name(t, &shared);
            if !by_name.contains_key(&name) {
                order.push(name.clone());
            }
            by_name
                .entry(name)
                .or_default()
                .push((&c.label, t, test_cache_absorbed(c, t)));
        }
    }
    let mut first = true;
    for name in order {
        let entries = &by_name[&name];
        let Some(metric) = primary_metric(entries[0].1) else {
            continue;
        };
        // (configuration, test, summary, the figure ranked, cache-absorbed)
        let measured: Vec<(&str, &TestResult, &Summary, f64, bool)> = entries
            .iter()
            .filter_map(|(c, t, a)| {
                let s = t.summary.get(&metric).filter(|s| s.n > 0)?;
                Some((*c, *t, s, table_figure(t, &metric, s).0, *a))
            })
            .collect();
        if measured.len() < 2 {
            continue;
        }
        let better = direction(&metric);
        // What the figure is: the first test's, as the terminal names its workload's.
        let what = table_figure(entries[0].1, &metric, measured[0].2).1;
        let sorted = |absorbed: bool| {
            let mut v: Vec<(&str, &TestResult, &Summary, f64)> = measured
                .iter()
                .filter(|m| m.4 == absorbed)
                .map(|m| (m.0, m.1, m.2, m.3))
                .collect();
            v.sort_by(|a, b| match better {
                Better::Higher => b.3.total_cmp(&a.3),
                Better::Lower => a.3.total_cmp(&b.3),
            });
            v
        };
        // Ranked: the configurations measured on the device; apart, after them: those whose
        // figures the page cache absorbed (never "best").
        let (ranked, apart) = (sorted(false), sorted(true));
        if first {
            out.push(Block::Heading(3, "Rankings".into()));
            first = false;
        }
        let title = format!("{name}: {} by configuration", label(&metric));
        let bars: Vec<Bar> = ranked
            .iter()
            .map(|(c, _, s, f)| (c.to_string(), s, f))
            .chain(
                apart
                    .iter()
                    .map(|(c, _, s, f)| (format!("{c} (cache)"), s, f)),
            )
            .map(|(c, s, f)| Bar {
                label: c,
                value: *f,
                ci: (s.n >= 2).then_some((s.ci95_low, s.ci95_high)),
                text: fmt_value(&metric, *f),
            })
            .collect();
        let axis = if apart.is_empty() {
            format!(
                "{}, {what} (best first; error bar = 95 % CI of the mean)",
                label(&metric)
            )
        } else {
            format!(
                "{}, {what} (best first, then \"(cache)\": not ranked, the page cache absorbed the writes; error bar = 95 % CI of the mean)",
                label(&metric)
            )
        };
        out.push(Block::Chart {
            svg: bar_chart(&title, &axis, &bars, &*tick_fmt(&metric)),
            caption: title.clone(),
        });
        let named: Vec<(String, &TestResult)> = entries
            .iter()
            .map(|(c, t, _)| (c.to_string(), *t))
            .collect();
        if let Some(svg) = latency_curves(
            &format!("{name}: latency percentiles by configuration"),
            &named,
        ) {
            out.push(Block::Chart {
                svg,
                caption: format!(
                    "{name}: latency by percentile (submit to completion), one line per configuration"
                ),
            });
        }
        let best = ranked.first().map(|r| r.3);
        out.push(Block::Heading(4, title));
        let rows_ranked = ranked.iter().enumerate().map(|(i, (c, t, s, f))| {
            vec![
                (i + 1).to_string(),
                c.to_string(),
                summary_cell(t, &metric, s),
                match best {
                    _ if i == 0 => "best".into(),
                    Some(b) => format!("{:+.1} %", (f / b - 1.0) * 100.0),
                    None => "-".into(),
                },
            ]
        });
        let rows_apart = apart.iter().map(|(c, t, s, _)| {
            vec![
                "-".into(),
                c.to_string(),
                summary_cell(t, &metric, s),
                CACHE_ABSORBED_CELL.into(),
            ]
        });
        out.push(Block::Table(TableBlock {
            header: [
                "#".into(),
                "Configuration".into(),
                // A mean is shown with its own interval: "files/s: mean (mean ± …)" said it twice.
                if what == "mean" {
                    format!("{}: mean ± 95 % CI", label(&metric))
                } else {
                    format!("{}: {what} (mean ± 95 % CI)", label(&metric))
                },
                format!("vs best ({what})"),
            ]
            .to_vec(),
            rows: rows_ranked.chain(rows_apart).collect(),
            first_numeric: 2,
            numeric_end: None,
        }));
        let unchecked: Vec<&str> = ranked
            .iter()
            .filter(|(l, _, _, _)| {
                doc.configurations
                    .iter()
                    .any(|c| c.label == *l && cache_unchecked(doc, c))
            })
            .map(|r| r.0)
            .collect();
        if let Some(n) = cache_unchecked_note(&unchecked) {
            out.push(Block::Para(n.trim_end().to_string()));
        }
        if !apart.is_empty() {
            let labels: Vec<&str> = apart.iter().map(|a| a.0).collect();
            out.push(Block::Para(
                cache_absorbed_note(&labels, !ranked.is_empty())
                    .trim_end()
                    .to_string(),
            ));
        }
    }
}

/// File size of a files test in bytes (the contract's `file_size_bytes`, else its token).
fn file_size(t: &TestResult) -> Option<u64> {
    t.params
        .get("file_size_bytes")
        .and_then(|v| v.parse().ok())
        .or_else(|| parse_size(t.params.get("size_token")?).ok())
}

/// The heat-map column of a files test: its size token, else its size in bytes.
fn size_column(t: &TestResult) -> String {
    t.params
        .get("size_token")
        .cloned()
        .unwrap_or_else(|| fmt_size_exact(file_size(t).unwrap_or(0)))
}

/// Whether a test is of a workload's runs on the aged file system (`matrix --age`).
fn is_aged(t: &TestResult) -> bool {
    t.params
        .get(WORKLOAD_PARAM)
        .is_some_and(|w| aged_run_of(w).is_some())
}

/// The files workload whose heat maps hold test `t`: its own, or for a run on the aged file
/// system the fresh workload's (`files:sizes=4K` for `files:sizes=4K (aged)`), whose map
/// its own is paired with; empty in results without the workload's label.
fn fresh_workload(t: &TestResult) -> &str {
    let w = t.params.get(WORKLOAD_PARAM).map_or("", String::as_str);
    aged_run_of(w).unwrap_or(w)
}

/// One heat map per files workload and phase, titled by the workload as the terminal's
/// "Ranking for WORKLOAD" names it: configurations (file system and cluster size) down,
/// file sizes across, files per second in the cells (the figure `iolab files`'s table gives,
/// `table_figure`: the mean of the runs, as the matrix ranks them). Two files workloads
/// that share a size (`files:sizes=4K` and `files:sizes=4K,64K:phases=create`) had one
/// map, the first workload's test filling each cell and the other's dropped. With `--age`,
/// a second map of the aged runs on the same rows, columns and colour scale, its table
/// giving each cell's change from the fresh one (the aged runs were dropped: the first test
/// of a size, the fresh one, filled its cell).
fn heat_maps(doc: &ResultDoc, out: &mut Vec<Block>) {
    // Each workload's phases, in order of first appearance.
    let mut maps: Vec<(&str, Vec<String>)> = Vec::new();
    for c in &doc.configurations {
        for t in c.tests.iter().filter(|t| t.family == "files") {
            let w = fresh_workload(t);
            let p = t.params.get("phase").cloned().unwrap_or_default();
            match maps.iter_mut().find(|(x, _)| *x == w) {
                Some((_, phases)) if phases.contains(&p) => {}
                Some((_, phases)) => phases.push(p),
                None => maps.push((w, vec![p])),
            }
        }
    }
    for (workload, phases) in maps {
        for phase in phases {
            heat_maps_of(doc, workload, &phase, out);
        }
    }
}

/// The heat map of one files workload's phase (and, with `--age`, its aged runs' map).
fn heat_maps_of(doc: &ResultDoc, workload: &str, phase: &str, out: &mut Vec<Block>) {
    let metric = "files_per_s";
    let in_phase = |t: &&TestResult| {
        t.family == "files"
            && fresh_workload(t) == workload
            && t.params.get("phase").map(|p| p.as_str()).unwrap_or("") == phase
            && file_size(t).is_some()
    };
    // One column per size as asked (the token), as the terminal's Table 1 has it:
    // `cluster` is one column whatever each file system's cluster (keyed by bytes it was
    // one "cluster" column per distinct unit, and a `4K` next to a 4 KiB `cluster` hid
    // the one or the other). Ordered by the smallest size each token took.
    let mut sizes: Vec<(u64, String)> = Vec::new();
    for t in doc
        .configurations
        .iter()
        .flat_map(|c| c.tests.iter().filter(in_phase))
    {
        let b = file_size(t).unwrap_or(0);
        let tok = size_column(t);
        match sizes.iter_mut().find(|(_, s)| *s == tok) {
            Some(col) => col.0 = col.0.min(b),
            None => sizes.push((b, tok)),
        }
    }
    sizes.sort();
    let mut configs: Vec<_> = doc
        .configurations
        .iter()
        .filter(|c| c.tests.iter().any(|t| in_phase(&t)))
        .collect();
    configs.sort_by_key(|c| {
        (
            c.fs_type.clone(),
            c.cluster_bytes_actual.or(c.cluster_bytes),
            c.label.clone(),
        )
    });
    if configs.is_empty() || sizes.is_empty() {
        return;
    }
    let rows: Vec<String> = configs.iter().map(|c| c.label.clone()).collect();
    let cols: Vec<String> = sizes.iter().map(|(_, t)| t.clone()).collect();
    // The fresh (`aged` false) or the aged runs' cells: each the figure `iolab files`'s
    // table gives, and which figure that is.
    let mut what = "mean";
    let mut grid = |aged: bool| -> Vec<Vec<Option<f64>>> {
        configs
            .iter()
            .map(|c| {
                sizes
                    .iter()
                    .map(|(_, tok)| {
                        c.tests
                            .iter()
                            .filter(in_phase)
                            .find(|t| is_aged(t) == aged && size_column(t) == *tok)
                            .and_then(|t| {
                                let s = t.summary.get(metric).filter(|s| s.n > 0)?;
                                let (v, of) = table_figure(t, metric, s);
                                what = of;
                                Some(v)
                            })
                    })
                    .collect()
            })
            .collect()
    };
    let fresh = grid(false);
    let aged = grid(true);
    let has_aged = aged.iter().flatten().any(Option::is_some);
    // One colour scale for both maps: the same shade is the same rate.
    let scale: Vec<f64> = fresh
        .iter()
        .chain(if has_aged { &aged[..] } else { &[] })
        .flatten()
        .flatten()
        .copied()
        .collect();
    let fmt = |v: f64| fmt_value(metric, v);
    let of_workload = if workload.is_empty() {
        String::new()
    } else {
        format!("{workload}: ")
    };
    let mut map = |runs: &str, cells: &[Vec<Option<f64>>], vs: Option<&[Vec<Option<f64>>]>| {
        let title = format!(
            "{of_workload}files {phase}{runs}: {} by configuration × file size",
            label(metric)
        );
        out.push(Block::Heading(3, title.clone()));
        let same = if has_aged {
            "; one colour scale for the fresh and the aged map"
        } else {
            ""
        };
        out.push(Block::Chart {
            svg: heat_map(&title, &rows, &cols, cells, &scale, true, &fmt),
            caption: format!(
                "{title} (darker is faster; the {what} of the runs, as `iolab files` gives files/s{same})"
            ),
        });
        let mut header = vec!["Configuration".to_string()];
        header.extend(cols.iter().cloned());
        let cell = |i: usize, j: usize, v: Option<f64>| {
            let Some(v) = v else { return "-".to_string() };
            match vs.and_then(|f| f[i][j]).filter(|f| *f > 0.0) {
                Some(f) => format!("{} ({:+.1} %)", fmt(v), (v / f - 1.0) * 100.0),
                None => fmt(v),
            }
        };
        out.push(Block::Table(TableBlock {
            header,
            rows: rows
                .iter()
                .zip(cells)
                .enumerate()
                .map(|(i, (r, cs))| {
                    let mut row = vec![r.clone()];
                    row.extend(cs.iter().enumerate().map(|(j, v)| cell(i, j, *v)));
                    row
                })
                .collect(),
            first_numeric: 1,
            numeric_end: None,
        }));
        if vs.is_some() {
            out.push(Block::Para(format!(
                "Aged: the same file system after `iolab age`; in brackets the change from its fresh run ({what} files/s)."
            )));
        }
    };
    if has_aged {
        map(", fresh", &fresh, None);
        map(", aged", &aged, Some(&fresh));
    } else {
        map("", &fresh, None);
    }
}

/// A matrix document of these configurations (the tests' here and in matrix_table.rs).
#[cfg(test)]
pub(crate) fn matrix_of(
    configurations: Vec<crate::model::matrix::ConfigurationResult>,
) -> ResultDoc {
    let mut doc = ResultDoc::new("matrix", vec![], Default::default());
    doc.configurations = configurations;
    doc
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::matrix::ConfigurationResult;

    /// The tables of `out`, in order.
    fn tables(out: &[Block]) -> Vec<&TableBlock> {
        out.iter()
            .filter_map(|b| match b {
                Block::Table(t) => Some(t),
                _ => None,
            })
            .collect()
    }

    /// The report's heat-map blocks of `doc`.
    fn heat_map_blocks(doc: &ResultDoc) -> Vec<Block> {
        let mut out = Vec::new();
        heat_maps(doc, &mut out);
        out
    }

    /// The level-3 headings of `out`, in order.
    fn headings(out: &[Block]) -> Vec<&str> {
        out.iter()
            .filter_map(|b| match b {
                Block::Heading(3, h) => Some(h.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The first table of `out`.
    fn first_table(out: &[Block]) -> &TableBlock {
        tables(out)[0]
    }

    /// `--sizes 1,cluster,4K` on NTFS at 1 KiB and 4 KiB clusters: one `cluster` column
    /// (each file system at its own cluster), and the 4 KiB cluster files are not shown
    /// under `4K` (columns were keyed by bytes: "1 | cluster | 4K" held the 4 KiB
    /// configuration's cluster files under 4K, and each distinct unit gave another
    /// "cluster" column).
    #[test]
    fn heat_map_has_one_column_per_size_token() {
        let test = |tok: &str, bytes: u64, files_per_s: f64| {
            let mut t = TestResult {
                name: format!("{tok} create"),
                family: "files".into(),
                ..Default::default()
            };
            t.params.insert("phase".into(), "create".into());
            t.params.insert("size_token".into(), tok.into());
            t.params.insert("file_size_bytes".into(), bytes.to_string());
            t.summary.insert(
                "files_per_s".into(),
                crate::stats::summary::summarize(&[files_per_s]),
            );
            t
        };
        let config = |label: &str, unit: u64, tests: Vec<TestResult>| ConfigurationResult {
            label: label.into(),
            fs_type: "ntfs".into(),
            status: "ok".into(),
            cluster_bytes_actual: Some(unit),
            tests,
            ..Default::default()
        };
        let doc = matrix_of(vec![
            config(
                "ntfs 1KiB",
                1024,
                vec![
                    test("1", 1, 100.0),
                    test("cluster", 1024, 200.0),
                    test("4K", 4096, 300.0),
                ],
            ),
            config(
                "ntfs 4KiB",
                4096,
                vec![test("1", 1, 110.0), test("cluster", 4096, 220.0)],
            ),
        ]);
        let out = heat_map_blocks(&doc);
        let tables = tables(&out);
        assert_eq!(tables.len(), 1);
        let t = tables[0];
        assert_eq!(t.header, ["Configuration", "1", "cluster", "4K"]);
        assert_eq!(t.rows[0], ["ntfs 1KiB", "100.0", "200.0", "300.0"]);
        assert_eq!(t.rows[1], ["ntfs 4KiB", "110.0", "220.0", "-"]);
    }

    /// `--age`: each cell held its fresh test only (the first of its size; the aged runs
    /// were dropped without a word). Now a fresh and an aged map, one colour scale, each
    /// cell the mean of the runs as `iolab files` gives files/s (the median here read one
    /// number where `iolab files` read another), the aged cells with their change from the
    /// fresh ones; a result without aged runs has its one map, titled by its workload, and
    /// an old result without the workload's label its one map under the old title.
    #[test]
    fn heat_map_gives_the_aged_runs_apart() {
        let w = "files:sizes=4K";
        let aged = crate::model::matrix::aged_label(w);
        // ext4's fresh runs: median 1,000, mean 4,000 (`iolab files` gives the mean).
        let doc = matrix_of(vec![
            files_config(
                "ext4",
                &[
                    (w, "4K", &[1000.0, 1000.0, 10000.0]),
                    (aged.as_str(), "4K", &[750.0]),
                ],
            ),
            files_config(
                "xfs",
                &[(w, "4K", &[2000.0]), (aged.as_str(), "4K", &[1000.0])],
            ),
        ]);
        let out = heat_map_blocks(&doc);
        assert_eq!(
            headings(&out),
            [
                "files:sizes=4K: files create, fresh: files/s by configuration × file size",
                "files:sizes=4K: files create, aged: files/s by configuration × file size"
            ]
        );
        let tables = tables(&out);
        assert_eq!(tables[0].rows, [["ext4", "4,000"], ["xfs", "2,000"]]);
        assert_eq!(
            tables[1].rows,
            [["ext4", "750.0 (-81.2 %)"], ["xfs", "1,000 (-50.0 %)"]]
        );
        assert!(out.iter().any(|b| matches!(b,
            Block::Para(p) if p.ends_with("change from its fresh run (mean files/s)."))));
        let charts: Vec<(&str, &str)> = out
            .iter()
            .filter_map(|b| match b {
                Block::Chart { svg, caption } => Some((svg.as_str(), caption.as_str())),
                _ => None,
            })
            .collect();
        assert!(
            charts[0]
                .1
                .contains("the mean of the runs, as `iolab files` gives files/s"),
            "{}",
            charts[0].1
        );
        assert!(charts[1].1.contains("one colour scale"), "{}", charts[1].1);
        // One scale: ext4's fresh 4,000 is the darkest cell of both maps, ext4's aged 750
        // the lightest; the aged map alone would have made its own 1,000 the darkest.
        assert!(charts[0].0.contains("hsl(210,70%,32%)"));
        assert!(!charts[1].0.contains("hsl(210,70%,32%)"));
        assert!(charts[1].0.contains("hsl(210,70%,92%)"));

        // Without aged runs: one map, titled by its workload; a result without the
        // workload's label (none written by this version) under the old title.
        let alone = |labelled: bool| {
            let mut c = files_config("ext4", &[(w, "4K", &[1000.0])]);
            if !labelled {
                c.tests[0].params.remove(WORKLOAD_PARAM);
            }
            let out = heat_map_blocks(&matrix_of(vec![c]));
            assert_eq!(first_table(&out).rows, [["ext4", "1,000"]]);
            headings(&out).join("\n")
        };
        assert_eq!(
            alone(true),
            "files:sizes=4K: files create: files/s by configuration × file size"
        );
        assert_eq!(
            alone(false),
            "files create: files/s by configuration × file size"
        );
    }

    /// The report's per-test ranking lists a configuration whose writes the page cache
    /// absorbed after the measured ones, unnumbered, never "best", with the reason.
    #[test]
    fn a_cache_absorbed_configuration_is_not_best() {
        let config = |label: &str, iops: f64, absorbed: bool| {
            let mut t = TestResult {
                name: "RND4K Q1T1 write".into(),
                family: "block".into(),
                ..Default::default()
            };
            t.params.insert(
                crate::analysis::matrix::WORKLOAD_PARAM.into(),
                "run:x".into(),
            );
            t.summary
                .insert("iops".into(), crate::stats::summary::summarize(&[iops]));
            ConfigurationResult {
                label: label.into(),
                status: "ok".into(),
                tests: vec![t],
                workloads: vec![crate::model::matrix::WorkloadOutcome {
                    workload: "run:x".into(),
                    status: "ok".into(),
                    cache_absorbed: if absorbed {
                        vec!["RND4K Q1T1 write".into()]
                    } else {
                        vec![]
                    },
                    ..Default::default()
                }],
                ..Default::default()
            }
        };
        let doc = matrix_of(vec![
            config("exfat", 60000.0, true),
            config("ext4", 8000.0, false),
            config("xfs", 4000.0, false),
        ]);
        let mut out = Vec::new();
        rankings(&doc, &mut out);
        let table = first_table(&out);
        assert_eq!(table.rows[0][..2], ["1", "ext4"]);
        assert_eq!(table.rows[0][3], "best");
        assert_eq!(table.rows[1][..2], ["2", "xfs"]);
        assert_eq!(table.rows[1][3], "-50.0 %");
        assert_eq!(table.rows[2][..2], ["-", "exfat"]);
        assert_eq!(table.rows[2][3], "not ranked: cache-absorbed");
        assert!(out.iter().any(|b| matches!(b,
            Block::Para(p) if p.starts_with("not ranked: exfat: the page cache took the writes"))));
    }

    /// Three runs each: ext4's median 1,000 IOPS (mean 4,000: one run of 10,000), xfs's
    /// median 2,000 (mean 2,000). The terminal ranks by the median: xfs first, ext4 "2.00×
    /// slower". The report ranked by the mean (ext4 first, xfs "-50.0 %"). Both renderings
    /// now rank xfs first, ext4 at -50.0 % of its median, the mean in brackets.
    #[test]
    fn the_report_ranks_by_the_terminal_s_median() {
        let config = |label: &str, iops: &[f64]| {
            let mut t = TestResult {
                name: "RND4K Q1T1 read".into(),
                family: "block".into(),
                runs: iops
                    .iter()
                    .map(|&v| crate::model::RunResult {
                        iops: Some(v),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            };
            t.params.insert(
                crate::analysis::matrix::WORKLOAD_PARAM.into(),
                "run:x".into(),
            );
            crate::stats::repeat::summarize_test(&mut t);
            ConfigurationResult {
                label: label.into(),
                status: "ok".into(),
                tests: vec![t],
                ..Default::default()
            }
        };
        let doc = matrix_of(vec![
            config("ext4", &[1000.0, 1000.0, 10000.0]),
            config("xfs", &[2000.0, 2000.0, 2000.0]),
        ]);
        let terminal = crate::report::matrix_table::render_ranking(&doc, "run:x");
        let xfs_first = |out: &str| out.find("xfs").unwrap() < out.find("ext4").unwrap();
        assert!(xfs_first(&terminal), "{terminal}");
        assert!(terminal.contains("2.00× slower"), "{terminal}");
        let mut out = Vec::new();
        rankings(&doc, &mut out);
        let table = first_table(&out);
        assert_eq!(table.header[2], "IOPS: median (mean ± 95 % CI)");
        assert_eq!(table.header[3], "vs best (median)");
        assert_eq!(table.rows[0][..2], ["1", "xfs"]);
        assert_eq!(table.rows[0][2], "2,000 (mean 2,000 ± 0)");
        assert_eq!(table.rows[1][..2], ["2", "ext4"]);
        assert!(
            table.rows[1][2].starts_with("1,000 (mean 4,000 ± "),
            "{table:?}"
        );
        assert_eq!(table.rows[1][3], "-50.0 %");
        for page in [
            crate::report::markdown::render(&out),
            crate::report::html::render(&out),
        ] {
            assert!(xfs_first(&page), "{page}");
            assert!(page.contains("-50.0 %"), "{page}");
        }
    }

    /// A files test of `workload` on configuration `label`: its runs' files/s and seconds
    /// per portion of 100 files, summarized as the matrix does.
    fn files_config(label: &str, tests: &[(&str, &str, &[f64])]) -> ConfigurationResult {
        let tests = tests
            .iter()
            .map(|(workload, tok, rates)| {
                let mut t = TestResult {
                    name: format!("{tok} create"),
                    family: "files".into(),
                    runs: rates
                        .iter()
                        .map(|&v| crate::model::RunResult {
                            files_per_s: Some(v),
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                };
                for (k, v) in [
                    (WORKLOAD_PARAM, *workload),
                    ("phase", "create"),
                    ("size_token", tok),
                    ("file_size_bytes", "4096"),
                ] {
                    t.params.insert(k.into(), v.into());
                }
                crate::stats::repeat::summarize_test(&mut t);
                let times: Vec<f64> = rates.iter().map(|r| 100.0 / r).collect();
                t.summary.insert(
                    "seconds_per_portion".into(),
                    crate::stats::summary::summarize(&times),
                );
                t
            })
            .collect();
        ConfigurationResult {
            label: label.into(),
            fs_type: label.into(),
            status: "ok".into(),
            tests,
            ..Default::default()
        }
    }

    /// `iolab files` gives a test's mean of the runs (files/s, and its Belov cells of
    /// seconds per portion); the matrix ranked its files tests by the median, in the
    /// terminal and the report, and its Table 1 gave the median time: ext4's 4K create read
    /// 1,000 files/s there and 4,000 in `iolab files`. Every view now gives the mean: ext4
    /// (mean 4,000) ranks first, xfs (mean 2,000, median 2,000) "2.00× slower", -50.0 %.
    #[test]
    fn files_tests_are_ranked_by_the_mean_as_iolab_files_gives_it() {
        let w = "files:sizes=4K";
        let doc = matrix_of(vec![
            files_config("ext4", &[(w, "4K", &[1000.0, 1000.0, 10000.0])]),
            files_config("xfs", &[(w, "4K", &[2000.0, 2000.0, 2000.0])]),
        ]);
        let ext4_first = |out: &str| out.find("ext4").unwrap() < out.find("xfs").unwrap();
        let terminal = crate::report::matrix_table::render_ranking(&doc, w);
        assert!(ext4_first(&terminal), "{terminal}");
        assert!(terminal.contains("4,000 files/s"), "{terminal}");
        assert!(terminal.contains("2.00× slower"), "{terminal}");
        // Belov's Table 1: the mean of the runs' seconds per portion of 100 files, as
        // `iolab files`'s cells ((0.1 + 0.1 + 0.01) / 3 = 0.070; the median was 0.100).
        let table1 = crate::report::matrix_table::render_table1(&doc, w).unwrap();
        let row = table1.lines().find(|l| l.contains("ext4")).unwrap();
        assert!(row.contains("0.070") && !row.contains("0.100"), "{table1}");
        let mut out = Vec::new();
        rankings(&doc, &mut out);
        let table = first_table(&out);
        assert_eq!(table.header[2], "files/s: mean ± 95 % CI");
        assert_eq!(table.header[3], "vs best (mean)");
        assert_eq!(table.rows[0][..2], ["1", "ext4"]);
        assert!(table.rows[0][2].starts_with("4,000 ± "), "{table:?}");
        assert_eq!(table.rows[1][..2], ["2", "xfs"]);
        assert_eq!(table.rows[1][2], "2,000 ± 0");
        assert_eq!(table.rows[1][3], "-50.0 %");
    }

    /// Two files workloads sharing a size (`files:sizes=4K` and
    /// `files:sizes=4K,64K:phases=create`) had one heat map: each cell the first workload's
    /// test, the other's 4K create dropped without a word. Each workload has its own map,
    /// titled by its label, its own figures in its cells.
    #[test]
    fn two_files_workloads_have_a_heat_map_each() {
        let (a, b) = ("files:sizes=4K", "files:phases=create:sizes=4K,64K");
        let doc = matrix_of(vec![
            files_config(
                "ext4",
                &[
                    (a, "4K", &[1000.0]),
                    (b, "4K", &[3000.0]),
                    (b, "64K", &[500.0]),
                ],
            ),
            files_config("xfs", &[(a, "4K", &[2000.0]), (b, "4K", &[4000.0])]),
        ]);
        let out = heat_map_blocks(&doc);
        assert_eq!(
            headings(&out),
            [
                "files:sizes=4K: files create: files/s by configuration × file size",
                "files:phases=create:sizes=4K,64K: files create: files/s by configuration × file size"
            ]
        );
        let tables = tables(&out);
        assert_eq!(tables[0].header, ["Configuration", "4K"]);
        assert_eq!(tables[0].rows, [["ext4", "1,000"], ["xfs", "2,000"]]);
        assert_eq!(tables[1].header, ["Configuration", "4K", "64K"]);
        assert_eq!(
            tables[1].rows,
            [["ext4", "3,000", "500.0"], ["xfs", "4,000", "-"]]
        );
    }

    /// `--age`: the fresh and the aged `4KiB create` were one ranking, each configuration in
    /// it twice under one label (`1 ext4`, `2 ext4`), and one configuration table held two
    /// rows of that name. Each workload's test is ranked apart, named with its workload.
    #[test]
    fn fresh_and_aged_tests_are_ranked_apart() {
        let test = |workload: &str, files_per_s: f64| {
            let mut t = TestResult {
                name: "4KiB create".into(),
                family: "files".into(),
                ..Default::default()
            };
            t.params.insert(WORKLOAD_PARAM.into(), workload.into());
            t.summary.insert(
                "files_per_s".into(),
                crate::stats::summary::summarize(&[files_per_s]),
            );
            t
        };
        let config = |label: &str, fresh: f64, aged: f64| ConfigurationResult {
            label: label.into(),
            status: "ok".into(),
            tests: vec![
                test("files:sizes=4K", fresh),
                test("files:sizes=4K (aged)", aged),
            ],
            ..Default::default()
        };
        let doc = matrix_of(vec![
            config("ext4", 40000.0, 30000.0),
            config("xfs", 20000.0, 10000.0),
        ]);
        let mut out = Vec::new();
        blocks(&doc, &mut out);
        let tables: Vec<(&str, &TableBlock)> = out
            .windows(2)
            .filter_map(|w| match w {
                [Block::Heading(4, h), Block::Table(t)] => Some((h.as_str(), t)),
                _ => None,
            })
            .collect();
        let heads: Vec<&str> = tables.iter().map(|t| t.0).collect();
        assert_eq!(
            heads,
            [
                "files:sizes=4K: 4KiB create: files/s by configuration",
                "files:sizes=4K (aged): 4KiB create: files/s by configuration"
            ]
        );
        for (_, t) in &tables {
            let labels: Vec<&str> = t.rows.iter().map(|r| r[1].as_str()).collect();
            assert_eq!(labels, ["ext4", "xfs"]);
        }
        assert_eq!(tables[1].1.rows[1][3], "-66.7 %");
        let at = out
            .iter()
            .position(|b| matches!(b, Block::Heading(3, h) if h == "Configuration ext4"))
            .unwrap();
        let ext4 = first_table(&out[at..]);
        assert_eq!(ext4.rows[0][0], "files:sizes=4K: 4KiB create");
        assert_eq!(ext4.rows[1][0], "files:sizes=4K (aged): 4KiB create");
    }

    /// A skipped row made no file system: its unit made is "-", not the "default" of a unit
    /// not asked for; no mount options is the `default` set, as `--mount-opts` names it.
    #[test]
    fn a_skipped_row_made_no_unit() {
        let doc = matrix_of(vec![ConfigurationResult {
            label: "f2fs".into(),
            fs_type: "f2fs".into(),
            status: "skipped".into(),
            reason: Some("no f2fs driver".into()),
            ..Default::default()
        }]);
        let t = configurations_table(&doc);
        assert_eq!(
            t.rows[0],
            [
                "f2fs",
                "f2fs",
                "default",
                "-",
                "default",
                "-",
                "skipped",
                "no f2fs driver",
                "0"
            ]
        );
    }

    /// `--mount-opts compress=zstd` said only what was asked; what the kernel applied
    /// (level 3, its defaults) was nowhere. The row now carries mountinfo's options.
    #[test]
    fn a_row_shows_the_options_it_was_mounted_with() {
        let doc = matrix_of(vec![ConfigurationResult {
            label: "btrfs compress=zstd".into(),
            fs_type: "btrfs".into(),
            mount_options: "compress=zstd".into(),
            mount_options_shown: Some("rw,relatime,compress=zstd:3,space_cache=v2".into()),
            status: "ok".into(),
            ..Default::default()
        }]);
        let t = configurations_table(&doc);
        assert_eq!(
            t.rows[0][4..6],
            [
                "compress=zstd",
                "rw,relatime,compress=zstd:3,space_cache=v2"
            ]
        );
    }
}

//! The terminal report of `iolab age` and the layout figures `iolab info` shows.

use comfy_table::{Cell, ContentArrangement};

use crate::model::ResultDoc;
use crate::model::layout::{LayoutSummary, fmt_score};
use crate::report::table::{new_table, right};
use crate::units::{fmt_size_iec, fmt_thousands};

/// Rows (label, value) describing a layout: score, pieces, fragmented files, free space.
pub fn layout_rows(l: &LayoutSummary) -> Vec<(String, String)> {
    let mut rows = vec![
        (
            "layout score".to_string(),
            format!(
                "{} (1.000 = every file contiguous; {} files{}, {} blocks of {} B)",
                fmt_score(l.layout_score),
                fmt_thousands(l.files as f64),
                if l.truncated { ", the first ones" } else { "" },
                fmt_thousands(l.blocks as f64),
                l.block_size_bytes
            ),
        ),
        (
            "pieces per file".to_string(),
            // No file read (tmpfs has no FIEMAP): "0.00 mean, 0 at most" read as a perfect
            // layout.
            if l.files == 0 {
                "- (no file's extents were read)".to_string()
            } else {
                format!(
                    "{:.2} mean, {} at most; {} files in more than one piece",
                    l.pieces_per_file_mean,
                    l.pieces_per_file_max,
                    fmt_thousands(l.fragmented_files as f64)
                )
            },
        ),
    ];
    // Files the scan did not read by FIEMAP, counted as every other count (the unreadable
    // ones printed "3014 files" under "3,014 files" mapped by block).
    for (files, label, how) in [
        (
            l.files_mapped_by_block,
            "mapped by block",
            "with FIBMAP, block by block, as filefrag does (no FIEMAP on this file system)",
        ),
        (
            l.files_unreadable,
            "not readable",
            "(no FIEMAP, gone, or no permission)",
        ),
    ] {
        if files > 0 {
            let n = fmt_thousands(files as f64);
            rows.push((label.to_string(), format!("{n} files {how}")));
        }
    }
    match (&l.free_space, &l.free_space_note) {
        (Some(f), _) => rows.push((
            "free space".to_string(),
            format!(
                "{} in {} extents (mean {}), {:.1} % in extents of 1 MiB or more ({})",
                fmt_size_iec(f.free_bytes),
                fmt_thousands(f.free_extents as f64),
                fmt_size_iec(f.avg_free_extent_bytes as u64),
                f.share_in_1mib_extents * 100.0,
                f.source
            ),
        )),
        (None, Some(why)) => rows.push(("free space".to_string(), format!("not reported: {why}"))),
        (None, None) => {}
    }
    rows
}

/// The parts of an aging run's report: the line above the table, the progress table
/// (header, rows), the lines under it and the layout after aging as (key, value) rows.
type AgeParts = (
    String,
    (Vec<String>, Vec<Vec<String>>),
    Vec<String>,
    Vec<(String, String)>,
);

/// The terminal report's content, for `iolab report` too.
pub fn age_parts(doc: &ResultDoc) -> Option<AgeParts> {
    let d = doc.tests.iter().find_map(|t| t.age.as_ref())?;
    let head = format!(
        "Aged {} with profile {} (seed {}): {} written ({:.1}x the file system), {}",
        d.dir,
        d.profile,
        d.seed,
        fmt_size_iec(d.bytes_written),
        d.bytes_written as f64 / d.fs_size_bytes.max(1) as f64,
        d.fullness_text()
    );
    let header = ["written", "full", "files", "layout score"]
        .map(String::from)
        .to_vec();
    let rows = d
        .progress
        .iter()
        .map(|p| {
            vec![
                fmt_size_iec(p.bytes_written),
                format!("{:.1} %", p.fullness * 100.0),
                fmt_thousands(p.files as f64),
                fmt_score(p.layout_score),
            ]
        })
        .collect();
    // The rate is over the aging itself; `elapsed_s` also holds the layout scoring every
    // tenth of the way (it printed "305 created, 0 deleted; 232 per second (1.8 s)").
    let ops = (d.files_created + d.files_deleted) as f64;
    let aging_s = if d.file_ops_per_s > 0.0 {
        ops / d.file_ops_per_s
    } else {
        d.elapsed_s
    };
    let after = vec![
        format!(
            "files: {} created, {} deleted, {} grown, {} left; {} files created+deleted per second ({:.1} s of aging, {} writer{}; {:.1} s with the layout scoring)",
            fmt_thousands(d.files_created as f64),
            fmt_thousands(d.files_deleted as f64),
            fmt_thousands(d.files_grown as f64),
            fmt_thousands(d.files_left as f64),
            fmt_thousands(d.file_ops_per_s),
            aging_s,
            d.jobs.max(1),
            if d.jobs > 1 { "s" } else { "" },
            d.elapsed_s
        ),
        format!(
            "layout before: {} ({} files already there); after: {}",
            fmt_score(d.layout_before.layout_score),
            fmt_thousands(d.layout_before.files as f64),
            fmt_score(d.layout_after.layout_score)
        ),
    ];
    Some((head, (header, rows), after, layout_rows(&d.layout_after)))
}

/// The terminal report of an aging run.
pub fn render_age(doc: &ResultDoc) -> String {
    let Some((head, (header, rows), after, layout)) = age_parts(doc) else {
        // An aging stopped by Ctrl-C or an error printed "no aging result", which did not
        // say that it had stopped, nor what became of what it wrote.
        let how = match doc.status.as_str() {
            "interrupted" => "was interrupted",
            "killed" => "was killed",
            "failed" => "failed",
            _ => "did not finish",
        };
        return format!("aging {how}: the files it wrote are removed, nothing aged is kept\n");
    };
    let mut out = format!("{head}\n");
    let mut t = new_table(ContentArrangement::Dynamic);
    t.set_header(header);
    for cells in rows {
        t.add_row(cells.into_iter().map(right).collect::<Vec<_>>());
    }
    out.push_str(&t.to_string());
    out.push('\n');
    for line in after {
        out.push_str(&format!("{line}\n"));
    }
    for (k, v) in layout {
        out.push_str(&format!("  {k}: {v}\n"));
    }
    // As every other family's table ends (`inodes-short` was only in the JSON).
    out.push_str(&crate::report::table::render_warnings(doc));
    out
}

/// `matrix --age`: per configuration and test, the fresh and the aged headline value and
/// their ratio, with what aging did to the file system (layout score, pieces per file).
/// `headline` is the matrix's ranking metric of a test (name, value).
pub fn render_aging(
    doc: &ResultDoc,
    workloads: &[(String, String)],
    headline: impl Fn(&crate::model::TestResult) -> Option<(String, f64)>,
) -> String {
    use crate::model::TestResult;
    use crate::model::matrix::WORKLOAD_PARAM;
    let mut t = new_table(ContentArrangement::Dynamic);
    t.set_header(vec![
        "configuration",
        "test",
        "unit",
        "fresh",
        "aged",
        "aged / fresh",
        "layout after aging",
    ]);
    let mut rows = 0;
    for c in &doc.configurations {
        let ages: Vec<_> = c.runs.iter().filter_map(|r| r.age.as_ref()).collect();
        let layout = if ages.is_empty() {
            "-".to_string()
        } else {
            let n = ages.len() as f64;
            let score: Vec<f64> = ages
                .iter()
                .filter_map(|a| a.layout_after.layout_score)
                .collect();
            format!(
                "{} ({:.2} pieces/file)",
                if score.is_empty() {
                    "-".into()
                } else {
                    format!("{:.3}", score.iter().sum::<f64>() / score.len() as f64)
                },
                ages.iter()
                    .map(|a| a.layout_after.pieces_per_file_mean)
                    .sum::<f64>()
                    / n
            )
        };
        let of = |label: &str| -> Vec<&TestResult> {
            c.tests
                .iter()
                .filter(|t| t.params.get(WORKLOAD_PARAM).map(String::as_str) == Some(label))
                .collect()
        };
        for (fresh_label, aged_label) in workloads {
            let aged = of(aged_label);
            for f in of(fresh_label) {
                let Some((metric, fv)) = headline(f) else {
                    continue;
                };
                let av = aged
                    .iter()
                    .find(|a| a.name == f.name)
                    .and_then(|a| headline(a))
                    .filter(|(m, _)| *m == metric)
                    .map(|(_, v)| v);
                let fmt = |v: f64| {
                    if metric.ends_with("bytes_per_s") {
                        crate::units::fmt_mb_per_s(v)
                    } else {
                        // IOPS and files/s as every other table gives them: 54,575.
                        crate::units::fmt_thousands(v)
                    }
                };
                let unit = match metric.as_str() {
                    "bw_bytes_per_s" => "MB/s",
                    "files_per_s" => "files/s",
                    "iops" => "IOPS",
                    m => m,
                };
                t.add_row(vec![
                    Cell::new(&c.label),
                    // Two workloads' `4KiB create` rows say which workload each is.
                    Cell::new(crate::report::metrics::test_name(doc, f)),
                    Cell::new(unit),
                    right(fmt(fv)),
                    right(av.map(fmt).unwrap_or_else(|| "-".into())),
                    right(
                        av.map(|a| format!("{:.2}", a / fv))
                            .unwrap_or_else(|| "-".into()),
                    ),
                    Cell::new(&layout),
                ]);
                rows += 1;
            }
        }
    }
    if rows == 0 {
        return String::new();
    }
    format!("Fresh vs aged (the same file system before and after `iolab age`):\n{t}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An `age` document of one test with this aging detail.
    fn aged(detail: crate::model::age::AgeTestDetail) -> ResultDoc {
        let mut doc = ResultDoc::new("age", Vec::new(), Environment::default());
        doc.tests.push(TestResult {
            age: Some(detail),
            ..Default::default()
        });
        doc
    }

    #[test]
    fn no_file_read_shows_no_pieces_figure() {
        let l = LayoutSummary {
            files_unreadable: 2,
            ..Default::default()
        };
        let rows = layout_rows(&l);
        assert_eq!(rows[1].1, "- (no file's extents were read)");
        assert_eq!(rows[2].1, "2 files (no FIEMAP, gone, or no permission)");
    }

    /// Files not read by FIEMAP are counted with thousands separators, both kinds ("not
    /// readable: 3014 files" stood beside "mapped by block: 3,014 files").
    #[test]
    fn files_not_read_by_fiemap_are_counted_as_every_count() {
        let l = LayoutSummary {
            files_mapped_by_block: 3014,
            files_unreadable: 3014,
            ..Default::default()
        };
        let rows = layout_rows(&l);
        assert_eq!(
            rows[2],
            (
                "mapped by block".to_string(),
                "3,014 files with FIBMAP, block by block, as filefrag does (no FIEMAP on this file system)".to_string()
            )
        );
        assert_eq!(
            rows[3],
            (
                "not readable".to_string(),
                "3,014 files (no FIEMAP, gone, or no permission)".to_string()
            )
        );
    }
    /// The report ends with the run's warnings, as every other family's: `inodes-short`
    /// (and `fill-not-reached`) were in the JSON only, and the terminal showed the fullness
    /// reached as if it were the one asked.
    #[test]
    fn the_report_shows_the_warnings_and_the_fullness_asked() {
        let mut doc = aged(crate::model::age::AgeTestDetail {
            fill_target: 0.8,
            fullness: 0.223,
            ..Default::default()
        });
        doc.warn(crate::model::Warning {
            code: crate::model::WarningCode::FillNotReached,
            message: "aging ended at 22.3 % full".into(),
            test: None,
        });
        let text = render_age(&doc);
        assert!(text.contains("22.3 % full (80 % asked)"), "{text}");
        assert!(
            text.contains("warning [fill-not-reached]: aging ended at 22.3 % full"),
            "{text}"
        );
    }
    /// An aging that stopped says so (it printed "no aging result").
    #[test]
    fn an_aging_that_stopped_says_what_became_of_it() {
        let mut doc = ResultDoc::new("age", Vec::new(), Environment::default());
        doc.status = "interrupted".into();
        assert_eq!(
            render_age(&doc),
            "aging was interrupted: the files it wrote are removed, nothing aged is kept\n"
        );
        doc.status = "failed".into();
        assert!(render_age(&doc).starts_with("aging failed: "));
    }
    use crate::model::matrix::ConfigurationResult;
    use crate::model::{Environment, TestResult};

    /// The files line of an aging run: its rate with thousands separators, as its counts
    /// (it printed "1,622 created, ...; 4156 files created+deleted per second").
    #[test]
    fn the_aging_rate_has_thousands_separators() {
        let doc = aged(crate::model::age::AgeTestDetail {
            files_created: 1622,
            file_ops_per_s: 4156.4,
            ..Default::default()
        });
        let (_, _, after, _) = age_parts(&doc).unwrap();
        assert!(
            after[0].contains("1,622 created")
                && after[0].contains("; 4,156 files created+deleted"),
            "{}",
            after[0]
        );
    }

    /// The time beside the rate is the aging's: 305 files in 1.8 s printed as "232 files
    /// created+deleted per second (1.8 s, ...)", which does not divide (the 1.8 s held the
    /// layout scoring too).
    #[test]
    fn the_aging_rate_and_its_time_agree() {
        let doc = aged(crate::model::age::AgeTestDetail {
            files_created: 305,
            file_ops_per_s: 231.54,
            elapsed_s: 1.75,
            jobs: 2,
            ..Default::default()
        });
        let (_, _, after, _) = age_parts(&doc).unwrap();
        assert!(
            after[0].contains(
                "232 files created+deleted per second (1.3 s of aging, 2 writers; 1.8 s with the layout scoring)"
            ),
            "{}",
            after[0]
        );
    }

    /// Two files workloads that share a test name: the table listed two `4KiB create` rows
    /// for ext4 without saying which workload each was; a name of one workload only stays.
    #[test]
    fn fresh_vs_aged_names_the_workload_of_a_shared_test_name() {
        use crate::model::matrix::{WORKLOAD_PARAM, aged_label};
        let mut doc = ResultDoc::new("matrix", Vec::new(), Environment::default());
        let (a, b) = ("files:sizes=4K", "files:sizes=4K,64K");
        let test = |label: &str, name: &str| TestResult {
            name: name.into(),
            params: [(WORKLOAD_PARAM.to_string(), label.to_string())].into(),
            ..Default::default()
        };
        let mut tests = Vec::new();
        for w in [a.to_string(), aged_label(a)] {
            tests.push(test(&w, "4KiB create"));
        }
        for w in [b.to_string(), aged_label(b)] {
            tests.push(test(&w, "4KiB create"));
            tests.push(test(&w, "64KiB create"));
        }
        doc.configurations.push(ConfigurationResult {
            label: "ext4".into(),
            tests,
            ..Default::default()
        });
        let pairs: Vec<_> = [a, b]
            .iter()
            .map(|w| (w.to_string(), aged_label(w)))
            .collect();
        let text = render_aging(&doc, &pairs, |_| Some(("files_per_s".into(), 1.0)));
        let tests: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("│ ext4"))
            .map(|l| l.split('┆').nth(1).unwrap().trim())
            .collect();
        assert_eq!(
            tests,
            [
                "files:sizes=4K: 4KiB create",
                "files:sizes=4K,64K: 4KiB create",
                "64KiB create"
            ],
            "{text}"
        );
    }

    /// files/s and IOPS with thousands separators, as every other table gives them (it
    /// printed 54575.4).
    #[test]
    fn fresh_vs_aged_counts_have_thousands_separators() {
        let mut doc = ResultDoc::new("matrix", Vec::new(), Environment::default());
        let test = |label: &str| TestResult {
            name: "1 B create".into(),
            params: [("matrix_workload".to_string(), label.to_string())]
                .into_iter()
                .collect(),
            ..Default::default()
        };
        doc.configurations.push(ConfigurationResult {
            label: "ext4".into(),
            tests: vec![test("files"), test("files aged")],
            ..Default::default()
        });
        let pairs = vec![("files".to_string(), "files aged".to_string())];
        let text = render_aging(&doc, &pairs, |t| {
            let v = if t.params["matrix_workload"] == "files" {
                54575.4
            } else {
                12345.6
            };
            Some(("files_per_s".into(), v))
        });
        assert!(text.contains("54,575") && text.contains("12,346"), "{text}");
    }
}

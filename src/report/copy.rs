//! `iolab copy`'s text output: the table of phases (MB/s, files/s, time) per test, and the
//! list of data sets.

use comfy_table::{Cell, ContentArrangement};

use crate::model::copy::{CopyTestDetail, SpaceAccounting};
use crate::model::{ResultDoc, TestResult};
use crate::report::metrics::fmt_value;
use crate::report::table::right;
use crate::units::{fmt_mb_per_s, fmt_size_iec, fmt_thousands};
use crate::workload::copy::dataset;

/// `--dataset list`: every data set with its file count and size at scale 1.
pub fn list_datasets(seed: u64) -> String {
    let mut out = String::new();
    for (name, what) in dataset::DATASETS {
        if let Some(p) = dataset::plan(name, seed, 1.0) {
            out.push_str(&format!(
                "{name:<12} {:>7} files {:>7} dirs {:>14} bytes  {what}\n",
                fmt_thousands(p.files.len() as f64),
                fmt_thousands(p.dirs.len() as f64),
                fmt_thousands(p.data_bytes() as f64)
            ));
        }
    }
    out
}

/// `--dataset list --json`: the same list as data (name, description, files, dirs, bytes
/// at scale 1).
pub fn datasets_json(seed: u64) -> serde_json::Value {
    let sets: Vec<_> = dataset::DATASETS
        .iter()
        .filter_map(|(name, what)| {
            let p = dataset::plan(name, seed, 1.0)?;
            Some(serde_json::json!({
                "name": name,
                "description": what,
                "files": p.files.len(),
                "dirs": p.dirs.len(),
                "bytes": p.data_bytes(),
            }))
        })
        .collect();
    serde_json::Value::Array(sets)
}

fn median_of(t: &TestResult, key: &str) -> Option<f64> {
    t.summary.get(key).map(|s| s.median)
}

/// The On disk cell of a phase: df's growth with the written set in place and its ratio to
/// the data (`190.0 MiB (x1.875)`), or whether the delete gave the space back.
pub fn space_cell(d: &CopyTestDetail, s: &SpaceAccounting) -> String {
    if s.other_writers {
        // df moved with another program's writes (the `other-writers` warning).
        "? (other writers)".to_string()
    } else if let Some(r) = s.overhead_ratio {
        format!("{} (x{r:.3})", fmt_size_iec(s.delta_bytes.max(0) as u64))
    } else if d.phase == "write" && d.data_bytes == 0 {
        // Empty files: no ratio to data, but their inodes and directories take room
        // (the cell was blank).
        format!("{} (no data)", fmt_size_iec(s.delta_bytes.max(0) as u64))
    } else if let Some(back) = s.space_returned {
        if back {
            "freed".to_string()
        } else {
            format!(
                "{} not freed",
                fmt_size_iec(s.not_returned_bytes.unwrap_or(0).max(0) as u64)
            )
        }
    } else {
        String::new()
    }
}

/// The table: one row per phase, medians over the runs, space and integrity columns.
pub fn render_copy_table(doc: &ResultDoc) -> String {
    let env = &doc.environment;
    // As `iolab run` says it: the device and the mount options that change the figures
    // (all of them, `rw,relatime,discard,resuid=…`, buried `compress=zstd`).
    let mut out = format!(
        "iolab {} copy on {}\n",
        doc.tool.version,
        super::table::target_line(env)
    );
    let mut table = super::table::new_table(ContentArrangement::Dynamic);
    table.set_header(vec![
        "Test", "Files", "Data", "Runs", "To close", "syncfs", "MB/s", "±CI %", "files/s",
        "On disk", "WA", "Verify",
    ]);
    let ceiling = doc
        .tests
        .iter()
        .find(|t| t.copy.as_ref().is_some_and(|c| c.phase == "ceiling"))
        .and_then(|t| median_of(t, "bw_bytes_per_s"));
    let mut shared_note = false;
    // A phase stopped before its first run has no figure: a Ctrl-C while the data set was
    // staged printed four rows of dashes ("Runs 0") instead of "no phase was measured".
    for t in doc
        .tests
        .iter()
        .filter(|t| t.family == "copy" && !t.runs.is_empty())
    {
        let Some(d) = &t.copy else { continue };
        let bw = median_of(t, "bw_bytes_per_s");
        // The spread of the rate the row shows: files/s where no MB/s is (the delete, a
        // data set of empty files), whose ±CI % was the hidden MB/s's.
        let rate_key = if d.phase == "delete" || bw.is_none() {
            "files_per_s"
        } else {
            "bw_bytes_per_s"
        };
        let ci = t.summary.get(rate_key).map(|s| {
            if s.n < 2 || s.mean == 0.0 {
                "-".to_string()
            } else {
                format!("{:.1}", (s.ci95_high - s.mean) / s.mean * 100.0)
            }
        });
        let last = t.runs.last().and_then(|r| r.copy.as_ref());
        let space = last
            .and_then(|c| c.space.as_ref())
            .map(|s| space_cell(d, s));
        // WA is of the phases that write the data set (the read and the delete have none).
        let writes = matches!(d.phase.as_str(), "write" | "copy");
        let wa = if writes && last.is_some_and(|c| c.device_other_writers) {
            // The device's counters hold another program's writes (`other-writers`).
            Some("? (other writers)".to_string())
        } else {
            t.runs
                .last()
                .and_then(|r| r.write_amplification)
                .map(|w| format!("{w:.2}"))
        };
        let verify = last.and_then(|c| c.verify.as_ref()).map(|v| {
            if v.ok {
                "ok".to_string()
            } else {
                format!("{} differ", v.mismatches.len())
            }
        });
        // Deleting moves no data: its figures are seconds and files/s.
        let mut mbs = match bw {
            Some(b) if d.phase != "delete" => fmt_mb_per_s(b),
            _ => "-".into(),
        };
        let made = last.and_then(|c| c.in_place.as_ref());
        // Empty files have no bytes to copy or share: "- [unknown]" said nothing.
        if let Some(m) = made.filter(|m| m.method != "data" && d.data_bytes > 0) {
            mbs.push_str(&format!(" [{}]", crate::workload::copy::sharing::label(m)));
            if m.method != "unknown" {
                shared_note = true;
            }
        }
        if let (Some(c), Some(b)) = (ceiling, bw)
            && d.phase != "ceiling"
            && d.phase != "delete"
            && c > 0.0
        {
            mbs.push_str(&format!(" ({:.0} %)", b / c * 100.0));
        }
        // A time in the unit its size calls for, as the reports give it (`fmt_value`): the
        // terminal said `0.719` under "To close s" where the report said `719.07 ms`.
        let time = |k: &str| {
            median_of(t, k)
                .map(|v| fmt_value(k, v))
                .unwrap_or_else(|| "-".into())
        };
        table.add_row(vec![
            Cell::new(&t.name),
            right(fmt_thousands(d.files as f64)),
            right(fmt_size_iec(d.data_bytes)),
            right(t.runs.len()),
            right(time("close_ns")),
            right(time("syncfs_ns")),
            right(mbs),
            right(ci.unwrap_or_else(|| "-".into())),
            right(
                median_of(t, "files_per_s")
                    .map(|v| fmt_value("files_per_s", v))
                    .unwrap_or_else(|| "-".into()),
            ),
            Cell::new(space.unwrap_or_default()),
            right(wa.unwrap_or_else(|| "-".into())),
            Cell::new(verify.unwrap_or_else(|| "-".into())),
        ]);
    }
    if table.row_count() == 0 {
        // Stopped before a phase was measured: a table of headers only said nothing.
        out.push_str("no phase was measured\n");
        out.push_str(&crate::report::table::render_warnings(doc));
        return out;
    }
    out.push_str(&table.to_string());
    out.push('\n');
    out.push_str(
        "MB/s and files/s are durable: data / (time to the last close + the syncfs after it); medians over the runs; ±CI % of MB/s, or of files/s where no MB/s is shown.",
    );
    out.push_str(if ceiling.is_some() {
        " (%) = share of the RAM-to-RAM ceiling.\n"
    } else {
        "\n"
    });
    if shared_note {
        out.push_str(
            "[reflink]: the file system shared the source's extents instead of copying the bytes (copy_file_range within one xfs or btrfs, as cp does): the copy's MB/s measures metadata; --method rw copies the bytes.\n",
        );
    }
    out.push_str(&crate::report::table::render_warnings(doc));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Environment;

    /// A copy row of `phase` whose runs had these MB/s (none: no data) and files/s, the
    /// last run's device counters judged `others`.
    fn row(phase: &str, bw: &[f64], files: &[f64], wa: Option<f64>, others: bool) -> TestResult {
        let runs = files
            .iter()
            .enumerate()
            .map(|(i, f)| crate::model::RunResult {
                run: i as u32 + 1,
                bw_bytes_per_s: bw.get(i).copied(),
                files_per_s: Some(*f),
                write_amplification: wa,
                copy: Some(crate::model::copy::CopyRunDetail {
                    device_other_writers: others,
                    ..Default::default()
                }),
                ..Default::default()
            })
            .collect();
        let mut t = TestResult {
            name: format!("set {phase}"),
            family: "copy".into(),
            runs,
            copy: Some(crate::model::copy::CopyTestDetail {
                phase: phase.into(),
                ..Default::default()
            }),
            ..Default::default()
        };
        if !bw.is_empty() {
            t.summary
                .insert("bw_bytes_per_s".into(), crate::stats::summarize(bw));
        }
        t.summary
            .insert("files_per_s".into(), crate::stats::summarize(files));
        t
    }

    fn cells(text: &str, test: &str) -> Vec<String> {
        let line = text
            .lines()
            .find(|l| l.contains(&format!(" {test} ")))
            .unwrap_or_else(|| panic!("no row {test} in {text}"));
        line.split(['│', '┆'])
            .map(|c| c.trim().to_string())
            .filter(|c| !c.is_empty())
            .collect()
    }

    /// The delete's ±CI % was the spread of its hidden MB/s (66.9 beside "-"); a data set of
    /// empty files read "0.00" MB/s; WA of another program's writes was a number, and "?"
    /// where a phase writes no data at all.
    #[test]
    fn each_cell_is_of_the_figure_it_stands_beside() {
        let mut doc = ResultDoc::new("copy", Vec::new(), Environment::default());
        doc.tests = vec![
            row(
                "write",
                &[100e6, 101e6, 99e6],
                &[10.0, 10.1, 9.9],
                Some(1.2),
                true,
            ),
            row(
                "copy",
                &[100e6, 101e6, 99e6],
                &[10.0, 10.1, 9.9],
                Some(1.1),
                false,
            ),
            row(
                "delete",
                &[100e6, 300e6, 50e6],
                &[1000.0, 1001.0, 999.0],
                None,
                true,
            ),
            row("read", &[], &[500.0, 500.0, 500.0], None, false),
        ];
        let text = render_copy_table(&doc);
        // Test, Files, Data, Runs, To close, syncfs, MB/s, ±CI %, files/s, On disk?, WA, Verify
        let w = cells(&text, "set write");
        assert_eq!(w[w.len() - 2], "? (other writers)", "{text}");
        let c = cells(&text, "set copy");
        assert_eq!(c[c.len() - 2], "1.10", "{text}");
        let d = cells(&text, "set delete");
        assert_eq!(d[6], "-", "{text}");
        assert_eq!(d[7], "0.2", "files/s' spread, not MB/s': {text}");
        assert_eq!(d[d.len() - 2], "-", "a delete has no WA: {text}");
        let r = cells(&text, "set read");
        assert_eq!((r[6].as_str(), r[7].as_str()), ("-", "0.0"), "{text}");
    }

    /// A phase's times read `0.719` under "To close s" in the terminal and `719.07 ms` in
    /// the report, its files/s `632` and `631.8`: both give the report's form, a time in the
    /// unit chosen by its magnitude.
    #[test]
    fn a_phase_s_times_and_rates_read_as_in_the_report() {
        let mut doc = ResultDoc::new("copy", Vec::new(), Environment::default());
        let mut t = row("write", &[100e6], &[631.8], None, false);
        t.summary
            .insert("close_ns".into(), crate::stats::summarize(&[719_070_000.0]));
        t.summary
            .insert("syncfs_ns".into(), crate::stats::summarize(&[18_000.0]));
        doc.tests = vec![t];
        let text = render_copy_table(&doc);
        let w = cells(&text, "set write");
        assert_eq!(
            (w[4].as_str(), w[5].as_str()),
            ("719.07 ms", "18.0 µs"),
            "{text}"
        );
        assert_eq!(w[8], "631.8", "{text}");
        assert_eq!(fmt_value("close_ns", 719_070_000.0), "719.07 ms");
        assert_eq!(fmt_value("files_per_s", 631.8), "631.8");
        // A rate below 10 keeps two digits (a copy of one big file: 0.28 files/s).
        assert_eq!(fmt_value("files_per_s", 0.28), "0.28");
        assert!(
            text.contains(" To close ") && !text.contains("To close s"),
            "{text}"
        );
    }

    /// A data set of empty files: its write's df growth is shown as such (the cell was
    /// blank), its copy has no "[unknown]" way of copying no bytes.
    #[test]
    fn an_empty_data_set_says_what_it_took_and_no_copy_method() {
        let mut doc = ResultDoc::new("copy", Vec::new(), Environment::default());
        let mut write = row("write", &[], &[668.0], None, false);
        write.runs[0].copy.as_mut().unwrap().space = Some(crate::model::copy::SpaceAccounting {
            delta_bytes: 8192,
            ..Default::default()
        });
        let mut copy = row("copy", &[], &[641.0], None, false);
        copy.runs[0].copy.as_mut().unwrap().in_place = Some(crate::model::copy::InPlaceCopy {
            method: "unknown".into(),
            basis: "none".into(),
            ..Default::default()
        });
        doc.tests = vec![write, copy];
        let text = render_copy_table(&doc);
        let w = cells(&text, "set write");
        assert!(w.contains(&"8.0 KiB (no data)".to_string()), "{text}");
        let c = cells(&text, "set copy");
        assert_eq!(c[6], "-", "{text}");
        assert!(!text.contains("[unknown]"), "{text}");
    }

    /// The header names the target as `iolab run` does (device, deciding mount options),
    /// and a copy stopped before any phase says so instead of a table of headers only (or of
    /// rows with no run).
    #[test]
    fn a_copy_with_no_phase_measured_says_so_under_run_s_header() {
        let env = Environment {
            target_path: "/mnt/t".into(),
            fs_type: "btrfs".into(),
            block_device: Some("loop3".into()),
            mount_options: "rw,relatime,compress=zstd:3,space_cache=v2".into(),
            ..Default::default()
        };
        let mut doc = ResultDoc::new("copy", Vec::new(), env);
        // Stopped while the data set was staged: its phases exist, with no run.
        doc.tests = ["write", "delete"]
            .iter()
            .map(|ph| TestResult {
                name: format!("set {ph}"),
                family: "copy".into(),
                copy: Some(crate::model::copy::CopyTestDetail {
                    phase: ph.to_string(),
                    ..Default::default()
                }),
                ..Default::default()
            })
            .collect();
        let text = render_copy_table(&doc);
        let mut lines = text.lines();
        assert!(
            lines
                .next()
                .unwrap()
                .ends_with("copy on /mnt/t (btrfs, /dev/loop3, relatime, compress=zstd:3)"),
            "{text}"
        );
        assert_eq!(lines.next(), Some("no phase was measured"), "{text}");
    }
}

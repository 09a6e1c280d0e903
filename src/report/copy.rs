//! `iolab copy`'s text output: the table of phases (MB/s, files/s, time) per test, and the
//! list of data sets.

use comfy_table::{Cell, CellAlignment, ContentArrangement};

use crate::model::{ResultDoc, TestResult};
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
        "Test",
        "Files",
        "Data",
        "Runs",
        "To close s",
        "syncfs s",
        "MB/s",
        "±CI %",
        "files/s",
        "On disk",
        "WA",
        "Verify",
    ]);
    let ceiling = doc
        .tests
        .iter()
        .find(|t| t.copy.as_ref().is_some_and(|c| c.phase == "ceiling"))
        .and_then(|t| median_of(t, "bw_bytes_per_s"));
    let mut shared_note = false;
    for t in doc.tests.iter().filter(|t| t.family == "copy") {
        let Some(d) = &t.copy else { continue };
        let bw = median_of(t, "bw_bytes_per_s");
        let ci = t.summary.get("bw_bytes_per_s").map(|s| {
            if s.n < 2 || s.mean == 0.0 {
                "-".to_string()
            } else {
                format!("{:.1}", (s.ci95_high - s.mean) / s.mean * 100.0)
            }
        });
        let last = t.runs.last().and_then(|r| r.copy.as_ref());
        let space = last.and_then(|c| c.space.as_ref()).map(|s| {
            if s.other_writers {
                // df moved with another program's writes (the `other-writers` warning).
                "? (other writers)".to_string()
            } else if let Some(r) = s.overhead_ratio {
                format!("{} (x{r:.3})", fmt_size_iec(s.delta_bytes.max(0) as u64))
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
        });
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
        if let Some(m) = made.filter(|m| m.method != "data") {
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
        let secs = |k: &str| {
            median_of(t, k)
                .map(|v| format!("{:.3}", v / 1e9))
                .unwrap_or_else(|| "-".into())
        };
        table.add_row(vec![
            Cell::new(&t.name),
            Cell::new(fmt_thousands(d.files as f64)).set_alignment(CellAlignment::Right),
            Cell::new(fmt_size_iec(d.data_bytes)).set_alignment(CellAlignment::Right),
            Cell::new(t.runs.len()).set_alignment(CellAlignment::Right),
            Cell::new(secs("close_ns")).set_alignment(CellAlignment::Right),
            Cell::new(secs("syncfs_ns")).set_alignment(CellAlignment::Right),
            Cell::new(mbs).set_alignment(CellAlignment::Right),
            Cell::new(ci.unwrap_or_else(|| "-".into())).set_alignment(CellAlignment::Right),
            Cell::new(
                median_of(t, "files_per_s")
                    .map(crate::units::fmt_rate)
                    .unwrap_or_else(|| "-".into()),
            )
            .set_alignment(CellAlignment::Right),
            Cell::new(space.unwrap_or_default()),
            Cell::new(wa.unwrap_or_else(|| "-".into())).set_alignment(CellAlignment::Right),
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
        "MB/s and files/s are durable: data / (time to the last close + the syncfs after it); medians over the runs.",
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

    /// The header names the target as `iolab run` does (device, deciding mount options),
    /// and a copy stopped before any phase says so instead of a table of headers only.
    #[test]
    fn a_copy_with_no_phase_measured_says_so_under_run_s_header() {
        let env = Environment {
            target_path: "/mnt/t".into(),
            fs_type: "btrfs".into(),
            block_device: Some("loop3".into()),
            mount_options: "rw,relatime,compress=zstd:3,space_cache=v2".into(),
            ..Default::default()
        };
        let doc = ResultDoc::new("copy", Vec::new(), env);
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

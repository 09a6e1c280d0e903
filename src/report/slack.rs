//! The terminal view of an `iolab slack` result: what was scanned, one row per unit, the
//! cost model (with its fit quality) and the three recommendations.

use comfy_table::{Cell, CellAlignment, ContentArrangement};

use crate::model::ResultDoc;
use crate::model::slack::{CostModel, SlackResult};
use crate::report::table::new_table;
use crate::units::{count, fmt_size_exact, fmt_size_iec, fmt_thousands};

fn secs(s: f64) -> String {
    if s >= 100.0 {
        format!("{s:.0} s")
    } else if s >= 1.0 {
        format!("{s:.2} s")
    } else {
        crate::units::fmt_ns(s * 1e9)
    }
}

fn header(r: &SlackResult) -> String {
    let s = &r.scan;
    let mut out = if r.source == "dir" {
        format!(
            "{}: {}, {}, {}{}, {} of data (largest {}); scanned in {:.2} s ({} entries/s)\n",
            crate::os::text::terminal(&r.path),
            count(s.files, "file", "files"),
            count(s.dirs, "dir", "dirs"),
            count(s.symlinks, "symlink", "symlinks"),
            if s.other > 0 {
                format!(", {}", count(s.other, "other entry", "other entries"))
            } else {
                String::new()
            },
            fmt_size_iec(s.data_bytes),
            fmt_size_iec(s.largest_file_bytes),
            s.elapsed_s,
            fmt_thousands(s.entries_per_s),
        )
    } else {
        format!(
            "{}: {} file size{}, {} of data (largest {})\n",
            crate::os::text::terminal(&r.path),
            fmt_thousands(s.files as f64),
            if s.files == 1 { "" } else { "s" },
            fmt_size_iec(s.data_bytes),
            fmt_size_iec(s.largest_file_bytes),
        )
    };
    if s.hard_links_skipped > 0 {
        out.push_str(&format!(
            "hard links counted once: {} extra names skipped\n",
            s.hard_links_skipped
        ));
    }
    if s.mount_points_skipped > 0 {
        out.push_str(&format!(
            "mount points not entered (--one-file-system): {}\n",
            s.mount_points_skipped
        ));
    }
    if s.unreadable > 0 {
        out.push_str(&format!(
            "unreadable entries skipped: {} (first: {})\n",
            s.unreadable,
            s.unreadable_examples.join("; ")
        ));
    }
    if let (Some(disk), Some(unit)) = (s.files_disk_bytes, r.current_unit_bytes) {
        let predicted = r
            .units
            .iter()
            .find(|u| u.unit_bytes == unit)
            .map(|u| {
                // `--fs ntfs` on an ext4 tree: "1.2 MiB (st_blocks), 0 B predicted by these
                // rules" read as if the rules were wrong; they are for another file system.
                let other = r
                    .current_fs
                    .as_deref()
                    .and_then(|fs| crate::fs::alloc::rules_are_for(&r.fs, fs))
                    == Some(false);
                if other {
                    format!(
                        ", {} predicted by the {} rules (made for another file system: no check of them)",
                        fmt_size_iec(u.file_allocated_bytes),
                        r.fs
                    )
                } else {
                    format!(
                        ", {} predicted by these rules",
                        fmt_size_iec(u.file_allocated_bytes)
                    )
                }
            })
            .unwrap_or_default();
        out.push_str(&format!(
            "now on {} ({} blocks): files hold {} (st_blocks){predicted}\n",
            r.current_fs.as_deref().unwrap_or("?"),
            fmt_size_exact(unit),
            fmt_size_iec(disk),
        ));
        if s.sparse_files > 0 {
            out.push_str(&format!(
                "  {} less than {} size (holes, or compression): {} not on disk, which the rules count as written\n",
                if s.sparse_files == 1 {
                    "1 file holds".to_string()
                } else {
                    format!("{} files hold", fmt_thousands(s.sparse_files as f64))
                },
                if s.sparse_files == 1 { "its" } else { "their" },
                fmt_size_iec(s.sparse_bytes)
            ));
        }
    }
    for n in &r.rule_notes {
        out.push_str(&format!("rules: {n}\n"));
    }
    out
}

/// The units table's header and cells (the terminal table and the report's both).
pub fn units_rows(r: &SlackResult) -> (Vec<String>, Vec<Vec<String>>) {
    let header = [
        "Unit",
        "Allocated",
        "Slack",
        "Slack %",
        "Clusters",
        "Files < unit",
        "Resident",
        "Write time",
        "s/B (slack)",
        "Note",
    ]
    .map(String::from)
    .to_vec();
    let rows = r
        .units
        .iter()
        .map(|u| {
            vec![
                fmt_size_exact(u.unit_bytes),
                fmt_size_iec(u.allocated_bytes),
                fmt_size_iec(u.slack_bytes),
                format!("{:.1}", u.slack_pct),
                fmt_thousands(u.clusters as f64),
                format!("{:.1} %", u.files_below_unit_pct),
                u.resident_files.to_string(),
                secs(u.predicted_write_s),
                format!("{:.3e}", u.slack_cost_s_per_byte),
                [
                    (r.current_unit_bytes == Some(u.unit_bytes)).then(|| "current".to_string()),
                    u.note.clone(),
                ]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join("; "),
            ]
        })
        .collect();
    (header, rows)
}

fn units_table(r: &SlackResult) -> String {
    let mut t = new_table(ContentArrangement::Disabled);
    let (header, rows) = units_rows(r);
    t.set_header(header);
    for cells in rows {
        let mut row: Vec<Cell> = cells.into_iter().map(Cell::new).collect();
        for c in row.iter_mut().skip(1).take(8) {
            *c = c.clone().set_alignment(CellAlignment::Right);
        }
        t.add_row(row);
    }
    format!("{t}\n")
}

/// The lines above the table, the table (header, rows), the lines under it.
pub type SlackParts = (Vec<String>, (Vec<String>, Vec<Vec<String>>), Vec<String>);

/// The report's view (`iolab report`): the lines above the table, the table, and the lines
/// under it (the cost model and the recommendations), as the terminal prints them.
pub fn report_parts(doc: &ResultDoc) -> Option<SlackParts> {
    let r = doc.slack.as_ref()?;
    let lines = |s: String| -> Vec<String> {
        s.lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|l| !l.is_empty())
            .collect()
    };
    let mut after = lines(model_lines(&r.cost_model));
    after.extend(lines(recommendations(r)));
    Some((lines(header(r)), units_rows(r), after))
}

fn recommendations(r: &SlackResult) -> String {
    let mut out = String::new();
    for rec in &r.recommendations {
        out.push_str(&format!(
            "best for {:<8} {:>7}: {} allocated, {} slack, predicted write {} ({})\n",
            rec.goal,
            fmt_size_exact(rec.unit_bytes),
            fmt_size_iec(rec.allocated_bytes),
            fmt_size_iec(rec.slack_bytes),
            secs(rec.predicted_write_s),
            rec.rule
        ));
    }
    out
}

fn model_lines(m: &CostModel) -> String {
    // The built-in defaults' note is the `cost-defaults` warning's text, which follows: the
    // same sentence stood twice.
    // A calibrated note names the result's path and file-system type: outside text.
    let note = if m.source == "defaults" {
        "the built-in figures (see warning [cost-defaults])".into()
    } else {
        crate::os::text::terminal(&m.note)
    };
    let mut out = format!("cost model ({}): {note}\n", m.source);
    for c in &m.per_unit {
        if c.origin.starts_with("fit") || c.origin.starts_with("per-file") {
            let fit = match (c.r2, c.rmse_s) {
                (Some(r2), Some(rmse)) => format!(", R² {r2:.4}, RMS residual {}", secs(rmse)),
                (None, Some(rmse)) => {
                    format!(", {} points, RMS residual {}", c.points.len(), secs(rmse))
                }
                _ => String::new(),
            };
            let belov = c
                .belov_s_per_byte_per_portion
                .map(|v| format!("; Belov's estimate (full unit - 1 B) {v:.3e}"))
                .unwrap_or_default();
            out.push_str(&format!(
                "  {}: {} per file + {:.3e} s/B ({:.3e} s/B per {} files{belov}); {} points{fit} [{}]\n",
                fmt_size_exact(c.unit_bytes),
                secs(c.per_file_s),
                c.per_byte_s,
                c.per_byte_s_per_portion,
                m.portion_files,
                c.points.len(),
                c.origin
            ));
            if !c.points.is_empty() {
                let res: Vec<String> = c
                    .points
                    .iter()
                    .map(|p| {
                        // A point the line goes through read "-0 ns" (a rounding error of
                        // 1e-22 s): under half a nanosecond is no residual, and no sign.
                        let r = p.residual_s;
                        let sign = match r {
                            r if r.abs() < 0.5e-9 => "",
                            r if r < 0.0 => "-",
                            _ => "+",
                        };
                        let r = if sign.is_empty() { 0.0 } else { r.abs() };
                        // A resident 1-byte file sits at x = 0, not at one unit: say why.
                        let resident = if p.resident { " (resident)" } else { "" };
                        format!(
                            "{}{resident} {sign}{}",
                            fmt_size_exact(p.file_size_bytes),
                            secs(r)
                        )
                    })
                    .collect();
                out.push_str(&format!("    residuals per file: {}\n", res.join(", ")));
            }
        }
    }
    // Units without their own measurements, grouped by the unit they borrow from.
    let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
    for c in m
        .per_unit
        .iter()
        .filter(|c| c.origin.starts_with("nearest"))
    {
        let unit = fmt_size_exact(c.unit_bytes);
        match groups.iter_mut().find(|g| g.0 == c.origin) {
            Some(g) => g.1.push(unit),
            None => groups.push((&c.origin, vec![unit])),
        }
    }
    for (origin, units) in groups {
        out.push_str(&format!("  {}: {origin}\n", units.join(", ")));
    }
    out
}

/// The whole view (without warnings).
pub fn render(doc: &ResultDoc) -> String {
    let Some(r) = &doc.slack else {
        return String::new();
    };
    let mut out = header(r);
    out.push_str(&units_table(r));
    out.push_str(&model_lines(&r.cost_model));
    out.push_str(&recommendations(r));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::slack::{FitPoint, ScanStats, UnitRow};

    fn point(size: u64, residual_s: f64) -> FitPoint {
        FitPoint {
            file_size_bytes: size,
            residual_s,
            ..Default::default()
        }
    }

    /// A model calibrated at 4 KiB from these points.
    fn calibrated(points: Vec<FitPoint>) -> CostModel {
        CostModel {
            source: "calibrated".into(),
            portion_files: 10_000,
            per_unit: vec![crate::model::slack::UnitCost {
                unit_bytes: 4096,
                origin: "fit".into(),
                points,
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    /// Calibrated at 4 KiB: "residuals per file: 1B -995 ns, 4097B -0 ns, 4KiB +995 ns".
    #[test]
    fn a_residual_of_nothing_has_no_sign() {
        let m = calibrated(vec![
            point(1, -995e-9),
            point(4097, -1e-22),
            point(4096, 995e-9),
        ]);
        let out = model_lines(&m);
        assert!(out.contains("4097B 0 ns"), "{out}");
        assert!(
            out.contains("1B -995 ns") && out.contains("4KiB +995 ns"),
            "{out}"
        );
    }

    /// A resident point sits at 0 bytes, not at one unit: its residual says why.
    #[test]
    fn a_resident_point_is_marked() {
        let m = calibrated(vec![
            FitPoint {
                resident: true,
                ..point(1, 2e-6)
            },
            point(4097, -2e-6),
        ]);
        let out = model_lines(&m);
        assert!(
            out.contains("residuals per file: 1B (resident) +2.0 µs, 4097B -2.0 µs"),
            "{out}"
        );
    }

    /// A 1 GiB sparse file read "files hold 16.0 KiB (st_blocks), 1.0 GiB predicted by these
    /// rules" and nothing more, as if the rules were wrong: the header now says why.
    #[test]
    fn sparse_files_are_named_under_the_check() {
        let r = SlackResult {
            source: "dir".into(),
            path: "t".into(),
            current_fs: Some("ext4".into()),
            current_unit_bytes: Some(2048),
            scan: ScanStats {
                files: 3,
                files_disk_bytes: Some(16 << 10),
                sparse_files: 1,
                sparse_bytes: 1 << 30,
                ..Default::default()
            },
            units: vec![UnitRow {
                unit_bytes: 2048,
                file_allocated_bytes: (1 << 30) + (16 << 10),
                ..Default::default()
            }],
            ..Default::default()
        };
        let text = header(&r);
        assert!(
            text.contains(
                "\n  1 file holds less than its size (holes, or compression): 1.0 GiB not on disk, which the rules count as written\n"
            ),
            "{text}"
        );
        let full = SlackResult {
            scan: ScanStats {
                sparse_files: 0,
                ..r.scan.clone()
            },
            ..r
        };
        assert!(!header(&full).contains("holes"));
    }

    /// `iolab slack --fs ntfs` on an ext4 tree read "files hold 1.2 MiB (st_blocks), 0 B
    /// predicted by these rules", as if the NTFS rules were wrong: they are another file
    /// system's, and the line says so.
    #[test]
    fn rules_for_another_file_system_are_no_check() {
        let r = SlackResult {
            fs: "ntfs".into(),
            current_fs: Some("ext4".into()),
            current_unit_bytes: Some(4096),
            scan: ScanStats {
                files: 300,
                files_disk_bytes: Some(300 * 4096),
                ..Default::default()
            },
            units: vec![UnitRow {
                unit_bytes: 4096,
                file_allocated_bytes: 0,
                ..Default::default()
            }],
            ..Default::default()
        };
        assert!(
            header(&r).contains(
                "files hold 1.2 MiB (st_blocks), 0 B predicted by the ntfs rules (made for another file system: no check of them)"
            ),
            "{}",
            header(&r)
        );
        for same in ["ext4", "plain"] {
            let r = SlackResult {
                fs: same.into(),
                ..r.clone()
            };
            assert!(
                header(&r).contains("0 B predicted by these rules"),
                "{same}"
            );
        }
    }

    /// Without --calibrate the defaults' sentence stood twice: in the cost-model line and as
    /// `warning [cost-defaults]`. The line now points at the warning; a calibrated model
    /// keeps its note.
    #[test]
    fn the_defaults_sentence_stands_once() {
        let m = CostModel {
            source: "defaults".into(),
            note: "built-in defaults from Belov's NTFS cluster-size tests".into(),
            ..Default::default()
        };
        let text = model_lines(&m);
        assert!(
            text.starts_with(
                "cost model (defaults): the built-in figures (see warning [cost-defaults])"
            ),
            "{text}"
        );
        assert!(!text.contains("Belov"), "{text}");
        let fitted = CostModel {
            source: "calibrated".into(),
            note: "fitted to 12 points".into(),
            ..Default::default()
        };
        assert!(model_lines(&fitted).starts_with("cost model (calibrated): fitted to 12 points"));
        // The note names the result's path and file-system type: no escape reaches the terminal.
        let hostile = CostModel {
            note: "no allocation rules for ext4\u{1b}[2J".into(),
            ..fitted
        };
        assert!(!model_lines(&hostile).contains('\u{1b}'));
    }
}

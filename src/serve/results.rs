//! Results by id, never by path: `run-N` is the result file of the console's own test N,
//! `h-N` entry N of the history. Downloads in every report format, and the comparison of
//! two results (the exporters and `report::compare` of `iolab report` / `iolab compare`).

use std::path::PathBuf;

use serde::Serialize;

use super::AppState;
pub use super::history::Missing;
use crate::model::ResultDoc;
use crate::report::load::Loaded;

/// The number after `prefix` in a run or result id, written as the console writes it: decimal
/// digits, no sign, no leading zero. `h-01` and `run-+1` are no ids (they were read as `h-1`
/// and `run-1`: one result answered at several addresses).
pub fn id_number(id: &str, prefix: &str) -> Option<u64> {
    let n = id.strip_prefix(prefix)?;
    let canonical =
        !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && (n == "0" || !n.starts_with('0'));
    if canonical { n.parse().ok() } else { None }
}

/// The result `id` names.
pub fn load(s: &AppState, id: &str) -> Result<Loaded, Missing> {
    if let Some(n) = id_number(id, "run-").and_then(|n| u32::try_from(n).ok()) {
        let path =
            s.jobs.get(n).and_then(|j| j.result_path()).ok_or_else(|| {
                Missing::NotFound(format!("{id}: no such run, or it saved nothing"))
            })?;
        if !path.exists() {
            // Moved or deleted since: not found (it was a 500, a server error).
            return Err(Missing::NotFound(format!(
                "{id}: its result file {} is gone (moved or deleted)",
                path.display()
            )));
        }
        let doc = ResultDoc::read(&path).map_err(|e| Missing::Broken(e.to_string()))?;
        return Ok(Loaded { path, doc });
    }
    if let Some(n) = id_number(id, "h-").and_then(|n| i64::try_from(n).ok()) {
        let doc = super::history::get(s, n)?;
        // Named as its result file, so a download is `iolab report` of that file (it named
        // a file "history-1.json" that never existed); `h-N` when none was recorded.
        let path = super::history::source(s, n).unwrap_or_else(|| PathBuf::from(format!("h-{n}")));
        return Ok(Loaded { path, doc });
    }
    Err(Missing::NotFound(format!(
        "{id}: not a result id (run-N for the console's runs, h-N for the history)"
    )))
}

/// A download: content type, file name, bytes.
pub fn report(l: &Loaded, id: &str, format: &str) -> Option<(&'static str, String, String)> {
    let one = std::slice::from_ref(l);
    let blocks = || crate::report::document::build(one);
    Some(match format {
        "html" => (
            "text/html; charset=utf-8",
            format!("iolab-{id}.html"),
            crate::report::html::render(&blocks()),
        ),
        "md" => (
            "text/markdown; charset=utf-8",
            format!("iolab-{id}.md"),
            crate::report::markdown::render(&blocks()),
        ),
        "csv" => (
            "text/csv; charset=utf-8",
            format!("iolab-{id}.csv"),
            crate::report::csv::render(one),
        ),
        "json" => (
            "application/json",
            format!("iolab-{id}.json"),
            serde_json::to_string_pretty(&l.doc).ok()?,
        ),
        _ => return None,
    })
}

/// What the compare view shows.
#[derive(Debug, Serialize)]
pub struct CompareView {
    pub comparison: crate::report::compare::Comparison,
    /// Every row's cells as `iolab compare` words them (`cells[pairing][row]`): the page
    /// shows these, not figures it formats itself (it printed "26.3 % ± 502.8" where the
    /// text says "± too wide", and 0.00075 s per portion as "0.0007 s").
    pub cells: Vec<Vec<CompareCells>>,
    /// `iolab compare`'s text.
    pub text: String,
}

/// One row of the comparison as the command line's table words it: `report::compare`'s
/// own `table_cells`, cell for cell (the page showed each side's mean alone, "1048.58", where
/// `iolab compare` prints "1048.58 ± 26.05 (n=3)", and the verdict without its test).
#[derive(Debug, Serialize)]
pub struct CompareCells {
    /// The test as named (`NAME [CONFIG]`, ` (settings differ)` when so).
    pub test: String,
    /// The metric's label (`MB/s`, `s/portion`).
    pub metric: String,
    /// Each side's mean with its 95 % interval and run count (`1048.58 ± 26.05 (n=3)`).
    pub baseline: String,
    pub other: String,
    /// The Change column.
    pub change: String,
    /// The Verdict column (`faster (Welch, p < 0.001)`).
    pub verdict: String,
}

fn cells_of(r: &crate::report::compare::Row) -> CompareCells {
    let [test, metric, baseline, other, change, verdict] = crate::report::compare::table_cells(r);
    CompareCells {
        test,
        metric,
        baseline,
        other,
        change,
        verdict,
    }
}

/// `a` (the baseline) against `b`, as `iolab compare A B` does.
pub fn compare(a: Loaded, b: Loaded) -> Result<CompareView, String> {
    let c = crate::report::compare::compare(&[a, b], false).map_err(|e| e.to_string())?;
    Ok(CompareView {
        text: crate::report::compare::render_text(&c),
        cells: c
            .pairings
            .iter()
            .map(|p| p.rows.iter().map(cells_of).collect())
            .collect(),
        comparison: c,
    })
}

#[cfg(test)]
mod tests {
    use super::id_number;

    /// Only the canonical spelling names a run or result: the console answered `h-01`,
    /// `run-+1` as `h-1`, `run-1`.
    #[test]
    fn ids_are_canonical_or_none() {
        assert_eq!(id_number("h-1", "h-"), Some(1));
        assert_eq!(id_number("run-0", "run-"), Some(0));
        assert_eq!(id_number("run-120", "run-"), Some(120));
        for bad in ["h-01", "h-+1", "h--1", "h-", "h- 1", "h-1 ", "h-1e0", "h-١"] {
            assert_eq!(id_number(bad, "h-"), None, "{bad}");
        }
        for bad in ["run-+1", "run-01", "run-00", "run-0x1"] {
            assert_eq!(id_number(bad, "run-"), None, "{bad}");
        }
    }
}

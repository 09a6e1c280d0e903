//! Results by id, never by path: `run-N` is the result file of the console's own test N,
//! `h-N` entry N of the history. Downloads in every report format, and the comparison of
//! two results (the exporters and `report::compare` of `iolab report` / `iolab compare`).

use std::path::PathBuf;

use serde::Serialize;

use super::AppState;
pub use super::history::Missing;
use crate::model::ResultDoc;
use crate::report::load::Loaded;

/// The result `id` names.
pub fn load(s: &AppState, id: &str) -> Result<Loaded, Missing> {
    if let Some(n) = id.strip_prefix("run-").and_then(|n| n.parse::<u32>().ok()) {
        let path =
            s.jobs.get(n).and_then(|j| j.result_path()).ok_or_else(|| {
                Missing::NotFound(format!("{id}: no such run, or it saved nothing"))
            })?;
        let doc = ResultDoc::read(&path).map_err(|e| Missing::Broken(e.to_string()))?;
        return Ok(Loaded { path, doc });
    }
    if let Some(n) = id.strip_prefix("h-").and_then(|n| n.parse::<i64>().ok()) {
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
    /// The Change cell of every row (`change[pairing][row]`), as `iolab compare` prints it:
    /// "26.3 % ± too wide" where the interval reaches zero (the page printed the bare
    /// half-width, "26.3 % ± 502.8", beside a text saying "too wide").
    pub change: Vec<Vec<String>>,
    /// `iolab compare`'s text.
    pub text: String,
}

/// `a` (the baseline) against `b`, as `iolab compare A B` does.
pub fn compare(a: Loaded, b: Loaded) -> Result<CompareView, String> {
    let c = crate::report::compare::compare(&[a, b], false).map_err(|e| e.to_string())?;
    Ok(CompareView {
        text: crate::report::compare::render_text(&c),
        change: c
            .pairings
            .iter()
            .map(|p| {
                p.rows
                    .iter()
                    .map(crate::report::compare::change_cell)
                    .collect()
            })
            .collect(),
        comparison: c,
    })
}

//! Reading the inputs of `iolab report` and `iolab compare`: result files or directories of
//! them, every one checked before anything is written.

use std::path::{Path, PathBuf};

use crate::error::UsageError;
use crate::model::ResultDoc;

/// One result file and where it came from.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub path: PathBuf,
    pub doc: ResultDoc,
}

impl Loaded {
    /// The file name alone (stable across machines, used in exports).
    pub fn file_name(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.path.display().to_string())
    }
}

/// Expand directories to the `*.json` files directly in them (sorted by name) and read
/// every file. An empty file inside a directory is a result file claimed by a run that has
/// not saved its first test yet: skipped with a note. Named files must all be valid.
pub fn load_inputs(paths: &[PathBuf]) -> Result<Vec<Loaded>, UsageError> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let found = json_files_in(p)?;
            if found.is_empty() {
                return Err(UsageError(format!(
                    "{}: no result files (*.json) in this directory",
                    p.display()
                )));
            }
            files.extend(found);
        } else if p.exists() {
            files.push(p.clone());
        } else {
            return Err(UsageError(format!(
                "{}: no such file or directory",
                p.display()
            )));
        }
    }
    files
        .into_iter()
        .map(|path| {
            let doc = ResultDoc::read(&path).map_err(|e| history_export(&path).unwrap_or(e))?;
            Ok(Loaded { path, doc })
        })
        .collect()
}

/// A `history export` given (or found in a directory) where a result file was expected: it
/// was refused as "not an iolab result (not a JSON object)", which does not say what it is
/// nor how to use it.
fn history_export(path: &Path) -> Option<UsageError> {
    let text = std::fs::read_to_string(path).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let items = v.as_array()?;
    let is_export = !items.is_empty()
        && items.iter().all(|i| {
            i.get("result")
                .and_then(|r| r.get("tool"))
                .and_then(|t| t.get("name"))
                .and_then(|n| n.as_str())
                == Some("iolab")
        });
    is_export.then(|| {
        let p = path.display();
        UsageError(format!(
            "{p}: an `iolab history export` ({} result{}), not a result file: `iolab history import {p}` adds them to a history; `jq '.[0].result' {p} > one.json` takes one out as a result file",
            items.len(),
            if items.len() == 1 { "" } else { "s" }
        ))
    })
}

fn json_files_in(dir: &Path) -> Result<Vec<PathBuf>, UsageError> {
    let rd = std::fs::read_dir(dir)
        .map_err(|e| UsageError(format!("{}: cannot read directory: {e}", dir.display())))?;
    let mut out = Vec::new();
    for entry in rd.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "json") && path.is_file() {
            if std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0) == 0 {
                crate::eline!(
                    "iolab: skipping {}: empty (a run that has not saved a test yet)",
                    path.display()
                );
                continue;
            }
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `iolab report DIR` with a history export in DIR said "not an iolab result (not a JSON
    /// object)"; it now says what the file is and how to use it.
    #[test]
    fn a_history_export_is_named_as_one() {
        let dir = tempfile::tempdir().unwrap();
        let export = dir.path().join("all.json");
        std::fs::write(
            &export,
            r#"[{"id": 1, "result": {"tool": {"name": "iolab"}, "schema_version": 1}},
                {"id": 2, "result": {"tool": {"name": "iolab"}, "schema_version": 1}}]"#,
        )
        .unwrap();
        let e = load_inputs(&[dir.path().to_path_buf()]).unwrap_err().0;
        assert!(e.contains("an `iolab history export` (2 results)"), "{e}");
        assert!(e.contains("iolab history import"), "{e}");
        // Any other array is still not an iolab result.
        std::fs::write(&export, "[1, 2]").unwrap();
        let e = load_inputs(&[export]).unwrap_err().0;
        assert!(e.contains("not an iolab result (not a JSON object)"), "{e}");
    }
}

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
            let doc = ResultDoc::read(&path)?;
            Ok(Loaded { path, doc })
        })
        .collect()
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

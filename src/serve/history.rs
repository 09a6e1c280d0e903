//! The history (`iolab::history`, SQLite) as the console reads it. Until the history is part
//! of the build, it holds only the console's own runs.

use serde::Serialize;

use super::AppState;
use crate::model::ResultDoc;

/// Why a result cannot be had: not found (404) or unreadable (500).
#[derive(Debug)]
pub enum Missing {
    NotFound(String),
    Broken(String),
}

/// A short line per result for lists: id, command, status, when, target, first test.
#[derive(Debug, Serialize)]
pub struct Summary {
    pub id: String,
    pub command: String,
    pub status: String,
    pub started_at: String,
    pub host: String,
    pub device: Option<String>,
    pub filesystem: String,
    pub headline: String,
    pub source: String,
}

pub fn get(_s: &AppState, id: i64) -> Result<ResultDoc, Missing> {
    Err(Missing::NotFound(format!(
        "h-{id}: the history is not part of this build yet"
    )))
}

/// The history's entries matching the filters (`device`, `command`, `since`, `limit`).
pub fn list_filtered(
    s: &AppState,
    q: &std::collections::HashMap<String, String>,
) -> Result<Vec<Summary>, String> {
    let mut v = list(s);
    if let Some(c) = q.get("command").filter(|c| !c.is_empty()) {
        v.retain(|e| &e.command == c);
    }
    if let Some(d) = q.get("device").filter(|d| !d.is_empty()) {
        v.retain(|e| e.device.as_ref() == Some(d));
    }
    Ok(v)
}

/// The trend of one metric of one test on one device.
pub fn trend(
    _s: &AppState,
    _q: &std::collections::HashMap<String, String>,
) -> Result<serde_json::Value, String> {
    Err("the trend needs the history, which is not part of this build yet".into())
}

/// The console's own runs as list entries (newest first).
pub fn list(s: &AppState) -> Vec<Summary> {
    let mut v: Vec<Summary> = s
        .jobs
        .all()
        .iter()
        .rev()
        .filter_map(|j| {
            let doc = ResultDoc::read(&j.result_path()?).ok()?;
            Some(summary_of(&format!("run-{}", j.id), &doc, "serve"))
        })
        .collect();
    v.truncate(200);
    v
}

pub fn summary_of(id: &str, doc: &ResultDoc, source: &str) -> Summary {
    Summary {
        id: id.to_string(),
        command: doc.command.clone(),
        status: doc.status.clone(),
        started_at: doc.started_at.clone(),
        host: doc.environment.hostname.clone(),
        device: doc.environment.block_device.clone(),
        filesystem: doc.environment.fs_type.clone(),
        headline: doc
            .tests
            .first()
            .map(|t| t.name.clone())
            .unwrap_or_default(),
        source: source.to_string(),
    }
}

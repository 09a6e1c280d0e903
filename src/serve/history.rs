//! The history (`crate::history`, SQLite) as the console reads it: the list with filters,
//! one result by id (`h-N`), the trend of a device. The console records the result of each
//! test it started once the test ends (the history keeps one row per run, so a command that
//! recorded itself is not doubled). Without a history (`--no-history`) the list holds the
//! console's own runs.

use std::collections::HashMap;

use serde::Serialize;

use super::AppState;
use crate::history::{Filter, TrendQuery};
use crate::model::ResultDoc;

/// Why a result cannot be had: not found (404) or unreadable (500).
#[derive(Debug)]
pub enum Missing {
    NotFound(String),
    Broken(String),
}

/// A short line per result for lists: id, command, status, when, device, headline figures.
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

pub fn get(s: &AppState, id: i64) -> Result<ResultDoc, Missing> {
    let Some(h) = &s.history else {
        return Err(Missing::NotFound(format!(
            "h-{id}: this console runs without a history (--no-history)"
        )));
    };
    match h.get(id) {
        Ok(Some(doc)) => Ok(doc),
        Ok(None) => Err(Missing::NotFound(format!(
            "h-{id}: no such entry in the history"
        ))),
        Err(e) => Err(Missing::Broken(format!("{e:#}"))),
    }
}

fn param(q: &HashMap<String, String>, k: &str) -> Option<String> {
    q.get(k)
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// The history's entries matching the filters (`device`, `command`, `since`, `limit`),
/// newest first.
pub fn list_filtered(s: &AppState, q: &HashMap<String, String>) -> Result<Vec<Summary>, String> {
    let limit = match param(q, "limit") {
        Some(l) => Some(
            l.parse::<usize>()
                .map_err(|_| format!("limit '{l}': give a number of results"))?,
        ),
        None => Some(200),
    };
    if let Some(c) = param(q, "command")
        && !crate::cli::MEASURING_COMMANDS.contains(&c.as_str())
    {
        return Err(format!(
            "command '{c}': not a measuring command ({})",
            crate::cli::MEASURING_COMMANDS.join(", ")
        ));
    }
    // Checked here, named as the filter's field (the command line's message names its
    // `--since`); the console's own runs are filtered by it too.
    let since = param(q, "since")
        .map(|v| crate::history::parse_since(&v, chrono::Utc::now()))
        .transpose()
        .map_err(|e| e.to_string())?;
    let Some(h) = &s.history else {
        let mut v = own_runs(s);
        if let Some(c) = param(q, "command") {
            v.retain(|e| e.command == c);
        }
        if let Some(t) = &since {
            // Both are RFC 3339 UTC texts of the same form, as the database compares them.
            v.retain(|e| e.started_at >= *t);
        }
        if let Some(d) = param(q, "device") {
            v.retain(|e| e.device.as_ref() == Some(&d));
        }
        v.truncate(limit.unwrap_or(200));
        return Ok(v);
    };
    let filter = Filter {
        device: param(q, "device"),
        command: param(q, "command"),
        since: param(q, "since"),
        limit,
    };
    let entries = h.list(&filter).map_err(|e| format!("{e:#}"))?;
    Ok(entries
        .into_iter()
        .map(|e| Summary {
            id: format!("h-{}", e.id),
            command: e.command,
            status: e.status,
            started_at: e.started_at,
            host: e.host,
            device: Some(e.device).filter(|d| !d.is_empty()),
            filesystem: e.filesystem.unwrap_or_default(),
            headline: e.headline,
            source: e.source.unwrap_or_default(),
        })
        .collect())
}

/// The trend of one metric of one test on one device (`device`, `test`, `metric`).
pub fn trend(s: &AppState, q: &HashMap<String, String>) -> Result<serde_json::Value, String> {
    let Some(h) = &s.history else {
        return Err("the trend needs the history, and this console runs without one".into());
    };
    let Some(device) = param(q, "device") else {
        return Err("give a device".into());
    };
    let t = h
        .trend(&TrendQuery {
            device,
            test: param(q, "test"),
            metric: param(q, "metric"),
        })
        .map_err(|e| format!("{e:#}"))?;
    serde_json::to_value(t).map_err(|e| e.to_string())
}

/// A device's SMART snapshots over time (`device`: part of its identity, as for the trend).
pub fn health(s: &AppState, q: &HashMap<String, String>) -> Result<serde_json::Value, String> {
    let Some(h) = &s.history else {
        return Err(
            "the health history needs the history, and this console runs without one".into(),
        );
    };
    let Some(part) = param(q, "device") else {
        return Err("give a device".into());
    };
    let device = h.resolve_device(&part).map_err(|e| format!("{e:#}"))?;
    let points = h.health_history(&device).map_err(|e| format!("{e:#}"))?;
    Ok(serde_json::json!({ "device": device, "points": points }))
}

/// The devices of the history and their number of results (for the trend's choices).
pub fn devices(s: &AppState) -> Result<serde_json::Value, String> {
    let Some(h) = &s.history else {
        return Ok(serde_json::json!([]));
    };
    let d = h.devices().map_err(|e| format!("{e:#}"))?;
    Ok(serde_json::json!(
        d.into_iter()
            .map(|(device, results)| serde_json::json!({"device": device, "results": results}))
            .collect::<Vec<_>>()
    ))
}

/// The console's own runs as list entries (newest first).
fn own_runs(s: &AppState) -> Vec<Summary> {
    s.jobs
        .all()
        .iter()
        .rev()
        .filter_map(|j| {
            let doc = ResultDoc::read(&j.result_path()?).ok()?;
            Some(summary_of(&format!("run-{}", j.id), &doc, "serve"))
        })
        .collect()
}

fn summary_of(id: &str, doc: &ResultDoc, source: &str) -> Summary {
    Summary {
        id: id.to_string(),
        command: doc.command.clone(),
        status: doc.status.clone(),
        started_at: doc.started_at.clone(),
        host: doc.environment.hostname.clone(),
        // As the history would list it: the device's identity and the headline figures,
        // not the bare kernel name and the first test's name.
        device: Some(crate::history::device_identity(&doc.environment)),
        filesystem: doc.environment.fs_type.clone(),
        headline: crate::history::headline(doc, &crate::history::figures_of(doc)),
        source: source.to_string(),
    }
}

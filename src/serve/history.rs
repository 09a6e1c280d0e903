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

/// A short line per result for lists: id, command (and the options that tell two runs of
/// it apart, as `iolab history` lists them), status, when, device, headline figures.
#[derive(Debug, Serialize)]
pub struct Summary {
    pub id: String,
    pub command: String,
    /// `--preset real --size 1G`, as the terminal list gives it beside the command (the page
    /// showed `run` for every run, whatever its preset or size); absent when there are none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub options: Option<String>,
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

/// The result file history entry `id` was recorded from, when it names one.
pub fn source(s: &AppState, id: i64) -> Option<std::path::PathBuf> {
    let e = s.history.as_ref()?.entry(id).ok()??;
    e.source.filter(|p| !p.is_empty()).map(Into::into)
}

fn param(q: &HashMap<String, String>, k: &str) -> Option<String> {
    q.get(k)
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// The history's entries matching the filters (`device`, `command`, `since`, `limit`),
/// newest first, as `iolab history` lists them: `limit` 0 is all of them, the command's
/// case does not matter, a device is part of its identity or its kernel name. Without a
/// history, the console's own runs pass the same filters (it compared a device whole, so
/// `tmpfs` matched nothing, and refused `Run`). `id` (`h-N`, or a run's `run-N` without a
/// history) is that one entry whatever the other filters say: the run page links to it
/// (it linked to the whole list). With the entries, how many pass the filters without the
/// limit (`iolab history`'s "200 of 512 results shown"; the page showed the newest 200 and
/// said nothing of the others).
pub fn list_filtered(s: &AppState, q: &HashMap<String, String>) -> Result<Listed, String> {
    if let Some(id) = param(q, "id") {
        let entries = one_entry(s, &id)?;
        let total = entries.len();
        return Ok(Listed {
            held: held(s)?,
            entries,
            total,
        });
    }
    let limit = match param(q, "limit") {
        Some(l) => l
            .parse::<usize>()
            .map_err(|_| format!("limit '{l}': give a number of results (0: all)"))?,
        None => 200,
    };
    // Checked here, named as the filter's field (the command line's message names its
    // `--since`).
    let since = param(q, "since");
    if let Some(v) = &since {
        crate::history::parse_since(v, chrono::Utc::now()).map_err(|e| e.to_string())?;
    }
    let own;
    let (h, own_ids) = match &s.history {
        Some(h) => (h.as_ref(), None),
        None => {
            own = own_runs(s).map_err(|e| format!("{e:#}"))?;
            (&own.0, Some(&own.1))
        }
    };
    let command = match param(q, "command") {
        None => None,
        Some(c) => Some(
            crate::cli::history::command_named(h, &c)
                .map_err(|e| format!("{e:#}"))?
                .map_err(|known| {
                    format!(
                        "command '{c}': not a measuring command ({})",
                        known.join(", ")
                    )
                })?,
        ),
    };
    let filter = Filter {
        device: param(q, "device"),
        command,
        since,
        limit: (limit > 0).then_some(limit),
    };
    let entries = h.list(&filter).map_err(|e| format!("{e:#}"))?;
    let total = h
        .count(&Filter {
            limit: None,
            ..filter
        })
        .map_err(|e| format!("{e:#}"))?;
    let held = h.count(&Filter::default()).map_err(|e| format!("{e:#}"))?;
    Ok(Listed {
        entries: entries.into_iter().map(|e| summary(e, own_ids)).collect(),
        total,
        held,
    })
}

/// The list's entries, how many pass the filters without the limit, and how many the
/// history holds in all (for "no result matches …; the history holds N results", as
/// `iolab history` says it).
pub struct Listed {
    pub entries: Vec<Summary>,
    pub total: usize,
    pub held: usize,
}

/// How many results the history (or, without one, the console's own runs) holds.
fn held(s: &AppState) -> Result<usize, String> {
    let count =
        |h: &crate::history::History| h.count(&Filter::default()).map_err(|e| format!("{e:#}"));
    match &s.history {
        Some(h) => count(h),
        None => count(&own_runs(s).map_err(|e| format!("{e:#}"))?.0),
    }
}

/// The list's one entry `id` (none when there is no such entry).
fn one_entry(s: &AppState, id: &str) -> Result<Vec<Summary>, String> {
    let Some(h) = &s.history else {
        let (h, ids) = own_runs(s).map_err(|e| format!("{e:#}"))?;
        let all = h.list(&Filter::default()).map_err(|e| format!("{e:#}"))?;
        return Ok(all
            .into_iter()
            .map(|e| summary(e, Some(&ids)))
            .filter(|e| e.id == id)
            .collect());
    };
    let n = id
        .strip_prefix("h-")
        .and_then(|n| n.parse::<i64>().ok())
        .ok_or_else(|| format!("id '{id}': give a history entry's id (h-N)"))?;
    let entry = h.entry(n).map_err(|e| format!("{e:#}"))?;
    Ok(entry.into_iter().map(|e| summary(e, None)).collect())
}

/// An entry as the list shows it; `own_ids`: the console's run ids of its own runs (no
/// history).
fn summary(e: crate::history::Entry, own_ids: Option<&HashMap<i64, String>>) -> Summary {
    Summary {
        id: match own_ids {
            Some(ids) => ids.get(&e.id).cloned().unwrap_or_default(),
            None => format!("h-{}", e.id),
        },
        command: e.command,
        options: e.options,
        status: e.status,
        started_at: e.started_at,
        host: e.host,
        device: Some(e.device).filter(|d| !d.is_empty()),
        filesystem: e.filesystem.unwrap_or_default(),
        headline: e.headline,
        source: e.source.unwrap_or_default(),
    }
}

/// The trend of one metric of one test on one device (`device`, `test`, `metric`), with
/// the device's tests (`tests`: `{test, results}`, most results first: the test field's
/// choices, which the page did not offer) and `iolab history trend`'s text (`text`: its
/// verdict lines, "too few results to test for a change", "… changed at #N", which the
/// page left out).
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
    let tests = h.tests(&t.device).map_err(|e| format!("{e:#}"))?;
    let changes =
        crate::report::history::trend_settings_changes(h, &t).map_err(|e| format!("{e:#}"))?;
    let entries = crate::report::history::trend_entries(h, &t).map_err(|e| format!("{e:#}"))?;
    let text = crate::report::history::render_trend(&t, &entries)
        + &crate::report::history::render_settings_changes(&changes);
    // Each point's value, interval, change and level mark as the trend's table words them
    // (the page formatted them itself: 0.00075 s per portion read "0.0007 s"), and its
    // command with the options the history list gives beside it (the page's trend had no
    // such column: a change that came from another `--bs` looked like the device's).
    let cells: Vec<serde_json::Value> = t
        .points
        .iter()
        .zip(entries)
        .map(|(p, entry)| {
            serde_json::json!({
                "command": entry.as_ref().map_or(t.command.as_str(), |e| e.command.as_str()),
                "options": entry.and_then(|e| e.options),
                "value": crate::report::history::trend_value(&t, p),
                "interval": crate::report::history::trend_interval(&t, p),
                "change": crate::report::history::trend_change(p),
                "level": crate::report::history::trend_level(&t, p),
            })
        })
        .collect();
    let mut v = serde_json::to_value(t).map_err(|e| e.to_string())?;
    v["tests"] = serde_json::json!(
        tests
            .into_iter()
            .map(|(test, results)| serde_json::json!({"test": test, "results": results}))
            .collect::<Vec<_>>()
    );
    v["text"] = serde_json::json!(text);
    v["cells"] = serde_json::json!(cells);
    Ok(v)
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

/// The console's own runs in a history of their own, in memory (nothing is written), with
/// each row's run id (`run-N`).
fn own_runs(s: &AppState) -> anyhow::Result<(crate::history::History, HashMap<i64, String>)> {
    let h = crate::history::History::in_memory("the console's runs")?;
    let mut ids = HashMap::new();
    for j in s.jobs.all() {
        let Some(path) = j.result_path() else {
            continue;
        };
        let Ok(doc) = ResultDoc::read(&path) else {
            continue;
        };
        let row = h.record(&doc, Some(&path))?;
        ids.insert(row, format!("run-{}", j.id));
    }
    Ok((h, ids))
}

//! `iolab history`: list, show, export, import, trend and devices over the result history
//! (`crate::history`), rendered by `report::history`.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::cli::history::{
    DevicesArgs, ExportArgs, ExportFormat, FilterArgs, ForgetArgs, HealthArgs, HistoryArgs,
    HistoryCmd, ImportArgs, ListArgs, ShowArgs, TrendArgs,
};
use crate::error::UsageError;
use crate::history::{Filter, History, Recorded, TrendQuery};
use crate::model::ResultDoc;
use crate::report::history as render;

impl crate::cli::Execute for HistoryArgs {
    fn execute(&self, _argv: Vec<String>) -> anyhow::Result<i32> {
        let args = self;
        let history = match &args.command {
            Some(HistoryCmd::Import(_)) => open()?,
            Some(HistoryCmd::Forget(_)) => {
                let path = crate::history::named_path();
                if !path.exists() {
                    return Err(crate::usage!(
                        "{} does not exist: no result to forget",
                        path.display()
                    ));
                }
                open()?
            }
            _ => {
                let path = crate::history::named_path();
                if !path.exists() {
                    crate::eline!(
                        "iolab: note: {} does not exist yet (nothing recorded there); read as empty, nothing created",
                        path.display()
                    );
                }
                History::open_to_read(&path)?
            }
        };
        match &args.command {
            None => list(&history, &args.list),
            Some(HistoryCmd::List(a)) => list(&history, a),
            Some(HistoryCmd::Show(a)) => show(&history, a),
            Some(HistoryCmd::Export(a)) => export(&history, a),
            Some(HistoryCmd::Import(a)) => import(&history, a),
            Some(HistoryCmd::Trend(a)) => trend(&history, a),
            Some(HistoryCmd::Health(a)) => health(&history, a),
            Some(HistoryCmd::Devices(a)) => devices(&history, a),
            Some(HistoryCmd::Forget(a)) => forget(&history, a),
        }
    }
}

/// The history `--history` names, else the default (`--no-history` is about recording).
fn open() -> Result<History> {
    History::open(&crate::history::named_path())
}

fn filter_of(h: &History, f: &FilterArgs, limit: Option<usize>) -> Result<Filter> {
    let command = match &f.command {
        None => None,
        Some(c) => Some(crate::cli::history::command_named(h, c)?.map_err(|known| {
            crate::usage!(
                "--command {c}: no such command; the history keeps the results of: {}",
                known.join(", ")
            )
        })?),
    };
    Ok(Filter {
        device: f.device.clone(),
        command,
        since: f.since.clone(),
        limit,
    })
}

/// The filters given, as typed (`--since 2030-01-01`).
fn filters_given(f: &FilterArgs) -> Vec<String> {
    [
        ("--device", &f.device),
        ("--command", &f.command),
        ("--since", &f.since),
    ]
    .into_iter()
    .filter_map(|(flag, v)| v.as_ref().map(|v| format!("{flag} {v}")))
    .collect()
}

fn list(h: &History, a: &ListArgs) -> Result<i32> {
    let filter = filter_of(h, &a.filter, (a.limit > 0).then_some(a.limit))?;
    let entries = h.list(&filter)?;
    if a.json {
        crate::outln!("{}", serde_json::to_string_pretty(&entries)?);
    } else if entries.is_empty() && !filters_given(&a.filter).is_empty() {
        let held = h.count(&Filter::default())?;
        crate::out!(
            "{}",
            render::render_no_match(&filters_given(&a.filter), held)
        );
    } else {
        let total = if filter.limit.is_some_and(|l| entries.len() >= l) {
            h.count(&filter)?
        } else {
            entries.len()
        };
        crate::out!("{}", render::render_list(&entries, total));
    }
    Ok(0)
}

fn show(h: &History, a: &ShowArgs) -> Result<i32> {
    let no_such = || {
        UsageError(format!(
            "no result #{} in {} (`iolab history` lists them)",
            a.id,
            h.path().display()
        ))
    };
    if a.json {
        let doc = h.get(a.id)?.ok_or_else(no_such)?;
        crate::outln!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(0);
    }
    let entry = h.entry(a.id)?.ok_or_else(no_such)?;
    let figures = h.figures(a.id)?;
    let health = h.health(a.id)?;
    crate::out!("{}", render::render_show(&entry, &figures, health.as_ref()));
    Ok(0)
}

fn export(h: &History, a: &ExportArgs) -> Result<i32> {
    let format = a.format()?;
    let filter = filter_of(h, &a.filter, None)?;
    let held = h.count(&filter)?;
    // An empty export is still written (a script may expect the file), but not silently.
    if held == 0 {
        let given = filters_given(&a.filter);
        crate::eline!(
            "iolab: nothing to export: {}",
            if given.is_empty() {
                "the history holds no result".to_string()
            } else {
                format!(
                    "no result matches the filter{} ({})",
                    if given.len() == 1 { "" } else { "s" },
                    given.join(", ")
                )
            }
        );
    }
    let text = match format {
        ExportFormat::Json => {
            #[derive(serde::Serialize)]
            struct Exported {
                #[serde(flatten)]
                entry: crate::history::Entry,
                result: ResultDoc,
            }
            let mut out = Vec::new();
            for entry in h.list(&filter)? {
                if let Some(result) = h.get(entry.id)? {
                    out.push(Exported { entry, result });
                }
            }
            serde_json::to_string_pretty(&out)? + "\n"
        }
        ExportFormat::Csv => render::render_csv(&h.figures_matching(&filter)?),
    };
    let file = match &a.output {
        None => {
            // stdout's one way (a closed pipe is no error; a full disk is said by `main` as
            // "cannot write to stdout: …", as for every other command: it was the bare OS
            // error here).
            crate::write_stdout(text.as_bytes());
            return Ok(0);
        }
        Some(p) if p.is_dir() => p.join(match format {
            ExportFormat::Json => "iolab-history.json",
            ExportFormat::Csv => "iolab-history.csv",
        }),
        Some(p) => p.clone(),
    };
    write_file(&file, &text)?;
    // Where it went: `-o DIR` picks the file's name (the export was silent).
    crate::eline!(
        "exported {held} result{} to {}",
        if held == 1 { "" } else { "s" },
        file.display()
    );
    Ok(0)
}

/// Write atomically (temp file + rename), a bad path being a usage error.
fn write_file(p: &Path, text: &str) -> Result<()> {
    let dir = crate::os::dir_of(p);
    // tempfile's own error names its random temporary name ("... at path
    // \"/x/.tmpZkHnL2\""): only the kind of error is shown.
    if !dir.is_dir() {
        return Err(crate::usage!(
            "cannot write {}: directory {} does not exist",
            p.display(),
            dir.display()
        ));
    }
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| {
        crate::usage!(
            "cannot write {}: {}",
            p.display(),
            std::io::Error::from(e.kind())
        )
    })?;
    // Temp files are created 0600; an export is meant to be shared, as a report.
    use std::os::unix::fs::PermissionsExt;
    let _ = tmp
        .as_file()
        .set_permissions(std::fs::Permissions::from_mode(0o644));
    tmp.write_all(text.as_bytes())?;
    tmp.persist(p)
        .map_err(|e| crate::usage!("cannot write {}: {}", p.display(), e.error))?;
    Ok(())
}

/// Files named, and the `*.json` directly inside directories named, sorted.
fn import_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let rd = std::fs::read_dir(p)
                .map_err(|e| crate::usage!("{}: cannot read directory: {e}", p.display()))?;
            let mut found: Vec<PathBuf> = rd
                .flatten()
                .map(|e| e.path())
                .filter(|f| f.extension().is_some_and(|x| x == "json") && f.is_file())
                .collect();
            found.sort();
            out.extend(found);
        } else if p.exists() {
            out.push(p.clone());
        } else {
            return Err(crate::usage!("{}: no such file or directory", p.display()));
        }
    }
    Ok(out)
}

/// A document to import, its name for messages, and the result file it came from.
type ImportedDoc = (ResultDoc, String, Option<String>);

/// The documents of a `history export` (a JSON array of entries, each with its `result`),
/// each with a name for messages and the result file it was first recorded from; `None` when
/// `f` is not such an export (then it is read as one result file).
fn exported_documents(f: &Path) -> Option<Result<Vec<ImportedDoc>, UsageError>> {
    let text = std::fs::read_to_string(f).ok()?;
    let serde_json::Value::Array(items) = serde_json::from_str(&text).ok()? else {
        return None;
    };
    if items.is_empty() || !items.iter().all(|i| i.get("result").is_some()) {
        return None;
    }
    let mut out = Vec::new();
    for (i, mut item) in items.into_iter().enumerate() {
        let what = format!("{} (entry {})", f.display(), i + 1);
        let source = item["source"].as_str().map(str::to_string);
        match ResultDoc::from_value(item["result"].take(), &what) {
            Ok(doc) => out.push((doc, what, source)),
            Err(e) => return Some(Err(e)),
        }
    }
    Some(Ok(out))
}

fn import(h: &History, a: &ImportArgs) -> Result<i32> {
    let files = import_files(&a.results)?;
    let (mut added, mut present, mut finished, mut skipped) = (0usize, 0usize, 0usize, 0usize);
    for f in &files {
        let docs = match std::fs::metadata(f) {
            Ok(m) if m.len() == 0 => Err(UsageError(format!(
                "{}: empty (a run that had not saved a test)",
                f.display()
            ))),
            _ => exported_documents(f).unwrap_or_else(|| {
                ResultDoc::read(f).map(|d| vec![(d, f.display().to_string(), None)])
            }),
        };
        let docs = match docs {
            Ok(d) => d,
            Err(e) => {
                crate::eline!("iolab: skipped {e}");
                skipped += 1;
                continue;
            }
        };
        for (doc, what, source) in docs {
            let source = source.map(PathBuf::from);
            match h
                .record_with(&doc, Some(source.as_deref().unwrap_or(f)), None)
                .with_context(|| format!("importing {what}"))?
            {
                Recorded::New(_) => added += 1,
                Recorded::Existing(_) => present += 1,
                Recorded::Updated(_) => finished += 1,
            }
        }
    }
    crate::eline!(
        "imported {added} result{} into {}; {present} already there{}{}",
        if added == 1 { "" } else { "s" },
        h.path().display(),
        if finished > 0 {
            format!("; {finished} recorded mid-run replaced by the finished result")
        } else {
            String::new()
        },
        if skipped > 0 {
            format!("; {skipped} skipped (named above)")
        } else {
            String::new()
        }
    );
    if skipped > 0 {
        return Err(anyhow::Error::new(crate::error::Reported {
            message: format!("{skipped} files skipped"),
            code: crate::error::ExitCode::Usage,
        }));
    }
    Ok(0)
}

fn trend(h: &History, a: &TrendArgs) -> Result<i32> {
    let t = h.trend(&TrendQuery {
        device: a.device.clone(),
        test: a.test.clone(),
        metric: a.metric.clone(),
    })?;
    if a.json {
        crate::outln!("{}", serde_json::to_string_pretty(&t)?);
    } else {
        if a.test.is_none() {
            let others = h.tests(&t.device)?.len().saturating_sub(1);
            if others > 0 {
                crate::eline!(
                    "iolab: showing '{}', the first row of `iolab {}`'s table among the tests run most on this device ({others} more: --test NAME)",
                    t.test,
                    t.command
                );
            }
        }
        let entries = render::trend_entries(h, &t)?;
        crate::out!("{}", render::render_trend(&t, &entries));
        let changes = render::trend_settings_changes(h, &t)?;
        crate::out!("{}", render::render_settings_changes(&changes));
    }
    Ok(0)
}

fn health(h: &History, a: &HealthArgs) -> Result<i32> {
    let device = h.resolve_device(&a.device)?;
    let points = h.health_history(&device)?;
    if a.json {
        #[derive(serde::Serialize)]
        struct Health<'a> {
            device: &'a str,
            points: &'a [crate::history::HealthPoint],
        }
        let out = Health {
            device: &device,
            points: &points,
        };
        crate::outln!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        crate::out!("{}", render::render_health(&device, &points));
    }
    Ok(0)
}

fn devices(h: &History, a: &DevicesArgs) -> Result<i32> {
    let d = h.devices()?;
    if a.json {
        #[derive(serde::Serialize)]
        struct Device {
            device: String,
            results: usize,
        }
        let v: Vec<Device> = d
            .into_iter()
            .map(|(device, results)| Device { device, results })
            .collect();
        crate::outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        crate::out!("{}", render::render_devices(&d));
    }
    Ok(0)
}

/// `history forget ID...`: remove the results, and say which (as the list shows them).
fn forget(h: &History, a: &ForgetArgs) -> Result<i32> {
    let gone = h.forget(&a.ids)?;
    crate::out!("{}", render::render_forgotten(&gone));
    Ok(0)
}

//! `iolab copy`: options -> config (all checks before anything is created) -> result file
//! -> data set into RAM -> phases x repeats (saved after every phase) -> table.

use anyhow::{Context, Result};
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table};

use crate::cli::copy::CopyArgs;
use crate::model::{ResultDoc, ResultSink, TestResult};
use crate::runner::{ProgressMode, RunContext};
use crate::units::{fmt_mb_per_s, fmt_size_iec, fmt_thousands};
use crate::workload::copy::{CopyConfig, dataset, phases};

pub fn execute(args: &CopyArgs, argv: Vec<String>) -> Result<i32> {
    if args.dataset == "list" {
        print!("{}", list_datasets(args.seed));
        return Ok(0);
    }
    let cfg = CopyConfig::from_args(args)?;
    let mut ctx = RunContext::new(ProgressMode::detect(cfg.quiet));
    ctx.seed = cfg.settings.seed;
    ctx.stop
        .install()
        .context("cannot install signal handlers")?;
    let sink = ResultSink::create(cfg.output.as_deref(), "copy")?;
    let mut doc = ResultDoc::new(
        "copy",
        argv,
        crate::sysinfo::capture_environment(&cfg.target),
    );
    let outcome = phases::run_copy(&cfg, &ctx, &mut doc, &sink);
    crate::commands::run::finish_doc(&mut doc, &outcome);
    sink.save(&doc)?;
    if cfg.json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{}", render_copy_table(&doc));
        if let Some(p) = &sink.path {
            eprintln!("results: {}", p.display());
        }
    }
    outcome.map(|_| 0)
}

/// `--dataset list`: every data set with its file count and size at scale 1.
fn list_datasets(seed: u64) -> String {
    let mut out = String::new();
    for (name, what) in dataset::DATASETS {
        if let Some(p) = dataset::plan(name, seed, 1.0) {
            out.push_str(&format!(
                "{name:<12} {:>7} files {:>10}  {what}\n",
                fmt_thousands(p.files.len() as f64),
                fmt_size_iec(p.data_bytes())
            ));
        }
    }
    out
}

fn median_of(t: &TestResult, key: &str) -> Option<f64> {
    t.summary.get(key).map(|s| s.median)
}

/// The table: one row per phase, medians over the runs, space and integrity columns.
pub fn render_copy_table(doc: &ResultDoc) -> String {
    let env = &doc.environment;
    let mut out = format!(
        "iolab {} copy on {} ({}, {})\n",
        doc.tool.version, env.target_path, env.fs_type, env.mount_options
    );
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(vec![
            "Test", "Files", "Data", "Runs", "Close s", "syncfs s", "MB/s", "±CI %", "files/s",
            "On disk", "WA", "Verify",
        ]);
    let ceiling = doc
        .tests
        .iter()
        .find(|t| t.copy.as_ref().is_some_and(|c| c.phase == "ceiling"))
        .and_then(|t| median_of(t, "bw_bytes_per_s"));
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
            if let Some(r) = s.overhead_ratio {
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
        let wa = t
            .runs
            .last()
            .and_then(|r| r.write_amplification)
            .map(|w| format!("{w:.2}"));
        let verify = last.and_then(|c| c.verify.as_ref()).map(|v| {
            if v.ok {
                "ok".to_string()
            } else {
                format!("{} differ", v.mismatches.len())
            }
        });
        let mut mbs = bw.map(fmt_mb_per_s).unwrap_or_else(|| "-".into());
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
                    .map(fmt_thousands)
                    .unwrap_or_else(|| "-".into()),
            )
            .set_alignment(CellAlignment::Right),
            Cell::new(space.unwrap_or_default()),
            Cell::new(wa.unwrap_or_else(|| "-".into())).set_alignment(CellAlignment::Right),
            Cell::new(verify.unwrap_or_else(|| "-".into())),
        ]);
    }
    out.push_str(&table.to_string());
    out.push('\n');
    out.push_str(
        "MB/s and files/s are durable: data / (time to the last close + the syncfs after it); medians over the runs. (%) = share of the RAM-to-RAM ceiling.\n",
    );
    out.push_str(&crate::report::table::render_warnings(doc));
    out
}

//! `iolab slack`: check the input (directory or CSV, `--fs`, `--calibrate`) before anything
//! is created, scan, compute one row per allocation unit, save the result and print it.

pub mod table;

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::family::{Family, Output, execute as execute_family};
use crate::analysis::slack::rules::FsRules;
use crate::analysis::slack::{Inventory, apply_costs, cost, csv, recommend, scan, unit_row, units};
use crate::cli::slack::SlackArgs;
use crate::model::slack::{CostModel, SlackResult};
use crate::model::{ResultDoc, ResultSink, Warning, WarningCode};
use crate::runner::RunContext;
use crate::usage;

enum Source {
    Dir(PathBuf),
    Csv(PathBuf, Inventory),
}

fn source_of(args: &SlackArgs) -> Result<Source> {
    match (&args.dir, &args.sizes_from) {
        (Some(d), None) => match std::fs::metadata(d) {
            Ok(m) if m.is_dir() => Ok(Source::Dir(d.clone())),
            Ok(_) => Err(usage!(
                "{} is not a directory (give a directory to scan, or --sizes-from FILE.csv)",
                d.display()
            )),
            Err(e) => Err(usage!("cannot scan {}: {e}", d.display())),
        },
        (None, Some(f)) => csv::read(f)
            .map(|inv| Source::Csv(f.clone(), inv))
            .map_err(|e| usage!("--sizes-from {e}")),
        _ => Err(usage!("give either a DIR to scan or --sizes-from FILE.csv")),
    }
}

fn cost_model(args: &SlackArgs) -> Result<CostModel> {
    let Some(path) = &args.calibrate else {
        return Ok(cost::defaults(&units()));
    };
    let doc = ResultDoc::read(path).map_err(anyhow::Error::new)?;
    cost::calibrate(&doc, path, &units()).map_err(|e| usage!("--calibrate {e}"))
}

/// The whole calculation for one inventory: rows per unit, costs, recommendations.
pub fn compute(
    inv: &Inventory,
    rules: &FsRules,
    model: CostModel,
    source: &str,
    path: &Path,
) -> SlackResult {
    let mut rows: Vec<_> = units().iter().map(|&u| unit_row(inv, rules, u)).collect();
    apply_costs(&mut rows, &model);
    SlackResult {
        source: source.into(),
        path: path.display().to_string(),
        fs: rules.kind.to_string(),
        rule_notes: rules.notes(),
        scan: inv.stats.clone(),
        current_fs: None,
        current_unit_bytes: None,
        recommendations: recommend(&rows),
        units: rows,
        cost_model: model,
    }
}

fn warnings(doc: &mut ResultDoc, r: &SlackResult) {
    let mut warn = |code: WarningCode, message: String| {
        doc.warn(Warning {
            code,
            message,
            test: None,
        })
    };
    if r.scan.unreadable > 0 {
        warn(
            WarningCode::UnreadableEntries,
            format!(
                "{} entries could not be read and were skipped, e.g. {}",
                r.scan.unreadable,
                r.scan.unreadable_examples.join("; ")
            ),
        );
    }
    if let Some(row) = r.units.iter().find(|u| u.too_large_files > 0) {
        warn(
            WarningCode::TooLargeForFs,
            format!(
                "{} files are larger than {} can store ({} B at most); they are left out of the allocation{}",
                row.too_large_files,
                r.fs,
                crate::analysis::slack::rules::FAT32_MAX_FILE,
                if r.scan.over_4gib_examples.is_empty() {
                    String::new()
                } else {
                    format!(", e.g. {}", r.scan.over_4gib_examples.join("; "))
                }
            ),
        );
    }
    if r.scan.files == 0 {
        warn(WarningCode::NoFiles, "no regular files found".into());
    }
    if r.cost_model.source == "defaults" {
        warn(WarningCode::CostDefaults, r.cost_model.note.clone());
    }
}

impl crate::cli::Execute for SlackArgs {
    fn execute(&self, argv: Vec<String>) -> anyhow::Result<i32> {
        let args = self;
        let rules = FsRules::parse(&args.fs, args.inode_size, args.max_inline, args.mft_record)
            .map_err(|e| usage!("{e}"))?;
        let source = source_of(args)?;
        let model = cost_model(args)?;
        execute_family(
            SlackFamily {
                args,
                rules,
                input: Some((source, model)),
            },
            argv,
        )
    }
}

/// `iolab slack` as a family: it measures no device, it scans (or reads) an inventory.
struct SlackFamily<'a> {
    args: &'a SlackArgs,
    rules: FsRules,
    /// The checked input, taken by `measure`.
    input: Option<(Source, CostModel)>,
}

impl Family for SlackFamily<'_> {
    const NAME: &'static str = "slack";
    // An interrupted scan is saved as such (partial counts), then exits 130/143/129 with
    // nothing printed.
    const OUTPUT_ON_ERROR: bool = false;

    fn locks(&self) -> Vec<&Path> {
        Vec::new()
    }

    fn output(&self) -> Output<'_> {
        Output::of(&self.args.out)
    }

    /// The scanned directory, or the directory holding the CSV file.
    fn environment_path(&self) -> PathBuf {
        match &self.input {
            Some((Source::Dir(d), _)) => d.clone(),
            Some((Source::Csv(f, _), _)) => f
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."))
                .to_path_buf(),
            None => PathBuf::from("."),
        }
    }

    fn measure(&mut self, ctx: &RunContext, doc: &mut ResultDoc, _sink: &ResultSink) -> Result<()> {
        let Some((source, model)) = self.input.take() else {
            return Ok(());
        };
        let stop = &ctx.stop;
        let (kind, path, inv) = match source {
            Source::Dir(d) => {
                let inv = scan::scan(&d, stop, self.args.one_file_system);
                ("dir", d, inv)
            }
            Source::Csv(f, inv) => ("csv", f, inv),
        };
        let mut result = compute(&inv, &self.rules, model, kind, &path);
        if kind == "dir" {
            result.current_fs = Some(doc.environment.fs_type.clone()).filter(|f| !f.is_empty());
            result.current_unit_bytes = nix::sys::statvfs::statvfs(&path)
                .ok()
                .map(|st| st.block_size());
        }
        warnings(doc, &result);
        doc.slack = Some(result);
        stop.check().map_err(anyhow::Error::new)
    }

    fn render(&self, doc: &ResultDoc) -> String {
        let mut out = table::render(doc);
        out.push_str(&crate::report::table::render_warnings(doc));
        out
    }
}

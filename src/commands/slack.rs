//! `iolab slack`: check the input (directory or CSV, `--fs`, `--calibrate`) before anything
//! is created, scan, compute one row per allocation unit, save the result and print it.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::family::{Family, Output, execute as execute_family};
use crate::analysis::slack::rules::FsRules;
use crate::analysis::slack::scan;
use crate::cli::slack::{SlackArgs, SlackInput, Source};
use crate::model::slack::CostModel;
use crate::model::{Delivery, ResultDoc, ResultSink};
use crate::runner::RunContext;

impl crate::cli::Execute for SlackArgs {
    fn execute(&self, argv: Vec<String>) -> anyhow::Result<i32> {
        let args = self;
        let SlackInput {
            rules,
            source,
            model,
        } = SlackInput::from_args(args)?;
        execute_family(
            SlackFamily {
                args,
                rules,
                input: Some((source, model)),
                out: args.out.delivery(),
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
    out: Delivery,
}

impl Family for SlackFamily<'_> {
    const NAME: &'static str = "slack";
    // An interrupted scan is saved as such (partial counts), then exits 130/143/129 with
    // no table printed (`--json` still prints the document, status `interrupted`).
    const OUTPUT_ON_ERROR: bool = false;

    fn locks(&self) -> Vec<&Path> {
        Vec::new()
    }

    fn output(&self) -> Output<'_> {
        Output::to(&self.out)
    }

    /// The scanned directory, or the directory holding the CSV file.
    fn environment_path(&self) -> PathBuf {
        match &self.input {
            Some((Source::Dir(d), _)) => d.clone(),
            Some((Source::Csv(f, _), _)) => crate::os::dir_of(f).to_path_buf(),
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
            Source::Csv(f, inv) => ("csv", f, *inv),
        };
        let mut result = crate::analysis::slack::compute(&inv, &self.rules, model, kind, &path);
        if kind == "dir" {
            result.current_fs = crate::analysis::slack::tree_fs(&path)
                .or_else(|| Some(doc.environment.fs_type.clone()))
                .filter(|f| !f.is_empty());
            // The cluster, not statvfs's block size: ext4 bigalloc says 4 KiB for 16 KiB
            // clusters, fusefat 1 KiB for any.
            result.current_unit_bytes = crate::workload::files::sizes::alloc_unit(&path);
        }
        crate::analysis::slack::warnings(doc, &result);
        doc.slack = Some(result);
        stop.check().map_err(anyhow::Error::new)
    }

    fn render(&self, doc: &ResultDoc) -> String {
        let mut out = crate::report::slack::render(doc);
        out.push_str(&crate::report::table::render_warnings(doc));
        out
    }
}

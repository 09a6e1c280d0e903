//! `iolab report`: check the output path and every input, render, then write the file
//! atomically (temp file + rename), so a bad input or a crash never leaves a partial report.

use std::io::Write;
use std::path::Path;

use anyhow::Context;

use crate::cli::report::ReportArgs;
use crate::report::load::{Loaded, load_inputs};
use crate::report::{csv, document, html, markdown};

/// The output formats, chosen by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Html,
    Markdown,
    Csv,
}

impl Format {
    pub fn from_path(p: &Path) -> anyhow::Result<Format> {
        let ext = p
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        match ext.as_str() {
            "html" | "htm" => Ok(Format::Html),
            "md" | "markdown" => Ok(Format::Markdown),
            "csv" => Ok(Format::Csv),
            _ => Err(crate::usage!(
                "-o {}: unknown report format; use a name ending in .html, .md or .csv",
                p.display()
            )),
        }
    }
}

/// Render `inputs` in `format` (pure).
pub fn render(inputs: &[Loaded], format: Format) -> String {
    match format {
        Format::Html => html::render(&document::build(inputs)),
        Format::Markdown => markdown::render(&document::build(inputs)),
        Format::Csv => csv::render(inputs),
    }
}

impl crate::cli::Execute for ReportArgs {
    fn execute(&self, _argv: Vec<String>) -> anyhow::Result<i32> {
        let args = self;
        let output = args.output_file();
        let format = Format::from_path(&output)?;
        let dir = crate::os::dir_of(&output).to_path_buf();
        if !dir.is_dir() {
            return Err(crate::usage!(
                "-o {}: the directory {} does not exist",
                output.display(),
                dir.display()
            ));
        }
        if output.is_dir() {
            return Err(crate::usage!(
                "-o {}: is a directory; give a file name ending in .html, .md or .csv",
                output.display()
            ));
        }
        let inputs = load_inputs(&args.results)?;
        if format == Format::Csv {
            csv_rows_or_say_why(&inputs)?;
        }
        let text = render(&inputs, format);
        let mut tmp = tempfile::NamedTempFile::new_in(&dir)
            .map_err(|e| crate::usage!("cannot write to {}: {e}", dir.display()))?;
        // Temp files are created 0600; a report is meant to be shared.
        use std::os::unix::fs::PermissionsExt;
        let _ = tmp
            .as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644));
        tmp.write_all(text.as_bytes())
            .and_then(|_| tmp.as_file().sync_all())
            .with_context(|| format!("cannot write {}", output.display()))?;
        tmp.persist(&output)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {}", output.display(), e.error))?;
        crate::eline!(
            "report: {} ({} result file{})",
            crate::os::text::terminal(&output.display().to_string()),
            inputs.len(),
            if inputs.len() == 1 { "" } else { "s" }
        );
        Ok(0)
    }
}

/// A CSV holds test runs: an input without any (an `iolab slack` or `age` result, a run stopped
/// before its first test) gave no row and was counted in "report: x.csv (2 result files)"
/// without a word, and with no other input the file was the header alone. Said for each such
/// input; refused (nothing written) when no input gives a row.
fn csv_rows_or_say_why(inputs: &[Loaded]) -> Result<(), crate::error::UsageError> {
    let why = |l: &Loaded| match l.doc.command.as_str() {
        c @ ("slack" | "age") => format!(
            "{}: an `iolab {c}` result has no measured runs for CSV rows; an .html or .md report shows its tables",
            l.path.display()
        ),
        c => format!(
            "{}: this `iolab {c}` result ({}) holds no measured run for CSV rows",
            l.path.display(),
            l.doc.status
        ),
    };
    let rowless: Vec<&Loaded> = inputs
        .iter()
        .filter(|l| {
            csv::render(std::slice::from_ref(*l))
                .lines()
                .nth(1)
                .is_none()
        })
        .collect();
    if rowless.len() == inputs.len() {
        let whys: Vec<String> = rowless.iter().map(|l| why(l)).collect();
        return Err(crate::error::UsageError(format!(
            "nothing to write in a CSV: {}",
            whys.join("; ")
        )));
    }
    for l in rowless {
        crate::eline!("iolab: note: no rows from {}", why(l));
    }
    Ok(())
}

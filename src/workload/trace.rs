//! The `trace` workload family: application workloads as data. A workload (a built-in from
//! `workloads/` or a user's TOML file) is parsed and validated by `validate` into `format`'s types, laid out and run
//! by `runner`, measured into results by `measure`; `record` turns a program's strace
//! output into a trace file and `replay` plays one back. `parse_reference` plugs workloads into
//! `iolab matrix` (`trace:name=office:scale=0.05`).

pub mod builtins;
pub mod child;
pub mod fileset;
pub mod format;
pub mod measure;
pub mod record;
pub mod replay;
pub mod replay_async;
pub mod runner;
pub mod strace;
pub mod strace_line;
pub mod summary;
pub mod tracefile;
pub mod tracepoints;
pub mod validate;

use std::path::Path;

use crate::error::UsageError;

use format::Workload;

/// Where a workload came from: `builtin` or `file`.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub workload: Workload,
    pub source: &'static str,
}

/// A built-in name or a TOML file path -> validated workload. Errors are one line:
/// `office.toml:12:14: sequential = 1.5 is out of range (0 to 1)`.
pub fn load(name_or_file: &str) -> Result<Loaded, UsageError> {
    if let Some(text) = builtins::get(name_or_file) {
        let workload = validate::parse(name_or_file, text).map_err(|e| {
            UsageError::new(format!(
                "built-in {name_or_file}:{}:{}: {}",
                e.line, e.column, e.reason
            ))
        })?;
        return Ok(Loaded {
            workload,
            source: "builtin",
        });
    }
    let path = Path::new(name_or_file);
    if !path.is_file() {
        let looks_like_file = name_or_file.contains('/') || name_or_file.ends_with(".toml");
        let what = if path.is_dir() {
            format!("{name_or_file} is a directory, not a workload file")
        } else if looks_like_file {
            format!("workload file {name_or_file} does not exist")
        } else {
            format!("unknown built-in workload '{name_or_file}'")
        };
        return Err(UsageError::new(format!(
            "{what} (built-ins: {}; or give a path to a .toml file)",
            builtins::names().join(", ")
        )));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| UsageError::new(format!("{name_or_file}: cannot read: {e}")))?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| name_or_file.to_string());
    let workload = validate::parse(&stem, &text).map_err(|e| {
        UsageError::new(format!(
            "{name_or_file}:{}:{}: {}",
            e.line, e.column, e.reason
        ))
    })?;
    Ok(Loaded {
        workload,
        source: "file",
    })
}

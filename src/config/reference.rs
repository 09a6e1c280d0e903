//! Matrix workload references (`files:sizes=1,4K`, `copy:dataset=media-mix:scale=0.01`,
//! `run:...`): their parameters become a command line that each family's own clap
//! definitions parse and check, so a reference accepts exactly what the command does.

use std::collections::BTreeMap;

use crate::cli::copy::CopyArgs;
use crate::cli::files::FilesArgs;
use crate::cli::run::RunArgs;
use crate::cli::trace::TraceRunArgs;
use crate::error::UsageError;
use crate::workload::copy::CopySettings;

/// Turn reference parameters into a command line for `subcommand` (keys are flag names), so
/// each family validates them with its own clap definitions: `duration=2s` -> `--duration 2s`.
/// A value `true` for a flag that takes none is passed as the bare flag.
pub fn params_to_argv(
    subcommand: &[&str],
    params: &BTreeMap<String, String>,
    bare_flags: &[&str],
) -> Vec<String> {
    let mut argv = vec!["iolab".to_string()];
    argv.extend(subcommand.iter().map(|s| s.to_string()));
    for (k, v) in params {
        argv.push(format!("--{k}"));
        if !(bare_flags.contains(&k.as_str()) && v == "true") {
            argv.push(v.clone());
        }
    }
    argv
}

/// Parse a family's arguments from reference parameters with the real CLI definitions.
pub fn parse_family_args(
    subcommand: &[&str],
    params: &BTreeMap<String, String>,
    bare_flags: &[&str],
) -> Result<crate::cli::Command, UsageError> {
    use clap::Parser;
    let argv = params_to_argv(subcommand, params, bare_flags);
    crate::cli::Cli::try_parse_from(&argv)
        .map(|c| c.command)
        .map_err(|e| {
            let msg = e.to_string();
            let first = msg
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("error: ");
            UsageError::new(format!("workload {}: {first}", subcommand.join(" ")))
        })
}

/// The label of a reference: `FAMILY:KEY=VALUE...` in key order.
fn label(family: &str, params: &BTreeMap<String, String>) -> String {
    let mut label = family.to_string();
    for (k, v) in params {
        label.push_str(&format!(":{k}={v}"));
    }
    label
}

/// A reference may not name the target or the result directory: the matrix sets both.
fn matrix_sets_target(family: &str, params: &BTreeMap<String, String>) -> Result<(), UsageError> {
    if params.contains_key("target") || params.contains_key("output") {
        return Err(UsageError::new(format!(
            "workload {family}: target and output are set by the matrix"
        )));
    }
    Ok(())
}

/// Parse a `run:KEY=VALUE:...` matrix reference (any `iolab run` flag, e.g.
/// `run:preset=real:duration=2s`) into `iolab run` arguments and its label.
pub fn run(params: &BTreeMap<String, String>) -> Result<(RunArgs, String), UsageError> {
    matrix_sets_target("run", params)?;
    let cmd = parse_family_args(&["run"], params, &["keep", "no-save", "json"])?;
    let crate::cli::Command::Run(args) = cmd else {
        unreachable!("parsed as run")
    };
    Ok((args, label("run", params)))
}

/// Flags of `iolab files` that take no value (a reference gives them as `KEY=true`).
const BARE_FLAGS: &[&str] = &[
    "nice",
    "drop-caches",
    "keep-files",
    "no-room-check",
    "no-save",
    "json",
];

/// Parse a `files:KEY=VALUE:...` matrix reference (any `iolab files` flag, e.g.
/// `files:sizes=1,4K:files-per-portion=1000`) into `iolab files` arguments and its label.
pub fn files(params: &BTreeMap<String, String>) -> Result<(FilesArgs, String), UsageError> {
    for k in ["target", "output", "keep-files"] {
        if params.contains_key(k) {
            return Err(UsageError::new(format!(
                "workload files: {k} is set by the matrix"
            )));
        }
    }
    let cmd = parse_family_args(&["files"], params, BARE_FLAGS)?;
    let crate::cli::Command::Files(args) = cmd else {
        unreachable!("parsed as files")
    };
    Ok((args, label("files", params)))
}

/// Parse a `copy:KEY=VALUE:...` matrix reference (any `iolab copy` flag, e.g.
/// `copy:dataset=media-mix:scale=0.01:phases=write,delete`) into `iolab copy` arguments,
/// checked as settings, and its label.
pub fn copy(params: &BTreeMap<String, String>) -> Result<(CopyArgs, String), UsageError> {
    matrix_sets_target("copy", params)?;
    let bare = ["preserve", "verify", "ceiling", "no-save", "json", "quiet"];
    let cmd = parse_family_args(&["copy"], params, &bare)?;
    let crate::cli::Command::Copy(args) = cmd else {
        unreachable!("parsed as copy")
    };
    let settings = CopySettings::from_args(&args)?;
    let mut label = format!("copy:{}", settings.dataset);
    for (k, v) in params.iter().filter(|(k, _)| k.as_str() != "dataset") {
        label.push_str(&format!(":{k}={v}"));
    }
    Ok((args, label))
}

/// Parse a `trace:name=NAME|FILE[:scale=F][:repeat=N]` matrix reference into `iolab trace
/// run` arguments, checked, and its label.
pub fn trace(params: &BTreeMap<String, String>) -> Result<(TraceRunArgs, String), UsageError> {
    let Some(name) = params.get("name") else {
        return Err(UsageError::new(format!(
            "workload trace: give name=NAME|FILE (built-ins: {})",
            crate::workload::trace::builtins::names().join(", ")
        )));
    };
    matrix_sets_target("trace", params)?;
    let mut rest = params.clone();
    rest.remove("name");
    let cmd = parse_family_args(&["trace", "run", name], &rest, &["no-save", "json"])?;
    let crate::cli::Command::Trace(t) = cmd else {
        unreachable!("parsed as trace")
    };
    let crate::cli::trace::TraceCmd::Run(args) = t.cmd else {
        unreachable!("parsed as trace run")
    };
    // Validate now, before the matrix formats anything.
    crate::workload::trace::load(&args.workload)?;
    crate::workload::trace::measure::check_scale(args.scale)?;
    Ok((args, label("trace", params)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrix_reference_parses() {
        let r =
            crate::workload::WorkloadRef::parse("files:sizes=1,4K:files-per-portion=1000").unwrap();
        let (_, label) = files(&r.params).unwrap();
        assert!(label.starts_with("files:"));
        let bad = crate::workload::WorkloadRef::parse("files:target=/tmp").unwrap();
        assert!(files(&bad.params).is_err());
        let bad = crate::workload::WorkloadRef::parse("files:portions=x").unwrap();
        assert!(files(&bad.params).is_err());
    }

    #[test]
    fn matrix_reference_parses_and_rejects() {
        let r = crate::workload::WorkloadRef::parse("copy:dataset=media-mix:scale=0.01").unwrap();
        let (_, label) = copy(&r.params).unwrap();
        assert_eq!(label, "copy:media-mix:scale=0.01");
        let r = crate::workload::WorkloadRef::parse("copy:dataset=nope").unwrap();
        let e = copy(&r.params).err().unwrap();
        assert!(e.0.contains("unknown data set 'nope'") && e.0.contains("media-mix"));
        let r = crate::workload::WorkloadRef::parse("copy:scale=-1").unwrap();
        assert!(copy(&r.params).is_err());
    }
}

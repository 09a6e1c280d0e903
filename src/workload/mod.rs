//! What to do, as data: block workloads, presets, and the workload reference that lets the
//! matrix run any family (block presets, small files, copies, traces) on a mounted target.

pub mod block;
pub mod offsets;
pub mod presets;
pub mod saturate;

use std::path::Path;

use crate::model::{TestResult, Warning};

/// What a workload family produced on one target directory.
#[derive(Debug, Default)]
pub struct WorkloadOutput {
    pub tests: Vec<TestResult>,
    pub warnings: Vec<Warning>,
}

impl WorkloadOutput {
    /// Run a family's document-filling function (the same one its subcommand uses) into a
    /// throw-away document on `dir`, keeping its tests and warnings for the matrix.
    pub fn collect(
        command: &str,
        dir: &Path,
        run: impl FnOnce(&mut crate::model::ResultDoc, &crate::model::ResultSink) -> anyhow::Result<()>,
    ) -> anyhow::Result<WorkloadOutput> {
        let mut doc = crate::model::ResultDoc::new(
            command,
            Vec::new(),
            crate::sysinfo::capture_environment(dir),
        );
        let r = run(&mut doc, &crate::model::ResultSink { path: None });
        let out = WorkloadOutput {
            tests: doc.tests,
            warnings: doc.warnings,
        };
        r.map(|_| out)
    }
}

/// A workload that can run on any directory (used by `iolab matrix`). Each family
/// implements it next to its own code; the matrix does not know the families.
pub trait DirWorkload: Send + Sync {
    /// Short label for tables: `run:default`, `files:4K`, `copy:media-mix`.
    fn label(&self) -> String;
    /// Run once on `dir` (a fresh, empty file system's mount point or a subdirectory).
    fn run_on(&self, dir: &Path, ctx: &crate::runner::RunContext)
    -> anyhow::Result<WorkloadOutput>;
}

pub mod copy;
pub mod files;
pub mod trace;

use std::collections::BTreeMap;

use crate::error::UsageError;

/// A parsed workload reference: `FAMILY[:KEY=VALUE[:KEY=VALUE...]]`, e.g.
/// `run:preset=real:duration=2s`, `files:sizes=1,4K,cluster+1:files-per-portion=1000`,
/// `copy:dataset=media-mix:scale=0.01`, `trace:name=office:scale=0.1`.
/// Values may contain commas; keys are the family's CLI flag names without `--`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadRef {
    pub family: String,
    pub params: BTreeMap<String, String>,
}

impl WorkloadRef {
    pub fn parse(s: &str) -> Result<WorkloadRef, UsageError> {
        let mut parts = s.split(':');
        let family = parts.next().unwrap_or("").trim().to_string();
        if family.is_empty() {
            return Err(UsageError::new(format!(
                "workload '{s}': empty family (expected run, files, copy or trace)"
            )));
        }
        let mut params = BTreeMap::new();
        for p in parts {
            let (k, v) = p.split_once('=').ok_or_else(|| {
                UsageError::new(format!("workload '{s}': '{p}' is not KEY=VALUE"))
            })?;
            params.insert(k.trim().to_string(), v.trim().to_string());
        }
        Ok(WorkloadRef { family, params })
    }
}

/// Build the workload a reference names. New families add one line here.
pub fn resolve(r: &WorkloadRef) -> Result<Box<dyn DirWorkload>, UsageError> {
    match r.family.as_str() {
        "run" => crate::commands::run::dir_workload(&r.params),
        "files" => files::dir_workload(&r.params),
        "copy" => copy::dir_workload(&r.params),
        "trace" => trace::dir_workload(&r.params),
        other => Err(UsageError::new(format!(
            "unknown workload family '{other}' (known: run, files, copy, trace)"
        ))),
    }
}

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

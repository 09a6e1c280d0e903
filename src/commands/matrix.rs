//! `iolab matrix`: format, mount and compare real file systems, allocation units and mount
//! options. Plan (all input checked) -> work dir + state file -> mount-option probe ->
//! every configuration x run on a fresh file system -> result file after every run ->
//! configuration table and one ranking per workload.

mod device;
mod exec;
mod plan;
mod study;
mod workload;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::family::{Family, Output, execute as execute_family};
use crate::cli::matrix::MatrixArgs;
use crate::fs::instance::{FsInstance, Place, SetupError, Spec};
use crate::fs::registry::StateFile;
use crate::model::{Delivery, ResultDoc, ResultSink, Warning, WarningCode};
use crate::runner::RunContext;
use plan::{PlaceReq, Plan};

pub use crate::report::matrix_table::relative_text;

/// The directory holding the state file and mount points (and the images, in image mode).
fn make_work_dir(place: &PlaceReq) -> Result<(PathBuf, Place)> {
    let base = match place {
        PlaceReq::Images { base, .. } => base.clone(),
        PlaceReq::Device(_) => std::env::temp_dir(),
    };
    let dir = tempfile::Builder::new()
        .prefix("iolab-matrix-")
        .tempdir_in(&base)
        .map_err(|e| crate::usage!("cannot create a directory in {}: {e}", base.display()))?
        .keep();
    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
    let p = match place {
        PlaceReq::Images { size, .. } => Place::Image {
            dir: dir.clone(),
            size: *size,
        },
        PlaceReq::Device(d) => Place::Device(d.clone()),
    };
    Ok((dir, p))
}

/// Mount options are only judged by the kernel (or the FUSE helper): try each non-default
/// set once on a small throw-away image before anything is measured or formatted.
fn probe_mount_options(plan: &Plan, dir: &Path, state: &StateFile) -> Result<()> {
    // Per mkfs option set too: what mounts can depend on how it was made (`data=journal` on
    // an ext4 made without a journal).
    let mut tried: Vec<(&str, &[String], &str)> = Vec::new();
    for cp in &plan.configs {
        let Ok(method) = &cp.method else { continue };
        let key = (cp.fs.name, cp.mkfs_opts.as_slice(), cp.mount_opts.as_str());
        if cp.mount_opts.is_empty() || tried.contains(&key) {
            continue;
        }
        tried.push(key);
        let place = Place::Image {
            dir: dir.to_path_buf(),
            size: cp.fs.min_size.max(64 << 20),
        };
        let spec = Spec {
            fs: cp.fs,
            method,
            unit: None,
            mkfs_opts: &cp.mkfs_opts,
            mount_opts: &cp.mount_opts,
            place: &place,
            tag: &format!("probe-{}", tried.len()),
            keep_image: false,
        };
        match FsInstance::create(&spec, state) {
            Ok(inst) => drop(inst),
            Err(SetupError {
                step: "mount",
                error,
            }) => {
                // One line, as every usage error: the mount's framed stderr is folded in.
                return Err(crate::usage!(
                    "--mount-opts '{}' is rejected by {} ({}): {}",
                    cp.mount_opts,
                    cp.fs.name,
                    method.describe(),
                    crate::error::one_line(&format!("{error:#}"))
                ));
            }
            // mkfs trouble is the configuration's own failure, reported in its row.
            Err(_) => {}
        }
    }
    Ok(())
}

impl crate::cli::Execute for MatrixArgs {
    fn execute(&self, argv: Vec<String>) -> anyhow::Result<i32> {
        let args = self;
        let plan = plan::plan(args)?;
        execute_family(
            MatrixFamily {
                args,
                plan,
                work: None,
                out: Delivery {
                    quiet: args.out.json || args.out.quiet,
                    ..args.out.delivery()
                },
            },
            argv,
        )
    }
}

/// `iolab matrix` as a family: every configuration x workload on a fresh file system.
struct MatrixFamily<'a> {
    args: &'a MatrixArgs,
    plan: Plan,
    /// The work directory, where the file systems go, and its state file (`prepare`).
    work: Option<(PathBuf, Place, StateFile)>,
    /// Quiet also with `--json` (the matrix's progress would be the only stderr).
    out: Delivery,
}

impl MatrixFamily<'_> {
    fn work(&self) -> Result<&(PathBuf, Place, StateFile)> {
        self.work
            .as_ref()
            .ok_or_else(|| anyhow::anyhow!("the matrix has no work directory"))
    }
}

impl Family for MatrixFamily<'_> {
    const NAME: &'static str = "matrix";

    fn locks(&self) -> Vec<&Path> {
        Vec::new()
    }

    fn output(&self) -> Output<'_> {
        Output::to(&self.out)
    }

    fn prepare(&mut self, _ctx: &RunContext) -> Result<()> {
        let (dir, place) = make_work_dir(&self.plan.place)?;
        let state = StateFile::create(&dir, true)
            .with_context(|| format!("cannot write the state file in {}", dir.display()))?;
        probe_mount_options(&self.plan, &dir, &state)?;
        self.work = Some((dir, place, state));
        Ok(())
    }

    fn environment_path(&self) -> PathBuf {
        self.work
            .as_ref()
            .map(|(dir, _, _)| dir.clone())
            .unwrap_or_else(std::env::temp_dir)
    }

    fn start(&mut self, doc: &mut ResultDoc) {
        let plan = &self.plan;
        for n in &plan.notes {
            crate::eline!("iolab: {n}");
        }
        if plan.repeat.max_runs() < 2 && !plan.workloads.is_empty() {
            doc.warn(Warning {
                code: WarningCode::NoSpread,
                // A workload's own repeat= still fills the spread column (over its runs on the
                // one file system), so the warning does not say there is no spread at all.
                message: "one run (one fresh file system) per configuration: no spread between fresh file systems can be given (a spread shown is over a workload's own repeats on one file system); use --repeat 3".into(),
                test: None,
            });
        }
        for n in &plan.notes {
            doc.warn(Warning {
                code: WarningCode::MatrixNote,
                message: n.clone(),
                test: None,
            });
        }
    }

    fn measure(&mut self, ctx: &RunContext, doc: &mut ResultDoc, sink: &ResultSink) -> Result<()> {
        let plan = &self.plan;
        let (_, place, state) = self.work()?;
        doc.configurations = plan
            .configs
            .iter()
            .map(|c| exec::initial_row(c, place))
            .collect();
        sink.save(doc)?;
        let ex = exec::Exec {
            plan,
            place: place.clone(),
            state,
            ctx,
            keep_image: self.args.keep_image,
        };
        let mut outcome = Ok(());
        for i in 0..plan.configs.len() {
            if let Err(e) = ex.run_config(i, doc, sink) {
                outcome = Err(e);
                break;
            }
        }
        // Configurations never reached (stopped) say so.
        if outcome.is_err() {
            for c in doc.configurations.iter_mut() {
                if c.status == "ok" && c.runs.is_empty() {
                    c.status = "skipped".into();
                    c.reason = Some("not run: the matrix was stopped".into());
                }
            }
        }
        drop(ex);
        state.finish();
        outcome?;
        if !plan.workloads.is_empty()
            && let Some(why) = crate::report::matrix_table::nothing_measured(doc)
        {
            // No spread to miss where nothing ran; the error says what happened instead.
            doc.warnings.retain(|w| w.code != WarningCode::NoSpread);
            return Err(anyhow::anyhow!(why));
        }
        Ok(())
    }

    fn render(&self, doc: &ResultDoc) -> String {
        // No ranking of rows that hold no figure: the configurations with their reasons, and
        // the error that says nothing was measured.
        if let Some(out) = crate::report::matrix_table::render_nothing_measured(doc) {
            return out;
        }
        let mut labels: Vec<String> = self
            .plan
            .workloads
            .iter()
            .map(|w| w.label.clone())
            .collect();
        if self.plan.age.is_none() {
            return crate::report::matrix_table::render(doc, &labels, "");
        }
        let pairs: Vec<(String, String)> = labels
            .iter()
            .map(|l| (l.clone(), plan::aged_label(l)))
            .collect();
        labels.extend(pairs.iter().map(|(_, a)| a.clone()));
        let aging =
            crate::report::age::render_aging(doc, &pairs, crate::analysis::matrix::headline);
        crate::report::matrix_table::render(doc, &labels, &aging)
    }

    fn notes(&self, _doc: &ResultDoc) -> Vec<String> {
        match &self.work {
            Some((dir, _, _)) if self.args.keep_image => {
                vec![format!("iolab: images kept in {}", dir.display())]
            }
            _ => Vec::new(),
        }
    }

    /// 1 when a configuration failed (nothing measured at all is an error, also 1).
    fn exit_code(&self, doc: &ResultDoc) -> i32 {
        let failed = doc.configurations.iter().any(|c| c.status == "failed");
        if failed { 1 } else { 0 }
    }
}

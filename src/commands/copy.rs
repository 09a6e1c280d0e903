//! `iolab copy`: options -> config (all checks before anything is created) -> result file
//! -> data set into RAM -> phases x repeats (saved after every phase) -> table.

use anyhow::{Context, Result};

use super::family::{DirFamily, Family, Output, execute as execute_family};
use crate::cli::copy::CopyArgs;
use crate::model::{ResultDoc, ResultSink};
use crate::runner::RunContext;
use crate::units::fmt_size_iec;
use crate::workload::copy::{CopyConfig, dataset, phases};

impl crate::cli::Execute for CopyArgs {
    fn execute(&self, argv: Vec<String>) -> anyhow::Result<i32> {
        let args = self;
        if args.dataset == "list" {
            match args.out.json {
                true => crate::outln!(
                    "{}",
                    serde_json::to_string_pretty(&crate::report::copy::datasets_json(args.seed))?
                ),
                false => crate::out!("{}", crate::report::copy::list_datasets(args.seed)),
            }
            return Ok(0);
        }
        if let Some(dir) = &args.generate {
            return generate_only(args, dir);
        }
        execute_family(CopyFamily::from_args(args)?, argv)
    }
}

/// `iolab copy` as a family: the command line and the matrix's `copy:` workloads.
pub struct CopyFamily {
    cfg: CopyConfig,
}

impl Family for CopyFamily {
    const NAME: &'static str = "copy";

    // One run per target, as for every subcommand that writes there.
    fn output(&self) -> Output<'_> {
        Output {
            seed: Some(self.cfg.settings.seed),
            ..Output::on(&self.cfg.target, &self.cfg.out)
        }
    }

    fn measure(&mut self, ctx: &RunContext, doc: &mut ResultDoc, sink: &ResultSink) -> Result<()> {
        phases::run_copy(&self.cfg, ctx, doc, sink)
    }

    fn render(&self, doc: &ResultDoc) -> String {
        crate::report::copy::render_copy_table(doc)
    }
}

/// `copy:KEY=VALUE:...` for the matrix: any `iolab copy` flag, e.g.
/// `copy:dataset=media-mix:scale=0.01:phases=write,delete`.
impl DirFamily for CopyFamily {
    type Args = CopyArgs;

    fn reference(
        params: &std::collections::BTreeMap<String, String>,
    ) -> Result<(CopyArgs, String), crate::error::UsageError> {
        crate::cli::reference::copy(params)
    }

    fn retarget(args: &mut CopyArgs, dir: &std::path::Path) {
        args.target = dir.to_path_buf();
        args.out.no_save = true;
    }

    fn from_args(args: &CopyArgs) -> Result<CopyFamily> {
        Ok(CopyFamily {
            cfg: CopyConfig::from_args(args)?,
        })
    }
}

/// `--generate DIR`: the data set into a new directory, nothing else.
fn generate_only(args: &CopyArgs, dir: &std::path::Path) -> Result<i32> {
    let s = crate::workload::copy::CopySettings::from_args(args)?;
    if dir.exists() {
        return Err(crate::usage!(
            "--generate {}: already exists; give a new directory",
            dir.display()
        ));
    }
    let parent = crate::os::dir_of(dir);
    let free = crate::fs::facts::free_space(parent).unwrap_or(u64::MAX) as f64;
    let need = dataset::nominal_bytes(&s.dataset, s.scale).unwrap_or(0.0);
    if need > free {
        return Err(crate::usage!(
            "--generate {}: the data set needs {}, only {} free there",
            dir.display(),
            fmt_size_iec(need as u64),
            fmt_size_iec(free as u64)
        ));
    }
    let plan = dataset::plan(&s.dataset, s.seed, s.scale)
        .ok_or_else(|| crate::usage!("unknown data set '{}'", s.dataset))?;
    std::fs::create_dir(dir).map_err(|e| crate::usage!("--generate {}: {e}", dir.display()))?;
    let stop = crate::os::signals::StopFlag::new();
    stop.install().context("cannot install signal handlers")?;
    if let Err(e) = dataset::generate(&plan, dir, s.seed, &stop, &mut |_| {}) {
        // Leave nothing half-made behind.
        let _ = std::fs::remove_dir_all(dir);
        return Err(e);
    }
    if args.out.json {
        // Paths as text (`os::text::os_text`): `json!` takes strings.
        let made = serde_json::json!({
            "dataset": plan.name,
            "path": crate::os::text::os_text(dir.as_os_str()),
            "seed": s.seed,
            "scale": s.scale,
            "files": plan.files.len(),
            "dirs": plan.dirs.len(),
            "bytes": plan.data_bytes(),
        });
        crate::outln!("{}", serde_json::to_string_pretty(&made)?);
        return Ok(0);
    }
    crate::outln!(
        "{}: {}, {}, {} ({} bytes) in {}",
        plan.name,
        crate::units::count(plan.files.len() as u64, "file", "files"),
        crate::units::count(plan.dirs.len() as u64, "directory", "directories"),
        fmt_size_iec(plan.data_bytes()),
        plan.data_bytes(),
        dir.display()
    );
    Ok(0)
}

//! `iolab age`: check the target and the profile (dedicated file system, fit) before anything
//! is created, age it (`runner::age`), record the layout before and after, print the way.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::family::{Family, Output, execute as execute_family};
use crate::cli::age::AgeArgs;
use crate::model::{ResultDoc, ResultSink, TestResult};
use crate::runner::RunContext;
use crate::workload::age::AgeConfig;

impl crate::cli::Execute for AgeArgs {
    fn execute(&self, argv: Vec<String>) -> anyhow::Result<i32> {
        let args = self;
        if args.list_profiles {
            // --json as `iolab copy --dataset list --json` takes it (it printed the table).
            match args.out.json {
                true => crate::outln!(
                    "{}",
                    serde_json::to_string_pretty(&crate::workload::age::builtins_json())?
                ),
                false => crate::out!("{}", crate::workload::age::list_builtins()),
            }
            return Ok(0);
        }
        execute_family(AgeFamily::from_args(args)?, argv)
    }
}

/// `iolab age` as a family.
pub struct AgeFamily {
    cfg: AgeConfig,
    kept: Option<PathBuf>,
}

impl AgeFamily {
    pub fn from_args(args: &AgeArgs) -> Result<AgeFamily> {
        Ok(AgeFamily {
            cfg: AgeConfig::from_args(args)?,
            kept: None,
        })
    }
}

impl Family for AgeFamily {
    const NAME: &'static str = "age";

    fn output(&self) -> Output<'_> {
        Output::on(&self.cfg.target, &self.cfg.out)
    }

    fn measure(&mut self, ctx: &RunContext, doc: &mut ResultDoc, sink: &ResultSink) -> Result<()> {
        let (mut detail, dir) = crate::runner::age::age(&self.cfg, ctx)?;
        if let Some(dev) = crate::sysinfo::mounts::mount_of(&self.cfg.target) {
            let block = detail.layout_after.block_size_bytes;
            match crate::fs::layout::free_space(
                &dev.fs_type,
                Path::new(&dev.source),
                &dev.mount_point,
                block,
            ) {
                Ok(f) => detail.layout_after.free_space = Some(f),
                Err(why) => detail.layout_after.free_space_note = Some(why),
            }
        }
        if let Some(w) =
            crate::runner::age::fill_warning(&self.cfg.target, &detail, self.cfg.profile.largest())
        {
            doc.warn(w);
        }
        let mut t = TestResult {
            name: format!("age {}", self.cfg.profile.name),
            family: "age".into(),
            ..Default::default()
        };
        if let Some(w) = crate::runner::age::contention_warning(&detail, &t.name) {
            doc.warn(w);
        }
        t.params
            .insert("profile".into(), self.cfg.profile.name.clone());
        t.params.insert("seed".into(), self.cfg.seed.to_string());
        t.params.insert("fill".into(), format!("{}", self.cfg.fill));
        t.params
            .insert("churn".into(), format!("{}", self.cfg.churn));
        t.age = Some(detail);
        doc.tests.push(t);
        sink.save(doc)?;
        self.kept = Some(dir);
        Ok(())
    }

    fn render(&self, doc: &ResultDoc) -> String {
        crate::report::age::render_age(doc)
    }

    fn afterword(&self, _doc: &ResultDoc) -> Vec<String> {
        self.kept
            .iter()
            .map(|k| {
                format!(
                    "the aged tree stays in {} (remove it with: rm -rf {})",
                    k.display(),
                    k.display()
                )
            })
            .collect()
    }
}

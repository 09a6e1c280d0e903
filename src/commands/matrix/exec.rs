//! Running the configurations: for every run a fresh file system (mkfs again), the unit read
//! back and checked, `df` around every workload, teardown timed; a failure stays in its row
//! and the matrix goes on; only a stop signal ends it. The result file is rewritten after
//! every run.

use std::panic::AssertUnwindSafe;
use std::path::Path;

use anyhow::Result;

use super::plan::{ConfigPlan, Plan, warning_test};
use crate::analysis::matrix::{Gathered, WORKLOAD_PARAM};
use crate::fs::instance::{FsInstance, Place, SetupError, Spec};
use crate::fs::registry::StateFile;
use crate::model::matrix::{
    ConfigRun, ConfigurationResult, DfSample, SpaceRecord, WorkloadOutcome,
};
use crate::model::{ResultDoc, ResultSink, Warning, WarningCode};
use crate::runner::RunContext;
use crate::runner::progress::Progress;
use crate::units::fmt_size_iec;

/// Space a workload may leave behind before it is reported (metadata, journals, logs).
const SPACE_SLACK: u64 = 4 << 20;

pub struct Exec<'a> {
    pub plan: &'a Plan,
    pub place: Place,
    pub state: &'a StateFile,
    pub ctx: &'a RunContext,
    pub keep_image: bool,
}

/// `df` of a mounted file system, after syncing it so freed space is counted.
pub fn df(dir: &Path) -> DfSample {
    if let Ok(f) = std::fs::File::open(dir) {
        let _ = nix::unistd::syncfs(&f);
    }
    match nix::sys::statvfs::statvfs(dir) {
        Ok(s) => {
            let fr = s.fragment_size();
            DfSample {
                total_bytes: s.blocks() * fr,
                used_bytes: s.blocks().saturating_sub(s.blocks_free()) * fr,
                free_bytes: s.blocks_available() * fr,
            }
        }
        Err(_) => DfSample::default(),
    }
}

/// `df` after a workload: file systems free deleted space in the background (xfs inode
/// inactivation, the btrfs cleaner), so wait up to 3 s for it to come back.
fn settled_df(dir: &Path, before: &DfSample) -> DfSample {
    let mut after = df(dir);
    for _ in 0..30 {
        if after.used_bytes <= before.used_bytes + SPACE_SLACK {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        after = df(dir);
    }
    after
}

/// Warnings about the spread of one workload's own runs: the matrix judges the spread over
/// all fresh file systems of a configuration instead.
const SPREAD_CODES: &[WarningCode] = &[
    WarningCode::NoSpread,
    WarningCode::Noisy,
    WarningCode::OutlierRun,
    WarningCode::SlowFirstRun,
    // Per run of a files workload; given once per test over its runs (`spread_warnings`).
    WarningCode::PortionSpread,
];

fn is_interrupt(e: &anyhow::Error) -> bool {
    crate::error::interrupted(e).is_some()
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// The row of a configuration before it runs.
pub fn initial_row(cp: &ConfigPlan, place: &Place) -> ConfigurationResult {
    let mkfs = crate::fs::mkfs::mkfs_command(
        cp.fs,
        cp.unit,
        &cp.mkfs_opts,
        place.size(),
        Path::new("DEVICE"),
    )
    .ok()
    .filter(|v| !v.is_empty())
    .map(|v| v.join(" "));
    ConfigurationResult {
        label: cp.label.clone(),
        fs_type: cp.fs.name.to_string(),
        cluster_bytes: cp.unit,
        mount_options: cp.mount_opts.clone(),
        status: match &cp.method {
            Ok(_) => "ok".into(),
            Err(_) => "skipped".into(),
        },
        reason: cp.method.as_ref().err().cloned(),
        mount_method: cp.method.as_ref().ok().map(|m| m.describe()),
        mkfs_command: mkfs,
        journaling: cp.fs.journaling(),
        design: cp.fs.design.to_string(),
        size_bytes: place.size(),
        ..Default::default()
    }
}

impl Exec<'_> {
    /// Run configuration `idx` into `doc.configurations[idx]`. Err only when stopped.
    pub fn run_config(&self, idx: usize, doc: &mut ResultDoc, sink: &ResultSink) -> Result<()> {
        let cp = &self.plan.configs[idx];
        let Ok(method) = &cp.method else {
            return Ok(());
        };
        let mut gathered = Gathered::default();
        let mut values: Vec<f64> = Vec::new();
        let mut run = 0u32;
        while self.plan.repeat.wants_more(&values) {
            self.ctx.stop.check()?;
            run += 1;
            let p = Progress::start(
                self.ctx.progress,
                &format!("{} [{run}/{}]", cp.label, self.plan.repeat.max_runs()),
            );
            let spec = Spec {
                fs: cp.fs,
                method,
                unit: cp.unit,
                mkfs_opts: &cp.mkfs_opts,
                mount_opts: &cp.mount_opts,
                place: &self.place,
                tag: &format!("c{}-r{run}", idx + 1),
                keep_image: self.keep_image,
            };
            let outcome = self.one_run(
                &spec,
                run,
                cp,
                &mut doc.configurations[idx],
                &mut gathered,
                doc_warnings(&mut doc.warnings),
            );
            let cfg = &mut doc.configurations[idx];
            if let RunEnd::Interrupted(e) = &outcome {
                // Before the progress line, which otherwise said "ok" for a stopped run. Not
                // "failed": nothing went wrong on this file system, the run was stopped.
                cfg.status = "interrupted".into();
                cfg.reason = Some(format!("{e:#}"));
            }
            gathered.finish(cfg);
            p.finish(&cfg.status);
            // The run just made counts: judged before it, the last run always wanted one
            // more, and the spread warnings (noisy, outliers) were never given.
            if let RunEnd::Next(v) = &outcome {
                values.push(*v);
            }
            if !matches!(outcome, RunEnd::Next(_)) || !self.plan.repeat.wants_more(&values) {
                self.spread_warnings(idx, doc);
            }
            sink.save(doc)?;
            match outcome {
                RunEnd::Next(_) => {}
                RunEnd::Stop => break,
                RunEnd::Interrupted(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Spread over the runs of a configuration (one warning per noisy test, not per run).
    fn spread_warnings(&self, idx: usize, doc: &mut ResultDoc) {
        let cfg = &doc.configurations[idx];
        let mut ws = Vec::new();
        for t in &cfg.tests {
            let portions = crate::workload::files::run::portion_spread_warning(t);
            let spread = crate::stats::repeat::spread_warnings(t, &self.plan.repeat);
            for mut w in portions.into_iter().chain(spread) {
                if w.code == WarningCode::NoSpread {
                    continue;
                }
                let workload = t.params.get(WORKLOAD_PARAM).map_or("", String::as_str);
                w.test = Some(warning_test(
                    &self.plan.workloads,
                    &cfg.label,
                    workload,
                    Some(&t.name),
                ));
                w.message = in_workload_keys(&w.message);
                ws.push(w);
            }
        }
        for w in ws {
            doc.warn(w);
        }
    }

    /// One fresh file system: set up, check the unit, run every workload, tear down.
    fn one_run(
        &self,
        spec: &Spec<'_>,
        run: u32,
        cp: &ConfigPlan,
        cfg: &mut ConfigurationResult,
        gathered: &mut Gathered,
        warnings: WarningSink<'_>,
    ) -> RunEnd {
        let fail = |cfg: &mut ConfigurationResult, why: String| {
            cfg.status = "failed".into();
            cfg.reason = Some(why);
        };
        let mut rec = ConfigRun {
            run,
            ..Default::default()
        };
        let inst = match FsInstance::create(spec, self.state) {
            Ok(i) => i,
            Err(SetupError { step, error }) => {
                let why = format!("{step} failed: {error:#}");
                rec.error = Some(why.clone());
                cfg.runs.push(rec);
                fail(cfg, why);
                return RunEnd::Stop;
            }
        };
        let mounted = crate::fs::mount::mount_at(&inst.mount_point);
        if run == 1 {
            cfg.mount_options_shown = mounted.as_ref().map(|m| m.options.clone());
        }
        if run == 1
            && let crate::fs::detect::MountMethod::Fuse(helper) = spec.method
            && let Some(m) = mounted
        {
            let unshown = crate::fs::mount::unchecked_options(helper, spec.mount_opts, &m.options);
            if !unshown.is_empty() {
                warnings.push(Warning {
                    code: WarningCode::MountOptionsUnchecked,
                    message: format!(
                        "{helper} mounted with --mount-opts '{}' without an error, but the \
                         mount's options ({}) do not show {}: a FUSE helper drops options it \
                         does not know or does not pass on without a word, so this row may \
                         have been measured without them",
                        spec.mount_opts,
                        m.options,
                        unshown.join(", ")
                    ),
                    test: Some(cp.label.clone()),
                });
            }
        }
        // The journal as made, not as the type's table says (`--mkfs-opts '-O ^has_journal'`).
        if let Some(j) = crate::fs::mkfs::read_journal(cp.fs, inst.device.as_deref()) {
            cfg.journaling = j;
            if !j && cfg.design == "journal" {
                cfg.design = "none".into();
            }
        }
        match inst.read_unit() {
            Ok(u) => {
                rec.cluster_bytes_actual = Some(u);
                cfg.cluster_bytes_actual = Some(u);
                // The trap Belov fell into: never report a unit that was not made.
                if let Err(why) = crate::fs::mkfs::check_unit(cp.unit, u) {
                    return self.close(inst, rec, cfg, Some(why));
                }
            }
            Err(e) if cp.unit.is_some() => {
                let why = format!("cannot read the allocation unit back: {e}");
                return self.close(inst, rec, cfg, Some(why));
            }
            Err(e) => warnings.push(Warning {
                code: WarningCode::UnitUnknown,
                message: format!("the allocation unit could not be read back: {e}"),
                test: Some(cp.label.clone()),
            }),
        }
        let mut first: Option<f64> = None;
        let mut errors: Vec<String> = Vec::new();
        let mut pass = Pass {
            cp,
            cfg,
            gathered,
            warnings: &warnings,
            rec: &mut rec,
            first: &mut first,
            errors: &mut errors,
        };
        if let Err(e) = self.workloads(&inst.mount_point, &mut pass, false) {
            let _ = self.close(inst, rec, cfg, None);
            return RunEnd::Interrupted(e);
        }
        if let Some(age) = &self.plan.age {
            match self.age(&inst.mount_point, age) {
                Ok(d) => {
                    for w in aging_warnings(&cp.label, &inst.mount_point, &d, age) {
                        warnings.push(w);
                    }
                    pass.rec.age = Some(d);
                    if let Err(e) = self.workloads(&inst.mount_point, &mut pass, true) {
                        let _ = self.close(inst, rec, cfg, None);
                        return RunEnd::Interrupted(e);
                    }
                }
                Err(e) if is_interrupt(&e) || self.ctx.stop.is_set() => {
                    let _ = self.close(inst, rec, cfg, None);
                    return RunEnd::Interrupted(e);
                }
                Err(e) => errors.push(format!("aging: {e:#}")),
            }
        }
        let why = (!errors.is_empty()).then(|| errors.join("; "));
        let failed = why.is_some();
        match self.close(inst, rec, cfg, why) {
            RunEnd::Next(_) if !failed => RunEnd::Next(first.unwrap_or(0.0)),
            _ => RunEnd::Stop,
        }
    }

    /// Every workload once on the mounted file system (`aged`: after aging, under the
    /// workloads' aged labels). Err only when stopped.
    fn workloads(&self, mount: &Path, p: &mut Pass<'_, '_>, aged: bool) -> Result<()> {
        let cp = p.cp;
        for w in &self.plan.workloads {
            self.ctx.stop.check()?;
            let label = if aged {
                super::plan::aged_label(&w.label)
            } else {
                w.label.clone()
            };
            let before = df(mount);
            // The unit read back after mkfs, not statvfs's block size (fusefat says 1 KiB).
            let unit = p.rec.cluster_bytes_actual;
            let out = std::panic::catch_unwind(AssertUnwindSafe(|| {
                w.workload.run_on_unit(mount, unit, self.ctx)
            }))
            .unwrap_or_else(|p| {
                Err(anyhow::anyhow!(
                    "the workload panicked: {}",
                    panic_text(&*p)
                ))
            });
            let after = settled_df(mount, &before);
            self.space_check(cp, &label, &before, &after, p.warnings);
            p.rec.space.push(SpaceRecord {
                workload: label.clone(),
                before,
                after,
            });
            match out {
                Ok(o) => {
                    let mut absorbed: Vec<String> = Vec::new();
                    for mut wn in o.warnings {
                        if SPREAD_CODES.contains(&wn.code) {
                            continue;
                        }
                        if wn.code == WarningCode::CacheAbsorbed {
                            absorbed.push(wn.test.clone().unwrap_or_else(|| label.clone()));
                        }
                        wn.test = Some(warning_test(
                            &self.plan.workloads,
                            &cp.label,
                            &label,
                            wn.test.as_deref(),
                        ));
                        // Its advice in the matrix's terms, as the spread warnings give it
                        // (`few-ios` said "use a longer --duration", `page-cache` "use
                        // --direct true": flags the matrix lacks).
                        let family = label.split(':').next().unwrap_or(&label);
                        wn.message = warning_as_keys(&wn.message, family);
                        p.warnings.push(wn);
                    }
                    let names = p.gathered.add(p.cfg, &label, o.tests);
                    if p.first.is_none() && !aged {
                        *p.first = names
                            .first()
                            .and_then(|n| p.cfg.tests.iter().find(|t| &t.name == n))
                            .and_then(|t| t.runs.last())
                            .and_then(|r| r.iops.or(r.files_per_s).or(r.bw_bytes_per_s));
                    }
                    let outcome = outcome_of(p.cfg, &label);
                    outcome.tests = names;
                    for t in absorbed {
                        if !outcome.cache_absorbed.contains(&t) {
                            outcome.cache_absorbed.push(t);
                        }
                    }
                    // Stopped after these tests: they are kept, the workload is not ranked
                    // (its other tests are missing), and the matrix stops.
                    if let Some(e) = o.stopped {
                        outcome.status = "interrupted".into();
                        outcome.error = Some(format!("{e:#}"));
                        return Err(e);
                    }
                }
                Err(e) if is_interrupt(&e) || self.ctx.stop.is_set() => {
                    let o = outcome_of(p.cfg, &label);
                    o.status = "interrupted".into();
                    o.error = Some(format!("{e:#}"));
                    return Err(e);
                }
                Err(e) => {
                    let family = label.split(':').next().unwrap_or(&label);
                    let text = flags_as_keys(&format!("{e:#}"), family);
                    let o = outcome_of(p.cfg, &label);
                    o.status = "failed".into();
                    o.error = Some(text.clone());
                    p.errors.push(format!("{label}: {text}"));
                }
            }
        }
        Ok(())
    }

    /// Age the mounted file system as `iolab age` does (`--age`); refused on one that
    /// reports no size ([`super::plan::no_size_to_age`]).
    fn age(
        &self,
        mount: &Path,
        age: &super::plan::AgePlan,
    ) -> Result<crate::model::age::AgeTestDetail> {
        let (total, _) = crate::workload::age::fs_usage(mount)?;
        // fusefat's statvfs gives 0 blocks: aging, which counts the fullness against the
        // size, wrote one file of 9 bytes there and the runs after it were called aged.
        if total == 0 {
            anyhow::bail!(super::plan::no_size_to_age());
        }
        let cfg = crate::workload::age::AgeConfig {
            target: mount.to_path_buf(),
            dir: mount.join(format!("iolab-aged-{}", age.seed)),
            profile: age.profile.clone(),
            fill: age.fill,
            churn: age.churn,
            seed: age.seed,
            jobs: crate::workload::age::default_jobs(),
            fs_size: total,
            out: crate::model::Delivery {
                quiet: true,
                ..Default::default()
            },
        };
        Ok(crate::runner::age::age(&cfg, self.ctx)?.0)
    }

    fn space_check(
        &self,
        cp: &ConfigPlan,
        label: &str,
        before: &DfSample,
        after: &DfSample,
        warnings: &WarningSink<'_>,
    ) {
        let kept = after.used_bytes.saturating_sub(before.used_bytes);
        if kept > SPACE_SLACK.max(before.total_bytes / 100) {
            warnings.push(Warning {
                code: WarningCode::SpaceNotReturned,
                message: space_not_returned(cp.fs.name, kept, label),
                test: Some(cp.label.clone()),
            });
        }
    }

    /// Tear down and record the run; `why` marks the configuration failed.
    fn close(
        &self,
        mut inst: FsInstance<'_>,
        mut rec: ConfigRun,
        cfg: &mut ConfigurationResult,
        why: Option<String>,
    ) -> RunEnd {
        let td = inst.teardown();
        let t = inst.timings;
        drop(inst);
        rec.image_ns = t.image_ns;
        rec.mkfs_ns = t.mkfs_ns;
        rec.mount_ns = t.mount_ns;
        rec.umount_ns = t.umount_ns;
        rec.detach_ns = t.detach_ns;
        let why = match (why, td) {
            (w, Ok(())) => w,
            (None, Err(e)) => Some(format!("teardown failed: {e}")),
            (Some(w), Err(e)) => Some(format!("{w}; teardown failed: {e}")),
        };
        rec.error = why.clone();
        cfg.runs.push(rec);
        match why {
            Some(w) => {
                cfg.status = "failed".into();
                cfg.reason = Some(w);
                RunEnd::Stop
            }
            None => RunEnd::Next(0.0),
        }
    }
}

/// The warnings of configuration `label`'s aging `d` on `mount`, as `iolab age` gives them:
/// the churn or the inodes ran out before the fullness (about the configuration: its aged
/// rows would otherwise pass for an aged file system), and `cpu-contention` when a writer
/// waited for a CPU (about its aging, `LABEL: age PROFILE`; the matrix said nothing of it).
fn aging_warnings(
    label: &str,
    mount: &Path,
    d: &crate::model::age::AgeTestDetail,
    age: &super::plan::AgePlan,
) -> Vec<Warning> {
    let fill = crate::runner::age::fill_warning(mount, d, age.profile.largest()).map(|w| Warning {
        test: Some(label.to_string()),
        ..w
    });
    let test = format!("{label}: age {}", age.profile.name);
    let waited = crate::runner::age::contention_warning(d, &test);
    fill.into_iter().chain(waited).collect()
}

/// The `space-not-returned` sentence: `kept` bytes more used after workload `label` on a
/// file system of type `fs`. On NTFS that is the MFT, which is expected to keep it.
fn space_not_returned(fs: &str, kept: u64, label: &str) -> String {
    let why = if fs == "ntfs" {
        "on NTFS this is expected: the MFT grows by one record (1 KiB) per file that exists at \
         once and never shrinks; later files reuse its free records, so the space is kept, \
         not lost (a later run on this file system would start with the larger MFT)"
    } else {
        "the file system did not give the space back (later runs on it would differ)"
    };
    format!(
        "{} more used after {label} than before it, although the workload removed its files: {why}",
        fmt_size_iec(kept)
    )
}

/// What one pass of the workloads over a mounted file system writes into.
struct Pass<'p, 'w> {
    cp: &'p ConfigPlan,
    cfg: &'p mut ConfigurationResult,
    gathered: &'p mut Gathered,
    warnings: &'p WarningSink<'w>,
    rec: &'p mut ConfigRun,
    first: &'p mut Option<f64>,
    errors: &'p mut Vec<String>,
}

enum RunEnd {
    /// Go on (the run's headline value, for `--repeat auto`).
    Next(f64),
    /// This configuration is done (failed).
    Stop,
    Interrupted(anyhow::Error),
}

/// Warnings collected during a run (the doc is borrowed elsewhere meanwhile).
pub struct WarningSink<'w> {
    inner: std::cell::RefCell<&'w mut Vec<Warning>>,
}

impl WarningSink<'_> {
    fn push(&self, w: Warning) {
        let mut v = self.inner.borrow_mut();
        if !v.contains(&w) {
            v.push(w);
        }
    }
}

/// A spread warning's advice in the matrix's terms: a workload's settings are keys of its
/// reference (`run:duration=10s`), not the command's flags.
fn in_workload_keys(message: &str) -> String {
    message
        .replace("a longer --duration", "a longer duration (run:duration=…)")
        .replace(
            "a larger --scale",
            "a larger scale (copy:scale=… or trace:scale=…)",
        )
        .replace(
            "more files per portion",
            "more files per portion (files:files-per-portion=…)",
        )
        .replace("pin with --cpu", "pin with files:cpu=…")
}

/// A workload's error in the matrix's terms: the family's flags are keys of the reference
/// the user typed (`--size 200.0 MiB` is `run:size=200.0 MiB`: a number after a flag is its
/// value; a word may be prose, `--engine sync` is `run:engine sync`); `--help` stays.
fn flags_as_keys(text: &str, family: &str) -> String {
    flags_as_keys_but(text, family, &["help"])
}

/// A workload's warning in the matrix's terms: its advice's phrases (`in_workload_keys`),
/// then the family's flags as keys of its reference (`add a warm-up (--ramp)` is
/// `(run:ramp)`, `--direct true` is `run:direct=true`). `--repeat` stays: the matrix has it.
fn warning_as_keys(message: &str, family: &str) -> String {
    flags_as_keys_but(&in_workload_keys(message), family, &["help", "repeat"])
}

/// `flags_as_keys`, leaving the flags `keep` (and fio's, named as fio's) as they are.
fn flags_as_keys_but(text: &str, family: &str, keep: &[&str]) -> String {
    static FLAG: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(^|[\s(`'])--([a-z][a-z0-9-]*)( ([0-9][^\s,;)]*|true|false))?").unwrap()
    });
    FLAG.replace_all(text, |c: &regex::Captures| {
        let name = &c[2];
        let before = &text[..c.get(0).map_or(0, |m| m.start())];
        if keep.contains(&name) || before.trim_end().ends_with("fio") {
            return c[0].to_string();
        }
        match c.get(4) {
            Some(v) => format!("{}{family}:{name}={}", &c[1], v.as_str()),
            None => format!("{}{family}:{name}", &c[1]),
        }
    })
    .into_owned()
}

fn doc_warnings(v: &mut Vec<Warning>) -> WarningSink<'_> {
    WarningSink {
        inner: std::cell::RefCell::new(v),
    }
}

fn outcome_of<'c>(cfg: &'c mut ConfigurationResult, label: &str) -> &'c mut WorkloadOutcome {
    let pos = match cfg.workloads.iter().position(|o| o.workload == label) {
        Some(p) => p,
        None => {
            cfg.workloads.push(WorkloadOutcome {
                workload: label.to_string(),
                status: "ok".into(),
                ..Default::default()
            });
            cfg.workloads.len() - 1
        }
    };
    &mut cfg.workloads[pos]
}

#[cfg(test)]
mod advice_tests {
    /// `--workload run:size=200M` on a 128 MiB image failed with "--size 200.0 MiB: only
    /// 105.5 MiB free ... (--size 107999K at most)": flags the matrix does not have.
    #[test]
    fn a_workloads_error_names_its_reference_keys() {
        let e = "--size 200.0 MiB: only 105.5 MiB free on /mnt/x for the test file (--size 107999K at most); see 'iolab run --help'";
        assert_eq!(
            super::flags_as_keys(e, "run"),
            "run:size=200.0 MiB: only 105.5 MiB free on /mnt/x for the test file (run:size=107999K at most); see 'iolab run --help'"
        );
        assert_eq!(
            super::flags_as_keys("--iodepth above 1 with --engine sync", "run"),
            "run:iodepth above 1 with run:engine sync"
        );
        assert_eq!(
            super::flags_as_keys("no flag here", "files"),
            "no flag here"
        );
    }

    /// A `run:` workload's `page-cache` warning in the matrix advised "use --direct true or
    /// --size above 48.0 GiB", flags the matrix does not have; `--repeat` is the matrix's own,
    /// and fio's flags are fio's.
    #[test]
    fn a_workloads_warning_names_its_reference_keys() {
        assert_eq!(
            super::warning_as_keys(
                "buffered I/O on ext4 with a test size under 2x RAM (1.0 GiB): the page cache, not the device, may decide the result; use --direct true or --size above 48.0 GiB",
                "run"
            ),
            "buffered I/O on ext4 with a test size under 2x RAM (1.0 GiB): the page cache, not the device, may decide the result; use run:direct=true or run:size above 48.0 GiB"
        );
        assert_eq!(
            super::warning_as_keys(
                "the first run was 36 % slower than the others: a cold cache or device warm-up; add a warm-up (--ramp) or more repeats (--repeat auto)",
                "run"
            ),
            "the first run was 36 % slower than the others: a cold cache or device warm-up; add a warm-up (run:ramp) or more repeats (--repeat auto)"
        );
        assert_eq!(
            super::warning_as_keys("as a fio `--steadystate` rule would", "run"),
            "as a fio `--steadystate` rule would"
        );
    }

    /// NTFS kept 11.8 MiB after every files workload (its MFT): true, and expected there,
    /// which the warning now says; other file systems keep the plain sentence.
    #[test]
    fn ntfs_keeping_its_mft_is_said_to_be_expected() {
        let m = super::space_not_returned("ntfs", 12_373_196, "files:sizes=1");
        assert!(
            m.starts_with("11.8 MiB more used after files:sizes=1 than before it"),
            "{m}"
        );
        assert!(m.contains("on NTFS this is expected: the MFT"), "{m}");
        let m = super::space_not_returned("nilfs2", 12_373_196, "copy:dataset=cd-iso");
        assert!(m.ends_with("did not give the space back (later runs on it would differ)"));
        assert!(!m.contains("MFT"), "{m}");
    }

    #[test]
    fn spread_advice_names_workload_keys() {
        let m = super::in_workload_keys(
            "runs differ by 9.0 % (…); use more repeats (--repeat auto) or a longer --duration",
        );
        assert!(
            m.ends_with("use more repeats (--repeat auto) or a longer duration (run:duration=…)"),
            "{m}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `iolab matrix --age` said nothing of aging writers that waited for a CPU, which
    /// `iolab age` warns of (`cpu-contention`): each configuration's aging does now.
    #[test]
    fn an_aging_that_waited_for_a_cpu_is_warned_of() {
        let age = super::super::plan::AgePlan {
            profile: crate::workload::age::Profile::load("desktop").unwrap(),
            fill: 0.5,
            churn: 1.0,
            seed: 1,
        };
        let mut d = crate::model::age::AgeTestDetail {
            jobs: 2,
            cpu_wait_pct: Some(40.0),
            ..Default::default()
        };
        let dir = std::env::temp_dir();
        let ws = aging_warnings("ext4 4KiB", &dir, &d, &age);
        let w = ws
            .iter()
            .find(|w| w.code == WarningCode::CpuContention)
            .expect("cpu-contention");
        assert_eq!(w.test.as_deref(), Some("ext4 4KiB: age desktop"));
        assert!(w.message.contains("waited 40 %"), "{}", w.message);
        d.cpu_wait_pct = Some(2.0);
        let ws = aging_warnings("ext4 4KiB", &dir, &d, &age);
        assert!(ws.iter().all(|w| w.code != WarningCode::CpuContention));
    }
}

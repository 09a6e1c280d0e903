//! `iolab compare`: match the tests of several result files by (configuration, name), and
//! for each metric give the change with its uncertainty, a verdict at 95 % and the relative
//! speed. The first file is the baseline; every other file is compared with it. A matched
//! test recorded with different settings, and the same result given twice, are warned
//! about.

use comfy_table::ContentArrangement;
use serde::Serialize;

use crate::error::UsageError;
use crate::model::{Summary, Warning, WarningCode};
use crate::os::text::terminal;
use crate::report::load::Loaded;
use crate::report::metrics::{
    Better, CI_TOO_WIDE, all_tests, config_of, direction, display_name, fmt_change_pct,
    fmt_mean_ci, label_for, metrics_of, primary_metric, test_name,
};
use crate::report::settings::{self, SettingDiff};
use crate::report::table::{align_right, new_table, render_warning_list};
use crate::stats::compare::{Method, Ratio, half_width, invert, relative, significant};

/// The summary of one side, as compared.
#[derive(Debug, Clone, Serialize)]
pub struct Side {
    pub n: u32,
    pub mean: f64,
    pub stddev: f64,
    pub ci95_low: f64,
    pub ci95_high: f64,
}

impl From<&Summary> for Side {
    fn from(s: &Summary) -> Self {
        Side {
            n: s.n,
            mean: s.mean,
            stddev: s.stddev,
            ci95_low: s.ci95_low,
            ci95_high: s.ci95_high,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Faster,
    Slower,
    NoSignificantDifference,
    /// One run on each side: the direction is shown, its significance is unknown.
    Untested,
}

/// One metric of one test, baseline against another file.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub config: Option<String>,
    pub test: String,
    pub family: String,
    pub metric: String,
    pub higher_is_better: bool,
    /// The test's headline metric (the one the sentence is about).
    pub primary: bool,
    pub baseline: Side,
    pub other: Side,
    /// (other / baseline - 1) in percent, and its 95 % half-width.
    pub change_pct: f64,
    pub change_pct_pm: f64,
    /// The Change column as the table and the console show it (`+37.0 % ± 2.3 %`, or
    /// `-97.5 % ± too wide`).
    pub change: String,
    /// How many times faster the other file is (below 1: slower), with its 95 % half-width.
    pub speedup: Ratio,
    pub verdict: Verdict,
    pub method: Method,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p_value: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub df: Option<f64>,
    /// The test was recorded with different settings in the two files (the pairing's
    /// `settings_differ` says which).
    pub settings_differ: bool,
}

/// One input file.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize)]
pub struct FileInfo {
    pub label: String,
    pub path: String,
    pub command: String,
    pub hostname: String,
    pub fs_type: String,
    pub started_at: String,
    /// The target's file system when the run started (`80.1 % full, aged (iolab-aged-3)`):
    /// a fresh and an aged run read as alike file systems.
    pub fs_state: Option<String>,
}

impl FileInfo {
    /// `(run on vm, ext4, 2026-11-26T06:08:33.353Z)`: what, where and when, as the
    /// terminal's legend and the report's comparison give it.
    pub fn describe(&self) -> String {
        let or_unknown = |s: &str| {
            if s.is_empty() {
                "?".to_string()
            } else {
                s.to_string()
            }
        };
        let state = self
            .fs_state
            .as_ref()
            .map(|s| format!(", {s}"))
            .unwrap_or_default();
        format!(
            "({} on {}, {}{state}, {})",
            self.command,
            or_unknown(&self.hostname),
            or_unknown(&self.fs_type),
            self.started_at
        )
    }
}

/// A matched test whose recorded settings differ between the two files.
#[derive(Debug, Clone, Serialize)]
pub struct SettingsDiffer {
    pub config: Option<String>,
    pub test: String,
    pub settings: Vec<SettingDiff>,
}

/// The baseline against one other file.
#[derive(Debug, Clone, Serialize)]
pub struct Pairing {
    pub baseline: String,
    pub other: String,
    pub rows: Vec<Row>,
    pub only_in_baseline: Vec<String>,
    pub only_in_other: Vec<String>,
    /// Matched tests measured with different settings, each with the settings that differ.
    pub settings_differ: Vec<SettingsDiffer>,
    /// One `settings-differ` warning per such test (`test` = its name as shown).
    pub warnings: Vec<Warning>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub files: Vec<FileInfo>,
    pub pairings: Vec<Pairing>,
    /// About the inputs themselves: `same-result` when two of them are one result.
    pub warnings: Vec<Warning>,
}

/// `A`, `B`, ..., `Z`, `F27`, ...
fn letter(i: usize) -> String {
    if i < 26 {
        ((b'A' + i as u8) as char).to_string()
    } else {
        format!("F{}", i + 1)
    }
}

type Keyed<'a> = Vec<((String, String), &'a crate::model::TestResult)>;

fn keyed(l: &Loaded) -> Keyed<'_> {
    all_tests(&l.doc)
        .into_iter()
        .map(|t| {
            (
                (
                    config_of(&l.doc, t).unwrap_or_default(),
                    test_name(&l.doc, t),
                ),
                t,
            )
        })
        .collect()
}

/// Compare every file with the first; a file with no test in common is an error that says
/// what each file has.
pub fn compare(inputs: &[Loaded], all_metrics: bool) -> Result<Comparison, UsageError> {
    let c = compare_lenient(inputs, all_metrics);
    if let Some((i, p)) = c
        .pairings
        .iter()
        .enumerate()
        .find(|(_, p)| p.rows.is_empty())
    {
        let (a, b) = (&c.files[0].path, &c.files[i + 1].path);
        // An analysis, not a measurement: two of them said "no test measured in both (a test
        // stopped or failed before its first run ...)", as if they had failed.
        for (path, l) in [(a, &inputs[0]), (b, &inputs[i + 1])] {
            if let Some(what) = without_figures(&l.doc) {
                return Err(UsageError(format!(
                    "{path}: {what} has no measured figures to compare (`iolab report` shows it); compare takes results of run, saturate, sustain, files, copy, trace and matrix"
                )));
            }
        }
        // A test on both sides, but without figures on one. With none else in common this
        // read "A has: no tests; B has: no tests" (two results interrupted before their
        // first run); with others apart, the shared test was left out of both lists ("h-1
        // has: RND4K Q1T1 read, SEQ1M Q1T1 write, ..." without its SEQ1M Q1T1 read).
        let names = |l: &Loaded| -> Vec<(String, String)> {
            keyed(l).into_iter().map(|(k, _)| k).collect()
        };
        let theirs = names(&inputs[i + 1]);
        if names(&inputs[0]).iter().any(|k| theirs.contains(k)) {
            // The same tests on both sides, but without figures on one.
            let runs = |l: &Loaded| {
                let v: Vec<String> = keyed(l)
                    .iter()
                    .map(|((config, name), t)| {
                        let config = (!config.is_empty()).then_some(config.as_str());
                        format!("{} ({})", display_name(config, name), figures_of(t))
                    })
                    .collect();
                list_or_none(&v)
            };
            return Err(UsageError(format!(
                "{a} and {b} have no test measured in both (a test stopped or failed before its first run, or a saturate sweep before its answer, has no figures); {a} has: {}; {b} has: {}",
                runs(&inputs[0]),
                runs(&inputs[i + 1]),
            )));
        }
        return Err(UsageError(format!(
            "{a} and {b} have no test in common (tests are matched by configuration and name); {a} has: {}; {b} has: {}",
            list_or_none(&p.only_in_baseline),
            list_or_none(&p.only_in_other),
        )));
    }
    Ok(c)
}

/// What a test has to compare, for the error that finds none in common: its runs, or for a
/// saturate sweep (whose figures are its answer, not runs) the answer or the depths it
/// measured without reaching one. A finished sweep was listed as "randread (0 runs)".
fn figures_of(t: &crate::model::TestResult) -> String {
    match (&t.curve, &t.answer) {
        (Some(c), Some(_)) => format!(
            "an answer from {}",
            crate::units::count(c.len() as u64, "depth", "depths")
        ),
        (Some(c), None) => format!(
            "no answer, {} measured",
            crate::units::count(c.len() as u64, "depth", "depths")
        ),
        _ => crate::units::count(t.runs.len() as u64, "run", "runs"),
    }
}

/// The inputs `compare` can compare, and the line saying which it left out: an `iolab slack`
/// or `age` result among them (the default `iolab-results/` keeps every command's results)
/// made `iolab compare DIR1 DIR2` fail outright. Left out only when two or more are left;
/// otherwise all are kept, and `compare` says why there is nothing to compare.
pub fn comparable(inputs: Vec<Loaded>) -> (Vec<Loaded>, Option<String>) {
    let kept = inputs
        .iter()
        .filter(|l| without_figures(&l.doc).is_none())
        .count();
    if kept == inputs.len() || kept < 2 {
        return (inputs, None);
    }
    let mut left_out = Vec::new();
    let inputs = inputs
        .into_iter()
        .filter(|l| match without_figures(&l.doc) {
            Some(what) => {
                left_out.push(format!("{}: {what}", l.path.display()));
                false
            }
            None => true,
        })
        .collect();
    let note = format!(
        "iolab: note: left out of the comparison, no measured figures to compare (`iolab report` shows them): {}",
        left_out.join("; ")
    );
    (inputs, Some(note))
}

/// A result that is an analysis rather than a measurement (`iolab slack`, `iolab age`):
/// what it is, or `None`.
fn without_figures(doc: &crate::model::ResultDoc) -> Option<&'static str> {
    if all_tests(doc).iter().any(|t| !t.runs.is_empty()) {
        return None;
    }
    if doc.slack.is_some() {
        Some("an `iolab slack` result (a cluster-slack analysis)")
    } else if !doc.tests.is_empty() && doc.tests.iter().all(|t| t.age.is_some()) {
        Some("an `iolab age` result (an aging run: its fullness and layout score)")
    } else {
        None
    }
}

/// The file system a file measured: its target's, or a matrix's configurations' (`ext4/xfs`).
/// A matrix's header said "ext4" of two matrices of xfs and btrfs: the file system holding
/// the images, which the environment records.
fn measured_fs(doc: &crate::model::ResultDoc) -> String {
    let mut kinds: Vec<&str> = Vec::new();
    for c in &doc.configurations {
        if !c.fs_type.is_empty() && !kinds.contains(&c.fs_type.as_str()) {
            kinds.push(&c.fs_type);
        }
    }
    if kinds.is_empty() {
        doc.environment.fs_label().to_string()
    } else {
        kinds.join("/")
    }
}

/// Compare every file with the first (a pairing may have no rows). `all_metrics` adds every
/// common metric; otherwise each test shows its headline metric and its latency (when it
/// has one).
pub fn compare_lenient(inputs: &[Loaded], all_metrics: bool) -> Comparison {
    let files = inputs
        .iter()
        .enumerate()
        .map(|(i, l)| FileInfo {
            label: letter(i),
            path: l.path.display().to_string(),
            command: l.doc.command.clone(),
            hostname: l.doc.environment.hostname.clone(),
            fs_type: measured_fs(&l.doc),
            started_at: l.doc.started_at.clone(),
            // A matrix's environment is the file system holding its images: not measured.
            fs_state: (l.doc.configurations.is_empty())
                .then(|| l.doc.environment.fs_state.as_ref().map(|s| s.describe()))
                .flatten(),
        })
        .collect::<Vec<_>>();
    let base = keyed(&inputs[0]);
    let mut pairings = Vec::new();
    for (i, other) in inputs.iter().enumerate().skip(1) {
        let theirs = keyed(other);
        let mut rows = Vec::new();
        let mut settings_differ = Vec::new();
        for (key, ta) in &base {
            let Some((_, tb)) = theirs.iter().find(|(k, _)| k == key) else {
                continue;
            };
            let differ = settings::differences(
                &settings::recorded(&inputs[0].doc, &key.0, ta),
                &settings::recorded(&other.doc, &key.0, tb),
            );
            let differs = !differ.is_empty();
            if differs {
                settings_differ.push(SettingsDiffer {
                    config: (!key.0.is_empty()).then(|| key.0.clone()),
                    test: key.1.clone(),
                    settings: differ,
                });
            }
            let primary = primary_metric(ta);
            let mb = metrics_of(tb);
            for (metric, sa) in metrics_of(ta) {
                let Some((_, sb)) = mb.iter().find(|(m, _)| *m == metric) else {
                    continue;
                };
                let is_primary = primary.as_deref() == Some(metric.as_str());
                let shown = all_metrics
                    || is_primary
                    || (ta.family == "block"
                        && matches!(
                            metric.as_str(),
                            // Mixed tests: each direction too (absent elsewhere).
                            "lat_mean_ns"
                                | "read_iops"
                                | "read_lat_mean_ns"
                                | "write_iops"
                                | "write_lat_mean_ns"
                        ))
                    || (metric == "seconds_per_portion" && ta.family == "files");
                if !shown {
                    continue;
                }
                let config = (!key.0.is_empty()).then(|| key.0.clone());
                rows.push(Row {
                    settings_differ: differs,
                    // The name the test is matched by (an aged run's is `NAME (aged)`).
                    test: key.1.clone(),
                    ..row(config, ta, &metric, &sa, sb, is_primary)
                });
            }
        }
        let name_of = |k: &(String, String)| display_name(Some(&k.0), &k.1);
        let only_in_baseline = base
            .iter()
            .filter(|(k, _)| !theirs.iter().any(|(o, _)| o == k))
            .map(|(k, _)| name_of(k))
            .collect::<Vec<_>>();
        let only_in_other = theirs
            .iter()
            .filter(|(k, _)| !base.iter().any(|(o, _)| o == k))
            .map(|(k, _)| name_of(k))
            .collect::<Vec<_>>();
        let mut warnings: Vec<Warning> = settings_differ
            .iter()
            .map(|d| settings_warning(d, &letter(0), &letter(i)))
            .collect();
        // A matrix's environment is the file system holding its images, not one it
        // measured (as its header's state, above): no aging warning from it.
        let measured = |d: &crate::model::ResultDoc| d.configurations.is_empty();
        if measured(&inputs[0].doc) && measured(&other.doc) {
            warnings.extend(aging_warning(
                &inputs[0].doc.environment,
                &other.doc.environment,
                &letter(0),
                &letter(i),
            ));
        }
        pairings.push(Pairing {
            baseline: letter(0),
            other: letter(i),
            rows,
            only_in_baseline,
            only_in_other,
            settings_differ,
            warnings,
        });
    }
    let mut warnings = same_results(inputs);
    warnings.extend(partial_results(inputs));
    Comparison {
        files,
        pairings,
        warnings,
    }
}

/// Inputs that did not complete (interrupted, failed, still running) or hold a test that
/// ended early: their tests may have fewer runs than asked, or be missing.
fn partial_results(inputs: &[Loaded]) -> Vec<Warning> {
    let mut out = Vec::new();
    for (i, l) in inputs.iter().enumerate() {
        let ended: Vec<String> = all_tests(&l.doc)
            .into_iter()
            .filter_map(|t| {
                let how = t.ended_early()?;
                let runs = t.runs.len();
                Some(format!(
                    "{} {how} after {runs} run{}",
                    display_name(config_of(&l.doc, t).as_deref(), &test_name(&l.doc, t)),
                    if runs == 1 { "" } else { "s" }
                ))
            })
            .collect();
        if l.doc.status == "complete" && ended.is_empty() {
            continue;
        }
        let status = match l.doc.status.as_str() {
            "running" => {
                "still running (or stopped without finishing) when it was saved".to_string()
            }
            "killed" => "a run killed before it finished".to_string(),
            other => other.to_string(),
        };
        let why = l
            .doc
            .error
            .as_deref()
            .map(|e| format!(" ({e})"))
            .unwrap_or_default();
        let tests = if ended.is_empty() {
            String::new()
        } else {
            format!("; {}", ended.join(", "))
        };
        out.push(Warning {
            code: WarningCode::PartialResult,
            message: format!(
                "{} ({}) is {status}{why}{tests}: its tests may have fewer runs than asked, or be missing, so compare it with care",
                letter(i),
                l.path.display()
            ),
            test: None,
        });
    }
    out
}

/// `files_per_portion 50 vs 10 (A vs B): measured with different settings, ...` for one
/// test (the finding before the first ": ", as the table footer prints repeats).
fn settings_warning(d: &SettingsDiffer, baseline: &str, other: &str) -> Warning {
    let list: Vec<String> = d.settings.iter().map(SettingDiff::describe).collect();
    Warning {
        code: WarningCode::SettingsDiffer,
        message: format!(
            "{} ({baseline} vs {other}): measured with different settings, so the change may come from them rather than from what is compared",
            list.join(", ")
        ),
        test: Some(display_name(d.config.as_deref(), &d.test)),
    }
}

/// The two targets' file systems in another state of use: one aged by `iolab age` and the
/// other not, or their fullness 10 points or more apart (`compare` of a fresh and an aged
/// run said nothing of either). `None` when alike or when a file did not record it.
fn aging_warning(
    a: &crate::model::Environment,
    b: &crate::model::Environment,
    baseline: &str,
    other: &str,
) -> Option<Warning> {
    let (sa, sb) = (a.fs_state.as_ref()?, b.fs_state.as_ref()?);
    let full = |s: &crate::model::FsState| s.used_bytes as f64 / s.size_bytes.max(1) as f64;
    let aged_differ = sa.aged_trees.is_empty() != sb.aged_trees.is_empty();
    if !aged_differ && (full(sa) - full(sb)).abs() < 0.10 {
        return None;
    }
    let words = |s: &crate::model::FsState| {
        if s.aged_trees.is_empty() {
            format!("{}, not aged", s.describe())
        } else {
            s.describe()
        }
    };
    Some(Warning {
        code: WarningCode::AgingDiffers,
        message: format!(
            "{baseline} ran on a file system {}, {other} on one {}: the change includes what aging and fullness do to the file system, not only what is compared",
            words(sa),
            words(sb)
        ),
        test: None,
    })
}

/// Inputs that are one result (the same file named twice, or a copy of it).
fn same_results(inputs: &[Loaded]) -> Vec<Warning> {
    let mut out = Vec::new();
    for (j, b) in inputs.iter().enumerate() {
        if let Some(i) = inputs[..j].iter().position(|a| a.doc == b.doc) {
            out.push(Warning {
                code: WarningCode::SameResult,
                message: format!(
                    "{} is the same result as {} ({}{}): every change between them is zero by construction",
                    letter(j),
                    letter(i),
                    b.path.display(),
                    if inputs[i].path == b.path {
                        " given twice"
                    } else {
                        ", a copy"
                    }
                ),
                test: None,
            });
        }
    }
    out
}

fn list_or_none(v: &[String]) -> String {
    if v.is_empty() {
        "no tests".into()
    } else {
        let shown: Vec<&str> = v.iter().take(6).map(|s| s.as_str()).collect();
        let more = if v.len() > 6 {
            format!(" and {} more", v.len() - 6)
        } else {
            String::new()
        };
        format!("{}{more}", shown.join(", "))
    }
}

fn row(
    config: Option<String>,
    t: &crate::model::TestResult,
    metric: &str,
    a: &Summary,
    b: &Summary,
    primary: bool,
) -> Row {
    let better = direction(metric);
    let (sig, method, welch) = significant(a, b);
    // The test's own interval of the difference over the baseline (inverted exactly for a
    // figure where lower is better): it excludes no change exactly when the verdict finds one.
    let half = half_width(welch);
    let change = relative(b.mean, a.mean, half);
    let speedup = match better {
        // A ratio of rates is not below zero: an interval that reaches there starts at 0
        // (the text says "too wide"; the JSON gave -13.54).
        // Without a test (one run each) there is no interval: NaN stays NaN (`max` made it
        // 0, and "B is 1.10× faster (± too wide)" read as an interval measured).
        Better::Higher if change.low.is_nan() => change,
        Better::Higher => Ratio {
            low: change.low.max(0.0),
            ..change
        },
        Better::Lower => invert(change),
    };
    let verdict = match method {
        Method::None => Verdict::Untested,
        _ if !sig => Verdict::NoSignificantDifference,
        _ if speedup.value > 1.0 => Verdict::Faster,
        _ => Verdict::Slower,
    };
    let mut r = Row {
        config,
        test: t.name.clone(),
        family: t.family.clone(),
        metric: metric.to_string(),
        higher_is_better: better == Better::Higher,
        primary,
        baseline: a.into(),
        other: b.into(),
        change_pct: (change.value - 1.0) * 100.0,
        change_pct_pm: change.pm * 100.0,
        change: String::new(),
        speedup,
        verdict,
        method,
        p_value: welch.map(|w| w.p),
        df: welch.map(|w| w.df),
        settings_differ: false,
    };
    r.change = change_cell(&r);
    r
}

fn verdict_text(r: &Row) -> String {
    let v = match r.verdict {
        Verdict::Faster => "faster",
        Verdict::Slower => "slower",
        Verdict::NoSignificantDifference => "no significant difference",
        Verdict::Untested => "not tested",
    };
    match (r.method, r.p_value) {
        (Method::Welch, Some(p)) => format!("{v} (Welch, {})", fmt_p(p)),
        (Method::OneRun, Some(p)) => format!("{v} (one-run t-test, {})", fmt_p(p)),
        (m, _) => format!("{v} ({})", m.describe()),
    }
}

fn fmt_p(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".into()
    } else {
        format!("p = {p:.3}")
    }
}

/// The 95 % interval of a ratio reaches zero or below (an inverted one is then unbounded):
/// the ratio could be anything, so no interval is shown, for the change and the speed-up
/// alike.
fn ratio_too_wide(r: Ratio) -> bool {
    r.too_wide()
}

/// A ratio and its interval: `1.37 ± 0.03` when both sides of the interval round alike,
/// else its bounds, `2.00 (1.11 … 10.00)` (an inverted interval is not symmetric).
fn fmt_ratio(r: Ratio) -> String {
    if !r.pm.is_finite() {
        return format!("{:.2}", r.value);
    }
    let (up, down) = (r.high - r.value, r.value - r.low);
    if format!("{up:.2}") == format!("{down:.2}") {
        format!("{:.2} ± {up:.2}", r.value)
    } else {
        format!("{:.2} ({:.2} … {:.2})", r.value, r.low, r.high)
    }
}

/// "B is 1.37 ± 0.04× faster on RND4K Q32T1 read".
pub fn sentence(p: &Pairing, r: &Row) -> String {
    let s = r.speedup;
    let what = display_name(r.config.as_deref(), &r.test);
    // A side of 0 (a saturate sweep where no depth held the limit) has no ratio: this read
    // "B is inf× faster than A".
    if !s.value.is_finite() || s.value == 0.0 {
        let zero = if r.baseline.mean == 0.0 {
            &p.baseline
        } else {
            &p.other
        };
        return if r.baseline.mean == 0.0 && r.other.mean == 0.0 {
            format!(
                "{} and {} are both 0 on {what} (no ratio)",
                p.other, p.baseline
            )
        } else {
            let word = if s.value.is_infinite() {
                "faster"
            } else {
                "slower"
            };
            format!(
                "{} is {word} than {} on {what} ({zero} is 0: no ratio)",
                p.other, p.baseline
            )
        };
    }
    let (word, shown) = if s.value >= 1.0 {
        ("faster", s)
    } else {
        ("slower", invert(s))
    };
    let tail = match r.verdict {
        Verdict::NoSignificantDifference => " (not significant at 95 %)",
        Verdict::Untested => " (one run each: significance unknown)",
        _ => "",
    };
    // The propagated interval of a ratio reaching zero says nothing (a 40× drop from two
    // scattered runs read "40.73 ± 108.47×"), as a mean's interval below zero does not.
    let (ratio, tail) = if ratio_too_wide(shown) {
        (
            format!("{:.2}", shown.value),
            format!(" ({CI_TOO_WIDE}){tail}"),
        )
    } else {
        (fmt_ratio(shown), tail.to_string())
    };
    // A ratio that rounds to 1.00 is neither: "B is 1.00 ± 0.21× faster" read as a finding.
    if format!("{:.2}", shown.value) == "1.00" {
        return format!(
            "{} is as fast as {} ({ratio}×) on {what}{tail}",
            p.other, p.baseline
        );
    }
    format!(
        "{} is {ratio}× {word} than {} on {what}{tail}",
        p.other, p.baseline
    )
}

/// The terminal form: the legend of files, a table per pairing, the headline sentences.
pub fn render_text(c: &Comparison) -> String {
    let mut out = String::new();
    for f in &c.files {
        let legend = format!("{} = {} {}", f.label, f.path, f.describe());
        out.push_str(&format!("{}\n", terminal(&legend)));
    }
    out.push_str(&render_warning_list(&c.warnings));
    for p in &c.pairings {
        out.push_str(&format!(
            "\n{} against {} (baseline)\n",
            p.other, p.baseline
        ));
        let mut table = new_table(ContentArrangement::Dynamic);
        table.set_header(table_header(p));
        for r in &p.rows {
            table.add_row(table_row(r).iter().map(|c| terminal(c).into_owned()));
        }
        align_right(&mut table, 2..5);
        out.push_str(&table.to_string());
        out.push('\n');
        out.push_str(&render_warning_list(&p.warnings));
        for r in p.rows.iter().filter(|r| r.primary) {
            out.push_str(&terminal(&sentence(p, r)));
            out.push('\n');
        }
        for line in only_in(p) {
            out.push_str(&terminal(&line));
            out.push('\n');
        }
    }
    out.push('\n');
    out.push_str(EXPLANATION);
    out.push('\n');
    out
}

/// The tests of one side only, under a pairing's table, terminal and report alike (the
/// report left them out: a test missing from one result was not said to be).
pub fn only_in(p: &Pairing) -> Vec<String> {
    [
        (&p.baseline, &p.only_in_baseline),
        (&p.other, &p.only_in_other),
    ]
    .into_iter()
    .filter(|(_, tests)| !tests.is_empty())
    .map(|(side, tests)| format!("only in {side}: {}", list_or_none(tests)))
    .collect()
}

/// What the columns mean (printed under every comparison).
pub const EXPLANATION: &str = "Change = other / baseline - 1 (of the mean), ± = the verdict's own 95 % interval of the difference, over the baseline (so it includes 0 exactly when there is no significant difference). Verdict at 95 %: Welch's t-test when both sides have 2+ runs; when one side has a single run, a one-run t-test: could that run be one more run of the other side (outside their 95 % prediction interval, mean ± t * sd * sqrt(1 + 1/n))? \"± too wide\": the 95 % interval of a mean, or of other / baseline, reaches zero or below (few runs, far apart), so it says nothing; more runs narrow it.";

/// Column names of a comparison table.
pub fn table_header(p: &Pairing) -> Vec<String> {
    vec![
        "Test".to_string(),
        "Metric".to_string(),
        p.baseline.clone(),
        p.other.clone(),
        "Change".to_string(),
        "Verdict".to_string(),
    ]
}

/// One line of a comparison table.
pub fn table_row(r: &Row) -> Vec<String> {
    table_cells(r).to_vec()
}

/// The six cells of `table_row` (Test, Metric, baseline, other, Change, Verdict): the
/// console's compare table shows these.
pub fn table_cells(r: &Row) -> [String; 6] {
    let (sa, sb) = (side_summary(&r.baseline), side_summary(&r.other));
    let mut test = display_name(r.config.as_deref(), &r.test);
    if r.settings_differ {
        test.push_str(" (settings differ)");
    }
    [
        test,
        label_for(&r.family, &r.metric),
        format!("{} (n={})", fmt_mean_ci(&r.metric, &sa), sa.n),
        format!("{} (n={})", fmt_mean_ci(&r.metric, &sb), sb.n),
        change_cell(r),
        verdict_text(r),
    ]
}

/// The Change column of a row, as the table prints it (the console shows the same text).
pub fn change_cell(r: &Row) -> String {
    if !r.change_pct.is_finite() {
        // The baseline is 0: other / baseline has no value ("inf %").
        "- (baseline 0)".to_string()
    } else if r.change_pct_pm.is_finite() && r.change_pct - r.change_pct_pm <= -100.0 {
        // other / baseline could be zero or below: "-97.5 ± 6.5 %" looked precise.
        format!("{} {CI_TOO_WIDE}", fmt_change_pct(r.change_pct, None))
    } else {
        fmt_change_pct(r.change_pct, Some(r.change_pct_pm))
    }
}

fn side_summary(s: &Side) -> Summary {
    Summary {
        n: s.n,
        mean: s.mean,
        stddev: s.stddev,
        ci95_low: s.ci95_low,
        ci95_high: s.ci95_high,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TestResult;
    use crate::stats::summarize;

    fn pairing() -> Pairing {
        Pairing {
            baseline: "A".into(),
            other: "B".into(),
            rows: Vec::new(),
            only_in_baseline: Vec::new(),
            only_in_other: Vec::new(),
            settings_differ: Vec::new(),
            warnings: Vec::new(),
        }
    }

    fn loaded(name: &str, doc: crate::model::ResultDoc) -> Loaded {
        Loaded {
            path: name.into(),
            doc,
        }
    }

    fn measured(command: &str) -> crate::model::ResultDoc {
        let mut doc = crate::model::ResultDoc::new(command, Vec::new(), Default::default());
        doc.tests.push(TestResult {
            name: "RND4K Q1T1 read".into(),
            runs: vec![Default::default()],
            ..Default::default()
        });
        doc
    }

    /// `iolab compare DIR1 DIR2` failed outright when a directory held an `iolab slack` or
    /// `age` result; they are left out, in one line, when two others are left.
    #[test]
    fn slack_and_age_results_are_left_out_when_two_others_are_left() {
        let mut slack = crate::model::ResultDoc::new("slack", Vec::new(), Default::default());
        slack.slack = Some(Default::default());
        let mut age = crate::model::ResultDoc::new("age", Vec::new(), Default::default());
        age.tests.push(TestResult {
            name: "age".into(),
            age: Some(Default::default()),
            ..Default::default()
        });
        let inputs = vec![
            loaded("a/run.json", measured("run")),
            loaded("a/slack.json", slack.clone()),
            loaded("b/age.json", age),
            loaded("b/run.json", measured("run")),
        ];
        let (kept, note) = comparable(inputs);
        let names: Vec<String> = kept.iter().map(|l| l.path.display().to_string()).collect();
        assert_eq!(names, ["a/run.json", "b/run.json"]);
        let note = note.expect("a note");
        assert_eq!(note.lines().count(), 1, "{note}");
        assert!(
            note.contains("a/slack.json: an `iolab slack` result")
                && note.contains("; b/age.json: an `iolab age` result"),
            "{note}"
        );
        // With one result left, nothing is left out: compare says why it cannot compare.
        let inputs = vec![
            loaded("a/run.json", measured("run")),
            loaded("s.json", slack),
        ];
        let (kept, note) = comparable(inputs);
        assert_eq!((kept.len(), note), (2, None));
        let e = compare(&kept, false).unwrap_err().0;
        assert!(e.starts_with("s.json: an `iolab slack` result"), "{e}");
    }

    /// The tests of one side only, one line per side that has any.
    #[test]
    fn the_tests_of_one_side_only_are_named() {
        let mut p = pairing();
        assert!(only_in(&p).is_empty());
        p.only_in_other = vec!["RND4K Q1T1 read".into()];
        assert_eq!(only_in(&p), ["only in B: RND4K Q1T1 read"]);
    }

    /// Two matrices of xfs and btrfs on images held by an ext4: the header said "ext4" (and
    /// that ext4's fullness). It names the file systems measured.
    #[test]
    fn a_matrix_is_described_by_the_file_systems_it_measured() {
        let mut doc = crate::model::ResultDoc::new("matrix", vec![], Default::default());
        doc.environment.fs_type = "ext4".into();
        doc.environment.fs_state = Some(Default::default());
        for fs in ["xfs", "btrfs", "xfs"] {
            doc.configurations
                .push(crate::model::matrix::ConfigurationResult {
                    fs_type: fs.into(),
                    ..Default::default()
                });
        }
        // The run's file system aged and full, the images' not: the matrix's environment is
        // not what it measured, so no `aging-differs` from it.
        let run = {
            let mut d = crate::model::ResultDoc::new("run", vec![], Default::default());
            d.environment.fs_type = "ext4".into();
            d.environment.fs_state = Some(crate::model::FsState {
                size_bytes: 100,
                used_bytes: 90,
                aged_trees: vec!["/mnt/iolab-aged-1".into()],
            });
            d
        };
        let inputs = [
            crate::report::load::Loaded {
                path: "m.json".into(),
                doc,
            },
            crate::report::load::Loaded {
                path: "r.json".into(),
                doc: run,
            },
        ];
        let c = compare_lenient(&inputs, false);
        assert_eq!(c.files[0].fs_type, "xfs/btrfs");
        assert!(c.files[0].fs_state.is_none());
        assert!(
            c.files[0]
                .describe()
                .starts_with("(matrix on ?, xfs/btrfs, ")
        );
        assert_eq!(c.files[1].fs_type, "ext4");
        assert!(
            !c.pairings[0]
                .warnings
                .iter()
                .any(|w| w.code == WarningCode::AgingDiffers),
            "{:?}",
            c.pairings[0].warnings
        );
    }

    /// A trace's `iops` counts opens, stats and fsyncs too: compare labelled it "IOPS" while
    /// `iolab trace` says ops/s.
    #[test]
    fn a_trace_s_operations_are_ops_per_second() {
        let t = TestResult {
            name: "office".into(),
            family: "trace".into(),
            ..Default::default()
        };
        let a = summarize(&[40_000.0, 42_000.0]);
        let r = row(None, &t, "iops", &a, &a, true);
        assert_eq!(table_row(&r)[1], "ops/s");
        let block = TestResult {
            family: "block".into(),
            ..t
        };
        assert_eq!(
            table_row(&row(None, &block, "iops", &a, &a, true))[1],
            "IOPS"
        );
        let doc_table = crate::report::blocks::summary_table(&[(
            "office".into(),
            &TestResult {
                name: "office".into(),
                family: "trace".into(),
                summary: [("iops".to_string(), a.clone())].into_iter().collect(),
                runs: vec![Default::default(), Default::default()],
                ..Default::default()
            },
        )]);
        assert_eq!(doc_table.header[1], "ops/s", "{:?}", doc_table.header);
    }

    /// One rule for a change: signed percent, one decimal, its ± when tested. The Change
    /// column said "37.0 ± 2.3 %" where `iolab history trend` said "+2.8 %".
    #[test]
    fn a_change_is_signed_percent_everywhere() {
        let t = TestResult {
            name: "SEQ1M Q8T1 read".into(),
            family: "block".into(),
            ..Default::default()
        };
        // The row of MB/s from runs `a` to runs `b`.
        let compared = |a: &[f64], b: &[f64]| {
            row(
                None,
                &t,
                "bw_bytes_per_s",
                &summarize(a),
                &summarize(b),
                true,
            )
        };
        let a = [1000.0, 1010.0, 990.0];
        let faster = compared(&a, &[1370.0, 1380.0, 1360.0]);
        assert!(faster.change.starts_with("+37.0 % ± "), "{}", faster.change);
        assert!(faster.change.ends_with(" %"), "{}", faster.change);
        assert_eq!(table_row(&faster)[4], faster.change);
        let slower = compared(&a, &[900.0, 910.0, 890.0]);
        assert!(slower.change.starts_with("-10.0 % ± "), "{}", slower.change);
        let once = compared(&[1000.0], &[1028.0]);
        assert_eq!(once.change, "+2.8 %");
        assert_eq!(
            crate::report::metrics::fmt_change_pct(2.8, None),
            once.change
        );
        assert_eq!(
            crate::report::metrics::fmt_change_pct(-0.04, None),
            "+0.0 %"
        );
    }

    /// Two scattered runs 40× below the baseline: the ratio's interval reaches zero, so
    /// neither the change nor the speed-up has a half-width to show (QA saw
    /// "-97.5 ± 6.5 %" and "B is 40.73 ± 108.47× slower").
    #[test]
    fn a_ratio_whose_interval_reaches_zero_is_too_wide() {
        let t = TestResult {
            name: "RND4K Q1T2 read".into(),
            ..Default::default()
        };
        let a = summarize(&[2_557_302.0, 2_734_084.0]);
        let b = summarize(&[45_000.0, 84_910.0]);
        let r = row(None, &t, "iops", &a, &b, true);
        assert_eq!(
            r.speedup.low, 0.0,
            "a ratio's interval starts at 0, not below"
        );
        let cells = table_row(&r);
        assert_eq!(cells[4], format!("{:+.1} % ± too wide", r.change_pct));
        assert_eq!(r.change, cells[4], "--json's text is the table's");
        let text = sentence(&pairing(), &r);
        assert!(
            text.starts_with("B is ")
                && text.contains("× slower than A on RND4K Q1T2 read (± too wide)"),
            "{text}"
        );
        // A side of 0 (no depth held a saturate limit) has no ratio: "inf×", "inf %".
        let zero = summarize(&[0.0]);
        let one = summarize(&[165_423.0]);
        let r = row(None, &t, "iops", &zero, &one, true);
        assert_eq!(table_row(&r)[4], "- (baseline 0)");
        assert_eq!(
            sentence(&pairing(), &r),
            "B is faster than A on RND4K Q1T2 read (A is 0: no ratio)"
        );
        assert!(table_row(&r)[5].starts_with("not tested (1 run each)"));
        let r = row(None, &t, "iops", &one, &zero, true);
        assert_eq!(
            sentence(&pairing(), &r),
            "B is slower than A on RND4K Q1T2 read (B is 0: no ratio)"
        );
        let r = row(None, &t, "iops", &zero, &zero, true);
        assert_eq!(
            sentence(&pairing(), &r),
            "B and A are both 0 on RND4K Q1T2 read (no ratio)"
        );
        // A tight one keeps its half-width, in the same form: the change as `N %`, then its
        // interval (the column mixed "+0.0 ± 52.9 %" and "+0.0 % ± too wide").
        let c = summarize(&[1_300_000.0, 1_310_000.0]);
        let r = row(None, &t, "iops", &a, &c, true);
        assert_eq!(
            table_row(&r)[4],
            format!("{:+.1} % ± {:.1} %", r.change_pct, r.change_pct_pm)
        );
        assert!(!sentence(&pairing(), &r).contains("too wide"));
    }

    /// One run on each side: no test, no interval. Two matrix results compared said "B is
    /// 1.10× faster than A on RND4K Q1T1 read [ext4] (± too wide) (one run each: significance
    /// unknown)" on every faster row, and nothing of an interval on the slower ones.
    #[test]
    fn one_run_each_has_no_interval_either_way() {
        let t = TestResult {
            name: "RND4K Q1T1 read".into(),
            ..Default::default()
        };
        let (a, b) = (summarize(&[28_681.0]), summarize(&[31_669.0]));
        for (x, y, word) in [(&a, &b, "faster"), (&b, &a, "slower")] {
            let r = row(None, &t, "iops", x, y, true);
            assert_eq!(r.verdict, Verdict::Untested);
            assert!(r.speedup.low.is_nan(), "{:?}", r.speedup);
            let text = sentence(&pairing(), &r);
            assert_eq!(
                text,
                format!(
                    "B is 1.10× {word} than A on RND4K Q1T1 read (one run each: significance unknown)"
                )
            );
        }
    }

    /// A fresh and an aged target are told apart; two alike ones (or a file that did not
    /// record it) are not.
    #[test]
    fn aging_that_differs_is_said() {
        use crate::model::{Environment, FsState};
        let env = |used: u64, trees: &[&str]| Environment {
            fs_state: Some(FsState {
                size_bytes: 1000,
                used_bytes: used,
                aged_trees: trees.iter().map(|t| t.to_string()).collect(),
            }),
            ..Default::default()
        };
        let fresh = env(1, &[]);
        let aged = env(801, &["/mnt/t/iolab-aged-3"]);
        let w = aging_warning(&fresh, &aged, "A", "B").expect("differs");
        assert_eq!(w.code, WarningCode::AgingDiffers);
        assert!(
            w.message.starts_with(
                "A ran on a file system 0.1 % full, not aged, B on one 80.1 % full, aged (iolab-aged-3): "
            ),
            "{}",
            w.message
        );
        assert!(aging_warning(&aged, &env(790, &["/x/iolab-aged-1"]), "A", "B").is_none());
        assert!(aging_warning(&fresh, &env(95, &[]), "A", "B").is_none());
        assert!(
            aging_warning(&fresh, &env(102, &[]), "A", "B").is_some(),
            "10 points"
        );
        assert!(aging_warning(&fresh, &Environment::default(), "A", "B").is_none());
    }
}

//! Repeats: how many runs, when `--repeat auto` may stop, and the summary and honesty
//! warnings of a finished test.

use crate::model::{Summary, TestResult, Warning, WarningCode};
use crate::stats::summary::{ci_half_width_rel, summarize};

/// How many runs per test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RepeatMode {
    Fixed(u32),
    /// Add runs (at least 3) until the CI half-width is under `target_ci` (fraction of the
    /// mean), at most `max` runs.
    Auto {
        max: u32,
        target_ci: f64,
    },
}

/// `--max-repeat` when not given.
pub const DEFAULT_MAX_REPEAT: u32 = 10;
/// `--target-ci` (percent) when not given.
pub const DEFAULT_TARGET_CI_PCT: f64 = 2.5;

impl RepeatMode {
    /// Parse `--repeat` with `--max-repeat` and `--target-ci` (percent).
    pub fn parse(repeat: &str, max: u32, target_ci_pct: f64) -> Result<RepeatMode, String> {
        if repeat.trim().eq_ignore_ascii_case("auto") {
            if max < 2 {
                return Err(format!(
                    "--max-repeat {max}: needs at least 2 for --repeat auto"
                ));
            }
            if !(target_ci_pct > 0.0 && target_ci_pct < 100.0) {
                return Err(format!(
                    "--target-ci {target_ci_pct}: must be above 0 and below 100 (percent)"
                ));
            }
            return Ok(RepeatMode::Auto {
                max,
                target_ci: target_ci_pct / 100.0,
            });
        }
        match repeat.trim().parse::<u32>() {
            Ok(0) => Err("--repeat 0: at least one run is needed".into()),
            Ok(n) if n > 1000 => Err(format!("--repeat {n}: at most 1000")),
            Ok(n) => Ok(RepeatMode::Fixed(n)),
            Err(_) => Err(format!("--repeat '{repeat}': expected a number or 'auto'")),
        }
    }

    /// Runs to do at least.
    pub fn min_runs(&self) -> u32 {
        match *self {
            RepeatMode::Fixed(n) => n,
            RepeatMode::Auto { max, .. } => 3.min(max),
        }
    }

    pub fn max_runs(&self) -> u32 {
        match *self {
            RepeatMode::Fixed(n) => n,
            RepeatMode::Auto { max, .. } => max,
        }
    }

    /// After `values` (the headline metric of each run so far), is another run needed?
    pub fn wants_more(&self, values: &[f64]) -> bool {
        let n = values.len() as u32;
        match *self {
            RepeatMode::Fixed(k) => n < k,
            RepeatMode::Auto { max, target_ci } => {
                if n < self.min_runs() {
                    return true;
                }
                if n >= max {
                    return false;
                }
                ci_half_width_rel(&summarize(values)) > target_ci
            }
        }
    }

    pub fn describe(&self) -> String {
        match *self {
            RepeatMode::Fixed(n) => n.to_string(),
            RepeatMode::Auto { max, target_ci } => {
                format!(
                    "auto (until CI half-width < {:.1} %, max {max})",
                    target_ci * 100.0
                )
            }
        }
    }
}

/// Metrics summarised over runs, as (name, getter).
fn run_metrics(t: &TestResult) -> Vec<(&'static str, Vec<f64>)> {
    let mut out = Vec::new();
    let get = |f: fn(&crate::model::RunResult) -> Option<f64>| -> Vec<f64> {
        t.runs.iter().filter_map(f).collect()
    };
    for (name, f) in [
        (
            "iops",
            (|r: &crate::model::RunResult| r.iops) as fn(&crate::model::RunResult) -> Option<f64>,
        ),
        ("bw_bytes_per_s", |r| r.bw_bytes_per_s),
        ("files_per_s", |r| r.files_per_s),
        ("lat_mean_ns", |r| r.lat_ns.as_ref().map(|l| l.mean)),
        ("lat_p99_ns", |r| r.lat_ns.as_ref().map(|l| l.p99 as f64)),
        ("read_iops", |r| r.read.as_ref().map(|d| d.iops)),
        ("read_bw_bytes_per_s", |r| {
            r.read.as_ref().map(|d| d.bw_bytes_per_s)
        }),
        ("read_lat_mean_ns", |r| {
            r.read.as_ref().map(|d| d.lat_ns.mean)
        }),
        ("write_iops", |r| r.write.as_ref().map(|d| d.iops)),
        ("write_bw_bytes_per_s", |r| {
            r.write.as_ref().map(|d| d.bw_bytes_per_s)
        }),
        ("write_lat_mean_ns", |r| {
            r.write.as_ref().map(|d| d.lat_ns.mean)
        }),
    ] {
        let v = get(f);
        if !v.is_empty() {
            out.push((name, v));
        }
    }
    out
}

/// Fill `t.summary` from its runs.
pub fn summarize_test(t: &mut TestResult) {
    t.summary.clear();
    for (name, values) in run_metrics(t) {
        t.summary.insert(name.to_string(), summarize(&values));
    }
}

/// The honesty warnings that depend only on the repeats.
pub fn spread_warnings(t: &TestResult, mode: &RepeatMode) -> Vec<Warning> {
    let mut w = Vec::new();
    let key = if t.summary.contains_key("iops") {
        "iops"
    } else {
        "files_per_s"
    };
    let Some(s): Option<&Summary> = t.summary.get(key) else {
        return w;
    };
    if s.n < 2 {
        w.push(Warning {
            code: WarningCode::NoSpread,
            message: "only one run: no spread or confidence interval can be given; use --repeat 3 or more".into(),
            test: Some(t.name.clone()),
        });
    } else if s.cv > 0.05 {
        // Advice that fits the command and the repeat mode already in use.
        let longer = if let Some(tr) = &t.trace {
            // `trace replay` has no --scale: a recording is replayed as it is.
            if tr.source == "replay" {
                "a longer recording"
            } else {
                "a larger --scale"
            }
        } else if key == "iops" {
            "a longer --duration"
        } else if let Some(c) = &t.copy {
            // `iolab copy` has no portions: its data set is what can grow.
            if c.source == "synthetic" {
                "a larger --scale"
            } else {
                "a larger --source tree"
            }
        } else {
            "more files per portion"
        };
        let advice = match mode {
            // `--steadystate` decides the runs (and refuses --repeat): its window is this noisy.
            _ if t.steady_state.is_some() => {
                format!(
                    "the steady-state window itself is this noisy; stop other programs, or use {longer}"
                )
            }
            RepeatMode::Fixed(_) => format!("use more repeats (--repeat auto) or {longer}"),
            RepeatMode::Auto { max, .. } => format!(
                "--repeat auto stopped at {} of at most {max} runs; stop other programs, or use {longer}",
                s.n
            ),
        };
        // A trace's report gives the CV of MB/s; this one is of ops/s, so it says so.
        let of = if t.trace.is_some() { " in ops/s" } else { "" };
        w.push(Warning {
            code: WarningCode::Noisy,
            message: format!(
                "runs differ by {:.1} %{of} (coefficient of variation above 5 %): something else used the device or CPU, or the device changes state (cache, garbage collection); {advice}",
                s.cv * 100.0
            ),
            test: Some(t.name.clone()),
        });
    }
    if !s.outliers.is_empty() {
        w.push(Warning {
            code: WarningCode::OutlierRun,
            message: format!(
                "run(s) {} are outliers (modified Z-score > 3.5)",
                t.outlier_runs(s)
                    .iter()
                    .map(|r| r.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            test: Some(t.name.clone()),
        });
    }
    // Not under --steadystate: the rounds before its window are the warm-up it waited out,
    // so a slow first round of the window is no cold cache, and the advice (more repeats)
    // is what --steadystate refuses (it said "the first run" of round 3 and more).
    if s.n >= 3 && t.steady_state.is_none() {
        let values: Vec<f64> = t
            .summarized_runs()
            .iter()
            .filter_map(|r| r.iops.or(r.files_per_s))
            .collect();
        let rest = crate::stats::summary::mean(&values[1..]);
        if values[0] < rest * 0.85 {
            // Only the block tests have a warm-up to add (`files`, `copy` and `trace` said
            // "--ramp for block tests", an option they do not take).
            let advice = match t.settings.is_some() {
                true => "add a warm-up (--ramp) or more repeats",
                false => "use more repeats, so that the first weighs less",
            };
            w.push(Warning {
                code: WarningCode::SlowFirstRun,
                message: format!(
                    "the first run was {:.0} % slower than the others: a cold cache or device warm-up; {advice}",
                    (1.0 - values[0] / rest) * 100.0
                ),
                test: Some(t.name.clone()),
            });
        }
    }
    if let RepeatMode::Auto { max, target_ci } = *mode {
        let rel = ci_half_width_rel(s);
        if s.n >= max && rel > target_ci {
            w.push(Warning {
                code: WarningCode::CiNotReached,
                message: format!(
                    "gave up after {max} runs: the 95 % CI is still ±{:.1} % (target ±{:.1} %)",
                    rel * 100.0,
                    target_ci * 100.0
                ),
                test: Some(t.name.clone()),
            });
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A summarized test whose runs gave `values` (IOPS, else files per second).
    fn with_runs(iops: bool, values: &[f64]) -> TestResult {
        let mut t = TestResult {
            name: "RND4K Q1T1 read".into(),
            ..Default::default()
        };
        for (i, &v) in values.iter().enumerate() {
            t.runs.push(crate::model::RunResult {
                run: i as u32 + 1,
                iops: iops.then_some(v),
                files_per_s: (!iops).then_some(v),
                ..Default::default()
            });
        }
        summarize_test(&mut t);
        t
    }

    /// A slow first run is told to add a warm-up only where there is one (`--ramp`, the
    /// block tests); a small-file or copy test has none.
    #[test]
    fn slow_first_run_advice_names_only_a_warm_up_there_is() {
        let advice = |block: bool| {
            let mut t = with_runs(block, &[50.0, 100.0, 101.0, 99.0]);
            t.settings = block.then(crate::model::BlockSettings::default);
            spread_warnings(&t, &RepeatMode::Fixed(4))
                .into_iter()
                .find(|w| w.code == WarningCode::SlowFirstRun)
                .expect("slow first run")
                .message
        };
        assert!(advice(true).ends_with("add a warm-up (--ramp) or more repeats"));
        let files = advice(false);
        assert!(!files.contains("--ramp"), "{files}");
    }

    /// The noisy warning's advice fits the repeat mode in use and the kind of test.
    #[test]
    fn noisy_advice_fits_the_mode_and_the_test() {
        let test = with_runs;
        let t = test(true, &[120.0, 130.0, 80.0, 100.0]);
        let message = |t: &TestResult, mode: &RepeatMode| {
            spread_warnings(t, mode)
                .into_iter()
                .find(|w| w.code == WarningCode::Noisy)
                .expect("noisy")
                .message
        };
        let fixed = message(&t, &RepeatMode::Fixed(4));
        assert!(
            fixed.ends_with("use more repeats (--repeat auto) or a longer --duration"),
            "{fixed}"
        );
        let auto = message(
            &t,
            &RepeatMode::Auto {
                max: 4,
                target_ci: 0.05,
            },
        );
        assert!(
            auto.contains("--repeat auto stopped at 4 of at most 4 runs"),
            "{auto}"
        );
        assert!(!auto.contains("use more repeats"), "{auto}");
        let files = test(false, &[120.0, 130.0, 80.0]);
        assert!(message(&files, &RepeatMode::Fixed(3)).ends_with("or more files per portion"));
        // `iolab copy` has no --files-per-portion: a generated data set grows with --scale.
        let mut copy = test(false, &[120.0, 130.0, 80.0]);
        copy.copy = Some(crate::model::copy::CopyTestDetail {
            source: "synthetic".into(),
            ..Default::default()
        });
        let m = message(&copy, &RepeatMode::Fixed(3));
        assert!(m.ends_with("or a larger --scale"), "{m}");
        copy.copy.as_mut().unwrap().source = "/home/me/photos".into();
        let m = message(&copy, &RepeatMode::Fixed(3));
        assert!(m.ends_with("or a larger --source tree"), "{m}");
        assert!(!fixed.contains("ops/s"), "{fixed}");
        // A trace's table gives the CV of MB/s; the warning's is of ops/s and says so.
        let mut trace = test(true, &[120.0, 130.0, 80.0]);
        trace.trace = Some(Default::default());
        let m = message(&trace, &RepeatMode::Fixed(3));
        assert!(m.contains(" % in ops/s (coefficient"), "{m}");
        assert!(m.ends_with("or a larger --scale"), "{m}");
        // `trace replay` has no --scale to advise.
        trace.trace.as_mut().unwrap().source = "replay".into();
        let m = message(&trace, &RepeatMode::Fixed(3));
        assert!(m.ends_with("or a longer recording"), "{m}");
    }

    /// Under --steadystate the summary covers the window, past run 1: its outlier was named
    /// by its place in the window ("run 2" for run 5), and a noisy window was told to use
    /// --repeat auto, which --steadystate refuses.
    #[test]
    fn a_steady_window_s_outliers_and_advice() {
        let values = [
            50.0, 70.0, 90.0, 100.0, 102.0, 98.0, 101.0, 160.0, 99.0, 100.0,
        ];
        let mut t = with_runs(true, &values);
        // The window: rounds 3..=9 (counted from 0), runs 4..=10.
        let rec = crate::model::steady::SteadyStateRecord {
            steady_first_round: Some(3),
            steady_last_round: Some(9),
            window_rounds: 7,
            reached: true,
            values: values.to_vec(),
            ..Default::default()
        };
        let mut judged = TestResult {
            runs: t.runs[3..].to_vec(),
            ..Default::default()
        };
        summarize_test(&mut judged);
        t.summary = judged.summary;
        t.steady_state = Some(rec);
        let w = spread_warnings(&t, &RepeatMode::Fixed(3));
        let outlier = w
            .iter()
            .find(|w| w.code == WarningCode::OutlierRun)
            .expect("outlier");
        assert!(
            outlier.message.starts_with("run(s) 8 are"),
            "{}",
            outlier.message
        );
        let noisy = w
            .iter()
            .find(|w| w.code == WarningCode::Noisy)
            .expect("noisy");
        assert!(!noisy.message.contains("--repeat"), "{}", noisy.message);
        assert!(
            noisy.message.contains("steady-state window"),
            "{}",
            noisy.message
        );
    }

    /// A steady window whose first round is slow gives no `slow-first-run`: that round is
    /// not the test's first, its rounds before were the warm-up, and "more repeats" is what
    /// --steadystate refuses.
    #[test]
    fn a_steady_window_s_slow_first_round_is_no_slow_first_run() {
        let values = [50.0, 70.0, 60.0, 100.0, 101.0, 99.0, 100.0];
        let mut t = with_runs(true, &values);
        let mut judged = TestResult {
            runs: t.runs[2..].to_vec(),
            ..Default::default()
        };
        summarize_test(&mut judged);
        t.summary = judged.summary;
        t.settings = Some(crate::model::BlockSettings::default());
        assert!(
            spread_warnings(&t, &RepeatMode::Fixed(1))
                .iter()
                .any(|w| w.code == WarningCode::SlowFirstRun),
            "judged as repeats, the slow first run is told"
        );
        t.steady_state = Some(crate::model::steady::SteadyStateRecord {
            steady_first_round: Some(2),
            steady_last_round: Some(6),
            window_rounds: 5,
            reached: true,
            values: values.to_vec(),
            ..Default::default()
        });
        let w = spread_warnings(&t, &RepeatMode::Fixed(1));
        assert!(
            w.iter().all(|w| w.code != WarningCode::SlowFirstRun),
            "{w:?}"
        );
    }

    #[test]
    fn parse_repeat() {
        assert_eq!(RepeatMode::parse("3", 10, 2.5), Ok(RepeatMode::Fixed(3)));
        assert!(RepeatMode::parse("0", 10, 2.5).is_err());
        assert!(RepeatMode::parse("x", 10, 2.5).is_err());
        assert_eq!(
            RepeatMode::parse("auto", 10, 2.5),
            Ok(RepeatMode::Auto {
                max: 10,
                target_ci: 0.025
            })
        );
    }

    #[test]
    fn auto_stops_when_tight_or_at_max() {
        let m = RepeatMode::Auto {
            max: 5,
            target_ci: 0.025,
        };
        assert!(m.wants_more(&[100.0, 101.0]));
        assert!(!m.wants_more(&[100.0, 100.5, 99.8]));
        assert!(m.wants_more(&[100.0, 130.0, 80.0]));
        assert!(!m.wants_more(&[100.0, 130.0, 80.0, 120.0, 90.0]));
    }
}

//! What every exporter needs to know about metrics: which way is better (CONTRACTS.md), how
//! to name and format them, which one is a test's headline, and where the tests of a result
//! file live (top level and inside matrix configurations).

use std::collections::BTreeSet;

use crate::model::matrix::{WORKLOAD_PARAM, aged_label, aged_run_of};
use crate::model::{ResultDoc, Summary, TestResult};
use crate::stats::summarize;
use crate::units::{fmt_ns, fmt_thousands};

/// Which way a metric improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
}

/// Direction by name: rates (`*_per_s`, `iops`) are better higher; times (`*_ns`, `*_s`,
/// `*_seconds`, `seconds_per_portion`) are better lower. Unknown names count as rates.
pub fn direction(metric: &str) -> Better {
    // A distributed test's worst host latency and its straggler spread: less is better (they
    // counted as rates, so compare called a wider spread an improvement).
    if metric == LAT_HOST_MAX || metric == STRAGGLER_SPREAD {
        return Better::Lower;
    }
    if metric.ends_with("_per_s") || metric == "iops" || metric.ends_with("_iops") {
        Better::Higher
    } else if metric.ends_with("_ns")
        || metric.ends_with("_s")
        || metric.ends_with("_seconds")
        || metric.starts_with("seconds_per_")
    {
        Better::Lower
    } else {
        Better::Higher
    }
}

/// The summaries a distributed test adds (`dist::aggregate::dist_summaries`): the worst
/// host's mean latency (ns) and the straggler spread (percent).
const LAT_HOST_MAX: &str = "lat_mean_ns_host_max";
const STRAGGLER_SPREAD: &str = "straggler_spread_pct";

/// The words of a mean latency in every table, terminal and report alike (the terminal's
/// tables said `avg lat`, the reports `mean latency` and `mean lat`).
pub const MEAN_LATENCY: &str = "mean latency";

/// Short column label with the unit.
pub fn label(metric: &str) -> String {
    match metric {
        LAT_HOST_MAX => "worst host's mean latency".into(),
        STRAGGLER_SPREAD => "straggler spread".into(),
        "iops" => "IOPS".into(),
        "bw_bytes_per_s" => "MB/s".into(),
        "files_per_s" => "files/s".into(),
        "seconds_per_portion" => "s/portion".into(),
        "lat_mean_ns" => MEAN_LATENCY.into(),
        "lat_p99_ns" => "p99 latency".into(),
        "answer_iops" => "IOPS within limit".into(),
        "settled_bw_bytes_per_s" => "settled MB/s".into(),
        // The copy phases' time from the first open to the last close (not the closing).
        "close_ns" => "time to last close".into(),
        "read_iops"
        | "write_iops"
        | "read_bw_bytes_per_s"
        | "write_bw_bytes_per_s"
        | "read_lat_mean_ns"
        | "write_lat_mean_ns" => {
            let (dir, rest) = metric.split_once('_').unwrap_or_default();
            format!("{dir}s' {}", label(rest))
        }
        // A time: its cells carry their own unit (ms, µs), so the header does not say `ns`.
        other if other.ends_with("_ns") => {
            let base = other.trim_end_matches("_ns");
            match base.strip_prefix("lat_") {
                Some(p) => format!("{} latency", p.replace('_', " ")),
                None => format!("{} time", base.replace('_', " ")),
            }
        }
        other => other.replace('_', " "),
    }
}

/// [`label`] for a test of `family`: a trace's `iops` counts every operation (open, stat,
/// fsync, rename as well as reads and writes), so it is `ops/s`, as `iolab trace`'s own
/// output and the schema call it, not `IOPS`.
/// A sustain pass's `bw_bytes_per_s` is its whole span over its whole time, cache and
/// slow phase averaged together (a longer span lowers it): `average MB/s`, beside the
/// `settled MB/s` the pass ended at.
pub fn label_for(family: &str, metric: &str) -> String {
    match (family, metric) {
        ("trace", "iops") => "ops/s".into(),
        ("sustain", "bw_bytes_per_s") => "average MB/s".into(),
        _ => label(metric),
    }
}

/// A value in the metric's display unit (MB/s for bytes per second, adaptive time units).
pub fn fmt_value(metric: &str, v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    if metric == LAT_HOST_MAX {
        // A latency in ns whose name does not end in `_ns`: it read "13966508.3573".
        fmt_ns(v)
    } else if metric.ends_with("_pct") {
        format!("{v:.1} %")
    } else if metric.contains("bytes_per_s") {
        format!("{:.2}", v / 1e6)
    } else if metric.ends_with("iops") {
        fmt_thousands(v)
    } else if metric.ends_with("_ns") {
        fmt_ns(v)
    } else if metric.ends_with("_per_s") {
        // The one form of files/s (and other counts per second), terminal tables and
        // reports alike: `1,792`, `631.8`, `0.28` (a copy of one 70 MiB file; `0.3` kept one
        // digit). The terminal gave `632` where the report gave `631.8`.
        if v.abs() >= 999.95 {
            fmt_thousands(v)
        } else if v.abs() >= 9.995 {
            format!("{v:.1}")
        } else {
            format!("{v:.2}")
        }
    } else if direction(metric) == Better::Lower {
        format!("{} s", fmt_seconds(v))
    } else {
        format!("{v:.4}")
    }
}

/// Seconds as Belov's tables give them (three decimals, `1.479`), with at least two
/// significant digits below that: `0.036`, `0.0015`, `0.00047`. A fixed three (or four)
/// decimals showed every phase of a fast device as `0.000`.
pub fn fmt_seconds(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    let decimals = if a == 0.0 || a >= 0.1 {
        3
    } else {
        // Two significant digits: 0.0015 has its first at 10^-3, so 4 decimals.
        (1 - a.log10().floor() as i32).clamp(3, 12) as usize
    };
    format!("{v:.decimals$}")
}

/// The figure over a test's runs that its command's own table gives for `metric`, and its
/// name: the best run for a peak test's rates (`report::table`), the mean for `iolab files`
/// (its table gives the mean of the runs' rates and times), else the median (run, copy,
/// trace and the matrix say "median of the runs").
pub fn table_figure(t: &TestResult, metric: &str, s: &Summary) -> (f64, &'static str) {
    if t.headline.as_deref() == Some("max") && direction(metric) == Better::Higher {
        (s.max, "best run")
    } else if t.family == "files" {
        (s.mean, "mean")
    } else {
        (s.median, "median")
    }
}

/// What the text shows instead of a half-width when the 95 % interval of a positive figure
/// reaches below zero (two runs far apart: t = 12.7 at n = 2): a rate or a time cannot be
/// negative, so the interval says nothing. The JSON keeps the interval as computed.
pub const CI_TOO_WIDE: &str = "± too wide";

/// A change in percent, as every table, `--json` text and the console word it: signed, one
/// decimal, with its 95 % half-width when it has one (`+37.0 % ± 2.3 %`, `-1.7 %`). `iolab
/// compare` wrote "37.0 ± 2.3 %" where `iolab history trend` wrote "+2.8 %". The change
/// always reads `N %`, then what is known of its interval: "0.0 ± 52.9 %" stood beside
/// "0.0 % ± too wide" in one column.
pub fn fmt_change_pct(pct: f64, pm: Option<f64>) -> String {
    // "-0.0 %" for a change that rounds to nothing.
    let pct = if (pct * 10.0).round() == 0.0 {
        0.0
    } else {
        pct
    };
    match pm.filter(|pm| pm.is_finite()) {
        Some(pm) => format!("{pct:+.1} % ± {pm:.1} %"),
        None => format!("{pct:+.1} %"),
    }
}

/// `mean ± 95 % half-width` (or just the value for one run; `mean ± too wide` when the
/// interval reaches below zero).
pub fn fmt_mean_ci(metric: &str, s: &Summary) -> String {
    if s.n >= 2 && s.mean > 0.0 && s.ci95_low < 0.0 {
        format!("{} {CI_TOO_WIDE}", fmt_value(metric, s.mean))
    } else if s.n >= 2 {
        let half = (s.ci95_high - s.ci95_low) / 2.0;
        if metric.ends_with("_ns") {
            format!("{} ± {}", fmt_ns(s.mean), fmt_ns(half))
        } else if metric.ends_with("_per_s") && !metric.contains("bytes") && s.mean.abs() >= 1000.0
        {
            // Same precision on both sides of the ±.
            format!("{} ± {}", fmt_thousands(s.mean), fmt_thousands(half))
        } else {
            format!(
                "{} ± {}",
                fmt_value(metric, s.mean),
                fmt_value(metric, half)
            )
        }
    } else {
        fmt_value(metric, s.mean)
    }
}

/// Every test of a result file: top level first, then those inside matrix configurations
/// (a test listed in both places is taken once). Tests are told apart by configuration,
/// workload (a matrix's `params.matrix_workload`, which says an aged run too) and name: two
/// files workloads' `4KiB create`, or a configuration's fresh and aged runs, are different
/// tests (the name alone kept only the first of them in the CSV and the history).
pub fn all_tests(doc: &ResultDoc) -> Vec<&TestResult> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    let nested = doc
        .configurations
        .iter()
        .flat_map(|c| c.tests.iter().map(move |t| (t, Some(c.label.as_str()))));
    for (t, label) in doc.tests.iter().map(|t| (t, None)).chain(nested) {
        let config = t.config.as_deref().or(label).unwrap_or("");
        if seen.insert((config, workload_of(t), t.name.as_str())) {
            out.push(t);
        }
    }
    out
}

/// The matrix workload that produced `t` (`files:sizes=4K`, `files:sizes=4K (aged)`).
fn workload_of(t: &TestResult) -> Option<&str> {
    t.params.get(WORKLOAD_PARAM).map(String::as_str)
}

/// The name every view (CSV, history, compare, the report's warnings) gives test `t` of
/// `doc`, telling apart the tests of a matrix that share a name: a run on the aged file
/// system says so (`4KiB create (aged)`, as `iolab matrix` labels the aged runs), and where
/// two workloads have a test of that name, the workload's label comes first
/// (`files:sizes=4K: 4KiB create`, aged `files:sizes=4K (aged): 4KiB create`, as the
/// report's heat maps name them). Outside a matrix, and for a fresh run's test no other
/// workload shares, the name as it is.
pub fn test_name(doc: &ResultDoc, t: &TestResult) -> String {
    let Some(workload) = workload_of(t) else {
        return t.name.clone();
    };
    let fresh = |w: &str| aged_run_of(w).unwrap_or(w).to_string();
    let shared = all_tests(doc)
        .into_iter()
        .any(|o| o.name == t.name && workload_of(o).is_some_and(|w| fresh(w) != fresh(workload)));
    if shared {
        format!("{workload}: {}", t.name)
    } else if aged_run_of(workload).is_some() {
        aged_label(&t.name)
    } else {
        t.name.clone()
    }
}

/// The configuration a test belongs to (its own `config`, else the matrix configuration
/// that holds it).
pub fn config_of(doc: &ResultDoc, t: &TestResult) -> Option<String> {
    if let Some(c) = &t.config {
        return Some(c.clone());
    }
    doc.configurations
        .iter()
        .find(|c| c.tests.iter().any(|x| std::ptr::eq(x, t)))
        .map(|c| c.label.clone())
}

/// `name` or `name [config]`.
pub fn display_name(config: Option<&str>, name: &str) -> String {
    match config {
        Some(c) if !c.is_empty() => format!("{name} [{c}]"),
        _ => name.to_string(),
    }
}

/// The metrics of a test: its summaries, plus the saturation answer as `answer_iops` (a
/// single value: the sweep is one measurement per depth) and a sustain pass's
/// `settled_bw_bytes_per_s` (the speed of its last phase: after its last cliff, or
/// throughout without one; its `bw_bytes_per_s` averages the cache and the slow phase).
/// Does `metric` mean something for `t`? A deletion moves no data: its MB/s (bytes of the
/// deleted files per second, kept in the JSON) is not shown; its seconds and files/s are.
pub fn shown(t: &TestResult, metric: &str) -> bool {
    let deletion = t.copy.as_ref().is_some_and(|c| c.phase == "delete");
    !(deletion && metric == "bw_bytes_per_s")
}

pub fn metrics_of(t: &TestResult) -> Vec<(String, Summary)> {
    // A saturation test's `iops` summary is the answer itself: shown once, as the answer.
    let mut out: Vec<(String, Summary)> = t
        .summary
        .iter()
        .filter(|(k, s)| s.n > 0 && !(t.answer.is_some() && k.as_str() == "iops"))
        .filter(|(k, _)| shown(t, k))
        .map(|(k, s)| (k.clone(), s.clone()))
        .collect();
    if let Some(a) = &t.answer {
        out.push(("answer_iops".into(), summarize(&[a.iops])));
    }
    if let Some(bw) = settled_bw(t) {
        out.push(("settled_bw_bytes_per_s".into(), summarize(&[bw])));
    }
    out
}

/// The speed a sustain pass settled at: its settled phase's (the last, unless a short rise
/// ended the pass; the last in results from before `settled_phase`).
pub fn settled_bw(t: &TestResult) -> Option<f64> {
    let d = t.sustain.as_ref()?;
    let p = match d.settled_phase {
        Some(k) => d.phases.get(k)?,
        None => d.phases.last()?,
    };
    (p.mean_bw_bytes_per_s.is_finite() && p.mean_bw_bytes_per_s > 0.0)
        .then_some(p.mean_bw_bytes_per_s)
}

/// The headline metric of a test: the saturation answer, a sustain pass's settled MB/s,
/// MB/s for sequential block tests, IOPS for random ones, files per second for the
/// small-file tester.
pub fn primary_metric(t: &TestResult) -> Option<String> {
    if t.answer.is_some() {
        return Some("answer_iops".into());
    }
    if settled_bw(t).is_some() {
        return Some("settled_bw_bytes_per_s".into());
    }
    let sequential = t
        .settings
        .as_ref()
        .map(|s| s.rw == "read" || s.rw == "write")
        .unwrap_or(false);
    let order: &[&str] = if sequential {
        &["bw_bytes_per_s", "iops"]
    } else if t.family == "copy" {
        // A data-set copy is judged by its rate, as the matrix ranks it
        // (`analysis::matrix::headline`); a deletion, which moves no data, by files/s.
        &["bw_bytes_per_s", "files_per_s"]
    } else {
        &[
            "iops",
            "files_per_s",
            "seconds_per_portion",
            "bw_bytes_per_s",
        ]
    };
    order
        .iter()
        .filter(|m| shown(t, m))
        .find(|m| t.summary.get(**m).is_some_and(|s| s.n > 0))
        .map(|m| m.to_string())
        .or_else(|| metrics_of(t).first().map(|(k, _)| k.clone()))
}

/// Seconds per portion of one files run, from its rate and the portion size.
pub fn seconds_per_portion(t: &TestResult, files_per_s: f64) -> Option<f64> {
    let n: f64 = t.params.get("files_per_portion")?.parse().ok()?;
    (files_per_s > 0.0).then(|| n / files_per_s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A matrix document of configuration `ext4` with tests `(workload, name)`.
    fn matrix_doc(tests: &[(&str, &str)]) -> ResultDoc {
        let env = crate::model::Environment::default();
        let mut doc = ResultDoc::new("matrix", Vec::new(), env);
        let tests = tests
            .iter()
            .map(|(w, n)| TestResult {
                name: n.to_string(),
                family: "files".into(),
                config: Some("ext4".into()),
                params: [(WORKLOAD_PARAM.to_string(), w.to_string())].into(),
                ..Default::default()
            })
            .collect();
        doc.configurations
            .push(crate::model::matrix::ConfigurationResult {
                label: "ext4".into(),
                tests,
                ..Default::default()
            });
        doc
    }

    fn names(doc: &ResultDoc) -> Vec<String> {
        all_tests(doc).iter().map(|t| test_name(doc, t)).collect()
    }

    /// Two files workloads that share a test name, and `--age` (every aged run has its
    /// fresh run's names): the CSV and the history kept the first test of each (config,
    /// name) and dropped the rest (12 tests of an `--age` run gave 5 tests' rows). Every
    /// test is kept, named apart; a test listed flat and nested is still taken once.
    #[test]
    fn tests_that_share_a_name_are_all_kept_and_named_apart() {
        let (a, b) = ("files:sizes=4K", "files:sizes=4K,64K");
        let (a_aged, b_aged) = (aged_label(a), aged_label(b));
        let mut doc = matrix_doc(&[
            (a, "4KiB create"),
            (b, "4KiB create"),
            (b, "64KiB create"),
            (&a_aged, "4KiB create"),
            (&b_aged, "4KiB create"),
            (&b_aged, "64KiB create"),
        ]);
        let want = [
            "files:sizes=4K: 4KiB create",
            "files:sizes=4K,64K: 4KiB create",
            "64KiB create",
            "files:sizes=4K (aged): 4KiB create",
            "files:sizes=4K,64K (aged): 4KiB create",
            "64KiB create (aged)",
        ];
        assert_eq!(names(&doc), want);
        // The same tests flat too (as documents list them with their `config`): copies.
        doc.tests = doc.configurations[0].tests.clone();
        assert_eq!(names(&doc), want);
    }

    /// Names that collide with nothing stay as they were: an ordinary run's, a single
    /// workload's fresh runs' (the history's test names and `compare`'s matching of
    /// existing results do not change).
    #[test]
    fn names_that_collide_with_nothing_are_unchanged() {
        let doc = matrix_doc(&[
            ("run:preset=real", "RND4K Q1T1 read"),
            ("files:sizes=4K", "4KiB create"),
        ]);
        assert_eq!(names(&doc), ["RND4K Q1T1 read", "4KiB create"]);
        let mut run = ResultDoc::new("run", Vec::new(), Default::default());
        for name in ["SEQ1M Q8T1 read", "SEQ1M Q8T1 write"] {
            run.tests.push(TestResult {
                name: name.into(),
                ..Default::default()
            });
        }
        assert_eq!(names(&run), ["SEQ1M Q8T1 read", "SEQ1M Q8T1 write"]);
    }

    /// A sustain pass's `bw_bytes_per_s` averages its cache and its slow phase (tmpfs under
    /// memory pressure: 1844.01 MB/s over a pass whose phases ran at 6405.85 and then
    /// 594.19 MB/s): the report's table and the history's headline gave that average as the
    /// pass's "MB/s". The headline is the speed the pass settled at (its last phase), and
    /// the average is named as one.
    #[test]
    fn a_sustain_pass_is_headlined_by_its_settled_speed() {
        use crate::model::sustain::{SustainDetail, SustainPhase};
        let phase = |bw: f64| SustainPhase {
            mean_bw_bytes_per_s: bw,
            ..Default::default()
        };
        let mut t = TestResult {
            name: "first pass".into(),
            family: "sustain".into(),
            settings: Some(crate::model::BlockSettings {
                rw: "write".into(),
                ..Default::default()
            }),
            sustain: Some(SustainDetail {
                phases: vec![phase(6405.85e6), phase(594.19e6)],
                ..Default::default()
            }),
            ..Default::default()
        };
        t.summary
            .insert("bw_bytes_per_s".into(), summarize(&[1844.01e6]));
        t.summary.insert("iops".into(), summarize(&[1759.0]));
        assert_eq!(
            primary_metric(&t).as_deref(),
            Some("settled_bw_bytes_per_s")
        );
        let settled = |t: &TestResult| {
            metrics_of(t)
                .into_iter()
                .find(|(k, _)| k == "settled_bw_bytes_per_s")
                .map(|(_, s)| s.mean)
        };
        assert_eq!(settled(&t), Some(594.19e6));
        assert_eq!(label("settled_bw_bytes_per_s"), "settled MB/s");
        assert_eq!(label_for("sustain", "bw_bytes_per_s"), "average MB/s");
        assert_eq!(label_for("block", "bw_bytes_per_s"), "MB/s");
        // A burst that ended the pass (a phase of a few intervals after the slow one) is
        // not where it settled: the detail's settled phase is.
        let d = t.sustain.as_mut().unwrap();
        d.phases.push(phase(2000.0e6));
        d.settled_phase = Some(1);
        assert_eq!(settled(&t), Some(594.19e6));
        // A pass too short for one interval has no phase: its own figures, as before.
        t.sustain.as_mut().unwrap().phases.clear();
        assert_eq!(primary_metric(&t).as_deref(), Some("bw_bytes_per_s"));
        assert!(
            metrics_of(&t)
                .iter()
                .all(|(k, _)| k != "settled_bw_bytes_per_s")
        );
    }

    /// A deletion shows seconds and files/s, not MB/s; a copy's write phase shows MB/s.
    #[test]
    fn a_deletion_has_no_bandwidth_in_reports() {
        let test = |phase: &str| {
            let mut t = TestResult {
                family: "copy".into(),
                copy: Some(crate::model::copy::CopyTestDetail {
                    phase: phase.into(),
                    ..Default::default()
                }),
                ..Default::default()
            };
            for (k, v) in [("bw_bytes_per_s", 5e6), ("files_per_s", 900.0)] {
                t.summary.insert(k.into(), crate::stats::summarize(&[v, v]));
            }
            t
        };
        let keys =
            |t: &TestResult| -> Vec<String> { metrics_of(t).into_iter().map(|(k, _)| k).collect() };
        let delete = test("delete");
        assert_eq!(keys(&delete), ["files_per_s"]);
        assert_eq!(primary_metric(&delete).as_deref(), Some("files_per_s"));
        assert!(keys(&test("write")).contains(&"bw_bytes_per_s".to_string()));
        // The copy phases' headline is MB/s (a one-file ISO copy in files/s said nothing).
        for phase in ["write", "read", "copy"] {
            assert_eq!(
                primary_metric(&test(phase)).as_deref(),
                Some("bw_bytes_per_s"),
                "{phase}"
            );
        }
    }

    /// A time metric's cells carry their unit (`1.71 ms`), so its header must not say `ns`
    /// (the copy table said `close ns` over `1.71 ms`).
    #[test]
    fn time_metrics_are_not_labelled_in_nanoseconds() {
        for (key, want) in [
            ("close_ns", "time to last close"),
            ("syncfs_ns", "syncfs time"),
            ("elapsed_ns", "elapsed time"),
            ("lat_p999_ns", "p999 latency"),
            ("lat_mean_ns", "mean latency"),
            ("write_lat_mean_ns", "writes' mean latency"),
        ] {
            assert_eq!(label(key), want, "{key}");
        }
        assert_eq!(fmt_value("close_ns", 1_710_000.0), "1.71 ms");
    }

    /// Two runs far apart: the t-interval of IOPS reaches below zero (QA saw `24,264 ±
    /// 47,787`); the text says it is too wide instead of implying negative IOPS.
    #[test]
    fn an_interval_below_zero_is_too_wide_to_print() {
        let s = summarize(&[3_000.0, 45_528.0]);
        assert!(s.ci95_low < 0.0, "{s:?}");
        assert_eq!(fmt_mean_ci("iops", &s), "24,264 ± too wide");
        assert_eq!(
            fmt_mean_ci("lat_mean_ns", &summarize(&[1e3, 9e4])),
            "45.5 µs ± too wide"
        );
        let narrow = summarize(&[24_000.0, 24_500.0]);
        assert!(fmt_mean_ci("iops", &narrow).starts_with("24,250 ± "));
        assert_eq!(fmt_mean_ci("iops", &summarize(&[24_000.0])), "24,000");
    }

    /// A files run on a fast device showed every phase as `0.000` (terminal) and
    /// `0.0000 s ± 0.0000 s` (report): seconds keep two significant digits.
    #[test]
    fn small_seconds_keep_two_significant_digits() {
        for (secs, want) in [
            (1.4789, "1.479"),
            (0.1, "0.100"),
            (0.036, "0.036"),
            (0.0015, "0.0015"),
            (0.000_466_659_5, "0.00047"),
            (0.000_049_87, "0.000050"),
            (0.0, "0.000"),
        ] {
            assert_eq!(fmt_seconds(secs), want, "{secs}");
        }
        assert_eq!(fmt_value("seconds_per_portion", 0.000_466_6), "0.00047 s");
        let s = summarize(&[0.000_466_6, 0.000_410_9, 0.000_43]);
        assert_eq!(
            fmt_mean_ci("seconds_per_portion", &s),
            "0.00044 s ± 0.000070 s"
        );
    }

    #[test]
    fn directions_follow_the_contract() {
        for m in [
            "iops",
            "bw_bytes_per_s",
            "files_per_s",
            "answer_iops",
            "read_iops",
            "write_bw_bytes_per_s",
        ] {
            assert_eq!(direction(m), Better::Higher, "{m}");
        }
        for m in [
            "lat_mean_ns",
            "write_lat_mean_ns",
            "seconds_per_portion",
            "elapsed_s",
            "copy_seconds",
        ] {
            assert_eq!(direction(m), Better::Lower, "{m}");
        }
        // A distributed test's summaries: lower is better, in their own units (the report
        // showed "lat mean ns host max 13966508.3573 ± 9882529.3147", and compare took a
        // wider straggler spread for an improvement).
        for m in ["lat_mean_ns_host_max", "straggler_spread_pct"] {
            assert_eq!(direction(m), Better::Lower, "{m}");
        }
        assert_eq!(label("lat_mean_ns_host_max"), "worst host's mean latency");
        assert_eq!(fmt_value("lat_mean_ns_host_max", 13_966_508.4), "13.97 ms");
        assert_eq!(label("straggler_spread_pct"), "straggler spread");
        assert_eq!(fmt_value("straggler_spread_pct", 34.427), "34.4 %");
        assert_eq!(label("read_iops"), "reads' IOPS");
        assert_eq!(label("write_bw_bytes_per_s"), "writes' MB/s");
        assert_eq!(label("read_lat_mean_ns"), "reads' mean latency");
    }
}

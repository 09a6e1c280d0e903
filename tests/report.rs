//! `iolab compare` and `iolab report` end to end on synthetic result files
//! (`tests/fixtures/`, written by `tests/fixtures/generate.py` with known differences), plus
//! the statistics they rest on, against published values.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{iolab, s};

use iolab::report::compare::{Verdict, compare};
use iolab::report::load::load_inputs;
use iolab::stats::compare::{Method, welch};
use iolab::stats::summarize;
use iolab::stats::summary::modified_z_outliers;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

const ALL: [&str; 5] = [
    "run-a.json",
    "run-b.json",
    "files.json",
    "matrix.json",
    "saturate.json",
];

fn all_fixtures() -> Vec<PathBuf> {
    ALL.iter().map(|n| fixture(n)).collect()
}

// ---- statistics against published values -------------------------------------------

#[test]
fn textbook_t_interval() {
    // R: t.test(sleep$extra[1:10]) -> mean 0.75, 95 % CI -0.5297804 .. 2.0297804.
    let v = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0];
    let s = summarize(&v);
    assert!((s.mean - 0.75).abs() < 1e-12);
    assert!((s.ci95_low + 0.5297804).abs() < 1e-6, "{}", s.ci95_low);
    assert!((s.ci95_high - 2.0297804).abs() < 1e-6, "{}", s.ci95_high);
}

#[test]
fn welch_example_with_known_df_and_p() {
    // R: t.test(extra ~ group, data = sleep): t = -1.8608, df = 17.776, p = 0.07939.
    let g1 = summarize(&[0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]);
    let g2 = summarize(&[1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]);
    let w = welch(&g2, &g1).unwrap();
    assert!((w.t + 1.8608).abs() < 1e-4);
    assert!((w.df - 17.776).abs() < 1e-3);
    assert!((w.p - 0.07939).abs() < 1e-5);
    assert!(
        welch(&g1, &summarize(&[1.0])).is_none(),
        "needs 2 runs a side"
    );
}

#[test]
fn mad_outliers_on_fixed_vectors() {
    assert_eq!(modified_z_outliers(&[1.0, 2.0, 3.0, 4.0, 100.0]), vec![4]);
    assert_eq!(
        modified_z_outliers(&[2.0, 2.1, 1.9, 2.0, -5.0, 2.05, 1.95]),
        vec![4]
    );
    // MAD = 0: no scale, so nothing can be called an outlier.
    assert!(modified_z_outliers(&[10.0, 10.0, 10.0, 10.0, 11.0]).is_empty());
    // |M| = 0.6745 * 5 / 1 = 3.37 stays under 3.5; 6 gives 4.05 over it.
    assert!(modified_z_outliers(&[0.0, 1.0, -1.0, 0.0, 5.0]).is_empty());
    assert_eq!(modified_z_outliers(&[0.0, 1.0, -1.0, 0.0, 6.0]), vec![4]);
}

// ---- compare ---------------------------------------------------------------------

#[test]
fn compare_verdicts_on_known_differences() {
    let inputs = load_inputs(&[fixture("run-a.json"), fixture("run-b.json")]).unwrap();
    let c = compare(&inputs, false).unwrap();
    let p = &c.pairings[0];
    let primary = |name: &str| {
        p.rows
            .iter()
            .find(|r| r.test == name && r.primary)
            .unwrap_or_else(|| panic!("no row for {name}"))
    };
    let seq_read = primary("SEQ1M Q8T1 read");
    assert_eq!(seq_read.metric, "bw_bytes_per_s");
    assert_eq!(seq_read.verdict, Verdict::Faster);
    assert_eq!(seq_read.method, Method::Welch);
    assert!((seq_read.speedup.value - 1.37).abs() < 1e-9);
    assert!((seq_read.change_pct - 37.0).abs() < 1e-9);
    let seq_write = primary("SEQ1M Q8T1 write");
    assert_eq!(seq_write.verdict, Verdict::NoSignificantDifference);
    assert!(seq_write.p_value.unwrap() > 0.05);
    let rnd_read = primary("RND4K Q32T1 read");
    assert_eq!(rnd_read.metric, "iops");
    assert_eq!(rnd_read.verdict, Verdict::Slower);
    assert!((rnd_read.change_pct + 20.0).abs() < 1e-9);
    // One run in B: a one-run t-test (B's run against A's spread), and it says so.
    let rnd_write = primary("RND4K Q32T1 write");
    assert_eq!(rnd_write.method, Method::OneRun);
    assert!(rnd_write.p_value.unwrap() < 0.05);
    assert_eq!(rnd_write.df, Some(2.0));
    assert_eq!(rnd_write.verdict, Verdict::Faster);
    // Lower latency is better: B's read latency went down, so "faster".
    let lat = p
        .rows
        .iter()
        .find(|r| r.test == "SEQ1M Q8T1 read" && r.metric == "lat_mean_ns")
        .unwrap();
    assert!(!lat.higher_is_better);
    assert!(lat.change_pct < 0.0);
    assert_eq!(lat.verdict, Verdict::Faster);
    assert_eq!(p.only_in_other, vec!["RND4K Q1T1 read".to_string()]);
}

#[test]
fn compare_cli_prints_verdicts_and_relative_speed() {
    let out = iolab(&[
        "compare",
        s(&fixture("run-a.json")),
        s(&fixture("run-b.json")),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("B is 1.37 ± 0.02× faster than A on SEQ1M Q8T1 read"),
        "{text}"
    );
    assert!(text.contains("B is 1.25 ± 0.03× slower than A on RND4K Q32T1 read"));
    assert!(text.contains("no significant difference (Welch, p = "));
    assert!(text.contains("faster (one-run t-test, p = "), "{text}");
    assert!(text.contains("only in B: RND4K Q1T1 read"));
    // A ratio that rounds to 1.00 is "as fast as", not "1.00× faster".
    let same = iolab(&[
        "compare",
        s(&fixture("run-a.json")),
        s(&fixture("run-a.json")),
    ]);
    let text = String::from_utf8_lossy(&same.stdout);
    assert!(
        text.contains("B is as fast as A (1.00 ± 0.02×) on SEQ1M Q8T1 read"),
        "{text}"
    );
    assert!(!text.contains("1.00 ± 0.02× faster"), "{text}");
}

/// The Change column in one form: the change as `N %`, then its interval, half-width or
/// "too wide" (it mixed "+1.2 % ± too wide" with "+37.0 ± 2.3 %"). B's SEQ1M Q8T1 write
/// has its MB/s runs far apart (the interval of other / baseline reaches zero).
#[test]
fn compare_change_column_has_one_form() {
    let dir = tempfile::tempdir().unwrap();
    let b = edited(dir.path(), "run-b.json", "b.json", |v| {
        for t in v["tests"].as_array_mut().unwrap() {
            if t["name"] == "SEQ1M Q8T1 write" {
                let bw = &mut t["summary"]["bw_bytes_per_s"];
                bw["stddev"] = serde_json::json!(bw["mean"].as_f64().unwrap() * 0.9);
            }
        }
    });
    let out = iolab(&["compare", s(&fixture("run-a.json")), s(&b)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let changes: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with('│') && !l.starts_with("│ Test"))
        .map(|l| l.split(['│', '┆']).map(str::trim).nth(5).unwrap())
        .collect();
    assert!(changes.len() > 4, "{text}");
    assert!(changes.contains(&"+37.0 % ± 2.3 %"), "{changes:?}");
    assert!(changes.contains(&"+1.2 % ± too wide"), "{changes:?}");
    for c in &changes {
        let (change, interval) = c
            .split_once(" % ± ")
            .unwrap_or_else(|| panic!("{c:?} in {changes:?}"));
        assert!(change.parse::<f64>().is_ok(), "{c:?}");
        let half = interval.strip_suffix(" %").map(str::parse::<f64>);
        assert!(
            interval == "too wide" || matches!(half, Some(Ok(_))),
            "{c:?}"
        );
    }
}

#[test]
fn compare_json_and_matrix_and_saturate() {
    // A file against itself: every test in common, nothing significant.
    for f in ["matrix.json", "saturate.json", "files.json"] {
        let out = iolab(&["compare", "--json", s(&fixture(f)), s(&fixture(f))]);
        assert!(out.status.success(), "{f}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let rows = v["pairings"][0]["rows"].as_array().unwrap();
        assert!(!rows.is_empty(), "{f}");
        for r in rows {
            let verdict = r["verdict"].as_str().unwrap();
            assert!(
                verdict == "no-significant-difference" || verdict == "untested",
                "{f}: {r}"
            );
        }
        if f == "matrix.json" {
            // 3 configurations x (3 files tests + 1 block test), matched per configuration.
            let primaries = rows.iter().filter(|r| r["primary"] == true).count();
            assert_eq!(primaries, 12);
            assert!(rows.iter().any(|r| r["config"] == "xfs 4KiB noatime"));
        }
        if f == "saturate.json" {
            assert_eq!(rows[0]["metric"], "answer_iops");
            assert_eq!(rows[0]["method"], "none");
        }
        if f == "files.json" {
            assert!(rows.iter().any(|r| r["metric"] == "seconds_per_portion"
                && r["higher_is_better"] == false));
        }
    }
}

/// `fixture` with `edit` applied, written to `dir/name`.
fn edited(
    dir: &Path,
    fixture_name: &str,
    name: &str,
    edit: impl Fn(&mut serde_json::Value),
) -> PathBuf {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture(fixture_name)).unwrap()).unwrap();
    edit(&mut v);
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_string(&v).unwrap()).unwrap();
    p
}

/// Tests matched by name but measured with other settings (`--files-per-portion`, a
/// matrix's file system made with other blocks on another image size) are flagged per
/// test, in the table and in the JSON; the same result twice is flagged once.
#[test]
fn compare_warns_when_settings_differ_and_when_a_result_is_given_twice() {
    let dir = tempfile::tempdir().unwrap();
    let fewer = edited(dir.path(), "files.json", "files-10.json", |v| {
        for t in v["tests"].as_array_mut().unwrap() {
            t["params"]["files_per_portion"] = "10".into();
        }
    });
    let out = iolab(&["compare", s(&fixture("files.json")), s(&fewer)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("warning [settings-differ] 4 tests (1 create, 1 read, 4K create, 4K read): files_per_portion 1000 vs 10 (A vs B): measured with different settings"),
        "{text}"
    );
    assert!(text.contains("│ 4K read (settings differ)"), "{text}");
    // One finding about four tests: one line naming them.
    assert_eq!(
        text.matches("warning [settings-differ]").count(),
        1,
        "{text}"
    );
    assert!(!text.contains("same-result"), "{text}");
    let out = iolab(&["compare", "--json", s(&fixture("files.json")), s(&fewer)]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let p = &v["pairings"][0];
    assert_eq!(p["settings_differ"].as_array().unwrap().len(), 4);
    assert_eq!(
        p["settings_differ"][0]["settings"],
        serde_json::json!([{"setting": "files_per_portion", "baseline": "1000", "other": "10"}])
    );
    assert_eq!(p["warnings"][0]["code"], "settings-differ");
    assert_eq!(p["warnings"][0]["test"], "1 create");
    assert!(
        p["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["settings_differ"] == true)
    );
    assert_eq!(v["warnings"], serde_json::json!([]));
    // The report's comparison says it too, on the terminal's one line (it listed each test).
    let md = dir.path().join("r.md");
    let out = iolab(&["report", s(&fixture("files.json")), s(&fewer), "-o", s(&md)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = std::fs::read_to_string(md).unwrap();
    assert!(
        md.contains(
            "- `settings-differ` 4 tests (1 create, 1 read, 4K create, 4K read): files_per_portion 1000 vs 10 (A vs B)"
        ),
        "{md}"
    );
    assert_eq!(md.matches("`settings-differ`").count(), 1, "{md}");

    // A matrix whose file systems were made on 256 MiB images, not 1 GiB, one of them with
    // 1 KiB blocks read back: the same configuration labels by name.
    let small = edited(dir.path(), "matrix.json", "matrix-small.json", |v| {
        for c in v["configurations"].as_array_mut().unwrap() {
            c["size_bytes"] = (256u64 << 20).into();
            if c["label"] == "ext4 4KiB noatime" {
                c["cluster_bytes_actual"] = 1024.into();
            }
        }
    });
    let base = edited(dir.path(), "matrix.json", "matrix-big.json", |v| {
        for c in v["configurations"].as_array_mut().unwrap() {
            c["size_bytes"] = (1u64 << 30).into();
        }
    });
    let out = iolab(&["compare", s(&base), s(&small)]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("[ext4 4KiB noatime]): configuration.cluster_bytes_actual 4KiB vs 1KiB, configuration.size_bytes 1GiB vs 256MiB (A vs B)"),
        "{text}"
    );
    assert!(
        text.contains("[xfs 4KiB noatime]): configuration.size_bytes 1GiB vs 256MiB (A vs B)"),
        "{text}"
    );

    // The same file twice, and a copy of it: one result, said once per repeat.
    let copy = dir.path().join("copy.json");
    std::fs::copy(fixture("run-a.json"), &copy).unwrap();
    let a = fixture("run-a.json");
    let out = iolab(&["compare", s(&a), s(&a), s(&copy)]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "warning [same-result]: B is the same result as A ({} given twice)",
            a.display()
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "warning [same-result]: C is the same result as A ({}, a copy)",
            copy.display()
        )),
        "{text}"
    );
    assert!(!text.contains("settings differ"), "{text}");
    let out = iolab(&["compare", "--json", s(&a), s(&a)]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["warnings"][0]["code"], "same-result");
    // Two different results with the same settings: no warning.
    let out = iolab(&["compare", s(&a), s(&fixture("run-b.json"))]);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("warning ["));
}

#[test]
fn compare_warns_about_an_interrupted_result() {
    // B was stopped by a signal in its first test, after 2 of its runs: the comparison
    // must say so, not present its figures as a whole result.
    let dir = tempfile::tempdir().unwrap();
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture("run-b.json")).unwrap()).unwrap();
    v["status"] = "interrupted".into();
    v["error"] = "interrupted by SIGINT".into();
    v["tests"][0]["error"] = "interrupted by SIGINT".into();
    let name = v["tests"][0]["name"].as_str().unwrap().to_string();
    let runs = v["tests"][0]["runs"].as_array().unwrap().len();
    let partial = dir.path().join("partial.json");
    std::fs::write(&partial, serde_json::to_vec(&v).unwrap()).unwrap();
    let a = fixture("run-a.json");
    let out = iolab(&["compare", s(&a), s(&partial)]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "warning [partial-result]: B ({}) is interrupted (interrupted by SIGINT); {name} interrupted after {runs} runs",
            partial.display()
        )),
        "{text}"
    );
    let out = iolab(&["compare", "--json", s(&partial), s(&a)]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["warnings"][0]["code"], "partial-result");
    assert!(
        v["warnings"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("A ("),
        "{v}"
    );
    // Two complete results: no such warning.
    let out = iolab(&["compare", s(&a), s(&fixture("run-b.json"))]);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("partial-result"));
}

/// `iolab age` and `iolab slack` results have no runs or rates: the report showed only
/// their environment (age: a row `age desktop | - | - | 0 | -`), none of what they found.
#[test]
fn report_shows_what_age_and_slack_found() {
    use iolab::model::age::{AgePoint, AgeTestDetail};
    use iolab::model::{ResultDoc, TestResult};
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let tree = dir.path().join("tree");
    std::fs::create_dir_all(tree.join("sub")).unwrap();
    std::fs::write(tree.join("a"), vec![1u8; 5000]).unwrap();
    std::fs::write(tree.join("sub/b"), vec![2u8; 100]).unwrap();
    let out = iolab(&["--no-history", "slack", s(&tree), "--output", s(&out_dir)]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");

    let mut doc: ResultDoc =
        serde_json::from_slice(&std::fs::read(fixture("run-a.json")).unwrap()).unwrap();
    doc.command = "age".into();
    doc.warnings.clear();
    doc.tests = vec![TestResult {
        name: "age desktop".into(),
        family: "age".into(),
        age: Some(AgeTestDetail {
            profile: "desktop".into(),
            seed: 1,
            dir: "/mnt/t/iolab-aged-1".into(),
            fs_size_bytes: 100 << 20,
            bytes_written: 50 << 20,
            files_created: 1234,
            files_left: 1000,
            fullness: 0.5,
            progress: vec![AgePoint {
                bytes_written: 50 << 20,
                fullness: 0.5,
                files: 1000,
                layout_score: Some(0.875),
            }],
            ..Default::default()
        }),
        ..Default::default()
    }];
    std::fs::write(out_dir.join("age.json"), serde_json::to_vec(&doc).unwrap()).unwrap();

    let md = dir.path().join("r.md");
    let out = iolab(&["report", s(&out_dir), "-o", s(&md)]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = std::fs::read_to_string(&md).unwrap();
    for want in [
        "### Aging",
        "Aged /mnt/t/iolab-aged-1 with profile desktop (seed 1): 50.0 MiB written (0.5x the file system), 50.0 % full.",
        "| written | full | files | layout score |",
        "| 50.0 MiB | 50.0 % | 1,000 | 0.875 |",
        "files: 1,234 created",
        "### Cluster slack",
        "| Unit | Allocated | Slack | Slack % |",
        "best for space ",
    ] {
        assert!(text.contains(want), "{want:?} missing:\n{text}");
    }
    assert!(!text.contains("| age desktop |"), "{text}");
    let html = dir.path().join("r.html");
    let out = iolab(&["report", s(&out_dir), "-o", s(&html)]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(
        text.contains("Cluster slack") && text.contains("Aging"),
        "{text}"
    );

    // A CSV holds measured runs, which neither has: refused, nothing written (it was the
    // header alone, "report: r.csv (2 result files)"); beside a run result, each is named.
    let csv = dir.path().join("r.csv");
    let out = iolab(&["report", s(&out_dir), "-o", s(&csv)]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nothing to write in a CSV"), "{err}");
    assert!(
        err.contains("an `iolab slack` result has no measured runs for CSV rows")
            && err.contains("an `iolab age` result has no measured runs"),
        "{err}"
    );
    assert!(!csv.exists());
    let out = iolab(&[
        "report",
        s(&out_dir),
        s(&fixture("run-a.json")),
        "-o",
        s(&csv),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("iolab: note: no rows from ") && err.contains("an `iolab slack` result"),
        "{err}"
    );
    assert!(std::fs::read_to_string(&csv).unwrap().lines().count() > 1);

    // compare has nothing to compare in them, and says so rather than "no test measured in
    // both (a test stopped or failed before its first run has no figures)".
    let slack = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("slack-")
        })
        .unwrap();
    let age = out_dir.join("age.json");
    for (file, what) in [
        (&slack, "an `iolab slack` result"),
        (&age, "an `iolab age` result"),
    ] {
        let out = iolab(&["compare", s(file), s(file)]);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(what), "{err}");
        assert!(err.contains("has no measured figures to compare"), "{err}");
        assert!(!err.contains("failed"), "{err}");
    }
}

/// saturate's mixed sweep records its read group as `settings` and both in `groups`: the
/// CSV's `rw` said `randread` on the rows of a 50/50 read+write sweep.
#[test]
fn csv_rw_of_a_mixed_sweep_names_both_groups() {
    let dir = tempfile::tempdir().unwrap();
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture("saturate.json")).unwrap()).unwrap();
    let group = |rw: &str| {
        serde_json::json!({"rw": rw, "bs_bytes": 4096, "iodepth": 0, "jobs": 1, "direct": true,
            "engine": "uring", "size_bytes": 4194304, "duration_s": 0.1, "ramp_s": 0.0,
            "region": "split", "pattern": "random"})
    };
    let t = &mut v["tests"][0];
    t["direction"] = "mixed".into();
    t["settings"] = group("randread");
    t["groups"] = serde_json::json!([group("randread"), group("randwrite")]);
    let name = t["name"].as_str().unwrap().to_string();
    let path = dir.path().join("mixed.json");
    std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    let csv = dir.path().join("r.csv");
    let out = iolab(&["report", s(&path), "-o", s(&csv)]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(&format!(",{name},")))
        .collect();
    assert!(!rows.is_empty(), "{text}");
    for r in rows {
        assert!(r.contains(",mixed,randread+randwrite,4096,"), "{r}");
    }
}

/// An interrupted result's CSV rows say so in their column `status` (the last before the
/// matrix's appended ones), as the history's CSV does; they read like a complete run's.
/// `iolab report -o r.csv` of the result `v` (saved in `dir`): the CSV's text.
fn csv_report_of(dir: &tempfile::TempDir, v: &serde_json::Value) -> String {
    let path = dir.path().join("result.json");
    std::fs::write(&path, serde_json::to_vec(v).unwrap()).unwrap();
    let csv = dir.path().join("r.csv");
    let out = iolab(&["report", s(&path), "-o", s(&csv)]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    std::fs::read_to_string(&csv).unwrap()
}

#[test]
fn csv_rows_carry_the_result_s_status() {
    let dir = tempfile::tempdir().unwrap();
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture("saturate.json")).unwrap()).unwrap();
    v["status"] = "interrupted".into();
    let text = csv_report_of(&dir, &v);
    let mut lines = text.lines();
    let header = csv_fields(lines.next().unwrap());
    let status = header.iter().position(|h| h == "status").unwrap();
    assert_eq!(status, 42, "{text}");
    let rows: Vec<Vec<String>> = lines.map(csv_fields).collect();
    assert!(!rows.is_empty(), "{text}");
    for r in rows {
        assert_eq!(r[status], "interrupted", "{r:?}");
    }
}

/// The matrix's CSV left out what its terminal table shows: a skipped configuration (no
/// row at all) and a workload whose writes the page cache absorbed (listed apart, "not
/// ranked: cache-absorbed"), nor a workload that failed before its first test, nor why a
/// test's workload failed. Appended columns carry them; the older columns keep their places.
#[test]
fn csv_of_a_matrix_has_skipped_configurations_and_the_cache_absorbed_flag() {
    let dir = tempfile::tempdir().unwrap();
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture("matrix.json")).unwrap()).unwrap();
    let xfs = &mut v["configurations"][2];
    assert_eq!(xfs["label"], "xfs 4KiB noatime");
    xfs["workloads"] = serde_json::json!([{
        "workload": "run:preset=real",
        "status": "ok",
        "tests": ["RND4K Q1T1 read"],
        "cache_absorbed": ["RND4K Q1T1 read"],
    }]);
    xfs["tests"][3]["params"] = serde_json::json!({"matrix_workload": "run:preset=real"});
    // A workload that failed before its first test, and one that failed after some.
    let ext4 = &mut v["configurations"][0];
    ext4["workloads"] = serde_json::json!([
        {"workload": "copy:dataset=cd-iso", "status": "failed", "error": "no space left"},
        {"workload": "run:preset=real", "status": "failed", "error": "EIO",
         "tests": ["RND4K Q1T1 read"]},
    ]);
    ext4["tests"][3]["params"] = serde_json::json!({"matrix_workload": "run:preset=real"});
    let text = csv_report_of(&dir, &v);
    let mut lines = text.lines();
    let header = csv_fields(lines.next().unwrap());
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    // Appended: the columns before them are where they were.
    assert_eq!(col("status"), 42);
    assert!(col("config_status") > col("status") && col("cache_absorbed") > col("status"));
    let rows: Vec<Vec<String>> = lines.map(csv_fields).collect();
    assert!(rows.iter().all(|r| r.len() == header.len()), "{text}");
    // The one row whose `column` is `value`.
    let only_row = |column: &str, value: &str| -> &Vec<String> {
        let found: Vec<_> = rows.iter().filter(|r| r[col(column)] == value).collect();
        assert_eq!(found.len(), 1, "{column} = {value}: {text}");
        found[0]
    };
    let skipped = only_row("config", "btrfs 4KiB noatime");
    assert_eq!(skipped[col("config_status")], "skipped");
    assert_eq!(skipped[col("config_reason")], "mkfs.btrfs: image too small");
    assert!(skipped[col("test")].is_empty() && skipped[col("iops")].is_empty());
    let failed = only_row("config_status", "failed");
    assert_eq!(failed[col("config")], "ext4 1KiB noatime");
    assert_eq!(
        failed[col("config_reason")],
        "copy:dataset=cd-iso: no space left"
    );
    assert!(failed[col("test")].is_empty());
    let eio = |r: &Vec<String>| r[col("config_reason")] == "EIO";
    assert_eq!(rows.iter().filter(|r| eio(r)).count(), 3, "{text}");
    for r in rows
        .iter()
        .filter(|r| r[col("config")] != "btrfs 4KiB noatime" && *r != failed)
    {
        assert_eq!(r[col("config_status")], "ok", "{r:?}");
        let ext4_read =
            r[col("config")] == "ext4 1KiB noatime" && r[col("test")] == "RND4K Q1T1 read";
        assert_eq!(eio(r), ext4_read, "{r:?}");
        let absorbed =
            r[col("config")] == "xfs 4KiB noatime" && r[col("test")] == "RND4K Q1T1 read";
        assert_eq!(r[col("cache_absorbed")] == "yes", absorbed, "{r:?}");
    }
}

/// A matrix whose tests share names: two files workloads with a `4K create` each, and
/// `--age` (every aged run has its fresh run's names). The CSV kept the first test of each
/// (configuration, name) and dropped the others (an `--age` run of 12 tests gave 5 tests'
/// rows), and `compare` matched only those. Every test has its rows, named apart where the
/// names collide, and compare matches each with its own.
#[test]
fn tests_that_share_a_name_in_a_matrix_are_all_reported() {
    let dir = tempfile::tempdir().unwrap();
    let (files, small, run) = ("files:sizes=1,4K,64K", "files:sizes=4K", "run:preset=real");
    let path = edited(dir.path(), "matrix.json", "shared.json", |v| {
        for c in v["configurations"].as_array_mut().unwrap() {
            let tests = c["tests"].as_array_mut().unwrap();
            let Some(four_k) = tests.iter().find(|t| t["name"] == "4K create").cloned() else {
                continue;
            };
            for t in tests.iter_mut() {
                let w = if t["family"] == "files" { files } else { run };
                t["params"]["matrix_workload"] = w.into();
            }
            let mut other = four_k;
            other["params"]["matrix_workload"] = small.into();
            tests.push(other);
            let aged: Vec<serde_json::Value> = tests
                .iter()
                .map(|t| {
                    let mut a = t.clone();
                    let w = a["params"]["matrix_workload"].as_str().unwrap().to_string();
                    a["params"]["matrix_workload"] = format!("{w} (aged)").into();
                    a
                })
                .collect();
            tests.extend(aged);
        }
    });
    let csv = dir.path().join("r.csv");
    let out = iolab(&["report", s(&path), "-o", s(&csv)]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header = csv_fields(lines.next().unwrap());
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let mut rows: BTreeMap<(String, String), usize> = BTreeMap::new();
    for r in lines.map(csv_fields) {
        if r[col("config")] == "ext4 4KiB noatime" {
            *rows
                .entry((r[col("test")].clone(), r[col("run")].clone()))
                .or_default() += 1;
        }
    }
    let want = [
        "1 create",
        "1 create (aged)",
        "64K create",
        "64K create (aged)",
        "RND4K Q1T1 read",
        "RND4K Q1T1 read (aged)",
        "files:sizes=1,4K,64K (aged): 4K create",
        "files:sizes=1,4K,64K: 4K create",
        "files:sizes=4K (aged): 4K create",
        "files:sizes=4K: 4K create",
    ];
    let tests: std::collections::BTreeSet<&str> = rows.keys().map(|(t, _)| t.as_str()).collect();
    assert_eq!(tests.into_iter().collect::<Vec<_>>(), want, "{text}");
    // Each test's three runs, once each.
    assert_eq!(rows.len(), want.len() * 3, "{text}");
    assert!(rows.values().all(|&n| n == 1), "{rows:?}");

    let out = iolab(&["compare", "--json", s(&path), s(&path)]);
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let matched: std::collections::BTreeSet<&str> = v["pairings"][0]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["config"] == "ext4 4KiB noatime" && r["primary"] == true)
        .map(|r| r["test"].as_str().unwrap())
        .collect();
    assert_eq!(matched.into_iter().collect::<Vec<_>>(), want);
}

/// `iolab trace run` prints a table of every operation with its latency percentiles; the
/// report showed only the test's totals.
#[test]
fn report_shows_a_trace_tests_operations() {
    let dir = common::tempdir();
    let out_dir = dir.path().join("out");
    let out = iolab(&[
        "--no-history",
        "trace",
        "run",
        "office",
        "--target",
        s(dir.path()),
        "--scale",
        "0.001",
        "--repeat",
        "1",
        "--output",
        s(&out_dir),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let md = dir.path().join("r.md");
    let out = iolab(&["report", s(&out_dir), "-o", s(&md)]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(
        text.contains("#### office: operations (the median run by MB/s)")
            && text.contains("| op | count | bytes | p50 | p99 | p99.9 | max |")
            && text.contains("| open | "),
        "{text}"
    );
}

/// A sweep over several streams (saturate's mixed sweep: reads and writes) records each
/// point's latency over all streams and of the worst; the report's curve table showed one
/// of them, unnamed, where the terminal shows `all / worst`.
#[test]
fn saturation_table_names_all_and_worst_stream_latency() {
    let dir = tempfile::tempdir().unwrap();
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture("saturate.json")).unwrap()).unwrap();
    for p in v["tests"][0]["curve"].as_array_mut().unwrap() {
        let m = p["lat_mean_ns"].as_f64().unwrap();
        p["lat_over_streams_mean"] =
            serde_json::json!({"mean_ns": m * 0.5, "p99_ns": 1000.0, "p999_ns": 2000.0});
        p["lat_over_streams_max"] =
            serde_json::json!({"mean_ns": m, "p99_ns": 3000.0, "p999_ns": 4000.0});
    }
    let path = dir.path().join("mixed.json");
    std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    let md = dir.path().join("r.md");
    let out = iolab(&["report", s(&path), "-o", s(&md)]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(
        text.contains("| depth | IOPS | MB/s | mean latency (all / worst) | p99 (all / worst) | p99.9 (all / worst) |"),
        "{text}"
    );
    assert!(
        text.contains("| 55.0 µs / 110.0 µs | 1.0 µs / 3.0 µs | 2.0 µs / 4.0 µs |"),
        "{text}"
    );
}

#[test]
fn compare_takes_a_directory_and_needs_two_results() {
    let dir = tempfile::tempdir().unwrap();
    for f in ["run-a.json", "run-b.json"] {
        std::fs::copy(fixture(f), dir.path().join(f)).unwrap();
    }
    let out = iolab(&["compare", s(dir.path())]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("B against A (baseline)"));
    let out = iolab(&["compare", s(&fixture("run-a.json"))]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("at least two result files"));
}

#[test]
fn compare_without_common_tests_says_so() {
    let out = iolab(&[
        "compare",
        s(&fixture("run-a.json")),
        s(&fixture("files.json")),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no test in common"), "{err}");
    assert!(out.stdout.is_empty());
}

/// Two results stopped before their first run: they share the test, without figures. The
/// error said "A has: no tests; B has: no tests".
#[test]
fn compare_of_results_without_runs_says_the_tests_have_none() {
    let dir = tempfile::tempdir().unwrap();
    let none = |v: &mut serde_json::Value| {
        v["status"] = "interrupted".into();
        v["tests"] = serde_json::json!([v["tests"][0].clone()]);
        v["tests"][0]["runs"] = serde_json::json!([]);
        v["tests"][0]["summary"] = serde_json::json!({});
        v["tests"][0]["error"] = "interrupted by SIGINT".into();
    };
    let a = edited(dir.path(), "run-a.json", "a.json", none);
    let b = edited(dir.path(), "run-b.json", "b.json", none);
    let out = iolab(&["compare", s(&a), s(&b)]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no test measured in both"), "{err}");
    assert!(err.contains("SEQ1M Q8T1 read (0 runs)"), "{err}");
    assert!(!err.contains("no tests"), "{err}");
}

/// The console's compare of a finished suite with one stopped in its second test: they
/// share SEQ1M Q8T1 read only by name, and only B measured it; the error listed each side's
/// other tests and left the shared one out of both ("A has: RND4K Q32T1 read, ...").
#[test]
fn compare_lists_a_shared_test_without_figures_on_one_side() {
    let dir = tempfile::tempdir().unwrap();
    let a = edited(dir.path(), "run-a.json", "a.json", |v| {
        // A: the first test stopped before its first run, the others measured.
        v["status"] = "interrupted".into();
        v["tests"][0]["runs"] = serde_json::json!([]);
        v["tests"][0]["summary"] = serde_json::json!({});
    });
    let b = edited(dir.path(), "run-b.json", "b.json", |v| {
        // B: the first test only.
        v["tests"] = serde_json::json!([v["tests"][0].clone()]);
    });
    let out = iolab(&["compare", s(&a), s(&b)]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no test measured in both"), "{err}");
    assert!(err.contains("SEQ1M Q8T1 read (0 runs)"), "{err}");
}

/// A saturate sweep's figures are its answer, not runs: comparing a finished sweep with one
/// interrupted before its answer (3 depths measured) listed both as "(0 runs)", as if
/// neither had measured anything.
#[test]
fn compare_of_a_sweep_without_its_answer_says_what_each_side_has() {
    let dir = tempfile::tempdir().unwrap();
    let a = fixture("saturate.json");
    let b = edited(dir.path(), "saturate.json", "b.json", |v| {
        v["status"] = "interrupted".into();
        let t = &mut v["tests"][0];
        t.as_object_mut().unwrap().remove("answer");
        t["summary"] = serde_json::json!({});
        let curve = t["curve"].as_array().unwrap()[..3].to_vec();
        t["curve"] = serde_json::Value::Array(curve);
    });
    let out = iolab(&["compare", s(&a), s(&b)]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no test measured in both"), "{err}");
    assert!(
        err.contains("RND4K saturate read (an answer from 8 depths)"),
        "{err}"
    );
    assert!(
        err.contains("RND4K saturate read (no answer, 3 depths measured)"),
        "{err}"
    );
    assert!(!err.contains("0 runs"), "{err}");
}

// ---- report: bad input ------------------------------------------------------------

#[test]
fn bad_inputs_exit_2_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("not-iolab.json", "not an iolab result"),
        ("newer-schema.json", "schema version 99 is newer"),
        ("truncated.json", "truncated JSON"),
    ];
    for (file, problem) in cases {
        for ext in ["html", "md", "csv"] {
            let out_path = dir.path().join(format!("r.{ext}"));
            let out = iolab(&[
                "report",
                s(&fixture("run-a.json")),
                s(&fixture(file)),
                "-o",
                s(&out_path),
            ]);
            assert_eq!(out.status.code(), Some(2), "{file}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains(file) && err.contains(problem), "{err}");
            assert!(!out_path.exists(), "no partial report for {file}");
        }
        let out = iolab(&["compare", s(&fixture("run-a.json")), s(&fixture(file))]);
        assert_eq!(out.status.code(), Some(2));
    }
    // An empty file is named as one (it said "truncated JSON (EOF …)").
    let empty = dir.path().join("empty.json");
    std::fs::write(&empty, "\n").unwrap();
    let out = iolab(&["report", s(&empty), "-o", s(&dir.path().join("e.html"))]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("empty.json: empty file"), "{err}");
    std::fs::remove_file(&empty).unwrap();
    // An existing report is left alone when the new one cannot be made.
    let keep = dir.path().join("keep.html");
    std::fs::write(&keep, "old").unwrap();
    let out = iolab(&["report", s(&fixture("truncated.json")), "-o", s(&keep)]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&keep).unwrap(), "old");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temp files left"
    );
    // Unknown format and missing directory are refused before reading anything.
    let out = iolab(&["report", s(&fixture("run-a.json")), "-o", "report.pdf"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(".html, .md or .csv"));
    let missing = dir.path().join("no/such/dir/r.html");
    let out = iolab(&["report", s(&fixture("run-a.json")), "-o", s(&missing)]);
    assert_eq!(out.status.code(), Some(2));
}

/// The terminal's comparison names the tests one side lacks ("only in B: …"); the report's
/// comparison left them out.
#[test]
fn report_comparison_names_the_tests_of_one_side_only() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("r.md");
    let out = iolab(&[
        "report",
        s(&fixture("run-a.json")),
        s(&fixture("run-b.json")),
        "-o",
        s(&out_path),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = std::fs::read_to_string(&out_path).unwrap();
    assert!(md.contains("\nonly in B: RND4K Q1T1 read\n"), "{md}");
}

#[test]
fn report_reads_a_directory_of_results() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("iolab-results");
    std::fs::create_dir(&results).unwrap();
    for f in ["run-a.json", "saturate.json"] {
        std::fs::copy(fixture(f), results.join(f)).unwrap();
    }
    // A result file claimed by a run that has not saved yet is skipped, not fatal.
    std::fs::write(results.join("run-20261101-100000.json"), "").unwrap();
    std::fs::write(results.join("notes.txt"), "not a result").unwrap();
    let out_path = dir.path().join("r.md");
    let out = iolab(&["report", s(&results), "-o", s(&out_path)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = std::fs::read_to_string(&out_path).unwrap();
    assert!(
        md.contains("2 result files: run-a.json, saturate.json"),
        "{md}"
    );
    let empty = tempfile::tempdir().unwrap();
    let out = iolab(&["report", s(empty.path()), "-o", s(&out_path)]);
    assert_eq!(out.status.code(), Some(2));
}

// ---- report: formats ---------------------------------------------------------------

fn render(format: iolab::commands::report::Format) -> String {
    let inputs = load_inputs(&all_fixtures()).unwrap();
    iolab::commands::report::render(&inputs, format)
}

#[test]
fn markdown_snapshot() {
    insta::assert_snapshot!(
        "report_markdown",
        render(iolab::commands::report::Format::Markdown)
    );
}

#[test]
fn csv_snapshot() {
    insta::assert_snapshot!("report_csv", render(iolab::commands::report::Format::Csv));
}

/// Split one CSV line, honouring quotes (RFC 4180, no embedded line breaks here).
fn csv_fields(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out
}

#[test]
fn csv_has_one_row_per_test_and_run() {
    let csv = render(iolab::commands::report::Format::Csv);
    let mut lines = csv.lines();
    let header = csv_fields(lines.next().unwrap());
    assert_eq!(header, iolab::report::csv::COLUMNS.to_vec());
    let rows: Vec<Vec<String>> = lines.map(csv_fields).collect();
    assert!(rows.iter().all(|r| r.len() == header.len()));
    // run-a 5x3 + run-b (3x3 + 1 + 3 + 3) + files 4x3 + matrix 3x4x3 and its skipped
    // configuration + saturate 8 depths.
    assert_eq!(rows.len(), 15 + 16 + 12 + 36 + 1 + 8);
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let seq = rows
        .iter()
        .find(|r| r[col("source_file")] == "run-b.json" && r[col("test")] == "SEQ1M Q8T1 read")
        .unwrap();
    assert_eq!(seq[col("run")], "1");
    assert_eq!(seq[col("iops")], "1370");
    assert_eq!(seq[col("bs_bytes")], "1048576");
    assert!(seq[col("read_iops")].is_empty() && seq[col("write_lat_mean_ns")].is_empty());
    // A mixed run: each direction alone.
    let mixed = rows
        .iter()
        .find(|r| r[col("source_file")] == "run-b.json" && r[col("direction")] == "mixed")
        .unwrap();
    assert_eq!(mixed[col("rw")], "randrw");
    let f = |name: &str| mixed[col(name)].parse::<f64>().unwrap();
    assert!((f("read_iops") + f("write_iops") - f("iops")).abs() < 1e-6);
    assert_eq!(f("read_lat_mean_ns"), 200e3);
    assert_eq!(f("write_lat_p99_ns"), 2.5 * 900e3);
    let files = rows
        .iter()
        .find(|r| r[col("config")] == "xfs 4KiB noatime" && r[col("test")] == "64K create")
        .unwrap();
    assert_eq!(files[col("file_size_bytes")], "65536");
    assert_eq!(files[col("phase")], "create");
    assert!(!files[col("seconds_per_portion")].is_empty());
}

#[test]
fn html_is_self_contained_with_one_svg_per_chart() {
    let html = render(iolab::commands::report::Format::Html);
    let lower = html.to_ascii_lowercase();
    assert!(!lower.contains("http"), "no network reference of any kind");
    for tag in ["<script", "<link", "@import", "url(", "<img", "<iframe"] {
        assert!(!lower.contains(tag), "{tag}");
    }
    assert!(html.contains("@media print") && html.contains("@media (max-width"));
    assert!(html.contains("name=\"viewport\""));
    let doc = scraper::Html::parse_document(&html);
    assert!(doc.errors.is_empty(), "parse errors: {:?}", doc.errors);
    let sel = |q: &str| scraper::Selector::parse(q).unwrap();
    let figures: Vec<_> = doc.select(&sel("figure")).collect();
    let svgs = doc.select(&sel("svg")).count();
    assert_eq!(figures.len(), svgs, "one <svg> per chart");
    for f in &figures {
        assert_eq!(f.select(&sel("svg")).count(), 1);
        assert_eq!(f.select(&sel("figcaption")).count(), 1);
    }
    let titles: Vec<String> = doc
        .select(&sel("svg > title"))
        .map(|t| t.text().collect())
        .collect();
    let has = |needle: &str| titles.iter().filter(|t| t.contains(needle)).count();
    // Bars (MB/s, IOPS; files/s), latency curves, time series, saturation, rankings, heat map.
    assert!(
        has("block: MB/s") == 2 && has("block: IOPS") == 2,
        "{titles:?}"
    );
    assert_eq!(has("files: files/s"), 1);
    assert_eq!(has("latency percentiles"), 2 + 1);
    assert_eq!(has("IOPS over time"), 11);
    assert_eq!(has("IOPS vs latency"), 1);
    // 4 rankings, 1 latency chart (the block test), 1 heat map.
    assert_eq!(has("by configuration"), 4 + 1 + 1);
    assert_eq!(has("× file size"), 1);
    // A contents list links every section (in-page anchors only).
    let sections = doc.select(&sel("h2[id]")).count();
    let links: Vec<_> = doc.select(&sel("nav a")).collect();
    assert_eq!(links.len(), sections);
    for a in links {
        let id = a.value().attr("href").unwrap().trim_start_matches('#');
        assert_eq!(doc.select(&sel(&format!("h2#{id}"))).count(), 1);
    }
    // Error bars on the bars, the limit line and the knee on the saturation curve.
    assert!(html.contains("class=\"err\""));
    // The answer and the knee in the words of the text (they read `answer: QD16 70,000 IOPS`
    // and `knee: QD32`).
    assert!(html.contains("class=\"limit\"") && html.contains("knee at depth 32"));
    assert!(html.contains("answer: 70,000 IOPS at depth 16"), "{html}");
    // Environment and every warning are there.
    let text: String = doc.root_element().text().collect();
    for needle in [
        "Synthetic CPU @ 3.0GHz",
        "6.18.0",
        "rw,noatime",
        "iolab run /mnt/test",
        "buffered I/O with a test size under 2x RAM",
        "the page cache absorbed the writes",
        "btrfs 4KiB noatime skipped",
        // Several results of one subcommand: each compared with the first.
        "Comparison of the run results",
        "B is 1.37 ± 0.02× faster than A on SEQ1M Q8T1 read",
    ] {
        assert!(text.contains(needle), "{needle}");
    }
}

#[test]
fn html_report_via_cli() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("report.html");
    let mut args = vec!["report".to_string()];
    args.extend(all_fixtures().iter().map(|p| s(p).to_string()));
    args.extend(["-o".into(), s(&out_path).to_string()]);
    let out = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(&args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&out_path).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(html, render(iolab::commands::report::Format::Html));
}

/// `iolab man SUBCOMMAND` prints that page, `--dir` writes every page the top page's
/// SUBCOMMANDS section names, an unknown name is a usage error.
#[test]
fn man_pages_exist_for_every_subcommand_the_top_page_names() {
    let o = iolab(&["man", "trace", "record"]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains(".TH iolab-trace-record 1"));
    let dir = tempfile::tempdir().unwrap();
    let o = iolab(&["man", "--dir", s(dir.path())]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let top = std::fs::read_to_string(dir.path().join("iolab.1")).unwrap();
    let named: Vec<&str> = top
        .split("iolab\\-")
        .skip(1)
        .filter_map(|rest| rest.split_once("(1)").map(|(name, _)| name))
        .collect();
    assert!(named.len() >= 15, "{named:?}");
    for name in named {
        let page = dir
            .path()
            .join(format!("iolab-{}.1", name.replace("\\-", "-")));
        assert!(
            page.exists(),
            "iolab.1 names {} but it was not written",
            page.display()
        );
    }
    let o = iolab(&["man", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no man page for 'nope'"));
}

/// `man --dir` makes a missing directory, as the README's `--dir /usr/local/share/man/man1`
/// needs on a fresh Debian (it was refused: "not an existing directory"); a file there is
/// refused.
#[test]
fn man_dir_is_made_when_missing() {
    let base = tempfile::tempdir().unwrap();
    let dir = base.path().join("share/man/man1");
    let o = iolab(&["man", "--dir", s(&dir)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(dir.join("iolab-run.1").exists());
    let file = base.path().join("f");
    std::fs::write(&file, b"x").unwrap();
    let o = iolab(&["man", "--dir", s(&file)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("exists and is not a directory"));
}

/// A reader that goes away (`iolab completions bash | head -1`) ends the output quietly,
/// with no panic: 80 KB of completions do not fit in a pipe's buffer.
#[test]
fn a_closed_stdout_is_not_a_panic() {
    use std::io::Read;
    let mut child = Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(["completions", "bash"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(o.status.code(), Some(0), "{err}");
}

/// `iolab compare DIR1 DIR2` failed outright when a directory held an `iolab slack` result
/// (the default `iolab-results/` keeps every command's): the two runs are compared, and one
/// line on stderr names the file left out and why.
#[test]
fn compare_of_directories_leaves_out_a_slack_result_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let tree = dir.path().join("tree");
    for d in [&a, &b, &tree] {
        std::fs::create_dir(d).unwrap();
    }
    std::fs::write(tree.join("f"), b"abc").unwrap();
    std::fs::copy(fixture("run-a.json"), a.join("run-a.json")).unwrap();
    std::fs::copy(fixture("run-b.json"), b.join("run-b.json")).unwrap();
    let out = iolab(&["--no-history", "slack", s(&tree), "-o", s(&a)]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = iolab(&["compare", s(&a), s(&b)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("iolab: note: left out of the comparison, no measured figures to compare")
            && err.contains("an `iolab slack` result"),
        "{err}"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("run-a.json") && text.contains("run-b.json"),
        "{text}"
    );
}

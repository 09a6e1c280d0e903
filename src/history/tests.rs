//! The history's API on generated documents (no measuring).

use std::collections::BTreeMap;

use super::*;
use crate::model::device::SmartInfo;
use crate::model::{BlockSettings, Environment, TestResult};
use crate::stats::summarize;

/// A finished `run` document on `serial` at `minute` past 2026-01-01T00:00Z, one test
/// `RND4K Q1T1 read` whose three repeats are `iops` ± 1 %.
pub(crate) fn doc(serial: &str, minute: u32, iops: f64) -> ResultDoc {
    let env = Environment {
        hostname: "lab1".into(),
        target_path: "/mnt/t".into(),
        fs_type: "ext4".into(),
        mount_point: "/mnt".into(),
        block_device: Some("sdb1".into()),
        parent_device: Some("sdb".into()),
        device_model: Some("ACME SSD".into()),
        device_serial: Some(serial.into()),
        ..Default::default()
    };
    let mut d = ResultDoc::new("run", vec!["iolab".into(), "run".into()], env);
    d.started_at = format!(
        "2026-01-{:02}T{:02}:{:02}:00.000Z",
        1 + minute / 1440,
        minute / 60 % 24,
        minute % 60
    );
    let mut summary = BTreeMap::new();
    summary.insert(
        "iops".to_string(),
        summarize(&[iops * 0.99, iops, iops * 1.01]),
    );
    d.tests.push(TestResult {
        name: "RND4K Q1T1 read".into(),
        family: "block".into(),
        settings: Some(BlockSettings {
            rw: "randread".into(),
            ..Default::default()
        }),
        summary,
        ..Default::default()
    });
    d.finish(&Ok(()));
    d
}

fn open_temp() -> (tempfile::TempDir, History) {
    let dir = tempfile::tempdir().unwrap();
    let h = History::open(&dir.path().join("sub/history.sqlite")).unwrap();
    (dir, h)
}

/// The trend of the device's test with the most results, in its headline figure.
fn trend_of(h: &History, device: &str) -> anyhow::Result<Trend> {
    h.trend(&TrendQuery {
        device: device.into(),
        ..Default::default()
    })
}

/// The headline `history list` gives `d`.
fn headline(d: &ResultDoc) -> String {
    extract::headline(d, &extract::figures_of(d))
}

#[test]
fn record_list_get_and_the_same_run_twice() {
    let (_dir, h) = open_temp();
    let d = doc("S1", 0, 10_000.0);
    let id = h.record(&d, None).unwrap();
    assert_eq!(
        h.record_with(&d, Some(Path::new("/x/run-1.json")), None)
            .unwrap(),
        Recorded::Existing(id)
    );
    h.record(&doc("S1", 5, 11_000.0), None).unwrap();
    h.record(&doc("S2", 7, 9_000.0), None).unwrap();
    let all = h.list(&Filter::default()).unwrap();
    assert_eq!(all.len(), 3);
    // Newest first.
    assert_eq!(all[0].device, "ACME SSD (serial S2)");
    assert!(
        all[2].headline.contains("RND4K Q1T1 read 10,000 IOPS"),
        "{all:?}"
    );
    assert_eq!(all[2].source.as_deref(), Some("/x/run-1.json"));
    assert_eq!(all[2].filesystem.as_deref(), Some("ext4"));
    let by_serial = Filter {
        device: Some("s1".into()),
        ..Default::default()
    };
    assert_eq!(h.list(&by_serial).unwrap().len(), 2);
    let by_kernel = Filter {
        device: Some("sdb".into()),
        limit: Some(1),
        ..Default::default()
    };
    assert_eq!(h.list(&by_kernel).unwrap().len(), 1);
    assert_eq!(h.count(&by_kernel).unwrap(), 3);
    let since = Filter {
        since: Some("2026-01-01T00:05:00Z".into()),
        ..Default::default()
    };
    assert_eq!(h.list(&since).unwrap().len(), 2);
    let other = Filter {
        command: Some("files".into()),
        ..Default::default()
    };
    assert!(h.list(&other).unwrap().is_empty());
    assert_eq!(h.get(id).unwrap().unwrap(), d);
    assert!(h.get(999).unwrap().is_none());
    assert_eq!(h.integrity_check().unwrap(), "ok");
}

/// A matrix is listed under the file systems it made, not the one holding its images.
#[test]
fn a_matrix_is_listed_under_the_file_systems_it_measured() {
    let (_d, h) = open_temp();
    let mut m = doc("S1", 0, 1000.0);
    m.command = "matrix".into();
    for fs in ["xfs", "btrfs", "xfs"] {
        m.configurations
            .push(crate::model::matrix::ConfigurationResult {
                label: fs.into(),
                fs_type: fs.into(),
                ..Default::default()
            });
    }
    h.record(&m, None).unwrap();
    let all = h.list(&Filter::default()).unwrap();
    assert_eq!(all[0].filesystem.as_deref(), Some("xfs,btrfs"));
}

#[test]
fn trend_marks_a_planted_slowdown_and_not_the_noise() {
    let (_dir, h) = open_temp();
    // ±3 % around 10,000 IOPS, then 30 % slower from the 13th run on.
    let noise = [
        1.02, 0.98, 1.01, 0.97, 1.03, 0.99, 1.0, 1.02, 0.98, 1.01, 0.97, 1.03, 0.99, 1.0, 1.02,
        0.98, 1.01, 0.97, 1.03, 0.99,
    ];
    for (i, n) in noise.iter().enumerate() {
        let slow = if i >= 12 { 0.7 } else { 1.0 };
        h.record(&doc("S1", i as u32 * 60, 10_000.0 * n * slow), None)
            .unwrap();
    }
    let t = trend_of(&h, "S1").unwrap();
    assert_eq!(
        (t.test.as_str(), t.metric.as_str()),
        ("RND4K Q1T1 read", "iops")
    );
    assert!(t.higher_is_better);
    assert_eq!(t.points.len(), 20);
    let marked: Vec<usize> = t
        .points
        .iter()
        .enumerate()
        .filter(|(_, p)| p.significant_change)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(marked, [12]);
    let p = &t.points[12];
    assert!((p.level_change_pct.unwrap() + 30.0).abs() < 2.0, "{p:?}");
    assert!(p.ci_low.unwrap() < p.value && p.value < p.ci_high.unwrap());
    // Unknown names are usage errors that list what there is.
    let e = trend_of(&h, "nope").unwrap_err();
    assert!(e.to_string().contains("ACME SSD (serial S1)"), "{e}");
    let e = h
        .trend(&TrendQuery {
            device: "S1".into(),
            test: Some("SEQ".into()),
            ..Default::default()
        })
        .unwrap_err();
    assert!(e.downcast_ref::<crate::error::UsageError>().is_some());
}

/// A trace's `iops` count every call (open, stat, fsync): its own table says ops/s, and
/// the trend said IOPS.
#[test]
fn a_trace_s_trend_names_its_figure_ops_per_second() {
    let (_dir, h) = open_temp();
    for i in 0..2 {
        let mut d = doc("S9", i * 60, 5_000.0);
        d.command = "trace".into();
        h.record(&d, None).unwrap();
    }
    let t = trend_of(&h, "S9").unwrap();
    assert_eq!(
        (t.command.as_str(), t.metric_label.as_str()),
        ("trace", "ops/s")
    );
    assert!(crate::report::history::render_trend(&t, &[]).contains(": ops/s (higher better)"));
}

/// Another program's database is refused as a junk file is: left alone, with what to do
/// instead (it said only "it was left as it is", and "with 1 tables").
#[test]
fn another_programs_database_is_refused_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("one.sqlite");
    rusqlite::Connection::open(&one)
        .unwrap()
        .execute_batch("CREATE TABLE t (a)")
        .unwrap();
    let before = std::fs::read(&one).unwrap();
    let e = History::open(&one).err().unwrap().to_string();
    assert!(e.contains("a SQLite database with 1 table that"), "{e}");
    assert!(e.ends_with("or use --history PATH or --no-history"), "{e}");
    assert_eq!(std::fs::read(&one).unwrap(), before);

    let other = dir.path().join("other.sqlite");
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch("PRAGMA application_id = 7; CREATE TABLE t (a); CREATE TABLE u (b)")
        .unwrap();
    let e = History::open(&other).err().unwrap().to_string();
    assert!(e.contains("(application_id 0x7)"), "{e}");
    assert!(e.ends_with("or use --history PATH or --no-history"), "{e}");
}

#[test]
fn a_newer_schema_and_a_damaged_file_are_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let newer = dir.path().join("newer.sqlite");
    {
        let c = rusqlite::Connection::open(&newer).unwrap();
        c.execute_batch(&format!(
            "PRAGMA application_id = {}; PRAGMA user_version = {};",
            schema::APPLICATION_ID,
            SCHEMA_VERSION + 1
        ))
        .unwrap();
        c.execute_batch("CREATE TABLE future (x)").unwrap();
    }
    let before = std::fs::read(&newer).unwrap();
    let e = History::open(&newer).err().unwrap();
    assert!(e.downcast_ref::<crate::error::UsageError>().is_some());
    assert!(e.to_string().contains("newer than this iolab"), "{e}");
    assert_eq!(std::fs::read(&newer).unwrap(), before);

    let junk = dir.path().join("junk.sqlite");
    std::fs::write(&junk, vec![0x5a; 8192]).unwrap();
    let e = History::open(&junk).err().unwrap();
    assert!(e.downcast_ref::<crate::error::UsageError>().is_some());
    assert!(e.to_string().contains("not an iolab history"), "{e}");
    assert_eq!(std::fs::read(&junk).unwrap(), vec![0x5a; 8192]);

    // The best-effort hook only warns.
    let opts = HistoryOptions {
        path: Some(junk.clone()),
    };
    assert_eq!(record_best_effort(&doc("S", 0, 1.0), None, &opts), None);
    assert_eq!(
        record_best_effort(&doc("S", 0, 1.0), None, &HistoryOptions { path: None }),
        None
    );
}

#[test]
fn the_default_path_follows_xdg() {
    // Only the pure part: the variable wins when set (the test process's env is shared by
    // parallel tests, so nothing is changed here).
    let p = History::default_path();
    assert!(p.ends_with("history.sqlite") || std::env::var_os("IOLAB_HISTORY").is_some());
}

#[test]
fn history_is_send_and_sync_for_the_console() {
    fn shared<T: Send + Sync>() {}
    shared::<History>();
}

#[test]
fn health_snapshots_come_back_in_time_order_and_what_got_worse_is_said() {
    let (_dir, h) = open_temp();
    let smart = |used: u64, errors: u64| SmartInfo {
        device: "sdb".into(),
        available: true,
        health_passed: Some(true),
        temperature_c: Some(40),
        percentage_used: Some(used),
        media_errors: Some(errors),
        ..Default::default()
    };
    h.record_with(&doc("S1", 60 * 24 * 20, 1.0), None, Some(&smart(7, 2)))
        .unwrap();
    h.record_with(&doc("S1", 0, 1.0), None, Some(&smart(5, 0)))
        .unwrap();
    h.record(&doc("S1", 60, 1.0), None).unwrap(); // no snapshot
    let device = h.resolve_device("S1").unwrap();
    let points = h.health_history(&device).unwrap();
    assert_eq!(points.len(), 2);
    assert_eq!(points[0].smart.percentage_used, Some(5));
    let id = points[1].id;
    assert_eq!(h.health(id).unwrap().unwrap(), smart(7, 2));
    let worse = crate::report::history::health_changes(&points);
    assert_eq!(worse.len(), 2, "{worse:?}");
    assert!(
        worse[0].starts_with("media errors rose from 0 to 2"),
        "{worse:?}"
    );
    assert!(worse[1].contains("from 5 % to 7 %"), "{worse:?}");
    assert!(worse[1].contains("3.0 % per 30 days"), "{worse:?}");
}

#[test]
fn flags_win_over_the_environment() {
    let p = PathBuf::from("/x/h.sqlite");
    assert_eq!(HistoryOptions::from_flags(Some(p.clone()), true).path, None);
    // IOLAB_NO_HISTORY=1 (as the integration tests set it): --history still records.
    assert_eq!(
        HistoryOptions::from_flags(Some(p.clone()), false).path,
        Some(p)
    );
    if std::env::var_os("IOLAB_NO_HISTORY").is_some_and(|v| v == "1") {
        assert_eq!(HistoryOptions::from_flags(None, false).path, None);
    }
}

#[test]
fn a_run_imported_mid_run_takes_its_finished_document() {
    let (_dir, h) = open_temp();
    let done = doc("S1", 0, 2000.0);
    let mut running = done.clone();
    running.status = "running".into();
    running.finished_at = None;
    running.tests.clear();
    let id = h.record(&running, None).unwrap();
    assert!(h.figures(id).unwrap().is_empty());
    assert_eq!(
        h.record_with(&done, None, None).unwrap(),
        Recorded::Updated(id)
    );
    assert_eq!(h.get(id).unwrap().unwrap(), done);
    assert_eq!(h.entry(id).unwrap().unwrap().status, "complete");
    assert_eq!(h.figures(id).unwrap().len(), 1);
    // A finished row is never replaced.
    let mut again = done.clone();
    again.status = "failed".into();
    assert_eq!(
        h.record_with(&again, None, None).unwrap(),
        Recorded::Existing(id)
    );
    assert_eq!(h.count(&Filter::default()).unwrap(), 1);
}

/// The headline names the tests it leaves out in the right number: `(+1 test)`.
#[test]
fn headline_counts_the_tests_left_out() {
    let mut d = doc("S1", 0, 10_000.0);
    for (n, want) in [(4, "(+1 test)"), (5, "(+2 tests)")] {
        while d.tests.len() < n {
            let mut t = d.tests[0].clone();
            t.name = format!("RND4K Q1T1 read {}", d.tests.len());
            d.tests.push(t);
        }
        let h = headline(&d);
        assert!(h.ends_with(want), "{h}");
    }
}

/// A run whose three IOPS runs have a median (10,000) far from their mean (7,033).
fn skewed_runs() -> ResultDoc {
    let mut d = doc("S1", 0, 10_000.0);
    d.tests[0]
        .summary
        .insert("iops".into(), summarize(&[1_000.0, 10_000.0, 10_100.0]));
    d
}

/// The headline shows the median of the runs, as `iolab run`'s table does (it showed the
/// mean: 3334.73 MB/s in the history against 3397.85 in the table).
#[test]
fn headline_shows_the_median_of_the_runs() {
    let d = skewed_runs();
    let h = headline(&d);
    assert!(h.contains("10,000 IOPS"), "{h}");
}

/// An aging run's headline says what it made (it said "no figures").
#[test]
fn an_aging_run_is_headlined_by_its_fullness_and_layout() {
    let mut d = doc("S1", 0, 10_000.0);
    d.command = "age".into();
    d.tests = vec![crate::model::TestResult {
        name: "age source-tree".into(),
        family: "age".into(),
        age: Some(crate::model::age::AgeTestDetail {
            profile: "source-tree".into(),
            fullness: 0.511,
            layout_after: crate::model::layout::LayoutSummary {
                layout_score: Some(0.9997),
                ..Default::default()
            },
            ..Default::default()
        }),
        ..Default::default()
    }];
    let h = headline(&d);
    assert_eq!(h, "aged (source-tree): 51.1 % full, layout score 0.9997");
    // With the fullness asked (the history list did not say an aging fell short of it).
    d.tests[0].age.as_mut().unwrap().fill_target = 0.8;
    let h = headline(&d);
    assert_eq!(
        h,
        "aged (source-tree): 51.1 % full (80 % asked), layout score 0.9997"
    );
}

/// A slack analysis was headlined "cluster slack analysis" in `history list`: nothing to tell
/// one from another. It now says what was scanned and which units are best.
#[test]
fn a_slack_analysis_is_headlined_by_its_tree_and_best_units() {
    use crate::model::slack::{Recommendation, SlackResult};
    let mut d = doc("S1", 0, 10_000.0);
    d.command = "slack".into();
    d.tests.clear();
    let rec = |goal: &str, unit: u64, slack: u64| Recommendation {
        goal: goal.into(),
        unit_bytes: unit,
        slack_bytes: slack,
        ..Default::default()
    };
    let mut r = SlackResult {
        fs: "ext4".into(),
        recommendations: vec![
            rec("space", 1024, 111 << 10),
            rec("time", 16384, 2 << 20),
            rec("balanced", 1024, 111 << 10),
        ],
        ..Default::default()
    };
    r.scan.files = 1228;
    r.scan.data_bytes = 2 << 20;
    d.slack = Some(r);
    let h = headline(&d);
    assert_eq!(
        h,
        "slack (ext4 rules): 1,228 files, 2.0 MiB; best for space 1KiB, time 16KiB, balanced 1KiB"
    );
    // And which tree: two slack runs of two trees on one disk looked alike in the list but
    // for their counts.
    d.slack.as_mut().unwrap().path = "/home/u/photos".into();
    assert_eq!(
        headline(&d),
        "slack of /home/u/photos (ext4 rules): 1,228 files, 2.0 MiB; best for space 1KiB, time 16KiB, balanced 1KiB"
    );
}

/// A run that failed or was stopped after measuring the test stays in the trend (its figure is
/// real), marked with its status; complete runs carry none.
#[test]
fn trend_marks_the_points_of_runs_that_stopped_early() {
    let (_dir, h) = open_temp();
    for (i, status) in ["complete", "failed", "complete", "interrupted"]
        .iter()
        .enumerate()
    {
        let mut d = doc("S1", i as u32 * 60, 10_000.0);
        d.status = status.to_string();
        h.record(&d, None).unwrap();
    }
    let t = trend_of(&h, "S1").unwrap();
    let statuses: Vec<Option<&str>> = t.points.iter().map(|p| p.status.as_deref()).collect();
    assert_eq!(statuses, [None, Some("failed"), None, Some("interrupted")]);
    let text = crate::report::history::render_trend(&t, &[]);
    assert!(text.contains("(run failed)"), "{text}");
    assert!(text.contains("(run interrupted)"), "{text}");
    let json = serde_json::to_value(&t).unwrap();
    assert!(json["points"][0].get("status").is_none(), "{json}");
    assert_eq!(json["points"][1]["status"], "failed");
}

/// `db` as an older iolab left it: `sql` run on its rows, and its index marked as made by
/// extractor `version`; then opened again, which indexes it anew.
fn as_older_index(db: &std::path::Path, sql: &str, version: u32) -> History {
    let c = rusqlite::Connection::open(db).unwrap();
    c.execute_batch(&format!(
        "{sql} UPDATE meta SET value = '{version}' WHERE key = 'extract_version';"
    ))
    .unwrap();
    drop(c);
    History::open(db).unwrap()
}

/// Results indexed by an older extractor are indexed again from their documents when the
/// history is opened (a sustain pass recorded before the settled speed kept its average
/// as its headline, and a trend mixed the two).
#[test]
fn results_indexed_by_an_older_extractor_are_indexed_again() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let h = History::open(&db).unwrap();
    let id = h.record(&doc("S1", 0, 10_000.0), None).unwrap();
    let listed = |h: &History| {
        let all = h.list(&Filter::default()).unwrap();
        all.into_iter().find(|e| e.id == id).unwrap().headline
    };
    let want = listed(&h);
    assert_ne!(want, "stale");
    drop(h);
    // As an older iolab left it: another headline, no figures, the older extractor.
    let h = as_older_index(
        &db,
        "UPDATE results SET headline = 'stale'; DELETE FROM figures;",
        1,
    );
    assert_eq!(listed(&h), want);
    let t = trend_of(&h, "S1").unwrap();
    assert_eq!(t.points.len(), 1, "the figures are back");
    drop(h);
    let c = rusqlite::Connection::open(&db).unwrap();
    let v: String = c
        .query_row(
            "SELECT value FROM meta WHERE key = 'extract_version'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(v, store::EXTRACT_VERSION.to_string());
}

/// The list, the trend and the export give each test the figure its command's table gives
/// (`report::metrics::table_figure`) and say which: the median of a run test's repeats, the
/// mean of a files test's (its table gives the mean), the best of a peak test's. The list
/// gave the median of a files test ("1 B create" 3,375 files/s where `iolab files` said
/// 4,623) and of a peak test, the trend the mean of every test under a "Value" its legend
/// called "mean over the run's repeats".
#[test]
fn the_history_gives_the_figure_of_the_commands_own_table() {
    let (_dir, h) = open_temp();
    let runs = [1_000.0, 10_000.0, 10_100.0];
    // A run test: the median (10,000), not the mean (7,033).
    let mut median = doc("S1", 0, 0.0);
    median.tests[0]
        .summary
        .insert("iops".into(), summarize(&runs));
    // A peak test: the best run (10,100).
    let mut peak = doc("S2", 0, 0.0);
    peak.tests[0].headline = Some("max".into());
    peak.tests[0]
        .summary
        .insert("iops".into(), summarize(&runs));
    // A files test: the mean of the runs' rates (4,000), not their median (3,000).
    let mut files = doc("S3", 0, 0.0);
    files.command = "files".into();
    files.tests[0] = TestResult {
        name: "1 B create".into(),
        family: "files".into(),
        summary: BTreeMap::from([(
            "files_per_s".to_string(),
            summarize(&[1_000.0, 3_000.0, 8_000.0]),
        )]),
        ..Default::default()
    };
    for (d, serial, shown, value, value_of) in [
        (&median, "S1", "10,000 IOPS", 10_000.0, "median"),
        (&peak, "S2", "10,100 IOPS", 10_100.0, "best run"),
        (&files, "S3", "4,000 files/s", 4_000.0, "mean"),
    ] {
        let id = h.record(d, None).unwrap();
        let e = h.entry(id).unwrap().unwrap();
        assert!(e.headline.contains(shown), "{serial}: {}", e.headline);
        let f = &h.figures(id).unwrap()[0];
        assert_eq!(
            (f.value, f.value_of.as_str()),
            (value, value_of),
            "{serial}"
        );
        let t = trend_of(&h, serial).unwrap();
        assert_eq!(t.points[0].value, value, "{serial}");
        assert_eq!(t.value_of, value_of, "{serial}");
        // The legend says which figure the Value is, and that the interval is the mean's.
        let text = crate::report::history::render_trend(&t, &[]);
        let named = match value_of {
            "median" => "Value = median of the run's repeats",
            "best run" => "Value = best of the run's repeats",
            _ => "Value = mean of the run's repeats",
        };
        assert!(text.contains(named), "{text}");
        assert!(text.contains("95 % interval = of the mean"), "{text}");
    }
    // A later result's Change is against the figure shown, not the means behind it.
    let mut later = doc("S2", 60, 0.0);
    later.tests[0].headline = Some("max".into());
    later.tests[0]
        .summary
        .insert("iops".into(), summarize(&[100.0, 200.0, 20_200.0]));
    h.record(&later, None).unwrap();
    let t = trend_of(&h, "S2").unwrap();
    assert_eq!(t.points[1].value, 20_200.0);
    assert!(
        (t.points[1].change_pct.unwrap() - 100.0).abs() < 1e-9,
        "{t:?}"
    );
}

/// A disk without a model was keyed by its serial alone until iolab recorded its size
/// (`serial overlayblk`); its newer results say `virtio 256.0 GiB (serial overlayblk on
/// lab1)`. The older rows of the same disk (same host, serial and kernel name) join the
/// newer ones, also after a re-index; another host's disk with that serial (a VM made from
/// the same template) and another disk of the same host stay apart.
#[test]
fn a_model_less_disk_s_older_rows_join_its_newer_ones() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let h = History::open(&db).unwrap();
    let disk = |minute: u32, host: &str, dev: &str, sized: bool| {
        let mut d = doc("overlayblk", minute, 10_000.0);
        let e = &mut d.environment;
        e.hostname = host.into();
        e.device_model = None;
        e.block_device = Some(dev.into());
        e.parent_device = None;
        if sized {
            e.device_size_bytes = Some(256 << 30);
            e.device_vendor = Some("0x1af4".into());
        }
        d
    };
    let old = h.record(&disk(0, "lab1", "vda", false), None).unwrap();
    let other_host = h.record(&disk(1, "lab2", "vda", false), None).unwrap();
    let other_disk = h.record(&disk(2, "lab1", "vdb", false), None).unwrap();
    let device_of = |h: &History, id: i64| h.entry(id).unwrap().unwrap().device;
    assert_eq!(device_of(&h, old), "serial overlayblk");
    let new = h.record(&disk(10, "lab1", "vda", true), None).unwrap();
    let joined = "virtio 256.0 GiB (serial overlayblk on lab1)";
    assert_eq!(device_of(&h, new), joined);
    assert_eq!(device_of(&h, old), joined, "the older row of the same disk");
    assert_eq!(device_of(&h, other_host), "serial overlayblk");
    assert_eq!(device_of(&h, other_disk), "serial overlayblk");
    assert_eq!(trend_of(&h, joined).unwrap().points.len(), 2);
    drop(h);
    // The re-index computes every row's identity from its document again.
    let h = as_older_index(&db, "", 1);
    assert_eq!(device_of(&h, old), joined);
    assert_eq!(device_of(&h, other_host), "serial overlayblk");
}

/// A history indexed before every measuring option was kept (extractor 6: `--preset`,
/// `--size` and `--scale` only) shows the new options once opened: two runs with another
/// `--rw` and `--engine` read alike in the list.
#[test]
fn options_indexed_by_an_older_extractor_are_taken_again() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let h = History::open(&db).unwrap();
    let mut d = doc("S1", 0, 10_000.0);
    d.argv = "iolab run --size 16M --rw randwrite --engine sync -t /mnt/t"
        .split(' ')
        .map(str::to_string)
        .collect();
    let id = h.record(&d, None).unwrap();
    drop(h);
    let h = as_older_index(&db, "UPDATE results SET options = '--size 16M';", 6);
    let e = h
        .list(&Filter::default())
        .unwrap()
        .into_iter()
        .find(|e| e.id == id)
        .unwrap();
    assert_eq!(
        e.options.as_deref(),
        Some("--size 16M --rw randwrite --engine sync")
    );
}

/// `iolab history show` of `d` once recorded in a fresh history.
fn show_of(d: &ResultDoc) -> String {
    let (_dir, hist) = open_temp();
    let id = hist.record(d, None).unwrap();
    crate::report::history::render_show(
        &hist.entry(id).unwrap().unwrap(),
        &hist.figures(id).unwrap(),
        None,
    )
}

/// A sustain pass's MB/s is its `average MB/s` in the history's headline and `history show`,
/// as its report, its compare and the console's results call it: they said plain `MB/s`
/// (`first pass 3502.91 MB/s` in the list beside `first pass 4760.54 settled MB/s`).
#[test]
fn a_sustain_pass_is_labelled_as_its_report_labels_it() {
    let d = sustain_doc();
    let want = crate::report::metrics::label_for("sustain", "bw_bytes_per_s");
    assert_eq!(want, "average MB/s");
    let h = headline(&d);
    assert_eq!(h, format!("first pass 3502.91 {want}"));
    let shown = show_of(&d);
    assert!(shown.contains(&format!("{want} *")), "{shown}");
}

/// `history show`'s column leads with the figure of the command's table (here the median
/// of the runs, as `iolab run` and the report give it) and puts the mean in brackets: its
/// header said "Figure (mean ± 95 %)" above `10,000 (mean 7,033 ± ...)`.
#[test]
fn history_show_does_not_call_a_median_the_mean() {
    let d = skewed_runs();
    let shown = show_of(&d);
    assert!(shown.contains("10,000 (mean 7,033 ± "), "{shown}");
    let header = shown.lines().find(|l| l.contains("Metric")).unwrap();
    assert!(!header.contains("mean"), "{header}");
    assert!(shown.contains("the median of the runs"), "{shown}");
}

/// A sustain pass too short for a speed series: its headline is its (average) MB/s.
fn sustain_doc() -> ResultDoc {
    let mut d = doc("S1", 0, 10_000.0);
    d.command = "sustain".into();
    d.tests[0].name = "first pass".into();
    d.tests[0].family = "sustain".into();
    d.tests[0].settings.as_mut().unwrap().rw = "write".into();
    d.tests[0].summary = BTreeMap::from([
        ("bw_bytes_per_s".to_string(), summarize(&[3_502_910_000.0])),
        ("iops".to_string(), summarize(&[3_341.0])),
    ]);
    d
}

/// A history an older iolab indexed gets the headline's new words when it is opened.
#[test]
fn an_older_index_gets_the_sustain_label_on_opening() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.sqlite");
    let h = History::open(&db).unwrap();
    let id = h.record(&sustain_doc(), None).unwrap();
    drop(h);
    let h = as_older_index(
        &db,
        "UPDATE results SET headline = 'first pass 3502.91 MB/s';",
        7,
    );
    let e = h.entry(id).unwrap().unwrap();
    assert_eq!(e.headline, "first pass 3502.91 average MB/s");
}

/// `history forget`: the results go with their figures and health snapshots, all or none,
/// and an import adds one back.
#[test]
fn forget_removes_results_with_their_figures_all_or_none() {
    let (_dir, h) = open_temp();
    let docs: Vec<ResultDoc> = (0..3).map(|i| doc("S1", 10 * i, 1000.0)).collect();
    let ids: Vec<i64> = docs.iter().map(|d| h.record(d, None).unwrap()).collect();
    assert!(!h.figures(ids[1]).unwrap().is_empty());
    // An unknown number: an error that names it, and nothing removed.
    let e = h.forget(&[ids[0], 999]).unwrap_err();
    assert!(
        e.downcast_ref::<crate::error::UsageError>().is_some(),
        "{e}"
    );
    assert!(e.to_string().contains("#999: no such result"), "{e}");
    assert_eq!(h.count(&Filter::default()).unwrap(), 3);
    // The middle one, named twice: removed once, its figures with it.
    let gone = h.forget(&[ids[1], ids[1]]).unwrap();
    assert_eq!(gone.len(), 1);
    assert_eq!(gone[0].id, ids[1]);
    let left: Vec<i64> = h
        .list(&Filter::default())
        .unwrap()
        .iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(left, [ids[2], ids[0]]);
    assert!(h.figures(ids[1]).unwrap().is_empty());
    assert!(h.get(ids[1]).unwrap().is_none());
    // Recorded again (an import of its file): back, under a new number.
    assert!(h.record(&docs[1], None).unwrap() > ids[2]);
    assert_eq!(h.count(&Filter::default()).unwrap(), 3);
}

//! The console's figures in a real browser (headless Chromium, tests/serve_support/cdp.rs)
//! against the command line's: the compare table gives each metric its label and unit as
//! `iolab compare` does (MB/s, not bytes per second as "1.05 G"; latency in µs/ms, not
//! nanoseconds as "8079.6 k"); the trend table gives the change against the previous result
//! as `iolab history trend` does (it was empty unless the level changed); a suite of 4 tests
//! x 2 runs started from the form ends with "tests done: 4" (it counted runs: 8); a trend of
//! one result names "result 1" under its axis, not also "result 1.001"; a change whose
//! interval reaches zero reads "± too wide" as in `iolab compare` (it gave the half-width);
//! each compare cell is `iolab compare`'s, its ± and run count (n=3) and verdict included.
//! No timing: every wait is a poll with a limit of minutes.

mod common;
mod serve_support;

use std::time::Duration;

use serve_support::Console;
use serve_support::cdp::Browser;

const MINUTE: Duration = Duration::from_secs(60);

/// Text of every cell of the table in `#sel`, row by row.
fn cells(b: &mut Browser, sel: &str) -> Vec<Vec<String>> {
    let v = b.eval(&format!(
        "[...document.querySelectorAll('{sel} tbody tr')].map((r) => [...r.children].map((c) => c.textContent))"
    ));
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{sel} cells: {e}: {v}"))
}

/// Start `form` from the console, open its run page and wait until it is complete; its id.
fn run_to_the_end(console: &Console, b: &mut Browser, form: &serde_json::Value) -> String {
    let (code, body) = console.authed("POST", "/api/runs", &form.to_string());
    assert_eq!(code, 200, "{body}");
    let id = serde_json::from_str::<serde_json::Value>(&body).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    b.eval(&format!("location.hash = '#/run/{id}'"));
    b.wait_for(
        &format!("{} to end", form["command"]),
        "document.getElementById('run-status').textContent === 'complete'",
        Duration::from_secs(300),
    );
    id
}

/// A new temp directory (`prefix`), the fixtures' folder, the run-a fixture and the run-b
/// fixture as if measured on run-a's machine (so both are one device's results in a history).
fn b_on_a_s_machine(
    prefix: &str,
) -> (
    tempfile::TempDir,
    std::path::PathBuf,
    serde_json::Value,
    serde_json::Value,
) {
    let dir = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let read = |name: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(fixtures.join(name)).unwrap()).unwrap()
    };
    let a = read("run-a.json");
    let mut b = read("run-b.json");
    b["environment"] = a["environment"].clone();
    (dir, fixtures, a, b)
}

#[test]
fn compare_trend_and_the_run_page_show_the_command_lines_figures() {
    let test = "compare_trend_and_the_run_page_show_the_command_lines_figures";
    if !common::tool_or_skip(test, "chromium", "chromium") {
        return;
    }
    let Some(ram) = common::ram_tempdir_or_skip(test) else {
        return;
    };
    // Two results of one device (run-b with run-a's machine, a day later) in a new history.
    let (dir, fixtures, _, mut bdoc) = b_on_a_s_machine("iolab-serve-views-");
    // SEQ1M Q8T1 write's MB/s far apart in b: `iolab compare` prints its change as
    // "1.2 % ± too wide" (the interval of other / baseline reaches zero); the page printed
    // "1.2 % ± 133.6", a precise-looking half-width, beside that text.
    // b was run with another size: the trend's command column says so.
    bdoc["argv"] = serde_json::json!(["iolab", "run", "/mnt/test", "--size", "1G"]);
    for t in bdoc["tests"].as_array_mut().unwrap() {
        if t["name"] == "SEQ1M Q8T1 write" {
            let bw = &mut t["summary"]["bw_bytes_per_s"];
            bw["stddev"] = serde_json::json!(bw["mean"].as_f64().unwrap() * 0.9);
        }
    }
    let b_path = dir.path().join("run-b-same-device.json");
    std::fs::write(&b_path, serde_json::to_string(&bdoc).unwrap()).unwrap();
    // What the command line prints for the two pairs the page compares below.
    let runs_table = serve_support::compare_table(&fixtures.join("run-a.json"), &b_path);
    let files_table =
        serve_support::compare_table(&fixtures.join("files.json"), &fixtures.join("files.json"));
    let history = dir.path().join("history.db");
    for f in [
        fixtures.join("run-a.json"),
        b_path,
        fixtures.join("files.json"),
    ] {
        let mut cmd = common::bin();
        let out = common::with_history(&mut cmd, &history)
            .args(["history", "import", common::s(&f)])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", common::stderr(&out));
    }

    let console = Console::start_in(dir, &[], Some(&history));
    let shots = console_shots();
    let mut b = Browser::start(&shots);
    b.navigate(&console.url());
    b.wait_for("the page", "document.querySelector('nav') !== null", MINUTE);

    // Compare: `iolab compare run-a.json run-b.json` prints SEQ1M Q8T1 read, MB/s,
    // 1048.58 ± 26.05 (n=3) and 1436.55 ± 26.05 (n=3); mean latency 8.08 ms and 5.86 ms.
    // Leave a page before its answer came: the machine page (slow: every device and mount)
    // then the comparison at once. The machine page's late answer painted over the
    // comparison (seen in CI under load); a page's answers after it was left are dropped.
    b.eval(
        "location.hash = '#/machine'; setTimeout(() => { location.hash = '#/compare?a=h-1&b=h-2'; }, 0)",
    );
    b.wait_for(
        "the comparison",
        "document.getElementById('compare-text') !== null",
        MINUTE,
    );
    // Time for the machine page's answer to have come (it takes well under a second here).
    std::thread::sleep(std::time::Duration::from_secs(3));
    let still = b.eval("document.getElementById('compare-text') !== null && !document.body.innerText.includes('Block devices')");
    assert_eq!(
        still,
        serde_json::json!(true),
        "the machine page painted over the comparison"
    );
    let rows = cells(&mut b, "#main");
    let row = |test: &str, metric: &str| -> Vec<String> {
        rows.iter()
            .find(|r| r[0] == test && r[1] == metric)
            .unwrap_or_else(|| panic!("no row {test} / {metric} in {rows:?}"))
            .clone()
    };
    // Each side as the command line gives it: its mean, its interval and its run count
    // (the page gave the mean alone, "1048.58"), and the verdict with its test and p (the
    // page gave "faster" alone).
    let bw = row("SEQ1M Q8T1 read", "MB/s");
    assert_eq!(
        (bw[2].as_str(), bw[3].as_str()),
        ("1048.58 ± 26.05 (n=3)", "1436.55 ± 26.05 (n=3)")
    );
    assert_eq!(bw[5], "faster (Welch, p < 0.001)");
    let lat = row("SEQ1M Q8T1 read", "mean latency");
    assert_eq!(
        (lat[2].as_str(), lat[3].as_str()),
        ("8.08 ms ± 198.7 µs (n=3)", "5.86 ms ± 144.1 µs (n=3)")
    );
    let iops = row("RND4K Q32T1 read", "IOPS");
    assert_eq!(
        (iops[2].as_str(), iops[3].as_str()),
        ("50,000 ± 1,242 (n=3)", "40,000 ± 994 (n=3)")
    );
    // One run against three: its count, and the one-run test.
    let once = row("RND4K Q32T1 write", "IOPS");
    assert_eq!(once[3], "45,000 (n=1)", "{once:?}");
    assert!(once[5].starts_with("faster (one-run t-test, "), "{once:?}");
    // The change as the command line words it, a too wide interval included.
    assert_eq!(bw[4], "+37.0 % ± 2.3 %");
    let wide = row("SEQ1M Q8T1 write", "MB/s");
    assert_eq!(wide[4], "+1.2 % ± too wide", "{wide:?}");
    // Every row, every cell: `iolab compare`'s table of the same two files.
    assert_eq!(rows, runs_table);
    // The columns named as the text under the table names the files.
    let header =
        b.eval("[...document.querySelectorAll('#main thead th')].map((c) => c.textContent)");
    assert_eq!(
        header,
        serde_json::json!(["test", "metric", "A (h-1)", "B (h-2)", "change", "verdict"])
    );
    // Under the table, what `iolab compare` says besides its table, not the table again
    // (the page gave its whole text: every row twice).
    let text = b.eval("document.getElementById('compare-text').textContent");
    let text = text.as_str().unwrap();
    assert!(!text.contains('│') && !text.contains("1048.58"), "{text}");
    assert!(
        text.contains("A = ") && text.contains("Change = other / baseline"),
        "{text}"
    );
    assert!(text.contains("faster than A on SEQ1M Q8T1 read"), "{text}");

    // Seconds per portion as `iolab compare` prints them ("0.050 s"; the page gave
    // "0.0500 s", and 0.00075 s as "0.0007 s").
    b.eval("location.hash = '#/compare?a=h-3&b=h-3'");
    b.wait_for(
        "the files comparison",
        "document.getElementById('compare-text') !== null",
        MINUTE,
    );
    let rows = cells(&mut b, "#main");
    let portion = rows
        .iter()
        .find(|r| r[0] == "1 create" && r[1] == "s/portion")
        .unwrap_or_else(|| panic!("no 1 create s/portion row in {rows:?}"));
    assert_eq!(
        (portion[2].as_str(), portion[3].as_str()),
        ("0.050 s ± 0.0025 s (n=3)", "0.050 s ± 0.0025 s (n=3)")
    );
    assert_eq!(rows, files_table);

    // A pair that cannot be compared keeps its two ids in the heading over the error (the
    // heading read "Compare" alone).
    b.eval("location.hash = '#/compare?a=h-1&b=h-999'");
    b.wait_for(
        "the comparison's error",
        "document.getElementById('compare-error') !== null",
        MINUTE,
    );
    let heading = b.eval("document.querySelector('#main h2').textContent");
    assert_eq!(
        heading.as_str(),
        Some("Compare h-1 (baseline) with h-999"),
        "{heading}"
    );

    // Trend: the second result's change against the first (+37.0 %), its value in MB/s.
    b.eval("location.hash = '#/trend?device=/tmp/img&test=SEQ1M%20Q8T1%20read'");
    b.wait_for(
        "the trend's two points",
        "document.querySelectorAll('#chart-trend circle').length === 2",
        MINUTE,
    );
    let rows = cells(&mut b, "#trend-out");
    assert_eq!(rows.len(), 2, "{rows:?}");
    // Each result's command and options, as the history table gives them (the trend had
    // no such column: b's other --size did not show).
    assert_eq!(
        (rows[0][2].as_str(), rows[1][2].as_str()),
        ("run", "run --size 1G")
    );
    assert_eq!(rows[1][3], "1436.55", "{rows:?}");
    // The chart's latest figure is the table's Value (it read "now 1436.5", its own
    // rounding of the same figure).
    let now = |b: &mut Browser| {
        b.eval("[...document.querySelectorAll('#chart-trend text')].map((t) => t.textContent).find((t) => t.startsWith('now '))")
    };
    assert_eq!(now(&mut b), serde_json::json!("now 1436.55"));
    assert_eq!(rows[1][5], "+37.0 %", "{rows:?}");
    assert_eq!(rows[0][5], "", "{rows:?}");
    // `iolab history trend`'s verdict under the table (the page left it out): two results
    // are too few to test for a change.
    let text = b.eval("document.getElementById('trend-text').textContent");
    assert!(
        text.as_str()
            .unwrap()
            .contains("too few results to test for a change"),
        "{text}"
    );
    // Not its table again (the page gave it twice, as the compare page did).
    assert!(!text.as_str().unwrap().contains('│'), "{text}");

    // No test asked for: the page says which one it shows and offers the device's tests
    // in the test field (it offered nothing, and said nothing of the others).
    b.eval("location.hash = '#/trend?device=/tmp/img'");
    b.wait_for(
        "the default test's trend",
        "document.getElementById('trend-chosen') !== null && document.querySelectorAll('#trend-tests option').length > 1",
        MINUTE,
    );
    let chosen = b.eval("document.getElementById('trend-chosen').textContent");
    assert!(
        chosen.as_str().unwrap().contains(
            "the first row of `iolab run`'s table among the tests run most on this device"
        ),
        "{chosen}"
    );
    let offered =
        b.eval("[...document.querySelectorAll('#trend-tests option')].map((o) => o.value)");
    assert!(
        offered
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("SEQ1M Q8T1 read")),
        "{offered}"
    );

    // A trend of seconds per portion: its value as `iolab history trend` prints it
    // ("0.067 s"; the page gave "0.0670 s", and 0.00075 s as "0.0007 s").
    b.eval("location.hash = '#/trend?device=/tmp/img&test=4K%20create&metric=seconds_per_portion'");
    b.wait_for(
        "the seconds-per-portion trend",
        "document.querySelectorAll('#chart-trend circle').length === 1",
        MINUTE,
    );
    let rows = cells(&mut b, "#trend-out");
    assert_eq!(rows[0][3], "0.067 s", "{rows:?}");
    // Not "now 0.1", without its unit.
    assert_eq!(now(&mut b), serde_json::json!("now 0.067 s"));

    // A trend of one result (files.json's 4K create): its axis names result 1 only (its
    // right-hand end read "result 1.001").
    b.eval("location.hash = '#/trend?device=/tmp/img&test=4K%20create'");
    b.wait_for(
        "the one-point trend",
        "document.querySelectorAll('#chart-trend circle').length === 1",
        MINUTE,
    );
    let labels = b.eval(
        "[...document.querySelectorAll('#chart-trend text')].map((t) => t.textContent).filter((t) => t.startsWith('result'))",
    );
    assert_eq!(labels, serde_json::json!(["result 1"]));

    // A suite from the form: 4 tests x 2 runs is 4 tests done.
    let target = ram.path().display().to_string();
    b.eval("location.hash = '#/new'");
    b.wait_for(
        "the form",
        "document.getElementById('opt-duration')",
        MINUTE,
    );
    // `files` takes no --allow-destroy: the form hides the field (typing in it gave clap's
    // "unexpected argument '--allow-destroy' found"); `run` offers it again.
    let shown = |b: &mut Browser, cmd: &str| {
        b.eval(&format!(
            "(() => {{ const c = document.getElementById('cmd'); c.value = {cmd:?}; c.dispatchEvent(new Event('change'));
              return getComputedStyle(document.getElementById('confirm-row')).display !== 'none'; }})()"
        ))
    };
    assert_eq!(shown(&mut b, "files"), serde_json::json!(false));
    assert_eq!(shown(&mut b, "run"), serde_json::json!(true));
    let js = format!(
        "(() => {{ const set = (id, v) => {{ const e = document.getElementById(id); e.value = v; e.dispatchEvent(new Event('change')); }};
          set('target', {target:?}); set('opt-preset', 'real'); set('opt-duration', '200ms');
          set('opt-repeat', '2'); set('opt-size', '8M');
          document.getElementById('start').click(); return true; }})()"
    );
    assert_eq!(b.eval(&js), serde_json::json!(true));
    b.wait_for(
        "the run to complete",
        "location.hash.startsWith('#/run/') && document.getElementById('run-status').textContent === 'complete' && document.getElementById('result-id')",
        Duration::from_secs(300),
    );
    let done = b.eval("document.getElementById('tests-done').textContent");
    assert_eq!(done, serde_json::json!("4"));

    // A files test has no live series: its page says so instead of three empty charts
    // "waiting for data…" (shown until it ended, and after).
    let files = ram.path().join("files");
    std::fs::create_dir(&files).unwrap();
    let form = serde_json::json!({
        "command": "files",
        "target": files.display().to_string(),
        "options": {"sizes": "1", "files-per-portion": "10", "portions": "1",
                    "passes": "1", "repeat": "1"},
    });
    run_to_the_end(&console, &mut b, &form);
    let charts = b.eval(
        "[document.getElementById('no-live') !== null, document.querySelectorAll('#charts svg').length]",
    );
    assert_eq!(charts, serde_json::json!([true, 0]), "files run page");

    // A saturate sweep prefills "prefill /path/iolab-test-….dat": not a test (it counted
    // as one: 4 steps read "tests done: 5"). Each step is one.
    let form = serde_json::json!({
        "command": "saturate",
        "target": files.display().to_string(),
        "options": {"size": "4M", "step-duration": "200ms", "ramp": "0s",
                    "max-depth": "4", "rw": "randread"},
    });
    let id = run_to_the_end(&console, &mut b, &form);
    let (_, body) = console.authed("GET", &format!("/api/runs/{id}"), "");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let ends: Vec<&str> = v["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == "task_end")
        .map(|e| e["label"].as_str().unwrap())
        .collect();
    assert!(ends.iter().any(|l| l.starts_with("prefill ")), "{ends:?}");
    let steps = ends.iter().filter(|l| !l.starts_with("prefill")).count();
    let done = b.eval("document.getElementById('tests-done').textContent");
    assert_eq!(done, serde_json::json!(steps.to_string()), "{ends:?}");

    // A run that does not exist (a mistyped address, a console since restarted): the page
    // says so once and stops asking (it asked again every 2 s for as long as it was open).
    b.eval(
        "window.__asked = 0; if (!window.__fetch) { window.__fetch = window.fetch; window.fetch = (...a) => { if (String(a[0]).startsWith('/api/runs/run-99')) window.__asked++; return window.__fetch(...a); }; } location.hash = '#/run/run-99'; true",
    );
    b.wait_for(
        "the missing run's message",
        "document.getElementById('run-error') && document.getElementById('run-error').textContent.includes('no such run')",
        MINUTE,
    );
    std::thread::sleep(Duration::from_secs(5));
    assert_eq!(b.eval("window.__asked"), serde_json::json!(1));
    // The message alone, and where the results are: no Stop button, bar or charts "waiting
    // for data…" of a run that does not exist.
    let rest = b.eval(
        "[document.getElementById('stop'), document.getElementById('charts'), document.querySelector('.bar')].every((e) => e === null) && document.querySelector('#main a[href=\"#/history\"]') !== null",
    );
    assert_eq!(rest, serde_json::json!(true), "the missing run's page");

    drop(b);
    let mut console = console;
    assert_eq!(console.stop(), Some(0), "stderr: {}", console.stderr());
    let _ = std::fs::remove_dir_all(&shots);
}

/// A returning user's history and trend pages say what `iolab history` and `iolab history
/// trend` say: the list's test column gives the options that tell two runs apart (`run
/// --preset real --size 1G`, as the terminal's Command column; the page gave `run` for
/// both), and a trend without a test names the one shown as the command line's stderr does
/// (the page said "the most run test on this device" where every test was run as often and
/// the choice was the first row of the newest result's table).
#[test]
fn the_history_and_trend_pages_read_as_the_terminal_s() {
    let test = "the_history_and_trend_pages_read_as_the_terminal_s";
    if !common::tool_or_skip(test, "chromium", "chromium") {
        return;
    }
    // run-b on run-a's machine with options, one as the console's form writes them
    // (`--preset=real`) and one as typed.
    let (dir, fixtures, a, mut bdoc) = b_on_a_s_machine("iolab-serve-returning-");
    bdoc["argv"] =
        serde_json::json!(["iolab", "run", "--preset=real", "--size", "1G", "/mnt/test"]);
    let b_path = dir.path().join("run-b-options.json");
    std::fs::write(&b_path, serde_json::to_string(&bdoc).unwrap()).unwrap();
    let history = dir.path().join("history.db");
    let iolab = |args: &[&str]| {
        let mut cmd = common::bin();
        let out = common::with_history(&mut cmd, &history)
            .env("NO_COLOR", "1")
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", common::stderr(&out));
        out
    };
    for f in [fixtures.join("run-a.json"), b_path] {
        iolab(&["history", "import", common::s(&f)]);
    }
    // The terminal's words for the default test, on its stderr.
    let said = common::stderr(&iolab(&["history", "trend", "--device", "/tmp/img"]));
    let said = said
        .lines()
        .find_map(|l| l.strip_prefix("iolab: showing "))
        .unwrap_or_else(|| panic!("no 'showing' line in {said}"))
        .replace("--test NAME", "choose one under test");

    let console = Console::start_in(dir, &[], Some(&history));
    let shots = console_shots().with_extension("returning");
    let mut b = Browser::start(&shots);
    b.navigate(&console.url());
    b.wait_for("the page", "document.querySelector('nav') !== null", MINUTE);

    b.eval("location.hash = '#/history'");
    b.wait_for(
        "the history list",
        "document.querySelectorAll('#history-table tbody tr').length === 2",
        MINUTE,
    );
    // The terminal list's columns, Host among them (the page left it out and named the
    // command column "test").
    let heads = b.eval(
        "[...document.querySelectorAll('#history-table thead th')].map((c) => c.textContent)",
    );
    assert_eq!(
        heads,
        serde_json::json!([
            "",
            "id",
            "started (UTC)",
            "command",
            "status",
            "host",
            "device",
            "fs",
            "headline",
            "source",
            "download"
        ])
    );
    let rows = cells(&mut b, "#history-table");
    let tests: Vec<(&str, &str, &str)> = rows
        .iter()
        .map(|r| (r[1].as_str(), r[3].as_str(), r[5].as_str()))
        .collect();
    assert_eq!(
        tests,
        [
            ("h-2", "run --preset real --size 1G", "lab1"),
            ("h-1", "run", "lab1")
        ],
        "{rows:?}"
    );
    // Its id and time each on one line, as in the terminal's list (the page broke them at
    // their hyphens beside a long headline: "h-" over "2", "2026-11-" over "01 10:00").
    let lines = b.eval(
        "[...document.querySelectorAll('#history-table tbody tr')].map((r) => [1, 2].map((i) => {
           const range = document.createRange(); range.selectNodeContents(r.children[i]);
           return range.getClientRects().length; }))",
    );
    assert_eq!(
        lines,
        serde_json::json!([[1, 1], [1, 1]]),
        "lines of id, time"
    );
    // Each time as the terminal's list gives it (`2026-11-01 10:00`, UTC), the full time in
    // its tooltip (the page showed `2026-11-01T10:00:00.000Z`).
    let list = common::stdout(&iolab(&["history"]));
    let times: Vec<(String, serde_json::Value)> = rows
        .iter()
        .map(|r| {
            let id = r[1].strip_prefix("h-").unwrap();
            (terminal_time(&list, id), serde_json::json!(r[2]))
        })
        .collect();
    for (said, shown) in &times {
        assert_eq!(&serde_json::json!(said), shown, "{list}");
    }
    // Every row's id, time, command, status, host, device, file system and headline as
    // `iolab history` lists them.
    let listed: Vec<Vec<String>> = serve_support::table_rows(&list)
        .into_iter()
        .map(|mut r| {
            r[0] = format!("h-{}", r[0]);
            r
        })
        .collect();
    let shown: Vec<Vec<String>> = rows.iter().map(|r| r[1..9].to_vec()).collect();
    assert_eq!(shown, listed, "{list}");
    // What a headline figure is, the line under the terminal's list (the page said nothing).
    let meaning = list
        .lines()
        .find(|l| l.starts_with("Headline: "))
        .unwrap_or_else(|| panic!("no Headline line in {list}"));
    let said_here = b.eval("document.getElementById('history-headline').textContent");
    assert_eq!(said_here, serde_json::json!(meaning));
    let titles = b.eval(
        "[...document.querySelectorAll('#history-table tbody tr')].map((r) => r.children[2].title)",
    );
    assert_eq!(
        titles,
        serde_json::json!([bdoc["started_at"], a["started_at"]]),
        "{rows:?}"
    );

    // A limit that hides some: the page says so as the terminal does under its list (it
    // showed the newest and said nothing of the others).
    let shown = common::stdout(&iolab(&["history", "--limit", "1"]));
    let shown = shown
        .lines()
        .find(|l| l.contains(" results shown "))
        .unwrap_or_else(|| panic!("no 'shown' line in {shown}"))
        .replace("--limit 0", "limit 0");
    b.eval("location.hash = '#/history?limit=1'");
    b.wait_for(
        "the limited list",
        "document.getElementById('history-shown') !== null",
        MINUTE,
    );
    let note = b.eval("document.getElementById('history-shown').textContent");
    assert_eq!(note, serde_json::json!(shown));

    // Filters that match nothing: how many results the history holds, as the terminal says
    // it (the page said "No results match." of any empty list).
    let cli = common::stdout(&iolab(&["history", "--device", "no-such-disk"]));
    assert!(cli.contains("the history holds 2 results"), "{cli}");
    b.eval("location.hash = '#/history?device=no-such-disk'");
    b.wait_for(
        "the empty list",
        "document.getElementById('history-none') !== null",
        MINUTE,
    );
    let none = b.eval("document.getElementById('history-none').textContent");
    assert!(
        none.as_str()
            .is_some_and(|t| t.contains("the history holds 2 results")),
        "{none}"
    );

    b.eval("location.hash = '#/trend?device=/tmp/img'");
    b.wait_for(
        "the default test's trend",
        "document.getElementById('trend-chosen') !== null",
        MINUTE,
    );
    let chosen = b.eval("document.getElementById('trend-chosen').textContent");
    assert_eq!(chosen, serde_json::json!(format!("showing {said}")));
    // The figure named as the terminal names it ("MB/s (higher better)"; the page gave the
    // key bw_bytes_per_s), and its column "Value", the median of a run's repeats as the run's
    // own table gives it, which the key under the table says (it was the mean).
    let what = b.eval("document.getElementById('trend-what').textContent");
    assert_eq!(
        what,
        serde_json::json!("/tmp/img (loop) on lab1 — SEQ1M Q8T1 read — MB/s (higher is better)")
    );
    let heads =
        b.eval("[...document.querySelectorAll('#trend-out thead th')].map((c) => c.textContent)");
    assert_eq!(heads[2], serde_json::json!("command"), "{heads}");
    assert_eq!(heads[3], serde_json::json!("Value"), "{heads}");
    let trend = common::stdout(&iolab(&["history", "trend", "--device", "/tmp/img"]));
    let rows = cells(&mut b, "#trend-out");
    let (said, shown) = (terminal_time(&trend, "1"), &rows[0][1]);
    assert_eq!(
        (heads[1].as_str(), &said),
        (Some("started (UTC)"), shown),
        "{trend}"
    );
    let title = b.eval("document.querySelector('#trend-out tbody tr').children[1].title");
    assert_eq!(title, a["started_at"]);
    let key = b.eval("document.getElementById('trend-text').textContent");
    assert!(
        key.as_str()
            .unwrap()
            .contains("Value = median of the run's repeats"),
        "{key}"
    );

    // A test started here: the Runs page gives its command with its options as the History
    // page does (it showed `run` alone), and its time as the history's.
    let target = console.dir.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let form = serde_json::json!({
        "command": "run",
        "target": target.display().to_string(),
        "options": {"rw": "randread", "bs": "4K", "size": "4M", "duration": "1s",
                    "ramp": "0s", "repeat": "1"},
    });
    let id = run_to_the_end(&console, &mut b, &form);
    b.eval("location.hash = '#/runs'");
    b.wait_for(
        "the runs list",
        "document.querySelectorAll('#main tbody tr').length === 1",
        MINUTE,
    );
    let runs = cells(&mut b, "#main");
    assert_eq!(
        (runs[0][0].as_str(), runs[0][1].as_str()),
        (
            id.as_str(),
            "run --bs 4K --duration 1s --ramp 0s --repeat 1 --rw randread --size 4M"
        )
    );
    let started = b.eval("document.querySelector('#main tbody tr').children[4].title");
    let started = started.as_str().unwrap();
    assert_eq!(
        runs[0][4],
        format!("{} {}", &started[..10], &started[11..16])
    );
    b.eval("location.hash = '#/history?id=h-3'");
    b.wait_for(
        "its history entry",
        "document.querySelectorAll('#history-table tbody tr').length === 1",
        MINUTE,
    );
    assert_eq!(cells(&mut b, "#history-table")[0][3], runs[0][1]);
    // No flag is broken at its hyphens where the cell wraps ("--ramp 0s -" over "-repeat 1"):
    // each is one unit, on one line.
    let flags = b.eval(
        "[...document.querySelectorAll('#history-table td.command span.flag')].map((s) => [s.textContent, s.getClientRects().length])",
    );
    let flags = flags.as_array().unwrap_or_else(|| panic!("{flags}"));
    assert_eq!(flags.len(), 6, "{flags:?}");
    assert!(flags.iter().all(|f| f[1] == 1), "{flags:?}");

    // A run with a long option (a list of 60 sizes, no space in it): the command cell
    // gives it whole and the table stays within the page (one long word widened it).
    let sizes: Vec<String> = (1..=60).map(|k| format!("{k}K")).collect();
    let mut long = a.clone();
    long["command"] = serde_json::json!("files");
    long["argv"] = serde_json::json!(["iolab", "files", "--sizes", sizes.join(","), "/mnt/test"]);
    long["started_at"] = serde_json::json!("2026-11-02T10:00:00.000Z");
    let long_path = console.dir.path().join("long-options.json");
    std::fs::write(&long_path, serde_json::to_string(&long).unwrap()).unwrap();
    iolab(&["history", "import", common::s(&long_path)]);
    b.eval("location.hash = '#/history?id=h-4'");
    b.wait_for(
        "the entry with a long option",
        "document.querySelectorAll('#history-table tbody tr').length === 1",
        MINUTE,
    );
    assert_eq!(
        cells(&mut b, "#history-table")[0][3],
        format!("files --sizes {}", sizes.join(","))
    );
    let fits = b.eval(
        "document.querySelector('#history-table table').getBoundingClientRect().right <= document.documentElement.clientWidth",
    );
    assert_eq!(
        fits,
        serde_json::json!(true),
        "the table is wider than the page"
    );

    drop(b);
    let mut console = console;
    assert_eq!(console.stop(), Some(0), "stderr: {}", console.stderr());
    let _ = std::fs::remove_dir_all(&shots);
}

/// The Started column of entry `id` in a terminal table (`iolab history`, its trend).
fn terminal_time(table: &str, id: &str) -> String {
    table
        .lines()
        .map(|l| {
            l.split('┆')
                .map(|c| c.trim_matches(['│', ' ']))
                .collect::<Vec<_>>()
        })
        .find(|c| c.len() > 2 && c[0] == id)
        .unwrap_or_else(|| panic!("no row {id} in {table}"))[1]
        .to_string()
}

fn console_shots() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("serve-views-shots-{}", std::process::id()))
}

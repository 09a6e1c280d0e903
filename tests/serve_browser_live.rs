//! The live run page in a real browser (headless Chromium, tests/serve_support/cdp.rs), fed
//! a progress stream the test writes itself: the page's own `fetch` of `/api/runs/run-fake`
//! answers with the events the test has pushed so far, so every step is exact and nothing
//! depends on how fast a real test runs. No timing: every wait is a poll with a limit.

mod common;
mod serve_support;

use std::time::Duration;

use serde_json::json;
use serve_support::Console;
use serve_support::cdp::Browser;

const MINUTE: Duration = Duration::from_secs(60);

/// Answers `/api/runs/run-fake?since=N` from `window.__events` (status `window.__status`,
/// command `window.__command`),
/// as the console's job view does (src/serve/jobs.rs JobView); everything else goes to the
/// console.
const FAKE_RUN: &str = r#"(() => {
  window.__events = []; window.__status = "running"; window.__command = "run";
  if (!window.__fetch) {
    window.__fetch = window.fetch;
    window.fetch = (...a) => {
      const u = String(a[0]);
      if (!u.startsWith('/api/runs/run-fake')) return window.__fetch(...a);
      const since = Number(new URL(u, location.href).searchParams.get('since') || 0);
      const body = { id: 'run-fake', command: window.__command, target: '/dev/shm/x', argv: ['iolab', window.__command],
        started_at: '2026-01-01T00:00:00Z', live_points: window.__command !== 'files', status: window.__status,
        exit_code: null, result: null, history: null, events: window.__events.slice(since),
        next: window.__events.length, stdout: '', stderr: '' };
      return Promise.resolve(new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } }));
    };
  }
  return true;
})()"#;

fn push(b: &mut Browser, events: &[serde_json::Value]) {
    let js = format!(
        "(() => {{ window.__events.push(...{}); return true; }})()",
        serde_json::Value::from(events.to_vec())
    );
    assert_eq!(b.eval(&js), json!(true));
}

/// A live point at `t_ms` since the stream opened, `elapsed_ms` into its task.
fn point(label: &str, t_ms: u64, elapsed_ms: u64, fraction: f64) -> serde_json::Value {
    json!({"event": "point", "t_ms": t_ms, "label": label, "fraction": fraction,
           "elapsed_ms": elapsed_ms, "iops": 1000.0, "bw_bytes_per_s": 4.096e6, "lat_mean_ns": 250000.0})
}

/// What the page shows of the run now: the task line, the bar's width, the task the charts
/// show, the IOPS chart's number of points, and its text when it has none.
fn seen(b: &mut Browser) -> serde_json::Value {
    b.eval(
        "(() => { const c = document.getElementById('chart-iops'); const t = c ? [...c.querySelectorAll('text')].map((x) => x.textContent) : [];
          return { label: document.getElementById('run-label').textContent,
                   bar: document.querySelector('.bar > div').style.width,
                   title: document.getElementById('charts-task').textContent,
                   points: c ? c.querySelectorAll('circle').length : null,
                   empty: t.length === 2 ? t[1] : null }; })()",
    )
}

/// Close the browser, stop the console (exit 0) and remove the screenshots.
fn finish(mut console: Console, b: Browser, shots: &std::path::Path) {
    drop(b);
    assert_eq!(console.stop(), Some(0), "stderr: {}", console.stderr());
    let _ = std::fs::remove_dir_all(shots);
}

/// Start the console and a browser on it, with the scripted run ready.
fn console_and_browser(name: &str) -> (Console, Browser, std::path::PathBuf) {
    let console = Console::start(&[]);
    let shots = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("serve-live-shots-{name}-{}", std::process::id()));
    let mut b = Browser::start(&shots);
    b.navigate(&console.url());
    b.wait_for("the page", "document.querySelector('nav') !== null", MINUTE);
    assert_eq!(b.eval(FAKE_RUN), json!(true));
    (console, b, shots)
}

/// A new test of a suite starts: the page shows it from its start event (the bar at 0, its
/// own empty charts named after it). It kept the bar at 100 % and the previous test's charts
/// until the new test's first point came, 500 ms later. A pause between runs (no live
/// figures) says so instead of "waiting for data…".
#[test]
fn a_new_test_shows_from_its_start() {
    let test = "a_new_test_shows_from_its_start";
    if !common::tool_or_skip(test, "chromium", "chromium") {
        return;
    }
    let (console, mut b, shots) = console_and_browser("start");

    // The first test, measured to its end.
    let a = "SEQ1M Q8T1 read [1/1]";
    push(
        &mut b,
        &[
            json!({"event": "task_start", "t_ms": 0, "label": a}),
            point(a, 500, 500, 0.5),
            point(a, 1000, 1000, 1.0),
        ],
    );
    b.eval("location.hash = '#/run/run-fake'; true");
    b.wait_for(
        "the first test's two points",
        "document.querySelectorAll('#chart-iops circle').length === 2",
        MINUTE,
    );
    let v = seen(&mut b);
    assert_eq!(v["bar"], json!("100%"), "{v}");
    assert_eq!(v["title"], json!("charts of SEQ1M Q8T1 read [1/1]"), "{v}");

    // It ends and the next starts: no point of it yet.
    let next = "RND4K Q32T1 read [1/1]";
    push(
        &mut b,
        &[
            json!({"event": "task_end", "t_ms": 1010, "label": a, "message": "4.1 MB/s, 1,000 IOPS"}),
            json!({"event": "task_start", "t_ms": 1020, "label": next}),
        ],
    );
    b.wait_for(
        "the next test's line",
        &format!("document.getElementById('run-label').textContent === {next:?}"),
        MINUTE,
    );
    let v = seen(&mut b);
    assert_eq!(v["bar"], json!("0%"), "the bar of a test just started: {v}");
    assert_eq!(v["title"], json!("charts of RND4K Q32T1 read [1/1]"), "{v}");
    assert_eq!(v["points"], json!(0), "the previous test's points: {v}");
    assert_eq!(v["empty"], json!("waiting for data…"), "{v}");
    b.shot("next-test-started");

    // Its first point: its own chart.
    push(&mut b, &[point(next, 1520, 500, 0.25)]);
    b.wait_for(
        "the next test's first point",
        "document.querySelectorAll('#chart-iops circle').length === 1",
        MINUTE,
    );
    let v = seen(&mut b);
    assert_eq!(v["bar"], json!("25%"), "{v}");
    // Its time axis: how far into the test (0.5 s), not since the command started (1.5 s,
    // for a test that had run 0.5 s).
    let axis = b.eval(
        "[...document.querySelectorAll('#chart-iops text')].map((t) => t.textContent).filter((t) => /^[0-9.]+ s$/.test(t))",
    );
    assert_eq!(axis, json!(["0.5 s"]), "{v}");
    assert_eq!(v["title"], json!("charts of RND4K Q32T1 read [1/1]"), "{v}");

    // A pause between runs: no live figures, and the page says so.
    let pause = "pause 1 s (--pause)";
    push(
        &mut b,
        &[
            json!({"event": "task_end", "t_ms": 3000, "label": next, "message": "ok"}),
            json!({"event": "task_start", "t_ms": 3010, "label": pause}),
        ],
    );
    b.wait_for(
        "the pause's line",
        &format!("document.getElementById('run-label').textContent === {pause:?}"),
        MINUTE,
    );
    let v = seen(&mut b);
    assert_eq!(v["bar"], json!("0%"), "{v}");
    assert_eq!(v["points"], json!(0), "{v}");
    assert_eq!(v["empty"], json!("no live figures during pause"), "{v}");
    b.shot("pause");

    finish(console, b, &shots);
}

/// A long task name (a sustain pass, a saturate step) does not run into the charts' figures:
/// it was in each chart's title, where "mean latency — first pass: SEQ4K Q8T1 write 4.0 GiB"
/// ran over the "now 29.4 µs" at its right.
#[test]
fn a_long_task_name_does_not_run_into_the_figures() {
    let test = "a_long_task_name_does_not_run_into_the_figures";
    if !common::tool_or_skip(test, "chromium", "chromium") {
        return;
    }
    let (console, mut b, shots) = console_and_browser("long");
    let pass = "first pass: SEQ4K Q8T1 write 4.0 GiB";
    push(
        &mut b,
        &[
            json!({"event": "task_start", "t_ms": 0, "label": pass}),
            point(pass, 600, 600, 0.1),
            point(pass, 1200, 1200, 0.2),
        ],
    );
    b.eval("location.hash = '#/run/run-fake'; true");
    b.wait_for(
        "the pass's two points",
        "document.querySelectorAll('#chart-lat circle').length === 2",
        MINUTE,
    );
    b.shot("long-task");
    // Per chart: its title's right end and the left end of its "now …" figure.
    let v = b.eval(
        "[...document.querySelectorAll('#charts svg')].map((c) => {
           const t = [...c.querySelectorAll('text')];
           const title = t[0].getBBox(), now = t.find((x) => x.textContent.startsWith('now ')).getBBox();
           return [c.id, t[0].textContent, title.x + title.width, now.x]; })",
    );
    let charts = v.as_array().unwrap_or_else(|| panic!("{v}"));
    assert_eq!(charts.len(), 3, "{v}");
    for c in charts {
        assert!(
            c[2].as_f64().unwrap() < c[3].as_f64().unwrap(),
            "the title runs into the figure: {c}"
        );
    }
    assert_eq!(
        seen(&mut b)["title"],
        json!(format!("charts of {pass}")),
        "the task the charts show"
    );

    finish(console, b, &shots);
}

/// A suite stopped in its second test: one test done (it read 2: the stopped one counted),
/// the bar where it stopped (it went to 100 %), and the stopped test's empty charts say it
/// ended ("waiting for data…" on a test that had ended).
#[test]
fn a_stopped_test_ends_where_it_stopped() {
    let test = "a_stopped_test_ends_where_it_stopped";
    if !common::tool_or_skip(test, "chromium", "chromium") {
        return;
    }
    let (console, mut b, shots) = console_and_browser("stopped");
    let a = "SEQ1M Q8T1 read [1/1]";
    let next = "SEQ1M Q1T1 read [1/1]";
    push(
        &mut b,
        &[
            json!({"event": "task_start", "t_ms": 0, "label": a}),
            point(a, 500, 500, 0.5),
            json!({"event": "task_end", "t_ms": 1010, "label": a, "message": "4.1 MB/s, 1,000 IOPS"}),
            json!({"event": "task_start", "t_ms": 1020, "label": next}),
            json!({"event": "progress", "t_ms": 1270, "label": next, "fraction": 0.3, "message": "4.0 MB/s"}),
            json!({"event": "note", "t_ms": 1300, "label": next, "message": "iolab: stopping (SIGINT): ending as interrupted"}),
            json!({"event": "task_end", "t_ms": 1310, "label": next, "message": "interrupted"}),
        ],
    );
    b.eval("window.__status = 'interrupted'; location.hash = '#/run/run-fake'; true");
    b.wait_for(
        "the end",
        "document.getElementById('run-label').textContent.startsWith('ended (interrupted')",
        MINUTE,
    );
    b.shot("stopped");
    let done = b.eval("document.getElementById('tests-done').textContent");
    assert_eq!(done, json!("1"), "tests done");
    let v = seen(&mut b);
    assert_eq!(v["bar"], json!("30%"), "{v}");
    assert_eq!(v["title"], json!(format!("charts of {next}")), "{v}");
    assert_eq!(v["empty"], json!("it ended before its first point"), "{v}");

    finish(console, b, &shots);
}

/// A files test stopped in its first size: no test done. The removal of its work directory
/// after the stop (a task of its own, "removing the files test's work directory") counted
/// as one.
#[test]
fn removing_the_work_directory_is_not_a_test() {
    let test = "removing_the_work_directory_is_not_a_test";
    if !common::tool_or_skip(test, "chromium", "chromium") {
        return;
    }
    let (console, mut b, shots) = console_and_browser("removing");
    let size = "4KiB [1/2]";
    let rm = "removing the files test's work directory";
    push(
        &mut b,
        &[
            json!({"event": "task_start", "t_ms": 15, "label": size}),
            json!({"event": "progress", "t_ms": 330, "label": size, "fraction": 0.03125, "message": "create"}),
            json!({"event": "task_end", "t_ms": 2538, "label": size, "message": "stopped"}),
            json!({"event": "task_start", "t_ms": 2540, "label": rm}),
            json!({"event": "task_end", "t_ms": 5468, "label": rm, "message": "removed"}),
        ],
    );
    b.eval(
        "window.__command = 'files'; window.__status = 'interrupted'; location.hash = '#/run/run-fake'; true",
    );
    b.wait_for(
        "the end",
        "document.getElementById('run-label').textContent.startsWith('ended (interrupted')",
        MINUTE,
    );
    let done = b.eval("document.getElementById('tests-done').textContent");
    assert_eq!(done, json!("0"), "tests done");

    finish(console, b, &shots);
}

/// A files test counts sizes, its tasks ("1 B [1/2]"), each a row of its first table: the
/// page said "tests done: 2" (its second table has 8 tests, "1 B create", …) and "live
/// points: 0" (it has no live series).
#[test]
fn a_files_test_counts_its_sizes() {
    let test = "a_files_test_counts_its_sizes";
    if !common::tool_or_skip(test, "chromium", "chromium") {
        return;
    }
    let (console, mut b, shots) = console_and_browser("files");
    let mut events = Vec::new();
    for (i, label) in ["1 B [1/2]", "1 B [2/2]", "4KiB [1/2]", "4KiB [2/2]"]
        .iter()
        .enumerate()
    {
        let t = 20 * i as u64;
        events.push(json!({"event": "task_start", "t_ms": t, "label": label}));
        events.push(json!({"event": "task_end", "t_ms": t + 10, "label": label, "message": "50,637 files/s"}));
    }
    push(&mut b, &events);
    b.eval(
        "window.__command = 'files'; window.__status = 'complete'; location.hash = '#/run/run-fake'; true",
    );
    b.wait_for(
        "the end",
        "document.getElementById('run-label').textContent.startsWith('ended (complete')",
        MINUTE,
    );
    let line = b.eval("document.getElementById('tests-done').parentElement.textContent");
    assert_eq!(line, json!("sizes done: 2"));

    finish(console, b, &shots);
}

/// The figure so far stays beside the task: a live point (which has no message) came after
/// the progress event of the same moment and took it away ("randread depth 1 (step 1,
/// sweep)" alone, every other poll).
#[test]
fn the_figure_so_far_stays_beside_the_task() {
    let test = "the_figure_so_far_stays_beside_the_task";
    if !common::tool_or_skip(test, "chromium", "chromium") {
        return;
    }
    let (console, mut b, shots) = console_and_browser("figure");
    let step = "randread depth 1 (step 1, sweep)";
    push(
        &mut b,
        &[
            json!({"event": "task_start", "t_ms": 137, "label": step}),
            json!({"event": "progress", "t_ms": 639, "label": step, "fraction": 0.4177, "message": "149,698 IOPS"}),
            point(step, 639, 501, 0.4178),
        ],
    );
    b.eval("location.hash = '#/run/run-fake'; true");
    b.wait_for(
        "the point",
        "document.querySelectorAll('#chart-iops circle').length === 1",
        MINUTE,
    );
    let v = seen(&mut b);
    assert_eq!(v["label"], json!(format!("{step} — 149,698 IOPS")), "{v}");
    assert_eq!(v["bar"], json!("42%"), "{v}");

    finish(console, b, &shots);
}

/// A test refused by its own checks (exit 2) before its first task: its empty charts say it
/// has no live figures, naming no task (they said "waiting for data…" after it had ended).
#[test]
fn a_test_refused_before_its_first_task_waits_for_nothing() {
    let test = "a_test_refused_before_its_first_task_waits_for_nothing";
    if !common::tool_or_skip(test, "chromium", "chromium") {
        return;
    }
    let (console, mut b, shots) = console_and_browser("refused");
    b.eval("window.__status = 'refused'; location.hash = '#/run/run-fake'; true");
    b.wait_for(
        "the end",
        "document.getElementById('run-label').textContent.startsWith('ended (refused')",
        MINUTE,
    );
    let v = seen(&mut b);
    assert_eq!(v["empty"], json!("no live figures"), "{v}");
    assert_eq!(v["title"], json!(""), "{v}");
    assert_eq!(v["bar"], json!("0%"), "{v}");

    finish(console, b, &shots);
}

/// A saturate sweep's live charts show the ramp: every depth step so far in one chart, over
/// the time since the sweep's first point. Each step's chart started again from nothing
/// (its own task), so the rise of IOPS and latency with the depth was never on screen. Out
/// of the stream as it is: each point's `t_ms` and its step's label.
#[test]
fn a_sweeps_steps_are_one_chart() {
    let test = "a_sweeps_steps_are_one_chart";
    if !common::tool_or_skip(test, "chromium", "chromium") {
        return;
    }
    let (console, mut b, shots) = console_and_browser("sweep");
    let s1 = "randread depth 1 (step 1, sweep)";
    let s2 = "randread depth 2 (step 2, sweep)";
    push(
        &mut b,
        &[
            json!({"event": "task_start", "t_ms": 100, "label": "prefill /dev/shm/x/iolab-test.dat"}),
            json!({"event": "task_end", "t_ms": 400, "label": "prefill /dev/shm/x/iolab-test.dat", "message": "done"}),
            json!({"event": "task_start", "t_ms": 500, "label": s1}),
            point(s1, 1000, 500, 0.5),
            point(s1, 1500, 1000, 1.0),
            json!({"event": "task_end", "t_ms": 1510, "label": s1, "message": "1,000 IOPS"}),
            json!({"event": "task_start", "t_ms": 1520, "label": s2}),
            point(s2, 2020, 500, 0.5),
        ],
    );
    b.eval("window.__command = 'saturate'; location.hash = '#/run/run-fake'; true");
    b.wait_for(
        "the three points of both steps",
        "document.querySelectorAll('#chart-iops circle').length === 3",
        MINUTE,
    );
    b.shot("sweep");
    let v = seen(&mut b);
    assert_eq!(
        v["title"],
        json!("charts of randread: every depth step so far (now depth 2 (step 2, sweep))"),
        "{v}"
    );
    // Its axis runs from the sweep's first point (0.0 s) to the last (1.0 s later).
    let axis = b.eval(
        "[...document.querySelectorAll('#chart-iops text')].map((t) => t.textContent).filter((t) => / s$/.test(t))",
    );
    assert_eq!(axis, json!(["0.0 s", "1.0 s"]), "{axis}");
    // What it counts are steps of its one test (it read "tests done: 1" here, 4 at the end
    // of a sweep of one test).
    let line = b.eval("document.getElementById('tests-done').parentElement.textContent");
    assert_eq!(line, json!("live points: 3 · steps done: 1"));
    // Another kind of test still has a chart per task.
    let a = "SEQ1M Q8T1 read [1/1]";
    push(
        &mut b,
        &[
            json!({"event": "task_start", "t_ms": 3000, "label": a}),
            point(a, 3500, 500, 0.5),
        ],
    );
    b.wait_for(
        "the new test's own chart",
        "document.getElementById('charts-task').textContent === 'charts of SEQ1M Q8T1 read [1/1]' && document.querySelectorAll('#chart-iops circle').length === 1",
        MINUTE,
    );

    finish(console, b, &shots);
}

//! `iolab serve` end to end in a real browser: headless Chromium (Debian's `chromium`,
//! driven over the DevTools protocol on a pipe, tests/serve_support/cdp.rs) opens the
//! console, is refused a destructive run without the typed name, starts a `run` on a loop
//! device over /dev/shm with the name typed, sees live points and its stderr come in,
//! presses Stop, sees the partial result, finds it in the history, runs a second test and
//! compares the two.
//! A screenshot of every step is kept (and its folder printed) when the test fails, or
//! always with IOLAB_KEEP_SHOTS=1.
//!
//! Timing: the first run (a suite of eight 3 s tests) is stopped after three live points
//! (one every 500 ms) and the end of its first test, which a later test of the suite is
//! still measuring whatever the machine's speed; every wait is a poll with a limit of a
//! minute or more, so a slow machine only makes the test slower.

mod common;
mod serve_support;

use std::time::Duration;

use serve_support::Console;
use serve_support::cdp::Browser;

/// Keeps the screenshots' folder when the test fails (and says where), removes it otherwise.
struct Shots(std::path::PathBuf);

impl Drop for Shots {
    fn drop(&mut self) {
        // IOLAB_KEEP_SHOTS=1 keeps them after a pass too (to look at the pages).
        if std::thread::panicking() || std::env::var_os("IOLAB_KEEP_SHOTS").is_some() {
            eprintln!("screenshots of each step: {}", self.0.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

const MINUTE: Duration = Duration::from_secs(60);

/// Set the form's fields (`id` -> value) and press Start.
fn fill_and_start(b: &mut Browser, fields: &[(&str, &str)]) {
    let mut js = String::from("(() => {");
    for (id, v) in fields {
        js.push_str(&format!(
            "const e_{k} = document.getElementById({id:?}); e_{k}.value = {v:?}; e_{k}.dispatchEvent(new Event('change'));",
            k = id.replace('-', "_"),
        ));
    }
    js.push_str("document.getElementById('start').click(); return true; })()");
    let r = b.eval(&js);
    assert_eq!(r, serde_json::json!(true), "filling the form: {r}");
}

#[test]
fn console_end_to_end_in_chromium() {
    let test = "console_end_to_end_in_chromium";
    if !common::loop_or_skip(test) || !common::tool_or_skip(test, "chromium", "chromium") {
        return;
    }
    let Some(ram) = common::ram_tempdir_or_skip(test) else {
        return;
    };
    // The device under test: a 64 MiB image on tmpfs behind a loop device of our own.
    let img = ram.path().join("console.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let lo = iolab::fs::loopdev::LoopDevice::attach(&img, false).unwrap();
    let dev = lo.device.display().to_string();

    let console = Console::start(&[]);
    let shots = Shots(
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("serve-browser-shots-{}", std::process::id())),
    );
    let mut b = Browser::start(&shots.0);

    // 1. The page, through the URL with the token (then the cookie).
    b.navigate(&console.url());
    b.wait_for(
        "the machine page",
        "document.querySelectorAll('#main table').length >= 2",
        MINUTE,
    );
    let listed = b.eval(&format!(
        "document.getElementById('main').innerText.includes({dev:?})"
    ));
    assert_eq!(listed, serde_json::json!(true), "{dev} is not listed");
    b.shot("machine");

    // 2. A destructive run without the typed name is refused, with the command line's words.
    b.eval("location.hash = '#/new'");
    b.wait_for(
        "the form",
        "document.getElementById('opt-duration')",
        MINUTE,
    );
    let first = [
        ("cmd", "run"),
        ("target", dev.as_str()),
        ("opt-preset", "default"),
        ("opt-duration", "3s"),
        ("opt-repeat", "1"),
        ("opt-size", "32M"),
    ];
    fill_and_start(&mut b, &first);
    let refusal = b.wait_for(
        "the refusal",
        "document.getElementById('form-error').textContent",
        MINUTE,
    );
    let refusal = refusal.as_str().unwrap().to_string();
    assert!(
        refusal.contains("--allow-destroy") && refusal.contains(&dev),
        "{refusal}"
    );
    b.shot("refused-without-name");

    // 3. With the name typed: the run starts and its live points come in.
    let mut with_name = first.to_vec();
    with_name.push(("confirm", dev.as_str()));
    fill_and_start(&mut b, &with_name);
    b.wait_for(
        "the live view",
        "location.hash.startsWith('#/run/') && document.getElementById('point-count')",
        MINUTE,
    );
    b.wait_for(
        "three live points",
        "Number(document.getElementById('point-count').textContent) >= 3 && document.querySelectorAll('#chart-iops circle').length >= 3",
        Duration::from_secs(120),
    );
    b.shot("live");
    // Stopped once the first test is done, so the partial result holds a measured test.
    b.wait_for(
        "the first test to end",
        "Number(document.getElementById('tests-done').textContent) >= 1",
        Duration::from_secs(120),
    );
    // Its stderr as the test writes it, where the end shows it (it came only at the end):
    // the first test's line, while a later test of the suite runs.
    b.wait_for(
        "the first test's stderr line while the run goes on",
        "document.getElementById('run-status').textContent === 'running' && (document.getElementById('run-stderr') || {}).textContent.includes('iolab: SEQ1M Q8T1 read [1/1] done in ')",
        Duration::from_secs(120),
    );
    b.shot("live-stderr");

    // 4. Stop: the child gets SIGINT, saves the partial result and ends "interrupted".
    b.eval("document.getElementById('stop').click()");
    b.wait_for(
        "the interrupted status and the result",
        "document.getElementById('run-status').textContent === 'interrupted' && document.getElementById('result-id')",
        Duration::from_secs(120),
    );
    let table = b.eval("document.getElementById('result-table').textContent");
    assert!(
        table.as_str().unwrap_or("").contains("SEQ1M Q8T1 read"),
        "the partial result's table: {table}"
    );
    // The end's stderr, each line once (the live one was not kept beside it).
    let stderr = b.eval("document.getElementById('run-stderr').textContent");
    let stderr = stderr.as_str().unwrap_or("");
    assert_eq!(
        stderr.matches("iolab: SEQ1M Q8T1 read [1/1] ...").count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("iolab: stopping (SIGINT): "), "{stderr}");
    let entry = b.wait_for(
        "its history entry",
        "document.getElementById('history-id') && document.getElementById('history-id').textContent",
        MINUTE,
    );
    let entry = entry.as_str().unwrap().to_string();
    assert!(entry.starts_with("h-"), "{entry}");
    b.shot("stopped");

    // 5. Its link shows its history entry (it led to the whole list), interrupted.
    b.eval("document.getElementById('history-id').click()");
    let row = b.wait_for(
        "the interrupted run in the history",
        &format!(
            "(document.querySelector('#history-table tr[data-id={entry:?}]') || {{}}).innerText"
        ),
        MINUTE,
    );
    assert!(
        row.as_str().unwrap().contains("interrupted"),
        "history row {entry}: {row}"
    );
    let rows = b.eval("document.querySelectorAll('#history-table tr[data-id]').length");
    assert_eq!(rows.as_u64(), Some(1), "only its entry");
    b.shot("history");

    // 6. A second, complete run on the same device (one second per test).
    b.eval("location.hash = '#/new'");
    b.wait_for(
        "the form",
        "document.getElementById('opt-duration')",
        MINUTE,
    );
    let second = [
        ("cmd", "run"),
        ("target", dev.as_str()),
        ("opt-preset", "default"),
        ("opt-duration", "1s"),
        ("opt-ramp", "100ms"),
        ("opt-repeat", "1"),
        ("opt-size", "32M"),
        ("confirm", dev.as_str()),
    ];
    fill_and_start(&mut b, &second);
    b.wait_for(
        "the second run to complete",
        "location.hash.startsWith('#/run/') && document.getElementById('run-status').textContent === 'complete' && document.getElementById('result-id')",
        Duration::from_secs(300),
    );
    b.shot("second-complete");

    // 7. Compare the two from the history.
    b.eval("location.hash = '#/history'");
    b.wait_for(
        "both runs in the history",
        "document.querySelectorAll('#history-table tr[data-id]').length >= 2",
        MINUTE,
    );
    b.eval(
        "(() => { for (const r of [...document.querySelectorAll('#history-table tr[data-id]')].slice(0, 2)) r.querySelector('input.pick').checked = true; document.getElementById('compare-btn').click(); return true; })()",
    );
    let text = b.wait_for(
        "the comparison",
        "document.getElementById('compare-text') && document.getElementById('compare-text').textContent",
        MINUTE,
    );
    assert!(
        text.as_str().unwrap_or("").contains("SEQ1M Q8T1 read"),
        "comparison: {text}"
    );
    b.shot("compare");

    // 8. The device's trend over the two results.
    let name = lo.name();
    b.eval(&format!(
        "location.hash = '#/trend?device={name}&test=SEQ1M%20Q8T1%20read'"
    ));
    b.wait_for(
        "the trend's two points",
        "document.querySelectorAll('#chart-trend circle').length === 2",
        MINUTE,
    );
    // Its health over time (a loop device has no SMART: the page says so).
    b.wait_for(
        "the health history",
        "document.getElementById('health-history').textContent",
        MINUTE,
    );
    b.shot("trend");

    drop(b);
    let mut console = console;
    assert_eq!(console.stop(), Some(0), "stderr: {}", console.stderr());
    drop(lo);
}

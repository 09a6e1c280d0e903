//! The time series (`--interval`) and the idle time between runs (`--pause`).

use super::*;

/// `--interval`: the time series' resolution; a timed run's window is whole intervals, each
/// point `interval_ms` apart, their I/Os within the run's; the default is 100 ms.
#[test]
fn interval_sets_the_series_resolution() {
    let d = tempdir();
    let run = |extra: &[&str]| {
        // Time-based by nature; on the null engine, so every interval has I/Os whatever the
        // shared disk does.
        let mut args = vec!["run", "--engine", "null", "--rw", "randread", "--bs", "4k"];
        args.extend_from_slice(&["--repeat", "1", "--duration", "200ms", "--ramp", "0"]);
        args.extend_from_slice(&["--size", "8M", "--json", "--no-save"]);
        args.extend_from_slice(extra);
        json_ok(&iolab_in(d.path(), &args))
    };
    for (extra, ms, points) in [
        (&["--interval", "20ms"][..], 20, 10),
        (&[][..], 100, 2),
        (&["--interval", "200ms"][..], 200, 1),
    ] {
        let doc = run(extra);
        let r = &doc["tests"][0]["runs"][0];
        assert_eq!(r["interval_ms"], ms, "{extra:?}");
        let pts = r["intervals"].as_array().unwrap();
        // Whole intervals of the 200 ms asked for, and none beyond the run's own end: a
        // loaded machine stops the run a little late, and a whole interval in that overshoot
        // counts too (seen: 11 points of 20 ms). One in which nothing completed (the job
        // thread not run at all then) is a point of its own, with no I/O (seen at load ~13:
        // 9 points of 20 ms in a run of 200 ms, the last interval missing).
        let elapsed_ms = r["elapsed_ns"].as_u64().unwrap() / 1_000_000;
        assert!(
            pts.len() >= points && pts.len() as u64 <= elapsed_ms.div_ceil(ms),
            "{extra:?}: {} points of {ms} ms in a run of {elapsed_ms} ms (200 asked)",
            pts.len()
        );
        for (i, p) in pts.iter().enumerate() {
            assert_eq!(p["t_ms"].as_u64(), Some((i as u64 + 1) * ms), "{extra:?}");
            let rate = p["ios"].as_f64().unwrap() * 1000.0 / ms as f64;
            assert!(
                (p["iops"].as_f64().unwrap() - rate).abs() < 1e-6,
                "{extra:?}"
            );
        }
        let in_points: u64 = pts.iter().map(|p| p["ios"].as_u64().unwrap()).sum();
        assert!(in_points > 0 && in_points <= r["ops"].as_u64().unwrap());
    }
}

/// A size-based run (`--io-size`) ends anywhere in an interval: its series kept whole
/// intervals only and dropped the I/Os of the last, partial one (4 points holding 8,533 of a
/// run's 16,384 I/Os). Now the series ends with that part, its rates over its own length,
/// and adds up to the run. On the null engine with a small interval, so that whatever the
/// machine's speed the run spans several intervals and ends inside one (or, at worst, holds
/// only the partial one, which must add up all the same).
#[test]
fn a_size_based_series_adds_up_to_the_run() {
    let d = tempdir();
    let mut args = vec!["run", "--engine", "null", "--rw", "randread", "--bs", "4k"];
    args.extend_from_slice(&["--io-size", "256M", "--interval", "1ms", "--repeat", "2"]);
    args.extend_from_slice(&["--ramp", "0", "--size", "8M", "--json", "--no-save"]);
    let doc = json_ok(&iolab_in(d.path(), &args));
    for r in doc["tests"][0]["runs"].as_array().unwrap() {
        let pts = r["intervals"].as_array().unwrap();
        let sum = |k: &str| pts.iter().map(|p| p[k].as_u64().unwrap()).sum::<u64>();
        assert_eq!(sum("ios"), r["ops"].as_u64().unwrap(), "{r}");
        assert_eq!(sum("bytes"), r["bytes"].as_u64().unwrap(), "{r}");
        let elapsed_ns = r["elapsed_ns"].as_u64().unwrap();
        let last = pts.last().unwrap();
        assert_eq!(
            last["t_ms"].as_u64().unwrap(),
            elapsed_ns.div_ceil(1_000_000)
        );
        // The partial point's rate is over its own length, not a whole interval.
        let whole = elapsed_ns / 1_000_000;
        if elapsed_ns % 1_000_000 != 0 {
            let len_s = (elapsed_ns - whole * 1_000_000) as f64 / 1e9;
            let want = last["ios"].as_f64().unwrap() / len_s;
            let got = last["iops"].as_f64().unwrap();
            assert!((got - want).abs() <= 1e-6 * want, "{got} vs {want}");
        }
    }
}

/// `--pause`: idle time before every run but the first, over all tests; recorded in every
/// test's settings and said in the table's footer; without it, no pause and no field.
#[test]
fn pause_idles_between_runs_and_is_recorded() {
    let d = tempdir();
    let args = |pause: &'static str| {
        let mut a = vec!["run", "--engine", "null", "--preset", "real"];
        a.extend_from_slice(&["--repeat", "2", "--duration", "100ms", "--ramp", "0"]);
        a.extend_from_slice(&["--size", "8M", "--no-save", "--pause", pause]);
        a
    };
    // The real preset: SEQ1M Q1T1 and RND4K Q1T1, read and write, 2 runs each, so 7 pauses
    // of 0.2 s: the command cannot end sooner than 1.4 s (a lower bound only).
    let t = std::time::Instant::now();
    let out = iolab_in(d.path(), &args("200ms"));
    let took = t.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        took >= std::time::Duration::from_millis(1400),
        "7 pauses of 0.2 s, yet the command took {took:?}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("pause 0.2 s (--pause) done").count(),
        7,
        "a pause before every run but the first:\n{stderr}"
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("0.2 s idle before each run after the first"),
        "{table}"
    );

    let mut json_args = args("200ms");
    json_args.push("--json");
    let doc = json_ok(&iolab_in(d.path(), &json_args));
    check_schema(&doc);
    let tests = doc["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 4);
    for t in tests {
        assert_eq!(t["settings"]["pause_s"], 0.2);
    }
    let mut none = args("0");
    none.push("--json");
    let doc = json_ok(&iolab_in(d.path(), &none));
    assert!(doc["tests"][0]["settings"].get("pause_s").is_none());
}

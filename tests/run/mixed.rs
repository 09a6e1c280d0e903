//! Mixed tests (randrw, readwrite): reads and writes reported apart, adding up to the whole.

use super::*;

/// A mixed test reports its reads and its writes apart (JSON `runs[].read`/`write`, their
/// summaries, the table's two rows under the test), adding up to the whole; tests of one
/// direction have no such parts.
#[test]
fn mixed_tests_report_reads_and_writes_apart() {
    // The sync engine keeps one I/O in flight per job (a deeper --iodepth is refused).
    for (engine, rw, qd, label) in [
        ("sync", "randrw", "1", "RND4K Q1T1 mixed 70% read"),
        ("uring", "randrw", "4", "RND4K Q4T1 mixed 70% read"),
        ("null", "randrw", "4", "RND4K Q4T1 mixed 70% read"),
        ("uring", "readwrite", "4", "SEQ4K Q4T1 mixed 70% read"),
    ] {
        let d = tempdir();
        let out = iolab_in(
            d.path(),
            &[
                "run",
                "--engine",
                engine,
                "--rw",
                rw,
                "--rwmix-read",
                "70",
                "--bs",
                "4k",
                "--iodepth",
                qd,
                "--repeat",
                "2",
                "--io-size",
                "8M",
                "--ramp",
                "0",
                "--size",
                "8M",
            ],
        );
        assert!(
            out.status.success(),
            "{engine}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let table = String::from_utf8_lossy(&out.stdout);
        let lines: Vec<&str> = table.lines().collect();
        let row = lines
            .iter()
            .position(|l| l.contains(label))
            .unwrap_or_else(|| panic!("{engine}: no mixed row:\n{table}"));
        assert!(
            lines[row + 1].contains("\u{21b3} reads"),
            "{engine}:\n{table}"
        );
        assert!(
            lines[row + 2].contains("\u{21b3} writes"),
            "{engine}:\n{table}"
        );
        assert!(table.contains("its reads and its writes alone"), "{table}");

        let results = entries(&d.path().join("iolab-results"));
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(&results[0]).unwrap()).unwrap();
        let t = &doc["tests"][0];
        assert_eq!(t["settings"]["rw"], rw);
        assert_eq!(t["settings"]["rwmix_read"], 70);
        assert_eq!(t["direction"], "mixed");
        for r in t["runs"].as_array().unwrap() {
            let (rd, wr) = (&r["read"], &r["write"]);
            let ops = r["ops"].as_u64().unwrap();
            let (rops, wops) = (rd["ops"].as_u64().unwrap(), wr["ops"].as_u64().unwrap());
            assert_eq!(rops + wops, ops, "{engine}: parts add up to the run");
            assert_eq!(
                rd["bytes"].as_u64().unwrap() + wr["bytes"].as_u64().unwrap(),
                r["bytes"].as_u64().unwrap()
            );
            assert_eq!(rd["bytes"].as_u64().unwrap(), rops * 4096);
            // Size-based (8 MiB of 4 KiB I/Os), so the count does not hang on the disk's speed.
            assert_eq!(ops, 2048, "{engine}: every I/O of --io-size");
            let share = rops as f64 / ops as f64;
            assert!((0.6..0.8).contains(&share), "{engine}: read share {share}");
            let iops = r["iops"].as_f64().unwrap();
            let parts = rd["iops"].as_f64().unwrap() + wr["iops"].as_f64().unwrap();
            assert!((parts - iops).abs() <= iops * 1e-9, "{parts} vs {iops}");
            assert_eq!(rd["lat_ns"]["count"].as_u64(), Some(rops));
            assert_eq!(wr["lat_ns"]["count"].as_u64(), Some(wops));
            // The whole's extremes are the extremes of its parts.
            let max = |v: &Value| v["lat_ns"]["max"].as_u64().unwrap();
            assert_eq!(max(r), max(rd).max(max(wr)));
        }
        for k in [
            "read_iops",
            "write_iops",
            "read_lat_mean_ns",
            "write_bw_bytes_per_s",
        ] {
            assert_eq!(t["summary"][k]["n"], 2, "{engine}: summary.{k}");
        }
    }

    // One direction only: no parts, no extra rows; 100 % reads: no writes row.
    let d = tempdir();
    let mut args = vec!["run", "--rw", "randread", "--bs", "4k", "--repeat", "1"];
    args.extend_from_slice(QUICK);
    let doc = json_ok(&iolab_in(d.path(), &args));
    assert!(doc["tests"][0]["runs"][0].get("read").is_none());
    assert!(doc["tests"][0]["summary"].get("read_iops").is_none());
    let out = iolab_in(
        d.path(),
        &[
            "run",
            "--rw",
            "randrw",
            "--rwmix-read",
            "100",
            "--bs",
            "4k",
            "--repeat",
            "1",
            "--io-size",
            "1M",
            "--ramp",
            "0",
            "--size",
            "8M",
            "--no-save",
        ],
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        table.contains("\u{21b3} reads") && !table.contains("\u{21b3} writes"),
        "{table}"
    );
}

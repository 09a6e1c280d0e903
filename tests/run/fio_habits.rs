//! What docs/GUIDE.md's table of fio's names promises a fio user about `iolab run`, where
//! iolab differs from fio: checked on a tmpfs file so that a change of behaviour changes the
//! table too.

use super::*;

/// fio's io_size larger than size wraps around the region: so does --io-size (every I/O of
/// it done and counted), while a --bs above --size, and a sync engine asked for a depth fio
/// would ignore, are refused before anything runs (exit 2).
#[test]
fn io_size_wraps_the_region_and_fio_tolerances_are_refused() {
    let Some(dir) = ram_tempdir_or_skip("io_size_wraps_the_region_and_fio_tolerances_are_refused")
    else {
        return;
    };
    let t = s(dir.path());
    let o = iolab(&[
        "run",
        "--target",
        t,
        "--rw",
        "read",
        "--bs",
        "64k",
        "--size",
        "1M",
        "--io-size",
        "4M",
        "--ramp",
        "0",
        "--repeat",
        "1",
        "--json",
        "--no-save",
        "--no-history",
    ]);
    let doc = json_ok(&o);
    let run = &doc["tests"][0]["runs"][0];
    assert_eq!(run["bytes"], 4 << 20, "{run}");
    assert_eq!(run["ops"], 64, "{run}");

    let o = iolab(&[
        "run",
        "--target",
        t,
        "--rw",
        "randread",
        "--bs",
        "1m",
        "--size",
        "4k",
        "--no-save",
        "--no-history",
    ]);
    assert_usage(&o, "smaller than one block per job");
    let o = iolab(&[
        "run",
        "--target",
        t,
        "--rw",
        "randread",
        "--engine",
        "sync",
        "--iodepth",
        "16",
        "--size",
        "1M",
        "--no-save",
        "--no-history",
    ]);
    assert_usage(&o, "the sync engine keeps one I/O in flight per job");
    assert!(
        common::names(dir.path()).is_empty(),
        "a refused run created {:?}",
        common::names(dir.path())
    );
}

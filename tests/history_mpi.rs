//! A distributed run records one result in the history: rank 0's document (every rank's
//! figures in `hosts[]`), with rank 0's result file as its source (cargo feature `mpi`).
#![cfg(feature = "mpi")]

mod common;
mod mpi_support;
use mpi_support::*;

use iolab::history::{Filter, History};

#[test]
fn a_two_rank_run_is_one_result_in_the_history() {
    let test = "a_two_rank_run_is_one_result_in_the_history";
    let Some(target) = ram_target_or_skip(test) else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let db = out.path().join("history.sqlite");
    let results_dir = out.path().join("res");
    let res = mpirun(&[
        "-np",
        "2",
        IOLAB,
        "run",
        "-t",
        target.path().to_str().unwrap(),
        "--rw",
        "randread",
        "--bs",
        "4k",
        "--duration",
        "200ms",
        "--ramp",
        "0",
        "--repeat",
        "1",
        "--size",
        "8M",
        "--output",
        results_dir.to_str().unwrap(),
        // A flag wins over the suite's IOLAB_NO_HISTORY=1.
        "--history",
        db.to_str().unwrap(),
    ]);
    assert!(res.status.success(), "mpirun failed");
    let h = History::open(&db).unwrap();
    let entries = h.list(&Filter::default()).unwrap();
    assert_eq!(entries.len(), 1, "{entries:?}");
    let file = std::fs::read_dir(&results_dir)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    assert_eq!(
        entries[0].source.as_deref(),
        Some(std::fs::canonicalize(&file).unwrap().to_str().unwrap())
    );
    let doc = h.get(entries[0].id).unwrap().unwrap();
    assert_eq!(doc.hosts.len(), 2);
    assert_eq!(doc, iolab::model::ResultDoc::read(&file).unwrap());
}

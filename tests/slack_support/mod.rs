//! Helpers shared by the `iolab slack` integration tests: run `slack`, read its JSON (the
//! binary itself through `tests/common`). Each test binary uses a subset of them.
#![allow(dead_code)]

use std::process::Output;

use crate::common::iolab;

use iolab::model::ResultDoc;
use iolab::model::slack::SlackResult;

pub fn slack_json(args: &[&str]) -> SlackResult {
    let mut all = vec!["slack", "--json", "--no-save"];
    all.extend_from_slice(args);
    let out = iolab(&all);
    assert!(
        out.status.success(),
        "iolab {all:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    doc_of(&out).slack.expect("slack section")
}

/// Parse the `--json` result document.
pub fn doc_of(out: &Output) -> ResultDoc {
    serde_json::from_slice(&out.stdout).expect("result JSON")
}

//! Helpers shared by the `iolab slack` integration tests: run the binary, read its JSON.
//! Each test binary uses a subset of them.
#![allow(dead_code)]

use std::process::{Command, Output};

use iolab::model::ResultDoc;
use iolab::model::slack::SlackResult;

pub fn iolab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_iolab"))
        .args(args)
        .output()
        .expect("run iolab")
}

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

/// A usage error: exit 2 and `needle` in stderr.
pub fn assert_usage(out: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert!(err.contains(needle), "{needle:?} not in: {err}");
}

/// Parse the `--json` result document.
pub fn doc_of(out: &Output) -> ResultDoc {
    serde_json::from_slice(&out.stdout).expect("result JSON")
}

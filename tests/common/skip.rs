//! The one place a test may skip. Included by every integration test binary (`tests/common`)
//! and by the library's unit tests (`#[path]` in src/lib.rs), so the rule is written once.
//!
//! A test that cannot get what it needs (root, a loop device, a tool, a kernel feature) skips
//! loudly: it prints `SKIPPED <test>: <why>` and returns. Under `IOLAB_TEST_STRICT=1` (set
//! by `.ci/run`) a skip is a failure that says what was missing, so a CI machine that lost a
//! package fails instead of going green while testing less.

/// Is this a strict run (`IOLAB_TEST_STRICT=1`), where nothing may be skipped?
pub fn strict() -> bool {
    std::env::var("IOLAB_TEST_STRICT").is_ok_and(|v| v == "1")
}

/// Skip `test` because of `why`: a loud line on stderr, or a panic in a strict run.
/// The caller returns right after (or uses the `Option`/`bool` helpers that do).
#[track_caller]
pub fn skip(test: &str, why: impl std::fmt::Display) {
    if strict() {
        panic!(
            "{test} cannot run here: {why}\n\
             (IOLAB_TEST_STRICT=1: a skip is a failure; install what is missing, or unset the \
             variable to skip loudly)"
        );
    }
    // One write, so lines of tests running in parallel do not interleave.
    let line = format!("SKIPPED {test}: {why}\n");
    let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), line.as_bytes());
}

/// Does the running test have root? If not, skip `test` (loudly, or fail when strict).
pub fn root_or_skip(test: &str, what_for: &str) -> bool {
    if nix_free_is_root() {
        true
    } else {
        skip(test, format!("needs root ({what_for})"));
        false
    }
}

/// Effective uid 0, read without extra crates (this file is also compiled into the library's
/// unit tests).
fn nix_free_is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Is `program` on PATH? If not, skip `test` naming the program and its Debian package.
pub fn tool_or_skip(test: &str, program: &str, package: &str) -> bool {
    let found = on_path(program);
    if !found {
        skip(
            test,
            format!("{program} is not installed (apt-get install {package})"),
        );
    }
    found
}

/// Is `program` a file in one of PATH's directories?
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|d| {
            let p = d.join(program);
            std::fs::metadata(&p).is_ok_and(|m| m.is_file())
        })
    })
}

//! iolab: a storage and file-system benchmark lab for Linux.
//!
//! The binary (`main.rs`) is thin glue: `cli` (clap definitions) -> `config` (validated
//! runtime config) -> `app` (dispatch) -> `commands::*` -> `runner` + `engine` + `workload`
//! -> `model` (the result document) -> `report` (pure exporters).

// Standard output goes through `out!`/`outln!` (a closed pipe ends it quietly; `println!`
// panics there).
#![warn(clippy::print_stdout)]

/// `eprintln!` in one `write(2)`: the whole line, newline included, is formatted first.
/// Rust's stderr is unbuffered, so `eprintln!` writes every piece of its format on its own
/// (6–9 system calls for a progress line); where several processes share a stderr (the ranks
/// of a distributed run under mpirun, a pipe to a log) their lines could interleave mid-line.
/// A stderr that cannot be written (closed pipe) is ignored instead of panicking.
#[macro_export]
macro_rules! eline {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let mut line = ::std::format!($($arg)*);
        line.push('\n');
        let _ = ::std::io::stderr().lock().write_all(line.as_bytes());
    }};
}

/// `print!` that ignores a stdout that cannot be written: when the reader went away
/// (`iolab trace list --verbose | head -1`) it has what it wanted, and `print!` would panic.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let text = ::std::format!($($arg)*);
        let _ = ::std::io::stdout().lock().write_all(text.as_bytes());
    }};
}

/// `println!` that ignores a stdout that cannot be written (see [`out!`]).
#[macro_export]
macro_rules! outln {
    () => {
        $crate::out!("\n")
    };
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let mut line = ::std::format!($($arg)*);
        line.push('\n');
        let _ = ::std::io::stdout().lock().write_all(line.as_bytes());
    }};
}

pub mod analysis;
pub mod app;
pub mod cli;
pub mod commands;

pub mod dist;
pub mod engine;
pub mod error;
pub mod fs;
pub mod history;
pub mod model;
pub mod os;
pub mod report;
pub mod runner;
pub mod serve;
pub mod stats;
pub mod sysinfo;
pub mod units;
pub mod workload;

/// The test suite's one skip rule (loud, a failure under `IOLAB_TEST_STRICT=1`), shared with
/// the integration tests.
#[cfg(test)]
#[path = "../tests/common/skip.rs"]
pub(crate) mod test_skip;

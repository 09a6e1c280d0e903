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
/// Every line is human text that may name a path: no escape sequence of one reaches the
/// terminal (`os::text::into_terminal_lines`; the JSON progress stream goes elsewhere).
#[macro_export]
macro_rules! eline {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let mut line = $crate::os::text::into_terminal_lines(::std::format!($($arg)*));
        line.push('\n');
        let _ = ::std::io::stderr().lock().write_all(line.as_bytes());
    }};
}

/// `print!` to stdout. A reader that went away (`iolab trace list --verbose | head -1`) has
/// what it wanted: that ends the output quietly (`print!` would panic). Any other failure
/// (ENOSPC, EIO: `iolab info > FILE` on a full disk) is kept by [`write_stdout`] and said by
/// `main` at exit, with exit status 1 where it was 0.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        $crate::write_stdout(::std::format!($($arg)*).as_bytes());
    }};
}

/// `println!` to stdout (see [`out!`]).
#[macro_export]
macro_rules! outln {
    () => {
        $crate::out!("\n")
    };
    ($($arg:tt)*) => {{
        let mut line = ::std::format!($($arg)*);
        line.push('\n');
        $crate::write_stdout(line.as_bytes());
    }};
}

/// The first write to stdout that failed for another reason than a closed pipe.
static STDOUT_ERROR: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Keeps the first error of a write to stdout; a closed pipe (`| head`) is no error.
pub fn note_stdout(r: std::io::Result<()>) {
    match r {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            let mut first = STDOUT_ERROR.lock().unwrap_or_else(|p| p.into_inner());
            first.get_or_insert_with(|| e.to_string());
        }
        _ => {}
    }
}

/// All of `bytes` to stdout, every piece of output's one way there (`out!`, `outln!`, the
/// completions, the man pages, `history export`); an error is kept for [`stdout_error`].
pub fn write_stdout(bytes: &[u8]) {
    use std::io::Write as _;
    note_stdout(std::io::stdout().lock().write_all(bytes));
}

/// Flushes stdout (an error is kept as a write's is).
pub fn flush_stdout() {
    use std::io::Write as _;
    note_stdout(std::io::stdout().lock().flush());
}

/// Flushes stdout, then says why the output is short, if it is: the first error of a write
/// to stdout that was not a closed pipe (`main` reports it at exit).
pub fn stdout_error() -> Option<String> {
    flush_stdout();
    STDOUT_ERROR
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
}

/// Flushes stdout and, when output was lost ([`stdout_error`]), says so on stderr
/// (`iolab: error: cannot write to stdout: …`); true when it did.
pub fn said_stdout_error() -> bool {
    match stdout_error() {
        Some(e) => {
            eline!("iolab: error: cannot write to stdout: {e}");
            true
        }
        None => false,
    }
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

//! iolab: parse the command line, run, map errors to exit codes.

use iolab::error::{ExitCode, exit_code_for};
// An error names paths and values from the command line: `eline!` lets no escape sequence
// of theirs reach the terminal. A usage error is one line, so a line break in a name is
// shown as `\n` too; another may frame a tool's output on lines of its own (`CommandError`).
use iolab::os::text::terminal;

fn main() {
    // As recorded in the result and shown: a byte that is not UTF-8 by its hex.
    let argv: Vec<String> = std::env::args_os()
        .map(|a| iolab::os::text::os_text(&a))
        .collect();
    let cli = iolab::cli::parse();
    let argv_for_help = argv.clone();
    // What a killed iolab left (mounts, loops, images, then test files, locks and work
    // trees) goes first, with a line saying what was done.
    iolab::fs::registry::report_stale_cleanup();
    let code = match iolab::app::run(cli, argv) {
        Ok(code) => code,
        Err(e) => {
            // Whatever iolab created and did not remove yet goes now.
            iolab::fs::guard::cleanup_all();
            let code = exit_code_for(&e);
            match code {
                _ if e.downcast_ref::<iolab::error::Reported>().is_some() => {}
                ExitCode::Usage => iolab::eline!(
                    "iolab: error: {}; see '{}'",
                    terminal(&format!("{e:#}")),
                    terminal(&format!(
                        "{} --help",
                        iolab::cli::help_command(&argv_for_help)
                    ))
                ),
                ExitCode::Interrupted | ExitCode::Terminated | ExitCode::HangUp => {
                    iolab::eline!("iolab: {e:#}")
                }
                _ => iolab::eline!("iolab: error: {e:#}"),
            }
            code as i32
        }
    };
    // Output lost to a full disk or an I/O error is said, and fails a command that had
    // succeeded; the result file (if any) was saved before the output.
    let code = if iolab::said_stdout_error() && code == 0 {
        ExitCode::Failure as i32
    } else {
        code
    };
    iolab::fs::registry::prune_at_exit();
    std::process::exit(code);
}

//! iolab: parse the command line, run, map errors to exit codes.

use iolab::error::{ExitCode, exit_code_for};

fn main() {
    let argv: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let cli = iolab::cli::parse();
    // The matrix's mounts, loops and images of a killed run go first (an image may back a
    // loop), then a killed iolab's test files, locks and work trees; both say what they did.
    iolab::fs::state::report_stale_cleanup();
    iolab::runner::ownership::report_stale_cleanup();
    let code = match iolab::app::run(cli, argv) {
        Ok(code) => code,
        Err(e) => {
            // Whatever iolab created and did not remove yet goes now.
            iolab::fs::guard::cleanup_all();
            let code = exit_code_for(&e);
            match code {
                _ if e.downcast_ref::<iolab::error::Reported>().is_some() => {}
                ExitCode::Usage => iolab::eline!("iolab: error: {e:#}"),
                ExitCode::Interrupted | ExitCode::Terminated | ExitCode::HangUp => {
                    iolab::eline!("iolab: {e:#}")
                }
                _ => iolab::eline!("iolab: error: {e:#}"),
            }
            code as i32
        }
    };
    iolab::runner::ownership::prune_at_exit();
    std::process::exit(code);
}

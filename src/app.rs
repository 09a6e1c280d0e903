//! Dispatch of subcommands to their command modules. The only place that sees every
//! subcommand; `anyhow` is used from here up.

use anyhow::Result;
use clap::CommandFactory;

use crate::cli::{Cli, Command};
use crate::commands;

/// Run the parsed command line; returns the process exit code on success.
pub fn run(cli: Cli, argv: Vec<String>) -> Result<i32> {
    // Under mpirun/srun with several ranks, refuse what cannot run distributed (src/dist).
    let (name, measures) = match &cli.command {
        Command::Run(_) => ("run", true),
        Command::Saturate(_) => ("saturate", true),
        Command::Files(_) => ("files", true),
        Command::Copy(_) => ("copy", true),
        Command::Trace(_) => ("trace", true),
        Command::Matrix(_) => ("matrix", true),
        Command::Sustain(_) => ("sustain", true),
        _ => ("", false),
    };
    crate::dist::check_launch(name, measures, crate::dist::launched())?;
    // Where every measuring command records its result (`--history`, `--no-history`).
    crate::history::configure(cli.history.history.clone(), cli.history.no_history);
    crate::runner::signals::stop_when_parent_exits();
    if let Some(path) = &cli.progress_json {
        crate::runner::progress::open_json_stream(path).map_err(|e| {
            crate::error::UsageError::new(format!(
                "--progress-json {}: cannot open: {e}",
                path.display()
            ))
        })?;
    }
    match &cli.command {
        Command::Run(a) => commands::run::execute(a, argv),
        Command::Saturate(a) => commands::saturate::execute(a, argv),
        Command::Sustain(a) => commands::sustain::execute(a, argv),
        Command::Files(a) => commands::files::execute(a, argv),
        Command::Copy(a) => commands::copy::execute(a, argv),
        Command::Trace(a) => commands::trace::execute(a, argv),
        Command::Matrix(a) => commands::matrix::execute(a, argv),
        Command::Slack(a) => commands::slack::execute(a, argv),
        Command::Age(a) => commands::age::execute(a, argv),
        Command::Info(a) => commands::info::execute(a, argv),
        Command::Endurance(a) => commands::info::execute_endurance(a, argv),
        Command::Report(a) => commands::report::execute(a, argv),
        Command::Compare(a) => commands::compare::execute(a, argv),
        Command::History(a) => commands::history::execute(a, argv),
        Command::Serve(a) => commands::serve::execute(a, argv),
        Command::Completions(a) => {
            let mut cmd = Cli::command();
            clap_complete::generate(a.shell, &mut cmd, "iolab", &mut std::io::stdout());
            Ok(0)
        }
        Command::Man => {
            let cmd = Cli::command();
            clap_mangen::Man::new(cmd).render(&mut std::io::stdout())?;
            Ok(0)
        }
    }
}

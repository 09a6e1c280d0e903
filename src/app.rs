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
            // Into memory first: clap_complete panics on a stdout that went away.
            let mut text = Vec::new();
            clap_complete::generate(a.shell, &mut Cli::command(), "iolab", &mut text);
            crate::out!("{}", String::from_utf8_lossy(&text));
            Ok(0)
        }
        Command::Man(a) => man(a),
    }
}

/// `iolab man [SUBCOMMAND...] [--dir DIR]`: one page on stdout, or every page into DIR.
fn man(a: &crate::cli::report::ManArgs) -> Result<i32> {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    // Built, every subcommand has its page name (`iolab-trace-record`).
    cmd.build();
    let page_of = |c: clap::Command| {
        clap_mangen::Man::new(c).source(format!("iolab {}", env!("CARGO_PKG_VERSION")))
    };
    if let Some(dir) = &a.dir {
        if !dir.is_dir() {
            return Err(crate::error::UsageError::new(format!(
                "--dir {}: not an existing directory",
                dir.display()
            ))
            .into());
        }
        let mut todo = vec![cmd];
        let mut written = 0;
        while let Some(c) = todo.pop() {
            todo.extend(c.get_subcommands().filter(|s| !s.is_hide_set()).cloned());
            page_of(c).generate_to(dir).map_err(|e| {
                anyhow::anyhow!("cannot write the man pages into {}: {e}", dir.display())
            })?;
            written += 1;
        }
        crate::eline!("{written} man pages written into {}", dir.display());
        return Ok(0);
    }
    let mut page = cmd;
    for name in &a.command {
        let Some(sub) = page.find_subcommand(name).cloned() else {
            let known: Vec<&str> = page.get_subcommands().map(|c| c.get_name()).collect();
            let name = page.get_display_name().unwrap_or("iolab").to_string();
            return Err(crate::error::UsageError::new(match known.is_empty() {
                true => format!(
                    "no man page for '{}': {name} has no subcommands",
                    a.command.join(" ")
                ),
                false => format!(
                    "no man page for '{}': {name} has the subcommands {}",
                    a.command.join(" "),
                    known.join(", ")
                ),
            })
            .into());
        };
        page = sub;
    }
    let mut text = Vec::new();
    page_of(page).render(&mut text)?;
    crate::out!("{}", String::from_utf8_lossy(&text));
    Ok(0)
}

//! Runs the parsed command line: the settings of the whole process (launcher check, history,
//! progress stream), then the subcommand through its `cli::Execute` (in commands/NAME.rs;
//! `completions` and `man` here). `anyhow` is used from here up.

use anyhow::Result;
use clap::CommandFactory;

use crate::cli::report::{CompletionsArgs, ManArgs};
use crate::cli::{Cli, Execute};

/// Run the parsed command line; returns the process exit code on success.
pub fn run(cli: Cli, argv: Vec<String>) -> Result<i32> {
    let (name, args) = cli.command.subcommand();
    // Under mpirun/srun with several ranks, refuse what cannot run distributed (src/dist).
    let measures = crate::cli::MEASURING_COMMANDS.contains(&name);
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
    args.execute(argv)
}

/// `iolab completions SHELL`.
impl Execute for CompletionsArgs {
    fn execute(&self, _argv: Vec<String>) -> Result<i32> {
        // Into memory first: clap_complete panics on a stdout that went away.
        let mut text = Vec::new();
        clap_complete::generate(self.shell, &mut Cli::command(), "iolab", &mut text);
        crate::out!("{}", String::from_utf8_lossy(&text));
        Ok(0)
    }
}

impl Execute for ManArgs {
    fn execute(&self, _argv: Vec<String>) -> Result<i32> {
        man(self)
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

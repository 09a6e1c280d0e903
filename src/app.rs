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
    // Where every measuring command records its result (`--history`, `--no-history`), given
    // before the subcommand or after it; refused for one that neither records nor reads.
    let flags = match cli.command.history_flags() {
        Some(own) => own.or(&cli.history),
        None if cli.history.given() => {
            return Err(crate::error::UsageError::new(format!(
                "--history and --no-history: `iolab {name}` neither records a result nor reads the history"
            ))
            .into());
        }
        None => cli.history.clone(),
    };
    crate::history::configure(flags.history, flags.no_history);
    crate::runner::signals::stop_when_parent_exits();
    if let Some(path) = &cli.progress_json {
        crate::runner::progress::open_json_stream(path).map_err(|e| {
            crate::error::UsageError::new(format!(
                "--progress-json {}: cannot open: {e}",
                path.display()
            ))
        })?;
    }
    args.execute(recorded_argv(argv))
}

/// The argv a result records: the command line without the console's hidden
/// `--progress-json FILE` (a temp file of `iolab serve`'s, gone once the test ends: the
/// recorded command line, run again, failed on it).
fn recorded_argv(argv: Vec<String>) -> Vec<String> {
    let mut out = Vec::with_capacity(argv.len());
    let mut it = argv.into_iter();
    while let Some(a) = it.next() {
        if a == "--" {
            out.push(a);
            out.extend(it.by_ref());
            break;
        }
        if a == "--progress-json" {
            it.next();
        } else if !a.starts_with("--progress-json=") {
            out.push(a);
        }
    }
    out
}

/// `iolab completions SHELL`.
impl Execute for CompletionsArgs {
    fn execute(&self, _argv: Vec<String>) -> Result<i32> {
        // Into memory first: clap_complete panics on a stdout that went away.
        let mut text = Vec::new();
        let cmd = without_hidden(&Cli::command());
        let names = page_names(&cmd);
        // `iolab man <TAB>` offers them (it offered nothing); for the scripts only: `iolab man
        // NAME` keeps its own message for a name without a page.
        let mut cmd = cmd.mut_subcommand("man", |man| {
            man.mut_arg("command", |a| {
                a.value_parser(clap::builder::PossibleValuesParser::new(&names))
            })
        });
        clap_complete::generate(self.shell, &mut cmd, "iolab", &mut text);
        if self.shell == clap_complete::Shell::Fish {
            // clap_complete's fish script completes no positional argument.
            text.extend(
                format!(
                    "complete -c iolab -n \"__fish_iolab_using_subcommand man\" -f -a \"{}\"\n",
                    names.join(" ")
                )
                .bytes(),
            );
        }
        crate::write_stdout(&text);
        Ok(0)
    }
}

/// The names `iolab man` takes, at every depth (`run`, `trace`, `record`, ...), sorted.
fn page_names(cmd: &clap::Command) -> Vec<&'static str> {
    fn collect(cmd: &clap::Command, names: &mut std::collections::BTreeSet<String>) {
        for sub in cmd.get_subcommands() {
            names.insert(sub.get_name().to_string());
            collect(sub, names);
        }
    }
    let mut names = std::collections::BTreeSet::new();
    collect(cmd, &mut names);
    // clap takes names as `&'static str`; this runs once, for a process that then exits.
    names
        .into_iter()
        .map(|n| &*Box::leak(n.into_boxed_str()))
        .collect()
}

/// `cmd` and its subcommands without their hidden flags and subcommands: clap_complete
/// offers every argument, hidden or not, so `iolab run --<TAB>` listed `--progress-json`
/// (the web console's machine stream, described as "hidden because its line format is for
/// programs") and `iolab matrix --<TAB>` `--setup-only`, which --help and the man pages
/// leave out.
fn without_hidden(cmd: &clap::Command) -> clap::Command {
    // clap takes names as `&'static str`; this runs once, for a process that then exits.
    let leak = |s: &str| -> &'static str { Box::leak(s.to_string().into_boxed_str()) };
    let mut out = clap::Command::new(leak(cmd.get_name()))
        .args(cmd.get_arguments().filter(|a| !a.is_hide_set()).cloned())
        .subcommands(
            cmd.get_subcommands()
                .filter(|c| !c.is_hide_set())
                .map(without_hidden),
        );
    if let Some(about) = cmd.get_about() {
        out = out.about(about.clone());
    }
    if let Some(version) = cmd.get_version() {
        out = out.version(leak(version));
    }
    out.propagate_version(cmd.is_propagate_version_set())
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
        // Made when missing, as `install -d` would: the README's
        // `--dir /usr/local/share/man/man1` does not exist on a fresh Debian.
        if !dir.is_dir() {
            let why = if dir.exists() {
                "exists and is not a directory".to_string()
            } else {
                match std::fs::create_dir_all(dir) {
                    Ok(()) => String::new(),
                    Err(e) => format!("cannot create it: {e}"),
                }
            };
            if !why.is_empty() {
                return Err(crate::error::UsageError::new(format!(
                    "--dir {}: {why}",
                    dir.display()
                ))
                .into());
            }
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
    crate::write_stdout(&text);
    Ok(0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_recorded_argv_leaves_out_the_consoles_progress_stream() {
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            super::recorded_argv(v(&[
                "iolab",
                "--progress-json",
                "/tmp/iolab-serve-x/run-1.jsonl",
                "run",
                "--target=/d",
                "--progress-json=/tmp/p",
                "--size=1M",
            ])),
            v(&["iolab", "run", "--target=/d", "--size=1M"])
        );
        let keep = v(&["iolab", "run", "--", "--progress-json", "x"]);
        assert_eq!(super::recorded_argv(keep.clone()), keep);
    }
}

//! The command line and its checks: one file per subcommand with its clap arguments and,
//! for a family, the `from_args` that checks them into its runtime config (`checks.rs`:
//! what the families share). This file lists the subcommands once: `Command`,
//! `Command::subcommand` and `MEASURING_COMMANDS`. Clap types appear nowhere else.

pub mod age;
pub mod checks;
pub mod compare;
pub mod copy;
pub mod files;
pub mod history;
pub mod info;
pub mod matrix;
pub mod reference;
pub mod report;
pub mod run;
pub mod saturate;
pub mod serve;
pub mod slack;
pub mod sustain;
pub mod trace;
pub mod values;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// A storage and file-system benchmark lab: disk speed with latency percentiles, real file
/// systems formatted and compared, small-file floods, data-set copies and application traces.
#[derive(Debug, Parser)]
#[command(name = "iolab", version, about, long_about = None, propagate_version = true)]
// Before the subcommand only (`iolab --no-history slack`): global, they were listed in the
// help of every subcommand, `info` and `man` too. The commands they act on take them
// themselves (`Command::history_flags`).
#[command(mut_arg("history", |a| a.global(false)), mut_arg("no_history", |a| a.global(false)))]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    #[command(flatten)]
    pub history: history::HistoryFlags,

    /// Machine-readable progress: one JSON object per line (task start/progress/end, live
    /// points, the saved result) appended to PATH. Used by `iolab serve` for the runs it
    /// starts; hidden because its line format is for programs (docs/GUIDE.md, `serve`).
    #[arg(long, global = true, hide = true, value_name = "PATH")]
    pub progress_json: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Quick disk test (CrystalDiskMark-like) of the file system under a directory, a file
    /// or a block device, with latency percentiles and the spread between repeats.
    Run(run::RunArgs),
    /// How many parallel requests the storage serves before latency breaks a limit.
    Saturate(saturate::SaturateArgs),
    /// Sustained write: the write cache's size (the cliff where the speed drops), the speed
    /// and spread of each phase, and how much of the cache comes back after idle time.
    Sustain(sustain::SustainArgs),
    /// Small-file tester: portions x passes of copies of a reference file (after Belov's NTFS
    /// cluster-size tester).
    Files(files::FilesArgs),
    /// Data-set copies (media mix, ISO, source tree) to and from the target, and deletion.
    Copy(copy::CopyArgs),
    /// Application workloads as data: NASPT-like built-ins, record and replay.
    Trace(trace::TraceArgs),
    /// Format, mount and compare real file systems, cluster sizes and mount options.
    Matrix(matrix::MatrixArgs),
    /// Cluster slack and the optimal allocation unit for a tree of files.
    Slack(slack::SlackArgs),
    /// Age a file system: create, grow and delete files to a described state of use
    /// (Geriatrix-style profiles), and score its layout before and after.
    Age(age::AgeArgs),
    /// What is under a path: mount, file system, block device, health.
    Info(info::InfoArgs),
    /// SSD lifetime from its rated TBW and a daily write volume.
    Endurance(info::EnduranceArgs),
    /// Turn result files into HTML, Markdown or CSV.
    Report(report::ReportArgs),
    /// Compare result files test by test, with significance.
    Compare(compare::CompareArgs),
    /// A local web console: devices, start tests from a form, watch them live, stop them,
    /// the history, compare, download reports (127.0.0.1 and a token by default).
    Serve(serve::ServeArgs),
    /// Every result measured here, kept: list, show, export, import, trend over time.
    History(history::HistoryArgs),
    /// Print shell completions.
    Completions(report::CompletionsArgs),
    /// Print the man page (roff) of iolab or of one subcommand, or write every page to a
    /// directory.
    Man(report::ManArgs),
}

/// A subcommand's arguments, run by the commands layer: each `impl Execute` sits in
/// `commands/NAME.rs` (`completions` and `man` in app.rs), and app.rs runs
/// `cli.command.subcommand().1.execute(argv)`. A new subcommand is listed in this file only: its
/// variant above, its line in [`Command::subcommand`] and, when it measures, its name in
/// [`MEASURING_COMMANDS`].
pub trait Execute {
    /// Run the subcommand; the process exit code on success.
    fn execute(&self, argv: Vec<String>) -> anyhow::Result<i32>;
    /// The subcommand's own checks (target, `--allow-destroy`, sizes, free space) with
    /// nothing created: the message the command line would print. The web console checks
    /// a form with it before it starts the test.
    fn check(&self) -> Result<(), String> {
        Ok(())
    }
}

impl Command {
    /// The subcommand given: its name and its arguments, as app.rs runs them.
    pub fn subcommand(&self) -> (&'static str, &dyn Execute) {
        match self {
            Command::Run(a) => ("run", a),
            Command::Saturate(a) => ("saturate", a),
            Command::Sustain(a) => ("sustain", a),
            Command::Files(a) => ("files", a),
            Command::Copy(a) => ("copy", a),
            Command::Trace(a) => ("trace", a),
            Command::Matrix(a) => ("matrix", a),
            Command::Slack(a) => ("slack", a),
            Command::Age(a) => ("age", a),
            Command::Info(a) => ("info", a),
            Command::Endurance(a) => ("endurance", a),
            Command::Report(a) => ("report", a),
            Command::Compare(a) => ("compare", a),
            Command::Serve(a) => ("serve", a),
            Command::History(a) => ("history", a),
            Command::Completions(a) => ("completions", a),
            Command::Man(a) => ("man", a),
        }
    }
}

impl Command {
    /// The `--history` / `--no-history` this subcommand takes (given after its name), `None`
    /// for one that neither records a result nor reads the history.
    pub fn history_flags(&self) -> Option<&history::HistoryFlags> {
        match self {
            Command::Run(a) => Some(&a.out.history),
            Command::Saturate(a) => Some(&a.out.history),
            Command::Sustain(a) => Some(&a.out.history),
            Command::Files(a) => Some(&a.out.history),
            Command::Copy(a) => Some(&a.out.history),
            Command::Trace(t) => match &t.cmd {
                trace::TraceCmd::Run(a) => Some(&a.out.history),
                trace::TraceCmd::Replay(a) => Some(&a.out.history),
                _ => None,
            },
            Command::Matrix(a) => Some(&a.out.history),
            Command::Slack(a) => Some(&a.out.history),
            Command::Age(a) => Some(&a.out.history),
            Command::Serve(a) => Some(&a.history),
            Command::History(a) => Some(&a.history),
            Command::Info(_)
            | Command::Endurance(_)
            | Command::Report(_)
            | Command::Compare(_)
            | Command::Completions(_)
            | Command::Man(_) => None,
        }
    }

    /// The target given as a word (`iolab run /mnt`, `iolab saturate /dev/sdb /dev/sdc`)
    /// becomes the `-t/--target` the checks and configs read (clap cannot make one argument
    /// both a word and an option; `conflicts_with` refused both at once).
    fn take_target_words(&mut self) {
        fn one(word: &mut Option<PathBuf>, target: &mut PathBuf) {
            if let Some(p) = word.take() {
                *target = p;
            }
        }
        match self {
            Command::Run(a) => one(&mut a.target_pos, &mut a.target),
            Command::Files(a) => one(&mut a.target_pos, &mut a.target),
            Command::Copy(a) => one(&mut a.target_pos, &mut a.target),
            Command::Saturate(a) if !a.target_pos.is_empty() => {
                a.target = std::mem::take(&mut a.target_pos);
            }
            Command::Trace(t) => match &mut t.cmd {
                trace::TraceCmd::Run(a) => one(&mut a.target_pos, &mut a.target),
                trace::TraceCmd::Replay(a) => one(&mut a.target_pos, &mut a.target),
                _ => {}
            },
            _ => {}
        }
    }
}

/// The measuring subcommands (every `commands::family::Family`'s `NAME`): the commands whose
/// results a result file and the history hold (`iolab history --command` takes these).
/// `family::execute` checks in debug builds that a family is listed, so a new one that is
/// not fails its first test.
pub const MEASURING_COMMANDS: &[&str] = &[
    "run", "saturate", "sustain", "files", "copy", "trace", "matrix", "slack", "age",
];

/// Parse the process's command line. Help and version print as clap prints them; every
/// usage error becomes one line on stderr (`iolab: error: …`, see [`one_line_error`]) and
/// exit code 2, like iolab's own checks of the values.
pub fn parse() -> Cli {
    use clap::error::ErrorKind;
    match try_parse_from(std::env::args_os()) {
        Ok(cli) => cli,
        Err(e) => match e.kind() {
            // On stdout, as clap prints them; a full disk or an I/O error under it is said
            // and exit 1, as every command's output (it exited 0 with the help lost).
            ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                crate::note_stdout(e.print());
                std::process::exit(if crate::said_stdout_error() {
                    crate::error::ExitCode::Failure as i32
                } else {
                    0
                })
            }
            ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
            _ => {
                let argv: Vec<String> = std::env::args_os()
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect();
                let help = help_command(&argv);
                crate::eline!("iolab: {}", one_line_error(&e.render().to_string(), &help));
                std::process::exit(crate::error::ExitCode::Usage as i32);
            }
        },
    }
}

/// `Cli::try_parse_from`, with the list flags of `iolab history` (`--json`, `--limit`,
/// `--device`, ...) given before one of its subcommands moved after it: `iolab history
/// --json list` is `iolab history list --json`, `iolab history --json devices` is `iolab
/// history devices --json`. A flag the subcommand does not take is refused with where it
/// goes. (Clap's `args_conflicts_with_subcommands` refused the global `--history` there
/// too: `iolab history --history DB list`.)
pub fn try_parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::{CommandFactory, FromArgMatches};
    let argv: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    let mut cmd = Cli::command();
    let m = cmd.try_get_matches_from_mut(argv.clone())?;
    if let Some(("history", hm)) = m.subcommand()
        && let Some((sub, _)) = hm.subcommand()
    {
        let list = history::ListArgs::augment_args(clap::Command::new("list"));
        let history = cmd.find_subcommand("history").cloned().unwrap_or_default();
        let mut sub_cmd = history.find_subcommand(sub).cloned().unwrap_or_default();
        let mut moved = false;
        for a in list.get_arguments() {
            if hm.value_source(a.get_id().as_str()) != Some(clap::parser::ValueSource::CommandLine)
            {
                continue;
            }
            if !sub_cmd.get_arguments().any(|s| s.get_id() == a.get_id()) {
                let flag = a.get_long().unwrap_or(a.get_id().as_str());
                let e = clap::Error::raw(
                    clap::error::ErrorKind::ArgumentConflict,
                    format!(
                        "--{flag} is a flag of `iolab history list` (the default subcommand); `iolab history {sub}` has no --{flag}\n"
                    ),
                );
                return Err(e.format(&mut sub_cmd));
            }
            moved = true;
        }
        if moved {
            // Never dropped silently: words that cannot be told apart are refused.
            let Some(argv) = history_flags_after_subcommand(&argv) else {
                let e = clap::Error::raw(
                    clap::error::ErrorKind::ArgumentConflict,
                    format!("give the flags of `iolab history {sub}` after '{sub}'\n"),
                );
                return Err(e.format(&mut sub_cmd));
            };
            return try_parse_from(argv);
        }
    }
    word_after_a_switch(&cmd, &m, &argv)?;
    let mut cli = Cli::from_arg_matches(&m).map_err(|e| e.format(&mut cmd))?;
    cli.command.take_target_words();
    Ok(cli)
}

/// A value typed after a flag that takes none (`iolab run --mix 70`, as `saturate --mix 70`
/// takes one) becomes the target word; when it looks like a value (starts with a digit, no
/// `/`) and no such path exists, the error says why instead of "target 70 does not exist".
fn word_after_a_switch(
    cli: &clap::Command,
    m: &clap::ArgMatches,
    argv: &[std::ffi::OsString],
) -> Result<(), clap::Error> {
    let (mut cmd, mut m) = (cli, m);
    let mut path = vec!["iolab"];
    while let Some((name, sub)) = m.subcommand() {
        let Some(c) = cmd.find_subcommand(name) else {
            break;
        };
        (cmd, m) = (c, sub);
        path.push(c.get_name());
    }
    // The target words only: `info --json sda` names a kernel device, `history show
    // --json 12` a result.
    for a in cmd
        .get_arguments()
        .filter(|a| a.is_positional() && a.get_id() == "target_pos")
    {
        let id = a.get_id().as_str();
        if m.value_source(id) != Some(clap::parser::ValueSource::CommandLine) {
            continue;
        }
        for word in m.get_raw(id).into_iter().flatten() {
            // A value (`70`, `50%`, `4k`, `5s`), not a path: `run --verify /mnt/gone` is a
            // missing target, which the target check names.
            let w = word.to_string_lossy();
            let value_like = w.starts_with(|c: char| c.is_ascii_digit()) && !w.contains('/');
            if !value_like || std::path::Path::new(word).exists() {
                continue;
            }
            let Some(i) = argv.iter().skip(1).position(|w| w == word) else {
                continue;
            };
            let before = argv[i].to_string_lossy();
            let Some(flag) = cmd.get_arguments().find(|f| {
                f.get_long().is_some_and(|l| before == format!("--{l}"))
                    || f.get_short().is_some_and(|c| before == format!("-{c}"))
            }) else {
                continue;
            };
            if flag.get_action().takes_values() {
                continue;
            }
            let hint = match (path.join(" ").as_str(), flag.get_long()) {
                ("iolab run", Some("mix")) => {
                    "; the read share of the mixed tests is --rwmix-read PERCENT"
                }
                _ => "",
            };
            let e = clap::Error::raw(
                clap::error::ErrorKind::ArgumentConflict,
                format!(
                    "{before} takes no value: '{}' after it was taken as the {}, and no such path exists{hint}\n",
                    word.to_string_lossy(),
                    a.get_value_names()
                        .and_then(|v| v.first())
                        .map_or("target".to_string(), |v| v.to_string())
                ),
            );
            return Err(e.format(&mut cmd.clone()));
        }
    }
    Ok(())
}

/// `argv` with the words between `history` and its subcommand moved after the subcommand
/// (`iolab history --limit 3 export` -> `iolab history export --limit 3`); None when the
/// words cannot be told apart.
fn history_flags_after_subcommand(argv: &[std::ffi::OsString]) -> Option<Vec<std::ffi::OsString>> {
    // The flags whose value is the next word (unless given as `--flag=value`).
    const VALUED: &[&str] = &[
        "--history",
        "--progress-json",
        "--device",
        "--command",
        "--since",
        "--limit",
    ];
    let word = |from: usize| -> Option<usize> {
        let mut i = from;
        while i < argv.len() {
            let w = argv[i].to_str()?;
            if VALUED.contains(&w) {
                i += 2;
            } else if w.starts_with('-') {
                i += 1;
            } else {
                return Some(i);
            }
        }
        None
    };
    let h = word(1)?;
    let sub = word(h + 1)?;
    if argv[h] != "history" || sub == h + 1 {
        return None;
    }
    let mut out = argv[..=h].to_vec();
    out.push(argv[sub].clone());
    out.extend_from_slice(&argv[h + 1..sub]);
    out.extend_from_slice(&argv[sub + 1..]);
    Some(out)
}

/// The help to point a usage error at: the deepest subcommand `argv` names
/// (`iolab history show` for `iolab history show abc`), `iolab` when it names none.
pub fn help_command(argv: &[String]) -> String {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    let mut path = vec!["iolab".to_string()];
    for arg in argv.iter().skip(1) {
        let Some(sub) = cmd.find_subcommand(arg).cloned() else {
            continue;
        };
        path.push(sub.get_name().to_string());
        cmd = sub;
    }
    path.join(" ")
}

/// clap's words for a number that does not parse, in the command line's own: the range of
/// an unsigned flag is the type's ("-1 is not in 0..=4294967295"), a u64 flag's parser only
/// says "invalid digit found in string" (of `-1` as of `1x`), and a fractional one Rust's
/// "invalid float literal" (`--scale abc`).
pub fn number_words(line: &str) -> String {
    line.replace(
        ": invalid digit found in string",
        ": not a whole number of 0 or more",
    )
    .replace(
        " is not in 0..=4294967295",
        " is not a whole number of 0 or more",
    )
    .replace(
        " is not in 0..=18446744073709551615",
        " is not a whole number of 0 or more",
    )
    .replace(
        ": invalid float literal",
        ": not a number (e.g. 0.5, 2 or 1e-3)",
    )
}

/// Fold clap's rendered error (a first line, indented details such as the possible values,
/// a tip or the missing arguments, then a usage block) into one line that keeps every
/// detail and points at `command`'s help (`iolab run`).
pub fn one_line_error(rendered: &str, command: &str) -> String {
    let mut lines = rendered.lines().map(str::trim);
    let first = number_words(lines.next().unwrap_or("error"));
    let mut details = Vec::new();
    for line in lines {
        if line.starts_with("Usage:") {
            break;
        }
        if line.is_empty() || line.starts_with("For more information") {
            continue;
        }
        // "tip: to pass '--duration' as a value, use '-- --duration'": on a command with a
        // positional path, clap offers to take a flag it does not know as the path (a
        // directory named `--duration`). The flag was meant; the grammar tip below says
        // what this command calls it.
        if line.starts_with("tip: to pass '-") {
            continue;
        }
        let line = line
            .strip_prefix('[')
            .and_then(|l| l.strip_suffix(']'))
            .unwrap_or(line);
        details.push(line.to_string());
    }
    // This command's own name for the flag beats clap's guess by spelling (`iolab files
    // --duration`: "a similar argument exists: '--portions'").
    if let Some(tip) = grammar_tip(&first, command) {
        details.retain(|d| !d.starts_with("tip: a similar argument exists"));
        details.push(tip);
    }
    let mut out = if details.is_empty() {
        first
    } else if first.ends_with(':') {
        format!("{first} {}", details.join(", "))
    } else {
        format!("{first} ({})", details.join("; "))
    };
    out.push_str(&format!("; see '{command} --help'"));
    out
}

/// What a flag learned on one subcommand is called on `command`, when clap's error is
/// "unexpected argument 'ARG' found" and clap found nothing similar: a flag that is named
/// differently here (`iolab sustain --duration`: `--time`), or one of fio's names
/// (`values::FIO_NAMES`: `iolab run --numjobs`: `--jobs`; `--verify=crc32c`, a value for a
/// flag that takes none, as `--verify=`). (Every command with one target
/// takes it as a word too: `iolab run /mnt`.)
fn grammar_tip(first: &str, command: &str) -> Option<String> {
    // A value given to a flag that takes none: fio's `--verify=crc32c`.
    if let Some((_, rest)) = first
        .strip_prefix("error: unexpected value '")
        .and_then(|r| r.split_once("' for '"))
    {
        let flag = rest.split_once('\'')?.0;
        return values::fio_tip(command, &format!("{flag}=")).map(|tip| format!("tip: {tip}"));
    }
    let arg = first
        .strip_prefix("error: unexpected argument '")?
        .strip_suffix("' found")?;
    /// (command, flag typed, what this command takes instead).
    const RENAMED: &[(&str, &str, &str)] = &[
        (
            "iolab sustain",
            "--duration",
            "iolab sustain writes its span; --time stops the first pass earlier",
        ),
        (
            "iolab run",
            "--time",
            "the measured time of each run is --duration",
        ),
        (
            "iolab age",
            "--duration",
            "iolab age stops at --fill and --churn, not after a time",
        ),
        (
            "iolab files",
            "--duration",
            "iolab files runs counts, not a time: --files-per-portion, --portions, --passes",
        ),
        (
            "iolab run",
            "--max-depth",
            "a test's depth is --iodepth; the sweep of depths is iolab saturate",
        ),
        (
            "iolab copy",
            "--jobs",
            "iolab copy copies one file at a time, as cp does",
        ),
        (
            "iolab matrix",
            "--target",
            "the matrix makes its own file systems: --image-dir DIR for their images, or --device DEVICE",
        ),
        (
            "iolab matrix",
            "-t",
            "the matrix makes its own file systems: --image-dir DIR for their images, or --device DEVICE",
        ),
    ];
    if let Some((_, _, tip)) = RENAMED
        .iter()
        .find(|(c, flag, _)| *c == command && *flag == arg)
    {
        return Some(format!("tip: {tip}"));
    }
    values::fio_tip(command, arg).map(|tip| format!("tip: {tip}"))
}

/// Where and how results are written (shared by every measuring subcommand).
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Directory for the result JSON (one file per invocation, named COMMAND-DATE-TIME.json,
    /// rewritten after every test); a path ending in .json is that file instead.
    #[arg(long, short = 'o', value_name = "DIR", default_value = "iolab-results")]
    pub output: PathBuf,

    /// Do not write a result file.
    #[arg(long)]
    pub no_save: bool,

    /// Print the result model (JSON) to stdout instead of the table.
    #[arg(long)]
    pub json: bool,

    /// No progress on stderr (no bar, no "iolab: TEST ..." lines); the table or the JSON,
    /// warnings, errors and the "results:" line still print.
    #[arg(long, short = 'q')]
    pub quiet: bool,

    /// Where the result is recorded (`--history`, `--no-history`).
    #[command(flatten)]
    pub history: history::HistoryFlags,
}

impl OutputArgs {
    /// The result directory, `None` with `--no-save`.
    pub fn dir(&self) -> Option<&std::path::Path> {
        (!self.no_save).then_some(self.output.as_path())
    }

    /// The same as a validated config holds it.
    pub fn delivery(&self) -> crate::model::Delivery {
        crate::model::Delivery {
            json: self.json,
            dir: self.dir().map(std::path::Path::to_path_buf),
            quiet: self.quiet,
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    /// The error clap renders for these arguments, folded.
    fn folded(args: &[&str], command: &str) -> String {
        let e = Cli::try_parse_from(args).expect_err("should be refused");
        one_line_error(&e.render().to_string(), command)
    }

    /// The subcommand these words after `iolab` parse into.
    fn parse(args: &[&str]) -> Result<Command, clap::Error> {
        let mut argv = vec!["iolab"];
        argv.extend_from_slice(args);
        try_parse_from(argv).map(|c| c.command)
    }

    #[test]
    fn clap_errors_fold_into_one_line_with_every_detail() {
        let cases: &[(&[&str], &[&str])] = &[
            (
                &["iolab", "run", "--preset", "turbo"],
                &[
                    "invalid value 'turbo' for '--preset <PRESET>'",
                    "(possible values: default, nvme, real, peak)",
                ],
            ),
            (
                &["iolab", "run", "--durration", "5"],
                &[
                    "unexpected argument '--durration'",
                    "tip: a similar argument exists: '--duration'",
                ],
            ),
            (
                &["iolab", "endurance"],
                &["were not provided: --tbw <SIZE>, --daily <SIZE>"],
            ),
            (&["iolab", "run", "--bs", "4x"], &["'4x' is not a size"]),
            (
                &["iolab", "saturate", "--jobs=-1"],
                &[
                    "invalid value '-1' for '--jobs",
                    "is not a whole number of 0 or more",
                ],
            ),
        ];
        for (args, needles) in cases {
            let line = folded(args, "iolab run");
            assert!(!line.contains('\n'), "{args:?}: {line:?}");
            assert!(line.starts_with("error: "), "{args:?}: {line:?}");
            assert!(
                line.ends_with("; see 'iolab run --help'"),
                "{args:?}: {line:?}"
            );
            assert!(!line.contains("Usage:"), "{args:?}: {line:?}");
            for n in *needles {
                assert!(line.contains(n), "{args:?}: {line:?} lacks {n:?}");
            }
        }
    }

    /// A flag or word learned on another subcommand gets what this one calls it, not
    /// clap's tip to pass the flag as a path (`-- --duration`).
    #[test]
    fn flags_of_other_commands_get_this_commands_name_not_a_dash_dash_tip() {
        let cases: &[(&[&str], &str, &str)] = &[
            (
                &["iolab", "sustain", "/mnt", "--duration", "10m"],
                "iolab sustain",
                "--time stops the first pass earlier",
            ),
            (
                &["iolab", "run", "--time", "5s"],
                "iolab run",
                "the measured time of each run is --duration",
            ),
            (
                &["iolab", "matrix", "-t", "/mnt"],
                "iolab matrix",
                "--image-dir DIR",
            ),
        ];
        for (args, command, needle) in cases {
            let line = folded(args, command);
            assert!(line.contains(needle), "{args:?}: {line:?} lacks {needle:?}");
            assert!(!line.contains("use '-- "), "{args:?}: {line:?}");
        }
        // The command's own name for a flag replaces clap's guess by spelling.
        for (args, command, tip, guess) in [
            (
                &["iolab", "files", "--duration", "5"][..],
                "iolab files",
                "tip: iolab files runs counts, not a time",
                "similar argument",
            ),
            (
                &["iolab", "run", "--max-depth", "8"],
                "iolab run",
                "tip: a test's depth is --iodepth",
                "similar argument",
            ),
        ] {
            let line = folded(args, command);
            assert!(line.contains(tip), "{args:?}: {line:?}");
            assert!(!line.contains(guess), "{args:?}: {line:?}");
        }
        // An unknown flag on a command with a positional path: no tip to pass it as one.
        let line = folded(&["iolab", "age", "/mnt", "--bogus"], "iolab age");
        assert!(!line.contains("tip"), "{line:?}");
        // A word on a command without a target gets no target tip.
        let line = folded(&["iolab", "history", "list", "x"], "iolab history list");
        assert!(!line.contains("target"), "{line:?}");
    }

    #[test]
    fn negative_sizes_durations_and_counts_reach_the_value_checks() {
        // With a space, not only with `=`: clap would otherwise take `-1s` for a flag.
        let cases: &[(&[&str], &str)] = &[
            (&["iolab", "run", "--duration", "-1s"], "'-1s' is negative"),
            (&["iolab", "run", "--size", "-4k"], "'-4k' is negative"),
            (
                &["iolab", "run", "--iodepth", "-1"],
                "invalid value '-1' for '--iodepth",
            ),
            (
                &["iolab", "saturate", "--jobs", "-1"],
                "invalid value '-1' for '--jobs",
            ),
            (
                &["iolab", "saturate", "--latency-limit", "-5ms"],
                "'-5ms' is negative",
            ),
            // The file-system commands: a negative value is the flag's value, refused by its
            // own check, not "unexpected argument '-1'" with a tip to write `-- -1`
            // (tests/files.rs runs the checks of the flags clap itself accepts).
            (
                &["iolab", "files", "--jobs", "-3"],
                "invalid value '-3' for '--jobs",
            ),
            (
                &["iolab", "files", "--files-per-portion", "-1"],
                "'-1' for '--files-per-portion <N>': not a whole number of 0 or more",
            ),
            (
                &["iolab", "copy", "--seed", "-1"],
                "'-1' for '--seed <SEED>': not a whole number of 0 or more",
            ),
            // run, saturate and sustain said "unexpected argument '-1' found".
            (
                &["iolab", "run", "--seed", "-1"],
                "'-1' for '--seed <SEED>': not a whole number of 0 or more",
            ),
            (
                &["iolab", "saturate", "--seed", "-1"],
                "'-1' for '--seed <SEED>': not a whole number of 0 or more",
            ),
            (
                &["iolab", "sustain", "/mnt", "--seed", "-1"],
                "'-1' for '--seed <SEED>': not a whole number of 0 or more",
            ),
            (
                &["iolab", "age", "/mnt", "--jobs", "-1"],
                "invalid value '-1' for '--jobs",
            ),
            // A fractional flag said Rust's "invalid float literal".
            (
                &["iolab", "copy", "--scale", "abc"],
                "'abc' for '--scale <F>': not a number (e.g. 0.5, 2 or 1e-3)",
            ),
            (
                &["iolab", "trace", "run", "office", "--scale", "x"],
                "'x' for '--scale <F>': not a number",
            ),
            (
                &["iolab", "age", "/mnt", "--churn", "2x"],
                "'2x' for '--churn <TIMES>': not a number",
            ),
            (
                &[
                    "iolab",
                    "endurance",
                    "--tbw",
                    "80TB",
                    "--daily",
                    "2GB",
                    "--wa",
                    "x",
                ],
                "'x' for '--wa <FACTOR>': not a number",
            ),
        ];
        for (args, needle) in cases {
            let line = folded(args, "iolab");
            assert!(line.contains(needle), "{args:?}: {line:?} lacks {needle:?}");
        }
        // An option where a value was expected is "not a duration", not "negative".
        let line = folded(&["iolab", "run", "--duration", "--repeat"], "iolab");
        assert!(!line.contains("negative"), "{line:?}");
    }

    /// One `--seed` default for every command (saturate's was 1447 where run, sustain and
    /// copy had 65963); age's 1 names its kept tree, and its help says so.
    #[test]
    fn one_seed_default() {
        use clap::CommandFactory;
        let cli = Cli::command();
        let mut seen = Vec::new();
        for sub in cli.get_subcommands() {
            let Some(seed) = sub.get_arguments().find(|a| a.get_long() == Some("seed")) else {
                continue;
            };
            let default: Vec<_> = seed
                .get_default_values()
                .iter()
                .map(|v| v.to_string_lossy().into_owned())
                .collect();
            let want = match sub.get_name() {
                "age" => {
                    let help = seed
                        .get_long_help()
                        .or(seed.get_help())
                        .unwrap()
                        .to_string();
                    assert!(help.contains("iolab-aged-1"), "{help}");
                    "1".to_string()
                }
                _ => crate::os::context::DEFAULT_SEED.to_string(),
            };
            assert_eq!(default, [want], "iolab {} --seed", sub.get_name());
            seen.push(sub.get_name().to_string());
        }
        assert_eq!(seen, ["run", "saturate", "sustain", "copy", "age"]);
    }

    /// `iolab run /mnt` was "unexpected argument '/mnt' found" (with a tip to write
    /// `-t /mnt`) where `iolab sustain /mnt` worked: every command with one target (or
    /// saturate's several) takes it as a word too, and not with -t at once.
    #[test]
    fn the_target_is_taken_as_a_word_everywhere() {
        use std::path::Path;
        for (args, flag) in [
            (&["run", "/mnt/x"][..], &["run", "-t", "/mnt/x"][..]),
            (&["files", "/mnt/x"], &["files", "--target", "/mnt/x"]),
            (&["copy", "/mnt/x"], &["copy", "-t", "/mnt/x"]),
            (
                &["trace", "run", "office", "/mnt/x"],
                &["trace", "run", "office", "-t", "/mnt/x"],
            ),
            (
                &["trace", "replay", "a.trace", "/mnt/x"],
                &["trace", "replay", "a.trace", "-t", "/mnt/x"],
            ),
        ] {
            let (a, b) = (parse(args).unwrap(), parse(flag).unwrap());
            let target = |c: &Command| match c {
                Command::Run(a) => a.target.clone(),
                Command::Files(a) => a.target.clone(),
                Command::Copy(a) => a.target.clone(),
                Command::Trace(t) => match &t.cmd {
                    trace::TraceCmd::Run(a) => a.target.clone(),
                    trace::TraceCmd::Replay(a) => a.target.clone(),
                    _ => unreachable!(),
                },
                _ => unreachable!(),
            };
            assert_eq!(target(&a), Path::new("/mnt/x"), "{args:?}");
            assert_eq!(target(&b), Path::new("/mnt/x"), "{flag:?}");
            let mut both = args.to_vec();
            both.extend(["-t", "/mnt/y"]);
            let e = parse(&both).err().unwrap().to_string();
            assert!(e.contains("cannot be used with"), "{both:?}: {e}");
        }
        let Command::Saturate(s) = parse(&["saturate", "/dev/a", "/dev/b"]).unwrap() else {
            unreachable!()
        };
        assert_eq!(s.target, [Path::new("/dev/a"), Path::new("/dev/b")]);
        // Without one, the default stays the current directory.
        let Command::Run(r) = parse(&["run"]).unwrap() else {
            unreachable!()
        };
        assert_eq!(r.target, Path::new("."));
        // copy --generate makes its own directory: no target word with it.
        assert!(parse(&["copy", "--generate", "/tmp/g", "/mnt/x"]).is_err());
    }

    /// `--keep` keeps what the command made, in every command: `files --keep` and `matrix
    /// --keep` were unknown (`--keep-files`, `--keep-image`, still taken).
    #[test]
    fn keep_is_one_flag_with_the_old_names_still_taken() {
        for flag in ["--keep", "--keep-files"] {
            let Command::Files(f) = parse(&["files", flag]).unwrap() else {
                unreachable!()
            };
            assert!(f.keep_files, "{flag}");
        }
        for flag in ["--keep", "--keep-image"] {
            let Command::Matrix(m) = parse(&["matrix", "--fs", "ext4", flag]).unwrap() else {
                unreachable!()
            };
            assert!(m.keep_image, "{flag}");
        }
        use clap::CommandFactory;
        let cli = Cli::command();
        for sub in ["run", "saturate", "files", "matrix"] {
            let c = cli.find_subcommand(sub).unwrap();
            assert!(
                c.get_arguments().any(|a| a.get_long() == Some("keep")),
                "iolab {sub} --keep"
            );
        }
    }

    /// `-o` is --output in every command that writes something: the measuring commands
    /// took only `--output DIR` where report, history export and trace record take `-o`.
    #[test]
    fn o_is_output_everywhere() {
        use clap::CommandFactory;
        fn walk(c: &clap::Command, path: &str, out: &mut Vec<String>) {
            if let Some(o) = c.get_arguments().find(|a| a.get_long() == Some("output"))
                && o.get_short() != Some('o')
            {
                out.push(path.to_string());
            }
            for s in c.get_subcommands() {
                walk(s, &format!("{path} {}", s.get_name()), out);
            }
        }
        let mut without = Vec::new();
        walk(&Cli::command(), "iolab", &mut without);
        // serve's --output is where the console's tests write, not what it writes.
        assert_eq!(without, ["iolab serve"]);
    }

    /// `iolab run --mix 70` (saturate's --mix takes a percentage, run's none) said "target
    /// 70 does not exist"; the error says the flag takes no value.
    #[test]
    fn a_value_after_a_switch_is_not_blamed_on_the_target() {
        let e = try_parse_from(["iolab", "run", "--mix", "70"])
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("--mix takes no value: '70' after it was taken as the PATH|DEVICE, and no such path exists; the read share of the mixed tests is --rwmix-read PERCENT"),
            "{e}"
        );
        let e = try_parse_from(["iolab", "files", "--nice", "3"])
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("--nice takes no value: '3'"), "{e}");
        // An existing path after a switch is the target it names.
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_str().unwrap();
        let Command::Run(r) = parse(&["run", "--mix", d]).unwrap() else {
            unreachable!()
        };
        assert_eq!(r.target, dir.path());
        assert!(r.mix);
        // A path after a switch is the target, missing or not (the target check says so).
        let Command::Run(r) = parse(&["run", "--verify", "/mnt/gone"]).unwrap() else {
            unreachable!()
        };
        assert_eq!(r.target, std::path::Path::new("/mnt/gone"));
        // Other words are not paths: a kernel device name, a result's number.
        assert!(try_parse_from(["iolab", "info", "--json", "sda"]).is_ok());
        assert!(try_parse_from(["iolab", "history", "show", "--json", "12"]).is_ok());
        // A word after a flag with a value is not concerned.
        assert!(try_parse_from(["iolab", "run", "--size", "8M", "/nonexistent"]).is_ok());
    }

    /// The list's flags before a history subcommand are moved after it, never dropped: a
    /// word that cannot be read (not UTF-8) is refused rather than the filter ignored.
    #[test]
    fn history_flags_before_the_subcommand_are_never_dropped() {
        use std::os::unix::ffi::OsStringExt;
        let bad = std::ffi::OsString::from_vec(vec![b's', 0xff]);
        let argv: Vec<std::ffi::OsString> = vec![
            "iolab".into(),
            "history".into(),
            "--device".into(),
            bad,
            "export".into(),
        ];
        let e = try_parse_from(argv).err().map(|e| e.to_string());
        assert!(
            e.as_deref()
                .is_some_and(|e| e.contains("after 'export'") || e.contains("invalid UTF-8")),
            "{e:?}"
        );
        let Command::History(h) = parse(&["history", "--device", "sda", "export"]).unwrap() else {
            unreachable!()
        };
        let Some(history::HistoryCmd::Export(x)) = h.command else {
            unreachable!()
        };
        assert_eq!(x.filter.device.as_deref(), Some("sda"));
    }
}

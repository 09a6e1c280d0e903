//! The test form -> the argv the command line would take, checked by the command's own
//! parser and validation before anything starts. Only the listed options of each command
//! pass (as `--NAME=VALUE`, so a value can never become a flag); the target must be an
//! absolute path; a destructive target needs its name typed in `confirm`, which becomes
//! `--allow-destroy` (the command then checks it names the target, as on the command line).
//! The form itself (`spec`: the commands, their options and each option's choices) is built
//! from the same list and the command line's own definitions, so the page offers nothing the
//! command line would refuse.

use std::collections::BTreeMap;

use clap::{CommandFactory, Parser};
use serde::{Deserialize, Serialize};

use crate::cli::Cli;

/// What the browser sends to start a test.
#[derive(Debug, Clone, Deserialize)]
pub struct StartForm {
    pub command: String,
    pub target: String,
    #[serde(default)]
    pub options: BTreeMap<String, String>,
    /// The target's name typed again to allow destroying it (`--allow-destroy`).
    #[serde(default)]
    pub confirm: String,
}

/// A checked test: the subcommand's argv (without the program and `--output`).
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    pub command: String,
    pub target: String,
    pub args: Vec<String>,
}

/// The commands the form starts, and the options each takes (its own flag names).
pub const COMMANDS: &[(&str, &[&str])] = &[
    (
        "run",
        &[
            "preset", "duration", "ramp", "repeat", "size", "engine", "rw", "bs", "iodepth", "jobs",
        ],
    ),
    (
        "files",
        &[
            "preset",
            "sizes",
            "portions",
            "passes",
            "files-per-portion",
            "repeat",
            "method",
        ],
    ),
    (
        "saturate",
        &[
            "rw",
            "latency-limit",
            "max-depth",
            "step-duration",
            "ramp",
            "size",
            "bs",
            "jobs",
        ],
    ),
    ("sustain", &["size", "span", "time", "recovery", "rw", "bs"]),
];

/// One option of the form.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FormOption {
    /// The flag's name without `--`.
    pub name: &'static str,
    /// The values the command line accepts (its clap possible values, hidden ones left out):
    /// a choice list; empty for a free-text option.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
    /// The command line's default, when it has one.
    pub default: Option<String>,
}

/// One command of the form with its options, in the form's order.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FormCommand {
    pub command: &'static str,
    pub options: Vec<FormOption>,
    /// The command takes `--allow-destroy` (it can write to a device or an existing file);
    /// the page offers the field only then.
    pub allow_destroy: bool,
}

/// Does `iolab COMMAND` take `--allow-destroy` (from its clap definition)?
fn takes_allow_destroy(command: &str) -> bool {
    Cli::command().find_subcommand(command).is_some_and(|sub| {
        sub.get_arguments()
            .any(|a| a.get_long() == Some("allow-destroy"))
    })
}

/// The form the console shows (`GET /api/form`): `COMMANDS`, each option's choices and
/// default read from the command line's definitions. An option that takes one value from a
/// fixed list is a choice list; a list of several (`saturate --rw a,b`) stays free text.
pub fn spec() -> Vec<FormCommand> {
    let cli = Cli::command();
    COMMANDS
        .iter()
        .map(|(command, options)| {
            let sub = cli
                .find_subcommand(command)
                .unwrap_or_else(|| panic!("the form's command {command} is not a subcommand"));
            let options = options
                .iter()
                .map(|name| {
                    let arg = sub
                        .get_arguments()
                        .find(|a| a.get_long() == Some(name))
                        .unwrap_or_else(|| panic!("iolab {command} has no --{name}"));
                    let single = arg.get_value_delimiter().is_none()
                        && matches!(arg.get_action(), clap::ArgAction::Set);
                    let choices = if single {
                        arg.get_possible_values()
                            .iter()
                            .filter(|v| !v.is_hide_set())
                            .map(|v| v.get_name().to_string())
                            .collect()
                    } else {
                        Vec::new()
                    };
                    // clap's default, else the one the help text names (`[default: 500ms]`:
                    // a flag whose absence means something of its own, as --ramp's).
                    let default = arg
                        .get_default_values()
                        .first()
                        .map(|v| v.to_string_lossy().into_owned())
                        .or_else(|| arg.get_help().and_then(|h| default_in_help(&h.to_string())));
                    FormOption {
                        name,
                        choices,
                        default,
                    }
                })
                .collect();
            FormCommand {
                command,
                options,
                allow_destroy: takes_allow_destroy(command),
            }
        })
        .collect()
}

fn clean(what: &str, v: &str, max: usize) -> Result<String, String> {
    let v = v.trim();
    if v.len() > max {
        return Err(format!("{what}: longer than {max} characters"));
    }
    if v.chars().any(char::is_control) {
        return Err(format!("{what}: control characters are not allowed"));
    }
    Ok(v.to_string())
}

/// The argv of the form (not yet validated by the command).
pub fn plan(form: &StartForm) -> Result<Planned, String> {
    let Some((command, allowed)) = COMMANDS.iter().find(|(c, _)| *c == form.command) else {
        let known: Vec<&str> = COMMANDS.iter().map(|c| c.0).collect();
        return Err(format!(
            "unknown test '{}' (the console starts: {})",
            form.command,
            known.join(", ")
        ));
    };
    let target = clean("target", &form.target, 4096)?;
    if !target.starts_with('/') {
        return Err(format!(
            "target '{target}': give an absolute path (a directory or a /dev/ device)"
        ));
    }
    let mut args = vec![command.to_string(), format!("--target={target}")];
    for (k, v) in &form.options {
        if !allowed.contains(&k.as_str()) {
            return Err(format!(
                "option '{k}' is not one the console passes to {command} (it takes: {})",
                allowed.join(", ")
            ));
        }
        let v = clean(k, v, 200)?;
        if !v.is_empty() {
            args.push(format!("--{k}={v}"));
        }
    }
    let confirm = clean("confirmation", &form.confirm, 4096)?;
    if !confirm.is_empty() && !takes_allow_destroy(command) {
        // Said in the form's words: clap's "unexpected argument '--allow-destroy' found;
        // see 'iolab files --help'" left the user of a browser guessing.
        return Err(format!(
            "iolab {command} never destroys data (it works in files it creates under a directory): leave --allow-destroy empty"
        ));
    }
    if !confirm.is_empty() {
        if confirm != target {
            return Err(format!(
                "the name typed to allow destroying the target ('{confirm}') is not the target '{target}' exactly"
            ));
        }
        args.push(format!("--allow-destroy={target}"));
    }
    Ok(Planned {
        command: command.to_string(),
        target,
        args,
    })
}

/// Parse the argv with the command line's own definitions and run the command's own checks
/// (target kind, `--allow-destroy`, sizes, free space): the message the command line would
/// print, or nothing when the test may start.
pub fn validate(p: &Planned, output: &std::path::Path) -> Result<(), String> {
    let mut argv = vec!["iolab".to_string()];
    argv.extend(p.args.iter().cloned());
    // Before any `--`: the console's result directory.
    let at = argv.iter().position(|a| a == "--").unwrap_or(argv.len());
    argv.insert(at, format!("--output={}", output.display()));
    let cli = Cli::try_parse_from(&argv).map_err(|e| {
        crate::cli::one_line_error(&e.render().to_string(), &format!("iolab {}", p.command))
            .trim_start_matches("error: ")
            .to_string()
    })?;
    cli.command.subcommand().1.check()
}

/// Is the target free of another iolab run (from a terminal, another console)? Its lock is
/// not taken: the test takes it for its whole run.
pub fn target_free(p: &Planned) -> Result<(), String> {
    crate::runner::lock::refuse_if_in_use(std::path::Path::new(&p.target))
        .map_err(|e| e.to_string())
}

/// Can the test take the target's lock at all (`TargetLock`, taken and released at once)?
/// Not where no lock file can be made (`/proc`): the command line's message, a refusal of
/// the target rather than a conflict with another run (it was answered 409, "busy").
pub fn target_lockable(p: &Planned) -> Result<(), String> {
    crate::runner::lock::TargetLock::acquire(std::path::Path::new(&p.target))
        .map(drop)
        .map_err(|e| e.to_string())
}

/// `X` of a help text's `[default: X]`.
fn default_in_help(help: &str) -> Option<String> {
    let start = help.find("[default: ")? + "[default: ".len();
    let len = help[start..].find(']')?;
    Some(help[start..start + len].to_string()).filter(|d| !d.contains(' '))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A form's options: `(name, value)`.
    type Options = &'static [(&'static str, &'static str)];

    fn form(command: &str, target: &str, opts: &[(&str, &str)], confirm: &str) -> StartForm {
        StartForm {
            command: command.into(),
            target: target.into(),
            options: opts
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            confirm: confirm.into(),
        }
    }

    #[test]
    fn a_form_becomes_the_command_lines_argv() {
        let p = plan(&form(
            "run",
            "/dev/loop9",
            &[("preset", "default"), ("duration", "2s"), ("size", "")],
            "/dev/loop9",
        ))
        .unwrap();
        assert_eq!(
            p.args,
            [
                "run",
                "--target=/dev/loop9",
                "--duration=2s",
                "--preset=default",
                "--allow-destroy=/dev/loop9"
            ]
        );
        let p = plan(&form("sustain", "/mnt/x", &[("size", "64M")], "")).unwrap();
        assert_eq!(p.args, ["sustain", "--target=/mnt/x", "--size=64M"]);
    }

    /// The form's lists are the command line's: `files --preset` offers quick and full (the
    /// page once offered `belov`, which the command line refuses), and every option named
    /// in `COMMANDS` is a flag of its command (`spec` panics otherwise).
    #[test]
    fn the_forms_choices_are_the_command_lines_possible_values() {
        let spec = spec();
        let choices = |c: &str, o: &str| -> Vec<String> {
            let cmd = spec.iter().find(|x| x.command == c).unwrap();
            cmd.options
                .iter()
                .find(|x| x.name == o)
                .unwrap()
                .choices
                .clone()
        };
        assert_eq!(choices("files", "preset"), ["quick", "full"]);
        assert_eq!(
            choices("run", "preset"),
            ["default", "nvme", "real", "peak"]
        );
        // The engine, as `iolab run --engine` takes it (the form once had no engine: a
        // null-engine or sync run could not be started from the console).
        assert_eq!(choices("run", "engine"), ["sync", "uring", "null"]);
        assert_eq!(
            choices("files", "method"),
            ["write", "copy_file_range", "sendfile"]
        );
        // A comma-separated list is typed, not chosen.
        assert!(choices("saturate", "rw").is_empty());
        assert!(choices("run", "duration").is_empty());
        let files = spec.iter().find(|x| x.command == "files").unwrap();
        let method = files.options.iter().find(|o| o.name == "method").unwrap();
        assert_eq!(method.default.as_deref(), Some("write"));
        // A default the help text names (--ramp has none of clap's: its absence differs
        // between timed and size-based runs); the form showed "(default)" without it.
        let run = spec.iter().find(|x| x.command == "run").unwrap();
        let ramp = run.options.iter().find(|o| o.name == "ramp").unwrap();
        assert_eq!(ramp.default.as_deref(), Some("500ms"));
        // Every choice is accepted by the command's own parser.
        let d = tempfile::tempdir().unwrap();
        let t = d.path().display().to_string();
        for c in &spec {
            for o in c.options.iter().filter(|o| !o.choices.is_empty()) {
                for v in &o.choices {
                    let p = plan(&form(c.command, &t, &[(o.name, v)], "")).unwrap();
                    let mut argv = vec!["iolab".to_string()];
                    argv.extend(p.args.iter().cloned());
                    Cli::try_parse_from(&argv)
                        .unwrap_or_else(|e| panic!("{} --{}={v}: {e}", c.command, o.name));
                }
            }
        }
    }

    #[test]
    fn unknown_commands_options_relative_targets_and_wrong_names_are_refused() {
        // (command, target, options, --allow-destroy, what the refusal says)
        let refused: [(&str, &str, Options, &str, &[&str]); 6] = [
            ("matrix", "/x", &[], "", &["unknown test 'matrix'"]),
            (
                "run",
                "/x",
                &[("output", "/etc")],
                "",
                &["option 'output' is not one"],
            ),
            ("run", "x", &[], "", &["absolute path"]),
            (
                "run",
                "/dev/loop9",
                &[],
                "/dev/loop8",
                &["is not the target '/dev/loop9' exactly"],
            ),
            (
                "run",
                "/x",
                &[("duration", "1s\n--no-save")],
                "",
                &["control characters"],
            ),
            // A command without --allow-destroy: said in the form's words, not clap's
            // "unexpected argument '--allow-destroy' found; see 'iolab files --help'".
            (
                "files",
                "/x",
                &[],
                "/x",
                &[
                    "iolab files never destroys data",
                    "leave --allow-destroy empty",
                ],
            ),
        ];
        for (command, target, opts, confirm, says) in refused {
            let e = plan(&form(command, target, opts, confirm)).unwrap_err();
            for s in says {
                assert!(
                    e.contains(s),
                    "{command} {target} {opts:?} {confirm:?}: {e}"
                );
            }
        }
        // The form offers the field exactly where the command line takes the flag.
        let offers: Vec<(&str, bool)> = spec()
            .iter()
            .map(|c| (c.command, c.allow_destroy))
            .collect();
        assert_eq!(
            offers,
            [
                ("run", true),
                ("files", false),
                ("saturate", true),
                ("sustain", true)
            ]
        );
    }

    #[test]
    fn the_commands_own_checks_refuse_bad_values() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path().display().to_string();
        // (command, options, None: accepted, or Some(what the refusal says))
        let cases: [(&str, Options, Option<&str>); 5] = [
            ("run", &[("iodepth", "0")], Some("--iodepth")),
            ("run", &[("preset", "turbo")], Some("invalid value 'turbo'")),
            ("run", &[("duration", "1s"), ("size", "1M")], None),
            // sustain takes --target like the other commands.
            ("sustain", &[("size", "8M")], None),
            ("sustain", &[("size", "-8M")], Some("negative")),
        ];
        for (command, opts, refusal) in cases {
            let p = plan(&form(command, &t, opts, "")).unwrap();
            match (validate(&p, d.path()), refusal) {
                (Ok(_), None) => {}
                (Err(e), Some(says)) => assert!(e.contains(says), "{command} {opts:?}: {e}"),
                (got, _) => panic!("{command} {opts:?}: {got:?}, expected {refusal:?}"),
            }
        }
    }
}

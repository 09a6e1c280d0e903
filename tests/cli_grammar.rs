//! One tool, one grammar: a flag learned on one subcommand means the same on every other
//! (the output flags of every measuring command, the targets, the tips of usage errors),
//! and what the help and the completions list is what the commands take.

mod common;

use common::*;

/// The measuring subcommands as typed (`trace run`, not `trace`).
const MEASURING: &[&[&str]] = &[
    &["run"],
    &["saturate"],
    &["sustain"],
    &["files"],
    &["copy"],
    &["trace", "run"],
    &["trace", "replay"],
    &["matrix"],
    &["slack"],
    &["age"],
];

/// `-q`/`--quiet` was a flag of `age` and `copy` only: `iolab run -q` was "unexpected
/// argument '-q'". Every measuring command takes it now, with the other output flags.
#[test]
fn every_measuring_command_takes_the_same_output_flags() {
    for cmd in MEASURING {
        let mut args = cmd.to_vec();
        args.push("--help");
        let o = iolab(&args);
        assert!(o.status.success(), "{cmd:?}: {}", stderr(&o));
        let help = stdout(&o);
        for flag in ["-q, --quiet", "--json", "--no-save", "-o, --output <DIR>"] {
            assert!(
                help.contains(flag),
                "iolab {cmd:?} --help lacks {flag}:\n{help}"
            );
        }
    }
}

/// `--history` and `--no-history` were global: `iolab info --help`, `endurance`,
/// `completions` and `man` listed them, and `iolab info --no-history /tmp` was taken,
/// though none of them records a result or reads the history. They are flags of the
/// commands they act on (and before any subcommand, as the console starts its tests).
#[test]
fn history_flags_show_only_where_they_act() {
    let help = |args: &[&str]| {
        let mut a = args.to_vec();
        a.push("--help");
        let o = iolab(&a);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        stdout(&o)
    };
    let mut acting: Vec<&[&str]> = MEASURING.to_vec();
    acting.extend([
        &["serve"][..],
        &["history"],
        &["history", "list"],
        &["history", "trend"],
    ]);
    for cmd in acting {
        let h = help(cmd);
        for flag in ["--history <PATH>", "--no-history"] {
            assert!(h.contains(flag), "iolab {cmd:?} --help lacks {flag}:\n{h}");
        }
    }
    for cmd in [
        &["info"][..],
        &["endurance"],
        &["report"],
        &["compare"],
        &["completions"],
        &["man"],
        &["trace", "summary"],
        &["trace", "record"],
    ] {
        let h = help(cmd);
        assert!(!h.contains("history"), "iolab {cmd:?} --help:\n{h}");
    }
    // Taken where they act, before or after the subcommand; refused elsewhere.
    let o = iolab(&["info", "--no-history", "/tmp"]);
    assert_usage(&o, "--no-history");
    let o = iolab(&["--no-history", "info", "/tmp"]);
    assert_usage(
        &o,
        "--history and --no-history: `iolab info` neither records a result nor reads the history",
    );
    let db = tempdir();
    let db = db.path().join("h.sqlite");
    for args in [
        vec!["history", "--history", s(&db), "list"],
        vec!["history", "list", "--history", s(&db)],
        vec!["--history", s(&db), "history", "list"],
    ] {
        let o = iolab(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    }
    let o = iolab(&["man", "info"]);
    assert!(!stdout(&o).contains("history"), "{}", stdout(&o));
}

/// `iolab run /mnt` was refused (the target only as `-t`) where `iolab sustain /mnt` worked:
/// every measuring command with a target names it as a word in its usage line, its man
/// page and its `-t` help. (The matrix makes its own file systems.)
#[test]
fn every_target_is_also_a_word() {
    for cmd in MEASURING.iter().filter(|c| c[0] != "matrix") {
        let mut args = cmd.to_vec();
        args.push("--help");
        let help = stdout(&iolab(&args));
        let usage = help
            .lines()
            .find(|l| l.starts_with("Usage:"))
            .unwrap_or_default();
        assert!(
            usage.contains("[PATH|DEVICE]")
                || usage.contains("[DIR]")
                || usage.contains("[TARGET]"),
            "iolab {cmd:?}: {usage}"
        );
        assert!(help.contains("-t, --target"), "iolab {cmd:?} --help");
        let man = stdout(&iolab(&[&["man"][..], cmd].concat()));
        assert!(
            ["PATH|DEVICE", "DIR", "TARGET"]
                .iter()
                .any(|w| man.contains(&format!("[\\fI{w}\\fR]"))),
            "iolab man {cmd:?}"
        );
    }
}

/// The progress lines a run prints on stderr without a terminal: `iolab: LABEL ...` when a
/// task starts and `iolab: LABEL done in …` when it ends; saturate's plan (`estimated time`).
fn progress_lines(err: &str) -> Vec<&str> {
    err.lines()
        .filter(|l| l.ends_with(" ...") || l.contains(" done in ") || l.contains("estimated time"))
        .collect()
}

/// A small run of every measuring command on `t` (size-based or tiny, the null engine where
/// the command has one: no disk speed involved), and slack on `src`.
fn quick_runs<'a>(t: &'a str, src: &'a str) -> Vec<Vec<&'a str>> {
    vec![
        vec![
            "run",
            "-t",
            t,
            "--engine",
            "null",
            "--size",
            "4M",
            "--preset",
            "real",
            "--repeat",
            "1",
            "--io-size",
            "1M",
            "--ramp",
            "0s",
        ],
        vec![
            "files",
            "-t",
            t,
            "--sizes",
            "1K",
            "--files-per-portion",
            "5",
            "--portions",
            "2",
            "--passes",
            "1",
            "--repeat",
            "1",
        ],
        vec![
            "copy",
            "-t",
            t,
            "--dataset",
            "media-mix",
            "--scale",
            "0.001",
            "--repeat",
            "1",
        ],
        vec![
            "trace", "run", "office", "-t", t, "--scale", "0.01", "--repeat", "1",
        ],
        vec!["sustain", t, "--size", "8M", "--engine", "sync"],
        vec![
            "saturate",
            "-t",
            t,
            "--size",
            "8M",
            "--rw",
            "randread",
            "--max-depth",
            "1",
            "--step-duration",
            "50ms",
            "--ramp",
            "0s",
            "--allow-buffered",
        ],
        vec!["slack", src],
    ]
}

/// `--quiet` silences the progress of every measuring command, and only that: the table
/// still prints. Small size-based or tiny runs (the null engine where the command has one),
/// so the test does not depend on the disk's speed.
#[test]
fn quiet_silences_the_progress_of_every_measuring_command() {
    let dir = tempdir();
    let t = s(dir.path());
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let runs = quick_runs(t, src);
    for args in &runs {
        let mut loud = args.to_vec();
        loud.push("--no-save");
        let o = iolab(&loud);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert!(
            !progress_lines(&stderr(&o)).is_empty() || args[0] == "slack",
            "{args:?}: no progress lines to silence in the first place: {}",
            stderr(&o)
        );
        for q in ["-q", "--quiet"] {
            let mut quiet = loud.clone();
            quiet.push(q);
            let o = iolab(&quiet);
            assert!(o.status.success(), "{quiet:?}: {}", stderr(&o));
            let err = stderr(&o);
            assert!(
                progress_lines(&err).is_empty(),
                "{quiet:?} printed progress: {err}"
            );
            assert!(!stdout(&o).trim().is_empty(), "{quiet:?}: no table");
        }
    }
    assert!(
        names(dir.path()).is_empty(),
        "left behind: {:?}",
        names(dir.path())
    );
}

/// `iolab slack DIR --json` interrupted printed nothing at all on stdout (every other
/// command prints its document, status `interrupted`): a script's `> scan.json` was empty.
/// The scan of `/` (one file system) is interrupted once the run has started (the hidden
/// progress stream's `start` event), so the signal finds the scan under way; a root file
/// system scanned in less time than that is a loud skip.
#[test]
fn slack_json_prints_the_document_also_when_interrupted() {
    use std::process::Stdio;
    let dir = tempdir();
    let events = dir.path().join("events.jsonl");
    let child = bin()
        .args(["slack", "/", "-x", "--json", "--no-save", "--progress-json"])
        .arg(&events)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = wait_until(std::time::Duration::from_secs(60), || {
        std::fs::read_to_string(&events).is_ok_and(|e| e.contains("\"start\""))
    });
    assert!(started, "slack never started");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let o = child.wait_with_output().unwrap();
    if o.status.code() == Some(0) {
        skip(
            "slack_json_prints_the_document_also_when_interrupted",
            "the scan of / ended before the signal",
        );
        return;
    }
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let doc = json(&o);
    assert_eq!(doc["status"], "interrupted", "{doc}");
    assert_eq!(doc["command"], "slack");
}

/// A value means one thing on every command. `iolab saturate --rw readwrite` (or `rw`) was
/// an alias of its random `mixed` sweep while `iolab run --rw readwrite` is one sequential
/// mixed stream; `--rw randrw` got clap's tip "a similar value exists: 'randwrite'" (a
/// write-only sweep). Each is refused (exit 2) with what saturate runs instead.
#[test]
fn saturate_refuses_the_patterns_of_iolab_run_and_says_what_it_runs() {
    let dir = tempdir();
    let t = s(dir.path());
    for (value, needle) in [
        ("readwrite", "iolab run's sequential mixed stream"),
        ("rw", "iolab run's sequential mixed stream"),
        ("randread,rw", "iolab run's sequential mixed stream"),
        ("randrw", "--rw mixed"),
        ("read", "random I/O only"),
        ("write", "random I/O only"),
    ] {
        let o = iolab(&["saturate", "-t", t, "--rw", value, "--no-save"]);
        assert_usage(&o, needle);
        let err = stderr(&o);
        assert!(!err.contains("similar value"), "{value}: {err}");
        assert!(
            err.ends_with("see 'iolab saturate --help'\n"),
            "{value}: {err}"
        );
    }
    assert!(
        names(dir.path()).is_empty(),
        "left behind: {:?}",
        names(dir.path())
    );
    // The sweep names themselves are still taken (the help lists them).
    let help = stdout(&iolab(&["saturate", "--help"]));
    for v in ["randread", "randwrite", "mixed"] {
        assert!(help.contains(&format!("- {v}:")), "{help}");
    }
}

/// `-t/--target` names the target of every command that has one: `iolab slack -t DIR` and
/// `iolab info -t PATH` were "unexpected argument '-t'" with clap's tip "to pass '-t' as a
/// value, use '-- -t'" (which would have scanned a directory named `-t`), though `sustain`
/// and `age` say their positional target is "also taken as -t/--target, as the other
/// commands take it".
#[test]
fn slack_and_info_take_their_target_as_t_too() {
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    for flag in ["-t", "--target"] {
        let by_flag = json_ok(&iolab(&["slack", flag, src, "--json", "--no-save"]));
        let by_pos = json_ok(&iolab(&["slack", src, "--json", "--no-save"]));
        assert_eq!(by_flag["slack"]["path"], src, "slack {flag}: {by_flag}");
        assert_eq!(
            by_flag["slack"]["scan"]["files"], by_pos["slack"]["scan"]["files"],
            "slack {flag}: {by_flag}"
        );
        assert!(
            by_flag["slack"]["scan"]["files"].as_u64().unwrap() > 0,
            "{by_flag}"
        );

        let by_flag = json_ok(&iolab(&["info", flag, src, "--json", "--no-smart"]));
        assert_eq!(by_flag["path"], src, "info {flag}: {by_flag}");
    }
    // Both at once is one target too many, as for sustain and age.
    assert_usage(
        &iolab(&["slack", "-t", src, src, "--no-save"]),
        "cannot be used with",
    );
    assert_usage(&iolab(&["info", "-t", src, src]), "cannot be used with");
    assert_usage(&iolab(&["sustain", "-t", src, src]), "cannot be used with");
}

/// Every flag of every (sub)command, with whether it is hidden: (command path, `--long`).
fn flags(cmd: &clap::Command, path: &str, out: &mut Vec<(String, String, bool)>) {
    for a in cmd.get_arguments() {
        if let Some(l) = a.get_long() {
            out.push((path.to_string(), format!("--{l}"), a.is_hide_set()));
        }
    }
    for sub in cmd.get_subcommands() {
        flags(sub, &format!("{path} {}", sub.get_name()), out);
    }
}

/// The completions offer what --help and the man pages show, not the hidden flags:
/// `iolab run --<TAB>` listed `--progress-json` (the web console's machine stream) and
/// `iolab matrix --<TAB>` `--setup-only`. Every shell's script; bash's loads.
#[test]
fn completions_offer_the_visible_flags_only() {
    use clap::CommandFactory;
    let mut all = Vec::new();
    flags(&iolab::cli::Cli::command(), "iolab", &mut all);
    let hidden: Vec<_> = all.iter().filter(|(_, _, h)| *h).collect();
    assert!(
        hidden.iter().any(|(_, l, _)| l == "--progress-json"),
        "the test expects a hidden flag to exist: {hidden:?}"
    );
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = iolab(&["completions", shell]);
        assert!(o.status.success(), "{shell}: {}", stderr(&o));
        let text = stdout(&o);
        for (cmd, long, _) in &hidden {
            let bare = long.trim_start_matches('-');
            assert!(
                !text.contains(bare),
                "{shell} completions offer the hidden {long} of {cmd}"
            );
        }
        for visible in [
            "keep",
            "quiet",
            "allow-destroy",
            "steadystate-max",
            "image-dir",
            "no-history",
        ] {
            assert!(
                text.contains(visible),
                "{shell} completions lack --{visible}"
            );
        }
    }
    let o = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source <('{}' completions bash) && complete -p iolab",
            env!("CARGO_BIN_EXE_iolab")
        ))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).is_empty(), "bash: {}", stderr(&o));
    assert!(stdout(&o).contains("-F _iolab iolab"), "{}", stdout(&o));
}

/// `iolab man <TAB>` offered no subcommand names, though `iolab man NAME` takes one; every
/// shell's script offers them now (bash run as the shell would, zsh and fish read).
#[test]
fn completions_offer_the_man_pages_names() {
    let o = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source <('{}' completions bash) && COMP_WORDS=(iolab man '') COMP_CWORD=2 \
             COMP_LINE='iolab man ' COMP_POINT=10 && _iolab iolab '' man && echo \"${{COMPREPLY[@]}}\"",
            env!("CARGO_BIN_EXE_iolab")
        ))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let offered: Vec<String> = stdout(&o).split_whitespace().map(String::from).collect();
    for name in ["run", "trace", "record", "history", "export", "completions"] {
        assert!(
            offered.iter().any(|o| o == name),
            "bash: {name} not in {offered:?}"
        );
    }
    let zsh = stdout(&iolab(&["completions", "zsh"]));
    let man = zsh
        .lines()
        .find(|l| l.starts_with("'*::command -- The subcommand whose page"))
        .expect("zsh: man's SUBCOMMAND argument");
    assert!(man.contains("(age compare completions copy"), "zsh: {man}");
    let fish = stdout(&iolab(&["completions", "fish"]));
    let man = fish
        .lines()
        .find(|l| l.contains("using_subcommand man\" -f -a"))
        .expect("fish: man's names");
    assert!(
        man.contains(" record ") && man.contains(" run "),
        "fish: {man}"
    );
    // Typed, a name without a page keeps iolab's own message.
    let o = iolab(&["man", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no man page for 'nope'"),
        "{}",
        stderr(&o)
    );
}

/// `iolab ARGS > /dev/full` says so on stderr and exits 1.
fn says_stdout_is_full(args: &[&str]) {
    stdout_full_says(
        &mut bin(),
        args,
        "cannot write to stdout: No space left on device",
    );
}

/// `cmd ARGS > /dev/full` exits 1 with `says` on stderr.
fn stdout_full_says(cmd: &mut std::process::Command, args: &[&str], says: &str) {
    let o = cmd
        .args(args)
        .stdout(std::fs::File::create("/dev/full").unwrap())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
    assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
}

/// `iolab completions bash > FILE` on a full disk exited 0 and left a short file; the
/// script and the man page now say so and exit 1, as the help and the version do (clap
/// printed them and exited 0 with nothing written). A pipe closed early stays quiet.
#[test]
fn completions_and_man_say_when_stdout_cannot_take_them() {
    for args in [
        &["completions", "bash"][..],
        &["man", "run"],
        &["--help"],
        &["run", "--help"],
        &["history", "list", "-h"],
        &["--version"],
    ] {
        says_stdout_is_full(args);
    }
    let o = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "'{}' completions zsh | head -c 10 >/dev/null; echo ${{PIPESTATUS[0]}}",
            env!("CARGO_BIN_EXE_iolab")
        ))
        .output()
        .unwrap();
    assert_eq!(stdout(&o).trim(), "0", "{}", stderr(&o));
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
}

/// `iolab info > FILE`, `endurance`, `compare`, a measurement's table, ... on a full disk
/// exited 0 and left a short file (`out!` dropped every write error); every command now says
/// "cannot write to stdout" and exits 1, and a measurement still saves its result file.
#[test]
fn every_command_says_when_stdout_cannot_take_its_output() {
    let dir = tempdir();
    let t = s(dir.path());
    let result = dir.path().join("run.json");
    let full = says_stdout_is_full;
    let mut run = quick_runs(t, "")[0].clone();
    run.extend(["-q", "-o", s(&result)]);
    full(&run);
    assert!(result.is_file(), "the result file was not saved");
    let json = [&run[..], &["--json"][..]].concat();
    full(&json);
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    for mut args in quick_runs(t, src).into_iter().skip(1) {
        args.extend(["-q", "--no-save"]);
        full(&args);
    }
    for args in [
        &["info", t][..],
        &["endurance", "--tbw", "80TB", "--daily", "20GB"],
        &["compare", s(&result), s(&result)],
        &["trace", "list"],
        &["completions", "fish"],
        &["man", "info"],
    ] {
        full(args);
    }
    let db = dir.path().join("h.sqlite");
    let o = with_history(&mut bin(), &db)
        .args(["history", "import", s(&result)])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    for args in [["history", "list"], ["history", "export"]] {
        stdout_full_says(
            with_history(&mut bin(), &db),
            &args,
            "No space left on device",
        );
    }
    std::fs::remove_file(&result).unwrap();
    let _ = std::fs::remove_file(&db);
}

/// The help says what the flag does on this command. `iolab matrix --help` described
/// `--repeat` as "Runs per test" (the shared text of run, files, copy, trace), though a
/// matrix repeat is a configuration measured again on a freshly made file system; `iolab
/// sustain --help` offered `--engine null`, which sustain refuses.
#[test]
fn help_texts_say_what_the_flag_does_on_this_command() {
    let help = stdout(&iolab(&["matrix", "--help"]));
    let repeat = help
        .split("--repeat <N|auto>")
        .nth(1)
        .and_then(|h| h.split("--max-repeat").next())
        .expect("matrix --help lists --repeat");
    assert!(repeat.contains("Runs per configuration"), "{repeat}");
    assert!(repeat.contains("freshly made file system"), "{repeat}");
    assert!(!repeat.contains("Runs per test"), "{repeat}");
    // The others keep theirs.
    assert!(stdout(&iolab(&["run", "--help"])).contains("Runs per test"));

    let help = stdout(&iolab(&["sustain", "--help"]));
    let engine = help
        .split("--engine <ENGINE>")
        .nth(1)
        .and_then(|h| h.split("--interval").next())
        .expect("sustain --help lists --engine");
    assert!(
        engine.contains("- uring") && engine.contains("- sync"),
        "{engine}"
    );
    assert!(!engine.contains("null"), "{engine}");
    let dir = tempdir();
    let o = iolab(&["sustain", s(dir.path()), "--engine", "null", "--no-save"]);
    assert_usage(&o, "the null engine writes nothing");
    let o = iolab(&["sustain", s(dir.path()), "--engine", "bogus", "--no-save"]);
    assert_usage(&o, "(possible values: sync, uring)");
    // run keeps its null engine.
    assert!(stdout(&iolab(&["run", "--help"])).contains("- null:"));
}

/// The `"IOLAB_…"` string literals in the Rust files under `dir`.
fn env_names_in(dir: &std::path::Path, out: &mut std::collections::BTreeSet<String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            env_names_in(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let text = std::fs::read_to_string(&p).unwrap();
            for (i, _) in text.match_indices("\"IOLAB_") {
                let name: String = text[i + 1..]
                    .chars()
                    .take_while(|c| c.is_ascii_uppercase() || *c == '_')
                    .collect();
                out.insert(name);
            }
        }
    }
}

/// Every environment variable iolab reads is documented, in the guide's one list: the
/// docs named `IOLAB_STATE_DIR` only in RELIABILITY.md's table and `NO_COLOR` nowhere.
#[test]
fn every_environment_variable_is_in_the_guides_list() {
    let mut names = std::collections::BTreeSet::new();
    env_names_in(
        std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src")),
        &mut names,
    );
    assert!(names.contains("IOLAB_HISTORY"), "{names:?}");
    let guide =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/GUIDE.md")).unwrap();
    let list = guide
        .split("**Environment variables**")
        .nth(1)
        .and_then(|g| g.split("\n\n").next())
        .expect("GUIDE.md has the list of environment variables");
    for name in names.iter().filter(|n| !n.starts_with("IOLAB_TEST_")) {
        assert!(
            list.contains(&format!("`{name}")),
            "{name} is not in the guide's list"
        );
    }
    assert!(list.contains("`IOLAB_TEST_*`"), "{list}");
    for other in ["NO_COLOR", "XDG_DATA_HOME"] {
        assert!(list.contains(other), "{other} is not in the guide's list");
    }
}

/// `--json` on a listing prints JSON, as `iolab copy --dataset list --json` does: `iolab
/// age --list-profiles --json` printed the text table, `iolab trace list` had no --json.
#[test]
fn listings_print_json_with_json() {
    let doc = json_ok(&iolab(&["age", "--list-profiles", "--json"]));
    let names: Vec<&str> = doc
        .as_array()
        .expect("an array of profiles")
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["desktop", "media", "source-tree"], "{doc}");
    assert_eq!(doc[0]["fill"], 0.8, "{doc}");
    assert!(doc[0]["largest_file_bytes"].as_u64().unwrap() > 0, "{doc}");
    let doc = json_ok(&iolab(&["copy", "--dataset", "list", "--json"]));
    assert!(doc.as_array().is_some_and(|a| !a.is_empty()), "{doc}");
    // `iolab trace list --json` was "unexpected argument '--json'".
    let doc = json_ok(&iolab(&["trace", "list", "--json"]));
    let first = &doc.as_array().expect("an array of workloads")[0];
    assert_eq!(first["name"], "hd-playback", "{doc}");
    assert!(first["description"].as_str().is_some(), "{doc}");
    assert!(first.get("toml").is_none(), "{doc}");
    let doc = json_ok(&iolab(&["trace", "list", "--json", "--verbose"]));
    assert!(
        doc[0]["toml"].as_str().is_some_and(|t| !t.is_empty()),
        "{doc}"
    );
    // Without --json, the table.
    let o = iolab(&["age", "--list-profiles"]);
    assert!(stdout(&o).starts_with("desktop "), "{}", stdout(&o));
}

/// The help of `iolab run --bs/--iodepth/--jobs` showed no default; the defaults it shows
/// now are the ones a run takes (null engine, size-based: no dependence on the disk).
#[test]
fn run_help_shows_the_block_depth_and_jobs_defaults_it_uses() {
    let help = stdout(&iolab(&["run", "--help"]));
    for needle in [
        "[default: a\n          custom test's 4KiB random, 1MiB sequential",
        "[default: 1 for a custom test; a preset test's own (Q8, Q32, Q1)]",
        "1\n          for a custom test; a preset test's own (T1, T16)]",
    ] {
        let flat = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat(&help).contains(&flat(needle)),
            "{needle:?} not in:\n{help}"
        );
    }
    let dir = tempdir();
    let names = |extra: &[&str]| -> Vec<String> {
        let mut args = vec![
            "run",
            "-t",
            s(dir.path()),
            "--engine",
            "null",
            "--size",
            "4M",
            "--repeat",
            "1",
            "--io-size",
            "1M",
            "--ramp",
            "0s",
            "--no-save",
            "--json",
        ];
        args.extend_from_slice(extra);
        let doc = json_ok(&iolab(&args));
        doc["tests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names(&["--rw", "randread"]), ["RND4K Q1T1 read"]);
    assert_eq!(names(&["--rw", "write"]), ["SEQ1M Q1T1 write"]);
    assert_eq!(
        names(&["--preset", "real", "--rw", "read"]),
        ["SEQ1M Q1T1 read"]
    );
}

/// One number, one meaning: `iolab age --fill 0.4` is 40 %, while `iolab endurance --used
/// 0.4` silently meant 0.4 % (and the output said "0 % used"). A bare number between 0 and
/// 1 is refused there now with both readings; `0.4%` is taken and shown as 0.4 %.
#[test]
fn endurance_used_refuses_a_fraction_and_shows_what_it_took() {
    let base = ["endurance", "--tbw", "80TB", "--daily", "20GB", "--used"];
    let with = |v: &str| {
        let mut a = base.to_vec();
        a.push(v);
        iolab(&a)
    };
    let o = with("0.4");
    assert_usage(&o, "write 40 for 40 %, or 0.4% if 0.4 % is meant");
    let o = with("0.4%");
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("0.4 % (--used)"), "{out}");
    assert!(out.contains("after 0.4 % used"), "{out}");
    for v in ["40", "40%", "0", "1"] {
        let o = with(v);
        assert!(o.status.success(), "--used {v}: {}", stderr(&o));
    }
    assert!(stdout(&with("40")).contains("after 40 % used"));
}

/// With `--json` every measuring command names its result file on stderr (`results:
/// PATH`), as saturate did alone; stdout holds the document only.
#[test]
fn json_runs_name_their_result_file_on_stderr_as_saturate_does() {
    let dir = tempdir();
    let t = s(dir.path()).to_string();
    let out = dir.path().join("results");
    let o_arg = s(&out).to_string();
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let runs = quick_runs(&t, src);
    for mut args in runs {
        args.extend(["--json", "--output", &o_arg]);
        let o = iolab(&args);
        let doc = json_ok(&o);
        let err = stderr(&o);
        let line = err
            .lines()
            .find_map(|l| l.strip_prefix("results: "))
            .unwrap_or_else(|| panic!("{args:?}: no results line: {err}"));
        assert!(line.starts_with(&o_arg), "{args:?}: {line}");
        let saved: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(line).unwrap()).unwrap();
        assert_eq!(saved["command"], doc["command"], "{args:?}");
    }
}

/// `-o` names a file where a command writes one, and a directory is taken there too (the
/// default name inside it): `--output result.json` made a directory named result.json,
/// `report -o DIR` and `history export -o DIR` were refused. Slack on the source tree: no
/// disk speed involved.
#[test]
fn o_takes_a_file_or_a_directory() {
    let dir = tempdir();
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let file = dir.path().join("slack.json");
    let o = iolab(&["slack", src, "-q", "-o", s(&file)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(file.is_file(), "{file:?} is not the result file");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(doc["command"], "slack", "{doc}");
    assert!(
        stderr(&o).contains(&format!("results: {}", s(&file))),
        "{}",
        stderr(&o)
    );
    // A directory is still a directory of result files.
    let results = dir.path().join("results");
    let o = iolab(&["slack", src, "-q", "-o", s(&results)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let listed = names(&results);
    assert!(
        listed.len() == 1 && listed[0].starts_with("slack-") && listed[0].ends_with(".json"),
        "{listed:?}"
    );

    // report -o DIR: report.html inside it.
    let reports = dir.path().join("reports");
    std::fs::create_dir(&reports).unwrap();
    let o = iolab(&["report", s(&file), "-o", s(&reports)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(names(&reports), ["report.html"]);

    // history export -o DIR: iolab-history.json inside it.
    let db = dir.path().join("h.sqlite");
    let mut c = bin();
    let o = with_history(&mut c, &db)
        .args(["history", "import", s(&file)])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let exports = dir.path().join("exports");
    std::fs::create_dir(&exports).unwrap();
    for format in ["json", "csv"] {
        let mut c = bin();
        let o = with_history(&mut c, &db)
            .args(["history", "export", "--format", format, "-o", s(&exports)])
            .output()
            .unwrap();
        assert!(o.status.success(), "{format}: {}", stderr(&o));
    }
    assert_eq!(names(&exports), ["iolab-history.csv", "iolab-history.json"]);
}

/// `cmd` (iolab, or a shell that execs it) with `args`, no result file, no history, no color.
fn saving_nothing(cmd: &mut std::process::Command, args: &[&str]) -> std::process::Output {
    cmd.args(args)
        .arg("--no-save")
        .env("NO_COLOR", "1")
        .env("IOLAB_NO_HISTORY", "1")
        .output()
        .unwrap()
}

/// A directory target deleted while the shell stood in it (`iolab run` typed there) is
/// said to be deleted by every command that takes a directory, as `iolab info` says it:
/// `run`, `sustain` and `trace run` said "iolab cannot create files there (its lock file …:
/// No such file or directory); give a directory on a writable file system", and `saturate`
/// "refuses O_DIRECT … pass --allow-buffered".
#[test]
fn a_deleted_current_directory_is_said_to_be_deleted() {
    let d = tempdir();
    let gone = d.path().join("gone");
    let commands: &[&[&str]] = &[
        &["run"],
        &["saturate"],
        &["sustain", "."],
        &["files"],
        &["copy"],
        &["trace", "run", "office"],
        &["age", "."],
    ];
    for args in commands {
        std::fs::create_dir(&gone).unwrap();
        let mut sh = std::process::Command::new("sh");
        sh.arg("-c")
            .arg(r#"cd "$1" && rmdir "$1" && shift && exec "$@""#)
            .arg("sh")
            .arg(&gone)
            .arg(env!("CARGO_BIN_EXE_iolab"));
        let o = saving_nothing(&mut sh, args);
        assert_usage(&o, ".: it was deleted (no directory names it now)");
        assert!(!gone.exists(), "{args:?}");
    }
}

/// A target that does not exist is said so in the same words by every command that takes
/// one: `files`, `copy` (also its `--source`) and `age` said "No such file or directory (os
/// error 2)" where `run` says "does not exist"; so did `slack` ("cannot scan DIR: …").
#[test]
fn a_missing_target_is_said_not_to_exist_by_every_command() {
    let d = tempdir();
    let gone = d.path().join("gone");
    let g = gone.to_str().unwrap();
    let here = d.path().to_str().unwrap();
    let commands: &[&[&str]] = &[
        &["run", g],
        &["saturate", g],
        &["sustain", g],
        &["files", g],
        &["copy", g],
        &["copy", here, "--source", g],
        &["trace", "run", "office", g],
        &["age", g],
        &["slack", g],
    ];
    for args in commands {
        let o = saving_nothing(
            &mut std::process::Command::new(env!("CARGO_BIN_EXE_iolab")),
            args,
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(g), "{args:?}: {err}");
        assert!(err.contains("does not exist"), "{args:?}: {err}");
        assert!(!err.contains("os error"), "{args:?}: {err}");
    }
}

/// Whether `text` names `--flag` as a whole word (`--keep` is not found in `--keep-files`).
fn names_flag(text: &str, flag: &str) -> bool {
    text.match_indices(flag).any(|(i, _)| {
        !text[i + flag.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '-')
    })
}

/// The other direction of readme_examples' `every_documented_flag_is_in_the_help`: every
/// subcommand `--help` lists is named in docs/GUIDE.md, and every flag it shows is in its
/// command's section of the guide (the one whose heading names `iolab COMMAND`), in the
/// opening part that every command shares (the output flags, the one grammar), or in a
/// paragraph elsewhere that names the command (`iolab matrix --age` is in `iolab age`'s).
/// `run --direct`/`--prefill`, `--max-repeat`/`--target-ci`, `info --no-smart`/
/// `--layout-limit` and `saturate --bs` were in no section.
#[test]
fn every_command_and_flag_the_help_shows_is_in_the_guide() {
    use clap::CommandFactory;
    let guide = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/GUIDE.md"),
    )
    .unwrap();
    let mut sections = guide.split("\n## ");
    let shared = sections.next().unwrap();
    let sections: Vec<&str> = sections.collect();
    let section_of = |top: &str| -> String {
        let heading = format!("`iolab {top}`");
        sections
            .iter()
            .filter(|s| s.lines().next().is_some_and(|h| h.contains(&heading)))
            .copied()
            .collect()
    };
    let mut missing = Vec::new();
    let mut all = Vec::new();
    flags(&iolab::cli::Cli::command(), "iolab", &mut all);
    for (cmd, long, hidden) in &all {
        if *hidden || long == "--help" || long == "--version" {
            continue;
        }
        let top = cmd.split(' ').nth(1).unwrap_or("");
        let named = format!("iolab {top}");
        let in_a_paragraph = guide
            .split("\n\n")
            .any(|p| p.contains(&named) && names_flag(p, long));
        if !names_flag(shared, long) && !names_flag(&section_of(top), long) && !in_a_paragraph {
            missing.push(format!("{cmd} {long}"));
        }
    }
    fn commands(c: &clap::Command, path: &str, out: &mut Vec<String>) {
        for s in c.get_subcommands().filter(|s| !s.is_hide_set()) {
            let p = format!("{path} {}", s.get_name());
            out.push(p.clone());
            commands(s, &p, out);
        }
    }
    let mut cmds = Vec::new();
    commands(&iolab::cli::Cli::command(), "iolab", &mut cmds);
    for c in cmds {
        if c != "iolab help" && !c.starts_with("iolab help ") && !guide.contains(&c) {
            missing.push(c);
        }
    }
    assert!(
        missing.is_empty(),
        "shown by --help, not in its section of docs/GUIDE.md:\n{}",
        missing.join("\n")
    );
}

/// The guide's table of `iolab report`'s CSV columns is the header the CSV has: every column,
/// in order (the first cell of each row names them in backquotes).
#[test]
fn the_guides_csv_columns_are_the_reports() {
    let guide = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/GUIDE.md"),
    )
    .unwrap();
    let table = guide
        .split_once("| `source_file` |")
        .map(|(_, rest)| format!("| `source_file` |{rest}"))
        .expect("the guide's CSV column table");
    let mut documented = Vec::new();
    for row in table.lines().take_while(|l| l.starts_with('|')) {
        let first = row.split('|').nth(1).unwrap_or("");
        documented.extend(first.split('`').skip(1).step_by(2).map(str::to_string));
    }
    assert_eq!(documented, iolab::report::csv::COLUMNS.to_vec());
}

/// A fio user's flags: `iolab run --numjobs 4` was "unexpected argument '--numjobs' found"
/// with no tip, `--random_distribution` got clap's guess "a similar argument exists:
/// '--precondition'". Each now says what iolab calls it, or what it does instead; nothing is
/// run (exit 2).
#[test]
fn fio_names_get_what_iolab_calls_them() {
    let cases: &[(&[&str], &str)] = &[
        (&["run", "--numjobs", "4"], "tip: fio's numjobs is --jobs"),
        (&["run", "--numjobs=4"], "tip: fio's numjobs is --jobs"),
        (&["run", "--runtime=10"], "fio's runtime is --duration"),
        (&["run", "--time_based"], "every run is time-based already"),
        (&["run", "--ramp_time", "2"], "fio's ramp_time is --ramp"),
        (
            &["run", "--rwmixread=50"],
            "fio's rwmixread is --rwmix-read",
        ),
        (
            &["run", "--ioengine=io_uring"],
            "--engine: uring (io_uring)",
        ),
        (&["run", "--offset", "1m"], "iolab has no offset option"),
        (&["run", "--fsync=1"], "a write run ends with one fsync"),
        (
            &["run", "--random_distribution=zipf:1.2"],
            "random offsets are uniform only",
        ),
        (
            &["run", "--verify=crc32c"],
            "--verify is a flag, without a value",
        ),
        (&["saturate", "--iodepth", "8"], "sweeps the depth itself"),
        (&["saturate", "--runtime", "5"], "--step-duration"),
    ];
    for (args, tip) in cases {
        let o = iolab(args);
        assert_usage(&o, tip);
        let err = stderr(&o);
        assert!(
            !err.contains("similar argument exists"),
            "{args:?}: clap's guess kept beside the tip: {err}"
        );
    }
}

//! The command lines in the documentation still work: every `iolab …` line of a ```sh block
//! in README.md and docs/GUIDE.md must be accepted by iolab's command-line parser (the same
//! clap definition the binary uses, so commands that need root, a block device or mpirun are
//! checked without running them), and the README's examples that are safe and quick to run
//! (no device, no mount point, no root) are run for real in a temporary directory, with their
//! durations, sizes and counts made tiny. No skips: nothing here needs root or a tool.

mod common;

use std::path::Path;

use clap::Parser;

/// One command line found in a document.
#[derive(Debug, Clone)]
struct Example {
    doc: &'static str,
    line: usize,
    text: String,
    /// The arguments after `iolab`.
    args: Vec<String>,
}

/// Splits a shell line into words: single and double quotes, backslash escapes, and a `#`
/// comment at the start of a word. Good enough for documentation examples.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '#' if !in_word => break,
            ' ' | '\t' => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    cur.push(q);
                }
            }
            '"' => {
                in_word = true;
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => cur.extend(chars.next()),
                        _ => cur.push(q),
                    }
                }
            }
            '\\' => {
                in_word = true;
                cur.extend(chars.next());
            }
            _ => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    words
}

/// The iolab arguments of a shell command, if it runs iolab: `iolab …`, `sudo iolab …`,
/// `VAR=x mpirun … ./target/release/iolab …`, or `cargo run --release -- …`.
fn iolab_args(words: &[String]) -> Option<Vec<String>> {
    // The command ends at a redirection, a pipe or the next command.
    let end = words
        .iter()
        .position(|w| [">", ">>", "|", "&&", ";", "2>"].contains(&w.as_str()))
        .unwrap_or(words.len());
    let words = &words[..end];
    if words.first().map(String::as_str) == Some("cargo") && words.get(1)? == "run" {
        let dash = words.iter().position(|w| w == "--")?;
        return Some(words[dash + 1..].to_vec());
    }
    let at = words
        .iter()
        .position(|w| w == "iolab" || w.ends_with("/iolab"))?;
    // Only a command that *runs* iolab: what comes before is sudo, VAR=value or a launcher.
    let launcher = words[..at].iter().all(|w| {
        w.contains('=') || w.starts_with('-') || w.chars().all(|c| c.is_ascii_digit()) || {
            let known = ["sudo", "mpirun", "srun", "time", "hosts", "env"];
            known.contains(&w.as_str())
        }
    });
    launcher.then(|| words[at + 1..].to_vec())
}

/// Every iolab command line of the ```sh blocks of a document (continuation lines joined).
fn examples(doc: &'static str) -> Vec<Example> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(doc);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{doc}: {e}"));
    let mut out = Vec::new();
    let mut in_sh = false;
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let trimmed = raw.trim_start();
        if trimmed.starts_with("```") {
            in_sh = !in_sh && trimmed == "```sh";
            pending = None;
            continue;
        }
        if !in_sh {
            continue;
        }
        let (start, mut joined) = pending.take().unwrap_or((i + 1, String::new()));
        // A comment ends the command; a trailing backslash continues it.
        let code = match raw.find(" #") {
            Some(p) if !raw[..p].contains('\'') && !raw[..p].contains('"') => &raw[..p],
            _ if trimmed.starts_with('#') => "",
            _ => raw,
        };
        let code = code.trim_end();
        if let Some(cont) = code.strip_suffix('\\') {
            joined.push_str(cont);
            joined.push(' ');
            pending = Some((start, joined));
            continue;
        }
        joined.push_str(code);
        let words = shell_words(&joined);
        if let Some(args) = iolab_args(&words) {
            out.push(Example {
                doc,
                line: start,
                text: joined.trim().to_string(),
                args,
            });
        }
    }
    out
}

fn all_examples() -> Vec<Example> {
    let mut all = examples("README.md");
    all.extend(examples("docs/GUIDE.md"));
    all
}

#[test]
fn every_documented_command_line_parses() {
    let all = all_examples();
    // The README's two commands and the guide's many: a sanity floor, so that a broken
    // extractor cannot pass by finding nothing.
    assert!(
        all.iter().filter(|e| e.doc == "README.md").count() >= 10,
        "too few README examples found: {all:#?}"
    );
    assert!(
        all.iter().filter(|e| e.doc == "docs/GUIDE.md").count() >= 45,
        "too few guide examples found"
    );
    let mut bad = Vec::new();
    for e in &all {
        let argv = std::iter::once("iolab".to_string()).chain(e.args.iter().cloned());
        match iolab::cli::Cli::try_parse_from(argv) {
            Ok(_) => {}
            Err(err) if err.kind() == clap::error::ErrorKind::DisplayHelp => {}
            Err(err) => bad.push(format!(
                "{}:{}: {}\n  {}",
                e.doc,
                e.line,
                e.text,
                err.render().to_string().lines().next().unwrap_or("")
            )),
        }
    }
    assert!(
        bad.is_empty(),
        "documented commands the parser refuses:\n{}",
        bad.join("\n")
    );
}

/// Sets `flag` to `value`, dropping any value the example gave (`--flag v` or `--flag=v`).
fn set(args: &mut Vec<String>, flag: &str, value: &str) {
    let mut i = 0;
    while i < args.len() {
        if args[i] == flag {
            args.drain(i..(i + 2).min(args.len()));
        } else if args[i].starts_with(&format!("{flag}=")) {
            args.remove(i);
        } else {
            i += 1;
        }
    }
    args.push(flag.into());
    args.push(value.into());
}

/// The example made quick, or None when it is not safe to run here: it names a device, a
/// mount point, a path outside the temporary directory or a result file, or needs root.
fn quick(e: &Example) -> Option<Vec<String>> {
    let mut args = e.args.clone();
    let touches_outside = args.iter().any(|a| {
        a.starts_with('/')
            || a.starts_with('~')
            || a.contains(".json")
            || a.contains(".toml")
            || a.contains(".trace")
            || a.contains(".csv")
            || a == "--allow-destroy"
            || a == "--device"
    });
    if touches_outside || args.iter().any(|a| a == "--help" || a == "-h") {
        return None;
    }
    match args.first()?.as_str() {
        "run" => {
            set(&mut args, "--duration", "100ms");
            set(&mut args, "--ramp", "0");
            set(&mut args, "--size", "8M");
            set(&mut args, "--repeat", "1");
        }
        "saturate" => {
            set(&mut args, "--step-duration", "100ms");
            set(&mut args, "--ramp", "0");
            set(&mut args, "--size", "8M");
            set(&mut args, "--max-depth", "2");
            set(&mut args, "--rw", "randread");
            // The temporary directory may be on a file system without O_DIRECT (tmpfs).
            if !args.iter().any(|a| a == "--allow-buffered") {
                args.push("--allow-buffered".into());
            }
        }
        "files" => {
            set(&mut args, "--files-per-portion", "20");
            set(&mut args, "--portions", "2");
            set(&mut args, "--passes", "1");
            set(&mut args, "--repeat", "1");
            args.retain(|a| !a.starts_with("--big"));
        }
        "copy" if !args.iter().any(|a| a == "--generate") => {
            set(&mut args, "--scale", "0.001");
            set(&mut args, "--repeat", "1");
        }
        "trace" if args.get(1).map(String::as_str) == Some("run") => {
            set(&mut args, "--scale", "0.01");
            set(&mut args, "--repeat", "1");
        }
        "trace" if args.get(1).map(String::as_str) == Some("list") => {}
        "slack" | "info" | "endurance" => {}
        _ => return None,
    }
    Some(args)
}

#[test]
fn readme_examples_run() {
    let dir = common::tempdir();
    // Something for `iolab slack` to scan.
    std::fs::write(dir.path().join("a.txt"), vec![b'x'; 5000]).unwrap();
    let mut ran = Vec::new();
    let mut failed = Vec::new();
    for e in examples("README.md") {
        let Some(args) = quick(&e) else { continue };
        let out = common::bin()
            .args(&args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        let shown = format!("{}:{}: iolab {}", e.doc, e.line, args.join(" "));
        if out.status.success() {
            ran.push(shown);
        } else {
            failed.push(format!(
                "{shown}\n  exit {:?}: {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
    }
    println!("ran:\n{}", ran.join("\n"));
    assert!(
        failed.is_empty(),
        "README examples that fail:\n{}",
        failed.join("\n")
    );
    assert!(ran.len() >= 5, "too few README examples were run: {ran:#?}");
}

/// Every long flag of iolab's command tree that `--help` shows (hidden ones left out).
fn shown_flags(cmd: &clap::Command, out: &mut std::collections::BTreeSet<String>) {
    for a in cmd.get_arguments() {
        if let Some(l) = a.get_long()
            && !a.is_hide_set()
        {
            out.insert(format!("--{l}"));
        }
    }
    out.insert("--help".into());
    out.insert("--version".into());
    for s in cmd.get_subcommands() {
        shown_flags(s, out);
    }
}

/// The guide promises "every flag in this guide is also in `iolab SUBCOMMAND --help`": every
/// `--flag` the README and the guide name is one `--help` shows, but for other tools' flags
/// (fio, mpirun, cargo, Chromium) and the documented hidden `--progress-json`. (`matrix
/// --setup-only` was hidden although the guide tells users about it.)
#[test]
fn every_documented_flag_is_in_the_help() {
    use clap::CommandFactory;
    let mut shown = std::collections::BTreeSet::new();
    shown_flags(&iolab::cli::Cli::command(), &mut shown);
    let others = [
        // fio, mpirun, cargo, Chromium, in examples and comparisons
        "--name",
        "--directory",
        "--ioengine",
        "--runtime",
        "--numjobs",
        "--hostfile",
        "--oversubscribe",
        "--ntasks-per-node",
        "--release",
        "--features",
        "--locked",
        "--path",
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--disable-sync",
        "--enable-logging",
        "--user-data-dir",
        "--v",
        // hidden on purpose, and said to be
        "--progress-json",
    ];
    let mut missing = Vec::new();
    for doc in ["README.md", "docs/GUIDE.md"] {
        let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(doc))
            .unwrap_or_else(|e| panic!("{doc}: {e}"));
        for (i, line) in text.lines().enumerate() {
            // A link to a heading (`#iolab-run--the-quick-disk-test`) stays one word.
            let words = line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'));
            for w in words {
                let Some(name) = w.strip_prefix("--") else {
                    continue;
                };
                if name.is_empty() || !name.starts_with(|c: char| c.is_ascii_lowercase()) {
                    continue;
                }
                let flag = w.trim_end_matches('-');
                if !shown.contains(flag) && !others.contains(&flag) {
                    missing.push(format!("{doc}:{}: {flag}", i + 1));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "flags the docs name that no --help shows:\n{}",
        missing.join("\n")
    );
}

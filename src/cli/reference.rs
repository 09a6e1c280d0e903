//! Matrix workload references (`files:sizes=1,4K`, `copy:dataset=media-mix:scale=0.01`,
//! `run:...`): their parameters become a command line that each family's own clap
//! definitions parse and check, so a reference accepts exactly what the command does.

use std::collections::BTreeMap;

use crate::cli::copy::CopyArgs;
use crate::cli::trace::TraceRunArgs;
use crate::error::UsageError;
use crate::workload::copy::CopySettings;

/// Parse reference parameters as the arguments `A` of one subcommand, with that
/// subcommand's own clap definitions, so a reference accepts exactly what the command does:
/// `duration=2s` -> `--duration 2s`; a flag that takes no value (found in `A`'s definitions,
/// never listed by hand) is `KEY=true`, and `KEY=false` is the same as leaving it out.
/// `positional` words come first (`trace run`'s workload). `what` names the reference in
/// errors (`workload files: unexpected argument '--nope' found`).
pub fn parse_args<A: clap::Args + clap::FromArgMatches>(
    what: &str,
    positional: &[&str],
    params: &BTreeMap<String, String>,
) -> Result<A, UsageError> {
    let cmd = A::augment_args(clap::Command::new("iolab"));
    let error = |e: clap::Error| {
        use clap::error::{ContextKind, ContextValue, ErrorKind};
        // A key the command has no flag for is said as a key (`prest`, not clap's
        // "unexpected argument '--prest'"), with clap's tip of the key meant, which its
        // first line alone lost.
        let arg = |kind| match e.get(kind) {
            Some(ContextValue::String(s)) => Some(s.trim_start_matches('-').to_string()),
            _ => None,
        };
        if e.kind() == ErrorKind::UnknownArgument
            && let Some(key) = arg(ContextKind::InvalidArg)
        {
            let tip = arg(ContextKind::SuggestedArg)
                .map(|k| format!("a similar key exists: '{k}'; "))
                .unwrap_or_default();
            return UsageError::new(format!(
                "workload {what}: unknown key '{key}' ({tip}the keys are the flags of `iolab {what}` without their dashes)"
            ));
        }
        let msg = e.to_string();
        let first = msg
            .lines()
            .next()
            .unwrap_or("")
            .trim_start_matches("error: ");
        UsageError::new(format!(
            "workload {what}: {}",
            crate::cli::number_words(first)
        ))
    };
    let takes_no_value = |key: &str| {
        cmd.get_arguments()
            .any(|a| a.get_long() == Some(key) && !a.get_action().takes_values())
    };
    let mut argv = vec!["iolab".to_string()];
    argv.extend(positional.iter().map(|s| s.to_string()));
    for (k, v) in params {
        if takes_no_value(k) {
            match v.as_str() {
                "true" => argv.push(format!("--{k}")),
                "false" => {}
                _ => {
                    return Err(UsageError::new(format!(
                        "workload {what}: {k} is a flag: give {k}=true or {k}=false, not {k}={v}"
                    )));
                }
            }
        } else {
            argv.push(format!("--{k}"));
            argv.push(v.clone());
        }
    }
    let matches = cmd.try_get_matches_from(&argv).map_err(error)?;
    A::from_arg_matches(&matches).map_err(error)
}

/// The label of a reference: `FAMILY:KEY=VALUE...` in key order.
pub fn label(family: &str, params: &BTreeMap<String, String>) -> String {
    let mut label = family.to_string();
    for (k, v) in params {
        label.push_str(&format!(":{k}={v}"));
    }
    label
}

/// A reference may not name what the matrix sets for every workload (`DirFamily::retarget`):
/// the target, the result file, keeping what the workload made (each file system is
/// removed after its workloads; `run:keep=true` was dropped without a word), and the
/// history (the matrix records its own result).
pub fn matrix_sets_target(
    family: &str,
    params: &BTreeMap<String, String>,
) -> Result<(), UsageError> {
    for k in [
        "target",
        "output",
        "no-save",
        "keep",
        "keep-files",
        "history",
        "no-history",
    ] {
        if params.contains_key(k) {
            return Err(UsageError::new(format!(
                "workload {family}: {k} is set by the matrix"
            )));
        }
    }
    Ok(())
}

/// Parse a `copy:KEY=VALUE:...` matrix reference (any `iolab copy` flag, e.g.
/// `copy:dataset=media-mix:scale=0.01:phases=write,delete`) into `iolab copy` arguments,
/// checked as settings, and its label.
pub fn copy(params: &BTreeMap<String, String>) -> Result<(CopyArgs, String), UsageError> {
    matrix_sets_target("copy", params)?;
    let args: CopyArgs = parse_args("copy", &[], params)?;
    let settings = CopySettings::from_args(&args)?;
    let mut label = format!("copy:{}", settings.dataset);
    for (k, v) in params.iter().filter(|(k, _)| k.as_str() != "dataset") {
        label.push_str(&format!(":{k}={v}"));
    }
    Ok((args, label))
}

/// Parse a `trace:name=NAME|FILE[:scale=F][:repeat=N]` matrix reference into `iolab trace
/// run` arguments, checked, and its label.
pub fn trace(params: &BTreeMap<String, String>) -> Result<(TraceRunArgs, String), UsageError> {
    let Some(name) = params.get("name") else {
        return Err(UsageError::new(format!(
            "workload trace: give name=NAME|FILE (built-ins: {})",
            crate::workload::trace::builtins::names().join(", ")
        )));
    };
    matrix_sets_target("trace", params)?;
    let mut rest = params.clone();
    rest.remove("name");
    let args: TraceRunArgs = parse_args("trace run", &[name], &rest)?;
    // Validate now, before the matrix formats anything.
    crate::workload::trace::load(&args.workload)?;
    crate::workload::trace::measure::check_scale(args.scale)?;
    Ok((args, label("trace", params)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::run::RunArgs;
    use crate::commands::family::DirFamily;

    /// A `run:` reference as the matrix parses it (the trait's default).
    fn run(params: &BTreeMap<String, String>) -> Result<(RunArgs, String), UsageError> {
        crate::commands::run::RunFamily::reference(params)
    }

    /// A `files:` reference as the matrix parses it (the default, with `files`' checks).
    fn files(
        params: &BTreeMap<String, String>,
    ) -> Result<(crate::cli::files::FilesArgs, String), UsageError> {
        crate::commands::files::FilesFamily::reference(params)
    }

    /// The parameters of a workload reference, as the matrix splits them.
    fn params(reference: &str) -> BTreeMap<String, String> {
        crate::workload::WorkloadRef::parse(reference)
            .unwrap()
            .params
    }

    #[test]
    fn matrix_reference_parses() {
        let (_, label) = files(&params("files:sizes=1,4K:files-per-portion=1000")).unwrap();
        assert!(label.starts_with("files:"));
        assert!(files(&params("files:target=/tmp")).is_err());
        assert!(files(&params("files:portions=x")).is_err());
    }

    /// Flags that take no value come from each command's own definitions: every boolean
    /// flag of `run`, `files`, `copy` and `trace run` works as `KEY=true`, `KEY=false` leaves
    /// it off, and anything else is an error that says how to give it.
    #[test]
    fn flags_without_a_value_are_found_in_the_commands_definitions() {
        let (a, _) = run(&params("run:mix=true:precondition=true:verify=false")).unwrap();
        assert!(a.mix && a.precondition && !a.verify);
        // What the matrix sets for every workload is refused, not dropped.
        for r in ["run:keep=true", "files:keep=true", "copy:no-save=true"] {
            let what = r.split(':').next().unwrap();
            let p = params(r);
            let e = match what {
                "run" => run(&p).map(drop),
                "files" => files(&p).map(drop),
                _ => copy(&p).map(drop),
            }
            .unwrap_err();
            assert!(e.0.ends_with("is set by the matrix"), "{r}: {}", e.0);
        }
        let (a, _) = run(&params("run:direct=false")).unwrap();
        assert!(!a.direct, "a flag that takes a value keeps it");
        let (a, _) = files(&params(
            "files:shared-dir=true:jobs=2:nice=true:drop-caches=false",
        ))
        .unwrap();
        assert!(a.shared_dir && a.nice && !a.drop_caches);
        let (a, _) = copy(&params("copy:preserve=true:verify=true:quiet=true")).unwrap();
        assert!(a.preserve && a.verify && a.out.quiet);
        let (a, label) = trace(&params("trace:name=office:json=true:scale=0.5")).unwrap();
        assert!(a.out.json && a.workload == "office" && a.scale == 0.5);
        assert_eq!(label, "trace:json=true:name=office:scale=0.5");
        let e = files(&params("files:nice=yes")).unwrap_err();
        assert_eq!(
            e.0,
            "workload files: nice is a flag: give nice=true or nice=false, not nice=yes"
        );
        let e = run(&params("run:nope=1")).unwrap_err();
        assert_eq!(
            e.0,
            "workload run: unknown key 'nope' (the keys are the flags of `iolab run` without their dashes)"
        );
        // The key meant, which clap's first line alone ("unexpected argument '--prest'")
        // did not give.
        let e = run(&params("run:prest=real")).unwrap_err();
        assert!(
            e.0.starts_with("workload run: unknown key 'prest' (a similar key exists: 'preset'; "),
            "{}",
            e.0
        );
        let e = trace(&params("trace:name=office:nope=1")).unwrap_err();
        assert!(
            e.0.starts_with("workload trace run: unknown key 'nope'"),
            "{}",
            e.0
        );
        let e = copy(&params("copy:scale=abc")).unwrap_err();
        assert!(
            e.0.ends_with("'--scale <F>': not a number (e.g. 0.5, 2 or 1e-3)"),
            "{}",
            e.0
        );
    }

    #[test]
    fn matrix_reference_parses_and_rejects() {
        let (_, label) = copy(&params("copy:dataset=media-mix:scale=0.01")).unwrap();
        assert_eq!(label, "copy:media-mix:scale=0.01");
        let e = copy(&params("copy:dataset=nope")).err().unwrap();
        assert!(e.0.contains("unknown data set 'nope'") && e.0.contains("media-mix"));
        assert!(copy(&params("copy:scale=-1")).is_err());
        // `run:` gets the checks of `iolab run` that need no target.
        let e = run(&params("run:duration=0s")).err().unwrap();
        assert!(e.0.contains("--duration 0"), "{}", e.0);
        assert!(run(&params("run:iodepth=0")).is_err());
        let e = files(&params("files:portions=0")).err().unwrap();
        assert!(e.0.contains("--portions 0"), "{}", e.0);
    }
}

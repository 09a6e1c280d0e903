//! The one place external programs are run (mkfs, mount, losetup, smartctl, ...): stdout is
//! returned, and a failure becomes a `CommandError` with the program's stderr framed.

use std::ffi::OsStr;
use std::process::{Command, Stdio};

use crate::error::CommandError;

/// Is `program` on PATH (or an existing absolute path)?
pub fn have(program: &str) -> bool {
    if program.contains('/') {
        return std::path::Path::new(program).exists();
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs: Vec<std::path::PathBuf> = std::env::split_paths(&path).collect();
    // Root's tools (mkfs.*, losetup) live in sbin, which a user's PATH may lack.
    for extra in ["/sbin", "/usr/sbin", "/usr/local/sbin"] {
        dirs.push(extra.into());
    }
    dirs.iter().any(|d| d.join(program).is_file())
}

/// Run `program args...`; Ok(stdout) on exit status 0.
pub fn run<I, S>(program: &str, args: I) -> Result<String, CommandError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    run_full(program, args).map(|done| done.stdout)
}

/// What a program that exited 0 printed, and its command line as shown in errors.
#[derive(Debug, Clone)]
pub struct Done {
    pub command: String,
    pub stdout: String,
    pub stderr: String,
}

/// Run `program args...`; on exit status 0 its command line, stdout and stderr (a FUSE
/// helper can exit 0 and say on stderr why it mounted nothing).
pub fn run_full<I, S>(program: &str, args: I) -> Result<Done, CommandError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let args: Vec<std::ffi::OsString> = args
        .into_iter()
        .map(|a| a.as_ref().to_os_string())
        .collect();
    let shown = std::iter::once(program.to_string())
        .chain(args.iter().map(|a| a.to_string_lossy().into_owned()))
        .collect::<Vec<_>>()
        .join(" ");
    let mut cmd = Command::new(program);
    cmd.args(&args).stdin(Stdio::null());
    // sbin for root tools even when the caller's PATH lacks it.
    let path = std::env::var("PATH").unwrap_or_default();
    cmd.env("PATH", format!("{path}:/usr/local/sbin:/usr/sbin:/sbin"));
    let out = cmd.output().map_err(|e| CommandError {
        command: shown.clone(),
        status: "could not start".into(),
        stderr: e.to_string(),
    })?;
    if out.status.success() {
        Ok(Done {
            command: shown,
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    } else {
        let mut stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        if stderr.trim().is_empty() {
            stderr = String::from_utf8_lossy(&out.stdout).into_owned();
        }
        Err(CommandError {
            command: shown,
            status: out
                .status
                .code()
                .map(|c| format!("exit code {c}"))
                .unwrap_or_else(|| "killed by a signal".into()),
            stderr,
        })
    }
}

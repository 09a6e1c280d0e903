//! `iolab slack`.

use crate::cli::slack::SlackArgs;

pub fn execute(_args: &SlackArgs, _argv: Vec<String>) -> anyhow::Result<i32> {
    super::not_yet("slack")
}

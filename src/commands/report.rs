//! `iolab report`.

use crate::cli::report::ReportArgs;

pub fn execute(_args: &ReportArgs, _argv: Vec<String>) -> anyhow::Result<i32> {
    super::not_yet("report")
}

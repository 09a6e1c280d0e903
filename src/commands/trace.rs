//! `iolab trace`.

use crate::cli::trace::TraceArgs;

pub fn execute(_args: &TraceArgs, _argv: Vec<String>) -> anyhow::Result<i32> {
    super::not_yet("trace")
}

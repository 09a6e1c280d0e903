//! `iolab compare`.

use crate::cli::compare::CompareArgs;

pub fn execute(_args: &CompareArgs, _argv: Vec<String>) -> anyhow::Result<i32> {
    super::not_yet("compare")
}

//! `iolab copy`.

use crate::cli::copy::CopyArgs;

pub fn execute(_args: &CopyArgs, _argv: Vec<String>) -> anyhow::Result<i32> {
    super::not_yet("copy")
}

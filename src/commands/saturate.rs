//! `iolab saturate`.

use crate::cli::saturate::SaturateArgs;

pub fn execute(_args: &SaturateArgs, _argv: Vec<String>) -> anyhow::Result<i32> {
    super::not_yet("saturate")
}

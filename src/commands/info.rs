//! `iolab info` and `iolab endurance`.

use crate::cli::info::{EnduranceArgs, InfoArgs};

pub fn execute(_args: &InfoArgs, _argv: Vec<String>) -> anyhow::Result<i32> {
    super::not_yet("info")
}

pub fn execute_endurance(_args: &EnduranceArgs, _argv: Vec<String>) -> anyhow::Result<i32> {
    super::not_yet("endurance")
}

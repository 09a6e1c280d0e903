//! `iolab matrix`.

use crate::cli::matrix::MatrixArgs;

pub fn execute(_args: &MatrixArgs, _argv: Vec<String>) -> anyhow::Result<i32> {
    super::not_yet("matrix")
}

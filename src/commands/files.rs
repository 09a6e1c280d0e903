//! `iolab files`.

use crate::cli::files::FilesArgs;

pub fn execute(_args: &FilesArgs, _argv: Vec<String>) -> anyhow::Result<i32> {
    super::not_yet("files")
}

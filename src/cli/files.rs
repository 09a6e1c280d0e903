//! `iolab files` arguments.

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct FilesArgs {
    #[command(flatten)]
    pub out: super::OutputArgs,
}

//! `iolab copy` arguments.

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct CopyArgs {
    #[command(flatten)]
    pub out: super::OutputArgs,
}

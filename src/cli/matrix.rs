//! `iolab matrix` arguments.

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct MatrixArgs {
    #[command(flatten)]
    pub out: super::OutputArgs,
}

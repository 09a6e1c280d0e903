//! `iolab saturate` arguments.

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct SaturateArgs {
    #[command(flatten)]
    pub out: super::OutputArgs,
}

//! `iolab trace` arguments.

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct TraceArgs {
    #[command(flatten)]
    pub out: super::OutputArgs,
}

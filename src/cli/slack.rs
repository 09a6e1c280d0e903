//! `iolab slack` arguments.

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct SlackArgs {
    /// Emit JSON.
    #[arg(long)]
    pub json: bool,
}

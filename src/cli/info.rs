//! `iolab info` and `iolab endurance` arguments.

use std::path::PathBuf;

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct InfoArgs {
    /// A path on the file system to describe, or a block device.
    #[arg(default_value = ".")]
    pub path: PathBuf,

    /// Print JSON instead of the table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Args)]
pub struct EnduranceArgs {
    /// Print JSON instead of the table.
    #[arg(long)]
    pub json: bool,
}

//! `iolab age`: bring a file system to a described state of use (Geriatrix-style aging).

use std::path::PathBuf;

use clap::Args;

use super::OutputArgs;

#[derive(Debug, Clone, Args)]
#[command(after_help = "Examples:\n  \
    iolab age /mnt/test                              desktop profile to 80 % full, 5x churn\n  \
    iolab age /mnt/test --profile source-tree --fill 60% --churn 2\n  \
    iolab age /mnt/test --profile my-profile.toml --seed 7\n  \
    iolab age --list-profiles\n\n\
    The aged tree stays in TARGET/iolab-aged-SEED (the point of aging); a run that is\n\
    interrupted removes what it wrote. `iolab info TARGET` shows the layout score later.")]
pub struct AgeArgs {
    /// The mount point of a file system to age (a dedicated one: aging fills it).
    #[arg(required_unless_present = "list_profiles")]
    pub target: Option<PathBuf>,

    /// A built-in profile (desktop, media, source-tree) or a profile file (TOML).
    #[arg(long, default_value = "desktop", value_name = "NAME|FILE")]
    pub profile: String,

    /// Target fullness of the file system: a percentage above 0 % and at most 100 % (80%)
    /// or a fraction above 0 and at most 1 (0.8); a number without % is a fraction
    /// (default: the profile's).
    #[arg(long, value_name = "FULLNESS")]
    pub fill: Option<String>,

    /// Bytes written in total, as a multiple of the file system's size (default: the
    /// profile's), e.g. 5 or 0.5.
    #[arg(long, value_name = "TIMES")]
    pub churn: Option<f64>,

    /// The random-number seed: the same seed gives the same files, sizes and order.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Writer threads carrying out the plan (1..=64; default: one per CPU, at most 8).
    /// Each owns a share of the directories; the plan — which files, sizes, and their
    /// order within a directory — depends only on --seed, whatever the number: the same
    /// --seed gives the same file set, while the layout may differ a little with the timing.
    #[arg(long, value_name = "N")]
    pub jobs: Option<u32>,

    /// Age a directory on a file system that is not dedicated to it (e.g. not a mount
    /// point of its own). Fullness still counts the whole file system.
    #[arg(long)]
    pub allow_shared: bool,

    /// List the built-in profiles and exit.
    #[arg(long)]
    pub list_profiles: bool,

    /// No progress on stderr.
    #[arg(long, short)]
    pub quiet: bool,

    #[command(flatten)]
    pub out: OutputArgs,
}

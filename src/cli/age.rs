//! `iolab age`: bring a file system to a described state of use (Geriatrix-style aging):
//! its arguments and their checks (`AgeConfig::from_args`).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use clap::Args;

use super::OutputArgs;
use crate::workload::age::{
    AgeConfig, MetadataCost, Profile, check_fit, check_room, fs_available, fs_usage, parse_share,
};

#[derive(Debug, Clone, Args)]
#[command(after_help = "Examples:\n  \
    iolab age /mnt/test                              desktop profile to 80 % full, 5x churn\n  \
    iolab age /mnt/test --profile source-tree --fill 60% --churn 2\n  \
    iolab age /mnt/test --profile my-profile.toml --seed 7\n  \
    iolab age --list-profiles\n\n\
    The aged tree stays in TARGET/iolab-aged-SEED (the point of aging); a run that is\n\
    interrupted removes what it wrote. `iolab info TARGET --layout` shows the layout score later.")]
pub struct AgeArgs {
    /// The mount point of a file system to age (a dedicated one: aging fills it). Also taken
    /// as -t/--target, as the other commands take it.
    #[arg(
        value_name = "TARGET",
        required_unless_present_any = ["list_profiles", "target_flag"],
        conflicts_with = "target_flag"
    )]
    pub target_pos: Option<PathBuf>,

    /// The target, as an option (the same as TARGET).
    #[arg(short = 't', long = "target", value_name = "TARGET")]
    pub target_flag: Option<PathBuf>,

    /// A built-in profile (desktop, media, source-tree) or a profile file (TOML).
    #[arg(long, default_value = "desktop", value_name = "NAME|FILE")]
    pub profile: String,

    /// Target fullness of the file system: a percentage above 0 % and at most 100 % (80%)
    /// or a fraction above 0 and at most 1 (0.8); a number without % is a fraction
    /// (default: the profile's).
    #[arg(long, allow_hyphen_values = true, value_name = "FULLNESS")]
    pub fill: Option<String>,

    /// Bytes written in total, as a multiple of the file system's size (default: the
    /// profile's), e.g. 5 or 0.5.
    #[arg(long, allow_negative_numbers = true, value_name = "TIMES")]
    pub churn: Option<f64>,

    /// The random-number seed: the same seed gives the same files, sizes and order. Its
    /// default is 1, not the other commands' 65963: the seed names the aged tree that stays
    /// (TARGET/iolab-aged-1) and decides its files, so ages made before keep theirs.
    #[arg(long, allow_negative_numbers = true, default_value_t = 1)]
    pub seed: u64,

    /// Writer threads carrying out the plan (1..=64; default: one per CPU, at most 8).
    /// Each owns a share of the directories; the plan — which files, sizes, and their
    /// order within a directory — depends only on --seed, whatever the number: the same
    /// --seed gives the same file set, while the layout may differ a little with the timing.
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub jobs: Option<u32>,

    /// Age a directory on a file system that is not dedicated to it (e.g. not a mount
    /// point of its own). Fullness still counts the whole file system.
    #[arg(long)]
    pub allow_shared: bool,

    /// List the built-in profiles and exit.
    #[arg(long)]
    pub list_profiles: bool,

    #[command(flatten)]
    pub out: OutputArgs,
}

/// Is `path` the root of a file system of its own (a mount point other than `/`)?
fn dedicated(path: &Path) -> std::io::Result<bool> {
    let canon = std::fs::canonicalize(path)?;
    let Some(parent) = canon.parent() else {
        return Ok(false); // `/` holds the system
    };
    Ok(std::fs::metadata(&canon)?.dev() != std::fs::metadata(parent)?.dev())
}

impl AgeConfig {
    /// The checked configuration: every refusal is a usage error, before anything is created.
    pub fn from_args(args: &AgeArgs) -> anyhow::Result<AgeConfig> {
        let target = args
            .target_pos
            .clone()
            .or_else(|| args.target_flag.clone())
            .ok_or_else(|| crate::usage!("give the TARGET to age"))?;
        let md = std::fs::metadata(&target)
            .map_err(|e| crate::usage!("{}: {}", target.display(), crate::fs::facts::io_why(&e)))?;
        if !md.is_dir() {
            return Err(crate::usage!("{} is not a directory", target.display()));
        }
        crate::cli::checks::refuse_deleted_dir(&target)?;
        // Before any question of room: a read-only or unwritable target was told to use a
        // larger file system (the profile's fit was checked first).
        super::checks::check_dir_writable(&target, "aging creates, grows and deletes files there")?;
        // Before the fullness checks: an aging already running there fills the file system,
        // and the second one was told the profile's files "do not fit".
        crate::runner::lock::refuse_if_in_use(&target)?;
        let profile = Profile::load(&args.profile)?;
        let fill = match &args.fill {
            Some(s) => parse_share(s).map_err(|e| crate::usage!("--fill {e}"))?,
            None => profile.fill,
        };
        if let Some(j) = args.jobs
            && !(1..=64).contains(&j)
        {
            return Err(crate::usage!("--jobs {j}: give 1 to 64 writers"));
        }
        let churn = match args.churn {
            Some(c) if c.is_finite() && c > 0.0 => c,
            Some(c) => {
                return Err(crate::usage!(
                    "--churn {c}: must be a finite number above 0"
                ));
            }
            None => profile.churn,
        };
        if !args.allow_shared
            && !dedicated(&target).map_err(|e| crate::usage!("{}: {e}", target.display()))?
        {
            let on = crate::sysinfo::mounts::mount_of(&target)
                .map(|m| format!(" (it is on {}, {})", m.mount_point.display(), m.fs_type))
                .unwrap_or_default();
            return Err(crate::usage!(
                "{} is not the mount point of a file system of its own{on}: aging fills the file system to {:.0} %; give a dedicated one, or --allow-shared",
                target.display(),
                fill * 100.0
            ));
        }
        // Before the fullness checks: the same command run again met its own aged tree as
        // used space and was told that the profile's files "do not fit".
        let dir = target.join(format!("iolab-aged-{}", args.seed));
        if dir.exists() {
            return Err(crate::usage!(
                "{} exists already (an earlier aging with seed {}); remove it or pick another --seed",
                dir.display(),
                args.seed
            ));
        }
        let (total, used) =
            fs_usage(&target).map_err(|e| crate::usage!("{}: {e}", target.display()))?;
        check_fit(&profile, fill, total, used)?;
        let avail =
            fs_available(&target).map_err(|e| crate::usage!("{}: {e}", target.display()))?;
        let block = crate::fs::layout::block_size(&target)
            .unwrap_or(4096)
            .max(1);
        let fs_type = crate::sysinfo::mounts::mount_of(&target)
            .map(|m| m.fs_type)
            .unwrap_or_default();
        check_room(
            fill,
            total,
            used,
            avail,
            &profile,
            MetadataCost::of(&fs_type, block),
        )?;
        Ok(AgeConfig {
            target,
            dir,
            profile,
            fill,
            churn,
            seed: args.seed,
            jobs: args.jobs.unwrap_or_else(crate::workload::age::default_jobs),
            fs_size: total,
            out: args.out.delivery(),
        })
    }
}

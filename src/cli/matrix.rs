//! `iolab matrix` arguments.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::units::size_arg;

/// Built-in experiments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Study {
    /// Belov's cluster-size tester, Table 1: seconds per portion of files of 1 B, cluster+1 B,
    /// 512 B...64 KiB and one big file, for every allocation unit of each file system that
    /// has several; next to it the space the files take (df) against iolab slack's rules.
    Cluster,
    /// The twelve-file-system copy test: every available file system with default options,
    /// the data-set copy workload when it exists (ranked by writing the set from RAM and
    /// reading it back; the in-place copy and the delete shown apart), else small files and
    /// `iolab run`.
    LinuxFs,
}

// The shared --repeat says "runs per test"; here a run is a configuration measured on a
// freshly made file system (a doc comment on the flattened field reaches no help).
#[derive(Debug, Clone, Args)]
#[command(mut_arg("repeat", |a| a.help(
    "Runs per configuration, each on a freshly made file system (mkfs again): a number, or `auto` to add runs until the 95 % confidence interval of the mean is within --target-ci [default: 3]. A workload's own repeat= runs that many times within each"
)))]
pub struct MatrixArgs {
    /// File systems, comma-separated: ext2, ext3, ext4, xfs, btrfs, f2fs, jfs, nilfs2,
    /// reiserfs, vfat (fat32), exfat, ntfs, hfsplus, tmpfs; `all` = every known type.
    /// Types this machine cannot make or mount become "skipped" rows.
    #[arg(long, value_name = "LIST")]
    pub fs: Option<String>,

    /// Allocation units (cluster/block sizes), comma-separated: 512,1K,...,64K, or `default`
    /// for the tool's choice. A file system that cannot take a value is an error.
    #[arg(long, allow_hyphen_values = true, value_name = "LIST")]
    pub cluster: Option<String>,

    /// Mount-option sets, separated by `;` or given several times; each set is comma-joined
    /// options for `mount -o` (e.g. `--mount-opts relatime --mount-opts noatime`). `default`
    /// or an empty set = no options. `FS:SET` is a set for that --fs only, and a file
    /// system with sets of its own gets only those (`--fs ext4,btrfs --mount-opts
    /// 'noatime;btrfs:compress=zstd'`: rows `ext4 noatime` and `btrfs compress=zstd`); only
    /// a --fs name before the first colon is a scope (`compress=zstd:3` is one option).
    #[arg(long, value_name = "OPTS")]
    pub mount_opts: Vec<String>,

    /// mkfs option sets, separated by `;` or given several times; each set is arguments
    /// added to the file system's mkfs command after iolab's own (e.g. `--mkfs-opts '-O
    /// ^has_journal'` for ext4 without a journal, `--mkfs-opts '-m reflink=0'` for xfs).
    /// `default` or an empty set = none. A set applies to every --fs (one a mkfs rejects
    /// fails that configuration's row with mkfs's message) unless scoped as for
    /// --mount-opts: `--mkfs-opts 'ext4:-O ^has_journal'` is for the ext4 rows only.
    #[arg(long, allow_hyphen_values = true, value_name = "OPTS")]
    pub mkfs_opts: Vec<String>,

    /// Workload reference `FAMILY[:KEY=VALUE...]`, repeatable: `run:preset=real:duration=2s`,
    /// `files:sizes=1,4K,cluster+1`, `copy:dataset=media-mix`, `trace:name=office`.
    /// Default: `run:preset=real:duration=5s:repeat=1`.
    #[arg(long, value_name = "REF")]
    pub workload: Vec<String>,

    /// A built-in study instead of --workload.
    #[arg(long, value_enum)]
    pub study: Option<Study>,

    /// With --study cluster: Belov's full counts (10,000 files x 20 portions x 16 passes).
    #[arg(long)]
    pub full: bool,

    #[command(flatten)]
    pub repeat: super::run::RepeatArgs,

    /// Where image files go (iolab makes its own subdirectory there). Default: a temporary
    /// directory on the file system of the current directory.
    #[arg(long, value_name = "DIR", conflicts_with = "device")]
    pub image_dir: Option<PathBuf>,

    /// Size of each image file [default: 4GiB, clamped to the free space].
    #[arg(long, allow_hyphen_values = true, value_parser = size_arg, value_name = "SIZE", conflicts_with = "device")]
    pub image_size: Option<u64>,

    /// Format this block device or partition for every configuration instead of images
    /// (needs --allow-destroy with the same name; refused if it is mounted or in use).
    #[arg(long, value_name = "DEVICE")]
    pub device: Option<PathBuf>,

    /// Confirms that everything on --device may be destroyed.
    #[arg(long, value_name = "DEVICE")]
    pub allow_destroy: Option<PathBuf>,

    /// Measure every configuration fresh and again after aging the same file system with
    /// this profile (`iolab age`: desktop, media, source-tree or a .toml file); the table
    /// shows both and the slowdown.
    #[arg(long, value_name = "PROFILE")]
    pub age: Option<String>,

    /// With --age: bytes written while aging, as a multiple of the file system's size
    /// [default: the profile's].
    #[arg(
        long,
        allow_negative_numbers = true,
        value_name = "TIMES",
        requires = "age"
    )]
    pub age_churn: Option<f64>,

    /// With --age: the fullness to age to, as `iolab age --fill` takes it: a percentage
    /// above 0 % and at most 100 % (80%) or a fraction above 0 and at most 1 (0.8)
    /// [default: the profile's].
    #[arg(
        long,
        allow_hyphen_values = true,
        value_name = "FULLNESS",
        requires = "age"
    )]
    pub age_fill: Option<String>,

    /// Keep the image files (debugging) instead of removing them; their paths are printed.
    /// (Also --keep-image, its former name.)
    #[arg(long = "keep", alias = "keep-image")]
    pub keep_image: bool,

    /// Only make, mount and tear down each configuration, timed (mkfs, mount, umount,
    /// detach), with no workload: checks the file systems, units and mount options.
    #[arg(long)]
    pub setup_only: bool,

    #[command(flatten)]
    pub out: super::OutputArgs,
}

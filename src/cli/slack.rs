//! `iolab slack` arguments.

use std::path::PathBuf;

use clap::Args;

/// Cluster slack: how much space each allocation unit (512 B ... 2 MiB) wastes on a tree
/// of files or a list of sizes, what writing them would cost, and the best unit.
#[derive(Debug, Clone, Args)]
pub struct SlackArgs {
    /// Directory to scan (symlinks are not followed, hard links count once).
    #[arg(value_name = "DIR", required_unless_present = "sizes_from")]
    pub dir: Option<PathBuf>,

    /// Read file sizes from a CSV file instead of scanning: one size per line, or a header
    /// with a `size` column (and optionally `name`/`path`).
    #[arg(long, value_name = "FILE.csv", conflicts_with = "dir")]
    pub sizes_from: Option<PathBuf>,

    /// Stay on the directory's file system: do not enter mount points below it (like du -x).
    #[arg(short = 'x', long)]
    pub one_file_system: bool,

    /// Allocation rules: plain, ext4, ext4-inline, xfs, btrfs, ntfs, ntfs-3g, fat32, exfat.
    #[arg(long = "fs", value_name = "TYPE", default_value = "plain")]
    pub fs: String,

    /// Inode size for ext4-inline (default 256) and xfs (default 512), bytes.
    #[arg(long, allow_hyphen_values = true, value_name = "BYTES", value_parser = crate::units::size_arg)]
    pub inode_size: Option<u64>,

    /// btrfs max_inline mount option (default 2048), bytes.
    #[arg(long, allow_hyphen_values = true, value_name = "BYTES", value_parser = crate::units::size_arg)]
    pub max_inline: Option<u64>,

    /// NTFS MFT record size: 1024 (default) or 4096, bytes.
    #[arg(long, allow_hyphen_values = true, value_name = "BYTES", value_parser = crate::units::size_arg)]
    pub mft_record: Option<u64>,

    /// Fit the cost model from an `iolab files` or `iolab matrix --study cluster` result
    /// measured on your device (create phase, several file sizes per unit).
    #[arg(long, value_name = "RESULT.json")]
    pub calibrate: Option<PathBuf>,

    #[command(flatten)]
    pub out: super::OutputArgs,
}

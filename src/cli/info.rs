//! `iolab info` and `iolab endurance` arguments.

use std::path::PathBuf;

use clap::Args;

/// `iolab info [PATH|DEVICE]`: what is under a path, down to the disk, and its health.
#[derive(Debug, Clone, Args)]
pub struct InfoArgs {
    /// A path on a file system (file or directory), a device node (/dev/sda1) or a kernel
    /// device name (sda, nvme0n1, loop3). Also taken as -t/--target, as the other commands
    /// take it.
    #[arg(default_value = ".", value_name = "PATH|DEVICE")]
    pub path: PathBuf,

    /// The path or device, as an option (the same as PATH|DEVICE).
    #[arg(
        short = 't',
        long = "target",
        value_name = "PATH|DEVICE",
        conflicts_with = "path"
    )]
    pub target_flag: Option<PathBuf>,

    /// Print JSON instead of the table.
    #[arg(long)]
    pub json: bool,

    /// Do not run smartctl (the table says SMART was not read; the JSON's `smart` is empty).
    #[arg(long)]
    pub no_smart: bool,

    /// How aged the layout is (read-only): the layout score and pieces per file of the
    /// files under PATH (FIEMAP), and the free space's fragmentation (e2freefrag, xfs_spaceman).
    #[arg(long)]
    pub layout: bool,

    /// With --layout: read at most this many files (the first in name order).
    #[arg(long, default_value_t = 200_000, value_name = "N", requires = "layout", value_parser = clap::value_parser!(u64).range(1..))]
    pub layout_limit: u64,
}

/// `--used`: a percentage, `40` or `40%`. A bare number between 0 and 1 is refused: `iolab
/// age --fill 0.4` and `matrix --age-fill 0.4` take it as 40 %, and `--used 0.4` silently
/// meant 0.4 % ("after 0 % used" in the output). `0.4%` says that.
fn used_percent_arg(s: &str) -> Result<f64, String> {
    let v = crate::units::percent_f64_arg(s)?;
    if !s.trim().ends_with('%') && v > 0.0 && v < 1.0 {
        let pct = format!("{:.4}", v * 100.0);
        let pct = pct.trim_end_matches('0').trim_end_matches('.');
        return Err(format!(
            "'{s}' is read as a percentage here (0-100, as SMART's \"Percentage Used\"): write {pct} for {pct} %, or {s}% if {s} % is meant"
        ));
    }
    Ok(v)
}

impl InfoArgs {
    /// The path or device, given as PATH|DEVICE or as -t/--target (default `.`).
    pub fn target(&self) -> &std::path::Path {
        self.target_flag.as_deref().unwrap_or(&self.path)
    }
}

/// `iolab endurance`: SSD lifetime from its rated TBW and a daily write volume.
#[derive(Debug, Clone, Args)]
pub struct EnduranceArgs {
    /// Rated endurance, terabytes written, from the vendor's data sheet (SI units:
    /// 80TB = 80T = 80,000,000,000,000 bytes; 600TB; 3.5PB; 150000GB; binary only as
    /// TiB/GiB; a unit is required).
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub tbw: String,

    /// What the applications write per day (SI units: 20GB = 20G, 500MB; a unit is
    /// required).
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub daily: String,

    /// Use the write amplification measured in this iolab result file (device bytes
    /// written / application bytes written over its write runs).
    #[arg(long, value_name = "RESULT.json", conflicts_with = "wa")]
    pub from: Option<PathBuf>,

    /// With --from: only this test of the result file.
    #[arg(long, value_name = "NAME", requires = "from")]
    pub test: Option<String>,

    /// Write amplification to assume (e.g. 1.5), instead of a measured one.
    #[arg(long, value_name = "FACTOR", allow_hyphen_values = true)]
    pub wa: Option<f64>,

    /// Percentage of the rated endurance already used (0-100, as SMART's "Percentage
    /// Used": 40 or 40%).
    #[arg(
        long,
        value_name = "PERCENT",
        value_parser = used_percent_arg,
        conflicts_with = "device",
        allow_hyphen_values = true
    )]
    pub used: Option<f64>,

    /// Read the percentage used from this device's SMART (a device or a path on it).
    #[arg(long, value_name = "PATH|DEVICE")]
    pub device: Option<String>,

    /// Print JSON instead of the table.
    #[arg(long)]
    pub json: bool,
}

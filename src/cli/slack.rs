//! `iolab slack` arguments, and their checks (`SlackInput::from_args`).

use std::path::PathBuf;

use clap::Args;

use crate::analysis::slack::rules::{FsKind, FsRules};
use crate::analysis::slack::{Inventory, cost, csv, units};
use crate::model::ResultDoc;
use crate::model::slack::CostModel;

/// Cluster slack: how much space each allocation unit (512 B ... 2 MiB) wastes on a tree
/// of files or a list of sizes, what writing them would cost, and the best unit.
#[derive(Debug, Clone, Args)]
pub struct SlackArgs {
    /// Directory to scan (symlinks are not followed, hard links count once). Also taken as
    /// -t/--target, as the other commands take it.
    #[arg(value_name = "DIR", required_unless_present_any = ["sizes_from", "target_flag"])]
    pub dir: Option<PathBuf>,

    /// The directory to scan, as an option (the same as DIR).
    #[arg(short = 't', long = "target", value_name = "DIR", conflicts_with_all = ["dir", "sizes_from"])]
    pub target_flag: Option<PathBuf>,

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

/// `iolab slack`'s checked input: the allocation rules, the sizes' source, the cost model.
pub struct SlackInput {
    pub rules: FsRules,
    pub source: Source,
    pub model: CostModel,
}

impl SlackInput {
    /// Every check before anything is scanned: `--fs` and its parameters, the directory or
    /// the CSV (read here), `--calibrate`.
    pub fn from_args(args: &SlackArgs) -> anyhow::Result<SlackInput> {
        let rules = FsRules::parse(&args.fs, args.inode_size, args.max_inline, args.mft_record)
            .map_err(|e| crate::usage!("{e}"))?;
        let source = source_of(args)?;
        let model = cost_model(args, &rules, &source)?;
        Ok(SlackInput {
            rules,
            source,
            model,
        })
    }
}

/// Where the file sizes come from: a directory to scan, or a CSV of sizes already read.
pub enum Source {
    Dir(PathBuf),
    Csv(PathBuf, Box<Inventory>),
}

fn source_of(args: &SlackArgs) -> anyhow::Result<Source> {
    match (
        args.dir.as_ref().or(args.target_flag.as_ref()),
        &args.sizes_from,
    ) {
        (Some(d), None) => match std::fs::metadata(d) {
            Ok(m) if m.is_dir() => Ok(Source::Dir(d.clone())),
            Ok(_) => Err(crate::usage!(
                "{} is not a directory (give a directory to scan, or --sizes-from FILE.csv)",
                d.display()
            )),
            Err(e) => Err(crate::usage!(
                "cannot scan {}: {}",
                d.display(),
                crate::fs::facts::io_why(&e)
            )),
        },
        (None, Some(f)) => csv::read(f)
            .map(|inv| Source::Csv(f.clone(), Box::new(inv)))
            .map_err(|e| crate::usage!("--sizes-from {e}")),
        _ => Err(crate::usage!(
            "give either a DIR to scan or --sizes-from FILE.csv"
        )),
    }
}

/// The cost model; a calibration from a result of several file systems takes the points of
/// the one analysed: `--fs` when it names rules, else the scanned tree's file system.
fn cost_model(args: &SlackArgs, rules: &FsRules, source: &Source) -> anyhow::Result<CostModel> {
    let Some(path) = &args.calibrate else {
        return Ok(cost::defaults(&units()));
    };
    let doc = ResultDoc::read(path).map_err(anyhow::Error::new)?;
    let analysed = match source {
        _ if rules.kind != FsKind::Plain => Some(cost::Analysed {
            name: rules.kind.to_string(),
            origin: format!("--fs {}", rules.kind),
        }),
        Source::Dir(d) => crate::analysis::slack::tree_fs(d).map(|name| cost::Analysed {
            origin: format!("the file system of {}", d.display()),
            name,
        }),
        Source::Csv(..) => None,
    };
    cost::calibrate(&doc, path, &units(), analysed.as_ref())
        .map_err(|e| crate::usage!("--calibrate {e}"))
}

//! `iolab matrix` input -> a checked plan: configurations (file system x unit x mount
//! options, each runnable or skipped with a reason), resolved workloads, where file systems
//! are made. Every bad value is a `UsageError` here, before anything is created.

use std::path::PathBuf;

use super::workload::{WorkloadPlan, resolve_ref};
use crate::cli::checks::err;
use crate::cli::matrix::{MatrixArgs, Study};
use crate::error::UsageError;
use crate::fs::detect::{MountMethod, availability};
use crate::fs::types::{FS_TYPES, FsType, known_names, lookup};
use crate::stats::repeat::RepeatMode;
use crate::units::{fmt_size_exact, fmt_size_iec, parse_size};

/// The label of a workload's runs on the aged file system (the model's: the report reads it).
pub use crate::model::matrix::aged_label;

/// Default image size (the twelve-file-system copy test used 4 GiB partitions).
pub const DEFAULT_IMAGE_SIZE: u64 = 4 << 30;
/// Free space left untouched next to the images.
const FREE_MARGIN: u64 = 64 << 20;

/// One configuration to run (or to report as skipped).
pub struct ConfigPlan {
    pub label: String,
    pub fs: &'static FsType,
    pub unit: Option<u64>,
    /// `--mkfs-opts`: arguments added to mkfs (empty = none).
    pub mkfs_opts: Vec<String>,
    pub mount_opts: String,
    /// How to mount it, or why it is skipped.
    pub method: Result<MountMethod, String>,
}

/// Where file systems are made, before anything exists.
#[derive(Debug, Clone)]
pub enum PlaceReq {
    /// Images of `size` bytes in a new subdirectory of `base`.
    Images {
        base: PathBuf,
        size: u64,
    },
    Device(PathBuf),
}

pub struct Plan {
    pub configs: Vec<ConfigPlan>,
    pub workloads: Vec<WorkloadPlan>,
    pub place: PlaceReq,
    pub repeat: RepeatMode,
    /// Notes for the user about choices made (study workloads, clamped sizes).
    pub notes: Vec<String>,
    /// `--age`: after the fresh runs, age the same file system and run the workloads again.
    pub age: Option<AgePlan>,
}

/// Why a file system that reports no size is not aged in a matrix (said by the plan's note
/// and the run's reason).
pub fn no_size_to_age() -> String {
    format!("{}: not aged", crate::workload::age::NO_SIZE_TO_AGE)
}

/// How `--age` ages each configuration's file system.
#[derive(Debug, Clone)]
pub struct AgePlan {
    pub profile: crate::workload::age::Profile,
    pub fill: f64,
    pub churn: f64,
    pub seed: u64,
}

/// The `test` of a warning on configuration `cfg` about test `test` (`None`: about the
/// workload) of the runs labelled `label` (a workload's label, `aged_label` for its runs on
/// the aged file system): `ext4: 4KiB create`; on the aged file system `ext4: aged: 4KiB
/// create`; and with the workload's label when another workload of `workloads` is of the
/// same family, whose tests can have the same names (`ext4: run:duration=1s: RND4K Q1T1
/// read`). Fresh and aged runs, or two such workloads, gave the same name, and a reader
/// could not tell which run a warning was about (an identical warning was even kept once).
pub fn warning_test(
    workloads: &[WorkloadPlan],
    cfg: &str,
    label: &str,
    test: Option<&str>,
) -> String {
    let family = |l: &str| l.split(':').next().unwrap_or(l).to_string();
    let (workload, aged) = match workloads.iter().find(|w| w.label == label) {
        Some(w) => (Some(w), false),
        None => (
            workloads.iter().find(|w| aged_label(&w.label) == label),
            true,
        ),
    };
    let mut parts = vec![cfg];
    if aged && workload.is_some() {
        parts.push("aged");
    }
    if let Some(w) = workload
        && workloads
            .iter()
            .filter(|o| family(&o.label) == family(&w.label))
            .count()
            > 1
    {
        parts.push(&w.label);
    }
    parts.extend(test);
    parts.join(": ")
}

/// `--age`, `--age-fill`, `--age-churn` checked against the file-system size.
fn age_plan(a: &MatrixArgs, size: Option<u64>) -> Result<Option<AgePlan>, UsageError> {
    let Some(spec) = &a.age else {
        return Ok(None);
    };
    if a.setup_only {
        return Err(err(
            "--age needs workloads to measure (not with --setup-only)",
        ));
    }
    let profile = crate::workload::age::Profile::load(spec)?;
    let fill = match &a.age_fill {
        Some(s) => {
            crate::workload::age::parse_share(s).map_err(|e| err(format!("--age-fill {e}")))?
        }
        None => profile.fill,
    };
    let churn = match a.age_churn {
        Some(c) if c.is_finite() && c > 0.0 => c,
        Some(c) => {
            return Err(err(format!(
                "--age-churn {c}: must be a finite number above 0"
            )));
        }
        None => profile.churn,
    };
    if let Some(size) = size {
        // A fresh file system holds a few percent of metadata; the fit is judged on its size.
        crate::workload::age::check_fit(&profile, fill, size, size / 20)
            .map_err(|e| err(format!("--age {spec}: {e}")))?;
    }
    Ok(Some(AgePlan {
        profile,
        fill,
        churn,
        seed: 1,
    }))
}

fn parse_fs_list(s: &str) -> Result<Vec<&'static FsType>, UsageError> {
    let mut out: Vec<&'static FsType> = Vec::new();
    for name in s.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        if name.eq_ignore_ascii_case("all") {
            out.extend(FS_TYPES.iter());
            continue;
        }
        let t = lookup(name).ok_or_else(|| {
            err(format!(
                "unknown file system '{name}' (known: {})",
                known_names()
            ))
        })?;
        out.push(t);
    }
    let mut seen = Vec::new();
    out.retain(|t| {
        let new = !seen.contains(&t.name);
        seen.push(t.name);
        new
    });
    if out.is_empty() {
        return Err(err(format!(
            "--fs names no file system (known: {})",
            known_names()
        )));
    }
    Ok(out)
}

fn parse_units(s: &str) -> Result<Vec<Option<u64>>, UsageError> {
    let mut out = Vec::new();
    for tok in s.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        if tok.eq_ignore_ascii_case("default") {
            if !out.contains(&None) {
                out.push(None);
            }
            continue;
        }
        let v = parse_size(tok).map_err(|e| err(format!("--cluster {tok}: {e}")))?;
        if v < 512 || !v.is_power_of_two() {
            return Err(err(format!(
                "--cluster {tok}: an allocation unit is a power of two of at least 512 bytes"
            )));
        }
        // `4K,1K,4K` or `4K,4096`: one configuration each, not a second identical row.
        if !out.contains(&Some(v)) {
            out.push(Some(v));
        }
    }
    if out.is_empty() {
        return Err(err("--cluster names no size"));
    }
    Ok(out)
}

/// An option set and the file system it is for (`None`: every file system).
type Scoped<T> = (Option<&'static str>, T);

/// `FS:TEXT` -> (FS, TEXT) when the text before the first colon names a file system, else
/// (None, the whole set): option text holds colons too (`compress=zstd:3`,
/// `context="system_u:object_r:..."`), and only a known type's name counts as a scope. A
/// known type that is not measured (`--fs`) is an error: its set would apply to nothing.
fn split_scope<'a>(
    flag: &str,
    set: &'a str,
    fs_list: &[&'static FsType],
) -> Result<(Option<&'static str>, &'a str), UsageError> {
    let Some((t, rest)) = set
        .split_once(':')
        .and_then(|(head, rest)| Some((lookup(head)?, rest)))
    else {
        return Ok((None, set));
    };
    if !fs_list.iter().any(|f| f.name == t.name) {
        let names: Vec<&str> = fs_list.iter().map(|f| f.name).collect();
        return Err(err(format!(
            "{flag} '{set}': {} is not one of the file systems measured (--fs {})",
            t.name,
            names.join(",")
        )));
    }
    Ok((Some(t.name), rest.trim()))
}

/// The sets that apply to `fs`: its own when it has some, else the unscoped ones, else
/// the default (none).
fn sets_for<T: Clone + Default>(sets: &[Scoped<T>], fs: &FsType) -> Vec<T> {
    let pick = |scope: Option<&str>| -> Vec<T> {
        sets.iter()
            .filter(|(s, _)| *s == scope)
            .map(|(_, v)| v.clone())
            .collect()
    };
    let own = pick(Some(fs.name));
    if !own.is_empty() {
        return own;
    }
    let all = pick(None);
    if all.is_empty() {
        vec![T::default()]
    } else {
        all
    }
}

/// Option sets of `flag`: repeated flags and `;`-separated sets, each optionally scoped
/// (`FS:SET`), each made into a value by `value` (`default` = none); a set given twice for
/// the same scope is one.
fn parse_sets<T: PartialEq>(
    flag: &str,
    v: &[String],
    fs_list: &[&'static FsType],
    value: impl Fn(&str) -> Result<T, UsageError>,
) -> Result<Vec<Scoped<T>>, UsageError> {
    let mut out: Vec<Scoped<T>> = Vec::new();
    for set in v.iter().flat_map(|s| s.split(';')) {
        let (scope, rest) = split_scope(flag, set.trim(), fs_list)?;
        let item = (scope, value(rest)?);
        if !out.contains(&item) {
            out.push(item);
        }
    }
    Ok(out)
}

/// Mount-option sets: comma-joined options for `mount -o`, without spaces.
fn parse_mount_opts(
    v: &[String],
    fs_list: &[&'static FsType],
) -> Result<Vec<Scoped<String>>, UsageError> {
    parse_sets("--mount-opts", v, fs_list, |set| {
        if set.chars().any(char::is_whitespace) {
            return Err(err(format!(
                "--mount-opts '{set}': options are comma-separated, without spaces"
            )));
        }
        Ok(if set.eq_ignore_ascii_case("default") {
            String::new()
        } else {
            set.to_string()
        })
    })
}

/// mkfs option sets, each split into arguments at whitespace.
fn parse_mkfs_opts(
    v: &[String],
    fs_list: &[&'static FsType],
) -> Result<Vec<Scoped<Vec<String>>>, UsageError> {
    parse_sets("--mkfs-opts", v, fs_list, |set| {
        let args: Vec<String> = set.split_whitespace().map(str::to_string).collect();
        Ok(
            if args.len() == 1 && args[0].eq_ignore_ascii_case("default") {
                Vec::new()
            } else {
                args
            },
        )
    })
}

/// `ext4 4KiB [-O ^has_journal] noatime`: type, unit, mkfs options in brackets, mount options.
pub fn label_of(fs: &FsType, unit: Option<u64>, mkfs: &[String], opts: &str) -> String {
    let mut l = fs.name.to_string();
    if let Some(u) = unit {
        l.push(' ');
        l.push_str(&fmt_size_exact(u));
    }
    if !mkfs.is_empty() {
        l.push_str(&format!(" [{}]", mkfs.join(" ")));
    }
    if !opts.is_empty() {
        l.push(' ');
        l.push_str(opts);
    }
    l
}

/// Why `fs` cannot be made in `size` bytes, and what to do: a bigger `--image-size`, or more
/// free space when the size was clamped to it. (It said "the image is" of a `--device`.)
fn too_small(a: &MatrixArgs, place: &PlaceReq, fs: &FsType, size: u64) -> String {
    let need = fmt_size_iec(fs.min_size);
    let (have, remedy) = match place {
        PlaceReq::Device(d) => (
            format!("{} is {}", d.display(), fmt_size_iec(size)),
            String::new(),
        ),
        PlaceReq::Images { base, .. } if size < a.image_size.unwrap_or(DEFAULT_IMAGE_SIZE) => (
            format!("the image is {}", fmt_size_iec(size)),
            format!(" (clamped to the free space of {})", base.display()),
        ),
        PlaceReq::Images { .. } => (
            format!("the image is {}", fmt_size_iec(size)),
            format!(" (--image-size {} or more)", fmt_size_exact(fs.min_size)),
        ),
    };
    format!("{} needs at least {need}, {have}{remedy}", fs.name)
}

/// The image directory's base and size, checked for room.
fn place_of(
    a: &MatrixArgs,
    smallest: u64,
    notes: &mut Vec<String>,
) -> Result<PlaceReq, UsageError> {
    if let Some(dev) = &a.device {
        return super::device::check_device(dev, a.allow_destroy.as_deref()).map(PlaceReq::Device);
    }
    if a.allow_destroy.is_some() {
        return Err(err("--allow-destroy is only for --device"));
    }
    let base = match &a.image_dir {
        Some(d) => d.clone(),
        None => std::env::current_dir().map_err(|e| err(format!("no current directory: {e}")))?,
    };
    if !base.is_dir() {
        return Err(err(format!(
            "--image-dir {}: not an existing directory",
            base.display()
        )));
    }
    if crate::fs::facts::is_read_only_fs(&base) {
        return Err(err(format!(
            "--image-dir {}: the file system is read-only",
            base.display()
        )));
    }
    let want = a.image_size.unwrap_or(DEFAULT_IMAGE_SIZE);
    if a.image_size.is_some() && want < (16 << 20) {
        return Err(err(format!(
            "--image-size {}: at least 16MiB",
            fmt_size_iec(want)
        )));
    }
    let free = crate::fs::facts::free_space(&base).unwrap_or(0);
    let room = free.saturating_sub(FREE_MARGIN);
    let size = if want > room {
        // Whole MiB, so every mkfs sees a round size.
        let clamped = room & !((1 << 20) - 1);
        if clamped < smallest.max(16 << 20) {
            return Err(err(format!(
                "--image-dir {}: only {} free; the images need at least {}",
                base.display(),
                fmt_size_iec(free),
                fmt_size_iec(smallest.max(16 << 20) + FREE_MARGIN)
            )));
        }
        notes.push(format!(
            "image size clamped from {} to {} (free space of {})",
            fmt_size_iec(want),
            fmt_size_iec(clamped),
            base.display()
        ));
        clamped
    } else {
        want
    };
    Ok(PlaceReq::Images { base, size })
}

/// Why a matrix whose every configuration would be skipped is refused: root first (every
/// configuration needs it), else each configuration's reason.
fn nothing_can_run(configs: &[ConfigPlan]) -> String {
    if !crate::os::is_root() {
        return format!(
            "iolab matrix formats and mounts file systems (loop devices, mkfs, mount): that needs root (running as uid {}); to measure a directory this user can write, use iolab run, files, copy or trace run with -t DIR",
            nix::unistd::geteuid()
        );
    }
    let mut reasons: Vec<String> = Vec::new();
    for c in configs {
        if let Err(why) = &c.method {
            let r = format!("{}: {why}", c.label);
            if !reasons.contains(&r) {
                reasons.push(r);
            }
        }
    }
    format!(
        "nothing can be measured here: every configuration would be skipped ({})",
        reasons.join("; ")
    )
}

/// Check everything and decide what runs.
pub fn plan(a: &MatrixArgs) -> Result<Plan, UsageError> {
    let repeat = crate::cli::run::repeat_mode(&a.repeat).map_err(err)?;
    if a.full && a.study != Some(Study::Cluster) {
        return Err(err("--full is only for --study cluster"));
    }
    if a.study.is_some() && !a.workload.is_empty() {
        return Err(err("--study chooses the workloads; drop --workload"));
    }
    let fs_list = match (&a.fs, a.study) {
        (Some(s), _) => parse_fs_list(s)?,
        (None, Some(Study::Cluster)) => FS_TYPES.iter().filter(|t| t.has_several_units()).collect(),
        (None, Some(Study::LinuxFs)) => FS_TYPES.iter().collect(),
        (None, None) => {
            return Err(err(format!(
                "--fs is needed (e.g. --fs ext4,xfs; known: {}), or a --study",
                known_names()
            )));
        }
    };
    let units = a.cluster.as_deref().map(parse_units).transpose()?;
    let opt_sets = parse_mount_opts(&a.mount_opts, &fs_list)?;
    let mkfs_sets = parse_mkfs_opts(&a.mkfs_opts, &fs_list)?;
    if a.study == Some(Study::LinuxFs)
        && (units.is_some()
            || opt_sets.iter().any(|(_, o)| !o.is_empty())
            || mkfs_sets.iter().any(|(_, m)| !m.is_empty()))
    {
        return Err(err(
            "--study linux-fs compares default options; drop --cluster, --mkfs-opts and --mount-opts",
        ));
    }
    let mut notes = Vec::new();
    let smallest = fs_list.iter().map(|t| t.min_size).min().unwrap_or(0);
    let place = place_of(a, smallest, &mut notes)?;
    let size = match &place {
        PlaceReq::Images { size, .. } => Some(*size),
        PlaceReq::Device(d) => super::device::device_size(d),
    };

    let mut configs = Vec::new();
    for &fs in &fs_list {
        let fs_units: Vec<Option<u64>> = match (&units, a.study) {
            (Some(u), _) => u.clone(),
            (None, Some(Study::Cluster)) => fs
                .valid_units()
                .into_iter()
                .filter(|&u| (512..=65536).contains(&u))
                .map(Some)
                .collect(),
            (None, _) => vec![None],
        };
        let (fs_mkfs, fs_opts) = (sets_for(&mkfs_sets, fs), sets_for(&opt_sets, fs));
        for &unit in &fs_units {
            fs.unit_args(unit)
                .map_err(|e| err(format!("--cluster: {e}")))?;
            for (mkfs, opts) in fs_mkfs
                .iter()
                .flat_map(|m| fs_opts.iter().map(move |o| (m, o)))
            {
                let mut method = availability(fs);
                if let (Ok(_), Some(size)) = (&method, size)
                    && fs.mkfs.is_some()
                    && size < fs.min_size
                {
                    method = Err(too_small(a, &place, fs, size));
                }
                if let (Ok(_), Some(size)) = (&method, size)
                    && let Err(why) = fs.unit_fits(unit, size)
                {
                    method = Err(why);
                }
                configs.push(ConfigPlan {
                    label: label_of(fs, unit, mkfs, opts),
                    fs,
                    unit,
                    mkfs_opts: mkfs.clone(),
                    mount_opts: opts.clone(),
                    method,
                });
            }
        }
    }

    let workloads = if a.setup_only {
        Vec::new()
    } else if let Some(study) = a.study {
        super::study::workloads(
            study,
            a.full,
            size.unwrap_or(DEFAULT_IMAGE_SIZE),
            &mut notes,
        )?
    } else if a.workload.is_empty() {
        vec![resolve_ref("run:preset=real:duration=5s:repeat=1")?]
    } else {
        a.workload
            .iter()
            .map(|s| resolve_ref(s))
            .collect::<Result<Vec<_>, _>>()?
    };
    // fusefat makes files the slower the fuller their directory: a files workload there can
    // run for hours, said before the first file system is made.
    let slow: Vec<String> = configs
        .iter()
        .filter(|c| c.method == Ok(MountMethod::Fuse("fusefat")))
        .map(|c| c.label.clone())
        .collect();
    if !slow.is_empty() {
        notes.extend(super::study::fusefat_notes(
            &workloads,
            repeat.min_runs(),
            &slow,
        ));
    }
    let age = age_plan(a, size)?;
    // fusefat reports no size: `--age` cannot age its configurations (`no_size_to_age`),
    // said before the first file system is made, as its slow file making is.
    if let Some(age) = &age
        && !slow.is_empty()
    {
        notes.push(format!(
            "--age {} on FAT32 through fusefat ({}): {}; each of them ends failed after its fresh workloads, with that reason; leave fat32 out of --fs to age the others",
            age.profile.name,
            slow.join(", "),
            no_size_to_age()
        ));
    }
    // Nothing this machine can make (any file system without root): refused before anything
    // is created. It made a work directory, printed a table of skipped rows, saved a result
    // with status `failed` and exited 1.
    if configs.iter().all(|c| c.method.is_err()) {
        return Err(err(nothing_can_run(&configs)));
    }
    Ok(Plan {
        configs,
        workloads,
        place,
        repeat,
        notes,
        age,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--age`: the fresh and the aged runs' warnings both said `ext4: 4KiB create`; two
    /// `run` workloads' both `ext4: RND4K Q1T1 read`. The name now says which.
    #[test]
    fn a_warning_names_the_aged_run_and_a_workload_of_the_same_family() {
        let files = resolve_ref("files:sizes=4K").unwrap();
        let one = [files];
        let name = |ws: &[WorkloadPlan], label: &str, test| warning_test(ws, "ext4", label, test);
        let f = one[0].label.clone();
        assert_eq!(name(&one, &f, Some("4KiB create")), "ext4: 4KiB create");
        assert_eq!(name(&one, &f, None), "ext4");
        assert_eq!(
            name(&one, &aged_label(&f), Some("4KiB create")),
            "ext4: aged: 4KiB create"
        );
        assert_eq!(name(&one, &aged_label(&f), None), "ext4: aged");
        let two = [
            resolve_ref("run:duration=1s").unwrap(),
            resolve_ref("run:duration=2s").unwrap(),
            resolve_ref("files:sizes=4K").unwrap(),
        ];
        let (r1, r2) = (two[0].label.clone(), two[1].label.clone());
        assert_ne!(r1, r2);
        let a = name(&two, &r1, Some("RND4K Q1T1 read"));
        let b = name(&two, &aged_label(&r2), Some("RND4K Q1T1 read"));
        assert_eq!(a, format!("ext4: {r1}: RND4K Q1T1 read"));
        assert_eq!(b, format!("ext4: aged: {r2}: RND4K Q1T1 read"));
        // The only workload of its family keeps the short name.
        assert_eq!(name(&two, &f, Some("4KiB create")), "ext4: 4KiB create");
    }

    #[test]
    fn lists_parse_and_reject_with_the_known_values() {
        let l = parse_fs_list("ext4, FAT32,ext4").unwrap();
        assert_eq!(
            l.iter().map(|t| t.name).collect::<Vec<_>>(),
            ["ext4", "vfat"]
        );
        let e = parse_fs_list("ext4,zfs").unwrap_err().to_string();
        assert!(
            e.contains("unknown file system 'zfs'") && e.contains("btrfs"),
            "{e}"
        );
        assert_eq!(
            parse_units("512,1K,default").unwrap(),
            [Some(512), Some(1024), None]
        );
        assert!(parse_units("3000").is_err());
        // A value repeated anywhere in the list made a second, identical configuration
        // (`--cluster 1K,4K,64K,4K`: two `xfs 4KiB` rows); only neighbours were merged.
        assert_eq!(
            parse_units("1K,4K,64K,4096,default,1k,default").unwrap(),
            [Some(1024), Some(4096), Some(65536), None]
        );
        let ext4 = [lookup("ext4").unwrap()];
        let sets = |v: &[&str]| sets_for(&parse_mount_opts(&owned(v), &ext4).unwrap(), ext4[0]);
        assert_eq!(
            sets(&["relatime;noatime", "default"]),
            ["relatime", "noatime", ""]
        );
        assert_eq!(sets(&[]), [""]);
        assert!(parse_mount_opts(&["no atime".into()], &ext4).is_err());
    }

    fn owned(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// `ext4` with `noatime` against `btrfs` with `compress=zstd` could not be asked: every
    /// set applied to every --fs (a btrfs option failed the ext4 row). A scope is only a
    /// measured type's name before the first colon; option text keeps its own colons.
    #[test]
    fn option_sets_scoped_to_a_file_system() {
        let fs = parse_fs_list("ext4,btrfs,xfs").unwrap();
        let (ext4, btrfs, xfs) = (fs[0], fs[1], fs[2]);
        let m = parse_mount_opts(
            &owned(&[
                "noatime;btrfs:compress=zstd:3,noatime",
                "BTRFS: default",
                "context=\"system_u:object_r:tmp_t:s0\"",
            ]),
            &fs,
        )
        .unwrap();
        assert_eq!(
            sets_for(&m, ext4),
            ["noatime", "context=\"system_u:object_r:tmp_t:s0\""]
        );
        assert_eq!(sets_for(&m, xfs), sets_for(&m, ext4));
        assert_eq!(sets_for(&m, btrfs), ["compress=zstd:3,noatime", ""]);
        // Only scoped sets: the others get the defaults.
        let m = parse_mount_opts(&owned(&["btrfs:compress=zstd"]), &fs).unwrap();
        assert_eq!(sets_for(&m, ext4), [""]);
        assert_eq!(sets_for(&m, btrfs), ["compress=zstd"]);
        // A known type that is not measured names the --fs list; an alias is its type.
        let e = parse_mount_opts(&owned(&["f2fs:noatime"]), &fs)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("'f2fs:noatime'") && e.contains("--fs ext4,btrfs,xfs"),
            "{e}"
        );
        assert!(parse_mount_opts(&owned(&["fat32:noatime"]), &fs).is_err());
        assert!(parse_mount_opts(&owned(&["btrfs:no atime"]), &fs).is_err());
        let k = parse_mkfs_opts(&owned(&["ext4:-O ^has_journal;-L x:y"]), &fs).unwrap();
        assert_eq!(sets_for(&k, ext4), [owned(&["-O", "^has_journal"])]);
        assert_eq!(sets_for(&k, xfs), [owned(&["-L", "x:y"])]);
    }

    #[test]
    fn labels_name_the_configuration() {
        let t = lookup("ext4").unwrap();
        assert_eq!(label_of(t, Some(4096), &[], "noatime"), "ext4 4KiB noatime");
        assert_eq!(label_of(t, None, &[], ""), "ext4");
        let nj = ["-O".to_string(), "^has_journal".to_string()];
        assert_eq!(
            label_of(t, None, &nj, "noatime,data=writeback"),
            "ext4 [-O ^has_journal] noatime,data=writeback"
        );
    }

    /// There was no way to give mkfs an option: ext4 without a journal (`-O ^has_journal`)
    /// against ext4 with one could not be compared.
    #[test]
    fn mkfs_option_sets_parse_into_arguments() {
        let ext4 = [lookup("ext4").unwrap()];
        let m = |v: &[&str]| sets_for(&parse_mkfs_opts(&owned(v), &ext4).unwrap(), ext4[0]);
        assert_eq!(
            m(&["-O ^has_journal;default", "-O  ^has_journal"]),
            [owned(&["-O", "^has_journal"]), vec![]]
        );
        assert_eq!(m(&[]), [Vec::<String>::new()]);
    }
}

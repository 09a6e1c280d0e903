//! The write-time cost model: seconds per file = per_file(unit) + allocated bytes x
//! per_byte(unit). Coefficients are fitted by least squares from an `iolab files` or
//! `iolab matrix --study cluster` result (create phase, one line per unit), or taken from
//! Belov's table (NTFS on a SATA SSD under Windows 7) and labelled as defaults.

use std::collections::BTreeMap;
use std::path::Path;

use crate::fs::alloc::{FileAlloc, FsRules};
use crate::model::slack::{CostModel, FitPoint, UnitCost};
use crate::model::{ResultDoc, TestResult};

/// Belov reports times per portion of 10 000 files; its per-byte figures use that unit.
pub const PORTION: u64 = 10_000;
/// Belov's average "speed of writing cluster emptiness", seconds per byte per portion.
pub const SEED_PER_BYTE_PER_PORTION: f64 = 7.8205e-6;
/// Belov's Table 1, the diagonal: seconds per 10 000 files of exactly one unit.
const SEED_FULL_UNIT: [(u64, f64); 8] = [
    (512, 3.272),
    (1024, 3.211),
    (2048, 3.302),
    (4096, 3.441),
    (8192, 3.206),
    (16384, 3.147),
    (32768, 3.260),
    (65536, 3.370),
];

fn alloc(size: u64, unit: u64) -> u64 {
    size.div_ceil(unit) * unit
}

/// The unit among `have` closest to `unit` on a log scale (ties: the smaller one).
fn nearest(have: &[u64], unit: u64) -> u64 {
    let dist = |u: u64| (u.ilog2() as i64 - unit.ilog2() as i64).unsigned_abs();
    *have
        .iter()
        .min_by_key(|&&u| (dist(u), u))
        .expect("at least one unit")
}

/// Built-in coefficients from Belov's tables, for every unit in `units`.
pub fn defaults(units: &[u64]) -> CostModel {
    let per_byte = SEED_PER_BYTE_PER_PORTION / PORTION as f64;
    let have: Vec<u64> = SEED_FULL_UNIT.iter().map(|p| p.0).collect();
    let per_unit = units
        .iter()
        .map(|&u| {
            let from = nearest(&have, u);
            let t = SEED_FULL_UNIT.iter().find(|p| p.0 == from).unwrap().1;
            UnitCost {
                unit_bytes: u,
                per_file_s: t / PORTION as f64 - from as f64 * per_byte,
                per_byte_s: per_byte,
                per_byte_s_per_portion: SEED_PER_BYTE_PER_PORTION,
                origin: if from == u {
                    "default".into()
                } else {
                    format!("default, nearest built-in unit ({from} B)")
                },
                ..Default::default()
            }
        })
        .collect();
    CostModel {
        source: "defaults".into(),
        note: "built-in defaults from Belov's NTFS cluster-size tests (NTFS on a SATA SSD, Windows 7, 10 000-file portions); calibrate with --calibrate on a result of `iolab files` from your own device".into(),
        calibration_file: None,
        points_fs: None,
        portion_files: PORTION,
        per_unit,
    }
}

struct Measurement {
    test: String,
    unit: u64,
    size: u64,
    /// The fit's x: the bytes of clusters the file takes under its file system's rules
    /// (0 when resident), else `size` rounded up to whole units.
    allocated: u64,
    resident: bool,
    seconds_per_file: f64,
    /// The file system measured, as the fit groups points: its rules' name (`ext4`,
    /// `ext4-inline`, `ntfs-3g`), else its type as recorded (`""` when none is).
    fs: String,
}

/// Whose allocation the x of a measurement follows: a rule set's name, or why there was none.
#[derive(PartialEq)]
enum Basis {
    Rules(String),
    Unknown(String),
}

/// The allocation rules of the file system a files test ran on: those its create phase
/// recorded for its space prediction, else the matrix configuration's type and mount
/// method, else the environment's type (`fuseblk` names no file system: ntfs-3g and
/// exfat-fuse both mount as it). `Err` says why none apply.
fn test_rules(
    t: &TestResult,
    config: Option<&crate::model::matrix::ConfigurationResult>,
    env: &crate::model::Environment,
) -> Result<FsRules, String> {
    let env_fs = env.fs_type.as_str();
    use crate::workload::files::space::rules_of;
    let recorded = t.runs.iter().find_map(|r| {
        let p = r.files.as_ref()?.space.as_ref()?.predicted.as_ref()?;
        FsRules::parse(&p.rules, None, None, None).ok()
    });
    if let Some(r) = recorded {
        return Ok(configured(r, config, env));
    }
    let (fs, rules) = match config {
        // A FUSE mount of a block device is a `fuseblk` holding the configuration's type.
        Some(c)
            if c.mount_method
                .as_deref()
                .is_some_and(|m| m.starts_with("FUSE")) =>
        {
            (
                c.fs_type.as_str(),
                rules_of("fuseblk", Some(&c.fs_type)).or_else(|| rules_of(&c.fs_type, None)),
            )
        }
        Some(c) => (c.fs_type.as_str(), rules_of(&c.fs_type, None)),
        None => (env_fs, rules_of(env_fs, None)),
    };
    rules
        .map(|r| configured(r, config, env))
        .ok_or_else(|| match fs {
            "" => "the file system is not recorded".to_string(),
            "fuseblk" => {
                "fuseblk: a FUSE mount whose file system the result does not name".to_string()
            }
            other => format!("no allocation rules for {other}"),
        })
}

/// `rules` as the file system measured was made and mounted: ext4 made with `-O inline_data`
/// (and `-I`'s inode size) keeps small files in the inode; btrfs mounted with
/// `max_inline=N` keeps files up to N bytes in its metadata tree. A matrix configuration
/// records its mkfs command and mount options, a `files` result its mount options (the
/// environment's); the space prediction records only the type's rules.
fn configured(
    rules: FsRules,
    config: Option<&crate::model::matrix::ConfigurationResult>,
    env: &crate::model::Environment,
) -> FsRules {
    use crate::fs::alloc::FsKind;
    let (mkfs, mount_options) = match config {
        Some(c) => (c.mkfs_command.as_deref().unwrap_or(""), &c.mount_options),
        None => ("", &env.mount_options),
    };
    let mkfs: Vec<&str> = mkfs.split_whitespace().collect();
    let after = |flag: &str| mkfs.windows(2).find(|w| w[0] == flag).map(|w| w[1]);
    let features = mkfs
        .windows(2)
        .filter(|w| w[0] == "-O")
        .flat_map(|w| w[1].split(','));
    // The last mention wins, as with mke2fs.
    let inline = features.fold(false, |on, f| match f {
        "inline_data" => true,
        "^inline_data" => false,
        _ => on,
    });
    let size = |v: &str| crate::units::parse_size(v).ok();
    match rules.kind {
        FsKind::Ext4 | FsKind::Ext4Inline if inline => {
            let inode = after("-I").and_then(size);
            FsRules::parse("ext4-inline", inode, None, None).unwrap_or(rules)
        }
        FsKind::Btrfs => match crate::fs::alloc::max_inline_option(mount_options) {
            Some(m) => FsRules::parse("btrfs", None, Some(m), None).unwrap_or(rules),
            None => rules,
        },
        _ => rules,
    }
}

/// The length of the names `iolab files` gave a test's files: as wide as its writers'
/// files together need (workload/files/run.rs).
fn name_len(t: &TestResult) -> u64 {
    let p = |k: &str| t.params.get(k).and_then(|v| v.parse::<u64>().ok());
    let per_run = ["files_per_portion", "portions", "passes"]
        .iter()
        .map(|k| p(k).unwrap_or(1))
        .product::<u64>();
    let writers = match t.params.get("job_dirs").map(String::as_str) {
        Some("shared") => p("jobs").unwrap_or(1),
        _ => 1,
    };
    crate::workload::files::engine::Names::new(per_run.saturating_mul(writers), 0)
        .as_str()
        .len() as u64
}

/// Where a file of `size` goes at `unit` under `rules` (rounded up to whole units without
/// them, and for a size the file system cannot store): (bytes of clusters, resident).
fn allocation(rules: Option<&FsRules>, size: u64, name_len: u64, unit: u64) -> (u64, bool) {
    match rules.map(|r| r.file(size, name_len, unit)) {
        Some(FileAlloc::Clusters(b)) => (b, false),
        Some(FileAlloc::Resident) => (0, true),
        Some(FileAlloc::TooLarge) | None => (alloc(size, unit), false),
    }
}

fn files_per_s(t: &crate::model::TestResult) -> Option<f64> {
    if let Some(s) = t
        .summary
        .get("files_per_s")
        .filter(|s| s.n > 0 && s.mean > 0.0)
    {
        return Some(s.mean);
    }
    let v: Vec<f64> = t
        .runs
        .iter()
        .filter_map(|r| r.files_per_s)
        .filter(|v| *v > 0.0)
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Create-phase measurements of the files family, with their allocation unit and whose
/// allocation rules their x follows.
fn measurements(doc: &ResultDoc) -> Vec<(Measurement, Basis)> {
    let top = doc.tests.iter().map(|t| (t, None));
    let nested = doc
        .configurations
        .iter()
        .flat_map(|c| c.tests.iter().map(move |t| (t, Some(c))));
    top.chain(nested)
        .filter_map(|(t, config)| {
            let config_unit = config.and_then(|c| c.cluster_bytes_actual.or(c.cluster_bytes));
            if t.family != "files" || t.params.get("phase").map(String::as_str) != Some("create") {
                return None;
            }
            let size = t.params.get("file_size_bytes")?.parse().ok()?;
            let unit = t
                .params
                .get("alloc_unit_bytes")
                .and_then(|u| u.parse().ok())
                .or(config_unit)
                .filter(|u: &u64| *u > 0)?;
            let fps = files_per_s(t)?;
            let name = match &t.config {
                Some(c) => format!("{c}: {}", t.name),
                None => t.name.clone(),
            };
            let rules = test_rules(t, config, &doc.environment);
            let (allocated, resident) = allocation(rules.as_ref().ok(), size, name_len(t), unit);
            let fs = match &rules {
                Ok(r) => r.kind.to_string(),
                Err(_) => config
                    .map_or(&doc.environment.fs_type, |c| &c.fs_type)
                    .clone(),
            };
            let basis = match rules {
                Ok(r) => Basis::Rules(r.kind.to_string()),
                Err(why) => Basis::Unknown(why),
            };
            let m = Measurement {
                test: name,
                unit,
                size,
                allocated,
                resident,
                seconds_per_file: 1.0 / fps,
                fs,
            };
            Some((m, basis))
        })
        .collect()
}

/// What the note adds about the fit's x: the rules it followed, the points they keep
/// resident, and where no rules were known.
fn basis_note(measured: &[(Measurement, Basis)]) -> String {
    let mut rules: Vec<&str> = Vec::new();
    let mut unknown: Vec<&str> = Vec::new();
    for (_, b) in measured {
        match b {
            Basis::Rules(r) if !rules.contains(&r.as_str()) => rules.push(r),
            Basis::Unknown(w) if !unknown.contains(&w.as_str()) => unknown.push(w),
            _ => {}
        }
    }
    let mut parts = Vec::new();
    if !rules.is_empty() {
        // The resident sizes per unit: `1B, 512B at 4KiB`.
        let mut by_unit: BTreeMap<u64, Vec<String>> = BTreeMap::new();
        for (m, _) in measured.iter().filter(|(m, _)| m.resident) {
            let sizes = by_unit.entry(m.unit).or_default();
            let s = crate::units::fmt_size_exact(m.size);
            if !sizes.contains(&s) {
                sizes.push(s);
            }
        }
        let resident: Vec<String> = by_unit
            .iter()
            .map(|(u, sizes)| {
                format!(
                    "{} at {}",
                    sizes.join(", "),
                    crate::units::fmt_size_exact(*u)
                )
            })
            .collect();
        let which = if resident.is_empty() {
            "no file measured was resident".to_string()
        } else {
            format!(
                "resident files (kept in the inode, MFT record or metadata tree) take none: {}",
                resident.join("; ")
            )
        };
        parts.push(format!(
            "allocated bytes by the {} rules of the file system measured; {which}",
            rules.join(", ")
        ));
    }
    if !unknown.is_empty() {
        parts.push(format!(
            "allocated bytes are the sizes rounded up to whole units{} ({})",
            if rules.is_empty() { "" } else { " elsewhere" },
            unknown.join("; ")
        ));
    }
    parts.join("; ")
}

/// The file system a slack analysis is for: an `--fs` rules name or the type of the
/// scanned tree's file system (as iolab names it: `ext4`, `ntfs`, `vfat`), and where that
/// came from, for the note (`--fs ntfs-3g`, `the file system of DIR`).
pub struct Analysed {
    pub name: String,
    pub origin: String,
}

/// The file system whose points a fit takes, and every one the result measured.
struct Chosen {
    fs: String,
    all: Vec<String>,
}

/// One name for the rules and types of one file system: ext4 with or without inline
/// data, NTFS by the kernel or ntfs-3g, FAT.
fn family(fs: &str) -> &str {
    match fs {
        "ext2" | "ext3" | "ext4" | "ext4-inline" => "ext4",
        "ntfs" | "ntfs3" | "ntfs-3g" => "ntfs",
        "vfat" | "fat32" | "msdos" => "fat32",
        other => other,
    }
}

/// Which file system's points to fit: the only one measured, else the one analysed (the
/// same rules or type, else the only one of its family). `Ok(None)` when no point was
/// usable; `Err` when several were measured and the analysis names none of them.
fn choose(
    measured: &[(Measurement, Basis)],
    analysed: Option<&Analysed>,
) -> Result<Option<Chosen>, String> {
    let mut all: Vec<String> = Vec::new();
    for (m, _) in measured {
        if !all.contains(&m.fs) {
            all.push(m.fs.clone());
        }
    }
    all.sort();
    if all.len() <= 1 {
        return Ok(all.first().cloned().map(|fs| Chosen { fs, all }));
    }
    let shown = |f: &String| {
        if f.is_empty() {
            "unknown".to_string()
        } else {
            f.clone()
        }
    };
    let list = all.iter().map(shown).collect::<Vec<_>>().join(", ");
    let pick = analysed.and_then(|a| {
        let exact = all.iter().find(|f| **f == a.name);
        let kin: Vec<&String> = all
            .iter()
            .filter(|f| family(f) == family(&a.name))
            .collect();
        exact.or(if kin.len() == 1 { Some(kin[0]) } else { None })
    });
    match pick {
        Some(fs) => Ok(Some(Chosen {
            fs: fs.clone(),
            all: all.iter().map(shown).collect(),
        })),
        None => Err(format!(
            "the result measured several file systems ({list}){}; one line through their points would mix their costs: give --fs with the one whose costs to use (it also sets the allocation rules), or calibrate from a result of the file system analysed",
            match analysed {
                Some(a) => format!(" and none of them is {} ({})", a.name, a.origin),
                None =>
                    " and the analysis names none (a --sizes-from list with --fs plain)".to_string(),
            }
        )),
    }
}

/// What a fit had to clamp: noise can tilt the line below zero at either end.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Clamp {
    None,
    /// Writing more bytes is never free: a flat line at the mean.
    Slope,
    /// A file is never made for less than nothing: the line through the origin (a
    /// cluster+1 file far slower than the rest put the 64 KiB line's start at -430 µs per
    /// file on ntfs-3g, and `slack` printed and recommended a write time of -17 ms).
    PerFile,
}

/// Least squares y = a + b x over one unit's points, with a and b at least 0:
/// (a, b, r2, rmse, what was clamped).
fn least_squares(points: &[(f64, f64)]) -> Option<(f64, f64, Option<f64>, f64, Clamp)> {
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let (mut a, mut b, mut clamped) = (my - sxy / sxx * mx, sxy / sxx, Clamp::None);
    if b < 0.0 {
        (a, b, clamped) = (my, 0.0, Clamp::Slope);
    } else if a < 0.0 {
        // The best line with a = 0; its slope is positive, as every x and y is.
        let sxx0: f64 = points.iter().map(|p| p.0 * p.0).sum();
        let sxy0: f64 = points.iter().map(|p| p.0 * p.1).sum();
        (a, b, clamped) = (0.0, sxy0 / sxx0, Clamp::PerFile);
    }
    let ss_res: f64 = points.iter().map(|p| (p.1 - a - b * p.0).powi(2)).sum();
    let ss_tot: f64 = points.iter().map(|p| (p.1 - my).powi(2)).sum();
    let r2 = (points.len() >= 3 && ss_tot > 0.0).then(|| 1.0 - ss_res / ss_tot);
    Some((a, b, r2, (ss_res / n).sqrt(), clamped))
}

/// Fit the model from a result file. `Err` says what is missing (a usage error).
///
/// A result of several file systems (a matrix) is fitted from the points of the one
/// `analysed` names, and refused when it names none of them: one line through several file
/// systems' points would mix their costs.
pub fn calibrate(
    doc: &ResultDoc,
    path: &Path,
    units: &[u64],
    analysed: Option<&Analysed>,
) -> Result<CostModel, String> {
    let need = "a create phase of `iolab files` (or `iolab matrix --study cluster`) with at least two file sizes of different allocation at one unit, e.g. `iolab files -t DIR --sizes 1,cluster,cluster+1,64K`";
    if doc.command != "files" && doc.command != "matrix" {
        return Err(format!(
            "{}: an `iolab {}` result; --calibrate needs {need}",
            path.display(),
            doc.command
        ));
    }
    let mut measured = measurements(doc);
    let chosen = choose(&measured, analysed).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut several = String::new();
    if let Some(Chosen { fs, all, .. }) = &chosen
        && all.len() > 1
    {
        measured.retain(|(m, _)| m.fs == *fs);
        several = format!(
            "; only the points of {fs} (the file system analysed{}; the result measured {})",
            analysed.map_or(String::new(), |a| format!(": {}", a.origin)),
            all.join(", ")
        );
    }
    let basis = basis_note(&measured);
    let mut by_unit: BTreeMap<u64, Vec<Measurement>> = BTreeMap::new();
    for (m, _) in measured {
        by_unit.entry(m.unit).or_default().push(m);
    }
    let mut fitted: BTreeMap<u64, UnitCost> = BTreeMap::new();
    let mut single: Vec<(u64, Vec<Measurement>)> = Vec::new();
    for (unit, ms) in by_unit {
        let pts: Vec<(f64, f64)> = ms
            .iter()
            .map(|m| (m.allocated as f64, m.seconds_per_file))
            .collect();
        let Some((a, b, r2, rmse, clamped)) = least_squares(&pts) else {
            single.push((unit, ms));
            continue;
        };
        let mut c = unit_cost(unit, a, b, &ms);
        c.origin = match clamped {
            Clamp::None => "fit",
            Clamp::Slope => "fit (negative slope clamped to 0)",
            Clamp::PerFile => "fit (negative per-file cost clamped to 0)",
        }
        .into();
        c.r2 = r2;
        c.rmse_s = Some(rmse);
        fitted.insert(unit, c);
    }
    if fitted.is_empty() {
        return Err(format!(
            "{}: no usable measurements; --calibrate needs {need}",
            path.display()
        ));
    }
    // Units measured at one allocation size only: their own per-file cost, the mean slope.
    let pooled = fitted.values().map(|c| c.per_byte_s).sum::<f64>() / fitted.len() as f64;
    for (unit, ms) in single {
        let mean = ms.iter().map(|m| m.seconds_per_file).sum::<f64>() / ms.len() as f64;
        let a = mean - pooled * ms[0].allocated as f64;
        let mut c = unit_cost(unit, a.max(0.0), pooled, &ms);
        c.origin = if a < 0.0 {
            "per-file cost clamped to 0 (the per-byte cost pooled from the other units alone exceeds the time measured)"
        } else {
            "per-file cost measured, per-byte cost pooled from the other units"
        }
        .into();
        fitted.insert(unit, c);
    }
    let have: Vec<u64> = fitted.keys().copied().collect();
    let per_unit = units
        .iter()
        .map(|&u| {
            let from = nearest(&have, u);
            let mut c = fitted[&from].clone();
            if from != u {
                c.unit_bytes = u;
                c.origin = format!("nearest measured unit ({from} B)");
                c.points.clear();
                c.r2 = None;
                c.rmse_s = None;
                c.belov_s_per_byte_per_portion = None;
            }
            c
        })
        .collect();
    Ok(CostModel {
        source: "calibrated".into(),
        note: format!(
            "fitted by least squares from the create phase in {} (seconds per file = per-file cost + allocated bytes x per-byte cost); {basis}{several}",
            path.display()
        ),
        calibration_file: Some(path.display().to_string()),
        points_fs: chosen.map(|c| c.fs).filter(|f| !f.is_empty()),
        portion_files: PORTION,
        per_unit,
    })
}

fn unit_cost(unit: u64, a: f64, b: f64, ms: &[Measurement]) -> UnitCost {
    let points = ms
        .iter()
        .map(|m| {
            let x = m.allocated;
            let predicted = a + b * x as f64;
            FitPoint {
                test: m.test.clone(),
                file_size_bytes: m.size,
                allocated_bytes: x,
                resident: m.resident,
                seconds_per_file: m.seconds_per_file,
                predicted_s: predicted,
                residual_s: m.seconds_per_file - predicted,
            }
        })
        .collect();
    let mean_at = |size: u64| {
        let v: Vec<f64> = ms
            .iter()
            .filter(|m| m.size == size)
            .map(|m| m.seconds_per_file)
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    let belov = match (mean_at(1), mean_at(unit)) {
        (Some(one), Some(full)) if unit > 1 => {
            Some((full - one) / (unit - 1) as f64 * PORTION as f64)
        }
        _ => None,
    };
    UnitCost {
        unit_bytes: unit,
        per_file_s: a,
        per_byte_s: b,
        per_byte_s_per_portion: b * PORTION as f64,
        belov_s_per_byte_per_portion: belov,
        points,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Summary, TestResult};

    fn files_test(size: u64, unit: u64, fps: f64) -> TestResult {
        let mut t = TestResult {
            name: format!("{size} create"),
            family: "files".into(),
            ..Default::default()
        };
        t.params.insert("file_size_bytes".into(), size.to_string());
        t.params.insert("alloc_unit_bytes".into(), unit.to_string());
        t.params.insert("phase".into(), "create".into());
        t.summary.insert(
            "files_per_s".into(),
            Summary {
                n: 3,
                mean: fps,
                ..Default::default()
            },
        );
        t
    }

    #[test]
    fn fit_recovers_known_coefficients() {
        let mut doc = ResultDoc::new("files", vec![], Default::default());
        // seconds per file = 1e-4 + 1e-9 x allocated
        for size in [1u64, 4096, 4097, 65536, 1 << 20] {
            let spf = 1e-4 + 1e-9 * alloc(size, 4096) as f64;
            doc.tests.push(files_test(size, 4096, 1.0 / spf));
        }
        let m = calibrate(&doc, Path::new("x.json"), &[4096, 8192], None).unwrap();
        let c = &m.per_unit[0];
        assert!((c.per_file_s - 1e-4).abs() < 1e-9, "{}", c.per_file_s);
        assert!((c.per_byte_s - 1e-9).abs() < 1e-13);
        assert!(c.r2.unwrap() > 0.999999);
        assert_eq!(c.belov_s_per_byte_per_portion, Some(0.0));
        // A result file written before the field's rename still reads.
        let mut v = serde_json::to_value(c).unwrap();
        let o = v.as_object_mut().unwrap();
        let x = o.remove("belov_s_per_byte_per_portion").unwrap();
        o.insert("seed_style_s_per_byte_per_portion".into(), x);
        let back: crate::model::slack::UnitCost = serde_json::from_value(v).unwrap();
        assert_eq!(back.belov_s_per_byte_per_portion, Some(0.0));
        assert!(m.per_unit[1].origin.contains("nearest"));
    }

    /// Measured on ntfs-3g at 64 KiB clusters: a cluster+1 file far slower than the
    /// others tilted the line to -430 µs per file, and `slack` printed a write time of
    /// "-17363478 ns" and recommended 32 KiB for it.
    #[test]
    fn a_negative_per_file_cost_is_clamped_to_the_line_through_the_origin() {
        let mut doc = ResultDoc::new("files", vec![], Default::default());
        for (size, spf) in [(1u64, 97e-6), (4096, 310e-6), (65537, 887e-6)] {
            doc.tests.push(files_test(size, 65536, 1.0 / spf));
        }
        let m = calibrate(&doc, Path::new("x.json"), &[65536], None).unwrap();
        let c = &m.per_unit[0];
        assert_eq!(c.per_file_s, 0.0, "{c:?}");
        assert!(c.per_byte_s > 0.0, "{c:?}");
        assert_eq!(c.origin, "fit (negative per-file cost clamped to 0)");
        assert!(c.points.iter().all(|p| p.predicted_s >= 0.0), "{c:?}");
    }

    /// A create test on ntfs-3g as `iolab files` writes it: its runs record the rules of
    /// their space prediction, the environment says only `fuseblk`.
    fn ntfs3g_test(size: u64, unit: u64, fps: f64) -> TestResult {
        use crate::model::files::{FilesRunDetail, FilesSpace, SpacePrediction};
        let mut t = files_test(size, unit, fps);
        for (k, v) in [
            ("files_per_portion", "500"),
            ("portions", "5"),
            ("passes", "2"),
        ] {
            t.params.insert(k.into(), v.into());
        }
        t.runs.push(crate::model::RunResult {
            files: Some(FilesRunDetail {
                space: Some(FilesSpace {
                    predicted: Some(SpacePrediction {
                        rules: "ntfs-3g".into(),
                        ..Default::default()
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        });
        t
    }

    /// On NTFS a 1-byte file is resident in its MFT record: the fit put it at one whole
    /// cluster, which tilted the line (on ntfs-3g at 64 KiB the per-file cost came out
    /// negative, clamped to 0). Its x is now 0, and the true line comes back.
    #[test]
    fn resident_files_take_no_cluster_in_the_fit() {
        let mut doc = ResultDoc::new("files", vec![], Default::default());
        doc.environment.fs_type = "fuseblk".into();
        // seconds per file = 1e-4 + 1e-9 x the clusters really taken: 1 B and 600 B are
        // resident (up to 656 B with iolab's 6-character names), 700 B is not.
        let taken = |size: u64| if size <= 656 { 0 } else { alloc(size, 65536) };
        for size in [1u64, 600, 700, 4096, 65536, 65537] {
            let spf = 1e-4 + 1e-9 * taken(size) as f64;
            doc.tests.push(ntfs3g_test(size, 65536, 1.0 / spf));
        }
        let m = calibrate(&doc, Path::new("n.json"), &[65536], None).unwrap();
        let c = &m.per_unit[0];
        assert_eq!(c.origin, "fit", "{c:?}");
        assert!((c.per_file_s - 1e-4).abs() < 1e-9, "{c:?}");
        assert!((c.per_byte_s - 1e-9).abs() < 1e-13, "{c:?}");
        let resident: Vec<(u64, u64)> = c
            .points
            .iter()
            .filter(|p| p.resident)
            .map(|p| (p.file_size_bytes, p.allocated_bytes))
            .collect();
        assert_eq!(resident, [(1, 0), (600, 0)]);
        assert_eq!(c.points[2].allocated_bytes, 65536);
        assert!(
            m.note.ends_with(
                "; allocated bytes by the ntfs-3g rules of the file system measured; resident files (kept in the inode, MFT record or metadata tree) take none: 1B, 600B at 64KiB"
            ),
            "{}",
            m.note
        );
        // The JSON says so; a point written before the field reads as not resident.
        let v = serde_json::to_value(&c.points[0]).unwrap();
        assert_eq!(v["resident"], true);
        let mut old = serde_json::to_value(&c.points[2]).unwrap();
        assert!(old.get("resident").is_none(), "{old}");
        old.as_object_mut().unwrap().remove("resident");
        let back: FitPoint = serde_json::from_value(old).unwrap();
        assert!(!back.resident);
    }

    /// A matrix result written before the space prediction: the configuration names the
    /// file system and how it was mounted (FUSE ntfs-3g, not the kernel's ntfs3).
    #[test]
    fn a_matrix_configuration_names_its_rules() {
        let mut doc = ResultDoc::new("matrix", vec![], Default::default());
        for (method, x1) in [
            ("FUSE ntfs-3g", 0),
            ("kernel ntfs3", 0),
            ("kernel ext4", 4096),
        ] {
            let fs = if method.contains("ext4") {
                "ext4"
            } else {
                "ntfs"
            };
            let tests = [1u64, 4096, 4097]
                .iter()
                .map(|&size| {
                    let mut t = files_test(size, 4096, 1000.0 + size as f64);
                    t.params.remove("alloc_unit_bytes");
                    t
                })
                .collect();
            doc.configurations
                .push(crate::model::matrix::ConfigurationResult {
                    label: method.into(),
                    fs_type: fs.into(),
                    mount_method: Some(method.into()),
                    cluster_bytes: Some(4096),
                    tests,
                    ..Default::default()
                });
            let measured = measurements(&doc);
            let (m, basis) = &measured[measured.len() - 3];
            assert_eq!(m.allocated, x1, "{method}");
            let want = match method {
                "FUSE ntfs-3g" => "ntfs-3g",
                "kernel ntfs3" => "ntfs",
                _ => "ext4",
            };
            assert!(*basis == Basis::Rules(want.into()), "{method}");
        }
    }

    /// Without rules (a `fuseblk` result from before the space prediction, tmpfs) the x
    /// stays the size rounded up to whole units, and the note says why.
    #[test]
    fn without_rules_the_sizes_are_rounded_up_and_the_note_says_so() {
        for (fs, why) in [
            (
                "fuseblk",
                "fuseblk: a FUSE mount whose file system the result does not name",
            ),
            ("tmpfs", "no allocation rules for tmpfs"),
        ] {
            let mut doc = ResultDoc::new("files", vec![], Default::default());
            doc.environment.fs_type = fs.into();
            for size in [1u64, 4096, 4097] {
                doc.tests.push(files_test(size, 4096, 1000.0));
            }
            let m = calibrate(&doc, Path::new("t.json"), &[4096], None).unwrap();
            let p = &m.per_unit[0].points;
            assert_eq!(p[0].allocated_bytes, 4096, "{fs}");
            assert!(p.iter().all(|p| !p.resident), "{fs}");
            assert!(
                m.note.ends_with(&format!(
                    "; allocated bytes are the sizes rounded up to whole units ({why})"
                )),
                "{}",
                m.note
            );
        }
    }

    /// iolab files names its files with as many digits as its writers' files need, six at
    /// least: Belov's full counts take seven, four shared-directory writers eight.
    #[test]
    fn names_are_as_long_as_iolab_files_makes_them() {
        let mut t = files_test(1, 4096, 1.0);
        assert_eq!(name_len(&t), 6);
        for (k, v) in [
            ("files_per_portion", "10000"),
            ("portions", "20"),
            ("passes", "16"),
        ] {
            t.params.insert(k.into(), v.into());
        }
        assert_eq!(name_len(&t), 7);
        t.params.insert("jobs".into(), "4".into());
        t.params.insert("job_dirs".into(), "own".into());
        assert_eq!(name_len(&t), 7);
        t.params.insert("job_dirs".into(), "shared".into());
        assert_eq!(name_len(&t), 8);
    }

    #[test]
    fn matrix_results_take_the_unit_from_their_configuration() {
        let mut doc = ResultDoc::new("matrix", vec![], Default::default());
        let mut tests = Vec::new();
        for size in [1u64, 2048, 2049, 8192] {
            let mut t = files_test(size, 0, 1.0 / (1e-4 + 2e-9 * alloc(size, 2048) as f64));
            t.params.remove("alloc_unit_bytes");
            tests.push(t);
        }
        doc.configurations
            .push(crate::model::matrix::ConfigurationResult {
                label: "ext4 2KiB".into(),
                cluster_bytes: Some(2048),
                tests,
                ..Default::default()
            });
        let m = calibrate(&doc, Path::new("m.json"), &[2048], None).unwrap();
        assert!((m.per_unit[0].per_byte_s - 2e-9).abs() < 1e-13);
        assert_eq!(m.per_unit[0].points.len(), 4);
    }

    /// A matrix of ext4 and ntfs-3g at one unit, each on a line of its own: ext4 at
    /// 1e-4 + 1e-9 x, ntfs-3g at 3e-4 + 5e-9 x.
    fn two_fs_matrix() -> ResultDoc {
        let mut doc = ResultDoc::new("matrix", vec![], Default::default());
        doc.environment.fs_type = "ext4".into();
        for (fs, method, a, b) in [
            ("ext4", "kernel ext4", 1e-4, 1e-9),
            ("ntfs", "FUSE ntfs-3g", 3e-4, 5e-9),
        ] {
            let tests = [1u64, 4096, 4097, 65536]
                .iter()
                .map(|&size| {
                    let x = if fs == "ntfs" && size == 1 {
                        0
                    } else {
                        alloc(size, 4096)
                    };
                    let mut t = files_test(size, 4096, 1.0 / (a + b * x as f64));
                    t.params.remove("alloc_unit_bytes");
                    t.config = Some(format!("{fs} 4KiB"));
                    t
                })
                .collect();
            doc.configurations
                .push(crate::model::matrix::ConfigurationResult {
                    label: format!("{fs} 4KiB"),
                    fs_type: fs.into(),
                    mount_method: Some(method.into()),
                    cluster_bytes: Some(4096),
                    tests,
                    ..Default::default()
                });
        }
        doc
    }

    fn analysed(name: &str, origin: &str) -> Analysed {
        Analysed {
            name: name.into(),
            origin: origin.into(),
        }
    }

    /// The fit at 4 KiB for `slack --fs FS`.
    fn fit_for_fs(doc: &ResultDoc, fs: &str) -> Result<CostModel, String> {
        let a = analysed(fs, &format!("--fs {fs}"));
        calibrate(doc, Path::new("m.json"), &[4096], Some(&a))
    }

    /// Points of two file systems at one unit were fitted as one line (r2 0.15 at 4 KiB
    /// for a real ext4 + ntfs-3g + xfs matrix): each file system has its own, and the
    /// analysis takes the one it is for, by rules or by the tree's type.
    #[test]
    fn a_matrix_of_several_file_systems_is_fitted_per_file_system() {
        let doc = two_fs_matrix();
        for (a, want, (pf, pb)) in [
            (
                analysed("ext4", "the file system of /d"),
                "ext4",
                (1e-4, 1e-9),
            ),
            (analysed("ntfs-3g", "--fs ntfs-3g"), "ntfs-3g", (3e-4, 5e-9)),
            // The tree's type and the kernel driver's rules name the same file system.
            (analysed("ntfs", "--fs ntfs"), "ntfs-3g", (3e-4, 5e-9)),
            (
                analysed("ext4-inline", "--fs ext4-inline"),
                "ext4",
                (1e-4, 1e-9),
            ),
        ] {
            let m = calibrate(&doc, Path::new("m.json"), &[4096], Some(&a)).unwrap();
            let c = &m.per_unit[0];
            assert_eq!(c.points.len(), 4, "{}", a.name);
            assert!(
                c.points.iter().all(|p| p.test.starts_with(&want[..4])),
                "{c:?}"
            );
            assert!((c.per_file_s - pf).abs() < 1e-9, "{}: {c:?}", a.name);
            assert!((c.per_byte_s - pb).abs() < 1e-13, "{}: {c:?}", a.name);
            assert_eq!(m.points_fs.as_deref(), Some(want));
            assert!(
                m.note.ends_with(&format!(
                    "; only the points of {want} (the file system analysed: {}; the result measured ext4, ntfs-3g)",
                    a.origin
                )),
                "{}",
                m.note
            );
        }
    }

    #[test]
    fn a_matrix_without_the_file_system_analysed_is_refused_with_what_to_do() {
        let doc = two_fs_matrix();
        let e = fit_for_fs(&doc, "xfs").unwrap_err();
        assert!(
            e.starts_with("m.json: the result measured several file systems (ext4, ntfs-3g) and none of them is xfs (--fs xfs)"),
            "{e}"
        );
        assert!(e.contains("give --fs with the one"), "{e}");
        let e = calibrate(&doc, Path::new("m.json"), &[4096], None).unwrap_err();
        assert!(e.contains("the analysis names none"), "{e}");
    }

    /// A result of one file system is fitted from all its points whatever is analysed, as
    /// before; the JSON names it.
    #[test]
    fn a_result_of_one_file_system_is_fitted_whatever_is_analysed() {
        let mut doc = two_fs_matrix();
        doc.configurations.truncate(1);
        let m = fit_for_fs(&doc, "xfs").unwrap();
        assert_eq!(m.per_unit[0].points.len(), 4);
        assert_eq!(m.points_fs.as_deref(), Some("ext4"));
        assert!(!m.note.contains("only the points"), "{}", m.note);
        let mut v = serde_json::to_value(&m).unwrap();
        v.as_object_mut().unwrap().remove("points_fs");
        let old: CostModel = serde_json::from_value(v).unwrap();
        assert_eq!(old.points_fs, None);
    }

    /// The space prediction records `ext4` or `btrfs` only; the configuration's mkfs
    /// command and mount options say inline data and max_inline.
    #[test]
    fn inline_data_and_max_inline_of_a_configuration_reach_the_rules() {
        use crate::fs::alloc::FsKind;
        let env = crate::model::Environment::default();
        let config = |fs: &str, mkfs: &str, opts: &str| crate::model::matrix::ConfigurationResult {
            fs_type: fs.into(),
            mkfs_command: Some(mkfs.into()),
            mount_options: opts.into(),
            ..Default::default()
        };
        let ext4 = FsRules::parse("ext4", None, None, None).unwrap();
        let c = config(
            "ext4",
            "mkfs.ext4 -F -q -b 4096 -O inline_data -I 512 DEVICE",
            "",
        );
        let r = configured(ext4, Some(&c), &env);
        assert_eq!((r.kind, r.inode_size), (FsKind::Ext4Inline, 512));
        assert_eq!(r.file(300, 6, 4096), FileAlloc::Resident);
        let c = config(
            "ext4",
            "mkfs.ext4 -O inline_data -O ^inline_data DEVICE",
            "",
        );
        assert_eq!(configured(ext4, Some(&c), &env).kind, FsKind::Ext4);
        let btrfs = FsRules::parse("btrfs", None, None, None).unwrap();
        let c = config("btrfs", "mkfs.btrfs -f DEVICE", "noatime,max_inline=0");
        assert_eq!(configured(btrfs, Some(&c), &env).max_inline, 0);
        assert_eq!(configured(btrfs, None, &env).max_inline, 2048);
        // A `files` result on btrfs: the environment's mount options.
        let env = crate::model::Environment {
            mount_options: "rw,max_inline=1K".into(),
            ..Default::default()
        };
        assert_eq!(configured(btrfs, None, &env).max_inline, 1024);
        // Through the fit: ext4 made with inline data keeps a 1-byte file at 0 bytes.
        let mut doc = ResultDoc::new("matrix", vec![], Default::default());
        let tests = [1u64, 4096, 4097]
            .iter()
            .map(|&size| {
                let mut t = files_test(size, 4096, 1000.0);
                t.params.remove("alloc_unit_bytes");
                t
            })
            .collect();
        doc.configurations
            .push(crate::model::matrix::ConfigurationResult {
                mount_method: Some("kernel ext4".into()),
                cluster_bytes: Some(4096),
                tests,
                ..config("ext4", "mkfs.ext4 -O inline_data DEVICE", "")
            });
        let measured = measurements(&doc);
        assert_eq!(measured[0].0.allocated, 0);
        assert!(measured[0].1 == Basis::Rules("ext4-inline".into()));
    }

    #[test]
    fn calibration_without_usable_tests_is_refused() {
        let mut doc = ResultDoc::new("files", vec![], Default::default());
        doc.tests.push(files_test(1, 4096, 1000.0));
        doc.tests.push(files_test(4096, 4096, 900.0));
        assert!(calibrate(&doc, Path::new("x.json"), &[4096], None).is_err());
        let run = ResultDoc::new("run", vec![], Default::default());
        assert!(calibrate(&run, Path::new("x.json"), &[4096], None).is_err());
    }

    #[test]
    fn defaults_reproduce_belovs_diagonal() {
        let m = defaults(&[65536, 1 << 21]);
        let c = &m.per_unit[0];
        let t = (c.per_file_s + 65536.0 * c.per_byte_s) * PORTION as f64;
        assert!((t - 3.370).abs() < 1e-9);
        assert!(m.per_unit[1].origin.contains("nearest"));
    }
}

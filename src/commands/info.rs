//! `iolab info` (what is under a path: mount, device chain, sysfs details, SMART) and
//! `iolab endurance` (SSD lifetime from TBW, daily writes and measured write amplification).
//! Validation and gathering here; the tables are in `report/info.rs`.

use std::path::Path;

use anyhow::Result;

use crate::analysis::endurance::{
    EnduranceInput, at_least_one, foreign_writes, measured_wa, report,
};
use crate::cli::info::{EnduranceArgs, InfoArgs};
use crate::error::UsageError;
use crate::model::ResultDoc;
use crate::model::layout::LayoutSummary;
use crate::sysinfo::{resolve, smart};

impl crate::cli::Execute for InfoArgs {
    fn execute(&self, _argv: Vec<String>) -> anyhow::Result<i32> {
        let args = self;
        let mut info = resolve::storage_info(args.target())?;
        info.smart = if args.no_smart {
            Vec::new()
        } else {
            smart::smart_for_chain(&info.devices)
        };
        if args.layout {
            info.layout = Some(layout_of(&info, args.layout_limit)?);
        }
        if args.json {
            crate::outln!("{}", serde_json::to_string_pretty(&info)?);
        } else {
            crate::out!("{}", crate::report::info::info_table(&info));
            if args.no_smart && info.no_device_reason.is_none() {
                crate::outln!("SMART: not read (--no-smart).");
            }
            if let Some(l) = &info.layout {
                crate::outln!(
                    "Layout of the files under {}:",
                    crate::os::text::terminal(&layout_root(&info).display().to_string())
                );
                for (k, v) in crate::report::age::layout_rows(l) {
                    crate::outln!("  {k}: {v}");
                }
            }
        }
        Ok(0)
    }
}

/// Where `--layout` reads files: the path, or the mount point of a device asked by name.
fn layout_root(info: &crate::model::device::StorageInfo) -> &Path {
    match &info.mount {
        Some(m) if info.kind == "device" => Path::new(&m.mount_point),
        _ => Path::new(&info.path),
    }
}

/// The layout of the files under the path and, where the file system's tool can tell, the
/// fragmentation of its free space.
fn layout_of(info: &crate::model::device::StorageInfo, limit: u64) -> Result<LayoutSummary> {
    let path = layout_root(info);
    let Some(m) = &info.mount else {
        return Err(UsageError(format!(
            "--layout: {} is not on a mounted file system",
            info.path
        ))
        .into());
    };
    let mut l = crate::fs::layout::scan(path, limit)
        .map_err(|e| UsageError(format!("--layout: cannot read {}: {e}", info.path)))?;
    match crate::fs::layout::free_space(
        &m.fs_type,
        Path::new(&m.source),
        Path::new(&m.mount_point),
        l.block_size_bytes,
    ) {
        Ok(f) => l.free_space = Some(f),
        Err(why) => l.free_space_note = Some(why),
    }
    Ok(l)
}

/// A size flag in SI units, strictly positive.
/// An endurance amount: SI like the data sheets (`80TB`, `80T` and `80 TB` are 80 * 10^12
/// bytes; `3.5PB`), binary only when spelled so (`80TiB`); a bare number has no unit to
/// trust (80 bytes of TBW is never meant) and is refused.
fn positive_size(flag: &str, v: &str) -> Result<u64, UsageError> {
    let example = if flag == "--tbw" { "80TB" } else { "20GB" };
    let t = v.trim();
    let digits = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let si = match unit.trim() {
        "" => {
            return Err(UsageError(format!(
                "{flag} {v}: give a unit (e.g. {flag} {example}; SI: kB, MB, GB, TB, PB)"
            )));
        }
        "k" | "K" => Some(1e3),
        "m" | "M" => Some(1e6),
        "g" | "G" => Some(1e9),
        "t" | "T" => Some(1e12),
        "p" | "P" | "PB" | "pb" => Some(1e15),
        _ => None,
    };
    let b = match si {
        Some(mult) => {
            let n: f64 = num
                .parse()
                .map_err(|_| UsageError(format!("{flag} {v}: not a size (e.g. {example})")))?;
            let b = n * mult;
            if !b.is_finite() || b >= u64::MAX as f64 {
                return Err(UsageError(format!("{flag} {v}: too large")));
            }
            b.round() as u64
        }
        // The shared parser's own message gives examples (4096, 4k, 1M) that are refused or
        // binary here, so the refusal names this flag's units instead.
        None => crate::units::parse_size(t).map_err(|e| match e {
            crate::units::UnitError::BadSize(_) => UsageError(format!(
                "{flag} {v}: not a size (e.g. {flag} {example}; SI: kB, MB, GB, TB, PB; binary: GiB, TiB)"
            )),
            e => UsageError(format!("{flag} {v}: {e}")),
        })?,
    };
    if b == 0 {
        return Err(UsageError(format!(
            "{flag} {v}: must be more than zero (e.g. {flag} {example})"
        )));
    }
    Ok(b)
}

/// `--device /nonexist` said "/nonexist: no such file, directory or block device" without
/// naming the flag; worded as the other commands' missing targets (`--target X: does not
/// exist`).
fn device_here(device: &str) -> Result<(), UsageError> {
    std::fs::metadata(device).map(|_| ()).map_err(|e| {
        UsageError(format!(
            "--device {device}: {}",
            crate::fs::facts::io_why(&e)
        ))
    })
}

/// SMART's percentage used for `--device`: `(percent, source)`, or a note saying why not.
fn smart_used(device: &str) -> Result<std::result::Result<(f64, String), String>, UsageError> {
    let info = resolve::storage_info(device)?;
    if info.devices.is_empty() {
        return Err(UsageError(format!(
            "--device {device}: {}",
            info.no_device_reason
                .unwrap_or_else(|| "no block device".into())
        )));
    }
    let reports = smart::smart_for_chain(&info.devices);
    if let Some(s) = reports.iter().find(|s| s.percentage_used.is_some()) {
        let pct = s.percentage_used.unwrap_or(0) as f64;
        return Ok(Ok((pct, format!("SMART of {}", s.device))));
    }
    let why: Vec<String> = reports
        .iter()
        .map(|s| match &s.reason {
            Some(r) => format!("{}: {r}", s.device),
            None => format!("{}: SMART reports no percentage used", s.device),
        })
        .collect();
    Ok(Err(format!(
        "SMART percentage used not available ({}); assuming 0 % used (give --used PERCENT)",
        why.join("; ")
    )))
}

impl crate::cli::Execute for EnduranceArgs {
    fn execute(&self, _argv: Vec<String>) -> anyhow::Result<i32> {
        let args = self;
        // Everything is checked before anything is read from a device.
        let tbw = positive_size("--tbw", &args.tbw)?;
        let daily = positive_size("--daily", &args.daily)?;
        if let Some(wa) = args.wa
            && !(wa.is_finite() && wa > 0.0)
        {
            return Err(crate::usage!(
                "--wa {wa}: write amplification must be a number above 0 (1.0 = none)"
            ));
        }
        if let Some(u) = args.used
            && !(0.0..=100.0).contains(&u)
        {
            return Err(crate::usage!(
                "--used {u}: must be a percentage from 0 to 100"
            ));
        }
        let mut notes = Vec::new();
        // The device a --from result ran on, when it ran on this machine: its SMART may tell
        // how much of the endurance is used.
        let mut from_device = None;
        let (wa, wa_source, per_test) = match (&args.from, args.wa) {
            (Some(path), _) => {
                // A directory said "cannot read: Is a directory (os error 21)".
                if path.is_dir() {
                    return Err(crate::usage!(
                        "--from {}: is a directory; give one result file (RESULT.json) of a write test",
                        path.display()
                    ));
                }
                let doc = ResultDoc::read(path)?;
                let here = crate::sysinfo::capture_hostname();
                if !doc.environment.hostname.is_empty() && doc.environment.hostname == here {
                    from_device = doc.environment.block_device.clone();
                }
                let (wa, mut per_test) = measured_wa(&doc, args.test.as_deref())
                    .ok_or_else(|| no_wa_error(path, args.test.as_deref(), &doc))?;
                let (wa, floored) = at_least_one(wa, &mut per_test);
                notes.extend(floored);
                let foreign = foreign_writes(&doc, args.test.as_deref());
                if !foreign.is_empty() {
                    let clean: Vec<&str> = per_test
                        .iter()
                        .map(|(name, _)| name.as_str())
                        .filter(|n| !foreign.iter().any(|f| f == n))
                        .collect();
                    let advice = if clean.is_empty() {
                        "measure again on an otherwise idle device".to_string()
                    } else {
                        format!(
                            "measure again on an otherwise idle device, or take a test without them with --test ({})",
                            clean.join(", ")
                        )
                    };
                    notes.push(format!(
                        "the device wrote far more than the test during {} (the result's device-extra-io warning): other programs' writes, or the file system's own, are in this write amplification, so the lifetime may be too short; {advice}",
                        foreign.join(", ")
                    ));
                }
                (wa, path.display().to_string(), per_test)
            }
            (None, Some(wa)) => (wa, "--wa".to_string(), Vec::new()),
            (None, None) => (1.0, "assumed".to_string(), Vec::new()),
        };
        let (used_pct, used_source) = match (&args.used, &args.device) {
            (Some(u), _) => (*u, "--used".to_string()),
            (None, Some(dev)) => match device_here(dev).and_then(|_| smart_used(dev))? {
                Ok((p, src)) => (p, src),
                Err(note) => {
                    notes.push(note);
                    (0.0, "none".to_string())
                }
            },
            (None, None) => match from_device.as_deref().map(smart_used) {
                Some(Ok(Ok((p, src)))) => (p, src),
                Some(Ok(Err(note))) => {
                    notes.push(note);
                    (0.0, "none".to_string())
                }
                // The device the result ran on is gone (a loop detached, a disk removed):
                // "0 % (none)" with nothing said looked like SMART had reported no wear.
                Some(Err(e)) => {
                    notes.push(format!(
                        "SMART percentage used not read: the result's device {} is not here now ({e}); assuming 0 % used (give --used PERCENT)",
                        from_device.as_deref().unwrap_or_default()
                    ));
                    (0.0, "none".to_string())
                }
                None => (0.0, "none".to_string()),
            },
        };
        if wa_source == "assumed" {
            notes.push(
                "write amplification assumed 1.0: measure a workload with iolab and pass --from RESULT.json (journals, small files and copy-on-write raise it)"
                    .into(),
            );
        }
        let input = EnduranceInput {
            tbw_bytes: tbw,
            daily_app_bytes: daily,
            write_amplification: wa,
            used_pct,
        };
        let today = chrono::Local::now().date_naive();
        let mut rep = report(&input, &wa_source, &used_source, Some(today));
        rep.per_test = per_test;
        rep.notes = notes;
        if args.json {
            crate::outln!("{}", serde_json::to_string_pretty(&rep)?);
        } else {
            crate::out!("{}", crate::report::info::endurance_table(&rep));
        }
        Ok(0)
    }
}

fn no_wa_error(path: &Path, test: Option<&str>, doc: &ResultDoc) -> anyhow::Error {
    match test {
        // Which tests --test could name: a misspelt name was told "no such test, or ...".
        Some(t) => crate::usage!(
            "{}: test \"{t}\" has no measured write amplification (no such test, or it wrote nothing to a block device); {}",
            path.display(),
            match measured_wa(doc, None) {
                Some((_, per_test)) => format!(
                    "tests with one: {}",
                    per_test
                        .iter()
                        .map(|(name, _)| name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None => "no test in it has one".to_string(),
            }
        ),
        // A saturate result has device counters per step but no runs: "it needs a write
        // test with device counters" was false of its randwrite sweep.
        // A slack result was told it needed "a write test with device counters" and that
        // tmpfs has none: it measures nothing at all.
        None if matches!(doc.command.as_str(), "saturate" | "slack") => crate::usage!(
            "{}: an iolab {} result records no write amplification ({}); pass a write test's result of iolab run, files, copy, trace or sustain, or give --wa",
            path.display(),
            doc.command,
            if doc.command == "slack" {
                "it predicts allocation from file sizes and writes nothing"
            } else {
                "its sweeps measure latency under load"
            }
        ),
        None => crate::usage!(
            "{}: no run in it measured write amplification (it needs a write test with device counters; tmpfs and network targets have none)",
            path.display()
        ),
    }
}

//! What the history indexes from a result document: the device's identity, every test's
//! figures (the same tests and metrics `iolab compare` matches), a one-line headline and
//! the key that makes recording the same run twice a no-op.

use crate::model::{Environment, ResultDoc};
use crate::report::metrics::{
    all_tests, config_of, display_name, fmt_value, label, metrics_of, primary_metric, table_figure,
    test_name,
};

use super::Figure;

/// The device a result was measured on, as one string (stored in `results.device`; the
/// re-index of `store::EXTRACT_VERSION` recomputes it from every stored document, so a new
/// form must give a document without the new facts the string it had, or one drive's
/// history splits in two): `MODEL (serial S)`, `MODEL (WWN W)`
/// (the same disk on any host, under any kernel name), else `MODEL (sda on HOST)` or
/// `sda on HOST` (the whole disk, not the partition; the host, because `vda` on two
/// machines is two disks), else `FSTYPE at MOUNT on HOST` (a tmpfs, an overlay) or the target
/// path on the host.
///
/// A loop device is its backing file, `FILE (loop, inode I, SIZE) on HOST` (`loop3` is another
/// image tomorrow). A disk without a model (virtio) is described by what sysfs does give,
/// `virtio 256.0 GiB (serial S on HOST)`: such a serial is set by the hypervisor (one template's
/// for many VMs), so the host goes with it; without a serial, the `/dev/disk` link (`by-path/…`)
/// or the kernel name.
pub fn device_identity(env: &Environment) -> String {
    let model = env
        .device_model
        .as_deref()
        .map(str::trim)
        .filter(|m| !m.is_empty());
    let on = if env.hostname.is_empty() {
        String::new()
    } else {
        format!(" on {}", env.hostname)
    };
    if let Some(file) = env.loop_backing_file.as_deref().filter(|f| !f.is_empty()) {
        let file = file.trim_end_matches(" (deleted)");
        let mut what = vec!["loop".to_string()];
        if let Some(i) = env.loop_backing_inode {
            what.push(format!("inode {i}"));
        }
        if let Some(b) = env.loop_backing_size_bytes {
            what.push(crate::units::fmt_size_iec(b));
        }
        return format!("{file} ({}){on}", what.join(", "));
    }
    // Without a model: vendor and size, where the document has them (older ones do not,
    // and keep the identity they were recorded with).
    let described = model.is_none().then(|| no_model_description(env)).flatten();
    let with_model = |tail: String| match model.map(str::to_string).or(described.clone()) {
        Some(m) => format!("{m} ({tail})"),
        None => tail,
    };
    if let Some(s) = env.device_serial.as_deref().filter(|s| !s.is_empty()) {
        return match &described {
            Some(_) => with_model(format!("serial {s}{on}")),
            None => with_model(format!("serial {s}")),
        };
    }
    if let Some(w) = env.device_wwn.as_deref().filter(|s| !s.is_empty()) {
        return with_model(format!("WWN {w}"));
    }
    if let Some(d) = env.parent_device.as_deref().or(env.block_device.as_deref()) {
        let name = match (&described, env.device_link.as_deref()) {
            (Some(_), Some(link)) => link,
            _ => d,
        };
        return with_model(format!("{name}{on}"));
    }
    if !env.fs_type.is_empty() && !env.mount_point.is_empty() {
        return format!("{} at {}{on}", env.fs_type, env.mount_point);
    }
    if env.target_path.is_empty() {
        format!("unknown{on}")
    } else {
        format!("{}{on}", env.target_path)
    }
}

/// A disk without a model as sysfs describes it: its vendor (`0x1af4`, virtio's PCI
/// vendor, as `virtio`) and size, `virtio 256.0 GiB`; `None` without a size (a document
/// from before these were recorded).
fn no_model_description(env: &Environment) -> Option<String> {
    let size = crate::units::fmt_size_iec(env.device_size_bytes.filter(|&b| b > 0)?);
    Some(
        match env
            .device_vendor
            .as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty())
        {
            Some("0x1af4") => format!("virtio {size}"),
            Some(v) => format!("{v} {size}"),
            None => size,
        },
    )
}

/// The options that tell two runs of one command apart in the list, as typed:
/// `--preset real --size 1G`, `--scale 2`; `None` when the command line has none.
pub fn options_of(argv: &[String]) -> Option<String> {
    const SHOWN: [&str; 3] = ["--preset", "--size", "--scale"];
    let mut out: Vec<String> = Vec::new();
    let mut args = argv.iter().skip(1);
    while let Some(a) = args.next() {
        if a == "--" {
            break;
        }
        if let Some((flag, value)) = a.split_once('=')
            && SHOWN.contains(&flag)
        {
            out.push(format!("{flag} {value}"));
        } else if SHOWN.contains(&a.as_str())
            && let Some(v) = args.next()
        {
            out.push(format!("{a} {v}"));
        }
    }
    (!out.is_empty()).then(|| out.join(" "))
}

/// Every metric of every test (top level and inside matrix configurations), each with the
/// figure its command's table gives (`table_figure`, as the HTML and Markdown reports).
pub fn figures_of(doc: &ResultDoc) -> Vec<Figure> {
    let mut out: Vec<Figure> = Vec::new();
    for t in all_tests(doc) {
        let name = display_name(config_of(doc, t).as_deref(), &test_name(doc, t));
        let primary = primary_metric(t);
        for (metric, s) in metrics_of(t) {
            if !s.mean.is_finite() || out.iter().any(|f| f.test == name && f.metric == metric) {
                continue;
            }
            let (value, value_of) = table_figure(t, &metric, &s);
            out.push(Figure {
                test: name.clone(),
                primary: primary.as_deref() == Some(metric.as_str()),
                metric,
                n: s.n,
                value,
                value_of: value_of.to_string(),
                mean: s.mean,
                median: s.median,
                stddev: s.stddev,
                ci95_low: s.ci95_low,
                ci95_high: s.ci95_high,
            });
        }
    }
    out
}

/// The first tests' headline figures: `SEQ1M Q8T1 read 1234.56 MB/s · RND4K Q1T1 read
/// 12,345 IOPS · (+6 tests)`, each the figure the command's own table shows (`Figure::value`:
/// the median of the runs, a files test's mean, a peak test's best run); for a document
/// without figures, what it holds.
pub fn headline(doc: &ResultDoc, figures: &[Figure]) -> String {
    const SHOWN: usize = 3;
    let primaries: Vec<&Figure> = figures.iter().filter(|f| f.primary).collect();
    // A trace's operations are not I/Os: `ops/s`, as its own output says.
    let trace = doc.command == "trace"
        || crate::report::metrics::all_tests(doc)
            .iter()
            .any(|t| t.family == "trace");
    let mut parts: Vec<String> = primaries
        .iter()
        .take(SHOWN)
        .map(|f| {
            format!(
                "{} {} {}",
                f.test,
                fmt_value(&f.metric, f.value),
                if trace {
                    crate::report::metrics::label_for("trace", &f.metric)
                } else {
                    label(&f.metric)
                }
            )
        })
        .collect();
    if primaries.len() > SHOWN {
        let more = primaries.len() - SHOWN;
        parts.push(format!(
            "(+{more} test{})",
            if more == 1 { "" } else { "s" }
        ));
    }
    if parts.is_empty() {
        // A slack analysis has no metric: which tree (or size list) it scanned, what it
        // held and which units it recommends,
        // as the lines under its table say it.
        if let Some(r) = &doc.slack {
            use crate::units::{fmt_size_exact, fmt_size_iec};
            let best: Vec<String> = r
                .recommendations
                .iter()
                .map(|rec| format!("{} {}", rec.goal, fmt_size_exact(rec.unit_bytes)))
                .collect();
            // Where: two trees on one disk are two lines with the same device.
            let of = if r.path.is_empty() {
                String::new()
            } else {
                format!(" of {}", r.path)
            };
            let files = format!(
                "slack{of} ({} rules): {} files, {}",
                r.fs,
                crate::units::fmt_thousands(r.scan.files as f64),
                fmt_size_iec(r.scan.data_bytes)
            );
            return if best.is_empty() {
                files
            } else {
                format!("{files}; best for {}", best.join(", "))
            };
        }
        // An aging run has no metric: what it made, as its own table's first line says it.
        if let Some(a) = doc.tests.iter().find_map(|t| t.age.as_ref()) {
            return format!(
                "aged ({}): {}, layout score {}",
                a.profile,
                a.fullness_text(),
                crate::model::layout::fmt_score(a.layout_after.layout_score)
            );
        }
        return match doc.error.as_deref() {
            Some(e) => format!("no figures ({})", first_line(e, 80)),
            None => "no figures".into(),
        };
    }
    parts.join(" · ")
}

fn first_line(s: &str, max: usize) -> String {
    let l = s.lines().next().unwrap_or("");
    if l.chars().count() > max {
        let cut: String = l.chars().take(max).collect();
        format!("{cut}…")
    } else {
        l.to_string()
    }
}

/// What makes a run the same run: its start (ms), host, command, argv, target and device
/// (serial, WWN, kernel name). A
/// document recorded by the command and later imported from its result file has the same
/// key; a document with a changed figure but the same start is the same run too.
pub fn run_key(doc: &ResultDoc) -> String {
    let mut h = blake3::Hasher::new();
    let env = &doc.environment;
    // The raw fields, not the display form of `device_identity`: the key must not change
    // when the way a device is shown does.
    for part in [
        doc.started_at.as_str(),
        env.hostname.as_str(),
        doc.command.as_str(),
        env.target_path.as_str(),
        env.device_serial.as_deref().unwrap_or(""),
        env.device_wwn.as_deref().unwrap_or(""),
        env.block_device.as_deref().unwrap_or(""),
    ] {
        h.update(part.as_bytes());
        h.update(&[0]);
    }
    for a in &doc.argv {
        h.update(a.as_bytes());
        h.update(&[1]);
    }
    h.finalize().to_hex().to_string()
}

/// `started_at` as stored: RFC 3339 UTC with milliseconds (so text order is time order);
/// left as it is when it does not parse.
pub fn normalize_time(t: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(t) {
        Ok(d) => d
            .with_timezone(&chrono::Utc)
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        Err(_) => t.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_prefers_serial_then_wwn_then_the_disk() {
        let mut e = Environment {
            device_model: Some("Samsung SSD 970".into()),
            block_device: Some("nvme0n1p2".into()),
            parent_device: Some("nvme0n1".into()),
            device_serial: Some("S4EW".into()),
            device_wwn: Some("eui.0025".into()),
            ..Default::default()
        };
        assert_eq!(device_identity(&e), "Samsung SSD 970 (serial S4EW)");
        e.device_serial = None;
        assert_eq!(device_identity(&e), "Samsung SSD 970 (WWN eui.0025)");
        e.device_wwn = None;
        assert_eq!(device_identity(&e), "Samsung SSD 970 (nvme0n1)");
        e.hostname = "lab1".into();
        assert_eq!(device_identity(&e), "Samsung SSD 970 (nvme0n1 on lab1)");
        e.device_model = None;
        assert_eq!(device_identity(&e), "nvme0n1 on lab1");
        let t = Environment {
            hostname: "lab1".into(),
            fs_type: "tmpfs".into(),
            mount_point: "/dev/shm".into(),
            ..Default::default()
        };
        assert_eq!(device_identity(&t), "tmpfs at /dev/shm on lab1");
    }

    #[test]
    fn a_disk_without_a_model_is_told_apart_by_size_vendor_link_and_host() {
        // A virtio disk: serial set by the hypervisor, no model.
        let mut e = Environment {
            hostname: "vm1".into(),
            block_device: Some("vda".into()),
            device_serial: Some("overlayblk".into()),
            ..Default::default()
        };
        // Recorded before size and vendor were: the identity it had.
        assert_eq!(device_identity(&e), "serial overlayblk");
        e.device_size_bytes = Some(256 << 30);
        e.device_vendor = Some("0x1af4".into());
        assert_eq!(
            device_identity(&e),
            "virtio 256.0 GiB (serial overlayblk on vm1)"
        );
        e.device_serial = None;
        assert_eq!(device_identity(&e), "virtio 256.0 GiB (vda on vm1)");
        e.device_link = Some("by-path/pci-0000:00:05.0".into());
        assert_eq!(
            device_identity(&e),
            "virtio 256.0 GiB (by-path/pci-0000:00:05.0 on vm1)"
        );
        // A disk with a model keeps its identity.
        e.device_model = Some("ACME SSD".into());
        e.device_serial = Some("S1".into());
        assert_eq!(device_identity(&e), "ACME SSD (serial S1)");
    }

    #[test]
    fn a_loop_device_is_its_backing_file() {
        let mut e = Environment {
            hostname: "vm1".into(),
            block_device: Some("loop3".into()),
            loop_backing_file: Some("/img/a.img (deleted)".into()),
            ..Default::default()
        };
        assert_eq!(device_identity(&e), "/img/a.img (loop) on vm1");
        e.loop_backing_inode = Some(12);
        e.loop_backing_size_bytes = Some(1 << 30);
        assert_eq!(
            device_identity(&e),
            "/img/a.img (loop, inode 12, 1.0 GiB) on vm1"
        );
    }

    #[test]
    fn the_options_that_tell_runs_apart() {
        let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            options_of(&argv(&[
                "iolab",
                "run",
                "--preset",
                "real",
                "-t",
                "/x",
                "--size=1G"
            ]))
            .as_deref(),
            Some("--preset real --size 1G")
        );
        assert_eq!(
            options_of(&argv(&["iolab", "copy", "--scale", "2"])).as_deref(),
            Some("--scale 2")
        );
        assert_eq!(options_of(&argv(&["iolab", "run", "-t", "/x"])), None);
    }

    #[test]
    fn times_are_stored_in_utc_with_milliseconds() {
        assert_eq!(
            normalize_time("2026-01-31T13:00:00+01:00"),
            "2026-01-31T12:00:00.000Z"
        );
        assert_eq!(normalize_time("garbage"), "garbage");
    }
}

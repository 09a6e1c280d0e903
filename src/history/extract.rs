//! What the history indexes from a result document: the device's identity, every test's
//! figures (the same tests and metrics `iolab compare` matches), a one-line headline and
//! the key that makes recording the same run twice a no-op.

use crate::model::{Environment, ResultDoc};
use crate::report::metrics::{
    all_tests, config_of, display_name, fmt_value, label, metrics_of, primary_metric,
};

use super::Figure;

/// The device a result was measured on, as one string (stored in `results.device`: a new
/// form needs a migration that recomputes the column from the documents, or one drive's
/// history splits in two): `MODEL (serial S)`, `MODEL (WWN W)`
/// (the same disk on any host, under any kernel name), else `MODEL (sda on HOST)` or
/// `sda on HOST` (the whole disk, not the partition; the host, because `vda` on two
/// machines is two disks), else `FSTYPE at MOUNT on HOST` (a tmpfs, an overlay) or the target
/// path on the host.
pub fn device_identity(env: &Environment) -> String {
    let model = env
        .device_model
        .as_deref()
        .map(str::trim)
        .filter(|m| !m.is_empty());
    let with_model = |tail: String| match model {
        Some(m) => format!("{m} ({tail})"),
        None => tail,
    };
    if let Some(s) = env.device_serial.as_deref().filter(|s| !s.is_empty()) {
        return with_model(format!("serial {s}"));
    }
    if let Some(w) = env.device_wwn.as_deref().filter(|s| !s.is_empty()) {
        return with_model(format!("WWN {w}"));
    }
    let on = if env.hostname.is_empty() {
        String::new()
    } else {
        format!(" on {}", env.hostname)
    };
    if let Some(d) = env.parent_device.as_deref().or(env.block_device.as_deref()) {
        return with_model(format!("{d}{on}"));
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

/// Every metric of every test (top level and inside matrix configurations).
pub fn figures_of(doc: &ResultDoc) -> Vec<Figure> {
    let mut out: Vec<Figure> = Vec::new();
    for t in all_tests(doc) {
        let name = display_name(config_of(doc, t).as_deref(), &t.name);
        let primary = primary_metric(t);
        for (metric, s) in metrics_of(t) {
            if !s.mean.is_finite() || out.iter().any(|f| f.test == name && f.metric == metric) {
                continue;
            }
            out.push(Figure {
                test: name.clone(),
                primary: primary.as_deref() == Some(metric.as_str()),
                metric,
                n: s.n,
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
/// 12,345 IOPS · (+6 tests)`, each the median of the runs as the command's own table shows
/// it; for a document without figures, what it holds.
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
                fmt_value(&f.metric, f.median),
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
    fn times_are_stored_in_utc_with_milliseconds() {
        assert_eq!(
            normalize_time("2026-01-31T13:00:00+01:00"),
            "2026-01-31T12:00:00.000Z"
        );
        assert_eq!(normalize_time("garbage"), "garbage");
    }
}

//! What the history indexes from a result document: the device's identity, every test's
//! figures (the same tests and metrics `iolab compare` matches), a one-line headline and
//! the key that makes recording the same run twice a no-op.

use crate::model::{Environment, ResultDoc};
use crate::report::metrics::{
    all_tests, config_of, display_name, fmt_value, label_for, metrics_of, primary_metric,
    table_figure, test_name,
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

/// Flags that do not change what is measured, left out of [`options_of`]: where (the
/// target, `--allow-destroy`, the matrix's `--image-dir` and `--device`: the device column
/// says where), what is kept afterwards (`--keep`), permissions and checks that only refuse
/// (`--allow-shared`, `--no-room-check`), and where the output goes (`--output`, `--json`,
/// `--no-save`, `--quiet`, the history flags, the console's `--progress-json`). Every other
/// flag is shown: a list of what does not change the figures is short and fails safe, as a
/// new flag is shown until it is added here (a list of what does change them would hide a
/// new one). The tests below check each name against the command line's definitions.
pub const NOT_MEASURED: &[&str] = &[
    "-t",
    "--target",
    "--allow-destroy",
    "--image-dir",
    "--device",
    "--keep",
    "--keep-files",
    "--keep-image",
    "--allow-shared",
    "--no-room-check",
    "-o",
    "--output",
    "--json",
    "--no-save",
    "-q",
    "--quiet",
    "--history",
    "--no-history",
    "--progress-json",
];

/// The flags of each measuring command (`trace run`, `trace replay`: its subcommand) that
/// take no value (clap's switches), so that a word after one is the target, not its value
/// (`run --mix /mnt`; `saturate --mix 70` takes one). The output flags every command has
/// ([`COMMON_SWITCHES`]) are not repeated. Checked against the command line's definitions
/// by the tests below.
pub const SWITCHES: &[(&str, &[&str])] = &[
    ("run", &["--precondition", "--mix", "--verify", "--keep"]),
    (
        "saturate",
        &["--precondition", "--allow-buffered", "--keep"],
    ),
    ("sustain", &[]),
    (
        "files",
        &[
            "--shared-dir",
            "--nice",
            "--drop-caches",
            "--keep",
            "--keep-files",
            "--no-room-check",
        ],
    ),
    ("copy", &["--preserve", "--verify", "--ceiling"]),
    ("trace run", &[]),
    ("trace replay", &["--keep"]),
    (
        "matrix",
        &["--full", "--keep", "--keep-image", "--setup-only"],
    ),
    ("slack", &["-x", "--one-file-system"]),
    ("age", &["--allow-shared", "--list-profiles"]),
];

/// The switches of every measuring command (its output and history flags) and of the
/// command line before the subcommand.
pub const COMMON_SWITCHES: &[&str] = &["--no-save", "--json", "-q", "--quiet", "--no-history"];

/// The words before the options that name what is measured, after the subcommand: a
/// trace's name or file (`trace run oltp`, `trace replay app.toml`); any word after them
/// is the target.
pub const WORKLOAD_WORDS: &[(&str, usize)] = &[("trace run", 1), ("trace replay", 1)];

/// The options that tell two runs of one command apart, in the order typed: every flag the
/// command line gave but those that do not change what is measured ([`NOT_MEASURED`]),
/// `--size=1G` as `--size 1G`, a value with a space in quotes; a trace's subcommand and
/// name first (`run oltp --scale 2`). The target (a flag or a word) is left out. `None`
/// when nothing is left: `run --preset real --rw randwrite --bs 4K --engine sync`.
pub fn options_of(argv: &[String]) -> Option<String> {
    let mut out: Vec<String> = Vec::new();
    let mut args = argv.iter().skip(1);
    // The command (and a trace's subcommand), after the flags before it (`--history=DB`,
    // the console's `--progress-json FILE`).
    let mut path: Vec<&str> = Vec::new();
    let mut words = 0;
    let mut switches: &[&str] = &[];
    // A flag and its value, kept unless it does not change the measurement.
    let mut keep = |flag: &str, value: Option<String>| {
        if !NOT_MEASURED.contains(&flag) {
            out.push(match value {
                Some(v) => format!("{flag} {}", quoted(&v)),
                None => flag.to_string(),
            });
        }
    };
    while let Some(a) = args.next() {
        if a == "--" {
            break;
        }
        let is_switch = |f: &str| COMMON_SWITCHES.contains(&f) || switches.contains(&f);
        if a.starts_with("--") {
            let (flag, value) = match a.split_once('=') {
                Some((f, v)) => (f, Some(v.to_string())),
                None if is_switch(a) => (a.as_str(), None),
                None => (a.as_str(), args.next().cloned()),
            };
            keep(flag, value);
        } else if a.len() > 1 && a.starts_with('-') {
            // Short flags, together as clap takes them (`-qx`, `-dmedia`, `-t /x`).
            for (i, c) in a.char_indices().skip(1) {
                let flag = format!("-{c}");
                if is_switch(&flag) {
                    keep(&flag, None);
                    continue;
                }
                let rest = &a[i + c.len_utf8()..];
                let value = match rest {
                    "" => args.next().cloned(),
                    _ => Some(rest.strip_prefix('=').unwrap_or(rest).to_string()),
                };
                keep(&flag, value);
                break;
            }
        } else if path.is_empty() || path == ["trace"] {
            path.push(a);
            let name = path.join(" ");
            if let Some((_, s)) = SWITCHES.iter().find(|(c, _)| *c == name) {
                switches = s;
            }
            words = WORKLOAD_WORDS
                .iter()
                .find(|(c, _)| *c == name)
                .map_or(0, |(_, n)| *n);
            if path.len() == 2 {
                keep(a, None);
            }
        } else if words > 0 {
            words -= 1;
            keep(&quoted(a), None);
        }
        // Any other word is the target.
    }
    (!out.is_empty()).then(|| out.join(" "))
}

/// A value as a shell would take it back: in single quotes when empty or with a space.
fn quoted(v: &str) -> String {
    if v.is_empty() || v.contains(char::is_whitespace) {
        format!("'{v}'")
    } else {
        v.to_string()
    }
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
    // A trace's operations are not I/Os: `ops/s`, as its own output says; a sustain pass's
    // MB/s is its `average MB/s`, as its report says (the label of the command's family).
    let family = if crate::report::metrics::all_tests(doc)
        .iter()
        .any(|t| t.family == "trace")
    {
        "trace"
    } else {
        doc.command.as_str()
    };
    let mut parts: Vec<String> = primaries
        .iter()
        .take(SHOWN)
        .map(|f| {
            format!(
                "{} {} {}",
                f.test,
                fmt_value(&f.metric, f.value),
                label_for(family, &f.metric)
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

    /// Every option that changes the measurement, in the order typed (only `--preset`,
    /// `--size` and `--scale` were shown: two runs with another `--rw`, `--engine` or
    /// `--sizes` read alike); the target, output and history flags left out.
    #[test]
    fn every_option_that_changes_the_measurement_is_shown_in_order() {
        let argv = |a: &str| a.split(' ').map(str::to_string).collect::<Vec<_>>();
        for (typed, shown) in [
            (
                "iolab run --preset default --size 16M --rw randwrite --bs 4K --iodepth 4 --duration=300ms --repeat 1 /dev/shm/x",
                Some(
                    "--preset default --size 16M --rw randwrite --bs 4K --iodepth 4 --duration 300ms --repeat 1",
                ),
            ),
            (
                "iolab --history=/tmp/h.sqlite run --engine sync --direct false -o out --json -q --no-save --history /h --no-history /dev/shm/x",
                Some("--engine sync --direct false"),
            ),
            (
                "iolab files --sizes 1K,4K /dev/shm/x",
                Some("--sizes 1K,4K"),
            ),
            ("iolab files -t /x --keep --no-room-check -q", None),
            // A word after a switch is the target, not its value; saturate's --mix takes one.
            ("iolab run --mix /mnt/ssd", Some("--mix")),
            ("iolab saturate --mix 70 /mnt/ssd", Some("--mix 70")),
            // The console's command line: its progress stream, history and result directory.
            (
                "iolab --progress-json /tmp/p.jsonl --history=/h run --target=/d --rw=read --output=/o --allow-destroy=/d",
                Some("--rw read"),
            ),
            // Short flags as clap takes them: -d is copy's data set, -x slack's switch.
            (
                "iolab copy -dmedia-mix -qt /x --scale 2",
                Some("-d media-mix --scale 2"),
            ),
            ("iolab slack -x /home", Some("-x")),
            // A trace's subcommand and name; its target word left out.
            (
                "iolab trace run oltp /mnt --scale 2",
                Some("run oltp --scale 2"),
            ),
            (
                "iolab trace replay -t /mnt app.toml",
                Some("replay app.toml"),
            ),
            // After `--`, only the target.
            ("iolab run --bs 8K -- -odd", Some("--bs 8K")),
        ] {
            assert_eq!(options_of(&argv(typed)).as_deref(), shown, "{typed}");
        }
        // The matrix's images and device are where; a value with a space is quoted.
        assert_eq!(
            options_of(&[
                "iolab".into(),
                "matrix".into(),
                "--fs".into(),
                "ext4,xfs".into(),
                "--image-dir".into(),
                "/var/tmp".into(),
                "--mkfs-opts".into(),
                "ext4:-O ^has_journal".into(),
                "--workload".into(),
                "files:sizes=1,4K".into(),
            ])
            .as_deref(),
            Some("--fs ext4,xfs --mkfs-opts 'ext4:-O ^has_journal' --workload files:sizes=1,4K")
        );
    }

    /// `SWITCHES`, `COMMON_SWITCHES`, `NOT_MEASURED` and `WORKLOAD_WORDS` are what
    /// the command line's definitions say: a new switch of a measuring command must be listed
    /// (or the word after it would be read as its value), and a name in the list of flags that
    /// do not change the measurement must be a flag.
    #[test]
    fn the_option_lists_match_the_command_line() {
        use clap::CommandFactory;
        use std::collections::BTreeSet;
        let cli = crate::cli::Cli::command();
        let names = |a: &clap::Arg| -> Vec<String> {
            let mut n: Vec<String> = a.get_short().map(|c| format!("-{c}")).into_iter().collect();
            n.extend(a.get_long().map(|l| format!("--{l}")));
            n.extend(
                a.get_all_aliases()
                    .unwrap_or_default()
                    .iter()
                    .map(|l| format!("--{l}")),
            );
            n
        };
        let mut paths: Vec<String> = Vec::new();
        for c in crate::cli::MEASURING_COMMANDS {
            if *c == "trace" {
                paths.extend(["trace run".to_string(), "trace replay".to_string()]);
            } else {
                paths.push(c.to_string());
            }
        }
        let listed: Vec<&str> = SWITCHES.iter().map(|(c, _)| *c).collect();
        assert_eq!(listed, paths, "SWITCHES lists every measuring command");
        let mut every_flag: BTreeSet<String> = cli.get_arguments().flat_map(names).collect();
        for path in &paths {
            let mut cmd = &cli;
            for w in path.split(' ') {
                cmd = cmd.find_subcommand(w).expect("a subcommand");
            }
            let flags: Vec<&clap::Arg> = cmd
                .get_arguments()
                .filter(|a| !a.is_positional())
                .filter(|a| {
                    !matches!(
                        a.get_action(),
                        clap::ArgAction::Help | clap::ArgAction::Version
                    )
                })
                .collect();
            every_flag.extend(flags.iter().flat_map(|a| names(a)));
            let switches: BTreeSet<String> = flags
                .iter()
                .filter(|a| !a.get_action().takes_values())
                .flat_map(|a| names(a))
                .filter(|n| !COMMON_SWITCHES.contains(&n.as_str()))
                .collect();
            let own = SWITCHES.iter().find(|(c, _)| c == path).unwrap().1;
            let own: BTreeSet<String> = own.iter().map(|s| s.to_string()).collect();
            assert_eq!(switches, own, "the switches of `iolab {path}` (SWITCHES)");
            for a in flags.iter().filter(|a| a.get_action().takes_values()) {
                for n in names(a) {
                    assert!(
                        !COMMON_SWITCHES.contains(&n.as_str()),
                        "{n} of `iolab {path}` takes a value: not in COMMON_SWITCHES"
                    );
                }
            }
            // The words: a workload's (a trace's name) first, then the target.
            let words: Vec<&str> = cmd
                .get_arguments()
                .filter(|a| a.is_positional())
                .map(|a| a.get_id().as_str())
                .collect();
            let workload = WORKLOAD_WORDS
                .iter()
                .find(|(c, _)| c == path)
                .map_or(0, |(_, n)| *n);
            assert!(
                words[..workload]
                    .iter()
                    .all(|w| !["target_pos", "dir"].contains(w))
                    && words[workload..]
                        .iter()
                        .all(|w| ["target_pos", "dir"].contains(w)),
                "the words of `iolab {path}` ({words:?}): {workload} of the workload (WORKLOAD_WORDS), then the target"
            );
        }
        for n in NOT_MEASURED.iter().chain(COMMON_SWITCHES) {
            assert!(
                every_flag.contains(*n),
                "{n} (NOT_MEASURED / COMMON_SWITCHES) is no flag of a measuring command"
            );
        }
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

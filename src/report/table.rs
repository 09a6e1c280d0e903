//! The terminal table of block tests (CrystalDiskMark's layout plus latency and spread), the
//! warning lines under every command's tables, and the style all of those tables share.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table};

use crate::model::{
    DirectionStats, LatencyStats, ResultDoc, RunResult, Summary, TestResult, Warning, WarningCode,
};
use crate::os::text::terminal;
use crate::report::metrics::MEAN_LATENCY;
use crate::stats::summary::median;
use crate::units::{fmt_mb_per_s, fmt_ns, fmt_thousands};

/// An empty terminal table in the style every command's tables share (`UTF8_FULL_CONDENSED`),
/// laid out as `arrangement`.
pub fn new_table(arrangement: ContentArrangement) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(arrangement);
    t
}

/// A cell aligned right, as the figures of every table are.
pub fn right(text: impl ToString) -> Cell {
    Cell::new(text).set_alignment(CellAlignment::Right)
}

/// Aligns these columns of `table` right (its figures), leaving out any it does not have.
pub fn align_right(table: &mut Table, columns: impl IntoIterator<Item = usize>) {
    for i in columns {
        if let Some(c) = table.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
}

/// The value a block test's table shows for a rate: the median of the runs, or the best run
/// (peak); the rule every report and the history give too (`metrics::table_figure`).
fn headline(t: &TestResult, metric: &str) -> Option<f64> {
    let s = t.summary.get(metric)?;
    Some(crate::report::metrics::table_figure(t, metric, s).0)
}

/// The median over a test's runs of one of their latency figures (`None`: no run has any):
/// the runs its summary covers (`TestResult::summarized_runs`), as its MB/s and IOPS. Under
/// `--steadystate` the terminal gave the latency over every round (55.4 µs) beside the
/// window's IOPS, where the report gives the window's (57.6 µs).
pub fn lat_median(t: &TestResult, f: fn(&crate::model::LatencyStats) -> f64) -> Option<f64> {
    let v: Vec<f64> = t
        .summarized_runs()
        .iter()
        .filter_map(|r| r.lat_ns.as_ref().map(f))
        .collect();
    (!v.is_empty()).then(|| median(&v))
}

/// Which bytes of `/proc/diskstats` a row shows.
#[derive(Clone, Copy, PartialEq)]
enum DevBytes {
    Read,
    Write,
    Both,
}

/// The device's view of a test: what `/proc/diskstats` saw per second in the row's
/// direction (both for a mixed test), and the write amplification of tests that write
/// (medians over runs).
fn device_view(t: &TestResult, which: DevBytes) -> (String, String) {
    let rates: Vec<f64> = t
        .summarized_runs()
        .iter()
        .filter_map(|r| {
            let d = r.device.as_ref()?;
            let bytes = match which {
                DevBytes::Read => d.read_bytes,
                DevBytes::Write => d.write_bytes,
                DevBytes::Both => d.read_bytes + d.write_bytes,
            };
            Some(bytes as f64 / (d.elapsed_ms as f64 / 1e3).max(1e-9))
        })
        .collect();
    let was: Vec<f64> = t
        .summarized_runs()
        .iter()
        .filter_map(|r| r.write_amplification)
        .collect();
    (
        if rates.is_empty() {
            "-".into()
        } else {
            fmt_mb_per_s(median(&rates))
        },
        if was.is_empty() {
            "-".into()
        } else {
            format!("{:.2}", median(&was))
        },
    )
}

/// The `± IOPS` cell of a test's or a direction's IOPS summary: the runs' coefficient of
/// variation, `-` with fewer than two runs.
fn iops_spread(s: Option<&Summary>) -> String {
    match s {
        Some(s) if s.n >= 2 => format!("±{:.1}%", s.cv * 100.0),
        _ => "-".into(),
    }
}

/// The reads' and the writes' rows under a mixed test: each direction's own rate and
/// latency (a device rarely serves both alike), its spread and what the device saw of it.
fn direction_rows(t: &TestResult) -> Vec<Vec<Cell>> {
    let mut rows = Vec::new();
    type Part = fn(&RunResult) -> Option<&DirectionStats>;
    let dirs: [(&str, DevBytes, Part); 2] = [
        ("read", DevBytes::Read, |r| r.read.as_ref()),
        ("write", DevBytes::Write, |r| r.write.as_ref()),
    ];
    for (dir, which, part) in dirs {
        let parts: Vec<&DirectionStats> = t
            .summarized_runs()
            .iter()
            .filter_map(part)
            .filter(|d| d.ops > 0)
            .collect();
        if parts.is_empty() {
            continue;
        }
        let lat = |f: fn(&LatencyStats) -> f64| {
            fmt_ns(median(
                &parts.iter().map(|d| f(&d.lat_ns)).collect::<Vec<_>>(),
            ))
        };
        let or_dash = |v: Option<String>| v.unwrap_or_else(|| "-".into());
        let spread = iops_spread(t.summary.get(&format!("{dir}_iops")));
        rows.push(vec![
            Cell::new(format!("  \u{21b3} {dir}s")),
            Cell::new(or_dash(
                headline(t, &format!("{dir}_bw_bytes_per_s")).map(fmt_mb_per_s),
            )),
            Cell::new(or_dash(
                headline(t, &format!("{dir}_iops")).map(fmt_thousands),
            )),
            Cell::new(lat(|l| l.mean)),
            Cell::new(lat(|l| l.p99 as f64)),
            Cell::new(lat(|l| l.p999 as f64)),
            Cell::new(spread),
            Cell::new(""),
            Cell::new(device_view(t, which).0),
            Cell::new(""),
        ]);
    }
    rows
}

/// How long a run lasts: `5 s per run`, or for a size-based run (`--io-size`) what it
/// transfers.
fn run_length(s: &crate::model::BlockSettings) -> String {
    match s.io_size_bytes {
        Some(b) => format!(
            "{} per job and run (size-based, --io-size)",
            crate::units::fmt_size_iec(b)
        ),
        None => format!("{} s per run", s.duration_s),
    }
}

/// What the header says of the target: `/mnt (ext4, /dev/sda1, relatime)`, with the mount
/// options that change the figures (`deciding_options`); a block device measured raw has no
/// file system: `/dev/loop3 (block device)`, not `(?, /dev/loop3)`.
pub fn target_line(env: &crate::model::Environment) -> String {
    let device = env.block_device.as_deref().map(|d| format!("/dev/{d}"));
    let mut parts = vec![env.fs_label().to_string()];
    if let Some(d) = device
        && d != env.target_path
    {
        parts.push(d);
    }
    parts.extend(deciding_options(&env.mount_options).map(str::to_string));
    terminal(&format!("{} ({})", env.target_path, parts.join(", "))).into_owned()
}

/// The mount options that change what a test measures, in mount's order: the access-time
/// mode (and `lazytime`), compression (btrfs `compress`/`compress-force`, ntfs `compression`), synchronous
/// writes (`sync`, `dirsync`), ext3/4's journal mode (`data=`), write barriers turned off and
/// DAX. The rest (`rw`, `subvol=`, uid, ...) stays in the JSON and `iolab info`.
fn deciding_options(options: &str) -> impl Iterator<Item = &str> {
    options.split(',').filter(|o| {
        let name = o.split_once('=').map_or(*o, |(n, _)| n);
        name.ends_with("atime")
            || name.starts_with("compress")
            || matches!(
                name,
                "lazytime" | "compression" | "sync" | "dirsync" | "data" | "nobarrier" | "dax"
            )
            || *o == "barrier=0"
    })
}

/// Render block tests as a table per direction, with warnings underneath.
pub fn render_block_table(doc: &ResultDoc) -> String {
    let mut out = String::new();
    let env = &doc.environment;
    out.push_str(&format!(
        "iolab {} on {}\n",
        doc.tool.version,
        target_line(env)
    ));
    let mut table = new_table(ContentArrangement::Disabled);
    table.set_header(vec![
        "Test",
        "MB/s",
        "IOPS",
        MEAN_LATENCY,
        "p99",
        "p99.9",
        "± IOPS",
        "runs",
        "dev MB/s",
        "WA",
    ]);
    for dir in ["read", "write", "mixed"] {
        for t in doc
            .tests
            .iter()
            .filter(|t| t.family == "block" && t.direction.as_deref() == Some(dir))
        {
            let spread = iops_spread(t.summary.get("iops"));
            let lat = |f: fn(&LatencyStats) -> f64| {
                lat_median(t, f).map(fmt_ns).unwrap_or_else(|| "-".into())
            };
            let mut row = vec![
                Cell::new(terminal(&t.name)),
                Cell::new(
                    headline(t, "bw_bytes_per_s")
                        .map(fmt_mb_per_s)
                        .unwrap_or_else(|| "-".into()),
                ),
                Cell::new(
                    headline(t, "iops")
                        .map(fmt_thousands)
                        .unwrap_or_else(|| "-".into()),
                ),
                Cell::new(lat(|l| l.mean)),
                Cell::new(lat(|l| l.p99 as f64)),
                Cell::new(lat(|l| l.p999 as f64)),
                Cell::new(spread),
                Cell::new(t.runs.len().to_string()),
            ];
            if let Some(ended) = t.ended_early() {
                row[7] = Cell::new(format!("{} ({ended})", t.runs.len()));
            }
            let which = match dir {
                "read" => DevBytes::Read,
                "write" => DevBytes::Write,
                _ => DevBytes::Both,
            };
            let (dev_rate, wa) = device_view(t, which);
            row.push(Cell::new(dev_rate));
            row.push(Cell::new(wa));
            table.add_row(row);
            for sub in direction_rows(t) {
                table.add_row(sub);
            }
        }
    }
    align_right(&mut table, 1..10);
    out.push_str(&table.to_string());
    out.push('\n');
    let peak = doc
        .tests
        .iter()
        .any(|t| t.headline.as_deref() == Some("max"));
    out.push_str(&format!(
        "MB/s = 10^6 bytes/s. {} Latency: from submitting to reaping each I/O (fio's `lat`, not its `clat`), median over runs. ± = run-to-run coefficient of variation of IOPS. dev MB/s: what the block device saw in the measured window (/proc/diskstats, including the final fsync for writes); WA = device bytes written / bytes iolab wrote.{}\n",
        if peak {
            "Peak preset: MB/s and IOPS are the BEST run (as CrystalDiskMark reports), not the median."
        } else {
            "MB/s and IOPS: median of the runs."
        },
        if doc
            .tests
            .iter()
            .any(|t| t.family == "block" && t.direction.as_deref() == Some("mixed"))
        {
            " A mixed test's \u{21b3} rows are its reads and its writes alone, each with its own latency; its own dev MB/s counts both directions."
        } else {
            ""
        }
    ));
    if let Some(first) = doc.tests.iter().find_map(|t| t.settings.as_ref()) {
        out.push_str(&format!(
            "engine {}, {}, test size {}, {}{}{}{}\n",
            first.engine,
            if first.engine == "null" {
                "no I/O (iolab's own overhead)"
            } else if first.direct {
                "O_DIRECT"
            } else {
                "buffered"
            },
            crate::units::fmt_size_iec(first.size_bytes),
            run_length(first),
            match first.pause_s {
                Some(p) => format!(", {p} s idle before each run after the first"),
                None => String::new(),
            },
            if first.huge_pages == Some(false) {
                ", buffers on ordinary pages (--huge-pages false)"
            } else {
                ""
            },
            method_notes(doc, first)
        ));
    }
    out.push_str(&render_steady_lines(doc, SteadyFigures::Rounds));
    out.push_str(&render_warnings(doc));
    out
}

/// What else decided the figures and is only in the result file otherwise: zeros written
/// (compressible: flatters compressing or deduplicating storage), writes only stamped (alike
/// but for their stamps, for a compressor that sees several), jobs sharing the region,
/// every read verified (CPU per I/O), the span written twice before measuring.
fn method_notes(doc: &ResultDoc, first: &crate::model::BlockSettings) -> String {
    let mut notes = String::new();
    let block = || doc.tests.iter().filter(|t| t.family == "block");
    match first.pattern.as_str() {
        "zero" => notes.push_str(", zeros written (--pattern zero: compressible)"),
        "stamped" => {
            notes.push_str(", writes only stamped (--pattern stamped: alike for a compressor)")
        }
        _ => {}
    }
    if first.region == "shared" && block().any(|t| t.settings.as_ref().is_some_and(|s| s.jobs > 1))
    {
        notes.push_str(", every job over the whole region (--region shared)");
    }
    let flagged =
        |key: &str| block().any(|t| t.params.get(key).map(String::as_str) == Some("true"));
    if flagged("verify") {
        notes.push_str(", every read verified (--verify)");
    }
    if flagged("preconditioned") {
        notes.push_str(", span written twice before measuring (--precondition)");
    }
    notes
}

/// Which figures a command's table gives of a test that ran to steady state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SteadyFigures {
    /// `iolab run`: the rounds themselves (the window's median, or the last rounds).
    Rounds,
    /// `iolab saturate`: the sweep measured after the rounds, not the rounds.
    SweepAfter,
}

/// One line per test that ran to steady state (`--steadystate`): which round reached it
/// and over which window, or that it was not reached, and what the table's figures are.
pub fn render_steady_lines(doc: &ResultDoc, figures: SteadyFigures) -> String {
    let mut out = String::new();
    for t in &doc.tests {
        if let Some(s) = &t.steady_state {
            out.push_str(&format!("{}: {}", terminal(&t.name), s.describe()));
            if let (Some(m), true) = (s.window_mean, s.reached) {
                let v = if s.metric == "iops" {
                    format!("{} IOPS", fmt_thousands(m))
                } else {
                    format!("{} MB/s", fmt_mb_per_s(m))
                };
                out.push_str(&format!(", window mean {v}"));
            }
            match (figures, s.reached) {
                // The table gives the median of the window's rounds, the criterion their
                // mean: say which is which (97,315 mean beside a 111,430 median read as two
                // answers for one window).
                (SteadyFigures::Rounds, true) => {
                    out.push_str("; the table's figures are over the window (its median)")
                }
                (SteadyFigures::Rounds, false) => {
                    out.push_str("; figures are over the last rounds")
                }
                // Saturate's table is its sweep, one step per depth after the rounds: it said
                // "the table's figures are over the window (its median)" under it.
                (SteadyFigures::SweepAfter, true) => out.push_str(
                    "; the sweep's figures were measured after these rounds, from that state",
                ),
                (SteadyFigures::SweepAfter, false) => out.push_str(
                    "; the sweep's figures were measured after these rounds all the same",
                ),
            }
            out.push('\n');
        }
    }
    out
}

/// Warnings, one per line, for any table footer; then how the command ended when it did
/// not complete: a failure's `error: …`, or the interruption in the table's own words.
pub fn render_warnings(doc: &ResultDoc) -> String {
    let mut out = render_lines(&warning_lines(doc));
    match &doc.error {
        Some(e) if doc.status == "interrupted" => out.push_str(&interrupted_line(e)),
        Some(e) => out.push_str(&format!("error: {}\n", terminal(e))),
        None => {}
    }
    out
}

/// The table's last line of an interrupted command: `interrupted by SIGINT: a partial
/// result (what was measured before it)`. It read `error: interrupted by SIGINT`, an error
/// line on stdout (in a table piped to a file) for what is no error: the user stopped the
/// test, and stderr says so (`iolab: interrupted by SIGINT; partial results saved`), as fio
/// ends its report with what it ran when stopped. The JSON marks it by its `status`.
fn interrupted_line(e: &str) -> String {
    let what = if e.starts_with("interrupted") {
        e.to_string()
    } else {
        format!("interrupted: {e}")
    };
    format!(
        "{}: a partial result (what was measured before it)\n",
        terminal(&what)
    )
}

/// What a warning names the things it is about by: a document's tests (a matrix's
/// `configuration: test`, every other command's test name) and a matrix's configurations
/// (`space-not-returned`, `vcpu-halt` are about a file system, not a test); each once.
#[derive(Default)]
struct Names {
    tests: Vec<String>,
    configurations: Vec<String>,
}

impl Names {
    fn of(doc: &ResultDoc) -> Names {
        let mut tests: Vec<String> = Vec::new();
        let all = doc.tests.iter().map(|t| t.name.clone()).chain(
            doc.configurations
                .iter()
                .flat_map(|c| c.tests.iter().map(|t| format!("{}: {}", c.label, t.name))),
        );
        for n in all {
            if !tests.contains(&n) {
                tests.push(n);
            }
        }
        let mut configurations: Vec<String> = Vec::new();
        for c in &doc.configurations {
            if !configurations.contains(&c.label) {
                configurations.push(c.label.clone());
            }
        }
        Names {
            tests,
            configurations,
        }
    }

    fn is_configuration(&self, name: &str) -> bool {
        self.configurations.iter().any(|c| c == name)
    }

    /// What several names are: `tests`, `configurations` (a matrix's `2 tests (ext4, xfs)`
    /// named file systems tests), or both.
    fn noun(&self, names: &[&str]) -> &'static str {
        let configs = names.iter().filter(|n| self.is_configuration(n)).count();
        if configs == 0 {
            "tests"
        } else if configs == names.len() {
            "configurations"
        } else {
            "tests and configurations"
        }
    }
}

/// A code's findings that say the same sentence with other figures fold into one line when
/// they would take more lines than this (a matrix on a loaded machine gave 124 lines, one
/// `cpu-contention`, `noisy`, `portion-spread` … per cell and run).
const MAX_LINES_PER_SENTENCE: usize = 3;

/// The tests a line names before "and N more".
const MAX_NAMED: usize = 8;

/// `warning [code] test: message`, one per line; the advice after a message's first ": "
/// is printed once per code. The same finding about several tests is one line that names
/// them (`--repeat 1` gave one "only one run" line per test: eight lines saying one thing).
pub fn render_warning_list(warnings: &[Warning]) -> String {
    render_lines(&fold_warnings(warnings, &Names::default()))
}

/// One line of warnings as every view shows it (the terminal's `warning [code] about:
/// message`, the report's list item): the findings of a code folded as
/// [`render_warning_list`] says, `about` naming the test, tests or configurations it is
/// about (`None`: the whole run). The JSON keeps every warning as it was given.
#[derive(Debug, Clone, PartialEq)]
pub struct WarningLine {
    pub code: String,
    pub about: Option<String>,
    pub message: String,
}

impl WarningLine {
    /// The text after the code: `about: message`, or the message alone.
    pub fn text(&self) -> String {
        match &self.about {
            Some(a) => format!("{a}: {}", self.message),
            None => self.message.clone(),
        }
    }
}

/// The warning lines of a document, folded as the terminal prints them under its tables.
pub fn warning_lines(doc: &ResultDoc) -> Vec<WarningLine> {
    fold_warnings(&doc.warnings, &Names::of(doc))
}

/// The warning lines of a list of warnings that belong to no one document (a comparison's).
pub fn warning_list_lines(warnings: &[Warning]) -> Vec<WarningLine> {
    fold_warnings(warnings, &Names::default())
}

fn render_lines(lines: &[WarningLine]) -> String {
    lines
        .iter()
        .map(|l| match &l.about {
            Some(a) => format!(
                "warning [{}] {}: {}\n",
                l.code,
                terminal(a),
                terminal(&l.message)
            ),
            None => format!("warning [{}]: {}\n", l.code, terminal(&l.message)),
        })
        .collect()
}

/// One finding: a code's message (several that differ only in figures, when folded) and
/// the tests it is about.
struct Finding<'w> {
    code: &'w WarningCode,
    messages: Vec<&'w str>,
    tests: Vec<&'w str>,
    untested: bool,
}

impl Finding<'_> {
    fn lines(&self) -> usize {
        usize::from(self.untested) + usize::from(!self.tests.is_empty())
    }
}

/// The lines of `warnings` of a document whose tests and configurations are `names` (the
/// "of M" of a long list, what the names are).
fn fold_warnings(warnings: &[Warning], names: &Names) -> Vec<WarningLine> {
    // (code, message) -> the tests, in the order first seen.
    let mut groups: Vec<Finding> = Vec::new();
    for w in warnings {
        let test = w.test.as_deref();
        match groups
            .iter_mut()
            .find(|g| *g.code == w.code && g.messages[0] == w.message)
        {
            Some(g) => match test {
                Some(t) if !g.tests.contains(&t) => g.tests.push(t),
                Some(_) => {}
                None => g.untested = true,
            },
            None => groups.push(Finding {
                code: &w.code,
                messages: vec![&w.message],
                tests: test.into_iter().collect(),
                untested: test.is_none(),
            }),
        }
    }
    let mut out = Vec::new();
    let mut seen_codes: Vec<&WarningCode> = Vec::new();
    for f in fold_sentences(fold_figures(groups), names) {
        let code = f.code;
        let message = f.message;
        // The advice after the first ": " is printed once per code; repeats keep the finding.
        let message = if seen_codes.contains(&code) {
            finding_and_advice(&message).0.to_string()
        } else {
            seen_codes.push(code);
            message
        };
        let line = |about: Option<String>| WarningLine {
            code: code.to_string(),
            about,
            message: message.clone(),
        };
        if f.untested {
            out.push(line(None));
        }
        match f.tests.as_slice() {
            [] => {}
            [t] => out.push(line(Some(t.to_string()))),
            many => out.push(line(Some(tests_named(many, names)))),
        }
    }
    out
}

/// Findings of one code whose messages differ only in their figures fold into the first of
/// them when they would take more than [`MAX_LINES_PER_SENTENCE`] lines; a different
/// sentence keeps its own lines.
fn fold_figures(groups: Vec<Finding<'_>>) -> Vec<Finding<'_>> {
    let keys: Vec<(&WarningCode, Vec<&str>)> = groups
        .iter()
        .map(|g| (g.code, figures(g.messages[0]).0))
        .collect();
    let lines_of = |k: &(&WarningCode, Vec<&str>)| -> usize {
        groups
            .iter()
            .zip(&keys)
            .filter(|(_, o)| *o == k)
            .map(|(g, _)| g.lines())
            .sum()
    };
    let mut out: Vec<Finding> = Vec::new();
    let mut folded_into: Vec<(usize, usize)> = Vec::new(); // key index -> out index
    for (i, g) in groups.iter().enumerate() {
        let first = keys.iter().position(|k| *k == keys[i]).unwrap_or(i);
        if lines_of(&keys[i]) <= MAX_LINES_PER_SENTENCE {
            out.push(Finding {
                messages: g.messages.clone(),
                tests: g.tests.clone(),
                ..*g
            });
            continue;
        }
        match folded_into.iter().find(|(k, _)| *k == first) {
            Some(&(_, at)) => {
                let f = &mut out[at];
                f.messages.extend(&g.messages);
                for t in &g.tests {
                    if !f.tests.contains(t) {
                        f.tests.push(t);
                    }
                }
                f.untested |= g.untested;
            }
            None => {
                folded_into.push((first, out.len()));
                out.push(Finding {
                    messages: g.messages.clone(),
                    tests: g.tests.clone(),
                    ..*g
                });
            }
        }
    }
    out
}

/// A warning's message as its finding and its advice, split at the first ": " after a
/// leading `run N: ` (which says where the finding was, not what it is: `write-cache-suspected`
/// repeated for a second test printed as just "run 1").
fn finding_and_advice(message: &str) -> (&str, Option<&str>) {
    let skip = message
        .strip_prefix("run ")
        .and_then(|r| {
            let digits = r.bytes().take_while(u8::is_ascii_digit).count();
            (digits > 0 && r[digits..].starts_with(": ")).then_some(4 + digits + 2)
        })
        .unwrap_or(0);
    match message[skip..].find(": ") {
        Some(at) => (&message[..skip + at], Some(&message[skip + at + 2..])),
        None => (message, None),
    }
}

/// A finding as it is printed: its message (figures merged, sentences joined) and tests.
struct Line<'w> {
    code: &'w WarningCode,
    message: String,
    tests: Vec<&'w str>,
    untested: bool,
}

/// The findings a folded line spells out before "and N more".
const MAX_SENTENCES: usize = 3;

/// A code whose findings still take more than [`MAX_LINES_PER_SENTENCE`] lines after
/// [`fold_figures`] (their sentences differ in more than figures: `device-extra-io`'s "vda
/// wrote … while the test wrote 0 B", "vda read …", "… (2.8x)" gave four lines for four
/// tests) is one line naming its tests, as `noisy` is: each sentence once with the tests it
/// is about, the advice once. A finding about no test keeps its own line.
fn fold_sentences<'w>(findings: Vec<Finding<'w>>, names: &Names) -> Vec<Line<'w>> {
    let lines_of = |code: &WarningCode| -> usize {
        findings
            .iter()
            .filter(|f| f.code == code)
            .map(Finding::lines)
            .sum()
    };
    let mut out: Vec<Line> = Vec::new();
    let mut folded: Vec<&WarningCode> = Vec::new();
    for f in &findings {
        if lines_of(f.code) <= MAX_LINES_PER_SENTENCE {
            out.push(Line {
                code: f.code,
                message: merged_message(&f.messages),
                tests: f.tests.clone(),
                untested: f.untested,
            });
            continue;
        }
        if f.untested {
            out.push(Line {
                code: f.code,
                message: merged_message(&f.messages),
                tests: Vec::new(),
                untested: true,
            });
        }
        if f.tests.is_empty() || folded.contains(&f.code) {
            continue;
        }
        folded.push(f.code);
        // The code's sentences, those that differ only in figures together: (text around
        // the figures, messages, tests).
        let mut of_code: Vec<(Vec<&str>, Vec<&str>, Vec<&str>)> = Vec::new();
        for g in findings
            .iter()
            .filter(|g| g.code == f.code && !g.tests.is_empty())
        {
            let key = figures(g.messages[0]).0;
            let at = match of_code.iter().position(|(k, _, _)| *k == key) {
                Some(at) => at,
                None => {
                    of_code.push((key, Vec::new(), Vec::new()));
                    of_code.len() - 1
                }
            };
            let (_, messages, tests) = &mut of_code[at];
            messages.extend(&g.messages);
            for t in &g.tests {
                if !tests.contains(t) {
                    tests.push(t);
                }
            }
        }
        let mut tests: Vec<&str> = Vec::new();
        for t in of_code.iter().flat_map(|(_, _, ts)| ts) {
            if !tests.contains(t) {
                tests.push(t);
            }
        }
        let merged: Vec<String> = of_code.iter().map(|(_, m, _)| merged_message(m)).collect();
        let advice = finding_and_advice(&merged[0]).1;
        let mut sentences: Vec<String> = of_code
            .iter()
            .zip(&merged)
            .take(MAX_SENTENCES)
            .map(|((_, _, ts), m)| {
                let head = finding_and_advice(m).0;
                let about = if ts.len() <= MAX_SENTENCES {
                    ts.join(", ")
                } else {
                    format!("{} {}", ts.len(), names.noun(ts))
                };
                format!("{head} ({about})")
            })
            .collect();
        if of_code.len() > MAX_SENTENCES {
            sentences.push(format!(
                "and {} more (each in the JSON)",
                of_code.len() - MAX_SENTENCES
            ));
        }
        let mut message = sentences.join("; ");
        if let Some(a) = advice {
            message.push_str(": ");
            message.push_str(a);
        }
        out.push(Line {
            code: f.code,
            message,
            tests,
            untested: false,
        });
    }
    out
}

/// A message cut at its figures: the text around them (one more than the figures) and the
/// figures. A figure is a number standing alone (`57.7`, `1,234`), not a digit inside a word
/// (`sda1`, `4KiB`, `Q1T1`) nor a rank's number (`on rank 1 (vm)`: which host, not how much).
fn figures(message: &str) -> (Vec<&str>, Vec<&str>) {
    let b = message.as_bytes();
    let (mut text, mut figs) = (Vec::new(), Vec::new());
    let (mut from, mut i) = (0, 0);
    while i < b.len() {
        let starts = b[i].is_ascii_digit()
            && (i == 0 || matches!(b[i - 1], b' ' | b'('))
            && !message[..i].ends_with("rank ");
        if !starts {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < b.len()
            && (b[j].is_ascii_digit()
                || (matches!(b[j], b'.' | b',') && b.get(j + 1).is_some_and(u8::is_ascii_digit)))
        {
            j += 1;
        }
        if b.get(j).is_some_and(|c| c.is_ascii_alphanumeric()) {
            i = j;
            continue;
        }
        text.push(&message[from..i]);
        figs.push(&message[i..j]);
        from = j;
        i = j;
    }
    text.push(&message[from..]);
    (text, figs)
}

/// One sentence for messages that differ only in their figures: each figure that differs
/// is given as the range of them (`runs differ by 6.2–128.6 %`).
fn merged_message(messages: &[&str]) -> String {
    let (text, first) = figures(messages[0]);
    if messages.len() == 1 {
        return messages[0].to_string();
    }
    let all: Vec<Vec<&str>> = messages.iter().map(|m| figures(m).1).collect();
    let value = |s: &str| s.replace(',', "").parse::<f64>().unwrap_or(0.0);
    let mut out = String::new();
    for (i, t) in text.iter().enumerate() {
        out.push_str(t);
        let Some(&f) = first.get(i) else { continue };
        let slot = all.iter().filter_map(|fs| fs.get(i).copied());
        let lo = slot.clone().min_by(|a, b| value(a).total_cmp(&value(b)));
        let hi = slot.max_by(|a, b| value(a).total_cmp(&value(b)));
        match (lo, hi) {
            (Some(lo), Some(hi)) if value(lo) != value(hi) => out.push_str(&format!("{lo}–{hi}")),
            _ => out.push_str(f),
        }
    }
    out
}

/// `3 tests (A, B, C)`; a long list names the first and says how many more, and of how
/// many tests when they are all the document's (`37 of 48 tests (A, B, …, and 32 more)`);
/// a matrix's configurations are named as such (`2 configurations (ext4, xfs)`).
fn tests_named(tests: &[&str], names: &Names) -> String {
    let noun = names.noun(tests);
    if tests.len() <= MAX_NAMED {
        return format!("{} {noun} ({})", tests.len(), tests.join(", "));
    }
    let shown = MAX_NAMED - 1;
    let all_of = |known: &[String]| tests.iter().all(|t| known.iter().any(|k| k == t));
    let of = if all_of(&names.tests) {
        format!(" of {}", names.tests.len())
    } else if all_of(&names.configurations) {
        format!(" of {}", names.configurations.len())
    } else {
        String::new()
    };
    format!(
        "{}{of} {noun} ({}, and {} more)",
        tests.len(),
        tests[..shown].join(", "),
        tests.len() - shown
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Environment, ResultDoc};

    /// The same finding about several tests is one line naming them; other findings of
    /// the code keep their own lines, with the advice once.
    #[test]
    fn one_finding_about_several_tests_is_one_line() {
        let w = |code, test: Option<&str>, message: &str| Warning {
            code,
            test: test.map(str::to_string),
            message: message.into(),
        };
        let once = "only one run: no spread; use --repeat 3";
        let list = [
            w(WarningCode::NoSpread, Some("A"), once),
            w(
                WarningCode::DeviceExtraIo,
                Some("A"),
                "vda wrote 5 MiB: advice",
            ),
            w(WarningCode::NoSpread, Some("B"), once),
            w(
                WarningCode::DeviceExtraIo,
                Some("B"),
                "vda wrote 7 MiB: advice",
            ),
            w(WarningCode::NoSpread, Some("C"), once),
            w(WarningCode::NoSpread, Some("C"), once),
            w(WarningCode::NoSpread, None, once),
        ];
        assert_eq!(
            render_warning_list(&list),
            "warning [no-spread]: only one run: no spread; use --repeat 3\n\
             warning [no-spread] 3 tests (A, B, C): only one run: no spread; use --repeat 3\n\
             warning [device-extra-io] A: vda wrote 5 MiB: advice\n\
             warning [device-extra-io] B: vda wrote 7 MiB\n"
        );
    }

    /// `write-cache-suspected` begins with the run it was seen in: a second test's line
    /// printed "run 1" alone, the finding cut off with the advice.
    #[test]
    fn a_leading_run_number_is_no_finding_of_its_own() {
        let w = |test: &str, from| Warning {
            code: WarningCode::WriteCacheSuspected,
            test: Some(test.into()),
            message: format!(
                "run 1: the write speed fell from {from} to 90 MB/s after 1.0 GiB and stayed there: run `iolab sustain` to measure it"
            ),
        };
        assert_eq!(
            render_warning_list(&[w("A", 900), w("B", 800)]),
            "warning [write-cache-suspected] A: run 1: the write speed fell from 900 to 90 MB/s after 1.0 GiB and stayed there: run `iolab sustain` to measure it\n\
             warning [write-cache-suspected] B: run 1: the write speed fell from 800 to 90 MB/s after 1.0 GiB and stayed there\n"
        );
        assert_eq!(finding_and_advice("run 12: x: y"), ("run 12: x", Some("y")));
        assert_eq!(
            finding_and_advice("runs differ: y"),
            ("runs differ", Some("y"))
        );
        assert_eq!(finding_and_advice("run x: y"), ("run x", Some("y")));
        assert_eq!(finding_and_advice("no advice"), ("no advice", None));
    }

    /// A run's `device-extra-io` findings that differ in more than figures (what the device
    /// wrote or read, a ratio where the test wrote too) were four lines for four tests: one
    /// line names the tests, each sentence once with its tests, the advice once; the JSON
    /// keeps every warning.
    #[test]
    fn findings_of_one_code_in_several_sentences_fold_into_one_line() {
        let advice = "dev MB/s and WA include other programs' I/O";
        let mut doc = ResultDoc::new("run", Vec::new(), Environment::default());
        for (test, what) in [
            (
                "SEQ1M Q1T1 read",
                "vda wrote 136.0 MiB while the test wrote 0 B",
            ),
            (
                "RND4K Q1T1 read",
                "vda wrote 114.0 MiB while the test wrote 0 B",
            ),
            (
                "SEQ1M Q1T1 write",
                "vda read 10.4 MiB while the test read 0 B",
            ),
            (
                "RND4K Q1T1 write",
                "vda wrote 46.6 MiB while the test wrote 16.6 MiB (2.8x)",
            ),
        ] {
            doc.warn(Warning {
                code: WarningCode::DeviceExtraIo,
                test: Some(test.into()),
                message: format!("{what}: {advice}"),
            });
        }
        let shown = render_warnings(&doc);
        assert_eq!(
            shown,
            "warning [device-extra-io] 4 tests (SEQ1M Q1T1 read, RND4K Q1T1 read, SEQ1M Q1T1 \
             write, RND4K Q1T1 write): vda wrote 114.0–136.0 MiB while the test wrote 0 B \
             (SEQ1M Q1T1 read, RND4K Q1T1 read); vda read 10.4 MiB while the test read 0 B \
             (SEQ1M Q1T1 write); vda wrote 46.6 MiB while the test wrote 16.6 MiB (2.8x) \
             (RND4K Q1T1 write): dev MB/s and WA include other programs' I/O\n"
        );
        assert_eq!(doc.warnings.len(), 4, "the JSON keeps each");
        // Three lines or fewer stay as they were.
        let lines = render_warning_list(&doc.warnings[1..]);
        assert_eq!(lines.lines().count(), 3, "{lines}");
    }

    /// An interrupted command's table ends with the interruption in its own words, no
    /// `error:` line on stdout (stderr says it); a failure keeps its `error:` line.
    #[test]
    fn an_interrupted_table_says_so_without_an_error_line() {
        let mut doc = ResultDoc::new("run", Vec::new(), Environment::default());
        doc.finish(&Err(anyhow::Error::new(crate::error::Interrupted {
            signal: 2,
            signal_name: "SIGINT",
        })));
        assert_eq!(doc.status, "interrupted");
        assert_eq!(
            render_warnings(&doc),
            "interrupted by SIGINT: a partial result (what was measured before it)\n"
        );
        doc.error = Some("RND4K Q1T1 read: interrupted by SIGTERM".into());
        assert_eq!(
            render_warnings(&doc),
            "interrupted: RND4K Q1T1 read: interrupted by SIGTERM: a partial result (what was measured before it)\n"
        );
        doc.status = "failed".into();
        doc.error = Some("write: No space left on device".into());
        assert_eq!(
            render_warnings(&doc),
            "error: write: No space left on device\n"
        );
    }

    /// `iolab matrix` on a loaded machine printed a line per cell and code (124 for two file
    /// systems): the same sentence with other figures is one line with their range, naming
    /// the first cells and how many of the matrix's; another sentence keeps its own line,
    /// the JSON keeps every warning.
    #[test]
    fn a_flood_of_one_sentence_is_one_line_per_sentence() {
        let sizes = ["1 B", "4KiB", "16KiB", "64KiB"];
        let ops = ["create", "stat", "read", "delete", "rename", "append"];
        let mut doc = crate::report::matrix::matrix_of(
            ["ext4", "xfs"]
                .iter()
                .map(|fs| crate::model::matrix::ConfigurationResult {
                    label: fs.to_string(),
                    tests: sizes
                        .iter()
                        .flat_map(|s| ops.iter().map(move |o| format!("{s} {o}")))
                        .map(|name| TestResult {
                            name,
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                })
                .collect(),
        );
        let advice = "something else used the device or CPU; use more repeats";
        let cells: Vec<String> = doc
            .configurations
            .iter()
            .flat_map(|c| c.tests.iter().map(|t| format!("{}: {}", c.label, t.name)))
            .collect();
        assert_eq!(cells.len(), 48);
        for (i, cell) in cells.iter().take(37).enumerate() {
            let cv = 6.0 + i as f64 * 3.5;
            doc.warn(Warning {
                code: WarningCode::Noisy,
                test: Some(cell.clone()),
                message: format!(
                    "runs differ by {cv:.1} % (coefficient of variation above 5 %): {advice}"
                ),
            });
        }
        // Another sentence of the code, and one about each configuration (not a test: it
        // read "2 tests (ext4, xfs)").
        doc.warn(Warning {
            code: WarningCode::Noisy,
            test: Some("xfs: 1 B create".into()),
            message: format!("the device changed state between runs: {advice}"),
        });
        for fs in ["ext4", "xfs"] {
            doc.warn(Warning {
                code: WarningCode::VcpuHalt,
                test: Some(fs.into()),
                message: "this guest halts idle vCPUs".into(),
            });
        }
        let shown = render_warnings(&doc);
        assert_eq!(
            shown,
            "warning [noisy] 37 of 48 tests (ext4: 1 B create, ext4: 1 B stat, ext4: 1 B read, \
             ext4: 1 B delete, ext4: 1 B rename, ext4: 1 B append, ext4: 4KiB create, and 30 \
             more): runs differ by 6.0–132.0 % \
             (coefficient of variation above 5 %): something else used the device or CPU; use \
             more repeats\n\
             warning [noisy] xfs: 1 B create: the device changed state between runs\n\
             warning [vcpu-halt] 2 configurations (ext4, xfs): this guest halts idle vCPUs\n"
        );
        assert_eq!(doc.warnings.len(), 40, "the JSON keeps each");
        // A few stay as they were, each with its own figure.
        let few: Vec<Warning> = doc.warnings[..3].to_vec();
        let lines = render_warning_list(&few);
        assert_eq!(lines.lines().count(), 3, "{lines}");
        assert!(
            lines.contains("ext4: 1 B read: runs differ by 13.0 %"),
            "{lines}"
        );
        // Figures inside words are not figures: other devices, other sizes stay apart.
        assert_eq!(
            figures("sda1 wrote 4KiB (load 7.7 on 2 CPUs): 1,234").1,
            ["7.7", "2", "1,234"]
        );
        assert_eq!(figures("on rank 1 (vm), runs differ by 8.0 %").1, ["8.0"]);
    }

    fn header(env: Environment) -> String {
        let doc = ResultDoc::new("run", Vec::new(), env);
        render_block_table(&doc).lines().next().unwrap().to_string()
    }

    /// The window's mean (the rule's) stood beside the table's median of the same window
    /// with nothing to tell them apart.
    #[test]
    fn a_steady_window_says_its_mean_is_not_the_table_s_median() {
        let mut doc = ResultDoc::new("run", Vec::new(), Environment::default());
        doc.tests.push(crate::model::TestResult {
            name: "RND4K Q32T1 write".into(),
            steady_state: Some(crate::model::steady::SteadyStateRecord {
                rule: "snia".into(),
                metric: "iops".into(),
                reached: true,
                window_mean: Some(97_315.0),
                ..Default::default()
            }),
            ..Default::default()
        });
        let line = render_steady_lines(&doc, SteadyFigures::Rounds);
        assert!(
            line.contains(
                "window mean 97,315 IOPS; the table's figures are over the window (its median)"
            ),
            "{line}"
        );
        // Saturate's table is its sweep after the rounds: "the table's figures are over the
        // window (its median)" was false under it.
        let line = render_steady_lines(&doc, SteadyFigures::SweepAfter);
        assert!(!line.contains("the table's figures"), "{line}");
        assert!(
            line.contains(
                "window mean 97,315 IOPS; the sweep's figures were measured after these rounds"
            ),
            "{line}"
        );
    }

    /// The terminal's table headed the mean latency `avg lat` where every report, compare
    /// and the history say `mean latency`: one label for both.
    #[test]
    fn the_mean_latency_is_named_as_in_the_reports() {
        let mut doc = ResultDoc::new("run", Vec::new(), Environment::default());
        doc.tests.push(crate::model::TestResult {
            name: "RND4K Q1T1 read".into(),
            family: "block".into(),
            direction: Some("read".into()),
            ..Default::default()
        });
        let text = render_block_table(&doc);
        let header = text.lines().nth(2).unwrap_or_default();
        let want = crate::report::metrics::label("lat_mean_ns");
        assert!(header.contains(&format!(" {want} ")), "{text}");
        assert!(!text.contains("avg lat"), "{text}");
    }

    /// Under `--steadystate` the table's IOPS are the window's (the summary's) and the
    /// steady line says "the table's figures are over the window", but its latencies were
    /// over every round: 55.4 µs where the report said the window's 57.6 µs.
    #[test]
    fn a_steady_test_s_latency_is_the_window_s() {
        // Rounds 0-1 fast (10 µs), the window (rounds 2-4) at 50, 60 and 70 µs.
        let runs = [10.0, 10.0, 50.0, 60.0, 70.0]
            .iter()
            .enumerate()
            .map(|(i, us)| RunResult {
                run: i as u32 + 1,
                lat_ns: Some(crate::model::LatencyStats {
                    mean: us * 1e3,
                    p99: (us * 2e3) as u64,
                    ..Default::default()
                }),
                ..Default::default()
            })
            .collect();
        let t = crate::model::TestResult {
            name: "RND4K Q1T1 write".into(),
            family: "block".into(),
            direction: Some("write".into()),
            runs,
            steady_state: Some(crate::model::steady::SteadyStateRecord {
                rule: "snia".into(),
                window_rounds: 3,
                reached: true,
                steady_first_round: Some(2),
                steady_last_round: Some(4),
                values: vec![1.0; 5],
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(lat_median(&t, |l| l.mean), Some(60e3));
        let mut doc = ResultDoc::new("run", Vec::new(), Environment::default());
        doc.tests.push(t);
        let text = render_block_table(&doc);
        let row = text
            .lines()
            .find(|l| l.contains("RND4K Q1T1 write"))
            .unwrap_or_default();
        assert!(row.contains(" 60.0 µs ┆ 120.0 µs "), "{text}");
    }

    /// A raw block device has no file system: the header read `(?, /dev/loop3)`.
    #[test]
    fn a_block_device_s_header_names_it() {
        let raw = Environment {
            target_path: "/dev/loop3".into(),
            block_device: Some("loop3".into()),
            ..Default::default()
        };
        let line = header(raw);
        assert!(line.ends_with(" on /dev/loop3 (block device)"), "{line}");
        let dir = Environment {
            target_path: "/mnt".into(),
            fs_type: "ext4".into(),
            block_device: Some("sda1".into()),
            mount_options: "rw,relatime".into(),
            ..Default::default()
        };
        assert!(header(dir).ends_with(" on /mnt (ext4, /dev/sda1, relatime)"));
        let opts = "rw,noatime,compress=zstd:3,ssd,discard=async,space_cache=v2,subvol=/";
        assert_eq!(
            deciding_options(opts).collect::<Vec<_>>(),
            ["noatime", "compress=zstd:3"],
            "a compressing btrfs says so in the header"
        );
        let opts = "rw,relatime,lazytime,sync,data=journal,barrier=0,errors=remount-ro";
        assert_eq!(
            deciding_options(opts).collect::<Vec<_>>(),
            ["relatime", "lazytime", "sync", "data=journal", "barrier=0"]
        );
    }

    fn footer(settings: crate::model::BlockSettings, params: &[(&str, &str)]) -> String {
        let mut doc = ResultDoc::new("run", Vec::new(), Environment::default());
        doc.tests.push(TestResult {
            name: "RND4K Q1T2 read".into(),
            family: "block".into(),
            direction: Some("read".into()),
            settings: Some(settings),
            params: params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Default::default()
        });
        let table = render_block_table(&doc);
        table
            .lines()
            .find(|l| l.starts_with("engine "))
            .unwrap()
            .to_string()
    }

    /// Zeros, a shared region, verification and preconditioning decide the figures; they
    /// were only in the result file, and the table read as an ordinary run's.
    #[test]
    fn the_footer_says_how_the_data_was_written_and_checked() {
        let plain = crate::model::BlockSettings {
            engine: "uring".into(),
            direct: true,
            jobs: 2,
            region: "split".into(),
            pattern: "random".into(),
            size_bytes: 16 << 20,
            duration_s: 5.0,
            ..Default::default()
        };
        let line = footer(plain.clone(), &[]);
        assert_eq!(
            line,
            "engine uring, O_DIRECT, test size 16.0 MiB, 5 s per run"
        );
        let odd = crate::model::BlockSettings {
            pattern: "zero".into(),
            region: "shared".into(),
            ..plain.clone()
        };
        let line = footer(odd, &[("verify", "true"), ("preconditioned", "true")]);
        for said in [
            "zeros written (--pattern zero: compressible)",
            "every job over the whole region (--region shared)",
            "every read verified (--verify)",
            "span written twice before measuring (--precondition)",
        ] {
            assert!(line.contains(said), "{said}: {line}");
        }
        let stamped = crate::model::BlockSettings {
            pattern: "stamped".into(),
            ..plain
        };
        assert!(
            footer(stamped, &[]).contains("writes only stamped (--pattern stamped"),
            "the stamped pattern is named under the table"
        );
    }
}

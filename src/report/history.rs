//! `iolab history` as text: the list of results, one result's figures, the devices, a
//! trend with its marked changes, and the CSV export (one row per result, test, metric).

use comfy_table::{ContentArrangement, Table};

use crate::history::{Entry, Figure, HealthPoint, Trend, TrendPoint};
use crate::model::Summary;
use crate::model::device::SmartInfo;
use crate::os::text::terminal;
use crate::report::blocks::figure_cell;
use crate::report::csv::field;
use crate::report::metrics::{fmt_mean_ci, fmt_value, label_for};
use crate::report::table::{align_right, new_table};
use crate::units::{fmt_size_iec, fmt_thousands};

fn table(header: &[&str]) -> Table {
    let mut t = new_table(ContentArrangement::Dynamic);
    t.set_header(header.iter().map(|h| h.to_string()).collect::<Vec<_>>());
    t
}

/// `2026-01-31T12:34:56.789Z` -> `2026-01-31 12:34` (UTC); anything else as it is. A
/// hand-edited time with a character of several bytes across byte 16 panicked `history`.
pub fn short_time(t: &str) -> String {
    match (t.get(..10), t.get(10..11), t.get(11..16)) {
        (Some(day), Some("T"), Some(minute)) => format!("{day} {minute}"),
        _ => t.to_string(),
    }
}

/// An empty list under filters: none of the `held` results matches them (a history with
/// none says so as `render_list` does).
pub fn render_no_match(filters: &[String], held: usize) -> String {
    if held == 0 {
        return render_list(&[], 0);
    }
    format!(
        "no result matches {} ({}); the history holds {held} result{} (`iolab history` without filters lists them)\n",
        if filters.len() == 1 {
            "the filter"
        } else {
            "the filters"
        },
        filters.join(", "),
        if held == 1 { "" } else { "s" }
    )
}

/// What a figure of the history is, said under the list, `show` and the trend: the figure
/// the command's own table gives (`Figure::value`).
pub const FIGURE_MEANING: &str = "each test's figure as its command's table gives it: the median of the runs, a files test's mean, a peak test's MB/s and IOPS: the best run";

/// The list: number, time (UTC), command (with the options that tell two runs of it apart,
/// `run --preset real --size 1G --rw randwrite`, a long value cut: [`command_cell`]), status, host, device, file system, headline (each
/// test's figure as its table gives it, said under the list).
pub fn render_list(entries: &[Entry], total: usize) -> String {
    if entries.is_empty() {
        return "no results in the history (every measuring command records one; `iolab history import iolab-results/` adds older ones)\n".into();
    }
    let mut t = table(&[
        "#",
        "Started (UTC)",
        "Command",
        "Status",
        "Host",
        "Device",
        "FS",
        "Headline",
    ]);
    for e in entries {
        t.add_row(vec![
            e.id.to_string(),
            short_time(&e.started_at),
            command_cell(e),
            e.status.clone(),
            terminal(&e.host).into_owned(),
            terminal(&e.device).into_owned(),
            terminal(e.filesystem.as_deref().unwrap_or("-")).into_owned(),
            terminal(&e.headline).into_owned(),
        ]);
    }
    align_right(&mut t, [0]);
    let mut out = t.to_string();
    out.push('\n');
    out.push_str(&format!("Headline: {FIGURE_MEANING}\n"));
    if total > entries.len() {
        out.push_str(&format!(
            "{} of {total} results shown (newest first; --limit 0 shows all)\n",
            entries.len()
        ));
    }
    out
}

/// What `iolab history forget` removed, a line per result as the list names it: number,
/// time, command with its options, device and headline.
pub fn render_forgotten(gone: &[Entry]) -> String {
    let mut out = String::new();
    for e in gone {
        let device = if e.device.is_empty() { "-" } else { &e.device };
        out.push_str(&format!(
            "forgot #{} ({}, {}, {}): {}\n",
            e.id,
            short_time(&e.started_at),
            command_cell(e),
            terminal(device),
            terminal(&e.headline)
        ));
    }
    out
}

/// The list's command with its options (`run --rw randwrite --bs 4K --engine sync`), each
/// option whole and in order; a value longer than [`LONG_VALUE`] characters (a trace file's
/// path, a matrix's workload list) keeps its first 11 and last 12 characters around a `…`
/// (`/home/ann/t…y/app-1.toml`), so one value does not take the column. `show` gives them
/// uncut, as the JSON does.
fn command_cell(e: &Entry) -> String {
    let Some(o) = &e.options else {
        return terminal(&e.command).into_owned();
    };
    let words: Vec<String> = o
        .split(' ')
        .map(|w| {
            let n = w.chars().count();
            if n <= LONG_VALUE || w.starts_with("--") {
                return w.to_string();
            }
            let head: String = w.chars().take(11).collect();
            let tail: String = w.chars().skip(n - 12).collect();
            format!("{head}…{tail}")
        })
        .collect();
    terminal(&format!("{} {}", e.command, words.join(" "))).into_owned()
}

/// The longest value the list gives whole (see [`command_cell`]).
const LONG_VALUE: usize = 24;

fn summary_of(f: &Figure) -> Summary {
    Summary {
        n: f.n,
        mean: f.mean,
        median: f.median,
        stddev: f.stddev,
        ci95_low: f.ci95_low,
        ci95_high: f.ci95_high,
        ..Default::default()
    }
}

/// A figure as `show` gives it: the figure of the command's table, then the mean ± 95 %
/// half-width in brackets (`report::blocks::figure_cell`, as the report); a figure that is
/// the mean, or of one run, as mean ± half-width alone.
fn figure_text(f: &Figure) -> String {
    let s = summary_of(f);
    if f.value_of == "mean" {
        fmt_mean_ci(&f.metric, &s)
    } else {
        figure_cell(&f.metric, f.value, &s)
    }
}

/// One result: what (the command and its options, uncut), where, when, its figures (the figure of the command's table, the mean
/// ± 95 % half-width in brackets) and the health snapshot taken with it.
pub fn render_show(e: &Entry, figures: &[Figure], health: Option<&SmartInfo>) -> String {
    let mut out = format!(
        "#{} {} ({}) started {} on {}\ndevice: {}\nfile system: {}\n",
        e.id,
        terminal(&match &e.options {
            Some(o) => format!("{} {o}", e.command),
            None => e.command.clone(),
        }),
        terminal(&e.status),
        terminal(&e.started_at),
        terminal(&e.host),
        terminal(&e.device),
        terminal(e.filesystem.as_deref().unwrap_or("-")),
    );
    if let Some(s) = &e.source {
        out.push_str(&format!("result file: {}\n", terminal(s)));
    }
    if let Some(h) = health {
        out.push_str(&format!("health: {}\n", describe_health(h)));
    }
    if figures.is_empty() {
        // A slack analysis or an aging run has no per-test metric: its headline says what
        // it found (it read only "no figures").
        if e.headline.starts_with("no figures") {
            out.push_str(&format!("{}\n", e.headline));
        } else {
            out.push_str(&format!(
                "{}\nno per-test figures (the whole result: iolab history show {} --json)\n",
                e.headline, e.id
            ));
        }
        return out;
    }
    let mut t = table(&["Test", "Metric", "Figure", "Runs"]);
    // Each test's rows together, its headline metric first (marked), the name once.
    let mut tests: Vec<&str> = Vec::new();
    for f in figures {
        if !tests.contains(&f.test.as_str()) {
            tests.push(&f.test);
        }
    }
    for test in tests {
        let mut rows: Vec<&Figure> = figures.iter().filter(|f| f.test == test).collect();
        rows.sort_by_key(|f| !f.primary);
        for (i, f) in rows.into_iter().enumerate() {
            t.add_row(vec![
                if i == 0 {
                    terminal(test).into_owned()
                } else {
                    String::new()
                },
                format!(
                    "{}{}",
                    // The family's words (`ops/s` for a trace, a sustain pass's
                    // `average MB/s`), as the command's own table and the report give them.
                    label_for(&e.command, &f.metric),
                    if f.primary { " *" } else { "" }
                ),
                figure_text(f),
                f.n.to_string(),
            ]);
        }
    }
    align_right(&mut t, 2..4);
    out.push_str(&t.to_string());
    out.push_str(&format!(
        "\n* = the test's headline metric. Figure: {FIGURE_MEANING}; in brackets the mean of the runs ± the half-width of its 95 % interval\n"
    ));
    out
}

/// `SMART passed, 41 °C, 12 % of rated endurance used, 1,234 h powered on`, or why there
/// was none.
pub fn describe_health(h: &SmartInfo) -> String {
    if !h.available {
        return format!(
            "no SMART ({})",
            h.reason.as_deref().unwrap_or("not available")
        );
    }
    let mut parts = Vec::new();
    if let Some(p) = h.health_passed {
        parts.push(if p { "SMART passed" } else { "SMART FAILED" }.to_string());
    }
    if let Some(t) = h.temperature_c {
        parts.push(format!("{t} °C"));
    }
    if let Some(u) = h.percentage_used {
        parts.push(format!("{u} % of rated endurance used"));
    }
    if let Some(m) = h.media_errors.filter(|m| *m > 0) {
        parts.push(format!("{m} media errors"));
    }
    if let Some(r) = h.reallocated_sectors.filter(|r| *r > 0) {
        parts.push(format!("{r} reallocated sectors"));
    }
    if let Some(p) = h.power_on_hours {
        parts.push(format!("{p} h powered on"));
    }
    if parts.is_empty() {
        "SMART read, no health fields".into()
    } else {
        parts.join(", ")
    }
}

/// One device's SMART snapshots over time, then a line per thing that got worse between
/// the first and the last snapshot (or at the first snapshot that shows it).
pub fn render_health(device: &str, points: &[HealthPoint]) -> String {
    let mut out = format!(
        "health of {}: {} SMART snapshots\n",
        terminal(device),
        points.len()
    );
    if points.is_empty() {
        out.push_str("no SMART snapshot was taken with its results (needs root, smartctl and a physical disk; imported results have none)\n");
        return out;
    }
    let opt = |v: Option<u64>| {
        v.map(|v| fmt_thousands(v as f64))
            .unwrap_or_else(|| "-".into())
    };
    let mut t = table(&[
        "#",
        "Started (UTC)",
        "SMART",
        "°C",
        "Used",
        "Written",
        "Media errors",
        "Reallocated",
        "Power-on h",
    ]);
    for p in points {
        let s = &p.smart;
        t.add_row(vec![
            p.id.to_string(),
            short_time(&p.started_at),
            match s.health_passed {
                Some(true) => "passed".into(),
                Some(false) => "FAILED".into(),
                None => "-".into(),
            },
            s.temperature_c
                .map(|c| c.to_string())
                .unwrap_or_else(|| "-".into()),
            s.percentage_used
                .map(|u| format!("{u} %"))
                .unwrap_or_else(|| "-".into()),
            s.data_written_bytes
                .map(fmt_size_iec)
                .unwrap_or_else(|| "-".into()),
            opt(s.media_errors),
            opt(s.reallocated_sectors),
            opt(s.power_on_hours),
        ]);
    }
    align_right(&mut t, [0, 3, 4, 5, 6, 7, 8]);
    out.push_str(&t.to_string());
    out.push('\n');
    let worse = health_changes(points);
    if worse.is_empty() {
        out.push_str("nothing got worse between the snapshots\n");
    }
    for w in worse {
        out.push_str(&w);
        out.push('\n');
    }
    out
}

/// What got worse: the self-assessment failing, media errors or reallocated sectors rising,
/// endurance used rising (with the rate per 30 days).
pub fn health_changes(points: &[HealthPoint]) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(p) = points.iter().find(|p| p.smart.health_passed == Some(false)) {
        out.push(format!(
            "SMART self-assessment FAILED from #{} ({}) on: back up this drive",
            p.id,
            short_time(&p.started_at)
        ));
    }
    type Field = fn(&HealthPoint) -> Option<u64>;
    let counters: [(&str, Field); 2] = [
        ("media errors", |p| p.smart.media_errors),
        ("reallocated sectors", |p| p.smart.reallocated_sectors),
    ];
    for (name, f) in counters {
        let mut last: Option<(u64, &HealthPoint)> = None;
        for p in points {
            let Some(v) = f(p) else { continue };
            if let Some((before, _)) = last
                && v > before
            {
                out.push(format!(
                    "{name} rose from {before} to {v} at #{} ({})",
                    p.id,
                    short_time(&p.started_at)
                ));
            }
            last = Some((v, p));
        }
    }
    let used: Vec<(&HealthPoint, u64)> = points
        .iter()
        .filter_map(|p| p.smart.percentage_used.map(|u| (p, u)))
        .collect();
    if let (Some((a, ua)), Some((b, ub))) = (used.first(), used.last())
        && ub > ua
    {
        let days = match (
            chrono::DateTime::parse_from_rfc3339(&a.started_at),
            chrono::DateTime::parse_from_rfc3339(&b.started_at),
        ) {
            (Ok(x), Ok(y)) => (y - x).num_seconds() as f64 / 86_400.0,
            _ => f64::NAN,
        };
        let rate = if days > 0.0 {
            format!(", {:.1} % per 30 days", (ub - ua) as f64 / days * 30.0)
        } else {
            String::new()
        };
        out.push(format!(
            "endurance used rose from {ua} % to {ub} % between #{} and #{}{rate}",
            a.id, b.id
        ));
    }
    out
}

/// The devices and how many results each has.
pub fn render_devices(devices: &[(String, usize)]) -> String {
    if devices.is_empty() {
        return "no results in the history\n".into();
    }
    let mut t = table(&["Device", "Results"]);
    for (d, n) in devices {
        t.add_row(vec![d.clone(), n.to_string()]);
    }
    align_right(&mut t, [1]);
    format!("{t}\n")
}

/// The history's entry of each point of a trend (`None` where it cannot be found): what
/// the trend's Command column gives, here and in the console.
pub fn trend_entries(
    h: &crate::history::History,
    tr: &Trend,
) -> anyhow::Result<Vec<Option<Entry>>> {
    tr.points.iter().map(|p| h.entry(p.id)).collect()
}

/// The trend: one row per result with its command (and the options that tell two runs of it
/// apart, as the list gives them beside it; `entries` as [`trend_entries`] reads them, the
/// trend's command where one is missing), its value and interval, the change from the
/// previous point, and a mark where the level changed significantly; then one sentence per
/// change.
pub fn render_trend(tr: &Trend, entries: &[Option<Entry>]) -> String {
    let mut out = format!(
        "{} on {}: {} ({} better), {}\n",
        terminal(&tr.test),
        terminal(&tr.device),
        tr.metric_label,
        if tr.higher_is_better {
            "higher"
        } else {
            "lower"
        },
        crate::units::count(tr.points.len() as u64, "result", "results")
    );
    let mut t = table(&[
        "#",
        "Started (UTC)",
        "Command",
        "Value",
        "95 % interval",
        "Change",
        "",
    ]);
    for (i, p) in tr.points.iter().enumerate() {
        let interval = trend_interval(tr, p);
        let mut mark = trend_level(tr, p);
        // A run that stopped early: its figure stands, but the reader should know.
        if let Some(s) = &p.status {
            mark = [mark.as_str(), &format!("(run {s})")]
                .join(" ")
                .trim()
                .to_string();
        }
        t.add_row(vec![
            p.id.to_string(),
            short_time(&p.started_at),
            match entries.get(i) {
                Some(Some(e)) => command_cell(e),
                _ => terminal(&tr.command).into_owned(),
            },
            trend_value(tr, p),
            interval,
            trend_change(p),
            mark,
        ]);
    }
    align_right(&mut t, [0, 3, 4, 5]);
    out.push_str(&t.to_string());
    out.push('\n');
    let marked: Vec<_> = tr.points.iter().filter(|p| p.significant_change).collect();
    if marked.is_empty() {
        if tr.points.len() < 4 {
            out.push_str(
                "too few results to test for a change (at least two before and two after it)\n",
            );
        } else {
            out.push_str("no significant change\n");
        }
    }
    for p in marked {
        let c = p.level_change_pct.unwrap_or(f64::NAN);
        out.push_str(&format!(
            "{} changed at #{} ({}): {} by {:.1} % (Welch p = {})\n",
            tr.test,
            p.id,
            short_time(&p.started_at),
            word(tr.higher_is_better, c),
            c.abs(),
            fmt_p(p.p_value.unwrap_or(f64::NAN)),
        ));
    }
    out.push_str(&trend_explanation(tr));
    out.push('\n');
    out
}

fn fmt_p(p: f64) -> String {
    if p < 1e-4 {
        format!("{p:.1e}")
    } else {
        format!("{p:.4}")
    }
}

/// Where a trend's test was measured with other settings than at the point before (a
/// `--size`, `--ramp`, queue depth, ...): the point's id, the one before and the settings
/// that differ (`size_bytes 16MiB vs 8MiB`). Its change against that point may come from them, as
/// `iolab compare` warns for two files; the trend said nothing of it. Points whose
/// document or test cannot be read are skipped.
pub fn trend_settings_changes(
    h: &crate::history::History,
    tr: &Trend,
) -> anyhow::Result<Vec<(i64, i64, String)>> {
    use crate::report::metrics::{all_tests, config_of, display_name, test_name};
    use crate::report::settings::{differences, recorded};
    let mut out = Vec::new();
    let mut prev: Option<(i64, std::collections::BTreeMap<String, String>)> = None;
    for p in &tr.points {
        let Some(doc) = h.get(p.id)? else {
            prev = None;
            continue;
        };
        let found = all_tests(&doc).into_iter().find_map(|t| {
            let config = config_of(&doc, t).unwrap_or_default();
            let name = test_name(&doc, t);
            (name == tr.test || display_name(Some(&config), &name) == tr.test)
                .then(|| recorded(&doc, &config, t))
        });
        if let (Some((before_id, before)), Some(now)) = (&prev, &found) {
            let d = differences(before, now);
            if !d.is_empty() {
                let what: Vec<String> = d.iter().map(|x| x.describe()).collect();
                out.push((p.id, *before_id, what.join(", ")));
            }
        }
        prev = found.map(|f| (p.id, f));
    }
    Ok(out)
}

/// The lines saying where a trend's settings changed (`trend_settings_changes`).
pub fn render_settings_changes(changes: &[(i64, i64, String)]) -> String {
    changes
        .iter()
        .map(|(id, before, what)| {
            format!(
                "warning [settings-differ] #{id}: measured with other settings than #{before} ({what}, #{before} vs #{id}): its change may come from them rather than from the device\n"
            )
        })
        .collect()
}

/// A trend point's value as the trend's table prints it (the console shows the same).
/// A point's Change against the previous result, as the trend's table and the console word
/// it (`crate::report::metrics::fmt_change_pct`).
pub fn trend_change(p: &TrendPoint) -> String {
    p.change_pct
        .map(|c| crate::report::metrics::fmt_change_pct(c, None))
        .unwrap_or_default()
}

/// The mark of a point where the level changed for good: `◆ -25.2 % (slower)`.
pub fn trend_level(tr: &Trend, p: &TrendPoint) -> String {
    match p.level_change_pct {
        Some(c) if p.significant_change => format!(
            "◆ {} ({})",
            crate::report::metrics::fmt_change_pct(c, None),
            word(tr.higher_is_better, c)
        ),
        _ => String::new(),
    }
}

pub fn trend_value(tr: &Trend, p: &TrendPoint) -> String {
    fmt_value(&tr.metric, p.value)
}

/// A trend point's 95 % interval as the trend's table prints it.
pub fn trend_interval(tr: &Trend, p: &TrendPoint) -> String {
    match (p.ci_low, p.ci_high) {
        // As `iolab compare`: a rate or a time cannot be negative, so an interval that
        // reaches below zero (two runs far apart) says nothing.
        (Some(l), Some(_)) if p.value > 0.0 && l < 0.0 => "too wide".to_string(),
        (Some(l), Some(h)) => format!(
            "{} … {}",
            fmt_value(&tr.metric, l),
            fmt_value(&tr.metric, h)
        ),
        _ => format!("(n={})", p.n),
    }
}

/// `slower` / `faster` for a change of `pct` percent.
fn word(higher_is_better: bool, pct: f64) -> &'static str {
    if (pct >= 0.0) == higher_is_better {
        "faster"
    } else {
        "slower"
    }
}

/// What the columns and the mark mean (printed under every trend): Value is the figure the
/// run's own table gives (`Trend::value_of`); the interval and the change test are of the
/// mean over the repeats, and say so.
pub fn trend_explanation(tr: &Trend) -> String {
    let value = match tr.value_of.as_str() {
        "mean" => "mean of the run's repeats",
        "best run" => "best of the run's repeats (a peak test)",
        _ => "median of the run's repeats",
    };
    format!(
        "Value = {value}, as the run's own table gives it; 95 % interval = of the mean of the repeats (\"too wide\" when it reaches below zero: few runs, far apart); Change = Value against the previous result's. ◆ = the level changed here for good: the means of the results from here on differ from those before by Welch's t-test at 95 % (as iolab compare), by at least 5 % and three times the noise between runs (its % compares the levels' means); a change is marked once two results show it."
    )
}

/// CSV columns of `iolab history export --format csv` (`value`: the figure the command's
/// table gives, `value_of`: which one it is; `options`: the options that tell two runs of
/// one command apart, uncut, as `history show` gives them beside the command (two runs
/// with another `--bs` had the same rows); each added last, so the older columns keep
/// their place).
pub const CSV_COLUMNS: [&str; 20] = [
    "id",
    "started_at",
    "command",
    "status",
    "host",
    "device",
    "filesystem",
    "source",
    "test",
    "metric",
    "primary",
    "n",
    "mean",
    "median",
    "stddev",
    "ci95_low",
    "ci95_high",
    "value",
    "value_of",
    "options",
];

/// One row per result, test and metric, raw values in base units.
pub fn render_csv(rows: &[(Entry, Figure)]) -> String {
    let mut out = CSV_COLUMNS.join(",");
    out.push('\n');
    for (e, f) in rows {
        let cells = [
            e.id.to_string(),
            e.started_at.clone(),
            e.command.clone(),
            e.status.clone(),
            e.host.clone(),
            e.device.clone(),
            e.filesystem.clone().unwrap_or_default(),
            e.source.clone().unwrap_or_default(),
            f.test.clone(),
            f.metric.clone(),
            (f.primary as u8).to_string(),
            f.n.to_string(),
            f.mean.to_string(),
            f.median.to_string(),
            f.stddev.to_string(),
            f.ci95_low.to_string(),
            f.ci95_high.to_string(),
            f.value.to_string(),
            f.value_of.clone(),
            e.options.clone().unwrap_or_default(),
        ];
        out.push_str(&cells.iter().map(|c| field(c)).collect::<Vec<_>>().join(","));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A complete `run` on host `h`, device `d`, at the start of 2026, with no headline.
    fn entry() -> Entry {
        Entry {
            id: 1,
            started_at: "2026-01-01T00:00:00.000Z".into(),
            command: "run".into(),
            status: "complete".into(),
            host: "h".into(),
            device: "d".into(),
            filesystem: None,
            headline: String::new(),
            source: None,
            options: None,
        }
    }

    /// Result `id` of a trend, on the `id`th of January, one repeat, no interval and no
    /// change.
    fn point(id: i64, value: f64) -> TrendPoint {
        TrendPoint {
            id,
            started_at: format!("2026-01-0{id}T00:00:00.000Z"),
            status: None,
            value,
            n: 1,
            ci_low: None,
            ci_high: None,
            significant_change: false,
            change_pct: None,
            level_change_pct: None,
            p_value: None,
        }
    }

    /// The trend of `RND4K Q1T1 read`'s `metric` on device `d`.
    fn trend(metric: &str, label: &str, higher_is_better: bool, points: Vec<TrendPoint>) -> Trend {
        Trend {
            device: "d".into(),
            test: "RND4K Q1T1 read".into(),
            metric: metric.into(),
            command: "run".into(),
            metric_label: label.into(),
            value_of: "median".into(),
            higher_is_better,
            points,
        }
    }

    #[test]
    fn csv_quotes_what_needs_it() {
        let e = Entry {
            device: "ACME, Inc. SSD (serial 1)".into(),
            ..entry()
        };
        let f = Figure {
            test: "SEQ1M Q8T1 read".into(),
            metric: "bw_bytes_per_s".into(),
            primary: true,
            n: 3,
            value: 1.5e9,
            value_of: "median".into(),
            mean: 1.5e9,
            median: 1.5e9,
            stddev: 1e7,
            ci95_low: 1.4e9,
            ci95_high: 1.6e9,
        };
        let other = Entry {
            options: Some("--bs 8K --rw randread,randwrite".into()),
            ..e.clone()
        };
        let csv = render_csv(&[(e, f.clone()), (other, f)]);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0].split(',').count(), CSV_COLUMNS.len());
        assert!(lines[1].contains("\"ACME, Inc. SSD (serial 1)\""), "{csv}");
        // The options, last: two runs of one command with another --bs are told apart (a
        // comma in a value is quoted); none is an empty cell.
        assert!(lines[0].ends_with(",value_of,options"), "{csv}");
        assert!(lines[1].ends_with(",median,"), "{csv}");
        assert!(
            lines[2].ends_with(",median,\"--bs 8K --rw randread,randwrite\""),
            "{csv}"
        );
        assert_eq!(short_time("2026-01-31T12:34:56.789Z"), "2026-01-31 12:34");
    }

    /// Two runs of one command with other options read alike in the list: the command
    /// column gives the options that tell them apart.
    #[test]
    fn the_list_gives_the_options_beside_the_command() {
        let e = Entry {
            options: Some("--preset real --size 1M".into()),
            ..entry()
        };
        let text = render_list(&[e, entry()], 2);
        assert!(text.contains("┆ run --preset real --size 1M ┆"), "{text}");
        let second = text.lines().nth(4).unwrap();
        assert_eq!(
            second.split('┆').nth(2).map(str::trim),
            Some("run"),
            "{text}"
        );
    }

    /// Many options stay whole and in order; a long value (a trace file's path) is cut
    /// in its middle in the list, and given whole by `show`.
    #[test]
    fn the_list_cuts_a_long_value_in_its_middle() {
        let e = Entry {
            command: "trace".into(),
            options: Some(
                "replay /home/ann/traces/nightly/app-1.toml --timing as-fast --repeat 5".into(),
            ),
            ..entry()
        };
        let text = render_list(std::slice::from_ref(&e), 1);
        assert!(
            text.contains("trace replay /home/ann/t…y/app-1.toml --timing as-fast --repeat 5"),
            "{text}"
        );
        let shown = render_show(&e, &[], None);
        assert!(
            shown.starts_with(
                "#1 trace replay /home/ann/traces/nightly/app-1.toml --timing as-fast --repeat 5 (complete)"
            ),
            "{shown}"
        );
    }

    /// `history show` of a slack analysis or an aging run said only "no figures"; it now
    /// gives the headline (what the run found) and where the whole result is.
    #[test]
    fn show_without_figures_gives_the_headline() {
        let mut e = Entry {
            id: 9,
            command: "age".into(),
            filesystem: Some("ext4".into()),
            headline: "aged (source-tree): 50.0 % full, layout score 0.998".into(),
            ..entry()
        };
        let text = render_show(&e, &[], None);
        assert!(
            text.contains("aged (source-tree): 50.0 % full, layout score 0.998\n"),
            "{text}"
        );
        assert!(text.contains("iolab history show 9 --json"), "{text}");
        e.headline = "no figures (interrupted)".into();
        let text = render_show(&e, &[], None);
        assert!(text.ends_with("\nno figures (interrupted)\n"), "{text}");
    }

    /// A latency that rose is slower; the mark and the sentence say so.
    #[test]
    fn a_rising_latency_is_a_slowdown() {
        let marked = TrendPoint {
            significant_change: true,
            level_change_pct: Some(30.0),
            p_value: Some(0.001),
            ..point(2, 130.0)
        };
        let t = trend(
            "lat_mean_ns",
            "mean latency",
            false,
            vec![point(1, 100.0), marked],
        );
        let text = render_trend(&t, &[]);
        assert!(text.contains("◆ +30.0 % (slower)"), "{text}");
        assert!(
            text.contains("changed at #2 (2026-01-02 00:00): slower by 30.0 %"),
            "{text}"
        );
        assert!(text.contains("(lower better)"), "{text}");
    }

    /// The trend's rows give each result's command with its options, as the console's
    /// trend and the list do (a long value cut as the list cuts it); a point whose entry
    /// is missing gives the trend's command. Runs of another `--size` looked alike.
    #[test]
    fn the_trend_gives_each_result_s_command_and_options() {
        let with = |id: i64, options: &str| {
            Some(Entry {
                id,
                options: Some(options.into()),
                ..entry()
            })
        };
        let t = trend(
            "iops",
            "IOPS",
            true,
            vec![point(1, 100.0), point(2, 100.0), point(3, 50.0)],
        );
        let entries = [
            with(1, "--size 64M"),
            None,
            with(3, "--size 256M --profile /home/ann/profiles/nightly.toml"),
        ];
        let text = render_trend(&t, &entries);
        let cells: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("│ "))
            .filter_map(|l| l.split('┆').nth(2).map(str::trim))
            .collect();
        assert_eq!(
            cells,
            [
                "Command",
                "run --size 64M",
                "run",
                "run --size 256M --profile /home/ann/p…nightly.toml"
            ],
            "{text}"
        );
    }

    /// Two repeats far apart: the 95 % interval (t = 12.7) reaches below zero, which IOPS
    /// cannot; the table says "too wide" as `iolab compare` does, not "-121,835 … 189,743".
    #[test]
    fn an_interval_below_zero_is_too_wide() {
        let with_ci = |id: i64, value: f64, low: f64, high: f64| TrendPoint {
            n: 2,
            ci_low: Some(low),
            ci_high: Some(high),
            ..point(id, value)
        };
        let t = trend(
            "iops",
            "IOPS",
            true,
            vec![
                with_ci(1, 33_954.0, -121_835.0, 189_743.0),
                with_ci(2, 32_000.0, 31_000.0, 33_000.0),
            ],
        );
        let text = render_trend(&t, &[]);
        assert!(text.contains("too wide"), "{text}");
        assert!(!text.contains("-121,835"), "{text}");
        assert!(text.contains("31,000 … 33,000"), "{text}");
    }
}

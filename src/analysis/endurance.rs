//! SSD endurance: how long a drive rated for N terabytes written (TBW) lasts at a daily write
//! volume, with the write amplification a workload was measured to cause (the table of the
//! "how to check disk speed" article: 80,000 GB at 20 GB/day = 4,000 days = 10.95 years).

use crate::model::ResultDoc;
use crate::model::device::EnduranceReport;

/// Days in a year for lifetimes (that table uses 365.25: 4,000 days = 10.95 years).
pub const DAYS_PER_YEAR: f64 = 365.25;

/// Lifetimes beyond this many years are shown as "more than" it: a tiny write amplification
/// (a measured one where the device saw almost nothing, or `--wa 1e-20`) or 1 B/day printed
/// a figure of hundreds of digits. The JSON keeps the computed days and years.
pub const LONGEST_SHOWN_YEARS: f64 = 1000.0;

/// A write amplification for text: two decimals, or two significant digits below 0.01
/// (`--wa 1e-20` read `0.00`).
pub fn fmt_wa(wa: f64) -> String {
    if wa >= 0.01 || wa == 0.0 || !wa.is_finite() {
        format!("{wa:.2}")
    } else {
        format!("{wa:.1e}")
    }
}

/// What goes into the lifetime.
#[derive(Debug, Clone, PartialEq)]
pub struct EnduranceInput {
    pub tbw_bytes: u64,
    pub daily_app_bytes: u64,
    pub write_amplification: f64,
    /// 0..=100 (SMART may report more than 100 for a worn-out drive: then nothing remains).
    pub used_pct: f64,
}

/// Days and years until the rated TBW is reached.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lifetime {
    pub daily_device_bytes: f64,
    pub remaining_bytes: f64,
    pub days: f64,
    pub years: f64,
}

pub fn lifetime(i: &EnduranceInput) -> Lifetime {
    let daily_device_bytes = i.daily_app_bytes as f64 * i.write_amplification;
    let remaining_bytes = i.tbw_bytes as f64 * (1.0 - i.used_pct.clamp(0.0, 100.0) / 100.0);
    let days = if daily_device_bytes > 0.0 {
        remaining_bytes / daily_device_bytes
    } else {
        f64::INFINITY
    };
    Lifetime {
        daily_device_bytes,
        remaining_bytes,
        days,
        years: days / DAYS_PER_YEAR,
    }
}

/// Write amplification measured in a result file: device-written bytes over app-written
/// bytes, summed over every run that has both (so big phases weigh more than small ones).
/// Also per test. `None` when no run of the file measured it.
pub fn measured_wa(doc: &ResultDoc, test: Option<&str>) -> Option<(f64, Vec<(String, f64)>)> {
    let (mut dev_total, mut app_total) = (0.0, 0.0);
    let mut per_test = Vec::new();
    // A matrix keeps its tests under its configurations.
    for t in doc
        .tests
        .iter()
        .chain(doc.configurations.iter().flat_map(|c| c.tests.iter()))
        .filter(|t| test.is_none_or(|n| t.name == n))
    {
        let (mut dev, mut app) = (0.0, 0.0);
        for r in &t.runs {
            if let (Some(wa), Some(dc)) = (r.write_amplification, &r.device)
                && wa > 0.0
            {
                dev += dc.write_bytes as f64;
                app += dc.write_bytes as f64 / wa;
            }
        }
        if app > 0.0 {
            let label = match &t.config {
                Some(c) => format!("{} [{c}]", t.name),
                None => t.name.clone(),
            };
            per_test.push((label, dev / app));
            dev_total += dev;
            app_total += app;
        }
    }
    (app_total > 0.0).then(|| (dev_total / app_total, per_test))
}

/// A measured write amplification just below 1 taken as 1, with the note that says so:
/// `--from` a 1 MiB O_DIRECT write on a raw loop device gave 0.99 (a lifetime of 11.03 years
/// for 10.95). The device counters' window and iolab's own count of the bytes written did not
/// open at the same instant: a measured window opened when the ramp ended, but the counters
/// were read when the thread that reads them woke up, so writes completed in between were
/// iolab's and not the device's. A block test now reads both over the same span
/// (`runner::block`: 1.0000 in ten direct-write runs on a loop device, where the same runs
/// read 0.9979–1.0000 before), so the floor is for results written before, whose gap was
/// under a percent; a figure further below 1 ([`COUNTING_GAP`]) is what the device did
/// (writes the page cache merged or a file system compressed or deduplicated never reached
/// it) and is kept, with a note that says so.
/// `per_test` is floored alike; the notes give the figures measured.
pub fn at_least_one(wa: f64, per_test: &mut [(String, f64)]) -> (f64, Vec<String>) {
    let near = |w: f64| (COUNTING_GAP..1.0).contains(&w);
    let named = |keep: &dyn Fn(f64) -> bool| -> Vec<String> {
        let mut out: Vec<String> = per_test
            .iter()
            .filter(|(_, w)| keep(*w))
            .map(|(name, w)| format!("{name} {}", below_one(*w)))
            .collect();
        if keep(wa) && per_test.len() != 1 {
            let all = if per_test.is_empty() { "" } else { "all " };
            out.insert(0, format!("{all}{}", below_one(wa)));
        }
        out
    };
    let (floored, absorbed) = (named(&near), named(&|w| w < COUNTING_GAP));
    let mut notes = Vec::new();
    if !floored.is_empty() {
        notes.push(format!(
            "write amplification measured just below 1.0 ({}): the device counters' window and iolab's count of the bytes written are not read at the same instant; taken as 1.00",
            floored.join(", ")
        ));
    }
    if !absorbed.is_empty() {
        notes.push(format!(
            "write amplification below 1.0 ({}): the device wrote less than the test gave it (the page cache merged writes, or the file system compressed or deduplicated them); the lifetime is for that figure, which other data may not reach",
            absorbed.join(", ")
        ));
    }
    for (_, w) in per_test.iter_mut() {
        if near(*w) {
            *w = 1.0;
        }
    }
    (if near(wa) { 1.0 } else { wa }, notes)
}

/// The least write amplification below 1 that is taken for the gap between the two counts
/// rather than for what the device did.
const COUNTING_GAP: f64 = 0.99;

/// A figure just below 1 in four decimals: `fmt_wa`'s two rounded 0.9992 to "1.00", and the
/// note said "measured below 1.0 (SEQ1M Q8T1 write 1.00)".
fn below_one(wa: f64) -> String {
    format!("{wa:.4}")
}

/// The tests of `measured_wa` (same labels) whose device wrote clearly more than the test
/// did in one of their runs while the result warned `device-extra-io` for them: other
/// programs' writes (or the file system's own) are in their write amplification, so a
/// lifetime from it is too short. On a busy machine a direct-I/O `iolab run` measured WA
/// 11.3 for RND4K Q32T1 write, and endurance took it without a word.
pub fn foreign_writes(doc: &ResultDoc, test: Option<&str>) -> Vec<String> {
    use crate::model::warning::WarningCode;
    doc.tests
        .iter()
        .chain(doc.configurations.iter().flat_map(|c| c.tests.iter()))
        .filter(|t| test.is_none_or(|n| t.name == n))
        .filter(|t| {
            doc.warnings
                .iter()
                .any(|w| w.code == WarningCode::DeviceExtraIo && w.test.as_deref() == Some(&t.name))
        })
        .filter(|t| {
            t.runs
                .iter()
                .any(|r| match (r.write_amplification, &r.device) {
                    (Some(wa), Some(dc)) if wa > 0.0 => {
                        let app = (dc.write_bytes as f64 / wa).round() as u64;
                        crate::sysinfo::diskstats::clearly_more(dc.write_bytes, app)
                    }
                    _ => false,
                })
        })
        .map(|t| match &t.config {
            Some(c) => format!("{} [{c}]", t.name),
            None => t.name.clone(),
        })
        .collect()
}

/// Years of lifetime as the table and the sentence both say them: `10.95`.
pub fn fmt_years(years: f64) -> String {
    format!("{years:.2}")
}

/// SI size for sentences, as drives are rated: `80 TB`, `31 GB`, `2.5 GB`, `750 MB`.
pub fn fmt_si(bytes: f64) -> String {
    for (unit, name) in [
        (1e15, "PB"),
        (1e12, "TB"),
        (1e9, "GB"),
        (1e6, "MB"),
        (1e3, "kB"),
    ] {
        if bytes >= unit {
            return format!("{} {name}", trim_num(bytes / unit));
        }
    }
    format!("{} B", trim_num(bytes))
}

/// Three significant digits at most, no trailing zeros: 80 -> `80`, 31.04 -> `31`,
/// 2.5 -> `2.5`, 1.234 -> `1.23`.
fn trim_num(v: f64) -> String {
    let decimals = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The whole report, with its one-sentence answer. `wa_source` says where the write
/// amplification came from (`assumed` = 1), `used_source` where the used percentage did.
pub fn report(
    i: &EnduranceInput,
    wa_source: &str,
    used_source: &str,
    today: Option<chrono::NaiveDate>,
) -> EnduranceReport {
    let l = lifetime(i);
    let daily = fmt_si(i.daily_app_bytes as f64);
    let rated = fmt_si(i.tbw_bytes as f64);
    let span = if l.days.is_finite() && l.years > LONGEST_SHOWN_YEARS {
        format!(
            "more than {} years",
            crate::units::fmt_thousands(LONGEST_SHOWN_YEARS)
        )
    } else if l.days.is_finite() && l.years < 1.0 {
        // "0.0 years (1 days)" said nothing: under a year the days are the answer.
        let decimals = if l.days < 10.0 { 1 } else { 0 };
        format!("{:.decimals$} days", l.days)
    } else if l.days.is_finite() {
        // The table's figure: "11.0 years" stood under a table saying 10.95.
        format!("{} years ({:.0} days)", fmt_years(l.years), l.days)
    } else {
        "never (nothing is written)".into()
    };
    let reach = if l.remaining_bytes <= 0.0 {
        // Nothing left: it does not reach its rating "in 0.0 years", it is there.
        format!("has already used all of its rated {rated}")
    } else if i.used_pct > 0.0 {
        // `--used 0.4%` is 0.4 %, not "0 %" (whole percentages stay whole: SMART's).
        let used = format!("{:.2}", i.used_pct);
        let used = used.trim_end_matches('0').trim_end_matches('.');
        format!(
            "reaches its rated {rated} ({} left after {used} % used) in {span}",
            fmt_si(l.remaining_bytes),
        )
    } else {
        format!("reaches its rated {rated} in {span}")
    };
    let sentence = if wa_source == "assumed" {
        format!("at {daily}/day the device {reach}")
    } else if wa_source == "--wa" {
        format!(
            "at {daily}/day with write amplification {} the device writes {}/day and {reach}",
            fmt_wa(i.write_amplification),
            fmt_si(l.daily_device_bytes)
        )
    } else {
        format!(
            "at {daily}/day of this workload (write amplification {}) the device writes {}/day and {reach}",
            fmt_wa(i.write_amplification),
            fmt_si(l.daily_device_bytes)
        )
    };
    let end_date = today
        .filter(|_| l.days.is_finite() && l.days < 1e6)
        .and_then(|d| d.checked_add_days(chrono::Days::new(l.days.floor() as u64)))
        .map(|d| d.format("%Y-%m-%d").to_string());
    EnduranceReport {
        tbw_bytes: i.tbw_bytes,
        daily_app_bytes: i.daily_app_bytes,
        write_amplification: i.write_amplification,
        write_amplification_source: wa_source.into(),
        daily_device_bytes: l.daily_device_bytes,
        used_pct: i.used_pct,
        used_source: used_source.into(),
        remaining_bytes: l.remaining_bytes,
        days: l.days,
        years: l.years,
        end_date,
        sentence,
        per_test: Vec::new(),
        notes: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GB: u64 = 1_000_000_000;

    fn life(tbw_gb: u64, daily_gb: u64) -> Lifetime {
        lifetime(&EnduranceInput {
            tbw_bytes: tbw_gb * GB,
            daily_app_bytes: daily_gb * GB,
            write_amplification: 1.0,
            used_pct: 0.0,
        })
    }

    /// The "how to check disk speed" article's table: 240 GB drives rated 80,000 GB at 20
    /// and 30 GB/day, a 120 GB drive rated 40,000 GB at 9 GB/day.
    #[test]
    fn tbw_lifetime_table() {
        // The last: the same 80,000 GB drive at 9 GB/day.
        for (tbw, per_day, days, years) in [
            (80_000, 20, 4000.0, "10.95"),
            (80_000, 30, 2_666.666_666, "7.30"),
            (40_000, 9, 4444.444, "12.17"),
            (80_000, 9, 8888.889, "24.34"),
        ] {
            let l = life(tbw, per_day);
            assert!(
                (l.days - days).abs() < 1e-3,
                "{tbw} at {per_day}: {}",
                l.days
            );
            assert_eq!(format!("{:.2}", l.years), years);
        }
    }

    #[test]
    fn amplification_and_wear_shorten_life() {
        let i = EnduranceInput {
            tbw_bytes: 80_000 * GB,
            daily_app_bytes: 20 * GB,
            write_amplification: 1.55,
            used_pct: 0.0,
        };
        let l = lifetime(&i);
        assert!((l.daily_device_bytes - 31.0 * GB as f64).abs() < 1.0);
        assert_eq!(format!("{:.1}", l.years), "7.1");
        let r = report(&i, "result.json", "none", None);
        assert_eq!(
            r.sentence,
            "at 20 GB/day of this workload (write amplification 1.55) the device writes 31 GB/day and reaches its rated 80 TB in 7.07 years (2581 days)"
        );
        let worn = lifetime(&EnduranceInput {
            used_pct: 50.0,
            write_amplification: 1.0,
            ..i.clone()
        });
        assert!((worn.days - 2000.0).abs() < 1e-9);
        let by_hand = report(&i, "--wa", "none", None);
        assert!(
            by_hand.sentence.starts_with(
                "at 20 GB/day with write amplification 1.55 the device writes 31 GB/day"
            ),
            "{}",
            by_hand.sentence
        );
        let dead = lifetime(&EnduranceInput {
            used_pct: 130.0,
            ..i
        });
        assert_eq!(dead.days, 0.0);
    }

    #[test]
    fn end_date_and_plain_sentence() {
        let i = EnduranceInput {
            tbw_bytes: 80_000 * GB,
            daily_app_bytes: 20 * GB,
            write_amplification: 1.0,
            used_pct: 0.0,
        };
        let today = chrono::NaiveDate::from_ymd_opt(2026, 1, 1);
        let r = report(&i, "assumed", "none", today);
        assert_eq!(
            r.sentence,
            "at 20 GB/day the device reaches its rated 80 TB in 10.95 years (4000 days)"
        );
        assert_eq!(r.end_date.as_deref(), Some("2036-12-14"));
    }

    /// Under a year the sentence said "in 0.0 years (1 days)" beside a table saying 0.8
    /// days; a device with nothing left "reached its rating in 0.0 years (0 days)".
    #[test]
    fn short_and_spent_lifetimes_are_said_plainly() {
        let i = EnduranceInput {
            tbw_bytes: 80_000 * GB,
            daily_app_bytes: 100_000 * GB,
            write_amplification: 1.0,
            used_pct: 0.0,
        };
        let r = report(&i, "assumed", "none", None);
        assert!(r.sentence.ends_with("in 0.8 days"), "{}", r.sentence);
        let r = report(
            &EnduranceInput {
                daily_app_bytes: 400 * GB,
                ..i
            },
            "assumed",
            "none",
            None,
        );
        assert!(r.sentence.ends_with("in 200 days"), "{}", r.sentence);
        let r = report(
            &EnduranceInput {
                daily_app_bytes: 20 * GB,
                used_pct: 100.0,
                ..i
            },
            "assumed",
            "--used",
            None,
        );
        assert_eq!(
            r.sentence,
            "at 20 GB/day the device has already used all of its rated 80 TB"
        );
    }

    /// A test whose device wrote far more than it did (the result warned device-extra-io
    /// and the counters show it) is named; one warned only for the device's reads, or
    /// within the margin, is not.
    #[test]
    fn tests_with_foreign_writes_are_named() {
        use crate::model::device::DeviceCounters;
        use crate::model::warning::WarningCode;
        use crate::model::{RunResult, TestResult, Warning};
        const MIB: u64 = 1 << 20;
        let test = |name: &str, app: u64, dev: u64| TestResult {
            name: name.into(),
            runs: vec![RunResult {
                run: 1,
                device: Some(DeviceCounters {
                    write_bytes: dev,
                    ..Default::default()
                }),
                write_amplification: Some(dev as f64 / app as f64),
                ..Default::default()
            }],
            ..Default::default()
        };
        let mut doc = ResultDoc::new("run", Vec::new(), Default::default());
        // 219 MiB written by the test, 3.2 GiB by the device (a busy machine's vda).
        doc.tests
            .push(test("RND4K Q32T1 write", 219 * MIB, 3277 * MIB));
        // Warned for the device's reads only: its writes are the test's.
        doc.tests
            .push(test("SEQ1M Q8T1 write", 512 * MIB, 522 * MIB));
        // Not warned.
        doc.tests.push(test("RND4K Q1T1 write", 26 * MIB, 27 * MIB));
        for name in ["RND4K Q32T1 write", "SEQ1M Q8T1 write"] {
            doc.warn(Warning {
                code: WarningCode::DeviceExtraIo,
                message: "vda ...".into(),
                test: Some(name.into()),
            });
        }
        assert_eq!(foreign_writes(&doc, None), vec!["RND4K Q32T1 write"]);
        assert!(foreign_writes(&doc, Some("SEQ1M Q8T1 write")).is_empty());
    }

    /// `--from` a 1 MiB O_DIRECT write on a raw loop device gave write amplification 0.99:
    /// floored at 1.00 with a note giving the measured figure; 1 and above are kept.
    #[test]
    fn a_write_amplification_below_one_is_taken_as_one_with_a_note() {
        let mut per_test = vec![("SEQ1M Q8T1 write".to_string(), 0.9912)];
        let (wa, note) = at_least_one(0.9912, &mut per_test);
        assert_eq!(wa, 1.0);
        assert_eq!(per_test[0].1, 1.0);
        assert_eq!(note.len(), 1, "{note:?}");
        assert!(
            note[0].starts_with(
                "write amplification measured just below 1.0 (SEQ1M Q8T1 write 0.9912): "
            ),
            "{note:?}"
        );
        let (_, note) = at_least_one(0.99928, &mut [("w".to_string(), 0.99928)]);
        assert!(note[0].contains("(w 0.9993)"));
        // Two tests, one below: the total is kept, the test floored and named.
        let mut per_test = vec![("a".to_string(), 0.995), ("b".to_string(), 1.5)];
        let (wa, note) = at_least_one(1.2, &mut per_test);
        assert_eq!((wa, per_test[0].1, per_test[1].1), (1.2, 1.0, 1.5));
        assert!(note[0].contains("(a 0.9950)"), "{note:?}");
        let mut per_test = vec![("a".to_string(), 1.0), ("b".to_string(), 1.5)];
        assert_eq!(at_least_one(1.2, &mut per_test), (1.2, Vec::new()));
        // Far below 1 the device really wrote less (compression, merged writes): kept; so is
        // 0.98, under the floor of 0.99 (it was floored while the floor was 0.95).
        for (w, named) in [(0.31, "c 0.3100"), (0.98, "c 0.9800")] {
            let mut per_test = vec![("c".to_string(), w)];
            let (wa, note) = at_least_one(w, &mut per_test);
            assert_eq!((wa, per_test[0].1), (w, w));
            assert!(
                note[0].starts_with(&format!(
                    "write amplification below 1.0 ({named}): the device wrote less"
                )),
                "{note:?}"
            );
        }
        // The lifetime with it is the one at 1.0: no device outlives its rated TBW.
        let input = |wa| EnduranceInput {
            tbw_bytes: 80_000 * GB,
            daily_app_bytes: 20 * GB,
            write_amplification: wa,
            used_pct: 0.0,
        };
        let (wa, _) = at_least_one(0.99, &mut []);
        assert_eq!(
            report(&input(wa), "r.json", "none", None).years,
            report(&input(1.0), "r.json", "none", None).years
        );
    }

    /// A matrix result keeps its tests under its configurations: their runs count too
    /// (`--from` a matrix said "no run in it measured write amplification").
    #[test]
    fn a_matrix_result_s_write_amplification() {
        use crate::model::device::DeviceCounters;
        use crate::model::{RunResult, TestResult, matrix::ConfigurationResult};
        let mut doc = ResultDoc::new("matrix", Vec::new(), Default::default());
        let run = RunResult {
            run: 1,
            device: Some(DeviceCounters {
                write_bytes: 300,
                ..Default::default()
            }),
            write_amplification: Some(1.5),
            ..Default::default()
        };
        doc.configurations.push(ConfigurationResult {
            label: "ext4 4KiB".into(),
            tests: vec![TestResult {
                name: "4KiB create".into(),
                config: Some("ext4 4KiB".into()),
                runs: vec![run],
                ..Default::default()
            }],
            ..Default::default()
        });
        let (wa, per_test) = measured_wa(&doc, None).expect("measured");
        assert!((wa - 1.5).abs() < 1e-9, "{wa}");
        assert_eq!(per_test[0].0, "4KiB create [ext4 4KiB]");
        assert!(measured_wa(&doc, Some("4KiB create")).is_some());
    }

    /// `--wa 1e-20` or 1 B/day on an 18,000 PB drive printed lifetimes of hundreds of
    /// digits and "write amplification 0.00".
    #[test]
    fn absurd_lifetimes_are_capped_in_text() {
        let i = EnduranceInput {
            tbw_bytes: 600_000 * GB,
            daily_app_bytes: 20 * GB,
            write_amplification: 1e-20,
            used_pct: 0.0,
        };
        let r = report(&i, "--wa", "none", None);
        assert_eq!(
            r.sentence,
            "at 20 GB/day with write amplification 1.0e-20 the device writes 0 B/day and reaches its rated 600 TB in more than 1,000 years"
        );
        assert!(r.years > 1e20, "the JSON keeps the figure: {}", r.years);
        assert_eq!(fmt_wa(1.55), "1.55");
        assert_eq!(fmt_wa(0.5), "0.50");
        // Just under the cap keeps its figures.
        let i = EnduranceInput {
            tbw_bytes: 7_000_000 * GB,
            daily_app_bytes: 20 * GB,
            write_amplification: 1.0,
            used_pct: 0.0,
        };
        assert!(
            report(&i, "assumed", "none", None)
                .sentence
                .ends_with("in 958.25 years (350000 days)")
        );
    }

    #[test]
    fn si_sizes() {
        for (bytes, want) in [
            (80e12, "80 TB"),
            (31.04e9, "31 GB"),
            (2.5e9, "2.5 GB"),
            (1.234e9, "1.23 GB"),
            (999.0, "999 B"),
        ] {
            assert_eq!(fmt_si(bytes), want, "{bytes}");
        }
    }
}

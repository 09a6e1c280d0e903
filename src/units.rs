//! Sizes, durations and rates: parsing user input and formatting results.
//!
//! Size suffixes (case-insensitive letter, optional `B`):
//! - `k`, `m`, `g`, `t` and `KiB`, `MiB`, `GiB`, `TiB` are **powers of two** (IEC, like fio):
//!   `4k` = `4KiB` = 4096 bytes.
//! - `kB`, `KB`, `MB`, `GB`, `TB` are **powers of ten** (SI): `1MB` = 1,000,000 bytes.
//!
//! Rates in tables are shown in MB/s = 10^6 bytes per second (as CrystalDiskMark and fio's
//! "MB/s" do); the result model always stores bytes per second.

use std::time::Duration;

use thiserror::Error;

/// Why a size or a duration could not be parsed.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum UnitError {
    #[error("empty value")]
    Empty,
    #[error("'{0}' is not a size (examples: 4096, 4k, 4KiB, 1M, 1MiB, 1G, 1GB)")]
    BadSize(String),
    #[error("'{0}' is not a duration ({DURATION_FORMS})")]
    BadDuration(String),
    #[error("'{0}' is negative; sizes and durations must be zero or more")]
    Negative(String),
    #[error("'{0}' is too large")]
    Overflow(String),
}

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;
const TIB: u64 = 1 << 40;

/// Trim, refuse empty and negative input, and split `4.5KiB` into `("4.5", "KiB")`.
fn split_number(input: &str) -> Result<(&str, &str, &str), UnitError> {
    let s = input.trim();
    if s.is_empty() {
        return Err(UnitError::Empty);
    }
    // `-1s` is a negative number; `--repeat` (an option where a value was expected, which
    // clap hands over because sizes and durations accept a leading hyphen) is not a value.
    if s.starts_with('-') && s[1..].starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return Err(UnitError::Negative(s.to_string()));
    }
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, suffix) = s.split_at(split);
    Ok((s, num, suffix))
}

/// Parse a size in bytes. See the module doc for which suffixes are powers of two.
pub fn parse_size(input: &str) -> Result<u64, UnitError> {
    let (s, num, suffix) = split_number(input)?;
    if num.is_empty() {
        return Err(UnitError::BadSize(s.to_string()));
    }
    let mult: u64 = match suffix.trim() {
        "" | "b" | "B" => 1,
        "k" | "K" | "KiB" | "kiB" | "Ki" | "ki" | "kib" | "KIB" => KIB,
        "m" | "M" | "MiB" | "Mi" | "mi" | "mib" | "MIB" => MIB,
        "g" | "G" | "GiB" | "Gi" | "gi" | "gib" | "GIB" => GIB,
        "t" | "T" | "TiB" | "Ti" | "ti" | "tib" | "TIB" => TIB,
        "kB" | "KB" | "kb" => 1_000,
        "MB" | "mb" => 1_000_000,
        "GB" | "gb" => 1_000_000_000,
        "TB" | "tb" => 1_000_000_000_000,
        _ => return Err(UnitError::BadSize(s.to_string())),
    };
    if num.contains('.') {
        let v: f64 = num.parse().map_err(|_| UnitError::BadSize(s.to_string()))?;
        let bytes = v * mult as f64;
        if !bytes.is_finite() || bytes >= u64::MAX as f64 {
            return Err(UnitError::Overflow(s.to_string()));
        }
        if bytes.fract() != 0.0 {
            return Err(UnitError::BadSize(format!(
                "{s} (not a whole number of bytes)"
            )));
        }
        Ok(bytes as u64)
    } else {
        let v: u64 = num
            .parse()
            .map_err(|_| UnitError::Overflow(s.to_string()))?;
        v.checked_mul(mult)
            .ok_or_else(|| UnitError::Overflow(s.to_string()))
    }
}

/// The forms a duration takes, as the refusal of one lists them.
pub const DURATION_FORMS: &str = "a number with a unit: ns, us, ms, s, m (minutes), h, d (days), any case (90s, 10M, 1.5h, 1d); several added up (1h30m, 2m30s); a bare number is seconds";

/// Parse a duration: a bare number means seconds; units are case-insensitive (`10M` is ten
/// minutes, as in fio: a duration has no mebibytes) and several parts add up (`1h30m`).
pub fn parse_duration(input: &str) -> Result<Duration, UnitError> {
    let (s, _, _) = split_number(input)?;
    let bad = || UnitError::BadDuration(s.to_string());
    let mut rest = s;
    let mut secs = 0.0;
    let mut parts = 0;
    while !rest.is_empty() {
        let split = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (num, tail) = rest.split_at(split);
        if num.is_empty() || num == "." {
            return Err(bad());
        }
        let v: f64 = num.parse().map_err(|_| bad())?;
        let tail = tail.trim_start();
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit() || c == '.' || c.is_whitespace())
            .unwrap_or(tail.len());
        let (unit, next) = tail.split_at(unit_len);
        let secs_per_unit = match unit.to_lowercase().as_str() {
            "" if parts == 0 && next.trim().is_empty() => 1.0,
            "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
            "ms" | "msec" | "msecs" => 1e-3,
            "us" | "µs" | "usec" | "usecs" => 1e-6,
            "ns" | "nsec" | "nsecs" => 1e-9,
            "m" | "min" | "mins" | "minute" | "minutes" => 60.0,
            "h" | "hr" | "hrs" | "hour" | "hours" => 3600.0,
            "d" | "day" | "days" => 86_400.0,
            _ => return Err(bad()),
        };
        secs += v * secs_per_unit;
        parts += 1;
        rest = next.trim_start();
    }
    if !secs.is_finite() || secs > 1e9 {
        return Err(UnitError::Overflow(s.to_string()));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// clap value parser for sizes.
pub fn size_arg(s: &str) -> Result<u64, String> {
    parse_size(s).map_err(|e| e.to_string())
}

/// clap value parser for durations.
pub fn duration_arg(s: &str) -> Result<Duration, String> {
    parse_duration(s).map_err(|e| e.to_string())
}

/// clap value parser for a latency: a duration whose unit must be given (`10ms`, `500us`),
/// since a bare `10` would be ten seconds where fio's latency targets count microseconds.
pub fn latency_arg(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return Err(format!("'{s}' has no unit: give one (10ms, 500us, 1s)"));
    }
    parse_duration(s).map_err(|e| match e {
        // The durations' examples start with a bare `5`, which a latency refuses.
        UnitError::BadDuration(v) => {
            format!("'{v}' is not a latency (examples: 10ms, 500us, 1s, 1.5ms)")
        }
        e => e.to_string(),
    })
}

/// clap value parser for a percentage given as `70` or `70%` (`--target-ci 2%` was "invalid
/// float literal"; `sustain --span 50%` took the sign). The range is checked by the caller.
pub fn percent_f64_arg(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let n = t.strip_suffix('%').unwrap_or(t).trim();
    n.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("'{s}' is not a percentage (e.g. 2.5 or 2.5%)"))
}

/// [`percent_f64_arg`] for whole percentages: `70` or `70%`.
pub fn percent_u32_arg(s: &str) -> Result<u32, String> {
    let t = s.trim();
    let n = t.strip_suffix('%').unwrap_or(t).trim();
    n.parse::<u32>()
        .map_err(|_| format!("'{s}' is not a whole percentage (e.g. 70 or 70%)"))
}

/// `count(1, "pass", "passes")` -> `1 pass`, `count(2, ...)` -> `2 passes` (thousands
/// separated).
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!(
        "{} {}",
        fmt_thousands(n as f64),
        if n == 1 { one } else { many }
    )
}

/// `4096` -> `4KiB`, `1048576` -> `1MiB`, `1500` -> `1500B` (exact when possible).
pub fn fmt_size_exact(bytes: u64) -> String {
    for (unit, name) in [(TIB, "TiB"), (GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")] {
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{}{}", bytes / unit, name);
        }
    }
    format!("{bytes}B")
}

/// Human size with one decimal, IEC: `1.5 GiB`. A value the next smaller unit would print as
/// `1024.0` is shown in this one (1 GiB less 1536 bytes is `1.0 GiB`, not `1024.0 MiB`).
pub fn fmt_size_iec(bytes: u64) -> String {
    let b = bytes as f64;
    for (unit, name) in [(TIB, "TiB"), (GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")] {
        // 1023.95 of the smaller unit and more round to 1024.0 there.
        if b >= unit as f64 * (1023.95 / 1024.0) {
            return format!("{:.1} {}", b / unit as f64, name);
        }
    }
    format!("{bytes} B")
}

/// Short block-size label as CrystalDiskMark prints it: 4096 -> `4K`, 1 MiB -> `1M`.
pub fn fmt_bs_short(bytes: u64) -> String {
    for (unit, name) in [(GIB, "G"), (MIB, "M"), (KIB, "K")] {
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{}{}", bytes / unit, name);
        }
    }
    format!("{bytes}")
}

/// Bytes per second as MB/s (10^6), two decimals.
pub fn fmt_mb_per_s(bytes_per_s: f64) -> String {
    format!("{:.2}", bytes_per_s / 1e6)
}

/// A latency in nanoseconds, in the unit that keeps 3-4 significant digits.
pub fn fmt_ns(ns: f64) -> String {
    if !ns.is_finite() {
        return "-".into();
    }
    // The thresholds are where the rounded figure would reach 1000 of the smaller unit
    // (999.7 ns is `1.0 µs`, not `1000 ns`).
    if ns < 999.5 {
        format!("{ns:.0} ns")
    } else if ns < 999_950.0 {
        format!("{:.1} µs", ns / 1e3)
    } else if ns < 999_995_000.0 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

/// [`fmt_ns`] without trailing zeros: `9.6 ms`, `10 ms`, `250 µs`. A saturation answer's
/// latency and limit, in the terminal and the reports alike (the report said `18.0 µs`
/// where the terminal said `18 µs`).
pub fn fmt_ns_short(ns: f64) -> String {
    let s = fmt_ns(ns);
    match s.split_once(' ') {
        Some((num, unit)) if num.contains('.') => {
            format!("{} {unit}", num.trim_end_matches('0').trim_end_matches('.'))
        }
        _ => s,
    }
}

/// A count with thousands separators: 41200 -> `41,200`.
pub fn fmt_thousands(v: f64) -> String {
    let n = v.round() as i128;
    let s = n.abs().to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

/// A rate with thousands separators, keeping two decimals below 10 and one below 100: a
/// copy of one 70 MiB file at 0.28 files/s read `0`.
pub fn fmt_rate(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 || a >= 99.95 {
        fmt_thousands(v)
    } else if a >= 9.995 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// `42 s`, `3 min 12 s`.
pub fn fmt_secs(s: f64) -> String {
    // Each branch ends where its rounding would print the next unit's first figure
    // (0.9996 s is `1.0 s`, not `1000 ms`; 119.6 s is `2 min 00 s`, not `1 min 60 s`).
    if s < 0.9995 {
        format!("{:.0} ms", s * 1000.0)
    } else if s < 9.95 {
        format!("{s:.1} s")
    } else if s < 59.5 {
        format!("{s:.0} s")
    } else {
        let whole = s.round() as u64;
        format!("{} min {:02} s", whole / 60, whole % 60)
    }
}

/// `s` with its first letter upper case: a phrase the terminal gives after a name or a
/// `;` as a sentence of its own in a report.
pub fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every case of a parser or formatter: `f(input)` is `want`, the failure naming
    /// `what(input)`.
    fn check<T, U, W>(what: &str, f: impl Fn(T) -> U, cases: &[(T, W)])
    where
        T: Copy + std::fmt::Debug,
        U: PartialEq<W> + std::fmt::Debug,
        W: std::fmt::Debug,
    {
        for (input, want) in cases {
            assert_eq!(&f(*input), want, "{what}({input:?})");
        }
    }

    /// The kind of a refusal, which these tests check (its text is the error's own).
    fn refusal<T>(r: Result<T, UnitError>) -> &'static str {
        match r {
            Ok(_) => "accepted",
            Err(UnitError::Empty) => "empty",
            Err(UnitError::BadSize(_)) => "bad size",
            Err(UnitError::BadDuration(_)) => "bad duration",
            Err(UnitError::Negative(_)) => "negative",
            Err(UnitError::Overflow(_)) => "overflow",
        }
    }

    #[test]
    fn small_rates_keep_their_digits() {
        check(
            "fmt_rate",
            fmt_rate,
            &[
                (0.28, "0.28"),
                (9.996, "10.0"),
                (42.26, "42.3"),
                (99.96, "100"),
                (41_200.4, "41,200"),
                (0.0, "0"),
            ],
        );
    }

    /// A latency's errors only suggest what it accepts: never a bare number.
    #[test]
    fn latency_errors_suggest_only_latencies() {
        assert_eq!(latency_arg("10ms"), Ok(Duration::from_millis(10)));
        let e = latency_arg("abc").unwrap_err();
        assert_eq!(
            e,
            "'abc' is not a latency (examples: 10ms, 500us, 1s, 1.5ms)"
        );
        assert!(latency_arg("5").unwrap_err().contains("has no unit"));
        assert!(latency_arg("-5ms").unwrap_err().contains("negative"));
    }

    #[test]
    fn sizes_iec_and_si() {
        check(
            "parse_size",
            parse_size,
            &[
                ("4096", Ok(4096)),
                ("4k", Ok(4096)),
                ("4K", Ok(4096)),
                ("4KiB", Ok(4096)),
                ("1M", Ok(1 << 20)),
                ("1MiB", Ok(1 << 20)),
                ("1G", Ok(1 << 30)),
                ("1GB", Ok(1_000_000_000)),
                ("4KB", Ok(4000)),
                ("80TB", Ok(80_000_000_000_000)),
                ("1.5K", Ok(1536)),
                (" 512 ", Ok(512)),
                ("0", Ok(0)),
            ],
        );
    }

    #[test]
    fn sizes_rejected() {
        check(
            "parse_size",
            |s| refusal(parse_size(s)),
            &[
                ("", "empty"),
                ("-4k", "negative"),
                ("4x", "bad size"),
                ("k", "bad size"),
                ("1.3", "bad size"),
                ("99999999999999999999", "overflow"),
                ("20000000T", "overflow"),
            ],
        );
    }

    #[test]
    fn durations() {
        check(
            "parse_duration",
            parse_duration,
            &[
                ("5", Ok(Duration::from_secs(5))),
                ("5s", Ok(Duration::from_secs(5))),
                ("100ms", Ok(Duration::from_millis(100))),
                ("2m", Ok(Duration::from_secs(120))),
                ("1h", Ok(Duration::from_secs(3600))),
                ("1.5s", Ok(Duration::from_millis(1500))),
                ("250us", Ok(Duration::from_micros(250))),
            ],
        );
        check(
            "parse_duration",
            |s| refusal(parse_duration(s)),
            &[
                ("-1s", "negative"),
                ("soon", "bad duration"),
                ("5 parsecs", "bad duration"),
                ("", "empty"),
            ],
        );
    }

    /// What users type for a duration: `--duration 10M` (fio's case-insensitive units) was
    /// refused as "not a duration", as were days and `1h30m`.
    #[test]
    fn durations_as_users_type_them() {
        check(
            "parse_duration",
            |s| parse_duration(s).map(|d| d.as_secs_f64()),
            &[
                ("10M", Ok(600.0)),
                ("90S", Ok(90.0)),
                ("500MS", Ok(0.5)),
                ("2H", Ok(7200.0)),
                ("1d", Ok(86_400.0)),
                ("2days", Ok(172_800.0)),
                ("1h30m", Ok(5400.0)),
                ("2m30s", Ok(150.0)),
                ("1h 30m", Ok(5400.0)),
                ("1.5 h", Ok(5400.0)),
                ("10 min", Ok(600.0)),
            ],
        );
        // A bare number is seconds only alone: `1h30` is not guessed.
        check(
            "parse_duration",
            |s| refusal(parse_duration(s)),
            &[
                ("1h30", "bad duration"),
                ("1h-30m", "bad duration"),
                ("5mb", "bad duration"),
            ],
        );
        // The refusal lists the accepted forms.
        let e = duration_arg("10 weeks").unwrap_err();
        assert!(e.contains("ns, us, ms, s, m (minutes), h, d (days)"), "{e}");
        assert!(e.contains("1h30m"), "{e}");
    }

    #[test]
    fn formatting() {
        check(
            "fmt_size_exact",
            fmt_size_exact,
            &[(4096, "4KiB"), (1500, "1500B")],
        );
        check(
            "fmt_bs_short",
            fmt_bs_short,
            &[(1 << 20, "1M"), (4096, "4K")],
        );
        check(
            "fmt_thousands",
            fmt_thousands,
            &[
                (41200.0, "41,200"),
                (999.0, "999"),
                (1234567.0, "1,234,567"),
            ],
        );
        check(
            "fmt_ns",
            fmt_ns,
            &[(950.0, "950 ns"), (9_600_000.0, "9.60 ms")],
        );
        check("fmt_mb_per_s", fmt_mb_per_s, &[(1.5e9, "1500.00")]);
    }

    #[test]
    fn percentages_take_an_optional_sign() {
        check(
            "percent_f64_arg",
            percent_f64_arg,
            &[("2.5", Ok(2.5)), ("2%", Ok(2.0)), ("-3", Ok(-3.0))],
        );
        assert!(
            percent_f64_arg("x%")
                .unwrap_err()
                .contains("not a percentage")
        );
        assert!(percent_f64_arg("nan").is_err());
        check(
            "percent_u32_arg",
            percent_u32_arg,
            &[("70%", Ok(70)), (" 30 ", Ok(30))],
        );
        check(
            "percent_u32_arg",
            |s| percent_u32_arg(s).is_err(),
            &[("-1", true), ("1.5", true)],
        );
    }

    /// A figure that rounds up to the next unit is shown in it: a 1 GiB test file cut to
    /// whole 1536-byte blocks read `1024.0 MiB`, a 119.6-s phase `1 min 60 s`.
    #[test]
    fn rounding_carries_into_the_next_unit() {
        check(
            "fmt_size_iec",
            fmt_size_iec,
            &[
                ((1 << 30) - 1536, "1.0 GiB"),
                ((1 << 20) - 10, "1.0 MiB"),
                (1023, "1023 B"),
                (1000, "1000 B"),
                (1 << 30, "1.0 GiB"),
                (1000 << 20, "1000.0 MiB"),
                (1536 << 20, "1.5 GiB"),
            ],
        );
        check(
            "fmt_secs",
            fmt_secs,
            &[
                (119.6, "2 min 00 s"),
                (59.7, "1 min 00 s"),
                (125.0, "2 min 05 s"),
                (0.9996, "1.0 s"),
                (9.97, "10 s"),
                (0.25, "250 ms"),
            ],
        );
        check(
            "fmt_ns",
            fmt_ns,
            &[
                (999.7, "1.0 µs"),
                (999.4, "999 ns"),
                (999_960.0, "1.00 ms"),
                (999_999_000.0, "1.00 s"),
            ],
        );
    }
}

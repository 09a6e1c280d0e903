//! `--since` (and the console's `since=`): a date, a time or an age, as the RFC 3339 UTC
//! text the database compares. The error names the value as `since`; the command line
//! names its flag (`commands::history`).

use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};

use crate::error::UsageError;

/// `2026-01-31` (midnight UTC), an RFC 3339 time (`2026-01-31T12:00:00+01:00`) or an age
/// before `now` (`30m`, `12h`, `7d`, `2w`).
pub fn parse_since(s: &str, now: DateTime<Utc>) -> Result<String, UsageError> {
    let t = s.trim();
    let fmt = |d: DateTime<Utc>| d.to_rfc3339_opts(SecondsFormat::Millis, true);
    if let Ok(d) = DateTime::parse_from_rfc3339(t) {
        return Ok(fmt(d.with_timezone(&Utc)));
    }
    if let Ok(d) = NaiveDate::parse_from_str(t, "%Y-%m-%d")
        && let Some(dt) = d.and_hms_opt(0, 0, 0)
    {
        return Ok(fmt(dt.and_utc()));
    }
    // An age: weeks, or any duration iolab takes (`90m`, `7D`, `1h30m`), never a bare
    // number (seconds? days?).
    let lower = t.to_lowercase();
    let weeks = ["weeks", "week", "w"]
        .iter()
        .find_map(|u| lower.strip_suffix(u))
        .and_then(|n| n.trim().parse::<i64>().ok())
        .and_then(|n| n.checked_mul(7 * 86_400))
        .and_then(chrono::Duration::try_seconds);
    let age = match weeks {
        Some(w) => Some(w),
        None if t.chars().all(|c| c.is_ascii_digit() || c == '.') => None,
        None => crate::units::parse_duration(t)
            .ok()
            .and_then(|d| chrono::Duration::from_std(d).ok()),
    };
    if let Some(d) = age.and_then(|d| now.checked_sub_signed(d)) {
        return Ok(fmt(d));
    }
    Err(UsageError(format!("since {s:?}: {NOT_A_SINCE}")))
}

/// Why a value is no `--since`.
pub const NOT_A_SINCE: &str = "not a date (2026-01-31), an RFC 3339 time (2026-01-31T12:00:00Z) or an age (30m, 12h, 7d, 2w, 1h30m; any case)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_times_and_ages() {
        let now = DateTime::parse_from_rfc3339("2026-11-25T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        for (since, want) in [
            ("2026-01-31", "2026-01-31T00:00:00.000Z"),
            ("2026-01-31T12:00:00+02:00", "2026-01-31T10:00:00.000Z"),
            ("7d", "2026-11-18T12:00:00.000Z"),
            ("12h", "2026-11-25T00:00:00.000Z"),
            ("2w", "2026-11-11T12:00:00.000Z"),
            // Ages are durations as every command takes them: `--since 7D` and `--since
            // 1h30m` were "not a date".
            ("7D", "2026-11-18T12:00:00.000Z"),
            ("1h30m", "2026-11-25T10:30:00.000Z"),
            ("2W", "2026-11-11T12:00:00.000Z"),
            ("90s", "2026-11-25T11:58:30.000Z"),
        ] {
            let got = parse_since(since, now).unwrap_or_else(|e| panic!("{since}: {e}"));
            assert_eq!(got, want, "{since}");
        }
        for bad in ["yesterday", "7x", "", "d", "30", "w"] {
            assert!(parse_since(bad, now).is_err(), "{bad}");
        }
    }
}

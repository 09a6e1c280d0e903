//! Parsing and validating a workload file: the raw TOML shape (every value with its span),
//! and the checks that turn it into a [`Workload`] or a [`FormatError`] at the offending
//! key's line and column.

use std::collections::BTreeMap;
use std::ops::Range;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::format::{FormatError, Op, OpChoice, SizeDist, Stream, Workload};
use crate::units::{parse_duration, parse_size};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWorkload {
    #[serde(default)]
    description: String,
    #[serde(default)]
    stream: Vec<Spanned<RawStream>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStream {
    name: Spanned<String>,
    copies: Option<Spanned<i64>>,
    files: Option<Spanned<i64>>,
    file_size: Option<Spanned<toml::Value>>,
    dataset: Option<Spanned<String>>,
    dataset_scale: Option<Spanned<toml::Value>>,
    total_size: Option<Spanned<toml::Value>>,
    dirs: Option<Spanned<i64>>,
    depth: Option<Spanned<i64>>,
    existing: Option<bool>,
    mix: Option<Spanned<BTreeMap<String, Spanned<toml::Value>>>>,
    sequence: Option<Spanned<Vec<Spanned<String>>>>,
    request_size: Option<Spanned<toml::Value>>,
    sequential: Option<Spanned<toml::Value>>,
    rate: Option<Spanned<String>>,
    think_time: Option<Spanned<String>>,
    duration: Option<Spanned<String>>,
    amount: Option<Spanned<toml::Value>>,
}

type Res<T> = Result<T, FormatError>;

/// Parse and validate a workload file's text.
pub fn parse(name: &str, text: &str) -> Res<Workload> {
    let raw: RawWorkload = toml::from_str(text).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        FormatError::at(text, span, e.message().trim().to_string())
    })?;
    if raw.stream.is_empty() {
        return Err(FormatError::at(
            text,
            0..0,
            "no [[stream]] table: a workload needs at least one stream",
        ));
    }
    let mut streams: Vec<Stream> = Vec::new();
    for s in raw.stream {
        let span = s.span();
        let st = stream(text, s.into_inner(), span)?;
        streams.push(st);
    }
    Ok(Workload {
        name: name.to_string(),
        description: raw.description,
        streams,
    })
}

/// A count (`copies`, `files`, `dirs`, `depth`): 1 to `hi`, and 1 when not given.
fn count(text: &str, v: Option<&Spanned<i64>>, key: &str, hi: i64) -> Res<u64> {
    let Some(v) = v else {
        return Ok(1);
    };
    let x = *v.get_ref();
    if !(1..=hi).contains(&x) {
        return Err(FormatError::at(
            text,
            v.span(),
            format!("{key} = {x} is out of range (1 to {hi})"),
        ));
    }
    Ok(x as u64)
}

fn size_value(text: &str, v: &toml::Value, span: Range<usize>, key: &str) -> Res<u64> {
    let n = match v {
        toml::Value::Integer(i) if *i > 0 => *i as u64,
        toml::Value::String(s) => {
            parse_size(s).map_err(|e| FormatError::at(text, span.clone(), format!("{key}: {e}")))?
        }
        other => {
            return Err(FormatError::at(
                text,
                span,
                format!("{key} must be a positive size like \"4K\" or \"1.3GB\", not {other}"),
            ));
        }
    };
    if n == 0 {
        return Err(FormatError::at(
            text,
            span,
            format!("{key} must be above 0"),
        ));
    }
    Ok(n)
}

/// A size (`"4K"`, `4096`) or a range `{ min = "4K", max = "1M", distribution = "log-uniform" }`.
fn size_dist(text: &str, v: Spanned<toml::Value>, key: &str) -> Res<SizeDist> {
    let span = v.span();
    let toml::Value::Table(t) = v.get_ref() else {
        return size_value(text, v.get_ref(), span, key).map(SizeDist::Fixed);
    };
    if let Some(k) = t
        .keys()
        .find(|k| !["min", "max", "distribution"].contains(&k.as_str()))
    {
        return Err(FormatError::at(
            text,
            span,
            format!("{key}: unknown key '{k}' (expected min, max, distribution)"),
        ));
    }
    let get = |k: &str| {
        t.get(k)
            .ok_or_else(|| FormatError::at(text, span.clone(), format!("{key} needs {k}")))
    };
    let a = size_value(text, get("min")?, span.clone(), &format!("{key}.min"))?;
    let b = size_value(text, get("max")?, span.clone(), &format!("{key}.max"))?;
    if a > b {
        return Err(FormatError::at(
            text,
            span,
            format!("{key}.max ({b} bytes) is below {key}.min ({a} bytes)"),
        ));
    }
    match t.get("distribution") {
        None => Ok(SizeDist::Uniform(a, b)),
        Some(toml::Value::String(d)) if d == "uniform" => Ok(SizeDist::Uniform(a, b)),
        Some(toml::Value::String(d)) if d == "log-uniform" => Ok(SizeDist::LogUniform(a, b)),
        Some(other) => Err(FormatError::at(
            text,
            span,
            format!("{key}: unknown distribution {other} (known: \"uniform\", \"log-uniform\")"),
        )),
    }
}

fn fraction(text: &str, v: &Spanned<toml::Value>, key: &str, lo: f64, hi: f64) -> Res<f64> {
    let x = match v.get_ref() {
        toml::Value::Integer(i) => *i as f64,
        toml::Value::Float(f) => *f,
        other => {
            return Err(FormatError::at(
                text,
                v.span(),
                format!("{key} must be a number, not {other}"),
            ));
        }
    };
    if !(lo..=hi).contains(&x) || !x.is_finite() {
        return Err(FormatError::at(
            text,
            v.span(),
            format!("{key} = {x} is out of range ({lo} to {hi})"),
        ));
    }
    Ok(x)
}

fn duration(text: &str, v: &Spanned<String>, key: &str) -> Res<Duration> {
    parse_duration(v.get_ref()).map_err(|e| FormatError::at(text, v.span(), format!("{key}: {e}")))
}

/// `"5MB/s"`, `"40Mbit/s"`, `"300KiB/s"` -> bytes per second.
pub fn parse_rate(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let body = t
        .strip_suffix("/s")
        .ok_or_else(|| format!("rate '{s}' must end in /s, like \"5MB/s\" or \"40Mbit/s\""))?;
    let (num, mult) = match body.find(|c: char| !(c.is_ascii_digit() || c == '.')) {
        Some(i) => (&body[..i], &body[i..]),
        None => (body, ""),
    };
    let x: f64 = num
        .parse()
        .map_err(|_| format!("rate '{s}': '{num}' is not a number"))?;
    let bits = |k: f64| Ok::<f64, String>(x * k / 8.0);
    let v = match mult.trim() {
        "bit" => bits(1.0)?,
        "kbit" | "Kbit" => bits(1e3)?,
        "Mbit" => bits(1e6)?,
        "Gbit" => bits(1e9)?,
        _ => {
            let unit =
                parse_size(&format!("1{}", mult.trim())).map_err(|e| format!("rate '{s}': {e}"))?;
            x * unit as f64
        }
    };
    if v <= 0.0 || !v.is_finite() {
        return Err(format!("rate '{s}' must be above 0"));
    }
    Ok(v)
}

fn stream(text: &str, r: RawStream, span: Range<usize>) -> Res<Stream> {
    let name = r.name.get_ref().trim().to_string();
    if name.is_empty() || name.contains('/') {
        return Err(FormatError::at(
            text,
            r.name.span(),
            "stream name must be non-empty and without '/'",
        ));
    }
    let copies = count(text, r.copies.as_ref(), "copies", 256)? as u32;
    let files = count(text, r.files.as_ref(), "files", 10_000_000)?;
    let dirs = count(text, r.dirs.as_ref(), "dirs", files as i64)?;
    let depth = count(text, r.depth.as_ref(), "depth", 16)? as u32;
    let dataset = match &r.dataset {
        Some(d) => {
            let name = d.get_ref().trim().to_string();
            if !crate::workload::copy::dataset::is_known(&name) {
                return Err(FormatError::at(
                    text,
                    d.span(),
                    format!(
                        "unknown data set '{name}' (known: {})",
                        crate::workload::copy::dataset::names()
                    ),
                ));
            }
            for (given, key) in [
                (r.files.as_ref().map(|v| v.span()), "files"),
                (r.file_size.as_ref().map(|v| v.span()), "file_size"),
                (r.total_size.as_ref().map(|v| v.span()), "total_size"),
            ] {
                if let Some(sp) = given {
                    return Err(FormatError::at(
                        text,
                        sp,
                        format!(
                            "{key} cannot be combined with dataset (the data set fixes the files)"
                        ),
                    ));
                }
            }
            let scale = match &r.dataset_scale {
                Some(v) => fraction(text, v, "dataset_scale", 1e-9, 1e6)?,
                None => 1.0,
            };
            Some((name, scale))
        }
        None => {
            if let Some(v) = &r.dataset_scale {
                return Err(FormatError::at(
                    text,
                    v.span(),
                    "dataset_scale needs dataset",
                ));
            }
            None
        }
    };
    let files = match &dataset {
        Some((name, scale)) => {
            crate::workload::trace::format::dataset_file_count(name, *scale).max(1)
        }
        None => files,
    };
    let file_size = match (r.file_size, &dataset) {
        (Some(v), _) => size_dist(text, v, "file_size")?,
        // Sizes come from the data set; this only bounds request sizes and reports.
        (None, Some(_)) => SizeDist::Fixed(0),
        (None, None) => {
            return Err(FormatError::at(
                text,
                span.clone(),
                format!("stream '{name}' needs file_size (or dataset = \"NAME\")"),
            ));
        }
    };
    let total_size = match &r.total_size {
        Some(v) => {
            let t = size_value(text, v.get_ref(), v.span(), "total_size")?;
            if t < files {
                return Err(FormatError::at(
                    text,
                    v.span(),
                    format!("total_size ({t} bytes) is below one byte per file ({files} files)"),
                ));
            }
            Some(t)
        }
        None => None,
    };
    let ops = match (&r.mix, &r.sequence) {
        (Some(_), Some(seq)) => {
            return Err(FormatError::at(
                text,
                seq.span(),
                "give either mix or sequence, not both",
            ));
        }
        (None, None) => {
            return Err(FormatError::at(
                text,
                span,
                format!(
                    "stream '{name}' needs mix = {{ read = 1, ... }} or sequence = [\"read\", ...]"
                ),
            ));
        }
        (Some(mix), None) => {
            let mut v = Vec::new();
            for (k, w) in mix.get_ref() {
                let op = Op::parse(k).ok_or_else(|| {
                    FormatError::at(
                        text,
                        w.span(),
                        format!("unknown operation '{k}' in mix ({})", known_ops()),
                    )
                })?;
                v.push((op, fraction(text, w, &format!("mix.{k}"), 0.0, 1e9)?));
            }
            if v.iter().map(|(_, w)| w).sum::<f64>() <= 0.0 {
                return Err(FormatError::at(text, mix.span(), "mix weights sum to 0"));
            }
            OpChoice::Mix(v)
        }
        (None, Some(seq)) => {
            if seq.get_ref().is_empty() {
                return Err(FormatError::at(text, seq.span(), "sequence is empty"));
            }
            let mut v = Vec::new();
            for o in seq.get_ref() {
                v.push(Op::parse(o.get_ref()).ok_or_else(|| {
                    FormatError::at(
                        text,
                        o.span(),
                        format!(
                            "unknown operation '{}' in sequence ({})",
                            o.get_ref(),
                            known_ops()
                        ),
                    )
                })?);
            }
            OpChoice::Sequence(v)
        }
    };
    let used = ops.ops();
    let existing = r.existing.unwrap_or_else(|| {
        used.iter()
            .any(|o| matches!(o, Op::Read | Op::Stat | Op::Open | Op::Rename | Op::Unlink))
    });
    if !existing
        && used.contains(&Op::Read)
        && !used.iter().any(|o| matches!(o, Op::Write | Op::Append))
    {
        return Err(FormatError::at(
            text,
            span,
            format!("stream '{name}' reads but nothing writes its files: set existing = true"),
        ));
    }
    let request_size = match r.request_size {
        Some(v) => size_dist(text, v, "request_size")?,
        None => SizeDist::Fixed(64 * 1024),
    };
    let sequential = r
        .sequential
        .as_ref()
        .map(|v| fraction(text, v, "sequential", 0.0, 1.0))
        .transpose()?
        .unwrap_or(1.0);
    let rate = r
        .rate
        .as_ref()
        .map(|v| parse_rate(v.get_ref()).map_err(|e| FormatError::at(text, v.span(), e)))
        .transpose()?;
    let think_time = r
        .think_time
        .as_ref()
        .map(|v| duration(text, v, "think_time"))
        .transpose()?
        .unwrap_or(Duration::ZERO);
    let dur = r
        .duration
        .as_ref()
        .map(|v| duration(text, v, "duration"))
        .transpose()?;
    if let (Some(d), Some(v)) = (dur, &r.duration)
        && d.is_zero()
    {
        return Err(FormatError::at(text, v.span(), "duration must be above 0"));
    }
    let amount = r
        .amount
        .as_ref()
        .map(|v| size_value(text, v.get_ref(), v.span(), "amount"))
        .transpose()?;
    if dur.is_none() && amount.is_none() {
        return Err(FormatError::at(
            text,
            span,
            format!("stream '{name}' needs duration = \"30s\" or amount = \"1GB\" (or both)"),
        ));
    }
    if amount.is_some() && !used.iter().any(|o| o.moves_data()) && dur.is_none() {
        return Err(FormatError::at(
            text,
            span,
            format!("stream '{name}' has an amount but no read, write or append: give a duration"),
        ));
    }
    Ok(Stream {
        name,
        copies,
        files,
        file_size,
        total_size,
        dirs,
        depth,
        existing,
        ops,
        request_size,
        sequential,
        rate,
        think_time,
        duration: dur,
        amount,
        dataset,
    })
}

fn known_ops() -> String {
    format!(
        "known: {}",
        Op::ALL
            .iter()
            .map(|o| o.name())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::trace::format::SizeDist;

    const OK: &str = r#"
description = "x"
[[stream]]
name = "a"
files = 3
file_size = { min = "4K", max = "1M", distribution = "log-uniform" }
mix = { read = 70, write = 30 }
request_size = "64K"
sequential = 0.5
rate = "40Mbit/s"
duration = "2s"
"#;

    #[test]
    fn parses_a_full_stream() {
        let w = parse("t", OK).unwrap();
        let s = &w.streams[0];
        assert_eq!(s.files, 3);
        assert_eq!(s.file_size, SizeDist::LogUniform(4096, 1 << 20));
        assert_eq!(s.rate, Some(5e6));
        assert!(s.existing);
        assert_eq!(s.duration, Some(Duration::from_secs(2)));
    }

    #[test]
    fn errors_carry_line_and_column() {
        let bad = OK.replace("sequential = 0.5", "sequential = 1.5");
        let e = parse("t", &bad).unwrap_err();
        assert_eq!((e.line, e.column), (9, 14), "{e:?}");
        assert!(e.reason.contains("sequential"), "{e:?}");
        let bad = OK.replace("read = 70", "raed = 70");
        let e = parse("t", &bad).unwrap_err();
        assert_eq!(e.line, 7);
        assert!(e.reason.contains("raed"));
        let e = parse("t", "[[stream]\nname=1").unwrap_err();
        assert_eq!(e.line, 1);
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("5MB/s").unwrap(), 5e6);
        assert_eq!(parse_rate("1MiB/s").unwrap(), 1048576.0);
        assert_eq!(parse_rate("8Mbit/s").unwrap(), 1e6);
        assert!(parse_rate("5MB").is_err());
    }
}

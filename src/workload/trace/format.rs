//! The workload file format (TOML, documented in docs/workloads.md): parsing and validation
//! into a [`Workload`]. Every error names the line and column of the offending key or value,
//! because a workload file is written by hand and the user must find the mistake at once.

use std::collections::BTreeMap;
use std::ops::Range;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use crate::units::{parse_duration, parse_size};

/// One file-level operation of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Op {
    Open,
    Read,
    Write,
    Append,
    Fsync,
    Stat,
    Unlink,
    Rename,
    Mkdir,
}

impl Op {
    pub const ALL: [Op; 9] = [
        Op::Open,
        Op::Read,
        Op::Write,
        Op::Append,
        Op::Fsync,
        Op::Stat,
        Op::Unlink,
        Op::Rename,
        Op::Mkdir,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Op::Open => "open",
            Op::Read => "read",
            Op::Write => "write",
            Op::Append => "append",
            Op::Fsync => "fsync",
            Op::Stat => "stat",
            Op::Unlink => "unlink",
            Op::Rename => "rename",
            Op::Mkdir => "mkdir",
        }
    }

    fn parse(s: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|o| o.name() == s)
    }

    /// Operations that move data (count toward `amount` and pacing).
    pub fn moves_data(self) -> bool {
        matches!(self, Op::Read | Op::Write | Op::Append)
    }
}

/// A size that is fixed or drawn per file / per request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SizeDist {
    Fixed(u64),
    Uniform(u64, u64),
    /// Uniform in log space: as many files of 1-10 KB as of 1-10 MB (typical of real trees).
    LogUniform(u64, u64),
}

impl SizeDist {
    pub fn max(&self) -> u64 {
        match *self {
            SizeDist::Fixed(v) => v,
            SizeDist::Uniform(_, b) | SizeDist::LogUniform(_, b) => b,
        }
    }

    /// Draw one value from `u` in [0, 1).
    pub fn sample(&self, u: f64) -> u64 {
        match *self {
            SizeDist::Fixed(v) => v,
            SizeDist::Uniform(a, b) => a + ((b - a) as f64 * u) as u64,
            SizeDist::LogUniform(a, b) => {
                let (la, lb) = ((a as f64).ln(), (b as f64).ln());
                ((la + (lb - la) * u).exp() as u64).clamp(a, b)
            }
        }
    }

    fn scaled(&self, f: f64) -> SizeDist {
        let s = |v: u64| ((v as f64 * f).round() as u64).max(1);
        match *self {
            SizeDist::Fixed(v) => SizeDist::Fixed(s(v)),
            SizeDist::Uniform(a, b) => SizeDist::Uniform(s(a), s(b)),
            SizeDist::LogUniform(a, b) => SizeDist::LogUniform(s(a), s(b)),
        }
    }
}

/// How a stream picks its next operation.
#[derive(Debug, Clone, PartialEq)]
pub enum OpChoice {
    /// Weighted random choice (weights need not sum to 100).
    Mix(Vec<(Op, f64)>),
    /// A fixed sequence, repeated.
    Sequence(Vec<Op>),
}

impl OpChoice {
    pub fn ops(&self) -> Vec<Op> {
        match self {
            OpChoice::Mix(v) => v
                .iter()
                .filter(|(_, w)| *w > 0.0)
                .map(|(o, _)| *o)
                .collect(),
            OpChoice::Sequence(v) => v.clone(),
        }
    }
}

/// One stream (a thread per copy) of a workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Stream {
    pub name: String,
    pub copies: u32,
    pub files: u64,
    pub file_size: SizeDist,
    /// Drawn file sizes are rescaled so that they sum to this.
    pub total_size: Option<u64>,
    pub dirs: u64,
    pub depth: u32,
    /// The file set exists (is written, unmeasured) before the measured phase.
    pub existing: bool,
    pub ops: OpChoice,
    pub request_size: SizeDist,
    pub sequential: f64,
    /// Pacing in bytes/s; `None` = as fast as possible.
    pub rate: Option<f64>,
    pub think_time: Duration,
    pub duration: Option<Duration>,
    pub amount: Option<u64>,
}

/// A validated workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    pub name: String,
    pub description: String,
    pub streams: Vec<Stream>,
}

impl Workload {
    /// The amount of data and time times `f`: a stream with many files gets `f` times as
    /// many (same size distribution, so small-file behaviour is kept), a single-file stream
    /// a file `f` times as big; totals, amounts and durations scale too. Request sizes,
    /// rates and think times stay: they describe the application, not the data set.
    pub fn scaled(&self, f: f64) -> Workload {
        let mut w = self.clone();
        for s in &mut w.streams {
            if s.files > 1 {
                s.files = ((s.files as f64 * f).round() as u64).max(1);
                s.dirs = s.dirs.min(s.files);
            } else {
                s.file_size = s.file_size.scaled(f);
            }
            s.total_size = s.total_size.map(|t| ((t as f64 * f) as u64).max(s.files));
            s.amount = s.amount.map(|a| ((a as f64 * f) as u64).max(1));
            s.duration = s.duration.map(|d| d.mul_f64(f));
        }
        w
    }
}

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
    file_size: Spanned<toml::Value>,
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

/// A parse or validation error at a place in the file.
#[derive(Debug, Clone, PartialEq)]
pub struct FormatError {
    pub line: usize,
    pub column: usize,
    pub reason: String,
}

impl FormatError {
    fn at(text: &str, span: Range<usize>, reason: impl Into<String>) -> FormatError {
        let (line, column) = line_col(text, span.start);
        FormatError {
            line,
            column,
            reason: reason.into(),
        }
    }
}

/// 1-based line and column (in characters) of byte offset `pos`.
pub fn line_col(text: &str, pos: usize) -> (usize, usize) {
    let pos = pos.min(text.len());
    let before = &text[..pos];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, col)
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

fn int_in(text: &str, v: &Spanned<i64>, key: &str, lo: i64, hi: i64) -> Res<u64> {
    let x = *v.get_ref();
    if x < lo || x > hi {
        return Err(FormatError::at(
            text,
            v.span(),
            format!("{key} = {x} is out of range ({lo} to {hi})"),
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
    let copies = r
        .copies
        .as_ref()
        .map(|v| int_in(text, v, "copies", 1, 256))
        .transpose()?
        .unwrap_or(1) as u32;
    let files = r
        .files
        .as_ref()
        .map(|v| int_in(text, v, "files", 1, 10_000_000))
        .transpose()?
        .unwrap_or(1);
    let dirs = r
        .dirs
        .as_ref()
        .map(|v| int_in(text, v, "dirs", 1, files as i64))
        .transpose()?
        .unwrap_or(1);
    let depth = r
        .depth
        .as_ref()
        .map(|v| int_in(text, v, "depth", 1, 16))
        .transpose()?
        .unwrap_or(1) as u32;
    let file_size = size_dist(text, r.file_size, "file_size")?;
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

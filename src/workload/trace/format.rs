//! The workload file format (TOML, documented in docs/workloads.md): what a validated
//! workload is (streams, operations, size distributions, `--scale`) and its errors, which
//! name the line and column of the offending key or value, because a workload file is
//! written by hand and the user must find the mistake at once. Parsing is in `validate`
//! (`validate::parse`), which builds these types.

use std::ops::Range;
use std::time::Duration;

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

    pub fn parse(s: &str) -> Option<Op> {
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

    pub fn scaled(&self, f: f64) -> SizeDist {
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
    /// The file set is an `iolab copy` data set (name, scale) instead of `files`/`file_size`.
    pub dataset: Option<(String, f64)>,
}

/// A validated workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    pub name: String,
    pub description: String,
    pub streams: Vec<Stream>,
}

/// Files of an `iolab copy` data set at `scale` (the count does not depend on the random seed).
pub fn dataset_file_count(name: &str, scale: f64) -> u64 {
    crate::workload::copy::dataset::plan(name, 0, scale)
        .map(|p| p.files.len() as u64)
        .unwrap_or(0)
}

impl Workload {
    /// The amount of data and time times `f`: a stream with many files gets `f` times as
    /// many (same size distribution, so small-file behaviour is kept), a single-file stream
    /// a file `f` times as big; totals, amounts and durations scale too. Request sizes,
    /// rates and think times stay: they describe the application, not the data set.
    pub fn scaled(&self, f: f64) -> Workload {
        let mut w = self.clone();
        for s in &mut w.streams {
            if let Some((name, scale)) = &mut s.dataset {
                *scale *= f;
                s.files = dataset_file_count(name, *scale);
                s.dirs = s.dirs.min(s.files);
            } else if s.files > 1 {
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

/// A parse or validation error at a place in the file.
#[derive(Debug, Clone, PartialEq)]
pub struct FormatError {
    pub line: usize,
    pub column: usize,
    pub reason: String,
}

impl FormatError {
    pub(super) fn at(text: &str, span: Range<usize>, reason: impl Into<String>) -> FormatError {
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

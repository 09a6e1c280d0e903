//! Block workloads as data: what one job group does (rw, bs, iodepth, jobs, offsets).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::engine::{EngineKind, Pattern};

/// The access pattern (fio's `rw`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rw {
    Read,
    Write,
    Randread,
    Randwrite,
    /// Random reads and writes, --rwmix-read % reads.
    Randrw,
    /// Sequential reads and writes mixed (fio's `rw`/`readwrite`; CrystalDiskMark's SEQ Mix):
    /// one sequential stream, each I/O a read with --rwmix-read % probability.
    Readwrite,
}

impl Rw {
    pub fn name(self) -> &'static str {
        match self {
            Rw::Read => "read",
            Rw::Write => "write",
            Rw::Randread => "randread",
            Rw::Randwrite => "randwrite",
            Rw::Randrw => "randrw",
            Rw::Readwrite => "readwrite",
        }
    }
    /// Both reads and writes (`randrw`, `readwrite`).
    pub fn is_mixed(self) -> bool {
        matches!(self, Rw::Randrw | Rw::Readwrite)
    }
    pub fn is_random(self) -> bool {
        matches!(self, Rw::Randread | Rw::Randwrite | Rw::Randrw)
    }
    pub fn writes(self) -> bool {
        matches!(self, Rw::Write | Rw::Randwrite | Rw::Randrw | Rw::Readwrite)
    }
    pub fn reads(self) -> bool {
        matches!(self, Rw::Read | Rw::Randread | Rw::Randrw | Rw::Readwrite)
    }
    /// `read`, `write` or `mixed`, for the table's direction column.
    pub fn direction(self) -> &'static str {
        match self {
            Rw::Read | Rw::Randread => "read",
            Rw::Write | Rw::Randwrite => "write",
            Rw::Randrw | Rw::Readwrite => "mixed",
        }
    }
}

/// How jobs share the test region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Region {
    /// Each job gets its own equal slice of the region (default).
    Split,
    /// Every job covers the whole region (with its own random sequence).
    Shared,
}

/// One group of identical jobs.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSpec {
    pub rw: Rw,
    pub bs: u64,
    pub iodepth: u32,
    pub jobs: u32,
    /// Percentage of reads for randrw.
    pub rwmix_read: u32,
    pub region: Region,
    pub pattern: Pattern,
    pub direct: bool,
    /// Ask for transparent huge pages for the I/O buffers (`BufferPool`).
    pub huge_pages: bool,
    pub engine: EngineKind,
    /// Measured time per run (time-based); `None` for size-based runs.
    pub duration: Option<Duration>,
    pub ramp: Duration,
    /// Bytes to transfer per job (size-based runs).
    pub io_size: Option<u64>,
    /// Seed for offsets and data (the same seed gives the same offsets and bytes).
    pub seed: u64,
    /// fsync at the end of a write run (timed and reported).
    pub fsync_at_end: bool,
    /// Length of one point of the per-interval series (whole milliseconds, at least 1).
    pub interval: Duration,
}

impl JobSpec {
    /// One job of random `rw` I/O over its own slice, O_DIRECT into huge-page buffers, no
    /// ramp, no fsync at the end, time- and size-unbounded: the saturate steps and the
    /// sustain passes, which set what else differs.
    pub fn random_direct(rw: Rw, bs: u64, iodepth: u32, engine: EngineKind, seed: u64) -> JobSpec {
        JobSpec {
            rw,
            bs,
            iodepth,
            jobs: 1,
            rwmix_read: 0,
            region: Region::Split,
            pattern: Pattern::Random,
            direct: true,
            huge_pages: true,
            engine,
            duration: None,
            ramp: Duration::ZERO,
            io_size: None,
            seed,
            fsync_at_end: false,
            interval: DEFAULT_INTERVAL,
        }
    }
}

/// The per-interval series' default resolution.
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(100);

/// Most intervals one run may record (`--duration` / `--interval`): a bound on memory and
/// on the result file (each point is about 100 bytes of JSON).
pub const MAX_INTERVALS: u64 = 100_000;

/// One named test (`SEQ1M Q8T1 read`): one or more job groups running at the same time.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockTestSpec {
    pub name: String,
    pub groups: Vec<JobSpec>,
}

impl BlockTestSpec {
    pub fn single(name: impl Into<String>, job: JobSpec) -> Self {
        BlockTestSpec {
            name: name.into(),
            groups: vec![job],
        }
    }

    pub fn writes(&self) -> bool {
        self.groups.iter().any(|g| g.rw.writes())
    }

    pub fn reads(&self) -> bool {
        self.groups.iter().any(|g| g.rw.reads())
    }

    /// The bytes a size-based run (`--io-size`) transfers when nothing stops it early: every
    /// job of every group its `io_size`, in whole blocks (the last request may pass it).
    /// `None` for a timed run.
    pub fn amount_bytes(&self) -> Option<u64> {
        self.groups
            .iter()
            .map(|g| {
                g.io_size
                    .map(|s| s.div_ceil(g.bs.max(1)) * g.bs * g.jobs as u64)
            })
            .sum()
    }
}

/// CrystalDiskMark-style label: `SEQ1M Q8T1`, `RND4K Q32T16`.
pub fn cdm_label(rw: Rw, bs: u64, iodepth: u32, jobs: u32) -> String {
    format!(
        "{}{} Q{}T{}",
        if rw.is_random() { "RND" } else { "SEQ" },
        crate::units::fmt_bs_short(bs),
        iodepth,
        jobs
    )
}

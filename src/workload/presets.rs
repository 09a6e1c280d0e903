//! Built-in suites of `iolab run`, as data.

use serde::{Deserialize, Serialize};

/// One entry of a preset: a pattern run once for reads and once for writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PresetTest {
    pub random: bool,
    pub bs: u64,
    pub iodepth: u32,
    pub jobs: u32,
}

/// The presets of `iolab run --preset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    /// CrystalDiskMark's default: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1.
    Default,
    /// CrystalDiskMark's NVMe SSD profile: SEQ1M Q8T1, SEQ128K Q32T1, RND4K Q32T16, RND4K Q1T1.
    Nvme,
    /// What applications mostly see: SEQ1M Q1T1 and RND4K Q1T1.
    Real,
    /// The default tests, reporting the best repeat as CrystalDiskMark does (not the median).
    Peak,
}

const K: u64 = 1024;
const M: u64 = 1024 * 1024;

impl Preset {
    pub fn name(self) -> &'static str {
        match self {
            Preset::Default => "default",
            Preset::Nvme => "nvme",
            Preset::Real => "real",
            Preset::Peak => "peak",
        }
    }

    pub fn tests(self) -> Vec<PresetTest> {
        let t = |random, bs, iodepth, jobs| PresetTest {
            random,
            bs,
            iodepth,
            jobs,
        };
        match self {
            Preset::Default | Preset::Peak => vec![
                t(false, M, 8, 1),
                t(false, M, 1, 1),
                t(true, 4 * K, 32, 1),
                t(true, 4 * K, 1, 1),
            ],
            Preset::Nvme => vec![
                t(false, M, 8, 1),
                t(false, 128 * K, 32, 1),
                t(true, 4 * K, 32, 16),
                t(true, 4 * K, 1, 1),
            ],
            Preset::Real => vec![t(false, M, 1, 1), t(true, 4 * K, 1, 1)],
        }
    }

    /// Which repeat statistic the table shows.
    pub fn headline(self) -> &'static str {
        if self == Preset::Peak {
            "max"
        } else {
            "median"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_match_crystaldiskmark() {
        assert_eq!(Preset::Default.tests().len(), 4);
        let nvme = Preset::Nvme.tests();
        assert_eq!(nvme[1].bs, 128 * 1024);
        assert_eq!(nvme[2].jobs, 16);
        assert_eq!(Preset::Real.tests().len(), 2);
        assert_eq!(Preset::Peak.headline(), "max");
    }
}

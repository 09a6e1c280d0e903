//! The codes of the result document's warnings (`ResultDoc.warnings[].code`): one variant
//! per code, each with its wire name (the kebab-case string in the JSON). Codes this iolab
//! does not know (a result file written by another version) read back as `Other`, so every
//! file that parsed before still parses. `docs/results-schema.md` lists every code; a test
//! below checks that list against `WarningCode::ALL`.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

macro_rules! warning_codes {
    ($($(#[$doc:meta])* $variant:ident = $wire:literal,)*) => {
        /// The stable machine code of a [`Warning`](super::Warning). Equality, order and
        /// hashing are those of the wire name (`Other("noisy".into()) == Noisy`).
        #[derive(Debug, Clone)]
        pub enum WarningCode {
            $($(#[$doc])* $variant,)*
            /// A code this iolab does not know (read from a file written by another version).
            Other(String),
        }

        impl WarningCode {
            /// Every known code, in the order of the documentation's families.
            pub const ALL: &'static [WarningCode] = &[$(WarningCode::$variant,)*];

            /// The wire name, as written in the JSON (`cpu-bound`).
            pub fn as_str(&self) -> &str {
                match self {
                    $(WarningCode::$variant => $wire,)*
                    WarningCode::Other(s) => s,
                }
            }

            /// The known variant of a wire name, `Other` for an unknown one.
            pub fn from_wire(s: &str) -> WarningCode {
                match s {
                    $($wire => WarningCode::$variant,)*
                    _ => WarningCode::Other(s.to_string()),
                }
            }
        }
    };
}

warning_codes! {
    // Block tests (`iolab run`) and shared by every family that runs them.
    /// Buffered I/O with a test size under 2× RAM: the page cache may decide the result; use `--direct true` or a larger `--size`.
    PageCache = "page-cache",
    /// O_DIRECT was refused by the file system and the test ran buffered: the page cache is part of the result.
    DirectFallback = "direct-fallback",
    /// A job thread used > 90 % of a CPU: iolab may have been the limit; add jobs or a deeper queue.
    CpuBound = "cpu-bound",
    /// A job thread waited > 10 % of its run for a CPU that other programs held: latencies include that wait; measure on an idle machine.
    CpuContention = "cpu-contention",
    /// Run-to-run coefficient of variation above 5 %: something else used the device or CPU; use more repeats.
    Noisy = "noisy",
    /// Only one run: no spread or confidence interval; use `--repeat 3` or more.
    NoSpread = "no-spread",
    /// A run is an outlier by the modified Z-score (5 or more runs).
    OutlierRun = "outlier-run",
    /// The first run was > 15 % slower than the others (cold cache, warm-up); add a warm-up or repeats.
    SlowFirstRun = "slow-first-run",
    /// `--repeat auto` reached `--max-repeat` before the confidence-interval target.
    CiNotReached = "ci-not-reached",
    /// The target was not prefilled: never-written or trimmed areas may read back without touching the media.
    NotPrefilled = "not-prefilled",
    /// Engine notes: io_uring fallback, unregistered buffers, sync engine with iodepth > 1.
    Engine = "engine",
    /// Large direct-I/O buffers did not get transparent huge pages: large I/Os may have reached the device split.
    SmallPages = "small-pages",
    /// A queue-depth-1 test on a KVM guest whose idle vCPUs halt at once: much of each latency is the host waking a vCPU.
    VcpuHalt = "vcpu-halt",
    /// The target has no block device whose counters can be read (RAM, network, FUSE or overlay file system): no device figures.
    NoDeviceCounters = "no-device-counters",
    /// The device saw far fewer bytes written than the application wrote: the page cache absorbed the writes.
    CacheAbsorbed = "cache-absorbed",
    /// The device saw far fewer bytes read than the application read: a cache (the page cache, a FUSE daemon's, a file system's own) served the reads.
    CacheServed = "cache-served",
    /// The device wrote (or read) more than twice what the test did and 8 MiB more: dev MB/s and WA include other programs' I/O or the file system's own.
    DeviceExtraIo = "device-extra-io",
    // `iolab files`.
    /// Portions of one run differ by more than 5 %: something else used the CPU or device; pin with `--cpu` or repeat.
    PortionSpread = "portion-spread",
    /// The reference file could not be kept in memory and was put on the target (its page cache keeps it in RAM).
    ReferenceOnTarget = "reference-on-target",
    /// `--nice` could not raise the priority; run as root or with CAP_SYS_NICE.
    NiceDenied = "nice-denied",
    /// `--drop-caches` needs root: stat and read may have been served from memory.
    DropCachesDenied = "drop-caches-denied",
    /// Sizes of `--sizes` that came to the same bytes through the allocation unit (`cluster` and `64K` on 64 KiB clusters) were measured once, under the first.
    SizesMerged = "sizes-merged",
    // `iolab matrix`.
    /// More space used after a workload than before it: the file system did not give the space back.
    SpaceNotReturned = "space-not-returned",
    /// The allocation unit could not be read back after mkfs (no unit asked).
    UnitUnknown = "unit-unknown",
    /// A FUSE helper mounted with options it shows nowhere and would have ignored without a word had it not known them.
    MountOptionsUnchecked = "mount-options-unchecked",
    /// A note on the matrix plan: study workload choice, clamped image size.
    MatrixNote = "matrix-note",
    // `iolab saturate`.
    /// The test size is small for the device: the sweep may measure a cache; use a larger size.
    SmallTestSize = "small-test-size",
    /// A timed run's window held fewer than 20 completed I/Os (none: the device took longer than the run): its rates are coarse; run longer.
    FewIos = "few-ios",
    /// A target refused O_DIRECT and ran buffered (`--allow-buffered`): the page cache takes part in every latency.
    Buffered = "buffered",
    /// IOPS fell for two depth steps in a row: past the knee, more requests only queue up.
    Thrashing = "thrashing",
    /// The asked engine was not available for every job: depths above 1 were not really in flight.
    EngineFallback = "engine-fallback",
    /// A depth held the latency limit although a smaller one broke it: the device is noisy; lengthen `--step-duration`.
    NoisyCurve = "noisy-curve",
    /// The sweeps took more than 20 % over the printed estimate.
    OverEstimate = "over-estimate",
    // `iolab copy`.
    /// Not root: the page cache was not dropped between phases, so read and copy may be warm.
    CacheWarm = "cache-warm",
    /// The RAM dir is not on tmpfs: the source side of the write phase may limit the result; give a tmpfs with `--ram-dir`.
    RamDirNotRam = "ram-dir-not-ram",
    /// Entries of `--source` that are neither files nor directories were not copied.
    SourceSkipped = "source-skipped",
    /// The file system's used space moved during a phase by more than the phase can explain (another program wrote there): its df figures (`iolab copy`: on disk, freed or not; `iolab files`: the space with the files in place) are not the test's alone and are left out.
    OtherWriters = "other-writers",
    // `iolab slack`.
    /// Entries of the scanned tree could not be read and were skipped.
    UnreadableEntries = "unreadable-entries",
    /// Files larger than the file system can store (FAT32 > 4 GiB − 1) were left out of the allocation.
    TooLargeForFs = "too-large-for-fs",
    /// No regular files were found.
    NoFiles = "no-files",
    /// The write-cost model is the built-in defaults, not a calibration from files results.
    CostDefaults = "cost-defaults",
    // `iolab trace`.
    /// A paced stream missed more than 1 % of its deadlines: the rate was not held.
    RateMissed = "rate-missed",
    /// A replayed trace file holds fewer calls than its header records (cut short): the replay issues only those, and the comparison with the recorded time does not hold.
    TraceTruncated = "trace-truncated",
    /// `trace replay --timing recorded` of a trace recorded with strace: strace's own cost per call is in the time stamps, so the replay keeps the program's pace as slowed by strace.
    StracePace = "strace-pace",
    // Distributed runs (`mpirun … iolab`).
    /// One rank ran more than 25 % below another: the totals are those of uneven clients; check that host.
    Straggler = "straggler",
    /// The ranks' measured windows started more than 5 % of the window apart: the totals are low.
    StartSkew = "start-skew",
    /// A rank's clock is off rank 0's by more than 1 % of a run; synchronize the clocks (chrony/NTP).
    ClockOffset = "clock-offset",
    // The state of the drive (sysinfo::thermal).
    /// The drive's throttle counters grew during the run, or a material throughput drop came while it was at or above its warning temperature.
    ThermalThrottling = "thermal-throttling",
    // `iolab age`.
    /// Aging ran out of inodes before the target fullness: the file system holds fewer, larger-looking files than the profile asked; it stopped short of the fullness.
    InodesShort = "inodes-short",
    /// Aging ended below the target fullness: the churn was written before it got there (no file was deleted, the file system was filled once, not aged), or the files were large against the file system, or it took less room for them than aging counts.
    FillNotReached = "fill-not-reached",
    /// Aging ended 2 points or more above the target fullness: the file system took more room for the files than aging counts (btrfs's metadata for each file).
    FillExceeded = "fill-exceeded",
    // `iolab sustain`.
    /// A sustained write found no cliff: a write cache, if any, is larger than what was written (write more with `--size`/`--span`); recovery passes were skipped.
    NoCliff = "no-cliff",
    /// The slow phase after a cliff lasted only a few intervals: its speed is uncertain; write more.
    ShortSlowPhase = "short-slow-phase",
    /// `--steadystate`: no window of rounds met the rule before `--steadystate-max`.
    SteadyStateNotReached = "steady-state-not-reached",
    /// `iolab run`: its writes may have gone into the drive's write cache (a cliff in its own write series, or a saved `iolab sustain` result whose cache holds them); run `iolab sustain`.
    WriteCacheSuspected = "write-cache-suspected",
    // `iolab compare` (the comparison's own warnings, not a result file's).
    /// A matched test was recorded with different settings in the two files (`files_per_portion 50 vs 10`): the change may come from them.
    SettingsDiffer = "settings-differ",
    /// The two files' targets were in another state of use: one on an aged file system (a tree `iolab age` left) and the other not, or their fullness 10 points or more apart: the change includes what aging and fullness do.
    AgingDiffers = "aging-differs",
    /// Two inputs are the same result (the same file given twice): every change is zero by construction.
    SameResult = "same-result",
    /// An input did not complete (interrupted, failed, still running) or has a test that ended early: fewer runs than asked, or tests missing.
    PartialResult = "partial-result",
}

impl fmt::Display for WarningCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq for WarningCode {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for WarningCode {}

impl PartialEq<&str> for WarningCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<str> for WarningCode {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialOrd for WarningCode {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for WarningCode {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl std::hash::Hash for WarningCode {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl Serialize for WarningCode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for WarningCode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(|s| WarningCode::from_wire(&s))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn wire_names_round_trip_and_are_unique() {
        let mut seen = BTreeSet::new();
        for c in WarningCode::ALL {
            assert!(seen.insert(c.as_str()), "{c} listed twice");
            assert!(!matches!(c, WarningCode::Other(_)), "{c:?}");
            let json = serde_json::to_string(c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.as_str()));
            let back: WarningCode = serde_json::from_str(&json).unwrap();
            assert!(
                !matches!(back, WarningCode::Other(_)) && back == *c,
                "{back:?}"
            );
            assert!(
                c.as_str()
                    .split('-')
                    .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_lowercase())),
                "{c} is not kebab-case"
            );
        }
    }

    #[test]
    fn unknown_code_reads_back_as_other_and_writes_unchanged() {
        let c: WarningCode = serde_json::from_str("\"from-a-newer-iolab\"").unwrap();
        assert_eq!(c, WarningCode::Other("from-a-newer-iolab".into()));
        assert_eq!(serde_json::to_string(&c).unwrap(), "\"from-a-newer-iolab\"");
        assert!(serde_json::from_str::<WarningCode>("3").is_err());
        assert_eq!(WarningCode::Other("noisy".into()), WarningCode::Noisy);
        assert_eq!(WarningCode::from_wire("cpu-bound"), WarningCode::CpuBound);
        assert!(matches!(
            WarningCode::from_wire("cpu-bound"),
            WarningCode::CpuBound
        ));
        assert_eq!(WarningCode::CpuBound, "cpu-bound");
        assert_eq!(WarningCode::CpuBound.to_string(), "cpu-bound");
    }

    /// The codes `docs/results-schema.md` documents: the first cell of every row of a table
    /// whose header's first cell is `code`, and every backticked kebab-case word of a
    /// paragraph or list item that starts with `Warnings`.
    fn documented_codes(doc: &str) -> BTreeSet<String> {
        fn backticked(line: &str) -> impl Iterator<Item = &str> {
            line.split('`').skip(1).step_by(2)
        }
        fn is_code(s: &str) -> bool {
            !s.is_empty()
                && s.split('-').all(|p| {
                    !p.is_empty()
                        && p.bytes()
                            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
                })
        }
        let mut codes = BTreeSet::new();
        let mut in_code_table = false;
        let mut in_warnings = false;
        for line in doc.lines() {
            let t = line.trim();
            if t.starts_with('|') {
                in_warnings = false;
                let first = t
                    .trim_start_matches('|')
                    .split('|')
                    .next()
                    .unwrap_or("")
                    .trim();
                if first == "code" {
                    in_code_table = true;
                } else if in_code_table && !first.starts_with("---") {
                    codes.extend(backticked(first).filter(|c| is_code(c)).map(String::from));
                }
                continue;
            }
            in_code_table = false;
            let item = t.strip_prefix("- ").unwrap_or(t);
            if item.starts_with("Warnings") {
                in_warnings = true;
            } else if t.is_empty()
                || t.starts_with("- ")
                || t.starts_with('#')
                || t.starts_with("<!--")
            {
                in_warnings = false;
            }
            if in_warnings {
                // Up to the end of the sentence: prose between backticks holding ". " or
                // ending the line with ".".
                let parts: Vec<&str> = t.split('`').collect();
                for (i, part) in parts.iter().enumerate() {
                    if i % 2 == 1 {
                        if is_code(part) {
                            codes.insert(part.to_string());
                        }
                    } else if part.contains(". ") || (i + 1 == parts.len() && part.ends_with('.')) {
                        in_warnings = false;
                        break;
                    }
                }
            }
        }
        codes
    }

    #[test]
    fn results_schema_documents_every_code() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/results-schema.md");
        let doc = std::fs::read_to_string(path).unwrap();
        let documented = documented_codes(&doc);
        let known: BTreeSet<String> = WarningCode::ALL
            .iter()
            .map(|c| c.as_str().to_string())
            .collect();
        let missing: Vec<&String> = known.difference(&documented).collect();
        let unknown: Vec<&String> = documented.difference(&known).collect();
        assert!(
            missing.is_empty() && unknown.is_empty(),
            "{path}: warning codes missing from the doc (add them to a `| code |` table or a \
             `Warnings: ...` paragraph): {missing:?}; documented but not in WarningCode: {unknown:?}"
        );
    }

    #[test]
    fn doc_parser_reads_tables_and_warnings_paragraphs() {
        let doc = "\
| code | when |
|---|---|
| `page-cache` | buffered, see `--direct` |

Text with `not-a-code` outside.
Warnings: `noisy` (a `--flag`), `on rank N (host),`
`rate-missed` still the sentence.
Next sentence, same paragraph: `error`.
Warnings: `no-files`. Then `not-listed`.

- Warnings: `cache-warm`
- other item `ignored`
";
        let got: Vec<String> = documented_codes(doc).into_iter().collect();
        assert_eq!(
            got,
            [
                "cache-warm",
                "no-files",
                "noisy",
                "page-cache",
                "rate-missed"
            ]
        );
    }
}

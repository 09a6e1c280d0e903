//! The command line's names for the domain's choices. The enums live where they mean
//! something (engine/, workload/) and know nothing of clap; the names the command line
//! accepts, their aliases and the help shown for each are said here, once.

use clap::ValueEnum;
use clap::builder::PossibleValue;

use crate::engine::EngineKind;
use crate::workload::block::{Region, Rw};
use crate::workload::copy::{CopyMethod, HashKind};
use crate::workload::files::{FilesPreset, Layout, Method, SyncMode};
use crate::workload::presets::Preset;
use crate::workload::saturate::{Aggregate, Statistic, SweepKind};
use crate::workload::trace::record::Recorder;
use crate::workload::trace::replay::Timing;

/// `impl ValueEnum for T` from a list of `Variant => "name" [aliases] "help"`.
macro_rules! values {
    ($ty:ident { $($variant:ident => $name:literal $([$($alias:literal),+])? $help:literal,)+ }) => {
        impl ValueEnum for $ty {
            fn value_variants<'a>() -> &'a [Self] {
                &[$($ty::$variant),+]
            }
            fn to_possible_value(&self) -> Option<PossibleValue> {
                let (v, help) = match self {
                    $($ty::$variant => (PossibleValue::new($name)$($(.alias($alias))+)?, $help),)+
                };
                Some(if help.is_empty() { v } else { v.help(help) })
            }
        }
    };
}

values!(Recorder {
    Auto => "auto" "Tracepoints when available (root, tracefs, BTF), else strace with a note",
    Tracepoints => "tracepoints" "Kernel tracepoints (syscalls, io_uring) and tiny BPF programs: low overhead, kernel time stamps, io_uring I/O included. Needs root",
    Strace => "strace" "strace (ptrace): works without root, slows the program, sees no io_uring I/O",
});

values!(Timing {
    Asap => "asap" "Every thread issues its calls as fast as possible (order kept per file)",
    Recorded => "recorded" "Every call is issued at its recorded time since the start",
});

values!(EngineKind {
    Sync => "sync" "pread/pwrite, one I/O in flight per job",
    Uring => "uring" "io_uring: many I/Os in flight per job, registered buffers and files",
    Null => "null" "No I/O at all: measures iolab's own overhead",
});

/// `--engine` of a command that must write (`iolab sustain`): the engines that do. Its help
/// listed `null` ("No I/O at all: measures iolab's own overhead"), which the command then
/// refused; `null` still parses, so that the command's check says why it is refused.
#[derive(Clone, Copy, Debug, Default)]
pub struct WritingEngine;

impl clap::builder::TypedValueParser for WritingEngine {
    type Value = EngineKind;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<EngineKind, clap::Error> {
        if value == "null" {
            return Ok(EngineKind::Null);
        }
        // Unknown names are refused listing the writing engines only.
        let names = self.possible_values().into_iter().flatten();
        let name = clap::builder::PossibleValuesParser::new(names).parse_ref(cmd, arg, value)?;
        EngineKind::from_str(&name, false)
            .map_err(|e| clap::Error::raw(clap::error::ErrorKind::InvalidValue, e))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            EngineKind::value_variants()
                .iter()
                .filter(|e| **e != EngineKind::Null)
                .filter_map(ValueEnum::to_possible_value),
        ))
    }
}

values!(Rw {
    Read => "read" "",
    Write => "write" "",
    Randread => "randread" "",
    Randwrite => "randwrite" "",
    Randrw => "randrw" "Random reads and writes, --rwmix-read % reads",
    Readwrite => "readwrite" ["rw"] "Sequential reads and writes mixed (fio's `rw`/`readwrite`; CrystalDiskMark's SEQ Mix): one sequential stream, each I/O a read with --rwmix-read % probability",
});

values!(Region {
    Split => "split" "Each job gets its own equal slice of the region (default)",
    Shared => "shared" "Every job covers the whole region (with its own random sequence)",
});

values!(Preset {
    Default => "default" "CrystalDiskMark's default: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1",
    Nvme => "nvme" "CrystalDiskMark's NVMe SSD profile: SEQ1M Q8T1, SEQ128K Q32T1, RND4K Q32T16, RND4K Q1T1",
    Real => "real" "What applications mostly see: SEQ1M Q1T1 and RND4K Q1T1",
    Peak => "peak" "The default tests, reporting the best repeat as CrystalDiskMark does (not the median)",
});

values!(Method {
    Write => "write" "open(O_CREAT|O_EXCL), write, close: the Linux equivalent of CopyFile",
    CopyFileRange => "copy_file_range" "copy_file_range(2) from the reference (a memfd; a file on the target when the kernel refuses cross-file-system copies)",
    Sendfile => "sendfile" "sendfile(2) from the reference in a memfd",
});

values!(SyncMode {
    None => "none" "Never: the page cache decides",
    File => "file" "fsync(2) every file before closing it",
    Portion => "portion" "syncfs(2) after every portion",
    End => "end" "One syncfs(2) at the end of the create phase",
});

values!(Layout {
    Flat => "flat" "All files of a run in one directory (directory scaling is measured)",
    PerPortion => "per-portion" "One directory per portion",
    PerPass => "per-pass" "One directory per pass",
});

values!(FilesPreset {
    Quick => "quick" "500 files per portion x 5 portions x 2 passes x 3 runs: about a minute",
    Full => "full" "Belov's counts: 10,000 files per portion x 20 portions x 16 passes x 3 runs",
});

values!(CopyMethod {
    Auto => "auto" "What GNU cp 9 does: copy_file_range(2), falling back to read/write with --buffer where the kernel refuses it (across file systems: EXDEV). Within one xfs or btrfs the kernel shares the extents (reflink) instead of copying: the copy phase says so",
    Rw => "rw" "read(2) into a buffer, write(2) it out (what GNU cp does across file systems)",
    CopyFileRange => "copy_file_range" ["cfr"] "copy_file_range(2): the kernel copies (falls back to rw where refused, e.g. EXDEV)",
    Sendfile => "sendfile" "sendfile(2) from the source file to the destination file",
});

values!(HashKind {
    Xxh3 => "xxh3" "XXH3 128-bit: fast, non-cryptographic",
    Blake3 => "blake3" "BLAKE3: cryptographic, still fast",
});

values!(SweepKind {
    Randread => "randread" "Random reads (of --bs, default 4 KiB)",
    Randwrite => "randwrite" "Random writes",
    Mixed => "mixed" "Independent reads and writes at the same time: two job groups, not randrw (whose reads and writes depend on each other). --mix sets the read share of the depth",
});

/// `iolab saturate --rw`: the sweep names; the names of `iolab run`'s other patterns are
/// refused with what saturate runs instead. `readwrite` and `rw` were aliases of `mixed`,
/// so `--rw readwrite`, `iolab run`'s sequential mixed stream, silently swept random
/// independent reads and writes; `randrw` got clap's tip "a similar value exists:
/// 'randwrite'", a write-only sweep.
#[derive(Clone, Copy, Debug, Default)]
pub struct SweepParser;

impl SweepParser {
    /// Why `name` (a pattern of `iolab run`) is no sweep, and what to give instead.
    fn not_a_sweep(name: &str) -> Option<&'static str> {
        Some(match name {
            "randrw" => {
                "saturate has no randrw (one stream whose reads and writes depend on each other); its mixed sweep runs a read group and a write group at the same time, independently: --rw mixed (--mix sets the read share)"
            }
            "readwrite" | "rw" => {
                "that is iolab run's sequential mixed stream; saturate sweeps random I/O only: randread, randwrite, or mixed (random reads and writes at the same time)"
            }
            "read" | "write" => {
                "saturate sweeps random I/O only: randread, randwrite or mixed (sequential I/O: iolab run --rw read|write)"
            }
            _ => return None,
        })
    }
}

impl clap::builder::TypedValueParser for SweepParser {
    type Value = SweepKind;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<SweepKind, clap::Error> {
        let name = value.to_string_lossy();
        if let Some(why) = Self::not_a_sweep(&name) {
            // As clap names the flag in its own errors: '--rw <RW>'.
            let flag = arg.map_or_else(|| "--rw".to_string(), |a| a.to_string());
            return Err(clap::Error::raw(
                clap::error::ErrorKind::InvalidValue,
                format!("invalid value '{name}' for '{flag}': {why}\n"),
            )
            .format(&mut cmd.clone()));
        }
        clap::builder::EnumValueParser::<SweepKind>::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            SweepKind::value_variants()
                .iter()
                .filter_map(ValueEnum::to_possible_value),
        ))
    }
}

values!(Statistic {
    Mean => "mean" "",
    P99 => "p99" "",
    P999 => "p99.9" ["p999"] "",
});

values!(Aggregate {
    Mean => "mean" "Over all I/Os of all streams together",
    Max => "max" "The worst stream",
});

/// fio's options that `iolab run` and `iolab saturate` name differently or do not offer:
/// `(command, fio's flag, what this command does instead)`, the tip an unknown flag gets.
/// clap found nothing for most (`--numjobs`, `--runtime`) and guessed wrong for some
/// (`--random_distribution`: "a similar argument exists: '--precondition'"). The names are
/// fio's own spellings, with the underscores a fio job file has; docs/GUIDE.md's table of
/// fio's names says the same.
#[rustfmt::skip]
pub const FIO_NAMES: &[(&str, &str, &str)] = &[
    ("iolab run", "--numjobs", "fio's numjobs is --jobs (threads, as with fio's thread option)"),
    ("iolab run", "--thread", "iolab's jobs are always threads: --jobs N"),
    ("iolab run", "--runtime", "fio's runtime is --duration, and every run is time-based (fio's time_based); --io-size makes it size-based"),
    ("iolab run", "--time_based", "every run is time-based already (--duration); --io-size makes it size-based"),
    ("iolab run", "--ramp_time", "fio's ramp_time is --ramp (default 500ms)"),
    ("iolab run", "--rwmixread", "fio's rwmixread is --rwmix-read (default 70 here, 50 in fio)"),
    ("iolab run", "--rwmixwrite", "iolab takes the share of reads: --rwmix-read 100-N"),
    ("iolab run", "--readwrite", "fio's readwrite is --rw (fio's rw=rw is --rw readwrite or rw)"),
    ("iolab run", "--blocksize", "fio's blocksize is --bs"),
    ("iolab run", "--ioengine", "fio's ioengine is --engine: uring (io_uring) or sync (psync)"),
    ("iolab run", "--filename", "the file or device is --target (or a word: iolab run PATH); an existing file needs --allow-destroy FILE"),
    ("iolab run", "--directory", "a directory is --target DIR (or a word: iolab run DIR): iolab creates its test file there"),
    ("iolab run", "--io_size", "fio's io_size is --io-size (bytes per job and run)"),
    ("iolab run", "--offset", "iolab has no offset option: a test covers the target's first --size bytes"),
    ("iolab run", "--fsync", "iolab has no fsync between writes: a write run ends with one fsync, timed apart (fsync_ns in the JSON), not in IOPS"),
    ("iolab run", "--fdatasync", "iolab has no fdatasync between writes: a write run ends with one fsync, timed apart (fsync_ns in the JSON), not in IOPS"),
    ("iolab run", "--end_fsync", "a write run always ends with one fsync, timed apart (fsync_ns in the JSON), not in IOPS"),
    ("iolab run", "--random_distribution", "random offsets are uniform only: every block once per pass, in a random order (fio's default random map)"),
    ("iolab run", "--norandommap", "random offsets always visit every block once per pass (fio's random map)"),
    ("iolab run", "--randrepeat", "the offsets and data follow --seed N: the same seed, the same offsets and bytes"),
    ("iolab run", "--randseed", "fio's randseed is --seed"),
    ("iolab run", "--loops", "runs per test are --repeat N"),
    ("iolab run", "--group_reporting", "a test's jobs are always reported together"),
    ("iolab run", "--output-format", "--json prints the result (JSON) instead of the table"),
    ("iolab run", "--lat_percentiles", "latency is always fio's lat (submit to completion), with percentiles in the table and the JSON"),
    ("iolab run", "--clat_percentiles", "latency is fio's lat (submit to completion), not its clat; percentiles are in the table and the JSON"),
    ("iolab run", "--iomem", "--huge-pages false keeps I/O buffers on ordinary pages, as fio's default iomem=malloc"),
    ("iolab run", "--zero_buffers", "--pattern zero"),
    ("iolab run", "--refill_buffers", "--pattern random refills every write (the default); --pattern stamped reuses the buffers, as fio's default"),
    ("iolab run", "--verify=", "iolab's --verify is a flag, without a value: every written 512-byte sector sealed (xxh3) and checked when read"),
    ("iolab run", "--ss", "fio's ss is --steadystate"),
    ("iolab run", "--ss_dur", "fio's ss_dur is --steadystate-duration"),
    ("iolab run", "--ss_ramp", "fio's ss_ramp is --steadystate-ramp"),
    ("iolab saturate", "--numjobs", "fio's numjobs is --jobs (a list: --jobs 1,4)"),
    ("iolab saturate", "--iodepth", "iolab saturate sweeps the depth itself, up to --max-depth"),
    ("iolab saturate", "--runtime", "fio's runtime is --step-duration (the time of each step of a sweep)"),
    ("iolab saturate", "--ramp_time", "fio's ramp_time is --ramp"),
    ("iolab saturate", "--rwmixread", "--mix is the mixed sweep's share of the depth given to reads (a read and a write stream at once, not fio's draw per I/O)"),
    ("iolab saturate", "--blocksize", "fio's blocksize is --bs"),
    ("iolab saturate", "--filename", "the file or device is --target (or a word: iolab saturate PATH)"),
    ("iolab saturate", "--direct", "iolab saturate always asks for O_DIRECT; --allow-buffered runs where it is refused"),
    ("iolab saturate", "--ioengine", "iolab saturate runs io_uring (sync where the kernel offers none, with a note)"),
];

/// What `command` does instead of fio's `flag` (`--numjobs`; a value for a flag of iolab's
/// that takes none, fio's `--verify=crc32c`, as `--verify=`).
pub fn fio_tip(command: &str, flag: &str) -> Option<&'static str> {
    FIO_NAMES
        .iter()
        .find(|(c, f, _)| *c == command && *f == flag)
        .map(|(_, _, tip)| *tip)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variant has a name, and the name parses back to it (ignoring case as clap's
    /// derive did not: the names are lower case).
    fn round_trip<T: ValueEnum + PartialEq + std::fmt::Debug>() {
        for v in T::value_variants() {
            let name = v.to_possible_value().unwrap().get_name().to_string();
            assert_eq!(&T::from_str(&name, false).unwrap(), v, "{name}");
        }
    }

    #[test]
    fn names_parse_back() {
        round_trip::<EngineKind>();
        round_trip::<Rw>();
        round_trip::<Region>();
        round_trip::<Preset>();
        round_trip::<Method>();
        round_trip::<SyncMode>();
        round_trip::<Layout>();
        round_trip::<FilesPreset>();
        round_trip::<CopyMethod>();
        round_trip::<HashKind>();
        round_trip::<SweepKind>();
        round_trip::<Statistic>();
        round_trip::<Aggregate>();
        round_trip::<Recorder>();
        round_trip::<Timing>();
        assert_eq!(
            CopyMethod::from_str("cfr", false).unwrap(),
            CopyMethod::CopyFileRange
        );
        assert_eq!(Statistic::from_str("p999", false).unwrap(), Statistic::P999);
        assert_eq!(Rw::from_str("rw", false).unwrap(), Rw::Readwrite);
    }

    /// Every fio name of `FIO_NAMES` is one its command does not take (else clap would take
    /// it and the tip would never show), every flag a tip names is one the command takes,
    /// and docs/GUIDE.md's table of fio's names lists each.
    #[test]
    fn fio_names_point_at_flags_the_command_takes() {
        use clap::CommandFactory;
        let guide = include_str!("../../docs/GUIDE.md");
        let root = crate::cli::Cli::command();
        for (command, fio, tip) in FIO_NAMES {
            let name = command.strip_prefix("iolab ").unwrap();
            let cmd = root.find_subcommand(name).unwrap();
            let longs: Vec<&str> = cmd.get_arguments().filter_map(|a| a.get_long()).collect();
            let takes = |flag: &str| longs.contains(&flag.trim_start_matches("--"));
            assert!(!takes(fio), "{command} takes {fio}: no tip needed");
            for word in tip.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
                if word.starts_with("--") {
                    assert!(
                        takes(word),
                        "{command} {fio}: the tip names {word}, not a flag of it"
                    );
                }
            }
            let fio_word = fio.trim_start_matches("--").trim_end_matches('=');
            assert!(
                guide.contains(&format!("`{fio_word}`")),
                "docs/GUIDE.md's table of fio's names lacks `{fio_word}`"
            );
        }
        assert!(fio_tip("iolab run", "--verify=").is_some());
        assert!(fio_tip("iolab run", "--verify").is_none());
    }

    /// The names the domain prints (`name()`) are the ones the command line accepts.
    #[test]
    fn printed_names_are_accepted_names() {
        fn agree<T: ValueEnum>(name: impl Fn(&T) -> &'static str) {
            for v in T::value_variants() {
                assert_eq!(v.to_possible_value().unwrap().get_name(), name(v));
            }
        }
        agree::<EngineKind>(|v| v.name());
        agree::<Rw>(|v| v.name());
        agree::<CopyMethod>(|v| v.name());
        agree::<SweepKind>(|v| v.name());
        agree::<Statistic>(|v| v.name());
        agree::<Preset>(|v| v.name());
        agree::<Timing>(|v| v.name());
    }
}

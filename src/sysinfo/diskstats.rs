//! Device counters from `/proc/diskstats`, read before and after every phase so results
//! show what really reached the device.
//!
//! Every workload does, per phase:
//! `let ph = PhaseCounters::for_path(dir);` ... `run.device = ph.as_ref().and_then(|p| p.finish());`
//! then `run.write_amplification = write_amplification(&dc, app_written)` and
//! `cache_absorbed_warning(&dc, app_written)` for write phases.

use std::path::Path;
use std::time::Instant;

use crate::model::device::DeviceCounters;
use crate::model::{Warning, WarningCode};

pub use super::procdiskstats::{DiskStat, parse_line, read};

/// A phase being watched: take it before the phase, `finish` after.
#[derive(Debug, Clone)]
pub struct PhaseCounters {
    before: DiskStat,
    /// The other devices of a file system over several (a multi-device btrfs): the
    /// deltas are the sum over all of them, as the file system's I/O is spread over them.
    members: Vec<DiskStat>,
    started: Instant,
    /// For a loop device: the device holding its backing file, watched too.
    backing: Option<Box<PhaseCounters>>,
}

/// Loop devices over files on loop devices: follow at most this many levels.
const MAX_BACKING_DEPTH: usize = 4;

impl PhaseCounters {
    /// Start watching device `device` (kernel name). `None` when the target has no block
    /// device (tmpfs, network) or the device is not in `/proc/diskstats`.
    pub fn start(device: Option<&str>) -> Option<PhaseCounters> {
        Self::start_depth(device?, 0)
    }

    /// Start watching the block device under `path` (a file, a directory or a device node;
    /// for an overlay, the device of its upper layer). `None` when there is none:
    /// `crate::sysinfo::resolve::no_device_warning(path)` says why.
    pub fn for_path(path: &Path) -> Option<PhaseCounters> {
        let (name, _) = super::resolve::device_of_path(path)?;
        Self::start(Some(&name))
    }

    fn start_depth(device: &str, depth: usize) -> Option<PhaseCounters> {
        let backing = if depth < MAX_BACKING_DEPTH {
            super::resolve::loop_backing_device(device)
                .and_then(|b| Self::start_depth(&b, depth + 1))
                .map(Box::new)
        } else {
            None
        };
        let before = read(device)?;
        let members = if depth == 0 {
            super::resolve::other_fs_members(device)
                .iter()
                .filter_map(|m| read(m))
                .collect()
        } else {
            Vec::new()
        };
        Some(PhaseCounters {
            before,
            members,
            started: Instant::now(),
            backing,
        })
    }

    /// Start the phase over, now: the counters (and the backing device's) and the clock are
    /// read again, the device chain having been resolved by `start`. For a phase that must
    /// open at a given moment (the end of a run's ramp) without waiting for sysfs.
    pub fn restart(&mut self) {
        if let Some(before) = read(&self.before.name) {
            self.before = before;
        }
        for m in &mut self.members {
            if let Some(before) = read(&m.name) {
                *m = before;
            }
        }
        self.started = Instant::now();
        if let Some(b) = self.backing.as_mut() {
            b.restart();
        }
    }

    /// Kernel name of the device being watched.
    pub fn device(&self) -> &str {
        &self.before.name
    }

    /// The deltas since `start` (the phase may go on; `finish` can be called again).
    pub fn finish(&self) -> Option<DeviceCounters> {
        let after = read(&self.before.name)?;
        let mut d = delta(&self.before, &after);
        d.elapsed_ms = self.started.elapsed().as_millis() as u64;
        d.backing = self.backing.as_ref().and_then(|p| p.finish()).map(Box::new);
        for m in &self.members {
            let Some(after) = read(&m.name) else {
                continue;
            };
            let e = delta(m, &after);
            d.device = format!("{}+{}", d.device, e.device);
            d.read_ios += e.read_ios;
            d.read_merges += e.read_merges;
            d.read_bytes += e.read_bytes;
            d.write_ios += e.write_ios;
            d.write_merges += e.write_merges;
            d.write_bytes += e.write_bytes;
            d.discard_bytes += e.discard_bytes;
            d.flush_ios += e.flush_ios;
            // The devices work side by side: busy while any of them was (at most).
            d.busy_ms = d.busy_ms.max(e.busy_ms);
        }
        Some(d)
    }
}

/// What one device did between two readings (no elapsed time, no backing device).
fn delta(b: &DiskStat, after: &DiskStat) -> DeviceCounters {
    DeviceCounters {
        device: b.name.clone(),
        read_ios: after.read_ios.saturating_sub(b.read_ios),
        read_merges: after.read_merges.saturating_sub(b.read_merges),
        read_bytes: after.read_sectors.saturating_sub(b.read_sectors) * 512,
        write_ios: after.write_ios.saturating_sub(b.write_ios),
        write_merges: after.write_merges.saturating_sub(b.write_merges),
        write_bytes: after.write_sectors.saturating_sub(b.write_sectors) * 512,
        discard_bytes: after.discard_sectors.saturating_sub(b.discard_sectors) * 512,
        flush_ios: after.flush_ios.saturating_sub(b.flush_ios),
        busy_ms: after.io_ticks_ms.saturating_sub(b.io_ticks_ms),
        elapsed_ms: 0,
        backing: None,
    }
}

/// Device-written bytes / application-written bytes.
pub fn write_amplification(device: &DeviceCounters, app_written_bytes: u64) -> Option<f64> {
    (app_written_bytes > 0).then(|| device.write_bytes as f64 / app_written_bytes as f64)
}

/// Below this the page cache, the journal's commit interval and metadata make the device's
/// view too coarse to judge.
const CACHE_CHECK_MIN_BYTES: u64 = 1 << 20;

/// The device saw less than this fraction of what the application wrote.
const CACHE_ABSORBED_RATIO: f64 = 0.5;

/// A warning when a write phase wrote far fewer bytes to the device than the application
/// did: the page cache (or a RAM-backed layer) absorbed the writes, so the speed measured is
/// memory's, not the device's. The caller sets `test`.
pub fn cache_absorbed_warning(device: &DeviceCounters, app_written_bytes: u64) -> Option<Warning> {
    cache_warning(
        WarningCode::CacheAbsorbed,
        ("wrote", "written"),
        device,
        device.write_bytes,
        app_written_bytes,
        "the page cache absorbed the writes (or compression/deduplication below shrank them) and the figure measures memory, not the device; use direct I/O, fsync, or a size above 2x RAM",
    )
}

/// A warning when a read phase read far fewer bytes from the device than the application
/// did: a cache answered (the page cache of buffered I/O, a FUSE file system's daemon reading
/// its device through the page cache although the test asked for O_DIRECT, a file system's
/// own cache, never-written areas read back as zeros), so the speed is the cache's. The
/// caller sets `test`.
pub fn cache_served_warning(device: &DeviceCounters, app_read_bytes: u64) -> Option<Warning> {
    cache_warning(
        WarningCode::CacheServed,
        ("read", "read"),
        device,
        device.read_bytes,
        app_read_bytes,
        "a cache answered the reads (the page cache; under a FUSE file system its daemon's, even with O_DIRECT; or never-written areas) and the figure measures it, not the device; use a size above 2x RAM or a file system that honours O_DIRECT",
    )
}

/// "the application wrote X but DEV saw only Y written (Z %): WHY", when the device's share
/// of what the application moved in one direction is below `CACHE_ABSORBED_RATIO` and the
/// application moved enough to judge (a cache took it).
fn cache_warning(
    code: WarningCode,
    (verb, participle): (&str, &str),
    device: &DeviceCounters,
    device_bytes: u64,
    app_bytes: u64,
    why: &str,
) -> Option<Warning> {
    let ratio = device_bytes as f64 / app_bytes as f64;
    if app_bytes < CACHE_CHECK_MIN_BYTES || ratio >= CACHE_ABSORBED_RATIO {
        return None;
    }
    let size = crate::units::fmt_size_iec;
    Some(Warning {
        code,
        message: format!(
            "the application {verb} {} but {} saw only {} {participle} ({:.0} %): {why}",
            size(app_bytes),
            device.device,
            size(device_bytes),
            ratio * 100.0
        ),
        test: None,
    })
}

/// The device did more than this many times the test's reads or writes...
const EXTRA_IO_RATIO: u64 = 2;
/// ... and this many bytes more: below it, a journal commit or a metadata write is enough.
const EXTRA_IO_MIN_BYTES: u64 = 8 << 20;

/// Did the device move clearly more bytes (`dev`) than the test did (`app`) in one
/// direction: more than `EXTRA_IO_RATIO` times and `EXTRA_IO_MIN_BYTES` more?
pub fn clearly_more(dev: u64, app: u64) -> bool {
    dev > EXTRA_IO_RATIO.saturating_mul(app) && dev - app > EXTRA_IO_MIN_BYTES
}

/// A warning when the device wrote (or read) clearly more than the test did over the same
/// window: more than `EXTRA_IO_RATIO` times and `EXTRA_IO_MIN_BYTES` more. Then dev MB/s
/// and write amplification are not the test's alone: another program used the device, or
/// the file system did work of its own (journal and metadata, copy-on-write, read-ahead).
/// A journaled file system under a block test stays well below it (direct I/O on ext4:
/// WA about 1.0-1.1). The caller sets `test`.
pub fn extra_io_warning(
    device: &DeviceCounters,
    app_read_bytes: u64,
    app_written_bytes: u64,
) -> Option<Warning> {
    use crate::units::fmt_size_iec;
    let found: Vec<String> = [
        ("wrote", device.write_bytes, app_written_bytes),
        ("read", device.read_bytes, app_read_bytes),
    ]
    .into_iter()
    .filter(|&(_, dev, app)| clearly_more(dev, app))
    .map(|(did, dev, app)| {
        let ratio = if app == 0 {
            String::new()
        } else {
            format!(" ({:.1}x)", dev as f64 / app as f64)
        };
        format!(
            "{did} {} while the test {did} {}{ratio}",
            fmt_size_iec(dev),
            fmt_size_iec(app)
        )
    })
    .collect();
    if found.is_empty() {
        return None;
    }
    Some(Warning {
        code: WarningCode::DeviceExtraIo,
        message: format!(
            "{} {}: dev MB/s and WA include other programs' I/O or the file system's own (journal, metadata, copy-on-write, read-ahead), not only the test's; measure on an otherwise idle device to read them as the test's",
            device.device,
            found.join(" and ")
        ),
        test: None,
    })
}

/// The device's view of a phase in one line, for tables: `loop3: wrote 32.0 MiB in 32
/// I/Os, read 0 B, busy 95 %, WA 1.00`.
pub fn device_view(device: &DeviceCounters, wa: Option<f64>) -> String {
    use crate::units::{fmt_size_iec, fmt_thousands};
    let mut s = format!(
        "{}: wrote {} in {} I/Os, read {} in {} I/Os",
        device.device,
        fmt_size_iec(device.write_bytes),
        fmt_thousands(device.write_ios as f64),
        fmt_size_iec(device.read_bytes),
        fmt_thousands(device.read_ios as f64)
    );
    if device.elapsed_ms > 0 {
        let busy = 100.0 * device.busy_ms as f64 / device.elapsed_ms as f64;
        s.push_str(&format!(", busy {:.0} %", busy.min(100.0)));
    }
    if let Some(wa) = wa {
        s.push_str(&format!(", WA {wa:.2}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counters(write_bytes: u64) -> DeviceCounters {
        DeviceCounters {
            device: "loop9".into(),
            write_bytes,
            write_ios: 3,
            elapsed_ms: 1000,
            busy_ms: 500,
            ..Default::default()
        }
    }

    /// Reads a cache answered (exfat-fuse with O_DIRECT: 137 MB/s, the device read 0 B) were
    /// shown as the device's with no word; reads the device served are not warned about.
    #[test]
    fn reads_the_device_did_not_see_are_warned_about() {
        let dev = |read_bytes| DeviceCounters {
            device: "loop9".into(),
            read_bytes,
            elapsed_ms: 1000,
            ..Default::default()
        };
        let w = cache_served_warning(&dev(0), 64 << 20).expect("nothing reached the device");
        assert_eq!(w.code, WarningCode::CacheServed);
        assert!(
            w.message
                .starts_with("the application read 64.0 MiB but loop9 saw only 0 B read (0 %)"),
            "{}",
            w.message
        );
        // Half or more reached the device (drained I/Os make it more): no warning.
        assert!(cache_served_warning(&dev(32 << 20), 64 << 20).is_none());
        assert!(cache_served_warning(&dev(65 << 20), 64 << 20).is_none());
        // Too little read to judge.
        assert!(cache_served_warning(&dev(0), 512 << 10).is_none());
    }

    #[test]
    fn write_amplification_is_device_over_app() {
        assert_eq!(write_amplification(&counters(300), 100), Some(3.0));
        assert_eq!(write_amplification(&counters(300), 0), None);
    }

    #[test]
    fn cache_absorbed_only_when_device_saw_little() {
        let app = 64 << 20;
        let w = cache_absorbed_warning(&counters(1 << 20), app).unwrap();
        assert_eq!(w.code, WarningCode::CacheAbsorbed);
        assert!(w.message.contains("64.0 MiB"), "{}", w.message);
        assert!(w.message.contains("loop9"), "{}", w.message);
        assert!(cache_absorbed_warning(&counters(app), app).is_none());
        assert!(cache_absorbed_warning(&counters(app / 2), app).is_none());
        // Too small to judge.
        assert!(cache_absorbed_warning(&counters(0), 4096).is_none());
    }

    #[test]
    fn extra_io_only_when_the_device_did_clearly_more() {
        const MIB: u64 = 1 << 20;
        let dev = |read_bytes: u64, write_bytes: u64| DeviceCounters {
            read_bytes,
            ..counters(write_bytes)
        };
        // QA's busy shared disk: WA 18.53 on a peak run.
        let w = extra_io_warning(&dev(0, 1186 * MIB), 0, 64 * MIB).unwrap();
        assert_eq!(w.code, WarningCode::DeviceExtraIo);
        assert_eq!(
            w.message,
            "loop9 wrote 1.2 GiB while the test wrote 64.0 MiB (18.5x): dev MB/s and WA \
             include other programs' I/O or the file system's own (journal, metadata, \
             copy-on-write, read-ahead), not only the test's; measure on an otherwise idle \
             device to read them as the test's"
        );
        // A journaled file system's extra: WA 1.1, or 2x of a small test.
        assert!(extra_io_warning(&dev(0, 70 * MIB), 0, 64 * MIB).is_none());
        assert!(extra_io_warning(&dev(0, 8 * MIB), 0, 2 * MIB).is_none());
        // Both limits: twice as much, and 8 MiB more.
        assert!(extra_io_warning(&dev(0, 128 * MIB), 0, 64 * MIB).is_none());
        assert!(extra_io_warning(&dev(0, 128 * MIB + 4096), 0, 64 * MIB).is_some());
        assert!(extra_io_warning(&dev(0, 10 * MIB), 0, 0).is_some());
        assert!(extra_io_warning(&dev(0, 8 * MIB), 0, 0).is_none());
        // Reads: a read test on a device someone else reads too; both directions named.
        let w = extra_io_warning(&dev(300 * MIB, 20 * MIB), 100 * MIB, 0).unwrap();
        assert!(
            w.message.starts_with(
                "loop9 wrote 20.0 MiB while the test wrote 0 B and read 300.0 MiB while \
                 the test read 100.0 MiB (3.0x): "
            ),
            "{}",
            w.message
        );
        assert!(extra_io_warning(&dev(100 * MIB, 0), 100 * MIB, 0).is_none());
    }

    #[test]
    fn device_view_line() {
        let v = device_view(&counters(2 << 20), Some(1.0));
        assert_eq!(
            v,
            "loop9: wrote 2.0 MiB in 3 I/Os, read 0 B in 0 I/Os, busy 50 %, WA 1.00"
        );
    }

    #[test]
    fn a_missing_device_has_no_counters() {
        assert!(PhaseCounters::start(Some("no-such-device-iolab")).is_none());
        assert!(PhaseCounters::start(None).is_none());
        assert!(PhaseCounters::for_path(Path::new("/proc/self")).is_none());
    }
}

//! Ground truth for the write-cache tests: a block device that behaves like a consumer SSD
//! with an SLC write cache, with numbers the test chooses.
//!
//! A loop device over an image in /dev/shm (RAM: the device itself is never the limit),
//! throttled by a cgroup-v1 blkio cgroup of our own (`blkio.throttle.write_bps_device`).
//! A controller thread watches the device's written sectors in /proc/diskstats and moves
//! the limit: `fast` bytes/s until `cache` bytes were written, then `slow`; after the
//! device was idle for `recovery` the cache is "flushed" and the limit is `fast` again.
//!
//! The throttle applies to the process that submits the I/O, and in cgroup v1 buffered
//! writes are submitted at writeback by the flusher, outside the cgroup: the writer must
//! run inside the cgroup (`Command` through [`WriteCacheDevice::command_in_cgroup`]) and
//! write with O_DIRECT.
//!
//! Everything is torn down on drop, panics included: the controller stops, the cgroup is
//! removed (after its processes are gone), the loop device detached and the image deleted.
//! Names carry the pid so parallel test runs on the machine never touch each other.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use iolab::fs::loopdev::LoopDevice;

pub const BLKIO: &str = "/sys/fs/cgroup/blkio";

/// How the emulated drive's write speed depends on what was written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SpeedModel {
    /// One limit, always (a drive without a cache cliff).
    Plain { bytes_per_s: u64 },
    /// A write cache: `fast` until `cache_bytes` were written, then `slow`; back to
    /// `fast` (cache empty) after `recovery` without writes.
    Cache {
        fast_bytes_per_s: u64,
        slow_bytes_per_s: u64,
        cache_bytes: u64,
        recovery: Duration,
    },
}

/// A change of limit the controller made, for the test to compare with what it measured.
/// A switch to the slow speed is made [`LIMIT_CHANGE_LAG`] early (see there).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Switch {
    pub at: Duration,
    /// Bytes the device had written (since the emulator started) when it switched.
    pub device_bytes: u64,
    pub bytes_per_s: u64,
}

/// Why the emulator cannot run here (the test skips with this).
pub fn unavailable() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("needs root (loop device, blkio cgroup)".into());
    }
    if !Path::new(BLKIO)
        .join("blkio.throttle.write_bps_device")
        .exists()
    {
        return Some(format!("no cgroup-v1 blkio throttling at {BLKIO}"));
    }
    if !Path::new("/dev/loop-control").exists() {
        return Some("no loop devices (/dev/loop-control; modprobe loop)".into());
    }
    if !Path::new("/dev/shm").is_dir() {
        return Some("no /dev/shm for the image".into());
    }
    None
}

/// Written sectors of `name` in /proc/diskstats (field 10), in bytes.
pub fn written_bytes(name: &str) -> Option<u64> {
    iolab::sysinfo::diskstats::read(name).map(|d| d.write_sectors * 512)
}

pub struct WriteCacheDevice {
    /// `/dev/loopN`
    pub device: PathBuf,
    /// Kernel name (`loopN`), for /proc/diskstats.
    pub name: String,
    pub majmin: String,
    pub cgroup: PathBuf,
    pub model: SpeedModel,
    image: PathBuf,
    lo: Option<LoopDevice>,
    stop: Arc<AtomicBool>,
    switches: Arc<Mutex<Vec<Switch>>>,
    controller: Option<JoinHandle<()>>,
    start_bytes: u64,
}

impl WriteCacheDevice {
    /// An emulated drive of `size_bytes` with the given speed model.
    pub fn start(size_bytes: u64, model: SpeedModel) -> Result<WriteCacheDevice, String> {
        let tag = format!(
            "iolab-test-wcache-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let image = PathBuf::from("/dev/shm").join(format!("{tag}.img"));
        let f = std::fs::File::create(&image).map_err(|e| format!("create {image:?}: {e}"))?;
        f.set_len(size_bytes)
            .map_err(|e| format!("size {image:?}: {e}"))?;
        // Allocate every page now: a first write into a hole of tmpfs allocates and
        // zeroes pages, which would slow the "fast" phase below its limit.
        // SAFETY: fallocate on an open fd with a valid length.
        let rc = unsafe {
            libc::fallocate(
                std::os::fd::AsRawFd::as_raw_fd(&f),
                0,
                0,
                size_bytes as libc::off_t,
            )
        };
        drop(f);
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            let _ = std::fs::remove_file(&image);
            return Err(format!("fallocate {image:?}: {e}"));
        }
        // From here on, Drop cleans up whatever exists.
        let mut dev = WriteCacheDevice {
            device: PathBuf::new(),
            name: String::new(),
            majmin: String::new(),
            cgroup: Path::new(BLKIO).join(&tag),
            model,
            image: image.clone(),
            lo: None,
            stop: Arc::new(AtomicBool::new(false)),
            switches: Arc::new(Mutex::new(Vec::new())),
            controller: None,
            start_bytes: 0,
        };
        // The image lives in RAM already: no direct I/O from the loop driver to it.
        let lo = LoopDevice::attach(&image, false).map_err(|e| format!("losetup: {e}"))?;
        dev.device = lo.device.clone();
        dev.name = lo.name();
        dev.lo = Some(lo);
        let rdev = std::os::unix::fs::MetadataExt::rdev(
            &std::fs::metadata(&dev.device).map_err(|e| format!("{:?}: {e}", dev.device))?,
        );
        dev.majmin = format!("{}:{}", libc::major(rdev), libc::minor(rdev));
        // Flash, like the drive it emulates (some kernels give a non-rotational queue a
        // shorter throttle slice, so a limit change bites sooner).
        let _ = std::fs::write(format!("/sys/block/{}/queue/rotational", dev.name), "0");
        std::fs::create_dir(&dev.cgroup).map_err(|e| format!("mkdir {:?}: {e}", dev.cgroup))?;
        let first = match model {
            SpeedModel::Plain { bytes_per_s } => bytes_per_s,
            SpeedModel::Cache {
                fast_bytes_per_s, ..
            } => fast_bytes_per_s,
        };
        set_limit(&dev.cgroup, &dev.majmin, first)?;
        dev.start_bytes = written_bytes(&dev.name).ok_or("device not in /proc/diskstats")?;
        if let SpeedModel::Cache {
            fast_bytes_per_s,
            slow_bytes_per_s,
            cache_bytes,
            recovery,
        } = model
        {
            let (stop, switches) = (dev.stop.clone(), dev.switches.clone());
            let (cg, mm, name, base) = (
                dev.cgroup.clone(),
                dev.majmin.clone(),
                dev.name.clone(),
                dev.start_bytes,
            );
            dev.controller = Some(std::thread::spawn(move || {
                controller(
                    &stop,
                    &switches,
                    &cg,
                    &mm,
                    &name,
                    base,
                    (fast_bytes_per_s, slow_bytes_per_s, cache_bytes, recovery),
                )
            }));
        }
        Ok(dev)
    }

    /// The cgroup's `cgroup.procs`: a pid written there is throttled from then on.
    pub fn procs_file(&self) -> PathBuf {
        self.cgroup.join("cgroup.procs")
    }

    /// `program args…` run by a shell that first moves itself into the cgroup and then
    /// execs the program, so every I/O the program submits is throttled.
    pub fn command_in_cgroup(&self, program: &str) -> Command {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(format!(
                "echo $$ > '{}' && exec \"$0\" \"$@\"",
                self.procs_file().display()
            ))
            .arg(program);
        c
    }

    /// Bytes the device has written since the emulator started.
    pub fn written(&self) -> u64 {
        written_bytes(&self.name).unwrap_or(self.start_bytes) - self.start_bytes
    }

    /// The limit changes made so far.
    pub fn switches(&self) -> Vec<Switch> {
        self.switches.lock().unwrap().clone()
    }

    /// The ground truth of the last cache fill: bytes written from the moment the cache was
    /// last empty (the start, or the switch back to the fast speed) to the moment the device
    /// really slowed down (the switch to the slow speed, made `lead` early). `None` before
    /// the first fill ended. On a busy machine the controller may switch a little after the
    /// set cache size; this is where it did.
    pub fn last_fill_bytes(&self) -> Option<u64> {
        let SpeedModel::Cache {
            fast_bytes_per_s, ..
        } = self.model
        else {
            return None;
        };
        let sw = self.switches();
        let end = sw.iter().rposition(|s| s.bytes_per_s != fast_bytes_per_s)?;
        let from = sw[..end]
            .iter()
            .rev()
            .find(|s| s.bytes_per_s == fast_bytes_per_s)
            .map_or(0, |s| s.device_bytes);
        Some(sw[end].device_bytes - from + lead(fast_bytes_per_s))
    }
}

/// A write limit that changes with time, not with what was written: `limits[i]` from
/// `i * every` after the start; after the last one, it stays (`cycle: false`, a drive that
/// settles) or starts over (`cycle: true`, a drive that never settles).
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    pub limits: Vec<u64>,
    pub every: Duration,
    pub cycle: bool,
}

impl Schedule {
    /// The limit at `t` after the start.
    pub fn limit_at(&self, t: Duration) -> u64 {
        let i = (t.as_secs_f64() / self.every.as_secs_f64()) as usize;
        let n = self.limits.len();
        if self.cycle {
            self.limits[i % n]
        } else {
            self.limits[i.min(n - 1)]
        }
    }
}

impl WriteCacheDevice {
    /// An emulated drive whose write limit follows `schedule` in time (steady-state tests).
    /// `model` reads `Plain` at the first limit; `switches()` lists every change made.
    pub fn start_scheduled(
        size_bytes: u64,
        schedule: Schedule,
    ) -> Result<WriteCacheDevice, String> {
        assert!(!schedule.limits.is_empty() && !schedule.every.is_zero());
        let first = schedule.limits[0];
        WriteCacheDevice::controlled(
            size_bytes,
            first,
            Duration::from_millis(5),
            move |t, _, _| schedule.limit_at(t),
        )
    }

    /// A plain emulated drive at `first` whose limit a thread sets, every `poll`, to what
    /// `want(time since the start, device bytes written if readable, current limit)` says;
    /// `switches()` lists every change made.
    fn controlled(
        size_bytes: u64,
        first: u64,
        poll: Duration,
        want: impl Fn(Duration, Option<u64>, u64) -> u64 + Send + 'static,
    ) -> Result<WriteCacheDevice, String> {
        let mut dev =
            WriteCacheDevice::start(size_bytes, SpeedModel::Plain { bytes_per_s: first })?;
        let (stop, switches) = (dev.stop.clone(), dev.switches.clone());
        let (cg, mm) = (dev.cgroup.clone(), dev.majmin.clone());
        let (name, base) = (dev.name.clone(), dev.start_bytes);
        dev.controller = Some(std::thread::spawn(move || {
            let t0 = Instant::now();
            let mut current = first;
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(poll);
                let now = written_bytes(&name).map(|b| b - base);
                let limit = want(t0.elapsed(), now, current);
                if limit != current && set_limit(&cg, &mm, limit).is_ok() {
                    current = limit;
                    switches.lock().unwrap().push(Switch {
                        at: t0.elapsed(),
                        device_bytes: now.unwrap_or(0),
                        bytes_per_s: limit,
                    });
                }
            }
        }));
        Ok(dev)
    }
}

impl WriteCacheDevice {
    /// An emulated drive whose write limit follows what was written: `steps[i].1` from
    /// `steps[i].0` device bytes on (the first step's from 0). `model` reads `Plain` at the
    /// first limit; `switches()` lists every change made.
    pub fn start_by_bytes(
        size_bytes: u64,
        steps: Vec<(u64, u64)>,
    ) -> Result<WriteCacheDevice, String> {
        assert!(!steps.is_empty());
        let first = steps[0].1;
        // The step reached so far: steps are only ever taken forward. Looked up afresh, a
        // step to a slower speed took a smaller lead and went back to the faster one for a
        // poll (100 -> 400 -> 100 -> 400 -> 100 MB/s within 4 ms), and the throttle let
        // 58 MB through in the 100 ms after it (a 400 MB/s limit).
        let reached = std::sync::atomic::AtomicUsize::new(0);
        WriteCacheDevice::controlled(
            size_bytes,
            first,
            Duration::from_millis(2),
            move |_, written, current| match written {
                // Switched `lead` early, as the cache model does (the throttle's lag).
                Some(now) => {
                    let mut k = reached.load(Ordering::Relaxed);
                    while steps.get(k + 1).is_some_and(|s| now + lead(current) >= s.0) {
                        k += 1;
                    }
                    reached.store(k, Ordering::Relaxed);
                    steps[k].1
                }
                None => current,
            },
        )
    }
}

static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn set_limit(cgroup: &Path, majmin: &str, bytes_per_s: u64) -> Result<(), String> {
    let f = cgroup.join("blkio.throttle.write_bps_device");
    std::fs::write(&f, format!("{majmin} {bytes_per_s}"))
        .map_err(|e| format!("write {bytes_per_s} to {f:?}: {e}"))
}

/// How long the kernel keeps writing at the old rate after a lower limit is written:
/// measured on 6.18 with this emulator (400 -> 100 MB/s, dd 1 MiB O_DIRECT), 11-13 MB
/// passed at the fast rate after the switch (the throttle's credit carried into the new
/// slice, plus this thread's polling lag). The controller switches that much early so the
/// device's real speed drops at the set cache size.
const LIMIT_CHANGE_LAG: Duration = Duration::from_millis(28);

/// Bytes the controller switches to the slow speed early (see [`LIMIT_CHANGE_LAG`]): the
/// device's real drop comes at a switch's `device_bytes` plus this.
pub fn lead(fast_bytes_per_s: u64) -> u64 {
    (fast_bytes_per_s as f64 * LIMIT_CHANGE_LAG.as_secs_f64()) as u64
}

/// The cache state machine. Polls every 2 ms: at 400 MB/s that is 0.8 MB between looks,
/// 0.3 % of a 256-MiB cache.
fn controller(
    stop: &AtomicBool,
    switches: &Mutex<Vec<Switch>>,
    cgroup: &Path,
    majmin: &str,
    name: &str,
    base: u64,
    (fast, slow, cache, recovery): (u64, u64, u64, Duration),
) {
    let t0 = Instant::now();
    let mut filled_from = 0u64; // device bytes when the cache was last empty
    let mut cached = true; // writing at the fast speed
    let mut last_bytes = 0u64;
    let mut last_change = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(2));
        let Some(now_bytes) = written_bytes(name).map(|b| b - base) else {
            continue;
        };
        if now_bytes != last_bytes {
            last_bytes = now_bytes;
            last_change = Instant::now();
        }
        let mut switch_to = None;
        if cached && now_bytes - filled_from + lead(fast) >= cache {
            cached = false;
            switch_to = Some(slow);
        } else if !cached && last_change.elapsed() >= recovery {
            cached = true;
            filled_from = now_bytes;
            switch_to = Some(fast);
        }
        if let Some(bps) = switch_to
            && set_limit(cgroup, majmin, bps).is_ok()
        {
            switches.lock().unwrap().push(Switch {
                at: t0.elapsed(),
                device_bytes: now_bytes,
                bytes_per_s: bps,
            });
        }
    }
}

impl Drop for WriteCacheDevice {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.controller.take() {
            let _ = h.join();
        }
        // The cgroup goes once its processes have exited (a writer killed by a panicking
        // test may take a moment).
        if self.cgroup.exists() {
            let mut removed = false;
            for _ in 0..50 {
                if std::fs::remove_dir(&self.cgroup).is_ok() {
                    removed = true;
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            if !removed {
                eprintln!("could not remove cgroup {}", self.cgroup.display());
            }
        }
        if let Some(mut lo) = self.lo.take()
            && let Err(e) = lo.detach()
        {
            eprintln!("could not detach {}: {e}", lo.device.display());
        }
        let _ = std::fs::remove_file(&self.image);
    }
}

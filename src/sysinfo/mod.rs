//! Environment capture: CPU, kernel, memory, the mount and block device under a path, and
//! device counters from `/proc/diskstats`, CPU idle-state entries (`cpuidle`). `resolve` follows a path down the device chain,
//! `blockdev` reads one device's sysfs details, `smart` asks smartctl, `thermal` reads a drive's
//! temperature, limits and throttle counters (smartctl or hwmon) and samples it during a run.

pub mod blockdev;
pub mod caches;
pub mod cpuidle;
pub mod diskstats;
pub mod heat;
pub mod hugepages;
pub mod mounts;
pub mod procdiskstats;
pub mod resolve;
pub mod smart;
pub mod thermal;
pub mod uring;

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::model::Environment;

/// Kernel name and sysfs directory of the block device holding `path` (or `path` itself
/// when it is a block device). `None` for tmpfs, proc, network and FUSE mounts without one.
pub fn block_device_of(path: &Path) -> Option<(String, PathBuf)> {
    let md = std::fs::metadata(path).ok()?;
    let dev = if md.file_type().is_block_device() {
        md.rdev()
    } else {
        md.dev()
    };
    let (maj, min) = (libc::major(dev), libc::minor(dev));
    if maj == 0 {
        // Anonymous device (tmpfs, overlay, btrfs subvolume, FUSE): find it through the mount.
        let m = mounts::mount_of(path)?;
        if m.source.starts_with("/dev/") {
            return block_device_of(Path::new(&m.source));
        }
        // A FUSE file system whose mount names no device (fusefat): the device its daemon
        // serves, from the daemon's command line. Without it, a FAT32 row of the matrix had
        // no device counters, so nothing could tell whether the page cache absorbed it.
        if let Some(daemon) = m.fs_type.strip_prefix("fuse.")
            && let Some(dev) = mounts::fuse_daemon_device(daemon, &m.mount_point)
        {
            return block_device_of(&dev);
        }
        return None;
    }
    let link = PathBuf::from(format!("/sys/dev/block/{maj}:{min}"));
    let real = std::fs::canonicalize(&link).ok()?;
    let name = real.file_name()?.to_string_lossy().into_owned();
    Some((name, real))
}

/// The sysfs dir holding `queue/` for a device: itself, or its parent for a partition.
pub fn queue_dir(sysdir: &Path) -> PathBuf {
    if sysdir.join("partition").exists() {
        sysdir
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| sysdir.to_path_buf())
    } else {
        sysdir.to_path_buf()
    }
}

pub fn read_trim(p: &Path) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
}

pub fn logical_block_size_of(path: &Path) -> Option<u32> {
    queue_number_of(path, "logical_block_size")
}

pub fn physical_block_size_of(path: &Path) -> Option<u32> {
    queue_number_of(path, "physical_block_size")
}

/// A number of the `queue/` directory of the block device under `path`.
fn queue_number_of(path: &Path, name: &str) -> Option<u32> {
    let (_, sys) = block_device_of(path)?;
    read_trim(&queue_dir(&sys).join("queue").join(name))?
        .parse()
        .ok()
}

/// The first line of the text file `path` that starts with `prefix`.
fn line_starting(path: &str, prefix: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .find(|l| l.starts_with(prefix))
        .map(str::to_string)
}

fn cpu_model() -> String {
    line_starting("/proc/cpuinfo", "model name")
        .and_then(|l| l.split(':').nth(1).map(|v| v.trim().to_string()))
        .unwrap_or_else(|| "unknown".into())
}

pub fn ram_bytes() -> u64 {
    line_starting("/proc/meminfo", "MemTotal:")
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map(|kib| kib * 1024)
        .unwrap_or(0)
}

fn os_name() -> String {
    line_starting("/etc/os-release", "PRETTY_NAME=")
        .map(|l| {
            l.trim_start_matches("PRETTY_NAME=")
                .trim_matches('"')
                .to_string()
        })
        .unwrap_or_else(|| std::env::consts::OS.into())
}

fn uname() -> (String, String) {
    // SAFETY: uname fills the struct.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return ("unknown".into(), "unknown".into());
    }
    let s = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    (s(&u.nodename), s(&u.release))
}

/// This machine's host name (as `Environment.hostname` records it).
pub fn capture_hostname() -> String {
    uname().0
}

/// Everything `Environment` holds, for a target path.
pub fn capture_environment(target: &Path) -> Environment {
    let (hostname, kernel) = uname();
    let mut env = Environment {
        hostname,
        kernel,
        os: os_name(),
        cpu_model: cpu_model(),
        cpu_count: std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1),
        ram_bytes: ram_bytes(),
        target_path: crate::os::text::os_text(
            std::fs::canonicalize(target)
                .unwrap_or_else(|_| target.to_path_buf())
                .as_os_str(),
        ),
        ..Default::default()
    };
    // A device node's own mount is where it is mounted (if anywhere), not the devtmpfs
    // that holds the node.
    let is_device = std::fs::metadata(target)
        .map(|m| m.file_type().is_block_device())
        .unwrap_or(false);
    let mount = if is_device {
        block_device_of(target)
            .and_then(|(_, sys)| read_trim(&sys.join("dev")))
            .and_then(|mm| mounts::mounts_of_device(&mm).into_iter().next())
    } else {
        mounts::mount_of(target)
    };
    if let Some(m) = mount {
        env.fs_type = m.fs_type;
        env.mount_point = crate::os::text::os_text(m.mount_point.as_os_str());
        env.mount_options = m.options;
    }
    if let Some((name, sys)) = resolve::device_of_path(target) {
        let q = queue_dir(&sys);
        env.logical_block_size =
            read_trim(&q.join("queue/logical_block_size")).and_then(|v| v.parse().ok());
        env.physical_block_size =
            read_trim(&q.join("queue/physical_block_size")).and_then(|v| v.parse().ok());
        env.rotational = read_trim(&q.join("queue/rotational")).map(|v| v == "1");
        env.device_model = read_trim(&q.join("device/model"));
        env.device_serial = blockdev::serial_of(&q);
        env.device_wwn = blockdev::wwn_of(&q);
        if q != sys {
            env.parent_device = q.file_name().map(|n| n.to_string_lossy().into_owned());
        }
        env.loop_backing_file = read_trim(&q.join("loop/backing_file"));
        if let Some(f) = &env.loop_backing_file
            && let Ok(md) = std::fs::metadata(f.trim_end_matches(" (deleted)"))
        {
            use std::os::unix::fs::MetadataExt;
            env.loop_backing_inode = Some(md.ino());
            env.loop_backing_size_bytes = Some(md.len());
        }
        env.device_size_bytes = read_trim(&q.join("size"))
            .and_then(|v| v.parse::<u64>().ok())
            .map(|sectors| sectors * 512);
        env.device_vendor = read_trim(&q.join("device/vendor")).filter(|v| !v.is_empty());
        env.device_link = q
            .file_name()
            .and_then(|n| blockdev::disk_link(Path::new("/dev/disk"), &n.to_string_lossy()));
        env.block_device = Some(name);
    }
    env.io_uring = Some(match uring::probe() {
        Ok(s) => s,
        Err(e) => format!("unavailable: {e}"),
    });
    let idle = Path::new("/sys/devices/system/cpu/cpuidle");
    env.cpuidle_driver = read_trim(&idle.join("current_driver"));
    env.cpuidle_governor = read_trim(&idle.join("current_governor"))
        .or_else(|| read_trim(&idle.join("current_governor_ro")));
    if env.cpuidle_driver.as_deref() == Some("haltpoll") {
        env.guest_halt_poll_ns = read_trim(Path::new(
            "/sys/module/haltpoll/parameters/guest_halt_poll_ns",
        ))
        .and_then(|v| v.parse().ok());
    }
    env.transparent_hugepage = hugepages::thp_mode();
    if !is_device {
        env.fs_state = fs_state(target, Path::new(&env.mount_point));
    }
    env
}

/// How full the file system under the directory (or file) `target` is, and the trees `iolab
/// age` left at its mount point `mount` and in the target directory: a run on an aged file
/// system recorded nothing of it, and `compare` of a fresh and an aged run read as two
/// alike file systems. `None` where statvfs fails or counts no blocks (some FUSE ones).
pub fn fs_state(target: &Path, mount: &Path) -> Option<crate::model::FsState> {
    let st = nix::sys::statvfs::statvfs(target).ok()?;
    let frag = st.fragment_size() as u64;
    let size_bytes = st.blocks() as u64 * frag;
    if size_bytes == 0 {
        return None;
    }
    let used_bytes = size_bytes.saturating_sub(st.blocks_free() as u64 * frag);
    let dir = if target.is_dir() {
        target
    } else {
        target.parent().unwrap_or(target)
    };
    let mut aged_trees = Vec::new();
    for d in [mount, dir] {
        let Ok(rd) = std::fs::read_dir(d) else {
            continue;
        };
        for e in rd.flatten() {
            let aged = e
                .file_name()
                .to_str()
                .and_then(|n| n.strip_prefix("iolab-aged-"))
                .is_some_and(|seed| seed.parse::<u64>().is_ok());
            if aged && e.file_type().is_ok_and(|t| t.is_dir()) {
                let p = std::fs::canonicalize(e.path()).unwrap_or_else(|_| e.path());
                aged_trees.push(p.display().to_string());
            }
        }
    }
    aged_trees.sort();
    aged_trees.dedup();
    Some(crate::model::FsState {
        size_bytes,
        used_bytes,
        aged_trees,
    })
}

/// The warning for queue-depth-1 tests on a KVM guest whose idle vCPUs halt at once.
pub fn vcpu_halt_warning(env: &Environment) -> Option<crate::model::Warning> {
    (env.guest_halt_poll_ns == Some(0)).then(|| crate::model::Warning {
        code: crate::model::WarningCode::VcpuHalt,
        message: "this KVM guest halts idle vCPUs at once (cpuidle-haltpoll, guest_halt_poll_ns = 0): at queue depth 1 much of each I/O's latency is the host waking a vCPU, not the device (4 KiB QD1 on a loop device: 2.7x the IOPS with the kernel's default 200000 ns); compare QD1 results only with runs on the same setting; each run's idle_entries_per_io in the JSON counts the halts per I/O".into(),
        test: None,
    })
}

#[cfg(test)]
mod vcpu_tests {
    use super::*;

    #[test]
    fn vcpu_halt_warning_only_when_the_guest_does_not_poll() {
        let mut env = Environment {
            cpuidle_driver: Some("haltpoll".into()),
            guest_halt_poll_ns: Some(0),
            ..Default::default()
        };
        let w = vcpu_halt_warning(&env).expect("warns at 0");
        assert_eq!(w.code, crate::model::WarningCode::VcpuHalt);
        assert!(w.message.contains("guest_halt_poll_ns = 0"));
        env.guest_halt_poll_ns = Some(200_000);
        assert!(vcpu_halt_warning(&env).is_none());
        // Bare metal or another idle driver: nothing known, nothing said.
        env.cpuidle_driver = Some("intel_idle".into());
        env.guest_halt_poll_ns = None;
        assert!(vcpu_halt_warning(&env).is_none());
    }

    #[test]
    fn environment_records_the_idle_driver_when_the_kernel_has_one() {
        let env = capture_environment(Path::new("/"));
        let sys = read_trim(Path::new("/sys/devices/system/cpu/cpuidle/current_driver"));
        assert_eq!(env.cpuidle_driver, sys);
        if env.cpuidle_driver.as_deref() == Some("haltpoll") {
            assert!(env.guest_halt_poll_ns.is_some());
        } else {
            assert!(env.guest_halt_poll_ns.is_none());
        }
    }
}

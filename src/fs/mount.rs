//! Mounting and unmounting by the type table's method (kernel driver, FUSE helper, tmpfs),
//! and the check that a mount point is still the mount iolab made before it is unmounted.

use std::path::Path;

use crate::error::CommandError;
use crate::fs::command;
use crate::fs::detect::MountMethod;
use crate::fs::types::FsType;

/// Join option lists, skipping empty ones.
fn join_opts(parts: &[&str]) -> String {
    join_non_empty(parts, ",")
}

/// `parts` but the empty ones, joined by `sep`.
fn join_non_empty(parts: &[&str], sep: &str) -> String {
    parts
        .iter()
        .filter(|p| !p.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(sep)
}

/// Mount `device` (or, for tmpfs, a RAM file system of `size` bytes named `source`) on `dir`.
pub fn mount(
    t: &FsType,
    method: &MountMethod,
    device: Option<&Path>,
    source: &str,
    size: u64,
    dir: &Path,
    opts: &str,
) -> Result<(), CommandError> {
    let dir_s = dir.display().to_string();
    let dev_s = device
        .map(|d| d.display().to_string())
        .unwrap_or_else(|| source.to_string());
    let mut args: Vec<String> = Vec::new();
    let program = match method {
        MountMethod::Kernel(driver) => {
            args.extend(["-t".to_string(), driver.to_string()]);
            let o = if t.mkfs.is_none() {
                join_opts(&[&format!("size={size}"), opts])
            } else {
                opts.to_string()
            };
            if !o.is_empty() {
                args.extend(["-o".to_string(), o]);
            }
            "mount"
        }
        MountMethod::Fuse(helper) => {
            let o = join_opts(&[t.fuse_opts, opts]);
            if !o.is_empty() {
                args.extend(["-o".to_string(), o]);
            }
            helper
        }
    };
    args.extend([dev_s.clone(), dir_s]);
    // mount(8) says only "dmesg(1) may have more information": the kernel's own reason
    // ("xfs: Unknown parameter 'bogus'", "EXT4-fs (loop3): can't mount with data=, fs
    // mounted w/o journal") is read from its log and added to the error.
    let mut log = match method {
        MountMethod::Kernel(driver) => KernelLog::from_now().map(|l| (l, *driver)),
        MountMethod::Fuse(_) => None,
    };
    let done = command::run_full(program, &args).map_err(|mut e| {
        if let Some((l, driver)) = log.as_mut() {
            let dev = dev_s.rsplit('/').next().unwrap_or(&dev_s);
            for line in about_mount(&l.read_new(), driver, dev) {
                e.stderr.push_str(&format!("\nkernel: {line}"));
            }
        }
        e
    })?;
    // A FUSE helper can exit 0 and mount nothing (fusefat with an option FUSE does not know
    // says so on stderr and exits 0): the workload would then measure the directory's own
    // file system under this file system's name.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    while mount_at(dir).is_none() {
        if std::time::Instant::now() >= deadline {
            return Err(nothing_mounted(done, dir));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Ok(())
}

/// The kernel's log from the moment it was opened on (`/dev/kmsg` read from its end; root).
struct KernelLog(std::fs::File);

impl KernelLog {
    fn from_now() -> Option<KernelLog> {
        use std::io::Seek;
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_NONBLOCK)
            .open("/dev/kmsg")
            .ok()?;
        f.seek(std::io::SeekFrom::End(0)).ok()?;
        Some(KernelLog(f))
    }

    /// The messages logged since (one record per read; continuation lines left out).
    fn read_new(&mut self) -> Vec<String> {
        use std::io::Read;
        let mut out = Vec::new();
        let mut buf = vec![0u8; 8192];
        for _ in 0..1000 {
            match self.0.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    let rec = String::from_utf8_lossy(&buf[..n]);
                    if let Some((_, msg)) = rec.split_once(';') {
                        out.push(msg.lines().next().unwrap_or("").to_string());
                    }
                }
                // Records overwritten while reading: go on with the next.
                Err(e) if e.raw_os_error() == Some(nix::libc::EPIPE) => continue,
                Err(_) => break,
            }
        }
        out
    }
}

/// The kernel messages about a mount of `device` (a name such as `loop3`) by `driver`:
/// those naming the device, and the driver's own that name none (`xfs: Unknown parameter
/// 'bogus'`). Other devices' messages are left out.
fn about_mount(lines: &[String], driver: &str, device: &str) -> Vec<String> {
    let names_device = |l: &str| {
        l.split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| w == device)
    };
    let prefix = format!("{}:", driver.to_ascii_lowercase());
    lines
        .iter()
        .filter(|l| names_device(l) || l.to_ascii_lowercase().starts_with(&prefix))
        .filter(|l| !l.contains("detected capacity change"))
        .cloned()
        .collect()
}

/// The error for a mount program that exited 0 while nothing got mounted on `dir`.
fn nothing_mounted(done: command::Done, dir: &Path) -> CommandError {
    let said = join_non_empty(&[done.stderr.trim(), done.stdout.trim()], "\n");
    CommandError {
        command: done.command,
        status: format!("exit code 0, but nothing is mounted on {}", dir.display()),
        stderr: said,
    }
}

/// The options of `asked` (comma-separated) that the mount's options `shown` (as
/// /proc/self/mountinfo lists them) do not name: neither the same option nor its key
/// (`compress=zstd` is shown as `compress=zstd:3`).
pub fn unshown_options(asked: &str, shown: &str) -> Vec<String> {
    let key = |o: &str| o.split(['=', ':']).next().unwrap_or(o).to_string();
    let shown: Vec<&str> = shown.split(',').collect();
    asked
        .split(',')
        .filter(|o| !o.is_empty())
        .filter(|o| !shown.iter().any(|s| s == o || key(s) == key(o)))
        .map(str::to_string)
        .collect()
}

/// Options a FUSE helper takes and acts on without their ever showing in
/// /proc/self/mountinfo (the helper keeps them to itself; the kernel sees only the FUSE
/// mount's own options): asked for, their absence there says nothing. From each helper's
/// manual page, less the options that do show (checked on a loop device: ntfs-3g shows
/// `ro`, `noatime`/`relatime`, `allow_other` and `max_read`; mount.exfat-fuse shows `ro`
/// but mounts `noatime` as `relatime`, so `noatime` is not listed).
fn unshown_by_design(helper: &str) -> &'static [&'static str] {
    match helper {
        // `man ntfs-3g` (ntfs-3g 2022.10.3), OPTIONS; `debug` and `no_detach` keep the
        // helper in the foreground and are left out, and so is `ignore_case` (lowntfs-3g only).
        "ntfs-3g" => &[
            "acl",
            "big_writes",
            "compression",
            "delay_mtime",
            "dmask",
            "efs_raw",
            "fmask",
            "force",
            "gid",
            "hide_dot_files",
            "hide_hid_files",
            "inherit",
            "locale",
            "no_def_opts",
            "nocompression",
            "norecover",
            "permissions",
            "posix_nlink",
            "recover",
            "remove_hiberfile",
            "show_sys_files",
            "silent",
            "special_files",
            "streams_interface",
            "uid",
            "umask",
            "user_xattr",
            "usermapping",
            "windows_names",
        ],
        // `man mount.exfat-fuse`, FILE SYSTEM OPTIONS.
        "mount.exfat-fuse" => &["dmask", "fmask", "gid", "uid", "umask"],
        // `man fusefat`, FUSEFAT options.
        "fusefat" => &["rw+"],
        _ => &[],
    }
}

/// The options of `asked` that FUSE `helper` may have dropped without a word: those the
/// mount's options `shown` do not name, less those the helper is known to take without ever
/// showing them (`unshown_by_design`). An option the helper does not know stays named.
pub fn unchecked_options(helper: &str, asked: &str, shown: &str) -> Vec<String> {
    let quiet = unshown_by_design(helper);
    unshown_options(asked, shown)
        .into_iter()
        .filter(|o| !quiet.contains(&o.split('=').next().unwrap_or(o)))
        .collect()
}

/// The mount on exactly `dir`, if any (mountinfo shows canonical paths).
pub fn mount_at(dir: &Path) -> Option<crate::sysinfo::mounts::MountInfo> {
    let canon = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    crate::sysinfo::mounts::all_mounts()
        .into_iter()
        .rev()
        .find(|m| m.mount_point == canon)
}

/// Does the mount on `dir` come from `source` (our loop device, our tmpfs name, or, for FUSE
/// helpers that name the source differently, any mount on our private directory)?
pub fn is_ours(dir: &Path, source: &str) -> bool {
    match mount_at(dir) {
        Some(m) => {
            m.source == source
                || m.fs_type.starts_with("fuse")
                || std::fs::canonicalize(source).is_ok_and(|s| s.display().to_string() == m.source)
        }
        None => false,
    }
}

/// Unmount `dir` if it is still iolab's mount of `source`; retries while busy (a FUSE daemon
/// or a closing file may hold it for a moment).
pub fn umount_ours(dir: &Path, source: &str) -> Result<bool, CommandError> {
    if !is_ours(dir, source) {
        return Ok(false);
    }
    let mut last = None;
    for _ in 0..50 {
        match command::run("umount", [dir]) {
            Ok(_) => return Ok(true),
            Err(e) => {
                if mount_at(dir).is_none() {
                    return Ok(true);
                }
                last = Some(e);
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        }
    }
    Err(last.expect("at least one attempt"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rejected option was "wrong fs type, bad option, bad superblock on /dev/loop5, ...
    /// dmesg(1) may have more information": the kernel's line for this mount is kept, other
    /// devices' lines are not.
    #[test]
    fn the_kernels_reason_for_a_failed_mount_is_picked_out() {
        let log: Vec<String> = [
            "loop5: detected capacity change from 0 to 131072",
            "EXT4-fs (loop3): mounted filesystem 1234 r/w with ordered data mode",
            "EXT4-fs (loop5): can't mount with data=, fs mounted w/o journal",
            "xfs: Unknown parameter 'bogus'",
            "BTRFS info (device loop55): using free-space-tree",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            about_mount(&log, "ext4", "loop5"),
            ["EXT4-fs (loop5): can't mount with data=, fs mounted w/o journal"]
        );
        assert_eq!(
            about_mount(&log, "xfs", "loop9"),
            ["xfs: Unknown parameter 'bogus'"]
        );
        assert!(about_mount(&log, "btrfs", "loop7").is_empty());
    }

    #[test]
    fn options_join_without_empty_parts() {
        assert_eq!(join_opts(&["rw+", ""]), "rw+");
        assert_eq!(join_opts(&["size=1", "noatime"]), "size=1,noatime");
        assert_eq!(join_opts(&["", ""]), "");
    }

    #[test]
    fn a_mount_program_that_mounts_nothing_is_an_error() {
        // `true` exits 0 and mounts nothing, like fusefat given an option FUSE rejects.
        let d = tempfile::tempdir().unwrap();
        let t = crate::fs::types::lookup("vfat").unwrap();
        let e = mount(
            t,
            &MountMethod::Fuse("true"),
            None,
            "x",
            0,
            d.path(),
            "bogus=1",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("exit code 0, but nothing is mounted on"), "{e}");
        assert!(e.contains("true -o"), "{e}");
    }

    #[test]
    fn options_the_mount_does_not_show_are_named() {
        let shown = "rw,noatime,user_id=0,group_id=0,allow_other,blksize=4096";
        assert_eq!(
            unshown_options("noatime,big_writes,bogus=1", shown),
            ["big_writes", "bogus=1"]
        );
        assert!(unshown_options("compress=zstd", "rw,relatime,compress=zstd:3").is_empty());
        assert!(unshown_options("", shown).is_empty());
    }

    /// ntfs-3g shows none of `big_writes`, `windows_names`, `uid=`: they are its own and
    /// were named as possibly dropped on every mount; an option it does not know still is.
    #[test]
    fn options_a_helper_never_shows_are_not_named() {
        let shown = "rw,noatime,user_id=0,group_id=0,default_permissions,allow_other,blksize=4096";
        assert!(
            unchecked_options(
                "ntfs-3g",
                "noatime,big_writes,windows_names,uid=1000,umask=022",
                shown
            )
            .is_empty()
        );
        assert_eq!(
            unchecked_options("ntfs-3g", "big_writes,bogus=1,iolab_no_such_option", shown),
            ["bogus=1", "iolab_no_such_option"]
        );
        // mount.exfat-fuse drops noatime (it mounts relatime): still named; its uid= is not.
        let exfat = "rw,nosuid,nodev,relatime,user_id=0,group_id=0,allow_other,blksize=4096";
        assert_eq!(
            unchecked_options("mount.exfat-fuse", "noatime,uid=0", exfat),
            ["noatime"]
        );
        // One helper's list does not excuse another's.
        assert_eq!(
            unchecked_options("mount.exfat-fuse", "big_writes", exfat),
            ["big_writes"]
        );
    }

    #[test]
    fn a_plain_directory_is_not_ours() {
        let d = tempfile::tempdir().unwrap();
        assert!(!is_ours(d.path(), "/dev/loop0"));
        assert!(!umount_ours(d.path(), "/dev/loop0").unwrap());
    }
}

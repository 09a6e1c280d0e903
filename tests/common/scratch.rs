//! A throw-away file system for tests: an image file in a temp dir, a loop device, mkfs, a
//! mount in another temp dir. Everything is torn down on drop, in order. Test scaffolding
//! only: the product makes its file systems through `iolab::fs::instance` (the matrix).

use std::path::{Path, PathBuf};

use iolab::error::CommandError;
use iolab::fs::command;
use iolab::fs::loopdev::LoopDevice;

/// Why a scratch file system could not be made (the caller decides to skip or fail).
#[derive(Debug, thiserror::Error)]
pub enum ScratchError {
    #[error("needs root (running as uid {0})")]
    NotRoot(u32),
    #[error("{0} is not installed{hint}", hint = package_hint(.0))]
    MissingTool(String),
    /// The type cannot be made or mounted here (no driver and no FUSE helper, unknown type).
    #[error("{0}")]
    Unavailable(String),
    #[error(transparent)]
    Command(#[from] CommandError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// The Debian package of a mkfs program.
pub fn package_of(program: &str) -> Option<&'static str> {
    Some(match program {
        "mkfs.ext2" | "mkfs.ext3" | "mkfs.ext4" => "e2fsprogs",
        "mkfs.xfs" => "xfsprogs",
        "mkfs.btrfs" => "btrfs-progs",
        "mkfs.fat" | "mkfs.vfat" => "dosfstools",
        "mkfs.exfat" => "exfatprogs",
        "mkfs.ntfs" | "mkntfs" => "ntfs-3g",
        "mkfs.f2fs" => "f2fs-tools",
        "mkfs.jfs" => "jfsutils",
        "mkfs.nilfs2" => "nilfs-tools",
        "mkfs.reiserfs" => "reiserfsprogs",
        "mkfs.hfsplus" => "hfsprogs",
        _ => return None,
    })
}

/// ` (apt-get install PACKAGE)` for the mkfs programs of the Debian packages CI installs.
fn package_hint(program: &str) -> String {
    package_of(program)
        .map(|p| format!(" (apt-get install {p})"))
        .unwrap_or_default()
}

/// A mounted scratch file system.
pub struct ScratchFs {
    pub fs_type: String,
    pub mount_point: PathBuf,
    pub loop_dev: Option<LoopDevice>,
    mounted: bool,
    _mount_dir: tempfile::TempDir,
    _image_dir: Option<tempfile::TempDir>,
}

impl ScratchFs {
    /// Make and mount a `fs_type` file system of `size` bytes. `mkfs_args` go before the
    /// device (e.g. `["-b", "1024"]`), `mount_opts` to mount's `-o`. `tmpfs` needs no device.
    /// Temp dirs are created under `base` (default: the system temp dir).
    pub fn new(
        fs_type: &str,
        size: u64,
        mkfs_args: &[&str],
        mount_opts: &str,
        base: Option<&Path>,
    ) -> Result<ScratchFs, ScratchError> {
        if !iolab::os::is_root() {
            return Err(ScratchError::NotRoot(nix::unistd::geteuid().as_raw()));
        }
        let tmp = |prefix: &str| match base {
            Some(b) => tempfile::Builder::new().prefix(prefix).tempdir_in(b),
            None => tempfile::Builder::new().prefix(prefix).tempdir(),
        };
        let mount_dir = tmp("iolab-mnt-")?;
        if fs_type == "tmpfs" {
            let opts = if mount_opts.is_empty() {
                format!("size={size}")
            } else {
                format!("size={size},{mount_opts}")
            };
            let dir = mount_dir.path().display().to_string();
            command::run("mount", ["-t", "tmpfs", "-o", &opts, "iolab-tmpfs", &dir])?;
            return Ok(ScratchFs {
                fs_type: fs_type.into(),
                mount_point: mount_dir.path().to_path_buf(),
                loop_dev: None,
                mounted: true,
                _mount_dir: mount_dir,
                _image_dir: None,
            });
        }
        // Program, flags and mount method come from the product's type table (`fs::types`).
        let t = iolab::fs::types::lookup(fs_type).ok_or_else(|| {
            ScratchError::Unavailable(format!("unknown file-system type '{fs_type}'"))
        })?;
        let mkfs = t.mkfs.unwrap_or("mkfs");
        if !command::have(mkfs) {
            return Err(ScratchError::MissingTool(mkfs.into()));
        }
        let method = iolab::fs::detect::availability(t).map_err(ScratchError::Unavailable)?;
        let image_dir = tmp("iolab-img-")?;
        let image = image_dir.path().join("scratch.img");
        std::fs::File::create(&image)?.set_len(size)?;
        let loop_dev = LoopDevice::attach(&image, false)?;
        let mut args: Vec<String> = t.mkfs_flags.iter().map(|s| s.to_string()).collect();
        args.extend(mkfs_args.iter().map(|s| s.to_string()));
        args.push(loop_dev.device.display().to_string());
        // From here on, a failure drops `loop_dev`, which detaches it.
        command::run(mkfs, &args)?;
        iolab::fs::mount::mount(
            t,
            &method,
            Some(&loop_dev.device),
            "",
            size,
            mount_dir.path(),
            mount_opts,
        )?;
        Ok(ScratchFs {
            fs_type: fs_type.into(),
            mount_point: mount_dir.path().to_path_buf(),
            loop_dev: Some(loop_dev),
            mounted: true,
            _mount_dir: mount_dir,
            _image_dir: Some(image_dir),
        })
    }

    pub fn path(&self) -> &Path {
        &self.mount_point
    }

    /// Unmount (retrying while busy) and detach; also done on drop.
    pub fn teardown(&mut self) -> Result<(), CommandError> {
        if self.mounted {
            let mnt = self.mount_point.display().to_string();
            let mut last = None;
            for _ in 0..50 {
                match command::run("umount", [&mnt]) {
                    Ok(_) => {
                        last = None;
                        break;
                    }
                    Err(e) => {
                        last = Some(e);
                        std::thread::sleep(std::time::Duration::from_millis(100));
                    }
                }
            }
            if let Some(e) = last {
                return Err(e);
            }
            self.mounted = false;
        }
        if let Some(l) = self.loop_dev.as_mut() {
            l.detach()?;
        }
        Ok(())
    }
}

impl Drop for ScratchFs {
    fn drop(&mut self) {
        if let Err(e) = self.teardown() {
            eprintln!(
                "teardown of scratch {} at {} failed: {e}",
                self.fs_type,
                self.mount_point.display()
            );
        }
    }
}

/// Make a scratch file system, or skip `test` (loudly; a failure when strict) when this
/// machine cannot: not root, the mkfs tool missing, no driver or FUSE helper. Any other
/// failure (mkfs or mount went wrong) fails the test.
pub fn scratch_or_skip(
    test: &str,
    fs_type: &str,
    size: u64,
    mkfs_args: &[&str],
    mount_opts: &str,
) -> Option<ScratchFs> {
    match ScratchFs::new(fs_type, size, mkfs_args, mount_opts, None) {
        Ok(s) => Some(s),
        Err(
            e @ (ScratchError::NotRoot(_)
            | ScratchError::MissingTool(_)
            | ScratchError::Unavailable(_)),
        ) => {
            super::skip(
                test,
                format_args!("{fs_type} scratch file system unavailable: {e}"),
            );
            None
        }
        Err(e) => panic!("{test}: could not make a scratch {fs_type}: {e}"),
    }
}

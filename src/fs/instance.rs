//! One freshly made file system of the matrix: image file -> loop device -> mkfs -> mount (or
//! mkfs on a device the user allowed, or a tmpfs), every step recorded in the state file
//! before it happens and torn down in reverse on drop, each step timed.

use std::path::PathBuf;
use std::time::Instant;

use crate::fs::detect::MountMethod;
use crate::fs::loopdev::LoopDevice;
use crate::fs::registry::StateFile;
use crate::fs::types::FsType;
use crate::fs::{mkfs, mount};

/// Where file systems are made.
#[derive(Debug, Clone)]
pub enum Place {
    /// Sparse image files of `size` bytes in `dir` (canonical), on loop devices.
    Image { dir: PathBuf, size: u64 },
    /// A block device the user allowed iolab to destroy.
    Device(PathBuf),
}

impl Place {
    /// Bytes of each file system made here (None: the device's size cannot be read).
    pub fn size(&self) -> Option<u64> {
        match self {
            Place::Image { size, .. } => Some(*size),
            Place::Device(d) => crate::fs::facts::device_size(d),
        }
    }
}

/// How long each setup and teardown step took (ns).
#[derive(Debug, Clone, Copy, Default)]
pub struct Timings {
    pub image_ns: u64,
    pub mkfs_ns: u64,
    pub mount_ns: u64,
    pub umount_ns: u64,
    pub detach_ns: u64,
}

/// A setup step that failed, with the step's name (`mount` errors carry mount's message).
#[derive(Debug)]
pub struct SetupError {
    pub step: &'static str,
    pub error: anyhow::Error,
}

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} failed: {:#}", self.step, self.error)
    }
}

fn ns(t: Instant) -> u64 {
    t.elapsed().as_nanos() as u64
}

/// A mounted file system made by iolab.
pub struct FsInstance<'a> {
    pub fs: &'static FsType,
    pub mount_point: PathBuf,
    /// The formatted block device (loop or the user's), None for tmpfs.
    pub device: Option<PathBuf>,
    pub timings: Timings,
    source: String,
    image: Option<PathBuf>,
    loop_dev: Option<LoopDevice>,
    mounted: bool,
    keep_image: bool,
    state: &'a StateFile,
}

/// What one setup needs.
pub struct Spec<'s> {
    pub fs: &'static FsType,
    pub method: &'s MountMethod,
    pub unit: Option<u64>,
    /// `--mkfs-opts`: arguments added to mkfs after iolab's own.
    pub mkfs_opts: &'s [String],
    pub mount_opts: &'s str,
    pub place: &'s Place,
    /// File-name-safe tag (`ext4-4KiB-r1`).
    pub tag: &'s str,
    pub keep_image: bool,
}

impl<'a> FsInstance<'a> {
    /// Make and mount; on error everything made so far is torn down (by drop).
    pub fn create(spec: &Spec<'_>, state: &'a StateFile) -> Result<FsInstance<'a>, SetupError> {
        let step = |step: &'static str| move |e: anyhow::Error| SetupError { step, error: e };
        let state_dir = crate::os::dir_of(state.path());
        let mount_point = state_dir.join(format!("mnt-{}", spec.tag));
        let mut inst = FsInstance {
            fs: spec.fs,
            mount_point: mount_point.clone(),
            device: None,
            timings: Timings::default(),
            source: format!("iolab-matrix-{}", std::process::id()),
            image: None,
            loop_dev: None,
            mounted: false,
            keep_image: spec.keep_image,
            state,
        };
        state.add_dir(&mount_point);
        std::fs::create_dir(&mount_point).map_err(|e| SetupError {
            step: "mount point",
            error: anyhow::anyhow!("cannot create {}: {e}", mount_point.display()),
        })?;
        let mut tmpfs_size = 0;
        if spec.fs.mkfs.is_some() {
            let t0 = Instant::now();
            let device = match spec.place {
                Place::Device(d) => d.clone(),
                Place::Image { dir, size } => {
                    let image = dir.join(format!("{}.img", spec.tag));
                    state.add_image(&image);
                    inst.image = Some(image.clone());
                    crate::fs::guard::register_created_file(&image);
                    let f = std::fs::File::create(&image)
                        .and_then(|f| f.set_len(*size).map(|_| f))
                        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", image.display()))
                        .map_err(step("image"))?;
                    drop(f);
                    // Direct I/O to the image: the host's page cache must not double-cache.
                    let l = LoopDevice::attach(&image, true)
                        .or_else(|_| LoopDevice::attach(&image, false))
                        .map_err(anyhow::Error::new)
                        .map_err(step("losetup"))?;
                    state.add_loop(&l.device, &image);
                    let d = l.device.clone();
                    inst.loop_dev = Some(l);
                    d
                }
            };
            // No image on a device: its time stays 0, shown as `-` (it was a few µs, "0 ms").
            if inst.image.is_some() {
                inst.timings.image_ns = ns(t0);
            }
            inst.device = Some(device.clone());
            let t1 = Instant::now();
            mkfs::format(
                spec.fs,
                spec.unit,
                spec.mkfs_opts,
                spec.place.size(),
                &device,
            )
            .map_err(step("mkfs"))?;
            inst.timings.mkfs_ns = ns(t1);
            inst.source = device.display().to_string();
        } else if let Place::Image { size, .. } = spec.place {
            tmpfs_size = *size;
        } else {
            tmpfs_size = 256 << 20;
        }
        state.add_mount(&mount_point, &inst.source);
        let t2 = Instant::now();
        mount::mount(
            spec.fs,
            spec.method,
            inst.device.as_deref(),
            &inst.source,
            tmpfs_size,
            &mount_point,
            spec.mount_opts,
        )
        .map_err(anyhow::Error::new)
        .map_err(step("mount"))?;
        inst.mounted = true;
        inst.timings.mount_ns = ns(t2);
        Ok(inst)
    }

    /// The allocation unit really made.
    pub fn read_unit(&self) -> Result<u64, String> {
        mkfs::read_unit(self.fs, self.device.as_deref(), &self.mount_point)
    }

    /// Unmount, detach, remove the image and the mount point (each only if iolab's).
    pub fn teardown(&mut self) -> Result<(), String> {
        let mut errors = Vec::new();
        if self.mounted {
            let t = Instant::now();
            match mount::umount_ours(&self.mount_point, &self.source) {
                Ok(_) => {
                    self.mounted = false;
                    self.state.remove_mount(&self.mount_point);
                }
                Err(e) => errors.push(e.to_string()),
            }
            self.timings.umount_ns = ns(t);
        } else {
            self.state.remove_mount(&self.mount_point);
        }
        if self.mounted {
            // Never detach or delete under a live mount.
            return Err(errors.join("; "));
        }
        if let Some(l) = self.loop_dev.as_mut() {
            let t = Instant::now();
            match l.detach() {
                Ok(()) => self.state.remove_loop(&l.device),
                Err(e) => errors.push(e.to_string()),
            }
            self.timings.detach_ns = ns(t);
        }
        if errors.is_empty() {
            self.loop_dev = None;
            if let Some(img) = self.image.take() {
                if self.keep_image {
                    crate::eline!("iolab: kept image {}", img.display());
                } else {
                    let _ = std::fs::remove_file(&img);
                }
                crate::fs::guard::unregister_created_file(&img);
                self.state.remove_image(&img);
            }
            if std::fs::remove_dir(&self.mount_point).is_ok() || !self.mount_point.exists() {
                self.state.remove_dir(&self.mount_point);
            }
            Ok(())
        } else {
            Err(errors.join("; "))
        }
    }
}

impl Drop for FsInstance<'_> {
    fn drop(&mut self) {
        if let Err(e) = self.teardown() {
            crate::eline!(
                "iolab: teardown of {} at {} failed: {e} (the state file {} lists it for the next start)",
                self.fs.name,
                self.mount_point.display(),
                self.state.path().display()
            );
        }
    }
}

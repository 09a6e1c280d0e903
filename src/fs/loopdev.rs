//! Loop devices over image files that iolab created. Detached on drop.

use std::path::{Path, PathBuf};

use crate::error::CommandError;
use crate::fs::command;

/// A loop device attached by iolab to an image file. Detached when dropped.
#[derive(Debug)]
pub struct LoopDevice {
    /// `/dev/loopN`
    pub device: PathBuf,
    pub image: PathBuf,
    detached: bool,
}

impl LoopDevice {
    /// Attach `image` (which iolab created) to a free loop device. `direct_io` sets the
    /// loop driver's direct I/O to the backing file (no double caching).
    pub fn attach(image: &Path, direct_io: bool) -> Result<LoopDevice, CommandError> {
        let mut args: Vec<String> = vec!["--find".into(), "--show".into()];
        if direct_io {
            args.push("--direct-io=on".into());
        }
        args.push(image.display().to_string());
        let out = command::run("losetup", &args)?;
        let device = PathBuf::from(out.trim());
        Ok(LoopDevice {
            device,
            image: image.to_path_buf(),
            detached: false,
        })
    }

    /// A device iolab attached earlier (found in a state file after a kill), to detach now.
    pub fn adopt(device: &Path, image: &Path) -> LoopDevice {
        LoopDevice {
            device: device.to_path_buf(),
            image: image.to_path_buf(),
            detached: false,
        }
    }

    /// Kernel name (`loop3`).
    pub fn name(&self) -> String {
        self.device
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    pub fn detach(&mut self) -> Result<(), CommandError> {
        if self.detached {
            return Ok(());
        }
        // Only detach if it still points at our image (never someone else's device).
        let backing = self.backing_file();
        let ours = std::fs::canonicalize(&self.image)
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        if !backing.is_empty() && !ours.is_empty() && !backing.starts_with(&ours) {
            self.detached = true;
            return Ok(());
        }
        let mut last = None;
        for _ in 0..50 {
            match command::run("losetup", ["-d".as_ref(), self.device.as_os_str()]) {
                Ok(_) => {
                    self.detached = true;
                    self.wait_released(if ours.is_empty() { &backing } else { &ours });
                    return Ok(());
                }
                Err(e) => {
                    last = Some(e);
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
            }
        }
        Err(last.expect("at least one attempt"))
    }

    /// The image this device reads, as sysfs shows it (empty once the device is free).
    fn backing_file(&self) -> String {
        std::fs::read_to_string(format!("/sys/block/{}/loop/backing_file", self.name()))
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    }

    /// `losetup -d` on a device that something still holds open (udev's blkid probe after a
    /// mkfs or a failed mount, say) only marks it for auto-clear: the kernel lets it go at the
    /// last close. Wait for that, so that whoever runs next (the next configuration, the test
    /// that checks nothing is left) finds it gone; say so if it never goes.
    fn wait_released(&self, ours: &str) {
        if ours.is_empty() {
            return;
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let backing = self.backing_file();
            if backing.is_empty() || !backing.starts_with(ours) {
                return;
            }
            if std::time::Instant::now() >= deadline {
                crate::eline!(
                    "iolab: {} is still held open by another process after detaching; the kernel frees it at its last close",
                    self.device.display()
                );
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = self.detach();
    }
}

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
        let backing =
            std::fs::read_to_string(format!("/sys/block/{}/loop/backing_file", self.name()))
                .map(|s| s.trim().to_string())
                .unwrap_or_default();
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
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = self.detach();
    }
}

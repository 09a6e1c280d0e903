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
        let ours = std::fs::canonicalize(&self.image)
            .unwrap_or_else(|_| self.image.clone())
            .display()
            .to_string();
        let mut last = None;
        for _ in 0..50 {
            // Only while it still reads our image, checked before every attempt: never
            // someone else's device, also not one that took this number after ours was let
            // go (by a `losetup -d` of someone else's, or an attempt of ours that the kernel
            // carried out at the last close).
            if !bound_to(&self.backing_file(), &ours) {
                self.detached = true;
                return Ok(());
            }
            match command::run("losetup", ["-d".as_ref(), self.device.as_os_str()]) {
                Ok(_) => {
                    self.detached = true;
                    self.wait_released(&ours);
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
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            if !bound_to(&self.backing_file(), ours) {
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

/// Does a loop device whose sysfs `backing_file` reads `backing` read the image at `ours`
/// (a canonical path)? The kernel adds " (deleted)" once the file is removed.
pub(crate) fn bound_to(backing: &str, ours: &str) -> bool {
    !ours.is_empty() && (backing == ours || backing.strip_suffix(" (deleted)") == Some(ours))
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = self.detach();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deleted_image_is_still_ours_and_another_name_is_not() {
        assert!(bound_to("/t/a.img", "/t/a.img"));
        assert!(bound_to("/t/a.img (deleted)", "/t/a.img"));
        assert!(!bound_to("/t/a.img2", "/t/a.img"));
        assert!(!bound_to("/t/b.img", "/t/a.img"));
        assert!(!bound_to("", "/t/a.img"));
        assert!(!bound_to("", ""));
    }

    /// A sparse 1 MiB image file at `path`.
    fn image(path: &Path) -> std::path::PathBuf {
        std::fs::File::create(path)
            .unwrap()
            .set_len(1 << 20)
            .unwrap();
        path.to_path_buf()
    }

    /// A loop device of a test's own over a 1 MiB image `name` in `dir`, or a loud skip.
    fn attach_or_skip(test: &str, dir: &Path, name: &str) -> Option<LoopDevice> {
        let img = image(&dir.join(name));
        LoopDevice::attach(&img, false)
            .map_err(|e| crate::test_skip::skip(test, format!("losetup: {e}")))
            .ok()
    }

    /// Someone else's `losetup -d` let our device go and another image took its number, one
    /// whose name begins with our image's: our detach leaves that one alone (it took any
    /// backing file that began with our image's path for ours).
    #[test]
    fn a_number_another_image_took_is_not_detached() {
        let test = "fs::loopdev::a_number_another_image_took_is_not_detached";
        let dir = tempfile::tempdir().unwrap();
        let other = image(&dir.path().join("a.img2"));
        // Another test may take the freed number first: then try again with a new one.
        for _ in 0..5 {
            let Some(mut ours) = attach_or_skip(test, dir.path(), "a.img") else {
                return;
            };
            command::run("losetup", ["-d".as_ref(), ours.device.as_os_str()]).unwrap();
            if command::run("losetup", [ours.device.as_os_str(), other.as_os_str()]).is_err() {
                ours.detached = true;
                continue;
            }
            let mut theirs = LoopDevice::adopt(&ours.device, &other);
            ours.detach().unwrap();
            let other_path = std::fs::canonicalize(&other).unwrap().display().to_string();
            assert_eq!(
                theirs.backing_file(),
                other_path,
                "the other image's device was detached"
            );
            theirs.detach().unwrap();
            return;
        }
        panic!("five loop devices were taken by others before this test could bind one again");
    }

    /// A device someone else already let go is detached: nothing is left to do. It ran
    /// `losetup -d` on the free number 50 times, 100 ms apart, and failed (or detached
    /// whatever took the number meanwhile).
    #[test]
    fn a_device_already_let_go_is_done_at_once() {
        let test = "fs::loopdev::a_device_already_let_go_is_done_at_once";
        let dir = tempfile::tempdir().unwrap();
        let Some(mut ours) = attach_or_skip(test, dir.path(), "a.img") else {
            return;
        };
        command::run("losetup", ["-d".as_ref(), ours.device.as_os_str()]).unwrap();
        let t = std::time::Instant::now();
        ours.detach().unwrap();
        // Wide: one sysfs read against the 5 s of the attempts it made.
        assert!(
            t.elapsed() < std::time::Duration::from_secs(2),
            "{:?}",
            t.elapsed()
        );
    }
}

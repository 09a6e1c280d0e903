//! The matrix's devices in the registry: every image, loop device, mount and directory the
//! matrix creates is written to `<image dir>/iolab-matrix.state` before it exists and removed
//! after it is gone, and a pointer to that file (`matrix-<pid>.ptr`) sits in the registry
//! directory. If iolab is killed (SIGKILL, power loss of the process), the next iolab start
//! finds the pointer of a dead process and tears down exactly what the state lists, checking
//! each item is still iolab's.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::{Claimed, alive, registry_dir, start_ticks, write_json};

const STATE_NAME: &str = "iolab-matrix.state";
/// The start of a pointer's name in the registry: `matrix-<pid>.ptr`.
pub(super) const POINTER_PREFIX: &str = "matrix-";

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LoopRecord {
    pub device: PathBuf,
    /// Canonical path of the image behind it.
    pub image: PathBuf,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MountRecord {
    pub dir: PathBuf,
    /// The mounted source (loop device or tmpfs name).
    pub source: String,
}

/// What one matrix process has created and not yet removed.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MatrixState {
    pub pid: u32,
    /// Start time of that process (clock ticks since boot), so a reused pid is not "alive".
    pub start_ticks: u64,
    pub image_dir: PathBuf,
    /// The image dir itself was created by iolab (removed when empty).
    pub remove_image_dir: bool,
    pub images: Vec<PathBuf>,
    pub loops: Vec<LoopRecord>,
    pub mounts: Vec<MountRecord>,
    /// Mount-point directories iolab created.
    pub dirs: Vec<PathBuf>,
}

/// The live state file of this process.
pub struct StateFile {
    path: PathBuf,
    pointer: PathBuf,
    state: Mutex<MatrixState>,
}

impl StateFile {
    /// Create the state file in `image_dir` and its pointer in the registry.
    pub fn create(image_dir: &Path, remove_image_dir: bool) -> std::io::Result<StateFile> {
        let pid = std::process::id();
        let state = MatrixState {
            pid,
            start_ticks: start_ticks(pid).unwrap_or(0),
            image_dir: image_dir.to_path_buf(),
            remove_image_dir,
            ..Default::default()
        };
        let reg = registry_dir();
        std::fs::create_dir_all(&reg)?;
        let sf = StateFile {
            path: image_dir.join(STATE_NAME),
            pointer: reg.join(format!("{POINTER_PREFIX}{pid}.ptr")),
            state: Mutex::new(state),
        };
        sf.save()?;
        std::fs::write(&sf.pointer, sf.path.display().to_string())?;
        Ok(sf)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn save(&self) -> std::io::Result<()> {
        let st = self.state.lock().map(|s| s.clone()).unwrap_or_default();
        write_json(&self.path, &st, true)
    }

    fn update(&self, f: impl FnOnce(&mut MatrixState)) {
        if let Ok(mut s) = self.state.lock() {
            f(&mut s);
        }
        if let Err(e) = self.save() {
            crate::eline!("iolab: cannot update {}: {e}", self.path.display());
        }
    }

    pub fn add_image(&self, p: &Path) {
        self.update(|s| s.images.push(p.to_path_buf()));
    }
    pub fn remove_image(&self, p: &Path) {
        self.update(|s| s.images.retain(|x| x != p));
    }
    pub fn add_loop(&self, device: &Path, image: &Path) {
        let image = std::fs::canonicalize(image).unwrap_or_else(|_| image.to_path_buf());
        self.update(|s| {
            s.loops.push(LoopRecord {
                device: device.to_path_buf(),
                image,
            })
        });
    }
    pub fn remove_loop(&self, device: &Path) {
        self.update(|s| s.loops.retain(|l| l.device != device));
    }
    pub fn add_mount(&self, dir: &Path, source: &str) {
        self.update(|s| {
            s.mounts.push(MountRecord {
                dir: dir.to_path_buf(),
                source: source.to_string(),
            })
        });
    }
    pub fn remove_mount(&self, dir: &Path) {
        self.update(|s| s.mounts.retain(|m| m.dir != dir));
    }
    pub fn add_dir(&self, p: &Path) {
        self.update(|s| s.dirs.push(p.to_path_buf()));
    }
    pub fn remove_dir(&self, p: &Path) {
        self.update(|s| s.dirs.retain(|x| x != p));
    }

    /// Everything torn down: remove the state file, its pointer and (if iolab made it and it
    /// is empty) the image dir. If something could not be removed, the state stays for the
    /// next start.
    pub fn finish(&self) {
        let st = self.state.lock().map(|s| s.clone()).unwrap_or_default();
        if !(st.mounts.is_empty() && st.loops.is_empty() && st.images.is_empty()) {
            return;
        }
        let _ = std::fs::remove_file(&self.path);
        let _ = std::fs::remove_file(&self.pointer);
        if st.remove_image_dir {
            let _ = std::fs::remove_dir(&st.image_dir);
        }
    }
}

impl Drop for StateFile {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Does loop `device` still read from `image`?
fn loop_backs(device: &Path, image: &Path) -> bool {
    let name = device
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let backing = std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file"))
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    crate::fs::loopdev::bound_to(&backing, &image.display().to_string())
}

/// Tear down what `st` lists, checking each item is still iolab's; returns what was done.
pub fn clean(st: &MatrixState) -> Vec<String> {
    let mut done = Vec::new();
    for m in st.mounts.iter().rev() {
        match crate::fs::mount::umount_ours(&m.dir, &m.source) {
            Ok(true) => done.push(format!("unmounted {}", m.dir.display())),
            Ok(false) => {}
            Err(e) => done.push(format!("could not unmount {}: {e}", m.dir.display())),
        }
    }
    // Loops recorded, plus any loop over a recorded image (attached just before a kill
    // could record it).
    let mut loops: Vec<LoopRecord> = st.loops.clone();
    if let Ok(rd) = std::fs::read_dir("/sys/block") {
        for e in rd.flatten() {
            let dev = PathBuf::from("/dev").join(e.file_name());
            for img in &st.images {
                if loop_backs(&dev, img) && !loops.iter().any(|l| l.device == dev) {
                    loops.push(LoopRecord {
                        device: dev.clone(),
                        image: img.clone(),
                    });
                }
            }
        }
    }
    for l in loops.iter().rev() {
        if !loop_backs(&l.device, &l.image) {
            continue;
        }
        let ok = crate::fs::loopdev::LoopDevice::adopt(&l.device, &l.image)
            .detach()
            .is_ok();
        done.push(if ok {
            format!("detached {}", l.device.display())
        } else {
            format!("could not detach {}", l.device.display())
        });
    }
    for img in &st.images {
        // Only regular files inside the recorded image dir.
        if img.starts_with(&st.image_dir)
            && std::fs::symlink_metadata(img).is_ok_and(|m| m.file_type().is_file())
            && std::fs::remove_file(img).is_ok()
        {
            done.push(format!("removed {}", img.display()));
        }
    }
    for d in st.dirs.iter().rev() {
        if std::fs::remove_dir(d).is_ok() {
            done.push(format!("removed {}", d.display()));
        }
    }
    done
}

/// Clean up after the matrix run whose pointer is at `pointer`, if its process is gone: the
/// message saying what was done, or `None` (alive, or another start claimed it).
pub(super) fn recover(pointer: &Path) -> Option<String> {
    let state_path = PathBuf::from(std::fs::read_to_string(pointer).ok()?.trim());
    let state: Option<MatrixState> = std::fs::read_to_string(&state_path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    if let Some(st) = &state
        && alive(st.pid, st.start_ticks)
    {
        return None;
    }
    let _claim = Claimed::take(pointer)?;
    let st = state?;
    let done = clean(&st);
    let _ = std::fs::remove_file(&state_path);
    if st.remove_image_dir {
        let _ = std::fs::remove_dir(&st.image_dir);
    }
    let what = if done.is_empty() {
        "nothing was left".to_string()
    } else {
        done.join(", ")
    };
    Some(format!(
        "cleaned up after an interrupted matrix run (pid {}, {}): {what}",
        st.pid,
        state_path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_removes_only_listed_files_inside_the_image_dir() {
        let d = tempfile::tempdir().unwrap();
        let inside = d.path().join("a.img");
        std::fs::write(&inside, b"x").unwrap();
        let outside_dir = tempfile::tempdir().unwrap();
        let outside = outside_dir.path().join("precious");
        std::fs::write(&outside, b"y").unwrap();
        let mnt = d.path().join("mnt-1");
        std::fs::create_dir(&mnt).unwrap();
        let st = MatrixState {
            image_dir: d.path().to_path_buf(),
            images: vec![inside.clone(), outside.clone()],
            dirs: vec![mnt.clone()],
            loops: vec![LoopRecord {
                device: "/dev/loop-nonexistent".into(),
                image: inside.clone(),
            }],
            ..Default::default()
        };
        let done = clean(&st);
        assert!(!inside.exists());
        assert!(
            outside.exists(),
            "a file outside the image dir is never touched"
        );
        assert!(!mnt.exists());
        assert_eq!(done.len(), 2, "{done:?}");
    }
}

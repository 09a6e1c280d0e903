//! The scratch file-system helper that other tests build on: make, use, tear down.

mod common;
use common::scratch_or_skip;

fn loop_devices_backed_by(dir_prefix: &str) -> usize {
    std::fs::read_dir("/sys/block")
        .map(|rd| {
            rd.flatten()
                .filter(|e| {
                    std::fs::read_to_string(e.path().join("loop/backing_file"))
                        .map(|b| b.contains(dir_prefix))
                        .unwrap_or(false)
                })
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn ext4_scratch_is_made_and_torn_down() {
    let Some(fs) = scratch_or_skip(
        "ext4_scratch_is_made_and_torn_down",
        "ext4",
        64 << 20,
        &["-b", "1024"],
        "noatime",
    ) else {
        return;
    };
    let mnt = fs.path().to_path_buf();
    let image = fs.loop_dev.as_ref().unwrap().image.clone();
    std::fs::write(mnt.join("hello"), b"hi").unwrap();
    let m = iolab::sysinfo::mounts::mount_of(&mnt).unwrap();
    assert_eq!(m.fs_type, "ext4");
    assert!(m.options.contains("noatime"));
    let st = nix::sys::statvfs::statvfs(&mnt).unwrap();
    assert_eq!(st.block_size(), 1024);
    drop(fs);
    assert!(!mnt.exists(), "mount dir removed");
    assert!(!image.exists(), "image removed");
    assert_eq!(loop_devices_backed_by(&image.display().to_string()), 0);
}

#[test]
fn tmpfs_scratch() {
    let Some(fs) = scratch_or_skip("tmpfs_scratch", "tmpfs", 16 << 20, &[], "") else {
        return;
    };
    let m = iolab::sysinfo::mounts::mount_of(fs.path()).unwrap();
    assert_eq!(m.fs_type, "tmpfs");
}

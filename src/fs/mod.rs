//! Real file systems and the resources iolab creates: loop devices over image files, mkfs,
//! mount/umount, FUSE helpers, and guards that always tear down what iolab created.

pub mod alloc;
pub mod command;
pub mod detect;
pub mod facts;
pub mod fusefat;
pub mod guard;
pub mod instance;
pub mod layout;
pub mod loopdev;
pub mod mkfs;
pub mod mount;
pub mod registry;
pub mod superblock;
pub mod types;

//! What a mounted file system's on-disk superblock says that its allocation rules need
//! (`fs::alloc::FsRules::as_mounted`): whether ext4 keeps small files in the inode
//! (`-O inline_data`) and its inode size, and xfs's inode size. Read from the mounted
//! device when this user may read it; otherwise nothing, and the rules keep their defaults.

use std::os::unix::fs::FileExt;
use std::path::Path;

/// ext4's primary superblock starts 1024 bytes into the device.
pub const EXT4_OFFSET: u64 = 1024;
/// The bytes of an ext4 superblock the fields below lie in.
pub const EXT4_LEN: usize = 0x64;
/// The bytes of an xfs superblock the fields below lie in (it starts at byte 0).
pub const XFS_LEN: usize = 106;

const EXT4_MAGIC: u16 = 0xEF53;
/// `EXT4_FEATURE_INCOMPAT_INLINE_DATA`.
const EXT4_INCOMPAT_INLINE_DATA: u32 = 0x8000;
/// `EXT2_GOOD_OLD_REV`: 128-byte inodes, no `s_inode_size`.
const EXT2_GOOD_OLD_INODE: u64 = 128;

/// The ext2/3/4 superblock fields the allocation rules use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ext4Super {
    /// `s_feature_incompat` has INLINE_DATA: files small enough live in the inode.
    pub inline_data: bool,
    /// `s_inode_size`, bytes.
    pub inode_size: u64,
}

/// The fields of an ext2/3/4 superblock (`sb` from its first byte, at device byte 1024);
/// None without the magic number or when `sb` is short.
pub fn ext4(sb: &[u8]) -> Option<Ext4Super> {
    let le16 = |o: usize| Some(u16::from_le_bytes(sb.get(o..o + 2)?.try_into().ok()?));
    let le32 = |o: usize| Some(u32::from_le_bytes(sb.get(o..o + 4)?.try_into().ok()?));
    if le16(0x38)? != EXT4_MAGIC {
        return None;
    }
    let inode_size = match le32(0x4C)? {
        0 => EXT2_GOOD_OLD_INODE,
        _ => u64::from(le16(0x58)?),
    };
    Some(Ext4Super {
        inline_data: le32(0x60)? & EXT4_INCOMPAT_INLINE_DATA != 0,
        inode_size,
    })
}

/// `sb_inodesize` of an xfs superblock (`sb` from the device's first byte; big-endian);
/// None without the magic number `XFSB` or when `sb` is short.
pub fn xfs_inode_size(sb: &[u8]) -> Option<u64> {
    if sb.get(..4)? != b"XFSB" {
        return None;
    }
    Some(u64::from(u16::from_be_bytes(
        sb.get(104..106)?.try_into().ok()?,
    )))
}

/// `len` bytes at `offset` of `dev`, opened read-only; None when it cannot be read whole.
pub fn read(dev: &Path, offset: u64, len: usize) -> Option<Vec<u8>> {
    let f = std::fs::File::open(dev).ok()?;
    let mut buf = vec![0u8; len];
    f.read_exact_at(&mut buf, offset).ok()?;
    Some(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ext4 superblock with these fields (the rest zero).
    fn ext4_sb(rev: u32, inode_size: u16, incompat: u32) -> Vec<u8> {
        let mut sb = vec![0u8; 1024];
        sb[0x38..0x3A].copy_from_slice(&EXT4_MAGIC.to_le_bytes());
        sb[0x4C..0x50].copy_from_slice(&rev.to_le_bytes());
        sb[0x58..0x5A].copy_from_slice(&inode_size.to_le_bytes());
        sb[0x60..0x64].copy_from_slice(&incompat.to_le_bytes());
        sb
    }

    #[test]
    fn ext4_fields_from_the_superblock() {
        // extents (0x40), 64bit (0x80), flex_bg (0x200), inline_data (0x8000).
        let sb = ext4_sb(1, 512, 0x40 | 0x80 | 0x200 | 0x8000);
        assert_eq!(
            ext4(&sb),
            Some(Ext4Super {
                inline_data: true,
                inode_size: 512
            })
        );
        let sb = ext4_sb(1, 256, 0x40 | 0x80 | 0x200);
        assert_eq!(
            ext4(&sb),
            Some(Ext4Super {
                inline_data: false,
                inode_size: 256
            })
        );
        // Revision 0 has no s_inode_size: its inodes are 128 bytes.
        assert_eq!(ext4(&ext4_sb(0, 0, 0)).unwrap().inode_size, 128);
        // Not ext: no magic; cut short.
        assert_eq!(ext4(&[0u8; 1024]), None);
        assert_eq!(ext4(&ext4_sb(1, 256, 0x8000)[..0x62]), None);
    }

    #[test]
    fn xfs_inode_size_from_the_superblock() {
        let mut sb = vec![0u8; 512];
        sb[..4].copy_from_slice(b"XFSB");
        sb[104..106].copy_from_slice(&1024u16.to_be_bytes());
        assert_eq!(xfs_inode_size(&sb), Some(1024));
        assert_eq!(xfs_inode_size(&sb[..XFS_LEN]), Some(1024));
        assert_eq!(xfs_inode_size(&sb[..100]), None);
        sb[0] = b'Y';
        assert_eq!(xfs_inode_size(&sb), None);
    }

    #[test]
    fn read_gives_the_bytes_at_the_offset_or_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("img");
        let mut img = vec![0u8; 2048];
        img[1024..].copy_from_slice(&ext4_sb(1, 256, 0x8000));
        std::fs::write(&p, &img).unwrap();
        let sb = read(&p, EXT4_OFFSET, EXT4_LEN).unwrap();
        assert!(ext4(&sb).unwrap().inline_data);
        // Past the end, or no such device.
        assert_eq!(read(&p, 2000, 100), None);
        assert_eq!(read(&dir.path().join("none"), 0, 4), None);
    }
}

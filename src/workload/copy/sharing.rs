//! Did an in-place copy write data? Within one xfs or btrfs, copy_file_range(2) clones the
//! source's extents (reflink) instead of copying bytes: the "copy" then only writes
//! metadata and runs at many GB/s. The copied files' FIEMAP says it directly (their extents
//! carry FIEMAP_EXTENT_SHARED); where FIEMAP is missing (FUSE, tmpfs) the df growth and the
//! device's written bytes say it less directly.

use std::path::Path;

use crate::model::copy::InPlaceCopy;

/// Bytes of `f` mapped to extents, and of those the ones shared with another file.
pub fn file_sharing(f: &std::fs::File) -> std::io::Result<(u64, u64)> {
    let extents = crate::fs::layout::file_extents(f)?;
    let mapped = extents.iter().map(|e| e.length).sum();
    let shared = extents
        .iter()
        .filter(|e| e.flags & crate::fs::layout::EXTENT_SHARED != 0)
        .map(|e| e.length)
        .sum();
    Ok((mapped, shared))
}

/// Mapped and shared bytes over `files` (paths under `root`); None when the file system has
/// no FIEMAP (FUSE, tmpfs) or a file cannot be opened.
pub fn tree_sharing<'a>(
    root: &Path,
    files: impl IntoIterator<Item = &'a Path>,
) -> Option<(u64, u64)> {
    let (mut mapped, mut shared) = (0u64, 0u64);
    for rel in files {
        let f = std::fs::File::open(root.join(rel)).ok()?;
        let (m, s) = file_sharing(&f).ok()?;
        mapped += m;
        shared += s;
    }
    Some((mapped, shared))
}

/// What is known about one in-place copy of `data_bytes`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Evidence {
    pub data_bytes: u64,
    /// FIEMAP over the copies: (mapped, shared) bytes.
    pub fiemap: Option<(u64, u64)>,
    /// Every file was copied by read/write or sendfile (which cannot share extents).
    pub bytes_moved_by_hand: bool,
    /// df used after - before the copy (after syncfs).
    pub used_delta_bytes: Option<i64>,
    /// Bytes the device wrote during the copy (its syncfs included).
    pub device_written_bytes: Option<u64>,
}

/// A share of the data: at least 90 % is a reflink or a data copy, at most 10 % the other.
fn verdict(
    part: f64,
    whole: f64,
    high_means: &'static str,
    low_means: &'static str,
) -> &'static str {
    let r = part / whole;
    if r >= 0.9 {
        high_means
    } else if r <= 0.1 {
        low_means
    } else {
        "partial"
    }
}

/// `data` (the bytes were written again), `reflink` (the copies share the source's
/// extents), `partial` (some of each) or `unknown`, and what decided it: FIEMAP first (the
/// most direct), then the copy method, then df's growth, then the device's written bytes
/// (a data copy writes the data set's size; a reflink only metadata). df and the device
/// are read with a wide margin (50 %): delayed allocation, journals and metadata blur them.
pub fn classify(e: &Evidence) -> InPlaceCopy {
    let mut out = InPlaceCopy {
        method: "unknown".into(),
        basis: "none".into(),
        fiemap_mapped_bytes: e.fiemap.map(|f| f.0),
        fiemap_shared_bytes: e.fiemap.map(|f| f.1),
        used_delta_bytes: e.used_delta_bytes,
        device_written_bytes: e.device_written_bytes,
    };
    let data = e.data_bytes as f64;
    let (method, basis) = if let Some((mapped, shared)) = e.fiemap.filter(|f| f.0 > 0) {
        (
            verdict(shared as f64, mapped as f64, "reflink", "data"),
            "fiemap",
        )
    } else if e.bytes_moved_by_hand {
        ("data", "method")
    } else if data <= 0.0 {
        ("unknown", "none")
    } else if let Some(d) = e.used_delta_bytes {
        (df_or_device(d.max(0) as f64 / data), "df")
    } else if let Some(w) = e.device_written_bytes {
        (df_or_device(w as f64 / data), "device")
    } else {
        ("unknown", "none")
    };
    out.method = method.into();
    out.basis = basis.into();
    out
}

/// Growth (df or device writes) over the data size: about 1 for a data copy, about 0 for a
/// reflink.
fn df_or_device(ratio: f64) -> &'static str {
    if ratio >= 0.5 {
        "data"
    } else if ratio <= 0.1 {
        "reflink"
    } else {
        "partial"
    }
}

/// A short label for tables: `data`, `reflink (98 % shared)`, `unknown`.
pub fn label(c: &InPlaceCopy) -> String {
    match (
        c.method.as_str(),
        c.fiemap_mapped_bytes,
        c.fiemap_shared_bytes,
    ) {
        ("reflink" | "partial", Some(m), Some(s)) if m > 0 => {
            format!("{} ({:.0} % shared)", c.method, s as f64 * 100.0 / m as f64)
        }
        (m, _, _) => m.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GB: u64 = 1_000_000_000;

    #[test]
    fn fiemap_decides_first() {
        // btrfs/xfs reflink: every extent shared, df and device barely move.
        let e = Evidence {
            data_bytes: GB,
            fiemap: Some((GB, GB)),
            used_delta_bytes: Some(2 << 20),
            device_written_bytes: Some(5 << 20),
            ..Default::default()
        };
        let c = classify(&e);
        assert_eq!((c.method.as_str(), c.basis.as_str()), ("reflink", "fiemap"));
        assert_eq!(label(&c), "reflink (100 % shared)");
        // ext4: extents of its own.
        let e = Evidence {
            fiemap: Some((GB, 0)),
            used_delta_bytes: Some(GB as i64),
            ..e
        };
        assert_eq!(classify(&e).method, "data");
        assert_eq!(label(&classify(&e)), "data");
        // Half shared.
        let e = Evidence {
            fiemap: Some((GB, GB / 2)),
            ..e
        };
        assert_eq!(classify(&e).method, "partial");
    }

    #[test]
    fn without_fiemap_the_method_then_df_then_the_device_decide() {
        // FUSE (ntfs-3g) or tmpfs: no FIEMAP.
        let base = Evidence {
            data_bytes: GB,
            ..Default::default()
        };
        let by_hand = Evidence {
            bytes_moved_by_hand: true,
            used_delta_bytes: Some(0),
            ..base
        };
        assert_eq!(
            (
                classify(&by_hand).method.as_str(),
                classify(&by_hand).basis.as_str()
            ),
            ("data", "method")
        );
        let df = Evidence {
            used_delta_bytes: Some(GB as i64 + (8 << 20)),
            device_written_bytes: Some(0),
            ..base
        };
        assert_eq!(
            (classify(&df).method.as_str(), classify(&df).basis.as_str()),
            ("data", "df")
        );
        let df0 = Evidence {
            used_delta_bytes: Some(1 << 20),
            ..base
        };
        assert_eq!(classify(&df0).method, "reflink");
        // fusefat reports no block counts: only the device is left.
        let dev = Evidence {
            device_written_bytes: Some(GB / 100 * 98),
            ..base
        };
        assert_eq!(
            (
                classify(&dev).method.as_str(),
                classify(&dev).basis.as_str()
            ),
            ("data", "device")
        );
        assert_eq!(classify(&base).method, "unknown");
        assert_eq!(label(&classify(&base)), "unknown");
        // FIEMAP that maps nothing (all inline or empty files) is no evidence.
        let empty = Evidence {
            fiemap: Some((0, 0)),
            used_delta_bytes: Some(GB as i64),
            ..base
        };
        assert_eq!(classify(&empty).basis, "df");
    }

    #[test]
    fn fiemap_sees_a_plain_file_as_unshared() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, vec![7u8; 256 << 10]).unwrap();
        let f = std::fs::File::open(&p).unwrap();
        // tmpfs has no FIEMAP; disk file systems map the file, none of it shared.
        if let Ok((mapped, shared)) = file_sharing(&f) {
            assert!(mapped >= 256 << 10, "{mapped}");
            assert_eq!(shared, 0);
        }
    }
}

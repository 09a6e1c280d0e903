//! `--verify`: hash every file of a tree (XXH3-128 or BLAKE3) and compare two trees file by
//! file, so "nothing lost" is checked, not assumed. The destination is walked for real, so
//! missing and unexpected files are found as well as changed ones.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::model::copy::VerifyResult;
use crate::os::signals::StopFlag;
use crate::workload::copy::HashKind;

/// Digest of one file (XXH3-128 uses the first 16 bytes).
pub type Digest = [u8; 32];

/// Relative path -> digest of every regular file under a root.
pub type TreeHashes = BTreeMap<PathBuf, Digest>;

/// At most this many differing paths are listed in the result and the error.
const MAX_LISTED: usize = 50;

pub fn hash_name(kind: HashKind) -> &'static str {
    match kind {
        HashKind::Xxh3 => "xxh3-128",
        HashKind::Blake3 => "blake3",
    }
}

/// Read `f` to its end through `buf`, handing each piece to `feed`.
fn read_through(
    f: &mut std::fs::File,
    buf: &mut [u8],
    path: &Path,
    mut feed: impl FnMut(&[u8]),
) -> Result<()> {
    loop {
        let n = f
            .read(buf)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if n == 0 {
            return Ok(());
        }
        feed(&buf[..n]);
    }
}

/// Hash one file.
pub fn hash_file(path: &Path, kind: HashKind, buf: &mut [u8]) -> Result<Digest> {
    // O_NOATIME keeps a user's source untouched even in metadata where allowed.
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOATIME)
        .open(path)
        .or_else(|_| std::fs::File::open(path))
        .with_context(|| format!("cannot open {} to verify it", path.display()))?;
    let mut out = [0u8; 32];
    match kind {
        HashKind::Xxh3 => {
            let mut h = xxhash_rust::xxh3::Xxh3::new();
            read_through(&mut f, buf, path, |b| h.update(b))?;
            out[..16].copy_from_slice(&h.digest128().to_le_bytes());
        }
        HashKind::Blake3 => {
            let mut h = blake3::Hasher::new();
            read_through(&mut f, buf, path, |b| {
                h.update(b);
            })?;
            out.copy_from_slice(h.finalize().as_bytes());
        }
    }
    Ok(out)
}

/// Hash every regular file under `root` (walking the real tree, sorted).
pub fn hash_tree(root: &Path, kind: HashKind, stop: &StopFlag) -> Result<TreeHashes> {
    let mut buf = vec![0u8; 1 << 20];
    let mut out = TreeHashes::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = root.join(&rel);
        let rd =
            std::fs::read_dir(&dir).with_context(|| format!("cannot list {}", dir.display()))?;
        for e in rd {
            let e = e.with_context(|| format!("cannot list {}", dir.display()))?;
            let ft = e.file_type()?;
            let r = rel.join(e.file_name());
            if ft.is_dir() {
                stack.push(r);
            } else if ft.is_file() {
                stop.check()?;
                out.insert(r, hash_file(&e.path(), kind, &mut buf)?);
            }
        }
    }
    Ok(out)
}

/// Compare the hashes of a destination with the expected ones.
pub fn compare(expected: &TreeHashes, actual: &TreeHashes, kind: HashKind) -> VerifyResult {
    let mut mismatches = Vec::new();
    for (p, d) in expected {
        match actual.get(p) {
            None => mismatches.push(format!("{} (missing)", p.display())),
            Some(a) if a != d => mismatches.push(format!("{} (content differs)", p.display())),
            Some(_) => {}
        }
    }
    for p in actual.keys().filter(|p| !expected.contains_key(*p)) {
        mismatches.push(format!("{} (unexpected)", p.display()));
    }
    VerifyResult {
        hash: hash_name(kind).into(),
        files_checked: expected.len() as u64,
        ok: mismatches.is_empty(),
        mismatches,
    }
}

/// The error that fails a run whose verification found differences.
pub fn failure(phase: &str, dst: &Path, v: &VerifyResult) -> anyhow::Error {
    let listed: Vec<&str> = v
        .mismatches
        .iter()
        .take(MAX_LISTED)
        .map(|s| s.as_str())
        .collect();
    let more = v.mismatches.len().saturating_sub(MAX_LISTED);
    anyhow::anyhow!(
        "verification failed after the {phase} phase: {} of {} files differ under {} ({}):\n  {}{}",
        v.mismatches.len(),
        v.files_checked,
        dst.display(),
        v.hash,
        listed.join("\n  "),
        if more > 0 {
            format!("\n  ... and {more} more")
        } else {
            String::new()
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_changed_missing_and_extra_files() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        for r in [&a, &b] {
            std::fs::create_dir_all(r.join("sub")).unwrap();
            std::fs::write(r.join("sub/x"), b"same").unwrap();
            std::fs::write(r.join("y"), b"one").unwrap();
        }
        std::fs::write(a.join("gone"), b"1").unwrap();
        std::fs::write(b.join("y"), b"two").unwrap();
        std::fs::write(b.join("new"), b"1").unwrap();
        for kind in [HashKind::Xxh3, HashKind::Blake3] {
            let stop = StopFlag::new();
            let v = compare(
                &hash_tree(&a, kind, &stop).unwrap(),
                &hash_tree(&b, kind, &stop).unwrap(),
                kind,
            );
            assert!(!v.ok);
            assert_eq!(v.files_checked, 3);
            assert!(v.mismatches.contains(&"y (content differs)".to_string()));
            assert!(v.mismatches.contains(&"gone (missing)".to_string()));
            assert!(v.mismatches.contains(&"new (unexpected)".to_string()));
            assert_eq!(v.mismatches.len(), 3);
        }
    }
}

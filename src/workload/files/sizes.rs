//! File-size tokens of `--sizes`: plain sizes (`0`, `1`, `512`, `4K`) and sizes relative to
//! the target's allocation unit (`cluster`, `cluster+1`, `2cluster`, `cluster-1`), and how
//! the allocation unit is found (statvfs; the ext4 superblock for bigalloc clusters).

use std::path::{Path, PathBuf};

use crate::error::UsageError;

/// One requested file size: the token as written and the bytes it resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSize {
    pub token: String,
    pub bytes: u64,
    /// Later tokens of `--sizes` that came to the same bytes on this file system through
    /// its allocation unit (`cluster` and `64K` on 64 KiB clusters): measured once, as this
    /// one, and said (the `sizes-merged` warning).
    pub same_as: Vec<String>,
}

impl FileSize {
    /// Test-name label: `4KiB`, `1 B`, `cluster+1 (4097 B)`.
    pub fn label(&self) -> String {
        let exact = crate::units::fmt_size_exact(self.bytes);
        let exact = match exact.strip_suffix('B') {
            Some(n) if n.chars().all(|c| c.is_ascii_digit()) => format!("{n} B"),
            _ => exact,
        };
        if self.token.to_ascii_lowercase().contains("cluster") {
            format!("{} ({exact})", self.token)
        } else {
            exact
        }
    }
}

/// Parse one token against allocation unit `unit` (bytes).
pub fn parse_token(token: &str, unit: u64) -> Result<u64, UsageError> {
    parse_token_with(token, Some(unit))
}

/// Check the tokens of a `--sizes` list for what needs no allocation unit (syntax, zero
/// clusters): a matrix `files:sizes=…` reference is refused before any mkfs, not after it
/// in every configuration's row. `cluster-N` below zero depends on the unit: not checked.
///
/// A size listed twice is refused (`--sizes 1,1` measured one size and said nothing): the
/// same token, or two plain sizes of the same bytes (`4K,4096`). Tokens relative to the
/// allocation unit may meet a plain size on one file system and not on another (`cluster`
/// and `64K`): those are measured once and said, not refused (`parse_sizes`).
pub fn check_sizes_syntax(list: &str) -> Result<(), UsageError> {
    let mut seen: Vec<(&str, Option<u64>)> = Vec::new();
    for tok in list.split(',') {
        let t = tok.trim();
        let bytes = parse_token_with(t, None)?;
        let plain = (!t.to_ascii_lowercase().contains("cluster")).then_some(bytes);
        if let Some((first, _)) = seen
            .iter()
            .find(|(o, b)| o.eq_ignore_ascii_case(t) || (plain.is_some() && *b == plain))
        {
            let what = if first.eq_ignore_ascii_case(t) {
                format!("'{t}' is listed twice")
            } else {
                format!("'{t}' is {bytes} B, as '{first}' before it")
            };
            return Err(UsageError::new(format!(
                "--sizes: {what}: each size is one test, list it once"
            )));
        }
        seen.push((t, plain));
    }
    Ok(())
}

/// `parse_token`; without a unit only the syntax is checked (and 0 is returned).
fn parse_token_with(token: &str, unit: Option<u64>) -> Result<u64, UsageError> {
    let t = token.trim();
    let bad = |why: &str| {
        UsageError::new(format!(
            "--sizes: '{t}' {why} (expected bytes like 0, 1, 512, 4K, or cluster, cluster+1, 2cluster)"
        ))
    };
    if t.is_empty() {
        return Err(bad("is empty"));
    }
    let lower = t.to_ascii_lowercase();
    let Some(pos) = lower.find("cluster") else {
        // The unit's own message would give examples of sizes before this list's (and
        // without `cluster`): one set of examples, this list's.
        return crate::units::parse_size(t).map_err(|_| bad("does not parse"));
    };
    let (mult, rest) = (&lower[..pos], &lower[pos + "cluster".len()..]);
    let mult: u64 = if mult.is_empty() {
        1
    } else {
        mult.trim_end_matches('*')
            .parse()
            .map_err(|_| bad("has a bad multiplier"))?
    };
    if mult == 0 {
        return Err(bad("is zero clusters"));
    }
    if rest.is_empty() {
        return match unit {
            Some(unit) => mult.checked_mul(unit).ok_or_else(|| bad("is too large")),
            None => Ok(0),
        };
    }
    // Not `split_at(1)`: the text after "cluster" may start with a multi-byte character.
    let sign_len = rest.chars().next().map_or(1, char::len_utf8);
    let (sign, amount) = rest.split_at(sign_len);
    if sign != "+" && sign != "-" {
        return Err(bad("has text after 'cluster'"));
    }
    let amount = crate::units::parse_size(amount)
        .map_err(|_| bad(&format!("has a bad offset '{amount}'")))?;
    let Some(unit) = unit else {
        return Ok(0);
    };
    let base = mult.checked_mul(unit).ok_or_else(|| bad("is too large"))?;
    if sign == "+" {
        base.checked_add(amount).ok_or_else(|| bad("is too large"))
    } else {
        base.checked_sub(amount)
            .ok_or_else(|| bad("is below zero bytes"))
    }
}

/// Parse a comma-separated list (refused as [`check_sizes_syntax`] refuses it); tokens that
/// come to the same bytes through the allocation unit are measured once, the later ones
/// named in the first's `same_as`.
pub fn parse_sizes(list: &str, unit: u64) -> Result<Vec<FileSize>, UsageError> {
    check_sizes_syntax(list)?;
    let mut out: Vec<FileSize> = Vec::new();
    for tok in list.split(',') {
        let bytes = parse_token(tok, unit)?;
        let token = tok.trim().to_string();
        match out.iter_mut().find(|s| s.bytes == bytes) {
            Some(first) => first.same_as.push(token),
            None => out.push(FileSize {
                token,
                bytes,
                same_as: Vec::new(),
            }),
        }
    }
    if out.is_empty() {
        return Err(UsageError::new("--sizes: no sizes given"));
    }
    Ok(out)
}

/// The allocation unit of the file system holding `dir`: the ext4 bigalloc cluster when the
/// superblock is readable, the cluster in the boot sector of a FAT, exFAT or NTFS device
/// (fusefat's statvfs says 1 KiB whatever its clusters), else statvfs `f_frsize` (or
/// `f_bsize`).
pub fn alloc_unit(dir: &Path) -> Option<u64> {
    let st = nix::sys::statvfs::statvfs(dir).ok()?;
    let fr = st.fragment_size() as u64;
    let unit = if fr > 0 { fr } else { st.block_size() as u64 };
    let Some(m) = crate::sysinfo::mounts::mount_of(dir) else {
        return Some(unit);
    };
    if m.fs_type.starts_with("ext")
        && let Some(c) = ext4_cluster(Path::new(&m.source))
    {
        return Some(c.max(unit));
    }
    let fat_like = [
        "vfat",
        "msdos",
        "exfat",
        "ntfs",
        "ntfs3",
        "fuseblk",
        "fuse.fusefat",
    ];
    if fat_like.contains(&m.fs_type.as_str()) {
        // fusefat names no device in the mount table: its daemon's command line does.
        let dev = if m.source.starts_with("/dev/") {
            Some(PathBuf::from(&m.source))
        } else {
            m.fs_type.strip_prefix("fuse.").and_then(|daemon| {
                crate::sysinfo::mounts::fuse_daemon_device(daemon, &m.mount_point)
            })
        };
        if let Some(c) = dev.and_then(|d| crate::fs::mkfs::boot_sector_cluster(&d)) {
            return Some(c);
        }
    }
    Some(unit)
}

/// Cluster size from an ext2/3/4 superblock (`s_log_cluster_size` when bigalloc is on).
fn ext4_cluster(dev: &Path) -> Option<u64> {
    use std::os::unix::fs::FileExt;
    if !dev.starts_with("/dev/") {
        return None;
    }
    let f = std::fs::File::open(dev).ok()?;
    let mut sb = [0u8; 1024];
    f.read_exact_at(&mut sb, 1024).ok()?;
    cluster_from_superblock(&sb)
}

/// Decode the cluster size from the 1024-byte superblock.
pub fn cluster_from_superblock(sb: &[u8; 1024]) -> Option<u64> {
    let le32 = |o: usize| u32::from_le_bytes([sb[o], sb[o + 1], sb[o + 2], sb[o + 3]]);
    if u16::from_le_bytes([sb[0x38], sb[0x39]]) != 0xEF53 {
        return None;
    }
    const RO_COMPAT_BIGALLOC: u32 = 0x200;
    let log = if le32(0x64) & RO_COMPAT_BIGALLOC != 0 {
        le32(0x1C)
    } else {
        le32(0x18)
    };
    (log < 22).then(|| 1024u64 << log)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_against_a_4k_unit() {
        let u = 4096;
        assert_eq!(parse_token("0", u).unwrap(), 0);
        assert_eq!(parse_token("1", u).unwrap(), 1);
        assert_eq!(parse_token("512", u).unwrap(), 512);
        assert_eq!(parse_token("1K", u).unwrap(), 1024);
        assert_eq!(parse_token("64K", u).unwrap(), 65536);
        assert_eq!(parse_token("cluster", u).unwrap(), 4096);
        assert_eq!(parse_token("cluster+1", u).unwrap(), 4097);
        assert_eq!(parse_token("Cluster-1", u).unwrap(), 4095);
        assert_eq!(parse_token("2cluster", u).unwrap(), 8192);
        assert_eq!(parse_token("2*cluster+1K", u).unwrap(), 9216);
        assert_eq!(parse_token(" cluster ", 65536).unwrap(), 65536);
    }

    #[test]
    fn bad_tokens() {
        for t in [
            "", "abc", "clusterx", "cluster+", "0cluster", "xcluster", "-1", "4Q",
        ] {
            let e = parse_token(t, 4096).unwrap_err();
            assert!(e.0.contains("--sizes"), "{t}: {e}");
        }
        assert!(parse_token("cluster-5K", 4096).is_err());
        // One set of examples: the size parser's ("examples: 4096, 4k, …") came before this
        // list's, two parentheses in a row.
        let e = parse_token("4Q", 4096).unwrap_err().0;
        assert_eq!(
            e,
            "--sizes: '4Q' does not parse (expected bytes like 0, 1, 512, 4K, or cluster, cluster+1, 2cluster)"
        );
        let e = parse_token("cluster+x", 4096).unwrap_err().0;
        assert!(
            e.starts_with("--sizes: 'cluster+x' has a bad offset 'x' (expected"),
            "{e}"
        );
    }

    /// Without a unit the syntax alone is judged: what no unit can save is refused, what
    /// depends on the unit (`cluster-5K`) is left to the run.
    #[test]
    fn syntax_check_without_a_unit() {
        check_sizes_syntax("0,1,512,4K,1.5M,cluster,Cluster-1,2cluster,2*cluster+1K,cluster-5K")
            .unwrap();
        for t in [
            "",
            "abc",
            "clusterx",
            "cluster+",
            "0cluster",
            "xcluster",
            "-1",
            "4Q",
            "1,,2",
            "cluster*2",
        ] {
            let e = check_sizes_syntax(t).unwrap_err();
            assert!(e.0.contains("--sizes"), "{t}: {e}");
        }
    }

    #[test]
    fn lists_dedup_and_labels() {
        let v = parse_sizes("1,cluster,4K,cluster+1", 4096).unwrap();
        assert_eq!(v.len(), 3);
        assert_eq!(v[0].label(), "1 B");
        assert_eq!(v[1].label(), "cluster (4KiB)");
        // Met through the allocation unit: measured once, and the merge is kept to be said.
        assert_eq!(v[1].same_as, ["4K"]);
        assert_eq!(v[2].label(), "cluster+1 (4097 B)");
        assert!(parse_sizes("1,,2", 4096).is_err());
        // On another file system the same list is four sizes.
        assert_eq!(
            parse_sizes("1,cluster,4K,cluster+1", 65536).unwrap().len(),
            4
        );
    }

    /// `--sizes 1,1` measured one size and said nothing: a size listed twice is refused.
    #[test]
    fn a_size_listed_twice_is_refused() {
        for (list, said) in [
            ("1,1", "'1' is listed twice"),
            ("4K, 1,4k", "'4k' is listed twice"),
            ("cluster,Cluster", "'Cluster' is listed twice"),
            ("4K,4096", "'4096' is 4096 B, as '4K' before it"),
        ] {
            let e = check_sizes_syntax(list).unwrap_err().0;
            assert!(e.starts_with(&format!("--sizes: {said}")), "{list}: {e}");
            assert!(parse_sizes(list, 4096).is_err(), "{list}");
        }
        // Relative and plain sizes may or may not meet, by file system: not refused.
        check_sizes_syntax("1,cluster,cluster+1,64K,cluster-1,4K").unwrap();
    }

    #[test]
    fn bigalloc_superblock() {
        let mut sb = [0u8; 1024];
        sb[0x38] = 0x53;
        sb[0x39] = 0xEF;
        sb[0x18] = 2; // 4 KiB blocks
        assert_eq!(cluster_from_superblock(&sb), Some(4096));
        sb[0x1C] = 6; // 64 KiB clusters
        sb[0x64] = 0x00;
        sb[0x65] = 0x02; // RO_COMPAT_BIGALLOC
        assert_eq!(cluster_from_superblock(&sb), Some(65536));
        sb[0x38] = 0;
        assert_eq!(cluster_from_superblock(&sb), None);
    }
}

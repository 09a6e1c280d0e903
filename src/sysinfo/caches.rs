//! The caches iolab can see in front of a target (the page cache, a loop device's host page
//! cache, a device's write-back cache) and the worst-case sizing rule over them: a tested
//! size under 10x the caches may measure a cache. `iolab saturate` sizes its files by it and
//! both `saturate` and `run` warn (`small-test-size`) by it.

use std::path::Path;

use crate::model::{Warning, WarningCode};
use crate::units::fmt_size_iec;

/// Worst-case sizing: the test region is at least this many times the caches.
pub const CACHE_FACTOR: u64 = 10;
/// A device reporting a write-back cache without its size is assumed to have
/// max(256 MiB, capacity / 1024): HDDs carry 64-256 MiB, SSDs about 1 GiB of DRAM per TiB.
pub const ASSUMED_WRITE_CACHE: u64 = 256 << 20;

/// What the page cache is called in a `Cache` (buffered I/O only).
const PAGE_CACHE: &str = "page cache (RAM; buffered I/O)";

/// A cache iolab found in front of a target.
#[derive(Debug, Clone, PartialEq)]
pub struct Cache {
    pub what: String,
    pub bytes: u64,
    /// The size is an assumption (the device reports the cache, not its size).
    pub assumed: bool,
}

impl Cache {
    /// The page cache of buffered I/O (`iolab run` has its own `page-cache` warning for it).
    pub fn is_page_cache(&self) -> bool {
        self.what == PAGE_CACHE
    }
}

/// The caches iolab can see in front of `path`.
pub fn detect_caches(path: &Path, direct: bool) -> Vec<Cache> {
    let ram = super::ram_bytes();
    let mut caches = Vec::new();
    if !direct {
        caches.push(Cache {
            what: PAGE_CACHE.into(),
            bytes: ram,
            assumed: false,
        });
    }
    let Some((name, sys)) = super::block_device_of(path) else {
        return caches;
    };
    let q = super::queue_dir(&sys);
    let read = |p: &str| super::read_trim(&q.join(p));
    if let Some(dio) = read("loop/dio") {
        // A loop device without direct I/O goes through the host's page cache.
        if dio != "1" && direct {
            caches.push(Cache {
                what: format!("host page cache behind {name} (loop without direct I/O)"),
                bytes: ram,
                assumed: false,
            });
        }
        return caches;
    }
    if read("queue/write_cache").as_deref() == Some("write back") {
        let capacity = read("size")
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(0)
            * 512;
        caches.push(Cache {
            what: format!("{name} write-back cache (size not reported)"),
            bytes: ASSUMED_WRITE_CACHE.max(capacity / 1024),
            assumed: true,
        });
    }
    caches
}

/// `iolab run`'s judgement: a cache whose size is only assumed counts when `size` fits in it
/// whole (at 10x an assumed 1 GiB per TiB, every default 1 GiB test on an SSD would be
/// warned about); caches of a known size keep the 10x rule.
pub fn keep_assumed_only_when_holding(caches: &mut Vec<Cache>, size: u64) {
    caches.retain(|c| !c.assumed || size < c.bytes);
}

/// The size below which `caches` may decide the result: `CACHE_FACTOR` times their sum.
pub fn recommended_size(caches: &[Cache]) -> u64 {
    CACHE_FACTOR.saturating_mul(caches.iter().map(|c| c.bytes).sum::<u64>())
}

/// `small-test-size` when `size` bytes tested on `path` are less than 10x its `caches`:
/// cache hits may flatter the result.
pub fn small_test_warning(size: u64, path: &Path, caches: &[Cache]) -> Option<Warning> {
    let recommended = recommended_size(caches);
    if size >= recommended {
        return None;
    }
    let list: Vec<String> = caches
        .iter()
        .map(|c| {
            format!(
                "{} {}{}",
                c.what,
                if c.assumed { "assumed " } else { "" },
                fmt_size_iec(c.bytes)
            )
        })
        .collect();
    // The path as the user can find it again: `.` (the default target) as the directory.
    let shown = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    Some(Warning {
        code: WarningCode::SmallTestSize,
        message: format!(
            "{} tested on {} is less than 10x its caches ({}; {} wanted): cache hits may flatter the result",
            fmt_size_iec(size),
            shown.display(),
            list.join(", "),
            fmt_size_iec(recommended)
        ),
        test: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(bytes: u64, assumed: bool) -> Cache {
        Cache {
            what: "sda write-back cache (size not reported)".into(),
            bytes,
            assumed,
        }
    }

    #[test]
    fn under_ten_times_the_caches_is_small() {
        let caches = [cache(256 << 20, true)];
        assert_eq!(recommended_size(&caches), 2560 << 20);
        let w = small_test_warning(1 << 30, Path::new("/mnt"), &caches).unwrap();
        assert_eq!(w.code, WarningCode::SmallTestSize);
        assert_eq!(
            w.message,
            "1.0 GiB tested on /mnt is less than 10x its caches (sda write-back cache (size not \
             reported) assumed 256.0 MiB; 2.5 GiB wanted): cache hits may flatter the result"
        );
        assert!(small_test_warning(2560 << 20, Path::new("/mnt"), &caches).is_none());
        // No cache seen: nothing to warn about.
        assert!(small_test_warning(4096, Path::new("/mnt"), &[]).is_none());
        // The default target `.` is named as the directory it is.
        let w = small_test_warning(1 << 30, Path::new("."), &caches).unwrap();
        let cwd = std::env::current_dir().unwrap();
        assert!(
            w.message
                .contains(&format!("tested on {} is", cwd.display())),
            "{}",
            w.message
        );
        // run: an assumed cache only when the test fits in it; a known one at 10x.
        let known = Cache {
            what: "host page cache behind loop0 (loop without direct I/O)".into(),
            bytes: 1 << 30,
            assumed: false,
        };
        let mut c = vec![cache(1 << 30, true), known.clone()];
        keep_assumed_only_when_holding(&mut c, 1 << 30);
        assert_eq!(c, vec![known.clone()]);
        let mut c = vec![cache(1 << 30, true)];
        keep_assumed_only_when_holding(&mut c, 64 << 20);
        assert!(small_test_warning(64 << 20, Path::new("/mnt"), &c).is_some());
    }
}

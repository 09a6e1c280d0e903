//! Transparent huge pages (THP): whether the kernel gives them, their size, and whether a
//! mapping of this process got them (`/proc/self/smaps`).
//!
//! iolab's I/O buffers ask for them (`madvise(MADV_HUGEPAGE)`) when they are large enough:
//! a buffer on 4 KiB pages is a scatter list of scattered pages, and a block device that
//! takes at most `max_segments` segments per request (128 on a loop device) splits a
//! 1 MiB direct I/O into two or more requests; on huge pages the same I/O is one request.

use std::path::Path;
use std::sync::OnceLock;

const THP: &str = "/sys/kernel/mm/transparent_hugepage";

/// The THP policy, the bracketed word of `.../transparent_hugepage/enabled`
/// (`always`, `madvise`, `never`); `None` when the kernel has no THP.
pub fn thp_mode() -> Option<String> {
    let text = std::fs::read_to_string(Path::new(THP).join("enabled")).ok()?;
    bracketed(&text).map(str::to_string)
}

/// The word in brackets of a sysfs choice list (`always [madvise] never` → `madvise`).
pub fn bracketed(text: &str) -> Option<&str> {
    let start = text.find('[')? + 1;
    let len = text[start..].find(']')?;
    Some(&text[start..start + len])
}

/// The size of a transparent huge page (`hpage_pmd_size`: 2 MiB on x86-64), whatever the
/// policy; `None` when the kernel has no THP. Read once per process.
pub fn thp_size() -> Option<usize> {
    static SIZE: OnceLock<Option<usize>> = OnceLock::new();
    *SIZE.get_or_init(|| {
        let size: usize = std::fs::read_to_string(Path::new(THP).join("hpage_pmd_size"))
            .ok()?
            .trim()
            .parse()
            .ok()?;
        (size.is_power_of_two() && size >= 4096).then_some(size)
    })
}

/// Whether `madvise(MADV_HUGEPAGE)` can give huge pages: the policy is `always` or
/// `madvise`. Read once per process.
pub fn thp_usable() -> bool {
    static USABLE: OnceLock<bool> = OnceLock::new();
    *USABLE.get_or_init(|| {
        thp_size().is_some() && matches!(thp_mode().as_deref(), Some("always" | "madvise"))
    })
}

/// For the mapping of `smaps` (the text of `/proc/PID/smaps`) that contains `addr`: its
/// length and how many of its bytes are on anonymous huge pages.
pub fn huge_bytes_at(smaps: &str, addr: usize) -> Option<(usize, usize)> {
    let mut inside: Option<usize> = None;
    for line in smaps.lines() {
        if let Some(len) = mapping_header(line) {
            if inside.is_some() {
                // The mapping had no AnonHugePages line (very old kernels).
                return None;
            }
            if let Some((start, end)) = len
                && (start..end).contains(&addr)
            {
                inside = Some(end - start);
            }
            continue;
        }
        if let (Some(vma_len), Some(rest)) = (inside, line.strip_prefix("AnonHugePages:")) {
            let kb: usize = rest.trim().strip_suffix("kB")?.trim().parse().ok()?;
            return Some((vma_len, kb * 1024));
        }
    }
    None
}

/// `start-end perms offset dev inode [path]` → (start, end); `None` for the field lines.
fn mapping_header(line: &str) -> Option<Option<(usize, usize)>> {
    let range = line.split_whitespace().next()?;
    let (a, b) = range.split_once('-')?;
    if a.is_empty() || !a.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let start = usize::from_str_radix(a, 16).ok();
    let end = usize::from_str_radix(b, 16).ok();
    Some(start.zip(end))
}

/// Whether the whole mapping of this process that contains `addr` is on huge pages; `None`
/// when smaps cannot say.
pub fn mapping_is_huge(addr: usize) -> Option<bool> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    let (len, huge) = huge_bytes_at(&smaps, addr)?;
    Some(huge >= len)
}

/// The warning for a direct-I/O test whose large buffers did not get huge pages
/// (`huge_page_buffers` = false).
pub fn small_pages_warning(test: &str) -> crate::model::Warning {
    let mode = thp_mode().unwrap_or_else(|| "unknown".into());
    crate::model::Warning {
        code: crate::model::WarningCode::SmallPages,
        message: format!(
            "the I/O buffers are on 4 KiB pages, not huge pages (transparent_hugepage: {mode}; \
             or memory too fragmented): a large direct I/O is then a list of scattered pages, \
             which a device taking few segments per request splits (1 MiB on a loop device: two \
             requests), so the device may have done smaller requests than the test asked for; \
             compare device read_ios / write_ios with ops in the JSON; with \
             `echo madvise > /sys/kernel/mm/transparent_hugepage/enabled` iolab's buffers get huge pages"
        ),
        test: Some(test.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMAPS: &str = "\
55d0c0a00000-55d0c0a21000 r--p 00000000 fe:01 1234    /usr/bin/iolab
Size:                132 kB
AnonHugePages:         0 kB
7f0000000000-7f0000800000 rw-p 00000000 00:00 0
Size:               8192 kB
Rss:                8192 kB
AnonHugePages:      6144 kB
THPeligible:    1
7f0000800000-7f0000a00000 rw-p 00000000 00:00 0
Size:               2048 kB
AnonHugePages:      2048 kB
";

    #[test]
    fn finds_the_mapping_and_its_huge_bytes() {
        assert_eq!(
            huge_bytes_at(SMAPS, 0x7f00_0010_0000),
            Some((8 << 20, 6 << 20))
        );
        assert_eq!(
            huge_bytes_at(SMAPS, 0x7f00_0080_0000),
            Some((2 << 20, 2 << 20))
        );
        assert_eq!(huge_bytes_at(SMAPS, 0x55d0_c0a0_0000), Some((0x21000, 0)));
        assert_eq!(huge_bytes_at(SMAPS, 0x1000), None, "no mapping there");
        // The end is exclusive.
        assert_eq!(
            huge_bytes_at(SMAPS, 0x7f00_0080_0000 - 1),
            Some((8 << 20, 6 << 20))
        );
    }

    #[test]
    fn mapping_without_the_field_says_nothing() {
        let old = "7f0000000000-7f0000800000 rw-p 00000000 00:00 0\nSize: 8192 kB\n\
                   7f0000800000-7f0000a00000 rw-p 00000000 00:00 0\nAnonHugePages: 2048 kB\n";
        assert_eq!(huge_bytes_at(old, 0x7f00_0000_0000), None);
    }

    #[test]
    fn small_pages_warning_names_the_policy_and_the_remedy() {
        let w = small_pages_warning("SEQ1M Q8T1 read");
        assert_eq!(w.code, crate::model::WarningCode::SmallPages);
        assert_eq!(w.test.as_deref(), Some("SEQ1M Q8T1 read"));
        assert!(
            w.message.contains("transparent_hugepage: "),
            "{}",
            w.message
        );
        assert!(w.message.contains("echo madvise >"), "{}", w.message);
    }

    #[test]
    fn bracketed_word() {
        assert_eq!(bracketed("always [madvise] never\n"), Some("madvise"));
        assert_eq!(bracketed("[always] madvise never"), Some("always"));
        assert_eq!(bracketed("always madvise never"), None);
    }

    #[test]
    fn this_process_has_an_answer_for_its_own_stack() {
        let x = 0u8;
        let addr = &x as *const u8 as usize;
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("Linux has smaps");
        let (len, huge) = huge_bytes_at(&smaps, addr).expect("the stack is mapped");
        assert!(len > 0 && huge <= len);
    }
}

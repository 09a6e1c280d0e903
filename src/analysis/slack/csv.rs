//! `--sizes-from FILE.csv`: file sizes from a list instead of a scan. Either one size per
//! line, or a header naming a `size` (or `size_bytes`/`bytes`) column and optionally a
//! `name`/`path` column (its length feeds the NTFS resident threshold). Blank lines and
//! `#` comments are skipped. Every error names the line and the reason.

use std::path::Path;

use super::{FileRec, Inventory};

/// Names assumed for sizes without a name column (NTFS resident threshold), in bytes.
pub const DEFAULT_NAME_LEN: u16 = 12;

/// Split one CSV line (commas, double quotes with `""` escapes).
fn fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            (c, _) => cur.push(c),
        }
    }
    out.push(cur);
    out.into_iter().map(|f| f.trim().to_string()).collect()
}

fn parse_size(field: &str) -> Result<u64, String> {
    if field.is_empty() {
        return Err("empty size".into());
    }
    if field.starts_with('-') {
        return Err(format!("{field:?} is negative"));
    }
    let size = crate::units::parse_size(field)
        .map_err(|_| format!("{field:?} is not a size in bytes (e.g. 4096 or 4K)"))?;
    if size > MAX_FILE {
        return Err(format!(
            "{field:?} is larger than any file Linux can hold (8 EiB)"
        ));
    }
    Ok(size)
}

/// Linux's largest file size (`MAX_LFS_FILESIZE`, i64::MAX bytes), and the most the sizes
/// may add up to: the allocation sums of `slack` stay within u64.
const MAX_FILE: u64 = i64::MAX as u64;

/// Parse CSV text; `Err` is "line N: reason".
pub fn parse(text: &str) -> Result<Inventory, String> {
    let mut size_col = 0usize;
    let mut name_col: Option<usize> = None;
    let mut columns: Option<usize> = None;
    let mut inv = Inventory::default();
    // A UTF-8 byte-order mark, as spreadsheets write one, is not part of the first field.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f = fields(line);
        if columns.is_none() {
            columns = Some(f.len());
            let lower: Vec<String> = f.iter().map(|s| s.to_ascii_lowercase()).collect();
            if let Some(c) = lower
                .iter()
                .position(|h| matches!(h.as_str(), "size" | "size_bytes" | "bytes"))
            {
                size_col = c;
                name_col = lower
                    .iter()
                    .position(|h| matches!(h.as_str(), "name" | "path" | "file"));
                continue;
            }
            if f.len() > 1 {
                return Err(format!(
                    "line {n}: {} columns but no header naming a `size` column",
                    f.len()
                ));
            }
        }
        let want = columns.unwrap_or(1);
        if f.len() != want {
            return Err(format!(
                "line {n}: {} fields, the header has {want}",
                f.len()
            ));
        }
        let size = parse_size(&f[size_col]).map_err(|e| format!("line {n}: {e}"))?;
        let name_len = name_col
            .map(|c| {
                let p = &f[c];
                let base = p.rsplit('/').next().unwrap_or(p);
                base.encode_utf16().count().min(u16::MAX as usize) as u16
            })
            .unwrap_or(DEFAULT_NAME_LEN);
        inv.files.push(FileRec { size, name_len });
    }
    if inv.files.is_empty() {
        return Err("no sizes in it".into());
    }
    inv.stats.files = inv.files.len() as u64;
    inv.stats.data_bytes = inv
        .files
        .iter()
        .try_fold(0u64, |sum, f| {
            sum.checked_add(f.size).filter(|&t| t <= MAX_FILE)
        })
        .ok_or("the sizes add up to more than 8 EiB")?;
    inv.stats.largest_file_bytes = inv.files.iter().map(|f| f.size).max().unwrap_or(0);
    Ok(inv)
}

/// Read and parse a CSV file; the error is one line naming the file.
pub fn read(path: &Path) -> Result<Inventory, String> {
    let started = std::time::Instant::now();
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut inv = parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    inv.stats.elapsed_s = started.elapsed().as_secs_f64();
    inv.stats.entries_per_s = inv.stats.files as f64 / inv.stats.elapsed_s.max(1e-9);
    Ok(inv)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_sizes_and_header_forms() {
        let inv = parse("# sizes\n1\n\n4K\n0\n").unwrap();
        let s: Vec<u64> = inv.files.iter().map(|f| f.size).collect();
        assert_eq!(s, vec![1, 4096, 0]);
        let inv = parse("path,size\n\"a,b/longname.txt\",10\nx,20\n").unwrap();
        assert_eq!(inv.files[0].size, 10);
        assert_eq!(inv.files[0].name_len, 12);
        assert_eq!(inv.stats.data_bytes, 30);
        // Excel's "CSV UTF-8" starts with a byte-order mark.
        let inv = parse("\u{feff}size,path\n10,a\n").unwrap();
        assert_eq!(inv.files[0].size, 10);
    }

    #[test]
    fn sizes_beyond_8_eib_are_refused_not_overflowed() {
        assert_eq!(
            parse("size\n18446744073709551615\n").unwrap_err(),
            "line 2: \"18446744073709551615\" is larger than any file Linux can hold (8 EiB)"
        );
        assert_eq!(
            parse("size\n9223372036854775807\n9223372036854775807\n").unwrap_err(),
            "the sizes add up to more than 8 EiB"
        );
        let inv = parse("size\n9223372036854775807\n").unwrap();
        assert_eq!(inv.stats.data_bytes, i64::MAX as u64);
    }

    #[test]
    fn errors_name_the_line() {
        assert_eq!(
            parse("size\n1\nabc\n").unwrap_err(),
            "line 3: \"abc\" is not a size in bytes (e.g. 4096 or 4K)"
        );
        assert!(parse("a,b\n1,2\n").unwrap_err().starts_with("line 1:"));
        assert!(parse("size,name\n1\n").unwrap_err().starts_with("line 2:"));
        assert!(parse("-5\n").unwrap_err().contains("negative"));
        assert_eq!(parse("\n# nothing\n").unwrap_err(), "no sizes in it");
    }
}

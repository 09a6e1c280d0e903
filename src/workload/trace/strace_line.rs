//! One line of `strace -f -ttt -T -y` output: pid, timestamp, call name, arguments split at
//! top-level commas (paths and strings may hold commas), result and `-y` path annotations;
//! `<unfinished ...>` / `<... resumed>` halves are joined.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use super::tracefile::path_text;

/// One syscall line, joined from `<unfinished ...>` and `<... resumed>` halves.
#[derive(Debug)]
pub(super) struct Line {
    pub(super) pid: u32,
    pub(super) ts_ns: u64,
    pub(super) name: String,
    pub(super) args: Vec<String>,
    pub(super) ret: i64,
    pub(super) ret_path: Option<String>,
    pub(super) dur_ns: u64,
    /// Asynchronous I/O (the tracepoints recorder's io_uring reads and writes): the ring.
    pub(super) ring: Option<u32>,
}

pub(super) fn ts_to_ns(s: &str) -> Option<u64> {
    let (a, b) = s.split_once('.').unwrap_or((s, "0"));
    let frac: String = b.chars().chain(std::iter::repeat('0')).take(9).collect();
    Some(a.parse::<u64>().ok()? * 1_000_000_000 + frac.parse::<u64>().ok()?)
}

/// Split an argument list at top-level commas (quotes, brackets and `<path>` annotations
/// may contain commas).
pub(super) fn split_args(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut angle, mut in_str, mut esc) = (0i32, false, false, false);
    let mut cur = String::new();
    let mut prev = ' ';
    for c in s.chars() {
        if in_str {
            cur.push(c);
            if esc {
                esc = false;
            } else if c == '\\' {
                esc = true;
            } else if c == '"' {
                in_str = false;
            }
        } else if angle {
            cur.push(c);
            if c == '>' {
                angle = false;
            }
        } else {
            match c {
                '"' => in_str = true,
                '<' if prev.is_ascii_alphanumeric() => angle = true,
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                ',' if depth == 0 => {
                    out.push(cur.trim().to_string());
                    cur.clear();
                    prev = c;
                    continue;
                }
                _ => {}
            }
            cur.push(c);
        }
        prev = c;
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// `3</tmp/a>` -> (3, "/tmp/a"); `AT_FDCWD</x>` -> (-100, "/x"); `1` -> (1, None).
pub(super) fn fd_arg(a: &str) -> (i64, Option<String>) {
    let (num, path) = match a.find('<') {
        Some(i) if a.ends_with('>') => {
            let raw = &a[i + 1..a.len() - 1];
            let text = unescape(raw).map_or_else(|| raw.to_string(), |b| path_text(&b));
            (&a[..i], Some(text))
        }
        _ => (a, None),
    };
    let fd = if num == "AT_FDCWD" {
        -100
    } else {
        num.parse().unwrap_or(-1)
    };
    (fd, path)
}

/// A quoted string argument, its escapes undone; a path's bytes as [`path_text`] gives them.
pub(super) fn unquote(a: &str) -> Option<String> {
    let inner = a.strip_prefix('"')?;
    let inner = inner
        .strip_suffix("...")
        .unwrap_or(inner)
        .strip_suffix('"')?;
    Some(path_text(&unescape(inner)?))
}

/// strace's escapes (`\n`, `\t`, `\xHH`, octal `\377`, and a backslash before any other
/// character) back to the bytes. strace writes every byte outside printable ASCII as an
/// escape, also in `-y` paths (`3</r/\303\274>` for `/r/ü`) and `>` there as `\76`.
fn unescape(inner: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let b = inner.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 1 < b.len() {
            let c = b[i + 1];
            match c {
                b'n' => out.push(b'\n'),
                b't' => out.push(b'\t'),
                b'x' if i + 3 < b.len() + 1 => {
                    let v = u8::from_str_radix(
                        std::str::from_utf8(&b[i + 2..(i + 4).min(b.len())]).ok()?,
                        16,
                    )
                    .ok()?;
                    out.push(v);
                    i += 4;
                    continue;
                }
                b'0'..=b'7' => {
                    let end = (i + 4).min(b.len());
                    let digits: Vec<u8> = b[i + 1..end]
                        .iter()
                        .take_while(|d| (b'0'..=b'7').contains(d))
                        .copied()
                        .collect();
                    out.push(u8::from_str_radix(std::str::from_utf8(&digits).ok()?, 8).ok()?);
                    i += 1 + digits.len();
                    continue;
                }
                other => out.push(other),
            }
            i += 2;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Some(out)
}

/// Lexically normalised absolute path.
pub(super) fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(x) => out.push(x),
            _ => {}
        }
    }
    out
}

pub(super) fn parse_line(raw: &str, pending: &mut HashMap<u32, (u64, String)>) -> Option<Line> {
    // strace pads the pid column ("5940  1795334718.954020 ..."): fields are separated by
    // one or more spaces, so a pid with fewer than 5 digits must not shift the columns.
    let (first, after) = raw.trim_start().split_once(' ')?;
    let (pid, ts, rest) = match first.parse::<u32>() {
        Ok(pid) => {
            let (ts, rest) = after.trim_start().split_once(' ')?;
            (pid, ts, rest.trim_start().to_string())
        }
        Err(_) => (0, first, after.trim_start().to_string()),
    };
    let mut ts_ns = ts_to_ns(ts)?;
    let mut body = rest;
    if body.starts_with("---") || body.starts_with("+++") {
        return None;
    }
    if let Some(i) = body.find(" <unfinished ...>") {
        pending.insert(pid, (ts_ns, body[..i].to_string()));
        return None;
    }
    if body.starts_with("<... ") {
        let after = body.split_once("resumed>")?.1.to_string();
        let (t0, head) = pending.remove(&pid)?;
        ts_ns = t0;
        body = format!("{head}{after}");
    }
    let mut dur_ns = 0;
    if body.ends_with('>')
        && let Some(i) = body.rfind(" <")
    {
        let d = &body[i + 2..body.len() - 1];
        dur_ns = ts_to_ns(d).unwrap_or(0);
        body.truncate(i);
    }
    let open = body.find('(')?;
    let name = body[..open].to_string();
    let eq = body.rfind(" = ")?;
    let close = body[..eq].rfind(')')?;
    if close < open {
        return None;
    }
    let args = split_args(&body[open + 1..close]);
    let ret_s = body[eq + 3..].trim();
    let num_end = ret_s
        .find(|c: char| !(c.is_ascii_digit() || c == '-'))
        .unwrap_or(ret_s.len());
    let ret: i64 = ret_s[..num_end].parse().ok()?;
    let ret_path = fd_arg(ret_s.split_whitespace().next().unwrap_or("")).1;
    Some(Line {
        pid,
        ts_ns,
        name,
        args,
        ret,
        ret_path,
        dur_ns,
        ring: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_args_with_commas_in_paths() {
        let v = split_args(r#"3</r/a,b>, "x, y", {st_size=3, st_mode=S_IFREG}, 4"#);
        assert_eq!(v.len(), 4);
        assert_eq!(fd_arg(&v[0]), (3, Some("/r/a,b".into())));
        assert_eq!(unquote(&v[1]).unwrap(), "x, y");
    }

    /// strace escapes every byte outside printable ASCII: names come back as they are on
    /// disk (UTF-8 as text), with `path_text`'s mark for bytes that are not UTF-8.
    #[test]
    fn escaped_names_come_back_as_the_names() {
        assert_eq!(unquote(r#""\303\274""#).unwrap(), "ü");
        assert_eq!(fd_arg(r"3</r/\303\274>"), (3, Some("/r/ü".into())));
        assert_eq!(fd_arg(r"3</r/e\76f>"), (3, Some("/r/e>f".into())));
        assert_eq!(fd_arg(r"3</r/c\\d>"), (3, Some(r"/r/c\d".into())));
        assert_eq!(unquote(r#""g\"h""#).unwrap(), "g\"h");
        let (a, b) = (fd_arg(r"3</r/a\377>").1, fd_arg(r"3</r/a\376>").1);
        assert_eq!(a.as_deref(), Some("/r/a\u{FFFD}FF"));
        assert_ne!(a, b, "two names that are not UTF-8 stay two");
    }

    /// Regression: short pids are padded with extra spaces; such lines were dropped, so a
    /// recording made while pids were below 10000 had no calls at all.
    #[test]
    fn short_pids_with_padding_parse() {
        let mut pending = HashMap::new();
        for raw in [
            "5940  1795334718.954020 close(3</tmp/x/a>) = 0 <0.000010>",
            "123456 1795334718.954020 close(3</tmp/x/a>) = 0 <0.000010>",
            "1795334718.954020 close(3</tmp/x/a>) = 0 <0.000010>",
        ] {
            assert!(parse_line(raw, &mut pending).is_some(), "{raw}");
        }
    }
}

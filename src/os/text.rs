//! Text that iolab did not write (file and directory names, target paths, mount options,
//! device models and serials, host names, labels, argv) made safe for the terminal: the one
//! way every terminal output shows it. A control character (C0, DEL, C1: an escape sequence
//! that clears the screen or moves the cursor, a newline that forges a line, a carriage
//! return that overwrites one) and a bidirectional override (text shown in another order
//! than it is, "Trojan Source") are shown as Rust escapes (`\u{1b}`, `\n`), so the text
//! reads as what it is and stays on its line and in its table cell. Everything else (wide
//! and combining characters included) is left as it is. The files, the JSON and the system
//! calls keep the real text; this is only how it is shown. (HTML, SVG, Markdown and CSV
//! have their own escapers in `report/`: `svg::esc`, `markdown::text`, `csv::field`.)
//! Every stderr line goes through [`into_terminal_lines`] (`eline!`): whatever a message
//! names, no escape sequence reaches the terminal; [`terminal`] on each value keeps a line
//! break in it from starting a line of its own too.
//! `path_text`: a name's bytes that are not UTF-8 as text that says what they were.

use std::borrow::Cow;
use std::os::unix::ffi::OsStrExt;

/// A path's bytes as text (the JSON, the history and every output are UTF-8): UTF-8 as it
/// is, and each byte of a sequence that is not UTF-8 as U+FFFD followed by its two hex
/// digits (`a\xff` -> `a\u{FFFD}FF`). A lossy conversion gave every such byte the same
/// U+FFFD, which said neither what the name was nor told two such names apart. The trace
/// recorders name files this way, a result's target and command line too.
pub fn path_text(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\u{FFFD}{b:02X}"));
        }
    }
    out
}

/// [`path_text`] of a path or an argument.
pub fn os_text(s: &std::ffi::OsStr) -> String {
    path_text(s.as_bytes())
}

/// Is `c` shown escaped: a control character or a bidirectional formatting one.
fn hostile(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// `s` for one line of a terminal, a table cell or a message: every control character
/// (newline and tab included) and bidirectional override escaped; unchanged (borrowed)
/// when it has none, as almost every text has.
pub fn terminal(s: &str) -> Cow<'_, str> {
    escape(s, |_| false)
}

/// `s`, a text of several lines that iolab composed around outside text (an error message
/// naming a path): as [`terminal`], but its line breaks kept. An outside newline still
/// starts a line, but no escape sequence reaches the terminal.
pub fn terminal_lines(s: &str) -> Cow<'_, str> {
    escape(s, |c| c == '\n')
}

/// [`terminal_lines`] of a line already formatted, without a copy when it is clean (every
/// stderr line goes through it: `eline!`).
pub fn into_terminal_lines(s: String) -> String {
    if needs(&s, |c| c == '\n') {
        terminal_lines(&s).into_owned()
    } else {
        s
    }
}

/// Does `s` hold a character to escape (one `keep` does not keep)?
fn needs(s: &str, keep: impl Fn(char) -> bool) -> bool {
    s.chars().any(|c| hostile(c) && !keep(c))
}

fn escape(s: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !needs(s, &keep) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if hostile(c) && !keep(c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_and_overrides_are_shown_escaped_and_the_rest_as_it_is() {
        assert!(matches!(
            terminal("/mnt/data ü 漢字 e\u{301}"),
            Cow::Borrowed(_)
        ));
        assert_eq!(
            terminal("a\u{1b}[2Jb\nFORGED\r\t\u{7f}\u{9b}x\u{202e}cod.exe"),
            "a\\u{1b}[2Jb\\nFORGED\\r\\t\\u{7f}\\u{9b}x\\u{202e}cod.exe"
        );
        assert_eq!(
            terminal_lines("one \u{1b}[31m\ntwo"),
            "one \\u{1b}[31m\ntwo"
        );
        assert_eq!(
            into_terminal_lines("one \u{1b}[31m\ntwo".into()),
            "one \\u{1b}[31m\ntwo"
        );
        assert_eq!(into_terminal_lines("clean\nlines".into()), "clean\nlines");
        // Quotes and backslashes are the name's own: not escaped.
        assert_eq!(terminal("it's \"x\" \\n"), "it's \"x\" \\n");
    }

    #[test]
    fn bytes_that_are_not_utf8_are_named_by_their_hex() {
        assert_eq!(path_text(b"/mnt/n\xff\xfeq"), "/mnt/n\u{FFFD}FF\u{FFFD}FEq");
        assert_eq!(path_text("/mnt/ü".as_bytes()), "/mnt/ü");
    }
}

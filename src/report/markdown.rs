//! The Markdown report: the same blocks as the HTML report, as GitHub-flavoured Markdown
//! tables (charts are HTML-only; their numbers are in the tables).

use std::fmt::Write;

use crate::report::blocks::{Block, TableBlock};

/// Text of a line (a heading, a paragraph, a warning) as Markdown shows it whatever it
/// names (a path, a host name, a label from a result file): a line break in it would end
/// the line and could start a forged one (`# heading`, `- item`), so it is a space; a `<`
/// that opens raw HTML (`<script>`, `<img onerror>`, `</p>`, `<!--`: CommonMark's tags
/// start with a letter, `/`, `!` or `?`), which many renderers pass through, is `&lt;`
/// (the `<` of `p < 0.001` stays); a `](` that would make a link of a name
/// (`[x](javascript:…)`) is `\](`; another control character is shown as the terminal
/// shows it (`os::text::terminal`). Every view of the same text shows the same characters.
fn text(s: &str) -> String {
    let s = s.replace(['\r', '\n'], " ").replace("](", "\\](");
    // The file is read in terminals too (`cat report.md`): no escape sequence.
    let s = crate::os::text::terminal(&s);
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match chars.peek() {
            Some(&n) if c == '<' && (n.is_alphabetic() || matches!(n, '/' | '!' | '?')) => {
                out.push_str("&lt;")
            }
            _ => out.push(c),
        }
    }
    out
}

/// Text of a table cell: [`text`], and a `|` would end the cell.
fn cell(s: &str) -> String {
    text(&s.replace('\\', "\\\\").replace('|', "\\|"))
}

pub fn render(blocks: &[Block]) -> String {
    let mut s = String::new();
    for b in blocks {
        match b {
            Block::Heading(level, t) => {
                let _ = writeln!(s, "{} {}\n", "#".repeat(*level as usize), text(t));
            }
            Block::Para(t) => {
                let _ = writeln!(s, "{}\n", text(t));
            }
            Block::Alert(t) => {
                let _ = writeln!(s, "> **Attention:** {}\n", text(t));
            }
            Block::KeyValues(kv) => {
                s.push_str("| | |\n|---|---|\n");
                for (k, v) in kv {
                    let _ = writeln!(s, "| {} | {} |", cell(k), cell(v));
                }
                s.push('\n');
            }
            Block::Table(t) => table(&mut s, t),
            Block::Warnings(ws) => {
                for (code, t) in ws {
                    let _ = writeln!(s, "- `{code}` {}", text(t));
                }
                s.push('\n');
            }
            Block::Chart { .. } => {}
        }
    }
    while s.ends_with("\n\n") {
        s.pop();
    }
    s
}

fn table(s: &mut String, t: &TableBlock) {
    let _ = writeln!(
        s,
        "| {} |",
        t.header
            .iter()
            .map(|h| cell(h))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let align: Vec<&str> = (0..t.header.len())
        .map(|i| if t.is_numeric(i) { "---:" } else { "---" })
        .collect();
    let _ = writeln!(s, "|{}|", align.join("|"));
    for row in &t.rows {
        let _ = writeln!(
            s,
            "| {} |",
            row.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | ")
        );
    }
    s.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_text_keeps_its_line_and_opens_no_html() {
        assert_eq!(
            text("a\n# forged <script>x</script> <!-- <img src=x>"),
            "a # forged &lt;script>x&lt;/script> &lt;!-- &lt;img src=x>"
        );
        // iolab's own `<` stays as it was.
        assert_eq!(
            text("faster (Welch, p < 0.001)"),
            "faster (Welch, p < 0.001)"
        );
        assert_eq!(cell("a|b\\c\nd"), "a\\|b\\\\c d");
        assert_eq!(
            text("[x](javascript:alert(1))"),
            "[x\\](javascript:alert(1))"
        );
        assert_eq!(text("a\u{1b}[2J"), "a\\u{1b}[2J");
    }
}

//! The Markdown report: the same blocks as the HTML report, as GitHub-flavoured Markdown
//! tables (charts are HTML-only; their numbers are in the tables).

use std::fmt::Write;

use crate::report::blocks::{Block, TableBlock};

/// Escape what would break a table cell or start markup.
fn cell(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace('\n', " ")
}

pub fn render(blocks: &[Block]) -> String {
    let mut s = String::new();
    for b in blocks {
        match b {
            Block::Heading(level, text) => {
                let _ = writeln!(s, "{} {}\n", "#".repeat(*level as usize), text);
            }
            Block::Para(text) => {
                let _ = writeln!(s, "{text}\n");
            }
            Block::Alert(text) => {
                let _ = writeln!(s, "> **Attention:** {text}\n");
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
                for (code, text) in ws {
                    let _ = writeln!(s, "- `{code}` {text}");
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

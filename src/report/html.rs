//! The self-contained HTML report: one file, inline CSS and inline SVG, no script, no font,
//! no link to anything (it opens from a USB stick). Responsive (tables scroll sideways on a
//! phone, charts scale) and printable (`@media print`).

use std::fmt::Write;

use crate::report::blocks::{Block, TableBlock};
use crate::report::svg::esc;

const CSS: &str = r#"
:root{--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--bg:#fff;--soft:#f6f8fa;--warn:#9a6700;--warnbg:#fff8c5;--bad:#cf222e}
*{box-sizing:border-box}
body{margin:0 auto;max-width:64rem;padding:1rem;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
h1{font-size:1.6rem;margin:.2rem 0 .6rem}
h2{font-size:1.3rem;margin:2rem 0 .6rem;padding-top:.6rem;border-top:2px solid var(--line)}
h3{font-size:1.1rem;margin:1.4rem 0 .5rem}
h4{font-size:1rem;margin:1rem 0 .4rem}
p{margin:.4rem 0}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch;margin:.4rem 0 .8rem}
table{border-collapse:collapse;font-size:.88rem;font-variant-numeric:tabular-nums}
th,td{border:1px solid var(--line);padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:var(--soft);white-space:nowrap}
td.n{text-align:right;white-space:nowrap}
td:first-child{white-space:nowrap}
table.kv th{text-align:right;width:11rem}
ul.warnings{list-style:none;padding:0;margin:.4rem 0}
ul.warnings li{background:var(--warnbg);border-left:4px solid var(--warn);padding:.3rem .6rem;margin:.25rem 0}
ul.toc{margin:.4rem 0;padding-left:1.2rem}
a{color:#0550ae}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85em}
.alert{border-left:4px solid var(--bad);background:#ffebe9;padding:.5rem .7rem;font-weight:600}
figure{margin:.8rem 0 1.2rem;break-inside:avoid;page-break-inside:avoid}
figcaption{color:var(--muted);font-size:.85rem}
svg.chart{width:100%;height:auto;max-width:720px;display:block}
svg.chart text{font-family:inherit;font-size:11px;fill:var(--fg)}
svg.chart .ct{font-size:13px;font-weight:600}
svg.chart .tick{fill:var(--muted)}
svg.chart .axis{fill:var(--muted);font-size:11px}
svg.chart .grid{stroke:#e6e8eb;stroke-width:1}
svg.chart .frame{fill:none;stroke:var(--line)}
svg.chart .err{stroke:#222;stroke-width:1.4;fill:none}
svg.chart .line{stroke-width:2;fill:none}
svg.chart .limit{stroke:var(--bad);stroke-width:1.5;stroke-dasharray:6 4}
svg.chart .limit-t{fill:var(--bad)}
svg.chart .mark{fill:none;stroke:#111;stroke-width:2}
svg.chart .cell{font-size:10px}
svg.chart .pt{font-size:9px;fill:var(--muted)}
@media (max-width:600px){body{padding:.5rem;font-size:14px}table{font-size:.8rem}table.kv th{width:auto}
figure{overflow-x:auto;-webkit-overflow-scrolling:touch}svg.chart{min-width:560px}}
@media print{body{max-width:none;padding:0;font-size:10pt}figure{overflow:visible}svg.chart{min-width:0}h2{break-before:page;border:0}h2:first-of-type{break-before:auto}
.scroll{overflow:visible}nav{display:none}ul.warnings li,.alert{background:none}th{background:none}table,tr{break-inside:avoid}}
"#;

/// Render the blocks as one HTML document.
pub fn render(blocks: &[Block]) -> String {
    let title = blocks
        .iter()
        .find_map(|b| match b {
            Block::Heading(1, t) => Some(t.as_str()),
            _ => None,
        })
        .unwrap_or("iolab report");
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"iolab {}\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        env!("CARGO_PKG_VERSION"),
        esc(title)
    );
    // Sections get ids so a contents list (only with several sections) can link to them.
    let sections: Vec<&str> = blocks
        .iter()
        .filter_map(|b| match b {
            Block::Heading(2, t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    let mut section = 0;
    let mut toc_done = sections.len() < 2;
    for b in blocks {
        if let Block::Heading(2, text) = b {
            if !toc_done {
                s.push_str("<nav><ul class=\"toc\">\n");
                for (i, t) in sections.iter().enumerate() {
                    let _ = writeln!(s, "<li><a href=\"#s{}\">{}</a></li>", i + 1, esc(t));
                }
                s.push_str("</ul></nav>\n");
                toc_done = true;
            }
            section += 1;
            let _ = writeln!(s, "<h2 id=\"s{section}\">{}</h2>", esc(text));
            continue;
        }
        block(&mut s, b);
    }
    s.push_str("</body>\n</html>\n");
    s
}

fn block(s: &mut String, b: &Block) {
    match b {
        Block::Heading(level, text) => {
            let _ = writeln!(s, "<h{level}>{}</h{level}>", esc(text));
        }
        Block::Para(text) => {
            let _ = writeln!(s, "<p>{}</p>", esc(text));
        }
        Block::Alert(text) => {
            let _ = writeln!(s, "<p class=\"alert\">{}</p>", esc(text));
        }
        Block::KeyValues(kv) => {
            s.push_str("<div class=\"scroll\"><table class=\"kv\">\n");
            for (k, v) in kv {
                let _ = writeln!(s, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
            }
            s.push_str("</table></div>\n");
        }
        Block::Table(t) => table(s, t),
        Block::Warnings(ws) => {
            s.push_str("<ul class=\"warnings\">\n");
            for (code, text) in ws {
                let _ = writeln!(s, "<li><code>{}</code> {}</li>", esc(code), esc(text));
            }
            s.push_str("</ul>\n");
        }
        Block::Chart { svg, caption } => {
            let _ = writeln!(
                s,
                "<figure>{svg}<figcaption>{}</figcaption></figure>",
                esc(caption)
            );
        }
    }
}

fn table(s: &mut String, t: &TableBlock) {
    s.push_str("<div class=\"scroll\"><table>\n<thead><tr>");
    for h in &t.header {
        let _ = write!(s, "<th>{}</th>", esc(h));
    }
    s.push_str("</tr></thead>\n<tbody>\n");
    for row in &t.rows {
        s.push_str("<tr>");
        for (i, c) in row.iter().enumerate() {
            if t.is_numeric(i) {
                let _ = write!(s, "<td class=\"n\">{}</td>", esc(c));
            } else {
                let _ = write!(s, "<td>{}</td>", esc(c));
            }
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody></table></div>\n");
}

//! The heat-map chart: a grid of cells coloured by value (the matrix report's cluster-size ×
//! file-size table), drawn with the primitives of `svg.rs`.

use std::fmt::Write;

use crate::report::svg::{W, esc, open, shorten};

/// The most characters of a title drawn across the chart's width.
const TITLE_CHARS: usize = 96;

/// A grid of cells coloured by value on a log scale (rates spread over decades) that spans
/// `scale` (the cells' values, or those of every map drawn to be compared with this one);
/// `None` cells are left grey. `higher_is_better` picks which end is dark.
pub fn heat_map(
    title: &str,
    rows: &[String],
    cols: &[String],
    cells: &[Vec<Option<f64>>],
    scale: &[f64],
    higher_is_better: bool,
    fmt: &dyn Fn(f64) -> String,
) -> String {
    let (left, top, cell_h) = (190.0, 48.0, 30.0);
    let cell_w = ((W - left - 10.0) / cols.len().max(1) as f64).min(130.0);
    let h = top + cell_h * rows.len() as f64 + 30.0;
    let vals: Vec<f64> = scale
        .iter()
        .cloned()
        .filter(|v| *v > 0.0 && v.is_finite())
        .collect();
    let lo = vals.iter().cloned().fold(f64::INFINITY, f64::min).ln();
    let hi = vals.iter().cloned().fold(f64::NEG_INFINITY, f64::max).ln();
    // The title as drawn fits the chart's width (13 px bold: about 7 px a character); a
    // workload's label made it run off both sides. The heading and caption give it whole.
    let mut s = open(&shorten(title, TITLE_CHARS), h);
    for (j, c) in cols.iter().enumerate() {
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"lbl\" text-anchor=\"middle\">{}</text>",
            left + cell_w * (j as f64 + 0.5),
            top - 8.0,
            esc(c)
        );
    }
    for (i, r) in rows.iter().enumerate() {
        let y = top + cell_h * i as f64;
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"lbl\" text-anchor=\"end\">{}</text>",
            left - 6.0,
            y + cell_h * 0.6,
            esc(&shorten(r, 30))
        );
        for (j, v) in cells.get(i).into_iter().flatten().enumerate() {
            let x = left + cell_w * j as f64;
            let (fill, text, ink) = match v {
                Some(v) if *v > 0.0 && v.is_finite() => {
                    let mut f = if hi > lo {
                        (v.ln() - lo) / (hi - lo)
                    } else {
                        1.0
                    };
                    if !higher_is_better {
                        f = 1.0 - f;
                    }
                    // Light to dark blue; white text on the darker half (a style: the
                    // report's `svg.chart text` rule beat a `fill` attribute, and the dark
                    // cells' figures were near-black on dark blue).
                    let l = 92.0 - 60.0 * f;
                    (
                        format!("hsl(210,70%,{l:.0}%)"),
                        fmt(*v),
                        if f > 0.55 { "#fff" } else { "#111" },
                    )
                }
                _ => ("#ddd".to_string(), "-".to_string(), "#111"),
            };
            let _ = write!(
                s,
                "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{fill}\" stroke=\"#fff\"><title>{} / {}: {}</title></rect>\
                 <text x=\"{:.1}\" y=\"{:.1}\" class=\"cell\" text-anchor=\"middle\" style=\"fill:{ink}\">{}</text>",
                cell_w,
                cell_h,
                esc(r),
                esc(cols.get(j).map(|c| c.as_str()).unwrap_or("")),
                esc(&text),
                x + cell_w / 2.0,
                y + cell_h * 0.62,
                esc(&text)
            );
        }
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The darkest cell's figure is white whatever the page's `svg.chart text` fill says,
    /// and a long title is drawn shortened (the report's heading and caption give it whole).
    #[test]
    fn dark_cells_have_white_figures_and_long_titles_fit() {
        let title = format!("{}: files create", "files:sizes=4K".repeat(10));
        let svg = heat_map(
            &title,
            &["ext4".into()],
            &["4K".into(), "64K".into()],
            &[vec![Some(100.0), Some(1000.0)]],
            &[100.0, 1000.0],
            true,
            &|v| format!("{v:.0}"),
        );
        assert!(svg.contains("style=\"fill:#fff\">1000</text>"), "{svg}");
        assert!(svg.contains("style=\"fill:#111\">100</text>"), "{svg}");
        let drawn = svg
            .split("class=\"ct\" text-anchor=\"middle\">")
            .nth(1)
            .and_then(|t| t.split("</text>").next())
            .unwrap();
        assert_eq!(drawn.chars().count(), TITLE_CHARS, "{drawn}");
        assert!(drawn.ends_with('…'));
    }
}

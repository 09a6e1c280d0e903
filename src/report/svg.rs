//! The one small chart module: hand-written inline SVG (one `<svg>` element per chart, no
//! namespace or external reference, so it embeds in HTML that opens offline). Three shapes
//! cover every chart of the report: horizontal bars with error bars, XY lines on linear, log
//! or "nines" axes, and a heat map (`heatmap.rs`). Pure string building; sizes are viewBox
//! units and the page's CSS scales the chart to the screen.

use std::fmt::Write;

/// Width of every chart in viewBox units (the page scales it).
pub(crate) const W: f64 = 720.0;
/// Dash patterns of the lines after each round of the palette (solid first).
const LINE_DASHES: [&str; 4] = ["", "7 3", "2 3", "8 3 2 3"];

/// Colour-blind-safe palette (Okabe–Ito).
pub const PALETTE: [&str; 8] = [
    "#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#f0e442",
];

/// Escape text for XML/HTML content and attributes.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

pub(crate) fn open(title: &str, h: f64) -> String {
    format!(
        "<svg class=\"chart\" viewBox=\"0 0 {W} {h:.0}\" role=\"img\" aria-label=\"{t}\"><title>{t}</title>\
         <text x=\"{x:.0}\" y=\"18\" class=\"ct\" text-anchor=\"middle\">{t}</text>",
        t = esc(title),
        x = W / 2.0
    )
}

/// One bar: a value and optionally its 95 % interval.
#[derive(Debug, Clone)]
pub struct Bar {
    pub label: String,
    pub value: f64,
    pub ci: Option<(f64, f64)>,
    /// Text printed after the bar (the formatted value).
    pub text: String,
}

/// Horizontal bars (long test names stay readable on a phone) from zero, with the CI as an
/// error bar.
pub fn bar_chart(
    title: &str,
    axis_label: &str,
    bars: &[Bar],
    fmt: &dyn Fn(f64) -> String,
) -> String {
    let row = 26.0;
    let (left, right, top) = (210.0, 110.0, 30.0);
    let h = top + row * bars.len() as f64 + 42.0;
    let max = bars
        .iter()
        .map(|b| b.ci.map(|c| c.1).unwrap_or(b.value).max(b.value))
        .fold(0.0_f64, f64::max);
    let scale = LinearScale::new(0.0, if max > 0.0 { max } else { 1.0 });
    let plot_w = W - left - right;
    let px = |v: f64| left + scale.frac(v) * plot_w;
    let mut s = open(title, h);
    let bottom = top + row * bars.len() as f64;
    for t in scale.ticks() {
        let x = px(t);
        let _ = write!(
            s,
            "<line x1=\"{x:.1}\" y1=\"{top:.1}\" x2=\"{x:.1}\" y2=\"{bottom:.1}\" class=\"grid\"/>\
             <text x=\"{x:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"middle\">{}</text>",
            bottom + 14.0,
            esc(&fmt(t))
        );
    }
    for (i, b) in bars.iter().enumerate() {
        let y = top + row * i as f64;
        let color = PALETTE[i % PALETTE.len()];
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"lbl\" text-anchor=\"end\">{}</text>\
             <rect x=\"{left:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{color}\"><title>{}: {}</title></rect>",
            left - 6.0,
            y + row * 0.62,
            esc(&shorten(&b.label, 32)),
            y + 4.0,
            (px(b.value.max(0.0)) - left).max(0.5),
            row - 8.0,
            esc(&b.label),
            esc(&b.text)
        );
        let mut text_x = px(b.value.max(0.0));
        if let Some((lo, hi)) = b.ci {
            let (x1, x2, yc) = (px(lo.max(0.0)), px(hi), y + row / 2.0);
            let _ = write!(
                s,
                "<path d=\"M{x1:.1} {yc:.1}H{x2:.1}M{x1:.1} {:.1}V{:.1}M{x2:.1} {:.1}V{:.1}\" class=\"err\"/>",
                yc - 5.0,
                yc + 5.0,
                yc - 5.0,
                yc + 5.0
            );
            text_x = text_x.max(x2);
        }
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" class=\"val\">{}</text>",
            text_x + 4.0,
            y + row * 0.62,
            esc(&b.text)
        );
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" class=\"axis\" text-anchor=\"middle\">{}</text></svg>",
        left + plot_w / 2.0,
        h - 8.0,
        esc(axis_label)
    );
    s
}

/// How an axis maps values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    Linear,
    /// Base-10 logarithmic (values must be > 0).
    Log,
    /// Percentiles (0..100) spread by their nines: 90, 99, 99.9 equally spaced.
    Nines,
}

/// An axis: its label, mapping and tick formatting.
pub struct Axis<'a> {
    pub label: &'a str,
    pub scale: Scale,
    pub fmt: &'a dyn Fn(f64) -> String,
}

/// The x axis of a figure over a measurement: seconds since its start, as plain numbers.
pub const MEASUREMENT_TIME: Axis<'static> = Axis {
    label: "time since the start of measurement (s)",
    scale: Scale::Linear,
    fmt: &plain_number,
};

fn plain_number(v: f64) -> String {
    format!("{v}")
}

/// A named polyline.
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Optional text next to each point (e.g. the queue depth); empty for none.
    pub labels: Vec<String>,
}

/// Extra marks on an XY chart.
#[derive(Debug, Clone)]
pub enum Mark {
    /// A horizontal dashed line (e.g. a latency limit).
    HLine { y: f64, label: String },
    /// A labelled point (e.g. the answer or the knee).
    Point { x: f64, y: f64, label: String },
    /// A vertical dashed line (e.g. a cliff in a throughput series).
    VLine { x: f64, label: String },
}

struct LinearScale {
    lo: f64,
    hi: f64,
    step: f64,
}

impl LinearScale {
    /// Bounds widened to round ticks (1, 2 or 5 times a power of ten, about five of them).
    fn new(lo: f64, hi: f64) -> Self {
        let (lo, hi) = if hi > lo {
            (lo, hi)
        } else {
            (lo - 1.0, lo + 1.0)
        };
        let raw = (hi - lo) / 5.0;
        let mag = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 5.0, 10.0]
            .iter()
            .map(|m| m * mag)
            .find(|s| *s >= raw)
            .unwrap_or(10.0 * mag);
        LinearScale {
            lo: (lo / step).floor() * step,
            hi: (hi / step).ceil() * step,
            step,
        }
    }
    fn frac(&self, v: f64) -> f64 {
        (v - self.lo) / (self.hi - self.lo)
    }
    fn ticks(&self) -> Vec<f64> {
        let n = ((self.hi - self.lo) / self.step).round() as i64;
        // Rounded so 0.1 + 0.2 prints as 0.3 on the axis.
        (0..=n)
            .map(|i| ((self.lo + self.step * i as f64) * 1e9).round() / 1e9)
            .collect()
    }
}

/// A mapped axis range: transform, bounds in transformed space, ticks in data space.
struct Mapped {
    scale: Scale,
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
}

fn nines(p: f64) -> f64 {
    -(1.0 - p.min(99.9999) / 100.0).log10()
}

impl Mapped {
    fn new(scale: Scale, values: impl Iterator<Item = f64>) -> Mapped {
        let v: Vec<f64> = values
            .filter(|v| v.is_finite() && (scale != Scale::Log || *v > 0.0))
            .collect();
        let min = v.iter().cloned().fold(f64::INFINITY, f64::min);
        let max = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let (min, max) = if v.is_empty() {
            (1.0, 10.0)
        } else {
            (min, max)
        };
        match scale {
            Scale::Linear => {
                let l = LinearScale::new(min.min(0.0), max);
                Mapped {
                    scale,
                    lo: l.lo,
                    hi: l.hi,
                    ticks: l.ticks(),
                }
            }
            Scale::Log => {
                let lo = min.log10().floor();
                let hi = max.log10().ceil().max(lo + 1.0);
                Mapped {
                    scale,
                    lo,
                    hi,
                    ticks: (lo as i32..=hi as i32).map(|e| 10f64.powi(e)).collect(),
                }
            }
            Scale::Nines => {
                let hi = nines(max).ceil().max(1.0);
                let ticks = [0.0, 90.0, 99.0, 99.9, 99.99, 99.999]
                    .into_iter()
                    .filter(|p| nines(*p) <= hi + 1e-9)
                    .collect();
                Mapped {
                    scale,
                    lo: 0.0,
                    hi,
                    ticks,
                }
            }
        }
    }
    fn frac(&self, v: f64) -> f64 {
        let t = match self.scale {
            Scale::Linear => v,
            Scale::Log => v.max(1e-300).log10(),
            Scale::Nines => nines(v),
        };
        (t - self.lo) / (self.hi - self.lo)
    }
}

/// Lines on two axes, with a legend under the plot and optional marks.
pub fn line_chart(title: &str, x: &Axis, y: &Axis, series: &[Series], marks: &[Mark]) -> String {
    let (left, right, top, plot_h) = (78.0, 20.0, 30.0, 250.0);
    let legend_rows = series.len().div_ceil(3);
    let h = top + plot_h + 44.0 + 18.0 * legend_rows as f64;
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let mark_x = marks.iter().filter_map(|m| match m {
        Mark::Point { x, .. } | Mark::VLine { x, .. } => Some(*x),
        Mark::HLine { .. } => None,
    });
    let mx = Mapped::new(x.scale, xs.chain(mark_x));
    let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let mark_y = marks.iter().filter_map(|m| match m {
        Mark::Point { y, .. } | Mark::HLine { y, .. } => Some(*y),
        Mark::VLine { .. } => None,
    });
    let my = Mapped::new(y.scale, ys.chain(mark_y));
    let plot_w = W - left - right;
    let px = |v: f64| left + mx.frac(v) * plot_w;
    let py = |v: f64| top + plot_h - my.frac(v) * plot_h;
    let mut s = open(title, h);
    let bottom = top + plot_h;
    for t in &my.ticks {
        let yy = py(*t);
        let _ = write!(
            s,
            "<line x1=\"{left:.1}\" y1=\"{yy:.1}\" x2=\"{:.1}\" y2=\"{yy:.1}\" class=\"grid\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"end\">{}</text>",
            left + plot_w,
            left - 5.0,
            yy + 4.0,
            esc(&(y.fmt)(*t))
        );
    }
    for t in &mx.ticks {
        let xx = px(*t);
        let _ = write!(
            s,
            "<line x1=\"{xx:.1}\" y1=\"{top:.1}\" x2=\"{xx:.1}\" y2=\"{bottom:.1}\" class=\"grid\"/>\
             <text x=\"{xx:.1}\" y=\"{:.1}\" class=\"tick\" text-anchor=\"middle\">{}</text>",
            bottom + 14.0,
            esc(&(x.fmt)(*t))
        );
    }
    let _ = write!(
        s,
        "<rect x=\"{left:.1}\" y=\"{top:.1}\" width=\"{plot_w:.1}\" height=\"{plot_h:.1}\" class=\"frame\"/>"
    );
    for (i, ser) in series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        // Past the palette's eight colours, lines differ by dash pattern too.
        let dash = match LINE_DASHES[(i / PALETTE.len()) % LINE_DASHES.len()] {
            "" => String::new(),
            d => format!(" stroke-dasharray=\"{d}\""),
        };
        let valid = |p: &&(f64, f64)| {
            p.0.is_finite() && p.1.is_finite() && (y.scale != Scale::Log || p.1 > 0.0)
        };
        let d: Vec<String> = ser
            .points
            .iter()
            .filter(valid)
            .map(|p| format!("{:.1},{:.1}", px(p.0), py(p.1)))
            .collect();
        if d.is_empty() {
            continue;
        }
        let _ = write!(
            s,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{color}\"{dash} class=\"line\"><title>{}</title></polyline>",
            d.join(" "),
            esc(&ser.name)
        );
        if d.len() <= 24 {
            for (j, p) in ser.points.iter().enumerate().filter(|(_, p)| valid(p)) {
                let _ = write!(
                    s,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\" fill=\"{color}\"/>",
                    px(p.0),
                    py(p.1)
                );
                if let Some(text) = ser.labels.get(j) {
                    let _ = write!(
                        s,
                        "<text x=\"{:.1}\" y=\"{:.1}\" class=\"pt\">{}</text>",
                        px(p.0) + 4.0,
                        py(p.1) + 12.0,
                        esc(text)
                    );
                }
            }
        }
        let (lx, ly) = (
            left + (i % 3) as f64 * (plot_w / 3.0),
            bottom + 52.0 + 18.0 * (i / 3) as f64,
        );
        let sy = ly - 4.0;
        let _ = write!(
            s,
            "<line x1=\"{lx:.1}\" y1=\"{sy:.1}\" x2=\"{:.1}\" y2=\"{sy:.1}\" stroke=\"{color}\" stroke-width=\"3\"{dash}/>\
             <text x=\"{:.1}\" y=\"{ly:.1}\" class=\"lbl\">{}</text>",
            lx + 14.0,
            lx + 18.0,
            esc(&shorten(&ser.name, 34))
        );
    }
    for m in marks {
        match m {
            Mark::HLine { y: v, label } => {
                let yy = py(*v);
                let _ = write!(
                    s,
                    "<line x1=\"{left:.1}\" y1=\"{yy:.1}\" x2=\"{:.1}\" y2=\"{yy:.1}\" class=\"limit\"/>\
                     <text x=\"{:.1}\" y=\"{:.1}\" class=\"lbl limit-t\">{}</text>",
                    left + plot_w,
                    left + 4.0,
                    yy - 4.0,
                    esc(label)
                );
            }
            Mark::Point {
                x: xv,
                y: yv,
                label,
            } => {
                let (xx, yy) = (px(*xv), py(*yv));
                let _ = write!(
                    s,
                    "<circle cx=\"{xx:.1}\" cy=\"{yy:.1}\" r=\"6\" class=\"mark\"/>\
                     <text x=\"{:.1}\" y=\"{:.1}\" class=\"lbl\" text-anchor=\"end\">{}</text>",
                    xx - 8.0,
                    yy - 8.0,
                    esc(label)
                );
            }
            Mark::VLine { x: xv, label } => {
                let xx = px(*xv);
                let _ = write!(
                    s,
                    "<line x1=\"{xx:.1}\" y1=\"{top:.1}\" x2=\"{xx:.1}\" y2=\"{bottom:.1}\" class=\"limit\"/>\
                     <text x=\"{:.1}\" y=\"{:.1}\" class=\"lbl limit-t\">{}</text>",
                    xx + 4.0,
                    top + 14.0,
                    esc(label)
                );
            }
        }
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" class=\"axis\" text-anchor=\"middle\">{}</text>\
         <text x=\"14\" y=\"{:.1}\" class=\"axis\" text-anchor=\"middle\" transform=\"rotate(-90 14 {:.1})\">{}</text></svg>",
        left + plot_w / 2.0,
        bottom + 32.0,
        esc(x.label),
        top + plot_h / 2.0,
        top + plot_h / 2.0,
        esc(y.label)
    );
    s
}

pub(crate) fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('…');
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round() {
        let l = LinearScale::new(0.0, 1437.0);
        assert_eq!(l.ticks(), vec![0.0, 500.0, 1000.0, 1500.0]);
        let m = Mapped::new(Scale::Log, [120_000.0, 4_000_000.0].into_iter());
        assert_eq!(m.ticks, vec![1e5, 1e6, 1e7]);
        assert!((nines(99.0) - 2.0).abs() < 1e-12);
    }

    #[test]
    fn lines_past_the_palette_are_dashed_in_the_plot_and_the_legend() {
        let fmt = |v: f64| format!("{v}");
        let axis = Axis {
            label: "x",
            scale: Scale::Linear,
            fmt: &fmt,
        };
        let series: Vec<Series> = (0..10)
            .map(|i| Series {
                name: format!("s{i}"),
                points: vec![(0.0, i as f64), (1.0, i as f64 + 1.0)],
                labels: Vec::new(),
            })
            .collect();
        let svg = line_chart("t", &axis, &axis, &series, &[]);
        let lines: Vec<&str> = svg.split("<polyline").skip(1).collect();
        assert_eq!(lines.len(), 10);
        assert!(lines[..8].iter().all(|l| !l.contains("stroke-dasharray")));
        assert!(
            lines[8..]
                .iter()
                .all(|l| l.contains("stroke-dasharray=\"7 3\""))
        );
        // Series 0 and 8 share a colour; the legend tells them apart by the same dash.
        assert_eq!(svg.matches("stroke-dasharray=\"7 3\"").count(), 4);
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(esc("<a & \"b\">"), "&lt;a &amp; &quot;b&quot;&gt;");
        let svg = bar_chart(
            "t<",
            "x",
            &[Bar {
                label: "a&b".into(),
                value: 1.0,
                ci: Some((0.5, 1.5)),
                text: "1".into(),
            }],
            &|v| format!("{v}"),
        );
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(!svg.contains("a&b") && !svg.contains("http"));
    }
}

//! Pure exporters: a result model in, bytes out. No measuring here.
//!
//! `load` reads and checks the inputs; `document` turns them into format-neutral blocks
//! that `html` and `markdown` render; `csv` writes one row per test × run; `compare`
//! matches two result files (`settings`: what each recorded about how a test was measured);
//! `svg` and `charts` draw the inline charts; `state` adds the drive's state (steady-state
//! rounds, temperature).

pub mod age;
pub mod blocks;
pub mod charts;
pub mod compare;
pub mod copy;
pub mod csv;
pub mod dist;
pub mod document;
pub mod files;
pub mod heatmap;
pub mod history;
pub mod html;
pub mod info;
pub mod load;
pub mod markdown;
pub mod matrix;
pub mod matrix_table;
pub mod metrics;
pub mod saturate;
pub mod settings;
pub mod slack;
pub mod state;
pub mod sustain;
pub mod svg;
pub mod table;
pub mod trace;

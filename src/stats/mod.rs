//! Pure statistics: summaries of repeated runs, confidence intervals, outliers, latency
//! histograms, comparisons of two means. No I/O and no printing here.

pub mod changepoint;
pub mod compare;
pub mod hist;
pub mod summary;

pub use summary::{summarize, t_critical_95};

//! Pure statistics: summaries of repeated runs, confidence intervals, outliers, latency
//! histograms, comparisons of two means, change points in a throughput series (`changepoint`)
//! and steady-state rules (`steady`: SNIA PTS, fio `--steadystate`; `steady_rounds`: the
//! round bookkeeping of `--steadystate`). No I/O and no printing here.

pub mod changepoint;
pub mod compare;
pub mod hist;
pub mod shift;
pub mod steady;
pub mod steady_rounds;
pub mod summary;

pub use summary::{summarize, t_critical_95};

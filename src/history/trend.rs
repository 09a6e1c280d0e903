//! `trend`: one test's figure on one device over time (the figure the run's own table gives:
//! `Figure::value`), each point with the 95 % interval of its mean, and the points where the
//! level changed significantly (`stats::shift` over the results' means: the change points of
//! `stats::changepoint`, each confirmed by Welch's t-test as in `iolab compare`).

use crate::error::UsageError;
use crate::report::metrics::{Better, direction};
use crate::stats::shift::shifts;

use super::{Filter, History, Trend, TrendPoint, TrendQuery};

/// Up to this many names in a "did you mean" list.
const NAMES_SHOWN: usize = 8;

fn names(list: &[String]) -> String {
    let mut s = list
        .iter()
        .take(NAMES_SHOWN)
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ");
    if list.len() > NAMES_SHOWN {
        s.push_str(&format!(" and {} more", list.len() - NAMES_SHOWN));
    }
    s
}

impl History {
    /// The device `q` names: every device whose identity contains it (or whose kernel name,
    /// serial or WWN it is); exactly one must match.
    pub fn resolve_device(&self, q: &str) -> anyhow::Result<String> {
        let all = self.devices()?;
        if let Some((d, _)) = all.iter().find(|(d, _)| d == q) {
            return Ok(d.clone());
        }
        let filter = Filter {
            device: Some(q.to_string()),
            ..Default::default()
        };
        let mut matching: Vec<String> = self.list(&filter)?.into_iter().map(|e| e.device).collect();
        matching.sort();
        matching.dedup();
        match matching.len() {
            1 => Ok(matching.remove(0)),
            0 => {
                let known: Vec<String> = all.into_iter().map(|(d, _)| d).collect();
                Err(UsageError(format!(
                    "no results for device '{q}' in {}; devices with results: {}",
                    self.path().display(),
                    if known.is_empty() {
                        "none (the history is empty)".into()
                    } else {
                        names(&known)
                    }
                ))
                .into())
            }
            _ => Err(UsageError(format!(
                "--device '{q}' matches {} devices: {}; name one (a serial, a model, a kernel name)",
                matching.len(),
                names(&matching)
            ))
            .into()),
        }
    }

    /// A test's figure over time on one device; see the module doc.
    pub fn trend(&self, q: &TrendQuery) -> anyhow::Result<Trend> {
        let device = self.resolve_device(&q.device)?;
        let tests = self.tests(&device)?;
        let test_names: Vec<String> = tests.iter().map(|(t, _)| t.clone()).collect();
        let test = match q.test.as_deref() {
            None => test_names.first().cloned().ok_or_else(|| {
                UsageError(format!("no test with figures on '{device}' in the history"))
            })?,
            Some(want) => pick(want, &test_names, "test", &device)?,
        };
        let metrics = self.metrics(&device, &test)?;
        let metric = match q.metric.as_deref() {
            None => metrics.first().cloned().ok_or_else(|| {
                UsageError(format!(
                    "no figures of '{test}' on '{device}' in the history"
                ))
            })?,
            Some(m) if metrics.iter().any(|x| x == m) => m.to_string(),
            Some(m) => {
                return Err(UsageError(format!(
                    "no metric '{m}' for '{test}' on '{device}'; it has: {}",
                    names(&metrics)
                ))
                .into());
            }
        };
        let series = self.series(&device, &test, &metric)?;
        // The figure each run's table gives, and the means the change test compares (as
        // `iolab compare`, which tests means).
        let values: Vec<f64> = series.iter().map(|r| r.figure.value).collect();
        let means: Vec<f64> = series.iter().map(|r| r.figure.mean).collect();
        let found = shifts(&means);
        let points = series
            .iter()
            .enumerate()
            .map(|(i, row)| {
                let f = &row.figure;
                let shift = found.iter().find(|s| s.at == i);
                let prev = i.checked_sub(1).map(|j| values[j]);
                TrendPoint {
                    id: row.id,
                    started_at: row.started_at.clone(),
                    status: (row.status != "complete").then(|| row.status.clone()),
                    value: f.value,
                    n: f.n,
                    ci_low: (f.n >= 2).then_some(f.ci95_low),
                    ci_high: (f.n >= 2).then_some(f.ci95_high),
                    significant_change: shift.is_some(),
                    change_pct: prev
                        .filter(|p| *p != 0.0)
                        .map(|p| (f.value / p - 1.0) * 100.0),
                    level_change_pct: shift.map(|s| s.change_pct),
                    p_value: shift.map(|s| s.p),
                }
            })
            .collect();
        // The newest result's command names the figure as its own table does (a trace's
        // `iops` are ops/s: they count open, stat and fsync too).
        let command = series.last().map(|r| r.command.clone()).unwrap_or_default();
        let value_of = series
            .last()
            .map(|r| r.figure.value_of.clone())
            .unwrap_or_else(|| "median".into());
        Ok(Trend {
            device,
            test,
            higher_is_better: direction(&metric) == Better::Higher,
            metric_label: crate::report::metrics::label_for(&command, &metric),
            value_of,
            command,
            metric,
            points,
        })
    }
}

/// `want` among `names`: exact, then the same ignoring case, then the one name containing
/// it; otherwise a usage error listing the names.
fn pick(want: &str, names_: &[String], what: &str, device: &str) -> Result<String, UsageError> {
    if let Some(n) = names_.iter().find(|n| *n == want) {
        return Ok(n.clone());
    }
    if let Some(n) = names_.iter().find(|n| n.eq_ignore_ascii_case(want)) {
        return Ok(n.clone());
    }
    let lw = want.to_lowercase();
    let part: Vec<String> = names_
        .iter()
        .filter(|n| n.to_lowercase().contains(&lw))
        .cloned()
        .collect();
    match part.len() {
        1 => Ok(part[0].clone()),
        0 => Err(UsageError(format!(
            "no {what} '{want}' on '{device}'; it has: {}",
            names(names_)
        ))),
        _ => Err(UsageError(format!(
            "--{what} '{want}' matches {} {what}s on '{device}': {}; name one",
            part.len(),
            names(&part)
        ))),
    }
}

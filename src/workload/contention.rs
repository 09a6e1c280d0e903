//! Warning `cpu-contention` for the families that time work on a thread of their own (files,
//! copy, trace run and replay, age): the thread waited for a CPU over a tenth of a run
//! (`os::cpu_wait`), so every time it took includes that wait. Given once per test, with
//! the highest figure of its runs so far (as `iolab run` gives it).

use crate::model::{ResultDoc, RunResult, TestResult, Warning, WarningCode};
use crate::os::cpu_wait::{CPU_CONTENTION_PCT, Waiter, message};

/// The warning of `waiter` in test `t` when a run's figure (`of`: the family's optional
/// field) is over the limit, with the highest of them.
pub fn warning(
    t: &TestResult,
    of: fn(&RunResult) -> Option<f64>,
    waiter: &Waiter,
) -> Option<Warning> {
    let pct = t.runs.iter().filter_map(of).reduce(f64::max);
    warning_of(&t.name, pct, waiter)
}

/// The warning of `waiter` in test `test` when its figure `pct` (the highest of the test's
/// threads or runs) is over the limit: for a family that keeps one figure per test (age).
pub fn warning_of(test: &str, pct: Option<f64>, waiter: &Waiter) -> Option<Warning> {
    let pct = pct.filter(|&p| p > CPU_CONTENTION_PCT)?;
    Some(Warning {
        code: WarningCode::CpuContention,
        message: message(waiter, pct),
        test: Some(test.to_string()),
    })
}

/// `warning` of test `test` of `doc`, replacing one given before for the same test.
pub fn warn(doc: &mut ResultDoc, test: usize, of: fn(&RunResult) -> Option<f64>, waiter: &Waiter) {
    let Some(w) = warning(&doc.tests[test], of, waiter) else {
        return;
    };
    doc.warnings
        .retain(|o| !(o.code == WarningCode::CpuContention && o.test == w.test));
    doc.warn(w);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TestResult;
    use crate::model::files::FilesRunDetail;

    /// Once per test, with the highest figure of its runs; nothing at or under the limit.
    #[test]
    fn the_test_is_warned_of_once_with_its_highest_wait() {
        let run = |pct: f64| RunResult {
            files: Some(FilesRunDetail {
                cpu_wait_pct: Some(pct),
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut doc = ResultDoc::new("files", Vec::new(), Default::default());
        doc.tests.push(TestResult {
            name: "4K create".into(),
            runs: vec![run(3.0), run(10.0)],
            ..Default::default()
        });
        let of = |r: &RunResult| r.files.as_ref()?.cpu_wait_pct;
        let waiter = Waiter {
            who: "the measuring thread",
            threads: 1,
            fewer: crate::os::cpu_wait::Fewer::Jobs,
            effect: "its times include that wait",
            advice: "measure on an idle machine",
        };
        warn(&mut doc, 0, of, &waiter);
        assert!(doc.warnings.is_empty(), "{:?}", doc.warnings);
        doc.tests[0].runs.push(run(23.4));
        warn(&mut doc, 0, of, &waiter);
        doc.tests[0].runs.push(run(41.0));
        warn(&mut doc, 0, of, &waiter);
        assert_eq!(doc.warnings.len(), 1, "{:?}", doc.warnings);
        let w = &doc.warnings[0];
        assert_eq!(w.code, WarningCode::CpuContention);
        assert_eq!(w.test.as_deref(), Some("4K create"));
        assert!(
            w.message
                .starts_with("the measuring thread waited 41 % of the run for a CPU"),
            "{}",
            w.message
        );
    }
}

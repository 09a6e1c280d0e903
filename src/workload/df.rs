//! df's used space as evidence: how far it may move during a phase before another program's
//! writes, not the phase's, are the likelier cause. One rule for `iolab copy` (its write
//! phase) and `iolab files` (its create phase), and one warning, said once per test.

use crate::model::{ResultDoc, Warning, WarningCode};
use crate::units::fmt_size_iec;

/// Slack for df over a phase beyond what the phase explains: other file-system work
/// (journal commits, a log's checkpoint) stays under it.
pub const DF_SLACK: u64 = 16 << 20;

/// df's used space grew by `delta` during a phase whose own files hold `held`: more than
/// twice that plus [`DF_SLACK`] is another program writing to the same file system (a build
/// beside a 19 MiB copy made it read hundreds of MiB).
pub fn grew_beyond(delta: i64, held: u64) -> bool {
    delta
        > held
            .saturating_mul(2)
            .saturating_add(DF_SLACK)
            .min(i64::MAX as u64) as i64
}

/// Did the device write more during a phase than a phase whose files hold `held` (at least
/// its data) explains? [`grew_beyond`]'s rule on `/proc/diskstats`' written bytes (the
/// journal's checkpoint of the phase before stays under its slack): a 3-byte `iolab copy
/// --source` read a write amplification of thousands while a build wrote beside it, and a
/// writer that deletes as much as it writes leaves df alone but not the device.
pub fn device_wrote_beyond(written: u64, held: u64) -> bool {
    grew_beyond(written.min(i64::MAX as u64) as i64, held)
}

/// The `other-writers` warning of run `run` of `test`: df grew by `delta` `during` (what the
/// phase's files hold), so the space figures are not `whose` alone and are left out. Added
/// once per test.
pub fn warn_other_writers(
    doc: &mut ResultDoc,
    test: &str,
    run: u32,
    delta: i64,
    during: &str,
    whose: &str,
) {
    warn_other_writers_because(
        doc,
        test,
        &format!(
            "df's used space grew by {} in run {run} {during}",
            fmt_size_iec(delta.max(0) as u64)
        ),
        &format!("its space figures are not {whose} alone (left out)"),
    );
}

/// The `other-writers` warning of `test`, once per test: `evidence` (what moved by more
/// than the phase explains) shows another program at work, so `left_out` (the figures it
/// spoils).
pub fn warn_other_writers_because(doc: &mut ResultDoc, test: &str, evidence: &str, left_out: &str) {
    if doc
        .warnings
        .iter()
        .any(|o| o.code == WarningCode::OtherWriters && o.test.as_deref() == Some(test))
    {
        return;
    }
    doc.warn(Warning {
        code: WarningCode::OtherWriters,
        message: format!(
            "{evidence}: another program wrote to this file system, so {left_out}; measure on a file system nothing else writes to"
        ),
        test: Some(test.to_string()),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_and_its_warning_once_per_test() {
        const MIB: i64 = 1 << 20;
        assert!(!grew_beyond(2 * 100 * MIB + 16 * MIB, (100 * MIB) as u64));
        assert!(grew_beyond(
            2 * 100 * MIB + 16 * MIB + 1,
            (100 * MIB) as u64
        ));
        assert!(!grew_beyond(-5 * MIB, 0));
        assert!(!grew_beyond(i64::MAX, u64::MAX));
        // The device's written bytes, by the same rule: 3 bytes and the journal's commit
        // (44 KiB) are the phase's; 300 MiB beside them are not.
        assert!(!device_wrote_beyond(45_056, 3));
        assert!(!device_wrote_beyond(
            (2 * 19 + 16) * MIB as u64,
            19 * MIB as u64
        ));
        assert!(device_wrote_beyond(
            (2 * 19 + 16) * MIB as u64 + 1,
            19 * MIB as u64
        ));
        assert!(device_wrote_beyond(300 * MIB as u64, 3));
        assert!(!device_wrote_beyond(u64::MAX, u64::MAX));
        let mut doc = ResultDoc::new("files", Vec::new(), Default::default());
        for run in 1..=3 {
            warn_other_writers(&mut doc, "4K create", run, 500 * MIB, "x", "the files'");
        }
        warn_other_writers(&mut doc, "8K create", 2, 500 * MIB, "x", "the files'");
        let said: Vec<_> = doc
            .warnings
            .iter()
            .map(|w| w.test.clone().unwrap())
            .collect();
        assert_eq!(said, ["4K create", "8K create"]);
        assert!(
            doc.warnings[0].message.contains("500.0 MiB in run 1"),
            "{}",
            doc.warnings[0].message
        );
    }
}

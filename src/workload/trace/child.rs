//! Waiting for a traced program: a stop signal iolab alone received is passed on to it
//! (a leaf, shared by both recorders: `record.rs` and `tracepoints/`).

use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

/// How long after iolab's own stop signal the traced program still running gets it too.
const PASS_ON_AFTER: Duration = Duration::from_secs(1);

/// Wait for `child`, passing on a stop signal that iolab alone received (`kill PID`,
/// `timeout`, a service manager): the processes `targets(child pid)` names get the same
/// signal once, if they still run `PASS_ON_AFTER` after it. A Ctrl-C at the terminal reaches
/// the whole process group, the program included, which has usually ended by then; before,
/// iolab waited for the program to end on its own (a 12 s loop ran to its end).
pub(super) fn wait_passing_on(
    child: &mut Child,
    stop: &crate::os::signals::StopFlag,
    targets: &dyn Fn(i32) -> Vec<i32>,
) -> std::io::Result<ExitStatus> {
    let mut since: Option<Instant> = None;
    let mut passed = false;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        if let Some(sig) = stop.signal()
            && !passed
        {
            let t = *since.get_or_insert_with(Instant::now);
            if t.elapsed() >= PASS_ON_AFTER {
                passed = true;
                for pid in targets(child.id() as i32) {
                    // SAFETY: kill(2) with a pid we read and a plain signal number.
                    unsafe {
                        libc::kill(pid, sig);
                    }
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

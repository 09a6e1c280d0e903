//! Entries of the CPUs into idle states, from the cpuidle counters
//! (`/sys/devices/system/cpu/cpuN/cpuidle/stateM/usage`). Polling states (`POLL`) are left
//! out: what is counted are the states a CPU has to be woken from — a halt on a VM (each
//! wake-up a round trip through the host), a C-state on bare metal (each with its exit
//! latency). At queue depth 1 those wake-ups sit inside the I/Os' latency.

use std::path::Path;

/// Sum over all CPUs of their entries into non-polling idle states since boot; `None` when
/// the kernel exposes no cpuidle counters (no cpuidle driver, some containers).
pub fn idle_entries() -> Option<u64> {
    idle_entries_in(Path::new("/sys/devices/system/cpu"))
}

/// The same under `root` (a copy of `/sys/devices/system/cpu`, for tests).
pub fn idle_entries_in(root: &Path) -> Option<u64> {
    let mut total = 0u64;
    let mut found = false;
    for cpu in std::fs::read_dir(root).ok()?.flatten() {
        let name = cpu.file_name();
        let name = name.to_string_lossy();
        let Some(n) = name.strip_prefix("cpu") else {
            continue;
        };
        if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(states) = std::fs::read_dir(cpu.path().join("cpuidle")) else {
            continue;
        };
        for state in states.flatten() {
            if !state.file_name().to_string_lossy().starts_with("state") {
                continue;
            }
            let p = state.path();
            let Ok(kind) = std::fs::read_to_string(p.join("name")) else {
                continue;
            };
            let Some(usage) = std::fs::read_to_string(p.join("usage"))
                .ok()
                .and_then(|u| u.trim().parse::<u64>().ok())
            else {
                continue;
            };
            found = true;
            if kind.trim() != "POLL" {
                total = total.saturating_add(usage);
            }
        }
    }
    found.then_some(total)
}

/// Idle-state entries per I/O over a run: `entries` counted over `secs` of wall time
/// (setup and ramp included) against the run's measured rate `iops`.
pub fn per_io(entries: u64, secs: f64, iops: f64) -> Option<f64> {
    (secs > 0.0 && iops > 0.0).then(|| entries as f64 / (iops * secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(root: &Path, cpu: &str, state: &str, name: &str, usage: &str) {
        let d = root.join(cpu).join("cpuidle").join(state);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("name"), format!("{name}\n")).unwrap();
        std::fs::write(d.join("usage"), format!("{usage}\n")).unwrap();
    }

    #[test]
    fn sums_every_cpu_but_not_polling_states() {
        let t = tempfile::tempdir().unwrap();
        state(t.path(), "cpu0", "state0", "POLL", "1000");
        state(t.path(), "cpu0", "state1", "haltpoll idle", "7");
        state(t.path(), "cpu1", "state0", "POLL", "5");
        state(t.path(), "cpu1", "state1", "C1", "11");
        state(t.path(), "cpu1", "state2", "C6", "3");
        // Not CPUs, or not states: ignored.
        std::fs::create_dir_all(t.path().join("cpuidle")).unwrap();
        state(t.path(), "cpufreq", "state1", "C1", "100");
        std::fs::write(t.path().join("cpu1/cpuidle/driver"), "x").unwrap();
        assert_eq!(idle_entries_in(t.path()), Some(21));
    }

    #[test]
    fn none_without_counters_and_zero_with_only_polling() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("cpu0")).unwrap();
        assert_eq!(idle_entries_in(t.path()), None);
        assert_eq!(idle_entries_in(&t.path().join("missing")), None);
        state(t.path(), "cpu0", "state0", "POLL", "9");
        assert_eq!(idle_entries_in(t.path()), Some(0));
    }

    #[test]
    fn per_io_is_entries_over_the_ios_at_the_runs_rate() {
        assert_eq!(per_io(30_000, 2.0, 20_000.0), Some(0.75));
        assert_eq!(per_io(5, 0.0, 20_000.0), None);
        assert_eq!(per_io(5, 1.0, 0.0), None);
    }
}

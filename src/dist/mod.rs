//! Multi-host runs over MPI (cargo feature `mpi`): `mpirun -np N --hostfile H iolab run ...`
//! (or Slurm's `srun`) runs `iolab run` on every rank, each in its own subdirectory of the
//! shared target; the ranks start every run together, stop together (stonewall), and rank 0
//! writes one result with the totals and a `hosts[]` row per rank.
//!
//! What needs no MPI is always compiled (launcher detection, aggregation, the per-host
//! table), so it is tested in the plain build; the MPI plumbing is behind the feature.

pub mod aggregate;
pub mod sweep;

#[cfg(feature = "mpi")]
pub mod clock;
#[cfg(feature = "mpi")]
pub mod files;
#[cfg(feature = "mpi")]
pub mod hooks;
#[cfg(feature = "mpi")]
pub mod run;
#[cfg(feature = "mpi")]
pub mod saturate;
#[cfg(feature = "mpi")]
pub mod session;

/// One rank's clock against rank 0's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClockOffset {
    /// This rank's clock minus rank 0's.
    pub offset_ns: i64,
    /// The round trip the estimate came from; the estimate is good to half of it.
    pub rtt_ns: i64,
}

impl ClockOffset {
    /// The estimate halfway between two (a clock drifting linearly), good to the worse of
    /// the two round trips.
    pub fn midpoint(a: &ClockOffset, b: &ClockOffset) -> ClockOffset {
        ClockOffset {
            offset_ns: a.offset_ns + (b.offset_ns - a.offset_ns) / 2,
            rtt_ns: a.rtt_ns.max(b.rtt_ns),
        }
    }

    /// The offsets for a window measured between the estimate `kept` holds and `latest`:
    /// halfway between the two, rank by rank; `kept` holds `latest` from then on.
    pub fn across_window(
        kept: &std::cell::RefCell<Vec<ClockOffset>>,
        latest: &[ClockOffset],
    ) -> Vec<ClockOffset> {
        let before = kept.replace(latest.to_vec());
        before
            .iter()
            .zip(latest)
            .map(|(b, a)| ClockOffset::midpoint(b, a))
            .collect()
    }
}

/// This process's place in a parallel launch, as the launcher's environment tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launch {
    pub size: u32,
    pub rank: u32,
    /// Which variables said so: `Open MPI`, `PMI` (MPICH, Slurm `srun --mpi=pmi2`), `Slurm`.
    pub launcher: &'static str,
}

/// Read a launch from environment variables (`get` is `std::env::var` outside tests).
pub fn launch_from(get: impl Fn(&str) -> Option<String>) -> Option<Launch> {
    let num = |k: &str| get(k).and_then(|v| v.trim().parse::<u32>().ok());
    let pairs: [(&str, &str, &'static str); 3] = [
        ("OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "Open MPI"),
        ("PMI_SIZE", "PMI_RANK", "PMI"),
        // Inside an `srun` job step (not merely inside an allocation: SLURM_STEP_ID).
        ("SLURM_STEP_NUM_TASKS", "SLURM_PROCID", "Slurm"),
    ];
    for (size_var, rank_var, launcher) in pairs {
        if launcher == "Slurm" && get("SLURM_STEP_ID").is_none() {
            continue;
        }
        if let Some(size) = num(size_var) {
            return Some(Launch {
                size,
                rank: num(rank_var).unwrap_or(0),
                launcher,
            });
        }
    }
    None
}

/// This process's launch, if it was started by mpirun/mpiexec/srun.
pub fn launched() -> Option<Launch> {
    launch_from(|k| std::env::var(k).ok())
}

/// The measuring subcommands that run distributed under a parallel launch.
pub const DISTRIBUTED: &[&str] = &["run", "saturate", "files"];

/// Refuse, before anything is created, what cannot work under a parallel launch with several
/// ranks: a build without MPI, or a subcommand that does not run distributed (N copies of it
/// would measure each other). `measures`: the subcommand measures a target.
pub fn check_launch(
    subcommand: &str,
    measures: bool,
    launch: Option<Launch>,
) -> Result<(), crate::error::UsageError> {
    let Some(l) = launch.filter(|l| l.size > 1) else {
        return Ok(());
    };
    if !cfg!(feature = "mpi") {
        return Err(crate::error::UsageError::new(format!(
            "started by a parallel launcher ({}, {} ranks), but this iolab was built without MPI: rebuild with `cargo build --release --features mpi`, or start it without mpirun/srun",
            l.launcher, l.size
        )));
    }
    if measures && !DISTRIBUTED.contains(&subcommand) {
        return Err(crate::error::UsageError::new(format!(
            "iolab {subcommand} does not run distributed yet (only `iolab run`, `iolab saturate` and `iolab files` do): start it without mpirun/srun ({} ranks would measure each other)",
            l.size
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn a_stonewall_stops_workers_without_an_interrupt() {
        let f = crate::os::signals::StopFlag::new();
        f.stonewall();
        assert!(f.is_set());
        assert_eq!(f.signal(), None);
        assert!(f.check().is_ok());
        // A real signal afterwards still counts as an interrupt.
        f.raise(libc::SIGINT);
        assert_eq!(f.signal(), Some(libc::SIGINT));
        // A stonewall never hides a signal raised before it.
        let g = crate::os::signals::StopFlag::new();
        g.raise(libc::SIGTERM);
        g.stonewall();
        assert_eq!(g.signal(), Some(libc::SIGTERM));
    }

    #[test]
    fn clock_midpoint() {
        let a = ClockOffset {
            offset_ns: -1000,
            rtt_ns: 50,
        };
        let b = ClockOffset {
            offset_ns: 3000,
            rtt_ns: 80,
        };
        assert_eq!(
            ClockOffset::midpoint(&a, &b),
            ClockOffset {
                offset_ns: 1000,
                rtt_ns: 80
            }
        );
    }

    #[test]
    fn launchers_are_recognized() {
        assert_eq!(launch_from(env(&[])), None);
        let l = launch_from(env(&[
            ("OMPI_COMM_WORLD_SIZE", "4"),
            ("OMPI_COMM_WORLD_RANK", "3"),
        ]));
        assert_eq!(
            l,
            Some(Launch {
                size: 4,
                rank: 3,
                launcher: "Open MPI"
            })
        );
        let l = launch_from(env(&[("PMI_SIZE", "2"), ("PMI_RANK", "1")])).unwrap();
        assert_eq!((l.size, l.rank, l.launcher), (2, 1, "PMI"));
        // A batch script inside an allocation is not a parallel launch.
        assert_eq!(
            launch_from(env(&[("SLURM_STEP_NUM_TASKS", "8"), ("SLURM_PROCID", "0")])),
            None
        );
        let l = launch_from(env(&[
            ("SLURM_STEP_NUM_TASKS", "8"),
            ("SLURM_PROCID", "5"),
            ("SLURM_STEP_ID", "0"),
        ]))
        .unwrap();
        assert_eq!((l.size, l.rank), (8, 5));
    }

    #[test]
    fn single_rank_or_no_launcher_is_a_plain_run() {
        assert!(check_launch("copy", true, None).is_ok());
        let one = Launch {
            size: 1,
            rank: 0,
            launcher: "Open MPI",
        };
        assert!(check_launch("copy", true, Some(one)).is_ok());
    }

    #[test]
    fn several_ranks_need_mpi_and_a_distributed_subcommand() {
        let two = Some(Launch {
            size: 2,
            rank: 0,
            launcher: "Open MPI",
        });
        let run = check_launch("run", true, two);
        let saturate = check_launch("saturate", true, two);
        let files = check_launch("files", true, two);
        let copy = check_launch("copy", true, two).unwrap_err().to_string();
        assert!(check_launch("info", false, two).is_ok() || !cfg!(feature = "mpi"));
        if cfg!(feature = "mpi") {
            assert!(run.is_ok() && saturate.is_ok() && files.is_ok());
            assert!(copy.contains("only `iolab run`"), "{copy}");
        } else {
            let e = run.unwrap_err().to_string();
            assert!(e.contains("built without MPI"), "{e}");
            let e = saturate.unwrap_err().to_string();
            assert!(e.contains("built without MPI"), "{e}");
            let e = files.unwrap_err().to_string();
            assert!(e.contains("built without MPI"), "{e}");
            assert!(copy.contains("built without MPI"), "{copy}");
        }
    }
}

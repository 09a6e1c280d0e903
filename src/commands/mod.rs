//! One module per subcommand: the glue between a validated config, the runners and the
//! reports. `app.rs` dispatches here.

pub mod age;
pub mod compare;
pub mod copy;
pub mod family;
pub mod files;
pub mod files_jobs;
pub mod history;
pub mod info;
pub mod matrix;
pub mod report;
pub mod run;
pub mod saturate;
pub mod serve;
pub mod slack;
pub mod sustain;
pub mod trace;
pub mod workloads;

/// Placeholder for a subcommand that is not built yet: a clear error, exit 1.
pub fn not_yet(name: &str) -> anyhow::Result<i32> {
    anyhow::bail!("`iolab {name}` is not implemented in this build yet")
}

//! Facts about the running process that every layer may ask: privilege. At the bottom of
//! the import order (with `units` and `error`), so that asking does not tie layers together.
//! `signals`: the stop flag every worker checks, set by SIGINT/SIGTERM/SIGHUP; `progress`:
//! how a run shows its progress on stderr (bars, lines, the JSON stream of the web console);
//! `context`: `RunContext`, the stop flag, progress mode and seed every measuring code gets;
//! `activity`: which block test is being measured now (for the heat watch's thread).

pub mod activity;
pub mod context;
pub mod progress;
pub mod signals;

/// Is the effective user root? (Loop devices, mounts, dropping caches, other users' files.)
pub fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

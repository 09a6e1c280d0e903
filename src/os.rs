//! Facts about the running process that every layer may ask: privilege. At the bottom of
//! the import order (with `units` and `error`), so that asking does not tie layers together.
//! `signals`: the stop flag every worker checks, set by SIGINT/SIGTERM/SIGHUP; `progress`:
//! how a run shows its progress on stderr (bars, lines, the JSON stream of the web console);
//! `context`: `RunContext`, the stop flag, progress mode and seed every measuring code gets;
//! `cpu_wait`: a thread's wait for a CPU (schedstat) and warning `cpu-contention`'s text;
//! `activity`: which block test is being measured now (for the heat watch's thread);
//! `text`: outside text (names, paths, labels) made safe for the terminal; and `dir_of`,
//! the directory a file path is in.

pub mod activity;
pub mod context;
pub mod cpu_wait;
pub mod progress;
pub mod signals;
pub mod text;

/// The directory a file path is in: its parent, or `.` for a bare file name (whose parent
/// Rust gives as the empty path, which no system call takes).
pub fn dir_of(file: &std::path::Path) -> &std::path::Path {
    file.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."))
}

/// Is the effective user root? (Loop devices, mounts, dropping caches, other users' files.)
pub fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn a_bare_file_name_is_in_the_current_directory() {
        for (file, dir) in [
            ("a.json", "."),
            ("d/a.json", "d"),
            ("/x/a", "/x"),
            ("/a", "/"),
        ] {
            assert_eq!(super::dir_of(Path::new(file)), Path::new(dir), "{file}");
        }
    }
}

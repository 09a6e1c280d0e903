//! Interrupt handling: SIGINT, SIGTERM and SIGHUP set a flag that every worker checks; the
//! run stops, saves what it measured, cleans up, and exits 130/143/129. A second signal a
//! second or more after a SIGINT or SIGTERM exits at once (the state file lets the next start
//! clean up); one that comes sooner is the same stop delivered twice (`timeout -s INT`
//! signals both the program and its process group) and only the first counts.

use std::path::Path;
use std::process::{Child, ExitStatus};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::error::Interrupted;

/// Shared stop flag: 0 = keep going, otherwise the signal number that stopped us.
/// `STONEWALL` marks a distributed run's stonewall: stop, but not as an interrupt.
#[derive(Clone, Debug, Default)]
pub struct StopFlag {
    signal: Arc<AtomicUsize>,
}

impl StopFlag {
    pub fn new() -> StopFlag {
        StopFlag::default()
    }

    /// Install handlers for SIGINT, SIGTERM and SIGHUP that set this flag (the first signal
    /// decides the exit code); a second signal at least `SAME_STOP` after a SIGINT or SIGTERM
    /// exits at once with 128 + signal.
    pub fn install(&self) -> std::io::Result<()> {
        // When the first SIGINT/SIGTERM came (CLOCK_MONOTONIC ns), 0 = none yet.
        let armed_at = Arc::new(AtomicU64::new(0));
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            let flag = Arc::clone(&self.signal);
            let armed_at = Arc::clone(&armed_at);
            // SAFETY: the action only loads and stores atomics, reads the monotonic clock
            // and may `_exit`: all async-signal-safe.
            unsafe {
                signal_hook::low_level::register(sig, move || on_signal(sig, &flag, &armed_at))?;
            }
        }
        Ok(())
    }

    #[inline]
    pub fn is_set(&self) -> bool {
        self.signal.load(Ordering::Relaxed) != 0
    }

    /// Stop without a signal (an error in one worker stops the others).
    pub fn raise(&self, sig: i32) {
        self.signal.store(sig as usize, Ordering::Relaxed);
    }

    /// Stop the workers without an interrupt (a distributed run's stonewall: another rank
    /// reached its limit first). `signal()` stays `None`, so the run ends normally with what
    /// it measured; a signal raised afterwards still wins.
    pub fn stonewall(&self) {
        let _ = self
            .signal
            .compare_exchange(0, STONEWALL, Ordering::Relaxed, Ordering::Relaxed);
    }

    pub fn signal(&self) -> Option<i32> {
        match self.signal.load(Ordering::Relaxed) {
            0 | STONEWALL => None,
            s => Some(s as i32),
        }
    }

    /// The error to return when the flag is set.
    pub fn check(&self) -> Result<(), Interrupted> {
        match self.signal() {
            None => Ok(()),
            Some(sig) => Err(Interrupted {
                signal: sig,
                signal_name: signal_name(sig),
            }),
        }
    }

    /// Sleep until `t` in slices of at most 50 ms, returning early once the flag is set (a
    /// signal or a stonewall), so a stop request is honoured quickly.
    pub fn sleep_until(&self, t: Instant) {
        loop {
            let now = Instant::now();
            if now >= t || self.is_set() {
                return;
            }
            std::thread::sleep((t - now).min(Duration::from_millis(50)));
        }
    }

    /// Sleep for `d`: the interruption as soon as a signal is seen, Ok after the whole time
    /// (or when a stonewall cut it short).
    pub fn sleep(&self, d: Duration) -> Result<(), Interrupted> {
        self.sleep_until(Instant::now() + d);
        self.check()
    }
}

const STONEWALL: usize = usize::MAX;

/// The variable that asks a process to stop itself when its parent goes away: the parent's
/// pid (`iolab serve` sets it for the tests it starts).
pub const PARENT_ENV: &str = "IOLAB_STOP_WITH_PARENT";

/// The variable `iolab serve` sets for the tests it starts: their stop comes from the
/// console's Stop button, which sends one SIGINT and never a second.
pub const CONSOLE_ENV: &str = "IOLAB_STARTED_BY_CONSOLE";

/// What a stop's first line adds on how to stop at once: a second SIGINT or SIGTERM a
/// second or more later. None after a SIGHUP (no terminal left to press Ctrl-C in) and in a
/// test the console started (its Stop sends no second signal: the hint promised what the
/// button does not do).
pub fn at_once_hint(sig: i32) -> Option<&'static str> {
    (sig != libc::SIGHUP && std::env::var_os(CONSOLE_ENV).is_none())
        .then_some("; Ctrl-C again, a second or more from now, exits at once without cleanup")
}

/// When `PARENT_ENV` names our parent, watch it on a thread: once the parent is gone (we
/// were re-parented), send ourselves one SIGINT, the Ctrl-C path (the partial result is
/// Whether this process has received a stop signal (any of them, ever): the parent watch
/// then sends none of its own.
static STOP_SEEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// What the parent watch does once the parent is gone: the Ctrl-C path, unless a stop is
/// already under way. (`iolab serve` stops its tests with SIGINT and waits a minute; a test
/// still draining its I/Os then saw the server gone and sent itself a second SIGINT, which
/// ended it at once, without cleanup.)
fn parent_gone_needs_a_stop() -> bool {
    !STOP_SEEN.load(Ordering::SeqCst)
}

/// A signal this soon after the first stop is the same stop delivered twice, not "stop now".
pub const SAME_STOP: Duration = Duration::from_secs(1);

/// What a second stop prints before it exits (the shell prompt came back with no word, the
/// work directory and lock still there), in pieces: the handler may not allocate. Between
/// them, what became of the result file (`ResultFile::at_once`).
const AT_ONCE_HEAD: &str =
    "\niolab: stopped at once (a second signal): no cleanup and no final result";
const AT_ONCE_TAIL: &str = "; the next iolab start removes what this run created\n";

/// The result file a measuring command claimed, as the "stop at once" exit needs it without
/// allocating: its path and its temporary copy's (leaked C strings), the inode of the empty
/// file claimed, and whether a document was saved into it since. A double Ctrl-C in a run's
/// first test left the claimed file empty (0 bytes) among the results.
pub struct ResultFile {
    path: AtomicPtr<libc::c_char>,
    tmp: AtomicPtr<libc::c_char>,
    ino: AtomicU64,
    saved: AtomicBool,
}

/// The process's one result file (a process writes at most one).
pub static RESULT_FILE: ResultFile = ResultFile::new();

impl ResultFile {
    pub const fn new() -> ResultFile {
        ResultFile {
            path: AtomicPtr::new(std::ptr::null_mut()),
            tmp: AtomicPtr::new(std::ptr::null_mut()),
            ino: AtomicU64::new(0),
            saved: AtomicBool::new(false),
        }
    }

    /// `path` was just created empty by this process (inode `ino`); its saves go through
    /// the temporary `tmp`. (Leaks the two strings: once per process.)
    pub fn claimed(&self, path: &Path, tmp: &Path, ino: u64) {
        use std::os::unix::ffi::OsStrExt;
        let c = |p: &Path| {
            std::ffi::CString::new(p.as_os_str().as_bytes())
                .map_or(std::ptr::null_mut(), std::ffi::CString::into_raw)
        };
        self.saved.store(false, Ordering::SeqCst);
        self.ino.store(ino, Ordering::SeqCst);
        self.tmp.store(c(tmp), Ordering::SeqCst);
        self.path.store(c(path), Ordering::SeqCst);
    }

    /// `path` existed before this process (`--output FILE.json` naming a file): the first
    /// save replaces it, and a stop at once before then leaves what it holds. (A double
    /// Ctrl-C said nothing of it.)
    pub fn existing(&self, path: &Path, tmp: &Path) {
        self.claimed(path, tmp, 0);
    }

    /// A document is in the file now: a stop at once leaves it.
    pub fn saved(&self) {
        self.saved.store(true, Ordering::SeqCst);
    }

    /// The "stop at once" exit's part: remove a temporary copy being written, and the result
    /// file if it is still the empty one claimed (no test had finished), and say through `say`
    /// what was or was not saved. Async-signal-safe: atomics, stat(2), unlink(2), `say`.
    pub fn at_once(&self, say: &mut dyn FnMut(&[u8])) {
        let path = self.path.load(Ordering::SeqCst);
        if path.is_null() {
            return;
        }
        let tmp = self.tmp.load(Ordering::SeqCst);
        // SAFETY: `path` and `tmp` are NUL-terminated strings leaked by `claimed` (never
        // freed); stat and unlink are async-signal-safe.
        unsafe {
            if !tmp.is_null() {
                libc::unlink(tmp);
            }
            let shown = std::ffi::CStr::from_ptr(path).to_bytes();
            if self.saved.load(Ordering::SeqCst) {
                say(b"; ");
                say(shown);
                say(b" keeps its last save (the tests finished before the stop, status running)");
                return;
            }
            if self.ino.load(Ordering::SeqCst) == 0 {
                say(b"; nothing saved (no test had finished): ");
                say(shown);
                say(b" still holds what it held before this run");
                return;
            }
            let mut st: libc::stat = std::mem::zeroed();
            let empty_ours = libc::stat(path, &mut st) == 0
                && st.st_ino == self.ino.load(Ordering::SeqCst)
                && st.st_size == 0;
            if empty_ours && libc::unlink(path) == 0 {
                say(b"; nothing saved (no test had finished): the empty result file ");
                say(shown);
                say(b" was removed");
            } else {
                say(b"; nothing saved in ");
                say(shown);
                say(b" (no test had finished)");
            }
        }
    }
}

impl Default for ResultFile {
    fn default() -> Self {
        ResultFile::new()
    }
}

/// The signal action: the first signal sets the flag (over a stonewall); a later one exits at
/// once when a SIGINT or SIGTERM came at least `SAME_STOP` before it.
fn on_signal(sig: i32, flag: &AtomicUsize, armed_at: &AtomicU64) {
    STOP_SEEN.store(true, Ordering::SeqCst);
    let now = monotonic_ns();
    let first = armed_at.load(Ordering::SeqCst);
    if exits_now(first, now) {
        // SAFETY: write(2) of a borrowed buffer is async-signal-safe; a failed write is moot.
        let mut say = |b: &[u8]| unsafe {
            libc::write(libc::STDERR_FILENO, b.as_ptr().cast(), b.len());
        };
        say(AT_ONCE_HEAD.as_bytes());
        RESULT_FILE.at_once(&mut say);
        say(AT_ONCE_TAIL.as_bytes());
        signal_hook::low_level::exit(128 + sig);
    }
    let current = flag.load(Ordering::SeqCst);
    if current == 0 || current == STONEWALL {
        let _ = flag.compare_exchange(current, sig as usize, Ordering::SeqCst, Ordering::SeqCst);
    }
    if first == 0 && sig != libc::SIGHUP {
        let _ = armed_at.compare_exchange(0, now.max(1), Ordering::SeqCst, Ordering::SeqCst);
    }
}

/// Whether a signal at `now_ns` is a second stop: a SIGINT or SIGTERM came at `armed_at_ns`
/// (0 = none), at least `SAME_STOP` before.
fn exits_now(armed_at_ns: u64, now_ns: u64) -> bool {
    armed_at_ns != 0 && now_ns.saturating_sub(armed_at_ns) >= SAME_STOP.as_nanos() as u64
}

/// CLOCK_MONOTONIC in nanoseconds (async-signal-safe, unlike `Instant::now` in principle).
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid pointer to a timespec; clock_gettime is async-signal-safe.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// saved, everything created is removed).
pub fn stop_when_parent_exits() {
    let Some(parent) = std::env::var(PARENT_ENV)
        .ok()
        .and_then(|v| v.parse::<i32>().ok())
    else {
        return;
    };
    let _ = std::thread::Builder::new()
        .name("parent-watch".into())
        .spawn(move || {
            loop {
                if nix::unistd::getppid().as_raw() != parent {
                    if !parent_gone_needs_a_stop() {
                        return;
                    }
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::this(),
                        nix::sys::signal::Signal::SIGINT,
                    );
                    return;
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        });
}

pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

/// How long after iolab's own stop signal the traced program still running gets it too.
const PASS_ON_AFTER: Duration = Duration::from_secs(1);

/// Wait for `child` (a program iolab runs for the user: `trace record`'s), passing on a
/// stop signal that iolab alone received (`kill PID`, `timeout`, a service manager): the
/// processes `targets(child pid)` names get the same signal once, if they still run
/// `PASS_ON_AFTER` after it. A Ctrl-C at the terminal reaches
/// the whole process group, the program included, which has usually ended by then; before,
/// iolab waited for the program to end on its own (a 12 s loop ran to its end).
pub fn wait_passing_on(
    child: &mut Child,
    stop: &StopFlag,
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

/// The processes `pid` started (its threads' children): strace's traced program.
pub fn children_of(pid: i32) -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|c| {
            c.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<i32>>()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A second signal before the first test was saved left the claimed result file empty
    /// (0 bytes, seen after a double Ctrl-C in a run's first test) and said the file kept a
    /// save it never had. Now the empty file is removed and the line says nothing was saved;
    /// once a test was saved, the file stays and the line says what it holds.
    #[test]
    fn a_stop_at_once_removes_an_empty_result_file_and_says_what_was_saved() {
        use std::os::unix::fs::MetadataExt;
        let d = tempfile::tempdir().unwrap();
        let (path, tmp) = (
            d.path().join("run-1.json"),
            d.path().join(".run-1.json.tmp"),
        );
        let said = |f: &ResultFile| {
            let mut out = Vec::new();
            f.at_once(&mut |b: &[u8]| out.extend_from_slice(b));
            String::from_utf8(out).unwrap()
        };
        assert_eq!(
            said(&ResultFile::new()),
            "",
            "no result file: nothing to say"
        );

        std::fs::File::create(&path).unwrap();
        std::fs::write(&tmp, b"{ half a docu").unwrap();
        let f = ResultFile::new();
        f.claimed(&path, &tmp, std::fs::metadata(&path).unwrap().ino());
        let line = said(&f);
        assert!(!path.exists() && !tmp.exists(), "{line}");
        assert!(
            line.contains("nothing saved (no test had finished)"),
            "{line}"
        );
        assert!(
            line.contains(&format!("{} was removed", path.display())),
            "{line}"
        );

        std::fs::File::create(&path).unwrap();
        let f = ResultFile::new();
        f.claimed(&path, &tmp, std::fs::metadata(&path).unwrap().ino());
        std::fs::write(&tmp, b"{}").unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        f.saved();
        let line = said(&f);
        assert!(path.exists(), "{line}");
        assert!(line.contains("keeps its last save"), "{line}");

        // Not the empty file claimed any more (replaced by the user's): left alone.
        let other = d.path().join("other.json");
        std::fs::write(&other, b"").unwrap();
        let f = ResultFile::new();
        f.claimed(&other, &tmp, 1);
        assert!(said(&f).contains("nothing saved in"));
        assert!(other.exists());

        // `--output FILE.json` naming an existing file: left as it was, and said so.
        std::fs::write(&other, b"{\"old\": 1}").unwrap();
        std::fs::write(&tmp, b"{ half a docu").unwrap();
        let f = ResultFile::new();
        f.existing(&other, &tmp);
        let line = said(&f);
        assert!(!tmp.exists(), "{line}");
        assert_eq!(std::fs::read(&other).unwrap(), b"{\"old\": 1}");
        assert!(
            line.contains(&format!(
                "nothing saved (no test had finished): {} still holds what it held before this run",
                other.display()
            )),
            "{line}"
        );
        f.saved();
        assert!(said(&f).contains("keeps its last save"));
    }

    /// A test stopped by `iolab serve`, still draining when the server gave up waiting and
    /// exited, sent itself a second SIGINT when it saw its parent gone: "exit at once".
    #[test]
    fn a_process_already_stopping_sends_itself_no_stop_when_its_parent_goes() {
        let (flag, armed_at) = (AtomicUsize::new(0), AtomicU64::new(0));
        on_signal(libc::SIGINT, &flag, &armed_at);
        assert!(!parent_gone_needs_a_stop());
    }

    #[test]
    fn the_first_signal_decides_and_a_second_one_soon_after_is_the_same_stop() {
        let flag = AtomicUsize::new(0);
        let armed_at = AtomicU64::new(0);
        // SIGHUP stops but does not arm the "stop now" exit.
        on_signal(libc::SIGHUP, &flag, &armed_at);
        assert_eq!(flag.load(Ordering::SeqCst), libc::SIGHUP as usize);
        assert_eq!(armed_at.load(Ordering::SeqCst), 0);
        // A SIGINT arms it; the exit code stays the first signal's.
        on_signal(libc::SIGINT, &flag, &armed_at);
        assert_eq!(flag.load(Ordering::SeqCst), libc::SIGHUP as usize);
        let armed = armed_at.load(Ordering::SeqCst);
        assert!(armed != 0);
        // Delivered again at once (the process group's copy): no exit, nothing changes.
        on_signal(libc::SIGINT, &flag, &armed_at);
        assert_eq!(armed_at.load(Ordering::SeqCst), armed);
        // A stonewall is overridden by a signal.
        let flag = AtomicUsize::new(STONEWALL);
        on_signal(libc::SIGTERM, &flag, &AtomicU64::new(0));
        assert_eq!(flag.load(Ordering::SeqCst), libc::SIGTERM as usize);
    }

    #[test]
    fn only_a_signal_a_second_or_more_after_the_first_exits_at_once() {
        let s = SAME_STOP.as_nanos() as u64;
        assert!(!exits_now(0, 5 * s), "nothing armed");
        assert!(!exits_now(s, s), "the same instant");
        assert!(!exits_now(s, 2 * s - 1), "within the second");
        assert!(exits_now(s, 2 * s));
        assert!(
            !exits_now(5 * s, s),
            "a clock that went back is not a second stop"
        );
    }

    #[test]
    fn sleep_lasts_its_time_and_a_signal_cuts_it_short() {
        let f = StopFlag::new();
        let t = Instant::now();
        f.sleep(Duration::from_millis(120)).unwrap();
        assert!(t.elapsed() >= Duration::from_millis(120));
        f.stonewall();
        f.sleep(Duration::from_millis(10)).unwrap();
        f.raise(libc::SIGINT);
        let t = Instant::now();
        let e = f.sleep(Duration::from_secs(60)).unwrap_err();
        assert_eq!(e.signal, libc::SIGINT);
        assert!(t.elapsed() < Duration::from_secs(5));
    }
}

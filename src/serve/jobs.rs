//! The tests the console started: each a child process of this same binary
//! (`current_exe`) with the command line's argv plus `--progress-json FILE --output DIR`.
//! A task per child follows the progress file (one JSON event per line) and the child's
//! stderr (line by line), keeps both for the browser, and records how the child ended. Stop
//! is SIGINT to the child: the same path as Ctrl-C, which saves the partial result and
//! releases the target's lock.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use tokio::io::AsyncReadExt;

use super::forms::Planned;

/// How much of a child's stdout/stderr is kept (the end).
const KEEP_OUTPUT: usize = 64 * 1024;

/// The commands whose progress stream has live `point`s (every 500 ms of a block test:
/// `runner::block::LiveSampler` in runner/run.rs, sweep.rs, sustain.rs). The others (files)
/// have none, so their page shows no charts (it showed three empty ones, "waiting for
/// data…", until the end and after).
pub const LIVE_POINTS: &[&str] = &["run", "saturate", "sustain"];

/// One test started from the console.
pub struct Job {
    pub id: u32,
    pub command: String,
    pub target: String,
    /// The argv as the command line would take it (`iolab run --target=...`).
    pub argv: Vec<String>,
    pub started_at: String,
    pid: Option<u32>,
    state: Mutex<JobState>,
}

/// What the browser sees of a job.
#[derive(Debug, Clone, Default, Serialize)]
pub struct JobState {
    /// `running`, `stopping`, then the result's status (`complete`, `interrupted`,
    /// `failed`), or `refused` (exit 2: the command's checks said no).
    pub status: String,
    pub events: Vec<Value>,
    pub result_path: Option<PathBuf>,
    pub exit_code: Option<i32>,
    pub stdout: String,
    /// Its stderr's end (`KEEP_OUTPUT`), whole lines added as the test writes them.
    pub stderr: String,
    /// Its entry in the history, once recorded (`h-N`).
    pub history_id: Option<i64>,
}

/// A job as JSON: its identity, its state and the events from `since` on.
#[derive(Debug, Serialize)]
pub struct JobView {
    pub id: String,
    pub command: String,
    pub target: String,
    pub argv: Vec<String>,
    /// The options that tell two runs of its command apart (`--preset real --size 1G`), as
    /// the History page and `iolab history` give them beside the command (the Runs page
    /// showed `run` alone); absent when there are none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub options: Option<String>,
    pub started_at: String,
    /// Its progress stream has live points (IOPS, MB/s, latency every 500 ms) to chart.
    pub live_points: bool,
    pub status: String,
    pub exit_code: Option<i32>,
    /// The id of its result (`run-N`) once a result file exists.
    pub result: Option<String>,
    /// Its history entry (`h-N`) once the console recorded it.
    pub history: Option<String>,
    pub events: Vec<Value>,
    /// The index to ask from next time.
    pub next: usize,
    /// The end of its stdout (its table), once it ended.
    pub stdout: String,
    /// The end of its stderr (the last 64 KiB), as it comes: each line as soon as the test
    /// wrote it (the task lines, notes such as a stop's, warnings, cleanup messages), so a
    /// running test's page shows what a terminal would; the same text once it ended.
    pub stderr: String,
}

pub struct Jobs {
    list: Mutex<Vec<Arc<Job>>>,
    next_id: AtomicU32,
    exe: PathBuf,
    output: PathBuf,
    /// Where each finished test's result is recorded.
    history: Option<Arc<crate::history::History>>,
    /// The progress files; removed with the server.
    work: tempfile::TempDir,
}

fn keep_tail(s: &mut String) {
    if s.len() > KEEP_OUTPUT {
        let mut cut = s.len() - KEEP_OUTPUT;
        while !s.is_char_boundary(cut) {
            cut += 1;
        }
        s.drain(..cut);
    }
}

impl Job {
    pub fn view(&self, since: usize) -> JobView {
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let since = since.min(st.events.len());
        JobView {
            id: format!("run-{}", self.id),
            command: self.command.clone(),
            target: self.target.clone(),
            argv: self.argv.clone(),
            options: crate::history::options_of(&self.argv),
            started_at: self.started_at.clone(),
            live_points: LIVE_POINTS.contains(&self.command.as_str()),
            status: st.status.clone(),
            exit_code: st.exit_code,
            result: st
                .result_path
                .as_ref()
                .filter(|p| p.metadata().is_ok_and(|m| m.len() > 0))
                .map(|_| format!("run-{}", self.id)),
            history: st.history_id.map(|n| format!("h-{n}")),
            events: st.events[since..].to_vec(),
            next: st.events.len(),
            stdout: st.stdout.clone(),
            stderr: st.stderr.clone(),
        }
    }

    pub fn result_path(&self) -> Option<PathBuf> {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .result_path
            .clone()
    }

    pub fn is_running(&self) -> bool {
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.status == "running" || st.status == "stopping"
    }

    /// SIGINT to the child (Ctrl-C's path), once. False when it had already ended.
    pub fn stop(&self) -> bool {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.status == "stopping" {
            // Already told. A second SIGINT a second or more after the first is "exit at
            // once, no cleanup": a second press of Stop while the test waited for its I/Os
            // in flight (seconds on a slow device) left its test file, lock and a result
            // marked running, against what Stop promises.
            return true;
        }
        if st.status != "running" {
            return false;
        }
        if let Some(pid) = self.pid {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGINT,
            );
        }
        st.status = "stopping".into();
        true
    }

    fn push_events(&self, lines: &[u8]) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        for line in lines.split(|b| *b == b'\n') {
            let Ok(v) = serde_json::from_slice::<Value>(line) else {
                continue;
            };
            if let Some(p) = v
                .get("result_path")
                .or_else(|| v.get("path"))
                .and_then(Value::as_str)
            {
                st.result_path = Some(PathBuf::from(p));
            }
            st.events.push(v);
        }
    }

    /// Whole lines of the test's stderr, as they came.
    fn push_stderr(&self, lines: &[u8]) {
        if lines.is_empty() {
            return;
        }
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.stderr.push_str(&String::from_utf8_lossy(lines));
        keep_tail(&mut st.stderr);
    }

    fn finish(&self, code: Option<i32>, stdout: String, history: Option<i64>) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.history_id = history;
        let reported = st
            .events
            .iter()
            .rev()
            .find(|e| e.get("event").and_then(Value::as_str) == Some("result"))
            .and_then(|e| e.get("status").and_then(Value::as_str))
            .map(str::to_string);
        st.status = match (reported, code) {
            (Some(s), _) => s,
            (None, Some(0)) => "complete".into(),
            (None, Some(2)) => "refused".into(),
            (None, Some(130)) => "interrupted".into(),
            _ => "failed".into(),
        };
        st.exit_code = code;
        st.stdout = stdout;
        keep_tail(&mut st.stdout);
    }
}

impl Jobs {
    pub fn new(
        exe: PathBuf,
        output: PathBuf,
        history: Option<Arc<crate::history::History>>,
    ) -> std::io::Result<Jobs> {
        Ok(Jobs {
            list: Mutex::new(Vec::new()),
            next_id: AtomicU32::new(1),
            exe,
            output,
            history,
            work: tempfile::Builder::new().prefix("iolab-serve-").tempdir()?,
        })
    }

    pub fn output(&self) -> &Path {
        &self.output
    }

    pub fn all(&self) -> Vec<Arc<Job>> {
        self.list.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn get(&self, id: u32) -> Option<Arc<Job>> {
        self.all().into_iter().find(|j| j.id == id)
    }

    /// Start a checked test. Refused while one of the console's own tests runs on the same
    /// target (the child's lock refuses other iolab runs too, with its own message).
    /// Why `p` cannot start now: one of the console's own tests runs on its target.
    pub fn conflict(&self, p: &Planned) -> Result<(), String> {
        let same = |a: &str, b: &str| {
            a == b
                || matches!(
                    (std::fs::canonicalize(a), std::fs::canonicalize(b)),
                    (Ok(x), Ok(y)) if x == y
                )
        };
        if let Some(j) = self
            .all()
            .iter()
            .find(|j| j.is_running() && same(&j.target, &p.target))
        {
            return Err(format!(
                "another test (run-{}, {}) is running on {}; stop it or wait for it",
                j.id, j.command, p.target
            ));
        }
        Ok(())
    }

    pub fn start(&self, p: &Planned) -> Result<Arc<Job>, String> {
        self.conflict(p)?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let progress = self.work.path().join(format!("run-{id}.jsonl"));
        std::fs::File::create(&progress)
            .map_err(|e| format!("cannot create {}: {e}", progress.display()))?;
        let mut args: Vec<String> = vec!["--progress-json".into(), progress.display().to_string()];
        // The test records into the console's history itself (or nowhere, as the console).
        match &self.history {
            Some(h) => args.push(format!("--history={}", h.path().display())),
            None => args.push("--no-history".into()),
        }
        let mut rest = p.args.clone();
        let at = rest.iter().position(|a| a == "--").unwrap_or(rest.len());
        rest.insert(at, format!("--output={}", self.output.display()));
        args.extend(rest.iter().cloned());
        let mut cmd = tokio::process::Command::new(&self.exe);
        cmd.args(&args)
            .env("NO_COLOR", "1")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(false);
        // Should the server die without stopping its tests (SIGKILL, a crash), each test
        // sends itself one SIGINT when it sees its parent gone: the Ctrl-C path, so it saves,
        // cleans up and ends (runner::signals::stop_when_parent_exits). Not PR_SET_PDEATHSIG:
        // with a threaded parent the kernel may send it once per exiting thread, and a second
        // SIGINT means "exit at once, no cleanup".
        cmd.env(
            crate::runner::signals::PARENT_ENV,
            std::process::id().to_string(),
        );
        // Its Stop is one SIGINT, never a second: the test's stop line offers no
        // "Ctrl-C again ... exits at once" (the console has no such button).
        cmd.env(crate::runner::signals::CONSOLE_ENV, "1");
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", self.exe.display()))?;
        let mut argv = vec!["iolab".to_string()];
        argv.extend(rest);
        let job = Arc::new(Job {
            id,
            command: p.command.clone(),
            target: p.target.clone(),
            argv,
            started_at: crate::model::now_rfc3339(),
            pid: child.id(),
            state: Mutex::new(JobState {
                status: "running".into(),
                ..Default::default()
            }),
        });
        self.list
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Arc::clone(&job));
        let follower = Arc::clone(&job);
        let history = self.history.clone();
        tokio::spawn(async move {
            let out = read_all(child.stdout.take());
            let err = follow_stderr(Arc::clone(&follower), child.stderr.take());
            // A small regular file, read where it ended last time: no need for async reads.
            let mut file = std::fs::File::open(&progress).ok();
            let mut partial: Vec<u8> = Vec::new();
            let code = loop {
                let done = child.try_wait();
                if let Some(f) = file.as_mut() {
                    let mut buf = Vec::new();
                    let _ = std::io::Read::read_to_end(f, &mut buf);
                    follower.push_events(&whole_lines(&mut partial, &buf));
                }
                match done {
                    Ok(Some(status)) => break status.code(),
                    Ok(None) => tokio::time::sleep(Duration::from_millis(100)).await,
                    Err(_) => break None,
                }
            };
            follower.push_events(&partial);
            let out = out.await.unwrap_or_default();
            // Its stderr to the end (the lines after the last poll), before the status says ended.
            let _ = err.await;
            // Recorded before the status changes, so a finished job's view has its entry.
            let recorded = match (history, follower.result_path()) {
                (Some(h), Some(path)) => tokio::task::spawn_blocking(move || record(&h, &path))
                    .await
                    .unwrap_or(None),
                _ => None,
            };
            follower.finish(code, out, recorded);
        });
        Ok(job)
    }

    /// At shutdown: SIGINT to every running test, then wait (each saves its partial result).
    pub async fn stop_all_and_wait(&self) {
        let running: Vec<_> = self.all().into_iter().filter(|j| j.is_running()).collect();
        for j in &running {
            crate::eline!(
                "iolab serve: stopping run-{} ({} on {})",
                j.id,
                j.command,
                j.target
            );
            j.stop();
        }
        for _ in 0..1200 {
            if running.iter().all(|j| !j.is_running()) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Record a finished test's result file in the history (the row id); a result file that
/// is empty (a test refused before its first save) or unreadable is not recorded, and a
/// failure to record is said on the server's stderr.
fn record(h: &crate::history::History, path: &Path) -> Option<i64> {
    let doc = crate::model::ResultDoc::read(path).ok()?;
    match h.record(&doc, Some(path)) {
        Ok(id) => Some(id),
        Err(e) => {
            crate::eline!(
                "iolab serve: warning: {} was not recorded in the history: {e:#}",
                path.display()
            );
            None
        }
    }
}

/// `new` added to `pending`, and what now ends in a newline taken out: the whole lines in
/// one piece (empty when none); a line still being written stays in `pending`.
fn whole_lines(pending: &mut Vec<u8>, new: &[u8]) -> Vec<u8> {
    pending.extend_from_slice(new);
    match pending.iter().rposition(|b| *b == b'\n') {
        Some(last) => {
            let rest = pending.split_off(last + 1);
            std::mem::replace(pending, rest)
        }
        None => Vec::new(),
    }
}

/// A child's stderr, read on its own task as it comes (so the child never blocks on a full
/// pipe): each whole line goes to the job's view at once, what is left at the end with it.
/// A line longer than what is kept goes as it is, up to its last whole character.
fn follow_stderr<R>(job: Arc<Job>, r: Option<R>) -> tokio::task::JoinHandle<()>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let Some(mut r) = r else { return };
        let mut pending = Vec::new();
        let mut buf = vec![0u8; 16 * 1024];
        while let Ok(n @ 1..) = r.read(&mut buf).await {
            job.push_stderr(&whole_lines(&mut pending, &buf[..n]));
            if pending.len() > KEEP_OUTPUT {
                // The start of its last character (a UTF-8 continuation byte is 10xxxxxx).
                let cut = pending
                    .iter()
                    .rposition(|b| b & 0xC0 != 0x80)
                    .filter(|&i| i > 0)
                    .unwrap_or(pending.len());
                let rest = pending.split_off(cut);
                job.push_stderr(&std::mem::replace(&mut pending, rest));
            }
        }
        job.push_stderr(&pending);
    })
}

/// All of a child's output stream, read on its own task (so the child never blocks on a
/// full pipe).
fn read_all<R>(r: Option<R>) -> tokio::task::JoinHandle<String>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let mut s = Vec::new();
        if let Some(mut r) = r {
            let _ = r.read_to_end(&mut s).await;
        }
        String::from_utf8_lossy(&s).into_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole lines come out as they end, a line being written waits for its end.
    #[test]
    fn whole_lines_keep_a_line_being_written() {
        let mut pending = Vec::new();
        assert_eq!(whole_lines(&mut pending, b"iolab: pre"), b"");
        assert_eq!(
            whole_lines(&mut pending, b"fill ...\nwarn"),
            b"iolab: prefill ...\n"
        );
        assert_eq!(
            whole_lines(&mut pending, b"ing: a\nb\n"),
            b"warning: a\nb\n"
        );
        assert!(pending.is_empty());
    }

    /// Stop pressed twice, a second or more apart (the test still draining its I/Os): the
    /// test got two SIGINTs, the second of which means "exit at once, no cleanup".
    #[test]
    fn stop_signals_the_test_once() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("signals");
        let ready = dir.path().join("ready");
        // A stand-in for a test that takes a while to stop: it logs every SIGINT.
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "trap 'echo INT >> {}' INT; touch {}; while :; do sleep 0.05; done",
                log.display(),
                ready.display()
            ))
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        while !ready.exists() && start.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let job = Job {
            id: 1,
            command: "run".into(),
            target: "/t".into(),
            argv: Vec::new(),
            started_at: String::new(),
            pid: Some(child.id()),
            state: Mutex::new(JobState {
                status: "running".into(),
                ..Default::default()
            }),
        };
        assert!(job.stop());
        std::thread::sleep(Duration::from_millis(1200));
        assert!(job.stop(), "a stopping test is still being stopped");
        std::thread::sleep(Duration::from_millis(500));
        let _ = child.kill();
        let _ = child.wait();
        let got = std::fs::read_to_string(&log).unwrap_or_default();
        assert_eq!(got.lines().count(), 1, "SIGINTs: {got:?}");
    }
}

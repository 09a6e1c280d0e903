//! What the `iolab serve` tests share: a console started on a free port with its own
//! history and result directory (torn down on drop with SIGINT, the Ctrl-C path), and
//! plain HTTP/1.1 requests over a TcpStream (no client crate).
#![allow(dead_code)]

pub mod cdp;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `iolab serve`.
pub struct Console {
    pub child: Child,
    /// `http://127.0.0.1:PORT`
    pub base: String,
    /// `127.0.0.1:PORT`
    pub host: String,
    pub token: String,
    pub dir: tempfile::TempDir,
    stderr_path: PathBuf,
}

impl Console {
    /// Start `iolab serve --port 0` in a fresh temp dir (results and history inside it).
    pub fn start(extra: &[&str]) -> Console {
        let dir = tempfile::Builder::new()
            .prefix("iolab-serve-test-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap();
        Self::start_in(dir, extra, None)
    }

    pub fn start_in(dir: tempfile::TempDir, extra: &[&str], history: Option<&Path>) -> Console {
        let stderr_path = dir.path().join("serve.stderr");
        let history = history
            .map(Path::to_path_buf)
            .unwrap_or_else(|| dir.path().join("history.db"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_iolab"))
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            // Its own history (the suite's IOLAB_NO_HISTORY would turn it off).
            .env_remove("IOLAB_NO_HISTORY")
            .env("IOLAB_HISTORY", &history)
            .args(["serve", "--port", "0", "--output"])
            .arg(dir.path().join("results"))
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr_path).unwrap())
            .spawn()
            .expect("start iolab serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let err = std::fs::read_to_string(&stderr_path).unwrap_or_default();
        let url = line
            .trim()
            .strip_prefix("iolab serve: ")
            .unwrap_or_else(|| panic!("no URL line from iolab serve: {line:?}; stderr: {err}"))
            .to_string();
        let (base, token) = url.split_once("/?token=").expect("URL with a token");
        let host = base.strip_prefix("http://").unwrap().to_string();
        Console {
            child,
            base: base.to_string(),
            host,
            token: token.to_string(),
            dir,
            stderr_path,
        }
    }

    pub fn url(&self) -> String {
        format!("{}/?token={}", self.base, self.token)
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }

    /// One request; `headers` are added as given. Returns (status, headers, body).
    pub fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, String, String) {
        http(&self.host, method, path, headers, body)
    }

    /// A request with the token (Bearer) and, for changes, the console's own Origin.
    pub fn authed(&self, method: &str, path: &str, body: &str) -> (u16, String) {
        let auth = format!("Bearer {}", self.token);
        let (code, _, body) = self.request(
            method,
            path,
            &[
                ("Authorization", &auth),
                ("Origin", &self.base),
                ("Content-Type", "application/json"),
            ],
            body,
        );
        (code, body)
    }

    /// SIGINT (as Ctrl-C) and wait; the exit status.
    pub fn stop(&mut self) -> Option<i32> {
        self.stop_with(nix::sys::signal::Signal::SIGINT)
    }

    /// Send `sig` and wait; the exit status (`None` when a signal ended it, or after 120 s).
    pub fn stop_with(&mut self, sig: nix::sys::signal::Signal) -> Option<i32> {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, sig);
        let t0 = Instant::now();
        loop {
            if let Ok(Some(st)) = self.child.try_wait() {
                return st.code();
            }
            if t0.elapsed() > Duration::from_secs(120) {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Console {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.stop();
        }
    }
}

/// A bare HTTP/1.1 request to `host` (`127.0.0.1:PORT`), `Connection: close`.
pub fn http(
    host: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let mut s = TcpStream::connect(host).expect("connect to the console");
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        if k.eq_ignore_ascii_case("host") {
            req = req.replace(&format!("Host: {host}\r\n"), "");
        }
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP status in {head:?}"));
    (code, head.to_string(), body.to_string())
}

/// The rows of `iolab compare A B`'s table, cell by cell.
pub fn compare_table(a: &std::path::Path, b: &std::path::Path) -> Vec<Vec<String>> {
    let out = crate::common::iolab(&["compare", crate::common::s(a), crate::common::s(b)]);
    assert!(out.status.success(), "{}", crate::common::stderr(&out));
    table_rows(&crate::common::stdout(&out))
}

/// The body rows of the first terminal table in `text`, cell by cell (the lines between its
/// box rules, its header left out).
pub fn table_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .skip_while(|l| !l.starts_with('│'))
        .take_while(|l| !l.starts_with('└'))
        .filter(|l| l.starts_with('│'))
        .skip(1) // the header
        .map(|l| {
            l.trim_matches('│')
                .split('┆')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

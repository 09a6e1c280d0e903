//! A small Chrome DevTools Protocol client for the browser test: Debian's `chromium`,
//! headless, driven over `--remote-debugging-pipe` (requests on fd 3, answers on fd 4,
//! each message JSON ended by a NUL byte), so no websocket crate is needed. One page,
//! attached with a flat session; commands wait for their answer with a timeout.

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub struct Browser {
    child: Child,
    to_browser: std::fs::File,
    from_browser: Receiver<Value>,
    next_id: u64,
    session: String,
    _profile: tempfile::TempDir,
    /// Where `shot` saves the screenshots of each step.
    pub shots: PathBuf,
    shot_count: u32,
}

/// Duplicate `fd` to a number of at least 10 (so the child's dup2 onto 3 and 4 cannot
/// clobber it), close-on-exec.
fn high(fd: OwnedFd) -> OwnedFd {
    // SAFETY: F_DUPFD_CLOEXEC on a descriptor we own; the result is a new descriptor.
    let n = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 10) };
    assert!(n >= 10, "F_DUPFD: {}", std::io::Error::last_os_error());
    // SAFETY: n is a fresh descriptor owned by nobody else.
    unsafe { OwnedFd::from_raw_fd(n) }
}

impl Browser {
    /// Start headless chromium with the pipe and attach to its first page.
    pub fn start(shots: &Path) -> Browser {
        let profile = tempfile::Builder::new()
            .prefix("iolab-chromium-")
            .tempdir()
            .unwrap();
        // Pipe A: we write, the browser reads (its fd 3). Pipe B: it writes (fd 4), we read.
        let (a_read, a_write) = nix::unistd::pipe().unwrap();
        let (b_read, b_write) = nix::unistd::pipe().unwrap();
        let (a_read, a_write) = (high(a_read), high(a_write));
        let (b_read, b_write) = (high(b_read), high(b_write));
        let (in_fd, out_fd) = (a_read.as_raw_fd(), b_write.as_raw_fd());
        let mut cmd = Command::new("chromium");
        cmd.args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-dev-shm-usage",
            "--remote-debugging-pipe",
            "--window-size=1280,1000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("about:blank")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        // SAFETY: only async-signal-safe calls (dup2) between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                if libc::dup2(in_fd, 3) < 0 || libc::dup2(out_fd, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("start chromium");
        drop(a_read);
        drop(b_write);
        let (tx, rx) = channel();
        let mut reader = std::fs::File::from(b_read);
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let mut chunk = [0u8; 65536];
            loop {
                let n = match reader.read(&mut chunk) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                buf.extend_from_slice(&chunk[..n]);
                while let Some(end) = buf.iter().position(|b| *b == 0) {
                    let msg: Vec<u8> = buf.drain(..=end).collect();
                    if let Ok(v) = serde_json::from_slice::<Value>(&msg[..msg.len() - 1])
                        && tx.send(v).is_err()
                    {
                        return;
                    }
                }
            }
        });
        std::fs::create_dir_all(shots).unwrap();
        let mut b = Browser {
            child,
            to_browser: std::fs::File::from(a_write),
            from_browser: rx,
            next_id: 1,
            session: String::new(),
            _profile: profile,
            shots: shots.to_path_buf(),
            shot_count: 0,
        };
        let targets = b.call("Target.getTargets", json!({}));
        let page = targets["targetInfos"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["type"] == "page"))
            .map(|t| t["targetId"].as_str().unwrap().to_string());
        let target = match page {
            Some(t) => t,
            None => b.call("Target.createTarget", json!({"url": "about:blank"}))["targetId"]
                .as_str()
                .unwrap()
                .to_string(),
        };
        let s = b.call(
            "Target.attachToTarget",
            json!({"targetId": target, "flatten": true}),
        );
        b.session = s["sessionId"].as_str().expect("a session").to_string();
        b.call("Page.enable", json!({}));
        b.call("Runtime.enable", json!({}));
        b
    }

    /// Send a command (to the page's session once attached) and wait for its answer.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if !self.session.is_empty() {
            msg["sessionId"] = json!(self.session);
        }
        let mut bytes = serde_json::to_vec(&msg).unwrap();
        bytes.push(0);
        self.to_browser
            .write_all(&bytes)
            .expect("write to chromium's pipe");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.from_browser.recv_timeout(left) {
                Ok(v) if v["id"] == json!(id) => {
                    if let Some(e) = v.get("error") {
                        panic!("CDP {method} failed: {e}");
                    }
                    return v["result"].clone();
                }
                Ok(_) => continue, // an event
                Err(RecvTimeoutError::Timeout) => panic!("CDP {method}: no answer in 60 s"),
                Err(RecvTimeoutError::Disconnected) => panic!("CDP {method}: chromium went away"),
            }
        }
    }

    pub fn navigate(&mut self, url: &str) {
        self.call("Page.navigate", json!({"url": url}));
    }

    /// Evaluate a JS expression in the page (promises awaited), its value as JSON.
    pub fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
        );
        if let Some(ex) = r.get("exceptionDetails") {
            return json!({"exception": ex.to_string()});
        }
        r["result"]["value"].clone()
    }

    /// Poll `expr` every 100 ms until it is truthy (returned), or panic after `limit` with
    /// `what` and the last value.
    pub fn wait_for(&mut self, what: &str, expr: &str, limit: Duration) -> Value {
        let t0 = Instant::now();
        loop {
            let v = self.eval(expr);
            let truthy = match &v {
                Value::Null => false,
                Value::Bool(b) => *b,
                Value::Number(n) => n.as_f64() != Some(0.0),
                Value::String(s) => !s.is_empty(),
                Value::Object(o) => !o.contains_key("exception"),
                Value::Array(_) => true,
            };
            if truthy {
                return v;
            }
            if t0.elapsed() > limit {
                let shot = self.shot(&format!("timeout-{}", slug(what)));
                let text = self.eval("document.body ? document.body.innerText.slice(0, 2000) : ''");
                panic!(
                    "waited {limit:?} for {what} ({expr}); last value {v}; page text: {text}; screenshot {}",
                    shot.display()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A PNG screenshot of the page as `NN-name.png` in `shots`.
    pub fn shot(&mut self, name: &str) -> PathBuf {
        self.shot_count += 1;
        let r = self.call("Page.captureScreenshot", json!({"format": "png"}));
        let png = decode_base64(r["data"].as_str().unwrap_or(""));
        let p = self
            .shots
            .join(format!("{:02}-{}.png", self.shot_count, slug(name)));
        std::fs::write(&p, png).unwrap();
        p
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn slug(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(40)
        .collect()
}

/// Standard base64 (the screenshot's encoding), without a crate.
fn decode_base64(s: &str) -> Vec<u8> {
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for c in s.bytes() {
        let Some(v) = val(c) else { continue };
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

#[test]
fn base64_decodes() {
    assert_eq!(decode_base64("aW9sYWI="), b"iolab");
    assert_eq!(decode_base64("aW9sYWJz"), b"iolabs");
}

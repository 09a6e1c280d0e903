//! `iolab serve`: the local web console. An HTTP server (axum on a one-thread tokio runtime)
//! that shows this machine's devices and file systems, starts tests as child processes of
//! this same binary with the argv the command line would take (`jobs.rs`), follows their
//! JSON progress stream (`runner::progress`), stops them with SIGINT (the Ctrl-C path), and
//! reads the results: its own runs and the history (`results.rs`), with the report
//! exporters of `src/report` for downloads and the comparison.
//!
//! Safety (docs/SECURITY.md): loopback by default; every request needs the token (`auth.rs`);
//! requests that change anything also need a same-origin `Origin`; paths come in only as a
//! test's target, checked by the command's own validation (`forms.rs`); results go out
//! only by id.

mod auth;
mod forms;
mod history;
mod jobs;
mod machine;
mod results;
mod routes;

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};

use crate::error::UsageError;

/// The validated settings of `iolab serve`.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub bind: IpAddr,
    pub port: u16,
    pub token: String,
    /// Where the console's runs write their result files.
    pub output: PathBuf,
    /// The history database (`None`: `--no-history`).
    pub history: Option<PathBuf>,
}

/// What every request handler shares.
pub struct AppState {
    pub token: String,
    pub port: u16,
    /// The `Host` values a request may carry (`None`: any, when listening on every address).
    pub hosts: Option<Vec<String>>,
    pub jobs: jobs::Jobs,
    /// The results history (`None`: `--no-history`).
    pub history: Option<Arc<crate::history::History>>,
}

/// A random token: 32 hex digits (128 bits) from the kernel's generator.
pub fn random_token() -> String {
    use std::io::Read;
    let mut b = [0u8; 16];
    let ok = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut b));
    if ok.is_err() {
        // No /dev/urandom: the clock and pid, hashed (weaker, still not guessable remotely).
        let seed = format!(
            "{:?}{}{:?}",
            std::time::SystemTime::now(),
            std::process::id(),
            std::thread::current().id()
        );
        b.copy_from_slice(&blake3::hash(seed.as_bytes()).as_bytes()[..16]);
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The `Host` header values that name this server (DNS-rebinding defence): loopback names
/// and the bound address, with the port.
fn allowed_hosts(bind: IpAddr, port: u16) -> Option<Vec<String>> {
    if bind.is_unspecified() {
        return None;
    }
    let mut v = vec![
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
    ];
    let own = SocketAddr::new(bind, port).to_string();
    if !v.contains(&own) {
        v.push(own);
    }
    Some(v)
}

/// Listen, print the URL, serve until SIGINT/SIGTERM/SIGHUP; then stop the running tests (SIGINT,
/// so each saves its partial result) and wait for them.
pub fn run(cfg: ServeConfig) -> Result<()> {
    let addr = SocketAddr::new(cfg.bind, cfg.port);
    let listener = std::net::TcpListener::bind(addr).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::AddrInUse => {
                "the port is in use (another iolab serve?); choose another with --port, or --port 0 for any free one".to_string()
            }
            std::io::ErrorKind::AddrNotAvailable => {
                "no interface of this machine has that address".to_string()
            }
            std::io::ErrorKind::PermissionDenied => {
                "permission denied (ports below 1024 need privileges)".to_string()
            }
            _ => e.to_string(),
        };
        UsageError::new(format!("cannot listen on {addr}: {why}"))
    })?;
    listener.set_nonblocking(true)?;
    let port = listener.local_addr()?.port();
    // A history that cannot be used (damaged, newer schema, another program's file) is a
    // usage error: one line, exit 2, before anything is served or created (the result
    // directory was made first and stayed behind, empty).
    let history = match &cfg.history {
        Some(p) => Some(Arc::new(crate::history::History::open(p)?)),
        None => None,
    };
    std::fs::create_dir_all(&cfg.output).map_err(|e| {
        UsageError::new(format!(
            "--output {}: cannot create: {e}",
            cfg.output.display()
        ))
    })?;
    let output = std::fs::canonicalize(&cfg.output)?;
    let exe = std::env::current_exe().context("cannot find iolab's own binary")?;
    let state = Arc::new(AppState {
        token: cfg.token.clone(),
        port,
        hosts: allowed_hosts(cfg.bind, port),
        jobs: jobs::Jobs::new(exe, output, history.clone())?,
        history,
    });
    // Only now that the address is ours (and every other check passed): a refused --bind
    // must not first claim to be listening.
    if !cfg.bind.is_loopback() {
        crate::eline!(
            "iolab serve: warning: listening on {} — every machine that reaches this port and knows the token can start tests here; the traffic is not encrypted",
            cfg.bind
        );
    }
    let host = match cfg.bind {
        b if b.is_unspecified() => "127.0.0.1".to_string(),
        IpAddr::V6(v6) => format!("[{v6}]"),
        b => b.to_string(),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the server's runtime")?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        crate::outln!("iolab serve: http://{host}:{port}/?token={}", cfg.token);
        // Its address and token go nowhere (stdout on a full disk): a console nobody can
        // open ran until killed. A closed pipe is no error (`| head -1` read the line).
        if crate::stdout_error().is_some() {
            anyhow::bail!(
                "iolab serve: its address (with the token) could not be written to stdout, so nobody could open the console; not serving"
            );
        }
        crate::eline!(
            "iolab serve: open the URL above; Ctrl-C stops the server (and its running tests)"
        );
        let app = routes::router(Arc::clone(&state));
        axum::serve(listener, app)
            .with_graceful_shutdown(shutdown_signal())
            .await?;
        state.jobs.stop_all_and_wait().await;
        crate::eline!("iolab serve: stopped");
        anyhow::Ok(())
    })
}

/// SIGINT, SIGTERM or SIGHUP, as every other command stops on them. Without SIGHUP, the
/// terminal or SSH session closing killed the server outright: its tests stopped only by
/// watching their parent, and its work directory (`$TMPDIR/iolab-serve-*`) stayed behind.
async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    ) else {
        std::future::pending::<()>().await;
        return;
    };
    tokio::select! {
        _ = int.recv() => {}
        _ = term.recv() => {}
        _ = hup.recv() => {}
    }
}

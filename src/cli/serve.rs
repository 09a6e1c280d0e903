//! `iolab serve` arguments: the local web console.

use std::net::IpAddr;
use std::path::PathBuf;

use clap::Args;

/// A web console on this machine: its devices and file systems with health, tests started
/// from a form (run, files, saturate, sustain) with the command line's checks, their live
/// series and a Stop button (the same clean stop as Ctrl-C), the history with filters,
/// a comparison of any two results, the trend per device, and reports to download.
///
/// It listens on 127.0.0.1 and every request needs the random token of the printed URL
/// (then a cookie). Each test runs as `iolab` itself in a child process, with the argv the
/// command line would take.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// The history the console shows and its tests record into.
    #[command(flatten)]
    pub history: super::history::HistoryFlags,

    /// Address to listen on. Anything but a loopback address needs --token and prints a
    /// warning: whoever reaches the port with the token can run tests as this user.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    pub bind: IpAddr,

    /// Port to listen on (0: any free port; the printed URL says which).
    #[arg(long, value_name = "PORT", default_value_t = 8740)]
    pub port: u16,

    /// The access token (at least 16 characters; default: a random one, printed in the URL).
    #[arg(
        long,
        value_name = "TOKEN",
        env = "IOLAB_SERVE_TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,

    /// Directory for the result files of the tests started from the console.
    #[arg(long, value_name = "DIR", default_value = "iolab-results")]
    pub output: PathBuf,
}

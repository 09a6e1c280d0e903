//! Progress display: a bar per test on a terminal (indicatif), plain lines otherwise.
//! Respects NO_COLOR. Always on stderr, so `--json` output on stdout stays clean.

use std::io::IsTerminal;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressMode {
    Bar,
    Lines,
    Quiet,
}

impl ProgressMode {
    pub fn detect(quiet: bool) -> ProgressMode {
        if quiet {
            ProgressMode::Quiet
        } else if std::io::stderr().is_terminal() {
            ProgressMode::Bar
        } else {
            ProgressMode::Lines
        }
    }
}

pub fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// One task's progress (a test run, a prefill).
pub struct Progress {
    mode: ProgressMode,
    bar: Option<ProgressBar>,
    label: String,
    started: Instant,
}

impl Progress {
    pub fn start(mode: ProgressMode, label: &str) -> Progress {
        let bar = (mode == ProgressMode::Bar).then(|| {
            let b = ProgressBar::with_draw_target(Some(1000), ProgressDrawTarget::stderr());
            let tpl = if no_color() {
                "{prefix:24} [{bar:30}] {percent:>3}% {msg}"
            } else {
                "{prefix:24.bold} [{bar:30.cyan/blue}] {percent:>3}% {msg}"
            };
            b.set_style(
                ProgressStyle::with_template(tpl)
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            b.set_prefix(label.to_string());
            b
        });
        if mode == ProgressMode::Lines {
            crate::eline!("iolab: {label} ...");
        }
        Progress {
            mode,
            bar,
            label: label.to_string(),
            started: Instant::now(),
        }
    }

    pub fn set(&self, fraction: f64, msg: &str) {
        if let Some(b) = &self.bar {
            b.set_position((fraction.clamp(0.0, 1.0) * 1000.0) as u64);
            b.set_message(msg.to_string());
        }
    }

    pub fn finish(self, msg: &str) {
        match self.mode {
            ProgressMode::Bar => {
                if let Some(b) = self.bar {
                    b.finish_and_clear();
                }
            }
            ProgressMode::Lines => crate::eline!(
                "iolab: {} done in {:.1} s: {msg}",
                self.label,
                self.started.elapsed().as_secs_f64()
            ),
            ProgressMode::Quiet => {}
        }
    }
}

//! `iolab serve`: check the arguments (address, token, result directory), then hand over to
//! the web console in `src/serve`.

use crate::cli::serve::ServeArgs;
use crate::error::UsageError;
use crate::serve::{ServeConfig, random_token};

impl crate::cli::Execute for ServeArgs {
    fn execute(&self, _argv: Vec<String>) -> anyhow::Result<i32> {
        let args = self;
        let loopback = args.bind.is_loopback();
        let token = match &args.token {
            Some(t) => {
                // The token goes into the printed URL and the cookie as it is: a '&', '#',
                // '%', '+' or ';' in it made the printed URL answer 403.
                if t.chars().count() < 16 || !t.chars().all(token_char) {
                    return Err(UsageError::new(
                        "--token: give at least 16 letters, digits or - . _ ~ (it goes into the URL as it is)",
                    )
                    .into());
                }
                t.clone()
            }
            None if loopback => random_token(),
            None => {
                return Err(UsageError::new(format!(
                    "--bind {}: listening beyond this machine needs --token TOKEN (anyone who reaches the port with it can run tests as this user)",
                    args.bind
                ))
                .into());
            }
        };
        if args.output.exists() && !args.output.is_dir() {
            return Err(UsageError::new(format!(
                "--output {}: is not a directory",
                args.output.display()
            ))
            .into());
        }
        let cfg = ServeConfig {
            bind: args.bind,
            port: args.port,
            token,
            output: args.output.clone(),
            history: crate::history::HistoryOptions::current().path,
        };
        crate::serve::run(cfg)?;
        Ok(0)
    }
}

/// A character a token may have: one that a URL query and a cookie carry unchanged.
fn token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~')
}

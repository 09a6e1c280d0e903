//! `iolab compare`: read every file (all checked before any output), match, print.

use crate::cli::compare::CompareArgs;
use crate::report::compare::{comparable, compare, render_text};
use crate::report::load::load_inputs;

impl crate::cli::Execute for CompareArgs {
    fn execute(&self, _argv: Vec<String>) -> anyhow::Result<i32> {
        let args = self;
        let (inputs, left_out) = comparable(load_inputs(&args.results)?);
        if let Some(note) = left_out {
            crate::eline!("{note}");
        }
        if inputs.len() < 2 {
            return Err(crate::usage!(
                "compare needs at least two result files; found {}",
                inputs.len()
            ));
        }
        let c = compare(&inputs, args.all_metrics)?;
        if args.json {
            crate::outln!("{}", serde_json::to_string_pretty(&c)?);
        } else {
            crate::out!("{}", render_text(&c));
        }
        Ok(0)
    }
}

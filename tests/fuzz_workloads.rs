//! Hostile workload and trace files: the TOML workload parser and the trace-file reader never
//! panic, and every error is a message that points into the file (line and column for TOML,
//! `file:line` for traces). Short proptest runs, so they can run on every CI build.

use proptest::prelude::*;

use iolab::workload::trace::builtins;
use iolab::workload::trace::tracefile;
use iolab::workload::trace::validate::parse;

/// Every TOML error must name a position that exists in the text.
fn check_toml(text: &str) -> Result<(), TestCaseError> {
    if let Err(e) = parse("fuzz.toml", text) {
        let lines = text.split('\n').count();
        prop_assert!(!e.reason.trim().is_empty(), "empty reason for {text:?}");
        prop_assert!(e.line >= 1 && e.line <= lines, "line {} of {lines}", e.line);
        prop_assert!(e.column >= 1);
    }
    Ok(())
}

/// Cut `text` at a character boundary near `at` and splice `junk` in.
fn mangle(text: &str, at: usize, cut: usize, junk: &str) -> String {
    let mut i = at.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    let mut j = (i + cut).min(text.len());
    while !text.is_char_boundary(j) {
        j -= 1;
    }
    format!("{}{junk}{}", &text[..i], &text[j..])
}

const TOML_BITS: &str = "(\\[\\[stream\\]\\]\n|name = \"a\"\n|file_size = |\"4K\"|-1|1e999|\"\"|= |\\{|\\}|\\[|\\]|mix = \\{ read = 1 \\}\n|duration = \"1s\"\n|amount = \"1M\"\n|rate = \"fast\"\n|sequential = 2\n|copies = 9999999999999\n|\n|#|\"|'|\\\\u\\{0\\}|é)";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn toml_parser_never_panics_on_random_text(s in "\\PC{0,200}") {
        check_toml(&s)?;
    }

    #[test]
    fn toml_parser_on_workload_shaped_text(parts in proptest::collection::vec(TOML_BITS, 0..30)) {
        check_toml(&parts.concat())?;
    }

    #[test]
    fn toml_parser_on_mangled_builtins(
        which in 0usize..64,
        at in 0usize..2000,
        cut in 0usize..40,
        junk in "\\PC{0,12}",
    ) {
        let names = builtins::names();
        let text = builtins::get(names[which % names.len()]).unwrap();
        check_toml(&mangle(text, at, cut, &junk))?;
    }

    #[test]
    fn trace_reader_names_file_and_line(lines in proptest::collection::vec("\\PC{0,80}", 0..6)) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.trace");
        std::fs::write(&p, lines.join("\n")).unwrap();
        if let Err(e) = tracefile::read(&p) {
            prop_assert!(e.to_string().contains("t.trace"), "{}", e);
        }
    }
}

#[test]
fn every_builtin_workload_parses() {
    for name in builtins::names() {
        let text = builtins::get(name).unwrap();
        parse(name, text)
            .unwrap_or_else(|e| panic!("{name}: {}:{}: {}", e.line, e.column, e.reason));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// `--sizes` tokens of `iolab files` (`cluster+1`, `2cluster`, `4K`, ...): never a panic,
    /// every error names the token.
    #[test]
    fn files_size_tokens_never_panic(
        token in "(\\PC{0,6}|[0-9]{0,3}\\*?cluster([+-]\\PC{0,6})?\\PC{0,2})",
        unit in prop_oneof![Just(512u64), Just(4096), Just(65536), Just(u64::MAX / 2)],
    ) {
        use iolab::workload::files::sizes::{parse_sizes, parse_token};
        if let Err(e) = parse_token(&token, unit) {
            prop_assert!(e.to_string().contains("--sizes"), "{}", e);
        }
        let _ = parse_sizes(&format!("{token},1,{token}"), unit);
    }
}

#[test]
fn multibyte_text_after_cluster_is_an_error_not_a_panic() {
    let e = iolab::workload::files::sizes::parse_token("clusteré", 4096).unwrap_err();
    assert!(e.to_string().contains("--sizes: 'clusteré'"), "{e}");
}

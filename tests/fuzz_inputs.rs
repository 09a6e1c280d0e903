//! Hostile inputs: the size/duration parsers and the result reader never panic, and every
//! error is a message (a short proptest run; CI runs it on every build).

use proptest::prelude::*;

use iolab::model::ResultDoc;
use iolab::units::{parse_duration, parse_size};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn size_parser_never_panics(s in "\\PC{0,24}") {
        match parse_size(&s) {
            Ok(_) => {}
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }

    #[test]
    fn size_parser_on_plausible_input(n in 0u64..1_000_000, unit in "(|k|K|KiB|m|M|MiB|g|G|GiB|KB|MB|GB|TB|b|B|x|Kb)") {
        let s = format!("{n}{unit}");
        if let Ok(v) = parse_size(&s) {
            prop_assert!(v >= n);
        }
    }

    #[test]
    fn duration_parser_never_panics(s in "\\PC{0,24}") {
        match parse_duration(&s) {
            Ok(d) => prop_assert!(d.as_secs_f64() >= 0.0),
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }

    #[test]
    fn result_reader_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r.json");
        std::fs::write(&p, &bytes).unwrap();
        if let Err(e) = ResultDoc::read(&p) {
            prop_assert!(e.to_string().contains("r.json"), "error names the file: {}", e);
        }
    }

    #[test]
    fn result_reader_on_mangled_results(cut in 0usize..2000, flip in 0usize..2000) {
        let doc = ResultDoc::new("run", vec!["iolab".into()], Default::default());
        let mut text = serde_json::to_vec(&doc).unwrap();
        if flip < text.len() {
            text[flip] = b'#';
        }
        text.truncate(cut.min(text.len()));
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r.json");
        std::fs::write(&p, &text).unwrap();
        if let Err(e) = ResultDoc::read(&p) {
            prop_assert!(e.to_string().contains("r.json"));
        }
    }
}

#[test]
fn newer_schema_and_foreign_json_are_named() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("new.json");
    let mut doc = serde_json::to_value(ResultDoc::new("run", vec![], Default::default())).unwrap();
    doc["schema_version"] = 99.into();
    std::fs::write(&p, doc.to_string()).unwrap();
    let e = ResultDoc::read(&p).unwrap_err().to_string();
    assert!(
        e.contains("schema version 99") && e.contains("upgrade"),
        "{e}"
    );
    let q = d.path().join("fio.json");
    std::fs::write(&q, r#"{"fio version": "fio-3.33", "jobs": []}"#).unwrap();
    let e = ResultDoc::read(&q).unwrap_err().to_string();
    assert!(e.contains("not an iolab result"), "{e}");
    let t = d.path().join("cut.json");
    std::fs::write(&t, r#"{"schema_version": 1, "tool": {"name": "iol"#).unwrap();
    let e = ResultDoc::read(&t).unwrap_err().to_string();
    assert!(e.contains("truncated"), "{e}");
}

//! The shape of the code, kept: imports run one way, down the layers of docs/ARCHITECTURE.md,
//! and no two files of src/ import each other (directly or round a loop). Reads every file
//! of src/ as text (no build step, no extra crate): `use` trees and inline `crate::…`,
//! `super::…`, `self::…` paths, outside comments, string literals and `#[cfg(test)]`
//! modules (test code may reach anywhere).
//!
//! Known debt is listed below, edge by edge; the test fails on any edge or loop that is not
//! listed, and on a listed one that is gone (so the list only shrinks).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level modules from the top (0) down. A file may import its own layer and any layer
/// below it, never one above.
const LAYERS: &[&[&str]] = &[
    &["main", "lib", "app"],
    &["commands", "serve"],
    &["dist"],
    &["cli"],
    &["report", "analysis", "history"],
    &["runner"],
    &["workload"],
    &["engine"],
    &["fs", "sysinfo"],
    &["model", "stats"],
    &["os", "units", "error"],
];

/// Imports that go up today (importer, imported), to be removed one by one: none left
/// (65 when the check was written). A new one fails the test.
const KNOWN_UPWARD: &[(&str, &str)] = &[];

/// Files that import each other today (each loop as its sorted files), likewise.
const KNOWN_LOOPS: &[&[&str]] = &[];

#[test]
fn imports_run_down_the_layers_and_files_form_no_loops() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = read_tree(&src);
    let graph = import_graph(&files);
    let report = check(&graph);
    if std::env::var_os("IOLAB_LAYERING_PRINT").is_some() {
        // The lists as they are now, in this file's syntax (for removing fixed debt).
        println!("const KNOWN_UPWARD: &[(&str, &str)] = &[");
        for (a, b) in &report.upward {
            println!("    ({a:?}, {b:?}),");
        }
        println!("];\nconst KNOWN_LOOPS: &[&[&str]] = &[");
        for l in &report.loops {
            println!("    &{l:?},");
        }
        println!("];");
    }
    let known_up: BTreeSet<(String, String)> = KNOWN_UPWARD
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let known_loops: BTreeSet<Vec<String>> = KNOWN_LOOPS
        .iter()
        .map(|l| l.iter().map(|s| s.to_string()).collect())
        .collect();
    let mut problems = Vec::new();
    for (a, b) in report.upward.difference(&known_up) {
        problems.push(format!(
            "{a} imports {b}: {} is above {} (docs/ARCHITECTURE.md)",
            top(b),
            top(a)
        ));
    }
    for (a, b) in known_up.difference(&report.upward) {
        problems.push(format!(
            "({a:?}, {b:?}) is listed in KNOWN_UPWARD but no longer imported: remove it"
        ));
    }
    for l in report.loops.difference(&known_loops) {
        problems.push(format!("these files import each other: {}", l.join(" -> ")));
    }
    for l in known_loops.difference(&report.loops) {
        problems.push(format!(
            "{l:?} is listed in KNOWN_LOOPS but is no loop any more: remove it"
        ));
    }
    assert!(
        problems.is_empty(),
        "the layering of src/ changed:\n  {}",
        problems.join("\n  ")
    );
}

/// The checker itself: an engine file that imports a command is caught, and two files that
/// import each other are a loop.
#[test]
fn a_planted_back_edge_and_a_planted_loop_are_caught() {
    let files: BTreeMap<String, String> = [
        ("commands/run.rs", "use crate::engine::sync::SyncEngine;\n"),
        (
            "engine/sync.rs",
            "// crate::commands in a comment is no import\n\
             const S: &str = \"crate::commands\";\n\
             pub fn f() { crate::commands::run::go(); }\n",
        ),
        ("engine/mod.rs", "pub mod sync;\npub mod uring;\n"),
        (
            "engine/uring.rs",
            "use super::{sync::{self, f}, buffer};\n#[cfg(test)]\nmod tests {\n    use crate::commands::run;\n}\n",
        ),
        ("engine/buffer.rs", "use crate::engine::uring::Ring;\n"),
        ("commands/mod.rs", "pub mod run;\n"),
    ]
    .into_iter()
    .map(|(p, s)| (p.to_string(), s.to_string()))
    .collect();
    let graph = import_graph(&files);
    assert!(graph["engine/uring.rs"].contains("engine/sync.rs"));
    assert!(graph["engine/uring.rs"].contains("engine/buffer.rs"));
    let report = check(&graph);
    let up: Vec<_> = report.upward.iter().cloned().collect();
    assert_eq!(
        up,
        [("engine/sync.rs".to_string(), "commands/run.rs".to_string())],
        "the comment, the string and the test module are not imports"
    );
    let loops: Vec<_> = report.loops.iter().cloned().collect();
    assert_eq!(
        loops,
        [
            vec!["commands/run.rs", "engine/sync.rs"],
            vec!["engine/buffer.rs", "engine/uring.rs"]
        ]
    );
}

fn read_tree(src: &Path) -> BTreeMap<String, String> {
    fn walk(dir: &Path, root: &Path, out: &mut BTreeMap<String, String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p: PathBuf = e.unwrap().path();
            if p.is_dir() {
                walk(&p, root, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.insert(rel, std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(src, src, &mut out);
    out
}

/// `engine/uring.rs` -> ["engine", "uring"]; `engine/mod.rs` -> ["engine"]; `lib.rs` -> [].
fn module_of(file: &str) -> Vec<String> {
    let mut segs: Vec<String> = file
        .trim_end_matches(".rs")
        .split('/')
        .map(String::from)
        .collect();
    if segs.last().is_some_and(|s| s == "mod") {
        segs.pop();
    }
    if segs == ["lib"] || segs == ["main"] {
        segs.clear();
    }
    segs
}

fn top(file: &str) -> &str {
    file.split('/').next().unwrap().trim_end_matches(".rs")
}

fn layer_of(file: &str) -> usize {
    let t = top(file);
    LAYERS
        .iter()
        .position(|l| l.contains(&t))
        .unwrap_or_else(|| panic!("{file}: top-level module '{t}' has no layer in LAYERS"))
}

/// Comments, string and char literals blanked out (newlines kept).
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if b[i] == b'r' && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#')) {
            // Raw string r"…" / r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push('r');
                i += 1;
                continue;
            }
            j += 1;
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            while j < b.len() && !b[j..].starts_with(&close) {
                j += 1;
            }
            out.push_str("\"\"");
            i = j + close.len();
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' && (b.get(i + 2) == Some(&b'\'') || (b.get(i + 1) == Some(&b'\\')))
        {
            // A char literal ('x', '\n', '\''), not a lifetime.
            let mut j = i + 1;
            if b[j] == b'\\' {
                j += 2;
            } else {
                j += 1;
            }
            while j < b.len() && b[j] != b'\'' {
                j += 1;
            }
            i = j + 1;
            out.push_str("' '");
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The text without `#[cfg(test)]` items (the attribute through the item's closing brace
/// or semicolon).
fn without_test_code(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        let brace = after.find('{');
        let semi = after.find(';');
        let end = match (brace, semi) {
            (Some(b), Some(s)) if s < b => s + 1,
            (Some(b), _) => {
                let mut depth = 0;
                let mut end = after.len();
                for (k, c) in after[b..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = b + k + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (None, Some(s)) => s + 1,
            (None, None) => after.len(),
        };
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// Every path a `use` tree names: `a::{b, c::{self, d}}` -> a::b, a::c, a::c::d.
fn expand_use(tree: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let tree = tree.trim();
    if tree.is_empty() {
        return;
    }
    // Split at top-level commas.
    let mut depth = 0;
    let mut start = 0;
    let mut parts = Vec::new();
    for (i, c) in tree.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&tree[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&tree[start..]);
    if parts.len() > 1 {
        for p in parts {
            expand_use(p, prefix, out);
        }
        return;
    }
    let tree = parts[0].trim();
    if let Some(open) = tree.find('{') {
        let head = tree[..open].trim().trim_end_matches("::");
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let mut p = prefix.to_vec();
        p.extend(head.split("::").filter(|s| !s.is_empty()).map(String::from));
        expand_use(inner, &p, out);
        return;
    }
    let path = tree.split(" as ").next().unwrap().trim();
    let mut p = prefix.to_vec();
    for seg in path.split("::").map(str::trim) {
        if seg == "self" && !p.is_empty() {
            continue;
        }
        if seg == "*" {
            break;
        }
        p.push(seg.to_string());
    }
    out.push(p);
}

/// The file each import of each file lands in (imports within a file are dropped).
fn import_graph(files: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let modules: BTreeMap<Vec<String>, String> =
        files.keys().map(|f| (module_of(f), f.clone())).collect();
    let mut graph = BTreeMap::new();
    for (file, text) in files {
        let code = without_test_code(&code_only(text));
        let me = module_of(file);
        // `super` of a file is its folder's module; of a mod.rs, the folder above.
        let parent: Vec<String> = me[..me.len().saturating_sub(1)].to_vec();
        let mut paths = Vec::new();
        let mut rest = code.as_str();
        while let Some(at) = rest.find("use ") {
            let before_ok = at == 0
                || !rest.as_bytes()[at - 1].is_ascii_alphanumeric()
                    && rest.as_bytes()[at - 1] != b'_';
            let tail = &rest[at + 4..];
            let end = tail.find(';').unwrap_or(tail.len());
            if before_ok {
                expand_use(&tail[..end], &[], &mut paths);
            }
            rest = &tail[end.min(tail.len())..];
        }
        for anchor in ["crate::", "super::", "self::"] {
            let mut from = 0;
            while let Some(k) = code[from..].find(anchor) {
                let at = from + k;
                let prev = code[..at].chars().last();
                from = at + anchor.len();
                if prev.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                    continue;
                }
                let segs: Vec<String> = code[at..]
                    .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                    .next()
                    .unwrap()
                    .split("::")
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect();
                paths.push(segs);
            }
        }
        let mut targets = BTreeSet::new();
        for p in paths {
            let Some(first) = p.first() else { continue };
            let mut abs: Vec<String> = match first.as_str() {
                "crate" => Vec::new(),
                "super" => parent.clone(),
                "self" => me.clone(),
                _ => continue,
            };
            let mut segs = p[1..].iter().peekable();
            while segs.peek().is_some_and(|s| *s == "super") {
                segs.next();
                abs.pop();
            }
            abs.extend(segs.cloned());
            let target = (1..=abs.len())
                .rev()
                .find_map(|k| modules.get(&abs[..k]).cloned());
            if let Some(t) = target
                && &t != file
            {
                targets.insert(t);
            }
        }
        graph.insert(file.clone(), targets);
    }
    graph
}

struct Report {
    upward: BTreeSet<(String, String)>,
    loops: BTreeSet<Vec<String>>,
}

fn check(graph: &BTreeMap<String, BTreeSet<String>>) -> Report {
    let mut upward = BTreeSet::new();
    for (a, targets) in graph {
        for b in targets {
            if layer_of(b) < layer_of(a) {
                upward.insert((a.clone(), b.clone()));
            }
        }
    }
    // Strongly connected components (Tarjan), the files of each loop sorted.
    struct Tarjan<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        loops: BTreeSet<Vec<String>>,
    }
    impl<'g> Tarjan<'g> {
        fn visit(&mut self, v: &'g str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.graph.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(lw);
                } else if self.on_stack.contains(w) {
                    let iw = self.index[w];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let mut comp = Vec::new();
                loop {
                    let w = self.stack.pop().unwrap();
                    self.on_stack.remove(w);
                    comp.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if comp.len() > 1 {
                    comp.sort();
                    self.loops.insert(comp);
                }
            }
        }
    }
    let mut t = Tarjan {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        loops: BTreeSet::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    Report {
        upward,
        loops: t.loops,
    }
}

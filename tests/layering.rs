//! The crate's layers, kept: the JSON layer (`src/json/`) imports nothing else of the crate,
//! and its files import each other only through their own paths, never through the layer's face
//! (`json/mod.rs`); the model (`src/model/`) only the JSON layer; and no two files (the model
//! taken as one) import each other, directly or around a circle. Read from the sources: every
//! `crate::…` path outside comments and test modules is an import.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// The unit a source file belongs to: `model` whole, else the file's module path
/// (`json/scan`, `dialect/wuu/encode`, `json` for `json/mod.rs`).
fn unit(rel: &str) -> String {
    let rel = rel.trim_end_matches(".rs").trim_end_matches("/mod");
    match rel.split('/').next() {
        Some("model") => "model".to_string(),
        _ => rel.to_string(),
    }
}

/// Whether a unit is of the JSON layer.
fn json(unit: &str) -> bool {
    unit == "json" || unit.starts_with("json/")
}

fn sources(dir: &Path, root: &Path, out: &mut BTreeMap<String, String>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            out.insert(rel, fs::read_to_string(&path).unwrap());
        }
    }
}

/// The code of a file: comments and its test module left out.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
    let text = text.split("#[cfg(test)]\npub(crate) mod tests").next().unwrap_or("");
    text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

/// What each unit imports: the longest known unit each `crate::a::b::…` path starts with.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = BTreeMap::new();
    sources(&root, &root, &mut files);
    let units: BTreeSet<String> = files.keys().map(|f| unit(f)).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, text) in &files {
        let from = unit(file);
        let code = code(text);
        for (at, _) in code.match_indices("crate::") {
            let path: String =
                code[at + 7..].chars().take_while(|c| c.is_ascii_lowercase() || *c == '_' || *c == ':').collect();
            let parts: Vec<&str> = path.split("::").filter(|p| !p.is_empty()).collect();
            let to = (1..=parts.len()).rev().map(|k| unit(&parts[..k].join("/"))).find(|u| units.contains(u));
            if let Some(to) = to.filter(|to| *to != from) {
                graph.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    graph
}

#[test]
fn the_json_layer_imports_nothing_else_and_the_model_only_it() {
    let graph = graph();
    for (unit, imports) in graph.iter().filter(|(u, _)| json(u)) {
        for to in imports {
            assert!(json(to), "{unit} imports {to}: the JSON layer imports nothing else of the crate");
            assert!(to != "json", "{unit} imports through the JSON layer's face: name the file instead");
        }
    }
    let model: Vec<_> = graph.get("model").into_iter().flatten().filter(|to| !json(to)).collect();
    assert!(model.is_empty(), "model/ imports {model:?}: only the JSON layer is below it");
    // An adapter knows the seams and the layers below, never the normalizer, the pipeline or
    // another adapter.
    for (unit, imports) in graph.iter().filter(|(u, _)| u.starts_with("dialect/")) {
        let dialect = unit.split('/').nth(1).unwrap_or_default();
        for to in imports {
            let other_adapter = to.starts_with("dialect/") && to.split('/').nth(1) != Some(dialect);
            let allowed = ["model", "codec", "contract", "report", "io/framing", "dialect/util"];
            assert!(
                json(to) || allowed.contains(&to.as_str()) || (to.starts_with("dialect/") && !other_adapter),
                "{unit} imports {to}"
            );
        }
    }
    // The seams depend on the model and below, never on an adapter or the pipeline.
    for to in graph.get("codec").into_iter().flatten() {
        assert!(
            json(to) || ["model", "report", "contract", "io/framing", "error"].contains(&to.as_str()),
            "codec imports {to}"
        );
    }
}

#[test]
fn no_files_import_each_other_around_a_circle() {
    let graph = graph();
    assert!(graph.len() > 20, "{graph:?}");
    // Depth-first: a unit met again while its own imports are being followed closes a circle.
    fn visit<'g>(
        u: &'g str,
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'g str>,
        done: &mut BTreeSet<&'g str>,
    ) {
        if let Some(at) = path.iter().position(|p| *p == u) {
            panic!("an import circle: {} -> {u}", path[at..].join(" -> "));
        }
        if !done.insert(u) {
            return;
        }
        path.push(u);
        for to in graph.get(u).into_iter().flatten() {
            visit(to, graph, path, done);
        }
        path.pop();
    }
    let mut done = BTreeSet::new();
    for u in graph.keys() {
        visit(u, &graph, &mut Vec::new(), &mut done);
    }
}

#[test]
fn every_source_file_says_what_it_is_for() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = BTreeMap::new();
    sources(&root, &root, &mut files);
    let undocumented: Vec<_> = files.iter().filter(|(_, text)| !text.starts_with("//!")).map(|(f, _)| f).collect();
    assert!(undocumented.is_empty(), "files without a `//!` first line: {undocumented:?}");
}

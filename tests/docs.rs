//! The README's outcome table says what the contracts say.

use agentgate::model::Outcome;
use agentgate::Dialect;
use strum::IntoEnumIterator;

/// loom's cell: the stop reason (none for a failed run) and the exit status; an incomplete run
/// keeps a stop reason loom lists, and is a failed run otherwise.
fn loom_cell(o: Outcome) -> String {
    let c = Dialect::Loom.contract();
    let code = c.outcome_code(o, "exit_status").unwrap();
    match (o, c.outcome_str(o, "stop_reason")) {
        (Outcome::Incomplete, _) => format!("its stop reason / {code}, else none / 1"),
        (_, Some(stop)) => format!("{stop} / {code}"),
        (_, None) => format!("none / {code}"),
    }
}

#[test]
fn the_readme_outcome_table_matches_the_contracts() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let lc = Dialect::Localcode.contract();
    let adal = Dialect::Adal.contract();
    let gemini = |o: Outcome| {
        let c = Dialect::Gemini.contract();
        let (status, code) = (c.outcome_str(o, "status").unwrap(), c.outcome_code(o, "exit_code").unwrap());
        match c.outcome_str(o, "error_type") {
            Some(kind) => format!("{status} / {kind} / {code}"),
            None => format!("{status} / {code}"),
        }
    };
    for o in Outcome::iter() {
        let row = format!(
            "| {} | {} / {} / {} | {} | {} | {} | {} | {} / {} | {} / {} | {} | {} |",
            o.name(),
            lc.outcome_str(o, "status").unwrap(),
            lc.outcome_code(o, "exit_code").unwrap(),
            lc.outcome_str(o, "reason").unwrap(),
            adal.outcome_code(o, "exit_code").unwrap(),
            Dialect::Wuu.contract().outcome_str(o, "status").unwrap(),
            loom_cell(o),
            Dialect::BaseContext.contract().outcome_str(o, "stopReason").unwrap(),
            Dialect::ClaudeCode.contract().outcome_str(o, "subtype").unwrap(),
            Dialect::ClaudeCode.contract().outcome_code(o, "exit_code").unwrap(),
            Dialect::Codex.contract().outcome_str(o, "turn").unwrap(),
            Dialect::Codex.contract().outcome_code(o, "exit_code").unwrap(),
            gemini(o),
            Dialect::Canonical.contract().outcome_str(o, "outcome").unwrap(),
        );
        assert!(readme.contains(&row), "README lacks the row {row}");
    }
}

#[test]
fn every_dialect_has_a_contract_file_and_a_row_in_the_readme() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    for d in Dialect::all() {
        assert!(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("mappings/{}.json", d.name())).exists());
        assert!(readme.contains(&format!("| `{}` |", d.name())), "README lacks {d}");
    }
}

#[test]
fn the_contracts_page_is_what_dialects_markdown_prints() {
    let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/mappings/README.md")).unwrap();
    let out =
        std::process::Command::new(env!("CARGO_BIN_EXE_agentgate")).args(["dialects", "--markdown"]).output().unwrap();
    let printed = String::from_utf8(out.stdout).unwrap();
    assert!(printed.contains("## loom") && printed.contains("| `Terminal` | `exit_status` | integer | yes |"));
    assert!(
        page == printed,
        "mappings/README.md is out of date: run `cargo run -- dialects --markdown > mappings/README.md` and review the diff"
    );
}

/// GitHub's anchor for a heading: lower case, spaces to dashes, punctuation but `-` and `_` left out.
fn anchor(heading: &str) -> String {
    heading
        .trim_start_matches('#')
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

#[test]
fn every_link_in_the_docs_resolves_in_the_repository() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut checked = 0;
    for doc in [
        "README.md",
        "CONTRIBUTING.md",
        "docs/usage.md",
        "docs/mapping.md",
        "docs/performance.md",
        "docs/acp.md",
        "docs/testing.md",
    ] {
        let path = root.join(doc);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{doc}: {e}"));
        for (at, _) in text.match_indices("](") {
            let target = &text[at + 2..];
            let target = &target[..target.find(')').unwrap()];
            if target.starts_with("http") {
                continue;
            }
            let (file, fragment) = target.split_once('#').unwrap_or((target, ""));
            let linked = if file.is_empty() { path.clone() } else { path.parent().unwrap().join(file) };
            assert!(linked.exists(), "{doc}: {target} does not resolve");
            if !fragment.is_empty() {
                let headings = std::fs::read_to_string(&linked).unwrap();
                assert!(
                    headings.lines().filter(|l| l.starts_with('#')).any(|l| anchor(l) == fragment),
                    "{doc}: no heading for #{fragment} in {file}"
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 10, "{checked}");
}

#[test]
fn the_readme_is_for_users_and_short() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    assert!(readme.lines().count() < 250, "{} lines", readme.lines().count());
    for needed in ["cargo install", "Rust 1.88", "~/.cargo/bin", "cargo test", "## Exit status", "agentgate summary"] {
        assert!(readme.contains(needed) || readme.contains(&needed.replace('~', "$HOME")), "README lacks {needed}");
    }
}

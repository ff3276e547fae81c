//! Helpers shared by the integration tests: the fixture cases and translation in memory.

#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use agentgate::{translate_bytes, Dialect, Options};

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The fixture that stands for a dialect: a complete, valid run (spoiled by the bad-input
/// tests, scaled up by the corpus generator for the benches).
pub fn representative(dialect: Dialect) -> PathBuf {
    fixtures().join(match dialect {
        Dialect::Localcode => "localcode/success.jsonl",
        Dialect::Adal => "adal/success.jsonl",
        Dialect::Wuu => "wuu/success.jsonl",
        Dialect::Loom => "loom/approval-required.jsonl",
        Dialect::BaseContext => "base-context/success.jsonl",
        Dialect::ClaudeCode => "claude-code/success.jsonl",
        Dialect::Codex => "codex/success.jsonl",
        Dialect::Gemini => "gemini/success.jsonl",
        Dialect::Canonical => "canonical/cumulative-usage.jsonl",
        Dialect::Otlp => panic!("otlp is written, not read: it has no fixtures"),
        Dialect::Acp => panic!("acp is read, not written: its transcripts are tests/acp.rs's"),
    })
}

/// One input transcript: its dialect, its name and its bytes.
pub struct Case {
    pub dialect: Dialect,
    pub name: String,
    pub path: PathBuf,
    pub input: Vec<u8>,
}

/// Every fixture transcript, in a stable order.
pub fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for dialect in Dialect::all() {
        let dir = fixtures().join(dialect.name());
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> =
            entries.map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "jsonl")).collect();
        paths.sort();
        for path in paths {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            out.push(Case { dialect, name, input: fs::read(&path).unwrap(), path });
        }
    }
    assert!(out.len() >= 20, "fixtures not found under {}", fixtures().display());
    out
}

/// Translates `input` from `from` to `to`, giving the output as text.
pub fn translate(input: &[u8], from: Dialect, to: Dialect) -> String {
    let (out, _, _) = translate_bytes(input, &Options::new(Some(from), to));
    String::from_utf8(out).expect("output is UTF-8")
}

/// [`translate`] in the form the input is in: base-context's delta form where its lines carry a
/// `messageId`, Claude Code's partial messages where it has `stream_event` lines (without the
/// options a translation writes the plain form).
pub fn translate_in_own_form(input: &[u8], from: Dialect, to: Dialect) -> String {
    let text = String::from_utf8_lossy(input);
    let mut opts = Options::new(Some(from), to);
    opts.encode.json_deltas = text.contains("\"messageId\"");
    opts.encode.include_partial_messages = text.contains("\"type\":\"stream_event\"");
    let (out, _, _) = translate_bytes(input, &opts);
    String::from_utf8(out).expect("output is UTF-8")
}

/// The output's lines parsed as JSON.
pub fn values(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("output line is not JSON ({e}): {l}")))
        .collect()
}

/// Whether a finding of the contract checker is about a record kind the contract does not list
/// (a problem, or a warning where the dialect's readers skip such kinds): within one dialect,
/// lines of unknown kinds are passed through unchanged.
pub fn unknown_kind(finding: &str) -> bool {
    finding.starts_with("unknown record kind") || finding.starts_with("warning: record kind")
}

/// A fresh folder of this test process's own under the system's temporary folder.
#[allow(dead_code)]
pub fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("agentgate-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

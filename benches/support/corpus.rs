//! The corpus generator shared by `benches/` and `examples/gen_corpus.rs` (which
//! `scripts/bench.sh` runs): scales a fixture transcript up to any size.
//! The body (every line but the terminal record) is repeated with its ids made distinct per
//! copy; the terminal record, where the dialect has one, ends the stream once.
//!
//! Fixture lines are all short, while a real agent's stream is not: most of its bytes are tool
//! output (a file read, a test run's log) on a few long lines among many short ones (deltas,
//! status). So each copy grows the tool output of its tool-result lines to a size taken in turn
//! from `OUTPUT_SIZES` (400 B to 16 KB, mean about 4 KB), repeating the fixture's own text.

use std::io::{self, Write};

use agentgate::contract::Contract;
use agentgate::json::cut_chars;
use serde_json::Value;

/// Sizes, in bytes, that tool outputs are grown to, used in turn.
const OUTPUT_SIZES: [usize; 8] = [400, 1200, 3000, 600, 8000, 2000, 16000, 800];

/// Whether a line reports a tool's output, by its kind (`type`, or loom's `kind`) or, for
/// base-context's messages, its role.
fn carries_output(v: &Value) -> bool {
    let kind = v["type"].as_str().or(v["kind"].as_str()).unwrap_or("");
    kind.contains("result")
        || kind.contains("output")
        || kind.starts_with("tool_execution")
        || v["message"]["role"] == "toolResult"
}

/// Members that hold a tool's output in some dialect.
const OUTPUT_KEYS: [&str; 5] = ["result", "output", "delta", "text", "content"];

/// The longest string held (at any depth) under one of `OUTPUT_KEYS`.
fn longest(v: &Value, under_output: bool) -> Option<&str> {
    match v {
        Value::String(s) if under_output => Some(s),
        Value::Array(a) => a.iter().filter_map(|x| longest(x, under_output)).max_by_key(|s| s.len()),
        Value::Object(m) => m
            .iter()
            .filter_map(|(k, x)| longest(x, under_output || OUTPUT_KEYS.contains(&k.as_str())))
            .max_by_key(|s| s.len()),
        _ => None,
    }
}

/// `line` with its tool output grown to about `size` bytes, when it has one, and never past a
/// limit its dialect's contract sets (localcode cuts results at 4000 characters); the rest of
/// the line stays byte for byte as the fixture wrote it.
fn grow_output(line: &str, size: usize, contract: &Contract) -> Option<String> {
    let v = serde_json::from_str::<Value>(line).ok().filter(carries_output)?;
    let kind = v[&contract.type_field].as_str().unwrap_or("");
    let limit = contract.kinds.get(kind).into_iter().flat_map(|k| k.fields.values()).filter_map(|f| f.max_chars).max();
    let size = limit.map_or(size, |l| size.min(l));
    let text = longest(&v, false).filter(|t| !t.is_empty() && t.len() < size)?;
    let mut grown = String::with_capacity(size + text.len());
    while grown.len() < size {
        grown.push_str(text);
        grown.push('\n');
    }
    let grown = cut_chars(&grown, size).0;
    let (from, to) = (serde_json::to_string(text).ok()?, serde_json::to_string(grown).ok()?);
    // A fixture that escapes differently from serde_json (\u00e9 for é, say) is left as it is.
    line.contains(&from).then(|| line.replacen(&from, &to, 1))
}

/// Writes `fixture` (a transcript of any dialect) scaled up to at least `bytes` bytes.
pub fn scale(text: &str, bytes: usize, out: &mut impl Write) -> io::Result<()> {
    let dialect = agentgate::pipeline::detect(text.as_bytes()).map_err(io::Error::other)?;
    let contract = dialect.contract();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    // The terminal record ends the stream once; a dialect without one (base-context) repeats
    // whole agent loops.
    let terminal = |line: &&str| {
        let kind =
            serde_json::from_str::<Value>(line).ok().and_then(|v| v[&contract.type_field].as_str().map(String::from));
        contract.terminal.as_ref().is_some_and(|t| Some(&t.kind) == kind.as_ref())
    };
    let cut = if lines.last().is_some_and(terminal) { lines.len() - 1 } else { lines.len() };
    let (body, last) = lines.split_at(cut);
    let mut written = 0;
    let mut copy = 0;
    let mut grown = 0;
    while written < bytes && !body.is_empty() {
        copy += 1;
        for line in body {
            let mut line = match grow_output(line, OUTPUT_SIZES[grown % OUTPUT_SIZES.len()], contract) {
                Some(longer) => {
                    grown += 1;
                    longer
                }
                None => line.to_string(),
            };
            // Distinct ids per copy: every id-like string value gets the copy number.
            for prefix in ["call", "item-", "toolu_", "c1", "p1", "p2", "t1", "t2", "u1", "f1", "k1", "k2", "x1"] {
                line = line.replace(&format!(":\"{prefix}"), &format!(":\"{copy}-{prefix}"));
            }
            out.write_all(line.as_bytes())?;
            out.write_all(b"\n")?;
            written += line.len() + 1;
        }
    }
    for line in last {
        writeln!(out, "{line}")?;
    }
    out.flush()
}

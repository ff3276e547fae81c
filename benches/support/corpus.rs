//! The corpus generator shared by `benches/` and `examples/gen_corpus.rs` (which
//! `scripts/bench.sh` runs): scales a fixture transcript up to any size.
//! The body (every line but the terminal record) is repeated with its ids made distinct per
//! copy; the terminal record, where the dialect has one, ends the stream once.
//!
//! Fixture lines are all short, while a real agent's stream is not: most of its bytes are tool
//! output (a file read, a test run's log) on a few long lines among many short ones (deltas,
//! status). So each copy grows each tool output the fixture has to a size taken in turn from
//! `OUTPUT_SIZES` (400 B to 16 KB, mean about 4 KB), repeating the fixture's own text, in every
//! line that holds it: one output is one size wherever the copy repeats it, as an agent repeats
//! the same text (a call's result in base-context's `tool_execution_end`, its toolResult
//! message's `message_start` and `message_end`, the `turn_end` and `agent_end` lists; wuu's
//! `tool_output_delta` and `command_output_delta`). A partial output (base-context's
//! `tool_execution_update`, a prefix of the whole) grows by its whole's factor and stays the
//! shorter.

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
        || v["item"]["aggregated_output"].is_string()
        || (v["type"] == "user" && v["message"]["content"].is_array())
}

/// Members that hold a tool's output in some dialect.
const OUTPUT_KEYS: [&str; 6] = ["result", "output", "delta", "text", "content", "aggregated_output"];

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

/// A tool output of the fixture: its text, as serde_json quotes it, and the most characters
/// a line that reports it may hold there (localcode cuts results at 4000), if its contract says.
struct Output {
    text: String,
    quoted: String,
    limit: Option<usize>,
}

/// The fixture's tool outputs, each once: the longest output text of each line that reports one.
fn outputs(body: &[&str], contract: &Contract) -> Vec<Output> {
    let mut found: Vec<Output> = Vec::new();
    for line in body {
        let Some(v) = serde_json::from_str::<Value>(line).ok().filter(carries_output) else { continue };
        let kind = v[&contract.type_field].as_str().unwrap_or("");
        let limit =
            contract.kinds.get(kind).into_iter().flat_map(|k| k.fields.values()).filter_map(|f| f.max_chars).max();
        let Some(text) = longest(&v, false).filter(|t| !t.is_empty()) else { continue };
        let Ok(quoted) = serde_json::to_string(text) else { continue };
        // A fixture that escapes differently from serde_json (\u00e9 for é, say) is left as it is.
        if !line.contains(&quoted) {
            continue;
        }
        match found.iter_mut().find(|o| o.text == text) {
            Some(o) => {
                o.limit = match (o.limit, limit) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                }
            }
            None => found.push(Output { text: text.to_string(), quoted, limit }),
        }
    }
    found
}

/// `text` repeated, line after line, to `size` bytes (cut at a character).
fn grown(text: &str, size: usize) -> String {
    let mut grown = String::with_capacity(size + text.len());
    while grown.len() < size {
        grown.push_str(text);
        grown.push('\n');
    }
    cut_chars(&grown, size).0.to_string()
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
    let outputs = outputs(body, contract);
    // Each output grows to the next size in turn, but a partial output (a prefix of another,
    // the whole it was part of) by its whole's factor, so that it stays the shorter.
    let whole_of =
        |o: &Output| outputs.iter().position(|w| w.text.len() > o.text.len() && w.text.starts_with(o.text.as_str()));
    let wholes: Vec<Option<usize>> = outputs.iter().map(whole_of).collect();
    let mut turn = 0;
    while written < bytes && !body.is_empty() {
        // This copy's outputs, grown and replaced in every line that holds them; the rest of
        // each line stays byte for byte as the fixture wrote it.
        let mut sizes = vec![0; outputs.len()];
        for (n, _) in outputs.iter().enumerate().filter(|(n, _)| wholes[*n].is_none()) {
            sizes[n] = OUTPUT_SIZES[turn % OUTPUT_SIZES.len()];
            turn += 1;
        }
        for (n, o) in outputs.iter().enumerate() {
            if let Some(w) = wholes[n] {
                sizes[n] = sizes[w] * o.text.len() / outputs[w].text.len();
            }
        }
        let replace: Vec<(&str, String)> = outputs
            .iter()
            .zip(sizes)
            .filter_map(|(o, size)| {
                let to = serde_json::to_string(&grown(&o.text, size.min(o.limit.unwrap_or(usize::MAX)))).ok()?;
                (to.len() > o.quoted.len()).then_some((o.quoted.as_str(), to))
            })
            .collect();
        copy += 1;
        for line in body {
            let mut line = line.to_string();
            for (from, to) in &replace {
                if line.contains(from) {
                    line = line.replace(from, to);
                }
            }
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

//! The benchmark corpus generator (`benches/support/corpus.rs`): what the benches and
//! `scripts/bench.sh` measure must be valid streams of each dialect, with the line-length mix
//! the generator promises.

mod common;
#[path = "../benches/support/corpus.rs"]
#[allow(dead_code)]
mod corpus;

use agentgate::{translate_bytes, Dialect, Options};

#[test]
fn generated_corpora_are_valid_streams_with_long_tool_outputs_among_short_lines() {
    for dialect in Dialect::all() {
        let text = std::fs::read_to_string(common::representative(dialect)).unwrap();
        let mut out = Vec::new();
        corpus::scale(&text, 400_000, &mut out).unwrap();
        assert!(out.len() >= 400_000, "{dialect}: {} bytes", out.len());
        let (translated, summary, diags) = translate_bytes(&out, &Options::new(None, Dialect::Canonical));
        assert_eq!(summary.source, Some(dialect), "{dialect}: detected as itself");
        assert!(diags.is_empty(), "{dialect}: {diags:?}");
        assert!(
            summary.terminal_in_stream || dialect.contract().terminal.is_none(),
            "{dialect}: ends with its terminal record"
        );
        assert!(!translated.is_empty());
        let lens: Vec<usize> = out.split(|&b| b == b'\n').map(<[u8]>::len).collect();
        let longest = lens.iter().max().copied().unwrap_or(0);
        let median = {
            let mut l = lens.clone();
            l.sort_unstable();
            l[l.len() / 2]
        };
        if dialect == Dialect::Loom {
            // loom records carry no tool output.
            assert!(longest < 1000, "loom: {longest}");
        } else {
            assert!(longest > 3_000, "{dialect}: longest line {longest}");
            assert!(median < 1_000, "{dialect}: median line {median}");
        }
    }
}

/// The text of the first text block of `content`.
fn first_text(content: &serde_json::Value) -> String {
    content[0]["text"].as_str().unwrap_or_default().to_string()
}

#[test]
fn one_output_is_one_size_wherever_a_generated_copy_repeats_it() {
    use std::collections::{BTreeMap, BTreeSet};
    let corpus = |dialect| {
        let text = std::fs::read_to_string(common::representative(dialect)).unwrap();
        let mut out = Vec::new();
        corpus::scale(&text, 200_000, &mut out).unwrap();
        let lines: Vec<serde_json::Value> =
            String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        lines
    };
    // base-context: a call's result in tool_execution_end, in its toolResult message's start
    // and end, and in the agent_end's list; its partial result shorter.
    let (mut ends, mut partials, mut messages) = (BTreeMap::new(), BTreeMap::new(), Vec::new());
    for v in corpus(Dialect::BaseContext) {
        let id = v["toolCallId"].as_str().map(String::from);
        match v["type"].as_str().unwrap() {
            "tool_execution_end" => drop(ends.insert(id.unwrap(), first_text(&v["result"]["content"]))),
            "tool_execution_update" => drop(partials.insert(id.unwrap(), first_text(&v["partialResult"]["content"]))),
            "message_start" | "message_end" => messages.push(v["message"].clone()),
            "agent_end" => messages.extend(v["messages"].as_array().unwrap().iter().cloned()),
            _ => {}
        }
    }
    let results: Vec<_> = messages.iter().filter(|m| m["role"] == "toolResult").collect();
    assert!(results.len() >= 3 * ends.len(), "{} results for {} calls", results.len(), ends.len());
    for m in results {
        let id = m["toolCallId"].as_str().unwrap();
        assert_eq!(first_text(&m["content"]), ends[id], "{id}: the message says what the tool's end said");
    }
    for (id, partial) in &partials {
        assert!(partial.len() < ends[id].len(), "{id}: partial {} bytes, whole {}", partial.len(), ends[id].len());
    }
    let sizes: BTreeSet<usize> = ends.values().map(String::len).collect();
    assert!(sizes.len() >= 4 && sizes.last() > Some(&3_000), "copies grow outputs to sizes in turn: {sizes:?}");
    // wuu: a command's output in tool_output_delta and command_output_delta.
    let mut deltas: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for v in corpus(Dialect::Wuu) {
        let kind = v["type"].as_str().unwrap();
        if kind.ends_with("output_delta") {
            let item = v["item_id"].as_str().unwrap().to_string();
            deltas.entry((item, kind.to_string())).or_default().push(v["delta"].as_str().unwrap().to_string());
        }
    }
    let commands: Vec<_> = deltas.keys().filter(|(_, kind)| kind == "command_output_delta").cloned().collect();
    assert!(!commands.is_empty());
    for (item, kind) in commands {
        assert_eq!(deltas[&(item.clone(), kind)], deltas[&(item.clone(), "tool_output_delta".into())], "{item}");
    }
}

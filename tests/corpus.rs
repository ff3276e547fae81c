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
            summary.terminal_in_stream || dialect == Dialect::BaseContext,
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

//! agentgate translates the JSON Lines event streams of AI coding agents from one agent's
//! dialect into another's, through one canonical event model.
//!
//! ```text
//! bytes ─▶ framing ─▶ Decoder<dialect> ─▶ canonical Event ─▶ Normalizer ─▶ Encoder<dialect> ─▶ bytes
//! ```
//!
//! - [`json`]: the fast JSON layer (lines read as raw members, strings kept escaped, each
//!   agent's writer's layout); it imports nothing else of the crate.
//! - [`model`]: the canonical model, on [`json`] alone; it knows no dialect.
//! - [`codec`]: the seams (the [`Dialect`] names, the decode and encode traits, the records
//!   and the run's context that pass through them).
//! - [`dialect`]: the registry and one folder per dialect, decoder and encoder side by side.
//! - [`normalize`]: the usage ledger, id synthesis, outcome and terminal handling.
//! - [`contract`]: the dialects' contracts, embedded from `mappings/`.
//! - [`pipeline`]: the streaming translator.
//!
//! The library never prints: diagnostics and reports are values the caller shows.
//!
//! ```
//! use agentgate::{translate_bytes, Dialect, Options};
//!
//! let adal = br#"{"type":"answer","content":"Done."}
//! {"type":"complete","exit_code":0,"session_id":"s-1","model":"m"}
//! "#;
//! let (out, summary, diagnostics) = translate_bytes(adal, &Options::new(None, Dialect::Localcode));
//! assert_eq!(summary.source, Some(Dialect::Adal));
//! assert!(diagnostics.is_empty());
//! assert_eq!(
//!     String::from_utf8(out).unwrap(),
//!     "{\"type\": \"stream_start\"}\n\
//!      {\"type\": \"content\", \"chunk\": \"Done.\", \"chars\": \"5\"}\n\
//!      {\"type\": \"result\", \"status\": \"ok\", \"exit_code\": 0, \"reason\": \"completed\", \
//!      \"final_text\": \"Done.\", \"tokens\": {\"prompt\": 0, \"completion\": 0, \"total\": 0}}\n"
//! );
//! ```
//!
//! Which agent wrote a stream, told from its first lines:
//!
//! ```
//! let codex = br#"{"type":"thread.started","thread_id":"t-1"}"#;
//! assert_eq!(agentgate::pipeline::detect(&codex[..]), Ok(agentgate::Dialect::Codex));
//! ```
//!
//! Whether a stream keeps its dialect's contract (each finding names its line and rule):
//!
//! ```
//! use agentgate::contract::Severity;
//!
//! let adal = b"{\"type\":\"answer\",\"content\":\"Done.\"}\n";
//! let mut problems = Vec::new();
//! let dialect = agentgate::pipeline::validate(&adal[..], None, &mut |f| {
//!     if f.severity == Severity::Problem {
//!         problems.push(f.message)
//!     }
//! });
//! assert_eq!(dialect, Ok(agentgate::Dialect::Adal));
//! assert!(problems.iter().any(|p| p.contains("complete")), "adal's run ends with `complete`: {problems:?}");
//! ```
//!
//! One run's figures, whatever its dialect (what `agentgate summary` prints per file):
//!
//! ```
//! use agentgate::summary::summarize;
//!
//! let localcode = br#"{"type": "result", "status": "ok", "exit_code": 0, "reason": "completed", "final_text": "ok", "tokens": {"prompt": 12, "completion": 3, "total": 15}}"#;
//! let run = summarize(&localcode[..], "run.jsonl", None, false);
//! assert_eq!(run.outcome, Some(agentgate::model::Outcome::Completed));
//! assert_eq!((run.tokens.input, run.tokens.output), (Some(12), Some(3)));
//! ```

pub mod codec;
pub mod contract;
pub mod dialect;
pub mod framing;
pub mod json;
pub mod model;
pub mod normalize;
pub mod pipeline;
pub mod readahead;
pub mod report;
pub mod summary;

pub use codec::Dialect;
pub use pipeline::{one_line, translate, translate_bytes, Diagnostic, Options, Stop, Summary};

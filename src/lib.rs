//! agentgate translates the JSON Lines event streams of AI coding agents from one agent's
//! dialect into another's, through one canonical event model.
//!
//! ```text
//! bytes ─▶ framing ─▶ Decoder<dialect> ─▶ canonical Event ─▶ Normalizer ─▶ Encoder<dialect> ─▶ bytes
//! ```
//!
//! The API: [`translate`] (any [`Input`]: an `io::Read` is one) and [`translate_bytes`] and
//! [`translate_str`] for a stream in memory, with [`Options`]; [`detect`], [`validate`] and
//! [`summarize`]; the [`Dialect`] names; the canonical [`model`]; [`Error`] and the
//! [`Diagnostic`]s a stream gives. The library never prints: diagnostics and reports are values
//! the caller shows. The layers under it (see CONTRIBUTING.md): the JSON layer, the model, the
//! seams between decoders, the normalizer and encoders, one folder per dialect, the pipeline.
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
//! assert_eq!(agentgate::detect(&codex[..]), Ok(agentgate::Dialect::Codex));
//! ```
//!
//! Whether a stream keeps its dialect's contract (each finding names its line and rule):
//!
//! ```
//! use agentgate::Severity;
//!
//! let adal = b"{\"type\":\"answer\",\"content\":\"Done.\"}\n";
//! let mut problems = Vec::new();
//! let dialect = agentgate::validate(&adal[..], None, &mut |f| {
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
//! use agentgate::summarize;
//!
//! let localcode = br#"{"type": "result", "status": "ok", "exit_code": 0, "reason": "completed", "final_text": "ok", "tokens": {"prompt": 12, "completion": 3, "total": 15}}"#;
//! let run = summarize(&localcode[..], "run.jsonl", None, false);
//! assert_eq!(run.outcome, Some(agentgate::Outcome::Completed));
//! assert_eq!((run.tokens.input, run.tokens.output), (Some(12), Some(3)));
//! ```

// Every public item says what it is (#59: the crate docs).
#![warn(missing_docs)]

pub mod error;
pub mod model;

// The binary's, the benchmarks' and the tests' way in to the machinery: not part of the API,
// and free to change (the API is what this page shows).
#[doc(hidden)]
pub mod codec;
#[doc(hidden)]
pub mod contract;
#[doc(hidden)]
pub mod dialect;
#[doc(hidden)]
pub mod io;
#[doc(hidden)]
pub mod json;
#[doc(hidden)]
pub mod normalize;
#[doc(hidden)]
pub mod passthrough;
#[doc(hidden)]
pub mod pipeline;
#[doc(hidden)]
pub mod report;
#[doc(hidden)]
pub mod shell;
#[doc(hidden)]
pub mod summary;
#[doc(hidden)]
pub mod validate;
#[doc(hidden)]
pub mod view;

pub use codec::{Dialect, EncodeOptions, Semconv};
pub use contract::{Finding, Severity};
pub use error::{Diagnostic, Error, Stop};
pub use io::framing::Input;
pub use model::Outcome;
pub use pipeline::{detect, translate, translate_bytes, translate_str, Options, Summary};
pub use report::Report;
pub use summary::{summarize, totals, RunSummary, ToolCalls, ToolCount};
pub use validate::validate;

//! agentgate translates the JSON Lines event streams of AI coding agents from one agent's
//! dialect into another's, through one canonical event model.
//!
//! ```text
//! bytes ─▶ framing ─▶ Decoder<dialect> ─▶ canonical Event ─▶ Normalizer ─▶ Encoder<dialect> ─▶ bytes
//! ```
//!
//! - [`event`]: the canonical model; it knows no dialect.
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

pub mod contract;
pub mod dialect;
pub mod event;
pub mod extra;
pub mod framing;
pub mod json;
pub mod normalize;
pub mod object;
pub mod pipeline;
pub mod readahead;
pub mod report;
mod scan;
pub mod summary;
pub mod text;

pub use dialect::Dialect;
pub use pipeline::{one_line, translate, translate_bytes, Diagnostic, Options, Stop, Summary};

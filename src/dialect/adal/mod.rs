//! adal: `adal -q Q -o stream-json`, spec in `shared/dialects/adal.md`, contract in
//! `mappings/adal.json`.
//!
//! Compact NDJSON with six kinds: `tool_call {id, name, args}`, `tool_result {id, name, status,
//! output}` (matched to its call by id, never by order), `permission_denied {id, name, args,
//! reason}` (the run stops there: no tool events after it, and `complete` has exit code 2),
//! `answer {content}` (before `complete`), `error {message}`, and `complete {exit_code,
//! session_id, model}`, always last. Exit codes: 0 success, 1 failure, 2 approval needed. adal
//! reports no usage and no streaming text.

mod decode;
mod encode;

pub use decode::Decoder;
pub use encode::Encoder;

use serde_json::{Map, Value};

use crate::codec::{Dialect, Sniff};
use crate::dialect::util::own_kind;

pub fn sniff(line: &Map<String, Value>) -> Sniff {
    let Some(kind) = line.get("type").and_then(Value::as_str) else {
        return Sniff::No;
    };
    match kind {
        k if own_kind(Dialect::Adal, k) => Sniff::Yes,
        "tool_call" if line.contains_key("args") || line.contains_key("id") => Sniff::Yes,
        // adal's result names its call by `id` (the older generation, with no `id`, by `name`
        // beside its `status`); a result with `tool_id` is Gemini CLI's, localcode's has `index`.
        "tool_result"
            if !line.contains_key("index")
                && !line.contains_key("tool_id")
                && (line.contains_key("id") || (line.contains_key("status") && line.contains_key("name"))) =>
        {
            Sniff::Yes
        }
        "error" if line.contains_key("message") => Sniff::Maybe,
        _ => Sniff::No,
    }
}

//! claude-code: `claude -p --output-format stream-json --verbose`, spec in
//! `shared/dialects/claude-code.md`, contract in `mappings/claude-code.json`.
//!
//! `system`/`init` first (session, cwd, model, tools), then `assistant` lines (one per content
//! block of a Messages-API message; the lines of one message share its `message.id` and its
//! placeholder usage), `user` lines with the `tool_result` blocks that answer `tool_use` blocks
//! by id, optional `stream_event` partials, and `result` lines (several in a run are folded).
//! Usage: `input_tokens` excludes the cache figures; the run's totals are the folded `result`'s
//! `usage`, never added to `modelUsage`.

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
    let subtype = line.get("subtype").and_then(Value::as_str);
    match kind {
        // claude-code.md, Lines: 'SessionStart system/hook_* lines may precede system/init;
        // otherwise init is first'. Detection reads a stream's first lines: a `system` line of
        // another subtype there is another agent's (Qwen Code's stream, shaped like this one,
        // opens with `session_start`).
        "system" if subtype.is_some_and(|s| s != "init" && !s.starts_with("hook_")) => Sniff::Against,
        k if own_kind(Dialect::ClaudeCode, k) => Sniff::Yes,
        "system" | "assistant" | "user" if line.contains_key("session_id") || line.contains_key("subtype") => {
            Sniff::Yes
        }
        "assistant" | "user" if line.get("message").is_some_and(Value::is_object) => Sniff::Yes,
        "result" if line.contains_key("subtype") || line.contains_key("is_error") || line.contains_key("num_turns") => {
            Sniff::Yes
        }
        _ => Sniff::No,
    }
}

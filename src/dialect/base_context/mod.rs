//! base-context: `base-context --mode json [--json-deltas] PROMPT` (a pi-style TypeScript agent),
//! spec in `shared/dialects/base-context.md`, the real shapes in `base-context-notes.md`,
//! contract in `mappings/base-context.json`.
//!
//! A session header line first, then every session event as `JSON.stringify` writes it:
//! `agent_start`/`agent_end` around each agent loop (several per stream: retries, compaction,
//! several prompts), `turn_start`/`turn_end` around each model request, `message_start`/
//! `message_update`/`message_end` for user, assistant, toolResult and custom messages,
//! `tool_execution_start`/`_update`/`_end`, compaction and retry events. Usage is on each
//! assistant message, per request; its `input` excludes cache reads and writes. There is no
//! terminal record: the run's outcome is the last assistant message's `stopReason` (and the
//! process exit status). With `--json-deltas`, assistant message events carry a `messageId` and
//! updates only the delta, not the whole message.

mod copy;
mod decode;
mod encode;

pub use decode::Decoder;
pub use encode::Encoder;

use serde_json::{Map, Value};

use crate::codec::{Dialect, Sniff};
use crate::dialect::util::own_kind;
use crate::json::member::Member;
use crate::json::object::Object;
use crate::model::Text;

/// The members of an assistant message that the canonical model holds: what the decoder does
/// not keep as the message's own, and what the encoder writes of every message.
pub(crate) const MESSAGE_MEMBERS: [&str; 9] =
    ["role", "content", "api", "provider", "model", "usage", "stopReason", "errorMessage", "timestamp"];

pub fn sniff(line: &Map<String, Value>) -> Sniff {
    let Some(kind) = line.get("type").and_then(Value::as_str) else {
        return Sniff::No;
    };
    match kind {
        k if own_kind(Dialect::BaseContext, k) => Sniff::Yes,
        "turn_end" if line.contains_key("message") || line.contains_key("toolResults") => Sniff::Yes,
        _ => Sniff::No,
    }
}

/// [`content_text`] read from `content` as it came, the text kept as read (a tool's output is
/// most of a base-context stream): no tree is built for the blocks.
pub(crate) fn content_kept(content: Option<Member<'_>>) -> Text {
    let Some(content) = content else { return Text::default() };
    if let Member::Raw(raw, as_is) = content {
        if let Some(inner) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
            return Text::from_json_inner_known(inner, as_is);
        }
        if let Some(blocks) = Object::list_vouched(raw) {
            let mut text = Text::default();
            for mut block in blocks.into_iter().flatten() {
                if block.get_str("type").as_deref() == Some("text") {
                    if let Some(t) = block.take_kept_str("text") {
                        text.push(&t);
                    }
                }
            }
            return text;
        }
    }
    content_text(&content.into_value()).into()
}

/// The text of a message's `content`: a string, or the `text` of its text blocks joined.
pub(crate) fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

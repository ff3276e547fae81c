//! wuu: `wuu exec --json` (a Go agent), spec in `shared/dialects/wuu.md`, contract in
//! `mappings/wuu.json`.
//!
//! One object per line, written by Go's `json.Encoder` on a map: keys sorted, `<>&` escaped.
//! A run is a thread (`thread_started`, after `session_configured`) of turns (`turn_started` ...
//! `turn_completed`/`turn_failed`/`turn_interrupted`); `result` ends the run. Progress events
//! carry `thread_id` and `turn_id`; tool events an `item_id`. Usage comes as cumulative
//! snapshots per turn (`usage_updated`: the latest counts, never the sum), and `turn_completed`
//! states the turn's final input and output counts. Text streams as `agent_message_delta`, and
//! `agent_message_final` *replaces* the accumulated text. Tool arguments are JSON text. A bash
//! call is reported twice, as `tool_*` and `command_*` events for the same item: one call.

mod decode;
mod encode;

pub use decode::Decoder;
pub use encode::Encoder;

use serde_json::{Map, Value};

use crate::codec::{Dialect, Sniff};
use crate::dialect::util::own_kind;

/// Which of the run's ids the encoder writes on a line of a kind, from its own state. The
/// decoder drops ones naming the current thread and turn there, and only there: on the other
/// lines (session_configured, error, subagent, provider_state, request_context, kinds wuu may
/// add) they are the line's own members and stay, as any unknown member does.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ids {
    None,
    Thread,
    Turn,
}

fn ids(kind: &str) -> Ids {
    match kind {
        "thread_started" | "thread_resumed" | "thread_forked" | "result" => Ids::Thread,
        "turn_started"
        | "agent_message_delta"
        | "agent_message_final"
        | "usage_updated"
        | "turn_completed"
        | "turn_failed"
        | "turn_interrupted"
        | "file_changed"
        | "todo_updated" => Ids::Turn,
        k if k.starts_with("tool_") || k.starts_with("command_") => Ids::Turn,
        _ => Ids::None,
    }
}

pub fn sniff(line: &Map<String, Value>) -> Sniff {
    let Some(kind) = line.get("type").and_then(Value::as_str) else {
        return Sniff::No;
    };
    match kind {
        k if own_kind(Dialect::Wuu, k) => Sniff::Yes,
        "result"
            if line.contains_key("final_message") || line.contains_key("thread_id") || line.contains_key("run_id") =>
        {
            Sniff::Yes
        }
        "error" if line.contains_key("retrying") => Sniff::Yes,
        _ => Sniff::No,
    }
}

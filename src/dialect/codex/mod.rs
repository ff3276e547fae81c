//! codex: `codex exec --json`, spec in `shared/dialects/codex.md`, contract in
//! `mappings/codex.json`.
//!
//! One turn of a thread per process: `thread.started {thread_id}`, `turn.started`, items as
//! `item.started` / `item.updated` (the item's whole state again, not a delta) /
//! `item.completed {item: {id, type, ...}}`, then `turn.completed {usage}`, `turn.failed
//! {error}` or nothing at all (an interrupt, a kill, a stall). No closing record holds the
//! outcome or the final text: the answer is the last `agent_message`. `error` lines are not
//! fatal. Usage is the thread's running total (a resumed thread's includes its earlier turns),
//! and its `input_tokens` includes the cached and cache-written ones.

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
        k if own_kind(Dialect::Codex, k) => Sniff::Yes,
        "error" if line.len() == 2 && line.contains_key("message") => Sniff::Maybe,
        _ => Sniff::No,
    }
}

/// The tool name a command item is read as, and the names written back as one.
pub(crate) const COMMAND: &str = "command_execution";

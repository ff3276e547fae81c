//! loom: `b10x-loom run --output jsonl` (a Rust orchestrator), spec in `shared/dialects/loom.md`,
//! contract in `mappings/loom.json`.
//!
//! Every line carries `schema_version` (1; a reader refuses a version it does not know) and
//! `kind`: `Route`, `Turn`, `ToolCall`, `Usage`, `Approval`, `Session` or `Terminal`. Members are
//! sorted at every depth, a field the run does not have is absent (never null, never a made-up
//! zero), integers are integers. `Usage` is per turn, and `final_usage: false` marks a partial
//! snapshot that a later one supersedes. A `Session` line summarizes a whole agent session run
//! inside the loom run: its turns, tool calls and usage are in it, not in Turn, ToolCall or
//! Usage lines. `Terminal` is the last line, exactly once, its `exit_status` following its
//! `stop_reason` (0 Completed and ApprovalRequired, 3 any other stop, 1 a failed run with
//! `error` and no stop reason); `Approval` comes just before it when approval is awaited.
//!
//! A run from another agent is written as that agent's session: one `Session` line, then the
//! `Terminal` (and the `Approval` before it when approval was needed).

mod decode;
mod encode;

pub use decode::Decoder;
pub use encode::Encoder;

use serde_json::{Map, Value};

use crate::codec::Sniff;

/// The format version written, and the only one read.
pub const SCHEMA_VERSION: u64 = 1;

/// A stop reason loom lists (the contract's decode table) other than Completed and
/// ApprovalRequired: a run that stopped for it is incomplete, with exit status 3.
pub fn other_stop(reason: &str) -> bool {
    crate::Dialect::Loom.contract().decode_outcome("stop_reason", reason) == Some(crate::model::Outcome::Incomplete)
}

pub fn sniff(line: &Map<String, Value>) -> Sniff {
    if line.contains_key("schema_version")
        && line.get("kind").is_some_and(Value::is_string)
        && !line.contains_key("type")
    {
        Sniff::Yes
    } else {
        Sniff::No
    }
}

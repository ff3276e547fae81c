//! localcode: `localcode run --goal G --json` (a Python agent), spec in
//! `shared/dialects/localcode.md`, contract in `mappings/localcode.json`.
//!
//! One object per line, `{"type": ..., payload...}`, written by `json.dumps(obj,
//! ensure_ascii=False)`: spaced separators, raw UTF-8. Counts (`index`, `chars`, the three
//! `turn_tokens` figures) are strings of digits and `thinking_start.reset` is `"true"`/`"false"`;
//! only the final `result` line has integer tokens, which are the sum of the `turn_tokens`
//! lines. Text fields have length limits (content and thinking chunks 2000 characters, tool
//! result 4000, `thinking_done` 8000, peek 120, error 240). Tool calls have an index, no id.
//! `result` is always the last line; its `status` is `ok` or `incomplete`, the exit code telling
//! timeout (124) and interrupt (130) apart.
//!
//! A later generation of the stream (`run_start`, `round_start`/`round_end`, `turn_end`) is read
//! when present and written back only to localcode itself.

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
        k if own_kind(Dialect::Localcode, k) => Sniff::Yes,
        "result"
            if line.contains_key("exit_code") || line.contains_key("final_text") || line.contains_key("tokens") =>
        {
            Sniff::Yes
        }
        "tool_result" if line.contains_key("index") => Sniff::Yes,
        "turn_end" if line.contains_key("completion_status") => Sniff::Yes,
        "error" if line.contains_key("message") => Sniff::Maybe,
        _ => Sniff::No,
    }
}

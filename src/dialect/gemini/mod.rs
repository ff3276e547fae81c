//! gemini: `gemini -p PROMPT --output-format stream-json` (Gemini CLI), spec in
//! `shared/dialects/gemini.md` and `gemini-notes.md`, contract in `mappings/gemini.json`.
//!
//! One compact `JSON.stringify` object a line, `type` and `timestamp` (ISO 8601, UTC, with
//! milliseconds) first: `init {session_id, model}` once, first (`model` is `"auto"` when a
//! router picks per request); the user `message {role: "user", content}`; assistant text only
//! as `message {role: "assistant", content, delta: true}` chunks, never a closing full message
//! (the answer is the chunks after the last tool result); `tool_use {tool_name, tool_id,
//! parameters}`; `tool_result {tool_id, status, output?, error?}`, which names no tool (its
//! `tool_id` is `<tool_name>__<id>` since v0.43); non-fatal `error {severity, message}` lines;
//! and at most one `result {status, error?, stats}`, last. A shell command that exits non-zero
//! is a `success` call; edit and write tools give no output.
//!
//! The only usage is `result.stats`, one snapshot for the whole process and every model it
//! called, the `auto` router's included (`stats.models`): `input_tokens` includes `cached`,
//! `output_tokens` leaves thoughts out, which `total_tokens` holds. How the run ended needs the
//! exit status as well as the stream: an API error exits with its HTTP status & 255, a run
//! with no usable answer writes an `error` result without an `error` member and exits 0, and a
//! signal leaves no `result` at all and exits 0 (an interrupt, not a success); `exec` reads
//! that last rule from the contract (`exit_without_terminal`).

mod decode;
mod encode;

pub use decode::Decoder;
pub use encode::Encoder;

use serde_json::{Map, Value};

use crate::codec::Sniff;

/// A line's `timestamp` is a string, as on every line Gemini CLI writes.
fn stamped(line: &Map<String, Value>) -> bool {
    line.get("timestamp").is_some_and(Value::is_string)
}

/// Whether a line is Gemini CLI's: its kind with the members that kind has (several of the
/// kinds are other agents' words too: opencode's `tool_use` holds a `part`, adal's and
/// localcode's `tool_result` an `id` or `index`, Claude Code's `result` a `subtype`), and the
/// `timestamp` every line carries. The members without the timestamp fit, and no more.
pub fn sniff(line: &Map<String, Value>) -> Sniff {
    let Some(kind) = line.get("type").and_then(Value::as_str) else {
        return Sniff::No;
    };
    let s = |k: &str| line.get(k).is_some_and(Value::is_string);
    let word = |k: &str, words: &[&str]| line.get(k).and_then(Value::as_str).is_some_and(|w| words.contains(&w));
    let fits = match kind {
        "init" => s("session_id") && s("model"),
        "message" => word("role", &["user", "assistant"]) && s("content"),
        "tool_use" => s("tool_name") && s("tool_id") && line.get("parameters").is_some_and(Value::is_object),
        "tool_result" => s("tool_id") && word("status", &["success", "error"]) && !line.contains_key("id"),
        "error" => word("severity", &["warning", "error"]) && s("message"),
        "result" => {
            word("status", &["success", "error"])
                && (line.get("stats").is_some_and(Value::is_object) || line.get("error").is_some_and(Value::is_object))
                && !line.contains_key("subtype")
        }
        _ => false,
    };
    match (fits, stamped(line)) {
        (true, true) => Sniff::Yes,
        (true, false) => Sniff::Maybe,
        _ => Sniff::No,
    }
}

/// The text of a timestamp Gemini CLI writes (`new Date().toISOString()`): `YYYY-MM-DDTHH:MM:
/// SS.sssZ`, which sorts as the time it states.
pub(crate) fn is_iso_millis(t: &str) -> bool {
    let b = t.as_bytes();
    b.len() == 24
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 | 16 => *c == b':',
            19 => *c == b'.',
            23 => *c == b'Z',
            _ => c.is_ascii_digit(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sniffed(v: Value) -> Sniff {
        sniff(v.as_object().unwrap())
    }

    #[test]
    fn each_kind_with_its_members_and_timestamp_is_gemini() {
        let t = "2026-11-02T09:14:03.118Z";
        for line in [
            json!({"type": "init", "timestamp": t, "session_id": "s", "model": "auto"}),
            json!({"type": "message", "timestamp": t, "role": "assistant", "content": "Hi", "delta": true}),
            json!({"type": "tool_use", "timestamp": t, "tool_name": "read_file", "tool_id": "read_file__a", "parameters": {}}),
            json!({"type": "tool_result", "timestamp": t, "tool_id": "read_file__a", "status": "success"}),
            json!({"type": "error", "timestamp": t, "severity": "warning", "message": "Loop detected"}),
            json!({"type": "result", "timestamp": t, "status": "success", "stats": {}}),
        ] {
            assert_eq!(sniffed(line.clone()), Sniff::Yes, "{line}");
        }
    }

    #[test]
    fn other_agents_lines_of_the_same_kinds_are_not_gemini() {
        for line in [
            // opencode's `run --format json`
            json!({"type": "tool_use", "timestamp": 1768191337567u64, "sessionID": "ses_1", "part": {"tool": "bash"}}),
            // adal's and localcode's results
            json!({"type": "tool_result", "id": "a", "name": "bash", "status": "completed", "output": ""}),
            json!({"type": "tool_result", "index": "0", "name": "bash", "output": "", "error": "false"}),
            // Claude Code's (and Qwen Code's) result
            json!({"type": "result", "subtype": "success", "is_error": false, "result": "ok"}),
            json!({"type": "error", "message": "x"}),
        ] {
            assert_eq!(sniffed(line.clone()), Sniff::No, "{line}");
        }
    }

    #[test]
    fn timestamps_are_read_in_the_form_date_to_iso_string_writes() {
        assert!(is_iso_millis("2026-12-06T18:56:30.193Z"));
        assert!(!is_iso_millis("2026-12-06T18:56:30Z"));
        assert!(!is_iso_millis("2026-12-06 18:56:30.193Z"));
        assert!(!is_iso_millis("1773655923530"));
    }
}

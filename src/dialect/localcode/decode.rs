//! Reading localcode: counts written as strings read as numbers (with a diagnostic where one is
//! no count), tool calls matched by index, `result` as the terminal record.

use serde_json::Value;

use crate::codec::{Decode, Decoded, Dialect, LineError, Record};
use crate::contract::Contract;
use crate::dialect::util::{take_count_noted, take_type};
use crate::json::char_len;
use crate::json::object::Object;
use crate::model::{
    Arguments, Basis, Event, Outcome, Scope, Session, Terminal, Tokens, ToolCall, ToolDraft, ToolResult, ToolStatus,
    Usage,
};

pub struct Decoder {
    contract: &'static Contract,
    /// Whether `turn_tokens` lines came: then the result's tokens are their sum, not news.
    saw_turn_tokens: bool,
}

impl Decoder {
    pub fn new() -> Self {
        Decoder { contract: Dialect::Localcode.contract(), saw_turn_tokens: false }
    }

    fn outcome(&self, status: &str, exit_code: Option<i64>, reason: Option<&str>) -> Outcome {
        let c = self.contract;
        c.decode_outcome("status", status)
            .or_else(|| exit_code.and_then(|e| c.decode_outcome("exit_code", &e.to_string())))
            .or_else(|| reason.and_then(|r| c.decode_outcome("reason", r)))
            .unwrap_or(Outcome::Incomplete)
    }
}

impl Decoder {
    /// A result whose exit code is not the one its status means. The status wins: it is what
    /// localcode's reader branches on, and the exit code is derived from it.
    fn disagreement(&self, status: &str, exit_code: Option<i64>) -> Option<String> {
        let code = exit_code?;
        let implied = match self.contract.decode_outcome("status", status) {
            Some(o) => self.contract.outcome_code(o, "exit_code"),
            None if status == "incomplete" && code == 0 => Some(1),
            None => None,
        }?;
        (implied != code).then(|| {
            format!("result has status \"{status}\" but exit_code {code} (the status means {implied}); the status is followed")
        })
    }
}

impl Default for Decoder {
    fn default() -> Self {
        Self::new()
    }
}

fn text(m: &mut Object<'_>, key: &str) -> String {
    m.take_str(key).unwrap_or_default()
}

/// `"-1"` (or anything negative) means the call is unknown.
fn index(m: &mut Object<'_>) -> Option<u64> {
    m.take_int("index").and_then(|i| u64::try_from(i).ok())
}

/// `tool_result`: a call's result, failed as its status word or its error flag says (the
/// run_start generation states a status word where the spec's has the flag).
fn tool_result(m: &mut Object<'_>, out: &mut Decoded) -> Event {
    let id = m.take_name("id").or_else(|| m.take_name("call_id"));
    let name = m.take_name("name");
    let args = m.take_str("args");
    let index = index(m);
    let output = m.take_kept("result").or_else(|| m.take_kept("output"));
    // The run_start generation states a status word ("error" for a failed call)
    // where the spec's generation has the error flag.
    let status = m.take_str("status");
    let cancelled = matches!(status.as_deref(), Some("cancelled" | "canceled"));
    let failed = match (status.as_deref(), m.take_bool("error")) {
        (Some(s), _) => !matches!(s, "ok" | "success" | "completed"),
        (None, Some(failed)) => failed,
        (None, None) => {
            if let Some(v) = m.get("error") {
                out.warn(format!(
                    "tool_result has error {}, neither \"true\" nor \"false\"; read as not failed",
                    v.to_value()
                ));
            }
            false
        }
    };
    Event::ToolResult(ToolResult {
        id,
        index,
        name,
        status: match (cancelled, failed) {
            (true, _) => ToolStatus::Cancelled,
            (false, true) => ToolStatus::Failed,
            (false, false) => ToolStatus::Completed,
        },
        output,
        error: None,
        arguments: args.map(Arguments::text).unwrap_or_default(),
    })
}

impl Decoder {
    /// `result`: the final text, then the terminal record, with what localcode writes back kept.
    fn result(&self, m: &mut Object<'_>, out: &mut Decoded) -> Event {
        let status = text(m, "status");
        let exit_code = m.take_int("exit_code");
        let reason = m.take_str("reason");
        if let Some(final_text) = m.take_str("final_text") {
            out.push(Record::new(Dialect::Localcode, Event::FinalAnswer { text: final_text }));
        }
        let outcome = self.outcome(&status, exit_code, reason.as_deref());
        if let Some(why) = self.disagreement(&status, exit_code) {
            out.warn(why);
        }
        // A status word the encoder would not write for this outcome (the notes' `error`,
        // `timeout`, `interrupted`) is kept, so that localcode gets it back; one the contract
        // does not list (none at all, a word of no generation) is not: the encoder writes the
        // outcome's word.
        let listed = self.contract.allows("result", "status", &status);
        if listed && status != self.contract.outcome_str(outcome, "status").unwrap_or("incomplete") {
            m.insert("status", Value::String(status));
        }
        let mut t = Terminal::new(outcome);
        t.exit_code = exit_code;
        t.reason = reason;
        if let Some(Value::Object(tokens)) = m.shift_remove("tokens") {
            if tokens.keys().any(|k| !matches!(k.as_str(), "prompt" | "completion" | "total")) {
                // Members of its own beside the three counts: the object is kept whole,
                // for localcode to get it back.
                m.insert("tokens", Value::Object(tokens.clone()));
            }
            let mut tokens = Object::from(tokens);
            if !self.saw_turn_tokens {
                t.usage = Some(Tokens {
                    input: tokens.take_count("prompt"),
                    output: tokens.take_count("completion"),
                    total: tokens.take_count("total"),
                    ..Tokens::default()
                });
            }
        }
        Event::Terminal(t)
    }
}

impl Decode for Decoder {
    fn decode(&mut self, mut m: Object<'_>, out: &mut Decoded) -> Result<(), LineError> {
        let kind = take_type(&mut m)?;
        let event = match kind.as_ref() {
            "thinking_start" => Event::ReasoningStart { reset: m.take_bool("reset") },
            "thinking_chunk" => Event::ReasoningDelta { text: text(&mut m, "chunk") },
            "thinking_peek" => Event::ReasoningPeek { text: text(&mut m, "text") },
            "thinking_done" => Event::ReasoningEnd { text: m.take_str("text") },
            "stage" => Event::Stage { name: text(&mut m, "stage") },
            "stream_start" => Event::TextStart,
            "content" => {
                let text = text(&mut m, "chunk");
                // `chars` is the chunk's length before the emitter cut it; keep it only when
                // it says more than the chunk itself.
                let chars = m.take_count("chars").filter(|&n| n != char_len(&text));
                Event::TextDelta { text, chars }
            }
            "tool_preview" => Event::ToolDraft(ToolDraft {
                name: m.take_str("name"),
                chars: m.take_count("chars"),
                snippet: m.take_str("snippet"),
                ..ToolDraft::default()
            }),
            "tool_start" => Event::ToolCall(ToolCall {
                id: None,
                name: m.take_name("name").unwrap_or_default(),
                arguments: Arguments::text(text(&mut m, "args")),
                index: index(&mut m),
                id_made: false,
            }),
            // The run_start generation's name for a call that was sent (localcode-notes.md):
            // read as tool_start is, and its arguments also as a JSON value where given so.
            "tool_call" => {
                let arguments = match m.get_value("args").or_else(|| m.get_value("arguments")) {
                    Some(Value::String(t)) => Arguments::text(t),
                    Some(v) => Arguments::value(v),
                    None => Arguments::default(),
                };
                m.remove("args");
                m.remove("arguments");
                Event::ToolCall(ToolCall {
                    id: m.take_name("id").or_else(|| m.take_name("call_id")),
                    name: m.take_name("name").unwrap_or_default(),
                    arguments,
                    index: index(&mut m),
                    id_made: false,
                })
            }
            "tool_result" => tool_result(&mut m, out),
            "turn_tokens" => {
                self.saw_turn_tokens = true;
                // localcode reads a count it cannot parse as 0; so does this, and says so.
                let mut count = |key, read_as| take_count_noted(&mut m, "turn_tokens", key, read_as, out);
                let input = count("prompt_tokens", "0").unwrap_or(0);
                let output = count("completion_tokens", "0").unwrap_or(0);
                let mut total = count("total_tokens", "none");
                if total == Some(0) && input.saturating_add(output) > 0 {
                    // A total of 0 beside counts that are not is one the server did not give
                    // (localcode's result then counts prompt + completion): not stated, and the
                    // "0" kept as written for localcode to write back.
                    total = None;
                    m.insert("total_tokens", Value::from("0"));
                }
                Event::Usage(Usage {
                    scope: Scope::Round,
                    basis: Basis::Delta,
                    final_: true,
                    of: None,
                    model: None,
                    tokens: Tokens { input: Some(input), output: Some(output), total, ..Tokens::default() },
                })
            }
            "notice" => Event::Notice { text: text(&mut m, "text") },
            "error" => Event::Error { message: text(&mut m, "message"), fatal: true },
            "done" => Event::TurnEnd { id: None, status: None, reason: None },
            "turn_end" => Event::TurnEnd {
                id: None,
                status: m.take_str("completion_status"),
                reason: m.take_str("loop_exit_reason"),
            },
            "round_start" => Event::RoundStart { id: None, index: m.take_count("round_idx") },
            // The project log's turn start (localcode.md: written only to .localcode/events.jsonl),
            // met in streams of the run_start generation.
            "turn_start" => Event::TurnStart { id: m.take_str("turn_id") },
            "round_end" => Event::RoundEnd { id: None, stop: None },
            "run_start" => {
                let version = m.get_str("schema_version").unwrap_or_default();
                if version.split('.').next() != Some("1") {
                    return Err(LineError::fatal(format!(
                        "localcode run_start has schema_version \"{version}\"; this agentgate reads major version 1 only, so the stream is refused"
                    )));
                }
                Event::Session(Session {
                    run_id: m.take_str("run_id"),
                    version: m.take_str("localcode_version"),
                    ..Session::default()
                })
            }
            "result" => self.result(&mut m, out),
            _ => {
                let line = crate::dialect::util::whole_line(kind, m);
                return {
                    out.push(Record::new(Dialect::Localcode, Event::Extension { line }));
                    Ok(())
                };
            }
        };
        let extra = out.extra(m);
        out.push(Record::with_extra(Dialect::Localcode, event, extra));
        Ok(())
    }
}

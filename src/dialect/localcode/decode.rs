use serde_json::{Map, Value};

use crate::contract::Contract;
use crate::dialect::{take_type, Decode, Decoded, Dialect, LineError, Record};
use crate::event::{
    Arguments, Basis, Event, Outcome, Scope, Session, Terminal, Tokens, ToolCall, ToolDraft, ToolResult, ToolStatus,
    Usage,
};
use crate::json::{char_len, take_bool, take_count, take_int, take_str};

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

fn text(m: &mut Map<String, Value>, key: &str) -> String {
    take_str(m, key).unwrap_or_default()
}

/// `"-1"` (or anything negative) means the call is unknown.
fn index(m: &mut Map<String, Value>) -> Option<u64> {
    take_int(m, "index").and_then(|i| u64::try_from(i).ok())
}

impl Decode for Decoder {
    fn decode(&mut self, mut m: Map<String, Value>, out: &mut Decoded) -> Result<(), LineError> {
        let kind = take_type(&mut m)?;
        let event = match kind.as_str() {
            "thinking_start" => Event::ReasoningStart { reset: take_bool(&mut m, "reset") },
            "thinking_chunk" => Event::ReasoningDelta { text: text(&mut m, "chunk") },
            "thinking_peek" => Event::ReasoningPeek { text: text(&mut m, "text") },
            "thinking_done" => Event::ReasoningEnd { text: take_str(&mut m, "text") },
            "stage" => Event::Stage { name: text(&mut m, "stage") },
            "stream_start" => Event::TextStart,
            "content" => {
                let text = text(&mut m, "chunk");
                // `chars` is the chunk's length before the emitter cut it; keep it only when
                // it says more than the chunk itself.
                let chars = take_count(&mut m, "chars").filter(|&n| n != char_len(&text));
                Event::TextDelta { text, chars }
            }
            "tool_preview" => Event::ToolDraft(ToolDraft {
                name: take_str(&mut m, "name"),
                chars: take_count(&mut m, "chars"),
                snippet: take_str(&mut m, "snippet"),
                ..ToolDraft::default()
            }),
            "tool_start" => Event::ToolCall(ToolCall {
                id: None,
                name: text(&mut m, "name"),
                arguments: Arguments::text(text(&mut m, "args")),
                index: index(&mut m),
            }),
            "tool_result" => {
                let name = take_str(&mut m, "name");
                let args = take_str(&mut m, "args");
                let index = index(&mut m);
                let output = take_str(&mut m, "result");
                let failed = take_bool(&mut m, "error").unwrap_or(false);
                Event::ToolResult(ToolResult {
                    id: None,
                    index,
                    name,
                    status: if failed { ToolStatus::Failed } else { ToolStatus::Completed },
                    output,
                    error: None,
                    arguments: args.map(Arguments::text).unwrap_or_default(),
                })
            }
            "turn_tokens" => {
                self.saw_turn_tokens = true;
                Event::Usage(Usage {
                    scope: Scope::Round,
                    basis: Basis::Delta,
                    final_: true,
                    of: None,
                    model: None,
                    tokens: Tokens {
                        input: Some(take_count(&mut m, "prompt_tokens").unwrap_or(0)),
                        output: Some(take_count(&mut m, "completion_tokens").unwrap_or(0)),
                        total: take_count(&mut m, "total_tokens"),
                        ..Tokens::default()
                    },
                })
            }
            "notice" => Event::Notice { text: text(&mut m, "text") },
            "error" => Event::Error { message: text(&mut m, "message"), fatal: true },
            "done" => Event::TurnEnd { id: None, status: None, reason: None },
            "turn_end" => Event::TurnEnd {
                id: None,
                status: take_str(&mut m, "completion_status"),
                reason: take_str(&mut m, "loop_exit_reason"),
            },
            "round_start" => Event::RoundStart { id: None, index: take_count(&mut m, "round_idx") },
            "round_end" => Event::RoundEnd { id: None, stop: None },
            "run_start" => {
                let version = m.get("schema_version").and_then(Value::as_str).unwrap_or("");
                if version.split('.').next() != Some("1") {
                    return Err(LineError::fatal(format!(
                        "localcode run_start has schema_version \"{version}\"; this agentgate reads major version 1 only, so the stream is refused"
                    )));
                }
                Event::Session(Session {
                    run_id: take_str(&mut m, "run_id"),
                    version: take_str(&mut m, "localcode_version"),
                    ..Session::default()
                })
            }
            "result" => {
                let status = text(&mut m, "status");
                let exit_code = take_int(&mut m, "exit_code");
                let reason = take_str(&mut m, "reason");
                if let Some(final_text) = take_str(&mut m, "final_text") {
                    out.push(Record::new(Dialect::Localcode, Event::FinalAnswer { text: final_text }));
                }
                let outcome = self.outcome(&status, exit_code, reason.as_deref());
                if let Some(why) = self.disagreement(&status, exit_code) {
                    out.warn(why);
                }
                let mut t = Terminal::new(outcome);
                t.exit_code = exit_code;
                t.reason = reason;
                if let Some(Value::Object(mut tokens)) = m.shift_remove("tokens") {
                    if !self.saw_turn_tokens {
                        t.usage = Some(Tokens {
                            input: take_count(&mut tokens, "prompt"),
                            output: take_count(&mut tokens, "completion"),
                            total: take_count(&mut tokens, "total"),
                            ..Tokens::default()
                        });
                    }
                }
                Event::Terminal(t)
            }
            _ => {
                let line = crate::dialect::whole_line(kind, m);
                return {
                    out.push(Record::new(Dialect::Localcode, Event::Extension { line }));
                    Ok(())
                };
            }
        };
        out.push(Record::with_extra(Dialect::Localcode, event, m));
        Ok(())
    }
}

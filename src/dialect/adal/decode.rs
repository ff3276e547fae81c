//! Reading adal: its six kinds into canonical records (tool calls and results matched by id).

use serde_json::Value;

use crate::codec::{Decode, Decoded, Dialect, LineError, Record};
use crate::contract::Contract;
use crate::dialect::util::take_type;
use crate::json::object::Object;
use crate::model::{Arguments, Denial, Event, Outcome, Terminal, ToolCall, ToolResult, ToolStatus};

pub struct Decoder {
    contract: &'static Contract,
}

impl Decoder {
    pub fn new() -> Self {
        Decoder { contract: Dialect::Adal.contract() }
    }
}

impl Default for Decoder {
    fn default() -> Self {
        Self::new()
    }
}

fn args(m: &mut Object<'_>) -> Arguments {
    match m.shift_remove("args") {
        Some(Value::Null) | None => Arguments::default(),
        Some(v) => Arguments::value(v),
    }
}

impl Decode for Decoder {
    fn decode(&mut self, mut m: Object<'_>, out: &mut Decoded) -> Result<(), LineError> {
        let kind = take_type(&mut m)?;
        let event = match kind.as_ref() {
            "tool_call" => Event::ToolCall(ToolCall {
                id: m.take_name("id"),
                index: None,
                name: m.take_name("name").unwrap_or_default(),
                arguments: args(&mut m),
                id_made: false,
            }),
            "tool_result" => {
                let id = m.take_name("id");
                let name = m.take_name("name");
                // Unknown status words stay in `extra`, so adal to adal writes them back.
                let status = match m.get_str("status").as_deref() {
                    None => {
                        out.warn("tool_result without \"status\"; read as completed");
                        ToolStatus::Completed
                    }
                    Some(word) => {
                        match self.contract.decode.get("tool_status").and_then(|t| t.get(word)).and_then(Value::as_str)
                        {
                            Some(known) => {
                                let s = known.parse().unwrap_or(ToolStatus::Failed);
                                m.shift_remove("status");
                                s
                            }
                            None => {
                                out.warn(format!(
                                    "tool_result has status {}, which adal does not list; read as failed",
                                    crate::json::quoted(word)
                                ));
                                ToolStatus::Failed
                            }
                        }
                    }
                };
                let output = m.take_kept("output");
                Event::ToolResult(ToolResult {
                    id,
                    index: None,
                    name,
                    status,
                    output,
                    error: None,
                    arguments: Arguments::default(),
                })
            }
            "permission_denied" => Event::PermissionDenied(Denial {
                id: m.take_str("id"),
                name: m.take_str("name").unwrap_or_default(),
                arguments: args(&mut m),
                reason: m.take_str("reason"),
            }),
            "answer" => Event::FinalAnswer { text: m.take_str("content").unwrap_or_default() },
            "error" => Event::Error { message: m.take_str("message").unwrap_or_default(), fatal: false },
            "complete" => {
                let code = m.take_int("exit_code");
                let outcome = code.and_then(|c| self.contract.decode_outcome("exit_code", &c.to_string()));
                let mut t = Terminal::new(outcome.unwrap_or(Outcome::Incomplete));
                if outcome.is_none() {
                    out.warn(match code {
                        Some(c) => {
                            format!("complete has exit_code {c}, not one of adal's 0, 1, 2; read as an incomplete run")
                        }
                        None => "complete without an integer exit_code; read as an incomplete run".into(),
                    });
                    t.reason = Some(match code {
                        Some(c) => format!("exit code {c}"),
                        None => "complete without an exit code".into(),
                    });
                }
                t.exit_code = code;
                t.session_id = m.take_str("session_id");
                // ("unknown" is what agentgate writes when no dialect said the model.)
                t.model = m.take_str("model").filter(|m| m != "unknown");
                Event::Terminal(t)
            }
            _ => {
                let line = crate::dialect::util::whole_line(kind, m);
                out.push(Record::new(Dialect::Adal, Event::Extension { line }));
                return Ok(());
            }
        };
        let extra = out.extra(m);
        out.push(Record::with_extra(Dialect::Adal, event, extra));
        Ok(())
    }
}

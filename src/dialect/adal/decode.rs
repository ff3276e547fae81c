use serde_json::{Map, Value};

use crate::contract::Contract;
use crate::dialect::{take_type, Decode, Decoded, Dialect, LineError, Record};
use crate::event::{Arguments, Denial, Event, Outcome, Terminal, ToolCall, ToolResult, ToolStatus};
use crate::json::{take_int, take_str};

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

fn args(m: &mut Map<String, Value>) -> Arguments {
    match m.shift_remove("args") {
        Some(Value::Null) | None => Arguments::default(),
        Some(v) => Arguments::value(v),
    }
}

impl Decode for Decoder {
    fn decode(&mut self, mut m: Map<String, Value>, out: &mut Decoded) -> Result<(), LineError> {
        let kind = take_type(&mut m)?;
        let event = match kind.as_str() {
            "tool_call" => Event::ToolCall(ToolCall {
                id: take_str(&mut m, "id"),
                index: None,
                name: take_str(&mut m, "name").unwrap_or_default(),
                arguments: args(&mut m),
            }),
            "tool_result" => {
                let id = take_str(&mut m, "id");
                let name = take_str(&mut m, "name");
                // Unknown status words stay in `extra`, so adal to adal writes them back.
                let status = match m.get("status").and_then(Value::as_str) {
                    None => ToolStatus::Completed,
                    Some(word) => {
                        match self.contract.decode.get("tool_status").and_then(|t| t.get(word)).and_then(Value::as_str)
                        {
                            Some(known) => {
                                let s = known.parse().unwrap_or(ToolStatus::Failed);
                                m.shift_remove("status");
                                s
                            }
                            None => ToolStatus::Failed,
                        }
                    }
                };
                let output = take_str(&mut m, "output");
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
                id: take_str(&mut m, "id"),
                name: take_str(&mut m, "name").unwrap_or_default(),
                arguments: args(&mut m),
                reason: take_str(&mut m, "reason"),
            }),
            "answer" => Event::FinalAnswer { text: take_str(&mut m, "content").unwrap_or_default() },
            "error" => Event::Error { message: take_str(&mut m, "message").unwrap_or_default(), fatal: false },
            "complete" => {
                let code = take_int(&mut m, "exit_code");
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
                t.session_id = take_str(&mut m, "session_id");
                t.model = take_str(&mut m, "model");
                Event::Terminal(t)
            }
            _ => {
                let line = crate::dialect::whole_line(kind, m);
                out.push(Record::new(Dialect::Adal, Event::Extension { line }));
                return Ok(());
            }
        };
        out.push(Record::with_extra(Dialect::Adal, event, m));
        Ok(())
    }
}

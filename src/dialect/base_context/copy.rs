//! base-context to base-context: the lines the pipeline copied as they were read, followed so
//! that a stream which did not settle is closed the way base-context closes a run that fails.
//!
//! Rebuilding each message from the canonical model loses what the model has no field for (the
//! usage on streamed partials, header members beyond the five, block members such as `index`,
//! the cost breakdown), so the end of a copied stream that stopped early (a killed agent, a cut
//! file) is made from the lines as read: `Copied::close` writes what base-context writes when its loop fails (base-context-notes.md 3.3, failure
//! paths): the open assistant message ends with `stopReason: "error"` and an `errorMessage`
//! (one is made, with no content, where none is open), then `turn_end` for an open turn and
//! `agent_end` with the loop's messages. A retry announced after the last loop ended gets its
//! loop, failed so, and `auto_retry_end` `success: false`, as base-context writes when retries
//! run out.

use serde_json::{json, Map, Value};

use crate::json::member::Member;
use crate::json::object::Object;

/// What the lines copied so far leave open, kept as their text where it is only needed to close
/// a stream that stops early (parsed then, not on every line).
#[derive(Debug, Default)]
pub struct Copied {
    /// The messages of the loop now open (`message_end`s since `agent_start`), as read.
    loop_messages: Vec<String>,
    /// The tool results of the turn now open.
    turn_results: Vec<String>,
    turn_open: bool,
    /// The assistant message streaming: its `message_start` message or the last full partial,
    /// as read, and the deltas read after it (`--json-deltas` updates carry no message).
    open: Option<String>,
    deltas: Vec<Value>,
    /// `messageId` of the open message (`--json-deltas`).
    open_id: Option<Value>,
    /// The last assistant message ended: where a made-up message takes its api, provider,
    /// model and timestamp from.
    last_assistant: Option<String>,
    /// The attempt the last `auto_retry_start` announced.
    retry_attempt: Option<Value>,
    /// Agent loops started and ended, and whether a retry was announced after the last end.
    loops: (u64, u64),
    retry_pending: bool,
}

/// Member `key` as JSON text: as read where it is raw.
fn raw(m: &Object<'_>, key: &str) -> Option<String> {
    match m.get(key)? {
        Member::Raw(r, _) => Some((*r).to_string()),
        Member::Value(v) => Some(v.to_string()),
    }
}

/// A usage that states no tokens, as base-context writes for a message with none.
fn zero_usage() -> Value {
    json!({"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
           "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}})
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// `role` of a message written as JSON text, read without parsing the rest where it comes
/// first (as base-context writes it).
fn role_of(message: &str) -> Option<String> {
    if let Some(rest) = message.strip_prefix("{\"role\":\"") {
        return rest.split('"').next().map(str::to_string);
    }
    parse(message)["role"].as_str().map(str::to_string)
}

impl Copied {
    /// Notes what line `m` (of type `kind`) opens or closes. Called before the line is decoded.
    pub fn track(&mut self, kind: &str, m: &Object<'_>) {
        match kind {
            "agent_start" => {
                self.loops.0 += 1;
                self.retry_pending = false;
                self.loop_messages.clear();
                self.turn_open = false;
                self.open = None;
                self.retry_attempt = None;
            }
            "agent_end" => {
                self.loops.1 += 1;
                self.loop_messages.clear();
                self.turn_open = false;
                self.open = None;
            }
            "turn_start" => {
                self.turn_open = true;
                self.turn_results.clear();
            }
            "turn_end" => self.turn_open = false,
            "auto_retry_start" => {
                self.retry_attempt = m.get_value("attempt");
                self.retry_pending = self.loops.1 >= self.loops.0;
            }
            "auto_retry_end" => self.retry_attempt = None,
            "message_start" => {
                let Some(message) = raw(m, "message") else { return };
                if role_of(&message).as_deref() == Some("assistant") {
                    self.open = Some(message);
                    self.deltas.clear();
                    self.open_id = m.get_value("messageId");
                }
            }
            "message_update" => match raw(m, "message") {
                Some(message) => {
                    self.open = Some(message);
                    self.deltas.clear();
                }
                None => {
                    if let Some(ev) = m.get_value("assistantMessageEvent") {
                        self.deltas.push(ev);
                    }
                }
            },
            "message_end" => {
                let Some(message) = raw(m, "message") else { return };
                match role_of(&message).as_deref() {
                    Some("assistant") => {
                        self.open = None;
                        self.deltas.clear();
                        self.last_assistant = Some(message.clone());
                    }
                    Some("toolResult") => self.turn_results.push(message.clone()),
                    _ => {}
                }
                self.loop_messages.push(message);
            }
            _ => {}
        }
    }

    /// The open message as far as the stream gave it: its last full form, with the deltas read
    /// since applied to its content.
    fn open_message(&mut self) -> Option<Value> {
        let mut message = parse(self.open.as_deref()?);
        let content = message.get_mut("content").and_then(Value::as_array_mut)?;
        for ev in self.deltas.drain(..) {
            let i = ev["contentIndex"].as_u64().unwrap_or(0) as usize;
            let kind = ev["type"].as_str().unwrap_or_default();
            let field = if kind.starts_with("thinking") { "thinking" } else { "text" };
            while content.len() <= i {
                content.push(match kind {
                    k if k.starts_with("toolcall") => {
                        json!({"type": "toolCall", "id": "", "name": "", "arguments": {}})
                    }
                    _ => json!({"type": field, field: ""}),
                });
            }
            match kind {
                "text_delta" | "thinking_delta" => {
                    let now = content[i][field].as_str().unwrap_or_default();
                    content[i][field] = json!(format!("{now}{}", ev["delta"].as_str().unwrap_or_default()));
                }
                "text_end" | "thinking_end" => {
                    if let Some(text) = ev["content"].as_str() {
                        content[i][field] = json!(text);
                    }
                }
                "toolcall_start" => {
                    for key in ["id", "name"] {
                        if let Some(v) = ev["toolCall"].get(key) {
                            content[i][key] = v.clone();
                        }
                    }
                }
                "toolcall_end" if ev["toolCall"].is_object() => content[i] = ev["toolCall"].clone(),
                _ => {}
            }
        }
        Some(message)
    }

    /// The lines that close a stream which stopped before its run settled, `why` the error they
    /// state.
    pub fn close(&mut self, why: &str) -> Vec<Value> {
        let loops_open = self.loops.1 < self.loops.0;
        let retry_pending = self.retry_pending;
        let mut lines = Vec::new();
        if !loops_open {
            lines.push(json!({"type": "agent_start"}));
            lines.push(json!({"type": "turn_start"}));
            self.turn_open = true;
        }
        let id = self.open_id.take();
        let with_id = |kind: &str, message: Value| {
            let mut line = Map::new();
            line.insert("type".into(), json!(kind));
            if let Some(id) = &id {
                line.insert("messageId".into(), id.clone());
            }
            line.insert("message".into(), message);
            Value::Object(line)
        };
        let message = match self.open_message() {
            Some(mut message) => {
                // A partial's usage is provisional (notes 2: only message_end's is final), and
                // the run's totals count none of it: zeros, so that they read back the same.
                if message.get("usage").is_some() {
                    message["usage"] = zero_usage();
                }
                message["stopReason"] = json!("error");
                message["errorMessage"] = json!(why);
                lines.push(with_id("message_end", message.clone()));
                message
            }
            None => {
                // A message of its own, as base-context makes for a loop that failed outside a
                // request: no content, no usage, where the last one came from.
                let last = self.last_assistant.as_deref().map(parse).unwrap_or(Value::Null);
                let from = |k: &str| last.get(k).cloned().unwrap_or(json!("unknown"));
                let mut message = json!({
                    "role": "assistant",
                    "content": [],
                    "api": from("api"),
                    "provider": from("provider"),
                    "model": from("model"),
                    "usage": zero_usage(),
                    "stopReason": "stop",
                    "timestamp": last.get("timestamp").cloned().unwrap_or(json!(0)),
                });
                lines.push(json!({"type": "message_start", "message": message.clone()}));
                message["stopReason"] = json!("error");
                message["errorMessage"] = json!(why);
                lines.push(json!({"type": "message_end", "message": message.clone()}));
                message
            }
        };
        let mut messages: Vec<Value> = self.loop_messages.drain(..).map(|m| parse(&m)).collect();
        messages.push(message.clone());
        if self.turn_open {
            let results: Vec<Value> = self.turn_results.drain(..).map(|m| parse(&m)).collect();
            lines.push(json!({"type": "turn_end", "message": message, "toolResults": results}));
        }
        lines.push(json!({"type": "agent_end", "messages": messages}));
        if retry_pending && !loops_open {
            // The retry's loop failed, and there is no other attempt.
            let mut end = Map::new();
            end.insert("type".into(), json!("auto_retry_end"));
            end.insert("success".into(), json!(false));
            end.insert("attempt".into(), self.retry_attempt.take().unwrap_or(json!(1)));
            end.insert("finalError".into(), json!(why));
            lines.push(Value::Object(end));
        }
        lines
    }
}

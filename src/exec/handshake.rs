//! Claude Code's stdin protocol (`--input-format stream-json`), as the Agent SDK's client
//! speaks it: what `exec --as claude-code --input-format stream-json` answers in the agent's
//! place before it starts.

use std::io::{self, Write};

/// Stands in for Claude Code's side of its stdin protocol (`--input-format stream-json`, as
/// the Agent SDK's client speaks it): answers each `control_request` (`initialize` and any
/// other) with a `control_response` of subtype `success`, until the first `user` message, whose
/// text it gives back: the prompt for the agent. Lines that are not JSON objects are skipped.
/// `None` when stdin ends first.
pub fn claude_handshake(input: &mut dyn io::BufRead, out: &mut dyn Write) -> io::Result<Option<String>> {
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        let Ok(serde_json::Value::Object(m)) = serde_json::from_str::<serde_json::Value>(line.trim()) else { continue };
        match m.get("type").and_then(serde_json::Value::as_str) {
            Some("control_request") => {
                let id = m.get("request_id").cloned().unwrap_or(serde_json::Value::Null);
                let initialize = m["request"]["subtype"] == "initialize";
                let body = if initialize {
                    serde_json::json!({"commands": [], "output_style": "default", "available_output_styles": ["default"], "models": [], "account": {}})
                } else {
                    serde_json::json!({})
                };
                let reply = serde_json::json!({
                    "type": "control_response",
                    "response": {"subtype": "success", "request_id": id, "response": body},
                });
                writeln!(out, "{reply}")?;
                out.flush()?;
            }
            Some("user") => {
                let content = &m["message"]["content"];
                let text = match content {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Array(blocks) => blocks
                        .iter()
                        .filter_map(|b| b.get("text").and_then(serde_json::Value::as_str))
                        .collect::<Vec<_>>()
                        .join("\n"),
                    _ => String::new(),
                };
                return Ok(Some(text));
            }
            _ => {}
        }
    }
}

//! Reading an ACP client's messages, as `agentgate acp` serves them: each line framed as every
//! input is, parsed as JSON, and classified as JSON-RPC 2.0 (a request, a notification, a
//! response, or a message refused with the error the protocol names); the requests' params read
//! with the protocol's own types.
//!
//! The server that acts on them is the binary's (it spawns processes); what it reads from a peer
//! it does not control is here, in the library, where the fuzz targets reach it (`fuzz/`).

use serde_json::Value;

use super::protocol;
use super::schema::{ContentBlock, InitializeRequest, NewSessionRequest, RequestId};
use crate::io::framing::Frame;

/// One framed client line: its JSON, why it is not JSON, or nothing (a blank line).
pub fn client_line(frame: Frame<'_>, max_line_bytes: usize) -> Option<Result<Value, String>> {
    match frame {
        Frame::Blank => None,
        Frame::Text(t) => Some(serde_json::from_str::<Value>(t).map_err(|e| format!("not JSON ({e})"))),
        Frame::TooLong(n) => Some(Err(format!("a line of {n} bytes, over --max-line-bytes {max_line_bytes}"))),
        Frame::NotUtf8(at, _) => Some(Err(format!("not UTF-8 (byte {at})"))),
    }
}

/// A client's message, read as JSON-RPC 2.0.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientMessage {
    Request {
        id: RequestId,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
    /// A response: `agentgate acp` sends no requests, so it answers none of ours.
    Response,
}

/// A message refused: the error to answer (to `id`, with `code` and `message`), and what to say
/// of it on stderr.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub id: RequestId,
    pub code: i32,
    pub message: String,
    pub said: String,
}

impl Refusal {
    fn invalid(id: Option<RequestId>, message: &str, said: &str) -> Self {
        Refusal {
            id: id.unwrap_or(RequestId::Null),
            code: protocol().code("invalid_request"),
            message: format!("invalid request: {message}"),
            said: said.to_string(),
        }
    }
}

/// Classifies one client message (a line's JSON).
pub fn read_client(v: Value) -> Result<ClientMessage, Refusal> {
    let m = match v {
        Value::Object(m) => m,
        other => {
            let what =
                if other.is_array() { "a batch (this agent takes one message a line)" } else { "not a JSON object" };
            return Err(Refusal::invalid(None, what, &format!("a client line that is {what}")));
        }
    };
    let id = match m.get("id") {
        None => None,
        Some(v) => match serde_json::from_value::<RequestId>(v.clone()) {
            Ok(id) if v.is_string() || v.is_null() || v.as_i64().is_some() => Some(id),
            _ => return Err(Refusal::invalid(None, "id", "a request whose id is neither a string nor an integer")),
        },
    };
    if m.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(Refusal::invalid(id, "jsonrpc is not \"2.0\"", "a client message without \"jsonrpc\": \"2.0\""));
    }
    let method = match m.get("method") {
        Some(Value::String(s)) => s.clone(),
        Some(_) => {
            return Err(Refusal::invalid(id, "method is not a string", "a client message whose method is not a string"))
        }
        None if id.is_some() && (m.contains_key("result") || m.contains_key("error")) => {
            return Ok(ClientMessage::Response)
        }
        None => return Err(Refusal::invalid(id, "no method", "a client message with no method")),
    };
    let params = m.get("params").cloned().unwrap_or(Value::Null);
    Ok(match id {
        Some(id) => ClientMessage::Request { id, method, params },
        None => ClientMessage::Notification { method, params },
    })
}

/// `initialize`'s params, or why they are invalid.
pub fn initialize(params: Value) -> Result<InitializeRequest, String> {
    serde_json::from_value::<InitializeRequest>(params).map_err(|e| format!("protocolVersion: {e}"))
}

/// `session/new`'s params (the session's directory must be absolute) and the names of the MCP
/// servers it asks for, or why they are invalid.
pub fn new_session(params: Value) -> Result<(NewSessionRequest, Vec<String>), String> {
    let names: Vec<String> = params
        .get("mcpServers")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|s| s.get("name").and_then(Value::as_str).unwrap_or("?").to_string()).collect())
        .unwrap_or_default();
    let req = serde_json::from_value::<NewSessionRequest>(params).map_err(|e| e.to_string())?;
    if !req.cwd.is_absolute() {
        return Err(format!("cwd must be an absolute path: {}", req.cwd.display()));
    }
    Ok((req, names))
}

/// A prompt's text: its text blocks, and its resource links as their paths; or why the prompt
/// is refused (a block of a kind this agent does not take, or nothing but whitespace).
pub fn prompt_text(prompt: &[ContentBlock]) -> Result<String, String> {
    let mut text = String::new();
    for block in prompt {
        match block {
            ContentBlock::Text(t) => text.push_str(&t.text),
            ContentBlock::ResourceLink(l) => text.push_str(&link_path(&l.uri)),
            other => {
                let kind = serde_json::to_value(other).ok().and_then(|v| v.get("type").cloned()).unwrap_or(Value::Null);
                return Err(format!("prompt: a {kind} block, which this agent does not take (promptCapabilities)"));
            }
        }
    }
    if text.trim().is_empty() {
        return Err("prompt: empty".into());
    }
    Ok(text)
}

/// A resource link's path where it is a `file:` URI (percent escapes decoded), else the URI.
pub fn link_path(uri: &str) -> String {
    let Some(rest) = uri.strip_prefix("file://") else { return uri.to_string() };
    let bytes = rest.as_bytes();
    let hex = |b: u8| char::from(b).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

//! The Agent Client Protocol (ACP, version 1): JSON-RPC 2.0 on a pair of pipes, one message a
//! line, between an editor (the client) and a coding agent.
//!
//! A run is one `session/prompt` request. While it works, the agent sends `session/update`
//! notifications, each one update tagged by `sessionUpdate`: `agent_message_chunk` and
//! `agent_thought_chunk` (text to append, a `messageId` per message), `tool_call` and
//! `tool_call_update` (`toolCallId`, `title`, `kind`, `status` pending → in_progress →
//! completed | failed, `content` that an update replaces, `rawInput`, `rawOutput`,
//! `locations`), `plan` (the whole task list each time), `usage_update` (a context gauge and the
//! session's cost). The run ends with the prompt's answer: `{stopReason}` (`end_turn`,
//! `max_tokens`, `max_turn_requests`, `refusal`, `cancelled`) or a JSON-RPC error, and, as the
//! one unstable member agentgate uses, `usage` for the turn.
//!
//! The wire types are the protocol's own, from its official crate
//! (`agent-client-protocol-schema`), never copies. What agentgate decides on top of them (tool
//! kinds by name, the words of a stop reason, the plan's words, limits) is data in
//! `mappings/acp.json`, read here as [`Protocol`]. [`encode`] turns a run's canonical records
//! into updates and its end into the answer; [`rpc`] reads a client's messages. The server that
//! runs the agents is the binary's (`agentgate acp`), since it spawns processes.

pub mod decode;
pub mod encode;
pub mod rpc;

use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::{Map, Value};

/// The protocol's version 1 types (`agent_client_protocol_schema::v1`).
pub use agent_client_protocol_schema::v1 as schema;
pub use agent_client_protocol_schema::ProtocolVersion;

/// What `mappings/acp.json` holds beyond a dialect contract's members: the decisions agentgate
/// takes on top of the protocol's types, each with the sentence behind it.
#[derive(Debug, Deserialize)]
pub struct Protocol {
    pub protocol_version: u16,
    pub stop_reasons: Vec<String>,
    /// The words of a run's reason that make each stop reason, by stop reason.
    pub reason_words: Map<String, Value>,
    /// JSON-RPC error codes by name.
    pub error_codes: Map<String, Value>,
    /// A tool's kind by its name in lower case.
    pub tool_kinds: Map<String, Value>,
    /// The arguments a call's title shows, by kind.
    pub title_arguments: Map<String, Value>,
    pub location_arguments: LocationArguments,
    pub plan: PlanWords,
    pub limits: Limits,
    pub cumulative_usage: Listed,
    pub turn_ending_options: Listed,
}

#[derive(Debug, Deserialize)]
pub struct LocationArguments {
    pub names: Vec<String>,
    pub lists: Vec<String>,
}

#[derive(Debug, Deserialize)]
pub struct PlanWords {
    pub content_members: Vec<String>,
    pub list_members: Vec<String>,
    pub status_words: Map<String, Value>,
    pub priorities: Vec<String>,
    pub default_priority: String,
}

#[derive(Debug, Deserialize)]
pub struct Limits {
    pub tool_output_bytes: usize,
    pub prompt_argument_bytes: usize,
    pub title_chars: usize,
}

#[derive(Debug, Deserialize)]
pub struct Listed {
    #[serde(default)]
    pub agents: Vec<String>,
    #[serde(default)]
    pub ids: Vec<String>,
}

/// `mappings/acp.json`'s protocol sections, parsed once.
pub fn protocol() -> &'static Protocol {
    static P: OnceLock<Protocol> = OnceLock::new();
    P.get_or_init(|| {
        let text = crate::contract::FILES.iter().find(|(n, _)| *n == "acp").map(|(_, t)| *t).expect("acp.json");
        serde_json::from_str(text).unwrap_or_else(|e| panic!("mappings/acp.json: {e}"))
    })
}

/// The dialect contract part of `mappings/acp.json`: the update kinds, held by the tests.
pub fn contract() -> &'static crate::contract::Contract {
    crate::contract::contract("acp")
}

impl Protocol {
    /// A JSON-RPC error code by its name in `error_codes`.
    pub fn code(&self, name: &str) -> i32 {
        self.error_codes.get(name).and_then(Value::as_i64).and_then(|c| i32::try_from(c).ok()).unwrap_or(-32603)
    }

    /// The stop reason a run's reason word makes, if any (`length` → `max_tokens`).
    pub fn stop_reason_for(&self, reason: &str) -> Option<schema::StopReason> {
        let reason = reason.trim();
        for (stop, words) in &self.reason_words {
            let Some(words) = words.as_array() else { continue };
            if words.iter().any(|w| w.as_str() == Some(reason)) {
                return serde_json::from_value(Value::String(stop.clone())).ok();
            }
        }
        None
    }

    /// A tool's kind: the source contract's entry for its exact name, else acp.json's by its
    /// name in lower case with an `mcp__<server>__` prefix dropped, else `other`.
    pub fn tool_kind(&self, source: Option<&crate::contract::Contract>, name: &str) -> schema::ToolKind {
        let word = source.and_then(|c| c.tool_kind(name)).map(str::to_string).or_else(|| {
            let lower = name.to_lowercase();
            let bare = match lower.strip_prefix("mcp__") {
                Some(rest) => rest.split_once("__").map_or(rest, |(_, tool)| tool).to_string(),
                None => lower,
            };
            self.tool_kinds.get(&bare).filter(|_| bare != "doc").and_then(Value::as_str).map(str::to_string)
        });
        word.and_then(|w| serde_json::from_value(Value::String(w)).ok()).unwrap_or(schema::ToolKind::Other)
    }

    /// The argument names a title shows for a kind.
    pub fn title_arguments(&self, kind: schema::ToolKind) -> Vec<&str> {
        let word = serde_json::to_value(kind).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
        self.title_arguments
            .get(&word)
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }
}

/// A JSON-RPC 2.0 message is no other dialect's line.
pub fn sniff(line: &serde_json::Map<String, serde_json::Value>) -> crate::codec::Sniff {
    if line.get("jsonrpc").and_then(serde_json::Value::as_str) == Some("2.0") {
        crate::codec::Sniff::Yes
    } else {
        crate::codec::Sniff::No
    }
}

#[cfg(test)]
mod tests {
    use super::schema::{StopReason, ToolKind};
    use super::*;

    #[test]
    fn the_protocol_sections_parse_and_name_only_real_stop_reasons() {
        let p = protocol();
        assert_eq!(p.protocol_version, 1);
        for word in &p.stop_reasons {
            let r: StopReason = serde_json::from_value(Value::String(word.clone())).unwrap();
            assert_eq!(serde_json::to_value(r).unwrap(), Value::String(word.clone()));
        }
        assert_eq!(p.stop_reason_for("length"), Some(StopReason::MaxTokens));
        assert_eq!(p.stop_reason_for("error_max_turns"), Some(StopReason::MaxTurnRequests));
        assert_eq!(p.stop_reason_for("refusal"), Some(StopReason::Refusal));
        assert_eq!(p.stop_reason_for("completed"), None);
        assert_eq!(p.code("request_cancelled"), -32800);
    }

    #[test]
    fn a_tool_kind_comes_from_its_name_never_from_a_guess() {
        let p = protocol();
        assert_eq!(p.tool_kind(None, "Bash"), ToolKind::Execute);
        assert_eq!(p.tool_kind(None, "mcp__files__read_file"), ToolKind::Read);
        assert_eq!(p.tool_kind(None, "WebFetch"), ToolKind::Fetch);
        assert_eq!(p.tool_kind(None, "frobnicate"), ToolKind::Other);
        assert_eq!(p.tool_kind(None, "doc"), ToolKind::Other);
        // Every kind word of the table is one the schema knows.
        for (name, kind) in p.tool_kinds.iter().filter(|(n, _)| *n != "doc") {
            let k: Result<ToolKind, _> = serde_json::from_value(kind.clone());
            assert!(k.is_ok() && k.unwrap() != ToolKind::Other || kind == "other", "{name}: {kind}");
        }
        let codex = crate::contract::contract("codex");
        assert_eq!(p.tool_kind(Some(codex), "file_change"), ToolKind::Edit);
    }
}

//! Reading ACP: a connection's JSON-RPC lines, both sides' (as `acpx --format json` records
//! them, and as `exec --from acp` writes what it sends and receives), into canonical records.
//!
//! A message's side follows from its method; a response answers the open request with its id,
//! or, where both sides have one open with that id, the one its shape fits (`stopReason`: a
//! prompt's; `outcome`: a permission's). Each `session/prompt` is a turn; its answer ends the
//! turn; the last answer ends the run (at the end of the input, since only then is it known to
//! be the last). Updates are read with the protocol's own types.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::protocol;
use super::schema::{ContentBlock, SessionUpdate, ToolCallContent, ToolCallStatus};
use crate::codec::{Decode, Decoded, Dialect, LineError, Record};
use crate::json::object::Object;
use crate::model::{
    Arguments, Basis, Denial, Event, Extra, Outcome, Scope, Session, Terminal, Text, Tokens, ToolCall, ToolDraft,
    ToolResult, ToolStatus, Usage,
};

/// Why a turn was cancelled, where the cancel is not agentgate's own (it says why in
/// `_meta.agentgate.reason`): the client's, as an editor's cancel in a recorded transcript.
const CLIENT: &str = "client";

/// A request still waiting for its response, by side.
#[derive(Debug, Clone)]
enum Open {
    Initialize,
    NewSession { cwd: Option<String> },
    Prompt,
    Permission { call: Option<String>, title: Option<String>, options: Vec<(String, String)> },
    Other,
}

#[derive(Debug, Default)]
pub struct Decoder {
    /// The client's requests waiting for the agent's answer, by id (as JSON text).
    client_open: BTreeMap<String, Open>,
    /// The agent's requests waiting for the client's answer.
    agent_open: BTreeMap<String, Open>,
    /// The message being streamed: its id, and whether it is thought.
    message: Option<(Option<String>, bool)>,
    /// Calls seen: id → name.
    calls: BTreeMap<String, String>,
    /// Output so far per call, for the result.
    output: BTreeMap<String, String>,
    /// The last prompt's answer, waiting for the end of the input to be the run's end.
    last_answer: Option<Terminal>,
    /// The client cancelled the turn, and why (`_meta.agentgate.reason`: timeout, signal,
    /// ask-never), where it says.
    cancelled: Option<String>,
    /// A permission the client refused in this turn (deny): a cancelled answer after it is the
    /// refusal's outcome.
    refused: bool,
    agent_name: Option<String>,
    /// Calls the client refused, whose failed update folds into the refusal.
    denied: std::collections::BTreeSet<String>,
    /// Calls announced pending without their arguments, written as drafts until an update
    /// brings them (or the call goes on without them).
    drafts: std::collections::BTreeSet<String>,
}

impl Decoder {
    pub fn new() -> Self {
        Decoder::default()
    }

    fn end_message(&mut self, out: &mut Decoded) {
        if let Some((_, thought)) = self.message.take() {
            let e = if thought { Event::ReasoningEnd { text: None } } else { Event::TextEnd { text: None } };
            out.push(rec(e));
        }
    }

    fn chunk(&mut self, text: &str, id: Option<String>, thought: bool, out: &mut Decoded) {
        let same = matches!(&self.message, Some((mid, t)) if *t == thought && (id.is_none() || *mid == id));
        if !same {
            self.end_message(out);
            out.push(rec(if thought { Event::ReasoningStart { reset: None } } else { Event::TextStart }));
            self.message = Some((id, thought));
        }
        let e = if thought {
            Event::ReasoningDelta { text: text.to_string() }
        } else {
            Event::TextDelta { text: text.to_string(), chars: None }
        };
        out.push(rec(e));
    }

    fn update(&mut self, update: Value, out: &mut Decoded) {
        let raw = update.clone();
        let parsed = match serde_json::from_value::<SessionUpdate>(update) {
            Ok(u) => u,
            Err(_) => return out.push(rec(Event::Extension { line: raw })),
        };
        match parsed {
            SessionUpdate::AgentMessageChunk(c) | SessionUpdate::AgentThoughtChunk(c) => {
                let thought = raw["sessionUpdate"] == "agent_thought_chunk";
                match c.content {
                    ContentBlock::Text(t) => self.chunk(&t.text, c.message_id.map(|m| m.0.to_string()), thought, out),
                    _ => out.warn("a message chunk that is not text: dropped"),
                }
            }
            SessionUpdate::UserMessageChunk(c) => {
                if let ContentBlock::Text(t) = c.content {
                    out.push(rec(Event::Prompt { text: t.text }));
                }
            }
            SessionUpdate::ToolCall(call) => {
                self.end_message(out);
                let id = call.tool_call_id.0.to_string();
                let name = call.name.clone().unwrap_or_else(|| word(&raw["kind"]).unwrap_or_else(|| "other".into()));
                let mut extra = Map::new();
                for k in ["title", "kind", "locations", "content"] {
                    if let Some(v) = raw.get(k) {
                        extra.insert(k.to_string(), v.clone());
                    }
                }
                self.calls.insert(id.clone(), name.clone());
                let mut kept = Extra::new();
                kept.extend(extra);
                if call.status == ToolCallStatus::Pending && call.raw_input.is_none() {
                    // Announced before its arguments (as agentgate acp announces a draft): a
                    // draft, and the call once an update brings them or the call goes on, so
                    // that its arguments are not lost.
                    self.drafts.insert(id.clone());
                    let d = ToolDraft { id: Some(id), name: Some(name), chars: None, snippet: None, delta: None };
                    return out.push(Record::with_extra(Dialect::Acp, Event::ToolDraft(d), kept));
                }
                let c = tool_call(&id, name, call.raw_input.clone());
                out.push(Record::with_extra(Dialect::Acp, Event::ToolCall(c), kept));
                self.tool_state(&id, &raw, call.status, &call.content, call.raw_output.as_ref(), out);
            }
            SessionUpdate::ToolCallUpdate(u) => {
                let id = u.tool_call_id.0.to_string();
                let goes_on = u.fields.raw_input.is_some() || u.fields.status != Some(ToolCallStatus::Pending);
                // A drafted call's arguments (or its going on without them), or an update of a
                // call never announced: the call, as far as it says.
                let drafted = goes_on && self.drafts.remove(&id);
                if drafted || !self.calls.contains_key(&id) {
                    let known = self.calls.get(&id).cloned().filter(|_| drafted);
                    let name = u
                        .fields
                        .name
                        .clone()
                        .or(known)
                        .or_else(|| word(&raw["kind"]))
                        .or_else(|| u.fields.title.clone())
                        .unwrap_or_else(|| "other".into());
                    self.calls.insert(id.clone(), name.clone());
                    let c = tool_call(&id, name, u.fields.raw_input.clone());
                    let mut kept = Extra::new();
                    for k in ["title", "kind", "locations"].iter().filter(|_| drafted) {
                        if let Some(v) = raw.get(*k) {
                            kept.insert(k.to_string(), v.clone());
                        }
                    }
                    out.push(Record::with_extra(Dialect::Acp, Event::ToolCall(c), kept));
                }
                let status = u.fields.status.unwrap_or(ToolCallStatus::InProgress);
                let content = u.fields.content.clone().unwrap_or_default();
                if u.fields.content.is_some() && !matches!(status, ToolCallStatus::Completed | ToolCallStatus::Failed) {
                    let text = content_text(&content);
                    self.output.insert(id.clone(), text.clone());
                    out.push(rec(Event::ToolOutput {
                        id: Some(id.clone()),
                        text: Text::from(text),
                        accumulated: true,
                    }));
                }
                for c in &content {
                    if let ToolCallContent::Diff(d) = c {
                        let action = if d.old_text.is_none() { "add" } else { "modify" };
                        out.push(rec(Event::FileChange {
                            path: d.path.display().to_string(),
                            action: Some(action.into()),
                            tool: self.calls.get(&id).cloned(),
                            data: Map::new(),
                        }));
                    }
                }
                self.tool_state(&id, &raw, status, &content, u.fields.raw_output.as_ref(), out);
            }
            SessionUpdate::Plan(p) => {
                out.push(rec(Event::Todo { items: serde_json::to_value(&p.entries).unwrap_or(Value::Null) }))
            }
            SessionUpdate::UsageUpdate(u) => {
                if let Some(cost) = &u.cost {
                    if cost.currency.eq_ignore_ascii_case("USD") {
                        out.push(rec(Event::Cost { usd: cost.amount, total: true, parts: Map::new() }));
                    } else {
                        out.warn(format!("a cost in {}, not USD: dropped", cost.currency));
                    }
                }
                let mut data = Map::new();
                data.insert("used".into(), json!(u.used));
                data.insert("size".into(), json!(u.size));
                out.push(rec(Event::Diagnostics { kind: "usage_update".into(), data }));
            }
            _ => out.push(rec(Event::Extension { line: raw })),
        }
    }

    /// A call's final status, where an update states one: its result.
    fn tool_state(
        &mut self,
        id: &str,
        raw: &Value,
        status: ToolCallStatus,
        content: &[ToolCallContent],
        raw_output: Option<&Value>,
        out: &mut Decoded,
    ) {
        let status = match status {
            ToolCallStatus::Completed => ToolStatus::Completed,
            ToolCallStatus::Failed => ToolStatus::Failed,
            _ => return,
        };
        if status == ToolStatus::Failed && self.denied.remove(id) {
            // The agent's failed update of a call the client refused: the refusal said it.
            let _ = self.output.remove(id);
            return;
        }
        let text = content_text(content);
        let shown = if text.is_empty() { self.output.remove(id).unwrap_or_default() } else { text };
        let _ = self.output.remove(id);
        let output = if !shown.is_empty() {
            Some(shown.clone())
        } else {
            raw_output.map(|v| {
                v.get("output").and_then(Value::as_str).map_or_else(|| crate::json::to_compact(v), str::to_string)
            })
        };
        // agentgate's own statuses where v1 has none (a cancelled or refused call); a call it
        // closed for want of a result had none in its source, and has none here.
        let why = raw["_meta"]["agentgate"]["status"].as_str();
        if matches!(why, Some("no result" | "timeout")) {
            let _ = self.output.remove(id);
            return;
        }
        let status = if why == Some("cancelled") { ToolStatus::Cancelled } else { status };
        let error = (status == ToolStatus::Failed).then(|| {
            raw_output.and_then(|v| v.get("error")).and_then(Value::as_str).map_or(shown.clone(), str::to_string)
        });
        if why == Some("permission_denied") {
            let name = self.calls.get(id).cloned().unwrap_or_default();
            let d = Denial { id: Some(id.to_string()), name, arguments: Arguments::default(), reason: Some(shown) };
            return out.push(rec(Event::PermissionDenied(d)));
        }
        if why == Some("withdrawn") {
            return out.push(rec(Event::ToolWithdrawn { id: Some(id.to_string()) }));
        }
        let r = ToolResult {
            id: Some(id.into()),
            index: None,
            name: None,
            status,
            output: output.map(Text::from),
            error: error.filter(|e| !e.is_empty()),
            arguments: Arguments::default(),
        };
        out.push(rec(Event::ToolResult(r)));
    }

    fn request(&mut self, id: &Value, method: &str, params: &Value, out: &mut Decoded) {
        let key = id.to_string();
        match method {
            "initialize" => {
                self.client_open.insert(key, Open::Initialize);
            }
            "session/new" => {
                let cwd = params["cwd"].as_str().map(str::to_string);
                self.client_open.insert(key, Open::NewSession { cwd });
            }
            "session/prompt" => {
                self.client_open.insert(key, Open::Prompt);
                self.cancelled = None;
                self.refused = false;
                // A prompt after the first is a turn of its own; the first turn is the run's
                // until another comes (one prompt, as exec sends, is a run without turn marks).
                if let Some(t) = self.last_answer.take() {
                    out.push(rec(Event::TurnEnd {
                        id: None,
                        status: Some(t.outcome.name().to_string()),
                        reason: t.reason,
                    }));
                    out.push(rec(Event::TurnStart { id: None }));
                }
                let text = prompt_text(&params["prompt"]);
                out.push(rec(Event::Prompt { text }));
            }
            "session/request_permission" => {
                let call = params["toolCall"]["toolCallId"].as_str().map(str::to_string);
                let title = params["toolCall"]["title"].as_str().map(str::to_string);
                let options = params["options"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|o| {
                        (o["optionId"].as_str().unwrap_or("").to_string(), o["kind"].as_str().unwrap_or("").to_string())
                    })
                    .collect();
                self.agent_open.insert(key, Open::Permission { call, title, options });
            }
            m if is_agent_method(m) => {
                self.agent_open.insert(key, Open::Other);
            }
            _ => {
                self.client_open.insert(key, Open::Other);
            }
        }
        out.fold();
    }

    fn response(&mut self, m: &Map<String, Value>, out: &mut Decoded) {
        let key = m.get("id").cloned().unwrap_or(Value::Null).to_string();
        let result = m.get("result");
        // Whose request: the only one open with the id, else the one the shape fits.
        let permission_shaped = result.is_some_and(|r| r.get("outcome").is_some());
        let open = match (self.client_open.contains_key(&key), self.agent_open.contains_key(&key)) {
            (true, true) if permission_shaped => self.agent_open.remove(&key),
            (true, _) => self.client_open.remove(&key),
            (false, true) => self.agent_open.remove(&key),
            (false, false) => None,
        };
        match open {
            Some(Open::Initialize) => {
                let info = result.map(|r| &r["agentInfo"]);
                self.agent_name = info.and_then(|i| i["name"].as_str()).map(str::to_string);
                let version = info.and_then(|i| i["version"].as_str()).map(str::to_string);
                if version.is_some() {
                    out.push(rec(Event::Session(Session { version, ..Session::default() })));
                } else {
                    out.fold();
                }
            }
            Some(Open::NewSession { cwd }) => match result.and_then(|r| r["sessionId"].as_str()) {
                Some(id) => {
                    out.push(rec(Event::Session(Session { id: Some(id.to_string()), cwd, ..Session::default() })))
                }
                None => {
                    let mut e = error_text(m.get("error"));
                    let code = m.get("error").and_then(|e| e["code"].as_i64());
                    if code == Some(i64::from(protocol().code("auth_required"))) {
                        e.push_str(": log in with the agent's own CLI first");
                    }
                    let mut t = Terminal::new(Outcome::Failed);
                    t.error = Some(format!("session/new failed: {e}"));
                    self.last_answer = Some(t);
                    out.fold();
                }
            },
            Some(Open::Prompt) => self.answer(result, m.get("error"), out),
            Some(Open::Permission { call, title, options }) => self.permission(result, call, title, &options, out),
            Some(Open::Other) | None => out.fold(),
        }
    }

    /// The client's answer to a permission request: a refusal is the call's denial.
    fn permission(
        &mut self,
        result: Option<&Value>,
        call: Option<String>,
        title: Option<String>,
        options: &[(String, String)],
        out: &mut Decoded,
    ) {
        let outcome = result.map(|r| &r["outcome"]);
        let policy = result.and_then(|r| r["_meta"]["agentgate"]["policy"].as_str()).map(str::to_string);
        let chosen = outcome.and_then(|o| o["optionId"].as_str());
        let kind = chosen.and_then(|c| options.iter().find(|(id, _)| id == c)).map(|(_, k)| k.as_str());
        let cancelled = outcome.is_some_and(|o| o["outcome"] == "cancelled");
        let name =
            call.as_ref().and_then(|c| self.calls.get(c)).cloned().or(title.clone()).unwrap_or_else(|| "tool".into());
        let refused =
            (cancelled && policy.as_deref() == Some("ask-never")) || kind.is_some_and(|k| k.starts_with("reject"));
        if let (Some(c), true) = (&call, refused) {
            // The refusal stands for a drafted call: no later update makes it.
            self.drafts.remove(c);
        }
        if cancelled && policy.as_deref() == Some("ask-never") {
            out.push(rec(Event::Approval { actions: vec![title.unwrap_or_else(|| name.clone())] }));
            let d = Denial {
                id: call,
                name,
                arguments: Arguments::default(),
                reason: Some("approval needed and not given (--permission ask-never)".into()),
            };
            return out.push(rec(Event::PermissionDenied(d)));
        }
        if kind.is_some_and(|k| k.starts_with("reject")) {
            self.refused = true;
            if let Some(c) = &call {
                self.denied.insert(c.clone());
            }
            let reason = match policy.as_deref() {
                Some(p) => format!("permission denied by agentgate (--permission {p})"),
                None => "permission denied by the client".into(),
            };
            let d = Denial { id: call, name, arguments: Arguments::default(), reason: Some(reason) };
            return out.push(rec(Event::PermissionDenied(d)));
        }
        out.fold();
    }

    /// A prompt's answer: its turn's end and usage; kept as the run's end, should it be the last.
    fn answer(&mut self, result: Option<&Value>, error: Option<&Value>, out: &mut Decoded) {
        self.end_message(out);
        let mut t = match (result, error) {
            (Some(r), _)
                if r["stopReason"] != "cancelled"
                    && self.cancelled.is_none()
                    && r["_meta"]["agentgate"]["outcome"].is_string() =>
            {
                // agentgate acp's answer states the run's own outcome and reason.
                let ours = &r["_meta"]["agentgate"];
                let mut t =
                    Terminal::new(ours["outcome"].as_str().and_then(|o| o.parse().ok()).unwrap_or(Outcome::Incomplete));
                t.reason = ours["reason"].as_str().map(str::to_string);
                t
            }
            (Some(r), _) => self.stop(r["stopReason"].as_str().unwrap_or("")),
            (None, Some(e)) => self.error(e),
            (None, None) => Terminal::new(Outcome::Failed),
        };
        let body = result.or_else(|| error.map(|e| &e["data"]));
        // The actions the run stopped for want of approval (agentgate acp's error data).
        if let Some(actions) = body.and_then(|b| b["approval"].as_array()).filter(|a| !a.is_empty()) {
            let actions = actions.iter().filter_map(Value::as_str).map(str::to_string).collect();
            out.push(rec(Event::Approval { actions }));
        }
        let tokens = body.and_then(|b| usage(b, self.agent_name.as_deref()));
        let stated_cost = body.and_then(|b| b["_meta"]["agentgate"]["costUsd"].as_f64().or(b["costUsd"].as_f64()));
        if let Some(c) = stated_cost {
            out.push(rec(Event::Cost { usd: c, total: false, parts: Map::new() }));
        }
        if let Some((tokens, cumulative)) = tokens {
            out.push(rec(Event::Usage(Usage {
                scope: if cumulative { Scope::Run } else { Scope::Turn },
                basis: if cumulative { Basis::Cumulative } else { Basis::Delta },
                final_: true,
                of: None,
                model: None,
                tokens,
            })));
        }
        t.usage = None;
        self.last_answer = Some(t);
    }

    /// A stop reason as an outcome.
    fn stop(&self, word: &str) -> Terminal {
        let ours = self.cancelled.as_deref();
        let outcome = match (word, ours) {
            // The turn stopped because agentgate cancelled it: why it did decides.
            (_, Some("timeout")) => Outcome::Timeout,
            (_, Some("ask-never")) => Outcome::PermissionDenied,
            (_, Some(_)) => Outcome::Interrupted,
            ("end_turn", None) => Outcome::Completed,
            ("cancelled", None) if self.refused => Outcome::PermissionDenied,
            ("cancelled", None) => Outcome::Interrupted,
            _ => Outcome::Incomplete,
        };
        let mut t = Terminal::new(outcome);
        t.reason = match (outcome, ours) {
            (Outcome::Completed, _) => None,
            // A cancel agentgate did not send (an editor's, in a recorded transcript).
            (_, Some(CLIENT)) => Some("the client cancelled the turn".into()),
            (_, Some(why)) => Some(format!("cancelled by agentgate ({why})")),
            (Outcome::Interrupted, None) => Some("the agent cancelled the turn".into()),
            (Outcome::PermissionDenied, None) => Some("the agent stopped after a refused permission".into()),
            _ => Some(word.to_string()),
        };
        t
    }

    /// An error answer as an outcome: the canonical one `agentgate acp` states in its data, else
    /// failed (a -32800 the client did not ask for: interrupted).
    fn error(&self, e: &Value) -> Terminal {
        let data = &e["data"];
        let stated = data["outcome"].as_str().and_then(|o| o.parse::<Outcome>().ok());
        let code = e["code"].as_i64().unwrap_or(0);
        let message = e["message"].as_str().unwrap_or("").to_string();
        if self.cancelled.is_some() {
            // After agentgate's own cancel, why it cancelled decides, as for a stop reason.
            let mut t = self.stop("cancelled");
            t.error = Some(format!("{message} (code {code})"));
            return t;
        }
        let mut t = match stated {
            Some(o) => {
                let mut t = Terminal::new(o);
                t.reason = data["reason"].as_str().map(str::to_string);
                t.error = data["error"].as_str().map(str::to_string).or(Some(message.clone()));
                t.exit_code = data["exitStatus"].as_i64();
                t
            }
            None if code == i64::from(protocol().code("request_cancelled")) => {
                let mut t = Terminal::new(if self.refused { Outcome::PermissionDenied } else { Outcome::Interrupted });
                t.reason = Some("the agent cancelled the turn".into());
                t.error = Some(format!("{message} (code {code})"));
                t
            }
            None => {
                let mut t = Terminal::new(Outcome::Failed);
                t.error = Some(format!("{message} (code {code})"));
                t
            }
        };
        if t.outcome == Outcome::Failed && t.error.is_none() {
            t.error = Some(message);
        }
        t
    }
}

impl Decode for Decoder {
    fn decode(&mut self, line: Object<'_>, out: &mut Decoded) -> Result<(), LineError> {
        let m = line.into_fields();
        if m.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Err(LineError::bad("not a JSON-RPC 2.0 message (no \"jsonrpc\": \"2.0\")"));
        }
        match (m.get("method").and_then(Value::as_str), m.get("id")) {
            (Some(method), Some(id)) => {
                let params = m.get("params").cloned().unwrap_or(Value::Null);
                self.request(id, method, &params, out);
            }
            (Some("session/update"), None) => {
                let update = m.get("params").and_then(|p| p.get("update")).cloned().unwrap_or(Value::Null);
                self.update(update, out);
            }
            (Some("session/cancel"), None) => {
                // `m` is a map, whose index panics on a missing key: `get` first.
                let reason = m.get("params").and_then(|p| p["_meta"]["agentgate"]["reason"].as_str());
                let why = reason.unwrap_or(CLIENT).to_string();
                self.cancelled = Some(why);
                out.fold();
            }
            (Some(_), None) => out.fold(),
            (None, Some(_)) if m.contains_key("result") || m.contains_key("error") => self.response(&m, out),
            _ => return Err(LineError::bad("a JSON-RPC message that is no request, notification or response")),
        }
        if out.records.is_empty() && !out.folded {
            out.fold();
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut Decoded) {
        self.end_message(out);
        if let Some(t) = self.last_answer.take() {
            out.push(rec(Event::Terminal(t)));
        }
    }
}

/// A call as ACP states it: its id, name and `rawInput`.
fn tool_call(id: &str, name: String, raw_input: Option<Value>) -> ToolCall {
    let arguments = raw_input.map_or_else(Arguments::default, Arguments::value);
    ToolCall { id: Some(id.into()), index: None, name: name.into(), arguments, id_made: false }
}

fn rec(e: Event) -> Record {
    Record::new(Dialect::Acp, e)
}

fn word(v: &Value) -> Option<String> {
    v.as_str().map(str::to_string)
}

fn is_agent_method(m: &str) -> bool {
    m.starts_with("fs/")
        || m.starts_with("terminal/")
        || m.starts_with("session/request_")
        || m.starts_with("elicitation/")
}

/// A prompt's text blocks (and links), in order.
fn prompt_text(blocks: &Value) -> String {
    blocks
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["text"].as_str().or(b["uri"].as_str()))
        .collect::<Vec<_>>()
        .join("")
}

/// The text blocks of a call's content, joined.
fn content_text(content: &[ToolCallContent]) -> String {
    content
        .iter()
        .filter_map(|c| match c {
            ToolCallContent::Content(c) => match &c.content {
                ContentBlock::Text(t) => Some(t.text.as_str()),
                _ => None,
            },
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn error_text(e: Option<&Value>) -> String {
    match e {
        Some(e) => format!("{} (code {})", e["message"].as_str().unwrap_or(""), e["code"]),
        None => "no answer".into(),
    }
}

/// An answer's usage: `_meta.agentgate.usage.turn` (agentgate acp's, input with cache and output
/// with thought inside), else `usage` (whose `totalTokens` tells whether cache and thought are
/// inside), else gemini's `_meta.quota.token_count`; and whether it is cumulative (an agent
/// acp.json lists in `cumulative_usage`).
fn usage(body: &Value, agent: Option<&str>) -> Option<(Tokens, bool)> {
    let cumulative = agent.is_some_and(|a| protocol().cumulative_usage.agents.iter().any(|x| x == a));
    let n = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64);
    let ours = &body["_meta"]["agentgate"]["usage"]["turn"];
    if ours.is_object() {
        let t = Tokens {
            input: n(ours, "inputTokens"),
            output: n(ours, "outputTokens"),
            cache_read: n(ours, "cachedReadTokens"),
            cache_write: n(ours, "cachedWriteTokens"),
            reasoning: n(ours, "thoughtTokens"),
            total: n(ours, "totalTokens"),
        };
        return Some((t, cumulative));
    }
    let u = if body["usage"].is_object() { &body["usage"] } else { body };
    if let (Some(i), Some(o)) = (n(u, "inputTokens"), n(u, "outputTokens")) {
        let (r, w, th) = (n(u, "cachedReadTokens"), n(u, "cachedWriteTokens"), n(u, "thoughtTokens"));
        let total = n(u, "totalTokens");
        let rw = r.unwrap_or(0) + w.unwrap_or(0);
        let tot = total.unwrap_or(0);
        let input = if rw > 0 && tot >= i + o + rw { i + rw } else { i };
        let t_ = th.unwrap_or(0);
        let output = if t_ > 0 && tot >= input + o + t_ { o + t_ } else { o };
        let t =
            Tokens { input: Some(input), output: Some(output), cache_read: r, cache_write: w, reasoning: th, total };
        return Some((t, cumulative));
    }
    let q = &body["_meta"]["quota"]["token_count"];
    if let (Some(i), Some(o)) = (n(q, "input_tokens"), n(q, "output_tokens")) {
        return Some((Tokens { input: Some(i), output: Some(o), ..Tokens::default() }, cumulative));
    }
    None
}

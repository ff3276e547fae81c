//! Reads Claude Code's `stream-json`: the main agent's messages as text, reasoning and tool
//! calls (a message over several lines counted once), `tool_result` blocks as the results of
//! the calls they name, subagent lines (a `parent_tool_use_id`) kept apart, and the `result`
//! lines folded as the SDK folds them into the run's end.

use indexmap::IndexMap;
use serde_json::{Map, Value};

use crate::codec::make_room;
use crate::codec::{Decode, Decoded, Dialect, LineError, Record};
use crate::dialect::util::take_type;
use crate::json::object::Object;
use crate::model::{
    Arguments, Basis, Denial, Event, Outcome, Scope, Session, Terminal, Tokens, ToolCall, ToolResult, ToolStatus, Usage,
};

/// The `result` lines read so far, folded (claude-code.md, Several results).
#[derive(Default)]
struct Folded {
    count: u64,
    subtype: String,
    is_error: bool,
    text: Option<String>,
    /// The first failed result's subtype, flag and text.
    failed: Option<(String, bool, Option<String>)>,
    usage: Tokens,
    num_turns: u64,
    duration_ms: u64,
    cost: Option<f64>,
    /// The context window of the run's model (else the largest stated), from `modelUsage`.
    context_window: Option<u64>,
}

#[derive(Default)]
pub struct Decoder {
    session_id: Option<String>,
    model: Option<String>,
    /// The message ids whose usage was counted (one message comes as several lines).
    counted: IndexMap<String, ()>,
    /// The calls listed as refused so far.
    denied: IndexMap<String, ()>,
    /// The main agent's last assistant text.
    last_text: Option<String>,
    results: Folded,
    /// The message being streamed (`stream_event` partials): its id and its blocks begun and
    /// not yet given whole by an `assistant` line, in order.
    streaming: Option<String>,
    partial: Vec<Partial>,
}

/// A content block begun by a `content_block_start`: its kind and the text its deltas gave.
struct Partial {
    index: u64,
    thinking: bool,
    text: String,
}

impl Decoder {
    pub fn new() -> Self {
        Self::default()
    }
}

fn own(event: Event) -> Record {
    Record::new(Dialect::ClaudeCode, event)
}

/// A count: an integer, or a string of its digits (a decoder accepts a count either way).
fn n(u: &Value, k: &str) -> Option<u64> {
    match u.get(k)? {
        Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => s.parse().ok(),
        v => v.as_u64(),
    }
}

/// An amount of money: a number, or a string of one (read either way, as counts are).
fn amount(v: &Value) -> Option<f64> {
    match v {
        Value::String(s) => s.trim().parse::<f64>().ok().filter(|c| c.is_finite() && *c >= 0.0),
        v => v.as_f64(),
    }
}

/// A Messages-API usage object as canonical tokens: Claude's input excludes the cache
/// figures, canonical input includes them (claude-code.md, Usage).
fn tokens(u: &Value) -> Tokens {
    let (input, write, read) =
        (n(u, "input_tokens"), n(u, "cache_creation_input_tokens"), n(u, "cache_read_input_tokens"));
    let all = match (input, write, read) {
        (None, None, None) => None,
        (i, w, r) => Some(i.unwrap_or(0).saturating_add(w.unwrap_or(0)).saturating_add(r.unwrap_or(0))),
    };
    Tokens {
        input: all,
        output: n(u, "output_tokens"),
        cache_read: read,
        cache_write: write,
        reasoning: None,
        total: None,
    }
}

/// A tool_result block's content as text: a string, or its text blocks joined.
fn content_text(c: &Value) -> String {
    match c {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b.get("text").and_then(Value::as_str)).collect(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

impl Decoder {
    fn assistant(&mut self, line: &Map<String, Value>, events: &mut Vec<Event>) {
        let Some(message) = line.get("message") else { return };
        // An API failure comes as a synthetic message (claude-code-notes.md, Quirks: `model:
        // "<synthetic>"` and an `error` code): its text is the error, not the model's.
        let synthetic = message.get("model").and_then(Value::as_str) == Some("<synthetic>");
        if let Some(m) = message.get("model").and_then(Value::as_str).filter(|_| !synthetic) {
            self.model = Some(m.to_string());
        }
        if synthetic {
            let text: Vec<&str> = message
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect();
            let code = line.get("error").and_then(Value::as_str);
            let message = match (code, text.join("\n")) {
                (Some(c), t) if t.is_empty() => c.to_string(),
                (_, t) if t.is_empty() => "API error".to_string(),
                (_, t) => t,
            };
            events.push(Event::Error { message, fatal: false });
            return;
        }
        for block in message.get("content").and_then(Value::as_array).into_iter().flatten() {
            match block.get("type").and_then(Value::as_str) {
                Some("text") => {
                    let t = block.get("text").and_then(Value::as_str).unwrap_or_default().to_string();
                    self.last_text = Some(t.clone());
                    match self.streamed(message, false) {
                        // Its deltas came first: the rest of the text, if they were short of it.
                        Some(so_far) if t.starts_with(so_far.as_str()) => {
                            if t.len() > so_far.len() {
                                events.push(Event::TextDelta { text: t[so_far.len()..].to_string(), chars: None });
                            }
                            events.push(Event::TextEnd { text: None });
                        }
                        Some(_) => events.push(Event::TextEnd { text: Some(t) }),
                        None => {
                            events.push(Event::TextStart);
                            events.push(Event::TextDelta { text: t, chars: None });
                            events.push(Event::TextEnd { text: None });
                        }
                    }
                }
                Some("thinking") => {
                    let t = block.get("thinking").and_then(Value::as_str).unwrap_or_default().to_string();
                    if self.streamed(message, true).is_none() {
                        events.push(Event::ReasoningStart { reset: None });
                    }
                    events.push(Event::ReasoningEnd { text: Some(t) });
                }
                Some(kind @ ("tool_use" | "server_tool_use")) => {
                    let id = block.get("id").and_then(Value::as_str).unwrap_or_default();
                    let name = block.get("name").and_then(Value::as_str).unwrap_or_default();
                    let input = block.get("input").cloned().unwrap_or(Value::Object(Map::new()));
                    events.push(Event::ToolCall(ToolCall {
                        id: Some(id.into()),
                        index: None,
                        name: name.into(),
                        arguments: Arguments::value(input),
                        id_made: false,
                    }));
                    if kind == "server_tool_use" {
                        // Run by the API: no tool_result comes for it.
                        events.push(Event::ToolResult(ToolResult {
                            id: Some(id.into()),
                            index: None,
                            name: Some(name.into()),
                            status: ToolStatus::Completed,
                            output: None,
                            error: None,
                            arguments: Arguments::default(),
                        }));
                    }
                }
                _ => {}
            }
        }
        // One message comes as one line per block, each with the same usage: counted once.
        let id = message.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
        if let Some(u) = message.get("usage").filter(|_| !self.counted.contains_key(&id)) {
            make_room(&mut self.counted, id.as_str());
            self.counted.insert(id, ());
            events.push(Event::Usage(Usage {
                scope: Scope::Round,
                basis: Basis::Delta,
                final_: false,
                of: None,
                model: self.model.as_deref().map(Into::into),
                tokens: tokens(u),
            }));
        }
        if let Some(e) = line.get("error").and_then(Value::as_str) {
            events.push(Event::Error { message: e.to_string(), fatal: false });
        }
    }

    /// The text streamed for the first block of `kind` begun in this message, taken: an
    /// `assistant` line gives the block whole after its partials.
    fn streamed(&mut self, message: &Value, thinking: bool) -> Option<String> {
        let id = message.get("id").and_then(Value::as_str)?;
        if self.streaming.as_deref() != Some(id) {
            return None;
        }
        let at = self.partial.iter().position(|p| p.thinking == thinking)?;
        Some(self.partial.remove(at).text)
    }

    /// Ends the blocks a message's partials began that no `assistant` line gave whole.
    fn close_partials(&mut self, events: &mut Vec<Event>) {
        for p in self.partial.drain(..) {
            events.push(if p.thinking { Event::ReasoningEnd { text: None } } else { Event::TextEnd { text: None } });
        }
    }

    /// A `stream_event` of the main agent's (claude-code.md, Partial messages): text and
    /// thinking deltas as they come. The `assistant` lines that follow still give each block
    /// whole (it ends the block, and adds what the deltas lacked); usage is taken from those
    /// lines and the results, never from `message_start`/`message_delta`.
    fn stream_event(&mut self, line: &Map<String, Value>, events: &mut Vec<Event>) {
        let Some(event) = line.get("event") else { return };
        let index = event.get("index").and_then(Value::as_u64).unwrap_or(0);
        match event.get("type").and_then(Value::as_str) {
            Some("message_start") => {
                self.close_partials(events);
                self.streaming = event.pointer("/message/id").and_then(Value::as_str).map(str::to_string);
            }
            Some("content_block_start") => {
                let thinking = match event.pointer("/content_block/type").and_then(Value::as_str) {
                    Some("text") => false,
                    Some("thinking") => true,
                    _ => return,
                };
                // A bounded table: a message holds a few blocks; a stream that never closes
                // them does not grow it.
                if self.partial.len() >= 64 {
                    self.partial.remove(0);
                }
                self.partial.push(Partial { index, thinking, text: String::new() });
                events.push(if thinking { Event::ReasoningStart { reset: None } } else { Event::TextStart });
            }
            Some("content_block_delta") => {
                let Some(p) = self.partial.iter_mut().find(|p| p.index == index) else { return };
                let delta = event.get("delta");
                let kind = delta.and_then(|d| d.get("type")).and_then(Value::as_str);
                let text = match (kind, p.thinking) {
                    (Some("text_delta"), false) => delta.and_then(|d| d.get("text")),
                    (Some("thinking_delta"), true) => delta.and_then(|d| d.get("thinking")),
                    _ => None,
                };
                let Some(text) = text.and_then(Value::as_str).filter(|t| !t.is_empty()) else { return };
                p.text.push_str(text);
                events.push(if p.thinking {
                    Event::ReasoningDelta { text: text.to_string() }
                } else {
                    Event::TextDelta { text: text.to_string(), chars: None }
                });
            }
            _ => {}
        }
    }

    fn user(&mut self, line: &Map<String, Value>, events: &mut Vec<Event>) {
        let Some(message) = line.get("message") else { return };
        match message.get("content") {
            Some(Value::String(prompt)) => events.push(Event::Prompt { text: prompt.clone() }),
            Some(Value::Array(blocks)) => {
                for b in blocks {
                    match b.get("type").and_then(Value::as_str) {
                        Some("tool_result") => {
                            let id = b.get("tool_use_id").and_then(Value::as_str).unwrap_or_default();
                            let failed = b.get("is_error").and_then(Value::as_bool).unwrap_or(false);
                            let output = content_text(b.get("content").unwrap_or(&Value::Null));
                            events.push(Event::ToolResult(ToolResult {
                                id: Some(id.into()),
                                index: None,
                                name: None,
                                status: if failed { ToolStatus::Failed } else { ToolStatus::Completed },
                                output: Some(output.into()),
                                error: None,
                                arguments: Arguments::default(),
                            }));
                        }
                        Some("text") => events.push(Event::Prompt {
                            text: b.get("text").and_then(Value::as_str).unwrap_or_default().to_string(),
                        }),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }

    /// Folds one `result` (claude-code.md: sum usage, num_turns, duration_ms; cost from the
    /// last; subtype, is_error and text from the first failed one, else the last).
    fn result(&mut self, line: &Map<String, Value>, events: &mut Vec<Event>) {
        let r = &mut self.results;
        r.count += 1;
        let subtype = line.get("subtype").and_then(Value::as_str).unwrap_or("success").to_string();
        let is_error = line.get("is_error").and_then(Value::as_bool).unwrap_or(false);
        let text = line.get("result").and_then(Value::as_str).map(str::to_string);
        if (subtype != "success" || is_error) && r.failed.is_none() {
            r.failed = Some((subtype.clone(), is_error, text.clone()));
        }
        r.subtype = subtype;
        r.is_error = is_error;
        r.text = text;
        if let Some(u) = line.get("usage") {
            r.usage = r.usage.plus(&tokens(u));
        }
        r.num_turns += line.get("num_turns").and_then(Value::as_u64).unwrap_or(0);
        r.duration_ms += line.get("duration_ms").and_then(Value::as_u64).unwrap_or(0);
        // The run's cost, as of this result: `total_cost_usd`, else the per-model `costUSD`
        // of `modelUsage` (cumulative, all calls) summed. Never `usage` plus `modelUsage`.
        let per_model = || {
            let models = line.get("modelUsage")?.as_object()?;
            let costs: Vec<f64> = models.values().filter_map(|m| amount(m.get("costUSD")?)).collect();
            (!costs.is_empty()).then(|| costs.iter().sum())
        };
        if let Some(c) = line.get("total_cost_usd").and_then(amount).or_else(per_model) {
            r.cost = Some(c);
        }
        // claude-code.md, result: `modelUsage` `{model: {…, contextWindow, maxOutputTokens}}`.
        if let Some(models) = line.get("modelUsage").and_then(Value::as_object) {
            let window = |m: &Value| m.get("contextWindow").and_then(Value::as_u64);
            let own = self.model.as_deref().and_then(|m| models.get(m)).and_then(window);
            if let Some(w) = own.or_else(|| models.values().filter_map(window).max()) {
                r.context_window = Some(w);
            }
        }
        // Refused calls (joined over the results): each call's refusal, after its failed
        // tool_result, once.
        for d in line.get("permission_denials").and_then(Value::as_array).into_iter().flatten() {
            let id = d.get("tool_use_id").and_then(Value::as_str).map(str::to_string);
            if let Some(id) = &id {
                if self.denied.contains_key(id.as_str()) {
                    continue;
                }
                make_room(&mut self.denied, id.as_str());
                self.denied.insert(id.clone(), ());
            }
            let input = d.get("tool_input").cloned().unwrap_or(Value::Object(Map::new()));
            events.push(Event::PermissionDenied(Denial {
                id,
                name: d.get("tool_name").and_then(Value::as_str).unwrap_or_default().to_string(),
                arguments: Arguments::value(input),
                reason: None,
            }));
        }
        if let Some(id) = line.get("session_id").and_then(Value::as_str) {
            self.session_id.get_or_insert_with(|| id.to_string());
        }
    }
}

/// Whether claude-code.md names member `key` of a line of `kind` (its Records table, the
/// `result` and usage sections): what the decoder reads, or knows it leaves.
fn named_member(kind: &str, key: &str) -> bool {
    const EVERY: [&str; 4] = ["subtype", "session_id", "uuid", "parent_tool_use_id"];
    const INIT: [&str; 17] = [
        "cwd",
        "tools",
        "mcp_servers",
        "model",
        "permissionMode",
        "claude_code_version",
        "apiKeySource",
        "slash_commands",
        "agents",
        "skills",
        "plugins",
        "capabilities",
        "output_style",
        "hook_id",
        "hook_name",
        "hook_event",
        "status",
    ];
    const RESULT: [&str; 10] = [
        "is_error",
        "duration_ms",
        "duration_api_ms",
        "num_turns",
        "result",
        "total_cost_usd",
        "usage",
        "modelUsage",
        "permission_denials",
        "stop_reason",
    ];
    EVERY.contains(&key)
        || match kind {
            "system" => INIT.contains(&key),
            "assistant" => matches!(key, "message" | "error"),
            "user" => matches!(key, "message" | "tool_use_result"),
            "stream_event" => key == "event",
            "result" => RESULT.contains(&key),
            _ => true,
        }
}

impl Decode for Decoder {
    fn decode(&mut self, mut m: Object<'_>, out: &mut Decoded) -> Result<(), LineError> {
        let kind = take_type(&mut m)?;
        let line = m.into_fields();
        let mut events = Vec::new();
        let subagent = line.get("parent_tool_use_id").is_some_and(|p| !p.is_null());
        match kind.as_ref() {
            "system" if line.get("subtype").and_then(Value::as_str) == Some("init") => {
                let id = line.get("session_id").and_then(Value::as_str).map(str::to_string);
                self.session_id = id.clone().or(self.session_id.take());
                let model = line.get("model").and_then(Value::as_str).map(str::to_string);
                self.model.clone_from(&model);
                events.push(Event::Session(Session {
                    id,
                    model,
                    cwd: line.get("cwd").and_then(Value::as_str).map(str::to_string),
                    version: line.get("claude_code_version").and_then(Value::as_str).map(str::to_string),
                    ..Session::default()
                }));
            }
            // A subagent's lines are its own, kept apart from the main agent's (whole, below).
            "assistant" if !subagent => self.assistant(&line, &mut events),
            "user" if !subagent => self.user(&line, &mut events),
            "stream_event" if !subagent => self.stream_event(&line, &mut events),
            "result" => self.result(&line, &mut events),
            _ => {}
        }
        if events.is_empty() {
            // Keys as read, `type` first.
            let mut whole = Map::new();
            whole.insert("type".into(), Value::String(kind.to_string()));
            for (k, v) in line {
                if k != "type" {
                    whole.insert(k, v);
                }
            }
            out.push(own(Event::Extension { line: Value::Object(whole) }));
            return Ok(());
        }
        // The members the spec names none of go with the line's last record: a target of
        // another dialect counts them in its report, canonical keeps them. So does a member it
        // names whose value its contract refuses there (read as absent, it would be lost
        // unsaid).
        let n = events.len();
        let may = Dialect::ClaudeCode.contract().fields_of(&kind);
        for (i, e) in events.into_iter().enumerate() {
            let mut rec = own(e);
            if i + 1 == n {
                // (A cost written as a string is read as its amount, not lost.)
                let refused =
                    |k: &str, v: &Value| !(may.accepts_value(k, v) || k == "total_cost_usd" && amount(v).is_some());
                for (k, v) in line.iter().filter(|(k, v)| !named_member(&kind, k) || refused(k, v)) {
                    rec.extra.insert(k.clone(), v.clone());
                }
            }
            out.push(rec);
        }
        Ok(())
    }

    /// The run ends as its folded `result` says; with none, it is left to the normalizer,
    /// which says the input ended without a terminal record.
    fn finish(&mut self, out: &mut Decoded) {
        let mut open = Vec::new();
        self.close_partials(&mut open);
        for e in open {
            out.push(own(e));
        }
        let r = &self.results;
        if r.count == 0 {
            return;
        }
        let (subtype, is_error, text) = match &r.failed {
            Some((s, e, t)) => (s.clone(), *e, t.clone()),
            None => (r.subtype.clone(), r.is_error, r.text.clone()),
        };
        let outcome = match subtype.as_str() {
            "success" if !is_error => Outcome::Completed,
            "error_max_turns" | "error_max_budget_usd" | "error_max_structured_output_retries" => Outcome::Incomplete,
            _ => Outcome::Failed,
        };
        let mut t = Terminal::new(outcome);
        match outcome {
            Outcome::Completed => t.final_text = text.or_else(|| self.last_text.clone()),
            Outcome::Incomplete => t.reason = Some(subtype),
            _ => t.error = text.filter(|x| !x.is_empty()).or(Some(subtype)),
        }
        t.session_id.clone_from(&self.session_id);
        t.model.clone_from(&self.model);
        if !r.usage.is_empty() {
            t.usage = Some(r.usage);
        }
        // claude-code.md: total_cost_usd is the run's cost (from the last result).
        t.cost_usd = r.cost;
        t.context_window = r.context_window;
        out.push(own(Event::Terminal(t)));
    }
}

//! Writes Claude Code's `stream-json` as its readers (the Agent SDK's message parser among
//! them) take it: `system`/`init` first, `assistant` lines with Messages-API messages (one line
//! per content block, ids `msg_…` and `toolu_…` made from the input where the source has
//! none), `user` lines with the `tool_result` blocks (`is_error` on failures and refusals), and
//! exactly one `result`, last, with the outcome table's `subtype`/`is_error`. Lines read from
//! Claude Code itself (also through the canonical stream) are written back as they were.

use serde_json::{json, Map, Value};

use crate::codec::make_room;
use crate::codec::Context;
use crate::codec::{Dialect, Encode, Record, Sink};
use crate::json::{write_line, Layout};
use crate::model::{Arguments, Event, Outcome, Terminal, ToolStatus};
use crate::report::Fate;

#[derive(Default)]
pub struct Encoder {
    started: bool,
    session_id: String,
    model: String,
    /// Ids made from the input: a base and a counter.
    base: String,
    made: u64,
    /// The assistant message being written: its id, while its round lasts.
    message: Option<String>,
    text: Option<String>,
    reasoning: Option<String>,
    turns: u64,
    denials: Vec<Value>,
    /// The call ids written (Claude's are toolu_…): the source's where it has them.
    calls: indexmap::IndexMap<String, (String, Value)>,
    /// Calls answered as failed, which a refusal may name after the fact (the result is
    /// written; the refusal joins `permission_denials`).
    failed: indexmap::IndexMap<String, (String, Value)>,
    last_text: Option<String>,
    fatal: Option<String>,
    /// Why the last refused call was refused.
    denied: Option<String>,
    /// The run's result is out.
    done: bool,
    /// `--include-partial-messages`: `stream_event` lines ahead of each `assistant` line.
    partial: bool,
    /// The next content block's index in the message being written.
    block: u64,
    /// The message's last block was a tool_use (its stop reason).
    called: bool,
    /// The directory the agent runs in where agentgate knows it (`exec`), for an init whose
    /// source states none.
    cwd: Option<String>,
    /// With partial messages: the kind and index of the block begun and not yet written whole.
    streaming: Option<(&'static str, u64)>,
    /// The text its deltas gave so far.
    streamed: String,
    /// When the run began, where it runs now (`exec`): its result's `duration_ms` is the wall
    /// time measured, not 0.
    began: Option<std::time::Instant>,
}

impl Encoder {
    pub fn new(opts: &crate::codec::EncodeOptions) -> Self {
        let began = opts.live_times.then(std::time::Instant::now);
        Encoder { partial: opts.include_partial_messages, cwd: opts.cwd.clone(), began, ..Self::default() }
    }
}

/// A piece of a text or thinking block, as its `content_block_delta` gives it.
fn piece(kind: &str, text: &str) -> Value {
    match kind {
        "thinking" => json!({"type": "thinking_delta", "thinking": text}),
        _ => json!({"type": "text_delta", "text": text}),
    }
}

/// A block as `content_block_start` gives it (empty) and the deltas that fill it
/// (claude-code.md, Partial messages).
fn partial_of(block: &Value) -> (Value, Vec<Value>) {
    let s = |k: &str| block.get(k).and_then(Value::as_str).unwrap_or_default();
    match s("type") {
        "text" => (json!({"type": "text", "text": ""}), vec![piece("text", s("text"))]),
        "thinking" => {
            let mut deltas = vec![piece("thinking", s("thinking"))];
            if !s("signature").is_empty() {
                deltas.push(json!({"type": "signature_delta", "signature": s("signature")}));
            }
            (json!({"type": "thinking", "thinking": "", "signature": ""}), deltas)
        }
        "tool_use" => {
            let input = block.get("input").map_or_else(|| "{}".to_string(), Value::to_string);
            (
                json!({"type": "tool_use", "id": s("id"), "name": s("name"), "input": {}}),
                vec![json!({"type": "input_json_delta", "partial_json": input})],
            )
        }
        _ => (block.clone(), Vec::new()),
    }
}

fn put(sink: &mut Sink<'_>, line: Value) {
    write_line(sink.out, &line, Layout::Compact);
}

/// A kept line of Claude's own without the members its contract refuses for the line's kind
/// (each counted as dropped); `None` (the line counted as dropped) where a member the kind
/// requires is one of them.
fn valid_line(line: &Value, sink: &mut Sink<'_>) -> Option<Value> {
    let contract = Dialect::ClaudeCode.contract();
    let kind = line.get(&contract.type_field).and_then(Value::as_str).unwrap_or_default();
    let (Value::Object(m), Some(spec)) = (line, contract.kinds.get(kind)) else { return Some(line.clone()) };
    let may = contract.fields_of(kind);
    let refused: Vec<&String> = m.iter().filter(|(k, v)| !may.accepts_value(k, v)).map(|(k, _)| k).collect();
    if refused.is_empty() && contract.check_line(line).iter().all(|p| p.starts_with("warning")) {
        return Some(line.clone());
    }
    if refused.iter().any(|k| spec.fields.get(k.as_str()).is_some_and(|f| f.required)) {
        sink.report.dropped_kind(kind);
        return None;
    }
    let kept = m.iter().filter(|(k, _)| !refused.contains(k)).map(|(k, v)| (k.clone(), v.clone()));
    let kept = Value::Object(kept.collect());
    // Still not valid (a word the spec does not list, a required member missing, a nested
    // member refused): not written.
    if contract.check_line(&kept).iter().any(|p| !p.starts_with("warning")) {
        sink.report.dropped_kind(kind);
        return None;
    }
    for k in &refused {
        sink.report.dropped_field(kind, k);
    }
    Some(kept)
}

/// Claude's `input_tokens` excludes the cache figures canonical input includes.
fn usage_of(t: &crate::model::Tokens) -> Value {
    let read = t.cache_read.unwrap_or(0);
    let write = t.cache_write.unwrap_or(0);
    json!({
        "input_tokens": t.input.unwrap_or(0).saturating_sub(read.saturating_add(write)),
        "cache_creation_input_tokens": write,
        "cache_read_input_tokens": read,
        "output_tokens": t.output.unwrap_or(0),
    })
}

impl Encoder {
    /// A UUID made from the input and a counter: the same input, the same ids.
    fn uuid(&mut self) -> String {
        self.made += 1;
        format!("{}{:012x}", &self.base[..24], self.made)
    }

    fn ensure_init(&mut self, ctx: &Context, sink: &mut Sink<'_>, cwd: Option<&str>) {
        if self.started {
            return;
        }
        self.started = true;
        let derived = ctx.derived_uuid();
        self.base = derived.clone();
        self.session_id = ctx.session_id.clone().unwrap_or(derived);
        self.model = ctx.model.clone().unwrap_or_else(|| "unknown".into());
        let uuid = self.uuid();
        put(
            sink,
            json!({
                "type": "system", "subtype": "init", "cwd": cwd.or(self.cwd.as_deref()).unwrap_or(""), "session_id": self.session_id,
                "tools": [], "mcp_servers": [], "model": self.model, "permissionMode": "default", "uuid": uuid,
            }),
        );
    }

    /// A `stream_event` line of the main agent's.
    fn stream(&mut self, sink: &mut Sink<'_>, event: Value) {
        let uuid = self.uuid();
        put(
            sink,
            json!({"type": "stream_event", "event": event, "session_id": self.session_id, "parent_tool_use_id": null, "uuid": uuid}),
        );
    }

    /// The message being written, begun where it is not (with partial messages, its
    /// `message_start` goes out first).
    fn message_id(&mut self, sink: &mut Sink<'_>) -> String {
        if let Some(id) = &self.message {
            return id.clone();
        }
        self.turns += 1;
        let id = format!("msg_agentgate{}", &self.uuid()[24..]);
        self.message = Some(id.clone());
        self.block = 0;
        if self.partial {
            let message = json!({
                "model": self.model, "id": id, "type": "message", "role": "assistant", "content": [],
                "stop_reason": null, "stop_sequence": null, "usage": usage_of(&Default::default()),
            });
            self.stream(sink, json!({"type": "message_start", "message": message}));
        }
        id
    }

    /// With partial messages: a text or thinking block begins as its source's does, so that
    /// its deltas go out as they come.
    fn open_block(&mut self, sink: &mut Sink<'_>, kind: &'static str) {
        if !self.partial {
            return;
        }
        self.message_id(sink);
        let start = match kind {
            "thinking" => json!({"type": "thinking", "thinking": "", "signature": ""}),
            _ => json!({"type": "text", "text": ""}),
        };
        let index = self.block;
        self.block += 1;
        self.stream(sink, json!({"type": "content_block_start", "index": index, "content_block": start}));
        self.streaming = Some((kind, index));
        self.streamed.clear();
    }

    /// With partial messages: a piece of the open block's text, as its delta.
    fn block_delta(&mut self, sink: &mut Sink<'_>, kind: &'static str, text: &str) {
        let Some((open, index)) = self.streaming else { return };
        if open == kind && !text.is_empty() {
            self.streamed.push_str(text);
            let delta = piece(kind, text);
            self.stream(sink, json!({"type": "content_block_delta", "index": index, "delta": delta}));
        }
    }

    /// With partial messages: a block begun whose text came to nothing is stopped (no
    /// assistant line is written for an empty block).
    fn drop_block(&mut self, sink: &mut Sink<'_>, kind: &str) {
        if let Some((_, index)) = self.streaming.filter(|(open, _)| *open == kind) {
            self.streaming = None;
            self.stream(sink, json!({"type": "content_block_stop", "index": index}));
        }
    }

    /// One assistant line: a message holding one content block. With partial messages, the
    /// block's start, deltas and stop go ahead of it, as Claude Code writes them (a block whose
    /// start and deltas went out as they came, only its stop).
    fn assistant_line(&mut self, sink: &mut Sink<'_>, block: Value) {
        let id = self.message_id(sink);
        let kind = block.get("type").and_then(Value::as_str).unwrap_or_default();
        if self.partial {
            let open = self.streaming.filter(|(open, _)| *open == kind);
            let index = match open {
                Some((_, index)) => {
                    self.streaming = None;
                    index
                }
                None => {
                    self.block += 1;
                    self.block - 1
                }
            };
            if open.is_none() {
                let (start, deltas) = partial_of(&block);
                self.stream(sink, json!({"type": "content_block_start", "index": index, "content_block": start}));
                for delta in deltas {
                    self.stream(sink, json!({"type": "content_block_delta", "index": index, "delta": delta}));
                }
            } else {
                // The whole text came after its pieces (or without them): what they lacked.
                let whole = block.get(kind).and_then(Value::as_str).unwrap_or_default();
                if let Some(rest) = whole.strip_prefix(self.streamed.as_str()).filter(|r| !r.is_empty()) {
                    let delta = piece(kind, rest);
                    self.stream(sink, json!({"type": "content_block_delta", "index": index, "delta": delta}));
                }
                if let Some(sig) = block.get("signature").and_then(Value::as_str).filter(|s| !s.is_empty()) {
                    let delta = json!({"type": "signature_delta", "signature": sig});
                    self.stream(sink, json!({"type": "content_block_delta", "index": index, "delta": delta}));
                }
            }
            self.stream(sink, json!({"type": "content_block_stop", "index": index}));
        }
        self.called = block.get("type").and_then(Value::as_str) == Some("tool_use");
        let uuid = self.uuid();
        put(
            sink,
            json!({
                "type": "assistant",
                "message": {
                    "model": self.model, "id": id, "type": "message", "role": "assistant", "content": [block],
                    "stop_reason": null, "stop_sequence": null,
                    "usage": {"input_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 0},
                },
                "parent_tool_use_id": null, "session_id": self.session_id, "uuid": uuid,
            }),
        );
    }

    /// The message being written ends (its tools run, or the run ends): the next block begins
    /// a new one. With partial messages, its `message_delta` and `message_stop` (usage as
    /// placeholder zeros, as on the assistant lines: the run's figures are the result's).
    fn end_message(&mut self, sink: &mut Sink<'_>) {
        if self.message.take().is_some() && self.partial {
            let stop = if self.called { "tool_use" } else { "end_turn" };
            self.stream(
                sink,
                json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 0}}),
            );
            self.stream(sink, json!({"type": "message_stop"}));
        }
    }

    fn flush_reasoning(&mut self, sink: &mut Sink<'_>) {
        match self.reasoning.take().filter(|r| !r.is_empty()) {
            Some(r) => self.assistant_line(sink, json!({"type": "thinking", "thinking": r, "signature": ""})),
            None => self.drop_block(sink, "thinking"),
        }
    }

    fn flush(&mut self, sink: &mut Sink<'_>) {
        self.flush_reasoning(sink);
        match self.text.take().filter(|t| !t.is_empty()) {
            Some(t) => {
                self.last_text = Some(t.clone());
                self.assistant_line(sink, json!({"type": "text", "text": t}));
            }
            None => self.drop_block(sink, "text"),
        }
    }

    fn tool_result(&mut self, sink: &mut Sink<'_>, id: &str, output: String, failed: bool) {
        self.flush(sink);
        // The model's message ends where its tools run: the next text is a new message.
        self.end_message(sink);
        let mut block = Map::new();
        block.insert("tool_use_id".into(), json!(id));
        block.insert("type".into(), json!("tool_result"));
        block.insert("content".into(), json!(output));
        if failed {
            block.insert("is_error".into(), json!(true));
        }
        let uuid = self.uuid();
        put(
            sink,
            json!({
                "type": "user", "message": {"role": "user", "content": [Value::Object(block)]},
                "parent_tool_use_id": null, "session_id": self.session_id, "uuid": uuid,
            }),
        );
    }

    fn call_id(&mut self, id: Option<&str>) -> String {
        match id.filter(|i| !i.is_empty()) {
            Some(i) => i.to_string(),
            None => format!("toolu_agentgate{}", &self.uuid()[24..]),
        }
    }

    fn result(&mut self, t: &Terminal, ctx: &Context, sink: &mut Sink<'_>) {
        self.flush(sink);
        let answer = t.final_text.clone().filter(|a| !a.is_empty());
        if t.outcome == Outcome::Completed && answer.is_some() && answer != self.last_text {
            self.end_message(sink);
            sink.report.synthesized("assistant");
            self.text = answer.clone();
            self.flush(sink);
        }
        self.end_message(sink);
        // The outcome table (mappings/claude-code.json): a turn limit in any source's words
        // (Claude's error_max_turns, localcode's max_rounds, loom's StepBudget, ACP's
        // max_turn_requests).
        let max_turns = t
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("max_rounds") || r.contains("max_turn") || r == "StepBudget");
        let (subtype, is_error) = match t.outcome {
            Outcome::Completed => ("success", false),
            Outcome::Incomplete if max_turns => ("error_max_turns", true),
            _ => ("error_during_execution", true),
        };
        let text = match t.outcome {
            Outcome::Completed => answer.unwrap_or_default(),
            o => t
                .error
                .clone()
                .or_else(|| self.fatal.clone())
                .or_else(|| (o == Outcome::PermissionDenied).then(|| self.denied.clone()).flatten())
                .or_else(|| t.reason.clone())
                .map(|e| if o == Outcome::Failed { e } else { format!("{}: {e}", o.name()) })
                .unwrap_or_else(|| o.name().to_string()),
        };
        let uuid = self.uuid();
        let mut line = Map::new();
        if ctx.totals.is_empty() {
            // Claude's result has no word for unknown usage: zeros, said (issue 54: unknown is
            // not zero; codex's failed turn states none).
            sink.report.synthesized(crate::report::UNKNOWN_USAGE);
        }
        for (k, v) in [
            ("type", json!("result")),
            ("subtype", json!(subtype)),
            ("is_error", json!(is_error)),
            // Unknown to the source: stated as 0, as the SDK's reader requires the members; a
            // run under exec took the time measured.
            ("duration_ms", json!(self.began.map_or(0, |b| b.elapsed().as_millis() as u64))),
            ("duration_api_ms", json!(0)),
            ("num_turns", json!(self.turns)),
            ("result", json!(text)),
            ("stop_reason", Value::Null),
            ("session_id", json!(self.session_id)),
            // Only where the source states a cost: agentgate never prices tokens.
            ("total_cost_usd", t.cost_usd.map_or(Value::Null, |c| json!(c))),
            ("usage", usage_of(&ctx.totals)),
            ("permission_denials", Value::Array(std::mem::take(&mut self.denials))),
            ("uuid", json!(uuid)),
        ] {
            if !(k == "total_cost_usd" && v.is_null()) {
                line.insert(k.into(), v);
            }
        }
        put(sink, Value::Object(line));
        self.done = true;
    }
}

impl Encode for Encoder {
    fn hints(&self) -> crate::codec::Hints {
        crate::codec::Hints { matches_calls_by_id: true, call_arguments: false, ..crate::codec::Hints::default() }
    }

    /// A copied `result` line is the run's result: none is written at its end.
    fn observe(&mut self, rec: &Record, ctx: &Context, line: &str, sink: &mut Sink<'_>) {
        if let Ok(Ok(m)) = crate::json::object::Object::parse(line) {
            if m.get_str("type").as_deref() == Some("result") {
                self.done = true;
            }
        }
        self.observe_by_encoding(rec, ctx, sink);
    }

    fn encode(&mut self, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        // A Claude line written anew is written from the model: what its source line held
        // beyond it (a member no spec names, one of a type the contract refuses) is not
        // written, and counted.
        if rec.origin == Dialect::ClaudeCode && !rec.extra.is_empty() && !matches!(rec.event, Event::Extension { .. }) {
            for key in rec.extra.keys() {
                sink.report.dropped_field(rec.event.kind(), &key);
            }
        }
        let cwd = match &rec.event {
            Event::Session(s) => s.cwd.clone(),
            _ => None,
        };
        if let Event::Terminal(t) = &rec.event {
            if self.done {
                return Fate::Absorbed;
            }
            self.ensure_init(ctx, sink, None);
            self.result(t, ctx, sink);
            return Fate::Written;
        }
        self.ensure_init(ctx, sink, cwd.as_deref());
        match &rec.event {
            Event::Session(_) => return Fate::Absorbed,
            Event::TextStart => {
                self.flush(sink);
                self.text = Some(String::new());
                self.open_block(sink, "text");
                return Fate::Absorbed;
            }
            Event::TextDelta { text, .. } => {
                self.flush_reasoning(sink);
                self.text.get_or_insert_with(String::new).push_str(text);
                self.block_delta(sink, "text", text);
                return Fate::Absorbed;
            }
            Event::TextReplace { text } | Event::TextEnd { text: Some(text) } => {
                self.text = Some(text.clone());
                self.flush(sink);
            }
            Event::TextEnd { text: None } => self.flush(sink),
            Event::ReasoningStart { .. } => {
                self.flush(sink);
                self.reasoning = Some(String::new());
                self.open_block(sink, "thinking");
                return Fate::Absorbed;
            }
            Event::ReasoningDelta { text } => {
                self.reasoning.get_or_insert_with(String::new).push_str(text);
                self.block_delta(sink, "thinking", text);
                return Fate::Absorbed;
            }
            Event::ReasoningEnd { text } => {
                if let Some(t) = text {
                    self.reasoning = Some(t.clone());
                }
                self.flush_reasoning(sink);
            }
            Event::ToolCall(c) => {
                self.flush(sink);
                // A call whose source gave no id gets one of Claude's form, not agentgate's `call-N`.
                let id = self.call_id(c.id.as_deref().filter(|_| !c.id_made));
                let input = c.arguments.to_object();
                self.calls.insert(c.id.as_deref().unwrap_or(&id).to_string(), (id.clone(), input.clone()));
                self.assistant_line(
                    sink,
                    json!({"type": "tool_use", "id": id, "name": c.name.as_str(), "input": input}),
                );
            }
            Event::ToolResult(r) => {
                let key = r.id.as_deref().unwrap_or_default().to_string();
                let failed = r.status != ToolStatus::Completed;
                let id = match self.calls.shift_remove(&key) {
                    Some((id, input)) => {
                        if failed {
                            make_room(&mut self.failed, key.as_str());
                            self.failed.insert(key, (id.clone(), input));
                        }
                        id
                    }
                    None => {
                        // A result whose call never came: the call first, as the model made it.
                        let name = r.name.clone().or_else(|| ctx.call.name.clone()).unwrap_or_default();
                        let id = self.call_id(Some(&key));
                        sink.report.synthesized("tool_use");
                        self.assistant_line(
                            sink,
                            json!({"type": "tool_use", "id": id, "name": name.as_str(), "input": {}}),
                        );
                        id
                    }
                };
                let output = r.output.as_ref().or(ctx.call.output.as_ref()).map(|o| o.as_str().into_owned());
                let output = output.or_else(|| r.error.clone()).unwrap_or_default();
                self.tool_result(sink, &id, output, failed);
            }
            Event::PermissionDenied(d) => {
                let key = d.id.clone().unwrap_or_default();
                let (id, input) = match self.calls.shift_remove(&key) {
                    Some(c) => c,
                    None if ctx.answered => {
                        // Its call was answered as failed already: the refusal is listed.
                        let Some((id, input)) = self.failed.shift_remove(&key) else { return Fate::Absorbed };
                        self.denials.push(json!({"tool_name": d.name, "tool_use_id": id, "tool_input": input}));
                        return Fate::Written;
                    }
                    None => {
                        let id = self.call_id(d.id.as_deref());
                        let input = mcp_input(&d.arguments);
                        self.assistant_line(
                            sink,
                            json!({"type": "tool_use", "id": id, "name": d.name, "input": input}),
                        );
                        (id, input)
                    }
                };
                let why = d.reason.clone().unwrap_or_else(|| "approval required".into());
                self.denied = Some(why.clone());
                self.denials.push(json!({"tool_name": d.name, "tool_use_id": id, "tool_input": input}));
                self.tool_result(sink, &id, format!("permission denied: {why}"), true);
            }
            Event::Prompt { text } => {
                self.flush(sink);
                self.end_message(sink);
                let uuid = self.uuid();
                put(
                    sink,
                    json!({"type": "user", "message": {"role": "user", "content": text}, "parent_tool_use_id": null, "session_id": self.session_id, "uuid": uuid}),
                );
            }
            Event::RoundStart { .. } | Event::RoundEnd { .. } | Event::TurnEnd { .. } | Event::TurnStart { .. } => {
                self.flush(sink);
                self.end_message(sink);
                return Fate::Absorbed;
            }
            Event::Error { message, fatal } => {
                if *fatal {
                    self.fatal = Some(message.clone());
                }
                return Fate::Absorbed;
            }
            // (The run's cost goes on its result, from the terminal.)
            Event::FinalAnswer { .. } | Event::Usage(_) | Event::Cost { .. } => return Fate::Absorbed,
            Event::ToolOutput { .. } => return Fate::Absorbed,
            Event::Extension { line } if ctx.native => {
                // A line of Claude's own the model has no event for (a `result`, a `system`
                // line but init), as it was; written anew when it was not valid as it stood:
                // without the members its contract refuses, counted, or, where one it requires
                // is refused, not at all (the run's result is then written from the model).
                self.flush(sink);
                let Some(line) = valid_line(line, sink) else {
                    return Fate::Dropped;
                };
                self.done |= line.get("type").and_then(Value::as_str) == Some("result");
                put(sink, line);
                return Fate::PassedThrough;
            }
            other => {
                sink.report.dropped_kind(other.kind());
                return Fate::Dropped;
            }
        }
        Fate::Written
    }
}

fn mcp_input(a: &Arguments) -> Value {
    a.to_object()
}

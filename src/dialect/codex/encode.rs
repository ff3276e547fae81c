//! Writes `codex exec --json`, lines shaped as the spec's example: one `thread.started`, one
//! `turn.started`, items `item_N` from one counter (a call as `item.started` then
//! `item.completed` with its status and output, text as `agent_message` items, reasoning as
//! `reasoning` items), and `turn.completed` with the run's usage or `turn.failed` with its
//! error. A run of another dialect is one codex turn (one codex process runs one turn; see
//! `mappings/codex.json`). Lines read from codex itself (also through the canonical stream)
//! are written back as they were.

use indexmap::IndexMap;
use serde_json::{json, Map, Value};

use super::COMMAND;
use crate::codec::make_room;
use crate::codec::Context;
use crate::codec::{Encode, Record, Sink};
use crate::json::{write_line, Layout};
use crate::model::{Arguments, Denial, Event, Outcome, Terminal, ToolResult, ToolStatus};
use crate::report::Fate;

/// How a call ended: with a status, or refused (it never ran).
#[derive(Clone, Copy)]
enum End {
    Status(ToolStatus),
    Refused,
}

/// A call written as an item that has not completed yet.
struct OpenItem {
    item_id: String,
    kind: ItemKind,
    output: String,
}

enum ItemKind {
    Command { command: String },
    Mcp { server: String, tool: String, arguments: Value },
}

pub struct Encoder {
    started: bool,
    /// The turn's closing line is out (own streams: each turn's as the source wrote it).
    closed: bool,
    next_item: u64,
    /// Assistant text being streamed, for its agent_message item.
    text: Option<String>,
    /// Reasoning being streamed, for its reasoning item.
    reasoning: Option<String>,
    /// The text of the last agent_message written: the run's answer as codex's readers see it.
    last_message: Option<String>,
    calls: IndexMap<String, OpenItem>,
    todo: Option<(String, Value)>,
    /// The source's name for it (adal, localcode...): an MCP server name for its tools.
    server: String,
    fatal: Option<String>,
    /// Why the last refused call was refused, for a run that stopped for approval.
    denied: Option<String>,
}

impl Encoder {
    pub fn new() -> Self {
        Encoder {
            started: false,
            closed: false,
            next_item: 0,
            text: None,
            reasoning: None,
            last_message: None,
            calls: IndexMap::new(),
            todo: None,
            server: String::new(),
            fatal: None,
            denied: None,
        }
    }
}

impl Default for Encoder {
    fn default() -> Self {
        Self::new()
    }
}

fn put(sink: &mut Sink<'_>, line: Value) {
    write_line(sink.out, &line, Layout::Compact);
}

fn item_line(sink: &mut Sink<'_>, kind: &str, item: Value) {
    put(sink, json!({"type": kind, "item": item}));
}

/// Whether a call of another dialect is a shell command: its name says so, in any case (Claude
/// Code's is `Bash`).
fn command_of(name: &str, args: &Arguments) -> Option<String> {
    let v = args.to_value();
    let cmd = v.as_ref().and_then(|v| v.get("command")).and_then(Value::as_str).map(str::to_string);
    match name.to_ascii_lowercase().as_str() {
        COMMAND | "bash" | "shell" | "exec_command" | "run_shell_command" | "command" => {
            Some(cmd.unwrap_or_else(|| args.to_text()))
        }
        _ => None,
    }
}

/// An MCP call's arguments: a JSON object where the source gave one, else `{"raw": text}`.
fn mcp_arguments(args: &Arguments) -> Value {
    args.to_object()
}

impl Encoder {
    fn item_id(&mut self) -> String {
        let id = format!("item_{}", self.next_item);
        self.next_item += 1;
        id
    }

    /// `thread.started` and `turn.started`, once, before anything of a run of another dialect.
    fn ensure_turn(&mut self, ctx: &Context, sink: &mut Sink<'_>) {
        if self.started {
            return;
        }
        self.started = true;
        let id = ctx.session_id.clone().unwrap_or_else(|| ctx.derived_uuid());
        if ctx.session_id.is_none() {
            sink.report.synthesized("thread.started.thread_id");
        }
        put(sink, json!({"type": "thread.started", "thread_id": id}));
        put(sink, json!({"type": "turn.started"}));
    }

    /// Ends the text and reasoning being streamed, as their items.
    fn flush(&mut self, sink: &mut Sink<'_>) {
        if let Some(r) = self.reasoning.take() {
            let id = self.item_id();
            item_line(sink, "item.completed", json!({"id": id, "type": "reasoning", "text": r}));
        }
        if let Some(t) = self.text.take() {
            self.message(sink, t);
        }
    }

    fn message(&mut self, sink: &mut Sink<'_>, text: String) {
        let id = self.item_id();
        item_line(sink, "item.completed", json!({"id": id, "type": "agent_message", "text": text}));
        self.last_message = Some(text);
    }

    /// The item of a call, in its state: in progress (started), or ended with `status`.
    fn call_item(open: &OpenItem, status: &str, exit_code: Option<i64>, error: Option<&str>) -> Value {
        match &open.kind {
            ItemKind::Command { command } => json!({
                "id": open.item_id, "type": "command_execution", "command": command,
                "aggregated_output": open.output, "exit_code": exit_code, "status": status,
            }),
            ItemKind::Mcp { server, tool, arguments } => {
                let (result, err) = match (status, error) {
                    ("in_progress", _) => (Value::Null, Value::Null),
                    ("completed", _) => (
                        json!({"content": [{"type": "text", "text": open.output}], "structured_content": null}),
                        Value::Null,
                    ),
                    (_, e) => (Value::Null, json!({"message": e.unwrap_or(&open.output)})),
                };
                json!({
                    "id": open.item_id, "type": "mcp_tool_call", "server": server, "tool": tool,
                    "arguments": arguments, "result": result, "error": err, "status": status,
                })
            }
        }
    }

    fn start_call(&mut self, sink: &mut Sink<'_>, id: &str, name: &str, args: &Arguments) {
        self.flush(sink);
        let kind = match command_of(name, args) {
            Some(command) => ItemKind::Command { command },
            None => {
                ItemKind::Mcp { server: self.server.clone(), tool: name.to_string(), arguments: mcp_arguments(args) }
            }
        };
        let open = OpenItem { item_id: self.item_id(), kind, output: String::new() };
        item_line(sink, "item.started", Self::call_item(&open, "in_progress", None, None));
        make_room(&mut self.calls, id);
        self.calls.insert(id.to_string(), open);
    }

    /// A call's end: `completed`; `failed`; for a cancelled call (it ran, and a timeout or an
    /// interrupt stopped it) `failed` with no exit code and the reason; `declined` only for a
    /// command the source refused (codex.md: `declined` is "not run").
    fn end_call(&mut self, sink: &mut Sink<'_>, id: &str, end: End, output: Option<String>, error: Option<&str>) {
        let Some(mut open) = self.calls.shift_remove(id) else { return };
        if let Some(o) = output {
            open.output = o;
        }
        let (word, code) = match (&open.kind, end) {
            (_, End::Status(ToolStatus::Completed)) => ("completed", Some(0)),
            (ItemKind::Command { .. }, End::Refused) => ("declined", None),
            (ItemKind::Command { .. }, End::Status(ToolStatus::Cancelled)) => {
                // command_execution has no member for why: the reason follows its output.
                if let Some(why) = error.filter(|w| !w.is_empty()) {
                    if !open.output.is_empty() && !open.output.ends_with('\n') {
                        open.output.push('\n');
                    }
                    open.output.push_str(why);
                }
                ("failed", None)
            }
            (ItemKind::Mcp { .. }, End::Refused | End::Status(ToolStatus::Cancelled)) => ("failed", None),
            // A failed command exited non-zero (codex.md: failed is a non-zero exit): 1 where
            // the source stated no code.
            _ => ("failed", Some(1)),
        };
        item_line(sink, "item.completed", Self::call_item(&open, word, code, error));
    }

    /// The run's end: open items closed, then `turn.completed` with the usage or `turn.failed`.
    fn close(&mut self, t: &Terminal, ctx: &Context, sink: &mut Sink<'_>) {
        self.ensure_turn(ctx, sink);
        self.flush(sink);
        let answer = t.final_text.clone().filter(|a| !a.is_empty());
        if answer.is_some() && answer != self.last_message {
            // The answer is the last agent_message (codex.md): one says it.
            sink.report.synthesized("agent_message");
            self.message(sink, answer.unwrap_or_default());
        }
        // codex.md: "At turn end, items still open get a closing item.completed": in the state
        // they are in, still in_progress (no result came for them; loom's calls never get one).
        for (_, open) in std::mem::take(&mut self.calls) {
            item_line(sink, "item.completed", Self::call_item(&open, "in_progress", None, None));
        }
        if let Some((id, items)) = self.todo.take() {
            item_line(sink, "item.completed", json!({"id": id, "type": "todo_list", "items": items}));
        }
        if t.outcome == Outcome::Completed {
            let u = ctx.totals;
            let mut usage = Map::new();
            usage.insert("input_tokens".into(), json!(u.input.unwrap_or(0)));
            usage.insert("cached_input_tokens".into(), json!(u.cache_read.unwrap_or(0)));
            if let Some(w) = u.cache_write {
                usage.insert("cache_write_input_tokens".into(), json!(w));
            }
            usage.insert("output_tokens".into(), json!(u.output.unwrap_or(0)));
            if let Some(r) = u.reasoning {
                usage.insert("reasoning_output_tokens".into(), json!(r));
            }
            put(sink, json!({"type": "turn.completed", "usage": usage}));
        } else {
            if !ctx.totals.is_empty() {
                // turn.failed has no usage (codex.md, Records): the run's tokens are said here.
                sink.report.dropped_field("turn.failed", "usage");
            }
            let why = t
                .error
                .clone()
                .or_else(|| self.fatal.clone())
                .or_else(|| (t.outcome == Outcome::PermissionDenied).then(|| self.denied.clone()).flatten())
                .map(|e| match t.outcome {
                    Outcome::Failed => e,
                    o => format!("{}: {e}", o.name()),
                })
                .or_else(|| t.reason.clone().map(|r| format!("{}: {r}", t.outcome.name())))
                .unwrap_or_else(|| t.outcome.name().to_string());
            put(sink, json!({"type": "turn.failed", "error": {"message": why}}));
        }
        self.closed = true;
    }
}

impl Encoder {
    /// A call's result: its call first where the call was never seen.
    fn tool_result(&mut self, r: &ToolResult, ctx: &Context, sink: &mut Sink<'_>) {
        let id = r.id.as_deref().unwrap_or_default().to_string();
        if !self.calls.contains_key(&id) {
            // A result whose call was never seen: its call first.
            let name = r.name.clone().or_else(|| ctx.call.name.clone()).unwrap_or_default();
            sink.report.synthesized("item.started");
            self.start_call(sink, &id, &name, &r.arguments);
        }
        let output = r.output.as_ref().or(ctx.call.output.as_ref()).map(|o| o.as_str().into_owned());
        self.end_call(sink, &id, End::Status(r.status), output, r.error.as_deref());
    }

    /// A refusal: the call (started here where it was not) ends cancelled, saying why.
    fn refused(&mut self, d: &Denial, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        let id = d.id.clone().unwrap_or_default();
        if !self.calls.contains_key(&id) {
            if ctx.answered {
                return Fate::Absorbed;
            }
            self.start_call(sink, &id, &d.name, &d.arguments);
        }
        let why = d.reason.clone().unwrap_or_else(|| "approval required".into());
        self.denied = Some(why.clone());
        self.end_call(sink, &id, End::Refused, Some(String::new()), Some(&why));
        Fate::Written
    }

    /// A todo list: codex's `todo_list` item, started once and updated after, each entry a
    /// `{text, completed}` object.
    fn todo(&mut self, items: &Value, sink: &mut Sink<'_>) {
        let items = match items {
            Value::Array(a) => Value::Array(
                a.iter()
                    .map(|x| match x {
                        Value::Object(o) if o.contains_key("text") => x.clone(),
                        Value::String(s) => json!({"text": s, "completed": false}),
                        other => json!({"text": other.to_string(), "completed": false}),
                    })
                    .collect(),
            ),
            other => json!([{"text": other.to_string(), "completed": false}]),
        };
        let (kind, id) = match &self.todo {
            Some((id, _)) => ("item.updated", id.clone()),
            None => ("item.started", self.item_id()),
        };
        item_line(sink, kind, json!({"id": id, "type": "todo_list", "items": items}));
        self.todo = Some((id, items));
    }
}

impl Encoder {
    /// [`Encode::observe`] of a codex record: what `encode` sets, arm by arm, nothing written.
    fn note(&mut self, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) {
        if self.server.is_empty() {
            self.server = rec.origin.name().to_string();
        }
        match &rec.event {
            Event::Terminal(_) if self.closed => return,
            Event::Terminal(_) | Event::PermissionDenied(_) | Event::Todo { .. } => {
                return self.observe_by_encoding(rec, ctx, sink)
            }
            Event::Extension { .. } | Event::Repeat => return,
            _ => {}
        }
        self.started = true;
        match &rec.event {
            Event::TextStart => {
                if let Some(t) = self.text.take() {
                    self.note_message(t);
                }
                self.text = Some(String::new());
            }
            Event::TextDelta { text, .. } => {
                if self.reasoning.take().is_some() {
                    self.next_item += 1;
                }
                self.text.get_or_insert_with(String::new).push_str(text);
            }
            Event::TextReplace { text } | Event::TextEnd { text: Some(text) } => {
                self.text = None;
                self.note_message(text.clone());
            }
            Event::TextEnd { text: None } => {
                let t = self.text.take().unwrap_or_default();
                if !t.is_empty() {
                    self.note_message(t);
                }
            }
            Event::ReasoningStart { .. } => self.reasoning = Some(String::new()),
            Event::ReasoningDelta { text } => self.reasoning.get_or_insert_with(String::new).push_str(text),
            Event::ReasoningEnd { text } => {
                let r = text.clone().or_else(|| self.reasoning.take()).unwrap_or_default();
                self.reasoning = None;
                if !r.is_empty() {
                    self.next_item += 1;
                }
            }
            Event::ToolCall(c) => self.note_call(c.id.as_deref().unwrap_or_default(), &c.name, &c.arguments),
            Event::ToolOutput { id: Some(id), text, accumulated } => {
                if let Some(open) = self.calls.get_mut(id.as_str()) {
                    let t = text.as_str();
                    if *accumulated {
                        open.output = t.into_owned();
                    } else {
                        open.output.push_str(&t);
                    }
                }
            }
            Event::ToolResult(r) => {
                let id = r.id.as_deref().unwrap_or_default();
                if !self.calls.contains_key(id) {
                    let name = r.name.clone().or_else(|| ctx.call.name.clone()).unwrap_or_default();
                    self.note_call(id, &name, &r.arguments);
                }
                self.calls.shift_remove(id);
            }
            Event::ToolWithdrawn { id: Some(id) } => {
                self.calls.shift_remove(id.as_str());
            }
            Event::Notice { .. } => self.next_item += 1,
            Event::Error { message, fatal: true } => self.fatal = Some(message.clone()),
            Event::FinalAnswer { text } if !ctx.answer_streamed && !text.is_empty() => {
                self.note_flush();
                self.note_message(text.clone());
            }
            Event::TurnEnd { .. } => self.closed = true,
            Event::TurnStart { .. } => self.closed = false,
            _ => {}
        }
    }

    /// [`Encoder::message`]'s state: an item, and the run's last message.
    fn note_message(&mut self, text: String) {
        self.next_item += 1;
        self.last_message = Some(text);
    }

    /// [`Encoder::flush`]'s state.
    fn note_flush(&mut self) {
        if self.reasoning.take().is_some() {
            self.next_item += 1;
        }
        if let Some(t) = self.text.take() {
            self.note_message(t);
        }
    }

    /// [`Encoder::start_call`]'s state: the call open as the item it would have written.
    fn note_call(&mut self, id: &str, name: &str, args: &Arguments) {
        self.note_flush();
        let kind = match command_of(name, args) {
            Some(command) => ItemKind::Command { command },
            None => {
                ItemKind::Mcp { server: self.server.clone(), tool: name.to_string(), arguments: mcp_arguments(args) }
            }
        };
        let open = OpenItem { item_id: self.item_id(), kind, output: String::new() };
        make_room(&mut self.calls, id);
        self.calls.insert(id.to_string(), open);
    }
}

impl Encode for Encoder {
    fn hints(&self) -> crate::codec::Hints {
        crate::codec::Hints { matches_calls_by_id: true, call_arguments: false, ..crate::codec::Hints::default() }
    }

    /// A copied `turn.completed` or `turn.failed` ends the turn: no other is written at the
    /// run's end, unless a copied `turn.started` opens another (a resumed run cut in its second
    /// turn still ends with `turn.failed`).
    ///
    /// A codex record (of a codex run, or carried through canonical) sets the state its
    /// encoding would leave without building or writing its line (encoding into a buffer
    /// thrown away was a third of codex to codex: #53): the run started, the item counter, the
    /// text and reasoning streamed, the last message, the calls open with their output, a fatal
    /// error; its `turn.completed` / `turn.failed` is the `TurnEnd` record the line decodes to.
    /// A refusal, a todo list and the terminal are still observed by encoding. tests/observe.rs
    /// holds this to the encoding observe.
    fn observe(&mut self, rec: &Record, ctx: &Context, line: &str, sink: &mut Sink<'_>) {
        if ctx.native && rec.origin == crate::codec::Dialect::Codex {
            return self.note(rec, ctx, sink);
        }
        if let Ok(Ok(m)) = crate::json::object::Object::parse(line) {
            match m.get_str("type").as_deref() {
                Some("turn.completed" | "turn.failed") => self.closed = true,
                Some("turn.started") => self.closed = false,
                _ => {}
            }
        }
        self.observe_by_encoding(rec, ctx, sink);
    }

    fn encode(&mut self, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        if self.server.is_empty() {
            // The dialect the run was read from names the MCP server of its tools.
            self.server = rec.origin.name().to_string();
        }
        match &rec.event {
            Event::Terminal(t) => {
                if self.closed {
                    return Fate::Absorbed;
                }
                self.close(t, ctx, sink);
                return Fate::Written;
            }
            Event::Session(_) => {
                self.ensure_turn(ctx, sink);
                return Fate::Absorbed;
            }
            // A line of a kind codex.md does not list writes nothing (copied, it is written as
            // read): it does not open the run, so that the `thread.started` of a stream that
            // lacks one still comes before its first listed line.
            Event::Extension { .. } | Event::Repeat => {
                sink.report.dropped_kind(rec.event.kind());
                return Fate::Dropped;
            }
            _ => {}
        }
        self.ensure_turn(ctx, sink);
        match &rec.event {
            Event::TextStart => {
                if let Some(t) = self.text.take() {
                    self.message(sink, t);
                }
                self.text = Some(String::new());
                return Fate::Absorbed;
            }
            Event::TextDelta { text, .. } => {
                if let Some(r) = self.reasoning.take() {
                    let id = self.item_id();
                    item_line(sink, "item.completed", json!({"id": id, "type": "reasoning", "text": r}));
                }
                self.text.get_or_insert_with(String::new).push_str(text);
                return Fate::Absorbed;
            }
            Event::TextReplace { text } | Event::TextEnd { text: Some(text) } => {
                self.text = Some(text.clone());
                let t = self.text.take().unwrap_or_default();
                self.message(sink, t);
            }
            Event::TextEnd { text: None } => {
                let t = self.text.take().unwrap_or_default();
                if t.is_empty() {
                    return Fate::Absorbed;
                }
                self.message(sink, t);
            }
            Event::ReasoningStart { .. } => {
                self.reasoning = Some(String::new());
                return Fate::Absorbed;
            }
            Event::ReasoningDelta { text } => {
                self.reasoning.get_or_insert_with(String::new).push_str(text);
                return Fate::Absorbed;
            }
            Event::ReasoningEnd { text } => {
                let r = text.clone().or_else(|| self.reasoning.take()).unwrap_or_default();
                self.reasoning = None;
                if r.is_empty() {
                    return Fate::Absorbed;
                }
                let id = self.item_id();
                item_line(sink, "item.completed", json!({"id": id, "type": "reasoning", "text": r}));
            }
            Event::ToolCall(c) => {
                let id = c.id.as_deref().unwrap_or_default().to_string();
                self.start_call(sink, &id, &c.name, &c.arguments);
            }
            Event::ToolOutput { id: Some(id), text, accumulated } => {
                let Some(open) = self.calls.get_mut(id.as_str()) else { return Fate::Dropped };
                let t = text.as_str().into_owned();
                if *accumulated {
                    open.output = t;
                } else {
                    open.output.push_str(&t);
                }
                return Fate::Absorbed;
            }
            Event::ToolResult(r) => self.tool_result(r, ctx, sink),
            Event::PermissionDenied(d) => return self.refused(d, ctx, sink),
            Event::ToolWithdrawn { id: Some(id) } => {
                // A draft withdrawn: a call that did not complete, which codex cannot withdraw.
                self.end_call(sink, id, End::Status(ToolStatus::Cancelled), None, Some("withdrawn"));
            }
            Event::Todo { items } => self.todo(items, sink),
            Event::Notice { text } => {
                let id = self.item_id();
                item_line(sink, "item.completed", json!({"id": id, "type": "error", "message": text}));
            }
            Event::Error { message, fatal } => {
                if *fatal {
                    self.fatal = Some(message.clone());
                    return Fate::Absorbed;
                }
                put(sink, json!({"type": "error", "message": message}));
            }
            Event::FinalAnswer { text } => {
                if !ctx.answer_streamed && !text.is_empty() {
                    self.flush(sink);
                    self.message(sink, text.clone());
                }
                return Fate::Absorbed;
            }
            Event::Usage(_)
            | Event::TurnStart { .. }
            | Event::TurnEnd { .. }
            | Event::RoundStart { .. }
            | Event::RoundEnd { .. } => {
                return Fate::Absorbed;
            }
            other => {
                sink.report.dropped_kind(other.kind());
                return Fate::Dropped;
            }
        }
        Fate::Written
    }
}

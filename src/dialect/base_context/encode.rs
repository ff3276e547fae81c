//! Writing base-context: the session header, each loop's events and messages as
//! `JSON.stringify` writes them (plain or `--json-deltas`), usage and cost on each assistant
//! message; a base-context source's own lines are copied (`copy.rs`).

use std::ops::Range;

use indexmap::IndexMap;
use serde_json::{json, Map, Value};

use crate::codec::make_room;
use crate::codec::Context;
use crate::codec::{Dialect, Encode, EncodeOptions, Record, Sink, SPILL_BLOCK};
use crate::dialect::util::{iso, refusal};
use crate::json::object::Object;

use super::copy::Copied;
use crate::json::number::write_u64;
use crate::json::{write_line, write_str, write_value, Layout};
use crate::model::Extra;
use crate::model::{
    Arguments, Basis, Denial, Event, Outcome, Phase, Scope, Terminal, Text, Tokens, ToolResult, ToolStatus,
};
use crate::report::Fate;

/// Where the assistant message of the current round is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Its content is streaming.
    Open,
    /// Its tools have started, so its content is complete; its `message_end` waits for the
    /// round's usage, and the tool lines after it are held until then.
    Ended,
    /// Its `message_end` is out.
    Written,
}

/// A content block of the assistant message being written, held as base-context writes it
/// (members in order): typed for the three kinds the encoder makes, so that streaming into one
/// and writing it on every update neither hashes its keys nor builds a map.
#[derive(Debug, Clone, PartialEq)]
enum Block {
    /// `{"type":"text","text":…}` or `{"type":"thinking","thinking":…}`, then `more`.
    Text { thinking: bool, text: String, more: Vec<(String, Value)> },
    /// `{"type":"toolCall","id":…,"name":…,"arguments":…}`, then `more`.
    Call { id: String, name: String, arguments: Value, more: Vec<(String, Value)> },
    /// One whose source gave a member in place of one of those: as a value.
    Other(Value),
}

impl Block {
    fn text(kind: &str) -> Block {
        Block::Text { thinking: kind != "text", text: String::new(), more: Vec::new() }
    }

    fn call(id: &str, name: &str, arguments: Value) -> Block {
        Block::Call { id: id.to_string(), name: name.to_string(), arguments, more: Vec::new() }
    }

    /// Its `type`.
    fn kind(&self) -> &str {
        match self {
            Block::Text { thinking: false, .. } => "text",
            Block::Text { thinking: true, .. } => "thinking",
            Block::Call { .. } => "toolCall",
            Block::Other(v) => v["type"].as_str().unwrap_or_default(),
        }
    }

    /// Member `key`, as a value (null where it has none).
    fn get(&self, key: &str) -> Value {
        let more = match (self, key) {
            (Block::Other(v), _) => return v.get(key).cloned().unwrap_or(Value::Null),
            (_, "type") => return json!(self.kind()),
            (Block::Text { thinking, text, .. }, _) if key == if *thinking { "thinking" } else { "text" } => {
                return json!(text)
            }
            (Block::Call { id, .. }, "id") => return json!(id),
            (Block::Call { name, .. }, "name") => return json!(name),
            (Block::Call { arguments, .. }, "arguments") => return arguments.clone(),
            (Block::Text { more, .. } | Block::Call { more, .. }, _) => more,
        };
        more.iter().find(|(k, _)| k == key).map_or(Value::Null, |(_, v)| v.clone())
    }

    /// The text of a text block (or the thinking of a thinking block), where it is a string.
    fn text_str(&self) -> Option<&str> {
        match self {
            Block::Text { text, .. } => Some(text),
            Block::Call { .. } => None,
            Block::Other(v) => v[if v["type"] == "text" { "text" } else { "thinking" }].as_str(),
        }
    }

    /// Member `key` as the string `v`, for the id and name a draft is matched by.
    fn says(&self, key: &str, v: &str) -> bool {
        match (self, key) {
            (Block::Call { id, .. }, "id") => id == v,
            (Block::Call { name, .. }, "name") => name == v,
            (Block::Call { .. } | Block::Text { .. }, _) => self.get(key) == v,
            (Block::Other(b), _) => b[key] == v,
        }
    }

    /// Sets a text or thinking block's text (`field` its member), or appends to it.
    fn set_text(&mut self, field: &str, text: &str, append: bool) {
        match self {
            Block::Text { thinking, text: now, .. } if *thinking == (field == "thinking") => {
                if append {
                    now.push_str(text);
                } else {
                    text.clone_into(now);
                }
            }
            Block::Text { .. } | Block::Call { .. } => {
                let mut v = self.to_value();
                v[field] = json!(text);
                *self = Block::Other(v);
            }
            Block::Other(v) => match &mut v[field] {
                Value::String(now) if append => now.push_str(text),
                other => *other = json!(text),
            },
        }
    }

    /// Adds a source's members beyond the model's, as a map's `extend` would: one it has already
    /// takes the new value in its place.
    fn extend(&mut self, more: Map<String, Value>) {
        let own: &[&str] = match self {
            Block::Text { thinking: false, .. } => &["type", "text"],
            Block::Text { thinking: true, .. } => &["type", "thinking"],
            Block::Call { .. } => &["type", "id", "name", "arguments"],
            Block::Other(_) => &[],
        };
        if more.keys().any(|k| own.contains(&k.as_str())) {
            *self = Block::Other(self.to_value());
        }
        match self {
            Block::Text { more: mine, .. } | Block::Call { more: mine, .. } => {
                for (k, v) in more {
                    match mine.iter_mut().find(|(m, _)| *m == k) {
                        Some((_, now)) => *now = v,
                        None => mine.push((k, v)),
                    }
                }
            }
            Block::Other(Value::Object(b)) => b.extend(more),
            Block::Other(_) => {}
        }
    }

    fn to_value(&self) -> Value {
        let (mut pairs, more) = match self {
            Block::Text { thinking, text, more } => {
                let field = if *thinking { "thinking" } else { "text" };
                (vec![("type", json!(self.kind())), (field, json!(text))], more)
            }
            Block::Call { id, name, arguments, more } => (
                vec![
                    ("type", json!("toolCall")),
                    ("id", json!(id)),
                    ("name", json!(name)),
                    ("arguments", arguments.clone()),
                ],
                more,
            ),
            Block::Other(v) => return v.clone(),
        };
        pairs.extend(more.iter().map(|(k, v)| (k.as_str(), v.clone())));
        obj(pairs)
    }

    /// Writes it as compact JSON: what `write_value` writes of [`Block::to_value`].
    fn write(&self, out: &mut Vec<u8>) {
        let more = match self {
            Block::Text { thinking, text, more } => {
                out.extend_from_slice(if *thinking {
                    b"{\"type\":\"thinking\",\"thinking\":"
                } else {
                    b"{\"type\":\"text\",\"text\":"
                });
                write_str(out, text, Layout::Compact);
                more
            }
            Block::Call { id, name, arguments, more } => {
                out.extend_from_slice(b"{\"type\":\"toolCall\",\"id\":");
                write_str(out, id, Layout::Compact);
                out.extend_from_slice(b",\"name\":");
                write_str(out, name, Layout::Compact);
                out.extend_from_slice(b",\"arguments\":");
                write_value(out, arguments, Layout::Compact);
                more
            }
            Block::Other(v) => return write_value(out, v, Layout::Compact),
        };
        for (k, v) in more {
            out.push(b',');
            write_str(out, k, Layout::Compact);
            out.push(b':');
            write_value(out, v, Layout::Compact);
        }
        out.push(b'}');
    }
}

/// A member's value in an assistant message event (`update` writes them): borrowed where it
/// can be, so that a delta is not copied into a value to be written once.
enum Ev<'a> {
    Str(&'a str),
    Index(usize),
    Block(Block),
    Value(Value),
}

impl Ev<'_> {
    fn write(&self, out: &mut Vec<u8>) {
        match self {
            Ev::Str(s) => write_str(out, s, Layout::Compact),
            Ev::Index(i) => write_u64(out, *i as u64),
            Ev::Block(b) => b.write(out),
            Ev::Value(v) => write_value(out, v, Layout::Compact),
        }
    }
}

/// An event's members, `"key":value` joined by commas.
fn write_event(out: &mut Vec<u8>, event: &[(&str, Ev<'_>)]) {
    for (n, (k, v)) in event.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        write_str(out, k, Layout::Compact);
        out.push(b':');
        v.write(out);
    }
}

/// The event's `type` for a block of `kind`: the first of `[text, thinking]` for a text block.
fn block_event(kind: &str, [text, thinking]: [&'static str; 2]) -> &'static str {
    if kind == "text" {
        text
    } else {
        thinking
    }
}

struct Message {
    content: Vec<Block>,
    usage: Tokens,
    /// The content block being streamed.
    open_block: Option<usize>,
    /// A toolCall block whose arguments are streaming (drafted), until its call ends it.
    draft: Option<usize>,
    /// Members a base-context source gave the message beyond the model's (see its decoder),
    /// written after the others.
    members: Vec<(String, Value)>,
    state: State,
    id: u64,
    meta: Meta,
    /// The message's cost as the source stated it (base-context's breakdown, or a total).
    cost: Option<Map<String, Value>>,
}

impl Message {
    /// The text of its text blocks, joined.
    fn text(&self) -> String {
        self.content.iter().filter(|b| b.kind() == "text").filter_map(Block::text_str).collect()
    }

    fn new(state: State, id: u64, meta: Meta) -> Message {
        Message {
            content: Vec::new(),
            usage: Tokens::default(),
            open_block: None,
            draft: None,
            members: Vec::new(),
            state,
            id,
            meta,
            cost: None,
        }
    }
}

/// What a base-context source said of an assistant message's origin (the first record of the
/// message's content carries them as extra members); "unknown", the run's model and the
/// fixed time stand for what it did not say.
#[derive(Debug, Clone, Default, PartialEq)]
struct Meta {
    api: Option<String>,
    provider: Option<String>,
    model: Option<String>,
    timestamp: Option<u64>,
}

impl Meta {
    fn from_extra(extra: &Extra) -> Option<Meta> {
        let extra = extra.to_fields();
        let text = |k: &str| extra.get(k).and_then(Value::as_str).map(str::to_string);
        let meta = Meta {
            api: text("api"),
            provider: text("provider"),
            model: text("model"),
            timestamp: extra.get("timestamp").and_then(Value::as_u64),
        };
        (meta != Meta::default()).then_some(meta)
    }
}

pub struct Encoder {
    deltas: bool,
    /// The working directory to state when the source states none.
    cwd: Option<String>,
    epoch_ms: u64,
    header: bool,
    /// The header is written for a session the source stated.
    header_from_session: bool,
    loop_open: bool,
    round_open: bool,
    msg: Option<Message>,
    /// Lines held while the message waits for its usage (see `State::Ended`).
    held: Vec<u8>,
    /// The round's toolResult messages as JSON text, comma-separated, for its `turn_end`.
    round_results: Vec<u8>,
    /// Every message of the agent loop, for its `agent_end` (base-context's format holds
    /// them): as the compact JSON text of the list's elements, a tenth of what the values
    /// would take.
    loop_messages: Vec<u8>,
    /// Messages (tool results) made while the assistant message waits for its usage, as
    /// `loop_messages` holds them: they follow that message in the loop's list.
    held_messages: Vec<u8>,
    /// The loop's last assistant message, which a round's `turn_end` repeats.
    /// (Compact JSON text; empty for none.)
    last_assistant: Vec<u8>,
    messages: u64,
    /// Calls made and not yet answered, and those running (bounded as the normalizer bounds
    /// open calls).
    calls: IndexMap<String, (String, Value)>,
    /// Calls running, with the output they have streamed so far (kept as read).
    started: IndexMap<String, Text>,
    last_text: Option<String>,
    /// The stop reason of the last assistant message written.
    last_stop: String,
    final_answer: Option<String>,
    last_error: Option<String>,
    /// The error the current request failed with, for its message's end.
    msg_error: Option<String>,
    /// Room to write a message into before copying it into its line.
    scratch: Vec<u8>,
    /// The origin of the assistant message about to begin, as a base-context source said it.
    next_meta: Option<Meta>,
    /// An assistant message whose usage is in but whose `message_end` waits for the next
    /// record, with the stop a base-context source said for it: when that record is the run's
    /// end, the run's outcome goes on this message (base-context's readers take the outcome
    /// from the last assistant message), rather than on one added after it.
    pending_end: Option<Option<(String, Option<String>)>>,
    /// An agent loop whose end (`turn_end`, `agent_end`) waits for the next record, for the
    /// same reason.
    pending_loop: bool,
    /// The reason of the compaction that started, for its end (`compaction_end` requires one;
    /// the older `auto_compaction_end` had none).
    compaction_reason: Option<String>,
    /// A retry was announced after the last loop ended: the run goes on in a loop of its own.
    retry_pending: bool,
    /// Input tokens a message could not state (see `end_message`), still to take from later ones.
    input_owed: u64,
    /// A cost the source stated for the usage that comes next (it goes on that usage's message).
    next_cost: Option<Map<String, Value>>,
    /// The costs written on messages so far (their totals), and the run's cost that no message
    /// has carried yet, once the run's end states it (Claude's `total_cost_usd`): it goes on the
    /// next message ended, the last one (pi sums `cost.total` over the messages).
    cost_written: f64,
    cost_owed: Option<f64>,
    /// What the lines the pipeline copied leave open (see `copy.rs`), and whether every line
    /// so far was copied (then a stream that stopped early is closed from them).
    copied: Copied,
    /// A line was copied: the stream's end is made from what `copied` followed (the copied
    /// lines, and from then on the lines this encoder wrote too).
    copied_any: bool,
    /// Copied lines are also encoded into nothing, for this encoder's own state, until the
    /// stream's form has shown itself in a copied assistant message line (then every line of
    /// that form is copied: written anew, a line is the odd one out).
    sync: bool,
    /// Output held back by a record this encoder wrote (not one it observed): owed before a
    /// copied line.
    owed: bool,
    observing: bool,
}

/// Most bytes a list emptied after use keeps for the next round or loop: reused, the lists
/// are not grown from nothing (and copied at each doubling) every time; past this, a long
/// loop's list is let go rather than held for the rest of the run.
const KEPT_CAPACITY: usize = 1 << 20;

fn emptied(buf: Vec<u8>) -> Vec<u8> {
    crate::io::framing::emptied(buf, KEPT_CAPACITY)
}

/// Adds a message, written as compact JSON, to a list of the loop's messages (for its
/// `agent_end`); where its text is there.
fn keep(list: &mut Vec<u8>, message: &[u8]) -> Range<usize> {
    if !list.is_empty() {
        list.push(b',');
    }
    let start = list.len();
    list.extend_from_slice(message);
    start..list.len()
}

impl Encoder {
    pub fn new(opts: &EncodeOptions) -> Self {
        Encoder {
            deltas: opts.json_deltas,
            cwd: opts.cwd.clone(),
            epoch_ms: opts.source_date_epoch.unwrap_or(0).saturating_mul(1000),
            header: false,
            header_from_session: false,
            loop_open: false,
            round_open: false,
            msg: None,
            held: Vec::new(),
            round_results: Vec::new(),
            loop_messages: Vec::new(),
            held_messages: Vec::new(),
            last_assistant: Vec::new(),
            messages: 0,
            calls: IndexMap::new(),
            started: IndexMap::new(),
            last_text: None,
            last_stop: String::new(),
            final_answer: None,
            last_error: None,
            msg_error: None,
            scratch: Vec::new(),
            next_meta: None,
            pending_end: None,
            pending_loop: false,
            compaction_reason: None,
            retry_pending: false,
            input_owed: 0,
            next_cost: None,
            cost_written: 0.0,
            cost_owed: None,
            copied: Copied::default(),
            copied_any: false,
            sync: true,
            owed: false,
            observing: false,
        }
    }
}

impl Encoder {
    /// A record of a stream being copied: the line it was read from, where it carries one; a
    /// line the decoder made to close the stream; else nothing (the line is out already).
    /// A turn's end: a failed or interrupted turn says so on its last message; the loop's end waits.
    fn turn_end(&mut self, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        let Event::TurnEnd { status, reason, .. } = &rec.event else {
            unreachable!("turn_end is called with its kind")
        };
        self.ensure_loop(ctx, sink);
        // A turn that failed or was interrupted says so on its last message.
        let why = reason.clone().or_else(|| self.last_error.clone());
        let stop = match status.as_deref() {
            Some("failed") => Some(("error", why.or_else(|| Some("the turn failed".into())))),
            Some("interrupted" | "timeout") => Some(("aborted", why.or_else(|| Some("Request was aborted".into())))),
            _ => None,
        };
        if let Some((stop, error)) = &stop {
            if self.msg.as_ref().is_some_and(|m| m.state != State::Written) {
                self.pending_end = None;
                self.end_message(ctx, sink, Some((stop, error.as_deref())));
            }
        }
        match source_said(rec, "refusal") {
            Some(refusal) if self.loop_open => {
                self.settle(ctx, sink);
                self.refuse(ctx, sink, refusal)
            }
            // The loop's end waits for the next record: the run's end would go on its
            // last message.
            _ if self.loop_open => self.pending_loop = true,
            _ => {}
        }
        Fate::Written
    }

    /// A call whose arguments stream.
    fn tool_draft(&mut self, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        let Event::ToolDraft(d) = &rec.event else { unreachable!("tool_draft is called with its kind") };
        // A call whose arguments stream: its block starts (once) and takes the deltas;
        // the call itself ends it.
        let open = self.msg.as_ref().and_then(|m| {
            let i = m.draft?;
            let same = |k: &str, v: &Option<String>| v.as_deref().is_some_and(|v| m.content[i].says(k, v));
            (d.delta.is_some() || same("id", &d.id) || (d.id.is_none() && same("name", &d.name))).then_some(i)
        });
        if open.is_none() && d.id.is_none() {
            // A draft that names no call (localcode's preview: the call gets its id only
            // when it is made) has no block to stream into; the call starts it.
            sink.report.dropped_kind(rec.event.kind());
            return Fate::Dropped;
        }
        self.ensure_message(ctx, sink);
        self.end_block(ctx, sink);
        let i = match open {
            Some(i) => i,
            None => {
                let (id, name) = (d.id.as_deref().unwrap_or_default(), d.name.as_deref().unwrap_or_default());
                let i = self.start_call_block(ctx, sink, Block::call(id, name, json!({})));
                self.msg.as_mut().expect("ensured").draft = Some(i);
                i
            }
        };
        if let Some(delta) = d.delta.as_deref().filter(|x| !x.is_empty()) {
            let ev = [("type", Ev::Str("toolcall_delta")), ("contentIndex", Ev::Index(i)), ("delta", Ev::Str(delta))];
            self.update(ctx, sink, &ev);
        } else if open.is_some() {
            return Fate::Absorbed;
        }
        Fate::Written
    }

    /// A call: its block on the open assistant message, and `toolcall_end`.
    fn tool_call(&mut self, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        let Event::ToolCall(c) = &rec.event else { unreachable!("tool_call is called with its kind") };
        self.ensure_message(ctx, sink);
        self.end_block(ctx, sink);
        let id = c.id.clone().unwrap_or_default();
        let args = args_object(&c.arguments);
        make_room(&mut self.calls, id.as_str());
        self.calls.insert(id.to_string(), (c.name.to_string(), args.clone()));
        let block = Block::call(&id, &c.name, args.clone());
        let m = self.msg.as_mut().expect("ensured");
        let i = match m.draft.take() {
            // Drafted: the block is the call now, and only its end is left to say.
            Some(i) => {
                m.content[i] = block.clone();
                i
            }
            None => self.start_call_block(ctx, sink, block.clone()),
        };
        self.update(
            ctx,
            sink,
            &[("type", Ev::Str("toolcall_end")), ("contentIndex", Ev::Index(i)), ("toolCall", Ev::Block(block))],
        );
        Fate::Written
    }

    /// Output streamed for a running call: `tool_execution_update` with all of it so far.
    fn tool_output(&mut self, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        let Event::ToolOutput { id: Some(id), text, accumulated } = &rec.event else {
            unreachable!("tool_output is called with its kind")
        };
        let name = self
            .calls
            .get(id.as_str())
            .map(|c| c.0.clone())
            .or_else(|| ctx.call.name.as_deref().map(String::from))
            .unwrap_or_default();
        // (exec_start has noted the call among those running.)
        self.exec_start(ctx, sink, id, &name);
        let so_far = self.started.entry(id.clone()).or_default();
        if *accumulated {
            so_far.clone_from(text);
        } else {
            so_far.push(text);
        }
        // Written straight, the output so far without a tree.
        let line = line_to(&self.msg, &mut self.held, sink.out);
        line.extend_from_slice(b"{\"type\":\"tool_execution_update\"");
        write_call(line, id, &name);
        line.extend_from_slice(b",\"args\":");
        match self.calls.get(id) {
            Some(c) => write_value(line, &c.1, Layout::Compact),
            None => line.extend_from_slice(b"{}"),
        }
        line.extend_from_slice(b",\"partialResult\":{\"content\":");
        write_text_content(line, so_far);
        line.extend_from_slice(b",\"details\":{}}}\n");
        Fate::Written
    }

    /// A request's usage, on the assistant message it belongs to (one is started where none is open).
    fn usage(&mut self, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        let Event::Usage(u) = &rec.event else { unreachable!("usage is called with its kind") };
        let own = ctx.native;
        // Usage belongs on an assistant message whose end is not out yet: after one
        // that ended, a new round's message carries it.
        if self.msg.as_ref().is_none_or(|m| m.state == State::Written) {
            let d = ctx.delta;
            let nothing = [d.input, d.output, d.cache_read, d.cache_write].iter().all(|v| v.unwrap_or(0) == 0);
            if nothing && self.msg.is_some() {
                // A snapshot that adds nothing needs no message of its own.
                return Fate::Absorbed;
            }
            self.ensure_message(ctx, sink);
        }
        let m = self.msg.as_mut().expect("ensured");
        m.usage = m.usage.plus(&ctx.delta);
        if let Some(c) = self.next_cost.take() {
            m.cost = Some(c);
        }
        if own && !rec.extra.is_empty() {
            // What the source's message and its blocks had beyond the model.
            for (k, v) in rec.extra.to_fields() {
                match (k.as_str(), v) {
                    ("stopReason" | "errorMessage", _) => {}
                    ("content", Value::Array(blocks)) => {
                        for (block, more) in m.content.iter_mut().zip(blocks) {
                            if let Value::Object(more) = more {
                                block.extend(more);
                            }
                        }
                    }
                    (_, v) => m.members.push((k, v)),
                }
            }
        }
        let round_done = u.scope == Scope::Round && u.basis == Basis::Delta;
        // The stop a base-context source gave with the usage (see its decoder).
        let said = |k: &str| source_said(rec, k).and_then(|v| v.as_str().map(str::to_string));
        let stop = said("stopReason").map(|s| (s, said("errorMessage")));
        if m.state == State::Ended {
            self.end_message(ctx, sink, stop.as_ref().map(|(s, e)| (s.as_str(), e.as_deref())));
        } else if round_done && m.state == State::Open {
            // Its end waits for the next record: the run's end would go on it.
            self.pending_end = Some(stop);
        }
        Fate::Written
    }

    /// `compaction_start` / `compaction_end`, with the members base-context requires.
    fn compaction(&mut self, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        let Event::Compaction { phase, reason, data } = &rec.event else {
            unreachable!("compaction is called with its kind")
        };
        self.ensure_header(ctx, sink, None, None, None);
        let start = *phase == Phase::Start;
        let kind = if start { "compaction_start" } else { "compaction_end" };
        // `reason` is required on both (base-context.md's AgentSessionEvent): the end
        // takes the start's when it states none (as the older auto_compaction_end did
        // not), and "threshold", automatic compaction's own reason, when neither does.
        // A reason the spec does not list (another agent's word, a broken line) is not one
        // base-context's reader takes: it is left out, and counted.
        let listed = |r: &String| Dialect::BaseContext.contract().allows(kind, "reason", r);
        let reason = match reason.clone().filter(|r| !listed(r)) {
            Some(_) => {
                sink.report.dropped_field(kind, "reason");
                None
            }
            None => reason.clone(),
        };
        let reason = reason.or_else(|| self.compaction_reason.clone()).unwrap_or_else(|| "threshold".into());
        self.compaction_reason = start.then(|| reason.clone());
        let mut line = obj(vec![("type", json!(kind)), ("reason", json!(reason))]);
        // What the source's line held beyond the reason, but a member of a type base-context's
        // reader refuses there (the campaign's `streams`: `aborted` an object), left out and
        // counted (a required one then gets its placeholder, below).
        let may = Dialect::BaseContext.contract().fields_of(kind);
        for (k, v) in data {
            if may.accepts_value(k, v) {
                line[k] = v.clone();
            } else {
                sink.report.dropped_field(kind, k);
            }
        }
        if !start {
            // `aborted` and `willRetry` are required members of compaction_end (one refused
            // above is said as made up; one the source's generation did not write is not).
            for k in ["aborted", "willRetry"] {
                if line.get(k).is_none() {
                    if data.contains_key(k) {
                        sink.report.synthesized(&format!("{kind}.{k}"));
                    }
                    line[k] = json!(false);
                }
            }
        }
        self.put(sink, line);
        Fate::Written
    }

    /// The run's end, on its last assistant message (one is added where the last one does not say it), and the loop closed.
    fn terminal(&mut self, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        let Event::Terminal(t) = &rec.event else { unreachable!("terminal is called with its kind") };
        if self.input_owed > 0 {
            // Said, not hidden: the run's input as written is this much over the source's.
            sink.report.truncated("message.usage.input (a cache figure rose more than input)");
        }
        if let Some(usd) = t.cost_usd.filter(|_| !ctx.native) {
            // The run's cost (Claude's total_cost_usd) beyond what messages carried: on the
            // last message, not made up as zeros (see `cost_owed`).
            let rest = usd - self.cost_written;
            if rest > usd.abs() * 1e-9 {
                self.cost_owed = Some(rest);
            }
        }
        if let Some(Some((stop, error))) = self.pending_end.take() {
            // The source said how its last message stopped: that stands.
            self.end_message(ctx, sink, Some((&stop, error.as_deref())));
        }
        self.pending_loop = false;
        let answer = self.final_answer.clone().or_else(|| t.final_text.clone()).filter(|a| !a.is_empty());
        let said = answer.is_none() || answer == self.last_text;
        if !self.loop_open && !self.retry_pending && said && self.header && self.last_stop == self.stop_of(t).0 {
            // The last loop ended on a message that already says it all.
            return Fate::Absorbed;
        }
        self.ensure_loop(ctx, sink);
        let (stop, error) = self.stop_of(t);
        self.last_error = error.clone();
        // The run's final text closes its last assistant message; one is added when the
        // last one already ended, used tools, or said something else.
        let open = self.msg.as_ref().is_some_and(|m| m.state != State::Written);
        // The open message's text counts too: an answer it streamed is not written twice.
        let open_text = self.msg.as_ref().filter(|_| open).map(Message::text);
        let differs =
            answer.as_ref().is_some_and(|a| Some(a) != self.last_text.as_ref() && Some(a) != open_text.as_ref());
        if !open && !differs && self.last_stop == stop {
            // The last message written already says it all (text and stop).
        } else if open && !differs {
            self.end_message(ctx, sink, Some((stop, error.as_deref())));
        } else {
            if self.msg.is_some() {
                self.close_round(ctx, sink);
            }
            if let Some(text) = answer {
                self.append(ctx, sink, "text", &text);
            } else {
                self.ensure_message(ctx, sink);
            }
            self.end_message(ctx, sink, Some((stop, error.as_deref())));
        }
        self.close_loop(ctx, sink);
        Fate::Written
    }

    /// What waits for the next record ends now, unless that record is the run's end (or only
    /// tells the end something: the answer, an error).
    fn settle_for(&mut self, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) {
        match rec.event {
            Event::Terminal(_) | Event::FinalAnswer { .. } | Event::Error { .. } | Event::Cost { .. } => {}
            // Another dialect's line the model has no event for: not written here.
            Event::Extension { .. } if !ctx.native => {}
            // The usage a run's end states over the messages' (the normalizer's run-scoped
            // difference, just before the terminal): it goes on the last message, which a
            // base-context reader takes as the answer, not on one added after it.
            Event::Usage(crate::model::Usage { scope: Scope::Run, basis: Basis::Delta, .. })
                if self.pending_end.is_some() => {}
            // A turn's end ends the loop, not yet its last message.
            Event::TurnEnd { .. } if self.pending_loop => self.close_loop(ctx, sink),
            Event::TurnEnd { .. } => {}
            _ => self.settle(ctx, sink),
        }
    }

    /// The end of a run whose every line was copied: nothing where the stream settled (it
    /// says it all); where it stopped early, the lines base-context writes when its loop fails,
    /// made from the lines as read (see `copy.rs`).
    fn close_copied(&mut self, t: &crate::model::Terminal, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        if !t.synthesized {
            return Fate::Absorbed;
        }
        let why = t.reason.clone().or_else(|| t.error.clone()).unwrap_or_else(|| crate::codec::ENDED_EARLY.into());
        let lines = self.copied.close(&why);
        if !lines.is_empty() {
            // Only lines of kinds the spec does not list were copied (the header would have
            // come first otherwise): the header goes before the first listed line.
            self.ensure_header(ctx, sink, None, None, None);
        }
        for line in lines {
            write_line(sink.out, &line, Layout::Compact);
        }
        Fate::Written
    }
}

fn obj(pairs: Vec<(&str, Value)>) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect::<Map<String, Value>>())
}

/// Writes `{"type":kind[,"messageId":id],"message":<message>}` from the message's JSON text.
fn write_message_line(out: &mut Vec<u8>, kind: &str, id: Option<u64>, message: &[u8]) {
    out.extend_from_slice(b"{\"type\":");
    write_str(out, kind, Layout::Compact);
    if let Some(id) = id {
        out.extend_from_slice(b",\"messageId\":");
        write_u64(out, id);
    }
    out.extend_from_slice(b",\"message\":");
    out.extend_from_slice(message);
    out.extend_from_slice(b"}\n");
}

/// The counts of an assistant message's usage in its order (four, then their total):
/// base-context's `input` excludes the cache figures that canonical input includes.
fn usage_counts(t: &Tokens) -> [(&'static str, u64); 5] {
    let cache_read = t.cache_read.unwrap_or(0);
    let cache_write = t.cache_write.unwrap_or(0);
    let input = t.input.unwrap_or(0).saturating_sub(cache_read.saturating_add(cache_write));
    let output = t.output.unwrap_or(0);
    [
        ("input", input),
        ("output", output),
        ("cacheRead", cache_read),
        ("cacheWrite", cache_write),
        // Saturating: counts near the largest integer stay as large as they can be, not wrapped.
        ("totalTokens", [output, cache_read, cache_write].into_iter().fold(input, u64::saturating_add)),
    ]
}

/// [`usage_json`] written straight to `out`, byte for byte (it is on every line of the plain
/// form's updates).
fn write_usage(out: &mut Vec<u8>, t: &Tokens, cost: Option<&Map<String, Value>>) {
    for (n, (key, count)) in usage_counts(t).into_iter().enumerate() {
        out.push(if n == 0 { b'{' } else { b',' });
        write_str(out, key, Layout::Compact);
        out.push(b':');
        // serde_json's integer formatting (itoa), which cannot fail on a Vec.
        let _ = serde_json::to_writer(&mut *out, &count);
    }
    match cost {
        Some(c) => {
            out.extend_from_slice(br#","cost":"#);
            write_value(out, &Value::Object(c.clone()), Layout::Compact);
            out.push(b'}');
        }
        None => out.extend_from_slice(br#","cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}"#),
    }
}

/// The usage object of an assistant message: its cost as the source stated it, else zeros
/// (agentgate never prices tokens; `--report` says the cost was made up).
fn usage_json(t: &Tokens, cost: Option<&Map<String, Value>>) -> Value {
    let zero = json!(0);
    let mut pairs: Vec<(&str, Value)> = usage_counts(t).into_iter().map(|(k, n)| (k, json!(n))).collect();
    let made = [
        ("input", zero.clone()),
        ("output", zero.clone()),
        ("cacheRead", zero.clone()),
        ("cacheWrite", zero.clone()),
        ("total", zero),
    ];
    pairs.push(("cost", cost.map_or_else(|| obj(made.to_vec()), |c| Value::Object(c.clone()))));
    obj(pairs)
}

fn args_object(a: &Arguments) -> Value {
    a.to_object()
}

/// Whether lines are held while the assistant message waits for its usage.
fn waits(msg: &Option<Message>) -> bool {
    msg.as_ref().is_some_and(|m| m.state == State::Ended)
}

/// [`Encoder::out`], from the fields it looks at (for a caller that holds another field).
fn line_to<'s>(msg: &Option<Message>, held: &'s mut Vec<u8>, out: &'s mut Vec<u8>) -> &'s mut Vec<u8> {
    if waits(msg) {
        held
    } else {
        out
    }
}

/// The model an assistant message names: its own as the source said it, else the run's.
fn model_of<'m>(m: &'m Message, ctx: &'m Context) -> &'m str {
    m.meta.model.as_deref().or(ctx.model.as_deref()).unwrap_or("unknown")
}

/// `,"toolCallId":…,"toolName":…`: how tool lines and a toolResult message name their call.
fn write_call(out: &mut Vec<u8>, id: &str, name: &str) {
    out.extend_from_slice(b",\"toolCallId\":");
    write_str(out, id, Layout::Compact);
    out.extend_from_slice(b",\"toolName\":");
    write_str(out, name, Layout::Compact);
}

/// A tool's output as content, `[{"type":"text","text":…}]`, copied as it was read where its
/// escapes are the compact layout's.
fn write_text_content(out: &mut Vec<u8>, text: &Text) {
    out.extend_from_slice(b"[{\"type\":\"text\",\"text\":");
    text.write(out, Layout::Compact);
    out.extend_from_slice(b"}]");
}

impl Encoder {
    /// Writes a line now, or holds it while the message waits for its usage.
    fn put(&mut self, sink: &mut Sink<'_>, v: Value) {
        write_line(self.out(sink), &v, Layout::Compact);
    }

    /// Where a line goes: out, or held while the assistant message waits for its usage.
    fn out<'s>(&'s mut self, sink: &'s mut Sink<'_>) -> &'s mut Vec<u8> {
        line_to(&self.msg, &mut self.held, sink.out)
    }

    /// [`Encoder::assistant`] as compact JSON: written straight where the message has no
    /// members of its own that would take the place of one of the model's (or repeat one).
    fn write_message(&self, out: &mut Vec<u8>, m: &Message, ctx: &Context, stop: &str, error: Option<&str>) {
        let distinct = m.members.iter().enumerate().all(|(n, (k, _))| {
            !super::MESSAGE_MEMBERS.contains(&k.as_str()) && m.members[..n].iter().all(|(before, _)| before != k)
        });
        if !distinct {
            write_value(out, &self.assistant(m, ctx, stop, error), Layout::Compact);
            return;
        }
        self.write_assistant_fields(out, m, ctx, stop);
        if let Some(e) = error {
            out.extend_from_slice(b",\"errorMessage\":");
            write_str(out, e, Layout::Compact);
        }
        for (k, v) in &m.members {
            out.push(b',');
            write_str(out, k, Layout::Compact);
            out.push(b':');
            write_value(out, v, Layout::Compact);
        }
        out.push(b'}');
    }

    /// [`Encoder::assistant`] written straight to `out` as compact JSON, byte for byte, without
    /// copying the content into a tree first (the plain form writes it twice per update), for a
    /// message without an error or members of its own.
    fn write_assistant(&self, out: &mut Vec<u8>, m: &Message, ctx: &Context, stop: &str) {
        self.write_assistant_fields(out, m, ctx, stop);
        out.push(b'}');
    }

    /// [`Encoder::write_assistant`] without its closing brace, for more members after.
    fn write_assistant_fields(&self, out: &mut Vec<u8>, m: &Message, ctx: &Context, stop: &str) {
        out.extend_from_slice(b"{\"role\":\"assistant\",\"content\":[");
        for (n, block) in m.content.iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            block.write(out);
        }
        out.extend_from_slice(b"],\"api\":");
        write_str(out, m.meta.api.as_deref().unwrap_or("unknown"), Layout::Compact);
        out.extend_from_slice(b",\"provider\":");
        write_str(out, m.meta.provider.as_deref().unwrap_or("unknown"), Layout::Compact);
        out.extend_from_slice(b",\"model\":");
        write_str(out, model_of(m, ctx), Layout::Compact);
        out.extend_from_slice(b",\"usage\":");
        write_usage(out, &m.usage, m.cost.as_ref());
        out.extend_from_slice(b",\"stopReason\":");
        write_str(out, stop, Layout::Compact);
        out.extend_from_slice(b",\"timestamp\":");
        write_u64(out, m.meta.timestamp.unwrap_or(self.epoch_ms));
    }

    fn assistant(&self, m: &Message, ctx: &Context, stop: &str, error: Option<&str>) -> Value {
        let mut pairs = vec![
            ("role", json!("assistant")),
            ("content", Value::Array(m.content.iter().map(Block::to_value).collect())),
            ("api", json!(m.meta.api.as_deref().unwrap_or("unknown"))),
            ("provider", json!(m.meta.provider.as_deref().unwrap_or("unknown"))),
            ("model", json!(model_of(m, ctx))),
            ("usage", usage_json(&m.usage, m.cost.as_ref())),
            ("stopReason", json!(stop)),
            ("timestamp", json!(m.meta.timestamp.unwrap_or(self.epoch_ms))),
        ];
        if let Some(e) = error {
            pairs.push(("errorMessage", json!(e)));
        }
        let mut message = obj(pairs);
        if let Value::Object(o) = &mut message {
            o.extend(m.members.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        message
    }

    fn ensure_header(
        &mut self,
        ctx: &Context,
        sink: &mut Sink<'_>,
        id: Option<&str>,
        cwd: Option<&str>,
        timestamp: Option<&str>,
    ) {
        if self.header {
            return;
        }
        self.header = true;
        if !self.header_from_session {
            // The source had no session of its own (an upstream Pi stream, with no header):
            // base-context's first line is its session header, made here.
            sink.report.synthesized("session (header)");
        }
        let id = id.map(str::to_string).unwrap_or_else(|| ctx.derived_uuid());
        let mut pairs = vec![("type", json!("session")), ("version", json!(3)), ("id", json!(id))];
        pairs.push(("timestamp", json!(timestamp.map(str::to_string).unwrap_or_else(|| iso(self.epoch_ms)))));
        // `cwd` is a required member of the header: the source's directory, else empty.
        pairs.push(("cwd", json!(cwd.or(self.cwd.as_deref()).unwrap_or_default())));
        self.put(sink, obj(pairs));
    }

    fn ensure_loop(&mut self, ctx: &Context, sink: &mut Sink<'_>) {
        self.ensure_header(ctx, sink, None, None, None);
        if !self.loop_open {
            self.loop_open = true;
            self.retry_pending = false;
            self.put(sink, json!({"type": "agent_start"}));
        }
    }

    fn ensure_round(&mut self, ctx: &Context, sink: &mut Sink<'_>) {
        self.ensure_loop(ctx, sink);
        if !self.round_open {
            self.round_open = true;
            self.put(sink, json!({"type": "turn_start"}));
        }
    }

    /// The assistant message that content goes into: a new one after one that is complete.
    fn ensure_message(&mut self, ctx: &Context, sink: &mut Sink<'_>) {
        if self.msg.as_ref().is_some_and(|m| m.state != State::Open) {
            self.close_round(ctx, sink);
        }
        self.ensure_round(ctx, sink);
        if self.msg.is_none() {
            self.messages += 1;
            let m = Message::new(State::Open, self.messages, self.next_meta.take().unwrap_or_default());
            let mut snapshot = std::mem::take(&mut self.scratch);
            snapshot.clear();
            self.write_message(&mut snapshot, &m, ctx, "stop", None);
            self.msg = Some(m);
            let id = self.deltas.then_some(self.messages);
            write_message_line(self.out(sink), "message_start", id, &snapshot);
            self.scratch = snapshot;
        }
    }

    /// One `message_update`: in the plain form with the message so far (twice, as the agent
    /// writes it), in the delta form with the message id and the event alone.
    fn update(&mut self, ctx: &Context, sink: &mut Sink<'_>, event: &[(&str, Ev<'_>)]) {
        let Some(m) = &self.msg else { return };
        if self.deltas {
            let id = m.id;
            let out = self.out(sink);
            out.extend_from_slice(b"{\"type\":\"message_update\",\"messageId\":");
            write_u64(out, id);
            out.extend_from_slice(b",\"assistantMessageEvent\":{");
            write_event(out, event);
            out.extend_from_slice(b"}}\n");
        } else {
            // The message so far, written once and copied into both places.
            let mut snapshot = std::mem::take(&mut self.scratch);
            snapshot.clear();
            self.write_assistant(&mut snapshot, m, ctx, "stop");
            let out = self.out(sink);
            out.extend_from_slice(b"{\"type\":\"message_update\",\"assistantMessageEvent\":{");
            write_event(out, event);
            out.extend_from_slice(b",\"partial\":");
            out.extend_from_slice(&snapshot);
            out.extend_from_slice(b"},\"message\":");
            out.extend_from_slice(&snapshot);
            out.extend_from_slice(b"}\n");
            self.scratch = snapshot;
        }
    }

    /// Starts a content block of `kind` unless one is streaming; its index.
    fn block(&mut self, ctx: &Context, sink: &mut Sink<'_>, kind: &str) -> usize {
        self.ensure_message(ctx, sink);
        let m = self.msg.as_mut().expect("ensured");
        if let Some(i) = m.open_block.filter(|i| m.content[*i].kind() == kind) {
            return i;
        }
        self.end_block(ctx, sink);
        let m = self.msg.as_mut().expect("ensured");
        m.content.push(Block::text(kind));
        let i = m.content.len() - 1;
        m.open_block = Some(i);
        self.update(
            ctx,
            sink,
            &[("type", Ev::Str(block_event(kind, ["text_start", "thinking_start"]))), ("contentIndex", Ev::Index(i))],
        );
        i
    }

    fn end_block(&mut self, ctx: &Context, sink: &mut Sink<'_>) {
        let Some(m) = self.msg.as_mut() else { return };
        let Some(i) = m.open_block.take() else { return };
        let block = &m.content[i];
        let (kind, field) = if block.kind() == "text" { ("text", "text") } else { ("thinking", "thinking") };
        let content = match block {
            Block::Text { text, .. } => json!(text),
            _ => block.get(field),
        };
        self.update(
            ctx,
            sink,
            &[
                ("type", Ev::Str(block_event(kind, ["text_end", "thinking_end"]))),
                ("contentIndex", Ev::Index(i)),
                ("content", Ev::Value(content)),
            ],
        );
    }

    /// Adds a toolCall block to the message and says so (`toolcall_start`, naming the call in
    /// the delta form); its index.
    fn start_call_block(&mut self, ctx: &Context, sink: &mut Sink<'_>, block: Block) -> usize {
        let m = self.msg.as_mut().expect("a message is open");
        let named = self.deltas.then(|| json!({"id": block.get("id"), "name": block.get("name")}));
        m.content.push(block);
        let i = m.content.len() - 1;
        let mut ev = vec![("type", Ev::Str("toolcall_start")), ("contentIndex", Ev::Index(i))];
        if let Some(named) = named {
            ev.push(("toolCall", Ev::Value(named)));
        }
        self.update(ctx, sink, &ev);
        i
    }

    fn append(&mut self, ctx: &Context, sink: &mut Sink<'_>, kind: &str, text: &str) {
        let i = self.block(ctx, sink, kind);
        let field = if kind == "text" { "text" } else { "thinking" };
        let m = self.msg.as_mut().expect("block ensures it");
        m.content[i].set_text(field, text, true);
        self.update(
            ctx,
            sink,
            &[
                ("type", Ev::Str(block_event(kind, ["text_delta", "thinking_delta"]))),
                ("contentIndex", Ev::Index(i)),
                ("delta", Ev::Str(text)),
            ],
        );
    }

    /// Writes the message's `message_end` (and the lines held for it).
    fn end_message(&mut self, ctx: &Context, sink: &mut Sink<'_>, stop: Option<(&str, Option<&str>)>) {
        self.end_block(ctx, sink);
        let Some(m) = self.msg.as_mut() else { return };
        if m.state == State::Written {
            return;
        }
        m.state = State::Written;
        // base-context's input excludes the cache figures canonical input includes. A usage
        // report that raised a cache figure more than input (a cumulative source's later
        // snapshot) would give this message a negative input: it gets 0, and what it lacked is
        // taken from the next messages' input, so the run's totals still add up.
        let cache = m.usage.cache_read.unwrap_or(0).saturating_add(m.usage.cache_write.unwrap_or(0));
        if m.usage.input.is_some() || cache > 0 {
            let input = m.usage.input.unwrap_or(0);
            let mut own = input.saturating_sub(cache);
            self.input_owed = self.input_owed.saturating_add(cache.saturating_sub(input));
            let paid = own.min(self.input_owed);
            own -= paid;
            self.input_owed -= paid;
            m.usage.input = Some(cache.saturating_add(own));
        }
        let has_tools = m.content.iter().any(|b| b.kind() == "toolCall");
        let failed = self.msg_error.take();
        let (reason, error) = match (stop, &failed) {
            (Some(s), _) => s,
            (None, Some(e)) => ("error", Some(e.as_str())),
            (None, None) if has_tools => ("toolUse", None),
            (None, None) => ("stop", None),
        };
        if let (Some(owed), Some(m)) = (self.cost_owed.take(), self.msg.as_mut()) {
            if m.cost.is_none() {
                let zero = json!(0);
                let parts = [
                    ("input", zero.clone()),
                    ("output", zero.clone()),
                    ("cacheRead", zero.clone()),
                    ("cacheWrite", zero),
                ];
                let mut c: Map<String, Value> = parts.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
                c.insert("total".into(), json!(owed));
                m.cost = Some(c);
            }
        }
        let m = self.msg.as_ref().expect("checked");
        self.cost_written += m.cost.as_ref().and_then(|c| c.get("total")).and_then(Value::as_f64).unwrap_or(0.0);
        if m.cost.is_none() && ctx.source != Some(Dialect::BaseContext) {
            // base-context requires a cost object on every message: zeros, said, where the
            // source stated none (agentgate never prices tokens).
            sink.report.synthesized("message.usage.cost (zeros)");
        }
        let mut message = std::mem::take(&mut self.last_assistant);
        message.clear();
        self.write_message(&mut message, m, ctx, reason, error);
        self.last_stop = reason.to_string();
        self.last_text = Some(m.text());
        let id = self.deltas.then_some(m.id);
        let text = keep(&mut self.loop_messages, &message);
        write_message_line(sink.out, "message_end", id, &self.loop_messages[text]);
        let later = std::mem::take(&mut self.held_messages);
        if !later.is_empty() {
            self.loop_messages.push(b',');
            self.loop_messages.extend_from_slice(&later);
        }
        self.held_messages = emptied(later);
        self.last_assistant = message;
        let held = std::mem::take(&mut self.held);
        sink.out.extend_from_slice(&held);
        self.held = emptied(held);
    }

    fn close_round(&mut self, ctx: &Context, sink: &mut Sink<'_>) {
        if !self.round_open {
            return;
        }
        self.end_message(ctx, sink, None);
        let last = std::mem::take(&mut self.last_assistant);
        let mut stand_in = Vec::new();
        let message = if self.msg.is_some() && !last.is_empty() {
            &last
        } else {
            // A round without an assistant message: an empty one stands for it.
            let m = Message::new(State::Written, 0, Meta::default());
            self.write_message(&mut stand_in, &m, ctx, "stop", None);
            &stand_in
        };
        let results = std::mem::take(&mut self.round_results);
        let out = self.out(sink);
        out.extend_from_slice(b"{\"type\":\"turn_end\",\"message\":");
        out.extend_from_slice(message);
        out.extend_from_slice(b",\"toolResults\":[");
        out.extend_from_slice(&results);
        out.extend_from_slice(b"]}\n");
        self.round_results = emptied(results);
        self.last_assistant = last;
        self.round_open = false;
        self.msg = None;
    }

    fn close_loop(&mut self, ctx: &Context, sink: &mut Sink<'_>) {
        self.close_round(ctx, sink);
        if self.loop_open {
            let messages = std::mem::take(&mut self.loop_messages);
            self.last_assistant.clear();
            // Straight to the output, a block at a time: the list can be large, and is not
            // held twice (unless the line itself is held, as it never is once the round closed).
            let held = waits(&self.msg);
            self.out(sink).extend_from_slice(b"{\"type\":\"agent_end\",\"messages\":[");
            for part in messages.chunks(SPILL_BLOCK) {
                self.out(sink).extend_from_slice(part);
                if !held {
                    sink.spill();
                }
            }
            self.out(sink).extend_from_slice(b"]}\n");
            self.loop_messages = emptied(messages);
            self.loop_open = false;
        }
    }

    /// Ends the loop with base-context's refusal-only `agent_end`: no messages, and a failed
    /// end, which it states as a last message stopped by an error would.
    fn refuse(&mut self, ctx: &Context, sink: &mut Sink<'_>, refusal: Value) {
        self.close_round(ctx, sink);
        self.loop_messages.clear();
        self.last_assistant.clear();
        self.loop_open = false;
        self.put(sink, json!({"type": "agent_end", "refusal": refusal}));
        self.last_stop = "error".into();
    }

    /// Tools start running: the assistant message's content is complete.
    fn tools_run(&mut self, ctx: &Context, sink: &mut Sink<'_>) {
        self.end_block(ctx, sink);
        if let Some(m) = self.msg.as_mut() {
            if m.state == State::Open {
                m.state = State::Ended;
            }
        }
    }

    fn exec_start(&mut self, ctx: &Context, sink: &mut Sink<'_>, id: &str, name: &str) {
        if self.started.contains_key(id) {
            return;
        }
        self.ensure_round(ctx, sink);
        self.tools_run(ctx, sink);
        make_room(&mut self.started, id);
        self.started.insert(id.to_string(), Text::default());
        let args = self.calls.get(id).map(|c| c.1.clone()).unwrap_or_else(|| json!({}));
        self.put(
            sink,
            obj(vec![
                ("type", json!("tool_execution_start")),
                ("toolCallId", json!(id)),
                ("toolName", json!(name)),
                ("args", args),
            ]),
        );
    }

    /// A call's end: its `tool_execution_end` and its toolResult message. Written straight
    /// as JSON text: the output (most of the bytes) is copied as it was read where its escapes
    /// are the ones written here, and written once for both lines.
    fn tool_end(&mut self, ctx: &Context, sink: &mut Sink<'_>, id: &str, name: &str, end: Ended<'_>) {
        let Ended { output, failed, details, bare } = end;
        self.exec_start(ctx, sink, id, name);
        self.started.shift_remove(id);
        // The content and the call, as both lines say them.
        let mut content = Vec::with_capacity(output.kept_len() + 64);
        write_text_content(&mut content, output);
        let mut call = Vec::with_capacity(id.len() + name.len() + 40);
        write_call(&mut call, id, name);
        let failed: &[u8] = if failed { b"true" } else { b"false" };

        let out = self.out(sink);
        out.extend_from_slice(b"{\"type\":\"tool_execution_end\"");
        out.extend_from_slice(&call);
        out.extend_from_slice(b",\"result\":{\"content\":");
        out.extend_from_slice(&content);
        match (details, bare) {
            (Some(d), _) => {
                out.extend_from_slice(b",\"details\":");
                write_value(out, d, Layout::Compact);
            }
            (None, true) => {}
            (None, false) => out.extend_from_slice(b",\"details\":{}"),
        }
        out.extend_from_slice(b"},\"isError\":");
        out.extend_from_slice(failed);
        out.extend_from_slice(b"}\n");

        let mut message = Vec::with_capacity(content.len() + call.len() + 128);
        message.extend_from_slice(b"{\"role\":\"toolResult\"");
        message.extend_from_slice(&call);
        message.extend_from_slice(b",\"content\":");
        message.extend_from_slice(&content);
        if let Some(d) = details {
            message.extend_from_slice(b",\"details\":");
            write_value(&mut message, d, Layout::Compact);
        }
        message.extend_from_slice(b",\"isError\":");
        message.extend_from_slice(failed);
        message.extend_from_slice(b",\"timestamp\":");
        write_u64(&mut message, self.epoch_ms);
        message.push(b'}');
        keep(&mut self.round_results, &message);
        self.whole_message_text(sink, &message);
        self.calls.shift_remove(id);
    }

    /// A message that is not streamed (user, toolResult, custom): its start and end, and a place
    /// in the loop's messages.
    fn whole_message(&mut self, sink: &mut Sink<'_>, message: Value) {
        let mut text = Vec::new();
        write_value(&mut text, &message, Layout::Compact);
        self.whole_message_text(sink, &text);
    }

    /// [`Encoder::whole_message`] for a message already written as compact JSON.
    fn whole_message_text(&mut self, sink: &mut Sink<'_>, message: &[u8]) {
        // One made while the assistant message waits for its usage (its lines are held with the
        // rest) follows that message in the loop's list too.
        let waiting = self.msg.as_ref().is_some_and(|m| m.state == State::Ended);
        let mut kept = std::mem::take(if waiting { &mut self.held_messages } else { &mut self.loop_messages });
        let text = keep(&mut kept, message);
        // The message's text is written once, into the list, and copied into its lines.
        for kind in ["message_start", "message_end"] {
            write_message_line(self.out(sink), kind, None, &kept[text.clone()]);
        }
        if waiting {
            self.held_messages = kept;
        } else {
            self.loop_messages = kept;
        }
    }

    /// Ends what waits for the next record: the last message's end, then its loop's.
    fn settle(&mut self, ctx: &Context, sink: &mut Sink<'_>) {
        if let Some(said) = self.pending_end.take() {
            self.end_message(ctx, sink, said.as_ref().map(|(s, e)| (s.as_str(), e.as_deref())));
        }
        if std::mem::take(&mut self.pending_loop) {
            self.close_loop(ctx, sink);
        }
    }

    /// How the run ended, as the last assistant message says it: stop reason and error text.
    fn stop_of(&self, t: &Terminal) -> (&'static str, Option<String>) {
        let why = t.error.clone().or_else(|| self.last_error.clone()).or_else(|| t.reason.clone());
        match t.outcome {
            Outcome::Completed => ("stop", None),
            Outcome::Failed => ("error", Some(why.unwrap_or_else(|| "the run failed".into()))),
            Outcome::PermissionDenied => ("error", Some(refusal(t.error.as_deref().or(t.reason.as_deref())))),
            Outcome::Interrupted => ("aborted", Some(t.reason.clone().unwrap_or_else(|| "Request was aborted".into()))),
            Outcome::Timeout => (
                "aborted",
                Some(format!(
                    "timeout{}",
                    t.reason.as_ref().filter(|r| *r != "timeout").map(|r| format!(": {r}")).unwrap_or_default()
                )),
            ),
            // Not `length`: that is an ordinary stop, which a base-context reader takes as a
            // finished run. A run that did not complete failed, and says why.
            Outcome::Incomplete => ("error", Some(t.reason.clone().unwrap_or_else(|| "incomplete".into()))),
        }
    }
}

/// How a tool call ended: its output, whether it failed, and the `details` a base-context
/// source's tool gave (without: `{}` in `tool_execution_end` from another dialect, none from
/// base-context itself, and none in the toolResult message).
struct Ended<'a> {
    output: &'a Text,
    failed: bool,
    details: Option<&'a Value>,
    /// A base-context source's result that had no details: none is written.
    bare: bool,
}

/// The members a base-context source gives a record beyond the model (see its decoder) that
/// its line written anew holds: a message's origin, a kept message, a time, a result's details,
/// a refusal. (A usage record's, the message's own members, all go into the message.)
const WRITTEN_EXTRA: [&str; 7] = ["api", "provider", "model", "timestamp", "message", "details", "refusal"];

/// Counts what a base-context record carries from its source line that the line written anew
/// does not hold (a member no spec names, one of a type the contract refuses): a line of its
/// own is written from the model, not copied, when it was not valid as it stood or the form
/// asked for differs (`--json-deltas`).
fn count_unwritten(rec: &Record, sink: &mut Sink<'_>) {
    if matches!(rec.event, Event::Extension { .. } | Event::Usage(_)) {
        return;
    }
    for key in rec.extra.keys() {
        if !WRITTEN_EXTRA.contains(&key.as_ref()) {
            sink.report.dropped_field(rec.event.kind(), &key);
        }
    }
}

/// Member `key` of the extra members a base-context source gave the record (see its decoder);
/// `None` for a record from another dialect.
fn source_said(rec: &Record, key: &str) -> Option<Value> {
    rec.extra.get(key)
}

/// Whether the event is part of an assistant message (the first such record of a message from
/// base-context carries the message's origin).
fn content_of_a_message(event: &Event) -> bool {
    matches!(
        event,
        Event::TextStart
            | Event::TextDelta { .. }
            | Event::TextEnd { .. }
            | Event::ReasoningStart { .. }
            | Event::ReasoningDelta { .. }
            | Event::ReasoningEnd { .. }
            | Event::ToolDraft(_)
            | Event::ToolCall(_)
            | Event::Usage(_)
            | Event::Error { .. }
    )
}

impl Encoder {
    /// A call's result: its output (the call's, or the error, where the result has none) and
    /// the source's details, ending the call.
    fn tool_result(&mut self, r: &ToolResult, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) {
        let id = r.id.clone().unwrap_or_default();
        let name = r.name.clone().or_else(|| ctx.call.name.clone()).unwrap_or_default();
        let error;
        let output = match (&r.output, &ctx.call.output) {
            (Some(t), _) | (None, Some(t)) => t,
            (None, None) => {
                error = Text::from(r.error.clone().unwrap_or_default());
                &error
            }
        };
        let details = source_said(rec, "details");
        let failed = r.status != ToolStatus::Completed;
        let end = Ended { output, failed, details: details.as_ref(), bare: ctx.native && details.is_none() };
        self.tool_end(ctx, sink, &id, &name, end);
    }

    /// A refusal: a blocked call still has a start and an end, with isError, as the agent does.
    fn refused(&mut self, d: &Denial, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        if ctx.answered {
            // The call already ended, with isError: the refusal only says why the run stops.
            return Fate::Absorbed;
        }
        // A blocked call still has a start and an end, with isError, as the agent does.
        let id = d.id.clone().unwrap_or_default();
        let why = refusal(d.reason.as_deref());
        let why = Text::from(why);
        self.tool_end(ctx, sink, &id, &d.name, Ended { output: &why, failed: true, details: None, bare: false });
        Fate::Written
    }

    /// An automatic retry's start or end: `auto_retry_start` / `auto_retry_end`.
    fn retry(&mut self, event: &Event, ctx: &Context, sink: &mut Sink<'_>) {
        let Event::Retry { phase, attempt, max_attempts, delay_ms, error, success } = event else { return };
        self.ensure_header(ctx, sink, None, None, None);
        self.retry_pending |= *phase == Phase::Start && !self.loop_open;
        let line = if *phase == Phase::Start {
            json!({"type": "auto_retry_start", "attempt": attempt.unwrap_or(1), "maxAttempts": max_attempts.unwrap_or(0), "delayMs": delay_ms.unwrap_or(0), "errorMessage": error.clone().unwrap_or_default()})
        } else {
            let mut l =
                json!({"type": "auto_retry_end", "success": success.unwrap_or(false), "attempt": attempt.unwrap_or(1)});
            if let Some(e) = error {
                l["finalError"] = json!(e);
            }
            l
        };
        self.put(sink, line);
    }
}

impl Encode for Encoder {
    fn hints(&self) -> crate::codec::Hints {
        crate::codec::Hints { matches_calls_by_id: true, call_arguments: false, ..crate::codec::Hints::default() }
    }

    /// A copied line is followed as read (for the end of a stream that stops early), and its
    /// records encoded into nothing, for the state they leave; what waited for the next record
    /// (an assistant message's end) is written before it.
    fn observe(&mut self, rec: &Record, ctx: &Context, line: &str, sink: &mut Sink<'_>) {
        let mut loop_end = false;
        if !line.is_empty() {
            if let Ok(Ok(m)) = Object::parse(line) {
                if let Some(kind) = m.get_str("type") {
                    self.copied.track(&kind, &m);
                    loop_end = kind == "agent_end";
                    let assistant = kind == "message_update"
                        || (matches!(kind.as_ref(), "message_start" | "message_end")
                            && m.get("message").is_some_and(|msg| msg.to_value()["role"] == "assistant"));
                    if assistant {
                        self.sync = false;
                    }
                }
            }
            self.copied_any = true;
            // An assistant message this encoder wrote, whose end waited for the next record,
            // ends before the line (a loop's end is this line's own).
            if std::mem::take(&mut self.owed) && !matches!(rec.event, Event::TurnEnd { .. }) {
                self.settle_for(rec, ctx, sink);
            }
        }
        if !self.sync {
            return;
        }
        self.observing = true;
        self.observe_by_encoding(rec, ctx, sink);
        self.observing = false;
        if loop_end && self.pending_loop {
            // The loop's end, which the encoder holds until the next record, is the line.
            let (mut out, mut report) = (Vec::new(), crate::report::Report::default());
            self.close_loop(ctx, &mut Sink::new(&mut out, &mut report));
        }
    }

    fn encode(&mut self, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        if ctx.native && !self.observing && !rec.extra.is_empty() {
            count_unwritten(rec, sink);
        }
        let start = sink.out.len();
        let fate = self.encode_record(rec, ctx, sink);
        self.owed = !self.observing && (self.pending_end.is_some() || self.pending_loop);
        if self.copied_any && !self.observing && sink.out.len() >= start {
            // Followed as the copied lines are: the stream's end is made from all of them.
            let written = String::from_utf8_lossy(&sink.out[start..]).into_owned();
            for line in written.lines() {
                if let Ok(Ok(m)) = Object::parse(line) {
                    if let Some(kind) = m.get_str("type") {
                        self.copied.track(&kind, &m);
                    }
                }
            }
        }
        fate
    }
}

impl Encoder {
    fn encode_record(&mut self, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        let own = ctx.native;
        if let (Event::Terminal(t), true) = (&rec.event, self.copied_any) {
            return self.close_copied(t, ctx, sink);
        }
        self.settle_for(rec, ctx, sink);
        if own && !rec.extra.is_empty() && content_of_a_message(&rec.event) {
            if let Some(meta) = Meta::from_extra(&rec.extra) {
                self.next_meta = Some(meta);
            }
        }
        match &rec.event {
            Event::Session(s) => {
                if self.header {
                    return Fate::Absorbed;
                }
                let id = if own { s.id.clone() } else { None };
                self.header_from_session = true;
                self.ensure_header(ctx, sink, id.as_deref(), s.cwd.as_deref(), s.timestamp.as_deref());
            }
            Event::TurnStart { .. } => {
                self.close_loop(ctx, sink);
                self.ensure_loop(ctx, sink);
            }
            Event::TurnEnd { .. } => return self.turn_end(rec, ctx, sink),
            Event::RoundStart { .. } => {
                self.close_round(ctx, sink);
                self.ensure_round(ctx, sink);
            }
            Event::RoundEnd { .. } => {
                self.ensure_round(ctx, sink);
                self.close_round(ctx, sink);
            }
            Event::Prompt { .. } | Event::Notice { .. } if own && rec.extra.contains_key("message") => {
                // A base-context source's own message, written as it was.
                if matches!(rec.event, Event::Prompt { .. }) {
                    self.ensure_round(ctx, sink);
                } else {
                    self.ensure_loop(ctx, sink);
                }
                let message = source_said(rec, "message").unwrap_or_default();
                self.whole_message(sink, message);
            }
            Event::Prompt { text } => {
                self.ensure_round(ctx, sink);
                // A base-context source's own time for it, else the fixed time.
                let at = source_said(rec, "timestamp").and_then(|v| v.as_u64()).unwrap_or(self.epoch_ms);
                let message = json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": at});
                self.whole_message(sink, message);
            }
            Event::ReasoningStart { .. } => {
                self.block(ctx, sink, "thinking");
            }
            Event::ReasoningDelta { text } => self.append(ctx, sink, "thinking", text),
            Event::ReasoningEnd { text } => {
                let i = self.block(ctx, sink, "thinking");
                if let (Some(text), Some(m)) = (text, self.msg.as_mut()) {
                    m.content[i].set_text("thinking", text, false);
                }
                self.end_block(ctx, sink);
            }
            Event::TextStart => {
                self.end_block(ctx, sink);
                self.block(ctx, sink, "text");
            }
            Event::TextDelta { text, .. } => self.append(ctx, sink, "text", text),
            Event::TextReplace { text } | Event::TextEnd { text: Some(text) } => {
                let i = self.block(ctx, sink, "text");
                if let Some(m) = self.msg.as_mut() {
                    m.content[i].set_text("text", text, false);
                }
                self.end_block(ctx, sink);
            }
            Event::TextEnd { text: None } => self.end_block(ctx, sink),
            Event::ToolDraft(_) => return self.tool_draft(rec, ctx, sink),
            Event::ToolCall(_) => return self.tool_call(rec, ctx, sink),
            Event::ToolOutput { id: Some(_), .. } => return self.tool_output(rec, ctx, sink),
            Event::ToolResult(r) => self.tool_result(r, rec, ctx, sink),
            Event::PermissionDenied(d) => return self.refused(d, ctx, sink),
            Event::Usage(_) => return self.usage(rec, ctx, sink),
            Event::Error { message, fatal } => {
                self.last_error = Some(message.clone());
                if *fatal {
                    // The request failed: its message ends in error, unless it has ended.
                    self.msg_error = Some(message.clone());
                }
                return Fate::Absorbed;
            }
            Event::FinalAnswer { text } => {
                self.final_answer = Some(text.clone());
                return Fate::Absorbed;
            }
            Event::Cost { usd, total: false, parts } => {
                // A request's cost: its breakdown where the source gave one (base-context's),
                // else the total alone.
                let c = if parts.is_empty() {
                    let mut c = Map::new();
                    c.insert("total".into(), json!(usd));
                    c
                } else {
                    parts.clone()
                };
                self.next_cost = Some(c);
                return Fate::Absorbed;
            }
            Event::Notice { text } if !own || rec.extra.is_empty() => {
                self.ensure_loop(ctx, sink);
                let message = json!({"role": "custom", "customType": "notice", "content": text, "display": true, "timestamp": self.epoch_ms});
                self.whole_message(sink, message);
            }
            Event::Compaction { .. } => return self.compaction(rec, ctx, sink),
            Event::Retry { .. } => self.retry(&rec.event, ctx, sink),
            Event::Diagnostics { kind, data } if kind == "session_action_update" => {
                self.ensure_header(ctx, sink, None, None, None);
                let mut line = json!({"type": kind});
                let contract = Dialect::BaseContext.contract();
                let may = contract.fields_of(kind);
                for (k, v) in data {
                    if may.accepts_value(k, v) {
                        line[k] = v.clone();
                    } else {
                        sink.report.dropped_field(kind, k);
                    }
                }
                // A member the kind requires that the source's line lacked or had refused: the
                // emptiest value of its type, said.
                for (k, f) in contract.kinds.get(kind.as_str()).map(|s| &s.fields).into_iter().flatten() {
                    if f.required && line.get(k).is_none() {
                        sink.report.synthesized(&format!("{kind}.{k}"));
                        line[k] = f.ty.placeholder();
                    }
                }
                self.put(sink, line);
            }
            // An assistant message's event of a type base-context.md does not list: not valid
            // in either form (mappings/base-context.json lists the event types), so not written.
            Event::Extension { line } if own && line["type"] == "message_update" => {
                sink.report.dropped_kind(rec.event.kind());
                return Fate::Dropped;
            }
            // A line of a kind the spec does not list: as read. It does not open the run, so
            // that the header of a stream without one still comes before its first listed line.
            Event::Extension { line } if own => {
                self.put(sink, line.clone());
                return Fate::PassedThrough;
            }
            Event::Terminal(_) => return self.terminal(rec, ctx, sink),
            other => {
                sink.report.dropped_kind(other.kind());
                return Fate::Dropped;
            }
        }
        Fate::Written
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block as a map of its members: what [`Block`] stands for.
    fn as_map(b: &Block) -> Map<String, Value> {
        match b.to_value() {
            Value::Object(m) => m,
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn a_block_is_written_and_changed_as_the_map_of_its_members_would_be() {
        let extras = [
            json!({}),
            json!({"thinkingSignature": "EqsV\"x"}),
            json!({"index": 0, "cache": {"b": [1, "<&>"], "a": null}}),
            // Members in place of the block's own: the map's value replaces it where it stands.
            json!({"text": 7, "z": 1}),
            json!({"type": "image", "data": "…"}),
            json!({"id": "other", "arguments": "raw"}),
        ];
        let starts = || {
            let mut thinking = Block::text("thinking");
            thinking.set_text("thinking", "why\n", false);
            vec![Block::text("text"), thinking, Block::call("t\u{e9}1", "sh", json!({"z": [1], "a": "\u{2028}"}))]
        };
        for more in &extras {
            for mut block in starts() {
                let mut map = as_map(&block);
                let Value::Object(more) = more.clone() else { unreachable!() };
                block.extend(more.clone());
                map.extend(more);
                assert_eq!(as_map(&block), map, "{block:?}");
                let mut written = Vec::new();
                block.write(&mut written);
                let mut expected = Vec::new();
                write_value(&mut expected, &Value::Object(map.clone()), Layout::Compact);
                assert_eq!(String::from_utf8(written).unwrap(), String::from_utf8(expected).unwrap());
                assert_eq!(block.kind(), map["type"].as_str().unwrap_or_default());
                // Streaming into it, as the map was streamed into before.
                let field = if block.kind() == "text" { "text" } else { "thinking" };
                let mut tree = Value::Object(map);
                for (piece, append) in [("a<", true), ("b", true), ("whole", false), ("c", true)] {
                    block.set_text(field, piece, append);
                    match &mut tree[field] {
                        Value::String(now) if append => now.push_str(piece),
                        other => *other = json!(piece),
                    }
                    assert_eq!(Value::Object(as_map(&block)), tree, "{field} {piece}");
                }
                let Value::Object(map) = tree else { unreachable!() };
                for key in ["id", "name", "type"] {
                    let value = map.get(key).cloned().unwrap_or(Value::Null);
                    let said = value.as_str().unwrap_or("none");
                    assert_eq!(block.says(key, said), value == said, "{key}");
                    assert!(!block.says(key, "nothing like it"));
                }
            }
        }
    }

    #[test]
    fn a_message_written_straight_is_the_message_tree_written() {
        let mut enc =
            Encoder::new(&EncodeOptions { source_date_epoch: Some(1_700_000_000), ..EncodeOptions::default() });
        enc.epoch_ms = 1_700_000_000_123;
        let mut m = Message::new(State::Open, 3, Meta::default());
        let mut text = Block::text("text");
        text.set_text("text", "a \"quoted\" <line>\n", false);
        m.content = vec![text, Block::call("t1", "sh", json!({"z": 1, "a": [true, null]}))];
        let usages = [
            Tokens { input: Some(100), output: Some(7), cache_read: Some(40), ..Tokens::default() },
            Tokens::default(),
            Tokens { input: Some(u64::MAX / 4), output: Some(1 << 40), cache_write: Some(12_345), ..Tokens::default() },
        ];
        let said = Meta {
            api: Some("anthropic-messages".into()),
            provider: Some("a \"p\"".into()),
            model: Some("claude-\u{e9}".into()),
            timestamp: Some(1_773_655_923_541),
        };
        for ((model, usage), meta) in [None, Some("m-\u{e9}".to_string())]
            .into_iter()
            .flat_map(|m| usages.map(|u| (m.clone(), u)))
            .flat_map(|mu| [(mu.clone(), Meta::default()), (mu, said.clone())])
        {
            m.usage = usage;
            m.meta = meta;
            let ctx = Context { model, ..Context::default() };
            let mut straight = Vec::new();
            enc.write_assistant(&mut straight, &m, &ctx, "toolUse");
            let mut tree = Vec::new();
            write_value(&mut tree, &enc.assistant(&m, &ctx, "toolUse", None), Layout::Compact);
            assert_eq!(String::from_utf8(straight).unwrap(), String::from_utf8(tree).unwrap());
        }
        // With an error, and with members of its own: beside the model's, in place of one of
        // them, or twice (the last one said is the one written, where the first was).
        let own = |pairs: &[(&str, Value)]| pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect::<Vec<_>>();
        let members = [
            own(&[]),
            own(&[("responseId", json!("r\"1")), ("extra", json!({"b": [1, "<"], "a": null}))]),
            own(&[("model", json!("theirs")), ("n", json!(1))]),
            own(&[("errorMessage", json!("said"))]),
            own(&[("n", json!(1)), ("m", json!(2)), ("n", json!(3))]),
        ];
        let ctx = Context { model: Some("m".into()), ..Context::default() };
        for (members, error) in members.iter().flat_map(|m| [(m, None), (m, Some("boom \"x\"\n"))]) {
            m.members.clone_from(members);
            let mut straight = Vec::new();
            enc.write_message(&mut straight, &m, &ctx, "error", error);
            let mut tree = Vec::new();
            write_value(&mut tree, &enc.assistant(&m, &ctx, "error", error), Layout::Compact);
            assert_eq!(String::from_utf8(straight).unwrap(), String::from_utf8(tree).unwrap(), "{members:?} {error:?}");
        }
    }
}

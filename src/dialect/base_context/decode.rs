//! Reading base-context: the session header, agent loops, turns, messages and tool executions
//! into canonical records; usage per assistant message (its cost too), and the run's outcome
//! from the last assistant message once the last loop settled.

use crate::model::Name;
use std::borrow::Cow;
use std::collections::HashSet;

use serde_json::{Map, Value};

use super::{content_kept, content_text, MESSAGE_MEMBERS};
use crate::codec::{Decode, Decoded, Dialect, LineError, Record};
use crate::dialect::util::{take_type, whole_line};
use crate::json::member::Member;
use crate::json::object::Object;
use crate::json::text::AsIs;
use crate::model::Extra;
use crate::model::{
    Arguments, Basis, Event, Outcome, Phase, Scope, Session, Terminal, Text, Tokens, ToolCall, ToolDraft, ToolResult,
    ToolStatus, Usage,
};

/// The members of a member that is an object, read without building a tree for them; `None`
/// when it is no object.
fn object_of(m: Member<'_>) -> Option<Object<'_>> {
    match m {
        Member::Raw(raw, _) if raw.starts_with('{') => Object::parse_vouched(raw),
        Member::Value(v) => match *v {
            Value::Object(o) => Some(Object::from(o)),
            _ => None,
        },
        _ => None,
    }
}

/// Member `key` of an object member, read without building a tree for the rest of it.
fn member_of<'a>(m: Member<'a>, key: &str) -> Option<Member<'a>> {
    object_of(m)?.remove(key)
}

/// The elements of a member that is a list, each as its members where it is an object (`None`
/// where it is not): a message's content blocks, read without building a tree for them. Empty
/// when it is no list.
fn objects_of<'a>(list: &Member<'a>) -> Vec<Option<Object<'a>>> {
    if let Member::Raw(raw, _) = list {
        if let Some(items) = Object::list_vouched(raw) {
            return items;
        }
    }
    match list.to_value() {
        Value::Array(items) => items.into_iter().map(|item| object_of(Member::value(item))).collect(),
        _ => Vec::new(),
    }
}

/// How the last agent loop ended, as far as the stream has said.
#[derive(Debug, Clone, Default)]
struct Ending {
    stop_reason: Option<String>,
    error: Option<String>,
    /// A refusal `agent_end`, a failed compaction or a failed session command.
    failure: Option<String>,
}

pub struct Decoder {
    /// An assistant message_start was read for the message now streaming.
    started: bool,
    session_id: Option<String>,
    model: Option<String>,
    /// Blocks of the current assistant message already given as events (by content index).
    done_blocks: HashSet<u64>,
    /// Tool calls issued, and those answered, so a call or result said twice counts once.
    issued: HashSet<String>,
    answered: HashSet<String>,
    /// Whether the current agent loop has had an assistant `message_end`.
    assistant_seen: bool,
    /// The loops started and ended, and a retry announced after the last end.
    open_loops: u64,
    ended_loops: u64,
    retry_pending: bool,
    ending: Ending,
    /// Where the assistant message begun last came from (its `api`, `provider`, `model`,
    /// `timestamp`), until the first record of its content carries them.
    meta: Option<Extra>,
}

impl Decoder {
    pub fn new() -> Self {
        Decoder {
            session_id: None,
            model: None,
            done_blocks: HashSet::new(),
            issued: HashSet::new(),
            answered: HashSet::new(),
            assistant_seen: false,
            open_loops: 0,
            ended_loops: 0,
            retry_pending: false,
            ending: Ending::default(),
            meta: None,
            started: false,
        }
    }
}

impl Default for Decoder {
    fn default() -> Self {
        Self::new()
    }
}

/// An assistant message's `api`, `provider`, `model` and `timestamp`, which no canonical event
/// has a field for: kept as extra members of the message's first record, so that base-context
/// writes them back (and canonical carries them).
fn assistant_meta(message: Member<'_>) -> Option<Extra> {
    // Another role said first is told without reading the rest (a tool's whole output, say).
    if let Member::Raw(raw, _) = &message {
        if raw.strip_prefix("{\"role\":\"").is_some_and(|rest| !rest.starts_with("assistant\"")) {
            return None;
        }
    }
    let mut o = object_of(message)?;
    if o.get_str("role").as_deref() != Some("assistant") {
        return None;
    }
    let meta: Vec<_> = ["api", "provider", "model", "timestamp"]
        .into_iter()
        .filter_map(|k| Some((Cow::Borrowed(k), o.remove(k)?)))
        .collect();
    (!meta.is_empty()).then(|| Extra::from_members(meta))
}

/// Whether a user message is only what the model holds of it: text blocks and its time.
fn only_text(message: &Object<'_>) -> bool {
    let counted = 2 + usize::from(message.contains_key("timestamp"));
    let Some(content) = message.get("content") else { return false };
    if message.len() != counted || !content_is_list(content) {
        return false;
    }
    objects_of(content).iter().all(|b| {
        b.as_ref().is_some_and(|b| {
            b.len() == 2
                && b.get_str("type").as_deref() == Some("text")
                && b.get("text").is_some_and(|t| t.as_str().is_some())
        })
    })
}

/// Whether a member is a list.
fn content_is_list(m: &Member<'_>) -> bool {
    match m {
        Member::Raw(r, _) => r.starts_with('['),
        Member::Value(v) => v.is_array(),
    }
}

/// Block `i` of a partial message's content where it is an object, read without building the
/// rest of the message (which holds everything streamed so far).
fn block_of(partial: Member<'_>, i: usize) -> Option<Object<'_>> {
    match member_of(partial, "content")? {
        Member::Raw(raw, _) => object_of(Member::Raw(crate::json::scan::array_vouched(raw)?.get(i)?, AsIs::UNKNOWN)),
        Member::Value(v) => match *v {
            Value::Array(mut blocks) if i < blocks.len() => object_of(Member::value(blocks.swap_remove(i))),
            _ => None,
        },
    }
}

/// The members of an assistant message's content block of `kind` that the model holds.
fn block_members(kind: &str) -> &'static [&'static str] {
    match kind {
        "text" => &["type", "text"],
        "thinking" => &["type", "thinking"],
        "toolCall" => &["type", "id", "name", "arguments"],
        // A kind the model does not read is not taken apart: all of it is the source's.
        _ => &[],
    }
}

fn own(event: Event) -> Record {
    Record::new(Dialect::BaseContext, event)
}

/// base-context usage → canonical: its `input` excludes cache reads and writes, canonical input
/// includes them. A count written as a string of digits is read as the count; one that is no
/// count (negative, fractional, not a number) is left out and reported.
fn usage(u: &Object<'_>, out: &mut Decoded) -> Tokens {
    let mut n = |k: &str| {
        let m = u.get(k)?;
        match m.count_taken() {
            Some(n) => n,
            None => {
                out.warn(format!("message usage.{k} is {}, not a count; left out", m.to_value()));
                None
            }
        }
    };
    let cache_read = n("cacheRead");
    let cache_write = n("cacheWrite");
    // Saturating: a count near the largest integer is kept as large as it can be, not wrapped.
    let input = n("input").map(|i| i.saturating_add(cache_read.unwrap_or(0)).saturating_add(cache_write.unwrap_or(0)));
    Tokens { input, output: n("output"), cache_read, cache_write, reasoning: None, total: n("totalTokens") }
}

impl Decoder {
    /// Gives the message's origin (see [`assistant_meta`]) to the first record of its content
    /// among `out`'s, if it has one yet.
    fn give_meta(&mut self, out: &mut Decoded) {
        if let Some(rec) = out.records.iter_mut().find(|r| !matches!(r.event, Event::Extension { .. })) {
            if let Some(meta) = self.meta.take() {
                if rec.extra.is_empty() {
                    rec.extra = meta;
                } else {
                    rec.extra.extend(meta.to_fields());
                }
            }
        }
    }

    /// The events of an assistant message's blocks not yet given by its updates (some
    /// providers send no deltas at all).
    fn blocks(&mut self, blocks: &[Option<Object<'_>>], out: &mut Decoded) {
        for (i, block) in blocks.iter().enumerate() {
            if !self.done_blocks.insert(i as u64) {
                continue;
            }
            let Some(block) = block else { continue };
            match block.get_str("type").as_deref() {
                Some("text") => {
                    let text = block.get_str("text").unwrap_or_default().into_owned();
                    out.push(own(Event::TextStart));
                    out.push(own(Event::TextDelta { text: text.clone(), chars: None }));
                    out.push(own(Event::TextEnd { text: Some(text) }));
                }
                Some("thinking") => {
                    out.push(own(Event::ReasoningStart { reset: None }));
                    out.push(own(Event::ReasoningEnd { text: block.get_str("thinking").map(Cow::into_owned) }));
                }
                Some("toolCall") => self.tool_call_of(block, out),
                _ => {}
            }
        }
    }

    /// The tool call a content block or an update's `toolCall` gives.
    fn tool_call_of(&mut self, call: &Object<'_>, out: &mut Decoded) {
        let arguments = call.get("arguments").map(Member::to_value);
        self.tool_call(&call.get_str("id").unwrap_or_default(), call.get_str("name"), arguments, out);
    }

    /// Call `id`, unless it was issued already.
    fn tool_call(&mut self, id: &str, name: Option<Cow<'_, str>>, arguments: Option<Value>, out: &mut Decoded) {
        if !self.issued.insert(id.to_string()) {
            return;
        }
        let arguments = match arguments {
            Some(Value::Null) | None => Arguments::default(),
            Some(v) => Arguments::value(v),
        };
        let name = name.map_or_else(Name::default, |n| Name::from(n.as_ref()));
        out.push(own(Event::ToolCall(ToolCall { id: Some(id.into()), index: None, name, arguments, id_made: false })));
    }

    fn tool_result(
        &mut self,
        id: String,
        name: Option<String>,
        is_error: bool,
        output: Text,
        out: &mut Decoded,
    ) -> bool {
        if !self.answered.insert(id.clone()) {
            return false;
        }
        let status = if is_error { ToolStatus::Failed } else { ToolStatus::Completed };
        out.push(own(Event::ToolResult(ToolResult {
            id: Some(id.as_str().into()),
            index: None,
            name: name.map(Name::from),
            status,
            output: Some(output),
            error: None,
            arguments: Arguments::default(),
        })));
        true
    }

    /// An assistant message that ended: its blocks, its usage (counted here, once), and how it
    /// stopped.
    fn assistant_end(&mut self, mut message: Object<'_>, out: &mut Decoded) {
        let content = message.remove("content");
        let blocks = content.as_ref().map(objects_of).unwrap_or_default();
        self.blocks(&blocks, out);
        self.done_blocks.clear();
        self.assistant_seen = true;
        // ("unknown" is what agentgate writes when no dialect said the model.)
        if let Some(m) = message.get_str("model").filter(|m| *m != "unknown") {
            self.model = Some(m.into_owned());
        }
        let stop = message.get_str("stopReason").map(Cow::into_owned);
        let error = message.get_str("errorMessage").map(Cow::into_owned);
        if let Some(e) = &error {
            out.push(own(Event::Error { message: e.clone(), fatal: matches!(stop.as_deref(), Some("error")) }));
        }
        if let Some(u) = message.remove("usage") {
            let u = object_of(u).unwrap_or_default();
            // The message's cost (notes 1.3: usage.cost, in USD, `total` the sum of the four),
            // a part of the run's, with its breakdown for a base-context target. All zeros is
            // pi's "unknown" (notes 1.3), no stated cost: its text, with no digit but 0, is not
            // even read into a value.
            let some_digit = |m: &Member<'_>| match m {
                Member::Raw(r, _) => r.bytes().any(|b| (b'1'..=b'9').contains(&b)),
                Member::Value(_) => true,
            };
            let cost = u.get("cost").filter(|m| some_digit(m)).map(Member::to_value);
            let stated = |c: &serde_json::Map<String, Value>| c.values().any(|v| v.as_f64().is_some_and(|x| x != 0.0));
            let cost = cost.and_then(|c| match c {
                Value::Object(c) => Some(c),
                _ => None,
            });
            if let Some(cost) = cost.filter(|c| c.get("total").is_some_and(Value::is_number) && stated(c)) {
                let usd = cost.get("total").and_then(Value::as_f64).unwrap_or(0.0);
                out.push(own(Event::Cost { usd, total: false, parts: cost }));
            }
            let mut rec = own(Event::Usage(Usage {
                scope: Scope::Round,
                basis: Basis::Delta,
                final_: true,
                of: None,
                model: self.model.as_deref().map(Name::from),
                tokens: usage(&u, out),
            }));
            let mut extra: Vec<(Cow<'_, str>, Member<'_>)> = Vec::new();
            // A stop that the message's content and error do not tell (a message cut short,
            // aborted) goes with its usage, which ends the message, for a base-context target to
            // write back.
            // A stop base-context.md does not list is not kept: the writer's stop stands.
            let listed =
                |s: &str| crate::Dialect::BaseContext.contract().allows("message_end", "message.stopReason", s);
            if let Some(s) = stop.as_deref().filter(|s| !matches!(*s, "stop" | "toolUse" | "error") && listed(s)) {
                extra.push((Cow::Borrowed("stopReason"), Member::value(Value::from(s))));
                if let Some(e) = &error {
                    extra.push((Cow::Borrowed("errorMessage"), Member::value(Value::from(e.as_str()))));
                }
            }
            // So do the members of the message and of its blocks that the model has no place
            // for (a block's signature, the provider's response id), under their own names and,
            // for the blocks, `content`: one object of them per block. (The keys are distinct:
            // the message's are, and the three above are members the model holds.)
            for (k, v) in message.iter().filter(|(k, _)| !MESSAGE_MEMBERS.contains(k)) {
                extra.push((Cow::Owned(k.to_string()), v.clone()));
            }
            fn unknown<'b, 'a>(b: &'b Option<Object<'a>>) -> impl Iterator<Item = (&'b str, &'b Member<'a>)> {
                let known = b.as_ref().map_or(&[][..], |b| block_members(&b.get_str("type").unwrap_or_default()));
                b.iter().flat_map(Object::iter).filter(move |(k, _)| !known.contains(k))
            }
            if blocks.iter().any(|b| unknown(b).next().is_some()) {
                let blocks = blocks
                    .iter()
                    .map(|b| Value::Object(unknown(b).map(|(k, v)| (k.to_string(), v.to_value())).collect()));
                extra.push((Cow::Borrowed("content"), Member::value(Value::Array(blocks.collect()))));
            }
            rec.extra = Extra::from_members(extra);
            out.push(rec);
        }
        self.ending.stop_reason = stop;
        self.ending.error = error;
    }
}

impl Decode for Decoder {
    fn decode(&mut self, m: Object<'_>, out: &mut Decoded) -> Result<(), LineError> {
        self.decode_line(m, out)
    }

    /// base-context has no terminal record: the run ended as its last assistant message says,
    /// once its last agent loop ended with no retry announced after it. A stream that never
    /// settled is left to the normalizer, which reports it ended early.
    fn finish(&mut self, out: &mut Decoded) {
        let settled = self.open_loops > 0 && self.ended_loops >= self.open_loops && !self.retry_pending;
        if settled {
            self.settle(out);
        }
    }
}

impl Decoder {
    /// An assistant message's streamed event: the record it says (a block started, a delta, a call), or the event kept whole where the model has none.
    fn message_update(&mut self, kind: &str, mut m: Object<'_>, out: &mut Decoded) -> Result<(), LineError> {
        // The event without its `partial` message (all of the message so far, which
        // the events before it gave piece by piece), unless it is kept whole below.
        let raw = m.remove("assistantMessageEvent");
        let mut ev = raw.clone().and_then(object_of).unwrap_or_default();
        let partial = ev.remove("partial");
        let Some(what) = ev.get_str("type").map(Cow::into_owned) else {
            return Err(LineError::bad("message_update without an assistantMessageEvent type"));
        };
        let index = ev.get("contentIndex").and_then(Member::as_u64);
        let text = |k: &str| ev.get_str(k).unwrap_or_default().into_owned();
        match what.as_str() {
            "text_start" => out.push(own(Event::TextStart)),
            "text_delta" => out.push(own(Event::TextDelta { text: text("delta"), chars: None })),
            "text_end" => {
                index.map(|i| self.done_blocks.insert(i));
                out.push(own(Event::TextEnd { text: ev.get_str("content").map(Cow::into_owned) }));
            }
            "thinking_start" => out.push(own(Event::ReasoningStart { reset: None })),
            "thinking_delta" => out.push(own(Event::ReasoningDelta { text: text("delta") })),
            "thinking_end" => {
                index.map(|i| self.done_blocks.insert(i));
                out.push(own(Event::ReasoningEnd { text: ev.get_str("content").map(Cow::into_owned) }));
            }
            "toolcall_start" => {
                // With --json-deltas the start names its call; without, the partial
                // message's block at the event's index does.
                let named = match ev.remove("toolCall").and_then(object_of) {
                    Some(call) => Some(call),
                    None => partial.zip(index).and_then(|(p, i)| block_of(p, i as usize)),
                };
                let named = named.unwrap_or_default();
                out.push(own(Event::ToolDraft(ToolDraft {
                    id: named.get_str("id").map(Cow::into_owned),
                    name: named.get_str("name").map(Cow::into_owned),
                    ..ToolDraft::default()
                })));
            }
            "toolcall_delta" => {
                out.push(own(Event::ToolDraft(ToolDraft { delta: Some(text("delta")), ..ToolDraft::default() })))
            }
            "toolcall_end" => {
                index.map(|i| self.done_blocks.insert(i));
                let call = ev.remove("toolCall").and_then(object_of).unwrap_or_default();
                self.tool_call_of(&call, out);
                if out.records.is_empty() {
                    out.fold();
                }
            }
            _ => {
                let ev = raw.map_or(Value::Null, Member::into_value);
                let line = whole_line(kind, Object::from(Map::from_iter([("assistantMessageEvent".to_string(), ev)])));
                out.push(own(Event::Extension { line }));
            }
        }
        self.give_meta(out);
        Ok(())
    }

    /// A message's end: an assistant message's content, usage and stop; a user prompt; a tool result; a custom message (a notice, kept whole).
    fn message_end(&mut self, kind: &str, mut m: Object<'_>, out: &mut Decoded) -> Result<(), LineError> {
        let whole = m.remove("message");
        let Some(mut message) = whole.clone().and_then(object_of) else {
            return Err(LineError::bad("message_end without its message"));
        };
        match message.get_str("role").as_deref().unwrap_or_default() {
            "assistant" => {
                if !std::mem::take(&mut self.started) {
                    // A message with no message_start (upstream Pi streams give
                    // message_end alone): its origin is on its end.
                    self.meta = whole.clone().and_then(assistant_meta);
                }
                self.assistant_end(message, out);
                self.give_meta(out);
                // What the message did not use is not another message's.
                self.meta = None;
            }
            "user" => {
                let plain = only_text(&message);
                let text = content_kept(message.remove("content")).into_string();
                let mut rec = own(Event::Prompt { text });
                // Only its text and time, or more (an image, a member of its own): all of
                // it, for a base-context target to write as it was.
                rec.extra = match (plain, message.remove("timestamp"), whole) {
                    (true, Some(t), _) => Extra::from_members(vec![(Cow::Borrowed("timestamp"), t)]),
                    (true, None, _) | (false, _, None) => Extra::new(),
                    (false, _, Some(w)) => Extra::from_members(vec![(Cow::Borrowed("message"), w)]),
                };
                out.push(rec);
            }
            "toolResult" => {
                let id = message.get_str("toolCallId").unwrap_or_default().into_owned();
                let name = message.get_str("toolName").map(Cow::into_owned);
                // As `tool_execution_end`'s is read: a boolean, or the word written as a string.
                let failed = message.get("isError").and_then(Member::bool_taken).unwrap_or(false);
                let output = content_kept(message.remove("content"));
                if self.tool_result(id, name, failed, output, out) {
                    if let (Some(d), Some(rec)) = (message.remove("details"), out.records.last_mut()) {
                        rec.extra = Extra::from_members(vec![(Cow::Borrowed("details"), d)]);
                    }
                }
            }
            "custom" => {
                let message = whole.map_or(Value::Null, Member::into_value);
                let details = &message["details"];
                let failed = (message["customType"] == "session_slash_command_result" && details["success"] == false)
                    || (message["customType"] == "compaction_outcome" && details["outcome"] == "failed");
                let text = content_text(&message["content"]);
                if failed {
                    self.ending.failure = Some(text.clone());
                }
                // Its kind, details and time have no place in the model: all of it, for a
                // base-context target to write as it was.
                let mut rec = own(Event::Notice { text });
                rec.extra.insert("message", message);
                out.push(rec);
            }
            _ => {
                m.insert("message", whole.map_or(Value::Null, Member::into_value));
                out.push(own(Event::Extension { line: whole_line(kind, m) }));
                return Ok(());
            }
        }
        if out.records.is_empty() {
            out.fold();
        }
        Ok(())
    }

    fn decode_line(&mut self, mut m: Object<'_>, out: &mut Decoded) -> Result<(), LineError> {
        let kind = take_type(&mut m)?;
        let event = match kind.as_ref() {
            "session" => {
                let id = m.take_str("id");
                self.session_id.clone_from(&id);
                Event::Session(Session {
                    id,
                    cwd: m.take_str("cwd"),
                    version: m.take_str("version"),
                    timestamp: m.take_str("timestamp"),
                    ..Session::default()
                })
            }
            "agent_start" => {
                self.open_loops += 1;
                self.retry_pending = false;
                self.assistant_seen = false;
                self.ending.failure = None;
                Event::TurnStart { id: None }
            }
            "agent_end" => self.agent_end(&mut m, out),
            "turn_start" => Event::RoundStart { id: None, index: None },
            "turn_end" => {
                // The turn's message and tool results repeat earlier events: only the stop
                // reason is read.
                let stop = m.remove("message").and_then(|x| member_of(x, "stopReason"));
                let stop = stop.and_then(|s| s.as_str().map(Cow::into_owned));
                m.remove("toolResults");
                Event::RoundEnd { id: None, stop: stop.map(Name::from) }
            }
            "message_start" => {
                self.meta = m.remove("message").and_then(assistant_meta);
                self.started = self.meta.is_some();
                out.fold();
                return Ok(());
            }
            "message_update" => return self.message_update(&kind, m, out),
            "message_end" => return self.message_end(&kind, m, out),
            "tool_execution_start" => {
                let name = m.get_str("toolName");
                self.tool_call(&m.get_str("toolCallId").unwrap_or_default(), name, m.get_value("args"), out);
                if out.records.is_empty() {
                    out.fold();
                }
                return Ok(());
            }
            "tool_execution_update" => {
                // The call's name and arguments repeat its start; the result so far is all of it.
                m.remove("toolName");
                m.remove("args");
                let content = m.remove("partialResult").and_then(|p| member_of(p, "content"));
                Event::ToolOutput { id: m.take_str("toolCallId"), text: content_kept(content), accumulated: true }
            }
            "tool_execution_end" => {
                let id = m.take_str("toolCallId").unwrap_or_default();
                let name = m.take_str("toolName");
                let failed = m.take_bool("isError").unwrap_or(false);
                let (content, details) = match m.remove("result").and_then(object_of) {
                    Some(mut o) => (o.remove("content"), o.remove("details")),
                    None => (None, None),
                };
                if !self.tool_result(id, name, failed, content_kept(content), out) {
                    out.fold();
                } else if let (Some(d), Some(rec)) = (details, out.records.last_mut()) {
                    // What the tool said beside its output, for a base-context target.
                    rec.extra.insert("details", d.into_value());
                }
                return Ok(());
            }
            "compaction_start" | "auto_compaction_start" => Event::Compaction {
                phase: Phase::Start,
                reason: m.take_str("reason"),
                data: std::mem::take(&mut m).into_fields(),
            },
            "compaction_end" | "auto_compaction_end" => {
                let error = m.get_str("errorMessage").map(|e| e.into_owned());
                let retrying = m.get_value("willRetry").and_then(|v| v.as_bool()).unwrap_or(false);
                if let (Some(e), false) = (error, retrying) {
                    self.ending.failure = Some(format!("compaction failed: {e}"));
                }
                Event::Compaction {
                    phase: Phase::End,
                    reason: m.take_str("reason"),
                    data: std::mem::take(&mut m).into_fields(),
                }
            }
            "auto_retry_start" => {
                // A retry runs in a loop of its own, after the failed one ended (notes 3.2:
                // agent_end, then auto_retry_start, then a new agent_start): one announced
                // while a loop is still open leaves that loop to settle the run.
                self.retry_pending = self.ended_loops >= self.open_loops;
                Event::Retry {
                    phase: Phase::Start,
                    attempt: m.take_count("attempt"),
                    max_attempts: m.take_count("maxAttempts"),
                    delay_ms: m.take_count("delayMs"),
                    error: m.take_str("errorMessage"),
                    success: None,
                }
            }
            "auto_retry_end" => Event::Retry {
                phase: Phase::End,
                attempt: m.take_count("attempt"),
                max_attempts: None,
                delay_ms: None,
                error: m.take_str("finalError"),
                success: m.take_bool("success"),
            },
            "session_action_update" => {
                Event::Diagnostics { kind: kind.to_string(), data: std::mem::take(&mut m).into_fields() }
            }
            _ => {
                out.push(own(Event::Extension { line: whole_line(kind, m) }));
                return Ok(());
            }
        };
        out.push(Record::with_extra(Dialect::BaseContext, event, m.into_extra()));
        Ok(())
    }

    /// `agent_end`: the loop's end, failed where the agent refused to go on or its last
    /// assistant message failed (read from the loop's messages only when no message_end said so).
    fn agent_end(&mut self, m: &mut Object<'_>, out: &mut Decoded) -> Event {
        self.ended_loops += 1;
        // The whole loop's messages: read only on the exception path below.
        let messages = m.remove("messages");
        if let Some(refusal) = m.shift_remove("refusal") {
            let what = refusal["limit"].as_str().or(refusal["kind"].as_str()).unwrap_or("refusal");
            let why = format!("the agent refused to go on: {} ({what})", refusal["kind"].as_str().unwrap_or("refusal"));
            self.ending.failure = Some(why.clone());
            out.push(own(Event::Error { message: why, fatal: true }));
            // Kept on the loop's end, for base-context to write it back as it was.
            m.insert("refusal", refusal);
        } else if !self.assistant_seen {
            // The exception path: a failed assistant message that only agent_end holds.
            let last = messages
                .as_ref()
                .map(objects_of)
                .unwrap_or_default()
                .into_iter()
                .rev()
                .flatten()
                .find(|x| x.get_str("role").as_deref() == Some("assistant"));
            if let Some(last) = last {
                self.assistant_end(last, out);
            }
        }
        let status = match (&self.ending.failure, self.ending.stop_reason.as_deref()) {
            (Some(_), _) | (None, Some("error")) => "failed",
            (None, Some("aborted")) => "interrupted",
            _ => "completed",
        };
        Event::TurnEnd { id: None, status: Some(status.into()), reason: None }
    }

    /// The outcome of a run whose last loop ended, as its last assistant message says.
    fn settle(&mut self, out: &mut Decoded) {
        let e = &self.ending;
        let (outcome, reason) = match (&e.failure, e.stop_reason.as_deref()) {
            (Some(f), _) => (Outcome::Failed, Some(f.clone())),
            // `length` (the model ran out of output tokens) is an ordinary stop: base-context
            // exits 0 for it (base-context.md, Completion and Errors: only errors and aborts
            // are nonzero), so its readers take the run as finished.
            (None, Some("stop" | "length")) => (Outcome::Completed, None),
            (None, Some("error")) => (Outcome::Failed, None),
            (None, Some("aborted")) => (Outcome::Interrupted, e.error.clone()),
            (None, Some(other)) => (Outcome::Incomplete, Some(e.error.clone().unwrap_or_else(|| other.to_string()))),
            (None, None) => (Outcome::Incomplete, Some("no assistant message".into())),
        };
        let mut t = Terminal::new(outcome);
        t.reason = reason;
        t.error = match outcome {
            Outcome::Failed => e.error.clone().or_else(|| e.failure.clone()),
            _ => None,
        };
        t.session_id.clone_from(&self.session_id);
        t.model.clone_from(&self.model);
        out.push(own(Event::Terminal(t)));
    }
}

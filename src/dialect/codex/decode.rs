//! Reads `codex exec --json`: items become the canonical events they are (messages, reasoning,
//! tool calls with their results), `turn.completed` usage becomes the run's own usage (the
//! thread's running total less the last total seen for that thread), and the end of the input
//! says how the run ended, since codex writes no closing record.

use indexmap::IndexMap;
use serde_json::{json, Map, Value};

use super::COMMAND;
use crate::codec::make_room;
use crate::codec::{Decode, Decoded, Dialect, LineError, Record};
use crate::dialect::util::take_type;
use crate::json::object::Object;
use crate::model::{
    Arguments, Basis, Event, Outcome, Scope, Session, Terminal, Tokens, ToolCall, ToolResult, ToolStatus, Usage,
};

/// How the last turn of the input ended.
#[derive(Debug, Clone, PartialEq)]
enum TurnEnd {
    Open,
    Completed,
    Failed(String),
}

#[derive(Default)]
pub struct Decoder {
    thread_id: Option<String>,
    /// The last usage total seen per thread (a resumed thread's turn.completed holds its
    /// earlier turns too): a handful of threads per input at most.
    totals: IndexMap<String, Tokens>,
    /// Items started and not yet completed: their tool name, for their result.
    open: IndexMap<String, String>,
    /// How the last turn ended; `None` before any turn.
    turn: Option<TurnEnd>,
    /// The last agent_message's text: the run's answer.
    answer: Option<String>,
    /// The last `error` line's message, for a turn.failed that states none.
    last_error: Option<String>,
    /// Ids of the todo lists seen (their first line starts them).
    todos: IndexMap<String, ()>,
}

impl Decoder {
    pub fn new() -> Self {
        Self::default()
    }
}

fn own(event: Event) -> Record {
    Record::new(Dialect::Codex, event)
}

/// The string member `key` of an item.
fn text(item: &Map<String, Value>, key: &str) -> Option<String> {
    item.get(key).and_then(Value::as_str).map(str::to_string)
}

/// A usage object as canonical tokens: input as is (it includes cache reads and writes),
/// output as is (it includes reasoning); a field codex did not send is unknown, not 0.
fn tokens(u: &Value, out: &mut Decoded) -> Tokens {
    let mut n = |k: &str| match u.get(k) {
        Some(Value::Number(n)) if n.is_u64() => n.as_u64(),
        // A count written as a string of its digits is that count, and said.
        Some(Value::String(s)) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
            out.warn(format!(
                "turn.completed.usage.{k} is the string {}; read as the count {s}",
                crate::json::quoted(s)
            ));
            s.parse().ok()
        }
        None => None,
        Some(v) => {
            out.warn(crate::dialect::util::not_a_count("turn.completed", &format!("usage.{k}"), v, "unknown"));
            None
        }
    };
    Tokens {
        input: n("input_tokens"),
        output: n("output_tokens"),
        cache_read: n("cached_input_tokens"),
        cache_write: n("cache_write_input_tokens"),
        reasoning: n("reasoning_output_tokens"),
        total: None,
    }
}

/// `now - before`, figure by figure: a figure that fell (another thread, a reset counter) is
/// taken as it is now, not clamped to 0.
fn since(now: &Tokens, before: &Tokens) -> Tokens {
    let f = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(a), Some(b)) if a >= b => Some(a - b),
        (a, _) => a,
    };
    Tokens {
        input: f(now.input, before.input),
        output: f(now.output, before.output),
        cache_read: f(now.cache_read, before.cache_read),
        cache_write: f(now.cache_write, before.cache_write),
        reasoning: f(now.reasoning, before.reasoning),
        total: None,
    }
}

/// A tool item's name and arguments, as the call it is.
fn call_of(kind: &str, item: &Map<String, Value>) -> Option<(String, Value)> {
    let pick = |keys: &[&str]| -> Value {
        Value::Object(keys.iter().filter_map(|k| item.get(*k).map(|v| (k.to_string(), v.clone()))).collect())
    };
    Some(match kind {
        "command_execution" => (COMMAND.into(), pick(&["command"])),
        "file_change" => ("file_change".into(), pick(&["changes"])),
        "mcp_tool_call" => {
            let tool = text(item, "tool").unwrap_or_default();
            // `null` (a serde_json::Value in codex's own types) is no arguments, as absent is.
            let args = item.get("arguments").filter(|a| !a.is_null()).cloned().unwrap_or(Value::Object(Map::new()));
            (tool, args)
        }
        "web_search" => ("web_search".into(), pick(&["query", "action"])),
        "collab_tool_call" => {
            let tool = text(item, "tool").unwrap_or_else(|| "collab_tool_call".into());
            (tool, pick(&["sender_thread_id", "receiver_thread_ids", "prompt"]))
        }
        _ => return None,
    })
}

/// A finished tool item's status and output.
fn result_of(kind: &str, item: &Map<String, Value>) -> (ToolStatus, String, Option<String>) {
    let status = text(item, "status").unwrap_or_default();
    let st = match status.as_str() {
        "completed" => ToolStatus::Completed,
        _ => ToolStatus::Failed,
    };
    let output = match kind {
        "command_execution" => text(item, "aggregated_output").unwrap_or_default(),
        "mcp_tool_call" => match (item.get("error"), item.get("result")) {
            (Some(Value::Object(e)), _) => e.get("message").and_then(Value::as_str).unwrap_or_default().to_string(),
            (_, Some(Value::Object(r))) => {
                let blocks = r.get("content").and_then(Value::as_array);
                let texts: Vec<&str> =
                    blocks.into_iter().flatten().filter_map(|b| b.get("text").and_then(Value::as_str)).collect();
                if texts.is_empty() {
                    Value::Object(r.clone()).to_string()
                } else {
                    texts.concat()
                }
            }
            _ => String::new(),
        },
        "collab_tool_call" => item.get("agents_states").map(Value::to_string).unwrap_or_default(),
        "file_change" => {
            let paths: Vec<String> = item
                .get("changes")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|c| {
                    format!(
                        "{} {}",
                        c.get("kind").and_then(Value::as_str).unwrap_or("update"),
                        c.get("path").and_then(Value::as_str).unwrap_or("")
                    )
                })
                .collect();
            paths.join("\n")
        }
        _ => String::new(),
    };
    // A declined command was never run (codex.md: "declined (not run)"): a refused call, which
    // does not fail the turn.
    let error = match status.as_str() {
        "declined" => Some("declined: the command was not run".to_string()),
        "failed" if kind == "command_execution" => Some(format!(
            "exit code {}",
            item.get("exit_code").map(Value::to_string).unwrap_or_else(|| "unknown".into())
        )),
        _ => None,
    };
    (st, output, error)
}

/// The members of `object` that the spec does not name among `known`: what the model has no
/// place for, kept among a record's extra members (under the name of the object they are in).
fn unknown_members(object: &Map<String, Value>, known: &[&str]) -> Option<Value> {
    let rest: Map<String, Value> =
        object.iter().filter(|(k, _)| !known.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect();
    (!rest.is_empty()).then_some(Value::Object(rest))
}

/// The members of an item of type `ty` that the spec names (codex.md, Items).
fn item_members(ty: &str) -> &'static [&'static str] {
    match ty {
        "agent_message" | "reasoning" | "plan" => &["id", "type", "text"],
        "command_execution" => &["id", "type", "command", "aggregated_output", "exit_code", "status"],
        "file_change" => &["id", "type", "changes", "status"],
        "mcp_tool_call" => &["id", "type", "server", "tool", "arguments", "result", "error", "status"],
        "web_search" => &["id", "type", "query", "action", "status"],
        "todo_list" => &["id", "type", "items"],
        "collab_tool_call" => {
            &["id", "type", "tool", "sender_thread_id", "receiver_thread_ids", "prompt", "agents_states", "status"]
        }
        "error" => &["id", "type", "message"],
        _ => &["id", "type"],
    }
}

/// A turn's end with `status`; the members of its closing line the spec does not name (of the
/// line, and inside its `usage` or `error`) kept as its extra members.
fn turn_end(out: &mut Decoded, m: Object<'_>, status: &str, inner: Option<(&str, Option<Value>, &[&str])>) {
    let mut rec = own(Event::TurnEnd { id: None, status: Some(status.into()), reason: None });
    rec.extra = out.extra(m);
    if let Some((key, Some(Value::Object(v)), known)) = inner {
        if let Some(rest) = unknown_members(&v, known) {
            rec.extra.insert(key, rest);
        }
    }
    out.push(rec);
}

impl Decoder {
    /// One item line: its events, the whole line kept for a codex or canonical target (the last
    /// record carries it, as `type` and `item`, for the codex encoder to write back).
    /// An `item.*` line: `item` its item, `rest` the line's other members (none in the spec,
    /// kept all the same), `at` where the item stood among them.
    fn item(&mut self, kind: &str, item: Map<String, Value>, at: usize, rest: Map<String, Value>, out: &mut Decoded) {
        let id = text(&item, "id").unwrap_or_default();
        let ty = text(&item, "type").unwrap_or_default();
        let done = kind == "item.completed";
        let mut events = Vec::new();
        match ty.as_str() {
            "agent_message" => {
                if done {
                    let t = text(&item, "text").unwrap_or_default();
                    self.answer = Some(t.clone());
                    events.push(Event::TextStart);
                    events.push(Event::TextDelta { text: t, chars: None });
                    events.push(Event::TextEnd { text: None });
                }
            }
            "reasoning" => {
                if done {
                    let t = text(&item, "text").unwrap_or_default();
                    events.push(Event::ReasoningStart { reset: None });
                    events.push(Event::ReasoningEnd { text: Some(t) });
                }
            }
            "todo_list" => {
                let items = item.get("items").cloned().unwrap_or(json!([]));
                make_room(&mut self.todos, id.as_str());
                self.todos.insert(id.clone(), ());
                events.push(Event::Todo { items });
            }
            "error" => events.push(Event::Notice { text: text(&item, "message").unwrap_or_default() }),
            other => {
                if let Some((name, args)) = call_of(other, &item) {
                    let known = self.open.contains_key(&id);
                    if !known {
                        make_room(&mut self.open, id.as_str());
                        self.open.insert(id.clone(), name.clone());
                        events.push(Event::ToolCall(ToolCall {
                            id: Some(id.as_str().into()),
                            index: None,
                            name: name.as_str().into(),
                            arguments: Arguments::value(args),
                            id_made: false,
                        }));
                        if other == "file_change" {
                            for c in item.get("changes").and_then(Value::as_array).into_iter().flatten() {
                                if let Some(path) = c.get("path").and_then(Value::as_str) {
                                    let action = c.get("kind").and_then(Value::as_str);
                                    events.push(Event::FileChange {
                                        path: path.to_string(),
                                        action: action.map(str::to_string),
                                        tool: Some("file_change".into()),
                                        data: Map::new(),
                                    });
                                }
                            }
                        }
                    }
                    if kind == "item.updated" && other == "command_execution" {
                        if let Some(o) = text(&item, "aggregated_output").filter(|o| !o.is_empty()) {
                            events.push(Event::ToolOutput { id: Some(id.clone()), text: o.into(), accumulated: true });
                        }
                    }
                    // Closed still in progress (codex closes open items at turn end): no result
                    // came for it.
                    let answered = text(&item, "status").as_deref() != Some("in_progress");
                    if done {
                        self.open.shift_remove(&id);
                    }
                    if done && answered {
                        let (status, output, error) = result_of(other, &item);
                        events.push(Event::ToolResult(ToolResult {
                            id: Some(id.as_str().into()),
                            index: None,
                            name: Some(name.as_str().into()),
                            status,
                            output: Some(output.into()),
                            error,
                            arguments: Arguments::default(),
                        }));
                    }
                }
            }
        }
        if events.is_empty() {
            // A kind of item, or a state of one, the model has no event for: kept whole, as read
            // (`type`, then its members, the item where it stood).
            let mut line = Map::new();
            line.insert("type".into(), Value::String(kind.to_string()));
            let mut item = Some(item);
            for (i, (k, v)) in rest.into_iter().enumerate() {
                if i == at {
                    line.insert("item".into(), Value::Object(item.take().unwrap_or_default()));
                }
                line.insert(k, v);
            }
            if let Some(item) = item {
                line.insert("item".into(), Value::Object(item));
            }
            out.push(own(Event::Extension { line: Value::Object(line) }));
            return;
        }
        // What the spec does not name, of the line and of its item, goes with its last record.
        let unknown = unknown_members(&item, item_members(&ty));
        let n = events.len();
        for (i, e) in events.into_iter().enumerate() {
            let mut rec = own(e);
            if i + 1 == n {
                for (k, v) in &rest {
                    rec.extra.insert(k.clone(), v.clone());
                }
                if let Some(unknown) = &unknown {
                    rec.extra.insert("item", unknown.clone());
                }
            }
            out.push(rec);
        }
    }
}

impl Decode for Decoder {
    fn decode(&mut self, mut m: Object<'_>, out: &mut Decoded) -> Result<(), LineError> {
        let kind = take_type(&mut m)?;
        match kind.as_ref() {
            "thread.started" => {
                let id = m.take_str("thread_id");
                self.thread_id.clone_from(&id);
                let event = Event::Session(Session { id, ..Session::default() });
                let extra = out.extra(m);
                out.push(Record::with_extra(Dialect::Codex, event, extra));
            }
            "turn.started" => {
                self.turn = Some(TurnEnd::Open);
                let extra = out.extra(m);
                out.push(Record::with_extra(Dialect::Codex, Event::TurnStart { id: None }, extra));
            }
            "item.started" | "item.updated" | "item.completed" => {
                let at = m.iter().position(|(k, _)| k == "item");
                match m.shift_remove("item") {
                    Some(Value::Object(item)) => {
                        let rest = m.into_fields();
                        self.item(&kind, item, at.unwrap_or(rest.len()), rest, out)
                    }
                    _ => return Err(LineError::bad(format!("{kind} without an item object"))),
                }
            }
            "turn.completed" => {
                let usage = m.shift_remove("usage");
                if let Some(u) = &usage {
                    let now = tokens(u, out);
                    let thread = self.thread_id.clone().unwrap_or_default();
                    let before = self.totals.get(&thread).copied().unwrap_or_default();
                    if self.totals.len() >= 64 && !self.totals.contains_key(&thread) {
                        self.totals.drain(..32);
                    }
                    self.totals.insert(thread, now);
                    out.push(own(Event::Usage(Usage {
                        scope: Scope::Turn,
                        basis: Basis::Delta,
                        final_: true,
                        of: None,
                        model: None,
                        tokens: since(&now, &before),
                    })));
                }
                self.turn = Some(TurnEnd::Completed);
                turn_end(
                    out,
                    m,
                    "completed",
                    Some((
                        "usage",
                        usage,
                        &[
                            "input_tokens",
                            "cached_input_tokens",
                            "cache_write_input_tokens",
                            "output_tokens",
                            "reasoning_output_tokens",
                        ],
                    )),
                );
            }
            "turn.failed" => {
                let error = m.shift_remove("error");
                // codex.md: the turn's error, else the last `error` line's, else "turn failed".
                let message = error
                    .as_ref()
                    .and_then(|e| e.get("message"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .or_else(|| self.last_error.clone())
                    .unwrap_or_else(|| "turn failed".into());
                out.push(own(Event::Error { message: message.clone(), fatal: true }));
                self.turn = Some(TurnEnd::Failed(message));
                turn_end(out, m, "failed", Some(("error", error, &["message"])));
            }
            "error" => {
                let message = m.take_str("message").unwrap_or_default();
                self.last_error = Some(message.clone());
                let extra = out.extra(m);
                out.push(Record::with_extra(Dialect::Codex, Event::Error { message, fatal: false }, extra));
            }
            _ => {
                let line = crate::dialect::util::whole_line(kind, m);
                out.push(own(Event::Extension { line }));
            }
        }
        Ok(())
    }

    /// codex writes no closing record: a last turn that completed or failed ends the run so;
    /// one that did neither (an interrupt, a kill, a stall) is left to the normalizer, which
    /// says the input ended without a terminal record.
    fn finish(&mut self, out: &mut Decoded) {
        let (outcome, error) = match &self.turn {
            Some(TurnEnd::Completed) => (Outcome::Completed, None),
            Some(TurnEnd::Failed(e)) => (Outcome::Failed, Some(e.clone())),
            _ => return,
        };
        let mut t = Terminal::new(outcome);
        t.error = error;
        t.final_text.clone_from(&self.answer);
        t.session_id.clone_from(&self.thread_id);
        out.push(own(Event::Terminal(t)));
    }
}

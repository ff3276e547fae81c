//! Reading wuu: thread, turn, message, usage and tool events into canonical records; a bash
//! call's `command_*` twin is folded into its `tool_*` events (one call), and carried whole to
//! a canonical target.

use crate::model::Name;
use indexmap::IndexMap;
use serde_json::Value;

use super::{ids, Ids};
use crate::codec::make_room;
use crate::codec::{Decode, Decoded, Dialect, LineError, Record};
use crate::contract::Contract;
use crate::dialect::util::{take_count_noted, take_type, whole_line};
use crate::json::object::Object;
use crate::model::Extra;
use crate::model::{
    Arguments, Basis, Denial, Event, Outcome, Phase, Scope, Session, Terminal, Tokens, ToolCall, ToolResult,
    ToolStatus, Usage,
};

/// The two event families that report the same bash call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Tool,
    Command,
}

/// What has been read of one tool item, to count a bash call once although both families
/// report it.
#[derive(Debug, Default)]
struct Item {
    tool: bool,
    command: bool,
    /// The family whose output deltas are the call's output.
    output_by: Option<Family>,
    done: bool,
    /// A bash call, which the command family reports too: kept past its first end, for a twin
    /// that reports the call after the first family finished it.
    bash: bool,
    /// The family that reported the call first.
    first: Option<Family>,
}

pub struct Decoder {
    contract: &'static Contract,
    thread_id: Option<String>,
    turn_id: Option<String>,
    /// The run's own thread where no thread was acquired: the one its first turn started on.
    root_thread: Option<String>,
    /// Items started and not yet ended (bounded as the normalizer bounds open calls).
    items: IndexMap<String, Item>,
}

impl Decoder {
    pub fn new() -> Self {
        Decoder {
            contract: Dialect::Wuu.contract(),
            thread_id: None,
            turn_id: None,
            root_thread: None,
            items: IndexMap::new(),
        }
    }

    /// Whether a turn, message or usage line belongs to a thread other than the run's own (the
    /// first one acquired, else the one the first turn started on).
    fn other_thread(&mut self, kind: &str, m: &Object<'_>) -> bool {
        const TURN_KINDS: [&str; 7] = [
            "turn_started",
            "turn_completed",
            "turn_failed",
            "turn_interrupted",
            "usage_updated",
            "agent_message_delta",
            "agent_message_final",
        ];
        if !TURN_KINDS.contains(&kind) {
            return false;
        }
        let Some(thread) = m.get_str("thread_id").filter(|t| !t.is_empty()) else { return false };
        match self.thread_id.as_deref().filter(|t| !t.is_empty()).or(self.root_thread.as_deref()) {
            Some(root) => thread != root,
            None => {
                if kind == "turn_started" {
                    self.root_thread = Some(thread.into_owned());
                }
                false
            }
        }
    }

    /// Drops `thread_id` and `turn_id` when they name the current thread and turn (the encoder
    /// writes them back from its own state); different ones stay as unknown members.
    fn strip_ids(&self, m: &mut Object<'_>) {
        for (key, current) in [("thread_id", &self.thread_id), ("turn_id", &self.turn_id)] {
            let same = match (m.get_str(key), current) {
                (Some(v), Some(c)) => v == c.as_str(),
                (Some(v), None) => v.is_empty(),
                _ => false,
            };
            if same {
                m.shift_remove(key);
            }
        }
    }

    /// Notes that `family` reported an event for `item`; true when this event repeats what the
    /// other family already said (then it adds nothing).
    fn seen(&mut self, item: &str, family: Family, what: Step, bash: bool) -> bool {
        let i = match self.items.get_index_of(item) {
            Some(i) => i,
            None => {
                make_room(&mut self.items, item);
                self.items.insert_full(item.to_string(), Item::default()).0
            }
        };
        let entry = &mut self.items[i];
        entry.first.get_or_insert(family);
        let again = match family {
            Family::Tool => std::mem::replace(&mut entry.tool, true),
            Family::Command => std::mem::replace(&mut entry.command, true),
        };
        match what {
            Step::Start if entry.done && again => {
                // A family that finished this item starts it again: a new call under an id
                // used before.
                *entry = Item {
                    tool: family == Family::Tool,
                    command: family == Family::Command,
                    bash,
                    first: Some(family),
                    ..Item::default()
                };
                false
            }
            Step::Start => {
                entry.bash |= bash;
                entry.tool && entry.command
            }
            Step::Output => *entry.output_by.get_or_insert(family) != family,
            Step::End => {
                let twin_seen = entry.tool && entry.command;
                if entry.done {
                    self.items.shift_remove_index(i);
                    true
                } else {
                    entry.done = true;
                    if !twin_seen && !entry.bash {
                        self.items.shift_remove_index(i);
                    }
                    false
                }
            }
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Step {
    Start,
    Output,
    End,
}

impl Default for Decoder {
    fn default() -> Self {
        Self::new()
    }
}

/// A session field wuu states: empty means not known (wuu writes "" for what it does not know,
/// and so does its encoder here, so the line comes back as it was).
fn known(m: &mut Object<'_>, key: &str) -> Option<String> {
    m.take_str(key).filter(|v| !v.is_empty())
}

fn text(m: &mut Object<'_>, key: &str) -> String {
    m.take_str(key).unwrap_or_default()
}

/// The token counts of a `kind` line; one that is no count is read as none, and said so.
fn tokens(m: &mut Object<'_>, kind: &str, out: &mut Decoded) -> Tokens {
    let mut count = |key| take_count_noted(m, kind, key, "none", out);
    Tokens {
        input: count("input_tokens"),
        output: count("output_tokens"),
        cache_read: count("cache_read_tokens"),
        cache_write: count("cache_creation_tokens"),
        ..Tokens::default()
    }
}

/// `arguments` is JSON text; an object where a writer put one is taken as it is.
fn arguments(m: &mut Object<'_>) -> Arguments {
    if let Some(t) = m.take_text("arguments") {
        return Arguments::json_text(t.into_owned());
    }
    match m.shift_remove("arguments") {
        Some(Value::Null) | None => Arguments::default(),
        Some(v) => Arguments::value(v),
    }
}

impl Decode for Decoder {
    fn decode(&mut self, m: Object<'_>, out: &mut Decoded) -> Result<(), LineError> {
        self.decode_line(m, out)
    }
}

impl Decoder {
    fn decode_line(&mut self, mut m: Object<'_>, out: &mut Decoded) -> Result<(), LineError> {
        let kind = take_type(&mut m)?;
        let own = |event: Event, extra: Extra| Record::with_extra(Dialect::Wuu, event, extra);
        if self.twin(&kind, &m, out) {
            return Ok(());
        }
        if self.other_thread(&kind, &m) {
            // A subagent's turn (its own thread: wuu.md tracks a session by thread_id) neither
            // opens nor closes the run's turns, nor adds its text or usage to theirs: kept
            // whole, for wuu to write back.
            out.push(Record::new(Dialect::Wuu, Event::Extension { line: whole_line(kind, m) }));
            return Ok(());
        }
        // Checked before the ids are taken, and only where the line was read as it stands.
        // Where the encoder writes them back (see `Ids`).
        if ids(&kind) != Ids::None {
            self.strip_ids(&mut m);
        }
        let event = match kind.as_ref() {
            "session_configured" => Event::Session(Session {
                provider: known(&mut m, "provider"),
                model: known(&mut m, "model"),
                cwd: known(&mut m, "workspace_root"),
                ..Session::default()
            }),
            "thread_started" | "thread_resumed" | "thread_forked" => {
                self.thread_id = m.take_str("thread_id");
                if kind != "thread_started" || self.thread_id.is_none() {
                    // Which of the three, for writing it back to wuu (a thread line without its
                    // required `thread_id` is still a thread line, not a `session_configured`).
                    m.insert("type", Value::String(kind.to_string()));
                }
                Event::Session(Session {
                    id: self.thread_id.clone(),
                    provider: known(&mut m, "provider"),
                    model: known(&mut m, "model"),
                    cwd: known(&mut m, "cwd"),
                    ..Session::default()
                })
            }
            "turn_started" => {
                self.turn_id = m.take_str("turn_id");
                Event::TurnStart { id: self.turn_id.clone() }
            }
            "agent_message_delta" => Event::TextDelta { text: text(&mut m, "delta"), chars: None },
            "agent_message_final" => Event::TextReplace { text: text(&mut m, "message") },
            "usage_updated" => Event::Usage(Usage {
                scope: Scope::Turn,
                basis: Basis::Cumulative,
                final_: false,
                of: self.turn_id.as_deref().map(Name::from),
                model: None,
                tokens: tokens(&mut m, "usage_updated", out),
            }),
            "turn_completed" => {
                let tokens = tokens(&mut m, "turn_completed", out);
                out.push(own(
                    Event::Usage(Usage {
                        scope: Scope::Turn,
                        basis: Basis::Cumulative,
                        final_: true,
                        of: self.turn_id.as_deref().map(Name::from),
                        model: None,
                        tokens,
                    }),
                    Extra::new(),
                ));
                Event::TurnEnd { id: self.turn_id.clone(), status: Some("completed".into()), reason: None }
            }
            "turn_failed" => {
                out.push(own(Event::Error { message: text(&mut m, "error"), fatal: true }, Extra::new()));
                Event::TurnEnd { id: self.turn_id.clone(), status: Some("failed".into()), reason: None }
            }
            "turn_interrupted" => Event::TurnEnd {
                id: self.turn_id.clone(),
                status: Some("interrupted".into()),
                reason: m.take_str("reason"),
            },
            "tool_started" | "command_started" => tool_call(&kind, &mut m),
            "tool_output_delta" | "command_output_delta" => Event::ToolOutput {
                id: m.take_str("item_id"),
                text: m.take_kept("delta").unwrap_or_default(),
                accumulated: false,
            },
            "tool_completed" | "command_completed" => self.tool_result(&kind, &mut m, out),
            "tool_removed" | "command_removed" => Event::ToolWithdrawn { id: m.take_str("item_id") },
            "file_changed" => Event::FileChange {
                path: text(&mut m, "path"),
                action: m.take_str("action"),
                tool: m.take_str("tool_name"),
                data: std::mem::take(&mut m).into_fields(),
            },
            "subagent_started" | "subagent_updated" | "subagent_completed" => Event::Subagent {
                phase: match kind.as_ref() {
                    "subagent_started" => Phase::Start,
                    "subagent_updated" => Phase::Update,
                    _ => Phase::End,
                },
                id: m.take_str("agent_id"),
                status: m.take_str("status"),
                data: std::mem::take(&mut m).into_fields(),
            },
            "todo_updated" => match m.shift_remove("todo") {
                Some(items) if !items.is_null() => Event::Todo { items },
                _ => return Err(LineError::bad("todo_updated without its todo")),
            },
            "provider_state" | "request_context" => {
                Event::Diagnostics { kind: kind.to_string(), data: std::mem::take(&mut m).into_fields() }
            }
            "error" => Event::Error { message: text(&mut m, "error"), fatal: false },
            "result" => self.result(&mut m, out),
            _ => {
                let line = whole_line(kind, m);
                out.push(Record::new(Dialect::Wuu, Event::Extension { line }));
                return Ok(());
            }
        };
        let extra = out.extra(m);
        out.push(Record::with_extra(Dialect::Wuu, event, extra));
        Ok(())
    }

    /// Whether the line is the twin of one the other family already reported (a bash call is
    /// reported as both `tool_*` and `command_*`): one call, counted once; the line is a repeat
    /// record (it stands for itself, for a wuu target to copy).
    fn twin(&mut self, kind: &str, m: &Object<'_>, out: &mut Decoded) -> bool {
        let family = match kind {
            k if k.starts_with("tool_") => Family::Tool,
            k if k.starts_with("command_") => Family::Command,
            _ => return false,
        };
        let step = match &kind[kind.find('_').unwrap_or(0)..] {
            "_started" => Step::Start,
            "_output_delta" => Step::Output,
            "_completed" | "_removed" => Step::End,
            _ => return false,
        };
        let Some(item) = m.get_str("item_id") else { return false };
        // Only bash has a command family (wuu's notes); asked where a call starts.
        let bash =
            matches!(step, Step::Start) && (family == Family::Command || m.get_str("name").as_deref() == Some("bash"));
        if !self.seen(&item, family, step, bash) {
            return false;
        }
        // It stands for itself; what the spec names none of in it is its own (wuu.md: the
        // command events "add name, command, and arguments when available"; completion adds
        // "status and error"; wuu-notes.md: `command` and `process_id`).
        const NAMED: [&str; 11] = [
            "type",
            "thread_id",
            "turn_id",
            "item_id",
            "name",
            "arguments",
            "command",
            "process_id",
            "delta",
            "status",
            "error",
        ];
        let mut rec = Record::new(Dialect::Wuu, Event::Repeat);
        for (k, v) in m.iter().filter(|(k, _)| !NAMED.contains(k)) {
            rec.extra.insert(k, v.to_value());
        }
        out.push(rec);
        true
    }

    /// `tool_completed` or `command_completed`: the call's status (from the contract's
    /// `tool_status`) and error.
    fn tool_result(&self, kind: &str, m: &mut Object<'_>, out: &mut Decoded) -> Event {
        let refusals = self.contract.decode.get("tool_refusal").and_then(Value::as_array);
        if let Some(word) =
            m.get_str("status").filter(|w| refusals.is_some_and(|r| r.iter().any(|x| x.as_str() == Some(w.as_ref()))))
        {
            // A refused call (it did not run), not a failed one: the targets' refusals
            // (Claude's permission_denials, codex's declined, adal's permission_denied).
            let word = word.into_owned();
            m.shift_remove("status");
            let reason = m.take_str("error").filter(|e| !e.is_empty()).unwrap_or(word);
            return Event::PermissionDenied(Denial {
                id: m.take_str("item_id"),
                name: m.take_str("name").unwrap_or_default(),
                arguments: Arguments::default(),
                reason: Some(reason),
            });
        }
        let status = match m.get_str("status").as_deref() {
            Some(word) => {
                match self.contract.decode.get("tool_status").and_then(|t| t.get(word)).and_then(Value::as_str) {
                    Some(known) => {
                        m.shift_remove("status");
                        known.parse().unwrap_or(ToolStatus::Failed)
                    }
                    // An unknown status word stays as an unknown member, for wuu itself.
                    None => {
                        out.warn(format!(
                            "{kind} has status \"{word}\", which agentgate does not know; read as failed"
                        ));
                        ToolStatus::Failed
                    }
                }
            }
            // wuu always writes one (its notes): a reader is told what was assumed.
            None => {
                out.warn(format!("{kind} without \"status\"; read as completed"));
                ToolStatus::Completed
            }
        };
        let error = m.take_str("error").filter(|e| !e.is_empty());
        Event::ToolResult(ToolResult {
            id: m.take_name("item_id"),
            index: None,
            name: m.take_name("name"),
            status,
            output: None,
            error,
            arguments: Arguments::default(),
        })
    }

    /// `result`: the final message, then the terminal record.
    fn result(&self, m: &mut Object<'_>, out: &mut Decoded) -> Event {
        let status = text(m, "status");
        let outcome = self.contract.decode_outcome("status", &status);
        if outcome.is_none() {
            out.warn(format!("result has status \"{status}\", not one wuu lists; read as an incomplete run"));
        }
        out.push(Record::new(Dialect::Wuu, Event::FinalAnswer { text: text(m, "final_message") }));
        let mut t = Terminal::new(outcome.unwrap_or(Outcome::Incomplete));
        if outcome.is_none() {
            t.reason = Some(status);
        }
        t.error = m.take_str("error").filter(|e| !e.is_empty());
        // A thread_id that is the current thread's was stripped; another one (or the only
        // one, in a stream that never started a thread) names the session.
        t.session_id = m.take_str("thread_id").filter(|s| !s.is_empty()).or_else(|| self.thread_id.clone());
        Event::Terminal(t)
    }
}

/// `tool_started` or `command_started`: the call, its arguments (a command's alone where the
/// line has no arguments); bash where a command line names no tool.
fn tool_call(kind: &str, m: &mut Object<'_>) -> Event {
    let name =
        m.take_str("name").unwrap_or_else(|| if kind == "command_started" { "bash".into() } else { String::new() });
    let mut args = arguments(m);
    if args.is_empty() {
        if let Some(command) = m.get_value("command") {
            args = Arguments::value(serde_json::json!({ "command": command }));
        }
    }
    Event::ToolCall(ToolCall {
        id: m.take_name("item_id"),
        index: None,
        name: name.into(),
        arguments: args,
        id_made: false,
    })
}

use indexmap::{IndexMap, IndexSet};
use serde_json::{Map, Value};

use super::{other_stop, SCHEMA_VERSION};
use crate::contract::Contract;
use crate::dialect::{build_line, Dialect, Encode, Record, Sink};
use crate::event::{Basis, Event, Outcome, Scope, Summary, Terminal, Tokens, ToolStatus};
use crate::extra::Extra;
use crate::json::{write_line, write_str, Field, Layout};
use crate::normalize::Context;
use crate::report::Fate;

/// What a run from another dialect becomes: one loom Session line, gathered as the run goes.
#[derive(Default)]
struct Gathered {
    any: bool,
    calls: Calls,
    /// Rounds (model requests) as round ends and as per-round usage say; the larger counts.
    round_ends: u64,
    round_usages: u64,
    turns: u64,
    per_request_usage: bool,
    unknown: u64,
    /// The dialect the run's first record came from: the source's, also through canonical.
    origin: Option<Dialect>,
    /// Names of the calls refused for want of approval: the actions awaited.
    denied: Vec<String>,
}

pub struct Encoder {
    contract: &'static Contract,
    run: Gathered,
    approval_written: bool,
}

impl Encoder {
    pub fn new() -> Self {
        Encoder { contract: Dialect::Loom.contract(), run: Gathered::default(), approval_written: false }
    }
}

impl Default for Encoder {
    fn default() -> Self {
        Self::new()
    }
}

/// A run's tool calls in order, held compactly for the Session line: each id once, names
/// interned (a run may make a great many calls, of few tools).
#[derive(Default)]
struct Calls {
    by_id: IndexMap<Box<str>, Mark>,
    names: IndexSet<Box<str>>,
}

#[derive(Clone, Copy)]
struct Mark {
    name: usize,
    answered: bool,
    error: bool,
}

/// One call as the Session line lists it.
struct CallRef<'a> {
    id: &'a str,
    name: &'a str,
    answered: bool,
    error: bool,
}

impl Calls {
    fn name(&mut self, name: &str) -> usize {
        match self.names.get_index_of(name) {
            Some(i) => i,
            None => self.names.insert_full(name.into()).0,
        }
    }

    /// A call made: noted afresh.
    fn made(&mut self, id: &str, name: &str) {
        let name = self.name(name);
        self.by_id.insert(id.into(), Mark { name, answered: false, error: false });
    }

    /// A call heard of (answered, refused): noted if it was not yet.
    fn heard(&mut self, id: &str, name: &str) -> &mut Mark {
        if !self.by_id.contains_key(id) {
            let name = self.name(name);
            self.by_id.insert(id.into(), Mark { name, answered: false, error: false });
        }
        &mut self.by_id[id]
    }

    /// The name of the last call, when it was left unanswered or answered as failed: the
    /// call a run that stopped for approval, naming none, stopped at.
    fn stopped_at(&self) -> Option<&str> {
        let (_, m) = self.by_id.last()?;
        (!m.answered || m.error).then(|| self.names.get_index(m.name).map_or("", |n| n))
    }

    fn iter(&self) -> impl Iterator<Item = CallRef<'_>> {
        self.by_id.iter().map(|(id, m)| CallRef {
            id,
            name: self.names.get_index(m.name).map_or("", |n| n),
            answered: m.answered,
            error: m.error,
        })
    }
}

fn emit(sink: &mut Sink<'_>, kind: &str, fields: Vec<(&str, Field<'_>)>, extra: Option<&Extra>) {
    let all = std::iter::once(("schema_version", Field::Owned(Value::from(SCHEMA_VERSION)))).chain(fields);
    build_line(Dialect::Loom.contract(), kind, all, extra).write(sink.out, Layout::Sorted);
}

fn owned(fields: Vec<(&str, Value)>) -> Vec<(&str, Field<'static>)> {
    fields.into_iter().map(|(k, v)| (k, Field::Owned(v))).collect()
}

/// [`emit`], with members whose values are JSON text already written.
fn emit_with_text(
    sink: &mut Sink<'_>,
    kind: &str,
    fields: Vec<(&str, Value)>,
    text: &[(&str, &str)],
    extra: Option<&Extra>,
) {
    let mut all = owned(fields);
    all.extend(text.iter().map(|&(k, t)| (k, Field::Json(t))));
    emit(sink, kind, all, extra);
}

/// Writes a Session line: its fields, and its tool calls as JSON text made straight from the
/// calls. A run's calls can be many; a tree per call would hold ten times their size.
fn emit_session<'c>(
    sink: &mut Sink<'_>,
    s: &Summary,
    calls: Option<impl Iterator<Item = CallRef<'c>>>,
    extra: Option<&Extra>,
) {
    let calls = calls.map(calls_json);
    let text: Vec<(&str, &str)> = calls.iter().map(|c| ("tool_calls", c.as_str())).collect();
    emit_with_text(sink, "Session", session_fields(s), &text, extra);
}

/// `tool_calls` as loom writes it: compact, each call's members sorted.
fn calls_json<'c>(calls: impl Iterator<Item = CallRef<'c>>) -> String {
    let mut out = vec![b'['];
    for (n, c) in calls.enumerate() {
        if n > 0 {
            out.push(b',');
        }
        out.extend_from_slice(if c.answered { b"{\"answered\":true" } else { b"{\"answered\":false" });
        out.extend_from_slice(b",\"call_id\":");
        write_str(&mut out, c.id, Layout::Sorted);
        out.extend_from_slice(if c.error { b",\"error\":true" } else { b",\"error\":false" });
        out.extend_from_slice(b",\"name\":");
        write_str(&mut out, c.name, Layout::Sorted);
        out.push(b'}');
    }
    out.push(b']');
    // Only UTF-8 went in.
    String::from_utf8(out).unwrap_or_default()
}

/// Pushes `key` when the value is known: loom writes no null and no made-up zero.
fn opt<T: Into<Value>>(fields: &mut Vec<(&'static str, Value)>, key: &'static str, v: Option<T>) {
    if let Some(v) = v {
        fields.push((key, v.into()));
    }
}

fn turn_number(id: &Option<String>) -> Option<Field<'_>> {
    let id = id.as_ref()?;
    Some(id.parse::<u64>().map_or(Field::Str(id), |n| Field::Owned(Value::from(n))))
}

/// The Session line's token fields.
fn token_fields(fields: &mut Vec<(&'static str, Value)>, t: &Tokens) {
    opt(fields, "input_tokens", t.input);
    opt(fields, "output_tokens", t.output);
    opt(fields, "cache_read_input_tokens", t.cache_read);
    opt(fields, "cache_creation_input_tokens", t.cache_write);
}

fn session_fields(s: &Summary) -> Vec<(&'static str, Value)> {
    let mut f = Vec::new();
    opt(&mut f, "source", s.source.clone());
    opt(&mut f, "adapter", s.adapter.clone());
    opt(&mut f, "model", s.model.clone());
    opt(&mut f, "models", s.models.clone());
    opt(&mut f, "turns", s.turns);
    opt(&mut f, "tokens_basis", s.tokens_basis.clone());
    token_fields(&mut f, &s.tokens);
    opt(&mut f, "cost_usd", s.cost_usd.clone());
    opt(&mut f, "duration_ms", s.duration_ms);
    opt(&mut f, "duration_api_ms", s.duration_api_ms);
    opt(&mut f, "first_timestamp_ms", s.first_timestamp_ms);
    opt(&mut f, "last_timestamp_ms", s.last_timestamp_ms);
    opt(&mut f, "is_error", s.is_error);
    opt(&mut f, "stop_reason", s.stop_reason.clone());
    opt(&mut f, "unk", s.unk);
    opt(&mut f, "transcript_digest", s.transcript_digest.clone());
    opt(&mut f, "projection_error", s.projection_error.clone());
    f
}

/// The largest integer a loom line holds (loom's integers are i64).
const LARGEST: u64 = i64::MAX as u64;

/// A Session summary as loom writes it: one that the line cannot hold as stated (a count past
/// the largest integer) has every summary field absent and says why in `projection_error`,
/// beside its `source` and `transcript_digest`, as loom's spec says.
fn projected(s: Summary) -> Summary {
    // The fields as they would be written (a model's figures are the session's here).
    let counts = session_fields(&s);
    match counts.iter().find_map(|(k, v)| v.as_u64().filter(|n| *n > LARGEST).map(|n| (*k, n))) {
        None => s,
        Some((field, n)) => Summary {
            projection_error: Some(format!("{field} {n} is past the largest integer the line holds, {LARGEST}")),
            source: s.source,
            transcript_digest: s.transcript_digest,
            ..Summary::default()
        },
    }
}

impl Encoder {
    /// The Session line for a run read from another dialect.
    fn foreign_session(&self, t: &Terminal, ctx: &Context) -> Summary {
        let totals = ctx.totals;
        let usage = Tokens {
            input: totals.input,
            output: totals.output,
            cache_read: totals.cache_read,
            cache_write: totals.cache_write,
            ..Tokens::default()
        };
        let models = ctx.model.as_ref().map(|name| {
            let mut m = Map::new();
            m.insert("name".into(), Value::String(name.clone()));
            for (k, v) in [
                ("input_tokens", usage.input),
                ("output_tokens", usage.output),
                ("cache_read_input_tokens", usage.cache_read),
                ("cache_creation_input_tokens", usage.cache_write),
            ] {
                if let Some(v) = v {
                    m.insert(k.into(), Value::from(v));
                }
            }
            Value::Array(vec![Value::Object(m)])
        });
        let rounds = self.run.round_ends.max(self.run.round_usages);
        let turns = if rounds > 0 { Some(rounds) } else { (self.run.turns > 0).then_some(self.run.turns) };
        Summary {
            // loom's `source` values form a closed list; a harness's own JSON event stream is
            // what agentgate reads, and `adapter` says which.
            source: Some("harness-json".into()),
            adapter: self.run.origin.or(ctx.source).map(|d| d.name().to_string()),
            model: ctx.model.clone(),
            models,
            turns,
            tokens_basis: (!usage.is_empty())
                .then(|| if self.run.per_request_usage { "sum-of-requests" } else { "session" }.into()),
            tokens: usage,
            is_error: Some(!matches!(t.outcome, Outcome::Completed | Outcome::PermissionDenied)),
            stop_reason: t.reason.clone(),
            // Written from `self.run.calls` by `emit_session`, without a copy.
            tool_calls: None,
            unk: Some(self.run.unknown),
            transcript_digest: (!ctx.input_digest.is_empty()).then(|| ctx.input_digest.clone()),
            ..Summary::default()
        }
    }

    /// `stop_reason`, `exit_status` and `error` for an outcome: loom has no stop reason for a
    /// timeout or an interrupt, which become a failed run whose error says which.
    fn terminal_fields(&self, t: &Terminal) -> Vec<(&'static str, Value)> {
        let c = self.contract;
        let mut f = Vec::new();
        let stop = match t.outcome {
            Outcome::Completed | Outcome::PermissionDenied => {
                c.outcome_str(t.outcome, "stop_reason").map(str::to_string)
            }
            Outcome::Incomplete => t.reason.clone().filter(|r| other_stop(r)),
            _ => None,
        };
        match stop {
            Some(stop) => {
                let code = if other_stop(&stop) { 3 } else { 0 };
                f.push(("exit_status", Value::from(code)));
                f.push(("stop_reason", Value::String(stop)));
            }
            None => {
                let word = c.outcome_str(t.outcome, "error");
                let why = match (&t.error, word, &t.reason) {
                    (Some(e), _, _) => e.clone(),
                    (None, Some(w), Some(r)) if w != r => format!("{w}: {r}"),
                    (None, Some(w), _) => w.to_string(),
                    (None, None, Some(r)) => r.clone(),
                    (None, None, None) => "the run failed".into(),
                };
                f.push(("exit_status", Value::from(1)));
                f.push(("error", Value::String(why)));
            }
        }
        f
    }
}

impl Encode for Encoder {
    fn uses_call_arguments(&self) -> bool {
        false
    }

    fn uses_call_output(&self) -> bool {
        false
    }

    fn needs_whole_digest(&self) -> bool {
        true
    }

    fn carries_summaries(&self) -> bool {
        true
    }

    fn encode(&mut self, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        let own = rec.origin == Dialect::Loom;
        let extra = own.then_some(&rec.extra);
        match &rec.event {
            Event::SessionSummary(s) => {
                let calls = s.tool_calls.as_ref().map(|calls| {
                    calls.iter().map(|c| CallRef { id: &c.id, name: &c.name, answered: c.answered, error: c.error })
                });
                emit_session(sink, s, calls, extra)
            }
            Event::Approval { actions } => {
                emit(sink, "Approval", vec![("actions", Field::Owned(Value::from(actions.clone())))], extra);
                self.approval_written = true;
            }
            Event::Terminal(t) => {
                if self.run.any {
                    let session = projected(self.foreign_session(t, ctx));
                    let calls = session.projection_error.is_none().then(|| self.run.calls.iter());
                    emit_session(sink, &session, calls, None);
                }
                if t.outcome == Outcome::PermissionDenied && !self.approval_written {
                    sink.report.synthesized("Approval");
                    let mut actions = self.run.denied.clone();
                    if actions.is_empty() {
                        actions.extend(self.run.calls.stopped_at().map(str::to_string));
                    }
                    emit(sink, "Approval", vec![("actions", Field::Owned(Value::from(actions)))], None);
                }
                emit(sink, "Terminal", owned(self.terminal_fields(t)), extra);
            }
            Event::Extension { line } if own => {
                write_line(sink.out, line, Layout::Sorted);
                return Fate::PassedThrough;
            }
            Event::Diagnostics { kind, data } if own && kind == "route" => {
                emit(sink, "Route", data.iter().map(|(k, v)| (k.as_str(), Field::Value(v))).collect(), extra);
            }
            Event::RoundEnd { id, stop } if own => {
                let mut f = Vec::with_capacity(2);
                if let Some(turn) = turn_number(id) {
                    f.push(("turn", turn));
                }
                if let Some(stop) = stop {
                    f.push(("turn_stop", Field::Str(stop)));
                }
                emit(sink, "Turn", f, extra);
            }
            Event::ToolCall(c) if own => {
                let arguments = match &c.arguments.text {
                    Some(t) => Field::Str(t),
                    None => Field::Owned(Value::String(c.arguments.to_text())),
                };
                let f = vec![
                    ("call_id", Field::Str(c.id.as_deref().unwrap_or_default())),
                    ("name", Field::Str(&c.name)),
                    ("arguments", arguments),
                ];
                emit(sink, "ToolCall", f, extra);
            }
            Event::Usage(u) if own => {
                let mut f = Vec::with_capacity(8);
                if let Some(turn) = turn_number(&u.of) {
                    f.push(("turn", turn));
                }
                if let Some(model) = &u.model {
                    f.push(("model", Field::Str(model)));
                }
                for (key, n) in [
                    ("input_tokens", u.tokens.input),
                    ("output_tokens", u.tokens.output),
                    ("cached_input_tokens", u.tokens.cache_read),
                    ("cache_creation_input_tokens", u.tokens.cache_write),
                    ("reasoning_output_tokens", u.tokens.reasoning),
                ] {
                    if let Some(n) = n {
                        f.push((key, Field::Owned(Value::from(n))));
                    }
                }
                f.push(("final_usage", Field::Owned(Value::Bool(u.final_))));
                emit(sink, "Usage", f, extra);
            }
            // A run from another dialect is gathered into its Session line.
            other => {
                let run = &mut self.run;
                run.any = true;
                run.origin.get_or_insert(rec.origin);
                match other {
                    Event::ToolCall(c) => run.calls.made(c.id.as_deref().unwrap_or_default(), &c.name),
                    Event::ToolResult(r) => {
                        let name = r.name.as_ref().or(ctx.call.name.as_ref()).map_or("", String::as_str);
                        let call = run.calls.heard(r.id.as_deref().unwrap_or_default(), name);
                        call.answered = true;
                        call.error = r.status != ToolStatus::Completed;
                    }
                    Event::PermissionDenied(d) => {
                        run.denied.push(d.name.clone());
                        run.calls.heard(d.id.as_deref().unwrap_or_default(), &d.name);
                    }
                    Event::RoundEnd { .. } => run.round_ends += 1,
                    Event::TurnEnd { .. } => run.turns += 1,
                    Event::Usage(u) => {
                        if u.scope == Scope::Round && u.basis == Basis::Delta && u.of.is_none() {
                            run.round_usages += 1;
                        }
                        if u.scope != Scope::Run {
                            run.per_request_usage = true;
                        }
                    }
                    Event::Extension { .. } => run.unknown += 1,
                    _ => {}
                }
                return Fate::Absorbed;
            }
        }
        Fate::Written
    }
}

//! Writing loom: lines with members sorted at every depth; per-turn `Usage` from the run's
//! ledger, a `Session` summary for a run from another dialect, `Terminal` last with the
//! `exit_status` its stop reason calls for.

use std::hash::Hasher;

use indexmap::IndexSet;
use serde_json::{Map, Value};

use super::{other_stop, SCHEMA_VERSION};
use crate::codec::Context;
use crate::codec::{Dialect, Encode, Record, Sink};
use crate::contract::Contract;
use crate::dialect::util::{build_line, last_wins, write_sorted};
use crate::json::{write_line, write_str, Field, Layout};
use crate::model::Extra;
use crate::model::{Basis, Event, Outcome, Scope, Summary, Terminal, Tokens, ToolStatus};
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
    /// An Approval read, with its extra members, waiting for the terminal record: loom writes
    /// it "just before the terminal record when the run stopped ApprovalRequired" (loom.md),
    /// so it goes out just before such a terminal, and nowhere else.
    approval: Option<(Vec<String>, Extra)>,
}

impl Encoder {
    pub fn new() -> Self {
        Encoder {
            contract: Dialect::Loom.contract(),
            run: Gathered::default(),
            approval_written: false,
            approval: None,
        }
    }

    /// Before terminal `t`: the Approval held for it where the run stopped ApprovalRequired
    /// (one made from the refused calls where none was read); else the one held is dropped,
    /// and said (a cut stream that ended after its Approval did not stop for approval).
    fn before_terminal(&mut self, t: &Terminal, sink: &mut Sink<'_>) {
        let held = self.approval.take();
        if t.outcome != Outcome::PermissionDenied {
            if held.is_some() {
                sink.report.dropped_kind("approval (the run did not stop ApprovalRequired)");
            }
            return;
        }
        if self.approval_written {
            return;
        }
        let (actions, extra) = match held {
            Some((actions, extra)) => (actions, extra),
            None => {
                sink.report.synthesized("Approval");
                let mut actions = self.run.denied.clone();
                if actions.is_empty() {
                    actions.extend(self.run.calls.stopped_at().map(str::to_string));
                }
                (actions, Extra::new())
            }
        };
        let extra = Some(&extra).filter(|e| !e.is_empty());
        emit(sink, "Approval", vec![("actions", Field::Owned(Value::from(actions)))], extra);
        self.approval_written = true;
    }
}

impl Default for Encoder {
    fn default() -> Self {
        Self::new()
    }
}

/// A run's tool calls in order, held compactly for the Session line: the ids end to end in one
/// string, each call 8 bytes beside its id, found by id through a table of positions, names
/// interned. A run may make a great many calls, of few tools, and the list is held to the end:
/// a map of owned ids held about twice what this does.
#[derive(Default)]
struct Calls {
    /// Every call's id, end to end, in the order of `list`.
    ids: String,
    list: Vec<Mark>,
    /// Positions in `list` plus one (0: an empty slot), by a hash of the id: open addressing,
    /// the next slot on a collision. Never more than three quarters full.
    table: Vec<u32>,
    names: IndexSet<Box<str>>,
}

#[derive(Clone, Copy)]
struct Mark {
    /// Where the call's id ends in `Calls::ids` (it starts where the one before ends).
    end: u32,
    /// The name's index in `Calls::names`, with [`ANSWERED`] and [`FAILED`] in its top bits: 8
    /// bytes a call rather than 12 (with two flags of their own): see docs/performance.md on
    /// memory.
    name: u32,
}

const ANSWERED: u32 = 1 << 31;
const FAILED: u32 = 1 << 30;
/// The largest name index a mark holds; a run never names a billion tools.
const NAME: u32 = FAILED - 1;

impl Mark {
    fn answered(self) -> bool {
        self.name & ANSWERED != 0
    }

    fn error(self) -> bool {
        self.name & FAILED != 0
    }

    fn answer(&mut self, error: bool) {
        self.name = self.name & NAME | ANSWERED | if error { FAILED } else { 0 };
    }
}

/// One call as the Session line lists it.
struct CallRef<'a> {
    id: &'a str,
    name: &'a str,
    answered: bool,
    error: bool,
    /// Members of a loom source's entry beyond these four, written back.
    extra: Option<&'a serde_json::Map<String, Value>>,
}

/// Where a call's id is looked for first in [`Calls::table`] of `len` slots (a power of two):
/// the contracts' FNV-1a, which is enough for ids an agent made.
fn slot_of(id: &str, len: usize) -> usize {
    let mut fnv = crate::contract::Fnv::default();
    fnv.write(id.as_bytes());
    let hash = fnv.finish();
    // The high bits mix best; the table is never larger than a usize can count.
    (hash >> 32 ^ hash) as usize & (len - 1)
}

impl Calls {
    fn name(&mut self, name: &str) -> u32 {
        let i = match self.names.get_index_of(name) {
            Some(i) => i,
            None => self.names.insert_full(name.into()).0,
        };
        u32::try_from(i).unwrap_or(NAME).min(NAME)
    }

    fn id(&self, i: usize) -> &str {
        let start = i.checked_sub(1).map_or(0, |before| self.list[before].end);
        &self.ids[start as usize..self.list[i].end as usize]
    }

    /// The slot of `table` that holds the last call made under `id`, and that call's position
    /// in `list`; or the empty slot where it would go.
    fn find(&self, id: &str) -> (usize, Option<usize>) {
        let mut slot = slot_of(id, self.table.len());
        loop {
            match self.table[slot] {
                0 => return (slot, None),
                at if self.id(at as usize - 1) == id => return (slot, Some(at as usize - 1)),
                _ => slot = (slot + 1) & (self.table.len() - 1),
            }
        }
    }

    /// The last call made under this id, when `again` is false and there is one; otherwise a
    /// call added at the end (named `name`), which the id then finds. `None` only past four
    /// billion calls or 4 GiB of ids, which the table cannot count (far past any run).
    fn entry(&mut self, id: &str, name: u32, again: bool) -> Option<&mut Mark> {
        if (self.list.len() + 1) * 4 > self.table.len() * 3 {
            self.grow();
        }
        let at = match self.find(id) {
            (_, Some(at)) if !again => at,
            (slot, _) => {
                let end = u32::try_from(self.ids.len() + id.len()).ok()?;
                self.table[slot] = u32::try_from(self.list.len() + 1).ok()?;
                self.ids.push_str(id);
                self.list.push(Mark { end, name });
                self.list.len() - 1
            }
        };
        Some(&mut self.list[at])
    }

    /// Twice the slots (sixteen at first), every call placed again.
    fn grow(&mut self) {
        let len = (self.table.len() * 2).max(16);
        // The old table let go first, so that the two are never held at once.
        self.table = Vec::new();
        self.table = vec![0; len];
        for i in 0..self.list.len() {
            // In order, so that an id made again finds its last call.
            let (slot, _) = self.find(self.id(i));
            // `entry` adds no call past the largest u32.
            self.table[slot] = (i + 1) as u32;
        }
    }

    /// A call made: listed at the end, also when its id was used before (loom's own ids start
    /// again each turn: `call-1` in turn 1 and turn 2 are two calls, and the Session line lists
    /// one entry per call); `None` where it cannot be.
    fn made(&mut self, id: &str, name: &str) -> Option<()> {
        let name = self.name(name);
        self.entry(id, name, true).map(|_| ())
    }

    /// A call heard of (answered, refused): the last call made under its id, listed if there
    /// was none.
    fn heard(&mut self, id: &str, name: &str) -> Option<&mut Mark> {
        let name = self.name(name);
        self.entry(id, name, false)
    }

    fn name_of(&self, m: &Mark) -> &str {
        self.names.get_index((m.name & NAME) as usize).map_or("", |n| n)
    }

    /// The name of the last call, when it was left unanswered or answered as failed: the
    /// call a run that stopped for approval, naming none, stopped at.
    fn stopped_at(&self) -> Option<&str> {
        let m = self.list.last()?;
        (!m.answered() || m.error()).then(|| self.name_of(m))
    }

    fn iter(&self) -> impl Iterator<Item = CallRef<'_>> {
        self.list.iter().enumerate().map(|(i, m)| CallRef {
            id: self.id(i),
            name: self.name_of(m),
            answered: m.answered(),
            error: m.error(),
            extra: None,
        })
    }
}

fn emit(sink: &mut Sink<'_>, kind: &str, fields: Vec<(&str, Field<'_>)>, extra: Option<&Extra>) {
    let all = std::iter::once(("schema_version", Field::Owned(Value::from(SCHEMA_VERSION)))).chain(fields);
    build_line(Dialect::Loom.contract(), kind, all, extra, sink.report).write(sink.out, Layout::Sorted);
}

/// Writes a line of one of the kinds most loom lines are, read from loom (`Turn`, `ToolCall`,
/// `Usage`), byte for byte as [`emit`] would, through [`write_sorted`]: `fields` come sorted by
/// key, with `kind` and `schema_version` among them. These are most of a loom stream's lines,
/// and writing them through a member list to sort was most of translating loom to loom.
fn emit_sorted(sink: &mut Sink<'_>, kind: &str, fields: &[(&str, Field<'_>)], extra: Option<&Extra>) {
    write_sorted(sink.out, Dialect::Loom.contract(), kind, &[fields], extra, Layout::Sorted, sink.report);
}

/// The fields of `f` that are there, in order, and how many: on the stack, for [`emit_sorted`].
fn present<'a, const N: usize>(f: [Option<(&'a str, Field<'a>)>; N]) -> ([(&'a str, Field<'a>); N], usize) {
    let mut out: [(&str, Field<'_>); N] = std::array::from_fn(|_| ("", Field::Json("")));
    let mut n = 0;
    for field in f.into_iter().flatten() {
        out[n] = field;
        n += 1;
    }
    (out, n)
}

/// `schema_version`'s value, as [`emit_sorted`]'s fields give it.
const VERSION: Field<'static> = Field::Json("1");

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

/// Writes a Session line: its fields, and its tool calls written straight from the calls, in
/// parts (the line is written out a block at a time, [`Sink::spill`]). A run's calls can be
/// many, and the list is the one member of a loom line whose length grows with the run.
fn emit_session<'c>(
    sink: &mut Sink<'_>,
    s: &Summary,
    calls: Option<impl Iterator<Item = CallRef<'c>>>,
    extra: Option<&Extra>,
) {
    let Some(calls) = calls else {
        return emit_with_text(sink, "Session", session_fields(s), &[], extra);
    };
    // The line with a hole where the list goes, then the list poured into it. The hole is a
    // byte the writer never writes raw (control characters are escaped in strings and stand
    // nowhere else), so it is the list's place; an extra member that takes the list's place
    // (the source's own list, accepted by the contract) leaves no hole, and the line is whole.
    let mut line = Vec::new();
    emit_with_text(
        &mut Sink::new(&mut line, sink.report),
        "Session",
        session_fields(s),
        &[("tool_calls", HOLE)],
        extra,
    );
    let Some(at) = line.iter().position(|&b| b == HOLE.as_bytes()[0]) else {
        sink.out.extend_from_slice(&line);
        return;
    };
    sink.out.extend_from_slice(&line[..at]);
    write_calls(sink, calls);
    sink.out.extend_from_slice(&line[at + 1..]);
}

/// Where [`emit_session`] writes the calls.
const HOLE: &str = "\u{1}";

/// `tool_calls` as loom writes it: compact, each call's members sorted.
fn write_calls<'c>(sink: &mut Sink<'_>, calls: impl Iterator<Item = CallRef<'c>>) {
    sink.out.push(b'[');
    for (n, c) in calls.enumerate() {
        let out = &mut *sink.out;
        if n > 0 {
            out.push(b',');
        }
        if let Some(extra) = c.extra {
            // An entry with members of its own: all of them, sorted, as loom writes a map.
            let mut entry = extra.clone();
            entry.insert("answered".into(), Value::Bool(c.answered));
            entry.insert("call_id".into(), Value::String(c.id.to_string()));
            entry.insert("error".into(), Value::Bool(c.error));
            entry.insert("name".into(), Value::String(c.name.to_string()));
            crate::json::write_value(out, &Value::Object(entry), Layout::Sorted);
            sink.spill();
            continue;
        }
        out.extend_from_slice(if c.answered { b"{\"answered\":true" } else { b"{\"answered\":false" });
        out.extend_from_slice(b",\"call_id\":");
        write_str(out, c.id, Layout::Sorted);
        out.extend_from_slice(if c.error { b",\"error\":true" } else { b",\"error\":false" });
        out.extend_from_slice(b",\"name\":");
        write_str(out, c.name, Layout::Sorted);
        out.push(b'}');
        sink.spill();
    }
    sink.out.push(b']');
}

/// Pushes `key` when the value is known: loom writes no null and no made-up zero.
fn opt<T: Into<Value>>(fields: &mut Vec<(&'static str, Value)>, key: &'static str, v: Option<T>) {
    if let Some(v) = v {
        fields.push((key, v.into()));
    }
}

fn turn_number(id: &Option<crate::model::Name>) -> Option<Field<'_>> {
    let id = id.as_ref()?;
    Some(id.parse::<u64>().map_or(Field::Str(id), Field::Int))
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
    // A word loom does not list (from a source that made one up) is left out: the field is
    // optional, its listed values a contract (loom.md, Stability).
    let listed = |field: &str, v: &Option<String>| {
        let values = Dialect::Loom.contract().listed_values("Session", field);
        v.clone().filter(|v| values.is_none_or(|l| l.iter().any(|x| x.as_str() == Some(v.as_str()))))
    };
    opt(&mut f, "source", listed("source", &s.source));
    opt(&mut f, "adapter", s.adapter.clone());
    opt(&mut f, "model", s.model.clone());
    opt(&mut f, "models", s.models.clone());
    opt(&mut f, "turns", s.turns);
    opt(&mut f, "tokens_basis", listed("tokens_basis", &s.tokens_basis));
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
            // "The session's total cost in US dollars, the vendor's figure passed through".
            cost_usd: t.cost_usd.and_then(serde_json::Number::from_f64),
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
    /// For the `transcript_digest` of the Session line a run from another dialect becomes. A
    /// loom run's own records are written as they are (its Session line with them), and every
    /// record of it, the normalizer's included, has loom's origin: it needs none.
    fn needs_whole_digest(&self, ctx: &Context) -> bool {
        ctx.source != Some(Dialect::Loom)
    }

    fn hints(&self) -> crate::codec::Hints {
        crate::codec::Hints {
            carries_summaries: true,
            call_arguments: false,
            call_output: false,
            ..crate::codec::Hints::default()
        }
    }

    /// A loom run's own records are written as they come, with nothing kept between them but
    /// whether an Approval line is out (a foreign run's are gathered, and never copied).
    fn observe(&mut self, rec: &Record, ctx: &Context, line: &str, sink: &mut Sink<'_>) {
        let _ = line;
        match &rec.event {
            Event::Approval { .. } if ctx.native => self.approval_written = true,
            // The exit status a terminal states; a foreign run's records are gathered. The
            // Approval held for it goes out before the terminal's line.
            Event::Terminal(t) => {
                self.before_terminal(t, sink);
                self.observe_by_encoding(rec, ctx, sink)
            }
            _ if !ctx.native => self.observe_by_encoding(rec, ctx, sink),
            _ => {}
        }
    }

    fn encode(&mut self, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        // A loom run's records are written as loom's lines; another dialect's are gathered into
        // the Session line a foreign run becomes.
        let own = ctx.native;
        let extra = Some(&rec.extra).filter(|e| !e.is_empty());
        match &rec.event {
            Event::SessionSummary(s) => {
                let calls = s.tool_calls.as_ref().map(|calls| {
                    calls.iter().map(|c| CallRef {
                        id: &c.id,
                        name: &c.name,
                        answered: c.answered,
                        error: c.error,
                        extra: Some(&c.extra).filter(|e| !e.is_empty()),
                    })
                });
                emit_session(sink, s, calls, extra)
            }
            Event::Approval { actions } => {
                // Held for the terminal record (see `before_terminal`); a later one stands.
                self.approval = Some((actions.clone(), rec.extra.clone()));
                return Fate::Absorbed;
            }
            Event::Terminal(t) => {
                if self.run.any {
                    let session = projected(self.foreign_session(t, ctx));
                    let calls = session.projection_error.is_none().then(|| self.run.calls.iter());
                    emit_session(sink, &session, calls, None);
                }
                self.before_terminal(t, sink);
                let fields = self.terminal_fields(t);
                sink.report.exit_status =
                    fields.iter().find(|(k, _)| *k == "exit_status").and_then(|(_, v)| v.as_i64());
                emit(sink, "Terminal", owned(fields), extra);
            }
            Event::Extension { line } if own => {
                write_line(sink.out, line, Layout::Sorted);
                return Fate::PassedThrough;
            }
            Event::Diagnostics { kind, data } if own && kind == "route" => {
                let data = data.iter().map(|(k, v)| (k.as_str(), Field::Value(v)));
                emit(sink, "Route", last_wins(&["kind", "schema_version"], data), extra);
            }
            // The kinds most loom lines are, each one's fields in key order.
            Event::RoundEnd { id, stop } if own => {
                let f = [
                    Some(("kind", Field::Str("Turn"))),
                    Some(("schema_version", VERSION)),
                    turn_number(id).map(|turn| ("turn", turn)),
                    stop.as_deref().map(|stop| ("turn_stop", Field::Str(stop))),
                ];
                let (f, n) = present(f);
                emit_sorted(sink, "Turn", &f[..n], extra);
            }
            Event::ToolCall(c) if own => {
                let arguments = match &c.arguments.text {
                    Some(t) => Field::Str(t),
                    None => Field::Owned(Value::String(c.arguments.to_text())),
                };
                let f = [
                    ("arguments", arguments),
                    ("call_id", Field::Str(c.id.as_deref().unwrap_or_default())),
                    ("kind", Field::Str("ToolCall")),
                    ("name", Field::Str(&c.name)),
                    ("schema_version", VERSION),
                ];
                emit_sorted(sink, "ToolCall", &f, extra);
            }
            Event::Usage(u) if own => {
                let t = &u.tokens;
                let count = |key, n: Option<u64>| n.map(|n| (key, Field::Int(n)));
                let f = [
                    count("cache_creation_input_tokens", t.cache_write),
                    count("cached_input_tokens", t.cache_read),
                    Some(("final_usage", Field::Json(if u.final_ { "true" } else { "false" }))),
                    count("input_tokens", t.input),
                    Some(("kind", Field::Str("Usage"))),
                    u.model.as_deref().map(|model| ("model", Field::Str(model))),
                    count("output_tokens", t.output),
                    count("reasoning_output_tokens", t.reasoning),
                    Some(("schema_version", VERSION)),
                    turn_number(&u.of).map(|turn| ("turn", turn)),
                ];
                let (f, n) = present(f);
                emit_sorted(sink, "Usage", &f[..n], extra);
            }
            // A run from another dialect is gathered into its Session line.
            other => {
                let run = &mut self.run;
                run.any = true;
                run.origin.get_or_insert(rec.origin);
                let listed = match other {
                    Event::ToolCall(c) => run.calls.made(c.id.as_deref().unwrap_or_default(), &c.name),
                    Event::ToolResult(r) => {
                        let name = r.name.as_deref().or(ctx.call.name.as_deref()).unwrap_or("");
                        let error = r.status != ToolStatus::Completed;
                        run.calls.heard(r.id.as_deref().unwrap_or_default(), name).map(|call| call.answer(error))
                    }
                    Event::PermissionDenied(d) => {
                        run.denied.push(d.name.clone());
                        run.calls.heard(d.id.as_deref().unwrap_or_default(), &d.name).map(|_| ())
                    }
                    _ => Some(()),
                };
                if listed.is_none() {
                    sink.report.truncated("Session.tool_calls");
                }
                match other {
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::json::object::Object;
    use crate::report::Report;

    #[test]
    fn only_a_run_from_another_dialect_needs_the_whole_inputs_digest() {
        let encoder = Encoder::new();
        for (source, needs) in
            [(Some(Dialect::Loom), false), (Some(Dialect::Canonical), true), (Some(Dialect::Adal), true), (None, true)]
        {
            let ctx = Context { source, ..Context::default() };
            assert_eq!(encoder.needs_whole_digest(&ctx), needs, "{source:?}");
        }
    }

    /// The line [`emit`] writes and the one [`emit_sorted`] writes, for the same fields (given
    /// unsorted to the one, sorted with `kind` and `schema_version` to the other).
    fn both(kind: &str, fields: Vec<(&'static str, Field<'_>)>, extra: &Extra) -> (String, String) {
        let mut report = Report::default();
        let (mut slow, mut fast) = (Vec::new(), Vec::new());
        emit(&mut Sink::new(&mut slow, &mut report), kind, fields.clone(), Some(extra));
        let mut sorted = fields;
        sorted.push(("kind", Field::Str(kind)));
        sorted.push(("schema_version", VERSION));
        sorted.sort_by(|a, b| a.0.cmp(b.0));
        emit_sorted(&mut Sink::new(&mut fast, &mut report), kind, &sorted, Some(extra));
        (String::from_utf8(slow).unwrap(), String::from_utf8(fast).unwrap())
    }

    /// Members a source line may carry beside its kind's fields: fields of the kinds (some of
    /// the wrong type, which the contract refuses), the two every line has, keys that sort
    /// anywhere or need escapes, values that are written as read or through a tree.
    fn extra_members() -> impl Strategy<Value = String> {
        let keys = prop::sample::select(vec![
            "turn",
            "turn_stop",
            "model",
            "phase",
            "kind",
            "schema_version",
            "arguments",
            "call_id",
            "name",
            "input_tokens",
            "cached_input_tokens",
            "final_usage",
            "a",
            "zz",
            "k\\\"ey",
            "\\u00e9",
            "Turn",
            "",
        ]);
        let values = prop::sample::select(vec![
            "1",
            "-1",
            "7",
            "\"x\"",
            "null",
            "true",
            "{\"b\":1,\"a\":[2,1]}",
            "[3,1]",
            "1.5",
            "\"\\u003c/\"",
            "\"ToolCalls\"",
            "12345678901234567890",
        ]);
        prop::collection::vec((keys, values), 0..6).prop_map(|members| {
            let inside: Vec<String> = members.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
            format!("{{{}}}", inside.join(","))
        })
    }

    proptest! {
        #[test]
        fn the_sorted_writer_writes_what_the_generic_one_does(
            json in extra_members(),
            turn in prop::option::of(prop::sample::select(vec!["3", "x7"])),
            text in prop::option::of(prop::sample::select(vec!["EndTurn", "a\"b<", ""])),
            count in prop::option::of(0u64..u64::MAX),
        ) {
            let extra = Object::parse(&json).unwrap().unwrap().into_extra();
            let turn = turn.map(crate::model::Name::from);
            let turn = || turn_number(&turn);
            let text_or = |d: &'static str| Field::Str(text.unwrap_or(d));
            let cases: Vec<(&str, Vec<(&'static str, Field<'_>)>)> = vec![
                ("Turn", [turn().map(|t| ("turn", t)), text.map(|s| ("turn_stop", Field::Str(s)))].into_iter().flatten().collect()),
                ("ToolCall", vec![("call_id", text_or("c1")), ("name", text_or("n")), ("arguments", text_or("{}"))]),
                ("Usage", [
                    turn().map(|t| ("turn", t)),
                    text.map(|m| ("model", Field::Str(m))),
                    count.map(|n| ("input_tokens", Field::Owned(Value::from(n)))),
                    count.map(|n| ("cached_input_tokens", Field::Owned(Value::from(n / 2)))),
                    Some(("final_usage", Field::Json("false"))),
                ].into_iter().flatten().collect()),
            ];
            for (kind, fields) in cases {
                let (slow, fast) = both(kind, fields, &extra);
                prop_assert_eq!(&fast, &slow, "{} with extra members {}", kind, json);
            }
        }

        /// The compact call list keeps what a list of the calls would: each call made at the
        /// end (also one whose id was made before), a call heard of found as the last made
        /// under its id, or added if there is none (ids from a small pool, so that they meet,
        /// and enough of them that the table grows several times).
        #[test]
        fn the_call_list_keeps_what_a_list_of_the_calls_would(
            ops in prop::collection::vec((0u8..3, 0usize..300, 0usize..4, any::<bool>()), 0..600),
        ) {
            let names = ["bash", "read_file", "", "é\"x"];
            let mut calls = Calls::default();
            let mut model: Vec<(String, &str, bool, bool)> = Vec::new();
            for (op, id, name, error) in ops {
                let id = if id == 0 { String::new() } else { format!("call-{id}") };
                let name = names[name];
                if op == 0 {
                    calls.made(&id, name).unwrap();
                    model.push((id, name, false, false));
                    continue;
                }
                let m = calls.heard(&id, name).unwrap();
                let at = match model.iter().rposition(|c| c.0 == id) {
                    Some(at) => at,
                    None => {
                        model.push((id, name, false, false));
                        model.len() - 1
                    }
                };
                if op == 1 {
                    m.answer(error);
                    (model[at].2, model[at].3) = (true, error);
                }
            }
            let listed: Vec<(String, String, bool, bool)> =
                calls.iter().map(|c| (c.id.to_string(), c.name.to_string(), c.answered, c.error)).collect();
            let expected: Vec<(String, String, bool, bool)> =
                model.iter().map(|m| (m.0.clone(), m.1.to_string(), m.2, m.3)).collect();
            prop_assert_eq!(listed, expected);
            let last = model.last().filter(|m| !m.2 || m.3).map(|m| m.1);
            prop_assert_eq!(calls.stopped_at(), last);
        }
    }
}

//! Writing wuu: Go's layout (keys sorted, `<>&` escaped), the thread's and turn's ids on
//! progress events, cumulative usage per turn, a bash call's `command_*` twins, `result` last.

use std::borrow::Cow;

use indexmap::IndexMap;
use serde_json::Value;

use super::{ids, Ids};
use crate::codec::make_room;
use crate::codec::Context;
use crate::codec::{Dialect, Encode, Record, Sink};
use crate::contract::Contract;
use crate::dialect::util::{build_line, last_wins, refusal, write_sorted};
use crate::json::{write_line, Field, Layout, Text};

/// `session_configured.protocol_version` as wuu writes it (its docs and runner tests), for a
/// session agentgate writes for a foreign source.
const PROTOCOL_VERSION: &str = "wuu-app-server/v0.1";
use crate::model::Extra;
use crate::model::{Arguments, Denial, Event, Outcome, Phase, Session, Tokens, ToolStatus};
use crate::report::Fate;

pub struct Encoder {
    contract: &'static Contract,
    /// The record is a wuu source's: its `command_*` twins are lines of their own (copied, or
    /// the source had none), and none are made.
    own_twins: bool,
    configured: bool,
    thread_id: Option<String>,
    /// The open turn.
    turn_id: Option<String>,
    last_turn_id: Option<String>,
    turns: u64,
    /// Text streamed from another dialect since the last `agent_message_final`: wuu ends a
    /// message with one, so it is written before the next event that is not text.
    message: String,
    unfinished_message: bool,
    /// Why the turn failed, for its `turn_failed` and the result.
    pending_error: Option<String>,
    /// Items whose output went out as deltas, and how many bytes of it, where known (pieces
    /// kept escaped are not decoded to count them).
    streamed: IndexMap<String, Option<usize>>,
    /// Items of calls to bash, which wuu reports as `command_*` events too, with what each
    /// command event adds.
    bash: IndexMap<String, Command>,
    /// The run is read from wuu (its first record came from a wuu line, also through the
    /// canonical stream): session lines it lacks are not made up.
    from_wuu: Option<bool>,
}

/// What every `command_*` event of a call to bash adds to its `tool_*` twin's members (wuu.md:
/// "Command events add name, command, and arguments when available"; wuu-notes.md: `command`
/// and `process_id` when the arguments hold them). `command_removed` adds the name alone, as
/// wuu's writer does (`emitItemRemoved`). Empty for a call whose twins the source wrote.
#[derive(Default)]
struct Command {
    arguments: Option<String>,
    command: Option<Value>,
    process_id: Option<Value>,
}

impl Encoder {
    pub fn new() -> Self {
        Encoder {
            contract: Dialect::Wuu.contract(),
            own_twins: false,
            configured: false,
            thread_id: None,
            turn_id: None,
            last_turn_id: None,
            turns: 0,
            message: String::new(),
            unfinished_message: false,
            pending_error: None,
            streamed: IndexMap::new(),
            bash: IndexMap::new(),
            from_wuu: None,
        }
    }
}

impl Default for Encoder {
    fn default() -> Self {
        Self::new()
    }
}

/// A step of a tool call: its `tool_*` kind, and its `command_*` twin's for bash.
type Step = (&'static str, &'static str);
const OUTPUT_DELTA: Step = ("tool_output_delta", "command_output_delta");
const COMPLETED: Step = ("tool_completed", "command_completed");
const REMOVED: Step = ("tool_removed", "command_removed");

fn s(x: impl Into<String>) -> Field<'static> {
    Field::Owned(Value::String(x.into()))
}

fn v(x: impl Into<Value>) -> Field<'static> {
    Field::Owned(x.into())
}

/// Arguments as the JSON text wuu writes: the source's text when it was JSON already (given as
/// JSON text, or plain text that holds JSON, as adal and base-context read it too), the compact
/// form of a value, and text that is not JSON as a JSON string, so that it parses — unless wuu
/// itself wrote that text (`own`): then it goes back as it came. No arguments, or empty text
/// (localcode's `args` for a call without any), are `{}`, as adal and base-context write them.
fn json_text(a: &Arguments, own: bool) -> Cow<'_, str> {
    if let Some(json) = a.json() {
        return json;
    }
    match &a.text {
        Some(t) if own => Cow::Borrowed(t),
        Some(t) if t.is_empty() => Cow::Borrowed("{}"),
        Some(t) if serde_json::from_str::<serde::de::IgnoredAny>(t).is_ok() => Cow::Borrowed(t),
        Some(t) => {
            let mut out = Vec::with_capacity(t.len() + 2);
            crate::json::write_str(&mut out, t, Layout::Compact);
            Cow::Owned(String::from_utf8(out).unwrap_or_default())
        }
        None => Cow::Borrowed("{}"),
    }
}

impl Encoder {
    fn emit<'a>(
        &'a self,
        sink: &mut Sink<'_>,
        kind: &'a str,
        fields: impl IntoIterator<Item = (&'a str, Field<'a>)>,
        extra: Option<&'a Extra>,
    ) {
        build_line(self.contract, kind, self.id_fields(kind).chain(fields), extra, sink.report)
            .write(sink.out, Layout::Go);
    }

    /// [`Encoder::emit`] for a record that carries members of its own (`data`): they may name a
    /// field written anyway, the ids included; the fields given last stand.
    fn emit_with<'a>(
        &'a self,
        sink: &mut Sink<'_>,
        kind: &'a str,
        data: &'a crate::model::Fields,
        fields: impl IntoIterator<Item = (&'a str, Field<'a>)>,
        extra: Option<&'a Extra>,
    ) {
        // A member of the record's data that wuu's reader refuses where it stands (a
        // file_changed thread_id that is an object) is left out, counted; a required one gets
        // the emptiest value of its type, said.
        let spec = self.contract.kinds.get(kind);
        let may = self.contract.fields_of(kind);
        let mut refused: Vec<(&str, Value)> = Vec::new();
        let data: Vec<_> = data
            .iter()
            .filter(|(k, v)| {
                let ok = may.accepts_value(k, v);
                if !ok {
                    let required = spec.and_then(|s| s.fields.get(k.as_str())).filter(|f| f.required);
                    refused.push((k.as_str(), required.map_or(Value::Null, |f| f.ty.placeholder())));
                }
                ok
            })
            .map(|(k, v)| (k.as_str(), Field::Value(v)))
            .collect();
        let fields: Vec<_> = fields.into_iter().collect();
        for (k, placeholder) in &refused {
            sink.report.dropped_field(kind, k);
            if !placeholder.is_null() && !fields.iter().any(|(f, _)| f == k) {
                sink.report.synthesized(&format!("{kind}.{k}"));
            }
        }
        let placeholders: Vec<_> = refused
            .into_iter()
            .filter(|(k, p)| !p.is_null() && !fields.iter().any(|(f, _)| f == k))
            .map(|(k, p)| (k, Field::Owned(p)))
            .collect();
        let all = last_wins(
            &[self.contract.type_field.as_str()],
            self.id_fields(kind).chain(data).chain(placeholders).chain(fields),
        );
        build_line(self.contract, kind, all, extra, sink.report).write(sink.out, Layout::Go);
    }

    /// The thread's id and the turn's, as lines carry them (in key order).
    fn ids(&self) -> [(&str, Field<'_>); 2] {
        let turn = self.turn_id.as_deref().or(self.last_turn_id.as_deref()).unwrap_or("");
        [("thread_id", Field::Str(self.thread_id.as_deref().unwrap_or(""))), ("turn_id", Field::Str(turn))]
    }

    /// The ids a line of `kind` carries: the thread's, and the turn's.
    fn id_fields<'a>(&'a self, kind: &str) -> impl Iterator<Item = (&'a str, Field<'a>)> {
        let n = match ids(kind) {
            Ids::None => 0,
            Ids::Thread => 1,
            Ids::Turn => 2,
        };
        self.ids().into_iter().take(n)
    }

    /// `session_configured` comes first; made from what the run says of its session where the
    /// source has no such line.
    fn ensure_configured(&mut self, session: Option<&Session>, ctx: &Context, sink: &mut Sink<'_>) {
        if self.configured {
            return;
        }
        self.configured = true;
        if self.from_wuu == Some(true) {
            // A wuu stream that has none had none (setup can fail before any session existed,
            // wuu.md): nothing is made up for it.
            return;
        }
        sink.report.synthesized("session_configured");
        // Every member the spec lists for it (wuu.md: protocol_version, provider, model,
        // max_parallel, workspace_root, permissions), and the notes' effort and variant:
        // what the source says, else stated placeholders (mappings/wuu.json).
        let fields = vec![
            ("effort", s("")),
            ("max_parallel", v(1)),
            ("model", s(session.and_then(|x| x.model.clone()).or_else(|| ctx.model.clone()).unwrap_or_default())),
            ("permissions", v(Value::Object(serde_json::Map::new()))),
            // The form wuu's own docs and runner tests write (../shared/real/wuu/).
            ("protocol_version", s(PROTOCOL_VERSION)),
            ("provider", s(session.and_then(|x| x.provider.clone()).unwrap_or_default())),
            ("variant", s("")),
            ("workspace_root", s(session.and_then(|x| x.cwd.clone()).unwrap_or_default())),
        ];
        self.emit(sink, "session_configured", fields, None);
    }

    /// Then `thread_started`, with the source's session id as the thread id, or one derived
    /// from the input.
    fn ensure_session(&mut self, session: Option<&Session>, ctx: &Context, sink: &mut Sink<'_>) {
        self.ensure_configured(session, ctx, sink);
        if self.thread_id.is_some() {
            return;
        }
        if self.from_wuu == Some(true) {
            // Likewise no thread: its ids are the empty ones the source wrote.
            self.thread_id = Some(String::new());
            return;
        }
        let id = session
            .and_then(|x| x.id.clone())
            .or_else(|| ctx.session_id.clone())
            .unwrap_or_else(|| format!("thread-{}", ctx.input_digest.get(..16).unwrap_or("0000000000000000")));
        self.thread_id = Some(id);
        sink.report.synthesized("thread_started");
        let fields = vec![
            ("model", s(session.and_then(|x| x.model.clone()).or_else(|| ctx.model.clone()).unwrap_or_default())),
            ("provider", s(session.and_then(|x| x.provider.clone()).unwrap_or_default())),
            ("cwd", s(session.and_then(|x| x.cwd.clone()).unwrap_or_default())),
        ];
        self.emit(sink, "thread_started", fields, None);
    }

    /// Events of a turn need one open.
    fn ensure_turn(&mut self, ctx: &Context, sink: &mut Sink<'_>) {
        self.ensure_session(None, ctx, sink);
        if self.turn_id.is_none() {
            self.turns += 1;
            self.turn_id = Some(format!("turn-{}", self.turns));
            sink.report.synthesized("turn_started");
            self.emit(sink, "turn_started", vec![], None);
        }
    }

    /// [`Encoder::ensure_session`]'s state for a wuu run, nothing written ([`Encode::observe`]).
    fn note_session(&mut self) {
        self.configured = true;
        self.thread_id.get_or_insert_with(String::new);
    }

    /// [`Encoder::ensure_turn`]'s state for a wuu run: the turn it would have opened, unwritten.
    fn note_turn(&mut self) {
        self.note_session();
        if self.turn_id.is_none() {
            self.turns += 1;
            self.turn_id = Some(format!("turn-{}", self.turns));
        }
    }

    fn finish_message(&mut self, sink: &mut Sink<'_>) {
        if std::mem::take(&mut self.unfinished_message) {
            sink.report.synthesized("agent_message_final");
            let message = std::mem::take(&mut self.message);
            self.emit(sink, "agent_message_final", vec![("message", s(message))], None);
        }
    }

    /// Ends the open turn as `status` says: completed, failed, or interrupted (`reason`).
    fn close_turn(
        &mut self,
        status: &str,
        reason: Option<&str>,
        ctx: &Context,
        sink: &mut Sink<'_>,
        extra: Option<&Extra>,
    ) {
        self.finish_message(sink);
        match status {
            "failed" => {
                let error = self.pending_error.clone().unwrap_or_default();
                self.emit(sink, "turn_failed", vec![("error", s(error))], extra);
            }
            "interrupted" | "timeout" => {
                let reason = reason.unwrap_or(status);
                self.emit(sink, "turn_interrupted", vec![("reason", s(reason))], extra);
            }
            _ => {
                let t = ctx.turn_totals;
                let fields = vec![
                    ("input_tokens", v(t.input.unwrap_or(0))),
                    ("output_tokens", v(t.output.unwrap_or(0))),
                    ("trace_path", s("")),
                    ("awaiting_auto_continuation", v(false)),
                ];
                self.emit(sink, "turn_completed", fields, extra);
            }
        }
        self.last_turn_id = self.turn_id.take();
    }

    /// A `tool_*` line, and its `command_*` twin for a call to bash: `fields` sorted by key
    /// (see [`Encoder::emit_sorted`]).
    fn tool(&self, sink: &mut Sink<'_>, step: Step, item: &str, fields: &[(&str, Field<'_>)], extra: Option<&Extra>) {
        let id = [("item_id", Field::Str(item))];
        self.emit_sorted_with(sink, step.0, fields, &id, extra);
        // From a wuu stream, the twin comes as the source wrote it (or not at all).
        let Some(command) = self.bash.get(item).filter(|_| !self.own_twins) else { return };
        let mut twin: Vec<(&str, Field<'_>)> = fields.to_vec();
        let adds = [
            ("name", Some(Field::Str("bash"))),
            ("arguments", command.arguments.as_deref().map(Field::Str)),
            ("command", command.command.as_ref().map(Field::Value)),
            ("process_id", command.process_id.as_ref().map(Field::Value)),
        ];
        let adds = if step == REMOVED { &adds[..1] } else { &adds[..] };
        for (key, value) in adds {
            if let (Some(v), false) = (value, twin.iter().any(|(k, _)| k == key)) {
                twin.push((key, v.clone()));
            }
        }
        twin.sort_unstable_by(|a, b| a.0.cmp(b.0));
        self.emit_sorted_with(sink, step.1, &twin, &id, None);
    }

    /// [`Encoder::emit`] for the lines most of a wuu stream is (text and tool output deltas,
    /// tool starts and ends, usage), through [`write_sorted`]: `fields` come sorted by key, the
    /// ids and the type are merged in.
    fn emit_sorted(&self, sink: &mut Sink<'_>, kind: &str, fields: &[(&str, Field<'_>)], extra: Option<&Extra>) {
        self.emit_sorted_with(sink, kind, fields, &[], extra);
    }

    /// [`Encoder::emit_sorted`] with `more` fields, sorted too, no key of `fields` among them.
    fn emit_sorted_with(
        &self,
        sink: &mut Sink<'_>,
        kind: &str,
        fields: &[(&str, Field<'_>)],
        more: &[(&str, Field<'_>)],
        extra: Option<&Extra>,
    ) {
        let [thread, turn] = self.ids();
        let kind_field = (self.contract.type_field.as_str(), Field::Str(kind));
        // The ids a line of the kind carries and its type: in key order already.
        let written: &[(&str, Field<'_>)] = match ids(kind) {
            Ids::None => &[kind_field],
            Ids::Thread => &[thread, kind_field],
            Ids::Turn => &[thread, turn, kind_field],
        };
        write_sorted(sink.out, self.contract, kind, &[fields, more, written], extra, Layout::Go, sink.report);
    }

    fn start_call(&mut self, sink: &mut Sink<'_>, item: &str, name: &str, args: &Arguments, extra: Option<&Extra>) {
        let text = json_text(args, self.own_twins);
        let fields = [("arguments", Field::Str(&text)), ("item_id", Field::Str(item)), ("name", Field::Str(name))];
        self.emit_sorted(sink, "tool_started", &fields, extra);
        if name != "bash" {
            return;
        }
        // The command family adds the command and process id when the arguments hold them.
        make_room(&mut self.bash, item);
        if self.own_twins {
            // The source's own twins follow, as it wrote them.
            self.bash.insert(item.to_string(), Command::default());
            return;
        }
        let mut command = Command { arguments: Some(text.to_string()), ..Command::default() };
        if let Some(Value::Object(mut o)) = args.to_value() {
            (command.command, command.process_id) = (o.remove("command"), o.remove("process_id"));
        }
        let mut fields = fields.to_vec();
        fields.extend(command.command.as_ref().map(|v| ("command", Field::Value(v))));
        fields.extend(command.process_id.as_ref().map(|v| ("process_id", Field::Value(v))));
        fields.sort_unstable_by(|a, b| a.0.cmp(b.0));
        self.emit_sorted(sink, "command_started", &fields, None);
        self.bash.insert(item.to_string(), command);
    }

    fn end_call(
        &mut self,
        sink: &mut Sink<'_>,
        item: &str,
        name: &str,
        status: &str,
        error: &str,
        extra: Option<&Extra>,
    ) {
        let fields = [("error", Field::Str(error)), ("name", Field::Str(name)), ("status", Field::Str(status))];
        self.tool(sink, COMPLETED, item, &fields, extra);
        self.streamed.shift_remove(item);
        self.bash.shift_remove(item);
    }
}

impl Encoder {
    /// A call's output: a piece, or all of it so far (then what is new since the last delta).
    fn tool_output(&mut self, rec: &Record, id: &str, text: &Text, accumulated: bool, sink: &mut Sink<'_>) {
        let extra = Some(&rec.extra);
        let sent = self.streamed.get(id).copied().unwrap_or(Some(0));
        make_room(&mut self.streamed, id);
        if accumulated {
            // All output so far: what is new since the last delta, by bytes decoded.
            let (len, delta) = text.after_decoded(sent.unwrap_or(0));
            self.streamed.insert(id.to_string(), Some(len));
            let delta = delta.unwrap_or_default();
            self.tool(sink, OUTPUT_DELTA, id, &[("delta", Field::Text(&delta))], extra);
        } else {
            // Pieces: counted where that needs no decoding.
            let plain = (!text.is_escaped()).then(|| text.as_read_len());
            self.streamed.insert(id.to_string(), sent.zip(plain).map(|(a, b)| a + b));
            // A bash item's output goes out twice (command_output_delta): written.
            self.tool(sink, OUTPUT_DELTA, id, &[("delta", Field::Text(text))], extra);
        }
    }

    /// A refusal: wuu has no refusal event, so the call is started and fails, saying why.
    fn refused(&mut self, d: &Denial, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        self.ensure_turn(ctx, sink);
        self.finish_message(sink);
        let id = d.id.clone().unwrap_or_default();
        let why = refusal(d.reason.as_deref());
        if ctx.answered {
            // The call already ended, failed: the refusal only says why the run stops.
            self.pending_error.get_or_insert(why);
            return Fate::Absorbed;
        }
        if !ctx.matched {
            self.start_call(sink, &id, &d.name, &d.arguments, None);
        }
        self.end_call(sink, &id, &d.name, "failed", &why, None);
        self.pending_error.get_or_insert(why);
        Fate::Written
    }

    /// A usage snapshot: the turn's totals so far, as wuu's `usage_updated` states them.
    fn usage(&mut self, rec: &Record, tokens: &Tokens, ctx: &Context, sink: &mut Sink<'_>) {
        let extra = Some(&rec.extra);
        let t = ctx.turn_totals;
        let _ = tokens;
        let fields = [
            ("cache_creation_tokens", Field::Int(t.cache_write.unwrap_or(0))),
            ("cache_read_tokens", Field::Int(t.cache_read.unwrap_or(0))),
            ("input_tokens", Field::Int(t.input.unwrap_or(0))),
            ("output_tokens", Field::Int(t.output.unwrap_or(0))),
        ];
        self.emit_sorted(sink, "usage_updated", &fields, extra);
    }

    /// A call's result: its output as one delta where it was not streamed (or what it has beyond what was), then `tool_completed` (and its twin for bash).
    fn tool_result(&mut self, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        let Event::ToolResult(r) = &rec.event else { unreachable!("tool_result is called with its kind") };
        let _own = ctx.native;
        let extra = Some(&rec.extra);
        self.ensure_turn(ctx, sink);
        self.finish_message(sink);
        let id = r.id.as_deref().unwrap_or_default();
        let name = r.name.as_deref().or(ctx.call.name.as_deref()).unwrap_or_default();
        if !ctx.matched {
            sink.report.synthesized("tool_started");
            self.start_call(sink, id, name, &r.arguments, None);
        }
        // wuu delivers output as deltas only; a result that carries its output sends it as
        // one delta before the completion, or what it has beyond the output streamed
        // (base-context's last update can hold less than its result).
        if let Some(output) = r.output.as_ref().filter(|o| !o.is_empty()) {
            match self.streamed.get(id) {
                None => self.tool(sink, OUTPUT_DELTA, id, &[("delta", Field::Text(output))], None),
                Some(Some(sent)) => {
                    if let (_, Some(rest)) = output.after_decoded(*sent) {
                        if !rest.is_empty() {
                            self.tool(sink, OUTPUT_DELTA, id, &[("delta", Field::Text(&rest))], None);
                        }
                    }
                }
                Some(None) => {}
            }
        }
        let status = match r.status {
            ToolStatus::Completed => "completed",
            ToolStatus::Failed => "failed",
            ToolStatus::Cancelled => "cancelled",
        };
        self.end_call(sink, id, name, status, r.error.as_deref().unwrap_or(""), extra);
        Fate::Written
    }

    /// A subagent's start, update or end, as wuu's `subagent_*` lines.
    fn subagent(&mut self, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        let Event::Subagent { phase, id, status, data } = &rec.event else {
            unreachable!("subagent is called with its kind")
        };
        let own = ctx.native;
        let extra = Some(&rec.extra);
        self.ensure_session(None, ctx, sink);
        let kind = match phase {
            Phase::Start => "subagent_started",
            Phase::Update => "subagent_updated",
            Phase::End => "subagent_completed",
        };
        let mut fields = vec![("agent_id", s(id.clone().unwrap_or_default()))];
        if let Some(st) = status {
            fields.push(("status", s(st.clone())));
        }
        if !own {
            // wuu.md: they "carry agent_id, thread_id, agent_type, status": "" for what
            // another dialect did not say (a wuu line comes back as it was).
            if status.is_none() {
                fields.push(("status", s("")));
            }
            for key in ["agent_type", "thread_id"] {
                if !data.contains_key(key) {
                    fields.push((key, s("")));
                }
            }
        }
        self.emit_with(sink, kind, data, fields, extra);
        Fate::Written
    }

    /// The run's end: the open turn ended as the outcome says, and `result`.
    fn terminal(&mut self, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        let Event::Terminal(t) = &rec.event else { unreachable!("terminal is called with its kind") };
        let _own = ctx.native;
        let extra = Some(&rec.extra);
        self.ensure_session(None, ctx, sink);
        self.finish_message(sink);
        // Why the run did not complete, for the turn it ends and the result.
        let error = match t.outcome {
            Outcome::Completed => None,
            _ => t.error.clone().or_else(|| self.pending_error.clone()).or_else(|| t.reason.clone()),
        };
        if self.turn_id.is_some() {
            if self.pending_error.is_none() {
                self.pending_error = error.clone();
            }
            let (status, reason) = match t.outcome {
                Outcome::Completed => ("completed", None),
                Outcome::Timeout => ("interrupted", Some("timeout")),
                Outcome::Interrupted => ("interrupted", Some("interrupted")),
                _ => ("failed", None),
            };
            self.close_turn(status, reason, ctx, sink, None);
        }
        let status = self.contract.outcome_str(t.outcome, "status").unwrap_or("failed");
        let mut fields = vec![
            ("status", s(status)),
            ("final_message", s(t.final_text.clone().unwrap_or_default())),
            ("run_id", s("")),
            ("trace_path", s("")),
        ];
        if let Some(e) = error.filter(|e| !e.is_empty()) {
            fields.push(("error", s(e)));
        }
        let turn = self.last_turn_id.clone().unwrap_or_default();
        fields.push(("turn_id", s(turn)));
        self.emit(sink, "result", fields, extra);
        Fate::Written
    }
}

impl Encode for Encoder {
    fn hints(&self) -> crate::codec::Hints {
        crate::codec::Hints {
            matches_calls_by_id: true,
            call_arguments: false,
            call_output: false,
            ..crate::codec::Hints::default()
        }
    }

    /// A wuu line copied as read: the state its encoding would have left, set without writing
    /// anything (the default encodes into a buffer thrown away: #53). What `encode` would set
    /// for a wuu record of a wuu run, arm by arm; the lines it would make up for such a run
    /// (a `turn_started` before a turn's first event) are not written, as they were not before.
    /// Another dialect's record, a run that began with one, a message of another dialect still
    /// open, a refusal and the terminal (once a run) are observed by encoding. tests/observe.rs
    /// holds this to the encoding one on every wuu stream we have, cut at every line.
    fn observe(&mut self, rec: &Record, ctx: &Context, line: &str, sink: &mut Sink<'_>) {
        let _ = line;
        if !ctx.native || self.from_wuu == Some(false) || self.unfinished_message {
            return self.observe_by_encoding(rec, ctx, sink);
        }
        self.from_wuu = Some(true);
        self.own_twins = true;
        match &rec.event {
            Event::Session(x) => {
                let thread_line =
                    rec.extra.get("type").is_some_and(|t| t.as_str().is_some_and(|t| t.starts_with("thread_")));
                if x.id.is_some() || thread_line {
                    self.configured = true;
                    self.thread_id = Some(match &x.id {
                        Some(id) => id.clone(),
                        None => format!("thread-{}", ctx.input_digest.get(..16).unwrap_or("0000000000000000")),
                    });
                } else if !self.configured {
                    self.configured = true;
                } else {
                    self.note_session();
                }
            }
            Event::TurnStart { id } => {
                self.note_session();
                if self.turn_id.is_some() {
                    self.last_turn_id = self.turn_id.take();
                }
                self.turns += 1;
                self.turn_id = Some(id.clone().unwrap_or_else(|| format!("turn-{}", self.turns)));
            }
            Event::TurnEnd { .. } => {
                self.note_turn();
                self.last_turn_id = self.turn_id.take();
            }
            Event::TextStart => self.message.clear(),
            Event::TextReplace { .. } | Event::TextEnd { text: Some(_) } => {
                self.note_turn();
                self.message.clear();
            }
            Event::ToolCall(c) => {
                self.note_turn();
                if c.name == "bash" {
                    make_room(&mut self.bash, c.id.as_deref().unwrap_or_default());
                    self.bash.insert(c.id.clone().unwrap_or_default().into(), Command::default());
                }
            }
            Event::ToolOutput { id: Some(id), text, accumulated } => {
                self.note_turn();
                let sent = self.streamed.get(id.as_str()).copied().unwrap_or(Some(0));
                make_room(&mut self.streamed, id.as_str());
                let now = if *accumulated {
                    Some(text.after_decoded(sent.unwrap_or(0)).0)
                } else {
                    sent.zip((!text.is_escaped()).then(|| text.as_read_len())).map(|(a, b)| a + b)
                };
                self.streamed.insert(id.to_string(), now);
            }
            Event::ToolResult(r) => {
                self.note_turn();
                let id = r.id.as_deref().unwrap_or_default();
                let name = r.name.as_deref().or(ctx.call.name.as_deref()).unwrap_or_default();
                if !ctx.matched && name == "bash" {
                    // Started (and so noted) and ended by the same record.
                    make_room(&mut self.bash, id);
                }
                self.streamed.shift_remove(id);
                self.bash.shift_remove(id);
            }
            Event::ToolWithdrawn { id: Some(id) } => {
                self.note_turn();
                self.streamed.shift_remove(id.as_str());
                self.bash.shift_remove(id.as_str());
            }
            Event::Usage(u) if !u.final_ => self.note_turn(),
            Event::Error { fatal: false, .. } | Event::Subagent { .. } => self.note_session(),
            Event::Diagnostics { kind, .. } if kind == "provider_state" || kind == "request_context" => {
                self.note_session()
            }
            Event::Error { message, .. } => self.pending_error = Some(message.clone()),
            Event::TextDelta { .. } | Event::FileChange { .. } | Event::Todo { .. } => self.note_turn(),
            Event::PermissionDenied(_) | Event::Terminal(_) => self.observe_by_encoding(rec, ctx, sink),
            _ => {}
        }
    }

    fn encode(&mut self, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        let own = ctx.native;
        self.from_wuu.get_or_insert(own);
        // A wuu source's bash calls have their `command_*` twins as lines of their own.
        self.own_twins = own;
        let extra = Some(&rec.extra);
        // A wuu thread line (thread_started, _resumed, _forked) whose `thread_id` was missing:
        // written back as the thread line it is, its id made (wuu.md requires one).
        let thread_line =
            own && rec.extra.get("type").is_some_and(|t| t.as_str().is_some_and(|t| t.starts_with("thread_")));
        match &rec.event {
            Event::Session(x) if own && x.id.is_none() && !thread_line && !self.configured => {
                self.configured = true;
                let mut fields = vec![
                    ("model", s(x.model.clone().unwrap_or_default())),
                    ("provider", s(x.provider.clone().unwrap_or_default())),
                    ("workspace_root", s(x.cwd.clone().unwrap_or_default())),
                ];
                // The members wuu.md requires that the source's line lacked (it is written
                // anew because it was not valid as it stood): the placeholders a foreign run
                // gets, said.
                let required = [
                    ("max_parallel", "session_configured.max_parallel", v(1)),
                    ("permissions", "session_configured.permissions", v(Value::Object(serde_json::Map::new()))),
                    ("protocol_version", "session_configured.protocol_version", s(PROTOCOL_VERSION)),
                ];
                let may = self.contract.fields_of("session_configured");
                let stated = rec.extra.members();
                for (k, said, value) in required {
                    // Absent, null, or of a type the contract refuses there (none of them is
                    // written back: see `build_line`, which says a refused value dropped):
                    // missing.
                    match stated.iter().find(|(key, _)| key == k).map(|(_, v)| v) {
                        Some(v) if !v.is_null() && may.accepts(k, v) => {}
                        _ => {
                            sink.report.synthesized(said);
                            fields.push((k, value));
                        }
                    }
                }
                self.emit(sink, "session_configured", fields, extra);
            }
            Event::Session(x) if own && (x.id.is_some() || thread_line) => {
                self.ensure_configured(Some(x), ctx, sink);
                self.thread_id = Some(match &x.id {
                    Some(id) => id.clone(),
                    None => {
                        sink.report.synthesized("thread_started.thread_id");
                        format!("thread-{}", ctx.input_digest.get(..16).unwrap_or("0000000000000000"))
                    }
                });
                let fields = vec![
                    ("model", s(x.model.clone().unwrap_or_default())),
                    ("provider", s(x.provider.clone().unwrap_or_default())),
                    ("cwd", s(x.cwd.clone().unwrap_or_default())),
                ];
                // `extra` names thread_resumed or thread_forked where the source said so.
                self.emit(sink, "thread_started", fields, extra);
            }
            Event::Session(x) => {
                if self.configured && self.thread_id.is_some() {
                    return Fate::Absorbed;
                }
                self.ensure_session(Some(x), ctx, sink);
            }
            Event::TurnStart { id } => {
                self.ensure_session(None, ctx, sink);
                if self.turn_id.is_some() {
                    self.close_turn("completed", None, ctx, sink, None);
                }
                self.turns += 1;
                self.turn_id = Some(id.clone().unwrap_or_else(|| format!("turn-{}", self.turns)));
                self.emit(sink, "turn_started", vec![], extra);
            }
            Event::TurnEnd { status, reason, .. } => {
                self.ensure_turn(ctx, sink);
                self.close_turn(status.as_deref().unwrap_or("completed"), reason.as_deref(), ctx, sink, extra);
            }
            Event::TextStart => {
                self.finish_message(sink);
                self.message.clear();
                return Fate::Absorbed;
            }
            Event::TextDelta { text, .. } => {
                self.ensure_turn(ctx, sink);
                if !own {
                    self.message.push_str(text);
                    self.unfinished_message = true;
                }
                self.emit_sorted(sink, "agent_message_delta", &[("delta", Field::Str(text))], extra);
            }
            Event::TextReplace { text } | Event::TextEnd { text: Some(text) } => {
                self.ensure_turn(ctx, sink);
                self.unfinished_message = false;
                self.message.clear();
                self.emit(sink, "agent_message_final", [("message", Field::Str(text))], extra);
            }
            Event::TextEnd { text: None } => {
                self.finish_message(sink);
                return Fate::Absorbed;
            }
            Event::ToolCall(c) => {
                self.ensure_turn(ctx, sink);
                self.finish_message(sink);
                self.start_call(sink, c.id.as_deref().unwrap_or_default(), &c.name, &c.arguments, extra);
            }
            Event::ToolOutput { id: Some(id), text, accumulated } => {
                self.ensure_turn(ctx, sink);
                self.tool_output(rec, id, text, *accumulated, sink);
            }
            Event::ToolResult(_) => return self.tool_result(rec, ctx, sink),
            Event::ToolWithdrawn { id: Some(id) } => {
                self.ensure_turn(ctx, sink);
                self.tool(sink, REMOVED, id, &[], extra);
                self.streamed.shift_remove(id);
                self.bash.shift_remove(id);
            }
            Event::PermissionDenied(d) => return self.refused(d, ctx, sink),
            Event::Usage(u) if own && u.final_ => return Fate::Absorbed,
            Event::Usage(u) => {
                self.ensure_turn(ctx, sink);
                self.usage(rec, &u.tokens, ctx, sink);
            }
            Event::Error { message, fatal: false } if own => {
                self.ensure_session(None, ctx, sink);
                let fields = vec![("error", Field::Str(message)), ("retrying", v(false))];
                self.emit(sink, "error", fields, extra);
            }
            Event::Error { message, .. } => {
                // wuu's error event is not a general error channel: a run's error goes to the
                // turn that fails and to the result.
                self.pending_error = Some(message.clone());
                return Fate::Absorbed;
            }
            Event::FileChange { path, action, tool, data } => {
                self.ensure_turn(ctx, sink);
                let fields = [
                    ("path", s(path.clone())),
                    ("action", s(action.clone().unwrap_or_default())),
                    ("tool_name", s(tool.clone().unwrap_or_default())),
                ];
                self.emit_with(sink, "file_changed", data, fields, extra);
            }
            Event::Subagent { .. } => return self.subagent(rec, ctx, sink),
            Event::Todo { items } => {
                self.ensure_turn(ctx, sink);
                self.emit(sink, "todo_updated", vec![("todo", Field::Value(items))], extra);
            }
            Event::Diagnostics { kind, data } if kind == "provider_state" || kind == "request_context" => {
                self.ensure_session(None, ctx, sink);
                self.emit_with(sink, kind, data, [], extra);
            }
            Event::FinalAnswer { text } if !own && !ctx.answer_streamed && !text.is_empty() => {
                // An answer the source gave whole (adal's answer) is the turn's message.
                self.ensure_turn(ctx, sink);
                self.finish_message(sink);
                self.emit(sink, "agent_message_final", [("message", Field::Str(text))], extra);
            }
            Event::FinalAnswer { .. } => return Fate::Absorbed,
            Event::Terminal(_) => return self.terminal(rec, ctx, sink),
            Event::Extension { line } if own => {
                write_line(sink.out, line, Layout::Go);
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::json::object::Object;
    use crate::report::Report;

    proptest! {
        /// The lines written through `emit_sorted` are the ones `emit` writes, whatever ids the
        /// encoder holds and whatever extra members a wuu source line brings (named like a field
        /// or an id, of a type the contract takes or refuses, sorting anywhere, needing escapes).
        #[test]
        fn the_sorted_writer_writes_what_the_generic_one_does(
            members in prop::collection::vec((
                prop::sample::select(vec![
                    "delta", "item_id", "name", "status", "error", "thread_id", "turn_id", "type", "a", "zz",
                    "k<y", "\\u2028", "",
                ]),
                prop::sample::select(vec!["1", "\"x\"", "null", "true", "{\"b\":1,\"a\":\"<\"}", "[2,1]", "\"a&b\""]),
            ), 0..5),
            thread in prop::option::of("[a-z<&]{0,4}"),
            turn in prop::option::of("[a-z]{0,3}"),
            text in "[a-z<>&\u{2028}\"]{0,6}",
        ) {
            let json = format!(
                "{{{}}}",
                members.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect::<Vec<_>>().join(",")
            );
            let extra = Object::parse(&json).unwrap().unwrap().into_extra();
            let mut enc = Encoder::new();
            enc.thread_id = thread;
            enc.turn_id = turn;
            let mut report = Report::default();
            let cases: Vec<(&str, Vec<(&str, Field<'_>)>)> = vec![
                ("agent_message_delta", vec![("delta", Field::Str(&text))]),
                ("tool_started", vec![
                    ("arguments", Field::Str(&text)),
                    ("item_id", Field::Str("i1")),
                    ("name", Field::Str("read_file")),
                ]),
                ("command_started", vec![
                    ("arguments", Field::Str("{\"command\":\"ls\"}")),
                    ("command", Field::Str("ls")),
                    ("item_id", Field::Str(&text)),
                    ("name", Field::Str("bash")),
                ]),
                ("usage_updated", vec![
                    ("cache_creation_tokens", Field::Int(0)),
                    ("cache_read_tokens", Field::Int(7)),
                    ("input_tokens", Field::Int(120)),
                    ("output_tokens", Field::Int(u64::MAX)),
                ]),
                ("tool_output_delta", vec![("delta", Field::Str(&text)), ("item_id", Field::Str("i1"))]),
                ("tool_completed", vec![
                    ("error", Field::Str(&text)),
                    ("item_id", Field::Str("i1")),
                    ("name", Field::Str("bash")),
                    ("status", Field::Str("completed")),
                ]),
            ];
            for (kind, fields) in cases {
                let (mut slow, mut fast) = (Vec::new(), Vec::new());
                enc.emit(&mut Sink::new(&mut slow, &mut report), kind, fields.clone(), Some(&extra));
                enc.emit_sorted(&mut Sink::new(&mut fast, &mut report), kind, &fields, Some(&extra));
                prop_assert_eq!(String::from_utf8(fast).unwrap(), String::from_utf8(slow).unwrap(), "{} with {}", kind, json);
            }
        }
    }
}

//! Writes Gemini CLI's `stream-json` as a strict reader of the spec takes it (gemini.md,
//! Encode): `init` first, the user `message` where the source states the prompt, assistant text
//! only as `delta: true` chunks, `tool_use` then `tool_result` paired by a `<tool_name>__<id>`
//! `tool_id`, non-fatal errors and notices as `error` lines, and exactly one `result`, last,
//! always with its `error` member on failure and all eight `stats` members, the usage per model.
//! Each line is `type`, `timestamp` (the source's time where its record carries one, else the
//! clock under `exec`, else `SOURCE_DATE_EPOCH`; never earlier than the line before), then its
//! members in the spec's order. The exit status `exec` gives is the outcome table's (the
//! failure's own HTTP status & 255 where it states one, 53 for a turn limit).

use indexmap::IndexMap;
use serde_json::{json, Map, Value};

use super::decode::REFUSED;
use super::is_iso_millis;
use crate::codec::make_room;
use crate::codec::{Context, Dialect, Encode, EncodeOptions, Hints, Record, Sink};
use crate::dialect::util::{iso, refusal};
use crate::json::{write_line, Layout};
use crate::model::{Event, Outcome, Terminal, Tokens, ToolCall, ToolResult, ToolStatus};
use crate::report::Fate;

/// A tool's error kind where the source names none (gemini.md: 'else TOOL_EXECUTION_ERROR').
const TOOL_ERROR: &str = "TOOL_EXECUTION_ERROR";

/// A call written and not answered yet.
struct Open {
    tool_id: String,
    name: String,
}

pub struct Encoder {
    /// The time written where the source states none: `SOURCE_DATE_EPOCH` (or the epoch), in ms.
    epoch_ms: u64,
    /// `exec`: a line's time is when it is written.
    live: bool,
    started: bool,
    done: bool,
    /// The last timestamp written: none goes back before it.
    last_time: String,
    /// Calls written and not yet answered, by the source's id.
    open: IndexMap<String, Open>,
    /// Failed results written, by the source's call id: whether the result said the call was
    /// refused (a refusal that follows one says nothing more).
    failed: IndexMap<String, bool>,
    /// Ids made for calls the source gave none (`<name>__<name>_<n>`).
    made: u64,
    /// `tool_use` lines written: `stats.tool_calls`.
    calls: u64,
    /// The assistant text written since the last tool result: what a reader takes as the answer.
    answer: String,
    /// Usage by model, in the order the models came ("" for usage that names none).
    models: IndexMap<String, Tokens>,
    /// A fatal error the source stated before its end.
    fatal: Option<String>,
    /// Why the last refused call was refused.
    denied: Option<String>,
}

impl Encoder {
    pub fn new(opts: &EncodeOptions) -> Self {
        Encoder {
            epoch_ms: opts.source_date_epoch.unwrap_or(0).saturating_mul(1000),
            live: opts.live_times,
            started: false,
            done: false,
            last_time: String::new(),
            open: IndexMap::new(),
            failed: IndexMap::new(),
            made: 0,
            calls: 0,
            answer: String::new(),
            models: IndexMap::new(),
            fatal: None,
            denied: None,
        }
    }
}

/// A member the record carries from its source line, where it carries them (a gemini line's
/// `timestamp`, an error's `type`, what its `stats` held beside the tokens).
fn carried(rec: &Record, key: &str) -> Option<Value> {
    if rec.extra.is_empty() {
        return None;
    }
    rec.extra.get(key)
}

/// Counts what a gemini record carries from its source line that the line written anew from it
/// does not hold (it is written from the model: of the members carried, only a time of Gemini
/// CLI's form, an error's `type` and `stats.duration_ms` are written): a member no spec names, or
/// one of a type the contract refuses, is not lost unsaid.
fn count_unwritten(rec: &Record, sink: &mut Sink<'_>) {
    let kind = rec.event.kind();
    // An error's type is written where the line says a failure.
    let failed = match &rec.event {
        Event::ToolResult(r) => r.status != ToolStatus::Completed,
        Event::Terminal(t) => t.outcome != Outcome::Completed,
        Event::Error { .. } => true,
        _ => false,
    };
    for (key, value) in rec.extra.to_fields() {
        match (key.as_str(), &value) {
            ("timestamp", Value::String(t)) if is_iso_millis(t) => {}
            ("error" | "stats", Value::Object(members)) => {
                for (k, v) in members {
                    let written = match (key.as_str(), k.as_str()) {
                        ("error", "type") => v.is_string() && failed,
                        ("stats", "duration_ms") => v.is_u64(),
                        _ => false,
                    };
                    if !written {
                        sink.report.dropped_field(kind, &format!("{key}.{k}"));
                    }
                }
            }
            _ => sink.report.dropped_field(kind, &key),
        }
    }
}

/// The time the source stated for the record, in the form Gemini CLI writes.
fn said_time(rec: &Record) -> Option<String> {
    let t = match &rec.event {
        Event::Session(s) => s.timestamp.clone(),
        _ => None,
    };
    t.or_else(|| carried(rec, "timestamp")?.as_str().map(str::to_string)).filter(|t| is_iso_millis(t))
}

/// The error kind the source stated for the record (`error.type`).
fn said_error_type(rec: &Record) -> Option<String> {
    carried(rec, "error")?.get("type")?.as_str().map(str::to_string)
}

/// A reason that names a turn or step limit (localcode's `max_rounds`, Claude Code's
/// `error_max_turns`, loom's `StepBudget`, gemini's own read as `max_turns`).
fn turn_limit(reason: &str) -> bool {
    reason.contains("max_turns") || reason.contains("max_rounds") || reason == "StepBudget"
}

/// One `stats` entry's token members, in the spec's order.
fn figures(t: &Tokens) -> [(&'static str, u64); 5] {
    let input = t.input.unwrap_or(0);
    let cached = t.cache_read.unwrap_or(0);
    let output = t.output.unwrap_or(0);
    [
        ("total_tokens", t.total.unwrap_or_else(|| input.saturating_add(output))),
        ("input_tokens", input),
        ("output_tokens", output),
        ("cached", cached),
        ("input", input.saturating_sub(cached)),
    ]
}

impl Encoder {
    /// The line's time: the source's, else now; never before the last line's.
    fn time(&mut self, said: Option<String>) -> String {
        let t = said.unwrap_or_else(|| {
            if self.live {
                let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
                iso(u64::try_from(now.as_millis()).unwrap_or(u64::MAX))
            } else {
                iso(self.epoch_ms)
            }
        });
        if t < self.last_time {
            return self.last_time.clone();
        }
        self.last_time.clone_from(&t);
        t
    }

    /// Writes one line: `type`, `timestamp`, then `members` in order.
    fn put(&mut self, sink: &mut Sink<'_>, kind: &str, said: Option<String>, members: Vec<(&str, Value)>) {
        let mut line = Map::with_capacity(members.len() + 2);
        line.insert("type".into(), Value::String(kind.into()));
        line.insert("timestamp".into(), Value::String(self.time(said)));
        for (k, v) in members {
            line.insert(k.into(), v);
        }
        write_line(sink.out, &Value::Object(line), Layout::Compact);
    }

    /// `init`, once, before anything else: the source's session id (else a UUID made from the
    /// input) and model (else `"auto"`, Gemini's own when no model is pinned).
    fn init(&mut self, ctx: &Context, said: Option<String>, sink: &mut Sink<'_>) {
        if std::mem::replace(&mut self.started, true) {
            return;
        }
        let id = ctx.session_id.clone().unwrap_or_else(|| {
            sink.report.synthesized("init.session_id");
            ctx.derived_uuid()
        });
        let model = ctx.model.clone().unwrap_or_else(|| {
            sink.report.synthesized("init.model");
            "auto".into()
        });
        self.put(sink, "init", said, vec![("session_id", json!(id)), ("model", json!(model))]);
    }

    /// An assistant chunk.
    fn chunk(&mut self, text: &str, said: Option<String>, sink: &mut Sink<'_>) {
        self.answer.push_str(text);
        self.put(
            sink,
            "message",
            said,
            vec![("role", json!("assistant")), ("content", json!(text)), ("delta", json!(true))],
        );
    }

    /// [`Encoder::chunk`]'s state, nothing written ([`Encode::observe`]).
    fn note_chunk(&mut self, text: &str, said: Option<String>) {
        self.answer.push_str(text);
        self.time(said);
    }

    /// [`Encoder::tool_use`]'s state for a gemini call, nothing written: the call open under
    /// its `tool_id` (made as `tool_use` makes it where the source gave none), and counted.
    fn note_tool_use(&mut self, call: &ToolCall, said: Option<String>) {
        let name = call.name.as_str();
        let tool_id = match call.id.as_deref() {
            Some(id) if !call.id_made => id.to_string(),
            _ => {
                self.made += 1;
                format!("{name}__{name}_{}", self.made - 1)
            }
        };
        let key = call.id.as_deref().unwrap_or_default();
        make_room(&mut self.open, key);
        self.open.insert(key.to_string(), Open { tool_id, name: name.to_string() });
        self.calls += 1;
        self.time(said);
    }

    /// A call's `tool_use`, its `tool_id` made as Gemini makes one (core/core/turn.ts:480-482):
    /// `<tool_name>__<the source's id>` unless the id starts so already, and where the source
    /// gave none, `<tool_name>__<tool_name>_<n>`, `n` from 0 per run.
    /// A `tool_use`; `own`: the call is a gemini source's, whose `tool_id` goes back as read
    /// (its `tool_result` lines name it so).
    fn tool_use(&mut self, call: &ToolCall, own: bool, said: Option<String>, sink: &mut Sink<'_>) {
        let name = call.name.as_str();
        let tool_id = match call.id.as_deref() {
            Some(id) if !call.id_made && (own || id.strip_prefix(name).is_some_and(|r| r.starts_with("__"))) => {
                id.to_string()
            }
            Some(id) if !call.id_made => format!("{name}__{id}"),
            _ => {
                self.made += 1;
                format!("{name}__{name}_{}", self.made - 1)
            }
        };
        let parameters = call.arguments.to_object();
        if !matches!(call.arguments.to_value(), Some(Value::Object(_))) && !call.arguments.as_text().is_empty() {
            sink.report.synthesized("tool_use.parameters.raw");
        }
        let key = call.id.as_deref().unwrap_or_default();
        make_room(&mut self.open, key);
        self.open.insert(key.to_string(), Open { tool_id: tool_id.clone(), name: name.to_string() });
        self.calls += 1;
        self.put(
            sink,
            "tool_use",
            said,
            vec![("tool_name", json!(name)), ("tool_id", json!(tool_id)), ("parameters", parameters)],
        );
    }

    /// The call a result or refusal answers: taken from the calls open, else written first.
    fn answering(
        &mut self,
        key: &str,
        name: Option<&str>,
        rec: &Record,
        said: Option<String>,
        sink: &mut Sink<'_>,
    ) -> Open {
        if let Some(open) = self.open.shift_remove(key) {
            return open;
        }
        let arguments = match &rec.event {
            Event::ToolResult(r) => r.arguments.clone(),
            Event::PermissionDenied(d) => d.arguments.clone(),
            _ => Default::default(),
        };
        if matches!(rec.event, Event::ToolResult(_)) {
            // A refusal names a call of its own; a result whose call never came gets it here.
            sink.report.synthesized("tool_use");
        }
        let call = ToolCall {
            id: Some(key.into()),
            index: None,
            name: name.unwrap_or("unknown").into(),
            arguments,
            id_made: false,
        };
        self.tool_use(&call, rec.origin == Dialect::Gemini, said, sink);
        self.open.shift_remove(key).unwrap_or(Open { tool_id: key.to_string(), name: call.name.to_string() })
    }

    /// A `tool_result`: `success`, else `error` with its `error {type, message}`.
    fn tool_result(&mut self, r: &ToolResult, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) {
        let said = said_time(rec);
        let key = r.id.as_deref().unwrap_or_default().to_string();
        let name = r.name.as_deref().or(ctx.call.name.as_deref()).map(str::to_string);
        let open = self.answering(&key, name.as_deref(), rec, said.clone(), sink);
        let output = r.output.as_ref().or(ctx.call.output.as_ref()).map(|o| o.as_str().into_owned());
        let mut members = vec![("tool_id", json!(open.tool_id))];
        if r.status == ToolStatus::Completed {
            members.push(("status", json!("success")));
            members.extend(output.map(|o| ("output", json!(o))));
        } else {
            let kind = said_error_type(rec).unwrap_or_else(|| TOOL_ERROR.to_string());
            let word = if r.status == ToolStatus::Cancelled { "cancelled" } else { "failed" };
            let message = r
                .error
                .clone()
                .or_else(|| output.clone().filter(|o| !o.is_empty()))
                .unwrap_or_else(|| format!("{} {word}", open.name));
            make_room(&mut self.failed, key.as_str());
            self.failed.insert(key, kind == REFUSED);
            members.push(("status", json!("error")));
            members.extend(output.map(|o| ("output", json!(o))));
            members.push(("error", json!({"type": kind, "message": message})));
        }
        self.answer.clear();
        self.put(sink, "tool_result", said, members);
    }

    /// A refused call: its `tool_result` typed `policy_violation` (the call written first where
    /// it was not). A refusal of a call already answered as failed says nothing more where that
    /// result said so, and is reported where it did not (the line cannot be taken back).
    fn refused(&mut self, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        let Event::PermissionDenied(d) = &rec.event else { return Fate::Absorbed };
        let why = refusal(d.reason.as_deref());
        self.denied = Some(why.clone());
        let key = d.id.clone().unwrap_or_default();
        if ctx.answered {
            if self.failed.get(key.as_str()) == Some(&true) {
                return Fate::Absorbed;
            }
            sink.report.dropped_kind("permission_denied of a call already answered");
            return Fate::Dropped;
        }
        let said = said_time(rec);
        let open = self.answering(&key, Some(&d.name), rec, said.clone(), sink);
        make_room(&mut self.failed, key.as_str());
        self.failed.insert(key, true);
        self.answer.clear();
        let error = json!({"type": REFUSED, "message": why});
        self.put(
            sink,
            "tool_result",
            said,
            vec![("tool_id", json!(open.tool_id)), ("status", json!("error")), ("error", error)],
        );
        Fate::Written
    }

    /// The run's end: the final text where no chunk said it, then the `result` with the
    /// outcome's status and error, and the run's usage.
    fn close(&mut self, t: &Terminal, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) {
        let said = said_time(rec);
        if let Some(text) = t.final_text.as_deref().filter(|f| !f.is_empty() && !self.answer.ends_with(*f)) {
            // The answer is the chunks after the last tool result: what they lack of it.
            match text.strip_prefix(self.answer.as_str()) {
                Some(rest) if !self.answer.is_empty() => self.chunk(rest, said.clone(), sink),
                _ => {
                    sink.report.synthesized("message (the final text)");
                    self.chunk(text, said.clone(), sink);
                }
            }
        }
        let reason = t.reason.clone().or_else(|| t.error.clone());
        let (error, exit): (Option<(String, String)>, i64) = match t.outcome {
            Outcome::Completed => (None, 0),
            Outcome::Failed => {
                let kind = said_error_type(rec).unwrap_or_else(|| "unknown".into());
                let message = t.error.clone().or_else(|| self.fatal.clone()).or_else(|| t.reason.clone());
                // The failure's own status (an API error's HTTP status & 255), else 1.
                let exit = t.exit_code.filter(|c| (1..=255).contains(c)).unwrap_or(1);
                (Some((kind, message.unwrap_or_else(|| "the run failed".into()))), exit)
            }
            Outcome::Interrupted | Outcome::Timeout => {
                let timeout = t.outcome == Outcome::Timeout;
                let message = match reason {
                    Some(r) if r.starts_with("Operation cancelled") => r,
                    Some(r) if timeout && !r.to_ascii_lowercase().contains("timeout") => {
                        format!("Operation cancelled: timeout: {r}")
                    }
                    Some(r) => format!("Operation cancelled: {r}"),
                    None if timeout => "Operation cancelled: timeout".into(),
                    None => "Operation cancelled.".into(),
                };
                (Some(("FatalCancellationError".into(), message)), 130)
            }
            Outcome::Incomplete if t.reason.as_deref().is_some_and(turn_limit) => {
                let message = t.error.clone().or_else(|| t.reason.clone()).unwrap_or_default();
                (Some(("FatalTurnLimitedError".into(), message)), 53)
            }
            Outcome::Incomplete => {
                let message = reason.unwrap_or_else(|| "incomplete".into());
                (Some(("IncompleteRunError".into(), message)), 1)
            }
            Outcome::PermissionDenied => {
                let why = t.reason.clone().or_else(|| t.error.clone()).or_else(|| self.denied.clone());
                (Some((REFUSED.into(), refusal(why.as_deref()))), 1)
            }
        };
        if t.cost_usd.is_some() {
            // gemini.md, Usage: 'No cost member'.
            sink.report.dropped_field("terminal", "cost_usd");
        }
        let stats = self.stats(t, rec, ctx, sink);
        let mut members = vec![("status", json!(if error.is_some() { "error" } else { "success" }))];
        if let Some((kind, message)) = error {
            members.push(("error", json!({"type": kind, "message": message})));
        }
        members.push(("stats", stats));
        sink.report.exit_status = Some(exit);
        self.put(sink, "result", said, members);
        self.done = true;
    }

    /// `stats`: the run's totals, the duration the source stated, the calls written, and the
    /// usage per model (usage that names none under the run's model).
    fn stats(&mut self, t: &Terminal, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Value {
        let totals = ctx.totals;
        if totals.is_empty() {
            sink.report.synthesized("result.stats (zeros: usage unknown)");
        }
        if totals.cache_write.unwrap_or(0) > 0 {
            // gemini.md, Usage: 'cache write: not stated': inside input_tokens, not apart.
            sink.report.dropped_field("usage", "cache_write (inside input_tokens)");
        }
        if totals.reasoning.unwrap_or(0) > 0 {
            // Reasoning tokens are inside output_tokens (gemini.md, Encode), not apart.
            sink.report.dropped_field("usage", "reasoning (inside output_tokens)");
        }
        let run_model = t.model.clone().or_else(|| ctx.model.clone()).unwrap_or_else(|| "unknown".into());
        let mut models = std::mem::take(&mut self.models);
        if let Some(unnamed) = models.shift_remove("") {
            let entry = models.entry(run_model.clone()).or_default();
            *entry = entry.plus(&unnamed);
        }
        if models.is_empty() {
            models.insert(run_model, Tokens::default());
        }
        let duration = carried(rec, "stats").and_then(|s| s.get("duration_ms")?.as_u64()).unwrap_or(0);
        let entry = |t: &Tokens| Value::Object(figures(t).iter().map(|(k, v)| (k.to_string(), json!(v))).collect());
        let mut stats: Map<String, Value> = figures(&totals).iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
        stats.insert("duration_ms".into(), json!(duration));
        stats.insert("tool_calls".into(), json!(self.calls));
        stats.insert("models".into(), Value::Object(models.iter().map(|(k, t)| (k.clone(), entry(t))).collect()));
        Value::Object(stats)
    }
}

impl Encode for Encoder {
    fn hints(&self) -> Hints {
        Hints { matches_calls_by_id: true, call_arguments: false, ..Hints::default() }
    }

    /// A gemini line copied as read: the state its encoding would have left, set without
    /// building or writing the line (the default encodes into a buffer thrown away: #53). What
    /// `encode` sets for a gemini record, arm by arm: the run started, the last time written,
    /// the calls open and failed, the ids made, the calls counted, the answer so far, usage by
    /// model, a fatal error. Another dialect's record, a refusal and the terminal (once a run)
    /// are observed by encoding. tests/observe.rs holds this to the encoding one.
    fn observe(&mut self, rec: &Record, ctx: &Context, line: &str, sink: &mut Sink<'_>) {
        let _ = line;
        if !ctx.native || rec.origin != Dialect::Gemini || self.done {
            return self.observe_by_encoding(rec, ctx, sink);
        }
        let said = said_time(rec);
        match &rec.event {
            Event::Session(_) if self.started => return,
            Event::Extension { .. } | Event::Repeat => return,
            Event::PermissionDenied(_) | Event::Terminal(_) => return self.observe_by_encoding(rec, ctx, sink),
            _ => {}
        }
        if !std::mem::replace(&mut self.started, true) {
            self.time(said.clone());
        }
        match &rec.event {
            Event::Prompt { .. } | Event::Notice { .. } | Event::Error { fatal: false, .. } => {
                self.time(said);
            }
            Event::TextDelta { text, .. } if !text.is_empty() => self.note_chunk(text, said),
            Event::TextReplace { text } | Event::TextEnd { text: Some(text) } => {
                if let Some(rest) = ctx.extends.and_then(|n| text.get(n..)).filter(|rest| !rest.is_empty()) {
                    self.note_chunk(rest, said);
                }
            }
            Event::ToolCall(c) => self.note_tool_use(c, said),
            Event::ToolResult(r) => {
                let key = r.id.as_deref().unwrap_or_default();
                if self.open.shift_remove(key).is_none() {
                    let name = r.name.as_deref().or(ctx.call.name.as_deref()).unwrap_or("unknown");
                    let call = ToolCall {
                        id: Some(key.into()),
                        index: None,
                        name: name.into(),
                        arguments: r.arguments.clone(),
                        id_made: false,
                    };
                    self.note_tool_use(&call, said.clone());
                    self.open.shift_remove(key);
                }
                if r.status != ToolStatus::Completed {
                    make_room(&mut self.failed, key);
                    self.failed.insert(key.to_string(), said_error_type(rec).as_deref() == Some(REFUSED));
                }
                self.answer.clear();
                self.time(said);
            }
            Event::ToolWithdrawn { id: Some(id) } => {
                let open = self.open.shift_remove(id.as_str());
                if open.is_some() {
                    self.answer.clear();
                    self.time(said);
                }
            }
            Event::Usage(u) => {
                let entry = self.models.entry(u.model.as_deref().unwrap_or_default().to_string()).or_default();
                *entry = entry.plus(&ctx.delta);
            }
            Event::Error { message, fatal: true } => self.fatal = Some(message.clone()),
            Event::FinalAnswer { text }
                if !(ctx.answer_streamed || text.is_empty() || self.answer.ends_with(text.as_str())) =>
            {
                self.note_chunk(text, said);
            }
            _ => {}
        }
    }

    fn encode(&mut self, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        if self.done {
            return Fate::Absorbed;
        }
        if rec.origin == Dialect::Gemini && !rec.extra.is_empty() && !matches!(rec.event, Event::Extension { .. }) {
            count_unwritten(rec, sink);
        }
        let said = said_time(rec);
        if let Event::Session(_) = &rec.event {
            if self.started {
                return Fate::Absorbed;
            }
            self.init(ctx, said, sink);
            return Fate::Written;
        }
        // A line of a kind gemini.md does not list writes nothing (copied, it is written as
        // read): it does not open the run, so that the `init` of a stream that lacks one still
        // comes before its first listed line.
        if let Event::Extension { .. } | Event::Repeat = &rec.event {
            sink.report.dropped_kind(rec.event.kind());
            return Fate::Dropped;
        }
        self.init(ctx, said.clone(), sink);
        match &rec.event {
            Event::Prompt { text } => {
                self.put(sink, "message", said, vec![("role", json!("user")), ("content", json!(text))]);
            }
            Event::TextDelta { text, .. } if !text.is_empty() => self.chunk(text, said, sink),
            Event::TextReplace { text } | Event::TextEnd { text: Some(text) } => match ctx.extends {
                // Gemini only appends: what the replacement adds to the text streamed.
                Some(n) => match text.get(n..).filter(|rest| !rest.is_empty()) {
                    Some(rest) => self.chunk(rest, said, sink),
                    None => return Fate::Absorbed,
                },
                None => {
                    sink.report.dropped_kind(rec.event.kind());
                    return Fate::Dropped;
                }
            },
            Event::ToolCall(c) => self.tool_use(c, rec.origin == Dialect::Gemini, said, sink),
            Event::ToolResult(r) => self.tool_result(r, rec, ctx, sink),
            Event::PermissionDenied(_) => return self.refused(rec, ctx, sink),
            Event::ToolWithdrawn { id: Some(id) } => {
                let Some(open) = self.open.shift_remove(id.as_str()) else { return Fate::Absorbed };
                self.answer.clear();
                let error = json!({"type": TOOL_ERROR, "message": "withdrawn: the call was taken back before it ran"});
                let members = vec![("tool_id", json!(open.tool_id)), ("status", json!("error")), ("error", error)];
                self.put(sink, "tool_result", said, members);
            }
            Event::Usage(u) => {
                let key = u.model.as_deref().unwrap_or_default().to_string();
                let entry = self.models.entry(key).or_default();
                *entry = entry.plus(&ctx.delta);
                return Fate::Absorbed;
            }
            Event::Notice { text } => {
                self.put(sink, "error", said, vec![("severity", json!("warning")), ("message", json!(text))]);
            }
            Event::Error { message, fatal: false } => {
                self.put(sink, "error", said, vec![("severity", json!("error")), ("message", json!(message))]);
            }
            Event::Error { message, fatal: true } => {
                self.fatal = Some(message.clone());
                return Fate::Absorbed;
            }
            Event::FinalAnswer { text } => {
                if ctx.answer_streamed || text.is_empty() || self.answer.ends_with(text.as_str()) {
                    return Fate::Absorbed;
                }
                self.chunk(text, said, sink);
            }
            Event::Terminal(t) => self.close(t, rec, ctx, sink),
            Event::TextStart
            | Event::TextDelta { .. }
            | Event::TextEnd { text: None }
            | Event::ToolDraft(_)
            | Event::ToolOutput { .. }
            | Event::ToolWithdrawn { id: None }
            | Event::TurnStart { .. }
            | Event::TurnEnd { .. }
            | Event::RoundStart { .. }
            | Event::RoundEnd { .. } => return Fate::Absorbed,
            // Thinking has no place (gemini.md, Encode: 'report it dropped'), nor cost, stages,
            // compaction, retries, subagents, task lists, file changes, approvals, diagnostics,
            // or another dialect's lines.
            other => {
                sink.report.dropped_kind(other.kind());
                return Fate::Dropped;
            }
        }
        Fate::Written
    }
}

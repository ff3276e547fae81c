//! A run's canonical records as ACP `session/update`s, and its end as the prompt's answer.
//!
//! [`Updates`] is one run (one prompt): it is handed each record with the normalizer's context,
//! as an encoder is, and gives back the updates to send, at once (nothing is held back but the
//! text of the message being streamed, to tell what a whole text adds to it). [`SessionState`]
//! is what a session keeps across its runs: the tool call ids it gave out (an id must be unique
//! in the session, and codex starts again at `item_0` in every process), its usage and cost
//! sums, each resumed thread's last running total. [`answer`] maps a run's end to the answer,
//! from the outcome table and `reason_words` of `mappings/acp.json`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde_json::{json, Map, Value};

use super::schema::{
    ContentBlock, ContentChunk, Cost, Error, MessageId, Meta, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus,
    PromptResponse, SessionUpdate, StopReason, TextContent, ToolCall, ToolCallContent, ToolCallId, ToolCallLocation,
    ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind, Usage, UsageUpdate,
};
use super::{protocol, Protocol};
use crate::codec::{make_room, Context, Record};
use crate::contract::Contract;
use crate::model::{Arguments, Event, Outcome, Scope, Terminal, Tokens, ToolStatus};

/// What a session keeps across its runs.
#[derive(Debug, Default)]
pub struct SessionState {
    /// Tool call ids given out in the session (the most recent [`crate::codec::MAX_OPEN_CALLS`]).
    ids: IndexMap<String, ()>,
    /// The sums of the turns' usage.
    pub usage: Tokens,
    /// The session's cost so far, in US dollars, where its runs state one.
    pub cost: Option<f64>,
    /// The last running total seen per session id an agent stated, for an agent whose resumed
    /// runs report the session's total (`resume.usage` `session_total`: codex's thread).
    totals: BTreeMap<String, (Tokens, Option<f64>)>,
    /// The session id the last run stated: where a resume goes on from.
    pub resume_id: Option<String>,
    /// Prompts run so far (numbers the message ids).
    pub prompts: u64,
}

/// One tool call of the run, as the client knows it.
#[derive(Debug)]
struct Call {
    /// The id the client knows it by.
    id: String,
    status: ToolCallStatus,
    /// A `tool_call` update was sent for it.
    announced: bool,
    /// Output so far, its last [`super::Limits::tool_output_bytes`].
    output: String,
}

/// A message being streamed: its id and its text so far.
#[derive(Debug, Default)]
struct Message {
    id: String,
    text: String,
}

/// How a run ended, as the server saw it: what the answer is made of.
#[derive(Debug, Clone, Default)]
pub struct RunEnd {
    /// The command's name, for the messages.
    pub program: String,
    /// A `session/cancel` (or a `$/cancel_request` naming the prompt) came first.
    pub cancelled: bool,
    /// `--timeout` stopped the run, after this long (its words: `30s`).
    pub timed_out: Option<String>,
    /// The signal that ended the child, where one did.
    pub signal: Option<i32>,
    /// The child's exit code, where it exited.
    pub exit_code: Option<i32>,
    /// The run was a resumed session.
    pub resumed: bool,
    /// How `--permission allow` would have run it, where the source's contract says.
    pub approval_hint: Option<String>,
}

/// One run's updates.
pub struct Updates {
    prompt: u64,
    messages: u64,
    cwd: PathBuf,
    text: Option<Message>,
    /// The last message's text, kept after it ended: what a final answer may extend.
    last_text: Message,
    thought: Option<Message>,
    /// The run's calls by the id the normalizer gave them.
    calls: IndexMap<String, Call>,
    /// Kinds of record ACP has no place for, and how many.
    pub dropped: BTreeMap<&'static str, u64>,
    /// The run's end as its stream says it.
    pub terminal: Option<Terminal>,
    /// The run's totals (the ledger's) as of the last record.
    pub totals: Tokens,
    /// The session id the run stated.
    pub session_id: Option<String>,
    /// The name of the last call refused for want of approval, and why.
    pub denied: Option<(String, Option<String>)>,
    /// The actions the run stopped to await approval for.
    pub approval: Vec<String>,
    /// The last round's figures: what the context gauge shows.
    last_round: Option<Tokens>,
    /// The run's cost so far.
    cost: Option<f64>,
    /// The context window's size, where known (`--context-window`).
    window: Option<u64>,
    source: Option<&'static Contract>,
    p: &'static Protocol,
}

impl Updates {
    /// The run of the session's prompt number `prompt`, its agent working in `cwd`.
    pub fn new(prompt: u64, cwd: &Path, window: Option<u64>) -> Self {
        Updates {
            prompt,
            messages: 0,
            cwd: cwd.to_path_buf(),
            text: None,
            last_text: Message::default(),
            thought: None,
            calls: IndexMap::new(),
            dropped: BTreeMap::new(),
            terminal: None,
            totals: Tokens::default(),
            session_id: None,
            denied: None,
            approval: Vec::new(),
            last_round: None,
            cost: None,
            window,
            source: None,
            p: protocol(),
        }
    }

    fn next_message(&mut self) -> Message {
        self.messages += 1;
        Message { id: format!("m-{}-{}", self.prompt, self.messages), text: String::new() }
    }

    fn drop_kind(&mut self, kind: &'static str) {
        *self.dropped.entry(kind).or_default() += 1;
    }

    /// The updates for one record.
    pub fn record(&mut self, rec: &Record, ctx: &Context, session: &mut SessionState) -> Vec<SessionUpdate> {
        if self.source.is_none() {
            self.source = ctx.source.map(|d| d.contract());
        }
        self.totals = ctx.totals;
        if ctx.session_id.is_some() {
            self.session_id.clone_from(&ctx.session_id);
        }
        let mut out = Vec::new();
        match &rec.event {
            Event::TextStart => {
                self.end_message();
                let m = self.next_message();
                self.text = Some(m);
            }
            Event::TextDelta { text, .. } => self.message_text(text, &mut out),
            Event::TextReplace { text } => self.whole_text(text, &mut out),
            Event::TextEnd { text } => {
                if let Some(whole) = text {
                    self.whole_text(whole, &mut out);
                }
                self.end_message();
            }
            Event::FinalAnswer { text } if (!ctx.answer_streamed || self.no_text_sent()) && !text.is_empty() => {
                // A text the run did not stream (localcode's result, an answer line), or a
                // recap of a run that sent no message at all.
                self.whole_text(text, &mut out);
                self.end_message();
            }
            Event::FinalAnswer { .. } => {}
            Event::ReasoningStart { .. } => {
                let m = self.next_message();
                self.thought = Some(m);
            }
            Event::ReasoningDelta { text } => self.thought_text(text, &mut out),
            Event::ReasoningEnd { text } => {
                if let Some(whole) = text {
                    let streamed = self.thought.as_ref().map(|m| m.text.clone()).unwrap_or_default();
                    if streamed.is_empty() {
                        self.thought_text(whole, &mut out);
                    } else if let Some(more) = whole.strip_prefix(streamed.as_str()) {
                        self.thought_text(more, &mut out);
                    } else {
                        self.drop_kind("reasoning_end");
                    }
                }
                self.thought = None;
            }
            Event::ToolDraft(d) => {
                if let (Some(id), Some(name)) = (&d.id, &d.name) {
                    if !self.calls.contains_key(id.as_str()) {
                        self.end_message();
                        self.thought = None;
                        let acp_id = session.give(id);
                        let kind = self.p.tool_kind(self.source, name);
                        let call = ToolCall::new(ToolCallId::new(acp_id.as_str()), title(name, kind, None, self.p))
                            .name(name.clone())
                            .kind(kind)
                            .status(ToolCallStatus::Pending);
                        out.push(SessionUpdate::ToolCall(call));
                        self.open(id, acp_id, ToolCallStatus::Pending);
                    }
                }
            }
            Event::ToolCall(c) => {
                // Text after a call is a message of its own (as the normalizer's text is).
                self.end_message();
                self.thought = None;
                let id = c.id.as_deref().unwrap_or_default().to_string();
                let kind = self.p.tool_kind(self.source, &c.name);
                let args = c.arguments.to_object();
                let title = title(&c.name, kind, Some(&args), self.p);
                let locations = self.locations(&args);
                match self.calls.get_mut(&id) {
                    Some(call) if call.status == ToolCallStatus::Pending => {
                        call.status = ToolCallStatus::InProgress;
                        let fields = ToolCallUpdateFields::new()
                            .status(ToolCallStatus::InProgress)
                            .title(title)
                            .name(c.name.to_string())
                            .kind(kind)
                            .raw_input(args)
                            .locations((!locations.is_empty()).then_some(locations));
                        out.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                            ToolCallId::new(call.id.clone()),
                            fields,
                        )));
                    }
                    _ => {
                        let acp_id = session.give(&id);
                        let call = ToolCall::new(ToolCallId::new(acp_id.as_str()), title)
                            .name(c.name.to_string())
                            .kind(kind)
                            .status(ToolCallStatus::InProgress)
                            .raw_input(args)
                            .locations(locations);
                        out.push(SessionUpdate::ToolCall(call));
                        self.open(&id, acp_id, ToolCallStatus::InProgress);
                    }
                }
            }
            Event::ToolOutput { id, text, accumulated } => {
                let key = id.clone().or_else(|| self.calls.keys().last().cloned());
                let limit = self.p.limits.tool_output_bytes;
                if let Some(call) = key.and_then(|k| self.calls.get_mut(&k)) {
                    if *accumulated {
                        call.output.clear();
                    }
                    call.output.push_str(&text.as_str());
                    keep_tail(&mut call.output, limit);
                    let fields = ToolCallUpdateFields::new().content(vec![text_content(&call.output)]);
                    out.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                        ToolCallId::new(call.id.clone()),
                        fields,
                    )));
                } else {
                    self.drop_kind("tool_output");
                }
            }
            Event::ToolResult(r) => {
                let id = r.id.as_deref().unwrap_or_default().to_string();
                let output = r.output.as_ref().map(|t| t.as_str().into_owned());
                let (status, why) = match r.status {
                    ToolStatus::Completed => (ToolCallStatus::Completed, None),
                    ToolStatus::Failed => (ToolCallStatus::Failed, None),
                    ToolStatus::Cancelled => (ToolCallStatus::Failed, Some("cancelled")),
                };
                let name = r.name.clone().or_else(|| ctx.call.name.clone()).unwrap_or_default();
                let streamed = self.calls.get(&id).map(|c| c.output.clone()).unwrap_or_default();
                let shown = output.clone().filter(|o| !o.is_empty()).unwrap_or(streamed);
                let mut shown_tail = shown;
                keep_tail(&mut shown_tail, self.p.limits.tool_output_bytes);
                let content = if !shown_tail.is_empty() {
                    vec![text_content(&shown_tail)]
                } else if let Some(e) = r.error.as_deref().filter(|e| !e.is_empty()) {
                    vec![text_content(e)]
                } else {
                    Vec::new()
                };
                let mut raw = Map::new();
                if let Some(o) = &output {
                    raw.insert("output".into(), Value::String(o.clone()));
                }
                if let Some(e) = &r.error {
                    raw.insert("error".into(), Value::String(e.clone()));
                }
                self.finish_call(
                    &id,
                    &name,
                    &r.arguments,
                    status,
                    content,
                    Some(Value::Object(raw)),
                    why,
                    ctx.matched,
                    session,
                    &mut out,
                );
            }
            Event::ToolWithdrawn { id } => {
                let id = id.clone().unwrap_or_default();
                let name = ctx.call.name.clone().unwrap_or_default();
                let content = vec![text_content("withdrawn by the agent before it ran")];
                let args = Arguments::default();
                self.finish_call(
                    &id,
                    &name,
                    &args,
                    ToolCallStatus::Failed,
                    content,
                    None,
                    Some("withdrawn"),
                    true,
                    session,
                    &mut out,
                );
            }
            Event::PermissionDenied(d) => {
                let id = d.id.clone().unwrap_or_default();
                let why = match &d.reason {
                    Some(r) if !r.is_empty() => format!("permission denied: {r}"),
                    _ => "permission denied".to_string(),
                };
                self.denied = Some((d.name.clone(), d.reason.clone()));
                if ctx.answered {
                    // The call was answered as failed already: the refusal only says why.
                    return out;
                }
                let content = vec![text_content(&why)];
                self.finish_call(
                    &id,
                    &d.name,
                    &d.arguments,
                    ToolCallStatus::Failed,
                    content,
                    None,
                    Some("permission_denied"),
                    ctx.matched,
                    session,
                    &mut out,
                );
            }
            // The actions a run stopped for want of approval: named in the answer.
            Event::Approval { actions } => self.approval.clone_from(actions),
            Event::Todo { items } => match self.plan(items) {
                Some(plan) => out.push(SessionUpdate::Plan(plan)),
                None => self.drop_kind("todo"),
            },
            Event::Usage(u) => {
                if u.scope == Scope::Round {
                    self.last_round = Some(if u.basis == crate::model::Basis::Delta { u.tokens } else { ctx.delta });
                    if let Some(g) = self.gauge(session) {
                        out.push(g);
                    }
                }
            }
            Event::Cost { usd, total, .. } => {
                let so_far = if *total { 0.0 } else { self.cost.unwrap_or(0.0) };
                self.cost = Some(so_far + usd);
            }
            Event::Terminal(t) => {
                // The run's final text where the stream did not send it as a message (Claude's
                // result text after a background task's turn).
                if let Some(text) = t.final_text.as_deref().filter(|t| !t.is_empty()) {
                    self.whole_text(text, &mut out);
                    self.end_message();
                }
                self.terminal = Some(t.clone());
                if t.session_id.is_some() {
                    self.session_id.clone_from(&t.session_id);
                }
                if t.cost_usd.is_some() {
                    self.cost = t.cost_usd;
                }
                // The window the source states at its end (Claude's result), where
                // `--context-window` gave none: the last gauge, before the answer, has a size.
                if self.window.is_none() {
                    self.window = t.context_window;
                }
            }
            Event::TurnStart { .. } => {
                self.end_message();
                self.thought = None;
            }
            Event::Session(_)
            | Event::TurnEnd { .. }
            | Event::RoundStart { .. }
            | Event::RoundEnd { .. }
            | Event::Prompt { .. } => {}
            other => self.drop_kind(other.kind()),
        }
        out
    }

    fn open(&mut self, id: &str, acp_id: String, status: ToolCallStatus) {
        make_room(&mut self.calls, id);
        self.calls.insert(id.to_string(), Call { id: acp_id, status, announced: true, output: String::new() });
    }

    /// A call's end: an update of the call the client knows, or the whole call where it knows
    /// none (a result or refusal of a call the stream never showed).
    #[allow(clippy::too_many_arguments)]
    fn finish_call(
        &mut self,
        id: &str,
        name: &str,
        args: &Arguments,
        status: ToolCallStatus,
        content: Vec<ToolCallContent>,
        raw_output: Option<Value>,
        why: Option<&str>,
        known: bool,
        session: &mut SessionState,
        out: &mut Vec<SessionUpdate>,
    ) {
        let meta = why.map(status_meta);
        // A result or refusal of a call the stream never showed is a call of its own, whatever
        // id the normalizer gave it (its `call-N` may be a source's own id too).
        match self.calls.get_mut(id).filter(|c| c.announced && known) {
            Some(call) => {
                call.status = status;
                let fields = ToolCallUpdateFields::new()
                    .status(status)
                    .content((!content.is_empty()).then_some(content))
                    .raw_output(raw_output);
                out.push(SessionUpdate::ToolCallUpdate(
                    ToolCallUpdate::new(ToolCallId::new(call.id.clone()), fields).meta(meta),
                ));
            }
            None => {
                let acp_id = session.give(if id.is_empty() { "call" } else { id });
                let kind = self.p.tool_kind(self.source, name);
                let input = args.to_object();
                let title = title(if name.is_empty() { "tool" } else { name }, kind, Some(&input), self.p);
                let locations = self.locations(&input);
                let call = ToolCall::new(ToolCallId::new(acp_id.as_str()), title)
                    .name(name.to_string())
                    .kind(kind)
                    .status(status)
                    .content(content)
                    .locations(locations)
                    .raw_input((!args.is_empty()).then_some(input))
                    .raw_output(raw_output)
                    .meta(meta);
                out.push(SessionUpdate::ToolCall(call));
                self.open(id, acp_id, status);
            }
        }
    }

    /// The run has sent no message text yet.
    fn no_text_sent(&self) -> bool {
        self.last_text.text.is_empty() && self.text.as_ref().is_none_or(|m| m.text.is_empty())
    }

    /// Ends the message being streamed: what comes next is another one.
    fn end_message(&mut self) {
        if let Some(m) = self.text.take() {
            self.last_text = m;
        }
    }

    /// A whole text (a replacement, a message's end, an answer): nothing where the client has
    /// it already, the rest where it extends what was sent, else a message of its own (chunks
    /// only append: the rewritten text stays in the client's history, the new one comes last).
    fn whole_text(&mut self, text: &str, out: &mut Vec<SessionUpdate>) {
        let open = self.text.is_some();
        let sent = self.text.as_ref().map_or(self.last_text.text.as_str(), |m| m.text.as_str()).to_string();
        if text == sent || text.is_empty() {
            return;
        }
        if open && sent.is_empty() {
            return self.message_text(text, out);
        }
        if !sent.is_empty() && text.starts_with(&sent) {
            if !open {
                self.text = Some(std::mem::take(&mut self.last_text));
            }
            return self.message_text(&text[sent.len()..], out);
        }
        self.end_message();
        self.text = Some(self.next_message());
        self.message_text(text, out);
    }

    fn message_text(&mut self, text: &str, out: &mut Vec<SessionUpdate>) {
        if self.text.is_none() {
            self.text = Some(self.next_message());
        }
        let m = self.text.as_mut().expect("a message is open");
        if text.is_empty() {
            return;
        }
        m.text.push_str(text);
        out.push(SessionUpdate::AgentMessageChunk(chunk(text, &m.id)));
    }

    fn thought_text(&mut self, text: &str, out: &mut Vec<SessionUpdate>) {
        if self.thought.is_none() {
            self.thought = Some(self.next_message());
        }
        let m = self.thought.as_mut().expect("a thought is open");
        if text.is_empty() {
            return;
        }
        m.text.push_str(text);
        out.push(SessionUpdate::AgentThoughtChunk(chunk(text, &m.id)));
    }

    /// The files a call's arguments name, absolute.
    fn locations(&self, args: &Value) -> Vec<ToolCallLocation> {
        let mut out = Vec::new();
        let mut add = |v: Option<&Value>| {
            if let Some(p) = v.and_then(Value::as_str).filter(|p| !p.is_empty() && !p.contains('\n')) {
                let path = Path::new(p);
                let abs = if path.is_absolute() { path.to_path_buf() } else { self.cwd.join(path) };
                if !out.iter().any(|l: &ToolCallLocation| l.path == abs) {
                    out.push(ToolCallLocation::new(abs));
                }
            }
        };
        for name in &self.p.location_arguments.names {
            add(args.get(name));
        }
        for list in &self.p.location_arguments.lists {
            for item in args.get(list).and_then(Value::as_array).into_iter().flatten() {
                for name in &self.p.location_arguments.names {
                    add(item.get(name));
                }
            }
        }
        out
    }

    /// A task list as a plan: entries from a list (or an object holding one).
    fn plan(&self, items: &Value) -> Option<Plan> {
        let words = &self.p.plan;
        let list = match items {
            Value::Array(a) => a,
            Value::Object(m) => words.list_members.iter().find_map(|k| m.get(k).and_then(Value::as_array))?,
            _ => return None,
        };
        let mut entries = Vec::new();
        for item in list {
            let content = match item {
                Value::String(s) => s.clone(),
                Value::Object(m) => words
                    .content_members
                    .iter()
                    .find_map(|k| m.get(k).and_then(Value::as_str))
                    .unwrap_or("")
                    .to_string(),
                _ => continue,
            };
            let status_word = item.get("status").and_then(Value::as_str).map(str::to_lowercase);
            let status = match status_word.as_deref().and_then(|w| words.status_words.get(w)).and_then(Value::as_str) {
                Some("completed") => PlanEntryStatus::Completed,
                Some("in_progress") => PlanEntryStatus::InProgress,
                Some(_) => PlanEntryStatus::Pending,
                None if item.get("completed").and_then(Value::as_bool) == Some(true) => PlanEntryStatus::Completed,
                None => PlanEntryStatus::Pending,
            };
            let priority = item
                .get("priority")
                .and_then(Value::as_str)
                .map(str::to_lowercase)
                .filter(|p| words.priorities.contains(p))
                .unwrap_or_else(|| words.default_priority.clone());
            let priority = match priority.as_str() {
                "high" => PlanEntryPriority::High,
                "low" => PlanEntryPriority::Low,
                _ => PlanEntryPriority::Medium,
            };
            entries.push(PlanEntry::new(content, priority, status));
        }
        Some(Plan::new(entries))
    }

    /// The context gauge, where the window is known: the last request's input and output, and
    /// the session's cost with this run's so far.
    fn gauge(&self, session: &SessionState) -> Option<SessionUpdate> {
        let size = self.window?;
        let last = self.last_round?;
        let used = last.input.unwrap_or(0).saturating_add(last.output.unwrap_or(0));
        let cost = match (session.cost, self.cost) {
            (None, None) => None,
            (a, b) => Some(Cost::new(a.unwrap_or(0.0) + b.unwrap_or(0.0), "USD")),
        };
        Some(SessionUpdate::UsageUpdate(UsageUpdate::new(used, size).cost(cost)))
    }

    /// The end of the run before its answer: every call still pending or running set failed,
    /// saying why (`cancelled`, `timeout`, `no result`), then the last context gauge.
    pub fn close(&mut self, why: &str, session: &SessionState) -> Vec<SessionUpdate> {
        let mut out = Vec::new();
        for call in self.calls.values_mut() {
            if matches!(call.status, ToolCallStatus::Pending | ToolCallStatus::InProgress) {
                call.status = ToolCallStatus::Failed;
                let text = match why {
                    "no result" => "the run ended without this call's result".to_string(),
                    w => format!("the run ended ({w}) before this call's result"),
                };
                let fields =
                    ToolCallUpdateFields::new().status(ToolCallStatus::Failed).content(vec![text_content(&text)]);
                out.push(SessionUpdate::ToolCallUpdate(
                    ToolCallUpdate::new(ToolCallId::new(call.id.clone()), fields).meta(status_meta(why)),
                ));
            }
        }
        if let Some(g) = self.gauge(session) {
            out.push(g);
        }
        out
    }

    /// The run's usage as the session declares it per turn (resumed running totals
    /// differenced), and its cost; both added to the session's sums.
    pub fn turn_usage(&mut self, end: &RunEnd, session: &mut SessionState) -> (Tokens, Option<f64>) {
        let totals = self.terminal.as_ref().and_then(|t| t.usage).unwrap_or(self.totals);
        let resume = self.source.and_then(|c| c.resume.as_ref());
        let mut usage = totals;
        let mut cost = self.cost;
        if let (Some(r), Some(id)) = (resume, &self.session_id) {
            let (last, last_cost) = session.totals.get(id).copied().unwrap_or_default();
            if r.usage == "session_total" {
                usage = totals.since(&last);
            }
            match r.cost.as_str() {
                "session_total" => cost = cost.map(|c| (c - last_cost.unwrap_or(0.0)).max(0.0)),
                "unsettled" if end.resumed => cost = None,
                _ => {}
            }
            session.totals.insert(id.clone(), (totals, self.cost));
        }
        session.usage = session.usage.plus(&usage);
        if let Some(c) = cost {
            session.cost = Some(session.cost.unwrap_or(0.0) + c);
        }
        (usage, cost)
    }
}

impl SessionState {
    /// The id a call goes by in the session: its own, or `ID-2`, `ID-3`... where the session
    /// gave that one out already.
    fn give(&mut self, id: &str) -> String {
        let mut given = id.to_string();
        let mut n = 2u64;
        while self.ids.contains_key(&given) {
            given = format!("{id}-{n}");
            n += 1;
        }
        make_room(&mut self.ids, given.as_str());
        self.ids.insert(given.clone(), ());
        given
    }
}

/// A call's title: its name, then the first argument its kind lists, on one line, cut to the
/// limit (`bash: npm test`).
pub fn title(name: &str, kind: ToolKind, args: Option<&Value>, p: &Protocol) -> String {
    let shown = args.and_then(|a| {
        p.title_arguments(kind).into_iter().find_map(|k| match a.get(k) {
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
            Some(Value::Array(parts)) if !parts.is_empty() => Some(
                parts
                    .iter()
                    .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            _ => None,
        })
    });
    // Else the first path of a list of changes (codex's file_change).
    let shown = shown.or_else(|| {
        let a = args?;
        p.location_arguments.lists.iter().find_map(|l| {
            let first = a.get(l)?.as_array()?.first()?;
            p.location_arguments.names.iter().find_map(|n| first.get(n)?.as_str().map(str::to_string))
        })
    });
    let whole = match shown {
        Some(s) => format!("{name}: {}", s.split_whitespace().collect::<Vec<_>>().join(" ")),
        None => name.to_string(),
    };
    let (cut, more) = crate::json::cut_chars(&whole, p.limits.title_chars);
    if more {
        let (shorter, _) = crate::json::cut_chars(&whole, p.limits.title_chars.saturating_sub(1));
        format!("{shorter}…")
    } else {
        cut.to_string()
    }
}

fn chunk(text: &str, id: &str) -> ContentChunk {
    ContentChunk::new(ContentBlock::Text(TextContent::new(text))).message_id(MessageId::new(id))
}

fn text_content(text: &str) -> ToolCallContent {
    ToolCallContent::from(ContentBlock::Text(TextContent::new(text)))
}

/// `_meta.agentgate.status`: why a call is `failed` where v1 has no word for it.
fn status_meta(why: &str) -> Meta {
    let mut m = Meta::new();
    m.insert("agentgate".into(), json!({ "status": why }));
    m
}

/// Keeps the last `max` bytes of `s`, cut on a character boundary.
fn keep_tail(s: &mut String, max: usize) {
    if s.len() > max {
        let mut at = s.len() - max;
        while !s.is_char_boundary(at) {
            at += 1;
        }
        s.drain(..at);
    }
}

/// Usage figures as ACP's `Usage`, where input and output are both known (both are required).
pub fn usage(t: &Tokens) -> Option<Usage> {
    let (input, output) = (t.input?, t.output?);
    let total = t.total.unwrap_or(input.saturating_add(output));
    Some(
        Usage::new(total, input, output)
            .thought_tokens(t.reasoning)
            .cached_read_tokens(t.cache_read)
            .cached_write_tokens(t.cache_write),
    )
}

/// Token figures as JSON, camelCase as ACP names them, the unknown ones left out.
fn tokens_json(t: &Tokens) -> Value {
    let mut m = Map::new();
    for (k, v) in [
        ("inputTokens", t.input),
        ("outputTokens", t.output),
        ("totalTokens", t.effective_total()),
        ("thoughtTokens", t.reasoning),
        ("cachedReadTokens", t.cache_read),
        ("cachedWriteTokens", t.cache_write),
    ] {
        if let Some(v) = v {
            m.insert(k.into(), json!(v));
        }
    }
    Value::Object(m)
}

/// The answer's `_meta.agentgate`: the usage's basis and the session's sums, the run's cost.
fn answer_meta(turn: &Tokens, cost: Option<f64>, session: &SessionState) -> Meta {
    let mut usage = Map::new();
    usage.insert("basis".into(), json!("turn"));
    usage.insert("inputIncludesCache".into(), json!(true));
    usage.insert("outputIncludesThought".into(), json!(true));
    if !turn.is_empty() {
        usage.insert("turn".into(), tokens_json(turn));
    }
    usage.insert("session".into(), tokens_json(&session.usage));
    let mut ours = Map::new();
    ours.insert("usage".into(), Value::Object(usage));
    if let Some(c) = cost {
        ours.insert("costUsd".into(), json!(c));
    }
    if let Some(c) = session.cost {
        ours.insert("sessionCostUsd".into(), json!(c));
    }
    let mut m = Meta::new();
    m.insert("agentgate".into(), Value::Object(ours));
    m
}

/// The answer to the run's `session/prompt`: a stop reason, or an error (the outcome table of
/// `mappings/acp.json`). `turn` and `cost` are the run's, as [`Updates::turn_usage`] made them.
pub fn answer(
    end: &RunEnd,
    terminal: Option<&Terminal>,
    denied: Option<&(String, Option<String>)>,
    approval: &[String],
    turn: &Tokens,
    cost: Option<f64>,
    session: &SessionState,
) -> Result<PromptResponse, Error> {
    let p = protocol();
    let mut meta = answer_meta(turn, cost, session);
    let outcome = terminal.map_or(Outcome::Incomplete, |t| t.outcome);
    let reason = terminal.and_then(|t| t.reason.clone());
    if !end.cancelled {
        // The run's own outcome and reason beside the stop reason, which names fewer of them
        // (loom's StepBudget and Claude's error_max_turns are both max_turn_requests).
        if let Some(Value::Object(ours)) = meta.get_mut("agentgate") {
            ours.insert("outcome".into(), json!(outcome.name()));
            if let Some(r) = &reason {
                ours.insert("reason".into(), json!(r));
            }
        }
    }
    let stop = |reason: StopReason| Ok(PromptResponse::new(reason).usage(usage(turn)).meta(meta.clone()));
    if end.cancelled {
        return stop(StopReason::Cancelled);
    }
    let error = terminal.and_then(|t| t.error.clone());
    let program = &end.program;
    let (code, message, outcome) = if let Some(after) = &end.timed_out {
        (p.code("request_cancelled"), format!("timeout: {program} was stopped after {after}"), Outcome::Timeout)
    } else {
        match outcome {
            Outcome::Completed => {
                let r = reason.as_deref().and_then(|r| p.stop_reason_for(r)).filter(|r| *r == StopReason::MaxTokens);
                return stop(r.unwrap_or(StopReason::EndTurn));
            }
            Outcome::Incomplete => {
                if let Some(r) = reason.as_deref().and_then(|r| p.stop_reason_for(r)) {
                    return stop(r);
                }
                let why = error.clone().or(reason.clone()).unwrap_or_else(|| "the run did not complete".into());
                (p.code("internal_error"), format!("{program} failed: {why}"), outcome)
            }
            Outcome::Timeout => {
                let why = reason.clone().unwrap_or_else(|| format!("timeout: {program} timed out"));
                (p.code("request_cancelled"), why, outcome)
            }
            Outcome::Interrupted => {
                let why = match (end.signal, &reason) {
                    (Some(sig), _) => format!("{program} ended by signal {sig}"),
                    (None, Some(r)) => format!("{program} was interrupted: {r}"),
                    (None, None) => format!("{program} was interrupted"),
                };
                (p.code("request_cancelled"), why, outcome)
            }
            Outcome::PermissionDenied => {
                let (tool, why) = match (denied, approval.first()) {
                    (Some((tool, why)), _) => (tool.clone(), why.clone().or(reason.clone())),
                    (None, Some(action)) => (action.clone(), reason.clone()),
                    (None, None) => ("a tool".to_string(), reason.clone()),
                };
                let mut m = format!("permission denied: {tool}: {}", why.as_deref().unwrap_or("approval needed"));
                if let Some(hint) = &end.approval_hint {
                    m.push_str(&format!(" ({hint})"));
                }
                (p.code("internal_error"), m, outcome)
            }
            Outcome::Failed => {
                let why = error.clone().or(reason.clone()).unwrap_or_else(|| "the run failed".into());
                (p.code("internal_error"), format!("{program} failed: {why}"), outcome)
            }
        }
    };
    let mut data = Map::new();
    data.insert("outcome".into(), json!(outcome.name()));
    for (k, v) in [("reason", &reason), ("error", &error)] {
        if let Some(v) = v {
            data.insert(k.into(), json!(v));
        }
    }
    if let Some(code) = terminal.and_then(|t| t.exit_code).or(end.exit_code.map(i64::from)) {
        data.insert("exitStatus".into(), json!(code));
    }
    if !turn.is_empty() {
        data.insert("usage".into(), tokens_json(turn));
    }
    if let Some(c) = cost {
        data.insert("costUsd".into(), json!(c));
    }
    if !approval.is_empty() {
        data.insert("approval".into(), json!(approval));
    }
    Err(Error::new(code, message).data(Value::Object(data)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Dialect;
    use crate::model::ToolCall as Call;

    fn rec(e: Event) -> Record {
        Record::new(Dialect::Canonical, e)
    }

    fn json_of(u: &[SessionUpdate]) -> Vec<Value> {
        u.iter().map(|u| serde_json::to_value(u).unwrap()).collect()
    }

    #[test]
    fn streamed_text_is_chunks_of_one_message_and_a_whole_text_adds_only_its_rest() {
        let mut s = SessionState::default();
        let mut u = Updates::new(3, Path::new("/w"), None);
        let ctx = Context::default();
        let mut all = Vec::new();
        all.extend(u.record(&rec(Event::TextStart), &ctx, &mut s));
        all.extend(u.record(&rec(Event::TextDelta { text: "Hel".into(), chars: None }), &ctx, &mut s));
        all.extend(u.record(&rec(Event::TextDelta { text: "lo".into(), chars: None }), &ctx, &mut s));
        let ext = Context { extends: Some(5), ..Context::default() };
        all.extend(u.record(&rec(Event::TextEnd { text: Some("Hello there".into()) }), &ext, &mut s));
        let v = json_of(&all);
        assert_eq!(v.len(), 3);
        assert_eq!(
            v[0],
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hel"}, "messageId": "m-3-1"})
        );
        assert_eq!(v[2]["content"]["text"], " there");
        assert_eq!(v[2]["messageId"], "m-3-1");
        // A final answer that was streamed adds nothing; one that was not is a message.
        let streamed = Context { answer_streamed: true, ..Context::default() };
        assert!(u.record(&rec(Event::FinalAnswer { text: "Hello there".into() }), &streamed, &mut s).is_empty());
        let v = json_of(&u.record(&rec(Event::FinalAnswer { text: "Bye".into() }), &ctx, &mut s));
        assert_eq!((v[0]["content"]["text"].as_str(), v[0]["messageId"].as_str()), (Some("Bye"), Some("m-3-2")));
    }

    #[test]
    fn a_call_is_announced_once_and_its_result_updates_it() {
        let mut s = SessionState::default();
        let mut u = Updates::new(1, Path::new("/repo"), None);
        let ctx = Context::default();
        let call = Call {
            id: Some("item_1".into()),
            name: "Bash".into(),
            arguments: Arguments::value(json!({"command": "npm\n test", "path": "src/a.rs"})),
            ..Call::default()
        };
        let v = json_of(&u.record(&rec(Event::ToolCall(call)), &ctx, &mut s));
        assert_eq!(
            v[0],
            json!({"sessionUpdate": "tool_call", "toolCallId": "item_1", "title": "Bash: npm test", "name": "Bash",
                   "kind": "execute", "status": "in_progress", "locations": [{"path": "/repo/src/a.rs"}],
                   "rawInput": {"command": "npm\n test", "path": "src/a.rs"}})
        );
        let result = crate::model::ToolResult {
            id: Some("item_1".into()),
            index: None,
            name: None,
            status: ToolStatus::Failed,
            output: Some(crate::model::Text::from_json_inner("1 failed")),
            error: Some("exit 1".into()),
            arguments: Arguments::default(),
        };
        // The normalizer matched the result to its call.
        let matched = Context { matched: true, ..Context::default() };
        let v = json_of(&u.record(&rec(Event::ToolResult(result.clone())), &matched, &mut s));
        assert_eq!(
            v[0],
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "item_1", "status": "failed",
                   "content": [{"type": "content", "content": {"type": "text", "text": "1 failed"}}],
                   "rawOutput": {"output": "1 failed", "error": "exit 1"}})
        );
        assert!(u.close("cancelled", &s).is_empty(), "a call with its result stays as it is");
        // A result of a call never seen, whose made-up id a source's own call had: a call of its own.
        let v = json_of(&u.record(&rec(Event::ToolResult(result)), &ctx, &mut s));
        assert_eq!(
            (v[0]["sessionUpdate"].as_str(), v[0]["toolCallId"].as_str()),
            (Some("tool_call"), Some("item_1-2"))
        );
        // The next run of the session that uses the id again gets another.
        let mut next = Updates::new(2, Path::new("/repo"), None);
        let again = Call { id: Some("item_1".into()), name: "read_file".into(), ..Call::default() };
        let v = json_of(&next.record(&rec(Event::ToolCall(again)), &ctx, &mut s));
        assert_eq!((v[0]["toolCallId"].as_str(), v[0]["kind"].as_str()), (Some("item_1-3"), Some("read")));
        let v = json_of(&next.close("cancelled", &s));
        assert_eq!(v[0]["status"], "failed");
        assert_eq!(v[0]["_meta"], json!({"agentgate": {"status": "cancelled"}}));
    }

    #[test]
    fn the_answer_follows_the_outcome_table() {
        let s = SessionState::default();
        let end = RunEnd { program: "codex".into(), ..RunEnd::default() };
        let t = |o: Outcome, reason: Option<&str>| {
            let mut t = Terminal::new(o);
            t.reason = reason.map(str::to_string);
            t
        };
        let tokens = Tokens { input: Some(10), output: Some(2), ..Tokens::default() };
        let ok = answer(&end, Some(&t(Outcome::Completed, None)), None, &[], &tokens, None, &s).unwrap();
        let v = serde_json::to_value(&ok).unwrap();
        assert_eq!(v["stopReason"], "end_turn");
        assert_eq!(v["usage"], json!({"totalTokens": 12, "inputTokens": 10, "outputTokens": 2}));
        let length = answer(&end, Some(&t(Outcome::Completed, Some("length"))), None, &[], &tokens, None, &s).unwrap();
        assert_eq!(length.stop_reason, StopReason::MaxTokens);
        let turns = answer(&end, Some(&t(Outcome::Incomplete, Some("error_max_turns"))), None, &[], &tokens, None, &s);
        assert_eq!(turns.unwrap().stop_reason, StopReason::MaxTurnRequests);
        let failed = answer(&end, Some(&t(Outcome::Failed, Some("boom"))), None, &[], &Tokens::default(), None, &s);
        let e = failed.unwrap_err();
        assert_eq!((i32::from(e.code), e.message.as_str()), (-32603, "codex failed: boom"));
        let cancelled = RunEnd { cancelled: true, ..end.clone() };
        let c = answer(&cancelled, Some(&t(Outcome::Failed, None)), None, &[], &Tokens::default(), None, &s).unwrap();
        assert_eq!((c.stop_reason, c.usage), (StopReason::Cancelled, None), "no usage is no usage, never zeros");
        let timeout = RunEnd { timed_out: Some("2s".into()), ..end };
        let e = answer(&timeout, None, None, &[], &Tokens::default(), None, &s).unwrap_err();
        assert_eq!((i32::from(e.code), e.message.as_str()), (-32800, "timeout: codex was stopped after 2s"));
    }

    #[test]
    fn a_task_list_is_a_whole_plan() {
        let u = Updates::new(1, Path::new("/"), None);
        let plan = u.plan(&json!([{"text": "a", "completed": true}, {"step": "b", "status": "done"}, {"content": "c", "status": "in_progress", "priority": "high"}])).unwrap();
        assert_eq!(
            serde_json::to_value(&plan).unwrap()["entries"],
            json!([{"content": "a", "priority": "medium", "status": "completed"},
                   {"content": "b", "priority": "medium", "status": "completed"},
                   {"content": "c", "priority": "high", "status": "in_progress"}])
        );
    }
}

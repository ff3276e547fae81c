//! The normalizer: the dialect-independent middle of every translation.
//!
//! It sees every record between decoder and encoder and owns what no adapter may do on its own:
//! - the **usage ledger**: per-round deltas and cumulative snapshots become one run total, each
//!   figure counted once (a snapshot adds only what it has beyond the previous one in its scope);
//! - **ids**: a tool call without an id gets one, deterministically (`call-N`, N counting the
//!   run's calls); results are matched to calls by id, else by index, else by name, never by
//!   arrival order alone;
//! - the **terminal record**: filled in with the run's totals, final text, error, session and
//!   model, made when the input ends without one, and kept to exactly one.
//!
//! Encoders read the run through [`Context`].

use std::hash::Hash;

use indexmap::{Equivalent, IndexMap};

use crate::codec::{CallView, Context, Dialect, Emit, Hints, Record, WholeDigests};
use crate::contract::FnvBuild;
use crate::model::{
    Arguments, Basis, Event, Name, Outcome, Scope, Terminal, Text, Tokens, ToolCall, ToolResult, ToolStatus, Usage,
};
use crate::report::Fate;

/// Most output kept per running tool call, to fill in a result that does not repeat it.
pub const MAX_TOOL_OUTPUT_BYTES: usize = 1024 * 1024;

pub use crate::codec::{make_room, ENDED_EARLY, MAX_OPEN_CALLS};

/// A snapshot's key, `(scope, what it counts)`, with the name borrowed: it hashes as the
/// owned key does (a tuple hashes its members in order; `&str` and `String` alike).
#[derive(Hash)]
struct SnapshotOf<'a>(Scope, &'a str);

impl Equivalent<(Scope, String)> for SnapshotOf<'_> {
    fn equivalent(&self, key: &(Scope, String)) -> bool {
        self.0 == key.0 && self.1 == key.1
    }
}

/// Cumulative snapshots always kept, one per scope and turn (or round) they count. A source
/// that never starts a turn (loom numbers its turns but has no turn-start record) would
/// otherwise keep one for every turn of the stream; at twice this many the older half is let
/// go, at once (one at a time shifted the whole table on every usage record). Snapshots of a
/// turn this far back do not come again in any dialect's order of events.
pub const MAX_SNAPSHOTS: usize = 64;

/// A call answered as failed: its index in its round and its name.
struct FailedCall {
    index: Option<u64>,
    name: Name,
}

struct OpenCall {
    index: Option<u64>,
    name: Name,
    arguments: Arguments,
    output: Text,
}

pub struct Normalizer {
    ctx: Context,
    /// The target, and what its encoder is and needs ([`Hints`]).
    target: Dialect,
    hints: Hints,
    // This table and the snapshots are looked up for every call and usage record, and held to
    // a bound size (MAX_OPEN_CALLS, MAX_SNAPSHOTS): hashed with FNV-1a, as the contracts' tables
    // are, rather than SipHash, whose guard against chosen keys matters little where a table
    // cannot grow past a few thousand entries.
    open: IndexMap<Name, OpenCall, FnvBuild>,
    calls: u64,
    round_calls: u64,
    /// The last cumulative snapshot per scope and what it counts, oldest first.
    snapshots: IndexMap<(Scope, String), Tokens, FnvBuild>,
    final_answer: Option<String>,
    message_text: String,
    last_error: Option<String>,
    /// Calls answered as failed (the most recent [`MAX_OPEN_CALLS`]), which a refusal may name
    /// after the fact: wuu's refused call read back from adal (a failed result, then the
    /// refusal), Claude Code's `permission_denials` on its `result` line.
    failed: IndexMap<Name, FailedCall, FnvBuild>,
    terminal_done: bool,
    outcome: Option<Outcome>,
    /// The last record ended a turn: the next one starts the turn figures afresh.
    turn_ended: bool,
    /// A turn ended and nothing of another (its start, text, a call) has come since.
    turn_closed: bool,
    /// A record of the current line came after the terminal and was reported.
    flagged_line: bool,
    /// The kind of the input line whose records are being given, in the input's words, where
    /// the pipeline said it (once the terminal is done: what a diagnostic names).
    line_kind: Option<String>,
    diagnostics: Vec<String>,
    /// Call ids given out so far (the most recent [`MAX_OPEN_CALLS`]), for targets that match
    /// results to calls by id: a source id seen again gets a new one.
    ids_given: IndexMap<Name, (), FnvBuild>,
    /// The run's cost so far, in US dollars, where the source states one.
    cost: Option<f64>,
    /// A source id given again, and the id its latest call got instead: what later records
    /// naming that id (its result, its output, a refusal) are rewritten to.
    aliases: IndexMap<Name, Name, FnvBuild>,
    /// The source's input figures read as excluding its cache figures: its numbers
    /// contradicted the reading that they include them (see [`Normalizer::read_basis`]).
    input_excludes_cache: bool,
}

impl Normalizer {
    /// The normalizer of a run read as `source`, written as `target` by an encoder with these
    /// hints.
    pub fn new(source: Dialect, target: Dialect, hints: Hints) -> Self {
        Normalizer {
            ctx: Context { source: Some(source), ..Context::default() },
            target,
            hints,
            open: IndexMap::default(),
            calls: 0,
            round_calls: 0,
            snapshots: IndexMap::default(),
            final_answer: None,
            message_text: String::new(),
            last_error: None,
            failed: IndexMap::default(),
            terminal_done: false,
            outcome: None,
            ids_given: IndexMap::default(),
            cost: None,
            aliases: IndexMap::default(),
            turn_ended: false,
            turn_closed: false,
            flagged_line: false,
            line_kind: None,
            diagnostics: Vec::new(),
            input_excludes_cache: false,
        }
    }

    /// Problems noticed since the last call (a second terminal record, records after it). Call
    /// it after each input line.
    pub fn take_diagnostics(&mut self) -> Vec<String> {
        self.flagged_line = false;
        self.line_kind = None;
        std::mem::take(&mut self.diagnostics)
    }

    /// The kind of the input line whose records come next, as its dialect names it: what a
    /// diagnostic about them says (asked for once the terminal record is done).
    pub fn set_line_kind(&mut self, kind: Option<String>) {
        self.line_kind = kind;
    }

    /// The digest a canonical source stated for its own source, which ids are derived from.
    pub fn set_stated_input_digest(&mut self, digest: String) {
        self.ctx.input_digest = digest;
        self.ctx.input_digest_stated = true;
    }

    pub fn set_input_digest(&mut self, digest: String) {
        self.ctx.input_digest = digest;
    }

    /// The whole input's digests: computed, or stated by a canonical source (`stated`).
    pub fn set_whole_input(&mut self, whole: WholeDigests, stated: bool) {
        self.ctx.whole_input = Some(whole);
        self.ctx.whole_input_stated = stated;
    }

    pub fn terminal_done(&self) -> bool {
        self.terminal_done
    }

    /// The run's outcome, once its terminal record went through.
    pub fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// Passes one record through to the encoder.
    pub fn process(&mut self, mut rec: Record, out: &mut dyn Emit) -> Fate {
        if self.terminal_done {
            // One diagnostic per line: a line that decodes to several records after the
            // terminal (a localcode result is a final answer and a terminal) is named once.
            let kind = rec.event.kind();
            // Said in the input's words: the kind of its line, where the record has one.
            let message = match (kind == "terminal", self.line_kind.as_deref()) {
                (true, Some(line)) => format!(
                    "a second terminal record (a \"{line}\" line); the first one stands and this one is dropped"
                ),
                (true, None) => "a second terminal record; the first one stands and this one is dropped".into(),
                (false, Some(line)) => {
                    format!("{} \"{line}\" line after the terminal record; dropped", crate::report::a(line))
                }
                (false, None) => format!("{} {kind} record after the terminal record; dropped", crate::report::a(kind)),
            };
            if self.flagged_line && kind == "terminal" {
                self.diagnostics.pop();
            }
            if !self.flagged_line || kind == "terminal" {
                self.diagnostics.push(message);
            }
            self.flagged_line = true;
            out.report().dropped_kind(&format!("{kind} after terminal"));
            return Fate::Dropped;
        }
        if let Event::SessionSummary(summary) = &rec.event {
            if self.ctx.model.is_none() {
                self.ctx.model = summary.model.clone();
            }
            if !self.hints.carries_summaries {
                return self.expand(rec, out);
            }
        }
        self.ctx.native = rec.origin == self.target;
        self.ctx.delta = Tokens::default();
        self.ctx.matched = false;
        self.ctx.answered = false;
        self.ctx.answer_streamed = false;
        self.ctx.extends = None;
        self.ctx.call = CallView::default();
        if std::mem::take(&mut self.turn_ended) {
            // The turn's figures were read at its end; what follows belongs to the next turn.
            self.snapshots.clear();
            self.ctx.turn_totals = Tokens::default();
        }
        // Whether a turn has ended with nothing of another since (for a final answer's recap).
        match &rec.event {
            Event::TurnEnd { .. } => self.turn_closed = true,
            Event::TurnStart { .. }
            | Event::TextStart
            | Event::TextDelta { .. }
            | Event::TextReplace { .. }
            | Event::TextEnd { text: Some(_) }
            | Event::ToolCall(_) => self.turn_closed = false,
            _ => {}
        }
        if self.hints.matches_calls_by_id && rec.origin != self.target {
            self.distinct_ids(&mut rec.event);
        }
        self.note(&mut rec, out);
        let fate = out.emit(&rec, &self.ctx);
        if let Event::ToolCall(call) = rec.event {
            let open = OpenCall {
                index: self.ctx.call.index,
                name: call.name,
                arguments: if self.hints.call_arguments { call.arguments } else { Arguments::default() },
                output: Text::default(),
            };
            self.open.insert(call.id.unwrap_or_default(), open);
        }
        fate
    }

    /// What a record tells the run, noted before it is written: the session, the turn and
    /// round it opens or closes, the message text so far, a call's id and index, a result
    /// matched to its call, usage and cost into the ledger, the terminal record completed.
    fn note(&mut self, rec: &mut Record, out: &mut dyn Emit) {
        match &mut rec.event {
            Event::Session(s) => {
                if self.ctx.session_id.is_none() {
                    self.ctx.session_id = s.id.clone();
                }
                if s.model.is_some() {
                    self.ctx.model = s.model.clone();
                }
            }
            Event::TurnStart { .. } => {
                self.snapshots.clear();
                self.ctx.turn_totals = Tokens::default();
                self.round_calls = 0;
                self.message_text.clear();
            }
            Event::TurnEnd { .. } => {
                self.round_calls = 0;
                self.turn_ended = true;
            }
            Event::RoundStart { .. } | Event::RoundEnd { .. } => self.round_calls = 0,
            Event::TextStart => self.message_text.clear(),
            Event::TextDelta { text, .. } => self.message_text.push_str(text),
            Event::TextReplace { text } | Event::TextEnd { text: Some(text) } => {
                self.ctx.extends = text.starts_with(self.message_text.as_str()).then_some(self.message_text.len());
                self.message_text.clone_from(text);
            }
            Event::ToolCall(call) => {
                self.calls += 1;
                call.id_made |= call.id.is_none();
                let id = call.id.get_or_insert_with(|| compact_str::format_compact!("call-{}", self.calls));
                let index = call.index.unwrap_or(self.round_calls);
                self.round_calls += 1;
                self.ctx.call = CallView { index: Some(index), ..CallView::default() };
                self.message_text.clear();
                make_room(&mut self.open, id.as_str());
                if !self.failed.is_empty() {
                    // A refusal naming this id is this call's, not an earlier one's.
                    self.failed.shift_remove(id.as_str());
                }
                // The call is opened once it is written (below): its strings move into the
                // table then rather than being copied now.
            }
            // The output is kept for the call's result only where the encoder reads it there.
            Event::ToolOutput { id, text, accumulated } if self.hints.call_output => {
                let key = id.as_deref().or_else(|| self.open.keys().last().map(Name::as_str));
                if let Some(call) = key.and_then(|k| self.open.get_index_of(k)).map(|i| &mut self.open[i]) {
                    if *accumulated {
                        call.output.clear();
                    }
                    if call.output.as_read_len() + text.as_read_len() <= MAX_TOOL_OUTPUT_BYTES {
                        call.output.push(text);
                    }
                }
            }
            Event::ToolResult(r) => {
                let found = match (&r.id, r.index, r.name.as_deref()) {
                    (Some(id), _, _) => self.open.get_index_of(id.as_str()),
                    (None, Some(i), _) => self.open.values().rposition(|c| c.index == Some(i)),
                    (None, None, Some(name)) if !name.is_empty() => self.open.values().position(|c| c.name == name),
                    _ => None,
                };
                let matched = self.answer(found, &mut r.id);
                if matched && r.status != ToolStatus::Completed {
                    let id = Name::from(r.id.as_deref().unwrap_or_default());
                    make_room(&mut self.failed, id.as_str());
                    let name = self.ctx.call.name.clone().unwrap_or_default();
                    self.failed.insert(id, FailedCall { index: self.ctx.call.index, name });
                }
            }
            Event::ToolWithdrawn { id: Some(id) } => {
                if let Some(call) = self.open.shift_remove(id.as_str()) {
                    self.ctx.call = CallView { index: call.index, name: Some(call.name), ..CallView::default() };
                }
            }
            Event::PermissionDenied(d) => {
                let found = match &d.id {
                    Some(id) => self.open.get_index_of(id.as_str()),
                    None => self.open.values().position(|c| c.name == d.name),
                };
                // A refusal answers a call already started, as a result does: encoders close
                // that call rather than start it again, and a summary counts it once. One of a
                // call not seen before is that call, made and refused: it takes the next index
                // of its round as a call would.
                let failed = match (&d.id, found) {
                    (Some(id), None) => self.failed.shift_remove(id.as_str()),
                    _ => None,
                };
                if let Some(call) = failed {
                    self.ctx.matched = true;
                    self.ctx.answered = true;
                    self.ctx.call = CallView { index: call.index, name: Some(call.name), ..CallView::default() };
                } else if !self.answer(found, &mut d.id) {
                    self.ctx.call = CallView {
                        index: Some(self.round_calls),
                        name: Some(d.name.as_str().into()),
                        ..CallView::default()
                    };
                    self.round_calls += 1;
                }
            }
            Event::Usage(u) => {
                self.read_basis(u, out);
                self.account(u, out);
            }
            Event::Cost { usd, total, .. } => {
                // A part adds to the run's cost; a total is the run's cost so far.
                let so_far = if *total { 0.0 } else { self.cost.unwrap_or(0.0) };
                self.cost = Some(so_far + *usd);
            }
            Event::SessionSummary(summary) => {
                // Its totals are the session's usage, counted once, for the run's totals.
                let usage = Usage {
                    scope: Scope::Run,
                    basis: Basis::Delta,
                    final_: true,
                    of: None,
                    model: None,
                    tokens: summary.tokens,
                };
                self.account(&usage, out);
                // And its cost, a part of the run's (loom: "the session's total cost").
                if let Some(c) = summary.cost_usd.as_ref().and_then(serde_json::Number::as_f64) {
                    self.cost = Some(self.cost.unwrap_or(0.0) + c);
                }
            }
            Event::Error { message, .. } => self.last_error = Some(message.clone()),
            Event::FinalAnswer { text } => {
                self.ctx.answer_streamed = self.turn_closed || self.message_text == *text;
                self.final_answer = Some(text.clone());
            }
            Event::Terminal(t) => {
                if let Some(stated) = t.usage {
                    self.reconcile(&stated, rec.origin, out);
                }
                self.complete_terminal(t);
                self.terminal_done = true;
                self.outcome = Some(t.outcome);
            }
            _ => {}
        }
    }

    /// A session summary for a target that has no such record: its tool calls (answered ones
    /// with their results) and its usage, as events.
    fn expand(&mut self, rec: Record, out: &mut dyn Emit) -> Fate {
        let Event::SessionSummary(summary) = rec.event else { unreachable!("expand is called with a summary") };
        let origin = rec.origin;
        let mut fate = Fate::Absorbed;
        for call in summary.tool_calls.iter().flatten() {
            let tool_call = ToolCall {
                id: Some(call.id.as_str().into()),
                index: None,
                name: call.name.as_str().into(),
                arguments: Arguments::default(),
                id_made: false,
            };
            fate = fate.max(self.process(Record::new(origin, Event::ToolCall(tool_call)), out));
            if call.answered {
                let result = ToolResult {
                    id: Some(call.id.as_str().into()),
                    index: None,
                    name: Some(call.name.as_str().into()),
                    status: if call.error { ToolStatus::Failed } else { ToolStatus::Completed },
                    output: None,
                    error: None,
                    arguments: Arguments::default(),
                };
                fate = fate.max(self.process(Record::new(origin, Event::ToolResult(result)), out));
            }
        }
        if !summary.tokens.is_empty() {
            let usage = Usage {
                scope: Scope::Run,
                basis: Basis::Delta,
                final_: true,
                of: None,
                model: summary.model.as_deref().map(Name::from),
                tokens: summary.tokens,
            };
            fate = fate.max(self.process(Record::new(origin, Event::Usage(usage)), out));
        }
        if let Some(usd) = summary.cost_usd.as_ref().and_then(serde_json::Number::as_f64) {
            let cost = Event::Cost { usd, total: false, parts: serde_json::Map::new() };
            fate = fate.max(self.process(Record::new(origin, cost), out));
        }
        fate
    }

    /// Ends the run: makes the terminal record when the input had none. `why` overrides the
    /// reason (a fatal input problem, say).
    pub fn finish(&mut self, why: Option<String>, out: &mut dyn Emit) {
        if self.terminal_done {
            return;
        }
        let mut t = Terminal::new(Outcome::Incomplete);
        t.reason = Some(why.unwrap_or_else(|| ENDED_EARLY.to_string()));
        t.synthesized = true;
        out.report().synthesized("terminal");
        let origin = self.ctx.source.unwrap_or(Dialect::Canonical);
        self.process(Record::new(origin, Event::Terminal(t)), out);
    }

    /// Keeps call ids distinct for a target that matches results to calls by id. A source may
    /// give one id to several calls (loom numbers them per model provider: `call-1` for the
    /// classifier's call in turn 1 and again for the agent's in turn 2): the first keeps it,
    /// a later one gets `ID-2`, `ID-3` ... (the first such id not given yet: the same input
    /// always gives the same ids), and what later names the source id (a result, output, a
    /// withdrawal, a refusal) names the latest call that had it, as it did in the source.
    fn distinct_ids(&mut self, event: &mut Event) {
        let named = match event {
            Event::ToolCall(c) => {
                let Some(id) = c.id.as_mut() else { return };
                if self.ids_given.contains_key(id.as_str()) {
                    let mut n = 2u64;
                    let fresh = loop {
                        let fresh = compact_str::format_compact!("{id}-{n}");
                        if !self.ids_given.contains_key(fresh.as_str()) {
                            break fresh;
                        }
                        n += 1;
                    };
                    make_room(&mut self.aliases, id.as_str());
                    self.aliases.insert(id.clone(), fresh.clone());
                    *id = fresh;
                } else {
                    self.aliases.shift_remove(id.as_str());
                }
                make_room(&mut self.ids_given, id.as_str());
                self.ids_given.insert(id.clone(), ());
                return;
            }
            Event::ToolResult(r) => {
                if let Some(alias) = r.id.as_deref().and_then(|id| self.aliases.get(id)) {
                    r.id = Some(alias.clone());
                }
                return;
            }
            Event::PermissionDenied(d) => d.id.as_mut(),
            Event::ToolOutput { id, .. } | Event::ToolWithdrawn { id } => id.as_mut(),
            _ => None,
        };
        if let Some(id) = named {
            if let Some(alias) = self.aliases.get(id.as_str()) {
                *id = alias.to_string();
            }
        }
    }

    /// Takes the open call at `found` as answered (a result, a refusal): the record gets its
    /// id and the context its view. Without one, a record with no id gets the next `call-N`.
    /// Whether a call was found.
    fn answer<T: From<Name>>(&mut self, found: Option<usize>, id: &mut Option<T>) -> bool {
        match found.and_then(|i| self.open.shift_remove_index(i)) {
            Some((call_id, call)) => {
                self.ctx.matched = true;
                *id = Some(T::from(call_id));
                self.ctx.call = CallView {
                    index: call.index,
                    name: Some(call.name),
                    arguments: call.arguments,
                    output: (!call.output.is_empty()).then_some(call.output),
                };
                true
            }
            None => {
                if id.is_none() {
                    self.calls += 1;
                    *id = Some(T::from(compact_str::format_compact!("call-{}", self.calls)));
                }
                false
            }
        }
    }

    /// Reads a usage record's input on the basis its numbers allow. Canonical input includes
    /// the cache figures; a decoder gives its dialect's input as canonical input where its spec
    /// says the input includes them (codex, gemini) or does not say (wuu, loom: passed through
    /// as read), and adds them where its spec says it excludes them (Claude Code,
    /// base-context). Where the numbers contradict the inclusive reading (an input below its
    /// own cache figures; a cumulative input that stayed put while its cache figures rose within
    /// its scope) it cannot hold: from that record on, the source's input is read as excluding
    /// them, said in the report. Snapshots held from before stay as read, so that a cumulative
    /// source's next difference catches up what they lacked: the totals hold on the new basis.
    fn read_basis(&mut self, u: &mut Usage, out: &mut dyn Emit) {
        let cache = |t: &Tokens| match (t.cache_read, t.cache_write) {
            (None, None) => None,
            (r, w) => Some(r.unwrap_or(0).saturating_add(w.unwrap_or(0))),
        };
        let held = (u.basis == Basis::Cumulative)
            .then(|| self.snapshots.get(&SnapshotOf(u.scope, u.of.as_deref().unwrap_or_default())).copied())
            .flatten();
        if !self.input_excludes_cache {
            let why = match (u.tokens.input, cache(&u.tokens)) {
                (Some(i), Some(c)) if i < c => Some("an input below its own cache figures cannot include them"),
                (Some(i), Some(c)) => match held.and_then(|h| Some((h.input?, cache(&h)?))) {
                    Some((hi, hc)) if c > hc && i == hi => {
                        Some("a cumulative input stayed put while its cache figures rose in the same scope")
                    }
                    _ => None,
                },
                _ => None,
            };
            if let Some(why) = why {
                self.input_excludes_cache = true;
                out.report().basis(&format!("input excluding cache, as the numbers say ({why})"));
            }
        }
        if self.input_excludes_cache {
            if let Some(i) = u.tokens.input {
                // A snapshot without cache figures (wuu's turn_completed) has those of its scope
                // so far.
                let c = cache(&u.tokens).or_else(|| held.and_then(|h| cache(&h))).unwrap_or(0);
                u.tokens.input = Some(i.saturating_add(c));
            }
        }
    }

    fn account(&mut self, u: &Usage, out: &mut dyn Emit) {
        let mut delta = match u.basis {
            Basis::Delta => u.tokens,
            Basis::Cumulative => {
                let of = u.of.as_deref().unwrap_or_default();
                // Looked up by the borrowed name; the name is copied only for a new snapshot.
                let prev = match self.snapshots.get_mut(&SnapshotOf(u.scope, of)) {
                    Some(held) if fell(held, &u.tokens) => {
                        // A cumulative figure below the one before it in its scope: the scope was
                        // read wrong (a new turn with no start of its own), not a figure of 0.
                        *held = u.tokens;
                        out.report().basis("a cumulative snapshot below the one before it in its scope: a new count");
                        Tokens::default()
                    }
                    Some(held) => {
                        let prev = *held;
                        *held = prev.max(&u.tokens);
                        prev
                    }
                    None => {
                        self.snapshots.insert((u.scope, of.to_string()), u.tokens);
                        Tokens::default()
                    }
                };
                if self.snapshots.len() > 2 * MAX_SNAPSHOTS {
                    self.snapshots.drain(..MAX_SNAPSHOTS);
                }
                u.tokens.since(&prev)
            }
        };
        delta.total = delta.effective_total();
        self.ctx.delta = delta;
        self.ctx.totals = self.ctx.totals.plus(&delta);
        self.ctx.turn_totals = self.ctx.turn_totals.plus(&delta);
        if u.scope == Scope::Round {
            self.round_calls = 0;
        }
        if u.model.is_some() && self.ctx.model.is_none() {
            self.ctx.model = u.model.as_deref().map(String::from);
        }
    }

    /// A terminal record that states more usage than the stream reported: the difference goes
    /// through the ledger as one run-scoped delta, so every target's totals add up.
    fn reconcile(&mut self, stated: &Tokens, origin: Dialect, out: &mut dyn Emit) {
        let mut gap = stated.since(&self.ctx.totals);
        if gap.total.is_none() {
            gap.total = stated.effective_total().map(|t| t.saturating_sub(self.ctx.totals.total.unwrap_or(0)));
        }
        let gained = [gap.input, gap.output, gap.cache_read, gap.cache_write, gap.reasoning, gap.total]
            .iter()
            .any(|v| v.unwrap_or(0) > 0);
        if !gained {
            return;
        }
        let usage = Usage { scope: Scope::Run, basis: Basis::Delta, final_: true, of: None, model: None, tokens: gap };
        self.account(&usage, out);
        out.report().synthesized("usage");
        out.emit(&Record::new(origin, Event::Usage(usage)), &self.ctx);
    }

    fn complete_terminal(&mut self, t: &mut Terminal) {
        // (The ledger's totals: a terminal's own figures went through `reconcile` first.)
        t.usage = if self.ctx.totals.is_empty() { None } else { Some(self.ctx.totals) };
        if t.cost_usd.is_none() {
            t.cost_usd = self.cost;
        }
        if t.error.is_none() && t.outcome == Outcome::Failed {
            t.error = self.last_error.clone();
        }
        if t.final_text.is_none() {
            t.final_text = self
                .final_answer
                .clone()
                .or_else(|| (!self.message_text.is_empty()).then(|| self.message_text.clone()));
        }
        if t.session_id.is_none() {
            t.session_id = self.ctx.session_id.clone();
        } else {
            self.ctx.session_id = t.session_id.clone();
        }
        if t.model.is_none() {
            t.model = self.ctx.model.clone();
        } else {
            self.ctx.model = t.model.clone();
        }
    }
}

/// Whether a figure of `now` is below the same figure of `held` (both stated).
fn fell(held: &Tokens, now: &Tokens) -> bool {
    let below = |a: Option<u64>, b: Option<u64>| matches!((a, b), (Some(h), Some(n)) if n < h);
    below(held.input, now.input)
        || below(held.output, now.output)
        || below(held.cache_read, now.cache_read)
        || below(held.cache_write, now.cache_write)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{Encode, Encoding, Sink};
    use crate::report::Report;

    /// An encoder that remembers what it was given.
    #[derive(Default)]
    struct Spy {
        seen: Vec<(Event, Tokens, Tokens, bool, CallView)>,
    }

    impl Encode for Spy {
        fn encode(&mut self, record: &Record, ctx: &Context, _: &mut Sink<'_>) -> Fate {
            self.seen.push((record.event.clone(), ctx.delta, ctx.totals, ctx.matched, ctx.call.clone()));
            Fate::Written
        }
    }

    fn run(events: Vec<Event>) -> (Spy, Report) {
        let mut n = Normalizer::new(Dialect::Canonical, Dialect::Canonical, Hints::default());
        let mut spy = Spy::default();
        let mut out = Vec::new();
        let mut report = Report::default();
        let mut sink = Sink::new(&mut out, &mut report);
        for e in events {
            n.process(Record::new(Dialect::Canonical, e), &mut Encoding::new(&mut spy, &mut sink));
        }
        n.finish(None, &mut Encoding::new(&mut spy, &mut sink));
        (spy, report)
    }

    fn usage(basis: Basis, scope: Scope, of: &str, input: u64, output: u64) -> Event {
        Event::Usage(Usage {
            scope,
            basis,
            final_: true,
            of: Some(of.into()),
            model: None,
            tokens: Tokens { input: Some(input), output: Some(output), ..Tokens::default() },
        })
    }

    fn terminal_usage(spy: &Spy) -> Tokens {
        match &spy.seen.last().unwrap().0 {
            Event::Terminal(t) => t.usage.unwrap_or_default(),
            other => panic!("last event is {other:?}"),
        }
    }

    #[test]
    fn deltas_and_cumulative_snapshots_give_the_same_totals() {
        let (deltas, _) = run(vec![
            usage(Basis::Delta, Scope::Round, "", 100, 10),
            usage(Basis::Delta, Scope::Round, "", 50, 5),
            usage(Basis::Delta, Scope::Round, "", 25, 1),
        ]);
        let (snapshots, _) = run(vec![
            Event::TurnStart { id: Some("t1".into()) },
            usage(Basis::Cumulative, Scope::Turn, "t1", 100, 10),
            usage(Basis::Cumulative, Scope::Turn, "t1", 150, 15),
            Event::TurnStart { id: Some("t2".into()) },
            usage(Basis::Cumulative, Scope::Turn, "t2", 25, 1),
        ]);
        let want = Tokens { input: Some(175), output: Some(16), total: Some(191), ..Tokens::default() };
        assert_eq!(terminal_usage(&deltas), want);
        assert_eq!(terminal_usage(&snapshots), want);
    }

    #[test]
    fn a_repeated_snapshot_adds_nothing() {
        let (spy, _) = run(vec![
            usage(Basis::Cumulative, Scope::Turn, "t", 100, 10),
            usage(Basis::Cumulative, Scope::Turn, "t", 100, 10),
        ]);
        assert_eq!(spy.seen[1].1.input, Some(0));
        assert_eq!(terminal_usage(&spy).input, Some(100));
    }

    #[test]
    fn a_terminal_stating_more_than_the_stream_reported_adds_the_gap_once() {
        let mut t = Terminal::new(Outcome::Completed);
        t.usage = Some(Tokens { input: Some(300), output: Some(30), ..Tokens::default() });
        let (spy, report) = run(vec![usage(Basis::Delta, Scope::Round, "", 100, 10), Event::Terminal(t)]);
        let gap = &spy.seen[1];
        assert!(matches!(gap.0, Event::Usage(_)));
        assert_eq!(gap.1.input, Some(200));
        assert_eq!(terminal_usage(&spy).input, Some(300));
        assert_eq!(report.synthesized.get("usage"), Some(&1));
    }

    #[test]
    fn results_are_matched_by_id_not_by_arrival_order() {
        let call = |id: &str, name: &str| {
            Event::ToolCall(crate::model::ToolCall { id: Some(id.into()), name: name.into(), ..Default::default() })
        };
        let result = |id: &str| {
            Event::ToolResult(crate::model::ToolResult {
                id: Some(id.into()),
                index: None,
                name: None,
                status: crate::model::ToolStatus::Completed,
                output: None,
                error: None,
                arguments: Arguments::default(),
            })
        };
        let (spy, _) = run(vec![call("a", "read"), call("b", "bash"), result("b"), result("a")]);
        let names: Vec<_> = spy.seen[2..4].iter().map(|s| (s.4.name.clone().unwrap(), s.3)).collect();
        assert_eq!(names, vec![(Name::from("bash"), true), (Name::from("read"), true)]);
    }

    #[test]
    fn calls_without_ids_get_deterministic_ones_and_results_match_by_index() {
        let call = |i: u64| {
            Event::ToolCall(crate::model::ToolCall {
                index: Some(i),
                name: format!("t{i}").into(),
                ..Default::default()
            })
        };
        let result = |i: u64| {
            Event::ToolResult(crate::model::ToolResult {
                id: None,
                index: Some(i),
                name: None,
                status: crate::model::ToolStatus::Completed,
                output: None,
                error: None,
                arguments: Arguments::default(),
            })
        };
        let (spy, _) = run(vec![call(0), call(1), result(1), result(0)]);
        let ids: Vec<_> = spy.seen[..4]
            .iter()
            .map(|(e, ..)| match e {
                Event::ToolCall(c) => c.id.clone().unwrap(),
                Event::ToolResult(r) => r.id.clone().unwrap(),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(ids, vec!["call-1", "call-2", "call-2", "call-1"]);
    }

    #[test]
    fn a_stream_without_a_terminal_gets_exactly_one_incomplete_terminal() {
        let (spy, report) = run(vec![Event::TextDelta { text: "partial".into(), chars: None }]);
        let terminals: Vec<_> =
            spy.seen.iter().filter_map(|(e, ..)| if let Event::Terminal(t) = e { Some(t) } else { None }).collect();
        assert_eq!(terminals.len(), 1);
        assert_eq!(terminals[0].outcome, Outcome::Incomplete);
        assert_eq!(terminals[0].reason.as_deref(), Some(ENDED_EARLY));
        assert_eq!(terminals[0].final_text.as_deref(), Some("partial"));
        assert!(terminals[0].synthesized);
        assert_eq!(report.synthesized.get("terminal"), Some(&1));
    }

    #[test]
    fn a_second_terminal_is_dropped_and_reported() {
        let mut n = Normalizer::new(Dialect::Canonical, Dialect::Canonical, Hints::default());
        let mut spy = Spy::default();
        let (mut out, mut report) = (Vec::new(), Report::default());
        let mut sink = Sink::new(&mut out, &mut report);
        for _ in 0..2 {
            n.process(
                Record::new(Dialect::Canonical, Event::Terminal(Terminal::new(Outcome::Completed))),
                &mut Encoding::new(&mut spy, &mut sink),
            );
        }
        n.finish(None, &mut Encoding::new(&mut spy, &mut sink));
        assert_eq!(spy.seen.len(), 1);
        assert_eq!(n.take_diagnostics().len(), 1);
    }

    #[test]
    fn derived_uuids_are_well_formed() {
        let ctx = Context {
            input_digest: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad".into(),
            ..Context::default()
        };
        let u = ctx.derived_uuid();
        assert_eq!(u, "ba7816bf-8f01-8fea-8141-40de5dae2223");
    }
}

#[cfg(test)]
mod bounded {
    use super::*;
    use crate::codec::{Encode, Encoding, Sink};
    use crate::report::Report;

    struct Nothing;
    impl Encode for Nothing {
        fn encode(&mut self, _: &Record, _: &Context, _: &mut Sink<'_>) -> Fate {
            Fate::Written
        }
    }

    #[test]
    fn calls_never_answered_do_not_grow_memory_without_bound() {
        let mut n = Normalizer::new(Dialect::Canonical, Dialect::Canonical, Hints::default());
        let (mut out, mut report) = (Vec::new(), Report::default());
        let mut sink = Sink::new(&mut out, &mut report);
        for i in 0..(MAX_OPEN_CALLS * 3) {
            let call =
                crate::model::ToolCall { id: Some(format!("c{i}").into()), name: "x".into(), ..Default::default() };
            n.process(
                Record::new(Dialect::Canonical, Event::ToolCall(call)),
                &mut Encoding::new(&mut Nothing, &mut sink),
            );
        }
        assert!(n.open.len() <= MAX_OPEN_CALLS);
        assert!(n.open.contains_key(format!("c{}", MAX_OPEN_CALLS * 3 - 1).as_str()), "the newest calls are kept");
    }
}

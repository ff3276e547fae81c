//! Writing localcode: Python's `json.dumps` layout, counts as strings but for the `result`
//! line's tokens, text cut to the spec's limits, `result` last.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::codec::Context;
use crate::codec::{Dialect, Encode, Record, Sink};
use crate::contract::Contract;
use crate::dialect::util::{refusal_why, tool_output, write_in_order};
use crate::json::{char_len, cut_chars, split_chars, write_line, Field, Layout};
use crate::model::{Arguments, Basis, Denial, Event, Terminal, ToolResult, ToolStatus};
use crate::report::Fate;

/// Most reasoning text kept to write a `thinking_done` whose source gave no text of its own.
const MAX_REASONING_KEPT: usize = 8000;

pub struct Encoder {
    contract: &'static Contract,
    /// Reasoning streamed since the last `thinking_start`, up to the `thinking_done` limit.
    reasoning: String,
    /// The last line written was a `stream_start` or a `content`: text written now belongs to
    /// the same streamed answer.
    streaming: bool,
    /// The message of the last `error` written: a run's error that it already said is not
    /// said again before `result`.
    last_error: Option<String>,
    /// The contract's limits of the fields this encoder cuts (see [`CUT`]), looked up once.
    limits: [usize; CUT.len()],
}

/// The contract's limit of `kind.field`; none is no limit.
fn limit_in(contract: &Contract, kind: &str, field: &str) -> usize {
    contract.limit(kind, field).unwrap_or(usize::MAX)
}

/// The fields the encoder cuts or splits to localcode's limits, the most written first: their
/// limits are looked up in the contract once, not at every line (two table lookups by name).
const CUT: [(&str, &str); 10] = [
    ("tool_start", "args"),
    ("tool_result", "args"),
    ("tool_result", "result"),
    ("content", "chunk"),
    ("thinking_chunk", "chunk"),
    ("error", "message"),
    ("thinking_peek", "text"),
    ("thinking_done", "text"),
    ("stage", "stage"),
    ("tool_preview", "snippet"),
];

impl Encoder {
    pub fn new() -> Self {
        Encoder {
            contract: Dialect::Localcode.contract(),
            reasoning: String::new(),
            streaming: false,
            last_error: None,
            limits: CUT.map(|(kind, field)| limit_in(Dialect::Localcode.contract(), kind, field)),
        }
    }

    fn limit(&self, kind: &str, field: &str) -> usize {
        match CUT.iter().position(|c| *c == (kind, field)) {
            Some(i) => self.limits[i],
            None => limit_in(self.contract, kind, field),
        }
    }

    /// `text` cut to the contract's limit for `kind.field`, counting a cut in the report.
    fn fit<'a>(&self, kind: &str, field: &str, text: &'a str, sink: &mut Sink<'_>) -> Field<'a> {
        Field::Str(self.cut(kind, field, text, sink))
    }

    fn cut<'a>(&self, kind: &str, field: &str, text: &'a str, sink: &mut Sink<'_>) -> &'a str {
        let (head, cut) = cut_chars(text, self.limit(kind, field));
        if cut {
            sink.report.truncated(&format!("{kind}.{field}"));
        }
        head
    }

    /// [`Encoder::fit`] for a field that may be a text kept as read: cut on its kept form
    /// ([`crate::json::text::Text::cut`]), and written as it is when within the limit.
    fn fit_field<'a>(&self, kind: &str, field: &str, text: Field<'a>, sink: &mut Sink<'_>) -> Field<'a> {
        match text {
            Field::Text(t) => match t.cut(self.limit(kind, field)) {
                Some(head) => {
                    sink.report.truncated(&format!("{kind}.{field}"));
                    Field::Kept(head)
                }
                None => Field::Text(t),
            },
            Field::Str(s) => self.fit(kind, field, s, sink),
            other => other,
        }
    }
}

impl Default for Encoder {
    fn default() -> Self {
        Self::new()
    }
}

/// A call's arguments as localcode's `args` text: localcode's own (`native`) as they were,
/// another dialect's unwrapped ([`Arguments::unwrapped_text`]); a shell call's that are only its
/// command line (`{"command": line}`) as the line, as localcode writes a `bash` call's args and
/// as the pipeline reads them (`crate::shell`).
fn args_text<'a>(a: &'a Arguments, native: bool, name: &str) -> Cow<'a, str> {
    if native {
        return a.as_text();
    }
    if crate::codec::shell_tool_named(name) {
        if let Some(serde_json::Value::Object(m)) = a.to_value() {
            if let (1, Some(serde_json::Value::String(line))) = (m.len(), m.get("command")) {
                return Cow::Owned(line.clone());
            }
        }
    }
    a.unwrapped_text()
}

/// Writes a line: `type` first, the fields in the given order, then the members the model had
/// no field for (a localcode source's: the pipeline leaves none on another dialect's records).
fn put<'a>(
    sink: &mut Sink<'_>,
    kind: &'a str,
    fields: impl IntoIterator<Item = (&'a str, Field<'a>)>,
    rec: &'a Record,
) {
    let extra = Some(&rec.extra).filter(|e| !e.is_empty());
    write_in_order(sink.out, Dialect::Localcode.contract(), kind, fields, extra, Layout::Spaced, sink.report);
}

/// [`put`] for a line of no source line's (one made up where the source has none).
fn put_new<'a>(sink: &mut Sink<'_>, kind: &'a str, fields: impl IntoIterator<Item = (&'a str, Field<'a>)>) {
    write_in_order(sink.out, Dialect::Localcode.contract(), kind, fields, None, Layout::Spaced, sink.report);
}

fn s(x: &str) -> Field<'_> {
    Field::Str(x)
}

fn owned(x: String) -> Field<'static> {
    Field::Owned(Value::String(x))
}

fn digits(n: u64) -> Field<'static> {
    Field::Digits(n)
}

impl Encode for Encoder {
    /// What writing the record would have left, without the writing: whether text is
    /// streaming, the reasoning so far, the last error said.
    fn observe(&mut self, rec: &Record, ctx: &Context, _: &str, sink: &mut Sink<'_>) {
        if let Event::Terminal(_) = rec.event {
            // For the exit status it states.
            return self.observe_by_encoding(rec, ctx, sink);
        }
        match &rec.event {
            Event::ReasoningStart { .. } | Event::ReasoningEnd { .. } => self.reasoning.clear(),
            Event::ReasoningDelta { text } if self.reasoning.len() < MAX_REASONING_KEPT * 4 => {
                self.reasoning.push_str(text)
            }
            Event::Error { message, .. } => self.last_error = Some(message.clone()),
            _ => {}
        }
        match &rec.event {
            Event::TextStart | Event::TextDelta { .. } | Event::TextReplace { .. } | Event::TextEnd { .. } => {
                self.streaming = true
            }
            Event::FinalAnswer { .. } | Event::Repeat => {}
            _ => self.streaming = false,
        }
    }

    fn encode(&mut self, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        let fate = self.write(rec, ctx, sink);
        let text = matches!(
            rec.event,
            Event::TextStart
                | Event::TextDelta { .. }
                | Event::TextReplace { .. }
                | Event::TextEnd { .. }
                | Event::FinalAnswer { .. }
        );
        if !text && matches!(fate, Fate::Written | Fate::PassedThrough) {
            // A line that is not text: text after it starts anew.
            self.streaming = false;
        }
        fate
    }
}

impl Encoder {
    /// Text given whole, written as localcode streams text: a `stream_start` unless the answer
    /// is already streaming, then `content` chunks of at most the contract's length.
    fn stream(&mut self, text: &str, rec: &Record, sink: &mut Sink<'_>) {
        self.start_stream(rec, sink);
        // The source line's members go with its first chunk, once.
        for (i, piece) in split_chars(text, self.limit("content", "chunk")).into_iter().enumerate() {
            let fields = [("chunk", s(piece)), ("chars", digits(char_len(piece)))];
            if i == 0 {
                put(sink, "content", fields, rec);
            } else {
                put_new(sink, "content", fields);
            }
        }
        self.streaming = true;
    }

    /// A `stream_start` where text from another dialect begins and is not already streaming:
    /// localcode's text always comes after one.
    fn start_stream(&mut self, rec: &Record, sink: &mut Sink<'_>) {
        if !self.streaming {
            // Made up: none of the source line's members (they go with the line it stands for).
            let _ = rec;
            sink.report.synthesized("stream_start");
            put_new(sink, "stream_start", vec![]);
        }
    }

    /// A call's result: its name, arguments and index as the call gave them where the result
    /// does not repeat them, and its output.
    fn tool_result(&mut self, r: &ToolResult, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) {
        let call = &ctx.call;
        let arguments = if r.arguments.is_empty() { &call.arguments } else { &r.arguments };
        let name = r.name.as_deref().or(call.name.as_deref()).unwrap_or("");
        let args = args_text(arguments, ctx.native, name);
        let args = self.fit("tool_result", "args", &args, sink);
        let result = self.fit_field("tool_result", "result", tool_output(r, ctx), sink);
        let failed = if r.status == ToolStatus::Completed { "false" } else { "true" };
        let fields = [
            ("name", Field::Str(r.name.as_deref().or(call.name.as_deref()).unwrap_or(""))),
            ("args", args),
            ("index", r.index.or(call.index).map_or(s("-1"), digits)),
            ("result", result),
            ("error", Field::Str(failed)),
        ];
        put(sink, "tool_result", fields, rec);
    }

    /// A refusal: localcode has no refusal event, so a notice says which call was refused and
    /// why, after the call's tool_start where the source gave none before the refusal.
    fn refused(&mut self, d: &Denial, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) {
        // localcode has no refusal event; a notice says which call was refused and why,
        // after the call's tool_start where the source gave none before the refusal.
        if !ctx.matched {
            sink.report.synthesized("tool_start");
            let args = args_text(&d.arguments, ctx.native, &d.name);
            let args = self.fit("tool_start", "args", &args, sink);
            let index = ctx.call.index.map_or(s("-1"), digits);
            let fields = [("name", Field::Str(&d.name)), ("args", args), ("index", index)];
            put_new(sink, "tool_start", fields);
        }
        let why = refusal_why(d.reason.as_deref());
        put(sink, "notice", [("text", owned(format!("permission denied: {}: {why}", d.name)))], rec);
    }

    /// The terminal record: `result`, after an `error` line where the run's error was said only
    /// in the source's terminal record.
    fn result(&mut self, t: &Terminal, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) {
        // result has no field for the run's error: the error event that ends the turn
        // says it, where the source said it only in its terminal record (loom's
        // Terminal, wuu's result).
        if let Some(e) = t.error.as_deref().filter(|e| !e.is_empty() && self.last_error.as_deref() != Some(*e)) {
            sink.report.synthesized("error");
            let v = self.fit("error", "message", e, sink);
            put_new(sink, "error", [("message", v)]);
        }
        let c = self.contract;
        let outcome = t.outcome;
        let status = c.outcome_str(outcome, "status").unwrap_or("incomplete");
        let exit_code = c.outcome_code(outcome, "exit_code").unwrap_or(1);
        sink.report.exit_status = Some(exit_code);
        let reason =
            t.reason.clone().or_else(|| c.outcome_str(outcome, "reason").map(str::to_string)).unwrap_or_default();
        let totals = ctx.totals;
        if totals.is_empty() {
            // localcode's result has no word for unknown tokens: zeros, said.
            sink.report.synthesized(crate::report::UNKNOWN_USAGE);
        }
        let mut tokens = Map::new();
        tokens.insert("prompt".into(), Value::from(totals.input.unwrap_or(0)));
        tokens.insert("completion".into(), Value::from(totals.output.unwrap_or(0)));
        // As localcode adds them up: the totals, or prompt + completion when they sum to 0.
        let (prompt, completion) = (totals.input.unwrap_or(0), totals.output.unwrap_or(0));
        let total = totals.total.filter(|t| *t > 0).unwrap_or(prompt.saturating_add(completion));
        tokens.insert("total".into(), Value::from(total));
        // A localcode source's `tokens` kept for its members beyond the three counts: those
        // members go back beside the counts written here (the source's object may lack one).
        let mut extra = rec.extra.to_fields();
        if let Some(Value::Object(kept)) = extra.shift_remove("tokens") {
            for (k, v) in kept {
                tokens.entry(k).or_insert(v);
            }
        }
        let extra = crate::model::Extra::from(extra);
        let fields = [
            ("status", s(status)),
            ("exit_code", Field::Owned(Value::from(exit_code))),
            ("reason", owned(reason)),
            ("final_text", s(t.final_text.as_deref().unwrap_or_default())),
            ("tokens", Field::Owned(Value::Object(tokens))),
        ];
        let extra = Some(&extra).filter(|e| !e.is_empty());
        write_in_order(sink.out, Dialect::Localcode.contract(), "result", fields, extra, Layout::Spaced, sink.report);
    }

    /// One record's lines (see [`Encode::encode`], which notes whether the last was text).
    fn write(&mut self, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        let own = ctx.native;
        match &rec.event {
            Event::ReasoningStart { reset } => {
                self.reasoning.clear();
                let reset = if reset.unwrap_or(false) { "true" } else { "false" };
                put(sink, "thinking_start", [("reset", s(reset))], rec);
            }
            Event::ReasoningDelta { text } => {
                if self.reasoning.len() < MAX_REASONING_KEPT * 4 {
                    self.reasoning.push_str(text);
                }
                for (i, piece) in split_chars(text, self.limit("thinking_chunk", "chunk")).into_iter().enumerate() {
                    if i == 0 {
                        put(sink, "thinking_chunk", [("chunk", s(piece))], rec);
                    } else {
                        put_new(sink, "thinking_chunk", [("chunk", s(piece))]);
                    }
                }
            }
            Event::ReasoningPeek { text } => {
                let v = self.fit("thinking_peek", "text", text, sink);
                put(sink, "thinking_peek", [("text", v)], rec);
            }
            Event::ReasoningEnd { text } => {
                let whole = text.as_deref().unwrap_or(&self.reasoning);
                let v = self.fit("thinking_done", "text", whole, sink);
                put(sink, "thinking_done", [("text", v)], rec);
                self.reasoning.clear();
            }
            Event::Stage { name } => {
                let v = self.fit("stage", "stage", name, sink);
                put(sink, "stage", [("stage", v)], rec);
            }
            Event::TextStart => {
                put(sink, "stream_start", vec![], rec);
                self.streaming = true;
            }
            Event::TextReplace { text } | Event::TextEnd { text: Some(text) } if ctx.extends.is_some() => {
                // localcode only appends: a replacement that extends the text streamed (a
                // message given whole, with nothing streamed before it) is written as the
                // content it adds; one that adds nothing has nothing to write.
                let new = text.get(ctx.extends.unwrap_or(0)..).unwrap_or_default();
                if new.is_empty() {
                    return Fate::Absorbed;
                }
                self.stream(new, rec, sink);
            }
            Event::TextDelta { text, chars } => {
                // Text comes after a `stream_start` (wuu's deltas, say, come with no start of
                // their own).
                self.start_stream(rec, sink);
                // Longer text is split over several content events: nothing is cut.
                let pieces = split_chars(text, self.limit("content", "chunk"));
                let whole = pieces.len() == 1;
                for (i, piece) in pieces.into_iter().enumerate() {
                    let n = if whole { chars.unwrap_or_else(|| char_len(piece)) } else { char_len(piece) };
                    let fields = [("chunk", s(piece)), ("chars", digits(n))];
                    if i == 0 {
                        put(sink, "content", fields, rec);
                    } else {
                        put_new(sink, "content", fields);
                    }
                }
                self.streaming = true;
            }
            Event::ToolDraft(d) => {
                let snippet = d.snippet.as_deref().or(d.delta.as_deref()).unwrap_or("");
                let chars = d.chars.unwrap_or_else(|| char_len(snippet));
                let snippet = self.fit("tool_preview", "snippet", snippet, sink);
                let name = s(d.name.as_deref().unwrap_or_default());
                put(sink, "tool_preview", [("name", name), ("chars", digits(chars)), ("snippet", snippet)], rec);
            }
            Event::ToolCall(c) => {
                let args = args_text(&c.arguments, ctx.native, &c.name);
                let args = self.fit("tool_start", "args", &args, sink);
                let index = c.index.or(ctx.call.index).map_or(s("-1"), digits);
                put(sink, "tool_start", [("name", Field::Str(&c.name)), ("args", args), ("index", index)], rec);
            }
            Event::ToolResult(r) => self.tool_result(r, rec, ctx, sink),
            Event::PermissionDenied(d) => self.refused(d, rec, ctx, sink),
            Event::Usage(u) => {
                // One turn_tokens line per report that adds tokens (a snapshot that adds none
                // is absorbed): their sum is the result's tokens.
                let d = ctx.delta;
                if u.basis == Basis::Cumulative
                    && d.input.unwrap_or(0) == 0
                    && d.output.unwrap_or(0) == 0
                    && d.total.unwrap_or(0) == 0
                {
                    return Fate::Absorbed;
                }
                let fields = [
                    ("prompt_tokens", digits(d.input.unwrap_or(0))),
                    ("completion_tokens", digits(d.output.unwrap_or(0))),
                    ("total_tokens", digits(d.total.unwrap_or(0))),
                ];
                put(sink, "turn_tokens", fields, rec);
            }
            Event::Notice { text } => put(sink, "notice", [("text", s(text))], rec),
            Event::Error { message, .. } => {
                let v = self.fit("error", "message", message, sink);
                put(sink, "error", [("message", v)], rec);
                self.last_error = Some(message.clone());
            }
            // A turn's end is `done` (the run_start generation's `turn_end` is not the spec's).
            Event::TurnEnd { .. } => put(sink, "done", vec![], rec),
            Event::FinalAnswer { text } if !own && !ctx.answer_streamed && !text.is_empty() => {
                // An answer the source gave whole (adal's answer) is the assistant's output: a
                // localcode reader sees it streamed, as localcode streams its own, and again in
                // the result's final_text.
                self.stream(text, rec, sink);
            }
            Event::FinalAnswer { .. } => return Fate::Absorbed,
            Event::Terminal(t) => self.result(t, rec, ctx, sink),
            Event::Extension { line: original } if own => {
                write_line(sink.out, original, Layout::Spaced);
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
    use super::*;

    #[test]
    fn every_field_the_encoder_cuts_has_a_limit_in_the_contract() {
        for (kind, field) in CUT {
            assert!(Dialect::Localcode.contract().limit(kind, field).is_some(), "{kind}.{field}");
        }
        let enc = Encoder::new();
        assert_eq!(enc.limit("content", "chunk"), 2000);
        assert_eq!(enc.limit("tool_result", "result"), 4000);
        assert_eq!(enc.limit("error", "message"), 240);
        assert_eq!(enc.limit("result", "final_text"), usize::MAX, "a field without a limit");
    }
}

//! Writing adal: calls, results, refusals, the answer and `complete` last, with the exit code
//! its outcome calls for and a session id (derived from the input where the source names none).

use serde_json::Value;

use crate::codec::Context;
use crate::codec::{Dialect, Encode, Record, Sink};
use crate::contract::Contract;
use crate::dialect::util::{tool_output, write_in_order};
use crate::json::{write_line, Field, Layout};
use crate::model::Extra;
use crate::model::{Arguments, Event, Outcome, Terminal, ToolCall, ToolStatus};
use crate::report::Fate;

/// A tool call as written (its args as compact JSON), in buffers reused from call to call.
#[derive(Default)]
struct LastCall {
    id: String,
    name: String,
    args: Vec<u8>,
    /// No result has answered it.
    open: bool,
    /// A result said it failed: a run that then stopped for approval stopped at it (wuu
    /// reports a refused call as a failed one, then the run's `permission_denied`).
    failed: bool,
}

impl LastCall {
    fn json_args(&self) -> Field<'_> {
        // Written by our writer: UTF-8.
        Field::Json(std::str::from_utf8(&self.args).unwrap_or("{}"))
    }
}

pub struct Encoder {
    contract: &'static Contract,
    /// A permission_denied was written: the run stopped there, no tool events follow.
    denied: bool,
    answered: bool,
    errored: bool,
    /// A final answer read from another dialect, written just before `complete` if the run
    /// completed: adal writes `answer` on success only.
    pending_answer: Option<String>,
    /// The last tool call written: while no result has answered it, the call a run that
    /// stopped for approval stopped at, when the source names none.
    last_call: LastCall,
    /// The actions a source said await approval (loom's `Approval`).
    approval: Vec<String>,
    /// What the last notice of a refusal said after `permission denied: ` (localcode writes
    /// `permission denied: <tool>: <why>`; adal has no notice event).
    refusal_notice: Option<String>,
    /// A refusal of a call already answered as failed, held: adal's `permission_denied` stops
    /// the run (adal.md: "the run stops; complete follows with exit_code: 2"), so it is written
    /// only if the run then ends refused; in a run that goes on (Claude Code: "Denials do not
    /// stop a -p run") the failed tool_result says it, and the refusal is reported as lost.
    held_refusal: Option<(String, Option<String>)>,
}

impl Encoder {
    pub fn new() -> Self {
        Encoder {
            contract: Dialect::Adal.contract(),
            denied: false,
            answered: false,
            errored: false,
            pending_answer: None,
            last_call: LastCall::default(),
            approval: Vec::new(),
            refusal_notice: None,
            held_refusal: None,
        }
    }
}

impl Encoder {
    /// A call noted as the last one made, its args written once (as its line takes them): the
    /// call a run that stops for approval stopped at. A refusal held for an earlier call is lost.
    fn note_call(&mut self, c: &ToolCall, sink: &mut Sink<'_>) {
        let last = &mut self.last_call;
        last.id.clear();
        last.id.push_str(c.id.as_deref().unwrap_or(""));
        last.name.clear();
        last.name.push_str(&c.name);
        last.args.clear();
        args_object(&c.arguments).write(&mut last.args, Layout::Compact);
        last.open = true;
        last.failed = false;
        if let Some((id, _)) = self.held_refusal.take() {
            sink.report.dropped_kind(&format!("permission_denied of {id} in a run that went on"));
        }
    }

    /// A result that answers the last call closes it, failed or not.
    fn note_result(&mut self, id: &str, status: ToolStatus) {
        if self.last_call.id == id {
            self.last_call.open = false;
            self.last_call.failed = status != ToolStatus::Completed;
        }
    }

    /// What the error event before a failed `complete` says: the run's own error, else the
    /// outcome (adal cannot tell timeout or interrupt apart by code) with the run's reason.
    fn why(&self, t: &Terminal) -> String {
        if let Some(e) = &t.error {
            return e.clone();
        }
        let word = self.contract.outcome_str(t.outcome, "error");
        match (word, &t.reason) {
            (Some(w), Some(r)) if w != r => format!("{w}: {r}"),
            (Some(w), _) => w.to_string(),
            (None, Some(r)) => r.clone(),
            (None, None) => "the run failed".into(),
        }
    }
}

impl Encoder {
    /// The run's end: `answer` where the run completed with text not yet said, an `error` for a failed run that said none, and `complete` last with its exit code and session id.
    fn terminal(&mut self, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        let Event::Terminal(t) = &rec.event else { unreachable!("terminal is called with its kind") };
        let extra = Some(&rec.extra).filter(|e| !e.is_empty());
        if t.outcome == Outcome::PermissionDenied && !self.denied && !self.approval.is_empty() {
            // The source listed the actions awaiting approval (loom's Approval): the
            // refusal is the first of them, a call of its own (adal.md: 'the run stopped
            // at that call'), not one of the model requests made before it.
            sink.report.synthesized("permission_denied");
            let reason = format!("approval required: {}", self.approval.join(", "));
            let fields = vec![
                ("id", Field::Owned(Value::String(format!("approval-{}", self.approval.len())))),
                ("name", Field::Str(&self.approval[0])),
                ("args", Field::Owned(Value::Object(serde_json::Map::new()))),
                ("reason", Field::Str(&reason)),
            ];
            emit(sink, "permission_denied", fields, None);
            self.denied = true;
        }
        if t.outcome == Outcome::PermissionDenied && !self.denied {
            // adal reports a refusal as the call it stopped at, where the source did
            // not name one: the last call, left unanswered or answered as failed.
            // (With none, the run still ends with exit_code 2.)
            let last = &mut self.last_call;
            if std::mem::take(&mut last.open) | std::mem::take(&mut last.failed) {
                let last = &self.last_call;
                // A notice that named this call says why, as the source's user saw it.
                let noticed = self.refusal_notice.as_deref().and_then(|n| {
                    n.strip_prefix(last.name.as_str()).and_then(|r| r.strip_prefix(": ")).filter(|r| !r.is_empty())
                });
                let held = self.held_refusal.take().filter(|(id, _)| *id == last.id).and_then(|(_, r)| r);
                let reason = match (&self.approval[..], noticed.or(held.as_deref()), &t.error) {
                    ([], Some(why), _) => why.to_string(),
                    ([], None, Some(e)) => e.clone(),
                    ([], None, None) => "approval required".to_string(),
                    (actions, _, _) => format!("approval required: {}", actions.join(", ")),
                };
                sink.report.synthesized("permission_denied");
                let fields = vec![
                    ("id", Field::Str(&last.id)),
                    ("name", Field::Str(&last.name)),
                    ("args", last.json_args()),
                    ("reason", Field::Str(&reason)),
                ];
                emit(sink, "permission_denied", fields, None);
                self.denied = true;
            }
        }
        if t.outcome == Outcome::PermissionDenied && !self.denied {
            // No call to name (none made, or the last one completed): exit code 2 still
            // comes after a permission_denied (adal.md: a refused call is 'permission_denied
            // event with the call's id, name, args, reason, then complete with exit_code: 2'),
            // one of its own that says why.
            sink.report.synthesized("permission_denied");
            let reason = t.error.clone().or_else(|| t.reason.clone()).unwrap_or_else(|| "approval required".into());
            let fields = vec![
                ("id", Field::Str("approval-1")),
                ("name", Field::Str("unknown")),
                ("args", Field::Owned(Value::Object(serde_json::Map::new()))),
                ("reason", Field::Str(&reason)),
            ];
            emit(sink, "permission_denied", fields, None);
            self.denied = true;
        }
        if let Some((id, _)) = self.held_refusal.take() {
            sink.report.dropped_kind(&format!("permission_denied of {id} in a run that went on"));
        }
        let outcome = if self.denied { Outcome::PermissionDenied } else { t.outcome };
        let exit_code = self.contract.outcome_code(outcome, "exit_code").unwrap_or(1);
        sink.report.exit_status = Some(exit_code);
        if exit_code == 1 && !self.errored {
            // A failed run says why in an error event before complete.
            sink.report.synthesized("error");
            emit(sink, "error", vec![("message", Value::String(self.why(t)))], None);
        }
        if outcome == Outcome::Completed && !self.answered {
            // The answer the source gave, else the run's final text.
            let (text, made) = match self.pending_answer.take() {
                Some(text) => (Some(text), false),
                None => (t.final_text.clone(), true),
            };
            if let Some(text) = text.filter(|x| !x.is_empty()) {
                if made {
                    sink.report.synthesized("answer");
                }
                emit(sink, "answer", vec![("content", Value::String(text))], None);
            }
        }
        let session_id = match &t.session_id {
            Some(id) => Value::String(id.clone()),
            None => {
                sink.report.synthesized("complete.session_id");
                Value::String(ctx.derived_uuid())
            }
        };
        // `model` is a string (adal.md: complete has exit_code, session_id, model): the
        // run's model, else "unknown", the placeholder agentgate writes for a model no
        // source named (base-context's too), and reads back as none.
        let model = match &t.model {
            Some(m) => Value::String(m.clone()),
            None => {
                sink.report.synthesized("complete.model");
                Value::from("unknown")
            }
        };
        emit(
            sink,
            "complete",
            vec![("exit_code", Value::from(exit_code)), ("session_id", session_id), ("model", model)],
            extra,
        );
        Fate::Written
    }
}

impl Default for Encoder {
    fn default() -> Self {
        Self::new()
    }
}

/// Writes a line: `type` first, the fields in order, then the source line's unknown members
/// when it was read from adal itself.
fn emit<'a, F: Into<Field<'a>>>(
    sink: &mut Sink<'_>,
    kind: &'a str,
    fields: Vec<(&'a str, F)>,
    extra: Option<&'a Extra>,
) {
    let fields = fields.into_iter().map(|(k, v)| (k, v.into()));
    write_in_order(sink.out, Dialect::Adal.contract(), kind, fields, extra, Layout::Compact, sink.report);
}

/// adal's `args` is an object. Arguments that hold one are written as it; anything else
/// (text that is not JSON, a bare value) is kept whole as `{"raw": text}`.
fn args_object(a: &Arguments) -> Field<'_> {
    if let Some(v @ Value::Object(_)) = &a.value {
        // Lent, not copied.
        return Field::Value(v);
    }
    if let Some(t) = a.compact_text().filter(|t| t.starts_with('{')) {
        // An object's compact text is what adal's compact writer makes of it.
        return Field::Json(t);
    }
    Field::Owned(a.to_object())
}

fn status_word(s: ToolStatus) -> &'static str {
    s.into()
}

impl Encode for Encoder {
    /// Only to derive `complete`'s session id, which a run that named its session does not
    /// need (base-context's header, wuu's thread, adal's own): hashing every byte of a long
    /// input costs a tenth of a translation's time or more.
    fn needs_whole_digest(&self, ctx: &Context) -> bool {
        ctx.session_id.is_none()
    }

    /// The derived session id only has to tell runs apart: XXH3-128 of the input, which keeps
    /// up with the translation on its own thread, where SHA-256 needs a second one.
    fn hints(&self) -> crate::codec::Hints {
        crate::codec::Hints {
            matches_calls_by_id: true,
            call_arguments: false,
            digest: crate::io::framing::DigestKind::Distinct,
            ..crate::codec::Hints::default()
        }
    }

    /// An adal line copied as read: the state its encoding would have left, without writing it
    /// (the default encodes into a buffer thrown away, 13.5% of adal to adal: #53). Another
    /// dialect's record, and the terminal (once a run), are observed by encoding.
    fn observe(&mut self, rec: &Record, ctx: &Context, line: &str, sink: &mut Sink<'_>) {
        let _ = line;
        if !ctx.native {
            return self.observe_by_encoding(rec, ctx, sink);
        }
        match &rec.event {
            Event::ToolCall(_) | Event::ToolResult(_) | Event::ToolWithdrawn { .. } | Event::PermissionDenied(_)
                if self.denied => {}
            Event::ToolCall(c) => self.note_call(c, sink),
            Event::ToolResult(r) => self.note_result(r.id.as_deref().unwrap_or(""), r.status),
            Event::ToolWithdrawn { id: Some(id) } if ctx.call.name.is_some() && self.last_call.id == *id => {
                self.last_call.open = false;
            }
            Event::PermissionDenied(_) => self.denied = true,
            Event::FinalAnswer { text } if !text.is_empty() => self.answered = true,
            Event::FinalAnswer { text } => self.pending_answer = Some(text.clone()),
            Event::Error { .. } => self.errored = true,
            Event::Approval { actions } => self.approval.clone_from(actions),
            Event::Notice { text } => {
                if let Some(rest) = text.strip_prefix("permission denied: ") {
                    self.refusal_notice = Some(rest.to_string());
                }
            }
            Event::Terminal(_) => self.observe_by_encoding(rec, ctx, sink),
            _ => {}
        }
    }

    fn encode(&mut self, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        let own = ctx.native;
        let extra = Some(&rec.extra).filter(|e| !e.is_empty());
        match &rec.event {
            Event::ToolCall(_) | Event::ToolResult(_) | Event::ToolWithdrawn { .. } | Event::PermissionDenied(_)
                if self.denied =>
            {
                // The spec: no tool events after permission_denied.
                sink.report.dropped_kind(&format!("{} after permission_denied", rec.event.kind()));
                return Fate::Dropped;
            }
            Event::ToolCall(c) => {
                self.note_call(c, sink);
                let id = c.id.as_deref().unwrap_or("");
                let args = self.last_call.json_args();
                emit(
                    sink,
                    "tool_call",
                    vec![("id", Field::Str(id)), ("name", Field::Str(&c.name)), ("args", args)],
                    extra,
                );
            }
            Event::ToolResult(r) => {
                let id = r.id.clone().unwrap_or_default();
                let name = r.name.as_ref().or(ctx.call.name.as_ref()).cloned().unwrap_or_default();
                if !ctx.matched {
                    // Every tool_result must name an earlier tool_call.
                    sink.report.synthesized("tool_call");
                    emit(
                        sink,
                        "tool_call",
                        vec![("id", Field::Str(&id)), ("name", Field::Str(&name)), ("args", args_object(&r.arguments))],
                        None,
                    );
                }
                self.note_result(&id, r.status);
                let fields = vec![
                    ("id", Field::Str(&id)),
                    ("name", Field::Str(&name)),
                    ("status", Field::Str(status_word(r.status))),
                    ("output", tool_output(r, ctx)),
                ];
                emit(sink, "tool_result", fields, extra);
            }
            Event::ToolWithdrawn { id: Some(id) } if ctx.call.name.is_some() => {
                // A call taken back (wuu's tool_removed) will have no result: adal's word for a
                // call that did not finish is cancelled.
                if self.last_call.id == *id {
                    self.last_call.open = false;
                }
                let fields = vec![
                    ("id", Field::Str(id)),
                    ("name", Field::Str(ctx.call.name.as_deref().unwrap_or_default())),
                    ("status", Field::Str(status_word(ToolStatus::Cancelled))),
                    ("output", Field::Str("")),
                ];
                emit(sink, "tool_result", fields, None);
            }
            Event::PermissionDenied(d) if ctx.answered && !own => {
                self.held_refusal = Some((d.id.clone().unwrap_or_default(), d.reason.clone()));
                return Fate::Absorbed;
            }
            Event::PermissionDenied(d) => {
                let fields = vec![
                    ("id", Field::Str(d.id.as_deref().unwrap_or(""))),
                    ("name", Field::Str(&d.name)),
                    ("args", args_object(&d.arguments)),
                    ("reason", Field::Str(d.reason.as_deref().unwrap_or("approval required"))),
                ];
                emit(sink, "permission_denied", fields, extra);
                self.denied = true;
            }
            Event::FinalAnswer { text } if own && !text.is_empty() => {
                emit(sink, "answer", vec![("content", Value::String(text.clone()))], extra);
                self.answered = true;
            }
            Event::FinalAnswer { text } => {
                self.pending_answer = Some(text.clone());
                return Fate::Absorbed;
            }
            Event::Error { message, .. } => {
                emit(sink, "error", vec![("message", Value::String(message.clone()))], extra);
                self.errored = true;
            }
            Event::Approval { actions } => {
                self.approval.clone_from(actions);
                return Fate::Absorbed;
            }
            Event::Terminal(_) => return self.terminal(rec, ctx, sink),
            Event::Extension { line } if own => {
                write_line(sink.out, line, Layout::Compact);
                return Fate::PassedThrough;
            }
            Event::Notice { text } => {
                if let Some(rest) = text.strip_prefix("permission denied: ") {
                    self.refusal_notice = Some(rest.to_string());
                }
                sink.report.dropped_kind("notice");
                return Fate::Dropped;
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
    fn the_whole_input_is_hashed_only_while_no_session_is_named() {
        let encoder = Encoder::new();
        let mut ctx = Context::default();
        assert!(encoder.needs_whole_digest(&ctx), "no session named: complete's id is derived");
        ctx.session_id = Some("thread-9f2c".into());
        assert!(!encoder.needs_whole_digest(&ctx), "a named session is complete's id");
    }
}

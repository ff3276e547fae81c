//! Reads Gemini CLI's `stream-json`: `init` as the session, the user `message` as the prompt,
//! the assistant's delta chunks as messages of text (one from each run of chunks to the next
//! line of another kind), `tool_use`/`tool_result` as calls and their results (paired by
//! `tool_id`, the name taken from the call), `error` lines as notices and non-fatal errors, and
//! `result` as the run's end with one usage record per model its `stats` name.
//!
//! Each record keeps the members of its line that the model has no field for (`timestamp`, an
//! error's `type`, the `stats` left once the tokens are read), so that the canonical stream
//! shows them and a gemini target can write them again.

use indexmap::IndexMap;
use serde_json::{Map, Value};

use crate::codec::make_room;
use crate::codec::{Decode, Decoded, Dialect, LineError, Record};
use crate::dialect::util::{take_type, whole_line};
use crate::json::object::Object;
use crate::model::{
    Arguments, Basis, Denial, Event, Outcome, Scope, Session, Terminal, Tokens, ToolCall, ToolResult, ToolStatus, Usage,
};

/// The error type of a refused call (gemini.md, Decode: 'A tool_result typed policy_violation
/// is a refused call').
pub(crate) const REFUSED: &str = "policy_violation";

#[derive(Default)]
pub struct Decoder {
    session_id: Option<String>,
    model: Option<String>,
    /// Calls announced and not yet answered, by `tool_id`: their `tool_name` (a `tool_result`
    /// names none).
    calls: IndexMap<String, String>,
    /// Assistant chunks are streaming: a message of text is open.
    text_open: bool,
    /// The chunks since the last `tool_result`: the answer (gemini.md, Records).
    answer: String,
    /// The last `error` line's message, for an error `result` that states none.
    last_error: Option<String>,
}

impl Decoder {
    pub fn new() -> Self {
        Self::default()
    }
}

fn own(event: Event) -> Record {
    Record::new(Dialect::Gemini, event)
}

/// A count: an integer, or a string of its digits (said on stderr); anything else is none, said.
fn count(at: &str, v: Option<&Value>, out: &mut Decoded) -> Option<u64> {
    match v? {
        Value::Number(n) if n.is_u64() => n.as_u64(),
        Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
            out.warn(format!("{at} is the string {}; read as the count {s}", crate::json::quoted(s)));
            s.parse().ok()
        }
        other => {
            out.warn(crate::dialect::util::not_a_count("result", at, other, "unknown"));
            None
        }
    }
}

/// A `stats` object (the whole's, or one model's) as canonical tokens: input as is (it
/// includes `cached`), `cached` the cache read, output as is (thoughts are not in it), the
/// total as stated (thoughts and tool-use prompt are in it). A member Gemini did not write is
/// unknown, not 0.
fn tokens(at: &str, o: &Map<String, Value>, out: &mut Decoded) -> Tokens {
    let mut n = |k: &str| count(&format!("{at}.{k}"), o.get(k), out);
    let (all, cached, fresh) = (n("input_tokens"), n("cached"), n("input"));
    let (output, total) = (n("output_tokens"), n("total_tokens"));
    // Before v0.22 only input_tokens; were it missing, the non-cached part and the cache.
    let mut input = all.or_else(|| fresh.map(|f| f.saturating_add(cached.unwrap_or(0))));
    if let (Some(i), Some(c)) = (input, cached) {
        if i < c {
            // An input below its own cache figure cannot include it (gemini.md says it does):
            // the other reading holds, and is said.
            out.warn(format!(
                "{at}.input_tokens {i} is less than its cached {c}, so it cannot include them; read as {} (input_tokens + cached)",
                i.saturating_add(c)
            ));
            input = Some(i.saturating_add(c));
        }
    }
    Tokens { input, output, cache_read: cached, cache_write: None, reasoning: None, total }
}

/// The HTTP status an API error's message states: Gemini CLI writes `[API Error: ` and the
/// response body (notes: "message `[API Error: ` + the response body + `]`"), whose Google
/// error object holds `"code": 500`; a client's message may say `status: 500` instead. A
/// status of 400 to 599, where one is there.
fn http_status(message: &str) -> Option<u64> {
    let lower = message.to_ascii_lowercase();
    for key in ["\"code\"", "status"] {
        let mut from = 0;
        while let Some(at) = lower[from..].find(key) {
            let rest = &lower[from + at + key.len()..];
            let digits = rest.trim_start_matches([' ', ':', '=']);
            let n: String = digits.chars().take_while(char::is_ascii_digit).collect();
            if n.len() == 3 {
                if let Ok(code @ 400..=599) = n.parse::<u64>() {
                    return Some(code);
                }
            }
            from += at + key.len();
        }
    }
    None
}

/// A line's `error` member `{type, message}`, read: whether there is one, its type and its
/// message. What is left of it once the message is read (its `type`, any member of its own)
/// stays among the line's members, in its place; an `error` that is no object stays as it is.
fn take_error(m: &mut Object<'_>) -> (bool, Option<String>, Option<String>) {
    let Some(Value::Object(mut e)) = m.get_value("error") else { return (false, None, None) };
    let message = match e.remove("message") {
        Some(Value::String(text)) => Some(text),
        Some(other) => {
            e.insert("message".into(), other);
            None
        }
        None => None,
    };
    let kind = e.get("type").and_then(Value::as_str).map(str::to_string);
    if e.is_empty() {
        m.remove("error");
    } else {
        m.insert("error", Value::Object(e));
    }
    (true, kind, message)
}

impl Decoder {
    /// Ends the message of text being streamed, before a line of another kind.
    fn close_text(&mut self, out: &mut Decoded) {
        if std::mem::take(&mut self.text_open) {
            out.push(own(Event::TextEnd { text: None }));
        }
    }

    fn message(&mut self, kind: &str, mut m: Object<'_>, out: &mut Decoded) -> Result<(), LineError> {
        match m.get_str("role").as_deref() {
            Some("user") => {
                self.close_text(out);
                m.remove("role");
                let text = m.take_str("content").ok_or_else(|| LineError::bad("message without a string content"))?;
                let extra = out.extra(m);
                out.push(Record::with_extra(Dialect::Gemini, Event::Prompt { text }, extra));
            }
            Some("assistant") => {
                m.remove("role");
                let text = m.take_str("content").ok_or_else(|| LineError::bad("message without a string content"))?;
                // `delta: true` is what every assistant line is; one without it (no writer of
                // the spec's sends one) is a chunk too, and written back as one.
                if m.get("delta").is_some_and(|d| d.to_value().is_boolean()) {
                    m.remove("delta");
                }
                if !std::mem::replace(&mut self.text_open, true) {
                    out.push(own(Event::TextStart));
                }
                self.answer.push_str(&text);
                let extra = out.extra(m);
                out.push(Record::with_extra(Dialect::Gemini, Event::TextDelta { text, chars: None }, extra));
            }
            _ => out.push(own(Event::Extension { line: whole_line(kind.to_string(), m) })),
        }
        Ok(())
    }

    fn tool_use(&mut self, mut m: Object<'_>, out: &mut Decoded) -> Result<(), LineError> {
        self.close_text(out);
        let name = m.take_str("tool_name").ok_or_else(|| LineError::bad("tool_use without a string tool_name"))?;
        let id = m.take_str("tool_id").ok_or_else(|| LineError::bad("tool_use without a string tool_id"))?;
        // The model's args, `{}` if none (gemini.md, Records): a null is none.
        let parameters = match m.shift_remove("parameters") {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(v) => v,
        };
        make_room(&mut self.calls, id.as_str());
        self.calls.insert(id.clone(), name.clone());
        let call = ToolCall {
            id: Some(id.into()),
            index: None,
            name: name.into(),
            arguments: Arguments::value(parameters),
            id_made: false,
        };
        let extra = out.extra(m);
        out.push(Record::with_extra(Dialect::Gemini, Event::ToolCall(call), extra));
        Ok(())
    }

    fn tool_result(&mut self, mut m: Object<'_>, out: &mut Decoded) -> Result<(), LineError> {
        self.close_text(out);
        let id = m.take_str("tool_id").ok_or_else(|| LineError::bad("tool_result without a string tool_id"))?;
        let status = match m.take_str("status").as_deref() {
            Some("success") => ToolStatus::Completed,
            Some("error") => ToolStatus::Failed,
            other => {
                out.warn(match other {
                    Some(word) => format!(
                        "tool_result.status {} is not success or error; read as error",
                        crate::json::quoted(word)
                    ),
                    None => "tool_result has no status; read as error".to_string(),
                });
                ToolStatus::Failed
            }
        };
        let output = m.take_kept_str("output");
        let (_, kind, message) = take_error(&mut m);
        // The name is the call's; a result whose call was not seen names it in its id, the
        // text before the first `__` (since v0.43; ids of older versions name no tool).
        let name = self
            .calls
            .shift_remove(&id)
            .or_else(|| id.split_once("__").map(|(n, _)| n.to_string()).filter(|n| !n.is_empty()));
        self.answer.clear();
        let result = ToolResult {
            id: Some(id.as_str().into()),
            index: None,
            name: name.as_deref().map(Into::into),
            status,
            output,
            error: message.clone(),
            arguments: Arguments::default(),
        };
        let extra = out.extra(m);
        out.push(Record::with_extra(Dialect::Gemini, Event::ToolResult(result), extra));
        if kind.as_deref() == Some(REFUSED) {
            // A refused call: failed, and refused (gemini.md, Decode).
            out.push(own(Event::PermissionDenied(Denial {
                id: Some(id),
                name: name.unwrap_or_default(),
                arguments: Arguments::default(),
                reason: message,
            })));
        }
        Ok(())
    }

    fn error(&mut self, mut m: Object<'_>, out: &mut Decoded) -> Result<(), LineError> {
        self.close_text(out);
        let severity = m.take_str("severity");
        let message = m.take_str("message").ok_or_else(|| LineError::bad("error without a string message"))?;
        self.last_error = Some(message.clone());
        // Never fatal (gemini.md, Records): a warning is a notice, an error an error that does
        // not end the run.
        let event = match severity.as_deref() {
            Some("warning") => Event::Notice { text: message },
            Some("error") => Event::Error { message, fatal: false },
            other => {
                out.warn(match other {
                    Some(word) => {
                        format!("error.severity {} is not warning or error; read as error", crate::json::quoted(word))
                    }
                    None => "error has no severity; read as error".to_string(),
                });
                Event::Error { message, fatal: false }
            }
        };
        let extra = out.extra(m);
        out.push(Record::with_extra(Dialect::Gemini, event, extra));
        Ok(())
    }

    fn result(&mut self, mut m: Object<'_>, out: &mut Decoded) -> Result<(), LineError> {
        self.close_text(out);
        let status = m.take_str("status");
        let (has_error, kind, message) = take_error(&mut m);
        let contract = Dialect::Gemini.contract();
        let mut outcome = match status.as_deref() {
            Some("success") => Outcome::Completed,
            Some("error") => {
                kind.as_deref().and_then(|k| contract.decode_outcome("error_type", k)).unwrap_or(Outcome::Failed)
            }
            other => {
                out.warn(match other {
                    Some(word) => {
                        format!("result.status {} is not success or error; read as error", crate::json::quoted(word))
                    }
                    None => "result has no status; read as error".to_string(),
                });
                Outcome::Failed
            }
        };
        // Ours: a timeout is cancelled and says so (mappings/gemini.json, outcomes).
        if outcome == Outcome::Interrupted
            && message.as_deref().is_some_and(|m| m.to_ascii_lowercase().contains("timeout"))
        {
            outcome = Outcome::Timeout;
        }
        let mut t = Terminal::new(outcome);
        match outcome {
            Outcome::Completed => {}
            Outcome::Failed => t.error = message.clone().or_else(|| self.last_error.clone()),
            Outcome::Incomplete if kind.as_deref() == Some("FatalTurnLimitedError") => {
                // A turn limit: the reason other dialects know one by (claude-code's
                // error_max_turns, localcode's max_rounds), Gemini's words as the error.
                t.reason = Some("max_turns".into());
                t.error.clone_from(&message);
            }
            _ => t.reason = message.clone().or_else(|| self.last_error.clone()),
        }
        // The exit status the stream implies (gemini.md, End of run and outcome).
        if status.as_deref() == Some("error") {
            let by_kind = contract.decode.get("exit_code").and_then(|table| table.get(kind.as_deref()?)?.as_i64());
            let api = || message.as_deref().filter(|m| m.starts_with("[API Error")).and_then(http_status);
            t.exit_code = if has_error { by_kind.or_else(|| api().map(|s| (s & 255) as i64)) } else { Some(0) };
        }
        t.final_text = (!self.answer.is_empty()).then(|| self.answer.clone());
        t.session_id.clone_from(&self.session_id);
        t.model.clone_from(&self.model);
        if let Some(Value::Object(mut stats)) = m.get_value("stats") {
            let whole = tokens("stats", &stats, out);
            // One record per model, in the order of their names: a JSON object's members have
            // no order a reader may rely on, and the run's figures do not depend on the layout.
            let mut models: Vec<(String, Tokens)> = match stats.get("models") {
                Some(Value::Object(models)) => models
                    .iter()
                    .filter_map(|(name, v)| {
                        Some((name.clone(), tokens(&format!("stats.models.{name}"), v.as_object()?, out)))
                    })
                    .collect(),
                _ => Vec::new(),
            };
            models.sort_by(|a, b| a.0.cmp(&b.0));
            let usage = |model: Option<&str>, tokens: Tokens| {
                own(Event::Usage(Usage {
                    scope: Scope::Run,
                    basis: Basis::Delta,
                    final_: true,
                    of: None,
                    model: model.map(Into::into),
                    tokens,
                }))
            };
            if models.is_empty() {
                out.push(usage(None, whole));
            } else {
                for (name, tokens) in models {
                    out.push(usage(Some(&name), tokens));
                }
            }
            t.usage = Some(whole);
            // What is left of stats once the tokens are read: duration_ms and members of its own.
            for k in ["total_tokens", "input_tokens", "output_tokens", "cached", "input", "tool_calls", "models"] {
                stats.remove(k);
            }
            if stats.is_empty() {
                m.remove("stats");
            } else {
                m.insert("stats", Value::Object(stats));
            }
        }
        let extra = out.extra(m);
        out.push(Record::with_extra(Dialect::Gemini, Event::Terminal(t), extra));
        Ok(())
    }
}

impl Decode for Decoder {
    fn decode(&mut self, mut m: Object<'_>, out: &mut Decoded) -> Result<(), LineError> {
        let kind = take_type(&mut m)?;
        match kind.as_ref() {
            "init" => {
                let timestamp = m.take_text("timestamp").map(|t| t.into_owned());
                let id = m.take_str("session_id");
                let model = m.take_str("model");
                self.session_id.clone_from(&id);
                self.model.clone_from(&model);
                let session = Session { id, model, timestamp, ..Session::default() };
                let extra = out.extra(m);
                out.push(Record::with_extra(Dialect::Gemini, Event::Session(session), extra));
            }
            "message" => self.message(&kind, m, out)?,
            "tool_use" => self.tool_use(m, out)?,
            "tool_result" => self.tool_result(m, out)?,
            "error" => self.error(m, out)?,
            "result" => self.result(m, out)?,
            _ => out.push(own(Event::Extension { line: whole_line(kind.to_string(), m) })),
        }
        Ok(())
    }

    /// The text being streamed ends with the input. A stream with no `result` (a signal, a cut
    /// file) is left to what knows how the process ended: `exec`'s exit status (the contract's
    /// `exit_without_terminal`), else the normalizer's incomplete run.
    fn finish(&mut self, out: &mut Decoded) {
        self.close_text(out);
    }
}

#[cfg(test)]
mod tests {
    use super::http_status;

    #[test]
    fn an_api_errors_http_status_is_read_from_the_body_it_quotes() {
        let body = r#"[API Error: {"error":{"code":500,"message":"Internal error encountered.","status":"INTERNAL"}}]"#;
        assert_eq!(http_status(body), Some(500));
        assert_eq!(http_status("[API Error: got status: 429 Too Many Requests. ...]"), Some(429));
        assert_eq!(http_status("[API Error: fetch failed]"), None);
        assert_eq!(http_status("[API Error: Internal error (Status: INTERNAL)]"), None);
    }
}

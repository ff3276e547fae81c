//! Reading loom: each line's `kind` becomes canonical records; a `Session` line's summary is
//! kept whole (its tool calls, usage and cost), and `Terminal` gives the run's outcome.

use compact_str::ToCompactString;
use serde_json::{Map, Value};

use super::SCHEMA_VERSION;
use crate::codec::{Decode, Decoded, Dialect, LineError, Record};
use crate::dialect::util::{check_record, kind_of, not_a_count, take_count_noted};
use crate::json::member::Member;
use crate::json::object::Object;
use crate::model::{Arguments, Basis, Event, Outcome, Scope, Summary, SummaryCall, Terminal, Tokens, ToolCall, Usage};

#[derive(Default)]
pub struct Decoder;

impl Decoder {
    pub fn new() -> Self {
        Decoder
    }
}

/// The counts of the kinds most loom lines are (`Turn`'s and `Usage`'s).
const COUNTS: [&str; 6] = [
    "turn",
    "input_tokens",
    "output_tokens",
    "cached_input_tokens",
    "cache_creation_input_tokens",
    "reasoning_output_tokens",
];

/// [`SCHEMA_VERSION`] as loom writes it.
const VERSION_TEXT: &str = "1";
const _: () = assert!(SCHEMA_VERSION == 1, "VERSION_TEXT is the schema version's digits");

/// Puts what a member gave into `slot` where it was taken (see [`crate::json::member::Member::str_taken`]):
/// whether it was.
fn put<T>(taken: Option<Option<T>>, slot: &mut Option<T>) -> bool {
    taken.map(|t| *slot = t).is_some()
}

/// [`put`] for a count: a member that holds none (a negative number, say: the contract's
/// integers may be negative) stays, and `none` is set, for [`say_no_counts`] to look.
fn put_count(v: &Member<'_>, slot: &mut Option<u64>, none: &mut bool) -> bool {
    put(v.count_taken(), slot) || {
        *none = true;
        false
    }
}

/// Says on stderr which of the counts `keys` of a `kind` line stayed in it, holding no count.
fn say_no_counts(m: &Object<'_>, kind: &str, keys: &[&str], out: &mut Decoded) {
    for key in keys {
        if let Some(v) = m.get(key) {
            out.warn(not_a_count(kind, key, &v.to_value(), "none"));
        }
    }
}

/// A Session line's summary fields; what it does not know stays in `m`, and a count that
/// holds none is said on stderr.
fn summary(m: &mut Object<'_>, out: &mut Decoded) -> Summary {
    let mut count = |m: &mut Object<'_>, key| take_count_noted(m, "Session", key, "none", out);
    let tokens = Tokens {
        input: count(m, "input_tokens"),
        output: count(m, "output_tokens"),
        cache_read: count(m, "cache_read_input_tokens"),
        cache_write: count(m, "cache_creation_input_tokens"),
        reasoning: count(m, "reasoning_output_tokens"),
        total: None,
    };
    let tool_calls = match m.shift_remove("tool_calls") {
        Some(Value::Array(calls)) => Some(
            calls
                .into_iter()
                .map(|c| SummaryCall {
                    id: c["call_id"].as_str().unwrap_or_default().to_string(),
                    name: c["name"].as_str().unwrap_or_default().to_string(),
                    answered: c["answered"].as_bool().unwrap_or(false),
                    error: c["error"].as_bool().unwrap_or(false),
                    extra: match c {
                        Value::Object(o) => o
                            .into_iter()
                            .filter(|(k, _)| !matches!(k.as_str(), "call_id" | "name" | "answered" | "error"))
                            .collect(),
                        _ => serde_json::Map::new(),
                    },
                })
                .collect(),
        ),
        Some(other) => {
            m.insert("tool_calls", other);
            None
        }
        None => None,
    };
    Summary {
        source: m.take_str("source"),
        adapter: m.take_str("adapter"),
        model: m.take_str("model"),
        models: m.shift_remove("models"),
        turns: count(m, "turns"),
        tokens_basis: m.take_str("tokens_basis"),
        tokens,
        cost_usd: match m.shift_remove("cost_usd") {
            Some(Value::Number(n)) => Some(n),
            _ => None,
        },
        duration_ms: count(m, "duration_ms"),
        duration_api_ms: count(m, "duration_api_ms"),
        first_timestamp_ms: count(m, "first_timestamp_ms"),
        last_timestamp_ms: count(m, "last_timestamp_ms"),
        is_error: m.take_bool("is_error"),
        stop_reason: m.take_str("stop_reason"),
        tool_calls,
        unk: count(m, "unk"),
        transcript_digest: m.take_str("transcript_digest"),
        projection_error: m.take_str("projection_error"),
    }
}

impl Decode for Decoder {
    fn decode(&mut self, mut m: Object<'_>, out: &mut Decoded) -> Result<(), LineError> {
        check_version(&m, out)?;
        // Both stay in the line until its kind's members are taken: the common kinds take them
        // in that one pass, the rest here.
        let kind = kind_of(&m, "kind")?;
        // loom's records are a strict contract: a record without a required field, or with one
        // of the wrong type, is not a record a reader can take (nor one loom would write back);
        // but a count written as a string of digits is still that count, and an optional field
        // of the wrong type is left out rather than the record lost.
        check_record(Dialect::Loom.contract(), &kind, &mut m, out)?;
        let hot = matches!(kind.as_ref(), "Turn" | "ToolCall" | "Usage");
        if !hot {
            m.take_each(|k, _| matches!(k, "kind" | "schema_version"));
        }
        // Whether a count of the line holds none (said on stderr once the line is read).
        let mut no_counts = false;
        let event = match kind.as_ref() {
            "Route" => Event::Diagnostics { kind: "route".into(), data: std::mem::take(&mut m).into_fields() },
            // The kinds most lines are: their members taken in one pass.
            "Turn" => {
                let (mut turn, mut stop) = (None, None);
                m.take_each(|k, v| match k {
                    "turn" => put_count(v, &mut turn, &mut no_counts),
                    "turn_stop" => put(v.name_taken(), &mut stop),
                    "kind" | "schema_version" => true,
                    _ => false,
                });
                Event::RoundEnd { id: turn.map(|t| t.to_compact_string()), stop }
            }
            "ToolCall" => {
                let (mut arguments, mut id, mut name) = (Arguments::default(), None, None);
                m.take_each(|k, v| {
                    match k {
                        "arguments" => {
                            arguments = match v.as_str() {
                                Some(t) => Arguments::json_text(t.into_owned()),
                                None if v.is_null() => Arguments::default(),
                                None => Arguments::value(v.to_value()),
                            }
                        }
                        "call_id" => return put(v.name_taken(), &mut id),
                        "name" => return put(v.name_taken(), &mut name),
                        "kind" | "schema_version" => {}
                        _ => return false,
                    }
                    true
                });
                Event::ToolCall(ToolCall { id, index: None, name: name.unwrap_or_default(), arguments, id_made: false })
            }
            "Usage" => {
                let (mut turn, mut final_, mut model, mut t) = (None, None, None, Tokens::default());
                m.take_each(|k, v| match k {
                    "turn" => put_count(v, &mut turn, &mut no_counts),
                    "final_usage" => put(v.bool_taken().map(Some), &mut final_),
                    "model" => put(v.name_taken(), &mut model),
                    "input_tokens" => put_count(v, &mut t.input, &mut no_counts),
                    "output_tokens" => put_count(v, &mut t.output, &mut no_counts),
                    "cached_input_tokens" => put_count(v, &mut t.cache_read, &mut no_counts),
                    "cache_creation_input_tokens" => put_count(v, &mut t.cache_write, &mut no_counts),
                    "reasoning_output_tokens" => put_count(v, &mut t.reasoning, &mut no_counts),
                    "kind" | "schema_version" => true,
                    _ => false,
                });
                Event::Usage(Usage {
                    scope: Scope::Round,
                    basis: Basis::Cumulative,
                    final_: final_.unwrap_or(true),
                    of: turn.map(|t| t.to_compact_string()),
                    model,
                    tokens: t,
                })
            }
            "Approval" => {
                let actions = match m.shift_remove("actions") {
                    Some(Value::Array(a)) => a.into_iter().filter_map(|x| x.as_str().map(str::to_string)).collect(),
                    _ => Vec::new(),
                };
                Event::Approval { actions }
            }
            "Session" => Event::SessionSummary(Box::new(summary(&mut m, out))),
            "Terminal" => terminal(&mut m, out),
            _ => {
                let mut line = Map::new();
                line.insert("kind".into(), Value::String(kind.into_owned()));
                line.insert("schema_version".into(), Value::from(SCHEMA_VERSION));
                line.extend(m.into_fields());
                out.push(Record::new(Dialect::Loom, Event::Extension { line: Value::Object(line) }));
                return Ok(());
            }
        };
        if no_counts {
            say_no_counts(&m, &kind, &COUNTS, out);
        }
        let extra = out.extra(m);
        out.push(Record::with_extra(Dialect::Loom, event, extra));
        Ok(())
    }
}

/// The line's `schema_version`: loom's own, or the stream is refused (a string of its digits is
/// that version, said as a count read from a string is).
fn check_version(m: &Object<'_>, out: &mut Decoded) -> Result<(), LineError> {
    match m.get("schema_version") {
        // As loom writes it (nearly every line: see VERSION_TEXT), then any way of writing
        // the number.
        Some(Member::Raw(VERSION_TEXT, _)) => {}
        Some(v) if v.as_u64() == Some(SCHEMA_VERSION) => {}
        // The version written as a string of its digits is that version, as a count is
        // (DESIGN.md); said, as a count read from a string is.
        Some(v) if v.count_taken() == Some(Some(SCHEMA_VERSION)) => {
            out.warn(format!("schema_version is the string {}, not an integer; read as {SCHEMA_VERSION}", v.to_value()))
        }
        Some(v) => {
            let v = v.to_value();
            return Err(LineError::fatal(format!(
                "loom schema_version {v}; this agentgate reads schema_version {SCHEMA_VERSION} only, so the stream is refused"
            )));
        }
        None => return Err(LineError::bad("loom line without \"schema_version\"")),
    }
    Ok(())
}

/// `Terminal`: the run's outcome from its stop reason (the exit status it implies checked).
fn terminal(m: &mut Object<'_>, out: &mut Decoded) -> Event {
    let stop = m.take_str("stop_reason");
    let exit_status = m.take_int("exit_status");
    let error = m.take_str("error");
    let contract = Dialect::Loom.contract();
    let outcome = match stop.as_deref() {
        Some(s) => contract.decode_outcome("stop_reason", s).unwrap_or_else(|| {
            out.warn(format!("Terminal has stop_reason {s}, which loom does not list; read as an incomplete run"));
            Outcome::Incomplete
        }),
        None => Outcome::Failed,
    };
    let implied = match stop.as_deref() {
        Some("Completed" | "ApprovalRequired") => 0,
        Some(_) => 3,
        None => 1,
    };
    if let Some(code) = exit_status.filter(|c| *c != implied) {
        out.warn(format!(
            "Terminal has exit_status {code} but stop_reason {} (which means {implied}); the stop reason is followed",
            stop.as_deref().unwrap_or("absent")
        ));
    }
    let mut t = Terminal::new(outcome);
    t.reason = stop;
    t.exit_code = exit_status;
    t.error = error;
    Event::Terminal(t)
}

use serde_json::{Map, Value};

use super::SCHEMA_VERSION;
use crate::dialect::{check_record, kind_of, Decode, Decoded, Dialect, LineError, Record};
use crate::event::{Arguments, Basis, Event, Outcome, Scope, Summary, SummaryCall, Terminal, Tokens, ToolCall, Usage};
use crate::object::Object;

#[derive(Default)]
pub struct Decoder;

impl Decoder {
    pub fn new() -> Self {
        Decoder
    }
}

fn tokens(m: &mut Object<'_>, input: &str, cache_read: &str, cache_write: &str) -> Tokens {
    Tokens {
        input: m.take_count(input),
        output: m.take_count("output_tokens"),
        cache_read: m.take_count(cache_read),
        cache_write: m.take_count(cache_write),
        reasoning: m.take_count("reasoning_output_tokens"),
        total: None,
    }
}

/// Puts what a member gave into `slot` where it was taken (see [`crate::object::Member::str_taken`]):
/// whether it was.
fn put<T>(taken: Option<Option<T>>, slot: &mut Option<T>) -> bool {
    taken.map(|t| *slot = t).is_some()
}

/// A Session line's summary fields; what it does not know stays in `m`.
fn summary(m: &mut Object<'_>) -> Summary {
    let tool_calls = match m.shift_remove("tool_calls") {
        Some(Value::Array(calls)) => Some(
            calls
                .into_iter()
                .map(|c| SummaryCall {
                    id: c["call_id"].as_str().unwrap_or_default().to_string(),
                    name: c["name"].as_str().unwrap_or_default().to_string(),
                    answered: c["answered"].as_bool().unwrap_or(false),
                    error: c["error"].as_bool().unwrap_or(false),
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
        turns: m.take_count("turns"),
        tokens_basis: m.take_str("tokens_basis"),
        tokens: tokens(m, "input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"),
        cost_usd: match m.shift_remove("cost_usd") {
            Some(Value::Number(n)) => Some(n),
            _ => None,
        },
        duration_ms: m.take_count("duration_ms"),
        duration_api_ms: m.take_count("duration_api_ms"),
        first_timestamp_ms: m.take_count("first_timestamp_ms"),
        last_timestamp_ms: m.take_count("last_timestamp_ms"),
        is_error: m.take_bool("is_error"),
        stop_reason: m.take_str("stop_reason"),
        tool_calls,
        unk: m.take_count("unk"),
        transcript_digest: m.take_str("transcript_digest"),
        projection_error: m.take_str("projection_error"),
    }
}

impl Decode for Decoder {
    fn decode(&mut self, mut m: Object<'_>, out: &mut Decoded) -> Result<(), LineError> {
        match m.get("schema_version") {
            Some(v) if v.as_u64() == Some(SCHEMA_VERSION) => {}
            Some(v) => {
                let v = v.to_value();
                return Err(LineError::fatal(format!(
                    "loom schema_version {v}; this agentgate reads schema_version {SCHEMA_VERSION} only, so the stream is refused"
                )));
            }
            None => return Err(LineError::bad("loom line without \"schema_version\"")),
        }
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
        let event = match kind.as_ref() {
            "Route" => Event::Diagnostics { kind: "route".into(), data: std::mem::take(&mut m).into_fields() },
            // The kinds most lines are: their members taken in one pass.
            "Turn" => {
                let (mut turn, mut stop) = (None, None);
                m.take_each(|k, v| match k {
                    "turn" => put(v.count_taken(), &mut turn),
                    "turn_stop" => put(v.str_taken(), &mut stop),
                    "kind" | "schema_version" => true,
                    _ => false,
                });
                Event::RoundEnd { id: turn.map(|t| t.to_string()), stop }
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
                        "call_id" => return put(v.str_taken(), &mut id),
                        "name" => return put(v.str_taken(), &mut name),
                        "kind" | "schema_version" => {}
                        _ => return false,
                    }
                    true
                });
                Event::ToolCall(ToolCall { id, index: None, name: name.unwrap_or_default(), arguments })
            }
            "Usage" => {
                let (mut turn, mut final_, mut model, mut t) = (None, None, None, Tokens::default());
                m.take_each(|k, v| match k {
                    "turn" => put(v.count_taken(), &mut turn),
                    "final_usage" => put(v.bool_taken().map(Some), &mut final_),
                    "model" => put(v.str_taken(), &mut model),
                    "input_tokens" => put(v.count_taken(), &mut t.input),
                    "output_tokens" => put(v.count_taken(), &mut t.output),
                    "cached_input_tokens" => put(v.count_taken(), &mut t.cache_read),
                    "cache_creation_input_tokens" => put(v.count_taken(), &mut t.cache_write),
                    "reasoning_output_tokens" => put(v.count_taken(), &mut t.reasoning),
                    "kind" | "schema_version" => true,
                    _ => false,
                });
                Event::Usage(Usage {
                    scope: Scope::Round,
                    basis: Basis::Cumulative,
                    final_: final_.unwrap_or(true),
                    of: turn.map(|t| t.to_string()),
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
            "Session" => Event::SessionSummary(Box::new(summary(&mut m))),
            "Terminal" => {
                let stop = m.take_str("stop_reason");
                let exit_status = m.take_int("exit_status");
                let error = m.take_str("error");
                let contract = Dialect::Loom.contract();
                let outcome = match stop.as_deref() {
                    Some(s) => contract.decode_outcome("stop_reason", s).unwrap_or_else(|| {
                        out.warn(format!(
                            "Terminal has stop_reason {s}, which loom does not list; read as an incomplete run"
                        ));
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
            _ => {
                let mut line = Map::new();
                line.insert("kind".into(), Value::String(kind.into_owned()));
                line.insert("schema_version".into(), Value::from(SCHEMA_VERSION));
                line.extend(m.into_fields());
                out.push(Record::new(Dialect::Loom, Event::Extension { line: Value::Object(line) }));
                return Ok(());
            }
        };
        out.push(Record::with_extra(Dialect::Loom, event, m.into_extra()));
        Ok(())
    }
}

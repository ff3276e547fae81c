use serde_json::{Map, Value};

use super::SCHEMA_VERSION;
use crate::dialect::{take_kind, Decode, Decoded, Dialect, LineError, Record};
use crate::event::{
    Arguments, Basis, Event, Fields, Outcome, Scope, Summary, SummaryCall, Terminal, Tokens, ToolCall, Usage,
};
use crate::json::{take_bool, take_count, take_int, take_str};

#[derive(Default)]
pub struct Decoder;

impl Decoder {
    pub fn new() -> Self {
        Decoder
    }
}

fn tokens(m: &mut Map<String, Value>, input: &str, cache_read: &str, cache_write: &str) -> Tokens {
    Tokens {
        input: take_count(m, input),
        output: take_count(m, "output_tokens"),
        cache_read: take_count(m, cache_read),
        cache_write: take_count(m, cache_write),
        reasoning: take_count(m, "reasoning_output_tokens"),
        total: None,
    }
}

/// A Session line's summary fields; what it does not know stays in `m`.
fn summary(m: &mut Map<String, Value>) -> Summary {
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
            m.insert("tool_calls".into(), other);
            None
        }
        None => None,
    };
    Summary {
        source: take_str(m, "source"),
        adapter: take_str(m, "adapter"),
        model: take_str(m, "model"),
        models: m.shift_remove("models"),
        turns: take_count(m, "turns"),
        tokens_basis: take_str(m, "tokens_basis"),
        tokens: tokens(m, "input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"),
        cost_usd: match m.shift_remove("cost_usd") {
            Some(Value::Number(n)) => Some(n),
            _ => None,
        },
        duration_ms: take_count(m, "duration_ms"),
        duration_api_ms: take_count(m, "duration_api_ms"),
        first_timestamp_ms: take_count(m, "first_timestamp_ms"),
        last_timestamp_ms: take_count(m, "last_timestamp_ms"),
        is_error: take_bool(m, "is_error"),
        stop_reason: take_str(m, "stop_reason"),
        tool_calls,
        unk: take_count(m, "unk"),
        transcript_digest: take_str(m, "transcript_digest"),
        projection_error: take_str(m, "projection_error"),
    }
}

impl Decode for Decoder {
    fn decode(&mut self, mut m: Map<String, Value>, out: &mut Decoded) -> Result<(), LineError> {
        match m.get("schema_version") {
            Some(v) if v.as_u64() == Some(SCHEMA_VERSION) => {
                m.shift_remove("schema_version");
            }
            Some(v) => {
                return Err(LineError::fatal(format!(
                    "loom schema_version {v}; this agentgate reads schema_version {SCHEMA_VERSION} only, so the stream is refused"
                )))
            }
            None => return Err(LineError::bad("loom line without \"schema_version\"")),
        }
        let kind = take_kind(&mut m, "kind")?;
        // loom's records are a strict contract: a record without a required field, or with one
        // of the wrong type, is not a record a reader can take (nor one loom would write back).
        if let Some(problem) = Dialect::Loom.contract().check_fields(&kind, &m).into_iter().next() {
            return Err(LineError::bad(problem));
        }
        let event = match kind.as_str() {
            "Route" => Event::Diagnostics { kind: "route".into(), data: std::mem::take(&mut m) },
            "Turn" => {
                let turn = take_count(&mut m, "turn");
                Event::RoundEnd { id: turn.map(|t| t.to_string()), stop: take_str(&mut m, "turn_stop") }
            }
            "ToolCall" => {
                let arguments = match m.shift_remove("arguments") {
                    Some(Value::String(t)) => Arguments::json_text(t),
                    Some(Value::Null) | None => Arguments::default(),
                    Some(v) => Arguments::value(v),
                };
                Event::ToolCall(ToolCall {
                    id: take_str(&mut m, "call_id"),
                    index: None,
                    name: take_str(&mut m, "name").unwrap_or_default(),
                    arguments,
                })
            }
            "Usage" => {
                let turn = take_count(&mut m, "turn");
                Event::Usage(Usage {
                    scope: Scope::Round,
                    basis: Basis::Cumulative,
                    final_: take_bool(&mut m, "final_usage").unwrap_or(true),
                    of: turn.map(|t| t.to_string()),
                    model: take_str(&mut m, "model"),
                    tokens: tokens(&mut m, "input_tokens", "cached_input_tokens", "cache_creation_input_tokens"),
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
                let stop = take_str(&mut m, "stop_reason");
                let exit_status = take_int(&mut m, "exit_status");
                let error = take_str(&mut m, "error");
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
                line.insert("kind".into(), Value::String(kind));
                line.insert("schema_version".into(), Value::from(SCHEMA_VERSION));
                line.extend(m);
                out.push(Record::new(Dialect::Loom, Event::Extension { line: Value::Object(line) }));
                return Ok(());
            }
        };
        out.push(Record::with_extra(Dialect::Loom, event, Fields::from_iter(m)));
        Ok(())
    }
}

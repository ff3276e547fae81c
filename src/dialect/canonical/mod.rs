//! canonical: agentgate's own JSON Lines form of the event model, for fleets and tooling that
//! want one stream whatever the agent. Contract in `mappings/canonical.json`.
//!
//! One event per line: `{"v":1,"type":"<kind>", ...fields}`, compact, integers as integers,
//! absent fields left out. `v` is the format version; a reader refuses a version it does not
//! know. An event decoded from another dialect names it in `"dialect"`, and carries the members
//! of its source line that the model has no field for in `"extra"`, so that translating back to
//! that dialect loses nothing; a line the model has no event for is an `extension` event holding
//! it whole.
//! The last line is `terminal`, with the run's outcome and totals.

use serde_json::{Map, Value};

use crate::dialect::{take_type, Decode, Decoded, Dialect, Encode, LineError, Record, Sink, Sniff};
use crate::event::{Event, Fields};
use crate::json::{write_line, write_serialize, Layout};
use crate::normalize::Context;
use crate::object::Object;
use crate::report::Fate;

/// The format version written, and the only one read.
pub const VERSION: u64 = 1;

pub fn sniff(line: &Map<String, Value>) -> Sniff {
    if line.get("v").is_some_and(Value::is_u64) && line.get("type").is_some_and(Value::is_string) {
        Sniff::Yes
    } else {
        Sniff::No
    }
}

#[derive(Default)]
pub struct Decoder;

impl Decoder {
    pub fn new() -> Self {
        Decoder
    }
}

/// Canonical event kinds, read from the contract.
fn known(kind: &str) -> bool {
    Dialect::Canonical.contract().kinds.contains_key(kind)
}

impl Decode for Decoder {
    fn decode(&mut self, mut m: Object<'_>, out: &mut Decoded) -> Result<(), LineError> {
        match m.shift_remove("v") {
            Some(v) if v.as_u64() == Some(VERSION) => {}
            Some(v) => {
                return Err(LineError::fatal(format!(
                "canonical format version {v}; this agentgate reads version {VERSION} only, so the stream is refused"
            )))
            }
            None => return Err(LineError::bad("canonical line without its version member \"v\"")),
        }
        let origin = match m.shift_remove("dialect") {
            Some(Value::String(d)) => d.parse().unwrap_or(Dialect::Canonical),
            _ => Dialect::Canonical,
        };
        let extra = match m.shift_remove("extra") {
            Some(Value::Object(x)) => x,
            _ => Fields::new(),
        };
        let kind = take_type(&mut m)?;
        if !known(&kind) {
            let line = crate::dialect::whole_line(kind, m);
            out.push(Record::new(Dialect::Canonical, Event::Extension { line }));
            return Ok(());
        }
        // Our own format, held to its contract: a field of the wrong type is a bad line.
        if let Some(problem) = Dialect::Canonical.contract().check_fields(&kind, &m).into_iter().next() {
            return Err(LineError::bad(problem));
        }
        // A tool's output, most of the bytes, is kept as read (the contract has checked it is
        // a string); the rest goes straight from the members' text into the event.
        let kept = match kind.as_ref() {
            "tool_output" => m.take_kept("text"),
            "tool_result" => m.take_kept("output"),
            _ => None,
        };
        if kept.is_some() && kind == "tool_output" {
            // `text` is a required field of the event: a stand-in until the kept one goes in.
            m.insert("text", Value::String(String::new()));
        }
        m.insert("type", Value::String(kind.to_string()));
        let mut event: Event = serde_json::from_str(&m.to_json()).map_err(|e| {
            // The position is in the rebuilt text, not the line: leave it out.
            let why = e.to_string();
            LineError::bad(format!("{kind}: {}", why.split(" at line ").next().unwrap_or(&why)))
        })?;
        match (&mut event, kept) {
            (Event::ToolOutput { text, .. }, Some(kept)) => *text = kept,
            (Event::ToolResult(r), Some(kept)) => r.output = Some(kept),
            _ => {}
        }
        out.push(Record { event, origin, extra });
        Ok(())
    }
}

#[derive(Default)]
pub struct Encoder {
    /// The event serialized alone, before its members are spliced into the line.
    scratch: Vec<u8>,
}

impl Encoder {
    pub fn new() -> Self {
        Encoder::default()
    }
}

impl Encode for Encoder {
    fn carries_summaries(&self) -> bool {
        true
    }

    fn encode(&mut self, rec: &Record, _ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        if let (Event::Extension { line: Value::Object(line) }, Dialect::Canonical) = (&rec.event, rec.origin) {
            // A canonical line of a kind this version does not know goes back out as it came.
            let mut m = Map::with_capacity(line.len() + 1);
            m.insert("v".into(), Value::from(VERSION));
            m.extend(line.clone());
            write_line(sink.out, &Value::Object(m), Layout::Compact);
            return Fate::PassedThrough;
        }
        // `{"v":1,` + the event's own members (`type` first) + `dialect` and `extra`: the
        // event is serialized straight to bytes, not through a Value tree.
        self.scratch.clear();
        if write_serialize(&mut self.scratch, &rec.event).is_err() || self.scratch.len() < 2 {
            // Every event serializes as an object with string keys; nothing else can happen.
            return Fate::Dropped;
        }
        let out = &mut *sink.out;
        out.extend_from_slice(b"{\"v\":");
        out.extend_from_slice(VERSION.to_string().as_bytes());
        out.push(b',');
        out.extend_from_slice(&self.scratch[1..self.scratch.len() - 1]);
        if rec.origin != Dialect::Canonical {
            out.extend_from_slice(b",\"dialect\":\"");
            out.extend_from_slice(rec.origin.name().as_bytes());
            out.push(b'"');
        }
        if !rec.extra.is_empty() {
            out.extend_from_slice(b",\"extra\":");
            let _ = write_serialize(out, &rec.extra);
        }
        out.extend_from_slice(b"}\n");
        Fate::Written
    }
}

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

use crate::model::Name;
use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::codec::Context;
use crate::codec::{Carried, Decode, Decoded, Dialect, Encode, LineError, Record, Sink, Sniff, SourceLine};
use crate::dialect::util::{check_record, take_type};
use crate::json::member::Member;
use crate::json::number::write_u64;
use crate::json::object::Object;
use crate::json::{write_line, write_serialize, write_str, Layout};
use crate::model::Extra;
use crate::model::{Arguments, Basis, Event, Scope, Text, Tokens, ToolCall, ToolResult, Usage};
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
        if let Some(Value::String(d)) = m.shift_remove("input_digest") {
            out.input_digest.get_or_insert(d);
        }
        if let Some(Value::Object(mut w)) = m.shift_remove("whole_input") {
            if let (Some(Value::String(sha256)), Some(Value::String(xxh3))) = (w.remove("sha256"), w.remove("xxh3")) {
                out.whole_input = Some(crate::codec::WholeDigests { sha256, xxh3 });
            }
        }
        let origin = match m.shift_remove("dialect") {
            Some(Value::String(d)) => d.parse().unwrap_or(Dialect::Canonical),
            _ => Dialect::Canonical,
        };
        // The source line the record stands for (on the first record of the line's records,
        // `same_line` on the later ones): an extension's `line` is that line too.
        let line = if matches!(m.get("same_line"), Some(Member::Raw("true", _))) {
            m.remove("same_line");
            SourceLine::Same
        } else {
            let is_extension = m.get_str("type").as_deref() == Some("extension");
            let text = match m.get("line") {
                Some(Member::Raw(r, _)) if r.starts_with('{') && origin != Dialect::Canonical => Some(r.to_string()),
                _ => None,
            };
            if !is_extension && text.is_some() {
                m.remove("line");
            }
            match text {
                Some(text) => {
                    out.carried = Some(Carried { dialect: origin, text });
                    SourceLine::Whole { text: None }
                }
                None => SourceLine::None,
            }
        };
        let extra = match m.remove("extra") {
            // The members as written: their text, where it is serde_json's own.
            Some(Member::Raw(r, _)) if r.starts_with('{') && crate::json::scan::compact_json(r) && r != "{}" => {
                Extra::from_json(r)
            }
            Some(x) => match x.into_value() {
                Value::Object(x) => Extra::from(x),
                _ => Extra::new(),
            },
            None => Extra::new(),
        };
        let kind = take_type(&mut m)?;
        // A kind this version does not know, or an `extension` that names no dialect (a line of
        // no dialect anyone can tell): the canonical line itself is what the record keeps, and
        // a canonical target writes it back as it came.
        if !known(&kind) || (kind == "extension" && origin == Dialect::Canonical) {
            if !extra.is_empty() {
                m.insert("extra", Value::Object(extra.to_fields().into_iter().collect()));
            }
            let line = crate::dialect::util::whole_line(kind, m);
            out.push(Record::new(Dialect::Canonical, Event::Extension { line }));
            return Ok(());
        }
        if kind == "repeat" {
            let mut rec = Record::with_extra(origin, Event::Repeat, extra);
            rec.line = line;
            out.push(rec);
            return Ok(());
        }
        // Our own format, held to its contract: a required field missing or of the wrong type
        // is a bad line (a count written as a string of digits is still that count, and an
        // optional field of the wrong type is left out).
        check_record(Dialect::Canonical.contract(), &kind, &mut m, out)?;
        // A tool's output, most of the bytes, is kept as read (the contract has checked it is
        // a string); the rest goes straight from the members' text into the event.
        let mut kept = match kind.as_ref() {
            "tool_output" => m.take_kept("text"),
            "tool_result" => m.take_kept("output"),
            _ => None,
        };
        let event = match fast(&kind, &m, &mut kept) {
            Some(event) => event,
            None => by_derive(&kind, m, kept)?,
        };
        let mut rec = Record::with_extra(origin, event, extra);
        rec.line = line;
        out.push(rec);
        Ok(())
    }
}

/// An event as serde's derive reads it: the members rebuilt as JSON text, with `type`, and the
/// kept text put in afterwards.
fn by_derive(kind: &str, mut m: Object<'_>, kept: Option<Text>) -> Result<Event, LineError> {
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
    Ok(event)
}

/// The events most lines hold, read straight from their members: exactly what [`by_derive`]
/// makes of them (a property test holds the two together), without rebuilding the members as
/// text for the derive, which buffers an internally tagged enum's members once more. `None`
/// leaves the line to the derive: another kind, or a member the derive may refuse or read
/// otherwise (a wrong type, a null where a value must be). Members the event has no field for
/// are ignored, as the derive ignores them. `kept` is taken only when the event is made.
fn fast(kind: &str, m: &Object<'_>, kept: &mut Option<Text>) -> Option<Event> {
    if !m.iter().all(|(_, v)| surely_finite(v)) {
        return None;
    }
    let event = match kind {
        "turn_start" => Event::TurnStart { id: opt_str(m, "id")? },
        "turn_end" => {
            Event::TurnEnd { id: opt_str(m, "id")?, status: opt_str(m, "status")?, reason: opt_str(m, "reason")? }
        }
        "text_start" => Event::TextStart,
        "text_delta" => Event::TextDelta { text: req_str(m, "text")?, chars: opt_u64(m, "chars")? },
        "final_answer" => Event::FinalAnswer { text: req_str(m, "text")? },
        "tool_output" => {
            let id = opt_str(m, "id")?;
            let accumulated = opt_bool(m, "accumulated")?.unwrap_or(false);
            Event::ToolOutput { id, text: kept.take()?, accumulated }
        }
        "usage" => Event::Usage(Usage {
            scope: word(m, "scope")?,
            basis: word(m, "basis")?,
            final_: opt_bool(m, "final")?.unwrap_or(true),
            of: opt_str(m, "of")?.map(Name::from),
            model: opt_str(m, "model")?.map(Name::from),
            tokens: Tokens {
                input: opt_u64(m, "input")?,
                output: opt_u64(m, "output")?,
                cache_read: opt_u64(m, "cache_read")?,
                cache_write: opt_u64(m, "cache_write")?,
                reasoning: opt_u64(m, "reasoning")?,
                total: opt_u64(m, "total")?,
            },
        }),
        "tool_call" => Event::ToolCall(ToolCall {
            id: opt_str(m, "id")?.map(Name::from),
            index: opt_u64(m, "index")?,
            name: req_str(m, "name")?.into(),
            arguments: arguments(m)?,
            id_made: opt_bool(m, "id_made")?.unwrap_or(false),
        }),
        "tool_result" => {
            let mut r = ToolResult {
                id: opt_str(m, "id")?.map(Name::from),
                index: opt_u64(m, "index")?,
                name: opt_str(m, "name")?.map(Name::from),
                status: word(m, "status")?,
                output: None,
                error: opt_str(m, "error")?,
                arguments: arguments(m)?,
            };
            // An output that was not kept is null or absent, or of a type the derive refuses.
            if m.get("output").is_some_and(|o| !o.is_null()) && kept.is_none() {
                return None;
            }
            r.output = kept.take();
            Event::ToolResult(r)
        }
        _ => return None,
    };
    Some(event)
}

/// Whether every number in the member is surely within f64's range: the derive reads every
/// member, and refuses a line with a number beyond it (the line scan checks syntax only). A
/// number with an exponent, or with 300 digits or more, is left to the derive to judge (as is
/// any text that looks like one inside a string: rare, and only slower).
fn surely_finite(v: &Member<'_>) -> bool {
    let Member::Raw(r, _) = v else { return true };
    if r.starts_with('"') {
        return true;
    }
    let mut digits = 0;
    for w in r.as_bytes().windows(2) {
        // (In JSON an exponent always follows a digit.)
        if w[0].is_ascii_digit() && (w[1] | 0x20) == b'e' {
            return false;
        }
        digits = if w[0].is_ascii_digit() { digits + 1 } else { 0 };
        if digits >= 299 {
            return false;
        }
    }
    true
}

/// An optional string member: absent or null is `Some(None)`; another type, `None`.
fn opt_str(m: &Object<'_>, key: &str) -> Option<Option<String>> {
    match m.get(key) {
        None => Some(None),
        Some(v) if v.is_null() => Some(None),
        Some(v) => v.as_str().map(|s| Some(s.into_owned())),
    }
}

/// A string member that must be there.
fn req_str(m: &Object<'_>, key: &str) -> Option<String> {
    m.get(key)?.as_str().map(Cow::into_owned)
}

/// An optional count: absent or null is `Some(None)`; anything but an integer from 0 up, `None`.
fn opt_u64(m: &Object<'_>, key: &str) -> Option<Option<u64>> {
    match m.get(key) {
        None => Some(None),
        Some(v) if v.is_null() => Some(None),
        Some(v) => v.as_u64().map(Some),
    }
}

/// An optional boolean: absent is `Some(None)`; null, like any other type, `None` (the derive
/// refuses a null for a field with a default).
fn opt_bool(m: &Object<'_>, key: &str) -> Option<Option<bool>> {
    match m.get(key) {
        None => Some(None),
        Some(Member::Raw("true", _)) => Some(Some(true)),
        Some(Member::Raw("false", _)) => Some(Some(false)),
        Some(Member::Value(v)) if v.is_boolean() => Some(v.as_bool()),
        Some(_) => None,
    }
}

/// A member that must be one of an enum's words.
fn word<T: serde::de::DeserializeOwned>(m: &Object<'_>, key: &str) -> Option<T> {
    let s = m.get(key)?.as_str()?;
    T::deserialize(serde::de::value::StrDeserializer::<serde::de::value::Error>::new(&s)).ok()
}

/// A call's arguments: `arguments` any JSON value but null, `arguments_text` a string.
fn arguments(m: &Object<'_>) -> Option<Arguments> {
    let value = match m.get("arguments") {
        None => None,
        Some(v) if v.is_null() => None,
        Some(Member::Raw(r, _)) => Some(serde_json::from_str::<Value>(r).ok()?),
        Some(Member::Value(v)) => Some((**v).clone()),
    };
    Some(Arguments { value, text: opt_str(m, "arguments_text")?, compact: false, unread: false })
}

#[derive(Default)]
pub struct Encoder {
    /// A line is out: the digest of the input goes on the first.
    wrote: bool,
}

impl Encoder {
    pub fn new() -> Self {
        Encoder { wrote: false }
    }
}

impl Encode for Encoder {
    /// For `whole_input` on the terminal record (a canonical source's is passed on as read).
    fn needs_whole_digest(&self, ctx: &Context) -> bool {
        ctx.source != Some(Dialect::Canonical)
    }

    fn hints(&self) -> crate::codec::Hints {
        crate::codec::Hints {
            carries_summaries: true,
            call_arguments: false,
            call_output: false,
            digest: crate::io::framing::DigestKind::Both,
            source_lines: true,
            ..crate::codec::Hints::default()
        }
    }

    fn encode(&mut self, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        if let (Event::Extension { line: Value::Object(line) }, Dialect::Canonical) = (&rec.event, rec.origin) {
            // A canonical line of a kind this version does not know goes back out as it came.
            let mut m = Map::with_capacity(line.len() + 1);
            m.insert("v".into(), Value::from(VERSION));
            m.extend(line.clone());
            write_line(sink.out, &Value::Object(m), Layout::Compact);
            return Fate::PassedThrough;
        }
        // `{"v":1,` + the event's own members (`type` first) + `dialect` and `extra`: the
        // event is serialized straight into the line, not through a Value tree, its opening
        // brace then made the comma after `v` and its closing one taken off.
        let out = &mut *sink.out;
        let start = out.len();
        // The only version there is; a new one would be written here.
        const _: () = assert!(VERSION == 1);
        out.extend_from_slice(b"{\"v\":1");
        let event_at = out.len();
        let line = match &rec.line {
            SourceLine::Whole { text: Some(text) } => Some(&**text),
            _ => None,
        };
        if let (Event::Extension { .. }, Some(line)) = (&rec.event, line) {
            // A line the model has no event for is its own source line: written as read.
            out.extend_from_slice(b",\"type\":\"extension\",\"line\":");
            out.extend_from_slice(line.as_bytes());
        } else if let Event::Repeat = rec.event {
            out.extend_from_slice(b",\"type\":\"repeat\"");
        } else if write_common(out, &rec.event) {
            out[event_at] = b',';
        } else if write_serialize(&mut *out, &rec.event).is_ok() && out.len() >= event_at + 2 && out[event_at] == b'{' {
            out[event_at] = b',';
            out.pop();
        } else {
            // Every event serializes as an object with string keys; nothing else can happen.
            out.truncate(start);
            return Fate::Dropped;
        }
        if rec.origin != Dialect::Canonical {
            out.extend_from_slice(b",\"dialect\":\"");
            out.extend_from_slice(rec.origin.name().as_bytes());
            out.push(b'"');
        }
        if !rec.extra.is_empty() {
            out.extend_from_slice(b",\"extra\":");
            out.extend_from_slice(rec.extra.json().as_bytes());
        }
        match (&rec.line, line) {
            (_, Some(_)) if matches!(rec.event, Event::Extension { .. }) => {}
            // The line the record was read from, as read, for a step back to its dialect.
            (_, Some(line)) => {
                out.extend_from_slice(b",\"line\":");
                out.extend_from_slice(line.as_bytes());
            }
            (SourceLine::Same, _) if rec.origin != Dialect::Canonical => {
                out.extend_from_slice(b",\"same_line\":true");
            }
            _ => {}
        }
        let carried = ctx.source != Some(Dialect::Canonical) || ctx.input_digest_stated;
        if !std::mem::replace(&mut self.wrote, true) && carried && !ctx.input_digest.is_empty() {
            // What ids derived from the input are made from (mappings/canonical.json); a
            // canonical source passes on the one it states, and states none of its own bytes.
            out.extend_from_slice(b",\"input_digest\":\"");
            out.extend_from_slice(ctx.input_digest.as_bytes());
            out.push(b'"');
        }
        if let (Event::Terminal(_), Some(whole)) = (&rec.event, &ctx.whole_input) {
            // What ids and digests made from the whole input are made from (mappings/canonical.json).
            out.extend_from_slice(b",\"whole_input\":{\"sha256\":\"");
            out.extend_from_slice(whole.sha256.as_bytes());
            out.extend_from_slice(b"\",\"xxh3\":\"");
            out.extend_from_slice(whole.xxh3.as_bytes());
            out.extend_from_slice(b"\"}");
        }
        out.extend_from_slice(b"}\n");
        Fate::Written
    }
}

/// Writes the members of an event of the kinds most lines are (a round's end, a tool call, a
/// usage report) as serde's derive writes them, less the closing brace: `{"type":...`. Their
/// flattened members (the call's arguments, the report's tokens) send serde through a map,
/// entry by entry, which cost more than the rest of the line. `false` for the other kinds,
/// written nothing.
fn write_common(out: &mut Vec<u8>, event: &Event) -> bool {
    /// `,"k":` for a key of this file's own, a plain word: written as it is (inlined, the
    /// copy is of a constant length).
    #[inline(always)]
    fn key(out: &mut Vec<u8>, k: &str) {
        debug_assert!(k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'), "key {k}");
        out.extend_from_slice(b",\"");
        out.extend_from_slice(k.as_bytes());
        out.extend_from_slice(b"\":");
    }
    #[inline(always)]
    fn opt_str<S: std::ops::Deref<Target = str>>(out: &mut Vec<u8>, k: &str, v: &Option<S>) {
        if let Some(v) = v {
            key(out, k);
            write_str(out, v, Layout::Compact);
        }
    }
    #[inline(always)]
    fn opt_u64(out: &mut Vec<u8>, k: &str, v: Option<u64>) {
        if let Some(v) = v {
            key(out, k);
            write_u64(out, v);
        }
    }
    match event {
        Event::RoundEnd { id, stop } => {
            out.extend_from_slice(b"{\"type\":\"round_end\"");
            opt_str(out, "id", id);
            opt_str(out, "stop", stop);
        }
        Event::ToolCall(c) => {
            out.extend_from_slice(b"{\"type\":\"tool_call\"");
            opt_str(out, "id", &c.id);
            opt_u64(out, "index", c.index);
            key(out, "name");
            write_str(out, &c.name, Layout::Compact);
            // The arguments' own members, as their Serialize writes them: a map.
            let at = out.len();
            if write_serialize(&mut *out, &c.arguments).is_err() || out.get(at) != Some(&b'{') {
                out.truncate(at);
                return false;
            }
            if out.len() == at + 2 {
                out.truncate(at);
            } else {
                out[at] = b',';
                out.pop();
            }
            if c.id_made {
                out.extend_from_slice(b",\"id_made\":true");
            }
        }
        Event::Extension { line } => {
            // A line kept whole (a wuu twin, a base-context line carried): written by the JSON
            // layer's writer, serde_json's compact layout, without serde's way through a Value.
            out.extend_from_slice(b"{\"type\":\"extension\",\"line\":");
            crate::json::write_value(out, line, Layout::Compact);
        }
        Event::Usage(u) => {
            out.extend_from_slice(b"{\"type\":\"usage\",\"scope\":");
            out.extend_from_slice(match u.scope {
                Scope::Round => b"\"round\"",
                Scope::Turn => b"\"turn\"",
                Scope::Run => b"\"run\"",
            });
            out.extend_from_slice(match u.basis {
                Basis::Delta => b",\"basis\":\"delta\"",
                Basis::Cumulative => b",\"basis\":\"cumulative\"",
            });
            out.extend_from_slice(if u.final_ { b",\"final\":true" } else { b",\"final\":false" });
            opt_str(out, "of", &u.of);
            opt_str(out, "model", &u.model);
            let t = &u.tokens;
            opt_u64(out, "input", t.input);
            opt_u64(out, "output", t.output);
            opt_u64(out, "cache_read", t.cache_read);
            opt_u64(out, "cache_write", t.cache_write);
            opt_u64(out, "reasoning", t.reasoning);
            opt_u64(out, "total", t.total);
        }
        _ => return false,
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const KINDS: [&str; 9] = [
        "turn_start",
        "turn_end",
        "text_start",
        "text_delta",
        "final_answer",
        "tool_output",
        "usage",
        "tool_call",
        "tool_result",
    ];

    /// The line's members as the decoder has them when it picks a reader: `None` when the
    /// contract refuses them first (neither reader is asked then).
    fn members(line: &str) -> Option<(String, Object<'_>, Option<Text>)> {
        let mut m = Object::parse(line).ok()?.ok()?;
        for key in ["v", "dialect", "extra", "line", "same_line"] {
            m.remove(key);
        }
        let kind = take_type(&mut m).ok()?.into_owned();
        if !Dialect::Canonical.contract().check_fields(&kind, &m).is_empty() {
            return None;
        }
        let kept = match kind.as_str() {
            "tool_output" => m.take_kept("text"),
            "tool_result" => m.take_kept("output"),
            _ => None,
        };
        Some((kind, m, kept))
    }

    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("null".to_string()),
            Just("true".to_string()),
            Just("false".to_string()),
            Just("0".to_string()),
            Just("7".to_string()),
            Just("-3".to_string()),
            Just("1.5".to_string()),
            Just("1e400".to_string()),
            Just("18446744073709551616".to_string()),
            "[a-z]{0,6}".prop_map(|s| format!("\"{s}\"")),
            prop::sample::select(vec![
                "turn",
                "round",
                "run",
                "delta",
                "cumulative",
                "completed",
                "failed",
                "cancelled"
            ])
            .prop_map(|s| format!("\"{s}\"")),
            Just(r#""a\nb\u00e9\"<&>""#.to_string()),
            Just(r#"{"k":[1,2.5,"x"],"j":null}"#.to_string()),
            Just("[]".to_string()),
            Just(format!("1{}", "0".repeat(400))),
            Just(r#"{"k":[1E+400]}"#.to_string()),
            Just(format!(r#"{{"long":"{}","n":[12,3.25]}}"#, "ab ".repeat(150))),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn the_fast_readers_make_what_the_derive_makes(
            kind in prop::sample::select(KINDS.to_vec()),
            fields in prop::collection::vec((prop::sample::select(vec![
                "id", "status", "reason", "text", "chars", "accumulated", "scope", "basis", "final", "of", "model",
                "input", "output", "cache_read", "cache_write", "reasoning", "total", "index", "name", "arguments",
                "arguments_text", "error", "other",
            ]), value()), 0..10),
        ) {
            let mut line = format!("{{\"v\":1,\"type\":\"{kind}\"");
            for (k, v) in &fields {
                line += &format!(",\"{k}\":{v}");
            }
            line.push('}');
            let Some((kind, m, mut kept)) = members(&line) else { return Ok(()) };
            let (_, m2, kept2) = members(&line).unwrap();
            if let Some(fast) = fast(&kind, &m, &mut kept) {
                let derived = by_derive(&kind, m2, kept2);
                prop_assert_eq!(Some(fast), derived.ok(), "{}", line);
            }
        }
    }

    #[test]
    fn the_fast_readers_take_every_line_of_their_kinds_in_the_fixtures() {
        // The canonical fixtures, and every golden canonical output (every dialect's events).
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut paths = Vec::new();
        for dir in std::fs::read_dir(&fixtures).unwrap() {
            let dir = dir.unwrap().path();
            for sub in [dir.clone(), dir.join("expected")] {
                for entry in std::fs::read_dir(sub).into_iter().flatten() {
                    let path = entry.unwrap().path();
                    let name = path.file_name().unwrap().to_string_lossy().into_owned();
                    if (dir.ends_with("canonical")
                        && !path.starts_with(dir.join("expected"))
                        && name.ends_with(".jsonl"))
                        || name.ends_with(".canonical.jsonl")
                    {
                        paths.push(path);
                    }
                }
            }
        }
        let mut read = 0;
        for path in paths {
            for line in std::fs::read_to_string(&path).unwrap().lines() {
                let Some((kind, m, mut kept)) = members(line) else { continue };
                if KINDS.contains(&kind.as_str()) {
                    let (_, m2, kept2) = members(line).unwrap();
                    let fast = fast(&kind, &m, &mut kept);
                    assert!(fast.is_some(), "{}: {line}", path.display());
                    assert_eq!(fast.unwrap(), by_derive(&kind, m2, kept2).unwrap(), "{line}");
                    read += 1;
                }
            }
        }
        assert!(read > 300, "only {read} lines of the fast kinds in the fixtures");
    }

    fn some_text() -> impl Strategy<Value = Option<String>> {
        prop::option::of("[a-z0-9\"\\\n<é\u{1}]{0,20}")
    }

    fn some_count() -> impl Strategy<Value = Option<u64>> {
        prop::option::of(prop_oneof![0u64..1000, any::<u64>()])
    }

    fn any_arguments() -> impl Strategy<Value = Arguments> {
        prop_oneof![
            Just(Arguments::default()),
            Just(Arguments::value(serde_json::json!({"path": "a\"b", "n": [1, 2.5]}))),
            Just(Arguments::value(serde_json::json!("a bare string"))),
            "[a-z{}\":, 0-9.]{0,24}".prop_map(Arguments::json_text),
            "[a-z \"]{0,12}".prop_map(Arguments::text),
        ]
    }

    fn common_event() -> impl Strategy<Value = Event> {
        let scope = prop::sample::select(vec![Scope::Round, Scope::Turn, Scope::Run]);
        let basis = prop::sample::select(vec![Basis::Delta, Basis::Cumulative]);
        let tokens = (some_count(), some_count(), some_count(), some_count(), some_count(), some_count()).prop_map(
            |(input, output, cache_read, cache_write, reasoning, total)| Tokens {
                input,
                output,
                cache_read,
                cache_write,
                reasoning,
                total,
            },
        );
        prop_oneof![
            (some_text(), some_text())
                .prop_map(|(id, stop)| Event::RoundEnd { id: id.map(Name::from), stop: stop.map(Name::from) }),
            (some_text(), some_count(), "[a-z_<\"]{0,10}", any_arguments()).prop_map(|(id, index, name, arguments)| {
                Event::ToolCall(ToolCall {
                    id: id.map(Name::from),
                    index,
                    name: name.into(),
                    arguments,
                    id_made: false,
                })
            }),
            (scope, basis, any::<bool>(), some_text(), some_text(), tokens).prop_map(
                |(scope, basis, final_, of, model, tokens)| Event::Usage(Usage {
                    scope,
                    basis,
                    final_,
                    of: of.map(Name::from),
                    model: model.map(Name::from),
                    tokens
                })
            ),
        ]
    }

    proptest! {
        #[test]
        fn the_common_kinds_are_written_as_serde_writes_them(event in common_event()) {
            let mut fast = Vec::new();
            prop_assert!(write_common(&mut fast, &event));
            fast.push(b'}');
            let mut slow = Vec::new();
            write_serialize(&mut slow, &event).unwrap();
            prop_assert_eq!(String::from_utf8(fast).unwrap(), String::from_utf8(slow).unwrap());
        }
    }
}

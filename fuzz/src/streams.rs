//! The structured target: streams built from the dialects' own contracts (`mappings/`), so that
//! most inputs get past the JSON parser and the kind dispatch into what each decoder does with
//! a kind's fields: records of listed kinds with fitting values and wrong ones, lines cut short,
//! unknown kinds and members, huge numbers, nesting past the parser's limit, blank lines, raw
//! bytes, lines repeated; for acp, the JSON-RPC messages around the updates. Each stream is
//! translated as [`crate::check_translation`] asserts, and validated.

use agentgate::contract::{Contract, Field, FieldType};
use agentgate::Dialect;
use libfuzzer_sys::arbitrary::{self, Arbitrary};

#[derive(Debug, Arbitrary)]
pub struct Stream {
    from: u8,
    /// The target and options, as the first byte of a pipeline target's input ([`crate::options`]).
    options: u8,
    lines: Vec<Line>,
}

#[derive(Debug, Arbitrary)]
enum Line {
    Record(Record),
    /// Cut after this many bytes, anywhere (inside a character too).
    Cut(Record, u16),
    /// A kind no contract lists.
    Unknown(String, Vec<(Name, Val)>),
    /// A member nested this deep (serde_json stops at 128).
    Deep(Record, u8),
    Blank,
    Raw(Vec<u8>),
    /// An earlier line again.
    Again(u8),
    /// For acp, a JSON-RPC message around the updates; for another dialect, its terminal record.
    Rpc(Rpc),
}

#[derive(Debug, Arbitrary)]
struct Record {
    kind: u8,
    /// Which of the kind's fields are written (bit i: the i-th field; required ones whatever
    /// it says unless `spoil`).
    fields: u32,
    values: Vec<Val>,
    extra: Vec<(Name, Val)>,
    /// Leave out required fields, and the fields every line carries.
    spoil: bool,
}

#[derive(Debug, Arbitrary)]
enum Name {
    /// Any member name the contract lists, of any kind.
    Listed(u8),
    Any(String),
}

#[derive(Debug, Arbitrary)]
enum Val {
    /// What the field's contract entry says it holds: a listed value, digits in a string...
    Fitting(u16),
    Str(String),
    Int(i64),
    /// A number of this many digits, negative, with a fraction and an exponent or not.
    Huge(u16, bool, bool),
    Float(f64),
    Bool(bool),
    Null,
    /// Digits in a string.
    Digits(u64),
    List(Vec<Scalar>),
    Map(Vec<(Name, Scalar)>),
}

#[derive(Debug, Arbitrary)]
enum Scalar {
    Fitting(u16),
    Str(String),
    Int(i64),
    Bool(bool),
    Null,
}

#[derive(Debug, Arbitrary)]
enum Rpc {
    Initialize(i8),
    Initialized(i8, u8),
    NewSession(i8, bool),
    SessionCreated(i8, String),
    Prompt(i8, String),
    /// The prompt's answer: a stop reason (by index), and usage.
    Answer(i8, u8, Option<(u32, u32)>),
    Error(i8, i16, String),
    Permission(i8, String, u8),
    Chosen(i8, u8),
    Cancel(Option<String>),
}

/// Builds the stream's bytes and checks them.
pub fn check(stream: Stream) {
    let sources: Vec<Dialect> = Dialect::sources().collect();
    let from = sources[usize::from(stream.from) % sources.len()];
    let c = from.contract();
    let names = names(c);
    let mut lines: Vec<Vec<u8>> = Vec::new();
    for line in &stream.lines {
        let bytes = match line {
            Line::Record(r) => record(from, c, &names, r, 0),
            Line::Cut(r, at) => {
                let mut b = record(from, c, &names, r, 0);
                b.truncate(usize::from(*at) % (b.len() + 1));
                b
            }
            Line::Unknown(kind, members) => {
                let mut s = String::from("{");
                member(&mut s, &c.type_field, &json_str(kind));
                for (n, v) in members {
                    member(&mut s, &name(&names, n), &val(v, None, 0));
                }
                wrap(from, s + "}").into_bytes()
            }
            Line::Deep(r, depth) => record(from, c, &names, r, usize::from(*depth)),
            Line::Blank => b"  ".to_vec(),
            Line::Raw(b) => b.iter().copied().filter(|b| *b != b'\n').collect(),
            Line::Again(i) if !lines.is_empty() => lines[usize::from(*i) % lines.len()].clone(),
            Line::Again(_) => Vec::new(),
            Line::Rpc(rpc) => match from {
                Dialect::Acp => message(rpc).into_bytes(),
                _ => terminal(from, c, &names, rpc),
            },
        };
        lines.push(bytes);
    }
    let mut input = Vec::new();
    for l in &lines {
        input.extend_from_slice(l);
        input.push(b'\n');
    }
    crate::check_translation(&input, &crate::options(from, stream.options));
    let _ = agentgate::validate(&input[..], Some(from), &mut |_| {});
}

/// Every member name the contract lists, of every kind and depth.
fn names(c: &Contract) -> Vec<String> {
    fn walk(fields: &agentgate::contract::Table<Field>, out: &mut Vec<String>) {
        for (n, f) in fields {
            out.push(n.clone());
            if let Some(inner) = &f.fields {
                walk(inner, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(&c.common, &mut out);
    for k in c.kinds.values() {
        walk(&k.fields, &mut out);
    }
    out.sort();
    out.dedup();
    out
}

fn name(names: &[String], n: &Name) -> String {
    match n {
        Name::Listed(i) if !names.is_empty() => names[usize::from(*i) % names.len()].clone(),
        Name::Listed(i) => format!("m{i}"),
        Name::Any(s) => s.clone(),
    }
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).expect("a string is written")
}

fn member(out: &mut String, key: &str, value: &str) {
    if out.len() > 1 {
        out.push(',');
    }
    out.push_str(&json_str(key));
    out.push(':');
    out.push_str(value);
}

/// A record of one of the contract's kinds.
fn record(from: Dialect, c: &Contract, names: &[String], r: &Record, depth: usize) -> Vec<u8> {
    if c.kinds.is_empty() {
        return b"{}".to_vec();
    }
    let (kind, spec) = c.kinds.get_index(usize::from(r.kind) % c.kinds.len()).expect("in range");
    let mut s = String::from("{");
    member(&mut s, &c.type_field, &json_str(kind));
    if !r.spoil {
        for (n, f) in c.common.iter().filter(|(_, f)| f.required) {
            member(&mut s, n, &common_value(f));
        }
    }
    let mut values = r.values.iter();
    for (i, (n, f)) in spec.fields.iter().enumerate() {
        let chosen = r.fields & (1 << (i % 32)) != 0;
        if !(chosen || (f.required && !r.spoil)) {
            continue;
        }
        let v = match values.next() {
            Some(v) => val(v, Some(f), 0),
            None => fitting(f, i as u16, 0),
        };
        member(&mut s, n, &v);
    }
    for (n, v) in &r.extra {
        member(&mut s, &name(names, n), &val(v, None, 0));
    }
    if depth > 0 {
        let key = names.first().map_or("deep", String::as_str);
        let nested = "[".repeat(depth) + "{\"a\":1}" + &"]".repeat(depth);
        member(&mut s, key, &nested);
    }
    wrap(from, s + "}").into_bytes()
}

/// For acp, a record is the update of a `session/update` notification.
fn wrap(from: Dialect, record: String) -> String {
    match from {
        Dialect::Acp => {
            format!("{{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{{\"sessionId\":\"s1\",\"update\":{record}}}}}")
        }
        _ => record,
    }
}

/// What a field every line carries holds where it is right (`v`: 1, `schema_version`: 1).
fn common_value(f: &Field) -> String {
    match (&f.values, f.ty) {
        (Some(v), _) if !v.is_empty() => v[0].to_string(),
        (_, FieldType::Integer) => "1".into(),
        _ => fitting(f, 0, 0),
    }
}

/// A value of the field's type, as its contract entry has it, from `seed`.
fn fitting(f: &Field, seed: u16, depth: usize) -> String {
    if let Some(values) = f.values.as_ref().filter(|v| !v.is_empty()) {
        if seed % 8 != 7 {
            return values[usize::from(seed) % values.len()].to_string();
        }
    }
    let n = u64::from(seed);
    match f.ty {
        FieldType::String | FieldType::Any => match (f.max_chars, seed % 4) {
            // At the limit, and past it, in characters of two bytes.
            (Some(max), 0) => json_str(&"é".repeat(max + usize::from(seed % 3))),
            (_, 1) => json_str(&format!("id-{}", seed % 5)),
            (_, 2) => json_str(["Bash", "Read", "edit", "ls -la", "{\"cmd\":\"ls\"}"][usize::from(seed) % 5]),
            _ => json_str(&format!("text {seed} ✓\n<&>")),
        },
        FieldType::Digits => format!("\"{n}\""),
        FieldType::IntString => format!("\"{}\"", i64::from(seed) - 100),
        FieldType::BoolString => format!("\"{}\"", seed % 2 == 0),
        FieldType::Integer => (n % 300).to_string(),
        FieldType::StringOrInteger if seed % 2 == 0 => n.to_string(),
        FieldType::StringOrInteger => format!("\"{n}\""),
        FieldType::Number => format!("{}.{}", n / 100, n % 100),
        FieldType::Boolean => (seed % 2 == 0).to_string(),
        FieldType::Object => {
            let mut s = String::from("{");
            if let (Some(inner), true) = (&f.fields, depth < 4) {
                for (i, (k, g)) in inner.iter().enumerate() {
                    if g.required || (seed >> (i % 16)) & 1 == 1 {
                        member(&mut s, k, &fitting(g, seed.wrapping_add(i as u16), depth + 1));
                    }
                }
            }
            s + "}"
        }
        FieldType::Array => match seed % 3 {
            0 => "[]".into(),
            1 => format!("[{{\"type\":\"text\",\"text\":\"t{seed}\"}}]"),
            _ => format!("[\"a\",{seed},{{\"id\":\"id-{}\"}}]", seed % 5),
        },
    }
}

fn val(v: &Val, field: Option<&Field>, depth: usize) -> String {
    match v {
        Val::Fitting(seed) => match field {
            Some(f) => fitting(f, *seed, depth),
            None => json_str(&format!("v{seed}")),
        },
        Val::Str(s) => json_str(s),
        Val::Int(i) => i.to_string(),
        Val::Huge(digits, negative, fraction) => {
            let mut s = String::new();
            if *negative {
                s.push('-');
            }
            s.push('9');
            s.push_str(&"8".repeat(usize::from(*digits % 2048)));
            if *fraction {
                s.push_str(".5e");
                s.push_str(&digits.to_string());
            }
            s
        }
        Val::Float(x) if x.is_finite() => format!("{x:?}"),
        Val::Float(_) => "1e999".into(),
        Val::Bool(b) => b.to_string(),
        Val::Null => "null".into(),
        Val::Digits(n) => format!("\"{n}\""),
        Val::List(items) => {
            let items: Vec<String> = items.iter().map(scalar).collect();
            format!("[{}]", items.join(","))
        }
        Val::Map(members) => {
            let mut s = String::from("{");
            for (n, v) in members {
                let key = match n {
                    Name::Listed(i) => format!("k{}", i % 8),
                    Name::Any(s) => s.clone(),
                };
                member(&mut s, &key, &scalar(v));
            }
            s + "}"
        }
    }
}

fn scalar(v: &Scalar) -> String {
    match v {
        Scalar::Fitting(seed) => format!("{{\"type\":\"text\",\"text\":\"s{seed}\"}}"),
        Scalar::Str(s) => json_str(s),
        Scalar::Int(i) => i.to_string(),
        Scalar::Bool(b) => b.to_string(),
        Scalar::Null => "null".into(),
    }
}

/// For a dialect with a terminal record, one of it (with fitting fields); else a record of the
/// first kind.
fn terminal(from: Dialect, c: &Contract, names: &[String], rpc: &Rpc) -> Vec<u8> {
    let seed = match rpc {
        Rpc::Answer(_, stop, _) => *stop,
        Rpc::Chosen(_, n) | Rpc::Permission(_, _, n) | Rpc::Initialized(_, n) => *n,
        _ => 0,
    };
    let kind = c.terminal.as_ref().and_then(|t| c.kinds.get_index_of(&t.kind)).unwrap_or(0);
    let r = Record { kind: kind as u8, fields: u32::from(seed), values: Vec::new(), extra: Vec::new(), spoil: false };
    record(from, c, names, &r, 0)
}

/// One JSON-RPC message of an ACP connection, either side's.
fn message(rpc: &Rpc) -> String {
    let p = agentgate::dialect::acp::protocol();
    let head = |id: &i8| format!("{{\"jsonrpc\":\"2.0\",\"id\":{id}");
    match rpc {
        Rpc::Initialize(id) => format!("{},\"method\":\"initialize\",\"params\":{{\"protocolVersion\":1}}}}", head(id)),
        Rpc::Initialized(id, v) => format!(
            "{},\"result\":{{\"protocolVersion\":{},\"agentInfo\":{{\"name\":\"fake\",\"version\":\"1\"}}}}}}",
            head(id),
            v % 3
        ),
        Rpc::NewSession(id, absolute) => format!(
            "{},\"method\":\"session/new\",\"params\":{{\"cwd\":\"{}\",\"mcpServers\":[]}}}}",
            head(id),
            if *absolute { "/tmp" } else { "tmp" }
        ),
        Rpc::SessionCreated(id, sid) => format!("{},\"result\":{{\"sessionId\":{}}}}}", head(id), json_str(sid)),
        Rpc::Prompt(id, text) => format!(
            "{},\"method\":\"session/prompt\",\"params\":{{\"sessionId\":\"s1\",\"prompt\":[{{\"type\":\"text\",\"text\":{}}}]}}}}",
            head(id),
            json_str(text)
        ),
        Rpc::Answer(id, stop, usage) => {
            let stop = &p.stop_reasons[usize::from(*stop) % p.stop_reasons.len()];
            let usage = usage.map_or(String::new(), |(i, o)| {
                format!(",\"usage\":{{\"inputTokens\":{i},\"outputTokens\":{o},\"totalTokens\":{}}}", u64::from(i) + u64::from(o))
            });
            format!("{},\"result\":{{\"stopReason\":\"{stop}\"{usage}}}}}", head(id))
        }
        Rpc::Error(id, code, text) => {
            format!("{},\"error\":{{\"code\":{code},\"message\":{}}}}}", head(id), json_str(text))
        }
        Rpc::Permission(id, call, options) => {
            let kinds = ["allow_once", "allow_always", "reject_once", "reject_always"];
            let list: Vec<String> = (0..options % 5)
                .map(|i| format!("{{\"optionId\":\"o{i}\",\"name\":\"O\",\"kind\":\"{}\"}}", kinds[usize::from(i) % 4]))
                .collect();
            format!(
                "{},\"method\":\"session/request_permission\",\"params\":{{\"sessionId\":\"s1\",\"toolCall\":{{\"toolCallId\":{},\"title\":\"t\"}},\"options\":[{}]}}}}",
                head(id),
                json_str(call),
                list.join(",")
            )
        }
        Rpc::Chosen(id, option) => match option % 3 {
            0 => format!("{},\"result\":{{\"outcome\":{{\"outcome\":\"cancelled\"}}}}}}", head(id)),
            n => format!("{},\"result\":{{\"outcome\":{{\"outcome\":\"selected\",\"optionId\":\"o{n}\"}}}}}}", head(id)),
        },
        Rpc::Cancel(why) => {
            let meta = why.as_ref().map_or(String::new(), |w| format!(",\"_meta\":{{\"agentgate\":{{\"reason\":{}}}}}", json_str(w)));
            format!("{{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{{\"sessionId\":\"s1\"{meta}}}}}")
        }
    }
}

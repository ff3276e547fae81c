//! Dialect contracts: the data in `mappings/<dialect>.json`, embedded in the binary.
//!
//! A contract lists a dialect's record kinds with their fields (JSON type, required or not,
//! strings that must hold digits, length limits), how its lines are laid out, its terminal
//! record, the ordering rules its spec states, and its outcome table. Encoders read their limits
//! and outcome words from here; [`Contract::check_line`] and [`StreamCheck`] hold a stream to
//! the same data, so code, docs and tests cannot drift apart.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

use indexmap::IndexMap;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::event::Outcome;
use crate::object::{Member, Object};

/// The JSON type a field must have on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldType {
    String,
    /// A string of decimal digits (a count written as text).
    Digits,
    /// A string holding a decimal integer, possibly negative.
    IntString,
    /// The string `"true"` or `"false"`.
    BoolString,
    Integer,
    Number,
    Boolean,
    Object,
    Array,
    Any,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Field {
    #[serde(rename = "type")]
    pub ty: FieldType,
    #[serde(default)]
    pub required: bool,
    /// Null is allowed as a value.
    #[serde(default)]
    pub nullable: bool,
    /// Longest value, in characters.
    #[serde(default)]
    pub max_chars: Option<usize>,
    /// For objects: their members, checked the same way.
    #[serde(default)]
    pub fields: Option<Table<Field>>,
    #[serde(default)]
    pub doc: Option<String>,
    /// Where among a line's members this field was found last: looked at first next time.
    #[serde(skip)]
    pub seen_at: Seen,
}

/// A position among a line's members, remembered across lines: a dialect writes the members of
/// a kind in one order, so a field is nearly always where it was in the line before. Looking
/// there first makes finding a field one comparison that succeeds, where a search through the
/// members compared it with each before it and left the processor guessing where the search
/// stops (the line's order differs from the contract's). Only a hint: any value is safe, and
/// threads checking lines at once may overwrite each other's.
#[derive(Debug, Default)]
pub struct Seen(AtomicU8);

impl Seen {
    pub fn get(&self) -> usize {
        usize::from(self.0.load(Ordering::Relaxed))
    }

    pub fn set(&self, at: usize) {
        if let Ok(at) = u8::try_from(at) {
            self.0.store(at, Ordering::Relaxed);
        }
    }
}

impl Clone for Seen {
    fn clone(&self) -> Self {
        Seen(AtomicU8::new(self.0.load(Ordering::Relaxed)))
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct Kind {
    #[serde(default)]
    pub fields: Table<Field>,
    #[serde(default)]
    pub doc: Option<String>,
}

/// How a dialect orders the members of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyOrder {
    /// The type member first, then the fields in the order the contract lists them.
    Listed,
    /// Members sorted at every depth.
    Alphabetical,
    Any,
}

#[derive(Debug, Clone, Deserialize)]
pub struct TerminalSpec {
    pub kind: String,
    /// The field holding the exit code, if any.
    #[serde(default)]
    pub exit_code_field: Option<String>,
}

/// An ordering rule from the spec, checked over a whole stream.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum Rule {
    /// Every `kind` line's `field` names an `earlier_field` of an earlier `earlier_kind` line.
    IdsSeenEarlier { kind: String, field: String, earlier_kind: String, earlier_field: String },
    /// No line of `kinds` after a line of kind `after`.
    NoneAfter { after: String, kinds: Vec<String> },
    /// After a line of kind `after`, the terminal's `field` equals `value`.
    TerminalAfter { after: String, field: String, value: Value },
    /// When the terminal's `field` equals `value`, some `kind` line came before it.
    TerminalNeeds { field: String, value: Value, kind: String },
    /// The terminal's `field` (a path with dots) equals the sum of `of_field` over `of_kind` lines.
    TerminalSums { field: String, of_kind: String, of_field: String },
    /// The first line is of this kind.
    First { kind: String },
    /// The terminal's `code_field` is one of the codes its `field` allows (`absent`: when the
    /// field is absent).
    TerminalCodes {
        field: String,
        code_field: String,
        codes: IndexMap<String, Vec<i64>>,
        #[serde(default)]
        absent: Vec<i64>,
    },
    /// When the terminal's `field` equals `value`, the line just before it is of `kind`.
    JustBefore { kind: String, field: String, value: Value },
    /// Every `start` line is matched by an `end` line, and no `retry` line follows the last
    /// `end`: otherwise the run never settled and is incomplete.
    Settles { start: String, end: String, retry: String },
}

#[derive(Debug, Clone, Deserialize)]
pub struct Contract {
    pub dialect: String,
    pub description: String,
    #[serde(default)]
    pub produced_by: Option<String>,
    #[serde(default = "type_field")]
    pub type_field: String,
    pub key_order: KeyOrder,
    /// Fields every line carries, whatever its kind.
    #[serde(default)]
    pub common: Table<Field>,
    /// Whether lines of unknown kinds are tolerated by the dialect's readers.
    #[serde(default)]
    pub unknown_kinds_tolerated: bool,
    #[serde(default)]
    pub terminal: Option<TerminalSpec>,
    pub kinds: Table<Kind>,
    #[serde(default)]
    pub rules: Vec<Rule>,
    /// How each canonical outcome is written.
    #[serde(default)]
    pub outcomes: IndexMap<String, Map<String, Value>>,
    /// Tables a decoder reads outcomes with.
    #[serde(default)]
    pub decode: Map<String, Value>,
}

/// A contract's tables of kinds and fields, looked up for every line: keyed by short names
/// fixed in the binary, so hashed with FNV-1a rather than the default SipHash, whose
/// resistance to chosen keys these tables do not need and whose cost they do not want.
pub type Table<V> = IndexMap<String, V, FnvBuild>;

/// Builds [`Fnv`] hashers, for a map of short keys that cannot grow without bound.
pub type FnvBuild = BuildHasherDefault<Fnv>;

/// FNV-1a, 64-bit.
pub struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

fn type_field() -> String {
    "type".into()
}

macro_rules! contracts {
    ($($name:literal),*) => {
        /// The embedded contract files, by dialect name.
        pub const FILES: &[(&str, &str)] = &[
            $(($name, include_str!(concat!("../mappings/", $name, ".json")))),*
        ];
    };
}
contracts!("localcode", "adal", "wuu", "loom", "base-context", "canonical");

/// The contract of a dialect by name. Panics only if an embedded file is broken, which the
/// test suite rules out.
pub fn contract(name: &str) -> &'static Contract {
    // Each parsed when first asked for (a run needs two of the six); found by comparing the
    // six names, which costs less than hashing one, since it happens for nearly every line.
    static ALL: [OnceLock<Contract>; FILES.len()] = [const { OnceLock::new() }; FILES.len()];
    let i = FILES.iter().position(|(n, _)| *n == name).unwrap_or_else(|| panic!("no contract for {name}"));
    ALL[i].get_or_init(|| {
        let (n, text) = FILES[i];
        serde_json::from_str(text).unwrap_or_else(|e| panic!("mappings/{n}.json: {e}"))
    })
}

impl Contract {
    /// The spec of records of `kind`. Asked for every line (by the field check, and again by
    /// an encoder placing a record's extra members): a contract has a dozen kinds or so, and
    /// comparing lengths first finds one in fewer steps than hashing its name.
    pub fn kind(&self, kind: &str) -> Option<&Kind> {
        let at = self.kinds.keys().position(|k| crate::object::same_key(k.as_bytes(), kind.as_bytes()))?;
        self.kinds.get_index(at).map(|(_, spec)| spec)
    }

    /// The length limit of `field` in records of `kind`, in characters.
    pub fn limit(&self, kind: &str, field: &str) -> Option<usize> {
        self.kind(kind)?.fields.get(field)?.max_chars
    }

    /// The outcome table's entry `key` for `outcome` (e.g. `status`, `exit_code`).
    pub fn outcome_value(&self, outcome: Outcome, key: &str) -> Option<&Value> {
        self.outcomes.get(outcome.name())?.get(key)
    }

    pub fn outcome_str(&self, outcome: Outcome, key: &str) -> Option<&str> {
        self.outcome_value(outcome, key)?.as_str()
    }

    pub fn outcome_code(&self, outcome: Outcome, key: &str) -> Option<i64> {
        self.outcome_value(outcome, key)?.as_i64()
    }

    /// Looks `key` up in the decode table `table`, giving a canonical outcome.
    pub fn decode_outcome(&self, table: &str, key: &str) -> Option<Outcome> {
        self.decode.get(table)?.get(key)?.as_str()?.parse().ok()
    }

    /// Problems with the fields of a record of `kind` (presence, JSON types, limits), leaving
    /// key order and the kind itself aside: what a reader needs to take the record at all.
    pub fn check_fields(&self, kind: &str, obj: &Object<'_>) -> Vec<String> {
        let mut problems = Vec::new();
        let Some(spec) = self.kind(kind) else { return problems };
        for (name, field) in &spec.fields {
            match obj.get_field_seen(name, &field.seen_at) {
                None if field.required => problems.push(format!("{kind}: missing required field \"{name}\"")),
                None => {}
                Some(m) => member_problems(kind, name, field, m, &mut problems),
            }
        }
        problems
    }

    /// The optional fields of a `kind` record whose values the contract refuses (a wrong type,
    /// a null where the dialect writes none), taken out: a field the record may lack is read as
    /// absent rather than the record lost with it. A note for each.
    pub fn leave_out_refused_optional(&self, kind: &str, obj: &mut Object<'_>) -> Vec<String> {
        let Some(spec) = self.kind(kind) else { return Vec::new() };
        let mut notes = Vec::new();
        for (name, field) in spec.fields.iter().filter(|(_, f)| !f.required) {
            let mut problems = Vec::new();
            if let Some(m) = obj.get(name) {
                member_problems(kind, name, field, m, &mut problems);
            }
            if let Some(first) = problems.first() {
                notes.push(format!("{first}; the field is left out"));
                obj.remove(name);
            }
        }
        notes
    }

    /// The integer and boolean fields of a `kind` record that are written as a string holding
    /// one (`"120"`, `"true"`), read as that value in place: a decoder accepts a count written
    /// either way (DESIGN.md: numbers are numbers), and a flag as localcode writes its flags. A
    /// note for each field read so.
    pub fn read_scalar_strings(&self, kind: &str, obj: &mut Object<'_>) -> Vec<String> {
        let Some(spec) = self.kind(kind) else { return Vec::new() };
        let mut notes = Vec::new();
        for (name, field) in &spec.fields {
            let read: fn(&str) -> Option<Value> = match field.ty {
                FieldType::Integer => integer_text,
                FieldType::Boolean => |s| matches!(s, "true" | "false").then(|| Value::Bool(s == "true")),
                _ => continue,
            };
            // Asked only of a line the contract refused: the copy costs nothing that matters.
            let Some(text) = obj.get_str(name).map(|s| s.into_owned()) else { continue };
            let Some(value) = read(&text) else { continue };
            let what = if field.ty == FieldType::Integer { "an integer" } else { "a boolean" };
            notes.push(format!("{kind}.{name} is the string \"{text}\", not {what}; read as {value}"));
            obj.insert(name.as_str(), value);
        }
        notes
    }

    /// The fields a `kind` record may have, for asking whether members may stand in them
    /// ([`FieldsOf::accepts`]), the kind looked up once for all the members of a record.
    pub fn fields_of(&self, kind: &str) -> FieldsOf<'_> {
        FieldsOf { common: &self.common, kind: self.kind(kind).map(|k| &k.fields) }
    }

    /// Problems with one line, each a sentence. Unknown kinds are a problem only where the
    /// dialect's readers do not tolerate them.
    pub fn check_line(&self, line: &Value) -> Vec<String> {
        let mut problems = Vec::new();
        let Some(obj) = line.as_object() else {
            return vec!["not a JSON object".into()];
        };
        let Some(kind) = obj.get(&self.type_field).and_then(Value::as_str) else {
            return vec![format!("no string member \"{}\"", self.type_field)];
        };
        if self.key_order == KeyOrder::Alphabetical {
            check_sorted(line, "", &mut problems);
        }
        let Some(spec) = self.kind(kind) else {
            if !self.unknown_kinds_tolerated {
                problems.push(format!("unknown record kind \"{kind}\""));
            }
            return problems;
        };
        check_fields(&self.common, obj, kind, &mut problems);
        check_fields(&spec.fields, obj, kind, &mut problems);
        if self.key_order == KeyOrder::Listed {
            let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
            if keys.first() != Some(&self.type_field.as_str()) {
                problems.push(format!("{kind}: \"{}\" is not the first member", self.type_field));
            }
            let listed: Vec<&str> = keys.iter().copied().filter(|k| spec.fields.contains_key(*k)).collect();
            let mut expected = listed.clone();
            expected.sort_by_key(|k| spec.fields.get_index_of(*k));
            if listed != expected {
                problems.push(format!("{kind}: members out of order: {listed:?}, expected {expected:?}"));
            }
        }
        problems
    }
}

fn check_fields(fields: &Table<Field>, obj: &Map<String, Value>, kind: &str, problems: &mut Vec<String>) {
    for (name, field) in fields {
        match obj.get(name) {
            None if field.required => problems.push(format!("{kind}: missing required field \"{name}\"")),
            None => {}
            Some(v) => check_field(name, field, v, kind, problems),
        }
    }
}

/// Problems with member `m` of a record as its field `name`. Where the JSON type alone settles
/// it (nearly every member of every line), settled here, inline, with no need to build the value.
#[inline]
fn member_problems(kind: &str, name: &str, field: &Field, m: &Member<'_>, problems: &mut Vec<String>) {
    if !matches!(m, Member::Raw(r, _) if field.fields.is_none() && raw_fits(field, r)) {
        member_problems_closer(kind, name, field, m, problems);
    }
}

/// [`member_problems`] for a member its JSON type does not settle.
#[inline(never)]
fn member_problems_closer(kind: &str, name: &str, field: &Field, m: &Member<'_>, problems: &mut Vec<String>) {
    if !(field.nullable && m.is_null()) {
        check_field(name, field, &m.to_value(), kind, problems);
    }
}

/// Checks one present field's value, and the fields of its object where the contract lists them.
fn check_field(name: &str, field: &Field, v: &Value, kind: &str, problems: &mut Vec<String>) {
    if v.is_null() && field.nullable {
        return;
    }
    if let Err(why) = check_value(field, v) {
        problems.push(format!("{kind}.{name}: {why}"));
    }
    if let (Some(sub), Some(o)) = (&field.fields, v.as_object()) {
        check_fields(sub, o, &format!("{kind}.{name}"), problems);
    }
}

/// The integer a string holds when it is written as JSON writes an integer: an optional minus
/// sign and digits, nothing else (no plus sign, no space, no fraction).
fn integer_text(s: &str) -> Option<Value> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse::<u64>().map(Value::from).or_else(|_| s.parse::<i64>().map(Value::from)).ok()
}

/// The fields a record of one kind may have ([`Contract::fields_of`]): the contract's common
/// fields and the kind's own, the kind looked up once.
pub struct FieldsOf<'c> {
    common: &'c Table<Field>,
    kind: Option<&'c Table<Field>>,
}

impl FieldsOf<'_> {
    /// Whether `value` may stand in field `field`: true for fields the contract does not list.
    /// A record's fields are a handful: a search through them costs less than hashing the name.
    pub fn accepts(&self, field: &str, value: &Member<'_>) -> bool {
        fn find<'t>(t: &'t Table<Field>, field: &str) -> Option<&'t Field> {
            t.iter().find(|(name, _)| *name == field).map(|(_, f)| f)
        }
        match find(self.common, field).or_else(|| self.kind.and_then(|t| find(t, field))) {
            None => true,
            Some(f) if value.is_null() => f.nullable,
            // The JSON type alone settles it: no need to build the value.
            Some(f) if matches!(value, Member::Raw(r, _) if raw_fits(f, r)) => true,
            Some(f) => check_value(f, &value.to_value()).is_ok(),
        }
    }
}

/// Whether a raw JSON value surely fits `field`, from its first bytes: strings only where any
/// string will do, integers short enough to be one. `false` means: look closer.
#[inline]
fn raw_fits(field: &Field, text: &str) -> bool {
    let first = text.as_bytes().first().copied().unwrap_or(b'n');
    match field.ty {
        FieldType::String => first == b'"' && field.max_chars.is_none(),
        FieldType::Integer => {
            text.len() < 19 && text.bytes().enumerate().all(|(i, b)| b.is_ascii_digit() || (i == 0 && b == b'-'))
        }
        FieldType::Number => first == b'-' || first.is_ascii_digit(),
        FieldType::Boolean => text == "true" || text == "false",
        FieldType::Object => first == b'{',
        FieldType::Array => first == b'[',
        FieldType::Any => first != b'n',
        FieldType::Digits | FieldType::IntString | FieldType::BoolString => false,
    }
}

fn check_value(field: &Field, v: &Value) -> Result<(), String> {
    let ok = match field.ty {
        FieldType::String => v.is_string(),
        FieldType::Digits => v.as_str().is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())),
        FieldType::IntString => v.as_str().is_some_and(|s| s.parse::<i64>().is_ok() && !s.starts_with('+')),
        FieldType::BoolString => matches!(v.as_str(), Some("true" | "false")),
        FieldType::Integer => v.is_i64() || v.is_u64(),
        FieldType::Number => v.is_number(),
        FieldType::Boolean => v.is_boolean(),
        FieldType::Object => v.is_object(),
        FieldType::Array => v.is_array(),
        FieldType::Any => !v.is_null(),
    };
    if !ok {
        return Err(if v.is_null() {
            "null where a value is required".into()
        } else {
            format!("expected {:?}, got {v}", field.ty)
        });
    }
    if let (Some(max), Some(s)) = (field.max_chars, v.as_str()) {
        let n = s.chars().count();
        if n > max {
            return Err(format!("{n} characters, more than the limit of {max}"));
        }
    }
    Ok(())
}

fn check_sorted(v: &Value, path: &str, problems: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            let keys: Vec<&String> = m.keys().collect();
            if keys.windows(2).any(|w| w[0] >= w[1]) {
                problems.push(format!(
                    "members of {} not in alphabetical order",
                    if path.is_empty() { "the line" } else { path }
                ));
            }
            for (k, x) in m {
                check_sorted(x, &format!("{path}.{k}"), problems);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| check_sorted(x, path, problems)),
        _ => {}
    }
}

fn path<'v>(v: &'v Value, dotted: &str) -> Option<&'v Value> {
    dotted.split('.').try_fold(v, |v, k| v.get(k))
}

/// Checks a whole stream against its contract: each line, the terminal record exactly once
/// and last, and the ordering rules. Feed it lines, then call [`StreamCheck::finish`].
pub struct StreamCheck<'c> {
    contract: &'c Contract,
    line: u64,
    terminal_line: Option<u64>,
    first_kind: Option<String>,
    seen_ids: HashSet<String>,
    seen_kinds: HashSet<String>,
    sums: Vec<u64>,
    previous_kind: Option<String>,
    starts: u64,
    ends: u64,
    retry_after_end: bool,
    problems: Vec<(u64, String)>,
}

impl<'c> StreamCheck<'c> {
    pub fn new(contract: &'c Contract) -> Self {
        StreamCheck {
            contract,
            line: 0,
            terminal_line: None,
            first_kind: None,
            seen_ids: HashSet::new(),
            seen_kinds: HashSet::new(),
            sums: vec![0; contract.rules.len()],
            previous_kind: None,
            starts: 0,
            ends: 0,
            retry_after_end: false,
            problems: Vec::new(),
        }
    }

    /// Checks the next line (its text, without the newline).
    pub fn line(&mut self, text: &str) {
        self.numbered_line(self.line + 1, text);
    }

    /// Records a problem the framing found with line `n` (not UTF-8, too long).
    pub fn problem(&mut self, n: u64, message: String) {
        self.line = n;
        self.problems.push((n, message));
    }

    /// Checks line number `n` (blank lines skipped by the caller keep their numbers).
    pub fn numbered_line(&mut self, n: u64, text: &str) {
        self.line = n;
        let value: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => return self.problems.push((n, format!("not JSON: {e}"))),
        };
        for p in self.contract.check_line(&value) {
            self.problems.push((n, p));
        }
        let Some(kind) = value.get(&self.contract.type_field).and_then(Value::as_str).map(str::to_string) else {
            return;
        };
        if self.first_kind.is_none() {
            self.first_kind = Some(kind.clone());
        }
        if let Some(t) = self.terminal_line {
            self.problems.push((n, format!("\"{kind}\" after the terminal record (line {t})")));
        }
        let is_terminal = self.contract.terminal.as_ref().is_some_and(|t| t.kind == kind);
        for (i, rule) in self.contract.rules.iter().enumerate() {
            match rule {
                Rule::IdsSeenEarlier { kind: k, field, earlier_kind, earlier_field } => {
                    if *earlier_kind == kind {
                        if let Some(id) = value.get(earlier_field).and_then(Value::as_str) {
                            self.seen_ids.insert(format!("{earlier_kind}\u{0}{id}"));
                        }
                    }
                    if *k == kind {
                        let id = value.get(field).and_then(Value::as_str).unwrap_or("");
                        if !self.seen_ids.contains(&format!("{earlier_kind}\u{0}{id}")) {
                            self.problems.push((n, format!("{kind}.{field} \"{id}\" names no earlier {earlier_kind}")));
                        }
                    }
                }
                Rule::NoneAfter { after, kinds } if self.seen_kinds.contains(after) && kinds.contains(&kind) => {
                    self.problems.push((n, format!("\"{kind}\" after \"{after}\"")));
                }
                Rule::TerminalAfter { after, field, value: want }
                    if is_terminal && self.seen_kinds.contains(after) && value.get(field) != Some(want) =>
                {
                    self.problems.push((n, format!("after \"{after}\" the terminal's {field} must be {want}")));
                }
                Rule::TerminalNeeds { field, value: want, kind: needed }
                    if is_terminal && value.get(field) == Some(want) && !self.seen_kinds.contains(needed) =>
                {
                    self.problems.push((n, format!("a terminal with {field} {want} needs an earlier \"{needed}\"")));
                }
                Rule::TerminalSums { field, of_kind, of_field } => {
                    if *of_kind == kind {
                        if let crate::json::Count::Value(x) =
                            value.get(of_field).map_or(crate::json::Count::Absent, crate::json::count)
                        {
                            self.sums[i] += x;
                        }
                    }
                    if is_terminal {
                        let got = path(&value, field).and_then(Value::as_u64);
                        if got != Some(self.sums[i]) {
                            self.problems.push((
                                n,
                                format!(
                                    "{field} is {got:?}, but the {of_kind}.{of_field} written add up to {}",
                                    self.sums[i]
                                ),
                            ));
                        }
                    }
                }
                Rule::TerminalCodes { field, code_field, codes, absent } if is_terminal => {
                    let code = value.get(code_field).and_then(Value::as_i64);
                    let (allowed, said) = match value.get(field).and_then(Value::as_str) {
                        Some(word) => (codes.get(word), format!("{field} {word}")),
                        None => (Some(absent), format!("no {field}")),
                    };
                    if let (Some(allowed), Some(code)) = (allowed, code) {
                        if !allowed.contains(&code) {
                            self.problems.push((
                                n,
                                format!("{code_field} {code} does not go with {said} (expected one of {allowed:?})"),
                            ));
                        }
                    }
                }
                Rule::JustBefore { kind: before, field, value: want }
                    if is_terminal
                        && value.get(field) == Some(want)
                        && self.previous_kind.as_deref() != Some(before.as_str()) =>
                {
                    self.problems
                        .push((n, format!("a terminal with {field} {want} must come just after an \"{before}\" line")));
                }
                Rule::Settles { start, end, retry } => {
                    if kind == *start {
                        self.starts += 1;
                        self.retry_after_end = false;
                    } else if kind == *end {
                        self.ends += 1;
                        self.retry_after_end = false;
                    } else if kind == *retry {
                        self.retry_after_end = true;
                    }
                }
                _ => {}
            }
        }
        self.previous_kind = Some(kind.clone());
        self.seen_kinds.insert(kind);
        if is_terminal {
            self.terminal_line = Some(n);
        }
    }

    /// The problems found, each with its 1-based line number (0 for the stream as a whole).
    pub fn finish(mut self) -> Vec<(u64, String)> {
        if let Some(t) = &self.contract.terminal {
            if self.terminal_line.is_none() {
                self.problems.push((0, format!("no terminal \"{}\" record", t.kind)));
            }
        }
        for rule in &self.contract.rules {
            match rule {
                Rule::First { kind } if self.first_kind.as_deref().is_some_and(|f| f != kind) => {
                    self.problems.push((1, format!("the first line must be \"{kind}\"")));
                }
                Rule::Settles { start, end, retry }
                    if self.starts > self.ends || self.retry_after_end || self.starts == 0 =>
                {
                    let why = if self.starts == 0 {
                        format!("no \"{start}\"")
                    } else if self.retry_after_end {
                        format!("a \"{retry}\" after the last \"{end}\" that never came")
                    } else {
                        format!("no final \"{end}\"")
                    };
                    self.problems.push((0, format!("the run never settles ({why}): it is incomplete")));
                }
                _ => {}
            }
        }
        self.problems
    }
}

/// Checks a whole stream held in memory; a convenience for tests and small inputs.
pub fn check_stream(contract: &Contract, text: &str) -> Vec<(u64, String)> {
    let mut check = StreamCheck::new(contract);
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        check.numbered_line(i as u64 + 1, line);
    }
    check.finish()
}

fn type_name(t: FieldType) -> &'static str {
    match t {
        FieldType::String => "string",
        FieldType::Digits => "string of digits",
        FieldType::IntString => "string holding an integer",
        FieldType::BoolString => "\"true\" or \"false\"",
        FieldType::Integer => "integer",
        FieldType::Number => "number",
        FieldType::Boolean => "boolean",
        FieldType::Object => "object",
        FieldType::Array => "array",
        FieldType::Any => "any",
    }
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

impl Contract {
    /// The contract as Markdown: its record kinds with their fields, and its outcome table.
    /// `agentgate dialects --markdown` prints it and `mappings/README.md` is made of it.
    pub fn markdown(&self) -> String {
        let mut out = format!("## {}\n\n{}\n\n", self.dialect, cell(&self.description));
        if let Some(p) = &self.produced_by {
            out.push_str(&format!("Produced by `{p}`. "));
        }
        out.push_str(&format!(
            "Kind member `{}`; key order {}; unknown kinds {}; terminal record {}.\n\n",
            self.type_field,
            match self.key_order {
                KeyOrder::Listed => "as listed",
                KeyOrder::Alphabetical => "alphabetical at every depth",
                KeyOrder::Any => "free",
            },
            if self.unknown_kinds_tolerated { "tolerated" } else { "refused" },
            self.terminal.as_ref().map_or("none".to_string(), |t| format!("`{}`", t.kind)),
        ));
        out.push_str("| kind | field | type | required | limit | notes |\n|---|---|---|---|---|---|\n");
        for (name, spec) in self.common.iter() {
            out.push_str(&format!(
                "| (every line) | `{name}` | {} | {} | | {} |\n",
                type_name(spec.ty),
                if spec.required { "yes" } else { "" },
                cell(spec.doc.as_deref().unwrap_or(""))
            ));
        }
        for (kind, spec) in &self.kinds {
            if spec.fields.is_empty() {
                out.push_str(&format!("| `{kind}` | | | | | {} |\n", cell(spec.doc.as_deref().unwrap_or(""))));
            }
            for (i, (name, f)) in spec.fields.iter().enumerate() {
                let doc = if i == 0 { spec.doc.as_deref().unwrap_or("") } else { "" };
                let notes = [doc, f.doc.as_deref().unwrap_or("")]
                    .iter()
                    .filter(|x| !x.is_empty())
                    .copied()
                    .collect::<Vec<_>>()
                    .join("; ");
                out.push_str(&format!(
                    "| `{kind}` | `{name}` | {}{} | {} | {} | {} |\n",
                    type_name(f.ty),
                    if f.nullable { " or null" } else { "" },
                    if f.required { "yes" } else { "" },
                    f.max_chars.map(|m| format!("{m} chars")).unwrap_or_default(),
                    cell(&notes),
                ));
            }
        }
        out.push_str("\n| outcome | written as |\n|---|---|\n");
        for (outcome, how) in &self.outcomes {
            let how: Vec<String> = how.iter().map(|(k, v)| format!("`{k}` {v}")).collect();
            out.push_str(&format!("| {outcome} | {} |\n", cell(&how.join(", "))));
        }
        out.push('\n');
        out
    }
}

/// Every dialect's contract as Markdown, in registry order.
pub fn markdown(names: &[&str]) -> String {
    let mut out = String::from(
        "# Dialect contracts\n\nGenerated from the contract files beside this one by `agentgate dialects --markdown`; \
         `tests/docs.rs` fails when this page and the files disagree. The code reads the same files.\n\n",
    );
    for name in names {
        out.push_str(&contract(name).markdown());
    }
    out
}

//! Dialect contracts: the data in `mappings/<dialect>.json`, embedded in the binary.
//!
//! A contract lists a dialect's record kinds with their fields (JSON type, required or not,
//! strings that must hold digits, length limits), how its lines are laid out, its terminal
//! record, the ordering rules its spec states, and its outcome table. Encoders read their limits
//! and outcome words from here; [`Contract::check_line`] and [`StreamCheck`] hold a stream to
//! the same data, so code, docs and tests cannot drift apart.

use std::collections::HashSet;
use std::sync::OnceLock;

use indexmap::IndexMap;
use serde::Deserialize;
use serde_json::{Map, Value};

pub use crate::json::hash::{Fnv, FnvBuild, Seen};
use crate::json::member::Member;
use crate::json::object::Object;
use crate::model::Outcome;

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
    /// A string or an integer: a member the spec names without a type, written as either by
    /// the agent's own generations (wuu's `protocol_version`).
    StringOrInteger,
    Number,
    Boolean,
    Object,
    Array,
    Any,
}

impl FieldType {
    /// The type in words, as a message says what it expected: "a string of digits".
    pub fn described(self) -> &'static str {
        match self {
            FieldType::String => "a string",
            FieldType::Digits => "a string of digits",
            FieldType::IntString => "a string holding an integer",
            FieldType::BoolString => "the string \"true\" or \"false\"",
            FieldType::Integer => "an integer",
            FieldType::StringOrInteger => "a string or an integer",
            FieldType::Number => "a number",
            FieldType::Boolean => "true or false",
            FieldType::Object => "an object",
            FieldType::Array => "an array",
            FieldType::Any => "a value",
        }
    }

    /// The emptiest value of the type: what a writer puts where a member its contract requires
    /// had a value of another type (and says so).
    pub fn placeholder(self) -> Value {
        match self {
            FieldType::String | FieldType::StringOrInteger => Value::from(""),
            FieldType::Digits | FieldType::IntString => Value::from("0"),
            FieldType::BoolString => Value::from("false"),
            FieldType::Integer | FieldType::Number => Value::from(0),
            FieldType::Boolean => Value::Bool(false),
            FieldType::Object | FieldType::Any => Value::Object(Map::new()),
            FieldType::Array => Value::Array(Vec::new()),
        }
    }
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
    /// The values the spec lists for the field (`validate` only: decoders read any value).
    #[serde(default)]
    pub values: Option<Vec<Value>>,
    /// Values an older generation of the format wrote instead: the stream is that generation
    /// (one problem that names it, [`Contract::older_generation`]).
    #[serde(default)]
    pub older_values: Option<Vec<Value>>,
    /// Where among a line's members this field was found last: looked at first next time.
    #[serde(skip)]
    pub seen_at: Seen,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Kind {
    #[serde(default)]
    pub fields: Table<Field>,
    #[serde(default)]
    pub doc: Option<String>,
    /// A kind of another generation of the format than the spec's: read, never written (a
    /// line of it is not copied to the dialect's own output either, but written anew in the
    /// spec's generation).
    #[serde(default)]
    pub other_generation: bool,
}

/// A form of a dialect's lines that an option asks for (base-context's `--json-deltas`,
/// Claude Code's `--include-partial-messages`): which lines differ between the forms, and what
/// marks a line of the option's form. A stream is in one form throughout: its first line that
/// differs says which.
#[derive(Debug, Clone, Deserialize)]
pub struct FormSpec {
    /// The option's name (`json_deltas`, `include_partial_messages`).
    pub option: String,
    /// The lines that differ between the forms.
    pub lines: Vec<FormLine>,
    /// What marks a line of the option's form: a member at this path...
    #[serde(default)]
    pub marker_path: Option<String>,
    /// ... or a line of this kind.
    #[serde(default)]
    pub marker_kind: Option<String>,
    /// The spec's sentence that decides it.
    pub spec: String,
}

/// A line of a kind (where `where_path` holds `where_value`) that one form writes otherwise
/// than the other.
#[derive(Debug, Clone, Deserialize)]
pub struct FormLine {
    pub kind: String,
    #[serde(default)]
    pub where_path: Option<String>,
    #[serde(default)]
    pub where_value: Option<Value>,
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

/// How the agent takes its prompt on its command line (what `exec` does with the prompt a
/// Claude Agent SDK client sends, when `--from` names the agent's dialect).
#[derive(Debug, Clone, Deserialize)]
pub struct PromptSpec {
    /// `flag` (the prompt after `flag`), `argument` (the prompt as the last argument) or `stdin`.
    pub how: String,
    #[serde(default)]
    pub flag: Option<String>,
    /// The spec's sentence that decides it.
    pub spec: String,
}

/// How the agent goes on with an earlier session (`agentgate acp` carries a session's history
/// with it): the arguments that follow the command's own, `{session_id}` standing for the id the
/// last run stated.
#[derive(Debug, Clone, Deserialize)]
pub struct ResumeSpec {
    pub args: Vec<String>,
    /// What a resumed run's usage covers: `run` (its own), or `session_total` (the session's
    /// running total, earlier runs included: codex's thread total).
    #[serde(default = "run_basis")]
    pub usage: String,
    /// What a resumed run's cost covers: `run`, `session_total`, or `unsettled` (left out).
    #[serde(default = "run_basis")]
    pub cost: String,
    /// The spec's sentence that decides it.
    pub spec: String,
}

fn run_basis() -> String {
    "run".into()
}

/// How the agent is told to run every tool call without asking (`agentgate acp --permission
/// allow`): the arguments added to its command.
#[derive(Debug, Clone, Deserialize)]
pub struct ApprovalSpec {
    pub allow: Vec<String>,
    /// The spec's sentence that decides it.
    pub spec: String,
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
    /// The terminal's `field` (a path with dots) equals the sum of `of_field` over `of_kind` lines;
    /// where that sum is 0 and `when_zero` names fields of the terminal, their sum instead
    /// (localcode's total: "or prompt + completion when that sum is 0").
    TerminalSums {
        field: String,
        of_kind: String,
        of_field: String,
        #[serde(default)]
        when_zero: Vec<String>,
    },
    /// The first line is of this kind. `generation`: what a stream that breaks the rule is
    /// (another generation of the format): one problem for the stream that says so.
    First {
        kind: String,
        #[serde(default)]
        generation: Option<String>,
    },
    /// The terminal's `code_field` is one of the codes its `field` allows (`absent`: when the
    /// field is absent).
    TerminalCodes {
        field: String,
        code_field: String,
        codes: IndexMap<String, Vec<i64>>,
        #[serde(default)]
        absent: Vec<i64>,
    },
    /// When the terminal's `field` equals `value`, the line just before it is of `kind`; and a
    /// line of `kind` comes only there, just before such a terminal.
    JustBefore { kind: String, field: String, value: Value },
    /// Every `start` line is matched by an `end` line, and no `retry` line follows the last
    /// `end`: otherwise the run never settled and is incomplete.
    Settles { start: String, end: String, retry: String },
    /// The run ends: a line of one of `kinds` comes, after the last `after` line where one is
    /// named (codex: a `turn.completed` or `turn.failed` after the last `turn.started`). A
    /// stream without it was cut short, or its agent stopped before it could say how it ended.
    Ends {
        kinds: Vec<String>,
        #[serde(default)]
        after: Option<String>,
    },
    /// A `kind` line has at least one of `fields`.
    OneOf { kind: String, fields: Vec<String> },
    /// A `kind` line to which the rule applies (`when`: that path is present; `unless`: that
    /// path is absent; `where_path`: that path holds `where_value`) has every `present` path
    /// and none of the `absent` ones. Paths are members joined by dots.
    Shape {
        kind: String,
        #[serde(default)]
        when: Option<String>,
        #[serde(default)]
        unless: Option<String>,
        #[serde(default)]
        where_path: Option<String>,
        #[serde(default)]
        where_value: Option<Value>,
        #[serde(default)]
        present: Vec<String>,
        #[serde(default)]
        absent: Vec<String>,
    },
    /// In lines of `kinds` (where `where_path` holds `where_value`), the value at `path`, when
    /// present, is one of `values`.
    Values {
        kinds: Vec<String>,
        path: String,
        values: Vec<Value>,
        #[serde(default)]
        where_path: Option<String>,
        #[serde(default)]
        where_value: Option<Value>,
    },
}

/// A rule of the contract, with the severity of its breaks and the spec sentence it enforces.
#[derive(Debug, Clone, Deserialize)]
pub struct RuleEntry {
    #[serde(flatten)]
    pub rule: Rule,
    /// `warning` where the rule states a habit of the agent's writer that no reader relies on.
    #[serde(default)]
    pub severity: Severity,
    /// The spec's sentence the rule enforces, quoted with its file.
    #[serde(default)]
    pub spec: Option<String>,
}

impl std::ops::Deref for RuleEntry {
    type Target = Rule;
    fn deref(&self) -> &Rule {
        &self.rule
    }
}

/// How much a finding of `validate` matters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// A departure from what the agent itself writes that no reader relies on (member order
    /// where the spec states none, an unknown kind its readers skip).
    Warning,
    /// A break of the spec's contract: something a reader may rely on is not so.
    #[default]
    Problem,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Problem => "problem",
        }
    }
}

/// One thing `validate` found: where (line 0: the stream as a whole), how much it matters,
/// which rule says so, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub line: u64,
    pub severity: Severity,
    pub rule: String,
    pub message: String,
}

impl Finding {
    fn new(line: u64, severity: Severity, rule: &str, message: String) -> Finding {
        Finding { line, severity, rule: rule.to_string(), message }
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct Contract {
    pub dialect: String,
    pub description: String,
    #[serde(default)]
    pub produced_by: Option<String>,
    /// How the agent takes its prompt.
    #[serde(default)]
    pub prompt: Option<PromptSpec>,
    #[serde(default = "type_field")]
    pub type_field: String,
    pub key_order: KeyOrder,
    /// Fields every line carries, whatever its kind.
    #[serde(default)]
    pub common: Table<Field>,
    /// Whether lines of unknown kinds are tolerated by the dialect's readers.
    #[serde(default)]
    pub unknown_kinds_tolerated: bool,
    /// Tolerated, but not what the agent writes: `validate` warns of each.
    #[serde(default)]
    pub unknown_kinds_warned: bool,
    /// The key order is the spec's contract (loom's alphabetical members), not a habit of the
    /// agent's writer: a line out of order is a problem, not a warning.
    #[serde(default)]
    pub key_order_is_contract: bool,
    /// Where the spec states it, why the key order is what it is.
    #[serde(default)]
    pub key_order_spec: Option<String>,
    /// The spec's sentence on unknown record kinds.
    #[serde(default)]
    pub unknown_kinds_spec: Option<String>,
    /// What a stream that uses a field's `older_values` is: the older generation of the
    /// format, named in the one problem `validate` reports for it.
    #[serde(default)]
    pub older_generation: Option<String>,
    #[serde(default)]
    pub terminal: Option<TerminalSpec>,
    pub kinds: Table<Kind>,
    #[serde(default)]
    pub rules: Vec<RuleEntry>,
    /// How each canonical outcome is written.
    #[serde(default)]
    pub outcomes: IndexMap<String, Map<String, Value>>,
    /// The exit status the agent itself gives when a signal ends it before its stream says how
    /// its run ended, by signal name (base-context: 128 + the signal, for the three it handles).
    #[serde(default)]
    pub signal_exit: IndexMap<String, u8>,
    /// An exit code the agent may give for any run that did not complete, whatever code its
    /// stream's terminal record states (adal's older generation exits 0 and 1 only): `exec`
    /// does not call that a disagreement.
    #[serde(default)]
    pub failure_exit: Option<i64>,
    /// Any exit code goes with a run that did not complete (gemini: the HTTP status & 255, 53,
    /// 54, 42, 130, and 0 for its invalid-stream result): `exec` calls none a disagreement.
    #[serde(default)]
    pub failure_exit_any: bool,
    /// What the agent's exit code says of a run whose stream has no terminal record, by code,
    /// where it says other than `exec`'s rule (a signal interrupted, another non-zero failed, 0
    /// incomplete): gemini exits 0 when a signal reached its worker.
    #[serde(default)]
    pub exit_without_terminal: IndexMap<String, Outcome>,
    /// The spec's sentence behind `exit_without_terminal`.
    #[serde(default)]
    pub exit_without_terminal_spec: Option<String>,
    /// Tables a decoder reads outcomes with.
    #[serde(default)]
    pub decode: Map<String, Value>,
    /// The form an option asks for, where the dialect has one.
    #[serde(default)]
    pub form: Option<FormSpec>,
    /// How the agent resumes a session, where its spec says.
    #[serde(default)]
    pub resume: Option<ResumeSpec>,
    /// How the agent is told to approve every call, where its spec says.
    #[serde(default)]
    pub approval: Option<ApprovalSpec>,
    /// The Agent Client Protocol's kind (`read`, `edit`, `execute`...) of the tools its spec
    /// names, by name; `spec` (or `doc`) says where from.
    #[serde(default)]
    pub tool_kinds: Map<String, Value>,
    /// The agent's shell tool, where its spec names one (Claude's `Bash`, codex's
    /// `command_execution`), each taking its command line as `command`: another dialect's shell
    /// call is written under the target's name (issue 54, part 3; `crate::shell`).
    #[serde(default)]
    pub shell_tool: Option<ShellTool>,
}

/// A dialect's shell tool ([`Contract::shell_tool`]).
#[derive(Debug, Clone, Deserialize)]
pub struct ShellTool {
    pub name: String,
    /// The spec's sentence that names it.
    pub spec: String,
}

/// A contract's tables of kinds and fields, looked up for every line: keyed by short names
/// fixed in the binary, so hashed with FNV-1a rather than the default SipHash, whose
/// resistance to chosen keys these tables do not need and whose cost they do not want.
pub type Table<V> = IndexMap<String, V, FnvBuild>;

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
contracts!(
    "localcode",
    "adal",
    "wuu",
    "loom",
    "base-context",
    "claude-code",
    "codex",
    "gemini",
    "canonical",
    "otlp",
    "acp"
);

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

/// What a [`Rule::TerminalSums`] terminal field must be: the lines' `sum`, or where that is 0
/// and `when_zero` names fields, the sum of those fields of the terminal (`at` reads them; an
/// absent one counts as 0).
pub(crate) fn sum_or_else(sum: u64, when_zero: &[String], at: impl Fn(&str) -> Option<u64>) -> u64 {
    if sum != 0 || when_zero.is_empty() {
        return sum;
    }
    when_zero.iter().fold(0u64, |acc, p| acc.saturating_add(at(p).unwrap_or(0)))
}

impl Contract {
    /// The spec of records of `kind`. Asked for every line (by the field check, and again by
    /// an encoder placing a record's extra members): a contract has a dozen kinds or so, and
    /// comparing lengths first finds one in fewer steps than hashing its name.
    pub fn kind(&self, kind: &str) -> Option<&Kind> {
        let at = self.kinds.keys().position(|k| crate::json::object::same_key(k.as_bytes(), kind.as_bytes()))?;
        self.kinds.get_index(at).map(|(_, spec)| spec)
    }

    /// The kind of line `m`, where it has one.
    pub fn kind_of<'m>(&self, m: &'m Object<'_>) -> Option<std::borrow::Cow<'m, str>> {
        m.get_str(&self.type_field)
    }

    /// Whether a line of `kind` stands only with the line after it (a `just_before` rule's
    /// kind: loom's Approval, written only just before an ApprovalRequired terminal).
    pub fn paired_ahead(&self, kind: &str) -> bool {
        self.rules.iter().any(|r| matches!(&r.rule, Rule::JustBefore { kind: k, .. } if k == kind))
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

    /// The protocol kind of a tool by its exact name, where the contract lists it.
    pub fn tool_kind(&self, name: &str) -> Option<&str> {
        if matches!(name, "spec" | "doc") {
            return None;
        }
        self.tool_kinds.get(name)?.as_str()
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

    /// Whether a reader of the contract takes line `m` of `kind` as it stands, as far as the
    /// line alone tells (the rules over a stream aside): a kind of the current generation (or
    /// an unknown one its readers skip), every member with its type, limit and one of the
    /// values the spec lists (an older generation's word is not one), members sorted where
    /// the contract says so. What `validate` would call a problem of the line, as yes or no,
    /// read off the scanner's members.
    pub fn takes_line(&self, kind: &str, m: &Object<'_>) -> bool {
        let Some(spec) = self.kind(kind) else { return self.unknown_kinds_tolerated };
        let listed = |fields: &Table<Field>| {
            fields.iter().all(|(name, field)| match (m.get(name), &field.values) {
                (None, _) => !field.required,
                (Some(v), _) if v.is_null() && field.nullable => true,
                (Some(v), values) => {
                    let mut problems = Vec::new();
                    member_problems(kind, name, field, v, &mut problems);
                    problems.is_empty() && values.as_ref().is_none_or(|values| values.iter().any(|w| same_value(v, w)))
                }
            })
        };
        !spec.other_generation
            && listed(&spec.fields)
            && listed(&self.common)
            && !(self.key_order == KeyOrder::Alphabetical && self.key_order_is_contract && !sorted_members(m))
    }

    /// The members of line `m` that the contract names nowhere (at its top, and inside the
    /// objects it lists the fields of), as dotted paths: what no reader of another dialect can
    /// be given. Empty for a line of a kind the contract does not list (the line is unknown
    /// whole).
    pub fn unnamed_members(&self, m: &Object<'_>) -> Vec<String> {
        let Some(kind) = m.get_str(&self.type_field) else { return Vec::new() };
        let Some(spec) = self.kind(&kind) else { return Vec::new() };
        let mut out = Vec::new();
        unnamed(&[&spec.fields, &self.common], m, &self.type_field, "", &mut out);
        out
    }

    /// [`Contract::unnamed_members`] of line `m`, remembering in `shapes` the shapes of lines
    /// found to have none: a line of a shape seen so needs no walk of the contract's tables.
    pub fn unnamed_members_with(&self, m: &Object<'_>, shapes: &mut NamedShapes) -> Vec<String> {
        let Some(kind) = m.get_str(&self.type_field) else { return Vec::new() };
        if shapes.has(&kind, m) {
            return Vec::new();
        }
        let found = self.unnamed_members(m);
        if found.is_empty() {
            let spec = self.kind(&kind);
            // Only a line without a nested object the contract describes: the members inside
            // such an object differ from line to line, which its top-level names do not show.
            let flat = m.iter().all(|(key, _)| {
                let field = spec.and_then(|s| s.fields.get(key)).or_else(|| self.common.get(key));
                field.is_none_or(|f| f.fields.is_none())
            });
            if flat {
                shapes.add(&kind, m);
            }
        }
        found
    }

    /// The optional fields of a `kind` record whose values the contract refuses (a wrong type,
    /// a null where the dialect writes none), taken out: a field the record may lack is read as
    /// absent rather than the record lost with it. Each field's name, with a note.
    pub fn leave_out_refused_optional(&self, kind: &str, obj: &mut Object<'_>) -> Vec<(String, String)> {
        let Some(spec) = self.kind(kind) else { return Vec::new() };
        let mut left_out = Vec::new();
        for (name, field) in spec.fields.iter().filter(|(_, f)| !f.required) {
            let mut problems = Vec::new();
            if let Some(m) = obj.get(name) {
                member_problems(kind, name, field, m, &mut problems);
            }
            if let Some(first) = problems.first() {
                left_out.push((name.to_string(), format!("{first}; the field is left out")));
                obj.remove(name);
            }
        }
        left_out
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

    /// Whether `word` may stand at `path` of a `kind` line, as far as the spec lists values
    /// there: it is among every list that names the place (a field's `values`, a `values` rule
    /// whether or not it holds for every line of the kind); true where none does. What a
    /// decoder asks of a word it would keep for its own writer to give back.
    pub fn allows(&self, kind: &str, path: &str, word: &str) -> bool {
        let listed = |values: &[Value]| values.iter().any(|v| v.as_str() == Some(word));
        let field = self.kind(kind).and_then(|k| k.fields.get(path)).or_else(|| self.common.get(path));
        field.and_then(|f| f.values.as_deref()).is_none_or(listed)
            && self.rules.iter().all(|r| match &r.rule {
                Rule::Values { kinds, path: p, values, .. } if p == path && kinds.iter().any(|k| k == kind) => {
                    listed(values)
                }
                _ => true,
            })
    }

    /// The values the spec lists for `path` of `kind` lines (a field's `values`, or a `values`
    /// rule that holds for every line of the kind), where it lists them.
    pub fn listed_values(&self, kind: &str, path: &str) -> Option<&[Value]> {
        let field = self.kind(kind).and_then(|k| k.fields.get(path)).or_else(|| self.common.get(path));
        if let Some(values) = field.and_then(|f| f.values.as_deref()) {
            return Some(values);
        }
        self.rules.iter().find_map(|r| match &r.rule {
            Rule::Values { kinds, path: p, values, where_path: None, .. }
                if p == path && kinds.iter().any(|k| k == kind) =>
            {
                Some(values.as_slice())
            }
            _ => None,
        })
    }

    /// Whether one line, alone, is one a reader of this contract takes: no problem of its own
    /// (kind, members, JSON types, listed values, the shape and value rules, member order where
    /// the spec states it), the rules over a stream left aside. An older generation's line
    /// (adal's `success` status without `id`) fits: it is read. What detection asks of every
    /// line it looks at, for each dialect that could be named.
    pub fn fits_line(&self, line: &Value) -> bool {
        let mut check = StreamCheck::new(self);
        check.numbered_line(1, &line.to_string());
        let older = check.findings.iter().any(|f| f.rule == "generation");
        let line_level = |rule: &str| {
            matches!(
                rule,
                "object" | "kind" | "json" | "type" | "values" | "order" | "shape" | "one_of" | "terminal_codes"
            ) || (rule == "required" && !older)
        };
        !check.findings.iter().any(|f| f.severity == Severity::Problem && line_level(&f.rule))
    }

    /// Problems with one line, each a sentence (its warnings left out; see
    /// [`Contract::line_findings`]).
    pub fn check_line(&self, line: &Value) -> Vec<String> {
        self.line_findings(line).into_iter().filter(|f| f.0 == Severity::Problem).map(|f| f.2).collect()
    }

    /// What one line breaks, with severity and rule: its kind, required members, JSON types,
    /// listed values, limits and member order. Unknown kinds are a problem only where the
    /// dialect's readers do not tolerate them; member order only where the spec states it.
    pub fn line_findings(&self, line: &Value) -> Vec<(Severity, &'static str, String)> {
        let mut out = Vec::new();
        let Some(obj) = line.as_object() else {
            return vec![(Severity::Problem, "object", "not a JSON object".into())];
        };
        let Some(kind) = obj.get(&self.type_field).and_then(Value::as_str) else {
            return vec![(Severity::Problem, "kind", format!("no string member \"{}\"", self.type_field))];
        };
        let order = if self.key_order_is_contract { Severity::Problem } else { Severity::Warning };
        if self.key_order == KeyOrder::Alphabetical {
            let mut unsorted = Vec::new();
            check_sorted(line, "", &mut unsorted);
            out.extend(unsorted.into_iter().map(|m| (order, "order", m)));
        }
        let Some(spec) = self.kind(kind) else {
            if !self.unknown_kinds_tolerated {
                out.push((Severity::Problem, "kind", format!("unknown record kind \"{kind}\"")));
            } else if self.unknown_kinds_warned {
                out.push((
                    Severity::Warning,
                    "kind",
                    format!("record kind \"{kind}\" is not one the spec lists (its readers skip it)"),
                ));
            }
            return out;
        };
        field_findings(&self.common, obj, kind, &mut out);
        field_findings(&spec.fields, obj, kind, &mut out);
        if self.key_order == KeyOrder::Listed {
            let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
            if keys.first() != Some(&self.type_field.as_str()) {
                out.push((order, "order", format!("{kind}: \"{}\" is not the first member", self.type_field)));
            }
            let listed: Vec<&str> = keys.iter().copied().filter(|k| spec.fields.contains_key(*k)).collect();
            let mut expected = listed.clone();
            expected.sort_by_key(|k| spec.fields.get_index_of(*k));
            if listed != expected {
                let (listed, expected) = (quoted_list(&listed), quoted_list(&expected));
                out.push((
                    order,
                    "order",
                    format!("{kind}: members out of order: {listed}; the spec's order is {expected}"),
                ));
            }
        }
        out
    }
}

/// [`check_fields`] for `validate`: also the values the spec lists, with a severity and rule.
fn field_findings(
    fields: &Table<Field>,
    obj: &Map<String, Value>,
    kind: &str,
    out: &mut Vec<(Severity, &'static str, String)>,
) {
    for (name, field) in fields {
        let Some(v) = obj.get(name) else {
            if field.required {
                out.push((Severity::Problem, "required", format!("{kind}: missing required field \"{name}\"")));
            }
            continue;
        };
        if v.is_null() && field.nullable {
            continue;
        }
        if let Err(why) = check_value(field, v) {
            out.push((Severity::Problem, "type", format!("{kind}.{name}: {why}")));
            continue;
        }
        if let Some(values) = &field.values {
            if !values.contains(v) {
                match &field.older_values {
                    Some(older) if older.contains(v) => out.push((
                        Severity::Problem,
                        "generation",
                        format!("{kind}.{name} {v} is an older generation's word (the spec lists {})", list(values)),
                    )),
                    _ => out.push((
                        Severity::Problem,
                        "values",
                        format!("{kind}.{name} {v} is not one of the values the spec lists ({})", list(values)),
                    )),
                }
            }
        }
        if let (Some(sub), Some(o)) = (&field.fields, v.as_object()) {
            field_findings(sub, o, &format!("{kind}.{name}"), out);
        }
    }
}

/// Member names as a message lists them: `"a", "b"`.
fn quoted_list(names: &[&str]) -> String {
    names.iter().map(|n| crate::error::quoted(n)).collect::<Vec<_>>().join(", ")
}

/// The codes a message allows, in words: `expected 0`, `expected 1 or 2`, `expected one of 1, 2, 3`.
fn one_of(codes: &[i64]) -> String {
    let said: Vec<String> = codes.iter().map(i64::to_string).collect();
    match said.as_slice() {
        [] => "no code is allowed".into(),
        [one] => format!("expected {one}"),
        [a, b] => format!("expected {a} or {b}"),
        many => format!("expected one of {}", many.join(", ")),
    }
}

/// Values as a list for a message: `"a", "b"` or `1, 2`.
fn list(values: &[Value]) -> String {
    values.iter().map(Value::to_string).collect::<Vec<_>>().join(", ")
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

/// [`member_problems`] for a member its JSON type does not settle. An object whose fields the
/// contract lists (Claude's `message`, codex's `item`) is read off its text, its members checked
/// as a line's are, without building its value (which was a fifth of copying such a line);
/// anything else, as a value.
#[inline(never)]
fn member_problems_closer(kind: &str, name: &str, field: &Field, m: &Member<'_>, problems: &mut Vec<String>) {
    if field.nullable && m.is_null() {
        return;
    }
    if let (Some(sub), Member::Raw(r, _), FieldType::Object | FieldType::Any) = (&field.fields, m, field.ty) {
        if let Some(o) = r.starts_with('{').then(|| Object::parse_vouched(r)).flatten() {
            let path = format!("{kind}.{name}");
            for (sub_name, sub_field) in sub {
                match o.get(sub_name) {
                    None if sub_field.required => {
                        problems.push(format!("{path}: missing required field \"{sub_name}\""));
                    }
                    None => {}
                    Some(sm) => member_problems(&path, sub_name, sub_field, sm, problems),
                }
            }
            return;
        }
    }
    check_field(name, field, &m.to_value(), kind, problems);
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

    /// [`FieldsOf::accepts`] for a value already parsed.
    pub fn accepts_value(&self, field: &str, value: &Value) -> bool {
        match self.common.get(field).or_else(|| self.kind.and_then(|t| t.get(field))) {
            None => true,
            Some(f) if value.is_null() => f.nullable,
            Some(f) => check_value(f, value).is_ok(),
        }
    }
}

/// The members of `m` none of `tables` names, under `prefix`; into the objects they list the
/// fields of.
fn unnamed(tables: &[&Table<Field>], m: &Object<'_>, skip: &str, prefix: &str, out: &mut Vec<String>) {
    for (key, value) in m.iter() {
        if key == skip {
            continue;
        }
        let field = tables.iter().find_map(|t| t.iter().find(|(name, _)| *name == key).map(|(_, f)| f));
        match field {
            None => out.push(format!("{prefix}{key}")),
            Some(f) => {
                if let (Some(sub), Member::Raw(r, _)) = (&f.fields, value) {
                    if let Ok(Ok(inner)) = Object::parse(r) {
                        unnamed(&[sub], &inner, "", &format!("{prefix}{key}."), out);
                    }
                }
            }
        }
    }
}

/// The shapes (a kind, and its members' names in their order) of lines of one stream that carry
/// only members their contract names, with no nested object it describes: the pipeline asks
/// which members of every line no spec names (rule 5 of #53), and most lines of a stream repeat
/// a few shapes. Comparing a line's names with a shape seen costs about a quarter of looking
/// each up in the contract's tables (loom to adal: the question was 10% of the run's
/// instructions, callgrind).
#[derive(Debug, Default)]
pub struct NamedShapes {
    shapes: Vec<(String, Vec<String>)>,
}

impl NamedShapes {
    /// Shapes remembered at most: a stream of ever new shapes walks the tables, as without.
    const MOST: usize = 64;

    fn has(&self, kind: &str, m: &Object<'_>) -> bool {
        self.shapes.iter().any(|(k, names)| {
            k == kind && names.len() == m.len() && m.iter().map(|(key, _)| key).eq(names.iter().map(String::as_str))
        })
    }

    fn add(&mut self, kind: &str, m: &Object<'_>) {
        if self.shapes.len() < Self::MOST {
            self.shapes.push((kind.to_string(), m.iter().map(|(key, _)| key.to_string()).collect()));
        }
    }
}

/// Whether a member holds `want`: a string without escapes, a number or a word compared as
/// written, the rest as values.
pub fn same_value(m: &Member<'_>, want: &Value) -> bool {
    match (m, want) {
        (Member::Raw(r, _), Value::String(w)) if r.len() >= 2 && !r.contains('\\') => {
            r.starts_with('"') && &r[1..r.len() - 1] == w
        }
        (Member::Raw(r, _), Value::Bool(b)) => *r == if *b { "true" } else { "false" },
        (Member::Raw(r, _), Value::Number(n)) if n.is_i64() => r.parse::<i64>().ok() == n.as_i64(),
        (Member::Raw(r, _), Value::Number(n)) if n.is_u64() => r.parse::<u64>().ok() == n.as_u64(),
        _ => m.to_value() == *want,
    }
}

/// Whether a line's members are sorted, at every depth.
fn sorted_members(m: &Object<'_>) -> bool {
    let mut before: Option<&str> = None;
    let in_order = m.iter().all(|(k, _)| before.replace(k).is_none_or(|b| b < k));
    in_order
        && m.iter().all(|(_, v)| match v {
            Member::Raw(r, _) if !(r.starts_with('{') || r.starts_with('[')) => true,
            v => {
                let mut unsorted = Vec::new();
                check_sorted(&v.to_value(), "", &mut unsorted);
                unsorted.is_empty()
            }
        })
}

/// Whether a raw JSON value surely fits `field`, from its first bytes: strings only where any
/// string will do, integers short enough to be one. `false` means: look closer.
#[inline]
fn raw_fits(field: &Field, text: &str) -> bool {
    let first = text.as_bytes().first().copied().unwrap_or(b'n');
    match field.ty {
        // A string's characters are no more than its bytes as written (an escape is longer
        // than the character it stands for): short enough as written, short enough.
        FieldType::String => first == b'"' && field.max_chars.is_none_or(|max| raw_within(text, max)),
        FieldType::Integer => raw_fits_integer(text),
        FieldType::StringOrInteger => {
            first == b'"' && field.max_chars.is_none_or(|max| raw_within(text, max)) || raw_fits_integer(text)
        }
        FieldType::Number => first == b'-' || first.is_ascii_digit(),
        FieldType::Boolean => text == "true" || text == "false",
        FieldType::Object => first == b'{',
        FieldType::Array => first == b'[',
        FieldType::Any => first != b'n',
        // A string of plain digits (an escape would be a look closer).
        FieldType::Digits => {
            text.len() > 2 && text.ends_with('"') && text[1..text.len() - 1].bytes().all(|b| b.is_ascii_digit())
        }
        FieldType::IntString => {
            first == b'"'
                && text.len() > 2
                && text.ends_with('"')
                && text[1..text.len() - 1].parse::<i64>().is_ok()
                && !text[1..].starts_with('+')
        }
        FieldType::BoolString => text == "\"true\"" || text == "\"false\"",
    }
}

/// Whether a string literal as written (`"…"`) holds at most `max` characters, counted in
/// place (an escape is one character), without decoding it.
#[inline]
fn raw_within(text: &str, max: usize) -> bool {
    let inner = &text.as_bytes()[1..text.len().saturating_sub(1).max(1)];
    inner.len() <= max || crate::json::text::char_start(inner, max, true).is_err()
}

/// Whether raw JSON text is surely an integer (short enough for an i64). `-0` is not: serde_json
/// (and so a Rust reader's integer field) reads it as the float -0.0, as [`check_value`] does.
#[inline]
fn raw_fits_integer(text: &str) -> bool {
    text.len() < 19
        && !text.starts_with("-0")
        && text.bytes().enumerate().all(|(i, b)| b.is_ascii_digit() || (i == 0 && b == b'-'))
}

fn check_value(field: &Field, v: &Value) -> Result<(), String> {
    let ok = match field.ty {
        FieldType::String => v.is_string(),
        FieldType::Digits => v.as_str().is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())),
        FieldType::IntString => v.as_str().is_some_and(|s| s.parse::<i64>().is_ok() && !s.starts_with('+')),
        FieldType::BoolString => matches!(v.as_str(), Some("true" | "false")),
        FieldType::Integer => v.is_i64() || v.is_u64(),
        FieldType::StringOrInteger => v.is_string() || v.is_i64() || v.is_u64(),
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
            format!("expected {}, got {v}", field.ty.described())
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
    /// A line a `just_before` rule pairs with the terminal that follows it: the rule, and the
    /// line, until the next line says whether it is that terminal.
    pairing: Option<(usize, u64)>,
    starts: u64,
    ends: u64,
    retry_after_end: bool,
    /// The last line of an [`Rule::Ends`] rule's `kinds`, and of its `after` kind (0: none yet).
    last_ending: u64,
    last_after: u64,
    findings: Vec<Finding>,
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
            pairing: None,
            starts: 0,
            ends: 0,
            retry_after_end: false,
            last_ending: 0,
            last_after: 0,
            findings: Vec::new(),
        }
    }

    /// Checks the next line (its text, without the newline).
    pub fn line(&mut self, text: &str) {
        self.numbered_line(self.line + 1, text);
    }

    /// Records a problem the framing found with line `n` (not UTF-8, too long).
    pub fn problem(&mut self, n: u64, message: String) {
        self.line = n;
        self.findings.push(Finding::new(n, Severity::Problem, "framing", message));
    }

    /// Line `n` is blank: JSON Lines has none (every line is one JSON value).
    pub fn blank(&mut self, n: u64) {
        self.line = n;
        self.findings.push(Finding::new(
            n,
            Severity::Problem,
            "blank",
            "blank line (in JSON Lines every line is one JSON value)".into(),
        ));
    }

    fn push(&mut self, n: u64, entry: &RuleEntry, name: &str, message: String) {
        self.findings.push(Finding::new(n, entry.severity, name, message));
    }

    /// Checks line number `n` (blank lines are given to [`StreamCheck::blank`]).
    pub fn numbered_line(&mut self, n: u64, text: &str) {
        self.line = n;
        let value: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => return self.findings.push(Finding::new(n, Severity::Problem, "json", format!("not JSON: {e}"))),
        };
        for (severity, rule, message) in self.contract.line_findings(&value) {
            self.findings.push(Finding::new(n, severity, rule, message));
        }
        let Some(kind) = value.get(&self.contract.type_field).and_then(Value::as_str).map(str::to_string) else {
            return;
        };
        // The first line of a kind the contract lists: its readers skip the others.
        if self.first_kind.is_none() && self.contract.kind(&kind).is_some() {
            self.first_kind = Some(kind.clone());
        }
        if let Some(t) = self.terminal_line {
            self.findings.push(Finding::new(
                n,
                Severity::Problem,
                "terminal",
                format!("\"{kind}\" after the terminal record (line {t})"),
            ));
        }
        let is_terminal = self.contract.terminal.as_ref().is_some_and(|t| t.kind == kind);
        let contract = self.contract;
        for (i, entry) in contract.rules.iter().enumerate() {
            match &entry.rule {
                Rule::IdsSeenEarlier { kind: k, field, earlier_kind, earlier_field } => {
                    if *earlier_kind == kind {
                        if let Some(id) = value.get(earlier_field).and_then(Value::as_str) {
                            self.seen_ids.insert(format!("{earlier_kind}\u{0}{id}"));
                        }
                    }
                    if *k == kind {
                        let id = value.get(field).and_then(Value::as_str).unwrap_or("");
                        if !self.seen_ids.contains(&format!("{earlier_kind}\u{0}{id}")) {
                            let m = format!("{kind}.{field} \"{id}\" names no earlier {earlier_kind}");
                            self.push(n, entry, "ids_seen_earlier", m);
                        }
                    }
                }
                Rule::NoneAfter { after, kinds } if self.seen_kinds.contains(after) && kinds.contains(&kind) => {
                    self.push(n, entry, "none_after", format!("\"{kind}\" after \"{after}\""));
                }
                Rule::TerminalAfter { after, field, value: want }
                    if is_terminal && self.seen_kinds.contains(after) && value.get(field) != Some(want) =>
                {
                    let m = format!("after \"{after}\" the terminal's {field} must be {want}");
                    self.push(n, entry, "terminal_after", m);
                }
                Rule::TerminalNeeds { field, value: want, kind: needed }
                    if is_terminal && value.get(field) == Some(want) && !self.seen_kinds.contains(needed) =>
                {
                    let m = format!("a terminal with {field} {want} needs an earlier \"{needed}\"");
                    self.push(n, entry, "terminal_needs", m);
                }
                Rule::TerminalSums { field, of_kind, of_field, when_zero } => {
                    if *of_kind == kind {
                        if let crate::json::Count::Value(x) =
                            value.get(of_field).map_or(crate::json::Count::Absent, crate::json::count)
                        {
                            self.sums[i] = self.sums[i].saturating_add(x);
                        }
                    }
                    if is_terminal {
                        let got = path(&value, field).and_then(Value::as_u64);
                        let want = sum_or_else(self.sums[i], when_zero, |p| path(&value, p).and_then(Value::as_u64));
                        if got != Some(want) {
                            let got = got.map_or_else(|| "absent".to_string(), |g| g.to_string());
                            let or = if when_zero.is_empty() || self.sums[i] != 0 {
                                String::new()
                            } else {
                                format!(" (0: then {} is {want})", when_zero.join(" + "))
                            };
                            let m = format!(
                                "{field} is {got}, but the {of_kind}.{of_field} written add up to {}{or}",
                                self.sums[i]
                            );
                            self.push(n, entry, "terminal_sums", m);
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
                            let m = format!("{code_field} {code} does not go with {said} ({})", one_of(allowed));
                            self.push(n, entry, "terminal_codes", m);
                        }
                    }
                }
                Rule::JustBefore { kind: before, field, value: want } => {
                    let pairs = is_terminal && value.get(field) == Some(want);
                    if pairs && self.previous_kind.as_deref() != Some(before.as_str()) {
                        let m = format!("a terminal with {field} {want} must come just after an \"{before}\" line");
                        self.push(n, entry, "just_before", m);
                    }
                    if let Some((_, at)) = self.pairing.take_if(|(rule, _)| *rule == i) {
                        if !pairs {
                            let m = format!("an \"{before}\" line must come just before a terminal with {field} {want}, not before \"{kind}\"");
                            self.push(at, entry, "just_before", m);
                        }
                    }
                    if kind == *before {
                        self.pairing = Some((i, n));
                    }
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
                Rule::Ends { kinds, after } => {
                    if kinds.contains(&kind) {
                        self.last_ending = n;
                    } else if after.as_ref() == Some(&kind) {
                        self.last_after = n;
                    }
                }
                Rule::OneOf { kind: k, fields } if *k == kind && !fields.iter().any(|f| value.get(f).is_some()) => {
                    let names: Vec<String> = fields.iter().map(|f| format!("\"{f}\"")).collect();
                    self.push(n, entry, "one_of", format!("{kind} has none of {}", names.join(", ")));
                }
                Rule::Shape { kind: k, when, unless, where_path, where_value, present, absent } if *k == kind => {
                    let applies = when.as_ref().is_none_or(|w| path(&value, w).is_some())
                        && unless.as_ref().is_none_or(|u| path(&value, u).is_none())
                        && where_path.as_ref().is_none_or(|w| path(&value, w) == where_value.as_ref());
                    if applies {
                        let form = match (when, unless) {
                            (Some(w), _) => format!(" (with {w})"),
                            (None, Some(u)) => format!(" (without {u})"),
                            (None, None) => String::new(),
                        };
                        for p in present.iter().filter(|p| path(&value, p).is_none()) {
                            self.push(n, entry, "shape", format!("{kind}{form} lacks {p}"));
                        }
                        for p in absent.iter().filter(|p| path(&value, p).is_some()) {
                            self.push(n, entry, "shape", format!("{kind}{form} must not have {p}"));
                        }
                    }
                }
                Rule::Values { kinds, path: at, values, where_path, where_value } if kinds.contains(&kind) => {
                    let applies = where_path.as_ref().is_none_or(|w| path(&value, w) == where_value.as_ref());
                    if let Some(v) = path(&value, at).filter(|_| applies) {
                        if !values.contains(v) {
                            let m =
                                format!("{kind}.{at} {v} is not one of the values the spec lists ({})", list(values));
                            self.push(n, entry, "values", m);
                        }
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

    /// What was found, each with its 1-based line number (0 for the stream as a whole), in
    /// the order of the lines.
    pub fn finish(mut self) -> Vec<Finding> {
        if let Some(t) = &self.contract.terminal {
            if self.terminal_line.is_none() {
                let m = format!("no terminal \"{}\" record", t.kind);
                self.findings.push(Finding::new(0, Severity::Problem, "terminal", m));
            }
        }
        let contract = self.contract;
        for (i, entry) in contract.rules.iter().enumerate() {
            match &entry.rule {
                Rule::JustBefore { kind, field, value } if self.pairing.is_some_and(|(rule, _)| rule == i) => {
                    let at = self.pairing.map_or(0, |(_, at)| at);
                    let m = format!("an \"{kind}\" line must come just before a terminal with {field} {value}, and the stream ends after it");
                    self.push(at, entry, "just_before", m);
                }
                Rule::First { kind, generation } if self.first_kind.as_deref().is_some_and(|f| f != kind) => {
                    let (rule, m) = match (generation, entry.severity) {
                        (Some(g), _) => {
                            ("generation", format!("{g}: the first line is not \"{kind}\"; read, but a current reader rejects it"))
                        }
                        (None, Severity::Problem) => ("first", format!("the first line must be \"{kind}\"")),
                        (None, Severity::Warning) => (
                            "first",
                            format!("the first line is not \"{kind}\": another generation of the stream, or a run that failed before it"),
                        ),
                    };
                    self.push(1, entry, rule, m);
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
                    self.push(0, entry, "settles", format!("the run never settles ({why}): it is incomplete"));
                }
                Rule::Ends { kinds, after } if self.last_ending == 0 || self.last_after > self.last_ending => {
                    let names: Vec<String> = kinds.iter().map(|k| format!("\"{k}\"")).collect();
                    let mut why = format!("no {}", names.join(" or "));
                    if let Some(after) = after.as_ref().filter(|_| self.last_ending > 0) {
                        why.push_str(&format!(" after the last \"{after}\""));
                    }
                    let m = format!(
                        "the run has no ending ({why}): it was cut short or its agent stopped, and is incomplete"
                    );
                    self.push(0, entry, "ends", m);
                }
                _ => {}
            }
        }
        self.fold_generations();
        self.findings.sort_by_key(|f| if f.line == 0 { u64::MAX } else { f.line });
        self.findings
    }

    /// A stream that uses an older generation's words (adal's `success`/`error` statuses) is
    /// that generation: read (decoders take it), but not what a reader of the current contract
    /// takes. Its words and the members that generation did not have are one problem that
    /// names the generation, not a problem on every line.
    fn fold_generations(&mut self) {
        let Some(first) = self
            .findings
            .iter()
            .find(|f| f.rule == "generation" && f.message.contains("older generation's word"))
            .map(|f| f.line)
        else {
            return;
        };
        let folded = |f: &Finding| {
            f.rule == "required"
                || f.rule == "ids_seen_earlier"
                || (f.rule == "generation" && f.message.contains("older generation's word"))
        };
        let mut kinds: Vec<String> = self
            .findings
            .iter()
            .filter(|f| folded(f))
            .filter_map(|f| f.message.split([':', '.']).next().map(String::from))
            .collect();
        let n = self.findings.iter().filter(|f| folded(f)).count();
        kinds.sort_unstable();
        kinds.dedup();
        self.findings.retain(|f| !folded(f));
        let name = self
            .contract
            .older_generation
            .clone()
            .unwrap_or_else(|| format!("an older {} stream", self.contract.dialect));
        self.findings.push(Finding::new(
            first,
            Severity::Problem,
            "generation",
            format!(
                "{name}; read, but a current reader rejects it ({n} findings in {}, not reported one by one)",
                kinds.join(", ")
            ),
        ));
    }
}

/// Checks a whole stream held in memory; a convenience for tests and small inputs. Each
/// finding as `(line, message)`, a warning's message starting `warning: `.
pub fn check_stream(contract: &Contract, text: &str) -> Vec<(u64, String)> {
    stream_findings(contract, text)
        .into_iter()
        .map(|f| match f.severity {
            Severity::Problem => (f.line, f.message),
            Severity::Warning => (f.line, format!("warning: {}", f.message)),
        })
        .collect()
}

/// [`check_stream`] with severities and rules.
pub fn stream_findings(contract: &Contract, text: &str) -> Vec<Finding> {
    let mut check = StreamCheck::new(contract);
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            check.blank(i as u64 + 1);
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
        FieldType::StringOrInteger => "string or integer",
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
        if let Some(p) = &self.prompt {
            let how = match (p.how.as_str(), &p.flag) {
                ("flag", Some(f)) => format!("after `{f}`"),
                ("argument", _) => "as its last argument".to_string(),
                _ => "on stdin".to_string(),
            };
            out.push_str(&format!("Takes its prompt {how} ({}). ", cell(&p.spec)));
        }
        if let Some(r) = &self.resume {
            out.push_str(&format!(
                "Resumes a session with `{}` after its command (usage after a resume: {}; cost: {}; {}). ",
                r.args.join(" "),
                r.usage,
                r.cost,
                cell(&r.spec)
            ));
        }
        if let Some(a) = &self.approval {
            out.push_str(&format!("Approves every call with `{}` ({}). ", a.allow.join(" "), cell(&a.spec)));
        }
        let kinds: Vec<String> = self
            .tool_kinds
            .iter()
            .filter(|(k, _)| self.tool_kind(k).is_some())
            .map(|(k, v)| format!("`{k}` {}", v.as_str().unwrap_or("")))
            .collect();
        if !kinds.is_empty() && self.dialect != "acp" {
            let from = self.tool_kinds.get("spec").and_then(Value::as_str).unwrap_or("");
            out.push_str(&format!("ACP tool kinds: {} ({}). ", kinds.join(", "), cell(from)));
        }
        if self.kinds.is_empty() {
            // A format agentgate only writes (otlp): its lines are checked by its own readers'
            // definitions, not by kinds listed here.
            out.push_str("Written, never read: no record kinds to list (docs/otlp.md; `scripts/check-otlp.sh` reads the output with the official protobuf definitions).\n\n");
            out.push_str(&self.outcomes_markdown());
            return out;
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
        out.push_str(&self.rules_markdown());
        out.push('\n');
        out.push_str(&self.outcomes_markdown());
        if !self.exit_without_terminal.is_empty() {
            let codes: Vec<String> =
                self.exit_without_terminal.iter().map(|(code, o)| format!("exit {code}: {}", o.name())).collect();
            out.push_str(&format!(
                "A stream without its terminal record, read by `exec`: {} ({}).\n\n",
                codes.join(", "),
                cell(self.exit_without_terminal_spec.as_deref().unwrap_or(""))
            ));
        }
        out
    }

    /// The outcome table, as [`Contract::markdown`] prints it.
    fn outcomes_markdown(&self) -> String {
        let mut out = String::from("| outcome | written as |\n|---|---|\n");
        for (outcome, how) in &self.outcomes {
            let how: Vec<String> = how.iter().map(|(k, v)| format!("`{k}` {v}")).collect();
            out.push_str(&format!("| {outcome} | {} |\n", cell(&how.join(", "))));
        }
        out.push('\n');
        out
    }
}

impl Contract {
    /// What `validate` checks of this dialect beyond each field, with severities: the table of
    /// [`Contract::markdown`].
    fn rules_markdown(&self) -> String {
        let order = if self.key_order_is_contract { Severity::Problem } else { Severity::Warning };
        let mut rows: Vec<(Severity, String, String)> = vec![
            (
                Severity::Problem,
                "every line is one JSON object with its kind member; no blank lines".into(),
                String::new(),
            ),
            (
                Severity::Problem,
                "every field's required members, JSON types, length limits and listed values".into(),
                String::new(),
            ),
        ];
        if self.key_order != KeyOrder::Any {
            rows.push((order, "member order as above".into(), self.key_order_spec.clone().unwrap_or_default()));
        }
        let unknown = match (self.unknown_kinds_tolerated, self.unknown_kinds_warned) {
            (false, _) => Some(Severity::Problem),
            (true, true) => Some(Severity::Warning),
            (true, false) => None,
        };
        if let Some(sev) = unknown {
            rows.push((
                sev,
                "no record kind the contract does not list".into(),
                self.unknown_kinds_spec.clone().unwrap_or_default(),
            ));
        }
        if let Some(t) = &self.terminal {
            rows.push((
                Severity::Problem,
                format!("the terminal record `{}` exactly once, last", t.kind),
                String::new(),
            ));
        }
        if self.kinds.values().any(|k| k.fields.values().any(|f| f.older_values.is_some())) {
            rows.push((
                Severity::Problem,
                format!(
                    "no older generation's words: a stream with them is {} (read, but one problem for the stream that names the generation; the members that generation lacked are not reported line by line)",
                    self.older_generation.as_deref().unwrap_or("an older generation")
                ),
                String::new(),
            ));
        }
        for r in &self.rules {
            let what = match &r.rule {
                Rule::IdsSeenEarlier { kind, field, earlier_kind, earlier_field } => {
                    format!("every `{kind}.{field}` names an earlier `{earlier_kind}.{earlier_field}`")
                }
                Rule::NoneAfter { after, kinds } => format!("no {} after `{after}`", kinds.join(", ")),
                Rule::TerminalAfter { after, field, value } => {
                    format!("after `{after}`, the terminal's `{field}` is {value}")
                }
                Rule::TerminalNeeds { field, value, kind } => {
                    format!("a terminal with `{field}` {value} comes after a `{kind}`")
                }
                Rule::TerminalSums { field, of_kind, of_field, when_zero } if when_zero.is_empty() => {
                    format!("`{field}` is the sum of `{of_kind}.{of_field}`")
                }
                Rule::TerminalSums { field, of_kind, of_field, when_zero } => {
                    format!(
                        "`{field}` is the sum of `{of_kind}.{of_field}`, or where that is 0 of `{}`",
                        when_zero.join("` + `")
                    )
                }
                Rule::First { kind, generation: None } => format!("the first line is `{kind}`"),
                Rule::First { kind, generation: Some(g) } => {
                    format!("the first line is `{kind}` (else the stream is {g}: one problem that names it)")
                }
                Rule::TerminalCodes { field, code_field, .. } => {
                    format!("the terminal's `{code_field}` goes with its `{field}`")
                }
                Rule::JustBefore { kind, field, value } => {
                    format!("a terminal with `{field}` {value} comes just after `{kind}`, and a `{kind}` only just before such a terminal")
                }
                Rule::Settles { start, end, retry } => {
                    format!("every `{start}` has its `{end}`, and no `{retry}` follows the last: the run settles")
                }
                Rule::Ends { kinds, after } => {
                    let names: Vec<String> = kinds.iter().map(|k| format!("`{k}`")).collect();
                    match after {
                        Some(after) => format!("the run ends: {} after the last `{after}`", names.join(" or ")),
                        None => format!("the run ends: a {} comes", names.join(" or ")),
                    }
                }
                Rule::OneOf { kind, fields } => format!("a `{kind}` has one of {}", fields.join(", ")),
                Rule::Shape { kind, when, unless, where_path, where_value, present, absent } => {
                    let mut w = vec![];
                    if let Some(x) = when {
                        w.push(format!("with `{x}`"));
                    }
                    if let Some(x) = unless {
                        w.push(format!("without `{x}`"));
                    }
                    if let (Some(p), Some(v)) = (where_path, where_value) {
                        w.push(format!("whose `{p}` is {v}"));
                    }
                    let mut h = vec![];
                    if !present.is_empty() {
                        h.push(format!("has {}", present.join(", ")));
                    }
                    if !absent.is_empty() {
                        h.push(format!("lacks {}", absent.join(", ")));
                    }
                    format!("a `{kind}` {} {}", w.join(" "), h.join(" and "))
                }
                Rule::Values { kinds, path, values, where_path, where_value } => {
                    let w = match (where_path, where_value) {
                        (Some(p), Some(v)) => format!(" (where `{p}` is {v})"),
                        _ => String::new(),
                    };
                    format!("`{path}` of {}{w} is one of {}", kinds.join(", "), list(values))
                }
            };
            rows.push((r.severity, what, r.spec.clone().unwrap_or_default()));
        }
        let mut out = String::from("\n| rule | severity | the spec |\n|---|---|---|\n");
        for (sev, what, spec) in rows {
            out.push_str(&format!("| {} | {} | {} |\n", cell(&what), sev.name(), cell(&spec)));
        }
        out
    }
}

/// Every dialect's contract as Markdown, in registry order.
pub fn markdown(names: &[&str]) -> String {
    let mut out = String::from(
        "# Dialect contracts\n\nWhat `agentgate dialects --markdown` prints: each dialect's record kinds and fields, the \
         rules `agentgate validate` checks with the spec sentence behind each, and its outcome table, as agentgate \
         reads them.\n\n",
    );
    for name in names {
        out.push_str(&contract(name).markdown());
    }
    out
}

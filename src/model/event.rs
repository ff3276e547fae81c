//! The canonical event model: the one vocabulary every dialect decodes into and encodes from.
//!
//! It knows no dialect. Levels: a *run* (one agent invocation, ending in exactly one
//! [`Terminal`]) holds *turns* (one user request worked on) which hold *rounds* (one model
//! request and the tool calls it made). Absence is `Option`, never a made-up zero. Numbers are
//! numbers here, whatever a wire format writes them as.
//!
//! The serde derives define agentgate's own `canonical` dialect: each event is one JSON object
//! tagged by `type` (see `mappings/canonical.json`).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use crate::json::text::Text;

/// A JSON object whose members we carry without interpreting them.
pub type Fields = Map<String, Value>;

pub use crate::json::Name;

/// One thing that happened in a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// The agent announced its session: ids, model, working directory.
    Session(Session),
    /// A turn (one user request) began.
    TurnStart {
        /// The turn's id, where the source gives one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
    },
    /// A turn ended. `status` is the turn's own status word where the source has one.
    TurnEnd {
        /// The id of the turn that ended, where the source gives one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The turn's own status word, where the source has one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<String>,
        /// Why the turn ended, in the source's words.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// A round (one model request) began.
    RoundStart {
        /// The round's id, where the source gives one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The round's number, as the source counts rounds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        index: Option<u64>,
    },
    /// A round ended; `stop` is why the model stopped (tool calls, end of turn, length...).
    RoundEnd {
        /// The id of the round that ended, where the source gives one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<Name>,
        /// Why the model stopped, in the source's word (tool calls, end of turn, length...).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stop: Option<Name>,
    },
    /// A user message: the request the agent works on (or a follow-up to it).
    Prompt {
        /// The message as the user wrote it.
        text: String,
    },
    /// The model started reasoning. `reset` says the previous reasoning text is discarded.
    ReasoningStart {
        /// `true`: the reasoning text so far is discarded.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reset: Option<bool>,
    },
    /// A piece of reasoning text, to append.
    ReasoningDelta {
        /// The piece to append.
        text: String,
    },
    /// A short preview of the current reasoning (not to be appended).
    ReasoningPeek {
        /// The preview text.
        text: String,
    },
    /// Reasoning finished; `text` is the whole reasoning when the source states it.
    ReasoningEnd {
        /// The whole reasoning text, when the source states it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
    /// The model started streaming assistant text.
    TextStart,
    /// A piece of assistant text, to append. `chars` is the length the source declared for the
    /// piece before it cut it, when that differs from what it wrote.
    TextDelta {
        /// The piece of assistant text.
        text: String,
        /// The length the source declared for the piece before it cut it, when that differs from `text`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        chars: Option<u64>,
    },
    /// The assistant text so far is replaced by `text`.
    TextReplace {
        /// The whole assistant text from now on.
        text: String,
    },
    /// The assistant message ended; `text` is its whole text when the source states it.
    TextEnd {
        /// The message's whole text, when the source states it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
    /// A tool call being built while its arguments still stream.
    ToolDraft(ToolDraft),
    /// A tool call was issued.
    ToolCall(ToolCall),
    /// Output of a running tool call. `accumulated` means `text` is all output so far, not a
    /// piece to append.
    ToolOutput {
        /// The id of the tool call the output belongs to.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The output: a piece to append, or all output so far when `accumulated`.
        text: Text,
        /// `text` is all output so far, not a piece to append.
        #[serde(default, skip_serializing_if = "is_false")]
        accumulated: bool,
    },
    /// A tool call returned.
    ToolResult(ToolResult),
    /// A tool call was withdrawn before it returned.
    ToolWithdrawn {
        /// The id of the withdrawn tool call.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
    },
    /// A tool call needed approval that nobody could give; it did not run.
    PermissionDenied(Denial),
    /// Token counts, with the scope and basis they were reported in.
    Usage(Usage),
    /// What the source says a request or the run cost, in US dollars (agentgate never prices
    /// tokens itself). `total` is the run's cost so far rather than a part to add (Claude's
    /// `total_cost_usd`, loom's Session `cost_usd`); `parts` are the source's breakdown
    /// (base-context's `input`, `output`, `cacheRead`, `cacheWrite`, `total`).
    Cost {
        /// The cost in US dollars.
        usd: f64,
        /// `usd` is the run's cost so far, not a part to add.
        #[serde(default, skip_serializing_if = "is_false")]
        total: bool,
        /// The source's breakdown of the cost, as it gave it.
        #[serde(default, skip_serializing_if = "Map::is_empty")]
        parts: Fields,
    },
    /// A named work stage.
    Stage {
        /// The stage's name, as the source gives it.
        name: String,
    },
    /// A notice for the user.
    Notice {
        /// What the notice says.
        text: String,
    },
    /// An error. `fatal` errors end the turn or run they happen in.
    Error {
        /// What went wrong.
        message: String,
        /// The error ends the turn or run it happens in.
        #[serde(default, skip_serializing_if = "is_false")]
        fatal: bool,
    },
    /// The run stopped to await approval for these actions, in order.
    Approval {
        /// The actions awaiting approval, as the source names them.
        actions: Vec<String>,
    },
    /// Context compaction started, or ended.
    Compaction {
        /// Whether compaction started or ended.
        phase: Phase,
        /// Why the context was compacted, in the source's words.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// Members of the source's record the model has no field for.
        #[serde(default, skip_serializing_if = "Map::is_empty")]
        data: Fields,
    },
    /// An automatic retry started, or ended.
    Retry {
        /// Whether the retry started or ended.
        phase: Phase,
        /// The number of this attempt.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        attempt: Option<u64>,
        /// The most attempts that will be made.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_attempts: Option<u64>,
        /// The wait before the attempt, in milliseconds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        delay_ms: Option<u64>,
        /// The error that caused the retry.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// Whether the retry succeeded (at its end).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        success: Option<bool>,
    },
    /// A subagent started, changed state or finished.
    Subagent {
        /// Whether the subagent started, changed state or finished.
        phase: Phase,
        /// The subagent's id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The subagent's status word, in the source's words.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<String>,
        /// Members of the source's record the model has no field for.
        #[serde(default, skip_serializing_if = "Map::is_empty")]
        data: Fields,
    },
    /// The agent's task list changed.
    Todo {
        /// The task list's items as the source gives them (a JSON value, not interpreted).
        items: Value,
    },
    /// A tool changed a file.
    FileChange {
        /// The path of the changed file.
        path: String,
        /// What was done to the file, in the source's word.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        action: Option<String>,
        /// The name of the tool that changed the file.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool: Option<String>,
        /// Members of the source's record the model has no field for.
        #[serde(default, skip_serializing_if = "Map::is_empty")]
        data: Fields,
    },
    /// Diagnostic metadata about a request or provider step; not task progress.
    Diagnostics {
        /// What the metadata is about, as a name (for example `route`).
        kind: String,
        /// The metadata, as the source gave it.
        #[serde(default, skip_serializing_if = "Map::is_empty")]
        data: Fields,
    },
    /// A summary of a whole agent session that ran inside this run: its totals and tool
    /// calls in one record, instead of as events.
    SessionSummary(Box<Summary>),
    /// The agent's final answer.
    FinalAnswer {
        /// The answer's text.
        text: String,
    },
    /// The run ended. Exactly once per run, last.
    Terminal(Terminal),
    /// A line of the source dialect that the model has no event for, kept whole.
    Extension {
        /// The line, as a JSON value.
        line: Value,
    },
    /// A line of the source that only repeats what earlier lines said (wuu's `command_*` twin
    /// of a `tool_*` line): no fact of its own. Its line stays with the record
    /// (`crate::codec::SourceLine`) for a writer of its dialect; every other writer skips it.
    Repeat,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Start, update or end of a family that has phases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// It started.
    Start,
    /// It changed state.
    Update,
    /// It ended.
    End,
}

/// What an agent says about its session when it starts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Session {
    /// The session's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The id of this run, where the source names runs apart from sessions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The model the session uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The model's provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The agent's own version, or its stream format's version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// When the session started, as the source wrote the time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

/// A tool call whose arguments are still being written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolDraft {
    /// The tool call's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The tool's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Length of the arguments so far, in characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chars: Option<u64>,
    /// A preview of the arguments so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
    /// A piece of argument text to append.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta: Option<String>,
}

/// Tool-call arguments keep the form the source gave them: a JSON value, or text that a
/// dialect wrote as text (which may or may not hold JSON). Both are set only for JSON text
/// that was not in its compact form: the value, and the text as written. JSON text that is in
/// its compact form is kept as text alone, marked `compact`, and its value built only when an
/// encoder asks for it ([`Arguments::to_value`]): the value would be written back as that same
/// text, and a target that writes arguments as text never needs it.
///
/// Text a dialect gives as JSON text ([`Arguments::json_text`]) is not even looked at until
/// something asks what it holds (marked `unread`): a target that writes the arguments as text
/// (localcode, loom) never does.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Arguments {
    /// The arguments as a JSON value (`arguments`).
    #[serde(default, rename = "arguments")]
    pub value: Option<Value>,
    /// The arguments as text (`arguments_text`): text that is not JSON, or JSON text as written.
    #[serde(default, rename = "arguments_text")]
    pub text: Option<String>,
    /// `text` is JSON in its compact form, and `value` is not set: the value is the text's.
    #[serde(skip)]
    pub compact: bool,
    /// `text` is what a dialect gave as JSON text, not yet looked at, and `value` is not set:
    /// it is read as [`Arguments::json_text`] says when something asks what it holds.
    #[serde(skip)]
    pub unread: bool,
}

/// The member text arguments go in where a target's calls take an object ([`Arguments::to_object`]).
pub const RAW: &str = "raw";

impl Arguments {
    /// Arguments given as a JSON value.
    pub fn value(v: Value) -> Self {
        Arguments { value: Some(v), text: None, compact: false, unread: false }
    }

    /// Arguments given as text.
    pub fn text(t: impl Into<String>) -> Self {
        Arguments { value: None, text: Some(t.into()), compact: false, unread: false }
    }

    /// JSON text that the source wrote as text, kept unread until something asks what it
    /// holds; then it is read: parsed when it is JSON, kept as text otherwise (see `compact`).
    pub fn json_text(t: String) -> Self {
        Arguments { value: None, text: Some(t), compact: false, unread: true }
    }

    /// JSON text that the source wrote as text, read: parsed when it is JSON, kept as text
    /// otherwise. When the text is not the compact form of its value (spaces, key order), the
    /// text is kept beside the value, so that writing it back as text gives the same string.
    /// Text in its compact form is kept as it is, unparsed, where a scan can tell so.
    fn read_json_text(t: String) -> Self {
        if crate::json::scan::compact_json(&t) {
            return Arguments { value: None, text: Some(t), compact: true, unread: false };
        }
        match serde_json::from_str::<Value>(&t) {
            Ok(v) => {
                // (Not `v == t`: that would ask whether the value is the string `t`.)
                let mut compact = Vec::with_capacity(t.len());
                crate::json::write_value(&mut compact, &v, crate::json::Layout::Compact);
                if compact == t.as_bytes() {
                    Arguments::value(v)
                } else {
                    Arguments { value: Some(v), text: Some(t), compact: false, unread: false }
                }
            }
            Err(_) => Arguments::text(t),
        }
    }

    /// The JSON text the arguments are, when they are JSON: the source's text where it was
    /// JSON text already, else the compact form of the value. `None` for text that is not JSON.
    pub fn json(&self) -> Option<Cow<'_, str>> {
        if self.unread {
            // Read, it is the text where it holds JSON (compact or not), else no JSON.
            let t = self.text.as_deref()?;
            return (crate::json::scan::compact_json(t) || serde_json::from_str::<Value>(t).is_ok())
                .then_some(Cow::Borrowed(t));
        }
        match (&self.value, &self.text) {
            (Some(_), Some(t)) => Some(Cow::Borrowed(t)),
            (Some(v), None) => Some(Cow::Owned(crate::json::to_compact(v))),
            (None, Some(t)) if self.compact => Some(Cow::Borrowed(t)),
            _ => None,
        }
    }

    /// The text, where it is JSON in its compact form (known so, or found so now): what
    /// serde_json writes compact for the value, so a compact writer can copy it.
    pub fn compact_text(&self) -> Option<&str> {
        let t = self.text.as_deref()?;
        (self.compact || (self.unread && crate::json::scan::compact_json(t))).then_some(t)
    }

    /// The arguments with unread text read.
    fn read(&self) -> Cow<'_, Arguments> {
        match &self.text {
            Some(t) if self.unread => Cow::Owned(Arguments::read_json_text(t.clone())),
            _ => Cow::Borrowed(self),
        }
    }

    /// What the arguments say, for comparing (read first): the value (built from compact
    /// text), and the text where it is more than the value's compact form.
    fn meaning(&self) -> (Option<Cow<'_, Value>>, Option<&str>) {
        if self.compact {
            (self.to_value().map(Cow::Owned), None)
        } else {
            (self.value.as_ref().map(Cow::Borrowed), self.text.as_deref())
        }
    }

    /// No arguments: neither a value nor text.
    pub fn is_empty(&self) -> bool {
        self.value.is_none() && self.text.is_none()
    }

    /// The arguments as text: source text unchanged, a JSON value as compact JSON.
    pub fn to_text(&self) -> String {
        self.as_text().into_owned()
    }

    /// [`Arguments::to_text`], borrowed where the text is kept.
    pub fn as_text(&self) -> Cow<'_, str> {
        match (&self.value, &self.text) {
            (_, Some(t)) => Cow::Borrowed(t),
            (Some(v), None) => Cow::Owned(crate::json::to_compact(v)),
            (None, None) => Cow::Borrowed(""),
        }
    }

    /// The arguments as a JSON value: the value, or the text parsed when it holds JSON.
    pub fn to_value(&self) -> Option<Value> {
        match (&self.value, &self.text) {
            (Some(v), _) => Some(v.clone()),
            (None, Some(t)) => serde_json::from_str(t).ok(),
            (None, None) => None,
        }
    }

    /// The arguments as a JSON object, for a target whose calls take one (adal's `args`,
    /// base-context's and Claude's `input`, codex's MCP `arguments`): the object the source
    /// gave, `{}` for none, and arguments that are no object as `{"raw": text}`. The one
    /// wrapping agentgate makes; [`Arguments::unwrapped_text`] undoes it.
    pub fn to_object(&self) -> Value {
        match self.to_value() {
            Some(v @ Value::Object(_)) => v,
            _ if self.as_text().is_empty() => Value::Object(Map::new()),
            _ => {
                let mut raw = Map::new();
                raw.insert(RAW.into(), Value::String(self.to_text()));
                Value::Object(raw)
            }
        }
    }

    /// The arguments as text, for a target whose calls take text (localcode's `args`): text
    /// that reached the model wrapped by another dialect's writer, as `{"raw": text}`
    /// ([`Arguments::to_object`]) or as a JSON string (wuu's arguments are JSON text), given
    /// back as the text.
    pub fn unwrapped_text(&self) -> Cow<'_, str> {
        let text = self.as_text();
        let unwrapped = if text.starts_with('"') {
            serde_json::from_str::<String>(&text).ok()
        } else if text.starts_with("{\"raw\"") {
            match serde_json::from_str::<Map<String, Value>>(&text) {
                Ok(m) if m.len() == 1 => m.get(RAW).and_then(Value::as_str).map(str::to_string),
                _ => None,
            }
        } else {
            None
        };
        unwrapped.map_or(text, Cow::Owned)
    }
}

/// Compact text and the value it holds are the same arguments.
impl PartialEq for Arguments {
    fn eq(&self, other: &Self) -> bool {
        self.read().meaning() == other.read().meaning()
    }
}

/// `arguments` (the value; built from compact text) and `arguments_text` (text that is not
/// JSON, or not in its compact form), each when there is one.
impl Serialize for Arguments {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        if let Some(t) = self.compact_text() {
            // The text is its value's compact form: canonical's writer copies it.
            let mut m = s.serialize_map(None)?;
            m.serialize_entry("arguments", &CompactJson(t))?;
            return m.end();
        }
        let read = self.read();
        let (value, text) = read.meaning();
        // Compact text is JSON by its mark; were it not, it stays text rather than be lost.
        let text = if read.compact && value.is_none() { read.text.as_deref() } else { text };
        let mut m = s.serialize_map(None)?;
        if let Some(v) = value {
            m.serialize_entry("arguments", &*v)?;
        }
        if let Some(t) = text {
            m.serialize_entry("arguments_text", t)?;
        }
        m.end()
    }
}

/// JSON text in serde_json's compact form, serialized as the value it holds: copied by our own
/// writer, parsed for another serializer.
struct CompactJson<'a>(&'a str);

impl Serialize for CompactJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match crate::json::serialize::serialize_json(s, self.0) {
            Ok(done) => done,
            Err(s) => serde_json::from_str::<Value>(self.0).map_err(serde::ser::Error::custom)?.serialize(s),
        }
    }
}

/// A tool call the model issued.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call's id, which its result names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Name>,
    /// The call's position among the calls of its round, from 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u64>,
    /// The name of the tool called.
    pub name: Name,
    /// The arguments the call was made with.
    #[serde(flatten)]
    pub arguments: Arguments,
    /// The id was made up by agentgate (`call-N`): the source gave none. Carried so that a
    /// target whose ids have a form of their own (Claude's `toolu_…`) writes the same id
    /// whether it reads the source or its canonical stream.
    #[serde(default, skip_serializing_if = "is_false")]
    pub id_made: bool,
}

/// A whole session in one record: what it ran, what it used, how it ended.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// What the session's record was read as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The agent or adapter that produced the session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter: Option<String>,
    /// The model the session used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Every model, with the figures for it alone, as the source lists them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub models: Option<Value>,
    /// How many turns the session had.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns: Option<u64>,
    /// Where the token figures come from (`session` totals, or `sum-of-requests`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_basis: Option<String>,
    /// The session's token totals.
    #[serde(default, skip_serializing_if = "Tokens::is_empty")]
    pub tokens: Tokens,
    /// What the session cost in US dollars, as the source states it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<serde_json::Number>,
    /// How long the session took, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The session's time in API requests, in milliseconds, as the source states it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_api_ms: Option<u64>,
    /// The time of the session's first record, in milliseconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_timestamp_ms: Option<u64>,
    /// The time of the session's last record, in milliseconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_timestamp_ms: Option<u64>,
    /// Whether the session ended in error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Why the session stopped, in the source's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// The tool calls the session made, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<SummaryCall>>,
    /// How many records of the session were of kinds nobody knew.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unk: Option<u64>,
    /// Lowercase hex SHA-256 of the session's record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript_digest: Option<String>,
    /// Why the session could not be summarized, where it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub projection_error: Option<String>,
}

/// A tool call as a session summary lists it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SummaryCall {
    /// The call's id.
    pub id: String,
    /// The name of the tool called.
    pub name: String,
    /// A result names the call.
    pub answered: bool,
    /// That result's error flag.
    pub error: bool,
    /// Members of the entry the model has no field for (loom's stability rules: a new optional
    /// field of an entry of `tool_calls` is no break, and a reader ignores it), kept for loom.
    #[serde(flatten, default, skip_serializing_if = "Map::is_empty")]
    pub extra: Fields,
}

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::EnumString, strum::IntoStaticStr)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ToolStatus {
    /// The call completed.
    Completed,
    /// The call failed.
    Failed,
    /// The call was cancelled before it finished.
    Cancelled,
}

/// The result of a tool call. `id` names the call it answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The id of the call the result answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Name>,
    /// The call's position among the calls of its round, from 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u64>,
    /// The name of the tool called, where the source repeats it on the result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<Name>,
    /// How the call ended.
    pub status: ToolStatus,
    /// What the tool returned, as text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Text>,
    /// Why the call failed, where the source says so apart from the output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The call's arguments, where the source repeats them on the result.
    #[serde(flatten)]
    pub arguments: Arguments,
}

/// A tool call refused for want of approval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Denial {
    /// The id of the refused call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The name of the tool the call was for.
    pub name: String,
    /// The arguments the call would have run with.
    #[serde(flatten)]
    pub arguments: Arguments,
    /// Why the call was refused, in the source's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What a usage figure covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// One round: one model request.
    Round,
    /// One turn: one user request.
    Turn,
    /// The whole run.
    Run,
}

/// How a usage figure relates to earlier ones in its scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// New tokens since the previous report: add them up.
    Delta,
    /// Everything so far in the scope: the latest one counts, never the sum.
    Cumulative,
}

/// Token counts. `input` includes cache reads and writes (the OpenTelemetry GenAI rule);
/// `cache_read`, `cache_write` and `reasoning` are parts of `input` and `output`, kept apart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    /// Input tokens, cache reads and writes included.
    #[serde(default, deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub input: Option<u64>,
    /// Output tokens, reasoning included.
    #[serde(default, deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub output: Option<u64>,
    /// Input tokens read from the cache.
    #[serde(default, deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<u64>,
    /// Input tokens written to the cache.
    #[serde(default, deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<u64>,
    /// Output tokens spent on reasoning.
    #[serde(default, deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<u64>,
    /// The total the source states.
    #[serde(default, deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
}

/// A count as the canonical reader takes it: an integer, or a string holding one (a decoder
/// accepts a count written either way), or null for none.
fn count<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    struct Count;
    impl serde::de::Visitor<'_> for Count {
        type Value = Option<u64>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a count (an integer from 0, or a string of digits)")
        }
        fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Self::Value, E> {
            Ok(Some(n))
        }
        fn visit_str<E: serde::de::Error>(self, t: &str) -> Result<Self::Value, E> {
            match t.parse::<u64>() {
                Ok(n) if !t.starts_with('+') => Ok(Some(n)),
                // The value quoted as JSON writes it (serde's own words quote it as Rust does).
                _ => Err(E::custom(format_args!(
                    "invalid value: string {}, expected a count (an integer from 0, or a string of digits)",
                    serde_json::to_string(t).unwrap_or_default()
                ))),
            }
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
    }
    d.deserialize_any(Count)
}

impl Tokens {
    /// No count is known.
    pub fn is_empty(&self) -> bool {
        *self == Tokens::default()
    }

    /// The total as stated, else input plus output.
    pub fn effective_total(&self) -> Option<u64> {
        self.total.or(match (self.input, self.output) {
            (None, None) => None,
            (i, o) => Some(i.unwrap_or(0).saturating_add(o.unwrap_or(0))),
        })
    }

    fn zip(&self, other: &Tokens, f: impl Fn(Option<u64>, Option<u64>) -> Option<u64>) -> Tokens {
        Tokens {
            input: f(self.input, other.input),
            output: f(self.output, other.output),
            cache_read: f(self.cache_read, other.cache_read),
            cache_write: f(self.cache_write, other.cache_write),
            reasoning: f(self.reasoning, other.reasoning),
            total: f(self.total, other.total),
        }
    }

    /// Field-wise sum; a field known on either side is known in the sum.
    pub fn plus(&self, other: &Tokens) -> Tokens {
        self.zip(other, |a, b| match (a, b) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
        })
    }

    /// Field-wise `self - earlier`, never below zero.
    pub fn since(&self, earlier: &Tokens) -> Tokens {
        self.zip(earlier, |a, b| a.map(|a| a.saturating_sub(b.unwrap_or(0))))
    }

    /// Field-wise maximum.
    pub fn max(&self, other: &Tokens) -> Tokens {
        self.zip(other, |a, b| match (a, b) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0).max(b.unwrap_or(0))),
        })
    }
}

/// A usage report as the source gave it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// What the figures cover.
    pub scope: Scope,
    /// How the figures relate to earlier ones in their scope.
    pub basis: Basis,
    /// `false` marks a partial snapshot that a later one supersedes.
    #[serde(rename = "final", default = "yes")]
    pub final_: bool,
    /// The turn (or round) the figures belong to, where the source names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub of: Option<Name>,
    /// The model the figures are for, where the source names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<Name>,
    /// The token counts.
    #[serde(flatten)]
    pub tokens: Tokens,
}

fn yes() -> bool {
    true
}

/// How a run ended.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::EnumIter,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Outcome {
    /// The run completed.
    Completed,
    /// The run failed.
    Failed,
    /// Approval was needed and not given.
    PermissionDenied,
    /// The run ran out of time.
    Timeout,
    /// The run was interrupted.
    Interrupted,
    /// Any other stop; the reason says which.
    Incomplete,
}

impl Outcome {
    /// The outcome's name in snake_case (`permission_denied`), as the canonical dialect writes it.
    pub fn name(self) -> &'static str {
        self.into()
    }
}

/// The end of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Terminal {
    /// How the run ended.
    pub outcome: Outcome,
    /// Why the run stopped, in the source's words (a stop or exit reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Why the run failed, where it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The exit code the source stated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// The run's final answer text, where the source states it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_text: Option<String>,
    /// The id of the session the run belonged to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The model the run used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The run's token totals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Tokens>,
    /// True when the source had no terminal record and agentgate made this one.
    #[serde(default, skip_serializing_if = "is_false")]
    pub synthesized: bool,
    /// The run's cost in US dollars, where the source states one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// The model's context window in tokens, where the source states it (Claude's result:
    /// `modelUsage.<model>.contextWindow`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
}

impl Terminal {
    /// The end of a run with this outcome and nothing else known.
    pub fn new(outcome: Outcome) -> Self {
        Terminal {
            outcome,
            reason: None,
            error: None,
            exit_code: None,
            final_text: None,
            session_id: None,
            model: None,
            usage: None,
            synthesized: false,
            cost_usd: None,
            context_window: None,
        }
    }
}

impl Event {
    /// The event's kind, as the canonical dialect names it.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::Session(_) => "session",
            Event::TurnStart { .. } => "turn_start",
            Event::Prompt { .. } => "prompt",
            Event::TurnEnd { .. } => "turn_end",
            Event::RoundStart { .. } => "round_start",
            Event::RoundEnd { .. } => "round_end",
            Event::ReasoningStart { .. } => "reasoning_start",
            Event::ReasoningDelta { .. } => "reasoning_delta",
            Event::ReasoningPeek { .. } => "reasoning_peek",
            Event::ReasoningEnd { .. } => "reasoning_end",
            Event::TextStart => "text_start",
            Event::TextDelta { .. } => "text_delta",
            Event::TextReplace { .. } => "text_replace",
            Event::TextEnd { .. } => "text_end",
            Event::ToolDraft(_) => "tool_draft",
            Event::ToolCall(_) => "tool_call",
            Event::ToolOutput { .. } => "tool_output",
            Event::ToolResult(_) => "tool_result",
            Event::ToolWithdrawn { .. } => "tool_withdrawn",
            Event::PermissionDenied(_) => "permission_denied",
            Event::Usage(_) => "usage",
            Event::Cost { .. } => "cost",
            Event::Stage { .. } => "stage",
            Event::Notice { .. } => "notice",
            Event::Error { .. } => "error",
            Event::Approval { .. } => "approval",
            Event::Compaction { .. } => "compaction",
            Event::Retry { .. } => "retry",
            Event::Subagent { .. } => "subagent",
            Event::Todo { .. } => "todo",
            Event::FileChange { .. } => "file_change",
            Event::Diagnostics { .. } => "diagnostics",
            Event::SessionSummary(_) => "session_summary",
            Event::FinalAnswer { .. } => "final_answer",
            Event::Terminal(_) => "terminal",
            Event::Extension { .. } => "extension",
            Event::Repeat => "repeat",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cumulative_snapshots_subtract_and_never_go_negative() {
        let a = Tokens { input: Some(100), output: Some(10), ..Tokens::default() };
        let b = Tokens { input: Some(150), output: Some(5), ..Tokens::default() };
        let d = b.since(&a);
        assert_eq!(d.input, Some(50));
        assert_eq!(d.output, Some(0));
        assert_eq!(d.cache_read, None);
    }

    #[test]
    fn effective_total_falls_back_to_input_plus_output() {
        let t = Tokens { input: Some(7), output: Some(3), ..Tokens::default() };
        assert_eq!(t.effective_total(), Some(10));
        assert_eq!(Tokens { total: Some(99), ..t }.effective_total(), Some(99));
        assert_eq!(Tokens::default().effective_total(), None);
    }

    #[test]
    fn arguments_keep_text_that_is_not_json() {
        let a = Arguments::json_text("src/main.rs".into());
        assert_eq!(a.text.as_deref(), Some("src/main.rs"));
        let b = Arguments::json_text("{\"path\":\"a\"}".into());
        assert_eq!(b.to_value(), Some(serde_json::json!({"path": "a"})));
        assert_eq!(b.to_text(), "{\"path\":\"a\"}");
    }

    #[test]
    fn compact_json_text_is_kept_unparsed_and_means_its_value() {
        let text = "{\"path\":\"a\",\"n\":[1,-2,true,null]}";
        let lazy = Arguments::json_text(text.into());
        assert!(lazy.unread && lazy.value.is_none(), "JSON text is not read until asked: {lazy:?}");
        assert!(Arguments::read_json_text(text.into()).compact, "compact text, read, is known compact");
        let value = serde_json::json!({"path": "a", "n": [1, -2, true, null]});
        assert_eq!(lazy, Arguments::value(value.clone()));
        assert_eq!(lazy.json().as_deref(), Some(text));
        assert_eq!(lazy.to_value(), Some(value));
        assert_eq!(lazy.as_text(), text);
        // Written as canonical writes arguments: the value, no text beside it.
        let written = |a: &Arguments| {
            let mut out = Vec::new();
            crate::json::write_serialize(&mut out, a).unwrap();
            String::from_utf8(out).unwrap()
        };
        assert_eq!(written(&lazy), format!("{{\"arguments\":{text}}}"));
        // serde_json's own serializer is given the value, and writes the same.
        assert_eq!(serde_json::to_string(&lazy).unwrap(), written(&lazy));
        // Spaced text keeps its text beside the value.
        let spaced = Arguments::read_json_text("{\"path\": \"a\"}".into());
        assert!(!spaced.compact && spaced.value.is_some() && spaced.text.is_some());
        let lazy_spaced = Arguments::json_text("{\"path\": \"a\"}".into());
        assert_eq!(lazy_spaced, spaced);
        assert_eq!(lazy_spaced.json().as_deref(), Some("{\"path\": \"a\"}"));
        assert_eq!(
            written(&lazy_spaced),
            "{\"arguments\":{\"path\":\"a\"},\"arguments_text\":\"{\\\"path\\\": \\\"a\\\"}\"}"
        );
        // A float as serde_json writes it is compact text too; one written otherwise (0.50)
        // keeps its text beside the value, as spaced text does.
        let float = Arguments::read_json_text("{\"x\":0.5}".into());
        assert_eq!((float.compact, float.text.as_deref()), (true, Some("{\"x\":0.5}")));
        assert_eq!(Arguments::json_text("{\"x\":0.5}".into()), float);
        let long_float = Arguments::read_json_text("{\"x\":0.50}".into());
        assert_eq!(
            (long_float.compact, long_float.value, long_float.text.as_deref()),
            (false, Some(serde_json::json!({"x": 0.5})), Some("{\"x\":0.50}"))
        );
        assert_eq!(lazy.compact_text(), Some(text));
        assert_eq!(Arguments::read_json_text(text.into()).compact_text(), Some(text));
        assert_eq!(Arguments::json_text("{\"x\":0.5}".into()).compact_text(), Some("{\"x\":0.5}"));
        assert_eq!(lazy_spaced.compact_text(), None);
        let not_json = Arguments::json_text("src/main.rs".into());
        assert_eq!(not_json.compact_text(), None);
        assert_eq!(not_json.json(), None);
        assert_eq!(not_json, Arguments::text("src/main.rs"));
        assert_eq!(written(&not_json), "{\"arguments_text\":\"src/main.rs\"}");
    }
}

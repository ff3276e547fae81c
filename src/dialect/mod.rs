//! The dialect registry: one enum, one `match` per operation. Each dialect lives in its own
//! folder with its decoder and encoder side by side; they meet only in the canonical model
//! ([`crate::model`]). Adding a dialect touches its folder, this file and its contract in
//! `mappings/`.

use std::borrow::Cow;

use serde_json::{Map, Value};
use strum::IntoEnumIterator;

use crate::json::object::Object;
use crate::json::Field;
use crate::model::Event;
use crate::model::Extra;
use crate::normalize::Context;
use crate::report::{Fate, Report};

pub mod adal;
pub mod base_context;
pub mod canonical;
pub mod claude_code;
pub mod codex;
pub mod localcode;
pub mod loom;
pub mod otlp;
pub mod wuu;

/// A stream format agentgate reads and writes.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    strum::EnumString,
    strum::Display,
    strum::EnumIter,
    strum::IntoStaticStr,
)]
#[strum(serialize_all = "kebab-case")]
pub enum Dialect {
    Localcode,
    Adal,
    Wuu,
    Loom,
    BaseContext,
    ClaudeCode,
    Codex,
    Canonical,
    /// OpenTelemetry's OTLP/JSON: written, never read (not among [`Dialect::all`]).
    Otlp,
}

impl Dialect {
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// The dialects read and written: every stream format but the write-only targets.
    pub fn all() -> impl Iterator<Item = Dialect> {
        Dialect::iter().filter(|d| d.is_read())
    }

    pub fn names() -> Vec<&'static str> {
        Dialect::all().map(Dialect::name).collect()
    }

    /// Every format agentgate writes: the dialects, and the targets it only writes (otlp).
    pub fn targets() -> impl Iterator<Item = Dialect> {
        Dialect::iter()
    }

    pub fn target_names() -> Vec<&'static str> {
        Dialect::targets().map(Dialect::name).collect()
    }

    /// Whether agentgate reads this format (otlp it only writes).
    pub fn is_read(self) -> bool {
        self != Dialect::Otlp
    }

    /// The dialect's contract, from `mappings/<name>.json`.
    pub fn contract(self) -> &'static crate::contract::Contract {
        crate::contract::contract(self.name())
    }

    /// One line saying what the dialect is.
    pub fn description(self) -> &'static str {
        &self.contract().description
    }

    pub fn decoder(self) -> Box<dyn Decode> {
        match self {
            Dialect::Localcode => Box::new(localcode::Decoder::new()),
            Dialect::Adal => Box::new(adal::Decoder::new()),
            Dialect::Wuu => Box::new(wuu::Decoder::new()),
            Dialect::Loom => Box::new(loom::Decoder::new()),
            Dialect::BaseContext => Box::new(base_context::Decoder::new()),
            Dialect::ClaudeCode => Box::new(claude_code::Decoder::new()),
            Dialect::Codex => Box::new(codex::Decoder::new()),
            Dialect::Canonical => Box::new(canonical::Decoder::new()),
            Dialect::Otlp => Box::new(WriteOnly),
        }
    }

    pub fn encoder(self, opts: &EncodeOptions) -> Box<dyn Encode> {
        match self {
            Dialect::Localcode => Box::new(localcode::Encoder::new()),
            Dialect::Adal => Box::new(adal::Encoder::new()),
            Dialect::Wuu => Box::new(wuu::Encoder::new()),
            Dialect::Loom => Box::new(loom::Encoder::new()),
            Dialect::BaseContext => Box::new(base_context::Encoder::new(opts)),
            Dialect::ClaudeCode => Box::new(claude_code::Encoder::new(opts)),
            Dialect::Codex => Box::new(codex::Encoder::new()),
            Dialect::Canonical => Box::new(canonical::Encoder::new()),
            Dialect::Otlp => Box::new(otlp::Encoder::new(opts)),
        }
    }

    /// How surely a line belongs to this dialect.
    pub fn sniff(self, line: &Map<String, Value>) -> Sniff {
        match self {
            Dialect::Localcode => localcode::sniff(line),
            Dialect::Adal => adal::sniff(line),
            Dialect::Wuu => wuu::sniff(line),
            Dialect::Loom => loom::sniff(line),
            Dialect::BaseContext => base_context::sniff(line),
            Dialect::ClaudeCode => claude_code::sniff(line),
            Dialect::Codex => codex::sniff(line),
            Dialect::Canonical => canonical::sniff(line),
            Dialect::Otlp => Sniff::No,
        }
    }
}

/// The extra member of a record that exists only to carry a line of its dialect through the
/// canonical stream (a line the model has no event for and folds, or one written to close a
/// copied stream): for that dialect's encoder to copy, and passed to no other.
pub const CARRIED_LINE: &str = "carried_line";

impl Dialect {
    /// The extra members in which this dialect's records carry, in the canonical stream, the
    /// line they were read from, for its encoder to write back: base-context's lines, wuu's
    /// lines of a call to bash and claude-code's lines as `line`, codex's item lines as their
    /// own `type` and `item` (and a turn's end its `usage` or `error`). They hold what the
    /// record holds, so they name no member of the source that another target drops.
    pub(crate) fn carried_line_members(self) -> &'static [&'static str] {
        match self {
            Dialect::BaseContext | Dialect::Wuu | Dialect::ClaudeCode => &["line"],
            Dialect::Codex => &["type", "item", "usage", "error"],
            _ => &[],
        }
    }
}

/// The decoder of a format agentgate only writes: it refuses the stream.
struct WriteOnly;

impl Decode for WriteOnly {
    fn decode(&mut self, _line: Object<'_>, _out: &mut Decoded) -> Result<(), LineError> {
        Err(LineError::fatal("otlp is written, not read: give the agent's own stream"))
    }
}

/// One canonical event with where it came from. `extra` holds the members of the source line
/// that the event has no field for; an encoder of the same dialect writes them back.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub event: Event,
    pub origin: Dialect,
    pub extra: Extra,
    /// The line it was read from is the line its dialect's encoder writes for it, byte for
    /// byte (see [`Decoded::verbatim_wanted`]): that encoder may copy the line instead.
    pub verbatim: bool,
}

impl Record {
    pub fn new(origin: Dialect, event: Event) -> Self {
        Record { event, origin, extra: Extra::new(), verbatim: false }
    }

    pub fn with_extra(origin: Dialect, event: Event, extra: Extra) -> Self {
        Record { event, origin, extra, verbatim: false }
    }
}

/// Why a line could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError {
    pub message: String,
    /// The rest of the stream cannot be read either (an unknown format version).
    pub fatal: bool,
}

impl LineError {
    pub fn bad(message: impl Into<String>) -> Self {
        LineError { message: message.into(), fatal: false }
    }

    pub fn fatal(message: impl Into<String>) -> Self {
        LineError { message: message.into(), fatal: true }
    }
}

/// What a decoder made of one line: its records, and problems that did not stop it (a status
/// and exit code that disagree, say).
#[derive(Debug, Default)]
pub struct Decoded {
    pub records: Vec<Record>,
    pub warnings: Vec<String>,
    /// The line only repeats what an earlier line said (wuu's `command_*` twin of a `tool_*`
    /// event): it has no records of its own, and nothing of it is lost.
    pub folded: bool,
    /// The target is the source's dialect, so a decoder may mark a record [`Record::verbatim`]
    /// (set for the run, kept across lines).
    pub verbatim_wanted: bool,
    /// The target is canonical: a decoder whose dialect is written back by copying its lines
    /// (base-context) carries each line whole, so that the canonical stream translated back
    /// gives what the direct translation gives (set for the run).
    pub carry_lines: bool,
    /// The length of the line being decoded (for [`Object::compact_len`]).
    pub line_len: usize,
    /// The digest of the input a canonical stream was made from, as it states it: ids derived
    /// from the input are derived from that, not from the canonical bytes, so that a second step
    /// makes up the same ids the first would have.
    pub input_digest: Option<String>,
    /// The digests of the whole input a canonical stream was made from, as its terminal record
    /// states them: what a target derives from the whole input (loom's `transcript_digest`)
    /// comes from them (taken by the pipeline).
    pub whole_input: Option<crate::normalize::WholeDigests>,
    /// `Some` when the target drops the members a record has no field for and only names them
    /// in the report (a target other than the source's dialect and canonical): the shapes of
    /// members whose keys the report's reader holds already. A decoder keeps members of one of
    /// these shapes as the shape alone (`Extra::named`), without copying them (set for the
    /// run; the pipeline adds to it).
    pub named_shapes: Option<Vec<u64>>,
}

impl Decoded {
    pub fn push(&mut self, record: Record) {
        self.records.push(record);
    }

    /// The members left in `m`, as a record's extra members: as their shape alone where that
    /// is all the target needs ([`Decoded::named_shapes`]), else copied.
    pub fn extra(&self, m: Object<'_>) -> Extra {
        match &self.named_shapes {
            Some(known) if !m.is_empty() => {
                let shape = Extra::shape_of(m.iter().map(|(k, _)| k));
                if known.contains(&shape) {
                    return Extra::named(shape);
                }
                m.into_extra()
            }
            _ => m.into_extra(),
        }
    }

    pub fn warn(&mut self, message: impl Into<String>) {
        self.warnings.push(message.into());
    }

    pub fn fold(&mut self) {
        self.folded = true;
    }

    pub fn clear(&mut self) {
        self.records.clear();
        self.warnings.clear();
        self.folded = false;
    }
}

/// Decodes the lines of one dialect into canonical records. A decoder holds what it must
/// remember between lines, and nothing that grows with the stream.
pub trait Decode {
    /// Decodes one line (already parsed as a JSON object), adding at least one record, or
    /// folding it into what earlier lines said.
    fn decode(&mut self, line: Object<'_>, out: &mut Decoded) -> Result<(), LineError>;

    /// The input ended. A dialect without an in-stream terminal record (base-context) says here
    /// how the run ended, from what it read.
    fn finish(&mut self, _out: &mut Decoded) {}
}

/// What an encoder may be told beside its dialect.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EncodeOptions {
    /// base-context: write the `--json-deltas` form.
    pub json_deltas: bool,
    /// claude-code: write `stream_event` partials ahead of each `assistant` line, as
    /// `--include-partial-messages` makes Claude Code do.
    pub include_partial_messages: bool,
    /// The time to write where the target needs one the source lacks, in seconds since the
    /// Unix epoch (`SOURCE_DATE_EPOCH`); without it, the epoch itself, so output stays
    /// deterministic.
    pub source_date_epoch: Option<u64>,
    /// The directory the agent runs in, where agentgate knows it (`exec`): what a target that
    /// requires a working directory (base-context's session header) writes when the source
    /// states none.
    pub cwd: Option<String>,
    /// otlp: which names the metrics take.
    pub otlp_semconv: otlp::Semconv,
    /// otlp: tools' arguments and results on their spans (they can hold private code and paths).
    pub otlp_tool_content: bool,
    /// Times are the records' arrival (`exec`), not made from the source's.
    pub live_times: bool,
}

/// Where an encoder writes: the output buffer and the run's report.
pub struct Sink<'a> {
    pub out: &'a mut Vec<u8>,
    pub report: &'a mut Report,
    /// Writes the buffer out and empties it: the pipeline's output, for a line that grows
    /// with the run (see [`Sink::spill`]). Without one the buffer keeps it all.
    pub drain: Option<&'a mut Drain<'a>>,
    /// The input line the records given now were read from; empty where there is none (the
    /// records made at the end of the run). What a [`Record::verbatim`] record is written as.
    pub line: &'a str,
}

/// What a [`Sink`] writes its buffer out with.
pub type Drain<'a> = dyn FnMut(&mut Vec<u8>) + 'a;

/// How much of a long line [`Sink::spill`] lets the buffer hold before it is written out.
pub const SPILL_BLOCK: usize = 64 * 1024;

impl<'a> Sink<'a> {
    /// A sink that keeps all it is given in `out`.
    pub fn new(out: &'a mut Vec<u8>, report: &'a mut Report) -> Self {
        Sink { out, report, drain: None, line: "" }
    }

    /// Writes out what the buffer holds, once that is a block or more, where the sink has a
    /// drain: called by an encoder between the parts of a line whose length grows with the
    /// run (loom's `Session` lists every call; base-context's `agent_end` every message), so
    /// that the line is never held whole a second time.
    pub fn spill(&mut self) {
        if self.out.len() >= SPILL_BLOCK {
            if let Some(drain) = self.drain.as_mut() {
                drain(self.out);
            }
        }
    }
}

/// Encodes canonical records as the lines of one dialect.
pub trait Encode {
    /// Encodes one record, with the normalizer's view of the run so far.
    fn encode(&mut self, record: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate;

    /// Whether the dialect writes a session summary as one record. Where it does not, the
    /// normalizer hands the encoder the summary's tool calls and usage as events instead.
    fn carries_summaries(&self) -> bool {
        false
    }

    /// Whether the encoder uses the digest of the whole input at the end of the run (loom's
    /// `transcript_digest`, an id derived for adal's `complete`), given what the run has told
    /// so far; asked after every line, and once it says no, the input is hashed no further.
    /// Where it never says yes, the input is hashed only up to the first record, whose digest
    /// seeds ids made at the start.
    fn needs_whole_digest(&self, _ctx: &Context) -> bool {
        false
    }

    /// The digest the encoder's ids and digests are made from: SHA-256, unless it only needs
    /// to tell inputs apart.
    fn digest_kind(&self) -> crate::framing::DigestKind {
        crate::framing::DigestKind::Sha256
    }

    /// Whether the encoder reads a call's arguments when its result comes
    /// ([`CallView::arguments`](crate::normalize::CallView::arguments)), as localcode's
    /// `tool_result` repeats them. An encoder that says no spares the normalizer a copy of
    /// them for every call still open.
    fn uses_call_arguments(&self) -> bool {
        true
    }

    /// Whether the target matches results to calls by their ids (adal, wuu, base-context), so
    /// that a source's id given to two calls must become two ids (see the normalizer). Not for
    /// records of the target's own dialect: a stream translated to itself keeps its ids.
    fn matches_calls_by_id(&self, _origin: Dialect) -> bool {
        false
    }

    /// Whether the encoder reads the output streamed for a call when its result comes
    /// ([`CallView::output`](crate::normalize::CallView::output)), as the targets that put
    /// the output on the result do. An encoder that says no spares the normalizer a copy of
    /// every output delta.
    fn uses_call_output(&self) -> bool {
        true
    }

    /// Whether lines of the encoder's own dialect may be marked to be written as read
    /// ([`Decoded::verbatim_wanted`]): not where an option asks for another form of them.
    fn copies_own_lines(&self) -> bool {
        true
    }
}

/// Whether `kind` is a record kind of `dialect`'s contract and of no other agent's (canonical
/// aside: its lines carry `v`). A line of such a kind belongs to that dialect; the kinds
/// several agents share (`result`, `error`, `tool_result`...) need a closer look, which each
/// dialect's `sniff` takes.
pub(crate) fn own_kind(dialect: Dialect, kind: &str) -> bool {
    dialect.contract().kinds.contains_key(kind)
        && Dialect::all().all(|d| d == dialect || d == Dialect::Canonical || !d.contract().kinds.contains_key(kind))
}

/// How surely a line belongs to a dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Sniff {
    No,
    /// The line fits this dialect and others too.
    Maybe,
    /// The line is of this dialect.
    Yes,
}

/// The order dialects are asked in: the most specific marks first (a canonical line carries
/// `v` beside a `type` that other dialects use too).
const DETECT_ORDER: [Dialect; 8] = [
    Dialect::Canonical,
    Dialect::Loom,
    Dialect::Wuu,
    Dialect::BaseContext,
    Dialect::Codex,
    Dialect::ClaudeCode,
    Dialect::Localcode,
    Dialect::Adal,
];

/// Decides the dialect of a stream from its first lines: the first line that only one
/// dialect claims decides; lines that several dialects could hold narrow the choice.
#[derive(Debug, Default)]
pub struct Detector {
    maybe: Vec<Dialect>,
    lines: usize,
}

impl Detector {
    /// Looks at one line; `Some` once the dialect is certain.
    pub fn feed(&mut self, line: &Map<String, Value>) -> Option<Dialect> {
        self.lines += 1;
        let mut fits = Vec::new();
        for d in DETECT_ORDER {
            match d.sniff(line) {
                Sniff::Yes => return Some(d),
                Sniff::Maybe => fits.push(d),
                Sniff::No => {}
            }
        }
        if !fits.is_empty() {
            if self.maybe.is_empty() {
                self.maybe = fits;
            } else {
                self.maybe.retain(|d| fits.contains(d));
            }
        }
        None
    }

    /// The decision once no more lines come: the one dialect every line fitted, or why not.
    pub fn finish(&self) -> Result<Dialect, String> {
        match self.maybe.as_slice() {
            [d] => Ok(*d),
            [] if self.lines == 0 => Err("no records to tell the dialect from".into()),
            [] => Err("no line looks like any known dialect".into()),
            many => Err(format!(
                "the lines fit several dialects ({}); name one with --from",
                many.iter().map(|d| d.name()).collect::<Vec<_>>().join(", ")
            )),
        }
    }
}

/// Takes the `type` member of a line, or says it is missing.
pub(crate) fn take_type<'a>(line: &mut Object<'a>) -> Result<Cow<'a, str>, LineError> {
    take_kind(line, "type")
}

/// A decoder's check of a record against its dialect's contract. An integer or boolean field
/// written as a string holding one is read as that value (a decoder accepts a count written
/// either way), and an optional field the contract refuses is left out, each with a warning; a
/// required field missing or refused makes the line bad (nothing is written from it).
pub(crate) fn check_record(
    contract: &crate::contract::Contract,
    kind: &str,
    m: &mut Object<'_>,
    out: &mut Decoded,
) -> Result<(), LineError> {
    if contract.check_fields(kind, m).is_empty() {
        return Ok(());
    }
    let mut notes = contract.read_scalar_strings(kind, m);
    notes.extend(contract.leave_out_refused_optional(kind, m));
    if let Some(problem) = contract.check_fields(kind, m).into_iter().next() {
        return Err(LineError::bad(problem));
    }
    notes.into_iter().for_each(|n| out.warn(n));
    Ok(())
}

/// Takes count `key` of a `kind` line. One that is there but holds no count (a negative or
/// fractional number, a string of anything but digits) stays among the line's members, as an
/// unknown member does, and is named on stderr with what it is read as (`read_as`): a count
/// read as nothing is never dropped unsaid.
pub(crate) fn take_count_noted(
    m: &mut Object<'_>,
    kind: &str,
    key: &str,
    read_as: &str,
    out: &mut Decoded,
) -> Option<u64> {
    m.take_count_or_not(key).unwrap_or_else(|v| {
        out.warn(not_a_count(kind, key, &v, read_as));
        None
    })
}

/// The note for member `key` of a `kind` line that holds `v`, no count.
pub(crate) fn not_a_count(kind: &str, key: &str, v: &Value, read_as: &str) -> String {
    format!("{kind}.{key} is {v}, not a count; read as {read_as}")
}

/// Takes the member naming a line's kind (`type`, or loom's `kind`), borrowed from the line, or
/// says it is missing.
pub(crate) fn take_kind<'a>(line: &mut Object<'a>, field: &str) -> Result<Cow<'a, str>, LineError> {
    line.take_text(field).ok_or_else(|| no_kind(line, field))
}

/// [`take_kind`], the member left in the line.
pub(crate) fn kind_of<'a>(line: &Object<'a>, field: &str) -> Result<Cow<'a, str>, LineError> {
    line.get_text(field).ok_or_else(|| no_kind(line, field))
}

fn no_kind(line: &Object<'_>, field: &str) -> LineError {
    LineError::bad(match line.get(field) {
        Some(member) => format!("\"{field}\" is {}, not a string", member.to_value()),
        None => format!("object without a \"{field}\" member"),
    })
}

/// Rebuilds a whole line from its `type` and the members left after taking it, `type` first:
/// the line of an extension event, kept as it came.
pub(crate) fn whole_line(kind: impl Into<String>, rest: Object<'_>) -> Value {
    let mut m = Map::with_capacity(rest.len() + 1);
    m.insert("type".into(), Value::String(kind.into()));
    m.extend(rest.into_fields());
    Value::Object(m)
}

/// An output line in the making: its members in order, values owned or borrowed from the
/// record. Written straight to bytes, without building a map.
pub(crate) struct Line<'a> {
    pairs: Vec<(Cow<'a, str>, Field<'a>)>,
}

impl Line<'_> {
    pub(crate) fn write(&self, out: &mut Vec<u8>, layout: crate::json::Layout) {
        crate::json::write_fields(out, &self.pairs, layout);
    }
}

/// What a refusal says where a target writes it as text: `permission denied: <why>`, the why
/// taken once (a reason that already says `permission denied: `, as one translated from such
/// text does, is not prefixed again; the bare status word says no more than the prefix).
pub(crate) fn refusal(reason: Option<&str>) -> String {
    format!("permission denied: {}", refusal_why(reason))
}

/// The why of [`refusal`], for a target that words the rest itself.
pub(crate) fn refusal_why(reason: Option<&str>) -> &str {
    reason
        .map(|r| r.strip_prefix("permission denied: ").unwrap_or(r))
        .filter(|r| !r.is_empty() && !matches!(*r, "permission_denied" | "permission denied"))
        .unwrap_or("approval required")
}

/// What a tool result writes as the call's output: its own, else the output streamed for the
/// call, else its error; else nothing.
pub(crate) fn tool_output<'a>(r: &'a crate::model::ToolResult, ctx: &'a Context) -> Field<'a> {
    match (&r.output, &ctx.call.output, &r.error) {
        (Some(t), _, _) | (None, Some(t), _) => Field::Text(t),
        (None, None, Some(s)) => Field::Str(s),
        (None, None, None) => Field::Str(""),
    }
}

/// Writes a line of a layout that sorts members by key (loom's, wuu's), byte for byte as
/// [`build_line`] and [`Line::write`] would, without building and sorting a member list: the
/// `parts` (at most four) each come sorted by key, no key in two of them, the type field in one,
/// their keys plain words (an encoder's own); they are merged by index, lent, never moved. The
/// source's extra members that `contract` accepts for `kind` are merged into their places, one
/// of the same key standing in for the field.
pub(crate) fn write_sorted(
    out: &mut Vec<u8>,
    contract: &crate::contract::Contract,
    kind: &str,
    parts: &[&[(&str, Field<'_>)]],
    extra: Option<&Extra>,
    layout: crate::json::Layout,
) {
    let mut extras = extra.map(Extra::members).unwrap_or_default();
    if !extras.is_empty() {
        let may = contract.fields_of(kind);
        extras.retain(|(k, v)| may.accepts(k, v));
        extras.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    }
    let mut at = [0usize; 4];
    let parts = &parts[..parts.len().min(at.len())];
    let mut e = 0;
    out.push(b'{');
    let (mut first, mut last) = (true, "");
    loop {
        // The part whose next field sorts first.
        let mut least: Option<(usize, &str)> = None;
        for (p, part) in parts.iter().enumerate() {
            if let Some((k, _)) = part.get(at[p]) {
                if least.is_none_or(|(_, l)| *k < l) {
                    least = Some((p, k));
                }
            }
        }
        let from_extra = match (least, extras.get(e)) {
            (None, None) => break,
            (Some(_), None) => false,
            (None, Some(_)) => true,
            (Some((p, f)), Some((x, _))) => match f.cmp(x.as_ref()) {
                std::cmp::Ordering::Less => false,
                std::cmp::Ordering::Greater => true,
                std::cmp::Ordering::Equal => {
                    // The source's member stands in for the field.
                    at[p] += 1;
                    true
                }
            },
        };
        if !std::mem::take(&mut first) {
            out.push(b',');
        }
        if from_extra {
            let (k, v) = &extras[e];
            e += 1;
            crate::json::write_str(out, k, layout);
            out.push(b':');
            crate::json::write_member(out, v, layout);
        } else if let Some((p, _)) = least {
            let (k, v) = &parts[p][at[p]];
            at[p] += 1;
            debug_assert!(last < *k, "{kind} fields out of order or repeated: {last} before {k}");
            debug_assert!(k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'), "{kind}: key {k}");
            last = k;
            out.push(b'"');
            out.extend_from_slice(k.as_bytes());
            out.extend_from_slice(b"\":");
            v.write(out, layout);
        }
    }
    out.extend_from_slice(b"}\n");
}

/// Fields of which a later one may name the key of an earlier one (a record's own members, then
/// the fields an encoder writes in any case): each key once, in its first place, with its last
/// value; none of the keys `written` (the type field, which [`build_line`] writes, and any the
/// encoder adds after). What `build_line` takes from an encoder that passes a record's members on.
pub(crate) fn last_wins<'a>(
    written: &[&str],
    fields: impl IntoIterator<Item = (&'a str, Field<'a>)>,
) -> Vec<(&'a str, Field<'a>)> {
    let mut out: Vec<(&'a str, Field<'a>)> = Vec::new();
    for (k, v) in fields {
        if written.contains(&k) {
            continue;
        }
        match out.iter_mut().find(|p| p.0 == k) {
            Some(p) => p.1 = v,
            None => out.push((k, v)),
        }
    }
    out
}

/// Writes an output line of a layout that keeps members in order (adal's, localcode's), byte for
/// byte as [`build_line`] and [`Line::write`] would: where the source line left no members to
/// merge in (`extra` none or empty: a record from another dialect, mostly), straight out, the
/// encoder's fields after the type field, their keys plain words; else through [`build_line`].
pub(crate) fn write_in_order<'a>(
    out: &mut Vec<u8>,
    contract: &'a crate::contract::Contract,
    kind: &'a str,
    fields: impl IntoIterator<Item = (&'a str, Field<'a>)>,
    extra: Option<&'a Extra>,
    layout: crate::json::Layout,
) {
    debug_assert!(!matches!(layout, crate::json::Layout::Sorted | crate::json::Layout::Go));
    if extra.is_some_and(|e| !e.is_empty()) {
        return build_line(contract, kind, fields, extra).write(out, layout);
    }
    let (comma, colon) = crate::json::separators(layout);
    out.push(b'{');
    crate::json::write_str(out, &contract.type_field, layout);
    out.extend_from_slice(colon);
    crate::json::write_str(out, kind, layout);
    for (k, v) in fields {
        debug_assert!(k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'), "{kind}: key {k}");
        debug_assert!(k != contract.type_field, "{kind}: the type field given as a field");
        out.extend_from_slice(comma);
        out.push(b'"');
        out.extend_from_slice(k.as_bytes());
        out.push(b'"');
        out.extend_from_slice(colon);
        v.write(out, layout);
    }
    out.extend_from_slice(b"}\n");
}

/// Builds an output line of `contract`'s dialect: its kind member, then `fields` in order (each
/// key once: an encoder that passes a record's members on gives them through [`last_wins`]),
/// then the members of the source line that the model had no field for (`extra`, given only
/// when the source is the same dialect). An extra member takes the place of a written one only
/// when the contract accepts its value there: it restores what the source said (an unknown
/// status word, say), but never makes a line the contract forbids (a null where an id must be,
/// a count that is not digits).
pub(crate) fn build_line<'a, F: Into<Field<'a>>>(
    contract: &'a crate::contract::Contract,
    kind: &'a str,
    fields: impl IntoIterator<Item = (&'a str, F)>,
    extra: Option<&'a Extra>,
) -> Line<'a> {
    let fields = fields.into_iter();
    let extra = extra.map(Extra::members).unwrap_or_default();
    let mut pairs: Vec<(Cow<'a, str>, Field<'a>)> = Vec::with_capacity(fields.size_hint().0 + 1 + extra.len());
    pairs.push((Cow::Borrowed(contract.type_field.as_str()), Field::Str(kind)));
    let put = |pairs: &mut Vec<(Cow<'a, str>, Field<'a>)>, k: Cow<'a, str>, v: Field<'a>| match pairs
        .iter_mut()
        .find(|p| p.0 == k)
    {
        Some(p) => p.1 = v,
        None => pairs.push((k, v)),
    };
    // An encoder names each of its fields once, and never its type field: they go in as they
    // come. Only an extra member may meet a key already there.
    for (k, v) in fields {
        debug_assert!(pairs.iter().all(|p| p.0 != k), "a {kind} line given {k} twice");
        pairs.push((Cow::Borrowed(k), v.into()));
    }
    if !extra.is_empty() {
        let may = contract.fields_of(kind);
        for (k, v) in extra {
            if may.accepts(&k, &v) {
                put(&mut pairs, k, Field::Member(v));
            }
        }
    }
    Line { pairs }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::json::text::Text;
    use crate::json::Layout;

    /// A field value of each way an encoder writes one, with text that needs escapes in some.
    fn field(pick: usize, text: &str) -> Field<'_> {
        match pick % 6 {
            0 => Field::Str(text),
            1 => Field::Digits(text.len() as u64 * 1_000_003),
            2 => Field::Json("{\"b\":[1,2],\"a\":null}"),
            3 => Field::Owned(Value::String(text.to_string())),
            4 => Field::Kept(Text::from(text.to_string())),
            _ => Field::Owned(serde_json::json!({ "z": text, "a": 1 })),
        }
    }

    proptest! {
        #[test]
        fn the_in_order_writer_writes_what_the_generic_one_does(
            picks in prop::collection::vec(0usize..6, 0..8),
            text in prop::sample::select(vec!["", "plain", "a\"b\\c", "line\nbreak", "<tag> & \u{2028}", "é\u{1}"]),
            dialect in prop::sample::select(vec![Dialect::Adal, Dialect::Localcode, Dialect::BaseContext]),
            spaced in any::<bool>(),
        ) {
            let layout = if spaced { Layout::Spaced } else { Layout::Compact };
            let keys = ["id", "name", "args", "index", "chunk_2", "Status", "x"];
            let contract = dialect.contract();
            let fields = || picks.iter().enumerate().map(|(i, &p)| (keys[i % keys.len()], field(p, text)));
            prop_assume!(picks.len() <= keys.len());
            let mut slow = Vec::new();
            build_line(contract, "tool_call", fields(), None).write(&mut slow, layout);
            for extra in [None, Some(&Extra::new())] {
                let mut fast = Vec::new();
                write_in_order(&mut fast, contract, "tool_call", fields(), extra, layout);
                prop_assert_eq!(String::from_utf8_lossy(&fast), String::from_utf8_lossy(&slow));
            }
        }
    }

    #[test]
    fn the_in_order_writer_merges_a_source_lines_members_as_the_generic_one_does() {
        let extra = Object::parse(r#"{"name":"from the source","seq":3}"#).unwrap().unwrap().into_extra();
        let contract = Dialect::Adal.contract();
        let fields = || [("id", Field::Str("c1")), ("name", Field::Str("ours"))];
        let mut fast = Vec::new();
        write_in_order(&mut fast, contract, "tool_call", fields(), Some(&extra), Layout::Compact);
        assert_eq!(
            String::from_utf8(fast).unwrap(),
            "{\"type\":\"tool_call\",\"id\":\"c1\",\"name\":\"from the source\",\"seq\":3}\n"
        );
    }
}

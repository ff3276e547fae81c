//! The seams of a translation and what passes through them: the [`Dialect`] names, the
//! [`Decode`] and [`Encode`] traits, the [`Record`] a decoder makes of a line, the [`Sink`] an
//! encoder writes to, and the [`Context`] of the run an encoder reads. The registry that makes a
//! dialect's decoder and encoder is [`crate::dialect`]; the adapters there, the normalizer and the
//! pipeline meet here.

use std::hash::{BuildHasher, Hash};

use indexmap::{Equivalent, IndexMap};
use strum::IntoEnumIterator;

use crate::json::object::Object;
use crate::model::{Arguments, Event, Extra, Name, Text, Tokens};
use crate::report::{Fate, Report};

/// A stream format agentgate reads and writes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, strum::Display, strum::EnumIter, strum::IntoStaticStr,
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
    Gemini,
    Canonical,
    /// OpenTelemetry's OTLP/JSON: written, never read (not among [`Dialect::all`]).
    Otlp,
    /// The Agent Client Protocol: read (a connection's transcript, `exec --from acp`), never
    /// written as a stream (`agentgate acp` serves it; not among [`Dialect::all`]).
    Acp,
}

impl std::str::FromStr for Dialect {
    type Err = crate::error::Error;

    /// A dialect by its name (`claude-code`, `otlp`), as [`Dialect::name`] gives it.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Dialect::iter().find(|d| d.name() == name).ok_or_else(|| crate::error::Error::UnknownDialect {
            name: name.to_string(),
            known: Dialect::iter().map(Dialect::name).collect(),
        })
    }
}

/// One of the shell tools the specs name (`shell_tool` in `mappings/<d>.json`), in any case:
/// a call so named, whose arguments are its command line, is a shell call (`crate::shell`).
pub fn shell_tool_named(name: &str) -> bool {
    Dialect::all().filter_map(|d| d.contract().shell_tool.as_ref()).any(|s| s.name.eq_ignore_ascii_case(name))
}

impl Dialect {
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// The dialects read and written: every stream format but the write-only targets and the
    /// read-only sources.
    pub fn all() -> impl Iterator<Item = Dialect> {
        Dialect::iter().filter(|d| d.is_read() && d.is_written())
    }

    /// Every format agentgate reads: the dialects, and the sources it only reads (acp).
    pub fn sources() -> impl Iterator<Item = Dialect> {
        Dialect::iter().filter(|d| d.is_read())
    }

    pub fn source_names() -> Vec<&'static str> {
        Dialect::sources().map(Dialect::name).collect()
    }

    pub fn names() -> Vec<&'static str> {
        Dialect::all().map(Dialect::name).collect()
    }

    /// Every format agentgate writes: the dialects, and the targets it only writes (otlp).
    pub fn targets() -> impl Iterator<Item = Dialect> {
        Dialect::iter().filter(|d| d.is_written())
    }

    pub fn target_names() -> Vec<&'static str> {
        Dialect::targets().map(Dialect::name).collect()
    }

    /// Whether agentgate reads this format (otlp it only writes).
    pub fn is_read(self) -> bool {
        self != Dialect::Otlp
    }

    /// Whether agentgate writes this format as a stream (acp it serves, never writes).
    pub fn is_written(self) -> bool {
        self != Dialect::Acp
    }

    /// The dialect's contract, from `mappings/<name>.json`.
    pub fn contract(self) -> &'static crate::contract::Contract {
        crate::contract::contract(self.name())
    }

    /// One line saying what the dialect is.
    pub fn description(self) -> &'static str {
        &self.contract().description
    }
}

/// Where a record stands to the line of the source it was read from: a fact about the
/// source, stated as the record is made (by the pipeline for a dialect's decoder, whose records
/// of a line are that line; by the canonical decoder from what the canonical stream carries).
/// The pipeline's pass-through policy reads it to copy a line instead of encoding its records;
/// canonical output writes the line, so that a second step copies what the first would have.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum SourceLine {
    /// No line stands for the record: agentgate made it (a terminal record for a stream that
    /// ended early, a call a summary lists), or its line is not known.
    #[default]
    None,
    /// The first of the records its line was read into. `text` is the line where a writer needs
    /// it (the pipeline keeps it for a canonical target, which carries it).
    Whole { text: Option<Box<str>> },
    /// A later record read from the same line as the last [`SourceLine::Whole`] one.
    Same,
}

/// One canonical event with where it came from. `extra` holds the members of the source line
/// that the event has no field for: only for a target of the record's own dialect (and
/// canonical), which write them back; the pipeline takes them from a record bound for another
/// target and counts them in the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub event: Event,
    pub origin: Dialect,
    pub extra: Extra,
    /// The line it was read from.
    pub line: SourceLine,
}

impl Record {
    pub fn new(origin: Dialect, event: Event) -> Self {
        Record { event, origin, extra: Extra::new(), line: SourceLine::None }
    }

    pub fn with_extra(origin: Dialect, event: Event, extra: Extra) -> Self {
        Record { event, origin, extra, line: SourceLine::None }
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
    /// The length of the line being decoded (for [`Object::compact_len`]).
    pub line_len: usize,
    /// The digest of the input a canonical stream was made from, as it states it: ids derived
    /// from the input are derived from that, not from the canonical bytes, so that a second step
    /// makes up the same ids the first would have.
    pub input_digest: Option<String>,
    /// The digests of the whole input a canonical stream was made from, as its terminal record
    /// states them: what a target derives from the whole input (loom's `transcript_digest`)
    /// comes from them (taken by the pipeline).
    pub whole_input: Option<crate::codec::WholeDigests>,
    /// The source line the records carry (canonical input: a record's `line`), in the line
    /// just decoded; the records say where they stand to it ([`Record::line`]).
    pub carried: Option<Carried>,
    /// The members of the line the decoder left out, none of its records carrying them (an
    /// optional member of a type its contract refuses), each as its line's kind and its name:
    /// counted by the report as dropped.
    pub dropped: Vec<(String, String)>,
}

/// The line a canonical record carries for its source dialect: its dialect and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Carried {
    pub dialect: Dialect,
    pub text: String,
}

impl Decoded {
    pub fn push(&mut self, record: Record) {
        self.records.push(record);
    }

    /// The members left in `m`, as a record's extra members.
    pub fn extra(&self, m: Object<'_>) -> Extra {
        m.into_extra()
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
        self.carried = None;
        self.dropped.clear();
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

/// Which names OpenTelemetry's metrics take (`--otlp-semconv`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Semconv {
    /// The released conventions (v1.41.0): `gen_ai.client.token.usage`.
    #[default]
    Released,
    /// The GenAI repository's current names: `gen_ai.client.inference.usage.*` counters and
    /// `gen_ai.client.inference.operation.*` histograms.
    Latest,
}

/// What an encoder may be told beside its dialect.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
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
    pub otlp_semconv: Semconv,
    /// otlp: tools' arguments and results on their spans (they can hold private code and paths).
    pub otlp_tool_content: bool,
    /// Times are the records' arrival (`exec`), not made from the source's.
    pub live_times: bool,
    /// otlp: when the run ended, in nanoseconds since the Unix epoch, for a source that states
    /// no time (`--otlp-time`, else the file's modification time): its records are counted back
    /// from it. Without it, `source_date_epoch` is the end, else the records count on from the
    /// epoch.
    pub run_end_ns: Option<u64>,
}

/// Where an encoder writes: the output buffer and the run's report.
pub struct Sink<'a> {
    pub out: &'a mut Vec<u8>,
    pub report: &'a mut Report,
    /// Writes the buffer out and empties it: the pipeline's output, for a line that grows
    /// with the run (see [`Sink::spill`]). Without one the buffer keeps it all.
    pub drain: Option<&'a mut Drain<'a>>,
}

/// What a [`Sink`] writes its buffer out with.
pub type Drain<'a> = dyn FnMut(&mut Vec<u8>) + 'a;

/// How much of a long line [`Sink::spill`] lets the buffer hold before it is written out.
pub const SPILL_BLOCK: usize = 64 * 1024;

impl<'a> Sink<'a> {
    /// A sink that keeps all it is given in `out`.
    pub fn new(out: &'a mut Vec<u8>, report: &'a mut Report) -> Self {
        Sink { out, report, drain: None }
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

/// What an encoder is and needs of the run beyond each record, told once at its start, as
/// data: how the normalizer is to hand it the run, and the speed hints. Each of the last four
/// `false` spares the run the work of keeping something for it; the output is the same either
/// way (the digest aside, whose kind the ids are made from).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hints {
    /// The dialect writes a session summary as one record. Where it does not, the normalizer
    /// hands the encoder the summary's tool calls and usage as events instead.
    pub carries_summaries: bool,
    /// The target matches results to calls by their ids (adal, wuu, base-context...), so that
    /// a source's id given to two calls must become two ids (see the normalizer). Not for
    /// records of the target's own dialect: a stream translated to itself keeps its ids.
    pub matches_calls_by_id: bool,
    /// The encoder reads a call's arguments when its result comes ([`CallView::arguments`]),
    /// as localcode's `tool_result` repeats them; no spares the normalizer a copy of them for
    /// every call still open.
    pub call_arguments: bool,
    /// The encoder reads the output streamed for a call when its result comes
    /// ([`CallView::output`]), as the targets that put the output on the result do; no spares
    /// the normalizer a copy of every output delta.
    pub call_output: bool,
    /// The digest the encoder's ids and digests are made from: SHA-256, unless it only needs
    /// to tell inputs apart (or wants both, canonical).
    pub digest: crate::io::framing::DigestKind,
    /// The encoder reads members of another dialect's records' [`Record::extra`] (otlp: a
    /// provider or a time the source states beside its event), so the pipeline leaves them on
    /// the records it hands it (counted in the report all the same: it writes none of them).
    pub reads_extra: bool,
    /// The encoder writes a record's source line (canonical carries it): the pipeline keeps its
    /// text on the line's first record ([`SourceLine::Whole`]), which costs a copy of every
    /// line where no encoder reads it.
    pub source_lines: bool,
}

impl Default for Hints {
    fn default() -> Self {
        Hints {
            carries_summaries: false,
            matches_calls_by_id: false,
            call_arguments: true,
            call_output: true,
            digest: crate::io::framing::DigestKind::Sha256,
            reads_extra: false,
            source_lines: false,
        }
    }
}

/// Encodes canonical records as the lines of one dialect.
pub trait Encode {
    /// Encodes one record, with the normalizer's view of the run so far.
    fn encode(&mut self, record: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate;

    /// Whether the encoder uses the digest of the whole input at the end of the run (loom's
    /// `transcript_digest`, an id derived for adal's `complete`), given what the run has told
    /// so far; asked after every line, and once it says no, the input is hashed no further.
    /// Where it never says yes, the input is hashed only up to the first record, whose digest
    /// seeds ids made at the start.
    fn needs_whole_digest(&self, _ctx: &Context) -> bool {
        false
    }

    /// What the encoder needs kept for it: asked once, when the run starts ([`Hints`]).
    fn hints(&self) -> Hints {
        Hints::default()
    }

    /// A record whose line the pipeline copies to the output as it was read (the line is of
    /// the encoder's dialect, and valid in the form asked for): the encoder keeps what it would
    /// have kept had it written the line itself, so that what it writes later (a terminal
    /// record for a stream that ended early) follows on. `line` is the copied line, given with
    /// the first of its records ("" with the others). Called before the line is written: the
    /// encoder may write into `sink` what it held back from earlier records and owes before
    /// this line (an assistant message whose end waited for the next record), nothing else.
    ///
    /// By default the record is encoded into a buffer that is thrown away: the encoder's state
    /// is then exactly what writing it would have left. An encoder overrides this where the
    /// work is worth sparing, or where it holds output back.
    fn observe(&mut self, record: &Record, ctx: &Context, line: &str, sink: &mut Sink<'_>) {
        let _ = line;
        self.observe_by_encoding(record, ctx, sink);
    }

    /// [`Encode::observe`]'s default: the record encoded into a buffer thrown away (one kept
    /// for the thread, so that observing a line costs no allocation of its own). The exit
    /// status a terminal record states goes into `sink`'s report: the copied line states it.
    fn observe_by_encoding(&mut self, record: &Record, ctx: &Context, sink: &mut Sink<'_>) {
        thread_local! {
            static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let mut report = Report::default();
        SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
            Ok(mut out) => {
                self.encode(record, ctx, &mut Sink::new(&mut out, &mut report));
                out.clear();
                if out.capacity() > 1 << 20 {
                    out.shrink_to(1 << 16);
                }
            }
            // Observing inside an observation (an encoder that observes another): a buffer of
            // its own.
            Err(_) => {
                self.encode(record, ctx, &mut Sink::new(&mut Vec::new(), &mut report));
            }
        });
        if report.exit_status.is_some() {
            sink.report.exit_status = report.exit_status;
        }
    }
}

/// How surely a line belongs to a dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Sniff {
    /// The line rules this dialect out: a stream of it cannot hold such a line where detection
    /// looks (Claude Code's first `system` line is `init` or a hook's; a Qwen Code stream,
    /// shaped like Claude Code's, opens with `session_start`). A later line's yes does not
    /// name it.
    Against,
    No,
    /// The line fits this dialect and others too.
    Maybe,
    /// The line is of this dialect.
    Yes,
}

/// What encoders may know about the run beside the record in hand.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// The record was read from a line of the target's own dialect (directly, or carried
    /// through canonical): its events mean what the target's lines mean, and its extra members
    /// are the target's own, to write back. A record of another dialect has none left.
    pub native: bool,
    /// For a usage record: what it adds to the run (a snapshot's gain over the previous one).
    pub delta: Tokens,
    /// The run's totals so far, this record included.
    pub totals: Tokens,
    /// The current turn's totals so far.
    pub turn_totals: Tokens,
    /// For a tool result: whether it answers a call seen earlier in the stream.
    pub matched: bool,
    /// For a refusal: the call it names was already answered, as failed (wuu reports a refused
    /// call as a failed one): the call has ended, and the refusal only says why the run stops.
    pub answered: bool,
    /// For a final answer: whether it needs no message of its own in a target that writes
    /// answers as message text: its text is what the last message streamed, or it came after
    /// its turn had ended (a recap, as wuu's result and localcode's result give it).
    pub answer_streamed: bool,
    /// For a text replacement (or a text end that states the text): the length in bytes of
    /// the message text streamed before it, when the replacement only extends that text; `None`
    /// when it rewrites it. A target that can only append text writes what is new.
    pub extends: Option<usize>,
    /// For a tool call or result: what the run knows of the call (its index in its round, and
    /// for a result the call's name, arguments and the output streamed for it). Records are
    /// not rewritten with these, so a canonical stream translates to itself unchanged.
    pub call: CallView,
    pub session_id: Option<String>,
    pub model: Option<String>,
    /// Lowercase hex digest of the input read so far ([`crate::io::framing::DigestKind`]: SHA-256
    /// unless the encoder asked for another); set at the first record and before the terminal.
    pub input_digest: String,
    /// The dialect the input is decoded from.
    pub source: Option<Dialect>,
    /// `input_digest` is the one a canonical source stated for the input it was made from.
    pub input_digest_stated: bool,
    /// The digests of the whole input, both kinds, once known (before the terminal record):
    /// what canonical output states on its terminal record, and what a canonical source
    /// stated there for the input it was made from.
    pub whole_input: Option<WholeDigests>,
    /// The whole input's digests are the ones a canonical source stated.
    pub whole_input_stated: bool,
}

/// The digests of a whole input: [`crate::io::framing::DigestKind::Both`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WholeDigests {
    /// SHA-256, 64 lowercase hex digits.
    pub sha256: String,
    /// XXH3-128, 32 lowercase hex digits.
    pub xxh3: String,
}

impl WholeDigests {
    /// The one of the kind an encoder's ids are made from.
    pub fn of_kind(&self, kind: crate::io::framing::DigestKind) -> &str {
        match kind {
            crate::io::framing::DigestKind::Distinct => &self.xxh3,
            _ => &self.sha256,
        }
    }
}

impl Context {
    /// A UUID made from the input digest: the same input gives the same id.
    pub fn derived_uuid(&self) -> String {
        let d = &self.input_digest;
        if d.len() < 32 {
            return "00000000-0000-8000-8000-000000000000".into();
        }
        // Version 8 (custom) and the RFC 4122 variant, so it parses as a UUID anywhere.
        format!(
            "{}-{}-8{}-{:x}{}-{}",
            &d[0..8],
            &d[8..12],
            &d[13..16],
            8 | (u8::from_str_radix(&d[16..17], 16).unwrap_or(0) & 3),
            &d[17..20],
            &d[20..32]
        )
    }
}

/// What the run knows of the tool call a record belongs to.
#[derive(Debug, Clone, Default)]
pub struct CallView {
    pub index: Option<u64>,
    /// The name of the call that a result, refusal or withdrawal answers; none for a call's own
    /// record, which names it.
    pub name: Option<Name>,
    /// Kept only for an encoder that [uses them](Hints::call_arguments).
    pub arguments: Arguments,
    /// Output streamed for the call before its result; kept only for an encoder that
    /// [uses it](Hints::call_output).
    pub output: Option<Text>,
}

/// Where the normalizer hands each record, with the run's context as it stands for it: the
/// pipeline's encoder, into its sink ([`Encoding`]). The normalizer knows no encoder; it
/// reports through [`Emit::report`] what it made up or dropped.
pub trait Emit {
    fn emit(&mut self, record: &Record, ctx: &Context) -> Fate;
    fn report(&mut self) -> &mut Report;
}

/// An encoder writing into a sink: what the normalizer's records go to. Where the pipeline's
/// pass-through policy copies the line the records were read from ([`Encoding::copy`]), the
/// line is written as it was read with its first record, and the encoder only observes them.
pub struct Encoding<'e, 's, 'o, 'l> {
    pub encoder: &'e mut dyn Encode,
    pub sink: &'s mut Sink<'o>,
    /// The records of the line being given are copied: the line (written with its first
    /// record), and whether it is written yet.
    pub copy: Option<LineCopy<'l>>,
}

/// A line copied to the output as it was read, with the records read from it.
#[derive(Debug, Clone, Copy)]
pub struct LineCopy<'l> {
    pub text: &'l str,
    pub written: bool,
}

impl<'e, 's, 'o> Encoding<'e, 's, 'o, 'static> {
    /// An encoding that writes every record.
    pub fn new(encoder: &'e mut dyn Encode, sink: &'s mut Sink<'o>) -> Self {
        Encoding { encoder, sink, copy: None }
    }
}

impl Emit for Encoding<'_, '_, '_, '_> {
    fn emit(&mut self, record: &Record, ctx: &Context) -> Fate {
        match (&mut self.copy, &record.line) {
            (Some(copy), SourceLine::Whole { .. } | SourceLine::Same) => {
                let line = if copy.written { "" } else { copy.text };
                self.encoder.observe(record, ctx, line, self.sink);
                if !std::mem::replace(&mut copy.written, true) {
                    self.sink.out.extend_from_slice(copy.text.as_bytes());
                    self.sink.out.push(b'\n');
                }
                if line.is_empty() {
                    Fate::Absorbed
                } else if matches!(record.event, Event::Extension { .. }) {
                    Fate::PassedThrough
                } else {
                    Fate::Written
                }
            }
            _ => self.encoder.encode(record, ctx, self.sink),
        }
    }

    fn report(&mut self) -> &mut Report {
        self.sink.report
    }
}

/// Most calls kept waiting for their results. Some dialects never answer calls (loom records
/// only what a model asked for); at this many, the older half of the open calls is let go, so
/// memory does not grow with the stream. A result for it, should one come, is matched as one whose call was
/// never seen.
pub const MAX_OPEN_CALLS: usize = 4096;

/// Before call `key` is noted in a table kept per open call (here, and in decoders and encoders
/// that follow calls): when it is new and the table holds [`MAX_OPEN_CALLS`], the older half is
/// let go, at once (cheap on average, as one at a time is not), so that calls never answered do
/// not grow memory.
pub fn make_room<K, V, S, Q>(open: &mut IndexMap<K, V, S>, key: &Q)
where
    S: BuildHasher,
    Q: ?Sized + Hash + Equivalent<K>,
{
    if open.len() >= MAX_OPEN_CALLS && !open.contains_key(key) {
        open.drain(..MAX_OPEN_CALLS / 2);
    }
}

/// The reason a terminal record gives when the input ended without one.
pub const ENDED_EARLY: &str = "input ended without a terminal record";

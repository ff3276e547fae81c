//! The streaming pipeline: framing → decoder → normalizer → encoder, one line at a time.
//!
//! Output is buffered and written out whenever the next line is not all buffered (the next
//! read may wait: no input is left, or only the start of a line), so a live agent's reader sees
//! each translated line at once while a file is still written in large blocks. Memory does not grow with the stream: one line, the decoder's
//! and normalizer's small state, and the output buffer.

use std::borrow::Cow;
use std::io::{self, Write};

use serde_json::Value;

use crate::codec::{
    Decode, DecodeHints, Decoded, Dialect, Emit, Encode, EncodeOptions, Encoding, Sink, Sniff, WholeDigests,
};
use crate::dialect::Detector;
pub use crate::error::{one_line, Diagnostic, Error, Stop};
use crate::io::framing::{DigestKind, Frame, Input, Lines, DEFAULT_MAX_LINE_BYTES};
use crate::json::object::{NotObject, Object};
use crate::model::Event;
use crate::normalize::Normalizer;
use crate::report::{Fate, Report};

/// How many lines auto-detection may look at before it gives up.
pub const DETECT_LINES: usize = 64;

/// Output is written out at least this often, even when more input is buffered.
const OUT_BLOCK: usize = 64 * 1024;

/// What a translation is asked to do: [`Options::new`], then the builder methods for the
/// rest. New options come with defaults, so code that builds its options this way keeps
/// compiling.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Options {
    /// The source dialect; `None` detects it from the first lines.
    pub from: Option<Dialect>,
    /// The target.
    pub to: Dialect,
    /// The longest line read (bytes); a longer one is skipped with a diagnostic.
    pub max_line_bytes: usize,
    /// Stop at the first bad line (after writing the terminal record).
    pub strict: bool,
    /// How the target is written (base-context's delta form, claude-code's partials, otlp's
    /// conventions, the time to write where the source has none).
    pub encode: EncodeOptions,
}

impl Options {
    /// From `from` (`None`: detected) to `to`, lenient, lines up to 64 MiB.
    pub fn new(from: Option<Dialect>, to: Dialect) -> Self {
        Options { from, to, max_line_bytes: DEFAULT_MAX_LINE_BYTES, strict: false, encode: EncodeOptions::default() }
    }

    /// Stop at the first bad line ([`Stop::Strict`]).
    pub fn strict(mut self, strict: bool) -> Self {
        self.strict = strict;
        self
    }

    /// The longest line read, in bytes.
    pub fn max_line_bytes(mut self, bytes: usize) -> Self {
        self.max_line_bytes = bytes;
        self
    }

    /// How the target is written.
    pub fn encode(mut self, encode: EncodeOptions) -> Self {
        self.encode = encode;
        self
    }
}

/// How the translation of one stream ended.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Summary {
    pub report: Report,
    /// The source dialect, given or detected (`None`: it could not be told).
    pub source: Option<Dialect>,
    /// Why the stream was not read to its end: a fatal line, `--strict`, undetectable input.
    pub stopped: Option<Stop>,
    /// The run's outcome, as its terminal record says.
    pub outcome: Option<crate::model::Outcome>,
    /// Whether the input had its own terminal record (else agentgate made one).
    pub terminal_in_stream: bool,
}

/// Translates one stream (one run). Diagnostics go to `diag` as they happen. Only a failure to
/// write the output is an `Err`.
pub fn translate<R: Input, W: Write>(
    input: R,
    output: &mut W,
    opts: &Options,
    diag: &mut dyn FnMut(Diagnostic),
) -> io::Result<Summary> {
    translate_with(input, output, opts, opts.to.encoder(&opts.encode), diag)
}

/// Asked at the end of input, when the stream had no terminal record of its own: how the run
/// ended, as something outside the stream knows it (the agent's exit status, say).
pub type EndHook<'a> = &'a mut dyn FnMut() -> Option<crate::model::Terminal>;

/// Translates one stream into whatever `encoder` makes of it (a dialect's encoder, or one that
/// only gathers figures, as `summary` does): the same decoders, ledger and terminal handling.
pub fn translate_with<R: Input, W: Write>(
    input: R,
    output: &mut W,
    opts: &Options,
    encoder: Box<dyn Encode>,
    diag: &mut dyn FnMut(Diagnostic),
) -> io::Result<Summary> {
    translate_ending(input, output, opts, encoder, diag, &mut || None)
}

/// [`translate_with`], with `end` to say how the run ended when the stream does not.
pub fn translate_ending<R: Input, W: Write>(
    input: R,
    output: &mut W,
    opts: &Options,
    encoder: Box<dyn Encode>,
    diag: &mut dyn FnMut(Diagnostic),
    end: EndHook<'_>,
) -> io::Result<Summary> {
    let mut lines = Lines::with_digest(input, opts.max_line_bytes, encoder.hints().digest);
    let mut stopped = None;

    // With --from auto, lines are held until the dialect is known, then replayed.
    let mut held: Vec<(u64, Framed)> = Vec::new();
    let mut source = opts.from;
    let mut undetected = None;
    if source.is_none() {
        let mut detector = Detector::default();
        while source.is_none() && held.len() < DETECT_LINES {
            match lines.next_frame() {
                Ok(Some((n, frame))) => {
                    if let Frame::Text(text) = frame {
                        if let Ok(Value::Object(m)) = serde_json::from_str::<Value>(text) {
                            source = detector.feed(&m);
                        }
                    }
                    held.push((n, Framed::new(frame)));
                }
                Ok(None) => break,
                Err(e) => {
                    stopped = Some(read_failed(&e, &lines, diag));
                    break;
                }
            }
        }
        if source.is_none() {
            source = match detector.finish() {
                Ok(d) => Some(d),
                // Nothing but blank lines: any decoder reads that.
                Err(_) if held.iter().all(|(_, f)| matches!(f.frame(), Frame::Blank)) => Some(opts.to),
                Err(why) => {
                    undetected = Some(why);
                    None
                }
            };
        }
    }

    let mut run = Run::new(opts, source, encoder, output);
    for (n, f) in &held {
        if stopped.is_none() {
            // Undecided, the lines still go through (there is no decoder to read them), so
            // that each one that is bad is named, as it would be in a stream of a known dialect.
            let stop = run.line(*n, Held::new(f.frame()), &lines, diag);
            if undetected.is_none() {
                stopped = stop;
            }
        }
    }
    if let Some(why) = undetected {
        diag(Diagnostic { line: 0, message: format!("cannot tell the input's dialect: {why}") });
        stopped = Some(Stop::Undetected(why));
    }
    run.flush(lines.would_wait())?;
    // With --from, the first lines are still looked at: a stream that plainly is another
    // dialect's is said to be (once), and read as told.
    let mut check = opts.from.filter(|d| *d != Dialect::Canonical).map(|d| (d, Detector::default()));
    while stopped.is_none() {
        match lines.advance() {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                stopped = Some(read_failed(&e, &lines, diag));
                break;
            }
        }
        if let Some((from, detector)) = &mut check {
            if let (Frame::Text(text), true) = (lines.frame(), lines.number() <= DETECT_LINES as u64) {
                if let Ok(Value::Object(m)) = serde_json::from_str::<Value>(text) {
                    if let Some(seen) = detector.feed(&m) {
                        if seen != *from && from.sniff(&m) == Sniff::No {
                            let message =
                                format!("warning: this line is {} {seen} record, not {from}; reading the stream as {from}, as --from says", crate::report::a(seen.name()));
                            diag(Diagnostic { line: lines.number(), message });
                        }
                        check = None;
                    }
                }
            } else if lines.number() > DETECT_LINES as u64 {
                check = None;
            }
        }
        // The line is borrowed from the reader's buffer, which is asked for its digest too.
        stopped = run.line(lines.number(), Held::new(lines.frame()), &lines, diag);
        if run.whole_digest && !run.encoder.needs_whole_digest(run.norm.context()) {
            run.whole_digest = false;
        }
        if !run.whole_digest && !run.norm.context().input_digest.is_empty() {
            // What the target derives from the input was derived at the first record.
            lines.stop_hashing();
        }
        run.flush(lines.would_wait())?;
    }

    let why = stopped.as_ref().map(Stop::to_string);
    let terminal_in_stream = run.norm.terminal_done();
    run.finish(why, &lines, diag, end);
    run.flush(true)?;
    let outcome = run.norm.outcome();
    Ok(Summary { report: run.report, source, stopped, outcome, terminal_in_stream })
}

/// An input that failed to read: said on its next line, and the run stops for it.
fn read_failed<R: Input>(e: &io::Error, lines: &Lines<R>, diag: &mut dyn FnMut(Diagnostic)) -> Stop {
    diag(Diagnostic { line: lines.number() + 1, message: format!("cannot read the input: {e}") });
    Stop::Read(e.to_string())
}

/// The state of one translation between lines.
struct Run<'o, W> {
    opts: &'o Options,
    output: &'o mut W,
    decoder: Option<Box<dyn Decode>>,
    encoder: Box<dyn Encode>,
    norm: Normalizer,
    decoded: Decoded,
    out: Vec<u8>,
    report: Report,
    /// The encoder uses the digest of the whole input, not only of the lines before the first
    /// record.
    whole_digest: bool,
    /// Members of source lines the target cannot carry, counted here by the kind of record and
    /// the [shape](crate::model::Extra::shape) of its extra members, and added to the report
    /// at the end by name: a stream has a few such sets, met on every line, and a short list
    /// finds them faster than reading the names of each record's members.
    dropped_fields: Vec<DroppedSet>,
    /// The first error writing the output from inside an encoder's line ([`Sink::spill`]),
    /// returned at the next flush.
    write_failed: Option<io::Error>,
}

/// The extra members of records of one kind, all with the same keys, that a target dropped.
struct DroppedSet {
    kind: &'static str,
    shape: u64,
    keys: Vec<String>,
    count: u64,
}

/// Most sets [`Run::dropped_fields`] holds; past them, straight into the report.
const DROPPED_FIELDS_HELD: usize = 32;

impl<'o, W: Write> Run<'o, W> {
    fn new(opts: &'o Options, source: Option<Dialect>, encoder: Box<dyn Encode>, output: &'o mut W) -> Self {
        let mut norm = Normalizer::new(source.unwrap_or(opts.to), opts.to, encoder.hints());
        let whole_digest = encoder.needs_whole_digest(norm.context());
        let copies = source == Some(opts.to) && verbatim_allowed() && encoder.hints().copies_own_lines;
        norm.set_copying(copies);
        Run {
            opts,
            output,
            decoder: source.map(Dialect::decoder),
            encoder,
            norm,
            decoded: Decoded {
                hints: DecodeHints {
                    verbatim_wanted: copies,
                    carry_lines: opts.to == Dialect::Canonical,
                    // A record's extra members are only named in the report when its dialect is
                    // not the target's and the target is not canonical (canonical records carry
                    // their own origin, so a canonical source is never named).
                    named_shapes: (opts.to != Dialect::Canonical
                        && source.is_some_and(|s| s != opts.to && s != Dialect::Canonical)
                        && named_allowed())
                    .then(Vec::new),
                },
                ..Decoded::default()
            },
            out: Vec::with_capacity(OUT_BLOCK * 2),
            report: Report::default(),
            whole_digest,
            dropped_fields: Vec::new(),
            write_failed: None,
        }
    }

    /// Translates one line; `Some` when the stream must stop here.
    fn line<R: Input>(
        &mut self,
        n: u64,
        h: Held<'_>,
        lines: &Lines<R>,
        diag: &mut dyn FnMut(Diagnostic),
    ) -> Option<Stop> {
        self.report.lines += 1;
        let bad = |report: &mut Report, diag: &mut dyn FnMut(Diagnostic), message: String| {
            report.bad += 1;
            let d = Diagnostic { line: n, message };
            diag(d.clone());
            d
        };
        let mended: String;
        let (m, line) = match h {
            Held::Blank => {
                self.report.blank += 1;
                return None;
            }
            Held::Bad(message) => {
                let d = bad(&mut self.report, diag, message);
                return self.opts.strict.then_some(Stop::Strict(d));
            }
            Held::Object(m, text) => (m, text),
            Held::Mended(text, at) => {
                // A cut or corrupted character need not cost the whole line (jq mends it the
                // same way): read with U+FFFD in its place, and said so.
                let message = format!("not valid UTF-8 (bad byte at offset {at})");
                if self.opts.strict {
                    return Some(Stop::Strict(bad(&mut self.report, diag, message)));
                }
                mended = text;
                match parse_object(&mended) {
                    Ok(m) => {
                        self.report.mended += 1;
                        diag(Diagnostic { line: n, message: format!("{message}; read with U+FFFD in its place") });
                        (m, mended.as_str())
                    }
                    Err(why) => {
                        bad(&mut self.report, diag, format!("{message}, and {why}"));
                        return None;
                    }
                }
            }
        };
        let Some(decoder) = self.decoder.as_mut() else {
            self.report.dropped += 1;
            return None;
        };
        self.decoded.clear();
        self.decoded.line_len = line.len();
        if let Err(e) = decoder.decode(m, &mut self.decoded) {
            let d = bad(&mut self.report, diag, e.message);
            return if e.fatal { Some(Stop::Fatal(d)) } else { self.opts.strict.then_some(Stop::Strict(d)) };
        }
        if let Some(message) = self.foreign() {
            let d = bad(&mut self.report, diag, message);
            return self.opts.strict.then_some(Stop::Strict(d));
        }
        for message in self.decoded.warnings.drain(..) {
            diag(Diagnostic { line: n, message });
        }
        let (output, failed) = (&mut *self.output, &mut self.write_failed);
        let mut drain = |out: &mut Vec<u8>| drain(output, out, failed);
        let mut sink = Sink { out: &mut self.out, report: &mut self.report, drain: Some(&mut drain), line };
        let mut fate: Option<Fate> = self.decoded.folded.then_some(Fate::Absorbed);
        let first = sink.report.translated + sink.report.passed_through + sink.report.dropped == 0;
        let mut stated_whole = self.decoded.whole_input.take();
        for rec in self.decoded.records.drain(..) {
            if matches!(rec.event, Event::Extension { .. })
                && rec.origin != self.opts.to
                && self.opts.to != Dialect::Canonical
                && !rec.extra.is_empty()
                && !rec.extra.is_named()
                && rec.extra.contains_key(crate::codec::CARRIED_LINE)
            {
                // A line carried through canonical for its own dialect alone (base-context's).
                fate = fate.max(Some(Fate::Absorbed));
                continue;
            }
            if first {
                // Ids derived from the input: at the first record (from the digest a canonical
                // source states for its own source, where it states one), and for the terminal.
                match self.decoded.input_digest.clone() {
                    Some(stated) => self.norm.set_stated_input_digest(stated),
                    None => self.norm.set_input_digest(lines.digest()),
                }
            }
            if matches!(rec.event, Event::Terminal(_)) {
                let kind = self.whole_digest.then(|| self.encoder.hints().digest);
                Self::whole_input(&mut self.norm, &mut stated_whole, kind, lines);
            }
            if rec.origin != self.opts.to && self.opts.to != Dialect::Canonical && !rec.extra.is_empty() {
                let (kind, shape) = (rec.event.kind(), rec.extra.shape());
                let room = self.dropped_fields.len() < DROPPED_FIELDS_HELD;
                match self.dropped_fields.iter_mut().find(|d| d.shape == shape && d.kind == kind) {
                    Some(set) => set.count += 1,
                    None => {
                        // Kept as its shape alone, the record's keys are those of a set held
                        // for another kind (the decoder was told of shapes held, no other).
                        let keys: Vec<String> = if rec.extra.is_named() {
                            let held = self.dropped_fields.iter().find(|d| d.shape == shape);
                            held.map(|d| d.keys.clone()).unwrap_or_default()
                        } else {
                            // A line carried through canonical for its own dialect holds what
                            // the record holds: not a member of the source's lost.
                            let carried = match self.norm.context().source {
                                Some(Dialect::Canonical) => rec.origin.carried_line_members(),
                                _ => &[],
                            };
                            let lost = |k: &Cow<'_, str>| !carried.contains(&k.as_ref());
                            rec.extra.keys().filter(lost).map(Cow::into_owned).collect()
                        };
                        if room {
                            if let Some(shapes) = &mut self.decoded.hints.named_shapes {
                                if !shapes.contains(&shape) {
                                    shapes.push(shape);
                                }
                            }
                            self.dropped_fields.push(DroppedSet { kind, shape, keys, count: 1 });
                        } else {
                            keys.iter().for_each(|k| sink.report.dropped_field(kind, k));
                        }
                    }
                }
            }
            fate = fate.max(Some(self.norm.process(rec, &mut Encoding::new(self.encoder.as_mut(), &mut sink))));
        }
        self.report.line(fate);
        for message in self.norm.take_diagnostics() {
            diag(Diagnostic { line: n, message });
        }
        None
    }

    /// Before a terminal record: the whole input's digest, for a target that derives from it
    /// (as the canonical source stated it for its own source, where it did, so that a second
    /// step derives what a direct translation would), and both kinds for canonical output.
    fn whole_input<R: Input>(
        norm: &mut Normalizer,
        stated: &mut Option<WholeDigests>,
        whole: Option<DigestKind>,
        lines: &Lines<R>,
    ) {
        if let Some(stated) = stated.take() {
            if let Some(kind) = whole {
                norm.set_input_digest(stated.of_kind(kind).to_string());
            }
            norm.set_whole_input(stated, true);
        } else if whole.is_some() && !norm.context().whole_input_stated {
            let (digest, xxh3) = lines.digests();
            if let Some(xxh3) = xxh3 {
                norm.set_whole_input(WholeDigests { sha256: digest.clone(), xxh3 }, false);
            }
            norm.set_input_digest(digest);
        }
    }

    /// A line the source dialect does not know but another dialect claims is not an unknown
    /// event of the source: it does not belong in this stream.
    fn foreign(&self) -> Option<String> {
        let source = self.norm.context().source?;
        let [rec] = self.decoded.records.as_slice() else { return None };
        let Event::Extension { line: Value::Object(line) } = &rec.event else { return None };
        if rec.origin != source {
            return None;
        }
        let kind = line.get("type").and_then(Value::as_str).unwrap_or("");
        if source.contract().kinds.contains_key(kind) {
            return None;
        }
        let other = Dialect::all().find(|d| *d != source && d.sniff(line) == Sniff::Yes)?;
        let other = other.name();
        Some(format!("\"{kind}\" is {} {other} record, not {source}; skipped", crate::report::a(other)))
    }

    /// Ends the run with its terminal record: the one the decoder makes of what it read
    /// (where its dialect has none in-stream), else one the normalizer makes.
    fn finish<R: Input>(
        &mut self,
        why: Option<String>,
        lines: &Lines<R>,
        diag: &mut dyn FnMut(Diagnostic),
        end: EndHook<'_>,
    ) {
        if self.norm.context().input_digest.is_empty() {
            self.norm.set_input_digest(lines.digest());
        }
        let kind = self.whole_digest.then(|| self.encoder.hints().digest);
        Self::whole_input(&mut self.norm, &mut self.decoded.whole_input, kind, lines);
        for set in self.dropped_fields.drain(..) {
            for key in &set.keys {
                self.report.dropped_fields_n(set.kind, key, set.count);
            }
        }
        let (output, failed) = (&mut *self.output, &mut self.write_failed);
        let mut drain = |out: &mut Vec<u8>| drain(output, out, failed);
        let mut sink = Sink { out: &mut self.out, report: &mut self.report, drain: Some(&mut drain), line: "" };
        let mut encoding = Encoding::new(self.encoder.as_mut(), &mut sink);
        if let (None, Some(decoder)) = (&why, self.decoder.as_mut()) {
            self.decoded.clear();
            decoder.finish(&mut self.decoded);
            for message in self.decoded.warnings.drain(..) {
                diag(Diagnostic { line: 0, message });
            }
            for rec in self.decoded.records.drain(..) {
                self.norm.process(rec, &mut encoding);
            }
        }
        if !self.norm.terminal_done() {
            if let Some(mut t) = end() {
                t.synthesized = true;
                encoding.report().synthesized("terminal");
                let origin = self.norm.context().source.unwrap_or(Dialect::Canonical);
                self.norm.process(crate::codec::Record::new(origin, Event::Terminal(t)), &mut encoding);
            }
        }
        self.norm.finish(why, &mut encoding);
        for message in self.norm.take_diagnostics() {
            diag(Diagnostic { line: 0, message });
        }
    }

    /// Writes the output out when the next read may wait (`now`) or a block is full.
    fn flush(&mut self, now: bool) -> io::Result<()> {
        if let Some(e) = self.write_failed.take() {
            return Err(e);
        }
        if now || self.out.len() >= OUT_BLOCK {
            self.output.write_all(&self.out)?;
            self.out.clear();
            if now {
                self.output.flush()?;
            }
        }
        Ok(())
    }
}

// Economies the tests turn off, one at a time, to compare a run with and without them.
#[cfg(test)]
thread_local! {
    pub(crate) static VERBATIM: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
    pub(crate) static NAMED: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

/// Whether a decoder may mark records to be written back as read.
fn verbatim_allowed() -> bool {
    #[cfg(test)]
    return VERBATIM.get();
    #[cfg(not(test))]
    true
}

/// Whether a decoder may keep a record's extra members as their shape alone.
fn named_allowed() -> bool {
    #[cfg(test)]
    return NAMED.get();
    #[cfg(not(test))]
    true
}

/// Writes `out` to `output` and empties it, for [`Sink::spill`]; a failure is kept in `failed`
/// (the first one) for the run's next flush to return, and what follows is dropped.
fn drain<W: Write>(output: &mut W, out: &mut Vec<u8>, failed: &mut Option<io::Error>) {
    if failed.is_none() {
        if let Err(e) = output.write_all(out) {
            *failed = Some(e);
        }
    }
    out.clear();
}

/// A framed line held while the dialect is detected: its frame, its text owned.
enum Framed {
    Text(String),
    NotUtf8(usize, Vec<u8>),
    Other(Frame<'static>),
}

impl Framed {
    fn new(f: Frame<'_>) -> Self {
        match f {
            Frame::Text(s) => Framed::Text(s.to_string()),
            Frame::Blank => Framed::Other(Frame::Blank),
            Frame::TooLong(n) => Framed::Other(Frame::TooLong(n)),
            Frame::NotUtf8(at, bytes) => Framed::NotUtf8(at, bytes.to_vec()),
        }
    }

    fn frame(&self) -> Frame<'_> {
        match self {
            Framed::Text(s) => Frame::Text(s),
            Framed::NotUtf8(at, bytes) => Frame::NotUtf8(*at, bytes),
            Framed::Other(f) => *f,
        }
    }
}

/// A framed line, parsed as far as framing and JSON go.
enum Held<'a> {
    Blank,
    /// The line's members, and its text.
    Object(Object<'a>, &'a str),
    /// A line that was not valid UTF-8, its bad bytes replaced by U+FFFD; where the first was.
    Mended(String, usize),
    Bad(String),
}

impl<'a> Held<'a> {
    fn new(frame: Frame<'a>) -> Self {
        match frame {
            Frame::Text(text) => Held::parse(text),
            Frame::Blank => Held::Blank,
            Frame::TooLong(n) => {
                Held::Bad(format!("line is {n} bytes, longer than the limit; skipped (see --max-line-bytes)"))
            }
            Frame::NotUtf8(at, bytes) => Held::Mended(String::from_utf8_lossy(bytes).into_owned(), at),
        }
    }

    fn parse(text: &'a str) -> Self {
        parse_object(text).map_or_else(Held::Bad, |m| Held::Object(m, text))
    }
}

/// A line's text as an object, or what it is instead.
fn parse_object(text: &str) -> Result<Object<'_>, String> {
    match Object::parse(text) {
        Ok(Ok(m)) => Ok(m),
        Ok(Err(NotObject(kind))) => Err(format!("JSON {kind}, not an object")),
        Err(e) => Err(not_json(&e)),
    }
}

/// serde_json's reason for a line that does not parse, its place given once: the line is the
/// diagnostic's, so only the column is said ("not JSON at column 14: key must be a string",
/// not "... at line 1 column 14").
fn not_json(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let place = format!(" at line {} column {}", e.line(), e.column());
    match text.strip_suffix(&place) {
        Some(why) if e.column() > 0 => format!("not JSON at column {}: {why}", e.column()),
        Some(why) => format!("not JSON: {why}"),
        None => format!("not JSON: {text}"),
    }
}

/// Translates a whole stream held in memory; for tests, benchmarks and small inputs.
pub fn translate_bytes(input: &[u8], opts: &Options) -> (Vec<u8>, Summary, Vec<Diagnostic>) {
    let mut out = Vec::new();
    let mut diags = Vec::new();
    let summary = translate(input, &mut out, opts, &mut |d| diags.push(d)).expect("writing to memory cannot fail");
    (out, summary, diags)
}

/// Translates a whole stream held in a string: the target's lines, or why the stream was not
/// translated to its end (its dialect could not be told, a line refused the stream, or the
/// first bad line under [`Options::strict`]). Bad lines otherwise are skipped, as the command
/// line skips them; [`translate_bytes`] gives their diagnostics.
///
/// ```
/// use agentgate::{translate_str, Dialect, Options};
///
/// let localcode = r#"{"type": "result", "status": "ok", "exit_code": 0, "reason": "completed", "final_text": "Done.", "tokens": {"prompt": 3, "completion": 1, "total": 4}}"#;
/// let adal = translate_str(localcode, &Options::new(None, Dialect::Adal)).unwrap();
/// let lines: Vec<&str> = adal.lines().collect();
/// assert_eq!(lines[0], r#"{"type":"answer","content":"Done."}"#);
/// assert!(lines[1].starts_with(r#"{"type":"complete","exit_code":0,"session_id":"#));
///
/// let unknown = translate_str("{\"hello\":1}", &Options::new(None, Dialect::Adal));
/// assert!(matches!(unknown, Err(agentgate::Error::Stopped(agentgate::Stop::Undetected(_)))));
/// ```
pub fn translate_str(input: &str, opts: &Options) -> Result<String, Error> {
    let (out, summary, _) = translate_bytes(input.as_bytes(), opts);
    match summary.stopped {
        Some(stop) => Err(Error::Stopped(stop)),
        // Encoders write UTF-8 only (input that was not is mended first).
        None => Ok(String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())),
    }
}

/// Tells the dialect of a stream from its first lines (at most [`DETECT_LINES`]).
pub fn detect<R: Input>(input: R) -> Result<Dialect, String> {
    let mut lines = Lines::new(input, DEFAULT_MAX_LINE_BYTES);
    // Nothing here is derived from the input's digest.
    lines.stop_hashing();
    let mut detector = Detector::default();
    let mut seen = 0;
    while seen < DETECT_LINES {
        let frame = lines.next_frame().map_err(|e| format!("cannot read the input: {e}"))?;
        let Some((_, frame)) = frame else { break };
        if let Frame::Text(text) = frame {
            if let Ok(Value::Object(m)) = serde_json::from_str::<Value>(text) {
                seen += 1;
                if let Some(d) = detector.feed(&m) {
                    return Ok(d);
                }
            }
        }
    }
    detector.finish()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::codec::SPILL_BLOCK;

    fn translated(input: &str, to: Dialect) -> String {
        let (out, _, diags) = translate_bytes(input.as_bytes(), &Options::new(Some(Dialect::Localcode), to));
        assert!(diags.is_empty(), "{diags:?}");
        String::from_utf8(out).unwrap()
    }

    fn first_line(out: &str) -> &str {
        out.lines().find(|l| l.contains("thread_started") || l.contains("\"session\"")).unwrap()
    }

    #[test]
    fn ids_made_at_the_start_derive_from_the_input_up_to_the_first_record_and_adal_ids_from_all_of_it() {
        let head = "{\"type\": \"stage\", \"stage\": \"planning\"}\n";
        let a = format!("{head}{{\"type\": \"notice\", \"text\": \"a\"}}\n");
        let b = format!("{head}{{\"type\": \"notice\", \"text\": \"b\"}}\n");
        for to in [Dialect::Wuu, Dialect::BaseContext] {
            // The header goes out before the rest of the run is read: only what came before it
            // can seed its id, so runs that begin alike share it.
            assert_eq!(first_line(&translated(&a, to)), first_line(&translated(&b, to)), "{to}");
            let other_start = a.replace("planning", "editing");
            assert_ne!(first_line(&translated(&a, to)), first_line(&translated(&other_start, to)), "{to}");
        }
        // adal's complete comes last: its derived session id covers the whole input.
        let id = |out: String| out.lines().last().unwrap().to_string();
        assert_ne!(id(translated(&a, Dialect::Adal)), id(translated(&b, Dialect::Adal)));
        assert_eq!(id(translated(&a, Dialect::Adal)), id(translated(&a, Dialect::Adal)));
    }

    /// A writer that refuses its first large write, once, and takes the rest.
    #[derive(Default)]
    struct FailsOnce {
        failed: bool,
        written: usize,
    }

    impl Write for FailsOnce {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if !self.failed && buf.len() >= SPILL_BLOCK / 2 {
                self.failed = true;
                return Err(io::Error::other("disk full"));
            }
            self.written += buf.len();
            Ok(buf.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_long_line_written_out_in_parts_that_fails_to_write_fails_the_run() {
        // adal calls gathered into loom's Session line, which goes out a block at a time: the
        // first block it writes out is refused, the writes after it are taken, and the run
        // says so rather than end as if the line were whole.
        let input: String = (1..=5_000)
            .map(|i| format!("{{\"type\":\"tool_call\",\"id\":\"c{i}\",\"name\":\"bash\",\"args\":{{}}}}\n"))
            .collect();
        let mut out = FailsOnce::default();
        let result =
            translate(input.as_bytes(), &mut out, &Options::new(Some(Dialect::Adal), Dialect::Loom), &mut |_| {});
        assert!(out.failed, "the line went out in one write");
        assert_eq!(result.map(|_| ()).map_err(|e| e.to_string()), Err("disk full".to_string()));
        // Whole, the same run is written without error.
        assert!(translate(
            input.as_bytes(),
            &mut Vec::new(),
            &Options::new(Some(Dialect::Adal), Dialect::Loom),
            &mut |_| {}
        )
        .is_ok());
    }

    /// A value as loom writes it (most of the time), or one of the ways a line may hold it
    /// otherwise.
    fn either(usual: &[&'static str], odd: &[&'static str]) -> impl Strategy<Value = &'static str> {
        (prop::bool::weighted(0.75), prop::sample::select(usual.to_vec()), prop::sample::select(odd.to_vec()))
            .prop_map(|(usual, a, b)| if usual { a } else { b })
    }

    /// A loom line of a kind loom writes most (`Turn`, `ToolCall`, `Usage`), each member's
    /// value as loom writes it or not (a count as a string, negative, fractional or too large;
    /// escapes loom would not write; a nested object out of key order; a null), a field now
    /// and then absent, the keys in order or not, compact or spaced, a key twice.
    fn loom_line() -> impl Strategy<Value = String> {
        let string = || {
            either(
                &["\"ToolCalls\"", "\"Classification\"", "\"a\\\"b\"", "\"<&>\"", "\"\"", "\"é\""],
                &["\"\\u00e9\"", "\"\\u003c\"", "\"\\/\"", "5", "null", "true"],
            )
        };
        let count = || either(&["3", "0", "120"], &["\"3\"", "-1", "3.5", "1e3", "null", "18446744073709551615"]);
        let field = |v: BoxedStrategy<&'static str>, p: f64| prop::option::weighted(p, v);
        let extra =
            either(&["\"x\"", "null", "true", "7", "[]"], &["{\"b\":1,\"a\":2}", "[1, 2]", "1.5", "\"\\u003c\""]);
        (
            prop::sample::select(vec!["Turn", "ToolCall", "Usage"]),
            either(&["1"], &["\"1\""]),
            prop::collection::vec(field(string().boxed(), 0.95), 4),
            prop::collection::vec(field(count().boxed(), 0.95), 6),
            field(either(&["true", "false"], &["\"true\"", "null", "1"]).boxed(), 0.95),
            prop::collection::vec((prop::sample::select(vec!["zeta", "alpha", "kind2", "p"]), extra), 0..3),
            (prop::bool::weighted(0.25), prop::bool::weighted(0.25), prop::bool::weighted(0.1)),
        )
            .prop_map(|(kind, version, strings, counts, final_usage, extras, (shuffle, spaced, twice))| {
                let mut members: Vec<(&str, &str)> = Vec::new();
                let mut put = |key: &'static str, v: Option<&'static str>| {
                    if let Some(v) = v {
                        if !members.iter().any(|(k, _)| *k == key) {
                            members.push((key, v));
                        }
                    }
                };
                put(
                    "kind",
                    Some(match kind {
                        "Turn" => "\"Turn\"",
                        "ToolCall" => "\"ToolCall\"",
                        _ => "\"Usage\"",
                    }),
                );
                put("schema_version", Some(version));
                put("turn", counts[0]);
                match kind {
                    "Turn" => {
                        put("phase", strings[0]);
                        put("model", strings[1]);
                        put("turn_stop", strings[2]);
                    }
                    "ToolCall" => {
                        put("arguments", strings[0].map(|s| if s == "\"\"" { "\"{\\\"a\\\":1}\"" } else { s }));
                        put("call_id", strings[1]);
                        put("name", strings[2]);
                    }
                    _ => {
                        put("model", strings[3]);
                        put("final_usage", final_usage);
                        let keys = [
                            "input_tokens",
                            "output_tokens",
                            "cached_input_tokens",
                            "cache_creation_input_tokens",
                            "reasoning_output_tokens",
                        ];
                        for (key, n) in keys.into_iter().zip(&counts[1..]) {
                            put(key, *n);
                        }
                    }
                }
                for (k, v) in extras {
                    put(k, Some(v));
                }
                if shuffle {
                    members.reverse();
                } else {
                    members.sort();
                }
                if twice {
                    members.push(members[0]);
                }
                let (comma, colon) = if spaced { (", ", ": ") } else { (",", ":") };
                let body: Vec<String> = members.iter().map(|(k, v)| format!("\"{k}\"{colon}{v}")).collect();
                format!("{{{}}}", body.join(comma))
            })
    }

    /// Translated with a record's extra members kept as their shape where the report holds
    /// its keys, or always copied.
    fn with_named(input: &str, from: Dialect, to: Dialect, named: bool) -> (String, Report, Vec<Diagnostic>) {
        NAMED.set(named);
        let (out, summary, diags) = translate_bytes(input.as_bytes(), &Options::new(Some(from), to));
        NAMED.set(true);
        (String::from_utf8(out).unwrap(), summary.report, diags)
    }

    proptest! {
        /// Members kept as their shape change nothing a run writes or reports, whatever sets of
        /// members the lines carry, of whichever kinds, however many (more than the run holds
        /// as sets too), in debug builds where asking a shape for its members fails.
        #[test]
        fn extra_members_kept_as_their_shape_are_reported_as_when_copied(
            lines in prop::collection::vec(
                (prop::sample::select(vec!["content", "thinking_chunk", "notice"]), prop::collection::vec(0usize..6, 0..4), 0usize..40),
                1..120,
            ),
            to in prop::sample::select(vec![Dialect::Adal, Dialect::Wuu, Dialect::Loom, Dialect::BaseContext]),
        ) {
            let mut input = String::new();
            for (kind, keys, wide) in &lines {
                let field = if *kind == "content" || *kind == "thinking_chunk" { "chunk" } else { "text" };
                input.push_str(&format!("{{\"type\": \"{kind}\", \"{field}\": \"x\""));
                // A few keys shared by many lines, and a key of forty that makes the sets many.
                for k in keys {
                    input.push_str(&format!(", \"k{k}\": {k}"));
                }
                if *wide % 3 == 0 {
                    input.push_str(&format!(", \"w{wide}\": true"));
                }
                input.push_str("}\n");
            }
            let named = with_named(&input, Dialect::Localcode, to, true);
            let copied = with_named(&input, Dialect::Localcode, to, false);
            prop_assert_eq!(&named.0, &copied.0);
            prop_assert_eq!(&named.1, &copied.1);
            prop_assert_eq!(&named.2, &copied.2);
            // The members were there to report.
            let members: usize = lines.iter().map(|(_, keys, wide)| keys.iter().collect::<std::collections::BTreeSet<_>>().len() + usize::from(*wide % 3 == 0)).sum();
            prop_assert_eq!(named.1.dropped_fields.values().sum::<u64>(), members as u64);
        }
    }

    /// Which records of `line`, decoded for a run into its own dialect, are marked to be copied.
    fn copy_marks(dialect: Dialect, line: &str) -> Vec<bool> {
        let m = Object::parse(line).unwrap().unwrap();
        let mut out = Decoded {
            hints: DecodeHints { verbatim_wanted: true, ..DecodeHints::default() },
            line_len: line.len(),
            ..Decoded::default()
        };
        dialect.decoder().decode(m, &mut out).unwrap();
        out.records.iter().map(|r| r.verbatim).collect()
    }

    /// `input` translated from `dialect` to itself, with the copy of lines the decoder vouches
    /// for or without: the same bytes and diagnostics either way, or what differs.
    fn copy_changes_nothing(dialect: Dialect, input: &str) -> Result<(), TestCaseError> {
        let run = |verbatim: bool| {
            VERBATIM.set(verbatim);
            let (out, _, diags) = translate_bytes(input.as_bytes(), &Options::new(Some(dialect), dialect));
            VERBATIM.set(true);
            (String::from_utf8(out).unwrap(), diags)
        };
        let ((copied, copied_diags), (written, written_diags)) = (run(true), run(false));
        prop_assert_eq!(copied, written, "{}", input);
        prop_assert_eq!(copied_diags, written_diags);
        Ok(())
    }

    proptest! {
        // Many cases: a line is copied only when every one of its members is as loom writes
        // it, and the lines that are nearly so are the ones that tell.
        #![proptest_config(ProptestConfig::with_cases(2048))]

        /// A loom line copied to the output as it was read is the line the encoder would have
        /// written for it, for any line: the copy is only an economy.
        #[test]
        fn a_loom_line_copied_as_read_is_the_line_the_encoder_writes(lines in prop::collection::vec(loom_line(), 1..5)) {
            copy_changes_nothing(Dialect::Loom, &(lines.join("\n") + "\n"))?;
        }
    }

    /// A wuu line of a kind its encoder may copy as read, each member's value as wuu writes it
    /// or not (escapes Go would not write, or would: `<`; a nested value; a count as a string),
    /// the ids the run's or others, a member absent now and then, keys in order or not, compact
    /// or spaced.
    fn wuu_line() -> impl Strategy<Value = String> {
        let string = || {
            either(
                &["\"a\"", "\"\"", "\"é\"", "\"x\\ny\"", "\"\\u003c\""],
                &["\"<&>\"", "\"\\u00e9\"", "\"\\/\"", "5", "null"],
            )
        };
        let count = || either(&["3", "0", "120"], &["\"3\"", "-1", "1.5", "null"]);
        let kinds = vec![
            ("agent_message_delta", vec!["delta"], vec![]),
            ("agent_message_final", vec!["message"], vec![]),
            ("tool_output_delta", vec!["delta", "item_id"], vec![]),
            ("tool_started", vec!["arguments", "item_id", "name"], vec![]),
            (
                "usage_updated",
                vec![],
                vec!["cache_creation_tokens", "cache_read_tokens", "input_tokens", "output_tokens"],
            ),
            ("file_changed", vec!["action", "path", "tool_name"], vec!["workspace_revision"]),
            ("subagent_updated", vec!["agent_id", "status"], vec![]),
            ("provider_state", vec!["provider"], vec!["step_index"]),
            ("turn_started", vec![], vec![]),
        ];
        (
            prop::sample::select(kinds),
            prop::collection::vec(prop::option::weighted(0.9, string()), 4),
            prop::collection::vec(prop::option::weighted(0.9, count()), 4),
            either(&["\"thread-1\""], &["\"thread-2\"", "\"\""]),
            either(&["\"turn-1\""], &["\"turn-2\"", "7"]),
            prop::option::weighted(
                0.2,
                (
                    prop::sample::select(vec!["zeta", "alpha", "nested"]),
                    either(&["1", "\"v\""], &["{\"b\":1,\"a\":2}", "[1, 2]"]),
                ),
            ),
            // No call named bash: copied, a bash call's command_* twins are the source's own
            // lines (none here), written, the encoder adds them (wuu.rs holds the copied twins).
            (prop::bool::weighted(0.2), prop::bool::weighted(0.2), Just(false)),
        )
            .prop_map(
                |((kind, strings, counts), svals, cvals, thread, turn, extra, (shuffle, spaced, bash))| {
                    let mut members: Vec<(&str, &str)> = Vec::new();
                    for (k, v) in strings.iter().zip(&svals) {
                        let v = if *k == "name" && bash { Some("\"bash\"") } else { *v };
                        if let Some(v) = v {
                            members.push((k, v));
                        }
                    }
                    for (k, v) in counts.iter().zip(&cvals) {
                        if let Some(v) = v {
                            members.push((k, v));
                        }
                    }
                    if kind != "subagent_updated" && kind != "provider_state" {
                        members.push(("thread_id", thread));
                        members.push(("turn_id", turn));
                    }
                    if let Some((k, v)) = extra {
                        members.push((k, v));
                    }
                    members.sort();
                    members.push(("type", kind));
                    if shuffle {
                        members.reverse();
                    }
                    let sep = if spaced { ", " } else { "," };
                    let body: Vec<String> = members
                        .iter()
                        .map(|(k, v)| if *k == "type" { format!("\"type\":\"{v}\"") } else { format!("\"{k}\":{v}") })
                        .collect();
                    format!("{{{}}}", body.join(sep))
                },
            )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        /// A wuu line copied to the output as it was read is the line the encoder would have
        /// written for it, for any line in a run whose thread and turn it may or may not name.
        #[test]
        fn a_wuu_line_copied_as_read_is_the_line_the_encoder_writes(lines in prop::collection::vec(wuu_line(), 1..6)) {
            let input = format!(
                "{}\n{}\n{}\n",
                r#"{"cwd":"","model":"m","provider":"p","thread_id":"thread-1","type":"thread_started"}"#,
                r#"{"thread_id":"thread-1","turn_id":"turn-1","type":"turn_started"}"#,
                lines.join("\n"),
            );
            copy_changes_nothing(Dialect::Wuu, &input)?;
        }
    }

    #[test]
    fn wuu_lines_as_wuu_writes_them_are_copied_and_others_are_not() {
        let decode = |line: &str| copy_marks(Dialect::Wuu, line);
        let delta = r#"{"delta":"FAIL x\n","item_id":"item-2","thread_id":"thread-9f2c","turn_id":"turn-1","type":"tool_output_delta"}"#;
        assert_eq!(decode(delta), [true]);
        let usage = r#"{"cache_creation_tokens":0,"cache_read_tokens":600,"input_tokens":1000,"output_tokens":20,"thread_id":"t","turn_id":"u","type":"usage_updated"}"#;
        assert_eq!(decode(usage), [true]);
        let state = r#"{"protocol":"responses","provider":"openai","step_index":1,"transport":"https","type":"provider_state"}"#;
        assert_eq!(decode(state), [true]);
        for other in [
            delta.replace(",\"item_id", ", \"item_id"),
            delta.replace("FAIL", "<FAIL>"),
            delta.replace("FAIL", "\\u0046AIL"),
            delta.replace(",\"item_id\":\"item-2\"", ""),
            delta.replace("{\"delta", "{\"zz\":1,\"delta"),
            delta.replace("\"type\":\"tool_output_delta\"", "\"type\":\"tool_output_delta\",\"zz\":1"),
            usage.replace("\"input_tokens\":1000", "\"input_tokens\":\"1000\""),
            state.replace("\"step_index\":1", "\"step_index\":{\"a\":1}"),
        ] {
            assert_eq!(decode(&other), [false], "{other}");
        }
        // And the copies happen (of the turn's start and the usage; the delta's `<` is not as
        // Go writes it): the run comes out as it went in, copied or written.
        let run = [
            r#"{"model":"m","provider":"p","type":"session_configured","workspace_root":""}"#,
            r#"{"cwd":"","model":"m","provider":"p","thread_id":"thread-1","type":"thread_started"}"#,
            r#"{"thread_id":"thread-1","turn_id":"turn-1","type":"turn_started"}"#,
            r#"{"delta":"hi <b>","thread_id":"thread-1","turn_id":"turn-1","type":"agent_message_delta"}"#,
            r#"{"cache_creation_tokens":0,"cache_read_tokens":6,"input_tokens":10,"output_tokens":2,"thread_id":"thread-1","turn_id":"turn-1","type":"usage_updated"}"#,
        ]
        .join("\n")
            + "\n";
        let before = crate::dialect::wuu::COPIES.get();
        let (copied, _, _) = translate_bytes(run.as_bytes(), &Options::new(Some(Dialect::Wuu), Dialect::Wuu));
        assert_eq!(crate::dialect::wuu::COPIES.get() - before, 2);
        let copied = String::from_utf8(copied).unwrap();
        assert!(copied.starts_with(&run.replace("<b>", "\\u003cb\\u003e")), "{copied}");
        copy_changes_nothing(Dialect::Wuu, &run).unwrap();
    }

    #[test]
    fn loom_lines_as_loom_writes_them_are_copied_and_others_are_not() {
        let decode = |line: &str| copy_marks(Dialect::Loom, line);
        let line = r#"{"arguments":"{\"action\":\"tests.run\"}","call_id":"1-call-1","kind":"ToolCall","name":"select_action","schema_version":1,"turn":2}"#;
        assert_eq!(decode(line), [true]);
        for other in [
            line.replace(":2}", ": 2}"),
            line.replace("\"turn\":2", "\"turn\":\"2\""),
            line.replace("select_action", "select\\u005faction"),
            line.replace("{\"arguments", "{\"zz\":1,\"arguments"),
            line.replace("\"schema_version\"", "\"s\":{\"a\":1},\"schema_version\""),
        ] {
            assert_eq!(decode(&other), [false], "{other}");
        }
        let usage = r#"{"cached_input_tokens":0,"final_usage":true,"input_tokens":120,"kind":"Usage","model":"recorded","output_tokens":7,"schema_version":1,"turn":1}"#;
        assert_eq!(decode(usage), [true]);
        assert_eq!(decode(&usage.replace("\"final_usage\":true", "\"final_usage\":\"true\"")), [false]);
        assert_eq!(decode(&usage.replace("\"input_tokens\":120", "\"input_tokens\":-120")), [false]);
        let turn = r#"{"kind":"Turn","model":"recorded","phase":"Classification","schema_version":1,"turn":1,"turn_stop":"ToolCalls"}"#;
        assert_eq!(decode(turn), [true]);
        assert_eq!(decode(&turn.replace("\"schema_version\":1", "\"schema_version\":\"1\"")), [false]);
    }

    #[test]
    fn one_line_escapes_what_would_break_the_line_or_drive_a_terminal_and_keeps_the_rest() {
        // (A zero-width joiner inside an emoji is text, not a control; so is right-to-left text.)
        let plain = "tool_result: unknown variant `é 😀 👩\u{200d}💻 <&> עברית`";
        assert!(matches!(one_line(plain), Cow::Borrowed(t) if t == plain));
        assert_eq!(
            one_line("a\nb\rc\td\u{1b}[2J\u{7f}\u{85}\u{2028}\u{2029}\0é\u{202e}x\u{2066}"),
            r"a\nb\rc\td\u001b[2J\u007f\u0085\u2028\u2029\u0000é\u202ex\u2066"
        );
        let d = Diagnostic { line: 3, message: "status \u{1b}]0;title\u{7}".into() };
        assert_eq!(d.line_for("run\n.jsonl"), r"run\n.jsonl:3: status \u001b]0;title\u0007");
        assert_eq!(Diagnostic { line: 0, message: "m".into() }.line_for("f"), "f: m");
    }
}

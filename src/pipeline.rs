//! The streaming pipeline: framing → decoder → normalizer → encoder, one line at a time.
//!
//! Output is buffered and written out whenever the next line is not all buffered (the next
//! read may wait: no input is left, or only the start of a line), so a live agent's reader sees
//! each translated line at once while a file is still written in large blocks. Memory does not grow with the stream: one line, the decoder's
//! and normalizer's small state, and the output buffer.

use std::io::{self, Write};

use serde_json::Value;

use crate::codec::{
    Carried, Decode, Decoded, Dialect, Emit, Encode, EncodeOptions, Encoding, LineCopy, Record, Sink, Sniff,
    SourceLine, WholeDigests,
};
use crate::contract::NamedShapes;
use crate::dialect::Detector;
pub use crate::error::{one_line, Diagnostic, Error, Stop};
use crate::io::framing::{DigestKind, Frame, Input, Lines, DEFAULT_MAX_LINE_BYTES};
use crate::json::object::{NotObject, Object};
use crate::model::Event;
use crate::normalize::Normalizer;
use crate::passthrough::{Pass, Policy};
use crate::report::{Fate, Lost, Report};
use crate::shell::ShellNames;

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
    /// The source dialect, given or detected (`None`: it could not be told, or the input held
    /// no line to tell it from).
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
/// ended, as something outside the stream knows it (the agent's exit status, say), given the
/// dialect the stream was read as (whose contract may say what an exit status means there).
pub type EndHook<'a> = &'a mut dyn FnMut(Option<Dialect>) -> Option<crate::model::Terminal>;

/// Translates one stream into whatever `encoder` makes of it (a dialect's encoder, or one that
/// only gathers figures, as `summary` does): the same decoders, ledger and terminal handling.
pub fn translate_with<R: Input, W: Write>(
    input: R,
    output: &mut W,
    opts: &Options,
    encoder: Box<dyn Encode>,
    diag: &mut dyn FnMut(Diagnostic),
) -> io::Result<Summary> {
    translate_ending(input, output, opts, encoder, diag, &mut |_| None)
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
    let mut empty = false;
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
                // Nothing but blank lines: any decoder reads that, but the input is of no
                // dialect (an agent that printed nothing is no run of the target's).
                Err(_) if held.iter().all(|(_, f)| matches!(f.frame(), Frame::Blank)) => {
                    empty = true;
                    Some(opts.to)
                }
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
    let source = source.filter(|_| !empty);
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
    /// The source dialect, where known.
    source: Option<Dialect>,
    encoder: Box<dyn Encode>,
    norm: Normalizer,
    decoded: Decoded,
    /// Copy or encode, line by line.
    policy: Policy,
    /// What became of the last line whose records are being given: later records of the same
    /// line (canonical input gives them a line each) follow it.
    passing: Pass,
    /// The encoder reads what a record of another dialect keeps as extra members (otlp: the
    /// provider base-context names on each message): they are counted, not taken off.
    reads_extra: bool,
    /// The encoder writes a record's source line (canonical): its text is kept on the record.
    source_lines: bool,
    out: Vec<u8>,
    report: Report,
    /// The encoder uses the digest of the whole input, not only of the lines before the first
    /// record.
    whole_digest: bool,
    /// Members of source lines the target cannot carry, counted by kind and shape.
    lost: Lost,
    /// The shapes of source lines found to carry only members their spec names.
    named_shapes: NamedShapes,
    /// A line canonical carries, whose records come a canonical line each: its kind and its
    /// members no spec names, and the keys its records keep as extra members so far (counted
    /// once its last record is in: see [`Run::count_unnamed`]).
    group: Option<(String, Vec<String>)>,
    group_kept: Vec<String>,
    /// The first error writing the output from inside an encoder's line ([`Sink::spill`]),
    /// returned at the next flush.
    write_failed: Option<io::Error>,
    /// The input opened as JSON laid out over several lines, said once: its bad lines are
    /// counted, not named, until a line is an object again.
    pretty: bool,
    /// Shell calls named as the target's shell tool.
    shell: ShellNames,
}

impl<'o, W: Write> Run<'o, W> {
    fn new(opts: &'o Options, source: Option<Dialect>, encoder: Box<dyn Encode>, output: &'o mut W) -> Self {
        let norm = Normalizer::new(source.unwrap_or(opts.to), opts.to, encoder.hints());
        let whole_digest = encoder.needs_whole_digest(norm.context());
        let (reads_extra, source_lines) = (encoder.hints().reads_extra, encoder.hints().source_lines);
        Run {
            opts,
            output,
            decoder: source.map(Dialect::decoder),
            source,
            encoder,
            norm,
            decoded: Decoded::default(),
            policy: Policy::new(opts.to, &opts.encode),
            passing: Pass::Encode,
            reads_extra,
            source_lines,
            out: Vec::with_capacity(OUT_BLOCK * 2),
            report: Report::default(),
            whole_digest,
            lost: Lost::default(),
            named_shapes: NamedShapes::default(),
            group: None,
            group_kept: Vec::new(),
            write_failed: None,
            pretty: false,
            shell: ShellNames::new(opts.to),
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
        let mended: String;
        let (m, text) = match h {
            Held::Object(m, text) => (m, text),
            Held::Mended(text, at) => {
                mended = text;
                match self.mended(n, &mended, at, diag) {
                    Ok(m) => (m, mended.as_str()),
                    Err(stop) => return stop,
                }
            }
            Held::Blank => return self.blank(n, diag),
            Held::Bad(message, opening) => return self.not_an_object(n, message, opening, diag),
        };
        self.pretty = false;
        let Some(source) = self.source.filter(|_| self.decoder.is_some()) else {
            self.report.dropped += 1;
            return None;
        };
        // Asked before the decoder takes the line's members (of every line, in order).
        let pass = self.policy.pass(source, &m);
        let kind = (source == self.opts.to).then(|| m.get_str(&source.contract().type_field).map(|k| k.into_owned()));
        let unnamed = self.unnamed(source, &m, pass);
        if self.norm.terminal_done() {
            // What comes after the terminal is named in the input's words.
            self.norm.set_line_kind(m.get_str(&source.contract().type_field).map(|k| k.into_owned()));
        }
        self.decoded.clear();
        self.decoded.line_len = text.len();
        let decoder = self.decoder.as_mut().expect("checked above");
        if let Err(e) = decoder.decode(m, &mut self.decoded) {
            return self.bad(n, e.message, e.fatal, diag);
        }
        if let Some(message) = self.foreign() {
            return self.bad(n, message, false, diag);
        }
        let copied = pass == Pass::Copy;
        let pass = self.decided(n, pass, kind, diag);
        // A line of the target's own dialect read leniently is written anew after all: what
        // it holds that no spec names is counted as for any line written anew.
        let unnamed = match unnamed {
            None if copied && pass == Pass::Encode => match Object::parse(text) {
                Ok(Ok(m)) => self.unnamed(source, &m, pass),
                _ => None,
            },
            unnamed => unnamed,
        };
        if let Some((kind, members)) = unnamed {
            self.count_unnamed(&kind, members);
        }
        let carried = self.decoded.carried.take();
        let copy = self.stand_for(source, text, pass, carried.as_ref());
        self.keep_unnamed();
        if source != Dialect::Canonical {
            self.settle_unnamed();
        }
        self.records(copy, lines);
        for message in self.norm.take_diagnostics() {
            diag(Diagnostic { line: n, message });
        }
        None
    }

    /// A blank line: the specs say every line is one JSON object, so it is a bad line, named
    /// and skipped (counted as blank), and fatal under --strict.
    fn blank(&mut self, n: u64, diag: &mut dyn FnMut(Diagnostic)) -> Option<Stop> {
        self.report.blank += 1;
        let d = Diagnostic { line: n, message: "blank line".into() };
        diag(d.clone());
        self.opts.strict.then_some(Stop::Strict(d))
    }

    /// A line that is not a JSON object. A JSON document laid out over many lines
    /// (pretty-printed) is one mistake, not one per line: said once, at its first line, and its
    /// lines counted unsaid.
    fn not_an_object(
        &mut self,
        n: u64,
        message: String,
        opening: Option<char>,
        diag: &mut dyn FnMut(Diagnostic),
    ) -> Option<Stop> {
        if let (Some(open), true) = (opening, self.report.lines == self.report.blank + 1) {
            self.pretty = true;
            let fix = if open == '[' { "jq -c '.[]'" } else { "jq -c ." };
            let message = format!(
                "JSON Lines expected (one JSON object a line), and this is JSON laid out over several lines; `{fix}` makes it JSON Lines. Its lines are skipped"
            );
            return self.bad(n, message, false, diag);
        }
        if self.pretty {
            self.report.bad += 1;
            return None;
        }
        self.bad(n, message, false, diag)
    }

    /// Copy or encode, once the line is decoded: a line the decoder had to read leniently is not
    /// copied but written anew (and, to its own dialect, counted as rewritten); its warnings are
    /// said.
    fn decided(
        &mut self,
        n: u64,
        mut pass: Pass,
        kind: Option<Option<String>>,
        diag: &mut dyn FnMut(Diagnostic),
    ) -> Pass {
        if !self.decoded.warnings.is_empty() && matches!(pass, Pass::Copy | Pass::Defer) {
            pass = Pass::Encode;
        }
        if let (Pass::Encode, Some(kind)) = (pass, kind) {
            self.report.rewritten(kind.as_deref().unwrap_or("(no kind)"));
        }
        if pass == Pass::Defer {
            pass = Pass::Encode;
        }
        for message in self.decoded.warnings.drain(..) {
            diag(Diagnostic { line: n, message });
        }
        for (kind, member) in self.decoded.dropped.drain(..) {
            self.report.dropped_field(&kind, &member);
        }
        pass
    }

    /// Line `m`'s kind and its members no spec names, where the target is of another dialect
    /// (it cannot be given them), or of the same dialect and the line is written anew (`pass`:
    /// its encoder writes from the model what no record keeps; members at the line's top only,
    /// those inside its objects going with the records that write them back): counted once
    /// the line is decoded. None for a line copied.
    fn unnamed(&mut self, source: Dialect, m: &Object<'_>, pass: Pass) -> Option<(String, Vec<String>)> {
        let own = source == self.opts.to;
        if (own && pass == Pass::Copy) || self.opts.to == Dialect::Canonical || source == Dialect::Canonical {
            return None;
        }
        let c = source.contract();
        let mut found = c.unnamed_members_with(m, &mut self.named_shapes);
        if own {
            found.retain(|k| !k.contains('.'));
        }
        (!found.is_empty()).then(|| (m.get_str(&c.type_field).map(|k| k.into_owned()).unwrap_or_default(), found))
    }

    /// The members of a line that no spec names, which the decoder did not keep among its
    /// records' extra members (those are counted as the records go): into the report, once the
    /// line's last record is decoded (for a line canonical carries, at its next line's).
    fn count_unnamed(&mut self, kind: &str, members: Vec<String>) {
        self.settle_unnamed();
        self.group = Some((kind.to_string(), members));
    }

    /// What the records just decoded keep as extra members, for the line they stand for.
    fn keep_unnamed(&mut self) {
        if self.group.is_some() {
            for rec in &self.decoded.records {
                self.group_kept.extend(rec.extra.keys().map(|k| k.into_owned()));
                if rec.origin != self.opts.to {
                    continue;
                }
                // What a record holds as its source gave it (a line kept whole, a record's
                // data), an encoder of its own dialect writes back.
                match &rec.event {
                    Event::Extension { line: Value::Object(line) } => self.group_kept.extend(line.keys().cloned()),
                    Event::Compaction { data, .. }
                    | Event::Subagent { data, .. }
                    | Event::FileChange { data, .. }
                    | Event::Diagnostics { data, .. } => self.group_kept.extend(data.iter().map(|(k, _)| k.clone())),
                    _ => {}
                }
            }
        }
    }

    /// Counts the members of the last line no record kept.
    fn settle_unnamed(&mut self) {
        if let Some((kind, members)) = self.group.take() {
            for key in members {
                let top = key.split('.').next().unwrap_or(&key);
                if !self.group_kept.iter().any(|k| k == top) {
                    self.report.dropped_field(&kind, &key);
                }
            }
        }
        self.group_kept.clear();
    }

    /// A line that is not valid UTF-8, read with U+FFFD in place of its bad bytes (as jq
    /// mends it: a cut character need not cost the whole line), and said so.
    fn mended<'t>(
        &mut self,
        n: u64,
        text: &'t str,
        at: usize,
        diag: &mut dyn FnMut(Diagnostic),
    ) -> Result<Object<'t>, Option<Stop>> {
        let message = format!("not valid UTF-8 (bad byte at offset {at})");
        if self.opts.strict {
            return Err(self.bad(n, message, false, diag));
        }
        match parse_object(text) {
            Ok(m) => {
                self.report.mended += 1;
                diag(Diagnostic { line: n, message: format!("{message}; read with U+FFFD in its place") });
                Ok(m)
            }
            Err(why) => Err(self.bad(n, format!("{message}, and {why}"), false, diag)),
        }
    }

    /// A bad line: said, counted, and the end of the stream where it is fatal or `--strict`.
    fn bad(&mut self, n: u64, message: String, fatal: bool, diag: &mut dyn FnMut(Diagnostic)) -> Option<Stop> {
        self.report.bad += 1;
        let d = Diagnostic { line: n, message };
        diag(d.clone());
        if fatal {
            Some(Stop::Fatal(d))
        } else {
            self.opts.strict.then_some(Stop::Strict(d))
        }
    }

    /// The records just decoded, each told where it stands to the line it was read from, and
    /// whether that line is copied: the line itself, or for canonical input the line a record
    /// carries for its dialect (whose copy the policy is asked of now; the later records of
    /// that line follow its fate). A line that only repeats earlier ones gets a record of its
    /// own to stand for it. `None`: the records are encoded.
    fn stand_for<'t>(
        &mut self,
        source: Dialect,
        text: &'t str,
        pass: Pass,
        carried: Option<&'t Carried>,
    ) -> Option<LineCopy<'t>> {
        if self.decoded.records.is_empty() {
            self.decoded.records.push(Record::new(source, Event::Repeat));
        }
        let (text, pass) = match carried {
            Some(carried) => (carried.text.as_str(), self.carried_pass(carried)),
            None if source == Dialect::Canonical => {
                if !self.decoded.records.iter().all(|r| r.line == SourceLine::Same) {
                    self.passing = Pass::Encode;
                }
                return (self.passing != Pass::Encode).then_some(LineCopy { text: "", written: true });
            }
            None => {
                for (i, rec) in self.decoded.records.iter_mut().enumerate() {
                    rec.line = if i == 0 { SourceLine::Whole { text: None } } else { SourceLine::Same };
                }
                (text, pass)
            }
        };
        self.passing = pass;
        if self.source_lines {
            if let Some(SourceLine::Whole { text: kept }) = self.decoded.records.first_mut().map(|r| &mut r.line) {
                *kept = Some(text.into());
            }
        }
        match pass {
            Pass::Copy => Some(LineCopy { text, written: false }),
            Pass::Leave => Some(LineCopy { text: "", written: true }),
            Pass::Encode | Pass::Defer => None,
        }
    }

    /// What becomes of a line a canonical record carries: the policy's word, with what a
    /// direct translation of the line counts (its members no spec names, a line rewritten).
    fn carried_pass(&mut self, carried: &Carried) -> Pass {
        // A new line: the last one's records are all in.
        self.settle_unnamed();
        let Ok(Ok(m)) = Object::parse(&carried.text) else { return Pass::Encode };
        let mut pass = self.policy.pass(carried.dialect, &m);
        if pass == Pass::Defer {
            if let Some((kind, members)) = self.unnamed(carried.dialect, &m, Pass::Encode) {
                self.count_unnamed(&kind, members);
            }
            return Pass::Encode;
        }
        // A terminal record's line must be the target's terminal record: a canonical stream that
        // says a terminal stands for another line (a heartbeat) gets its terminal written, or
        // the output would end without one.
        let terminal = self.decoded.records.iter().any(|r| matches!(r.event, Event::Terminal(_)));
        if pass == Pass::Copy && terminal {
            let c = carried.dialect.contract();
            if c.terminal.as_ref().is_some_and(|t| m.get_str(&c.type_field).is_none_or(|k| k != t.kind)) {
                pass = Pass::Encode;
            }
        }
        if let Some((kind, members)) = self.unnamed(carried.dialect, &m, pass) {
            self.count_unnamed(&kind, members);
        }
        if pass == Pass::Encode && carried.dialect == self.opts.to {
            let kind = m.get_str(&carried.dialect.contract().type_field);
            self.report.rewritten(kind.as_deref().unwrap_or("(no kind)"));
        }
        pass
    }

    /// Hands the decoded records to the normalizer, and through it to the encoder: copied as
    /// `copy`, where the policy copies their line. Members a target of another dialect cannot
    /// carry are taken off and counted.
    fn records<R: Input>(&mut self, mut copy: Option<LineCopy<'_>>, lines: &Lines<R>) {
        let (output, failed) = (&mut *self.output, &mut self.write_failed);
        let mut drain = |out: &mut Vec<u8>| drain(output, out, failed);
        let mut sink = Sink { out: &mut self.out, report: &mut self.report, drain: Some(&mut drain) };
        let first = sink.report.translated + sink.report.passed_through + sink.report.dropped == 0;
        let mut stated_whole = self.decoded.whole_input.take();
        let mut fate = None;
        for mut rec in self.decoded.records.drain(..) {
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
            self.shell.apply(&mut rec);
            if rec.origin != self.opts.to && self.opts.to != Dialect::Canonical && !rec.extra.is_empty() {
                self.lost.note(rec.event.kind(), &rec.extra, sink.report);
                if !self.reads_extra {
                    rec.extra = crate::model::Extra::new();
                }
            }
            if matches!(rec.event, Event::Repeat) && copy.is_none() && self.opts.to != Dialect::Canonical {
                // A line that only repeats earlier ones: nothing for another target to write.
                fate = fate.max(Some(Fate::Absorbed));
                continue;
            }
            if let Event::Extension { line } = &rec.event {
                // A kept line of the target's dialect goes out as read, by its encoder; one
                // without the member naming its kind (carried through canonical, its name
                // lost) is no line of that dialect: not written, and counted.
                let field = &self.opts.to.contract().type_field;
                if rec.origin == self.opts.to
                    && copy.is_none()
                    && !line.get(field.as_str()).is_some_and(Value::is_string)
                {
                    sink.report.dropped_kind(rec.event.kind());
                    fate = fate.max(Some(Fate::Dropped));
                    continue;
                }
            }
            let mut encoding = Encoding { encoder: self.encoder.as_mut(), sink: &mut sink, copy: copy.take() };
            fate = fate.max(Some(self.norm.process(rec, &mut encoding)));
            copy = encoding.copy;
        }
        self.report.line(fate);
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
        self.settle_unnamed();
        self.lost.settle(&mut self.report);
        let (output, failed) = (&mut *self.output, &mut self.write_failed);
        let mut drain = |out: &mut Vec<u8>| drain(output, out, failed);
        let mut sink = Sink { out: &mut self.out, report: &mut self.report, drain: Some(&mut drain) };
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
            if let Some(mut t) = end(self.norm.context().source) {
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
    /// Why the line is bad; and where it only opens a JSON value (`{` or `[` alone on its
    /// line, as a pretty-printer starts one), the bracket.
    Bad(String, Option<char>),
}

impl<'a> Held<'a> {
    fn new(frame: Frame<'a>) -> Self {
        match frame {
            Frame::Text(text) => Held::parse(text),
            Frame::Blank => Held::Blank,
            Frame::TooLong(n) => {
                Held::Bad(format!("line is {n} bytes, longer than the limit; skipped (see --max-line-bytes)"), None)
            }
            Frame::NotUtf8(at, bytes) => Held::Mended(String::from_utf8_lossy(bytes).into_owned(), at),
        }
    }

    fn parse(text: &'a str) -> Self {
        match parse_object(text) {
            Ok(m) => Held::Object(m, text),
            Err(why) => {
                let opening = match text.trim() {
                    "{" => Some('{'),
                    "[" | "[{" => Some('['),
                    _ => None,
                };
                Held::Bad(why, opening)
            }
        }
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
    use std::borrow::Cow;

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

//! An encoder's own `observe` (the state a line copied as read leaves, set without writing it)
//! against the reference it replaces: the record encoded into a buffer thrown away
//! (`Encode::observe_by_encoding`), whose state is by construction what writing the line would
//! have left (#53). The two must give the same bytes for every stream: a valid stream copies
//! through either way, so what is compared is what the encoder writes from its state: the end a
//! cut stream gets, the lines a turn or call left open gets, ids, counts. Every stream of the
//! dialect we have (fixtures, and ../shared/real when it is beside the repository) is cut after
//! every line and inside lines, read as itself, and carried through canonical.

mod common;

use agentgate::codec::{Context, Encode, EncodeOptions, Hints, Record, Sink};
use agentgate::pipeline::translate_with;
use agentgate::report::Fate;
use agentgate::{translate_bytes, Dialect, Options};

/// The dialect's encoder, observing every copied line by encoding it into a scratch buffer.
/// codex's observe has one rule of its own beside encoding (a copied `turn.completed` or
/// `turn.failed` closes the turn: encoding absorbs it, since another dialect's turn end is not
/// codex's), which its observe applies, from the line, to a record it is not told is codex's
/// own: that is codex's reference (its encoder reads nothing else of `native`).
struct ByEncoding(Box<dyn Encode>, Dialect);

impl Encode for ByEncoding {
    fn encode(&mut self, record: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        self.0.encode(record, ctx, sink)
    }

    fn needs_whole_digest(&self, ctx: &Context) -> bool {
        self.0.needs_whole_digest(ctx)
    }

    fn hints(&self) -> Hints {
        self.0.hints()
    }

    fn observe(&mut self, record: &Record, ctx: &Context, line: &str, sink: &mut Sink<'_>) {
        if self.1 == Dialect::Codex {
            let foreign = Context { native: false, ..ctx.clone() };
            return self.0.observe(record, &foreign, line, sink);
        }
        self.0.observe_by_encoding(record, ctx, sink);
    }
}

/// `input` read as `from`, written as `to` by `to`'s encoder and by the reference.
fn both(input: &[u8], from: Dialect, to: Dialect) -> (String, String) {
    let opts = Options::new(Some(from), to).encode(EncodeOptions::default());
    let run = |encoder: Box<dyn Encode>| {
        let mut out = Vec::new();
        translate_with(input, &mut out, &opts, encoder, &mut |_| {}).expect("writing to memory");
        String::from_utf8(out).expect("UTF-8")
    };
    (run(to.encoder(&opts.encode)), run(Box::new(ByEncoding(to.encoder(&opts.encode), to))))
}

/// Every stream we have of `dialect`: the fixtures, and the real streams when they are there.
fn streams(dialect: Dialect) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> =
        common::cases().into_iter().filter(|c| c.dialect == dialect).map(|c| (c.name, c.input)).collect();
    let real = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/real").join(dialect.name());
    if let Ok(entries) = std::fs::read_dir(&real) {
        let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for p in paths.into_iter().filter(|p| p.extension().is_some_and(|x| x == "jsonl")) {
            out.push((p.display().to_string(), std::fs::read(&p).unwrap()));
        }
    }
    assert!(!out.is_empty(), "no {dialect} streams");
    out
}

/// The places a stream is cut: after every line, and in the middle of every fourth line.
fn cuts(input: &[u8]) -> Vec<usize> {
    let ends: Vec<usize> = input.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i + 1).collect();
    let mut at: Vec<usize> = ends.clone();
    let mut start = 0;
    for (n, end) in ends.iter().enumerate() {
        if n % 4 == 1 {
            at.push(start + (end - start) / 2);
        }
        start = *end;
    }
    at.push(input.len());
    at.sort_unstable();
    at.dedup();
    at
}

/// `dialect`'s own observe writes what the reference does, for every cut of every stream, read
/// as itself and through canonical.
fn holds(dialect: Dialect) {
    let mut compared = 0;
    for (name, input) in streams(dialect) {
        for cut in cuts(&input) {
            let part = &input[..cut];
            let (own, reference) = both(part, dialect, dialect);
            assert_eq!(own, reference, "{name} cut at byte {cut}, {dialect} to itself");
            let (canonical, _, _) = translate_bytes(part, &Options::new(Some(dialect), Dialect::Canonical));
            let (own, reference) = both(&canonical, Dialect::Canonical, dialect);
            assert_eq!(own, reference, "{name} cut at byte {cut}, through canonical to {dialect}");
            compared += 1;
        }
    }
    assert!(compared > 20, "{dialect}: only {compared} cuts compared");
}

#[test]
fn adal_observes_as_encoding_would() {
    holds(Dialect::Adal);
}

#[test]
fn wuu_observes_as_encoding_would() {
    holds(Dialect::Wuu);
}

#[test]
fn gemini_observes_as_encoding_would() {
    holds(Dialect::Gemini);
}

#[test]
fn codex_observes_as_encoding_would() {
    holds(Dialect::Codex);
}

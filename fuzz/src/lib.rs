//! What agentgate's fuzz targets share: what each feeds the crate, what it asserts, and the
//! allocator that holds every input to a memory bound.
//!
//! Each target is a file of one line in `fuzz_targets/`, so that a target stays aimed (one
//! decoder, one source dialect) and fast (thousands of inputs a second), while what it checks is
//! written once, here. What each target asserts beyond "no panic" is in its function's docs;
//! docs/testing.md lists the targets and the campaign's figures.

use agentgate::codec::Decoded;
use agentgate::contract::check_stream;
use agentgate::io::framing::{Frame, Lines};
use agentgate::json::object::Object;
pub use agentgate::Dialect;
use agentgate::{translate_bytes, EncodeOptions, Options};

pub mod alloc;
pub mod framing;
pub mod rpc;
pub mod streams;

/// A target feeding any bytes to `dialect`'s decoder ([`decode`]).
#[macro_export]
macro_rules! decode_target {
    ($dialect:ident) => {
        ::libfuzzer_sys::fuzz_target!(|data: &[u8]| $crate::decode($crate::Dialect::$dialect, data));
    };
}

/// A target feeding any bytes, read as `dialect`, through the pipeline ([`pipeline`]).
#[macro_export]
macro_rules! pipeline_target {
    ($dialect:ident) => {
        ::libfuzzer_sys::fuzz_target!(|data: &[u8]| $crate::pipeline($crate::Dialect::$dialect, data));
    };
}

/// The bytes framed into lines, each line parsed as the pipeline parses it, and given to a fresh
/// decoder of `dialect`; then its `finish`, unless a line refused the rest of the stream (as the
/// pipeline does). Asserts: no panic (and the memory bound of [`alloc`]).
pub fn decode(dialect: Dialect, data: &[u8]) {
    let mut decoder = dialect.decoder();
    let mut out = Decoded::default();
    let mut lines = Lines::new(data, 1 << 20);
    lines.stop_hashing();
    while let Some((_, frame)) = lines.next_frame().expect("reading memory cannot fail") {
        let mended;
        let text = match frame {
            Frame::Text(t) => t,
            Frame::NotUtf8(_, bytes) => {
                mended = String::from_utf8_lossy(bytes).into_owned();
                &mended
            }
            Frame::Blank | Frame::TooLong(_) => continue,
        };
        let Ok(Ok(m)) = Object::parse(text) else { continue };
        out.clear();
        out.line_len = text.len();
        if let Err(e) = decoder.decode(m, &mut out) {
            if e.fatal {
                return;
            }
        }
    }
    out.clear();
    decoder.finish(&mut out);
}

/// Every format written, in the order the first byte of a [`pipeline`] input picks them.
pub fn targets() -> Vec<Dialect> {
    Dialect::targets().collect()
}

/// The options the first byte of a [`pipeline`] input names: its low four bits the target
/// (modulo the targets' number), then `--strict`, a line limit of 200 bytes, the targets' other
/// forms (base-context's `--json-deltas`, claude-code's partial messages) and a
/// `SOURCE_DATE_EPOCH`.
pub fn options(from: Dialect, selector: u8) -> Options {
    let all = targets();
    let to = all[usize::from(selector & 0x0f) % all.len()];
    let mut encode = EncodeOptions::default();
    encode.json_deltas = selector & 0x40 != 0;
    encode.include_partial_messages = selector & 0x40 != 0;
    encode.source_date_epoch = (selector & 0x80 != 0).then_some(1_700_000_000);
    let mut opts = Options::new(Some(from), to).strict(selector & 0x10 != 0).encode(encode);
    if selector & 0x20 != 0 {
        opts = opts.max_line_bytes(200);
    }
    opts
}

/// The first byte picks the target and options ([`options`]); the rest is read as `from` and
/// translated, twice. Asserts [`check_translation`].
pub fn pipeline(from: Dialect, data: &[u8]) {
    let Some((&selector, input)) = data.split_first() else { return };
    check_translation(input, &options(from, selector));
}

/// Translates `input` with `opts` and asserts what a translation must hold to, whatever the
/// input: no panic; output that is UTF-8 and valid in the target's contract (within one dialect,
/// lines of kinds the contract does not list and a writer's habits are copied as read, as the
/// test suite allows); where the target has a terminal record, exactly one, and last; every
/// input line accounted for in the report; and the same bytes out the second time.
pub fn check_translation(input: &[u8], opts: &Options) {
    let (from, to) = (opts.from.expect("a source dialect"), opts.to);
    let (out, summary, _) = translate_bytes(input, opts);
    let text = std::str::from_utf8(&out).unwrap_or_else(|e| panic!("{from} to {to}: output is not UTF-8: {e}"));
    let report = &summary.report;
    assert_eq!(report.accounted(), report.lines, "{from} to {to}: a line not accounted for: {report:?}");
    if to == Dialect::Otlp {
        // OTLP/JSON has no record kinds to check (scripts/check-otlp.sh reads it with the
        // protocol's own definitions): one object a line.
        for line in text.lines() {
            let v: serde_json::Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("{from} to otlp: not JSON ({e}): {line}"));
            assert!(v.is_object(), "{from} to otlp: not an object: {line}");
        }
    } else {
        // Within one dialect what the input itself got wrong may stay as it was (a line of an
        // unknown kind, a writer's habit, a status word the spec does not list, written back as
        // the unknown is kept): agentgate adds no problem of its own.
        let own: Vec<String> = if from == to {
            check_stream(from.contract(), &String::from_utf8_lossy(input)).into_iter().map(|(_, p)| numberless(&p)).collect()
        } else {
            Vec::new()
        };
        let problems: Vec<_> = check_stream(to.contract(), text)
            .into_iter()
            .filter(|(_, p)| !(from == to && (unknown_kind(p) || p.starts_with("warning: ") || own.contains(&numberless(p)))))
            .collect();
        assert!(problems.is_empty(), "{from} to {to} ({opts:?}): {problems:?}\n{text}");
        if let Some(terminal) = &to.contract().terminal {
            let field = &to.contract().type_field;
            let kinds: Vec<Option<String>> = text
                .lines()
                .map(|l| {
                    serde_json::from_str::<serde_json::Value>(l)
                        .ok()
                        .and_then(|v| v.get(field).and_then(|k| k.as_str().map(str::to_string)))
                })
                .collect();
            let terminals = kinds.iter().filter(|k| k.as_deref() == Some(terminal.kind.as_str())).count();
            assert_eq!(terminals, 1, "{from} to {to}: {terminals} terminal records\n{text}");
            assert_eq!(kinds.last().cloned().flatten().as_deref(), Some(terminal.kind.as_str()), "{from} to {to}: the terminal is not last\n{text}");
        }
    }
    let (again, _, _) = translate_bytes(input, opts);
    assert!(again == out, "{from} to {to}: the same input gave other bytes the second time");
}

/// A finding without its digits (line numbers, counts): the same problem wherever it is.
fn numberless(finding: &str) -> String {
    finding.chars().filter(|c| !c.is_ascii_digit()).collect()
}

/// A contract finding about a record kind the contract does not list (as tests/common says).
fn unknown_kind(finding: &str) -> bool {
    finding.starts_with("unknown record kind") || finding.starts_with("warning: record kind")
}

/// The first byte picks the dialect (or detection), the rest is validated. Asserts: no panic,
/// and every finding names line 0 (the stream as a whole) or a line the input has.
pub fn validate(data: &[u8]) {
    let Some((&selector, input)) = data.split_first() else { return };
    let sources: Vec<Dialect> = Dialect::sources().collect();
    let dialect = sources.get(usize::from(selector) % (sources.len() + 1)).copied();
    let lines = input.split(|b| *b == b'\n').count() as u64;
    let _ = agentgate::validate(input, dialect, &mut |f| {
        assert!(f.line <= lines, "finding for line {} of {lines}: {}", f.line, f.message);
    });
}

//! The writers' own layouts, held to their writers: localcode's lines are Python's
//! `json.dumps(obj, ensure_ascii=False)`, recorded over generated values by
//! `scripts/oracle/python_layout.py` (floats of every magnitude, control characters, non-ASCII,
//! nesting), and agentgate's spaced layout must write the same bytes. wuu's lines are Go's
//! `json.NewEncoder(w).Encode(map[string]any)`, recorded the same way by
//! `scripts/oracle/go_layout.go` (values of every kind, and a wuu run made of them), and
//! agentgate's Go layout must write the same bytes. claude-code's and base-context's lines are
//! JavaScript's `JSON.stringify`, recorded by `scripts/oracle/js_layout.js`, and agentgate's
//! compact layout must write the same bytes (the few floats where serde_json and
//! `JSON.stringify` part are stated by hand). The float rules are also held to examples written
//! by hand from the writers' sources.

use agentgate::json::{write_line, write_number, Layout};
use agentgate::Dialect;
use serde_json::Value;

/// Asserts that `layout` writes each recorded line as its writer did; which of `marks` (the
/// writer's cases that make the comparison mean something) the recording holds.
fn writes_as_recorded<'m>(recorded: &str, layout: Layout, marks: &[&'m str]) -> Vec<&'m str> {
    let mut seen = std::collections::BTreeSet::new();
    for (n, line) in recorded.lines().enumerate() {
        let value: Value = serde_json::from_str(line).unwrap();
        let mut out = Vec::new();
        write_line(&mut out, &value, layout);
        assert_eq!(std::str::from_utf8(&out).unwrap().trim_end(), line, "{layout:?}, line {}", n + 1);
        seen.extend(marks.iter().filter(|m| line.contains(**m)));
    }
    seen.into_iter().copied().collect()
}

#[test]
fn the_spaced_layout_writes_what_pythons_json_dumps_wrote() {
    let recorded = include_str!("oracle/python-json-dumps.jsonl");
    let marks = [r"\b", r"\u0000", "\u{2028}", "e-0", "e+", ".0,", "-0.0"];
    assert_eq!(writes_as_recorded(recorded, Layout::Spaced, &marks).len(), marks.len());
    let floats: usize = recorded.lines().map(|l| l.matches("e-").count() + l.matches(".0,").count()).sum();
    assert!(floats > 100, "the recording exercises exponents and whole floats: {floats}");
}

#[test]
fn the_go_layout_writes_what_gos_json_encoder_wrote() {
    let recorded = include_str!("oracle/go-json-encoder.jsonl");
    let marks = [r"\b", r"\f", r"\u003c", r"\u0026", r"\u2028", r"\u0000", "e-", "e+", ":-0,"];
    assert_eq!(writes_as_recorded(recorded, Layout::Go, &marks).len(), marks.len());
}

#[test]
fn the_compact_layout_writes_what_json_stringify_wrote() {
    let recorded = include_str!("oracle/js-json-stringify.jsonl");
    let marks = [r"\b", r"\f", r"\u0000", r"\u001f", "\u{2028}", "<", "0.000"];
    assert_eq!(writes_as_recorded(recorded, Layout::Compact, &marks).len(), marks.len());
    // Where the two writers part (node -e 'console.log(JSON.stringify(x))'): floats from 1e-6
    // to below 1e-5 and from 1e16 to below 1e21, which JSON.stringify writes plain, and -0. A JS
    // agent's own lines are copied as read; these are what a float re-written from a value
    // looks like, read alike by any JSON reader.
    for (f, js, ours) in [
        ("0.00003", "0.00003", "0.00003"),
        ("0.0000035", "0.0000035", "3.5e-6"),
        ("0.000001", "0.000001", "1e-6"),
        ("1e16", "10000000000000000", "1e+16"),
        ("1e20", "100000000000000000000", "1e+20"),
        ("1e21", "1e+21", "1e+21"),
        ("-0.0", "0", "-0.0"),
    ] {
        assert_eq!(number(f, Layout::Compact), ours, "JSON.stringify writes {js}");
    }
}

#[test]
fn a_run_go_wrote_comes_back_from_wuu_to_wuu_byte_for_byte() {
    let recorded = include_str!("oracle/go-wuu-stream.jsonl");
    let direct =
        agentgate::translate_str(recorded, &agentgate::Options::new(Some(Dialect::Wuu), Dialect::Wuu)).unwrap();
    assert_eq!(direct, recorded);
    // Through canonical, every line is written again by the Go layout, from the model.
    let canonical =
        agentgate::translate_str(recorded, &agentgate::Options::new(Some(Dialect::Wuu), Dialect::Canonical)).unwrap();
    let back =
        agentgate::translate_str(&canonical, &agentgate::Options::new(Some(Dialect::Canonical), Dialect::Wuu)).unwrap();
    assert_eq!(back, recorded);
}

#[test]
fn localcode_to_itself_keeps_pythons_numbers_byte_for_byte() {
    // Unknown members of a known line and an unknown line, as localcode writes them.
    let stream = concat!(
        r#"{"type": "stage", "stage": "plan", "extra": {"ratio": 1e-07, "x": 1.0, "big": 1e+20, "small": 0.0001, "neg": -0.0, "t": "café"}}"#,
        "\n",
        r#"{"type": "turn_tokens", "prompt_tokens": "10", "completion_tokens": "2", "total_tokens": "12", "cost": 3.5e-05}"#,
        "\n",
        r#"{"type": "gauge", "load": 1.5e+16, "tiny": [2.5e-300, 1e-05]}"#,
        "\n",
        r#"{"type": "result", "status": "ok", "exit_code": 0, "reason": "completed", "final_text": "ok", "tokens": {"prompt": 10, "completion": 2, "total": 12}}"#,
        "\n"
    );
    let out = agentgate::translate_bytes(
        stream.as_bytes(),
        &agentgate::Options::new(Some(Dialect::Localcode), Dialect::Localcode),
    )
    .0;
    assert_eq!(String::from_utf8(out).unwrap(), stream);
}

fn number(text: &str, layout: Layout) -> String {
    let n: serde_json::Number = serde_json::from_str(text).unwrap();
    let mut out = Vec::new();
    write_number(&mut out, &n, layout);
    String::from_utf8(out).unwrap()
}

#[test]
fn floats_are_laid_out_as_each_writer_lays_them_out() {
    // Python's repr: plain from 1e-4 to below 1e16, always with a fraction; else an exponent
    // of two digits at least.
    for (f, py) in [
        ("1e-7", "1e-07"),
        ("0.0001", "0.0001"),
        ("0.00001", "1e-05"),
        ("1e16", "1e+16"),
        ("1e15", "1000000000000000.0"),
        ("2.5", "2.5"),
        ("-3.75e-7", "-3.75e-07"),
        ("1e300", "1e+300"),
        ("-0.0", "-0.0"),
        ("100.0", "100.0"),
    ] {
        assert_eq!(number(f, Layout::Spaced), py, "python {f}");
    }
    // Go's encoding/json: plain from 1e-6 to below 1e21, no fraction where there is none;
    // else strconv's 'e' form with a one-digit negative exponent cleaned up (e-07 to e-7).
    for (f, go) in [
        ("1e-7", "1e-7"),
        ("0.000035", "0.000035"),
        ("0.000001", "0.000001"),
        ("1e20", "100000000000000000000"),
        ("1e21", "1e+21"),
        ("1.0", "1"),
        ("2.5e-10", "2.5e-10"),
        ("1e-100", "1e-100"),
    ] {
        assert_eq!(number(f, Layout::Go), go, "go {f}");
    }
    // serde_json's own for the compact and sorted layouts; integers as they are everywhere.
    assert_eq!(number("1e-7", Layout::Compact), "1e-7");
    assert_eq!(number("1.0", Layout::Sorted), "1.0");
    for layout in [Layout::Compact, Layout::Spaced, Layout::Sorted, Layout::Go] {
        assert_eq!(number("-42", layout), "-42");
        assert_eq!(number("18446744073709551615", layout), "18446744073709551615");
    }
}

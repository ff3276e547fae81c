//! Inputs the fuzz campaign found (fuzz/, docs/testing.md), each a test named after what broke,
//! its input written out and cut down to what it takes. What each must do is what any bad input
//! must: no panic, the rest read, the output still valid and ending as its target's ends.

use agentgate::contract::check_stream;
use agentgate::{translate_bytes, Dialect, Options};

/// Translates `input` from `from` to every target: the output holds to the target's contract.
fn translates_soundly(input: &str, from: Dialect) {
    for to in Dialect::all() {
        let (out, summary, _) = translate_bytes(input.as_bytes(), &Options::new(Some(from), to));
        let out = String::from_utf8(out).unwrap();
        let problems: Vec<_> = check_stream(to.contract(), &out)
            .into_iter()
            .filter(|(_, p)| !(from == to && (p.starts_with("unknown record kind") || p.starts_with("warning: "))))
            .collect();
        assert!(problems.is_empty(), "{from} to {to}: {problems:?}\n{out}");
        assert_eq!(summary.report.accounted(), summary.report.lines, "{from} to {to}");
    }
}

#[test]
fn an_acp_session_cancel_without_params_is_read_not_a_panic() {
    // A JSON-RPC map indexed by a key it lacked: the acp decoder panicked.
    let transcript = concat!(
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"s\",\"prompt\":[]}}\n",
        "{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\"}\n",
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"stopReason\":\"cancelled\"}}\n",
    );
    translates_soundly(transcript, Dialect::Acp);
    let (out, _, _) = translate_bytes(transcript.as_bytes(), &Options::new(Some(Dialect::Acp), Dialect::Canonical));
    let out = String::from_utf8(out).unwrap();
    assert!(out.lines().last().unwrap().contains("\"interrupted\""), "the cancel still cancels: {out}");
}

#[test]
fn a_timestamp_past_what_64_bits_of_nanoseconds_hold_is_no_time_not_an_overflow() {
    // A gemini timestamp in the year 4052, exported: its nanoseconds since 1970 overflowed u64
    // (a panic with overflow checks, a wrong time without). Now that line has no time of its own.
    let stream = concat!(
        "{\"type\":\"init\",\"timestamp\":\"2026-12-06T18:56:31.896Z\",\"session_id\":\"s-1\",\"model\":\"auto\"}\n",
        "{\"type\":\"message\",\"timestamp\":\"4052-12-06T18:56:32.065Z\",\"role\":\"assistant\",\"content\":\"hello\",\"delta\":true}\n",
        "{\"type\":\"result\",\"timestamp\":\"2026-12-06T18:56:32.066Z\",\"status\":\"success\",\"stats\":{\"total_tokens\":30,\"input_tokens\":20,\"output_tokens\":10,\"duration_ms\":170,\"tool_calls\":0}}\n",
    );
    translates_soundly(stream, Dialect::Gemini);
    let (out, _, _) = translate_bytes(stream.as_bytes(), &Options::new(Some(Dialect::Gemini), Dialect::Otlp));
    let out = String::from_utf8(out).unwrap();
    assert!(!out.is_empty() && !out.contains("4052"), "no time made up from the year 4052: {out}");
}

#[test]
fn loom_writes_a_foreign_runs_approval_just_before_its_terminal() {
    // loom.md, Approval: "Written just before the terminal record". A run from another dialect
    // that ends awaiting approval became Approval, Session, Terminal: the contract refuses it.
    let stream = concat!(
        "{\"v\":1,\"type\":\"tool_call\",\"id\":\"call-1\",\"name\":\"select_action\",\"arguments\":{\"action\":\"repository.merge\"}}\n",
        "{\"v\":1,\"type\":\"approval\",\"actions\":[\"repository.merge\"]}\n",
        "{\"v\":1,\"type\":\"terminal\",\"outcome\":\"permission_denied\",\"reason\":\"ApprovalRequired\",\"exit_code\":0}\n",
    );
    let (out, _, _) = translate_bytes(stream.as_bytes(), &Options::new(Some(Dialect::Canonical), Dialect::Loom));
    let out = String::from_utf8(out).unwrap();
    let problems = check_stream(Dialect::Loom.contract(), &out);
    assert!(problems.is_empty(), "{problems:?}\n{out}");
    let kinds: Vec<&str> =
        out.lines().map(|l| if l.contains("\"kind\":\"Approval\"") { "Approval" } else { "other" }).collect();
    assert_eq!(kinds.iter().rev().nth(1), Some(&"Approval"), "the Approval is the line before the Terminal:\n{out}");
}

#[test]
fn a_canonical_terminal_carrying_a_line_of_another_kind_still_ends_the_output() {
    // A canonical terminal whose carried source line (its dialect's, the target's) is not the
    // target's terminal record: the line was copied as read and the run ended without "result".
    let stream = concat!(
        "{\"v\":1,\"type\":\"final_answer\",\"text\":\"done\"}\n",
        "{\"v\":1,\"type\":\"terminal\",\"outcome\":\"completed\",\"final_text\":\"done\",\"dialect\":\"localcode\",\"line\":{\"type\":\"heartbeat\",\"seq\":\"1\"}}\n",
    );
    let (out, _, _) = translate_bytes(stream.as_bytes(), &Options::new(Some(Dialect::Canonical), Dialect::Localcode));
    let out = String::from_utf8(out).unwrap();
    let last: serde_json::Value = serde_json::from_str(out.lines().last().unwrap_or("null")).unwrap();
    assert_eq!(last["type"], "result", "ends with its result:\n{out}");
    let problems = check_stream(Dialect::Localcode.contract(), &out);
    assert!(problems.is_empty(), "{problems:?}\n{out}");
}

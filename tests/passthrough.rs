//! Same stream out (issue 53): the form a stream is written in is the one the flags ask for
//! (rule 1), and a stream that is not valid in its own dialect comes out valid, in the spec's
//! current generation throughout, with what was written anew named by `--report` (rule 4).
//! Expectations are written by hand from the specs, not taken from the code's output.

mod common;

use serde_json::{json, Value};

use agentgate::contract::check_stream;
use agentgate::pipeline::translate_bytes;
use agentgate::report::Report;
use agentgate::{Dialect, Options};

fn fixture(path: &str) -> Vec<u8> {
    std::fs::read(common::fixtures().join(path)).unwrap()
}

/// `input` of `from` to `to`, in the form the two flags ask for: the output and the report.
fn translate(input: &[u8], from: Dialect, to: Dialect, deltas: bool, partials: bool) -> (String, Report) {
    let mut opts = Options::new(Some(from), to);
    opts.encode.json_deltas = deltas;
    opts.encode.include_partial_messages = partials;
    let (out, summary, _) = translate_bytes(input, &opts);
    (String::from_utf8(out).unwrap(), summary.report)
}

fn assistant_message_line(l: &Value) -> bool {
    match l["type"].as_str() {
        Some("message_update") => true,
        Some("message_start" | "message_end") => l["message"]["role"] == "assistant",
        _ => false,
    }
}

/// base-context.md, Opt-in Delta Updates: "Without this flag, the JSON format above is
/// unchanged": a `--json-deltas` stream written without the flag is the plain form, each
/// `message_update` with its outer `message` and the event's `partial`, no `messageId`.
#[test]
fn a_delta_stream_without_json_deltas_is_written_in_the_plain_form() {
    let input = fixture("base-context/deltas.jsonl");
    let (out, report) = translate(&input, Dialect::BaseContext, Dialect::BaseContext, false, false);
    let lines = common::values(&out);
    let updates: Vec<&Value> = lines.iter().filter(|l| l["type"] == "message_update").collect();
    assert!(updates.len() >= 5, "{out}");
    for l in lines.iter().filter(|l| assistant_message_line(l)) {
        assert!(l.get("messageId").is_none(), "{l}");
    }
    for u in &updates {
        assert!(u["message"]["role"] == "assistant" && u["assistantMessageEvent"]["partial"].is_object(), "{u}");
        // The partial message is the message so far (the spec's example: `message` and
        // `partial` are the same message).
        assert_eq!(u["message"], u["assistantMessageEvent"]["partial"], "{u}");
    }
    // The text of each update's message grows by its deltas: the last one holds it all.
    let last_text = updates.iter().rev().find_map(|u| {
        u["message"]["content"].as_array()?.iter().find(|b| b["type"] == "text").and_then(|b| b["text"].as_str())
    });
    assert_eq!(last_text, Some("There is one file: README.md."));
    // Every other line is the input's, as it was.
    let input_text = String::from_utf8(input.clone()).unwrap();
    for line in out.lines().filter(|l| !assistant_message_line(&serde_json::from_str(l).unwrap())) {
        assert!(input_text.lines().any(|i| i == line), "not the input's: {line}");
    }
    assert!(check_stream(Dialect::BaseContext.contract(), &out).is_empty(), "{out}");
    assert!(report.rewritten.contains_key("message_update"), "{report}");
}

/// base-context.md, with the flag: "Assistant message_start, message_update, and message_end
/// events carry a numeric messageId. It starts at 1 and increases for each assistant message";
/// "message_update omits its outer message and its nested assistantMessageEvent.partial"; "A
/// nested toolcall_start adds toolCall: {id, name}"; "message_start and message_end still
/// include their full message".
#[test]
fn a_plain_stream_with_json_deltas_is_written_in_the_delta_form() {
    let input = fixture("base-context/success.jsonl");
    let (out, _) = translate(&input, Dialect::BaseContext, Dialect::BaseContext, true, false);
    let lines = common::values(&out);
    let mut ids = Vec::new();
    for l in lines.iter().filter(|l| assistant_message_line(l)) {
        let id = l["messageId"].as_u64().unwrap_or_else(|| panic!("no messageId: {l}"));
        if l["type"] == "message_start" {
            ids.push(id);
        }
        match l["type"].as_str() {
            Some("message_update") => {
                assert!(l.get("message").is_none() && l["assistantMessageEvent"].get("partial").is_none(), "{l}");
                if l["assistantMessageEvent"]["type"] == "toolcall_start" {
                    let call = &l["assistantMessageEvent"]["toolCall"];
                    assert!(call["id"].is_string() && call["name"].is_string(), "{l}");
                }
            }
            _ => assert_eq!(l["message"]["role"], "assistant", "{l}"),
        }
    }
    assert_eq!(ids, (1..=ids.len() as u64).collect::<Vec<_>>(), "{out}");
    assert!(ids.len() >= 2);
    assert!(check_stream(Dialect::BaseContext.contract(), &out).is_empty(), "{out}");
}

/// claude-code.md, Partial messages: "--include-partial-messages adds stream_event lines ahead
/// of the assistant lines they build". Asked of a stream without them, each assistant line
/// comes after stream_event lines that build it: a message_start event naming its message id,
/// and a content block with the line's block.
#[test]
fn partial_messages_asked_of_a_plain_claude_stream_come_before_each_assistant_line() {
    let input = fixture("claude-code/success.jsonl");
    let (out, _) = translate(&input, Dialect::ClaudeCode, Dialect::ClaudeCode, false, true);
    let lines = common::values(&out);
    let assistants: Vec<usize> = (0..lines.len()).filter(|&i| lines[i]["type"] == "assistant").collect();
    assert!(assistants.len() >= 2);
    for &i in &assistants {
        assert_eq!(lines[i - 1]["type"], "stream_event", "{}", lines[i]);
        assert_eq!(lines[i - 1]["event"]["type"], "content_block_stop");
        let id = &lines[i]["message"]["id"];
        let started = lines[..i].iter().any(|l| {
            l["type"] == "stream_event" && l["event"]["type"] == "message_start" && &l["event"]["message"]["id"] == id
        });
        assert!(started, "no message_start event for {id}");
    }
    // The lines both forms have, as they were.
    let text = String::from_utf8(input).unwrap();
    for kind in ["system", "user", "result"] {
        for line in out.lines().filter(|l| l.starts_with(&format!("{{\"type\":\"{kind}\""))) {
            assert!(text.lines().any(|i| i == line), "{line}");
        }
    }
    assert!(check_stream(Dialect::ClaudeCode.contract(), &out).is_empty(), "{out}");
}

/// localcode-notes.md: the run_start generation ("run_start {schema_version, run_id,
/// localcode_version}", "round_start/round_end {round_idx}", "tool_call", "turn_end
/// {completion_status, loop_exit_reason}", tool results with a status word) is not the spec's.
/// To localcode it comes out in the spec's generation throughout: tool_start for tool_call, a
/// tool_result with `error` "true"/"false" (localcode.md: "error is "true"/"false""), done for
/// turn_end, and nothing for the lines the spec has no place for; each line written anew named.
#[test]
fn the_run_start_generation_comes_out_in_the_specs_generation() {
    let input = concat!(
        r#"{"type": "run_start", "schema_version": "1.0", "run_id": "r1", "localcode_version": "0.9"}"#,
        "\n",
        r#"{"type": "round_start", "round_idx": 0}"#,
        "\n",
        r#"{"type": "tool_call", "name": "ls", "args": ".", "index": "0"}"#,
        "\n",
        r#"{"type": "tool_result", "name": "ls", "args": ".", "index": "0", "result": "boom", "status": "error"}"#,
        "\n",
        r#"{"type": "round_end", "round_idx": 0}"#,
        "\n",
        r#"{"type": "turn_end", "completion_status": "error", "loop_exit_reason": "tool_failed"}"#,
        "\n",
        r#"{"type": "result", "status": "incomplete", "exit_code": 1, "reason": "tool_failed", "final_text": "", "tokens": {"prompt": 0, "completion": 0, "total": 0}}"#,
        "\n",
    );
    let (out, report) = translate(input.as_bytes(), Dialect::Localcode, Dialect::Localcode, false, false);
    let want = concat!(
        r#"{"type": "tool_start", "name": "ls", "args": ".", "index": "0"}"#,
        "\n",
        r#"{"type": "tool_result", "name": "ls", "args": ".", "index": "0", "result": "boom", "error": "true"}"#,
        "\n",
        r#"{"type": "done"}"#,
        "\n",
        r#"{"type": "result", "status": "incomplete", "exit_code": 1, "reason": "tool_failed", "final_text": "", "tokens": {"prompt": 0, "completion": 0, "total": 0}}"#,
        "\n",
    );
    assert_eq!(out, want);
    assert!(check_stream(Dialect::Localcode.contract(), &out).is_empty());
    for kind in ["run_start", "round_start", "tool_call", "tool_result", "round_end", "turn_end"] {
        assert_eq!(report.rewritten.get(kind), Some(&1), "{kind}: {report}");
    }
    // The valid result line was copied, not rewritten.
    assert!(!report.rewritten.contains_key("result"), "{report}");
}

/// adal-notes.md: the older generation's `tool_result` has no `id` and the status `success` or
/// `error`. adal.md: "Every tool_result carries the id of the tool_call it answers" and status
/// is "completed / failed / cancelled". To adal such a stream comes out with ids and the
/// spec's words; the lines that were valid stay as they were.
#[test]
fn an_older_adal_stream_comes_out_with_ids_and_the_specs_statuses() {
    let input = concat!(
        r#"{"type":"tool_call","name":"bash","args":{"command":"ls"}}"#,
        "\n",
        r#"{"type":"tool_result","name":"bash","status":"success"}"#,
        "\n",
        r#"{"type":"tool_call","name":"bash","args":{"command":"false"}}"#,
        "\n",
        r#"{"type":"tool_result","name":"bash","status":"error"}"#,
        "\n",
        r#"{"type":"answer","content":"Done."}"#,
        "\n",
        r#"{"type":"complete","exit_code":0,"session_id":"s-1","model":"m"}"#,
        "\n",
    );
    let (out, report) = translate(input.as_bytes(), Dialect::Adal, Dialect::Adal, false, false);
    let lines = common::values(&out);
    let calls: Vec<&Value> = lines.iter().filter(|l| l["type"] == "tool_call").collect();
    let results: Vec<&Value> = lines.iter().filter(|l| l["type"] == "tool_result").collect();
    assert_eq!((calls.len(), results.len()), (2, 2), "{out}");
    for (c, r) in calls.iter().zip(&results) {
        assert!(c["id"].is_string() && c["id"] == r["id"], "{c} {r}");
        assert_eq!(r["output"], "", "{r}");
    }
    assert_ne!(calls[0]["id"], calls[1]["id"]);
    assert_eq!((results[0]["status"].as_str(), results[1]["status"].as_str()), (Some("completed"), Some("failed")));
    // The answer and complete lines were valid: copied as they were.
    assert!(out.ends_with(&input[input.find(r#"{"type":"answer""#).unwrap()..]), "{out}");
    assert!(check_stream(Dialect::Adal.contract(), &out).is_empty(), "{out}");
    assert_eq!((report.rewritten.get("tool_call"), report.rewritten.get("tool_result")), (Some(&2), Some(&2)));
}

/// wuu.md: "tool_completed supplies the call status and error"; wuu's own runner writes a
/// tool_completed with no tool_started before it (a write_file call): a valid stream, which
/// comes back from wuu as it was, with no tool_started made up for it, and no ids added to
/// lines that had none.
#[test]
fn a_wuu_stream_comes_back_with_nothing_added() {
    let input = concat!(
        r#"{"thread_id":"t","turn_id":"u","type":"turn_started"}"#,
        "\n",
        r#"{"delta":"hi","type":"agent_message_delta"}"#,
        "\n",
        r#"{"cache_creation_tokens":0,"cache_read_tokens":0,"input_tokens":5,"output_tokens":1,"type":"usage_updated"}"#,
        "\n",
        r#"{"error":"","item_id":"item-write","name":"write_file","status":"completed","thread_id":"t","turn_id":"u","type":"tool_completed"}"#,
        "\n",
        r#"{"awaiting_auto_continuation":false,"input_tokens":7,"output_tokens":2,"thread_id":"t","trace_path":"","turn_id":"u","type":"turn_completed"}"#,
        "\n",
        r#"{"final_message":"hi","run_id":"r","status":"completed","thread_id":"t","trace_path":"","turn_id":"u","type":"result"}"#,
        "\n",
    );
    let (out, report) = translate(input.as_bytes(), Dialect::Wuu, Dialect::Wuu, false, false);
    assert_eq!(out, input);
    assert!(report.synthesized.is_empty() && report.rewritten.is_empty(), "{report}");
    // And through canonical.
    let via = common::translate(input.as_bytes(), Dialect::Wuu, Dialect::Canonical);
    assert_eq!(common::translate(via.as_bytes(), Dialect::Canonical, Dialect::Wuu), input);
}

/// A stream cut short is not valid (wuu.md: "keep reading until result"): its lines come back
/// as they were, then the turn it left open fails and the result says the input ended early,
/// with the ids the stream used. Nothing is added before or between the lines read.
#[test]
fn a_cut_wuu_stream_keeps_its_lines_and_gains_its_end() {
    let input = concat!(
        r#"{"cwd":"/r","model":"m","provider":"p","thread_id":"t","type":"thread_started"}"#,
        "\n",
        r#"{"thread_id":"t","turn_id":"u","type":"turn_started"}"#,
        "\n",
        r#"{"delta":"half","thread_id":"t","turn_id":"u","type":"agent_message_delta"}"#,
        "\n",
    );
    let (out, report) = translate(input.as_bytes(), Dialect::Wuu, Dialect::Wuu, false, false);
    assert!(out.starts_with(input), "{out}");
    let added = common::values(&out[input.len()..]);
    let kinds: Vec<&str> = added.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["turn_failed", "result"], "{out}");
    assert_eq!(
        (&added[1]["status"], &added[1]["thread_id"], &added[1]["turn_id"]),
        (&json!("failed"), &json!("t"), &json!("u"))
    );
    assert_eq!(added[1]["error"], "input ended without a terminal record");
    assert_eq!(report.synthesized.get("terminal"), Some(&1), "{report}");
    assert!(check_stream(Dialect::Wuu.contract(), &out).is_empty(), "{out}");
}

/// Rule 5 with lines of one shape: a member no spec names is counted on the line that carries
/// it, however many lines of the same kind without it came before (the pipeline remembers the
/// shapes of lines found to carry none; loom.md names `Usage`'s members).
#[test]
fn an_unnamed_member_after_lines_of_a_shape_seen_is_still_counted() {
    let usage = r#"{"cached_input_tokens":0,"final_usage":true,"input_tokens":120,"kind":"Usage","model":"recorded","output_tokens":7,"schema_version":1,"turn":1}"#;
    let odd = r#"{"cached_input_tokens":0,"final_usage":true,"input_tokens":120,"kind":"Usage","model":"recorded","output_tokens":7,"schema_version":1,"turn":1,"zz_gauge":3}"#;
    let input = format!("{usage}\n{usage}\n{usage}\n{odd}\n");
    let (_, summary, _) =
        agentgate::translate_bytes(input.as_bytes(), &agentgate::Options::new(Some(Dialect::Loom), Dialect::Adal));
    let report = summary.report.to_string();
    assert!(report.contains("zz_gauge"), "the unnamed member is named by --report: {report}");
}

/// adal to adal copies each valid line and keeps, from the lines it copied, what the end of the
/// run needs (adal's `observe`, not an encoding thrown away: #53). adal.md: "a failed run says
/// why in an error event before complete" (one: the copied one), and after `permission_denied`
/// "no tool events follow; complete follows with exit_code: 2".
#[test]
fn a_cut_adal_stream_ends_from_the_state_of_the_lines_it_copied() {
    let call = r#"{"type":"tool_call","id":"a","name":"bash","args":{"command":"ls"}}"#;
    let failed = r#"{"type":"tool_result","id":"a","name":"bash","status":"failed","output":"x"}"#;
    let error = r#"{"type":"error","message":"boom"}"#;
    let input = format!("{call}\n{failed}\n{error}\n");
    let (out, _) = translate(input.as_bytes(), Dialect::Adal, Dialect::Adal, false, false);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[..3], [call, failed, error], "{out}");
    assert_eq!(lines.len(), 4, "one error, the copied one: {out}");
    let complete: Value = serde_json::from_str(lines[3]).unwrap();
    assert_eq!((&complete["type"], &complete["exit_code"]), (&json!("complete"), &json!(1)), "{out}");

    let denied = r#"{"type":"permission_denied","id":"a","name":"bash","args":{"command":"ls"},"reason":"no"}"#;
    let later = r#"{"type":"tool_call","id":"b","name":"read_file","args":{"path":"x"}}"#;
    let input = format!("{call}\n{denied}\n{later}\n");
    let (out, report) = translate(input.as_bytes(), Dialect::Adal, Dialect::Adal, false, false);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[..2], [call, denied], "{out}");
    assert_eq!(lines.len(), 3, "the call after the refusal is not written: {out}");
    let complete: Value = serde_json::from_str(lines[2]).unwrap();
    assert_eq!((&complete["type"], &complete["exit_code"]), (&json!("complete"), &json!(2)), "{out}");
    assert!(report.dropped > 0, "the dropped call is counted");
}

//! localcode on the wire: counts as strings, limits cut on character boundaries or split,
//! Python's spaced layout, and the status words its reader must accept.

mod common;

use serde_json::{json, Value};

use agentgate::Dialect;

fn to_localcode(canonical: &[Value]) -> Vec<Value> {
    let input: String = canonical.iter().map(|v| format!("{v}\n")).collect();
    common::values(&common::translate(input.as_bytes(), Dialect::Canonical, Dialect::Localcode))
}

fn chars(v: &Value) -> usize {
    v.as_str().unwrap().chars().count()
}

#[test]
fn long_text_is_split_over_content_events_and_nothing_is_cut() {
    let text = "数据 🙂 e\u{301} ".repeat(700);
    let out =
        to_localcode(&[json!({"v": 1, "type": "text_start"}), json!({"v": 1, "type": "text_delta", "text": text})]);
    let chunks: Vec<&Value> = out.iter().filter(|l| l["type"] == "content").collect();
    assert_eq!(chunks.len(), 3);
    let joined: String = chunks.iter().map(|c| c["chunk"].as_str().unwrap()).collect();
    assert_eq!(joined, text);
    for c in chunks {
        assert!(chars(&c["chunk"]) <= 2000);
        assert_eq!(c["chars"], Value::String(chars(&c["chunk"]).to_string()));
    }
}

#[test]
fn limited_fields_are_cut_on_a_character_boundary_to_their_limits() {
    let output = "🙂e\u{301}x".repeat(2000);
    let message = "過長 🙂".repeat(100);
    let peek = "ü".repeat(500);
    let done = "é🙂".repeat(5000);
    let out = to_localcode(&[
        json!({"v": 1, "type": "tool_call", "id": "c", "name": "cat", "arguments": {"path": "x"}}),
        json!({"v": 1, "type": "tool_result", "id": "c", "status": "completed", "output": output}),
        json!({"v": 1, "type": "error", "message": message}),
        json!({"v": 1, "type": "reasoning_peek", "text": peek}),
        json!({"v": 1, "type": "reasoning_end", "text": done}),
    ]);
    let find = |t: &str| out.iter().find(|l| l["type"] == t).unwrap().clone();
    for (kind, field, original, limit) in [
        ("tool_result", "result", &output, 4000),
        ("error", "message", &message, 240),
        ("thinking_peek", "text", &peek, 120),
        ("thinking_done", "text", &done, 8000),
    ] {
        let got = find(kind)[field].as_str().unwrap().to_string();
        assert_eq!(got.chars().count(), limit, "{kind}.{field}");
        assert!(original.starts_with(&got), "{kind}.{field} is a prefix of the original");
    }
}

#[test]
fn counts_are_strings_on_the_wire_and_result_tokens_are_integers() {
    let out = common::translate(
        &std::fs::read(common::fixtures().join("localcode/success.jsonl")).unwrap(),
        Dialect::Localcode,
        Dialect::Localcode,
    );
    let lines = common::values(&out);
    for l in &lines {
        for key in ["index", "chars", "prompt_tokens", "completion_tokens", "total_tokens"] {
            if let Some(v) = l.get(key) {
                assert!(v.as_str().is_some_and(|s| s.bytes().all(|b| b.is_ascii_digit() || b == b'-')), "{key} in {l}");
            }
        }
        if l["type"] == "thinking_start" {
            assert!(l["reset"] == "true" || l["reset"] == "false");
        }
    }
    let result = lines.last().unwrap();
    assert_eq!(result["tokens"], json!({"prompt": 6050, "completion": 350, "total": 6400}));
}

#[test]
fn lines_are_laid_out_as_python_json_dumps_writes_them() {
    let out = common::translate(
        &std::fs::read(common::fixtures().join("adal/unicode-long.jsonl")).unwrap(),
        Dialect::Adal,
        Dialect::Localcode,
    );
    for line in out.lines() {
        assert!(line.starts_with("{\"type\": \""), "{line}");
        assert!(!line.contains("\\u"), "non-ASCII is raw UTF-8: {line}");
    }
    assert!(out.contains("\", \"name\": \""));
}

#[test]
fn counts_written_as_integers_and_booleans_are_read_too() {
    let strings = concat!(
        "{\"type\": \"thinking_start\", \"reset\": \"true\"}\n",
        "{\"type\": \"tool_start\", \"name\": \"ls\", \"args\": \".\", \"index\": \"3\"}\n",
        "{\"type\": \"turn_tokens\", \"prompt_tokens\": \"12\", \"completion_tokens\": \"5\", \"total_tokens\": \"17\"}\n",
    );
    let numbers = concat!(
        "{\"type\": \"thinking_start\", \"reset\": true}\n",
        "{\"type\": \"tool_start\", \"name\": \"ls\", \"args\": \".\", \"index\": 3}\n",
        "{\"type\": \"turn_tokens\", \"prompt_tokens\": 12, \"completion_tokens\": 5, \"total_tokens\": 17}\n",
    );
    let a = common::translate(strings.as_bytes(), Dialect::Localcode, Dialect::Canonical);
    let b = common::translate(numbers.as_bytes(), Dialect::Localcode, Dialect::Canonical);
    // The same events; the inputs' digests (canonical's input_digest and whole_input) and the
    // source lines it carries are not the same.
    let events = |s: &str| {
        let mut v = common::values(s);
        v.iter_mut().for_each(|v| {
            for key in ["input_digest", "whole_input", "line"] {
                v.as_object_mut().unwrap().shift_remove(key);
            }
        });
        v
    };
    assert_eq!(events(&a), events(&b));
    assert!(a.contains("\"index\":3") && a.contains("\"input\":12") && a.contains("\"reset\":true"), "{a}");
}

#[test]
fn every_status_word_of_the_notes_is_read() {
    for (status, code, outcome) in [
        ("ok", 0, "completed"),
        ("error", 1, "failed"),
        ("timeout", 124, "timeout"),
        ("interrupted", 130, "interrupted"),
        ("incomplete", 124, "timeout"),
        ("incomplete", 130, "interrupted"),
        ("incomplete", 1, "incomplete"),
    ] {
        let line = format!("{{\"type\": \"result\", \"status\": \"{status}\", \"exit_code\": {code}, \"reason\": \"r\", \"final_text\": \"\", \"tokens\": {{\"prompt\": 0, \"completion\": 0, \"total\": 0}}}}\n");
        let out = common::values(&common::translate(line.as_bytes(), Dialect::Localcode, Dialect::Canonical));
        assert_eq!(out.last().unwrap()["outcome"], outcome, "{status}/{code}");
        // And localcode gets back the word it wrote, also through canonical.
        assert_eq!(common::translate(line.as_bytes(), Dialect::Localcode, Dialect::Localcode), line, "{status}/{code}");
        let canonical = common::translate(line.as_bytes(), Dialect::Localcode, Dialect::Canonical);
        assert_eq!(
            common::translate(canonical.as_bytes(), Dialect::Canonical, Dialect::Localcode),
            line,
            "{status}/{code} via canonical"
        );
    }
}

#[test]
fn every_outcome_is_written_with_the_status_and_exit_code_of_the_spec() {
    for (outcome, status, code) in [
        ("completed", "ok", 0),
        ("failed", "incomplete", 1),
        ("permission_denied", "incomplete", 1),
        ("incomplete", "incomplete", 1),
        ("timeout", "incomplete", 124),
        ("interrupted", "incomplete", 130),
    ] {
        let out = to_localcode(&[json!({"v": 1, "type": "terminal", "outcome": outcome})]);
        let r = out.last().unwrap();
        assert_eq!((r["status"].as_str().unwrap(), r["exit_code"].as_i64().unwrap()), (status, code), "{outcome}");
        assert_eq!(
            r["reason"],
            outcome.replace("failed", "error"),
            "the reason names the outcome when the run has none"
        );
        // And it reads back as the same outcome.
        let back =
            common::values(&common::translate(format!("{r}\n").as_bytes(), Dialect::Localcode, Dialect::Canonical));
        assert_eq!(back.last().unwrap()["outcome"], outcome);
    }
}

#[test]
fn usage_given_only_as_cumulative_snapshots_becomes_turn_tokens_that_add_up() {
    let out = to_localcode(&[
        json!({"v": 1, "type": "usage", "scope": "turn", "basis": "cumulative", "final": false, "of": "t1", "input": 100, "output": 10}),
        json!({"v": 1, "type": "usage", "scope": "turn", "basis": "cumulative", "final": false, "of": "t1", "input": 100, "output": 10}),
        json!({"v": 1, "type": "usage", "scope": "turn", "basis": "cumulative", "final": true, "of": "t1", "input": 250, "output": 40}),
        json!({"v": 1, "type": "usage", "scope": "turn", "basis": "cumulative", "final": true, "of": "t2", "input": 50, "output": 5}),
        json!({"v": 1, "type": "terminal", "outcome": "completed"}),
    ]);
    let turns: Vec<(u64, u64)> = out
        .iter()
        .filter(|l| l["type"] == "turn_tokens")
        .map(|l| {
            (
                l["prompt_tokens"].as_str().unwrap().parse().unwrap(),
                l["completion_tokens"].as_str().unwrap().parse().unwrap(),
            )
        })
        .collect();
    assert_eq!(turns, vec![(100, 10), (150, 30), (50, 5)], "a repeated snapshot adds no line");
    assert_eq!(out.last().unwrap()["tokens"], json!({"prompt": 300, "completion": 45, "total": 345}));
}

#[test]
fn usage_stated_only_in_the_terminal_still_adds_up_in_turn_tokens() {
    let out = to_localcode(&[
        json!({"v": 1, "type": "terminal", "outcome": "completed", "usage": {"input": 70, "output": 7}}),
    ]);
    assert_eq!(out[0]["type"], "turn_tokens");
    assert_eq!(out[0]["prompt_tokens"], "70");
    assert_eq!(out[1]["tokens"], json!({"prompt": 70, "completion": 7, "total": 77}));
}

#[test]
fn a_later_generation_run_start_with_an_unknown_major_version_is_refused() {
    let input = "{\"type\": \"run_start\", \"schema_version\": \"2.0\", \"run_id\": \"r\"}\n{\"type\": \"stage\", \"stage\": \"x\"}\n";
    let (out, summary, diags) =
        agentgate::translate_bytes(input.as_bytes(), &agentgate::Options::new(None, Dialect::Localcode));
    assert!(diags[0].message.contains("schema_version \"2.0\""), "{diags:?}");
    assert!(matches!(summary.stopped, Some(agentgate::Stop::Fatal(_))));
    let lines = common::values(std::str::from_utf8(&out).unwrap());
    assert_eq!(lines.len(), 1, "the rest of the stream is refused; only the terminal is written");
    assert_eq!(lines[0]["status"], "incomplete");
}

#[test]
fn a_zero_total_beside_counts_is_one_the_server_did_not_give() {
    // localcode's result counts prompt + completion when the turn_tokens totals sum to 0.
    let input = "{\"type\": \"turn_tokens\", \"prompt_tokens\": \"10\", \"completion_tokens\": \"5\", \"total_tokens\": \"0\"}\n\
                 {\"type\": \"turn_tokens\", \"prompt_tokens\": \"3\", \"completion_tokens\": \"2\", \"total_tokens\": \"0\"}\n\
                 {\"type\": \"result\", \"status\": \"ok\", \"exit_code\": 0, \"reason\": \"completed\", \"final_text\": \"x\", \"tokens\": {\"prompt\": 13, \"completion\": 7, \"total\": 20}}\n";
    assert_eq!(common::translate(input.as_bytes(), Dialect::Localcode, Dialect::Localcode), input);
    let canonical = common::values(&common::translate(input.as_bytes(), Dialect::Localcode, Dialect::Canonical));
    let terminal = canonical.last().unwrap();
    assert_eq!(terminal["usage"], json!({"input": 13, "output": 7, "total": 20}));
    // Written from another dialect, the result adds up as localcode's does.
    let out = to_localcode(&[
        json!({"v": 1, "type": "usage", "scope": "round", "basis": "delta", "final": true, "input": 4, "output": 1, "total": 0}),
        json!({"v": 1, "type": "terminal", "outcome": "completed"}),
    ]);
    let result = out.last().unwrap();
    assert_eq!(result["tokens"], json!({"prompt": 4, "completion": 1, "total": 5}), "{out:?}");
    // A real total stands.
    let out = to_localcode(&[
        json!({"v": 1, "type": "usage", "scope": "round", "basis": "delta", "final": true, "input": 4, "output": 1, "total": 9}),
        json!({"v": 1, "type": "terminal", "outcome": "completed"}),
    ]);
    assert_eq!(out.last().unwrap()["tokens"]["total"], 9);
}

#[test]
fn a_refused_call_is_its_tool_start_and_a_notice_once_whether_or_not_it_was_seen_before() {
    let head = "{\"type\":\"tool_call\",\"id\":\"a\",\"name\":\"read_file\",\"args\":{\"path\":\"x\"}}\n\
{\"type\":\"tool_result\",\"id\":\"a\",\"name\":\"read_file\",\"status\":\"completed\",\"output\":\"ok\"}\n";
    let call = "{\"type\":\"tool_call\",\"id\":\"b\",\"name\":\"bash\",\"args\":{\"command\":\"./deploy.sh\"}}\n";
    let tail = "{\"type\":\"permission_denied\",\"id\":\"b\",\"name\":\"bash\",\"args\":{\"command\":\"./deploy.sh\"},\"reason\":\"needs approval\"}\n\
{\"type\":\"complete\",\"exit_code\":2,\"session_id\":\"s\",\"model\":\"m\"}\n";
    for input in [format!("{head}{tail}"), format!("{head}{call}{tail}")] {
        let out = common::values(&common::translate(input.as_bytes(), Dialect::Adal, Dialect::Localcode));
        let kinds: Vec<&str> = out.iter().map(|l| l["type"].as_str().unwrap()).collect();
        assert_eq!(kinds, vec!["tool_start", "tool_result", "tool_start", "notice", "result"], "{input}");
        assert_eq!((out[2]["name"].as_str(), out[2]["index"].as_str()), (Some("bash"), Some("1")));
        // A shell call's args are its command line, as localcode writes a bash call's.
        assert_eq!(out[2]["args"], "./deploy.sh");
        assert_eq!(out[3]["text"], "permission denied: bash: needs approval");
        assert_eq!(out[4]["reason"], "permission_denied");
    }
}

#[test]
fn text_given_whole_is_written_as_the_content_it_adds_to_what_was_streamed() {
    let out = to_localcode(&[
        // Given whole, with nothing streamed: all of it, after a stream_start.
        json!({"v": 1, "type": "text_replace", "text": "First answer."}),
        json!({"v": 1, "type": "tool_call", "id": "a", "name": "ls", "arguments": {}}),
        // Streamed, then stated whole with more: the rest only, in the same stream.
        json!({"v": 1, "type": "text_start"}),
        json!({"v": 1, "type": "text_delta", "text": "Second "}),
        json!({"v": 1, "type": "text_end", "text": "Second answer."}),
        json!({"v": 1, "type": "tool_call", "id": "b", "name": "ls", "arguments": {}}),
        // Streamed, then rewritten: localcode cannot take back what it wrote.
        json!({"v": 1, "type": "text_start"}),
        json!({"v": 1, "type": "text_delta", "text": "Draft"}),
        json!({"v": 1, "type": "text_replace", "text": "Third answer."}),
        json!({"v": 1, "type": "terminal", "outcome": "completed", "final_text": "Third answer."}),
    ]);
    let lines: Vec<String> = out
        .iter()
        .map(|l| match l["type"].as_str().unwrap() {
            "content" => format!("content {}", l["chunk"].as_str().unwrap()),
            kind => kind.to_string(),
        })
        .collect();
    assert_eq!(
        lines,
        vec![
            "stream_start",
            "content First answer.",
            "tool_start",
            "stream_start",
            "content Second ",
            "content answer.",
            "tool_start",
            "stream_start",
            "content Draft",
            "result"
        ]
    );
    assert_eq!(out.last().unwrap()["final_text"], "Third answer.");

    // wuu's message given only as agent_message_final.
    let wuu = br#"{"thread_id":"t","turn_id":"u","type":"turn_started"}
{"message":"No FIXME left.","thread_id":"t","turn_id":"u","type":"agent_message_final"}
{"awaiting_auto_continuation":false,"input_tokens":1,"output_tokens":1,"thread_id":"t","trace_path":"","turn_id":"u","type":"turn_completed"}
{"final_message":"No FIXME left.","run_id":"r","status":"completed","thread_id":"t","trace_path":"","turn_id":"u","type":"result"}
"#;
    let out = common::values(&common::translate(wuu, Dialect::Wuu, Dialect::Localcode));
    let content: Vec<&str> =
        out.iter().filter(|l| l["type"] == "content").map(|l| l["chunk"].as_str().unwrap()).collect();
    assert_eq!(content, vec!["No FIXME left."]);
}

/// localcode-notes.md's later generation is not the spec's: to localcode it comes out in the
/// spec's generation throughout (issue 53, rule 4), with its lines of the spec's kinds as they
/// were.
#[test]
fn a_later_generation_stream_comes_out_in_the_specs_generation() {
    let input = r#"{"type": "run_start", "schema_version": "1.0", "run_id": "r1", "localcode_version": "0.9"}
{"type": "round_start", "round_idx": 0}
{"type": "tool_call", "name": "read_file", "args": "a.py", "index": "0"}
{"type": "tool_result", "name": "read_file", "args": "a.py", "index": "0", "result": "x=1", "error": "false"}
{"type": "turn_tokens", "prompt_tokens": "100", "completion_tokens": "10", "total_tokens": "110"}
{"type": "round_end", "round_idx": 0}
{"type": "content", "chunk": "Done.", "chars": "5"}
{"type": "turn_end", "completion_status": "completed", "loop_exit_reason": "completed"}
{"type": "result", "status": "ok", "exit_code": 0, "reason": "completed", "final_text": "Done.", "tokens": {"prompt": 100, "completion": 10, "total": 110}}
"#;
    let out = common::translate(input.as_bytes(), Dialect::Localcode, Dialect::Localcode);
    let kinds: Vec<String> = common::values(&out).iter().map(|l| l["type"].as_str().unwrap().to_string()).collect();
    assert_eq!(kinds, ["tool_start", "tool_result", "turn_tokens", "content", "done", "result"], "{out}");
    for line in out.lines().filter(|l| !l.contains("tool_start") && !l.contains("\"done\"")) {
        assert!(input.lines().any(|i| i == line), "not copied: {line}");
    }
    assert!(agentgate::contract::check_stream(Dialect::Localcode.contract(), &out).is_empty(), "{out}");
}

#[test]
fn a_run_error_said_only_in_the_terminal_record_is_an_error_event_before_result() {
    let fixture = |name: &str| std::fs::read(common::fixtures().join(name)).unwrap();
    let errors = |out: &[Value]| -> Vec<String> {
        out.iter().filter(|l| l["type"] == "error").map(|l| l["message"].as_str().unwrap().to_string()).collect()
    };
    // loom says why a run failed only in its Terminal.
    let out = common::values(&common::translate(&fixture("loom/failed.jsonl"), Dialect::Loom, Dialect::Localcode));
    let kinds: Vec<&str> = out.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, vec!["error", "result"]);
    assert!(errors(&out)[0].starts_with("CODEX_HOME is the relative path empty"), "{out:?}");

    // wuu says it in turn_failed and again in its result: one error event.
    let out = common::values(&common::translate(&fixture("wuu/turn-failed.jsonl"), Dialect::Wuu, Dialect::Localcode));
    assert_eq!(errors(&out), vec!["provider error: 503 upstream unavailable"]);

    // Cut to the error event's limit, like any other.
    let out = to_localcode(&[json!({"v": 1, "type": "terminal", "outcome": "failed", "error": "x".repeat(300)})]);
    assert_eq!(errors(&out), vec!["x".repeat(240)]);
    assert_eq!(out.last().unwrap()["type"], "result");
}

#[test]
fn plain_text_args_come_back_as_text_from_every_dialect() {
    let input = concat!(
        r#"{"type": "tool_start", "name": "read_file", "args": "src/a.py", "index": "0"}"#,
        "\n",
        r#"{"type": "tool_result", "name": "read_file", "args": "src/a.py", "index": "0", "result": "x", "error": "false"}"#,
        "\n",
        r#"{"type": "tool_start", "name": "echo", "args": "\"quoted\"", "index": "1"}"#,
        "\n",
        r#"{"type": "result", "status": "ok", "exit_code": 0, "reason": "completed", "final_text": "", "tokens": {"prompt": 0, "completion": 0, "total": 0}}"#,
        "\n",
    );
    // wuu wraps text that is not JSON as a JSON string, adal and base-context as {"raw": text}.
    for via in [Dialect::Wuu, Dialect::Adal, Dialect::BaseContext] {
        let there = common::translate(input.as_bytes(), Dialect::Localcode, via);
        let back = common::values(&common::translate(there.as_bytes(), via, Dialect::Localcode));
        let args: Vec<&str> =
            back.iter().filter(|l| l["type"] == "tool_start").map(|l| l["args"].as_str().unwrap()).collect();
        assert_eq!(args[0], "src/a.py", "via {via:?}");
    }
    // A string value is its text; localcode's own args are kept as they were, quotes and all.
    let out = to_localcode(&[json!({"v": 1, "type": "tool_call", "id": "a", "name": "x", "arguments": "ls -la"})]);
    assert_eq!(out[0]["args"], "ls -la");
    assert_eq!(common::translate(input.as_bytes(), Dialect::Localcode, Dialect::Localcode), input);
}

#[test]
fn streamed_text_from_another_dialect_starts_with_a_stream_start() {
    // wuu's deltas have no start event of their own; localcode's text always has one.
    let out = common::values(&common::translate(
        &std::fs::read(common::fixtures().join("wuu/success.jsonl")).unwrap(),
        Dialect::Wuu,
        Dialect::Localcode,
    ));
    for (i, l) in out.iter().enumerate().filter(|(_, l)| l["type"] == "content") {
        let before = out[..i].iter().rev().find(|p| p["type"] != "content").unwrap();
        assert_eq!(before["type"], "stream_start", "line {i}: {l}");
    }
    // Within one message the deltas go on after a single start.
    let lc = to_localcode(&[
        json!({"v": 1, "type": "text_delta", "text": "a"}),
        json!({"v": 1, "type": "text_delta", "text": "b"}),
    ]);
    let kinds: Vec<&str> = lc.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, vec!["stream_start", "content", "content", "result"]);
}

/// localcode-notes.md: the run_start generation sends calls as `tool_call` and answers them with
/// a status word; `status: "error"` is a failed call (issue "wire truth", rule 4). Read as a
/// plus, not a must: the spec's generation stays the one written.
#[test]
fn the_run_start_generation_is_read_its_error_status_a_failed_call() {
    let input = concat!(
        "{\"type\": \"run_start\", \"schema_version\": \"1.0\", \"run_id\": \"r1\", \"localcode_version\": \"0.9\"}\n",
        "{\"type\": \"round_start\", \"round_idx\": 0}\n",
        "{\"type\": \"tool_call\", \"name\": \"bash\", \"args\": \"ls\", \"index\": \"0\"}\n",
        "{\"type\": \"tool_result\", \"name\": \"bash\", \"args\": \"ls\", \"index\": \"0\", \"result\": \"boom\", \"status\": \"error\"}\n",
        "{\"type\": \"tool_call\", \"name\": \"read_file\", \"args\": \"a.py\", \"index\": \"1\"}\n",
        "{\"type\": \"tool_result\", \"name\": \"read_file\", \"args\": \"a.py\", \"index\": \"1\", \"result\": \"x = 1\", \"status\": \"ok\"}\n",
        "{\"type\": \"round_end\", \"round_idx\": 0}\n",
        "{\"type\": \"turn_end\", \"completion_status\": \"completed\", \"loop_exit_reason\": \"completed\"}\n",
        "{\"type\": \"result\", \"status\": \"ok\", \"exit_code\": 0, \"reason\": \"completed\", \"final_text\": \"done\", \"tokens\": {\"prompt\": 1, \"completion\": 1, \"total\": 2}}\n",
    );
    let adal = common::values(&common::translate(input.as_bytes(), Dialect::Localcode, Dialect::Adal));
    let results: Vec<(&str, &str, &str)> = adal
        .iter()
        .filter(|l| l["type"] == "tool_result")
        .map(|l| (l["name"].as_str().unwrap(), l["status"].as_str().unwrap(), l["output"].as_str().unwrap()))
        .collect();
    assert_eq!(results, [("bash", "failed", "boom"), ("read_file", "completed", "x = 1")]);
    let s = agentgate::summary::summarize(input.as_bytes(), "run", Some(Dialect::Localcode), false);
    assert_eq!((s.tool_calls.total, s.tool_calls.failed), (2, 1));
    assert_eq!(s.run_id.as_deref(), Some("r1"));
}

#[test]
fn a_content_line_over_the_chunk_limit_gives_its_members_to_one_chunk_and_counts_them_once() {
    // localcode.md: a content chunk is at most 2000 characters; a longer one read from a
    // localcode source is written again as several. What the source line held beyond the
    // model went with every chunk (and with a stream_start made up before them): a member no
    // spec names written three times, one the contract refuses counted once per chunk.
    let long = "x".repeat(2500);
    let stream = format!(
        "{{\"type\": \"content\", \"chunk\": \"{long}\", \"chars\": \"2500\", \"zz_mine\": 1, \"index\": \"no\"}}\n"
    );
    let opts = agentgate::Options::new(Some(Dialect::Localcode), Dialect::Localcode);
    let (out, summary, _) = agentgate::translate_bytes(stream.as_bytes(), &opts);
    let out = String::from_utf8(out).unwrap();
    assert_eq!(out.matches("zz_mine").count(), 1, "{out}");
    let chunks = out.lines().filter(|l| l.contains("\"type\": \"content\"")).count();
    assert_eq!(chunks, 2, "{out}");
    let dropped: u64 = summary.report.dropped_fields.values().sum();
    assert!(dropped <= 1, "{:?}", summary.report);
}

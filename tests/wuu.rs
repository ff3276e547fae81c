//! wuu: cumulative usage per turn, bash reported twice but counted once, replacement text,
//! and a stream a wuu consumer accepts whatever the source.

mod common;

use serde_json::{json, Value};

use agentgate::Dialect;

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(common::fixtures().join(name)).unwrap()
}

fn kinds(lines: &[Value]) -> Vec<&str> {
    lines.iter().map(|l| l["type"].as_str().unwrap()).collect()
}

#[test]
fn a_bash_call_reported_as_tool_and_command_events_is_one_call() {
    let out = common::values(&common::translate(&fixture("wuu/success.jsonl"), Dialect::Wuu, Dialect::Canonical));
    let calls: Vec<&Value> = out.iter().filter(|l| l["type"] == "tool_call" && l["id"] == "item-2").collect();
    let results: Vec<&Value> = out.iter().filter(|l| l["type"] == "tool_result" && l["id"] == "item-2").collect();
    let outputs: Vec<&Value> = out.iter().filter(|l| l["type"] == "tool_output" && l["id"] == "item-2").collect();
    assert_eq!((calls.len(), results.len(), outputs.len()), (1, 1, 1));
    assert_eq!(results[0]["error"], "exit status 1");
    // And the output reaches a target that wants it on the result, once.
    let lc = common::values(&common::translate(&fixture("wuu/success.jsonl"), Dialect::Wuu, Dialect::Localcode));
    let bash = lc.iter().find(|l| l["type"] == "tool_result" && l["name"] == "bash").unwrap();
    assert_eq!(bash["result"], "FAIL widget.test.tsx\n");
    assert_eq!(bash["error"], "true");
}

/// The two families of a bash call in either order, also one after the other: one call. An id
/// that a finished call used, started again by the same family, is a new call.
#[test]
fn a_bash_call_whose_families_report_one_after_the_other_is_still_one_call() {
    let line = |kind: &str, item: &str, rest: &str| {
        format!(r#"{{"item_id":"{item}","thread_id":"t","turn_id":"u","type":"{kind}"{rest}}}"#) + "\n"
    };
    let started = r#","arguments":"{\"command\":\"ls\"}","name":"bash""#;
    let output = r#","delta":"a\n""#;
    let completed = r#","error":"","name":"bash","status":"completed""#;
    let mut input = String::from("{\"thread_id\":\"t\",\"turn_id\":\"u\",\"type\":\"turn_started\"}\n");
    for (family, item) in [("command", "c1"), ("tool", "c1"), ("tool", "c2"), ("command", "c2"), ("tool", "c2")] {
        input += &line(&format!("{family}_started"), item, started);
        input += &line(&format!("{family}_output_delta"), item, output);
        input += &line(&format!("{family}_completed"), item, completed);
    }
    input += r#"{"final_message":"x","run_id":"r","status":"completed","thread_id":"t","trace_path":"","turn_id":"u","type":"result"}"#;
    let out = common::values(&common::translate(input.as_bytes(), Dialect::Wuu, Dialect::Adal));
    let calls: Vec<&str> = out.iter().filter(|l| l["type"] == "tool_call").map(|l| l["id"].as_str().unwrap()).collect();
    // c1 once; c2 once for its two families, and once more when the tool family starts it
    // anew: a second call, which adal (calls matched by id) gets under an id of its own.
    assert_eq!(calls, ["c1", "c2", "c2-2"]);
    let outputs: Vec<&str> =
        out.iter().filter(|l| l["type"] == "tool_result").map(|l| l["output"].as_str().unwrap()).collect();
    assert_eq!(outputs, ["a\n", "a\n", "a\n"], "each call's output once");
}

#[test]
fn usage_snapshots_count_once_and_turns_add_up() {
    let lc = common::values(&common::translate(&fixture("wuu/success.jsonl"), Dialect::Wuu, Dialect::Localcode));
    let sum: u64 = lc
        .iter()
        .filter(|l| l["type"] == "turn_tokens")
        .map(|l| l["prompt_tokens"].as_str().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(sum, 3000 + 800, "the latest snapshot of each turn, not the sum of snapshots");
    assert_eq!(lc.last().unwrap()["tokens"]["prompt"], 3800);
}

#[test]
fn other_dialects_give_monotone_cumulative_snapshots_per_turn() {
    let out = common::values(&common::translate(&fixture("localcode/success.jsonl"), Dialect::Localcode, Dialect::Wuu));
    let snapshots: Vec<u64> =
        out.iter().filter(|l| l["type"] == "usage_updated").map(|l| l["input_tokens"].as_u64().unwrap()).collect();
    assert_eq!(snapshots, vec![1200, 2700, 4350, 6050]);
    let done = out.iter().find(|l| l["type"] == "turn_completed").unwrap();
    assert_eq!((done["input_tokens"].as_u64(), done["output_tokens"].as_u64()), (Some(6050), Some(350)));

    // Two turns: the second turn's snapshots start again from its own first figures.
    let input = [
        json!({"v": 1, "type": "turn_start", "id": "a"}),
        json!({"v": 1, "type": "usage", "scope": "round", "basis": "delta", "final": true, "input": 10, "output": 1}),
        json!({"v": 1, "type": "usage", "scope": "round", "basis": "delta", "final": true, "input": 20, "output": 2}),
        json!({"v": 1, "type": "turn_end", "id": "a"}),
        json!({"v": 1, "type": "usage", "scope": "round", "basis": "delta", "final": true, "input": 5, "output": 1}),
        json!({"v": 1, "type": "terminal", "outcome": "completed"}),
    ]
    .iter()
    .map(|v| format!("{v}\n"))
    .collect::<String>();
    let out = common::values(&common::translate(input.as_bytes(), Dialect::Canonical, Dialect::Wuu));
    let seen: Vec<(String, u64)> = out
        .iter()
        .filter(|l| l["type"] == "usage_updated")
        .map(|l| (l["turn_id"].as_str().unwrap().to_string(), l["input_tokens"].as_u64().unwrap()))
        .collect();
    assert_eq!(seen, vec![("a".into(), 10), ("a".into(), 30), ("turn-2".into(), 5)]);
    let back = common::values(&common::translate(
        out.iter().map(|v| format!("{v}\n")).collect::<String>().as_bytes(),
        Dialect::Wuu,
        Dialect::Canonical,
    ));
    assert_eq!(back.last().unwrap()["usage"]["input"], 35);
}

#[test]
fn the_final_message_replaces_the_streamed_text() {
    let out = common::values(&common::translate(&fixture("wuu/success.jsonl"), Dialect::Wuu, Dialect::Adal));
    let answer = out.iter().find(|l| l["type"] == "answer").unwrap();
    assert_eq!(answer["content"], "Fixed <Widget> & its test: 2 files changed.");
}

#[test]
fn a_removed_tool_is_withdrawn_not_answered() {
    let out = common::values(&common::translate(&fixture("wuu/tool-removed.jsonl"), Dialect::Wuu, Dialect::Canonical));
    assert!(out.iter().any(|l| l["type"] == "tool_withdrawn" && l["id"] == "item-1"));
    assert!(!out.iter().any(|l| l["type"] == "tool_result" && l["id"] == "item-1"));
}

#[test]
fn a_first_subagent_update_may_already_be_terminal() {
    let out = common::values(&common::translate(&fixture("wuu/success.jsonl"), Dialect::Wuu, Dialect::Canonical));
    let sub = out.iter().find(|l| l["type"] == "subagent").unwrap();
    assert_eq!(
        (sub["phase"].as_str(), sub["status"].as_str(), sub["id"].as_str()),
        (Some("update"), Some("completed"), Some("agent-7"))
    );
}

#[test]
fn every_source_gives_a_stream_a_wuu_consumer_accepts() {
    for case in common::cases() {
        let text = common::translate(&case.input, case.dialect, Dialect::Wuu);
        for raw in text.lines() {
            assert!(!raw.contains('<') && !raw.contains('>') && !raw.contains('&'), "Go escapes <>&: {raw}");
        }
        let out = common::values(&text);
        let ctx = case.path.display();
        assert_eq!(&kinds(&out)[..2], &["session_configured", "thread_started"], "{ctx}");
        let last = out.last().unwrap();
        assert_eq!(last["type"], "result", "{ctx}");
        for key in ["thread_id", "turn_id", "run_id", "final_message", "trace_path"] {
            assert!(last[key].is_string(), "{ctx}: result.{key}");
        }
        assert!(last.get("error").is_none_or(|e| !e.as_str().unwrap().is_empty()), "{ctx}: error only when non-empty");
        let mut open_turn: Option<String> = None;
        for l in &out {
            let kind = l["type"].as_str().unwrap();
            if kind == "turn_started" {
                assert!(open_turn.is_none(), "{ctx}: a turn starts while another is open");
                open_turn = l["turn_id"].as_str().map(str::to_string);
            }
            if kind.starts_with("tool_")
                || kind.starts_with("command_")
                || kind.starts_with("agent_message")
                || kind == "usage_updated"
            {
                assert_eq!(l["turn_id"].as_str(), open_turn.as_deref(), "{ctx}: {kind} outside its turn");
                assert!(l["thread_id"].is_string(), "{ctx}: {kind} without thread_id");
            }
            if kind.starts_with("tool_") || kind.starts_with("command_") {
                assert!(l["item_id"].is_string(), "{ctx}: {kind} without item_id");
            }
            // (wuu's own text that is not JSON goes back as wuu wrote it.)
            if kind == "tool_started" && case.dialect != Dialect::Wuu {
                let args = l["arguments"].as_str().expect("arguments is text");
                assert!(serde_json::from_str::<Value>(args).is_ok(), "{ctx}: arguments is JSON text: {args}");
            }
            if kind == "tool_completed" {
                assert!(l["status"].is_string() && l["error"].is_string(), "{ctx}: {l}");
            }
            if kind.starts_with("turn_") && kind != "turn_started" {
                open_turn = None;
            }
        }
        assert!(open_turn.is_none(), "{ctx}: the last turn is ended before the result");
    }
}

#[test]
fn unknown_types_and_fields_survive_a_round_trip() {
    let input = fixture("wuu/unknown-events.jsonl");
    let out = common::translate(&input, Dialect::Wuu, Dialect::Wuu);
    assert!(out.contains("{\"at\":\"2026-11-01T10:00:00Z\",\"type\":\"heartbeat\"}"));
    assert!(out.contains("\"sandbox\":\"ro\""));
    assert!(out.contains("\"structured_result\":{\"ok\":true}"));
}

#[test]
fn thread_and_turn_ids_stay_on_lines_whose_ids_the_encoder_does_not_write() {
    // The decoder drops ids naming the current thread and turn only where the encoder writes
    // them back; elsewhere (unknown kinds, diagnostics, the error event, subagents) they are
    // the line's own and come back as they were.
    let lines = [
        r#"{"cwd":"/r","model":"m","provider":"p","thread_id":"t1","type":"thread_started"}"#,
        r#"{"thread_id":"t1","turn_id":"u1","type":"turn_started"}"#,
        r#"{"thread_id":"t1","turn_id":"u1","type":"mystery_event","x":1}"#,
        r#"{"step_index":0,"thread_id":"t1","turn_id":"u1","type":"provider_state"}"#,
        r#"{"agent_id":"a1","status":"running","thread_id":"t1","type":"subagent_updated"}"#,
        r#"{"error":"schema mismatch","retrying":false,"run_id":"r","thread_id":"t1","turn_id":"u1","type":"error"}"#,
        r#"{"path":"a.rs","thread_id":"t1","turn_id":"u1","type":"file_changed"}"#,
        r#"{"final_message":"ok","run_id":"r","status":"completed","thread_id":"t1","trace_path":"","turn_id":"u1","type":"result"}"#,
    ];
    let out = common::translate(lines.join("\n").as_bytes(), Dialect::Wuu, Dialect::Wuu);
    for line in &lines[2..6] {
        assert!(out.lines().any(|l| l == *line), "{line} did not come back as it was:\n{out}");
    }
    // Where the encoder writes them, they are written once, from its state.
    let changed = common::values(&out).into_iter().find(|l| l["type"] == "file_changed").unwrap();
    assert_eq!((changed["thread_id"].as_str(), changed["turn_id"].as_str()), (Some("t1"), Some("u1")));
}

#[test]
fn a_refusal_of_a_call_already_started_fails_that_call_without_starting_it_again() {
    let input = [
        json!({"type": "tool_call", "id": "a", "name": "bash", "args": {"command": "./deploy.sh"}}),
        json!({"type": "permission_denied", "id": "a", "name": "bash", "args": {"command": "./deploy.sh"}, "reason": "needs approval"}),
        json!({"type": "complete", "exit_code": 2, "session_id": "s", "model": "m"}),
    ];
    let input: String = input.iter().map(|l| format!("{l}\n")).collect();
    let out = common::values(&common::translate(input.as_bytes(), Dialect::Adal, Dialect::Wuu));
    let of = |kind: &str| out.iter().filter(|l| l["type"] == kind && l["item_id"] == "a").collect::<Vec<_>>();
    assert_eq!((of("tool_started").len(), of("command_started").len()), (1, 1), "{out:#?}");
    let done = of("tool_completed");
    assert_eq!(done.len(), 1);
    assert_eq!(
        (done[0]["status"].as_str(), done[0]["error"].as_str()),
        (Some("failed"), Some("permission denied: needs approval"))
    );
    assert_eq!(out.last().unwrap()["status"], "permission_denied");

    // A refusal with no call before it is a call of its own, started and failed.
    let alone = [
        json!({"type": "permission_denied", "id": "b", "name": "bash", "args": {"command": "ls"}, "reason": "no"}),
        json!({"type": "complete", "exit_code": 2, "session_id": "s", "model": "m"}),
    ];
    let alone: String = alone.iter().map(|l| format!("{l}\n")).collect();
    let out = common::values(&common::translate(alone.as_bytes(), Dialect::Adal, Dialect::Wuu));
    assert_eq!(kinds(&out).iter().filter(|k| **k == "tool_started").count(), 1);
    assert_eq!(kinds(&out).iter().filter(|k| **k == "tool_completed").count(), 1);

    // And the summary counts the refused call once.
    let s = agentgate::summary::summarize(input.as_bytes(), "run", Some(Dialect::Adal), false);
    assert_eq!((s.tool_calls.total, s.tool_calls.failed), (1, 1));
}

#[test]
fn arguments_given_as_plain_text_are_json_text_when_they_hold_json_and_a_json_string_otherwise() {
    let input = br#"{"type": "tool_start", "name": "write_file", "args": "{\"path\": \"a.py\"}", "index": "0"}
{"type": "tool_start", "name": "read_file", "args": "src/config.py", "index": "1"}
{"type": "tool_start", "name": "list_files", "args": "", "index": "2"}
{"type": "result", "status": "ok", "exit_code": 0, "reason": "completed", "final_text": "", "tokens": {"prompt": 0, "completion": 0, "total": 0}}
"#;
    let out = common::values(&common::translate(input, Dialect::Localcode, Dialect::Wuu));
    let args: Vec<&str> =
        out.iter().filter(|l| l["type"] == "tool_started").map(|l| l["arguments"].as_str().unwrap()).collect();
    // A call without arguments (localcode's empty args) has none: `{}`, as adal and
    // base-context write it, not the JSON string "".
    assert_eq!(args, vec!["{\"path\": \"a.py\"}", "\"src/config.py\"", "{}"]);
    // Both parse, as wuu's readers parse them; the first is the object the text holds.
    assert_eq!(serde_json::from_str::<Value>(args[0]).unwrap(), json!({"path": "a.py"}));
    assert_eq!(serde_json::from_str::<Value>(args[1]).unwrap(), json!("src/config.py"));
}

/// wuu's refused call as adal writes it: the failed result, then the refusal of the same call.
const REFUSED_AFTER_FAILING: &str = concat!(
    r#"{"type":"tool_call","id":"p2","name":"bash","args":{"command":"./deploy.sh"}}"#,
    "\n",
    r#"{"type":"tool_result","id":"p2","name":"bash","status":"failed","output":"permission denied: needs approval"}"#,
    "\n",
    r#"{"type":"permission_denied","id":"p2","name":"bash","args":{"command":"./deploy.sh"},"reason":"permission denied: needs approval"}"#,
    "\n",
    r#"{"type":"complete","exit_code":2,"session_id":"s","model":"m"}"#,
    "\n",
);

#[test]
fn a_refusal_of_a_call_that_already_failed_ends_it_once() {
    let translate = |to| common::values(&common::translate(REFUSED_AFTER_FAILING.as_bytes(), Dialect::Adal, to));
    let count = |out: &[Value], key: &str, kind: &str| out.iter().filter(|l| l[key] == kind).count();

    let wuu = translate(Dialect::Wuu);
    assert_eq!((count(&wuu, "type", "tool_started"), count(&wuu, "type", "tool_completed")), (1, 1), "{wuu:?}");
    let result = wuu.last().unwrap();
    assert_eq!(
        (&result["status"], &result["error"]),
        (&json!("permission_denied"), &json!("permission denied: needs approval"))
    );

    let lc = translate(Dialect::Localcode);
    assert_eq!((count(&lc, "type", "tool_start"), count(&lc, "type", "tool_result")), (1, 1), "{lc:?}");
    // The notice says why once, not "permission denied: bash: permission denied: ...".
    let notice = lc.iter().find(|l| l["type"] == "notice").unwrap();
    assert_eq!(notice["text"], "permission denied: bash: needs approval");

    let bc = translate(Dialect::BaseContext);
    assert_eq!(
        (count(&bc, "type", "tool_execution_start"), count(&bc, "type", "tool_execution_end")),
        (1, 1),
        "{bc:?}"
    );

    let s = agentgate::summary::summarize(REFUSED_AFTER_FAILING.as_bytes(), "run", Some(Dialect::Adal), false);
    let t = &s.tool_calls;
    assert_eq!((t.total, t.failed), (1, 1));
}

#[test]
fn an_empty_model_or_provider_is_one_wuu_does_not_know() {
    let input = concat!(
        r#"{"model":"","provider":"","type":"session_configured","workspace_root":""}"#,
        "\n",
        r#"{"cwd":"","model":"","provider":"","thread_id":"t","type":"thread_started"}"#,
        "\n",
        r#"{"final_message":"ok","run_id":"","status":"completed","thread_id":"t","trace_path":"","turn_id":"","type":"result"}"#,
        "\n",
    );
    let adal = common::values(&common::translate(input.as_bytes(), Dialect::Wuu, Dialect::Adal));
    // adal's complete.model is a string: no model known is its placeholder, not null.
    assert_eq!(adal.last().unwrap()["model"], "unknown");
    let s = agentgate::summary::summarize(input.as_bytes(), "run", Some(Dialect::Wuu), false);
    assert!(s.models.is_empty(), "{:?}", s.models);
    // And wuu gets its lines back: the empty model and provider as they were; the
    // session_configured, which lacks members wuu.md requires (max_parallel, permissions,
    // protocol_version), valid (#53 rule 4), the other lines as read.
    let back = common::translate(input.as_bytes(), Dialect::Wuu, Dialect::Wuu);
    let want = concat!(
        r#"{"max_parallel":1,"model":"","permissions":{},"protocol_version":"wuu-app-server/v0.1","provider":"","type":"session_configured","workspace_root":""}"#,
        "\n",
    );
    assert_eq!(back, format!("{want}{}", input.split_once('\n').unwrap().1));
}

#[test]
fn a_result_that_holds_more_than_its_streamed_output_sends_the_rest() {
    // base-context's last update held the output so far; its result, all of it.
    let out =
        common::values(&common::translate(&fixture("base-context/success.jsonl"), Dialect::BaseContext, Dialect::Wuu));
    let deltas: String = out
        .iter()
        .filter(|l| l["type"] == "tool_output_delta" && l["item_id"] == "toolu_01A9xQ")
        .map(|l| l["delta"].as_str().unwrap())
        .collect();
    assert_eq!(deltas, "total 16\n-rw-r--r-- 1 u u 120 README.md\n");

    // Pieces, then a result that repeats them whole: nothing more is sent.
    let input = [
        json!({"v": 1, "type": "tool_call", "id": "a", "name": "grep", "arguments": {}}),
        json!({"v": 1, "type": "tool_output", "id": "a", "text": "one\n"}),
        json!({"v": 1, "type": "tool_output", "id": "a", "text": "two\n"}),
        json!({"v": 1, "type": "tool_result", "id": "a", "status": "completed", "output": "one\ntwo\n"}),
        json!({"v": 1, "type": "terminal", "outcome": "completed"}),
    ];
    let text: String = input.iter().map(|v| format!("{v}\n")).collect();
    let out = common::values(&common::translate(text.as_bytes(), Dialect::Canonical, Dialect::Wuu));
    let deltas: Vec<&str> =
        out.iter().filter(|l| l["type"] == "tool_output_delta").map(|l| l["delta"].as_str().unwrap()).collect();
    assert_eq!(deltas, vec!["one\n", "two\n"]);
}

/// wuu.md: "Track a session by thread_id, a turn by turn_id ... and a subagent by agent_id".
/// A subagent's own turn (thread `agent-1`) neither opens nor closes the run's turns, adds
/// nothing to its text or usage, and comes back to wuu as it was.
#[test]
fn a_subagents_turns_are_not_the_runs_turns() {
    let input = concat!(
        r#"{"cwd":"/repo","model":"m","provider":"p","thread_id":"root","type":"thread_started"}"#,
        "\n",
        r#"{"thread_id":"root","turn_id":"turn-1","type":"turn_started"}"#,
        "\n",
        r#"{"agent_id":"agent-1","agent_type":"explorer","status":"running","thread_id":"agent-1","type":"subagent_started"}"#,
        "\n",
        r#"{"thread_id":"agent-1","turn_id":"turn-1","type":"turn_started"}"#,
        "\n",
        r#"{"delta":"sub text","thread_id":"agent-1","turn_id":"turn-1","type":"agent_message_delta"}"#,
        "\n",
        r#"{"cache_creation_tokens":0,"cache_read_tokens":0,"input_tokens":50,"output_tokens":5,"thread_id":"agent-1","turn_id":"turn-1","type":"usage_updated"}"#,
        "\n",
        r#"{"error":"sub failed","thread_id":"agent-1","turn_id":"turn-1","type":"turn_failed"}"#,
        "\n",
        r#"{"delta":"done","thread_id":"root","turn_id":"turn-1","type":"agent_message_delta"}"#,
        "\n",
        r#"{"cache_creation_tokens":0,"cache_read_tokens":0,"input_tokens":100,"output_tokens":10,"thread_id":"root","turn_id":"turn-1","type":"usage_updated"}"#,
        "\n",
        r#"{"awaiting_auto_continuation":false,"input_tokens":100,"output_tokens":10,"thread_id":"root","trace_path":"","turn_id":"turn-1","type":"turn_completed"}"#,
        "\n",
        r#"{"final_message":"done","run_id":"r","status":"completed","thread_id":"root","trace_path":"","turn_id":"turn-1","type":"result"}"#,
        "\n",
    );
    let lc = common::values(&common::translate(input.as_bytes(), Dialect::Wuu, Dialect::Localcode));
    let kinds: Vec<&str> = lc.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["stream_start", "content", "turn_tokens", "done", "result"]);
    let result = lc.last().unwrap();
    assert_eq!((result["status"].as_str(), result["final_text"].as_str()), (Some("ok"), Some("done")));
    assert_eq!(result["tokens"], serde_json::json!({"prompt": 100, "completion": 10, "total": 110}));
    let s = agentgate::summary::summarize(input.as_bytes(), "run", Some(Dialect::Wuu), false);
    assert_eq!(s.turns, 1);
    assert_eq!(common::translate(input.as_bytes(), Dialect::Wuu, Dialect::Wuu), input);
}

/// wuu.md: "Identifiers can be empty when setup failed before a session or run existed." Such a
/// result is that run, failed, and wuu gets it back with nothing made up before it.
#[test]
fn a_result_before_any_session_is_that_run() {
    let input = "{\"error\":\"no model configured\",\"final_message\":\"\",\"run_id\":\"\",\"status\":\"failed\",\"thread_id\":\"\",\"trace_path\":\"\",\"turn_id\":\"\",\"type\":\"result\"}\n";
    assert_eq!(common::translate(input.as_bytes(), Dialect::Wuu, Dialect::Wuu), input);
    let via = common::translate(input.as_bytes(), Dialect::Wuu, Dialect::Canonical);
    assert_eq!(common::translate(via.as_bytes(), Dialect::Canonical, Dialect::Wuu), input);
    let t = common::values(&via).pop().unwrap();
    assert_eq!((t["outcome"].as_str(), t["error"].as_str()), (Some("failed"), Some("no model configured")));
    let lc = common::values(&common::translate(input.as_bytes(), Dialect::Wuu, Dialect::Localcode));
    assert_eq!(lc.last().unwrap()["exit_code"], 1);
}

/// wuu.md lists session_configured's members (protocol_version, provider, model, max_parallel,
/// workspace_root, permissions; the notes add effort and variant) and thread_started's
/// (thread_id, provider, model, cwd): a run from another dialect gets every one, with the
/// JSON type a reader expects.
#[test]
fn the_session_lines_made_for_another_dialect_have_every_member_the_spec_lists() {
    let input = std::fs::read(common::fixtures().join("localcode/success.jsonl")).unwrap();
    let out = common::values(&common::translate(&input, Dialect::Localcode, Dialect::Wuu));
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(out[0]["type"], "session_configured");
    assert_eq!(
        keys(&out[0]),
        [
            "effort",
            "max_parallel",
            "model",
            "permissions",
            "protocol_version",
            "provider",
            "type",
            "variant",
            "workspace_root"
        ]
    );
    // The string form wuu's own docs and runner tests write.
    assert_eq!(out[0]["protocol_version"], "wuu-app-server/v0.1");
    assert!(out[0]["max_parallel"].is_i64() && out[0]["permissions"].is_object());
    assert_eq!(out[1]["type"], "thread_started");
    assert_eq!(keys(&out[1]), ["cwd", "model", "provider", "thread_id", "type"]);
}

/// wuu.md: "For bash, the stream additionally emits command_started, command_output_delta,
/// command_completed ... Command events add name, command, and arguments when available".
/// Translated to itself, a bash call's twins are the lines the source wrote, members of their
/// own included (a process_id, a member no spec names); from another dialect they are made.
#[test]
fn a_bash_calls_command_twins_come_back_from_wuu_to_itself_as_they_were() {
    let source = String::from_utf8(fixture("wuu/success.jsonl")).unwrap();
    let mut lines: Vec<Value> = common::values(&source);
    for l in lines.iter_mut().filter(|l| l["type"].as_str().is_some_and(|t| t.starts_with("command_"))) {
        l["process_id"] = json!(4242);
        l["zz_unknown"] = json!({"depth": [1, {"x": "<y>"}]});
    }
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let out = common::values(&common::translate(text.as_bytes(), Dialect::Wuu, Dialect::Wuu));
    assert_eq!(out, lines);
    let twins = out.iter().filter(|l| l["type"].as_str().is_some_and(|t| t.starts_with("command_"))).count();
    assert_eq!(twins, 3, "started, output delta, completed: as the fixture has them, once each");
    // A stream whose bash call has no twins (not what wuu writes) keeps having none.
    let bare: String =
        source.lines().filter(|l| !l.contains("\"type\":\"command_")).map(|l| format!("{l}\n")).collect();
    assert_eq!(common::translate(bare.as_bytes(), Dialect::Wuu, Dialect::Wuu), bare);
    // The command family first (wuu.md does not order the families): still the lines as read.
    let command_first = concat!(
        r#"{"cwd":"","model":"m","provider":"p","thread_id":"t","type":"thread_started"}"#,
        "\n",
        r#"{"thread_id":"t","turn_id":"u","type":"turn_started"}"#,
        "\n",
        r#"{"arguments":"{\"command\":\"ls\"}","command":"ls","item_id":"i1","name":"bash","process_id":"p7","thread_id":"t","turn_id":"u","type":"command_started"}"#,
        "\n",
        r#"{"arguments":"{\"command\":\"ls\"}","item_id":"i1","name":"bash","thread_id":"t","turn_id":"u","type":"tool_started"}"#,
        "\n",
        r#"{"error":"","item_id":"i1","name":"bash","status":"completed","thread_id":"t","turn_id":"u","type":"command_completed"}"#,
        "\n",
        r#"{"error":"","item_id":"i1","name":"bash","status":"completed","thread_id":"t","turn_id":"u","type":"tool_completed"}"#,
        "\n",
        r#"{"awaiting_auto_continuation":false,"input_tokens":0,"output_tokens":0,"thread_id":"t","trace_path":"","turn_id":"u","type":"turn_completed"}"#,
        "\n",
        r#"{"final_message":"","run_id":"","status":"completed","thread_id":"t","trace_path":"","turn_id":"u","type":"result"}"#,
        "\n"
    );
    assert_eq!(common::translate(command_first.as_bytes(), Dialect::Wuu, Dialect::Wuu), command_first);
    // Through canonical, the same: the lines of a bash call are carried there whole.
    let through = |text: &str| {
        let canonical = common::translate(text.as_bytes(), Dialect::Wuu, Dialect::Canonical);
        common::translate(canonical.as_bytes(), Dialect::Canonical, Dialect::Wuu)
    };
    assert_eq!(common::values(&through(&text)), lines);
    assert_eq!(through(&bare), bare);
    assert_eq!(through(command_first), command_first);
    // And to another dialect the call is counted once (one call, its output once).
    let canonical = common::translate(text.as_bytes(), Dialect::Wuu, Dialect::Canonical);
    let localcode = common::values(&common::translate(canonical.as_bytes(), Dialect::Canonical, Dialect::Localcode));
    let starts = localcode.iter().filter(|l| l["type"] == "tool_start").count();
    assert_eq!(
        starts,
        common::values(&common::translate(text.as_bytes(), Dialect::Wuu, Dialect::Localcode))
            .iter()
            .filter(|l| l["type"] == "tool_start")
            .count()
    );
    assert!(!common::translate(canonical.as_bytes(), Dialect::Canonical, Dialect::Localcode).contains("zz_unknown"));
    // From another dialect the twins are written from the tool_* lines.
    let from_localcode = common::translate(&fixture("localcode/success.jsonl"), Dialect::Localcode, Dialect::Wuu);
    let made = common::values(&from_localcode);
    let started = made.iter().find(|l| l["type"] == "command_started").expect("a bash call's twin");
    let tool = made.iter().find(|l| l["type"] == "tool_started" && l["item_id"] == started["item_id"]).unwrap();
    assert_eq!(started["arguments"], tool["arguments"]);
}

/// Through canonical, a twin's line is a repeat record that carries it, whether its output
/// delta repeats the one before it or not (wuu.md calls it "the same output as
/// tool_output_delta"; a stream that differs still comes back as it was).
#[test]
fn a_twins_output_comes_back_through_canonical_whether_or_not_it_repeats() {
    let stream = |twin_delta: &str, between: bool| {
        let mut s = String::new();
        s += r#"{"cwd":"","model":"m","provider":"p","thread_id":"t","type":"thread_started"}"#;
        s += "\n";
        s += r#"{"thread_id":"t","turn_id":"u","type":"turn_started"}"#;
        s += "\n";
        for item in ["i1", "i2"] {
            s += &format!(
                r#"{{"arguments":"{{\"command\":\"ls\"}}","item_id":"{item}","name":"bash","thread_id":"t","turn_id":"u","type":"tool_started"}}"#
            );
            s += "\n";
            s += &format!(
                r#"{{"arguments":"{{\"command\":\"ls\"}}","command":"ls","item_id":"{item}","name":"bash","thread_id":"t","turn_id":"u","type":"command_started"}}"#
            );
            s += "\n";
        }
        // Written as wuu writes (Go's encoder escapes <, > and &).
        s += r#"{"delta":"a.txt \u003cb\u003e\n","item_id":"i1","thread_id":"t","turn_id":"u","type":"tool_output_delta"}"#;
        s += "\n";
        if between {
            s += r#"{"delta":"other\n","item_id":"i2","thread_id":"t","turn_id":"u","type":"tool_output_delta"}"#;
            s += "\n";
        }
        let go = json!(twin_delta).to_string().replace('<', "\\u003c").replace('>', "\\u003e");
        s += &format!(r#"{{"delta":{go},"item_id":"i1","thread_id":"t","turn_id":"u","type":"command_output_delta"}}"#);
        s += "\n";
        s
    };
    for (twin, between) in [("a.txt <b>\n", false), ("a.txt\n", false), ("a.txt <b>\n", true)] {
        let input = stream(twin, between);
        let canonical = common::translate(input.as_bytes(), Dialect::Wuu, Dialect::Canonical);
        // The twin is a repeat record, carrying its line.
        assert!(canonical.contains(r#""type":"repeat""#), "{canonical}");
        let back = common::translate(canonical.as_bytes(), Dialect::Canonical, Dialect::Wuu);
        let direct = common::translate(input.as_bytes(), Dialect::Wuu, Dialect::Wuu);
        assert_eq!(back, direct, "twin delta {twin:?}");
        let twin_out = common::values(&back).into_iter().find(|l| l["type"] == "command_output_delta").unwrap();
        assert_eq!(twin_out["delta"], twin);
    }
}

/// wuu.md: "Command events add name, command, and arguments when available; completion adds
/// status and error", and wuu-notes.md: `command` and `process_id` when the arguments hold
/// them. Every twin a bash call gets from another source says so, not only command_started;
/// command_removed carries the name alone, as wuu's writer gives it.
#[test]
fn every_command_twin_of_a_bash_call_names_the_call_and_its_command() {
    let input = concat!(
        r#"{"v":1,"type":"session","id":"thread-7","model":"m","cwd":"/repo"}"#,
        "\n",
        r#"{"v":1,"type":"turn_start","id":"turn-1"}"#,
        "\n",
        r#"{"v":1,"type":"tool_call","id":"b1","name":"bash","arguments":{"command":"ls <dir>","process_id":"p9"}}"#,
        "\n",
        r#"{"v":1,"type":"tool_output","id":"b1","text":"a\n"}"#,
        "\n",
        r#"{"v":1,"type":"tool_result","id":"b1","status":"failed","error":"exit status 2"}"#,
        "\n",
        r#"{"v":1,"type":"tool_call","id":"b2","name":"bash","arguments":{"command":"sleep 9"}}"#,
        "\n",
        r#"{"v":1,"type":"tool_withdrawn","id":"b2"}"#,
        "\n",
        r#"{"v":1,"type":"turn_end","id":"turn-1","status":"completed"}"#,
        "\n",
        r#"{"v":1,"type":"terminal","outcome":"completed","final_text":""}"#,
        "\n"
    );
    let out = common::translate(input.as_bytes(), Dialect::Canonical, Dialect::Wuu);
    let line = |kind: &str, item: &str| -> String {
        out.lines()
            .find(|l| l.contains(&format!(r#""type":"{kind}""#)) && l.contains(&format!(r#""item_id":"{item}""#)))
            .unwrap_or_else(|| panic!("no {kind} for {item} in\n{out}"))
            .to_string()
    };
    // Written by hand from the spec: keys sorted, Go's escapes, the arguments as tool_started's.
    let args = r#""arguments":"{\"command\":\"ls \u003cdir\u003e\",\"process_id\":\"p9\"}""#;
    assert_eq!(
        line("command_output_delta", "b1"),
        format!(
            r#"{{{args},"command":"ls \u003cdir\u003e","delta":"a\n","item_id":"b1","name":"bash","process_id":"p9","thread_id":"thread-7","turn_id":"turn-1","type":"command_output_delta"}}"#
        )
    );
    assert_eq!(
        line("command_completed", "b1"),
        format!(
            r#"{{{args},"command":"ls \u003cdir\u003e","error":"exit status 2","item_id":"b1","name":"bash","process_id":"p9","status":"failed","thread_id":"thread-7","turn_id":"turn-1","type":"command_completed"}}"#
        )
    );
    assert!(line("tool_started", "b1").starts_with(&format!("{{{args},")));
    assert_eq!(
        line("command_removed", "b2"),
        r#"{"item_id":"b2","name":"bash","thread_id":"thread-7","turn_id":"turn-1","type":"command_removed"}"#
    );
    // Twins are one call: read back, the run counts its calls as the source did.
    let calls =
        |text: &str, d| agentgate::summary::summarize(text.as_bytes(), "run", Some(d), false).tool_calls.by_name;
    assert_eq!(calls(&out, Dialect::Wuu), calls(input, Dialect::Canonical), "{out}");
}

#[test]
fn a_string_protocol_version_validates_and_is_kept_as_read() {
    // wuu's runner tests write `"protocol_version":"wuu-app-server/v0.1"`; the spec names the
    // member without a type. A number stays a number.
    for version in [r#""wuu-app-server/v0.1""#, "2"] {
        let line = format!(
            r#"{{"effort":"","max_parallel":0,"model":"m","permissions":{{"mode":"standard"}},"protocol_version":{version},"provider":"p","type":"session_configured","variant":"","workspace_root":"/repo"}}"#
        );
        let text = format!(
            "{line}\n{}\n",
            r#"{"final_message":"","run_id":"","status":"failed","thread_id":"","trace_path":"","turn_id":"","type":"result"}"#
        );
        let findings = agentgate::contract::check_stream(Dialect::Wuu.contract(), &text);
        assert!(findings.is_empty(), "{version}: {findings:?}");
        let out = common::translate(text.as_bytes(), Dialect::Wuu, Dialect::Wuu);
        assert_eq!(out, text, "{version}");
    }
}

/// Issue 54's two-turn run: usage snapshots are cumulative per turn (wuu.md: "use the latest
/// snapshot per turn"), not across turns. Turn 1 says 1184 input, then 1184 input with 512
/// read from cache: its input stayed put while its cache rose, so the input cannot include the
/// cache (the report says so) and turn 1 is 1184 uncached + 512 from cache. Turn 2 says 1391
/// input with 1100 from cache: 1391 uncached + 1100 (the run's reading holds). base-context
/// (input excludes cache) then carries 1184 and 1391 of input, 512 and 1100 of cache read:
/// the 2575 input tokens the source states, never a difference below zero read as 0.
const TWO_TURNS: &str = concat!(
    r#"{"cwd":"/w","model":"m","provider":"p","thread_id":"th","type":"thread_started"}"#,
    "\n",
    r#"{"thread_id":"th","turn_id":"t1","type":"turn_started"}"#,
    "\n",
    r#"{"cache_creation_tokens":0,"cache_read_tokens":0,"input_tokens":1184,"output_tokens":10,"thread_id":"th","turn_id":"t1","type":"usage_updated"}"#,
    "\n",
    r#"{"cache_creation_tokens":0,"cache_read_tokens":512,"input_tokens":1184,"output_tokens":20,"thread_id":"th","turn_id":"t1","type":"usage_updated"}"#,
    "\n",
    r#"{"awaiting_auto_continuation":true,"input_tokens":1184,"output_tokens":20,"thread_id":"th","trace_path":"","turn_id":"t1","type":"turn_completed"}"#,
    "\n",
    r#"{"thread_id":"th","turn_id":"t2","type":"turn_started"}"#,
    "\n",
    r#"{"cache_creation_tokens":0,"cache_read_tokens":1100,"input_tokens":1391,"output_tokens":30,"thread_id":"th","turn_id":"t2","type":"usage_updated"}"#,
    "\n",
    r#"{"message":"done","thread_id":"th","turn_id":"t2","type":"agent_message_final"}"#,
    "\n",
    r#"{"awaiting_auto_continuation":false,"input_tokens":1391,"output_tokens":30,"thread_id":"th","trace_path":"","turn_id":"t2","type":"turn_completed"}"#,
    "\n",
    r#"{"final_message":"done","run_id":"r","status":"completed","thread_id":"th","trace_path":"","turn_id":"t2","type":"result"}"#,
    "\n",
);

#[test]
fn two_turns_of_snapshots_conserve_every_turns_input() {
    let bc = common::values(&common::translate(TWO_TURNS.as_bytes(), Dialect::Wuu, Dialect::BaseContext));
    let usage: Vec<(u64, u64, u64)> = bc
        .iter()
        .filter(|l| l["type"] == "message_end" && l["message"]["role"] == "assistant")
        .map(|l| {
            let u = &l["message"]["usage"];
            (u["input"].as_u64().unwrap(), u["cacheRead"].as_u64().unwrap(), u["output"].as_u64().unwrap())
        })
        .collect();
    let sum = usage.iter().fold((0, 0, 0), |a, u| (a.0 + u.0, a.1 + u.1, a.2 + u.2));
    assert_eq!(sum, (1184 + 1391, 512 + 1100, 20 + 30), "{usage:?}");
    assert!(usage.iter().any(|u| u.0 == 1391 && u.1 == 1100), "turn 2 as one message: {usage:?}");
    // Canonical input includes cache: 1184 + 512 + 1391 + 1100.
    let t = common::values(&common::translate(TWO_TURNS.as_bytes(), Dialect::Wuu, Dialect::Canonical));
    let u = &t.last().unwrap()["usage"];
    assert_eq!(
        (u["input"].as_u64(), u["cache_read"].as_u64(), u["output"].as_u64()),
        (Some(4187), Some(1612), Some(50))
    );
    // Claude's result: input excludes cache.
    let cc = common::values(&common::translate(TWO_TURNS.as_bytes(), Dialect::Wuu, Dialect::ClaudeCode));
    let r = &cc.last().unwrap()["usage"];
    assert_eq!((r["input_tokens"].as_u64(), r["cache_read_input_tokens"].as_u64()), (Some(2575), Some(1612)));
    let (_, summary, _) = agentgate::translate_bytes(
        TWO_TURNS.as_bytes(),
        &agentgate::Options::new(Some(Dialect::Wuu), Dialect::BaseContext),
    );
    assert!(
        summary.report.basis.keys().any(|k| k.contains("stayed put while its cache")),
        "{:?}",
        summary.report.basis
    );
}

/// A turn's snapshots with no turn start between two turns (the second turn's first snapshot
/// below the first turn's last, in the same scope): the second is a new count, not a
/// difference of 0.
#[test]
fn a_snapshot_below_the_one_before_it_is_a_new_count_not_zero() {
    let input = concat!(
        r#"{"cache_creation_tokens":0,"cache_read_tokens":0,"input_tokens":1184,"output_tokens":20,"type":"usage_updated"}"#,
        "\n",
        r#"{"cache_creation_tokens":0,"cache_read_tokens":0,"input_tokens":391,"output_tokens":30,"type":"usage_updated"}"#,
        "\n",
        r#"{"final_message":"done","run_id":"r","status":"completed","thread_id":"th","trace_path":"","turn_id":"t2","type":"result"}"#,
        "\n",
    );
    let t = common::values(&common::translate(input.as_bytes(), Dialect::Wuu, Dialect::Canonical));
    let u = &t.last().unwrap()["usage"];
    assert_eq!((u["input"].as_u64(), u["output"].as_u64()), (Some(1184 + 391), Some(50)));
}

/// A bash call wuu refused (status `denied`, issue 54 part 3): it did not run, so it is a
/// refusal, not a failed call: Claude's result lists it in `permission_denials`, codex writes
/// its command `declined` ("not run", codex.md), adal a `permission_denied` with the reason.
const DENIED: &str = concat!(
    r#"{"cwd":"/repo","model":"m","provider":"p","thread_id":"th","type":"thread_started"}"#,
    "\n",
    r#"{"thread_id":"th","turn_id":"t1","type":"turn_started"}"#,
    "\n",
    r#"{"arguments":"{\"command\":\"./deploy.sh\"}","item_id":"item-2","name":"bash","thread_id":"th","turn_id":"t1","type":"tool_started"}"#,
    "\n",
    r#"{"arguments":"{\"command\":\"./deploy.sh\"}","command":"./deploy.sh","item_id":"item-2","name":"bash","thread_id":"th","turn_id":"t1","type":"command_started"}"#,
    "\n",
    r#"{"error":"not allowed","item_id":"item-2","name":"bash","status":"denied","thread_id":"th","turn_id":"t1","type":"tool_completed"}"#,
    "\n",
    r#"{"arguments":"{\"command\":\"./deploy.sh\"}","command":"./deploy.sh","error":"not allowed","item_id":"item-2","name":"bash","status":"denied","thread_id":"th","turn_id":"t1","type":"command_completed"}"#,
    "\n",
    r#"{"message":"I may not deploy.","thread_id":"th","turn_id":"t1","type":"agent_message_final"}"#,
    "\n",
    r#"{"awaiting_auto_continuation":false,"input_tokens":10,"output_tokens":5,"thread_id":"th","trace_path":"","turn_id":"t1","type":"turn_completed"}"#,
    "\n",
    r#"{"final_message":"I may not deploy.","run_id":"r","status":"completed","thread_id":"th","trace_path":"","turn_id":"t1","type":"result"}"#,
    "\n",
);

#[test]
fn a_refused_tool_status_is_a_refusal_in_every_target() {
    for word in ["declined", "denied", "rejected", "permission_denied"] {
        let input = DENIED.replace("\"status\":\"denied\"", &format!("\"status\":\"{word}\""));
        let cc = common::values(&common::translate(input.as_bytes(), Dialect::Wuu, Dialect::ClaudeCode));
        let result = cc.last().unwrap();
        assert_eq!(
            result["permission_denials"],
            // wuu's bash is Claude's Bash (docs/mapping.md, "Shell calls").
            json!([{"tool_name": "Bash", "tool_use_id": "item-2", "tool_input": {"command": "./deploy.sh"}}]),
            "{word}"
        );
        assert_eq!(result["result"], "I may not deploy.", "{word}");
        let cx = common::values(&common::translate(input.as_bytes(), Dialect::Wuu, Dialect::Codex));
        let done: Vec<&serde_json::Value> =
            cx.iter().filter(|l| l["type"] == "item.completed" && l["item"]["type"] == "command_execution").collect();
        assert_eq!(done.len(), 1, "{word}");
        assert_eq!(
            (&done[0]["item"]["status"], &done[0]["item"]["exit_code"]),
            (&json!("declined"), &json!(null)),
            "{word}"
        );
        let ad = common::values(&common::translate(input.as_bytes(), Dialect::Wuu, Dialect::Adal));
        let denied = ad.iter().find(|l| l["type"] == "permission_denied").expect(word);
        assert_eq!(
            (&denied["id"], &denied["name"], &denied["reason"]),
            (&json!("item-2"), &json!("bash"), &json!("not allowed"))
        );
    }
}

#[test]
fn a_line_whose_member_has_a_type_wuus_reader_refuses_comes_back_valid_and_says_so() {
    // wuu.md: file_changed carries thread_id and turn_id (strings) beside tool_name, path and
    // action; subagent_* lines carry agent_id, thread_id, agent_type, status (strings). A line
    // holding one of another type was written anew with the member as it came: not valid.
    let stream = concat!(
        "{\"thread_id\":\"th\",\"turn_id\":\"turn-1\",\"type\":\"turn_started\"}\n",
        "{\"action\":\"modified\",\"path\":\"src/w.tsx\",\"thread_id\":{\"x\":1},\"tool_name\":\"apply_patch\",\"turn_id\":\"turn-1\",\"type\":\"file_changed\"}\n",
        "{\"agent_id\":\"a\",\"agent_type\":7,\"status\":\"running\",\"thread_id\":\"th\",\"type\":\"subagent_updated\"}\n",
    );
    let opts = agentgate::Options::new(Some(Dialect::Wuu), Dialect::Wuu);
    let (out, summary, _) = agentgate::translate_bytes(stream.as_bytes(), &opts);
    let out = String::from_utf8(out).unwrap();
    let problems = agentgate::contract::check_stream(Dialect::Wuu.contract(), &out);
    assert!(problems.is_empty(), "{problems:?}\n{out}");
    let lines = common::values(&out);
    let changed = lines.iter().find(|l| l["type"] == "file_changed").unwrap();
    assert!(changed["thread_id"].is_string(), "a string, not the object: {changed}");
    let subagent = lines.iter().find(|l| l["type"] == "subagent_updated").unwrap();
    assert_eq!(subagent["agent_type"], "", "the emptiest string: {subagent}");
    let report = &summary.report;
    assert_eq!(report.dropped_fields.get("file_changed.thread_id"), Some(&1), "{report:?}");
    assert_eq!(report.dropped_fields.get("subagent_updated.agent_type"), Some(&1), "{report:?}");
    assert_eq!(report.synthesized.get("subagent_updated.agent_type"), Some(&1), "{report:?}");
}

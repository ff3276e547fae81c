//! adal's ordering guarantees, held for every source.

mod common;

use serde_json::{json, Value};

use agentgate::Dialect;

fn to_adal(canonical: &[Value]) -> Vec<Value> {
    let input: String = canonical.iter().map(|v| format!("{v}\n")).collect();
    common::values(&common::translate(input.as_bytes(), Dialect::Canonical, Dialect::Adal))
}

fn kinds(lines: &[Value]) -> Vec<&str> {
    lines.iter().map(|l| l["type"].as_str().unwrap()).collect()
}

#[test]
fn nothing_follows_permission_denied_but_complete_with_exit_code_2() {
    let out = to_adal(&[
        json!({"v": 1, "type": "tool_call", "id": "a", "name": "bash", "arguments": {"command": "rm -rf /"}}),
        json!({"v": 1, "type": "permission_denied", "id": "a", "name": "bash", "arguments": {"command": "rm -rf /"}, "reason": "needs approval"}),
        json!({"v": 1, "type": "tool_call", "id": "b", "name": "read_file", "arguments": {}}),
        json!({"v": 1, "type": "tool_result", "id": "b", "status": "completed", "output": ""}),
        json!({"v": 1, "type": "terminal", "outcome": "failed"}),
    ]);
    assert_eq!(kinds(&out), vec!["tool_call", "permission_denied", "complete"]);
    assert_eq!(out[2]["exit_code"], 2);
}

#[test]
fn a_run_stopped_for_approval_names_the_call_it_stopped_at() {
    // A source that ends permission_denied listing the actions awaiting approval (loom's
    // Approval) and no refusal record of its own: the refusal is the first action, a call of
    // its own; the model request before it (loom's calls are what a model asked for) is not
    // the one refused.
    let out = to_adal(&[
        json!({"v": 1, "type": "tool_call", "id": "a", "name": "read_file", "arguments": {"path": "x"}}),
        json!({"v": 1, "type": "tool_result", "id": "a", "status": "completed", "output": "ok"}),
        json!({"v": 1, "type": "tool_call", "id": "b", "name": "merge", "arguments": {"branch": "main"}}),
        json!({"v": 1, "type": "approval", "actions": ["repository.merge"]}),
        json!({"v": 1, "type": "terminal", "outcome": "permission_denied"}),
    ]);
    assert_eq!(kinds(&out), vec!["tool_call", "tool_result", "tool_call", "permission_denied", "complete"]);
    assert_eq!(
        out[3],
        json!({"type": "permission_denied", "id": "approval-1", "name": "repository.merge", "args": {}, "reason": "approval required: repository.merge"})
    );
    assert_eq!(out[4]["exit_code"], 2);

    // A notice that named the call (localcode's refusal) says why; one naming another does not.
    for (notice, reason) in [
        ("permission denied: merge: protected branch", "protected branch"),
        ("permission denied: rm: destructive", "approval required"),
        ("context is nearly full", "approval required"),
    ] {
        let out = to_adal(&[
            json!({"v": 1, "type": "tool_call", "id": "b", "name": "merge", "arguments": {"branch": "main"}}),
            json!({"v": 1, "type": "notice", "text": notice}),
            json!({"v": 1, "type": "terminal", "outcome": "permission_denied"}),
        ]);
        assert_eq!(kinds(&out), vec!["tool_call", "permission_denied", "complete"], "{notice}");
        assert_eq!(out[1]["reason"], reason, "{notice}");
    }

    // Every call answered, or none made: no call to name. Exit code 2 still comes after a
    // permission_denied (adal.md: a refusal is 'permission_denied event ... then complete with
    // exit_code: 2'): one of its own, saying why; the answered calls stay answered.
    for calls in [
        vec![
            json!({"v": 1, "type": "tool_call", "id": "a", "name": "read_file", "arguments": {}}),
            json!({"v": 1, "type": "tool_result", "id": "a", "status": "completed", "output": "ok"}),
        ],
        vec![],
    ] {
        let mut input = calls.clone();
        input.push(
            json!({"v": 1, "type": "terminal", "outcome": "permission_denied", "error": "permission denied: rm"}),
        );
        let out = to_adal(&input);
        let denied = out.iter().find(|l| l["type"] == "permission_denied").unwrap_or_else(|| panic!("{out:?}"));
        assert_eq!(denied["reason"], "permission denied: rm");
        assert_ne!(denied["id"], "a", "not the call that completed");
        assert_eq!(out.last().unwrap()["exit_code"], 2);
        let problems = agentgate::contract::check_stream(Dialect::Adal.contract(), &lines_of(&out));
        assert!(problems.is_empty(), "{problems:?}");
    }
}

fn lines_of(out: &[Value]) -> String {
    out.iter().map(|v| format!("{v}\n")).collect()
}

#[test]
fn a_run_stopped_for_approval_at_a_call_that_failed_names_that_call() {
    // wuu reports a refused call as a failed one, then the run's permission_denied: adal's
    // exit code 2 comes with the permission_denied that names the call, after its result.
    let input = concat!(
        r#"{"thread_id":"t","turn_id":"u","type":"turn_started"}"#,
        "\n",
        r#"{"arguments":"{\"command\":\"rm -rf dist\"}","item_id":"i1","name":"bash","thread_id":"t","turn_id":"u","type":"tool_started"}"#,
        "\n",
        r#"{"error":"permission denied","item_id":"i1","name":"bash","status":"failed","thread_id":"t","turn_id":"u","type":"tool_completed"}"#,
        "\n",
        r#"{"error":"permission denied: bash rm -rf dist","final_message":"","run_id":"r","status":"permission_denied","thread_id":"t","trace_path":"","turn_id":"u","type":"result"}"#,
        "\n",
    );
    let out = common::values(&common::translate(input.as_bytes(), Dialect::Wuu, Dialect::Adal));
    assert_eq!(kinds(&out), vec!["tool_call", "tool_result", "permission_denied", "complete"]);
    assert_eq!(
        out[2],
        json!({"type": "permission_denied", "id": "i1", "name": "bash", "args": {"command": "rm -rf dist"}, "reason": "permission denied: bash rm -rf dist"})
    );
    assert_eq!(out[3]["exit_code"], 2);

    // A failed call followed by one that completed: the run did not stop at a call, so the
    // refusal is one of its own, not either call.
    let out = to_adal(&[
        json!({"v": 1, "type": "tool_call", "id": "a", "name": "bash", "arguments": {}}),
        json!({"v": 1, "type": "tool_result", "id": "a", "status": "failed", "output": "no"}),
        json!({"v": 1, "type": "tool_call", "id": "b", "name": "read_file", "arguments": {}}),
        json!({"v": 1, "type": "tool_result", "id": "b", "status": "completed", "output": "ok"}),
        json!({"v": 1, "type": "terminal", "outcome": "permission_denied"}),
    ]);
    let denied: Vec<&Value> = out.iter().filter(|l| l["type"] == "permission_denied").collect();
    assert_eq!(denied.len(), 1, "{out:?}");
    assert!(denied[0]["id"] != "a" && denied[0]["id"] != "b", "{out:?}");
}

#[test]
fn a_failed_run_says_why_in_an_error_event_before_complete() {
    let out =
        to_adal(&[json!({"v": 1, "type": "terminal", "outcome": "failed", "error": "auth failed: token expired"})]);
    assert_eq!(kinds(&out), vec!["error", "complete"]);
    assert_eq!(out[0]["message"], "auth failed: token expired");
    assert_eq!(out[1]["exit_code"], 1);
}

#[test]
fn an_answer_comes_before_complete_and_only_on_success() {
    let ok = to_adal(&[
        json!({"v": 1, "type": "final_answer", "text": "done"}),
        json!({"v": 1, "type": "terminal", "outcome": "completed"}),
    ]);
    assert_eq!(kinds(&ok), vec!["answer", "complete"]);
    let cut = to_adal(&[
        json!({"v": 1, "type": "final_answer", "text": "half"}),
        json!({"v": 1, "type": "terminal", "outcome": "interrupted"}),
    ]);
    assert_eq!(kinds(&cut), vec!["error", "complete"]);
    assert_eq!(cut[0]["message"], "interrupted");
}

#[test]
fn a_result_for_a_call_never_seen_gets_its_call_first() {
    let out = to_adal(&[
        json!({"v": 1, "type": "tool_result", "id": "z", "name": "grep", "status": "failed", "output": "boom"}),
        json!({"v": 1, "type": "terminal", "outcome": "completed"}),
    ]);
    assert_eq!(kinds(&out), vec!["tool_call", "tool_result", "complete"]);
    assert_eq!(out[0]["id"], "z");
    assert_eq!(out[1]["id"], "z");
    assert_eq!(out[1]["status"], "failed");
}

#[test]
fn ids_are_synthesized_deterministically_for_calls_that_have_none() {
    let input = std::fs::read(common::fixtures().join("localcode/success.jsonl")).unwrap();
    let a = common::values(&common::translate(&input, Dialect::Localcode, Dialect::Adal));
    let b = common::values(&common::translate(&input, Dialect::Localcode, Dialect::Adal));
    assert_eq!(a, b);
    let ids: Vec<&str> = a.iter().filter(|l| l["type"] == "tool_call").map(|l| l["id"].as_str().unwrap()).collect();
    assert_eq!(ids, vec!["call-1", "call-2", "call-3", "call-4"]);
    let session = a.last().unwrap()["session_id"].as_str().unwrap().to_string();
    assert_eq!(session.len(), 36, "a UUID derived from the input: {session}");
    let other = common::values(&common::translate(
        &std::fs::read(common::fixtures().join("localcode/timeout.jsonl")).unwrap(),
        Dialect::Localcode,
        Dialect::Adal,
    ));
    assert_ne!(other.last().unwrap()["session_id"].as_str().unwrap(), session, "another input, another id");
}

#[test]
fn a_derived_session_id_is_the_whole_inputs_and_a_named_session_is_kept() {
    // Two runs alike up to their last line: the session id adal needs is derived from every
    // byte, so they differ (ids made at the start of a run can only use its first lines).
    let input = std::fs::read_to_string(common::fixtures().join("localcode/success.jsonl")).unwrap();
    let other = input.replace("\"completion_tokens\": \"40\"", "\"completion_tokens\": \"41\"");
    assert_ne!(input, other);
    let session = |text: &str| {
        let out = common::values(&common::translate(text.as_bytes(), Dialect::Localcode, Dialect::Adal));
        out.last().unwrap()["session_id"].as_str().unwrap().to_string()
    };
    assert_ne!(session(&input), session(&other));
    // A run that names its session keeps that name (and then needs no digest of its input).
    let wuu = std::fs::read(common::fixtures().join("wuu/success.jsonl")).unwrap();
    let out = common::values(&common::translate(&wuu, Dialect::Wuu, Dialect::Adal));
    assert_eq!(out.last().unwrap()["session_id"], "thread-9f2c");
}

#[test]
fn arguments_that_are_not_an_object_are_kept_whole() {
    let out = to_adal(&[
        json!({"v": 1, "type": "tool_call", "id": "a", "name": "read_file", "arguments_text": "src/main.rs"}),
    ]);
    assert_eq!(out[0]["args"], json!({"raw": "src/main.rs"}));
    let out = to_adal(&[
        json!({"v": 1, "type": "tool_call", "id": "a", "name": "bash", "arguments_text": "{\"command\":\"ls\"}"}),
    ]);
    assert_eq!(out[0]["args"], json!({"command": "ls"}));
}

#[test]
fn arguments_given_as_json_text_become_the_object_they_hold_byte_for_byte_as_adal_writes_it() {
    // loom writes a call's arguments as JSON text: compact (kept in its member order, copied),
    // spaced or with a float (read and written again): adal's args is the object, compact.
    let line = |args: &str| {
        let call = json!({"arguments": args, "call_id": "c", "kind": "ToolCall", "name": "edit", "schema_version": 1, "turn": 1});
        format!("{call}\n")
    };
    for (args, written) in [
        (r#"{"b":1,"a":[1,"x\"y"],"c":{"z":null}}"#, r#"{"b":1,"a":[1,"x\"y"],"c":{"z":null}}"#),
        (r#"{"b": 1, "a": [1]}"#, r#"{"b":1,"a":[1]}"#),
        (r#"{"x":1.50,"y":2e0}"#, r#"{"x":1.5,"y":2.0}"#),
    ] {
        let out = common::translate(line(args).as_bytes(), Dialect::Loom, Dialect::Adal);
        let first = out.lines().next().unwrap();
        assert_eq!(first, format!(r#"{{"type":"tool_call","id":"c","name":"edit","args":{written}}}"#), "{args}");
    }
}

#[test]
fn the_older_generation_without_ids_is_matched_by_name() {
    let input = concat!(
        "{\"type\":\"tool_call\",\"name\":\"read_file\",\"args\":{\"file_path\":\"a\"}}\n",
        "{\"type\":\"tool_call\",\"name\":\"bash\",\"args\":{\"command\":\"ls\"}}\n",
        "{\"type\":\"tool_result\",\"name\":\"bash\",\"status\":\"error\"}\n",
        "{\"type\":\"tool_result\",\"name\":\"read_file\",\"status\":\"success\"}\n",
        "{\"type\":\"complete\",\"exit_code\":0,\"session_id\":\"s\",\"model\":\"m\"}\n",
    );
    let out = common::values(&common::translate(input.as_bytes(), Dialect::Adal, Dialect::Adal));
    let pairs: Vec<(&str, &str)> = out
        .iter()
        .filter(|l| l["type"] != "complete")
        .map(|l| (l["type"].as_str().unwrap(), l["id"].as_str().unwrap()))
        .collect();
    assert_eq!(
        pairs,
        vec![("tool_call", "call-1"), ("tool_call", "call-2"), ("tool_result", "call-2"), ("tool_result", "call-1")]
    );
    assert_eq!(out[2]["status"], "failed");
    assert_eq!(out[3]["status"], "completed");
}

#[test]
fn an_answer_given_whole_is_the_assistants_text_where_the_target_streams_text() {
    let input = b"{\"type\":\"tool_call\",\"id\":\"a\",\"name\":\"bash\",\"args\":{\"command\":\"ls\"}}\n\
{\"type\":\"tool_result\",\"id\":\"a\",\"name\":\"bash\",\"status\":\"completed\",\"output\":\"x\"}\n\
{\"type\":\"answer\",\"content\":\"All done.\"}\n\
{\"type\":\"complete\",\"exit_code\":0,\"session_id\":\"s\",\"model\":\"m\"}\n";
    let lc = common::values(&common::translate(input, Dialect::Adal, Dialect::Localcode));
    let tail: Vec<&str> = lc.iter().rev().take(3).rev().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(tail, vec!["stream_start", "content", "result"]);
    assert_eq!(
        (lc[lc.len() - 2]["chunk"].as_str(), lc[lc.len() - 2]["chars"].as_str()),
        (Some("All done."), Some("9"))
    );
    assert_eq!(lc.last().unwrap()["final_text"], "All done.");

    let wuu = common::values(&common::translate(input, Dialect::Adal, Dialect::Wuu));
    let finals: Vec<&Value> = wuu.iter().filter(|l| l["type"] == "agent_message_final").collect();
    assert_eq!(finals.len(), 1);
    assert_eq!(finals[0]["message"], "All done.");
    let at = |kind: &str| wuu.iter().position(|l| l["type"] == kind).unwrap();
    assert!(at("tool_completed") < at("agent_message_final") && at("agent_message_final") < at("turn_completed"));

    // And back: the text comes home as the one answer, not twice.
    for via in [Dialect::Localcode, Dialect::Wuu] {
        let there = common::translate(input, Dialect::Adal, via);
        let back = common::values(&common::translate(there.as_bytes(), via, Dialect::Adal));
        let answers: Vec<&Value> = back.iter().filter(|l| l["type"] == "answer").collect();
        assert_eq!(answers.len(), 1, "{via}");
        assert_eq!(answers[0]["content"], "All done.");
    }
}

#[test]
fn an_answer_that_repeats_streamed_text_or_recaps_an_ended_turn_is_not_written_twice() {
    // localcode streams its answer and repeats it as final_text: wuu gets one message.
    let lc = std::fs::read(common::fixtures().join("localcode/success.jsonl")).unwrap();
    let wuu = common::values(&common::translate(&lc, Dialect::Localcode, Dialect::Wuu));
    let finals = wuu.iter().filter(|l| l["type"] == "agent_message_final").count();
    let canonical = common::values(&common::translate(&lc, Dialect::Localcode, Dialect::Canonical));
    let messages = canonical.iter().filter(|l| l["type"] == "text_start").count().max(1);
    assert_eq!(finals, messages);
    // wuu's final_message recaps a turn that has ended: no content after localcode's done.
    let input = br#"{"thread_id":"t","turn_id":"u","type":"turn_started"}
{"awaiting_auto_continuation":false,"input_tokens":1,"output_tokens":1,"thread_id":"t","trace_path":"","turn_id":"u","type":"turn_completed"}
{"final_message":"ok","run_id":"r","status":"completed","thread_id":"t","trace_path":"","turn_id":"u","type":"result"}
"#;
    let out = common::values(&common::translate(input, Dialect::Wuu, Dialect::Localcode));
    assert!(out.iter().all(|l| l["type"] != "content"), "{out:?}");
    assert_eq!(out.last().unwrap()["final_text"], "ok");
}

#[test]
fn a_call_taken_back_is_cancelled() {
    // wuu's tool_removed withdraws a call that will have no result: adal, whose readers keep
    // the latest state per call, gets a cancelled result rather than a call left running.
    let out = to_adal(&[
        json!({"v": 1, "type": "tool_call", "id": "a", "name": "grep", "arguments": {"pattern": "TODO"}}),
        json!({"v": 1, "type": "tool_withdrawn", "id": "a"}),
        json!({"v": 1, "type": "tool_withdrawn", "id": "a"}),
        json!({"v": 1, "type": "terminal", "outcome": "completed"}),
    ]);
    assert_eq!(kinds(&out), vec!["tool_call", "tool_result", "complete"]);
    assert_eq!(out[1], json!({"type": "tool_result", "id": "a", "name": "grep", "status": "cancelled", "output": ""}));

    // A summary counts it as a call, not as a failure.
    let input: String = out.iter().map(|v| format!("{v}\n")).collect();
    let s = agentgate::summary::summarize(input.as_bytes(), "run", Some(Dialect::Adal), false);
    let t = &s.tool_calls;
    assert_eq!((t.total, t.failed), (1, 0));
}

/// adal.md, Event Types: `complete | exit_code, session_id, model` — both strings in its
/// example (a UUID, a model id). A source that names neither still gets strings: a UUID made
/// from the input, and the placeholder "unknown", which reads back as no model.
#[test]
fn a_complete_always_has_its_session_id_and_model_as_strings() {
    let localcode = "{\"type\": \"result\", \"status\": \"ok\", \"exit_code\": 0, \"reason\": \"completed\", \"final_text\": \"\", \"tokens\": {\"prompt\": 0, \"completion\": 0, \"total\": 0}}\n";
    let out = common::values(&common::translate(localcode.as_bytes(), Dialect::Localcode, Dialect::Adal));
    let complete = out.last().unwrap();
    assert_eq!(complete["type"], "complete");
    assert_eq!(complete["model"], "unknown");
    let id = complete["session_id"].as_str().expect("a string");
    assert_eq!((id.len(), id.matches('-').count()), (36, 4), "a UUID: {id}");
    let back = common::values(&common::translate(
        common::translate(localcode.as_bytes(), Dialect::Localcode, Dialect::Adal).as_bytes(),
        Dialect::Adal,
        Dialect::Canonical,
    ));
    assert!(back.last().unwrap().get("model").is_none(), "the placeholder is no model: {back:?}");
}

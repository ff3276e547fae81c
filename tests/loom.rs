//! loom: the spec's recorded runs kept byte for byte, Usage snapshots counted once, and every
//! other dialect written as one Session line and a Terminal that hold to loom's rules.

mod common;

use serde_json::Value;

use agentgate::Dialect;

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(common::fixtures().join(name)).unwrap()
}

#[test]
fn the_specs_recorded_runs_are_written_back_byte_for_byte() {
    for name in ["loom/approval-required.jsonl", "loom/session.jsonl", "loom/failed.jsonl", "loom/partial-usage.jsonl"]
    {
        let input = fixture(name);
        assert_eq!(common::translate(&input, Dialect::Loom, Dialect::Loom).as_bytes(), &input[..], "{name}");
        let canonical = common::translate(&input, Dialect::Loom, Dialect::Canonical);
        assert_eq!(
            common::translate(canonical.as_bytes(), Dialect::Canonical, Dialect::Loom).as_bytes(),
            &input[..],
            "{name} via canonical"
        );
    }
}

#[test]
fn a_partial_usage_snapshot_is_superseded_by_the_final_one() {
    let out =
        common::values(&common::translate(&fixture("loom/partial-usage.jsonl"), Dialect::Loom, Dialect::Canonical));
    let usage = &out.last().unwrap()["usage"];
    assert_eq!((usage["input"].as_u64(), usage["output"].as_u64()), (Some(340), Some(14)));
    assert_eq!(usage["cache_read"], 64);
}

#[test]
fn a_session_line_carries_its_calls_model_and_totals_to_other_dialects() {
    let out = common::values(&common::translate(&fixture("loom/session.jsonl"), Dialect::Loom, Dialect::Adal));
    let kinds: Vec<&str> = out.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, vec!["tool_call", "tool_result", "complete"]);
    assert_eq!((out[0]["id"].as_str(), out[0]["name"].as_str()), (Some("call-0001"), Some("Read")));
    assert_eq!(out[1]["status"], "completed");
    assert_eq!(out[2]["model"], "a-model");
    let lc = common::values(&common::translate(&fixture("loom/session.jsonl"), Dialect::Loom, Dialect::Localcode));
    assert_eq!(lc.last().unwrap()["tokens"], serde_json::json!({"prompt": 2500, "completion": 78, "total": 2578}));
}

fn assert_sorted_without_nulls(v: &Value, ctx: &str) {
    match v {
        Value::Null => panic!("{ctx}: null"),
        Value::Object(m) => {
            let keys: Vec<&String> = m.keys().collect();
            assert!(keys.windows(2).all(|w| w[0] < w[1]), "{ctx}: members out of order: {keys:?}");
            m.values().for_each(|x| assert_sorted_without_nulls(x, ctx));
        }
        Value::Array(a) => a.iter().for_each(|x| assert_sorted_without_nulls(x, ctx)),
        _ => {}
    }
}

#[test]
fn every_dialect_written_as_loom_holds_to_its_rules() {
    for case in common::cases() {
        let ctx = case.path.display().to_string();
        let text = common::translate(&case.input, case.dialect, Dialect::Loom);
        let out = common::values(&text);
        for l in &out {
            assert_sorted_without_nulls(l, &ctx);
            assert_eq!(l["schema_version"], 1, "{ctx}");
        }
        let terminal = out.last().unwrap();
        assert_eq!(terminal["kind"], "Terminal", "{ctx}");
        assert_eq!(out.iter().filter(|l| l["kind"] == "Terminal").count(), 1, "{ctx}");
        let want_status = match terminal["stop_reason"].as_str() {
            Some("Completed" | "ApprovalRequired") => 0,
            Some(_) => 3,
            None => {
                assert!(terminal["error"].is_string(), "{ctx}: a failed run says why");
                1
            }
        };
        assert_eq!(terminal["exit_status"], want_status, "{ctx}: exit status follows the stop reason");
        if terminal["stop_reason"] == "ApprovalRequired" {
            assert_eq!(out[out.len() - 2]["kind"], "Approval", "{ctx}: Approval just before the Terminal");
        }
        if case.dialect == Dialect::Loom {
            continue;
        }
        // One Session line whose totals are the source's totals.
        let sessions: Vec<&Value> = out.iter().filter(|l| l["kind"] == "Session").collect();
        assert_eq!(sessions.len(), 1, "{ctx}");
        assert!(
            out.iter().all(|l| ["Session", "Approval", "Terminal"].contains(&l["kind"].as_str().unwrap())),
            "{ctx}"
        );
        let s = sessions[0];
        assert_eq!(s["adapter"], case.dialect.name(), "{ctx}");
        assert_eq!(s["transcript_digest"].as_str().unwrap().len(), 64, "{ctx}");
        let canonical = common::values(&common::translate(&case.input, case.dialect, Dialect::Canonical));
        let usage = &canonical.last().unwrap()["usage"];
        for (loom, canon) in
            [("input_tokens", "input"), ("output_tokens", "output"), ("cache_read_input_tokens", "cache_read")]
        {
            assert_eq!(s.get(loom), usage.get(canon), "{ctx}: {loom}");
        }
    }
}

#[test]
fn the_transcript_digest_is_the_sha256_of_the_input_bytes() {
    let out = common::values(&common::translate(b"", Dialect::Adal, Dialect::Loom));
    // An empty input: no session ran, so only the Terminal.
    assert_eq!(out.len(), 1);
    let input = fixture("adal/success.jsonl");
    let out = common::values(&common::translate(&input, Dialect::Adal, Dialect::Loom));
    let digest = out[0]["transcript_digest"].as_str().unwrap().to_string();
    let expected = {
        use sha2::{Digest, Sha256};
        agentgate::io::framing::hex(&Sha256::digest(&input))
    };
    assert_eq!(digest, expected);
}

#[test]
fn every_stop_reason_of_the_notes_decodes_and_is_written_back() {
    for (stop, status, outcome) in [
        ("Completed", 0, "completed"),
        ("ApprovalRequired", 0, "permission_denied"),
        ("NothingAdmissible", 3, "incomplete"),
        ("StepBudget", 3, "incomplete"),
        ("NoLocalExecutor", 3, "incomplete"),
        ("Refused", 3, "incomplete"),
        ("ConfinementUnavailable", 3, "incomplete"),
    ] {
        let line = format!(
            "{{\"exit_status\":{status},\"kind\":\"Terminal\",\"schema_version\":1,\"stop_reason\":\"{stop}\"}}\n"
        );
        let canonical = common::values(&common::translate(line.as_bytes(), Dialect::Loom, Dialect::Canonical));
        let t = canonical.last().unwrap();
        assert_eq!(t["outcome"], outcome, "{stop}");
        if outcome == "incomplete" {
            assert_eq!(t["reason"], stop);
        }
        let back = common::translate(line.as_bytes(), Dialect::Loom, Dialect::Loom);
        let back = back.lines().last().unwrap();
        assert_eq!(format!("{back}\n"), line, "{stop}");
    }
}

#[test]
fn a_count_past_the_largest_integer_leaves_the_session_to_its_projection_error() {
    let run = |prompt: &str| {
        format!(
            "{{\"type\": \"tool_start\", \"name\": \"bash\", \"args\": \"ls\", \"index\": \"0\"}}\n\
             {{\"type\": \"turn_tokens\", \"prompt_tokens\": \"{prompt}\", \"completion_tokens\": \"5\", \"total_tokens\": \"7\"}}\n\
             {{\"type\": \"result\", \"status\": \"ok\", \"exit_code\": 0, \"reason\": \"completed\", \"final_text\": \"x\"}}\n"
        )
    };
    // The largest integer is held as it is.
    let out =
        common::values(&common::translate(run("9223372036854775807").as_bytes(), Dialect::Localcode, Dialect::Loom));
    assert_eq!(out[0]["input_tokens"].as_u64(), Some(9_223_372_036_854_775_807));
    assert!(out[0].get("projection_error").is_none());
    // One past it: every summary field absent, the reason in projection_error.
    let input = run("9223372036854775808");
    let out = common::values(&common::translate(input.as_bytes(), Dialect::Localcode, Dialect::Loom));
    assert_eq!(out.len(), 2, "{out:?}");
    let session = out[0].as_object().unwrap();
    let mut keys: Vec<&str> = session.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["kind", "projection_error", "schema_version", "source", "transcript_digest"]);
    let why = session["projection_error"].as_str().unwrap();
    assert!(why.starts_with("input_tokens 9223372036854775808 "), "{why}");
    assert_eq!(out[1]["kind"], "Terminal");
    assert_eq!(out[1]["stop_reason"], "Completed");
    let problems = Dialect::Loom.contract().check_line(&out[0]);
    assert!(problems.is_empty(), "{problems:?}");
}

#[test]
fn a_run_stopped_for_approval_awaits_the_call_it_stopped_at() {
    // No refusal record names the call: the Approval line names the last call, which was left
    // unanswered (localcode) or answered as failed (wuu's refused call).
    let wuu = concat!(
        r#"{"arguments":"{}","item_id":"i1","name":"bash","thread_id":"t","turn_id":"u","type":"tool_started"}"#,
        "\n",
        r#"{"error":"permission denied","item_id":"i1","name":"bash","status":"failed","thread_id":"t","turn_id":"u","type":"tool_completed"}"#,
        "\n",
        r#"{"error":"permission denied","final_message":"","run_id":"r","status":"permission_denied","thread_id":"t","trace_path":"","turn_id":"u","type":"result"}"#,
        "\n",
    );
    for (input, from) in
        [(wuu.as_bytes().to_vec(), Dialect::Wuu), (fixture("localcode/permission-denied.jsonl"), Dialect::Localcode)]
    {
        let out = common::values(&common::translate(&input, from, Dialect::Loom));
        let approval = &out[out.len() - 2];
        assert_eq!(approval["kind"], "Approval", "{from:?}");
        assert_eq!(approval["actions"], serde_json::json!(["bash"]), "{from:?}");
    }
}

#[test]
fn a_session_line_lists_every_call_also_where_ids_start_again() {
    // loom's ids start again each turn: the recorded run's pick_protocol (turn 1) and first
    // select_action (turn 2) are both `call-1`. Read back from another dialect, the Session line
    // lists one entry per call, in the order they were made (with the ids the other dialect
    // had to make distinct; adal's refusal is a call of its own, the action awaiting approval).
    let input = fixture("loom/approval-required.jsonl");
    let made: Vec<(String, String)> = common::values(std::str::from_utf8(&input).unwrap())
        .iter()
        .filter(|l| l["kind"] == "ToolCall")
        .map(|l| (l["call_id"].as_str().unwrap().to_string(), l["name"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(made.len(), 9);
    assert_eq!(made[0].0, made[1].0);
    for via in [Dialect::Adal, Dialect::Wuu] {
        let other = common::translate(&input, Dialect::Loom, via);
        let out = common::values(&common::translate(other.as_bytes(), via, Dialect::Loom));
        let session = out.iter().find(|l| l["kind"] == "Session").unwrap_or_else(|| panic!("{via:?}: no Session"));
        let listed: Vec<(String, String)> = session["tool_calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["call_id"].as_str().unwrap().to_string(), c["name"].as_str().unwrap().to_string()))
            .collect();
        let mut want = made.clone();
        want[1].0 = "call-1-2".into();
        if via == Dialect::Adal {
            want.push(("approval-1".into(), "repository.merge".into()));
        }
        assert_eq!(listed, want, "via {via:?}");
    }
}

/// loom.md's recorded run gives `call-1` to the classifier's call (turn 1) and again to the
/// agent's (turn 2): ids are the provider's, per model binding. Targets that match results
/// to calls by id get distinct ids, the first keeping its own; loom and canonical keep the
/// source's ids as they were.
#[test]
fn a_call_id_given_twice_becomes_two_ids_where_the_target_matches_calls_by_id() {
    let input = fixture("loom/approval-required.jsonl");
    let ids = |to: Dialect, kind: &str, key: &str| -> Vec<String> {
        let field = to.contract().type_field.clone();
        common::values(&common::translate(&input, Dialect::Loom, to))
            .iter()
            .filter(|l| l[field.as_str()] == kind)
            .map(|l| l[key].as_str().unwrap().to_string())
            .collect()
    };
    let want = ["call-1", "call-1-2", "call-2", "call-3", "call-4", "call-5", "call-6", "call-7", "call-8"];
    assert_eq!(ids(Dialect::Adal, "tool_call", "id"), want);
    assert_eq!(ids(Dialect::Wuu, "tool_started", "item_id"), want);
    let bc: Vec<String> = common::values(&common::translate(&input, Dialect::Loom, Dialect::BaseContext))
        .iter()
        .filter(|l| l["type"] == "message_end" && l["message"]["role"] == "assistant")
        .flat_map(|l| l["message"]["content"].as_array().unwrap().clone())
        .filter(|b| b["type"] == "toolCall")
        .map(|b| b["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(bc, want);
    // loom itself, and canonical, keep what the source said.
    assert_eq!(ids(Dialect::Canonical, "tool_call", "id")[..2], ["call-1", "call-1"]);
}

/// A result that names an id given twice answers the latest call that had it, as it did in
/// the source; a later call may already have the id that would have been made up.
#[test]
fn a_result_for_a_repeated_id_answers_the_latest_call_that_had_it() {
    let lines = concat!(
        "{\"v\":1,\"type\":\"tool_call\",\"id\":\"x\",\"name\":\"first\",\"arguments\":{}}\n",
        "{\"v\":1,\"type\":\"tool_result\",\"id\":\"x\",\"status\":\"completed\",\"output\":\"1\"}\n",
        "{\"v\":1,\"type\":\"tool_call\",\"id\":\"x-2\",\"name\":\"second\",\"arguments\":{}}\n",
        "{\"v\":1,\"type\":\"tool_call\",\"id\":\"x\",\"name\":\"third\",\"arguments\":{}}\n",
        "{\"v\":1,\"type\":\"tool_result\",\"id\":\"x\",\"status\":\"failed\",\"output\":\"3\"}\n",
        "{\"v\":1,\"type\":\"tool_result\",\"id\":\"x-2\",\"status\":\"completed\",\"output\":\"2\"}\n",
        "{\"v\":1,\"type\":\"terminal\",\"outcome\":\"completed\"}\n",
    );
    let out = common::values(&common::translate(lines.as_bytes(), Dialect::Canonical, Dialect::Adal));
    let pairs: Vec<(String, String, String)> = out
        .iter()
        .filter(|l| l["type"] == "tool_result")
        .map(|l| (l["id"].to_string(), l["name"].to_string(), l["output"].to_string()))
        .collect();
    let p = |id: &str, name: &str, out: &str| (format!("{id:?}"), format!("{name:?}"), format!("{out:?}"));
    assert_eq!(pairs, vec![p("x", "first", "1"), p("x-3", "third", "3"), p("x-2", "second", "2")]);
}

/// loom.md, Stability: "a new optional field ... of a record one of its fields holds (an entry
/// of models or tool_calls), is not a break: a reader that reads members by name ignores it".
/// Such a member of a Session's tool_calls entry comes back to loom as it was, also through the
/// canonical stream.
#[test]
fn an_unknown_member_of_a_tool_calls_entry_comes_back() {
    let input = String::from_utf8(fixture("loom/session.jsonl"))
        .unwrap()
        .replace(r#""call_id":"call-0001","error":false"#, r#""call_id":"call-0001","duration_ms":12,"error":false"#);
    assert!(input.contains("duration_ms\":12"));
    assert_eq!(common::translate(input.as_bytes(), Dialect::Loom, Dialect::Loom), input);
    let via = common::translate(input.as_bytes(), Dialect::Loom, Dialect::Canonical);
    assert_eq!(common::translate(via.as_bytes(), Dialect::Canonical, Dialect::Loom), input);
}

/// loom.md, Approval: "Written just before the terminal record when the run stopped
/// ApprovalRequired." A stream cut after its Approval did not stop so (its terminal is made: the
/// input ended without one): the Approval is not written, and the report says it was dropped.
#[test]
fn an_approval_is_written_only_just_before_an_approval_required_terminal() {
    let whole = String::from_utf8(fixture("loom/approval-required.jsonl")).unwrap();
    let cut: String = whole.lines().take_while(|l| !l.contains("\"Terminal\"")).map(|l| format!("{l}\n")).collect();
    assert!(cut.lines().last().unwrap().contains("\"Approval\""));
    let (out, summary, _) =
        agentgate::translate_bytes(cut.as_bytes(), &agentgate::Options::new(Some(Dialect::Loom), Dialect::Loom));
    let out = String::from_utf8(out).unwrap();
    let kinds: Vec<String> = common::values(&out).iter().map(|l| l["kind"].as_str().unwrap().to_string()).collect();
    assert_eq!(kinds.last().map(String::as_str), Some("Terminal"));
    assert!(!kinds.iter().any(|k| k == "Approval"), "{kinds:?}");
    assert_eq!(common::values(&out).last().unwrap()["exit_status"], 1, "failed: the input ended without a terminal");
    assert_eq!(summary.report.dropped_kinds.get("approval (the run did not stop ApprovalRequired)"), Some(&1));
    assert!(agentgate::contract::check_stream(Dialect::Loom.contract(), &out).is_empty());
    // An Approval a line away from its terminal goes just before it.
    let mut lines: Vec<&str> = whole.lines().collect();
    let at = lines.iter().position(|l| l.contains("\"Approval\"")).unwrap();
    let approval = lines.remove(at);
    lines.insert(at - 1, approval);
    let moved: String = lines.iter().map(|l| format!("{l}\n")).collect();
    assert_eq!(common::translate(moved.as_bytes(), Dialect::Loom, Dialect::Loom), whole);
}

#[test]
fn validate_holds_an_approval_to_its_terminal_both_ways() {
    let whole = String::from_utf8(fixture("loom/approval-required.jsonl")).unwrap();
    let check = |text: &str| agentgate::contract::check_stream(Dialect::Loom.contract(), text);
    assert!(check(&whole).is_empty());
    // Cut after the Approval: the stream ends after it (and has no terminal).
    let cut: String = whole.lines().take_while(|l| !l.contains("\"Terminal\"")).map(|l| format!("{l}\n")).collect();
    let n = cut.lines().count() as u64;
    let found = check(&cut);
    assert!(
        found.iter().any(|(line, m)| *line == n && m.contains("\"Approval\" line must come just before a terminal")),
        "{found:?}"
    );
    // An Approval before a Completed terminal.
    let completed = whole.replace("\"stop_reason\":\"ApprovalRequired\"", "\"stop_reason\":\"Completed\"");
    let found = check(&completed);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].1.contains("not before \"Terminal\""), "{found:?}");
}

/// Issue 54: loom passes the vendor's figures "not normalized", and an input below its own
/// cache figure cannot include it. Usage{input_tokens: 210, cache_creation_input_tokens: 1024}
/// is 210 uncached + 1024 written to cache: canonical input 1234 (it includes cache).
#[test]
fn an_input_below_its_cache_figure_is_read_as_excluding_it() {
    let input = concat!(
        r#"{"kind":"Turn","model":"m","phase":"Classification","schema_version":1,"turn":1,"turn_stop":"EndTurn"}"#,
        "\n",
        r#"{"cache_creation_input_tokens":1024,"final_usage":true,"input_tokens":210,"kind":"Usage","model":"m","output_tokens":7,"schema_version":1,"turn":1}"#,
        "\n",
        r#"{"exit_status":0,"kind":"Terminal","schema_version":1,"steps":0,"stop_reason":"Completed"}"#,
        "\n",
    );
    let t = common::values(&common::translate(input.as_bytes(), Dialect::Loom, Dialect::Canonical));
    let usage = &t.last().unwrap()["usage"];
    assert_eq!(
        (usage["input"].as_u64(), usage["cache_write"].as_u64(), usage["output"].as_u64()),
        (Some(1234), Some(1024), Some(7))
    );
    // base-context's input excludes cache: 210 and 1024, not 0 and 1024.
    let bc = common::values(&common::translate(input.as_bytes(), Dialect::Loom, Dialect::BaseContext));
    let end = bc.iter().rfind(|l| l["type"] == "message_end").unwrap();
    assert_eq!(end["message"]["usage"]["input"], 210);
    assert_eq!(end["message"]["usage"]["cacheWrite"], 1024);
    // Claude's input_tokens excludes cache too.
    let cc = common::values(&common::translate(input.as_bytes(), Dialect::Loom, Dialect::ClaudeCode));
    let result = cc.last().unwrap();
    assert_eq!(result["usage"]["input_tokens"], 210);
    assert_eq!(result["usage"]["cache_creation_input_tokens"], 1024);
    // codex's input includes cache: 1234, of which none read from cache.
    let cx = common::values(&common::translate(input.as_bytes(), Dialect::Loom, Dialect::Codex));
    assert_eq!(cx.last().unwrap()["usage"]["input_tokens"], 1234);
    // The report says the basis the numbers forced.
    let (_, summary, _) = agentgate::translate_bytes(
        input.as_bytes(),
        &agentgate::Options::new(Some(Dialect::Loom), Dialect::BaseContext),
    );
    assert!(summary.report.basis.keys().any(|k| k.contains("input excluding cache")), "{:?}", summary.report.basis);
    // `summary` states input including cache (README): 1234, not 210.
    let s = agentgate::summary::summarize(input.as_bytes(), "run", Some(Dialect::Loom), false);
    assert_eq!((s.tokens.input, s.tokens.cache_write), (Some(1234), Some(1024)));
}

//! codex (`codex exec --json`): read by the spec's rules (a running thread total for usage,
//! input including cache, the last agent_message as the answer, no closing record), written
//! as the spec's example is, and a codex stream written back to codex unchanged. Expectations
//! are written by hand from `shared/dialects/codex.md`.

mod common;

use serde_json::{json, Value};

use agentgate::Dialect;

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(common::fixtures().join("codex").join(name)).unwrap()
}

fn canonical(input: &[u8]) -> Vec<Value> {
    common::values(&common::translate(input, Dialect::Codex, Dialect::Canonical))
}

fn to_codex(input: &[u8], from: Dialect) -> Vec<Value> {
    common::values(&common::translate(input, from, Dialect::Codex))
}

#[test]
fn the_specs_example_reads_as_the_spec_says() {
    // codex.md, Example: "The answer is item_3's text. Canonical input 48210 (41984 from
    // cache), output 912 (448 of it reasoning); exit status 0."
    let out = canonical(&fixture("success.jsonl"));
    let t = out.last().unwrap();
    assert_eq!(t["type"], "terminal");
    assert_eq!(t["outcome"], "completed");
    assert_eq!(t["final_text"], "Fixed the off-by-one in `parse_range`; the failing test now passes.");
    assert_eq!(t["session_id"], "019b7c1e-5a20-7d31-9e42-6f0a1b2c3d4e");
    let u = &t["usage"];
    assert_eq!(
        (u["input"].as_u64(), u["cache_read"].as_u64(), u["cache_write"].as_u64()),
        (Some(48210), Some(41984), Some(0))
    );
    assert_eq!(
        (u["output"].as_u64(), u["reasoning"].as_u64()),
        (Some(912), Some(448)),
        "reasoning is not added to output"
    );
    // The command that exited 101 is a failed call; the file change a completed one.
    let results: Vec<(&str, &str)> = out
        .iter()
        .filter(|l| l["type"] == "tool_result")
        .map(|l| (l["name"].as_str().unwrap(), l["status"].as_str().unwrap()))
        .collect();
    assert_eq!(results, [("command_execution", "failed"), ("file_change", "completed")]);
}

#[test]
fn a_resumed_threads_usage_is_the_difference_from_its_last_total() {
    // codex.md, Usage: "after resume it also holds every earlier turn of the thread. To get one
    // run's usage, subtract the last total seen for that thread_id."
    let out = canonical(&fixture("resumed.jsonl"));
    let usages: Vec<(u64, u64, u64)> = out
        .iter()
        .filter(|l| l["type"] == "usage")
        .map(|l| (l["input"].as_u64().unwrap(), l["cache_read"].as_u64().unwrap(), l["output"].as_u64().unwrap()))
        .collect();
    assert_eq!(usages, [(16504, 0, 20), (85681 - 16504, 16384, 20)]);
    let t = out.last().unwrap();
    assert_eq!((t["usage"]["input"].as_u64(), t["usage"]["output"].as_u64()), (Some(85681), Some(40)));
    assert_eq!(t["final_text"], "Second answer.", "the last agent_message is the answer");
}

#[test]
fn errors_are_not_fatal_and_turn_failed_is_a_failed_run() {
    // A non-fatal error line before a completed turn: completed (codex.md, Records).
    let t = canonical(&fixture("mcp-and-declined.jsonl")).pop().unwrap();
    assert_eq!(t["outcome"], "completed");
    let t = canonical(&fixture("turn-failed.jsonl")).pop().unwrap();
    assert_eq!(
        (t["outcome"].as_str(), t["error"].as_str()),
        (Some("failed"), Some("stream disconnected before completion: 503 Service Unavailable"))
    );
    // turn.failed without a message: the last error line's, else "turn failed".
    let bare = "{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n{\"type\":\"turn.started\"}\n{\"type\":\"error\",\"message\":\"Reconnecting... 5/5\"}\n{\"type\":\"turn.failed\",\"error\":{}}\n";
    assert_eq!(canonical(bare.as_bytes()).pop().unwrap()["error"], "Reconnecting... 5/5");
    let bare = "{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n{\"type\":\"turn.started\"}\n{\"type\":\"turn.failed\",\"error\":{}}\n";
    assert_eq!(canonical(bare.as_bytes()).pop().unwrap()["error"], "turn failed");
}

#[test]
fn a_stream_without_a_closing_line_is_incomplete() {
    let t = canonical(&fixture("cut.jsonl")).pop().unwrap();
    assert_eq!((t["outcome"].as_str(), t["synthesized"].as_bool()), (Some("incomplete"), Some(true)));
    // localcode says so in its result; nothing reads as completed.
    let lc = common::values(&common::translate(&fixture("cut.jsonl"), Dialect::Codex, Dialect::Localcode));
    assert_eq!(lc.last().unwrap()["status"], "incomplete");
}

#[test]
fn a_declined_command_and_an_mcp_call_are_calls_with_their_results() {
    let out = canonical(&fixture("mcp-and-declined.jsonl"));
    let call = out.iter().find(|l| l["type"] == "tool_call" && l["name"] == "search").unwrap();
    assert_eq!(call["arguments"], json!({"q": "range"}));
    let results: Vec<&Value> = out.iter().filter(|l| l["type"] == "tool_result").collect();
    assert_eq!(results[0]["output"], "parse_range: see src/range.rs");
    assert_eq!(
        (results[1]["status"].as_str(), results[1]["error"].as_str()),
        (Some("failed"), Some("declined: the command was not run"))
    );
    // The todo list is the task list, not a call.
    assert_eq!(out.iter().filter(|l| l["type"] == "todo").count(), 2);
}

#[test]
fn codex_to_codex_is_the_same_stream_directly_and_through_canonical() {
    for name in ["success.jsonl", "mcp-and-declined.jsonl", "resumed.jsonl", "turn-failed.jsonl", "cut.jsonl"] {
        let input = fixture(name);
        let direct = common::translate(&input, Dialect::Codex, Dialect::Codex);
        if name == "cut.jsonl" {
            // Cut short: the lines as read, then the open call closed and the turn failed, as
            // the stream's end (codex.md: "At turn end, items still open get a closing
            // item.completed"; "A stream that ends without turn.completed or turn.failed is
            // incomplete").
            assert!(direct.as_bytes().starts_with(&input), "{name}");
            let added = common::values(&direct[input.len()..]);
            assert_eq!(added.len(), 2, "{direct}");
            assert_eq!((&added[0]["type"], &added[0]["item"]["id"]), (&json!("item.completed"), &json!("item_1")));
            assert_eq!(added[1]["type"], "turn.failed");
        } else {
            assert_eq!(direct.as_bytes(), &input[..], "{name}");
        }
        let via = common::translate(&input, Dialect::Codex, Dialect::Canonical);
        assert_eq!(
            common::translate(via.as_bytes(), Dialect::Canonical, Dialect::Codex),
            direct,
            "{name} through canonical"
        );
    }
}

#[test]
fn another_dialects_run_is_written_as_one_codex_turn_shaped_as_the_example() {
    let input = std::fs::read(common::fixtures().join("localcode/success.jsonl")).unwrap();
    let out = to_codex(&input, Dialect::Localcode);
    let kinds: Vec<&str> = out.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(kinds[..2], ["thread.started", "turn.started"]);
    assert_eq!(kinds.last(), Some(&"turn.completed"));
    assert_eq!(kinds.iter().filter(|k| k.starts_with("turn.")).count(), 2, "one turn: {kinds:?}");
    // Items: ids item_0, item_1 ... from one counter, in the order they first appear; `id` and
    // `type` first in each item.
    let mut seen: Vec<String> = Vec::new();
    for l in out.iter().filter(|l| l.get("item").is_some()) {
        let keys: Vec<&String> = l["item"].as_object().unwrap().keys().collect();
        assert_eq!(keys[..2], ["id", "type"], "{l}");
        let id = l["item"]["id"].as_str().unwrap().to_string();
        if !seen.contains(&id) {
            assert_eq!(id, format!("item_{}", seen.len()));
            seen.push(id);
        }
    }
    // Every call started then completed, with its status.
    for l in out.iter().filter(|l| l["type"] == "item.started") {
        let id = &l["item"]["id"];
        let done = out.iter().find(|x| x["type"] == "item.completed" && &x["item"]["id"] == id).unwrap();
        assert!(["completed", "failed"].contains(&done["item"]["status"].as_str().unwrap()), "{done}");
    }
    // The shell call is a command_execution with its command and output and exit code.
    let cmd = out.iter().find(|l| l["type"] == "item.completed" && l["item"]["type"] == "command_execution").unwrap();
    assert_eq!(cmd["item"]["command"], "python -m pytest tests/test_config.py -q");
    assert_eq!((cmd["item"]["exit_code"].as_i64(), cmd["item"]["status"].as_str()), (Some(0), Some("completed")));
    // The usage is the run's, the three fields always there, in the example's order.
    let usage = &out.last().unwrap()["usage"];
    let keys: Vec<&String> = usage.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["input_tokens", "cached_input_tokens", "output_tokens"]);
    assert_eq!((usage["input_tokens"].as_u64(), usage["output_tokens"].as_u64()), (Some(6050), Some(350)));
    // The answer is the last agent_message.
    let last_message = out.iter().rev().find(|l| l["item"]["type"] == "agent_message").unwrap();
    assert_eq!(last_message["item"]["text"], "Added test_parse_config_defaults to tests/test_config.py.");
    let problems = agentgate::contract::check_stream(
        Dialect::Codex.contract(),
        &common::translate(&input, Dialect::Localcode, Dialect::Codex),
    );
    assert!(problems.is_empty(), "{problems:?}");
}

#[test]
fn a_run_that_did_not_complete_is_a_failed_turn_that_says_why() {
    for (file, says) in [
        ("localcode/timeout.jsonl", "timeout"),
        ("localcode/interrupted.jsonl", "interrupted"),
        ("adal/permission-denied.jsonl", "permission_denied: bash needs approval"),
        ("adal/truncated.jsonl", "incomplete: input ended without a terminal record"),
    ] {
        let input = std::fs::read(common::fixtures().join(file)).unwrap();
        let from = if file.starts_with("adal") { Dialect::Adal } else { Dialect::Localcode };
        let out = to_codex(&input, from);
        let last = out.last().unwrap();
        assert_eq!(last["type"], "turn.failed", "{file}");
        assert!(last["error"]["message"].as_str().unwrap().starts_with(says), "{file}: {last}");
        assert!(!out.iter().any(|l| l["type"] == "turn.completed"), "{file}");
    }
    // The refused command of adal's run is declined: it never ran.
    let input = std::fs::read(common::fixtures().join("adal/permission-denied.jsonl")).unwrap();
    let out = to_codex(&input, Dialect::Adal);
    let declined = out.iter().find(|l| l["item"]["status"] == "declined").unwrap();
    assert_eq!(declined["item"]["command"], "./deploy.sh");
}

#[cfg(unix)]
#[test]
fn exec_as_codex_exits_as_codex_does() {
    // codex.md: 0 for a completed turn, 1 for a failed one.
    for (file, code) in [("localcode/success.jsonl", 0), ("localcode/failed.jsonl", 1)] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_agentgate"))
            .args(["exec", "--as", "codex", "--", "cat"])
            .arg(common::fixtures().join(file))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(code), "{file}");
    }
}

/// codex.md: `declined` is a command that was "not run". A call that ran and was cancelled (a
/// timeout, an interrupt) is `failed`, with no exit code (it did not exit) and the reason after
/// its output; it is not written `declined` (issue 54, part 3).
#[test]
fn a_cancelled_call_is_failed_with_no_exit_code_and_its_reason_not_declined() {
    let input = concat!(
        r#"{"v":1,"type":"tool_call","id":"c1","name":"bash","arguments":{"command":"sleep 100"}}"#,
        "\n",
        r#"{"v":1,"type":"tool_result","id":"c1","status":"cancelled","output":"started","error":"timed out after 10s"}"#,
        "\n",
        r#"{"v":1,"type":"terminal","outcome":"timeout"}"#,
        "\n",
    );
    let out = common::values(&common::translate(input.as_bytes(), Dialect::Canonical, Dialect::Codex));
    let done = out.iter().find(|l| l["type"] == "item.completed").expect("the call's item.completed");
    let item = &done["item"];
    assert_eq!(item["type"], "command_execution");
    assert_eq!(item["status"], "failed");
    assert_eq!(item["exit_code"], Value::Null);
    assert_eq!(item["aggregated_output"], "started\ntimed out after 10s");
}

/// Unknown usage is unknown, not zero (issue 54, part 2): codex's failed turn states no usage;
/// Claude's result and localcode's tokens have no word for unknown, so they carry zeros and the
/// report says so. A run that stated its usage says nothing of the kind.
#[test]
fn a_failed_turn_without_usage_is_written_as_zeros_and_said() {
    for to in [Dialect::ClaudeCode, Dialect::Localcode] {
        let (_, summary, _) = agentgate::translate_bytes(
            &fixture("turn-failed.jsonl"),
            &agentgate::Options::new(Some(Dialect::Codex), to),
        );
        assert_eq!(
            summary.report.synthesized.get(agentgate::report::UNKNOWN_USAGE),
            Some(&1),
            "{to}: {:?}",
            summary.report.synthesized
        );
        let (_, summary, _) =
            agentgate::translate_bytes(&fixture("success.jsonl"), &agentgate::Options::new(Some(Dialect::Codex), to));
        assert_eq!(summary.report.synthesized.get(agentgate::report::UNKNOWN_USAGE), None, "{to}");
    }
}

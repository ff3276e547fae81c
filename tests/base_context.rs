//! base-context: both forms read and written, usage counted once per assistant message, the
//! outcome from the last assistant message, and streams a pi-style consumer accepts.

mod common;

use serde_json::Value;

use agentgate::{translate_bytes, Dialect, Options};

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(common::fixtures().join("base-context").join(name)).unwrap()
}

/// A canonical stream without the base-context lines it carries.
fn uncarried(canonical: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for mut line in common::values(canonical) {
        if line["type"] == "repeat" {
            continue;
        }
        let o = line.as_object_mut().unwrap();
        if o["type"] != "extension" {
            o.shift_remove("line");
        }
        o.shift_remove("same_line");
        out.extend_from_slice(format!("{line}\n").as_bytes());
    }
    out
}

fn canonical(input: &[u8]) -> Vec<Value> {
    common::values(&common::translate(input, Dialect::BaseContext, Dialect::Canonical))
}

/// `source` written as base-context. From base-context itself the lines would be copied (see
/// `a_valid_stream_comes_back_from_base_context_to_itself_line_for_line`), directly or through
/// canonical, which carries them: so it goes through canonical with the carried lines taken
/// out (a record's `line` and `same_line`, and the repeat records that only carry one).
/// These tests hold the encoder's writing of each line from the model, which a base-context
/// record's extra members feed.
fn encode(source: &[u8], from: Dialect, deltas: bool) -> Vec<Value> {
    let (source, from) = match from {
        Dialect::BaseContext => (uncarried(&common::translate(source, from, Dialect::Canonical)), Dialect::Canonical),
        _ => (source.to_vec(), from),
    };
    let mut opts = Options::new(Some(from), Dialect::BaseContext);
    opts.encode.json_deltas = deltas;
    opts.encode.source_date_epoch = Some(1_700_000_000);
    let (out, _, _) = translate_bytes(&source, &opts);
    common::values(std::str::from_utf8(&out).unwrap())
}

#[test]
fn thinking_and_tool_call_deltas_are_reassembled_in_both_forms() {
    for name in ["success.jsonl", "deltas.jsonl"] {
        let out = canonical(&fixture(name));
        let thinking = out.iter().find(|l| l["type"] == "reasoning_end").unwrap();
        assert_eq!(thinking["text"], "The user wants a file list. <one> & done", "{name}");
        let call = out.iter().find(|l| l["type"] == "tool_call").unwrap();
        assert_eq!((call["id"].as_str(), call["name"].as_str()), (Some("toolu_01A9xQ"), Some("bash")));
        assert_eq!(call["arguments"], serde_json::json!({"command": "ls -la"}));
        assert_eq!(
            out.iter().filter(|l| l["type"] == "tool_call").count(),
            1,
            "{name}: message and tool events are one call"
        );
        assert_eq!(out.iter().filter(|l| l["type"] == "tool_result").count(), 1, "{name}");
    }
}

#[test]
fn usage_is_counted_once_per_assistant_message_with_cache_in_input() {
    let out = canonical(&fixture("success.jsonl"));
    let usages: Vec<u64> = out.iter().filter(|l| l["type"] == "usage").map(|l| l["input"].as_u64().unwrap()).collect();
    // input + cacheRead + cacheWrite of each message_end, nothing from turn_end or agent_end.
    assert_eq!(usages, vec![3 + 4120 + 1893, 6 + 6013 + 212]);
}

#[test]
fn a_retry_after_an_error_ends_as_the_retried_message_says() {
    let out = canonical(&fixture("retry.jsonl"));
    let t = out.last().unwrap();
    assert_eq!(t["outcome"], "completed");
    assert_eq!(out.iter().filter(|l| l["type"] == "turn_start").count(), 2, "two agent loops");
    assert!(out.iter().any(|l| l["type"] == "retry" && l["phase"] == "end" && l["success"] == true));
}

#[test]
fn a_run_whose_last_loop_never_settles_is_incomplete() {
    let text = String::from_utf8(fixture("retry.jsonl")).unwrap();
    // Cut after the retry is announced: the retried loop never came.
    let upto = text.find("\"type\":\"auto_retry_start\"").unwrap();
    let cut = &text[..upto + text[upto..].find('\n').unwrap() + 1];
    assert!(cut.contains("auto_retry_start"), "{cut}");
    let t = canonical(cut.as_bytes()).pop().unwrap();
    assert_eq!(t["outcome"], "incomplete");
    assert_eq!(t["reason"], "input ended without a terminal record");
}

#[test]
fn both_forms_are_written_as_the_spec_says() {
    let source = std::fs::read(common::fixtures().join("localcode/success.jsonl")).unwrap();
    let plain = encode(&source, Dialect::Localcode, false);
    let deltas = encode(&source, Dialect::Localcode, true);
    for out in [&plain, &deltas] {
        let header = &out[0];
        assert_eq!((header["type"].as_str(), header["version"].as_u64()), (Some("session"), Some(3)));
        assert_eq!(header["id"].as_str().unwrap().len(), 36);
        assert_eq!(header["timestamp"], "2023-11-14T22:13:20.000Z", "SOURCE_DATE_EPOCH");
        assert_eq!(out[1]["type"], "agent_start");
        assert_eq!(out.last().unwrap()["type"], "agent_end");
    }
    for u in plain.iter().filter(|l| l["type"] == "message_update") {
        assert!(u["message"].is_object() && u["assistantMessageEvent"]["partial"].is_object(), "{u}");
        assert!(u.get("messageId").is_none());
    }
    let mut last_id = 0;
    for u in deltas.iter().filter(|l| l["type"].as_str().unwrap().starts_with("message_")) {
        if u["type"] == "message_update" {
            assert!(u.get("message").is_none() && u["assistantMessageEvent"].get("partial").is_none(), "{u}");
        }
        if u["type"] == "message_update" || u["message"]["role"] == "assistant" {
            let id = u["messageId"].as_u64().expect("assistant message events carry messageId");
            assert!(id == last_id || id == last_id + 1, "messageId counts assistant messages from 1");
            last_id = id;
        } else {
            assert!(u.get("messageId").is_none(), "{u}");
        }
        if u["assistantMessageEvent"]["type"] == "toolcall_start" {
            assert!(u["assistantMessageEvent"]["toolCall"]["id"].is_string());
        }
    }
    assert_eq!(last_id, 4);
    // Every assistant message has all five usage counts and a cost; the totals add up.
    let ends: Vec<&Value> =
        plain.iter().filter(|l| l["type"] == "message_end" && l["message"]["role"] == "assistant").collect();
    for e in &ends {
        let u = &e["message"]["usage"];
        for k in ["input", "output", "cacheRead", "cacheWrite", "totalTokens"] {
            assert!(u[k].is_u64(), "{k} in {u}");
        }
        assert!(u["cost"]["total"].is_number());
    }
    let input: u64 = ends.iter().map(|e| e["message"]["usage"]["input"].as_u64().unwrap()).sum();
    assert_eq!(input, 6050);
}

#[test]
fn a_round_whose_usage_comes_after_its_tools_holds_them_behind_its_message_end() {
    let source = std::fs::read(common::fixtures().join("localcode/results-out-of-order.jsonl")).unwrap();
    let out = encode(&source, Dialect::Localcode, true);
    let kinds: Vec<&str> = out.iter().map(|l| l["type"].as_str().unwrap()).collect();
    let end = kinds.iter().position(|k| *k == "message_end").unwrap();
    let first_tool = kinds.iter().position(|k| *k == "tool_execution_start").unwrap();
    assert!(end < first_tool, "the assistant message ends before its tools run: {kinds:?}");
    assert_eq!(out[end]["message"]["usage"]["input"], 900);
    assert_eq!(out[end]["message"]["stopReason"], "toolUse");
}

#[test]
fn every_outcome_reads_back_from_the_last_assistant_message() {
    for (outcome, stop, back) in [
        ("completed", "stop", "completed"),
        ("failed", "error", "failed"),
        ("interrupted", "aborted", "interrupted"),
        // base-context has no word for a run that did not complete: `length` is an ordinary
        // stop its readers take as finished, so it is `error`, read back as failed.
        ("incomplete", "error", "failed"),
        ("permission_denied", "error", "failed"),
        ("timeout", "aborted", "interrupted"),
    ] {
        let line = format!("{{\"v\":1,\"type\":\"terminal\",\"outcome\":\"{outcome}\",\"reason\":\"why\"}}\n");
        let out = encode(line.as_bytes(), Dialect::Canonical, false);
        let last = out.iter().rev().find(|l| l["type"] == "message_end").unwrap();
        assert_eq!(last["message"]["stopReason"], stop, "{outcome}");
        let text: String = out.iter().map(|v| format!("{v}\n")).collect();
        let t = canonical(text.as_bytes()).pop().unwrap();
        assert_eq!(t["outcome"], back, "{outcome}");
    }
}

/// A loop with one tool call whose output comes as updates and an end, each content a list of
/// blocks with escapes; an assistant event of a kind agentgate does not know; a turn_end whose
/// message says why the request stopped.
const READ_WITHOUT_TREES: &str = concat!(
    r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
    "\n",
    r#"{"type":"agent_start"}"#,
    "\n",
    r#"{"type":"turn_start"}"#,
    "\n",
    r#"{"type":"message_update","assistantMessageEvent":{"type":"citation_added","contentIndex":0,"partial":{"role":"assistant","content":[]},"note":"n"},"message":{"role":"assistant","content":[]}}"#,
    "\n",
    r#"{"type":"tool_execution_start","toolCallId":"t1","toolName":"bash","args":{"command":"ls"}}"#,
    "\n",
    r#"{"type":"tool_execution_update","toolCallId":"t1","toolName":"bash","args":{"command":"ls"},"partialResult":{"content":[{"type":"text","text":"a\u00e9\n"},{"type":"image","data":"xx"},{"type":"text","text":"<b>"}],"details":{}}}"#,
    "\n",
    r#"{"type":"tool_execution_end","toolCallId":"t1","toolName":"bash","result":{"content":[{"type":"text","text":"a\u00e9\n"},{"type":"text","text":"<b>\"c\""}],"details":{}},"isError":false}"#,
    "\n",
    r#"{"type":"turn_end","message":{"role":"assistant","content":[],"stopReason":"toolUse","usage":{"input":1}},"toolResults":[{"role":"toolResult","content":"x"}]}"#,
    "\n",
);

#[test]
fn members_read_from_their_text_give_what_the_trees_gave() {
    let out = canonical(READ_WITHOUT_TREES.as_bytes());
    let outputs: Vec<&Value> = out.iter().filter(|l| l["type"] == "tool_output").map(|l| &l["text"]).collect();
    assert_eq!(outputs, ["aé\n<b>"], "text blocks joined, other blocks skipped");
    let result = out.iter().find(|l| l["type"] == "tool_result").unwrap();
    assert_eq!(result["output"], "aé\n<b>\"c\"");
    let round = out.iter().find(|l| l["type"] == "round_end").unwrap();
    assert_eq!(round["stop"], "toolUse");
    // The unknown event is kept whole, its partial message too.
    let unknown = out.iter().find(|l| l["type"] == "extension").unwrap();
    assert_eq!(
        unknown["line"]["assistantMessageEvent"],
        serde_json::json!({"type":"citation_added","contentIndex":0,"partial":{"role":"assistant","content":[]},"note":"n"})
    );
    // And the output as adal writes it.
    let adal = common::translate(READ_WITHOUT_TREES.as_bytes(), Dialect::BaseContext, Dialect::Adal);
    assert!(adal.contains(r#""output":"aé\n<b>\"c\"""#), "{adal}");
}

#[test]
fn agent_end_lists_the_loops_messages_in_the_order_they_ended() {
    // The spec's agent_end holds the messages new in the run, [user, assistant, toolResult…,
    // assistant, …]: the messages of the loop's message_end lines, in their order. A round whose
    // usage comes after its tools holds its message_end back; its tool results still follow it.
    let mut loops = 0;
    for case in common::cases() {
        for deltas in [false, true] {
            let out = encode(&case.input, case.dialect, deltas);
            let mut ended: Vec<&Value> = Vec::new();
            for line in &out {
                match line["type"].as_str() {
                    Some("agent_start") => ended.clear(),
                    Some("message_end") => ended.push(&line["message"]),
                    Some("agent_end") if line.get("messages").is_some() => {
                        let listed: Vec<&Value> = line["messages"].as_array().unwrap().iter().collect();
                        assert_eq!(listed, ended, "{} (deltas {deltas})", case.path.display());
                        loops += 1;
                    }
                    _ => {}
                }
            }
        }
    }
    assert!(loops > 40, "only {loops} agent loops seen");
}

/// Each assistant message's `api`, `provider`, `model` and `timestamp` in `message_end` lines,
/// and each user message's `timestamp`, in order.
fn message_origins(lines: &[Value]) -> Vec<(String, String, String, u64)> {
    lines
        .iter()
        .filter(|l| l["type"] == "message_end")
        .map(|l| &l["message"])
        .filter(|m| m["role"] == "assistant" || m["role"] == "user")
        .map(|m| {
            let s = |k: &str| m[k].as_str().unwrap_or("-").to_string();
            (s("api"), s("provider"), s("model"), m["timestamp"].as_u64().unwrap())
        })
        .collect()
}

#[test]
fn base_context_to_itself_keeps_where_each_message_came_from_and_when() {
    for name in ["success.jsonl", "deltas.jsonl", "retry.jsonl", "parallel-tools.jsonl"] {
        let source = common::values(std::str::from_utf8(&fixture(name)).unwrap());
        let want = message_origins(&source);
        assert!(want.iter().any(|o| o.0 == "anthropic-messages"), "{name}: the fixture says where from");
        for deltas in [false, true] {
            let out = encode(&fixture(name), Dialect::BaseContext, deltas);
            assert_eq!(message_origins(&out), want, "{name}, deltas {deltas}");
            // Every snapshot of an assistant message says the same, its first one included.
            for l in &out {
                let snapshots = [&l["message"], &l["assistantMessageEvent"]["partial"]];
                for m in snapshots.into_iter().filter(|m| m["role"] == "assistant") {
                    assert_eq!(m["provider"], "anthropic", "{name}: {l}");
                    assert_eq!(m["model"], "claude-sonnet-4-5", "{name}: {l}");
                }
            }
        }
    }
    // Another source says none of it: "unknown", and the fixed time.
    let out = encode(&std::fs::read(common::representative(Dialect::Adal)).unwrap(), Dialect::Adal, false);
    let origins = message_origins(&out);
    assert!(!origins.is_empty());
    assert!(origins.iter().all(|o| o.0 == "-" || (o.0 == "unknown" && o.1 == "unknown")), "{origins:?}");
    assert!(origins.iter().all(|o| o.3 == 1_700_000_000_000), "{origins:?}");
}

#[test]
fn an_aborted_message_stays_aborted_from_base_context_to_itself() {
    let out = encode(&fixture("aborted.jsonl"), Dialect::BaseContext, false);
    let ends: Vec<&Value> = out.iter().filter(|l| l["type"] == "message_end").map(|l| &l["message"]).collect();
    assert_eq!(ends.len(), 1, "one message, as the source has: {out:?}");
    assert_eq!(
        (ends[0]["stopReason"].as_str(), ends[0]["errorMessage"].as_str()),
        (Some("aborted"), Some("Request was aborted"))
    );
    assert_eq!(out.iter().filter(|l| l["type"] == "agent_start").count(), 1, "no loop added to say how it ended");
    assert_eq!(out.last().unwrap()["type"], "agent_end");
    assert_eq!(out.last().unwrap()["messages"][0]["stopReason"], "aborted");
}

#[test]
fn tool_call_argument_deltas_stream_again_from_base_context_to_itself_in_both_forms() {
    // The source's toolcall_start, toolcall_delta and toolcall_end, in the form asked for.
    let tool_events = |lines: &[Value]| -> Vec<Value> {
        lines
            .iter()
            .filter(|l| l["type"] == "message_update")
            .map(|l| l["assistantMessageEvent"].clone())
            .filter(|e| e["type"].as_str().is_some_and(|t| t.starts_with("toolcall_")))
            .map(|mut e| {
                e.as_object_mut().unwrap().remove("partial");
                e
            })
            .collect()
    };
    for (name, deltas) in [("success.jsonl", false), ("deltas.jsonl", true)] {
        let source = common::values(std::str::from_utf8(&fixture(name)).unwrap());
        let out = encode(&fixture(name), Dialect::BaseContext, deltas);
        let want = tool_events(&source);
        assert_eq!(
            want.iter().map(|e| e["type"].as_str().unwrap()).collect::<Vec<_>>(),
            ["toolcall_start", "toolcall_delta", "toolcall_end"]
        );
        assert_eq!(tool_events(&out), want, "{name}");
        if !deltas {
            // The partial message names the call from its start, as the source's did.
            let start = out.iter().find(|l| l["assistantMessageEvent"]["type"] == "toolcall_start").unwrap();
            let block = &start["assistantMessageEvent"]["partial"]["content"][1];
            assert_eq!((block["id"].as_str(), block["name"].as_str()), (Some("toolu_01A9xQ"), Some("bash")));
            assert_eq!(block["arguments"], serde_json::json!({}));
        }
    }
    // The draft reaches a dialect that previews calls with its name.
    let lc = common::values(&common::translate(&fixture("success.jsonl"), Dialect::BaseContext, Dialect::Localcode));
    let preview = lc.iter().find(|l| l["type"] == "tool_preview").unwrap();
    assert_eq!(preview["name"], "bash");
}

#[test]
fn members_of_messages_and_blocks_the_model_has_no_place_for_come_back_from_base_context_to_itself() {
    // The fixture with what providers add: signatures on blocks, response ids on messages.
    let mut source = Vec::new();
    for mut line in common::values(std::str::from_utf8(&fixture("success.jsonl")).unwrap()) {
        let messages = match line.get_mut("messages") {
            Some(Value::Array(list)) => list.iter_mut().collect::<Vec<_>>(),
            _ => line.get_mut("message").into_iter().collect(),
        };
        for m in messages.into_iter().filter(|m| m["role"] == "assistant") {
            m["responseId"] = "resp_1".into();
            for b in m["content"].as_array_mut().unwrap() {
                match b["type"].as_str().unwrap() {
                    "text" => b["textSignature"] = "sigT".into(),
                    "toolCall" => b["thoughtSignature"] = "sigC".into(),
                    _ => {}
                }
            }
        }
        source.extend_from_slice(format!("{line}\n").as_bytes());
    }
    let assistants = |lines: &[Value]| -> Vec<Value> {
        lines
            .iter()
            .filter(|l| l["type"] == "turn_end" || l["type"] == "message_end")
            .map(|l| l["message"].clone())
            .filter(|m| m["role"] == "assistant")
            .collect()
    };
    let want = assistants(&common::values(std::str::from_utf8(&source).unwrap()));
    assert_eq!(want.len(), 4);
    assert_eq!(want[3]["content"][0]["thinkingSignature"], "EqsVCkYI", "the fixture's own signature");
    let out = encode(&source, Dialect::BaseContext, false);
    assert_eq!(assistants(&out), want);

    // Another target cannot carry them, and the report says so.
    let opts = Options::new(Some(Dialect::BaseContext), Dialect::Localcode);
    let (_, summary, _) = translate_bytes(&source, &opts);
    let dropped = &summary.report.dropped_fields;
    assert_eq!((dropped.get("usage.responseId"), dropped.get("usage.content")), (Some(&2), Some(&2)), "{dropped:?}");
}

#[test]
fn what_a_tool_said_beside_its_output_comes_back_from_base_context_to_itself() {
    let mut source = Vec::new();
    for mut line in common::values(std::str::from_utf8(&fixture("success.jsonl")).unwrap()) {
        if line["type"] == "tool_execution_end" {
            line["result"]["details"] = serde_json::json!({"exitCode": 0, "truncated": false});
        }
        source.extend_from_slice(format!("{line}\n").as_bytes());
    }
    let out = encode(&source, Dialect::BaseContext, false);
    let end = out.iter().find(|l| l["type"] == "tool_execution_end").unwrap();
    assert_eq!(end["result"]["details"], serde_json::json!({"exitCode": 0, "truncated": false}));
    let message = out.iter().find(|l| l["type"] == "message_end" && l["message"]["role"] == "toolResult").unwrap();
    assert_eq!(message["message"]["details"], serde_json::json!({"exitCode": 0, "truncated": false}));
    // Without details, neither the event nor the message has them, as the source had none;
    // from another dialect the event has an empty object.
    let plain = encode(&fixture("success.jsonl"), Dialect::BaseContext, false);
    let end = plain.iter().find(|l| l["type"] == "tool_execution_end").unwrap();
    assert!(end["result"].get("details").is_none(), "{end}");
    let adal = std::fs::read(common::fixtures().join("adal/success.jsonl")).unwrap();
    let foreign = encode(&adal, Dialect::Adal, false);
    let end = foreign.iter().find(|l| l["type"] == "tool_execution_end").unwrap();
    assert_eq!(end["result"]["details"], serde_json::json!({}));
    let message = plain.iter().find(|l| l["type"] == "message_end" && l["message"]["role"] == "toolResult").unwrap();
    assert!(message["message"].get("details").is_none());
    // Another target cannot carry them, and the report says so.
    let (_, summary, _) = translate_bytes(&source, &Options::new(Some(Dialect::BaseContext), Dialect::Localcode));
    assert_eq!(summary.report.dropped_fields.get("tool_result.details"), Some(&1));
}

#[test]
fn user_and_custom_messages_come_back_from_base_context_to_itself_as_they_were() {
    let user = serde_json::json!({"role": "user", "content": [{"type": "text", "text": "What is this?"}, {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}], "timestamp": 1773655923530u64});
    let custom = serde_json::json!({"role": "custom", "customType": "autonomous_status", "content": "step 1 of 3", "display": true, "details": {"step": 1}, "timestamp": 1773655923531u64});
    let assistant = serde_json::json!({"role": "assistant", "content": [{"type": "text", "text": "A logo."}], "api": "a", "provider": "p", "model": "m", "usage": {"input": 5, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 7, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}, "stopReason": "stop", "timestamp": 1});
    let lines = [
        serde_json::json!({"type": "session", "version": 3, "id": "s1", "timestamp": "2026-03-16T10:12:03.512Z"}),
        serde_json::json!({"type": "agent_start"}),
        serde_json::json!({"type": "turn_start"}),
        serde_json::json!({"type": "message_start", "message": user}),
        serde_json::json!({"type": "message_end", "message": user}),
        serde_json::json!({"type": "message_start", "message": custom}),
        serde_json::json!({"type": "message_end", "message": custom}),
        serde_json::json!({"type": "message_start", "message": assistant}),
        serde_json::json!({"type": "message_end", "message": assistant}),
        serde_json::json!({"type": "turn_end", "message": assistant, "toolResults": []}),
        serde_json::json!({"type": "agent_end", "messages": [user, custom, assistant]}),
    ];
    let source: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let out = encode(source.as_bytes(), Dialect::BaseContext, false);
    let ends: Vec<&Value> = out.iter().filter(|l| l["type"] == "message_end").map(|l| &l["message"]).collect();
    assert_eq!(ends[0], &user);
    assert_eq!(ends[1], &custom);
    let end = out.iter().find(|l| l["type"] == "agent_end").unwrap();
    assert_eq!(end["messages"][0], user);
    assert_eq!(end["messages"][1], custom);
    // Text only and its time: the message is the prompt's, as before.
    let plain = encode(&fixture("success.jsonl"), Dialect::BaseContext, false);
    let prompt = plain.iter().find(|l| l["type"] == "message_end" && l["message"]["role"] == "user").unwrap();
    assert_eq!(
        prompt["message"],
        serde_json::json!({"role": "user", "content": [{"type": "text", "text": "List files"}], "timestamp": 1773655923530u64})
    );
    // Another dialect gets their text, and the report says what it could not carry.
    let (out, summary, _) =
        translate_bytes(source.as_bytes(), &Options::new(Some(Dialect::BaseContext), Dialect::Localcode));
    assert!(String::from_utf8(out).unwrap().contains("{\"type\": \"notice\", \"text\": \"step 1 of 3\"}"));
    let dropped = &summary.report.dropped_fields;
    assert_eq!((dropped.get("prompt.message"), dropped.get("notice.message")), (Some(&1), Some(&1)), "{dropped:?}");
}

#[test]
fn a_refusal_only_agent_end_comes_back_as_it_was() {
    let input = fixture("refusal.jsonl");
    let source = common::values(std::str::from_utf8(&input).unwrap());
    let refusal = source.last().unwrap().clone();
    assert!(refusal.get("refusal").is_some() && refusal.get("messages").is_none());
    let canonical = common::translate(&input, Dialect::BaseContext, Dialect::Canonical);
    for (out, how) in
        [encode(&input, Dialect::BaseContext, false), encode(canonical.as_bytes(), Dialect::Canonical, false)]
            .iter()
            .zip(["directly", "through canonical"])
    {
        // The loop ends as the source's did, holding no messages, and no loop is added to say
        // the run failed: the refusal says it.
        assert_eq!(out.last().unwrap(), &refusal, "{how}");
        assert_eq!(out.iter().filter(|l| l["type"] == "agent_start").count(), 1, "{how}");
        let ends: Vec<&Value> = out.iter().filter(|l| l["type"] == "message_end").collect();
        assert_eq!(ends.len(), 1, "{how}");
        assert_eq!(ends[0], &source[4], "{how}: the assistant's message as it was");
    }
    // And it still reads as a failed run.
    let out = common::values(&common::translate(&input, Dialect::BaseContext, Dialect::Adal));
    assert_eq!(out.last().unwrap()["exit_code"], 1);
}

#[test]
fn a_final_answer_the_last_message_streamed_is_not_written_again() {
    let texts = |out: &[Value]| -> Vec<String> {
        out.iter()
            .filter(|l| l["type"] == "message_end" && l["message"]["role"] == "assistant")
            .map(|l| l["message"]["content"][0]["text"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    let lines = |v: &[Value]| v.iter().map(|l| format!("{l}\n")).collect::<String>();
    // Streamed, then given whole as the answer, the message still open at the end.
    let open = [
        serde_json::json!({"v": 1, "type": "text_start"}),
        serde_json::json!({"v": 1, "type": "text_delta", "text": "hi"}),
        serde_json::json!({"v": 1, "type": "final_answer", "text": "hi"}),
        serde_json::json!({"v": 1, "type": "terminal", "outcome": "completed", "final_text": "hi"}),
    ];
    assert_eq!(texts(&encode(lines(&open).as_bytes(), Dialect::Canonical, false)), vec!["hi"]);

    // The message ended by its usage before the end, on the stop the run ends with.
    let mut ended = open.to_vec();
    ended.insert(2, serde_json::json!({"v": 1, "type": "usage", "scope": "round", "basis": "delta", "final": true, "input": 3, "output": 1}));
    let out = encode(lines(&ended).as_bytes(), Dialect::Canonical, false);
    assert_eq!(texts(&out), vec!["hi"]);
    assert_eq!(out.iter().filter(|l| l["type"] == "turn_start").count(), 1);

    // A stream cut short: its last message ends as not completed (error, with why), once.
    let out = encode(&fixture("cut.jsonl"), Dialect::BaseContext, false);
    assert_eq!(texts(&out), vec!["Half"]);
    let last = out.iter().rfind(|l| l["type"] == "message_end").unwrap();
    assert_eq!(last["message"]["stopReason"], "error");
    assert_eq!(last["message"]["errorMessage"], "input ended without a terminal record");

    // A run that ends otherwise than its last message's usage suggested: the end goes on that
    // message (its end waited for the next record), not on one added after it.
    let mut interrupted = ended.clone();
    *interrupted.last_mut().unwrap() =
        serde_json::json!({"v": 1, "type": "terminal", "outcome": "interrupted", "final_text": "hi"});
    let out = encode(lines(&interrupted).as_bytes(), Dialect::Canonical, false);
    assert_eq!(texts(&out), vec!["hi"]);
    let last = out.iter().rfind(|l| l["type"] == "message_end").unwrap();
    assert_eq!(last["message"]["stopReason"], "aborted");
    assert_eq!(last["message"]["usage"]["input"], 3);

    // Likewise after the turn ended: no second agent loop, the outcome on the last message.
    let mut turn_ended = ended.clone();
    turn_ended.insert(3, serde_json::json!({"v": 1, "type": "turn_end"}));
    *turn_ended.last_mut().unwrap() = serde_json::json!({"v": 1, "type": "terminal", "outcome": "incomplete", "reason": "max_rounds", "final_text": "hi"});
    let out = encode(lines(&turn_ended).as_bytes(), Dialect::Canonical, false);
    assert_eq!(texts(&out), vec!["hi"]);
    assert_eq!(out.iter().filter(|l| l["type"] == "agent_start").count(), 1);
    let last = out.iter().rfind(|l| l["type"] == "message_end").unwrap();
    assert_eq!(
        (&last["message"]["stopReason"], &last["message"]["errorMessage"]),
        (&"error".into(), &"max_rounds".into())
    );
}

#[test]
fn a_failed_message_only_agent_end_holds_ends_the_run_as_its_last_assistant_message_says() {
    // A request that failed before it streamed: no assistant message_end, only the loop's
    // messages in agent_end, the last assistant message the failed one.
    let user = serde_json::json!({"role": "user", "content": [{"type": "text", "text": "go"}], "timestamp": 1});
    let first = serde_json::json!({"role": "assistant", "content": [{"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}}], "model": "m1", "usage": {"input": 4, "output": 1}, "stopReason": "toolUse", "timestamp": 2});
    let result = serde_json::json!({"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "content": [{"type": "text", "text": "a"}], "isError": false, "timestamp": 3});
    let failed = serde_json::json!({"role": "assistant", "content": [], "model": "m2", "usage": {"input": "7", "output": 0}, "stopReason": "error", "errorMessage": "overloaded", "timestamp": 4});
    let lines = [
        serde_json::json!({"type": "session", "version": 3, "id": "s1", "timestamp": "2026-03-16T10:12:03.512Z"}),
        serde_json::json!({"type": "agent_start"}),
        serde_json::json!({"type": "message_start", "message": user}),
        serde_json::json!({"type": "message_end", "message": user}),
        serde_json::json!({"type": "agent_end", "messages": [user, first, result, failed]}),
    ];
    let source: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let out = canonical(source.as_bytes());
    let t = out.last().unwrap();
    assert_eq!(
        (t["outcome"].as_str(), t["error"].as_str(), t["model"].as_str()),
        (Some("failed"), Some("overloaded"), Some("m2")),
        "{t}"
    );
    let usage: Vec<&Value> = out.iter().filter(|l| l["type"] == "usage").collect();
    assert_eq!(usage.len(), 1, "the failed message's usage only");
    assert_eq!((usage[0]["input"].as_u64(), usage[0]["output"].as_u64()), (Some(7), Some(0)));
    assert!(out.iter().any(|l| l["type"] == "error" && l["message"] == "overloaded" && l["fatal"] == true));
    assert!(!out.iter().any(|l| l["type"] == "tool_call"), "the earlier message is not read again");
}

#[test]
fn a_text_block_with_a_member_of_its_own_keeps_the_user_message_whole() {
    let user = serde_json::json!({"role": "user", "content": [{"type": "text", "text": "hi", "cache": {"ttl": 5}}], "timestamp": 1});
    let lines = [
        serde_json::json!({"type": "session", "version": 3, "id": "s1", "timestamp": "2026-03-16T10:12:03.512Z"}),
        serde_json::json!({"type": "agent_start"}),
        serde_json::json!({"type": "message_start", "message": user}),
        serde_json::json!({"type": "message_end", "message": user}),
    ];
    let source: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let prompt = canonical(source.as_bytes()).into_iter().find(|l| l["type"] == "prompt").unwrap();
    assert_eq!(prompt["text"], "hi");
    let out = encode(source.as_bytes(), Dialect::BaseContext, false);
    let end = out.iter().find(|l| l["type"] == "message_end").unwrap();
    assert_eq!(end["message"], user);
}

#[test]
fn a_tool_result_message_says_it_failed_as_its_event_would() {
    // The message alone (no tool_execution_end), its isError written as a string: read as
    // tool_execution_end's is.
    let mut lines = Vec::new();
    for (n, is_error) in
        [("c1", serde_json::json!("true")), ("c2", serde_json::json!(false)), ("c3", serde_json::json!(true))]
    {
        let result = serde_json::json!({"role": "toolResult", "toolCallId": n, "toolName": "bash", "content": "x", "isError": is_error, "timestamp": 3});
        lines.push(serde_json::json!({"type": "message_end", "message": result}));
    }
    let source: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let out = canonical(source.as_bytes());
    let statuses: Vec<&str> =
        out.iter().filter(|l| l["type"] == "tool_result").map(|l| l["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["failed", "completed", "failed"]);
}

/// base-context-notes.md 4.2: the header is `{type, version, id, timestamp, cwd}` with `cwd` a
/// string (not optional); AgentSessionEvent: `compaction_end` has `reason`, `aborted` and
/// `willRetry`. Expectations written from those sentences, not from the contract file.
#[test]
fn the_header_always_states_cwd_and_a_compaction_end_its_reason() {
    // No directory known: an empty string.
    let out = encode(b"{\"type\": \"content\", \"chunk\": \"hi\", \"chars\": \"2\"}\n", Dialect::Localcode, false);
    assert_eq!(out[0]["type"], "session");
    assert_eq!(out[0]["cwd"], "");
    // wuu's workspace_root (its session_configured) or thread_started.cwd.
    let wuu = concat!(
        r#"{"type":"session_configured","protocol_version":2,"provider":"p","model":"m","max_parallel":1,"workspace_root":"/srv/repo","permissions":{}}"#,
        "\n",
        r#"{"final_message":"","run_id":"r","status":"completed","thread_id":"t","trace_path":"","turn_id":"u","type":"result"}"#,
        "\n"
    );
    assert_eq!(encode(wuu.as_bytes(), Dialect::Wuu, false)[0]["cwd"], "/srv/repo");
    // With exec, the directory the agent runs in.
    let mut opts = Options::new(Some(Dialect::Localcode), Dialect::BaseContext);
    opts.encode.cwd = Some("/home/me/project".into());
    let (out, _, _) = translate_bytes(b"{\"type\": \"done\"}\n", &opts);
    assert_eq!(common::values(std::str::from_utf8(&out).unwrap())[0]["cwd"], "/home/me/project");

    // The older auto_compaction_end has no reason: the end takes its start's.
    let old = concat!(
        r#"{"type":"auto_compaction_start","reason":"overflow"}"#,
        "\n",
        r#"{"type":"auto_compaction_end","aborted":false,"willRetry":true}"#,
        "\n"
    );
    let out = encode(old.as_bytes(), Dialect::BaseContext, false);
    let end = out.iter().find(|l| l["type"] == "compaction_end").unwrap();
    assert_eq!((&end["reason"], &end["aborted"], &end["willRetry"]), (&"overflow".into(), &false.into(), &true.into()));
    // From canonical, with nothing stated: automatic compaction's reason, and both flags.
    let bare = "{\"v\":1,\"type\":\"compaction\",\"phase\":\"end\"}\n";
    let out = encode(bare.as_bytes(), Dialect::Canonical, false);
    let end = out.iter().find(|l| l["type"] == "compaction_end").unwrap();
    assert_eq!(
        (&end["reason"], &end["aborted"], &end["willRetry"]),
        (&"threshold".into(), &false.into(), &false.into())
    );
}

/// base-context.md, Completion and Errors: only terminal errors and aborts are nonzero, so a
/// last message stopped by `length` is a finished run.
#[test]
fn a_run_whose_last_message_stopped_at_its_length_is_completed() {
    let stream = String::from_utf8(fixture("success.jsonl"))
        .unwrap()
        .replace("\"stopReason\":\"stop\"", "\"stopReason\":\"length\"");
    assert_eq!(canonical(stream.as_bytes()).last().unwrap()["outcome"], "completed");
}

/// Tokens are conserved and never clamped (issue 54): canonical input includes its cache
/// figures, but a usage of input 0 with 80 read from cache contradicts that reading (an input
/// below its own cache figure cannot include it), so the source's input is read as excluding
/// cache from there on. base-context's `input` excludes cache (notes 1.3): each message carries
/// its own figures (100; 0 and 80 read; 200), none borrowed from the next, and the run reads back
/// as 100 + (0 + 80) + 200 = 380 input (canonical: including cache), 80 of it read from cache.
#[test]
fn a_usage_that_raised_only_a_cache_figure_keeps_the_run_totals() {
    let lines = concat!(
        "{\"v\":1,\"type\":\"text_delta\",\"text\":\"a\"}\n",
        "{\"v\":1,\"type\":\"usage\",\"scope\":\"round\",\"basis\":\"delta\",\"final\":true,\"input\":100,\"output\":1}\n",
        "{\"v\":1,\"type\":\"text_start\"}\n",
        "{\"v\":1,\"type\":\"text_delta\",\"text\":\"b\"}\n",
        "{\"v\":1,\"type\":\"usage\",\"scope\":\"round\",\"basis\":\"delta\",\"final\":true,\"input\":0,\"output\":1,\"cache_read\":80}\n",
        "{\"v\":1,\"type\":\"text_start\"}\n",
        "{\"v\":1,\"type\":\"text_delta\",\"text\":\"c\"}\n",
        "{\"v\":1,\"type\":\"usage\",\"scope\":\"round\",\"basis\":\"delta\",\"final\":true,\"input\":200,\"output\":1}\n",
        "{\"v\":1,\"type\":\"terminal\",\"outcome\":\"completed\"}\n",
    );
    let out = encode(lines.as_bytes(), Dialect::Canonical, false);
    let usages: Vec<(u64, u64)> = out
        .iter()
        .filter(|l| l["type"] == "message_end")
        .map(|l| {
            (l["message"]["usage"]["input"].as_u64().unwrap(), l["message"]["usage"]["cacheRead"].as_u64().unwrap())
        })
        .collect();
    assert_eq!(usages, [(100, 0), (0, 80), (200, 0)]);
    let text: String = out.iter().map(|v| format!("{v}\n")).collect();
    let t = canonical(text.as_bytes()).pop().unwrap();
    assert_eq!((t["usage"]["input"].as_u64(), t["usage"]["cache_read"].as_u64()), (Some(380), Some(80)));
}

/// Cost is part of usage (issue "same dialect in"): a message's `usage.cost` (notes 1.3, USD)
/// is carried: base-context gets each message's breakdown back, the summary states the run's
/// cost (each message once), Claude Code's result its total_cost_usd, loom's Session cost_usd.
#[test]
fn a_messages_cost_is_carried_not_zeroed() {
    let zeros = r#""cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}"#;
    let text = String::from_utf8(fixture("success.jsonl")).unwrap();
    let ends: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains("\"type\":\"message_end\"") && l.contains("\"role\":\"assistant\""))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(ends.len(), 2);
    let costs = [
        r#""cost":{"input":0.000009,"output":0.00144,"cacheRead":0.001236,"cacheWrite":0.00709875,"total":0.00978375}"#,
        r#""cost":{"input":0.000018,"output":0.000615,"cacheRead":0.0018039,"cacheWrite":0.000795,"total":0.0032319000000000002}"#,
    ];
    let lines: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| match ends.iter().position(|e| *e == i) {
            Some(k) => l.replace(zeros, costs[k]),
            None => l.to_string(),
        })
        .collect();
    let input = lines.join("\n") + "\n";
    // base-context to itself: each message_end has its own cost back.
    let out = encode(input.as_bytes(), Dialect::BaseContext, false);
    let got: Vec<f64> = out
        .iter()
        .filter(|l| l["type"] == "message_end" && l["message"]["role"] == "assistant")
        .map(|l| l["message"]["usage"]["cost"]["total"].as_f64().unwrap())
        .collect();
    assert_eq!(got, [0.00978375, 0.0032319000000000002]);
    // The summary: the two messages' costs, once each (not again from turn_end or agent_end).
    let s = agentgate::summary::summarize(input.as_bytes(), "run", Some(Dialect::BaseContext), false);
    assert!((s.cost_usd.unwrap() - 0.01301565).abs() < 1e-12, "{:?}", s.cost_usd);
    // Claude Code's result and loom's Session carry it; a target with no place for it drops it.
    let claude = common::values(&common::translate(input.as_bytes(), Dialect::BaseContext, Dialect::ClaudeCode));
    assert!((claude.last().unwrap()["total_cost_usd"].as_f64().unwrap() - 0.01301565).abs() < 1e-12);
    let loom = common::values(&common::translate(input.as_bytes(), Dialect::BaseContext, Dialect::Loom));
    let session = loom.iter().find(|l| l["kind"] == "Session").unwrap();
    assert!((session["cost_usd"].as_f64().unwrap() - 0.01301565).abs() < 1e-12);
    // A source that states no cost gets none made up in the summary.
    let s = agentgate::summary::summarize(&fixture("success.jsonl")[..], "run", Some(Dialect::BaseContext), false);
    assert_eq!(s.cost_usd, None);
}

/// A message given by its message_end alone (upstream Pi streams have no message_start): its
/// api, provider, model and timestamp come back to base-context, not "unknown" (issue "same
/// dialect in").
#[test]
fn a_message_without_message_start_keeps_its_origin() {
    let line = r#"{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"Done."}],"api":"openai-responses","provider":"openai","model":"gpt-4o-mini","usage":{"input":12,"output":6,"cacheRead":0,"cacheWrite":0,"totalTokens":18,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1773655923541}}"#;
    let input = format!("{{\"type\":\"agent_start\"}}\n{line}\n{{\"type\":\"agent_end\",\"messages\":[]}}\n");
    let out = encode(input.as_bytes(), Dialect::BaseContext, false);
    let end = out.iter().find(|l| l["type"] == "message_end").unwrap();
    let m = &end["message"];
    assert_eq!(
        (m["api"].as_str(), m["provider"].as_str(), m["model"].as_str(), m["timestamp"].as_u64()),
        (Some("openai-responses"), Some("openai"), Some("gpt-4o-mini"), Some(1773655923541))
    );
}

/// base-context to itself, as a user runs it: the lines as read (no canonical hop).
fn to_itself(source: &[u8]) -> String {
    to_itself_in(source, false)
}

/// `source` translated to base-context, in the delta form (`--json-deltas`) or not.
fn to_itself_in(source: &[u8], deltas: bool) -> String {
    let mut opts = Options::new(Some(Dialect::BaseContext), Dialect::BaseContext);
    opts.encode.json_deltas = deltas;
    String::from_utf8(translate_bytes(source, &opts).0).unwrap()
}

/// What the model has no place for, written by hand from base-context-notes.md (1.1 scratch
/// members, 1.3 cost, 4.2 header members, 3.2 events the spec does not list): a copy keeps
/// all of it, byte for byte, numbers as they were written.
#[test]
fn a_valid_stream_comes_back_from_base_context_to_itself_line_for_line() {
    let stream = concat!(
        r#"{"type":"session","version":3,"id":"7c1d","timestamp":"2026-03-16T10:12:03.512Z","cwd":"/p","parentSession":"/s/a.jsonl","rlmDepth":1,"git":{"branch":"main"}}"#,
        "\n",
        r#"{"type":"agent_start"}"#,
        "\n",
        r#"{"type":"turn_start"}"#,
        "\n",
        r#"{"type":"message_start","message":{"role":"assistant","content":[],"api":"anthropic-messages","provider":"anthropic","model":"m","usage":{"input":3,"output":0,"cacheRead":4120,"cacheWrite":0,"totalTokens":4123,"cost":{"input":0.000009,"output":0,"cacheRead":0.001236,"cacheWrite":0,"total":0.001245}},"stopReason":"stop","timestamp":1773655923541}}"#,
        "\n",
        r#"{"type":"message_update","assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"Hi","partial":{"role":"assistant","content":[{"type":"text","text":"Hi","index":0}],"api":"anthropic-messages","provider":"anthropic","model":"m","usage":{"input":3,"output":1,"cacheRead":4120,"cacheWrite":0,"totalTokens":4124,"cost":{"input":0.000009,"output":0.000015,"cacheRead":0.001236,"cacheWrite":0,"total":0.00126}},"stopReason":"stop","timestamp":1773655923541}},"message":{"role":"assistant","content":[{"type":"text","text":"Hi","index":0}],"api":"anthropic-messages","provider":"anthropic","model":"m","usage":{"input":3,"output":1,"cacheRead":4120,"cacheWrite":0,"totalTokens":4124,"cost":{"input":0.000009,"output":0.000015,"cacheRead":0.001236,"cacheWrite":0,"total":0.00126}},"stopReason":"stop","timestamp":1773655923541}}"#,
        "\n",
        r#"{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"Hi","textSignature":"{\"v\":1,\"id\":\"msg_1\"}"}],"api":"anthropic-messages","provider":"anthropic","model":"m","responseId":"msg_1","usage":{"input":3,"output":41,"cacheRead":4120,"cacheWrite":0,"totalTokens":4164,"cost":{"input":0.000009,"output":0.000615,"cacheRead":0.001236,"cacheWrite":0,"total":0.0032319000000000002}},"stopReason":"stop","timestamp":1773655923541}}"#,
        "\n",
        r#"{"type":"turn_end","message":{"role":"assistant","content":[{"type":"text","text":"Hi"}],"api":"anthropic-messages","provider":"anthropic","model":"m","usage":{"input":3,"output":41,"cacheRead":4120,"cacheWrite":0,"totalTokens":4164,"cost":{"input":0.000009,"output":0.000615,"cacheRead":0.001236,"cacheWrite":0,"total":0.0032319000000000002}},"stopReason":"stop","timestamp":1773655923541},"toolResults":[],"toolExecution":"parallel"}"#,
        "\n",
        r#"{"type":"thinking_level_changed","level":"high","more":{"deep":[1,2.50,{"x":null}]}}"#,
        "\n",
        r#"{"type":"agent_end","messages":[{"role":"assistant","content":[{"type":"text","text":"Hi"}],"api":"anthropic-messages","provider":"anthropic","model":"m","usage":{"input":3,"output":41,"cacheRead":4120,"cacheWrite":0,"totalTokens":4164,"cost":{"input":0.0,"output":0.0,"cacheRead":0.0,"cacheWrite":0.0,"total":0.0}},"stopReason":"stop","timestamp":1773655923541}],"willRetry":false}"#,
        "\n"
    );
    assert_eq!(to_itself(stream.as_bytes()), stream);
    // And every valid fixture, each in its own form (`--json-deltas` for the delta form).
    for name in
        ["success", "deltas", "aborted", "compaction", "retry", "parallel-tools", "refusal", "no-deltas-unknown"]
    {
        let input = fixture(&format!("{name}.jsonl"));
        assert_eq!(to_itself_in(&input, name == "deltas"), String::from_utf8(input).unwrap(), "{name}");
    }
}

/// base-context-notes.md 3.3, failure paths: a loop that fails ends its assistant message with
/// `stopReason: "error"` and an `errorMessage`, then `turn_end` and `agent_end`. A copied stream
/// that stops early is closed so.
#[test]
fn a_cut_stream_copied_to_itself_is_closed_as_a_failed_loop() {
    let input = fixture("cut.jsonl");
    let text = String::from_utf8(input.clone()).unwrap();
    let whole: Vec<&str> = text.lines().take(7).collect();
    let out = to_itself(&input);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(&lines[..7], &whole[..], "the lines read come out as they were");
    let added = common::values(&lines[7..].join("\n"));
    let kinds: Vec<&str> = added.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["message_end", "turn_end", "agent_end"]);
    let message = &added[0]["message"];
    assert_eq!(message["stopReason"], "error");
    assert_eq!(message["errorMessage"], "input ended without a terminal record");
    // The message as its last partial gave it, but for its usage: a partial's is provisional
    // and the run counts none of it, so the closed stream states none (tokens read back the same).
    assert_eq!(message["content"], serde_json::json!([{"type": "text", "text": "Half"}]));
    assert_eq!((&message["usage"]["input"], &message["usage"]["totalTokens"]), (&0.into(), &0.into()));
    assert_eq!(message["model"], "claude-sonnet-4-5");
    assert_eq!(added[1]["message"], *message);
    let listed = added[2]["messages"].as_array().unwrap();
    assert_eq!((listed.len(), &listed[0]["role"], &listed[1]), (2, &"user".into(), message));
    assert!(agentgate::contract::check_stream(Dialect::BaseContext.contract(), &out).is_empty());

    // In the delta form the message is put together from its deltas, and keeps its messageId.
    let deltas = String::from_utf8(fixture("deltas.jsonl")).unwrap();
    let cut: String = deltas.lines().take(8).map(|l| format!("{l}\n")).collect();
    assert!(cut.lines().last().unwrap().contains("text_delta"), "{cut}");
    let out = to_itself_in(cut.as_bytes(), true);
    let end =
        common::values(&out).into_iter().find(|l| l["type"] == "message_end" && l["message"]["role"] == "assistant");
    let end = end.unwrap();
    assert_eq!(end["messageId"], 1);
    assert_eq!(end["message"]["content"][0]["text"], "I'll list them.");
    assert_eq!(end["message"]["stopReason"], "error");
}

#[test]
fn a_copied_stream_that_never_began_or_whose_retry_never_came_still_ends_its_loop() {
    // A header alone: a loop of its own, with a message that says why.
    let header = r#"{"type":"session","version":3,"id":"x","timestamp":"t","cwd":"/"}"#.to_string() + "\n";
    let out = common::values(&to_itself(header.as_bytes()));
    let kinds: Vec<&str> = out.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["session", "agent_start", "turn_start", "message_start", "message_end", "turn_end", "agent_end"]
    );
    assert_eq!(out[4]["message"]["stopReason"], "error");
    // A retry announced after the last loop ended, and nothing after: the retry's loop fails
    // and the retries end, as base-context writes when they run out.
    let retry = String::from_utf8(fixture("retry.jsonl")).unwrap();
    let at = retry.lines().position(|l| l.contains("auto_retry_start")).unwrap();
    let cut: String = retry.lines().take(at + 1).map(|l| format!("{l}\n")).collect();
    let out = common::values(&to_itself(cut.as_bytes()));
    let tail: Vec<&str> = out[at + 1..].iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(
        tail,
        ["agent_start", "turn_start", "message_start", "message_end", "turn_end", "agent_end", "auto_retry_end"]
    );
    let end = out.last().unwrap();
    assert_eq!((&end["success"], &end["attempt"]), (&false.into(), &1.into()));
    // The model taken from the last message the stream had.
    assert_eq!(out[at + 3]["message"]["model"], "claude-sonnet-4-5");
}

#[test]
fn json_deltas_asked_of_a_plain_stream_writes_the_delta_form() {
    let mut opts = Options::new(Some(Dialect::BaseContext), Dialect::BaseContext);
    opts.encode.json_deltas = true;
    let (out, _, _) = translate_bytes(&fixture("success.jsonl"), &opts);
    let out = common::values(std::str::from_utf8(&out).unwrap());
    let update = out.iter().find(|l| l["type"] == "message_update").unwrap();
    assert_eq!(update["messageId"], 1);
    assert!(update.get("message").is_none() && update["assistantMessageEvent"].get("partial").is_none(), "{update}");
}

#[test]
fn a_delta_stream_written_in_the_plain_form_counts_every_member_it_does_not_write() {
    // base-context.md: "Without this flag, the JSON format above is unchanged": a --json-deltas
    // stream to base-context is written anew in the plain form, line by line from the model.
    // A member no spec names on a line written so was left out, and the report said nothing.
    let stream = String::from_utf8(fixture("deltas.jsonl")).unwrap();
    let marked: Vec<String> = stream
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().insert(format!("zz_{i}"), Value::from(i));
            serde_json::to_string(&v).unwrap()
        })
        .collect();
    let input = marked.join("\n") + "\n";
    let (out, summary, _) =
        translate_bytes(input.as_bytes(), &Options::new(Some(Dialect::BaseContext), Dialect::BaseContext));
    let out = String::from_utf8(out).unwrap();
    let dropped = &summary.report.dropped_fields;
    for i in 0..marked.len() {
        let key = format!("zz_{i}");
        let written = out.contains(&format!("\"{key}\""));
        let counted: u64 = dropped.iter().filter(|(k, _)| k.ends_with(&format!(".{key}"))).map(|(_, n)| n).sum();
        assert!(written != (counted == 1), "line {}: written {written}, counted {counted}: {dropped:?}", i + 1);
    }
    // Some lines are written anew, and each of theirs is counted.
    assert!(dropped.keys().any(|k| k.starts_with("message_update.zz_")), "{dropped:?}");
}

//! claude-code (`claude -p --output-format stream-json --verbose`): read by the spec's rules
//! (one message over several lines counted once, input excluding cache, results folded,
//! subagent lines kept apart), written as its readers take it, and a Claude Code stream written
//! back unchanged. Expectations are written by hand from `shared/dialects/claude-code.md`.

mod common;

use serde_json::{json, Value};

use agentgate::pipeline::translate_bytes;
use agentgate::{Dialect, Options};

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(common::fixtures().join("claude-code").join(name)).unwrap()
}

fn canonical(input: &[u8]) -> Vec<Value> {
    common::values(&common::translate(input, Dialect::ClaudeCode, Dialect::Canonical))
}

#[test]
fn the_specs_example_reads_as_the_spec_says() {
    // claude-code.md, Example: "msg_01Ka7demo1 is one message on two lines: count it once. Run
    // input: 5 + 908 + 31212 = 32125."
    let out = canonical(&fixture("success.jsonl"));
    let t = out.last().unwrap();
    assert_eq!(
        (t["outcome"].as_str(), t["final_text"].as_str()),
        (Some("completed"), Some("Two files: main.rs, lib.rs."))
    );
    assert_eq!(t["usage"]["input"], 32125);
    assert_eq!((t["usage"]["cache_read"].as_u64(), t["usage"]["cache_write"].as_u64()), (Some(31212), Some(908)));
    assert_eq!(t["usage"]["output"], 61, "the result's output, not the lines' placeholders");
    assert_eq!(t["session_id"], "4c1f7a2e-0b9d-4e31-8a55-2f6d0c9e7b14");
    // The message's usage once, not once per line.
    assert_eq!(out.iter().filter(|l| l["type"] == "usage" && l["input"] == 4 + 812 + 15200).count(), 1);
    let call = out.iter().find(|l| l["type"] == "tool_call").unwrap();
    assert_eq!((call["id"].as_str(), call["name"].as_str()), (Some("toolu_01Gq3demo"), Some("Glob")));
    assert_eq!(call["arguments"], json!({"pattern": "src/*.rs"}));
    let result = out.iter().find(|l| l["type"] == "tool_result").unwrap();
    assert_eq!(
        (result["id"].as_str(), result["output"].as_str()),
        (Some("toolu_01Gq3demo"), Some("src/main.rs\nsrc/lib.rs"))
    );
}

#[test]
fn several_results_are_folded_and_subagent_lines_kept_apart() {
    let out = canonical(&fixture("refusal-subagent-results.jsonl"));
    let t = out.last().unwrap();
    // Sum usage (15+600 and 5+100 input; 40 and 10 output); text of the last (none failed).
    assert_eq!((t["usage"]["input"].as_u64(), t["usage"]["output"].as_u64()), (Some(720), Some(50)));
    assert_eq!(t["final_text"], "Background task finished.");
    // The subagent's text (parent_tool_use_id set) is not the main agent's.
    assert!(!out.iter().any(|l| l["type"] == "text_delta" && l["text"] == "Subagent notes."));
    // The refused call's result says it failed.
    let r = out.iter().find(|l| l["type"] == "tool_result" && l["id"] == "toolu_rm").unwrap();
    assert_eq!(r["status"], "failed");
}

#[test]
fn an_error_max_turns_result_is_an_incomplete_run_and_no_result_one_too() {
    let t = canonical(&fixture("max-turns.jsonl")).pop().unwrap();
    assert_eq!((t["outcome"].as_str(), t["reason"].as_str()), (Some("incomplete"), Some("error_max_turns")));
    let t = canonical(&fixture("cut.jsonl")).pop().unwrap();
    assert_eq!((t["outcome"].as_str(), t["synthesized"].as_bool()), (Some("incomplete"), Some(true)));
    // A result with is_error true is a failed run, whatever its subtype (an API failure).
    let failed =
        String::from_utf8(fixture("success.jsonl")).unwrap().replace("\"is_error\":false", "\"is_error\":true");
    assert_eq!(canonical(failed.as_bytes()).pop().unwrap()["outcome"], "failed");
}

#[test]
fn claude_code_to_claude_code_is_the_same_stream() {
    for name in ["success.jsonl", "refusal-subagent-results.jsonl", "max-turns.jsonl"] {
        let input = fixture(name);
        let direct = common::translate(&input, Dialect::ClaudeCode, Dialect::ClaudeCode);
        assert_eq!(direct.as_bytes(), &input[..], "{name}");
        let via = common::translate(&input, Dialect::ClaudeCode, Dialect::Canonical);
        assert_eq!(common::translate(via.as_bytes(), Dialect::Canonical, Dialect::ClaudeCode), direct, "{name}");
    }
    // Cut short: the lines as they were, then one result that says the run did not finish.
    let input = fixture("cut.jsonl");
    let out = common::translate(&input, Dialect::ClaudeCode, Dialect::ClaudeCode);
    assert!(out.starts_with(std::str::from_utf8(&input).unwrap()));
    let last = common::values(&out).pop().unwrap();
    assert_eq!((last["type"].as_str(), last["is_error"].as_bool()), (Some("result"), Some(true)));
}

#[test]
fn another_dialects_run_is_written_as_claude_codes_readers_take_it() {
    let input = std::fs::read(common::fixtures().join("adal/permission-denied.jsonl")).unwrap();
    let out = common::values(&common::translate(&input, Dialect::Adal, Dialect::ClaudeCode));
    assert_eq!((out[0]["type"].as_str(), out[0]["subtype"].as_str()), (Some("system"), Some("init")));
    let results: Vec<&Value> = out.iter().filter(|l| l["type"] == "result").collect();
    assert_eq!(results.len(), 1);
    assert_eq!(out.last().unwrap()["type"], "result");
    let r = results[0];
    // Every member the SDK's reader requires of a result.
    for k in ["subtype", "is_error", "duration_ms", "duration_api_ms", "num_turns", "session_id"] {
        assert!(r.get(k).is_some(), "{k}: {r}");
    }
    assert_eq!((r["subtype"].as_str(), r["is_error"].as_bool()), (Some("error_during_execution"), Some(true)));
    assert!(r["result"].as_str().unwrap().contains("needs approval"), "{r}");
    // The refused call: a tool_use, its tool_result with is_error, and a permission denial.
    let denial = &r["permission_denials"][0];
    // adal's `bash` is Claude's shell tool, `Bash` (docs/mapping.md, "Shell calls").
    assert_eq!((denial["tool_name"].as_str(), denial["tool_use_id"].as_str()), (Some("Bash"), Some("p2")));
    let refused =
        out.iter().find(|l| l["type"] == "user" && l["message"]["content"][0]["tool_use_id"] == "p2").unwrap();
    assert_eq!(refused["message"]["content"][0]["is_error"], true);
    // A message's lines share its id; every assistant line's role is assistant.
    for l in out.iter().filter(|l| l["type"] == "assistant") {
        assert_eq!(l["message"]["role"], "assistant");
        assert!(l["message"]["id"].as_str().unwrap().starts_with("msg_"));
    }

    // Usage: the cache split out of canonical input (claude-code.md, Usage).
    let wuu = std::fs::read(common::fixtures().join("wuu/success.jsonl")).unwrap();
    let want =
        common::values(&common::translate(&wuu, Dialect::Wuu, Dialect::Canonical)).pop().unwrap()["usage"].clone();
    let r = common::values(&common::translate(&wuu, Dialect::Wuu, Dialect::ClaudeCode)).pop().unwrap();
    let u = &r["usage"];
    let input = u["input_tokens"].as_u64().unwrap()
        + u["cache_read_input_tokens"].as_u64().unwrap()
        + u["cache_creation_input_tokens"].as_u64().unwrap();
    assert_eq!(input, want["input"].as_u64().unwrap());
    assert_eq!(u["cache_read_input_tokens"], want["cache_read"]);
    assert_eq!((r["subtype"].as_str(), r["is_error"].as_bool()), (Some("success"), Some(false)));
    let problems = agentgate::contract::check_stream(
        Dialect::ClaudeCode.contract(),
        &common::translate(&wuu, Dialect::Wuu, Dialect::ClaudeCode),
    );
    assert!(problems.is_empty(), "{problems:?}");
}

#[cfg(unix)]
#[test]
fn exec_as_claude_code_exits_as_claude_does() {
    // claude-code.md: 0 for a completed run, 1 for a failed one.
    for (file, code) in [("localcode/success.jsonl", 0), ("localcode/failed.jsonl", 1)] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_agentgate"))
            .args(["exec", "--as", "claude-code", "--", "cat"])
            .arg(common::fixtures().join(file))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(code), "{file}");
    }
}

#[test]
fn permission_denials_are_refusals_of_their_calls_once() {
    // claude-code.md, result: `permission_denials` `[{tool_name, tool_use_id, tool_input}]`;
    // several results: "join `permission_denials`". The same call listed by two results is one
    // refusal, of the call already made and answered as failed.
    let text = String::from_utf8(fixture("refusal-subagent-results.jsonl")).unwrap();
    let denial = r#"[{"tool_name":"Bash","tool_use_id":"toolu_rm","tool_input":{"command":"rm -rf build"}}]"#;
    let twice = text.replace(r#""permission_denials":[]"#, &format!(r#""permission_denials":{denial}"#));
    for input in [&text, &twice] {
        let out = canonical(input.as_bytes());
        let refusals: Vec<&Value> = out.iter().filter(|l| l["type"] == "permission_denied").collect();
        assert_eq!(refusals.len(), 1, "{input}");
        let r = refusals[0];
        assert_eq!((r["id"].as_str(), r["name"].as_str()), (Some("toolu_rm"), Some("Bash")));
        assert_eq!(r["arguments"], json!({"command": "rm -rf build"}));
        // Not a second call, nor a second result.
        assert_eq!(out.iter().filter(|l| l["type"] == "tool_call" && l["id"] == "toolu_rm").count(), 1);
        assert_eq!(out.iter().filter(|l| l["type"] == "tool_result" && l["id"] == "toolu_rm").count(), 1);
    }
    // A reader of another dialect is told: localcode's notice says the call was refused.
    let lc = common::translate(text.as_bytes(), Dialect::ClaudeCode, Dialect::Localcode);
    assert!(
        common::values(&lc)
            .iter()
            .any(|l| l["type"] == "notice"
                && l["text"].as_str().is_some_and(|t| t.starts_with("permission denied: Bash")))
    );
    // A refusal of a call the stream never showed is still that call, made and refused.
    let only = text.replace("\"toolu_rm\"", "\"toolu_other\"").replacen("\"toolu_other\"", "\"toolu_rm\"", 2);
    let out = canonical(only.as_bytes());
    let r = out.iter().find(|l| l["type"] == "permission_denied").unwrap();
    assert_eq!(r["id"], "toolu_other");
}

#[test]
fn the_runs_cost_is_total_cost_usd_else_the_models_costs() {
    // claude-code.md: `total_cost_usd` (cumulative), `modelUsage[m].costUSD`: all calls,
    // cumulative; taken from the last result. The notes: in a 2.1.3 capture the total exceeds
    // the per-model sum, so the stated total wins where there is one.
    let text = String::from_utf8(fixture("success.jsonl")).unwrap();
    let cost = |s: &str| canonical(s.as_bytes()).pop().unwrap()["cost_usd"].as_f64();
    assert_eq!(cost(&text), Some(0.022831));
    let two_models = text.replace(
        r#""costUSD":0.022831,"#,
        r#""costUSD":0.02,"#,
    ).replace(
        r#""maxOutputTokens":32000}}"#,
        r#""maxOutputTokens":32000},"claude-haiku-4-5":{"inputTokens":1,"outputTokens":1,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"webSearchRequests":0,"costUSD":0.005,"contextWindow":200000,"maxOutputTokens":32000}}"#,
    );
    assert_ne!(two_models, text);
    assert_eq!(cost(&two_models), Some(0.022831), "the stated total, not the models' 0.025");
    let no_total = two_models.replace(r#""total_cost_usd":0.022831,"#, "");
    assert_eq!(cost(&no_total), Some(0.025));
    let none = no_total.replace(r#""costUSD":0.02,"#, "").replace(r#""costUSD":0.005,"#, "");
    assert_eq!(cost(&none), None, "no cost stated, none made up");
}

/// Concatenates the canonical text deltas (the text a reader of the deltas shows).
fn streamed_text(out: &[Value], kind: &str) -> String {
    out.iter().filter(|l| l["type"] == kind).map(|l| l["text"].as_str().unwrap().to_string()).collect()
}

#[test]
fn stream_event_partials_are_read_as_deltas_and_the_assistant_lines_add_nothing_twice() {
    // claude-code.md, Partial messages: stream_event lines go ahead of the assistant lines they
    // build; "The full assistant lines still follow: deltas add no content and no usage."
    let input = fixture("partial-messages.jsonl");
    let out = canonical(&input);
    assert_eq!(streamed_text(&out, "text_delta"), "It is a demo project.");
    assert_eq!(out.iter().filter(|l| l["type"] == "text_delta").count(), 2, "each text_delta as it came");
    assert_eq!(out.iter().filter(|l| l["type"] == "text_start").count(), 1);
    assert_eq!(out.iter().filter(|l| l["type"] == "text_end").count(), 1);
    assert_eq!(streamed_text(&out, "reasoning_delta"), "Read the readme.");
    assert_eq!(out.iter().filter(|l| l["type"] == "reasoning_start").count(), 1);
    // Usage from the assistant lines, once per message (4 + 80 + 2050 input over the run), not
    // from message_start / message_delta (whose output 42 and 9 are nowhere).
    let rounds: Vec<u64> = out
        .iter()
        .filter(|l| l["type"] == "usage" && l["scope"] == "round")
        .map(|l| l["input"].as_u64().unwrap())
        .collect();
    assert_eq!(rounds, [3 + 50 + 1000, 1 + 30 + 1050]);
    assert!(!out.iter().any(|l| l["type"] == "usage" && (l["output"] == 42 || l["output"] == 9)));
    let t = out.last().unwrap();
    assert_eq!((t["usage"]["input"].as_u64(), t["usage"]["output"].as_u64()), (Some(2134), Some(51)));
    assert_eq!(t["final_text"], "It is a demo project.");
    // Written back unchanged with --include-partial-messages, directly and through the
    // canonical stream; without it, the plain form: the same lines less the stream_event ones
    // ("The full assistant lines still follow: deltas add no content and no usage").
    let partial = |from: Dialect, input: &[u8], on: bool| {
        let mut opts = Options::new(Some(from), Dialect::ClaudeCode);
        opts.encode.include_partial_messages = on;
        String::from_utf8(translate_bytes(input, &opts).0).unwrap()
    };
    let via = common::translate(&input, Dialect::ClaudeCode, Dialect::Canonical);
    assert_eq!(partial(Dialect::ClaudeCode, &input, true).as_bytes(), &input[..]);
    assert_eq!(partial(Dialect::Canonical, via.as_bytes(), true).as_bytes(), &input[..]);
    let text = String::from_utf8(input.clone()).unwrap();
    let plain: String =
        text.lines().filter(|l| !l.contains(r#""type":"stream_event""#)).map(|l| format!("{l}\n")).collect();
    assert_ne!(plain, text);
    assert_eq!(partial(Dialect::ClaudeCode, &input, false), plain);
    assert_eq!(partial(Dialect::Canonical, via.as_bytes(), false), plain);

    // Deltas short of the whole block: the assistant line gives the rest, once.
    let short = String::from_utf8(input.clone()).unwrap().replace(r#""text":"demo project."}"#, r#""text":"demo "}"#);
    assert_ne!(short.as_bytes(), &input[..]);
    let out = canonical(short.as_bytes());
    assert_eq!(streamed_text(&out, "text_delta"), "It is a demo project.");
    // Cut after the deltas, before the assistant line: the text so far, ended.
    let text = String::from_utf8(input).unwrap();
    let cut: String = text.lines().take(20).map(|l| format!("{l}\n")).collect();
    let out = canonical(cut.as_bytes());
    assert_eq!(streamed_text(&out, "text_delta"), "It is a demo project.");
    assert_eq!(out.iter().filter(|l| l["type"] == "text_end").count(), 1);
    assert_eq!(out.last().unwrap()["outcome"], "incomplete");
    // A subagent's partials are its own: the main agent's text is then its assistant line's.
    let mut sub = text.clone();
    for n in 17..=21 {
        let main = format!(r#""parent_tool_use_id":null,"uuid":"p-{n}""#);
        sub = sub.replace(&main, &format!(r#""parent_tool_use_id":"toolu_task","uuid":"p-{n}""#));
    }
    let out = canonical(sub.as_bytes());
    assert_eq!(streamed_text(&out, "text_delta"), "It is a demo project.");
    assert_eq!(out.iter().filter(|l| l["type"] == "text_delta").count(), 1);
}

fn with_partials(input: &[u8], from: Dialect) -> Vec<Value> {
    let mut opts = agentgate::Options::new(Some(from), Dialect::ClaudeCode);
    opts.encode.include_partial_messages = true;
    let (out, _, _) = agentgate::translate_bytes(input, &opts);
    common::values(std::str::from_utf8(&out).unwrap())
}

#[test]
fn include_partial_messages_writes_stream_events_as_claude_does() {
    // claude-code.md, Partial messages, in the order Claude Code writes them: message_start;
    // per block content_block_start, its deltas, content_block_stop, then the block's
    // assistant line; message_delta and message_stop once the message ends. Every stream_event
    // line carries `event`, `session_id`, `parent_tool_use_id` and `uuid`.
    let input = std::fs::read(common::fixtures().join("localcode/success.jsonl")).unwrap();
    let out = with_partials(&input, Dialect::Localcode);
    let plain = common::values(&common::translate(&input, Dialect::Localcode, Dialect::ClaudeCode));
    // The same lines otherwise: partials added, nothing else.
    let kinds =
        |v: &[Value]| v.iter().filter(|l| l["type"] != "stream_event").map(|l| l["type"].clone()).collect::<Vec<_>>();
    assert_eq!(kinds(&out), kinds(&plain));
    let mut message: Option<String> = None;
    let mut blocks: std::collections::BTreeMap<u64, (Value, String, bool)> = Default::default();
    let mut last_stop: Option<u64> = None;
    let mut messages = 0;
    for (i, l) in out.iter().enumerate() {
        match l["type"].as_str().unwrap() {
            "stream_event" => {
                for k in ["event", "session_id", "parent_tool_use_id", "uuid"] {
                    assert!(l.get(k).is_some(), "line {i} lacks {k}: {l}");
                }
                let e = &l["event"];
                let index = e["index"].as_u64();
                match e["type"].as_str().unwrap() {
                    "message_start" => {
                        assert!(message.is_none(), "line {i}: a message inside a message");
                        assert_eq!(e["message"]["content"], json!([]));
                        message = Some(e["message"]["id"].as_str().unwrap().to_string());
                        blocks.clear();
                        messages += 1;
                    }
                    "content_block_start" => {
                        assert!(message.is_some(), "line {i}: a block outside a message");
                        blocks.insert(index.unwrap(), (e["content_block"].clone(), String::new(), false));
                    }
                    "content_block_delta" => {
                        let b = blocks.get_mut(&index.unwrap()).expect("a delta of a begun block");
                        assert!(!b.2, "line {i}: a delta after its block stopped");
                        let d = &e["delta"];
                        for k in ["text", "thinking", "partial_json"] {
                            b.1.push_str(d[k].as_str().unwrap_or_default());
                        }
                    }
                    "content_block_stop" => {
                        blocks.get_mut(&index.unwrap()).unwrap().2 = true;
                        last_stop = index;
                    }
                    "message_delta" => assert!(e["delta"]["stop_reason"].is_string()),
                    "message_stop" => {
                        assert!(blocks.values().all(|b| b.2), "line {i}: a block left open");
                        message = None;
                    }
                    other => panic!("line {i}: event {other}"),
                }
            }
            "assistant" => {
                // Right after its block's stop, in the message the stream_events began.
                assert_eq!(out[i - 1]["event"]["type"], "content_block_stop", "line {i}");
                assert_eq!(l["message"]["id"].as_str(), message.as_deref(), "line {i}");
                let block = &l["message"]["content"][0];
                let (_, streamed, _) = &blocks[&last_stop.unwrap()];
                let whole = match block["type"].as_str().unwrap() {
                    "text" => block["text"].as_str().unwrap().to_string(),
                    "thinking" => block["thinking"].as_str().unwrap().to_string(),
                    _ => {
                        // The arguments' JSON, whole, as input_json_delta pieces.
                        let v: Value = serde_json::from_str(streamed).unwrap();
                        assert_eq!(v, block["input"], "line {i}");
                        continue;
                    }
                };
                assert_eq!(streamed, &whole, "line {i}: the deltas are the block's text");
            }
            kind => assert!(message.is_none(), "line {i}: {kind} inside an assistant message"),
        }
    }
    assert!(messages >= 2, "{messages} messages");
    // Read back, the text is the source's, once (a reader of the deltas and of the lines
    // agrees), and the usage is the source's.
    let text: String = out.iter().map(|l| l.to_string() + "\n").collect();
    let back = canonical(text.as_bytes());
    let source = common::values(&common::translate(&input, Dialect::Localcode, Dialect::Canonical));
    assert_eq!(streamed_text(&back, "text_delta"), streamed_text(&source, "text_delta"));
    for k in ["input", "output", "total"] {
        assert_eq!(back.last().unwrap()["usage"][k], source.last().unwrap()["usage"][k], "{k}");
    }
    assert_eq!(back.last().unwrap()["final_text"], source.last().unwrap()["final_text"]);
    // Without the flag, none.
    assert!(!plain.iter().any(|l| l["type"] == "stream_event"));
    // What validate holds a Claude Code stream to.
    let problems = agentgate::contract::check_stream(Dialect::ClaudeCode.contract(), &text);
    assert!(problems.is_empty(), "{problems:?}");
}

#[cfg(unix)]
#[test]
fn exec_takes_the_flags_the_agent_sdk_gives_claude() {
    // The SDK's client starts its `claude` with these (subprocess_cli.py); a wrapper passes
    // them on. --include-partial-messages is read; the others are accepted and do nothing.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_agentgate"))
        .args(["exec", "--as", "claude-code", "--output-format", "stream-json", "--verbose"])
        .args(["--system-prompt", "", "--tools", "", "--setting-sources=", "--permission-mode", "default"])
        .args(["--max-turns", "3", "--model", "claude-sonnet-4-6", "--mcp-config", r#"{"mcpServers":{}}"#])
        .args(["--include-partial-messages", "--", "cat"])
        .arg(common::fixtures().join("localcode/success.jsonl"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let lines = common::values(std::str::from_utf8(&out.stdout).unwrap());
    assert!(lines.iter().any(|l| l["type"] == "stream_event" && l["event"]["type"] == "content_block_delta"));
    assert_eq!(lines.last().unwrap()["type"], "result");
    // localcode states no directory: the init's is the one the agent ran in.
    assert_eq!(lines[0]["cwd"].as_str(), std::env::current_dir().unwrap().to_str());
}

/// claude-code.md, Content blocks: a `tool_use` `id` is `toolu_…`, and a call's result is the
/// `tool_result` whose `tool_use_id` equals it. A source that names no call (localcode) gets ids
/// of that form; a source that names its calls keeps its ids.
#[test]
fn calls_a_source_gave_no_id_get_toolu_ids_and_named_calls_keep_theirs() {
    let localcode = std::fs::read(common::fixtures().join("localcode/success.jsonl")).unwrap();
    let out = common::values(&common::translate(&localcode, Dialect::Localcode, Dialect::ClaudeCode));
    let uses: Vec<&str> = out
        .iter()
        .filter(|l| l["type"] == "assistant")
        .flat_map(|l| l["message"]["content"].as_array().unwrap())
        .filter(|b| b["type"] == "tool_use")
        .map(|b| b["id"].as_str().unwrap())
        .collect();
    let results: Vec<&str> = out
        .iter()
        .filter(|l| l["type"] == "user")
        .flat_map(|l| l["message"]["content"].as_array().unwrap())
        .map(|b| b["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(uses.len(), 4);
    assert!(uses.iter().all(|id| id.starts_with("toolu_")), "{uses:?}");
    assert_eq!(results, uses, "each result names its call");
    let distinct: std::collections::HashSet<_> = uses.iter().collect();
    assert_eq!(distinct.len(), uses.len());

    let adal = std::fs::read(common::fixtures().join("adal/success.jsonl")).unwrap();
    let out = common::translate(&adal, Dialect::Adal, Dialect::ClaudeCode);
    let source_ids: Vec<String> = common::values(std::str::from_utf8(&adal).unwrap())
        .iter()
        .filter(|l| l["type"] == "tool_call")
        .map(|l| l["id"].as_str().unwrap().to_string())
        .collect();
    assert!(!source_ids.is_empty());
    for id in source_ids {
        assert!(out.contains(&format!("\"id\":\"{id}\"")), "{id} kept");
    }
}

/// Issue 54, part 3: a base-context reader takes the *last* assistant message as the answer.
/// success.jsonl's answer is "Two files: main.rs, lib.rs." (its assistant line: 1 output token);
/// its result states 61 output tokens where the messages state 8 + 1 (52 more), and
/// total_cost_usd 0.022831. The answer's message is the last assistant message, and it carries both: output
/// 1 + 52 = 53 and cost.total 0.022831 (not zeros), with no empty message after it.
#[test]
fn the_answer_is_base_contexts_last_assistant_message_with_the_runs_extra_usage_and_cost() {
    let out = common::values(&common::translate(&fixture("success.jsonl"), Dialect::ClaudeCode, Dialect::BaseContext));
    let ends: Vec<&Value> =
        out.iter().filter(|l| l["type"] == "message_end" && l["message"]["role"] == "assistant").collect();
    let last = &ends.last().unwrap()["message"];
    assert_eq!(last["content"], json!([{"type": "text", "text": "Two files: main.rs, lib.rs."}]));
    assert_eq!(last["usage"]["output"], 53);
    assert_eq!(last["usage"]["cost"]["total"], 0.022831);
    let (_, summary, _) =
        translate_bytes(&fixture("success.jsonl"), &Options::new(Some(Dialect::ClaudeCode), Dialect::BaseContext));
    // The messages before it had no cost of their own: zeros, said for them alone.
    assert_eq!(summary.report.synthesized.get("message.usage.cost (zeros)"), Some(&(ends.len() as u64 - 1)));
}

/// A run stopped at its turn limit is `error_max_turns` whatever the source called the limit
/// (claude-code.md's outcome table; ACP's stop reason is `max_turn_requests`).
#[test]
fn a_turn_limit_in_any_sources_words_is_error_max_turns() {
    for reason in ["max_turn_requests", "max_rounds", "error_max_turns", "StepBudget"] {
        let input = format!(
            "{{\"v\":1,\"type\":\"terminal\",\"outcome\":\"incomplete\",\"reason\":\"{reason}\",\"session_id\":\"s\"}}\n"
        );
        let out = common::values(&common::translate(input.as_bytes(), Dialect::Canonical, Dialect::ClaudeCode));
        let result = out.last().unwrap();
        assert_eq!(
            (result["subtype"].as_str(), result["is_error"].as_bool()),
            (Some("error_max_turns"), Some(true)),
            "{reason}"
        );
    }
}

#[test]
fn a_result_line_with_a_member_of_a_refused_type_comes_back_valid_and_says_what_it_lost() {
    // claude-code.md, result: `result` is the answer's text, `total_cost_usd` a number,
    // `duration_ms` an integer. A result line is kept whole (the run's result is folded from
    // all of them), and was copied as read even when it was not valid: the output was not.
    let stream = String::from_utf8(fixture("success.jsonl")).unwrap();
    let spoiled = stream
        .replace("\"result\":\"Two files: main.rs, lib.rs.\"", "\"result\":{\"text\":1}")
        .replace("\"total_cost_usd\":0.022831", "\"total_cost_usd\":\"0.022831\"");
    assert_ne!(spoiled, stream, "the fixture's result line is spoiled");
    let opts = Options::new(Some(Dialect::ClaudeCode), Dialect::ClaudeCode);
    let (out, summary, _) = translate_bytes(spoiled.as_bytes(), &opts);
    let out = String::from_utf8(out).unwrap();
    let problems = agentgate::contract::check_stream(Dialect::ClaudeCode.contract(), &out);
    assert!(problems.is_empty(), "{problems:?}\n{out}");
    let result: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["duration_ms"], 5120, "the rest of the line as it was: {result}");
    assert!(result.get("result").is_none(), "{result}");
    let dropped = &summary.report.dropped_fields;
    assert_eq!(dropped.get("result.result"), Some(&1), "{dropped:?}");
    assert_eq!(dropped.get("result.total_cost_usd"), Some(&1), "{dropped:?}");

    // A member the kind requires refused: the line cannot stand; the run's result is written
    // from what was read, once.
    let broken = spoiled.replace("\"duration_ms\":5120", "\"duration_ms\":\"5120 ms\"");
    assert_ne!(broken, spoiled);
    let (out, summary, _) = translate_bytes(broken.as_bytes(), &opts);
    let out = String::from_utf8(out).unwrap();
    let problems = agentgate::contract::check_stream(Dialect::ClaudeCode.contract(), &out);
    assert!(problems.is_empty(), "{problems:?}\n{out}");
    assert_eq!(out.lines().filter(|l| l.contains("\"type\":\"result\"")).count(), 1, "{out}");
    assert_eq!(summary.report.dropped_kinds.get("result"), Some(&1), "{:?}", summary.report);
}

#[test]
fn a_result_line_with_a_subtype_the_spec_does_not_list_is_written_from_the_model() {
    // claude-code.md lists result's subtypes; a kept result line whose members all have their
    // types but whose subtype is none of them was written back as it came: not valid.
    let stream = String::from_utf8(fixture("success.jsonl")).unwrap();
    let spoiled = stream.replace("\"subtype\":\"success\",\"is_error\"", "\"subtype\":\"weird\",\"is_error\"");
    assert_ne!(spoiled, stream);
    let opts = Options::new(Some(Dialect::ClaudeCode), Dialect::ClaudeCode);
    let (out, _, _) = translate_bytes(spoiled.as_bytes(), &opts);
    let out = String::from_utf8(out).unwrap();
    let problems = agentgate::contract::check_stream(Dialect::ClaudeCode.contract(), &out);
    assert!(problems.is_empty(), "{problems:?}\n{out}");
    assert_eq!(out.lines().filter(|l| l.contains("\"type\":\"result\"")).count(), 1, "{out}");
}

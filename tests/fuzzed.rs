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

/// `input` read as `dialect` and written as `dialect`: its output, which must hold to the
/// contract (#53 rule 4: a stream that is not valid in its own dialect comes out valid).
fn to_itself(input: &str, dialect: Dialect) -> String {
    let (out, summary, _) = translate_bytes(input.as_bytes(), &Options::new(Some(dialect), dialect));
    let out = String::from_utf8(out).unwrap();
    let problems: Vec<_> = check_stream(dialect.contract(), &out)
        .into_iter()
        .filter(|(_, p)| !(p.starts_with("unknown record kind") || p.starts_with("warning: ")))
        .collect();
    assert!(problems.is_empty(), "{dialect} to itself: {problems:?}\n{out}");
    assert_eq!(summary.report.accounted(), summary.report.lines, "{dialect} to itself");
    out
}

/// The `type` of each line of `out`.
fn kinds(out: &str) -> Vec<String> {
    out.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["type"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn a_line_of_an_unlisted_kind_before_a_missing_header_does_not_stand_for_the_header() {
    // gemini, codex and base-context: a stream whose header line was lost (cut, not JSON) and
    // whose first line is of a kind the spec does not list. The encoder observing the copied
    // line opened the run into a thrown-away buffer, so the output never had its `init`,
    // `thread.started` or `session`. The unlisted line may stay first (the rule is about the
    // first *listed* line); the header must come before the first listed one.
    let header = [(Dialect::Gemini, "init"), (Dialect::Codex, "thread.started"), (Dialect::BaseContext, "session")];
    for (dialect, first) in header {
        let out = to_itself("{\"type\":\"zzz\",\"n\":1}\n", dialect);
        let kinds = kinds(&out);
        assert_eq!(kinds[0], "zzz", "{dialect}: the unlisted line as read, first:\n{out}");
        assert_eq!(kinds[1], first, "{dialect}: then the header:\n{out}");
    }
}

#[test]
fn a_wuu_thread_started_without_its_thread_id_stays_a_thread_line() {
    // wuu.md: thread_started carries thread_id, provider, model, cwd, all required. One without
    // its thread_id was written back as a `session_configured` missing protocol_version,
    // max_parallel and permissions (the decoder tells the two apart by the id).
    let stream = concat!(
        "{\"cwd\":\"/repo\",\"model\":\"gpt-5.1-codex\",\"provider\":\"openai\",\"type\":\"thread_started\"}\n",
        "{\"thread_id\":\"thread-9f2c\",\"turn_id\":\"turn-1\",\"type\":\"turn_started\"}\n",
    );
    let out = to_itself(stream, Dialect::Wuu);
    let first: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(first["type"], "thread_started", "{out}");
    assert!(first["thread_id"].as_str().is_some_and(|id| !id.is_empty()), "a thread id made: {out}");
    assert_eq!((first["cwd"].as_str(), first["model"].as_str()), (Some("/repo"), Some("gpt-5.1-codex")), "{out}");
}

#[test]
fn localcode_totals_that_sum_to_zero_are_prompt_plus_completion() {
    // localcode-notes.md: "result.tokens.total is the sum of total_tokens, or prompt +
    // completion when that sum is 0". A result stating total 0 beside a prompt of 5, and no
    // turn_tokens: the writer gives one turn_tokens of total 0 and a result total of 5, as
    // localcode adds them up; the contract held the total to the bare sum and called it wrong.
    let stream = "{\"type\": \"result\", \"status\": \"incomplete\", \"exit_code\": 1, \"reason\": \"model_server_unreachable\", \"final_text\": \"\", \"tokens\": {\"prompt\": 5, \"completion\": 0, \"total\": 0}}\n";
    let out = to_itself(stream, Dialect::Localcode);
    let result: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(result["tokens"]["total"], 5, "{out}");
    // And the contract still refuses a total that is neither.
    let wrong = out.replace("\"total\": 5", "\"total\": 7");
    assert!(
        check_stream(Dialect::Localcode.contract(), &wrong).iter().any(|(_, p)| p.contains("tokens.total")),
        "{wrong}"
    );
}

#[test]
fn a_canonical_extension_naming_no_dialect_goes_back_as_it_came() {
    // A canonical `extension` whose `dialect` member was lost: its kept line (of no `type`) was
    // written out as if it were a canonical line of an unknown kind: a line without `type`.
    let stream = "{\"v\":1,\"type\":\"extension\",\"line\":{\"seq\":\"1\"}}\n";
    let out = to_itself(stream, Dialect::Canonical);
    assert_eq!(out.lines().next(), Some(stream.trim_end()), "{out}");
}

#[test]
fn a_base_context_message_event_of_an_unlisted_type_is_dropped_and_counted() {
    // base-context.md lists the assistantMessageEvent types; one it does not (a mangled
    // `toolcall_delta`) was written back without the `partial` and `message` the plain form
    // needs. It cannot be valid in either form: it is left out, and the report says so.
    let stream = concat!(
        "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/r\"}\n",
        "{\"type\":\"agent_start\"}\n",
        "{\"type\":\"turn_start\"}\n",
        "{\"type\":\"message_start\",\"messageId\":1,\"message\":{\"role\":\"assistant\",\"content\":[],\"api\":\"a\",\"provider\":\"p\",\"model\":\"m\",\"usage\":{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":0,\"cost\":{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"total\":0}},\"stopReason\":\"stop\",\"timestamp\":0}}\n",
        "{\"type\":\"message_update\",\"messageId\":1,\"assistantMessageEvent\":{\"type\":\"tXoolcall_delta\",\"contentIndex\":0,\"delta\":\"{}\"}}\n",
    );
    for deltas in [false, true] {
        let mut opts = Options::new(Some(Dialect::BaseContext), Dialect::BaseContext);
        opts.encode.json_deltas = deltas;
        let (out, summary, _) = translate_bytes(stream.as_bytes(), &opts);
        let out = String::from_utf8(out).unwrap();
        let problems = check_stream(Dialect::BaseContext.contract(), &out);
        assert!(problems.iter().all(|(_, p)| p.starts_with("warning: ")), "deltas {deltas}: {problems:?}\n{out}");
        assert!(!out.contains("tXoolcall_delta"), "{out}");
        assert!(
            summary.report.dropped_kinds.get("extension").is_some_and(|n| *n >= 1),
            "counted: {:?}",
            summary.report
        );
    }
}

#[test]
fn a_rewritten_gemini_tool_use_keeps_the_id_its_tool_result_names() {
    // A gemini tool_use that is not valid as it stands (its required `timestamp` misspelt) is
    // written anew; its id without `__` (gemini.md: before v0.43) became `Bash__bash-123`,
    // while the valid tool_result after it, copied as read, still named `bash-123`.
    let stream = concat!(
        "{\"type\":\"init\",\"timestamp\":\"2025-10-10T12:00:00.000Z\",\"session_id\":\"abc123\",\"model\":\"gemini-2.0-flash-exp\"}\n",
        "{\"type\":\"tool_use\",\"tool_name\":\"Bash\",\"tool_id\":\"bash-123\",\"parameters\":{\"command\":\"ls -la\"},\"tiesmtamp\":\"2025-10-10T12:00:02.000Z\"}\n",
        "{\"type\":\"tool_result\",\"tool_id\":\"bash-123\",\"status\":\"success\",\"output\":\"a\",\"timestamp\":\"2025-10-10T12:00:03.000Z\"}\n",
    );
    let out = to_itself(stream, Dialect::Gemini);
    assert_eq!(out.matches("\"tool_id\":\"bash-123\"").count(), 2, "{out}");
}

#[test]
fn a_localcode_result_without_its_status_gets_the_outcomes_word() {
    // localcode.md: status is ok or incomplete. A result whose `status` was lost read as "",
    // which was kept as a status word to write back: `"status": ""`.
    let stream = "{\"type\": \"result\", \"stXatus\": \"incomplete\", \"exit_code\": 130, \"reason\": \"user_cancel\", \"final_text\": \"\", \"tokens\": {\"prompt\": 0, \"completion\": 0, \"total\": 0}}\n";
    let out = to_itself(stream, Dialect::Localcode);
    let result: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(result["status"], "incomplete", "{out}");
    // A word the notes list is still given back as it was.
    let interrupted = stream.replace("stXatus\": \"incomplete", "status\": \"interrupted");
    let out = to_itself(&interrupted, Dialect::Localcode);
    assert!(out.lines().last().unwrap().contains("\"status\": \"interrupted\""), "{out}");
}

#[test]
fn a_base_context_stop_reason_the_spec_does_not_list_is_not_written_back() {
    // base-context-notes.md 1.3 lists StopReason's five values. A message_end stopping with
    // another word (not valid as it stands, so written anew) kept it for the writer, which
    // wrote it on message_end and turn_end.
    let stream = concat!(
        "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/r\"}\n",
        "{\"type\":\"agent_start\"}\n",
        "{\"type\":\"turn_start\"}\n",
        "{\"type\":\"message_start\",\"message\":{\"role\":\"assistant\",\"content\":[],\"api\":\"a\",\"provider\":\"p\",\"model\":\"m\",\"usage\":{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":0,\"cost\":{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"total\":0}},\"stopReason\":\"stop\",\"timestamp\":0}}\n",
        "{\"type\":\"message_end\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],\"api\":\"a\",\"provider\":\"p\",\"model\":\"m\",\"usage\":{\"input\":1,\"output\":1,\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":2,\"cost\":{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"total\":0}},\"stopReason\":\"sto`p\",\"timestamp\":0}}\n",
        "{\"type\":\"turn_end\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],\"api\":\"a\",\"provider\":\"p\",\"model\":\"m\",\"usage\":{\"input\":1,\"output\":1,\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":2,\"cost\":{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"total\":0}},\"stopReason\":\"sto`p\",\"timestamp\":0},\"toolResults\":[]}\n",
        "{\"type\":\"agent_end\",\"messages\":[]}\n",
    );
    let out = to_itself(stream, Dialect::BaseContext);
    assert!(!out.contains("sto`p"), "{out}");
}

#[test]
fn a_line_carried_through_canonical_without_its_kind_is_not_written_as_a_line_of_its_dialect() {
    // A canonical extension of localcode whose line lost its `type`: the localcode writer put
    // the line out as read, a localcode line without `type`.
    let stream =
        "{\"v\":1,\"type\":\"extension\",\"dialect\":\"localcode\",\"line\":{\"2ype\":\"heartbeat\",\"seq\":\"1\"}}\n";
    let (out, summary, _) =
        translate_bytes(stream.as_bytes(), &Options::new(Some(Dialect::Canonical), Dialect::Localcode));
    let out = String::from_utf8(out).unwrap();
    assert!(check_stream(Dialect::Localcode.contract(), &out).is_empty(), "{out}");
    assert!(!out.contains("2ype"), "{out}");
    assert_eq!(summary.report.dropped_kinds.get("extension"), Some(&1), "{:?}", summary.report);
}

#[test]
fn a_call_its_reader_refuses_does_not_vouch_for_the_result_after_it() {
    // A gemini tool_use without its tool_name is a bad line (not written); the pass-through
    // check had counted its tool_id as seen, so the tool_result naming it was copied, and the
    // output had a result without its call. Now the result is written with the call it answers.
    let stream = concat!(
        "{\"type\":\"init\",\"timestamp\":\"2026-11-02T09:14:12.001Z\",\"session_id\":\"s\",\"model\":\"auto\"}\n",
        "{\"type\":\"tool_use\",\"timestamp\":\"2026-11-02T09:14:13.302Z\",\"mtool_name\":\"grep_search\",\"tool_id\":\"grep_search_1\",\"parameters\":{}}\n",
        "{\"type\":\"tool_result\",\"timestamp\":\"2026-11-02T09:14:13.382Z\",\"tool_id\":\"grep_search_1\",\"status\":\"success\",\"output\":\"Found 42 matches\"}\n",
    );
    let out = to_itself(stream, Dialect::Gemini);
    let kinds = kinds(&out);
    assert_eq!(&kinds[1..3], ["tool_use", "tool_result"], "{out}");
}

#[test]
fn a_localcode_result_keeps_its_own_token_members_beside_all_three_counts() {
    // A result whose `tokens` held a member of its own (here a misspelt "total") was kept
    // whole for localcode to get back, and written in place of the counts: no `total`.
    let stream = concat!(
        "{\"type\": \"turn_tokens\", \"prompt_tokens\": \"500\", \"completion_tokens\": \"20\", \"total_tokens\": \"520\"}\n",
        "{\"type\": \"result\", \"status\": \"ok\", \"exit_code\": 0, \"reason\": \"completed\", \"final_text\": \"x\", \"tokens\": {\"prompt\": 500, \"completion\": 20, \"t;tal\": 520}}\n",
    );
    let out = to_itself(stream, Dialect::Localcode);
    let result: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert_eq!(result["tokens"]["total"], 520, "{out}");
    assert_eq!(result["tokens"]["t;tal"], 520, "its own member kept: {out}");
}

#[test]
fn a_compaction_reason_base_context_does_not_list_is_not_written() {
    // base-context.md: reason is "manual" | "threshold" | "overflow" (the notes add
    // "requested"). Any other word was written as it came: now the writer's own, the word
    // counted as dropped.
    let stream = concat!(
        "{\"type\":\"session\",\"version\":3,\"id\":\"f\",\"timestamp\":\"2023-11-14T22:13:20.000Z\",\"cwd\":\"\"}\n",
        "{\"type\":\"compaction_start\",\"reason\":\"text 0\"}\n",
    );
    let (out, summary, _) =
        translate_bytes(stream.as_bytes(), &Options::new(Some(Dialect::BaseContext), Dialect::BaseContext));
    let out = String::from_utf8(out).unwrap();
    assert!(
        check_stream(Dialect::BaseContext.contract(), &out).iter().all(|(_, p)| p.starts_with("warning: ")),
        "{out}"
    );
    assert!(out.contains("{\"type\":\"compaction_start\",\"reason\":\"threshold\"}"), "{out}");
    assert_eq!(summary.report.dropped_fields.get("compaction_start.reason"), Some(&1), "{:?}", summary.report);
}

#[test]
fn a_wuu_session_configured_lacking_a_required_member_gets_it() {
    // wuu.md: session_configured carries protocol_version, provider, model, max_parallel,
    // workspace_root and permissions. One without protocol_version was written anew without it.
    let stream = "{\"effort\":\"\",\"max_parallel\":3,\"model\":\"m\",\"permissions\":{},\"provider\":\"p\",\"type\":\"session_configured\",\"workspace_root\":\"/w\"}\n";
    let out = to_itself(stream, Dialect::Wuu);
    let first: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(first["protocol_version"], "wuu-app-server/v0.1", "{out}");
    assert_eq!(first["max_parallel"], 3, "the source's own kept: {out}");
    // A null member is as missing (the campaign's `streams` found it after the fix above).
    let null = stream.replace("\"permissions\":{}", "\"permissions\":null");
    let out = to_itself(&null, Dialect::Wuu);
    assert!(out.lines().next().unwrap().contains("\"permissions\":{}"), "{out}");
}

#[test]
fn a_wuu_session_configured_whose_required_member_has_the_wrong_type_gets_it_and_says_so() {
    // wuu.md: max_parallel is an integer. A session_configured whose max_parallel was a string
    // (the campaign's pipeline_wuu) was written anew without it: the string is refused where
    // the line is written, and nothing put the member back or said the source's was lost.
    let stream = "{\"effort\":\"\",\"max_parallel\":\"four\",\"model\":\"m\",\"permissions\":[1],\"protocol_version\":\"wuu-app-server/v0.1\",\"provider\":\"p\",\"type\":\"session_configured\",\"workspace_root\":\"/w\"}\n";
    let out = to_itself(stream, Dialect::Wuu);
    let first: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(first["max_parallel"], 1, "the placeholder: {out}");
    // wuu.md names permissions without a type (mappings/wuu.json: any): a list stays.
    assert_eq!(first["permissions"], serde_json::json!([1]), "the source's own kept: {out}");
    assert_eq!(first["protocol_version"], "wuu-app-server/v0.1", "the source's own kept: {out}");
    let (_, summary, _) = translate_bytes(stream.as_bytes(), &Options::new(Some(Dialect::Wuu), Dialect::Wuu));
    let report = format!("{:?}", summary.report);
    assert!(report.matches("session_configured.max_parallel").count() >= 2, "dropped and synthesized: {report}");
    assert!(!report.contains("permissions"), "{report}");
}

#[test]
fn a_codex_mcp_call_with_null_arguments_is_a_call_without_arguments() {
    // A codex mcp_tool_call item whose `arguments` is null (a serde_json::Value in codex's own
    // types) went into canonical as `"arguments":null`, which canonical's contract refused; to
    // codex it came back as `{"raw":"null"}`. null is no arguments, as absent is.
    let stream = concat!(
        "{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n",
        "{\"type\":\"turn.started\"}\n",
        "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_0\",\"type\":\"mcp_tool_call\",\"server\":\"docs\",\"tool\":\"search\",\"arguments\":null,\"error\":null,\"status\":\"in_progress\"}}\n",
    );
    translates_soundly(stream, Dialect::Codex);
    let (out, _, _) = translate_bytes(stream.as_bytes(), &Options::new(Some(Dialect::Codex), Dialect::Canonical));
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.lines().any(|l| l.starts_with("{\"v\":1,\"type\":\"tool_call\"") && l.contains("\"arguments\":{}")),
        "{out}"
    );
}

#[test]
fn a_loom_turn_written_as_minus_zero_is_not_an_integer() {
    // loom.md: Usage.turn is an integer. `-0` is one by JSON's grammar, but serde_json (loom is
    // Rust) reads it as the float -0.0, which a u64 field refuses. The contract's quick look at
    // the raw text took it for an integer, its look at the value did not: loom to loom wrote
    // the Usage line back without its required turn (the campaign's pipeline_loom).
    let stream = "{\"final_usage\":true,\"kind\":\"Usage\",\"model\":\"recorded\",\"schema_version\":1,\"turn\":-0}\n";
    translates_soundly(stream, Dialect::Loom);
    let problems = check_stream(Dialect::Loom.contract(), stream);
    assert!(problems.iter().any(|(_, p)| p.contains("turn")), "the line is not valid loom: {problems:?}");
    // A count of -0 where any integer will do (wuu's max_parallel) is refused as well.
    let wuu = "{\"effort\":\"\",\"max_parallel\":-0,\"model\":\"m\",\"permissions\":{},\"protocol_version\":\"wuu-app-server/v0.1\",\"provider\":\"p\",\"type\":\"session_configured\",\"workspace_root\":\"/w\"}\n";
    let problems = check_stream(Dialect::Wuu.contract(), wuu);
    assert!(problems.iter().any(|(_, p)| p.contains("max_parallel")), "{problems:?}");
    translates_soundly(wuu, Dialect::Wuu);
}

#[test]
fn a_base_context_compaction_end_whose_aborted_is_no_boolean_is_written_with_one() {
    // base-context.md: compaction_end's `aborted` is a boolean. One that was an object (the
    // campaign's `streams`) went into the line written anew as it came: not valid.
    let stream = concat!(
        "{\"type\":\"session\",\"version\":3,\"id\":\"x\",\"timestamp\":\"2023-11-14T22:13:20.000Z\",\"cwd\":\"\"}\n",
        "{\"type\":\"compaction_end\",\"reason\":\"threshold\",\"aborted\":{\"k0\":1},\"willRetry\":false}\n",
    );
    translates_soundly(stream, Dialect::BaseContext);
    let mut opts = Options::new(Some(Dialect::BaseContext), Dialect::BaseContext);
    opts.encode.json_deltas = true;
    let (out, summary, _) = translate_bytes(stream.as_bytes(), &opts);
    let out = String::from_utf8(out).unwrap();
    assert!(check_stream(Dialect::BaseContext.contract(), &out).is_empty(), "{out}");
    assert!(out.lines().nth(1).unwrap().contains("\"aborted\":false"), "the placeholder: {out}");
    assert_eq!(summary.report.dropped_fields.get("compaction_end.aborted"), Some(&1), "{:?}", summary.report);
}

#[test]
fn a_base_context_message_time_past_what_64_bits_of_nanoseconds_hold_is_no_time_to_otlp() {
    // base-context.md: a message's timestamp is in milliseconds. One of 9 * 10^13 (the year
    // 4821) is inside what otlp took for a time, and its nanoseconds overflowed (the campaign's
    // `streams`, with debug assertions: a panic; without, a wrong time).
    let stream = std::fs::read_to_string("tests/fixtures/base-context/success.jsonl")
        .unwrap()
        .replace("\"timestamp\":1773655923530", "\"timestamp\":90000000000000");
    assert!(stream.contains("90000000000000"));
    translates_soundly(&stream, Dialect::BaseContext);
    let (out, _, _) = translate_bytes(stream.as_bytes(), &Options::new(Some(Dialect::BaseContext), Dialect::Otlp));
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.lines().count() > 0 && out.lines().all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()),
        "{out}"
    );
}

#[test]
fn a_base_context_session_action_update_without_its_actions_gets_them_and_says_so() {
    // mappings/base-context.json: session_action_update requires `actions`. One without it,
    // or with a value of a refused type (left out since b756d46), was written anew without
    // it (the campaign's `streams`, on 21b9249): not valid.
    for actions in ["", ",\"actions\":\"x\""] {
        let stream = format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"x\",\"timestamp\":\"1970-01-01T00:00:00.000Z\",\"cwd\":\"\"}}\n{{\"type\":\"session_action_update\"{actions}}}\n"
        );
        translates_soundly(&stream, Dialect::BaseContext);
        let mut opts = Options::new(Some(Dialect::BaseContext), Dialect::BaseContext);
        opts.encode.json_deltas = true;
        let (out, summary, _) = translate_bytes(stream.as_bytes(), &opts);
        let out = String::from_utf8(out).unwrap();
        assert!(check_stream(Dialect::BaseContext.contract(), &out).is_empty(), "{out}");
        assert_eq!(summary.report.synthesized.get("session_action_update.actions"), Some(&1), "{:?}", summary.report);
    }
}

//! gemini (`gemini -p PROMPT --output-format stream-json`): read by the spec's rules (text only
//! as delta chunks, the answer after the last tool result, results paired by `tool_id`, one
//! process-wide usage snapshot per model, the exit status beside the stream) and written as a
//! strict reader of the spec takes it. Expectations are written by hand from
//! `shared/dialects/gemini.md` and `gemini-notes.md`.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};

use agentgate::{summarize, translate_bytes, Dialect, EncodeOptions, Options};

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(common::fixtures().join("gemini").join(name)).unwrap()
}

fn path(name: &str) -> String {
    common::fixtures().join("gemini").join(name).display().to_string()
}

fn canonical(input: &[u8]) -> Vec<Value> {
    common::values(&common::translate(input, Dialect::Gemini, Dialect::Canonical))
}

fn to_gemini(input: &[u8], from: Dialect) -> Vec<Value> {
    common::values(&common::translate(input, from, Dialect::Gemini))
}

fn of_type<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["type"] == kind).collect()
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agentgate"))
}

/// The real captures, where `../shared/real` is (a clone without it skips, saying so).
fn real_streams() -> Option<Vec<PathBuf>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/real/gemini");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("skipped: {} is absent (the real gemini captures live beside the repository)", dir.display());
        return None;
    };
    let mut files: Vec<PathBuf> =
        entries.map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "jsonl")).collect();
    files.sort();
    Some(files)
}

// ---- Reading -------------------------------------------------------------------------------

#[test]
fn the_specs_example_reads_as_its_closing_sentences_say() {
    // gemini.md, Example: "The failing tests still give success; replace has no output; the
    // answer is the two chunks. Input 41073 (24576 cached), output 198; the other 212 of
    // total_tokens are thoughts. Exit 0."
    let out = canonical(&fixture("success.jsonl"));
    let results: Vec<(&str, &str, Option<&str>)> = of_type(&out, "tool_result")
        .iter()
        .map(|l| (l["name"].as_str().unwrap(), l["status"].as_str().unwrap(), l["output"].as_str()))
        .collect();
    assert_eq!(
        results,
        [
            ("run_shell_command", "completed", Some("test result: FAILED. 11 passed; 1 failed")),
            ("replace", "completed", None)
        ]
    );
    let t = out.last().unwrap();
    assert_eq!((t["type"].as_str(), t["outcome"].as_str()), (Some("terminal"), Some("completed")));
    assert_eq!(t["final_text"], "Fixed the off-by-one in `parse_range`.");
    assert_eq!(t["session_id"], "2f6c1a9e-8d4b-4e0f-9a31-7c5e2b9d0f14");
    assert_eq!(t["model"], "auto", "init.model as Gemini states it: a router picks per request");
    let u = &t["usage"];
    assert_eq!(
        (u["input"].as_u64(), u["cache_read"].as_u64(), u["output"].as_u64(), u["total"].as_u64()),
        (Some(41073), Some(24576), Some(198), Some(41483)),
        "input includes cached; thoughts are outside output, inside total"
    );
    let s = summarize(&fixture("success.jsonl")[..], "run", Some(Dialect::Gemini), false);
    assert_eq!(s.exit_status, Some(0));
}

#[test]
fn the_answer_is_the_chunks_after_the_last_tool_result() {
    // gemini.md, Records: "the answer is the chunks after the last tool_result": the chunks
    // before the calls are text, not the answer.
    let out = canonical(&fixture("quiet-tools.jsonl"));
    assert_eq!(out.last().unwrap()["final_text"], "Added the 0.4.1 entry; there is no CHANGELOG.old.");
    let deltas: Vec<&str> = of_type(&out, "text_delta").iter().map(|l| l["text"].as_str().unwrap()).collect();
    assert_eq!(
        deltas,
        ["Writing the entry and ", "reading the old file.", "Added the 0.4.1 entry; ", "there is no CHANGELOG.old."]
    );
    // Two messages of text: one before the calls, one after them.
    assert_eq!(of_type(&out, "text_start").len(), 2);
}

#[test]
fn the_summary_counts_tokens_on_the_specs_basis_and_names_the_router_among_the_models() {
    // gemini.md, Usage: "Canonical input = input_tokens, cache read = cached ... output =
    // output_tokens; total − input − output is unattributed: keep it, never add it to output";
    // stats.models holds the router (gemini-3.5-flash-lite) beside the main model.
    let s = summarize(&fixture("success.jsonl")[..], "run", Some(Dialect::Gemini), false);
    assert_eq!(
        (s.tokens.input, s.tokens.cache_read, s.tokens.output, s.tokens.total),
        (Some(41073), Some(24576), Some(198), Some(41483))
    );
    assert_eq!(s.tokens_basis, ["session"], "one snapshot for the whole process");
    assert!(s.models.contains(&"gemini-3.5-flash-lite".to_string()), "{:?}", s.models);
    assert!(s.models.contains(&"gemini-3.8-flash".to_string()), "{:?}", s.models);
    // The per-model figures add up to the whole, and each model's usage is its own record.
    let out = canonical(&fixture("success.jsonl"));
    let usages: Vec<(&str, u64, u64, u64)> = of_type(&out, "usage")
        .iter()
        .map(|u| {
            let n = |k: &str| u[k].as_u64().unwrap();
            (u["model"].as_str().unwrap(), n("input"), n("cache_read"), n("output"))
        })
        .collect();
    assert_eq!(usages, [("gemini-3.5-flash-lite", 861, 0, 10), ("gemini-3.8-flash", 40212, 24576, 188)]);
}

#[test]
fn each_row_of_the_end_of_run_table_reads_as_its_outcome_and_exit_status() {
    // gemini.md, End of run and outcome: the situation, the outcome it decodes to (Decode),
    // and the exit status Gemini gave for it.
    for (file, outcome, exit) in [
        ("success.jsonl", "completed", 0),
        ("refused-and-warnings.jsonl", "completed", 0), // loop detected: result success
        ("invalid-stream.jsonl", "failed", 0),          // an error result without error, exit 0
        ("api-error.jsonl", "failed", 244),             // HTTP status & 255: 500 → 244
        ("turn-limit.jsonl", "incomplete", 53),
        ("no-space-left.jsonl", "failed", 54),
        ("input-error.jsonl", "failed", 42),
        ("cancelled.jsonl", "interrupted", 130),
    ] {
        let s = summarize(&fixture(file)[..], "run", Some(Dialect::Gemini), false);
        assert_eq!(s.outcome.map(|o| o.name()), Some(outcome), "{file}");
        assert_eq!(s.exit_status, Some(exit), "{file}");
    }
    // "no exit status (a file) → incomplete": the signal path leaves no result.
    let s = summarize(&fixture("signal.jsonl")[..], "run", Some(Dialect::Gemini), false);
    assert_eq!(s.outcome.map(|o| o.name()), Some("incomplete"));
    // The invalid stream's reason is the last error line's ("reason: error.message, else the
    // last error line's"); the turn limit's is one other dialects know a turn limit by.
    let s = summarize(&fixture("invalid-stream.jsonl")[..], "run", Some(Dialect::Gemini), false);
    assert!(s.error.unwrap().starts_with("The model returned an empty response"));
    let s = summarize(&fixture("turn-limit.jsonl")[..], "run", Some(Dialect::Gemini), false);
    assert_eq!(s.reason.as_deref(), Some("max_turns"));
}

#[test]
fn error_lines_never_end_the_run() {
    // gemini.md, Records: "error lines never end the run": a warning is a notice, an error a
    // non-fatal error, and the run still ends as its result says.
    let out = canonical(&fixture("refused-and-warnings.jsonl"));
    let notice = of_type(&out, "notice");
    assert_eq!(notice[0]["text"], "Loop detected, stopping execution");
    let out = canonical(&fixture("invalid-stream.jsonl"));
    let errors = of_type(&out, "error");
    assert_eq!(errors.len(), 1);
    assert!(errors[0].get("fatal").is_none(), "{}", errors[0]);
}

#[test]
fn tool_results_are_named_by_their_call_or_by_their_id() {
    // gemini.md, Records: "take tool_name from the tool_use with the same tool_id ... With no
    // matching tool_use, the name is the text before the first __"; notes: MCP names can hold
    // "__", "so match by tool_id before splitting it".
    let out = canonical(&fixture("tool-errors.jsonl"));
    let mcp = of_type(&out, "tool_result").into_iter().last().unwrap();
    assert_eq!(mcp["name"], "mcp_docs__site_search");
    let out = canonical(&fixture("tolerated.jsonl"));
    assert_eq!(of_type(&out, "tool_result")[0]["name"], "read_file");
    // Before v0.43 an id names no tool: the name comes from the call alone.
    let out = canonical(&fixture("v0.30.jsonl"));
    assert_eq!(of_type(&out, "tool_result")[0]["name"], "grep_search");
}

#[test]
fn a_failed_call_keeps_its_message_and_its_kind_and_a_policy_violation_is_a_refusal() {
    // gemini.md, Records: error.type the tool's error kind; Decode: "A tool_result typed
    // policy_violation is a refused call".
    let out = canonical(&fixture("tool-errors.jsonl"));
    let missing = of_type(&out, "tool_result")[1];
    assert_eq!((missing["status"].as_str(), missing["output"].as_str()), (Some("failed"), Some("File not found.")));
    assert_eq!(missing["error"], "File not found: /repo/src/missing.rs");
    assert_eq!(missing["extra"]["error"]["type"], "file_not_found");
    let out = canonical(&fixture("refused-and-warnings.jsonl"));
    let refused = of_type(&out, "permission_denied");
    assert_eq!(refused.len(), 1);
    assert_eq!(refused[0]["name"], "run_shell_command");
    assert_eq!(refused[0]["reason"], "Tool execution for \"run_shell_command\" denied by policy.");
    // tool_not_registered is a failed call, not a refusal.
    assert_eq!(of_type(&out, "tool_result")[1]["status"], "failed");
}

#[test]
fn older_generations_are_read() {
    // gemini-notes.md, Version drift: v0.11's stats have no cached, input or models; the old
    // docs sample puts timestamp last and ids have no "<name>__" (before v0.43).
    let out = canonical(&fixture("v0.11-docs-sample.jsonl"));
    let t = out.last().unwrap();
    assert_eq!(t["outcome"], "completed");
    assert_eq!(t["final_text"], "Here are the files...");
    assert_eq!((t["usage"]["input"].as_u64(), t["usage"]["output"].as_u64()), (Some(50), Some(200)));
    assert_eq!(of_type(&out, "tool_result")[0]["name"], "Bash");
    // A result without stats (the type allows it): usage unknown, not zero.
    let out = canonical(&fixture("tolerated.jsonl"));
    assert!(out.last().unwrap().get("usage").is_none(), "{}", out.last().unwrap());
}

#[test]
fn an_input_below_its_own_cache_figure_is_read_as_leaving_the_cache_out() {
    // gemini.md says input_tokens includes cached; numbers that contradict it cannot be read
    // so (issue 54: "An input below its own cache figure cannot include that cache").
    let line = r#"{"type":"result","timestamp":"2026-11-02T09:14:14.610Z","status":"success","stats":{"total_tokens":1100,"input_tokens":100,"output_tokens":0,"cached":1000,"input":0,"duration_ms":1,"tool_calls":0}}"#;
    let (out, _, diags) = translate_bytes(line.as_bytes(), &Options::new(Some(Dialect::Gemini), Dialect::Canonical));
    let t = common::values(std::str::from_utf8(&out).unwrap()).pop().unwrap();
    assert_eq!((t["usage"]["input"].as_u64(), t["usage"]["cache_read"].as_u64()), (Some(1100), Some(1000)));
    assert!(diags.iter().any(|d| d.message.contains("cannot include them")), "{diags:?}");
}

// ---- Writing -------------------------------------------------------------------------------

#[test]
fn every_line_written_is_type_and_timestamp_first_then_the_specs_members_in_order() {
    // gemini.md, Lines and Records.
    let order: &[(&str, &[&str])] = &[
        ("init", &["type", "timestamp", "session_id", "model"]),
        ("message", &["type", "timestamp", "role", "content", "delta"]),
        ("tool_use", &["type", "timestamp", "tool_name", "tool_id", "parameters"]),
        ("tool_result", &["type", "timestamp", "tool_id", "status", "output", "error"]),
        ("error", &["type", "timestamp", "severity", "message"]),
        ("result", &["type", "timestamp", "status", "error", "stats"]),
    ];
    // Lines of gemini sources are copied as they were read (with the members they had): the
    // lines the encoder writes are those of every other dialect's.
    for case in common::cases().iter().filter(|c| c.dialect != Dialect::Gemini) {
        for line in to_gemini(&case.input, case.dialect) {
            let kind = line["type"].as_str().unwrap();
            let want = order.iter().find(|(k, _)| *k == kind).unwrap_or_else(|| panic!("{kind} written")).1;
            let keys: Vec<&str> = line.as_object().unwrap().keys().map(String::as_str).collect();
            let expected: Vec<&str> = want.iter().copied().filter(|k| keys.contains(k)).collect();
            assert_eq!(keys, expected, "{}: {line}", case.path.display());
            let t = line["timestamp"].as_str().unwrap();
            assert_eq!(t.len(), 24, "{t}");
            assert!(t.ends_with('Z') && &t[10..11] == "T" && &t[19..20] == ".", "{t}");
        }
    }
}

#[test]
fn the_time_is_the_sources_else_source_date_epoch_and_never_goes_back() {
    // gemini.md, Encode: "timestamp (the source's time, else the clock or SOURCE_DATE_EPOCH,
    // non-decreasing)".
    let input = std::fs::read(common::fixtures().join("adal/success.jsonl")).unwrap();
    let mut encode = EncodeOptions::default();
    encode.source_date_epoch = Some(1_793_610_843);
    let opts = Options::new(Some(Dialect::Adal), Dialect::Gemini).encode(encode);
    let (out, _, _) = translate_bytes(&input, &opts);
    for line in common::values(std::str::from_utf8(&out).unwrap()) {
        assert_eq!(line["timestamp"], "2026-11-02T09:14:03.000Z", "{line}");
    }
    // The source's own times where it states them (base-context's session header), kept from
    // going back where later records state none.
    let input = std::fs::read(common::fixtures().join("base-context/success.jsonl")).unwrap();
    let lines = to_gemini(&input, Dialect::BaseContext);
    assert!(lines.iter().all(|l| l["timestamp"] == "2026-03-16T10:12:03.512Z"), "{lines:?}");
    let lines = to_gemini(&fixture("success.jsonl"), Dialect::Gemini);
    let times: Vec<&str> = lines.iter().map(|l| l["timestamp"].as_str().unwrap()).collect();
    assert_eq!(times[0], "2026-11-02T09:14:03.118Z");
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
}

#[test]
fn text_is_written_only_as_delta_chunks_and_thinking_is_reported_dropped() {
    // gemini.md, Encode: "Assistant text only as message/assistant with delta: true, never a
    // non-delta assistant line; a whole source message is one chunk. Thinking has no place:
    // report it dropped."
    let input = std::fs::read(common::fixtures().join("localcode/success.jsonl")).unwrap();
    let (out, summary, _) = translate_bytes(&input, &Options::new(Some(Dialect::Localcode), Dialect::Gemini));
    let lines = common::values(std::str::from_utf8(&out).unwrap());
    for m in of_type(&lines, "message").iter().filter(|m| m["role"] == "assistant") {
        assert_eq!(m["delta"], true, "{m}");
    }
    assert!(summary.report.dropped_kinds.keys().any(|k| k.starts_with("reasoning")), "{:?}", summary.report);
    // A message given whole (claude-code's text block) is one chunk.
    let input = std::fs::read(common::fixtures().join("claude-code/success.jsonl")).unwrap();
    let lines = to_gemini(&input, Dialect::ClaudeCode);
    let chunks: Vec<&Value> = of_type(&lines, "message");
    assert_eq!(chunks.len(), 1);
    assert_eq!(chunks[0]["content"], "Two files: main.rs, lib.rs.");
}

#[test]
fn tool_ids_are_made_as_gemini_makes_them() {
    // gemini.md, Encode: "tool_id = <tool_name>__<source id> unless that id already starts so
    // (as turn.ts:480-482); no source id: <tool_name>__<tool_name>_<n>, n from 0 per run".
    let adal = std::fs::read(common::fixtures().join("adal/success.jsonl")).unwrap();
    let ids: Vec<String> =
        of_type(&to_gemini(&adal, Dialect::Adal), "tool_use").iter().map(|l| l["tool_id"].to_string()).collect();
    // adal's `bash` is gemini's shell tool, `run_shell_command` (docs/mapping.md, "Shell calls").
    assert_eq!(ids[..2], ["\"run_shell_command__toolu_01\"", "\"read_file__toolu_02\""]);
    let localcode = std::fs::read(common::fixtures().join("localcode/success.jsonl")).unwrap();
    let lines = to_gemini(&localcode, Dialect::Localcode);
    let ids: Vec<&str> = of_type(&lines, "tool_use").iter().map(|l| l["tool_id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "read_file__read_file_0",
            "read_file__read_file_1",
            "write_file__write_file_2",
            "run_shell_command__run_shell_command_3"
        ]
    );
    // An id that starts so already is kept; each result names its call's id.
    let lines = to_gemini(&fixture("success.jsonl"), Dialect::Gemini);
    let uses: Vec<&str> = of_type(&lines, "tool_use").iter().map(|l| l["tool_id"].as_str().unwrap()).collect();
    let results: Vec<&str> = of_type(&lines, "tool_result").iter().map(|l| l["tool_id"].as_str().unwrap()).collect();
    assert_eq!(uses, ["run_shell_command__run_shell_command_1793610845390_0", "replace__replace_1793610852003_0"]);
    assert_eq!(results, uses);
}

#[test]
fn a_failed_call_has_its_error_kind_a_refused_one_policy_violation() {
    // gemini.md, Encode: "A failed call: status error and error {type, message} (type the
    // source's kind, else TOOL_EXECUTION_ERROR; refused: policy_violation)". `output` only
    // where the source has output text.
    let adal = std::fs::read(common::fixtures().join("adal/permission-denied.jsonl")).unwrap();
    let lines = to_gemini(&adal, Dialect::Adal);
    let refused = of_type(&lines, "tool_result").into_iter().last().unwrap();
    assert_eq!(refused["status"], "error");
    assert_eq!(refused["error"]["type"], "policy_violation");
    assert!(refused.get("output").is_none(), "{refused}");
    let localcode = std::fs::read(common::fixtures().join("localcode/tool-failure-recovery.jsonl")).unwrap();
    let failed = of_type(&to_gemini(&localcode, Dialect::Localcode), "tool_result")[0].clone();
    assert_eq!(failed["error"], json!({"type": "TOOL_EXECUTION_ERROR", "message": "bash: pytest: command not found"}));
    // Gemini's own kinds go through canonical and back.
    let through = common::translate(
        common::translate(&fixture("tool-errors.jsonl"), Dialect::Gemini, Dialect::Canonical).as_bytes(),
        Dialect::Canonical,
        Dialect::Gemini,
    );
    let kinds: Vec<String> =
        of_type(&common::values(&through), "tool_result").iter().map(|l| l["error"]["type"].to_string()).collect();
    assert_eq!(kinds, ["\"invalid_tool_params\"", "\"file_not_found\"", "null"]);
    // Edit and write results without output stay so.
    let lines = to_gemini(&fixture("quiet-tools.jsonl"), Dialect::Gemini);
    let outputs: Vec<bool> = of_type(&lines, "tool_result").iter().map(|l| l.get("output").is_some()).collect();
    assert_eq!(outputs, [false, true, false]);
}

/// Translates a canonical stream ending as `terminal` says to gemini: its result line.
fn result_for(terminal: Value) -> Value {
    let mut t = terminal;
    t["v"] = json!(1);
    t["type"] = json!("terminal");
    let input = format!("{}\n{}\n", json!({"v": 1, "type": "prompt", "text": "go"}), t);
    let lines = common::values(&common::translate(input.as_bytes(), Dialect::Canonical, Dialect::Gemini));
    lines.last().unwrap().clone()
}

#[test]
fn each_outcome_is_written_as_the_encode_table_says() {
    // gemini.md, Encode: the outcome → result table.
    let r = result_for(json!({"outcome": "completed"}));
    assert_eq!(r["status"], "success");
    assert!(r.get("error").is_none());
    let cases = [
        (json!({"outcome": "failed", "error": "boom"}), "unknown", "boom"),
        (json!({"outcome": "interrupted"}), "FatalCancellationError", "Operation cancelled."),
        (
            json!({"outcome": "timeout", "reason": "timeout: agent was stopped after 30s"}),
            "FatalCancellationError",
            "Operation cancelled: timeout: agent was stopped after 30s",
        ),
        (json!({"outcome": "incomplete", "reason": "max_rounds"}), "FatalTurnLimitedError", "max_rounds"),
        (json!({"outcome": "incomplete", "reason": "context full"}), "IncompleteRunError", "context full"),
        (
            json!({"outcome": "permission_denied", "reason": "bash needs approval"}),
            "policy_violation",
            "permission denied: bash needs approval",
        ),
    ];
    for (terminal, kind, message) in cases {
        let r = result_for(terminal.clone());
        assert_eq!(r["status"], "error", "{terminal}");
        // "give status: "error" its error member (the bare form is Gemini's invalid stream only)"
        assert_eq!(r["error"], json!({"type": kind, "message": message}), "{terminal}");
        // All eight stats members, usage unknown written as zeros.
        let keys: Vec<&str> = r["stats"].as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["total_tokens", "input_tokens", "output_tokens", "cached", "input", "duration_ms", "tool_calls", "models"]
        );
    }
}

#[test]
fn stats_hold_the_runs_usage_with_cache_inside_input_and_one_entry_per_model() {
    // gemini.md, Encode: input_tokens = canonical input (cache reads and writes inside), cached
    // = cache reads, input = input_tokens − cached, output_tokens = canonical output, total the
    // source's else input + output, models one entry per model, summing to the top level.
    let input = std::fs::read(common::fixtures().join("base-context/success.jsonl")).unwrap();
    let (out, summary, _) = translate_bytes(&input, &Options::new(Some(Dialect::BaseContext), Dialect::Gemini));
    let lines = common::values(std::str::from_utf8(&out).unwrap());
    let stats = &lines.last().unwrap()["stats"];
    // base-context.md's example: input 3 + 6, cacheRead 4120 + 6013, cacheWrite 1893 + 212.
    assert_eq!(stats["input_tokens"], 3 + 6 + 4120 + 6013 + 1893 + 212);
    assert_eq!(stats["cached"], 4120 + 6013);
    assert_eq!(stats["input"], 3 + 6 + 1893 + 212);
    assert_eq!(stats["output_tokens"], 96 + 41);
    assert_eq!(stats["total_tokens"], 12247 + 137);
    assert_eq!(stats["models"]["claude-sonnet-4-5"]["input_tokens"], stats["input_tokens"]);
    assert_eq!(stats["tool_calls"], 1);
    // The cache write is inside input_tokens, not apart: said.
    assert!(
        summary.report.dropped_fields.contains_key("usage.cache_write (inside input_tokens)"),
        "{:?}",
        summary.report
    );
    // A source with no usage: zeros, and said.
    let input = std::fs::read(common::fixtures().join("adal/success.jsonl")).unwrap();
    let (out, summary, _) = translate_bytes(&input, &Options::new(Some(Dialect::Adal), Dialect::Gemini));
    let lines = common::values(std::str::from_utf8(&out).unwrap());
    assert_eq!(lines.last().unwrap()["stats"]["total_tokens"], 0);
    assert!(summary.report.synthesized.keys().any(|k| k.contains("usage unknown")), "{:?}", summary.report);
}

#[test]
fn the_duration_and_the_error_kind_of_a_gemini_run_go_through_canonical() {
    let through = common::translate(
        common::translate(&fixture("api-error.jsonl"), Dialect::Gemini, Dialect::Canonical).as_bytes(),
        Dialect::Canonical,
        Dialect::Gemini,
    );
    let r = common::values(&through).pop().unwrap();
    assert_eq!(r["error"]["type"], "unknown");
    let r = common::values(&common::translate(&fixture("quiet-tools.jsonl"), Dialect::Gemini, Dialect::Gemini))
        .pop()
        .unwrap();
    assert_eq!(r["stats"]["duration_ms"], 3950);
}

#[test]
fn the_encoder_writes_gemini_lines_as_gemini_writes_them() {
    // Wire fidelity: streams that hold only what the model carries come back byte for byte
    // through the encoder alone (compact JSON.stringify, type and timestamp first, the ids, the
    // stats and their models as written).
    for name in [
        "success.jsonl",
        "quiet-tools.jsonl",
        "tool-errors.jsonl",
        "refused-and-warnings.jsonl",
        "api-error.jsonl",
        "turn-limit.jsonl",
        "no-space-left.jsonl",
        "cancelled.jsonl",
    ] {
        let input = fixture(name);
        let out = common::translate(&input, Dialect::Gemini, Dialect::Gemini);
        assert_eq!(out, String::from_utf8(input).unwrap(), "{name}");
    }
    for file in real_streams().unwrap_or_default() {
        let input = std::fs::read(&file).unwrap();
        assert_eq!(
            common::translate(&input, Dialect::Gemini, Dialect::Gemini),
            String::from_utf8(input).unwrap(),
            "{}",
            file.display()
        );
    }
}

#[test]
fn gemini_to_gemini_of_a_valid_stream_gives_the_same_stream() {
    // Every valid gemini stream, unknown members and kinds, Gemini's bare invalid-stream
    // result and its empty models included (gemini.md, Tolerate: "unknown types and members
    // (keep them)").
    for name in [
        "success.jsonl",
        "quiet-tools.jsonl",
        "tool-errors.jsonl",
        "refused-and-warnings.jsonl",
        "invalid-stream.jsonl",
        "api-error.jsonl",
        "turn-limit.jsonl",
        "no-space-left.jsonl",
        "input-error.jsonl",
        "cancelled.jsonl",
        "unknown-events.jsonl",
    ] {
        let input = fixture(name);
        let out = common::translate(&input, Dialect::Gemini, Dialect::Gemini);
        assert_eq!(out, String::from_utf8(input).unwrap(), "{name}");
    }
}

#[test]
fn a_second_result_is_dropped_and_said() {
    // gemini.md, Records: result "at most once, last".
    let mut input = fixture("success.jsonl");
    input.extend_from_slice(
        br#"{"type":"result","timestamp":"2026-11-02T09:14:14.700Z","status":"error","error":{"type":"unknown","message":"again"},"stats":{}}"#,
    );
    input.push(b'\n');
    let (out, summary, diags) = translate_bytes(&input, &Options::new(Some(Dialect::Gemini), Dialect::Gemini));
    let lines = common::values(std::str::from_utf8(&out).unwrap());
    assert_eq!(of_type(&lines, "result").len(), 1);
    assert_eq!(lines.last().unwrap()["status"], "success");
    assert!(diags.iter().any(|d| d.line == 10 && d.message.contains("second terminal")), "{diags:?}");
    assert_eq!(summary.outcome.map(|o| o.name()), Some("completed"));
}

#[test]
fn otlp_names_the_provider_gcp_gemini() {
    // OpenTelemetry GenAI's well-known provider name for the Gemini API.
    let (out, _, _) = translate_bytes(&fixture("success.jsonl"), &Options::new(Some(Dialect::Gemini), Dialect::Otlp));
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains(r#"{"key":"gen_ai.provider.name","value":{"stringValue":"gcp.gemini"}}"#), "{text}");
}

// ---- Readers rely on -------------------------------------------------------------------------

fn jq_present() -> bool {
    Command::new("jq").arg("--version").output().is_ok_and(|o| o.status.success())
}

fn jq(args: &[&str], input: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new("jq")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn the_jq_lines_readers_rely_on_hold_for_every_gemini_output() {
    // gemini.md, Readers rely on: `jq -r '.type'` (every line an object with a string type),
    // joining select(.type=="message" and .role=="assistant") | .content, pairing by tool_id,
    // and select(.type=="result") | .status, .stats.total_tokens.
    if !jq_present() {
        eprintln!("skipped: jq is not installed (the test runs the spec's jq lines with it)");
        return;
    }
    let mut checked = 0;
    for case in common::cases() {
        let out = common::translate(&case.input, case.dialect, Dialect::Gemini);
        let at = case.path.display();
        let types = jq(&["-r", ".type"], &out);
        assert!(types.status.success(), "{at}: {}", String::from_utf8_lossy(&types.stderr));
        let kinds = String::from_utf8(types.stdout).unwrap();
        assert_eq!(kinds.lines().count(), out.lines().count(), "{at}");
        assert!(kinds.lines().all(|k| k != "null"), "{at}: {kinds}");

        let joined = jq(&["-j", r#"select(.type=="message" and .role=="assistant") | .content"#], &out);
        assert!(joined.status.success(), "{at}");
        let joined = String::from_utf8(joined.stdout).unwrap();
        // What the chunks join to ends with the run's answer (gemini.md: the chunks after the
        // last tool result), as the run's canonical form states it.
        let answer = common::values(&common::translate(out.as_bytes(), Dialect::Gemini, Dialect::Canonical))
            .pop()
            .unwrap()["final_text"]
            .as_str()
            .unwrap_or("")
            .to_string();
        assert!(joined.ends_with(&answer), "{at}: {joined:?} does not end with {answer:?}");

        let unpaired = jq(
            &[
                "-s",
                r#"([.[] | select(.type=="tool_result") | .tool_id] - [.[] | select(.type=="tool_use") | .tool_id]) | length"#,
            ],
            &out,
        );
        assert_eq!(String::from_utf8(unpaired.stdout).unwrap().trim(), "0", "{at}: a tool_result names no tool_use");

        let result = jq(&["-r", r#"select(.type=="result") | .status, .stats.total_tokens"#], &out);
        let result = String::from_utf8(result.stdout).unwrap();
        let said: Vec<&str> = result.lines().collect();
        assert_eq!(said.len(), 2, "{at}: {result}");
        assert!(matches!(said[0], "success" | "error"), "{at}: {result}");
        assert!(said[1].parse::<u64>().is_ok(), "{at}: {result}");
        checked += 1;
    }
    assert!(checked >= 70, "{checked}");
}

// ---- exec --------------------------------------------------------------------------------------

fn exec(args: &[&str], agent: &[&str]) -> Output {
    bin().arg("exec").args(args).arg("--").args(agent).output().unwrap()
}

fn last(out: &Output) -> Value {
    serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap()
}

#[test]
fn exec_as_gemini_exits_as_the_encode_table_says() {
    // gemini.md, Encode: completed 0; failed the HTTP status & 255 where the failure has one,
    // else 1; interrupted and timeout 130; a turn limit 53; another incomplete run 1; a refusal 1.
    for (file, code) in [
        ("success.jsonl", 0),
        ("api-error.jsonl", 244),
        ("turn-limit.jsonl", 53),
        ("no-space-left.jsonl", 54),
        ("input-error.jsonl", 42),
        ("cancelled.jsonl", 130),
        ("invalid-stream.jsonl", 1),
    ] {
        let out = exec(&["--as", "gemini"], &["cat", &path(file)]);
        assert_eq!(out.status.code(), Some(code), "{file}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let other = |rel: &str| common::fixtures().join(rel).display().to_string();
    for (file, code) in [
        ("localcode/timeout.jsonl", 130),
        ("localcode/interrupted.jsonl", 130),
        ("adal/permission-denied.jsonl", 1),
        ("claude-code/max-turns.jsonl", 53),
        ("localcode/failed.jsonl", 1),
        ("codex/turn-failed.jsonl", 1),
    ] {
        let out = exec(&["--as", "gemini"], &["cat", &other(file)]);
        assert_eq!(out.status.code(), Some(code), "{file}");
    }
    // An agent that fails with empty stdout (a setup failure: auth 41) fails with its status.
    let out = exec(&["--as", "gemini"], &["sh", "-c", "echo 'auth required' >&2; exit 41"]);
    assert_eq!(out.status.code(), Some(41));
    assert_eq!(last(&out)["status"], "error");
}

#[test]
fn a_gemini_stream_without_a_result_after_exit_0_is_an_interrupted_run() {
    // gemini.md, Decode: "No result: exit 0 or a signal → interrupted; other non-zero →
    // failed" (mappings/gemini.json's exit_without_terminal).
    let out = exec(&["--as", "canonical", "--from", "gemini"], &["cat", &path("signal.jsonl")]);
    let t = last(&out);
    assert_eq!((t["outcome"].as_str(), t["synthesized"].as_bool()), (Some("interrupted"), Some(true)), "{t}");
    let out = exec(&["--as", "gemini"], &["sh", "-c", &format!("cat {}; exit 1", path("signal.jsonl"))]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(last(&out)["error"]["type"], "unknown", "failed: {}", last(&out));
    // A file has no exit status: incomplete (the stream's own reading).
    let s = summarize(&fixture("signal.jsonl")[..], "run", Some(Dialect::Gemini), false);
    assert_eq!(s.outcome.map(|o| o.name()), Some("incomplete"));
}

#[test]
fn an_exit_status_that_goes_with_an_error_result_is_no_disagreement() {
    // An API error exits 244, an invalid stream 0: any code goes with an error result
    // (failure_exit_any); a success result with a non-zero exit is still said.
    let replay = |file: &str, code: u8| {
        let script = format!("cat {}; exit {code}", path(file));
        String::from_utf8_lossy(&exec(&["--as", "claude-code"], &["sh", "-c", &script]).stderr).into_owned()
    };
    assert!(!replay("api-error.jsonl", 244).contains("the stream says"));
    assert!(!replay("invalid-stream.jsonl", 0).contains("the stream says"));
    assert!(replay("success.jsonl", 244).contains("the stream says completed"));
}

#[test]
fn signals_reach_the_agents_process_group_when_its_leader_ignores_them() {
    // gemini-notes.md: `gemini` is a launcher that ignores SIGINT/SIGTERM/SIGHUP sent to its
    // pid; "SIGTERM or SIGINT to the process group ... exit 0 at once, last line the user
    // message, no result". The fake: a leader that traps the signals and waits for its worker,
    // which writes init and the user message and ends quietly on SIGTERM.
    let worker = format!("trap 'exit 0' TERM INT; cat {}; while true; do sleep 0.05; done", path("signal.jsonl"));
    let leader = "trap : INT TERM HUP; sh -c \"$0\"; exit $?";
    let mut child = bin()
        .args(["exec", "--as", "gemini", "--", "sh", "-c", leader, &worker])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    use std::io::{BufRead, BufReader};
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for _ in 0..3 {
        assert!(lines.next().unwrap().unwrap().starts_with("{\"type\":"));
    }
    let start = std::time::Instant::now();
    // SAFETY: a signal to the agentgate we spawned.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
    }
    // Were the signal sent to the leader alone, the worker would never end: after 10 s
    // agentgate is killed, so that the test fails rather than hangs.
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (pid, watched) = (child.id(), std::sync::Arc::clone(&done));
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(10));
        if !watched.load(std::sync::atomic::Ordering::SeqCst) {
            // SAFETY: a signal to the agentgate we spawned, not yet waited for.
            unsafe {
                libc::kill(pid as libc::pid_t, libc::SIGKILL);
            }
        }
    });
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    let status = child.wait().unwrap();
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    assert!(start.elapsed() < std::time::Duration::from_secs(5), "the worker did not get the signal");
    // No result from the agent and exit 0: interrupted, written as Gemini's cancellation.
    assert_eq!(status.code(), Some(130));
    let result: Value = serde_json::from_str(rest.last().unwrap()).unwrap();
    assert_eq!(result["error"]["type"], "FatalCancellationError", "{result}");
}

#[test]
fn the_real_captures_exit_status_is_what_exec_as_gemini_gives() {
    // The `.rc` beside each live capture is the CLI's exit status for its run.
    for file in real_streams().unwrap_or_default() {
        let rc = std::fs::read_to_string(file.with_extension("rc")).unwrap();
        let out = exec(&["--as", "gemini"], &["cat", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), rc.trim().parse().ok(), "{}", file.display());
    }
}

// ---- validate ------------------------------------------------------------------------------------

#[test]
fn validate_holds_gemini_to_its_spec() {
    use agentgate::contract::check_stream;
    let c = Dialect::Gemini.contract();
    // Gemini's own output passes: the spec's example, the invalid stream's bare error result.
    for name in ["success.jsonl", "invalid-stream.jsonl", "tool-errors.jsonl", "refused-and-warnings.jsonl"] {
        let text = String::from_utf8(fixture(name)).unwrap();
        assert!(check_stream(c, &text).is_empty(), "{name}: {:?}", check_stream(c, &text));
    }
    let problems = |text: &str| -> Vec<String> {
        check_stream(c, text).into_iter().filter(|(_, p)| !p.starts_with("warning")).map(|(_, p)| p).collect()
    };
    let init = r#"{"type":"init","timestamp":"2026-11-02T09:14:03.118Z","session_id":"s","model":"auto"}"#;
    let result = r#"{"type":"result","timestamp":"2026-11-02T09:14:03.200Z","status":"success","stats":{"total_tokens":0,"input_tokens":0,"output_tokens":0,"duration_ms":0,"tool_calls":0}}"#;
    // "Assistant text comes only as delta: true chunks".
    let whole = r#"{"type":"message","timestamp":"2026-11-02T09:14:03.150Z","role":"assistant","content":"Hi"}"#;
    let p = problems(&format!("{init}\n{whole}\n{result}\n"));
    assert!(p.iter().any(|x| x.contains("message") && x.contains("delta")), "{p:?}");
    // Pairing by tool_id.
    let orphan = r#"{"type":"tool_result","timestamp":"2026-11-02T09:14:03.150Z","tool_id":"x__1","status":"success"}"#;
    let p = problems(&format!("{init}\n{orphan}\n{result}\n"));
    assert!(p.iter().any(|x| x.contains("names no earlier tool_use")), "{p:?}");
    // A signal's stream: no result, which no reader can tell from a cut file.
    let p = problems(&String::from_utf8(fixture("signal.jsonl")).unwrap());
    assert!(p.iter().any(|x| x.contains("no terminal \"result\" record")), "{p:?}");
    // A status the spec does not list.
    let p = problems(&format!("{init}\n{}\n", result.replace("\"success\"", "\"ok\"")));
    assert!(p.iter().any(|x| x.contains("result.status")), "{p:?}");
}

//! Bad input and conflicting input: one diagnostic per problem naming the line, the rest still
//! translated, the output still valid and ending with exactly one terminal record; and every
//! line accounted for.

mod common;

use agentgate::contract::check_stream;
use agentgate::{translate_bytes, Dialect, Options, Stop};

/// A valid, complete transcript of each dialect to spoil.
fn base(dialect: Dialect) -> Vec<String> {
    std::fs::read_to_string(common::representative(dialect)).unwrap().lines().map(str::to_string).collect()
}

fn join(lines: &[String]) -> Vec<u8> {
    lines.iter().map(|l| format!("{l}\n")).collect::<String>().into_bytes()
}

struct Result {
    out: String,
    messages: Vec<String>,
    summary: agentgate::Summary,
}

/// The output without the ids derived from the input's bytes (adal's session id, wuu's thread
/// id, loom's transcript digest, base-context's session id, claude-code's line uuids), which
/// differ whenever the bytes do.
fn without_derived_ids(out: &str) -> Vec<serde_json::Value> {
    common::values(out)
        .into_iter()
        .map(|mut v| {
            for key in ["session_id", "thread_id", "transcript_digest", "uuid", "input_digest", "whole_input"] {
                if v.get(key).is_some() {
                    v[key] = serde_json::Value::Null;
                }
            }
            if v["type"] == "session" {
                v["id"] = serde_json::Value::Null;
            }
            // The source line canonical carries is the line as read, a bad one too.
            if v.get("v").is_some() && v["type"] != "extension" {
                v.as_object_mut().unwrap().shift_remove("line");
            }
            v
        })
        .collect()
}

fn run(input: &[u8], from: Dialect, to: Dialect) -> Result {
    let (out, summary, diags) = translate_bytes(input, &Options::new(Some(from), to));
    let messages = diags.iter().map(|d| format!("{}: {}", d.line, d.message)).collect();
    Result { out: String::from_utf8(out).unwrap(), messages, summary }
}

/// String member `key` of each output line of type `kind`, in order.
fn member_of_each(out: &str, kind: &str, key: &str) -> Vec<String> {
    common::values(out).iter().filter(|l| l["type"] == kind).map(|l| l[key].as_str().unwrap().to_string()).collect()
}

/// The output holds to the target's contract (unknown kinds aside within one dialect) and
/// every input line is accounted for.
fn assert_sound(r: &Result, from: Dialect, to: Dialect, lines: u64, what: &str) {
    let problems: Vec<_> = check_stream(to.contract(), &r.out)
        .into_iter()
        .filter(|(_, p)| !(from == to && common::unknown_kind(p)))
        .collect();
    assert!(problems.is_empty(), "{what}, {from} to {to}: {problems:?}\n{}", r.out);
    assert_eq!(r.summary.report.lines, lines, "{what}: lines read");
    assert_eq!(r.summary.report.accounted(), lines, "{what}: every line accounted for: {:?}", r.summary.report);
}

#[test]
fn malformed_lines_are_reported_by_number_and_skipped() {
    for from in Dialect::all() {
        let mut lines = base(from);
        lines.insert(2, "this is not JSON".into());
        lines.insert(4, "\"a string\"".into());
        lines.insert(6, "{\"no_type\": true}".into());
        for to in Dialect::all() {
            let r = run(&join(&lines), from, to);
            assert_eq!(r.messages.len(), 3, "{from} to {to}: {:?}", r.messages);
            assert!(r.messages[0].starts_with("3: not JSON"), "{:?}", r.messages);
            assert!(r.messages[1].starts_with("5: JSON string, not an object"), "{:?}", r.messages);
            assert!(r.messages[2].starts_with("7: "), "{:?}", r.messages);
            assert_eq!(r.summary.report.bad, 3);
            assert_sound(&r, from, to, lines.len() as u64, "malformed lines");
            // The rest is translated exactly as without the bad lines.
            assert_eq!(
                without_derived_ids(&r.out),
                without_derived_ids(&run(&join(&base(from)), from, to).out),
                "{from} to {to}"
            );
        }
    }
}

#[test]
fn a_stream_without_its_terminal_record_still_ends_with_one() {
    for from in Dialect::all() {
        let mut lines = base(from);
        lines.pop();
        for to in Dialect::all() {
            let r = run(&join(&lines), from, to);
            assert!(r.messages.is_empty(), "{:?}", r.messages);
            assert_sound(&r, from, to, lines.len() as u64, "no terminal");
            assert_eq!(r.summary.report.synthesized.get("terminal"), Some(&1));
        }
    }
}

#[test]
fn a_second_terminal_and_records_after_the_first_are_reported_and_dropped() {
    // base-context and codex have no terminal record to repeat.
    for from in Dialect::all().filter(|d| d.contract().terminal.is_some()) {
        let mut lines = base(from);
        let terminal = lines.last().unwrap().clone();
        let first_kind_line = lines[0].clone();
        lines.push(first_kind_line);
        lines.push(terminal);
        for to in Dialect::all() {
            let r = run(&join(&lines), from, to);
            let n = lines.len();
            assert_eq!(r.messages.len(), 2, "{from} to {to}: {:?}", r.messages);
            // Named in the input's words: the kind of the line, as its dialect writes it.
            let kind_key = &from.contract().type_field;
            let line: serde_json::Value = serde_json::from_str(&lines[n - 2]).unwrap();
            let kind = line[kind_key.as_str()].as_str().unwrap_or_default().to_string();
            let article = if kind.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
            assert_eq!(
                r.messages[0],
                format!("{}: {article} \"{kind}\" line after the terminal record; dropped", n - 1),
                "{from} to {to}"
            );
            assert!(r.messages[1].starts_with(&format!("{n}: a second terminal record")), "{:?}", r.messages);
            assert_sound(&r, from, to, n as u64, "two terminals");
            assert_eq!(
                without_derived_ids(&r.out),
                without_derived_ids(&run(&join(&base(from)), from, to).out),
                "the first terminal stands"
            );
        }
    }
}

#[test]
fn a_bom_and_crlf_change_nothing() {
    for from in Dialect::all() {
        let plain = join(&base(from));
        let mut dressed = b"\xEF\xBB\xBF".to_vec();
        dressed.extend(base(from).iter().flat_map(|l| format!("{l}\r\n").into_bytes()));
        for to in Dialect::all() {
            let a = run(&plain, from, to);
            let b = run(&dressed, from, to);
            assert!(b.messages.is_empty(), "{:?}", b.messages);
            assert_eq!(without_derived_ids(&a.out), without_derived_ids(&b.out), "{from} to {to}");
        }
    }
}

#[test]
fn a_blank_line_is_a_bad_line_named_and_skipped() {
    // Every spec says each line is one JSON object (issue 54): a blank line is named on stderr
    // as a bad line is, skipped, and counted; the rest is translated as if it were not there.
    for from in Dialect::all() {
        let lines = base(from);
        let plain = join(&lines);
        let spaced: Vec<u8> = lines.iter().flat_map(|l| format!("{l}\n \t\n").into_bytes()).collect();
        for to in Dialect::all() {
            let a = run(&plain, from, to);
            let b = run(&spaced, from, to);
            let want: Vec<String> = (1..=lines.len()).map(|i| format!("{}: blank line", 2 * i)).collect();
            let named: Vec<&String> = b.messages.iter().filter(|m| m.ends_with(": blank line")).collect();
            assert_eq!(named, want.iter().collect::<Vec<_>>(), "{from} to {to}");
            assert_eq!(without_derived_ids(&a.out), without_derived_ids(&b.out), "{from} to {to}");
            assert_eq!(b.summary.report.blank, lines.len() as u64);
            assert_eq!(b.summary.report.accounted(), b.summary.report.lines);
            assert!(b.summary.stopped.is_none());
        }
        // Under --strict the first one is fatal, after the terminal record.
        let (out, summary, _) = translate_bytes(&spaced, &Options::new(Some(from), from).strict(true));
        match summary.stopped {
            Some(Stop::Strict(d)) => assert_eq!((d.line, d.message.as_str()), (2, "blank line"), "{from}"),
            other => panic!("{from}: {other:?}"),
        }
        assert!(!out.is_empty(), "{from}: the terminal record is still written");
    }
}

#[test]
fn invalid_utf8_and_a_cut_last_line_are_reported() {
    for from in Dialect::all() {
        let lines = base(from);
        let mut input = join(&lines[..2]);
        input.extend_from_slice(b"{\"type\": \"stage\", \"stage\": \"\xFF\xFE\"}\n");
        input.extend_from_slice(&join(&lines[2..]));
        let last = lines.last().unwrap();
        input.extend_from_slice(&last.as_bytes()[..last.len() / 2]);
        for to in Dialect::all() {
            let r = run(&input, from, to);
            // The bad bytes are mended and the line read on (a localcode record in another
            // dialect's stream is then reported as not belonging there); the cut line is not JSON.
            let (first, last) = (&r.messages[0], r.messages.last().unwrap());
            assert_eq!(first, "3: not valid UTF-8 (bad byte at offset 28); read with U+FFFD in its place");
            assert!(last.starts_with(&format!("{}: not JSON", lines.len() + 2)), "{:?}", r.messages);
            assert_eq!(r.messages.len(), if from == Dialect::Localcode { 2 } else { 3 }, "{:?}", r.messages);
            assert_sound(&r, from, to, lines.len() as u64 + 2, "bad bytes");
        }
    }
}

#[test]
fn a_record_of_another_dialect_does_not_belong_in_the_stream() {
    let mut lines = base(Dialect::Adal);
    lines.insert(
        1,
        "{\"type\": \"turn_tokens\", \"prompt_tokens\": \"1\", \"completion_tokens\": \"1\", \"total_tokens\": \"2\"}"
            .into(),
    );
    let r = run(&join(&lines), Dialect::Adal, Dialect::Adal);
    assert_eq!(r.messages, vec!["2: \"turn_tokens\" is a localcode record, not adal; skipped"]);
    assert_eq!(r.summary.report.bad, 1);
    // And the other way round, in English: "an adal record".
    let mut lines = base(Dialect::Localcode);
    lines.insert(1, r#"{"type": "permission_denied", "id": "c9", "name": "bash", "reason": "no"}"#.into());
    let r = run(&join(&lines), Dialect::Localcode, Dialect::Localcode);
    assert_eq!(r.messages, vec!["2: \"permission_denied\" is an adal record, not localcode; skipped"]);
    // An unknown kind that no dialect claims is an extension, kept.
    let mut lines = base(Dialect::Adal);
    lines.insert(1, "{\"type\":\"heartbeat\"}".into());
    let r = run(&join(&lines), Dialect::Adal, Dialect::Adal);
    assert!(r.messages.is_empty());
    assert!(r.out.contains("{\"type\":\"heartbeat\"}"));
}

#[test]
fn an_unknown_format_version_refuses_the_rest_of_the_stream() {
    for (from, first) in [
        (Dialect::Canonical, "{\"v\":2,\"type\":\"stage\",\"name\":\"x\"}"),
        (Dialect::Localcode, "{\"type\": \"run_start\", \"schema_version\": \"2.1\", \"run_id\": \"r\"}"),
        (Dialect::Loom, "{\"kind\":\"Route\",\"protocol\":\"x@1\",\"accepted\":true,\"schema_version\":2}"),
    ] {
        let mut lines = vec![first.to_string()];
        lines.extend(base(from));
        for to in Dialect::all() {
            let r = run(&join(&lines), from, to);
            assert!(matches!(r.summary.stopped, Some(Stop::Fatal(_))), "{from}");
            assert!(
                r.messages[0].starts_with("1: ")
                    && (r.messages[0].contains("version 2") || r.messages[0].contains("\"2.1\"")),
                "{:?}",
                r.messages
            );
            let problems = check_stream(to.contract(), &r.out);
            assert!(problems.is_empty(), "{problems:?}");
            let field = &to.contract().type_field;
            let kinds: Vec<String> =
                common::values(&r.out).iter().map(|v| v[field].as_str().unwrap().to_string()).collect();
            if to == Dialect::ClaudeCode {
                // claude-code: its init, and one result that says the run failed, and why.
                assert_eq!(kinds, ["system", "result"], "{}", r.out);
                let result = common::values(&r.out).pop().unwrap();
                assert_eq!(
                    (result["is_error"].as_bool(), result["subtype"].as_str()),
                    (Some(true), Some("error_during_execution"))
                );
                assert!(result["result"].as_str().unwrap().contains("refused"), "{}", r.out);
                continue;
            }
            if to == Dialect::Codex {
                // codex has no terminal record: a turn that failed, saying why, and nothing of
                // the refused stream.
                assert_eq!(kinds, ["thread.started", "turn.started", "turn.failed"], "{}", r.out);
                assert!(r.out.contains("refused"), "{}", r.out);
                continue;
            }
            let Some(terminal) = to.contract().terminal.as_ref().map(|t| &t.kind) else {
                // base-context: one loop whose only assistant message says the run did not
                // complete. base-context has no word for incomplete: it stops with `error` (not
                // `length`, an ordinary stop), which reads back as a failed run.
                let back = common::values(&common::translate(r.out.as_bytes(), to, Dialect::Canonical));
                assert_eq!(back.last().unwrap()["outcome"], "failed", "{}", r.out);
                assert!(r.out.contains("\"stopReason\":\"error\""), "{}", r.out);
                assert!(!r.out.contains("tool_execution"), "nothing of the refused stream: {}", r.out);
                continue;
            };
            assert_eq!(kinds.last(), Some(terminal));
            // Nothing of the refused stream: at most the target's own opening lines and an error.
            let allowed = ["error", "session_configured", "thread_started", "init"];
            assert!(kinds[..kinds.len() - 1].iter().all(|k| allowed.contains(&k.as_str())), "{kinds:?}");
        }
    }
}

#[test]
fn a_status_and_exit_code_that_disagree_are_reported_and_the_status_wins() {
    let line = "{\"type\": \"result\", \"status\": \"ok\", \"exit_code\": 1, \"reason\": \"completed\", \"final_text\": \"\", \"tokens\": {\"prompt\": 0, \"completion\": 0, \"total\": 0}}\n";
    let r = run(line.as_bytes(), Dialect::Localcode, Dialect::Canonical);
    assert_eq!(
        r.messages,
        vec!["1: result has status \"ok\" but exit_code 1 (the status means 0); the status is followed"]
    );
    assert!(r.out.contains("\"outcome\":\"completed\""));
    let r = run(
        b"{\"type\":\"complete\",\"exit_code\":7,\"session_id\":\"s\",\"model\":\"m\"}\n",
        Dialect::Adal,
        Dialect::Canonical,
    );
    assert_eq!(r.messages.len(), 1);
    assert!(r.out.contains("\"outcome\":\"incomplete\",\"reason\":\"exit code 7\""), "{}", r.out);
}

#[test]
fn a_twenty_megabyte_line_is_translated_and_a_line_over_the_limit_refused() {
    let text = "数据🙂".repeat(3_500_000); // 21 MB of UTF-8
    let input = format!("{{\"v\":1,\"type\":\"text_delta\",\"text\":\"{text}\"}}\n{{\"v\":1,\"type\":\"terminal\",\"outcome\":\"completed\"}}\n");
    let r = run(input.as_bytes(), Dialect::Canonical, Dialect::Localcode);
    assert!(r.messages.is_empty());
    let chunks: Vec<serde_json::Value> =
        common::values(&r.out).into_iter().filter(|l| l["type"] == "content").collect();
    assert_eq!(chunks.len(), 3_500_000 * 3 / 2000);
    assert_eq!(chunks.iter().map(|c| c["chunk"].as_str().unwrap().len()).sum::<usize>(), text.len());

    let mut opts = Options::new(Some(Dialect::Canonical), Dialect::Localcode);
    opts.max_line_bytes = 1_000_000;
    let (out, summary, diags) = translate_bytes(input.as_bytes(), &opts);
    assert_eq!(summary.report.bad, 1);
    assert!(diags[0].message.contains("longer than the limit"), "{diags:?}");
    assert!(String::from_utf8(out).unwrap().contains("\"status\": \"ok\""), "the rest is translated");
}

/// Offsets to cut a transcript at: all of them for small files, else a dense sample plus every
/// offset around each line break.
fn cut_points(input: &[u8]) -> Vec<usize> {
    if input.len() <= 1000 {
        return (0..=input.len()).collect();
    }
    let step = input.len() / 200 + 1;
    let mut points: Vec<usize> = (0..=input.len()).step_by(step).collect();
    for (i, b) in input.iter().enumerate() {
        if *b == b'\n' {
            points.extend(i.saturating_sub(1)..=(i + 1).min(input.len()));
        }
    }
    points.sort_unstable();
    points.dedup();
    points
}

#[test]
fn every_prefix_of_every_fixture_translates_to_a_valid_stream_with_one_terminal() {
    let mut runs = 0;
    for case in common::cases() {
        for cut in cut_points(&case.input) {
            let prefix = &case.input[..cut];
            for to in Dialect::all() {
                let r = run(prefix, case.dialect, to);
                let problems: Vec<_> = check_stream(to.contract(), &r.out)
                    .into_iter()
                    // Within one dialect the lines read are copied: unknown kinds and a writer's
                    // habits (member order) stay as they were.
                    .filter(|(_, p)| !(case.dialect == to && (common::unknown_kind(p) || p.starts_with("warning: "))))
                    .collect();
                assert!(problems.is_empty(), "{} cut at {cut}, to {to}: {problems:?}\n{}", case.path.display(), r.out);
                assert_eq!(r.summary.report.accounted(), r.summary.report.lines);
                runs += 1;
            }
        }
    }
    assert!(runs > 10_000, "{runs}");
}

/// Regression: members are parsed only when a decoder asks for them, and a member too deep for
/// a `Value`, holding a lone surrogate or a number beyond f64 once came out empty instead of
/// the line being reported.
#[test]
fn a_member_no_value_can_hold_gets_its_line_reported_not_emptied() {
    let deep = format!(
        "{{\"type\":\"tool_call\",\"id\":\"c1\",\"name\":\"x\",\"args\":{{\"a\":{}{}}}}}",
        "[".repeat(200),
        "]".repeat(200)
    );
    let surrogate = r#"{"type":"tool_call","id":"c2","name":"y","args":{"a":"\ud800"}}"#;
    let huge = r#"{"type":"tool_call","id":"c3","name":"z","args":{"a":1e400}}"#;
    let input = format!(
        "{deep}\n{surrogate}\n{huge}\n{{\"type\":\"complete\",\"exit_code\":0,\"session_id\":\"s\",\"model\":\"m\"}}\n"
    );
    let (out, _, diags) = translate_bytes(input.as_bytes(), &Options::new(Some(Dialect::Adal), Dialect::Adal));
    let lines: Vec<u64> = diags.iter().map(|d| d.line).collect();
    assert_eq!(lines, [1, 2, 3], "{diags:?}");
    // serde_json's reason and place, as for any line that does not parse.
    assert_eq!(diags[2].message, "not JSON at column 58: number out of range");
    assert!(diags.iter().all(|d| d.message.starts_with("not JSON")), "{diags:?}");
    let out = String::from_utf8(out).unwrap();
    assert!(!out.contains("tool_call"), "no call written with its arguments lost: {out}");
    assert!(out.ends_with("\"model\":\"m\"}\n"));
}

#[test]
fn an_adal_tool_result_without_a_status_or_with_an_unknown_one_is_reported() {
    let input = concat!(
        r#"{"type":"tool_call","id":"a","name":"x","args":{}}"#,
        "\n",
        r#"{"type":"tool_result","id":"a","name":"x","output":"ok"}"#,
        "\n",
        r#"{"type":"tool_call","id":"b","name":"x","args":{}}"#,
        "\n",
        r#"{"type":"tool_result","id":"b","name":"x","status":"exploded","output":""}"#,
        "\n",
        r#"{"type":"complete","exit_code":0,"session_id":"s","model":"m"}"#,
        "\n",
    );
    let r = run(input.as_bytes(), Dialect::Adal, Dialect::Localcode);
    assert_eq!(
        r.messages,
        vec![
            "2: tool_result without \"status\"; read as completed",
            "4: tool_result has status \"exploded\", which adal does not list; read as failed"
        ]
    );
    // Still translated, as the diagnostics say.
    assert_eq!(member_of_each(&r.out, "tool_result", "error"), vec!["false", "true"]);
}

#[test]
fn a_localcode_error_flag_that_is_neither_true_nor_false_is_reported() {
    let input = concat!(
        r#"{"type": "tool_start", "name": "x", "args": "", "index": "0"}"#,
        "\n",
        r#"{"type": "tool_result", "name": "x", "args": "", "index": "0", "result": "", "error": "maybe"}"#,
        "\n",
    );
    let r = run(input.as_bytes(), Dialect::Localcode, Dialect::Adal);
    assert_eq!(
        r.messages,
        vec!["2: tool_result has error \"maybe\", neither \"true\" nor \"false\"; read as not failed"]
    );
    let result = common::values(&r.out).into_iter().find(|l| l["type"] == "tool_result").unwrap();
    assert_eq!(result["status"], "completed");
}

#[test]
fn a_line_with_bytes_that_are_not_utf8_is_mended_not_lost() {
    // A bad byte inside the answer and a character cut at the end of the text: the answer
    // still arrives, the bad bytes as U+FFFD, and the line is named on stderr.
    let input = b"{\"type\":\"answer\",\"content\":\"fixed \xFF3 files \xE2\x82\"}\n{\"type\":\"complete\",\"exit_code\":0,\"session_id\":\"s\",\"model\":\"m\"}\n";
    let r = run(input, Dialect::Adal, Dialect::Localcode);
    assert_eq!(r.messages, vec!["1: not valid UTF-8 (bad byte at offset 34); read with U+FFFD in its place"]);
    let out = common::values(&r.out);
    let result = out.last().unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["status"], "ok");
    assert_eq!(result["final_text"], "fixed \u{FFFD}3 files \u{FFFD}");
    assert_eq!(r.summary.report.mended, 1);
    assert_eq!(r.summary.report.bad, 0);
    assert_eq!(r.summary.report.translated, 2);

    // --strict still stops at it.
    let mut opts = Options::new(Some(Dialect::Adal), Dialect::Localcode);
    opts.strict = true;
    let (out, summary, _) = translate_bytes(input, &opts);
    assert!(matches!(summary.stopped, Some(Stop::Strict(_))), "{:?}", summary.stopped);
    let out = common::values(std::str::from_utf8(&out).unwrap());
    assert_eq!(out.len(), 1, "only the terminal record: {out:?}");
    assert_eq!(out[0]["status"], "incomplete");

    // Mended but still not JSON: one diagnostic that says both.
    let r = run(b"{\"type\":\"answer\",\"content\":\"\xFF\"\n", Dialect::Adal, Dialect::Adal);
    assert_eq!(r.messages.len(), 1, "{:?}", r.messages);
    assert!(r.messages[0].starts_with("1: not valid UTF-8 (bad byte at offset 28), and not JSON"), "{:?}", r.messages);
    assert_eq!(r.summary.report.bad, 1);
}

#[test]
fn a_wuu_tool_completed_without_a_status_or_with_an_unknown_one_is_reported() {
    let line = |v: &str| format!("{v}\n");
    let input = [
        r#"{"thread_id":"t","turn_id":"u","type":"turn_started"}"#,
        r#"{"arguments":"{}","item_id":"a","name":"x","thread_id":"t","turn_id":"u","type":"tool_started"}"#,
        r#"{"error":"","item_id":"a","name":"x","thread_id":"t","turn_id":"u","type":"tool_completed"}"#,
        r#"{"arguments":"{}","item_id":"b","name":"x","thread_id":"t","turn_id":"u","type":"tool_started"}"#,
        r#"{"error":"","item_id":"b","name":"x","status":"exploded","thread_id":"t","turn_id":"u","type":"tool_completed"}"#,
        r#"{"final_message":"","run_id":"r","status":"completed","thread_id":"t","trace_path":"","turn_id":"u","type":"result"}"#,
    ]
    .map(line)
    .concat();
    let r = run(input.as_bytes(), Dialect::Wuu, Dialect::Adal);
    assert_eq!(
        r.messages,
        vec![
            "3: tool_completed without \"status\"; read as completed",
            "5: tool_completed has status \"exploded\", which agentgate does not know; read as failed"
        ]
    );
    // Still translated, as the diagnostics say.
    assert_eq!(member_of_each(&r.out, "tool_result", "status"), vec!["completed", "failed"]);
}

/// DESIGN.md: a decoder accepts a count written as a string or an integer. loom and canonical
/// write integers and booleans and hold their lines to their contracts; a count given there as
/// a string of digits, or a flag as "true" or "false", is still read (with a line on stderr),
/// not the whole record lost with it.
#[test]
fn a_count_or_a_flag_written_as_a_string_is_read_by_the_strict_decoders_and_reported() {
    let loom = concat!(
        r#"{"arguments":"{}","call_id":"c1","kind":"ToolCall","name":"select_action","schema_version":1,"turn":"2"}"#,
        "\n",
        r#"{"cached_input_tokens":0,"final_usage":"true","input_tokens":"120","kind":"Usage","model":"m","output_tokens":7,"schema_version":1,"turn":2}"#,
        "\n",
        r#"{"exit_status":0,"kind":"Terminal","schema_version":1,"steps":"1.5","stop_reason":"Completed"}"#,
        "\n",
    );
    let r = run(loom.as_bytes(), Dialect::Loom, Dialect::Loom);
    assert_eq!(
        r.messages,
        vec![
            "1: ToolCall.turn is the string \"2\", not an integer; read as 2",
            "2: Usage.input_tokens is the string \"120\", not an integer; read as 120",
            "2: Usage.final_usage is the string \"true\", not a boolean; read as true",
            // Not an integer written as a string: the optional field is left out, not the record.
            "3: Terminal.steps: expected an integer, got \"1.5\"; the field is left out",
        ]
    );
    let out = common::values(&r.out);
    assert_eq!(out[0]["turn"], 2, "written back as loom writes it");
    assert_eq!((out[1]["input_tokens"].as_u64(), out[1]["output_tokens"].as_u64()), (Some(120), Some(7)));
    assert_eq!(out[1]["final_usage"], true);
    assert_eq!(out.len(), 3);
    assert_eq!((out[2]["stop_reason"].as_str(), out[2].get("steps")), (Some("Completed"), None));
    let lc = common::values(&common::translate(loom.as_bytes(), Dialect::Loom, Dialect::Localcode));
    assert_eq!(lc.last().unwrap()["tokens"], serde_json::json!({"prompt": 120, "completion": 7, "total": 127}));

    let mut canonical = base(Dialect::Canonical);
    let at = canonical.iter().position(|l| l.contains(r#""type":"usage""#)).unwrap();
    let before = common::values(&common::translate(&join(&canonical), Dialect::Canonical, Dialect::Localcode));
    canonical[at] = canonical[at].replacen(r#""input":1000"#, r#""input":"1000""#, 1);
    assert!(canonical[at].contains(r#""input":"1000""#));
    let r = run(&join(&canonical), Dialect::Canonical, Dialect::Localcode);
    assert_eq!(
        r.messages,
        vec![format!("{}: usage.input is the string \"1000\", not an integer; read as 1000", at + 1)]
    );
    assert_eq!(common::values(&r.out), before, "read as if written as an integer");
}

/// base-context reads its message usage by name: a count written as a string of digits is the
/// same count (DESIGN.md), and one that is no count is left out and reported, not dropped
/// unsaid (both once read as nothing at all).
#[test]
fn base_context_usage_counts_as_strings_are_read_and_bad_ones_reported() {
    let mut lines = base(Dialect::BaseContext);
    let before = common::values(&common::translate(&join(&lines), Dialect::BaseContext, Dialect::Localcode));
    let usage = r#""usage":{"input":3,"output":96,"cacheRead":4120,"cacheWrite":1893,"totalTokens":6112"#;
    // The assistant message's end, where its usage is read.
    let at = lines.iter().position(|l| l.starts_with(r#"{"type":"message_end""#) && l.contains(usage)).unwrap();
    lines[at] = lines[at].replacen(
        usage,
        r#""usage":{"input":"3","output":"96","cacheRead":"4120","cacheWrite":1893,"totalTokens":"6112""#,
        1,
    );
    let r = run(&join(&lines), Dialect::BaseContext, Dialect::Localcode);
    assert_eq!(r.messages, Vec::<String>::new());
    assert_eq!(common::values(&r.out), before, "read as if written as integers");

    lines[at] = lines[at].replacen(r#""output":"96""#, r#""output":-96"#, 1);
    let r = run(&join(&lines), Dialect::BaseContext, Dialect::Localcode);
    assert_eq!(r.messages, vec![format!("{}: message usage.output is -96, not a count; left out", at + 1)]);
}

/// The run's totals on a canonical `terminal` are a nested object the contract does not list
/// field by field: its counts written as strings are read as well (once the whole terminal
/// record was refused, and a synthesized one said the input had ended without one).
#[test]
fn a_canonical_terminal_with_its_totals_written_as_strings_is_read() {
    let mut lines = base(Dialect::Canonical);
    let last = lines.len() - 1;
    let before = common::values(&common::translate(&join(&lines), Dialect::Canonical, Dialect::Localcode));
    let totals = r#""usage":{"input":5200,"output":100,"cache_read":4200,"total":5300}"#;
    assert!(lines[last].contains(totals));
    lines[last] =
        lines[last].replacen(totals, r#""usage":{"input":"5200","output":"100","cache_read":4200,"total":"5300"}"#, 1);
    let r = run(&join(&lines), Dialect::Canonical, Dialect::Localcode);
    assert_eq!(r.messages, Vec::<String>::new());
    assert_eq!(common::values(&r.out), before);

    lines[last] = lines[last].replacen(r#""output":"100""#, r#""output":"-1""#, 1);
    let r = run(&join(&lines), Dialect::Canonical, Dialect::Localcode);
    assert_eq!(
        r.messages,
        vec![format!(
            "{}: terminal: invalid value: string \"-1\", expected a count (an integer from 0, or a string of digits)",
            last + 1
        )]
    );
}

/// A loom or canonical record whose optional field has a value its contract refuses (a wrong
/// type, a null where the dialect writes none) is read without that field, and said so: the
/// record stands (a Terminal's stop reason once gave way to a synthesized "input ended without
/// a terminal record"). A required field missing or refused still makes the line bad.
#[test]
fn a_refused_optional_field_is_left_out_and_a_refused_required_one_refuses_the_line() {
    let loom = concat!(
        r#"{"arguments":"{}","call_id":null,"kind":"ToolCall","name":"select_action","schema_version":1,"turn":1}"#,
        "\n",
        r#"{"exit_status":3,"kind":"Terminal","protocol":null,"schema_version":1,"steps":[1],"stop_reason":"StepBudget"}"#,
        "\n",
    );
    let r = run(loom.as_bytes(), Dialect::Loom, Dialect::Adal);
    assert_eq!(
        r.messages,
        vec![
            "1: ToolCall.call_id: null where a value is required",
            "2: Terminal.protocol: null where a value is required; the field is left out",
            "2: Terminal.steps: expected an integer, got [1]; the field is left out",
        ]
    );
    let out = common::values(&r.out);
    assert_eq!(out.iter().map(|l| l["type"].as_str().unwrap()).collect::<Vec<_>>(), ["error", "complete"]);
    assert_eq!(out[1]["exit_code"], 1, "StepBudget is a failed run to adal, not a cut-off one");
    assert!(out[0]["message"].as_str().unwrap().contains("StepBudget"), "{}", out[0]);

    let mut canonical = base(Dialect::Canonical);
    let last = canonical.len() - 1;
    canonical[last] = canonical[last].replacen(r#""model":"gpt-5.1-codex""#, r#""model":7"#, 1);
    let r = run(&join(&canonical), Dialect::Canonical, Dialect::Canonical);
    assert_eq!(
        r.messages,
        vec![format!("{}: terminal.model: expected a string, got 7; the field is left out", last + 1)]
    );
    let terminal = common::values(&r.out).pop().unwrap();
    assert_eq!((terminal["outcome"].as_str(), terminal.get("synthesized")), (Some("completed"), None));
}

/// base-context's input excludes the cache figures canonical input includes: converting adds and
/// subtracts them. Counts near the largest integer saturate there rather than wrap (in a release
/// build a wrapped sum was a small, wrong count; in a debug build, a panic).
#[test]
fn base_context_usage_near_the_largest_count_saturates_instead_of_wrapping() {
    let max = u64::MAX.to_string();
    let localcode = format!(
        concat!(
            r#"{{"type": "content", "chunk": "x", "chars": "1"}}"#,
            "\n",
            r#"{{"type": "turn_tokens", "prompt_tokens": "{max}", "completion_tokens": "5", "total_tokens": "{max}"}}"#,
            "\n"
        ),
        max = max
    );
    let out = common::translate(localcode.as_bytes(), Dialect::Localcode, Dialect::BaseContext);
    let end = common::values(&out).into_iter().find(|l| l["type"] == "message_end").unwrap();
    let usage = &end["message"]["usage"];
    assert_eq!((usage["input"].as_u64(), usage["output"].as_u64()), (Some(u64::MAX), Some(5)));
    assert_eq!(usage["totalTokens"].as_u64(), Some(u64::MAX), "{usage}");

    let mut lines = base(Dialect::BaseContext);
    let usage = r#""usage":{"input":3,"output":96,"cacheRead":4120,"#;
    let at = lines.iter().position(|l| l.starts_with(r#"{"type":"message_end""#) && l.contains(usage)).unwrap();
    lines[at] = lines[at].replacen(usage, &format!(r#""usage":{{"input":{max},"output":96,"cacheRead":4120,"#), 1);
    let out = common::translate(&join(&lines), Dialect::BaseContext, Dialect::Canonical);
    let first = common::values(&out).into_iter().find(|l| l["type"] == "usage").unwrap();
    assert_eq!(first["input"].as_u64(), Some(u64::MAX), "{first}");
}

/// A token count that is no count (a negative number, a word) in wuu, localcode and loom is
/// read as none (localcode, as localcode itself, reads it as 0) and said on stderr, naming the
/// line: it was once kept among the line's unknown members without a word, so a target of
/// another dialect lost it unsaid. A wuu or loom target still gets it back as it was.
#[test]
fn a_token_count_that_is_no_count_is_reported() {
    let cases = [
        (Dialect::Wuu, r#""output_tokens":120,"#, r#""output_tokens":-120,"#, "usage_updated.output_tokens is -120"),
        (
            Dialect::Localcode,
            r#""prompt_tokens": "1200""#,
            r#""prompt_tokens": "lots""#,
            "turn_tokens.prompt_tokens is \"lots\"",
        ),
        (Dialect::Loom, r#""output_tokens":7,"#, r#""output_tokens":-7,"#, "Usage.output_tokens is -7"),
    ];
    for (from, good, bad, said) in cases {
        let mut lines = base(from);
        let at = lines.iter().position(|l| l.contains(good)).unwrap();
        lines[at] = lines[at].replacen(good, bad, 1);
        let read_as = if from == Dialect::Localcode { "0" } else { "none" };
        for to in Dialect::all() {
            let r = run(&join(&lines), from, to);
            assert_eq!(
                r.messages,
                vec![format!("{}: {said}, not a count; read as {read_as}", at + 1)],
                "{from} -> {to}"
            );
            assert_sound(&r, from, to, lines.len() as u64, "a count that is none");
        }
        // localcode's contract holds its counts to digits: its encoder writes the 0 it read.
        if from != Dialect::Localcode {
            let same = run(&join(&lines), from, from);
            assert!(same.out.contains(bad.trim_end_matches(',')), "{from}: the member is written back as it was");
        }
    }
    // A loom Session line's counts alike.
    let mut lines: Vec<String> = std::fs::read_to_string(common::fixtures().join("loom/session.jsonl"))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let at = lines.iter().position(|l| l.contains(r#""kind":"Session""#)).unwrap();
    lines[at] = lines[at].replacen(r#""turns":2"#, r#""turns":-2"#, 1);
    let r = run(&join(&lines), Dialect::Loom, Dialect::Canonical);
    assert_eq!(r.messages, vec![format!("{}: Session.turns is -2, not a count; read as none", at + 1)]);
    assert_sound(&r, Dialect::Loom, Dialect::Canonical, lines.len() as u64, "a Session count that is none");
}

/// loom's version written as the string "1" is version 1, read with a line on stderr (as a
/// count written as a string is): it once refused the whole stream as an unknown version. A
/// string naming another version still does.
#[test]
fn a_loom_version_written_as_a_string_of_its_digits_is_that_version() {
    let lines = base(Dialect::Loom);
    for to in Dialect::all() {
        let before = without_derived_ids(&common::translate(&join(&lines), Dialect::Loom, to));
        let mut spoilt = lines.clone();
        spoilt[0] = spoilt[0].replacen(r#""schema_version":1"#, r#""schema_version":"1""#, 1);
        assert_ne!(spoilt[0], lines[0]);
        let r = run(&join(&spoilt), Dialect::Loom, to);
        assert_eq!(r.messages, vec!["1: schema_version is the string \"1\", not an integer; read as 1"], "{to}");
        assert_eq!(without_derived_ids(&r.out), before, "{to}");

        spoilt[0] = spoilt[0].replacen(r#""schema_version":"1""#, r#""schema_version":"2""#, 1);
        let r = run(&join(&spoilt), Dialect::Loom, to);
        assert!(matches!(r.summary.stopped, Some(Stop::Fatal(_))), "{to}");
        assert!(r.messages[0].starts_with("1: loom schema_version \"2\""), "{:?}", r.messages);
    }
}

/// A value of another type than the contract's for `field` (one no reader takes there), marked
/// so that it can be found in an output; `None` where any value will do.
fn refused_value(field: &agentgate::contract::Field) -> Option<serde_json::Value> {
    use agentgate::contract::FieldType as T;
    let mark = "§refused§";
    match field.ty {
        T::Any => None,
        T::String | T::StringOrInteger | T::Digits | T::IntString | T::BoolString => {
            Some(serde_json::json!({ mark: 1 }))
        }
        _ => Some(serde_json::json!(mark)),
    }
}

#[test]
fn a_listed_member_of_a_type_its_contract_refuses_reaches_the_output_or_is_counted() {
    // Never silent loss (DESIGN.md): every member that does not reach the output is counted by
    // --report. An optional member of a listed kind whose value is of a refused type (loom's
    // `Usage.input_tokens: "x"`, wuu's `session_configured.effort: 7`) was left out by the
    // decoder or by the writer of the line written anew, and the report said nothing of it.
    let (mut failures, mut gaps_seen) = (Vec::new(), Vec::new());
    for from in Dialect::all().filter(|d| *d != Dialect::Canonical) {
        let contract = from.contract();
        let lines = base(from);
        let mut kinds_seen = Vec::new();
        for (at, line) in lines.iter().enumerate() {
            let Ok(serde_json::Value::Object(m)) = serde_json::from_str::<serde_json::Value>(line) else { continue };
            let Some(kind) = m.get(&contract.type_field).and_then(|k| k.as_str()) else { continue };
            let Some(spec) = contract.kinds.get(kind) else { continue };
            // The first line of each kind.
            if kinds_seen.iter().any(|k| k == kind) {
                continue;
            }
            kinds_seen.push(kind.to_string());
            for (name, field) in spec.fields.iter().filter(|(_, f)| !f.required) {
                let Some(value) = refused_value(field) else { continue };
                // With a member no spec names beside it: a line written anew keeps it too.
                let mut spoiled = m.clone();
                spoiled.insert(name.clone(), value);
                spoiled.insert("§unknown§".into(), serde_json::json!(1));
                let mut input = lines.clone();
                input[at] = serde_json::to_string(&spoiled).unwrap();
                let gap = format!("{from} {kind}.{name}");
                let mut lost = false;
                for to in Dialect::all() {
                    let r = run(&join(&input), from, to);
                    let report = &r.summary.report;
                    // Counted: the member, or the line as a whole (a dropped event more than the
                    // stream as it was gives).
                    let events = |r: &agentgate::report::Report| r.dropped_kinds.values().sum::<u64>();
                    let whole = events(report) > events(&run(&join(&lines), from, to).summary.report);
                    let counted =
                        whole || report.dropped_fields.keys().any(|k| k.rsplit('.').next() == Some(name.as_str()));
                    if !(r.out.contains("§refused§") || counted || report.bad > 0) {
                        lost = true;
                        if !KNOWN_GAPS.contains(&gap.as_str()) {
                            failures.push(format!("{from} to {to}: line {} {kind}.{name}: {report}", at + 1));
                        }
                    }
                    let unknown_counted = report.dropped_fields.keys().any(|k| k.ends_with("§unknown§"));
                    if r.out.contains("§unknown§") && unknown_counted {
                        failures.push(format!("{from} to {to}: line {} {kind}: written and counted", at + 1));
                    }
                    let unknown = whole || unknown_counted;
                    if !(r.out.contains("§unknown§") || unknown || report.bad > 0) {
                        let gap = format!("{from} {kind} (a member no spec names)");
                        if !KNOWN_GAPS.contains(&gap.as_str()) {
                            failures.push(format!("{from} to {to}: line {} {kind}: a member no spec names", at + 1));
                        }
                        gaps_seen.push(gap);
                    }
                }
                if lost {
                    gaps_seen.push(gap);
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} lost unsaid:\n{}", failures.len(), failures.join("\n"));
    // A gap closed comes off the list.
    let stale: Vec<_> = KNOWN_GAPS.iter().filter(|g| !gaps_seen.iter().any(|s| s == *g)).collect();
    assert!(stale.is_empty(), "no longer lost, take off KNOWN_GAPS: {stale:?}");
}

/// What the test above still finds lost unsaid to some target (open work; the closing note of
/// the session that wrote it says so), each as `dialect kind.member`, or `dialect kind (a member
/// no spec names)` for the unknown member beside: base-context's decoder reads a listed member
/// of a refused type (a `messageId` that is no integer, a `message` that is no object) as
/// absent and keeps it nowhere; a Claude `result` line's members are folded into the run's result, and to another dialect
/// a member of a refused type in it goes unsaid (as does a `parent_tool_use_id` that is no
/// string: its line is read as a subagent's); wuu's `command_*` twin of a `tool_*` line is
/// folded as a repeat, what it says beyond its twin unread.
const KNOWN_GAPS: &[&str] = &[
    "base-context agent_end.messages",
    "base-context message_end.messageId",
    "base-context message_start.messageId",
    "base-context message_update.message",
    "base-context message_update.messageId",
    "claude-code assistant.parent_tool_use_id",
    "claude-code result.permission_denials",
    "claude-code result.result",
    "claude-code result.total_cost_usd",
    "claude-code user.parent_tool_use_id",
    "wuu command_completed (a member no spec names)",
    "wuu command_completed.arguments",
    "wuu command_completed.name",
    "wuu command_completed.thread_id",
    "wuu command_completed.turn_id",
    "wuu command_output_delta (a member no spec names)",
    "wuu command_output_delta.arguments",
    "wuu command_output_delta.name",
    "wuu command_output_delta.thread_id",
    "wuu command_output_delta.turn_id",
    "wuu command_started (a member no spec names)",
    "wuu command_started.arguments",
    "wuu command_started.name",
    "wuu command_started.thread_id",
    "wuu command_started.turn_id",
];

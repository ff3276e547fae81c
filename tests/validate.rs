//! `validate` by the spec: each valid stream, broken in exactly one way per rule, is caught with
//! the right severity, and what is not a break (member order where the spec states none, a kind
//! the readers skip) is at most a warning. The expectations come from the spec sentences the
//! rules quote in `mappings/`, not from the contract files.

mod common;

use std::process::Command;

use serde_json::{json, Value};

use agentgate::contract::{stream_findings, Severity};
use agentgate::Dialect;

fn fixture(rel: &str) -> String {
    std::fs::read_to_string(common::fixtures().join(rel)).unwrap()
}

/// The valid stream each dialect's breaks start from: the fixture that stands for it.
fn valid(d: Dialect) -> String {
    std::fs::read_to_string(common::representative(d)).unwrap()
}

fn lines(text: &str) -> Vec<Value> {
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn join(values: &[Value]) -> String {
    values.iter().map(|v| format!("{v}\n")).collect()
}

/// (severity, rule, message) of each finding.
fn findings(d: Dialect, text: &str) -> Vec<(Severity, String, String)> {
    stream_findings(d.contract(), text).into_iter().map(|f| (f.severity, f.rule, f.message)).collect()
}

/// The stream has exactly one finding, of this severity, whose message contains `says`.
#[track_caller]
fn one(d: Dialect, text: &str, severity: Severity, says: &str) {
    let f = findings(d, text);
    assert_eq!(f.len(), 1, "{d}: {f:?}");
    assert_eq!(f[0].0, severity, "{d}: {f:?}");
    assert!(f[0].2.contains(says), "{d}: {f:?} lacks {says:?}");
}

/// Line `i` (0-based; negative from the end) of `d`'s valid stream changed by `change`.
fn broken(d: Dialect, i: isize, change: impl FnOnce(&mut Value)) -> String {
    let mut v = lines(&valid(d));
    let i = if i < 0 { v.len() as isize + i } else { i } as usize;
    change(&mut v[i]);
    join(&v)
}

#[test]
fn every_valid_fixture_validates_without_a_finding() {
    for d in Dialect::all() {
        assert_eq!(findings(d, &valid(d)), vec![], "{d}");
    }
    assert_eq!(findings(Dialect::BaseContext, &fixture("base-context/deltas.jsonl")), vec![]);
}

#[test]
fn a_blank_line_is_a_problem_in_every_dialect() {
    for d in Dialect::all() {
        let text = valid(d);
        let (first, rest) = text.split_once('\n').unwrap();
        one(d, &format!("{first}\n\n{rest}"), Severity::Problem, "blank line");
    }
}

#[test]
fn member_order_is_a_warning_except_where_the_spec_states_it() {
    // Reversed members: wuu (Go's sorted maps), localcode and adal (a writer's habit) warn;
    // loom states alphabetical members as its contract.
    for d in [Dialect::Wuu, Dialect::Localcode, Dialect::Adal, Dialect::Loom] {
        let text = broken(d, -1, |v| {
            let m = v.as_object().unwrap();
            *v = Value::Object(m.iter().rev().map(|(k, v)| (k.clone(), v.clone())).collect());
        });
        let f = findings(d, &text);
        assert!(!f.is_empty(), "{d}");
        let want = if d == Dialect::Loom { Severity::Problem } else { Severity::Warning };
        assert!(f.iter().all(|x| x.0 == want && x.1 == "order"), "{d}: {f:?}");
    }
}

#[test]
fn the_wuu_specs_own_example_lines_validate() {
    // wuu.md's example lines as printed there, members in the spec's order (not sorted).
    let text = concat!(
        r#"{"type":"tool_started","thread_id":"thread-id","turn_id":"turn-id","item_id":"item-id","name":"read_file","arguments":"{\"path\":\"README.md\"}"}"#,
        "\n",
        r#"{"type":"tool_output_delta","thread_id":"thread-id","turn_id":"turn-id","item_id":"item-id","delta":"output fragment"}"#,
        "\n",
        r#"{"type":"tool_completed","thread_id":"thread-id","turn_id":"turn-id","item_id":"item-id","name":"read_file","status":"completed","error":""}"#,
        "\n",
        r#"{ "type": "result", "status": "completed", "thread_id": "thread-id", "turn_id": "turn-id", "run_id": "run-id", "final_message": "The report is ready.", "trace_path": "/path/to/trace.jsonl"}"#,
        "\n",
    );
    let f = findings(Dialect::Wuu, text);
    assert!(f.iter().all(|x| x.0 == Severity::Warning), "{f:?}");
    let out = Command::new(env!("CARGO_BIN_EXE_agentgate"))
        .args(["validate", "--dialect", "wuu", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(text.as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(out.stdout.is_empty());
}

#[test]
fn an_unknown_kind_is_a_warning_in_adal_and_a_problem_in_loom() {
    let mut v = lines(&valid(Dialect::Adal));
    v.insert(0, json!({"type": "progress", "percent": 10}));
    one(Dialect::Adal, &join(&v), Severity::Warning, "\"progress\"");
    let mut v = lines(&valid(Dialect::Loom));
    v.insert(0, json!({"kind": "Progress", "schema_version": 1}));
    one(Dialect::Loom, &join(&v), Severity::Problem, "unknown record kind \"Progress\"");
}

#[test]
fn loom_breaks_are_caught() {
    // "A consumer refuses a version it does not know."
    one(
        Dialect::Loom,
        &broken(Dialect::Loom, 0, |v| v["schema_version"] = json!(2)),
        Severity::Problem,
        "schema_version 2",
    );
    // Terminal: stop_reason absent only when the run failed, with its error. (The run's
    // Approval is left out: it stands only before an ApprovalRequired terminal.)
    let mut v: Vec<Value> = lines(&valid(Dialect::Loom)).into_iter().filter(|l| l["kind"] != "Approval").collect();
    let end = v.last_mut().unwrap();
    end.as_object_mut().unwrap().remove("stop_reason");
    end["exit_status"] = json!(1);
    one(Dialect::Loom, &join(&v), Severity::Problem, "none of \"stop_reason\", \"error\"");
    // Turn.phase is one of three.
    one(Dialect::Loom, &broken(Dialect::Loom, 0, |v| v["phase"] = json!("Planning")), Severity::Problem, "phase");
    // A null where a field is absent.
    one(Dialect::Loom, &broken(Dialect::Loom, 0, |v| v["model"] = Value::Null), Severity::Problem, "null");
}

#[test]
fn base_context_breaks_are_caught() {
    let d = Dialect::BaseContext;
    // The header's cwd is required (notes 4.2).
    one(d, &broken(d, 0, |v| drop(v.as_object_mut().unwrap().remove("cwd"))), Severity::Problem, "cwd");
    // No header at all: another generation (upstream Pi) or a startup failure: read, but a
    // reader of the current stream finds no header (base-context.md: "The first line is the
    // session header"): one problem that names the generation (issue 54).
    let text = valid(d);
    one(d, text.split_once('\n').unwrap().1, Severity::Problem, "upstream Pi stream (another generation");
    // An assistant stopReason outside the five.
    let i =
        lines(&text).iter().rposition(|l| l["type"] == "message_end" && l["message"]["role"] == "assistant").unwrap();
    one(d, &broken(d, i as isize, |v| v["message"]["stopReason"] = json!("finished")), Severity::Problem, "stopReason");
    // A plain-form message_update without its message.
    let u = lines(&text).iter().position(|l| l["type"] == "message_update").unwrap();
    one(
        d,
        &broken(d, u as isize, |v| drop(v.as_object_mut().unwrap().remove("message"))),
        Severity::Problem,
        "lacks message",
    );
    // The delta form: a message_update that still carries message or partial; a toolcall_start
    // without its toolCall.
    let deltas = lines(&fixture("base-context/deltas.jsonl"));
    let u = deltas.iter().position(|l| l["type"] == "message_update").unwrap();
    let mut v = deltas.clone();
    v[u]["message"] = json!({"role": "assistant"});
    one(d, &join(&v), Severity::Problem, "must not have message");
    let mut v = deltas.clone();
    v[u]["assistantMessageEvent"]["partial"] = json!({"role": "assistant"});
    one(d, &join(&v), Severity::Problem, "must not have assistantMessageEvent.partial");
    let t = deltas.iter().position(|l| l["assistantMessageEvent"]["type"] == "toolcall_start").unwrap();
    let mut v = deltas.clone();
    v[t]["assistantMessageEvent"].as_object_mut().unwrap().remove("toolCall");
    let f = findings(d, &join(&v));
    assert_eq!(f.len(), 2, "{f:?}");
    assert!(
        f.iter().all(|x| x.0 == Severity::Problem && x.2.contains("lacks assistantMessageEvent.toolCall")),
        "{f:?}"
    );
    // A `done` inside a message_update (start, done and error never appear there).
    one(
        d,
        &broken(d, u as isize, |v| v["assistantMessageEvent"]["type"] = json!("done")),
        Severity::Problem,
        "\"done\"",
    );
}

#[test]
fn adal_breaks_are_caught() {
    let d = Dialect::Adal;
    let text = valid(d);
    let r = lines(&text).iter().position(|l| l["type"] == "tool_result").unwrap() as isize;
    // A tool_result status outside completed / failed / cancelled.
    one(d, &broken(d, r, |v| v["status"] = json!("done")), Severity::Problem, "\"done\"");
    // The older generation's words: read, but a problem that names the generation (a current
    // reader knows completed / failed / cancelled only).
    one(d, &broken(d, r, |v| v["status"] = json!("success")), Severity::Problem, "an older adal stream");
    // exit code 2 needs a permission_denied before it.
    one(d, &broken(d, -1, |v| v["exit_code"] = json!(2)), Severity::Problem, "permission_denied");
    // A result for a call never made.
    one(d, &broken(d, r, |v| v["id"] = json!("nope")), Severity::Problem, "names no earlier tool_call");
    // complete is always the last event.
    let mut v = lines(&text);
    let last = v.pop().unwrap();
    v.insert(0, last);
    let f = findings(d, &join(&v));
    assert!(f.iter().any(|x| x.0 == Severity::Problem && x.2.contains("after the terminal record")), "{f:?}");
}

#[test]
fn an_older_adal_stream_is_one_problem_that_names_it_not_a_wall_of_problems() {
    // adal-notes.md: the older generation's tool_result has no id or output, status success/error.
    let text = concat!(
        "{\"type\":\"tool_call\",\"id\":\"a\",\"name\":\"bash\",\"args\":{\"command\":\"ls\"}}\n",
        "{\"type\":\"tool_result\",\"name\":\"bash\",\"status\":\"success\"}\n",
        "{\"type\":\"tool_result\",\"name\":\"bash\",\"status\":\"error\"}\n",
        "{\"type\":\"answer\",\"content\":\"ok\"}\n",
        "{\"type\":\"complete\",\"exit_code\":0,\"session_id\":\"s\",\"model\":\"m\"}\n",
    );
    let f = findings(Dialect::Adal, text);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].0, Severity::Problem, "{f:?}");
    assert_eq!(f[0].1, "generation", "{f:?}");
    assert!(f[0].2.starts_with("an older adal stream"), "{f:?}");
    assert!(f[0].2.contains("read, but a current reader rejects it"), "{f:?}");
    // The command line exits 1 with that one line.
    let out = Command::new(env!("CARGO_BIN_EXE_agentgate"))
        .args(["validate", "--dialect", "adal", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(text.as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8(out.stdout).unwrap();
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(said.starts_with("<stdin>:2: an older adal stream"), "{said}");
}

#[test]
fn wuu_and_localcode_breaks_are_caught() {
    one(Dialect::Wuu, &broken(Dialect::Wuu, -1, |v| v["status"] = json!("ok")), Severity::Problem, "status");
    one(
        Dialect::Localcode,
        &broken(Dialect::Localcode, -1, |v| v["status"] = json!("done")),
        Severity::Problem,
        "status",
    );
    // The result's tokens are the sum of the turn_tokens.
    let f = findings(Dialect::Localcode, &broken(Dialect::Localcode, -1, |v| v["tokens"]["prompt"] = json!(1)));
    assert!(f.iter().any(|x| x.0 == Severity::Problem && x.1 == "terminal_sums"), "{f:?}");
    // A second terminal record.
    let mut v = lines(&valid(Dialect::Wuu));
    v.push(v.last().unwrap().clone());
    one(Dialect::Wuu, &join(&v), Severity::Problem, "after the terminal record");
}

#[test]
fn the_cli_reports_several_files_with_severities_as_text_or_json() {
    let dir = std::env::temp_dir().join(format!("agentgate-validate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = dir.join("good.jsonl");
    let warned = dir.join("warned.jsonl");
    let bad = dir.join("bad.jsonl");
    std::fs::write(&good, valid(Dialect::Adal)).unwrap();
    let mut v = lines(&valid(Dialect::Adal));
    v.insert(0, json!({"type": "progress"}));
    std::fs::write(&warned, join(&v)).unwrap();
    std::fs::write(&bad, broken(Dialect::Adal, -1, |v| v["exit_code"] = json!(2))).unwrap();
    let run =
        |args: &[&str]| Command::new(env!("CARGO_BIN_EXE_agentgate")).arg("validate").args(args).output().unwrap();
    let path = |p: &std::path::Path| p.display().to_string();

    // Valid, and a warning only: exit 0, nothing said unless asked.
    let out = run(&[&path(&good), &path(&warned)]);
    assert_eq!((out.status.code(), out.stdout.len()), (Some(0), 0), "{out:?}");
    let out = run(&["--warnings", &path(&warned)]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text,
        format!(
            "{}:1: warning: record kind \"progress\" is not one the spec lists (its readers skip it)\n",
            path(&warned)
        )
    );
    // --strict: a warning fails the stream.
    assert_eq!(run(&["--strict", &path(&warned)]).status.code(), Some(1));

    // A directory: every *.jsonl in it, sorted; a problem fails the batch.
    let out = run(&["--format", "json", &path(&dir)]);
    assert_eq!(out.status.code(), Some(1));
    let found: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["file"], path(&bad));
    assert_eq!(found[0]["severity"], "problem");
    assert_eq!(found[0]["rule"], "terminal_needs");
    assert_eq!(found[0]["line"], 10);
    assert!(found[0]["message"].as_str().unwrap().contains("permission_denied"));

    // detect takes several files too.
    let out =
        Command::new(env!("CARGO_BIN_EXE_agentgate")).args(["detect", &path(&good), &path(&bad)]).output().unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), format!("{}: adal\n{}: adal\n", path(&good), path(&bad)));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_ordering_and_code_rules_are_caught() {
    // adal: no tool event after permission_denied; after it the exit code is 2.
    let denied = fixture("adal/permission-denied.jsonl");
    assert_eq!(findings(Dialect::Adal, &denied), vec![]);
    let mut v = lines(&denied);
    let last = v.pop().unwrap();
    v.push(json!({"type": "tool_call", "id": "late", "name": "bash", "args": {}}));
    v.push(last);
    one(Dialect::Adal, &join(&v), Severity::Problem, "\"tool_call\" after \"permission_denied\"");
    let mut v = lines(&denied);
    v.last_mut().unwrap()["exit_code"] = json!(1);
    let f = findings(Dialect::Adal, &join(&v));
    assert!(f.iter().any(|x| x.1 == "terminal_after"), "{f:?}");
    // loom: Approval just before an ApprovalRequired Terminal; exit_status goes with the stop.
    let mut v = lines(&valid(Dialect::Loom));
    let approval = v.remove(v.len() - 2);
    v.insert(0, approval);
    let f = findings(Dialect::Loom, &join(&v));
    assert!(f.iter().any(|x| x.0 == Severity::Problem && x.1 == "just_before"), "{f:?}");
    one(Dialect::Loom, &broken(Dialect::Loom, -1, |v| v["exit_status"] = json!(3)), Severity::Problem, "exit_status 3");
    // localcode: exit_code goes with status.
    one(
        Dialect::Localcode,
        &broken(Dialect::Localcode, -1, |v| v["exit_code"] = json!(130)),
        Severity::Problem,
        "exit_code 130",
    );
    // base-context: a run whose last loop never ends is reported incomplete.
    let text = valid(Dialect::BaseContext);
    let v: Vec<Value> = lines(&text).into_iter().filter(|l| l["type"] != "agent_end").collect();
    // A warning: its end is the exit status, and a run that failed at startup has none.
    one(Dialect::BaseContext, &join(&v), Severity::Warning, "never settles");
}

#[test]
fn a_missing_member_or_a_wrong_type_is_a_problem_in_every_dialect() {
    // One required member taken from, or retyped on, the terminal (or a late) line of each
    // valid stream: (dialect, line, member).
    for (d, i, member) in [
        (Dialect::Localcode, -1, "reason"),
        (Dialect::Adal, -1, "session_id"),
        (Dialect::Wuu, -1, "trace_path"),
        (Dialect::Loom, -1, "exit_status"),
        (Dialect::BaseContext, 0, "id"),
        (Dialect::Codex, 0, "thread_id"),
        (Dialect::Canonical, -1, "outcome"),
    ] {
        let text = broken(d, i, |v| drop(v.as_object_mut().unwrap().remove(member)));
        let f = findings(d, &text);
        assert!(f.iter().any(|x| x.0 == Severity::Problem && x.1 == "required" && x.2.contains(member)), "{d}: {f:?}");
        let text = broken(d, i, |v| v[member] = json!([1]));
        let f = findings(d, &text);
        assert!(f.iter().any(|x| x.0 == Severity::Problem && x.1 == "type" && x.2.contains(member)), "{d}: {f:?}");
    }
}

#[test]
fn codex_breaks_are_caught() {
    let d = Dialect::Codex;
    // thread.started is the first line.
    let text = valid(d);
    let v: Vec<Value> = lines(&text).into_iter().skip(1).collect();
    one(d, &join(&v), Severity::Problem, "thread.started");
    // A command's status is one of four.
    let i = lines(&text).iter().position(|l| l["item"]["type"] == "command_execution").unwrap() as isize;
    one(d, &broken(d, i + 1, |v| v["item"]["status"] = json!("errored")), Severity::Problem, "\"errored\"");
    // A completed command has its exit code; an agent_message its text.
    one(
        d,
        &broken(d, i + 1, |v| drop(v["item"].as_object_mut().unwrap().remove("exit_code"))),
        Severity::Problem,
        "item.exit_code",
    );
    let m = lines(&text).iter().position(|l| l["item"]["type"] == "agent_message").unwrap() as isize;
    one(d, &broken(d, m, |v| drop(v["item"].as_object_mut().unwrap().remove("text"))), Severity::Problem, "item.text");
    // turn.completed has its usage, with the three integer figures.
    one(d, &broken(d, -1, |v| drop(v.as_object_mut().unwrap().remove("usage"))), Severity::Problem, "usage");
    one(d, &broken(d, -1, |v| v["usage"]["output_tokens"] = json!("912")), Severity::Problem, "output_tokens");
    // An item type codex does not list is tolerated (codex.md, Tolerate).
    let mut v = lines(&text);
    v.insert(2, json!({"type": "item.completed", "item": {"id": "item_9", "type": "hologram", "beam": 1}}));
    assert_eq!(findings(d, &join(&v)), vec![]);
}

/// The kinds of line a dialect's run ends with: its terminal record, or what stands for one.
fn ending_kinds(d: Dialect) -> Vec<&'static str> {
    match d {
        Dialect::Codex => vec!["turn.completed", "turn.failed"],
        Dialect::ClaudeCode => vec!["result"],
        Dialect::BaseContext => vec!["agent_end"],
        Dialect::Localcode | Dialect::Wuu | Dialect::Gemini => vec!["result"],
        Dialect::Adal => vec!["complete"],
        Dialect::Loom => vec!["Terminal"],
        Dialect::Canonical => vec!["terminal"],
        other => panic!("{other} has no streams of its own"),
    }
}

#[test]
fn a_run_without_its_ending_is_a_problem_in_every_dialect_and_a_warning_where_the_spec_allows_it() {
    for d in Dialect::all() {
        let kind_key = if d == Dialect::Loom { "kind" } else { "type" };
        let v: Vec<Value> = lines(&valid(d))
            .into_iter()
            .filter(|l| !ending_kinds(d).contains(&l[kind_key].as_str().unwrap_or("")))
            .collect();
        let f = findings(d, &join(&v));
        let ending: Vec<_> = f.iter().filter(|x| ["terminal", "ends", "settles"].contains(&x.1.as_str())).collect();
        assert_eq!(ending.len(), 1, "{d}: {f:?}");
        // base-context: no terminal record in the stream; its end is the exit status, and a run
        // that failed at startup has none (base-context.md, Completion and Errors).
        let severity = if d == Dialect::BaseContext { Severity::Warning } else { Severity::Problem };
        assert_eq!(ending[0].0, severity, "{d}: {f:?}");
    }
}

#[test]
fn validate_exits_1_for_a_cut_codex_or_claude_code_run() {
    for (rel, says) in [
        ("codex/cut.jsonl", "the run has no ending (no \"turn.completed\" or \"turn.failed\")"),
        ("claude-code/cut.jsonl", "the run has no ending (no \"result\")"),
    ] {
        let path = common::fixtures().join(rel);
        let out = Command::new(env!("CARGO_BIN_EXE_agentgate")).arg("validate").arg(&path).output().unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{rel}: {said}");
        assert!(said.contains(says), "{rel}: {said}");
    }
}

#[test]
fn a_codex_turn_started_again_after_its_ending_needs_one_of_its_own() {
    let text = fixture("codex/success.jsonl");
    let v = lines(&text);
    assert!(findings(Dialect::Codex, &text).iter().all(|x| x.1 != "ends"));
    let mut again = v.clone();
    again.push(json!({"type": "turn.started"}));
    let f = findings(Dialect::Codex, &join(&again));
    assert!(f.iter().any(|x| x.0 == Severity::Problem && x.2.contains("after the last \"turn.started\"")), "{f:?}");
}

/// Where `summary` says a run had no terminal record, `validate` says the run has no ending:
/// the same files, by the same rule, whatever the dialect.
#[test]
fn validate_finds_no_ending_exactly_where_summary_finds_no_terminal_record() {
    let mut files: Vec<std::path::PathBuf> = common::cases().into_iter().map(|c| c.path).collect();
    let real = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/real");
    if real.is_dir() {
        for d in std::fs::read_dir(&real).unwrap().flatten().filter(|d| d.path().is_dir()) {
            files.extend(
                std::fs::read_dir(d.path())
                    .unwrap()
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "jsonl")),
            );
        }
    } else {
        eprintln!("skipped ../shared/real: not found (the fixtures alone are checked)");
    }
    let mut checked = 0;
    for path in files {
        let bytes = std::fs::read(&path).unwrap();
        let run = agentgate::summarize(&bytes[..], "f", None, false);
        let Some(d) = run.dialect else { continue };
        if d == Dialect::Acp {
            continue;
        }
        let said = run.problems.iter().any(|p| p.starts_with("no terminal record"));
        let text = String::from_utf8_lossy(&bytes);
        let found = findings(d, &text).iter().any(|x| ["terminal", "ends", "settles"].contains(&x.1.as_str()));
        assert_eq!(said, found, "{}: summary {:?}", path.display(), run.problems);
        checked += 1;
    }
    assert!(checked > 50, "{checked}");
}

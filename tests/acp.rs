//! `agentgate acp`: a small JSON-RPC client drives the server as an editor does, over every
//! fixture replayed by `cat` (or by a slow replay), and holds every line it gets to
//! `mappings/acp.json` and to the protocol's own types; the answers and updates to each fixture's
//! facts (`<case>.facts.json`, written by hand).
#![cfg(unix)]

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use agentgate::dialect::acp::schema::{PromptResponse, SessionNotification};
use agentgate::dialect::acp::{contract, protocol};
use serde_json::{json, Value};

/// A client of `agentgate acp ARGS -- CMD`: requests out, every line in checked.
struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next: i64,
    /// Every message received, in order.
    seen: Vec<Value>,
}

impl Client {
    fn start(args: &[&str], cmd: &[&str]) -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_agentgate"))
            .arg("acp")
            .args(args)
            .arg("--")
            .args(cmd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Client { stdin: child.stdin.take(), child, lines: rx, next: 0, seen: Vec::new() }
    }

    fn raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next;
        self.next += 1;
        self.raw(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string());
        id
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.raw(&json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string());
    }

    /// The next message, within `wait`; `None` when none came.
    fn next_within(&mut self, wait: Duration) -> Option<Value> {
        match self.lines.recv_timeout(wait) {
            Ok(line) => {
                let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
                let problems = check(&v);
                assert!(problems.is_empty(), "{line}\nbreaks mappings/acp.json: {problems:?}");
                self.seen.push(v.clone());
                Some(v)
            }
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    fn next(&mut self) -> Value {
        self.next_within(Duration::from_secs(30)).expect("a message within 30s")
    }

    /// The updates up to the answer to `id`, and the answer.
    fn until_answer(&mut self, id: i64) -> (Vec<Value>, Value) {
        let mut updates = Vec::new();
        loop {
            let m = self.next();
            if m.get("id") == Some(&json!(id)) && m.get("method").is_none() {
                return (updates, m);
            }
            updates.push(m);
        }
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params);
        self.until_answer(id).1
    }

    /// initialize and session/new; the session's id.
    fn session(&mut self) -> String {
        let init = self.call("initialize", json!({"protocolVersion": 1, "clientCapabilities": {}}));
        assert_eq!(init["result"]["protocolVersion"], 1, "{init}");
        self.new_session()
    }

    fn new_session(&mut self) -> String {
        let r = self.call("session/new", json!({"cwd": env!("CARGO_MANIFEST_DIR"), "mcpServers": []}));
        r["result"]["sessionId"].as_str().unwrap_or_else(|| panic!("{r}")).to_string()
    }

    fn prompt(&mut self, session: &str, text: &str) -> i64 {
        self.request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}))
    }

    fn close(mut self) -> ExitStatus {
        drop(self.stdin.take());
        let start = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            assert!(start.elapsed() < Duration::from_secs(20), "agentgate acp did not exit after stdin closed");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What a line breaks of `mappings/acp.json` and of the protocol's own types (none: empty).
fn check(v: &Value) -> Vec<String> {
    let p = protocol();
    let mut out = Vec::new();
    if v["jsonrpc"] != "2.0" {
        out.push("jsonrpc is not \"2.0\"".to_string());
    }
    if let Some(method) = v.get("method") {
        if method != "session/update" {
            out.push(format!("agentgate acp sends no request or notification but session/update: {method}"));
        }
        if v.get("id").is_some() {
            out.push("a notification with an id".into());
        }
        if let Err(e) = serde_json::from_value::<SessionNotification>(v["params"].clone()) {
            out.push(format!("params are no SessionNotification: {e}"));
        }
        let update = &v["params"]["update"];
        let kind = update["sessionUpdate"].as_str().unwrap_or("");
        if contract().kind(kind).is_none() {
            out.push(format!("update kind {kind} is not in acp.json"));
        }
        out.extend(contract().check_line(update));
        if kind == "plan" {
            for e in update["entries"].as_array().into_iter().flatten() {
                let ok = e["content"].is_string()
                    && p.plan.priorities.iter().any(|x| e["priority"] == x.as_str())
                    && ["pending", "in_progress", "completed"].iter().any(|s| e["status"] == *s);
                if !ok {
                    out.push(format!("plan entry {e}"));
                }
            }
        }
        return out;
    }
    if v.get("id").is_none() {
        out.push("a response without an id".into());
    }
    match (v.get("result"), v.get("error")) {
        (Some(r), None) => {
            if r.get("stopReason").is_some() {
                if let Err(e) = serde_json::from_value::<PromptResponse>(r.clone()) {
                    out.push(format!("no PromptResponse: {e}"));
                }
                if !p.stop_reasons.iter().any(|s| r["stopReason"] == s.as_str()) {
                    out.push(format!("stop reason {}", r["stopReason"]));
                }
            }
        }
        (None, Some(e)) => {
            let known = p.error_codes.values().any(|c| c == &e["code"]);
            if !known || !e["message"].is_string() {
                out.push(format!("error {e}"));
            }
        }
        _ => out.push("a response needs exactly one of result and error".into()),
    }
    out
}

fn fixture(rel: &str) -> String {
    common::fixtures().join(rel).display().to_string()
}

/// A fake agent: `replay FILE [EXIT] [PAUSE]` prints FILE's lines with a pause after each
/// (tests/exec.rs has the same one).
fn replay() -> PathBuf {
    static PATH: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        script(
            "agentgate-acp-replay.sh",
            "#!/bin/sh\nwhile IFS= read -r line; do printf '%s\\n' \"$line\"; sleep \"${3:-0.02}\"; done < \"$1\"\nexit \"${2:-0}\"\n",
        )
    })
    .clone()
}

/// A script in the build's scratch directory, written once per test process under its own name
/// and renamed into place.
fn script(name: &str, text: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join(name);
    let own = dir.join(format!("{name}-{}", std::process::id()));
    std::fs::write(&own, text).unwrap();
    std::fs::set_permissions(&own, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::rename(&own, &path).unwrap();
    path
}

/// What a fixture's answer must be, by hand from the outcome table of acp.json and the
/// fixture's outcome and reason: a stop reason, or an error code.
fn expected_answer(case: &str, outcome: &str) -> &'static str {
    match case {
        // Reasons that are stop reasons: claude's error_max_turns, loom's StepBudget.
        "claude-code/max-turns" | "loom/partial-usage" | "gemini/turn-limit" => "max_turn_requests",
        // gemini.md: "a signal leaves no result and exits 0": a run so ended, served, was
        // interrupted (exec's rule by the exit status), not only incomplete.
        "gemini/signal" | "gemini/truncated" => "-32800",
        _ => match outcome {
            "completed" => "end_turn",
            "timeout" | "interrupted" => "-32800",
            _ => "-32603",
        },
    }
}

/// The calls a run showed: id → (name, last status, why it failed where agentgate says).
fn calls(updates: &[Value]) -> BTreeMap<String, (String, String, String)> {
    let mut out: BTreeMap<String, (String, String, String)> = BTreeMap::new();
    for u in updates.iter().map(|m| &m["params"]["update"]) {
        let id = u["toolCallId"].as_str().unwrap_or_default().to_string();
        match u["sessionUpdate"].as_str() {
            Some("tool_call") => {
                assert!(!out.contains_key(&id), "a second tool_call for {id}");
                let why = u["_meta"]["agentgate"]["status"].as_str().unwrap_or("").to_string();
                out.insert(
                    id,
                    (u["name"].as_str().unwrap_or("").into(), u["status"].as_str().unwrap_or("pending").into(), why),
                );
            }
            Some("tool_call_update") => {
                let entry = out.get_mut(&id).unwrap_or_else(|| panic!("an update of {id} before its tool_call"));
                if let Some(s) = u["status"].as_str() {
                    entry.1 = s.into();
                }
                if let Some(n) = u["name"].as_str() {
                    entry.0 = n.into();
                }
                if let Some(w) = u["_meta"]["agentgate"]["status"].as_str() {
                    entry.2 = w.into();
                }
            }
            _ => {}
        }
    }
    out
}

/// The text of the run's last message, from its chunks.
fn last_message(updates: &[Value]) -> String {
    let chunks: Vec<&Value> = updates
        .iter()
        .map(|m| &m["params"]["update"])
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .collect();
    let Some(last) = chunks.last().map(|u| u["messageId"].clone()) else { return String::new() };
    chunks.iter().filter(|u| u["messageId"] == last).map(|u| u["content"]["text"].as_str().unwrap()).collect()
}

#[test]
fn every_fixture_served_over_acp_keeps_its_facts() {
    let mut checked = 0;
    for case in common::cases() {
        let Ok(text) = std::fs::read_to_string(case.path.with_extension("facts.json")) else { continue };
        let want: Value = serde_json::from_str(&text).unwrap();
        let name = format!("{}/{}", case.dialect, case.name);
        let path = case.path.display().to_string();
        let mut c = Client::start(&["--from", case.dialect.name()], &["sh", "-c", "exec cat \"$0\"", &path]);
        let s = c.session();
        let id = c.prompt(&s, "go");
        let (updates, answer) = c.until_answer(id);
        let outcome = want["outcome"].as_str().unwrap();

        // The answer: a stop reason or an error, as the outcome table says.
        let expected = expected_answer(&name, outcome);
        match expected.parse::<i64>() {
            Ok(code) => assert_eq!(answer["error"]["code"], code, "{name}: {answer}"),
            Err(_) => assert_eq!(answer["result"]["stopReason"], expected, "{name}: {answer}"),
        }

        // Usage per turn: the fixture's totals, or none where it states none (never zeros).
        let usage =
            if answer.get("error").is_some() { &answer["error"]["data"]["usage"] } else { &answer["result"]["usage"] };
        let tokens = &want["tokens"];
        // Zeros the source states (gemini's stats) are known; none stated is unknown.
        let stated = common::values(&common::translate(&case.input, case.dialect, agentgate::Dialect::Canonical))
            .last()
            .is_some_and(|t| t["usage"].is_object());
        if tokens["total"] == 0 && tokens["input"] == 0 && !stated {
            assert!(usage.is_null() || usage.as_object().is_some_and(|m| m.is_empty()), "{name}: usage {usage}");
        } else {
            assert_eq!(
                (&usage["inputTokens"], &usage["outputTokens"]),
                (&tokens["input"], &tokens["output"]),
                "{name}"
            );
            assert_eq!(usage["totalTokens"], tokens["total"], "{name}");
        }

        // The text: the last message is the final text, for a run that completed.
        if outcome == "completed" && want["final_text"].is_string() {
            assert_eq!(last_message(&updates), want["final_text"].as_str().unwrap(), "{name}: final text");
        }

        // Tool calls: every one final; those with results as the facts list them, refused and
        // withdrawn ones failed and saying so.
        let shown = calls(&updates);
        let mut results = Vec::new();
        let mut denied = Vec::new();
        let mut withdrawn = Vec::new();
        for (id, (tool, status, why)) in &shown {
            assert!(status == "completed" || status == "failed", "{name}: call {id} left {status}");
            match why.as_str() {
                "permission_denied" => denied.push(tool.clone()),
                "withdrawn" => withdrawn.push(tool.clone()),
                "no result" => {}
                _ => results.push((tool.clone(), status.clone())),
            }
        }
        let mut want_results: Vec<(String, String)> = want["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                let s = p[1].as_str().unwrap();
                // v1 has no cancelled tool status: failed, _meta saying cancelled.
                (p[0].as_str().unwrap().to_string(), if s == "cancelled" { "failed" } else { s }.to_string())
            })
            .collect();
        // A refused call already answered as failed keeps that answer (wuu).
        let mut want_denied: Vec<String> = want
            .get("denied")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        for d in denied.iter().filter(|d| !want_denied.contains(d)).cloned().collect::<Vec<_>>() {
            want_denied.push(d);
        }
        results.sort();
        want_results.sort();
        denied.sort();
        want_denied.sort();
        assert_eq!(results, want_results, "{name}: calls and their statuses");
        assert_eq!(denied, want_denied, "{name}: refused calls");
        let want_withdrawn: Vec<String> = want
            .get("withdrawn")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        assert_eq!(withdrawn, want_withdrawn, "{name}: withdrawn calls");

        // Nothing after the answer; stdin closed, agentgate exits 0.
        assert!(c.next_within(Duration::from_millis(50)).is_none(), "{name}: a message after the answer");
        assert_eq!(c.close().code(), Some(0), "{name}");
        checked += 1;
    }
    assert!(checked >= 50, "{checked}");
}

#[test]
fn the_handshake_claims_only_what_is_true_and_answers_version_1() {
    let mut c = Client::start(&["--from", "codex"], &["codex", "exec", "--json", "{prompt}"]);
    // A request before initialize is refused, and serving goes on.
    let early = c.call("session/new", json!({"cwd": "/", "mcpServers": []}));
    assert_eq!(early["error"]["code"], -32600, "{early}");
    let init = c.call("initialize", json!({"protocolVersion": 1, "clientInfo": {"name": "t", "version": "1"}}));
    assert_eq!(
        init["result"],
        json!({
            "protocolVersion": 1,
            "agentCapabilities": {
                "loadSession": false,
                "promptCapabilities": {"image": false, "audio": false, "embeddedContext": false},
                "mcpCapabilities": {"http": false, "sse": false},
                "sessionCapabilities": {},
                "auth": {}
            },
            "authMethods": [],
            "agentInfo": {"name": "agentgate", "title": "codex via agentgate", "version": env!("CARGO_PKG_VERSION")},
            "_meta": {"agentgate": {"source": "codex", "history": "resume"}}
        })
    );
    // initialization.mdx: the asked version when supported, else the latest supported: 1.
    for asked in [0, 2, 7] {
        let r = c.call("initialize", json!({"protocolVersion": asked}));
        assert_eq!(r["result"]["protocolVersion"], 1, "asked {asked}: {r}");
    }
    for bad in [json!({}), json!({"protocolVersion": "1"}), json!({"protocolVersion": -1})] {
        let r = c.call("initialize", bad.clone());
        assert_eq!(r["error"]["code"], -32602, "{bad}: {r}");
    }
    // MCP servers cannot reach a CLI: named as ignored, not refused.
    let r = c.call(
        "session/new",
        json!({"cwd": "/tmp", "mcpServers": [{"name": "files", "command": "/bin/mcp", "args": [], "env": []}]}),
    );
    assert_eq!(r["result"]["_meta"], json!({"agentgate": {"ignoredMcpServers": ["files"]}}), "{r}");
    let sid = r["result"]["sessionId"].as_str().unwrap();
    assert_eq!(sid.len(), 36);
    assert_eq!(&sid[14..15], "4", "a version 4 UUID: {sid}");
    assert_eq!(c.close().code(), Some(0));
}

#[test]
fn bad_messages_get_the_protocols_error_codes_and_serving_goes_on() {
    let mut c = Client::start(&[], &["sh", "-c", "exec cat \"$0\"", &fixture("adal/success.jsonl")]);
    let s = c.session();
    let cases: Vec<(&str, i64, Value)> = vec![
        ("this is not JSON", -32700, Value::Null),
        ("[{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"initialize\"}]", -32600, Value::Null),
        ("\"a string\"", -32600, Value::Null),
        ("{\"jsonrpc\":\"1.0\",\"id\":5,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}", -32600, json!(5)),
        ("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":7}", -32600, json!(6)),
        ("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"session/load\",\"params\":{}}", -32601, json!(7)),
        ("{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"authenticate\",\"params\":{\"methodId\":\"x\"}}", -32601, json!(8)),
        ("{\"jsonrpc\":\"2.0\",\"id\":\"n\",\"method\":\"session/new\",\"params\":{\"mcpServers\":[]}}", -32602, json!("n")),
        ("{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"session/new\",\"params\":{\"cwd\":\"rel/dir\",\"mcpServers\":[]}}", -32602, json!(10)),
    ];
    for (line, code, id) in cases {
        c.raw(line);
        let r = c.next();
        assert_eq!((&r["error"]["code"], &r["id"]), (&json!(code), &id), "{line}: {r}");
    }
    let missing = c.call("session/new", json!({"mcpServers": []}));
    assert!(missing["error"]["message"].as_str().unwrap().contains("cwd"), "names the member: {missing}");
    let image = c.call(
        "session/prompt",
        json!({"sessionId": s, "prompt": [{"type": "image", "data": "AA==", "mimeType": "image/png"}]}),
    );
    assert_eq!(image["error"]["code"], -32602, "{image}");
    let empty = c.call("session/prompt", json!({"sessionId": s, "prompt": []}));
    assert_eq!(empty["error"]["code"], -32602, "{empty}");
    let nobody = c.call("session/prompt", json!({"sessionId": "no-such", "prompt": [{"type": "text", "text": "x"}]}));
    assert_eq!(nobody["error"]["code"], -32602, "{nobody}");
    // Unknown notifications are ignored; a line too long is a parse error.
    c.notify("_zed.dev/anything", json!({}));
    // After all that, the session still serves a prompt, a resource link as its path.
    let id = c.request(
        "session/prompt",
        json!({"sessionId": s, "prompt": [{"type": "text", "text": "look at "}, {"type": "resource_link", "uri": "file:///tmp/a%20b.rs", "name": "a b.rs"}]}),
    );
    let (_, a) = c.until_answer(id);
    assert_eq!(a["result"]["stopReason"], "end_turn", "{a}");
    assert_eq!(c.close().code(), Some(0));

    let mut c = Client::start(&["--max-line-bytes", "200"], &["true"]);
    c.raw(&format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":\"{}\"}}", "a".repeat(300)));
    let r = c.next();
    assert_eq!((&r["error"]["code"], &r["id"]), (&json!(-32700), &Value::Null), "{r}");
    assert_eq!(c.close().code(), Some(0));
}

/// The slow replay of a fixture with a few calls: a cancel after each of its lines in turn gives
/// exactly one `cancelled` answer, every call final before it, nothing after it; with the agent
/// deaf to SIGINT too (SIGTERM after the grace period).
#[test]
fn a_cancel_between_any_two_lines_gives_one_cancelled_and_nothing_after_it() {
    let file = fixture("adal/success.jsonl");
    let lines = std::fs::read_to_string(&file).unwrap().lines().count();
    let r = replay();
    for deaf in [false, true] {
        let shell = format!("{} exec {} \"$0\" 0 0.15", if deaf { "trap '' INT;" } else { "" }, r.display());
        let mut c = Client::start(&["--cancel-grace", "200ms", "--kill-after", "1s"], &["sh", "-c", &shell, &file]);
        let s = c.session();
        for k in 0..lines {
            let id = c.prompt(&s, "go");
            // Cancel after line k (about k pauses in).
            std::thread::sleep(Duration::from_millis(150 * k as u64 + 60));
            c.notify("session/cancel", json!({"sessionId": s}));
            c.notify("session/cancel", json!({"sessionId": s})); // a repeat does nothing
            let (updates, answer) = c.until_answer(id);
            assert_eq!(answer["result"]["stopReason"], "cancelled", "deaf {deaf}, after line {k}: {answer}");
            for (call, (_, status, _)) in calls(&updates) {
                assert!(status == "completed" || status == "failed", "after line {k}: {call} left {status}");
            }
            assert!(
                c.next_within(Duration::from_millis(300)).is_none(),
                "deaf {deaf}, after line {k}: a message after the answer"
            );
        }
        assert_eq!(c.close().code(), Some(0));
    }
}

#[test]
fn queued_prompts_run_in_order_and_a_cancel_takes_them_with_it() {
    let r = replay();
    let file = fixture("adal/success.jsonl");
    let mut c = Client::start(&[], &[r.to_str().unwrap(), &file, "0", "0.05"]);
    let s = c.session();
    let ids: Vec<i64> = (0..3).map(|_| c.prompt(&s, "go")).collect();
    // Each answer comes after its own run's updates, in order; prompt n's messages are m-n-*.
    for (n, id) in ids.iter().enumerate() {
        let (updates, answer) = c.until_answer(*id);
        assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
        let prefix = format!("m-{}-", n + 1);
        for u in updates.iter().map(|m| &m["params"]["update"]) {
            if let Some(m) = u["messageId"].as_str() {
                assert!(m.starts_with(&prefix), "prompt {}: {u}", n + 1);
            }
        }
    }
    // Three more; a cancel during the first cancels the two queued behind it, never run.
    let ids: Vec<i64> = (0..3).map(|_| c.prompt(&s, "go")).collect();
    std::thread::sleep(Duration::from_millis(80));
    c.notify("session/cancel", json!({"sessionId": s}));
    let mut answers = Vec::new();
    let mut after_first = Vec::new();
    while answers.len() < 3 {
        let m = c.next();
        if m.get("method").is_some() {
            assert!(answers.is_empty(), "an update after the first answer: {m}");
            continue;
        }
        if !answers.is_empty() {
            after_first.push(m.clone());
        }
        answers.push(m);
    }
    let got: Vec<&Value> = answers.iter().map(|a| &a["id"]).collect();
    assert_eq!(got, ids.iter().map(|i| json!(i)).collect::<Vec<_>>().iter().collect::<Vec<_>>(), "answers in order");
    assert!(answers.iter().all(|a| a["result"]["stopReason"] == "cancelled"), "{answers:?}");
    // The session still serves.
    let id = c.prompt(&s, "again");
    assert_eq!(c.until_answer(id).1["result"]["stopReason"], "end_turn");
    assert_eq!(c.close().code(), Some(0));
}

#[test]
fn a_timeout_stops_the_run_answers_32800_and_closes_its_calls() {
    let r = replay();
    let file = fixture("adal/success.jsonl");
    let mut c = Client::start(
        &["--timeout", "300ms", "--kill-after", "500ms"],
        &["sh", "-c", &format!("trap '' TERM; exec {} \"$0\" 0 0.2", r.display()), &file],
    );
    let s = c.session();
    let id = c.prompt(&s, "go");
    let (updates, answer) = c.until_answer(id);
    assert_eq!(answer["error"]["code"], -32800, "{answer}");
    assert_eq!(answer["error"]["message"], "timeout: sh was stopped after 300ms");
    assert_eq!(answer["error"]["data"]["outcome"], "timeout");
    for (call, (_, status, why)) in calls(&updates) {
        assert!(status == "completed" || (status == "failed" && !why.is_empty()), "{call}: {status} {why}");
    }
    // The next prompt runs afresh.
    let id = c.prompt(&s, "go");
    assert_eq!(c.until_answer(id).1["error"]["code"], -32800);
    assert_eq!(c.close().code(), Some(0));
}

/// `--timeout 0` is no limit, as `exec` (and GNU timeout) take it: the run completes.
#[test]
fn a_timeout_of_zero_is_no_limit() {
    let r = replay();
    let file = fixture("adal/success.jsonl");
    let mut c =
        Client::start(&["--timeout", "0"], &["sh", "-c", &format!("exec {} \"$0\" 0 0.01", r.display()), &file]);
    let s = c.session();
    let id = c.prompt(&s, "go");
    let (_, answer) = c.until_answer(id);
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(c.close().code(), Some(0));
}

#[test]
fn an_agent_that_cannot_start_or_dies_is_answered_and_the_session_stays_usable() {
    let mut c = Client::start(&[], &["/nonexistent/agent-cli", "--json"]);
    let s = c.session();
    for _ in 0..2 {
        let id = c.prompt(&s, "go");
        let (updates, a) = c.until_answer(id);
        assert!(updates.is_empty());
        assert_eq!(a["error"]["code"], -32603, "{a}");
        let m = a["error"]["message"].as_str().unwrap();
        assert!(m.starts_with("agent-cli failed: cannot start /nonexistent/agent-cli"), "{m}");
        assert_eq!(a["error"]["data"]["outcome"], "failed");
    }
    assert!(c.new_session().len() == 36);
    assert_eq!(c.close().code(), Some(0));

    // Killed mid-run by a signal nobody sent from ACP: interrupted, -32800; the call it left open
    // is failed, `no result`.
    let file = fixture("adal/success.jsonl");
    let mut c = Client::start(&[], &["sh", "-c", "head -1 \"$0\"; kill -TERM $$", &file]);
    let s = c.session();
    let id = c.prompt(&s, "go");
    let (updates, a) = c.until_answer(id);
    assert_eq!(a["error"]["code"], -32800, "{a}");
    assert_eq!(a["error"]["message"], "sh ended by signal 15");
    let shown = calls(&updates);
    assert_eq!(shown.len(), 1);
    assert!(shown.values().all(|(_, s, why)| s == "failed" && why == "no result"), "{shown:?}");
    let id = c.prompt(&s, "go");
    assert_eq!(c.until_answer(id).1["error"]["code"], -32800, "the session stays usable");
    assert_eq!(c.close().code(), Some(0));
}

/// codex names how to resume (codex.md: `codex exec --json resume <THREAD_ID> PROMPT`) and its
/// usage is the thread's running total: the second prompt resumes the thread the first stated,
/// its arguments before the `{prompt}` one, and its usage is the difference.
#[test]
fn a_session_resumes_where_the_contract_says_and_declares_its_usage_per_turn() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("acp-resume-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("args.log");
    let first = fixture("codex/success.jsonl");
    let second = dir.join("second.jsonl");
    std::fs::write(
        &second,
        "{\"type\":\"thread.started\",\"thread_id\":\"019b7c1e-5a20-7d31-9e42-6f0a1b2c3d4e\"}\n{\"type\":\"turn.started\"}\n\
         {\"type\":\"item.completed\",\"item\":{\"id\":\"item_0\",\"type\":\"agent_message\",\"text\":\"Done again.\"}}\n\
         {\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":50000,\"cached_input_tokens\":42000,\"output_tokens\":1000}}\n",
    )
    .unwrap();
    // The fake codex logs its arguments, then prints the first stream, later the second.
    let agent = script(
        "agentgate-acp-fake-codex.sh",
        "#!/bin/sh\nprintf '%s\\n' \"$*\" >> \"$LOG\"\nif [ -e \"$DONE\" ]; then cat \"$SECOND\"; else touch \"$DONE\"; cat \"$FIRST\"; fi\n",
    );
    let mut c = Client::start(
        &["--from", "codex"],
        &[
            "env",
            &format!("LOG={}", log.display()),
            &format!("DONE={}", dir.join("done").display()),
            &format!("FIRST={first}"),
            &format!("SECOND={}", second.display()),
            agent.to_str().unwrap(),
            "exec",
            "--json",
            "{prompt}",
        ],
    );
    let s = c.session();
    let id = c.prompt(&s, "fix it");
    let a1 = c.until_answer(id).1;
    assert_eq!(
        (&a1["result"]["usage"]["inputTokens"], &a1["result"]["usage"]["outputTokens"]),
        (&json!(48210), &json!(912))
    );
    let id = c.prompt(&s, "and the docs");
    let (updates, a2) = c.until_answer(id);
    let args = std::fs::read_to_string(&log).unwrap();
    assert_eq!(args, "exec --json fix it\nexec --json resume 019b7c1e-5a20-7d31-9e42-6f0a1b2c3d4e and the docs\n");
    // 50000 - 48210 input, 1000 - 912 output; cache read 42000 - 41984.
    let u = &a2["result"]["usage"];
    assert_eq!(
        (&u["inputTokens"], &u["outputTokens"], &u["cachedReadTokens"]),
        (&json!(1790), &json!(88), &json!(16)),
        "{a2}"
    );
    assert_eq!(a2["result"]["_meta"]["agentgate"]["usage"]["session"]["inputTokens"], 50000);
    // item_0 again in a new process: an id of its own in the session.
    assert_eq!(last_message(&updates), "Done again.");
    assert_eq!(c.close().code(), Some(0));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn permission_allow_goes_through_the_contracts_approval_flags_only() {
    let out = Command::new(env!("CARGO_BIN_EXE_agentgate"))
        .args(["acp", "--permission", "allow", "--", "cat"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("adal"), "{}", String::from_utf8_lossy(&out.stderr));
    // With adal, every run gets --yolo; a refusal otherwise names the way out.
    let log = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("acp-yolo-{}.log", std::process::id()));
    let agent = script("agentgate-acp-fake-adal.sh", "#!/bin/sh\nprintf '%s\\n' \"$*\" > \"$LOG\"\ncat \"$FILE\"\n");
    let file = fixture("adal/permission-denied.jsonl");
    for allow in [true, false] {
        let mut args = vec!["--from", "adal"];
        if allow {
            args.extend(["--permission", "allow"]);
        }
        let mut c = Client::start(
            &args,
            &["env", &format!("LOG={}", log.display()), &format!("FILE={file}"), agent.to_str().unwrap()],
        );
        let s = c.session();
        let id = c.prompt(&s, "lint");
        let a = c.until_answer(id).1;
        let logged = std::fs::read_to_string(&log).unwrap();
        assert_eq!(logged.trim(), if allow { "--yolo -q lint" } else { "-q lint" });
        assert_eq!(a["error"]["code"], -32603, "{a}");
        let m = a["error"]["message"].as_str().unwrap();
        assert!(m.starts_with("permission denied: bash: "), "{m}");
        assert!(m.contains("--permission allow"), "{m}");
        assert_eq!(c.close().code(), Some(0));
    }
    let _ = std::fs::remove_file(&log);
}

#[test]
fn a_signal_answers_every_open_prompt_and_exits_128_plus_it() {
    let r = replay();
    let file = fixture("adal/success.jsonl");
    let mut c = Client::start(&["--kill-after", "500ms"], &[r.to_str().unwrap(), &file, "0", "0.5"]);
    let s = c.session();
    let ids: Vec<i64> = (0..2).map(|_| c.prompt(&s, "go")).collect();
    std::thread::sleep(Duration::from_millis(200));
    // SAFETY: a signal to the child we spawned.
    unsafe {
        libc::kill(c.child.id() as libc::pid_t, libc::SIGTERM);
    }
    let mut answered = Vec::new();
    while answered.len() < 2 {
        let m = c.next();
        if m.get("method").is_none() {
            assert_eq!(m["error"]["code"], -32800, "{m}");
            answered.push(m["id"].as_i64().unwrap());
        }
    }
    assert_eq!(answered, ids);
    let start = Instant::now();
    let status = loop {
        if let Some(s) = c.child.try_wait().unwrap() {
            break s;
        }
        assert!(start.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(128 + 15));
}

/// prompt-turn.mdx, Session Usage Updates: with the window known, each round's usage sends the
/// gauge, `used` that request's input and output (localcode's turn_tokens are per round).
#[test]
fn with_a_context_window_each_round_sends_the_gauge() {
    let file = fixture("localcode/success.jsonl");
    let mut c = Client::start(&["--context-window", "200000"], &["sh", "-c", "exec cat \"$0\"", &file]);
    let s = c.session();
    let id = c.prompt(&s, "go");
    let (updates, _) = c.until_answer(id);
    let gauges: Vec<&Value> =
        updates.iter().map(|m| &m["params"]["update"]).filter(|u| u["sessionUpdate"] == "usage_update").collect();
    let rounds: Vec<(u64, u64)> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "turn_tokens")
        .map(|v| {
            let n = |k: &str| v[k].as_str().unwrap().parse::<u64>().unwrap();
            (n("prompt_tokens"), n("completion_tokens"))
        })
        .collect();
    assert!(!rounds.is_empty());
    // One gauge per round, and the last one again before the answer.
    assert_eq!(gauges.len(), rounds.len() + 1, "{gauges:?}");
    for (g, (i, o)) in gauges.iter().zip(&rounds) {
        assert_eq!((g["used"].as_u64(), g["size"].as_u64()), (Some(i + o), Some(200000)), "{g}");
    }
    assert_eq!(c.close().code(), Some(0));
}

/// acp.md, part A: the gauge goes out "only when the window is known (`--context-window`,
/// Claude's `modelUsage.*.contextWindow`)". Claude states its window in the result, at the end:
/// the last gauge, before the answer, has it (the spec's example: 200000 for claude-sonnet-4-6);
/// without one stated, none.
#[test]
fn claudes_context_window_from_its_result_sizes_the_last_gauge() {
    let gauges = |rel: &str| -> Vec<Value> {
        let file = fixture(rel);
        let mut c = Client::start(&[], &["sh", "-c", "exec cat \"$0\"", &file]);
        let s = c.session();
        let id = c.prompt(&s, "go");
        let (updates, _) = c.until_answer(id);
        assert_eq!(c.close().code(), Some(0));
        updates.iter().map(|m| m["params"]["update"].clone()).filter(|u| u["sessionUpdate"] == "usage_update").collect()
    };
    let g = gauges("claude-code/success.jsonl");
    assert_eq!(g.len(), 1, "{g:?}");
    assert_eq!(g[0]["size"], 200000, "{g:?}");
    assert!(g[0]["used"].as_u64().is_some_and(|u| u > 0), "{g:?}");
    assert!(gauges("localcode/success.jsonl").is_empty(), "no window stated, no gauge");
}

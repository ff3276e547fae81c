//! `--from acp`: agentgate as an ACP client (`exec --as D --from acp -- AGENT`) and as a reader of
//! recorded transcripts. The loop: `agentgate acp` serving a replayed fixture, read back by
//! `exec --from acp`, gives what `exec` gives for the fixture itself; scripted `sh` agents answer
//! by our request ids (0 initialize, 1 session/new, 2 session/prompt) for each permission policy,
//! a crash, a hang, an ignored cancel, stdout noise, and an `end_turn` after a cancel.
#![cfg(unix)]

mod common;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use agentgate::{summarize, Dialect, RunSummary};
use serde_json::Value;

fn agentgate() -> &'static str {
    env!("CARGO_BIN_EXE_agentgate")
}

fn exec(args: &[&str], agent: &[&str]) -> Output {
    Command::new(agentgate()).arg("exec").args(args).arg("--").args(agent).stdin(Stdio::null()).output().unwrap()
}

/// What a run's output says, read back by its dialect, with what ACP cannot carry left out:
/// session and run ids, models, turn and round counts, the usage basis and the problems list
/// (ACP has no session id of the source, no model, no turn or round structure inside a prompt).
type Facts = (Option<String>, String, Vec<(String, u64, u64)>, Option<u64>, Option<u64>);

fn facts(out: &[u8], target: Dialect) -> Facts {
    let s: RunSummary = summarize(out, "run", Some(target), true);
    let tools = s.tool_calls.by_name.iter().map(|(k, t)| (k.clone(), t.calls, t.failed)).collect();
    (s.outcome.map(|o| o.name().to_string()), s.final_text, tools, s.tokens.input, s.tokens.output)
}

#[test]
fn the_loop_through_acp_gives_what_exec_gives_for_every_fixture_and_target() {
    let mut checked = 0;
    let mut mismatches = Vec::new();
    for case in common::cases() {
        let path = case.path.display().to_string();
        let replay = ["sh", "-c", "exec cat \"$0\"", path.as_str()];
        let from = case.dialect.name();
        for target in Dialect::all() {
            let direct = exec(&["--as", target.name(), "--from", from], &replay);
            let mut served = vec![agentgate(), "acp", "--from", from, "--"];
            served.extend(replay);
            let looped = exec(&["--as", target.name(), "--from", "acp", "--prompt", "go"], &served);
            let name = format!("{}/{} as {target}", case.dialect, case.name);
            if direct.status.code() != looped.status.code() {
                mismatches.push(format!(
                    "{name}: exit {:?} direct, {:?} through ACP",
                    direct.status.code(),
                    looped.status.code()
                ));
            }
            let (mut a, mut b) = (facts(&direct.stdout, target), facts(&looped.stdout, target));
            // ACP has no final answer apart from the messages streamed: a run that did not
            // complete has, through it, the text it streamed as its final text.
            if a.0.as_deref() != Some("completed") {
                (a.1, b.1) = (String::new(), String::new());
            }
            // A stream to its own dialect is copied line for line; through ACP it is written
            // from the run, and reads back in the words of that dialect's outcome table (a codex
            // stream cut before its turn line, a localcode result of status error): the exit
            // status, compared above, says the same.
            if target == case.dialect {
                (a.0, b.0) = (None, None);
                // Likewise a shell call: copied under the name the source gave it (gemini's old
                // docs sample calls `Bash`), written from ACP under the dialect's own shell tool
                // (docs/mapping.md, "Shell calls").
                if let Some(shell) = &target.contract().shell_tool {
                    for t in a.2.iter_mut() {
                        if ["bash", "command_execution", "run_shell_command"].contains(&t.0.to_lowercase().as_str()) {
                            t.0 = shell.name.clone();
                        }
                    }
                    a.2.sort();
                }
            }
            if a != b {
                mismatches.push(format!("{name}: direct {a:?} looped {b:?}"));
            }
            checked += 1;
        }
    }
    assert!(mismatches.is_empty(), "{} of {checked}:\n{}", mismatches.len(), mismatches.join("\n"));
    assert!(checked >= 400, "{checked}");
}

/// A scripted ACP agent: answers initialize and session/new, then runs BODY (sh) after the
/// prompt, with `say` printing a line, `upd` an update, and `answer` reading our lines up to one
/// holding the given text (into `$REPLY`).
fn agent(name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join(format!("acp-agent-{name}.sh"));
    let own = dir.join(format!("acp-agent-{name}-{}.sh", std::process::id()));
    let text = format!(
        "#!/bin/sh\nsay() {{ printf '%s\\n' \"$1\"; }}\n\
         answer() {{ while IFS= read -r l; do case \"$l\" in *\"$1\"*) REPLY=\"$l\"; return 0;; esac; done; return 1; }}\n\
         upd() {{ say '{{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{{\"sessionId\":\"s1\",\"update\":'\"$1\"'}}}}'; }}\n\
         read -r l; say '{{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{{\"protocolVersion\":1,\"agentInfo\":{{\"name\":\"fake\",\"version\":\"9.1\"}}}}}}'\n\
         read -r l; say '{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"sessionId\":\"s1\"}}}}'\n\
         read -r l\n{body}\n"
    );
    std::fs::write(&own, text).unwrap();
    std::fs::set_permissions(&own, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::rename(&own, &path).unwrap();
    path
}

/// The permission request every policy test's agent makes, with codex-acp's two reject_once
/// options (its `cancel` ends the turn: acpx#535).
const ASK: &str = r#"upd '{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Bash: rm -rf build","name":"Bash","kind":"execute","status":"pending","rawInput":{"command":"rm -rf build"}}'
say '{"jsonrpc":"2.0","id":"p1","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"c1","title":"Bash: rm -rf build"},"options":[{"optionId":"cancel","name":"Cancel","kind":"reject_once"},{"optionId":"no","name":"No","kind":"reject_once"},{"optionId":"yes","name":"Yes","kind":"allow_once"},{"optionId":"always","name":"Always","kind":"allow_always"}]}}'
answer '"id":"p1"'
printf '%s\n' "$REPLY" >&2
case "$REPLY" in
  *'"optionId":"yes"'*) upd '{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"removed"}}]}' ;;
  *'"outcome":"cancelled"'*) say '{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}'; exit 0 ;;
  *) upd '{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"failed","content":[{"type":"content","content":{"type":"text","text":"the user refused"}}]}' ;;
esac
upd '{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Done."},"messageId":"a"}'
say '{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn","usage":{"totalTokens":30,"inputTokens":20,"outputTokens":10}}}'"#;

fn canonical(out: &Output) -> Vec<Value> {
    common::values(std::str::from_utf8(&out.stdout).unwrap())
}

fn terminal(lines: &[Value]) -> &Value {
    let t = lines.last().unwrap();
    assert_eq!(t["type"], "terminal", "{lines:?}");
    t
}

#[test]
fn permission_deny_refuses_with_a_reject_once_that_does_not_end_the_turn() {
    let a = agent("deny", ASK);
    let out = exec(&["--as", "canonical", "--from", "acp", "--prompt", "clean up"], &[a.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("\"optionId\":\"no\""), "the reject_once that is not codex-acp's cancel: {stderr}");
    let lines = canonical(&out);
    let denied: Vec<&Value> = lines.iter().filter(|l| l["type"] == "permission_denied").collect();
    assert_eq!(denied.len(), 1, "{lines:?}");
    assert_eq!(denied[0]["name"], "Bash");
    assert_eq!(denied[0]["reason"], "permission denied by agentgate (--permission deny)");
    let t = terminal(&lines);
    assert_eq!(
        (t["outcome"].as_str(), t["final_text"].as_str()),
        (Some("completed"), Some("Done.")),
        "the turn goes on"
    );
    assert_eq!((t["usage"]["input"].as_u64(), t["usage"]["output"].as_u64()), (Some(20), Some(10)));
    assert_eq!(out.status.code(), Some(0));
    assert!(lines.iter().any(|l| l["type"] == "prompt" && l["text"] == "clean up"));
}

#[test]
fn permission_allow_picks_allow_once_and_says_so() {
    let a = agent("allow", ASK);
    let out =
        exec(&["--as", "canonical", "--from", "acp", "--prompt", "x", "--permission", "allow"], &[a.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("\"optionId\":\"yes\"") && stderr.contains("agentgate: allowed Bash: rm -rf build"),
        "{stderr}"
    );
    let lines = canonical(&out);
    assert!(!lines.iter().any(|l| l["type"] == "permission_denied"));
    let result = lines.iter().find(|l| l["type"] == "tool_result").unwrap();
    assert_eq!((result["status"].as_str(), result["output"].as_str()), (Some("completed"), Some("removed")));
    assert_eq!(terminal(&lines)["outcome"], "completed");
}

#[test]
fn permission_ask_never_stops_as_a_headless_agent_does() {
    let a = agent("ask-never", ASK);
    for (target, code) in [("canonical", Some(1)), ("adal", Some(2))] {
        let out = exec(
            &["--as", target, "--from", "acp", "--prompt", "x", "--permission", "ask-never"],
            &[a.to_str().unwrap()],
        );
        assert_eq!(out.status.code(), code, "{target}: {}", String::from_utf8_lossy(&out.stderr));
        if target == "canonical" {
            let lines = canonical(&out);
            assert!(
                lines.iter().any(|l| l["type"] == "approval" && l["actions"][0] == "Bash: rm -rf build"),
                "{lines:?}"
            );
            assert_eq!(terminal(&lines)["outcome"], "permission_denied");
        }
    }
}

#[test]
fn a_crash_before_the_answer_is_decided_by_the_agents_exit() {
    let a = agent(
        "crash",
        "upd '{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\",\"text\":\"Work\"}}'\nexit 3",
    );
    let out = exec(&["--as", "localcode", "--from", "acp", "--prompt", "x"], &[a.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let t: Value = serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    assert!(t["reason"].as_str().unwrap().contains("exited with status 3"), "{t}");
}

#[test]
fn a_hung_agent_is_cancelled_at_the_timeout_then_stopped() {
    // It ignores session/cancel and SIGTERM's default is its end.
    let a = agent("hang", "while true; do sleep 0.05; done");
    let out = exec(
        &["--as", "localcode", "--from", "acp", "--prompt", "x", "--timeout", "300ms", "--kill-after", "300ms"],
        &[a.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(124), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn an_end_turn_after_our_cancel_is_still_the_interrupt_it_was() {
    // copilot-cli#4561: end_turn answered to a cancel.
    let a = agent(
        "end-turn-after-cancel",
        "upd '{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\",\"text\":\"Working\"}}'\n\
         answer 'session/cancel' ; say '{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"stopReason\":\"end_turn\"}}'",
    );
    let out = signalled(&["--as", "localcode"], &a, libc::SIGINT);
    let t: Value = serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(
        (t["status"].as_str(), t["reason"].as_str()),
        (Some("incomplete"), Some("cancelled by agentgate (signal)")),
        "{t}"
    );
    assert_eq!(out.status.code(), Some(130));
}

/// `exec --from acp --prompt x ARGS -- AGENT`, sent `signal` after 400 ms, to its end.
fn signalled(args: &[&str], agent: &std::path::Path, signal: libc::c_int) -> Output {
    let child = Command::new(agentgate())
        .args(["exec", "--from", "acp", "--prompt", "x"])
        .args(args)
        .arg("--")
        .arg(agent)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(400));
    // SAFETY: a signal to the child we spawned.
    unsafe {
        libc::kill(child.id() as libc::pid_t, signal);
    }
    child.wait_with_output().unwrap()
}

#[test]
fn an_agent_that_ignores_the_cancel_is_stopped_after_kill_after() {
    let a = agent("deaf", "trap '' INT TERM; while true; do sleep 0.05; done");
    let out = signalled(&["--as", "canonical", "--kill-after", "300ms"], &a, libc::SIGTERM);
    let lines = canonical(&out);
    assert_eq!(terminal(&lines)["outcome"], "interrupted", "{lines:?}");
}

#[test]
fn stdout_noise_is_a_bad_line_and_the_run_goes_on() {
    let a = agent(
        "noise",
        "say 'Loaded cached credentials.'\n\
         upd '{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\",\"text\":\"Hi\"}}'\n\
         say '{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"stopReason\":\"end_turn\"}}'",
    );
    let out = exec(&["--as", "canonical", "--from", "acp", "--prompt", "x"], &[a.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("(stdout):") && stderr.contains("not"), "{stderr}");
    let lines = canonical(&out);
    assert_eq!(
        (terminal(&lines)["outcome"].as_str(), terminal(&lines)["final_text"].as_str()),
        (Some("completed"), Some("Hi"))
    );
}

#[test]
fn a_prompt_is_needed() {
    let out = exec(&["--as", "canonical", "--from", "acp"], &["true"]);
    assert_eq!(out.status.code(), Some(2));
}

/// A recorded transcript read as canonical (`agentgate --from acp --to canonical`, on stdin).
fn read_transcript(transcript: &str) -> Output {
    let mut child = Command::new(agentgate())
        .args(["--from", "acp", "--to", "canonical"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(transcript.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn a_recorded_transcript_reads_as_its_run() {
    // Both sides' lines, as acpx --format json records them; two prompts, each a turn.
    let transcript = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}
{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentInfo":{"name":"gemini","version":"0.61.0"}}}
{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/repo","mcpServers":[]}}
{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s-9"}}
{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s-9","prompt":[{"type":"text","text":"list files"}]}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-9","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"ls","kind":"search","status":"in_progress","rawInput":{"path":"."}}}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-9","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"a.rs"}}]}}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-9","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"One file."}}}}
{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn","_meta":{"quota":{"token_count":{"input_tokens":100,"output_tokens":7}}}}}
{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s-9","prompt":[{"type":"text","text":"and tests?"}]}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-9","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"None."}}}}
{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn","usage":{"totalTokens":42678,"inputTokens":3,"outputTokens":22,"cachedReadTokens":42653}}}
"#;
    let lines = canonical(&read_transcript(transcript));
    let t = terminal(&lines);
    assert_eq!((t["outcome"].as_str(), t["final_text"].as_str()), (Some("completed"), Some("None.")));
    // claude-agent-acp#390: 3 + 22 + 42653 = 42678, so the cache is inside the total: input 42656.
    assert_eq!((t["usage"]["input"].as_u64(), t["usage"]["output"].as_u64()), (Some(100 + 42656), Some(7 + 22)), "{t}");
    let result = lines.iter().find(|l| l["type"] == "tool_result").unwrap();
    assert_eq!((result["id"].as_str(), result["output"].as_str()), (Some("t1"), Some("a.rs")));
    // The second prompt is a turn of its own, after the first's end.
    assert_eq!(lines.iter().filter(|l| l["type"] == "turn_start").count(), 1);
    assert_eq!(lines.iter().filter(|l| l["type"] == "turn_end" && l["status"] == "completed").count(), 1);
    let session = lines.iter().find(|l| l["type"] == "session" && l.get("id").is_some()).unwrap();
    assert_eq!((session["id"].as_str(), session["cwd"].as_str()), (Some("s-9"), Some("/repo")));
}

/// acp.md, part B: "`cancelled` ..., unasked | interrupted"; a cancel in a recorded transcript
/// that agentgate did not send (no `_meta.agentgate.reason`: an editor's) is the client's, and
/// says so, not agentgate's.
#[test]
fn an_editors_cancel_in_a_transcript_is_the_clients_interrupt() {
    let transcript = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}
{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}
{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/r","mcpServers":[]}}
{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}
{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"go"}]}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Working"}}}}
{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}
{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}
"#;
    let t = terminal(&canonical(&read_transcript(transcript))).clone();
    assert_eq!(
        (t["outcome"].as_str(), t["reason"].as_str()),
        (Some("interrupted"), Some("the client cancelled the turn"))
    );
}

#[test]
fn a_failed_handshake_is_a_failed_run_and_the_agents_requests_are_refused() {
    // Another protocol version: the client closes (initialization.mdx).
    let v2 = agent_raw(
        "v2",
        "read -r l; printf '%s\\n' '{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":2}}'; read -r l",
    );
    let out = exec(
        &["--as", "canonical", "--from", "acp", "--prompt", "x", "--kill-after", "200ms"],
        &[v2.to_str().unwrap()],
    );
    let lines = canonical(&out);
    assert_eq!(terminal(&lines)["outcome"], "failed");
    assert!(terminal(&lines)["error"].as_str().unwrap().contains("ACP version 2"), "{lines:?}");
    // session/new refused for want of a login: failed, saying how to log in.
    let auth = agent_raw(
        "auth",
        "read -r l; printf '%s\\n' '{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":1}}'; \
         read -r l; printf '%s\\n' '{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32000,\"message\":\"Authentication required\"}}'; read -r l",
    );
    let out = exec(
        &["--as", "canonical", "--from", "acp", "--prompt", "x", "--kill-after", "200ms"],
        &[auth.to_str().unwrap()],
    );
    let t = terminal(&canonical(&out)).clone();
    assert_eq!(t["outcome"], "failed");
    assert!(t["error"].as_str().unwrap().contains("log in with the agent's own CLI first"), "{t}");
    // An fs/read_text_file request is not offered: -32601, and the turn goes on.
    let fs = agent(
        "fs",
        "say '{\"jsonrpc\":\"2.0\",\"id\":\"r1\",\"method\":\"fs/read_text_file\",\"params\":{\"sessionId\":\"s1\",\"path\":\"/etc/hosts\"}}'\n\
         answer '\"id\":\"r1\"'; printf '%s\\n' \"$REPLY\" >&2\n\
         say '{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"stopReason\":\"end_turn\"}}'",
    );
    let out = exec(&["--as", "canonical", "--from", "acp", "--prompt", "x"], &[fs.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("-32601"), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(terminal(&canonical(&out))["outcome"], "completed");
}

/// A script as it is, without the scripted handshake of [`agent`].
fn agent_raw(name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join(format!("acp-raw-{name}.sh"));
    let own = dir.join(format!("acp-raw-{name}-{}.sh", std::process::id()));
    std::fs::write(&own, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&own, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::rename(&own, &path).unwrap();
    path
}

/// A call `agentgate acp` announces as a draft (`tool_call`, pending, no `rawInput`) gets its
/// arguments on the update after it; read back, the call has them (acp.md, part B: tool_call
/// `{id, name, arguments: rawInput}`), as the direct translation has.
#[test]
fn a_call_announced_before_its_arguments_keeps_them_through_acp() {
    for fixture in ["base-context/deltas.jsonl", "base-context/success.jsonl", "claude-code/partial-messages.jsonl"] {
        let path = common::fixtures().join(fixture).display().to_string();
        let from = fixture.split('/').next().unwrap();
        let replay = ["sh", "-c", "exec cat \"$0\"", path.as_str()];
        let inputs = |out: &Output| -> Vec<Value> {
            common::values(&String::from_utf8_lossy(&out.stdout))
                .into_iter()
                .filter(|l| l["type"] == "assistant")
                .flat_map(|l| l["message"]["content"].as_array().cloned().unwrap_or_default())
                .filter(|c| c["type"] == "tool_use")
                .map(|c| c["input"].clone())
                .collect()
        };
        let direct = exec(&["--as", "claude-code", "--from", from], &replay);
        let mut served = vec![agentgate(), "acp", "--from", from, "--"];
        served.extend(replay);
        let looped = exec(&["--as", "claude-code", "--from", "acp", "--prompt", "go"], &served);
        let (want, got) = (inputs(&direct), inputs(&looped));
        assert!(
            !want.is_empty() && want.iter().all(|i| i.as_object().is_some_and(|o| !o.is_empty())),
            "{fixture}: {want:?}"
        );
        assert_eq!(got, want, "{fixture}");
    }
}

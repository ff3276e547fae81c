//! `agentgate exec`: a fake agent (a shell script) run under agentgate, which must speak for it
//! as the target agent would: streamed lines, exit statuses, signals, timeouts.
#![cfg(unix)]

mod common;

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A fake agent: `replay FILE [EXIT] [PAUSE]` prints FILE line by line with pauses, says
/// something on stderr, and exits with EXIT. Written once into the build's scratch directory
/// (not the system's temp dir, where one file per test process used to pile up): each process
/// writes its own copy and renames it into place, so no test runs a half-written script.
fn replay() -> PathBuf {
    static PATH: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PATH.get_or_init(write_replay).clone()
}

fn write_replay() -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join("agentgate-replay.sh");
    if !path.exists() {
        let own = dir.join(format!("agentgate-replay-{}.sh", std::process::id()));
        std::fs::write(
            &own,
            "#!/bin/sh\nwhile IFS= read -r line; do printf '%s\\n' \"$line\"; sleep \"${3:-0.02}\"; done < \"$1\"\necho 'hello from the agent' >&2\nexit \"${2:-0}\"\n",
        )
        .unwrap();
        std::fs::set_permissions(&own, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::rename(&own, &path).unwrap();
    }
    path
}

fn fixture(rel: &str) -> String {
    common::fixtures().join(rel).display().to_string()
}

fn exec(args: &[&str], agent: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_agentgate")).arg("exec").args(args).arg("--").args(agent).output().unwrap()
}

fn last(out: &Output) -> Value {
    serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap()
}

#[test]
fn the_exit_status_is_the_target_agents_for_the_outcome() {
    let r = replay();
    let agent = [r.to_str().unwrap(), &fixture("adal/permission-denied.jsonl"), "2"];
    for (target, code) in [("localcode", 1), ("adal", 2), ("wuu", 3), ("loom", 0), ("base-context", 1)] {
        let out = exec(&["--as", target], &agent);
        assert_eq!(out.status.code(), Some(code), "{target}");
    }
    let out = exec(&["--as", "localcode"], &[r.to_str().unwrap(), &fixture("localcode/timeout.jsonl"), "124"]);
    assert_eq!(out.status.code(), Some(124));
    assert!(String::from_utf8_lossy(&out.stderr).contains("hello from the agent"), "the agent's stderr passes through");
}

#[test]
fn output_reaches_the_reader_before_the_agent_exits() {
    let r = replay();
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentgate"))
        .args(["exec", "--as", "localcode", "--", r.to_str().unwrap(), &fixture("adal/success.jsonl"), "0", "0.4"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    assert!(first.contains("\"tool_start\""), "{first}");
    assert!(start.elapsed() < Duration::from_secs(2), "the first line came only after {:?}", start.elapsed());
    assert!(child.try_wait().unwrap().is_none(), "the agent is still running");
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    assert!(rest.last().unwrap().contains("\"status\": \"ok\""));
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn without_a_terminal_record_the_agents_exit_decides() {
    let r = replay();
    let out = exec(&["--as", "localcode"], &[r.to_str().unwrap(), &fixture("adal/truncated.jsonl"), "3"]);
    assert_eq!(out.status.code(), Some(1));
    let result = last(&out);
    assert_eq!(result["status"], "incomplete");
    assert!(result["reason"].as_str().unwrap().ends_with("exited with status 3"), "{result}");
    let out = exec(&["--as", "canonical"], &["sh", "-c", "kill -TERM $$"]);
    let t = last(&out);
    assert_eq!((t["outcome"].as_str(), t["synthesized"].as_bool()), (Some("interrupted"), Some(true)), "{t}");
}

#[test]
fn when_stream_and_exit_status_disagree_the_stream_wins_and_stderr_says_so() {
    let r = replay();
    let out = exec(&["--as", "localcode"], &[r.to_str().unwrap(), &fixture("adal/success.jsonl"), "1"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("the stream says completed"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// adal's older generation exits 0 and 1 only (adal-notes.md): a refused run exiting 1 agrees
/// with its stream (mappings/adal.json's failure_exit); exiting 3, a code adal never gives, does
/// not, nor does a completed run exiting 1.
#[test]
fn an_adal_run_that_did_not_complete_may_exit_1_whatever_its_stream_states() {
    let r = replay();
    let stderr = |file: &str, code: &str| {
        let out = exec(&["--as", "localcode"], &[r.to_str().unwrap(), &fixture(file), code]);
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    assert!(!stderr("adal/permission-denied.jsonl", "1").contains("the stream says"));
    assert!(stderr("adal/permission-denied.jsonl", "3").contains("the stream says permission_denied (exit status 2"));
    assert!(stderr("adal/success.jsonl", "1").contains("the stream says completed"));
}

#[test]
fn a_missing_agent_is_reported_with_a_failed_run_and_127() {
    let out = exec(&["--as", "adal"], &["/no/such/agent"]);
    assert_eq!(out.status.code(), Some(127));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    let lines: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.last().unwrap()["type"], "complete");
    assert_eq!(lines.last().unwrap()["exit_code"], 1);
    assert!(lines[0]["message"].as_str().unwrap().contains("cannot start /no/such/agent"));
}

#[test]
fn a_timeout_stops_the_agent_even_when_it_ignores_sigterm() {
    let start = Instant::now();
    let out = exec(
        &["--as", "localcode", "--timeout", "300ms", "--kill-after", "200ms"],
        &["sh", "-c", "trap '' TERM; sleep 10"],
    );
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(out.status.code(), Some(124));
    assert!(last(&out)["reason"].as_str().unwrap().starts_with("timeout"));
}

#[test]
fn sigint_is_forwarded_and_the_run_ends_interrupted() {
    let mut agentgate = Command::new(env!("CARGO_BIN_EXE_agentgate"));
    // As from a terminal: a test run in the background of a non-interactive shell inherits
    // SIGINT ignored, and so would the agent (whose shell then cannot trap it): restored here.
    // SAFETY: signal(2) between fork and exec, async-signal-safe; nothing else is touched.
    unsafe {
        agentgate.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut child = agentgate
        .args(["exec", "--as", "localcode", "--", "sh", "-c", "trap 'exit 130' INT; echo '{\"type\":\"tool_call\",\"id\":\"a\",\"name\":\"bash\",\"args\":{}}'; while true; do sleep 0.05; done"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert!(lines.next().unwrap().unwrap().contains("tool_start"));
    // SAFETY: a signal to the child we spawned.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
    }
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let result: Value = serde_json::from_str(rest.last().unwrap()).unwrap();
    assert_eq!((result["status"].as_str(), result["exit_code"].as_i64()), (Some("incomplete"), Some(130)));
}

#[test]
fn a_second_sigint_kills_an_agent_that_ignores_the_first() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentgate"))
        .args([
            "exec",
            "--as",
            "localcode",
            "--",
            "sh",
            "-c",
            "trap '' INT; echo '{\"type\":\"stage\",\"stage\":\"x\"}'; while true; do sleep 0.05; done",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert!(lines.next().unwrap().unwrap().contains("stage"));
    for _ in 0..2 {
        // SAFETY: a signal to the child we spawned.
        unsafe {
            libc::kill(child.id() as libc::pid_t, libc::SIGINT);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let result: Value = serde_json::from_str(rest.last().unwrap()).unwrap();
    assert!(result["reason"].as_str().unwrap().ends_with("signal 9"), "{result}");
}

#[test]
fn base_context_exits_with_128_plus_the_signal_that_ended_the_agent() {
    // base-context's notes: SIGINT 130, SIGHUP 129, SIGTERM 143. Other targets have one code
    // for an interrupt (localcode 130, wuu 5).
    // (SIGINT is left out: a test run in the background may inherit it ignored.)
    for (signal, code) in [("TERM", 143), ("HUP", 129)] {
        let script = format!("echo '{{\"type\":\"agent_start\"}}'; kill -{signal} $$");
        let out = exec(&["--as", "base-context"], &["sh", "-c", &script]);
        assert_eq!(out.status.code(), Some(code), "SIG{signal}");
    }
    let out = exec(&["--as", "localcode"], &["sh", "-c", "kill -TERM $$"]);
    assert_eq!(out.status.code(), Some(130));
    let out = exec(&["--as", "wuu"], &["sh", "-c", "kill -TERM $$"]);
    assert_eq!(out.status.code(), Some(5));
}

/// Issue "wire truth", rule 3: the process status and the status the stream's terminal record
/// states are one number, for every target that states one, whatever the source's outcome
/// (an incomplete run without a loom stop reason is a failed loom run: exit_status 1, exit 1).
#[test]
fn exec_exits_with_the_status_its_own_terminal_record_states() {
    let r = replay();
    let cases = [
        ("localcode/failed.jsonl", "1"),
        ("localcode/timeout.jsonl", "124"),
        ("wuu/no-result.jsonl", "0"),
        ("adal/truncated.jsonl", "0"),
        ("loom/failed.jsonl", "1"),
        ("adal/permission-denied.jsonl", "2"),
    ];
    for (file, code) in cases {
        for (target, field) in [("localcode", "exit_code"), ("adal", "exit_code"), ("loom", "exit_status")] {
            let out = exec(&["--as", target], &[r.to_str().unwrap(), &fixture(file), code, "0"]);
            let stated = last(&out)[field].as_i64().unwrap_or_else(|| panic!("{file} as {target}: no {field}"));
            assert_eq!(out.status.code().map(i64::from), Some(stated), "{file} as {target}");
        }
    }
}

/// Standing in for Claude Code behind the Agent SDK's client: `--input-format stream-json`
/// answers the client's initialize `control_request` with its `control_response`, and gives
/// the user message's text to the agent on its stdin.
#[test]
fn exec_as_claude_code_answers_the_sdks_handshake_and_passes_the_prompt_on() {
    use std::io::Write;
    let fixture = fixture("localcode/success.jsonl");
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentgate"))
        .args([
            "exec",
            "--as",
            "claude-code",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            "--",
        ])
        .args(["sh", "-c", r#"read -r p; [ "$p" = "hello there" ] && cat "$0""#, &fixture])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"type":"control_request","request_id":"req_1_ab","request":{{"subtype":"initialize","hooks":null}}}}"#
    )
    .unwrap();
    writeln!(stdin, r#"{{"type":"user","session_id":"","message":{{"role":"user","content":"hello there"}},"parent_tool_use_id":null}}"#).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let lines: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines[0]["type"], "control_response");
    assert_eq!(
        (lines[0]["response"]["subtype"].as_str(), lines[0]["response"]["request_id"].as_str()),
        (Some("success"), Some("req_1_ab"))
    );
    assert_eq!((lines[1]["type"].as_str(), lines[1]["subtype"].as_str()), (Some("system"), Some("init")));
    let result = lines.last().unwrap();
    assert_eq!(
        (result["subtype"].as_str(), result["is_error"].as_bool()),
        (Some("success"), Some(false)),
        "the agent got its prompt"
    );
}

/// With `--from` naming the agent's dialect, the prompt goes where its `mappings/` entry says
/// the agent takes one: localcode after `--goal` (localcode.md: `localcode run --goal "..."
/// --json`), codex as the last argument (codex.md: `codex exec --json [OPTIONS] PROMPT`), gemini
/// after `-p` (gemini.md: "Prompt: `-p PROMPT`: the contract's prompt is this flag"), wuu on
/// stdin (its spec names no flag).
#[test]
fn exec_as_claude_code_gives_the_prompt_the_way_the_agent_takes_one() {
    use std::io::Write;
    let cases = [
        ("localcode", "localcode/success.jsonl", "--goal|fix it|"),
        ("codex", "codex/success.jsonl", "fix it|"),
        ("gemini", "gemini/success.jsonl", "-p|fix it|"),
        ("wuu", "wuu/success.jsonl", "stdin:fix it"),
    ];
    for (from, file, want) in cases {
        let dir = std::env::temp_dir().join(format!("agentgate-prompt-{}-{from}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let seen = dir.join("seen");
        // The fake agent writes down its arguments (or, with none, what came on its stdin),
        // then plays its recorded stream.
        let script = r#"out="$0"; fixture="$1"; shift
            if [ $# -gt 0 ]; then for a in "$@"; do printf '%s|' "$a"; done > "$out"
            else printf 'stdin:%s' "$(cat)" > "$out"; fi
            cat "$fixture""#;
        let mut child = Command::new(env!("CARGO_BIN_EXE_agentgate"))
            .args(["exec", "--as", "claude-code", "--from", from, "--input-format", "stream-json", "--"])
            .args(["sh", "-c", script, seen.to_str().unwrap(), &fixture(file)])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, r#"{{"type":"control_request","request_id":"r1","request":{{"subtype":"initialize"}}}}"#)
            .unwrap();
        writeln!(
            stdin,
            r#"{{"type":"user","message":{{"role":"user","content":"fix it"}},"parent_tool_use_id":null}}"#
        )
        .unwrap();
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{from}");
        assert_eq!(std::fs::read_to_string(&seen).unwrap(), want, "{from}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

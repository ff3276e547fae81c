//! `detect` never guesses (issue 54, part 4): every fixture and every real stream is named as
//! its dialect, a gemini stream as gemini alone, and streams of agents agentgate does not know
//! (written by hand from their public docs) as none.

mod common;

use std::path::Path;

use agentgate::{detect, Dialect};

#[test]
fn every_fixture_is_named_as_its_own_dialect() {
    for case in common::cases() {
        assert_eq!(detect(&case.input[..]), Ok(case.dialect), "{}", case.path.display());
    }
}

#[test]
fn every_real_stream_is_named_as_the_folder_it_sits_in() {
    let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/real");
    let Ok(folders) = std::fs::read_dir(&real) else {
        eprintln!("skipped: {} is absent (the real streams live beside the repository)", real.display());
        return;
    };
    let mut checked = 0;
    for folder in folders.map(|f| f.unwrap().path()).filter(|p| p.is_dir()) {
        let name = folder.file_name().unwrap().to_string_lossy().into_owned();
        let Ok(dialect) = name.parse::<Dialect>() else { continue };
        for file in std::fs::read_dir(&folder).unwrap().map(|f| f.unwrap().path()) {
            if file.extension().is_some_and(|x| x == "jsonl") {
                let input = std::fs::read(&file).unwrap();
                assert_eq!(detect(&input[..]), Ok(dialect), "{}", file.display());
                checked += 1;
            }
        }
    }
    assert!(checked >= 30, "{checked}");
}

/// gemini.md, Records: one line of each kind, as Gemini CLI writes it.
const GEMINI_LINES: [&str; 6] = [
    r#"{"type":"init","timestamp":"2026-11-02T09:14:03.118Z","session_id":"2f6c1a9e-8d4b-4e0f-9a31-7c5e2b9d0f14","model":"auto"}"#,
    r#"{"type":"message","timestamp":"2026-11-02T09:14:14.561Z","role":"assistant","content":"Fixed it.","delta":true}"#,
    r#"{"type":"tool_use","timestamp":"2026-11-02T09:14:05.402Z","tool_name":"run_shell_command","tool_id":"run_shell_command__run_shell_command_1793610845390_0","parameters":{"command":"ls"}}"#,
    r#"{"type":"tool_result","timestamp":"2026-11-02T09:14:09.877Z","tool_id":"run_shell_command__run_shell_command_1793610845390_0","status":"success","output":"a"}"#,
    r#"{"type":"error","timestamp":"2026-11-02T09:14:09.900Z","severity":"warning","message":"Loop detected, stopping execution"}"#,
    r#"{"type":"result","timestamp":"2026-11-02T09:14:14.610Z","status":"error","error":{"type":"unknown","message":"[API Error: x]"},"stats":{"total_tokens":0,"input_tokens":0,"output_tokens":0,"duration_ms":0,"tool_calls":0}}"#,
];

#[test]
fn a_gemini_line_of_any_kind_is_named_gemini_and_no_other_dialect_claims_it() {
    for line in GEMINI_LINES {
        assert_eq!(detect(line.as_bytes()), Ok(Dialect::Gemini), "{line}");
        let m: serde_json::Map<String, serde_json::Value> = serde_json::from_str(line).unwrap();
        for d in Dialect::all().filter(|d| *d != Dialect::Gemini) {
            assert_ne!(d.sniff(&m), agentgate::codec::Sniff::Yes, "{d} claims {line}");
        }
    }
}

#[test]
fn a_gemini_stream_that_opens_with_a_tool_result_is_not_taken_for_adal() {
    // The regression of issue 54: adal's detector took any tool_result with a status.
    let stream = format!("{}\n{}\n", GEMINI_LINES[3], GEMINI_LINES[5]);
    assert_eq!(detect(stream.as_bytes()), Ok(Dialect::Gemini));
}

/// Qwen Code's `--output-format stream-json` (qwenlm.github.io/qwen-code-docs, Headless mode:
/// "system messages (session initialization)" with subtype `session_start`, assistant messages
/// and a result, shaped like Claude Code's).
const QWEN: &str = concat!(
    r#"{"type":"system","subtype":"session_start","uuid":"6a1c0e52-2f4b-4d8e-9b3a-1c7d5e9f0a21","session_id":"9f0b2c4d-1e3a-4b5c-8d7e-6f5a4b3c2d1e","cwd":"/repo","model":"qwen3-coder-plus","tools":["read_file","run_shell_command"]}"#,
    "\n",
    r#"{"type":"assistant","uuid":"0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e","session_id":"9f0b2c4d-1e3a-4b5c-8d7e-6f5a4b3c2d1e","message":{"id":"msg_1","type":"message","role":"assistant","model":"qwen3-coder-plus","content":[{"type":"text","text":"The capital of France is Paris."}],"usage":{"input_tokens":21,"output_tokens":8}},"parent_tool_use_id":null}"#,
    "\n",
    r#"{"type":"result","subtype":"success","uuid":"1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f","session_id":"9f0b2c4d-1e3a-4b5c-8d7e-6f5a4b3c2d1e","is_error":false,"duration_ms":1234,"num_turns":1,"result":"The capital of France is Paris.","usage":{"input_tokens":21,"output_tokens":8}}"#,
    "\n",
);

/// opencode's `run --format json` (opencode's run.ts as its parsers document it: `step_start`,
/// `tool_use`, `text`, `step_finish` and `error` events, each `{type, timestamp (epoch ms),
/// sessionID, part}`).
const OPENCODE: &str = concat!(
    r#"{"type":"step_start","timestamp":1768191337567,"sessionID":"ses_44f9562d4ffe","part":{"id":"prt_1","sessionID":"ses_44f9562d4ffe","messageID":"msg_1","type":"step-start","snapshot":"4b825dc6"}}"#,
    "\n",
    r#"{"type":"tool_use","timestamp":1768191338012,"sessionID":"ses_44f9562d4ffe","part":{"id":"prt_2","sessionID":"ses_44f9562d4ffe","messageID":"msg_1","type":"tool","callID":"call_1","tool":"bash","state":{"status":"completed","input":{"command":"ls"},"output":"README.md\n","title":"ls","metadata":{},"time":{"start":1768191337900,"end":1768191338010}}}}"#,
    "\n",
    r#"{"type":"text","timestamp":1768191338500,"sessionID":"ses_44f9562d4ffe","part":{"id":"prt_3","sessionID":"ses_44f9562d4ffe","messageID":"msg_1","type":"text","text":"One file: README.md.","time":{"start":1768191338400,"end":1768191338500}}}"#,
    "\n",
    r#"{"type":"step_finish","timestamp":1768191338510,"sessionID":"ses_44f9562d4ffe","part":{"id":"prt_4","sessionID":"ses_44f9562d4ffe","messageID":"msg_1","type":"step-finish","reason":"stop","cost":0,"tokens":{"input":10,"output":5,"reasoning":0,"cache":{"read":0,"write":0}}}}"#,
    "\n",
    r#"{"type":"error","timestamp":1768191338600,"sessionID":"ses_44f9562d4ffe","error":{"name":"APIError","data":{"message":"rate limited"}}}"#,
    "\n",
);

#[test]
fn streams_of_agents_agentgate_does_not_know_are_named_as_none() {
    for (agent, stream) in [("Qwen Code", QWEN), ("opencode", OPENCODE)] {
        assert!(detect(stream.as_bytes()).is_err(), "{agent}: named {:?}", detect(stream.as_bytes()));
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_agentgate"))
            .arg("detect")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                c.stdin.take().unwrap().write_all(stream.as_bytes())?;
                c.wait_with_output()
            })
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{agent}");
        assert!(out.stdout.is_empty(), "{agent}: {}", String::from_utf8_lossy(&out.stdout));
        // Nor does translating guess: it refuses with the reason.
        let (_, summary, _) =
            agentgate::translate_bytes(stream.as_bytes(), &agentgate::Options::new(None, Dialect::Canonical));
        assert!(matches!(summary.stopped, Some(agentgate::Stop::Undetected(_))), "{agent}: {:?}", summary.stopped);
    }
}

/// A line of a dialect's kind that its contract does not take rules that dialect out (issue 54:
/// adal's detector took any `tool_result` with a `status`): adal's tool_result status is one of
/// completed / failed / cancelled (or the older generation's success / error), so "done" is not
/// adal's, and nothing else claims these lines: cannot tell.
#[test]
fn a_line_its_contract_does_not_take_rules_a_dialect_out() {
    let stream = concat!(
        r#"{"type":"tool_result","id":"a","status":"done"}"#,
        "\n",
        r#"{"type":"complete","exit_code":0,"session_id":"s","model":"m"}"#,
        "\n",
    );
    assert!(detect(stream.as_bytes()).is_err(), "{:?}", detect(stream.as_bytes()));
    // With a status adal's contract lists, it is adal's.
    let adal =
        stream.replace("\"done\"", "\"completed\"").replace(r#""id":"a","#, r#""id":"a","name":"bash","output":"","#);
    assert_eq!(detect(adal.as_bytes()), Ok(Dialect::Adal), "{adal}");
}

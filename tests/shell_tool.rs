//! Issue 54, part 3: a shell call is named as each target's shell tool is named. The names come
//! from the specs, written here by hand (not read from `mappings/`, which the code reads):
//! claude-code.md's example lists `"tools":["Bash",…]`, codex.md's shell item is
//! `command_execution`, gemini.md's example calls `run_shell_command`, wuu.md says "For bash, the
//! stream additionally emits command_started …", adal.md's example calls `bash`, and
//! base-context-notes.md 6.2 shows `toolName` `bash`. localcode and loom name no shell tool.

mod common;

use agentgate::Dialect;
use common::{translate, values};
use serde_json::Value;

const CODEX: &str = concat!(
    r#"{"type":"thread.started","thread_id":"t-1"}"#,
    "\n",
    r#"{"type":"turn.started"}"#,
    "\n",
    r#"{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"ls -la","aggregated_output":"total 0\n","exit_code":0,"status":"completed"}}"#,
    "\n",
    r#"{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"done"}}"#,
    "\n",
    r#"{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":2}}"#,
    "\n",
);

const CLAUDE: &str = concat!(
    r#"{"type":"system","subtype":"init","session_id":"s-1","model":"claude-sonnet-4-5","tools":["Bash","Glob"],"cwd":"/r","permissionMode":"default","apiKeySource":"none"}"#,
    "\n",
    r#"{"type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls -la"}},{"type":"tool_use","id":"toolu_2","name":"Glob","input":{"pattern":"*.rs"}}],"stop_reason":null,"usage":{"input_tokens":5,"output_tokens":3}},"session_id":"s-1"}"#,
    "\n",
    r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"total 0"},{"type":"tool_result","tool_use_id":"toolu_2","content":"a.rs"}]},"session_id":"s-1"}"#,
    "\n",
    r#"{"type":"assistant","message":{"id":"msg_2","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":1}},"session_id":"s-1"}"#,
    "\n",
    r#"{"type":"result","subtype":"success","is_error":false,"duration_ms":10,"duration_api_ms":9,"num_turns":2,"result":"done","session_id":"s-1","total_cost_usd":0.001,"usage":{"input_tokens":10,"output_tokens":4}}"#,
    "\n",
);

/// Every string member named `key` anywhere in the output.
fn all(out: &str, key: &str) -> Vec<String> {
    fn walk(v: &Value, key: &str, found: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, v) in m {
                    if k == key {
                        if let Value::String(s) = v {
                            found.push(s.clone());
                        }
                    }
                    walk(v, key, found);
                }
            }
            Value::Array(a) => a.iter().for_each(|v| walk(v, key, found)),
            _ => {}
        }
    }
    let mut found = Vec::new();
    for v in values(out) {
        walk(&v, key, &mut found);
    }
    found
}

/// The `tool_use` blocks of Claude's assistant messages.
fn tool_uses(out: &str) -> Vec<Value> {
    values(out)
        .into_iter()
        .filter(|v| v["type"] == "assistant")
        .flat_map(|v| v["message"]["content"].as_array().cloned().unwrap_or_default())
        .filter(|c| c["type"] == "tool_use")
        .collect()
}

#[test]
fn a_codex_command_is_claudes_bash_with_its_command() {
    let out = translate(CODEX.as_bytes(), Dialect::Codex, Dialect::ClaudeCode);
    let uses = tool_uses(&out);
    assert_eq!(uses.len(), 1, "{out}");
    assert_eq!(uses[0]["name"], "Bash", "{out}");
    assert_eq!(uses[0]["input"]["command"], "ls -la", "{out}");
}

#[test]
fn a_codex_command_is_gemini_run_shell_command_and_bash_elsewhere() {
    let out = translate(CODEX.as_bytes(), Dialect::Codex, Dialect::Gemini);
    assert_eq!(all(&out, "tool_name"), ["run_shell_command"], "{out}");
    // gemini.md, Encode: `tool_id` = `<tool_name>__<source id>`.
    assert_eq!(all(&out, "tool_id"), ["run_shell_command__item_0", "run_shell_command__item_0"], "{out}");
    for to in [Dialect::Adal, Dialect::Wuu] {
        let out = translate(CODEX.as_bytes(), Dialect::Codex, to);
        let names = all(&out, "name");
        assert!(!names.is_empty() && names.iter().all(|n| n == "bash"), "{to:?}: {names:?}\n{out}");
    }
    let out = translate(CODEX.as_bytes(), Dialect::Codex, Dialect::BaseContext);
    let names = all(&out, "toolName");
    assert!(!names.is_empty() && names.iter().all(|n| n == "bash"), "{names:?}\n{out}");
}

#[test]
fn claudes_bash_is_a_wuu_bash_call_with_its_command_twins() {
    let out = translate(CLAUDE.as_bytes(), Dialect::ClaudeCode, Dialect::Wuu);
    let lines = values(&out);
    let kinds = |name: &str| -> Vec<String> {
        lines.iter().filter(|l| l["name"] == name).map(|l| l["type"].as_str().unwrap().to_string()).collect()
    };
    // wuu.md: "For bash, the stream additionally emits command_started, command_output_delta,
    // command_completed"; a tool other than the shell gets none.
    let bash = kinds("bash");
    for k in ["tool_started", "command_started", "tool_completed", "command_completed"] {
        assert!(bash.iter().any(|b| b == k), "no {k} for bash: {bash:?}\n{out}");
    }
    assert!(kinds("Glob").iter().all(|k| !k.starts_with("command_")), "{out}");
    assert!(kinds("Bash").is_empty(), "{out}");
}

#[test]
fn claudes_bash_is_a_codex_command_and_other_tools_keep_their_names() {
    let out = translate(CLAUDE.as_bytes(), Dialect::ClaudeCode, Dialect::Codex);
    let items: Vec<Value> =
        values(&out).into_iter().filter(|v| v["type"] == "item.completed").map(|v| v["item"].clone()).collect();
    let command = items.iter().find(|i| i["type"] == "command_execution").expect(&out);
    assert_eq!(command["command"], "ls -la", "{out}");
    let out = translate(CLAUDE.as_bytes(), Dialect::ClaudeCode, Dialect::Gemini);
    assert_eq!(all(&out, "tool_name"), ["run_shell_command", "Glob"], "{out}");
}

#[test]
fn the_same_dialect_canonical_and_a_target_without_a_shell_tool_keep_the_name() {
    let out = translate(CLAUDE.as_bytes(), Dialect::ClaudeCode, Dialect::ClaudeCode);
    assert_eq!(all(&out, "name"), ["Bash", "Glob"], "{out}");
    let out = translate(CODEX.as_bytes(), Dialect::Codex, Dialect::Codex);
    assert_eq!(out, CODEX, "a valid stream to its own dialect is the same stream");
    // Canonical is the model: the source's name, so that a second hop names it as a direct one.
    let canonical = translate(CODEX.as_bytes(), Dialect::Codex, Dialect::Canonical);
    assert!(all(&canonical, "name").iter().any(|n| n == "command_execution"), "{canonical}");
    let direct = translate(CODEX.as_bytes(), Dialect::Codex, Dialect::ClaudeCode);
    assert_eq!(translate(canonical.as_bytes(), Dialect::Canonical, Dialect::ClaudeCode), direct);
    // localcode's and loom's specs name no shell tool: the source's name is all there is.
    let out = translate(CLAUDE.as_bytes(), Dialect::ClaudeCode, Dialect::Localcode);
    assert!(out.contains("\"Bash\""), "{out}");
}

#[test]
fn a_localcode_bash_call_takes_its_text_as_the_command() {
    // localcode.md: `tool_start` `name, args, index`, `args` a string; its `bash` call's args are
    // the command line, which every shell tool above takes as `command`.
    let input = concat!(
        r#"{"type": "tool_start", "name": "bash", "args": "git status --short", "index": "0"}"#,
        "\n",
        r#"{"type": "tool_result", "name": "bash", "args": "git status --short", "index": "0", "result": " M a.py\n", "error": "false"}"#,
        "\n",
        r#"{"type": "tool_start", "name": "read_file", "args": "a.py", "index": "1"}"#,
        "\n",
        r#"{"type": "result", "status": "success", "tokens_in": "3", "tokens_out": "2"}"#,
        "\n",
    );
    let out = translate(input.as_bytes(), Dialect::Localcode, Dialect::ClaudeCode);
    let uses = tool_uses(&out);
    assert_eq!(uses[0]["name"], "Bash", "{out}");
    assert_eq!(uses[0]["input"], serde_json::json!({"command": "git status --short"}), "{out}");
    // Not a shell tool: the name and the text as they were.
    assert_eq!(uses[1]["name"], "read_file", "{out}");
    let out = translate(input.as_bytes(), Dialect::Localcode, Dialect::Wuu);
    let started = values(&out).into_iter().find(|v| v["type"] == "command_started").expect(&out);
    assert_eq!(started["command"], "git status --short", "{out}");
}

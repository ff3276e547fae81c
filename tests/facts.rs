//! Facts: for every fixture and every target dialect, the translated stream still says what the
//! transcript says: final text, tool calls with names and statuses, token totals, outcome and
//! exit code. The expected facts are written by hand in `<case>.facts.json`, from the
//! transcript and the specs; the output is read back through the target's own decoder.

mod common;

use serde_json::Value;

use agentgate::{translate_bytes, Dialect, Options};

fn facts(case: &common::Case) -> Option<Value> {
    let path = case.path.with_extension("facts.json");
    let text = std::fs::read_to_string(path).ok()?;
    Some(serde_json::from_str(&text).unwrap())
}

fn terminal_of(lines: &[Value], kind_field: &str, kind: &str) -> Value {
    let terminals: Vec<&Value> = lines.iter().filter(|l| l[kind_field] == kind).collect();
    assert_eq!(terminals.len(), 1, "exactly one {kind} record");
    assert_eq!(lines.last().unwrap()[kind_field], kind, "the {kind} record is last");
    terminals[0].clone()
}

#[test]
fn every_target_keeps_the_facts_of_every_fixture() {
    let mut checked = 0;
    for case in common::cases() {
        let Some(want) = facts(&case) else { continue };
        let outcome = want["outcome"].as_str().unwrap();
        for target in Dialect::all() {
            let ctx = format!("{} to {target}", case.path.display());
            let (out, summary, _) = translate_bytes(&case.input, &Options::new(Some(case.dialect), target));
            assert_eq!(summary.report.bad, want["bad_lines"].as_u64().unwrap_or(0), "{ctx}: bad lines");
            let out_lines = common::values(std::str::from_utf8(&out).unwrap());
            let contract = target.contract();
            // base-context has no terminal record: its last assistant message says how it ended.
            if let Some(spec) = &contract.terminal {
                let terminal = terminal_of(&out_lines, &contract.type_field, &spec.kind);
                if let Some(field) = &spec.exit_code_field {
                    assert_eq!(terminal[field], want["exit_code"][target.name()], "{ctx}: exit code");
                }
            }

            // Read the output back with the target's decoder, into the canonical form.
            let back = common::values(&common::translate(&out, target, Dialect::Canonical));
            let t = terminal_of(&back, "type", "terminal");

            // adal writes `answer` on success only (the spec's outcome table); loom has no text.
            let final_text = if (target == Dialect::Adal && outcome != "completed") || target == Dialect::Loom {
                ""
            } else {
                want["final_text"].as_str().unwrap()
            };
            // codex has no final text but the last agent_message's, which a run that did not
            // complete may have streamed before it stopped.
            let got_text = t["final_text"].as_str().unwrap_or("");
            if target == Dialect::Gemini {
                // gemini's answer is every chunk after the last tool result (gemini.md,
                // Records): messages a source wrote after its last call read back joined, the
                // answer last.
                assert!(
                    got_text.ends_with(final_text),
                    "{ctx}: final text {got_text:?}, want {final_text:?} at its end"
                );
            } else if !matches!(target, Dialect::Codex | Dialect::ClaudeCode) || outcome == "completed" {
                assert_eq!(got_text, final_text, "{ctx}: final text");
            }

            // A result names its call by id; its name is the call's where it repeats none.
            let call_names: std::collections::HashMap<&str, &str> = back
                .iter()
                .filter(|l| l["type"] == "tool_call")
                .map(|l| (l["id"].as_str().unwrap(), l["name"].as_str().unwrap()))
                .collect();
            let mut tools: Vec<(String, String)> = back
                .iter()
                .filter(|l| l["type"] == "tool_result")
                .map(|l| {
                    let name =
                        l["name"].as_str().or_else(|| call_names.get(l["id"].as_str().unwrap()).copied()).unwrap_or("");
                    (name.to_string(), l["status"].as_str().unwrap().to_string())
                })
                .collect();
            // A session summary lists its calls in one record; the answered ones have results.
            for summary in back.iter().filter(|l| l["type"] == "session_summary") {
                for c in summary["tool_calls"].as_array().into_iter().flatten().filter(|c| c["answered"] == true) {
                    let status = if c["error"] == true { "failed" } else { "completed" };
                    tools.push((c["name"].as_str().unwrap().to_string(), status.to_string()));
                }
            }
            let mut want_tools: Vec<(String, String)> = want["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| {
                    let status = p[1].as_str().unwrap();
                    // localcode's tool_result has only error "true"/"false", loom's summary and
                    // base-context's results an error flag.
                    let two_states = matches!(
                        target,
                        Dialect::Localcode
                            | Dialect::Loom
                            | Dialect::BaseContext
                            | Dialect::Codex
                            | Dialect::ClaudeCode
                            | Dialect::Gemini
                    );
                    let status = if two_states && status == "cancelled" { "failed" } else { status };
                    (p[0].as_str().unwrap().to_string(), status.to_string())
                })
                .collect();
            if matches!(
                target,
                Dialect::Wuu | Dialect::BaseContext | Dialect::Codex | Dialect::ClaudeCode | Dialect::Gemini
            ) {
                // wuu, base-context and codex have no refusal event: a refused call is a call
                // that failed (codex: a declined command; README); gemini's refusal is a failed
                // tool_result typed policy_violation.
                for name in want.get("denied").and_then(Value::as_array).into_iter().flatten() {
                    want_tools.push((name.as_str().unwrap().to_string(), "failed".into()));
                }
            }
            let withdrawn = want.get("withdrawn").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
            if target == Dialect::Adal && !withdrawn.is_empty() {
                // adal has no withdrawal: a call taken back has a cancelled result (README).
                for name in withdrawn {
                    want_tools.push((name.as_str().unwrap().to_string(), "cancelled".into()));
                }
                tools.sort();
                want_tools.sort();
            }
            // A shell call of another dialect is named as the target names its shell tool
            // (docs/mapping.md, "Shell calls"; the names by hand from the specs' examples); codex
            // writes any call named as a shell as its command_execution item, which names no
            // tool (mappings/codex.json, "tools").
            let shell = match target {
                Dialect::ClaudeCode => Some("Bash"),
                Dialect::Codex => Some("command_execution"),
                Dialect::Gemini => Some("run_shell_command"),
                Dialect::Wuu | Dialect::Adal | Dialect::BaseContext => Some("bash"),
                _ => None,
            };
            if let Some(shell) = shell.filter(|_| target != case.dialect) {
                for t in want_tools.iter_mut() {
                    let name = t.0.to_ascii_lowercase();
                    let codex_only = ["shell", "exec_command", "command"];
                    if ["bash", "command_execution", "run_shell_command"].contains(&name.as_str())
                        || (target == Dialect::Codex && codex_only.contains(&name.as_str()))
                    {
                        t.0 = shell.into();
                    }
                }
                tools.sort();
                want_tools.sort();
            }
            if matches!(target, Dialect::Codex | Dialect::Gemini) && !withdrawn.is_empty() {
                // codex and gemini have no withdrawal: a call taken back ends as one that did
                // not run (gemini: an error result saying so).
                for name in withdrawn {
                    want_tools.push((name.as_str().unwrap().to_string(), "failed".into()));
                }
                tools.sort();
                want_tools.sort();
            }
            if target == Dialect::Loom {
                // A Session line lists calls in the order they were made, not answered.
                tools.sort();
                want_tools.sort();
            }
            assert_eq!(tools, want_tools, "{ctx}: tool calls");

            let usage = &t["usage"];
            let got_tokens: Vec<u64> =
                ["input", "output", "total"].iter().map(|k| usage[*k].as_u64().unwrap_or(0)).collect();
            // adal carries no usage at all; codex only on turn.completed.
            let mut want_tokens: Vec<u64> =
                if target == Dialect::Adal || (target == Dialect::Codex && outcome != "completed") {
                    vec![0, 0, 0]
                } else {
                    ["input", "output", "total"].iter().map(|k| want["tokens"][*k].as_u64().unwrap()).collect()
                };
            // A total beyond input + output (gemini's thoughts and tool-use prompt, which
            // gemini.md leaves unattributed) is carried only by the targets with a total of
            // their own (localcode's tokens.total, gemini's total_tokens, canonical's); the
            // others' read back as input + output.
            let unattributed = want["tokens"]["unattributed"].as_u64().unwrap_or(0);
            if !matches!(target, Dialect::Localcode | Dialect::Gemini | Dialect::Canonical | Dialect::Adal) {
                want_tokens[2] = want_tokens[2].saturating_sub(unattributed);
            }
            assert_eq!(got_tokens, want_tokens, "{ctx}: tokens");

            if target == Dialect::Wuu {
                // wuu's result lists five statuses; any other stop is written as failed.
                let want = if outcome == "incomplete" { "failed" } else { outcome };
                assert_eq!(t["outcome"], want, "{ctx}: outcome");
            }
            if target == Dialect::ClaudeCode {
                // success, else an error result: error_max_turns (incomplete) for a turn or
                // step limit, error_during_execution (failed) otherwise.
                let reason = want.get("reason").and_then(Value::as_str).unwrap_or("");
                let limit =
                    ["max_rounds", "max_turns", "StepBudget", "error_max_turns"].iter().any(|r| reason.contains(r));
                let want = match outcome {
                    "completed" => "completed",
                    "incomplete" if limit => "incomplete",
                    "incomplete" if case.dialect == Dialect::ClaudeCode && reason.is_empty() => "incomplete",
                    _ => "failed",
                };
                assert_eq!(t["outcome"], want, "{ctx}: outcome");
            }
            if target == Dialect::Codex {
                // turn.completed, else turn.failed: codex writes no other outcome, and every
                // output ends with its closing line, a codex source cut short too.
                let want = match outcome {
                    "completed" => "completed",
                    _ => "failed",
                };
                assert_eq!(t["outcome"], want, "{ctx}: outcome");
            }
            if target == Dialect::Gemini {
                // gemini writes each of the six outcomes apart (mappings/gemini.json, outcomes):
                // a timeout is a cancellation that says so, an incomplete run an
                // IncompleteRunError or, for a turn limit, FatalTurnLimitedError.
                assert_eq!(t["outcome"], outcome, "{ctx}: outcome");
            }
            if target == Dialect::BaseContext {
                // The last assistant message's stopReason: stop, error or aborted (a run that
                // did not complete stops with error: length is an ordinary stop).
                let want = match outcome {
                    "permission_denied" | "incomplete" => "failed",
                    "timeout" => "interrupted",
                    other => other,
                };
                assert_eq!(t["outcome"], want, "{ctx}: outcome");
            }
            if target == Dialect::Loom {
                // loom has stop reasons for completed, approval required and its own stops;
                // everything else is a failed run.
                let reason = want.get("reason").and_then(Value::as_str).unwrap_or("");
                let own_stop = want["exit_code"]["loom"] == 3;
                let want = match outcome {
                    "completed" | "permission_denied" => outcome,
                    "incomplete" if own_stop => "incomplete",
                    _ => "failed",
                };
                assert_eq!(t["outcome"], want, "{ctx}: outcome");
                if own_stop {
                    assert_eq!(t["reason"], reason, "{ctx}: stop reason");
                }
            }
            if target == Dialect::Canonical {
                assert_eq!(t["outcome"], outcome, "{ctx}: outcome");
                if let Some(reason) = want.get("reason") {
                    assert_eq!(&t["reason"], reason, "{ctx}: reason");
                }
                if let Some(error) = want.get("error") {
                    assert_eq!(&t["error"], error, "{ctx}: error");
                }
            }
            if let (Some(denied), Dialect::Loom) = (want.get("denied").and_then(Value::as_array), target) {
                let approval = back.iter().find(|l| l["type"] == "approval").expect("an Approval record");
                assert_eq!(approval["actions"].as_array().unwrap(), denied, "{ctx}: actions awaited");
            }
            if let Some(denied) = want.get("denied").and_then(Value::as_array) {
                if target == Dialect::Adal || target == Dialect::Canonical {
                    let names: Vec<&Value> =
                        back.iter().filter(|l| l["type"] == "permission_denied").map(|l| &l["name"]).collect();
                    assert_eq!(names, denied.iter().collect::<Vec<_>>(), "{ctx}: denied calls");
                }
            }
            checked += 1;
        }
    }
    assert!(checked >= 60, "only {checked} fact sets checked");
}

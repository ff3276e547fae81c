//! Every encoder's output holds to its dialect's contract in `mappings/`, and the contract
//! checker itself catches what the contracts forbid.

mod common;

use agentgate::contract::{check_stream, contract};
use agentgate::model::Outcome;
use agentgate::Dialect;
use proptest::strategy::Strategy;
use strum::IntoEnumIterator;

#[test]
fn every_contract_parses_and_has_an_entry_for_every_outcome() {
    for d in Dialect::all() {
        let c = d.contract();
        assert_eq!(c.dialect, d.name());
        for o in Outcome::iter() {
            assert!(c.outcomes.contains_key(o.name()), "{d}: no outcome entry for {}", o.name());
        }
        // Every dialect but base-context, codex and claude-code (whose result lines may be
        // several) ends its stream with a terminal record.
        let none = matches!(d, Dialect::BaseContext | Dialect::Codex | Dialect::ClaudeCode);
        assert_eq!(c.terminal.is_some(), !none, "{d}: terminal record");
    }
}

#[test]
fn every_output_validates_against_its_target_contract() {
    let mut failures = Vec::new();
    for case in common::cases() {
        for target in Dialect::all() {
            let out = common::translate(&case.input, case.dialect, target);
            for (line, problem) in check_stream(target.contract(), &out) {
                // Within one dialect, valid lines are copied as they were read: lines of unknown
                // kinds, and a writer's habits the spec does not state (member order), stay so.
                if case.dialect == target && (common::unknown_kind(&problem) || problem.starts_with("warning: ")) {
                    continue;
                }
                failures.push(format!("{} to {target}: line {line}: {problem}", case.path.display()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn problems(dialect: &str, text: &str) -> Vec<String> {
    check_stream(contract(dialect), text).into_iter().map(|(n, p)| format!("{n}: {p}")).collect()
}

#[test]
fn the_checker_catches_numbers_where_localcode_wants_strings_and_sums_that_do_not_add_up() {
    let text = concat!(
        "{\"type\": \"tool_start\", \"name\": \"bash\", \"args\": \"ls\", \"index\": 0}\n",
        "{\"type\": \"turn_tokens\", \"prompt_tokens\": \"10\", \"completion_tokens\": \"2\", \"total_tokens\": \"12\"}\n",
        "{\"type\": \"result\", \"status\": \"ok\", \"exit_code\": 0, \"reason\": \"completed\", \"final_text\": \"\", \"tokens\": {\"prompt\": 11, \"completion\": 2, \"total\": 12}}\n",
    );
    let p = problems("localcode", text);
    assert!(p.iter().any(|x| x.starts_with("1: tool_start.index")), "{p:?}");
    assert!(p.iter().any(|x| x.starts_with("3: tokens.prompt is 11, but")), "{p:?}");
    assert_eq!(p.len(), 2, "{p:?}");
}

#[test]
fn the_checker_catches_overlong_chunks_key_order_and_a_missing_result() {
    let long = "é".repeat(2001);
    let text = format!("{{\"type\": \"content\", \"chunk\": \"{long}\", \"chars\": \"2001\"}}\n{{\"chars\": \"1\", \"type\": \"content\", \"chunk\": \"x\"}}\n");
    let p = problems("localcode", &text);
    assert!(p.iter().any(|x| x.contains("2001 characters, more than the limit of 2000")), "{p:?}");
    assert!(p.iter().any(|x| x.contains("\"type\" is not the first member")), "{p:?}");
    assert!(p.iter().any(|x| x.contains("no terminal \"result\" record")), "{p:?}");
}

#[test]
fn the_checker_holds_adal_to_its_ordering_rules() {
    let text = concat!(
        "{\"type\":\"tool_result\",\"id\":\"a\",\"name\":\"bash\",\"status\":\"completed\",\"output\":\"\"}\n",
        "{\"type\":\"permission_denied\",\"id\":\"b\",\"name\":\"bash\",\"args\":{},\"reason\":\"no\"}\n",
        "{\"type\":\"tool_call\",\"id\":\"c\",\"name\":\"bash\",\"args\":{}}\n",
        "{\"type\":\"complete\",\"exit_code\":1,\"session_id\":\"s\",\"model\":null}\n",
        "{\"type\":\"answer\",\"content\":\"late\"}\n",
    );
    let p = problems("adal", text);
    let has = |s: &str| p.iter().any(|x| x.contains(s));
    assert!(has("1: tool_result.id \"a\" names no earlier tool_call"), "{p:?}");
    assert!(has("3: \"tool_call\" after \"permission_denied\""), "{p:?}");
    assert!(has("4: after \"permission_denied\" the terminal's exit_code must be 2"), "{p:?}");
    assert!(has("4: a terminal with exit_code 1 needs an earlier \"error\""), "{p:?}");
    assert!(has("5: \"answer\" after the terminal record"), "{p:?}");
}

#[test]
fn the_checker_holds_terminal_codes_approval_order_and_settling() {
    let lc = "{\"type\": \"result\", \"status\": \"ok\", \"exit_code\": 124, \"reason\": \"completed\", \"final_text\": \"\", \"tokens\": {\"prompt\": 0, \"completion\": 0, \"total\": 0}}\n";
    let p = problems("localcode", lc);
    assert!(p.iter().any(|x| x.contains("exit_code 124 does not go with status ok")), "{p:?}");

    let loom = concat!(
        "{\"actions\":[\"a\"],\"kind\":\"Approval\",\"schema_version\":1}\n",
        "{\"accepted\":true,\"kind\":\"Route\",\"protocol\":\"p@1\",\"schema_version\":1}\n",
        "{\"exit_status\":3,\"kind\":\"Terminal\",\"schema_version\":1,\"stop_reason\":\"ApprovalRequired\"}\n",
    );
    let p = problems("loom", loom);
    assert!(p.iter().any(|x| x.contains("must come just after an \"Approval\" line")), "{p:?}");
    assert!(p.iter().any(|x| x.contains("exit_status 3 does not go with stop_reason ApprovalRequired")), "{p:?}");

    let cut = std::fs::read_to_string(common::fixtures().join("base-context/cut.jsonl")).unwrap();
    let p = problems("base-context", &cut);
    assert!(p.iter().any(|x| x.contains("the run never settles (no final \"agent_end\"): it is incomplete")), "{p:?}");
    let retry = std::fs::read_to_string(common::fixtures().join("base-context/retry.jsonl")).unwrap();
    let upto = retry.find("{\"type\":\"agent_start\"}\n{\"type\":\"turn_start\"}\n{\"type\":\"message_start\",\"message\":{\"role\":\"assistant\",\"content\":[],\"api\":\"anthropic-messages\",\"provider\":\"anthropic\",\"model\":\"claude-sonnet-4-5\",\"usage\":{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":0,\"cost\":{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"total\":0}},\"stopReason\":\"stop\",\"timestamp\":1773655925000}}").unwrap();
    let p = problems("base-context", &retry[..upto]);
    assert!(p.iter().any(|x| x.contains("\"auto_retry_start\" after the last \"agent_end\" that never came")), "{p:?}");
    assert!(problems("base-context", &retry).is_empty());
}

proptest::proptest! {
    /// The checker's quick look at a number as written (a decoder's line, its members raw
    /// text) and its look at the number as read (a parsed line, as `validate` checks) agree: `-0`, which serde_json reads as a float, was an integer to
    /// the one and not to the other, and loom to loom wrote a Usage line without its turn.
    #[test]
    fn a_number_as_written_and_as_read_is_judged_alike(
        number in "-?(0|[1-9][0-9]{0,20})(\\.[0-9]{1,2})?([eE][+-]?[0-9]{1,2})?",
        key in proptest::sample::select(vec!["turn", "input_tokens"]),
    ) {
        // loom writes its members in alphabetical order (loom.md), which the line keeps.
        let (tokens, turn) = if key == "turn" { (String::new(), number.as_str()) } else { (format!("\"{key}\":{number},"), "1") };
        let line = format!("{{\"final_usage\":true,{tokens}\"kind\":\"Usage\",\"model\":\"m\",\"schema_version\":1,\"turn\":{turn}}}");
        let loom = contract("loom");
        // As written: the members as the decoders hold them, raw text not yet parsed.
        let object = agentgate::json::Object::parse(&line).unwrap().unwrap();
        let as_written = loom.check_fields("Usage", &object);
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        let as_read = loom.check_line(&value);
        proptest::prop_assert_eq!(as_written.is_empty(), as_read.is_empty(), "{} {:?} {:?}", line, as_written, as_read);
    }
}

/// A JSON value of any type, as text, a few of each.
fn any_json() -> impl proptest::strategy::Strategy<Value = String> {
    proptest::sample::select(vec![
        "\"text\"",
        "\"\"",
        "7",
        "-0",
        "1.5",
        "1e2",
        "null",
        "true",
        "{}",
        "{\"a\":1}",
        "[]",
        "[1,\"b\"]",
    ])
    .prop_map(str::to_string)
}

proptest::proptest! {
    /// The same for an object whose fields the contract lists (Claude's `message`): read off its
    /// text member by member, it is judged as the parsed line judges it, whatever its members
    /// hold, a member given twice included (the last one stands, as serde_json reads it).
    #[test]
    fn an_object_whose_fields_are_listed_is_judged_alike_as_written_and_as_read(
        members in proptest::collection::vec(
            (proptest::sample::select(vec!["id", "role", "content", "model", "zz"]), any_json()),
            0..6,
        ),
        message_is_an_object in proptest::bool::weighted(0.9),
        other in any_json(),
    ) {
        let message = if message_is_an_object {
            let inside: Vec<String> = members.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
            format!("{{{}}}", inside.join(","))
        } else {
            other
        };
        let line = format!("{{\"type\":\"assistant\",\"message\":{message},\"session_id\":\"s\"}}");
        let claude = contract("claude-code");
        let object = agentgate::json::Object::parse(&line).unwrap().unwrap();
        let as_written = claude.check_fields("assistant", &object);
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        let as_read: Vec<String> = claude.check_line(&value).into_iter().filter(|p| p.starts_with("assistant")).collect();
        proptest::prop_assert_eq!(as_written, as_read, "{}", line);
    }
}

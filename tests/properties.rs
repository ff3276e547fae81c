//! Property tests over generated canonical runs: any mix of turns, rounds, reasoning, text,
//! tool calls answered in any order with any status, usage as deltas or as cumulative
//! snapshots, every outcome, Unicode of any length, runs cut off anywhere. For every dialect:
//! its output holds to its contract, reading it back gives the run's facts (after naming what
//! the dialect cannot carry), and it translates to itself unchanged. No decoder can be made to
//! panic or to write an invalid stream, whatever the bytes.

mod common;

use proptest::prelude::*;
use serde_json::{json, Value};

use agentgate::contract::check_stream;
use agentgate::Dialect;

/// Pieces text is made of: ASCII, emoji (with a skin-tone modifier), CJK, a combining mark,
/// the characters HTML and JSON escape, control characters, and line separators.
const PIECES: &[&str] = &[
    "a", "Z", "7", " ", "🙂", "👍🏽", "修", "复", "e\u{301}", "<", ">", "&", "\"", "'", "\\", "\n", "\t", "\u{1}",
    "\u{7f}", "\u{2028}", "—",
];

fn text(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..max).prop_map(|v| v.concat())
}

/// Mostly short text, now and then past every length limit.
fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![8 => text(24), 1 => text(2600)]
}

const TOOLS: &[&str] = &["bash", "read_file", "grep", "edit"];
const STATUSES: &[&str] = &["completed", "failed", "cancelled"];
const OUTCOMES: &[&str] = &["completed", "failed", "permission_denied", "timeout", "interrupted", "incomplete"];

#[derive(Debug, Clone)]
struct Call {
    name: &'static str,
    status: &'static str,
    output: String,
    args: Value,
}

#[derive(Debug, Clone)]
struct Round {
    reasoning: Option<String>,
    text: Vec<String>,
    calls: Vec<Call>,
    /// The order the results arrive in.
    order: Vec<usize>,
    usage: (u64, u64, u64),
    /// Other event families mixed in (see `extra`).
    extras: Vec<(u8, String)>,
}

#[derive(Debug, Clone)]
struct Turn {
    rounds: Vec<Round>,
    cumulative: bool,
}

/// The generated `bash` call (its arguments a `command`) as the target names its shell tool
/// (docs/mapping.md, "Shell calls"; the names by hand from the specs' examples; codex's
/// command_execution item names no tool).
fn shell_as(target: Dialect, name: &'static str) -> &'static str {
    match (target, name) {
        (Dialect::ClaudeCode, "bash") => "Bash",
        (Dialect::Codex, "bash") => "command_execution",
        (Dialect::Gemini, "bash") => "run_shell_command",
        _ => name,
    }
}

#[derive(Debug, Clone)]
struct Run {
    turns: Vec<Turn>,
    answer: String,
    outcome: &'static str,
    denied: &'static str,
}

fn call() -> impl Strategy<Value = Call> {
    (prop::sample::select(TOOLS), prop::sample::select(STATUSES), any_text(), text(8))
        .prop_map(|(name, status, output, arg)| Call { name, status, output, args: json!({ "command": arg }) })
}

fn round() -> impl Strategy<Value = Round> {
    (
        prop::option::of(any_text()),
        prop::collection::vec(any_text(), 0..3),
        prop::collection::vec(call(), 0..4),
        0u64..5000,
        0u64..900,
        0u64..100,
        prop::collection::vec((0u8..12, text(12)), 0..4),
    )
        .prop_flat_map(|(reasoning, text, calls, input, output, cache, extras)| {
            let order: Vec<usize> = (0..calls.len()).collect();
            let usage = (input + cache, output, cache);
            (Just(reasoning), Just(text), Just(calls), Just(order).prop_shuffle(), Just(usage), Just(extras))
        })
        .prop_map(|(reasoning, text, calls, order, usage, extras)| Round {
            reasoning,
            text,
            calls,
            order,
            usage,
            extras,
        })
}

fn run() -> impl Strategy<Value = Run> {
    let turn = (prop::collection::vec(round(), 1..4), any::<bool>())
        .prop_map(|(rounds, cumulative)| Turn { rounds, cumulative });
    (prop::collection::vec(turn, 1..3), text(30), prop::sample::select(OUTCOMES), prop::sample::select(TOOLS)).prop_map(
        |(turns, answer, outcome, denied)| Run { turns, answer: format!("Answer: {answer}"), outcome, denied },
    )
}

/// An event of another family, none of which changes the run's facts.
fn extra(which: u8, text: &str) -> Value {
    match which {
        0 => json!({"type": "stage", "name": text}),
        1 => json!({"type": "notice", "text": text}),
        2 => json!({"type": "file_change", "path": format!("src/{text}.rs"), "action": "modified", "tool": "edit"}),
        3 => json!({"type": "todo", "items": [{"step": text, "status": "pending"}]}),
        4 => {
            json!({"type": "subagent", "phase": "update", "id": "agent-1", "status": "completed", "data": {"result": text}})
        }
        5 => json!({"type": "compaction", "phase": "start", "reason": "threshold"}),
        6 => {
            json!({"type": "compaction", "phase": "end", "reason": "threshold", "data": {"aborted": false, "willRetry": false}})
        }
        7 => json!({"type": "retry", "phase": "start", "attempt": 1, "max_attempts": 3, "delay_ms": 10, "error": text}),
        8 => json!({"type": "diagnostics", "kind": "provider_state", "data": {"step_index": 1}}),
        9 => json!({"type": "session", "id": "sess-1", "model": "m-1", "cwd": "/repo"}),
        10 => json!({"type": "tool_draft", "name": "bash", "chars": 3, "snippet": text}),
        _ => json!({"type": "reasoning_peek", "text": text}),
    }
}

/// The run as canonical lines.
fn canonical(run: &Run) -> Vec<Value> {
    let mut out = Vec::new();
    let mut push = |v: Value| {
        let mut m = serde_json::Map::new();
        m.insert("v".into(), json!(1));
        m.extend(v.as_object().unwrap().clone());
        out.push(Value::Object(m));
    };
    for (ti, turn) in run.turns.iter().enumerate() {
        let tid = format!("t{ti}");
        push(json!({"type": "turn_start", "id": tid}));
        let mut so_far = (0, 0, 0);
        for (ri, round) in turn.rounds.iter().enumerate() {
            if let Some(r) = &round.reasoning {
                push(json!({"type": "reasoning_start"}));
                push(json!({"type": "reasoning_delta", "text": r}));
                push(json!({"type": "reasoning_end"}));
            }
            if !round.text.is_empty() {
                push(json!({"type": "text_start"}));
                for t in &round.text {
                    push(json!({"type": "text_delta", "text": t}));
                }
            }
            for (which, t) in &round.extras {
                push(extra(*which, t));
            }
            for (ci, c) in round.calls.iter().enumerate() {
                push(
                    json!({"type": "tool_call", "id": format!("c{ti}_{ri}_{ci}"), "name": c.name, "arguments": c.args}),
                );
            }
            for (ci, c) in round.calls.iter().enumerate().filter(|(ci, _)| ci % 2 == 0) {
                // Some calls stream their output before the result, which repeats it.
                push(json!({"type": "tool_output", "id": format!("c{ti}_{ri}_{ci}"), "text": c.output}));
            }
            for &ci in &round.order {
                let c = &round.calls[ci];
                push(
                    json!({"type": "tool_result", "id": format!("c{ti}_{ri}_{ci}"), "name": c.name, "status": c.status, "output": c.output}),
                );
            }
            let (i, o, cache) = round.usage;
            if turn.cumulative {
                so_far = (so_far.0 + i, so_far.1 + o, so_far.2 + cache);
                push(
                    json!({"type": "usage", "scope": "turn", "basis": "cumulative", "final": false, "of": tid, "input": so_far.0, "output": so_far.1, "cache_read": so_far.2}),
                );
            } else {
                push(
                    json!({"type": "usage", "scope": "round", "basis": "delta", "final": true, "input": i, "output": o, "cache_read": cache}),
                );
            }
        }
        push(json!({"type": "turn_end", "id": tid}));
    }
    if run.outcome == "permission_denied" {
        push(
            json!({"type": "permission_denied", "id": "denied-1", "name": run.denied, "arguments": {}, "reason": "needs approval"}),
        );
    }
    push(json!({"type": "final_answer", "text": run.answer}));
    push(json!({"type": "terminal", "outcome": run.outcome}));
    out
}

fn lines(values: &[Value]) -> Vec<u8> {
    values.iter().map(|v| format!("{v}\n")).collect::<String>().into_bytes()
}

/// What a dialect keeps of a run's facts: final text, tool results, token totals, outcome.
#[derive(Debug, PartialEq)]
struct Facts {
    final_text: String,
    tools: Vec<(String, String)>,
    tokens: (u64, u64),
    outcome: String,
}

/// The facts of the generated run as `target` can carry them: the per-dialect normaliser.
fn expected(run: &Run, target: Dialect) -> Facts {
    let mut tools = Vec::new();
    let (mut input, mut output) = (0, 0);
    for turn in &run.turns {
        for round in &turn.rounds {
            for &ci in &round.order {
                let c = &round.calls[ci];
                // localcode, loom and base-context have only an error flag.
                // codex: a command that never ran is declined, read back as failed.
                // gemini: success or error.
                let two_states = matches!(
                    target,
                    Dialect::Localcode
                        | Dialect::Loom
                        | Dialect::BaseContext
                        | Dialect::Codex
                        | Dialect::ClaudeCode
                        | Dialect::Gemini
                );
                let status = if two_states && c.status == "cancelled" { "failed" } else { c.status };
                let name = shell_as(target, c.name);
                tools.push((name.to_string(), status.to_string()));
            }
            input += round.usage.0;
            output += round.usage.1;
        }
    }
    if run.outcome == "permission_denied"
        && matches!(
            target,
            Dialect::Wuu | Dialect::BaseContext | Dialect::Codex | Dialect::ClaudeCode | Dialect::Gemini
        )
    {
        // No refusal event: a refused call is a call that failed (gemini's typed
        // policy_violation).
        let name = shell_as(target, run.denied);
        tools.push((name.to_string(), "failed".into()));
    }
    if target == Dialect::Loom {
        // A Session line lists calls in the order they were made.
        tools.sort();
    }
    let outcome = match (target, run.outcome) {
        (Dialect::Adal, "completed" | "permission_denied") => run.outcome,
        (Dialect::Adal, _) => "failed",
        (Dialect::Wuu, "incomplete") => "failed",
        (Dialect::Loom, "completed" | "permission_denied") => run.outcome,
        (Dialect::Loom, _) => "failed",
        (Dialect::BaseContext, "permission_denied" | "incomplete") => "failed",
        (Dialect::BaseContext, "timeout") => "interrupted",
        // codex: turn.completed, else turn.failed.
        (Dialect::Codex, "completed") => "completed",
        (Dialect::Codex, _) => "failed",
        (Dialect::ClaudeCode, "completed") => "completed",
        (Dialect::ClaudeCode, _) => "failed",
        (_, o) => o,
    };
    let final_text = match target {
        Dialect::Loom => String::new(),
        Dialect::Adal if run.outcome != "completed" => String::new(),
        // claude-code's result text is the answer of a completed run only.
        Dialect::ClaudeCode if run.outcome != "completed" => String::new(),
        _ => run.answer.clone(),
    };
    // adal has no usage; codex has it only on turn.completed.
    let tokens = match target {
        Dialect::Adal => (0, 0),
        Dialect::Codex if run.outcome != "completed" => (0, 0),
        _ => (input, output),
    };
    Facts { final_text, tools, tokens, outcome: outcome.to_string() }
}

/// The facts a stream of `dialect` states, read through its own decoder.
fn read_back(text: &str, dialect: Dialect) -> Facts {
    let back = common::values(&common::translate(text.as_bytes(), dialect, Dialect::Canonical));
    let names: std::collections::HashMap<String, String> = back
        .iter()
        .filter(|l| l["type"] == "tool_call")
        .map(|l| (l["id"].as_str().unwrap().to_string(), l["name"].as_str().unwrap().to_string()))
        .collect();
    let mut tools: Vec<(String, String)> = back
        .iter()
        .filter(|l| l["type"] == "tool_result")
        .map(|l| {
            let name = l["name"]
                .as_str()
                .map(str::to_string)
                .or_else(|| names.get(l["id"].as_str().unwrap()).cloned())
                .unwrap_or_default();
            (name, l["status"].as_str().unwrap().to_string())
        })
        .collect();
    for s in back.iter().filter(|l| l["type"] == "session_summary") {
        for c in s["tool_calls"].as_array().into_iter().flatten().filter(|c| c["answered"] == true) {
            tools.push((
                c["name"].as_str().unwrap().to_string(),
                if c["error"] == true { "failed" } else { "completed" }.to_string(),
            ));
        }
    }
    if dialect == Dialect::Loom {
        tools.sort();
    }
    let t = back.last().unwrap();
    assert_eq!(t["type"], "terminal");
    let usage = &t["usage"];
    Facts {
        final_text: t["final_text"].as_str().unwrap_or("").to_string(),
        tools,
        tokens: (usage["input"].as_u64().unwrap_or(0), usage["output"].as_u64().unwrap_or(0)),
        outcome: t["outcome"].as_str().unwrap().to_string(),
    }
}

fn assert_valid(out: &str, target: Dialect, what: &str) -> Result<(), TestCaseError> {
    let problems = check_stream(target.contract(), out);
    prop_assert!(problems.is_empty(), "{what} to {target}: {problems:?}\n{out}");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, max_shrink_iters: 200, ..ProptestConfig::default() })]

    #[test]
    fn every_dialect_keeps_the_facts_of_any_run_and_holds_to_its_contract(run in run()) {
        let input = lines(&canonical(&run));
        for target in Dialect::all() {
            let out = common::translate(&input, Dialect::Canonical, target);
            assert_valid(&out, target, "a generated run")?;
            let mut got = read_back(&out, target);
            if target == Dialect::ClaudeCode && run.outcome != "completed" {
                // Its result's text is the error; what reads as final text is the last message.
                got.final_text.clear();
            }
            let want = expected(&run, target);
            if target == Dialect::Gemini {
                // gemini's answer is every chunk after the last tool result (gemini.md,
                // Records): the text of the rounds after it, then the answer.
                prop_assert!(got.final_text.ends_with(&want.final_text), "gemini: {:?}", got.final_text);
                got.final_text.clone_from(&want.final_text);
            }
            prop_assert_eq!(got, want, "{}", target);
        }
    }

    #[test]
    fn every_dialect_translates_to_itself_unchanged(run in run()) {
        let input = lines(&canonical(&run));
        for target in Dialect::all() {
            let out = common::translate(&input, Dialect::Canonical, target);
            let again = common::translate(out.as_bytes(), target, target);
            prop_assert_eq!(common::values(&again), common::values(&out), "{} to itself", target);
            let via = common::translate(common::translate(out.as_bytes(), target, Dialect::Canonical).as_bytes(), Dialect::Canonical, target);
            prop_assert_eq!(common::values(&via), common::values(&out), "{} through canonical", target);
        }
    }

    /// Issue 43: a stream with members no spec names, at any depth of any line, and lines of
    /// kinds no spec names, comes back from its own dialect with all of them.
    #[test]
    fn unknown_members_at_any_depth_and_unknown_kinds_come_back_from_the_same_dialect(
        run in run(),
        places in prop::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>(), unknown_value()), 1..6),
        kinds in prop::collection::vec((any::<prop::sample::Index>(), unknown_value()), 0..3),
    ) {
        let input = lines(&canonical(&run));
        for target in Dialect::all().filter(|d| *d != Dialect::Canonical) {
            let stream = common::values(&common::translate(&input, Dialect::Canonical, target));
            let with = with_unknowns(stream, target, &places, &kinds);
            let text = String::from_utf8(lines(&with)).unwrap();
            let again = common::translate(text.as_bytes(), target, target);
            prop_assert_eq!(common::values(&again), with.clone(), "{} to itself:\n{}", target, text);
            // Issue 43, item 2: through canonical, the same (wuu's command_* twins included).
            let canonical = common::translate(text.as_bytes(), target, Dialect::Canonical);
            let via = common::translate(canonical.as_bytes(), Dialect::Canonical, target);
            prop_assert_eq!(common::values(&via), with, "{} through canonical:\n{}", target, text);
        }
    }

    #[test]
    fn a_run_cut_anywhere_still_gives_valid_streams_with_one_terminal(run in run(), cut in any::<prop::sample::Index>()) {
        let all = canonical(&run);
        let kept = &all[..cut.index(all.len())];
        let input = lines(kept);
        for target in Dialect::all() {
            let out = common::translate(&input, Dialect::Canonical, target);
            assert_valid(&out, target, "a cut run")?;
            let back = common::values(&common::translate(out.as_bytes(), target, Dialect::Canonical));
            prop_assert_eq!(back.iter().filter(|l| l["type"] == "terminal").count(), 1);
        }
    }

    #[test]
    fn no_decoder_panics_or_writes_an_invalid_stream_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        for from in Dialect::all() {
            for to in Dialect::all() {
                let out = common::translate(&bytes, from, to);
                assert_valid(&out, to, "arbitrary bytes")?;
            }
        }
    }

    #[test]
    fn no_decoder_panics_on_known_kinds_with_fields_of_the_wrong_type(
        picks in prop::collection::vec((any::<prop::sample::Index>(), prop::collection::vec(wrong_value(), 0..6)), 1..12),
    ) {
        for from in Dialect::all() {
            let contract = from.contract();
            let kinds: Vec<(&String, Vec<&String>)> = contract.kinds.iter().map(|(k, spec)| (k, spec.fields.keys().collect())).collect();
            let mut input = String::new();
            for (kind, values) in &picks {
                let (name, fields) = &kinds[kind.index(kinds.len())];
                let mut line = serde_json::Map::new();
                line.insert(contract.type_field.clone(), json!(name));
                for (field, value) in fields.iter().zip(values) {
                    line.insert((*field).clone(), value.clone());
                }
                if from == Dialect::Canonical {
                    line.insert("v".into(), json!(1));
                }
                if from == Dialect::Loom {
                    line.insert("schema_version".into(), json!(1));
                }
                input.push_str(&format!("{}\n", Value::Object(line)));
            }
            for to in Dialect::all() {
                let out = common::translate(input.as_bytes(), from, to);
                if from != to {
                    // Written from the model, whatever the input said.
                    assert_valid(&out, to, &format!("{from} lines with wrong types"))?;
                } else {
                    // Within one dialect, what the source said is passed on: no panic, and
                    // still exactly one terminal record.
                    let back = common::values(&common::translate(out.as_bytes(), to, Dialect::Canonical));
                    prop_assert_eq!(back.iter().filter(|l| l["type"] == "terminal").count(), 1);
                }
            }
        }
    }
}

fn wrong_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
        text(6).prop_map(Value::String),
        Just(json!([1, "x", null])),
        Just(json!({"nested": {"deep": [true]}})),
        Just(json!("-1")),
        Just(json!("12")),
    ]
}

/// A value of any shape, for a member no spec names.
fn unknown_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1e9f64..1e9).prop_map(|f| json!(f)),
        text(12).prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
            prop::collection::vec(("[a-z]{1,6}", inner), 0..3).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Every object inside `v` (itself first), as paths of keys and indices.
fn object_paths(v: &Value, at: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    match v {
        Value::Object(m) => {
            out.push(at.clone());
            for (k, x) in m {
                at.push(json!(k));
                object_paths(x, at, out);
                at.pop();
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                at.push(json!(i));
                object_paths(x, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

fn at_path<'a>(v: &'a mut Value, path: &[Value]) -> &'a mut Value {
    path.iter().fold(v, |v, step| match step {
        Value::String(k) => &mut v[k.as_str()],
        n => &mut v[n.as_u64().unwrap() as usize],
    })
}

/// `stream` with a member `zz_unknown` put into objects at any depth of some lines (the key
/// sorts last, so a dialect whose members are sorted stays so), and lines of an unknown kind
/// put anywhere before its last line.
fn with_unknowns(
    mut stream: Vec<Value>,
    dialect: Dialect,
    places: &[(prop::sample::Index, prop::sample::Index, Value)],
    kinds: &[(prop::sample::Index, Value)],
) -> Vec<Value> {
    for (line, object, value) in places {
        let i = line.index(stream.len());
        let mut paths = Vec::new();
        object_paths(&stream[i], &mut Vec::new(), &mut paths);
        let path = object.get(&paths).clone();
        if let Value::Object(m) = at_path(&mut stream[i], &path) {
            m.insert("zz_unknown".into(), value.clone());
        }
    }
    for (at, value) in kinds {
        let line = match dialect {
            Dialect::Loom => json!({"kind": "ZzUnknown", "schema_version": 1, "zz_data": value}),
            _ => json!({"type": "zz_unknown", "zz_data": value}),
        };
        let mut i = at.index(stream.len());
        // wuu writes a tool_* line's command_* twin right after it: nothing comes between.
        while dialect == Dialect::Wuu && stream[i]["type"].as_str().is_some_and(|t| t.starts_with("command_")) {
            i -= 1;
        }
        // A line that stands only just before its terminal (loom's Approval): nothing between.
        let contract = dialect.contract();
        while i > 0 && stream[i - 1][&contract.type_field].as_str().is_some_and(|k| contract.paired_ahead(k)) {
            i -= 1;
        }
        stream.insert(i, line);
    }
    stream
}

/// The forms a target is written in: base-context plain and `--json-deltas`, claude-code
/// without and with partial messages, every other dialect in its one form.
fn forms() -> Vec<(Dialect, agentgate::codec::EncodeOptions)> {
    let mut out = Vec::new();
    for d in Dialect::all() {
        let mut opts = agentgate::codec::EncodeOptions::default();
        out.push((d, opts.clone()));
        match d {
            Dialect::BaseContext => opts.json_deltas = true,
            Dialect::ClaudeCode => opts.include_partial_messages = true,
            _ => continue,
        }
        out.push((d, opts));
    }
    out
}

/// Objects at every depth with their members sorted: a loom line is (its contract).
fn sorted_deep(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut pairs: Vec<(String, Value)> = m.into_iter().map(|(k, v)| (k, sorted_deep(v))).collect();
            pairs.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(pairs.into_iter().collect())
        }
        Value::Array(a) => Value::Array(a.into_iter().map(sorted_deep).collect()),
        other => other,
    }
}

/// `stream` with unknown members and kinds (see [`with_unknowns`]), still valid in `d`.
fn with_unknowns_valid(
    stream: Vec<Value>,
    d: Dialect,
    places: &[(prop::sample::Index, prop::sample::Index, Value)],
    kinds: &[(prop::sample::Index, Value)],
) -> Vec<Value> {
    let with = with_unknowns(stream, d, places, kinds);
    if d == Dialect::Loom {
        return with.into_iter().map(sorted_deep).collect();
    }
    with
}

/// `input` (of `from`) translated to `to`, written in the form `opts` asks for.
fn translated(input: &[u8], from: Dialect, to: Dialect, opts: &agentgate::codec::EncodeOptions) -> Vec<u8> {
    let options = agentgate::Options::new(Some(from), to).encode(opts.clone());
    agentgate::pipeline::translate_bytes(input, &options).0
}

/// `input` (of `from`) translated to `to` with its report.
fn with_report(input: &[u8], from: Dialect, to: Dialect) -> (String, agentgate::report::Report) {
    let (out, summary, _) = agentgate::pipeline::translate_bytes(input, &agentgate::Options::new(Some(from), to));
    (String::from_utf8(out).unwrap(), summary.report)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, max_shrink_iters: 200, ..ProptestConfig::default() })]

    /// Issue 53, rule 2: a valid stream of any dialect, in either form, written in its agent's
    /// own layout and with members and kinds no spec names anywhere, comes back from its own
    /// dialect as the same bytes, directly and through canonical (rule 3 for T = D).
    #[test]
    fn a_valid_stream_comes_back_from_its_own_dialect_as_the_same_bytes(
        run in run(),
        places in prop::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>(), unknown_value()), 0..4),
        kinds in prop::collection::vec((any::<prop::sample::Index>(), unknown_value()), 0..2),
    ) {
        let input = lines(&canonical(&run));
        for (d, opts) in forms().into_iter().filter(|(d, _)| *d != Dialect::Canonical) {
            // The agent's own layout, then members and kinds no spec names (in serde_json's).
            let own = translated(&input, Dialect::Canonical, d, &opts);
            let odd = lines(&with_unknowns_valid(common::values(std::str::from_utf8(&own).unwrap()), d, &places, &kinds));
            for stream in [own, odd] {
                let text = String::from_utf8_lossy(&stream).into_owned();
                prop_assert_eq!(String::from_utf8(translated(&stream, d, d, &opts)).unwrap(), text.clone(), "{} to itself ({:?})", d, opts);
                let via = translated(&stream, d, Dialect::Canonical, &opts);
                prop_assert_eq!(String::from_utf8(translated(&via, Dialect::Canonical, d, &opts)).unwrap(), text.clone(), "{} through canonical ({:?})", d, opts);
            }
        }
    }

    /// Issue 53, rule 3: D -> canonical -> T writes the bytes D -> T writes, for every dialect in
    /// each of its forms (and members no spec names), every target in each of its forms.
    #[test]
    fn through_canonical_every_target_gets_what_the_direct_translation_gives(
        run in run(),
        places in prop::collection::vec((any::<prop::sample::Index>(), any::<prop::sample::Index>(), unknown_value()), 0..3),
    ) {
        let input = lines(&canonical(&run));
        for (d, d_opts) in forms().into_iter().filter(|(d, _)| *d != Dialect::Canonical) {
            let own = translated(&input, Dialect::Canonical, d, &d_opts);
            let source = lines(&with_unknowns_valid(common::values(std::str::from_utf8(&own).unwrap()), d, &places, &[]));
            let via = translated(&source, d, Dialect::Canonical, &Default::default());
            for (t, t_opts) in forms() {
                let direct = translated(&source, d, t, &t_opts);
                let through = translated(&via, Dialect::Canonical, t, &t_opts);
                prop_assert!(direct == through, "{} ({:?}) to {} ({:?}): through canonical differs", d, d_opts, t, t_opts);
            }
        }
    }

    /// Issue 53, rule 2 for streams cut at any byte: what comes back from the dialect itself is
    /// the lines read, then what closes the stream, the same directly and through canonical,
    /// and valid.
    #[test]
    fn a_stream_cut_at_any_byte_comes_back_as_its_lines_then_its_end(run in run(), cut in any::<prop::sample::Index>()) {
        let input = lines(&canonical(&run));
        for (d, opts) in forms().into_iter().filter(|(d, _)| *d != Dialect::Canonical) {
            let own = translated(&input, Dialect::Canonical, d, &opts);
            let at = cut.index(own.len() + 1);
            let part = &own[..at];
            let back = translated(part, d, d, &opts);
            // Every whole line read comes out as it was, in its place; but a line that stands
            // only just before a terminal of its own (loom's Approval: "written just before the
            // terminal record when the run stopped ApprovalRequired") does not stand as the last
            // line of a cut stream, whose end is made (issue 54).
            let mut whole = part.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
            let last = part[..whole.saturating_sub(1)].iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
            let contract = d.contract();
            let paired = serde_json::from_slice::<serde_json::Value>(&part[last..whole])
                .ok()
                .and_then(|v| v.get(&contract.type_field).and_then(|k| k.as_str()).map(|k| contract.paired_ahead(k)))
                .unwrap_or(false);
            if paired {
                whole = last;
            }
            prop_assert!(back.starts_with(&part[..whole]), "{} cut at {}", d, at);
            let via = translated(&translated(part, d, Dialect::Canonical, &opts), Dialect::Canonical, d, &opts);
            prop_assert!(via == back, "{} cut at {}: through canonical differs", d, at);
            assert_valid(std::str::from_utf8(&back).unwrap(), d, "a cut stream")?;
        }
    }

    /// Issue 53, rule 5: a member no spec names, put into any line of any dialect, reaches a
    /// target of another dialect or is counted by the report (as `kind.member`), and a target
    /// of the same dialect or canonical keeps every one and counts none.
    #[test]
    fn every_member_a_target_does_not_write_is_counted(
        run in run(),
        at in prop::collection::vec(any::<prop::sample::Index>(), 1..6),
    ) {
        let input = lines(&canonical(&run));
        for d in Dialect::all().filter(|d| *d != Dialect::Canonical) {
            let mut stream = common::values(&common::translate(&input, Dialect::Canonical, d));
            let mut put = std::collections::BTreeSet::new();
            for i in &at {
                let i = i.index(stream.len());
                if put.insert(i) {
                    stream[i].as_object_mut().unwrap().insert(format!("zz_{i}"), json!({"n": i}));
                }
            }
            let text = lines(&stream);
            for t in Dialect::targets() {
                let (out, report) = with_report(&text, d, t);
                let counted: u64 = report.dropped_fields.iter().filter(|(k, _)| k.contains(".zz_")).map(|(_, n)| n).sum();
                let written = put.iter().filter(|i| out.contains(&format!("zz_{i}"))).count() as u64;
                if t == d || t == Dialect::Canonical {
                    prop_assert_eq!((written, counted), (put.len() as u64, 0), "{} to {}", d, t);
                } else {
                    // A line of a kind the target drops whole is counted as a dropped event.
                    let dropped_lines = report.dropped_kinds.values().sum::<u64>() + report.dropped;
                    prop_assert!(written + counted <= put.len() as u64, "{} to {}: counted twice", d, t);
                    prop_assert!(
                        written + counted + dropped_lines >= put.len() as u64,
                        "{} to {}: {} members put, {} written, {} counted: {:?}\n{}", d, t, put.len(), written, counted, report.dropped_fields, String::from_utf8_lossy(&text)
                    );
                }
            }
        }
    }
}

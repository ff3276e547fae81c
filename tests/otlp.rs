//! `--to otlp`: a run as OpenTelemetry GenAI spans and token metrics in OTLP/JSON. The
//! expectations are written by hand from the OTLP/JSON encoding rules and the GenAI semantic
//! conventions (docs/otlp.md); `scripts/check-otlp.sh` (CI) reads the same output with the
//! official protobuf definitions.

mod common;

use serde_json::{json, Value};

use agentgate::{translate_bytes, Dialect, Options};

fn otlp(input: &[u8], from: Dialect, configure: impl FnOnce(&mut Options)) -> Vec<Value> {
    let mut opts = Options::new(Some(from), Dialect::Otlp);
    configure(&mut opts);
    let (out, _, _) = translate_bytes(input, &opts);
    common::values(std::str::from_utf8(&out).unwrap())
}

fn spans(docs: &[Value]) -> Vec<Value> {
    docs.iter()
        .filter_map(|d| d["resourceSpans"].as_array())
        .flatten()
        .flat_map(|rs| {
            rs["scopeSpans"].as_array().unwrap().iter().flat_map(|ss| ss["spans"].as_array().unwrap().clone())
        })
        .collect()
}

/// A span's attributes as plain values (integers read back from their strings).
fn attrs(span: &Value) -> serde_json::Map<String, Value> {
    span["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|kv| {
            let (kind, v) = kv["value"].as_object().unwrap().iter().next().unwrap();
            let v = if kind == "intValue" { json!(v.as_str().unwrap().parse::<u64>().unwrap()) } else { v.clone() };
            (kv["key"].as_str().unwrap().to_string(), v)
        })
        .collect()
}

fn fixture(path: &str) -> Vec<u8> {
    std::fs::read(common::fixtures().join(path)).unwrap()
}

/// The spec's own example (claude-code.md): one run, one Glob call, run input 5 + 908 + 31212.
#[test]
fn a_run_is_one_invoke_agent_span_with_a_child_per_request_and_per_tool_call() {
    let docs = otlp(&fixture("claude-code/success.jsonl"), Dialect::ClaudeCode, |_| {});
    let spans: Vec<Value> = spans(&docs);
    let roots: Vec<&Value> = spans.iter().filter(|s| s.get("parentSpanId").is_none()).collect();
    assert_eq!(roots.len(), 1);
    let root = roots[0];
    assert_eq!(root["name"], "invoke_agent claude-code");
    assert_eq!(root["kind"], 3, "CLIENT: the agent is another process");
    let a = attrs(root);
    assert_eq!(a["gen_ai.operation.name"], "invoke_agent");
    assert_eq!(a["gen_ai.agent.name"], "claude-code");
    assert_eq!(a["gen_ai.provider.name"], "anthropic");
    assert_eq!(a["gen_ai.request.model"], "claude-sonnet-4-6");
    assert_eq!(a["gen_ai.conversation.id"], "4c1f7a2e-0b9d-4e31-8a55-2f6d0c9e7b14");
    // Input includes cache, as the conventions say; the cache figures are their own.
    assert_eq!(a["gen_ai.usage.input_tokens"], 32125);
    assert_eq!(a["gen_ai.usage.output_tokens"], 61);
    assert_eq!(a["gen_ai.usage.cache_read.input_tokens"], 31212);
    assert_eq!(a["gen_ai.usage.cache_creation.input_tokens"], 908);
    assert_eq!(a["agentgate.cost_usd"], 0.022831);
    assert!(root.get("status").is_none(), "a completed run leaves its status unset");
    for s in spans.iter().filter(|s| s.get("parentSpanId").is_some()) {
        assert_eq!(s["parentSpanId"], root["spanId"]);
        assert_eq!(s["traceId"], root["traceId"]);
    }
    let tools: Vec<&Value> = spans.iter().filter(|s| s["name"].as_str().unwrap().starts_with("execute_tool")).collect();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0]["name"], "execute_tool Glob");
    assert_eq!(tools[0]["kind"], 1, "INTERNAL");
    let t = attrs(tools[0]);
    assert_eq!((&t["gen_ai.tool.name"], &t["gen_ai.tool.call.id"]), (&json!("Glob"), &json!("toolu_01Gq3demo")));
    assert!(!t.contains_key("gen_ai.tool.call.arguments"), "arguments only when asked for");
    let chats: Vec<&Value> = spans.iter().filter(|s| s["name"].as_str().unwrap().starts_with("chat ")).collect();
    let input: u64 = chats.iter().map(|s| attrs(s)["gen_ai.usage.input_tokens"].as_u64().unwrap()).sum();
    assert_eq!(input, 32125, "the requests add up to the run");
}

#[test]
fn ids_are_hex_derived_from_the_whole_input_and_the_bytes_are_the_same_each_time() {
    let input = fixture("wuu/success.jsonl");
    let a = translate_bytes(&input, &Options::new(Some(Dialect::Wuu), Dialect::Otlp)).0;
    let b = translate_bytes(&input, &Options::new(Some(Dialect::Wuu), Dialect::Otlp)).0;
    assert_eq!(a, b);
    let docs = common::values(std::str::from_utf8(&a).unwrap());
    for s in spans(&docs) {
        let hex = |v: &Value, n: usize| {
            let t = v.as_str().unwrap();
            t.len() == n && t.bytes().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
        };
        assert!(hex(&s["traceId"], 32) && hex(&s["spanId"], 16), "{s}");
        assert!(s.get("parentSpanId").is_none_or(|p| hex(p, 16)));
        assert!(s["startTimeUnixNano"].is_string() && s["endTimeUnixNano"].is_string(), "64-bit integers are strings");
    }
    // Two runs that begin alike but differ later are two traces.
    let text = String::from_utf8(input.clone()).unwrap();
    let (head, last) = text.trim_end().rsplit_once('\n').unwrap();
    let other = format!("{head}\n{{\"type\":\"zz_note\"}}\n{last}\n").into_bytes();
    let c = common::values(
        std::str::from_utf8(&translate_bytes(&other, &Options::new(Some(Dialect::Wuu), Dialect::Otlp)).0).unwrap(),
    );
    assert_ne!(spans(&c)[0]["traceId"], spans(&docs)[0]["traceId"]);
}

#[test]
fn a_run_that_did_not_complete_ends_its_root_in_error_and_each_failed_call_too() {
    let docs = otlp(&fixture("wuu/timeout.jsonl"), Dialect::Wuu, |_| {});
    let timed_out = spans(&docs);
    let root = timed_out.iter().find(|s| s.get("parentSpanId").is_none()).unwrap();
    assert_eq!(root["status"]["code"], 2, "STATUS_CODE_ERROR");
    assert_eq!(attrs(root)["error.type"], "timeout");
    assert_eq!(attrs(root)["agentgate.outcome"], "timeout");

    let docs = otlp(&fixture("wuu/success.jsonl"), Dialect::Wuu, |_| {});
    let failed: Vec<Value> = spans(&docs).into_iter().filter(|s| s["name"] == "execute_tool bash").collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["status"]["code"], 2);
    assert_eq!(attrs(&failed[0])["error.type"], "failed");
}

#[test]
fn localcode_rounds_are_its_token_reports_and_times_follow_source_date_epoch() {
    let docs = otlp(&fixture("localcode/success.jsonl"), Dialect::Localcode, |o| {
        o.encode.source_date_epoch = Some(1_700_000_000)
    });
    let all = spans(&docs);
    let chats: Vec<(u64, u64)> = all
        .iter()
        .filter(|s| s["name"].as_str().unwrap().starts_with("chat "))
        .map(|s| {
            let a = attrs(s);
            (a["gen_ai.usage.input_tokens"].as_u64().unwrap(), a["gen_ai.usage.output_tokens"].as_u64().unwrap())
        })
        .collect();
    // The four turn_tokens lines of the fixture, each one model request.
    assert_eq!(chats, vec![(1200, 80), (1500, 200), (1650, 30), (1700, 40)]);
    let root = all.iter().find(|s| s.get("parentSpanId").is_none()).unwrap();
    let start: u64 = root["startTimeUnixNano"].as_str().unwrap().parse().unwrap();
    let end: u64 = root["endTimeUnixNano"].as_str().unwrap().parse().unwrap();
    assert!(start >= 1_700_000_000_000_000_000 && end > start, "{start} {end}");
    assert!(!attrs(root).contains_key("gen_ai.provider.name"), "localcode does not say its provider");
}

#[test]
fn token_metrics_take_the_released_names_or_the_latest() {
    let docs = otlp(&fixture("base-context/success.jsonl"), Dialect::BaseContext, |_| {});
    let metrics = docs.iter().find(|d| d.get("resourceMetrics").is_some()).unwrap();
    let scope = &metrics["resourceMetrics"][0]["scopeMetrics"][0];
    assert_eq!(metrics["resourceMetrics"][0]["schemaUrl"], "https://opentelemetry.io/schemas/1.41.0");
    let usage = scope["metrics"].as_array().unwrap().iter().find(|m| m["name"] == "gen_ai.client.token.usage").unwrap();
    assert_eq!(usage["unit"], "{token}");
    assert_eq!(usage["histogram"]["aggregationTemporality"], 1);
    let points = usage["histogram"]["dataPoints"].as_array().unwrap();
    let sum = |kind: &str| -> f64 {
        points.iter().filter(|p| attrs(p)["gen_ai.token.type"] == kind).map(|p| p["sum"].as_f64().unwrap()).sum()
    };
    // base-context's two messages: input 3+4120+1893 and 6+6013+212, output 96 and 41.
    assert_eq!((sum("input"), sum("output")), (12247.0, 137.0));
    let input = points.iter().find(|p| attrs(p)["gen_ai.token.type"] == "input").unwrap();
    assert_eq!(input["count"], "2", "two requests, a count as a string");
    assert_eq!(input["bucketCounts"].as_array().unwrap().len(), input["explicitBounds"].as_array().unwrap().len() + 1);

    let docs = otlp(&fixture("base-context/success.jsonl"), Dialect::BaseContext, |o| {
        o.encode.otlp_semconv = agentgate::dialect::otlp::Semconv::Latest
    });
    let metrics = docs.iter().find(|d| d.get("resourceMetrics").is_some()).unwrap();
    let all = metrics["resourceMetrics"][0]["scopeMetrics"][0]["metrics"].as_array().unwrap();
    let counter = |name: &str| -> u64 {
        let m = all.iter().find(|m| m["name"] == name).unwrap_or_else(|| panic!("{name}"));
        assert_eq!(m["sum"]["isMonotonic"], true);
        m["sum"]["dataPoints"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["asInt"].as_str().unwrap().parse::<u64>().unwrap())
            .sum()
    };
    assert_eq!(counter("gen_ai.client.inference.usage.input_tokens"), 12247);
    assert_eq!(counter("gen_ai.client.inference.usage.output_tokens"), 137);
    assert_eq!(counter("gen_ai.client.inference.usage.cache_read.input_tokens"), 10133);
    assert!(all.iter().any(|m| m["name"] == "gen_ai.client.inference.operation.input_tokens"));
    assert!(all.iter().all(|m| m["name"] != "gen_ai.client.token.usage"));
}

#[test]
fn tool_arguments_and_results_only_with_the_opt_in() {
    let input = fixture("adal/success.jsonl");
    let plain = spans(&otlp(&input, Dialect::Adal, |_| {}));
    assert!(plain.iter().all(|s| !attrs(s).contains_key("gen_ai.tool.call.arguments")));
    let with = spans(&otlp(&input, Dialect::Adal, |o| o.encode.otlp_tool_content = true));
    let bash = with.iter().find(|s| s["name"] == "execute_tool bash").unwrap();
    let a = attrs(bash);
    assert!(a["gen_ai.tool.call.arguments"].as_str().unwrap().contains("eslint"), "{a:?}");
    assert!(a.contains_key("gen_ai.tool.call.result"));
}

#[test]
fn a_run_of_many_calls_is_split_into_lines_under_the_budget() {
    let mut input = String::new();
    for i in 0..4000 {
        input.push_str(&format!(
            "{{\"type\":\"tool_call\",\"id\":\"call_{i}\",\"name\":\"bash\",\"args\":{{\"command\":\"echo {i}\"}}}}\n{{\"type\":\"tool_result\",\"id\":\"call_{i}\",\"name\":\"bash\",\"status\":\"completed\",\"output\":\"{i}\"}}\n"
        ));
    }
    input.push_str("{\"type\":\"complete\",\"exit_code\":0,\"session_id\":\"s\",\"model\":\"m\"}\n");
    let mut opts = Options::new(Some(Dialect::Adal), Dialect::Otlp);
    opts.encode.otlp_tool_content = true;
    let out = String::from_utf8(translate_bytes(input.as_bytes(), &opts).0).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.len() > 2, "{} lines", lines.len());
    assert!(
        lines.iter().all(|l| l.len() < agentgate::dialect::otlp::LINE_BUDGET + 64 * 1024),
        "every line near the budget"
    );
    let docs = common::values(&out);
    assert_eq!(spans(&docs).iter().filter(|s| s["name"] == "execute_tool bash").count(), 4000);
}

#[test]
fn otlp_is_written_not_read() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_agentgate"))
        .args(["--from", "otlp", "--to", "localcode"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "a usage error");
    assert!(!Dialect::all().any(|d| d == Dialect::Otlp));
    assert!(Dialect::target_names().contains(&"otlp"));
}

/// A fleet normalized to canonical first: the root names the agent each run came from.
#[test]
fn a_canonical_stream_is_named_after_the_agent_it_was_read_from() {
    let canonical = common::translate(&fixture("base-context/success.jsonl"), Dialect::BaseContext, Dialect::Canonical);
    let docs = otlp(canonical.as_bytes(), Dialect::Canonical, |_| {});
    let spans = spans(&docs);
    let root = spans.iter().find(|s| s.get("parentSpanId").is_none()).unwrap();
    assert_eq!(root["name"], "invoke_agent base-context");
    assert_eq!(attrs(root)["gen_ai.usage.input_tokens"], 12247);
}

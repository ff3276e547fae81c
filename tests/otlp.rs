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

/// The run's span: no parent (OTLP/JSON writes an empty id where protobuf has no bytes).
fn is_root(span: &Value) -> bool {
    span.get("parentSpanId").is_none_or(|p| p == "")
}

fn fixture(path: &str) -> Vec<u8> {
    std::fs::read(common::fixtures().join(path)).unwrap()
}

/// The spec's own example (claude-code.md): one run, one Glob call, run input 5 + 908 + 31212.
#[test]
fn a_run_is_one_invoke_agent_span_with_a_child_per_request_and_per_tool_call() {
    let docs = otlp(&fixture("claude-code/success.jsonl"), Dialect::ClaudeCode, |_| {});
    let spans: Vec<Value> = spans(&docs);
    let roots: Vec<&Value> = spans.iter().filter(|s| is_root(s)).collect();
    assert_eq!(roots.len(), 1);
    let root = roots[0];
    assert_eq!(root["name"], "invoke_agent claude-code");
    assert_eq!(root["kind"], 3, "CLIENT: the agent is another process");
    let a = attrs(root);
    assert_eq!(a["gen_ai.operation.name"], "invoke_agent");
    assert_eq!(a["gen_ai.agent.name"], "claude-code");
    assert_eq!(a["gen_ai.request.model"], "claude-sonnet-4-6");
    assert_eq!(a["gen_ai.conversation.id"], "4c1f7a2e-0b9d-4e31-8a55-2f6d0c9e7b14");
    assert_eq!(a["agentgate.cost_usd"], 0.022831);
    // The run is no model call: its span names no provider and carries no usage, which its
    // requests carry (docs/otlp.md, "Which span carries the tokens").
    assert!(!a.contains_key("gen_ai.provider.name"), "{a:?}");
    assert!(!a.keys().any(|k| k.starts_with("gen_ai.usage.")), "{a:?}");
    assert!(root["status"].is_null(), "a completed run leaves its status unset");
    for s in spans.iter().filter(|s| !is_root(s)) {
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
    assert!(chats.iter().all(|s| attrs(s)["gen_ai.provider.name"] == "anthropic"), "claude-code.md: Anthropic's API");
    // Summed over every span, as a receiver sums usage: the run's, each token once. Input
    // includes cache, as the conventions say; the cache figures are their own.
    let sum = |key: &str| -> u64 { spans.iter().filter_map(|s| attrs(s).get(key).and_then(Value::as_u64)).sum() };
    assert_eq!(sum("gen_ai.usage.input_tokens"), 5 + 908 + 31212);
    assert_eq!(sum("gen_ai.usage.output_tokens"), 61);
    assert_eq!(sum("gen_ai.usage.cache_read.input_tokens"), 31212);
    assert_eq!(sum("gen_ai.usage.cache_creation.input_tokens"), 908);
}

/// base-context names the provider on every assistant message (base-context.md), and states
/// times: the session header's, and each message's in milliseconds.
#[test]
fn base_context_chat_spans_name_the_provider_and_take_the_sources_times() {
    let all = spans(&otlp(&fixture("base-context/success.jsonl"), Dialect::BaseContext, |_| {}));
    let chats: Vec<&Value> = all.iter().filter(|s| s["name"].as_str().unwrap().starts_with("chat ")).collect();
    assert_eq!(chats.len(), 2);
    for c in &chats {
        assert_eq!(attrs(c)["gen_ai.provider.name"], "anthropic", "{c}");
    }
    let input: u64 = chats.iter().map(|s| attrs(s)["gen_ai.usage.input_tokens"].as_u64().unwrap()).sum();
    assert_eq!(input, 3 + 4120 + 1893 + 6 + 6013 + 212);
    let root = all.iter().find(|s| is_root(s)).unwrap();
    let time = |s: &Value, k: &str| -> u64 { s[k].as_str().unwrap().parse().unwrap() };
    // The header's "2026-03-16T10:12:03.512Z".
    assert_eq!(time(root, "startTimeUnixNano"), 1_773_655_923_512_000_000);
    // The last message's 1773655926215 ms, and the few records after it a microsecond apart.
    let end = time(root, "endTimeUnixNano");
    assert!((1_773_655_926_215_000_000..1_773_655_926_216_000_000).contains(&end), "{end}");
    for s in &all {
        assert!(time(s, "startTimeUnixNano") >= time(root, "startTimeUnixNano"), "{s}");
        assert!(time(s, "endTimeUnixNano") <= end, "{s}");
    }
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
        assert!(is_root(&s) || hex(&s["parentSpanId"], 16), "{s}");
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
    let root = timed_out.iter().find(|s| is_root(s)).unwrap();
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
fn localcode_rounds_are_its_token_reports_and_the_run_ends_at_source_date_epoch() {
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
    let root = all.iter().find(|s| is_root(s)).unwrap();
    let start: u64 = root["startTimeUnixNano"].as_str().unwrap().parse().unwrap();
    let end: u64 = root["endTimeUnixNano"].as_str().unwrap().parse().unwrap();
    // localcode states no time: the run ends at SOURCE_DATE_EPOCH, its records a millisecond
    // apart before it.
    assert_eq!(end, 1_700_000_000_000_000_000);
    assert!(start < end && (end - start).is_multiple_of(1_000_000), "{start} {end}");
    assert!(all.iter().all(|s| !attrs(s).contains_key("gen_ai.provider.name")), "localcode does not say its provider");
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
        m["sum"]["dataPoints"].as_array().unwrap().iter().map(|p| p["asInt"].as_u64().unwrap()).sum()
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
    assert!(lines.iter().all(|l| l.len() < 1024 * 1024), "every line under the 1 MiB line readers allow");
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
    let root = spans.iter().find(|s| is_root(s)).unwrap();
    assert_eq!(root["name"], "invoke_agent base-context");
    let chats: Vec<&Value> = spans.iter().filter(|s| s["name"].as_str().unwrap().starts_with("chat ")).collect();
    let input: u64 = chats.iter().map(|s| attrs(s)["gen_ai.usage.input_tokens"].as_u64().unwrap()).sum();
    assert_eq!(input, 12247);
    assert!(chats.iter().all(|s| attrs(s)["gen_ai.provider.name"] == "anthropic"), "canonical carries the provider");
}

/// The root span's start and end, from the binary's output.
fn root_times(out: &[u8]) -> (u64, u64) {
    let docs = common::values(std::str::from_utf8(out).unwrap());
    let all = spans(&docs);
    let root = all.iter().find(|s| is_root(s)).unwrap();
    let time = |k: &str| -> u64 { root[k].as_str().unwrap().parse().unwrap() };
    (time("startTimeUnixNano"), time("endTimeUnixNano"))
}

fn agentgate(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_agentgate"))
        .args(args)
        .env_remove("SOURCE_DATE_EPOCH")
        .output()
        .unwrap()
}

/// A source without times (codex) ends at the file's modification time, or at --otlp-time;
/// the same file and time give the same bytes.
#[test]
fn a_run_without_times_ends_at_its_files_modification_time_or_at_otlp_time() {
    let dir = common::temp_dir("otlp-mtime");
    let path = dir.join("run.jsonl");
    std::fs::write(&path, fixture("codex/success.jsonl")).unwrap();
    let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_780_000_000);
    std::fs::File::options().write(true).open(&path).unwrap().set_modified(when).unwrap();
    let file = path.to_str().unwrap();
    let a = agentgate(&["--to", "otlp", file]);
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    let (start, end) = root_times(&a.stdout);
    assert_eq!(end, 1_780_000_000_000_000_000);
    assert!(start < end && end - start < 1_000_000_000, "{start} {end}");
    assert_eq!(a.stdout, agentgate(&["--to", "otlp", file]).stdout, "same file, same time: same bytes");
    // 2026-01-01T00:00:00Z is 1767225600 s.
    let b = agentgate(&["--to", "otlp", "--otlp-time", "2026-01-01T00:00:00Z", file]);
    assert_eq!(root_times(&b.stdout).1, 1_767_225_600_000_000_000);
    let c = agentgate(&["--to", "otlp", "--otlp-time", "1767225600", file]);
    assert_eq!(b.stdout, c.stdout);
    let bad = agentgate(&["--to", "otlp", "--otlp-time", "yesterday", file]);
    assert_eq!(bad.status.code(), Some(2));
}

/// Under exec the run happens now: every span lies within the run's wall-clock time.
#[cfg(unix)]
#[test]
fn exec_takes_the_wall_clock() {
    let before = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    let fixture_path = common::fixtures().join("codex/success.jsonl");
    let out = agentgate(&["exec", "--as", "otlp", "--", "cat", fixture_path.to_str().unwrap()]);
    let after = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    let (start, end) = root_times(&out.stdout);
    assert!(before <= start && start <= end && end <= after, "{before} {start} {end} {after}");
}

/// The two wire forms are one set of messages: the OTLP/JSON lines read back with the official
/// types' serde, and the protobuf bytes decoded with prost, are the messages the encoder kept.
#[test]
fn the_json_lines_and_the_protobuf_bytes_are_the_same_official_messages() {
    use agentgate::dialect::otlp::{Encoder, ExportMetricsServiceRequest, ExportTraceServiceRequest, Kept};
    use prost::Message;

    let input = fixture("wuu/success.jsonl");
    let opts = Options::new(Some(Dialect::Wuu), Dialect::Otlp);
    let kept = Kept::default();
    let encoder = Box::new(Encoder::keeping(&opts.encode, kept.clone()));
    let mut none = Vec::new();
    agentgate::pipeline::translate_with(&input[..], &mut none, &opts, encoder, &mut |_| {}).unwrap();
    assert!(none.is_empty(), "a keeping encoder writes nothing");
    let runs = kept.borrow();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    let lines = String::from_utf8(translate_bytes(&input, &opts).0).unwrap();
    let mut lines = lines.lines();
    for t in &run.traces {
        let read: ExportTraceServiceRequest = serde_json::from_str(lines.next().unwrap()).unwrap();
        assert_eq!(&read, t);
        assert_eq!(&ExportTraceServiceRequest::decode(&t.encode_to_vec()[..]).unwrap(), t);
        let root = t.resource_spans[0].scope_spans[0].spans.iter().find(|s| s.parent_span_id.is_empty()).unwrap();
        assert_eq!((root.trace_id.len(), root.span_id.len()), (16, 8), "16- and 8-byte ids");
    }
    let metrics = run.metrics.as_ref().unwrap();
    let read: ExportMetricsServiceRequest = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(&read, metrics);
    assert_eq!(&ExportMetricsServiceRequest::decode(&metrics.encode_to_vec()[..]).unwrap(), metrics);
    assert!(lines.next().is_none());
}

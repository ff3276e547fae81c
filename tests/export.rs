//! `--otlp-endpoint` and `agentgate export` against a receiver played by a loopback stub
//! (std::net, in this process): what it is sent, and what agentgate does with each answer, as
//! the OTLP exporter specification asks (retry 429/502/503/504 and connection errors, never a
//! 400; nothing lost: a spool and exit 69). `tests/receiver.rs` and CI do the same against a
//! real receiver.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use agentgate::dialect::otlp::{ExportMetricsServiceRequest, ExportTraceServiceRequest};
use prost::Message;

/// One request as the stub read it.
#[derive(Debug, Clone)]
struct Request {
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    /// The status the stub answered.
    answered: u16,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The body, gunzipped where it says it is gzip.
    fn plain(&self) -> Vec<u8> {
        if self.header("content-encoding") == Some("gzip") {
            let mut out = Vec::new();
            flate2::read::GzDecoder::new(&self.body[..]).read_to_end(&mut out).unwrap();
            out
        } else {
            self.body.clone()
        }
    }

    fn traces(&self) -> ExportTraceServiceRequest {
        match self.header("content-type") {
            Some("application/x-protobuf") => ExportTraceServiceRequest::decode(&self.plain()[..]).unwrap(),
            _ => serde_json::from_slice(&self.plain()).unwrap(),
        }
    }
}

/// A stub OTLP/HTTP receiver on 127.0.0.1: answers the requests to `/v1/traces` with `script`
/// in turn (status, extra header, body), then 200; `/v1/metrics` always 200. Keeps every request.
struct Stub {
    url: String,
    seen: Arc<Mutex<Vec<Request>>>,
}

impl Stub {
    fn start(script: Vec<(u16, &'static str, &'static str)>) -> Stub {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(script.into_iter()));
        let kept = Arc::clone(&seen);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (seen, script) = (Arc::clone(&kept), Arc::clone(&script));
                std::thread::spawn(move || serve(stream, &seen, &script));
            }
        });
        Stub { url, seen }
    }

    fn requests(&self, path: &str) -> Vec<Request> {
        self.seen.lock().unwrap().iter().filter(|r| r.path == path).cloned().collect()
    }
}

type Script = Mutex<std::vec::IntoIter<(u16, &'static str, &'static str)>>;

/// Requests on one connection (the client keeps it alive), each answered.
fn serve(stream: TcpStream, seen: &Mutex<Vec<Request>>, script: &Script) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line.split_whitespace().nth(1).unwrap_or_default().to_string();
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            reader.read_line(&mut h).unwrap();
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            let (k, v) = h.split_once(':').unwrap();
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
        let length: usize = headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
            .map_or(0, |(_, v)| v.parse().unwrap());
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let (status, extra, answer) =
            if path == "/v1/traces" { script.lock().unwrap().next().unwrap_or((200, "", "")) } else { (200, "", "") };
        seen.lock().unwrap().push(Request { path, headers, body, answered: status });
        let mut head = format!("HTTP/1.1 {status} X\r\nContent-Length: {}\r\n", answer.len());
        if !answer.is_empty() {
            head.push_str("Content-Type: application/json\r\n");
        }
        if !extra.is_empty() {
            head.push_str(extra);
            head.push_str("\r\n");
        }
        head.push_str("\r\n");
        if writer.write_all(head.as_bytes()).and_then(|()| writer.write_all(answer.as_bytes())).is_err() {
            return;
        }
    }
}

fn agentgate(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_agentgate"));
    c.args(args);
    // The test's own configuration only.
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("OTEL_")) {
        c.env_remove(k);
    }
    c.envs(env.iter().copied()).output().unwrap()
}

fn fixture(path: &str) -> String {
    common::fixtures().join(path).to_str().unwrap().to_string()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The spans a request holds, by name.
fn span_names(r: &ExportTraceServiceRequest) -> Vec<String> {
    r.resource_spans.iter().flat_map(|rs| &rs.scope_spans).flat_map(|s| &s.spans).map(|s| s.name.clone()).collect()
}

#[test]
fn a_503_is_retried_and_the_run_is_delivered_once() {
    let stub = Stub::start(vec![(503, "", ""), (503, "Retry-After: 0", "")]);
    let file = fixture("claude-code/success.jsonl");
    let out = agentgate(&["--to", "otlp", "--otlp-endpoint", &stub.url, "--otlp-protocol", "http/json", &file], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stdout.is_empty(), "sent instead of written");
    let traces = stub.requests("/v1/traces");
    assert_eq!(traces.iter().map(|r| r.answered).collect::<Vec<_>>(), vec![503, 503, 200]);
    assert!(traces.iter().all(|r| r.body == traces[0].body), "the same batch each time");
    assert_eq!(traces.iter().filter(|r| r.answered == 200).count(), 1, "delivered once, no duplicate");
    let names = span_names(&traces[2].traces());
    assert_eq!(names.iter().filter(|n| n.starts_with("invoke_agent ")).count(), 1);
    assert!(names.contains(&"execute_tool Glob".to_string()), "{names:?}");
    assert_eq!(stub.requests("/v1/metrics").len(), 1);
    assert_eq!(traces[0].header("content-type"), Some("application/json"));
}

#[test]
fn a_400_is_not_retried_and_its_message_is_shown() {
    let stub = Stub::start(vec![(400, "", r#"{"code":3,"message":"span 3 has no name"}"#)]);
    let spool = common::temp_dir("export-400");
    let file = fixture("wuu/success.jsonl");
    let out =
        agentgate(&["--to", "otlp", "--otlp-endpoint", &stub.url, "--otlp-spool", spool.to_str().unwrap(), &file], &[]);
    assert_eq!(out.status.code(), Some(69), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("400") && err.contains("span 3 has no name") && err.contains("not retried"), "{err}");
    assert!(err.contains("1 of 1 runs not delivered"), "{err}");
    assert_eq!(stub.requests("/v1/traces").len(), 1, "not retried");
    assert_eq!(spooled(&spool).len(), 1, "the traces batch is kept; the metrics were delivered");
}

/// The files in a spool folder.
fn spooled(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().map(|e| e.path()).collect();
    v.sort();
    v
}

#[test]
fn a_receiver_down_spools_every_batch_exits_69_and_export_delivers_the_spool_later() {
    // A port nothing listens on.
    let down = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    let spool = common::temp_dir("export-down");
    let files = [fixture("codex/success.jsonl"), fixture("base-context/success.jsonl")];
    let started = std::time::Instant::now();
    let out = agentgate(
        &["summary", "--otlp-endpoint", &down, "--otlp-spool", spool.to_str().unwrap(), &files[0], &files[1]],
        &[],
    );
    assert!(started.elapsed().as_secs() < 40, "retries are bounded in time");
    assert_eq!(out.status.code(), Some(69), "{}", stderr(&out));
    assert!(stderr(&out).contains("2 of 2 runs not delivered"), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 2, "the summary is still written");
    let kept = spooled(&spool);
    assert_eq!(kept.len(), 2, "{kept:?}");
    for f in &kept {
        // One OTLP/JSON request a line, the otlpjsonfile receiver's form.
        let text = std::fs::read_to_string(f).unwrap();
        assert_eq!(text.lines().count(), 1);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert!(v.get("resourceSpans").is_some() || v.get("resourceMetrics").is_some());
    }

    let stub = Stub::start(vec![]);
    let out = agentgate(&["export", "--otlp-endpoint", &stub.url, spool.to_str().unwrap()], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(spooled(&spool).is_empty(), "what was accepted is removed");
    let traces = stub.requests("/v1/traces");
    assert_eq!(traces.len(), 1);
    let ids: std::collections::BTreeSet<Vec<u8>> = traces[0]
        .traces()
        .resource_spans
        .iter()
        .flat_map(|r| &r.scope_spans)
        .flat_map(|s| &s.spans)
        .map(|s| s.trace_id.clone())
        .collect();
    assert_eq!(ids.len(), 2, "both runs, one trace each");
    let metrics = stub.requests("/v1/metrics");
    assert_eq!(metrics.len(), 1);
    let m = ExportMetricsServiceRequest::decode(&metrics[0].plain()[..]).unwrap();
    assert_eq!(m.resource_metrics.len(), 2);
}

#[test]
fn headers_gzip_and_protobuf_from_flags_and_the_standard_variables() {
    let stub = Stub::start(vec![]);
    let file = fixture("adal/success.jsonl");
    let out = agentgate(
        &["--to", "otlp", "--otlp-header", "api-key=s3cret", &file],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &stub.url),
            ("OTEL_EXPORTER_OTLP_HEADERS", "x-team=fleet%20one,api-key=overridden"),
            ("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip"),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let traces = stub.requests("/v1/traces");
    assert_eq!(traces.len(), 1);
    let r = &traces[0];
    assert_eq!(r.header("api-key"), Some("s3cret"), "the flag over the variable");
    assert_eq!(r.header("x-team"), Some("fleet one"), "percent-decoded");
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    assert_eq!(r.header("content-type"), Some("application/x-protobuf"), "the specification's default");
    assert!(r.header("user-agent").is_some_and(|u| u.starts_with("agentgate/")));
    let names = span_names(&r.traces());
    assert!(names.contains(&"execute_tool bash".to_string()), "{names:?}");
}

#[test]
fn beside_another_dialect_stdout_is_unchanged_and_the_telemetry_is_sent() {
    let stub = Stub::start(vec![]);
    let file = fixture("localcode/success.jsonl");
    let plain = agentgate(&["--to", "wuu", &file], &[]);
    let both = agentgate(&["--to", "wuu", "--otlp-endpoint", &stub.url, &file], &[]);
    assert_eq!(both.status.code(), Some(0), "{}", stderr(&both));
    assert_eq!(both.stdout, plain.stdout);
    assert_eq!(stub.requests("/v1/traces").len(), 1);
    assert_eq!(stub.requests("/v1/metrics").len(), 1);
}

#[cfg(unix)]
#[test]
fn exec_speaks_its_dialect_and_sends_the_run_when_it_ends() {
    let stub = Stub::start(vec![]);
    let file = fixture("codex/success.jsonl");
    let plain = agentgate(&["exec", "--as", "adal", "--", "cat", &file], &[]);
    let sent = agentgate(&["exec", "--as", "adal", "--otlp-endpoint", &stub.url, "--", "cat", &file], &[]);
    assert_eq!(sent.status.code(), plain.status.code());
    assert_eq!(sent.stdout, plain.stdout);
    let traces = stub.requests("/v1/traces");
    assert_eq!(traces.len(), 1);
    let names = span_names(&traces[0].traces());
    assert_eq!(names.iter().filter(|n| n.starts_with("invoke_agent codex")).count(), 1, "{names:?}");
}

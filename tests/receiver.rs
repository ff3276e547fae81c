//! The export against a real OTLP receiver, otelite (crates.io), read back through its REST
//! API. Skipped, and said so, where otelite is not installed: `scripts/otelite.sh` installs it
//! (CI does, before `cargo test`), or name one with `AGENTGATE_OTELITE`.

mod common;

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// otelite where this machine has it: `AGENTGATE_OTELITE`, the CI's install, or on `PATH`.
fn otelite() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("AGENTGATE_OTELITE") {
        return Some(PathBuf::from(p));
    }
    let home = std::env::var_os("HOME").map(PathBuf::from)?;
    let ci = home.join(".cache/agentgate-ci/otelite/bin/otelite");
    if ci.is_file() {
        return Some(ci);
    }
    std::env::var_os("PATH")?.to_str()?.split(':').map(|d| PathBuf::from(d).join("otelite")).find(|p| p.is_file())
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// otelite serving on loopback, its storage and HOME in a folder of its own; stopped on drop.
struct Receiver {
    child: Child,
    api: u16,
    otlp: u16,
    grpc: u16,
    home: PathBuf,
    binary: PathBuf,
}

impl Receiver {
    fn start(binary: &PathBuf, home: PathBuf, ports: Option<(u16, u16, u16)>) -> Receiver {
        let (api, otlp, grpc) = ports.unwrap_or_else(|| (free_port(), free_port(), free_port()));
        std::fs::create_dir_all(&home).unwrap();
        let child = Command::new(binary)
            .args(["serve", "--addr", &format!("127.0.0.1:{api}"), "--storage-path"])
            .arg(home.join("data"))
            .env("HOME", &home)
            .env("OTELITE_DATA_DIR", home.join("data"))
            .env("OTELITE_OTLP_HTTP_PORT", otlp.to_string())
            .env("OTELITE_OTLP_GRPC_PORT", grpc.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let r = Receiver { child, api, otlp, grpc, home, binary: binary.clone() };
        let started = Instant::now();
        while r.get("/api/traces?limit=1").is_none() || std::net::TcpStream::connect(("127.0.0.1", otlp)).is_err() {
            assert!(started.elapsed() < Duration::from_secs(60), "otelite did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        r
    }

    fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.otlp)
    }

    fn get(&self, path: &str) -> Option<Value> {
        let mut r = ureq::get(&format!("http://127.0.0.1:{}{path}", self.api)).call().ok()?;
        serde_json::from_str(&r.body_mut().read_to_string().ok()?).ok()
    }

    /// Stopped, and started again on the same ports and storage.
    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn restart(&mut self) {
        self.stop();
        let again = Receiver::start(&self.binary, self.home.clone(), Some((self.api, self.otlp, self.grpc)));
        drop(std::mem::replace(self, again));
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.stop();
    }
}

fn agentgate(args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_agentgate"));
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("OTEL_")) {
        c.env_remove(k);
    }
    c.args(args).output().unwrap()
}

fn fixture(path: &str) -> String {
    common::fixtures().join(path).to_str().unwrap().to_string()
}

/// The trace id `--to otlp` gives a file: the one it is sent under.
fn trace_id(file: &str) -> String {
    let out = agentgate(&["--to", "otlp", file]);
    let line: Value = serde_json::from_slice(out.stdout.split(|b| *b == b'\n').next().unwrap()).unwrap();
    line["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"].as_str().unwrap().to_string()
}

/// The spans otelite holds for a trace, until they are all there.
fn spans(r: &Receiver, id: &str) -> Vec<Value> {
    let started = Instant::now();
    loop {
        if let Some(t) = r.get(&format!("/api/traces/{id}")) {
            if let Some(s) = t["spans"].as_array().filter(|s| !s.is_empty()) {
                return s.clone();
            }
        }
        assert!(started.elapsed() < Duration::from_secs(20), "trace {id} never arrived");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn sum(spans: &[Value], key: &str) -> u64 {
    spans.iter().filter_map(|s| s["attributes"][key].as_str().and_then(|v| v.parse::<u64>().ok())).sum()
}

#[test]
fn otelite_receives_each_run_once_with_its_tokens_counted_once_both_ways() {
    let Some(binary) = otelite() else {
        eprintln!("skipped: otelite is not installed (scripts/otelite.sh installs it; or set AGENTGATE_OTELITE)");
        return;
    };
    for protocol in ["http/json", "http/protobuf"] {
        let r = Receiver::start(&binary, common::temp_dir(&format!("otelite-{}", protocol.replace('/', "-"))), None);
        // claude-code's spec example: 5 + 908 + 31212 in, 61 out, one Glob call; Anthropic.
        let file = fixture("claude-code/success.jsonl");
        let out = agentgate(&["--to", "otlp", "--otlp-endpoint", &r.endpoint(), "--otlp-protocol", protocol, &file]);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let spans = spans(&r, &trace_id(&file));
        assert_eq!(spans.iter().filter(|s| s["name"] == "execute_tool Glob").count(), 1);
        assert_eq!(spans.iter().filter(|s| s["name"].as_str().unwrap().starts_with("invoke_agent")).count(), 1);
        assert_eq!(sum(&spans, "gen_ai.usage.input_tokens"), 32125);
        assert_eq!(sum(&spans, "gen_ai.usage.output_tokens"), 61);
        // The receiver's own sum over the spans that name a provider: each token once, and one
        // request per model call (one here), not one more for the run.
        let usage = r.get("/api/genai/usage").unwrap();
        assert_eq!(usage["summary"]["total_input_tokens"], 32125, "{usage}");
        assert_eq!(usage["summary"]["total_output_tokens"], 61, "{usage}");
        assert_eq!(usage["summary"]["total_requests"], 1, "{usage}");
    }
}

#[test]
fn otelite_stopped_then_started_gets_the_spool_from_export() {
    let Some(binary) = otelite() else {
        eprintln!("skipped: otelite is not installed (scripts/otelite.sh installs it; or set AGENTGATE_OTELITE)");
        return;
    };
    let mut r = Receiver::start(&binary, common::temp_dir("otelite-stopped"), None);
    r.stop();
    let spool = common::temp_dir("otelite-spool");
    let file = fixture("wuu/success.jsonl");
    let out =
        agentgate(&["--to", "otlp", "--otlp-endpoint", &r.endpoint(), "--otlp-spool", spool.to_str().unwrap(), &file]);
    assert_eq!(out.status.code(), Some(69), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("1 of 1 runs not delivered"));
    assert_eq!(std::fs::read_dir(&spool).unwrap().count(), 2, "the traces and the metrics batch");
    r.restart();
    let out = agentgate(&["export", "--otlp-endpoint", &r.endpoint(), spool.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_dir(&spool).unwrap().count(), 0, "what was accepted is removed");
    let spans = spans(&r, &trace_id(&file));
    assert!(spans.iter().any(|s| s["name"] == "execute_tool bash"), "{spans:?}");
}

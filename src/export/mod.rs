//! The OTLP/HTTP export (`--otlp-endpoint`, `agentgate export`): runs' telemetry sent to a
//! receiver the way the OpenTelemetry SDKs' exporters send it, and nothing lost on the way.
//!
//! Configuration follows the OTLP exporter specification: the flags, else the
//! `OTEL_EXPORTER_OTLP_*` variables (a signal's own, `OTEL_EXPORTER_OTLP_TRACES_*`, over the
//! general one), else the specification's defaults (`http/protobuf`, no compression, 10 s). A
//! general endpoint gets `/v1/traces` and `/v1/metrics` appended; a signal's own is used as is.
//!
//! Runs are gathered into batches of at most [`BATCH_BYTES`] bytes of protobuf per signal, one
//! request each. A request is retried on 429, 502, 503, 504 and on connection errors, at most
//! [`RETRIES`] times and for at most [`RETRY_TIME`], waiting an exponential backoff with jitter
//! or what `Retry-After` asks; any other answer is final (a 400's message is shown). A batch that
//! is not delivered is written to the spool folder (`--otlp-spool`) as one file of OTLP/JSON, the
//! form the Collector's `otlpjsonfile` receiver reads, and `agentgate export` sends such files
//! later. The HTTP client is blocking (ureq): no async runtime for one connection at a time.

mod http;
mod spool;

use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use agentgate::dialect::otlp::{ExportMetricsServiceRequest, ExportTraceServiceRequest, Telemetry};
use prost::Message;

use crate::cli::OtlpFlags;

pub use spool::export_command;

/// `EX_UNAVAILABLE` (sysexits): runs that could not be delivered.
pub const UNAVAILABLE: u8 = 69;

/// Bytes of protobuf one request holds at most (runs are not split across requests unless one
/// alone is larger); as OTLP/JSON about two to three times as many.
pub const BATCH_BYTES: usize = 1024 * 1024;

/// Retries of one request, at most...
pub const RETRIES: u32 = 5;
/// ...and the time spent waiting between them, at most.
pub const RETRY_TIME: Duration = Duration::from_secs(30);
/// The first wait; each next one doubles, within [`MAX_BACKOFF`], with jitter of ±50%.
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Json,
    Protobuf,
}

impl Protocol {
    fn content_type(self) -> &'static str {
        match self {
            Protocol::Json => "application/json",
            Protocol::Protobuf => "application/x-protobuf",
        }
    }
}

/// Where and how one signal is sent.
#[derive(Debug, Clone)]
pub struct Signal {
    pub url: String,
    pub protocol: Protocol,
    pub headers: Vec<(String, String)>,
    pub gzip: bool,
    pub timeout: Duration,
}

/// The export's configuration: a signal each for traces and metrics, and the spool.
#[derive(Debug, Clone)]
pub struct Config {
    pub traces: Signal,
    pub metrics: Signal,
    pub spool: Option<PathBuf>,
}

impl Config {
    /// From the flags, else the process's `OTEL_EXPORTER_OTLP_*` variables: `None` when neither
    /// names an endpoint (nothing is sent); `Err` with what is wrong for a value that cannot be
    /// taken.
    pub fn from_flags(flags: &OtlpFlags) -> Result<Option<Config>, String> {
        Config::with_env(flags, &|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()))
    }

    fn with_env(flags: &OtlpFlags, env: &dyn Fn(&str) -> Option<String>) -> Result<Option<Config>, String> {
        if flags.otlp_endpoint.as_deref() == Some("none") {
            return Ok(None);
        }
        let signal = |name: &str, path: &str| -> Result<Option<Signal>, String> {
            let upper = name.to_ascii_uppercase();
            // A signal's own variable over the general one.
            let var = |what: &str| {
                env(&format!("OTEL_EXPORTER_OTLP_{upper}_{what}"))
                    .or_else(|| env(&format!("OTEL_EXPORTER_OTLP_{what}")))
            };
            let url = match &flags.otlp_endpoint {
                Some(base) => Some(append(base, path)),
                None => env(&format!("OTEL_EXPORTER_OTLP_{upper}_ENDPOINT"))
                    .or_else(|| env("OTEL_EXPORTER_OTLP_ENDPOINT").map(|base| append(&base, path))),
            };
            let Some(url) = url else { return Ok(None) };
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(format!("the endpoint {url} is not an http:// or https:// URL"));
            }
            let protocol = match flags.otlp_protocol.clone().or_else(|| var("PROTOCOL")).as_deref().map(str::trim) {
                None | Some("http/protobuf") => Protocol::Protobuf,
                Some("http/json") => Protocol::Json,
                Some("grpc") => return Err("OTLP/gRPC is not sent: use http/protobuf or http/json".into()),
                Some(other) => {
                    return Err(format!(
                        "unknown OTLP protocol {} (http/protobuf or http/json)",
                        agentgate::error::quoted(other)
                    ))
                }
            };
            let gzip = match flags.otlp_compression.clone().or_else(|| var("COMPRESSION")).as_deref().map(str::trim) {
                None | Some("none") => false,
                Some("gzip") => true,
                Some(other) => {
                    return Err(format!("unknown OTLP compression {} (gzip or none)", agentgate::error::quoted(other)))
                }
            };
            let timeout = match (&flags.otlp_timeout, var("TIMEOUT")) {
                (Some(t), _) => *t,
                (None, Some(ms)) => Duration::from_millis(
                    ms.trim().parse().map_err(|_| format!("OTEL_EXPORTER_OTLP_TIMEOUT={ms} is not milliseconds"))?,
                ),
                (None, None) => Duration::from_secs(10),
            };
            // The variable's headers, then the flags' (a flag's key replaces the variable's).
            let mut headers = match var("HEADERS") {
                Some(h) => parse_headers(&h)?,
                None => Vec::new(),
            };
            for h in &flags.otlp_headers {
                let (k, v) = h.split_once('=').ok_or_else(|| format!("--otlp-header {h}: not KEY=VALUE"))?;
                let k = k.trim().to_string();
                headers.retain(|(old, _)| !old.eq_ignore_ascii_case(&k));
                headers.push((k, v.trim().to_string()));
            }
            Ok(Some(Signal { url, protocol, headers, gzip, timeout }))
        };
        let (Some(traces), Some(metrics)) = (signal("traces", "v1/traces")?, signal("metrics", "v1/metrics")?) else {
            return Ok(None);
        };
        Ok(Some(Config { traces, metrics, spool: flags.otlp_spool.clone() }))
    }
}

/// A general endpoint with a signal's path appended, as the specification builds it.
fn append(base: &str, path: &str) -> String {
    let base = base.trim();
    if base.ends_with('/') {
        format!("{base}{path}")
    } else {
        format!("{base}/{path}")
    }
}

/// `OTEL_EXPORTER_OTLP_HEADERS`: `key1=value1,key2=value2`, values percent-decoded (the W3C
/// Baggage form the specification names).
pub(crate) fn parse_headers(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').ok_or_else(|| {
            format!("OTEL_EXPORTER_OTLP_HEADERS: {} is not key=value", agentgate::error::quoted(pair))
        })?;
        out.push((percent_decode(k.trim()), percent_decode(v.trim())));
    }
    Ok(out)
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One batch of a signal being gathered: its runs' resources, and which runs they are.
enum Payload {
    Traces(ExportTraceServiceRequest),
    Metrics(ExportMetricsServiceRequest),
}

impl Payload {
    fn len(&self) -> usize {
        match self {
            Payload::Traces(t) => t.encoded_len(),
            Payload::Metrics(m) => m.encoded_len(),
        }
    }

    fn is_empty(&self) -> bool {
        match self {
            Payload::Traces(t) => t.resource_spans.is_empty(),
            Payload::Metrics(m) => m.resource_metrics.is_empty(),
        }
    }

    fn body(&self, protocol: Protocol) -> Vec<u8> {
        match (self, protocol) {
            (Payload::Traces(t), Protocol::Protobuf) => t.encode_to_vec(),
            (Payload::Metrics(m), Protocol::Protobuf) => m.encode_to_vec(),
            (Payload::Traces(t), Protocol::Json) => serde_json::to_vec(t).unwrap_or_default(),
            (Payload::Metrics(m), Protocol::Json) => serde_json::to_vec(m).unwrap_or_default(),
        }
    }

    /// The OTLP/JSON line the spool keeps.
    fn json_line(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            Payload::Traces(t) => agentgate::dialect::otlp::write_json(t, &mut out),
            Payload::Metrics(m) => agentgate::dialect::otlp::write_json(m, &mut out),
        }
        out
    }

    fn signal(&self) -> &'static str {
        match self {
            Payload::Traces(_) => "traces",
            Payload::Metrics(_) => "metrics",
        }
    }
}

struct Batch {
    payload: Payload,
    runs: BTreeSet<usize>,
}

impl Batch {
    fn traces() -> Self {
        Batch { payload: Payload::Traces(ExportTraceServiceRequest::default()), runs: BTreeSet::new() }
    }
    fn metrics() -> Self {
        Batch { payload: Payload::Metrics(ExportMetricsServiceRequest::default()), runs: BTreeSet::new() }
    }
}

/// What became of one request.
enum Sent {
    Delivered,
    /// Not delivered, and why (said once on stderr by the caller).
    Failed(String),
}

/// The exporter: runs in, batches out, and a tally of what was delivered.
pub struct Exporter {
    config: Config,
    client: http::Client,
    traces: Batch,
    metrics: Batch,
    /// Runs handed in, and those some part of which was not delivered.
    runs: usize,
    failed: BTreeSet<usize>,
    spooled: usize,
    retries: u64,
    /// Bytes delivered (request bodies as sent).
    pub bytes: u64,
    /// The receiver did not answer the last batch after every retry: later batches get one try.
    down: bool,
    /// The progress line, drawn on a terminal when the batch is large: how many runs are
    /// expected, when the export started, when the line was last drawn.
    progress: Option<(usize, Instant, Instant)>,
    drawn: bool,
    /// Failures already said, so that a receiver down is said once, not per batch.
    said: BTreeSet<String>,
}

impl Exporter {
    /// `expected` runs: a progress line on stderr for many of them when it is a terminal.
    pub fn new(config: Config, expected: usize) -> Self {
        let progress =
            (expected > 1 && std::io::stderr().is_terminal()).then(|| (expected, Instant::now(), Instant::now()));
        Exporter {
            client: http::Client::new(),
            config,
            traces: Batch::traces(),
            metrics: Batch::metrics(),
            runs: 0,
            failed: BTreeSet::new(),
            spooled: 0,
            retries: 0,
            bytes: 0,
            down: false,
            progress,
            drawn: false,
            said: BTreeSet::new(),
        }
    }

    /// One run's telemetry, sent once its batch is full (or at [`Exporter::finish`]).
    pub fn add(&mut self, run: Telemetry) {
        let n = self.runs;
        self.runs += 1;
        for t in run.traces {
            if self.traces.payload.len() + t.encoded_len() > BATCH_BYTES && !self.traces.payload.is_empty() {
                self.flush_traces();
            }
            if let Payload::Traces(batch) = &mut self.traces.payload {
                batch.resource_spans.extend(t.resource_spans);
            }
            self.traces.runs.insert(n);
        }
        if let Some(m) = run.metrics {
            if self.metrics.payload.len() + m.encoded_len() > BATCH_BYTES && !self.metrics.payload.is_empty() {
                self.flush_metrics();
            }
            if let Payload::Metrics(batch) = &mut self.metrics.payload {
                batch.resource_metrics.extend(m.resource_metrics);
            }
            self.metrics.runs.insert(n);
        }
        self.draw();
    }

    /// A run that made no telemetry (its input could not be read): counted as not delivered.
    pub fn add_missing(&mut self) {
        self.failed.insert(self.runs);
        self.runs += 1;
    }

    fn flush_traces(&mut self) {
        let batch = std::mem::replace(&mut self.traces, Batch::traces());
        let signal = self.config.traces.clone();
        self.send_batch(batch, &signal);
    }

    fn flush_metrics(&mut self) {
        let batch = std::mem::replace(&mut self.metrics, Batch::metrics());
        let signal = self.config.metrics.clone();
        self.send_batch(batch, &signal);
    }

    fn send_batch(&mut self, batch: Batch, signal: &Signal) {
        if batch.payload.is_empty() {
            return;
        }
        let body = batch.payload.body(signal.protocol);
        match self.send(&body, signal) {
            Sent::Delivered => {}
            Sent::Failed(why) => {
                if self.said.insert(why.clone()) {
                    self.clear();
                    eprintln!("agentgate: otlp: {why}");
                }
                self.failed.extend(batch.runs.iter().copied());
                if let Some(dir) = self.config.spool.clone() {
                    match spool::write(&dir, batch.payload.signal(), &batch.payload.json_line()) {
                        Ok(_) => self.spooled += 1,
                        Err(e) => {
                            self.clear();
                            eprintln!("agentgate: otlp: cannot write the spool in {}: {e}", dir.display());
                        }
                    }
                }
            }
        }
        self.draw();
    }

    /// One request, retried as the specification says: on 429, 502, 503, 504 and on connection
    /// errors, with exponential backoff and jitter, or after what `Retry-After` asks.
    fn send(&mut self, body: &[u8], signal: &Signal) -> Sent {
        let started = Instant::now();
        let mut backoff = FIRST_BACKOFF;
        let mut attempt = 0;
        loop {
            let answer = self.client.post(signal, body);
            let (retryable, why, asked) = match answer {
                http::Answer::Accepted { rejected } => {
                    if let Some(r) = rejected {
                        // Partial success: the receiver took the request and refused part of it;
                        // not to be retried (the specification), so said.
                        self.clear();
                        eprintln!("agentgate: otlp: {} accepted the batch but rejected {r}", signal.url);
                    }
                    self.down = false;
                    self.bytes += body.len() as u64;
                    return Sent::Delivered;
                }
                http::Answer::Status { code, message, retry_after } => {
                    let why = format!(
                        "{} answered {code}{}",
                        signal.url,
                        message.map(|m| format!(": {m}")).unwrap_or_default()
                    );
                    (matches!(code, 429 | 502 | 503 | 504), why, retry_after)
                }
                http::Answer::Unreachable(e) => (true, format!("{} cannot be reached: {e}", signal.url), None),
            };
            if !retryable {
                return Sent::Failed(format!("{why} (not retried)"));
            }
            if self.down || attempt >= RETRIES {
                self.down = true;
                return Sent::Failed(format!("{why} (after {attempt} retries)"));
            }
            let wait = asked.unwrap_or_else(|| jitter(backoff));
            if started.elapsed() + wait > RETRY_TIME {
                self.down = true;
                return Sent::Failed(format!("{why} (retries would take over {}s)", RETRY_TIME.as_secs()));
            }
            std::thread::sleep(wait);
            backoff = (backoff * 2).min(MAX_BACKOFF);
            attempt += 1;
            self.retries += 1;
            self.draw();
        }
    }

    /// Sends what is still gathered; the runs not delivered, if any.
    pub fn finish(mut self) -> Report {
        self.flush_traces();
        self.flush_metrics();
        self.clear();
        Report {
            runs: self.runs,
            undelivered: self.failed.len(),
            spooled: self.spooled,
            spool: self.config.spool.clone(),
        }
    }

    /// The progress line: runs sent, retries, batches spooled.
    fn draw(&mut self) {
        let Some((expected, started, last)) = &mut self.progress else { return };
        // Once the export has taken a moment, and ten times a second at most.
        if started.elapsed() < Duration::from_millis(500) || (self.drawn && last.elapsed() < Duration::from_millis(100))
        {
            return;
        }
        *last = Instant::now();
        let expected = *expected;
        eprint!(
            "\r\x1b[Kagentgate: otlp: {}/{expected} runs, {} not delivered, {} retries, {} batches spooled",
            self.runs,
            self.failed.len(),
            self.retries,
            self.spooled
        );
        self.drawn = true;
    }

    fn clear(&mut self) {
        if self.drawn {
            eprint!("\r\x1b[K");
            self.drawn = false;
        }
    }
}

/// What the export came to.
pub struct Report {
    pub runs: usize,
    pub undelivered: usize,
    pub spooled: usize,
    pub spool: Option<PathBuf>,
}

impl Report {
    /// Says on stderr what was not delivered, and gives the exit status for it: 0, or 69.
    pub fn status(&self) -> u8 {
        if self.undelivered == 0 {
            return 0;
        }
        let what = format!("{} of {} runs not delivered", self.undelivered, self.runs);
        match &self.spool {
            Some(dir) if self.spooled > 0 => eprintln!(
                "agentgate: otlp: {what}; {} batches spooled in {} (send them with `agentgate export --otlp-endpoint URL {}`)",
                self.spooled,
                dir.display(),
                dir.display()
            ),
            _ => eprintln!("agentgate: otlp: {what} (no --otlp-spool to keep them)"),
        }
        UNAVAILABLE
    }
}

/// A wait of `d` ± 50%, from a generator seeded by the clock and the process (no crate for it).
fn jitter(d: Duration) -> Duration {
    use std::cell::Cell;
    thread_local!(static STATE: Cell<u64> = const { Cell::new(0) });
    let r = STATE.with(|s| {
        let mut x = s.get();
        if x == 0 {
            let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
            x = (t.as_nanos() as u64) ^ (u64::from(std::process::id()) << 32) | 1;
        }
        // xorshift64
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.set(x);
        x
    });
    let factor = 0.5 + (r % 1_000_000) as f64 / 1_000_000.0;
    d.mul_f64(factor)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(endpoint: Option<&str>) -> OtlpFlags {
        OtlpFlags { otlp_endpoint: endpoint.map(String::from), ..OtlpFlags::default() }
    }

    #[test]
    fn a_general_endpoint_gets_the_signal_paths_and_a_signals_own_is_used_as_is() {
        let env = |k: &str| match k {
            "OTEL_EXPORTER_OTLP_ENDPOINT" => Some("http://collector:4318".to_string()),
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT" => Some("http://metrics:9000/custom".to_string()),
            "OTEL_EXPORTER_OTLP_HEADERS" => Some("api-key=secret%20one, x-team=a".to_string()),
            "OTEL_EXPORTER_OTLP_TIMEOUT" => Some("2500".to_string()),
            _ => None,
        };
        let c = Config::with_env(&flags(None), &env).unwrap().unwrap();
        assert_eq!(c.traces.url, "http://collector:4318/v1/traces");
        assert_eq!(c.metrics.url, "http://metrics:9000/custom");
        assert_eq!(c.traces.protocol, Protocol::Protobuf, "the specification's default");
        assert_eq!(c.traces.headers, vec![("api-key".into(), "secret one".into()), ("x-team".into(), "a".into())]);
        assert_eq!(c.traces.timeout, Duration::from_millis(2500));
        // The flag over every variable.
        let mut f = flags(Some("http://127.0.0.1:1/"));
        f.otlp_headers = vec!["X-Team=b".into()];
        f.otlp_protocol = Some("http/json".into());
        let c = Config::with_env(&f, &env).unwrap().unwrap();
        assert_eq!(
            (c.traces.url.as_str(), c.metrics.url.as_str()),
            ("http://127.0.0.1:1/v1/traces", "http://127.0.0.1:1/v1/metrics")
        );
        assert_eq!(c.traces.headers, vec![("api-key".into(), "secret one".into()), ("X-Team".into(), "b".into())]);
        assert_eq!(c.traces.protocol, Protocol::Json);
    }

    #[test]
    fn nothing_is_sent_without_an_endpoint_and_grpc_is_refused() {
        assert!(Config::with_env(&flags(None), &|_| None).unwrap().is_none());
        assert!(Config::with_env(&flags(Some("none")), &|_| Some("http://x".into())).unwrap().is_none());
        let grpc = |k: &str| (k == "OTEL_EXPORTER_OTLP_PROTOCOL").then(|| "grpc".to_string());
        assert!(Config::with_env(&flags(Some("http://x")), &grpc).unwrap_err().contains("gRPC"));
        assert!(Config::with_env(&flags(Some("ftp://x")), &|_| None).is_err());
    }

    #[test]
    fn jitter_stays_within_half_either_way() {
        for _ in 0..1000 {
            let j = jitter(Duration::from_millis(100));
            assert!(j >= Duration::from_millis(50) && j <= Duration::from_millis(150), "{j:?}");
        }
    }
}

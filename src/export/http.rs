//! One OTLP/HTTP request and what its answer means: accepted (maybe in part), a status with the
//! receiver's message and `Retry-After`, or no answer at all.

use std::io::Write;
use std::time::Duration;

use prost::Message;

use super::Signal;

/// The longest answer read: a status message, not a payload.
const ANSWER_BYTES: u64 = 64 * 1024;

pub enum Answer {
    /// 2xx; with what the receiver rejected of it, where it said (a partial success).
    Accepted { rejected: Option<String> },
    /// Any other status, the receiver's message where it gave one, and the wait `Retry-After` asks.
    Status { code: u16, message: Option<String>, retry_after: Option<Duration> },
    /// No answer: the connection failed or timed out.
    Unreachable(String),
}

/// `google.rpc.Status`, as OTLP/HTTP receivers answer a failed request in protobuf: its message.
#[derive(Clone, PartialEq, prost::Message)]
struct RpcStatus {
    #[prost(int32, tag = "1")]
    code: i32,
    #[prost(string, tag = "2")]
    message: String,
}

pub struct Client {
    agent: ureq::Agent,
}

impl Client {
    pub fn new() -> Self {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .user_agent(concat!("agentgate/", env!("CARGO_PKG_VERSION")))
            .build();
        Client { agent: config.into() }
    }

    pub fn post(&self, signal: &Signal, body: &[u8]) -> Answer {
        let gzipped;
        let body = if signal.gzip {
            let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gzipped = z.write_all(body).and_then(|()| z.finish()).unwrap_or_default();
            &gzipped[..]
        } else {
            body
        };
        let mut request = self.agent.post(&signal.url).header("Content-Type", signal.protocol.content_type());
        if signal.gzip {
            request = request.header("Content-Encoding", "gzip");
        }
        for (k, v) in &signal.headers {
            request = request.header(k.as_str(), v.as_str());
        }
        let request = request.config().timeout_global(Some(signal.timeout)).build();
        let mut response = match request.send(body) {
            Ok(r) => r,
            Err(e) => return Answer::Unreachable(e.to_string()),
        };
        let code = response.status().as_u16();
        let header = |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
        let (content_type, retry_after) = (header("content-type").unwrap_or_default(), header("retry-after"));
        let answer = response.body_mut().with_config().limit(ANSWER_BYTES).read_to_vec().unwrap_or_default();
        let json = content_type.contains("json");
        if (200..300).contains(&code) {
            return Answer::Accepted { rejected: partial_success(&answer, json, signal) };
        }
        let message = if content_type.contains("protobuf") {
            RpcStatus::decode(&answer[..]).ok().map(|s| s.message)
        } else if json {
            serde_json::from_slice::<serde_json::Value>(&answer)
                .ok()
                .and_then(|v| v.get("message").and_then(|m| m.as_str()).map(str::to_string))
        } else {
            Some(String::from_utf8_lossy(&answer).into_owned())
        };
        let message = message.map(|m| agentgate::error::one_line(m.trim()).into_owned()).filter(|m| !m.is_empty());
        Answer::Status { code, message, retry_after: retry_after.as_deref().and_then(parse_retry_after) }
    }
}

/// What an accepted request's answer says the receiver rejected of it (`partial_success`).
fn partial_success(answer: &[u8], json: bool, signal: &Signal) -> Option<String> {
    if answer.is_empty() {
        return None;
    }
    let traces = signal.url.ends_with("traces");
    let (rejected, message, what) = if json {
        let v: serde_json::Value = serde_json::from_slice(answer).ok()?;
        let p = v.get("partialSuccess")?;
        let n = p.get("rejectedSpans").or_else(|| p.get("rejectedDataPoints"))?;
        let n = n.as_i64().or_else(|| n.as_str().and_then(|s| s.parse().ok()))?;
        (
            n,
            p.get("errorMessage").and_then(|m| m.as_str()).unwrap_or_default().to_string(),
            if traces { "spans" } else { "data points" },
        )
    } else if traces {
        let p = opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceResponse::decode(answer)
            .ok()?
            .partial_success?;
        (p.rejected_spans, p.error_message, "spans")
    } else {
        let p = opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceResponse::decode(answer)
            .ok()?
            .partial_success?;
        (p.rejected_data_points, p.error_message, "data points")
    };
    (rejected > 0).then(|| {
        format!("{rejected} {what}{}", if message.is_empty() { String::new() } else { format!(": {message}") })
    })
}

/// `Retry-After`: a number of seconds (an HTTP date is taken as no advice: the backoff decides).
fn parse_retry_after(v: &str) -> Option<Duration> {
    v.trim().parse::<u64>().ok().map(Duration::from_secs)
}

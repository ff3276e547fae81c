//! otlp: a run as OpenTelemetry traces and metrics, in the OTLP/JSON form the Collector's
//! `otlpjsonfile` receiver reads (one complete `ExportTraceServiceRequest` or
//! `ExportMetricsServiceRequest` per line), following the GenAI semantic conventions. A target
//! only: nothing reads OTLP back into a run. Contract and outcome table: `mappings/otlp.json`;
//! the rules in full: `docs/otlp.md`.
//!
//! Spans: one `invoke_agent {agent}` span per run (kind CLIENT: the agent is another process),
//! its children one `chat {model}` span per model request and one `execute_tool {tool}` span per
//! tool call. A request is a round where the source has rounds, else a round's usage report
//! (localcode's `turn_tokens`), else a turn, else the run; its usage is what the run's totals
//! grew by over it, so the requests add up to the run. The requests alone carry usage and the
//! provider, so that a receiver summing usage over spans counts each token once (the root is no
//! model call). Metrics: token usage per request, by the released conventions' names
//! (`gen_ai.client.token.usage`) or, with `--otlp-semconv latest`, the GenAI repository's newer
//! ones.
//!
//! OTLP/JSON: lowerCamelCase keys, enums as integers, 64-bit integers as decimal strings, trace
//! and span ids as lowercase hex (32 and 16 digits) made from the SHA-256 of the whole input,
//! so the same input gives the same bytes. That id is known only at the end, so a run's spans
//! are held (a few hundred bytes each; no text) and written when it ends, in lines of at most
//! [`SPAN_BUDGET`] bytes of spans. Times (`Clock`): the source's where it states them, the
//! clock's with `exec`, else counted back from the run's end as the caller knows it.

use std::cell::RefCell;
use std::rc::Rc;

use indexmap::IndexMap;
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, InstrumentationScope, KeyValue};
use opentelemetry_proto::tonic::metrics::v1::{
    metric::Data, number_data_point, Histogram, HistogramDataPoint, Metric, NumberDataPoint, ResourceMetrics,
    ScopeMetrics, Sum,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{self as proto, ResourceSpans, ScopeSpans, Status};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

pub use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
pub use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;

use crate::codec::make_room;
use crate::codec::Context;
use crate::codec::{Dialect, Encode, EncodeOptions, Record, Sink};
use crate::model::{Basis, Event, Outcome, Scope, Tokens, ToolStatus};
use crate::report::Fate;

/// The released semantic conventions the default names follow.
pub const SCHEMA_URL: &str = "https://opentelemetry.io/schemas/1.41.0";

/// Bytes of spans (in protobuf form) one request holds at most before the next one starts: a
/// line of OTLP/JSON stays well under the 1 MiB that line readers commonly allow (JSON writes a
/// span in two to three times its protobuf bytes; escaped tool content at most six), and an
/// exported request under what receivers take.
pub const SPAN_BUDGET: usize = 128 * 1024;

/// Characters of a tool's arguments or result kept with `--otlp-tool-content`.
pub const CONTENT_CHARS: usize = 16 * 1024;

/// `gen_ai.client.token.usage`'s bucket boundaries, as the conventions give them.
const TOKEN_BOUNDS: [u64; 14] =
    [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];

const KIND_INTERNAL: i32 = proto::span::SpanKind::Internal as i32;
const KIND_CLIENT: i32 = proto::span::SpanKind::Client as i32;
const STATUS_ERROR: i32 = proto::status::StatusCode::Error as i32;
const DELTA: i32 = opentelemetry_proto::tonic::metrics::v1::AggregationTemporality::Delta as i32;

/// One run's telemetry as the official OTLP messages: its spans (in requests of at most
/// [`SPAN_BUDGET`] bytes of spans) and its token metrics.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Telemetry {
    pub traces: Vec<ExportTraceServiceRequest>,
    pub metrics: Option<ExportMetricsServiceRequest>,
}

impl Telemetry {
    /// The OTLP/JSON form the Collector's `otlpjsonfile` receiver reads: one request a line.
    pub fn write_json_lines(&self, out: &mut Vec<u8>) {
        for t in &self.traces {
            write_json(t, out);
        }
        if let Some(m) = &self.metrics {
            write_json(m, out);
        }
    }
}

/// A message as one line of OTLP/JSON (the official types' serde: lowerCamelCase keys, enums as
/// integers, hex ids, 64-bit integers as strings).
pub fn write_json<T: serde::Serialize>(message: &T, out: &mut Vec<u8>) {
    // Writing to a Vec fails only for a map key that is no string, which these types have none of.
    let _ = serde_json::to_writer(&mut *out, message);
    out.push(b'\n');
}

/// Where an encoder that keeps its runs puts them, instead of writing lines ([`Encoder::keeping`]).
pub type Kept = Rc<RefCell<Vec<Telemetry>>>;

pub use crate::codec::Semconv;

/// A span held until the run's trace id is known.
#[derive(Debug, Clone)]
struct Span {
    /// 0 for the run's root, else the order it was opened in.
    n: u64,
    name: String,
    kind: i32,
    start: At,
    end: At,
    attributes: Vec<(&'static str, Value)>,
    /// An error: its `error.type` and message.
    error: Option<(String, String)>,
}

/// A model request being measured: where the run's totals stood when it began.
#[derive(Debug, Clone)]
struct Request {
    start: At,
    end: At,
    before: Tokens,
    model: Option<String>,
    /// The provider the source named for it, where it did.
    provider: Option<String>,
    /// Its usage, once it has ended.
    usage: Tokens,
}

impl Request {
    fn new(start: At, before: Tokens, model: Option<String>) -> Self {
        Request { start, end: start, before, model, provider: None, usage: Tokens::default() }
    }

    fn close(&mut self, end: At, now: &Tokens) {
        self.end = end;
        self.usage = now.since(&self.before);
    }
}

/// Requests told by where each began: each ends where the next begins, its usage what the
/// run's totals grew by meanwhile (the first's from nothing, so that what came before the first
/// is its), the last's up to the run's `totals` at `end`.
fn partition(mut requests: Vec<Request>, end: At, totals: &Tokens) -> Vec<Request> {
    if let Some(first) = requests.first_mut() {
        first.before = Tokens::default();
    }
    let n = requests.len();
    for i in 0..n {
        let (stop, until) = match requests.get(i + 1) {
            Some(next) => (next.before, next.start),
            None => (*totals, end),
        };
        requests[i].close(until, &stop);
    }
    requests
}

/// A record's time: nanoseconds since the Unix epoch where known as it arrives (the source
/// stated it, or `exec`'s clock read it), else its place in the stream, made a time when the run
/// ends ([`Clock::resolve`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    Ns(u64),
    Tick(u64),
}

/// Records with no time of their own are this far apart: a millisecond, so that a trace view
/// shows each span with a width...
const TICK_NS: u64 = 1_000_000;
/// ...and a microsecond after a time the source stated, so that records between two stated
/// times (a model streams many a second) stay between them.
const STATED_TICK_NS: u64 = 1_000;

/// Where the run's times come from: the source's stated times, else the run's end as the
/// caller knows it (`--otlp-time`, `SOURCE_DATE_EPOCH`, the file's modification time), counted
/// back one [`TICK_NS`] per record; with `exec`, the clock as each record arrives.
#[derive(Debug, Default)]
struct Clock {
    live: bool,
    /// The run's end where the source states no time (nanoseconds).
    end: Option<u64>,
    /// Records seen.
    ticks: u64,
    /// The first time the source stated, and at which record.
    first: Option<(u64, u64)>,
    /// The last time stated (or counted on from one), and at which record.
    last: Option<(u64, u64)>,
}

impl Clock {
    /// The time of the next record; `stated` is the time it states, where it states one.
    fn tick(&mut self, stated: Option<u64>) -> At {
        self.ticks += 1;
        if self.live {
            let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
            return At::Ns(u64::try_from(t.as_nanos()).unwrap_or(u64::MAX));
        }
        let counted = self.last.map(|(tick, ns)| ns.saturating_add((self.ticks - tick).saturating_mul(STATED_TICK_NS)));
        match (stated, counted) {
            (Some(t), counted) => {
                // Never back in time: a stated time earlier than the one counted is read as it.
                let t = counted.map_or(t, |c| c.max(t));
                self.first.get_or_insert((self.ticks, t));
                self.last = Some((self.ticks, t));
                At::Ns(t)
            }
            (None, Some(c)) => At::Ns(c),
            (None, None) => At::Tick(self.ticks),
        }
    }

    /// A time in nanoseconds, once the run has ended: a record before the source's first stated
    /// time is counted back from it; in a run with none, back from the run's end; with no end
    /// known, on from the Unix epoch (what a library caller that gives none gets).
    fn resolve(&self, at: At) -> u64 {
        let n = match at {
            At::Ns(t) => return t,
            At::Tick(n) => n,
        };
        match (self.first, self.end) {
            (Some((tick, ns)), _) => ns.saturating_sub(tick.saturating_sub(n).saturating_mul(TICK_NS)),
            (None, Some(end)) => end.saturating_sub(self.ticks.saturating_sub(n).saturating_mul(TICK_NS)),
            (None, None) => n.saturating_mul(TICK_NS),
        }
    }
}

#[derive(Default)]
pub struct Encoder {
    semconv: Semconv,
    content: bool,
    clock: Clock,
    started: bool,
    start: At,
    agent: String,
    /// The provider the source named last, or the one its dialect's agent calls.
    provider: Option<String>,
    models: Vec<String>,
    conversation: Option<String>,
    spans: Vec<Span>,
    made: u64,
    /// Calls open, by id: their span (without its end).
    tools: IndexMap<String, Span>,
    /// Requests as rounds (from each round's start), as round usage reports, and as turns.
    rounds: Vec<Request>,
    reports: Vec<Request>,
    turns: Vec<Request>,
    basis: Vec<&'static str>,
    done: bool,
    /// Runs are kept here as messages rather than written as lines.
    keep: Option<Kept>,
}

impl Default for At {
    fn default() -> Self {
        At::Tick(0)
    }
}

impl Encoder {
    pub fn new(opts: &EncodeOptions) -> Self {
        let end = opts.run_end_ns.or_else(|| opts.source_date_epoch.map(|s| s.saturating_mul(1_000_000_000)));
        Encoder {
            semconv: opts.otlp_semconv,
            content: opts.otlp_tool_content,
            clock: Clock { live: opts.live_times, end, ..Clock::default() },
            ..Self::default()
        }
    }

    /// An encoder that keeps each run's messages in `kept` (the export sends them) instead of
    /// writing them as lines.
    pub fn keeping(opts: &EncodeOptions, kept: Kept) -> Self {
        Encoder { keep: Some(kept), ..Encoder::new(opts) }
    }

    fn span(&mut self, name: String, kind: i32, start: At) -> Span {
        self.made += 1;
        Span { n: self.made, name, kind, start, end: start, attributes: Vec::new(), error: None }
    }

    fn model(&mut self, model: Option<&str>) {
        if let Some(m) = model.filter(|m| !m.is_empty() && *m != "unknown") {
            if !self.models.iter().any(|x| x == m) {
                self.models.push(m.to_string());
            }
        }
    }

    fn begin(&mut self, ctx: &Context, origin: Dialect, now: At) {
        if self.started {
            return;
        }
        self.started = true;
        // The agent: the source's dialect, or for a canonical stream the one it was read from.
        let agent = match ctx.source {
            Some(Dialect::Canonical) => Some(origin),
            source => source,
        };
        self.agent = agent.map_or("unknown", Dialect::name).to_string();
        // The provider a dialect's agent calls where the stream does not say (claude-code.md:
        // Anthropic's Messages API; codex.md: OpenAI's; gemini.md: Google's Gemini API, whose
        // OpenTelemetry name is gcp.gemini).
        self.provider = match agent {
            Some(Dialect::ClaudeCode) => Some("anthropic".into()),
            Some(Dialect::Codex) => Some("openai".into()),
            Some(Dialect::Gemini) => Some("gcp.gemini".into()),
            _ => None,
        };
        self.start = now;
    }

    fn open_tool(&mut self, id: &str, name: &str, arguments: Option<String>, now: At) {
        let mut span = self.span(format!("execute_tool {name}"), KIND_INTERNAL, now);
        span.attributes.push(("gen_ai.operation.name", json!("execute_tool")));
        span.attributes.push(("gen_ai.tool.name", json!(name)));
        span.attributes.push(("gen_ai.tool.call.id", json!(id)));
        span.attributes.push(("gen_ai.tool.type", json!("function")));
        if let Some(a) = arguments.filter(|_| self.content) {
            span.attributes.push(("gen_ai.tool.call.arguments", json!(cut(&a))));
        }
        make_room(&mut self.tools, id);
        if let Some(mut earlier) = self.tools.insert(id.to_string(), span) {
            // The same id again before its result: the earlier call ends unanswered.
            earlier.end = now;
            self.spans.push(earlier);
        }
    }

    fn close_tool(&mut self, id: &str, name: &str, error: Option<(String, String)>, result: Option<String>, now: At) {
        let mut span = match self.tools.shift_remove(id) {
            Some(s) => s,
            None => {
                // A result whose call never came: its span starts and ends now.
                self.open_tool(id, name, None, now);
                self.tools
                    .shift_remove(id)
                    .unwrap_or_else(|| self.span(format!("execute_tool {name}"), KIND_INTERNAL, now))
            }
        };
        span.end = now;
        if let Some(r) = result.filter(|_| self.content) {
            span.attributes.push(("gen_ai.tool.call.result", json!(cut(&r))));
        }
        span.error = error;
        self.spans.push(span);
    }

    /// The requests the run is told in: rounds where it has them, else round usage reports
    /// that add up to the run, else turns, else the run itself.
    fn requests(&mut self, end: At, totals: &Tokens) -> Vec<Request> {
        if !self.rounds.is_empty() {
            return partition(std::mem::take(&mut self.rounds), end, totals);
        }
        let reported = self.reports.iter().fold(Tokens::default(), |a, r| a.plus(&r.usage));
        if !self.reports.is_empty() && same(&reported, totals) {
            return std::mem::take(&mut self.reports);
        }
        if !self.turns.is_empty() {
            return partition(std::mem::take(&mut self.turns), end, totals);
        }
        if totals.is_empty() {
            return Vec::new();
        }
        let mut run = Request::new(self.start, Tokens::default(), self.models.first().cloned());
        run.close(end, totals);
        vec![run]
    }

    fn finish(&mut self, t: &crate::model::Terminal, ctx: &Context, sink: &mut Sink<'_>, end: At) {
        self.model(t.model.as_deref());
        if self.conversation.is_none() {
            self.conversation = t.session_id.clone().or_else(|| ctx.session_id.clone());
        }
        let totals = ctx.totals;
        // Calls never answered end with the run, as not completed.
        for (_, mut span) in std::mem::take(&mut self.tools) {
            span.end = end;
            span.error = Some(("incomplete".into(), "the run ended before the call returned".into()));
            self.spans.push(span);
        }
        let requests = self.requests(end, &totals);
        for r in &requests {
            let model = r.model.clone().or_else(|| self.models.first().cloned());
            let mut span = self.span(format!("chat {}", model.as_deref().unwrap_or("unknown")), KIND_CLIENT, r.start);
            span.end = r.end;
            span.attributes.push(("gen_ai.operation.name", json!("chat")));
            // The model calls carry the usage and the provider: a receiver that sums usage
            // over the spans naming a provider counts each token once (docs/otlp.md).
            if let Some(p) = r.provider.as_ref().or(self.provider.as_ref()) {
                span.attributes.push(("gen_ai.provider.name", json!(p)));
            }
            if let Some(m) = &model {
                span.attributes.push(("gen_ai.request.model", json!(m)));
            }
            usage_attributes(&mut span.attributes, &r.usage);
            self.spans.push(span);
        }
        let mut root = Span {
            n: 0,
            name: format!("invoke_agent {}", self.agent),
            kind: KIND_CLIENT,
            start: self.start,
            end,
            attributes: Vec::new(),
            error: None,
        };
        root.attributes.push(("gen_ai.operation.name", json!("invoke_agent")));
        root.attributes.push(("gen_ai.agent.name", json!(self.agent)));
        // No provider and no usage on the run's span: the run is no model call, and its usage
        // is the sum of its requests' (docs/otlp.md, "Which span carries the tokens").
        if let Some(m) = self.models.first() {
            root.attributes.push(("gen_ai.request.model", json!(m)));
        }
        if let Some(c) = &self.conversation {
            root.attributes.push(("gen_ai.conversation.id", json!(c)));
        }
        root.attributes.push(("agentgate.outcome", json!(t.outcome.name())));
        if !self.basis.is_empty() {
            root.attributes.push(("agentgate.usage.basis", json!(self.basis.join(","))));
        }
        if let Some(c) = t.cost_usd {
            root.attributes.push(("agentgate.cost_usd", json!(c)));
        }
        if let Some(r) = &t.reason {
            root.attributes.push(("agentgate.reason", json!(r)));
        }
        if t.outcome != Outcome::Completed {
            // The outcome table (mappings/otlp.json): error.type is the outcome's name.
            let kind = Dialect::Otlp.contract().outcome_str(t.outcome, "error.type").unwrap_or("failed").to_string();
            let message = t.error.clone().or_else(|| t.reason.clone()).unwrap_or_else(|| kind.clone());
            root.error = Some((kind, message));
        }
        let mut spans = std::mem::take(&mut self.spans);
        spans.push(root);
        let telemetry =
            Telemetry { traces: self.traces(&ctx.input_digest, spans), metrics: self.metrics(&requests, end) };
        match &self.keep {
            Some(kept) => kept.borrow_mut().push(telemetry),
            None => telemetry.write_json_lines(sink.out),
        }
    }

    fn resource(&self) -> Resource {
        Resource {
            attributes: vec![
                kv("service.name", &json!(self.agent)),
                kv("telemetry.sdk.name", &json!("agentgate")),
                kv("telemetry.sdk.version", &json!(env!("CARGO_PKG_VERSION"))),
            ],
            ..Resource::default()
        }
    }

    fn scope() -> InstrumentationScope {
        InstrumentationScope {
            name: "agentgate".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            ..InstrumentationScope::default()
        }
    }

    /// The run's spans, in requests of at most [`SPAN_BUDGET`] bytes of spans each.
    fn traces(&self, digest: &str, spans: Vec<Span>) -> Vec<ExportTraceServiceRequest> {
        let trace = Sha256::digest(format!("agentgate trace {digest}").as_bytes())[..16].to_vec();
        let trace_hex = hex(&trace);
        let id = |n: u64| Sha256::digest(format!("agentgate span {trace_hex} {n}").as_bytes())[..8].to_vec();
        let root = id(0);
        let mut requests = Vec::new();
        let mut batch: Vec<proto::Span> = Vec::new();
        let mut size = 0;
        let request = |batch: Vec<proto::Span>| ExportTraceServiceRequest {
            resource_spans: vec![ResourceSpans {
                resource: Some(self.resource()),
                scope_spans: vec![ScopeSpans {
                    scope: Some(Self::scope()),
                    spans: batch,
                    schema_url: SCHEMA_URL.into(),
                }],
                schema_url: SCHEMA_URL.into(),
            }],
        };
        for s in spans {
            let (start, end) = (self.clock.resolve(s.start), self.clock.resolve(s.end));
            let mut attributes: Vec<KeyValue> = s.attributes.iter().map(|(k, v)| kv(k, v)).collect();
            let status = s.error.map(|(kind, message)| {
                attributes.push(kv("error.type", &json!(kind)));
                Status { message, code: STATUS_ERROR }
            });
            let span = proto::Span {
                trace_id: trace.clone(),
                span_id: id(s.n),
                parent_span_id: if s.n == 0 { Vec::new() } else { root.clone() },
                name: s.name,
                kind: s.kind,
                start_time_unix_nano: start,
                end_time_unix_nano: end.max(start),
                attributes,
                status,
                ..proto::Span::default()
            };
            let len = prost::Message::encoded_len(&span);
            if size + len > SPAN_BUDGET && !batch.is_empty() {
                requests.push(request(std::mem::take(&mut batch)));
                size = 0;
            }
            size += len;
            batch.push(span);
        }
        if !batch.is_empty() {
            requests.push(request(batch));
        }
        requests
    }

    fn metrics(&self, requests: &[Request], end: At) -> Option<ExportMetricsServiceRequest> {
        if requests.is_empty() {
            return None;
        }
        // One data point per provider and model (as the requests name them) and figure.
        type Key = (Option<String>, Option<String>);
        let mut by_model: IndexMap<Key, Vec<&Tokens>> = IndexMap::new();
        for r in requests {
            let provider = r.provider.clone().or_else(|| self.provider.clone());
            let model = r.model.clone().or_else(|| self.models.first().cloned());
            by_model.entry((provider, model)).or_default().push(&r.usage);
        }
        // The provider where the source named it, as on the spans: never invented.
        let attributes = |(provider, model): &Key, more: (&str, &str)| {
            let mut a = vec![kv("gen_ai.operation.name", &json!("chat"))];
            if let Some(p) = provider {
                a.push(kv("gen_ai.provider.name", &json!(p)));
            }
            if !more.0.is_empty() {
                a.push(kv(more.0, &json!(more.1)));
            }
            if let Some(m) = model {
                a.push(kv("gen_ai.request.model", &json!(m)));
            }
            a
        };
        let (start, end) = (self.clock.resolve(self.start), self.clock.resolve(end));
        let end = end.max(start);
        let histogram = |name: &str, description: &str, data_points: Vec<HistogramDataPoint>| Metric {
            name: name.into(),
            description: description.into(),
            unit: "{token}".into(),
            data: Some(Data::Histogram(Histogram { data_points, aggregation_temporality: DELTA })),
            ..Metric::default()
        };
        let point = |attributes: Vec<KeyValue>, values: &[u64]| {
            let mut buckets = vec![0u64; TOKEN_BOUNDS.len() + 1];
            for v in values {
                buckets[TOKEN_BOUNDS.iter().position(|b| v <= b).unwrap_or(TOKEN_BOUNDS.len())] += 1;
            }
            HistogramDataPoint {
                attributes,
                start_time_unix_nano: start,
                time_unix_nano: end,
                count: values.len() as u64,
                sum: Some(values.iter().sum::<u64>() as f64),
                bucket_counts: buckets,
                explicit_bounds: TOKEN_BOUNDS.iter().map(|b| *b as f64).collect(),
                min: Some(values.iter().min().copied().unwrap_or(0) as f64),
                max: Some(values.iter().max().copied().unwrap_or(0) as f64),
                ..HistogramDataPoint::default()
            }
        };
        let input = |u: &&Tokens| u.input.unwrap_or(0);
        let output = |u: &&Tokens| u.output.unwrap_or(0);
        let mut metrics = Vec::new();
        match self.semconv {
            Semconv::Released => {
                let mut points = Vec::new();
                for (model, usages) in &by_model {
                    points.push(point(
                        attributes(model, ("gen_ai.token.type", "input")),
                        &usages.iter().map(input).collect::<Vec<_>>(),
                    ));
                    points.push(point(
                        attributes(model, ("gen_ai.token.type", "output")),
                        &usages.iter().map(output).collect::<Vec<_>>(),
                    ));
                }
                metrics.push(histogram("gen_ai.client.token.usage", "Number of input and output tokens used.", points));
            }
            Semconv::Latest => {
                let figures: [(&str, &str, Figure); 5] = [
                    (
                        "gen_ai.client.inference.usage.input_tokens",
                        "The number of input (prompt) tokens used, including cached tokens.",
                        |u| u.input,
                    ),
                    (
                        "gen_ai.client.inference.usage.output_tokens",
                        "The number of output (completion) tokens used, including reasoning tokens.",
                        |u| u.output,
                    ),
                    (
                        "gen_ai.client.inference.usage.cache_read.input_tokens",
                        "The number of input tokens read from a provider-managed cache.",
                        |u| u.cache_read,
                    ),
                    (
                        "gen_ai.client.inference.usage.cache_write.input_tokens",
                        "The number of input tokens written to a provider-managed cache.",
                        |u| u.cache_write,
                    ),
                    (
                        "gen_ai.client.inference.usage.reasoning.output_tokens",
                        "The number of output tokens used for reasoning.",
                        |u| u.reasoning,
                    ),
                ];
                for (name, description, figure) in figures {
                    let data_points: Vec<NumberDataPoint> = by_model
                        .iter()
                        .filter(|(_, usages)| usages.iter().any(|u| figure(u).is_some()))
                        .map(|(model, usages)| {
                            let sum: u64 = usages.iter().filter_map(|u| figure(u)).sum();
                            NumberDataPoint {
                                attributes: attributes(model, ("gen_ai.token.modality", "unknown")),
                                start_time_unix_nano: start,
                                time_unix_nano: end,
                                value: Some(number_data_point::Value::AsInt(i64::try_from(sum).unwrap_or(i64::MAX))),
                                ..NumberDataPoint::default()
                            }
                        })
                        .collect();
                    if !data_points.is_empty() {
                        metrics.push(Metric {
                            name: name.into(),
                            description: description.into(),
                            unit: "{token}".into(),
                            data: Some(Data::Sum(Sum {
                                data_points,
                                aggregation_temporality: DELTA,
                                is_monotonic: true,
                            })),
                            ..Metric::default()
                        });
                    }
                }
                for (name, figure) in [
                    ("gen_ai.client.inference.operation.input_tokens", input as fn(&&Tokens) -> u64),
                    ("gen_ai.client.inference.operation.output_tokens", output),
                ] {
                    let points = by_model
                        .iter()
                        .map(|(model, usages)| {
                            point(attributes(model, ("", "")), &usages.iter().map(figure).collect::<Vec<_>>())
                        })
                        .collect();
                    metrics.push(histogram(name, "Tokens per inference operation.", points));
                }
            }
        }
        Some(ExportMetricsServiceRequest {
            resource_metrics: vec![ResourceMetrics {
                resource: Some(self.resource()),
                scope_metrics: vec![ScopeMetrics {
                    scope: Some(Self::scope()),
                    metrics,
                    schema_url: SCHEMA_URL.into(),
                }],
                schema_url: SCHEMA_URL.into(),
            }],
        })
    }
}

type Figure = fn(&Tokens) -> Option<u64>;

/// The same input and output figures (what the conventions count).
fn same(a: &Tokens, b: &Tokens) -> bool {
    a.input.unwrap_or(0) == b.input.unwrap_or(0) && a.output.unwrap_or(0) == b.output.unwrap_or(0)
}

/// The usage attributes of a span: input including cache (the conventions' rule, and the
/// canonical model's), and each subset where known.
fn usage_attributes(attributes: &mut Vec<(&'static str, Value)>, u: &Tokens) {
    for (key, figure) in [
        ("gen_ai.usage.input_tokens", u.input),
        ("gen_ai.usage.output_tokens", u.output),
        ("gen_ai.usage.cache_read.input_tokens", u.cache_read),
        ("gen_ai.usage.cache_creation.input_tokens", u.cache_write),
        ("gen_ai.usage.reasoning.output_tokens", u.reasoning),
    ] {
        if let Some(n) = figure {
            attributes.push((key, json!(n)));
        }
    }
}

/// An attribute as an OTLP `KeyValue`: a string, a boolean, an integer or a double.
fn kv(key: &str, v: &Value) -> KeyValue {
    let value = match v {
        Value::Bool(b) => any_value::Value::BoolValue(*b),
        Value::Number(n) if n.is_i64() => any_value::Value::IntValue(n.as_i64().unwrap_or(0)),
        Value::Number(n) if n.is_u64() => any_value::Value::IntValue(i64::MAX),
        Value::Number(n) => any_value::Value::DoubleValue(n.as_f64().unwrap_or(0.0)),
        Value::String(s) => any_value::Value::StringValue(s.clone()),
        other => any_value::Value::StringValue(other.to_string()),
    };
    KeyValue { key: key.into(), value: Some(AnyValue { value: Some(value) }), ..KeyValue::default() }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn cut(text: &str) -> String {
    crate::json::cut_chars(text, CONTENT_CHARS).0.to_string()
}

impl Encode for Encoder {
    /// The trace id is made from the whole input, so that two runs that begin alike differ.
    fn needs_whole_digest(&self, _ctx: &Context) -> bool {
        true
    }

    fn hints(&self) -> crate::codec::Hints {
        crate::codec::Hints {
            call_arguments: self.content,
            call_output: self.content,
            reads_extra: true,
            ..crate::codec::Hints::default()
        }
    }

    fn encode(&mut self, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        if self.done {
            return Fate::Absorbed;
        }
        let now = self.clock.tick(stated_time(rec));
        self.begin(ctx, rec.origin, now);
        // The provider where the source names it on a record (base-context's assistant
        // messages): this request's, and the run's from now on.
        if let Some(p) = provider_of(rec) {
            for r in [self.rounds.last_mut(), self.turns.last_mut()].into_iter().flatten() {
                r.provider.get_or_insert_with(|| p.clone());
            }
            self.provider = Some(p);
        }
        match &rec.event {
            Event::Session(s) => {
                self.model(s.model.as_deref());
                if let Some(p) = s.provider.as_deref().filter(|p| !p.is_empty()) {
                    self.provider = Some(p.to_string());
                }
                if self.conversation.is_none() {
                    self.conversation = s.id.clone();
                }
                Fate::Absorbed
            }
            Event::RoundStart { .. } => {
                let model = ctx.model.clone();
                self.rounds.push(Request::new(now, ctx.totals, model));
                Fate::Written
            }
            Event::TurnStart { .. } => {
                self.turns.push(Request::new(now, ctx.totals, ctx.model.clone()));
                Fate::Written
            }
            Event::Usage(u) => {
                self.model(u.model.as_deref());
                let model = u.model.as_deref().map(str::to_string);
                if let Some(m) = &model {
                    for r in [self.rounds.last_mut(), self.turns.last_mut()].into_iter().flatten() {
                        r.model.get_or_insert(m.clone());
                    }
                }
                if u.scope == Scope::Round && u.basis == Basis::Delta {
                    let mut r = Request::new(now, Tokens::default(), model.or_else(|| ctx.model.clone()));
                    r.provider = self.provider.clone();
                    r.end = now;
                    r.usage = ctx.delta;
                    self.reports.push(r);
                }
                let basis = match (u.scope, u.basis) {
                    (Scope::Run, _) => "session",
                    (_, Basis::Delta) => "delta",
                    (_, Basis::Cumulative) => "cumulative",
                };
                if !self.basis.contains(&basis) {
                    self.basis.push(basis);
                }
                Fate::Written
            }
            Event::ToolCall(c) => {
                let id = c.id.as_deref().unwrap_or_default().to_string();
                let arguments = self.content.then(|| c.arguments.to_text());
                self.open_tool(&id, &c.name, arguments, now);
                Fate::Written
            }
            Event::ToolResult(r) => {
                let id = r.id.as_deref().unwrap_or_default().to_string();
                let name = r.name.clone().or_else(|| ctx.call.name.clone()).unwrap_or_default();
                let error = match r.status {
                    ToolStatus::Completed => None,
                    ToolStatus::Failed => {
                        Some(("failed".into(), r.error.clone().unwrap_or_else(|| "the call failed".into())))
                    }
                    ToolStatus::Cancelled => {
                        Some(("cancelled".into(), r.error.clone().unwrap_or_else(|| "the call was cancelled".into())))
                    }
                };
                let output = self.content.then(|| {
                    r.output.as_ref().or(ctx.call.output.as_ref()).map(|o| o.as_str().into_owned()).unwrap_or_default()
                });
                self.close_tool(&id, &name, error, output, now);
                Fate::Written
            }
            Event::PermissionDenied(d) => {
                if ctx.answered {
                    // Its call ended already (as failed): nothing more to say of it.
                    return Fate::Absorbed;
                }
                let id = d.id.as_deref().unwrap_or_default().to_string();
                let why = d.reason.clone().unwrap_or_else(|| "approval required".into());
                self.close_tool(&id, &d.name, Some(("permission_denied".into(), why)), None, now);
                Fate::Written
            }
            Event::ToolWithdrawn { id } => {
                // A call taken back was not a call (wuu's tool_removed): no span.
                if let Some(id) = id {
                    self.tools.shift_remove(id.as_str());
                }
                Fate::Absorbed
            }
            Event::SessionSummary(x) if !x.tool_calls.as_ref().is_none_or(Vec::is_empty) => {
                // Handed whole where the encoder beside this one keeps summaries (`summary`):
                // its calls are spans as they would be had they come one by one.
                self.model(x.model.as_deref());
                for c in x.tool_calls.iter().flatten() {
                    self.open_tool(&c.id, &c.name, None, now);
                    let error = match (c.answered, c.error) {
                        (true, false) => None,
                        (true, true) => Some(("failed".to_string(), "the call failed".to_string())),
                        (false, _) => Some(("incomplete".to_string(), "the call was never answered".to_string())),
                    };
                    self.close_tool(&c.id, &c.name, error, None, now);
                }
                Fate::Absorbed
            }
            Event::Cost { .. } | Event::TurnEnd { .. } | Event::RoundEnd { .. } => Fate::Absorbed,
            Event::Terminal(t) => {
                self.finish(t, ctx, sink, now);
                self.done = true;
                Fate::Written
            }
            other => {
                sink.report.dropped_kind(other.kind());
                Fate::Dropped
            }
        }
    }
}

/// The time a record states, in nanoseconds: a session's start (base-context's header), or a
/// `timestamp` the source put on the line that no event has a field for (base-context's
/// assistant messages, in milliseconds), where it reads as a time after 2001.
fn stated_time(rec: &Record) -> Option<u64> {
    if let Event::Session(s) = &rec.event {
        if let Some(t) = s.timestamp.as_deref().and_then(iso_ns) {
            return Some(t);
        }
    }
    if rec.extra.is_empty() {
        return None;
    }
    match rec.extra.get("timestamp")? {
        Value::Number(n) => {
            // (A time past what 64 bits of nanoseconds hold, in 2554, is no time.)
            n.as_u64()
                .filter(|ms| (1_000_000_000_000..100_000_000_000_000).contains(ms))
                .and_then(|ms| ms.checked_mul(1_000_000))
        }
        Value::String(s) => iso_ns(&s),
        _ => None,
    }
}

/// The provider a record names beside its event (base-context's assistant messages).
fn provider_of(rec: &Record) -> Option<String> {
    if rec.extra.is_empty() {
        return None;
    }
    match rec.extra.get("provider")? {
        Value::String(p) if !p.is_empty() && p != "unknown" => Some(p),
        _ => None,
    }
}

/// Another encoder (a dialect's, or one that gathers a summary), with an otlp encoder beside it
/// that keeps the run's telemetry: `--to D --otlp-endpoint`, `exec --as D` and `summary` write
/// what they write and send the run's telemetry from the same pass over the input.
pub struct Beside {
    main: Box<dyn Encode>,
    otlp: Encoder,
    scratch: Vec<u8>,
    report: crate::report::Report,
}

impl Beside {
    pub fn new(main: Box<dyn Encode>, opts: &EncodeOptions, kept: Kept) -> Self {
        Beside { main, otlp: Encoder::keeping(opts, kept), scratch: Vec::new(), report: Default::default() }
    }
}

impl Encode for Beside {
    fn encode(&mut self, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        // What the otlp encoder could not carry is no loss of the main output's: its report is
        // its own.
        self.otlp.encode(rec, ctx, &mut Sink::new(&mut self.scratch, &mut self.report));
        self.scratch.clear();
        self.main.encode(rec, ctx, sink)
    }

    /// A line copied for the main output: the otlp encoder takes its record as any other.
    fn observe(&mut self, rec: &Record, ctx: &Context, line: &str, sink: &mut Sink<'_>) {
        self.otlp.encode(rec, ctx, &mut Sink::new(&mut self.scratch, &mut self.report));
        self.scratch.clear();
        self.main.observe(rec, ctx, line, sink)
    }

    fn needs_whole_digest(&self, ctx: &Context) -> bool {
        self.main.needs_whole_digest(ctx) || self.otlp.needs_whole_digest(ctx)
    }

    fn hints(&self) -> crate::codec::Hints {
        let (mut h, o) = (self.main.hints(), self.otlp.hints());
        // Both are handed what each needs: a session summary's calls as calls of their own
        // (loom's), as the otlp encoder takes them.
        h.carries_summaries &= o.carries_summaries;
        h.call_arguments |= o.call_arguments;
        h.call_output |= o.call_output;
        h.reads_extra |= o.reads_extra;
        h.source_lines |= o.source_lines;
        h
    }
}

/// A time as `--otlp-time` takes it: seconds since the Unix epoch, or an RFC 3339 UTC time
/// (`2026-03-16T10:12:03Z`, fractions of a second allowed); in nanoseconds since the epoch.
pub fn parse_time(s: &str) -> Option<u64> {
    let s = s.trim();
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse::<u64>().ok()?.checked_mul(1_000_000_000);
    }
    iso_ns(s)
}

/// An ISO-8601 UTC time (`2026-03-16T10:12:03.512Z`) in nanoseconds since the Unix epoch.
fn iso_ns(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let n = |r: std::ops::Range<usize>| s.get(r)?.parse::<u64>().ok();
    let (y, mo, d, h, mi, sec) = (n(0..4)?, n(5..7)?, n(8..10)?, n(11..13)?, n(14..16)?, n(17..19)?);
    let rest = &s[19..];
    let (frac, zone) = match rest.strip_prefix('.') {
        Some(f) => {
            let digits = f.bytes().take_while(u8::is_ascii_digit).count();
            (&f[..digits], &f[digits..])
        }
        None => ("", rest),
    };
    if zone != "Z" || !(1..=12).contains(&mo) || !(1..=31).contains(&d) || y < 1970 {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let (y, m) = if mo <= 2 { (y - 1, mo + 9) } else { (y, mo - 3) };
    let era = y / 400;
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let mut nanos: u64 = 0;
    for (i, c) in frac.bytes().take(9).enumerate() {
        nanos += u64::from(c - b'0') * 10u64.pow(8 - i as u32);
    }
    // Nanoseconds since 1970 fit in 64 bits until the year 2554: a later time is no time.
    let secs = days.checked_mul(86_400)?.checked_add(h * 3600 + mi * 60 + sec)?;
    secs.checked_mul(1_000_000_000)?.checked_add(nanos)
}

#[cfg(test)]
mod tests {
    #[test]
    fn iso_times_are_read_to_the_nanosecond() {
        assert_eq!(super::iso_ns("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(super::iso_ns("2026-03-16T10:12:03.512Z"), Some(1_773_655_923_512_000_000));
        assert_eq!(super::iso_ns("2000-02-29T00:00:01.000000001Z"), Some(951_782_401_000_000_001));
        assert_eq!(super::iso_ns("2026-03-16 10:12:03Z"), None);
        assert_eq!(super::iso_ns("t"), None);
        assert_eq!(super::iso_ns("2554-07-21T23:34:33.709551615Z"), Some(u64::MAX));
        assert_eq!(super::iso_ns("2554-07-21T23:34:34Z"), None, "past 64 bits of nanoseconds");
        assert_eq!(super::iso_ns("9999-12-31T23:59:59Z"), None);
    }
}

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
//! grew by over it, so the requests add up to the run. Metrics: token usage per request, by
//! the released conventions' names (`gen_ai.client.token.usage`) or, with
//! `--otlp-semconv latest`, the GenAI repository's newer ones.
//!
//! OTLP/JSON: lowerCamelCase keys, enums as integers, 64-bit integers as decimal strings, trace
//! and span ids as lowercase hex (32 and 16 digits) made from the SHA-256 of the whole input,
//! so the same input gives the same bytes. That id is known only at the end, so a run's spans
//! are held (a few hundred bytes each; no text) and written when it ends, in lines of at most
//! [`LINE_BUDGET`] bytes of spans. Times: the source's session timestamp where it states one,
//! else `SOURCE_DATE_EPOCH`, else 0, one millisecond per record after it; with `exec`, each
//! record's arrival time.

use indexmap::IndexMap;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use crate::codec::make_room;
use crate::codec::Context;
use crate::codec::{Dialect, Encode, EncodeOptions, Record, Sink};
use crate::json::{write_line, Layout};
use crate::model::{Basis, Event, Outcome, Scope, Tokens, ToolStatus};
use crate::report::Fate;

/// The released semantic conventions the default names follow.
pub const SCHEMA_URL: &str = "https://opentelemetry.io/schemas/1.41.0";

/// Bytes of spans one line holds at most before the next line starts (the Collector's reader
/// takes lines far longer, but other readers of JSON Lines do not).
pub const LINE_BUDGET: usize = 512 * 1024;

/// Characters of a tool's arguments or result kept with `--otlp-tool-content`.
pub const CONTENT_CHARS: usize = 16 * 1024;

/// `gen_ai.client.token.usage`'s bucket boundaries, as the conventions give them.
const TOKEN_BOUNDS: [u64; 14] =
    [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];

const KIND_INTERNAL: u64 = 1;
const KIND_CLIENT: u64 = 3;
const STATUS_ERROR: u64 = 2;
const DELTA: u64 = 1;

pub use crate::codec::Semconv;

/// A span held until the run's trace id is known.
#[derive(Debug, Clone)]
struct Span {
    /// 0 for the run's root, else the order it was opened in.
    n: u64,
    name: String,
    kind: u64,
    start: u64,
    end: u64,
    attributes: Vec<(&'static str, Value)>,
    /// An error: its `error.type` and message.
    error: Option<(String, String)>,
}

/// A model request being measured: where the run's totals stood when it began.
#[derive(Debug, Clone)]
struct Request {
    start: u64,
    end: u64,
    before: Tokens,
    model: Option<String>,
    /// Its usage, once it has ended.
    usage: Tokens,
}

impl Request {
    fn new(start: u64, before: Tokens, model: Option<String>) -> Self {
        Request { start, end: start, before, model, usage: Tokens::default() }
    }

    fn close(&mut self, end: u64, now: &Tokens) {
        self.end = end;
        self.usage = now.since(&self.before);
    }
}

/// Requests told by where each began: each ends where the next begins, its usage what the
/// run's totals grew by meanwhile (the first's from nothing, so that what came before the first
/// is its), the last's up to the run's `totals` at `end`.
fn partition(mut requests: Vec<Request>, end: u64, totals: &Tokens) -> Vec<Request> {
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

#[derive(Default)]
pub struct Encoder {
    semconv: Semconv,
    content: bool,
    live: bool,
    epoch_ns: u64,
    /// Records seen: the clock when there is no other.
    ticks: u64,
    started: bool,
    start: u64,
    agent: String,
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
}

impl Encoder {
    pub fn new(opts: &EncodeOptions) -> Self {
        Encoder {
            semconv: opts.otlp_semconv,
            content: opts.otlp_tool_content,
            live: opts.live_times,
            epoch_ns: opts.source_date_epoch.unwrap_or(0).saturating_mul(1_000_000_000),
            ..Self::default()
        }
    }

    /// The time of the record now: its arrival with `exec`, else one millisecond per record
    /// after the run's epoch.
    fn now(&mut self) -> u64 {
        self.ticks += 1;
        if self.live {
            let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
            return u64::try_from(t.as_nanos()).unwrap_or(u64::MAX);
        }
        self.epoch_ns.saturating_add(self.ticks.saturating_mul(1_000_000))
    }

    fn span(&mut self, name: String, kind: u64, start: u64) -> Span {
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

    fn begin(&mut self, ctx: &Context, origin: Dialect) {
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
        // Anthropic's Messages API; codex.md: OpenAI's).
        self.provider = match agent {
            Some(Dialect::ClaudeCode) => Some("anthropic".into()),
            Some(Dialect::Codex) => Some("openai".into()),
            _ => None,
        };
        self.start = self.now();
    }

    fn open_tool(&mut self, id: &str, name: &str, arguments: Option<String>, now: u64) {
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

    fn close_tool(&mut self, id: &str, name: &str, error: Option<(String, String)>, result: Option<String>, now: u64) {
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
    fn requests(&mut self, end: u64, totals: &Tokens) -> Vec<Request> {
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

    fn finish(&mut self, t: &crate::model::Terminal, ctx: &Context, sink: &mut Sink<'_>) {
        let end = self.now();
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
            span.end = r.end.max(r.start);
            span.attributes.push(("gen_ai.operation.name", json!("chat")));
            self.common(&mut span.attributes, model.as_deref());
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
        let first = self.models.first().cloned();
        self.common(&mut root.attributes, first.as_deref());
        if let Some(c) = &self.conversation {
            root.attributes.push(("gen_ai.conversation.id", json!(c)));
        }
        usage_attributes(&mut root.attributes, &totals);
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
        self.write_spans(sink, &ctx.input_digest, spans);
        self.write_metrics(sink, &requests, end);
    }

    /// `gen_ai.provider.name` and `gen_ai.request.model`, where known.
    fn common(&self, attributes: &mut Vec<(&'static str, Value)>, model: Option<&str>) {
        if let Some(p) = &self.provider {
            attributes.push(("gen_ai.provider.name", json!(p)));
        }
        if let Some(m) = model {
            attributes.push(("gen_ai.request.model", json!(m)));
        }
    }

    fn resource(&self) -> Value {
        json!({"attributes": [
            kv("service.name", &json!(self.agent)),
            kv("telemetry.sdk.name", &json!("agentgate")),
            kv("telemetry.sdk.version", &json!(env!("CARGO_PKG_VERSION"))),
        ]})
    }

    fn scope() -> Value {
        json!({"name": "agentgate", "version": env!("CARGO_PKG_VERSION")})
    }

    fn write_spans(&self, sink: &mut Sink<'_>, digest: &str, spans: Vec<Span>) {
        let trace = hex(&Sha256::digest(format!("agentgate trace {digest}").as_bytes()))[..32].to_string();
        let id = |n: u64| hex(&Sha256::digest(format!("agentgate span {trace} {n}").as_bytes()))[..16].to_string();
        let root = id(0);
        let mut batch: Vec<Value> = Vec::new();
        let mut size = 0;
        let flush = |batch: &mut Vec<Value>, sink: &mut Sink<'_>| {
            if batch.is_empty() {
                return;
            }
            let doc = json!({"resourceSpans": [{
                "resource": self.resource(),
                "scopeSpans": [{"scope": Self::scope(), "spans": std::mem::take(batch), "schemaUrl": SCHEMA_URL}],
                "schemaUrl": SCHEMA_URL,
            }]});
            write_line(sink.out, &doc, Layout::Compact);
        };
        for s in spans {
            let mut span = Map::new();
            span.insert("traceId".into(), json!(trace));
            span.insert("spanId".into(), json!(id(s.n)));
            if s.n != 0 {
                span.insert("parentSpanId".into(), json!(root));
            }
            span.insert("name".into(), json!(s.name));
            span.insert("kind".into(), json!(s.kind));
            span.insert("startTimeUnixNano".into(), json!(s.start.to_string()));
            span.insert("endTimeUnixNano".into(), json!(s.end.max(s.start).to_string()));
            let mut attributes: Vec<Value> = s.attributes.iter().map(|(k, v)| kv(k, v)).collect();
            if let Some((kind, message)) = &s.error {
                attributes.push(kv("error.type", &json!(kind)));
                span.insert("attributes".into(), Value::Array(attributes));
                span.insert("status".into(), json!({"message": message, "code": STATUS_ERROR}));
            } else {
                span.insert("attributes".into(), Value::Array(attributes));
            }
            let span = Value::Object(span);
            let len = span.to_string().len();
            if size + len > LINE_BUDGET {
                flush(&mut batch, sink);
                size = 0;
            }
            size += len;
            batch.push(span);
        }
        flush(&mut batch, sink);
    }

    fn write_metrics(&self, sink: &mut Sink<'_>, requests: &[Request], end: u64) {
        if requests.is_empty() {
            return;
        }
        // One data point per model (as the requests name it) and figure.
        let mut by_model: IndexMap<Option<String>, Vec<&Tokens>> = IndexMap::new();
        for r in requests {
            by_model.entry(r.model.clone().or_else(|| self.models.first().cloned())).or_default().push(&r.usage);
        }
        let attributes = |model: &Option<String>, more: (&str, &str)| {
            let mut a = vec![
                kv("gen_ai.operation.name", &json!("chat")),
                kv("gen_ai.provider.name", &json!(self.provider.as_deref().unwrap_or("unknown"))),
                kv(more.0, &json!(more.1)),
            ];
            if let Some(m) = model {
                a.push(kv("gen_ai.request.model", &json!(m)));
            }
            a
        };
        let (start, end) = (self.start.to_string(), end.to_string());
        let histogram = |name: &str, description: &str, points: Vec<Value>| {
            json!({"name": name, "description": description, "unit": "{token}",
                   "histogram": {"dataPoints": points, "aggregationTemporality": DELTA}})
        };
        let point = |attrs: Vec<Value>, values: &[u64]| {
            let mut buckets = [0u64; TOKEN_BOUNDS.len() + 1];
            for v in values {
                buckets[TOKEN_BOUNDS.iter().position(|b| v <= b).unwrap_or(TOKEN_BOUNDS.len())] += 1;
            }
            json!({"attributes": attrs, "startTimeUnixNano": start, "timeUnixNano": end,
                   "count": values.len().to_string(), "sum": values.iter().sum::<u64>() as f64,
                   "bucketCounts": buckets.iter().map(u64::to_string).collect::<Vec<_>>(),
                   "explicitBounds": TOKEN_BOUNDS.iter().map(|b| *b as f64).collect::<Vec<_>>(),
                   "min": values.iter().min().copied().unwrap_or(0) as f64,
                   "max": values.iter().max().copied().unwrap_or(0) as f64})
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
                    let points: Vec<Value> = by_model
                        .iter()
                        .filter(|(_, usages)| usages.iter().any(|u| figure(u).is_some()))
                        .map(|(model, usages)| {
                            let sum: u64 = usages.iter().filter_map(|u| figure(u)).sum();
                            json!({"attributes": attributes(model, ("gen_ai.token.modality", "unknown")),
                                   "startTimeUnixNano": start, "timeUnixNano": end, "asInt": sum.to_string()})
                        })
                        .collect();
                    if !points.is_empty() {
                        metrics.push(json!({"name": name, "description": description, "unit": "{token}",
                            "sum": {"dataPoints": points, "aggregationTemporality": DELTA, "isMonotonic": true}}));
                    }
                }
                for (name, figure) in [
                    ("gen_ai.client.inference.operation.input_tokens", input as fn(&&Tokens) -> u64),
                    ("gen_ai.client.inference.operation.output_tokens", output),
                ] {
                    let points = by_model
                        .iter()
                        .map(|(model, usages)| {
                            let mut a = attributes(model, ("", ""));
                            a.remove(2);
                            point(a, &usages.iter().map(figure).collect::<Vec<_>>())
                        })
                        .collect();
                    metrics.push(histogram(name, "Tokens per inference operation.", points));
                }
            }
        }
        let doc = json!({"resourceMetrics": [{
            "resource": self.resource(),
            "scopeMetrics": [{"scope": Self::scope(), "metrics": metrics, "schemaUrl": SCHEMA_URL}],
            "schemaUrl": SCHEMA_URL,
        }]});
        write_line(sink.out, &doc, Layout::Compact);
    }
}

/// One figure of a usage.
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

/// An attribute as OTLP/JSON writes it: an `AnyValue` with its type named, integers as strings.
fn kv(key: &str, v: &Value) -> Value {
    let value = match v {
        Value::Bool(b) => json!({"boolValue": b}),
        Value::Number(n) if n.is_u64() || n.is_i64() => json!({"intValue": n.to_string()}),
        Value::Number(n) => json!({"doubleValue": n.as_f64().unwrap_or(0.0)}),
        Value::String(s) => json!({"stringValue": s}),
        other => json!({"stringValue": other.to_string()}),
    };
    json!({"key": key, "value": value})
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
            ..crate::codec::Hints::default()
        }
    }

    fn encode(&mut self, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        if self.done {
            return Fate::Absorbed;
        }
        self.begin(ctx, rec.origin);
        match &rec.event {
            Event::Session(s) => {
                self.model(s.model.as_deref());
                if let Some(p) = s.provider.as_deref().filter(|p| !p.is_empty()) {
                    self.provider = Some(p.to_string());
                }
                if self.conversation.is_none() {
                    self.conversation = s.id.clone();
                }
                if let (false, 1, Some(t)) = (self.live, self.ticks, s.timestamp.as_deref().and_then(iso_ns)) {
                    // The source's own time, for the run's start.
                    self.epoch_ns = t;
                    self.start = t;
                }
                Fate::Absorbed
            }
            Event::RoundStart { .. } => {
                let now = self.now();
                let model = ctx.model.clone();
                self.rounds.push(Request::new(now, ctx.totals, model));
                Fate::Written
            }
            Event::TurnStart { .. } => {
                let now = self.now();
                self.turns.push(Request::new(now, ctx.totals, ctx.model.clone()));
                Fate::Written
            }
            Event::Usage(u) => {
                self.model(u.model.as_deref());
                let now = self.now();
                let model = u.model.as_deref().map(str::to_string);
                if let Some(m) = &model {
                    for r in [self.rounds.last_mut(), self.turns.last_mut()].into_iter().flatten() {
                        r.model.get_or_insert(m.clone());
                    }
                }
                if u.scope == Scope::Round && u.basis == Basis::Delta {
                    let mut r = Request::new(now, Tokens::default(), model.or_else(|| ctx.model.clone()));
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
                let now = self.now();
                let id = c.id.as_deref().unwrap_or_default().to_string();
                let arguments = self.content.then(|| c.arguments.to_text());
                self.open_tool(&id, &c.name, arguments, now);
                Fate::Written
            }
            Event::ToolResult(r) => {
                let now = self.now();
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
                let now = self.now();
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
            Event::Cost { .. } | Event::TurnEnd { .. } | Event::RoundEnd { .. } => {
                self.now();
                Fate::Absorbed
            }
            Event::Terminal(t) => {
                self.finish(t, ctx, sink);
                self.done = true;
                Fate::Written
            }
            other => {
                self.now();
                sink.report.dropped_kind(other.kind());
                Fate::Dropped
            }
        }
    }
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
    Some(((days * 86_400 + h * 3600 + mi * 60 + sec) * 1_000_000_000).saturating_add(nanos))
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
    }
}

//! Run summaries: one record per run, whatever its dialect, and totals across runs.
//!
//! A summary is a translation whose encoder gathers figures instead of writing lines: the same
//! decoders, the same usage ledger, the same terminal handling. So a run's tokens and outcome
//! in its summary are the ones every translation of it states.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use serde_json::{json, Map, Value};

use crate::codec::Context;
use crate::codec::{Dialect, Encode, Record, Sink};
use crate::model::{Basis, Event, Outcome, Scope, Tokens, ToolStatus};
use crate::pipeline::{translate_with, Diagnostic, Options, Stop};
use crate::report::Fate;

/// Longest final text in a summary, in characters, unless the full text is asked for.
pub const FINAL_TEXT_CHARS: usize = 200;

/// Calls and failures of one tool: an entry of `tool_calls.by_name`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolCount {
    /// Calls made (a call withdrawn before it ran is none).
    pub calls: u64,
    /// Calls that failed or were refused (cancelled ones are not failures).
    pub failed: u64,
}

/// A run's tool calls: `tool_calls` in the JSON.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolCalls {
    /// Calls made, of every tool.
    pub total: u64,
    /// Calls that failed or were refused, of every tool.
    pub failed: u64,
    /// Calls and failures by the tool's name.
    pub by_name: BTreeMap<String, ToolCount>,
}

/// One run, summarized: what `agentgate summary` writes as one JSON object, each field under
/// its own name there (`tokens_basis` is `tokens.basis`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunSummary {
    /// The file the run was read from, as its caller names it (`<stdin>` for standard input).
    pub file: String,
    /// The run's dialect; `None` when it could not be told (or the input held no line).
    pub dialect: Option<Dialect>,
    /// How the run ended.
    pub outcome: Option<Outcome>,
    /// The exit status the run had in its own dialect: the one it stated, else the one its
    /// dialect's outcome table gives.
    pub exit_status: Option<i64>,
    /// Why the run stopped, in its source's words, where known.
    pub reason: Option<String>,
    /// Why the run failed, where it did and the source says.
    pub error: Option<String>,
    /// The agent's final answer, cut to [`FINAL_TEXT_CHARS`] characters unless the whole
    /// text was asked for.
    pub final_text: String,
    /// The final text was cut.
    pub final_text_cut: bool,
    /// The agent's session id, where the stream states one.
    pub session_id: Option<String>,
    /// The run's id, where the stream states one apart from its session's (wuu).
    pub run_id: Option<String>,
    /// Every model the run names, in the order they came.
    pub models: Vec<String>,
    /// Turns (user requests worked on).
    pub turns: u64,
    /// Rounds (model requests).
    pub rounds: u64,
    /// Tool calls: how many, how many failed, by the tool's name.
    pub tool_calls: ToolCalls,
    /// Token totals: `input` including cache reads and writes, `cache_read`, `cache_write`,
    /// `output`, `reasoning` and `total` where known.
    pub tokens: Tokens,
    /// How the usage was reported: `delta`, `cumulative`, `session`, or a mix joined by `+`
    /// (`tokens.basis` in the JSON).
    pub tokens_basis: Vec<&'static str>,
    /// How long the run took, in milliseconds, where the source states it.
    pub duration_ms: Option<u64>,
    /// The time of the run's first and last records, in milliseconds since the Unix epoch,
    /// where the source states them.
    pub first_timestamp_ms: Option<u64>,
    /// See [`RunSummary::first_timestamp_ms`].
    pub last_timestamp_ms: Option<u64>,
    /// What was wrong with the run's stream: bad lines, no terminal record, disagreements.
    pub problems: Vec<String>,
    /// The run's cost in US dollars, where its source states one (summed over its requests,
    /// each counted once; or the source's own total).
    pub cost_usd: Option<f64>,
}

impl RunSummary {
    /// The summary as one JSON object.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("file".into(), json!(self.file));
        m.insert("dialect".into(), json!(self.dialect.map(Dialect::name)));
        m.insert("outcome".into(), json!(self.outcome.map(Outcome::name)));
        m.insert("exit_status".into(), json!(self.exit_status));
        for (k, v) in [
            ("reason", &self.reason),
            ("error", &self.error),
            ("session_id", &self.session_id),
            ("run_id", &self.run_id),
        ] {
            if let Some(v) = v {
                m.insert(k.into(), json!(v));
            }
        }
        m.insert("final_text".into(), json!(self.final_text));
        if self.final_text_cut {
            m.insert("final_text_cut".into(), json!(true));
        }
        m.insert("models".into(), json!(self.models));
        m.insert("turns".into(), json!(self.turns));
        m.insert("rounds".into(), json!(self.rounds));
        let t = &self.tool_calls;
        let by_name: Map<String, Value> =
            t.by_name.iter().map(|(k, t)| (k.clone(), json!({"calls": t.calls, "failed": t.failed}))).collect();
        m.insert("tool_calls".into(), json!({"total": t.total, "failed": t.failed, "by_name": by_name}));
        let mut tokens = tokens_json(&self.tokens, false);
        if !self.tokens_basis.is_empty() {
            tokens.insert("basis".into(), json!(self.tokens_basis.join("+")));
        }
        m.insert("tokens".into(), Value::Object(tokens));
        if let Some(c) = self.cost_usd {
            m.insert("cost_usd".into(), json!(c));
        }
        for (k, v) in [
            ("duration_ms", self.duration_ms),
            ("first_timestamp_ms", self.first_timestamp_ms),
            ("last_timestamp_ms", self.last_timestamp_ms),
        ] {
            if let Some(v) = v {
                m.insert(k.into(), json!(v));
            }
        }
        m.insert("problems".into(), json!(self.problems));
        Value::Object(m)
    }
}

/// The encoder that gathers a run's figures, into a summary its caller keeps a handle on.
struct Gather {
    full: bool,
    s: Rc<RefCell<RunSummary>>,
    round_ends: u64,
    round_usages: u64,
    turn_starts: u64,
    turn_ends: u64,
}

impl Gather {
    fn tool(&self, name: &str, calls: u64, failed: u64) {
        let mut s = self.s.borrow_mut();
        let t = s.tool_calls.by_name.entry(name.to_string()).or_default();
        t.calls += calls;
        t.failed += failed;
    }

    fn basis(&self, b: &'static str) {
        let mut s = self.s.borrow_mut();
        if !s.tokens_basis.contains(&b) {
            s.tokens_basis.push(b);
        }
    }

    fn model(&self, m: Option<&str>) {
        let mut s = self.s.borrow_mut();
        if let Some(m) = m.filter(|m| !s.models.iter().any(|x| x == m)) {
            s.models.push(m.to_string());
        }
    }
}

impl Encode for Gather {
    fn hints(&self) -> crate::codec::Hints {
        crate::codec::Hints {
            carries_summaries: true,
            call_arguments: false,
            call_output: false,
            ..crate::codec::Hints::default()
        }
    }

    fn encode(&mut self, rec: &Record, ctx: &Context, _sink: &mut Sink<'_>) -> Fate {
        match &rec.event {
            Event::Session(x) => {
                {
                    let mut s = self.s.borrow_mut();
                    if s.session_id.is_none() {
                        s.session_id = x.id.clone();
                    }
                    if s.run_id.is_none() {
                        s.run_id = x.run_id.clone();
                    }
                }
                self.model(x.model.as_deref());
            }
            Event::TurnStart { .. } => self.turn_starts += 1,
            Event::TurnEnd { .. } => self.turn_ends += 1,
            Event::RoundEnd { .. } => self.round_ends += 1,
            Event::ToolCall(c) => self.tool(&c.name, 1, 0),
            // A call withdrawn before it returned (wuu's tool_removed) was not a call after all.
            Event::ToolWithdrawn { .. } => {
                if let Some(name) = ctx.call.name.as_deref() {
                    let mut s = self.s.borrow_mut();
                    if let Some(t) = s.tool_calls.by_name.get_mut(name) {
                        t.calls = t.calls.saturating_sub(1);
                        if t.calls == 0 && t.failed == 0 {
                            s.tool_calls.by_name.remove(name);
                        }
                    }
                }
            }
            Event::ToolResult(r) => {
                let name = r.name.clone().or_else(|| ctx.call.name.clone()).unwrap_or_default();
                self.tool(&name, u64::from(!ctx.matched), u64::from(r.status == ToolStatus::Failed));
            }
            // A refusal of a call already answered as failed was counted with that answer.
            Event::PermissionDenied(d) => self.tool(&d.name, u64::from(!ctx.matched), u64::from(!ctx.answered)),
            Event::Usage(u) => {
                self.model(u.model.as_deref());
                if u.scope == Scope::Round && u.basis == Basis::Delta && u.of.is_none() {
                    self.round_usages += 1;
                }
                self.basis(match (u.scope, u.basis) {
                    (Scope::Run, _) => "session",
                    (_, Basis::Delta) => "delta",
                    (_, Basis::Cumulative) => "cumulative",
                });
            }
            Event::SessionSummary(x) => {
                self.model(x.model.as_deref());
                for c in x.tool_calls.iter().flatten() {
                    self.tool(&c.name, 1, u64::from(c.answered && c.error));
                }
                if !x.tokens.is_empty() {
                    self.basis("session");
                }
                let mut s = self.s.borrow_mut();
                s.turns += x.turns.unwrap_or(0);
                s.duration_ms = x.duration_ms.or(s.duration_ms);
                s.first_timestamp_ms = s.first_timestamp_ms.or(x.first_timestamp_ms);
                s.last_timestamp_ms = x.last_timestamp_ms.or(s.last_timestamp_ms);
            }
            Event::Terminal(t) => {
                self.model(t.model.as_deref());
                let mut s = self.s.borrow_mut();
                s.outcome = Some(t.outcome);
                s.cost_usd = t.cost_usd;
                s.reason = t.reason.clone();
                s.error = t.error.clone();
                s.exit_status = t.exit_code.or_else(|| {
                    let c = ctx.source?.contract();
                    c.outcome_code(t.outcome, "exit_code").or_else(|| c.outcome_code(t.outcome, "exit_status"))
                });
                if s.session_id.is_none() {
                    s.session_id = t.session_id.clone();
                }
                // wuu states its run id on the result only.
                if let Some(Value::String(run)) =
                    rec.extra.get("run_id").filter(|r| r.as_str().is_some_and(|r| !r.is_empty()))
                {
                    s.run_id.get_or_insert_with(|| run.clone());
                }
                let text = t.final_text.clone().unwrap_or_default();
                let (head, cut) = crate::json::cut_chars(&text, if self.full { usize::MAX } else { FINAL_TEXT_CHARS });
                s.final_text = head.to_string();
                s.final_text_cut = cut;
                s.tokens = ctx.totals;
                s.turns += self.turn_ends.max(self.turn_starts);
                s.rounds = self.round_ends.max(self.round_usages);
                if t.synthesized {
                    s.problems
                        .push(format!("no terminal record: {}", t.reason.as_deref().unwrap_or("input ended early")));
                }
            }
            _ => {}
        }
        Fate::Absorbed
    }
}

/// Summarizes one run read from `input`. `from` `None` detects its dialect.
pub fn summarize<R: crate::io::framing::Input>(input: R, file: &str, from: Option<Dialect>, full: bool) -> RunSummary {
    summarize_beside(input, file, from, full, None).0
}

/// [`summarize`], and with `otlp` the run's OpenTelemetry messages too, made in the same pass
/// (`summary --otlp-endpoint`); `otlp` says how (times, content, conventions).
pub fn summarize_beside<R: crate::io::framing::Input>(
    input: R,
    file: &str,
    from: Option<Dialect>,
    full: bool,
    otlp: Option<&crate::codec::EncodeOptions>,
) -> (RunSummary, Option<crate::dialect::otlp::Telemetry>) {
    let opts = Options::new(from, Dialect::Canonical);
    let shared = Rc::new(RefCell::new(RunSummary { file: file.to_string(), ..RunSummary::default() }));
    let gather = Gather { full, s: Rc::clone(&shared), round_ends: 0, round_usages: 0, turn_starts: 0, turn_ends: 0 };
    let kept = crate::dialect::otlp::Kept::default();
    let encoder: Box<dyn Encode> = match otlp {
        Some(o) => Box::new(crate::dialect::otlp::Beside::new(Box::new(gather), o, Rc::clone(&kept))),
        None => Box::new(gather),
    };
    let mut problems = Vec::new();
    let mut diag = |d: Diagnostic| {
        problems.push(if d.line == 0 { d.message } else { format!("line {}: {}", d.line, d.message) });
    };
    let result = translate_with(input, &mut std::io::sink(), &opts, encoder, &mut diag);
    let mut s = shared.take();
    let t = &mut s.tool_calls;
    (t.total, t.failed) = t.by_name.values().fold((0, 0), |(c, f), n| (c + n.calls, f + n.failed));
    match result {
        Ok(summary) => {
            s.dialect = summary.source;
            if summary.source.is_none() && summary.stopped.is_none() {
                // Nothing to tell a dialect from (an agent that printed nothing): no run of
                // any dialect, said first.
                problems.insert(0, "no dialect: the input holds no lines".to_string());
            }
            if let Some(Stop::Read(e)) = &summary.stopped {
                problems.push(format!("cannot read: {e}"));
            }
        }
        Err(e) => problems.push(format!("cannot read: {e}")),
    }
    problems.append(&mut s.problems);
    s.problems = problems;
    let telemetry = kept.borrow_mut().pop();
    (s, telemetry)
}

/// Token figures as a JSON object: the known ones, or every one with 0 for the unknown.
fn tokens_json(t: &Tokens, zeros: bool) -> Map<String, Value> {
    let mut m = Map::new();
    for (k, v) in [
        ("input", t.input),
        ("cache_read", t.cache_read),
        ("cache_write", t.cache_write),
        ("output", t.output),
        ("reasoning", t.reasoning),
        ("total", t.total),
    ] {
        if let Some(v) = v.or(zeros.then_some(0)) {
            m.insert(k.into(), json!(v));
        }
    }
    m
}

/// Totals across runs: runs by outcome, by dialect and by model; tokens summed; tool calls by
/// name with their failures.
pub fn totals(runs: &[RunSummary]) -> Value {
    let all: Vec<&RunSummary> = runs.iter().collect();
    json!({"totals": totals_of(&all)})
}

/// One object per group of runs (`summary --group-by`), in the order groups first come: the
/// group's name under the word it is grouped by, then its runs' totals.
pub fn group_totals(runs: &[RunSummary], by: GroupBy) -> Vec<Value> {
    groups(runs, by)
        .into_iter()
        .map(|(key, members)| {
            let mut m = Map::new();
            m.insert(by.name().into(), json!(key));
            m.extend(totals_of(&members));
            Value::Object(m)
        })
        .collect()
}

/// The runs in groups, in the order groups first come (a run of several models in each).
fn groups(runs: &[RunSummary], by: GroupBy) -> Vec<(String, Vec<&RunSummary>)> {
    let mut groups: Vec<(String, Vec<&RunSummary>)> = Vec::new();
    for r in runs {
        for key in by.keys(r) {
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, members)) => members.push(r),
                None => groups.push((key, vec![r])),
            }
        }
    }
    groups
}

fn totals_of(runs: &[&RunSummary]) -> Map<String, Value> {
    let mut by_outcome: BTreeMap<&str, u64> = BTreeMap::new();
    let mut by_dialect: BTreeMap<&str, u64> = BTreeMap::new();
    let mut by_model: BTreeMap<&str, u64> = BTreeMap::new();
    let mut tools: BTreeMap<&str, ToolCount> = BTreeMap::new();
    let mut tokens = Tokens::default();
    let mut cost: Option<f64> = None;
    for r in runs {
        if let Some(c) = r.cost_usd {
            cost = Some(cost.unwrap_or(0.0) + c);
        }
        *by_outcome.entry(r.outcome.map_or("unknown", Outcome::name)).or_default() += 1;
        *by_dialect.entry(r.dialect.map_or("unknown", Dialect::name)).or_default() += 1;
        for m in &r.models {
            *by_model.entry(m).or_default() += 1;
        }
        for (name, t) in &r.tool_calls.by_name {
            let e = tools.entry(name).or_default();
            e.calls += t.calls;
            e.failed += t.failed;
        }
        tokens = tokens.plus(&r.tokens);
    }
    let tools: Map<String, Value> =
        tools.into_iter().map(|(k, t)| (k.to_string(), json!({"calls": t.calls, "failed": t.failed}))).collect();
    let tok = tokens_json(&tokens, true);
    let Value::Object(m) = json!({
        "runs": runs.len(),
        "by_outcome": by_outcome,
        "by_dialect": by_dialect,
        "by_model": by_model,
        "tokens": tok,
        "cost_usd": cost.map(round_cost),
        "tools": tools,
    }) else {
        unreachable!("an object")
    };
    m
}

/// The columns of the table and the CSV, as the CSV's header names them (`--columns` takes
/// these names, or the table's shorter headers).
pub const COLUMNS: [&str; 15] = [
    "file",
    "dialect",
    "outcome",
    "exit_status",
    "turns",
    "rounds",
    "tool_calls",
    "tool_failed",
    "input",
    "cache_read",
    "cache_write",
    "output",
    "cost_usd",
    "problems",
    "final_text",
];

/// Which columns a table keeps longest when the terminal is narrow, first to last: the file,
/// the outcome, the calls, the tokens and the cost (the core, never left out while a column of
/// the rest could go), then the rest.
const PRIORITY: [&str; 15] = [
    "file",
    "outcome",
    "tool_calls",
    "input",
    "output",
    "cost_usd",
    "dialect",
    "final_text",
    "tool_failed",
    "problems",
    "exit_status",
    "cache_read",
    "turns",
    "rounds",
    "cache_write",
];
const CORE: usize = 6;

/// The table's header for a column: the CSV's name, shorter where it would be the widest cell.
fn header(c: &str) -> &str {
    match c {
        "exit_status" => "exit",
        "tool_calls" => "calls",
        "tool_failed" => "failed",
        "cache_read" => "cache_rd",
        "cache_write" => "cache_wr",
        c => c,
    }
}

/// A column by its CSV name or its table header.
pub fn column(name: &str) -> Option<usize> {
    COLUMNS.iter().position(|c| *c == name || header(c) == name)
}

const FILE: usize = 0;
const PROBLEMS: usize = 13;
const TEXT: usize = 14;

/// How runs are put together in a table or CSV (`summary --group-by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupBy {
    Dialect,
    Model,
    Outcome,
}

impl GroupBy {
    /// The word `--group-by` takes, and the group column's header.
    pub fn name(self) -> &'static str {
        match self {
            GroupBy::Dialect => "dialect",
            GroupBy::Model => "model",
            GroupBy::Outcome => "outcome",
        }
    }

    /// The groups a run counts in: one, or for a run of several models each of them.
    fn keys(self, r: &RunSummary) -> Vec<String> {
        let key = match self {
            GroupBy::Dialect => r.dialect.map_or("unknown", Dialect::name),
            GroupBy::Outcome => r.outcome.map_or("unknown", Outcome::name),
            GroupBy::Model if r.models.is_empty() => "unknown",
            GroupBy::Model => return r.models.clone(),
        };
        vec![key.to_string()]
    }
}

impl std::str::FromStr for GroupBy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "dialect" => Ok(GroupBy::Dialect),
            "model" => Ok(GroupBy::Model),
            "outcome" => Ok(GroupBy::Outcome),
            _ => Err(format!("cannot group by {}: dialect, model or outcome", crate::error::quoted(s))),
        }
    }
}

/// What a table or CSV shows beside the runs' figures.
#[derive(Debug, Clone, Default)]
pub struct TableOptions {
    /// The columns after the first (the file, or the group), in order; `None`: every column,
    /// and in a table those that have a value in some row.
    pub columns: Option<Vec<usize>>,
    /// A totals row (a table always has one).
    pub totals: bool,
    /// One row per group of runs rather than per run.
    pub group_by: Option<GroupBy>,
}

/// A cost as a table shows it: to a hundredth of a cent, as money is read (`0.0723`, not
/// `0.07231560000000001`); a cost too small to show so is said to be.
fn money(c: f64) -> String {
    let shown = format!("{c:.4}");
    if c > 0.0 && shown == "0.0000" {
        "<0.0001".into()
    } else {
        shown
    }
}

/// A cell as people read it: control characters from the input (an escape sequence in a
/// final text, a newline in a file name) written as their escapes, so that no cell moves the
/// terminal's cursor or splits a row.
fn cell(s: &str) -> String {
    crate::pipeline::one_line(s).into_owned()
}

/// One run's cells, every column; `table`: money rounded.
fn row(r: &RunSummary, table: bool) -> Vec<String> {
    let n = |v: Option<u64>| v.map(|x| x.to_string()).unwrap_or_default();
    vec![
        cell(&r.file),
        r.dialect.map_or("unknown", Dialect::name).to_string(),
        r.outcome.map_or("unknown", Outcome::name).to_string(),
        r.exit_status.map(|c| c.to_string()).unwrap_or_default(),
        r.turns.to_string(),
        r.rounds.to_string(),
        r.tool_calls.total.to_string(),
        r.tool_calls.failed.to_string(),
        n(r.tokens.input),
        n(r.tokens.cache_read),
        n(r.tokens.cache_write),
        n(r.tokens.output),
        r.cost_usd.map(|c| if table { money(c) } else { c.to_string() }).unwrap_or_default(),
        r.problems.len().to_string(),
        cell(&r.final_text),
    ]
}

/// Every outcome with its count, the most frequent first (then by name).
fn outcome_counts(runs: &[&RunSummary]) -> Vec<(&'static str, usize)> {
    let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
    for r in runs {
        *counts.entry(r.outcome.map_or("unknown", Outcome::name)).or_default() += 1;
    }
    let mut counts: Vec<(&'static str, usize)> = counts.into_iter().collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    counts
}

/// A row for several runs (a group, or all of them), labelled: figures summed, the most
/// frequent outcome, the dialect where they share one.
fn sum_row(label: String, runs: &[&RunSummary], table: bool) -> Vec<String> {
    let sum = |f: &dyn Fn(&RunSummary) -> u64| runs.iter().map(|r| f(r)).sum::<u64>().to_string();
    let outcomes = outcome_counts(runs);
    let costs: Vec<f64> = runs.iter().filter_map(|r| r.cost_usd).collect();
    let cost = round_cost(costs.iter().sum());
    let dialect = match runs.first().map(|r| r.dialect) {
        Some(d) if runs.iter().all(|r| r.dialect == d) && runs.len() > 1 => d.map_or("unknown", Dialect::name),
        _ => "",
    };
    vec![
        label,
        dialect.to_string(),
        // The most frequent outcome here; all of them on the line below a table.
        outcomes.first().map(|(o, n)| format!("{n} {o}")).unwrap_or_default(),
        String::new(),
        sum(&|r| r.turns),
        sum(&|r| r.rounds),
        sum(&|r| r.tool_calls.total),
        sum(&|r| r.tool_calls.failed),
        sum(&|r| r.tokens.input.unwrap_or(0)),
        sum(&|r| r.tokens.cache_read.unwrap_or(0)),
        sum(&|r| r.tokens.cache_write.unwrap_or(0)),
        sum(&|r| r.tokens.output.unwrap_or(0)),
        match (costs.is_empty(), table) {
            (true, _) => String::new(),
            (false, true) => money(cost),
            (false, false) => cost.to_string(),
        },
        sum(&|r| r.problems.len() as u64),
        String::new(),
    ]
}

fn runs_label(what: &str, n: usize) -> String {
    format!("{what} ({n} run{})", if n == 1 { "" } else { "s" })
}

/// The body of a table or CSV: a row per run, or per group (in the order groups first come).
fn body(runs: &[RunSummary], opts: &TableOptions, table: bool) -> Vec<Vec<String>> {
    let Some(by) = opts.group_by else {
        return runs.iter().map(|r| row(r, table)).collect();
    };
    groups(runs, by)
        .into_iter()
        .map(|(key, members)| sum_row(runs_label(&cell(&key), members.len()), &members, table))
        .collect()
}

/// A sum of costs without the float noise of adding (0.1 + 0.2): to the micro-dollar's
/// hundredth, more than any agent states.
fn round_cost(c: f64) -> f64 {
    (c * 1e8).round() / 1e8
}

/// An aligned table for people, with a totals row, as wide as it needs.
pub fn table(runs: &[RunSummary]) -> String {
    table_fitting(runs, None, &TableOptions::default())
}

/// An aligned table for people, with a totals row, fitting `width` columns where one is
/// given (the terminal's; 60 or more). Columns empty in every row are left out (unless
/// `opts.columns` names them). Where the rest is too wide, columns give way by
/// `PRIORITY`: the least read are left out first (the file, outcome, calls, tokens and cost
/// last); file names lose their left end (the folders) and the final text its right end, down to
/// a few characters; costs are rounded to a hundredth of a cent. A line counting every outcome
/// closes it.
pub fn table_fitting(runs: &[RunSummary], width: Option<usize>, opts: &TableOptions) -> String {
    const GAP: usize = 2;
    // The least a file name and a final text are cut to, and what they keep before the columns
    // least read give way.
    const FILE_MIN: usize = 12;
    const TEXT_MIN: usize = 8;
    const FILE_WANT: usize = 32;
    const TEXT_WANT: usize = 24;
    let all: Vec<&RunSummary> = runs.iter().collect();
    let mut head: Vec<String> = COLUMNS.iter().map(|c| header(c).to_string()).collect();
    if let Some(by) = opts.group_by {
        head[FILE] = by.name().to_string();
    }
    let mut rows: Vec<Vec<String>> = vec![head];
    rows.extend(body(runs, opts, true));
    let body_rows = rows.len() - 1;
    rows.push(sum_row(runs_label("total", runs.len()), &all, true));
    let mut shown: Vec<usize> = match &opts.columns {
        Some(chosen) => std::iter::once(FILE).chain(chosen.iter().copied().filter(|&c| c != FILE)).collect(),
        // A column no row has a value in (cost where no source states one, problems where none
        // had any) says nothing.
        None => {
            let said = |i: usize, c: &str| !(c.is_empty() || i == PROBLEMS && c == "0");
            (0..COLUMNS.len()).filter(|&i| i == FILE || rows[1..=body_rows].iter().any(|r| said(i, &r[i]))).collect()
        }
    };
    let chars = |s: &str| s.chars().count();
    let natural: Vec<usize> =
        (0..COLUMNS.len()).map(|i| rows.iter().map(|r| chars(&r[i])).max().unwrap_or(0)).collect();
    let mut widths = natural.clone();
    match width {
        Some(w) => {
            // The header and the totals row's label are never cut; a file name is, from the left.
            let label = chars(&rows[0][FILE]).max(chars(&rows[rows.len() - 1][FILE]));
            let min = |i: usize| match i {
                FILE => natural[FILE].min(FILE_MIN).max(label),
                TEXT => natural[TEXT].min(TEXT_MIN),
                i => natural[i],
            };
            let want = |i: usize| match i {
                FILE => natural[FILE].min(FILE_WANT).max(min(FILE)),
                TEXT => natural[TEXT].min(TEXT_WANT),
                i => natural[i],
            };
            let need = |shown: &[usize], size: &dyn Fn(usize) -> usize| {
                shown.iter().map(|&i| size(i)).sum::<usize>() + GAP * shown.len().saturating_sub(1)
            };
            let rank = |i: usize| PRIORITY.iter().position(|p| *p == COLUMNS[i]).unwrap_or(PRIORITY.len());
            // The rest give way while the columns shown want more than the width; then, the file
            // and the final text cut to their least, the core too, the cost first.
            let mut order: Vec<usize> = shown.iter().copied().filter(|&i| i != FILE).collect();
            order.sort_by_key(|&i| std::cmp::Reverse(rank(i)));
            for &i in &order {
                if need(&shown, &want) <= w || rank(i) < CORE {
                    break;
                }
                shown.retain(|&c| c != i);
            }
            for &i in &order {
                if need(&shown, &min) <= w {
                    break;
                }
                shown.retain(|&c| c != i);
            }
            // What is left over goes to the final text and the file name, up to what they want,
            // then up to what they have.
            for &i in &shown {
                widths[i] = min(i);
            }
            let mut room = w.saturating_sub(need(&shown, &min));
            for (i, upto) in [(TEXT, want(TEXT)), (FILE, want(FILE)), (FILE, natural[FILE]), (TEXT, natural[TEXT])] {
                if shown.contains(&i) {
                    let more = upto.saturating_sub(widths[i]).min(room);
                    widths[i] += more;
                    room -= more;
                }
            }
        }
        None => widths[TEXT] = natural[TEXT].min(40),
    }
    if widths[FILE] < natural[FILE] {
        // The rows' file names (not the header nor the totals' label) lose their folders.
        let room = widths[FILE];
        for r in rows.iter_mut().skip(1).take(body_rows) {
            let n = chars(&r[FILE]);
            if n > room {
                r[FILE] = format!("…{}", r[FILE].chars().skip(n - room + 1).collect::<String>());
            }
        }
    }
    if widths[TEXT] < natural[TEXT] {
        let room = widths[TEXT];
        for r in rows.iter_mut() {
            let (head, cut) = crate::json::cut_chars(&r[TEXT], room);
            r[TEXT] = if cut && room > 1 {
                // Said cut, within the room.
                format!("{}…", crate::json::cut_chars(&r[TEXT], room - 1).0)
            } else {
                head.to_string()
            };
        }
    }
    let mut out = String::new();
    for r in &rows {
        let cells: Vec<String> = shown.iter().map(|&i| format!("{:<w$}", r[i], w = widths[i])).collect();
        out.push_str(cells.join(&" ".repeat(GAP)).trim_end());
        out.push('\n');
    }
    let outcomes = outcome_counts(&all);
    if outcomes.len() > 1 {
        // On as many lines as the width asks.
        let said: Vec<String> = outcomes.iter().map(|(o, n)| format!("{n} {o}")).collect();
        let mut line = String::from("outcomes:");
        for (k, part) in said.iter().enumerate() {
            let part = if k + 1 < said.len() { format!("{part},") } else { part.clone() };
            if width.is_some_and(|w| chars(&line) + 1 + chars(&part) > w) && chars(&line) > "outcomes:".len() {
                out.push_str(&line);
                out.push('\n');
                line = " ".repeat("outcomes:".len());
            }
            line.push(' ');
            line.push_str(&part);
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// CSV with a header line: every column (or `opts.columns` after the first), a row per run
/// or group, and with `opts.totals` a totals row.
pub fn csv_with(runs: &[RunSummary], opts: &TableOptions) -> String {
    let shown: Vec<usize> = match &opts.columns {
        Some(chosen) => std::iter::once(FILE).chain(chosen.iter().copied().filter(|&c| c != FILE)).collect(),
        None => (0..COLUMNS.len()).collect(),
    };
    let mut names: Vec<&str> = shown.iter().map(|&i| COLUMNS[i]).collect();
    if let Some(by) = opts.group_by {
        names[0] = by.name();
    }
    let mut rows = body(runs, opts, false);
    if opts.totals {
        let all: Vec<&RunSummary> = runs.iter().collect();
        rows.push(sum_row(runs_label("total", runs.len()), &all, false));
    }
    let mut out = names.join(",");
    out.push('\n');
    for r in rows {
        let cells: Vec<String> = shown.iter().map(|&i| csv_cell(&r[i])).collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

/// CSV with a header line, a row per run.
pub fn csv(runs: &[RunSummary]) -> String {
    csv_with(runs, &TableOptions::default())
}

/// A run's figure under a name `--where` and `--sort` take: a column's, or `model` (each of
/// the run's), `reason`, `error`, `session_id`, `duration_ms`.
#[derive(Debug, Clone, PartialEq)]
enum Figure {
    Text(String),
    Number(f64),
}

/// The names `--where` and `--sort` take beside the columns'.
pub const FIELDS: [&str; 5] = ["model", "reason", "error", "session_id", "duration_ms"];

impl RunSummary {
    /// The run's figures for `name` (none where it has none); `None` for a name that is no
    /// figure's.
    fn figures(&self, name: &str) -> Option<Vec<Figure>> {
        let text = |s: Option<&str>| s.map(|s| Figure::Text(s.to_string())).into_iter().collect();
        let number = |n: Option<f64>| n.map(Figure::Number).into_iter().collect();
        Some(match name {
            "model" => self.models.iter().map(|m| Figure::Text(m.clone())).collect(),
            "reason" => text(self.reason.as_deref()),
            "error" => text(self.error.as_deref()),
            "session_id" => text(self.session_id.as_deref()),
            "duration_ms" => number(self.duration_ms.map(|d| d as f64)),
            "cost_usd" => number(self.cost_usd),
            "file" => text(Some(&self.file)),
            "dialect" => text(self.dialect.map(Dialect::name)),
            "outcome" => text(self.outcome.map(Outcome::name)),
            "final_text" => text(Some(&self.final_text)),
            name => {
                let cell = row(self, false).swap_remove(column(name)?);
                cell.parse::<f64>().map(Figure::Number).into_iter().collect()
            }
        })
    }
}

/// The name a figure is known by, from a column's header too.
fn field_name(name: &str) -> Option<&'static str> {
    FIELDS.iter().copied().find(|f| *f == name).or_else(|| column(name).map(|i| COLUMNS[i]))
}

/// One condition of `summary --where`: `FIELD=VALUE`, `!=`, `<`, `<=`, `>`, `>=`.
#[derive(Debug, Clone, PartialEq)]
pub struct Filter {
    field: &'static str,
    op: &'static str,
    value: String,
}

impl std::str::FromStr for Filter {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let at = s.find(['=', '!', '<', '>']).ok_or_else(|| {
            format!("{} is no condition: FIELD=VALUE, FIELD!=VALUE, FIELD<N, FIELD>N", crate::error::quoted(s))
        })?;
        let (name, rest) = s.split_at(at);
        let op = ["!=", "<=", ">=", "=", "<", ">"]
            .into_iter()
            .find(|op| rest.starts_with(op))
            .ok_or_else(|| format!("{} has no operator (=, !=, <, <=, >, >=)", crate::error::quoted(s)))?;
        let field = field_name(name.trim()).ok_or_else(|| unknown_field(name.trim()))?;
        Ok(Filter { field, op, value: rest[op.len()..].trim().to_string() })
    }
}

fn unknown_field(name: &str) -> String {
    let mut names: Vec<&str> = COLUMNS.to_vec();
    names.extend(FIELDS);
    format!("no figure is called {} (known: {})", crate::error::quoted(name), names.join(", "))
}

impl Filter {
    /// Whether run `r` meets the condition: some figure of it does (a run with no figure of
    /// that name is equal to the empty value alone).
    pub fn holds(&self, r: &RunSummary) -> bool {
        let figures = r.figures(self.field).unwrap_or_default();
        let want_number = self.value.parse::<f64>().ok();
        let equal = |f: &Figure| match (f, want_number) {
            (Figure::Number(n), Some(w)) => *n == w,
            (Figure::Number(n), None) => n.to_string() == self.value,
            (Figure::Text(t), _) => *t == self.value,
        };
        let order = |f: &Figure| match (f, want_number) {
            (Figure::Number(n), Some(w)) => n.partial_cmp(&w),
            (Figure::Text(t), _) => Some(t.as_str().cmp(self.value.as_str())),
            (Figure::Number(_), None) => None,
        };
        use std::cmp::Ordering::{Equal, Greater, Less};
        match self.op {
            "=" if figures.is_empty() => self.value.is_empty(),
            "=" => figures.iter().any(equal),
            "!=" if figures.is_empty() => !self.value.is_empty(),
            "!=" => !figures.iter().any(equal),
            "<" => figures.iter().any(|f| order(f) == Some(Less)),
            "<=" => figures.iter().any(|f| matches!(order(f), Some(Less | Equal))),
            ">" => figures.iter().any(|f| order(f) == Some(Greater)),
            _ => figures.iter().any(|f| matches!(order(f), Some(Greater | Equal))),
        }
    }
}

/// `summary --sort`: runs in the order of one figure, from the least (numbers by value, text
/// by its characters), or from the greatest with `descending`; runs without it last either way,
/// and runs that tie in the order they came.
pub fn sort(runs: &mut [RunSummary], field: &str, descending: bool) -> Result<(), String> {
    let field = field_name(field).ok_or_else(|| unknown_field(field))?;
    let key = |r: &RunSummary| r.figures(field).unwrap_or_default().into_iter().next();
    runs.sort_by(|a, b| {
        use std::cmp::Ordering;
        let order = match (key(a), key(b)) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => return Ordering::Greater,
            (Some(_), None) => return Ordering::Less,
            (Some(Figure::Number(x)), Some(Figure::Number(y))) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
            (Some(Figure::Text(x)), Some(Figure::Text(y))) => x.cmp(&y),
            (Some(Figure::Number(_)), Some(Figure::Text(_))) => Ordering::Less,
            (Some(Figure::Text(_)), Some(Figure::Number(_))) => Ordering::Greater,
        };
        if descending {
            order.reverse()
        } else {
            order
        }
    });
    Ok(())
}

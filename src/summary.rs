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

/// Calls and failures of one tool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolCount {
    pub calls: u64,
    pub failed: u64,
}

/// One run, summarized.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunSummary {
    pub file: String,
    pub dialect: Option<Dialect>,
    pub outcome: Option<Outcome>,
    /// The exit status the run had in its own dialect: the one it stated, else the one its
    /// dialect's outcome table gives.
    pub exit_status: Option<i64>,
    pub reason: Option<String>,
    pub error: Option<String>,
    pub final_text: String,
    pub final_text_cut: bool,
    pub session_id: Option<String>,
    pub run_id: Option<String>,
    pub models: Vec<String>,
    pub turns: u64,
    pub rounds: u64,
    pub tools: BTreeMap<String, ToolCount>,
    pub tokens: Tokens,
    /// How the usage was reported: `delta`, `cumulative`, `session`, or a mix joined by `+`.
    pub tokens_basis: Vec<&'static str>,
    pub duration_ms: Option<u64>,
    pub first_timestamp_ms: Option<u64>,
    pub last_timestamp_ms: Option<u64>,
    pub problems: Vec<String>,
    /// The run's cost in US dollars, where its source states one (summed over its requests,
    /// each counted once; or the source's own total).
    pub cost_usd: Option<f64>,
}

impl RunSummary {
    pub fn tool_calls(&self) -> ToolCount {
        self.tools
            .values()
            .fold(ToolCount::default(), |a, t| ToolCount { calls: a.calls + t.calls, failed: a.failed + t.failed })
    }

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
        let total = self.tool_calls();
        let by_name: Map<String, Value> =
            self.tools.iter().map(|(k, t)| (k.clone(), json!({"calls": t.calls, "failed": t.failed}))).collect();
        m.insert("tool_calls".into(), json!({"total": total.calls, "failed": total.failed, "by_name": by_name}));
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
        let t = s.tools.entry(name.to_string()).or_default();
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
                    if let Some(t) = s.tools.get_mut(name) {
                        t.calls = t.calls.saturating_sub(1);
                        if t.calls == 0 && t.failed == 0 {
                            s.tools.remove(name);
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
    let opts = Options::new(from, Dialect::Canonical);
    let shared = Rc::new(RefCell::new(RunSummary { file: file.to_string(), ..RunSummary::default() }));
    let gather = Gather { full, s: Rc::clone(&shared), round_ends: 0, round_usages: 0, turn_starts: 0, turn_ends: 0 };
    let mut problems = Vec::new();
    let mut diag = |d: Diagnostic| {
        problems.push(if d.line == 0 { d.message } else { format!("line {}: {}", d.line, d.message) });
    };
    let result = translate_with(input, &mut std::io::sink(), &opts, Box::new(gather), &mut diag);
    let mut s = shared.take();
    match result {
        Ok(summary) => {
            s.dialect = summary.source;
            if let Some(Stop::Read(e)) = &summary.stopped {
                problems.push(format!("cannot read: {e}"));
            }
        }
        Err(e) => problems.push(format!("cannot read: {e}")),
    }
    problems.append(&mut s.problems);
    s.problems = problems;
    s
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
        for (name, t) in &r.tools {
            let e = tools.entry(name).or_default();
            e.calls += t.calls;
            e.failed += t.failed;
        }
        tokens = tokens.plus(&r.tokens);
    }
    let tools: Map<String, Value> =
        tools.into_iter().map(|(k, t)| (k.to_string(), json!({"calls": t.calls, "failed": t.failed}))).collect();
    let tok = tokens_json(&tokens, true);
    json!({"totals": {
        "runs": runs.len(),
        "by_outcome": by_outcome,
        "by_dialect": by_dialect,
        "by_model": by_model,
        "tokens": tok,
        "cost_usd": cost,
        "tools": tools,
    }})
}

const COLUMNS: [&str; 15] = [
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

/// A cell as people read it: control characters from the input (an escape sequence in a
/// final text, a newline in a file name) written as their escapes, so that no cell moves the
/// terminal's cursor or splits a row.
fn cell(s: &str) -> String {
    crate::pipeline::one_line(s).into_owned()
}

fn row(r: &RunSummary, text_chars: usize) -> Vec<String> {
    let n = |v: Option<u64>| v.map(|x| x.to_string()).unwrap_or_default();
    let tools = r.tool_calls();
    vec![
        cell(&r.file),
        r.dialect.map_or("unknown", Dialect::name).to_string(),
        r.outcome.map_or("unknown", Outcome::name).to_string(),
        r.exit_status.map(|c| c.to_string()).unwrap_or_default(),
        r.turns.to_string(),
        r.rounds.to_string(),
        tools.calls.to_string(),
        tools.failed.to_string(),
        n(r.tokens.input),
        n(r.tokens.cache_read),
        n(r.tokens.cache_write),
        n(r.tokens.output),
        r.cost_usd.map(|c| c.to_string()).unwrap_or_default(),
        r.problems.len().to_string(),
        cell(crate::json::cut_chars(&r.final_text, text_chars).0),
    ]
}

/// Every outcome with its count, the most frequent first (then by name).
fn outcome_counts(runs: &[RunSummary]) -> Vec<(&'static str, usize)> {
    let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
    for r in runs {
        *counts.entry(r.outcome.map_or("unknown", Outcome::name)).or_default() += 1;
    }
    let mut counts: Vec<(&'static str, usize)> = counts.into_iter().collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    counts
}

fn totals_row(runs: &[RunSummary]) -> Vec<String> {
    let sum = |f: &dyn Fn(&RunSummary) -> u64| runs.iter().map(f).sum::<u64>().to_string();
    let outcomes = outcome_counts(runs);
    let costs: Vec<f64> = runs.iter().filter_map(|r| r.cost_usd).collect();
    vec![
        format!("total ({} run{})", runs.len(), if runs.len() == 1 { "" } else { "s" }),
        String::new(),
        // The most frequent outcome here; all of them on the line below the table.
        outcomes.first().map(|(o, n)| format!("{n} {o}")).unwrap_or_default(),
        String::new(),
        sum(&|r| r.turns),
        sum(&|r| r.rounds),
        sum(&|r| r.tool_calls().calls),
        sum(&|r| r.tool_calls().failed),
        sum(&|r| r.tokens.input.unwrap_or(0)),
        sum(&|r| r.tokens.cache_read.unwrap_or(0)),
        sum(&|r| r.tokens.cache_write.unwrap_or(0)),
        sum(&|r| r.tokens.output.unwrap_or(0)),
        if costs.is_empty() { String::new() } else { round_cost(costs.iter().sum()).to_string() },
        sum(&|r| r.problems.len() as u64),
        String::new(),
    ]
}

/// A sum of costs without the float noise of adding (0.1 + 0.2): to the micro-dollar's
/// hundredth, more than any agent states.
fn round_cost(c: f64) -> f64 {
    (c * 1e8).round() / 1e8
}

/// An aligned table for people, with a totals row, as wide as it needs.
pub fn table(runs: &[RunSummary]) -> String {
    table_fitting(runs, None)
}

/// An aligned table for people, with a totals row, fitting `width` columns where one is
/// given (the terminal's): columns empty in every row are left out, and the final text gets
/// the room the others leave (at least 8 characters; 40 where no width is given); where even
/// that is too wide, file names are cut from the left and the columns least read left out.
pub fn table_fitting(runs: &[RunSummary], width: Option<usize>) -> String {
    const GAP: usize = 2;
    // The least a file name and a final text are cut to, and what they keep before the columns
    // least read give way.
    const FILE_MIN: usize = 12;
    const TEXT_MIN: usize = 8;
    const FILE_WANT: usize = 32;
    const TEXT_WANT: usize = 24;
    let text = COLUMNS.len() - 1;
    // The CSV's names, shorter where a table's header would be the widest cell.
    let header = COLUMNS.map(|c| match c {
        "exit_status" => "exit",
        "tool_calls" => "calls",
        "tool_failed" => "failed",
        "cache_read" => "cache_rd",
        "cache_write" => "cache_wr",
        c => c,
    });
    let mut rows: Vec<Vec<String>> = vec![header.iter().map(|c| c.to_string()).collect()];
    rows.extend(runs.iter().map(|r| row(r, usize::MAX)));
    rows.push(totals_row(runs));
    // A column no run has a value in (cost where no source states one, problems where none
    // had any) says nothing.
    let problems = COLUMNS.len() - 2;
    let said = |i: usize, c: &str| !(c.is_empty() || i == problems && c == "0");
    let mut shown: Vec<usize> =
        (0..COLUMNS.len()).filter(|&i| i == 0 || rows[1..runs.len() + 1].iter().any(|r| said(i, &r[i]))).collect();
    let chars = |s: &str| s.chars().count();
    let mut widths: Vec<usize> = vec![0; COLUMNS.len()];
    for &i in &shown {
        widths[i] = rows.iter().map(|r| chars(&r[i])).max().unwrap_or(0);
    }
    if let Some(w) = width {
        // Too wide for a file name's last FILE_WANT characters and TEXT_WANT of final text: the
        // columns least read go, in this order (rounds, turns, cache writes, exit status, cache
        // reads, failed calls).
        let file_want = widths[0].min(FILE_WANT);
        let text_want = if shown.contains(&text) { widths[text].min(TEXT_WANT) + GAP } else { 0 };
        for drop in [5, 4, 10, 3, 9, 7] {
            let need: usize = shown.iter().filter(|&&i| i != 0 && i != text).map(|&i| widths[i] + GAP).sum::<usize>()
                + file_want
                + text_want;
            if need <= w {
                break;
            }
            shown.retain(|&i| i != drop);
        }
    }
    if let Some(w) = width {
        // Too wide: the file names give up their left end (the folders) until the final text
        // has TEXT_WANT characters, down to FILE_MIN, before the final text is cut to TEXT_MIN.
        let others: usize = shown.iter().filter(|&&i| i != text && i != 0).map(|&i| widths[i] + GAP).sum();
        let text_min = if shown.contains(&text) { widths[text].min(TEXT_WANT) + GAP } else { 0 };
        let label = chars(&rows[rows.len() - 1][0]);
        let file_room = w.saturating_sub(others + text_min).max(FILE_MIN).max(label);
        if widths[0] > file_room {
            widths[0] = file_room;
            // The runs' rows (not the header's nor the totals' label).
            for r in rows.iter_mut().skip(1).take(runs.len()) {
                let n = chars(&r[0]);
                if n > file_room {
                    r[0] = format!("…{}", r[0].chars().skip(n - file_room + 1).collect::<String>());
                }
            }
        }
    }
    if shown.contains(&text) {
        let others: usize = shown.iter().filter(|&&i| i != text).map(|&i| widths[i] + GAP).sum();
        let room = match width {
            Some(w) => w.saturating_sub(others).max(TEXT_MIN),
            None => 40,
        };
        widths[text] = widths[text].min(room).max(chars(COLUMNS[text]).min(room));
        for r in rows.iter_mut() {
            let cut = crate::json::cut_chars(&r[text], widths[text]);
            r[text] = if cut.1 && widths[text] > 1 {
                // Said cut, within the room.
                format!("{}…", crate::json::cut_chars(&r[text], widths[text] - 1).0)
            } else {
                cut.0.to_string()
            };
        }
    }
    let mut out = String::new();
    for r in &rows {
        let cells: Vec<String> = shown.iter().map(|&i| format!("{:<w$}", r[i], w = widths[i])).collect();
        out.push_str(cells.join(&" ".repeat(GAP)).trim_end());
        out.push('\n');
    }
    let outcomes = outcome_counts(runs);
    if outcomes.len() > 1 {
        let said: Vec<String> = outcomes.iter().map(|(o, n)| format!("{n} {o}")).collect();
        out.push_str(&format!("outcomes: {}\n", said.join(", ")));
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

/// CSV with a header line.
pub fn csv(runs: &[RunSummary]) -> String {
    let mut out = COLUMNS.join(",");
    out.push('\n');
    for r in runs {
        let cells: Vec<String> = row(r, usize::MAX).iter().map(|c| csv_cell(c)).collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

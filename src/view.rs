//! `agentgate view`: a run of any dialect for a person to read. One line per step: the turn,
//! the user's request and the model's text wrapped to the width, each tool call with its
//! arguments summarised and how it ended, errors, tokens and cost per turn, the outcome.
//! Colour only where asked ([`Style`]); text from the input has its control characters written
//! as JSON escapes, so that no stream moves a terminal's cursor. Like every command, it reads
//! line by line and writes as it goes.

use std::cell::Cell;
use std::rc::Rc;

use serde_json::Value;

use crate::codec::{Context, Encode, Hints, Record, Sink};
use crate::model::event::{Event, Tokens, ToolStatus};
use crate::model::Outcome;
use crate::report::Fate;

/// ANSI colours, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Plain,
    Color,
}

impl Style {
    fn paint(self, code: &str, text: &str) -> String {
        match self {
            Style::Plain => text.to_string(),
            Style::Color => format!("\x1b[{code}m{text}\x1b[0m"),
        }
    }
}

const BOLD: &str = "1";
const DIM: &str = "2";
const RED: &str = "31";
const GREEN: &str = "32";
const YELLOW: &str = "33";
const CYAN: &str = "36";

/// Longest summary of a call's arguments, in characters.
const ARGS_CHARS: usize = 60;

/// The viewer: an encoder whose output is text for people.
pub struct Viewer {
    style: Style,
    width: usize,
    turn: u64,
    /// The assistant text of the message being streamed.
    text: String,
    /// Some assistant text was shown in the run (the final answer need not be shown again).
    said: bool,
    /// Token totals and cost at the end of the last turn shown, for the next turn's own.
    turn_start_tokens: Tokens,
    cost: Option<f64>,
    turn_start_cost: Option<f64>,
    turn_open: bool,
    /// The session's id and model as shown, so that a later session record says only what is new.
    session_shown: Option<(Option<String>, Option<String>)>,
    /// Set once the terminal record is shown (`--follow` stops then).
    done: Rc<Cell<bool>>,
}

impl Viewer {
    /// A viewer writing lines of at most `width` characters (wrapped text; a summary line is cut).
    pub fn new(style: Style, width: usize) -> Self {
        Viewer {
            style,
            width: width.max(40),
            turn: 0,
            text: String::new(),
            said: false,
            turn_start_tokens: Tokens::default(),
            cost: None,
            turn_start_cost: None,
            turn_open: false,
            session_shown: None,
            done: Rc::new(Cell::new(false)),
        }
    }

    /// Set once the run's end is shown.
    pub fn done(&self) -> Rc<Cell<bool>> {
        Rc::clone(&self.done)
    }

    fn line(&self, sink: &mut Sink<'_>, text: &str) {
        sink.out.extend_from_slice(text.as_bytes());
        sink.out.push(b'\n');
    }

    /// `text` wrapped to the width after `first` (the label of its first line), its other
    /// lines indented as far; each of its own lines kept.
    fn wrapped(&self, sink: &mut Sink<'_>, first: &str, label_chars: usize, text: &str) {
        let indent = " ".repeat(label_chars);
        let room = self.width.saturating_sub(label_chars).max(20);
        let mut lead = first.to_string();
        for para in text.trim_end().split('\n') {
            let para = crate::error::one_line(para.trim_end_matches('\r'));
            for piece in wrap(&para, room) {
                self.line(sink, format!("{lead}{piece}").trim_end());
                lead = indent.clone();
            }
        }
    }

    fn flush_text(&mut self, sink: &mut Sink<'_>) {
        if self.text.trim().is_empty() {
            self.text.clear();
            return;
        }
        if !self.turn_open {
            self.start_turn(sink);
        }
        let text = std::mem::take(&mut self.text);
        let label = self.style.paint(BOLD, "assistant");
        self.wrapped(sink, &format!("  {label}  "), "  assistant  ".len(), &text);
        self.said = true;
    }

    fn end_turn(&mut self, ctx: &Context, sink: &mut Sink<'_>) {
        if !self.turn_open {
            return;
        }
        self.turn_open = false;
        let t = &ctx.totals;
        let s = &self.turn_start_tokens;
        let less = |a: Option<u64>, b: Option<u64>| a.map(|a| a.saturating_sub(b.unwrap_or(0)));
        let turn = Tokens {
            input: less(t.input, s.input),
            output: less(t.output, s.output),
            cache_read: less(t.cache_read, s.cache_read),
            cache_write: less(t.cache_write, s.cache_write),
            reasoning: less(t.reasoning, s.reasoning),
            total: less(t.total, s.total),
        };
        let cost = match (self.cost, self.turn_start_cost) {
            (Some(c), Some(b)) => Some(c - b),
            (c, _) => c,
        };
        if let Some(said) = usage(&turn, cost) {
            let said = first_line(&said, self.width.saturating_sub(2));
            self.line(sink, &format!("  {}", self.style.paint(DIM, &said)));
        }
        self.turn_start_tokens = ctx.totals;
        self.turn_start_cost = self.cost;
    }

    fn start_turn(&mut self, sink: &mut Sink<'_>) {
        self.turn += 1;
        self.turn_open = true;
        let head = format!("── turn {} ", self.turn);
        let rule = "─".repeat(self.width.saturating_sub(head.chars().count()).min(40));
        self.line(sink, &self.style.paint(BOLD, &format!("{head}{rule}")));
    }
}

/// Tokens and cost as a line says them: `tokens: 1200 in (900 cached), 300 out · $0.0123`.
fn usage(t: &Tokens, cost: Option<f64>) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(i) = t.input {
        let cached = t.cache_read.filter(|c| *c > 0).map(|c| format!(" ({c} cached)")).unwrap_or_default();
        parts.push(format!("{i} in{cached}"));
    }
    if let Some(o) = t.output {
        parts.push(format!("{o} out"));
    }
    let mut said = (!parts.is_empty()).then(|| format!("tokens: {}", parts.join(", ")));
    if let Some(c) = cost.filter(|c| *c > 0.0) {
        let money = format!("${c:.4}");
        said = Some(match said {
            Some(s) => format!("{s} · {money}"),
            None => money,
        });
    }
    said
}

/// `text` in lines of at most `room` characters, broken at spaces where it can be.
fn wrap(text: &str, room: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut line = String::new();
    let mut len = 0;
    for word in text.split(' ') {
        let mut word = word.to_string();
        let mut wlen = word.chars().count();
        // A word longer than a line is cut where the line ends.
        while wlen > room {
            if len > 0 {
                out.push(std::mem::take(&mut line));
                len = 0;
            }
            let head: String = word.chars().take(room).collect();
            word = word.chars().skip(room).collect();
            wlen -= room;
            out.push(head);
        }
        if len > 0 && len + 1 + wlen > room {
            out.push(std::mem::take(&mut line));
            len = 0;
        }
        if len > 0 {
            line.push(' ');
            len += 1;
        }
        line.push_str(&word);
        len += wlen;
    }
    if len > 0 || out.is_empty() {
        out.push(line);
    }
    out
}

/// A call's arguments in a few words: the command, path, pattern or query it names, else its
/// JSON cut short.
fn arguments(args: &crate::model::event::Arguments) -> String {
    let value = args.value.clone().or_else(|| args.json().and_then(|t| serde_json::from_str::<Value>(&t).ok()));
    let said = match &value {
        Some(Value::Object(m)) => ["command", "cmd", "file_path", "path", "pattern", "query", "url", "prompt"]
            .iter()
            .find_map(|k| match m.get(*k) {
                Some(Value::String(s)) => Some(s.clone()),
                Some(Value::Array(a)) => Some(
                    a.iter()
                        .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
                _ => None,
            })
            .unwrap_or_else(|| crate::json::to_compact(&Value::Object(m.clone()))),
        Some(Value::String(s)) => s.clone(),
        Some(v) => crate::json::to_compact(v),
        None => args.text.clone().unwrap_or_default(),
    };
    let said = crate::error::one_line(&said).into_owned();
    let (head, cut) = crate::json::cut_chars(&said, ARGS_CHARS);
    if cut {
        format!("{}…", crate::json::cut_chars(&said, ARGS_CHARS - 1).0)
    } else {
        head.to_string()
    }
}

/// The first line of a text, cut to `max` characters.
fn first_line(text: &str, max: usize) -> String {
    let max = max.max(1);
    let line = text.trim().lines().next().unwrap_or("");
    let line = crate::error::one_line(line).into_owned();
    let (head, cut) = crate::json::cut_chars(&line, max);
    if cut {
        format!("{}…", crate::json::cut_chars(&line, max.saturating_sub(1)).0)
    } else {
        head.to_string()
    }
}

impl Encode for Viewer {
    fn hints(&self) -> Hints {
        Hints { call_arguments: true, ..Hints::default() }
    }

    fn encode(&mut self, rec: &Record, ctx: &Context, sink: &mut Sink<'_>) -> Fate {
        let st = self.style;
        match &rec.event {
            Event::TextDelta { text, .. } => {
                self.text.push_str(text);
                return Fate::Written;
            }
            Event::TextReplace { text } => {
                self.text = text.clone();
                return Fate::Written;
            }
            Event::TextEnd { text } => {
                if let Some(t) = text {
                    self.text = t.clone();
                }
                self.flush_text(sink);
                return Fate::Written;
            }
            Event::TextStart | Event::Repeat => return Fate::Written,
            _ => {}
        }
        // Any other step ends the text streamed before it.
        self.flush_text(sink);
        match &rec.event {
            Event::Session(s) => {
                let mut parts = Vec::new();
                match &self.session_shown {
                    None => parts.push(ctx.source.map_or("run", |d| d.name()).to_string()),
                    Some((id, model)) => {
                        // A later session record: only what it adds.
                        if (s.model.is_none() || s.model == *model) && (s.id.is_none() || s.id == *id) {
                            return Fate::Written;
                        }
                    }
                }
                let (old_id, old_model) = self.session_shown.clone().unwrap_or_default();
                if let Some(m) = s.model.as_ref().filter(|m| old_model.as_ref() != Some(*m)) {
                    parts.push(format!("model {m}"));
                }
                if let Some(id) = s.id.as_ref().filter(|i| old_id.as_ref() != Some(*i)) {
                    parts.push(format!("session {id}"));
                }
                if let Some(cwd) = s.cwd.as_ref().filter(|_| self.session_shown.is_none()) {
                    parts.push(format!("in {cwd}"));
                }
                self.session_shown = Some((s.id.clone().or(old_id), s.model.clone().or(old_model)));
                let said = crate::error::one_line(&parts.join(" · ")).into_owned();
                self.line(sink, &st.paint(BOLD, &first_line(&said, self.width)));
            }
            Event::TurnStart { .. } => {
                self.end_turn(ctx, sink);
                self.start_turn(sink);
            }
            Event::TurnEnd { .. } => self.end_turn(ctx, sink),
            Event::Prompt { text } => {
                if !self.turn_open {
                    self.start_turn(sink);
                }
                let label = st.paint(BOLD, "user");
                self.wrapped(sink, &format!("  {label}  "), "  user  ".len(), text);
            }
            Event::ToolCall(c) => {
                if !self.turn_open {
                    self.start_turn(sink);
                }
                let plain = first_line(&c.name, self.width.saturating_sub(8));
                let name = st.paint(CYAN, &plain);
                let room = self.width.saturating_sub(plain.chars().count() + 6).min(ARGS_CHARS);
                let args = first_line(&arguments(&c.arguments), room);
                self.line(sink, format!("  → {name}  {args}").trim_end());
            }
            Event::ToolResult(r) => {
                let name = r.name.clone().or_else(|| ctx.call.name.clone()).unwrap_or_default();
                let name = first_line(&name, self.width.saturating_sub(30));
                let said = match r.status {
                    ToolStatus::Failed => {
                        let why = r
                            .error
                            .clone()
                            .or_else(|| r.output.as_ref().map(|o| o.as_str().into_owned()))
                            .map(|w| {
                                format!(": {}", first_line(&w, self.width.saturating_sub(name.chars().count() + 16)))
                            })
                            .unwrap_or_default();
                        st.paint(RED, &format!("✗ {name} failed{why}"))
                    }
                    ToolStatus::Cancelled => st.paint(YELLOW, &format!("– {name} cancelled")),
                    _ => {
                        let lines = r.output.as_ref().map_or(0, |o| o.as_str().trim_end().lines().count());
                        let size = match lines {
                            0 => String::new(),
                            1 => " (1 line)".to_string(),
                            n => format!(" ({n} lines)"),
                        };
                        format!("{}{}", st.paint(GREEN, &format!("✓ {name}")), size)
                    }
                };
                self.line(sink, &format!("    {said}"));
            }
            Event::PermissionDenied(d) => {
                let name = first_line(&d.name, self.width.saturating_sub(30));
                self.line(sink, &format!("    {}", st.paint(RED, &format!("✗ {name}: permission denied"))));
            }
            Event::Error { message, fatal } => {
                let what = if *fatal { "error (fatal)" } else { "error" };
                let label = st.paint(RED, what);
                self.wrapped(sink, &format!("  {label}  "), what.len() + 4, message);
            }
            Event::Notice { text } => {
                let label = st.paint(YELLOW, "notice");
                self.wrapped(sink, &format!("  {label}  "), "  notice  ".len(), text);
            }
            Event::FileChange { path, action, .. } => {
                let path = first_line(path, self.width.saturating_sub(20));
                let action = action.as_deref().map(|a| format!(" ({a})")).unwrap_or_default();
                self.line(sink, &format!("  ✎ {path}{action}"));
            }
            Event::Retry { phase: crate::model::event::Phase::Start, attempt, error, .. } => {
                let n = attempt.map(|a| format!(" {a}")).unwrap_or_default();
                let why = error.as_deref().map(|e| format!(": {e}")).unwrap_or_default();
                let said = first_line(&format!("↻ retry{n}{why}"), self.width.saturating_sub(2));
                self.line(sink, &format!("  {}", st.paint(YELLOW, &said)));
            }
            Event::Cost { usd, total, .. } => {
                self.cost = Some(if *total { *usd } else { self.cost.unwrap_or(0.0) + usd });
            }
            Event::FinalAnswer { text } if !self.said => {
                let label = st.paint(BOLD, "assistant");
                self.wrapped(sink, &format!("  {label}  "), "  assistant  ".len(), text);
                self.said = true;
            }
            Event::Terminal(t) => {
                self.end_turn(ctx, sink);
                if !self.said {
                    if let Some(text) = t.final_text.as_deref().filter(|t| !t.trim().is_empty()) {
                        let label = st.paint(BOLD, "assistant");
                        self.wrapped(sink, &format!("  {label}  "), "  assistant  ".len(), text);
                    }
                }
                let colour = match t.outcome {
                    Outcome::Completed => GREEN,
                    Outcome::Incomplete | Outcome::Interrupted | Outcome::Timeout => YELLOW,
                    _ => RED,
                };
                let mut parts = vec![st.paint(&format!("{BOLD};{colour}"), &format!("■ {}", t.outcome.name()))];
                if let Some(why) = t.error.as_deref().or(t.reason.as_deref()).filter(|w| *w != t.outcome.name()) {
                    parts.push(first_line(why, 60));
                }
                if self.turn > 1 {
                    parts.push(format!("{} turns", self.turn));
                }
                let cost = t.cost_usd.or(self.cost);
                if let Some(said) = usage(&ctx.totals, cost) {
                    parts.push(said);
                }
                if t.synthesized {
                    parts.push("(the stream had no ending)".into());
                }
                // The outcome first, in its colour; the rest as the width allows.
                let head = parts.remove(0);
                let rest = first_line(&parts.join(" · "), self.width.saturating_sub(t.outcome.name().len() + 5));
                let said = if rest.is_empty() { head } else { format!("{head} · {rest}") };
                self.line(sink, &said);
                self.done.set(true);
            }
            _ => {}
        }
        Fate::Written
    }
}

//! Shell calls named as the target names its shell tool (issue 54, part 3): codex's
//! `command_execution` is Claude's `Bash`, gemini's `run_shell_command`, wuu's `bash`, and back.
//!
//! A call is a shell call when its name is one of the shell tools the specs name, in any case
//! (`shell_tool` in `mappings/<d>.json`: its source's own, or another's, as gemini's old docs
//! sample calls `Bash` and localcode's spec names none), or, from ACP, the kind word `execute`
//! that names a call sent without a name (acp.md, part B); and its arguments are its command
//! line: a string `command` (each shell tool takes it so, and the arguments carry over as they
//! are), the line itself (localcode's `args` is text; it becomes `{"command": line}`), or none
//! yet (ACP sends `rawInput` after the call). A target whose spec names no shell tool (localcode,
//! loom, otlp, acp), canonical (the model: a second hop names the call as a direct one would)
//! and a dialect to itself keep the source's name.

use std::collections::VecDeque;

use serde_json::{json, Value};

use crate::codec::{shell_tool_named as known, Dialect, Record};
use crate::json::text::Name;
use crate::model::{Arguments, Event, RAW};

/// Calls renamed and not yet answered, at most: their results and refusals get the same name.
const REMEMBERED: usize = 256;

/// Names a run's shell calls as its target's.
#[derive(Debug)]
pub struct ShellNames {
    to: Dialect,
    /// The target's shell tool, where it has one and is not canonical.
    target: Option<&'static str>,
    /// The ids of calls renamed, whose results and refusals follow them.
    renamed: VecDeque<Name>,
}

impl ShellNames {
    /// For a run written as `to`.
    pub fn new(to: Dialect) -> Self {
        let target = match to {
            Dialect::Canonical => None,
            _ => to.contract().shell_tool.as_ref().map(|s| s.name.as_str()),
        };
        ShellNames { to, target, renamed: VecDeque::new() }
    }

    /// Renames the record's tool name where it is a shell call of another dialect.
    pub fn apply(&mut self, rec: &mut Record) {
        let Some(target) = self.target else { return };
        if rec.origin == self.to {
            return;
        }
        match &mut rec.event {
            Event::ToolCall(c) => {
                // ACP names a call by its kind where it sends no name (acp.md, part B).
                let named = known(&c.name) || (rec.origin == Dialect::Acp && c.name == "execute");
                let line = if named { command_line(&c.arguments) } else { None };
                let Some(line) = line else { return };
                c.name = target.into();
                if let Line::Wrap(line) = line {
                    // Where the shell tool takes it: its `command`.
                    c.arguments = Arguments::value(json!({ "command": line }));
                }
                if let Some(id) = &c.id {
                    if self.renamed.len() == REMEMBERED {
                        self.renamed.pop_front();
                    }
                    self.renamed.push_back(id.clone());
                }
            }
            Event::ToolResult(r) => {
                let answered = r.id.as_deref().and_then(|id| self.renamed.iter().position(|n| n == id));
                if let Some(at) = answered {
                    self.renamed.remove(at);
                }
                if let Some(n) = &mut r.name {
                    if answered.is_some() || known(n) {
                        *n = target.into();
                    }
                }
            }
            Event::ToolDraft(d) => {
                if let Some(n) = &mut d.name {
                    if known(n) {
                        *n = target.into();
                    }
                }
            }
            Event::PermissionDenied(d) => {
                let renamed = d.id.as_deref().is_some_and(|id| self.renamed.iter().any(|n| n == id));
                if renamed || known(&d.name) {
                    d.name = target.into();
                }
            }
            _ => {}
        }
    }
}

/// How a shell call's arguments hold its command line.
enum Line {
    /// As `command` (or not given yet: ACP sends `rawInput` after the call).
    Keep,
    /// As the line itself, to be put in `command`.
    Wrap(String),
}

/// The command line of a call named as a shell tool, where its arguments are one: a string
/// `command`, the text itself (localcode's `args`), or that text as another writer wrapped it
/// (a JSON string, `{"raw": text}`). Arguments of any other shape are not a command line.
fn command_line(args: &Arguments) -> Option<Line> {
    if args.is_empty() {
        return Some(Line::Keep);
    }
    match args.to_value() {
        Some(Value::Object(m)) if m.get("command").is_some_and(Value::is_string) => Some(Line::Keep),
        Some(Value::Object(mut m)) if m.len() == 1 => match m.remove(RAW) {
            Some(Value::String(s)) => Some(Line::Wrap(s)),
            _ => None,
        },
        Some(Value::String(s)) => Some(Line::Wrap(s)),
        None => Some(Line::Wrap(args.to_text())),
        Some(_) => None,
    }
}

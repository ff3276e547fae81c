//! What can go wrong, as values: a [`Diagnostic`] about one input line (the stream goes on),
//! a [`Stop`] when a stream is not read to its end, and [`Error`], agentgate's error type.

use std::borrow::Cow;
use std::fmt;

/// A problem with one input line (`line` 0: the stream as a whole).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The 1-based line number of the input line; 0 for the stream as a whole.
    pub line: u64,
    /// What is wrong with the line.
    pub message: String,
}

/// Why a stream was not read to its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// A bad line under `--strict`.
    Strict(Diagnostic),
    /// A line that makes the rest unreadable (an unknown format version).
    Fatal(Diagnostic),
    /// The dialect could not be detected.
    Undetected(String),
    /// Reading the input failed.
    Read(String),
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl Diagnostic {
    /// The diagnostic as the command line prints it for input `name`: `name:LINE: message`, or
    /// `name: message` for the stream as a whole, on one line whatever the message quotes from
    /// the input (see [`one_line`]).
    pub fn line_for(&self, name: &str) -> String {
        let text = if self.line == 0 {
            format!("{name}: {}", self.message)
        } else {
            format!("{name}:{}: {}", self.line, self.message)
        };
        one_line(&text).into_owned()
    }
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stop::Strict(d) => write!(f, "stopped at bad input, line {}: {}", d.line, d.message),
            Stop::Fatal(d) => write!(f, "input refused at line {}: {}", d.line, d.message),
            Stop::Undetected(why) => write!(f, "cannot tell the input's dialect: {why}"),
            Stop::Read(e) => write!(f, "cannot read the input: {e}"),
        }
    }
}

/// agentgate's error.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A dialect name agentgate does not know, and the names it knows.
    UnknownDialect {
        /// The name given.
        name: String,
        /// The names agentgate knows.
        known: Vec<&'static str>,
    },
    /// The stream was not translated to its end ([`crate::translate_str`]).
    Stopped(Stop),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::UnknownDialect { name, known } => {
                write!(f, "unknown dialect \"{name}\" (known: {})", known.join(", "))
            }
            Error::Stopped(stop) => stop.fmt(f),
        }
    }
}

impl std::error::Error for Error {}

/// `text` as a JSON string literal, quotes and escapes included (`"a\u001b"`): how a message
/// quotes a value from the input, in the input's own notation rather than Rust's (`\u{1b}`).
pub fn quoted(text: &str) -> String {
    crate::json::quoted(text)
}

/// `text` with every character that would end a line early or reach a terminal as a control
/// written as its JSON escape (`\n`, `\u001b`): the C0 and C1 controls, DEL, U+2028 and U+2029,
/// which some readers take for line breaks, and the bidirectional overrides and isolates
/// (U+202A–U+202E, U+2066–U+2069, the ones rustc warns of in source), which reorder what the
/// terminal shows. A diagnostic quotes what the input said (a value no variant matched, say), and
/// a stream can say anything: this keeps each diagnostic on its one line, shown as it is, and an
/// escape sequence in a transcript from moving the cursor of the terminal that reads them. Text
/// without such characters comes back as it is.
pub fn one_line(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| {
        c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if unsafe_char(c) => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

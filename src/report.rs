//! What a translation did with its input: every line accounted for, and what the target could
//! not carry or had to be given. The CLI prints it with `--report`; the library never prints.

use std::collections::BTreeMap;
use std::fmt;

/// What happened to the records of one input line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fate {
    /// The target could not carry it.
    Dropped,
    /// Kept for a later output record (a final text that goes into the terminal record).
    Absorbed,
    /// Written as one or more output lines.
    Written,
    /// A line the model had no event for, written back unchanged (same dialect on both sides).
    PassedThrough,
}

/// What `synthesized` says where the source stated no usage and the target has no word for
/// unknown usage (Claude's result, localcode's tokens), so that zeros were written: unknown is
/// not zero (issue 54).
pub const UNKNOWN_USAGE: &str = "usage as zeros (the source stated none: unknown, not zero)";

/// Counts for one run (one input file or stream).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Lines read, blank ones included.
    pub lines: u64,
    pub blank: u64,
    /// Lines that could not be read as a record of the source dialect (each had a diagnostic).
    pub bad: u64,
    /// Lines read after their bytes that were not UTF-8 were replaced by U+FFFD (each had a
    /// diagnostic; counted again as translated, dropped or passed through).
    pub mended: u64,
    /// Lines whose content reached the output (written or folded into a later record).
    pub translated: u64,
    pub passed_through: u64,
    /// Lines whose content the target could not carry.
    pub dropped: u64,
    /// Canonical event kinds the target could not carry, with counts.
    pub dropped_kinds: BTreeMap<String, u64>,
    /// Members of source lines that the target could not carry (`kind.member`), with counts.
    pub dropped_fields: BTreeMap<String, u64>,
    /// Records the target needed and the source did not have, with counts.
    pub synthesized: BTreeMap<String, u64>,
    /// Values cut to a length limit of the target (`kind.field`), with counts.
    pub truncated: BTreeMap<String, u64>,
    /// Lines of the target's own dialect written anew rather than copied (not valid as they
    /// stood in the target's current contract, or in the form asked for), by their kind.
    pub rewritten: BTreeMap<String, u64>,
    /// How usage figures were read where their numbers contradicted the reading the source's
    /// contract gives them (an input below its own cache figures cannot include them), with
    /// counts: the basis the totals are on.
    pub basis: BTreeMap<String, u64>,
    /// The process exit status the target's terminal record states (localcode's and adal's
    /// `exit_code`, loom's `exit_status`), once it is written: what `exec` exits with, so that
    /// the stream and the process say one number.
    pub exit_status: Option<i64>,
}

impl Report {
    pub fn line(&mut self, fate: Option<Fate>) {
        match fate {
            Some(Fate::Written | Fate::Absorbed) => self.translated += 1,
            Some(Fate::PassedThrough) => self.passed_through += 1,
            Some(Fate::Dropped) | None => self.dropped += 1,
        }
    }

    pub fn dropped_kind(&mut self, kind: &str) {
        bump(&mut self.dropped_kinds, kind);
    }

    pub fn dropped_field(&mut self, kind: &str, field: &str) {
        self.dropped_fields_n(kind, field, 1);
    }

    /// [`Report::dropped_field`], `n` times.
    pub fn dropped_fields_n(&mut self, kind: &str, field: &str, n: u64) {
        // The name is put together on the stack: it is allocated only the first time.
        let mut buf = [0u8; 128];
        let len = kind.len() + 1 + field.len();
        if len > buf.len() {
            return bump_by(&mut self.dropped_fields, &format!("{kind}.{field}"), n);
        }
        buf[..kind.len()].copy_from_slice(kind.as_bytes());
        buf[kind.len()] = b'.';
        buf[kind.len() + 1..len].copy_from_slice(field.as_bytes());
        // Two strings and a dot: UTF-8.
        bump_by(&mut self.dropped_fields, std::str::from_utf8(&buf[..len]).unwrap_or_default(), n);
    }

    pub fn synthesized(&mut self, what: &str) {
        bump(&mut self.synthesized, what);
    }

    pub fn truncated(&mut self, what: &str) {
        bump(&mut self.truncated, what);
    }

    pub fn rewritten(&mut self, kind: &str) {
        bump(&mut self.rewritten, kind);
    }

    /// Usage read on another basis than its contract's, and why.
    pub fn basis(&mut self, how: &str) {
        bump(&mut self.basis, how);
    }

    /// Every line is exactly one of blank, bad, translated, passed through or dropped.
    pub fn accounted(&self) -> u64 {
        self.blank + self.bad + self.translated + self.passed_through + self.dropped
    }
}

/// The report's cache of the members a target drops (records of another dialect's, whose extra
/// members it has no place for): counted by the record's kind and the members' shape (a hash of
/// their keys), their names read once per shape, and added to [`Report::dropped_fields`] by
/// [`Lost::settle`]. A stream has a few such sets, met on every line: a short list finds them
/// faster than reading the names of each record's members.
#[derive(Debug, Default)]
pub(crate) struct Lost {
    sets: Vec<LostSet>,
}

/// The members of records of one kind, all with the same keys, that a target dropped.
#[derive(Debug)]
struct LostSet {
    kind: &'static str,
    shape: u64,
    keys: Vec<String>,
    count: u64,
}

/// Most sets [`Lost`] holds; past them, straight into the report.
const LOST_SETS_HELD: usize = 32;

impl Lost {
    /// The members `extra` of a `kind` record are not written.
    pub(crate) fn note(&mut self, kind: &'static str, extra: &crate::model::Extra, report: &mut Report) {
        let shape = extra.shape();
        if let Some(set) = self.sets.iter_mut().find(|d| d.shape == shape && d.kind == kind) {
            set.count += 1;
            return;
        }
        let keys = extra.keys().map(|k| k.into_owned());
        if self.sets.len() < LOST_SETS_HELD {
            self.sets.push(LostSet { kind, shape, keys: keys.collect(), count: 1 });
        } else {
            keys.for_each(|k| report.dropped_field(kind, &k));
        }
    }

    /// Adds what was counted to the report.
    pub(crate) fn settle(&mut self, report: &mut Report) {
        for set in self.sets.drain(..) {
            for key in &set.keys {
                report.dropped_fields_n(set.kind, key, set.count);
            }
        }
    }
}

/// Counts one more `key`, allocating its name only the first time.
fn bump(m: &mut BTreeMap<String, u64>, key: &str) {
    bump_by(m, key, 1);
}

/// Counts `n` more `key`.
fn bump_by(m: &mut BTreeMap<String, u64>, key: &str, n: u64) {
    match m.get_mut(key) {
        Some(count) => *count += n,
        None => {
            m.insert(key.to_string(), n);
        }
    }
}

fn list(f: &mut fmt::Formatter<'_>, label: &str, m: &BTreeMap<String, u64>) -> fmt::Result {
    if m.is_empty() {
        return Ok(());
    }
    write!(f, "\n  {label}:")?;
    for (k, n) in m {
        write!(f, " {k} ×{n}")?;
    }
    Ok(())
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} lines: {} translated, {} passed through, {} dropped, {} bad, {} blank",
            self.lines, self.translated, self.passed_through, self.dropped, self.bad, self.blank
        )?;
        if self.mended > 0 {
            write!(f, "\n  mended (not UTF-8): {}", self.mended)?;
        }
        list(f, "dropped events", &self.dropped_kinds)?;
        list(f, "dropped fields", &self.dropped_fields)?;
        list(f, "synthesized", &self.synthesized)?;
        list(f, "rewritten (not valid as they stood)", &self.rewritten)?;
        list(f, "usage read as", &self.basis)?;
        list(f, "truncated", &self.truncated)
    }
}

/// The indefinite article for `word` in a message: "an" before a vowel sound ("an adal
/// record", "an error record", "an unknown kind"), else "a" ("a usage record", "a user line").
pub fn a(word: &str) -> &'static str {
    let w = word.to_ascii_lowercase();
    let you = ["us", "uni", "ure", "uu"].iter().any(|p| w.starts_with(p));
    match w.bytes().next() {
        Some(b'u') if you => "a",
        Some(b'a' | b'e' | b'i' | b'o' | b'u') => "an",
        _ => "a",
    }
}

#[cfg(test)]
mod article {
    #[test]
    fn an_before_a_vowel() {
        let said: Vec<String> = ["adal", "error", "usage", "unknown", "loom", "wuu", "tool_call"]
            .iter()
            .map(|w| format!("{} {w}", super::a(w)))
            .collect();
        assert_eq!(said, ["an adal", "an error", "a usage", "an unknown", "a loom", "a wuu", "a tool_call"]);
    }
}

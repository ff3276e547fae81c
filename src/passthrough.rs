//! Same stream out: the one policy that decides, per line, whether a line of the source is
//! copied to the output as it was read, or its records are encoded.
//!
//! A line is copied when it is of the target's dialect (read from it, or carried for it through
//! canonical), and a reader of the target's contract takes it as it stands: its kind is one the
//! contract lists in its current generation (or an unknown kind its readers skip), its members
//! have their types, values and limits, the contract's rules over a stream hold for it after
//! the lines before it, and it is in the form the options ask for. Anything else is encoded,
//! in the spec's current generation: a valid stream comes back as the same lines, and one that
//! is not (another generation, a stream without its header, the other form) comes out valid.
//!
//! The policy reads the line's members as the scanner split them, never a tree: what
//! `validate` calls a problem, asked only as yes or no. Warnings (a writer's habits, such as
//! member order where the spec states none) do not stop a copy: the line is the source's own.

use serde_json::Value;

use crate::codec::{make_room, Dialect, EncodeOptions};
use crate::contract::{same_value, Contract, FormSpec, Rule, Severity};
use crate::json::member::Member;
use crate::json::object::Object;

/// Whether lines of one dialect may be copied to a run's output, line by line.
pub struct Policy {
    /// The target; lines of any other dialect are encoded.
    target: Dialect,
    check: Check,
    /// The target's form the options ask for, where it has forms: the option's (`true`) or
    /// the plain one; and the source's form once a line has said it.
    form: Option<(&'static FormSpec, bool)>,
    source_form: Option<bool>,
}

impl Policy {
    /// The policy of a run written as `target`, with its options.
    pub fn new(target: Dialect, opts: &EncodeOptions) -> Self {
        let contract = target.contract();
        let form = contract.form.as_ref().map(|f| {
            let wanted = match f.option.as_str() {
                "json_deltas" => opts.json_deltas,
                "include_partial_messages" => opts.include_partial_messages,
                _ => false,
            };
            (f, wanted)
        });
        Policy { target, check: Check::new(contract), form, source_form: None }
    }

    /// What becomes of line `m`, of `dialect`. Asked of every line of the target's dialect, in
    /// order (the rules over a stream keep what the lines before it said).
    pub fn pass(&mut self, dialect: Dialect, m: &Object<'_>) -> Pass {
        if dialect != self.target || self.target == Dialect::Otlp {
            return Pass::Encode;
        }
        let valid = self.check.line(m);
        if let Some((form, wanted)) = self.form {
            if let Some(marked) = form_of(form, self.check.contract, m) {
                // A stream is in one form: its first line that differs says which.
                let source = *self.source_form.get_or_insert(marked);
                match (&form.marker_path, marked) {
                    // Each line says its form (base-context's messageId): one of the other form
                    // is written anew.
                    (Some(_), _) if marked != wanted => return Pass::Encode,
                    (Some(_), _) => {}
                    // The option's own lines (Claude's stream_event) repeat the lines after
                    // them: left out where the option is not asked for.
                    (None, true) if !wanted => return Pass::Leave,
                    (None, true) => {}
                    // A line both forms have, which the option's form writes after its own
                    // lines: written anew (with them) where the source had none.
                    (None, false) if wanted && !source => return Pass::Encode,
                    (None, false) => {}
                }
            }
        }
        match self.check.contract.kind_of(m) {
            // A line a rule pairs with a later one (loom's Approval, only just before an
            // ApprovalRequired terminal): whether it stands is told by the lines after it, so
            // its encoder writes it when they come (as the agent's writer does, in its layout).
            Some(kind) if valid && self.check.contract.paired_ahead(&kind) => Pass::Defer,
            _ if valid => Pass::Copy,
            _ => Pass::Encode,
        }
    }
}

/// What becomes of a line of the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// Written as it was read (the encoder observes its records).
    Copy,
    /// Its records encoded.
    Encode,
    /// Its records encoded, though the line stands as it is so far: whether it stands depends
    /// on lines after it, which its encoder waits for (not a line rewritten).
    Defer,
    /// Left out, its records observed: it repeats what lines after it say, in a form not asked
    /// for.
    Leave,
}

/// Whether a line is one the forms write differently, and if so whether it is marked as the
/// option's form; `None` for a line both forms write alike.
fn form_of(form: &FormSpec, contract: &Contract, m: &Object<'_>) -> Option<bool> {
    let kind = m.get_str(&contract.type_field)?;
    let paths = Paths::new(m);
    let differs = form
        .lines
        .iter()
        .any(|l| l.kind == kind && l.where_path.as_ref().is_none_or(|p| paths.is(p, l.where_value.as_ref())));
    if !differs {
        return None;
    }
    Some(match (&form.marker_path, &form.marker_kind) {
        (Some(p), _) => paths.has(p),
        (None, Some(k)) => *k == kind,
        (None, None) => false,
    })
}

/// A line's members looked up by dotted paths: a nested object is scanned (once a line, for
/// all the paths into it), not built; a value is built only where it is compared.
pub struct Paths<'m, 'a> {
    m: &'m Object<'a>,
    /// The objects of the line's members scanned so far, by member name.
    nested: std::cell::RefCell<Vec<(&'m str, Option<Object<'a>>)>>,
}

impl<'m, 'a> Paths<'m, 'a> {
    pub fn new(m: &'m Object<'a>) -> Self {
        Paths { m, nested: std::cell::RefCell::new(Vec::new()) }
    }

    /// The member at `path`, handed to `f`.
    pub fn with<T>(&self, path: &str, f: impl FnOnce(&Member<'_>) -> T) -> Option<T> {
        let Some((first, rest)) = path.split_once('.') else { return self.m.get(path).map(f) };
        let (key, member) = self.m.iter().find(|(k, _)| *k == first)?;
        let mut nested = self.nested.borrow_mut();
        let at = match nested.iter().position(|(k, _)| *k == key) {
            Some(at) => at,
            None => {
                let inner = match member {
                    Member::Raw(r, _) if r.starts_with('{') => Object::parse(r).ok().and_then(Result::ok),
                    _ => None,
                };
                nested.push((key, inner));
                nested.len() - 1
            }
        };
        let inner = nested[at].1.as_ref()?;
        match rest.split_once('.') {
            None => inner.get(rest).map(f),
            // Deeper than one object: scanned on the way (rare).
            Some(_) => {
                let value = at_object(inner, rest)?;
                Some(f(&Member::value(value)))
            }
        }
    }

    /// Whether there is a member at `path`.
    pub fn has(&self, path: &str) -> bool {
        self.with(path, |_| ()).is_some()
    }

    /// The value at `path`.
    pub fn get(&self, path: &str) -> Option<Value> {
        self.with(path, |m| m.to_value())
    }

    /// Whether the value at `path` is `want` (absent is `None`).
    pub fn is(&self, path: &str, want: Option<&Value>) -> bool {
        match want {
            Some(want) => self.with(path, |m| same_value(m, want)).unwrap_or(false),
            None => !self.has(path),
        }
    }
}

/// The value at a dotted path of an object's members, nested objects scanned.
fn at_object(m: &Object<'_>, path: &str) -> Option<Value> {
    let (first, rest) = match path.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (path, None),
    };
    let member = m.get(first)?;
    match rest {
        None => Some(member.to_value()),
        Some(rest) => match member {
            Member::Raw(r, _) if r.starts_with('{') => at_object(&Object::parse(r).ok()?.ok()?, rest),
            Member::Raw(..) => None,
            Member::Value(v) => rest.split('.').try_fold(&**v, |v, k| v.get(k)).cloned(),
        },
    }
}

/// The contract's problems, asked of one line at a time as yes or no, with what the rules
/// over a stream keep of the lines before it.
struct Check {
    contract: &'static Contract,
    lines: u64,
    /// Kinds seen so far: a handful.
    seen_kinds: Vec<String>,
    /// Ids of earlier lines a later one must name (adal's calls), the most recent ones.
    seen_ids: indexmap::IndexMap<String, (), crate::contract::FnvBuild>,
    sums: Vec<u64>,
    previous_kind: Option<String>,
    terminal_seen: bool,
    /// A line of a kind the contract lists was seen.
    listed_seen: bool,
}

impl Check {
    fn new(contract: &'static Contract) -> Self {
        Check {
            contract,
            lines: 0,
            seen_kinds: Vec::new(),
            seen_ids: Default::default(),
            sums: vec![0; contract.rules.len()],
            previous_kind: None,
            terminal_seen: false,
            listed_seen: false,
        }
    }

    /// Whether line `m` breaks none of the contract's rules (those of a problem's severity),
    /// after the lines before it; what it tells the rules is kept either way.
    fn line(&mut self, m: &Object<'_>) -> bool {
        let c = self.contract;
        self.lines += 1;
        let Some(kind) = m.get_str(&c.type_field) else { return false };
        let kind = kind.as_ref();
        // Nothing after the terminal record; else what the line alone tells.
        let mut ok = !self.terminal_seen && c.takes_line(kind, m);
        // A line its reader does not take (a call without its name) may not be written at all:
        // the ids it states are not counted as seen.
        let takes = ok;
        let is_terminal = c.terminal.as_ref().is_some_and(|t| t.kind == kind);
        let at = Paths::new(m);
        for (i, entry) in c.rules.iter().enumerate() {
            let problem = entry.severity == Severity::Problem;
            let broken = match &entry.rule {
                // The first line of a kind the contract lists (its readers skip the others).
                Rule::First { kind: first, .. } if !self.listed_seen => {
                    let listed = c.kind(kind).is_some();
                    self.listed_seen = listed;
                    listed && *first != kind
                }
                Rule::IdsSeenEarlier { kind: k, field, earlier_kind, earlier_field } => {
                    if takes && *earlier_kind == kind {
                        if let Some(id) = m.get_str(earlier_field) {
                            make_room(&mut self.seen_ids, id.as_ref());
                            self.seen_ids.insert(id.into_owned(), ());
                        }
                    }
                    *k == kind && !m.get_str(field).is_some_and(|id| self.seen_ids.contains_key(id.as_ref()))
                }
                Rule::NoneAfter { after, kinds } => self.seen(after) && kinds.iter().any(|k| k == kind),
                Rule::TerminalAfter { after, field, value } => {
                    is_terminal && self.seen(after) && !at.is(field, Some(value))
                }
                Rule::TerminalNeeds { field, value, kind: needed } => {
                    is_terminal && at.is(field, Some(value)) && !self.seen(needed)
                }
                Rule::TerminalSums { field, of_kind, of_field, when_zero } => {
                    if *of_kind == kind {
                        if let Some(crate::json::Count::Value(x)) =
                            m.get(of_field).map(|v| crate::json::count(&v.to_value()))
                        {
                            self.sums[i] = self.sums[i].saturating_add(x);
                        }
                    }
                    is_terminal && {
                        let want = crate::contract::sum_or_else(self.sums[i], when_zero, |p| {
                            at.get(p).and_then(|v| v.as_u64())
                        });
                        at.get(field).and_then(|v| v.as_u64()) != Some(want)
                    }
                }
                Rule::TerminalCodes { field, code_field, codes, absent } if is_terminal => {
                    let code = at.get(code_field).and_then(|v| v.as_i64());
                    let allowed = match at.get(field) {
                        Some(Value::String(word)) => codes.get(&word),
                        _ => Some(absent),
                    };
                    matches!((allowed, code), (Some(allowed), Some(code)) if !allowed.contains(&code))
                }
                Rule::JustBefore { kind: before, field, value } => {
                    is_terminal && at.is(field, Some(value)) && self.previous_kind.as_deref() != Some(before.as_str())
                }
                Rule::OneOf { kind: k, fields } => *k == kind && !fields.iter().any(|f| m.contains_key(f)),
                Rule::Shape { kind: k, when, unless, where_path, where_value, present, absent } if *k == kind => {
                    let applies = when.as_ref().is_none_or(|w| at.has(w))
                        && unless.as_ref().is_none_or(|u| !at.has(u))
                        && where_path.as_ref().is_none_or(|w| at.is(w, where_value.as_ref()));
                    applies && (present.iter().any(|p| !at.has(p)) || absent.iter().any(|p| at.has(p)))
                }
                Rule::Values { kinds, path, values, where_path, where_value } if kinds.iter().any(|k| k == kind) => {
                    let applies = where_path.as_ref().is_none_or(|w| at.is(w, where_value.as_ref()));
                    applies && at.with(path, |v| !values.iter().any(|want| same_value(v, want))).unwrap_or(false)
                }
                _ => false,
            };
            ok &= !(broken && problem);
        }
        if is_terminal {
            self.terminal_seen = true;
        }
        if self.previous_kind.as_deref() != Some(kind) {
            if !self.seen(kind) {
                self.seen_kinds.push(kind.to_string());
            }
            self.previous_kind = Some(kind.to_string());
        }
        ok
    }

    /// Whether a line of `kind` came already.
    fn seen(&self, kind: &str) -> bool {
        self.seen_kinds.iter().any(|k| k == kind)
    }
}

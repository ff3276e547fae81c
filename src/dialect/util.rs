//! What the adapters share: reading a line's kind and counts, checking a record against its
//! contract, keeping a line whole, and writing lines with their members in a dialect's order.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::codec::{Context, Decoded, Dialect, LineError};
use crate::json::object::Object;
use crate::json::Field;
use crate::model::Extra;

/// Whether `kind` is a record kind of `dialect`'s contract and of no other agent's (canonical
/// aside: its lines carry `v`). A line of such a kind belongs to that dialect; the kinds
/// several agents share (`result`, `error`, `tool_result`...) need a closer look, which each
/// dialect's `sniff` takes.
pub(crate) fn own_kind(dialect: Dialect, kind: &str) -> bool {
    dialect.contract().kinds.contains_key(kind)
        && Dialect::all().all(|d| d == dialect || d == Dialect::Canonical || !d.contract().kinds.contains_key(kind))
}

/// Takes the `type` member of a line, or says it is missing.
pub(crate) fn take_type<'a>(line: &mut Object<'a>) -> Result<Cow<'a, str>, LineError> {
    take_kind(line, "type")
}

/// A decoder's check of a record against its dialect's contract. An integer or boolean field
/// written as a string holding one is read as that value (a decoder accepts a count written
/// either way), and an optional field the contract refuses is left out, each with a warning
/// (one left out is counted as dropped); a required field missing or refused makes the line bad
/// (nothing is written from it).
pub(crate) fn check_record(
    contract: &crate::contract::Contract,
    kind: &str,
    m: &mut Object<'_>,
    out: &mut Decoded,
) -> Result<(), LineError> {
    if contract.check_fields(kind, m).is_empty() {
        return Ok(());
    }
    let notes = contract.read_scalar_strings(kind, m);
    let left_out = contract.leave_out_refused_optional(kind, m);
    if let Some(problem) = contract.check_fields(kind, m).into_iter().next() {
        return Err(LineError::bad(problem));
    }
    notes.into_iter().for_each(|n| out.warn(n));
    for (field, note) in left_out {
        out.warn(note);
        out.dropped.push((kind.to_string(), field));
    }
    Ok(())
}

/// Takes count `key` of a `kind` line. One that is there but holds no count (a negative or
/// fractional number, a string of anything but digits) stays among the line's members, as an
/// unknown member does, and is named on stderr with what it is read as (`read_as`): a count
/// read as nothing is never dropped unsaid.
pub(crate) fn take_count_noted(
    m: &mut Object<'_>,
    kind: &str,
    key: &str,
    read_as: &str,
    out: &mut Decoded,
) -> Option<u64> {
    m.take_count_or_not(key).unwrap_or_else(|v| {
        out.warn(not_a_count(kind, key, &v, read_as));
        None
    })
}

/// The note for member `key` of a `kind` line that holds `v`, no count.
pub(crate) fn not_a_count(kind: &str, key: &str, v: &Value, read_as: &str) -> String {
    format!("{kind}.{key} is {v}, not a count; read as {read_as}")
}

/// Takes the member naming a line's kind (`type`, or loom's `kind`), borrowed from the line, or
/// says it is missing.
pub(crate) fn take_kind<'a>(line: &mut Object<'a>, field: &str) -> Result<Cow<'a, str>, LineError> {
    line.take_text(field).ok_or_else(|| no_kind(line, field))
}

/// [`take_kind`], the member left in the line.
pub(crate) fn kind_of<'a>(line: &Object<'a>, field: &str) -> Result<Cow<'a, str>, LineError> {
    line.get_text(field).ok_or_else(|| no_kind(line, field))
}

fn no_kind(line: &Object<'_>, field: &str) -> LineError {
    LineError::bad(match line.get(field) {
        Some(member) => format!("\"{field}\" is {}, not a string", member.to_value()),
        None => format!("object without a \"{field}\" member"),
    })
}

/// Rebuilds a whole line from its `type` and the members left after taking it, `type` first:
/// the line of an extension event, kept as it came.
pub(crate) fn whole_line(kind: impl Into<String>, rest: Object<'_>) -> Value {
    let mut m = Map::with_capacity(rest.len() + 1);
    m.insert("type".into(), Value::String(kind.into()));
    m.extend(rest.into_fields());
    Value::Object(m)
}

/// An output line in the making: its members in order, values owned or borrowed from the
/// record. Written straight to bytes, without building a map.
pub(crate) struct Line<'a> {
    pairs: Vec<(Cow<'a, str>, Field<'a>)>,
}

impl Line<'_> {
    pub(crate) fn write(&self, out: &mut Vec<u8>, layout: crate::json::Layout) {
        crate::json::write_fields(out, &self.pairs, layout);
    }
}

/// What a refusal says where a target writes it as text: `permission denied: <why>`, the why
/// taken once (a reason that already says `permission denied: `, as one translated from such
/// text does, is not prefixed again; the bare status word says no more than the prefix).
pub(crate) fn refusal(reason: Option<&str>) -> String {
    format!("permission denied: {}", refusal_why(reason))
}

/// The why of [`refusal`], for a target that words the rest itself.
pub(crate) fn refusal_why(reason: Option<&str>) -> &str {
    reason
        .map(|r| r.strip_prefix("permission denied: ").unwrap_or(r))
        .filter(|r| !r.is_empty() && !matches!(*r, "permission_denied" | "permission denied"))
        .unwrap_or("approval required")
}

/// What a tool result writes as the call's output: its own, else the output streamed for the
/// call, else its error; else nothing.
pub(crate) fn tool_output<'a>(r: &'a crate::model::ToolResult, ctx: &'a Context) -> Field<'a> {
    match (&r.output, &ctx.call.output, &r.error) {
        (Some(t), _, _) | (None, Some(t), _) => Field::Text(t),
        (None, None, Some(s)) => Field::Str(s),
        (None, None, None) => Field::Str(""),
    }
}

/// Writes a line of a layout that sorts members by key (loom's, wuu's), byte for byte as
/// [`build_line`] and [`Line::write`] would, without building and sorting a member list: the
/// `parts` (at most four) each come sorted by key, no key in two of them, the type field in one,
/// their keys plain words (an encoder's own); they are merged by index, lent, never moved. The
/// source's extra members that `contract` accepts for `kind` are merged into their places, one
/// of the same key standing in for the field.
pub(crate) fn write_sorted(
    out: &mut Vec<u8>,
    contract: &crate::contract::Contract,
    kind: &str,
    parts: &[&[(&str, Field<'_>)]],
    extra: Option<&Extra>,
    layout: crate::json::Layout,
    report: &mut crate::report::Report,
) {
    let mut extras = extra.map(Extra::members).unwrap_or_default();
    if !extras.is_empty() {
        let may = contract.fields_of(kind);
        extras.retain(|(k, v)| {
            let written = || parts.iter().any(|part| part.iter().any(|(f, _)| *f == k.as_ref()));
            let kept = may.accepts(k, v);
            if !kept && refused_is_lost(v, written) {
                report.dropped_field(kind, k);
            }
            kept
        });
        extras.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    }
    let mut at = [0usize; 4];
    let parts = &parts[..parts.len().min(at.len())];
    let mut e = 0;
    out.push(b'{');
    let (mut first, mut last) = (true, "");
    loop {
        // The part whose next field sorts first.
        let mut least: Option<(usize, &str)> = None;
        for (p, part) in parts.iter().enumerate() {
            if let Some((k, _)) = part.get(at[p]) {
                if least.is_none_or(|(_, l)| *k < l) {
                    least = Some((p, k));
                }
            }
        }
        let from_extra = match (least, extras.get(e)) {
            (None, None) => break,
            (Some(_), None) => false,
            (None, Some(_)) => true,
            (Some((p, f)), Some((x, _))) => match f.cmp(x.as_ref()) {
                std::cmp::Ordering::Less => false,
                std::cmp::Ordering::Greater => true,
                std::cmp::Ordering::Equal => {
                    // The source's member stands in for the field.
                    at[p] += 1;
                    true
                }
            },
        };
        if !std::mem::take(&mut first) {
            out.push(b',');
        }
        if from_extra {
            let (k, v) = &extras[e];
            e += 1;
            crate::json::write_str(out, k, layout);
            out.push(b':');
            crate::json::fields::write_member(out, v, layout);
        } else if let Some((p, _)) = least {
            let (k, v) = &parts[p][at[p]];
            at[p] += 1;
            debug_assert!(last < *k, "{kind} fields out of order or repeated: {last} before {k}");
            debug_assert!(k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'), "{kind}: key {k}");
            last = k;
            out.push(b'"');
            out.extend_from_slice(k.as_bytes());
            out.extend_from_slice(b"\":");
            v.write(out, layout);
        }
    }
    out.extend_from_slice(b"}\n");
}

/// Fields of which a later one may name the key of an earlier one (a record's own members, then
/// the fields an encoder writes in any case): each key once, in its first place, with its last
/// value; none of the keys `written` (the type field, which [`build_line`] writes, and any the
/// encoder adds after). What `build_line` takes from an encoder that passes a record's members on.
pub(crate) fn last_wins<'a>(
    written: &[&str],
    fields: impl IntoIterator<Item = (&'a str, Field<'a>)>,
) -> Vec<(&'a str, Field<'a>)> {
    let mut out: Vec<(&'a str, Field<'a>)> = Vec::new();
    for (k, v) in fields {
        if written.contains(&k) {
            continue;
        }
        match out.iter_mut().find(|p| p.0 == k) {
            Some(p) => p.1 = v,
            None => out.push((k, v)),
        }
    }
    out
}

/// Writes an output line of a layout that keeps members in order (adal's, localcode's), byte for
/// byte as [`build_line`] and [`Line::write`] would: where the source line left no members to
/// merge in (`extra` none or empty: a record from another dialect, mostly), straight out, the
/// encoder's fields after the type field, their keys plain words; else through [`build_line`].
pub(crate) fn write_in_order<'a>(
    out: &mut Vec<u8>,
    contract: &'a crate::contract::Contract,
    kind: &'a str,
    fields: impl IntoIterator<Item = (&'a str, Field<'a>)>,
    extra: Option<&'a Extra>,
    layout: crate::json::Layout,
    report: &mut crate::report::Report,
) {
    debug_assert!(!matches!(layout, crate::json::Layout::Sorted | crate::json::Layout::Go));
    if extra.is_some_and(|e| !e.is_empty()) {
        return build_line(contract, kind, fields, extra, report).write(out, layout);
    }
    let (comma, colon) = crate::json::layout::separators(layout);
    out.push(b'{');
    crate::json::write_str(out, &contract.type_field, layout);
    out.extend_from_slice(colon);
    crate::json::write_str(out, kind, layout);
    for (k, v) in fields {
        debug_assert!(k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'), "{kind}: key {k}");
        debug_assert!(k != contract.type_field, "{kind}: the type field given as a field");
        out.extend_from_slice(comma);
        out.push(b'"');
        out.extend_from_slice(k.as_bytes());
        out.push(b'"');
        out.extend_from_slice(colon);
        v.write(out, layout);
    }
    out.extend_from_slice(b"}\n");
}

/// Builds an output line of `contract`'s dialect: its kind member, then `fields` in order (each
/// key once: an encoder that passes a record's members on gives them through [`last_wins`]),
/// then the members of the source line that the model had no field for (`extra`, given only
/// when the source is the same dialect). An extra member takes the place of a written one only
/// when the contract accepts its value there: it restores what the source said (an unknown
/// status word, say), but never makes a line the contract forbids (a null where an id must be,
/// a count that is not digits). A member so refused is counted in `report` as dropped (its
/// value does not reach the output), but for a null whose key the encoder writes (null is no
/// value: the member is there).
pub(crate) fn build_line<'a, F: Into<Field<'a>>>(
    contract: &'a crate::contract::Contract,
    kind: &'a str,
    fields: impl IntoIterator<Item = (&'a str, F)>,
    extra: Option<&'a Extra>,
    report: &mut crate::report::Report,
) -> Line<'a> {
    let fields = fields.into_iter();
    let extra = extra.map(Extra::members).unwrap_or_default();
    let mut pairs: Vec<(Cow<'a, str>, Field<'a>)> = Vec::with_capacity(fields.size_hint().0 + 1 + extra.len());
    pairs.push((Cow::Borrowed(contract.type_field.as_str()), Field::Str(kind)));
    let put = |pairs: &mut Vec<(Cow<'a, str>, Field<'a>)>, k: Cow<'a, str>, v: Field<'a>| match pairs
        .iter_mut()
        .find(|p| p.0 == k)
    {
        Some(p) => p.1 = v,
        None => pairs.push((k, v)),
    };
    // An encoder names each of its fields once, and never its type field: they go in as they
    // come. Only an extra member may meet a key already there.
    for (k, v) in fields {
        debug_assert!(pairs.iter().all(|p| p.0 != k), "a {kind} line given {k} twice");
        pairs.push((Cow::Borrowed(k), v.into()));
    }
    if !extra.is_empty() {
        let may = contract.fields_of(kind);
        for (k, v) in extra {
            if may.accepts(&k, &v) {
                put(&mut pairs, k, Field::Member(v));
            } else if refused_is_lost(&v, || pairs.iter().any(|p| p.0 == k)) {
                report.dropped_field(kind, &k);
            }
        }
    }
    Line { pairs }
}

/// Whether a source's member the contract refuses where it stands (`v`) is lost from the
/// output: a value is; a null only where the encoder writes no field of its key (`written`).
fn refused_is_lost(v: &crate::json::member::Member<'_>, written: impl FnOnce() -> bool) -> bool {
    !v.is_null() || !written()
}

/// An ISO-8601 UTC timestamp for milliseconds since the epoch, as `Date.toISOString` writes it
/// (base-context's session header, every line of gemini's).
pub(crate) fn iso(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z", rem / 3600, rem % 3600 / 60, rem % 60, ms % 1000)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::json::text::Text;
    use crate::json::Layout;
    use crate::report::Report;

    /// A field value of each way an encoder writes one, with text that needs escapes in some.
    fn field(pick: usize, text: &str) -> Field<'_> {
        match pick % 6 {
            0 => Field::Str(text),
            1 => Field::Digits(text.len() as u64 * 1_000_003),
            2 => Field::Json("{\"b\":[1,2],\"a\":null}"),
            3 => Field::Owned(Value::String(text.to_string())),
            4 => Field::Kept(Text::from(text.to_string())),
            _ => Field::Owned(serde_json::json!({ "z": text, "a": 1 })),
        }
    }

    proptest! {
        #[test]
        fn the_in_order_writer_writes_what_the_generic_one_does(
            picks in prop::collection::vec(0usize..6, 0..8),
            text in prop::sample::select(vec!["", "plain", "a\"b\\c", "line\nbreak", "<tag> & \u{2028}", "é\u{1}"]),
            dialect in prop::sample::select(vec![Dialect::Adal, Dialect::Localcode, Dialect::BaseContext]),
            spaced in any::<bool>(),
        ) {
            let layout = if spaced { Layout::Spaced } else { Layout::Compact };
            let keys = ["id", "name", "args", "index", "chunk_2", "Status", "x"];
            let contract = dialect.contract();
            let fields = || picks.iter().enumerate().map(|(i, &p)| (keys[i % keys.len()], field(p, text)));
            prop_assume!(picks.len() <= keys.len());
            let mut slow = Vec::new();
            build_line(contract, "tool_call", fields(), None, &mut Report::default()).write(&mut slow, layout);
            for extra in [None, Some(&Extra::new())] {
                let mut fast = Vec::new();
                write_in_order(&mut fast, contract, "tool_call", fields(), extra, layout, &mut Report::default());
                prop_assert_eq!(String::from_utf8_lossy(&fast), String::from_utf8_lossy(&slow));
            }
        }
    }

    #[test]
    fn the_in_order_writer_merges_a_source_lines_members_as_the_generic_one_does() {
        let extra = Object::parse(r#"{"name":"from the source","seq":3}"#).unwrap().unwrap().into_extra();
        let contract = Dialect::Adal.contract();
        let fields = || [("id", Field::Str("c1")), ("name", Field::Str("ours"))];
        let mut fast = Vec::new();
        write_in_order(
            &mut fast,
            contract,
            "tool_call",
            fields(),
            Some(&extra),
            Layout::Compact,
            &mut Report::default(),
        );
        assert_eq!(
            String::from_utf8(fast).unwrap(),
            "{\"type\":\"tool_call\",\"id\":\"c1\",\"name\":\"from the source\",\"seq\":3}\n"
        );
    }
}

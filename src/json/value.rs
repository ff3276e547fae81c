//! A `serde_json::Value` written in a layout.

use serde_json::Value;

use crate::json::escape::write_str;
use crate::json::layout::{separators, sorted, Layout};
use crate::json::number::write_number;

/// Appends `v` in `layout`: members in their order, or sorted by key at every depth for the
/// sorted layouts.
pub fn write_value(out: &mut Vec<u8>, v: &Value, layout: Layout) {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => write_number(out, n, layout),
        Value::String(s) => write_str(out, s, layout),
        Value::Array(a) => {
            out.push(b'[');
            for (n, x) in a.iter().enumerate() {
                if n > 0 {
                    out.extend_from_slice(separators(layout).0);
                }
                write_value(out, x, layout);
            }
            out.push(b']');
        }
        Value::Object(m) => {
            if sorted(layout) && m.len() > 1 {
                let mut members: Vec<(&String, &Value)> = m.iter().collect();
                members.sort_unstable_by_key(|p| p.0);
                write_members(out, members.into_iter(), layout, write_value);
            } else {
                write_members(out, m.iter(), layout, write_value);
            }
        }
    }
}

/// Writes an object's members, each value by `value`.
pub(crate) fn write_members<K: AsRef<str>, V>(
    out: &mut Vec<u8>,
    members: impl Iterator<Item = (K, V)>,
    layout: Layout,
    value: impl Fn(&mut Vec<u8>, V, Layout),
) {
    let (comma, colon) = separators(layout);
    out.push(b'{');
    for (n, (k, v)) in members.enumerate() {
        if n > 0 {
            out.extend_from_slice(comma);
        }
        write_str(out, k.as_ref(), layout);
        out.extend_from_slice(colon);
        value(out, v, layout);
    }
    out.push(b'}');
}

/// `value` as compact JSON text: what its `Display` gives, without the formatting machinery.
pub fn to_compact(value: &Value) -> String {
    let mut out = Vec::new();
    write_value(&mut out, value, Layout::Compact);
    // The writer makes UTF-8 only.
    String::from_utf8(out).unwrap_or_default()
}

/// Appends `value` and a newline to `out` in the given layout.
pub fn write_line(out: &mut Vec<u8>, value: &Value, layout: Layout) {
    write_value(out, value, layout);
    out.push(b'\n');
}

/// `text` as a JSON string literal, quotes and escapes included (`"a\u001b"`): how a message
/// quotes a value from the input, in the input's own notation rather than Rust's (`\u{1b}`).
pub fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| format!("\"{text}\""))
}

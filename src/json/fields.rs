//! A line written from (key, value) pairs: [`Field`], each value as it is at hand (a value, a
//! borrowed string or text, a member as read, a count), in order or sorted by key.

use serde_json::Value;

use crate::json::bytes::padded;
use crate::json::escape::write_str;
use crate::json::layout::{sorted, Layout};
use crate::json::member::{raw_in_layout, Member};
use crate::json::number::write_u64;
use crate::json::text::Text;
use crate::json::value::{write_members, write_value};

/// A member's value as it is written: a value (owned or borrowed), a string or [`Text`]
/// borrowed from a record (no copy into a `Value` for it), or JSON text already written in
/// the layout (a long list made without building a tree for it).
#[derive(Debug, Clone)]
pub enum Field<'a> {
    Owned(Value),
    Value(&'a Value),
    Str(&'a str),
    Text(&'a Text),
    Kept(Text),
    Json(&'a str),
    /// A count written as a string of its digits (localcode's counts).
    Digits(u64),
    /// A count written as a JSON integer, as a `Value` holding it would be.
    Int(u64),
    /// A member of a line as read: its text where the layout writes it so, else its value.
    Member(Member<'a>),
}

impl Field<'_> {
    pub fn write(&self, out: &mut Vec<u8>, layout: Layout) {
        match self {
            Field::Owned(v) => write_value(out, v, layout),
            Field::Value(v) => write_value(out, v, layout),
            Field::Str(s) => write_str(out, s, layout),
            Field::Text(t) => t.write(out, layout),
            Field::Kept(t) => t.write(out, layout),
            Field::Json(j) => out.extend_from_slice(j.as_bytes()),
            Field::Member(m) => write_member(out, m, layout),
            Field::Digits(n) => {
                out.push(b'"');
                write_u64(out, *n);
                out.push(b'"');
            }
            Field::Int(n) => write_u64(out, *n),
        }
    }
}

/// A member of a line as read: its text where the layout writes it so, else its value.
pub(crate) fn write_member(out: &mut Vec<u8>, m: &Member<'_>, layout: Layout) {
    match m {
        Member::Raw(r, as_is) if raw_in_layout(r, *as_is, layout) => out.extend_from_slice(r.as_bytes()),
        m => write_value(out, &m.to_value(), layout),
    }
}

impl From<Value> for Field<'_> {
    fn from(v: Value) -> Self {
        Field::Owned(v)
    }
}

/// Appends an object given as (key, value) pairs, and a newline, in the given layout: pairs in
/// order, or sorted by key (and nested objects too) for the sorted layouts.
pub fn write_fields<K: AsRef<str>>(out: &mut Vec<u8>, pairs: &[(K, Field<'_>)], layout: Layout) {
    if sorted(layout) && pairs.len() <= 32 {
        // The order as indices on the stack: a line has a handful of members. Keys compare
        // by their first eight bytes as a number first (most differ there), then whole.
        let mut order = [0u8; 32];
        let mut heads = [0u64; 32];
        let order = &mut order[..pairs.len()];
        for (i, o) in order.iter_mut().enumerate() {
            *o = i as u8;
            heads[i] = head8(pairs[i].0.as_ref().as_bytes());
        }
        order.sort_unstable_by(|&a, &b| {
            let (a, b) = (usize::from(a), usize::from(b));
            heads[a].cmp(&heads[b]).then_with(|| pairs[a].0.as_ref().cmp(pairs[b].0.as_ref()))
        });
        let members = order.iter().map(|&i| (pairs[usize::from(i)].0.as_ref(), &pairs[usize::from(i)].1));
        write_members(out, members, layout, |out, v, layout| v.write(out, layout));
    } else if sorted(layout) {
        let mut order: Vec<(&str, &Field<'_>)> = pairs.iter().map(|(k, v)| (k.as_ref(), v)).collect();
        order.sort_unstable_by_key(|p| p.0);
        write_members(out, order.into_iter(), layout, |out, v, layout| v.write(out, layout));
    } else {
        write_members(out, pairs.iter().map(|(k, v)| (k.as_ref(), v)), layout, |out, v, layout| v.write(out, layout));
    }
    out.push(b'\n');
}

/// The first eight bytes of `key` (zeros after its end) as a big-endian number: two keys
/// whose numbers differ are in that order as strings too.
fn head8(key: &[u8]) -> u64 {
    u64::from_be_bytes(padded(key, 0))
}

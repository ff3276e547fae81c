//! The members of a source line that its record's event has no field for.

use std::borrow::Cow;
use std::fmt;
use std::hash::Hasher;

use serde_json::Value;

use crate::json::member::Member;
use crate::json::object::Object;
use crate::json::{write_str, write_value, Layout};
use crate::model::Fields;

/// The members of a source line that the canonical model has no field for; an encoder of the
/// same dialect writes them back, canonical shows them, the others only name them as dropped.
///
/// Kept as one JSON text, the object serde_json's compact writer makes of them (members in the
/// order read, no repeated key): taking them from a line is mostly copying its bytes into one
/// allocation, however many there are, where a map cost a table, a key and a value each, built
/// and freed on every line though most targets never read a member of it. What reads them scans
/// the text again.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Extra {
    /// Empty, or a JSON object as serde_json writes it compact.
    json: String,
    /// A hash of the keys in order (see [`Extra::shape`]).
    shape: u64,
}

impl Object<'_> {
    /// The members left, as a record's extra members: what the decoder had no field for.
    pub fn into_extra(self) -> Extra {
        Extra::from_members(self.into_members())
    }
}

impl Extra {
    /// No members.
    pub fn new() -> Self {
        Extra::default()
    }

    /// The members of a line, in order, keys distinct.
    pub(crate) fn from_members<'a>(members: Vec<(Cow<'a, str>, Member<'a>)>) -> Extra {
        if members.is_empty() {
            return Extra::new();
        }
        let size = |m: &Member<'_>| match m {
            Member::Raw(r, _) => r.len(),
            Member::Value(_) => 16,
        };
        let mut json = String::with_capacity(members.iter().map(|(k, v)| k.len() + size(v) + 4).sum::<usize>() + 1);
        let mut scratch = Vec::new();
        let mut shape = Shape::default();
        for (k, v) in members {
            shape.key(&k);
            json.push(if json.is_empty() { '{' } else { ',' });
            match k {
                // Read without escapes, a key has nothing serde_json escapes: a quote, a
                // backslash and a control character each need one to stand in a string.
                Cow::Borrowed(k) => {
                    json.push('"');
                    json.push_str(k);
                    json.push('"');
                }
                Cow::Owned(k) => {
                    write_str(&mut scratch, &k, Layout::Compact);
                    // Only valid UTF-8 comes out of the writer.
                    json.push_str(&String::from_utf8_lossy(&scratch));
                    scratch.clear();
                }
            }
            json.push(':');
            match v {
                Member::Raw(r, as_is) if as_written(r, as_is) => json.push_str(r),
                // Through a value, as before the text (every raw member has one: the parse
                // refused the line otherwise).
                other => {
                    write_value(&mut scratch, &other.into_value(), Layout::Compact);
                    // Only valid UTF-8 comes out of the writer.
                    json.push_str(&String::from_utf8_lossy(&scratch));
                    scratch.clear();
                }
            }
        }
        json.push('}');
        Extra { json, shape: shape.0.finish() }
    }

    /// Members given as the JSON text of a non-empty object that is serde_json's compact form
    /// of itself ([`crate::json::scan::compact_json`]).
    pub(crate) fn from_json(json: &str) -> Extra {
        let mut extra = Extra { json: json.to_string(), shape: 0 };
        extra.shape = Shape::of(extra.keys());
        extra
    }

    /// A hash of the keys in order (FNV-1a), the same for two extras with the same keys: a
    /// stream's records of a kind mostly carry the same ones, and a reader that counts them by
    /// name (the report of members a target drops) reads the names once per shape.
    pub fn shape(&self) -> u64 {
        self.shape
    }

    /// No members.
    pub fn is_empty(&self) -> bool {
        self.json.is_empty()
    }

    /// The members as the JSON text of an object, as serde_json writes it compact.
    pub fn json(&self) -> &str {
        if self.json.is_empty() {
            "{}"
        } else {
            &self.json
        }
    }

    /// The members in order, each as its text.
    pub(crate) fn members(&self) -> Vec<(Cow<'_, str>, Member<'_>)> {
        if self.json.is_empty() {
            return Vec::new();
        }
        // Text this type wrote: the scan takes it whole but for what it leaves to serde_json
        // (nesting near serde_json's limit, say).
        crate::json::scan::object(&self.json).unwrap_or_else(|| {
            let fields: Fields = serde_json::from_str(&self.json).unwrap_or_default();
            fields.into_iter().map(|(k, v)| (Cow::Owned(k), Member::value(v))).collect()
        })
    }

    /// The members' keys, in order.
    pub fn keys(&self) -> impl Iterator<Item = Cow<'_, str>> {
        Keys { json: &self.json, at: 0 }
    }

    /// Member `key`, as a value.
    pub fn get(&self, key: &str) -> Option<Value> {
        self.members().into_iter().find(|(k, _)| k == key).map(|(_, v)| v.into_value())
    }

    /// Whether there is a member `key`.
    pub fn contains_key(&self, key: &str) -> bool {
        self.keys().any(|k| k == key)
    }

    /// The members as a map.
    pub fn to_fields(&self) -> Fields {
        self.members().into_iter().map(|(k, v)| (k.into_owned(), v.into_value())).collect()
    }

    /// Sets member `key`: in its place if it is there, else last.
    pub fn insert(&mut self, key: impl Into<String>, value: Value) {
        let key = key.into();
        if self.contains_key(&key) {
            let mut fields = self.to_fields();
            fields.insert(key, value);
            *self = Extra::from(fields);
            return;
        }
        let mut more = Vec::with_capacity(key.len() + 24);
        more.push(if self.json.pop().is_some() { b',' } else { b'{' });
        write_str(&mut more, &key, Layout::Compact);
        more.push(b':');
        write_value(&mut more, &value, Layout::Compact);
        more.push(b'}');
        // Only valid UTF-8 comes out of the writer.
        self.json.push_str(&String::from_utf8_lossy(&more));
        self.shape = Shape::of(self.keys());
    }

    /// Sets each of `more`'s members as [`Extra::insert`] does.
    pub fn extend(&mut self, more: Fields) {
        for (k, v) in more {
            self.insert(k, v);
        }
    }
}

/// [`Extra::shape`] in the making: the contracts' FNV-1a over the keys.
#[derive(Default)]
struct Shape(crate::json::hash::Fnv);

impl Shape {
    fn key(&mut self, key: &str) {
        // Each key closed by a byte no UTF-8 text holds, so that keys do not run together.
        self.0.write(key.as_bytes());
        self.0.write(&[0xFF]);
    }

    fn of<'a>(keys: impl Iterator<Item = Cow<'a, str>>) -> u64 {
        let mut shape = Shape::default();
        keys.for_each(|k| shape.key(&k));
        shape.0.finish()
    }
}

/// The keys of an [`Extra`]'s text, which this type wrote (or checked to be serde_json's
/// compact form): after `{` or `,` a key, `:`, and a value to step over.
struct Keys<'a> {
    json: &'a str,
    at: usize,
}

impl<'a> Iterator for Keys<'a> {
    type Item = Cow<'a, str>;

    fn next(&mut self) -> Option<Cow<'a, str>> {
        let b = self.json.as_bytes();
        // At the `{` or `,` before a key, or the closing `}`.
        if !matches!(b.get(self.at), Some(b'{' | b',')) || b.get(self.at + 1) != Some(&b'"') {
            return None;
        }
        let start = self.at + 2;
        let (end, escaped) = string_end(b, start);
        let key = &self.json[start..end];
        let mut i = end + 2;
        // The value: a string, a number or word (up to the next `,` or `}`), or nested.
        let mut depth = 0usize;
        while let Some(&c) = b.get(i) {
            match c {
                b'"' => i = string_end(b, i + 1).0,
                b'{' | b'[' => depth += 1,
                b'}' | b']' if depth > 0 => depth -= 1,
                b',' | b'}' if depth == 0 => break,
                _ => {}
            }
            i += 1;
        }
        self.at = i;
        Some(if escaped {
            Cow::Owned(crate::json::escape::unescape(key).unwrap_or_else(|| key.to_string()))
        } else {
            Cow::Borrowed(key)
        })
    }
}

/// Where the string whose inside starts at `b[i]` closes (its closing quote's index), and
/// whether it has escapes.
fn string_end(b: &[u8], mut i: usize) -> (usize, bool) {
    let mut escaped = false;
    while let Some(&c) = b.get(i) {
        match c {
            b'"' => return (i, escaped),
            b'\\' => {
                escaped = true;
                i += 2;
            }
            _ => i += 1,
        }
    }
    (b.len(), escaped)
}

/// Whether serde_json writes the value whose text is `r` as that text.
fn as_written(r: &str, as_is: crate::json::text::AsIs) -> bool {
    match r.as_bytes().first() {
        Some(b'{' | b'[') => crate::json::scan::compact_json(r),
        _ => crate::json::member::raw_in_layout(r, as_is, Layout::Compact),
    }
}

impl From<Fields> for Extra {
    fn from(fields: Fields) -> Extra {
        Extra::from_members(fields.into_iter().map(|(k, v)| (Cow::Owned(k), Member::value(v))).collect())
    }
}

impl fmt::Debug for Extra {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Extra({})", self.json())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::object::Object;
    use proptest::prelude::*;
    use serde_json::json;

    fn extra_of(line: &str) -> Extra {
        Object::parse(line).unwrap().unwrap().into_extra()
    }

    #[test]
    fn members_are_kept_as_serde_json_writes_them() {
        let line = r#"{"a": "x\/y", "b" : 1.50, "k\u0065y": [1, 2], "c":{"d":true},"e":null,"f":"é\u00e9","n":-0}"#;
        let extra = extra_of(line);
        let fields: Fields = serde_json::from_str(line).unwrap();
        assert_eq!(extra.json(), serde_json::to_string(&fields).unwrap());
        assert_eq!(extra.to_fields(), fields);
        assert_eq!(extra.get("key"), Some(json!([1, 2])));
        assert_eq!(extra.get("b"), Some(json!(1.5)));
        assert_eq!(extra.keys().collect::<Vec<_>>(), ["a", "b", "key", "c", "e", "f", "n"]);
        assert!(extra.contains_key("e") && !extra.contains_key("z"));
    }

    #[test]
    fn an_empty_extra_is_no_text_and_an_empty_object() {
        let extra = extra_of("{}");
        assert!(extra.is_empty());
        assert_eq!(extra.json(), "{}");
        assert_eq!(extra, Extra::new());
        assert_eq!(extra.keys().count(), 0);
    }

    #[test]
    fn the_shape_is_the_keys_in_order() {
        let shape = |line: &str| extra_of(line).shape();
        assert_eq!(shape(r#"{"a":1,"b":"x"}"#), shape(r#"{"a":[2],"b":null}"#));
        assert_ne!(shape(r#"{"a":1,"b":2}"#), shape(r#"{"b":1,"a":2}"#));
        assert_ne!(shape(r#"{"ab":1}"#), shape(r#"{"a":1,"b":2}"#));
        assert_eq!(shape(r#"{"k\u0065y":1}"#), Extra::from_json(r#"{"key":1}"#).shape());
        let mut grown = extra_of(r#"{"a":1}"#);
        grown.insert("b", json!(2));
        assert_eq!(grown.shape(), shape(r#"{"a":1,"b":2}"#));
    }

    #[test]
    fn insert_replaces_in_place_and_appends_new_keys() {
        let mut extra = extra_of(r#"{"a":1,"b":2}"#);
        extra.insert("a", json!("one"));
        extra.insert("c", json!(3));
        assert_eq!(extra.json(), r#"{"a":"one","b":2,"c":3}"#);
        let mut more = Fields::new();
        more.insert("b".into(), json!(null));
        more.insert("d".into(), json!({"x": []}));
        extra.extend(more);
        assert_eq!(extra.json(), r#"{"a":"one","b":null,"c":3,"d":{"x":[]}}"#);
    }

    proptest! {
        #[test]
        fn any_object_keeps_the_members_serde_json_reads(
            v in prop::collection::vec((".{0,4}", crate::json::scan::tests::any_json()), 0..6),
            ws in prop::sample::select(vec!["", " ", "\n\t "]),
        ) {
            let body: Vec<String> = v
                .iter()
                .map(|(k, v)| format!("{}{ws}:{ws}{}", serde_json::to_string(k).unwrap(), serde_json::to_string_pretty(v).unwrap()))
                .collect();
            let line = format!("{{{ws}{}{ws}}}", body.join(&format!("{ws},{ws}")));
            let fields: Fields = serde_json::from_str(&line).unwrap();
            let extra = extra_of(&line);
            prop_assert_eq!(extra.to_fields(), fields.clone());
            prop_assert_eq!(extra.keys().collect::<Vec<_>>(), fields.keys().map(String::as_str).collect::<Vec<_>>());
            let written = if fields.is_empty() { "{}".to_string() } else { serde_json::to_string(&fields).unwrap() };
            prop_assert_eq!(extra.json(), written.as_str());
        }
    }
}

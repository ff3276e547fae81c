//! One input line as its top-level members: each key with its value's JSON text, borrowed from
//! the line, parsed only when a decoder takes it.
//!
//! Parsing every line into a `serde_json::Value` tree costs more than the whole translation
//! should: a hashed, ordered map per object, an allocation per key and per string. A decoder
//! needs only a few members, most of them short strings, and many lines carry large members it
//! never looks at (base-context repeats the whole partial message on every update). So a line
//! is scanned once into (key, raw value) pairs; a string member without escapes is taken by
//! copying its bytes; a nested member becomes a `Value` only when a decoder asks for one; and
//! whatever is left over becomes the record's unknown members.
//!
//! Semantics follow `serde_json::Map` with `preserve_order`, which this replaces: members keep
//! their order, and a key given twice keeps its first place and its last value.

use std::borrow::Cow;
use std::fmt;
use std::sync::OnceLock;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::json::escape::write_str;
use crate::json::layout::Layout;
use crate::json::member::{raw_str, Member};
use crate::json::text::Name;
use crate::json::text::{AsIs, Text};
use crate::json::value::write_value;

/// Objects with more members than this are checked for repeated keys through a real map.
const SMALL: usize = 32;

/// Whether JSON `text` nests arrays and objects about as deep as serde_json allows (128) or
/// deeper. Only a line with that many brackets is scanned, skipping strings.
fn too_deep(text: &[u8]) -> bool {
    const NEAR_LIMIT: usize = 120;
    if text.iter().filter(|&&b| b == b'[' || b == b'{').count() < NEAR_LIMIT {
        return false;
    }
    let (mut depth, mut i) = (0usize, 0);
    while let Some(&b) = text.get(i) {
        i += 1;
        match b {
            b'"' => loop {
                // To the closing quote, over escaped characters.
                let Some(j) = memchr::memchr2(b'"', b'\\', &text[i..]) else { return false };
                i += j + 1;
                if text[i - 1] == b'"' {
                    break;
                }
                i += 1;
            },
            b'[' | b'{' => {
                depth += 1;
                if depth >= NEAR_LIMIT {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// Whether two keys are the same. Keys are short, and a contract check searches a line by key
/// for every field it lists: a key up to sixteen bytes long is compared as two overlapping words,
/// without a call to `memcmp` (which most comparisons of keys of the same length made).
#[inline(always)]
pub(crate) fn same_key(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |s: &[u8], i: usize| u64::from_le_bytes(s[i..i + 8].try_into().unwrap_or_default());
    let half = |s: &[u8], i: usize| u32::from_le_bytes(s[i..i + 4].try_into().unwrap_or_default());
    match n {
        0..=3 => a == b,
        4..=7 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        _ => a == b,
    }
}

/// A JSON object's members in order, values unparsed.
#[derive(Debug, Clone, Default)]
pub struct Object<'a> {
    members: Vec<(Cow<'a, str>, Member<'a>)>,
}

/// What a line held, when it was not an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotObject(pub &'static str);

impl<'a> Object<'a> {
    /// Scans `text` as one JSON value: its members if it is an object, else what it is.
    pub fn parse(text: &'a str) -> Result<Result<Object<'a>, NotObject>, serde_json::Error> {
        if let Some(members) = crate::json::scan::object(text) {
            return Ok(Ok(Object::deduplicated(members, text)?));
        }
        // What the fast scan leaves: serde_json decides, and words any error.
        let parsed = serde_json::from_str::<Parsed<'a>>(text)?;
        // serde_json's reading into raw members takes three things a Value cannot hold, which
        // would make a member vanish when a decoder asks for it: a lone surrogate (\uD800),
        // nesting deeper than serde_json's limit, and a number beyond f64. A line with any is
        // refused, with serde_json's own reason, as the fast scan leaves it here to be. All
        // are rare, and looked for cheaply first.
        static ESCAPE_U: OnceLock<memchr::memmem::Finder<'static>> = OnceLock::new();
        let finder = ESCAPE_U.get_or_init(|| memchr::memmem::Finder::new(b"\\u"));
        let bytes = text.as_bytes();
        if finder.find_iter(bytes).any(|at| matches!(bytes.get(at + 2), Some(b'd' | b'D')))
            || too_deep(bytes)
            || crate::json::scan::may_overflow(bytes)
        {
            serde_json::from_str::<Value>(text)?;
        }
        Ok(match parsed {
            Parsed::Object(members) => Ok(Object::deduplicated(members, text)?),
            Parsed::Other(kind) => Err(NotObject(kind)),
        })
    }

    /// [`Object::parse`] for the text of a member this crate's scan (or serde_json) has read
    /// and vouched for already, as JSON: the members' own nested values are stepped over, not
    /// checked again ([`crate::json::scan::object_vouched`]). `None` when it is no object.
    pub(crate) fn parse_vouched(text: &'a str) -> Option<Object<'a>> {
        match crate::json::scan::object_vouched(text) {
            Some(members) => Object::deduplicated(members, text).ok(),
            None => Object::parse(text).ok()?.ok(),
        }
    }

    /// The elements of `text`, a JSON array this crate's scan (or serde_json) has vouched for
    /// already, each as its members where it is an object (`None` where it is not): a message's
    /// content blocks, read in one pass ([`crate::json::scan::array_objects_vouched`]). `None` when it
    /// is no array.
    pub(crate) fn list_vouched(text: &'a str) -> Option<Vec<Option<Object<'a>>>> {
        match crate::json::scan::array_objects_vouched(text) {
            Some(items) => {
                Some(items.into_iter().map(|(t, m)| m.and_then(|m| Object::deduplicated(m, t).ok())).collect())
            }
            None => Some(crate::json::scan::array_vouched(text)?.into_iter().map(Object::parse_vouched).collect()),
        }
    }

    /// A key given twice keeps its first place and its last value, as `serde_json::Map` does.
    fn deduplicated(members: Vec<(Cow<'a, str>, Member<'a>)>, text: &'a str) -> Result<Self, serde_json::Error> {
        if members.len() > SMALL {
            // Rare and large: let serde_json's map settle it.
            let map: Map<String, Value> = serde_json::from_str(text)?;
            if map.len() == members.len() {
                return Ok(Object { members });
            }
            return Ok(Object::from(map));
        }
        // Most lines repeat no key, and most keys differ in length, first or last byte: each
        // key is put in a table by those (open addressing, at most half full), and two keys are
        // compared only where they agree; a line is walked once, not pairwise.
        let mut marks = [0u32; SMALL];
        const SLOTS: usize = 2 * SMALL;
        const _: () = assert!(SLOTS.is_power_of_two() && SMALL < u8::MAX as usize);
        let mut slots = [0u8; SLOTS];
        let mut repeated = false;
        'keys: for (i, (k, _)) in members.iter().enumerate() {
            let b = k.as_bytes();
            let (first, last) = (b.first().copied().unwrap_or(0), b.last().copied().unwrap_or(0));
            let mark = u32::from(first) << 8 | u32::from(last) | (b.len() as u32) << 16;
            marks[i] = mark;
            // The hash's top bits: as many as index the table (a power of two).
            let mut slot = (mark.wrapping_mul(0x9E37_79B9) >> (32 - SLOTS.trailing_zeros())) as usize;
            loop {
                match slots[slot] {
                    0 => {
                        slots[slot] = i as u8 + 1;
                        break;
                    }
                    j => {
                        let j = usize::from(j - 1);
                        if marks[j] == mark && members[j].0 == *k {
                            repeated = true;
                            break 'keys;
                        }
                        slot = (slot + 1) % slots.len();
                    }
                }
            }
        }
        if !repeated {
            return Ok(Object { members });
        }
        let mut out: Vec<(Cow<'a, str>, Member<'a>)> = Vec::with_capacity(members.len());
        for (k, v) in members {
            match out.iter_mut().find(|(have, _)| *have == k) {
                Some(slot) => slot.1 = v,
                None => out.push((k, v)),
            }
        }
        Ok(Object { members: out })
    }

    pub fn len(&self) -> usize {
        self.members.len()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    fn position(&self, key: &str) -> Option<usize> {
        self.members.iter().position(|(k, _)| same_key(k.as_bytes(), key.as_bytes()))
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_some()
    }

    /// How long the line would be with its members written in the compact layout, keys as
    /// they were read (`None` where a key had escapes or a value is not raw text): the line is
    /// just that, with no space anywhere and no key twice, when it is exactly that long.
    pub fn compact_len(&self) -> Option<usize> {
        let mut len = 1 + self.members.len().max(1);
        for (k, v) in &self.members {
            let (Cow::Borrowed(k), Member::Raw(r, _)) = (k, v) else { return None };
            len += k.len() + 3 + r.len();
        }
        Some(len)
    }

    /// Its members in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Member<'a>)> {
        self.members.iter().map(|(k, v)| (k.as_ref(), v))
    }

    pub fn get(&self, key: &str) -> Option<&Member<'a>> {
        self.members.iter().find(|(k, _)| same_key(k.as_bytes(), key.as_bytes())).map(|(_, v)| v)
    }

    /// [`Object::get`] for a caller that looks up every field a contract lists on every line
    /// (whose keys often share a length, which sends `==` to `memcmp`): keys compared by
    /// `same_key`, looking first where `seen` says the key was found last, and noting where it
    /// is found when that was elsewhere.
    #[inline]
    pub fn get_field_seen(&self, key: &str, seen: &crate::json::hash::Seen) -> Option<&Member<'a>> {
        let at = seen.get();
        if let Some((k, v)) = self.members.get(at) {
            if same_key(k.as_bytes(), key.as_bytes()) {
                return Some(v);
            }
        }
        let at = self.members.iter().position(|(k, _)| same_key(k.as_bytes(), key.as_bytes()))?;
        seen.set(at);
        Some(&self.members[at].1)
    }

    /// Member `key` if it is a string, borrowed from the line where it can be; the member
    /// stays.
    pub fn get_text(&self, key: &str) -> Option<Cow<'a, str>> {
        match self.get(key)? {
            Member::Raw(r, as_is) => raw_str(r, *as_is),
            Member::Value(v) => v.as_str().map(|s| Cow::Owned(s.to_string())),
        }
    }

    /// Member `key` if it is a string.
    pub fn get_str(&self, key: &str) -> Option<Cow<'_, str>> {
        self.get(key)?.as_str()
    }

    /// Member `key` as a `Value` (a copy; the member stays).
    pub fn get_value(&self, key: &str) -> Option<Value> {
        self.get(key).map(Member::to_value)
    }

    /// Removes member `key`, keeping the others in order.
    pub fn remove(&mut self, key: &str) -> Option<Member<'a>> {
        let i = self.position(key)?;
        Some(self.members.remove(i).1)
    }

    /// Removes member `key` and gives its value as a `Value`.
    pub fn shift_remove(&mut self, key: &str) -> Option<Value> {
        self.remove(key).map(Member::into_value)
    }

    /// Sets member `key`, in its place if it is there, else last.
    pub fn insert(&mut self, key: impl Into<String>, value: Value) {
        let key = key.into();
        match self.position(&key) {
            Some(i) => self.members[i].1 = Member::value(value),
            None => self.members.push((Cow::Owned(key), Member::value(value))),
        }
    }

    /// The object as JSON text: raw members copied as they came, keys and inserted values
    /// written anew. For handing the members to a serde `Deserialize` without a `Value` tree.
    pub fn to_json(&self) -> String {
        let mut out = Vec::with_capacity(self.members.iter().map(|(k, _)| k.len() + 16).sum::<usize>() + 2);
        out.push(b'{');
        for (n, (k, v)) in self.members.iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            write_str(&mut out, k, Layout::Compact);
            out.push(b':');
            match v {
                Member::Raw(r, _) => out.extend_from_slice(r.as_bytes()),
                Member::Value(v) => write_value(&mut out, v, Layout::Compact),
            }
        }
        out.push(b'}');
        // Only valid UTF-8 went in: the line's own text, and what the writer made of strings.
        String::from_utf8(out).unwrap_or_default()
    }

    /// The members, in order.
    pub(crate) fn into_members(self) -> Vec<(Cow<'a, str>, Member<'a>)> {
        self.members
    }

    /// The members left, as a map: what the decoder had no field for.
    pub fn into_fields(self) -> Map<String, Value> {
        let mut m = Map::with_capacity(self.members.len());
        for (k, v) in self.members {
            m.insert(k.into_owned(), v.into_value());
        }
        m
    }

    /// One pass over the members in order: each that `take` says yes to is removed, the rest
    /// stay in order. For a decoder that takes several members of a line it has checked
    /// already, without a search and a move per member.
    pub fn take_each(&mut self, mut take: impl FnMut(&str, &Member<'a>) -> bool) {
        self.members.retain(|(k, v)| !take(k, v));
    }

    /// Takes member `key` if it is a string, borrowed from the line where it can be; anything
    /// else stays.
    pub fn take_text(&mut self, key: &str) -> Option<Cow<'a, str>> {
        let i = self.position(key)?;
        let (k, member) = self.members.remove(i);
        match member.into_str() {
            Ok(s) => Some(s),
            Err(member) => {
                self.members.insert(i, (k, member));
                None
            }
        }
    }

    /// Takes member `key` as a string. A number or boolean is taken as its JSON text; null or
    /// absence is `None`; an object or array stays (so it is kept as an unknown member).
    pub fn take_str(&mut self, key: &str) -> Option<String> {
        self.take_as(key)
    }

    /// [`Object::take_str`] as a [`Name`].
    pub fn take_name(&mut self, key: &str) -> Option<Name> {
        self.take_as(key)
    }

    /// [`Object::take_str`] as any string type ([`Member::text_taken`]).
    #[inline]
    fn take_as<T: for<'s> From<&'s str> + From<String>>(&mut self, key: &str) -> Option<T> {
        let i = self.position(key)?;
        let taken = self.members[i].1.text_taken()?;
        self.members.remove(i);
        taken
    }

    /// Takes member `key` as [`Object::take_str`] does, but a string keeps the escapes it was
    /// read with: a [`Text`], written back with one copy where the target escapes alike.
    pub fn take_kept(&mut self, key: &str) -> Option<Text> {
        self.take_kept_str(key).or_else(|| self.take_str(key).map(Text::from))
    }

    /// Takes member `key` if it is a string, kept as read; anything else stays.
    pub fn take_kept_str(&mut self, key: &str) -> Option<Text> {
        let i = self.position(key)?;
        match &self.members[i].1 {
            Member::Raw(r, as_is) if r.starts_with('"') => {
                let text = Text::from_json_inner_known(&r[1..r.len() - 1], *as_is);
                self.members.remove(i);
                Some(text)
            }
            Member::Value(v) if v.is_string() => self.take_text(key).map(|s| Text::from(s.into_owned())),
            _ => None,
        }
    }

    /// Takes a count written as an integer or as a string of digits; an invalid one stays
    /// (so it is kept, not lost) and reads as `None`.
    pub fn take_count(&mut self, key: &str) -> Option<u64> {
        let i = self.position(key)?;
        let taken = self.members[i].1.count_taken()?;
        self.members.remove(i);
        taken
    }

    /// [`Object::take_count`], telling a member that is there but holds no count (a negative
    /// or fractional number, a string of anything but digits, an object) from an absent one:
    /// `Err` with its value, and it stays.
    pub fn take_count_or_not(&mut self, key: &str) -> Result<Option<u64>, Value> {
        let Some(i) = self.position(key) else { return Ok(None) };
        match self.members[i].1.count_taken() {
            Some(taken) => {
                self.members.remove(i);
                Ok(taken)
            }
            None => Err(self.members[i].1.to_value()),
        }
    }

    /// Takes a signed integer written as a number or a string.
    pub fn take_int(&mut self, key: &str) -> Option<i64> {
        let i = self.position(key)?;
        let member = &self.members[i].1;
        let n = match member.as_str() {
            Some(s) => s.trim().parse().ok(),
            None => member.scalar().and_then(|v| v.as_i64()),
        };
        if n.is_some() {
            self.members.remove(i);
        }
        n
    }

    /// Takes a boolean written as `true`/`false` or as the strings `"true"`/`"false"`.
    pub fn take_bool(&mut self, key: &str) -> Option<bool> {
        let i = self.position(key)?;
        let b = self.members[i].1.bool_taken();
        if b.is_some() {
            self.members.remove(i);
        }
        b
    }
}

impl From<Map<String, Value>> for Object<'_> {
    fn from(map: Map<String, Value>) -> Self {
        Object { members: map.into_iter().map(|(k, v)| (Cow::Owned(k), Member::value(v))).collect() }
    }
}

/// What the scan of a line found.
enum Parsed<'a> {
    Object(Vec<(Cow<'a, str>, Member<'a>)>),
    Other(&'static str),
}

/// A key, borrowed from the line unless it had escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_string())))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s)))
            }
        }
        d.deserialize_str(V)
    }
}

impl<'de> Deserialize<'de> for Parsed<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Parsed<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Parsed<'de>, A::Error> {
                let mut members = Vec::with_capacity(map.size_hint().unwrap_or(8));
                while let Some(Key(k)) = map.next_key::<Key<'de>>()? {
                    let v: &'de RawValue = map.next_value()?;
                    members.push((k, Member::Raw(v.get(), AsIs::UNKNOWN)));
                }
                Ok(Parsed::Object(members))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Parsed<'de>, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Parsed::Other("array"))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Parsed<'de>, E> {
                Ok(Parsed::Other("boolean"))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Parsed<'de>, E> {
                Ok(Parsed::Other("number"))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Parsed<'de>, E> {
                Ok(Parsed::Other("number"))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Parsed<'de>, E> {
                Ok(Parsed::Other("number"))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Parsed<'de>, E> {
                Ok(Parsed::Other("string"))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Parsed<'de>, E> {
                Ok(Parsed::Other("null"))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::escape::unescape;
    use crate::json::number::{plain_u64, plain_u64_value};
    use proptest::prelude::*;
    use serde_json::json;

    fn obj(text: &str) -> Object<'_> {
        Object::parse(text).unwrap().unwrap()
    }

    /// The members as the object holds them, in order, each as a Value: a key held twice
    /// shows twice (`into_fields` would fold it through a map and hide that).
    fn held(o: &Object<'_>) -> Vec<(String, Value)> {
        o.iter().map(|(k, v)| (k.to_owned(), v.to_value())).collect()
    }

    fn entries(map: &Map<String, Value>) -> Vec<(String, Value)> {
        map.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }

    #[test]
    fn members_keep_their_order_and_a_repeated_key_its_first_place_and_last_value() {
        let text = r#"{"b":1,"a":{"x":[1,2]},"b":"two","c":null}"#;
        let o = obj(text);
        let via_map: Map<String, Value> = serde_json::from_str(text).unwrap();
        assert_eq!(held(&o), entries(&via_map));
        assert_eq!(held(&o).iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(), ["b", "a", "c"]);
        assert_eq!(o.get_value("b"), Some(json!("two")));
    }

    #[test]
    fn a_field_is_found_wherever_it_is_whatever_the_line_before_left_in_its_hint() {
        let seen = crate::json::hash::Seen::default();
        let lines =
            [r#"{"a":1,"turn":2,"b":3}"#, r#"{"turn":4,"a":1}"#, r#"{"b":3}"#, r#"{"x":0,"y":0,"z":0,"turn":5}"#];
        let mut found = Vec::new();
        for line in lines {
            let o = obj(line);
            found.push(o.get_field_seen("turn", &seen).map(|m| m.to_value()));
            // The hint names where "turn" was last found (kept while it is missing).
            found.push(Some(json!(seen.get())));
        }
        let expect = [json!(2), json!(1), json!(4), json!(0), Value::Null, json!(0), json!(5), json!(3)];
        let expect: Vec<Option<Value>> = expect.into_iter().map(|v| (!v.is_null()).then_some(v)).collect();
        assert_eq!(found, expect);
        // A hint past the end of a short line, or on a key of the same length, misleads nothing.
        seen.set(9);
        assert_eq!(obj(r#"{"turn":6}"#).get_field_seen("turn", &seen).map(|m| m.to_value()), Some(json!(6)));
        seen.set(0);
        assert_eq!(obj(r#"{"tune":1,"turn":7}"#).get_field_seen("turn", &seen).map(|m| m.to_value()), Some(json!(7)));
    }

    #[test]
    fn a_large_object_with_repeated_keys_settles_as_serde_json_does() {
        let mut text = String::from("{");
        for i in 0..40 {
            text.push_str(&format!("\"k{}\":{i},", i % 35));
        }
        text.push_str("\"last\":true}");
        let via_map: Map<String, Value> = serde_json::from_str(&text).unwrap();
        assert_eq!(held(&obj(&text)), entries(&via_map));
    }

    #[test]
    fn what_is_not_an_object_is_named() {
        assert_eq!(Object::parse("[1,{}]").unwrap().unwrap_err(), NotObject("array"));
        assert_eq!(Object::parse("\"x\"").unwrap().unwrap_err(), NotObject("string"));
        assert_eq!(Object::parse("3.5").unwrap().unwrap_err(), NotObject("number"));
        assert_eq!(Object::parse("null").unwrap().unwrap_err(), NotObject("null"));
        assert!(Object::parse("{\"a\":").is_err());
        assert!(Object::parse("{\"a\":1} x").is_err());
    }

    #[test]
    fn strings_are_taken_with_their_escapes_decoded() {
        let mut o = obj(r#"{"plain":"abc","esc":"a\"b\\n\u00e9\n","key\u0041":"k"}"#);
        assert_eq!(o.take_str("plain").as_deref(), Some("abc"));
        assert_eq!(o.take_str("esc").as_deref(), Some("a\"b\\né\n"));
        assert_eq!(o.take_str("keyA").as_deref(), Some("k"));
        assert!(o.is_empty());
    }

    proptest! {
        #[test]
        fn unescaping_gives_the_string_serde_json_reads_short_or_long(
            s in prop_oneof!["\\PC{0,40}", "[a\"\\\\/\n\t\u{1}é\u{1F600}]{0,300}"],
            slash in any::<bool>(),
            upper in any::<bool>(),
        ) {
            // serde_json's escapes, and the other forms a writer may choose: `\/`, `\u00e9`,
            // a surrogate pair, upper-case hex.
            let mut text = serde_json::to_string(&s).unwrap();
            if slash {
                text = text.replace('/', "\\/");
            }
            if upper {
                text = text.replace('é', "\\u00E9").replace('\u{1F600}', "\\ud83d\\ude00");
            }
            let inner = &text[1..text.len() - 1];
            prop_assert_eq!(unescape(inner), Some(s));
        }

        // Digits of every length around u64's (20 digits may not fit; 19 always do), and text
        // that is not digits alone.
        #[test]
        fn plain_counts_are_read_as_the_standard_parser_reads_them(text in "[0-9]{0,21}|[0-9]{0,3}[-+. a]?[0-9]{0,3}") {
            let expected = if plain_u64(&text) { text.parse::<u64>().ok() } else { None };
            prop_assert_eq!(plain_u64_value(&text), expected);
        }

        #[test]
        fn keys_are_the_same_when_their_bytes_are(a in "[ab]{0,20}", b in "[ab]{0,20}", at in any::<usize>()) {
            prop_assert_eq!(same_key(a.as_bytes(), b.as_bytes()), a == b);
            prop_assert!(same_key(a.as_bytes(), a.clone().as_bytes()));
            // The same length, one byte apart, wherever it is.
            if !a.is_empty() {
                let mut other = a.clone().into_bytes();
                let at = at % other.len();
                other[at] = if other[at] == b'a' { b'b' } else { b'a' };
                prop_assert!(!same_key(a.as_bytes(), &other));
            }
        }

        // Keys of three or four bytes over two letters share their length, first and last byte
        // without being the same key ("aab", "abb"): what the repeat check compares them by.
        #[test]
        fn repeated_keys_settle_as_serde_json_settles_them(keys in prop::collection::vec("[ab]{0,2}|a[ab]{1,2}b|[a-z]{1,9}", 0..40)) {
            let members: Vec<String> = keys.iter().enumerate().map(|(i, k)| format!("\"{k}\":{i}")).collect();
            let text = format!("{{{}}}", members.join(","));
            let via_map: Map<String, Value> = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(held(&obj(&text)), entries(&via_map));
        }

        #[test]
        fn members_become_values_as_serde_json_reads_them(
            v in prop_oneof![
                "[a-z é\"\\\n]{0,12}".prop_map(Value::from),
                any::<u64>().prop_map(Value::from),
                any::<i64>().prop_map(Value::from),
                any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
                any::<bool>().prop_map(Value::from),
                Just(Value::Null),
                Just(json!({"a": [1, "b"]})),
            ],
            digits in "0|[1-9][0-9]{0,24}",
        ) {
            // Every kind of member, and integers around u64's end (19 and 20 digits and more).
            for text in [serde_json::to_string(&v).unwrap(), digits] {
                let line = format!("{{\"k\":{text}}}");
                let o = obj(&line);
                prop_assert_eq!(o.get("k").map(Member::to_value), Some(serde_json::from_str::<Value>(&text).unwrap()));
            }
        }

        #[test]
        fn a_line_is_taken_exactly_when_serde_json_takes_it_whatever_its_numbers(
            whole in "0|[1-9][0-9]{0,3}|[1-9][0-9]{195,205}|[1-9][0-9]{300,320}",
            fraction in prop::option::of("[0-9]{1,4}"),
            exponent in prop::option::of(("[eE]", "[+-]?", "0{0,2}[0-9]{1,3}")),
            nested in any::<bool>(),
        ) {
            // Around f64's end (1.8e308): long integers, exponents of two digits and three,
            // both signs, at the top of a line and nested in a member.
            let mut n = whole;
            if let Some(f) = fraction {
                n += &format!(".{f}");
            }
            if let Some((e, sign, digits)) = exponent {
                n += &format!("{e}{sign}{digits}");
            }
            let member = if nested { format!("{{\"a\":[1,{n}]}}") } else { n };
            let line = format!("{{\"k\":{member},\"t\":\"x\"}}");
            let theirs = serde_json::from_str::<Value>(&line);
            match Object::parse(&line) {
                Ok(Ok(o)) => {
                    let (ours, theirs) = (o.get("k").map(Member::to_value), theirs.unwrap());
                    prop_assert_eq!(ours.as_ref(), theirs.get("k"), "{}", line);
                }
                ours => {
                    prop_assert!(theirs.is_err(), "{}: {:?}", line, ours.map(|_| ()));
                    prop_assert_eq!(ours.map(|_| ()).map_err(|e| e.to_string()), theirs.map(|_| ()).map_err(|e| e.to_string()));
                }
            }
        }

        #[test]
        fn strings_with_escapes_are_taken_as_serde_json_reads_them(s in "[a-z\"\\\\/\n\t\u{1}\u{8}\u{c}é🙂\u{2028}]{0,24}", ascii in any::<bool>()) {
            // serde_json's own escapes, and the \uXXXX form of everything (surrogate pairs
            // for what is beyond the BMP) as ensure_ascii writers put it.
            let literal = if ascii { crate::json::text::tests::ascii_literal(&s) } else { serde_json::to_string(&s).unwrap() };
            let line = format!("{{\"k\":{literal}}}");
            prop_assert_eq!(obj(&line).take_str("k"), Some(s));
        }
    }

    #[test]
    fn a_line_with_a_lone_surrogate_is_refused_as_serde_json_refuses_it() {
        for line in [r#"{"k":"a\ud800b"}"#, r#"{"k":{"n":["\uDC00"]}}"#] {
            let ours = Object::parse(line).map(|_| ()).map_err(|e| e.to_string());
            let theirs = serde_json::from_str::<Value>(line).map(|_| ()).map_err(|e| e.to_string());
            assert!(ours.is_err());
            assert_eq!(ours, theirs);
        }
        assert_eq!(obj(r#"{"k":"\ud83d\ude42"}"#).take_str("k").as_deref(), Some("🙂"));
    }

    #[test]
    fn a_line_nested_deeper_than_serde_json_allows_is_refused_as_before() {
        let deep = |n: usize| format!("{{\"type\":\"x\",\"args\":{}{}}}", "[".repeat(n), "]".repeat(n));
        let refused = Object::parse(&deep(200)).map(|_| ()).map_err(|e| e.to_string());
        assert_eq!(refused, serde_json::from_str::<Value>(&deep(200)).map(|_| ()).map_err(|e| e.to_string()));
        assert!(refused.is_err());
        // Brackets inside strings do not count; real nesting within the limit is kept whole.
        let line = format!("{{\"k\":\"{}\\\"[[[[[\"}}", "[".repeat(140));
        let mut o = obj(&line);
        assert!(o.take_str("k").is_some_and(|k| k.len() > 130));
        let line = deep(100);
        let mut o = obj(&line);
        assert_eq!(o.shift_remove("args"), serde_json::from_str::<Value>(&line).unwrap().get("args").cloned());
    }

    #[test]
    fn scalars_are_taken_as_the_map_helpers_take_them() {
        let mut o = obj(r#"{"n":12,"s":"7","neg":"-1","f":1.5,"b":"TRUE","t":true,"x":{"a":1},"z":null,"i":"-3"}"#);
        assert_eq!(o.take_count("n"), Some(12));
        assert_eq!(o.take_count("s"), Some(7));
        assert_eq!(o.take_count("neg"), None);
        assert!(o.contains_key("neg"), "an invalid count stays");
        assert_eq!(o.take_count("f"), None);
        assert_eq!(o.take_bool("b"), Some(true));
        assert_eq!(o.take_bool("t"), Some(true));
        assert_eq!(o.take_str("x"), None);
        assert!(o.contains_key("x"), "an object is not a string and stays");
        assert_eq!(o.take_str("z"), None);
        assert!(!o.contains_key("z"), "null is taken as absent");
        assert_eq!(o.take_int("i"), Some(-3));
        assert_eq!(o.into_fields(), json!({"neg": "-1", "f": 1.5, "x": {"a": 1}}).as_object().unwrap().clone());
    }

    #[test]
    fn one_pass_takes_what_the_key_by_key_takes_take_and_keeps_the_rest_in_order() {
        let line = r#"{"n":12,"neg":-1,"s":"a\"b","x":{"a":1},"z":null,"b":"False","w":[2]}"#;
        let mut one = obj(line);
        let (mut n, mut neg, mut s, mut x, mut z, mut b) = (None, None, None, None, None, None);
        // What a take gave (`None` for a member that stays, as `take_str` and the others give),
        // and whether it took the member.
        fn slot<T: Clone>(t: Option<Option<T>>, slot: &mut Option<Option<T>>) -> bool {
            *slot = Some(t.clone().flatten());
            t.is_some()
        }
        one.take_each(|k, v| match k {
            "n" => slot(v.count_taken(), &mut n),
            "neg" => slot(v.count_taken(), &mut neg),
            "s" => slot(v.str_taken(), &mut s),
            "x" => slot(v.str_taken(), &mut x),
            "z" => slot(v.str_taken(), &mut z),
            "b" => {
                b = v.bool_taken();
                b.is_some()
            }
            _ => false,
        });
        let mut each = obj(line);
        assert_eq!(n, Some(each.take_count("n")));
        assert_eq!(n, Some(Some(12)));
        assert_eq!(neg, Some(each.take_count("neg")));
        assert_eq!(s, Some(each.take_str("s")));
        assert_eq!(s, Some(Some("a\"b".to_string())));
        assert_eq!(x, Some(each.take_str("x")));
        assert_eq!(z, Some(each.take_str("z")));
        assert_eq!(b, each.take_bool("b"));
        assert_eq!(b, Some(false));
        // Left: an invalid count and an object (neither is taken), and what no one asked for.
        let left = json!({"neg": -1, "x": {"a": 1}, "w": [2]});
        assert_eq!(one.to_json(), left.to_string());
        assert_eq!(each.to_json(), left.to_string());
    }

    #[test]
    fn numbers_taken_as_strings_read_as_serde_json_prints_them() {
        let mut o = obj(r#"{"a":1e2,"b":-7,"c":true}"#);
        assert_eq!(o.take_str("a").as_deref(), Some("100.0"));
        assert_eq!(o.take_str("b").as_deref(), Some("-7"));
        assert_eq!(o.take_str("c").as_deref(), Some("true"));
    }

    #[test]
    fn the_json_text_of_an_object_is_its_members_raw_and_inserted() {
        let mut o = obj(r#"{"a" : [1, 2],"k\u00e9":"x\ny","b":1}"#);
        o.insert("b", json!({"z": "é"}));
        o.remove("a");
        assert_eq!(o.to_json(), r#"{"ké":"x\ny","b":{"z":"é"}}"#);
    }

    #[test]
    fn inserted_values_replace_in_place() {
        let mut o = obj(r#"{"a":1,"b":2}"#);
        o.insert("a", json!("x"));
        o.insert("c", json!(3));
        assert_eq!(o.get_str("a").as_deref(), Some("x"));
        assert_eq!(o.into_fields(), json!({"a": "x", "b": 2, "c": 3}).as_object().unwrap().clone());
    }
}

//! JSON helpers shared by the adapters: reading members that a dialect may write in more than
//! one way (counts as strings or integers, booleans as strings), and writing lines in the
//! layout a given agent uses on the wire.

use std::io;

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter};
use serde_json::{Map, Value};

/// How an agent lays out its JSON lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `{"a":1,"b":[1,2]}`: JavaScript's `JSON.stringify`, Rust's serde_json.
    Compact,
    /// `{"a": 1, "b": [1, 2]}`: Python's `json.dumps` with its default separators.
    Spaced,
    /// Rust's serde_json on a BTreeMap: compact, keys sorted at every depth.
    Sorted,
    /// Go's `encoding/json` on a map: compact, keys sorted at every depth, `<`, `>`, `&`,
    /// U+2028 and U+2029 escaped as `\u003c`..., and `\u0008`/`\u000c` for backspace and form
    /// feed.
    Go,
}

/// Go's `encoding/json` string escaping, on compact output.
struct GoFormatter;

impl Formatter for GoFormatter {
    fn write_string_fragment<W: ?Sized + io::Write>(&mut self, w: &mut W, fragment: &str) -> io::Result<()> {
        // Scan bytes: `<`, `>`, `&` are ASCII, and U+2028/U+2029 are E2 80 A8/A9 in UTF-8.
        // Most fragments hold none of them: one table lookup per byte says so.
        const MARK: [bool; 256] = {
            let mut t = [false; 256];
            t[b'<' as usize] = true;
            t[b'>' as usize] = true;
            t[b'&' as usize] = true;
            t[0xE2] = true;
            t
        };
        let bytes = fragment.as_bytes();
        if !bytes.iter().any(|&b| MARK[b as usize]) {
            return w.write_all(bytes);
        }
        let mut start = 0;
        let mut i = 0;
        while i < bytes.len() {
            let (escape, len): (&[u8], usize) = match bytes[i] {
                b'<' => (b"\\u003c", 1),
                b'>' => (b"\\u003e", 1),
                b'&' => (b"\\u0026", 1),
                0xE2 if bytes.get(i + 1) == Some(&0x80) && bytes.get(i + 2) == Some(&0xA8) => (b"\\u2028", 3),
                0xE2 if bytes.get(i + 1) == Some(&0x80) && bytes.get(i + 2) == Some(&0xA9) => (b"\\u2029", 3),
                _ => {
                    i += 1;
                    continue;
                }
            };
            w.write_all(&bytes[start..i])?;
            w.write_all(escape)?;
            i += len;
            start = i;
        }
        w.write_all(&bytes[start..])
    }

    fn write_char_escape<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        escape: serde_json::ser::CharEscape,
    ) -> io::Result<()> {
        use serde_json::ser::CharEscape;
        match escape {
            CharEscape::Backspace => w.write_all(b"\\u0008"),
            CharEscape::FormFeed => w.write_all(b"\\u000c"),
            other => CompactFormatter.write_char_escape(w, other),
        }
    }
}

/// Serializes `v` (a key, a value) in `layout` onto `out`.
fn write_value<T: Serialize + ?Sized>(out: &mut Vec<u8>, v: &T, layout: Layout) {
    let result = match layout {
        Layout::Compact => v.serialize(&mut serde_json::Serializer::with_formatter(&mut *out, CompactFormatter)),
        Layout::Spaced => v.serialize(&mut serde_json::Serializer::with_formatter(&mut *out, SpacedFormatter)),
        Layout::Sorted => v.serialize(&mut serde_json::Serializer::with_formatter(&mut *out, CompactFormatter)),
        Layout::Go => v.serialize(&mut serde_json::Serializer::with_formatter(&mut *out, GoFormatter)),
    };
    debug_assert!(result.is_ok());
}

/// Appends an object given as (key, value) pairs, and a newline, in the given layout: pairs in
/// order, or sorted by key (and nested objects too) for the sorted layouts.
pub fn write_pairs<V: std::borrow::Borrow<Value>>(out: &mut Vec<u8>, pairs: &[(&str, V)], layout: Layout) {
    let sorted = matches!(layout, Layout::Sorted | Layout::Go);
    let mut order: Vec<usize> = (0..pairs.len()).collect();
    if sorted {
        order.sort_unstable_by_key(|&i| pairs[i].0);
    }
    let (comma, colon): (&[u8], &[u8]) = if layout == Layout::Spaced { (b", ", b": ") } else { (b",", b":") };
    out.push(b'{');
    for (n, &i) in order.iter().enumerate() {
        if n > 0 {
            out.extend_from_slice(comma);
        }
        let (k, v) = (&pairs[i].0, pairs[i].1.borrow());
        write_value(out, *k, layout);
        out.extend_from_slice(colon);
        if sorted {
            write_value(out, &SortedRef(v), layout);
        } else {
            write_value(out, v, layout);
        }
    }
    out.extend_from_slice(b"}\n");
}

struct SortedMap<'a>(&'a Map<String, Value>);

impl Serialize for SortedMap<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut keys: Vec<&String> = self.0.keys().collect();
        keys.sort_unstable();
        let mut map = s.serialize_map(Some(keys.len()))?;
        for k in keys {
            map.serialize_entry(k, &SortedRef(&self.0[k]))?;
        }
        map.end()
    }
}

/// Serializes a value with the members of every object in key order, without copying it.
struct SortedRef<'a>(&'a Value);

impl Serialize for SortedRef<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        match self.0 {
            Value::Object(m) => SortedMap(m).serialize(s),
            Value::Array(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for x in a {
                    seq.serialize_element(&SortedRef(x))?;
                }
                seq.end()
            }
            other => other.serialize(s),
        }
    }
}

/// Python's default `json.dumps` separators: `", "` and `": "`.
struct SpacedFormatter;

impl Formatter for SpacedFormatter {
    fn begin_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }

    fn begin_object_key<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
}

/// Appends `value` and a newline to `out` in the given layout. Strings are raw UTF-8 with the
/// escapes JSON requires (the same set Python writes with `ensure_ascii=False`).
pub fn write_line(out: &mut Vec<u8>, value: &impl Serialize, layout: Layout) {
    // Writing to a Vec cannot fail, and our values have string keys only.
    let result = match layout {
        Layout::Compact => value.serialize(&mut serde_json::Serializer::with_formatter(&mut *out, CompactFormatter)),
        Layout::Spaced => value.serialize(&mut serde_json::Serializer::with_formatter(&mut *out, SpacedFormatter)),
        Layout::Sorted => match serde_json::to_value(value) {
            Ok(v) => SortedRef(&v).serialize(&mut serde_json::Serializer::with_formatter(&mut *out, CompactFormatter)),
            Err(e) => Err(e),
        },
        Layout::Go => match serde_json::to_value(value) {
            Ok(v) => SortedRef(&v).serialize(&mut serde_json::Serializer::with_formatter(&mut *out, GoFormatter)),
            Err(e) => Err(e),
        },
    };
    debug_assert!(result.is_ok());
    out.push(b'\n');
}

/// A count that one dialect writes as an integer and another as a string of digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    Absent,
    Value(u64),
    /// Present but negative, fractional or not a number.
    Invalid,
}

/// Reads a count written as an integer or as a string of digits.
pub fn count(v: &Value) -> Count {
    match v {
        Value::Number(n) => n.as_u64().map_or(Count::Invalid, Count::Value),
        Value::String(s) => s.trim().parse::<u64>().map_or(Count::Invalid, Count::Value),
        Value::Null => Count::Absent,
        _ => Count::Invalid,
    }
}

/// The first `max` characters (Unicode scalar values, as Python counts them) of `s`, cut on a
/// character boundary, and whether anything was cut.
pub fn cut_chars(s: &str, max: usize) -> (&str, bool) {
    match s.char_indices().nth(max) {
        Some((at, _)) => (&s[..at], true),
        None => (s, false),
    }
}

/// Splits `s` into pieces of at most `max` characters each, on character boundaries. An
/// empty string is one empty piece.
pub fn split_chars(s: &str, max: usize) -> Vec<&str> {
    let max = max.max(1);
    let mut pieces = Vec::new();
    let mut rest = s;
    loop {
        let (head, cut) = cut_chars(rest, max);
        pieces.push(head);
        if !cut {
            return pieces;
        }
        rest = &rest[head.len()..];
    }
}

/// Number of characters in `s`, as Python's `len` counts them.
pub fn char_len(s: &str) -> u64 {
    s.chars().count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spaced_layout_matches_python_json_dumps() {
        let mut out = Vec::new();
        write_line(
            &mut out,
            &json!({"type": "result", "tokens": {"prompt": 1, "total": 2}, "l": [1, 2]}),
            Layout::Spaced,
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"type\": \"result\", \"tokens\": {\"prompt\": 1, \"total\": 2}, \"l\": [1, 2]}\n"
        );
    }

    #[test]
    fn non_ascii_is_written_raw_and_controls_are_escaped() {
        let mut out = Vec::new();
        write_line(&mut out, &json!({"t": "é🙂\u{1}\n\"<"}), Layout::Compact);
        assert_eq!(String::from_utf8(out).unwrap(), "{\"t\":\"é🙂\\u0001\\n\\\"<\"}\n");
    }

    #[test]
    fn go_layout_sorts_keys_at_every_depth_and_escapes_as_go_does() {
        let mut out = Vec::new();
        write_line(&mut out, &json!({"b": 1, "a": {"z": "<a&b>", "y": "\u{8}\u{c}\n\u{2028}é"}}), Layout::Go);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"a\":{\"y\":\"\\u0008\\u000c\\n\\u2028é\",\"z\":\"\\u003ca\\u0026b\\u003e\"},\"b\":1}\n"
        );
    }

    #[test]
    fn counts_are_read_from_strings_and_integers() {
        assert_eq!(count(&json!("42")), Count::Value(42));
        assert_eq!(count(&json!(42)), Count::Value(42));
        assert_eq!(count(&json!("-1")), Count::Invalid);
        assert_eq!(count(&json!("x")), Count::Invalid);
        assert_eq!(count(&json!(1.5)), Count::Invalid);
    }

    #[test]
    fn cutting_never_splits_a_multibyte_character() {
        let s = "a🙂e\u{301}x";
        assert_eq!(cut_chars(s, 2), ("a🙂", true));
        assert_eq!(cut_chars(s, 3), ("a🙂e", true));
        assert_eq!(cut_chars(s, 4), ("a🙂e\u{301}", true));
        assert_eq!(cut_chars(s, 5), (s, false));
        assert_eq!(split_chars("🙂🙂🙂", 2), vec!["🙂🙂", "🙂"]);
        assert_eq!(split_chars("", 2), vec![""]);
        assert_eq!(split_chars("ab", 2), vec!["ab"]);
    }
}

//! The JSON layer: reading a line into its members without building a tree, and writing lines
//! in the layout each agent uses on the wire. It imports nothing else of the crate; its files
//! form layers of their own, each importing only those above it in this list (the
//! layering test holds them to it):
//!
//! - [`layout`] and [`bytes`]: how each agent lays a line out; the SIMD byte search.
//! - [`escape`] and [`number`]: strings' escapes both ways; numbers in each layout.
//! - [`serialize`]: any `Serialize` written as serde_json writes it.
//! - [`text`]: [`Text`], a string that may still be in the escaped form it was read in.
//! - [`value`]: a `serde_json::Value` written in a layout.
//! - [`member`]: [`Member`], one member as read; `scan`: the fast path of reading a line.
//! - [`object`]: [`Object`], a line as its members. [`fields`]: a line written from pairs.
//! - [`hash`]: a remembered position among members, and the FNV hasher.
//!
//! This file is the face: it declares the files and names what the rest of the crate uses.

pub mod bytes;
pub mod escape;
pub mod fields;
pub mod hash;
pub mod layout;
pub mod member;
pub mod number;
pub mod object;
pub(crate) mod scan;
pub mod serialize;
pub mod text;
pub mod value;

pub use escape::write_str;
pub use fields::{write_fields, Field};
pub use layout::Layout;
pub use member::{count, Count, Member};
pub use number::write_number;
pub use object::Object;
pub use serialize::{write_serialize, SerError};
pub use text::{char_len, cut_chars, split_chars, Name, Text};
pub use value::{quoted, to_compact, write_line, write_value};

#[cfg(test)]
mod tests {
    use super::bytes::*;
    use super::fields::*;
    use super::member::*;
    use super::serialize::*;
    use super::text::*;
    use super::value::*;
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;
    use serde_json::Value;

    proptest! {
        #[test]
        fn a_nested_value_ends_at_its_closing_bracket_whatever_its_strings_hold(
            items in prop::collection::vec(crate::json::scan::tests::any_json(), 0..4),
            pad in 0..17usize,
            object in any::<bool>(),
            ascii in any::<bool>(),
        ) {
            // An object or array after `pad` bytes (so its strings' escapes and brackets cross
            // each sixteen-byte step), its strings written by serde_json or with \u escapes only,
            // more text after it.
            let value = if object {
                Value::Object(items.into_iter().enumerate().map(|(i, v)| (format!("k{i}]\"{{"), v)).collect())
            } else {
                Value::Array(items)
            };
            let mut nested = serde_json::to_string(&value).unwrap();
            if ascii {
                nested = nested.chars().map(|c| if c.is_ascii() { c.to_string() } else { crate::json::text::tests::ascii_literal(&c.to_string()).trim_matches('"').to_string() }).collect();
            }
            let text = format!("{}{nested},\"x\\\"y]\"]", " ".repeat(pad));
            prop_assert_eq!(nested_end(text.as_bytes(), pad + 1), Some(pad + nested.len()), "{}", text);
            // Cut before its closing bracket, it has no end.
            prop_assert_eq!(nested_end(&text.as_bytes()[..pad + nested.len() - 1], pad + 1), None);
        }
    }

    proptest! {
        #[test]
        fn digits_are_a_count_written_as_a_string(n in prop_oneof![0u64..1000, any::<u64>(), Just(u64::MAX)]) {
            let mut out = Vec::new();
            Field::Digits(n).write(&mut out, Layout::Spaced);
            prop_assert_eq!(String::from_utf8(out).unwrap(), format!("\"{n}\""));
        }

        #[test]
        fn an_int_is_written_as_a_value_holding_it_is(n in prop_oneof![0u64..1000, any::<u64>(), Just(u64::MAX)]) {
            for layout in [Layout::Compact, Layout::Spaced, Layout::Sorted, Layout::Go] {
                let (mut int, mut value) = (Vec::new(), Vec::new());
                Field::Int(n).write(&mut int, layout);
                Field::Owned(Value::from(n)).write(&mut value, layout);
                prop_assert_eq!(&int, &value);
            }
        }
    }

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
            "{\"a\":{\"y\":\"\\b\\f\\n\\u2028é\",\"z\":\"\\u003ca\\u0026b\\u003e\"},\"b\":1}\n"
        );
    }

    fn arb_value() -> impl Strategy<Value = Value> {
        // Strings mixing plain text with everything that needs escaping, in every position
        // relative to the scanner's eight-byte words.
        let text = proptest::collection::vec(
            prop_oneof![
                Just("\"".to_string()),
                Just("\\".to_string()),
                Just("\u{2028}\u{2029}\u{e2}".to_string()),
                Just("<&>".to_string()),
                (0u8..0x20).prop_map(|b| char::from(b).to_string()),
                "[a-z é🙂\u{7f}]{0,12}",
            ],
            0..8,
        )
        .prop_map(|parts| parts.concat());
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            (-1e6f64..1e6).prop_map(Value::from),
            text.clone().prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, move |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::vec((text.clone(), inner), 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// A copy of `v` whose objects hold their members in key order.
    fn key_ordered(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(keys.into_iter().map(|k| (k.clone(), key_ordered(&m[k]))).collect())
            }
            Value::Array(a) => Value::Array(a.iter().map(key_ordered).collect()),
            other => other.clone(),
        }
    }

    proptest! {
        #[test]
        fn compact_and_sorted_output_is_byte_for_byte_serde_json(v in arb_value()) {
            let mut out = Vec::new();
            write_value(&mut out, &v, Layout::Compact);
            prop_assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(&v).unwrap());
            let mut out = Vec::new();
            write_value(&mut out, &v, Layout::Sorted);
            prop_assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(&key_ordered(&v)).unwrap());
        }

        #[test]
        fn cutting_keeps_the_first_max_characters(s in "[a-zé🙂\u{301}]{0,40}", max in 0usize..45) {
            let want = match s.char_indices().nth(max) {
                Some((at, _)) => (&s[..at], true),
                None => (s.as_str(), false),
            };
            prop_assert_eq!(cut_chars(&s, max), want);
        }

        #[test]
        fn char_start_finds_the_nth_character_eight_bytes_at_a_time(s in "[a-zé€🙂\u{301}]{0,90}", n in 0usize..100) {
            let want = match s.char_indices().nth(n) {
                Some((at, _)) => Ok(at),
                None => Err(s.chars().count()),
            };
            prop_assert_eq!(crate::json::text::char_start(s.as_bytes(), n, false), want);
        }

        #[test]
        fn fields_are_written_in_key_order(keys in proptest::collection::btree_set("[ab\u{0}é]{0,10}", 0..32), layout in 0..2usize) {
            // Keys sharing their first bytes, shorter than eight and longer, with NULs: the
            // sort compares eight-byte heads before whole keys.
            let layout = [Layout::Sorted, Layout::Go][layout];
            let pairs: Vec<(&str, Field<'_>)> =
                keys.iter().rev().enumerate().map(|(i, k)| (k.as_str(), Field::Owned(Value::from(i)))).collect();
            let mut out = Vec::new();
            write_fields(&mut out, &pairs, layout);
            let want: serde_json::Map<String, Value> =
                keys.iter().rev().enumerate().map(|(i, k)| (k.clone(), Value::from(i))).collect();
            prop_assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(&key_ordered(&Value::Object(want))).unwrap() + "\n");
        }

        #[test]
        fn short_strings_are_padded_whole(s in proptest::collection::vec(1u8..=255, 0..16)) {
            let p = padded16(&s);
            prop_assert_eq!(&p[..s.len()], &s[..]);
            prop_assert!(p[s.len()..].iter().all(|&b| b == b'a'));
            let p: [u8; 8] = padded(&s, 0);
            let n = s.len().min(8);
            prop_assert_eq!(&p[..n], &s[..n]);
            prop_assert!(p[n..].iter().all(|&b| b == 0));
        }

        #[test]
        fn any_serialize_is_written_as_serde_json_writes_it(v in arb_value()) {
            let mut out = Vec::new();
            write_serialize(&mut out, &v).unwrap();
            prop_assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(&v).unwrap());
            // Structs, options, enums and sequences, as a derive writes them.
            let composite = (Some(&v), None::<u8>, [1.5f64, -0.0], 'é', std::collections::BTreeMap::from([("k", &v)]));
            let mut out = Vec::new();
            write_serialize(&mut out, &composite).unwrap();
            prop_assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(&composite).unwrap());
        }

        #[test]
        fn go_output_differs_from_sorted_only_in_go_escapes(v in arb_value()) {
            let (mut go, mut plain) = (Vec::new(), Vec::new());
            write_value(&mut go, &v, Layout::Go);
            write_value(&mut plain, &v, Layout::Sorted);
            let expected = String::from_utf8(plain)
                .unwrap()
                .replace('<', "\\u003c")
                .replace('>', "\\u003e")
                .replace('&', "\\u0026")
                .replace('\u{2028}', "\\u2028")
                .replace('\u{2029}', "\\u2029");
            prop_assert_eq!(String::from_utf8(go).unwrap(), expected);
        }
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

//! The fast path of reading a line: one pass over its bytes that checks it is a JSON object
//! and finds each top-level member's key and value text.
//!
//! serde_json's own scan (deserializing into `RawValue`s) goes a byte at a time through the
//! structure and checked separately for what the members must not hold; this goes sixteen
//! bytes at a time through strings (where most of a line's bytes are) and checks everything in
//! the same pass. It only ever says yes to a line serde_json accepts, with the same members.
//! Whatever it does not settle (a syntax error, a lone surrogate, nesting near serde_json's
//! limit, a line that is not an object) it leaves to serde_json, which then decides and words
//! the error: so the diagnostics stay serde_json's, and this path needs to be right only about
//! what it accepts.

use std::borrow::Cow;

/// Nesting this deep or deeper is left to serde_json, whose limit is 128.
const NEAR_LIMIT: usize = 120;

use crate::json::member::Member;
use crate::json::text::{check_inside, read_inside, AsIs};

/// The members of `text` if it is a JSON object this scan can vouch for, in order (a repeated
/// key appears each time); `None` when serde_json should decide.
pub(crate) fn object(text: &str) -> Option<Vec<(Cow<'_, str>, Member<'_>)>> {
    object_in(Scanner::new(text, false), text)
}

/// [`object`] for text this scan has read and vouched for already (a member of a line it
/// took): the members' nested values are only stepped over, not checked again. A decoder that
/// reads a nested object (a message, its content blocks) would otherwise check its whole
/// depth once more for each level it takes apart.
pub(crate) fn object_vouched(text: &str) -> Option<Vec<(Cow<'_, str>, Member<'_>)>> {
    object_in(Scanner::new(text, true), text)
}

fn object_in<'a>(mut s: Scanner<'_>, text: &'a str) -> Option<Vec<(Cow<'a, str>, Member<'a>)>> {
    s.ws();
    let members = members_in(&mut s, text)?;
    s.ws();
    (s.i == s.b.len()).then_some(members)
}

/// The members of the object at `s` (its opening bracket next), `s` left past its closing one.
#[inline(always)]
fn members_in<'a>(s: &mut Scanner<'_>, text: &'a str) -> Option<Vec<(Cow<'a, str>, Member<'a>)>> {
    s.eat(b'{')?;
    let mut members = Vec::with_capacity(8);
    s.ws();
    if !s.eat_if(b'}') {
        loop {
            s.eat(b'"')?;
            let start = s.i;
            let escaped = s.string()?.escaped() == Some(true);
            let key = between(text, start, s.i - 1);
            let key = if escaped { Cow::Owned(crate::json::escape::unescape(key)?) } else { Cow::Borrowed(key) };
            // Most lines are compact: the colon right after the key, the value right after it.
            if !s.eat_if(b':') {
                s.ws();
                s.eat(b':')?;
            }
            s.ws();
            let start = s.i;
            let as_is = s.value()?;
            members.push((key, Member::Raw(between(text, start, s.i), as_is)));
            match s.next()? {
                b',' => s.ws(),
                b'}' => break,
                b' ' | b'\t' | b'\n' | b'\r' => {
                    s.ws();
                    match s.next()? {
                        b',' => s.ws(),
                        b'}' => break,
                        _ => return None,
                    }
                }
                _ => return None,
            }
        }
    }
    Some(members)
}

/// `text[from..to]`, where the scan found both ends: each is at an ASCII byte the scan matched
/// (a quote, a value's first byte) or just past one, so on a character boundary, and the
/// slice needs no check of its own (two per member, on every line).
#[inline]
fn between(text: &str, from: usize, to: usize) -> &str {
    debug_assert!(from <= to && text.is_char_boundary(from) && text.is_char_boundary(to));
    // SAFETY: `from <= to <= text.len()` (indices of bytes the scan read, or one past), and
    // both are character boundaries: a position at or just after an ASCII byte always is.
    unsafe { text.get_unchecked(from..to) }
}

/// The elements of `text`, a JSON array this scan (or serde_json) has read and vouched for
/// already, each as its JSON text; `None` when it is no array. For reading a member that is a
/// list (a message's content blocks) without building a tree for it: as [`object_vouched`],
/// nested values are stepped over, not checked again.
pub(crate) fn array_vouched(text: &str) -> Option<Vec<&str>> {
    let elements = elements_vouched(text, |s| s.value().map(drop))?;
    Some(elements.into_iter().map(|(t, ())| t).collect())
}

/// The elements of `text`, a JSON array vouched for already (as [`array_vouched`]), each as
/// its JSON text and, where it is an object, its members ([`object_vouched`]): a list of
/// objects (a message's content blocks) taken apart in one pass, each element's bytes not
/// stepped over first to be read again after. `None` when it is no array, or where the scan
/// leaves a key to serde_json.
pub(crate) fn array_objects_vouched(text: &str) -> Option<Vec<Element<'_>>> {
    elements_vouched(text, |s| match s.peek()? {
        b'{' => Some(Some(members_in(s, text)?)),
        _ => s.value().map(|_| None),
    })
}

/// An element of an array: its JSON text, and its members where it is an object.
pub(crate) type Element<'a> = (&'a str, Option<Vec<(Cow<'a, str>, Member<'a>)>>);

/// The elements of `text`, a JSON array vouched for already, each as its JSON text and what
/// `element` reads of it (the scan at its first byte, to be left past its last).
fn elements_vouched<'a, T>(
    text: &'a str,
    mut element: impl FnMut(&mut Scanner<'a>) -> Option<T>,
) -> Option<Vec<(&'a str, T)>> {
    let mut s = Scanner::new(text, true);
    s.ws();
    s.eat(b'[')?;
    let mut elements = Vec::new();
    s.ws();
    if !s.eat_if(b']') {
        loop {
            let start = s.i;
            let read = element(&mut s)?;
            elements.push((between(text, start, s.i), read));
            s.ws();
            match s.next()? {
                b',' => s.ws(),
                b']' => break,
                _ => return None,
            }
        }
    }
    s.ws();
    (s.i == s.b.len()).then_some(elements)
}

/// Whether `text` is JSON written in its compact form: serde_json parsing it and our writer
/// writing the value back ([`crate::json::value::write_value`], compact layout) gives `text` again,
/// byte for byte. Sure of a yes only: no whitespace, strings with serde_json's escapes and
/// nothing left to escape, integers of at most 18 digits and no `-0`, floats as serde_json
/// writes them, no key twice in an object. `false` (a float written otherwise, `1e3` or
/// `0.50`, a long number, an object of more than [`KEYS_CHECKED`] keys,
/// anything this scan leaves to serde_json) means: parse it and see. It lets JSON text held as
/// text (tool-call arguments) go on as text without building its value, when that value would
/// be written back as the same text.
pub(crate) fn compact_json(text: &str) -> bool {
    let mut s = Scanner::new(text, false);
    s.compact_value().is_some() && s.i == s.b.len()
}

/// A number with this many digits before its point, or with an exponent of three digits or
/// more, may be beyond f64 (about 1.8e308): the scan leaves its line to serde_json
/// ([`may_overflow`] tells the slow path to check it). Below both, it is below 1e299.
pub(crate) const MAY_OVERFLOW_DIGITS: usize = 200;

/// Whether `text` may hold a number beyond f64 (an over-estimate, bytes inside strings
/// included): an exponent of three digits or more after a digit, or a run of
/// [`MAY_OVERFLOW_DIGITS`] digits. For lines the scan left to serde_json only, which are rare.
pub(crate) fn may_overflow(text: &[u8]) -> bool {
    let mut run = 0;
    for (i, &b) in text.iter().enumerate() {
        if b.is_ascii_digit() {
            run += 1;
            if run >= MAY_OVERFLOW_DIGITS {
                return true;
            }
            continue;
        }
        run = 0;
        if matches!(b, b'e' | b'E') && i > 0 && text[i - 1].is_ascii_digit() | (text[i - 1] == b'.') {
            let rest = &text[i + 1..];
            let rest = rest.strip_prefix(b"+").or_else(|| rest.strip_prefix(b"-")).unwrap_or(rest);
            if rest.iter().take_while(|b| b.is_ascii_digit()).count() >= 3 {
                return true;
            }
        }
    }
    false
}

/// Most keys an object may have for [`compact_json`] to say yes: each is compared with those
/// before it.
const KEYS_CHECKED: usize = 16;

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
    depth: usize,
    /// The text was read and vouched for by this scan before: nested values are stepped over
    /// ([`Scanner::skip_nested`]), not checked.
    vouched: bool,
}

impl<'a> Scanner<'a> {
    fn new(text: &'a str, vouched: bool) -> Self {
        Scanner { b: text.as_bytes(), i: 0, depth: 0, vouched }
    }

    /// Past the rest of an object or array whose opening bracket is read, in vouched text:
    /// brackets counted outside strings, sixteen bytes a step ([`crate::json::bytes::nested_end`]).
    fn skip_nested(&mut self) -> Option<()> {
        self.i = crate::json::bytes::nested_end(self.b, self.i)?;
        Some(())
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.next()? == c).then_some(())
    }

    fn eat_if(&mut self, c: u8) -> bool {
        let yes = self.peek() == Some(c);
        if yes {
            self.i += 1;
        }
        yes
    }

    /// JSON's whitespace, which is serde_json's: space, tab, newline, carriage return.
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    /// A string's inside and its closing quote (the opening one is read): which layouts write
    /// its inside as it is, and whether it had escapes (see [`AsIs`]). A control character, a
    /// bad escape or a surrogate escape is left to serde_json.
    fn string(&mut self) -> Option<AsIs> {
        if self.short_plain(true) {
            return Some(AsIs::PLAIN);
        }
        let inside = read_inside(self.b, self.i)?;
        self.i = inside.closed?;
        Some(inside.as_is)
    }

    /// A string's inside and its closing quote (the opening one is read), checked as
    /// [`Scanner::string`] checks it, its form not noted ([`check_inside`]).
    #[inline(always)]
    fn check_string(&mut self) -> Option<()> {
        if !self.short_plain(false) {
            self.i = check_inside(self.b, self.i)?;
        }
        Some(())
    }

    /// Most strings of a line (its keys, ids, names) are short and plain: whether the first
    /// special byte (a Go special too, with `go`) of the next sixteen is the closing quote, and
    /// if so, past it.
    #[inline]
    fn short_plain(&mut self, go: bool) -> bool {
        if self.i + 16 <= self.b.len() {
            let m = crate::json::bytes::special_mask(self.b, self.i, go);
            let at = self.i + m.trailing_zeros() as usize;
            if m != 0 && self.b[at] == b'"' {
                self.i = at + 1;
                return true;
            }
        }
        false
    }

    /// A value; for a string, which layouts write its inside as it is.
    fn value(&mut self) -> Option<AsIs> {
        match self.next()? {
            b'"' => return self.string(),
            b'{' | b'[' if self.vouched => self.skip_nested(),
            b'{' => self.nested(b'}', true),
            b'[' => self.nested(b']', false),
            b't' => self.word(b"rue"),
            b'f' => self.word(b"alse"),
            b'n' => self.word(b"ull"),
            b'-' => {
                let first = self.next()?;
                self.number(first)
            }
            first => self.number(first),
        }?;
        Some(AsIs::UNKNOWN)
    }

    fn word(&mut self, rest: &[u8]) -> Option<()> {
        if self.b.get(self.i..self.i + rest.len())? == rest {
            self.i += rest.len();
            return Some(());
        }
        None
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
        self.i - start
    }

    /// A number's grammar after its sign, `first` being read: no leading zeros, digits after
    /// a point and in an exponent. What comes after it is checked by the caller. A number
    /// that may be beyond f64 (which serde_json refuses: "number out of range") is left to
    /// serde_json too (see [`MAY_OVERFLOW_DIGITS`]), so that every member this scan passes
    /// becomes a `Value`.
    fn number(&mut self, first: u8) -> Option<()> {
        let whole = match first {
            b'0' => 1,
            b'1'..=b'9' => 1 + self.digits(),
            _ => return None,
        };
        let exponent = self.fraction_and_exponent()?;
        (whole < MAY_OVERFLOW_DIGITS && exponent < 3).then_some(())
    }

    /// A number's fraction and exponent, where it has them, after its integer digits: how many
    /// digits the exponent has.
    fn fraction_and_exponent(&mut self) -> Option<usize> {
        if self.eat_if(b'.') && self.digits() == 0 {
            return None;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            return match self.digits() {
                0 => None,
                n => Some(n),
            };
        }
        Some(0)
    }

    /// A value in compact form (see [`compact_json`]).
    fn compact_value(&mut self) -> Option<()> {
        match self.next()? {
            b'"' => self.compact_string().map(drop),
            b'{' => self.compact_nested(b'}', true),
            b'[' => self.compact_nested(b']', false),
            b't' => self.word(b"rue"),
            b'f' => self.word(b"alse"),
            b'n' => self.word(b"ull"),
            b'-' => {
                let first = self.next()?;
                self.compact_number(self.i - 2, first, true)
            }
            first => self.compact_number(self.i - 1, first, false),
        }
    }

    /// An object's or array's members in compact form (see [`compact_json`]), after its opening
    /// bracket, through `close`.
    fn compact_nested(&mut self, close: u8, keyed: bool) -> Option<()> {
        self.deeper()?;
        let mut keys: [&[u8]; KEYS_CHECKED] = [&[]; KEYS_CHECKED];
        let mut n = 0;
        if !self.eat_if(close) {
            loop {
                if keyed {
                    self.eat(b'"')?;
                    let key = self.compact_string()?;
                    // Keys are in the written form, so equal keys are equal bytes.
                    if n == KEYS_CHECKED || keys[..n].contains(&key) {
                        return None;
                    }
                    keys[n] = key;
                    n += 1;
                    self.eat(b':')?;
                }
                self.compact_value()?;
                match self.next()? {
                    b',' => {}
                    c if c == close => break,
                    _ => return None,
                }
            }
        }
        self.depth -= 1;
        Some(())
    }

    /// A string's inside and closing quote, when the compact layout writes it as it is: the
    /// inside's bytes.
    fn compact_string(&mut self) -> Option<&'a [u8]> {
        let start = self.i;
        let inside = read_inside(self.b, self.i)?;
        self.i = inside.closed?;
        (inside.as_is.in_layout(crate::json::layout::Layout::Compact) == Some(true)).then(|| &self.b[start..self.i - 1])
    }

    /// A number after its sign, `first` being read, that serde_json writes with the same bytes
    /// it reads: an integer of at most 18 digits (so within i64 and u64) and not `-0` (written
    /// `0`), checked by its digits; a fraction or exponent by reading it as serde_json does and
    /// writing it back (a float is written in its shortest form: `0.5`, not `5e-1`).
    fn compact_number(&mut self, start: usize, first: u8, negative: bool) -> Option<()> {
        let digits = match first {
            b'0' => 1,
            b'1'..=b'9' => 1 + self.digits(),
            _ => return None,
        };
        if !matches!(self.peek(), Some(b'.' | b'e' | b'E')) {
            return (digits <= 18 && !(negative && first == b'0')).then_some(());
        }
        self.fraction_and_exponent()?;
        // Beyond f64, serde_json refuses it, and it is not compact JSON.
        let text = std::str::from_utf8(&self.b[start..self.i]).ok()?;
        let n: serde_json::Number = serde_json::from_str(text).ok()?;
        let mut same = Same { rest: text.as_bytes() };
        (serde_json::to_writer(&mut same, &n).is_ok() && same.rest.is_empty()).then_some(())
    }

    fn deeper(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth < NEAR_LIMIT).then_some(())
    }

    /// An object's or array's members after its opening bracket, through `close`.
    fn nested(&mut self, close: u8, keyed: bool) -> Option<()> {
        self.depth += 1;
        if self.depth >= NEAR_LIMIT {
            return None;
        }
        self.ws();
        if !self.eat_if(close) {
            loop {
                // A nested string's form is not kept: only checked.
                if keyed {
                    self.eat(b'"')?;
                    self.check_string()?;
                    self.ws();
                    self.eat(b':')?;
                    self.ws();
                }
                if self.eat_if(b'"') {
                    self.check_string()?;
                } else {
                    self.value()?;
                }
                self.ws();
                match self.next()? {
                    b',' => self.ws(),
                    c if c == close => break,
                    _ => return None,
                }
            }
        }
        self.depth -= 1;
        Some(())
    }
}

/// A writer that takes only the bytes of `rest`, in order: what is written matched it where
/// it leaves `rest` empty (and no write failed).
struct Same<'a> {
    rest: &'a [u8],
}

impl std::io::Write for Same<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.rest.strip_prefix(buf) {
            Some(rest) => {
                self.rest = rest;
                Ok(buf.len())
            }
            None => Err(std::io::ErrorKind::InvalidData.into()),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::Value;

    /// What serde_json makes of `text` as an object: its members' keys and raw values, in
    /// order, a repeated key each time.
    fn serde_members(text: &str) -> Option<Vec<(String, String)>> {
        use serde::de::{Deserializer, MapAccess, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Vec<(String, String)>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(k) = m.next_key::<String>()? {
                    let v: Box<serde_json::value::RawValue> = m.next_value()?;
                    out.push((k, v.get().to_string()));
                }
                Ok(out)
            }
        }
        let mut de = serde_json::Deserializer::from_str(text);
        let members = (&mut de).deserialize_map(V).ok()?;
        de.end().ok()?;
        Some(members)
    }

    fn ours(text: &str) -> Option<Vec<(String, String)>> {
        let raw = |v: Member<'_>| match v {
            Member::Raw(v, _) => v.to_string(),
            Member::Value(_) => panic!("a scanned member is raw"),
        };
        Some(object(text)?.into_iter().map(|(k, v)| (k.into_owned(), raw(v))).collect())
    }

    #[test]
    fn objects_are_split_into_their_members_text() {
        let text =
            " {\"a\" : [1, {\"b\":\"}\"}] ,\"k\\u00e9\":\"x\\ny\",\"n\":-0.5e+3,\"t\":true,\"z\":null, \"e\":{}}\r\n";
        let m = object(text).unwrap();
        let got: Vec<(&str, &str)> = m
            .iter()
            .map(|(k, v)| match v {
                Member::Raw(v, _) => (k.as_ref(), *v),
                Member::Value(_) => panic!("a scanned member is raw"),
            })
            .collect();
        assert_eq!(
            got,
            [
                ("a", "[1, {\"b\":\"}\"}]"),
                ("ké", "\"x\\ny\""),
                ("n", "-0.5e+3"),
                ("t", "true"),
                ("z", "null"),
                ("e", "{}")
            ]
        );
        assert_eq!(object("{}").unwrap().len(), 0);
    }

    #[test]
    fn what_serde_json_refuses_or_must_decide_is_left_to_it() {
        for text in [
            "",
            "[1]",
            "\"x\"",
            "{",
            "{\"a\"}",
            "{\"a\":}",
            "{\"a\":1,}",
            "{\"a\":01}",
            "{\"a\":1.}",
            "{\"a\":.5}",
            "{\"a\":1e}",
            "{\"a\":-}",
            "{\"a\":tru}",
            "{\"a\":[1,]}",
            "{\"a\":\"\u{1}\"}",
            "{\"a\":\"\\x\"}",
            "{\"a\":\"\\u12G4\"}",
            "{\"a\":\"\\ud83d\\ude42\"}",
            "{\"a\":1} x",
            "{\"a\":1}{}",
            "{\"a\" 1}",
            "{'a':1}",
            "{\"a\":1\u{a0}}",
        ] {
            assert!(object(text).is_none(), "{text:?}");
        }
        let deep = |n: usize| format!("{{\"a\":{}{}}}", "[".repeat(n), "]".repeat(n));
        assert!(object(&deep(NEAR_LIMIT - 2)).is_some());
        assert!(object(&deep(NEAR_LIMIT)).is_none());
    }

    #[test]
    fn arrays_are_split_into_their_elements_text() {
        let text = " [1, \"a]\\\"[\" ,{\"b\":[2,\"}\"]}, [] ] ";
        assert_eq!(array_vouched(text).unwrap(), ["1", "\"a]\\\"[\"", "{\"b\":[2,\"}\"]}", "[]"]);
        assert_eq!(array_vouched("[]").unwrap(), Vec::<&str>::new());
        assert!(array_vouched("{}").is_none());
    }

    /// Lines built from pieces that are often valid JSON and often just not.
    fn near_json() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("{".to_string()),
            Just("}".to_string()),
            Just("[".to_string()),
            Just("]".to_string()),
            Just(",".to_string()),
            Just(":".to_string()),
            Just(" ".to_string()),
            Just("\"k\"".to_string()),
            Just("\"k\":".to_string()),
            Just("\"a\\\"b\\\\\\n\\u00e9\"".to_string()),
            Just("\"\\ud83d\\ude42\"".to_string()),
            Just("\"<&>\u{2028}é\"".to_string()),
            Just("\"\\q\"".to_string()),
            Just("\"\t\"".to_string()),
            Just("true".to_string()),
            Just("null".to_string()),
            Just("nul".to_string()),
            "-?(0|[1-9][0-9]{0,3}|01)(\\.[0-9]{0,2})?([eE][+-]?[0-9]{0,2})?",
        ];
        prop::collection::vec(piece, 1..7).prop_map(|v| v.concat())
    }

    proptest! {
        #[test]
        fn an_accepted_line_is_one_serde_json_accepts_with_the_same_members(body in near_json()) {
            let text = format!("{{\"k\":{body}}}");
            if let Some(m) = ours(&text) {
                prop_assert_eq!(Some(m), serde_members(&text));
            }
            if let Some(m) = ours(&body) {
                prop_assert_eq!(Some(m), serde_members(&body));
            }
        }

        #[test]
        fn a_valid_line_with_one_byte_changed_is_accepted_only_as_serde_json_accepts_it(
            v in any_json(),
            at in any::<prop::sample::Index>(),
            with in prop::sample::select(b" \"\\:,{}[]0-.eEtnu\t\x01x".to_vec()),
            how in 0..3u8,
        ) {
            let bytes = serde_json::to_vec(&serde_json::json!({"k": v})).unwrap();
            if let Some(text) = one_byte_changed(bytes, at, with, how) {
                if let Some(m) = ours(&text) {
                    prop_assert_eq!(Some(m), serde_members(&text));
                }
            }
        }

        #[test]
        fn vouched_text_is_split_as_the_checked_scan_and_serde_json_split_it(
            v in any_json(),
            ws in prop::sample::select(vec!["", " ", "\n\t "]),
        ) {
            let compact = serde_json::to_string(&serde_json::json!({"k": v, "and": [v, {"in": v}], "n": 1})).unwrap();
            let spaced = format!("{ws}{}{ws}", serde_json::to_string_pretty(&serde_json::json!({"k": v, "n": [v]})).unwrap());
            for text in [compact, spaced] {
                let vouched = object_vouched(&text).map(|m| {
                    m.into_iter().map(|(k, v)| match v {
                        Member::Raw(v, _) => (k.into_owned(), v.to_string()),
                        Member::Value(_) => panic!("a scanned member is raw"),
                    }).collect::<Vec<_>>()
                });
                prop_assert_eq!(&vouched, &ours(&text), "{}", text);
                prop_assert_eq!(vouched, serde_members(&text));
                // Each member's value as a list, where it is one.
                for (_, raw) in serde_members(&text).unwrap() {
                    let theirs: Result<Vec<Box<serde_json::value::RawValue>>, _> = serde_json::from_str(&raw);
                    let theirs = theirs.ok().map(|t| t.iter().map(|r| r.get().to_string()).collect::<Vec<_>>());
                    let ours = array_vouched(&raw).map(|e| e.into_iter().map(str::to_string).collect::<Vec<_>>());
                    prop_assert_eq!(&ours, &theirs, "{}", raw);
                    // Taken apart in one pass: the same elements, an object's members as
                    // serde_json splits them.
                    let one_pass = array_objects_vouched(&raw).map(|e| {
                        e.into_iter().map(|(t, m)| (t.to_string(), m.is_some())).collect::<Vec<_>>()
                    });
                    let elements = theirs.map(|t| t.into_iter().map(|e| (e.clone(), e.starts_with('{'))).collect());
                    prop_assert_eq!(one_pass, elements, "{}", raw);
                    for (t, m) in array_objects_vouched(&raw).into_iter().flatten() {
                        let m = m.map(|m| {
                            m.into_iter().map(|(k, v)| match v {
                                Member::Raw(v, _) => (k.into_owned(), v.to_string()),
                                Member::Value(_) => panic!("a scanned member is raw"),
                            }).collect::<Vec<_>>()
                        });
                        prop_assert_eq!(m, t.starts_with('{').then(|| serde_members(t).unwrap()), "{}", t);
                    }
                }
            }
        }

        #[test]
        fn valid_objects_without_surrogates_are_all_accepted(v in any_json(), ws in prop::sample::select(vec!["", " ", "\n\t "])) {
            let text = serde_json::to_string(&serde_json::json!({"k": v, "and": [v]})).unwrap();
            let spaced = serde_json::to_string_pretty(&serde_json::json!({"k": v})).unwrap();
            prop_assert!(ours(&text).is_some(), "{}", text);
            prop_assert_eq!(ours(&text), serde_members(&text));
            let padded = format!("{ws}{spaced}{ws}");
            prop_assert_eq!(ours(&padded), serde_members(&padded));
        }
    }

    /// `bytes` with the byte at `at` replaced by `with` (`how` 0), `with` inserted there (1), or
    /// the byte removed (2): as text, when that is still UTF-8.
    fn one_byte_changed(mut bytes: Vec<u8>, at: prop::sample::Index, with: u8, how: u8) -> Option<String> {
        let i = at.index(bytes.len());
        match how {
            0 => bytes[i] = with,
            1 => bytes.insert(i, with),
            _ => drop(bytes.remove(i)),
        }
        String::from_utf8(bytes).ok()
    }

    /// What [`compact_json`] must agree with: serde_json parses the text, and our writer
    /// writes the value back as the same text.
    fn round_trips(text: &str) -> bool {
        serde_json::from_str::<Value>(text).is_ok_and(|v| crate::json::value::to_compact(&v) == text)
    }

    #[test]
    fn compact_json_says_yes_only_to_text_written_back_as_it_is() {
        for text in [
            "{}",
            "[]",
            "{\"a\":[1,-2,{\"b\":null}],\"c\":\"x\\ny\\\"\"}",
            "\"s\"",
            "0",
            "true",
            "[[]]",
            "{\"a\":1.5,\"b\":[-0.25,0.99,100.0,-0.0]}",
        ] {
            assert!(compact_json(text), "{text:?}");
            assert!(round_trips(text), "{text:?}");
        }
        for text in [
            "",
            " {}",
            "{} ",
            "{\"a\": 1}",
            "{\"a\":1,\"a\":2}",
            "{\"a\":-0}",
            "{\"a\":1e3}",
            "{\"a\":1.50}",
            "{\"a\":0.1e1}",
            "{\"a\":-0.0e0}",
            "{\"a\":1.}",
            "{\"a\":1.5e}",
            "{\"a\":1234567890123456789}",
            "{\"a\":\"\\u00e9\"}",
            "{\"a\":\"\\/\"}",
            "{\"a\":01}",
            "{\"a\":1}x",
            "[1,]",
        ] {
            assert!(!compact_json(text), "{text:?}");
        }
        let many = |n: usize| format!("{{{}}}", (0..n).map(|i| format!("\"k{i}\":{i}")).collect::<Vec<_>>().join(","));
        assert!(compact_json(&many(KEYS_CHECKED)));
        assert!(!compact_json(&many(KEYS_CHECKED + 1)));
    }

    proptest! {
        #[test]
        fn compact_json_yes_means_the_text_round_trips(v in any_json(), body in near_json()) {
            let text = crate::json::value::to_compact(&v);
            if compact_json(&text) {
                prop_assert!(round_trips(&text), "{}", text);
            }
            if compact_json(&body) {
                prop_assert!(round_trips(&body), "{}", body);
            }
        }

        #[test]
        fn compact_json_yes_survives_any_one_byte_change_only_where_the_text_round_trips(
            v in any_json(),
            at in any::<prop::sample::Index>(),
            with in prop::sample::select(b" \"\\:,{}[]0-.eEtnu\t\x01x/".to_vec()),
            how in 0..3u8,
        ) {
            let bytes = crate::json::value::to_compact(&v).into_bytes();
            if let Some(text) = one_byte_changed(bytes, at, with, how) {
                if compact_json(&text) {
                    prop_assert!(round_trips(&text), "{}", text);
                }
            }
        }

        #[test]
        fn compact_text_of_integers_strings_and_bools_is_recognized(
            v in prop::collection::vec(("[a-z]{1,6}", prop_oneof![
                any::<i32>().prop_map(Value::from),
                "[a-z \"\\\n\té🙂<]{0,20}".prop_map(Value::String),
                any::<bool>().prop_map(Value::Bool),
            ]), 0..8)
        ) {
            let text = crate::json::value::to_compact(&Value::Object(v.into_iter().collect()));
            prop_assert!(compact_json(&text), "{}", text);
        }

        /// A float is compact text exactly where serde_json reads back the number it wrote
        /// (not every one: without its float_roundtrip feature it may read the last digit
        /// differently, as for -1.447580055337198e-308).
        #[test]
        fn compact_text_of_floats_is_recognized_where_it_round_trips(
            f in any::<f64>().prop_filter("a JSON number", |f| f.is_finite()),
            short in -1_000_000i64..1_000_000,
            scale in 0u32..7,
        ) {
            let text = crate::json::value::to_compact(&serde_json::json!({ "a": [f] }));
            prop_assert_eq!(compact_json(&text), round_trips(&text), "{}", text);
            // A float of a few digits (as tool arguments hold: 0.99, 12.5) always does.
            let text = crate::json::value::to_compact(&serde_json::json!({ "a": short as f64 / 10f64.powi(scale as i32) }));
            prop_assert!(compact_json(&text), "{}", text);
        }
    }

    pub(crate) fn any_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            (-1e6f64..1e6).prop_map(Value::from),
            "[a-z\"\\\\/\n\t\u{1}é🙂\u{2028}<{}\\[\\]]{0,40}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec(("[a-z\"{\\]]{0,3}", inner), 0..4)
                    .prop_map(|v| Value::Object(v.into_iter().collect())),
            ]
        })
    }
}

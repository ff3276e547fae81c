//! [`Text`]: a string of the model that may still be in the escaped form it was read in.
//!
//! A tool's output is most of the bytes of most streams, and it is full of escapes (a newline
//! every line). Decoding it into a `String` only to escape it again on output is two passes
//! and a copy per escape. A `Text` read from a line keeps the inside of the JSON string literal
//! as it came; when the target writes strings with exactly those escapes (serde_json's and
//! Python's for the compact, spaced and sorted layouts, Go's for wuu), writing it is one copy.
//! Anything that needs the characters themselves (a length, a cut) decodes it then.

use std::borrow::Cow;
use std::fmt;
use std::ops::ControlFlow;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::json::bytes::{byte_masks_at, escaped_bytes, next_special, walk_specials};
use crate::json::escape::unescape_one;
use crate::json::escape::{escape_byte, write_str};
use crate::json::layout::Layout;

/// Which layouts write the inside of a string literal as it is (its escapes are theirs, and
/// nothing in it is left to escape), when the scan that read it could tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AsIs(u8);

impl AsIs {
    /// Not known: [`written_as_is`] tells.
    pub const UNKNOWN: AsIs = AsIs(0);
    const KNOWN: u8 = 1;
    /// The compact, spaced and sorted layouts (serde_json's and Python's escapes).
    const SERDE: u8 = 2;
    const GO: u8 = 4;
    /// It has escapes.
    const ESCAPED: u8 = 8;

    /// Known, without escapes, written as it is in every layout.
    pub const PLAIN: AsIs = AsIs(Self::KNOWN | Self::SERDE | Self::GO);

    pub fn known(serde: bool, go: bool, escaped: bool) -> AsIs {
        AsIs(
            Self::KNOWN
                | if serde { Self::SERDE } else { 0 }
                | if go { Self::GO } else { 0 }
                | if escaped { Self::ESCAPED } else { 0 },
        )
    }

    /// Whether the inside has escapes; `None` when not known.
    pub fn escaped(self) -> Option<bool> {
        (self.0 & Self::KNOWN != 0).then_some(self.0 & Self::ESCAPED != 0)
    }

    /// Whether `inner`, the inside this describes, has escapes: as noted, else looked for.
    pub fn escapes_in(self, inner: &str) -> bool {
        self.escaped().unwrap_or_else(|| memchr::memchr(b'\\', inner.as_bytes()).is_some())
    }

    /// Whether `layout` writes it as it is; `None` when not known.
    pub(crate) fn in_layout(self, layout: Layout) -> Option<bool> {
        let bit = if layout == Layout::Go { Self::GO } else { Self::SERDE };
        (self.0 & Self::KNOWN != 0).then_some(self.0 & bit != 0)
    }
}

/// A string: its characters, or the inside of a valid JSON string literal that has escapes.
#[derive(Clone, Default)]
pub struct Text {
    s: String,
    escaped: bool,
    /// For a literal's inside (whether or not it has escapes), which layouts take it as it is.
    as_is: AsIs,
}

impl Text {
    /// The inside of a JSON string literal (between its quotes), already checked as JSON:
    /// kept as it is.
    pub fn from_json_inner(inner: &str) -> Text {
        Text::from_json_inner_known(inner, AsIs::UNKNOWN)
    }

    /// [`Text::from_json_inner`], with what the scan found of its escapes.
    pub fn from_json_inner_known(inner: &str, as_is: AsIs) -> Text {
        Text { s: inner.to_string(), escaped: as_is.escapes_in(inner), as_is }
    }

    /// The characters, decoded if they were kept escaped.
    pub fn as_str(&self) -> Cow<'_, str> {
        if !self.escaped {
            return Cow::Borrowed(&self.s);
        }
        // Checked as JSON when it was read, so it decodes; the fallback is for a surrogate pair,
        // which the fast unescaper leaves to serde_json.
        Cow::Owned(
            crate::json::escape::unescape(&self.s)
                .or_else(|| serde_json::from_str(&format!("\"{}\"", self.s)).ok())
                .unwrap_or_default(),
        )
    }

    pub fn into_string(self) -> String {
        if self.escaped {
            return self.as_str().into_owned();
        }
        self.s
    }

    /// Appends `more`. Pieces read with escapes stay in that form, so that output streamed in
    /// deltas is gathered without decoding them; a piece of the other form is brought over.
    pub fn push(&mut self, more: &Text) {
        if self.s.is_empty() {
            self.clone_from(more);
            return;
        }
        self.as_is = if self.as_is == more.as_is { self.as_is } else { AsIs::UNKNOWN };
        match (self.escaped, more.escaped) {
            (false, false) | (true, true) => self.s.push_str(&more.s),
            (true, false) => escape_into(&mut self.s, &more.s),
            (false, true) => {
                if next_special(self.s.as_bytes(), 0, false) < self.s.len() {
                    let plain = std::mem::take(&mut self.s);
                    escape_into(&mut self.s, &plain);
                }
                self.escaped = true;
                self.s.push_str(&more.s);
            }
        }
    }

    pub fn clear(&mut self) {
        self.s.clear();
        self.escaped = false;
        self.as_is = AsIs::UNKNOWN;
    }

    /// Its length in bytes as read (escapes and all): never less than its length in
    /// characters.
    pub fn as_read_len(&self) -> usize {
        self.s.len()
    }

    /// Its first `max` characters, cut on the form it is kept in (an escape is one character,
    /// a surrogate pair of escapes one), without decoding it; `None` when it has no more.
    pub fn cut(&self, max: usize) -> Option<Text> {
        if self.s.len() <= max {
            // No more bytes than that: no more characters either.
            return None;
        }
        char_start(self.s.as_bytes(), max, self.escaped).ok().map(|at| self.head(at))
    }

    /// The first `at` bytes of the kept form (`at` a character's start, outside escapes).
    fn head(&self, at: usize) -> Text {
        self.part(&self.s[..at])
    }

    /// `s`, a part of the kept form that starts and ends on characters outside escapes, as a
    /// text of its own.
    fn part(&self, s: &str) -> Text {
        let escaped = self.escaped && memchr::memchr(b'\\', s.as_bytes()).is_some();
        // What holds of every escape and character holds of a part of them.
        Text { s: s.to_string(), escaped, as_is: self.as_is }
    }

    pub fn is_empty(&self) -> bool {
        self.s.is_empty()
    }

    /// Its length as kept, in bytes (with its escapes where it was kept escaped): about what
    /// writing it takes, to make room for it.
    pub fn kept_len(&self) -> usize {
        self.s.len()
    }

    /// How many bytes its characters take decoded, and what follows the first `n` of them
    /// (`None` where `n` is past the end or inside a character): what `as_str()`'s `len()` and
    /// `get(n..)` give, without decoding the text. For a target that sends only what is new in
    /// output given whole each time, counted in decoded bytes.
    pub fn after_decoded(&self, n: usize) -> (usize, Option<Text>) {
        let tail = |at: usize| self.part(&self.s[at..]);
        if !self.escaped {
            // (Past the end is no character boundary.)
            return (self.s.len(), self.s.is_char_boundary(n).then(|| tail(n)));
        }
        let b = self.s.as_bytes();
        if memchr::memmem::find(b, b"\\u").is_none() {
            let (len, at) = short_escapes_after(b, n);
            return (len, at.filter(|&k| self.s.is_char_boundary(k)).map(tail));
        }
        // `i` in the kept form is `decoded` bytes into the characters; `at`, once found, where
        // the first `n` of them end.
        let (mut i, mut decoded, mut at) = (0, 0, None);
        // Up to `next`, the bytes from `i` on are the characters'.
        let mut plain = |i: usize, decoded: &mut usize, next: usize| {
            if at.is_none() && (*decoded..=*decoded + (next - i)).contains(&n) {
                let k = i + (n - *decoded);
                at = Some(self.s.is_char_boundary(k).then_some(k));
            }
            *decoded += next - i;
        };
        // Sixteen bytes a step: in kept text (checked JSON) every stop is an escape's backslash.
        let lone = walk_specials(
            b,
            0,
            || false,
            |next| {
                plain(i, &mut decoded, next);
                let Some((c, len)) = unescape_one(b, next) else {
                    return ControlFlow::Break(());
                };
                decoded += c.len_utf8();
                i = next + len;
                ControlFlow::Continue(i)
            },
        );
        if lone.is_some() {
            // A lone surrogate, which only serde_json decodes.
            let whole = self.as_str();
            return (whole.len(), whole.get(n..).map(Text::from));
        }
        plain(i, &mut decoded, b.len());
        (decoded, at.flatten().map(tail))
    }

    /// Whether it is kept with escapes (its length as read is then not its length decoded).
    pub fn is_escaped(&self) -> bool {
        self.escaped
    }

    /// Appends the text as a JSON string in `layout`: byte for byte what [`write_str`] makes of
    /// its characters, copied as it came when its escapes are already those.
    pub fn write(&self, out: &mut Vec<u8>, layout: Layout) {
        let as_is = match self.as_is.in_layout(layout) {
            Some(known) => known,
            None => self.escaped && written_as_is(&self.s, layout),
        };
        if as_is {
            out.reserve(self.s.len() + 2);
            out.push(b'"');
            out.extend_from_slice(self.s.as_bytes());
            out.push(b'"');
        } else if !self.escaped {
            write_str(out, &self.s, layout);
        } else {
            let mark = out.len();
            if !transcode(out, &self.s, layout) {
                out.truncate(mark);
                write_str(out, &self.as_str(), layout);
            }
        }
    }
}

/// [`Text::after_decoded`] for kept text whose escapes are all two bytes long (no `\\u`):
/// each decodes to one byte, so the bytes sixteen take decoded are sixteen less their escaped
/// letters ([`escaped_bytes`]), and only the sixteen where the first `n` decoded bytes end are
/// looked at one by one. How many bytes it takes decoded, and where in `b` the first `n` end
/// (`None` past the end; it may be inside a character, which the caller checks).
fn short_escapes_after(b: &[u8], n: usize) -> (usize, Option<usize>) {
    let (mut i, mut decoded, mut at, mut carry) = (0, 0, None, 0);
    while i < b.len() {
        let (m, len) = byte_masks_at(b, i);
        // An escape's backslash stands for its character, its letter for nothing.
        let letters = escaped_bytes(m.backslash, &mut carry) & ((1u32 << len) - 1);
        let here = len - letters.count_ones() as usize;
        if at.is_none() && n < decoded + here {
            // `n` is reached in these sixteen, after a byte that is no escape's letter (a
            // letter's place is inside its escape).
            let mut d = decoded;
            for k in 0..len {
                let letter = letters & (1 << k) != 0;
                if d == n && !letter {
                    at = Some(i + k);
                    break;
                }
                d += usize::from(!letter);
            }
        }
        decoded += here;
        i += len;
    }
    if at.is_none() && n == decoded {
        at = Some(b.len());
    }
    (decoded, at)
}

/// Whether [`write_str`] in `layout` writes the characters of `inner` (the inside of a valid
/// JSON string literal) as `inner` itself: every escape is the one it would write for that
/// character, and no character it would escape is there unescaped.
pub fn written_as_is(inner: &str, layout: Layout) -> bool {
    match read_inside(inner.as_bytes(), 0) {
        Some(Inside { closed: None, as_is, .. }) => as_is.in_layout(layout) == Some(true),
        _ => false,
    }
}

/// What [`read_inside`] found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Inside {
    /// The index after the closing quote; `None` where the bytes ended first.
    pub closed: Option<usize>,
    /// Which layouts write it as it is, and whether it has escapes.
    pub as_is: AsIs,
}

/// Reads the inside of a string literal from `b[i]`, up to its closing quote or the end of
/// `b`: checks it (`None` for a control character, a bad escape, or a surrogate escape,
/// which serde_json is left to decide), and notes whether it has escapes and which layouts
/// write it as it is: whether each escape is the one serde_json (and Python) and Go would
/// write for its character, and whether a character Go escapes stands unescaped. The
/// line scan reads every string with it, and that is how a kept [`Text`] knows its form.
pub(crate) fn read_inside(b: &[u8], i: usize) -> Option<Inside> {
    // Thirty-two bytes a step pays on long text (tool output); a string with a quote in its
    // first thirty-two bytes (most of them end there, or are JSON text full of escaped quotes,
    // as tool arguments are) is walked sixteen at a time.
    #[cfg(target_arch = "x86_64")]
    if !crate::json::bytes::quote_in_32(b, i) && crate::json::bytes::has_avx2() {
        // SAFETY: the CPU has AVX2.
        return unsafe { read_inside_avx2(b, i) };
    }
    // SAFETY: `Sixteen` needs only SSE2, in the x86-64 baseline (plain code elsewhere).
    unsafe { read_inside_with::<crate::json::bytes::Sixteen>(b, i) }
}

/// [`read_inside`] thirty-two bytes a step, compiled for AVX2.
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn read_inside_avx2(b: &[u8], i: usize) -> Option<Inside> {
    read_inside_with::<crate::json::bytes::ThirtyTwo>(b, i)
}

/// [`read_inside`], its walk `M::WIDTH` bytes a step.
///
/// # Safety
/// The CPU has what `M` uses.
#[inline(always)]
unsafe fn read_inside_with<M: crate::json::bytes::Stops>(b: &[u8], i: usize) -> Option<Inside> {
    let (mut escaped, mut serde, go) = (false, true, std::cell::Cell::new(true));
    let closed = crate::json::bytes::walk_specials_with::<M, _>(
        b,
        i,
        || go.get(),
        |at| {
            let next = match b[at] {
                b'"' => return ControlFlow::Break(Some(at + 1)),
                b'\\' => {
                    escaped = true;
                    let mut g = go.get();
                    let next = escape(b, at, &mut serde, &mut g);
                    go.set(g);
                    match next {
                        Some(next) => next,
                        None => return ControlFlow::Break(None),
                    }
                }
                b'<' | b'>' | b'&' => {
                    go.set(false);
                    at + 1
                }
                0xE2 => {
                    // U+2028 and U+2029 (E2 80 A8/A9); another character led by E2 is fine.
                    if matches!(b.get(at + 1..at + 3), Some([0x80, 0xA8 | 0xA9])) {
                        go.set(false);
                    }
                    at + 1
                }
                _ => return ControlFlow::Break(None),
            };
            ControlFlow::Continue(next)
        },
    );
    let closed = match closed {
        Some(Some(end)) => Some(end),
        Some(None) => return None,
        None => None,
    };
    Some(Inside { closed, as_is: AsIs::known(serde, go.get(), escaped) })
}

/// [`read_inside`] for a string whose form nobody asks about (one nested in a member): checked
/// as it does, but stopping only at quotes, backslashes and control characters, not at the
/// characters Go escapes. The index after the closing quote; `None` where the bytes end first
/// or where [`read_inside`] says `None`.
pub(crate) fn check_inside(b: &[u8], i: usize) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if crate::json::bytes::has_avx2() {
        // SAFETY: the CPU has AVX2.
        return unsafe { check_inside_avx2(b, i) };
    }
    // SAFETY: `Sixteen` needs only SSE2, in the x86-64 baseline (plain code elsewhere).
    unsafe { check_inside_with::<crate::json::bytes::Sixteen>(b, i) }
}

/// [`check_inside`] thirty-two bytes a step, compiled for AVX2.
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn check_inside_avx2(b: &[u8], i: usize) -> Option<usize> {
    check_inside_with::<crate::json::bytes::ThirtyTwo>(b, i)
}

/// [`check_inside`], its walk `M::WIDTH` bytes a step.
///
/// # Safety
/// The CPU has what `M` uses.
#[inline(always)]
unsafe fn check_inside_with<M: crate::json::bytes::Stops>(b: &[u8], i: usize) -> Option<usize> {
    let (mut serde, mut go) = (true, false);
    crate::json::bytes::walk_specials_with::<M, _>(
        b,
        i,
        || false,
        |at| match b[at] {
            b'"' => ControlFlow::Break(Some(at + 1)),
            b'\\' => match escape(b, at, &mut serde, &mut go) {
                Some(next) => ControlFlow::Continue(next),
                None => ControlFlow::Break(None),
            },
            _ => ControlFlow::Break(None),
        },
    )?
}

/// The escape at `b[i]` (a backslash): checked, and whether it is the one serde_json (and
/// Python) and Go would write for its character noted; the index after it.
#[inline(always)]
fn escape(b: &[u8], i: usize, serde: &mut bool, go: &mut bool) -> Option<usize> {
    match *b.get(i + 1)? {
        b'"' | b'\\' | b'n' | b'r' | b't' | b'b' | b'f' => Some(i + 2),
        b'/' => {
            *serde = false;
            *go = false;
            Some(i + 2)
        }
        b'u' => {
            let hex = b.get(i + 2..i + 6)?;
            let mut n = 0u32;
            for &d in hex {
                n = n * 16 + char::from(d).to_digit(16)?;
            }
            if (0xD800..=0xDFFF).contains(&n) {
                // Pairs are rare: serde_json checks them.
                return None;
            }
            // The writers use lower-case hex.
            let lower = !hex.iter().any(u8::is_ascii_uppercase);
            let (s, g) = match n {
                0x08..=0x0A | 0x0C | 0x0D => (false, false),
                0..=0x1F => (true, true),
                0x3C | 0x3E | 0x26 | 0x2028 | 0x2029 => (false, true),
                _ => (false, false),
            };
            *serde &= s && lower;
            *go &= g && lower;
            Some(i + 6)
        }
        _ => None,
    }
}

/// Where character `n` (counted from 0) of `b` starts, or `Err` with how many characters `b`
/// has when it has no more than `n`. With `escapes`, `b` is the inside of a JSON string
/// literal and an escape (a surrogate pair of them) is one character. Sixteen bytes at a time:
/// a byte starts a character unless it is a UTF-8 continuation byte.
pub fn char_start(b: &[u8], n: usize, escapes: bool) -> Result<usize, usize> {
    let (mut chars, mut i) = (0, 0);
    while i < b.len() {
        let (m, len) = byte_masks_at(b, i);
        let (backslashes, continuations) = (m.backslash, m.continuation);
        let within = (1u32 << len) - 1;
        let backslashes = if escapes { backslashes & within } else { 0 };
        // The bytes before the first escape of the sixteen (all of them, if none).
        let upto = if backslashes == 0 { len } else { backslashes.trailing_zeros() as usize };
        let mut starts = !continuations & ((1u32 << upto) - 1);
        let count = starts.count_ones() as usize;
        if chars + count > n {
            for _ in 0..n - chars {
                starts &= starts - 1;
            }
            return Ok(i + starts.trailing_zeros() as usize);
        }
        chars += count;
        if upto == len {
            i += len;
            continue;
        }
        // An escape at `i + upto`: one character. (A kept text's escapes are whole, checked
        // when it was read; a cut literal's last one is taken as it is.)
        if chars == n {
            return Ok(i + upto);
        }
        chars += 1;
        i += upto + escape_len(b, i + upto);
    }
    Err(chars)
}

/// The length of the escape at `b[at]` (a backslash): a surrogate pair's two as one.
fn escape_len(b: &[u8], at: usize) -> usize {
    if b.get(at + 1) != Some(&b'u') {
        return 2;
    }
    let high = matches!(b.get(at + 2..at + 4), Some([b'd' | b'D', b'8' | b'9' | b'a' | b'b' | b'A' | b'B']));
    if high && b.get(at + 6..at + 8) == Some(b"\\u") {
        12
    } else {
        6
    }
}

/// Appends the characters of `inner` (the inside of a valid JSON string literal) as a JSON
/// string in `layout`, escape by escape, as [`write_str`] writes them, without decoding them
/// into a string first. `false` (with part written) for a lone surrogate, which it leaves to
/// the decoder.
fn transcode(out: &mut Vec<u8>, inner: &str, layout: Layout) -> bool {
    let go = layout == Layout::Go;
    let b = inner.as_bytes();
    out.reserve(b.len() + 2);
    out.push(b'"');
    // Where the bytes not yet copied begin.
    let mut start = 0;
    let lone = walk_specials(
        b,
        0,
        || go,
        |at| {
            out.extend_from_slice(&b[start..at]);
            if b[at] != b'\\' {
                // A character Go escapes, as it is in the literal.
                let (next, from) = escape_byte(out, b, at);
                start = from;
                return ControlFlow::Continue(next);
            }
            let Some((c, len)) = unescape_one(b, at) else { return ControlFlow::Break(()) };
            // The character as the writer puts it: escaped if it is special, else its UTF-8.
            let mut buf = [0u8; 4];
            let one = c.encode_utf8(&mut buf).as_bytes();
            if next_special(one, 0, go) == 0 {
                let (_, from) = escape_byte(out, one, 0);
                out.extend_from_slice(&one[from..]);
            } else {
                out.extend_from_slice(one);
            }
            start = at + len;
            ControlFlow::Continue(start)
        },
    );
    if lone.is_some() {
        return false;
    }
    out.extend_from_slice(&b[start..]);
    out.push(b'"');
    true
}

/// Appends the inside of the JSON string literal that holds `plain`.
fn escape_into(out: &mut String, plain: &str) {
    let mut bytes = Vec::with_capacity(plain.len() + 2);
    write_str(&mut bytes, plain, Layout::Compact);
    // The writer's output is UTF-8, quotes around it.
    out.push_str(std::str::from_utf8(&bytes[1..bytes.len() - 1]).unwrap_or_default());
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text { s, escaped: false, as_is: AsIs::UNKNOWN }
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        Text { s: s.to_string(), escaped: false, as_is: AsIs::UNKNOWN }
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        if self.escaped == other.escaped && self.s == other.s {
            return true;
        }
        self.as_str() == other.as_str()
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.as_str(), f)
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let as_is = match self.as_is.in_layout(Layout::Compact) {
            Some(known) => known,
            None => self.escaped && written_as_is(&self.s, Layout::Compact),
        };
        if !as_is {
            return s.serialize_str(&self.as_str());
        }
        // The canonical writer takes the literal as it came; any other serializer the
        // characters.
        match crate::json::serialize::serialize_literal(s, &self.s) {
            Ok(done) => done,
            Err(s) => s.serialize_str(&self.as_str()),
        }
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        String::deserialize(d).map(Text::from)
    }
}

/// A short string of the model (an id, a name, a stop reason): held in place up to 24 bytes,
/// without an allocation.
pub type Name = compact_str::CompactString;

/// The first `max` characters (Unicode scalar values, as Python counts them) of `s`, cut on a
/// character boundary, and whether anything was cut.
pub fn cut_chars(s: &str, max: usize) -> (&str, bool) {
    if s.len() <= max {
        // No more bytes than the limit: no more characters either.
        return (s, false);
    }
    match crate::json::text::char_start(s.as_bytes(), max, false) {
        Ok(at) => (&s[..at], true),
        Err(_) => (s, false),
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
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    const LAYOUTS: [Layout; 4] = [Layout::Compact, Layout::Spaced, Layout::Sorted, Layout::Go];

    fn written(s: &str, layout: Layout) -> String {
        let mut out = Vec::new();
        write_str(&mut out, s, layout);
        String::from_utf8(out).unwrap()
    }

    /// `s` as a string literal of \u escapes only, upper-case hex, surrogate pairs for what is
    /// beyond the BMP: as an `ensure_ascii` writer puts it.
    pub(crate) fn ascii_literal(s: &str) -> String {
        let mut l = String::from("\"");
        for unit in s.encode_utf16() {
            l.push_str(&format!("\\u{unit:04X}"));
        }
        l + "\""
    }

    fn inner(literal: &str) -> &str {
        &literal[1..literal.len() - 1]
    }

    #[test]
    fn escapes_the_writer_would_not_make_are_rewritten() {
        for (inner, layout, as_is) in [
            ("a\\nb", Layout::Compact, true),
            ("\\u00e9", Layout::Compact, false),
            ("\\/", Layout::Compact, false),
            ("\\u000A", Layout::Compact, false),
            ("\\u001f", Layout::Compact, true),
            ("\\u001F", Layout::Compact, false),
            ("\\b\\f", Layout::Compact, true),
            ("\\b", Layout::Go, true),
            ("\\u0008", Layout::Go, false),
            ("\\u000c", Layout::Go, false),
            ("\\u0008", Layout::Compact, false),
            ("<", Layout::Go, false),
            ("\\u003c", Layout::Go, true),
            ("\\u003c", Layout::Spaced, false),
            ("\u{2028}", Layout::Go, false),
            ("\u{2028}", Layout::Sorted, true),
            ("\\ud83d\\ude42", Layout::Compact, false),
            ("€", Layout::Go, true),
        ] {
            assert_eq!(written_as_is(inner, layout), as_is, "{inner:?} {layout:?}");
            let mut out = Vec::new();
            Text::from_json_inner(inner).write(&mut out, layout);
            let chars: String = serde_json::from_str(&format!("\"{inner}\"")).unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), written(&chars, layout));
        }
    }

    proptest! {
        #[test]
        fn pieces_pushed_read_as_their_characters_joined(pieces in prop::collection::vec(("[a-z\"\\\n<é🙂]{0,6}", any::<bool>()), 0..6)) {
            let mut text = Text::default();
            let mut want = String::new();
            for (s, kept) in &pieces {
                let piece = if *kept { Text::from_json_inner(inner(&written(s, Layout::Compact))) } else { Text::from(s.clone()) };
                text.push(&piece);
                want.push_str(s);
            }
            prop_assert_eq!(text.as_str(), want.as_str());
            let mut out = Vec::new();
            text.write(&mut out, Layout::Go);
            prop_assert_eq!(String::from_utf8(out).unwrap(), written(&want, Layout::Go));
        }

        #[test]
        fn what_follows_n_decoded_bytes_is_what_follows_them_decoded(
            s in "[a-z\"\\/\n\u{1}<é🙂\u{2028}]{0,40}",
            form in 0..3usize,
            n in 0..80usize,
        ) {
            let literal = match form {
                0 => written(&s, Layout::Compact),
                1 => ascii_literal(&s),
                _ => String::new(),
            };
            // Form 2: kept as its characters (no escapes).
            let text = if form == 2 { Text::from(s.as_str()) } else { Text::from_json_inner(inner(&literal)) };
            let whole = text.as_str().into_owned();
            let n = n % (whole.len() + 2);
            let (len, rest) = text.after_decoded(n);
            prop_assert_eq!(len, whole.len());
            prop_assert_eq!(rest.as_ref().map(|r| r.as_str().into_owned()), whole.get(n..).map(str::to_string));
            if let Some(rest) = rest {
                let mut out = Vec::new();
                rest.write(&mut out, Layout::Go);
                prop_assert_eq!(String::from_utf8(out).unwrap(), written(&whole[n..], Layout::Go));
            }
        }

        #[test]
        fn what_follows_n_decoded_bytes_is_found_by_the_sixteen_when_escapes_are_short(
            s in "[a-z\"\\\\/\n\t<é🙂\u{2028}]{0,60}",
            n in 0..200usize,
        ) {
            // serde_json writes these with two-byte escapes only: the counted path.
            let text = Text::from_json_inner(inner(&written(&s, Layout::Compact)));
            let n = n % (s.len() + 2);
            let (len, rest) = text.after_decoded(n);
            prop_assert_eq!(len, s.len());
            prop_assert_eq!(rest.map(|r| r.as_str().into_owned()), s.get(n..).map(str::to_string));
        }

        #[test]
        fn serialized_it_is_its_characters(s in "[a-z\"\\/\n\u{1}\u{8}<é🙂\u{2028}]{0,16}", from in 0..4usize) {
            let text = Text::from_json_inner(inner(&written(&s, LAYOUTS[from])));
            let mut ours = Vec::new();
            crate::json::serialize::write_serialize(&mut ours, &text).unwrap();
            prop_assert_eq!(String::from_utf8(ours).unwrap(), serde_json::to_string(&s).unwrap());
            prop_assert_eq!(serde_json::to_value(&text).unwrap(), serde_json::Value::String(s));
        }

        #[test]
        /// The walk thirty-two bytes a step (AVX2, where the CPU has it) finds what the walk
        /// sixteen bytes a step finds, wherever the string starts and ends against the steps,
        /// and cut anywhere (no closing quote).
        #[test]
        fn a_string_read_thirty_two_bytes_a_step_reads_as_sixteen_a_step(
            s in "[a-z\"\\\\/\n\t\u{1}<>&é€\u{2028}]{0,90}",
            lead in 0..40usize,
            cut in any::<prop::sample::Index>(),
        ) {
            let line = format!("{}\"{}\"{}", "a".repeat(lead), s, "b".repeat(lead % 7));
            let bytes = line.as_bytes();
            let end = lead + 1 + cut.index(bytes.len() - lead);
            let b = &bytes[..end.max(lead + 1)];
            // SAFETY: `Sixteen` needs SSE2 only.
            let sixteen = unsafe { read_inside_with::<crate::json::bytes::Sixteen>(b, lead + 1) };
            #[cfg(target_arch = "x86_64")]
            if crate::json::bytes::has_avx2() {
                // SAFETY: the CPU has AVX2.
                let thirty_two = unsafe { read_inside_avx2(b, lead + 1) };
                prop_assert_eq!(&thirty_two, &sixteen);
            }
            prop_assert_eq!(read_inside(b, lead + 1), sixteen);
            // SAFETY: as above.
            let checked = unsafe { check_inside_with::<crate::json::bytes::Sixteen>(b, lead + 1) };
            #[cfg(target_arch = "x86_64")]
            if crate::json::bytes::has_avx2() {
                // SAFETY: the CPU has AVX2.
                prop_assert_eq!(unsafe { check_inside_avx2(b, lead + 1) }, checked);
            }
            prop_assert_eq!(check_inside(b, lead + 1), checked);
        }

        fn what_the_scan_knows_is_what_the_check_finds(s in "[a-z\"\\/\n\r\t\u{1}\u{8}\u{c}\u{7f}<>&é€\u{2028}\u{2029}]{0,60}", ascii in any::<bool>(), from in 0..4usize) {
            let literal = if ascii {
                let mut l = String::from("\"");
                for unit in s.encode_utf16() {
                    l.push_str(&if unit % 2 == 0 { format!("\\u{unit:04x}") } else { format!("\\u{unit:04X}") });
                }
                l + "\""
            } else {
                written(&s, LAYOUTS[from])
            };
            // A member after it, so that a short string too has sixteen bytes after its start
            // (the scan reads a string sixteen bytes at a time where the line has them).
            let line = format!("{{\"k\":{literal},\"after\":\"0123456789abcdef\"}}");
            let members = crate::json::scan::object(&line).unwrap();
            let crate::json::member::Member::Raw(raw, as_is) = members[0].1 else { panic!("scanned members are raw") };
            prop_assert_eq!(raw, literal.as_str());
            let text = Text::from_json_inner_known(inner(&literal), as_is);
            prop_assert_eq!(text.as_str(), s.as_str());
            for layout in LAYOUTS {
                prop_assert_eq!(as_is.in_layout(layout), Some(written_as_is(inner(&literal), layout)), "{} {:?}", literal, layout);
                // And what it means: the writer makes exactly this of the characters.
                prop_assert_eq!(as_is.in_layout(layout), Some(written(&s, layout) == literal), "{} {:?}", literal, layout);
            }
        }

        #[test]
        fn a_kept_text_is_cut_as_its_characters_are(s in "[a-z\"\\\\/\n\u{1}é€🙂\u{2028}]{0,60}", ascii in any::<bool>(), from in 0..4usize, max in 0usize..65) {
            let literal = if ascii { ascii_literal(&s) } else { written(&s, LAYOUTS[from]) };
            let (head, cut) = crate::json::text::cut_chars(&s, max);
            for text in [Text::from_json_inner(inner(&literal)), Text::from(s.clone())] {
                let got = text.cut(max);
                prop_assert_eq!(got.is_some(), cut);
                if let Some(got) = got {
                    prop_assert_eq!(got.as_str(), head);
                    let mut out = Vec::new();
                    got.write(&mut out, LAYOUTS[from]);
                    prop_assert_eq!(String::from_utf8(out).unwrap(), written(head, LAYOUTS[from]));
                }
            }
        }

        #[test]
        fn what_the_writer_writes_is_written_as_is(s in "[a-z\"\\\\/\n\r\t\u{1}\u{8}\u{c}\u{1f}<>&é€🙂\u{2028}\u{2029}]{0,24}") {
            for layout in LAYOUTS {
                let literal = written(&s, layout);
                prop_assert!(written_as_is(inner(&literal), layout), "{:?} {:?}", literal, layout);
            }
        }

        #[test]
        fn a_kept_literal_writes_as_its_characters_would(s in "[a-z\"\\\\/\n\r\t\u{1}\u{8}\u{c}<>&é🙂\u{2028}]{0,40}", ascii in any::<bool>(), from in 0..4usize) {
            // Literals as other writers make them: \u escapes for everything (upper case), or
            // another layout's escapes.
            let literal = if ascii { ascii_literal(&s) } else { written(&s, LAYOUTS[from]) };
            let text = Text::from_json_inner(inner(&literal));
            prop_assert_eq!(text.as_str(), s.as_str());
            prop_assert_eq!(&text, &Text::from(s.clone()));
            for layout in LAYOUTS {
                let mut out = Vec::new();
                text.write(&mut out, layout);
                prop_assert_eq!(String::from_utf8(out).unwrap(), written(&s, layout));
            }
        }
    }
}

//! A string's escapes, both ways: writing a string as each layout escapes it, and decoding the
//! escapes of a string literal's inside.

use std::ops::ControlFlow;

use crate::json::bytes::{padded16, special_mask, walk_specials};
use crate::json::layout::Layout;

/// Appends `s` as a JSON string: raw UTF-8 with the escapes JSON requires, as serde_json and
/// Python (`ensure_ascii=False`) write them; for Go, as `encoding/json` writes them.
pub fn write_str(out: &mut Vec<u8>, s: &str, layout: Layout) {
    let go = layout == Layout::Go;
    let bytes = s.as_bytes();
    if bytes.len() < 16 {
        // Short (a key, an id, a word) and most often with nothing to escape: written quotes
        // and all in moves of a fixed size, the bytes past its end then cut off again (a copy
        // of any length is a call to memcpy, which costs more than the rest of this).
        let chunk = padded16(bytes);
        if special_mask(&chunk, 0, go) & ((1u32 << bytes.len()) - 1) == 0 {
            let mut quoted = [b'"'; 18];
            quoted[1..17].copy_from_slice(&chunk);
            quoted[bytes.len() + 1] = b'"';
            let end = out.len() + bytes.len() + 2;
            out.extend_from_slice(&quoted);
            out.truncate(end);
            return;
        }
    }
    if (16..=32).contains(&bytes.len()) {
        // An id or a name: sixteen to thirty-two bytes, nothing to escape as a rule. Looked at
        // as two overlapping chunks of sixteen and, if plain, copied in two fixed-size moves
        // (the second over the first's tail).
        let tail = bytes.len() - 16;
        if special_mask(bytes, 0, go) | special_mask(bytes, tail, go) == 0 {
            let at = out.len() + 1;
            out.reserve(bytes.len() + 2);
            out.push(b'"');
            out.extend_from_slice(&bytes[..16]);
            out.truncate(at + tail);
            out.extend_from_slice(&bytes[tail..tail + 16]);
            out.push(b'"');
            return;
        }
    }
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    // Where the bytes not yet copied begin.
    let mut start = 0;
    walk_specials(
        bytes,
        0,
        || go,
        |at| {
            out.extend_from_slice(&bytes[start..at]);
            let (next, from) = escape_byte(out, bytes, at);
            start = from;
            ControlFlow::<(), usize>::Continue(next)
        },
    );
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Writes the escape for the special byte at `bytes[at]` (one [`next_special`] stops at);
/// where to look next, and where the bytes not yet copied begin.
#[inline]
pub(crate) fn escape_byte(out: &mut Vec<u8>, bytes: &[u8], at: usize) -> (usize, usize) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    // The letter of each two-character escape; 0 for bytes that have none.
    const SHORT: [u8; 256] = {
        let mut t = [0; 256];
        t[b'"' as usize] = b'"';
        t[b'\\' as usize] = b'\\';
        t[b'\n' as usize] = b'n';
        t[b'\r' as usize] = b'r';
        t[b'\t' as usize] = b't';
        t[0x08] = b'b';
        t[0x0C] = b'f';
        t
    };
    let b = bytes[at];
    let letter = SHORT[usize::from(b)];
    if letter != 0 {
        // The common case (a newline, a quote): two bytes of constant length.
        out.extend_from_slice(&[b'\\', letter]);
        return (at + 1, at + 1);
    }
    let long: &[u8] = match b {
        b'<' => b"\\u003c",
        b'>' => b"\\u003e",
        b'&' => b"\\u0026",
        0xE2 => match bytes.get(at + 1..at + 3) {
            Some([0x80, 0xA8]) => b"\\u2028",
            Some([0x80, 0xA9]) => b"\\u2029",
            // Another character starting with E2: written as it is, with what follows.
            _ => return (at + 1, at),
        },
        _ => &[b'\\', b'u', b'0', b'0', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]],
    };
    out.extend_from_slice(long);
    let next = if b == 0xE2 { at + 3 } else { at + 1 };
    (next, next)
}

/// Decodes the escapes of a string literal's inside, already checked as JSON: the runs
/// between backslashes are copied whole. `None` for what it does not handle.
pub(crate) fn unescape(inner: &str) -> Option<String> {
    let bytes = inner.as_bytes();
    if bytes.len() <= SHORT_UNESCAPE {
        return unescape_short(bytes);
    }
    let mut out = String::with_capacity(inner.len());
    let mut i = 0;
    for at in memchr::memchr_iter(b'\\', bytes) {
        if at < i {
            // The second backslash of an escaped one.
            continue;
        }
        // A backslash is ASCII, so both ends of the run are character boundaries.
        out.push_str(&inner[i..at]);
        let (c, len) = unescape_one(bytes, at)?;
        out.push(c);
        i = at + len;
    }
    out.push_str(&inner[i..]);
    Some(out)
}

/// Strings up to this long are unescaped by [`unescape_short`]: a call's arguments written as
/// JSON text inside a string have an escaped quote every few bytes, where finding each
/// backslash with memchr and copying each run between them with a call costs more than the
/// bytes themselves.
const SHORT_UNESCAPE: usize = 256;

/// [`unescape`] for a short string: the next backslash found sixteen bytes at a time, and the
/// run before it copied as sixteen fixed bytes (the buffer cut back after), not with a call.
fn unescape_short(bytes: &[u8]) -> Option<String> {
    let mut out = Vec::with_capacity(bytes.len() + 16);
    let mut i = 0;
    while i < bytes.len() {
        let next = if i + 16 <= bytes.len() {
            let backslashes = crate::json::bytes::byte_masks(bytes, i).backslash;
            let len = out.len();
            out.extend_from_slice(&bytes[i..i + 16]);
            if backslashes == 0 {
                i += 16;
                continue;
            }
            let run = backslashes.trailing_zeros() as usize;
            out.truncate(len + run);
            i + run
        } else {
            let run = bytes[i..].iter().position(|&b| b == b'\\').unwrap_or(bytes.len() - i);
            out.extend_from_slice(&bytes[i..i + run]);
            i + run
        };
        if next == bytes.len() {
            break;
        }
        let (c, len) = match bytes.get(next + 1) {
            Some(b'"') => ('"', 2),
            Some(b'\\') => ('\\', 2),
            Some(b'n') => ('\n', 2),
            _ => unescape_one(bytes, next)?,
        };
        let mut utf8 = [0u8; 4];
        out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
        i = next + len;
    }
    // The runs were whole UTF-8 (a backslash is ASCII), and so are the characters.
    String::from_utf8(out).ok()
}

/// The character of the escape at `b[at]` (a backslash) and the escape's length (a surrogate
/// pair's two escapes as one); `None` for a lone surrogate or a bad escape.
pub(crate) fn unescape_one(b: &[u8], at: usize) -> Option<(char, usize)> {
    let hex = |at: usize| hex4(b.get(at..at + 4)?);
    Some(match b.get(at + 1)? {
        b'"' => ('"', 2),
        b'\\' => ('\\', 2),
        b'/' => ('/', 2),
        b'b' => ('\u{8}', 2),
        b'f' => ('\u{c}', 2),
        b'n' => ('\n', 2),
        b'r' => ('\r', 2),
        b't' => ('\t', 2),
        b'u' => match hex(at + 2)? {
            hi @ 0xD800..=0xDBFF => {
                let lo = match (b.get(at + 6..at + 8), hex(at + 8)) {
                    (Some(b"\\u"), Some(lo @ 0xDC00..=0xDFFF)) => lo,
                    _ => return None,
                };
                (char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))?, 12)
            }
            n => (char::from_u32(n)?, 6),
        },
        _ => return None,
    })
}

fn hex4(digits: &[u8]) -> Option<u32> {
    digits.iter().try_fold(0, |n, &d| Some(n * 16 + char::from(d).to_digit(16)?))
}

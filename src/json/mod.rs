//! JSON helpers shared by the adapters: reading members that a dialect may write in more than
//! one way (counts as strings or integers, booleans as strings), and writing lines in the
//! layout a given agent uses on the wire.

pub mod hash;
pub mod object;
pub(crate) mod scan;
pub mod text;

pub use object::{Member, Object};
pub use text::Text;

/// A short string of the model (an id, a name, a stop reason): held in place up to 24 bytes,
/// without an allocation.
pub type Name = compact_str::CompactString;

use std::ops::ControlFlow;

use serde_json::Value;

use crate::json::text::AsIs;

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
    /// U+2028 and U+2029 escaped as `\u003c`...; backspace and form feed as `\b` and `\f`, as
    /// Go writes them since 1.22 (wuu's go.mod asks for 1.26; before 1.22 they were `\u0008`
    /// and `\u000c`). Held to Go's own output by `tests/oracle/go-json-encoder.jsonl`.
    Go,
}

/// The index of the first byte at or after `i` that a JSON string cannot hold as it is: a
/// control character, `"` or `\`, and for Go also `<`, `>`, `&` and the lead byte of U+2028 and
/// U+2029. This runs over every byte written, and most text has none of them: sixteen bytes
/// at a time with SSE2 (part of every x86-64), else eight at a time in a machine word.
pub(crate) fn next_special(bytes: &[u8], mut i: usize, go: bool) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is in the x86-64 baseline, so these instructions always exist; every
        // load reads 16 bytes at `i`, and `i + 16 <= bytes.len()` holds for each.
        unsafe {
            let at = |b: u8| _mm_set1_epi8(b as i8);
            let (c1f, quote, backslash) = (at(0x1F), at(b'"'), at(b'\\'));
            // `<` and `>` differ in bit 1 only, `"` and `&` in bit 2 only: one compare each.
            let (two, angle, four, amp, e2) = (at(0x02), at(b'>'), at(0x04), at(b'&'), at(0xE2));
            while i + 16 <= bytes.len() {
                let x = _mm_loadu_si128(bytes.as_ptr().add(i).cast());
                // Unsigned x <= 0x1F: max(x, 0x1F) == 0x1F.
                let mut m = _mm_cmpeq_epi8(_mm_max_epu8(x, c1f), c1f);
                m = _mm_or_si128(m, _mm_cmpeq_epi8(x, backslash));
                if go {
                    m = _mm_or_si128(m, _mm_cmpeq_epi8(_mm_or_si128(x, two), angle));
                    m = _mm_or_si128(m, _mm_cmpeq_epi8(_mm_or_si128(x, four), amp));
                    m = _mm_or_si128(m, _mm_cmpeq_epi8(x, e2));
                } else {
                    m = _mm_or_si128(m, _mm_cmpeq_epi8(x, quote));
                }
                let mask = _mm_movemask_epi8(m);
                if mask != 0 {
                    return i + mask.trailing_zeros() as usize;
                }
                i += 16;
            }
        }
    }
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let zero = |v: u64| v.wrapping_sub(LO) & !v & HI;
    while let Some(chunk) = bytes.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        // Bytes below 0x20, then bytes equal to each special. The lowest flag is always a real
        // match (borrows only flag bytes above one), which is the one wanted.
        let mut m = x.wrapping_sub(LO * 0x20) & !x & HI;
        m |= zero(x ^ (LO * u64::from(b'"'))) | zero(x ^ (LO * u64::from(b'\\')));
        if go {
            for b in [b'<', b'>', b'&', 0xE2] {
                m |= zero(x ^ (LO * u64::from(b)));
            }
        }
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x20 || b == b'"' || b == b'\\' || (go && matches!(b, b'<' | b'>' | b'&' | 0xE2)) {
            return i;
        }
        i += 1;
    }
    i
}

/// Which of the sixteen bytes at `i` are ones [`next_special`] stops at, as bits (bit k for
/// byte `i + k`); `i + 16 <= bytes.len()`. For walking text dense with them (escaped tool
/// output has one every few bytes) without loading each stretch again after every stop.
#[inline]
pub(crate) fn special_mask(bytes: &[u8], i: usize, go: bool) -> u32 {
    let chunk = &bytes[i..i + 16];
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is in the x86-64 baseline; the load reads the sixteen bytes of `chunk`.
        unsafe {
            let at = |b: u8| _mm_set1_epi8(b as i8);
            let x = _mm_loadu_si128(chunk.as_ptr().cast());
            let c1f = at(0x1F);
            let mut m = _mm_cmpeq_epi8(_mm_max_epu8(x, c1f), c1f);
            m = _mm_or_si128(m, _mm_cmpeq_epi8(x, at(b'\\')));
            if go {
                m = _mm_or_si128(m, _mm_cmpeq_epi8(_mm_or_si128(x, at(0x02)), at(b'>')));
                m = _mm_or_si128(m, _mm_cmpeq_epi8(_mm_or_si128(x, at(0x04)), at(b'&')));
                m = _mm_or_si128(m, _mm_cmpeq_epi8(x, at(0xE2)));
            } else {
                m = _mm_or_si128(m, _mm_cmpeq_epi8(x, at(b'"')));
            }
            _mm_movemask_epi8(m) as u32
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut m = 0;
        for (k, &b) in chunk.iter().enumerate() {
            if b < 0x20 || b == b'"' || b == b'\\' || (go && matches!(b, b'<' | b'>' | b'&' | 0xE2)) {
                m |= 1 << k;
            }
        }
        m
    }
}

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

/// The first `N` bytes of `rest` (N at least 8), padded with `fill` past its end, copied in a
/// few fixed-size moves (a copy of any length is a call to memcpy, which costs more than the
/// rest of a short string's writing).
#[inline]
pub(crate) fn padded<const N: usize>(rest: &[u8], fill: u8) -> [u8; N] {
    let mut p = [fill; N];
    let n = rest.len().min(N);
    if n >= 8 {
        p[..8].copy_from_slice(&rest[..8]);
        p[n - 8..n].copy_from_slice(&rest[n - 8..n]);
    } else if n >= 4 {
        p[..4].copy_from_slice(&rest[..4]);
        p[n - 4..n].copy_from_slice(&rest[n - 4..n]);
    } else if n > 0 {
        // One to three bytes: the first, the middle and the last cover them.
        p[0] = rest[0];
        p[n / 2] = rest[n / 2];
        p[n - 1] = rest[n - 1];
    }
    p
}

/// `rest` (fewer than sixteen bytes) padded to sixteen with a plain character, `a`.
#[inline]
pub(crate) fn padded16(rest: &[u8]) -> [u8; 16] {
    padded(rest, b'a')
}

/// Two masks over the sixteen bytes of `bytes` at `i`, a bit per byte.
#[derive(Clone, Copy)]
pub(crate) struct ByteMasks {
    pub backslash: u32,
    /// The continuation bytes of UTF-8 (`10xxxxxx`, which start no character).
    pub continuation: u32,
}

/// [`ByteMasks`] of the sixteen bytes of `bytes` at `i`. (Always inline, so that a caller's
/// unused mask is not computed.)
#[inline(always)]
pub(crate) fn byte_masks(bytes: &[u8], i: usize) -> ByteMasks {
    let chunk = &bytes[i..i + 16];
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is in the x86-64 baseline; the load reads the sixteen bytes of `chunk`.
        unsafe {
            let x = _mm_loadu_si128(chunk.as_ptr().cast());
            let backslash = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'\\' as i8));
            // 0x80..=0xBF are the signed bytes below -64.
            let continuation = _mm_cmplt_epi8(x, _mm_set1_epi8(-64));
            ByteMasks {
                backslash: _mm_movemask_epi8(backslash) as u32,
                continuation: _mm_movemask_epi8(continuation) as u32,
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut m = ByteMasks { backslash: 0, continuation: 0 };
        for (k, &b) in chunk.iter().enumerate() {
            m.backslash |= u32::from(b == b'\\') << k;
            m.continuation |= u32::from(b & 0xC0 == 0x80) << k;
        }
        m
    }
}

/// `masks` of the sixteen bytes of `bytes` at `i`, and how many of them are the text's: fewer
/// than sixteen left are read through a copy padded with a plain character (whose bits the
/// caller cuts off).
#[inline(always)]
fn masks_at<M>(bytes: &[u8], i: usize, masks: impl Fn(&[u8], usize) -> M) -> (M, usize) {
    match bytes.get(i..i + 16) {
        Some(_) => (masks(bytes, i), 16),
        None => {
            let rest = &bytes[i..];
            (masks(&padded16(rest), 0), rest.len())
        }
    }
}

/// [`byte_masks`] through [`masks_at`].
#[inline(always)]
pub(crate) fn byte_masks_at(bytes: &[u8], i: usize) -> (ByteMasks, usize) {
    masks_at(bytes, i, byte_masks)
}

/// Where the object or array whose opening bracket is `bytes[i - 1]` ends (the index after
/// its closing bracket), in text already checked as JSON; `None` if the bytes end first. Sixteen
/// bytes a step, whatever they hold: the quotes that are no escape's ([`escaped_bytes`]) tell
/// which bytes are inside strings (every byte from an opening quote to its closing one flips
/// the state once: a prefix XOR of their bits), and only the brackets outside them are
/// counted, one by one.
pub(crate) fn nested_end(bytes: &[u8], mut i: usize) -> Option<usize> {
    let (mut depth, mut carry, mut in_string) = (1u32, 0, 0u32);
    while i < bytes.len() {
        let ([quote, backslash, open, close], len) = masks_at(bytes, i, structure_masks);
        let quotes = quote & !escaped_bytes(backslash, &mut carry);
        let mut inside = quotes;
        for shift in [1, 2, 4, 8] {
            inside ^= inside << shift;
        }
        inside = (inside ^ in_string) & 0xFFFF;
        in_string = if inside & 0x8000 != 0 { 0xFFFF } else { 0 };
        let ours = (1u32 << len) - 1;
        let (open, close) = (open & !inside & ours, close & !inside & ours);
        let mut brackets = open | close;
        while brackets != 0 {
            let k = brackets.trailing_zeros();
            if open & (1 << k) != 0 {
                depth += 1;
            } else {
                depth -= 1;
                if depth == 0 {
                    return Some(i + k as usize + 1);
                }
            }
            brackets &= brackets - 1;
        }
        i += len;
    }
    None
}

/// The quotes, backslashes, opening brackets (`{`, `[`) and closing ones among the sixteen
/// bytes of `bytes` at `i`.
#[inline(always)]
fn structure_masks(bytes: &[u8], i: usize) -> [u32; 4] {
    let chunk = &bytes[i..i + 16];
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is in the x86-64 baseline; the load reads the sixteen bytes of `chunk`.
        unsafe {
            let x = _mm_loadu_si128(chunk.as_ptr().cast());
            let at = |b: u8| _mm_set1_epi8(b as i8);
            // `{` and `[` differ in bit 5 only, as `}` and `]` do: one compare each.
            let folded = _mm_or_si128(x, at(0x20));
            let masks = [
                _mm_cmpeq_epi8(x, at(b'"')),
                _mm_cmpeq_epi8(x, at(b'\\')),
                _mm_cmpeq_epi8(folded, at(b'{')),
                _mm_cmpeq_epi8(folded, at(b'}')),
            ];
            masks.map(|m| _mm_movemask_epi8(m) as u32)
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut m = [0u32; 4];
        for (k, &b) in chunk.iter().enumerate() {
            m[0] |= u32::from(b == b'"') << k;
            m[1] |= u32::from(b == b'\\') << k;
            m[2] |= u32::from(b == b'{' || b == b'[') << k;
            m[3] |= u32::from(b == b'}' || b == b']') << k;
        }
        m
    }
}

/// The bytes that an escape's backslash escapes among sixteen whose backslashes are
/// `backslash` (bit k for byte k), `carry` saying whether the byte before them was an escaping
/// backslash, and set for the next sixteen: in a run of backslashes every other one escapes the
/// byte after it. simdjson's branch-free `find_escaped`, on sixteen bits: the runs that start on
/// an odd bit are told from those that start on an even one by an addition's carries.
#[inline]
pub(crate) fn escaped_bytes(backslash: u32, carry: &mut u32) -> u32 {
    const EVEN: u32 = 0x5555;
    let backslash = backslash & !*carry;
    let follows_escape = (backslash << 1) | *carry;
    let odd_starts = backslash & !EVEN & !follows_escape;
    let sums = odd_starts + backslash;
    *carry = (sums >> 16) & 1;
    (EVEN ^ (sums << 1)) & follows_escape & 0xFFFF
}

/// Walks `bytes` from `i` to each byte [`next_special`] stops at, sixteen bytes at a time,
/// each stop in them taken from one [`special_mask`] (escaped text has one every few bytes;
/// the last few bytes are looked at through a copy). `stop(at)` handles the byte at `at` and
/// says where to look next (past `at`), or ends the walk with a value; `go()`, asked for each
/// stretch, whether Go's specials are stops. `None` when the bytes run out first.
#[inline(always)]
pub(crate) fn walk_specials<B>(
    bytes: &[u8],
    i: usize,
    go: impl Fn() -> bool,
    stop: impl FnMut(usize) -> ControlFlow<B, usize>,
) -> Option<B> {
    // SAFETY: `Sixteen` needs only SSE2, which is in the x86-64 baseline (and plain code
    // elsewhere).
    unsafe { walk_specials_with::<Sixteen, B>(bytes, i, go, stop) }
}

/// How a walk over a string's bytes ([`walk_specials_with`]) finds its stops: the mask of
/// [`special_mask`]'s stops in `WIDTH` bytes at a time.
pub(crate) trait Stops {
    const WIDTH: usize;
    /// The stops in `bytes[i..i + WIDTH]`, a bit per byte.
    ///
    /// # Safety
    /// The CPU has the instructions the implementation uses.
    unsafe fn mask(bytes: &[u8], i: usize, go: bool) -> u32;
}

/// Sixteen bytes a step, with SSE2 ([`special_mask`]).
pub(crate) struct Sixteen;

impl Stops for Sixteen {
    const WIDTH: usize = 16;
    #[inline(always)]
    unsafe fn mask(bytes: &[u8], i: usize, go: bool) -> u32 {
        special_mask(bytes, i, go)
    }
}

/// Thirty-two bytes a step, with AVX2: half the steps over the long strings of tool output.
/// Only for a walk inlined into a function compiled for AVX2, called where the CPU has it.
#[cfg(target_arch = "x86_64")]
pub(crate) struct ThirtyTwo;

#[cfg(target_arch = "x86_64")]
impl Stops for ThirtyTwo {
    const WIDTH: usize = 32;
    #[inline(always)]
    unsafe fn mask(bytes: &[u8], i: usize, go: bool) -> u32 {
        special_mask32(bytes, i, go)
    }
}

/// [`special_mask`] of the thirty-two bytes of `bytes` at `i`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn special_mask32(bytes: &[u8], i: usize, go: bool) -> u32 {
    use std::arch::x86_64::*;
    let chunk = &bytes[i..i + 32];
    let x = _mm256_loadu_si256(chunk.as_ptr().cast());
    let c1f = _mm256_set1_epi8(0x1F);
    let mut m = _mm256_cmpeq_epi8(_mm256_max_epu8(x, c1f), c1f);
    m = _mm256_or_si256(m, _mm256_cmpeq_epi8(x, _mm256_set1_epi8(b'\\' as i8)));
    if go {
        // As special_mask: `<`/`>` differ in bit 1 only, `"`/`&` in bit 2 only.
        m = _mm256_or_si256(
            m,
            _mm256_cmpeq_epi8(_mm256_or_si256(x, _mm256_set1_epi8(0x02)), _mm256_set1_epi8(b'>' as i8)),
        );
        m = _mm256_or_si256(
            m,
            _mm256_cmpeq_epi8(_mm256_or_si256(x, _mm256_set1_epi8(0x04)), _mm256_set1_epi8(b'&' as i8)),
        );
        m = _mm256_or_si256(m, _mm256_cmpeq_epi8(x, _mm256_set1_epi8(0xE2_u8 as i8)));
    } else {
        m = _mm256_or_si256(m, _mm256_cmpeq_epi8(x, _mm256_set1_epi8(b'"' as i8)));
    }
    _mm256_movemask_epi8(m) as u32
}

/// Whether `bytes[i..i + 32]` holds a quote, or fewer than thirty-two bytes are left.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn quote_in_32(bytes: &[u8], i: usize) -> bool {
    use std::arch::x86_64::*;
    let Some(chunk) = bytes.get(i..i + 32) else { return true };
    // SAFETY: SSE2 is in the x86-64 baseline; the loads read the thirty-two bytes of `chunk`.
    unsafe {
        let quote = _mm_set1_epi8(b'"' as i8);
        let a = _mm_cmpeq_epi8(_mm_loadu_si128(chunk.as_ptr().cast()), quote);
        let b = _mm_cmpeq_epi8(_mm_loadu_si128(chunk.as_ptr().add(16).cast()), quote);
        _mm_movemask_epi8(_mm_or_si128(a, b)) != 0
    }
}

/// Whether this CPU walks strings [`ThirtyTwo`] bytes a step (std remembers the answer).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn has_avx2() -> bool {
    std::is_x86_feature_detected!("avx2")
}

/// [`walk_specials`], `M::WIDTH` bytes a step while that many are left, then sixteen.
///
/// # Safety
/// The CPU has what `M` uses.
#[inline(always)]
pub(crate) unsafe fn walk_specials_with<M: Stops, B>(
    bytes: &[u8],
    mut i: usize,
    go: impl Fn() -> bool,
    mut stop: impl FnMut(usize) -> ControlFlow<B, usize>,
) -> Option<B> {
    'chunks: while i < bytes.len() {
        let (mut m, width) = if i + M::WIDTH <= bytes.len() {
            (M::mask(bytes, i, go()), M::WIDTH)
        } else if i + 16 <= bytes.len() {
            (special_mask(bytes, i, go()), 16)
        } else {
            // Fewer than sixteen left: a copy padded with a byte that is never a stop.
            let rest = &bytes[i..];
            (special_mask(&padded16(rest), 0, go()) & ((1u32 << rest.len()) - 1), 16)
        };
        while m != 0 {
            let next = match stop(i + m.trailing_zeros() as usize) {
                ControlFlow::Break(b) => return Some(b),
                ControlFlow::Continue(next) => next,
            };
            if next >= i + width {
                i = next;
                continue 'chunks;
            }
            // Past the stop (and what it took after it): the bits below `next` are done.
            m &= !0u32 << (next - i);
        }
        i += width;
    }
    None
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

/// Whether `layout` writes the value whose JSON text (checked) is `r` as that text: a string
/// its escapes suit, digits, or a word. A number with a sign, fraction or exponent, and
/// anything nested, go through a value.
pub(crate) fn raw_in_layout(r: &str, as_is: AsIs, layout: Layout) -> bool {
    match r.as_bytes().first() {
        Some(b'"') => as_is.in_layout(layout) == Some(true),
        Some(b'0'..=b'9') => crate::json::object::plain_u64(r),
        _ => matches!(r, "true" | "false" | "null"),
    }
}

/// Appends the digits of `n`.
pub(crate) fn write_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// Appends a number as the layout's writer writes it. Integers are the same everywhere; a
/// float is written with the fewest digits that read back as it (every writer here agrees on
/// those), laid out as its writer lays it out:
/// - compact and sorted: serde_json's (`1e-7`, `3.5e-5`, `1e20`, `1.0`);
/// - spaced, Python's `repr`: plain from 1e-4 up to 1e16, else `1e-07`, `1.5e+16` (an
///   exponent of two digits at least, with its sign), and always a fraction (`1.0`);
/// - Go's `encoding/json`: plain from 1e-6 up to 1e21 with no fraction where it has none
///   (`1`, `0.000035`), else `1e-7`, `1e+21`.
pub fn write_number(out: &mut Vec<u8>, n: &serde_json::Number, layout: Layout) {
    let float = match (n.is_f64(), n.as_f64()) {
        (true, Some(f)) if f.is_finite() && matches!(layout, Layout::Spaced | Layout::Go) => f,
        // serde_json's own formatting (itoa, ryu), which cannot fail on a Vec.
        _ => {
            let _ = serde_json::to_writer(&mut *out, n);
            return;
        }
    };
    // The fewest digits that read back as the float, and where the point goes: Rust's `{:e}`
    // gives how many (`3.5e-5`: digits 35, the first digit's power of ten -5). Of the numbers
    // with that many digits the one nearest the float is taken, ties to even, as Python's
    // repr and Go's strconv take it (`{:e}` may take the other one of a tie: 899.25 as 899.3).
    let shortest = format!("{:e}", float.abs());
    let places = shortest.split_once('e').map_or(0, |(m, _)| m.len().saturating_sub(2));
    let sci = format!("{:.places$e}", float.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if float.is_sign_negative() {
        out.push(b'-');
    }
    let (plain, fraction_always) = match layout {
        Layout::Spaced => ((-4..16).contains(&exp), true),
        _ => (float == 0.0 || (-6..21).contains(&exp), false),
    };
    if plain {
        let point = exp + 1;
        let mut text = String::new();
        if point <= 0 {
            text.push_str("0.");
            text.extend(std::iter::repeat_n('0', (-point) as usize));
            text.push_str(&digits);
        } else if point as usize >= digits.len() {
            text.push_str(&digits);
            text.extend(std::iter::repeat_n('0', point as usize - digits.len()));
            if fraction_always {
                text.push_str(".0");
            }
        } else {
            text.push_str(&digits[..point as usize]);
            text.push('.');
            text.push_str(&digits[point as usize..]);
        }
        out.extend_from_slice(text.as_bytes());
    } else {
        out.extend_from_slice(&digits.as_bytes()[..1]);
        if digits.len() > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits.as_bytes()[1..]);
        }
        let width = if layout == Layout::Spaced { 2 } else { 1 };
        let sign = if exp < 0 { '-' } else { '+' };
        out.extend_from_slice(format!("e{sign}{:0width$}", exp.abs()).as_bytes());
    }
}

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

fn sorted(layout: Layout) -> bool {
    matches!(layout, Layout::Sorted | Layout::Go)
}

/// Between members or elements, and between a key and its value.
pub(crate) fn separators(layout: Layout) -> (&'static [u8], &'static [u8]) {
    if layout == Layout::Spaced {
        (b", ", b": ")
    } else {
        (b",", b":")
    }
}

/// Writes an object's members, each value by `value`.
fn write_members<K: AsRef<str>, V>(
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

/// Appends `value` (any `Serialize`) as compact JSON, byte for byte what `serde_json` writes,
/// strings escaped by [`write_str`]: serde_json's own escaping looks up every byte in a table,
/// which made it most of the cost of writing canonical lines.
pub fn write_serialize<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<(), SerError> {
    let outer = OURS.replace(true);
    let done = value.serialize(&mut Ser { out });
    OURS.set(outer);
    done
}

thread_local! {
    /// Whether the serializer at work on this thread is [`write_serialize`]'s.
    static OURS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Serializes `inner`, the inside of a JSON string literal escaped as the compact layout
/// escapes, as it is when the serializer is [`write_serialize`]'s (which takes bytes for such
/// an inside); gives the serializer back when it is another, which must be given characters.
pub(crate) fn serialize_literal<S: serde::Serializer>(s: S, inner: &str) -> Result<Result<S::Ok, S::Error>, S> {
    if OURS.get() {
        Ok(s.serialize_bytes(inner.as_bytes()))
    } else {
        Err(s)
    }
}

/// Serializes `json`, JSON text in serde_json's compact form, as it is when the serializer is
/// [`write_serialize`]'s; gives the serializer back when it is another. The serializer is told
/// by a flag that its next `serialize_bytes` is JSON text: a serde wrapper that held bytes back
/// and gave others first would pair the flag with the wrong bytes (serde's flatten and tagging,
/// which canonical's events go through, forward each call at once).
pub(crate) fn serialize_json<S: serde::Serializer>(s: S, json: &str) -> Result<Result<S::Ok, S::Error>, S> {
    if OURS.get() {
        RAW_NEXT.set(true);
        Ok(s.serialize_bytes(json.as_bytes()))
    } else {
        Err(s)
    }
}

thread_local! {
    /// The next bytes [`write_serialize`]'s serializer is given are JSON text, not the inside
    /// of a string literal (see [`serialize_json`]).
    static RAW_NEXT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Why a value could not be written as JSON (a map key that is not a string).
#[derive(Debug)]
pub struct SerError(String);

impl std::fmt::Display for SerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SerError {}

impl serde::ser::Error for SerError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        SerError(msg.to_string())
    }
}

struct Ser<'a> {
    out: &'a mut Vec<u8>,
}

impl Ser<'_> {
    fn display(&mut self, n: impl std::fmt::Display) -> Result<(), SerError> {
        use std::io::Write;
        write!(self.out, "{n}").map_err(|e| SerError(e.to_string()))
    }
}

/// An array, object or struct being written: whether a member came yet, and what closes it.
struct Compound<'s, 'a> {
    ser: &'s mut Ser<'a>,
    first: bool,
    close: &'static [u8],
}

impl Compound<'_, '_> {
    fn comma(&mut self) {
        if !std::mem::take(&mut self.first) {
            self.ser.out.push(b',');
        }
    }
}

impl<'s, 'a> serde::Serializer for &'s mut Ser<'a> {
    type Ok = ();
    type Error = SerError;
    type SerializeSeq = Compound<'s, 'a>;
    type SerializeTuple = Compound<'s, 'a>;
    type SerializeTupleStruct = Compound<'s, 'a>;
    type SerializeTupleVariant = Compound<'s, 'a>;
    type SerializeMap = Compound<'s, 'a>;
    type SerializeStruct = Compound<'s, 'a>;
    type SerializeStructVariant = Compound<'s, 'a>;

    fn serialize_bool(self, v: bool) -> Result<(), SerError> {
        self.out.extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Result<(), SerError> {
        self.display(v)
    }
    fn serialize_i16(self, v: i16) -> Result<(), SerError> {
        self.display(v)
    }
    fn serialize_i32(self, v: i32) -> Result<(), SerError> {
        self.display(v)
    }
    fn serialize_i64(self, v: i64) -> Result<(), SerError> {
        self.display(v)
    }
    fn serialize_i128(self, v: i128) -> Result<(), SerError> {
        self.display(v)
    }
    fn serialize_u8(self, v: u8) -> Result<(), SerError> {
        self.display(v)
    }
    fn serialize_u16(self, v: u16) -> Result<(), SerError> {
        self.display(v)
    }
    fn serialize_u32(self, v: u32) -> Result<(), SerError> {
        self.display(v)
    }
    fn serialize_u64(self, v: u64) -> Result<(), SerError> {
        self.display(v)
    }
    fn serialize_u128(self, v: u128) -> Result<(), SerError> {
        self.display(v)
    }
    fn serialize_f32(self, v: f32) -> Result<(), SerError> {
        // serde_json's float formatting (ryu; null for what JSON has no number for).
        serde_json::to_writer(&mut *self.out, &v).map_err(|e| SerError(e.to_string()))
    }
    fn serialize_f64(self, v: f64) -> Result<(), SerError> {
        serde_json::to_writer(&mut *self.out, &v).map_err(|e| SerError(e.to_string()))
    }
    fn serialize_char(self, v: char) -> Result<(), SerError> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<(), SerError> {
        write_str(self.out, v, Layout::Compact);
        Ok(())
    }
    /// Bytes are the inside of a string literal escaped already (see [`serialize_literal`]):
    /// no type of ours serializes bytes otherwise.
    fn serialize_bytes(self, v: &[u8]) -> Result<(), SerError> {
        if RAW_NEXT.replace(false) {
            self.out.extend_from_slice(v);
            return Ok(());
        }
        self.out.reserve(v.len() + 2);
        self.out.push(b'"');
        self.out.extend_from_slice(v);
        self.out.push(b'"');
        Ok(())
    }
    fn serialize_none(self) -> Result<(), SerError> {
        self.serialize_unit()
    }
    fn serialize_some<T: serde::Serialize + ?Sized>(self, v: &T) -> Result<(), SerError> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), SerError> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), SerError> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<(), SerError> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: serde::Serialize + ?Sized>(self, _: &'static str, v: &T) -> Result<(), SerError> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: serde::Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<(), SerError> {
        self.out.push(b'{');
        write_str(self.out, variant, Layout::Compact);
        self.out.push(b':');
        v.serialize(&mut *self)?;
        self.out.push(b'}');
        Ok(())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Compound<'s, 'a>, SerError> {
        self.out.push(b'[');
        Ok(Compound { ser: self, first: true, close: b"]" })
    }
    fn serialize_tuple(self, len: usize) -> Result<Compound<'s, 'a>, SerError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Compound<'s, 'a>, SerError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Compound<'s, 'a>, SerError> {
        self.out.push(b'{');
        write_str(self.out, variant, Layout::Compact);
        self.out.extend_from_slice(b":[");
        Ok(Compound { ser: self, first: true, close: b"]}" })
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Compound<'s, 'a>, SerError> {
        self.out.push(b'{');
        Ok(Compound { ser: self, first: true, close: b"}" })
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Compound<'s, 'a>, SerError> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Compound<'s, 'a>, SerError> {
        self.out.push(b'{');
        write_str(self.out, variant, Layout::Compact);
        self.out.extend_from_slice(b":{");
        Ok(Compound { ser: self, first: true, close: b"}}" })
    }
}

impl serde::ser::SerializeSeq for Compound<'_, '_> {
    type Ok = ();
    type Error = SerError;
    fn serialize_element<T: serde::Serialize + ?Sized>(&mut self, v: &T) -> Result<(), SerError> {
        self.comma();
        v.serialize(&mut *self.ser)
    }
    fn end(self) -> Result<(), SerError> {
        self.ser.out.extend_from_slice(self.close);
        Ok(())
    }
}

impl serde::ser::SerializeTuple for Compound<'_, '_> {
    type Ok = ();
    type Error = SerError;
    fn serialize_element<T: serde::Serialize + ?Sized>(&mut self, v: &T) -> Result<(), SerError> {
        serde::ser::SerializeSeq::serialize_element(self, v)
    }
    fn end(self) -> Result<(), SerError> {
        serde::ser::SerializeSeq::end(self)
    }
}

impl serde::ser::SerializeTupleStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = SerError;
    fn serialize_field<T: serde::Serialize + ?Sized>(&mut self, v: &T) -> Result<(), SerError> {
        serde::ser::SerializeSeq::serialize_element(self, v)
    }
    fn end(self) -> Result<(), SerError> {
        serde::ser::SerializeSeq::end(self)
    }
}

impl serde::ser::SerializeTupleVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = SerError;
    fn serialize_field<T: serde::Serialize + ?Sized>(&mut self, v: &T) -> Result<(), SerError> {
        serde::ser::SerializeSeq::serialize_element(self, v)
    }
    fn end(self) -> Result<(), SerError> {
        serde::ser::SerializeSeq::end(self)
    }
}

impl serde::ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = SerError;
    fn serialize_key<T: serde::Serialize + ?Sized>(&mut self, key: &T) -> Result<(), SerError> {
        self.comma();
        let at = self.ser.out.len();
        key.serialize(&mut *self.ser)?;
        if self.ser.out.get(at) != Some(&b'"') {
            // JSON keys are strings; no key of ours is anything else.
            return Err(SerError("a map key that is not a string".into()));
        }
        Ok(())
    }
    fn serialize_value<T: serde::Serialize + ?Sized>(&mut self, v: &T) -> Result<(), SerError> {
        self.ser.out.push(b':');
        v.serialize(&mut *self.ser)
    }
    fn end(self) -> Result<(), SerError> {
        self.ser.out.extend_from_slice(self.close);
        Ok(())
    }
}

impl serde::ser::SerializeStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = SerError;
    fn serialize_field<T: serde::Serialize + ?Sized>(&mut self, key: &'static str, v: &T) -> Result<(), SerError> {
        self.comma();
        write_str(self.ser.out, key, Layout::Compact);
        self.ser.out.push(b':');
        v.serialize(&mut *self.ser)
    }
    fn end(self) -> Result<(), SerError> {
        self.ser.out.extend_from_slice(self.close);
        Ok(())
    }
}

impl serde::ser::SerializeStructVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = SerError;
    fn serialize_field<T: serde::Serialize + ?Sized>(&mut self, key: &'static str, v: &T) -> Result<(), SerError> {
        serde::ser::SerializeStruct::serialize_field(self, key, v)
    }
    fn end(self) -> Result<(), SerError> {
        self.ser.out.extend_from_slice(self.close);
        Ok(())
    }
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
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

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

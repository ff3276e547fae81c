//! The byte search under every string the fast layer reads or writes: where the next byte that
//! a JSON string cannot hold as it is lies, where a nested value ends, which bytes an escape
//! covers; sixteen or thirty-two bytes a step (SSE2, AVX2), plain code elsewhere.

use std::ops::ControlFlow;

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

//! The framing target: any bytes, any line limit, read whole, a few bytes a read, or handed over
//! in blocks, against a framing written here the plain way (split at LF) from the module's
//! rules: a BOM dropped before the first line only, a CR before each LF dropped, a last line
//! without LF still a line, a line over the limit (its length with CR and BOM) skipped and
//! reported, whitespace-only lines blank, a line that is not UTF-8 reported with the offset of
//! its first bad byte. The digest of every byte read is the SHA-256 (or XXH3-128) of the input.

use std::io::{self, Read};

use agentgate::io::framing::{hex, Block, DigestKind, Frame, Input, Lines, HEADROOM};
use sha2::{Digest, Sha256};

/// One line as it must be framed.
#[derive(Debug, PartialEq, Eq)]
enum Want {
    Text(String),
    Blank,
    TooLong(usize),
    NotUtf8(usize, Vec<u8>),
}

fn owned(f: Frame<'_>) -> Want {
    match f {
        Frame::Text(t) => Want::Text(t.to_string()),
        Frame::Blank => Want::Blank,
        Frame::TooLong(n) => Want::TooLong(n),
        Frame::NotUtf8(at, bytes) => Want::NotUtf8(at, bytes.to_vec()),
    }
}

/// The framing the module's docs describe, written the plain way.
fn expected(input: &[u8], max: usize) -> Vec<Want> {
    let mut parts: Vec<&[u8]> = input.split(|b| *b == b'\n').collect();
    if parts.last().is_some_and(|p| p.is_empty()) {
        // The input ends with LF (or is empty): no line after it.
        parts.pop();
    }
    let mut out = Vec::new();
    for (i, raw) in parts.into_iter().enumerate() {
        if raw.len() > max {
            out.push(Want::TooLong(raw.len()));
            continue;
        }
        let mut line = raw;
        if i == 0 {
            line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        }
        line = line.strip_suffix(b"\r").unwrap_or(line);
        out.push(match std::str::from_utf8(line) {
            Ok(t) if t.trim().is_empty() => Want::Blank,
            Ok(t) => Want::Text(t.to_string()),
            Err(e) => Want::NotUtf8(e.valid_up_to(), line.to_vec()),
        });
    }
    out
}

/// Gives at most `step` bytes a read, as a pipe from a slow writer does.
struct Trickle<'a> {
    data: &'a [u8],
    step: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = self.step.min(out.len()).min(self.data.len());
        out[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// Hands over blocks of `step` bytes after their headroom, as the read-ahead thread does.
struct Blocks<'a> {
    data: &'a [u8],
    step: usize,
}

impl Input for Blocks<'_> {
    fn read_into(&mut self, _: &mut [u8]) -> io::Result<usize> {
        unreachable!("a source of blocks is not read")
    }

    fn next_block(&mut self, spent: Vec<u8>) -> Option<io::Result<Option<Block>>> {
        if self.data.is_empty() {
            return Some(Ok(None));
        }
        let n = self.step.min(self.data.len());
        // The block handed back is used again, as the read-ahead thread does: its headroom
        // and tail still hold an earlier block's bytes, which the framing must not read. (A
        // new 64 KB block a read, filled, was most of this target's time.)
        let mut block = spent;
        if block.is_empty() {
            block = vec![b'#'; HEADROOM + n + 3];
        }
        block.resize(HEADROOM + n + 3, b'#');
        block[HEADROOM..HEADROOM + n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Some(Ok(Some((block, HEADROOM + n))))
    }
}

fn frames<R: Input>(mut lines: Lines<R>, ask_between: bool) -> (Vec<Want>, String) {
    let mut got = Vec::new();
    let mut number = 0;
    while let Some((n, f)) = lines.next_frame().expect("reading memory cannot fail") {
        number += 1;
        assert_eq!(n, number, "line numbers count from 1, one a line");
        got.push(owned(f));
        if ask_between {
            lines.would_wait();
        }
    }
    (got, lines.digest())
}

/// The first two bytes: the line limit (0 to 1023, or none), the read size and the digest's
/// kind; the rest is the input.
pub fn check(data: &[u8]) {
    let [a, b, input @ ..] = data else { return };
    let max = match usize::from(*a) << 2 | usize::from(*b >> 6) {
        1023 => usize::MAX,
        n => n,
    };
    let step = usize::from(*b & 0x1f) * 7 + 1;
    let kind = if b & 0x20 != 0 { DigestKind::Distinct } else { DigestKind::Sha256 };
    let digest = match kind {
        DigestKind::Distinct => format!("{:032x}", xxhash_rust::xxh3::xxh3_128(input)),
        _ => hex(&Sha256::digest(input)),
    };
    let want = expected(input, max);
    for (how, (got, got_digest)) in [
        ("whole", frames(Lines::with_digest(input, max, kind), false)),
        ("trickled", frames(Lines::with_digest(Trickle { data: input, step }, max, kind), true)),
        ("in blocks", frames(Lines::with_digest(Blocks { data: input, step }, max, kind), step % 2 == 0)),
    ] {
        assert_eq!(got, want, "read {how}, {step} bytes a read, limit {max}");
        assert_eq!(got_digest, digest, "read {how}, {step} bytes a read");
    }
}

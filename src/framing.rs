//! Line framing, once for every dialect: bytes in, one line at a time out, with 1-based line
//! numbers. A UTF-8 byte order mark before the first line and a CR before each LF are dropped;
//! a last line without its newline is still a line. A line longer than the limit is skipped
//! without being held in memory, and reported as such.
//!
//! The reader also keeps a SHA-256 of every byte it consumed (some targets derive ids or
//! digests from the input), and says when its buffer is empty, which is when the next read may
//! wait: the pipeline flushes its output then.

use std::io::{self, BufRead, BufReader, Read};

use sha2::{Digest, Sha256};

/// One framed line.
#[derive(Debug)]
pub enum Frame<'a> {
    /// A line of text, without its line ending.
    Text(&'a str),
    /// A line holding nothing but whitespace.
    Blank,
    /// A line longer than the limit; its length in bytes.
    TooLong(usize),
    /// A line that is not valid UTF-8; the byte offset of the first bad byte.
    NotUtf8(usize),
}

pub struct Lines<R> {
    reader: BufReader<R>,
    buf: Vec<u8>,
    number: u64,
    max: usize,
    hasher: Sha256,
}

/// The default longest line, in bytes: far above any real event, far below what would hurt.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

impl<R: Read> Lines<R> {
    pub fn new(inner: R, max_line_bytes: usize) -> Self {
        Lines {
            reader: BufReader::with_capacity(64 * 1024, inner),
            buf: Vec::new(),
            number: 0,
            max: max_line_bytes,
            hasher: Sha256::new(),
        }
    }

    /// The 1-based number of the line last returned.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// True when no input is buffered, so that the next read may block.
    pub fn would_wait(&self) -> bool {
        self.reader.buffer().is_empty()
    }

    /// SHA-256 of all bytes consumed so far, as lowercase hex.
    pub fn digest(&self) -> String {
        hex(&self.hasher.clone().finalize())
    }

    /// The next line with its 1-based number, or `None` at the end of input.
    pub fn next_frame(&mut self) -> io::Result<Option<(u64, Frame<'_>)>> {
        self.buf.clear();
        let mut len = 0usize;
        let mut any = false;
        loop {
            let avail = match self.reader.fill_buf() {
                Ok(a) => a,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if avail.is_empty() {
                break;
            }
            any = true;
            let (chunk, done) = match memchr(avail) {
                Some(i) => (&avail[..=i], true),
                None => (avail, false),
            };
            let body = if done { &chunk[..chunk.len() - 1] } else { chunk };
            len += body.len();
            if len <= self.max {
                self.buf.extend_from_slice(body);
            }
            self.hasher.update(chunk);
            let n = chunk.len();
            self.reader.consume(n);
            if done {
                break;
            }
        }
        if !any {
            return Ok(None);
        }
        self.number += 1;
        if len > self.max {
            self.buf.clear();
            return Ok(Some((self.number, Frame::TooLong(len))));
        }
        let mut bytes: &[u8] = &self.buf;
        if self.number == 1 {
            bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        }
        bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        let frame = match std::str::from_utf8(bytes) {
            Ok(s) if s.trim().is_empty() => Frame::Blank,
            Ok(s) => Frame::Text(s),
            Err(e) => Frame::NotUtf8(e.valid_up_to()),
        };
        Ok(Some((self.number, frame)))
    }
}

fn memchr(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &[u8], max: usize) -> Vec<String> {
        let mut lines = Lines::new(input, max);
        let mut out = Vec::new();
        while let Some((n, f)) = lines.next_frame().unwrap() {
            out.push(format!("{n}:{f:?}"));
        }
        out
    }

    #[test]
    fn bom_crlf_blank_and_a_last_line_without_newline() {
        let got = frames(b"\xEF\xBB\xBF{\"a\":1}\r\n\r\n  \n{\"b\":2}", 100);
        assert_eq!(got, vec!["1:Text(\"{\\\"a\\\":1}\")", "2:Blank", "3:Blank", "4:Text(\"{\\\"b\\\":2}\")"]);
    }

    #[test]
    fn an_overlong_line_is_reported_and_the_next_one_read() {
        let got = frames(b"0123456789\nok\n", 5);
        assert_eq!(got, vec!["1:TooLong(10)", "2:Text(\"ok\")"]);
    }

    #[test]
    fn invalid_utf8_is_reported_with_its_offset() {
        let got = frames(b"ab\xFFc\n", 100);
        assert_eq!(got, vec!["1:NotUtf8(2)"]);
    }

    #[test]
    fn a_bom_is_only_dropped_before_the_first_line() {
        let got = frames(b"x\n\xEF\xBB\xBFy\n", 100);
        assert_eq!(got[1], "2:Text(\"\\u{feff}y\")");
    }

    #[test]
    fn the_digest_covers_every_byte_read() {
        let mut lines = Lines::new(&b"abc"[..], 100);
        while lines.next_frame().unwrap().is_some() {}
        assert_eq!(lines.digest(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}

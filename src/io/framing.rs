//! Line framing, once for every dialect: bytes in, one line at a time out, with 1-based line
//! numbers. A UTF-8 byte order mark before the first line and a CR before each LF are dropped;
//! a last line without its newline is still a line. A line longer than the limit is skipped
//! without being held in memory, and reported as such.
//!
//! Lines are framed in place in one read buffer (no copy per line), or in the blocks an [`Input`]
//! hands over whole, each becoming the buffer in turn: [`Lines::advance`] moves to
//! the next line and [`Lines::frame`] borrows it, so a decoder can read the line while the
//! pipeline asks the reader for its digest. The reader keeps a digest of every byte consumed
//! (some targets derive ids or digests from the input): a SHA-256, or where only telling
//! inputs apart matters, an XXH3-128, hashed a buffer at a time rather than a line at a time.
//! It also says when its buffer holds no whole line (nothing, or the start of one), which is
//! when the next read may wait: the pipeline flushes its output then.

use std::cell::Cell;
use std::io::{self, Read};
use std::sync::mpsc;

use sha2::{Digest, Sha256};

/// One framed line.
#[derive(Debug, Clone, Copy)]
pub enum Frame<'a> {
    /// A line of text, without its line ending.
    Text(&'a str),
    /// A line holding nothing but whitespace.
    Blank,
    /// A line longer than the limit; its length in bytes.
    TooLong(usize),
    /// A line that is not valid UTF-8: the byte offset of the first bad byte, and the line's
    /// bytes (for a reader that would rather mend it than lose it).
    NotUtf8(usize, &'a [u8]),
}

/// The line last framed: its bytes as a range of the buffer (without line ending or BOM), or
/// its length when it was too long to hold.
#[derive(Debug, Clone, Copy)]
enum Current {
    None,
    Line(usize, usize),
    TooLong(usize),
}

/// A block of input handed over whole: a buffer holding input at `[HEADROOM..end]`, and `end`.
pub type Block = (Vec<u8>, usize);

/// What [`Lines`] reads: any reader, or a source that hands over whole blocks of input
/// ([`crate::io::readahead::ReadAhead`]), which are framed where they lie rather than copied.
pub trait Input {
    /// Reads into `out`, as [`Read::read`] does.
    fn read_into(&mut self, out: &mut [u8]) -> io::Result<usize>;

    /// The next block of input, when this source hands over blocks; `Ok(None)` at the end of
    /// input. `spent` is a buffer done with, to be used again (or dropped). A source that does
    /// not hand over blocks answers `None`, and is read with [`Input::read_into`].
    fn next_block(&mut self, spent: Vec<u8>) -> Option<io::Result<Option<Block>>> {
        drop(spent);
        None
    }
}

impl<R: Read> Input for R {
    fn read_into(&mut self, out: &mut [u8]) -> io::Result<usize> {
        self.read(out)
    }
}

/// Room left free before the input in a block handed over whole: the start of a line that the
/// block before ended in is copied there, in front of the rest of the line, and the block
/// becomes the buffer lines are framed in. A start longer than this (rare: most lines are
/// shorter) is copied the other way, the block's input after it.
pub const HEADROOM: usize = 64 * 1024;

pub struct Lines<R> {
    inner: R,
    /// `buf[start..end]` is read and not framed yet; `buf[..hashed]` is in the hasher.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    hashed: usize,
    eof: bool,
    number: u64,
    max: usize,
    hasher: Hasher,
    current: Current,
    /// Where the next line's LF is, when [`Lines::would_wait`] has looked: [`Lines::advance`]
    /// need not look again.
    next_lf: Cell<Option<usize>>,
    /// The buffer a block took the place of, given back with the next block taken.
    spent: Vec<u8>,
}

/// The default longest line, in bytes: far above any real event, far below what would hurt.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// The read size, and the buffer's size until a longer line needs more.
const BLOCK: usize = 64 * 1024;

impl<R: Input> Lines<R> {
    pub fn new(inner: R, max_line_bytes: usize) -> Self {
        Lines::with_digest(inner, max_line_bytes, DigestKind::Sha256)
    }

    /// [`Lines::new`], keeping a digest of `kind`.
    pub fn with_digest(inner: R, max_line_bytes: usize, kind: DigestKind) -> Self {
        Lines {
            inner,
            buf: vec![0; BLOCK],
            start: 0,
            end: 0,
            hashed: 0,
            eof: false,
            number: 0,
            max: max_line_bytes,
            hasher: match kind {
                DigestKind::Sha256 => Hasher::Here(Sha::default(), true),
                DigestKind::Both => Hasher::Here(Sha { also: Some(Box::default()), ..Sha::default() }, true),
                DigestKind::Distinct => Hasher::Fast(Box::default(), true),
            },
            current: Current::None,
            next_lf: Cell::new(None),
            spent: Vec::new(),
        }
    }

    /// The 1-based number of the line last returned.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// True when the next line is not all buffered, so that [`Lines::advance`] will read, and
    /// may wait: no input is buffered, or only the start of a line. Output held until then
    /// would wait with it for the rest of a line an agent is still writing.
    pub fn would_wait(&self) -> bool {
        if self.eof {
            return false;
        }
        match memchr::memchr(b'\n', &self.buf[self.start..self.end]) {
            Some(i) => {
                self.next_lf.set(Some(self.start + i));
                false
            }
            None => true,
        }
    }

    /// The digest of all bytes consumed so far (up to [`stop_hashing`](Self::stop_hashing), if
    /// called), as lowercase hex: 64 digits of SHA-256, or 32 of XXH3-128.
    pub fn digest(&self) -> String {
        self.hasher.digest(&self.buf[self.hashed..self.start]).0
    }

    /// [`Lines::digest`], and with [`DigestKind::Both`] the XXH3-128 of the same bytes (32 hex
    /// digits; `None` with the other kinds).
    pub fn digests(&self) -> (String, Option<String>) {
        self.hasher.digest(&self.buf[self.hashed..self.start])
    }

    /// Hashes no more input: the digest stays that of the bytes consumed so far.
    pub fn stop_hashing(&mut self) {
        self.hasher.freeze(&self.buf[self.hashed..self.start]);
        self.hashed = self.start;
    }

    /// The next line with its 1-based number, or `None` at the end of input.
    pub fn next_frame(&mut self) -> io::Result<Option<(u64, Frame<'_>)>> {
        Ok(if self.advance()? { Some((self.number, self.frame())) } else { None })
    }

    /// The line [`advance`](Self::advance) moved to.
    pub fn frame(&self) -> Frame<'_> {
        match self.current {
            // Checked as UTF-8 here, once: a line is framed once per advance. simdutf8 checks
            // a valid line several bytes an instruction; the standard check, which says where
            // the first bad byte is, runs only on a line that is not valid.
            Current::Line(s, e) => match simdutf8::basic::from_utf8(&self.buf[s..e]) {
                Ok(t) if t.trim().is_empty() => Frame::Blank,
                Ok(t) => Frame::Text(t),
                Err(_) => {
                    let at = std::str::from_utf8(&self.buf[s..e]).map_or_else(|err| err.valid_up_to(), str::len);
                    Frame::NotUtf8(at, &self.buf[s..e])
                }
            },
            Current::None => Frame::Blank,
            Current::TooLong(n) => Frame::TooLong(n),
        }
    }

    /// Moves to the next line; false at the end of input.
    pub fn advance(&mut self) -> io::Result<bool> {
        let mut scanned = self.start;
        let mut known = self.next_lf.take().filter(|i| (self.start..self.end).contains(i));
        loop {
            let lf = known.take().or_else(|| memchr::memchr(b'\n', &self.buf[scanned..self.end]).map(|i| scanned + i));
            if let Some(e) = lf {
                let s = self.start;
                self.start = e + 1;
                self.frame_line(s, e);
                return Ok(true);
            }
            scanned = self.end;
            if self.end - self.start > self.max {
                self.skip_long()?;
                return Ok(true);
            }
            if self.eof {
                if self.start == self.end {
                    self.current = Current::None;
                    return Ok(false);
                }
                let (s, e) = (self.start, self.end);
                self.start = e;
                self.frame_line(s, e);
                return Ok(true);
            }
            let looked = scanned - self.start;
            self.more()?;
            scanned = self.start + looked;
        }
    }

    /// Classifies `buf[s..e]` (a line without its LF) as the current line.
    fn frame_line(&mut self, mut s: usize, mut e: usize) {
        self.number += 1;
        if e - s > self.max {
            self.current = Current::TooLong(e - s);
            return;
        }
        if self.number == 1 && self.buf[s..e].starts_with(b"\xEF\xBB\xBF") {
            s += 3;
        }
        if e > s && self.buf[e - 1] == b'\r' {
            e -= 1;
        }
        self.current = Current::Line(s, e);
    }

    /// Moves what was not consumed to the front of the buffer (what was is hashed: [`Lines::more`]).
    fn compact(&mut self) {
        self.buf.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        self.hashed = 0;
    }

    /// Adds input after what is not framed yet (`buf[start..end]`, which may move: positions
    /// are to be taken again from `start`); sets `eof` when there is none. A block handed over
    /// whole becomes the buffer, the unframed start of a line copied into its headroom.
    fn more(&mut self) -> io::Result<()> {
        self.hasher.feed(&self.buf[self.hashed..self.start]);
        self.hashed = self.start;
        let Some(block) = self.inner.next_block(std::mem::take(&mut self.spent)) else {
            self.compact();
            if self.end == self.buf.len() {
                // A line longer than the buffer (and within the limit): room for more of it.
                self.buf.resize(self.buf.len() * 2, 0);
            }
            return self.fill();
        };
        let Some((mut block, end)) = block? else {
            self.eof = true;
            return Ok(());
        };
        let left = self.end - self.start;
        if left <= HEADROOM {
            let start = HEADROOM - left;
            block[start..HEADROOM].copy_from_slice(&self.buf[self.start..self.end]);
            let spent = std::mem::replace(&mut self.buf, block);
            (self.start, self.end, self.hashed) = (start, end, start);
            // Given back at the next block, which this call's `next_block` did not wait on.
            self.spent = spent;
        } else {
            self.compact();
            let n = end - HEADROOM;
            if self.buf.len() < self.end + n {
                self.buf.resize((self.end + n).max(self.buf.len() * 2), 0);
            }
            self.buf[self.end..self.end + n].copy_from_slice(&block[HEADROOM..end]);
            self.end += n;
            self.spent = block;
        }
        Ok(())
    }

    /// Reads more input after `end`; sets `eof` when there is none.
    fn fill(&mut self) -> io::Result<()> {
        loop {
            match self.inner.read_into(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// The line at `start` is over the limit: consumes it up to its LF without holding it.
    fn skip_long(&mut self) -> io::Result<()> {
        let mut len = 0;
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf[self.start..self.end]) {
                len += i;
                self.start += i + 1;
                break;
            }
            len += self.end - self.start;
            self.start = self.end;
            if self.eof {
                break;
            }
            self.more()?;
        }
        self.number += 1;
        self.current = Current::TooLong(len);
        Ok(())
    }
}

/// Which digest a [`Lines`] keeps of its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DigestKind {
    /// SHA-256: what a target writes as the input's digest (loom's `transcript_digest`), and
    /// what ids made at the start of a run are cut from.
    Sha256,
    /// XXH3-128: for ids that need only tell inputs apart (adal's derived session id). About
    /// six times as fast as SHA-256 here, so it is kept on the reading thread.
    Distinct,
    /// Both: for canonical output, which states both digests of its source so that a later
    /// step derives what a direct translation would ([`Lines::digests`]). The XXH3 is taken
    /// beside the SHA-256, on its thread.
    Both,
}

/// SHA-256, and for [`DigestKind::Both`] XXH3-128 of the same bytes.
#[derive(Clone, Default)]
struct Sha {
    sha: Sha256,
    also: Option<Box<xxhash_rust::xxh3::Xxh3>>,
}

impl Sha {
    fn update(&mut self, bytes: &[u8]) {
        self.sha.update(bytes);
        if let Some(x) = &mut self.also {
            x.update(bytes);
        }
    }

    fn finish(&self) -> (String, Option<String>) {
        (hex(&self.sha.clone().finalize()), self.also.as_ref().map(|x| format!("{:032x}", x.digest128())))
    }
}

/// The input's digest in the making. SHA-256 costs a tenth of a translation's time, so once
/// input comes a buffer at a time it moves to a thread of its own, fed the consumed stretches
/// of the buffer; a digest asked for waits for it to catch up. Same bytes, same digest.
enum Hasher {
    /// Hashing here; `false` once frozen (no more input is hashed).
    Here(Sha, bool),
    Thread(Box<Handoff>),
    /// Stopped: the digests of what was hashed.
    Frozen(String, Option<String>),
    /// XXH3-128, here; `false` once frozen.
    Fast(Box<xxhash_rust::xxh3::Xxh3>, bool),
}

/// The reading thread's side of the hashing thread: the bytes gathered for its next job, and the
/// buffers it gave back. Handing the bytes over a batch at a time, in buffers used again, spares
/// a wake-up of the thread, an allocation and a free for every read.
struct Handoff {
    jobs: mpsc::SyncSender<Job>,
    batch: Vec<u8>,
    spare: mpsc::Receiver<Vec<u8>>,
}

/// Bytes gathered before they go to the hashing thread: four reads, where most of the gain of
/// batching was (docs/performance.md, "Tuning notes").
const HASH_BATCH: usize = 4 * BLOCK;

/// Batches waiting for the hashing thread beside the one it hashes. With none (a rendezvous),
/// every hand-over waited for the thread to wake and take it (docs/performance.md, "Tuning
/// notes"). At most four batches are held: one gathered, one waiting, one hashed, one on its
/// way back.
const HASH_WAITING: usize = 1;

impl Handoff {
    /// Hands the batch over, gathering the next one in a buffer given back.
    fn send(&mut self) -> Result<(), ()> {
        // A buffer a long line grew is let go, not kept for the rest of the run.
        let mut next = self.spare.try_recv().map_or_else(|_| Vec::new(), |b| emptied(b, HASH_BATCH + BLOCK));
        next.reserve(HASH_BATCH + BLOCK);
        self.jobs.send(Job::Bytes(std::mem::replace(&mut self.batch, next))).map_err(drop)
    }
}

enum Job {
    Bytes(Vec<u8>),
    /// The digests of everything so far and these last bytes.
    Digest(Vec<u8>, mpsc::Sender<(String, Option<String>)>),
}

impl Hasher {
    fn feed(&mut self, bytes: &[u8]) {
        match self {
            Hasher::Here(h, true) if bytes.len() < BLOCK / 2 => h.update(bytes),
            Hasher::Here(h, true) => {
                // Input comes in whole buffers (a file, a fast writer): hand the hashing to a
                // thread (keep it here if none can start). A live stream, read a line at a
                // time, stays here.
                let (tx, rx) = mpsc::sync_channel::<Job>(HASH_WAITING);
                let (back, spare) = mpsc::channel::<Vec<u8>>();
                let mut moved = h.clone();
                let spawned = std::thread::Builder::new().name("agentgate-sha256".into()).spawn(move || {
                    for job in rx {
                        match job {
                            Job::Bytes(b) => {
                                moved.update(&b);
                                let _ = back.send(b);
                            }
                            Job::Digest(b, reply) => {
                                let mut h = moved.clone();
                                h.update(&b);
                                let _ = reply.send(h.finish());
                            }
                        }
                    }
                });
                match spawned {
                    Ok(_) => {
                        let batch = Vec::with_capacity(HASH_BATCH + BLOCK);
                        *self = Hasher::Thread(Box::new(Handoff { jobs: tx, batch, spare }));
                        self.feed(bytes);
                    }
                    Err(_) => h.update(bytes),
                }
            }
            Hasher::Thread(t) => {
                // Bytes that would not fit send the batch ahead of them, so that it does not
                // grow: blocks taken whole come a quarter megabyte at a time.
                let sent = if !t.batch.is_empty() && t.batch.len() + bytes.len() > t.batch.capacity() {
                    t.send()
                } else {
                    Ok(())
                };
                t.batch.extend_from_slice(bytes);
                if sent.is_err() || (t.batch.len() >= HASH_BATCH && t.send().is_err()) {
                    // The thread is gone (it cannot panic); the digest will say so.
                    *self = Hasher::Frozen(String::new(), None);
                }
            }
            Hasher::Fast(h, true) => h.update(bytes),
            Hasher::Here(_, false) | Hasher::Frozen(..) | Hasher::Fast(_, false) => {}
        }
    }

    fn digest(&self, pending: &[u8]) -> (String, Option<String>) {
        match self {
            Hasher::Here(h, live) => {
                let mut h = h.clone();
                if *live {
                    h.update(pending);
                }
                h.finish()
            }
            Hasher::Thread(t) => {
                let (reply, answer) = mpsc::channel();
                let mut last = Vec::with_capacity(t.batch.len() + pending.len());
                last.extend_from_slice(&t.batch);
                last.extend_from_slice(pending);
                if t.jobs.send(Job::Digest(last, reply)).is_err() {
                    return (String::new(), None);
                }
                answer.recv().unwrap_or_default()
            }
            Hasher::Frozen(d, x) => (d.clone(), x.clone()),
            Hasher::Fast(h, live) => {
                let mut h = h.clone();
                if *live {
                    h.update(pending);
                }
                (format!("{:032x}", h.digest128()), None)
            }
        }
    }

    fn freeze(&mut self, pending: &[u8]) {
        match self {
            Hasher::Here(h, live @ true) => {
                h.update(pending);
                *live = false;
            }
            Hasher::Thread(_) => {
                let (d, x) = self.digest(pending);
                *self = Hasher::Frozen(d, x);
            }
            Hasher::Fast(h, live @ true) => {
                h.update(pending);
                *live = false;
            }
            _ => {}
        }
    }
}

/// `buf` emptied to be used again, or let go (an empty vector in its place) when it grew past
/// `keep` bytes: what a long line or a long list made of it is not held for the rest of the run.
pub(crate) fn emptied(mut buf: Vec<u8>, keep: usize) -> Vec<u8> {
    if buf.capacity() > keep {
        return Vec::new();
    }
    buf.clear();
    buf
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
    use proptest::prelude::*;

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
        assert_eq!(got, vec!["1:NotUtf8(2, [97, 98, 255, 99])"]);
    }

    proptest! {
        /// A line is text exactly where it is UTF-8, and one that is not says where its first
        /// bad byte is, as the standard check does (lines framed by simdutf8 are checked by
        /// sixteen and more bytes at once: long lines, bad bytes anywhere, multi-byte
        /// characters cut at any point).
        #[test]
        fn a_line_is_text_exactly_where_it_is_utf8(
            parts in prop::collection::vec(
                prop_oneof![
                    "[a-z{}\":, ]{1,40}".prop_map(String::into_bytes),
                    "[é€🙂ü]{1,8}".prop_map(String::into_bytes),
                    prop::collection::vec(0x80u8..=0xFF, 1..3),
                ],
                1..12,
            )
        ) {
            // Led by a letter, so that no line starts with a byte-order mark (dropped there).
            let line: Vec<u8> =
                std::iter::once(b'x').chain(parts.concat()).filter(|b| *b != b'\n' && *b != b'\r').collect();
            let mut input = line.clone();
            input.push(b'\n');
            let mut lines = Lines::new(&input[..], 1 << 20);
            let (_, frame) = lines.next_frame().unwrap().unwrap();
            match (std::str::from_utf8(&line), frame) {
                (Ok(t), Frame::Text(got)) => prop_assert_eq!(got, t),
                (Err(e), Frame::NotUtf8(at, bytes)) => {
                    prop_assert_eq!(at, e.valid_up_to());
                    prop_assert_eq!(bytes, &line[..]);
                }
                (want, got) => prop_assert!(false, "{:?} framed as {:?}", want, got),
            }
        }
    }

    #[test]
    fn a_bom_is_only_dropped_before_the_first_line() {
        let got = frames(b"x\n\xEF\xBB\xBFy\n", 100);
        assert_eq!(got[1], "2:Text(\"\\u{feff}y\")");
    }

    /// Gives at most `step` bytes per read, as a pipe from a slow writer does.
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

    #[test]
    fn lines_across_reads_and_beyond_the_buffer_frame_as_they_do_whole() {
        let long = "x".repeat(3 * BLOCK + 17);
        let input = format!("{{\"a\":1}}\r\n{long}\n\n{}\nlast", "y".repeat(BLOCK - 1));
        let whole = frames(input.as_bytes(), 4 * BLOCK);
        assert_eq!(whole.len(), 5);
        assert_eq!(whole[1], format!("2:Text({long:?})"));
        for step in [1, 7, 4096, BLOCK + 3] {
            let mut lines = Lines::new(Trickle { data: input.as_bytes(), step }, 4 * BLOCK);
            let mut got = Vec::new();
            while let Some((n, f)) = lines.next_frame().unwrap() {
                got.push(format!("{n}:{f:?}"));
            }
            assert_eq!(got, whole, "reads of {step} bytes");
            assert_eq!(lines.digest(), hex(&Sha256::digest(input.as_bytes())));
        }
    }

    /// A source that hands over blocks of `step` bytes, its headroom and what follows its end
    /// filled with bytes no line holds, counting the buffers given back.
    struct Blocks<'a> {
        data: &'a [u8],
        step: usize,
        given_back: usize,
    }

    impl Input for Blocks<'_> {
        fn read_into(&mut self, _: &mut [u8]) -> io::Result<usize> {
            unreachable!("a source of blocks is not read")
        }

        fn next_block(&mut self, spent: Vec<u8>) -> Option<io::Result<Option<Block>>> {
            self.given_back += usize::from(spent.capacity() > 0);
            if self.data.is_empty() {
                return Some(Ok(None));
            }
            let n = self.step.min(self.data.len());
            let mut block = vec![b'#'; HEADROOM + n + 5];
            block[HEADROOM..HEADROOM + n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Some(Ok(Some((block, HEADROOM + n))))
        }
    }

    #[test]
    fn lines_from_blocks_taken_whole_frame_as_they_do_read() {
        // Lines shorter and longer than the headroom, longer than a block, one over the limit,
        // a BOM, a CR, a blank line and a last line without its newline.
        let max = 3 * HEADROOM;
        let mut input = String::from("\u{feff}{\"a\":1}\r\n\n");
        let mut ends = vec![];
        for n in 0..300usize {
            let len = match n {
                100 => HEADROOM - 9,
                150 => HEADROOM + 1,
                200 => 2 * HEADROOM + 3,
                250 => max + 10,
                _ => n * 37 % 900,
            };
            input.push_str(&format!("{{\"n\":{n},\"t\":\"{}\"}}\n", "y".repeat(len)));
            ends.push(input.len());
        }
        input.push_str("last");
        let whole = frames(input.as_bytes(), max);
        assert_eq!(whole.len(), 303);
        assert!(whole[252].starts_with("253:TooLong("), "{}", &whole[252][..20]);
        for step in [1, 7, 4096, HEADROOM - 1, HEADROOM + 3, 3 * HEADROOM + 1] {
            let mut lines = Lines::new(Blocks { data: input.as_bytes(), step, given_back: 0 }, max);
            let mut got = Vec::new();
            while let Some((n, f)) = lines.next_frame().unwrap() {
                got.push(format!("{n}:{f:?}"));
                if (3..=302).contains(&n) && n % 50 == 3 {
                    let end = ends[n as usize - 3];
                    assert_eq!(
                        lines.digest(),
                        hex(&Sha256::digest(&input.as_bytes()[..end])),
                        "line {n}, blocks of {step}"
                    );
                }
            }
            assert_eq!(got, whole, "blocks of {step} bytes");
            assert_eq!(lines.digest(), hex(&Sha256::digest(input.as_bytes())), "blocks of {step} bytes");
            let blocks = input.len().div_ceil(step);
            assert_eq!(lines.inner.given_back, blocks, "every buffer done with goes back, blocks of {step} bytes");
        }
    }

    #[test]
    fn the_next_read_waits_exactly_when_the_next_line_is_not_all_buffered() {
        let input = b"ab\ncd\nef\n";
        // Reads of 7 bytes: "ab\ncd\ne", then "f\n".
        let mut lines = Lines::new(Trickle { data: input, step: 7 }, 100);
        assert!(lines.would_wait(), "nothing read yet");
        let mut waits = Vec::new();
        while let Some((n, f)) = lines.next_frame().unwrap() {
            waits.push((format!("{n}:{f:?}"), lines.would_wait()));
        }
        let expected = [("1:Text(\"ab\")", false), ("2:Text(\"cd\")", true), ("3:Text(\"ef\")", true)];
        assert_eq!(waits, expected.map(|(f, w)| (f.to_string(), w)));
        assert!(!lines.would_wait(), "at the end of the input nothing is waited for");
        // Asking between lines, at any read size, frames the same lines.
        let whole = frames(input, 100);
        for step in [1, 2, 3, 5, 8] {
            let mut lines = Lines::new(Trickle { data: input, step }, 100);
            let mut got = Vec::new();
            while let Some((n, f)) = lines.next_frame().unwrap() {
                got.push(format!("{n}:{f:?}"));
                lines.would_wait();
            }
            assert_eq!(got, whole, "reads of {step} bytes");
        }
    }

    #[test]
    fn an_overlong_line_spanning_reads_is_skipped_and_still_hashed() {
        let input = format!("{}\nok\n{}", "z".repeat(BLOCK * 2), "w".repeat(50));
        let mut lines = Lines::new(Trickle { data: input.as_bytes(), step: 1000 }, 40);
        let mut got = Vec::new();
        while let Some((n, f)) = lines.next_frame().unwrap() {
            got.push(format!("{n}:{f:?}"));
        }
        assert_eq!(got, vec![format!("1:TooLong({})", BLOCK * 2), "2:Text(\"ok\")".into(), "3:TooLong(50)".into()]);
        assert_eq!(lines.digest(), hex(&Sha256::digest(input.as_bytes())));
    }

    #[test]
    fn the_digest_at_a_line_covers_exactly_the_lines_read_so_far() {
        let input = b"{\"a\":1}\n{\"b\":2}\n";
        let mut lines = Lines::new(&input[..], 100);
        lines.advance().unwrap();
        assert_eq!(lines.digest(), hex(&Sha256::digest(b"{\"a\":1}\n")));
        assert!(!lines.would_wait(), "the second line is buffered");
        lines.advance().unwrap();
        assert_eq!(lines.digest(), hex(&Sha256::digest(input)));
    }

    #[test]
    fn the_distinct_digest_is_the_xxh3_128_of_the_lines_read_however_they_came() {
        let line = format!("{{\"t\":\"{}\"}}\n", "x".repeat(1000));
        let input = line.repeat(200);
        let xxh3 = |b: &[u8]| format!("{:032x}", xxhash_rust::xxh3::xxh3_128(b));
        for step in [7, 4096, BLOCK + 3] {
            let mut lines =
                Lines::with_digest(Trickle { data: input.as_bytes(), step }, usize::MAX, DigestKind::Distinct);
            for _ in 0..150 {
                lines.advance().unwrap();
            }
            let at_150 = xxh3(&input.as_bytes()[..150 * line.len()]);
            assert_eq!(lines.digest(), at_150, "reads of {step} bytes");
            lines.stop_hashing();
            while lines.advance().unwrap() {}
            assert_eq!(lines.digest(), at_150, "frozen where it stopped");
        }
        let mut lines = Lines::with_digest(input.as_bytes(), usize::MAX, DigestKind::Distinct);
        while lines.advance().unwrap() {}
        assert_eq!(lines.digest(), xxh3(input.as_bytes()));
        assert_ne!(xxh3(input.as_bytes()), xxh3(&input.as_bytes()[1..]));
    }

    #[test]
    fn a_large_input_hashed_on_a_thread_gives_the_same_digests() {
        let line = format!("{{\"t\":\"{}\"}}\n", "x".repeat(1000));
        let input = line.repeat(2000);
        let mut lines = Lines::new(input.as_bytes(), usize::MAX);
        for _ in 0..1500 {
            lines.advance().unwrap();
        }
        assert!(matches!(lines.hasher, Hasher::Thread(_)), "2 MB read a buffer at a time hashes on a thread");
        let at_1500 = hex(&Sha256::digest(&input.as_bytes()[..1500 * line.len()]));
        assert_eq!(lines.digest(), at_1500);
        lines.stop_hashing();
        while lines.advance().unwrap() {}
        assert_eq!(lines.digest(), at_1500, "frozen where it stopped");

        let mut lines = Lines::new(input.as_bytes(), usize::MAX);
        while lines.advance().unwrap() {}
        assert_eq!(lines.digest(), hex(&Sha256::digest(input.as_bytes())));
    }

    #[test]
    fn a_digest_asked_at_any_line_of_a_threaded_hash_covers_exactly_the_lines_read() {
        // Lines of many lengths, one longer than a batch, so that the digest is asked with bytes
        // gathered and not yet handed over, right after a hand-over, and past a grown buffer.
        let mut input = String::new();
        let mut ends = Vec::new();
        for n in 0..3000usize {
            let len = if n == 1700 { HASH_BATCH * 3 + 5 } else { (n * 7919) % 3000 };
            input.push_str(&format!("{{\"n\":{n},\"t\":\"{}\"}}\n", "y".repeat(len)));
            ends.push(input.len());
        }
        let mut lines = Lines::new(input.as_bytes(), usize::MAX);
        let mut n = 0;
        while lines.advance().unwrap() {
            if n % 97 == 0 || n == 1700 || n == 1701 {
                assert_eq!(lines.digest(), hex(&Sha256::digest(&input.as_bytes()[..ends[n]])), "at line {}", n + 1);
            }
            n += 1;
        }
        assert!(matches!(lines.hasher, Hasher::Thread(_)));
        assert_eq!(lines.digest(), hex(&Sha256::digest(input.as_bytes())));
    }

    #[test]
    fn the_digest_covers_every_byte_read() {
        let mut lines = Lines::new(&b"abc"[..], 100);
        while lines.next_frame().unwrap().is_some() {}
        assert_eq!(lines.digest(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}

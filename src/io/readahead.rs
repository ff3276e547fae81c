//! Reading on a thread of its own: [`ReadAhead`] reads its input in blocks on a second thread
//! while the caller translates what came before. The reads' cost (the system call, the page
//! cache's look-ups, the kernel's copy) leaves the translating thread. [`crate::io::framing::Lines`]
//! takes each block whole ([`Input::next_block`]) and frames its lines where they lie: only the
//! start of a line that a block ended in is copied, into the next block's headroom (copying
//! every block into the framing buffer cost more: docs/performance.md, "Tuning notes").
//!
//! It reads what is there and hands it over at once: a live stream's line comes through as soon
//! as its writer wrote it, not when a block is full. Memory is bounded: `AHEAD` blocks wait at
//! most, each of `BLOCK` bytes after its headroom, in buffers used again.

use std::io::{self, Read};
use std::sync::mpsc;

use crate::io::framing::{Block, Input, HEADROOM};

/// The size of one read. Each block taken may wake the reading thread, which waits when
/// [`AHEAD`] blocks are read: smaller blocks, more wake-ups (measured: docs/performance.md,
/// "Tuning notes").
const BLOCK: usize = 256 * 1024;

/// Blocks read and waiting to be taken, at most: with the one being framed and the one being
/// read, four buffers of [`HEADROOM`] and [`BLOCK`].
const AHEAD: usize = 2;

/// A buffer given back larger than this (one a long line grew) is let go rather than read
/// into again: it would hold its memory for reads that fill a block of it.
const KEPT: usize = 2 * (HEADROOM + BLOCK);

/// A reader whose reads are made ahead on a thread; see the [module](self).
pub struct ReadAhead {
    source: Source,
}

enum Source {
    Thread {
        blocks: mpsc::Receiver<io::Result<Block>>,
        back: mpsc::Sender<Vec<u8>>,
        /// The block being copied from by [`ReadAhead::read`], how far, and its end.
        block: Vec<u8>,
        at: usize,
        end: usize,
        /// The end of input or an error came: nothing more will.
        done: bool,
    },
    /// No thread could start: reads are made here.
    Here(Box<dyn Read + Send>),
}

impl ReadAhead {
    pub fn new<R: Read + Send + 'static>(mut inner: R) -> ReadAhead {
        let (tx, blocks) = mpsc::sync_channel::<io::Result<Block>>(AHEAD);
        let (back, spare) = mpsc::channel::<Vec<u8>>();
        let spawned = std::thread::Builder::new().name("agentgate-read".into()).spawn(move || loop {
            let mut buf = spare.try_recv().unwrap_or_default();
            if buf.len() < HEADROOM + BLOCK {
                buf.resize(HEADROOM + BLOCK, 0);
            }
            let n = loop {
                match inner.read(&mut buf[HEADROOM..HEADROOM + BLOCK]) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    other => break other,
                }
            };
            match n {
                Ok(0) => return,
                Ok(n) => {
                    if tx.send(Ok((buf, HEADROOM + n))).is_err() {
                        return;
                    }
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        });
        // The thread owns `inner` once spawned; spawning fails only before it took it, but the
        // closure is gone either way, so a failure reads nothing rather than lose input.
        let source = match spawned {
            Ok(_) => Source::Thread { blocks, back, block: Vec::new(), at: 0, end: 0, done: false },
            Err(e) => Source::Here(Box::new(Failed(Some(e)))),
        };
        ReadAhead { source }
    }

    /// Reads into `out`, copying from the blocks the thread read (what [`Input::read_into`]
    /// does; [`crate::io::framing::Lines`] takes the blocks whole instead).
    pub fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        match &mut self.source {
            Source::Here(r) => r.read(out),
            Source::Thread { blocks, back, block, at, end, done } => {
                if out.is_empty() {
                    return Ok(0);
                }
                if *at == *end {
                    match take(blocks, back, done, std::mem::take(block))? {
                        Some((b, e)) => (*block, *at, *end) = (b, HEADROOM, e),
                        None => return Ok(0),
                    }
                }
                let n = out.len().min(*end - *at);
                out[..n].copy_from_slice(&block[*at..*at + n]);
                *at += n;
                Ok(n)
            }
        }
    }
}

/// The next block from the thread, `spent` given back to it first (unless it is empty or grew
/// past [`KEPT`]); `None` at the end of input, and after an error.
fn take(
    blocks: &mpsc::Receiver<io::Result<Block>>,
    back: &mpsc::Sender<Vec<u8>>,
    done: &mut bool,
    spent: Vec<u8>,
) -> io::Result<Option<Block>> {
    if (1..=KEPT).contains(&spent.capacity()) {
        let _ = back.send(spent);
    }
    if *done {
        return Ok(None);
    }
    match blocks.recv() {
        Ok(Ok(block)) => Ok(Some(block)),
        Ok(Err(e)) => {
            *done = true;
            Err(e)
        }
        // The thread ended: the end of input.
        Err(_) => {
            *done = true;
            Ok(None)
        }
    }
}

impl Input for ReadAhead {
    fn read_into(&mut self, out: &mut [u8]) -> io::Result<usize> {
        self.read(out)
    }

    fn next_block(&mut self, spent: Vec<u8>) -> Option<io::Result<Option<Block>>> {
        match &mut self.source {
            Source::Thread { blocks, back, done, .. } => Some(take(blocks, back, done, spent)),
            Source::Here(_) => None,
        }
    }
}

/// The error a thread that could not start left, told at the first read.
struct Failed(Option<io::Error>);

impl Read for Failed {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        match self.0.take() {
            Some(e) => Err(io::Error::other(format!("cannot start the reading thread: {e}"))),
            None => Ok(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that gives `step` bytes a read, and fails after `fail_after` bytes if asked.
    struct Trickle {
        data: Vec<u8>,
        at: usize,
        step: usize,
        fail_after: Option<usize>,
    }

    impl Read for Trickle {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            if self.fail_after.is_some_and(|f| self.at >= f) {
                return Err(io::Error::other("disk on fire"));
            }
            let n = self.step.min(out.len()).min(self.data.len() - self.at);
            out[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    fn data(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 % 251) as u8).collect()
    }

    #[test]
    fn every_byte_comes_through_in_order_however_it_is_read_and_asked() {
        // Reads of one byte and of more than a block; takes of one byte and of several blocks.
        let cases =
            [(5000, 1, 7), (BLOCK + 7, 1000, 3), (BLOCK * 5 + 123, BLOCK, 3 * BLOCK), (BLOCK * 9 + 1, BLOCK * 3, 100)];
        for (len, step, ask) in cases.into_iter().chain([(BLOCK * 4 + 5, 77_777, 64 * 1024)]) {
            let input = data(len);
            let mut r = ReadAhead::new(Trickle { data: input.clone(), at: 0, step, fail_after: None });
            let mut got = Vec::new();
            let mut buf = vec![0; ask];
            loop {
                let n = r.read(&mut buf).unwrap();
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&buf[..n]);
            }
            assert_eq!(got.len(), input.len(), "reads of {step}, asked {ask}");
            assert!(got == input, "reads of {step}, asked {ask}");
            assert_eq!(r.read(&mut buf).unwrap(), 0, "the end stays the end");
        }
    }

    /// Every line `lines` frames, numbered, then how it ended.
    fn framed<R: Input>(mut lines: crate::io::framing::Lines<R>) -> (Vec<String>, String) {
        let mut out = Vec::new();
        loop {
            match lines.next_frame() {
                Ok(Some((n, f))) => out.push(format!("{n}:{f:?}")),
                Ok(None) => return (out, "end".into()),
                Err(e) => return (out, e.to_string()),
            }
        }
    }

    #[test]
    fn lines_framed_in_its_blocks_whole_are_the_lines_read() {
        use crate::io::framing::Lines;
        // Lines of many lengths, one longer than a block and its headroom together.
        let mut input = Vec::new();
        for n in 0..1500usize {
            let len = if n == 900 { BLOCK + HEADROOM + 3 } else { n * 131 % 5000 };
            input.extend_from_slice(format!("{{\"n\":{n},\"t\":\"{}\"}}\n", "y".repeat(len)).as_bytes());
        }
        let whole = framed(Lines::new(&input[..], usize::MAX));
        assert_eq!(whole.0.len(), 1500);
        for step in [333, 77_777, BLOCK] {
            let source = ReadAhead::new(Trickle { data: input.clone(), at: 0, step, fail_after: None });
            assert!(framed(Lines::new(source, usize::MAX)) == whole, "reads of {step}");
        }
        // A read that fails: the lines before it, then the error.
        let source = ReadAhead::new(Trickle { data: input.clone(), at: 0, step: 5000, fail_after: Some(300_000) });
        let (lines, end) = framed(Lines::new(source, usize::MAX));
        let before = input[..300_000].iter().filter(|&&b| b == b'\n').count();
        assert_eq!(lines[..], whole.0[..before]);
        assert_eq!(end, "disk on fire");
    }

    #[test]
    fn an_error_comes_after_the_bytes_read_before_it() {
        let input = data(1000);
        let mut r = ReadAhead::new(Trickle { data: input.clone(), at: 0, step: 300, fail_after: Some(600) });
        let mut got = Vec::new();
        let mut buf = [0; 4096];
        let err = loop {
            match r.read(&mut buf) {
                Ok(0) => panic!("the error was lost"),
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e) => break e,
            }
        };
        assert_eq!(got, input[..600]);
        assert_eq!(err.to_string(), "disk on fire");
        assert_eq!(r.read(&mut buf).unwrap(), 0);
    }

    #[test]
    fn a_line_written_comes_through_before_the_writer_writes_more() {
        use std::io::Write;
        use std::time::Duration;
        let (reader, mut writer) = std::io::pipe().unwrap();
        writer.write_all(b"{\"a\":1}\n").unwrap();
        // The writer holds its end open: a reader that waited for a whole block would not
        // answer, and the test fails rather than hangs.
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = ReadAhead::new(reader);
            let mut buf = [0; 4096];
            let first = r.read(&mut buf).map(|n| buf[..n].to_vec());
            let _ = tx.send(first);
            let _ = tx.send(r.read(&mut buf).map(|n| buf[..n].to_vec()));
        });
        let first = rx.recv_timeout(Duration::from_secs(10)).expect("the line came through").unwrap();
        assert_eq!(first, b"{\"a\":1}\n");
        drop(writer);
        let end = rx.recv_timeout(Duration::from_secs(10)).expect("the end came through").unwrap();
        assert!(end.is_empty());
    }
}

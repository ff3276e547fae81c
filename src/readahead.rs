//! Reading on a thread of its own: [`ReadAhead`] reads its input in blocks on a second thread
//! while the caller translates what came before. The reads' cost (the system call, the page
//! cache's look-ups, the kernel's copy) leaves the translating thread, which copies each block
//! once from memory the other thread has just written.
//!
//! It reads what is there and hands it over at once: a live stream's line comes through as soon
//! as its writer wrote it, not when a block is full. Memory is bounded: [`AHEAD`] blocks wait at
//! most, each of [`BLOCK`] bytes, in buffers used again.

use std::io::{self, Read};
use std::sync::mpsc;

/// The size of one read. Each block taken may wake the reading thread, which waits when
/// [`AHEAD`] blocks are read: with 64 KB blocks the wake-ups cost the translating thread what
/// the reads had (base-context to itself, 200 MB: 285 ms, against 280 reading here); with
/// 256 KB, 262 ms.
const BLOCK: usize = 256 * 1024;

/// Blocks read and waiting to be taken, at most: with the one being taken and the one being
/// read, 0.75 MB.
const AHEAD: usize = 2;

/// A reader whose reads are made ahead on a thread; see the [module](self).
pub struct ReadAhead {
    source: Source,
}

enum Source {
    Thread {
        blocks: mpsc::Receiver<io::Result<Vec<u8>>>,
        back: mpsc::Sender<Vec<u8>>,
        /// The block being taken from, and how far.
        block: Vec<u8>,
        at: usize,
        /// The end of input or an error came: nothing more will.
        done: bool,
    },
    /// No thread could start: reads are made here.
    Here(Box<dyn Read + Send>),
}

impl ReadAhead {
    pub fn new<R: Read + Send + 'static>(mut inner: R) -> ReadAhead {
        let (tx, blocks) = mpsc::sync_channel::<io::Result<Vec<u8>>>(AHEAD);
        let (back, spare) = mpsc::channel::<Vec<u8>>();
        let spawned = std::thread::Builder::new().name("agentgate-read".into()).spawn(move || loop {
            let mut buf = spare.try_recv().unwrap_or_default();
            buf.resize(BLOCK, 0);
            let n = loop {
                match inner.read(&mut buf) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    other => break other,
                }
            };
            match n {
                Ok(0) => return,
                Ok(n) => {
                    buf.truncate(n);
                    if tx.send(Ok(buf)).is_err() {
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
            Ok(_) => Source::Thread { blocks, back, block: Vec::new(), at: 0, done: false },
            Err(e) => Source::Here(Box::new(Failed(Some(e)))),
        };
        ReadAhead { source }
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

impl Read for ReadAhead {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        match &mut self.source {
            Source::Here(r) => r.read(out),
            Source::Thread { blocks, back, block, at, done } => {
                if out.is_empty() {
                    return Ok(0);
                }
                if *at == block.len() {
                    if *done {
                        return Ok(0);
                    }
                    let used = std::mem::take(block);
                    if used.capacity() > 0 {
                        let _ = back.send(used);
                    }
                    *at = 0;
                    match blocks.recv() {
                        Ok(Ok(b)) => *block = b,
                        Ok(Err(e)) => {
                            *done = true;
                            return Err(e);
                        }
                        // The thread ended: the end of input.
                        Err(_) => {
                            *done = true;
                            return Ok(0);
                        }
                    }
                }
                let n = out.len().min(block.len() - *at);
                out[..n].copy_from_slice(&block[*at..*at + n]);
                *at += n;
                Ok(n)
            }
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

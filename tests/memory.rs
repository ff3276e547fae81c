//! Memory does not grow with the stream: the most bytes held at once while translating a
//! stream, counted by a global allocator, stays the same whether the stream has n or 4n
//! repetitions of the patterns that make state pile up if nothing lets it go (turns numbered
//! without a turn-start record, calls never answered, output of calls that never end). The two
//! targets that must hold part of a run until its end are left out of that (loom's Session lists
//! every call; base-context's agent_end every message of its loop, a run without turns being
//! one), and held instead to holding that line's matter once and writing it out in parts.
//! Each pattern goes to the targets that hold state for it, and to one that holds none.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use agentgate::{translate, Dialect, Options};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        System.dealloc(p, layout);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Held by each test while it runs: the counts are the whole process's, so the tests of this
/// file run one at a time.
static COUNTING_NOW: Mutex<()> = Mutex::new(());

/// The most bytes held at once, beyond those held before, translating `input`.
fn peak(input: &[u8], from: Dialect, to: Dialect) -> usize {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let mut diagnostics = 0;
    translate(input, &mut io::sink(), &Options::new(Some(from), to), &mut |_| diagnostics += 1).unwrap();
    assert_eq!(diagnostics, 0, "{from} to {to}: the stream is meant to be clean");
    PEAK.load(Ordering::Relaxed) - before
}

/// loom numbers its turns and has no turn-start record: a cumulative snapshot per turn.
fn loom_turns(n: usize) -> String {
    (1..=n)
        .map(|t| {
            format!(
                "{{\"cached_input_tokens\":0,\"final_usage\":true,\"input_tokens\":120,\"kind\":\"Usage\",\"model\":\"m\",\"output_tokens\":7,\"schema_version\":1,\"turn\":{t}}}\n"
            )
        })
        .collect()
}

/// adal calls to bash that are never answered.
fn adal_calls(n: usize) -> String {
    (1..=n)
        .map(|i| {
            format!("{{\"type\":\"tool_call\",\"id\":\"c{i}\",\"name\":\"bash\",\"args\":{{\"command\":\"ls\"}}}}\n")
        })
        .collect()
}

/// wuu turns, each with a bash call that streams output and never completes.
fn wuu_open_calls(n: usize) -> String {
    let mut s = String::from(
        "{\"model\":\"m\",\"provider\":\"p\",\"type\":\"session_configured\",\"workspace_root\":\"/\"}\n\
         {\"cwd\":\"/\",\"model\":\"m\",\"provider\":\"p\",\"thread_id\":\"t\",\"type\":\"thread_started\"}\n",
    );
    for i in 1..=n {
        s += &format!(
            "{{\"thread_id\":\"t\",\"turn_id\":\"u{i}\",\"type\":\"turn_started\"}}\n\
             {{\"arguments\":\"{{}}\",\"item_id\":\"i{i}\",\"name\":\"bash\",\"thread_id\":\"t\",\"turn_id\":\"u{i}\",\"type\":\"tool_started\"}}\n\
             {{\"delta\":\"x\",\"item_id\":\"i{i}\",\"thread_id\":\"t\",\"turn_id\":\"u{i}\",\"type\":\"tool_output_delta\"}}\n\
             {{\"awaiting_auto_continuation\":false,\"input_tokens\":10,\"output_tokens\":2,\"thread_id\":\"t\",\"trace_path\":\"\",\"turn_id\":\"u{i}\",\"type\":\"turn_completed\"}}\n"
        );
    }
    s
}

/// A source, a stream of it n patterns long, and the targets it is translated to.
type Case = (Dialect, fn(usize) -> String, &'static [Dialect]);

#[test]
fn state_that_piles_up_is_let_go() {
    let _one = COUNTING_NOW.lock().unwrap_or_else(|e| e.into_inner());
    // The targets whose decoders, normalizer or encoders hold state for these patterns, and
    // one that holds none (a test in debug mode translates slowly: not every pair).
    let streams: [Case; 3] = [
        (Dialect::Loom, loom_turns, &[Dialect::Localcode, Dialect::Wuu, Dialect::Canonical]),
        (Dialect::Adal, adal_calls, &[Dialect::Wuu, Dialect::Adal, Dialect::Localcode]),
        (Dialect::Wuu, wuu_open_calls, &[Dialect::Wuu, Dialect::BaseContext, Dialect::Canonical]),
    ];
    for (from, make, targets) in streams {
        let (small, large) = (make(5_000), make(20_000));
        for &to in targets {
            let (a, b) = (peak(small.as_bytes(), from, to), peak(large.as_bytes(), from, to));
            // Four times the stream; the same tables, bounded (already full at the smaller size:
            // a few thousand calls at most). Canonical output hashes the whole input on a thread
            // of its own, fed batches of a quarter megabyte: how many are in flight at the peak
            // depends on its timing (loom to canonical peaked between 0.96 and 1.08 MB for 5,000
            // to 80,000 turns, not growing with them).
            let slack = if to == Dialect::Canonical { 512 * 1024 } else { 128 * 1024 };
            assert!(b < a + slack, "{from} to {to}: {a} bytes held at most for 5000, {b} for 20000");
            assert!(b < 16 << 20, "{from} to {to}: {b} bytes");
        }
    }
}

/// The output's longest line and its largest single write.
#[derive(Default)]
struct Lines {
    line: usize,
    longest: usize,
    largest_write: usize,
}

impl io::Write for Lines {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.largest_write = self.largest_write.max(buf.len());
        for &b in buf {
            if b == b'\n' {
                self.longest = self.longest.max(self.line);
                self.line = 0;
            } else {
                self.line += 1;
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// [`peak`], with the output's longest line and largest write.
fn peak_and_lines(input: &[u8], from: Dialect, to: Dialect) -> (usize, Lines) {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let mut out = Lines::default();
    translate(input, &mut out, &Options::new(Some(from), to), &mut |_| {}).unwrap();
    (PEAK.load(Ordering::Relaxed) - before, out)
}

/// adal calls to bash, each answered.
fn adal_answered(n: usize) -> String {
    (1..=n)
        .map(|i| {
            format!(
                "{{\"type\":\"tool_call\",\"id\":\"c{i}\",\"name\":\"bash\",\"args\":{{\"command\":\"ls\"}}}}\n\
                 {{\"type\":\"tool_result\",\"id\":\"c{i}\",\"name\":\"bash\",\"status\":\"completed\",\"output\":\"a\"}}\n"
            )
        })
        .collect()
}

/// The two lines that grow with the run (loom's Session lists every call, base-context's
/// agent_end every message of the loop, here a run of answered calls without turns) are held
/// no more than once: what a run holds grows by less per call than twice what the line gets
/// for it (the list's buffer grows by doubling), and the line goes out a block at a time, not
/// built whole a second time in the output buffer.
#[test]
fn the_lines_that_grow_with_the_run_are_written_in_parts_and_held_once() {
    let _one = COUNTING_NOW.lock().unwrap_or_else(|e| e.into_inner());
    // (target, bytes held per call at most, as a fraction of the line's bytes per call)
    for (to, most) in [(Dialect::Loom, 1.0), (Dialect::BaseContext, 2.0)] {
        let (a, small) = peak_and_lines(adal_answered(5_000).as_bytes(), Dialect::Adal, to);
        let (b, large) = peak_and_lines(adal_answered(20_000).as_bytes(), Dialect::Adal, to);
        let held = (b as f64 - a as f64) / 15_000.0;
        let line = (large.longest - small.longest) as f64 / 15_000.0;
        assert!(large.longest > 1 << 20, "{to}: the longest line, {} bytes, is the one that grows", large.longest);
        assert!(held < most * line, "{to}: {held} bytes held per call, for {line} bytes of the line");
        assert!(large.largest_write < 128 << 10, "{to}: a write of {} bytes", large.largest_write);
    }
}

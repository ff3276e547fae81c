//! The memory bound every target runs under: an allocator that aborts, as a crash libFuzzer
//! keeps the input of, on one allocation over [`MAX_ALLOCATION`] or the heap growing past
//! [`MAX_HEAP`].
//!
//! libFuzzer's `-malloc_limit_mb` needs a sanitizer's allocator hooks, which a build with
//! `--sanitizer none` (what runs on the stable toolchain) does not have, and `-rss_limit_mb` only
//! looks every second or so. This is exact, costs two atomic operations an allocation, and
//! holds on stable. Inputs are at most a few hundred kilobytes (`-max_len`), so either bound
//! crossed is memory out of all proportion to the input: a length taken from the input and
//! believed, or a table that grows without end.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The largest single allocation.
pub const MAX_ALLOCATION: usize = 256 << 20;

/// The most the heap may hold at once.
pub const MAX_HEAP: usize = 1 << 30;

static LIVE: AtomicUsize = AtomicUsize::new(0);

pub struct Capped;

#[global_allocator]
static ALLOCATOR: Capped = Capped;

fn over(what: &str, size: usize) -> ! {
    // No allocation here: the message is written as it is.
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(b"agentgate-fuzz: ");
    let _ = err.write_all(what.as_bytes());
    let _ = err.write_all(b" over the fuzz targets' memory bound: ");
    let mut digits = [0u8; 20];
    let mut n = size;
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let _ = err.write_all(&digits[at..]);
    let _ = err.write_all(b" bytes\n");
    std::process::abort();
}

fn grow(size: usize) {
    if size > MAX_ALLOCATION {
        over("an allocation", size);
    }
    let live = LIVE.fetch_add(size, Ordering::Relaxed) + size;
    if live > MAX_HEAP {
        over("a heap", live);
    }
}

unsafe impl GlobalAlloc for Capped {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grow(layout.size());
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grow(layout.size());
        System.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            grow(new_size - layout.size());
            if new_size > MAX_ALLOCATION {
                over("an allocation", new_size);
            }
        } else {
            LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        System.realloc(ptr, layout, new_size)
    }
}

/// The bytes the heap holds now.
pub fn live() -> usize {
    LIVE.load(Ordering::Relaxed)
}

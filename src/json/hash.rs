//! Small helpers of the fast layer that the contract tables use too: a remembered position
//! among a line's members, and the FNV-1a hasher for maps of short keys.

use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU8, Ordering};

/// A position among a line's members, remembered across lines: a dialect writes the members of
/// a kind in one order, so a field is nearly always where it was in the line before. Looking
/// there first makes finding a field one comparison that succeeds, where a search through the
/// members compared it with each before it and left the processor guessing where the search
/// stops (the line's order differs from the contract's). Only a hint: any value is safe, and
/// threads checking lines at once may overwrite each other's.
#[derive(Debug, Default)]
pub struct Seen(AtomicU8);

impl Seen {
    pub fn get(&self) -> usize {
        usize::from(self.0.load(Ordering::Relaxed))
    }

    pub fn set(&self, at: usize) {
        if let Ok(at) = u8::try_from(at) {
            self.0.store(at, Ordering::Relaxed);
        }
    }
}

impl Clone for Seen {
    fn clone(&self) -> Self {
        Seen(AtomicU8::new(self.0.load(Ordering::Relaxed)))
    }
}

/// Builds [`Fnv`] hashers, for a map of short keys that cannot grow without bound.
pub type FnvBuild = BuildHasherDefault<Fnv>;

/// FNV-1a, 64-bit.
pub struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

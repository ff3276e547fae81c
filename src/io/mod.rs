//! Reading the input: framing it into numbered lines (and hashing it for the ids derived from
//! it), and reading it on a thread of its own.

pub mod framing;
pub mod readahead;

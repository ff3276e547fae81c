//! Streams built from the dialects' contracts, translated and validated
//! ([`agentgate_fuzz::streams`]).
#![no_main]
libfuzzer_sys::fuzz_target!(|stream: agentgate_fuzz::streams::Stream| agentgate_fuzz::streams::check(stream));

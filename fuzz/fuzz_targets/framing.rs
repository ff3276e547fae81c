//! Any bytes under any line limit, framed whole, a few bytes a read and in blocks, against the
//! framing rules written the plain way ([`agentgate_fuzz::framing`]).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| agentgate_fuzz::framing::check(data));

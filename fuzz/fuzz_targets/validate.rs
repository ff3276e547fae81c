//! Any bytes validated, as the dialect the first byte names or detected
//! ([`agentgate_fuzz::validate`]).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| agentgate_fuzz::validate(data));

//! Any bytes as an ACP client's lines, read as `agentgate acp` reads them
//! ([`agentgate_fuzz::rpc`]).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| agentgate_fuzz::rpc::check(data));

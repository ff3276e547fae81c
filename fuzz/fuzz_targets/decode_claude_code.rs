//! Any bytes, framed and read by the claude-code decoder, line by line and then its `finish`.
#![no_main]
agentgate_fuzz::decode_target!(ClaudeCode);

//! Any bytes, framed and read by the base-context decoder, line by line and then its `finish`.
#![no_main]
agentgate_fuzz::decode_target!(BaseContext);

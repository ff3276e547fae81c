//! Any bytes read as claude-code through the whole pipeline, to the target the first byte names.
#![no_main]
agentgate_fuzz::pipeline_target!(ClaudeCode);

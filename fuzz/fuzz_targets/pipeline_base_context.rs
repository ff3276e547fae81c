//! Any bytes read as base-context through the whole pipeline, to the target the first byte names.
#![no_main]
agentgate_fuzz::pipeline_target!(BaseContext);

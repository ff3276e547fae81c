//! Any bytes read as wuu through the whole pipeline, to the target the first byte names.
#![no_main]
agentgate_fuzz::pipeline_target!(Wuu);

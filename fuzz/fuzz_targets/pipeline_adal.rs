//! Any bytes read as adal through the whole pipeline, to the target the first byte names.
#![no_main]
agentgate_fuzz::pipeline_target!(Adal);

//! Any bytes, read as any dialect and written as any other: no panic, and the output holds to
//! the target's contract. Seed it with the fixture transcripts (see the README).
#![no_main]

use agentgate::contract::check_stream;
use agentgate::{translate_bytes, Dialect, Options};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for from in Dialect::all() {
        for to in Dialect::all() {
            let (out, _, _) = translate_bytes(data, &Options::new(Some(from), to));
            let text = String::from_utf8(out).expect("output is UTF-8");
            if from != to {
                let problems = check_stream(to.contract(), &text);
                assert!(problems.is_empty(), "{from} to {to}: {problems:?}");
            }
        }
    }
});

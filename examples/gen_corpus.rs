//! Scales a fixture transcript up to a size, for `scripts/bench.sh` and profiling:
//! `cargo run --release --example gen_corpus -- FIXTURE MEGABYTES > big.jsonl`.
//! How it scales: `benches/support/corpus.rs`, which the benches share.

use std::io::{self, BufWriter, Write};

#[path = "../benches/support/corpus.rs"]
mod corpus;

fn main() -> io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(mb)) = (args.get(1), args.get(2).and_then(|m| m.parse::<usize>().ok())) else {
        eprintln!("usage: gen_corpus FIXTURE MEGABYTES");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(path)?;
    let mut out = BufWriter::new(io::stdout().lock());
    if let Err(e) = corpus::scale(&text, mb * 1_000_000, &mut out) {
        eprintln!("gen_corpus: {path}: {e}");
        std::process::exit(2);
    }
    out.flush()
}

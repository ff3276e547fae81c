//! Scales a fixture transcript up to a size, for `scripts/bench.sh` and profiling:
//! `cargo run --release --example gen_corpus -- FIXTURE MEGABYTES > big.jsonl`.
//! The body (every line but the last) is repeated with its ids made distinct per copy; the
//! last line (the terminal record, where the dialect has one) ends the stream once.

use std::io::{self, BufWriter, Write};

fn main() -> io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(mb)) = (args.get(1), args.get(2).and_then(|m| m.parse::<usize>().ok())) else {
        eprintln!("usage: gen_corpus FIXTURE MEGABYTES");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(path)?;
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let (body, last) = lines.split_at(lines.len().saturating_sub(1));
    let mut out = BufWriter::new(io::stdout().lock());
    let mut written = 0;
    let mut copy = 0;
    while written < mb * 1_000_000 && !body.is_empty() {
        copy += 1;
        for line in body {
            // Distinct ids per copy: every id-like string value gets the copy number.
            let mut line = line.to_string();
            for prefix in ["call", "item-", "toolu_", "c1", "p1", "p2", "t1", "t2", "u1", "f1", "k1", "k2", "x1"] {
                line = line.replace(&format!(":\"{prefix}"), &format!(":\"{copy}-{prefix}"));
            }
            out.write_all(line.as_bytes())?;
            out.write_all(b"\n")?;
            written += line.len() + 1;
        }
    }
    for line in last {
        writeln!(out, "{line}")?;
    }
    out.flush()
}

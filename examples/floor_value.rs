//! The generic floor for `scripts/bench.sh`: parse each line into a `serde_json::Value` and
//! print it back, nothing else. Translation should beat this.

use std::io::{self, BufRead, BufWriter, Write};

fn main() -> io::Result<()> {
    let stdin = io::stdin().lock();
    let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    for line in stdin.lines() {
        let line = line?;
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) {
            serde_json::to_writer(&mut out, &v)?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()
}

//! The near-limit floor for `scripts/bench.sh`: split each object into (key, raw JSON value)
//! pairs with serde_json's `RawValue` and print them back: scanning and copying, no tree.

use std::io::{self, BufRead, BufWriter, Write};

use indexmap::IndexMap;
use serde_json::value::RawValue;

fn main() -> io::Result<()> {
    let stdin = io::stdin().lock();
    let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    for line in stdin.lines() {
        let line = line?;
        let Ok(pairs) = serde_json::from_str::<IndexMap<String, &RawValue>>(&line) else { continue };
        out.write_all(b"{")?;
        for (i, (k, v)) in pairs.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            serde_json::to_writer(&mut out, k)?;
            out.write_all(b":")?;
            out.write_all(v.get().as_bytes())?;
        }
        out.write_all(b"}\n")?;
    }
    out.flush()
}

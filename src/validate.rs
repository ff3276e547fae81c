//! `validate`: a stream checked against its dialect's contract (`mappings/`), line by line, in
//! constant memory but for the lines held while its dialect is told.

use serde_json::Value;

use crate::codec::Dialect;
use crate::contract::{Finding, StreamCheck};
use crate::dialect::Detector;
use crate::io::framing::{Frame, Input, Lines, DEFAULT_MAX_LINE_BYTES};
use crate::pipeline::DETECT_LINES;

/// Checks a stream against its dialect's contract (`mappings/`): every line, the terminal
/// record, the ordering rules. `dialect` `None` detects it from the first lines. Each finding
/// (a problem or a warning, with its line number, 0 for the stream as a whole, and its rule)
/// goes to `found`, in the order of the lines. Gives the dialect checked, or why none could be
/// told.
pub fn validate<R: Input>(
    input: R,
    dialect: Option<Dialect>,
    found: &mut dyn FnMut(Finding),
) -> Result<Dialect, String> {
    /// A line as framing gave it.
    enum Item {
        Text(String),
        Bad(String),
        Blank,
    }
    fn feed(check: &mut StreamCheck<'_>, (n, item): (u64, Item)) {
        match item {
            Item::Text(text) => check.numbered_line(n, &text),
            Item::Bad(p) => check.problem(n, p),
            Item::Blank => check.blank(n),
        }
    }

    let mut lines = Lines::new(input, DEFAULT_MAX_LINE_BYTES);
    // Nothing here is derived from the input's digest.
    lines.stop_hashing();
    let mut detector = Detector::default();
    let mut held: Vec<(u64, Item)> = Vec::new();
    let mut check = dialect.map(|d| (d, StreamCheck::new(d.contract())));
    while let Some((n, frame)) = lines.next_frame().map_err(|e| format!("cannot read the input: {e}"))? {
        let item = match frame {
            Frame::Blank => Item::Blank,
            Frame::Text(t) => Item::Text(t.to_string()),
            Frame::TooLong(len) => Item::Bad(format!("line is {len} bytes, longer than the limit")),
            Frame::NotUtf8(at, _) => Item::Bad(format!("not valid UTF-8 (bad byte at offset {at})")),
        };
        if let Some((_, c)) = check.as_mut() {
            feed(c, (n, item));
            continue;
        }
        // Detecting: hold the lines until the dialect is known.
        let found = match &item {
            Item::Text(t) => match serde_json::from_str::<Value>(t) {
                Ok(Value::Object(m)) => detector.feed(&m),
                _ => None,
            },
            _ => None,
        };
        held.push((n, item));
        let found = match found {
            Some(d) => Some(d),
            None if held.len() >= DETECT_LINES => Some(detector.finish()?),
            None => None,
        };
        if let Some(d) = found {
            let mut c = StreamCheck::new(d.contract());
            held.drain(..).for_each(|item| feed(&mut c, item));
            check = Some((d, c));
        }
    }
    let (dialect, mut check) = match check {
        Some(found) => found,
        None => {
            let d = detector.finish()?;
            (d, StreamCheck::new(d.contract()))
        }
    };
    held.into_iter().for_each(|item| feed(&mut check, item));
    for f in check.finish() {
        found(f);
    }
    Ok(dialect)
}

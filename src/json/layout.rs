//! How each agent lays out a JSON line: separators, key order, escapes and number forms.

/// How an agent lays out its JSON lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `{"a":1,"b":[1,2]}`: Rust's serde_json, and JavaScript's `JSON.stringify` but for some
    /// floats a `Value` writes: `JSON.stringify` writes plain from 1e-6 up to 1e21 where
    /// serde_json writes `3.5e-6` and `1e+20`, and `0` for -0 (`-0.0`). Any JSON reader reads
    /// them alike, and a JS agent's own lines are copied as read (`tests/layouts.rs`).
    Compact,
    /// `{"a": 1, "b": [1, 2]}`: Python's `json.dumps` with its default separators.
    Spaced,
    /// Rust's serde_json on a BTreeMap: compact, keys sorted at every depth.
    Sorted,
    /// Go's `encoding/json` on a map: compact, keys sorted at every depth, `<`, `>`, `&`,
    /// U+2028 and U+2029 escaped as `\u003c`...; backspace and form feed as `\b` and `\f`, as
    /// Go writes them since 1.22 (wuu's go.mod asks for 1.26; before 1.22 they were `\u0008`
    /// and `\u000c`). Held to Go's own output by `tests/oracle/go-json-encoder.jsonl`.
    Go,
}

pub(crate) fn sorted(layout: Layout) -> bool {
    matches!(layout, Layout::Sorted | Layout::Go)
}

/// Between members or elements, and between a key and its value.
pub(crate) fn separators(layout: Layout) -> (&'static [u8], &'static [u8]) {
    if layout == Layout::Spaced {
        (b", ", b": ")
    } else {
        (b",", b":")
    }
}

//! The dialect registry: one enum, one `match` per operation. Each dialect lives in its own
//! folder with its decoder and encoder side by side; they meet only in the canonical model
//! ([`crate::model`]). Adding a dialect touches its folder, this file and its contract in
//! `mappings/`.

use serde_json::{Map, Value};

use crate::codec::{Decode, Decoded, Dialect, Encode, EncodeOptions, LineError, Sniff};
use crate::json::object::Object;

pub mod adal;
pub mod base_context;
pub mod canonical;
pub mod claude_code;
pub mod codex;
pub mod localcode;
pub mod loom;
pub mod otlp;
pub mod util;
pub mod wuu;

/// The registry: each dialect's decoder, encoder and detection.
impl Dialect {
    pub fn decoder(self) -> Box<dyn Decode> {
        match self {
            Dialect::Localcode => Box::new(localcode::Decoder::new()),
            Dialect::Adal => Box::new(adal::Decoder::new()),
            Dialect::Wuu => Box::new(wuu::Decoder::new()),
            Dialect::Loom => Box::new(loom::Decoder::new()),
            Dialect::BaseContext => Box::new(base_context::Decoder::new()),
            Dialect::ClaudeCode => Box::new(claude_code::Decoder::new()),
            Dialect::Codex => Box::new(codex::Decoder::new()),
            Dialect::Canonical => Box::new(canonical::Decoder::new()),
            Dialect::Otlp => Box::new(WriteOnly),
        }
    }

    pub fn encoder(self, opts: &EncodeOptions) -> Box<dyn Encode> {
        match self {
            Dialect::Localcode => Box::new(localcode::Encoder::new()),
            Dialect::Adal => Box::new(adal::Encoder::new()),
            Dialect::Wuu => Box::new(wuu::Encoder::new()),
            Dialect::Loom => Box::new(loom::Encoder::new()),
            Dialect::BaseContext => Box::new(base_context::Encoder::new(opts)),
            Dialect::ClaudeCode => Box::new(claude_code::Encoder::new(opts)),
            Dialect::Codex => Box::new(codex::Encoder::new()),
            Dialect::Canonical => Box::new(canonical::Encoder::new()),
            Dialect::Otlp => Box::new(otlp::Encoder::new(opts)),
        }
    }

    /// How surely a line belongs to this dialect.
    pub fn sniff(self, line: &Map<String, Value>) -> Sniff {
        match self {
            Dialect::Localcode => localcode::sniff(line),
            Dialect::Adal => adal::sniff(line),
            Dialect::Wuu => wuu::sniff(line),
            Dialect::Loom => loom::sniff(line),
            Dialect::BaseContext => base_context::sniff(line),
            Dialect::ClaudeCode => claude_code::sniff(line),
            Dialect::Codex => codex::sniff(line),
            Dialect::Canonical => canonical::sniff(line),
            Dialect::Otlp => Sniff::No,
        }
    }
}

/// The decoder of a format agentgate only writes: it refuses the stream.
struct WriteOnly;

impl Decode for WriteOnly {
    fn decode(&mut self, _line: Object<'_>, _out: &mut Decoded) -> Result<(), LineError> {
        Err(LineError::fatal("otlp is written, not read: give the agent's own stream"))
    }
}

/// The order dialects are asked in: the most specific marks first (a canonical line carries
/// `v` beside a `type` that other dialects use too).
const DETECT_ORDER: [Dialect; 8] = [
    Dialect::Canonical,
    Dialect::Loom,
    Dialect::Wuu,
    Dialect::BaseContext,
    Dialect::Codex,
    Dialect::ClaudeCode,
    Dialect::Localcode,
    Dialect::Adal,
];

/// Decides the dialect of a stream from its first lines: the first line that only one
/// dialect claims decides; lines that several dialects could hold narrow the choice.
#[derive(Debug, Default)]
pub struct Detector {
    maybe: Vec<Dialect>,
    lines: usize,
}

impl Detector {
    /// Looks at one line; `Some` once the dialect is certain.
    pub fn feed(&mut self, line: &Map<String, Value>) -> Option<Dialect> {
        self.lines += 1;
        let mut fits = Vec::new();
        for d in DETECT_ORDER {
            match d.sniff(line) {
                Sniff::Yes => return Some(d),
                Sniff::Maybe => fits.push(d),
                Sniff::No => {}
            }
        }
        if !fits.is_empty() {
            if self.maybe.is_empty() {
                self.maybe = fits;
            } else {
                self.maybe.retain(|d| fits.contains(d));
            }
        }
        None
    }

    /// The decision once no more lines come: the one dialect every line fitted, or why not.
    pub fn finish(&self) -> Result<Dialect, String> {
        match self.maybe.as_slice() {
            [d] => Ok(*d),
            [] if self.lines == 0 => Err("no records to tell the dialect from".into()),
            [] => Err("no line looks like any known dialect".into()),
            many => Err(format!(
                "the lines fit several dialects ({}); name one with --from",
                many.iter().map(|d| d.name()).collect::<Vec<_>>().join(", ")
            )),
        }
    }
}

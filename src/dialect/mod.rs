//! The dialect registry: one table (`REGISTRY`) of each format's decoder, encoder and
//! detection, in detection order. Each dialect lives in its own folder with its decoder and
//! encoder side by side; they meet only in the canonical model ([`crate::model`]). Adding a
//! dialect touches its folder, its entry here, its variant in `codec.rs` and its contract in
//! `mappings/` (CONTRIBUTING.md, Adding a dialect, has the whole list).

use serde_json::{Map, Value};

use crate::codec::{Decode, Decoded, Dialect, Encode, EncodeOptions, LineError, Sniff};
use crate::json::object::Object;

pub mod acp;
pub mod adal;
pub mod base_context;
pub mod canonical;
pub mod claude_code;
pub mod codex;
pub mod gemini;
pub mod localcode;
pub mod loom;
pub mod otlp;
pub mod util;
pub mod wuu;

/// One dialect's entry in the registry: how its decoder and encoder are made, and how a line is
/// told to be its.
struct Entry {
    dialect: Dialect,
    decoder: fn() -> Box<dyn Decode>,
    encoder: fn(&EncodeOptions) -> Box<dyn Encode>,
    sniff: fn(&Map<String, Value>) -> Sniff,
}

/// The registry: every format, in the order detection asks them (the most specific marks first:
/// a JSON-RPC message is no dialect's line, a canonical line carries `v` beside a `type` that
/// other dialects use too). Adding a dialect adds its entry here.
const REGISTRY: [Entry; 11] = [
    Entry {
        dialect: Dialect::Acp,
        decoder: || Box::new(acp::decode::Decoder::new()),
        encoder: |_| Box::new(ReadOnly),
        sniff: acp::sniff,
    },
    Entry {
        dialect: Dialect::Canonical,
        decoder: || Box::new(canonical::Decoder::new()),
        encoder: |_| Box::new(canonical::Encoder::new()),
        sniff: canonical::sniff,
    },
    Entry {
        dialect: Dialect::Loom,
        decoder: || Box::new(loom::Decoder::new()),
        encoder: |_| Box::new(loom::Encoder::new()),
        sniff: loom::sniff,
    },
    Entry {
        dialect: Dialect::Wuu,
        decoder: || Box::new(wuu::Decoder::new()),
        encoder: |_| Box::new(wuu::Encoder::new()),
        sniff: wuu::sniff,
    },
    Entry {
        dialect: Dialect::BaseContext,
        decoder: || Box::new(base_context::Decoder::new()),
        encoder: |o| Box::new(base_context::Encoder::new(o)),
        sniff: base_context::sniff,
    },
    Entry {
        dialect: Dialect::Codex,
        decoder: || Box::new(codex::Decoder::new()),
        encoder: |_| Box::new(codex::Encoder::new()),
        sniff: codex::sniff,
    },
    Entry {
        dialect: Dialect::Gemini,
        decoder: || Box::new(gemini::Decoder::new()),
        encoder: |o| Box::new(gemini::Encoder::new(o)),
        sniff: gemini::sniff,
    },
    Entry {
        dialect: Dialect::ClaudeCode,
        decoder: || Box::new(claude_code::Decoder::new()),
        encoder: |o| Box::new(claude_code::Encoder::new(o)),
        sniff: claude_code::sniff,
    },
    Entry {
        dialect: Dialect::Localcode,
        decoder: || Box::new(localcode::Decoder::new()),
        encoder: |_| Box::new(localcode::Encoder::new()),
        sniff: localcode::sniff,
    },
    Entry {
        dialect: Dialect::Adal,
        decoder: || Box::new(adal::Decoder::new()),
        encoder: |_| Box::new(adal::Encoder::new()),
        sniff: adal::sniff,
    },
    Entry {
        dialect: Dialect::Otlp,
        decoder: || Box::new(WriteOnly),
        encoder: |o| Box::new(otlp::Encoder::new(o)),
        sniff: |_| Sniff::No,
    },
];

/// The registry's entry of a format (every variant has one: the unit test below holds it so).
fn entry(d: Dialect) -> &'static Entry {
    REGISTRY.iter().find(|e| e.dialect == d).expect("every dialect is registered")
}

impl Dialect {
    pub fn decoder(self) -> Box<dyn Decode> {
        (entry(self).decoder)()
    }

    pub fn encoder(self, opts: &EncodeOptions) -> Box<dyn Encode> {
        (entry(self).encoder)(opts)
    }

    /// How surely a line belongs to this dialect.
    pub fn sniff(self, line: &Map<String, Value>) -> Sniff {
        (entry(self).sniff)(line)
    }
}

/// The decoder of a format agentgate only writes: it refuses the stream.
struct WriteOnly;

impl Decode for WriteOnly {
    fn decode(&mut self, _line: Object<'_>, _out: &mut Decoded) -> Result<(), LineError> {
        Err(LineError::fatal("otlp is written, not read: give the agent's own stream"))
    }
}

/// The encoder of a format agentgate only reads (acp, which `agentgate acp` serves): it writes
/// nothing (the command line offers no such target).
struct ReadOnly;

impl Encode for ReadOnly {
    fn encode(
        &mut self,
        _rec: &crate::codec::Record,
        _ctx: &crate::codec::Context,
        _sink: &mut crate::codec::Sink<'_>,
    ) -> crate::report::Fate {
        crate::report::Fate::Dropped
    }
}

/// Decides the dialect of a stream from its first lines, and never guesses: a dialect is named
/// only when the lines seen fit its contract and nothing in them contradicts it. The first line
/// that only one dialect claims decides; lines that several dialects could hold narrow the
/// choice; a line that rules a dialect out keeps later lines from naming it: one its `sniff`
/// says is not its ([`Sniff::Against`]), one of a kind its contract lists that the contract
/// does not take (a required member missing, a JSON type or listed value not the spec's).
/// Lines no dialect claims (another agent's: Qwen Code's `session_start`, opencode's
/// `step_start`) name none: "cannot tell".
#[derive(Debug, Default)]
pub struct Detector {
    maybe: Vec<Dialect>,
    ruled_out: Vec<Dialect>,
    lines: usize,
}

impl Detector {
    /// Whether `line` contradicts `d`: of a kind `d`'s contract lists, but not as the contract
    /// takes it. (Which kind comes first is left to `validate`: a stream cut at its start, or
    /// a single line, is still its dialect's.)
    fn contradicts(&mut self, d: Dialect, line: &Map<String, Value>, claimed: bool) -> bool {
        let c = d.contract();
        let Some(kind) = line.get(&c.type_field).and_then(Value::as_str) else { return claimed };
        let listed = c.kind(kind).is_some();
        if !listed && !claimed {
            // Not one of its kinds: its readers skip it (where they skip unknown kinds).
            return false;
        }
        !c.fits_line(&Value::Object(line.clone()))
    }

    /// Looks at one line; `Some` once the dialect is certain.
    pub fn feed(&mut self, line: &Map<String, Value>) -> Option<Dialect> {
        self.lines += 1;
        let mut fits = Vec::new();
        let mut named = None;
        for d in REGISTRY.iter().map(|e| e.dialect) {
            if self.ruled_out.contains(&d) {
                continue;
            }
            let sniff = d.sniff(line);
            let claimed = matches!(sniff, Sniff::Yes | Sniff::Maybe);
            if sniff == Sniff::Against || (d != Dialect::Acp && self.contradicts(d, line, claimed)) {
                self.ruled_out.push(d);
                continue;
            }
            match sniff {
                Sniff::Yes if named.is_none() => named = Some(d),
                Sniff::Yes | Sniff::Maybe => fits.push(d),
                Sniff::Against | Sniff::No => {}
            }
        }
        if named.is_some() {
            return named;
        }
        self.maybe.retain(|d| !self.ruled_out.contains(d));
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
            [] => Err("its lines fit no dialect's contract (another agent's stream?); name one with --from".into()),
            many => Err(format!(
                "the lines fit several dialects ({}); name one with --from",
                many.iter().map(|d| d.name()).collect::<Vec<_>>().join(", ")
            )),
        }
    }
}

#[cfg(test)]
mod registry {
    use strum::IntoEnumIterator;

    use super::*;

    #[test]
    fn every_format_has_one_entry() {
        for d in Dialect::iter() {
            assert_eq!(REGISTRY.iter().filter(|e| e.dialect == d).count(), 1, "{d}");
        }
        assert_eq!(REGISTRY.len(), Dialect::iter().count());
    }
}

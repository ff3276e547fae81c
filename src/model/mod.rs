//! The canonical model: the events every dialect decodes into and encodes from
//! ([`event`]), and the members of a source line the events have no field for ([`extra`]).
//! It depends on the JSON layer ([`crate::json`]) and on nothing else of the crate.

pub mod event;
pub mod extra;

pub use event::*;
pub use extra::Extra;

//! [`write_serialize`]: any `Serialize` written as serde_json writes it, with the fast layer's
//! string writer, and the hand-off by which a kept [`crate::json::text::Text`] or JSON text is
//! written as it is.

use crate::json::escape::write_str;
use crate::json::layout::Layout;

/// Appends `value` (any `Serialize`) as compact JSON, byte for byte what `serde_json` writes,
/// strings escaped by [`write_str`]: serde_json's own escaping looks up every byte in a table,
/// which made it most of the cost of writing canonical lines.
pub fn write_serialize<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> Result<(), SerError> {
    let outer = OURS.replace(true);
    let done = value.serialize(&mut Ser { out });
    OURS.set(outer);
    done
}

thread_local! {
    /// Whether the serializer at work on this thread is [`write_serialize`]'s.
    static OURS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Serializes `inner`, the inside of a JSON string literal escaped as the compact layout
/// escapes, as it is when the serializer is [`write_serialize`]'s (which takes bytes for such
/// an inside); gives the serializer back when it is another, which must be given characters.
pub(crate) fn serialize_literal<S: serde::Serializer>(s: S, inner: &str) -> Result<Result<S::Ok, S::Error>, S> {
    if OURS.get() {
        Ok(s.serialize_bytes(inner.as_bytes()))
    } else {
        Err(s)
    }
}

/// Serializes `json`, JSON text in serde_json's compact form, as it is when the serializer is
/// [`write_serialize`]'s; gives the serializer back when it is another. The serializer is told
/// by a flag that its next `serialize_bytes` is JSON text: a serde wrapper that held bytes back
/// and gave others first would pair the flag with the wrong bytes (serde's flatten and tagging,
/// which canonical's events go through, forward each call at once).
pub(crate) fn serialize_json<S: serde::Serializer>(s: S, json: &str) -> Result<Result<S::Ok, S::Error>, S> {
    if OURS.get() {
        RAW_NEXT.set(true);
        Ok(s.serialize_bytes(json.as_bytes()))
    } else {
        Err(s)
    }
}

thread_local! {
    /// The next bytes [`write_serialize`]'s serializer is given are JSON text, not the inside
    /// of a string literal (see [`serialize_json`]).
    static RAW_NEXT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Why a value could not be written as JSON (a map key that is not a string).
#[derive(Debug)]
pub struct SerError(String);

impl std::fmt::Display for SerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SerError {}

impl serde::ser::Error for SerError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        SerError(msg.to_string())
    }
}

struct Ser<'a> {
    out: &'a mut Vec<u8>,
}

impl Ser<'_> {
    fn display(&mut self, n: impl std::fmt::Display) -> Result<(), SerError> {
        use std::io::Write;
        write!(self.out, "{n}").map_err(|e| SerError(e.to_string()))
    }
}

/// An array, object or struct being written: whether a member came yet, and what closes it.
struct Compound<'s, 'a> {
    ser: &'s mut Ser<'a>,
    first: bool,
    close: &'static [u8],
}

impl Compound<'_, '_> {
    fn comma(&mut self) {
        if !std::mem::take(&mut self.first) {
            self.ser.out.push(b',');
        }
    }
}

impl<'s, 'a> serde::Serializer for &'s mut Ser<'a> {
    type Ok = ();
    type Error = SerError;
    type SerializeSeq = Compound<'s, 'a>;
    type SerializeTuple = Compound<'s, 'a>;
    type SerializeTupleStruct = Compound<'s, 'a>;
    type SerializeTupleVariant = Compound<'s, 'a>;
    type SerializeMap = Compound<'s, 'a>;
    type SerializeStruct = Compound<'s, 'a>;
    type SerializeStructVariant = Compound<'s, 'a>;

    fn serialize_bool(self, v: bool) -> Result<(), SerError> {
        self.out.extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Result<(), SerError> {
        self.display(v)
    }
    fn serialize_i16(self, v: i16) -> Result<(), SerError> {
        self.display(v)
    }
    fn serialize_i32(self, v: i32) -> Result<(), SerError> {
        self.display(v)
    }
    fn serialize_i64(self, v: i64) -> Result<(), SerError> {
        self.display(v)
    }
    fn serialize_i128(self, v: i128) -> Result<(), SerError> {
        self.display(v)
    }
    fn serialize_u8(self, v: u8) -> Result<(), SerError> {
        self.display(v)
    }
    fn serialize_u16(self, v: u16) -> Result<(), SerError> {
        self.display(v)
    }
    fn serialize_u32(self, v: u32) -> Result<(), SerError> {
        self.display(v)
    }
    fn serialize_u64(self, v: u64) -> Result<(), SerError> {
        self.display(v)
    }
    fn serialize_u128(self, v: u128) -> Result<(), SerError> {
        self.display(v)
    }
    fn serialize_f32(self, v: f32) -> Result<(), SerError> {
        // serde_json's float formatting (ryu; null for what JSON has no number for).
        serde_json::to_writer(&mut *self.out, &v).map_err(|e| SerError(e.to_string()))
    }
    fn serialize_f64(self, v: f64) -> Result<(), SerError> {
        serde_json::to_writer(&mut *self.out, &v).map_err(|e| SerError(e.to_string()))
    }
    fn serialize_char(self, v: char) -> Result<(), SerError> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<(), SerError> {
        write_str(self.out, v, Layout::Compact);
        Ok(())
    }
    /// Bytes are the inside of a string literal escaped already (see [`serialize_literal`]):
    /// no type of ours serializes bytes otherwise.
    fn serialize_bytes(self, v: &[u8]) -> Result<(), SerError> {
        if RAW_NEXT.replace(false) {
            self.out.extend_from_slice(v);
            return Ok(());
        }
        self.out.reserve(v.len() + 2);
        self.out.push(b'"');
        self.out.extend_from_slice(v);
        self.out.push(b'"');
        Ok(())
    }
    fn serialize_none(self) -> Result<(), SerError> {
        self.serialize_unit()
    }
    fn serialize_some<T: serde::Serialize + ?Sized>(self, v: &T) -> Result<(), SerError> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), SerError> {
        self.out.extend_from_slice(b"null");
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), SerError> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<(), SerError> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: serde::Serialize + ?Sized>(self, _: &'static str, v: &T) -> Result<(), SerError> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: serde::Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<(), SerError> {
        self.out.push(b'{');
        write_str(self.out, variant, Layout::Compact);
        self.out.push(b':');
        v.serialize(&mut *self)?;
        self.out.push(b'}');
        Ok(())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Compound<'s, 'a>, SerError> {
        self.out.push(b'[');
        Ok(Compound { ser: self, first: true, close: b"]" })
    }
    fn serialize_tuple(self, len: usize) -> Result<Compound<'s, 'a>, SerError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Compound<'s, 'a>, SerError> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Compound<'s, 'a>, SerError> {
        self.out.push(b'{');
        write_str(self.out, variant, Layout::Compact);
        self.out.extend_from_slice(b":[");
        Ok(Compound { ser: self, first: true, close: b"]}" })
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Compound<'s, 'a>, SerError> {
        self.out.push(b'{');
        Ok(Compound { ser: self, first: true, close: b"}" })
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Compound<'s, 'a>, SerError> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Compound<'s, 'a>, SerError> {
        self.out.push(b'{');
        write_str(self.out, variant, Layout::Compact);
        self.out.extend_from_slice(b":{");
        Ok(Compound { ser: self, first: true, close: b"}}" })
    }
}

impl serde::ser::SerializeSeq for Compound<'_, '_> {
    type Ok = ();
    type Error = SerError;
    fn serialize_element<T: serde::Serialize + ?Sized>(&mut self, v: &T) -> Result<(), SerError> {
        self.comma();
        v.serialize(&mut *self.ser)
    }
    fn end(self) -> Result<(), SerError> {
        self.ser.out.extend_from_slice(self.close);
        Ok(())
    }
}

impl serde::ser::SerializeTuple for Compound<'_, '_> {
    type Ok = ();
    type Error = SerError;
    fn serialize_element<T: serde::Serialize + ?Sized>(&mut self, v: &T) -> Result<(), SerError> {
        serde::ser::SerializeSeq::serialize_element(self, v)
    }
    fn end(self) -> Result<(), SerError> {
        serde::ser::SerializeSeq::end(self)
    }
}

impl serde::ser::SerializeTupleStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = SerError;
    fn serialize_field<T: serde::Serialize + ?Sized>(&mut self, v: &T) -> Result<(), SerError> {
        serde::ser::SerializeSeq::serialize_element(self, v)
    }
    fn end(self) -> Result<(), SerError> {
        serde::ser::SerializeSeq::end(self)
    }
}

impl serde::ser::SerializeTupleVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = SerError;
    fn serialize_field<T: serde::Serialize + ?Sized>(&mut self, v: &T) -> Result<(), SerError> {
        serde::ser::SerializeSeq::serialize_element(self, v)
    }
    fn end(self) -> Result<(), SerError> {
        serde::ser::SerializeSeq::end(self)
    }
}

impl serde::ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = SerError;
    fn serialize_key<T: serde::Serialize + ?Sized>(&mut self, key: &T) -> Result<(), SerError> {
        self.comma();
        let at = self.ser.out.len();
        key.serialize(&mut *self.ser)?;
        if self.ser.out.get(at) != Some(&b'"') {
            // JSON keys are strings; no key of ours is anything else.
            return Err(SerError("a map key that is not a string".into()));
        }
        Ok(())
    }
    fn serialize_value<T: serde::Serialize + ?Sized>(&mut self, v: &T) -> Result<(), SerError> {
        self.ser.out.push(b':');
        v.serialize(&mut *self.ser)
    }
    fn end(self) -> Result<(), SerError> {
        self.ser.out.extend_from_slice(self.close);
        Ok(())
    }
}

impl serde::ser::SerializeStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = SerError;
    fn serialize_field<T: serde::Serialize + ?Sized>(&mut self, key: &'static str, v: &T) -> Result<(), SerError> {
        self.comma();
        write_str(self.ser.out, key, Layout::Compact);
        self.ser.out.push(b':');
        v.serialize(&mut *self.ser)
    }
    fn end(self) -> Result<(), SerError> {
        self.ser.out.extend_from_slice(self.close);
        Ok(())
    }
}

impl serde::ser::SerializeStructVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = SerError;
    fn serialize_field<T: serde::Serialize + ?Sized>(&mut self, key: &'static str, v: &T) -> Result<(), SerError> {
        serde::ser::SerializeStruct::serialize_field(self, key, v)
    }
    fn end(self) -> Result<(), SerError> {
        self.ser.out.extend_from_slice(self.close);
        Ok(())
    }
}

//! [`Member`]: one member's value of a line as read (its JSON text, borrowed) or as put there
//! since (a `Value`), and what reads a value written in more than one way (counts as strings
//! or integers).

use std::borrow::Cow;

use serde_json::Value;

use crate::json::escape::unescape;
use crate::json::layout::Layout;
use crate::json::number::plain_u64_value;
use crate::json::text::{AsIs, Name};

/// One member's value: its JSON text as it came (for a string, with which layouts write its
/// inside as it is, where the scan could tell), or a value put there since.
#[derive(Debug, Clone)]
pub enum Member<'a> {
    Raw(&'a str, AsIs),
    /// Boxed: most members are raw, and a member the size of a `Value` would make every
    /// line's member list (and each move in it) twice as large.
    Value(Box<Value>),
}

impl<'a> Member<'a> {
    /// A member holding `v`.
    pub fn value(v: Value) -> Self {
        Member::Value(Box::new(v))
    }

    /// The value as a `Value` tree. A raw member always has one: [`Object::parse`] refuses a
    /// line with anything a `Value` cannot hold (a lone surrogate, nesting past serde_json's
    /// limit, a number beyond f64), as serde_json refuses it.
    pub fn to_value(&self) -> Value {
        match self {
            Member::Raw(r, as_is) => simple_value(r, *as_is).unwrap_or_else(|| {
                let parsed = serde_json::from_str(r);
                debug_assert!(parsed.is_ok(), "a member the parse passed is no Value: {r}");
                parsed.unwrap_or(Value::Null)
            }),
            Member::Value(v) => (**v).clone(),
        }
    }

    pub fn into_value(self) -> Value {
        match self {
            Member::Raw(_, _) => self.to_value(),
            Member::Value(v) => *v,
        }
    }

    /// The value if it is a string. Without escapes, a raw string is its own text.
    pub fn as_str(&self) -> Option<Cow<'_, str>> {
        match self {
            Member::Raw(r, as_is) => raw_str(r, *as_is),
            Member::Value(v) => v.as_str().map(Cow::Borrowed),
        }
    }

    /// The value if it is a string, borrowed from the line where it can be; else the member
    /// back.
    pub fn into_str(self) -> Result<Cow<'a, str>, Self> {
        match self {
            Member::Raw(r, as_is) => raw_str(r, as_is).ok_or(self),
            Member::Value(v) => match *v {
                Value::String(s) => Ok(Cow::Owned(s)),
                v => Err(Member::value(v)),
            },
        }
    }

    /// The value if it is an integer from 0 to `u64::MAX`, read without building a value for
    /// the common case.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            // A leading zero was refused by the scan.
            Member::Raw(r, _) => plain_u64_value(r).or_else(|| self.to_value().as_u64()),
            Member::Value(v) => v.as_u64(),
        }
    }

    pub fn is_null(&self) -> bool {
        match self {
            Member::Raw(r, _) => *r == "null",
            Member::Value(v) => v.is_null(),
        }
    }

    /// What [`Object::take_str`] takes of this member: `Some` where it is taken (a string; a
    /// number or boolean as its JSON text; `None` for null), `None` where it stays (an object
    /// or array, kept as an unknown member). As any string type: a `String`, a [`Name`].
    #[inline]
    pub fn text_taken<T: for<'s> From<&'s str> + From<String>>(&self) -> Option<Option<T>> {
        if let Some(s) = self.as_str() {
            return Some(Some(match s {
                Cow::Borrowed(b) => T::from(b),
                Cow::Owned(o) => T::from(o),
            }));
        }
        Some(match self.scalar()? {
            Value::Null => None,
            other => Some(T::from(other.to_string())),
        })
    }

    /// [`Member::text_taken`] as a `String`.
    #[inline]
    pub fn str_taken(&self) -> Option<Option<String>> {
        self.text_taken()
    }

    /// [`Member::text_taken`] as a [`Name`]: held in place when short, with no allocation.
    #[inline]
    pub fn name_taken(&self) -> Option<Option<Name>> {
        self.text_taken()
    }

    /// What [`Object::take_count`] takes of this member: `Some` where it is taken (a count;
    /// `None` for null), `None` where it stays (not a count, so kept, not lost).
    #[inline]
    pub fn count_taken(&self) -> Option<Option<u64>> {
        let c = match self {
            Member::Raw(r, _) => raw_count(r),
            Member::Value(v) => count(v),
        };
        match c {
            Count::Value(n) => Some(Some(n)),
            Count::Absent => Some(None),
            Count::Invalid => None,
        }
    }

    /// What [`Object::take_bool`] takes of this member: a boolean, or `"true"` / `"false"`
    /// in any case; `None` where it stays.
    #[inline]
    pub fn bool_taken(&self) -> Option<bool> {
        match self {
            Member::Raw(r, _) if *r == "true" => Some(true),
            Member::Raw(r, _) if *r == "false" => Some(false),
            Member::Value(v) if v.is_boolean() => v.as_bool(),
            _ => match self.as_str() {
                Some(s) if s.eq_ignore_ascii_case("true") => Some(true),
                Some(s) if s.eq_ignore_ascii_case("false") => Some(false),
                _ => None,
            },
        }
    }

    /// A scalar (string, number, boolean), without building a tree for anything else.
    pub(crate) fn scalar(&self) -> Option<Value> {
        match self {
            Member::Raw(r, _) => match r.as_bytes().first() {
                Some(b'{' | b'[') => None,
                _ => Some(self.to_value()),
            },
            Member::Value(v) if v.is_object() || v.is_array() => None,
            Member::Value(v) => Some((**v).clone()),
        }
    }
}

/// The value of raw JSON text that needs no parser: a string (see [`raw_str`]), an integer of
/// up to 19 digits (which a u64 holds), `true`, `false` or `null`, as serde_json would read
/// it. The scan has checked the text; anything else is `None`.
fn simple_value(text: &str, as_is: AsIs) -> Option<Value> {
    match text.as_bytes().first()? {
        b'"' => Some(Value::String(raw_str(text, as_is)?.into_owned())),
        b'0'..=b'9' => plain_u64_value(text).map(Value::from),
        _ => match text {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            "null" => Some(Value::Null),
            _ => None,
        },
    }
}

/// The text of a JSON string literal: borrowed when it has no escapes (which the scan noted,
/// when it read the literal).
pub(crate) fn raw_str(text: &str, as_is: AsIs) -> Option<Cow<'_, str>> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    if !as_is.escapes_in(inner) {
        return Some(Cow::Borrowed(inner));
    }
    // Anything the fast path does not take (a lone surrogate, say) is left to serde_json.
    unescape(inner).or_else(|| serde_json::from_str::<String>(text).ok()).map(Cow::Owned)
}

/// Whether `layout` writes the value whose JSON text (checked) is `r` as that text: a string
/// its escapes suit, digits, or a word. A number with a sign, fraction or exponent, and
/// anything nested, go through a value.
pub(crate) fn raw_in_layout(r: &str, as_is: AsIs, layout: Layout) -> bool {
    match r.as_bytes().first() {
        Some(b'"') => as_is.in_layout(layout) == Some(true),
        Some(b'0'..=b'9') => crate::json::number::plain_u64(r),
        _ => matches!(r, "true" | "false" | "null"),
    }
}

/// A count that one dialect writes as an integer and another as a string of digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    Absent,
    Value(u64),
    /// Present but negative, fractional or not a number.
    Invalid,
}

/// Reads a count written as an integer or as a string of digits.
pub fn count(v: &Value) -> Count {
    match v {
        Value::Number(n) => n.as_u64().map_or(Count::Invalid, Count::Value),
        Value::String(s) => s.trim().parse::<u64>().map_or(Count::Invalid, Count::Value),
        Value::Null => Count::Absent,
        _ => Count::Invalid,
    }
}

/// A count from its JSON text, without building a value for the common cases.
fn raw_count(text: &str) -> Count {
    let digits = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')).unwrap_or(text);
    if let Some(n) = plain_u64_value(digits) {
        return Count::Value(n);
    }
    match serde_json::from_str::<Value>(text) {
        Ok(v) => count(&v),
        Err(_) => Count::Invalid,
    }
}

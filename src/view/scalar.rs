//! A JSON value a rule compares or shows, read by the views' reader.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, Error, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

/// A JSON value that a rule compares or shows: strings borrowed from the text; numbers, arrays
/// and objects (which no rule expects where a `Scalar` is read) kept as the request's own text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum Scalar<'a> {
    #[default]
    Null,
    Bool(bool),
    Str(Cow<'a, str>),
    Other(Text<'a>),
}

/// A number, array or object as the request wrote it; equal when written alike.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Text<'a>(pub(crate) &'a RawValue);

impl PartialEq for Text<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
    }
}

impl Eq for Text<'_> {}

impl<'a> Scalar<'a> {
    pub(crate) fn str(text: impl Into<Cow<'a, str>>) -> Self {
        Scalar::Str(text.into())
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Scalar::Str(text) => Some(text),
            _ => None,
        }
    }

    /// The elements, when the value is an array.
    pub(crate) fn elements(&self) -> Option<Vec<Scalar<'a>>> {
        match self {
            Scalar::Other(Text(raw)) if raw.get().starts_with('[') => {
                serde_json::from_str(raw.get()).ok()
            }
            _ => None,
        }
    }

    /// The value, when it is an integer that fits an `i64` (`5`, not `5.0`).
    pub(crate) fn as_i64(&self) -> Option<i64> {
        match self {
            Scalar::Other(Text(raw)) => raw.get().parse().ok(),
            _ => None,
        }
    }

    /// The value as JSON text: a string quoted, anything else as the request wrote it.
    pub(crate) fn json(&self) -> String {
        match self {
            Scalar::Str(text) => serde_json::to_string(text.as_ref()).unwrap_or_default(),
            other => shown(Some(other)),
        }
    }
}

/// A value as a message shows it: a string verbatim, anything else as JSON text (numbers, arrays
/// and objects as the request wrote them), a missing value as `<unset>`.
pub(crate) fn shown(value: Option<&Scalar>) -> String {
    match value {
        Some(Scalar::Str(text)) => text.as_ref().to_owned(),
        Some(Scalar::Null) => "null".to_owned(),
        Some(Scalar::Bool(b)) => b.to_string(),
        Some(Scalar::Other(Text(raw))) => raw.get().to_owned(),
        None => "<unset>".to_owned(),
    }
}

/// Read as the value's raw text first (the request's own text for what is not a string), then by
/// its first character: the text is valid JSON, and a string without escapes is borrowed as it is.
/// An array or object is held to serde_json's recursion limit, as a parse into a tree would be.
impl<'de> Deserialize<'de> for Scalar<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = <&RawValue>::deserialize(deserializer)?;
        let text = raw.get();
        Ok(match text.as_bytes().first() {
            Some(b'"') => match text.get(1..text.len() - 1) {
                Some(inner) if !inner.contains('\\') => Scalar::Str(Cow::Borrowed(inner)),
                _ => Scalar::Str(Cow::Owned(
                    serde_json::from_str(text).map_err(D::Error::custom)?,
                )),
            },
            Some(b'n') => Scalar::Null,
            Some(b't') => Scalar::Bool(true),
            Some(b'f') => Scalar::Bool(false),
            Some(b'[' | b'{') => match serde_json::from_str::<Nested>(text) {
                Ok(Nested) => Scalar::Other(Text(raw)),
                // The text is valid JSON: only its depth can be refused.
                Err(_) => return Err(D::Error::custom("recursion limit exceeded")),
            },
            _ => Scalar::Other(Text(raw)),
        })
    }
}

/// Any JSON value, read through to its deepest member so that serde_json's recursion limit holds.
struct Nested;

impl<'de> Deserialize<'de> for Nested {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NestedVisitor)
    }
}

struct NestedVisitor;

impl<'de> Visitor<'de> for NestedVisitor {
    type Value = Nested;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E: Error>(self) -> Result<Nested, E> {
        Ok(Nested)
    }
    fn visit_bool<E: Error>(self, _: bool) -> Result<Nested, E> {
        Ok(Nested)
    }
    fn visit_i64<E: Error>(self, _: i64) -> Result<Nested, E> {
        Ok(Nested)
    }
    fn visit_u64<E: Error>(self, _: u64) -> Result<Nested, E> {
        Ok(Nested)
    }
    fn visit_f64<E: Error>(self, _: f64) -> Result<Nested, E> {
        Ok(Nested)
    }
    fn visit_str<E: Error>(self, _: &str) -> Result<Nested, E> {
        Ok(Nested)
    }
    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Nested, S::Error> {
        while seq.next_element::<Nested>()?.is_some() {}
        Ok(Nested)
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Nested, M::Error> {
        while map.next_entry::<IgnoredAny, Nested>()?.is_some() {}
        Ok(Nested)
    }
}

/// Written as read: a string escaped anew, anything else as the request's own text.
impl Serialize for Scalar<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Scalar::Null => serializer.serialize_unit(),
            Scalar::Bool(b) => serializer.serialize_bool(*b),
            Scalar::Str(text) => serializer.serialize_str(text),
            Scalar::Other(Text(raw)) => raw.serialize(serializer),
        }
    }
}

//! A JSON value a rule compares or shows, read by the views' reader.

use std::borrow::Cow;
use std::fmt;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{Deserialize, Deserializer, Error, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// A JSON value that a rule compares or shows: strings borrowed from the text; numbers, arrays
/// and objects (which no rule expects where a `Scalar` is read) kept as a `Value`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) enum Scalar<'a> {
    #[default]
    Null,
    Bool(bool),
    Str(Cow<'a, str>),
    Other(Value),
}

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

    /// The value as JSON (to splice it into the answer).
    pub(crate) fn to_value(&self) -> Value {
        match self {
            Scalar::Null => Value::Null,
            Scalar::Bool(b) => Value::Bool(*b),
            Scalar::Str(text) => Value::String(text.as_ref().to_owned()),
            Scalar::Other(value) => value.clone(),
        }
    }
}

/// A value as a message shows it: a string verbatim, anything else as JSON text, a missing value
/// as `<unset>`.
pub(crate) fn shown(value: Option<&Scalar>) -> String {
    match value {
        Some(Scalar::Str(text)) => text.as_ref().to_owned(),
        Some(Scalar::Null) => "null".to_owned(),
        Some(Scalar::Bool(b)) => b.to_string(),
        Some(Scalar::Other(other)) => other.to_string(),
        None => "<unset>".to_owned(),
    }
}

impl<'de> Deserialize<'de> for Scalar<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ScalarVisitor)
    }
}

struct ScalarVisitor;

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E: Error>(self) -> Result<Self::Value, E> {
        Ok(Scalar::Null)
    }
    fn visit_none<E: Error>(self) -> Result<Self::Value, E> {
        Ok(Scalar::Null)
    }
    fn visit_bool<E: Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Scalar::Bool(v))
    }
    fn visit_borrowed_str<E: Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Scalar::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E: Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Scalar::Str(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E: Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Scalar::Str(Cow::Owned(v)))
    }
    fn visit_i64<E: Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Scalar::Other(Value::from(v)))
    }
    fn visit_u64<E: Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Scalar::Other(Value::from(v)))
    }
    fn visit_f64<E: Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Scalar::Other(Value::from(v)))
    }
    fn visit_seq<S: SeqAccess<'de>>(self, seq: S) -> Result<Self::Value, S::Error> {
        Value::deserialize(SeqAccessDeserializer::new(seq)).map(Scalar::Other)
    }
    fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<Self::Value, M::Error> {
        Value::deserialize(MapAccessDeserializer::new(map)).map(Scalar::Other)
    }
}

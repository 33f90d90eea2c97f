//! A JSON value a rule compares or shows, read by the views' reader.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, Error, MapAccess, SeqAccess, Visitor};
use serde::{Serialize, Serializer};
use serde_json::Number;

/// A JSON value that a rule compares or shows: strings borrowed from the text. Numbers, arrays and
/// objects, which no rule expects where a `Scalar` is read, are read too (arrays and objects
/// within serde_json's recursion limit), to be shown in a message as JSON.
/// Serialised as JSON: what an edit writes into the answer, and how a message shows a value.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(untagged)]
pub(crate) enum Scalar<'a> {
    #[default]
    Null,
    Bool(bool),
    Str(Cow<'a, str>),
    Number(Number),
    Array(Vec<Scalar<'a>>),
    /// Members in the order written.
    #[serde(serialize_with = "members")]
    Object(Vec<(String, Scalar<'a>)>),
}

fn members<S: Serializer>(members: &[(String, Scalar)], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_map(members.iter().map(|(key, value)| (key, value)))
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

    /// The value, when it is an integer that fits an `i64` (`5`, not `5.0`).
    pub(crate) fn as_i64(&self) -> Option<i64> {
        match self {
            Scalar::Number(number) => number.as_i64(),
            _ => None,
        }
    }

    /// The value as compact JSON text (a string quoted).
    pub(crate) fn json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// A value as a message shows it: a string verbatim, anything else as compact JSON text (an
/// object's members in the order written), a missing value as `<unset>`.
pub(crate) fn shown(value: Option<&Scalar>) -> String {
    match value {
        Some(Scalar::Str(text)) => text.as_ref().to_owned(),
        Some(other) => other.json(),
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
        Ok(Scalar::Number(v.into()))
    }
    fn visit_u64<E: Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Scalar::Number(v.into()))
    }
    fn visit_f64<E: Error>(self, v: f64) -> Result<Self::Value, E> {
        // serde_json reads only finite numbers.
        Ok(Number::from_f64(v).map_or(Scalar::Null, Scalar::Number))
    }
    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
        let mut elements = Vec::new();
        while let Some(element) = seq.next_element()? {
            elements.push(element);
        }
        Ok(Scalar::Array(elements))
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        let mut members = Vec::new();
        while let Some(member) = map.next_entry()? {
            members.push(member);
        }
        Ok(Scalar::Object(members))
    }
}

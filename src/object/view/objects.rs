//! Structs read with serde's derive from a JSON object only: the derive also reads a struct from
//! an array, by position (`"evictionStrategy": ["LiveMigrate"]` would set `default`), which the
//! policy refuses with serde's own words (`invalid type: sequence, expected struct
//! EvictionSettings`). A struct member that is itself a struct reads through [`object`] or
//! [`optional_object`] (`#[serde(deserialize_with = ...)]`).

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// A struct that is read from a JSON object only.
pub(crate) trait Object<'de>: Deserialize<'de> {
    /// What an error says was expected (`struct EvictionSettings`).
    const EXPECTING: &'static str;
}

/// Declares [`Object`] for structs, each with what an error says it expected.
macro_rules! objects {
    ($($name:ident $(<$a:lifetime>)? => $expecting:literal,)*) => {
        $(impl<'de $(: $a, $a)?> $crate::object::view::objects::Object<'de> for $name $(<$a>)? {
            const EXPECTING: &'static str = $expecting;
        })*
    };
}
pub(crate) use objects;

struct ObjectVisitor<T>(PhantomData<T>);

impl<'de, T: Object<'de>> Visitor<'de> for ObjectVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(T::EXPECTING)
    }
    fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<T, M::Error> {
        T::deserialize(MapAccessDeserializer::new(map))
    }
}

/// A struct from an object; anything else (`null` too) is refused.
pub(crate) fn object<'de, D: Deserializer<'de>, T: Object<'de>>(
    deserializer: D,
) -> Result<T, D::Error> {
    deserializer.deserialize_map(ObjectVisitor(PhantomData))
}

/// A struct from an object, `null` as `None`; anything else is refused.
pub(crate) fn optional_object<'de, D: Deserializer<'de>, T: Object<'de>>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    struct Optional<T>(PhantomData<T>);
    impl<'de, T: Object<'de>> Visitor<'de> for Optional<T> {
        type Value = Option<T>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str(T::EXPECTING)
        }
        fn visit_none<E>(self) -> Result<Option<T>, E> {
            Ok(None)
        }
        fn visit_unit<E>(self) -> Result<Option<T>, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<T>, D::Error> {
            object(deserializer).map(Some)
        }
    }
    deserializer.deserialize_option(Optional(PhantomData))
}

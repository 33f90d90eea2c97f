//! How the policy reads an object: a borrowed, typed view parsed in one pass over the request's
//! text, holding only the members the rules read (strings borrowed from the text) and skipping
//! every other member without building anything. Every field reads as lenient as a
//! `serde_json::Value` would: a member of the wrong JSON type is remembered as such (for the shape
//! checks) or reads as absent, never as a parse error; of duplicate keys the last counts. A leaf:
//! it imports nothing of the crate.

use std::borrow::Cow;
use std::fmt;

use serde::de::{
    Deserialize, DeserializeSeed, Deserializer, Error, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde_json::value::RawValue;

mod later;
pub(crate) mod objects;
mod scalar;

pub(crate) use later::Later;
pub(crate) use scalar::{Scalar, shown};

/// An object member that should hold an object.
#[derive(Debug, Clone, Default)]
pub(crate) enum Field<T> {
    #[default]
    Absent,
    Null,
    Object(T),
    /// Another JSON type, by name (`array`, `string`, `number`, `boolean`).
    Other(&'static str),
}

impl<T> Field<T> {
    /// The object, when it is one.
    pub(crate) fn get(&self) -> Option<&T> {
        match self {
            Field::Object(object) => Some(object),
            _ => None,
        }
    }

    pub(crate) fn get_mut(&mut self) -> Option<&mut T> {
        match self {
            Field::Object(object) => Some(object),
            _ => None,
        }
    }

    /// Present and not `null`, of any type.
    pub(crate) fn is_set(&self) -> bool {
        !matches!(self, Field::Absent | Field::Null)
    }

    /// The object, created when absent or `null`; `None` for another type (never overwritten).
    pub(crate) fn get_or_create(&mut self) -> Option<&mut T>
    where
        T: Default,
    {
        if !self.is_set() {
            *self = Field::Object(T::default());
        }
        self.get_mut()
    }
}

/// A member that should hold an array of objects. Elements that are not objects read as empty
/// ones, anything but an array as no elements.
#[derive(Debug, Clone)]
pub(crate) struct List<T> {
    pub(crate) items: Vec<T>,
    /// Not absent, not `null`, not `[]` (KubeVirt's "unset" for `interfaces` and `networks`).
    pub(crate) set: bool,
}

impl<T> Default for List<T> {
    fn default() -> Self {
        List {
            items: Vec::new(),
            set: false,
        }
    }
}

/// Whether a member is present and not `null` (its content is skipped).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Seen(pub(crate) bool);

/// A map with keys of its own (labels, annotations, Hyper-V features), in text order; of duplicate
/// keys the last counts.
#[derive(Debug, Clone)]
pub(crate) struct Map<'a, V>(pub(crate) Vec<(Cow<'a, str>, V)>);

impl<V> Default for Map<'_, V> {
    fn default() -> Self {
        Map(Vec::new())
    }
}

impl<'a, V> Map<'a, V> {
    pub(crate) fn get(&self, key: &str) -> Option<&V> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub(crate) fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets `key` (its last occurrence when present).
    pub(crate) fn insert(&mut self, key: Cow<'a, str>, value: V) {
        match self.0.iter_mut().rev().find(|(k, _)| *k == key) {
            Some((_, slot)) => *slot = value,
            None => self.0.push((key, value)),
        }
    }

    /// Every key once, in the order a `serde_json::Map` iterates them (sorted).
    pub(crate) fn keys(&self) -> Vec<&str> {
        let mut keys: Vec<&str> = self.0.iter().map(|(k, _)| k.as_ref()).collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    pub(crate) fn entries(&self) -> impl Iterator<Item = (&str, &V)> {
        self.0.iter().map(|(k, v)| (k.as_ref(), v))
    }
}

/// An object read member by member: what [`view!`] implements. Reading goes through the few
/// visitors below whatever the view's type, so the JSON reader is compiled once, not once per type.
pub(crate) trait Members<'a> {
    /// Where the member `key` is read into (a map keeps its own copy of the key).
    fn slot(&mut self, key: &Cow<'a, str>) -> Slot<'_, 'a>;
}

/// Where one member's value goes.
pub(crate) enum Slot<'s, 'a> {
    /// Skipped unread.
    Skip,
    /// `Some` of any value (`None` stays for an absent member).
    Scalar(&'s mut Option<Scalar<'a>>),
    /// Any value.
    Value(&'s mut Scalar<'a>),
    Seen(&'s mut Seen),
    Object(&'s mut dyn Shaped<'a>),
    List(&'s mut dyn Items<'a>),
    /// Kept as raw JSON text.
    Raw(&'s mut Option<&'a RawValue>),
}

/// A field's own slot.
pub(crate) trait AsSlot<'a> {
    fn slot(&mut self) -> Slot<'_, 'a>;
}

impl<'a> AsSlot<'a> for Option<Scalar<'a>> {
    fn slot(&mut self) -> Slot<'_, 'a> {
        Slot::Scalar(self)
    }
}

impl<'a> AsSlot<'a> for Scalar<'a> {
    fn slot(&mut self) -> Slot<'_, 'a> {
        Slot::Value(self)
    }
}

impl<'a> AsSlot<'a> for Option<&'a RawValue> {
    fn slot(&mut self) -> Slot<'_, 'a> {
        Slot::Raw(self)
    }
}

impl<'a> AsSlot<'a> for Seen {
    fn slot(&mut self) -> Slot<'_, 'a> {
        Slot::Seen(self)
    }
}

impl<'a, T: Members<'a> + Default> AsSlot<'a> for Field<T> {
    fn slot(&mut self) -> Slot<'_, 'a> {
        Slot::Object(self)
    }
}

impl<'a, T: Members<'a> + Default> AsSlot<'a> for List<T> {
    fn slot(&mut self) -> Slot<'_, 'a> {
        Slot::List(self)
    }
}

/// A [`Field`] as the reader fills it.
pub(crate) trait Shaped<'a> {
    /// The member is an object: a fresh one (of duplicate keys the last counts) to read into.
    fn object(&mut self) -> &mut dyn Members<'a>;
    /// The member is `null` (`None`) or of another type.
    fn other(&mut self, kind: Option<&'static str>);
}

impl<'a, T: Members<'a> + Default> Shaped<'a> for Field<T> {
    fn object(&mut self) -> &mut dyn Members<'a> {
        // A repeated key starts over: the last one wins, as in a `Value`.
        *self = Field::Absent;
        loop {
            match self {
                Field::Object(object) => return object,
                _ => *self = Field::Object(T::default()),
            }
        }
    }
    fn other(&mut self, kind: Option<&'static str>) {
        *self = kind.map_or(Field::Null, Field::Other);
    }
}

/// A [`List`] as the reader fills it.
pub(crate) trait Items<'a> {
    /// Starts over, without items: `set` for a type other than `null` (an array's elements
    /// follow, and set it when there is one).
    fn start(&mut self, set: bool);
    /// A new element, read into when it is an object.
    fn push(&mut self) -> &mut dyn Members<'a>;
}

impl<'a, T: Members<'a> + Default> Items<'a> for List<T> {
    fn start(&mut self, set: bool) {
        self.items.clear();
        self.set = set;
    }
    fn push(&mut self) -> &mut dyn Members<'a> {
        self.set = true;
        let last = self.items.len();
        self.items.push(T::default());
        &mut self.items[last]
    }
}

impl<'a, V: AsSlot<'a> + Default> Members<'a> for Map<'a, V> {
    fn slot(&mut self, key: &Cow<'a, str>) -> Slot<'_, 'a> {
        let key = match key {
            Cow::Borrowed(key) => Cow::Borrowed(*key),
            Cow::Owned(key) => Cow::Owned(key.clone()),
        };
        self.0.push((key, V::default()));
        match self.0.last_mut() {
            Some((_, value)) => value.slot(),
            None => Slot::Skip,
        }
    }
}

/// A key, borrowed from the text unless it has escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// Declares a view of an object: a struct of the members the rules read, each `"key" => field:
/// Type` (an [`AsSlot`]), filled from the text member by member; every other member is skipped
/// unread.
macro_rules! view {
    ($(#[$meta:meta])* $name:ident<$a:lifetime> {
        $($(#[$fmeta:meta])* $key:literal => $field:ident: $ty:ty,)*
    }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default)]
        pub(crate) struct $name<$a> {
            $($(#[$fmeta])* pub(crate) $field: $ty,)*
            pub(crate) _text: ::std::marker::PhantomData<&$a str>,
        }

        impl<$a> $crate::object::view::Members<$a> for $name<$a> {
            fn slot(
                &mut self,
                key: &::std::borrow::Cow<$a, str>,
            ) -> $crate::object::view::Slot<'_, $a> {
                match key.as_ref() {
                    $($key => $crate::object::view::AsSlot::slot(&mut self.$field),)*
                    _ => $crate::object::view::Slot::Skip,
                }
            }
        }
    };
}
pub(crate) use view;

/// Reads `text` (one JSON value) as an object of type `T`: `Ok(None)` for `null`, an error
/// naming the type for anything but an object.
pub(crate) fn parse<'a, T: Members<'a> + Default>(text: &'a str) -> Result<Option<T>, String> {
    let mut field = Field::<T>::Absent;
    read(text, Slot::Object(&mut field))?;
    field.into_parsed()
}

/// Reads one JSON value into `field`, within a larger reading (the payload's): what [`parse`]
/// reads, followed by [`Field::into_parsed`].
pub(crate) fn seed<'s, 'a, T: Members<'a> + Default>(
    field: &'s mut Field<T>,
) -> impl DeserializeSeed<'a, Value = ()> + 's
where
    'a: 's,
{
    SlotSeed(Slot::Object(field))
}

impl<T> Field<T> {
    /// What [`parse`] answers for the value read: `None` for absent or `null`, an error naming
    /// the type for anything but an object.
    pub(crate) fn into_parsed(self) -> Result<Option<T>, String> {
        match self {
            Field::Object(object) => Ok(Some(object)),
            Field::Absent | Field::Null => Ok(None),
            Field::Other(kind) => Err(format!("must be a JSON object, got {kind}")),
        }
    }
}

/// Reads `text` (one JSON array) as a list of objects of type `T`; an error for anything else.
pub(crate) fn parse_array<'a, T: Members<'a> + Default>(text: &'a str) -> Result<Vec<T>, String> {
    if !text
        .trim_start_matches([' ', '\t', '\n', '\r'])
        .starts_with('[')
    {
        return Err("not an array".to_owned());
    }
    let mut list = List::<T>::default();
    read(text, Slot::List(&mut list))?;
    Ok(list.items)
}

/// The one reader of every view (one JSON value, nothing after it). Text, not bytes: serde_json
/// then borrows strings without checking their UTF-8 again (bytes cost the VM's reading about a
/// tenth more, `compare-modules`).
#[inline(never)]
fn read<'a>(text: &'a str, slot: Slot<'_, 'a>) -> Result<(), String> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    SlotSeed(slot)
        .deserialize(&mut deserializer)
        .and_then(|()| deserializer.end())
        .map_err(|e| e.to_string())
}

// ---------------------------------------------------------------- the visitors

struct SlotSeed<'s, 'a>(Slot<'s, 'a>);

impl<'a> DeserializeSeed<'a> for SlotSeed<'_, 'a> {
    type Value = ();

    fn deserialize<D: Deserializer<'a>>(self, deserializer: D) -> Result<(), D::Error> {
        match self.0 {
            Slot::Skip => IgnoredAny::deserialize(deserializer).map(drop),
            Slot::Scalar(slot) => Scalar::deserialize(deserializer).map(|v| *slot = Some(v)),
            Slot::Value(slot) => Scalar::deserialize(deserializer).map(|v| *slot = v),
            Slot::Seen(slot) => {
                Option::<IgnoredAny>::deserialize(deserializer).map(|v| *slot = Seen(v.is_some()))
            }
            Slot::Object(slot) => deserializer.deserialize_any(ObjectVisitor(slot)),
            Slot::List(slot) => deserializer.deserialize_any(ListVisitor(slot)),
            Slot::Raw(slot) => read_raw(deserializer, slot),
        }
    }
}

fn read_members<'a, M: MapAccess<'a>>(
    members: &mut dyn Members<'a>,
    mut map: M,
) -> Result<(), M::Error> {
    while let Some(Key(key)) = map.next_key()? {
        map.next_value_seed(SlotSeed(members.slot(&key)))?;
    }
    Ok(())
}

/// Keeps a member as raw JSON text, out of line (the reading of a VM does not grow with it).
#[inline(never)]
fn read_raw<'a, D: Deserializer<'a>>(
    deserializer: D,
    slot: &mut Option<&'a RawValue>,
) -> Result<(), D::Error> {
    *slot = Some(Deserialize::deserialize(deserializer)?);
    Ok(())
}

fn skip_seq<'a, S: SeqAccess<'a>>(mut seq: S) -> Result<(), S::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

/// The JSON type of what a visitor met, for [`Shaped::other`] (`None`: `null`).
macro_rules! other_types {
    ($on:expr) => {
        fn visit_unit<E: Error>(self) -> Result<(), E> {
            Ok($on(self, None))
        }
        fn visit_none<E: Error>(self) -> Result<(), E> {
            Ok($on(self, None))
        }
        fn visit_bool<E: Error>(self, _: bool) -> Result<(), E> {
            Ok($on(self, Some("boolean")))
        }
        fn visit_i64<E: Error>(self, _: i64) -> Result<(), E> {
            Ok($on(self, Some("number")))
        }
        fn visit_u64<E: Error>(self, _: u64) -> Result<(), E> {
            Ok($on(self, Some("number")))
        }
        fn visit_f64<E: Error>(self, _: f64) -> Result<(), E> {
            Ok($on(self, Some("number")))
        }
        fn visit_str<E: Error>(self, _: &str) -> Result<(), E> {
            Ok($on(self, Some("string")))
        }
    };
}

/// A [`Field`]: an object member by member, any other type by name.
struct ObjectVisitor<'s, 'a>(&'s mut dyn Shaped<'a>);

impl<'a> Visitor<'a> for ObjectVisitor<'_, 'a> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    other_types!(|v: Self, kind| v.0.other(kind));
    fn visit_seq<S: SeqAccess<'a>>(self, seq: S) -> Result<(), S::Error> {
        self.0.other(Some("array"));
        skip_seq(seq)
    }
    fn visit_map<M: MapAccess<'a>>(self, map: M) -> Result<(), M::Error> {
        read_members(self.0.object(), map)
    }
}

/// A [`List`]: an array's elements (objects member by member, others as empty objects).
struct ListVisitor<'s, 'a>(&'s mut dyn Items<'a>);

impl<'a> Visitor<'a> for ListVisitor<'_, 'a> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    other_types!(|v: Self, kind: Option<&str>| v.0.start(kind.is_some()));
    fn visit_seq<S: SeqAccess<'a>>(self, mut seq: S) -> Result<(), S::Error> {
        self.0.start(false);
        while seq.next_element_seed(ElementSeed(&mut *self.0))?.is_some() {}
        Ok(())
    }
    fn visit_map<M: MapAccess<'a>>(self, mut map: M) -> Result<(), M::Error> {
        self.0.start(true);
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(())
    }
}

/// One element of a [`List`].
struct ElementSeed<'s, 'a>(&'s mut dyn Items<'a>);

impl<'a> DeserializeSeed<'a> for ElementSeed<'_, 'a> {
    type Value = ();
    fn deserialize<D: Deserializer<'a>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'a> Visitor<'a> for ElementSeed<'_, 'a> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    other_types!(|v: Self, _: Option<&str>| {
        v.0.push();
    });
    fn visit_seq<S: SeqAccess<'a>>(self, seq: S) -> Result<(), S::Error> {
        self.0.push();
        skip_seq(seq)
    }
    fn visit_map<M: MapAccess<'a>>(self, map: M) -> Result<(), M::Error> {
        read_members(self.0.push(), map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    view! {
        Probe<'a> {
            "s" => s: Option<Scalar<'a>>,
            "f" => f: Field<Map<'a, Scalar<'a>>>,
            "l" => l: List<Probe<'a>>,
            "n" => n: Seen,
        }
    }

    fn probe(text: &str) -> Result<Option<Probe<'_>>, String> {
        parse(text)
    }

    #[test]
    fn reads_as_leniently_as_a_value() -> Result<(), String> {
        let got = probe(r#"{"s": "a\u0062", "f": {"k": 1, "k": "v"}, "l": [1, {"s": null}], "n": {}, "x": [[[]]]}"#)?
            .ok_or("an object")?;
        assert_eq!(got.s, Some(Scalar::str("ab")));
        let f = got.f.get().ok_or("f is an object")?;
        assert_eq!(
            f.get("k"),
            Some(&Scalar::str("v")),
            "the last duplicate counts"
        );
        assert_eq!(f.keys(), ["k"]);
        assert_eq!(got.l.items.len(), 2);
        assert_eq!(
            got.l.items[0].s, None,
            "a non-object element reads as an empty one"
        );
        assert_eq!(got.l.items[1].s, Some(Scalar::Null));
        assert!(got.n.0);
        let other = probe(r#"{"s": [1], "f": [], "l": "x", "n": null}"#)?.ok_or("an object")?;
        assert_eq!(other.s, Some(Scalar::Array(vec![Scalar::Number(1.into())])));
        assert!(matches!(other.f, Field::Other("array")));
        assert!(other.l.set && other.l.items.is_empty());
        assert!(!other.n.0);
        assert_eq!(shown(other.s.as_ref()), "[1]");
        assert_eq!(probe("null")?.map(|_| ()), None);
        assert_eq!(
            probe("[]").err().as_deref(),
            Some("must be a JSON object, got array")
        );
        Ok(())
    }
}

//! The request's object with a few paths set to new values: what `mutated_object` is. Everything
//! outside the edited paths is written from the request's own text (numbers, string escapes, key
//! order), so a mutation changes nothing it does not own. One pass reads the text: the objects
//! along an edited path are read member by member, every other member stays borrowed raw JSON, and
//! the answer is serialised straight from that. A leaf: it imports nothing of the crate.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Serialize, de};
use serde_json::value::RawValue;

/// A path below the object (`["metadata", "labels", key]`, never empty) and the value to write
/// there, as JSON text.
pub(crate) type Edit<'e> = (&'e [&'e str], &'e RawValue);

/// An object of the request read along the edited paths, with the edits relative to it.
pub(crate) struct Spliced<'a, 'e> {
    members: Vec<(String, Member<'a, 'e>)>,
    edits: Vec<Edit<'e>>,
}

enum Member<'a, 'e> {
    /// Written as it came.
    Raw(&'a RawValue),
    /// On an edited path: read member by member.
    Object(Spliced<'a, 'e>),
    /// On an edited path, neither an object nor `null`: left out when an earlier duplicate (a
    /// JSON parser keeps the last); when it is the last, the object cannot take the edit.
    NotObject,
}

/// The value at `at` in `text` (a path of objects: `["request", "object"]` of the payload, `[]`
/// for the whole text) read for `edits`; the objects along `at` are read only to find it, taking
/// the last of duplicate keys, everything else is skipped. Along an edit's path objects are
/// created where absent or `null`; of duplicate keys the last gets the edit (the one a JSON parser
/// keeps), the earlier ones are written as they were, but for an earlier one on an edited path
/// that is not an object, which is left out. `None` when there is no value at `at`, when the last
/// value along a path is neither an object nor `null` (the shape checks reject that before any
/// mutation) or an edit's path is empty.
pub(crate) fn splice_at<'a, 'e>(
    text: &'a str,
    at: &[&str],
    edits: &[Edit<'e>],
) -> Option<Spliced<'a, 'e>> {
    if edits.iter().any(|(path, _)| path.is_empty()) {
        return None;
    }
    At { at, edits }
        .deserialize(&mut serde_json::Deserializer::from_str(text))
        .ok()
        .flatten()
        .filter(Spliced::takes_its_edits)
}

/// Finds the value at a path of objects, then reads it as [`Seed`] does.
struct At<'p, 'e> {
    at: &'p [&'p str],
    edits: &'p [Edit<'e>],
}

impl<'de, 'e> DeserializeSeed<'de> for At<'_, 'e> {
    type Value = Option<Spliced<'de, 'e>>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        match self.at.first() {
            None => Seed(self.edits.to_vec()).deserialize(deserializer),
            Some(_) => deserializer.deserialize_map(self),
        }
    }
}

impl<'de, 'e> Visitor<'de> for At<'_, 'e> {
    type Value = Option<Spliced<'de, 'e>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        let (first, below) = match self.at.split_first() {
            Some((first, below)) => (*first, below),
            None => return Ok(None),
        };
        let mut found = None;
        while let Some(named) = map.next_key_seed(Named(first))? {
            if named {
                found = map.next_value_seed(At {
                    at: below,
                    edits: self.edits,
                })?;
            } else {
                map.next_value::<de::IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

/// Whether a key is the given one (no copy of the key).
struct Named<'k>(&'k str);

impl<'de> DeserializeSeed<'de> for Named<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Named<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<bool, E> {
        Ok(key == self.0)
    }
}

/// The edits that go on below `key`, relative to it.
fn below<'e>(edits: &[Edit<'e>], key: &str) -> Vec<Edit<'e>> {
    edits
        .iter()
        .filter(|(path, _)| path.len() > 1 && path[0] == key)
        .map(|(path, value)| (&path[1..], *value))
        .collect()
}

/// Reads an object (or `null`) for the edits relative to it; `None` for any other value.
struct Seed<'e>(Vec<Edit<'e>>);

impl<'de, 'e> DeserializeSeed<'de> for Seed<'e> {
    type Value = Option<Spliced<'de, 'e>>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, 'e> Visitor<'de> for Seed<'e> {
    type Value = Option<Spliced<'de, 'e>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Some(Spliced {
            members: Vec::new(),
            edits: self.0,
        }))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_seq<S: de::SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
        while seq.next_element::<de::IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        let mut members = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let below = below(&self.0, &key);
            let member = if below.is_empty() {
                Member::Raw(map.next_value()?)
            } else {
                map.next_value_seed(Seed(below))?
                    .map_or(Member::NotObject, Member::Object)
            };
            members.push((key, member));
        }
        Ok(Some(Spliced {
            members,
            edits: self.0,
        }))
    }
}

impl Spliced<'_, '_> {
    /// Whether each edit finds objects (or `null`) all along its path, following the last of
    /// duplicate keys.
    fn takes_its_edits(&self) -> bool {
        let lasts = self.last_positions(&self.edits);
        self.members
            .iter()
            .enumerate()
            .all(|(at, (key, member))| match member {
                Member::Raw(_) => true,
                Member::Object(inner) => !is_last(&lasts, key, at) || inner.takes_its_edits(),
                Member::NotObject => !is_last(&lasts, key, at),
            })
    }

    /// Of each key that `edits` start with, the position of its last member (the one a JSON
    /// parser keeps): one pass over the members per edit, so an object with many members is
    /// read in linear time. Only members named by an edit are ever asked whether they are last.
    fn last_positions<'k>(&self, edits: &[Edit<'k>]) -> Vec<(&'k str, usize)> {
        edits
            .iter()
            .filter_map(|(path, _)| {
                let at = self.members.iter().rposition(|(key, _)| key == path[0])?;
                Some((path[0], at))
            })
            .collect()
    }

    /// About the bytes it is written in (its members as they came, their keys): what the answer
    /// reserves up front, so a large object is not copied again while the answer grows.
    pub(crate) fn written_len(&self) -> usize {
        let members: usize = self
            .members
            .iter()
            .map(|(key, member)| {
                key.len()
                    + 4
                    + match member {
                        Member::Raw(raw) => raw.get().len(),
                        Member::Object(inner) => inner.written_len(),
                        Member::NotObject => 0,
                    }
            })
            .sum();
        // Its braces; an edit's key, value and any objects created along its path.
        members + 2 + self.edits.len() * 128
    }
}

impl Serialize for Spliced<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Written(self, true).serialize(serializer)
    }
}

/// Whether the member at `at` named `key` is the last of that name, by [`Spliced::last_positions`]
/// (a key no edit names is never asked).
fn is_last(lasts: &[(&str, usize)], key: &str, at: usize) -> bool {
    lasts
        .iter()
        .any(|(last, position)| *last == key && *position == at)
}

/// An object as it is written: with its edits applied, or as it came (an earlier duplicate).
struct Written<'s, 'a, 'e>(&'s Spliced<'a, 'e>, bool);

impl Serialize for Written<'_, '_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Written(object, apply) = *self;
        let edits: &[Edit] = if apply { &object.edits } else { &[] };
        let set = |key: &str| {
            edits
                .iter()
                .rev()
                .find(|(path, _)| path == &[key])
                .map(|(_, value)| *value)
        };
        // Members on an edited path (objects) are named by the object's own edits, applied or
        // not: their last one is known whatever `apply` says.
        let lasts = object.last_positions(&object.edits);
        let mut map = serializer.serialize_map(None)?;
        for (at, (key, member)) in object.members.iter().enumerate() {
            let last = || is_last(&lasts, key, at);
            match (set(key).filter(|_| last()), member) {
                (Some(value), _) => map.serialize_entry(key, value)?,
                (None, Member::Raw(raw)) => map.serialize_entry(key, raw)?,
                (None, Member::Object(inner)) => {
                    map.serialize_entry(key, &Written(inner, apply && last()))?
                }
                // An earlier duplicate (`takes_its_edits`): left out.
                (None, Member::NotObject) => {}
            }
        }
        // The edited keys the object lacks, each once, in the order of the edits.
        for (at, (path, _)) in edits.iter().enumerate() {
            let key = path[0];
            let present = object.members.iter().any(|(present, _)| present == key);
            if present || edits[..at].iter().any(|(earlier, _)| earlier[0] == key) {
                continue;
            }
            match set(key) {
                Some(value) => map.serialize_entry(key, value)?,
                None => map.serialize_entry(
                    key,
                    &Spliced {
                        members: Vec::new(),
                        edits: below(edits, key),
                    },
                )?,
            }
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An edit's value: JSON text.
    fn json(text: &str) -> serde_json::Result<Box<RawValue>> {
        RawValue::from_string(text.to_owned())
    }

    fn spliced(raw: &str, edits: &[Edit]) -> serde_json::Result<Option<String>> {
        let raw = RawValue::from_string(raw.to_owned())?;
        splice_at(raw.get(), &[], edits)
            .map(|s| {
                let text = serde_json::to_string(&s)?;
                // The answer's reservation holds the written object: it is never copied to grow.
                assert!(s.written_len() >= text.len(), "{text}: {}", s.written_len());
                Ok(text)
            })
            .transpose()
    }

    #[test]
    fn edits_only_their_paths() -> serde_json::Result<()> {
        let key = "harvesterhci.io/maintain-mode-strategy";
        let migrate = json(r#""Migrate""#)?;
        let live = json(r#""LiveMigrate""#)?;
        let label: &[&str] = &["metadata", "labels", key];
        let template: &[&str] = &["spec", "template", "metadata", "labels", key];
        let eviction: &[&str] = &["spec", "template", "spec", "evictionStrategy"];
        let rows: Vec<(&str, Vec<Edit>, Option<&str>)> = vec![
            // Untouched text stays as it was: numbers, escapes, spaces inside values, key order.
            (
                r#"{"z": 974660.1575310733, "metadata": {"name": "vm", "labels": {"b": "\u00e9"}}, "a": [6.696044926687545e-304, 123456789012345678901234567890]}"#,
                vec![(label, &*migrate)],
                Some(
                    r#"{"z":974660.1575310733,"metadata":{"name":"vm","labels":{"b":"\u00e9","harvesterhci.io/maintain-mode-strategy":"Migrate"}},"a":[6.696044926687545e-304, 123456789012345678901234567890]}"#,
                ),
            ),
            // Missing and null objects along the path are created; an existing value is replaced
            // in its place.
            (
                r#"{"spec": {"template": {"metadata": null, "spec": {"evictionStrategy": "None", "x": 1}}}}"#,
                vec![
                    (label, &*migrate),
                    (template, &*migrate),
                    (eviction, &*live),
                ],
                Some(
                    r#"{"spec":{"template":{"metadata":{"labels":{"harvesterhci.io/maintain-mode-strategy":"Migrate"}},"spec":{"evictionStrategy":"LiveMigrate","x":1}}},"metadata":{"labels":{"harvesterhci.io/maintain-mode-strategy":"Migrate"}}}"#,
                ),
            ),
            // Of duplicate keys the last is edited, the earlier ones are written as they were.
            (
                r#"{"metadata": {"labels": {"a": 1.50}}, "metadata": {"labels": {}}}"#,
                vec![(label, &*migrate)],
                Some(
                    r#"{"metadata":{"labels":{"a":1.50}},"metadata":{"labels":{"harvesterhci.io/maintain-mode-strategy":"Migrate"}}}"#,
                ),
            ),
            // An empty object; no edits copy the object member by member.
            (
                r#"{}"#,
                vec![(&["a"], &*live)],
                Some(r#"{"a":"LiveMigrate"}"#),
            ),
            (r#" { "a" : [ 1 ] } "#, vec![], Some(r#"{"a":[ 1 ]}"#)),
            // Not an object along the path, or an empty path: no answer (the caller falls back).
            (r#"{"metadata": []}"#, vec![(label, &*migrate)], None),
            (
                r#"{"metadata": {"labels": "x"}}"#,
                vec![(label, &*migrate)],
                None,
            ),
            (
                r#"{"metadata": {"labels": 1}, "metadata": {"labels": {}}}"#,
                vec![(label, &*migrate)],
                Some(
                    r#"{"metadata":{},"metadata":{"labels":{"harvesterhci.io/maintain-mode-strategy":"Migrate"}}}"#,
                ),
            ),
            // An earlier duplicate on an edited path that is not an object is left out (its text
            // is not kept; a JSON parser keeps the last).
            (
                r#"{"metadata": 1, "metadata": {"name": "vm"}, "metadata": [2]}"#,
                vec![(label, &*migrate)],
                None,
            ),
            (
                r#"{"metadata": "x", "kind": "VM", "metadata": {"name": "vm"}}"#,
                vec![(label, &*migrate)],
                Some(
                    r#"{"kind":"VM","metadata":{"name":"vm","labels":{"harvesterhci.io/maintain-mode-strategy":"Migrate"}}}"#,
                ),
            ),
            (r#"[]"#, vec![(label, &*migrate)], None),
            (r#"{}"#, vec![(&[], &*migrate)], None),
        ];
        for (raw, edits, want) in rows {
            assert_eq!(spliced(raw, &edits)?.as_deref(), want, "{raw}");
        }
        Ok(())
    }
}

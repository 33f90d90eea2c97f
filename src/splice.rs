//! The raw text of a JSON object with a few paths set to new values: what `mutated_object` is.
//! Everything outside the edited paths is copied from the request byte for byte (numbers, string
//! escapes, key order, duplicate keys), so a mutation changes nothing it does not own; only the
//! objects along an edited path are re-emitted, member by member. A leaf: it imports nothing of the
//! crate.

use std::fmt;

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

/// A path below the object (`["metadata", "labels", key]`, never empty) and the value to write there.
pub(crate) type Edit<'e> = (&'e [&'e str], &'e Value);

/// `raw` with every edit applied: objects along a path are created where absent or `null`, and of
/// duplicate keys the last is edited (the one a JSON parser keeps). `None` when the text along a
/// path is neither an object nor `null` (the shape checks reject that before any mutation) or an
/// edit's path is empty.
pub(crate) fn splice(raw: &RawValue, edits: &[Edit]) -> Option<Box<RawValue>> {
    if edits.iter().any(|(path, _)| path.is_empty()) {
        return None;
    }
    let mut out = Vec::with_capacity(raw.get().len() + 128);
    object(raw.get(), edits, &mut out)?;
    RawValue::from_string(String::from_utf8(out).ok()?).ok()
}

/// The members of a JSON object in their order, values as raw text.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct InOrder;
        impl<'de> Visitor<'de> for InOrder {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(InOrder)
    }
}

/// Writes the object `raw` (or a new one for `null`) with `edits`, their paths relative to it.
fn object(raw: &str, edits: &[Edit], out: &mut Vec<u8>) -> Option<()> {
    let members = match raw.trim_ascii() {
        "null" => Vec::new(),
        text => serde_json::from_str::<Members>(text).ok()?.0,
    };
    out.push(b'{');
    for (at, (key, value)) in members.iter().enumerate() {
        if at > 0 {
            out.push(b',');
        }
        push_key(key, out)?;
        let last = !members[at + 1..].iter().any(|(later, _)| later == key);
        if last && edits.iter().any(|(path, _)| path[0] == key) {
            member(value.get(), key, edits, out)?;
        } else {
            out.extend_from_slice(value.get().as_bytes());
        }
    }
    // The edited keys the object lacks, each once, in the order of the edits.
    let mut empty = members.is_empty();
    for (at, (path, _)) in edits.iter().enumerate() {
        let key = path[0];
        let present = members.iter().any(|(present, _)| present == key);
        if present || edits[..at].iter().any(|(earlier, _)| earlier[0] == key) {
            continue;
        }
        if !std::mem::take(&mut empty) {
            out.push(b',');
        }
        push_key(key, out)?;
        member("null", key, edits, out)?;
    }
    out.push(b'}');
    Some(())
}

/// Writes the member `key`, now `raw`: the value of an edit that ends at it, else the object
/// with the edits that go on below it.
fn member(raw: &str, key: &str, edits: &[Edit], out: &mut Vec<u8>) -> Option<()> {
    if let Some((_, value)) = edits.iter().rev().find(|(path, _)| path == &[key]) {
        return serde_json::to_writer(out, value).ok();
    }
    let below: Vec<Edit> = edits
        .iter()
        .filter(|(path, _)| path.len() > 1 && path[0] == key)
        .map(|(path, value)| (&path[1..], *value))
        .collect();
    object(raw, &below, out)
}

fn push_key(key: &str, out: &mut Vec<u8>) -> Option<()> {
    serde_json::to_writer(&mut *out, key).ok()?;
    out.push(b':');
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spliced(raw: &str, edits: &[Edit]) -> Option<String> {
        let raw = RawValue::from_string(raw.to_owned()).expect("test input is JSON");
        splice(&raw, edits).map(|text| text.get().to_owned())
    }

    #[test]
    fn edits_only_their_paths() {
        let key = "harvesterhci.io/maintain-mode-strategy";
        let migrate = json!("Migrate");
        let live = json!("LiveMigrate");
        let label: &[&str] = &["metadata", "labels", key];
        let template: &[&str] = &["spec", "template", "metadata", "labels", key];
        let eviction: &[&str] = &["spec", "template", "spec", "evictionStrategy"];
        let rows: Vec<(&str, Vec<Edit>, Option<&str>)> = vec![
            // Untouched text stays as it was: numbers, escapes, spaces inside values, key order.
            (
                r#"{"z": 974660.1575310733, "metadata": {"name": "vm", "labels": {"b": "\u00e9"}}, "a": [6.696044926687545e-304, 123456789012345678901234567890]}"#,
                vec![(label, &migrate)],
                Some(
                    r#"{"z":974660.1575310733,"metadata":{"name":"vm","labels":{"b":"\u00e9","harvesterhci.io/maintain-mode-strategy":"Migrate"}},"a":[6.696044926687545e-304, 123456789012345678901234567890]}"#,
                ),
            ),
            // Missing and null objects along the path are created; an existing value is replaced
            // in its place.
            (
                r#"{"spec": {"template": {"metadata": null, "spec": {"evictionStrategy": "None", "x": 1}}}}"#,
                vec![(label, &migrate), (template, &migrate), (eviction, &live)],
                Some(
                    r#"{"spec":{"template":{"metadata":{"labels":{"harvesterhci.io/maintain-mode-strategy":"Migrate"}},"spec":{"evictionStrategy":"LiveMigrate","x":1}}},"metadata":{"labels":{"harvesterhci.io/maintain-mode-strategy":"Migrate"}}}"#,
                ),
            ),
            // Of duplicate keys the last is edited, the earlier ones are kept as they were.
            (
                r#"{"metadata": {"labels": 1}, "metadata": {"labels": {}}}"#,
                vec![(label, &migrate)],
                Some(
                    r#"{"metadata":{"labels": 1},"metadata":{"labels":{"harvesterhci.io/maintain-mode-strategy":"Migrate"}}}"#,
                ),
            ),
            // An empty object; no edits copy the object member by member.
            (
                r#"{}"#,
                vec![(&["a"], &live)],
                Some(r#"{"a":"LiveMigrate"}"#),
            ),
            (r#" { "a" : [ 1 ] } "#, vec![], Some(r#"{"a":[ 1 ]}"#)),
            // Not an object along the path, or an empty path: no answer (the caller falls back).
            (r#"{"metadata": []}"#, vec![(label, &migrate)], None),
            (
                r#"{"metadata": {"labels": "x"}}"#,
                vec![(label, &migrate)],
                None,
            ),
            (r#"[]"#, vec![(label, &migrate)], None),
            (r#"{}"#, vec![(&[], &migrate)], None),
        ];
        for (raw, edits, want) in rows {
            assert_eq!(spliced(raw, &edits).as_deref(), want, "{raw}");
        }
    }
}

//! How the host narrows an answer: `field_masks` pruning and equality label/field selectors.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

/// Keeps only the fields named by the masks (dotted paths; arrays are traversed), as the host
/// prunes objects for `field_masks`. No masks, or an empty set: the whole object.
pub(super) fn prune(object: &Value, masks: Option<&BTreeSet<String>>) -> Value {
    #[derive(Default)]
    struct Node(BTreeMap<String, Node>);
    fn keep(value: &Value, node: &Node) -> Value {
        if node.0.is_empty() {
            return value.clone();
        }
        match value {
            Value::Object(fields) => Value::Object(
                fields
                    .iter()
                    .filter_map(|(k, v)| node.0.get(k).map(|child| (k.clone(), keep(v, child))))
                    .collect::<Map<String, Value>>(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(|v| keep(v, node)).collect()),
            other => other.clone(),
        }
    }
    let Some(masks) = masks.filter(|m| !m.is_empty()) else {
        return object.clone();
    };
    let mut root = Node::default();
    for mask in masks {
        let mut node = &mut root;
        for part in mask.split('.') {
            node = node.0.entry(part.to_owned()).or_default();
        }
    }
    keep(object, &root)
}

/// An equality-based selector: `key=value`, `key==value`, `key!=value`, `key`, `!key`.
pub(super) struct Selector(Vec<Requirement>);

enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    Exists(String),
    Absent(String),
}

impl Selector {
    fn parse(text: &str, what: &str) -> Result<Selector, String> {
        let mut requirements = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let unsupported = part.contains(' ') || part.contains('(');
            if unsupported {
                return Err(format!(
                    "e2e host: unsupported {what} selector {text:?} (only a=b, a==b, a!=b, a, !a)"
                ));
            }
            requirements.push(if let Some((k, v)) = part.split_once("!=") {
                Requirement::NotEquals(k.to_owned(), v.to_owned())
            } else if let Some((k, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
                Requirement::Equals(k.to_owned(), v.to_owned())
            } else if let Some(k) = part.strip_prefix('!') {
                Requirement::Absent(k.to_owned())
            } else {
                Requirement::Exists(part.to_owned())
            });
        }
        Ok(Selector(requirements))
    }

    pub(super) fn labels(text: &str) -> Result<Selector, String> {
        Selector::parse(text, "label")
    }

    pub(super) fn fields(text: &str) -> Result<Selector, String> {
        Selector::parse(text, "field")
    }

    fn matches(&self, lookup: impl Fn(&str) -> Option<String>) -> bool {
        self.0.iter().all(|r| match r {
            Requirement::Equals(k, v) => lookup(k).as_ref() == Some(v),
            Requirement::NotEquals(k, v) => lookup(k).as_ref() != Some(v),
            Requirement::Exists(k) => lookup(k).is_some(),
            Requirement::Absent(k) => lookup(k).is_none(),
        })
    }

    pub(super) fn matches_labels(&self, object: &Value) -> bool {
        let labels = object.pointer("/metadata/labels");
        self.matches(|key| {
            labels
                .and_then(|l| l.get(key))
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
    }

    pub(super) fn matches_fields(&self, object: &Value) -> bool {
        self.matches(|path| {
            let mut value = object;
            for part in path.split('.') {
                value = value.get(part)?;
            }
            Some(match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
        })
    }
}

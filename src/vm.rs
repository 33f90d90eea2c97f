//! A thin view over a VirtualMachine's raw JSON: reading the label maps and the template, and the
//! few writes the mutation rules own. Nothing here deserializes into a typed object, so a
//! mutation can never drop a field the policy does not know.

use serde_json::{Map, Value};

use crate::request::json_type;

pub type Object = Map<String, Value>;

/// A field of the wrong JSON type, named by its path (`metadata.labels: must be an object, got array`).
#[derive(Debug, PartialEq, Eq)]
pub struct FieldError(pub String);

/// `parent[key]` as a map: `None` when absent or `null`, an error when it is another type.
pub fn child_map<'a>(
    parent: &'a Object,
    key: &str,
    path: &str,
) -> Result<Option<&'a Object>, FieldError> {
    match parent.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(map)) => Ok(Some(map)),
        Some(other) => Err(FieldError(format!(
            "{path}: must be an object, got {}",
            json_type(other)
        ))),
    }
}

/// `parent[key]` as a map, created when absent or `null`; `None` when it holds another type
/// (callers check shapes first, so that case never overwrites anything).
pub fn child_map_mut<'a>(parent: &'a mut Object, key: &str) -> Option<&'a mut Object> {
    let slot = parent.entry(key).or_insert(Value::Null);
    if slot.is_null() {
        *slot = Value::Object(Map::new());
    }
    slot.as_object_mut()
}

/// `x.metadata.labels`.
pub fn labels(vm: &Object) -> Result<Option<&Object>, FieldError> {
    match child_map(vm, "metadata", "metadata")? {
        Some(metadata) => child_map(metadata, "labels", "metadata.labels"),
        None => Ok(None),
    }
}

/// `x.spec.template` when `spec` and `template` are objects; anything else means "no template".
pub fn template(vm: &Object) -> Option<&Object> {
    vm.get("spec")?.get("template")?.as_object()
}

pub fn template_mut(vm: &mut Object) -> Option<&mut Object> {
    vm.get_mut("spec")?.get_mut("template")?.as_object_mut()
}

/// `x.spec.template.metadata.labels`; `None` without a template.
pub fn template_labels(vm: &Object) -> Result<Option<&Object>, FieldError> {
    let Some(template) = template(vm) else {
        return Ok(None);
    };
    match child_map(template, "metadata", "spec.template.metadata")? {
        Some(metadata) => child_map(metadata, "labels", "spec.template.metadata.labels"),
        None => Ok(None),
    }
}

/// `x.spec.template.spec` when it is an object.
pub fn template_spec(vm: &Object) -> Option<&Object> {
    template(vm)?.get("spec")?.as_object()
}

/// Sets `map.metadata.labels[key] = value`, creating `metadata` and `labels` when absent or `null`.
/// Returns whether the object changed.
pub fn set_label(map: &mut Object, key: &str, value: Value) -> bool {
    let Some(labels) = child_map_mut(map, "metadata").and_then(|m| child_map_mut(m, "labels"))
    else {
        return false;
    };
    if labels.get(key) == Some(&value) {
        return false;
    }
    labels.insert(key.to_owned(), value);
    true
}

/// The value of `key` in an optional label map.
pub fn label<'a>(labels: Option<&'a Object>, key: &str) -> Option<&'a Value> {
    labels?.get(key)
}

/// A label value as a message shows it: a string verbatim, anything else as JSON text,
/// a missing label as `<unset>`.
pub fn show(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => "<unset>".to_owned(),
    }
}

pub fn template_spec_mut(vm: &mut Object) -> Option<&mut Object> {
    template_mut(vm)?.get_mut("spec")?.as_object_mut()
}

/// The VM's own eviction strategy, `spec.template.spec.evictionStrategy` (`null` = unset).
pub fn eviction_strategy(vm: &Object) -> Option<&Value> {
    template_spec(vm)?
        .get("evictionStrategy")
        .filter(|v| !v.is_null())
}

//! The raw-JSON vocabulary every module shares: the object type, typed child access, and how a
//! value is shown in a message. A leaf: it imports nothing of the crate.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// A JSON object, as the policy reads and edits it (never a typed round trip).
pub(crate) type Object = Map<String, Value>;

/// A field of the wrong JSON type, named by its path (`metadata.labels: must be an object, got array`).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct FieldError(pub(crate) String);

/// The JSON type name of a value, for messages.
pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A value as a message shows it: a string verbatim, anything else as JSON text, a missing value
/// as `<unset>`.
pub(crate) fn show(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => "<unset>".to_owned(),
    }
}

/// Parses a raw JSON value that must be an object; `Ok(None)` when it is absent or `null`.
pub(crate) fn parse_object(raw: Option<&RawValue>) -> Result<Option<Object>, String> {
    let Some(raw) = raw.filter(|raw| raw.get() != "null") else {
        return Ok(None);
    };
    match serde_json::from_str(raw.get()) {
        Ok(Value::Object(map)) => Ok(Some(map)),
        Ok(other) => Err(format!("must be a JSON object, got {}", json_type(&other))),
        Err(e) => Err(e.to_string()),
    }
}

/// `parent[key]` as a map: `None` when absent or `null`, an error naming `path` for another type.
pub(crate) fn child_map<'a>(
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
pub(crate) fn child_map_mut<'a>(parent: &'a mut Object, key: &str) -> Option<&'a mut Object> {
    let slot = parent.entry(key).or_insert(Value::Null);
    if slot.is_null() {
        *slot = Value::Object(Map::new());
    }
    slot.as_object_mut()
}

/// `value[key]` when `value` is an object and the member is present and not `null`.
pub(crate) fn member<'a>(value: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    value?.get(key).filter(|v| !v.is_null())
}

/// The elements of a JSON array; nothing for any other type.
pub(crate) fn items(value: Option<&Value>) -> &[Value] {
    value.and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// The `name` of a list item as a message shows it (`deviceName` for devices without one).
pub(crate) fn name_of(item: &Value) -> String {
    match item.get("name").or_else(|| item.get("deviceName")) {
        Some(Value::String(name)) => name.clone(),
        Some(other) => other.to_string(),
        None => "(unnamed)".to_owned(),
    }
}

//! The raw-JSON vocabulary of the KubeVirt CR rules (read as a `Value`, a small and rare request):
//! the object type and how a value is shown in a message. A leaf: it imports nothing of the crate.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// A JSON object, as the policy reads and edits it (never a typed round trip).
pub(crate) type Object = Map<String, Value>;

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

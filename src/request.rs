//! The `validate` payload, parsed only as far as routing needs: `object`, `oldObject` and the
//! settings stay borrowed raw JSON until a rule needs them.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::vm::Object;

#[derive(Deserialize)]
pub struct Payload<'a> {
    #[serde(borrow)]
    pub request: Request<'a>,
    #[serde(borrow, default)]
    pub settings: Option<&'a RawValue>,
}

/// The fields of a Kubernetes `AdmissionRequest` the policy reads. Like the SDK's
/// `KubernetesAdmissionRequest` it accepts camelCase and snake_case names and defaults what is missing.
#[derive(Deserialize, Default)]
#[serde(default)]
pub struct Request<'a> {
    #[serde(borrow)]
    pub kind: Kind<'a>,
    #[serde(borrow)]
    pub operation: Cow<'a, str>,
    #[serde(borrow, alias = "subResource")]
    pub sub_resource: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub object: Option<&'a RawValue>,
    #[serde(borrow, alias = "oldObject")]
    pub old_object: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct Kind<'a> {
    #[serde(borrow)]
    pub group: Cow<'a, str>,
    #[serde(borrow)]
    pub kind: Cow<'a, str>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Create,
    Update,
}

impl<'a> Payload<'a> {
    pub fn parse(bytes: &'a [u8]) -> Result<Payload<'a>, String> {
        serde_json::from_slice(bytes).map_err(|e| format!("invalid validation payload: {e}"))
    }

    /// The settings JSON text; `{}` when the payload carries none.
    pub fn settings_json(&self) -> &'a str {
        self.settings.map_or("{}", RawValue::get)
    }
}

impl Request<'_> {
    /// CREATE or UPDATE; every other operation is not evaluated (G2).
    pub fn operation(&self) -> Option<Operation> {
        match self.operation.as_ref() {
            "CREATE" => Some(Operation::Create),
            "UPDATE" => Some(Operation::Update),
            _ => None,
        }
    }

    pub fn is_subresource(&self) -> bool {
        self.sub_resource.as_deref().is_some_and(|s| !s.is_empty())
    }
}

/// Parses a raw JSON value that must be an object; `Ok(None)` when it is absent or `null`.
pub fn parse_object(raw: Option<&RawValue>) -> Result<Option<Object>, String> {
    let Some(raw) = raw.filter(|raw| raw.get() != "null") else {
        return Ok(None);
    };
    match serde_json::from_str(raw.get()) {
        Ok(serde_json::Value::Object(map)) => Ok(Some(map)),
        Ok(other) => Err(format!("must be a JSON object, got {}", json_type(&other))),
        Err(e) => Err(e.to_string()),
    }
}

/// The JSON type name of a value, for messages.
pub fn json_type(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "boolean",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

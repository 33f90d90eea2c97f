//! The `validate` payload, parsed only as far as routing needs: `object`, `oldObject` and the
//! settings stay borrowed raw JSON until a rule needs them.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

#[derive(Deserialize)]
pub(crate) struct Payload<'a> {
    #[serde(borrow)]
    pub(crate) request: Request<'a>,
    #[serde(borrow, default)]
    pub(crate) settings: Option<&'a RawValue>,
}

/// The fields of a Kubernetes `AdmissionRequest` the policy reads. Like the SDK's
/// `KubernetesAdmissionRequest` it accepts camelCase and snake_case names and defaults what is missing.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(crate) struct Request<'a> {
    #[serde(borrow)]
    pub(crate) kind: Kind<'a>,
    #[serde(borrow)]
    pub(crate) operation: Cow<'a, str>,
    #[serde(borrow)]
    pub(crate) namespace: Option<Cow<'a, str>>,
    #[serde(borrow, alias = "subResource")]
    pub(crate) sub_resource: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub(crate) object: Option<&'a RawValue>,
    #[serde(borrow, alias = "oldObject")]
    pub(crate) old_object: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub(crate) struct Kind<'a> {
    #[serde(borrow)]
    pub(crate) group: Cow<'a, str>,
    #[serde(borrow)]
    pub(crate) kind: Cow<'a, str>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operation {
    Create,
    Update,
}

impl<'a> Payload<'a> {
    pub(crate) fn parse(bytes: &'a [u8]) -> Result<Payload<'a>, String> {
        serde_json::from_slice(bytes).map_err(|e| format!("invalid validation payload: {e}"))
    }

    /// The settings JSON text; `{}` when the payload carries none.
    pub(crate) fn settings_json(&self) -> &'a str {
        self.settings.map_or("{}", RawValue::get)
    }
}

impl Request<'_> {
    /// CREATE or UPDATE; every other operation is not evaluated (G2).
    pub(crate) fn operation(&self) -> Option<Operation> {
        match self.operation.as_ref() {
            "CREATE" => Some(Operation::Create),
            "UPDATE" => Some(Operation::Update),
            _ => None,
        }
    }

    pub(crate) fn is_subresource(&self) -> bool {
        self.sub_resource.as_deref().is_some_and(|s| !s.is_empty())
    }
}

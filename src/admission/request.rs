//! The `validate` payload, read with serde's derive only as far as routing needs: `request.object`,
//! `request.oldObject` and the settings stay borrowed raw JSON until a rule reads them. As the
//! SDK's `KubernetesAdmissionRequest`, the request accepts camelCase and snake_case names and
//! defaults what is missing; unknown members are skipped.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::object::view::objects::{object, objects};

/// The payload: its request and the settings' raw text.
#[derive(Deserialize)]
pub(crate) struct Payload<'a> {
    #[serde(borrow, deserialize_with = "object")]
    pub(crate) request: Request<'a>,
    #[serde(borrow, default)]
    pub(crate) settings: Option<&'a RawValue>,
}

/// The fields of a Kubernetes `AdmissionRequest` the policy reads.
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Request<'a> {
    #[serde(borrow, deserialize_with = "object")]
    pub(crate) kind: Kind<'a>,
    #[serde(borrow)]
    pub(crate) operation: Cow<'a, str>,
    pub(crate) namespace: Option<String>,
    #[serde(alias = "sub_resource")]
    pub(crate) sub_resource: Option<String>,
    /// `null` reads as missing.
    #[serde(borrow)]
    pub(crate) object: Option<&'a RawValue>,
    #[serde(borrow, alias = "old_object")]
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

objects! {
    Payload<'a> => "struct Payload",
    Request<'a> => "struct Request",
    Kind<'a> => "struct Kind",
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operation {
    Create,
    Update,
}

impl<'a> Payload<'a> {
    /// The payload's text: it is read as text, not bytes (as the settings are). JSON is UTF-8,
    /// and the hosts write the payload with serde_json.
    pub(crate) fn text(bytes: &[u8]) -> Result<&str, String> {
        std::str::from_utf8(bytes)
            .map_err(|e| format!("invalid validation payload: not UTF-8: {e}"))
    }

    /// The payload: an object with a `request` object.
    pub(crate) fn parse(text: &'a str) -> Result<Payload<'a>, String> {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        object(&mut deserializer)
            .and_then(|payload| deserializer.end().map(|()| payload))
            .map_err(|e| format!("invalid validation payload: {e}"))
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
